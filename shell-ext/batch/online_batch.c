/* A batch of one pass (online_batch.h): a range of the driving collection
 * in _id order, the join partners of its documents, and the engine's
 * results for them. */
#include <string.h>

#include <stdlib.h>

#include "online_batch.h"
#include "remodel/docpath.h"
#include "remodel/value.h"

/* cur's documents into in (last: the last one's _id), cur ended. */
static bool
read_cursor (online_job_t *j, online_cursor_t *cur, online_docs_t *in, bson_t *last,
             const char *what, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (j->on);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    while (ops->next (cur, &doc)) {
        online_docs_add (in, bson_get_data (doc), doc->len, -1);
        if (last) {
            bson_iter_t id;
            bson_reinit (last);
            if (bson_iter_init_find (&id, doc, "_id"))
                bson_append_iter (last, "last", 4, &id);
        }
    }
    if (!ops->end (cur, &why))
        ok = online_fail (j->on, err, &why, what);
    return ok;
}

static bool
read_into (online_job_t *j, const bson_t *filter, const bson_t *opts, online_docs_t *in,
           bson_t *last, const char *what, bson_error_t *err)
{
    return read_cursor (j, online_ops (j->on)->find (j->on, j->drive, filter, opts), in, last,
                        what, err);
}

static int
cmp_values (const void *a, const void *b)
{
    return rm_value_compare ((const bson_iter_t *) a, (const bson_iter_t *) b);
}

/* The series' values: distinct, null first (it also finds the readings
 * without the field), in MongoDB's order. */
static bool
series_load (online_job_t *j, bson_error_t *err)
{
    bson_t *cmd = BCON_NEW ("distinct", BCON_UTF8 (mongoc_collection_get_name (j->drive)), "key",
                            BCON_UTF8 (j->p->series));
    bson_t reply;
    bson_iter_t it, arr;
    bson_error_t why;
    bool ok;
    int64_t docs;
    size_t cap = 16;

    ok = online_ops (j->on)->command (j->on, j->drive, NULL, cmd, &reply, &why);
    bson_destroy (cmd);
    if (!ok) {
        bson_destroy (&reply);
        return online_fail (j->on, err, &why, "listing the series (distinct)");
    }
    j->series = bson_new ();
    bson_copy_to_excluding_noinit (&reply, j->series, "ok", NULL);
    bson_destroy (&reply);
    j->values = bson_malloc (cap * sizeof *j->values);
    /* null first: the lowest value, and the one the absent field reads as */
    {
        static const uint8_t null_doc[] = {8, 0, 0, 0, 10, 0, 0, 0};
        bson_iter_init_from_data (&j->values[0], null_doc, sizeof null_doc);
        bson_iter_next (&j->values[0]);
        j->n_values = 1;
    }
    if (bson_iter_init_find (&it, j->series, "values") && bson_iter_recurse (&it, &arr))
        while (bson_iter_next (&arr)) {
            if (BSON_ITER_HOLDS_NULL (&arr))
                continue;
            if (j->n_values == cap)
                j->values = bson_realloc (j->values, (cap *= 2) * sizeof *j->values);
            j->values[j->n_values++] = arr;
        }
    qsort (j->values + 1, j->n_values - 1, sizeof *j->values, cmp_values);
    /* About --batch-size readings a batch, from the average series. */
    docs = online_estimated_of (j->on, j->drive, NULL);
    j->per_batch = docs > 0 ? (size_t) (j->batch_size * (int64_t) j->n_values / docs) : 1;
    if (j->per_batch < 1)
        j->per_batch = 1;
    return true;
}

void
online_job_destroy_series (online_job_t *j)
{
    if (j->series)
        bson_destroy (j->series);
    bson_free (j->values);
    j->series = NULL;
    j->values = NULL;
}

/* The first value after last's "last" (0 without one): the values are in
 * order, null first. Found again at each batch, so that a batch retried
 * after an error starts where its checkpoint says. */
static size_t
series_after (const online_job_t *j, const bson_t *last)
{
    bson_iter_t lit;
    size_t lo = 0, hi = j->n_values;
    if (!bson_iter_init_find (&lit, last, "last"))
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rm_value_compare (&j->values[mid], &lit) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Keeps in in only the readings of the series values[at, end): a server
 * may return a document updated while the query ran although it no
 * longer matches (mongo-java-server does), and a reading moved to a
 * series of a later batch would make a bucket of its own here, then the
 * same bucket _id again there. The field missing reads as null. */
static void
series_only (online_job_t *j, online_docs_t *in, size_t at, size_t end)
{
    online_docs_t keep;
    static const uint8_t null_doc[] = {8, 0, 0, 0, 10, 0, 0, 0};
    if (strchr (j->p->series, '.'))
        return; /* a dotted metaField: the query's own matching stands */
    online_docs_init (&keep);
    for (size_t i = 0; i < in->n; i++) {
        bson_iter_t v;
        bool match = false;
        if (!rm_doc_field (online_doc_bytes (in, i), in->docs[i].len, j->p->series,
                           strlen (j->p->series), &v)) {
            bson_iter_init_from_data (&v, null_doc, sizeof null_doc);
            bson_iter_next (&v);
        }
        for (size_t k = at; !match && k < end; k++)
            match = rm_value_compare (&j->values[k], &v) == 0 &&
                    (bson_iter_type (&v) == BSON_TYPE_NULL) == BSON_ITER_HOLDS_NULL (&j->values[k]);
        if (match)
            online_docs_add (&keep, online_doc_bytes (in, i), in->docs[i].len, -1);
    }
    if (keep.n == in->n) {
        online_docs_destroy (&keep);
        return;
    }
    online_docs_destroy (in);
    *in = keep;
}

static int64_t
series_read (online_job_t *j, bson_t *last, online_docs_t *in, bson_error_t *err)
{
    online_docs_reset (in);
    if (!j->series && !series_load (j, err))
        return -1;
    /* A series may have no readings (null: none lacks the field; or they
     * were deleted since): read on until some come or the values end. */
    for (size_t at = series_after (j, last); at < j->n_values; at = series_after (j, last)) {
        bson_t filter = BSON_INITIALIZER, cond, arr;
        size_t end = at + j->per_batch < j->n_values ? at + j->per_batch : j->n_values;
        uint32_t n = 0;
        bool ok;

        BSON_APPEND_DOCUMENT_BEGIN (&filter, j->p->series, &cond);
        BSON_APPEND_ARRAY_BEGIN (&cond, "$in", &arr);
        for (size_t i = at; i < end; i++) {
            char key[16];
            const char *kp;
            size_t kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_iter (&arr, kp, (int) kl, &j->values[i]);
        }
        bson_append_array_end (&cond, &arr);
        bson_append_document_end (&filter, &cond);
        ok = read_into (j, &filter, NULL, in, NULL, "reading a batch of series", err);
        bson_destroy (&filter);
        if (!ok)
            return -1;
        series_only (j, in, at, end);
        bson_reinit (last);
        bson_append_iter (last, "last", 4, &j->values[end - 1]);
        if (in->n)
            return (int64_t) in->n;
    }
    return 0;
}

int64_t
online_batch_read_series (online_job_t *j, const bson_t *values, online_docs_t *in,
                          bson_error_t *err)
{
    bson_t filter = BSON_INITIALIZER, cond;
    bson_iter_t it, *saved = j->values;
    size_t nsaved = j->n_values, n = 0, cap = 16;
    bool ok;

    online_docs_reset (in);
    bson_append_document_begin (&filter, j->p->series, -1, &cond);
    BSON_APPEND_ARRAY (&cond, "$in", values);
    bson_append_document_end (&filter, &cond);
    ok = read_into (j, &filter, NULL, in, NULL, "reading the series a change affects", err);
    bson_destroy (&filter);
    /* The same matching as a run's batch (series_only), against these
     * values. */
    j->values = bson_malloc (cap * sizeof *j->values);
    if (ok && bson_iter_init (&it, values))
        while (bson_iter_next (&it)) {
            if (n == cap)
                j->values = bson_realloc (j->values, (cap *= 2) * sizeof *j->values);
            j->values[n++] = it;
        }
    j->n_values = n;
    if (ok)
        series_only (j, in, 0, n);
    bson_free (j->values);
    j->values = saved;
    j->n_values = nsaved;
    return ok ? (int64_t) in->n : -1;
}

/* One cursor a pass, over the rest of the driving collection in _id
 * order, read --batch-size documents a batch: a query per batch would make
 * the server find (and FerretDB sort) the rest again each time. It is
 * opened after the checkpoint's _id (online_range_after: of any type), and
 * again after any error. */
int64_t
online_batch_read (online_job_t *j, bson_t *last, online_docs_t *in, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (j->on);
    const bson_t *doc;
    bson_error_t why;
    bson_iter_t lit;
    bool skipping = false, more = true;

    if (j->p->series)
        return series_read (j, last, in, err);
    online_docs_reset (in);
    if (j->ended)
        return 0;
    if (!j->cursor) {
        bson_t filter, *opts;
        /* After the checkpoint's _id in MongoDB's order, of any type. */
        skipping = bson_iter_init_find (&lit, last, "last");
        if (!online_batch_range_filter (j, last, &filter, err))
            return -1;
        opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}", "batchSize",
                         BCON_INT32 ((int32_t) (j->batch_size < 100000 ? j->batch_size : 100000)));
        /* online_batch.h types the field as the driver's cursor: the
         * table's, held there. */
        j->cursor = (mongoc_cursor_t *) ops->find (j->on, j->drive, &filter, opts);
        bson_destroy (opts);
        bson_destroy (&filter);
    }
    while ((int64_t) in->n < j->batch_size &&
           (more = ops->next ((online_cursor_t *) j->cursor, &doc))) {
        bson_iter_t id;
        bool has_id = bson_iter_init_find (&id, doc, "_id");
        /* What the filter lets through from before the checkpoint comes
         * first; lit stays valid until last is rewritten below. */
        if (skipping) {
            if (has_id && online_range_before (&id, &lit))
                continue;
            skipping = false;
        }
        /* A type no $type alias names, which the range's filter lets
         * through: another partition's. */
        if (j->part && has_id && !online_partition_holds (j->part, &id))
            continue;
        online_docs_add (in, bson_get_data (doc), doc->len, -1);
        bson_reinit (last);
        if (has_id)
            bson_append_iter (last, "last", 4, &id);
    }
    /* A cursor that ran out (or failed) is ended; one that filled the
     * batch stays open for the next. */
    if (!more) {
        bool read = ops->end ((online_cursor_t *) j->cursor, &why);
        j->cursor = NULL;
        if (!read) {
            online_fail (j->on, err, &why, "reading a batch");
            return -1;
        }
        j->ended = true;
    }
    return (int64_t) in->n;
}

void
online_batch_close (online_job_t *j)
{
    if (j->cursor)
        online_ops (j->on)->end ((online_cursor_t *) j->cursor, NULL);
    j->cursor = NULL;
    online_merge_close (j);
}

int
online_batch_reread (online_job_t *j, const bson_iter_t *id, online_docs_t *in, bson_error_t *err)
{
    bson_t filter = BSON_INITIALIZER;
    bool ok;
    online_docs_reset (in);
    bson_append_iter (&filter, "_id", 3, id);
    ok = read_into (j, &filter, NULL, in, NULL, "reading a document again", err);
    bson_destroy (&filter);
    return ok ? in->n > 0 : -1;
}

int64_t
online_batch_read_ids (online_job_t *j, const bson_t *ids, online_docs_t *in, bson_error_t *err)
{
    /* The table's read of keys: a few are read by point where the server
     * serves those and not an $in (online_points.c). */
    online_docs_reset (in);
    if (!read_cursor (j, online_ops (j->on)->keys (j->on, j->drive, "_id", ids, NULL), in, NULL,
                      "reading changed documents", err))
        return -1;
    return (int64_t) in->n;
}

bool
online_batch_docs_where (online_job_t *j, mongoc_collection_t *c, const char *path,
                         const bson_t *values, const bson_t *opts, online_batch_doc_fn fn,
                         void *ctx, int64_t *read, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (j->on);
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    cur = ops->keys (j->on, c, path, values, opts);
    while (ops->next (cur, &doc)) {
        fn (ctx, doc);
        if (read)
            (*read)++;
    }
    if (!ops->end (cur, &why))
        ok = online_fail (j->on, err, &why, "finding what a change affects");
    return ok;
}

typedef struct {
    online_batch_id_fn fn;
    void *ctx;
} id_of_t;

static void
id_of (void *ctx, const bson_t *doc)
{
    id_of_t *a = ctx;
    bson_iter_t id;
    if (bson_iter_init_find (&id, doc, "_id"))
        a->fn (a->ctx, &id);
}

bool
online_batch_ids_where (online_job_t *j, mongoc_collection_t *c, const char *path,
                        const bson_t *values, online_batch_id_fn fn, void *ctx, bson_error_t *err)
{
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
    id_of_t a = {fn, ctx};
    bool ok = online_batch_docs_where (j, c, path, values, opts, id_of, &a, NULL, err);
    bson_destroy (opts);
    return ok;
}

/* Whether {path: {$in: [...]}} asks for a null. */
static bool
asks_null (const bson_t *by_key)
{
    bson_iter_t it, cond, in;
    if (!bson_iter_init (&it, by_key) || !bson_iter_next (&it) || !bson_iter_recurse (&it, &cond) ||
        !bson_iter_find (&cond, "$in") || !bson_iter_recurse (&cond, &in))
        return false;
    while (bson_iter_next (&in))
        if (BSON_ITER_HOLDS_NULL (&in))
            return true;
    return false;
}

/* By SERVER-36681's rules (online_engine_new) a null matches a path that
 * crosses an array of scalars or an empty one, which a server before 9.0
 * does not find by {path: null}: each of the path's proper prefixes that
 * holds an array is asked for too (a superset, the engine matches). */
static void
append_crossed (bson_t *or, uint32_t *n, const rm_path_t *key)
{
    for (size_t k = 1; k < key->n; k++) {
        char idx[16], *prefix = bson_strndup (key->text, (size_t) (key->parts[k] - key->parts[0]) - 1);
        const char *kp;
        bson_t one, type;
        size_t kl = bson_uint32_to_string ((*n)++, &kp, idx, sizeof idx);
        bson_append_document_begin (or, kp, (int) kl, &one);
        bson_append_document_begin (&one, prefix, -1, &type);
        BSON_APPEND_UTF8 (&type, "$type", "array");
        bson_append_document_end (&one, &type);
        bson_append_document_end (or, &one);
        bson_free (prefix);
    }
}

/* A partner of the batch: to the engine, its keys noted. */
static bool
add_partner (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    online_job_t *j = ctx;
    rm_batchstep_add (j->engine, (size_t) j->p->partner, doc, len);
    return !j->keys || online_keys_note (j->keys, doc, len, err);
}

static bool
fetch_partners (online_job_t *j, const online_docs_t *in, bson_error_t *err)
{
    bson_t filter = BSON_INITIALIZER, by_key = BSON_INITIALIZER, cond, values = BSON_INITIALIZER,
           *opts;
    const online_ops_t *ops = online_ops (j->on);
    uint32_t n = 0;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    /* The driving documents' key values, as $lookup takes them: each
     * element of an array and the array itself (the partners' field may
     * hold either), null for a missing one (it matches null and missing). */
    for (size_t i = 0; i < in->n; i++)
        online_keys_values (online_doc_bytes (in, i), in->docs[i].len, j->p->drive_key, &values,
                            &n);
    /* The pass's partners read once (online_partners.c): the same ones,
     * in the same order, noted the same way. */
    if (j->partners) {
        int found = online_partners_each (j->partners, &values, j->p->partner_first,
                                          add_partner, j, err);
        if (found != 0) {
            bson_destroy (&values);
            bson_destroy (&filter);
            bson_destroy (&by_key);
            return found > 0 && (!j->keys || online_keys_flush (j->keys, err));
        }
    }
    BSON_APPEND_DOCUMENT_BEGIN (&by_key, j->p->partner_key->text, &cond);
    BSON_APPEND_ARRAY (&cond, "$in", &values);
    bson_append_document_end (&by_key, &cond);
    bson_destroy (&values);
    if (j->on->run->lookup_rules == 2 && j->p->partner_key->n > 1 && asks_null (&by_key)) {
        bson_t or;
        BSON_APPEND_ARRAY_BEGIN (&filter, "$or", &or);
        BSON_APPEND_DOCUMENT (&or, "0", &by_key);
        n = 1;
        append_crossed (&or, &n, j->p->partner_key);
        bson_append_array_end (&filter, &or);
    } else {
        bson_concat (&filter, &by_key);
    }
    bson_destroy (&by_key);
    /* As many a reply as the driving read's: without a batchSize FerretDB
     * 1.x answers a batch's partners in replies of a few hundred, one
     * round trip each (39 for the 10,000 tasks of 980 people). */
    opts = BCON_NEW ("batchSize",
                     BCON_INT32 ((int32_t) (j->batch_size < 100000 ? j->batch_size : 100000)));
    online_partner_projection (j->p, opts);
    cur = ops->find (j->on, j->partner, &filter, opts);
    bson_destroy (opts);
    while (ok && ops->next (cur, &doc))
        ok = add_partner (j, bson_get_data (doc), doc->len, err);
    if (!ops->end (cur, ok ? &why : NULL) && ok)
        ok = online_fail (j->on, err, &why, "fetching a batch's partners");
    /* The keys are on the server before the batch's results and its
     * checkpoint: a result is never there without them. */
    if (ok && j->keys)
        ok = online_keys_flush (j->keys, err);
    bson_destroy (&filter);
    return ok;
}

typedef struct {
    const rm_pass_t *p;
    online_docs_t *out;
} collect_t;

static bool
collect (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    collect_t *c = ctx;
    for (size_t k = 0; k < c->p->n_keep; k++)
        if (strcmp (ns, c->p->keep[k]->text) == 0) {
            online_docs_add (c->out, doc, len, (int) k);
            break;
        }
    return true;
}

bool
online_batch_compute (online_job_t *j, const online_docs_t *in, online_docs_t *out,
                      bson_error_t *err)
{
    collect_t c = {j->p, out};
    online_docs_reset (out);
    for (size_t i = 0; i < in->n; i++)
        rm_batchstep_add (j->engine, j->p->drive, online_doc_bytes (in, i), in->docs[i].len);
    if (j->p->partner >= 0 && in->n && !fetch_partners (j, in, err))
        return false;
    /* Drivers that hold their results' _ids (unbucketize): noted before
     * their results are written, as partners are, so that a sync finds
     * what a driver held once it no longer does. */
    if (j->p->partner < 0 && j->keys) {
        for (size_t i = 0; i < in->n; i++)
            if (!online_keys_note (j->keys, online_doc_bytes (in, i), in->docs[i].len, err))
                return false;
        if (!online_keys_flush (j->keys, err))
            return false;
    }
    return rm_batchstep_run (j->engine, collect, &c, err);
}

/* A dry run's failing document: counted, the first few said. */
#define DOC_FAILS_SHOWN 5
static void
on_doc_fail (void *ctx, const bson_error_t *why)
{
    online_t *on = ctx;
    if (on->doc_fails++ < DOC_FAILS_SHOWN)
        online_say_warn (on, "dry run: fails: %s", why->message);
}

rm_batchstep_t *
online_engine_new (online_t *on, const rm_step_t *s)
{
    /* A fused run's first step computes the run (remodel/fuse.h); a step
     * of no plan of on's (an inverse) is its own. */
    bool ours = s->index >= 1 && s->index <= on->run->plan.n && &on->run->plan.steps[s->index - 1] == s;
    size_t n = ours ? rm_names_run (&on->run->names, s->index - 1) : 1;
    rm_batchstep_t *b = rm_batchstep_new_run (s, n ? n : 1, NULL);
    rm_batchstep_lookup (b, online_lookup_rules (on) == 2);
    /* A dry run evaluates every document of every step: one that fails
     * is counted, not the end of it. */
    if (on->run->o->dry_run)
        rm_batchstep_doc_error (b, on_doc_fail, on);
    return b;
}
