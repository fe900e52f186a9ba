/* `remodel online follow` (online_cmd.h): the sync from the change log
 * (online_follow.c) in rounds, a pause between them, until a signal
 * stops it (online_signal.c: after the round it is in, or between two
 * batches of a round's rescan, which the next round does again) or
 * finalize asks for the lease; each round's figures go to the plan's
 * record for status. */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online_cmd.h"

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
    int64_t round = 0, pause = on->run->o->pause_ms > 0 ? on->run->o->pause_ms : 1000;
    int64_t sample_at = 0, n_sample = on->run->o->sample > 0 ? on->run->o->sample : ONLINE_FINALIZE_SAMPLE;
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
                      "says its capture): sync rescans instead", on->run->names.name);
        return -1;
    }
    ok = ok && online_lease_take (on, err);
    if (ok) {
        bson_t *unset = BCON_NEW ("$unset", "{", "handover", BCON_BOOL (true), "}");
        ok = online_plan_update (on, unset, err);
        bson_destroy (unset);
    }
    on->own_run->following = true;
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
             online_plan_flag (on, "handover", &asked, err);
        if (ok && !asked && !online_stop_requested () && online_mono_ms () >= sample_at) {
            int64_t differ = 0;
            if (!online_sample_verify (on, n_sample, &differ, err)) {
                if (online_retry (on, &retry, err))
                    continue;
                ok = false;
                break;
            }
            sample_at = online_mono_ms () + (differ ? FOLLOW_SAMPLE_RETRY_MS : FOLLOW_SAMPLE_MS);
            if (differ)
                online_say_note (on, "follow: %lld result(s) of the sample differ, written since "
                                 "the round's point or wrong: sampled again in %d s",
                                 (long long) differ, FOLLOW_SAMPLE_RETRY_MS / 1000);
        }
        /* finalize waits for the lease with the writes stopped: the
         * record is read again every third step of the pause. */
        for (int64_t slept = 0, step = 1; ok && !online_stop_requested () && !asked &&
                                          slept < pause; slept += 100, step++) {
            online_sleep_ms (pause - slept < 100 ? pause - slept : 100);
            if (step % 3 == 0)
                ok = online_plan_flag (on, "handover", &asked, err);
        }
    }
    if (ok)
        online_say_note (on, "follow: plan %s: stopped after %lld rounds (%s)", on->run->names.name,
                         (long long) round,
                         asked ? "finalize asked for the lease"
                         : online_stop_requested () == SIGINT ? "interrupted" : "terminated");
    if (on->lease)
        online_lease_drop (on);
    return ok ? 0 : -1;
}
