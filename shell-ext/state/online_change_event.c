/* What the change log's entries say (online_state.h), apart from
 * reading them: a change stream's batch of events and an oplog entry
 * turned into the _ids they wrote (or a rescan, for what an _id does not
 * describe), and whether a stream has reached a point. online_changes.c
 * reads the server; these parse what it answered. Calls nothing of the
 * program but the lists of _ids. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"
#include "remodel/value.h"

/* ---- change streams ---- */

static bool
find_doc (const bson_iter_t *parent, const char *path, bson_iter_t *out)
{
    bson_iter_t it;
    return bson_iter_recurse (parent, &it) && bson_iter_find_descendant (&it, path, out);
}

/* An event's time (a Timestamp's seconds, or a date), kept when the
 * earliest seen: how old the oldest change not yet applied is. */
static void
event_time (online_changes_t *ch, const bson_iter_t *at)
{
    uint32_t t = 0, i;
    if (BSON_ITER_HOLDS_TIMESTAMP (at))
        bson_iter_timestamp (at, &t, &i);
    else if (BSON_ITER_HOLDS_DATE_TIME (at) && bson_iter_date_time (at) > 0)
        t = (uint32_t) (bson_iter_date_time (at) / 1000);
    if (t && (!ch->oldest || t < ch->oldest))
        ch->oldest = t;
}

/* "db.coll" of the document at path in ev ("" when it has none). */
static void
event_ns (const bson_iter_t *ev, const char *path, char *buf, size_t cap)
{
    bson_iter_t db, coll;
    char p[16];
    *buf = '\0';
    snprintf (p, sizeof p, "%s.db", path);
    if (!find_doc (ev, p, &db) || !BSON_ITER_HOLDS_UTF8 (&db))
        return;
    snprintf (p, sizeof p, "%s.coll", path);
    if (find_doc (ev, p, &coll) && BSON_ITER_HOLDS_UTF8 (&coll))
        snprintf (buf, cap, "%s.%s", bson_iter_utf8 (&db, NULL), bson_iter_utf8 (&coll, NULL));
}

/* Whether from (renamed to to; a drop: to "") is DDL remodel made itself. */
static bool
own_ddl (const online_changes_t *ch, const char *from, const char *to)
{
    for (size_t i = 0; *from && i < ch->n_own; i++)
        if (!strcmp (ch->own[i].from, from) && !strcmp (ch->own[i].to, to))
            return true;
    return false;
}

/* One event: the _id it wrote into ch, or a rescan for what an _id does
 * not describe (a drop, a rename, an invalidate), but for remodel's own
 * renames and drops (ch->own): those are skipped, and the invalidate
 * MongoDB sends after a rename of the stream's collection asks for the
 * stream to be opened again after it (ch->reopen). */
static void
stream_event (online_changes_t *ch, const char *ns, const bson_iter_t *ev)
{
    bson_iter_t op, id;
    const char *type;
    bool own_last = ch->own_last;

    ch->events++;
    if (find_doc (ev, "clusterTime", &op) && BSON_ITER_HOLDS_TIMESTAMP (&op)) {
        event_time (ch, &op);
        bson_iter_timestamp (&op, &ch->last_t, &ch->last_i);
        ch->last_known = true;
    }
    else if (find_doc (ev, "wallTime", &op) && BSON_ITER_HOLDS_DATE_TIME (&op))
        event_time (ch, &op);
    if (!find_doc (ev, "operationType", &op) || !BSON_ITER_HOLDS_UTF8 (&op))
        return;
    type = bson_iter_utf8 (&op, NULL);
    ch->own_last = false;
    if (ch->n_own && (!strcmp (type, "rename") || !strcmp (type, "drop"))) {
        char from[300], to[300] = "";
        size_t drops = 0;
        event_ns (ev, "ns", from, sizeof from);
        if (!strcmp (type, "rename"))
            event_ns (ev, "to", to, sizeof to);
        if ((!strcmp (type, "drop") || *to) && own_ddl (ch, from, to)) {
            ch->own_last = true;
            return;
        }
        /* mongo-java-server's drop event names no collection, and comes
         * in every stream: each of remodel's own drops, once a stream. */
        for (size_t i = 0; !*from && i < ch->n_own; i++)
            drops += !ch->own[i].to[0];
        if (!strcmp (type, "drop") && !*from && ch->own_anon < drops) {
            ch->own_anon++;
            return;
        }
    }
    if (ch->anon_check && !strcmp (type, "drop") && !find_doc (ev, "ns.coll", &op)) {
        /* A drop naming no collection (mongo-java-server's): which one is
         * told by the sources' identities after the read (online_follow.c). */
        ch->anon_drops++;
        return;
    }
    if (own_last && !strcmp (type, "invalidate") && find_doc (ev, "_id", &id) &&
        BSON_ITER_HOLDS_DOCUMENT (&id)) {
        const uint8_t *data;
        uint32_t len;
        bson_iter_document (&id, &len, &data);
        if (ch->reopen)
            bson_destroy (ch->reopen);
        ch->reopen = bson_new_from_data (data, len);
        return;
    }
    if (!strcmp (type, "insert") || !strcmp (type, "delete")) {
        if (find_doc (ev, "documentKey._id", &id))
            online_changes_add (ch, ns, &id);
    } else if (!strcmp (type, "update") || !strcmp (type, "replace")) {
        /* mongo-java-server gives the update's spec (or the new document)
         * as documentKey of these: the _id is fullDocument's. Without a
         * fullDocument the document is gone since, and its delete event
         * follows. */
        if (find_doc (ev, "fullDocument._id", &id) || find_doc (ev, "documentKey._id", &id))
            online_changes_add (ch, ns, &id);
    } else if (!*ch->rescan) {
        /* The collection the event names (mongo-java-server gives a
         * drop of one collection in the streams of the others too). */
        bson_iter_t db, coll;
        if (find_doc (ev, "ns.db", &db) && BSON_ITER_HOLDS_UTF8 (&db) &&
            find_doc (ev, "ns.coll", &coll) && BSON_ITER_HOLDS_UTF8 (&coll))
            snprintf (ch->rescan, sizeof ch->rescan, "the change log shows a %s of %s.%s", type,
                      bson_iter_utf8 (&db, NULL), bson_iter_utf8 (&coll, NULL));
        else
            snprintf (ch->rescan, sizeof ch->rescan, "the change log shows a %s of %s", type, ns);
    }
}

/* (online_state.h) */
bool
online_stream_token (const bson_t *reply, bson_t *tok)
{
    bson_iter_t it;
    const uint8_t *data;
    uint32_t len;
    if (!bson_iter_init (&it, reply) ||
        !bson_iter_find_descendant (&it, "cursor.postBatchResumeToken", &it) ||
        !BSON_ITER_HOLDS_DOCUMENT (&it))
        return false;
    bson_iter_document (&it, &len, &data);
    return bson_init_static (tok, data, len);
}

/* The batch under cursor.<batch> of reply into ch; *id the cursor's. */
void
online_stream_batch (online_changes_t *ch, const char *ns, const bson_t *reply, const char *batch,
                     int64_t *id, online_stream_at_t *at)
{
    bson_iter_t it, ev;
    char path[32];
    snprintf (path, sizeof path, "cursor.%s", batch);
    if (bson_iter_init (&it, reply) && bson_iter_find_descendant (&it, path, &it) &&
        bson_iter_recurse (&it, &ev))
        while (bson_iter_next (&ev))
            if (BSON_ITER_HOLDS_DOCUMENT (&ev))
                stream_event (ch, ns, &ev);
    *id = 0;
    if (bson_iter_init (&it, reply) && bson_iter_find_descendant (&it, "cursor.id", &it))
        *id = bson_iter_as_int64 (&it);
    bson_t tok;
    if (online_stream_token (reply, &tok))
        at->known = rm_resume_token_time (&tok, &at->t, &at->i);
}

/* Whether the stream has not yet given everything up to the next point:
 * a replica set's stream gives only majority-committed events, so an
 * event written before the point may come after a quiet getMore. */
bool
online_stream_behind (const online_stream_at_t *at, const online_capture_t *to)
{
    return at->known && to->has_ts &&
           (at->t < to->ts_t || (at->t == to->ts_t && at->i < to->ts_i));
}

/* ---- the oplog ---- */

/* Whether a collMod command o sets only how documents are validated
 * (finalize --validators' own, or the application's): no document, and
 * nothing the steps compute, changes. */
static bool
validation_only (const bson_iter_t *o)
{
    bson_iter_t f = *o;
    if (!bson_iter_recurse (o, &f))
        return false;
    while (bson_iter_next (&f)) {
        const char *k = bson_iter_key (&f);
        if (strcmp (k, "collMod") && strcmp (k, "validator") && strcmp (k, "validationLevel") &&
            strcmp (k, "validationAction"))
            return false;
    }
    return true;
}

/* A command entry ("db.$cmd"): a drop or rename of a source makes _ids
 * meaningless; a collMod may change what the steps make of them (a
 * collation), unless it sets only the validation. */
static void
oplog_command (online_changes_t *ch, const bson_t *e, const char *db)
{
    bson_iter_t o, f;
    if (!bson_iter_init_find (&o, e, "o") || !bson_iter_recurse (&o, &f))
        return;
    while (bson_iter_next (&f)) {
        const char *k = bson_iter_key (&f), *v = BSON_ITER_HOLDS_UTF8 (&f) ? bson_iter_utf8 (&f, NULL) : "";
        char full[400];
        if (!strcmp (k, "renameCollection") || !strcmp (k, "drop")) {
            /* remodel's own (ch->own): "to" is the rename's target. */
            bson_iter_t to;
            char from[400];
            if (!strcmp (k, "drop"))
                snprintf (from, sizeof from, "%s.%s", db, v);
            else
                snprintf (from, sizeof from, "%s", v);
            if (own_ddl (ch, from, !strcmp (k, "drop") ? ""
                                   : bson_iter_recurse (&o, &to) && bson_iter_find (&to, "to") &&
                                             BSON_ITER_HOLDS_UTF8 (&to)
                                       ? bson_iter_utf8 (&to, NULL)
                                       : "\x01"))
                return;
        }
        if (!strcmp (k, "dropDatabase") || !strcmp (k, "renameCollection")) {
            snprintf (full, sizeof full, "%s", !strcmp (k, "renameCollection") ? v : db);
        } else if (!strcmp (k, "collMod") && validation_only (&o)) {
            return;
        } else if (!strcmp (k, "drop") || !strcmp (k, "collMod")) {
            snprintf (full, sizeof full, "%s.%s", db, v);
        } else {
            continue;
        }
        /* The namespace itself, or (a database dropped) one in it. */
        for (size_t i = 0; i < ch->nns; i++)
            if (!strncmp (ch->nss[i], full, strlen (full)) &&
                (ch->nss[i][strlen (full)] == '\0' || ch->nss[i][strlen (full)] == '.') &&
                !*ch->rescan)
                snprintf (ch->rescan, sizeof ch->rescan, "the change log shows a %s of %s", k,
                          full);
    }
}

/* One entry of local.oplog.rs (read with a filter on ns, so of the
 * plan's sources or their databases' commands) into ch. */
void
online_oplog_entry (online_changes_t *ch, const bson_t *e)
{
    bson_iter_t it, id;
    const char *op, *ns;
    if (!bson_iter_init_find (&it, e, "op") || !BSON_ITER_HOLDS_UTF8 (&it))
        return;
    op = bson_iter_utf8 (&it, NULL);
    if (!bson_iter_init_find (&it, e, "ns") || !BSON_ITER_HOLDS_UTF8 (&it))
        return;
    ns = bson_iter_utf8 (&it, NULL);
    ch->events++;
    if (bson_iter_init_find (&it, e, "ts"))
        event_time (ch, &it);
    if (!strcmp (op, "c")) {
        char db[128];
        const char *dot = strchr (ns, '.');
        snprintf (db, sizeof db, "%.*s", dot ? (int) (dot - ns) : 0, ns);
        oplog_command (ch, e, db);
        return;
    }
    /* i and d: o is the document, or {_id}; u: o2 is {_id}. */
    if ((!strcmp (op, "i") || !strcmp (op, "d")) && bson_iter_init (&it, e) &&
        bson_iter_find_descendant (&it, "o._id", &id))
        online_changes_add (ch, ns, &id);
    else if (!strcmp (op, "u") && bson_iter_init (&it, e) &&
             bson_iter_find_descendant (&it, "o2._id", &id))
        online_changes_add (ch, ns, &id);
}
