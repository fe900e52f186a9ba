/* The capabilities record's change-log rows (online.h): what the server
 * offers to follow the application's writes, asked of it, never taken
 * from its name:
 *   changeStreams  a $changeStream aggregate opens (MongoDB replica sets,
 *                  mongo-java-server with --oplog);
 *   oplog          local.oplog.rs is there and capped (FerretDB with
 *                  --repl-set-name; every replica set member);
 *   tailable       a tailable, awaitData cursor on it stays open past its
 *                  first batch.
 * A tailable cursor does not make a round cheaper where the server runs
 * the whole query again for each getMore that waits (FerretDB 1.x: a
 * getMore that brought 3 new entries of a 60,000-entry oplog took 46 s,
 * a full read's time): the follow rounds read the oplog once each from the
 * last point (online_changes_read_next), whatever this row says; status
 * shows it so that an operator sees what the server allows. */
#include <stdio.h>
#include <string.h>

#include "online.h"

/* The id of the cursor a reply opened (0: none, or closed already). */
static int64_t
cursor_id (const bson_t *reply)
{
    bson_iter_t it;
    if (bson_iter_init (&it, reply) && bson_iter_find_descendant (&it, "cursor.id", &it) &&
        BSON_ITER_HOLDS_NUMBER (&it))
        return bson_iter_as_int64 (&it);
    return 0;
}

/* Best effort: an open cursor costs the server until it times out. */
void
online_cursor_kill (online_t *on, const char *db, const char *coll, int64_t id)
{
    bson_t *cmd;
    if (!id)
        return;
    cmd = BCON_NEW ("killCursors", BCON_UTF8 (coll), "cursors", "[", BCON_INT64 (id), "]");
    online_ops (on)->stream (on, db, cmd, NULL, NULL);
    bson_destroy (cmd);
}

/* A stream on a collection of db (one that need not exist). */
static bool
probe_streams (online_t *on, const char *db)
{
    bson_t *cmd = BCON_NEW ("aggregate", BCON_UTF8 ("capabilities"), "pipeline", "[", "{",
                            "$changeStream", "{", "}", "}", "]", "cursor", "{", "}");
    bson_t reply;
    bson_error_t why;
    bool ok = online_ops (on)->stream (on, db, cmd, &reply, &why);
    if (ok)
        online_cursor_kill (on, db, "capabilities", cursor_id (&reply));
    bson_destroy (&reply);
    bson_destroy (cmd);
    return ok;
}

static bool
probe_oplog (online_t *on)
{
    bson_t *cmd = BCON_NEW ("listCollections", BCON_INT32 (1), "filter", "{", "name",
                            BCON_UTF8 ("oplog.rs"), "}");
    bson_t reply;
    bson_iter_t it, doc, cap;
    bson_error_t why;
    bool capped = false;

    if (online_ops (on)->command (on, NULL, "local", cmd, &reply, &why) &&
        bson_iter_init (&it, &reply) && bson_iter_find_descendant (&it, "cursor.firstBatch", &it) &&
        BSON_ITER_HOLDS_ARRAY (&it) && bson_iter_recurse (&it, &doc))
        while (bson_iter_next (&doc))
            if (BSON_ITER_HOLDS_DOCUMENT (&doc) && bson_iter_recurse (&doc, &cap) &&
                bson_iter_find_descendant (&cap, "options.capped", &cap))
                capped |= bson_iter_as_bool (&cap);
    bson_destroy (&reply);
    bson_destroy (cmd);
    return capped;
}

/* A tailable cursor from the oplog's first entry, one a batch: open after
 * it (a server without tailable cursors closes it with the batch). */
static bool
probe_tailable (online_t *on)
{
    bson_t *cmd = BCON_NEW ("find", BCON_UTF8 ("oplog.rs"), "filter", "{", "}", "tailable",
                            BCON_BOOL (true), "awaitData", BCON_BOOL (true), "batchSize",
                            BCON_INT32 (1));
    bson_t reply;
    bson_error_t why;
    int64_t id = 0;
    if (online_ops (on)->stream (on, "local", cmd, &reply, &why))
        id = cursor_id (&reply);
    online_cursor_kill (on, "local", "oplog.rs", id);
    bson_destroy (&reply);
    bson_destroy (cmd);
    return id != 0;
}

void
online_caps_log_probe (online_t *on)
{
    online_caps_t *c = &on->own_run->caps;
    const char *db = on->run->o && on->run->o->state_db ? on->run->o->state_db : "remodel";

    if (c->log_probed)
        return;
    c->change_streams = probe_streams (on, db);
    c->oplog = probe_oplog (on);
    c->oplog_tailable = c->oplog && probe_tailable (on);
    c->log_probed = true;
}

void
online_caps_log_print (const online_caps_t *c, FILE *out)
{
    if (!c->log_probed)
        return;
    fprintf (out, "  change log (probed): change streams %s; local.oplog.rs %s\n",
             c->change_streams ? "yes" : "no",
             !c->oplog ? "none" : c->oplog_tailable ? "capped, tailable" : "capped, not tailable");
}

void
online_caps_log_append (const online_caps_t *c, bson_t *sub)
{
    bson_t log;
    if (!c->log_probed)
        return;
    BSON_APPEND_DOCUMENT_BEGIN (sub, "changeLog", &log);
    BSON_APPEND_BOOL (&log, "changeStreams", c->change_streams);
    BSON_APPEND_BOOL (&log, "oplog", c->oplog);
    BSON_APPEND_BOOL (&log, "tailable", c->oplog_tailable);
    bson_append_document_end (sub, &log);
}
