/* The collections of remodel-memsrv, in memory: documents in insertion
 * order, an _id hash for lookups and the _id uniqueness, unique indexes
 * checked by a scan (the test servers' sizes are small), capped limits,
 * and named snapshots of everything for the matrices' resets. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "remodel/value.h"

static mem_store_t store;

typedef struct {
    char name[128];
    mem_store_t s;
} snapshot_t;
static snapshot_t *snaps;
static size_t nsnaps;

mem_store_t *
mem_store (void)
{
    return &store;
}

static int
by_ns (const void *a, const void *b)
{
    const mem_coll_t *x = *(mem_coll_t *const *) a, *y = *(mem_coll_t *const *) b;
    int d = strcmp (x->db, y->db);
    return d ? d : strcmp (x->name, y->name);
}

/* Listings come out sorted by namespace, as MongoDB's do. */
void
mem_store_sort (mem_store_t *s)
{
    if (s->n > 1)
        qsort (s->c, s->n, sizeof *s->c, by_ns);
}

mem_coll_t *
mem_coll_find (mem_store_t *s, const char *db, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp (s->c[i]->db, db) && !strcmp (s->c[i]->name, name))
            return s->c[i];
    return NULL;
}

mem_coll_t *
mem_coll_create (mem_store_t *s, const char *db, const char *name)
{
    mem_coll_t *c = bson_malloc0 (sizeof *c);
    c->db = bson_strdup (db);
    c->name = bson_strdup (name);
    bson_init (&c->options);
    /* Every collection has its _id index. */
    c->idx = bson_malloc0 (sizeof *c->idx);
    c->idx[0].name = bson_strdup ("_id_");
    bson_init (&c->idx[0].key);
    BSON_APPEND_INT32 (&c->idx[0].key, "_id", 1);
    c->nidx = 1;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->c = bson_realloc (s->c, s->cap * sizeof *s->c);
    }
    s->c[s->n++] = c;
    mem_store_sort (s);
    return c;
}

void
mem_coll_free (mem_coll_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->docs[i])
            bson_destroy (c->docs[i]);
    for (size_t i = 0; i < c->nidx; i++) {
        bson_free (c->idx[i].name);
        bson_destroy (&c->idx[i].key);
    }
    bson_free (c->idx);
    bson_free (c->docs);
    bson_free (c->ids);
    bson_destroy (&c->options);
    bson_free (c->db);
    bson_free (c->name);
    bson_free (c);
}

void
mem_coll_drop (mem_store_t *s, mem_coll_t *c)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->c[i] == c) {
            memmove (s->c + i, s->c + i + 1, (s->n - i - 1) * sizeof *s->c);
            s->n--;
            break;
        }
    mem_coll_free (c);
}

/* ---- the _id hash ---- */

static uint64_t
id_hash (const bson_iter_t *id)
{
    rm_buf_t k;
    uint64_t h;
    rm_buf_init (&k);
    rm_key_append (&k, id);
    h = rm_key_hash (k.data, k.len);
    rm_buf_destroy (&k);
    return h;
}

static bool
id_of (const bson_t *doc, bson_iter_t *it)
{
    return bson_iter_init_find (it, doc, "_id");
}

static void
ids_put (mem_coll_t *c, size_t slot)
{
    bson_iter_t id;
    size_t i;
    if (!id_of (c->docs[slot], &id))
        return;
    for (i = id_hash (&id) & (c->ids_cap - 1); c->ids[i] && c->ids[i] != SIZE_MAX;
         i = (i + 1) & (c->ids_cap - 1))
        ;
    if (!c->ids[i])
        c->ids_used++;
    c->ids[i] = slot + 1;
}

/* Rebuilt at double the live count: holes and removed slots go. */
static void
ids_rebuild (mem_coll_t *c)
{
    size_t want = 16;
    while (want < 2 * (c->live + 1))
        want *= 2;
    bson_free (c->ids);
    c->ids = bson_malloc0 (want * sizeof *c->ids);
    c->ids_cap = want;
    c->ids_used = 0;
    for (size_t s = 0; s < c->n; s++)
        if (c->docs[s])
            ids_put (c, s);
}

ssize_t
mem_coll_find_id (mem_coll_t *c, const bson_iter_t *id)
{
    if (!c->ids_cap)
        return -1;
    for (size_t i = id_hash (id) & (c->ids_cap - 1); c->ids[i]; i = (i + 1) & (c->ids_cap - 1)) {
        bson_iter_t other;
        size_t slot = c->ids[i] - 1;
        if (c->ids[i] == SIZE_MAX || !c->docs[slot] || !id_of (c->docs[slot], &other))
            continue;
        if (!rm_value_compare (id, &other))
            return (ssize_t) slot;
    }
    return -1;
}

static void
ids_drop (mem_coll_t *c, size_t slot)
{
    bson_iter_t id;
    if (!c->ids_cap || !id_of (c->docs[slot], &id))
        return;
    for (size_t i = id_hash (&id) & (c->ids_cap - 1); c->ids[i]; i = (i + 1) & (c->ids_cap - 1))
        if (c->ids[i] == slot + 1) {
            c->ids[i] = SIZE_MAX;
            return;
        }
}

/* ---- unique indexes ---- */

/* The index's key of doc as canonical bytes (missing fields as null). */
static void
index_key (const mem_index_t *ix, const bson_t *doc, rm_buf_t *out)
{
    bson_iter_t k;
    rm_buf_reset (out);
    if (!bson_iter_init (&k, &ix->key))
        return;
    while (bson_iter_next (&k)) {
        bson_iter_t d, v;
        bool has = bson_iter_init (&d, doc) && bson_iter_find_descendant (&d, bson_iter_key (&k), &v);
        rm_key_append (out, has ? &v : NULL);
    }
}

bool
mem_coll_unique_ok (mem_coll_t *c, const bson_t *doc, ssize_t skip, bson_error_t *err)
{
    bson_iter_t id;
    rm_buf_t a, b;
    bool ok = true;
    if (id_of (doc, &id)) {
        ssize_t at = mem_coll_find_id (c, &id);
        if (at >= 0 && at != skip) {
            bson_set_error (err, 1, MEM_E_DUP_KEY,
                            "E11000 duplicate key error collection: %s.%s index: _id_ dup key",
                            c->db, c->name);
            return false;
        }
    }
    rm_buf_init (&a);
    rm_buf_init (&b);
    for (size_t x = 1; ok && x < c->nidx; x++) {
        if (!c->idx[x].unique)
            continue;
        index_key (&c->idx[x], doc, &a);
        for (size_t s = 0; ok && s < c->n; s++) {
            if (!c->docs[s] || (ssize_t) s == skip)
                continue;
            index_key (&c->idx[x], c->docs[s], &b);
            if (a.len == b.len && !memcmp (a.data, b.data, a.len)) {
                bson_set_error (err, 1, MEM_E_DUP_KEY,
                                "E11000 duplicate key error collection: %s.%s index: %s dup key",
                                c->db, c->name, c->idx[x].name);
                ok = false;
            }
        }
    }
    rm_buf_destroy (&a);
    rm_buf_destroy (&b);
    return ok;
}

/* ---- writes ---- */

static void
compact (mem_coll_t *c)
{
    size_t j = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->docs[i])
            c->docs[j++] = c->docs[i];
    c->n = j;
    ids_rebuild (c);
}

/* A capped collection drops its oldest documents past its limits. */
static void
cap (mem_coll_t *c)
{
    size_t s = 0;
    while (c->capped && c->live > 1 &&
           ((c->max_bytes > 0 && c->bytes > (size_t) c->max_bytes) ||
            (c->max_docs > 0 && c->live > (size_t) c->max_docs))) {
        while (!c->docs[s])
            s++;
        mem_coll_remove (c, s);
    }
    mem_coll_tidy (c);
}

bool
mem_coll_insert (mem_coll_t *c, const bson_t *doc, bson_error_t *err)
{
    if (!mem_coll_unique_ok (c, doc, -1, err))
        return false;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->docs = bson_realloc (c->docs, c->cap * sizeof *c->docs);
    }
    c->docs[c->n] = bson_copy (doc);
    c->live++;
    c->bytes += doc->len;
    if (2 * (c->ids_used + 1) > c->ids_cap)
        ids_rebuild (c);
    ids_put (c, c->n);
    c->n++;
    cap (c);
    return true;
}

bool
mem_coll_replace (mem_coll_t *c, size_t slot, const bson_t *doc, bson_error_t *err)
{
    if (!mem_coll_unique_ok (c, doc, (ssize_t) slot, err))
        return false;
    ids_drop (c, slot);
    c->bytes -= c->docs[slot]->len;
    bson_destroy (c->docs[slot]);
    c->docs[slot] = bson_copy (doc);
    c->bytes += doc->len;
    ids_put (c, slot);
    return true;
}

void
mem_coll_remove (mem_coll_t *c, size_t slot)
{
    ids_drop (c, slot);
    c->bytes -= c->docs[slot]->len;
    bson_destroy (c->docs[slot]);
    c->docs[slot] = NULL;
    c->live--;
}

/* Slot numbers stay valid while a command removes documents; the holes
 * are closed after it. */
void
mem_coll_tidy (mem_coll_t *c)
{
    if (c && c->n > 64 && 2 * c->live < c->n)
        compact (c);
}

mem_coll_t *
mem_coll_copy (const mem_coll_t *c)
{
    mem_coll_t *d = bson_malloc0 (sizeof *d);
    d->db = bson_strdup (c->db);
    d->name = bson_strdup (c->name);
    d->capped = c->capped;
    d->max_bytes = c->max_bytes;
    d->max_docs = c->max_docs;
    bson_copy_to (&c->options, &d->options);
    d->idx = bson_malloc0 ((c->nidx ? c->nidx : 1) * sizeof *d->idx);
    for (size_t i = 0; i < c->nidx; i++) {
        d->idx[i].name = bson_strdup (c->idx[i].name);
        bson_copy_to (&c->idx[i].key, &d->idx[i].key);
        d->idx[i].unique = c->idx[i].unique;
    }
    d->nidx = c->nidx;
    d->cap = c->live ? c->live : 1;
    d->docs = bson_malloc (d->cap * sizeof *d->docs);
    for (size_t i = 0; i < c->n; i++)
        if (c->docs[i])
            d->docs[d->n++] = bson_copy (c->docs[i]);
    d->live = d->n;
    d->bytes = c->bytes;
    ids_rebuild (d);
    return d;
}

static void
store_free (mem_store_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        mem_coll_free (s->c[i]);
    bson_free (s->c);
    memset (s, 0, sizeof *s);
}

static void
store_copy (const mem_store_t *from, mem_store_t *to)
{
    to->n = to->cap = from->n;
    to->c = bson_malloc0 ((from->n ? from->n : 1) * sizeof *to->c);
    for (size_t i = 0; i < from->n; i++)
        to->c[i] = mem_coll_copy (from->c[i]);
}

void
mem_store_save (mem_store_t *s, const char *name)
{
    snapshot_t *at = NULL;
    for (size_t i = 0; i < nsnaps; i++)
        if (!strcmp (snaps[i].name, name))
            at = &snaps[i];
    if (!at) {
        snaps = bson_realloc (snaps, (nsnaps + 1) * sizeof *snaps);
        at = &snaps[nsnaps++];
        memset (at, 0, sizeof *at);
        bson_strncpy (at->name, name, sizeof at->name);
    }
    store_free (&at->s);
    store_copy (s, &at->s);
}

bool
mem_store_restore (mem_store_t *s, const char *name)
{
    for (size_t i = 0; i < nsnaps; i++)
        if (!strcmp (snaps[i].name, name)) {
            store_free (s);
            store_copy (&snaps[i].s, s);
            return true;
        }
    return false;
}
