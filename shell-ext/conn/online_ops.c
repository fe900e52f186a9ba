/* The server's operations over libmongoc (online.h, "ops"): the one
 * implementation of the table every layer sends its calls through.
 *
 * Each sends exactly the command the code it replaced sent, with the same
 * options, so that what a server sees (and the fault layer counts by
 * command name, online_fault.c) is the same call for call. A write batch
 * is the driver's own object behind the table's opaque type; a cursor,
 * the driver's in a small record of ours (one a read, none per batch or
 * document), so that its first command can be sent again.
 *
 * After a cut (issue 60) each call is sent again here, within
 * --retry-for (online_retry), where that is safe whoever the caller: any
 * call the driver found no server for (the connection cut, the handshake
 * of the next one cut too), since it never went out, a write as well as
 * a read; and a read after any transient error, since reading again
 * changes nothing. A write sent whose reply was lost is not sent again
 * here: its caller checks whether it applied (the switch observes, a
 * batch is replayed as upserts). The lease's renewals, and a connection
 * whose server never answered (a wrong address), fail at once. The
 * policy is online_retry_call's (online_retry.c). */
#include <string.h>

#include "online.h"

typedef struct {
    mongoc_cursor_t *c;
    online_t *on;
    bool read;  /* a find or listIndexes; not an aggregate (one may $merge) */
    bool began; /* a document came: an error now is a later batch's */
    /* keys read one find each (online_points.c): the collection, the
     * keys' copy and the next of them, the finds' options. */
    mongoc_collection_t *coll;
    bson_t *keys, *opts;
    bson_iter_t at;
} cursor_t;

static online_cursor_t *
cursor_new (online_t *on, mongoc_cursor_t *c, bool read)
{
    /* bson_iter_t's alignment is 128, past malloc's */
    cursor_t *k = bson_aligned_alloc0 (BSON_ALIGNOF (cursor_t), sizeof *k);
    k->c = c;
    k->on = on;
    k->read = read;
    return (online_cursor_t *) k;
}

static mongoc_cursor_t *
cursor_of (online_cursor_t *c)
{
    return ((cursor_t *) c)->c;
}

static mongoc_bulk_operation_t *
bulk_of (online_wbatch_t *b)
{
    return (mongoc_bulk_operation_t *) b;
}

static online_cursor_t *
ops_find (online_t *on, mongoc_collection_t *c, const bson_t *filter, const bson_t *opts)
{
    return cursor_new (on, mongoc_collection_find_with_opts (c, filter, opts, NULL), true);
}

/* The sort is the caller's to give in opts ({_id: 1}): a read that ends
 * in a limit wants it there with the limit. */
static online_cursor_t *
ops_range (online_t *on, mongoc_collection_t *c, const bson_iter_t *after, const bson_t *opts)
{
    bson_t filter = BSON_INITIALIZER;
    online_cursor_t *cur;
    if (after)
        online_range_after (after, &filter);
    cur = ops_find (on, c, &filter, opts);
    bson_destroy (&filter);
    return cur;
}

static bool ops_command (online_t *on, mongoc_collection_t *c, const char *db, const bson_t *cmd,
                         bson_t *reply, bson_error_t *why);

/* The next key's find of a cursor of points: false when none is left. */
static bool
point_next (cursor_t *k)
{
    bson_t filter = BSON_INITIALIZER;
    if (!k->keys || !bson_iter_next (&k->at))
        return false;
    bson_append_iter (&filter, "_id", 3, &k->at);
    mongoc_cursor_destroy (k->c);
    k->c = mongoc_collection_find_with_opts (k->coll, &filter, k->opts, NULL);
    k->began = false;
    bson_destroy (&filter);
    return true;
}

static online_cursor_t *
ops_keys (online_t *on, mongoc_collection_t *c, const char *field, const bson_t *keys,
          const bson_t *opts)
{
    bson_t filter = BSON_INITIALIZER, cond;
    online_cursor_t *cur;
    if (online_points_fit (on, c, field, keys, opts, ops_command)) {
        cursor_t *k;
        cur = cursor_new (on, NULL, true);
        k = (cursor_t *) cur;
        k->coll = c;
        k->keys = bson_copy (keys);
        k->opts = opts ? bson_copy (opts) : NULL;
        bson_iter_init (&k->at, k->keys);
        point_next (k);
        bson_destroy (&filter);
        return cur;
    }
    BSON_APPEND_DOCUMENT_BEGIN (&filter, field, &cond);
    BSON_APPEND_ARRAY (&cond, "$in", keys);
    bson_append_document_end (&filter, &cond);
    cur = ops_find (on, c, &filter, opts);
    bson_destroy (&filter);
    return cur;
}

static online_cursor_t *
ops_indexes (online_t *on, mongoc_collection_t *c)
{
    return cursor_new (on, mongoc_collection_find_indexes_with_opts (c, NULL), true);
}

/* A cursor whose first command failed, as online_retry_call allows, is
 * made again (the driver's clone: the same command, not sent yet) and
 * read from the start; one that gave documents already fails (its place
 * on the server is lost). */
static bool
ops_next (online_cursor_t *cur, const bson_t **doc)
{
    cursor_t *k = (cursor_t *) cur;
    online_retry_t r = {0, 0};
    bson_error_t why;
    if (!k)
        return false;
    while (!mongoc_cursor_next (k->c, doc)) {
        mongoc_cursor_t *fresh;
        if (!mongoc_cursor_error (k->c, &why)) {
            /* A point read to its end: the next key's, if any. */
            if (point_next (k))
                continue;
            return false;
        }
        if (k->began || !online_retry_call (k->on, &r, k->read, NULL, &why))
            return false;
        fresh = mongoc_cursor_clone (k->c);
        mongoc_cursor_destroy (k->c);
        k->c = fresh;
    }
    k->began = true;
    return true;
}

static bool
ops_end (online_cursor_t *cur, bson_error_t *why)
{
    bson_error_t none;
    bool ok;
    if (!cur)
        return true;
    ok = !mongoc_cursor_error (cursor_of (cur), why ? why : &none);
    mongoc_cursor_destroy (cursor_of (cur));
    bson_destroy (((cursor_t *) cur)->keys);
    bson_destroy (((cursor_t *) cur)->opts);
    bson_free (cur);
    return ok;
}

static int64_t
ops_count (online_t *on, mongoc_collection_t *c, const bson_t *filter, bson_error_t *why)
{
    online_retry_t r = {0, 0};
    int64_t n;
    while ((n = mongoc_collection_count_documents (c, filter, NULL, NULL, NULL, why)) < 0 &&
           online_retry_call (on, &r, true, NULL, why))
        ;
    return n;
}

static int64_t
ops_estimate (online_t *on, mongoc_collection_t *c, bson_error_t *why)
{
    online_retry_t r = {0, 0};
    int64_t n;
    while ((n = mongoc_collection_estimated_document_count (c, NULL, NULL, NULL, why)) < 0 &&
           online_retry_call (on, &r, true, NULL, why))
        ;
    return n;
}

static online_wbatch_t *
ops_batch (online_t *on, mongoc_collection_t *c)
{
    bson_t opts = BSON_INITIALIZER;
    mongoc_bulk_operation_t *b;
    BSON_APPEND_BOOL (&opts, "ordered", false);
    b = mongoc_collection_create_bulk_operation_with_opts (c, &opts);
    if (on->run->o->write_concern)
        mongoc_bulk_operation_set_write_concern (b, on->run->o->write_concern);
    bson_destroy (&opts);
    return (online_wbatch_t *) b;
}

/* The statement's options: {upsert: true} only when asked, so that the
 * statement sent is the one the code before the table sent. */
static const bson_t *
upsert_opts (bool upsert, bson_t *opts)
{
    bson_init (opts);
    if (upsert)
        BSON_APPEND_BOOL (opts, "upsert", true);
    return upsert ? opts : NULL;
}

static bool
ops_add (online_wbatch_t *b, online_wkind_t kind, const bson_t *sel, const bson_t *doc,
         bool upsert, bson_error_t *why)
{
    mongoc_bulk_operation_t *bulk = bulk_of (b);
    bson_t opts;
    const bson_t *o = upsert_opts (upsert, &opts);
    bool ok = false;
    switch (kind) {
    case ONLINE_W_INSERT:
        ok = mongoc_bulk_operation_insert_with_opts (bulk, doc, NULL, why);
        break;
    case ONLINE_W_UPDATE:
        ok = mongoc_bulk_operation_update_one_with_opts (bulk, sel, doc, o, why);
        break;
    case ONLINE_W_REPLACE:
        ok = mongoc_bulk_operation_replace_one_with_opts (bulk, sel, doc, o, why);
        break;
    case ONLINE_W_DELETE:
        ok = mongoc_bulk_operation_remove_one_with_opts (bulk, sel, NULL, why);
        break;
    case ONLINE_W_DELETE_ALL:
        ok = mongoc_bulk_operation_remove_many_with_opts (bulk, sel, NULL, why);
        break;
    }
    bson_destroy (&opts);
    return ok;
}

static bool
ops_send (online_wbatch_t *b, bson_t *reply, bson_error_t *why)
{
    bool ok = mongoc_bulk_operation_execute (bulk_of (b), reply, why) != 0;
    mongoc_bulk_operation_destroy (bulk_of (b));
    return ok;
}

static void
ops_discard (online_wbatch_t *b)
{
    mongoc_bulk_operation_destroy (bulk_of (b));
}

static bool
write_once (mongoc_collection_t *c, online_wkind_t kind, const bson_t *sel, const bson_t *doc,
            bool upsert, bool many, bson_t *reply, bson_error_t *why)
{
    bson_t opts;
    const bson_t *o = upsert_opts (upsert, &opts);
    bool ok = false;
    switch (kind) {
    case ONLINE_W_INSERT:
        ok = mongoc_collection_insert_one (c, doc, NULL, reply, why);
        break;
    case ONLINE_W_UPDATE:
        ok = mongoc_collection_update_one (c, sel, doc, o, reply, why);
        break;
    case ONLINE_W_REPLACE:
        ok = mongoc_collection_replace_one (c, sel, doc, o, reply, why);
        break;
    case ONLINE_W_DELETE:
    case ONLINE_W_DELETE_ALL:
        ok = many || kind == ONLINE_W_DELETE_ALL
                 ? mongoc_collection_delete_many (c, sel, NULL, reply, why)
                 : mongoc_collection_delete_one (c, sel, NULL, reply, why);
        break;
    }
    bson_destroy (&opts);
    return ok;
}

static bool
ops_write (online_t *on, mongoc_collection_t *c, online_wkind_t kind, const bson_t *sel,
           const bson_t *doc, bool upsert, bool many, bson_t *reply, bson_error_t *why)
{
    online_retry_t r = {0, 0};
    bool ok;
    while (!(ok = write_once (c, kind, sel, doc, upsert, many, reply, why)) &&
           online_retry_call (on, &r, false, reply, why))
        ;
    return ok;
}

static bool
ops_replace_if (online_t *on, mongoc_collection_t *c, const bson_t *sel, const bson_t *want,
                bson_t *reply, bson_error_t *why)
{
    mongoc_find_and_modify_opts_t *fam = mongoc_find_and_modify_opts_new ();
    bson_t extra = BSON_INITIALIZER;
    online_retry_t r = {0, 0};
    bool ok;
    if (want)
        mongoc_find_and_modify_opts_set_update (fam, want);
    else
        mongoc_find_and_modify_opts_set_flags (fam, MONGOC_FIND_AND_MODIFY_REMOVE);
    if (on->run->o->write_concern)
        mongoc_write_concern_append (on->run->o->write_concern, &extra);
    mongoc_find_and_modify_opts_append (fam, &extra);
    while (!(ok = mongoc_collection_find_and_modify_with_opts (c, sel, fam, reply, why)) &&
           online_retry_call (on, &r, false, reply, why))
        ;
    bson_destroy (&extra);
    mongoc_find_and_modify_opts_destroy (fam);
    return ok;
}

/* Without dropTarget unless asked: a rename never drops by default. */
static bool
ops_rename (online_t *on, const char *from, const char *to, bool drop_target, bson_error_t *why)
{
    bson_t *cmd = BCON_NEW ("renameCollection", BCON_UTF8 (from), "to", BCON_UTF8 (to));
    online_retry_t r = {0, 0};
    bool ok;
    if (drop_target)
        BSON_APPEND_BOOL (cmd, "dropTarget", true);
    while (!(ok = mongoc_client_command_simple (on->client, "admin", cmd, NULL, NULL, why)) &&
           online_retry_call (on, &r, false, NULL, why))
        ;
    bson_destroy (cmd);
    return ok;
}

static bool
ops_drop (online_t *on, mongoc_collection_t *c, bson_error_t *why)
{
    online_retry_t r = {0, 0};
    bool ok;
    while (!(ok = mongoc_collection_drop (c, why)) && online_retry_call (on, &r, false, NULL, why))
        ;
    return ok;
}

static bool
ops_index_command (online_t *on, mongoc_collection_t *c, const bson_t *cmd, bson_t *reply,
                   bson_error_t *why)
{
    online_retry_t r = {0, 0};
    bool ok;
    while (!(ok = mongoc_collection_write_command_with_opts (c, cmd, NULL, reply, why)) &&
           online_retry_call (on, &r, false, reply, why))
        ;
    return ok;
}

static bool
ops_drop_index (online_t *on, mongoc_collection_t *c, const char *name, bson_error_t *why)
{
    online_retry_t r = {0, 0};
    bool ok;
    while (!(ok = mongoc_collection_drop_index_with_opts (c, name, NULL, why)) &&
           online_retry_call (on, &r, false, NULL, why))
        ;
    return ok;
}

static bool
ops_stream (online_t *on, const char *db, const bson_t *cmd, bson_t *reply, bson_error_t *why)
{
    online_retry_t r = {0, 0};
    bool ok;
    while (!(ok = mongoc_client_command_simple (on->client, db, cmd, NULL, reply, why)) &&
           online_retry_call (on, &r, false, reply, why))
        ;
    return ok;
}

static online_cursor_t *
ops_aggregate (online_t *on, mongoc_collection_t *c, const bson_t *pipeline, const bson_t *opts)
{
    return cursor_new (on, mongoc_collection_aggregate (c, MONGOC_QUERY_NONE, pipeline, opts, NULL),
                       false);
}

/* Whether cmd only reads, and is sent again after any transient error:
 * its reply lost leaves at most a cursor the server times out. Not
 * getMore (a batch whose reply was lost is gone from its cursor), nor
 * an aggregate (one may $out). */
static bool
reads_only (const bson_t *cmd)
{
    static const char *const names[] = {"buildInfo", "collStats", "count", "dbStats",
                                         "distinct", "find", "hello", "isMaster",
                                         "listCollections", "listDatabases", "listIndexes",
                                         "ping", "serverStatus"};
    bson_iter_t it;
    if (!bson_iter_init (&it, cmd) || !bson_iter_next (&it))
        return false;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp (bson_iter_key (&it), names[i]))
            return true;
    return false;
}

/* With a collection, through it: the driver has no public way from a
 * collection to its client, and this sends the command to c's database
 * on c's own connection. */
static bool
ops_command (online_t *on, mongoc_collection_t *c, const char *db, const bson_t *cmd,
             bson_t *reply, bson_error_t *why)
{
    online_retry_t r = {0, 0};
    bool ok;
    while (!(ok = c ? mongoc_collection_command_simple (c, cmd, NULL, reply, why)
                    : mongoc_client_command_simple (on->client, db, cmd, NULL, reply, why)) &&
           online_retry_call (on, &r, reads_only (cmd), reply, why))
        ;
    return ok;
}

/* No sort: a capped collection is read in insertion order, and FerretDB
 * sorts {$natural: 1} itself, on top of the read. */
static bool
ops_oplog (mongoc_client_t *client, const bson_t *filter, online_entry_fn fn, void *arg,
           bson_error_t *why)
{
    mongoc_collection_t *c = mongoc_client_get_collection (client, "local", "oplog.rs");
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts (c, filter, NULL, NULL);
    const bson_t *e;
    bool ok;
    while (mongoc_cursor_next (cur, &e))
        fn (e, arg);
    ok = !mongoc_cursor_error (cur, why);
    mongoc_cursor_destroy (cur);
    mongoc_collection_destroy (c);
    return ok;
}

static bool
ops_state_read (online_t *on, const char *coll, const bson_t *filter, bson_t *doc, bool *found,
                bson_error_t *why)
{
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, coll);
    online_cursor_t *cur = ops_find (on, c, filter, NULL);
    const bson_t *d;
    bool ok;
    bson_init (doc);
    *found = ops_next (cur, &d);
    if (*found)
        bson_concat (doc, d);
    ok = ops_end (cur, why);
    mongoc_collection_destroy (c);
    return ok;
}

static bool
ops_state_insert (online_t *on, const char *coll, const bson_t *doc, bson_error_t *why)
{
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, coll);
    bool ok = ops_write (on, c, ONLINE_W_INSERT, NULL, doc, false, false, NULL, why);
    mongoc_collection_destroy (c);
    return ok;
}

static bool
ops_state_update (online_t *on, const char *coll, const bson_t *sel, const bson_t *u, bool upsert,
                  bson_t *reply, bson_error_t *why)
{
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, coll);
    bool ok = ops_write (on, c, ONLINE_W_UPDATE, sel, u, upsert, false, reply, why);
    mongoc_collection_destroy (c);
    return ok;
}

static bool
ops_state_delete (online_t *on, const char *coll, const bson_t *filter, bool many,
                  bson_error_t *why)
{
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, coll);
    bool ok = ops_write (on, c, ONLINE_W_DELETE, filter, NULL, false, many, NULL, why);
    mongoc_collection_destroy (c);
    return ok;
}

/* online.h. A handle is no call of the server, but it is the driver's:
 * made here, beside the calls that use it, so that the connection's file
 * (online_conn.c), which reads through this table, is not also called by
 * it (no circle of files: scripts/check_layers.sh). */
mongoc_collection_t *
online_collection (online_t *on, const char *db, const char *coll)
{
    if (on->run->pair) { /* --to-uri: the source's or the destination's (online_ops_pair.c) */
        mongoc_client_t *client = online_pair_client (on, db, coll);
        return mongoc_client_get_collection (client, db, client == on->client
                                                            ? online_pair_name (on, db, coll)
                                                            : coll);
    }
    return mongoc_client_get_collection (on->client, db, coll);
}

const online_ops_t online_ops_mongoc = {
    .name = "libmongoc",
    .find = ops_find,
    .range = ops_range,
    .keys = ops_keys,
    .indexes = ops_indexes,
    .next = ops_next,
    .end = ops_end,
    .count = ops_count,
    .estimate = ops_estimate,
    .batch = ops_batch,
    .add = ops_add,
    .send = ops_send,
    .discard = ops_discard,
    .write = ops_write,
    .replace_if = ops_replace_if,
    .rename = ops_rename,
    .drop = ops_drop,
    .index_command = ops_index_command,
    .drop_index = ops_drop_index,
    .coll_mod = online_ops_mongoc_coll_mod,
    .stream = ops_stream,
    .oplog = ops_oplog,
    .aggregate = ops_aggregate,
    .command = ops_command,
    .state_read = ops_state_read,
    .state_insert = ops_state_insert,
    .state_update = ops_state_update,
    .state_delete = ops_state_delete,
};

/* The documents of a cursor reply's batch, each to each; its cursor's
 * id, and the collection of its ns (after the first dot) a getMore names. */
static void
batch_each (const bson_t *reply, online_entry_fn each, void *arg, int64_t *id, const char **more)
{
    bson_iter_t it, c, d;
    *id = 0;
    *more = NULL;
    if (!bson_iter_init_find (&it, reply, "cursor") || !bson_iter_recurse (&it, &c))
        return;
    while (bson_iter_next (&c)) {
        const char *k = bson_iter_key (&c);
        if (!strcmp (k, "id")) {
            *id = bson_iter_as_int64 (&c);
        } else if (!strcmp (k, "ns") && BSON_ITER_HOLDS_UTF8 (&c)) {
            *more = strchr (bson_iter_utf8 (&c, NULL), '.');
            *more = *more ? *more + 1 : NULL;
        } else if ((!strcmp (k, "firstBatch") || !strcmp (k, "nextBatch")) &&
                   bson_iter_recurse (&c, &d)) {
            while (bson_iter_next (&d)) {
                const uint8_t *data;
                uint32_t len;
                bson_t doc;
                if (!BSON_ITER_HOLDS_DOCUMENT (&d))
                    continue;
                bson_iter_document (&d, &len, &data);
                if (bson_init_static (&doc, data, len))
                    each (&doc, arg);
            }
        }
    }
}

/* online.h. A getMore names the collection of the reply's ns, as the
 * driver's own cursors do. */
bool
online_command_each (online_t *on, mongoc_collection_t *c, const char *db, const bson_t *cmd,
                     online_entry_fn each, void *arg, bson_error_t *why)
{
    bson_t *more_cmd = NULL;
    bool ok = true;

    for (const bson_t *next = cmd; ok && next;) {
        bson_t reply;
        int64_t id;
        const char *more;
        ok = online_ops (on)->command (on, c, db, next, &reply, why);
        if (more_cmd)
            bson_destroy (more_cmd);
        more_cmd = NULL;
        next = NULL;
        if (ok) {
            batch_each (&reply, each, arg, &id, &more);
            if (id && more)
                next = more_cmd = BCON_NEW ("getMore", BCON_INT64 (id), "collection", BCON_UTF8 (more));
        }
        bson_destroy (&reply);
    }
    return ok;
}

typedef struct {
    char **names;
    size_t n;
} names_t;

static void
name_add (const bson_t *doc, void *arg)
{
    names_t *l = arg;
    bson_iter_t it;
    if (!bson_iter_init_find (&it, doc, "name") || !BSON_ITER_HOLDS_UTF8 (&it))
        return;
    l->names = bson_realloc (l->names, (l->n + 2) * sizeof *l->names);
    l->names[l->n++] = bson_strdup (bson_iter_utf8 (&it, NULL));
    l->names[l->n] = NULL;
}

/* online.h. As the driver's own listing asks: listCollections with the
 * filter and nameOnly. */
char **
online_collection_names (online_t *on, const char *db, const bson_t *filter, bson_error_t *why)
{
    bson_t *cmd = BCON_NEW ("listCollections", BCON_INT32 (1));
    names_t l = {bson_malloc0 (sizeof (char *)), 0};
    if (filter)
        BSON_APPEND_DOCUMENT (cmd, "filter", filter);
    BSON_APPEND_BOOL (cmd, "nameOnly", true);
    if (!online_command_each (on, NULL, db, cmd, name_add, &l, why)) {
        bson_strfreev (l.names);
        l.names = NULL;
    }
    bson_destroy (cmd);
    return l.names;
}
