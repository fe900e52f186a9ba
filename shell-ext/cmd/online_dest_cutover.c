/* --to-uri: the cut-over's budget, as within one deployment
 * (online_cutover.c): `finalize --to-uri` without --writes-stopped
 * prepares with the application's writes running, timing each phase the
 * window will hold: the drain (a sync), the verify finalize will make (a
 * sample, or every result with --full-verify), the copied namespaces
 * brought to the source's state (online_dest_copy_step.c), the
 * confirmation (the source's oplog's last entry, the destination's log
 * point) and the switch of the pair's record (one write). The figures go
 * into the pair's record (cutover) and are said as the window's estimate.
 * `finalize --writes-stopped` then holds --max-window: the estimate
 * before anything, the time spent and the phases to come after the drain
 * and after the copies; past it nothing is committed (RM_ERR_WINDOW, exit
 * status 3) and the writes may resume. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"

/* A prepare older than this is no estimate (online_cutover.c's). */
#define DEST_FRESH_MS (30 * 60 * 1000)

static const char *const fields[] = {"drainMs", "verifyMs", "copyMs", "confirmMs", "recordMs"};

static int64_t *
field_of (online_dest_est_t *e, size_t k)
{
    int64_t *f[] = {&e->drain_ms, &e->verify_ms, &e->copy_ms, &e->confirm_ms, &e->record_ms};
    return f[k];
}

bool
online_dest_est_read (online_t *on, online_dest_est_t *e, bson_error_t *err)
{
    bson_t rec;
    bson_iter_t it, f;
    bool found, ok = online_pair_read (on, &rec, &found, err);

    memset (e, 0, sizeof *e);
    if (ok && found && bson_iter_init_find (&it, &rec, "cutover") &&
        BSON_ITER_HOLDS_DOCUMENT (&it) && bson_iter_recurse (&it, &f)) {
        while (bson_iter_next (&f)) {
            const char *k = bson_iter_key (&f);
            if (!strcmp (k, "at"))
                e->at = bson_iter_date_time (&f);
            for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
                if (!strcmp (k, fields[i]))
                    *field_of (e, i) = bson_iter_as_int64 (&f);
        }
        e->fresh = e->at > 0 && (int64_t) time (NULL) * 1000 - e->at < DEST_FRESH_MS;
    }
    bson_destroy (&rec);
    return ok;
}

static bool
est_save (online_t *on, online_dest_est_t *e, bson_error_t *err)
{
    bson_t set = BSON_INITIALIZER, sub;
    bool ok;

    BSON_APPEND_DOCUMENT_BEGIN (&set, "cutover", &sub);
    BSON_APPEND_DATE_TIME (&sub, "at", e->at);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        BSON_APPEND_INT64 (&sub, fields[i], *field_of (e, i));
    bson_append_document_end (&set, &sub);
    ok = online_pair_note (on, &set, err);
    bson_destroy (&set);
    return ok;
}

int64_t
online_dest_est_after_copy (const online_dest_est_t *e)
{
    return e->confirm_ms + e->record_ms;
}

int64_t
online_dest_est_after_drain (const online_dest_est_t *e)
{
    return e->copy_ms + online_dest_est_after_copy (e);
}

int64_t
online_dest_est_total (const online_dest_est_t *e)
{
    return e->drain_ms + e->verify_ms + online_dest_est_after_drain (e);
}

void
online_dest_est_describe (const online_dest_est_t *e, bool full, char *buf, size_t cap)
{
    snprintf (buf, cap, "about %s: the drain %s, the verify %s (%s), the copied namespaces "
              "brought to the source's state %s, the confirmation %s, the switch of the pair's "
              "record %s", ONLINE_DUR (online_dest_est_total (e)), ONLINE_DUR (e->drain_ms),
              ONLINE_DUR (e->verify_ms), full ? "every result read: --full-verify" : "a sample",
              ONLINE_DUR (e->copy_ms), ONLINE_DUR (e->confirm_ms), ONLINE_DUR (e->record_ms));
}

bool
online_dest_fits (online_t *on, int64_t t0, int64_t left_ms, const char *done, bson_error_t *err)
{
    int64_t max = on->run->o->max_window_ms, spent = online_mono_ms () - t0;
    if (max <= 0 || spent + left_ms <= max)
        return true;
    online_say_warn (on, "finalize: %s %s, the phases to come about %s", done, ONLINE_DUR (spent),
                     ONLINE_DUR (left_ms));
    rm_error_set (err, RM_ERR_WINDOW, "%s: plan %s: the writes would stay stopped past "
                  "--max-window %s: nothing committed. Let the writes resume, run `remodel "
                  "online follow` (or sync), then stop them and finalize again (--max-window 0: "
                  "no bound)", on->run->where, on->run->names.name, ONLINE_DUR (max));
    return false;
}

/* The verify finalize --writes-stopped makes, timed; a difference is
 * expected here (the writes run) and only said. */
static bool
timed_verify (online_t *on, int64_t *ms, bson_error_t *err)
{
    int64_t t0 = online_mono_ms (), differ = 0;
    bool ok;

    if (on->run->o->full_verify)
        ok = (differ = online_apply (on, ONLINE_VERIFY, err)) >= 0;
    else
        ok = online_sample_verify (on, on->run->o->sample, &differ, err);
    *ms = online_mono_ms () - t0;
    if (ok && differ > 0)
        online_say_note (on, "finalize: %lld result(s) differ, written since the sync (the drain "
                         "recomputes them)", (long long) differ);
    return ok;
}

/* The confirmation's calls, timed: the source's oplog's last entry (a
 * replica set's), the destination's log point (asked only). */
static bool
timed_confirm (online_t *on, int64_t *ms, bson_error_t *err)
{
    int64_t t0 = online_mono_ms ();
    uint32_t t = 0, i = 0;
    bool has = false, ok;
    online_capture_t pt;

    online_capture_init (&pt);
    ok = (!*on->run->pair->caps.set_name || online_pair_oplog_last (on, &t, &i, &has, err)) &&
         online_dest_point_take (on, false, &pt, err);
    online_capture_destroy (&pt);
    *ms = online_mono_ms () - t0;
    return ok;
}

bool
online_dest_prepare (online_t *on, bson_error_t *err)
{
    online_dest_est_t e;
    online_after_t finals;
    online_copy_step_t st;
    bson_t copies, *note;
    int64_t t0;
    int n = 0;
    char est[600], said[400];
    bool ok;

    memset (&e, 0, sizeof e);
    online_say_note (on, "finalize: preparing the cut-over with the application's writes "
                     "running: a sync, the verify, the copied namespaces brought to the source's "
                     "state, the confirmation and the pair's record timed, then the window's "
                     "estimate");
    /* As finalize's: the run complete, the plan in a state a sync may
     * write (online_dest_finalize.c). */
    if (!online_finalize_lease (on, err))
        return false;
    if (!online_life_check (on, ONLINE_DO_SYNC, err)) {
        online_lease_drop (on);
        return false;
    }
    t0 = online_mono_ms ();
    ok = online_apply (on, ONLINE_SYNC, err) >= 0;
    e.drain_ms = online_mono_ms () - t0;
    ok = ok && timed_verify (on, &e.verify_ms, err);
    t0 = online_mono_ms ();
    ok = ok && online_dest_finals (on, &finals, &copies, &n, err);
    if (ok) {
        ok = online_dest_copy_step (on, &copies, &st, err);
        online_after_destroy (&finals);
        bson_destroy (&copies);
    }
    e.copy_ms = online_mono_ms () - t0;
    if (ok) {
        online_dest_copy_said (&st, said, sizeof said);
        online_say_note (on, "finalize: the copied namespaces: %s", said);
    }
    ok = ok && timed_confirm (on, &e.confirm_ms, err);
    /* The switch is one write of the pair's record: one timed. */
    e.at = (int64_t) time (NULL) * 1000;
    note = BCON_NEW ("preparedAt", BCON_DATE_TIME (e.at));
    t0 = online_mono_ms ();
    ok = ok && online_pair_note (on, note, err);
    e.record_ms = online_mono_ms () - t0;
    bson_destroy (note);
    ok = ok && est_save (on, &e, err);
    online_lease_drop (on);
    if (!ok)
        return false;
    online_dest_est_describe (&e, on->run->o->full_verify, est, sizeof est);
    online_say_note (on, "finalize: the cut-over's window, estimated: %s", est);
    if (on->run->o->max_window_ms > 0 && online_dest_est_total (&e) > on->run->o->max_window_ms)
        online_say_note (on, "finalize: that is over --max-window %s: finalize --writes-stopped "
                         "would stop before committing; run `remodel online follow` (or sync) "
                         "until a round is short, or give a larger --max-window",
                         ONLINE_DUR (on->run->o->max_window_ms));
    online_say_note (on, "finalize: ready: stop the application's writes, then run remodel "
                     "online finalize %s --to-uri ... --writes-stopped", on->run->names.path);
    return true;
}
