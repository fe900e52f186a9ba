/* --to-uri: going back, the namespaces the run copied as they are
 * (online_cmd.h). Their documents are the same in both designs, so no
 * inverse is needed: each _id the destination's change log shows written
 * since the commit is given back to the source as the destination holds
 * it now (replaced, or inserted where the source has none), or deleted
 * from the source where the destination holds it no more. Each write
 * makes the source's document the destination's, whatever it was, so a
 * rollback killed part way does it again with the same outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_cmd.h"

static int
hash_cmp (const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *) x, b = *(const uint64_t *) y;
    return a < b ? -1 : a > b;
}

/* One write to the source: doc replacing (upserted) the document of its
 * _id, or (doc NULL) the document of id deleted. */
static bool
put_back (online_t *on, mongoc_collection_t *src, const bson_t *doc, const bson_iter_t *id,
          bson_error_t *err)
{
    bson_t sel = BSON_INITIALIZER;
    bson_error_t why;
    bool ok;

    if (doc)
        online_id_filter (bson_get_data (doc), doc->len, &sel);
    else
        bson_append_iter (&sel, "_id", 3, id);
    ok = online_lease_check (on, err) &&
         (online_ops (on)->write (on, src, doc ? ONLINE_W_REPLACE : ONLINE_W_DELETE, &sel, doc,
                                  doc != NULL, false, NULL, &why) ||
          online_fail (on, err, &why, "giving a copied namespace's document back to the source"));
    bson_destroy (&sel);
    return ok;
}

/* The _ids of l from *at on (a chunk): read on the destination, each
 * given back (count: only counted). */
static bool
chunk_back (online_t *on, mongoc_collection_t *dst, mongoc_collection_t *src,
            const online_idlist_t *l, uint32_t *at, bool count, int64_t *put, int64_t *gone,
            bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    online_values_t ids;
    online_cursor_t *cur;
    const bson_t *doc;
    uint64_t *found;
    size_t n = 0;
    uint32_t from = *at, got;
    bson_error_t why;
    bool ok = true;

    online_values_init (&ids);
    got = online_idlist_chunk (l, at, 1000, &ids);
    found = bson_malloc (sizeof *found * (got ? got : 1));
    cur = ops->keys (on, dst, "_id", &ids.arr, NULL);
    while (ok && ops->next (cur, &doc)) {
        bson_iter_t id;
        if (n < got && bson_iter_init_find (&id, doc, "_id"))
            found[n++] = online_value_hash (&id);
        *put += 1;
        ok = count || put_back (on, src, doc, NULL, err);
    }
    if (!ops->end (cur, ok ? &why : NULL) && ok)
        ok = online_fail (on, err, &why, "reading a copied namespace on the destination");
    qsort (found, n, sizeof *found, hash_cmp);
    for (uint32_t i = from; ok && i < *at; i++) {
        bson_iter_t id;
        uint64_t h;
        if (!online_idlist_get (l, i, &id))
            continue;
        h = online_value_hash (&id);
        if (n && bsearch (&h, found, n, sizeof *found, hash_cmp))
            continue;
        *gone += 1;
        ok = count || put_back (on, src, NULL, &id, err);
    }
    bson_free (found);
    bson_destroy (&ids.arr);
    return ok;
}

bool
online_dest_copy_back (online_t *on, online_changes_t *ch, const char *ns, bool count,
                       int64_t *put, int64_t *gone, bson_error_t *err)
{
    online_idlist_t *l = online_changes_list (ch, ns, false);
    const char *dot = strchr (ns, '.');
    char db[128];
    mongoc_collection_t *dst, *src;
    uint32_t at = 0;
    bool ok = true;

    *put = *gone = 0;
    if (!l || !l->n || !dot || (size_t) (dot - ns) >= sizeof db)
        return true;
    snprintf (db, sizeof db, "%.*s", (int) (dot - ns), ns);
    dst = online_pair_side (on, ONLINE_DEST, db, dot + 1);
    src = online_pair_side (on, ONLINE_SOURCE, db, dot + 1);
    while (ok && at < l->n)
        ok = chunk_back (on, dst, src, l, &at, count, put, gone, err);
    mongoc_collection_destroy (dst);
    mongoc_collection_destroy (src);
    return ok;
}
