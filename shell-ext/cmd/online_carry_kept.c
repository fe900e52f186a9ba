/* rollback --carry-writes through what run --keep-before kept
 * (online_cmd.h; the entries are online_kept.c's): a kept set's inverse
 * and a kept delete's, for online_carry.c, which gives each document they
 * make to its own put, as it does the engine's.
 *
 * A set's: each document of its namespace as it is now, its fields
 * restored (online_carry_restore: the old value where the application
 * did not change what the set made, the application's where it did,
 * removed where the document had none; a document the application
 * inserted since, which has no entry, keeps those some document had
 * before the run), its entries read a batch at a time by one $in.
 *
 * A delete's: the documents it dropped, as they were at the switch (a
 * sync keeps each entry current), given back beside the rest, which pass
 * as they are: not one whose _id the results hold now (the application
 * gave that _id a document since: its write stays), nor one whose
 * original is gone (the source deleted it before the switch, by a
 * change a rescan could not name: its entry may outlive it). */
#include <stdlib.h>
#include <string.h>

#include "online_carry_rule.h"
#include "online_cmd.h"
#include "remodel/docpath.h"

typedef struct {
    uint64_t h;
    size_t i;
} kept_by_t;

static int
by_cmp (const void *x, const void *y)
{
    const kept_by_t *a = x, *b = y;
    return a->h < b->h ? -1 : a->h > b->h;
}

/* Each document cur yields into got, with its "i" (the document's _id
 * in an entry, or its own _id) hashed into by: sorted, for lookups. */
static bool
read_all (online_t *on, online_cursor_t *cur, const char *key, online_docs_t *got,
          kept_by_t **by, const char *what, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    const bson_t *d;
    bson_error_t why;
    size_t cap = 0;

    while (ops->next (cur, &d)) {
        bson_iter_t it;
        if (!bson_iter_init (&it, d) || !bson_iter_find_descendant (&it, key, &it))
            continue;
        if (got->n + 1 > cap) {
            cap = cap ? cap * 2 : 64;
            *by = bson_realloc (*by, cap * sizeof **by);
        }
        (*by)[got->n].h = online_value_hash (&it);
        (*by)[got->n].i = got->n;
        online_docs_add (got, bson_get_data (d), d->len, -1);
    }
    if (!ops->end (cur, &why))
        return online_fail (on, err, &why, what);
    if (got->n)
        qsort (*by, got->n, sizeof **by, by_cmp);
    return true;
}

/* The document of got whose value at key is id's (NULL: none). */
static const uint8_t *
find_by (const online_docs_t *got, const kept_by_t *by, const char *key, const bson_iter_t *id,
         uint32_t *len)
{
    kept_by_t k = {online_value_hash (id), 0};
    const kept_by_t *at = got->n ? bsearch (&k, by, got->n, sizeof *by, by_cmp) : NULL;
    if (!at)
        return NULL;
    while (at > by && at[-1].h == k.h)
        at--;
    for (; at < by + got->n && at->h == k.h; at++) {
        const uint8_t *d = online_doc_bytes (got, at->i);
        bson_t b;
        bson_iter_t it;
        rm_raw_value_t x, y;
        *len = got->docs[at->i].len;
        if (bson_init_static (&b, d, *len) && bson_iter_init (&it, &b) &&
            bson_iter_find_descendant (&it, key, &it) && rm_raw_value_of (&it, &x) &&
            rm_raw_value_of (id, &y) && x.type == y.type && x.len == y.len &&
            !memcmp (x.data, y.data, x.len))
            return d;
    }
    return NULL;
}

/* The kept collection of the plan. */
static mongoc_collection_t *
kept_collection (online_t *on)
{
    char name[160];
    online_kept_name (on, name, sizeof name);
    return online_collection (on, on->run->o->state_db, name);
}

/* {_id: {$in: [...]}} of docs' _ids into filter (as kept entries' keys
 * of step, step > 0, or as they are). */
static void
ids_in (const online_docs_t *docs, size_t step, bson_t *filter)
{
    bson_t in, arr;
    BSON_APPEND_DOCUMENT_BEGIN (filter, "_id", &in);
    BSON_APPEND_ARRAY_BEGIN (&in, "$in", &arr);
    for (size_t i = 0; i < docs->n; i++) {
        bson_iter_t id;
        char key[16];
        const char *kp;
        if (!rm_doc_field (online_doc_bytes (docs, i), docs->docs[i].len, "_id", 3, &id))
            continue;
        bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        if (step)
            online_kept_key (&arr, kp, step, &id);
        else
            bson_append_iter (&arr, kp, -1, &id);
    }
    bson_append_array_end (&in, &arr);
    bson_append_document_end (filter, &in);
}

/* The _ids of docs found in c, into got and by (read_all's). */
static bool
find_ids (online_t *on, mongoc_collection_t *c, const online_docs_t *docs, size_t step,
          const char *key, online_docs_t *got, kept_by_t **by, const char *what, bson_error_t *err)
{
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = step ? NULL : BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
    bool ok;
    ids_in (docs, step, &filter);
    ok = read_all (on, online_ops (on)->find (on, c, &filter, opts), key, got, by, what, err);
    if (opts)
        bson_destroy (opts);
    bson_destroy (&filter);
    return ok;
}

bool
online_carry_kept_set (online_t *on, const rm_step_t *s, const online_docs_t *docs,
                       online_carry_put_fn put, void *ctx, bson_error_t *err)
{
    const rm_fields_t *f = &s->u.fields;
    mongoc_collection_t *c;
    bson_t out = BSON_INITIALIZER, before;
    online_docs_t got;
    kept_by_t *by = NULL;
    bool ok, found, stay[64];

    if (!docs->n || f->n > sizeof stay / sizeof *stay)
        return true;
    /* The fields the old design had: an inserted document keeps them. */
    ok = online_state_get (on, "before", on->run->names.id, &before, &found,
                           "reading the fields there before the run", err);
    online_carry_present (ok && found ? &before : NULL, s->index, f->paths, f->n, stay);
    bson_destroy (&before);
    c = kept_collection (on);
    online_docs_init (&got);
    ok = ok && find_ids (on, c, docs, s->index, "_id.i", &got, &by,
                         "reading what the run kept (--keep-before)", err);
    for (size_t i = 0; ok && i < docs->n; i++) {
        const uint8_t *d = online_doc_bytes (docs, i), *e = NULL;
        uint32_t len = docs->docs[i].len, elen = 0;
        bson_iter_t id;
        bson_t entry;
        if (rm_doc_field (d, len, "_id", 3, &id))
            e = find_by (&got, by, "_id.i", &id, &elen);
        bson_reinit (&out);
        /* No entry: the application inserted it after the switch. */
        online_carry_restore (d, len, f->paths, f->n,
                              e && bson_init_static (&entry, e, elen) ? &entry : NULL, stay, &out);
        ok = put (ctx, f->in.text, bson_get_data (&out), out.len, err);
    }
    bson_free (by);
    online_docs_destroy (&got);
    bson_destroy (&out);
    mongoc_collection_destroy (c);
    return ok;
}

/* A batch of kept documents (docs): those whose original is there put,
 * unless seen. */
static bool
dropped_batch (online_t *on, const rm_step_t *s, const online_docs_t *docs,
               mongoc_collection_t *originals, online_carry_seen_fn seen,
               online_carry_put_fn put, void *ctx, bson_error_t *err)
{
    online_docs_t there;
    kept_by_t *by = NULL;
    bool ok;

    online_docs_init (&there);
    ok = find_ids (on, originals, docs, 0, "_id", &there, &by, "reading the originals", err);
    for (size_t i = 0; ok && i < docs->n; i++) {
        const uint8_t *d = online_doc_bytes (docs, i);
        uint32_t len = docs->docs[i].len, olen;
        bson_iter_t id;
        if (seen (ctx, s->u.copy.from.text, d, len) || !rm_doc_field (d, len, "_id", 3, &id) ||
            !find_by (&there, by, "_id", &id, &olen))
            continue;
        ok = put (ctx, s->u.copy.from.text, d, len, err);
    }
    bson_free (by);
    online_docs_destroy (&there);
    return ok;
}

bool
online_carry_kept_dropped (online_t *on, const rm_step_t *s, mongoc_collection_t *originals,
                           size_t batch, online_carry_seen_fn seen, online_carry_put_fn put,
                           void *ctx, bson_error_t *err)
{
    mongoc_collection_t *c = kept_collection (on);
    bson_t *filter = BCON_NEW ("s", BCON_INT64 ((int64_t) s->index));
    bson_t *opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, c, filter, opts);
    const bson_t *e;
    online_docs_t docs;
    bson_error_t why;
    bool ok = true;

    online_docs_init (&docs);
    while (ok && ops->next (cur, &e)) {
        bson_iter_t it;
        const uint8_t *data;
        uint32_t len;
        if (!bson_iter_init_find (&it, e, "doc") || !BSON_ITER_HOLDS_DOCUMENT (&it))
            continue;
        bson_iter_document (&it, &len, &data);
        online_docs_add (&docs, data, len, -1);
        if (docs.n >= batch) {
            ok = dropped_batch (on, s, &docs, originals, seen, put, ctx, err);
            online_docs_reset (&docs);
        }
    }
    if (!ops->end (cur, ok ? &why : NULL) && ok)
        ok = online_fail (on, err, &why, "reading what the run kept (--keep-before)");
    if (ok && docs.n)
        ok = dropped_batch (on, s, &docs, originals, seen, put, ctx, err);
    online_docs_destroy (&docs);
    bson_destroy (opts);
    bson_destroy (filter);
    mongoc_collection_destroy (c);
    return ok;
}
