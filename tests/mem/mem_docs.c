/* Reading documents as MongoDB does: filters by the project's own query
 * layer (remodel/query.h), sort order by its value comparison
 * (remodel/value.h), projections of included or excluded paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "remodel/query.h"
#include "remodel/value.h"

void
mem_list_push (mem_list_t *l, bson_t *d)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->d = bson_realloc (l->d, l->cap * sizeof *l->d);
    }
    l->d[l->n++] = d;
}

void
mem_list_free (mem_list_t *l, bool docs)
{
    if (docs)
        for (size_t i = 0; i < l->n; i++)
            bson_destroy (l->d[i]);
    bson_free (l->d);
    memset (l, 0, sizeof *l);
}

static rm_expr_ctx_t *
cx (void)
{
    static rm_expr_ctx_t *one;
    if (!one)
        one = rm_expr_ctx_new (0);
    rm_expr_ctx_reset (one);
    return one;
}

static rm_query_t *
parse (const bson_t *filter, bson_error_t *err)
{
    bson_iter_t it;
    bson_t empty = BSON_INITIALIZER;
    bson_t holder = BSON_INITIALIZER;
    rm_query_t *q;
    /* The query layer parses a value: the filter as a document field. */
    BSON_APPEND_DOCUMENT (&holder, "q", filter ? filter : &empty);
    bson_iter_init_find (&it, &holder, "q");
    q = rm_query_parse (&it, err);
    bson_destroy (&holder);
    if (!q) {
        err->code = MEM_E_BAD_VALUE;
        err->domain = 1;
    }
    return q;
}

bool
mem_matches (const bson_t *filter, const bson_t *doc, bool *yes, bson_error_t *err)
{
    rm_query_t *q = parse (filter, err);
    bool ok;
    if (!q)
        return false;
    ok = rm_query_match (q, cx (), bson_get_data (doc), doc->len, yes, err);
    rm_query_destroy (q);
    return ok;
}

static int
by_slot (const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return x < y ? -1 : x > y;
}

static bool
plain_value (const bson_iter_t *v)
{
    return !BSON_ITER_HOLDS_DOCUMENT (v) && !BSON_ITER_HOLDS_ARRAY (v) && !BSON_ITER_HOLDS_REGEX (v);
}

static bool
give_up (size_t **slots, size_t *n)
{
    bson_free (*slots);
    *slots = NULL;
    *n = 0;
    return false;
}

/* The slots a top-level _id condition narrows the filter to: {_id: v},
 * {_id: {$eq: v}} or {_id: {$in: [...]}} through the hash; false when
 * the filter has no such condition (every slot is a candidate). */
static bool
id_candidates (mem_coll_t *c, const bson_t *filter, size_t **slots, size_t *n)
{
    bson_iter_t id, op, el;
    if (!filter || !bson_iter_init_find (&id, filter, "_id"))
        return false;
    *slots = bson_malloc (sizeof **slots);
    *n = 0;
    if (plain_value (&id)) {
        ssize_t at = mem_coll_find_id (c, &id);
        if (at >= 0)
            (*slots)[(*n)++] = (size_t) at;
        return true;
    }
    if (!BSON_ITER_HOLDS_DOCUMENT (&id) || !bson_iter_recurse (&id, &op) || !bson_iter_next (&op) ||
        (el = op, bson_iter_next (&el))) {
        return give_up (slots, n);
    }
    if (!strcmp (bson_iter_key (&op), "$eq") && plain_value (&op)) {
        ssize_t at = mem_coll_find_id (c, &op);
        if (at >= 0)
            (*slots)[(*n)++] = (size_t) at;
        return true;
    }
    if (strcmp (bson_iter_key (&op), "$in") || !BSON_ITER_HOLDS_ARRAY (&op)) {
        return give_up (slots, n);
    }
    bson_iter_recurse (&op, &el);
    while (bson_iter_next (&el)) {
        ssize_t at;
        if (!plain_value (&el)) {
            return give_up (slots, n);
        }
        if ((at = mem_coll_find_id (c, &el)) < 0)
            continue;
        *slots = bson_realloc (*slots, (*n + 1) * sizeof **slots);
        (*slots)[(*n)++] = (size_t) at;
    }
    /* In the collection's order, each once. */
    qsort (*slots, *n, sizeof **slots, by_slot);
    {
        size_t j = 0;
        for (size_t i = 0; i < *n; i++)
            if (!j || (*slots)[j - 1] != (*slots)[i])
                (*slots)[j++] = (*slots)[i];
        *n = j;
    }
    return true;
}

bool
mem_match_slots (mem_coll_t *c, const bson_t *filter, size_t **slots, size_t *n,
                 bson_error_t *err)
{
    rm_query_t *q;
    size_t *cand = NULL, ncand = 0;
    bool narrowed;
    *slots = NULL;
    *n = 0;
    if (!c)
        return true;
    if (!(q = parse (filter, err)))
        return false;
    narrowed = id_candidates (c, filter, &cand, &ncand);
    *slots = bson_malloc ((narrowed ? ncand + 1 : c->n + 1) * sizeof **slots);
    for (size_t k = 0; k < (narrowed ? ncand : c->n); k++) {
        size_t s = narrowed ? cand[k] : k;
        bool yes;
        if (!c->docs[s])
            continue;
        if (!rm_query_match (q, cx (), bson_get_data (c->docs[s]), c->docs[s]->len, &yes, err)) {
            rm_query_destroy (q);
            bson_free (cand);
            bson_free (*slots);
            *slots = NULL;
            *n = 0;
            return false;
        }
        if (yes)
            (*slots)[(*n)++] = s;
    }
    bson_free (cand);
    rm_query_destroy (q);
    return true;
}

/* ---- sort ---- */

int
mem_compare_docs_by (const bson_t *a, const bson_t *b, const bson_t *spec)
{
    bson_iter_t k;
    if (!spec || !bson_iter_init (&k, spec))
        return 0;
    while (bson_iter_next (&k)) {
        bson_iter_t x, y, xv, yv;
        const char *path = bson_iter_key (&k);
        int dir = bson_iter_as_int64 (&k) < 0 ? -1 : 1, d;
        bool hx, hy;
        if (!strcmp (path, "$natural"))
            continue;
        hx = bson_iter_init (&x, a) && bson_iter_find_descendant (&x, path, &xv);
        hy = bson_iter_init (&y, b) && bson_iter_find_descendant (&y, path, &yv);
        d = rm_value_compare (hx ? &xv : NULL, hy ? &yv : NULL);
        if (d)
            return dir * d;
    }
    return 0;
}

typedef struct {
    bson_t *d;
    size_t i;
} entry_t;

static const bson_t *sort_spec;

static int
by_spec (const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    int d = mem_compare_docs_by (x->d, y->d, sort_spec);
    /* Stable: ties keep their order. */
    return d ? d : (x->i < y->i ? -1 : x->i > y->i);
}

/* Sorts stably ({$natural: -1}: reversed insertion order). */
void
mem_sort (bson_t **d, size_t n, const bson_t *spec)
{
    bson_iter_t nat;
    entry_t *e;
    if (!spec || bson_empty (spec) || n < 2)
        return;
    if (bson_iter_init_find (&nat, spec, "$natural")) {
        if (bson_iter_as_int64 (&nat) < 0)
            for (size_t i = 0; i < n / 2; i++) {
                bson_t *t = d[i];
                d[i] = d[n - 1 - i];
                d[n - 1 - i] = t;
            }
        return;
    }
    e = bson_malloc (n * sizeof *e);
    for (size_t i = 0; i < n; i++)
        e[i] = (entry_t){d[i], i};
    sort_spec = spec;
    qsort (e, n, sizeof *e, by_spec);
    for (size_t i = 0; i < n; i++)
        d[i] = e[i].d;
    bson_free (e);
}

/* ---- projection ---- */

/* Whether path (of len bytes) is named by spec at this level: 1 the
 * whole field, 2 a field under it (the rest in *rest), 0 not. */
static int
named (const bson_t *spec, const char *prefix, const char *key, bson_t *sub_spec)
{
    bson_iter_t k;
    size_t pl = strlen (prefix), kl = strlen (key);
    int found = 0;
    bson_iter_init (&k, spec);
    while (bson_iter_next (&k)) {
        const char *p = bson_iter_key (&k);
        if (strncmp (p, prefix, pl) || strncmp (p + pl, key, kl))
            continue;
        if (p[pl + kl] == '\0')
            return 1;
        if (p[pl + kl] == '.') {
            found = 2;
            (void) sub_spec;
        }
    }
    return found;
}

/* Copies the fields of doc kept by spec (paths under prefix) into out. */
static void
project_level (const bson_t *doc, const bson_t *spec, const char *prefix, bool include,
               bool top, bson_t *out)
{
    bson_iter_t f;
    bson_iter_init (&f, doc);
    while (bson_iter_next (&f)) {
        const char *key = bson_iter_key (&f);
        int n = named (spec, prefix, key, NULL);
        if (top && !strcmp (key, "_id") && n == 0) {
            bson_append_iter (out, key, -1, &f);
            continue;
        }
        if (n == 1) {
            if (include)
                bson_append_iter (out, key, -1, &f);
        } else if (n == 2 && BSON_ITER_HOLDS_DOCUMENT (&f)) {
            uint32_t len;
            const uint8_t *data;
            bson_t child, sub;
            char next[512];
            bson_iter_document (&f, &len, &data);
            bson_init_static (&child, data, len);
            snprintf (next, sizeof next, "%s%s.", prefix, key);
            bson_append_document_begin (out, key, -1, &sub);
            project_level (&child, spec, next, include, false, &sub);
            bson_append_document_end (out, &sub);
        } else if (n == 2 && BSON_ITER_HOLDS_ARRAY (&f) && include) {
            /* An included path through an array: each document element
             * projected, scalars dropped. */
            bson_iter_t el;
            bson_t arr;
            char next[512];
            int i = 0;
            snprintf (next, sizeof next, "%s%s.", prefix, key);
            bson_append_array_begin (out, key, -1, &arr);
            bson_iter_recurse (&f, &el);
            while (bson_iter_next (&el)) {
                uint32_t len;
                const uint8_t *data;
                bson_t child, sub;
                char idx[16];
                if (!BSON_ITER_HOLDS_DOCUMENT (&el))
                    continue;
                bson_iter_document (&el, &len, &data);
                bson_init_static (&child, data, len);
                snprintf (idx, sizeof idx, "%d", i++);
                bson_append_document_begin (&arr, idx, -1, &sub);
                project_level (&child, spec, next, include, false, &sub);
                bson_append_document_end (&arr, &sub);
            }
            bson_append_array_end (out, &arr);
        } else if (!include) {
            bson_append_iter (out, key, -1, &f);
        }
    }
}

bool
mem_project (const bson_t *doc, const bson_t *spec, bson_t *out, bson_error_t *err)
{
    bson_iter_t k;
    int mode = -1; /* 1 include, 0 exclude */
    bool id_out = false;
    bson_init (out);
    if (!spec || bson_empty (spec)) {
        bson_concat (out, doc);
        return true;
    }
    bson_iter_init (&k, spec);
    while (bson_iter_next (&k)) {
        bool on = bson_iter_as_bool (&k);
        if (!BSON_ITER_HOLDS_NUMBER (&k) && !BSON_ITER_HOLDS_BOOL (&k)) {
            bson_set_error (err, 1, MEM_E_BAD_VALUE,
                            "projection of %s: only inclusion and exclusion are served",
                            bson_iter_key (&k));
            return false;
        }
        if (!strcmp (bson_iter_key (&k), "_id")) {
            id_out = !on;
            continue;
        }
        if (mode >= 0 && mode != on) {
            bson_set_error (err, 1, 31254, "Cannot do exclusion on field %s in inclusion projection",
                            bson_iter_key (&k));
            return false;
        }
        mode = on;
    }
    if (mode < 0)
        mode = id_out ? 0 : 1;
    if (mode == 1) {
        bson_t tmp = BSON_INITIALIZER;
        project_level (doc, spec, "", true, !id_out, &tmp);
        if (id_out) {
            bson_iter_t f;
            bson_iter_init (&f, &tmp);
            while (bson_iter_next (&f))
                if (strcmp (bson_iter_key (&f), "_id"))
                    bson_append_iter (out, NULL, 0, &f);
        } else {
            bson_concat (out, &tmp);
        }
        bson_destroy (&tmp);
    } else {
        project_level (doc, spec, "", false, false, out);
    }
    return true;
}

/* ---- small readers ---- */

bool
mem_get (const bson_t *b, const char *key, bson_iter_t *it)
{
    return b && bson_iter_init_find (it, b, key);
}

const char *
mem_utf8 (const bson_t *b, const char *key)
{
    bson_iter_t it;
    return mem_get (b, key, &it) && BSON_ITER_HOLDS_UTF8 (&it) ? bson_iter_utf8 (&it, NULL) : NULL;
}

int64_t
mem_int (const bson_t *b, const char *key, int64_t dflt)
{
    bson_iter_t it;
    return mem_get (b, key, &it) && BSON_ITER_HOLDS_NUMBER (&it) ? bson_iter_as_int64 (&it) : dflt;
}

bool
mem_bool (const bson_t *b, const char *key, bool dflt)
{
    bson_iter_t it;
    return mem_get (b, key, &it) ? bson_iter_as_bool (&it) : dflt;
}

bool
mem_sub (const bson_t *b, const char *key, bson_t *out)
{
    bson_iter_t it;
    uint32_t len;
    const uint8_t *data;
    if (!mem_get (b, key, &it) || !(BSON_ITER_HOLDS_DOCUMENT (&it) || BSON_ITER_HOLDS_ARRAY (&it)))
        return false;
    if (BSON_ITER_HOLDS_DOCUMENT (&it))
        bson_iter_document (&it, &len, &data);
    else
        bson_iter_array (&it, &len, &data);
    return bson_init_static (out, data, len);
}
