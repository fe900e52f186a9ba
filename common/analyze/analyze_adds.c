/* The first pass's adds to the key tables, on a second core
 * (analyze_int.h). The walk of each document (main thread) and the adds
 * of its keys (a cache miss each once the tables outgrow the cache) took
 * about the same time on one thread; here the walk fills blocks of
 * entries (each key's bytes) and a worker hashes and adds them, in the
 * same order, taking the spill decision at each document's end as the
 * pass did in place, so the tables, their spills and every figure
 * reported from them are the same. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "analyze_int.h"
#include "crc64_clmul.h"
#include "remodel/crc64.h"
#include "thread.h"

/* Blocks in flight (the main thread fills one): 64, about 13 ms of the
 * walk, so that the walk goes on through the worker's longest pauses (a
 * table of a million keys doubling takes 5 to 15 ms) instead of waiting
 * with a core idle. About 8 MB. */
#define BLOCKS 64
#define AHEAD 16        /* entries between a slot's prefetch and its add */
/* A waiting walk is woken once half the blocks are free, not at each one
 * (a wake each block was a switch each on two cores). An idle worker is
 * woken as soon as WORKER_WAKE blocks wait: woken only at half the queue,
 * it slept 30 to 50 ms a run while the walk's core was the only one busy. */
#define WAKE_AT (BLOCKS / 2)
#define WORKER_WAKE 2

struct rm_adds_shared {
    rm_analysis_t *a;
    rm_add_t *block[BLOCKS];
    rm_buf_t bytes[BLOCKS]; /* each block's keys' bytes */
    size_t len[BLOCKS];
    size_t fill;        /* the block the main thread fills */
    size_t queued;      /* handed over, not yet added (the oldest first) */
    bool done;          /* no more blocks */
    bool idle;          /* the worker waits for blocks */
    bool full;          /* the main thread waits for a free block */
    bool threaded;
    bool bad;           /* the worker's own: a spill failed, err says why */
    bool failed;        /* bad, as the main thread may read it (under mu) */
    bson_error_t err;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

#ifdef RM_CRC64_HAVE_PCLMUL
/* hash_keys with the CRC of each key of 8 to RM_CRC64_SHORT_MAX bytes
 * (nearly all) inline: a call and a dispatch a key cost about half as
 * much as the CRC itself. */
__attribute__ ((target (RM_CRC64_CLMUL_TARGET))) static void
hash_keys_clmul (rm_add_t *e, size_t n, const rm_buf_t *keys)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = keys->data + e[i].u.at.off;
        uint32_t len = e[i].u.at.len;
        uint64_t crc;
        if ((e[i].op & RM_ADD_OP) != RM_ADD_KEY)
            continue;
        if (len >= 8 && len <= RM_CRC64_SHORT_MAX)
            crc = ~rm_crc64_clmul_short (~UINT64_C (0), p, len);
        else
            crc = rm_crc64_update_clmul (0, p, len);
        e[i].u.key = RM_ANALYZE_KEY_OF_CRC (crc);
    }
}
#endif

/* The keys of a block's entries (rm_analyze_key_of of their bytes), in
 * place of where their bytes are. */
static void
hash_keys (rm_add_t *e, size_t n, const rm_buf_t *keys)
{
#ifdef RM_CRC64_HAVE_PCLMUL
    if (rm_crc64_have_clmul ()) {
        hash_keys_clmul (e, n, keys);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        if ((e[i].op & RM_ADD_OP) == RM_ADD_KEY)
            e[i].u.key = rm_analyze_key_of (keys->data + e[i].u.at.off, e[i].u.at.len);
}

/* One block's entries, in order. */
static void
add_block (struct rm_adds_shared *s, rm_add_t *e, size_t n, const rm_buf_t *keys)
{
    rm_analysis_t *a = s->a;
    /* The keys' hashes first (a tenth of the pass, off the walk's thread
     * too), for the prefetches below. */
    hash_keys (e, n, keys);
    for (size_t i = 0; i < n && !s->bad; i++) {
        rm_collection_t *c = &a->cols[e[i].col];
        rm_keymap_t *m = &c->pass_keys[e[i].field];
        size_t bytes;
        /* Same adds in the same order as without it: a prefetch only
         * asks for the slot a later add will probe. */
        if (i + AHEAD < n && (e[i + AHEAD].op & RM_ADD_OP) == RM_ADD_KEY)
            rm_keymap_prefetch (&a->cols[e[i + AHEAD].col].pass_keys[e[i + AHEAD].field],
                                e[i + AHEAD].u.key);
        switch (e[i].op & RM_ADD_OP) {
        case RM_ADD_KEY:
            /* The byte counts written only when a table grew: c's line
             * holds what the walk's thread writes per document (c->path),
             * and a write per key pulled it back each time. */
            if ((bytes = rm_keymap_add (m, e[i].u.key, 1))) {
                c->key_bytes += bytes;
                a->key_bytes += bytes;
            }
            break;
        case RM_ADD_DROP: /* the field holds values no reference has */
            bytes = RM_KEYMAP_BYTES (m);
            c->key_bytes -= bytes;
            a->key_bytes -= bytes;
            rm_keymap_destroy (m);
            break;
        default:
            break;
        }
        /* A document's end. Half the budget for the key tables, half for
         * the sorter they spill to; a table that doubles holds its old
         * slots and twice as many new ones at once, so the tables spill
         * at a sixth: at most half the budget even then. */
        if ((e[i].op & RM_ADD_END) && a->key_bytes > a->memory / 6 && !rm_analyze_spill_keys (a, &s->err))
            s->bad = true;
    }
}

static void *
worker (void *arg)
{
    struct rm_adds_shared *s = arg;
    size_t next = 0;
    pthread_mutex_lock (&s->mu);
    for (;;) {
        while (!s->queued && !s->done) {
            s->idle = true;
            pthread_cond_wait (&s->cv, &s->mu);
        }
        s->idle = false;
        if (!s->queued)
            break;
        pthread_mutex_unlock (&s->mu);
        add_block (s, s->block[next], s->len[next], &s->bytes[next]);
        next = (next + 1) % BLOCKS;
        pthread_mutex_lock (&s->mu);
        s->queued--;
        s->failed = s->bad;
        if (s->full && s->queued <= WAKE_AT)
            pthread_cond_broadcast (&s->cv);
    }
    pthread_mutex_unlock (&s->mu);
    return NULL;
}

rm_adds_t *
rm_adds_start (rm_analysis_t *a)
{
    rm_adds_t *q = bson_malloc0 (sizeof *q);
    struct rm_adds_shared *s = bson_malloc0 (sizeof *s);
    q->shared = s;
    s->a = a;
    for (size_t i = 0; i < BLOCKS; i++) {
        s->block[i] = bson_malloc (RM_ADDS_BLOCK * sizeof *s->block[i]);
        rm_buf_init (&s->bytes[i]);
    }
    for (size_t i = 0; i < a->n_cols; i++) {
        a->cols[i].pass_keys = bson_malloc0 (RM_ANALYZE_MAX_PATHS * sizeof *a->cols[i].pass_keys);
        a->cols[i].adds = q;
        a->cols[i].index = (uint32_t) i;
    }
    q->cur = s->block[0];
    q->bytes = &s->bytes[0];
    pthread_mutex_init (&s->mu, NULL);
    pthread_cond_init (&s->cv, NULL);
    s->threaded = rm_thread_start (&s->thread, worker, s) == 0;
    return q;
}

void
rm_adds_hand_over (rm_adds_t *q)
{
    struct rm_adds_shared *s = q->shared;
    if (!q->n)
        return;
    q->handed += q->n;
    if (!s->threaded) {
        add_block (s, q->cur, q->n, q->bytes);
        q->failed = s->bad;
        q->n = 0;
        rm_buf_reset (q->bytes);
        return;
    }
    pthread_mutex_lock (&s->mu);
    s->len[s->fill] = q->n;
    s->queued++;
    if (s->idle && s->queued >= WORKER_WAKE)
        pthread_cond_broadcast (&s->cv);
    s->fill = (s->fill + 1) % BLOCKS;
    while (s->queued == BLOCKS) {
        s->full = true;
        /* Woken at WORKER_WAKE already; this only makes sure the
         * two never wait on each other. */
        if (s->idle)
            pthread_cond_broadcast (&s->cv);
        pthread_cond_wait (&s->cv, &s->mu);
    }
    s->full = false;
    q->failed = s->failed;
    pthread_mutex_unlock (&s->mu);
    q->cur = s->block[s->fill];
    q->bytes = &s->bytes[s->fill];
    rm_buf_reset (q->bytes);
    q->n = 0;
}

bool
rm_adds_finish (rm_adds_t *q, rm_analysis_t *a, bson_error_t *err)
{
    struct rm_adds_shared *s = q->shared;
    bool ok;
    rm_adds_hand_over (q);
    if (s->threaded) {
        pthread_mutex_lock (&s->mu);
        s->done = true;
        pthread_cond_broadcast (&s->cv);
        pthread_mutex_unlock (&s->mu);
        pthread_join (s->thread, NULL);
    }
    ok = !s->bad;
    if (!ok)
        *err = s->err;
    for (size_t i = 0; i < a->n_cols; i++) {
        rm_collection_t *c = &a->cols[i];
        for (size_t k = 0; k < RM_ANALYZE_MAX_PATHS; k++) {
            if (k < c->n_fields)
                c->fields[k].keys = c->pass_keys[k];
            else
                rm_keymap_destroy (&c->pass_keys[k]);
        }
        bson_free (c->pass_keys);
        c->pass_keys = NULL;
        c->adds = NULL;
    }
    pthread_mutex_destroy (&s->mu);
    pthread_cond_destroy (&s->cv);
    for (size_t i = 0; i < BLOCKS; i++) {
        bson_free (s->block[i]);
        rm_buf_destroy (&s->bytes[i]);
    }
    bson_free (s);
    bson_free (q);
    return ok;
}
