/* A range's targets read beside its drivers (online_batch.h), for verify
 * and sync side by side, whose rescan after a change log rolled off is a
 * sync of every range.
 *
 * A batch's check needs the target's documents of its results' _ids. A
 * query of those _ids ({_id: {$in: [...]}}) a batch costs FerretDB a read
 * of the whole target each time (it serves no $in from the _id index): a
 * rescan read the target once per batch. Where each result is its
 * driver's own (rm_pass_t.driver_field "_id"), the results of a range of
 * drivers are the target's documents of the same range: one cursor over
 * the target, with the filter of the drivers' cursor (after the same _id,
 * in the same partition) and in _id order, is read along with it, each
 * batch taking the documents up to its last driver's _id and keeping the
 * first one past it for the next batch.
 *
 * The merge compares _ids by rm_value_compare, MongoDB's order, which the
 * servers' sorts follow for the values below (plain); a string is plain
 * only in ASCII and where neither collection has a default collation (a
 * collation orders strings otherwise, mongo-java-server compares them by
 * UTF-16 units). A result not found by the merge is looked for by its
 * _id alone (a point read, served by the index everywhere) where its _id
 * is not plain, or where a batch's last _id or the first past it was not
 * (the cut between two batches is then not sure): what a batch finds is
 * always what the query of its _ids found. Passes whose results have
 * _ids of their own (an extract's children, a bucketize's buckets) keep
 * that query: their target's order is not their drivers'. */
#include <math.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"
#include "remodel/value.h"

typedef struct online_merge {
    online_cursor_t *cur;
    bson_t *held;   /* the first document past the last batch's end */
    bool done;      /* the cursor ran out */
    bool strings;   /* ASCII strings are plain _ids (no collation) */
    bool doubt;     /* a cut was not sure: what the merge misses is looked for */
    /* A sync's orphans (online_orphans_t): the cursor began at its range's
     * start; an _id not plain was met (its driver may sort elsewhere). */
    bool from_start, unsure;
} online_merge_t;

/* Whether both servers sort id as rm_value_compare does. */
static bool
plain (const bson_iter_t *id, bool strings)
{
    switch (bson_iter_type (id)) {
    case BSON_TYPE_INT32:
    case BSON_TYPE_OID:
    case BSON_TYPE_BOOL:
    case BSON_TYPE_DATE_TIME:
        return true;
    case BSON_TYPE_INT64: /* within a double's exact integers */
        return bson_iter_int64 (id) > -(1LL << 53) && bson_iter_int64 (id) < (1LL << 53);
    case BSON_TYPE_DOUBLE:
        return !isnan (bson_iter_double (id));
    case BSON_TYPE_UTF8: {
        uint32_t n;
        const char *s = bson_iter_utf8 (id, &n);
        for (uint32_t i = 0; strings && i < n; i++)
            if ((unsigned char) s[i] >= 0x80 || !s[i])
                return false;
        return strings;
    }
    default:
        return false;
    }
}

bool
online_merge_fits (const online_job_t *j, size_t k, const online_docs_t *in)
{
    bson_iter_t id;
    return in && in->n && !j->p->series && k < 4 && j->p->driver_field[k] &&
           !strcmp (j->p->driver_field[k], "_id") &&
           rm_doc_field (online_doc_bytes (in, in->n - 1), in->docs[in->n - 1].len, "_id", 3, &id);
}

/* The filter of the drivers' cursor (online_batch_read), here where the
 * target's read beside it takes it too. */
bool
online_batch_range_filter (const online_job_t *j, const bson_t *last, bson_t *filter,
                           bson_error_t *err)
{
    bson_t after = BSON_INITIALIZER, range = BSON_INITIALIZER;
    bson_iter_t lit;
    bson_init (filter);
    if (bson_iter_init_find (&lit, last, "last") && !online_range_after (&lit, &after)) {
        bson_destroy (&after);
        bson_destroy (&range);
        rm_error_set (err, RM_ERR_DATA, "%s: the checkpoint's _id makes too large a query",
                      j->on->run->where);
        return false;
    }
    /* Within the partition's range, when it has one. */
    if (j->part && !online_partition_filter (j->part, &range, err)) {
        bson_destroy (&after);
        bson_destroy (&range);
        return false;
    }
    if (!bson_empty (&after) && !bson_empty (&range)) {
        bson_t and;
        BSON_APPEND_ARRAY_BEGIN (filter, "$and", &and);
        BSON_APPEND_DOCUMENT (&and, "0", &range);
        BSON_APPEND_DOCUMENT (&and, "1", &after);
        bson_append_array_end (filter, &and);
    } else {
        bson_concat (filter, bson_empty (&after) ? &range : &after);
    }
    bson_destroy (&after);
    bson_destroy (&range);
    return true;
}

/* Whether c has a default collation (unknown: as if it had). */
static bool
collated (online_t *on, mongoc_collection_t *c, const char *db)
{
    bson_t opts = BSON_INITIALIZER;
    bson_error_t why;
    bson_iter_t it, loc;
    bool yes = true;
    if (online_collection_options (on, c, db, &opts, &why))
        yes = bson_iter_init_find (&it, &opts, "collation") &&
              !(bson_iter_recurse (&it, &loc) && bson_iter_find (&loc, "locale") &&
                BSON_ITER_HOLDS_UTF8 (&loc) && !strcmp (bson_iter_utf8 (&loc, NULL), "simple"));
    bson_destroy (&opts);
    return yes;
}

static online_merge_t *
merge_open (online_job_t *j, size_t k, mongoc_collection_t *c, const bson_t *before,
            bson_error_t *err)
{
    online_merge_t *m;
    bson_t filter, *opts;
    if (!online_batch_range_filter (j, before, &filter, err))
        return NULL;
    m = bson_malloc0 (sizeof *m);
    m->from_start = !bson_has_field (before, "last");
    m->strings = !collated (j->on, c, j->p->keep[k]->db) &&
                 !collated (j->on, j->drive, j->in[j->p->drive]->db);
    opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}", "batchSize",
                     BCON_INT32 ((int32_t) (j->batch_size < 100000 ? j->batch_size : 100000)));
    m->cur = online_ops (j->on)->find (j->on, c, &filter, opts);
    bson_destroy (opts);
    bson_destroy (&filter);
    j->merge[k] = m;
    return m;
}

void
online_merge_close (online_job_t *j)
{
    for (size_t k = 0; k < 4; k++) {
        online_merge_t *m = j->merge[k];
        if (!m)
            continue;
        online_ops (j->on)->end (m->cur, NULL);
        if (m->held)
            bson_destroy (m->held);
        bson_free (m);
        j->merge[k] = NULL;
    }
}

static void
take (online_docs_t *found, online_fold_t *fold, const bson_t *doc, size_t k)
{
    online_docs_add (found, bson_get_data (doc), doc->len, (int) k);
    if (fold) {
        fold->docs++;
        fold->sum += rm_crc64_update (0, bson_get_data (doc), doc->len);
    }
}

/* What a batch's merge is told: its results' _ids (made) and its
 * drivers' (drivers), where the target's documents of made go (found,
 * fold, got), and, for a sync's orphans, where they are counted and
 * removed (orph NULL: not asked). */
typedef struct {
    const online_idset_t *made, *drivers;
    online_idset_t *got;
    online_docs_t *found;
    online_fold_t *fold;
    size_t k;
    const online_merge_gone_t *gone;
} upto_t;

/* A target document in the range no result of the batch is: where its
 * _id is plain and the cut sure, and no driver of the batch has it, its
 * driver is gone (the drivers' cursor gave every driver up to the cut in
 * this order): removed. Else the range is not sure, and the step's end
 * looks for the drivers again (online_check_orphans). */
static bool
orphan (online_merge_t *m, const upto_t *u, const bson_iter_t *id, uint64_t h, bson_error_t *err)
{
    if (!u->gone || online_idset_has (u->drivers, h))
        return true;
    if (m->doubt || !plain (id, m->strings)) {
        m->unsure = true;
        return true;
    }
    return u->gone->fn (u->gone->ctx, id, err);
}

/* The target's documents up to hi (all: NULL), those of made's _ids into
 * found (and got); the first past hi held. */
static bool
merge_upto (online_job_t *j, online_merge_t *m, const bson_iter_t *hi, const upto_t *u,
            bson_error_t *err)
{
    const online_ops_t *ops = online_ops (j->on);
    bson_error_t why;
    while (!m->done || m->held) {
        const bson_t *doc = m->held;
        bson_iter_t id;
        bool has_id;
        uint64_t h;
        if (!doc && !ops->next (m->cur, &doc)) {
            bool read = ops->end (m->cur, &why);
            m->cur = NULL;
            m->done = true;
            return read || online_fail (j->on, err, &why, "reading a target");
        }
        has_id = bson_iter_init_find (&id, doc, "_id");
        if (has_id && hi && rm_value_compare (&id, hi) > 0) {
            m->doubt |= !plain (&id, m->strings);
            if (!m->held)
                m->held = bson_copy (doc);
            return true;
        }
        h = online_id_hash (bson_get_data (doc), doc->len);
        if (online_idset_has (u->made, h)) {
            if (online_idset_add (u->got, h))
                take (u->found, u->fold, doc, u->k);
        } else if (has_id && !orphan (m, u, &id, h, err)) {
            return false;
        }
        if (m->held) {
            bson_destroy (m->held);
            m->held = NULL;
        }
    }
    return true;
}

/* A result the merge missed, where it may have: by its _id alone. */
static bool
point_read (online_job_t *j, mongoc_collection_t *c, const bson_iter_t *id, online_docs_t *found,
            online_fold_t *fold, size_t k, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (j->on);
    bson_t q = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("limit", BCON_INT64 (1));
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    online_id_append (&q, id);
    cur = ops->find (j->on, c, &q, opts);
    if (ops->next (cur, &doc))
        take (found, fold, doc, k);
    if (!ops->end (cur, &why))
        ok = online_fail (j->on, err, &why, "reading a target");
    bson_destroy (opts);
    bson_destroy (&q);
    return ok;
}

bool
online_merge_read (online_job_t *j, size_t k, mongoc_collection_t *c, const bson_t *before,
                   const online_docs_t *in, const online_docs_t *out, online_docs_t *found,
                   online_fold_t *fold, const online_merge_gone_t *gone, bson_error_t *err)
{
    online_merge_t *m = j->merge[k];
    online_idset_t made, got, drivers;
    upto_t u = {&made, &drivers, &got, found, fold, k, gone};
    bson_iter_t hi, id;
    bool ok;

    if (!m && !(m = merge_open (j, k, c, before, err)))
        return false;
    rm_doc_field (online_doc_bytes (in, in->n - 1), in->docs[in->n - 1].len, "_id", 3, &hi);
    m->doubt |= !plain (&hi, m->strings);
    memset (&made, 0, sizeof made);
    memset (&got, 0, sizeof got);
    memset (&drivers, 0, sizeof drivers);
    for (size_t i = 0; i < out->n; i++)
        if (out->docs[i].keep == (int) k)
            online_idset_add (&made, online_id_hash (online_doc_bytes (out, i), out->docs[i].len));
    for (size_t i = 0; gone && i < in->n; i++)
        online_idset_add (&drivers, online_id_hash (online_doc_bytes (in, i), in->docs[i].len));
    ok = merge_upto (j, m, &hi, &u, err);
    for (size_t i = 0; ok && i < out->n; i++) {
        const uint8_t *doc = online_doc_bytes (out, i);
        if (out->docs[i].keep != (int) k ||
            online_idset_has (&got, online_id_hash (doc, out->docs[i].len)) ||
            !rm_doc_field (doc, out->docs[i].len, "_id", 3, &id) ||
            (!m->doubt && plain (&id, m->strings)))
            continue;
        ok = point_read (j, c, &id, found, fold, k, err);
    }
    online_idset_destroy (&made);
    online_idset_destroy (&got);
    online_idset_destroy (&drivers);
    return ok;
}

bool
online_merge_rest (online_job_t *j, size_t k, online_orphans_t *orph,
                   const online_merge_gone_t *gone, bson_error_t *err)
{
    online_merge_t *m = j->merge[k];
    online_idset_t none;
    upto_t u = {&none, &none, &none, NULL, NULL, k, gone};
    bool ok = true, sure;

    memset (&none, 0, sizeof none);
    __atomic_fetch_add (&orph->ranges, 1, __ATOMIC_RELAXED);
    sure = m && m->from_start && j->ended;
    /* The rest of the target past the last driver: no driver makes any
     * of it. */
    if (sure && !m->doubt && !m->unsure)
        ok = merge_upto (j, m, NULL, &u, err);
    if (ok && sure && m->done && !m->doubt && !m->unsure)
        __atomic_fetch_add (&orph->whole, 1, __ATOMIC_RELAXED);
    return ok;
}
