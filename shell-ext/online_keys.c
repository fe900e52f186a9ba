/* The key map (online_changes.h): which key each join partner had when
 * remodel last read it, so that a change to the partner recomputes the
 * results it was in, not only those it is in now.
 *
 * Written wherever partners are fetched for a batch while the plan
 * follows a change log (run, sync), before the batch's checkpoint, as one
 * document per partner and key value:
 *   {_id: {plan, step, pass, id: <partner's _id>, h: <the value's hash>},
 *    k: <the value>}
 * inserted, never updated: an entry there already is refused as a
 * duplicate _id, which is what a batch replayed after a crash, or a
 * partner read again with the same key, should do. So writing the map
 * costs one insert command a batch and no read (FerretDB 1.x answers an
 * upsert, and a find by _id $in, by scanning the collection). Entries
 * only grow while the partner lives (a partner read with key a, then b,
 * was in results of both); a stale one costs a driver recomputed for
 * nothing, a missing one would leave a result wrong. They are read only
 * by a sync, by partner, through an index on _id's fields, and dropped
 * with the plan (finalize, rollback, --restart). */
#include <string.h>

#include "online_changes.h"
#include "remodel/docpath.h"

struct online_keys {
    online_t *on;
    const rm_step_t *s;
    size_t pass;
    const rm_path_t *key;
    mongoc_collection_t *coll;  /* <state-db>.keys */
    online_docs_t pending;      /* entries noted, written by flush */
    bool indexed;               /* the lookup's index asked for */
    bool known_first;           /* flush reads which are there first */
};

online_keys_t *
online_keys_new (online_t *on, const rm_step_t *s, size_t pass, const rm_path_t *key)
{
    online_keys_t *k = bson_malloc0 (sizeof *k);
    /* A run's partners are mostly new to the map; a sync's, mostly there
     * already, and a duplicate _id is slow to refuse (mongo-java-server:
     * about 1.4 ms each). */
    k->known_first = on->incr_running;
    k->on = on;
    k->s = s;
    k->pass = pass;
    k->key = key;
    k->coll = online_collection (on, on->o->state_db, "keys");
    online_docs_init (&k->pending);
    return k;
}

void
online_keys_destroy (online_keys_t *k)
{
    if (!k)
        return;
    mongoc_collection_destroy (k->coll);
    online_docs_destroy (&k->pending);
    bson_free (k);
}

/* The fields of this pass's entries: {_id.plan, _id.step, _id.pass}. */
static void
pass_filter (const online_keys_t *k, bson_t *f)
{
    BSON_APPEND_UTF8 (f, "_id.plan", k->on->names.id);
    BSON_APPEND_INT64 (f, "_id.step", (int64_t) k->s->index);
    BSON_APPEND_INT64 (f, "_id.pass", (int64_t) k->pass);
}

typedef struct {
    bson_t *arr;
    uint32_t *n;
} values_t;

static bool
add_value (const bson_iter_t *v, void *ctx)
{
    values_t *vs = ctx;
    char key[16];
    const char *kp;
    size_t kl = bson_uint32_to_string ((*vs->n)++, &kp, key, sizeof key);
    if (v)
        bson_append_iter (vs->arr, kp, (int) kl, v);
    else
        bson_append_null (vs->arr, kp, (int) kl);
    return true;
}

void
online_keys_values (const uint8_t *doc, uint32_t len, const rm_path_t *key, bson_t *arr,
                    uint32_t *n)
{
    values_t vs = {arr, n};
    /* Each element of an array and the array itself, null for a missing
     * one: every driver key that can match it. */
    if (rm_path_visit (doc, len, key, true, true, add_value, &vs) == 0)
        add_value (NULL, &vs);
}

bool
online_keys_note (online_keys_t *k, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    bson_iter_t id, v;
    bson_t vals = BSON_INITIALIZER;
    uint32_t n = 0;

    if (!rm_doc_field (doc, len, "_id", 3, &id))
        return true;
    online_keys_values (doc, len, k->key, &vals, &n);
    if (bson_iter_init (&v, &vals))
        while (bson_iter_next (&v)) {
            bson_t e = BSON_INITIALIZER, in;
            BSON_APPEND_DOCUMENT_BEGIN (&e, "_id", &in);
            BSON_APPEND_UTF8 (&in, "plan", k->on->names.id);
            BSON_APPEND_INT64 (&in, "step", (int64_t) k->s->index);
            BSON_APPEND_INT64 (&in, "pass", (int64_t) k->pass);
            bson_append_iter (&in, "id", 2, &id);
            BSON_APPEND_INT64 (&in, "h", (int64_t) online_value_hash (&v));
            bson_append_document_end (&e, &in);
            bson_append_iter (&e, "k", 1, &v);
            online_docs_add (&k->pending, bson_get_data (&e), e.len, -1);
            bson_destroy (&e);
        }
    bson_destroy (&vals);
    return true;
}

/* Whether every error of a bulk's reply is a duplicate _id. */
static bool
only_duplicates (const bson_t *reply)
{
    bson_iter_t it, e, code;
    bool any = false;
    if (!bson_iter_init_find (&it, reply, "writeErrors") || !bson_iter_recurse (&it, &e))
        return false;
    while (bson_iter_next (&e)) {
        if (!bson_iter_recurse (&e, &code) || !bson_iter_find (&code, "code") ||
            bson_iter_as_int64 (&code) != 11000)
            return false;
        any = true;
    }
    return any && !(bson_iter_init_find (&it, reply, "writeConcernErrors") &&
                    bson_iter_recurse (&it, &e) && bson_iter_next (&e));
}

static void ensure_index (online_keys_t *k);

/* Leaves in pending only the entries the map lacks: one read of the
 * partners' entries by _id.id (through the index; a find by whole _ids,
 * documents, takes mongo-java-server 3 s for a thousand). */
static bool
drop_known (online_keys_t *k, bson_error_t *err)
{
    online_docs_t *p = &k->pending, *keep;
    bson_t filter = BSON_INITIALIZER, cond, in;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
    online_idset_t there;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    memset (&there, 0, sizeof there);
    ensure_index (k);
    pass_filter (k, &filter);
    BSON_APPEND_DOCUMENT_BEGIN (&filter, "_id.id", &cond);
    BSON_APPEND_ARRAY_BEGIN (&cond, "$in", &in);
    for (size_t i = 0; i < p->n; i++) {
        bson_iter_t id;
        char key[16];
        const char *kp;
        size_t kl = bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        bson_iter_init_from_data (&id, online_doc_bytes (p, i), p->docs[i].len);
        if (bson_iter_find_descendant (&id, "_id.id", &id))
            bson_append_iter (&in, kp, (int) kl, &id);
    }
    bson_append_array_end (&cond, &in);
    bson_append_document_end (&filter, &cond);
    cur = mongoc_collection_find_with_opts (k->coll, &filter, opts, NULL);
    while (mongoc_cursor_next (cur, &doc))
        online_idset_add (&there, online_id_hash (bson_get_data (doc), doc->len));
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (k->on, err, &why, "reading the join's key map");
    mongoc_cursor_destroy (cur);
    bson_destroy (opts);
    bson_destroy (&filter);
    if (ok) {
        keep = bson_malloc (sizeof *keep);
        online_docs_init (keep);
        for (size_t i = 0; i < p->n; i++)
            if (!online_idset_has (&there, online_id_hash (online_doc_bytes (p, i), p->docs[i].len)))
                online_docs_add (keep, online_doc_bytes (p, i), p->docs[i].len, -1);
        online_docs_destroy (p);
        *p = *keep;
        bson_free (keep);
    }
    online_idset_destroy (&there);
    return ok;
}

bool
online_keys_flush (online_keys_t *k, bson_error_t *err)
{
    online_docs_t *p = &k->pending;
    bson_t opts = BSON_INITIALIZER, reply;
    mongoc_bulk_operation_t *b;
    bson_error_t why;
    bool ok = true;

    if (!p->n)
        return true;
    if (k->known_first && !drop_known (k, err))
        return false;
    if (!p->n)
        return true;
    BSON_APPEND_BOOL (&opts, "ordered", false);
    b = mongoc_collection_create_bulk_operation_with_opts (k->coll, &opts);
    if (k->on->o->write_concern)
        mongoc_bulk_operation_set_write_concern (b, k->on->o->write_concern);
    for (size_t i = 0; ok && i < p->n; i++) {
        bson_t e;
        bson_init_static (&e, online_doc_bytes (p, i), p->docs[i].len);
        ok = mongoc_bulk_operation_insert_with_opts (b, &e, NULL, &why) ||
             online_fail (k->on, err, &why, "writing the join's key map");
    }
    /* Fenced like every write: a run that lost its lease sends nothing. */
    if (ok && online_lease_check (k->on, err)) {
        ok = mongoc_bulk_operation_execute (b, &reply, &why) || only_duplicates (&reply) ||
             online_fail (k->on, err, &why, "writing the join's key map");
        bson_destroy (&reply);
    } else {
        ok = false;
    }
    mongoc_bulk_operation_destroy (b);
    bson_destroy (&opts);
    online_docs_reset (p);
    return ok;
}

/* The index a sync reads the map by (asked once; an error is only a
 * slower read). */
static void
ensure_index (online_keys_t *k)
{
    bson_t *cmd;
    if (k->indexed)
        return;
    k->indexed = true;
    cmd = BCON_NEW ("createIndexes", BCON_UTF8 ("keys"), "indexes", "[", "{", "key", "{",
                    "_id.plan", BCON_INT32 (1), "_id.step", BCON_INT32 (1), "_id.pass",
                    BCON_INT32 (1), "_id.id", BCON_INT32 (1), "}", "name",
                    BCON_UTF8 ("remodel_partner"), "}", "]");
    mongoc_collection_command_simple (k->coll, cmd, NULL, NULL, NULL);
    bson_destroy (cmd);
}

bool
online_keys_old (online_keys_t *k, const bson_t *ids, bson_t *arr, uint32_t *n, bson_error_t *err)
{
    bson_t filter = BSON_INITIALIZER, cond;
    bson_t *opts = BCON_NEW ("projection", "{", "k", BCON_INT32 (1), "}");
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    ensure_index (k);
    pass_filter (k, &filter);
    BSON_APPEND_DOCUMENT_BEGIN (&filter, "_id.id", &cond);
    BSON_APPEND_ARRAY (&cond, "$in", ids);
    bson_append_document_end (&filter, &cond);
    cur = mongoc_collection_find_with_opts (k->coll, &filter, opts, NULL);
    while (mongoc_cursor_next (cur, &doc)) {
        bson_iter_t v;
        char key[16];
        const char *kp;
        size_t kl;
        if (!bson_iter_init_find (&v, doc, "k"))
            continue;
        kl = bson_uint32_to_string ((*n)++, &kp, key, sizeof key);
        bson_append_iter (arr, kp, (int) kl, &v);
    }
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (k->on, err, &why, "reading the join's key map");
    mongoc_cursor_destroy (cur);
    bson_destroy (opts);
    bson_destroy (&filter);
    return ok;
}

bool
online_keys_drop_plan (online_t *on, bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, on->o->state_db, "keys");
    bson_t *q = BCON_NEW ("_id.plan", BCON_UTF8 (on->names.id));
    bson_error_t why;
    bool ok = online_lease_check (on, err) &&
              (mongoc_collection_delete_many (c, q, NULL, NULL, &why) ||
               online_fail (on, err, &why, "forgetting the join's key map"));
    bson_destroy (q);
    mongoc_collection_destroy (c);
    return ok;
}
