/* --to-uri: a namespace the plan does not write, copied as it is from the
 * source to the destination: created with its options (collation,
 * validator, capped...), its documents in _id order in write batches of
 * the destination's size, replaced by _id with upsert so that a copy
 * begun again (a resumed run, finalize's last copy) writes each document
 * once as it is now, then its indexes. Each copy done is noted in the
 * pair's record (copied.N: "db.coll"), which a resumed run skips. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"

bool
online_dest_copy_where (online_t *on, mongoc_collection_t *src, mongoc_collection_t *dst,
                        const bson_t *filter, const bson_t *opts, int64_t *docs, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    bson_t sel;
    online_cursor_t *cur = ops->find (on, src, filter, opts);
    online_wbatch_t *b = NULL;
    int64_t chunk = online_caps_write_chunk (on), in = 0;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    bson_init (&sel);
    while (ok && ops->next (cur, &doc)) {
        bson_iter_t id;
        if (!b)
            b = ops->batch (on, dst);
        bson_reinit (&sel);
        if (bson_iter_init_find (&id, doc, "_id"))
            online_id_append (&sel, &id);
        ok = ops->add (b, ONLINE_W_REPLACE, &sel, doc, true, &why);
        if (ok && ++in == chunk) {
            ok = ops->send (b, NULL, &why);
            b = NULL;
            *docs += in;
            in = 0;
        }
    }
    if (ok && b) {
        ok = ops->send (b, NULL, &why);
        b = NULL;
        *docs += in;
    }
    if (b)
        ops->discard (b);
    if (!ok) {
        ops->end (cur, NULL);
        online_fail (on, err, &why, "copying a namespace to the destination");
    } else if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading a namespace of the source to copy it");
    bson_destroy (&sel);
    return ok;
}

/* The documents of src into dst, in _id order; *docs counted. */
static bool
copy_docs (online_t *on, mongoc_collection_t *src, mongoc_collection_t *dst, int64_t *docs,
           bson_error_t *err)
{
    bson_t *opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}");
    bson_t filter = BSON_INITIALIZER;
    bool ok = online_dest_copy_where (on, src, dst, &filter, opts, docs, err);
    bson_destroy (&filter);
    bson_destroy (opts);
    return ok;
}

/* src's indexes other than _id's made on dst (each as listIndexes gives
 * it, without the "ns" and "v" old servers add and new ones refuse). */
static bool
copy_indexes (online_t *on, mongoc_collection_t *src, mongoc_collection_t *dst,
              const char *coll, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->indexes (on, src);
    const bson_t *ix;
    bson_t cmd, arr;
    bson_error_t why;
    int n = 0;
    bool ok;

    bson_init (&cmd);
    BSON_APPEND_UTF8 (&cmd, "createIndexes", coll);
    BSON_APPEND_ARRAY_BEGIN (&cmd, "indexes", &arr);
    while (ops->next (cur, &ix)) {
        char name[256], key[16];
        bson_t one;
        online_field_utf8 (ix, "name", name, sizeof name);
        if (!strcmp (name, "_id_"))
            continue;
        snprintf (key, sizeof key, "%d", n++);
        bson_init (&one);
        bson_copy_to_excluding_noinit (ix, &one, "ns", "v", NULL);
        BSON_APPEND_DOCUMENT (&arr, key, &one);
        bson_destroy (&one);
    }
    bson_append_array_end (&cmd, &arr);
    ok = ops->end (cur, &why);
    if (!ok)
        online_fail (on, err, &why, "reading a source namespace's indexes");
    else if (n > 0 && !ops->index_command (on, dst, &cmd, NULL, &why))
        ok = online_fail (on, err, &why, "creating a copied namespace's indexes on the "
                          "destination");
    bson_destroy (&cmd);
    return ok;
}

/* Whether the pair's record notes db.coll copied. */
static bool
noted (const bson_t *rec, const char *ns)
{
    bson_iter_t it, a;
    if (!bson_iter_init_find (&it, rec, "copied") || !BSON_ITER_HOLDS_ARRAY (&it) ||
        !bson_iter_recurse (&it, &a))
        return false;
    while (bson_iter_next (&a))
        if (BSON_ITER_HOLDS_UTF8 (&a) && !strcmp (bson_iter_utf8 (&a, NULL), ns))
            return true;
    return false;
}

static bool
note_copied (online_t *on, const char *ns, bson_error_t *err)
{
    bson_t *sel = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    bson_t *u = BCON_NEW ("$addToSet", "{", "copied", BCON_UTF8 (ns), "}");
    bson_error_t why;
    bool ok = online_ops (on)->state_update (on, "pairs", sel, u, false, NULL, &why);
    bson_destroy (sel);
    bson_destroy (u);
    return ok || online_fail (on, err, &why, "noting a namespace copied");
}

/* One namespace (its listCollections document, with "db"). */
static bool
copy_one (online_t *on, const bson_t *one, int64_t *docs, bson_error_t *err)
{
    char db[128], name[256];
    bson_t options = BSON_INITIALIZER;
    bson_iter_t it;
    mongoc_collection_t *src, *dst;
    bool ok;

    online_field_utf8 (one, "db", db, sizeof db);
    online_field_utf8 (one, "name", name, sizeof name);
    if (bson_iter_init_find (&it, one, "options") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t o;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&o, data, len);
        bson_copy_to_excluding_noinit (&o, &options, "uuid", NULL);
    }
    src = online_pair_side (on, ONLINE_SOURCE, db, name);
    dst = online_pair_side (on, ONLINE_DEST, db, name);
    ok = online_pair_create (on, db, name, &options, err) && copy_docs (on, src, dst, docs, err) &&
         copy_indexes (on, src, dst, name, err);
    mongoc_collection_destroy (src);
    mongoc_collection_destroy (dst);
    bson_destroy (&options);
    return ok;
}

bool
online_dest_drop (online_t *on, const char *db, const char *name, const char *what,
                  bson_error_t *err)
{
    mongoc_collection_t *dst = online_pair_side (on, ONLINE_DEST, db, name);
    bson_error_t why;
    bool ok = online_ops (on)->drop (on, dst, &why) || online_drop_gone (&why) ||
              online_fail (on, err, &why, what);
    mongoc_collection_destroy (dst);
    return ok;
}

/* One namespace copied (again, finalize's, the writes stopped: from its
 * drop, so that it is the source's as it is now, documents deleted since
 * the run's copy too), whole again after a
 * transient error, for --retry-for: the create takes "exists" as made,
 * the documents are replaced by _id, so a try cut midway and taken again
 * writes each document once; *docs counts the try that completed. */
static bool
copy_retried (online_t *on, const bson_t *one, bool again, int64_t *docs, bson_error_t *err)
{
    online_retry_t retry = {0, 0};
    char db[128], name[256];

    online_field_utf8 (one, "db", db, sizeof db);
    online_field_utf8 (one, "name", name, sizeof name);
    for (;;) {
        int64_t n = 0;
        if ((!again || online_dest_drop (on, db, name, "dropping a copy to take it again", err)) &&
            copy_one (on, one, &n, err)) {
            *docs += n;
            return true;
        }
        if (!online_retry (on, &retry, err))
            return false;
    }
}

bool
online_dest_copy_all (online_t *on, const bson_t *copies, bool again, int *copied,
                      int64_t *docs, bson_error_t *err)
{
    bson_t rec;
    bool found, ok = online_pair_read (on, &rec, &found, err);
    bson_iter_t it;

    bson_iter_init (&it, copies);
    while (ok && bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t one;
        char db[128], name[256], ns[400];
        bson_iter_document (&it, &len, &data);
        bson_init_static (&one, data, len);
        online_field_utf8 (&one, "db", db, sizeof db);
        online_field_utf8 (&one, "name", name, sizeof name);
        snprintf (ns, sizeof ns, "%s.%s", db, name);
        if (!again && noted (&rec, ns))
            continue;
        ok = online_stop_check (on, "copying the namespaces the plan does not write", err) &&
             copy_retried (on, &one, again, docs, err) && (again || note_copied (on, ns, err));
        *copied += ok;
    }
    bson_destroy (&rec);
    return ok;
}
