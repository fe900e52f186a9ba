/* A reading's sort record for bucketize (bucket_record.h; the layout is
 * step_bucket.c's): one scan of its top-level fields, then its key
 * [meta key length][meta key][window start][time][{"": _id}] and its value
 * [scan head][reading].
 *
 * Why two cores: the step made each record and added it to the sorter on
 * one core while the other sat idle (a quarter of bucketize's wall after
 * the input pass, BENCHMARKS.md "Issue 39, ninth pass"). When the
 * readings are held in memory, a thread makes every other run's records
 * into blocks and the step makes the runs between, taking both in the
 * store's order: the sorter sees the same records in the same order, so
 * the buckets, the set-aside readings and the first error are the same
 * bytes as when one thread makes them all. */
#include <string.h>

#include "bsonwalk.h"
#include "bucket_record.h"
#include "docbuf.h"
#include "sortkey.h"
#include "thread.h"

void
rm_bucket_scan_init (rm_bucket_scan_t *s, const rm_bucketize_t *b)
{
    memset (s, 0, sizeof *s);
    /* One more than the meta fields: without a metaField (one series)
     * they are still real arrays, for memcpy's sake. */
    s->meta = bson_aligned_alloc0 (BSON_ALIGNOF (rm_bucket_slot_t),
                                   (b->n_meta + 1) * sizeof (rm_bucket_slot_t));
    s->has_meta = bson_malloc0 ((b->n_meta + 1) * sizeof *s->has_meta);
    s->pos = bson_malloc0 ((b->n_meta + 1) * sizeof *s->pos);
    s->meta_len = bson_malloc0 ((b->n_meta + 1) * sizeof *s->meta_len);
    for (size_t m = 0; m < b->n_meta; m++)
        s->meta_len[m] = (uint32_t) strlen (b->meta[m]);
    s->time_len = (uint32_t) strlen (b->time_field);
}

void
rm_bucket_scan_destroy (rm_bucket_scan_t *s)
{
    bson_free (s->meta);
    bson_free (s->has_meta);
    bson_free (s->pos);
    bson_free (s->meta_len);
}

/* An iterator on the element e of doc (libbson's, for the key and copy
 * functions that take one). */
static void
iter_at (bson_iter_t *it, const uint8_t *doc, uint32_t len, const rm_elem_t *e)
{
    bson_iter_init_from_data_at_offset (it, doc, len, e->start, rm_elem_key_len (e));
}

/* By a raw walk (bsonwalk.h): libbson's iterator decoding every field
 * was half the records' cost; only the fields found get an iterator. */
void
rm_bucket_scan (rm_bucket_scan_t *s, const rm_bucketize_t *b, const uint8_t *doc, uint32_t len)
{
    rm_walk_t w;
    rm_elem_t e;
    int32_t idx = 0;

    s->has_time = s->has_id = s->last_is_positions = false;
    for (size_t m = 0; m < b->n_meta; m++) /* one or two: no call to memset */
        s->has_meta[m] = false;
    if (!rm_walk_init (&w, doc, len))
        return;
    while (rm_walk_next (&w, &e) > 0) {
        const char *k = rm_elem_key (&w, &e);
        uint32_t kl = rm_elem_key_len (&e);
        bool meta = false;
        for (size_t m = 0; m < b->n_meta; m++)
            if (!s->has_meta[m] && kl == s->meta_len[m] && !memcmp (k, b->meta[m], kl)) {
                iter_at (&s->meta[m].it, doc, len, &e);
                s->has_meta[m] = true;
                s->pos[m] = idx;
                meta = true;
                break;
            }
        if (!meta && !s->has_time && kl == s->time_len && !memcmp (k, b->time_field, kl)) {
            iter_at (&s->time, doc, len, &e);
            s->has_time = true;
        }
        if (!s->has_id && kl == 3 && !memcmp (k, "_id", 3)) {
            iter_at (&s->id, doc, len, &e);
            s->has_id = true;
        }
        /* The measurement's last field: the reading's last non-meta one. */
        if (!meta)
            s->last_is_positions = kl == 14 && !memcmp (k, "_metaPositions", 14);
        idx++;
    }
}

/* floor(t / span) * span and its end, or false when out of int64's range. */
static bool
window_of (int64_t t, int64_t span_ms, int64_t *start, int64_t *end)
{
    int64_t q = t / span_ms;
    if (t % span_ms < 0)
        q--;
    return !__builtin_mul_overflow (q, span_ms, start) &&
           !__builtin_add_overflow (*start, span_ms, end);
}

bool
rm_bucket_window (const rm_bucketize_t *b, int64_t t, int64_t *start, int64_t *end, char *why,
                  size_t cap)
{
    int64_t e;
    bson_error_t err;
    /* The end is checked too: a bucket's end must be a date. */
    if (!end)
        end = &e;
    if (!b->calendar) {
        if (window_of (t, b->span * 1000, start, end))
            return true;
        snprintf (why, cap, "the time's window is outside the dates BSON can hold");
        return false;
    }
    if (rm_dt_bin (&b->bins, t, start, end, &err))
        return true;
    snprintf (why, cap, "the time's window (unit %s): %s", rm_dt_unit_name (b->bins.unit),
              err.message);
    return false;
}

void
rm_bucket_record_init (rm_bucket_record_t *r, const rm_bucketize_t *b)
{
    rm_bucket_scan_init (&r->sc, b);
    rm_buf_init (&r->mkey);
    rm_buf_init (&r->key);
    rm_buf_init (&r->val);
    r->why[0] = '\0';
}

void
rm_bucket_record_destroy (rm_bucket_record_t *r)
{
    rm_bucket_scan_destroy (&r->sc);
    rm_buf_destroy (&r->mkey);
    rm_buf_destroy (&r->key);
    rm_buf_destroy (&r->val);
}

bool
rm_bucket_record_make (rm_bucket_record_t *r, const rm_bucketize_t *b, const uint8_t *doc,
                       uint32_t len)
{
    rm_bucket_scan_t *sc = &r->sc;
    int64_t t, start;
    uint8_t be[16];
    uint32_t mlen;
    size_t st;

    rm_bucket_scan (sc, b, doc, len);
    for (size_t m = 0; m < b->n_meta; m++)
        if (!sc->has_meta[m]) {
            snprintf (r->why, sizeof r->why, "the meta field \"%s\" is missing", b->meta[m]);
            return false;
        }
    if (!sc->has_time) {
        snprintf (r->why, sizeof r->why, "the time field \"%s\" is missing", b->time_field);
        return false;
    }
    if (!BSON_ITER_HOLDS_DATE_TIME (&sc->time)) {
        snprintf (r->why, sizeof r->why, "the time field \"%s\" is not a date", b->time_field);
        return false;
    }
    t = bson_iter_date_time (&sc->time);
    if (!rm_bucket_window (b, t, &start, NULL, r->why, sizeof r->why))
        return false;

    rm_buf_reset (&r->mkey);
    for (size_t m = 0; m < b->n_meta; m++) {
        uint32_t vlen;
        const uint8_t *v = rm_iter_value_bytes (&sc->meta[m].it, &vlen);
        uint8_t type = (uint8_t) bson_iter_type (&sc->meta[m].it);
        rm_key_append (&r->mkey, &sc->meta[m].it);
        rm_buf_append (&r->mkey, &type, 1);
        rm_buf_append (&r->mkey, v, vlen);
    }
    rm_buf_reset (&r->key);
    mlen = BSON_UINT32_TO_BE ((uint32_t) r->mkey.len);
    rm_buf_append (&r->key, &mlen, 4);
    rm_buf_append (&r->key, r->mkey.data, r->mkey.len);
    rm_put_be64 (be, (uint64_t) start ^ RM_BUCKET_SIGN_FLIP);
    rm_put_be64 (be + 8, (uint64_t) t ^ RM_BUCKET_SIGN_FLIP);
    rm_buf_append (&r->key, be, 16);
    st = rm_docbuf_begin (&r->key);
    if (sc->has_id)
        rm_docbuf_copy_as (&r->key, "", &sc->id);
    rm_docbuf_end (&r->key, st);
    rm_buf_reset (&r->val);
    rm_buf_append (&r->val, sc->pos, b->n_meta * sizeof *sc->pos);
    rm_buf_append (&r->val, &sc->last_is_positions, 1);
    rm_buf_append (&r->val, doc, len);
    return true;
}

/* ---- two cores ---- */

/* The store is cut into runs of BLOCK_READINGS readings; the thread makes
 * the records of every other run (the first, the third, ...) into a
 * block, the step's thread those of the runs between as it reaches them,
 * so each core makes about half. A thread's block also stops at
 * BLOCK_BYTES of entries; the run after it starts where it stopped. The
 * blocks hold at most four times BLOCK_BYTES and a reading beside the
 * store, itself in memory only within --memory. */
#define BLOCK_READINGS 512
#define BLOCK_BYTES ((size_t) 1 << 20)
/* Below this many readings the thread is not worth starting. */
#define AHEAD_MIN 1024
/* An entry's klen for a reading that is invalid: its value is why. */
#define INVALID UINT32_MAX

bool
rm_bucket_ahead_worth (uint64_t n)
{
    return n >= AHEAD_MIN;
}

static void
put_u32 (rm_buf_t *b, uint32_t v)
{
    rm_buf_append (b, &v, 4);
}

/* One block's entries from the thread's place in the store. */
static void
fill (rm_bucket_ahead_t *a, rm_buf_t *out)
{
    rm_buf_reset (out);
    for (int n = 0; n < BLOCK_READINGS && a->made_to < a->mem_len && out->len < BLOCK_BYTES; n++) {
        const uint8_t *doc = a->mem + a->made_to;
        uint32_t len = rm_walk_le32 (doc);
        put_u32 (out, (uint32_t) a->made_to);
        if (rm_bucket_record_make (&a->rec, a->b, doc, len)) {
            put_u32 (out, (uint32_t) a->rec.key.len);
            put_u32 (out, (uint32_t) a->rec.val.len);
            rm_buf_append (out, a->rec.key.data, a->rec.key.len);
            rm_buf_append (out, a->rec.val.data, a->rec.val.len);
        } else {
            size_t wl = strlen (a->rec.why) + 1;
            put_u32 (out, INVALID);
            put_u32 (out, (uint32_t) wl);
            rm_buf_append (out, a->rec.why, wl);
        }
        a->made_to += len;
    }
}

static void *
ahead_main (void *arg)
{
    rm_bucket_ahead_t *a = arg;
    for (int i = 0; a->made_to < a->mem_len; i = (i + 1) % RM_BUCKET_AHEAD_BLOCKS) {
        bool stop;
        pthread_mutex_lock (&a->mu);
        while (a->block[i].full && !a->stop)
            pthread_cond_wait (&a->cv, &a->mu);
        stop = a->stop;
        pthread_mutex_unlock (&a->mu);
        if (stop)
            return NULL;
        /* The block is the thread's until it is marked full. */
        fill (a, &a->block[i].data);
        pthread_mutex_lock (&a->mu);
        a->block[i].full = true;
        a->block[i].end = a->made_to;
        pthread_cond_broadcast (&a->cv);
        pthread_mutex_unlock (&a->mu);
        /* Past the run the step's thread makes. */
        for (int n = 0; n < BLOCK_READINGS && a->made_to < a->mem_len; n++)
            a->made_to += rm_walk_le32 (a->mem + a->made_to);
    }
    return NULL;
}

bool
rm_bucket_ahead_start (rm_bucket_ahead_t *a, const rm_bucketize_t *b, const uint8_t *mem,
                       size_t mem_len)
{
    memset (a, 0, sizeof *a);
    /* Offsets are kept in 32 bits: a larger store makes its records on
     * the step's thread. */
    if (mem_len == 0 || mem_len > UINT32_MAX)
        return false;
    a->b = b;
    a->mem = mem;
    a->mem_len = mem_len;
    rm_bucket_record_init (&a->rec, b);
    rm_bucket_record_init (&a->own, b);
    for (int i = 0; i < RM_BUCKET_AHEAD_BLOCKS; i++)
        rm_buf_init (&a->block[i].data);
    pthread_mutex_init (&a->mu, NULL);
    pthread_cond_init (&a->cv, NULL);
    a->started = rm_thread_start (&a->thread, ahead_main, a) == 0;
    if (!a->started)
        rm_bucket_ahead_stop (a);
    return a->started;
}

int
rm_bucket_ahead_next (rm_bucket_ahead_t *a, const uint8_t **doc, uint32_t *len,
                      const uint8_t **key, size_t *klen, const uint8_t **val, size_t *vlen,
                      const char **why)
{
    const uint8_t *p;
    uint32_t off, kl, vl;

    for (;;) {
        if (a->own_left > 0 && a->own_at < a->mem_len) {
            /* A reading of the step's own run. */
            *doc = a->mem + a->own_at;
            *len = rm_walk_le32 (*doc);
            a->own_at += *len;
            a->own_left--;
            if (rm_bucket_record_make (&a->own, a->b, *doc, *len)) {
                *key = a->own.key.data;
                *klen = a->own.key.len;
                *val = a->own.val.data;
                *vlen = a->own.val.len;
                *why = NULL;
            } else {
                *key = *val = NULL;
                *klen = *vlen = 0;
                *why = a->own.why;
            }
            return 1;
        }
        if (a->holding && a->pos < a->block[a->use].data.len)
            break;
        if (a->holding) {
            /* The block read through: back to the thread, and the run
             * after it is the step's. */
            pthread_mutex_lock (&a->mu);
            a->own_at = a->block[a->use].end;
            a->block[a->use].full = false;
            pthread_cond_broadcast (&a->cv);
            pthread_mutex_unlock (&a->mu);
            a->holding = false;
            a->own_left = BLOCK_READINGS;
            a->use = (a->use + 1) % RM_BUCKET_AHEAD_BLOCKS;
            continue;
        }
        /* (Never before the first block: the store is not empty.) */
        if (a->own_at >= a->mem_len)
            return 0;
        /* The thread's next block starts where the step's run ended. */
        pthread_mutex_lock (&a->mu);
        while (!a->block[a->use].full)
            pthread_cond_wait (&a->cv, &a->mu);
        pthread_mutex_unlock (&a->mu);
        a->holding = true;
        a->pos = 0;
    }
    p = a->block[a->use].data.data + a->pos;
    memcpy (&off, p, 4);
    memcpy (&kl, p + 4, 4);
    memcpy (&vl, p + 8, 4);
    *doc = a->mem + off;
    *len = rm_walk_le32 (*doc);
    if (kl == INVALID) {
        *key = *val = NULL;
        *klen = *vlen = 0;
        *why = (const char *) p + 12;
        a->pos += 12 + vl;
    } else {
        *key = p + 12;
        *klen = kl;
        *val = p + 12 + kl;
        *vlen = vl;
        *why = NULL;
        a->pos += 12 + (size_t) kl + vl;
    }
    return 1;
}

void
rm_bucket_ahead_stop (rm_bucket_ahead_t *a)
{
    if (!a->b)
        return;
    pthread_mutex_lock (&a->mu);
    a->stop = true;
    pthread_cond_broadcast (&a->cv);
    pthread_mutex_unlock (&a->mu);
    if (a->started)
        pthread_join (a->thread, NULL);
    for (int i = 0; i < RM_BUCKET_AHEAD_BLOCKS; i++)
        rm_buf_destroy (&a->block[i].data);
    rm_bucket_record_destroy (&a->rec);
    rm_bucket_record_destroy (&a->own);
    pthread_mutex_destroy (&a->mu);
    pthread_cond_destroy (&a->cv);
    a->b = NULL;
}
