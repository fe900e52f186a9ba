/* External stable sort of (key, value) records in bounded memory.
 *
 * Records are copied into large arenas (no allocation per record) and
 * indexed by 24-byte entries. When the records and their index outgrow
 * half the budget, the run is handed to a thread that sorts the index and
 * spills the run, as it is, to a registered temporary file, while the next
 * run fills the other half (the caller's thread goes on parsing, on the
 * second core, instead of waiting for the sort and the writes). Runs are
 * listed in the order they were started, each after the one before it is
 * done. finish spills the last run too (and waits for it), merges
 * neighbouring runs in passes of at most FAN-IN files until one pass is
 * left, and a thread pulls that last pass through a binary heap into
 * blocks that next() hands out, one block ahead of the caller. When
 * nothing was spilled, finish sorts the index's two halves at once, one
 * on a thread, and the same pump thread merges them as it walks them in
 * place (no second index), a block ahead of next() (a few records: next()
 * merges them itself). Each sort goes by levels (multikey_sort): 7 bytes
 * of each key at a time, held in the index. While a run fills, the next
 * arena chunk is allocated and its pages touched on a thread (ahead_main).
 *
 * Memory. The budget counts each record's key and value bytes plus its
 * 24-byte index entry, so a run of B/2 holds about B / 2 / (24 + record
 * size) records: for 16-byte keys and 32-byte values a third of it is
 * index; the run filling and the run flushing together stay within B.
 * Not counted, on top of it: arena chunks are budget/16 (64 KiB to 4 MiB),
 * so up to one chunk per run is partly filled and each full one may end
 * with a few bytes no record fitted in; index capacity beyond the entries
 * in use (reserved by doubling, but pages never touched are not resident);
 * two 256 KiB staging buffers while spilling; the chunk made ahead (only
 * while the run has room for it past the current one); the pump's two
 * 256 KiB blocks. A record larger than half
 * the budget is still copied in, as a run of its own. The arenas are freed before the
 * merge, which then holds a 256 KiB record buffer per open run (it grows to
 * the run's largest record); the fan-in is budget / 1 MiB, kept between 8
 * and 64, so that the readers fit the budget with room to spare (only
 * budgets under 2 MiB are exceeded, by at most 2 MiB).
 *
 * Stability. Within a run, ties are broken by where the record sits in the
 * arenas (chunk, then offset), which is insertion order. Across runs, ties
 * go to the earlier run; runs are spilled in insertion order and merge
 * passes only ever merge neighbours, so run order stays insertion order.
 *
 * Spill file format: records, each a LEB128 key length, a LEB128 value
 * length, the key, the value; then the CRC-64 of those bytes, 8 bytes
 * little-endian. Not compressed: spill files live for seconds, mostly in
 * the page cache, where zstd at level 1 cost far more CPU than the bytes it
 * saved (a spilled embed at --scale 1200 went from 6.2 to 4.4 s of CPU
 * without it, summarize and bucketize alike). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/crc64.h"
#include "remodel/sorter.h"
#include "remodel/tmppath.h"
#include "thread.h"

#define CHUNK_MIN ((size_t) 64 << 10)
#define CHUNK_MAX ((size_t) 4 << 20)
#define STAGE_CAP ((size_t) 256 << 10) /* framed records waiting for the compressor */
#define READ_BUF_CAP ((size_t) 256 << 10) /* records a reader parses */
#define TRAILER 8 /* the CRC-64 after the records */
#define READER_COST ((size_t) 1 << 20)
#define FAN_IN_MIN 8
#define FAN_IN_MAX 64
#define CHECK_EVERY 4096 /* records between two looks at rm_interrupted */
#define HDR_MAX 10 /* two LEB128 lengths of at most 32 bits */
#define PREFETCH_AHEAD 8 /* records asked into the cache before they are read */

typedef struct {
    /* The key's level value (level_value) at the level being sorted,
     * from the first one when added: most pairs are decided here,
     * without touching the arena. */
    uint64_t prefix;
    uint32_t chunk, off; /* key then value; also the insertion order */
    uint32_t klen, vlen;
} entry_t;

typedef struct {
    uint8_t *data;
    size_t cap, used;
} chunk_t;

typedef struct {
    char *path; /* NULL once read to the end and removed */
    uint64_t records;
    uint64_t bytes;    /* of records, without the trailer */
    size_t max_record; /* framed: a damaged length cannot make a reader grow past it */
} run_t;

typedef struct { /* one run read back */
    run_t *run;
    int fd;
    uint64_t unread; /* record bytes still in the file */
    bool unlink_only; /* at the end, only unlink: the path is forgotten on the sorter's thread */
    uint64_t crc;    /* of the record bytes read so far */
    uint8_t *buf;    /* [pos, len) read, not parsed yet */
    size_t cap, pos, len;
    uint64_t left; /* records still to come */
    size_t max_record;
    const uint8_t *key, *val; /* the current record, inside buf */
    size_t klen, vlen;
    uint64_t prefix; /* of key, as in entry_t, for the default comparator */
} reader_t;

typedef struct {
    reader_t *src; /* one per run, in run order */
    size_t n;
    size_t *heap; /* indices into src; the smallest record on top */
    size_t hn;
    bool advance; /* the top record was handed out: step past it first */
} merge_t;

typedef struct { /* one run being written */
    uint8_t *stage; /* STAGE_CAP bytes, the writer's own */
    int fd;
    char *path;
    size_t stage_len, max_record;
    uint64_t records, bytes, crc;
} writer_t;

typedef enum { ST_ADDING, ST_MEMORY, ST_MERGE, ST_FAILED } state_t;

/* The final merge runs on a thread of its own, a block of records ahead
 * of the caller, who meanwhile works on the records before (a join builds
 * its documents while the next ones are merged). Blocks hold records as
 * [klen: u32][vlen: u32][key][value]; the caller reads one while the other
 * fills. */
#define PUMP_CAP ((size_t) 256 << 10)
#define PUMP_MIN 4096 /* records in memory below which next() merges itself */

typedef struct {
    uint8_t *data;
    size_t cap, len;
    bool full; /* filled, not yet read through: the caller's */
    bool last; /* nothing comes after it */
} block_t;

typedef struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    block_t b[2];
    bool started, stop;
    bool failed;        /* with error, set before the last block is full */
    bson_error_t error;
    /* the caller's side */
    int use;            /* the block read */
    size_t pos;         /* in it */
    bool holding, ended;
} pump_t;

/* A run sorted and written on a thread of its own while the next one
 * fills: `run` holds its arenas and index, and just what the sort and the
 * writer read (cmp, ordered, ctx, chunks, idx, n). Paths are created and
 * removed on the sorter's thread only. */
typedef struct {
    struct rm_sorter *run;
    writer_t w;
    uint8_t *stage;
    pthread_t thread;
    bool busy, ok;
    bson_error_t error;
} flush_t;

struct rm_sorter {
    size_t budget, used, fan_in;
    size_t limit; /* of the run filling: half the budget, the other half may be flushing */
    char *spill_template; /* "TMPDIR/remodel-spill", for rm_tmppath_new */
    rm_key_cmp_fn cmp;
    rm_key_ordered_fn ordered; /* NULL: none of a custom cmp's key is memcmp-ordered */
    void *ctx;
    state_t state;
    bson_error_t error; /* why, once ST_FAILED */

    chunk_t *chunks; /* the current run's, in fill order */
    size_t n_chunks, chunks_cap, chunk_size;
    uint8_t **spare; /* emptied standard-size chunks, reused by the next run */
    size_t n_spare;
    /* The next standard chunk, its pages touched on a thread of its own
     * (ahead_main) while the current one fills. */
    uint8_t *ahead;
    pthread_t ahead_thread;
    bool ahead_busy;
    entry_t *idx;
    size_t n, idx_cap, pos; /* pos: next entry handed out when in memory */
    /* In memory: the index is sorted in two halves, [0, half) and [half,
     * n); pos walks the first, pos_b the second. */
    size_t half, pos_b;

    run_t *runs;
    size_t n_runs, runs_cap;
    uint8_t *stage; /* records gathered into large writes */
    merge_t merge;
    flush_t flush;
    pump_t pump;

    uint64_t count, spilled_bytes;
    size_t spilled_runs;
};

static bool
interrupted (bson_error_t *err)
{
    if (!rm_interrupted)
        return false;
    rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
    return true;
}

/* Keeps the first error: the sorter's state is unknown after it, so every
 * later call reports the same error instead of going on. */
static bool
fail (rm_sorter_t *s, const bson_error_t *e, bson_error_t *err)
{
    s->error = *e;
    s->state = ST_FAILED;
    if (err)
        *err = *e;
    return false;
}

static bool
usable (rm_sorter_t *s, state_t want, const char *fn, bson_error_t *err)
{
    if (s->state == ST_FAILED) {
        if (err)
            *err = s->error;
        return false;
    }
    if (want == ST_ADDING && s->state != ST_ADDING) {
        rm_error_set (err, RM_ERR_USAGE, "%s: called after rm_sorter_finish", fn);
        return false;
    }
    if (want != ST_ADDING && s->state == ST_ADDING) {
        rm_error_set (err, RM_ERR_USAGE, "%s: called before rm_sorter_finish", fn);
        return false;
    }
    return true;
}

/* ---- comparisons ---- */

static int
key_cmp (const rm_sorter_t *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c;

    if (s->cmp)
        return s->cmp (a, alen, b, blen, s->ctx);
    c = n ? memcmp (a, b, n) : 0;
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static inline const uint8_t *
entry_key (const rm_sorter_t *s, const entry_t *e)
{
    return s->chunks[e->chunk].data + e->off;
}

/* The first 8 bytes of a key, big-endian, zero-padded (the merge's
 * readers decide most pairs on it). */
static uint64_t
key_prefix (const uint8_t *key, size_t klen)
{
    uint8_t b[8] = {0};
    uint64_t v;

    if (klen)
        memcpy (b, key, klen < 8 ? klen : 8);
    memcpy (&v, b, 8);
    return BSON_UINT64_FROM_BE (v);
}

/* How long the part of a key is that the order compares as memcmp does
 * (all of it with the default comparator, none with a custom one unless
 * rm_sorter_set_ordered said). */
static inline size_t
ordered_len (const rm_sorter_t *s, const uint8_t *key, size_t klen)
{
    size_t n;
    if (!s->cmp)
        return klen;
    if (!s->ordered)
        return 0;
    n = s->ordered (key, klen, s->ctx);
    return n < klen ? n : klen;
}

/* One level of the multikey sort: the ordered part's bytes [d, d + 7),
 * big-endian, zero-padded, then how many of them there are (0 to 7) in
 * the low byte. As integers these order as memcmp then shorter first
 * does: equal padded bytes with fewer real ones is a prefix of the other.
 * A value ending in 7 may go on past d + 7. */
#define LEVEL_BYTES 7

static inline uint64_t
level_value (const uint8_t *key, size_t olen, size_t d)
{
    size_t rem = olen > d ? olen - d : 0;
    uint64_t v;

    if (rem >= 8) {
        memcpy (&v, key + d, 8);
        return (BSON_UINT64_FROM_BE (v) & ~(uint64_t) 0xff) | LEVEL_BYTES;
    }
    v = 0;
    for (size_t i = 0; i < LEVEL_BYTES; i++)
        v = v << 8 | (i < rem ? key[d + i] : 0);
    return v << 8 | (rem < LEVEL_BYTES ? rem : LEVEL_BYTES);
}

/* Ties go to the earlier record: where it sits in the arenas (chunk, then
 * offset) is insertion order. */
static inline bool
by_place (const entry_t *a, const entry_t *b)
{
    return a->chunk != b->chunk ? a->chunk < b->chunk : a->off < b->off;
}

/* The sorter's order, a strict total one, (key, insertion order): any
 * sort by it is stable. Reads both records. */
static inline bool
entry_less (const rm_sorter_t *s, const entry_t *a, const entry_t *b)
{
    int c = key_cmp (s, entry_key (s, a), a->klen, entry_key (s, b), b->klen);
    return c ? c < 0 : by_place (a, b);
}

/* The multikey sort's order at one level: the entries' level values, then
 * place. Reads the index only. */
static inline bool
level_less (const rm_sorter_t *s, const entry_t *a, const entry_t *b)
{
    (void) s;
    return a->prefix != b->prefix ? a->prefix < b->prefix : by_place (a, b);
}

/* Which of the two orders a sort uses: a flag, not a function pointer,
 * so that both inline into the sorts. */
static inline bool
less (const rm_sorter_t *s, bool by_level, const entry_t *a, const entry_t *b)
{
    return by_level ? level_less (s, a, b) : entry_less (s, a, b);
}

/* ---- in-memory sort: introsort on the index ---- */

static inline void
entry_swap (entry_t *a, entry_t *b)
{
    entry_t t = *a;
    *a = *b;
    *b = t;
}

static void
heap_sift (const rm_sorter_t *s, bool by_level, entry_t *v, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && less (s, by_level, &v[c], &v[c + 1]))
            c++;
        if (!less (s, by_level, &v[i], &v[c]))
            return;
        entry_swap (&v[i], &v[c]);
        i = c;
    }
}

static void
heap_sort (const rm_sorter_t *s, bool by_level, entry_t *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        heap_sift (s, by_level, v, i, n);
    while (n > 1) {
        entry_swap (&v[0], &v[--n]);
        heap_sift (s, by_level, v, 0, n);
    }
}

static void
insertion_sort (const rm_sorter_t *s, bool by_level, entry_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        entry_t t = v[i];
        size_t j = i;
        while (j > 0 && less (s, by_level, &t, &v[j - 1])) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = t;
    }
}

/* Quicksort, median of three, Hoare partition; heapsort past the depth
 * limit so that no input is quadratic. In place: a merge sort would need a
 * second index as large as the first, counted against the budget. False:
 * interrupted (an unlimited budget can make this a sort of many seconds). */
static bool
intro_sort (const rm_sorter_t *s, bool by_level, entry_t *v, size_t n, unsigned depth)
{
    while (n > 16) {
        size_t mid = n / 2, i = 0, j = n - 1;
        entry_t pivot;

        if (n >= 4096 && rm_interrupted)
            return false;
        if (depth-- == 0) {
            heap_sort (s, by_level, v, n);
            return true;
        }
        if (less (s, by_level, &v[mid], &v[0]))
            entry_swap (&v[mid], &v[0]);
        if (less (s, by_level, &v[n - 1], &v[mid])) {
            entry_swap (&v[n - 1], &v[mid]);
            if (less (s, by_level, &v[mid], &v[0]))
                entry_swap (&v[mid], &v[0]);
        }
        pivot = v[mid];
        /* v[0] <= pivot <= v[n-1] stop both scans; afterwards [0, j] <=
         * pivot <= [j+1, n), both sides non-empty. */
        for (;;) {
            while (less (s, by_level, &v[i], &pivot))
                i++;
            while (less (s, by_level, &pivot, &v[j]))
                j--;
            if (i >= j)
                break;
            entry_swap (&v[i], &v[j]);
            i++;
            j--;
        }
        /* Recurse into the smaller side, loop on the larger: O(log n) stack. */
        if (j + 1 < n - j - 1) {
            if (!intro_sort (s, by_level, v, j + 1, depth))
                return false;
            v += j + 1;
            n -= j + 1;
        } else {
            if (!intro_sort (s, by_level, v + j + 1, n - j - 1, depth))
                return false;
            n = j + 1;
        }
    }
    insertion_sort (s, by_level, v, n);
    return true;
}

static unsigned
depth_limit (size_t n)
{
    unsigned depth = 0;
    for (; n > 1; n >>= 1)
        depth += 2;
    return depth;
}

/* Past this many levels a group's keys are compared whole: the levels'
 * cost grows with the keys' shared length, a comparison's only with the
 * part it reads. */
#define LEVELS_MAX 8

/* Multikey sort of v, whose entries share their ordered parts' first d
 * bytes and hold their level values at d, in place order: sort by the
 * values (the index only), then each group of equal values that goes on
 * is sorted a level deeper, reading its records once for their next
 * values. A group whose ordered parts are equal to the end is in place
 * order already, which is the default comparator's order; a custom one
 * still orders it by the rest of the keys. Most comparisons read the
 * index only: a record is read once a level instead of twice a
 * comparison. */
static bool
multikey_sort (const rm_sorter_t *s, entry_t *v, size_t n, size_t d, unsigned level)
{
    size_t i, j;

    if (n < 2)
        return true;
    if (level >= LEVELS_MAX)
        return intro_sort (s, false, v, n, depth_limit (n));
    /* Often in order already (all equal, or added in order: a series'
     * readings by time): then no sort. */
    for (i = 1; i < n && !level_less (s, &v[i], &v[i - 1]); i++)
        ;
    if (i < n && !intro_sort (s, true, v, n, depth_limit (n)))
        return false;
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && v[j].prefix == v[i].prefix; j++)
            ;
        if (j - i < 2)
            continue;
        if ((v[i].prefix & 0xff) == LEVEL_BYTES) {
            for (size_t k = i; k < j; k++) {
                if (k + PREFETCH_AHEAD < j)
                    __builtin_prefetch (entry_key (s, &v[k + PREFETCH_AHEAD]) + d);
                const uint8_t *key = entry_key (s, &v[k]);
                v[k].prefix = level_value (key, ordered_len (s, key, v[k].klen), d + LEVEL_BYTES);
            }
            if (!multikey_sort (s, v + i, j - i, d + LEVEL_BYTES, level + 1))
                return false;
        } else if (s->cmp && !intro_sort (s, false, v + i, j - i, depth_limit (j - i)))
            return false;
    }
    return true;
}

/* The index's entries hold their level values at 0 (rm_sorter_add) and
 * are in place order; afterwards their prefixes mean nothing. */
static bool
sort_index (const rm_sorter_t *s, bson_error_t *err)
{
    if (!multikey_sort (s, s->idx, s->n, 0, 0)) {
        rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
        return false;
    }
    return true;
}

/* An in-memory sort this long sorts its halves on both cores. */
#define SORT_TWO_MIN 65536

typedef struct {
    const rm_sorter_t *s;
    bool ok;
} half_t;

static void *
half_main (void *arg)
{
    half_t *h = arg;
    const rm_sorter_t *s = h->s;
    h->ok = multikey_sort (s, s->idx + s->half, s->n - s->half, 0, 0);
    return NULL;
}

/* The last run's sort when nothing was spilled: each half of the index on
 * its own core (the comparators only read), merged by rm_sorter_next. */
static bool
sort_halves (rm_sorter_t *s, bson_error_t *err)
{
    half_t h = {s, false};
    pthread_t thread;
    bool ok;

    s->half = s->n;
    s->pos_b = s->n;
    if (s->n < SORT_TWO_MIN)
        return sort_index (s, err);
    s->half = s->n / 2;
    s->pos_b = s->half;
    if (rm_thread_start (&thread, half_main, &h) != 0) {
        s->half = s->pos_b = s->n;
        return sort_index (s, err);
    }
    ok = multikey_sort (s, s->idx, s->half, 0, 0);
    pthread_join (thread, NULL);
    if (!ok || !h.ok) {
        rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
        return false;
    }
    return true;
}

/* ---- arenas ---- */

/* The kernel gives a new chunk's pages at their first write, a fault and
 * a zeroed page each: a quarter of bucketize's input pass when done by the
 * thread that fills the chunk. Done here, on the other core, ahead. */
static void *
ahead_main (void *arg)
{
    rm_sorter_t *s = arg;
    uint8_t *p = bson_malloc (s->chunk_size);
    for (size_t i = 0; i < s->chunk_size; i += 4096)
        p[i] = 0;
    s->ahead = p;
    return NULL;
}

/* The chunk made ahead, once ready, or NULL: none was asked for. */
static uint8_t *
ahead_take (rm_sorter_t *s)
{
    uint8_t *p;
    if (s->ahead_busy) {
        pthread_join (s->ahead_thread, NULL);
        s->ahead_busy = false;
    }
    p = s->ahead;
    s->ahead = NULL;
    return p;
}

static void
ahead_start (rm_sorter_t *s)
{
    if (!s->ahead_busy && !s->ahead && rm_thread_start (&s->ahead_thread, ahead_main, s) == 0)
        s->ahead_busy = true;
}

/* A chunk with room for len bytes at its end, started if need be. Records
 * larger than a chunk get one of their own, freed after the run. */
static chunk_t *
arena_room (rm_sorter_t *s, size_t len)
{
    chunk_t *c;

    if (s->n_chunks > 0) {
        c = &s->chunks[s->n_chunks - 1];
        if (c->cap - c->used >= len)
            return c;
    }
    if (s->n_chunks == s->chunks_cap) {
        s->chunks_cap = s->chunks_cap ? 2 * s->chunks_cap : 16;
        s->chunks = bson_realloc (s->chunks, s->chunks_cap * sizeof *s->chunks);
    }
    c = &s->chunks[s->n_chunks++];
    c->used = 0;
    if (len > s->chunk_size) {
        c->cap = len;
        c->data = bson_malloc (len);
    } else {
        c->cap = s->chunk_size;
        if (s->n_spare) {
            c->data = s->spare[--s->n_spare];
        } else {
            c->data = ahead_take (s);
            if (!c->data)
                c->data = bson_malloc (s->chunk_size);
            /* The next chunk only while the run has room for one more:
             * the chunks stay within the run's limit plus one. */
            if (s->used + 2 * s->chunk_size <= s->limit)
                ahead_start (s);
        }
    }
    return c;
}

/* Empties the arenas for the next run, keeping standard chunks (and the
 * index array) for reuse; with free_all, returns everything. */
static void
arena_reset (rm_sorter_t *s, bool free_all)
{
    for (size_t i = 0; i < s->n_chunks; i++) {
        chunk_t *c = &s->chunks[i];
        if (free_all || c->cap != s->chunk_size) {
            bson_free (c->data);
            continue;
        }
        s->spare = bson_realloc (s->spare, (s->n_spare + 1) * sizeof *s->spare);
        s->spare[s->n_spare++] = c->data;
    }
    s->n_chunks = 0;
    s->n = 0;
    s->used = 0;
    if (free_all) {
        while (s->n_spare > 0)
            bson_free (s->spare[--s->n_spare]);
        bson_free (s->spare);
        s->spare = NULL;
        bson_free (s->chunks);
        s->chunks = NULL;
        s->chunks_cap = 0;
        bson_free (s->idx);
        s->idx = NULL;
        s->idx_cap = 0;
    }
}

/* ---- spill files: writing ---- */

static size_t
put_varint (uint8_t *p, uint32_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t) (v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t) v;
    return n;
}

/* 0: incomplete or longer than 32 bits. */
static size_t
get_varint (const uint8_t *p, size_t avail, uint32_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < avail && i < 5; i++) {
        x |= (uint64_t) (p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (x > UINT32_MAX)
                return 0;
            *v = (uint32_t) x;
            return i + 1;
        }
    }
    return 0;
}

static bool
write_all (int fd, const char *path, const uint8_t *p, size_t n, bson_error_t *err)
{
    while (n > 0) {
        ssize_t w = write (fd, p, n);
        if (w < 0) {
            if (errno == EINTR && !rm_interrupted)
                continue;
            if (!interrupted (err))
                rm_error_set (err, RM_ERR_IO, "%s: cannot write sort spill file: %s", path,
                              strerror (errno));
            return false;
        }
        p += w;
        n -= (size_t) w;
    }
    return true;
}

static bool
writer_open (rm_sorter_t *s, writer_t *w, bson_error_t *err)
{
    memset (w, 0, sizeof *w);
    if (!s->stage)
        s->stage = bson_malloc (STAGE_CAP);
    w->stage = s->stage;
    w->path = rm_tmppath_new (s->spill_template);
    w->fd = open (w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot create sort spill file: %s", w->path,
                      strerror (errno));
        rm_tmppath_remove (w->path);
        bson_free (w->path);
        w->path = NULL;
        return false;
    }
    return true;
}

/* Record bytes to the file, into the CRC. */
static bool
writer_write (writer_t *w, const uint8_t *p, size_t n, bson_error_t *err)
{
    w->crc = rm_crc64_update (w->crc, p, n);
    w->bytes += n;
    return write_all (w->fd, w->path, p, n, err);
}

static bool
writer_flush_stage (writer_t *w, bson_error_t *err)
{
    size_t n = w->stage_len;
    w->stage_len = 0;
    return n == 0 || writer_write (w, w->stage, n, err);
}

/* Small pieces are gathered into large writes; large ones are written
 * straight from where they are. */
static bool
writer_bytes (writer_t *w, const uint8_t *p, size_t n, bson_error_t *err)
{
    if (n <= STAGE_CAP - w->stage_len) {
        if (n)
            memcpy (w->stage + w->stage_len, p, n);
        w->stage_len += n;
        return true;
    }
    if (!writer_flush_stage (w, err))
        return false;
    if (n >= STAGE_CAP / 2)
        return writer_write (w, p, n, err);
    memcpy (w->stage, p, n);
    w->stage_len = n;
    return true;
}

/* kv: the key immediately followed by the value. */
static bool
writer_put (writer_t *w, size_t klen, size_t vlen, const uint8_t *kv, bson_error_t *err)
{
    uint8_t hdr[HDR_MAX];
    size_t h;

    if (HDR_MAX + klen + vlen <= STAGE_CAP - w->stage_len) { /* the common case, one copy */
        uint8_t *p = w->stage + w->stage_len;
        h = put_varint (p, (uint32_t) klen);
        h += put_varint (p + h, (uint32_t) vlen);
        memcpy (p + h, kv, klen + vlen);
        w->stage_len += h + klen + vlen;
    } else {
        h = put_varint (hdr, (uint32_t) klen);
        h += put_varint (hdr + h, (uint32_t) vlen);
        if (!writer_bytes (w, hdr, h, err) || !writer_bytes (w, kv, klen + vlen, err))
            return false;
    }
    if (h + klen + vlen > w->max_record)
        w->max_record = h + klen + vlen;
    w->records++;
    return true;
}

static bool
writer_close (writer_t *w, bson_error_t *err)
{
    uint8_t crc[TRAILER];
    bool ok = writer_flush_stage (w, err);
    for (int i = 0; i < TRAILER; i++)
        crc[i] = (uint8_t) (w->crc >> (8 * i));
    ok = ok && write_all (w->fd, w->path, crc, TRAILER, err);
    if (close (w->fd) != 0 && ok) { /* NFS and quotas may report ENOSPC only here */
        rm_error_set (err, RM_ERR_IO, "%s: cannot write sort spill file: %s", w->path,
                      strerror (errno));
        ok = false;
    }
    w->fd = -1;
    return ok;
}

static void
writer_abort (writer_t *w)
{
    if (w->fd >= 0)
        close (w->fd);
    w->fd = -1;
    if (w->path) {
        rm_tmppath_remove (w->path);
        bson_free (w->path);
        w->path = NULL;
    }
}

static void
run_push (rm_sorter_t *s, const writer_t *w)
{
    if (s->n_runs == s->runs_cap) {
        s->runs_cap = s->runs_cap ? 2 * s->runs_cap : 16;
        s->runs = bson_realloc (s->runs, s->runs_cap * sizeof *s->runs);
    }
    s->runs[s->n_runs].path = w->path;
    s->runs[s->n_runs].records = w->records;
    s->runs[s->n_runs].bytes = w->bytes;
    s->runs[s->n_runs].max_record = w->max_record;
    s->n_runs++;
}

/* Sorts r's index and writes its records to w, then closes w (not
 * removing its path on error: that is the sorter's thread's to do). */
static bool
write_run (const rm_sorter_t *r, writer_t *w, bson_error_t *err)
{
    if (!sort_index (r, err))
        return false;
    for (size_t i = 0; i < r->n; i++) {
        const entry_t *e = &r->idx[i];
        if ((i % CHECK_EVERY == 0 && interrupted (err)) ||
            !writer_put (w, e->klen, e->vlen, entry_key (r, e), err))
            return false;
    }
    return writer_close (w, err);
}

static void *
flush_main (void *arg)
{
    flush_t *f = arg;
    f->ok = write_run (f->run, &f->w, &f->error);
    if (f->w.fd >= 0)
        close (f->w.fd);
    f->w.fd = -1;
    return NULL;
}

/* The flushed run's standard chunks go back to the spares. */
static void
flush_recycle (rm_sorter_t *s)
{
    rm_sorter_t *r = s->flush.run;
    for (size_t i = 0; r && i < r->n_chunks; i++) {
        if (r->chunks[i].cap != s->chunk_size) {
            bson_free (r->chunks[i].data);
            continue;
        }
        s->spare = bson_realloc (s->spare, (s->n_spare + 1) * sizeof *s->spare);
        s->spare[s->n_spare++] = r->chunks[i].data;
    }
    if (r)
        r->n_chunks = r->n = 0;
}

/* After a flush has run (on its thread or here): the arrays back to the
 * arenas, and the run on the list, or its error. */
static bool
flush_done (rm_sorter_t *s, bson_error_t *err)
{
    flush_t *f = &s->flush;

    flush_recycle (s);
    if (!f->ok) {
        writer_abort (&f->w);
        *err = f->error;
        return false;
    }
    run_push (s, &f->w);
    s->spilled_runs++;
    s->spilled_bytes += f->w.bytes + TRAILER;
    return true;
}

/* Waits for the run being flushed, if any, and lists it. */
static bool
flush_wait (rm_sorter_t *s, bson_error_t *err)
{
    flush_t *f = &s->flush;
    if (!f->busy)
        return true;
    pthread_join (f->thread, NULL);
    f->busy = false;
    return flush_done (s, err);
}

/* The chunk made ahead, if any, among the spares (freed with them). */
static void
ahead_spare (rm_sorter_t *s)
{
    uint8_t *p = ahead_take (s);
    if (!p)
        return;
    s->spare = bson_realloc (s->spare, (s->n_spare + 1) * sizeof *s->spare);
    s->spare[s->n_spare++] = p;
}

/* Hands what is buffered to a thread that sorts and writes it as the next
 * run (after the one before it is done: runs stay in insertion order), and
 * gives the arenas the flushed run's arrays back, empty. */
static bool
spill (rm_sorter_t *s, bson_error_t *err)
{
    flush_t *f = &s->flush;
    rm_sorter_t *r;
    chunk_t *chunks;
    entry_t *idx;
    size_t chunks_cap, idx_cap;

    if (interrupted (err) || !flush_wait (s, err))
        return false;
    ahead_spare (s);
    if (!f->run) {
        f->run = bson_malloc0 (sizeof *f->run);
        f->stage = bson_malloc (STAGE_CAP);
    }
    if (!writer_open (s, &f->w, err))
        return false;
    f->w.stage = f->stage;
    r = f->run;
    chunks = r->chunks;
    chunks_cap = r->chunks_cap;
    idx = r->idx;
    idx_cap = r->idx_cap;
    r->cmp = s->cmp;
    r->ordered = s->ordered;
    r->ctx = s->ctx;
    r->chunks = s->chunks;
    r->n_chunks = s->n_chunks;
    r->chunks_cap = s->chunks_cap;
    r->idx = s->idx;
    r->n = s->n;
    r->idx_cap = s->idx_cap;
    s->chunks = chunks;
    s->chunks_cap = chunks_cap;
    s->idx = idx;
    s->idx_cap = idx_cap;
    s->n_chunks = s->n = 0;
    s->used = 0;
    f->busy = true;
    if (rm_thread_start (&f->thread, flush_main, f) != 0) {
        f->busy = false;
        flush_main (f); /* no thread: here, then */
        return flush_done (s, err);
    }
    return true;
}

/* Frees the flush's arrays and buffer (after flush_wait). */
static void
flush_free (rm_sorter_t *s)
{
    rm_sorter_t *r = s->flush.run;
    if (!r)
        return;
    flush_recycle (s);
    bson_free (r->chunks);
    bson_free (r->idx);
    bson_free (r);
    bson_free (s->flush.stage);
    s->flush.run = NULL;
    s->flush.stage = NULL;
}

/* ---- spill files: reading ---- */

static void
reader_close (reader_t *r, bool remove)
{
    bson_free (r->buf);
    r->buf = NULL;
    if (r->fd >= 0)
        close (r->fd);
    r->fd = -1;
    if (remove && r->run && r->run->path && r->unlink_only) {
        unlink (r->run->path); /* the disk back now; rm_sorter_destroy forgets the path */
        return;
    }
    if (remove && r->run && r->run->path) { /* read to the end: give the disk back now */
        rm_tmppath_remove (r->run->path);
        bson_free (r->run->path);
        r->run->path = NULL;
    }
}

static int
reader_corrupt (reader_t *r, const char *what, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_FORMAT,
                  "%s: damaged sort spill file after %llu of its %llu record(s): %s",
                  r->run->path, (unsigned long long) (r->run->records - r->left),
                  (unsigned long long) r->run->records, what);
    return -1;
}

static bool
reader_open (reader_t *r, run_t *run, bson_error_t *err)
{
    struct stat st;

    memset (r, 0, sizeof *r);
    r->run = run;
    r->left = run->records;
    r->unread = run->bytes;
    r->max_record = run->max_record;
    r->fd = open (run->path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0 || fstat (r->fd, &st) != 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot open sort spill file: %s", run->path,
                      strerror (errno));
        return false;
    }
    /* A file of another size than was written is damaged: say so before a
     * record is handed out. */
    if ((uint64_t) st.st_size != run->bytes + TRAILER) {
        reader_corrupt (r, (uint64_t) st.st_size < run->bytes + TRAILER ? "truncated"
                                                                           : "longer than was written",
                        err);
        return false;
    }
    r->cap = READ_BUF_CAP;
    r->buf = bson_malloc (r->cap);
    return true;
}

/* read(2) of up to len bytes: how many came, 0 at the end, -1 on error. */
static ssize_t
reader_read (reader_t *r, uint8_t *p, size_t len, bson_error_t *err)
{
    for (;;) {
        ssize_t n = read (r->fd, p, len);
        if (n >= 0)
            return n;
        if (errno == EINTR && !rm_interrupted)
            continue;
        if (!interrupted (err))
            rm_error_set (err, RM_ERR_IO, "%s: cannot read sort spill file: %s", r->run->path,
                          strerror (errno));
        return -1;
    }
}

/* Reads until need bytes are unparsed or the records end; returns the
 * unparsed bytes (fewer than need only at the end), -1 on error. The
 * trailer is not read here. */
static ssize_t
reader_fill (reader_t *r, size_t need, bson_error_t *err)
{
    while (r->len - r->pos < need && r->unread > 0) {
        size_t want;
        ssize_t n;

        if (r->cap - r->pos < need || r->len == r->cap) {
            memmove (r->buf, r->buf + r->pos, r->len - r->pos);
            r->len -= r->pos;
            r->pos = 0;
            if (r->cap < need) { /* a record larger than the buffer */
                r->cap = need + (need >> 3);
                r->buf = bson_realloc (r->buf, r->cap);
            }
        }
        want = r->cap - r->len;
        if (want > r->unread)
            want = (size_t) r->unread;
        n = reader_read (r, r->buf + r->len, want, err);
        if (n < 0)
            return -1;
        if (n == 0) /* the size was checked at open: shrunk since */
            return reader_corrupt (r, "truncated", err);
        r->crc = rm_crc64_update (r->crc, r->buf + r->len, (size_t) n);
        r->len += (size_t) n;
        r->unread -= (uint64_t) n;
    }
    return (ssize_t) (r->len - r->pos < need ? r->len - r->pos : need);
}

/* After the last record: nothing may be left over, and the CRC must match. */
static int
reader_end (reader_t *r, bson_error_t *err)
{
    uint8_t t[TRAILER];
    uint64_t crc = 0;
    ssize_t n;

    if (r->len > r->pos || r->unread > 0)
        return reader_corrupt (r, "more records than were written", err);
    n = reader_read (r, t, TRAILER, err);
    if (n < 0)
        return -1;
    if (n < TRAILER)
        return reader_corrupt (r, "truncated", err);
    for (int i = 0; i < TRAILER; i++)
        crc |= (uint64_t) t[i] << (8 * i);
    if (crc != r->crc)
        return reader_corrupt (r, "checksum mismatch", err);
    return 0;
}

/* 1: the next record is in r->key...; 0: the run is over; -1: error. */
static int
reader_next (reader_t *r, bson_error_t *err)
{
    uint32_t klen, vlen;
    size_t h, hk, need;
    ssize_t avail;

    if (r->left == 0)
        return reader_end (r, err);
    avail = reader_fill (r, HDR_MAX, err);
    if (avail < 0)
        return -1;
    h = get_varint (r->buf + r->pos, (size_t) avail, &klen);
    hk = h ? get_varint (r->buf + r->pos + h, (size_t) avail - h, &vlen) : 0;
    if (!hk)
        return reader_corrupt (r, avail ? "bad record header" : "truncated", err);
    h += hk;
    need = h + (size_t) klen + vlen;
    if (need > r->max_record)
        return reader_corrupt (r, "bad record length", err);
    avail = reader_fill (r, need, err);
    if (avail < 0)
        return -1;
    if ((size_t) avail < need)
        return reader_corrupt (r, "truncated record", err);
    r->key = r->buf + r->pos + h;
    r->klen = klen;
    r->prefix = key_prefix (r->key, klen);
    r->val = r->key + klen;
    r->vlen = vlen;
    r->pos += need;
    r->left--;
    return 1;
}

/* ---- k-way merge ---- */

static bool
merge_less (const rm_sorter_t *s, const merge_t *m, size_t a, size_t b)
{
    const reader_t *x = &m->src[a], *y = &m->src[b];
    int c;

    if (!s->cmp && x->prefix != y->prefix)
        return x->prefix < y->prefix;
    c = key_cmp (s, x->key, x->klen, y->key, y->klen);
    return c ? c < 0 : a < b; /* ties: the earlier run first */
}

static void
merge_sift (const rm_sorter_t *s, merge_t *m, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1, t;
        if (c >= m->hn)
            return;
        if (c + 1 < m->hn && merge_less (s, m, m->heap[c + 1], m->heap[c]))
            c++;
        if (!merge_less (s, m, m->heap[c], m->heap[i]))
            return;
        t = m->heap[i];
        m->heap[i] = m->heap[c];
        m->heap[c] = t;
        i = c;
    }
}

static void
merge_close (merge_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        reader_close (&m->src[i], false);
    bson_free (m->src);
    bson_free (m->heap);
    memset (m, 0, sizeof *m);
}

/* Opens runs[0..n) and reads the first record of each. */
static bool
merge_open (rm_sorter_t *s, merge_t *m, run_t *runs, size_t n, bson_error_t *err)
{
    memset (m, 0, sizeof *m);
    m->src = bson_malloc0 (n * sizeof *m->src);
    m->heap = bson_malloc (n * sizeof *m->heap);
    for (size_t i = 0; i < n; i++)
        m->src[i].fd = -1;
    m->n = n;
    for (size_t i = 0; i < n; i++) {
        int rc;
        if (!reader_open (&m->src[i], &runs[i], err))
            return false;
        rc = reader_next (&m->src[i], err);
        if (rc < 0)
            return false;
        if (rc == 0)
            reader_close (&m->src[i], true);
        else
            m->heap[m->hn++] = i;
    }
    for (size_t i = m->hn / 2; i-- > 0;)
        merge_sift (s, m, i);
    return true;
}

/* 1: *r holds the smallest record left (valid until the next call); 0: the
 * runs are over (and removed); -1: error. */
static int
merge_next (rm_sorter_t *s, merge_t *m, reader_t **r, bson_error_t *err)
{
    if (m->advance) {
        size_t top = m->heap[0];
        int rc = reader_next (&m->src[top], err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            reader_close (&m->src[top], true);
            m->heap[0] = m->heap[--m->hn];
        }
        m->advance = false;
        merge_sift (s, m, 0);
    }
    if (m->hn == 0)
        return 0;
    m->advance = true;
    *r = &m->src[m->heap[0]];
    return 1;
}

/* Merges runs[0..n) into one new run, *out; the inputs are removed. On
 * error the new run is removed and the inputs left to destroy. */
static bool
merge_group (rm_sorter_t *s, run_t *runs, size_t n, run_t *out, bson_error_t *err)
{
    merge_t m;
    writer_t w;
    reader_t *r;
    uint64_t k = 0;
    int rc;

    if (interrupted (err)) /* groups of small runs never reach CHECK_EVERY */
        return false;
    if (!merge_open (s, &m, runs, n, err)) {
        merge_close (&m);
        return false;
    }
    if (!writer_open (s, &w, err)) {
        merge_close (&m);
        return false;
    }
    while ((rc = merge_next (s, &m, &r, err)) > 0) {
        if ((++k % CHECK_EVERY == 0 && interrupted (err)) ||
            !writer_put (&w, r->klen, r->vlen, r->key, err)) {
            rc = -1;
            break;
        }
    }
    merge_close (&m);
    if (rc < 0 || !writer_close (&w, err)) {
        writer_abort (&w);
        return false;
    }
    out->path = w.path;
    out->records = w.records;
    out->bytes = w.bytes;
    out->max_record = w.max_record;
    return true;
}

/* One pass over the runs, merging neighbours fan_in at a time, but only as
 * many groups as it takes to get down to fan_in runs: the rest is left for
 * the final merge rather than copied once more. */
static bool
merge_pass (rm_sorter_t *s, bson_error_t *err)
{
    run_t *next = bson_malloc (s->n_runs * sizeof *next);
    size_t nn = 0, i = 0, excess = s->n_runs - s->fan_in;
    bool ok = true;

    while (i < s->n_runs) {
        size_t g = s->n_runs - i;
        if (g > s->fan_in)
            g = s->fan_in;
        if (g > excess + 1)
            g = excess + 1;
        if (g <= 1 || !ok) {
            next[nn++] = s->runs[i++];
            continue;
        }
        if (!merge_group (s, s->runs + i, g, &next[nn], err)) {
            ok = false; /* keep the untouched runs listed, for destroy */
            continue;
        }
        for (size_t j = i; j < i + g; j++)
            bson_free (s->runs[j].path); /* NULL: read through and removed */
        nn++;
        i += g;
        excess -= g - 1;
    }
    bson_free (s->runs);
    s->runs = next;
    s->n_runs = nn;
    s->runs_cap = s->n_runs;
    return ok;
}

/* ---- the final merge, a block ahead ---- */

/* The next record of a sort that stayed in memory: 1, or 0 at the end. */
static int
memory_next (rm_sorter_t *s, const uint8_t **key, size_t *klen, const uint8_t **val,
             size_t *vlen)
{
    const entry_t *ent;
    bool a = s->pos < s->half, b = s->pos_b < s->n;
    if (!a && !b)
        return 0;
    /* The index is sorted, the records it points at are not: each
     * is a cache miss. Ask for a few ahead so that they overlap with
     * the caller's work on this one. */
    if (s->pos + PREFETCH_AHEAD < s->half)
        __builtin_prefetch (entry_key (s, &s->idx[s->pos + PREFETCH_AHEAD]));
    if (s->pos_b + PREFETCH_AHEAD < s->n)
        __builtin_prefetch (entry_key (s, &s->idx[s->pos_b + PREFETCH_AHEAD]));
    /* The order is total (ties by place): the merge of the halves is
     * the order a sort of the whole index gives. */
    if (a && (!b || !entry_less (s, &s->idx[s->pos_b], &s->idx[s->pos])))
        ent = &s->idx[s->pos++];
    else
        ent = &s->idx[s->pos_b++];
    *key = entry_key (s, ent);
    *klen = ent->klen;
    *val = *key + ent->klen;
    *vlen = ent->vlen;
    return 1;
}

/* The pump's records: the merge of the halves in memory, or of the runs
 * (then key and value lie in the reader's buffer, the value after the key,
 * as in the arenas). */
static int
pump_source (rm_sorter_t *s, const uint8_t **key, size_t *klen, size_t *vlen,
             bson_error_t *err)
{
    const uint8_t *val;
    reader_t *r;
    int rc;
    if (s->state == ST_MEMORY)
        return memory_next (s, key, klen, &val, vlen);
    rc = merge_next (s, &s->merge, &r, err);
    if (rc > 0) {
        *key = r->key;
        *klen = r->klen;
        *vlen = r->vlen;
    }
    return rc;
}

static void *
pump_main (void *arg)
{
    rm_sorter_t *s = arg;
    pump_t *p = &s->pump;
    const uint8_t *key = NULL;
    size_t klen = 0, vlen = 0;
    bson_error_t e;
    int cur = 0, rc = 1;
    bool have = false; /* key is a record not yet copied */

    for (;;) {
        block_t *b = &p->b[cur];
        bool end;

        pthread_mutex_lock (&p->mu);
        while (b->full && !p->stop)
            pthread_cond_wait (&p->cv, &p->mu);
        end = p->stop;
        pthread_mutex_unlock (&p->mu);
        if (end)
            return NULL;
        b->len = 0;
        if (interrupted (&e))
            rc = -1;
        while (rc > 0) {
            size_t need;
            if (!have) {
                rc = pump_source (s, &key, &klen, &vlen, &e);
                if (rc <= 0)
                    break;
                have = true;
            }
            need = 8 + klen + vlen;
            if (b->len + need > b->cap) {
                if (b->len > 0)
                    break; /* full: key goes first into the next block */
                b->cap = need;
                b->data = bson_realloc (b->data, need);
            }
            {
                uint32_t kl = (uint32_t) klen, vl = (uint32_t) vlen;
                memcpy (b->data + b->len, &kl, 4);
                memcpy (b->data + b->len + 4, &vl, 4);
                memcpy (b->data + b->len + 8, key, (size_t) kl + vl); /* the value follows the key */
            }
            b->len += need;
            have = false;
        }
        end = rc <= 0;
        pthread_mutex_lock (&p->mu);
        if (rc < 0) {
            p->failed = true;
            p->error = e;
        }
        b->last = end;
        b->full = true;
        pthread_cond_broadcast (&p->cv);
        pthread_mutex_unlock (&p->mu);
        if (end)
            return NULL;
        cur ^= 1;
    }
}

/* Starts the thread on the final merge; false: none, merge here. */
static bool
pump_start (rm_sorter_t *s)
{
    pump_t *p = &s->pump;
    memset (p, 0, sizeof *p);
    for (size_t i = 0; i < s->merge.n; i++)
        s->merge.src[i].unlink_only = true;
    for (int i = 0; i < 2; i++) {
        p->b[i].cap = PUMP_CAP;
        p->b[i].data = bson_malloc (PUMP_CAP);
    }
    pthread_mutex_init (&p->mu, NULL);
    pthread_cond_init (&p->cv, NULL);
    if (rm_thread_start (&p->thread, pump_main, s) == 0) {
        p->started = true;
        return true;
    }
    pthread_mutex_destroy (&p->mu);
    pthread_cond_destroy (&p->cv);
    for (int i = 0; i < 2; i++)
        bson_free (p->b[i].data);
    for (size_t i = 0; i < s->merge.n; i++)
        s->merge.src[i].unlink_only = false;
    memset (p, 0, sizeof *p);
    return false;
}

/* The next record from the blocks: 1, 0 at the end, -1 on error. */
static int
pump_next (rm_sorter_t *s, const uint8_t **key, size_t *klen, const uint8_t **val,
           size_t *vlen, bson_error_t *err)
{
    pump_t *p = &s->pump;
    block_t *b = &p->b[p->use];
    uint32_t kl, vl;

    if (!p->ended && (!p->holding || p->pos == b->len)) {
        if (p->holding && b->last) {
            p->ended = true;
        } else {
            pthread_mutex_lock (&p->mu);
            if (p->holding) { /* read through: the thread's again */
                b->full = false;
                p->use ^= 1;
                b = &p->b[p->use];
                pthread_cond_broadcast (&p->cv);
            }
            while (!b->full)
                pthread_cond_wait (&p->cv, &p->mu);
            pthread_mutex_unlock (&p->mu);
            p->holding = true;
            p->pos = 0;
            p->ended = b->len == 0; /* only the last block can be empty */
        }
    }
    if (p->ended) {
        if (!p->failed)
            return 0;
        *err = p->error;
        return -1;
    }
    memcpy (&kl, b->data + p->pos, 4);
    memcpy (&vl, b->data + p->pos + 4, 4);
    *key = b->data + p->pos + 8;
    *klen = kl;
    *val = *key + kl;
    *vlen = vl;
    p->pos += 8 + (size_t) kl + vl;
    return 1;
}

/* Stops the thread (where it is) and frees the blocks. */
static void
pump_stop (rm_sorter_t *s)
{
    pump_t *p = &s->pump;
    if (!p->started)
        return;
    pthread_mutex_lock (&p->mu);
    p->stop = true;
    pthread_cond_broadcast (&p->cv);
    pthread_mutex_unlock (&p->mu);
    pthread_join (p->thread, NULL);
    pthread_mutex_destroy (&p->mu);
    pthread_cond_destroy (&p->cv);
    for (int i = 0; i < 2; i++)
        bson_free (p->b[i].data);
    memset (p, 0, sizeof *p);
}

/* ---- the interface ---- */

rm_sorter_t *
rm_sorter_new (size_t memory, const char *tmpdir, rm_key_cmp_fn cmp, void *ctx)
{
    rm_sorter_t *s = bson_malloc0 (sizeof *s);
    size_t len;
    char *dir;

    dir = bson_strdup (rm_tmpdir (tmpdir));
    for (len = strlen (dir); len > 1 && dir[len - 1] == '/'; len--)
        dir[len - 1] = '\0';
    s->spill_template = bson_strdup_printf ("%s/remodel-spill", dir);
    bson_free (dir);
    s->budget = memory;
    s->limit = memory / 2;
    s->cmp = cmp;
    s->ctx = ctx;
    s->chunk_size = memory / 16;
    if (s->chunk_size < CHUNK_MIN)
        s->chunk_size = CHUNK_MIN;
    if (s->chunk_size > CHUNK_MAX)
        s->chunk_size = CHUNK_MAX;
    s->fan_in = memory / READER_COST;
    if (s->fan_in < FAN_IN_MIN)
        s->fan_in = FAN_IN_MIN;
    if (s->fan_in > FAN_IN_MAX)
        s->fan_in = FAN_IN_MAX;
    s->state = ST_ADDING;
    return s;
}

void
rm_sorter_set_ordered (rm_sorter_t *s, rm_key_ordered_fn ordered)
{
    BSON_ASSERT (s->count == 0);
    s->ordered = ordered;
}

bool
rm_sorter_add (rm_sorter_t *s, const void *key, size_t klen, const void *val, size_t vlen,
               bson_error_t *err)
{
    bson_error_t e;
    size_t rec, cost;
    chunk_t *c;
    entry_t *ent;

    if (!usable (s, ST_ADDING, "rm_sorter_add", err))
        return false;
    if (klen > UINT32_MAX || vlen > UINT32_MAX) {
        rm_error_set (err, RM_ERR_UNSUPPORTED,
                      "sorter: a record with a %zu-byte key and a %zu-byte value: keys and "
                      "values are limited to 4 GiB each", klen, vlen);
        return false;
    }
    rec = klen + vlen;
    cost = rec + sizeof (entry_t);
    /* A record larger than the budget still goes in: alone, as its own run.
     * The chunk numbers must fit the index entries too. */
    if (s->n > 0 && (s->used >= s->limit || cost > s->limit - s->used ||
                     s->n_chunks == UINT32_MAX))
        if (!spill (s, &e))
            return fail (s, &e, err);
    /* Empty records take a byte anyway, so that (chunk, offset) is unique
     * and keeps the insertion order. */
    c = arena_room (s, rec ? rec : 1);
    if (s->n == s->idx_cap) {
        s->idx_cap = s->idx_cap ? 2 * s->idx_cap : 1024;
        s->idx = bson_realloc (s->idx, s->idx_cap * sizeof *s->idx);
    }
    ent = &s->idx[s->n++];
    ent->chunk = (uint32_t) (s->n_chunks - 1);
    ent->off = (uint32_t) c->used;
    ent->klen = (uint32_t) klen;
    ent->vlen = (uint32_t) vlen;
    ent->prefix = level_value (key, ordered_len (s, key, klen), 0);
    if (klen)
        memcpy (c->data + c->used, key, klen);
    if (vlen)
        memcpy (c->data + c->used + klen, val, vlen);
    c->used += rec ? rec : 1;
    s->used += cost;
    s->count++;
    return true;
}

bool
rm_sorter_sync (rm_sorter_t *s, bson_error_t *err)
{
    bson_error_t e;

    if (!usable (s, ST_ADDING, "rm_sorter_sync", err))
        return false;
    if (!flush_wait (s, &e))
        return fail (s, &e, err);
    return true;
}

bool
rm_sorter_finish (rm_sorter_t *s, bson_error_t *err)
{
    bson_error_t e;

    if (!usable (s, ST_ADDING, "rm_sorter_finish", err))
        return false;
    bson_free (ahead_take (s)); /* no chunk is started past here */
    if (interrupted (&e) || !flush_wait (s, &e))
        return fail (s, &e, err);
    if (s->n_runs == 0) {
        flush_free (s);
        if (!sort_halves (s, &e))
            return fail (s, &e, err);
        s->state = ST_MEMORY;
        /* The merge of the halves and the first touch of each record (a
         * cache miss each, in key order) on the other core, a block
         * ahead of the caller; not worth a thread for a few records. */
        if (s->n >= PUMP_MIN)
            pump_start (s);
        return true;
    }
    if (s->n > 0 && (!spill (s, &e) || !flush_wait (s, &e)))
        return fail (s, &e, err);
    flush_free (s);
    arena_reset (s, true); /* everything is on disk: the memory goes to the readers */
    while (s->n_runs > s->fan_in)
        if (!merge_pass (s, &e))
            return fail (s, &e, err);
    bson_free (s->stage);
    s->stage = NULL;
    if (!merge_open (s, &s->merge, s->runs, s->n_runs, &e))
        return fail (s, &e, err);
    /* The state first: the pump's thread reads it. */
    s->state = ST_MERGE;
    pump_start (s);
    return true;
}

int
rm_sorter_next (rm_sorter_t *s, const uint8_t **key, size_t *klen, const uint8_t **val,
                size_t *vlen, bson_error_t *err)
{
    bson_error_t e;
    reader_t *r;
    int rc;

    if (!usable (s, ST_MERGE, "rm_sorter_next", err))
        return -1;
    if (interrupted (&e)) {
        fail (s, &e, err);
        return -1;
    }
    if (s->pump.started) {
        rc = pump_next (s, key, klen, val, vlen, &e);
        if (rc < 0)
            fail (s, &e, err);
        return rc;
    }
    if (s->state == ST_MEMORY)
        return memory_next (s, key, klen, val, vlen);
    rc = merge_next (s, &s->merge, &r, &e);
    if (rc < 0) {
        fail (s, &e, err);
        return -1;
    }
    if (rc == 0)
        return 0;
    *key = r->key;
    *klen = r->klen;
    *val = r->val;
    *vlen = r->vlen;
    return 1;
}

uint64_t
rm_sorter_count (const rm_sorter_t *s)
{
    return s->count;
}

/* The runs spilled from memory; the runs merge passes rewrite are not
 * counted, here or in the bytes. */
size_t
rm_sorter_spilled_runs (const rm_sorter_t *s)
{
    return s->spilled_runs;
}

uint64_t
rm_sorter_spilled_bytes (const rm_sorter_t *s)
{
    return s->spilled_bytes;
}

void
rm_sorter_destroy (rm_sorter_t *s)
{
    if (!s)
        return;
    if (s->flush.busy) {
        pthread_join (s->flush.thread, NULL);
        s->flush.busy = false;
        writer_abort (&s->flush.w);
    }
    flush_free (s);
    bson_free (ahead_take (s));
    pump_stop (s);
    merge_close (&s->merge);
    for (size_t i = 0; i < s->n_runs; i++)
        if (s->runs[i].path) {
            rm_tmppath_remove (s->runs[i].path);
            bson_free (s->runs[i].path);
        }
    bson_free (s->runs);
    arena_reset (s, true);
    bson_free (s->stage);
    bson_free (s->spill_template);
    bson_free (s);
}
