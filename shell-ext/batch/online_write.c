/* Writing a batch's results (online_batch.h).
 *
 * Side by side: each result inserted into its target, or deleted and
 * inserted again where its _id is there already (online_side_rewrite), so
 * a batch written twice leaves the same documents, byte for byte.
 *
 * In place: for each document that changes, first its backup (the
 * original, and checksums of what remodel read and wrote: backup_update),
 * then $set/$unset of the fields that change (field_update; a replacement
 * where those would not give the same bytes), on condition that what the
 * step depends on is still as read (update_filter: the _id, the fields the
 * step reads and those it writes; a replacement: all its fields, and a
 * field the application added since given back: online_replace_checked):
 * one the application changed in between is read again and recomputed,
 * never overwritten stale. */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"

/* A document read again because it changed under us is recomputed at most
 * this many times before the run stops naming it. */
#define RETRIES 5

void
online_writes_init (online_writes_t *w, online_job_t *j, mongoc_collection_t *coll,
                    const char *what)
{
    memset (w, 0, sizeof *w);
    w->j = j;
    w->coll = coll;
    w->what = what;
}

bool
online_writes_flush (online_writes_t *w, bson_error_t *err)
{
    bson_t reply;
    bson_error_t why;
    bson_iter_t it;
    bool ok;
    if (!w->b)
        return true;
    /* Fenced: a run that lost its lease sends nothing more. */
    if (!online_lease_check (w->j->on, err)) {
        mongoc_bulk_operation_destroy (w->b);
        w->b = NULL;
        w->n = 0;
        return false;
    }
    ok = mongoc_bulk_operation_execute (w->b, &reply, &why) != 0;
    if (!ok)
        online_fail (w->j->on, err, &why, w->what);
    else if (bson_iter_init_find (&it, &reply, "nMatched"))
        w->matched += bson_iter_as_int64 (&it);
    if (ok && bson_iter_init_find (&it, &reply, "nRemoved"))
        w->removed += bson_iter_as_int64 (&it);
    bson_destroy (&reply);
    mongoc_bulk_operation_destroy (w->b);
    w->b = NULL;
    w->n = 0;
    return ok;
}

mongoc_bulk_operation_t *
online_writes_next (online_writes_t *w, bson_error_t *err)
{
    /* Statements a command: the server's (online_caps_write_chunk). */
    if ((int64_t) w->n >= online_caps_write_chunk (w->j->on) && !online_writes_flush (w, err))
        return NULL;
    if (!w->b) {
        bson_t opts = BSON_INITIALIZER;
        const online_opts_t *o = w->j->on->o;
        BSON_APPEND_BOOL (&opts, "ordered", false);
        w->b = mongoc_collection_create_bulk_operation_with_opts (w->coll, &opts);
        if (o->write_concern)
            mongoc_bulk_operation_set_write_concern (w->b, o->write_concern);
        bson_destroy (&opts);
    }
    w->n++;
    return w->b;
}

bool
online_writes_delete (online_writes_t *w, const bson_iter_t *id, bson_error_t *err)
{
    mongoc_bulk_operation_t *b = online_writes_next (w, err);
    bson_t sel = BSON_INITIALIZER;
    bson_error_t why;
    bool ok;
    if (!b)
        return false;
    online_id_append (&sel, id);
    ok = mongoc_bulk_operation_remove_one_with_opts (b, &sel, NULL, &why) ||
         online_fail (w->j->on, err, &why, w->what);
    bson_destroy (&sel);
    return ok;
}

/* Side-by-side results are inserted (inserting into a new collection is
 * the fast way: on FerretDB 1.x a hundred times faster than upserts, which
 * it answers by scanning, BENCHMARKS.md), in commands of the server's
 * size (online_caps_insert_chunk). */

/* The most a document can hold (MongoDB's BSONObjectMaxUserSize). A
 * larger one is refused here, before anything of its batch is written:
 * servers answer it with an error no retry mends, or (mongo-java-server)
 * by dropping the connection, which would look transient. */
#define DOC_MAX 16777216

/* The error for a document of the step too large to store, naming its
 * namespace and _id; not one to retry. */
static bool
too_large (online_job_t *j, const char *ns, const uint8_t *doc, uint32_t len, const char *what,
           uint64_t size, bson_error_t *err)
{
    bson_t sel;
    char *id;
    online_id_filter (doc, len, &sel);
    id = bson_as_relaxed_extended_json (&sel, NULL);
    rm_error_set (err, RM_ERR_FORMAT, "%s: step %zu (%s): %s document %s: %s would be %llu "
                  "bytes, over the %d a document can hold (16 MiB); nothing of its batch was "
                  "written", j->on->where, j->s->index, j->s->op, ns, id ? id : "?", what,
                  (unsigned long long) size, DOC_MAX);
    bson_free (id);
    bson_destroy (&sel);
    j->on->transient = false;
    return false;
}

/* Side by side: every result of the batch fits in a document. */
static bool
results_fit (online_job_t *j, const online_docs_t *out, bson_error_t *err)
{
    for (size_t i = 0; i < out->n; i++)
        if (out->docs[i].len > DOC_MAX && out->docs[i].keep >= 0)
            return too_large (j, j->p->keep[out->docs[i].keep]->text, online_doc_bytes (out, i),
                              out->docs[i].len, "the result", out->docs[i].len, err);
    return true;
}

static bool insert_chunk (online_writes_t *w, const online_docs_t *out, const size_t *idx,
                          size_t from, size_t to, bool rewrite_dups, bson_error_t *err);

/* Each of out's documents idx[0..n) as an upserting replace of its _id,
 * in commands of the server's size. */
static bool
side_replace (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t n,
              bson_error_t *err)
{
    bson_t *opts = BCON_NEW ("upsert", BCON_BOOL (true));
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        mongoc_bulk_operation_t *b;
        bson_t sel = BSON_INITIALIZER, d;
        bson_iter_t id;
        bson_error_t why;
        const uint8_t *doc = online_doc_bytes (out, idx[i]);
        uint32_t len = out->docs[idx[i]].len;
        if (!rm_doc_field (doc, len, "_id", 3, &id) || !bson_init_static (&d, doc, len)) {
            bson_destroy (&sel);
            continue;
        }
        online_id_append (&sel, &id);
        b = online_writes_next (w, err);
        ok = b && (mongoc_bulk_operation_replace_one_with_opts (b, &sel, &d, opts, &why) ||
                   online_fail (w->j->on, err, &why, w->what));
        bson_destroy (&sel);
    }
    bson_destroy (opts);
    return ok && online_writes_flush (w, err);
}

bool
online_side_rewrite (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t n,
                     bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        if (out->docs[idx[i]].len > DOC_MAX) /* refused before any is deleted */
            return too_large (w->j, w->j->p->keep[out->docs[idx[i]].keep]->text,
                              online_doc_bytes (out, idx[i]), out->docs[idx[i]].len, "the result",
                              out->docs[idx[i]].len, err);
    /* Where a replace keeps the given field order (online_caps.c), one
     * replace a result: the result is never missing in between. */
    if (online_caps_replace_keeps_order (w->j->on))
        return side_replace (w, out, idx, n, err);
    for (size_t i = 0; ok && i < n; i++) {
        bson_iter_t id;
        if (rm_doc_field (online_doc_bytes (out, idx[i]), out->docs[idx[i]].len, "_id", 3, &id))
            ok = online_writes_delete (w, &id, err);
    }
    ok = ok && online_writes_flush (w, err);
    for (size_t from = 0, step = (size_t) online_caps_insert_chunk (w->j->on); ok && from < n;
         from += step)
        ok = insert_chunk (w, out, idx, from, from + step < n ? from + step : n, false, err);
    return ok;
}

/* Inserts the documents of out whose keep is k, idx[from..to), into
 * w's collection; those whose _id is there already (a batch replayed
 * after a crash) are rewritten (online_side_rewrite) when rewrite_dups. */
static bool
insert_chunk (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t from,
              size_t to, bool rewrite_dups, bson_error_t *err)
{
    bson_t opts = BSON_INITIALIZER, reply, d;
    bson_error_t why;
    bson_iter_t it, e;
    mongoc_bulk_operation_t *b;
    bool ok = true;

    BSON_APPEND_BOOL (&opts, "ordered", false);
    b = mongoc_collection_create_bulk_operation_with_opts (w->coll, &opts);
    bson_destroy (&opts);
    if (w->j->on->o->write_concern)
        mongoc_bulk_operation_set_write_concern (b, w->j->on->o->write_concern);
    for (size_t i = from; ok && i < to; i++)
        ok = bson_init_static (&d, online_doc_bytes (out, idx[i]), out->docs[idx[i]].len) &&
             mongoc_bulk_operation_insert_with_opts (b, &d, NULL, &why);
    if (!ok) {
        mongoc_bulk_operation_destroy (b);
        return online_fail (w->j->on, err, &why, "queueing results");
    }
    if (!online_lease_check (w->j->on, err)) {
        mongoc_bulk_operation_destroy (b);
        return false;
    }
    if (!mongoc_bulk_operation_execute (b, &reply, &why)) {
        /* Only duplicate keys are expected (a batch replayed after its
         * write's reply was lost); those results are rewritten. The
         * failure must be theirs: one the server never answered (the
         * connection lost; the driver's reply holds writeErrors then too,
         * empty) vouches for nothing, and is an error, the batch retried
         * from its start, never counted as written. When the server
         * stopped at its first duplicate despite ordered: false (not every
         * result inserted or refused), the whole chunk is rewritten. */
        int64_t inserted = bson_iter_init_find (&it, &reply, "nInserted")
                               ? bson_iter_as_int64 (&it) : -1;
        bool dups_only = rewrite_dups && why.code == 11000 &&
                         !(bson_iter_init_find (&it, &reply, "writeConcernErrors") &&
                           bson_iter_recurse (&it, &e) && bson_iter_next (&e)) &&
                         bson_iter_init_find (&it, &reply, "writeErrors") &&
                         bson_iter_recurse (&it, &e);
        size_t *dups = dups_only ? bson_malloc ((to - from) * sizeof *dups) : NULL, nd = 0;
        while (dups_only && bson_iter_next (&e)) {
            bson_iter_t f, g;
            int64_t at = -1, code = 0;
            if (bson_iter_recurse (&e, &f) && bson_iter_find (&f, "index"))
                at = bson_iter_as_int64 (&f);
            if (bson_iter_recurse (&e, &g) && bson_iter_find (&g, "code"))
                code = bson_iter_as_int64 (&g);
            if (code != 11000 || at < 0 || from + (size_t) at >= to || nd == to - from)
                dups_only = false;
            else
                dups[nd++] = idx[from + (size_t) at];
        }
        if (!dups_only || nd == 0)
            ok = online_fail (w->j->on, err, &why, w->what);
        else if (inserted >= 0 && (size_t) inserted + nd == to - from)
            ok = online_side_rewrite (w, out, dups, nd, err);
        else
            ok = online_side_rewrite (w, out, idx + from, to - from, err);
        bson_free (dups);
    }
    bson_destroy (&reply);
    mongoc_bulk_operation_destroy (b);
    return ok;
}

void
online_written_split (online_t *on, const rm_step_t *s, const rm_pass_t *p, char *buf, size_t cap)
{
    const rm_nsref_t *made[8];
    const char *keys[8];
    size_t nm = rm_step_creates (s, made, keys, 8), at = 0;

    *buf = '\0';
    if (p->n_keep < 2)
        return;
    for (size_t k = 0; k < p->n_keep; k++) {
        char target[400];
        const char *key = NULL;
        mongoc_collection_t *c;
        bson_t all = BSON_INITIALIZER;
        int64_t n;
        rm_name_target (&on->names, s, p->keep[k], target, sizeof target);
        c = online_collection (on, p->keep[k]->db, target);
        n = mongoc_collection_count_documents (c, &all, NULL, NULL, NULL, NULL);
        mongoc_collection_destroy (c);
        if (n < 0) {
            *buf = '\0';
            return;
        }
        /* A namespace the step makes is named by its plan key, the one
         * it fills (into) by its name alone. */
        for (size_t m = 0; m < nm; m++)
            if (!strcmp (made[m]->text, p->keep[k]->text))
                key = keys[m];
        at += (size_t) snprintf (buf + at, at < cap ? cap - at : 0, "%s%lld to %s%s%s",
                                 k ? ", " : " (", (long long) n, key ? key : "", key ? " " : "",
                                 p->keep[k]->text);
    }
    if (at < cap)
        snprintf (buf + at, cap - at, ")");
}

bool
online_side_write (online_writes_t *targets, const online_docs_t *out, bson_error_t *err)
{
    size_t *idx, step = (size_t) online_caps_insert_chunk (targets[0].j->on);
    bool ok = results_fit (targets[0].j, out, err);
    idx = ok ? bson_malloc ((out->n + 1) * sizeof *idx) : NULL;
    for (size_t k = 0; ok && k < targets[0].j->p->n_keep; k++) {
        size_t n = 0;
        for (size_t i = 0; i < out->n; i++)
            if (out->docs[i].keep == (int) k)
                idx[n++] = i;
        for (size_t from = 0; ok && from < n; from += step)
            ok = insert_chunk (&targets[k], out, idx, from, from + step < n ? from + step : n,
                               true, err);
    }
    bson_free (idx);
    return ok;
}

ssize_t
online_result_of (const online_docs_t *in, size_t i, const online_docs_t *out, size_t *at)
{
    for (size_t k = 0; k < out->n; k++) {
        size_t r = (*at + k) % out->n;
        if (online_same_id (online_doc_bytes (in, i), in->docs[i].len, online_doc_bytes (out, r),
                            out->docs[r].len)) {
            *at = r + 1;
            return (ssize_t) r;
        }
    }
    return -1;
}

bool
online_same_doc (const online_docs_t *a, size_t i, const online_docs_t *b, size_t k)
{
    return a->docs[i].len == b->docs[k].len &&
           memcmp (online_doc_bytes (a, i), online_doc_bytes (b, k), a->docs[i].len) == 0;
}

int64_t
online_would_change (const online_docs_t *in, const online_docs_t *out)
{
    size_t at = 0;
    int64_t n = 0;
    for (size_t i = 0; i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        n += r >= 0 && !online_same_doc (in, i, out, (size_t) r);
    }
    return n;
}

uint64_t
online_fields_digest (const uint8_t *doc, uint32_t len)
{
    bson_iter_t it;
    uint64_t sum = 0;
    if (!bson_iter_init_from_data (&it, doc, len))
        return 0;
    while (bson_iter_next (&it)) {
        rm_raw_value_t v;
        const char *k = bson_iter_key (&it);
        uint64_t h = rm_crc64_update (0, (const uint8_t *) k, strlen (k) + 1);
        if (rm_raw_value_of (&it, &v)) {
            h = rm_crc64_update (h, &v.type, 1);
            h = rm_crc64_update (h, v.data, v.len);
        }
        sum += h;
    }
    return sum;
}

/* The backup of one document, upserted by _id: {$setOnInsert: {doc: <the
 * document as first read>}, $set: {wrote: <CRC-64 of its replacement>,
 * wroteFields: <online_fields_digest of it>},
 * $addToSet: {read: <CRC-64 of the document as read now>, wrote_all:
 * <the replacement's>, fieldsWrote.<field>: <each value's checksum>}}.
 * rollback gives back what remodel wrote of doc, field by field, keeping
 * the application's (online_undo.c); for a backup of an earlier remodel
 * (no fieldsWrote), doc where the document is still what remodel last
 * wrote and every version remodel read of it was the original or one it
 * wrote: no change of the application's is lost. */
static void
backup_update (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen, bson_t *sel,
               bson_t *u)
{
    bson_t inner, d;
    int64_t wrote = (int64_t) rm_crc64_update (0, want, wlen);
    bool whole;
    online_id_filter (doc, len, sel);
    bson_init (u);
    BSON_APPEND_DOCUMENT_BEGIN (u, "$setOnInsert", &inner);
    if (bson_init_static (&d, doc, len))
        BSON_APPEND_DOCUMENT (&inner, "doc", &d);
    bson_append_document_end (u, &inner);
    bson_init (&d);
    BSON_APPEND_INT64 (&d, "read", (int64_t) rm_crc64_update (0, doc, len));
    BSON_APPEND_INT64 (&d, "wrote_all", wrote);
    /* Field by field too, so that rollback keeps the application's
     * (online_undo.c). */
    whole = !online_undo_note (doc, len, want, wlen, &d);
    BSON_APPEND_DOCUMENT_BEGIN (u, "$set", &inner);
    BSON_APPEND_INT64 (&inner, "wrote", wrote);
    BSON_APPEND_INT64 (&inner, "wroteFields", (int64_t) online_fields_digest (want, wlen));
    if (whole)
        BSON_APPEND_BOOL (&inner, "undoWhole", true);
    bson_append_document_end (u, &inner);
    BSON_APPEND_DOCUMENT (u, "$addToSet", &d);
    bson_destroy (&d);
}

/* Whether a field name can stand as a path in $set or $unset. */
static bool
plain_name (const char *k)
{
    return *k && *k != '$' && !strchr (k, '.');
}

/* Beyond this many top-level fields the checks below (quadratic) are not
 * worth it: the document is replaced. */
#define FIELD_UPDATE_MAX 64

static bool
find_raw (const uint8_t *doc, uint32_t len, const char *k, rm_raw_value_t *v)
{
    bson_iter_t it;
    return bson_iter_init_from_data (&it, doc, len) && bson_iter_find (&it, k) &&
           rm_raw_value_of (&it, v);
}

/* Whether want keeps doc's fields in doc's order, with new ones only after
 * them, in lexicographic order (MongoDB 5.0+ appends several new fields
 * in that order, older servers and the test servers in the order given:
 * then both agree), every name one $set can take. */
static bool
reachable (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen)
{
    bson_iter_t a, b;
    const char *last_new = NULL;
    rm_raw_value_t v;
    size_t n = 0;

    if (!bson_iter_init_from_data (&a, doc, len) || !bson_iter_init_from_data (&b, want, wlen))
        return false;
    while (bson_iter_next (&b)) {
        const char *k = bson_iter_key (&b);
        if (++n > FIELD_UPDATE_MAX)
            return false;
        if (!find_raw (doc, len, k, &v)) {
            if (!plain_name (k) || (last_new && strcmp (last_new, k) >= 0))
                return false;
            last_new = k;
            continue;
        }
        if (last_new)
            return false; /* an old field after a new one: it moved */
        /* doc's next field that want keeps must be this one */
        for (;;) {
            if (!bson_iter_next (&a))
                return false;
            if (strcmp (bson_iter_key (&a), k) == 0)
                break;
            if (find_raw (want, wlen, bson_iter_key (&a), &v))
                return false; /* kept, but later in want: moved */
        }
    }
    return true;
}

/* The update that makes want of doc by $set and $unset of top-level fields
 * ({$set: {<changed or new>}, $unset: {<gone>}}) into u, when the server
 * gives exactly want's bytes by it (reachable); false otherwise, and the
 * caller replaces the document. Either way the write is conditional on
 * the document as read. */
static bool
field_update (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen, bson_t *u)
{
    bson_iter_t it;
    bson_t set, unset;
    rm_raw_value_t ov, wv;
    size_t n_set = 0, n_unset = 0;
    bool ok = true;

    if (!reachable (doc, len, want, wlen))
        return false;
    bson_init (&set);
    bson_init (&unset);
    bson_iter_init_from_data (&it, want, wlen);
    while (ok && bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (find_raw (doc, len, k, &ov) && rm_raw_value_of (&it, &wv) && ov.type == wv.type &&
            ov.len == wv.len && memcmp (ov.data, wv.data, ov.len) == 0)
            continue;
        ok = plain_name (k) && bson_append_iter (&set, k, -1, &it);
        n_set++;
    }
    bson_iter_init_from_data (&it, doc, len);
    while (ok && bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (find_raw (want, wlen, k, &wv))
            continue;
        ok = plain_name (k) && BSON_APPEND_UTF8 (&unset, k, "");
        n_unset++;
    }
    ok = ok && (n_set || n_unset);
    if (ok) {
        bson_init (u);
        if (n_set)
            BSON_APPEND_DOCUMENT (u, "$set", &set);
        if (n_unset)
            BSON_APPEND_DOCUMENT (u, "$unset", &unset);
    }
    bson_destroy (&set);
    bson_destroy (&unset);
    return ok;
}

/* Adds to sel the condition that doc's top-level field of path (up to its
 * first dot) is as read: its value, or {$exists: false}; once a name. */
static void
filter_field (bson_t *sel, const uint8_t *doc, uint32_t len, const char *path)
{
    int n = (int) strcspn (path, ".");
    bson_iter_t it;
    bson_t inner;

    if (n == 3 && !memcmp (path, "_id", 3))
        return;
    if (bson_iter_init (&it, sel) && bson_iter_find_w_len (&it, path, n))
        return;
    if (bson_iter_init_from_data (&it, doc, len) && bson_iter_find_w_len (&it, path, n)) {
        bson_append_iter (sel, path, n, &it);
        return;
    }
    bson_append_document_begin (sel, path, n, &inner);
    BSON_APPEND_BOOL (&inner, "$exists", false);
    bson_append_document_end (sel, &inner);
}

/* The condition a $set/$unset u of doc is written on: the _id, each
 * top-level field the step reads in this namespace and each u writes, as
 * they were read. An application's change to any of them makes it match
 * nothing (the document is read again and redone); a change to any other
 * field neither stops it nor is overwritten by it, and the server finds
 * the document by _id instead of comparing it whole. */
static void
update_filter (const online_inplace_t *ip, const uint8_t *doc, uint32_t len, const bson_t *u,
               bson_t *sel)
{
    const char *ns = ip->j->in[ip->j->p->drive]->text;
    bson_iter_t op, f;

    online_id_filter (doc, len, sel);
    for (size_t i = 0; ip->reads && i < rm_fieldcheck_count (ip->reads); i++)
        if (!strcmp (rm_fieldcheck_ns (ip->reads, i), ns))
            filter_field (sel, doc, len, rm_fieldcheck_path (ip->reads, i));
    if (!bson_iter_init (&op, u))
        return;
    while (bson_iter_next (&op))
        if (BSON_ITER_HOLDS_DOCUMENT (&op) && bson_iter_recurse (&op, &f))
            while (bson_iter_next (&f))
                filter_field (sel, doc, len, bson_iter_key (&f));
}

/* The application's writes a replacement of doc by want undid, given
 * back: each field of pre (the document it replaced) that doc lacks or
 * holds otherwise, by a $set on condition that it still holds what want
 * gave it (a later write of the application's stands). Names a $set cannot
 * take stay as the replacement left them. *undid: whether there was one. */
static bool
give_back (online_t *on, mongoc_collection_t *c, const uint8_t *doc, uint32_t len,
           const uint8_t *pre, uint32_t plen, const uint8_t *want, uint32_t wlen, bool *undid,
           bson_error_t *err)
{
    bson_t sel, set = BSON_INITIALIZER, u = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t why;
    rm_raw_value_t dv, pv;
    bool ok = true;

    online_id_filter (doc, len, &sel);
    *undid = false;
    bson_iter_init_from_data (&it, pre, plen);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (!strcmp (k, "_id") || !plain_name (k) ||
            (find_raw (doc, len, k, &dv) && rm_raw_value_of (&it, &pv) && dv.type == pv.type &&
             dv.len == pv.len && memcmp (dv.data, pv.data, dv.len) == 0))
            continue;
        bson_append_iter (&set, k, -1, &it);
        filter_field (&sel, want, wlen, k);
        *undid = true;
    }
    if (*undid) {
        BSON_APPEND_DOCUMENT (&u, "$set", &set);
        ok = online_lease_check (on, err) &&
             (mongoc_collection_update_one (c, &sel, &u, NULL, NULL, &why) ||
              online_fail (on, err, &why, "giving back an application's write"));
    }
    bson_destroy (&sel);
    bson_destroy (&set);
    bson_destroy (&u);
    return ok;
}

/* A replacement of doc by want, on condition that the document still
 * holds each field of doc as read. A filter tests only the fields it
 * names: one the application added since would still match and go with
 * the replacement. So it is a findAndModify, which answers with the
 * document it replaced (atomically, where the server's updates are):
 * whatever of the application's that shows is given back at once
 * (give_back), and *undid is true then, so that run reads the document
 * again and checks it (redo). *replaced: whether it matched. Rollback's
 * whole-document restores use it too (online_finalize.c). */
bool
online_replace_checked (online_t *on, mongoc_collection_t *c, const uint8_t *doc, uint32_t len,
                        const uint8_t *want, uint32_t wlen, bool *replaced, bool *undid,
                        bson_error_t *err)
{
    mongoc_find_and_modify_opts_t *fam = mongoc_find_and_modify_opts_new ();
    bson_t sel, w, reply, extra = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t why;
    bool ok;

    *replaced = *undid = false;
    bson_init_static (&sel, doc, len);
    bson_init_static (&w, want, wlen);
    mongoc_find_and_modify_opts_set_update (fam, &w);
    if (on->o->write_concern)
        mongoc_write_concern_append (on->o->write_concern, &extra);
    mongoc_find_and_modify_opts_append (fam, &extra);
    ok = online_lease_check (on, err);
    if (ok) {
        /* reply is set either way */
        if (!mongoc_collection_find_and_modify_with_opts (c, &sel, fam, &reply, &why)) {
            ok = online_fail (on, err, &why, "replacing a document");
        } else if (bson_iter_init_find (&it, &reply, "value") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
            const uint8_t *pre;
            uint32_t plen;
            bson_iter_document (&it, &plen, &pre);
            *replaced = true;
            ok = give_back (on, c, doc, len, pre, plen, want, wlen, undid, err);
        }
        bson_destroy (&reply);
    }
    bson_destroy (&extra);
    mongoc_find_and_modify_opts_destroy (fam);
    return ok;
}

/* The conditional write of want over doc: an update of the fields that
 * change, queued in w, where it can be; else a replacement, sent now
 * (online_replace_checked), *replaced counting those that replaced. */
static bool
write_one (online_inplace_t *ip, online_writes_t *w, const uint8_t *doc, uint32_t len,
           const uint8_t *want, uint32_t wlen, int64_t *replaced, bson_error_t *err)
{
    mongoc_bulk_operation_t *b;
    bson_t sel, u;
    bson_error_t why;
    bool ok, matched, undid;
    if (!field_update (doc, len, want, wlen, &u)) {
        ok = online_replace_checked (ip->j->on, ip->j->drive, doc, len, want, wlen, &matched,
                                     &undid, err);
        *replaced += matched && !undid;
        return ok;
    }
    if (!(b = online_writes_next (w, err))) {
        bson_destroy (&u);
        return false;
    }
    update_filter (ip, doc, len, &u, &sel);
    ok = mongoc_bulk_operation_update_one_with_opts (b, &sel, &u, NULL, &why) ||
         online_fail (ip->j->on, err, &why, "queueing a write");
    bson_destroy (&sel);
    bson_destroy (&u);
    return ok;
}

/* Room in a backup for the checksums later versions add ($addToSet of
 * read and wrote_all: 11 bytes each), a dozen of each. */
#define BACKUP_ROOM 264

/* The size of a document's backup (backup_update): {_id, doc: <the
 * original>, wrote, wroteFields, read: [crc], wrote_all: [crc]}, and
 * BACKUP_ROOM. */
static uint64_t
backup_size (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen)
{
    bson_iter_t it;
    rm_raw_value_t v;
    uint64_t id = rm_doc_field (doc, len, "_id", 3, &it) && rm_raw_value_of (&it, &v) ? v.len : 0;
    return 4 + (1 + 4 + id) + (1 + 4 + (uint64_t) len) + (1 + 6 + 8) + (1 + 12 + 8) +
           (1 + 5 + 4 + 11 + 1) + (1 + 10 + 4 + 11 + 1) + 1 + BACKUP_ROOM +
           online_undo_room (doc, len, want, wlen);
}

/* In place: the document doc becomes want, after its backup; both must
 * fit in a document, checked before anything of the batch is written. */
static bool
inplace_fits (online_job_t *j, const uint8_t *doc, uint32_t len, const uint8_t *want,
              uint32_t wlen, bson_error_t *err)
{
    const char *ns = j->in[j->p->drive]->text;
    uint64_t backup = backup_size (doc, len, want, wlen);
    if (wlen > DOC_MAX)
        return too_large (j, ns, doc, len, "the document as the step makes it", wlen, err);
    if (backup > DOC_MAX)
        return too_large (j, ns, doc, len, "its backup (the original and checksums, in the state "
                          "database)", backup, err);
    return true;
}

/* The document whose conditional replace matched nothing: it changed or
 * went since it was read. Read it again and redo it. */
static bool
redo (online_inplace_t *ip, const uint8_t *orig, uint32_t olen, bson_error_t *err)
{
    online_job_t *j = ip->j;
    bson_iter_t id;
    bson_error_t why;

    if (!rm_doc_field (orig, olen, "_id", 3, &id))
        return true;
    for (int attempt = 0; attempt < RETRIES; attempt++) {
        int rc = online_batch_reread (j, &id, &ip->again, err);
        ssize_t r;
        size_t at = 0;
        bson_t cur, want, reply, sel, u, up = BSON_INITIALIZER;
        bson_iter_t it;
        bool done, matched, undid;
        if (rc <= 0)
            return rc == 0; /* gone: nothing to do */
        if (!online_batch_compute (j, &ip->again, &ip->again_out, err))
            return false;
        r = online_result_of (&ip->again, 0, &ip->again_out, &at);
        if (r < 0 || online_same_doc (&ip->again, 0, &ip->again_out, (size_t) r))
            return true; /* already what the step makes of it */
        if (!inplace_fits (j, online_doc_bytes (&ip->again, 0), ip->again.docs[0].len,
                           online_doc_bytes (&ip->again_out, (size_t) r), ip->again_out.docs[r].len,
                           err))
            return false;
        backup_update (online_doc_bytes (&ip->again, 0), ip->again.docs[0].len,
                       online_doc_bytes (&ip->again_out, (size_t) r), ip->again_out.docs[r].len,
                       &sel, &u);
        BSON_APPEND_BOOL (&up, "upsert", true);
        done = online_lease_check (j->on, err);
        if (!done) {
            bson_destroy (&sel);
            bson_destroy (&u);
            bson_destroy (&up);
            return false;
        }
        done = mongoc_collection_update_one (ip->backup, &sel, &u, &up, NULL, &why);
        bson_destroy (&sel);
        bson_destroy (&u);
        bson_destroy (&up);
        if (!done)
            return online_fail (j->on, err, &why, "saving an original");
        bson_init_static (&cur, online_doc_bytes (&ip->again, 0), ip->again.docs[0].len);
        bson_init_static (&want, online_doc_bytes (&ip->again_out, (size_t) r),
                          ip->again_out.docs[r].len);
        if (!online_lease_check (j->on, err))
            return false;
        if (!field_update (bson_get_data (&cur), cur.len, bson_get_data (&want), want.len, &u)) {
            if (!online_replace_checked (j->on, j->drive, bson_get_data (&cur), cur.len,
                                         bson_get_data (&want), want.len, &matched, &undid, err))
                return false;
            if (matched && !undid)
                return true;
            continue;
        }
        update_filter (ip, bson_get_data (&cur), cur.len, &u, &sel);
        done = mongoc_collection_update_one (j->drive, &sel, &u, NULL, &reply, &why);
        bson_destroy (&sel);
        bson_destroy (&u);
        if (!done) {
            bson_destroy (&reply);
            return online_fail (j->on, err, &why, "replacing a document");
        }
        done = bson_iter_init_find (&it, &reply, "matchedCount") && bson_iter_as_int64 (&it) == 1;
        bson_destroy (&reply);
        if (done)
            return true;
    }
    {
        bson_t sel;
        char *text;
        online_id_filter (orig, olen, &sel);
        text = bson_as_relaxed_extended_json (&sel, NULL);
        rm_error_set (err, RM_ERR_IO, "%s: %s: document %s keeps changing under the run "
                      "(%d attempts); stopping (the checkpoint stands)", j->on->where,
                      j->in[j->p->drive]->text, text, RETRIES);
        bson_free (text);
        bson_destroy (&sel);
    }
    return false;
}

bool
online_inplace_write (online_inplace_t *ip, const online_docs_t *in, const online_docs_t *out,
                      bson_error_t *err)
{
    online_job_t *j = ip->j;
    online_writes_t save, repl;
    size_t at = 0, changed = 0;
    int64_t replaced = 0;
    bool ok = true;

    for (size_t i = 0; i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        if (r >= 0 && !online_same_doc (in, i, out, (size_t) r) &&
            !inplace_fits (j, online_doc_bytes (in, i), in->docs[i].len,
                           online_doc_bytes (out, (size_t) r), out->docs[r].len, err))
            return false;
    }
    at = 0;
    ip->reads = rm_fieldcheck_reads (j->s);
    online_writes_init (&save, j, ip->backup, "saving the originals");
    online_writes_init (&repl, j, j->drive, "replacing documents");
    /* The originals first (a crash between the two keeps them), then the
     * documents, each in commands of the server's size
     * (online_caps_write_chunk). */
    for (int pass = 0; ok && pass < 2; pass++) {
        for (size_t i = 0; ok && i < in->n; i++) {
            ssize_t r = online_result_of (in, i, out, &at);
            const uint8_t *doc = online_doc_bytes (in, i);
            uint32_t len = in->docs[i].len;
            mongoc_bulk_operation_t *b;
            bson_error_t why;
            if (r < 0 || online_same_doc (in, i, out, (size_t) r))
                continue;
            changed += pass;
            if (pass) {
                ok = write_one (ip, &repl, doc, len, online_doc_bytes (out, (size_t) r),
                                out->docs[r].len, &replaced, err);
                continue;
            }
            bson_t sel, u, opts = BSON_INITIALIZER;
            if (!(b = online_writes_next (&save, err))) {
                ok = false;
                break;
            }
            backup_update (doc, len, online_doc_bytes (out, (size_t) r), out->docs[r].len, &sel,
                           &u);
            BSON_APPEND_BOOL (&opts, "upsert", true);
            ok = mongoc_bulk_operation_update_one_with_opts (b, &sel, &u, &opts, &why) ||
                 online_fail (j->on, err, &why, "queueing a write");
            bson_destroy (&sel);
            bson_destroy (&u);
            bson_destroy (&opts);
        }
        ok = ok && online_writes_flush (pass ? &repl : &save, err);
    }
    j->written += (int64_t) changed;
    /* Some changed in between: each is checked and redone alone. */
    at = 0;
    for (size_t i = 0; ok && repl.matched + replaced < (int64_t) changed && i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        if (r >= 0 && !online_same_doc (in, i, out, (size_t) r))
            ok = redo (ip, online_doc_bytes (in, i), in->docs[i].len, err);
    }
    rm_fieldcheck_destroy (ip->reads);
    ip->reads = NULL;
    return ok;
}
