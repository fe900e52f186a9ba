/* bucketize: time-series readings into buckets (the seeds' bucket pattern).
 *
 * One pass over `from` feeds an external sort (bounded memory) keyed by
 *   [meta key length, big-endian][meta key][window start][time][_id]
 * where the meta key is, per meta field, its canonical key (rm_key_append)
 * then its exact type and value bytes (empty without metaField: one
 * series): readings share a bucket only when
 * their meta values are the very same BSON values, so unbucketize can
 * restore every reading byte for byte (1 and 1.0 are neighbours, not one
 * bucket). Window start and time are signed milliseconds with the sign bit
 * flipped, so memcmp orders them; the _id is a tiny document {"": _id}
 * compared with rm_value_compare (MongoDB order) by a custom comparator.
 * Equal keys keep input order (the sorter is stable).
 *
 * The record's value is [scan head][reading]: the head, what scan found
 * that the bucket needs (each meta field's position, whether the reading
 * ends with a _metaPositions), so that the reading is not scanned again
 * when it comes back out.
 *
 * The sorted records then stream out: a bucket is cut when (meta, window)
 * changes or when it holds maxCount readings, so memory holds one bucket.
 *
 * The records are made in bucket_record.c (on both cores when the
 * readings are in memory); its keys in a plan are read in
 * step_bucket_parse.c. */
#include <string.h>

#include "bsonwalk.h"
#include "bucket_record.h"
#include "docbuf.h"
#include "embed_join.h"
#include "remodel/bsoncheck.h"
#include "engine_impl.h"
#include "step_class.h"
#include "remodel/accum.h"
#include "remodel/sorter.h"
#include "remodel/value.h"
#include "sortkey.h"

typedef struct {
    rm_engine_t *e;
    const rm_step_t *s;
    const rm_bucketize_t *b;
    rm_step_run_t *run; /* probes and counts for the checks after the step */
    rm_ens_t *from, *to, *bad;
    rm_sorter_t *sorter;
    rm_store_t *buckets, *invalid;
    rm_buf_t meas, first, doc, hkey;
    rm_bucket_scan_t sc;     /* a bucket's first reading, again */
    rm_bucket_record_t rec;  /* the records when made here */
    int32_t *first_pos;
    uint32_t count;     /* readings in the open bucket */
    uint32_t index;     /* the open bucket's index within its window */
    int64_t start;
    rm_buf_t group;     /* the open bucket's [meta key][window] prefix */
    rm_acc_t **sum, **avg; /* per stats field, NULL when not asked */
    rm_acc_spec_t **specs;
    bson_t stats;
    uint64_t readings;
    rm_expr_ctx_t *cx;  /* the step's filter's (one per run) */
    rm_expr_ctx_t *vcx; /* the expressions' of stats (NULL: none) */
    rm_store_t *kept;   /* without keepSource: the readings it leaves out */
} job_t;

static bool
invalid (job_t *j, const uint8_t *doc, uint32_t len, const char *why, bson_error_t *err)
{
    char *id;
    if (j->invalid) {
        j->run->invalid++;
        return rm_store_add (j->invalid, doc, len, err);
    }
    id = rm_doc_id_json (doc, len);
    rm_error_set (err, RM_ERR_FORMAT, "%s: document %s: %s", j->from->stats->name, id, why);
    bson_free (id);
    return false;
}

/* A reading to the sorter: its record (key and val), or why it is
 * invalid (key NULL). */
static bool
add_reading (job_t *j, const uint8_t *doc, uint32_t len, const uint8_t *key, size_t klen,
             const uint8_t *val, size_t vlen, const char *why, bson_error_t *err)
{
    bool take;
    for (size_t p = 0; p < j->run->n_probes; p++)
        rm_probe_doc (&j->run->probes[p], doc, len);
    /* One the step's filter leaves out is not bucketed: it stays in
     * `from` (which keeps only those, without keepSource). */
    if (!rm_step_select (j->e, j->s, false, j->cx, j->from->stats->name, doc, len, &take, err))
        return false;
    if (!take)
        return !j->kept || rm_store_add (j->kept, doc, len, err);
    j->run->readings++;
    if (!key)
        return invalid (j, doc, len, why, err);
    j->readings++;
    return rm_sorter_add (j->sorter, key, klen, val, vlen, err);
}

/* The readings' records made on the other core (bucket_record.c): a store
 * held in memory of enough readings. 1: fed; 0: not started (the caller
 * feeds them itself); -1: failed. */
static int
feed_ahead (job_t *j, bson_error_t *err)
{
    rm_bucket_ahead_t a;
    const uint8_t *mem, *doc, *key, *val;
    size_t mem_len = 0, klen, vlen;
    uint32_t len;
    const char *why;
    int rc;

    mem = rm_store_mem (j->from->store, &mem_len);
    if (!mem || !rm_bucket_ahead_worth (rm_store_count (j->from->store)) ||
        !rm_bucket_ahead_start (&a, j->b, mem, mem_len))
        return 0;
    while ((rc = rm_bucket_ahead_next (&a, &doc, &len, &key, &klen, &val, &vlen, &why)) > 0) {
        if (rm_interrupted) {
            rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
            rc = -1;
            break;
        }
        if (!add_reading (j, doc, len, key, klen, val, vlen, why, err)) {
            rc = -1;
            break;
        }
    }
    rm_bucket_ahead_stop (&a);
    return rc == 0 ? 1 : -1;
}

/* The end of a key's memcmp part: [len][meta key][window][time]. */
static size_t
prefix_len (const uint8_t *k)
{
    uint32_t m;
    memcpy (&m, k, 4);
    return 4 + BSON_UINT32_FROM_BE (m) + 16;
}

/* The sorter's rm_key_ordered_fn: key_cmp orders that part as memcmp. */
static size_t
ordered_len (const uint8_t *k, size_t klen, void *ctx)
{
    (void) klen;
    (void) ctx;
    return prefix_len (k);
}

static int
key_cmp (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, void *ctx)
{
    size_t pa = prefix_len (a), pb = prefix_len (b);
    bson_t da, db;
    bson_iter_t ia, ib;
    bool ha, hb;
    int c = rm_keycmp (a, pa, b, pb);
    (void) ctx;
    if (c)
        return c;
    ha = bson_init_static (&da, a + pa, alen - pa) && bson_iter_init (&ia, &da) && bson_iter_next (&ia);
    hb = bson_init_static (&db, b + pb, blen - pb) && bson_iter_init (&ib, &db) && bson_iter_next (&ib);
    return rm_value_compare (ha ? &ia : NULL, hb ? &ib : NULL);
}

static void
put_i32 (rm_buf_t *b, const char *key, int32_t v)
{
    uint32_t le = BSON_UINT32_TO_LE ((uint32_t) v);
    rm_docbuf_key (b, BSON_TYPE_INT32, key);
    rm_buf_append (b, &le, 4);
}

static void
put_date (rm_buf_t *b, const char *key, int64_t v)
{
    uint64_t le = BSON_UINT64_TO_LE ((uint64_t) v);
    rm_docbuf_key (b, BSON_TYPE_DATE_TIME, key);
    rm_buf_append (b, &le, 8);
}

static void
put_positions (rm_buf_t *b, const char *key, const int32_t *pos, size_t n)
{
    size_t st;
    char idx[16];
    const char *k;
    rm_docbuf_key (b, BSON_TYPE_ARRAY, key);
    st = rm_docbuf_begin (b);
    for (size_t i = 0; i < n; i++) {
        bson_uint32_to_string ((uint32_t) i, &k, idx, sizeof idx);
        put_i32 (b, k, pos[i]);
    }
    rm_docbuf_end (b, st);
}

/* The bytes of a record's value before its reading. */
static size_t
head_len (const job_t *j)
{
    return j->b->n_meta * sizeof (int32_t) + 1;
}

/* Appends the reading, less its meta fields, to the open bucket's array:
 * val is the record's value, [scan head][reading]. */
static void
add_measurement (job_t *j, const uint8_t *val, uint32_t vlen)
{
    size_t hl = head_len (j);
    const uint8_t *doc = val + hl;
    uint32_t len = vlen - (uint32_t) hl;
    const rm_bucketize_t *b = j->b;
    rm_walk_t w;
    rm_elem_t e;
    uint32_t from = 0, to = 0; /* kept bytes not copied yet: [from, to) of the reading */
    char idx[16];
    const char *k;
    size_t st;
    int32_t n = 0;
    bool differ = false;

    memcpy (j->sc.pos, val, hl - 1);
    j->sc.last_is_positions = val[hl - 1] != 0;
    if (j->count == 0) {
        rm_buf_reset (&j->first);
        rm_buf_append (&j->first, doc, len);
        memcpy (j->first_pos, j->sc.pos, b->n_meta * sizeof *j->first_pos);
    }
    for (size_t m = 0; m < b->n_meta; m++)
        differ |= j->sc.pos[m] != j->first_pos[m];
    bson_uint32_to_string (j->count, &k, idx, sizeof idx);
    rm_docbuf_key (&j->meas, BSON_TYPE_DOCUMENT, k);
    st = rm_docbuf_begin (&j->meas);
    /* A raw walk (the reading was checked when read), the fields kept
     * copied as they are: neighbours together, in one copy (a reading
     * loses its meta fields only). */
    if (rm_walk_init (&w, doc, len))
        while (rm_walk_next (&w, &e) > 0) {
            bool meta = false;
            for (size_t m = 0; m < b->n_meta && !meta; m++)
                meta = j->sc.pos[m] == n;
            n++;
            if (meta)
                continue;
            if (to != e.start) {
                if (to > from)
                    rm_buf_append (&j->meas, doc + from, to - from);
                from = e.start;
            }
            to = e.end;
        }
    if (to > from)
        rm_buf_append (&j->meas, doc + from, to - from);
    /* A measurement that would end with a field of its own named
     * _metaPositions gets ours after it, so that unbucketize removes only
     * the one bucketize added. */
    if (differ || j->sc.last_is_positions)
        put_positions (&j->meas, "_metaPositions", j->sc.pos, b->n_meta);
    rm_docbuf_end (&j->meas, st);
    j->count++;
}

/* A measurement's failure in stats' expression st: the reading's _id
 * (a measurement keeps it) and the statistics' name. */
static bool
stat_fail (job_t *j, const rm_bstat_t *st, const uint8_t *m, uint32_t mlen, bson_error_t *err)
{
    rm_error_prefix (err, "stats \"%s\"", st->field);
    return rm_doc_error (err, j->from->stats->name, "document", m, mlen);
}

/* The statistics of an expression over each measurement (st->expr): its
 * numeric results only, as for a field. Values live in j->vcx until the
 * next statistics: a bucket's worth at most. */
static bool
expr_stats (job_t *j, size_t f, const uint8_t *arr, uint32_t arr_len, bson_t *child,
            bson_error_t *err)
{
    const rm_bstat_t *st = &j->b->stats[f];
    static const char *const names[] = {"count", "min", "max", "sum", "avg"};
    bson_value_t min, max, v;
    rm_walk_t aw, mw;
    rm_elem_t el;
    int32_t count = 0;
    uint64_t seq = 0;
    bool walk;

    rm_expr_ctx_reset (j->vcx);
    walk = rm_walk_init (&aw, arr, arr_len);
    while (walk && rm_walk_next (&aw, &el) > 0) {
        bson_type_t t;
        if (!rm_walk_into (&mw, &aw, &el))
            continue;
        if (!rm_expr_eval (j->vcx, st->expr, mw.data, mw.len, &v, err))
            return stat_fail (j, st, mw.data, mw.len, err);
        if ((j->sum[f] && !rm_acc_add (j->sum[f], mw.data, mw.len, seq, err)) ||
            (j->avg[f] && !rm_acc_add (j->avg[f], mw.data, mw.len, seq, err)))
            return stat_fail (j, st, mw.data, mw.len, err);
        seq++;
        t = v.value_type;
        if (t != BSON_TYPE_INT32 && t != BSON_TYPE_INT64 && t != BSON_TYPE_DOUBLE &&
            t != BSON_TYPE_DECIMAL128)
            continue;
        if (count == 0 || rm_expr_compare (j->vcx, &v, &min) < 0)
            min = v;
        if (count == 0 || rm_expr_compare (j->vcx, &v, &max) > 0)
            max = v;
        count++;
    }
    for (size_t i = 0; i < st->n; i++) {
        const char *name = names[st->kinds[i]];
        if (st->kinds[i] == RM_BSTAT_COUNT)
            bson_append_int32 (child, name, -1, count);
        else if (count == 0)
            bson_append_null (child, name, -1); /* as a field's: null without numbers */
        else if (st->kinds[i] == RM_BSTAT_MIN)
            rm_expr_append (child, name, -1, &min);
        else if (st->kinds[i] == RM_BSTAT_MAX)
            rm_expr_append (child, name, -1, &max);
        else if (!rm_acc_finish (st->kinds[i] == RM_BSTAT_SUM ? j->sum[f] : j->avg[f], child,
                                 name, err))
            return false;
    }
    return true;
}

/* stats: {<field>: {<stat>: value, ...}} over the bucket's measurements
 * (arr: the array document), numbers only. */
static bool
build_stats (job_t *j, const uint8_t *arr, uint32_t arr_len, bson_error_t *err)
{
    const rm_bucketize_t *b = j->b;
    bson_reinit (&j->stats);
    for (size_t f = 0; f < b->n_stats; f++) {
        const rm_bstat_t *st = &b->stats[f];
        size_t flen = strlen (st->field);
        bson_t child;
        bson_iter_t min, max;
        rm_walk_t aw, mw;
        rm_elem_t el, e;
        int32_t count = 0;
        uint64_t seq = 0;
        bool walk;

        if (j->sum[f])
            rm_acc_reset (j->sum[f]);
        if (j->avg[f])
            rm_acc_reset (j->avg[f]);
        if (st->expr) {
            bson_append_document_begin (&j->stats, st->field, -1, &child);
            if (!expr_stats (j, f, arr, arr_len, &child, err))
                return false;
            bson_append_document_end (&j->stats, &child);
            continue;
        }
        /* Raw walks of the array (built here) and of each measurement, the
         * field found by its name's length first; an iterator only for
         * the field found. */
        walk = rm_walk_init (&aw, arr, arr_len);
        while (walk && rm_walk_next (&aw, &el) > 0) {
            const uint8_t *m;
            uint32_t mlen;
            bson_iter_t v;
            bool found = false;
            if (!rm_walk_into (&mw, &aw, &el))
                continue;
            m = mw.data;
            mlen = mw.len;
            while (!found && rm_walk_next (&mw, &e) > 0)
                found = rm_elem_key_is (&mw, &e, st->field, flen);
            if (!found ||
                !bson_iter_init_from_data_at_offset (&v, m, mlen, e.start, (uint32_t) flen) ||
                !rm_iter_is_number (&v))
                continue;
            if (count == 0 || rm_value_compare (&v, &min) < 0)
                min = v;
            if (count == 0 || rm_value_compare (&v, &max) > 0)
                max = v;
            count++;
            if ((j->sum[f] && !rm_acc_add (j->sum[f], m, mlen, seq, err)) ||
                (j->avg[f] && !rm_acc_add (j->avg[f], m, mlen, seq, err)))
                return false;
            seq++;
        }
        bson_append_document_begin (&j->stats, st->field, -1, &child);
        for (size_t i = 0; i < st->n; i++) {
            static const char *const names[] = {"count", "min", "max", "sum", "avg"};
            const char *name = names[st->kinds[i]];
            if (st->kinds[i] == RM_BSTAT_COUNT)
                bson_append_int32 (&child, name, -1, count);
            else if (count == 0)
                bson_append_null (&child, name, -1);
            else if (st->kinds[i] == RM_BSTAT_MIN)
                bson_append_iter (&child, name, -1, &min);
            else if (st->kinds[i] == RM_BSTAT_MAX)
                bson_append_iter (&child, name, -1, &max);
            else if (!rm_acc_finish (st->kinds[i] == RM_BSTAT_SUM ? j->sum[f] : j->avg[f], &child,
                                     name, err))
                return false;
        }
        bson_append_document_end (&j->stats, &child);
    }
    return true;
}

static bool
flush (job_t *j, bson_error_t *err)
{
    const rm_bucketize_t *b = j->b;
    uint8_t oid[12], be[12];
    uint64_t h;
    uint32_t secs, mlen;
    size_t st, arr;
    int64_t start, end;
    char why[300];

    if (j->count == 0)
        return true;
    /* _id: the window start in seconds (0 before 1970), then a hash of
     * (meta key, window start, index within the window). */
    memcpy (&mlen, j->group.data, 4);
    mlen = BSON_UINT32_FROM_BE (mlen);
    rm_buf_reset (&j->hkey);
    rm_buf_append (&j->hkey, j->group.data + 4, mlen);
    rm_put_be64 (be, (uint64_t) j->start);
    be[8] = (uint8_t) (j->index >> 24);
    be[9] = (uint8_t) (j->index >> 16);
    be[10] = (uint8_t) (j->index >> 8);
    be[11] = (uint8_t) j->index;
    rm_buf_append (&j->hkey, be, 12);
    h = rm_key_hash (j->hkey.data, j->hkey.len);
    secs = j->start < 0 ? 0 : j->start / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t) (j->start / 1000);
    oid[0] = (uint8_t) (secs >> 24);
    oid[1] = (uint8_t) (secs >> 16);
    oid[2] = (uint8_t) (secs >> 8);
    oid[3] = (uint8_t) secs;
    for (int i = 0; i < 8; i++)
        oid[4 + i] = (uint8_t) (h >> (56 - 8 * i));

    rm_buf_reset (&j->doc);
    st = rm_docbuf_begin (&j->doc);
    rm_docbuf_key (&j->doc, BSON_TYPE_OID, "_id");
    rm_buf_append (&j->doc, oid, 12);
    rm_bucket_scan (&j->sc, b, j->first.data, (uint32_t) j->first.len);
    for (size_t m = 0; m < b->n_meta; m++)
        rm_docbuf_copy (&j->doc, &j->sc.meta[m].it);
    /* Its readings' windows were made, ends checked, as they were read:
     * the window of its start is the same one, found again for its end. */
    if (!rm_bucket_window (b, j->start, &start, &end, why, sizeof why)) {
        rm_error_set (err, RM_ERR_DATA, "%s: the bucket at %lld: %s", j->to->stats->name,
                      (long long) j->start, why);
        return false;
    }
    put_date (&j->doc, "start", j->start);
    put_date (&j->doc, "end", end);
    put_i32 (&j->doc, "count", (int32_t) j->count);
    put_positions (&j->doc, "metaPositions", j->first_pos, b->n_meta);
    rm_docbuf_key (&j->doc, BSON_TYPE_ARRAY, b->as);
    arr = rm_docbuf_begin (&j->doc);
    rm_buf_append (&j->doc, j->meas.data, j->meas.len);
    rm_docbuf_end (&j->doc, arr);
    if (b->n_stats) {
        if (!build_stats (j, j->doc.data + arr, (uint32_t) (j->doc.len - arr), err))
            return false;
        rm_docbuf_key (&j->doc, BSON_TYPE_DOCUMENT, "stats");
        rm_buf_append (&j->doc, bson_get_data (&j->stats), j->stats.len);
    }
    rm_docbuf_end (&j->doc, st);
    /* Its readings nest a level below the array. */
    if (rm_engine_too_deep (NULL, 0, j->doc.data + st, j->doc.len - st, err)) {
        char *id = rm_doc_id_json (j->first.data, (uint32_t) j->first.len);
        rm_error_prefix (err, "%s: the bucket of the reading %s", j->to->stats->name, id);
        bson_free (id);
        return false;
    }
    j->to->stats->extracted += j->count;
    j->count = 0;
    rm_buf_reset (&j->meas);
    return rm_store_add (j->buckets, j->doc.data + st, (uint32_t) (j->doc.len - st), err);
}

static bool
feed (job_t *j, bson_error_t *err)
{
    rm_instream_t *in;
    rm_frame_t f;
    int rc = feed_ahead (j, err);

    if (rc != 0)
        return rc > 0 && rm_sorter_finish (j->sorter, err);
    if (!(in = rm_store_open (j->from->store, err)))
        return false;
    while ((rc = rm_store_next (in, &f, err)) > 0) {
        bool made = rm_bucket_record_make (&j->rec, j->b, f.data, f.len);
        if (!add_reading (j, f.data, f.len, made ? j->rec.key.data : NULL, j->rec.key.len,
                          j->rec.val.data, j->rec.val.len, j->rec.why, err)) {
            rc = -1;
            break;
        }
    }
    rm_instream_close (in);
    return rc == 0 && rm_sorter_finish (j->sorter, err);
}

/* What a bucket holds besides its measurements, at most: _id, start, end,
 * count, metaPositions and the array's key, the meta fields (no larger
 * than the first reading) and the stats (each a number of 16 bytes or
 * less under a short key). */
static size_t
bucket_room (const rm_bucketize_t *b, size_t first_len)
{
    size_t n = 256 + strlen (b->as) + first_len + b->n_meta * 16;
    for (size_t i = 0; i < b->n_stats; i++)
        n += 16 + strlen (b->stats[i].field) + b->stats[i].n * (8 + 16);
    return n;
}

/* Whether a measurement of len bytes still fits in the open bucket under
 * the 16 MiB document limit (its key and the _metaPositions it may carry
 * included). */
static bool
fits (const job_t *j, size_t len)
{
    size_t add = 16 + len + 32 + j->b->n_meta * 8;
    return j->meas.len + add + bucket_room (j->b, j->first.len) <= RM_BSON_MAX_SIZE;
}

static bool
drain (job_t *j, bson_error_t *err)
{
    const uint8_t *k, *v;
    size_t kl, vl;
    int rc;
    while ((rc = rm_sorter_next (j->sorter, &k, &kl, &v, &vl, err)) > 0) {
        size_t gl = prefix_len (k) - 8; /* [len][meta key][window] */
        bool same = j->count && j->group.len == gl && !memcmp (j->group.data, k, gl);
        /* A full window continues in further buckets: past maxCount, or
         * when the next reading would take the bucket over 16 MiB. */
        if (!same || j->count == (uint64_t) j->b->max_count || !fits (j, vl - head_len (j))) {
            if (!flush (j, err))
                return false;
            if (same) {
                j->index++;
            } else {
                rm_buf_reset (&j->group);
                rm_buf_append (&j->group, k, gl);
                j->start = (int64_t) (rm_get_be64 (k + gl - 8) ^ RM_BUCKET_SIGN_FLIP);
                j->index = 0;
            }
        }
        add_measurement (j, v, (uint32_t) vl);
    }
    return rc == 0 && flush (j, err);
}

bool
rm_step_bucketize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_bucketize_t *b = &s->u.bucketize;
    job_t j;
    bool ok = true;

    memset (&j, 0, sizeof j);
    j.e = e;
    j.s = s;
    j.b = b;
    if (s->filter)
        j.cx = rm_expr_ctx_new (rm_engine_now (e));
    for (size_t f = 0; f < b->n_stats && !j.vcx; f++)
        if (b->stats[f].expr)
            j.vcx = rm_expr_ctx_new (rm_engine_now (e));
    j.run = rm_engine_step_run (e, s);
    j.from = rm_engine_find (e, &b->from);
    j.to = rm_engine_find (e, &b->to);
    j.bad = b->invalid_to.text ? rm_engine_find (e, &b->invalid_to) : NULL;
    rm_buf_init (&j.meas);
    rm_buf_init (&j.first);
    rm_buf_init (&j.doc);
    rm_buf_init (&j.hkey);
    rm_buf_init (&j.group);
    bson_init (&j.stats);
    rm_bucket_scan_init (&j.sc, b);
    rm_bucket_record_init (&j.rec, b);
    j.first_pos = bson_malloc0 ((b->n_meta + 1) * sizeof *j.first_pos); /* none: one series */
    j.sum = bson_malloc0 ((b->n_stats + 1) * sizeof *j.sum);
    j.avg = bson_malloc0 ((b->n_stats + 1) * sizeof *j.avg);
    j.specs = bson_malloc0 ((2 * b->n_stats + 1) * sizeof *j.specs);
    /* $sum and $avg as $group computes them, over "$<field>". */
    for (size_t f = 0; ok && f < b->n_stats; f++)
        for (size_t i = 0; ok && i < b->stats[f].n; i++) {
            rm_bstat_kind_t k = b->stats[f].kinds[i];
            bson_t spec, acc;
            bson_iter_t it, ex;
            char *path;
            if (k != RM_BSTAT_SUM && k != RM_BSTAT_AVG)
                continue;
            path = bson_strdup_printf ("$%s", b->stats[f].field);
            bson_init (&spec);
            bson_append_document_begin (&spec, "a", 1, &acc);
            /* an expression's statistics: $sum/$avg of it */
            if (b->stats[f].expr && bson_iter_init_find (&ex, b->stats[f].expr_doc, "e"))
                bson_append_iter (&acc, k == RM_BSTAT_SUM ? "$sum" : "$avg", 4, &ex);
            else
                bson_append_utf8 (&acc, k == RM_BSTAT_SUM ? "$sum" : "$avg", 4, path, -1);
            bson_append_document_end (&spec, &acc);
            bson_iter_init_find (&it, &spec, "a");
            j.specs[2 * f + (k == RM_BSTAT_AVG)] = rm_acc_spec_parse (&it, err);
            ok = j.specs[2 * f + (k == RM_BSTAT_AVG)] != NULL;
            if (ok && k == RM_BSTAT_SUM)
                j.sum[f] = rm_acc_new (j.specs[2 * f]);
            else if (ok)
                j.avg[f] = rm_acc_new (j.specs[2 * f + 1]);
            bson_destroy (&spec);
            bson_free (path);
        }

    if (ok && (j.sorter = rm_sorter_new (rm_engine_sort_budget (e), e->opts.tmpdir, key_cmp, NULL)))
        rm_sorter_set_ordered (j.sorter, ordered_len);
    if (ok)
        ok = j.sorter &&
             (j.buckets = rm_engine_store_new (e, j.to, err)) &&
             (!j.bad || (j.invalid = rm_engine_store_new (e, j.bad, err)));
    /* Without keepSource, `from` keeps only the readings the filter
     * leaves out (none without one). */
    if (ok && !b->keep_source)
        ok = (j.kept = rm_engine_store_new (e, j.from, err)) != NULL;
    ok = ok && feed (&j, err) && drain (&j, err);
    if (ok && j.sorter && rm_sorter_spilled_runs (j.sorter))
        e->spilled = true;
    if (ok && !b->keep_source) {
        /* Every reading left `from` (bucketized, or moved to onInvalid's
         * namespace) but those the filter left out. */
        ok = rm_engine_store_swap (j.from, j.kept, err);
        j.kept = NULL;
    }
    if (ok && j.invalid) {
        ok = rm_engine_store_swap (j.bad, j.invalid, err);
        j.invalid = NULL;
    }
    if (ok) {
        ok = rm_engine_store_swap (j.to, j.buckets, err);
        j.buckets = NULL;
    }
    rm_store_destroy (j.buckets);
    rm_store_destroy (j.invalid);
    rm_store_destroy (j.kept);
    rm_expr_ctx_destroy (j.cx);
    rm_expr_ctx_destroy (j.vcx);
    if (j.sorter)
        rm_sorter_destroy (j.sorter);
    for (size_t f = 0; f < b->n_stats; f++) {
        if (j.sum[f])
            rm_acc_destroy (j.sum[f]);
        if (j.avg[f])
            rm_acc_destroy (j.avg[f]);
        if (j.specs[2 * f])
            rm_acc_spec_destroy (j.specs[2 * f]);
        if (j.specs[2 * f + 1])
            rm_acc_spec_destroy (j.specs[2 * f + 1]);
    }
    bson_free (j.sum);
    bson_free (j.avg);
    bson_free (j.specs);
    rm_bucket_scan_destroy (&j.sc);
    rm_bucket_record_destroy (&j.rec);
    bson_free (j.first_pos);
    bson_destroy (&j.stats);
    rm_buf_destroy (&j.meas);
    rm_buf_destroy (&j.first);
    rm_buf_destroy (&j.doc);
    rm_buf_destroy (&j.hkey);
    rm_buf_destroy (&j.group);
    return ok;
}

/* The variant for bucketize's buckets: one compound index on the meta
 * fields and the window start, the time-series query's shape. */
static char *
bucket_metadata (const char *coll, const rm_bucketize_t *b)
{
    char *key = bson_strdup (""), *name = bson_strdup (""), *out, *t;
    for (size_t i = 0; i <= b->n_meta; i++) {
        const char *f = i < b->n_meta ? b->meta[i] : "start";
        t = bson_strdup_printf ("%s%s\"%s\":{\"$numberInt\":\"1\"}", key, i ? "," : "", f);
        bson_free (key);
        key = t;
        t = bson_strdup_printf ("%s%s%s_1", name, i ? "_" : "", f);
        bson_free (name);
        name = t;
    }
    out = bson_strdup_printf (
        "{\"indexes\":[{\"v\":{\"$numberInt\":\"2\"},\"key\":{\"_id\":{\"$numberInt\":\"1\"}},"
        "\"name\":\"_id_\"},{\"v\":{\"$numberInt\":\"2\"},\"key\":{%s},\"name\":\"%s\"}],"
        "\"collectionName\":\"%s\",\"type\":\"collection\"}", key, name, coll);
    bson_free (key);
    bson_free (name);
    return out;
}

void
rm_bucketize_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in)
{
    const rm_bucketize_t *b = &s->u.bucketize;
    rm_engine_add_created_meta (out, in, &b->to, bucket_metadata (b->to.coll, b));
    if (b->invalid_to.text)
        rm_engine_add_created (out, in, &b->invalid_to, NULL);
}

/* The checks once it has run (engine_checks.c): the fields it reads, and a
 * warning when most readings went to onInvalid (a misread timeField). */
void
rm_bucketize_probes (const rm_step_t *s, rm_step_run_t *run)
{
    const rm_bucketize_t *b = &s->u.bucketize;
    rm_engine_add_probe (run, "timeField", b->time_field, &b->from);
    for (size_t i = 0; i < b->n_meta; i++)
        rm_engine_add_probe (run, "metaField", b->meta[i], &b->from);
    for (size_t i = 0; i < b->n_stats; i++)
        if (!b->stats[i].expr)
            rm_engine_add_probe (run, "stats", b->stats[i].field, &b->from);
}

bool
rm_bucketize_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                    bson_error_t *err)
{
    const rm_bucketize_t *b = &s->u.bucketize;
    (void) err;
    rm_engine_find (e, &b->from)->stats->invalid += run->invalid;
    if (run->invalid * 2 > run->readings)
        rm_engine_warn (e, s, "%llu of the %llu readings of %s went to onInvalid (%s): check "
                        "timeField \"%s\"%s", (unsigned long long) run->invalid,
                        (unsigned long long) run->readings, b->from.text,
                        b->invalid_to.text ? b->invalid_to.text : "error", b->time_field,
                        b->n_meta ? " and metaField" : "");
    return true;
}

/* Online (remodel/passes.h): a bucket needs every reading of its series
 * in one batch: the readings are read series by series of the
 * metaField. Without one the series is the whole collection: one batch
 * of it all, and a change would read it all again to recompute its
 * series (the follower recomputes series, not windows). */
size_t
rm_bucketize_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_bucketize_t *b = &s->u.bucketize;
    if (b->n_meta == 0)
        return rm_pass_refuse (s, err, "bucketize without metaField runs offline only (the "
                                       "online mode reads and recomputes the readings series "
                                       "by series: here one series, the whole collection, "
                                       "read again for each change)");
    if (b->n_meta != 1)
        return rm_pass_refuse (s, err, "bucketize by several metaFields runs offline only (the "
                                       "online mode reads the readings series by series of one "
                                       "field)");
    out[0].series = b->meta[0];
    out[0].keep[out[0].n_keep++] = &b->to;
    if (b->invalid_to.text)
        out[0].keep[out[0].n_keep++] = &b->invalid_to;
    /* The readings a filter leaves out stay in `from`, each its own. */
    if (s->filter && !b->keep_source) {
        out[0].keep[out[0].n_keep] = &b->from;
        out[0].driver_field[out[0].n_keep++] = "_id";
    }
    /* A bucket holds its series' value at its top, under the metaField's
     * name (a plain field: the plan refuses a dotted one), and its
     * readings, each with its _id, under `as`. */
    out[0].held_in = b->as;
    out[0].followed = true;
    return 1;
}

/* Its inverse (remodel/plan.h): unbucketize gives every reading back byte
 * for byte (docs/plans.md). Stats, the window and maxCount are left out
 * of it: unbucketize would check them against buckets the application has
 * changed since. */
void
rm_bucketize_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    const rm_bucketize_t *k = &s->u.bucketize;
    bson_t steps, st, u, meta;
    if (s->filter) {
        out->why = "a filter leaves readings beside the buckets: no inverse tells them apart";
        return;
    }
    if (k->keep_source) {
        out->why = "keepSource leaves the readings in both designs: no inverse tells which to "
                   "carry";
        return;
    }
    if (k->invalid_to.text) {
        out->why = "its inverse is carried without onInvalid's namespace only";
        return;
    }
    out->plan = bson_new ();
    BSON_APPEND_INT32 (out->plan, "remodel", 1);
    BSON_APPEND_ARRAY_BEGIN (out->plan, "steps", &steps);
    BSON_APPEND_DOCUMENT_BEGIN (&steps, "0", &st);
    BSON_APPEND_DOCUMENT_BEGIN (&st, "unbucketize", &u);
    BSON_APPEND_UTF8 (&u, "from", k->to.text);
    BSON_APPEND_UTF8 (&u, "to", k->from.text);
    BSON_APPEND_UTF8 (&u, "timeField", k->time_field);
    if (k->n_meta) { /* none: one series, and so is unbucketize's */
        BSON_APPEND_ARRAY_BEGIN (&u, "metaField", &meta);
        for (size_t i = 0; i < k->n_meta; i++) {
            char key[16];
            const char *kp;
            bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
            BSON_APPEND_UTF8 (&meta, kp, k->meta[i]);
        }
        bson_append_array_end (&u, &meta);
    }
    BSON_APPEND_UTF8 (&u, "as", k->as);
    BSON_APPEND_BOOL (&u, "keepSource", false);
    bson_append_document_end (&st, &u);
    bson_append_document_end (&steps, &st);
    bson_append_array_end (out->plan, &steps);
}
