/* A pass's join partners read once (online_batch.h): the whole partner
 * collection in memory, sorted by the join key's values, answering each
 * batch's lookups in place of a find by $in of the batch's keys.
 *
 * Why: neither test server finds a $in by a secondary index (FerretDB
 * 1.x pushes no $in down, mongo-java-server uses only _id's), so each
 * batch's find scanned the whole partner collection and a run was
 * quadratic in its size (BENCHMARKS.md, "Online workers"). A server that
 * does (online_caps_in_by_index: MongoDB) keeps the finds by key.
 *
 * Why it is as correct as the finds: a batch's find is no snapshot
 * either, and reads the partners at some moment after the run recorded
 * its change-log point (capture_begin in online_run.c, before any pass)
 * or decided to rescan without one. The read here is made at the start of
 * the pass, after that point too: every partner write after it is in the
 * log (or found by the rescan), and sync/follow recompute the results it
 * affects from the partner key map (online_keys.c). That map is filled as
 * before: online_batch_compute notes, batch by batch, the partners a
 * batch's $in would have found.
 *
 * How: in _id order, by one cursor (read_cursor). A read that fails on
 * a transient error (a connection dropped, a server restarting) is made
 * again from its start, nothing of it kept, under the retries a batch
 * has (online_retry); one past --memory stops, and one the server's
 * collStats already puts past it is not begun: each batch then finds its
 * own, as before.
 *
 * Only a top-level key: there {key: {$in: values}} matches a partner
 * exactly when one of its online_keys_values (the value, each element of
 * an array and the array itself, null for missing) equals one of the
 * batch's (rm_value_compare, the server's equality). A dotted key (null
 * through arrays, SERVER-36681), a batch with a regex key (a $in regex
 * matches by pattern) and, for a step that takes the first partner of a
 * value in the server's order (denormalize), a value with two partners
 * keep the server's find. */
#include <stdlib.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/value.h"

/* A partner's key value: an ordering prefix that decides most
 * comparisons without reading the value, its place in values and its
 * document: 24 bytes (a sort and the batches' binary searches over
 * 100,000 tasks spent a fifth of the client's time in rm_value_compare,
 * each entry an 88-byte iterator). */
typedef struct {
    uint64_t hi, lo;      /* online_partner_prefix */
    uint32_t off;         /* the value's element in values */
    uint32_t doc;
} entry_t;

struct online_partners {
    online_docs_t docs;   /* in the server's order of a plain find */
    bson_t values;        /* the entries' values, an array */
    entry_t *entries;     /* sorted by value, then document */
    size_t n;
};

/* The prefix: 16 bytes, compared as two big-endian numbers: the value's
 * canonical type (plus one: MinKey's is -1), then what orders it where
 * its bracket's order is that of bytes: an ObjectId's 12; a date's 8, its
 * sign bit flipped; a string's (or symbol's) first 14, zeros after, and
 * its length in the last byte, 15 for any longer. Exact for an ObjectId,
 * a date and a string of at most 14 bytes. */
void
online_partner_prefix (const bson_iter_t *v, uint64_t *hi, uint64_t *lo)
{
    bson_type_t t = bson_iter_type (v);
    uint8_t b[16] = {0};
    const char *str = NULL;
    uint32_t len = 0;

    b[0] = (uint8_t) (rm_value_canonical_type (t) + 1);
    if (t == BSON_TYPE_OID)
        memcpy (b + 1, bson_iter_oid (v)->bytes, 12);
    else if (t == BSON_TYPE_DATE_TIME) {
        uint64_t d = (uint64_t) bson_iter_date_time (v) ^ (UINT64_C (1) << 63);
        for (int i = 0; i < 8; i++)
            b[1 + i] = (uint8_t) (d >> (56 - 8 * i));
    } else if (t == BSON_TYPE_UTF8 || t == BSON_TYPE_SYMBOL) {
        str = t == BSON_TYPE_UTF8 ? bson_iter_utf8 (v, &len) : bson_iter_symbol (v, &len);
        memcpy (b + 1, str, len < 14 ? len : 14);
        b[15] = (uint8_t) (len < 15 ? len : 15);
    }
    *hi = *lo = 0;
    for (int i = 0; i < 8; i++) {
        *hi = *hi << 8 | b[i];
        *lo = *lo << 8 | b[8 + i];
    }
}

bool
online_partner_prefix_exact (uint64_t hi, uint64_t lo)
{
    int rank = (int) (hi >> 56) - 1;
    if (rank == rm_value_canonical_type (BSON_TYPE_OID) ||
        rank == rm_value_canonical_type (BSON_TYPE_DATE_TIME))
        return true;
    return rank == rm_value_canonical_type (BSON_TYPE_UTF8) && (lo & 0xff) < 15;
}

static void
entry_value (const online_partners_t *c, const entry_t *e, bson_iter_t *v)
{
    const uint8_t *data = bson_get_data (&c->values);
    bson_iter_init_from_data_at_offset (v, data, c->values.len, e->off,
                                        (uint32_t) strlen ((const char *) data + e->off + 1));
}

/* Entry e against value v (prefix hi, lo), as rm_value_compare; v NULL:
 * against entry w. */
static int
cmp_prefixed (const online_partners_t *c, const entry_t *e, const bson_iter_t *v, uint64_t hi,
              uint64_t lo, const entry_t *w)
{
    bson_iter_t ev, wv;
    if (e->hi != hi)
        return e->hi < hi ? -1 : 1;
    if (e->lo != lo)
        return e->lo < lo ? -1 : 1;
    if (online_partner_prefix_exact (hi, lo))
        return 0;
    entry_value (c, e, &ev);
    if (!v) {
        entry_value (c, w, &wv);
        v = &wv;
    }
    return rm_value_compare (&ev, v);
}

/* qsort_r's: ctx is the read being sorted. */
static int
cmp_entries (const void *a, const void *b, void *ctx)
{
    const entry_t *x = a, *y = b;
    int c = cmp_prefixed (ctx, x, NULL, y->hi, y->lo, y);
    return c ? c : (x->doc > y->doc) - (x->doc < y->doc);
}

static int
cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return (x > y) - (x < y);
}

void
online_partners_destroy (online_partners_t *c)
{
    if (!c)
        return;
    online_docs_destroy (&c->docs);
    bson_destroy (&c->values);
    bson_free (c->entries);
    bson_free (c);
}

/* A read under way: the documents so far and, per key value, its
 * document. */
typedef struct {
    online_partners_t *c;
    uint32_t *owner, n, cap;
    size_t bytes, budget;
} fill_t;

/* doc to the read; false past the budget (--memory) or a bson_t's limit
 * (the key values are one document). The documents are counted twice,
 * for their key values, and the entries. */
static bool
fill_add (fill_t *f, const rm_path_t *key, const bson_t *doc)
{
    uint32_t n0 = f->n;
    f->bytes += 2 * (size_t) doc->len + sizeof (entry_t) + sizeof *f->owner;
    if (f->bytes > f->budget || f->c->values.len > (uint32_t) INT32_MAX / 2)
        return false;
    online_docs_add (&f->c->docs, bson_get_data (doc), doc->len, -1);
    online_keys_values (bson_get_data (doc), doc->len, key, &f->c->values, &f->n);
    if (f->n > f->cap) {
        f->cap = f->n * 2 > 64 ? f->n * 2 : 64;
        f->owner = bson_realloc (f->owner, f->cap * sizeof *f->owner);
    }
    for (uint32_t k = n0; k < f->n; k++)
        f->owner[k] = (uint32_t) (f->c->docs.n - 1);
    return true;
}

/* One read of the whole collection in _id order by one cursor, in
 * replies of chunk documents. One cursor, not a find a chunk resuming
 * after the last _id: neither test server answers a range of _id from
 * its index, so each such find scanned the collection again (ten finds
 * of 10,000 of 100,000 tasks, 2.5 s of a 4.2 s run on mongo-java-server,
 * BENCHMARKS.md "Online workers"), where MongoDB answers both from the
 * _id index in the same time. An open cursor holds no snapshot between
 * two getMores and misses nothing a series of finds would not (an _id
 * never changes); it is gone with its connection, and the read then
 * starts again (online_partners_read). 1: read; 0: it does not fit;
 * -1: failed, err says why (online_fail: on->transient). */
static int
read_cursor (online_t *on, mongoc_collection_t *partner, const rm_pass_t *p, int64_t chunk,
             fill_t *f, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    bson_t *opts;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool fits = true, read;

    opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}", "batchSize",
                     BCON_INT32 ((int32_t) chunk));
    online_partner_projection (p, opts);
    cur = ops->range (on, partner, NULL, opts);
    bson_destroy (opts);
    while (fits && ops->next (cur, &doc))
        fits = fill_add (f, p->partner_key, doc);
    /* Not all read (past --memory): the cursor is killed here, its
     * error (none asked for more) not the read's. */
    read = ops->end (cur, &why);
    if (fits && !read) {
        online_fail (on, err, &why, "reading a pass's partners");
        return -1;
    }
    return fits ? 1 : 0;
}

/* Documents a reply of the read: ten batches, at most 100,000, and about
 * 8 MiB by the collection's average size (one reply of the server's 16
 * MiB holds them). */
#define CHUNK_BYTES (8 << 20)

static int64_t
chunk_of (int64_t batch_size, int64_t bytes, int64_t count)
{
    int64_t n = batch_size < 10000 ? 10 * batch_size : 100000;
    if (bytes > 0 && count > 0 && bytes / count > 0 && CHUNK_BYTES / (bytes / count) < n)
        n = CHUNK_BYTES / (bytes / count);
    return n < 1 ? 1 : n;
}

/* One read: the partners, or NULL (err->code 0: they do not fit). */
static online_partners_t *
read_once (online_t *on, mongoc_collection_t *partner, const rm_pass_t *p, int64_t chunk,
           size_t budget, bson_error_t *err)
{
    fill_t f = {.budget = budget};
    bson_iter_t it;
    int r;

    /* It holds a bson_t, which libbson aligns to 128 bytes: malloc gives 16. */
    f.c = bson_aligned_alloc0 (BSON_ALIGNOF (online_partners_t), sizeof *f.c);
    online_docs_init (&f.c->docs);
    bson_init (&f.c->values);
    r = read_cursor (on, partner, p, chunk, &f, err);
    if (r > 0) {
        f.c->entries = bson_malloc ((f.n ? f.n : 1) * sizeof *f.c->entries);
        if (bson_iter_init (&it, &f.c->values))
            while (f.c->n < f.n && bson_iter_next (&it)) {
                online_partner_prefix (&it, &f.c->entries[f.c->n].hi, &f.c->entries[f.c->n].lo);
                f.c->entries[f.c->n].off = bson_iter_offset (&it);
                f.c->entries[f.c->n].doc = f.owner[f.c->n];
                f.c->n++;
            }
        r = f.c->n == f.n; /* else a value did not fit: the finds, as before */
    }
    bson_free (f.owner);
    if (r <= 0) {
        online_partners_destroy (f.c);
        return NULL;
    }
    qsort_r (f.c->entries, f.c->n, sizeof *f.c->entries, cmp_entries, f.c);
    return f.c;
}

online_partners_t *
online_partners_read (online_t *on, mongoc_collection_t *partner, const rm_pass_t *p,
                      int64_t batch_size, size_t budget, bson_error_t *err)
{
    online_retry_t retry = {0, 0};
    online_partners_t *c;
    int64_t count, bytes;

    memset (err, 0, sizeof *err);
    /* A server that reads $in from the join's index (online_caps.c:
     * MongoDB) finds each batch's partners by key: nothing read whole. */
    if (p->partner_key->n != 1 || online_caps_in_by_index (on))
        return NULL;
    /* Larger than --memory by the server's own measure (collStats): the
     * finds at once, not a read up to the budget first. */
    bytes = online_bytes_of (on, partner, &count);
    if (bytes > 0 && (uint64_t) bytes > budget)
        return NULL;
    /* A dropped connection, a server restarting: the read again from
     * its start, nothing of the failed one kept, as a batch's reads are
     * retried (online_retry: --retry-for, the same message). */
    for (;;) {
        c = read_once (on, partner, p, chunk_of (batch_size, bytes, count), budget, err);
        if (c || err->code == 0)
            return c;
        /* SIGINT, SIGTERM between two tries, as between two batches:
         * nothing of the pass written, its checkpoint as it was. */
        if (!online_retry (on, &retry, err) ||
            !online_stop_check (on, "while a pass's partners were read (its checkpoint as it was)",
                                err))
            return NULL;
        memset (err, 0, sizeof *err);
    }
}

int
online_partners_each (const online_partners_t *c, const bson_t *values, bool first_wins,
                      online_partners_fn fn, void *ctx, bson_error_t *err)
{
    bson_iter_t v;
    uint32_t *found = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;

    if (!bson_iter_init (&v, values))
        return 0;
    while (bson_iter_next (&v))
        if (BSON_ITER_HOLDS_REGEX (&v))
            return 0;
    bson_iter_init (&v, values);
    while (bson_iter_next (&v)) {
        size_t lo = 0, hi = c->n;
        uint64_t ph, pl;
        online_partner_prefix (&v, &ph, &pl);
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_prefixed (c, &c->entries[mid], &v, ph, pl, NULL) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k < c->n && cmp_prefixed (c, &c->entries[k], &v, ph, pl, NULL) == 0; k++)
            /* Two partners of one value where the first in a find's
             * order wins: the server's order, which this read (in _id
             * order) does not know. */
            if (first_wins && c->entries[k].doc != c->entries[lo].doc) {
                bson_free (found);
                return 0;
            }
        for (; lo < c->n && cmp_prefixed (c, &c->entries[lo], &v, ph, pl, NULL) == 0; lo++) {
            if (n == cap)
                found = bson_realloc (found, (cap = cap ? cap * 2 : 256) * sizeof *found);
            found[n++] = c->entries[lo].doc;
        }
    }
    /* Each partner once, in _id order (a find's is the server's: the
     * steps that read them all order them themselves, by _id or a sort). */
    qsort (found, n, sizeof *found, cmp_u32);
    for (size_t i = 0; ok && i < n; i++)
        if (i == 0 || found[i] != found[i - 1])
            ok = fn (ctx, online_doc_bytes (&c->docs, found[i]), c->docs.docs[found[i]].len, err);
    bson_free (found);
    return ok ? 1 : -1;
}
