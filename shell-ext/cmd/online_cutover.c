/* The cut-over's budget (online_cmd.h): what finalize does with the
 * application's writes still running, what it measures there, and the
 * bound (--max-window) it keeps the window of stopped writes under.
 *
 * `finalize` without --writes-stopped or --block-writes prepares: a sync
 * (timed: the drain will be one), the sample verify if none is recorded
 * (online_sample.c), the results' indexes, the probe renames (timed: the
 * switch is as many renames), and one point of the change log taken
 * (timed: the confirmation takes one). The figures go into the plan's
 * record (cutover: {at, drainMs, renameMs, renames, pointMs, verifyMs:
 * every result's reading, without a log or with --full-verify}) and are
 * said as the window's estimate. `finalize --writes-stopped` then does
 * only the drain, the switch and the confirmation; the estimate, and at
 * the switch the time the window has lasted, are held against
 * --max-window: past it, nothing is switched (RM_ERR_WINDOW, exit status
 * 3), so a script lets the writes resume and tries again, after `follow`
 * or `sync` made the next drain shorter. As gh-ost's cut-over, which
 * gives up its lock past --cut-over-lock-timeout-seconds rather than
 * hold it longer. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"

/* A prepare older than this is measured again in the window (the probe):
 * the figures of a server an hour ago say little of it now. */
#define CUTOVER_FRESH_MS (30 * 60 * 1000)

/* A phase at least this long says so as it starts. */
#define CUTOVER_SAY_MS 2000

bool
online_cutover_read (online_t *on, online_cutover_t *c, bson_error_t *err)
{
    bson_t doc;
    bson_iter_t it, f;
    bool found, ok = online_state_get (on, "plans", on->run->names.id, &doc, &found,
                                       "reading the plan's record", err);
    memset (c, 0, sizeof *c);
    c->drain_ms = -1;
    if (ok && bson_iter_init_find (&it, &doc, "cutover") && BSON_ITER_HOLDS_DOCUMENT (&it) &&
        bson_iter_recurse (&it, &f)) {
        while (bson_iter_next (&f)) {
            const char *k = bson_iter_key (&f);
            int64_t v = BSON_ITER_HOLDS_DATE_TIME (&f) ? bson_iter_date_time (&f)
                                                       : bson_iter_as_int64 (&f);
            if (!strcmp (k, "at"))
                c->at = v;
            else if (!strcmp (k, "drainMs"))
                c->drain_ms = v;
            else if (!strcmp (k, "renameMs"))
                c->rename_ms = v;
            else if (!strcmp (k, "renames"))
                c->renames = v;
            else if (!strcmp (k, "pointMs"))
                c->point_ms = v;
            else if (!strcmp (k, "verifyMs"))
                c->verify_ms = v;
            else if (!strcmp (k, "verifyAll"))
                c->verify_all = v != 0;
        }
        c->fresh = c->at > 0 && (int64_t) time (NULL) * 1000 - c->at < CUTOVER_FRESH_MS;
    }
    bson_destroy (&doc);
    return ok;
}

static bool
save (online_t *on, const online_cutover_t *c, bson_error_t *err)
{
    bson_t *set = BCON_NEW ("$set", "{", "cutover", "{", "at", BCON_DATE_TIME (c->at), "drainMs",
                            BCON_INT64 (c->drain_ms), "renameMs", BCON_INT64 (c->rename_ms),
                            "renames", BCON_INT64 (c->renames), "pointMs",
                            BCON_INT64 (c->point_ms), "verifyMs", BCON_INT64 (c->verify_ms),
                            "verifyAll", BCON_BOOL (c->verify_all), "}",
                            "}");
    bool ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

int64_t
online_cutover_switch_ms (const online_cutover_t *c)
{
    return c->renames * c->rename_ms + c->point_ms;
}

int64_t
online_cutover_total (const online_cutover_t *c)
{
    return (c->drain_ms > 0 ? c->drain_ms : 0) + c->verify_ms + online_cutover_switch_ms (c);
}

void
online_cutover_describe (const online_cutover_t *c, char *buf, size_t cap)
{
    char drain[200];
    if (c->drain_ms >= 0)
        snprintf (drain, sizeof drain, "the drain %s (as long as the last sync)",
                  ONLINE_DUR (c->drain_ms));
    else
        snprintf (drain, sizeof drain, "the drain not known (no sync measured)");
    /* The verify in the window: every result without a change log (or
     * with --full-verify), else a sample where none was verified ahead. */
    if (c->verify_ms > 0)
        snprintf (drain + strlen (drain), sizeof drain - strlen (drain), ", the verify %s "
                  "(%s)", ONLINE_DUR (c->verify_ms),
                  c->verify_all ? "every result read" : "a sample");
    snprintf (buf, cap, "about %s: %s, the switch %s (%lld renames at %lld ms, as the "
              "probe's), the confirmation %s (a point of the change log)",
              ONLINE_DUR (online_cutover_total (c)), drain,
              ONLINE_DUR (c->renames * c->rename_ms), (long long) c->renames,
              (long long) c->rename_ms, ONLINE_DUR (c->point_ms));
}

void
online_cutover_phase (online_t *on, const char *what, int64_t est_ms)
{
    if (est_ms >= CUTOVER_SAY_MS)
        online_say_note (on, "finalize: %s (about %s)", what, ONLINE_DUR (est_ms));
}

bool
online_cutover_fits (online_t *on, const online_cutover_t *c, int64_t t0, int64_t left_ms,
                     const char *done, bson_error_t *err)
{
    int64_t max = on->run->o->max_window_ms, spent = online_mono_ms () - t0;
    char est[400];
    if (max <= 0 || spent + left_ms <= max)
        return true;
    online_cutover_describe (c, est, sizeof est);
    /* What took the time goes on a line of its own: with the plan's name
     * and the advice it would pass the one error line's room. */
    online_say_warn (on, "finalize: %s %s, the switch and confirmation "
                     "to come %s; the estimate %s", done, ONLINE_DUR (spent),
                     ONLINE_DUR (left_ms), est);
    rm_error_set (err, RM_ERR_WINDOW, "%s: plan %s: the writes would stay stopped past "
                  "--max-window %s: nothing switched. Let the writes resume, run `remodel "
                  "online follow` (or sync), then stop them and finalize again (--max-window 0: "
                  "no bound)", on->run->where, on->run->names.name, ONLINE_DUR (max));
    return false;
}

bool
online_cutover_prepare (online_t *on, bool follows, bool ahead, bson_error_t *err)
{
    online_cutover_t c;
    online_capture_t pt;
    int64_t t0, differ = 0;
    size_t renames = 0;
    char est[400];
    bool ok;

    memset (&c, 0, sizeof c);
    online_say_note (on, "finalize: preparing the cut-over with the "
                     "application's writes running: a sync, %s, the results' indexes and the "
                     "renames probed, then the window's estimate",
                     ahead ? "no sample verify (one was verified ahead)"
                     : "a sample of the results verified");
    /* The drain with the writes stopped is a sync like this one, of what
     * was written since: no longer, once follow keeps up. */
    t0 = online_mono_ms ();
    ok = online_apply (on, ONLINE_SYNC, err) >= 0;
    c.drain_ms = online_mono_ms () - t0;
    /* Without a log, or with --full-verify, finalize verifies every
     * result after the drain: that reading is timed too (a difference
     * here is a write since the sync). */
    if (ok && !follows) {
        t0 = online_mono_ms ();
        ok = online_apply (on, ONLINE_VERIFY, err) >= 0;
        c.verify_ms = online_mono_ms () - t0;
        c.verify_all = true;
    }
    if (ok && follows && !ahead) {
        t0 = online_mono_ms ();
        ok = online_sample_verify (on, on->run->o->sample > 0 ? on->run->o->sample : ONLINE_FINALIZE_SAMPLE,
                                   &differ, err);
        /* One that differs is not recorded: finalize verifies its own
         * sample in the window, as long as this one. */
        if (ok && differ)
            c.verify_ms = online_mono_ms () - t0;
        if (ok && differ)
            online_say_note (on, "finalize: %lld results of the sample "
                             "differ, written since the sync (the drain recomputes them); none "
                             "recorded as verified: finalize --writes-stopped verifies its own",
                             (long long) differ);
    }
    ok = ok && online_switch_ready (on, err) &&
         online_switch_probe (on, &c.rename_ms, &renames, err);
    c.renames = (int64_t) renames;
    /* One point of the change log: the confirmation takes one, and on a
     * server whose oplog is slow to read that is most of the window. */
    online_capture_init (&pt);
    t0 = online_mono_ms ();
    ok = ok && (!follows || online_capture_start (on, &pt, err));
    c.point_ms = follows ? online_mono_ms () - t0 : 0;
    online_capture_destroy (&pt);
    c.at = (int64_t) time (NULL) * 1000;
    ok = ok && save (on, &c, err);
    if (!ok)
        return false;
    online_cutover_describe (&c, est, sizeof est);
    online_say_note (on, "finalize: the cut-over's window, estimated: %s", est);
    if (on->run->o->max_window_ms > 0 && online_cutover_total (&c) > on->run->o->max_window_ms)
        online_say_note (on, "finalize: that is over --max-window %s: "
                         "finalize --writes-stopped would stop before the switch; run `remodel "
                         "online follow` (or sync) until a round is short, or give a larger "
                         "--max-window", ONLINE_DUR (on->run->o->max_window_ms));
    online_say_note (on, "finalize: ready: stop the application's writes, "
                     "then run remodel online finalize %s --writes-stopped", on->run->names.path);
    return true;
}
