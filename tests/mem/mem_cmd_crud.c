/* The read commands: find, getMore, killCursors, count, distinct,
 * aggregate (mem_agg.c runs the pipeline) and explain. */
#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "remodel/value.h"

const char *
mem_coll_name (const mem_call_t *call)
{
    bson_iter_t it;
    return bson_iter_init (&it, call->body) && bson_iter_next (&it) && BSON_ITER_HOLDS_UTF8 (&it)
               ? bson_iter_utf8 (&it, NULL)
               : "";
}

void
mem_err_reply (bson_t *reply, const bson_error_t *err)
{
    mem_error_reply (reply, err->code ? (int) err->code : MEM_E_BAD_VALUE, err->message);
}

/* The documents a find asks, copied and projected, into out. */
static bool
select_docs (mem_coll_t *c, const bson_t *body, mem_list_t *out, bson_error_t *err)
{
    bson_t filter, sort, proj;
    bool has_filter = mem_sub (body, "filter", &filter), has_sort = mem_sub (body, "sort", &sort);
    bool has_proj = mem_sub (body, "projection", &proj);
    int64_t skip = mem_int (body, "skip", 0), limit = mem_int (body, "limit", 0);
    size_t *slots, n;
    bson_t **d;
    if (!mem_match_slots (c, has_filter ? &filter : NULL, &slots, &n, err))
        return false;
    d = bson_malloc ((n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = c->docs[slots[i]];
    bson_free (slots);
    if (has_sort)
        mem_sort (d, n, &sort);
    if (limit < 0)
        limit = -limit;
    for (size_t i = (size_t) (skip > 0 ? skip : 0); i < n && (!limit || out->n < (size_t) limit); i++) {
        bson_t p;
        if (!mem_project (d[i], has_proj ? &proj : NULL, &p, err)) {
            bson_destroy (&p);
            bson_free (d);
            return false;
        }
        mem_list_push (out, bson_copy (&p));
        bson_destroy (&p);
    }
    bson_free (d);
    return true;
}

static void
find (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    mem_list_t out = {0};
    bson_error_t err = {0};
    int64_t first = mem_int (call->body, "batchSize", 101);
    if (!select_docs (c, call->body, &out, &err)) {
        mem_list_free (&out, true);
        mem_err_reply (reply, &err);
        return;
    }
    if (mem_bool (call->body, "singleBatch", false) || mem_int (call->body, "limit", 0) < 0)
        first = 0;
    mem_cursor_reply (call->db, mem_coll_name (call), &out, first, reply);
}

static void
count (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    bson_t filter;
    bson_error_t err = {0};
    size_t *slots, n;
    int64_t skip = mem_int (call->body, "skip", 0), limit = mem_int (call->body, "limit", 0);
    if (!mem_match_slots (c, mem_sub (call->body, "query", &filter) ? &filter : NULL, &slots, &n, &err)) {
        mem_err_reply (reply, &err);
        return;
    }
    bson_free (slots);
    n = skip > 0 ? (n > (size_t) skip ? n - (size_t) skip : 0) : n;
    if (limit && n > (size_t) (limit < 0 ? -limit : limit))
        n = (size_t) (limit < 0 ? -limit : limit);
    BSON_APPEND_INT32 (reply, "n", (int32_t) n);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

static void
distinct (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    const char *key = mem_utf8 (call->body, "key");
    bson_t filter, vals = BSON_INITIALIZER, arr;
    bson_error_t err = {0};
    size_t *slots, n;
    int k = 0;
    if (!key) {
        mem_error_reply (reply, MEM_E_FAILED_TO_PARSE, "distinct needs a key");
        return;
    }
    if (!mem_match_slots (c, mem_sub (call->body, "query", &filter) ? &filter : NULL, &slots, &n, &err)) {
        mem_err_reply (reply, &err);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        bson_iter_t d, v, seen;
        bool dup = false;
        if (!bson_iter_init (&d, c->docs[slots[i]]) || !bson_iter_find_descendant (&d, key, &v))
            continue;
        bson_iter_init (&seen, &vals);
        while (!dup && bson_iter_next (&seen))
            dup = !rm_value_compare (&seen, &v);
        if (!dup) {
            char ks[16];
            snprintf (ks, sizeof ks, "%d", k++);
            bson_append_iter (&vals, ks, -1, &v);
        }
    }
    bson_free (slots);
    bson_append_array_begin (reply, "values", -1, &arr);
    bson_concat (&arr, &vals);
    bson_append_array_end (reply, &arr);
    bson_destroy (&vals);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

static void
aggregate (const mem_call_t *call, bson_t *reply)
{
    mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_coll_name (call));
    bson_t pipeline, cur;
    mem_list_t out = {0};
    bson_error_t err = {0};
    int64_t first = 101;
    if (!mem_sub (call->body, "pipeline", &pipeline)) {
        mem_error_reply (reply, MEM_E_FAILED_TO_PARSE, "'pipeline' option must be specified as an array");
        return;
    }
    if (mem_sub (call->body, "cursor", &cur))
        first = mem_int (&cur, "batchSize", 101);
    if (!mem_aggregate (c, call->db, mem_coll_name (call), &pipeline, &out, &err)) {
        mem_list_free (&out, true);
        mem_err_reply (reply, &err);
        return;
    }
    mem_cursor_reply (call->db, mem_coll_name (call), &out, first, reply);
}

/* explain: a collection scan, except an equality or $in on a field an
 * index leads with (what remodel's probe asks about). */
static void
explain (const mem_call_t *call, bson_t *reply)
{
    bson_t inner, filter, qp, wp;
    const char *stage = "COLLSCAN";
    if (mem_sub (call->body, "explain", &inner) && mem_sub (&inner, "filter", &filter)) {
        mem_coll_t *c = mem_coll_find (mem_store (), call->db, mem_utf8 (&inner, "find") ? mem_utf8 (&inner, "find") : "");
        bson_iter_t f;
        if (c && bson_iter_init (&f, &filter) && bson_iter_next (&f))
            for (size_t i = 0; i < c->nidx; i++) {
                bson_iter_t k;
                if (bson_iter_init (&k, &c->idx[i].key) && bson_iter_next (&k) &&
                    !strcmp (bson_iter_key (&k), bson_iter_key (&f)))
                    stage = "IXSCAN";
            }
    }
    bson_append_document_begin (reply, "queryPlanner", -1, &qp);
    bson_append_document_begin (&qp, "winningPlan", -1, &wp);
    BSON_APPEND_UTF8 (&wp, "stage", stage);
    bson_append_document_end (&qp, &wp);
    bson_append_document_end (reply, &qp);
    BSON_APPEND_DOUBLE (reply, "ok", 1);
}

bool
mem_cmd_crud (const mem_call_t *call, bson_t *reply, bool *handled)
{
    const char *n = call->name;
    *handled = true;
    if (!strcmp (n, "find"))
        find (call, reply);
    else if (!strcmp (n, "getMore"))
        mem_cursor_more (mem_int (call->body, "getMore", 0), mem_int (call->body, "batchSize", 0), reply);
    else if (!strcmp (n, "killCursors")) {
        bson_t ids, killed;
        bson_iter_t it;
        bson_append_array_begin (reply, "cursorsKilled", -1, &killed);
        if (mem_sub (call->body, "cursors", &ids) && bson_iter_init (&it, &ids))
            while (bson_iter_next (&it))
                if (mem_cursor_kill (bson_iter_as_int64 (&it)))
                    BSON_APPEND_INT64 (&killed, "0", bson_iter_as_int64 (&it));
        bson_append_array_end (reply, &killed);
        BSON_APPEND_DOUBLE (reply, "ok", 1);
    } else if (!strcmp (n, "count"))
        count (call, reply);
    else if (!strcmp (n, "distinct"))
        distinct (call, reply);
    else if (!strcmp (n, "aggregate"))
        aggregate (call, reply);
    else if (!strcmp (n, "explain"))
        explain (call, reply);
    else
        *handled = false;
    return true;
}
