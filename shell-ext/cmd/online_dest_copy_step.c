/* --to-uri: the namespaces the plan does not write, kept in step with the
 * source by its change log, so that finalize, with the writes stopped,
 * rewrites what changed since the last copy rather than each namespace
 * whole (issue 65).
 *
 * The run notes a point of the source's log in the pair's record
 * (copyPoint) before its first copy begins; every catch-up (a follow
 * round, finalize's prepare, finalize) takes a new point, reads the log
 * of the copied namespaces from the noted one, and for each _id written
 * since deletes the destination's document and writes the source's as it
 * is now (none: deleted there), then notes the new point (with the oplog,
 * its settle window: an entry that shows up late below it is read by the
 * next catch-up, online_changes.c). A catch-up cut anywhere leaves the
 * old point noted: the next one reads the same events again and writes
 * each document once more, as it is. Where the log cannot tell (no log,
 * its history lost, a namespace dropped or renamed, more _ids than a sync
 * keeps), every copy is taken again whole, as finalize did before. */
#include <stdio.h>
#include <string.h>

#include "online_cmd.h"

/* At most this many _ids in one {$in} (a delete, a read). */
#define STEP_CHUNK 500

/* The noted point into c; *found false when none is noted (or no log). */
static bool
point_read (online_t *on, online_capture_t *c, bool *found, bson_error_t *err)
{
    bson_t rec;
    bson_iter_t it;
    bool got, ok = online_pair_read (on, &rec, &got, err);

    *found = false;
    if (ok && got && bson_iter_init_find (&it, &rec, "copyPoint") &&
        BSON_ITER_HOLDS_DOCUMENT (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t sub;
        bson_iter_document (&it, &len, &data);
        if (bson_init_static (&sub, data, len))
            *found = online_capture_load (&sub, c) && c->mode != ONLINE_CAPTURE_NONE;
    }
    bson_destroy (&rec);
    return ok;
}

static bool
point_save (online_t *on, const online_capture_t *c, bson_error_t *err)
{
    bson_t set = BSON_INITIALIZER, sub = BSON_INITIALIZER;
    bool ok;

    online_capture_append (c, "capture", &sub);
    BSON_APPEND_DOCUMENT (&set, "copyPoint", &sub);
    ok = online_pair_note (on, &set, err);
    bson_destroy (&sub);
    bson_destroy (&set);
    return ok;
}

bool
online_dest_copy_mark (online_t *on, bson_error_t *err)
{
    online_capture_t c;
    bool found, ok;

    online_capture_init (&c);
    ok = point_read (on, &c, &found, err);
    /* A resumed run keeps the first: it is before every copy made. */
    if (ok && !found) {
        ok = online_capture_start (on, &c, err);
        if (ok && c.mode != ONLINE_CAPTURE_NONE)
            ok = point_save (on, &c, err);
    }
    online_capture_destroy (&c);
    return ok;
}

/* One chunk of l's _ids (an array): the destination's documents deleted,
 * the source's as they are now written; *docs counts those written. */
static bool
step_chunk (online_t *on, mongoc_collection_t *src, mongoc_collection_t *dst, const bson_t *ids,
            int64_t *docs, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    bson_t *filter = BCON_NEW ("_id", "{", "$in", BCON_ARRAY (ids), "}");
    bson_error_t why;
    bool ok = online_lease_check (on, err) &&
              (ops->write (on, dst, ONLINE_W_DELETE, filter, NULL, false, true, NULL, &why) ||
               online_fail (on, err, &why, "removing a copied namespace's changed documents")) &&
              online_dest_copy_where (on, src, dst, filter, NULL, docs, err);
    bson_destroy (filter);
    return ok;
}

/* What ch holds, applied namespace by namespace. */
static bool
step_apply (online_t *on, const online_changes_t *ch, int64_t *docs, bson_error_t *err)
{
    online_values_t v;
    bool ok = true;

    online_values_init (&v);
    for (size_t k = 0; ok && k < ch->n; k++) {
        const online_idlist_t *l = &ch->lists[k];
        const char *dot = strchr (l->ns, '.');
        char db[128];
        mongoc_collection_t *src, *dst;
        uint32_t at = 0;
        if (!dot || (size_t) (dot - l->ns) >= sizeof db)
            continue;
        snprintf (db, sizeof db, "%.*s", (int) (dot - l->ns), l->ns);
        src = online_pair_side (on, ONLINE_SOURCE, db, dot + 1);
        dst = online_pair_side (on, ONLINE_DEST, db, dot + 1);
        while (ok && online_idlist_chunk (l, &at, STEP_CHUNK, &v) > 0)
            ok = online_stop_check (on, "bringing a copied namespace to the source's state", err) &&
                 step_chunk (on, src, dst, &v.arr, docs, err);
        mongoc_collection_destroy (src);
        mongoc_collection_destroy (dst);
    }
    bson_destroy (&v.arr);
    return ok;
}

/* The copies' namespaces ("db.name", in names' storage) into nss. */
static size_t
step_names (const bson_t *copies, char (*names)[400], const char **nss, size_t cap)
{
    bson_iter_t it;
    size_t n = 0;

    bson_iter_init (&it, copies);
    while (n < cap && bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t one;
        char db[128], name[256];
        bson_iter_document (&it, &len, &data);
        bson_init_static (&one, data, len);
        online_field_utf8 (&one, "db", db, sizeof db);
        online_field_utf8 (&one, "name", name, sizeof name);
        snprintf (names[n], sizeof names[n], "%s.%s", db, name);
        nss[n] = names[n];
        n++;
    }
    return n;
}

/* The most namespaces one catch-up reads the log of; more: whole copies. */
#define STEP_MAX_NS 256

bool
online_dest_copy_step (online_t *on, const bson_t *copies, online_copy_step_t *st,
                       bson_error_t *err)
{
    static char names[STEP_MAX_NS][400];
    const char *nss[STEP_MAX_NS];
    online_capture_t from, to;
    online_changes_t ch;
    bool found, ok;

    memset (st, 0, sizeof *st);
    online_capture_init (&from);
    online_capture_init (&to);
    online_changes_init (&ch);
    ch.nss = nss;
    ch.nns = step_names (copies, names, nss, STEP_MAX_NS);
    ok = point_read (on, &from, &found, err);
    if (ok && found && (size_t) bson_count_keys (copies) <= STEP_MAX_NS) {
        /* The new point before anything is read: what is written after
         * it is the next catch-up's (read now too, it is written twice). */
        ok = online_capture_start (on, &to, err) &&
             online_dest_copy_all (on, copies, false, &st->copied, &st->docs, err) &&
             online_changes_read_to (on, &from, &to, &ch, err);
        st->events = ch.events;
        if (ok && *ch.rescan)
            snprintf (st->whole, sizeof st->whole, "%s", ch.rescan);
        else if (ok)
            ok = step_apply (on, &ch, &st->rewritten, err) && point_save (on, &to, err);
    } else if (ok) {
        /* A point now, where the source has a log: the next catch-up
         * reads from it. */
        ok = online_capture_start (on, &to, err);
        snprintf (st->whole, sizeof st->whole, "%s",
                  found ? "more namespaces than a catch-up reads the log of"
                        : "no point of the source's change log noted at the copy");
    }
    /* Whole again, as they are now, the new point noted first where there
     * is one: what is written while they are copied is in the log after. */
    if (ok && *st->whole) {
        st->copied = 0;
        ok = (to.mode == ONLINE_CAPTURE_NONE || point_save (on, &to, err)) &&
             online_dest_copy_all (on, copies, true, &st->copied, &st->docs, err);
    }
    online_changes_destroy (&ch);
    online_capture_destroy (&from);
    online_capture_destroy (&to);
    return ok;
}

void
online_dest_copy_said (const online_copy_step_t *st, char *buf, size_t cap)
{
    if (*st->whole)
        snprintf (buf, cap, "%d namespace(s) copied whole (%lld document(s)): %s", st->copied,
                  (long long) st->docs, st->whole);
    else
        snprintf (buf, cap, "%lld event(s) of the source's change log since the last copy, "
                  "%lld document(s) rewritten%s", (long long) st->events,
                  (long long) st->rewritten,
                  st->copied ? " (and namespaces new since the run copied whole)" : "");
}
