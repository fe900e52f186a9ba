/* sync from the change log, and `remodel online follow` (online.h).
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
 * follow is that sync in rounds, a pause between them, until a signal
 * stops it (online_signal.c: after the round it is in, or between two
 * batches of a round's rescan, which the next round does again) or
 * finalize asks for the lease; each round's figures go to the plan's
 * record for status. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online_changes.h"
#include "online_identity.h"
#include "remodel/cli.h"

bool
online_follow_point (online_t *on, online_capture_t *c, bool *follows, bson_error_t *err)
{
    bson_t doc;
    bool found, ok = online_state_get (on, "plans", on->names.id, &doc, &found,
                                       "reading the plan's record", err);
    bool recorded = ok && online_capture_load (&doc, c);
    bson_destroy (&doc);
    *follows = recorded && c->mode != ONLINE_CAPTURE_NONE && (!bson_empty (&c->token) || c->has_ts);
    return ok;
}

bool
online_follow_confirm (online_t *on, int64_t *written, bson_error_t *err)
{
    online_capture_t from, now;
    online_changes_t ch;
    const char *nss[64];
    bool follows, ok;

    *written = 0;
    online_capture_init (&from);
    online_capture_init (&now);
    online_changes_init (&ch);
    ok = online_follow_point (on, &from, &follows, err) && follows &&
         online_capture_start (on, &now, err) &&
         online_changes_read (on, &from, &now, nss, online_changes_sources (on, nss, 64), &ch, err);
    *written = ch.kept;
    online_changes_destroy (&ch);
    online_capture_destroy (&from);
    online_capture_destroy (&now);
    return ok;
}

/* A flag of the plan's record: keysMissing (its run wrote no key map,
 * online_apply), handover (finalize asks a follower for the lease). */
static bool
record_flag (online_t *on, const char *name, bool *set, bson_error_t *err)
{
    bson_t doc;
    bson_iter_t it;
    bool found, ok = online_state_get (on, "plans", on->names.id, &doc, &found,
                                       "reading the plan's record", err);
    *set = ok && bson_iter_init_find (&it, &doc, name) && bson_iter_as_bool (&it);
    bson_destroy (&doc);
    return ok;
}

bool
online_follow_sync (online_t *on, size_t *first_full, online_capture_t *next, bool *save,
                    bson_error_t *err)
{
    online_capture_t from;
    online_changes_t ch, noted;
    online_incr_stats_t *st = &on->incr;
    const char *nss[64];
    char point[400], later[ONLINE_IDENTITY_NOTE];
    bool lost = false, nokeys = false, done = false, ok;
    size_t nns;

    *first_full = 0;
    *save = false;
    memset (st, 0, sizeof *st);
    online_capture_init (&from);
    online_changes_init (&ch);
    online_changes_init (&noted);
    ok = online_follow_point (on, &from, &on->follows, err);
    if (!ok || !on->follows)
        goto done;
    /* The next point first: whatever is written from here on is after it. */
    st->point_at = (int64_t) time (NULL) * 1000;
    nns = online_changes_sources (on, nss, 64);
    /* The sources' identities at the next point, against the last one's:
     * what a log that is silent on DDL does not say (online_identity.c). */
    ok = online_capture_start (on, next, err) &&
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
        if (!on->o->quiet)
            rm_cli_line (stderr, "", "\n", "remodel: sync: history lost since %s (the change "
                         "log no longer holds it): every step rescanned in full", point);
        goto done;
    }
    /* After a --server-side run, no key map: a partner whose key changed
     * since would leave its old results as they are. */
    ok = ok && record_flag (on, "keysMissing", &nokeys, err);
    if (ok && nokeys) {
        on->keys_rebuilt = true;
        if (!on->o->quiet)
            rm_cli_line (stderr, "", "\n", "remodel: sync: every step rescanned in full: the "
                         "run was --server-side, which notes no join partner's keys, so a "
                         "change to a partner's key could not be traced from the change log "
                         "(this rescan notes them)");
        goto done;
    }
    ok = ok && online_changes_read (on, &from, next, nss, nns, &ch, err) &&
         online_made_load (on, &noted, err);
    st->events = ch.events;
    on->incr_running = true;
    ok = ok && online_incr_sync (on, &ch, &noted, st, &done, first_full, err);
    on->incr_running = false;
    if (ok && !on->o->quiet && (st->events || !on->following))
        rm_cli_line (stderr, "", "\n", "remodel: sync: change log: %lld events since %s: %lld "
                     "documents recomputed, %lld read, %lld results rewritten, %lld removed%s",
                     (long long) st->events, point, (long long) st->recomputed,
                     (long long) st->read, (long long) st->rewritten, (long long) st->removed,
                     done ? "" : "; the rest rescanned");
done:
    online_changes_destroy (&ch);
    online_changes_destroy (&noted);
    online_capture_destroy (&from);
    return ok;
}

/* The round's figures in the plan's record, for status. */
static bool
note_round (online_t *on, int64_t round, int64_t ms, bson_error_t *err)
{
    bson_t *upd = BCON_NEW ("$set", "{", "follow", "{",
                            "round", BCON_INT64 (round),
                            "at", BCON_DATE_TIME ((int64_t) time (NULL) * 1000),
                            "events", BCON_INT64 (on->incr.events),
                            "rewritten", BCON_INT64 (on->incr.rewritten + on->incr.removed),
                            "lagMs", BCON_INT64 (ms),
                            "pointAt", BCON_DATE_TIME (on->incr.point_at),
                            "pid", BCON_INT64 ((int64_t) getpid ()), "}", "}");
    bool ok = online_plan_update (on, upd, err);
    /* The rate of the last round that applied events: status's catch-up
     * ETA (online_lag.c); a quiet round says nothing of it. */
    if (ok && on->incr.events > 0 && ms > 0) {
        bson_t *rate = BCON_NEW ("$set", "{", "followRate", "{", "events",
                                 BCON_INT64 (on->incr.events), "ms", BCON_INT64 (ms), "}", "}");
        ok = online_plan_update (on, rate, err);
        bson_destroy (rate);
    }
    bson_destroy (upd);
    return ok;
}

/* How often follow verifies a sample of the results (online_sample.c),
 * so that finalize need not while the writes are stopped; after one that
 * found a difference (written since the round's point, most likely), how
 * soon again. */
#define FOLLOW_SAMPLE_MS 600000
#define FOLLOW_SAMPLE_RETRY_MS 60000

int
online_follow (online_t *on, bson_error_t *err)
{
    int64_t round = 0, pause = on->o->pause_ms > 0 ? on->o->pause_ms : 1000;
    int64_t sample_at = 0, n_sample = on->o->sample > 0 ? on->o->sample : ONLINE_FINALIZE_SAMPLE;
    online_retry_t retry = {0, 0};
    bool ok, asked = false, follows;
    online_capture_t point;

    online_capture_init (&point);
    ok = online_plan_check (on, err) && online_run_complete (on, err) &&
         online_follow_point (on, &point, &follows, err);
    if (ok && follows)
        online_window_follow (on, &point); /* online_window.c */
    online_capture_destroy (&point);
    if (ok && !follows) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s has no point in a change log to follow (status "
                      "says its capture): sync rescans instead", on->names.name);
        return -1;
    }
    ok = ok && online_lease_take (on, err);
    if (ok) {
        bson_t *unset = BCON_NEW ("$unset", "{", "handover", BCON_BOOL (true), "}");
        ok = online_plan_update (on, unset, err);
        bson_destroy (unset);
    }
    on->following = true;
    while (ok && !online_stop_requested () && !asked) {
        int64_t t0 = online_mono_ms ();
        if (online_apply (on, ONLINE_SYNC, err) < 0) {
            /* A signal in a round's rescan stops it between two batches
             * (online_signal.c); its point is not saved, so the next sync
             * or follow does that round again: a stop like any other. */
            if (err->code == RM_ERR_INTERRUPTED) {
                memset (err, 0, sizeof *err);
                break;
            }
            if (online_retry (on, &retry, err))
                continue;
            ok = false;
            break;
        }
        ONLINE_RETRY_RESET (retry);
        ok = note_round (on, ++round, online_mono_ms () - t0, err) &&
             record_flag (on, "handover", &asked, err);
        if (ok && !asked && !online_stop_requested () && online_mono_ms () >= sample_at) {
            int64_t differ = 0;
            if (!online_sample_verify (on, n_sample, &differ, err)) {
                if (online_retry (on, &retry, err))
                    continue;
                ok = false;
                break;
            }
            sample_at = online_mono_ms () + (differ ? FOLLOW_SAMPLE_RETRY_MS : FOLLOW_SAMPLE_MS);
            if (differ && !on->o->quiet)
                rm_cli_line (stderr, "", "\n", "remodel: follow: %lld result(s) of the sample "
                             "differ, written since the round's point or wrong: sampled again in "
                             "%d s", (long long) differ, FOLLOW_SAMPLE_RETRY_MS / 1000);
        }
        /* finalize waits for the lease with the writes stopped: the
         * record is read again every third step of the pause. */
        for (int64_t slept = 0, step = 1; ok && !online_stop_requested () && !asked &&
                                          slept < pause; slept += 100, step++) {
            online_sleep_ms (pause - slept < 100 ? pause - slept : 100);
            if (step % 3 == 0)
                ok = record_flag (on, "handover", &asked, err);
        }
    }
    if (ok && !on->o->quiet)
        rm_cli_line (stderr, "", "\n", "remodel: follow: plan %s: stopped after %lld rounds (%s)",
                     on->names.name, (long long) round,
                     asked ? "finalize asked for the lease"
                     : online_stop_requested () == SIGINT ? "interrupted" : "terminated");
    if (on->lease)
        online_lease_drop (on);
    return ok ? 0 : -1;
}
