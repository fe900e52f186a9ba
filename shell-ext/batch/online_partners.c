/* A pass's join partners read once (online_batch.h): the whole partner
 * collection in memory, sorted by the join key's values, answering each
 * batch's lookups in place of a find by $in of the batch's keys.
 *
 * Why: neither test server finds a $in by a secondary index (FerretDB
 * 1.x pushes no $in down, mongo-java-server uses only _id's), so each
 * batch's find scanned the whole partner collection and a run was
 * quadratic in its size (BENCHMARKS.md, "Online workers").
 *
 * Why it is as correct as the finds: a batch's find is no snapshot
 * either, and reads the partners at some moment after the run recorded
 * its change-log point (capture_begin in online_run.c, before any pass)
 * or decided to rescan without one. The read here is made at the start of
 * the pass, after that point too: every partner write after it is in the
 * log (or found by the rescan), and sync/follow recompute the results it
 * affects from the partner key map (online_keys.c). That map is filled as
 * before: online_batch_compute notes, batch by batch, the partners a
 * batch's $in would have found, in the same order.
 *
 * Only a top-level key: there {key: {$in: values}} matches a partner
 * exactly when one of its online_keys_values (the value, each element of
 * an array and the array itself, null for missing) equals one of the
 * batch's (rm_value_compare, the server's equality). A dotted key (null
 * through arrays, SERVER-36681) and a batch with a regex key (a $in
 * regex matches by pattern) keep the server's find. */
#include <stdlib.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/value.h"

typedef struct {
    bson_iter_t value;
    uint32_t doc;
} entry_t;

struct online_partners {
    online_docs_t docs;   /* in the server's order of a plain find */
    bson_t values;        /* the entries' values, an array */
    entry_t *entries;     /* sorted by value, then document */
    size_t n;
};

static int
cmp_entries (const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    int c = rm_value_compare (&x->value, &y->value);
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

online_partners_t *
online_partners_read (online_t *on, mongoc_collection_t *partner, const rm_path_t *key,
                      int64_t batch_size, size_t budget, bson_error_t *err)
{
    online_partners_t *c;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bson_t *opts, all = BSON_INITIALIZER;
    bson_iter_t it;
    uint32_t *owner = NULL, n = 0, cap = 0;
    size_t bytes = 0;
    bool over = false;

    memset (err, 0, sizeof *err);
    if (key->n != 1)
        return NULL;
    c = bson_malloc0 (sizeof *c);
    online_docs_init (&c->docs);
    bson_init (&c->values);
    /* One cursor, in replies of --batch-size documents (as a batch's
     * partners are read). */
    opts = BCON_NEW ("batchSize", BCON_INT32 ((int32_t) (batch_size < 100000 ? batch_size : 100000)));
    cur = mongoc_collection_find_with_opts (partner, &all, opts, NULL);
    bson_destroy (opts);
    while (mongoc_cursor_next (cur, &doc)) {
        uint32_t n0 = n;
        /* Past the budget (--memory): the batches' finds, as before. The
         * documents are counted, twice (their key values, the entries). */
        bytes += 2 * (size_t) doc->len + sizeof (entry_t) + sizeof *owner;
        /* And a bson_t's limit: the key values are one document. */
        if (bytes > budget || c->values.len > (uint32_t) INT32_MAX / 2) {
            over = true;
            break;
        }
        online_docs_add (&c->docs, bson_get_data (doc), doc->len, -1);
        online_keys_values (bson_get_data (doc), doc->len, key, &c->values, &n);
        if (n > cap) {
            cap = n * 2 > 64 ? n * 2 : 64;
            owner = bson_realloc (owner, cap * sizeof *owner);
        }
        for (uint32_t k = n0; k < n; k++)
            owner[k] = (uint32_t) (c->docs.n - 1);
    }
    if (!over && mongoc_cursor_error (cur, &why)) {
        mongoc_cursor_destroy (cur);
        bson_free (owner);
        online_partners_destroy (c);
        online_fail (on, err, &why, "reading a pass's partners");
        return NULL;
    }
    mongoc_cursor_destroy (cur);
    if (over) {
        bson_free (owner);
        online_partners_destroy (c);
        return NULL;
    }
    c->entries = bson_malloc ((n ? n : 1) * sizeof *c->entries);
    if (bson_iter_init (&it, &c->values))
        while (c->n < n && bson_iter_next (&it)) {
            c->entries[c->n].value = it;
            c->entries[c->n].doc = owner[c->n];
            c->n++;
        }
    bson_free (owner);
    if (c->n != n) { /* a value that did not fit: the finds, as before */
        online_partners_destroy (c);
        return NULL;
    }
    qsort (c->entries, c->n, sizeof *c->entries, cmp_entries);
    return c;
}

int
online_partners_each (const online_partners_t *c, const bson_t *values,
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
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (rm_value_compare (&c->entries[mid].value, &v) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < c->n && rm_value_compare (&c->entries[lo].value, &v) == 0; lo++) {
            if (n == cap)
                found = bson_realloc (found, (cap = cap ? cap * 2 : 256) * sizeof *found);
            found[n++] = c->entries[lo].doc;
        }
    }
    /* Each partner once, in the order a find returns them. */
    qsort (found, n, sizeof *found, cmp_u32);
    for (size_t i = 0; ok && i < n; i++)
        if (i == 0 || found[i] != found[i - 1])
            ok = fn (ctx, online_doc_bytes (&c->docs, found[i]), c->docs.docs[found[i]].len, err);
    bson_free (found);
    return ok ? 1 : -1;
}
