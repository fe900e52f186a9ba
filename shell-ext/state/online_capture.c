/* Change capture (online_state.h): what the server offers to follow the
 * application's writes, where its log stood before a run read anything,
 * and whether that point is still in the log.
 *
 * Three modes, tried in this order:
 *   change streams: a $changeStream aggregate opens on the first
 *     collection the plan reads (MongoDB replica sets and sharded
 *     clusters; mongo-java-server started with its oplog). The point is
 *     the stream's resume token: the first reply's postBatchResumeToken
 *     (MongoDB 4.0.7+), with the reply's operationTime as the cluster time
 *     (global: startAtOperationTime opens any collection's stream there).
 *     A server that gives neither (mongo-java-server) gets a sentinel
 *     instead: a stream is opened on the state database's collection
 *     capture, remodel inserts a document of its own there, and the token
 *     of that insert's event is the point. Such a server's tokens are
 *     positions in its one oplog, not per stream, so a source collection's
 *     stream resumes from it; and since the sentinel is written before any
 *     source document is read, every write a read may have missed comes
 *     after it.
 *   oplog: no change streams, but local.oplog.rs exists and is capped
 *     (FerretDB 1.18+ with --repl-set-name; old MongoDB). The point is its
 *     last entry's ts, taken after the plan's record was written (so the
 *     oplog holds at least that entry).
 *   none: a standalone server. Every sync, verify and finalize rescans the
 *     collections; the run says what that costs.
 *
 * The point lives in the plan's record (online_state.c) as
 *   capture {mode: "changeStream"|"oplog"|"none", token, ts, sentinel, db,
 *            coll (where the stream was opened), taken}
 * written once, when a run begins the plan (or --restart begins it again);
 * a resumed run keeps it, so no write made during any part of the copy is
 * missed. A sync moves it on once its results cover the log up to a
 * newer point (online_follow.c).
 *
 * --to-uri: the log followed is the source's, where the application
 * writes; the point is kept on the destination with the plan's record.
 * Every read of the log goes to the source through a view of its
 * connection (online_pair_log), by the code above; the one write, the
 * sentinel, is never made there: its oplog's position stands in. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_interrupt.h"
#include "online_state.h"
#include "remodel/cli.h"
#include "remodel/extjson.h"

void
online_capture_init (online_capture_t *c)
{
    memset (c, 0, sizeof *c);
    bson_init (&c->token);
    bson_init (&c->sources);
}

void
online_capture_destroy (online_capture_t *c)
{
    bson_destroy (&c->token);
    bson_destroy (&c->sources);
}

const char *
online_capture_name (online_capture_mode_t m)
{
    return m == ONLINE_CAPTURE_STREAM ? "change streams"
           : m == ONLINE_CAPTURE_OPLOG ? "oplog"
                                        : "none";
}

/* The first namespace the plan reads: a change stream opens there. On a
 * collection, not its database: mongo-java-server opens a database's
 * stream (aggregate: 1) but delivers no event on it. */
static const rm_nsref_t *
source_ns (online_t *on)
{
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const rm_nsref_t *in[4];
        if (rm_step_inputs (&on->run->plan.steps[i], in, 4) > 0)
            return in[0];
    }
    return NULL;
}

/* Best effort: a cursor left open costs the server until it times out. */
static void
kill_cursor (online_t *on, const char *db, const bson_t *reply)
{
    bson_iter_t it;
    int64_t id = 0;
    const char *ns = NULL, *coll;
    bson_t *cmd;

    if (bson_iter_init (&it, reply) && bson_iter_find_descendant (&it, "cursor.id", &it))
        id = bson_iter_as_int64 (&it);
    if (bson_iter_init (&it, reply) && bson_iter_find_descendant (&it, "cursor.ns", &it) &&
        BSON_ITER_HOLDS_UTF8 (&it))
        ns = bson_iter_utf8 (&it, NULL);
    if (!id || !ns || !(coll = strchr (ns, '.')))
        return;
    cmd = BCON_NEW ("killCursors", BCON_UTF8 (coll + 1), "cursors", "[", BCON_INT64 (id), "]");
    online_ops (on)->stream (on, db, cmd, NULL, NULL);
    bson_destroy (cmd);
}

/* Opens a stream on db.coll (stage: the $changeStream's options), the
 * reply in *reply. false with why: the server refused (why->code its
 * code, 0 when it gave none, as mongo-java-server without its oplog). */
static bool
open_stream (online_t *on, const char *db, const char *coll, const bson_t *stage, bson_t *reply,
             bson_error_t *why)
{
    bson_t *cmd = BCON_NEW ("aggregate", BCON_UTF8 (coll), "pipeline", "[", "{", "$changeStream",
                            BCON_DOCUMENT (stage), "}", "]", "cursor", "{", "}");
    bool ok = online_ops (on)->stream (on, db, cmd, reply, why);
    bson_destroy (cmd);
    return ok;
}

/* A network error is not an answer about the server's features. */
static bool
network (const bson_error_t *why)
{
    return why->domain == MONGOC_ERROR_STREAM || why->domain == MONGOC_ERROR_SERVER_SELECTION;
}

/* What a stream's first reply tells of where the log stands. */
static void
copy_point (online_capture_t *c, const bson_t *reply)
{
    bson_iter_t it;
    bson_t tok;
    if (online_stream_token (reply, &tok)) {
        bson_reinit (&c->token);
        bson_concat (&c->token, &tok);
    }
    if (bson_iter_init_find (&it, reply, "operationTime") && BSON_ITER_HOLDS_TIMESTAMP (&it)) {
        bson_iter_timestamp (&it, &c->ts_t, &c->ts_i);
        c->has_ts = true;
    }
}

/* One edge of local.oplog.rs: what a call asks and what it found. */
typedef struct {
    int dir;
    uint32_t t, i;
    bool found;
    const online_opts_t *o;     /* the run's options and table, for its own client */
    const online_ops_t *ops;
} edge_t;

/* The first is asked without a sort: a capped collection is read in
 * insertion order anyway, and FerretDB 1.x answers {$natural: 1} by
 * sorting the whole oplog (1 s for 120 MB, most of what status took), the
 * first entry without one in a millisecond. */
static bool
edge_read (mongoc_client_t *client, void *arg, bson_error_t *why)
{
    edge_t *e = arg;
    online_t own;
    online_run_t scratch;
    mongoc_collection_t *c;
    bson_t q = BSON_INITIALIZER;
    bson_t *opts = e->dir < 0 ? BCON_NEW ("sort", "{", "$natural", BCON_INT32 (-1), "}", "limit",
                                          BCON_INT64 (1), "projection", "{", "ts", BCON_INT32 (1),
                                          "}")
                              : BCON_NEW ("limit", BCON_INT64 (1), "projection", "{", "ts",
                                          BCON_INT32 (1), "}");
    online_cursor_t *cur;
    const bson_t *doc;
    bson_iter_t it;
    bool ok;

    /* The table's read on this call's own connection. */
    memset (&own, 0, sizeof own);
    memset (&scratch, 0, sizeof scratch);
    scratch.o = e->o;
    scratch.ops = e->ops;
    own.run = &scratch;
    own.client = client;
    c = online_collection (&own, "local", "oplog.rs");
    cur = online_ops (&own)->find (&own, c, &q, opts);
    e->found = false;
    if (online_ops (&own)->next (cur, &doc) && bson_iter_init_find (&it, doc, "ts") &&
        BSON_ITER_HOLDS_TIMESTAMP (&it)) {
        bson_iter_timestamp (&it, &e->t, &e->i);
        e->found = true;
    }
    ok = online_ops (&own)->end (cur, why);
    bson_destroy (opts);
    bson_destroy (&q);
    mongoc_collection_destroy (c);
    return ok;
}

/* local.oplog.rs's first (dir 1) or last (dir -1) entry's ts; *found
 * false when it has none. The last is asked on a call a signal cuts
 * short (online_interrupt.h): FerretDB 1.x has no sort it does not do
 * itself, and no range it filters in its SQL, so that one entry costs a
 * read of the whole oplog (16 s at remodel-gen scale 20, under load), and
 * no query found there answers it faster. */
bool
online_oplog_edge (online_t *on, int dir, uint32_t *t, uint32_t *i, bool *found, bson_error_t *err)
{
    edge_t *e = bson_malloc0 (sizeof *e);
    bson_error_t why;
    bool ok, stopped = false;

    e->dir = dir;
    e->o = on->run->o;
    e->ops = on->run->ops;
    if (dir < 0)
        ok = online_call_interruptible (on, edge_read, e, bson_free, "the server's last oplog "
                                        "entry (local.oplog.rs, read whole by some servers)",
                                        "while waiting for the oplog's last entry (nothing read "
                                        "or written for it: run the command again)",
                                        &stopped, &why, err);
    else
        ok = edge_read (on->client, e, &why);
    if (stopped)
        return false; /* e is the call's to free */
    *found = ok && e->found;
    if (*found) {
        *t = e->t;
        *i = e->i;
    }
    bson_free (e);
    return ok || online_fail (on, err, &why, "reading local.oplog.rs");
}

/* local.oplog.rs is there and capped: what oplog tailing needs (a
 * collection of that name that is not capped is no server's oplog). */
static bool
oplog_there (online_t *on, bool *yes, bson_error_t *err)
{
    bson_t *cmd = BCON_NEW ("listCollections", BCON_INT32 (1), "filter", "{", "name",
                            BCON_UTF8 ("oplog.rs"), "}");
    bson_t reply;
    bson_iter_t it, doc;
    bson_error_t why;
    bool ok = true;

    *yes = false;
    if (online_ops (on)->command (on, NULL, "local", cmd, &reply, &why)) {
        if (bson_iter_init (&it, &reply) &&
            bson_iter_find_descendant (&it, "cursor.firstBatch", &it) &&
            BSON_ITER_HOLDS_ARRAY (&it) && bson_iter_recurse (&it, &doc))
            while (bson_iter_next (&doc)) {
                bson_iter_t cap;
                if (BSON_ITER_HOLDS_DOCUMENT (&doc) && bson_iter_recurse (&doc, &cap) &&
                    bson_iter_find_descendant (&cap, "options.capped", &cap))
                    *yes = bson_iter_as_bool (&cap);
            }
    } else if (network (&why)) {
        /* A server that keeps local to itself refuses: no oplog for us. */
        ok = online_fail (on, err, &why, "looking for local.oplog.rs");
    }
    bson_destroy (&reply);
    bson_destroy (cmd);
    return ok;
}

/* What the server (a view of the source's, with --to-uri) offers, and
 * where its log stands: the mode and the point's ts or token. oplog:
 * whether local.oplog.rs may be asked for; edge: whether its last entry
 * is (false: the caller's read of the oplog gives it). */
static bool
detect (online_t *on, online_capture_t *c, const char *db, const char *coll, bool oplog,
        bool edge, bson_error_t *err)
{
    bson_t reply, stage = BSON_INITIALIZER;
    bson_error_t why;
    bool yes;

    if (open_stream (on, db, coll, &stage, &reply, &why)) {
        c->mode = ONLINE_CAPTURE_STREAM;
        copy_point (c, &reply);
        kill_cursor (on, db, &reply);
        bson_destroy (&reply);
        bson_destroy (&stage);
        return true;
    }
    bson_destroy (&reply);
    bson_destroy (&stage);
    if (network (&why))
        return online_fail (on, err, &why, "asking the server for a change stream");
    yes = false;
    if (oplog && !oplog_there (on, &yes, err))
        return false;
    c->mode = yes ? ONLINE_CAPTURE_OPLOG : ONLINE_CAPTURE_NONE;
    if (yes && edge) {
        bool found;
        if (!online_oplog_edge (on, -1, &c->ts_t, &c->ts_i, &found, err))
            return false;
        c->has_ts = found;
    }
    return true;
}

/* --to-uri: the source's log (its streams, or its oplog) is what the
 * application writes to; the destination's says nothing of those
 * writes. Read through a view of the source's connection
 * (online_pair_log), which is only read. Its oplog is asked for only
 * where it is a replica set member: mongo-java-server makes a database
 * (local) of any name a read asks, and only a member keeps an oplog. */
static bool
capture_detect (online_t *on, online_capture_t *c, bool edge, bson_error_t *err)
{
    const rm_nsref_t *ns = source_ns (on);
    const char *db = ns ? ns->db : "admin", *coll = ns ? ns->coll : "remodel";
    online_run_t view_run;
    online_t view, *src = online_pair_log (on, &view, &view_run);
    bool ok;

    bson_reinit (&c->token);
    c->has_ts = c->sentinel = false;
    snprintf (c->db, sizeof c->db, "%s", db);
    snprintf (c->coll, sizeof c->coll, "%s", coll);
    ok = detect (src, c, db, coll, !on->run->pair || *on->run->pair->caps.set_name, edge, err);
    online_pair_log_end (on, src);
    return ok;
}

bool
online_capture_detect (online_t *on, online_capture_t *c, bson_error_t *err)
{
    return capture_detect (on, c, true, err);
}

bool
online_capture_detect_mode (online_t *on, online_capture_t *c, bson_error_t *err)
{
    return capture_detect (on, c, false, err);
}

/* The token of the event of the document oid in a getMore's reply, into
 * token; false when that event is not in it. */
static bool
sentinel_event (const bson_t *reply, const bson_oid_t *oid, bson_t *token)
{
    bson_iter_t it, ev, e, k;
    if (!bson_iter_init (&it, reply) ||
        !bson_iter_find_descendant (&it, "cursor.nextBatch", &it) || !bson_iter_recurse (&it, &ev))
        return false;
    while (bson_iter_next (&ev)) {
        const uint8_t *data;
        uint32_t len;
        bson_t tok;
        /* An insert's documentKey is right on every server. */
        if (!bson_iter_recurse (&ev, &e) ||
            !bson_iter_find_descendant (&e, "documentKey._id", &k) || !BSON_ITER_HOLDS_OID (&k) ||
            bson_oid_compare (bson_iter_oid (&k), oid))
            continue;
        if (!bson_iter_recurse (&ev, &e) || !bson_iter_find (&e, "_id") ||
            !BSON_ITER_HOLDS_DOCUMENT (&e))
            return false;
        bson_iter_document (&e, &len, &data);
        if (!bson_init_static (&tok, data, len))
            return false;
        bson_reinit (token);
        bson_concat (token, &tok);
        return true;
    }
    return false;
}

/* The sentinel's event, on a server whose streams give no token but
 * their events' (see the top). Events of other writers to the state
 * database may come before it: any of them would do (an earlier point
 * only means more to replay), but the sentinel's own is the latest that
 * is safe, so the one kept. */
static bool
sentinel_point (online_t *on, online_capture_t *c, bson_error_t *err)
{
    const char *sdb = on->run->o->state_db;
    bson_t reply, stage = BSON_INITIALIZER, *doc, *more;
    bson_error_t why;
    bson_oid_t oid;
    bson_iter_t it;
    int64_t id = 0;
    bool ok, seen = false;

    if (!open_stream (on, sdb, "capture", &stage, &reply, &why)) {
        bson_destroy (&reply);
        bson_destroy (&stage);
        return online_fail (on, err, &why, "opening a change stream on the state database");
    }
    if (bson_iter_init (&it, &reply) && bson_iter_find_descendant (&it, "cursor.id", &it))
        id = bson_iter_as_int64 (&it);
    bson_oid_init (&oid, NULL);
    doc = BCON_NEW ("_id", BCON_OID (&oid), "plan", BCON_UTF8 (on->run->names.id), "owner",
                    BCON_UTF8 (on->owner));
    ok = online_lease_check (on, err) &&
         (online_ops (on)->state_insert (on, "capture", doc, &why) ||
          online_fail (on, err, &why, "writing the change log's start point"));
    /* A few waits for the event: it is there at once on a live server. */
    for (int tries = 0; ok && !seen && id && tries < 10; tries++) {
        bson_t next;
        more = BCON_NEW ("getMore", BCON_INT64 (id), "collection", BCON_UTF8 ("capture"),
                         "maxTimeMS", BCON_INT32 (200));
        ok = online_ops (on)->stream (on, sdb, more, &next, &why) ||
             online_fail (on, err, &why, "reading the change stream");
        seen = ok && sentinel_event (&next, &oid, &c->token);
        if (ok && bson_iter_init (&it, &next) && bson_iter_find_descendant (&it, "cursor.id", &it))
            id = bson_iter_as_int64 (&it);
        bson_destroy (&next);
        bson_destroy (more);
    }
    kill_cursor (on, sdb, &reply);
    if (ok && !seen) {
        rm_error_set (err, RM_ERR_IO, "%s: the change stream on %s showed no event for remodel's "
                      "own write (%s.capture): no start point for the change log", on->run->where,
                      sdb, sdb);
        ok = false;
    }
    /* The sentinel has served; its deletion is one more event, harmless. */
    if (ok) {
        bson_t *q = BCON_NEW ("_id", BCON_OID (&oid));
        online_ops (on)->state_delete (on, "capture", q, false, NULL);
        bson_destroy (q);
    }
    c->sentinel = ok;
    bson_destroy (doc);
    bson_destroy (&reply);
    bson_destroy (&stage);
    return ok;
}

/* --to-uri, a source whose streams give no token (mongo-java-server):
 * the source is never written, so no sentinel there. Such a server's
 * tokens are positions in its one oplog ("_data": the seconds and the
 * counter of its ts, as 16 hex digits; online_changes.c reads them
 * back), so its oplog's last entry is the point, in that form: a stream
 * started after it gives every event logged after it. An empty oplog
 * gives position 0: every event. */
static bool
position_point (online_t *on, online_capture_t *c, bson_error_t *err)
{
    online_run_t view_run;
    online_t view, *src = online_pair_log (on, &view, &view_run);
    uint32_t t = 0, i = 0;
    bool found, ok = online_oplog_edge (src, -1, &t, &i, &found, err);
    char hex[24];

    online_pair_log_end (on, src);
    if (!ok)
        return false;
    if (!found)
        t = i = 0;
    snprintf (hex, sizeof hex, "%08x%08x", t, i);
    bson_reinit (&c->token);
    BSON_APPEND_UTF8 (&c->token, "_data", hex);
    return true;
}

bool
online_capture_start (online_t *on, online_capture_t *c, bson_error_t *err)
{
    if (!online_capture_detect (on, c, err))
        return false;
    /* A cluster time alone will do (startAtOperationTime): only a server
     * that gives neither needs the sentinel, or, with --to-uri, its
     * oplog's position. */
    if (c->mode == ONLINE_CAPTURE_STREAM && bson_empty (&c->token) && !c->has_ts)
        return on->run->pair ? position_point (on, c, err) : sentinel_point (on, c, err);
    if (c->mode == ONLINE_CAPTURE_OPLOG && !c->has_ts) {
        /* An empty oplog would give no point to compare its first entry
         * with later; the plan's record was written first, so this is a
         * server that logs nothing remodel writes. */
        rm_error_set (err, RM_ERR_IO, "%s: local.oplog.rs is empty after remodel wrote its "
                      "state: no start point for the change log", on->run->where);
        return false;
    }
    return true;
}

void
online_capture_append (const online_capture_t *c, const char *key, bson_t *doc)
{
    bson_t cap;
    BSON_APPEND_DOCUMENT_BEGIN (doc, key, &cap);
    BSON_APPEND_UTF8 (&cap, "mode", c->mode == ONLINE_CAPTURE_STREAM ? "changeStream"
                                    : c->mode == ONLINE_CAPTURE_OPLOG ? "oplog"
                                                                      : "none");
    if (!bson_empty (&c->token))
        BSON_APPEND_DOCUMENT (&cap, "token", &c->token);
    if (c->has_ts)
        BSON_APPEND_TIMESTAMP (&cap, "ts", c->ts_t, c->ts_i);
    BSON_APPEND_BOOL (&cap, "sentinel", c->sentinel);
    BSON_APPEND_UTF8 (&cap, "db", c->db);
    BSON_APPEND_UTF8 (&cap, "coll", c->coll);
    BSON_APPEND_DATE_TIME (&cap, "taken", (int64_t) time (NULL) * 1000);
    if (!bson_empty (&c->sources))
        BSON_APPEND_ARRAY (&cap, "sources", &c->sources);
    if (c->has_settle) {
        bson_t st;
        BSON_APPEND_DOCUMENT_BEGIN (&cap, "settle", &st);
        BSON_APPEND_TIMESTAMP (&st, "after", c->settle_t, c->settle_i);
        BSON_APPEND_INT64 (&st, "n", c->settle_n);
        BSON_APPEND_INT64 (&st, "sum", c->settle_sum);
        bson_append_document_end (&cap, &st);
    }
    bson_append_document_end (doc, &cap);
}

bool
online_capture_save (online_t *on, const online_capture_t *c, bson_error_t *err)
{
    bson_t set = BSON_INITIALIZER, inner;
    bool ok;

    BSON_APPEND_DOCUMENT_BEGIN (&set, "$set", &inner);
    online_capture_append (c, "capture", &inner);
    bson_append_document_end (&set, &inner);
    ok = online_plan_update (on, &set, err);
    bson_destroy (&set);
    return ok;
}

bool
online_capture_load (const bson_t *record, online_capture_t *c)
{
    bson_iter_t it, f, st;
    const char *mode;

    bson_reinit (&c->token);
    bson_reinit (&c->sources);
    c->has_ts = c->sentinel = c->has_settle = false;
    c->mode = ONLINE_CAPTURE_NONE;
    *c->db = *c->coll = '\0';
    if (!bson_iter_init_find (&it, record, "capture") || !BSON_ITER_HOLDS_DOCUMENT (&it))
        return false;
    if (!bson_iter_recurse (&it, &f) || !bson_iter_find (&f, "mode") || !BSON_ITER_HOLDS_UTF8 (&f))
        return false;
    mode = bson_iter_utf8 (&f, NULL);
    c->mode = !strcmp (mode, "changeStream") ? ONLINE_CAPTURE_STREAM
              : !strcmp (mode, "oplog")      ? ONLINE_CAPTURE_OPLOG
                                             : ONLINE_CAPTURE_NONE;
    if (bson_iter_recurse (&it, &f) && bson_iter_find (&f, "token") &&
        BSON_ITER_HOLDS_DOCUMENT (&f)) {
        const uint8_t *data;
        uint32_t len;
        bson_t tok;
        bson_iter_document (&f, &len, &data);
        if (bson_init_static (&tok, data, len))
            bson_concat (&c->token, &tok);
    }
    if (bson_iter_recurse (&it, &f) && bson_iter_find (&f, "ts") &&
        BSON_ITER_HOLDS_TIMESTAMP (&f)) {
        bson_iter_timestamp (&f, &c->ts_t, &c->ts_i);
        c->has_ts = true;
    }
    if (bson_iter_recurse (&it, &f) && bson_iter_find (&f, "sentinel"))
        c->sentinel = bson_iter_as_bool (&f);
    if (bson_iter_recurse (&it, &f) && bson_iter_find (&f, "db") && BSON_ITER_HOLDS_UTF8 (&f))
        snprintf (c->db, sizeof c->db, "%s", bson_iter_utf8 (&f, NULL));
    if (bson_iter_recurse (&it, &f) && bson_iter_find (&f, "coll") && BSON_ITER_HOLDS_UTF8 (&f))
        snprintf (c->coll, sizeof c->coll, "%s", bson_iter_utf8 (&f, NULL));
    *c->rescan = '\0';
    if (bson_iter_recurse (&it, &f) && bson_iter_find (&f, "rescan") && BSON_ITER_HOLDS_UTF8 (&f))
        snprintf (c->rescan, sizeof c->rescan, "%s", bson_iter_utf8 (&f, NULL));
    if (bson_iter_recurse (&it, &f) && bson_iter_find (&f, "sources") &&
        BSON_ITER_HOLDS_ARRAY (&f)) {
        const uint8_t *data;
        uint32_t len;
        bson_t arr;
        bson_iter_array (&f, &len, &data);
        if (bson_init_static (&arr, data, len))
            bson_concat (&c->sources, &arr);
    }
    if (bson_iter_recurse (&it, &f) && bson_iter_find_descendant (&f, "settle.after", &st) &&
        BSON_ITER_HOLDS_TIMESTAMP (&st)) {
        bson_iter_timestamp (&st, &c->settle_t, &c->settle_i);
        c->has_settle = true;
        if (bson_iter_recurse (&it, &f) && bson_iter_find_descendant (&f, "settle.n", &st))
            c->settle_n = bson_iter_as_int64 (&st);
        if (bson_iter_recurse (&it, &f) && bson_iter_find_descendant (&f, "settle.sum", &st))
            c->settle_sum = bson_iter_as_int64 (&st);
    }
    return true;
}

void
online_capture_point (const online_capture_t *c, char *buf, size_t cap)
{
    if (!bson_empty (&c->token)) {
        /* As mongoexport prints it, so a user can paste it into a
         * resumeAfter. */
        rm_buf_t json;
        rm_buf_init (&json);
        rm_extjson_doc (&json, bson_get_data (&c->token), c->token.len, RM_EXTJSON_RELAXED, false);
        snprintf (buf, cap, "%.*s", (int) json.len, (const char *) json.data);
        rm_buf_destroy (&json);
    } else if (c->has_ts) {
        snprintf (buf, cap, "Timestamp(%u, %u)", c->ts_t, c->ts_i);
    } else {
        snprintf (buf, cap, "-");
    }
}

void
online_capture_describe (const online_capture_t *c, const char *more, char *buf, size_t cap)
{
    char point[400];
    const char *sep = more && *more ? "; " : "";
    online_capture_point (c, point, sizeof point);
    if (!more)
        more = "";
    if (c->mode != ONLINE_CAPTURE_NONE && bson_empty (&c->token) && !c->has_ts)
        snprintf (buf, cap, "%s (%s)", online_capture_name (c->mode), more);
    else if (c->mode == ONLINE_CAPTURE_STREAM)
        snprintf (buf, cap, "change streams (resume point %s%s%s%s)", point,
                  c->sentinel ? ", the event of remodel's own write: the server gives no tokens"
                              : "", sep, more);
    else if (c->mode == ONLINE_CAPTURE_OPLOG)
        snprintf (buf, cap, "oplog (from ts %s%s%s)", point, sep, more);
    else
        snprintf (buf, cap, "none (a standalone server: sync, verify and finalize rescan every "
                  "collection%s%s)", sep, more);
}

static bool
capture_lost (online_t *on, const online_capture_t *c, bool *lost, bson_error_t *err)
{
    if (c->mode == ONLINE_CAPTURE_OPLOG) {
        uint32_t t, i;
        bool found, yes;
        if (!oplog_there (on, &yes, err))
            return false;
        if (!yes) {
            *lost = true; /* the oplog itself is gone */
            return true;
        }
        if (!online_oplog_edge (on, 1, &t, &i, &found, err))
            return false;
        /* The entry at the point may roll off too: only what follows it
         * is needed, and that is there while the first ts is not past it. */
        *lost = found && (t > c->ts_t || (t == c->ts_t && i > c->ts_i));
        return true;
    }
    if (c->mode == ONLINE_CAPTURE_STREAM) {
        bson_t stage = BSON_INITIALIZER, reply;
        bson_error_t why;
        const rm_nsref_t *ns = source_ns (on);
        const char *db = *c->db ? c->db : ns ? ns->db : "admin";
        const char *coll = *c->coll ? c->coll : ns ? ns->coll : "remodel";
        bool ok;
        if (!bson_empty (&c->token))
            BSON_APPEND_DOCUMENT (&stage, "resumeAfter", &c->token);
        else
            BSON_APPEND_TIMESTAMP (&stage, "startAtOperationTime", c->ts_t, c->ts_i);
        ok = open_stream (on, db, coll, &stage, &reply, &why);
        if (ok)
            kill_cursor (on, db, &reply);
        bson_destroy (&reply);
        bson_destroy (&stage);
        if (ok)
            return true;
        /* ChangeStreamHistoryLost; ChangeStreamFatalError (the token's
         * event is no longer there to resume after). */
        if (why.code == 286 || why.code == 280) {
            *lost = true;
            return true;
        }
        return online_fail (on, err, &why, "resuming the change stream");
    }
    return true;
}

/* --to-uri: the source's log, through a view of its connection. */
bool
online_capture_lost (online_t *on, const online_capture_t *c, bool *lost, bson_error_t *err)
{
    online_run_t view_run;
    online_t view, *src = online_pair_log (on, &view, &view_run);
    bool ok;

    *lost = false;
    ok = capture_lost (src, c, lost, err);
    online_pair_log_end (on, src);
    return ok;
}

void
online_capture_cost (int64_t plan_read, bool in_place, int64_t rate, char *buf, size_t cap)
{
    /* In place there is no switch: the cost is each sync's and verify's
     * one rescan, made while the application writes. */
    const char *who = in_place ? "each sync and verify re-reads" : "finalize re-reads";
    const char *when = in_place ? "" : " with writes stopped";
    int64_t n = plan_read * (in_place ? 1 : ONLINE_FINALIZE_READS);
    if (rate > 0)
        snprintf (buf, cap, "%s about %lld documents%s, about %llds at %lld/s", who,
                  (long long) n, when, (long long) ((n + rate - 1) / rate), (long long) rate);
    else
        snprintf (buf, cap, "%s about %lld documents%s", who, (long long) n, when);
}
