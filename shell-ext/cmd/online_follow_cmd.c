/* `remodel online follow` (online_cmd.h): the sync from the change log
 * (online_follow.c) in rounds, a pause between them, until a signal
 * stops it (online_signal.c: after the round it is in, or between two
 * batches of a round's rescan, which the next round does again) or
 * finalize asks for the lease; each round's figures go to the plan's
 * record for status.
 *
 * follow runs unattended for days, so every server call it makes is
 * retried after a transient error (a cut connection, a server
 * restarting) for up to --retry-for, as a batch is (online_retry): the
 * checks before its rounds, the lease, each round and its notes, the
 * reads of the record in its pauses. */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online_cmd.h"

/* What follow's steps share. */
typedef struct {
    online_do_t life;  /* the command's transition, checked first */
    int64_t round;     /* rounds noted in the plan's record */
    int64_t ms;        /* the last round's time */
    bool asked;        /* finalize asked for the lease */
} follow_t;

typedef bool (*follow_step_t) (online_t *on, follow_t *f, bson_error_t *err);

/* step, again after each transient error for up to --retry-for from the
 * first of a run of them (r, shared with the rounds'). Every step is
 * safe to do twice: a read, a $set or $unset to the same values, or the
 * lease's take, which its own fence and lease do not block (a take whose
 * reply was lost costs an epoch, no second holder). A stop while
 * retrying ends follow as a stop (RM_ERR_INTERRUPTED). */
static bool
retried (online_t *on, follow_t *f, follow_step_t step, online_retry_t *r, bson_error_t *err)
{
    for (;;) {
        /* A transient error an earlier call left noted, and said, is not
         * this step's. */
        on->transient = false;
        memset (err, 0, sizeof *err);
        if (step (on, f, err)) {
            ONLINE_RETRY_RESET (*r);
            return true;
        }
        if (on->transient && online_stop_requested ()) {
            rm_error_set (err, RM_ERR_INTERRUPTED, "stopped by %s while retrying: %s",
                          online_stop_name (), err->message);
            return false;
        }
        if (!online_retry (on, r, err))
            return false;
    }
}

/* The checks before the rounds: the plan's state, its run complete, a
 * point in a change log to follow (refused without one: sync rescans). */
static bool
step_begin (online_t *on, follow_t *f, bson_error_t *err)
{
    online_capture_t point;
    bool follows = false, ok;

    online_capture_init (&point);
    ok = online_life_check (on, f->life, err) && online_plan_check (on, err) &&
         online_run_complete (on, err) && online_follow_point (on, &point, &follows, err);
    if (ok && follows)
        online_window_follow (on, &point); /* online_window.c */
    online_capture_destroy (&point);
    if (ok && !follows) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s has no point in a change log to follow (status "
                      "says its capture): sync rescans instead", on->run->names.name);
        return false;
    }
    return ok;
}

/* The lease, then a handover asked of an earlier follow forgotten. */
static bool
step_lease (online_t *on, follow_t *f, bson_error_t *err)
{
    bson_t *unset;
    bool ok;

    (void) f;
    if (!online_lease_take (on, err))
        return false;
    /* The holder named at once (followPid), so that a finalize started
     * in the first round, before follow.pid is noted, asks it too. */
    unset = BCON_NEW ("$unset", "{", "handover", BCON_BOOL (true), "}", "$set", "{", "followPid",
                      BCON_INT64 ((int64_t) getpid ()), "}");
    ok = online_plan_update (on, unset, err);
    bson_destroy (unset);
    return ok;
}

/* The round's figures in the plan's record, for status; f->round counts
 * it once noted, so a note retried writes the same round again. */
static bool
step_note (online_t *on, follow_t *f, bson_error_t *err)
{
    bson_t *upd = BCON_NEW ("$set", "{", "follow", "{",
                            "round", BCON_INT64 (f->round + 1),
                            "at", BCON_DATE_TIME ((int64_t) time (NULL) * 1000),
                            "events", BCON_INT64 (on->incr.events),
                            "rewritten", BCON_INT64 (on->incr.rewritten + on->incr.removed),
                            "lagMs", BCON_INT64 (f->ms),
                            "pointAt", BCON_DATE_TIME (on->incr.point_at),
                            "pid", BCON_INT64 ((int64_t) getpid ()), "}", "}");
    bool ok = online_plan_update (on, upd, err);
    /* The rate of the last round that applied events: status's catch-up
     * ETA (online_lag.c); a quiet round says nothing of it. */
    if (ok && on->incr.events > 0 && f->ms > 0) {
        bson_t *rate = BCON_NEW ("$set", "{", "followRate", "{", "events",
                                 BCON_INT64 (on->incr.events), "ms", BCON_INT64 (f->ms), "}", "}");
        ok = online_plan_update (on, rate, err);
        bson_destroy (rate);
    }
    bson_destroy (upd);
    if (ok)
        f->round++;
    return ok;
}

/* Whether finalize asked for the lease (the plan's record), or asked
 * while a long phase ran (the lease's watch stopped it: online_lease.c). */
static bool
step_asked (online_t *on, follow_t *f, bson_error_t *err)
{
    bool ok = online_plan_flag (on, "handover", &f->asked, err);
    f->asked |= online_stop_handover ();
    return ok;
}

/* --to-uri: the copied namespaces brought to the source's state with each
 * round from the second on (online_dest_copy_step.c), so that finalize
 * writes only what was written since; a source without a log has no
 * round. The first round is a sync's, call for call (the fault suites
 * number them), and brings the results up first. */
static bool
step_copies (online_t *on, follow_t *f, bson_error_t *err)
{
    online_after_t finals;
    online_copy_step_t st;
    bson_t copies;
    int n = 0;
    char said[400];
    bool ok;

    if (!on->run->pair || !on->run->follows || f->round == 0)
        return true;
    ok = online_dest_finals (on, &finals, &copies, &n, err) &&
         online_dest_copy_step (on, &copies, &st, err);
    online_after_destroy (&finals);
    bson_destroy (&copies);
    if (ok && (st.rewritten || st.copied)) {
        online_dest_copy_said (&st, said, sizeof said);
        online_say_note (on, "follow: the copied namespaces: %s", said);
    }
    return ok;
}

/* How often follow verifies a sample of the results (online_sample.c),
 * so that finalize need not while the writes are stopped; after one that
 * found a difference (written since the round's point, most likely), how
 * soon again. */
#define FOLLOW_SAMPLE_MS 600000
#define FOLLOW_SAMPLE_RETRY_MS 60000

/* The sample when due (*at: when next). False with err set on an error,
 * transient ones included: the caller retries the round. */
static bool
sample (online_t *on, int64_t *at, bson_error_t *err)
{
    int64_t n = on->run->o->sample > 0 ? on->run->o->sample : ONLINE_FINALIZE_SAMPLE, differ = 0;

    if (online_mono_ms () < *at)
        return true;
    on->transient = false;
    if (!online_sample_verify (on, n, &differ, err))
        return false;
    *at = online_mono_ms () + (differ ? FOLLOW_SAMPLE_RETRY_MS : FOLLOW_SAMPLE_MS);
    if (differ)
        online_say_note (on, "follow: %lld result(s) of the sample differ, written since "
                         "the round's point or wrong: sampled again in %d s",
                         (long long) differ, FOLLOW_SAMPLE_RETRY_MS / 1000);
    return true;
}

/* The pause between two rounds: finalize waits for the lease with the
 * writes stopped, so the record is read again every third step. */
static bool
pause_between (online_t *on, follow_t *f, online_retry_t *r, bson_error_t *err)
{
    int64_t pause = on->run->o->pause_ms > 0 ? on->run->o->pause_ms : 1000;
    bool ok = true;

    for (int64_t slept = 0, step = 1; ok && !online_stop_requested () && !f->asked &&
                                      slept < pause; slept += 100, step++) {
        online_sleep_ms (pause - slept < 100 ? pause - slept : 100);
        if (step % 3 == 0)
            ok = retried (on, f, step_asked, r, err);
    }
    return ok;
}

int
online_follow (online_t *on, online_do_t life, bson_error_t *err)
{
    follow_t f = {.life = life};
    online_retry_t retry = {0, 0};
    int64_t sample_at = 0;
    bool ok;

    ok = retried (on, &f, step_begin, &retry, err) && retried (on, &f, step_lease, &retry, err);
    /* A verify or a rescan lasts minutes: the lease's renewals look for
     * finalize's request meanwhile, and stop the phase for it. */
    if (ok)
        online_lease_watch_handover (on);
    on->own_run->following = true;
    while (ok && !online_stop_requested () && !f.asked) {
        int64_t t0 = online_mono_ms ();
        on->transient = false;
        if (online_apply (on, ONLINE_SYNC, err) < 0) {
            /* A signal in a round's rescan stops it between two batches
             * (online_signal.c); its point is not saved, so the next sync
             * or follow does that round again: a stop like any other. A
             * round retried begins at the saved point: the same sync. */
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
        ok = retried (on, &f, step_copies, &retry, err);
        f.ms = online_mono_ms () - t0;
        ok = ok && retried (on, &f, step_note, &retry, err) &&
             retried (on, &f, step_asked, &retry, err);
        if (ok && !f.asked && !online_stop_requested () && !sample (on, &sample_at, err)) {
            if (online_retry (on, &retry, err))
                continue;
            ok = false;
        }
        ok = ok && pause_between (on, &f, &retry, err);
    }
    /* A stop, in a round or while a step was retried, is follow's way
     * out: said, exit 0. */
    if (!ok && err->code == RM_ERR_INTERRUPTED && online_stop_requested ()) {
        memset (err, 0, sizeof *err);
        ok = true;
    }
    f.asked |= online_stop_handover ();
    if (ok)
        online_say_note (on, "follow: plan %s: stopped after %lld rounds (%s)", on->run->names.name,
                         (long long) f.round,
                         f.asked ? "finalize asked for the lease"
                         : online_stop_requested () == SIGINT ? "interrupted" : "terminated");
    if (on->lease)
        online_lease_drop (on);
    return ok ? 0 : -1;
}
