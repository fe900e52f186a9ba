/* sync from the change log (online_changes.h).
 *
 * A sync of a plan whose run recorded a point in the change log
 * (online_capture.c):
 *   1. takes the next point, before it reads anything;
 *   2. reads what the log holds from the recorded point on (or, when the
 *      point has rolled off the log, says so and rescans everything);
 *   3. recomputes what those changes affect (online_incr.c);
 *   4. records the next point, once the results cover it (the caller,
 *      after any step it rescans in full).
 * Killed at any point before 4, the next sync reads the same changes
 * again: recomputing a result twice writes it once; what a step had
 * already rewritten for the steps after it, it noted before writing
 * (online_made.c).
 *
 * `remodel online follow` runs it in rounds (online_follow_cmd.c).
 * --to-uri: the log is the source's (online_capture.c reads it there),
 * the results and every point the destination's. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_changes.h"
#include "online_identity.h"

bool
online_follow_point (online_t *on, online_capture_t *c, bool *follows, bson_error_t *err)
{
    bson_t doc;
    bool found, ok = online_state_get (on, "plans", on->run->names.id, &doc, &found,
                                       "reading the plan's record", err);
    bool recorded = ok && online_capture_load (&doc, c);
    bson_destroy (&doc);
    *follows = recorded && c->mode != ONLINE_CAPTURE_NONE && (!bson_empty (&c->token) || c->has_ts);
    return ok;
}

bool
online_follow_confirm (online_t *on, const online_ddl_t *own, size_t n_own, int64_t *written,
                       char *why, size_t cap, bson_error_t *err)
{
    online_capture_t from, now;
    online_changes_t ch;
    const char *nss[64];
    bool follows, read = false, ok;

    *written = 0;
    online_capture_init (&from);
    online_capture_init (&now);
    online_changes_init (&ch);
    ch.own = own;
    ch.n_own = n_own;
    ch.nss = nss;
    ch.nns = online_changes_sources (on, nss, 64);
    ok = online_follow_point (on, &from, &follows, err) && follows &&
         online_changes_read_next (on, &from, &now, &ch, &read, err) &&
         (read || online_changes_read (on, &from, &now, &ch, err));
    *written = ch.kept;
    /* A read stopped at a rescan has not read every source. */
    snprintf (why, cap, "%s", ch.rescan);
    online_changes_destroy (&ch);
    online_capture_destroy (&from);
    online_capture_destroy (&now);
    return ok;
}

/* What a sync's one read of the oplog returned, as its note says it: the
 * entries of every namespace after the last point, so that a follow's
 * rounds show they read the log from where the last one stopped. */
static const char *
oplog_said (const online_changes_t *ch, char *buf, size_t cap)
{
    snprintf (buf, cap, "local.oplog.rs read once from the last point: %lld entries",
              (long long) ch->log_entries);
    return buf;
}

bool
online_follow_sync (online_t *on, size_t *first_full, online_capture_t *next, bool *save,
                    bson_error_t *err)
{
    online_capture_t from;
    online_changes_t ch, noted;
    online_incr_stats_t *st = &on->incr;
    const char *nss[64];
    char point[400], later[ONLINE_IDENTITY_NOTE], entries[120];
    bool lost = false, nokeys = false, done = false, read = false, ok;
    size_t nns;

    *first_full = 0;
    *save = false;
    memset (st, 0, sizeof *st);
    online_capture_init (&from);
    online_changes_init (&ch);
    online_changes_init (&noted);
    ok = online_follow_point (on, &from, &on->own_run->follows, err);
    if (!ok || !on->run->follows)
        goto done;
    /* The next point first: whatever is written from here on is after it.
     * In oplog mode the read that gives it reads the log up to it too
     * (online_changes_read_next): one read a sync; the loss check after
     * it covers what the read found. */
    st->point_at = (int64_t) time (NULL) * 1000;
    ch.nss = nss;
    ch.nns = nns = online_changes_sources (on, nss, 64);
    ch.anon_check = true;
    /* The sources' identities at the next point, against the last one's:
     * what a log that is silent on DDL does not say (online_identity.c). */
    ok = online_changes_read_next (on, &from, next, &ch, &read, err) &&
         online_identity_now (on, nss, nns, &next->sources, err) &&
         online_capture_lost (on, &from, &lost, err);
    if (ok && !online_identity_check (on, &from, &next->sources, ch.rescan, sizeof ch.rescan,
                                      later, err)) {
        /* Put back, it is rescanned: its writes meanwhile are in no log
         * remodel reads. */
        bson_error_t why;
        bson_t *upd = BCON_NEW ("$set", "{", "capture.rescan", BCON_UTF8 (later), "}");
        online_plan_update (on, upd, &why);
        bson_destroy (upd);
        ok = false;
    }
    *save = ok;
    online_capture_point (&from, point, sizeof point);
    if (ok && lost) {
        online_say_note (on, "sync: history lost since %s (the %schange log no longer holds "
                         "it): every step rescanned in full", point,
                         on->run->pair ? "source's " : "");
        goto done;
    }
    /* After a --server-side run, no key map: a partner whose key changed
     * since would leave its old results as they are. */
    ok = ok && online_plan_flag (on, "keysMissing", &nokeys, err);
    if (ok && nokeys) {
        on->own_run->keys_rebuilt = true;
        online_say_note (on, "sync: every step rescanned in full: the run was --server-side, which "
                         "notes no join partner's keys, so a change to a partner's key could not "
                         "be traced from the change log (this rescan notes them)");
        goto done;
    }
    ok = ok && (read || online_changes_read (on, &from, next, &ch, err)) &&
         online_made_load (on, &noted, err);
    /* Drops naming no collection: the sources are the collections they
     * were at the last point (checked above), which a UUID proves; a
     * server that gives none leaves only a rescan to be sure. */
    if (ok && ch.anon_drops && !*ch.rescan &&
        !online_identity_proven (&from.sources, &next->sources))
        snprintf (ch.rescan, sizeof ch.rescan, "the change log shows %lld drop(s) naming no "
                  "collection, and the server gives no collection UUIDs to tell them from a "
                  "drop of a source", (long long) ch.anon_drops);
    else if (ok && ch.anon_drops)
        online_say_note (on, "sync: the change log shows %lld drop(s) naming no collection; every "
                         "source is the collection it was at the last point (its UUID): not a "
                         "source's", (long long) ch.anon_drops);
    st->events = ch.events;
    on->own_run->incr_running = true;
    ok = ok && online_incr_sync (on, &ch, &noted, st, &done, first_full, err);
    on->own_run->incr_running = false;
    if (ok && (st->events || !on->run->following))
        online_say_note (on, "sync: %schange log: %lld events since %s: %lld documents "
                         "recomputed, %lld read, %lld results rewritten, %lld removed%s%s%s",
                         on->run->pair ? "the source's " : "", (long long) st->events, point,
                         (long long) st->recomputed,
                         (long long) st->read, (long long) st->rewritten, (long long) st->removed,
                         done ? "" : "; the rest rescanned", read ? "; " : "",
                         read ? oplog_said (&ch, entries, sizeof entries) : "");
done:
    online_changes_destroy (&ch);
    online_changes_destroy (&noted);
    online_capture_destroy (&from);
    return ok;
}
