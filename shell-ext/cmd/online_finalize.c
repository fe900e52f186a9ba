/* finalize and rollback (online_cmd.h).
 *
 * finalize switches the application's collections to the new design: with
 * the application's writes stopped (--block-writes asks the server, where
 * it has setUserWriteBlockMode: MongoDB 6.0+; --writes-stopped is the
 * operator's word for it), a last sync, then a verify that must find
 * nothing, then the switch (online_switch.c): for each namespace the plan
 * changed, its collection renamed to COLL_remodel_ID_backup and the plan's
 * result to COLL. It holds the plan's lease from the start to the end, so
 * no run, sync or rollback comes in between. Run again after an
 * interruption, it completes the switch the journal records (no sync: the
 * one before the journal was written passed).
 *
 * rollback undoes what the plan did: in place, each document the plan
 * changed gets back the version it replaced, unless it changed since
 * remodel wrote it (those are listed and left); side by side, a switch
 * (finished or not) is undone rename by rename, and with none the results
 * are dropped and the plan forgotten. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"
#include "online_interrupt.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"

static bool
block_writes (online_t *on, bool on_, bson_error_t *err)
{
    bson_t *cmd = BCON_NEW ("setUserWriteBlockMode", BCON_INT32 (1), "global", BCON_BOOL (on_));
    bson_error_t why;
    bool ok = online_ops (on)->command (on, NULL, "admin", cmd, NULL, &why);
    bson_destroy (cmd);
    if (!ok && on_) {
        rm_error_set (err, RM_ERR_UNSUPPORTED,
                      "%s: --block-writes: the server refuses setUserWriteBlockMode (MongoDB 6.0 "
                      "and later have it): %s; stop the application's writes yourself and give "
                      "--writes-stopped", on->run->where, why.message);
        return false;
    }
    return true;
}

static void
split_ns (const char *ns, char *db, size_t cap, const char **coll)
{
    const char *dot = strchr (ns, '.');
    snprintf (db, cap, "%.*s", (int) (dot - ns), ns);
    *coll = dot + 1;
}

/* An order-independent checksum of a collection: how many documents, and
 * the sum of their CRC-64s. */
typedef struct {
    char ns[300];
    int64_t docs;
    uint64_t sum;
} sums_t;

static bool
checksum (online_t *on, const char *db, const char *coll, sums_t *out, bson_error_t *err)
{
    return online_coll_sum (on, db, coll, &out->docs, &out->sum, err);
}

/* The checksums of the collections finalize renames (those that exist),
 * into sums (n of them). */
static bool
checksum_sources (online_t *on, sums_t *sums, size_t *n, bson_error_t *err)
{
    bool ok = rm_names_of_plan (&on->own_run->names, &on->run->plan, err);
    *n = 0;
    for (size_t i = 0; ok && i < on->run->names.n_moved && *n < 64; i++) {
        char db[128];
        const char *coll;
        bool there, seen = false;
        for (size_t k = 0; k < *n; k++)
            seen |= strcmp (sums[k].ns, on->run->names.moved[i].ns) == 0;
        if (seen)
            continue;
        split_ns (on->run->names.moved[i].ns, db, sizeof db, &coll);
        ok = online_coll_exists (on, db, coll, &there, err);
        if (ok && there) {
            snprintf (sums[*n].ns, sizeof sums[*n].ns, "%s", on->run->names.moved[i].ns);
            ok = checksum (on, db, coll, &sums[(*n)++], err);
        }
    }
    rm_names_clear (&on->own_run->names);
    return ok;
}

/* After the renames: each original, now under its backup name, compared
 * with its checksum from before the last sync. A write that slipped in
 * after that sync is in the original but maybe not in the result. */
static bool
check_backups (online_t *on, const sums_t *before, size_t n, bson_error_t *err)
{
    size_t changed = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        char db[128], backup[400];
        const char *coll;
        sums_t now;
        split_ns (before[i].ns, db, sizeof db, &coll);
        rm_name_backup (&on->run->names, coll, backup, sizeof backup);
        ok = checksum (on, db, backup, &now, err);
        if (ok && (now.docs != before[i].docs || now.sum != before[i].sum)) {
            changed++;
            online_say_warn (on, "finalize: %s changed after the last sync (%lld documents then, "
                             "%lld now in %s.%s)", before[i].ns, (long long) before[i].docs,
                             (long long) now.docs, db, backup);
        }
    }
    if (ok && changed) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: %zu original(s) changed between the last "
                      "sync and the switch, so the results may miss those writes: remodel online "
                      "rollback swaps the originals back; then sync and finalize again, with the "
                      "writes stopped", on->run->where, on->run->names.name, changed);
        return false;
    }
    if (ok)
        online_say_note (on, "finalize: the originals did not change from the last sync to the "
                         "switch (%zu checked)", n);
    return ok;
}

/* SIGUSR1 during that pause: its end, wherever it is taken. */
static volatile sig_atomic_t pause_ended;

static void
on_pause_end (int sig)
{
    (void) sig;
    pause_ended = 1;
}

/* A pause before the renames (the tests' build's hook, REMODEL_ONLINE_
 * PAUSE_BEFORE_SWITCH_MS; never in the product: online_hook_ms answers 0
 * there): a write can then be made to slip in. SIGUSR1 ends it early,
 * so that a test long enough for a loaded machine waits no longer than
 * it needs. SIGUSR1 is blocked in this thread before the line that says
 * it pauses, which is what a test waits for before it signals; but the
 * process has other threads (the lease's renewals, a call cut short),
 * and a signal sent to the process while this one blocks it goes to one
 * of those, whose handler runs there: the wait then sees only the flag
 * the handler sets. So it waits in slices, looking at the flag between
 * them; a signal sent once it waits is taken by sigtimedwait itself.
 * (Waiting on sigtimedwait alone, a signal taken by the renewals' thread
 * was lost, and the pause ran its whole length.) */
#define PAUSE_SLICE_MS 100

static void
pause_before_switch (void)
{
    int64_t v = online_hook_ms (ONLINE_HOOK_PAUSE_BEFORE_SWITCH_MS), end;
    struct sigaction sa;
    sigset_t usr1, old;

    if (v <= 0)
        return;
    pause_ended = 0;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = on_pause_end;
    sa.sa_flags = SA_RESTART;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGUSR1, &sa, NULL);
    sigemptyset (&usr1);
    sigaddset (&usr1, SIGUSR1);
    pthread_sigmask (SIG_BLOCK, &usr1, &old);
    online_say_warn (NULL, "finalize: pausing %lld ms before the switch "
                     "(REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS)", (long long) v);
    for (end = online_mono_ms () + v; !pause_ended && online_mono_ms () < end;) {
        struct timespec ts = {0, PAUSE_SLICE_MS * 1000000L};
        if (sigtimedwait (&usr1, NULL, &ts) == SIGUSR1)
            break;
    }
    pthread_sigmask (SIG_SETMASK, &old, NULL);
}

/* After the renames: what the change log shows written to a source
 * since the last sync's point. Writes are stopped or blocked until
 * finalize returns, so any is one the results may miss. */
static bool
confirm_from_log (online_t *on, bson_error_t *err)
{
    int64_t written;
    online_after_t *a = bson_malloc0 (sizeof *a);
    size_t cap = 3 * ONLINE_AFTER_MAX;
    online_ddl_t *own = bson_malloc0 (cap * sizeof *own);
    char why[300];
    /* The switch's own renames and drops are in the log after the last
     * sync's point: no one's writes. */
    bool ok = online_after_plan (on, a, err) &&
              online_follow_confirm (on, own, online_after_own (a, own, cap), &written,
                                     why, sizeof why, err);
    bson_free (own);
    bson_free (a);
    if (!ok)
        return false;
    if (*why) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: the change log cannot confirm that "
                      "nothing was written to the sources between the last sync and the switch "
                      "(%s), so the results may miss writes: remodel online rollback swaps the "
                      "originals back; then sync and finalize again, with the writes stopped",
                      on->run->where, on->run->names.name, why);
        return false;
    }
    if (written) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: the change log shows %lld document(s) of "
                      "the sources written between the last sync and the switch, so the results "
                      "may miss those writes: remodel online rollback swaps the originals back; "
                      "then sync and finalize again, with the writes stopped", on->run->where,
                      on->run->names.name, (long long) written);
        return false;
    }
    online_say_note (on, "finalize: the change log shows no write to the "
                     "sources from the last sync to the switch");
    return true;
}

/* Whether a sample of the results was verified before the writes
 * stopped (online_sample.c), said in a line; a failed read of the record
 * is no sample (finalize verifies its own). */
static bool
sampled_ahead (online_t *on, bson_error_t *err)
{
    online_sample_t s;
    bson_t doc;
    bool found, ok = online_state_get (on, "plans", on->run->names.id, &doc, &found,
                                       "reading the plan's record", err);
    char said[200];
    ok = ok && online_sample_read (&doc, &s);
    bson_destroy (&doc);
    memset (err, 0, sizeof *err);
    if (ok) {
        online_sample_describe (&s, said, sizeof said);
        online_say_note (on, "finalize: a sample of the results was verified "
                         "%s; every change since is recomputed by the drain: none verified with "
                         "the writes stopped (--sample N verifies one, --full-verify everything)",
                         said);
    }
    return ok;
}

/* The lease, from a `follow` that holds it when finalize begins: asked
 * for in the plan's record (handover), which follow sees within a second
 * and acts on at its next batch, after the server call it is in. That
 * call is a server's: on a loaded machine one took over a minute (a
 * FerretDB destination), and a fixed minute failed finalize while the
 * follow was about to let go. So finalize waits as long as the follow
 * holds the lease: a follow that dies lets it lapse (or is seen gone on
 * this host) and finalize takes it then. HANDOVER_MAX bounds a follow
 * that renews and never stops; the wait is said each minute. */
#define HANDOVER_MAX (10 * 60000)
bool
online_finalize_lease (online_t *on, bson_error_t *err)
{
    int64_t t0 = online_mono_ms (), said = t0;
    bool asked = false;
    while (!online_lease_take (on, err)) {
        char holder[256], pid[32];
        int64_t left, epoch;
        bool gone;
        bson_t doc;
        bson_iter_t it;
        bool found, following;
        if (err->code != RM_ERR_USAGE || online_mono_ms () - t0 > HANDOVER_MAX)
            return false;
        /* Only a follow is asked: a run or sync is refused as before. */
        if (!online_state_get (on, "plans", on->run->names.id, &doc, &found, "reading the plan's record",
                               err))
            return false;
        /* The holder is "host:pid:...": the follow's when its pid is. */
        following = bson_iter_init (&it, &doc) &&
                    (bson_iter_find (&it, "followPid") ||
                     (bson_iter_init (&it, &doc) && bson_iter_find_descendant (&it, "follow.pid", &it))) &&
                    online_lease_status (on, holder, sizeof holder, &left, &epoch, &gone, err) &&
                    (snprintf (pid, sizeof pid, ":%lld:", (long long) bson_iter_as_int64 (&it)),
                     strstr (holder, pid) != NULL);
        bson_destroy (&doc);
        if (!following) {
            bson_error_t again;
            return online_lease_take (on, &again) || (memcpy (err, &again, sizeof again), false);
        }
        if (!asked && !online_plan_set (on, "handover", true, err))
            return false;
        if (!asked)
            online_say_note (on, "finalize: asking the follow of plan %s (%s) "
                             "for the lease", on->run->names.name, holder);
        asked = true;
        if (online_mono_ms () - said >= 60000) {
            said = online_mono_ms ();
            online_say_note (on, "finalize: still waiting for the follow of plan %s (%s, %lld s "
                             "so far): it lets go after the server call it is in",
                             on->run->names.name, holder, (long long) ((said - t0) / 1000));
        }
        /* The writes are stopped while this waits: asked often. */
        online_sleep_ms (100);
    }
    return true;
}

/* One finalize's state, from its checks to its switch. */
typedef struct {
    online_record_t r;
    online_cutover_t cut;
    bool follows, ahead, blocked, switched;
    int64_t told;           /* --writes-stopped: the window began when finalize was told so */
    const char *phase;      /* in the window, before the switch: what it does, */
    int64_t phase_t0;       /* since when (online_mono_ms) */
    size_t n_sums;
    sums_t *sums;
} fin_t;

/* The flags finalize refuses before it reads anything. */
static bool
finalize_flags (online_t *on, bson_error_t *err)
{
    if (on->run->o->in_place) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s ran in place: its documents are already the "
                      "new design; nothing to finalize (rollback undoes it)", on->run->names.name);
        return false;
    }
    if (on->run->o->writes_stopped && on->run->o->block_writes) {
        rm_error_set (err, RM_ERR_USAGE, "--writes-stopped and --block-writes: one or the other "
                      "(the first says the application's writes stopped, the second stops them)");
        return false;
    }
    return true;
}

/* Before the writes stop: sources no other plan switched, their indexes
 * on the results, the renames probed unless a prepare did it lately;
 * what the window will hold, said before it (--block-writes) or as it
 * begins (--writes-stopped); an estimate over the bound refused, nothing
 * done, the writes not blocked. */
static bool
before_window (online_t *on, fin_t *f, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    size_t renames = 0;
    bool ok = online_cutover_read (on, &f->cut, err);
    if (ok && !f->r.switching)
        ok = online_switch_ready (on, err) &&
             (f->cut.fresh || online_switch_probe (on, &f->cut.rename_ms, &renames, err));
    if (ok && !f->r.switching && !f->cut.fresh) {
        f->cut.renames = (int64_t) renames;
        f->cut.drain_ms = -1;
        f->cut.point_ms = 0;
    }
    if (ok)
        online_blocked_plan (on, &f->r, f->follows, f->ahead);
    if (ok && !f->r.switching && f->cut.fresh) {
        char est[400];
        online_cutover_describe (&f->cut, est, sizeof est);
        online_say_note (on, "finalize: the window, estimated by the "
                         "prepare: %s; --max-window %s", est, ONLINE_DUR (o->max_window_ms));
    }
    if (ok && !f->r.switching && f->cut.fresh)
        ok = online_cutover_fits (on, &f->cut, o->block_writes ? online_mono_ms () : f->told,
                                  online_cutover_total (&f->cut), "the checks took", err);
    return ok;
}

/* The phase of the window that begins (for given_up). */
static void
phase (fin_t *f, const char *what)
{
    f->phase = what;
    f->phase_t0 = online_mono_ms ();
}

/* A call or a loop given up at the window's bound (online_interrupt.h):
 * what it waited for, how long the phase and the window had lasted, then
 * the bound's own words, as when the estimate or the drain passed it
 * (online_cutover_fits: nothing switched, what to run). Any other error
 * is returned as it is. */
static bool
given_up (online_t *on, fin_t *f, bson_error_t *err)
{
    bson_error_t call = *err;
    char done[200];
    int64_t now = online_mono_ms ();
    if (err->domain != RM_ERROR_DOMAIN || err->code != RM_ERR_WINDOW || !f->phase)
        return false;
    online_say_note (on, "finalize: %s, %s of the window's %s (--max-window %s): %s", f->phase,
                     ONLINE_DUR (now - f->phase_t0), ONLINE_DUR (now - on->window_t0),
                     ONLINE_DUR (on->run->o->max_window_ms), call.message);
    snprintf (done, sizeof done, "%s took", f->phase);
    memset (err, 0, sizeof *err);
    /* Past the bound, with more than the switch still to come. */
    if (online_cutover_fits (on, &f->cut, on->window_t0, online_cutover_switch_ms (&f->cut) + 1,
                             done, err))
        *err = call;
    return false;
}

/* The writes stopped, a switch not begun: the originals' checksums, then
 * a last sync, then a verify that must find nothing (after the renames
 * the originals are checked against those checksums); the window so far
 * and the switch still to come within --max-window. */
static bool
drain_and_verify (online_t *on, fin_t *f, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    int64_t differ = 0, t0 = online_mono_ms ();
    bool ok;
    online_cutover_phase (on, "draining the change log (a sync of every write since the "
                          "last point)", f->cut.drain_ms);
    phase (f, f->follows ? "the drain" : "the checks");
    ok = (f->follows || checksum_sources (on, f->sums, &f->n_sums, err)) &&
         online_call_deadline_check ("before the drain", err) &&
         online_apply (on, ONLINE_SYNC, err) >= 0;
    /* A verify of a sample of each step's results, where the change log
     * drained into them (the rest of what changed was just recomputed by
     * that sync), unless one was verified before the writes stopped
     * (online_sample.c); every result with --full-verify or without a log. */
    on->own_run->verify_sample = f->follows ? (o->sample > 0 ? o->sample : ONLINE_FINALIZE_SAMPLE) : 0;
    /* Without a log the verify reads every result whole: the switch's
     * mark takes their digests from that read. */
    if (!f->follows)
        online_blocked_fold_begin (on);
    if (ok && !f->ahead && (ok = online_call_deadline_check ("draining the change log", err)))
        phase (f, "the verify");
    if (ok && !f->ahead && (differ = online_apply (on, ONLINE_VERIFY, err)) != 0) {
        if (differ > 0)
            rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: verify after the last sync finds "
                          "%lld results that differ (are the application's writes "
                          "stopped?); nothing renamed", on->run->where, on->run->names.name,
                          (long long) differ);
        ok = false;
    }
    on->own_run->verify_sample = 0;
    if (!ok)
        return given_up (on, f, err);
    if (ok && f->follows)
        online_say_note (on, "finalize: drained the change log%s in %s",
                         f->ahead ? "" : " and verified", ONLINE_DUR (online_mono_ms () - t0));
    if (ok)
        pause_before_switch ();
    return ok && online_cutover_fits (on, &f->cut, on->window_t0,
                                      online_cutover_switch_ms (&f->cut),
                                      f->follows ? "the drain took" : "the checks took", err);
}

/* What rollback tells the application's writes to the switched-in
 * collections by, taken before the first rename (a write to a namespace
 * switched in while the next one is renamed comes after it) and written
 * with the switch's journal (online_after.c). */
static bool
mark_switch (online_t *on, bool follows, bson_t *mark, bson_error_t *err)
{
    online_after_t *a = bson_malloc0 (sizeof *a);
    bool ok = online_after_mark (on, follows, a, err);
    if (ok)
        online_after_append (a, mark);
    online_after_destroy (a);
    bson_free (a);
    return ok;
}

/* What served the syncs dropped after the switch. A connection lost on
 * the way is retried (--retry-for), since nothing drops them later: a
 * finalize after this one is refused as finalized already. Any other
 * failure leaves them, as before: the switch is done. */
static void
drop_sync_state (online_t *on)
{
    online_retry_t retry = {0, 0};
    bson_error_t why;
    while (!online_keys_drop_plan (on, &why) && online_retry (on, &retry, &why))
        ;
    ONLINE_RETRY_RESET (retry);
    while (!online_made_drop (on, true, &why) && online_retry (on, &retry, &why))
        ;
}

/* The switch, where all before it went well (ok), the writes still
 * stopped: the renames, confirmed from the log (nothing written to a
 * source after the drain); then, either way, what served the syncs
 * dropped, the writes let go, the lease released; *n the namespaces
 * switched. */
static bool
switch_in (online_t *on, fin_t *f, bool ok, const bson_t *mark, size_t *n, bson_error_t *err)
{
    if (ok) {
        online_cutover_phase (on, "switching the collections",
                              f->cut.renames * f->cut.rename_ms);
        ok = f->switched = online_switch_forward (on, mark, n, err);
    }
    if (ok && f->follows) {
        online_cutover_phase (on, "confirming from the change log", f->cut.point_ms);
        ok = confirm_from_log (on, err);
    }
    /* The key map and the journal served the syncs; nothing reads them
     * after the switch, even one whose last record write failed (*n:
     * every rename done). */
    if (f->switched || *n > 0)
        drop_sync_state (on);
    if (f->blocked)
        block_writes (on, false, err);
    online_blocked_close (on, f->switched);
    online_lease_drop (on);
    return ok;
}

/* With the writes stopped (or blocked here): drained, verified, marked,
 * switched; then what a rename raced (beside the results, not in them)
 * and the originals' checksums checked. */
static bool
cut_over (online_t *on, fin_t *f, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    bson_t mark = BSON_INITIALIZER;
    size_t n = 0;
    bool ok = before_window (on, f, err);
    if (ok && o->block_writes)
        ok = f->blocked = block_writes (on, true, err);
    if (ok)
        online_blocked_open (on, f->blocked ? online_mono_ms () : f->told);
    /* Begun: the journal's switch completed, with no sync (the one before
     * the journal was written passed), and no bound: it must end. Not
     * begun: the bound reaches into the calls a slow server makes long
     * (online_interrupt.h) until the mark, which writes nothing; never
     * past it, where a rename may be done. */
    if (ok && !f->r.switching) {
        if (o->max_window_ms > 0)
            online_call_deadline (on->window_t0 + o->max_window_ms);
        ok = drain_and_verify (on, f, err);
        phase (f, f->follows ? "the change log's point before the switch"
                             : "the results' checksums before the switch");
        ok = ok && (mark_switch (on, f->follows, &mark, err) || given_up (on, f, err));
        online_call_deadline (0);
    }
    ok = switch_in (on, f, ok, &mark, &n, err);
    ok = ok && online_raced_check (on, err) &&
         (f->follows || check_backups (on, f->sums, f->n_sums, err));
    if (f->switched)
        online_say_note (on, "plan %s finalized: %zu collection(s) switched; the originals are "
                         "kept as COLL_remodel_%s_backup (remodel online rollback swaps them back)",
                         on->run->names.name, n, on->run->names.id);
    online_blocked_fold_end (on);
    bson_destroy (&mark);
    return ok;
}

bool
online_finalize (online_t *on, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    static sums_t sums[64];
    fin_t f = {.cut = {.drain_ms = -1}, .told = online_mono_ms (), .sums = sums};
    online_capture_t point;
    /* Neither flag: the cut-over prepared, with the writes running. */
    bool ok, prepare = !o->writes_stopped && !o->block_writes;

    /* Only a finished run's results are switched (online_complete.c),
     * refused before anything is written. The lease for the whole of it:
     * no rollback, run or sync between the last sync and the switch; a
     * follow holding it hands it over. */
    if (!finalize_flags (on, err) ||
        !online_life_check (on, prepare ? ONLINE_DO_PREPARE : ONLINE_DO_FINALIZE, err) ||
        !online_finalize_lease (on, err))
        return false;
    online_capture_init (&point);
    ok = online_plan_read (on, &f.r, err) && online_follow_point (on, &point, &f.follows, err);
    online_capture_destroy (&point);
    /* With a change log the cut-over reads what changed, not everything. */
    f.follows &= !o->full_verify;
    f.ahead = ok && !f.r.switching && f.follows && o->sample == 0 && sampled_ahead (on, err);
    /* Neither flag: all that does not need the writes stopped, measured
     * (online_cutover.c). */
    if (ok && prepare) {
        ok = online_cutover_prepare (on, f.follows, f.ahead, err);
        online_lease_drop (on);
        return ok;
    }
    if (!ok) {
        /* As before: nothing blocked, nothing switched; the lease goes. */
        online_blocked_close (on, false);
        online_lease_drop (on);
        online_blocked_fold_end (on);
        return false;
    }
    return cut_over (on, &f, err);
}

/* Whether every version of a document remodel read (the backup's "read")
 * was the original or one remodel wrote ("wrote_all"): otherwise the
 * application changed it in between, and restoring the original would
 * lose that change. */
static bool
only_ours (const bson_t *backup, int64_t original)
{
    bson_iter_t r, w, a, b;
    if (!bson_iter_init_find (&r, backup, "read") || !BSON_ITER_HOLDS_ARRAY (&r) ||
        !bson_iter_recurse (&r, &a))
        return true;
    while (bson_iter_next (&a)) {
        int64_t v = bson_iter_as_int64 (&a);
        bool known = v == original;
        if (!known && bson_iter_init_find (&w, backup, "wrote_all") && bson_iter_recurse (&w, &b))
            while (!known && bson_iter_next (&b))
                known = bson_iter_as_int64 (&b) == v;
        if (!known)
            return false;
    }
    return true;
}

/* Whether a and b hold the same fields with the same values, in any
 * order. A replace on MongoDB stores the replacement as given, so a
 * restored document is its original byte for byte; mongo-java-server's
 * keeps the stored document's field order, so there the original's
 * fields and values come back in the order remodel's version had. */
static bool
same_fields (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    bson_iter_t ia, ib;
    size_t na = 0, nb = 0;
    if (!bson_iter_init_from_data (&ia, a, alen) || !bson_iter_init_from_data (&ib, b, blen))
        return false;
    while (bson_iter_next (&ib))
        nb++;
    while (bson_iter_next (&ia)) {
        rm_raw_value_t va, vb;
        na++;
        if (!bson_iter_init_from_data (&ib, b, blen) || !bson_iter_find (&ib, bson_iter_key (&ia)) ||
            !rm_raw_value_of (&ia, &va) || !rm_raw_value_of (&ib, &vb) || va.type != vb.type ||
            va.len != vb.len || memcmp (va.data, vb.data, va.len) != 0)
            return false;
    }
    return na == nb;
}

/* Whether now is what remodel last wrote over the backup bd: its bytes,
 * or (mongo-java-server keeps a replaced document's field order, so a
 * version restored by a later step's rollback comes back in another
 * order) the same fields and values (wroteFields, online_fields_digest). */
static bool
as_written (const bson_t *bd, const bson_t *now)
{
    bson_iter_t it;
    if (bson_iter_init_find (&it, bd, "wrote") &&
        (int64_t) rm_crc64_update (0, bson_get_data (now), now->len) == bson_iter_as_int64 (&it))
        return true;
    return bson_iter_init_find (&it, bd, "wroteFields") &&
           (int64_t) online_fields_digest (bson_get_data (now), now->len) == bson_iter_as_int64 (&it);
}

/* One step's in-place rollback: the step, its first input, its backups'
 * collection (name, b) and the input's (c), and what became of its
 * documents. */
typedef struct {
    const rm_step_t *s;
    const rm_nsref_t *in;
    char bname[400];
    mongoc_collection_t *b, *c;
    int64_t restored, kept, forced, forgotten;
} rb_step_t;

/* One backup's document being rolled back: the backup (bd), the
 * document's _id as a query (q), its original (data, len), and what
 * restore_doc found. */
typedef struct {
    const bson_t *bd;
    bson_t q;
    const uint8_t *data;
    uint32_t len;
    bool same;       /* it is the original (already, or restored) */
    bool drop;       /* its backup goes with it not restored (--force over a deletion) */
    bool gone;       /* the document is no more */
    char held[1000]; /* what the application wrote where remodel did (online_undo.c) */
} rb_doc_t;

/* The document d->q now, against its backup: restored where that is
 * safe, d's flags set. */
static bool
restore_doc (online_t *on, rb_step_t *st, rb_doc_t *d, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cc = ops->find (on, st->c, &d->q, NULL);
    const bson_t *now = NULL;
    online_undo_t undo = ONLINE_UNDO_UNKNOWN;
    bson_t usel = BSON_INITIALIZER, upd = BSON_INITIALIZER, reply = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t why;
    bool ok = true, ours = false;

    d->same = d->drop = false;
    if (ops->next (cc, &now))
        undo = online_undo_plan (d->bd, d->data, d->len, now, &usel, &upd, d->held, sizeof d->held);
    if (now && (undo == ONLINE_UNDO_DONE ||
                (now->len == d->len &&
                 same_fields (bson_get_data (now), now->len, d->data, d->len)))) {
        /* The original already: restored by a rollback killed before it
         * removed the backup (or written so by the application: either
         * way nothing to restore). */
        d->same = true;
    } else if (undo == ONLINE_UNDO_FIELDS) {
        /* The application's fields kept, remodel's given back, on
         * condition that they are still as just read. */
        ok = online_lease_check (on, err) &&
             (ops->write (on, st->c, ONLINE_W_UPDATE, &usel, &upd, false, false, &reply, &why) ||
              online_fail (on, err, &why, "restoring a document's fields"));
        d->same = ok && bson_iter_init_find (&it, &reply, "matchedCount") &&
                  bson_iter_as_int64 (&it) == 1;
    } else if (now && ((ours = undo == ONLINE_UNDO_UNKNOWN
                                   ? as_written (d->bd, now) &&
                                         only_ours (d->bd, (int64_t) rm_crc64_update (0, d->data,
                                                                                       d->len))
                                   : undo == ONLINE_UNDO_WHOLE) ||
                       o->force)) {
        /* Still what remodel wrote (or --force): back, on that condition,
         * so a write between the read and this one is never overwritten;
         * a field the application added since (which that condition
         * cannot see) is given back at once (online_write.c), the rest
         * restored all the same. */
        bool undid;
        ok = online_replace_checked (on, st->c, bson_get_data (now), now->len, d->data, d->len,
                                     &d->same, &undid, err);
        d->same = ok && d->same;
        st->forced += d->same && !ours;
    } else if (!now && o->force) {
        /* Deleted by the application since: not brought back. */
        d->drop = true;
        st->forgotten++;
    }
    d->gone = now == NULL;
    if (!ops->end (cc, ok ? &why : NULL) && ok)
        ok = online_fail (on, err, &why, "reading a document");
    bson_destroy (&reply);
    bson_destroy (&usel);
    bson_destroy (&upd);
    return ok;
}

/* One backup bd of the step: its document restored (restore_doc) and
 * the backup removed, or, changed since, left and named. */
static bool
rollback_doc (online_t *on, rb_step_t *st, const bson_t *bd, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    bson_iter_t it, id;
    rb_doc_t d = {.bd = bd, .q = BSON_INITIALIZER};
    bson_error_t why;
    bool ok;

    if (online_select_step (st->s)) {
        online_rb_tally_t t = {st->restored, st->kept, st->forced, st->forgotten};
        ok = online_rollback_select (on, st->s, st->b, st->c, st->bname, bd, &t, err);
        st->restored = t.restored;
        st->kept = t.kept;
        st->forced = t.forced;
        st->forgotten = t.forgotten;
        return ok;
    }
    if (!bson_iter_init_find (&id, bd, "_id") || !bson_iter_init_find (&it, bd, "doc") ||
        !BSON_ITER_HOLDS_DOCUMENT (&it))
        return true;
    bson_iter_document (&it, &d.len, &d.data);
    online_id_append (&d.q, &id);
    ok = restore_doc (on, st, &d, err);
    if (ok && !d.same && !d.drop && o->forget) {
        d.drop = true;
        st->forgotten++;
    }
    if (ok && (d.same || d.drop)) {
        st->restored += d.same;
        ok = online_lease_check (on, err) &&
             (online_ops (on)->write (on, st->b, ONLINE_W_DELETE, &d.q, NULL, false, false, NULL,
                                      &why) ||
              online_fail (on, err, &why, "removing a restored backup"));
    } else if (ok) {
        char *text = bson_as_relaxed_extended_json (&d.q, NULL);
        /* Each one the application wrote where remodel did named with
         * what it holds there (online_undo.c). */
        if (*d.held)
            online_say_warn (on, "rollback: step %zu (%s) %s: document %s holds %s, "
                             "written since remodel wrote it: left as it is; its earlier "
                             "version stays in %s.%s (rollback --force restores it, --forget "
                             "keeps the document as it is)", st->s->index, st->s->op, st->in->text,
                             text, d.held, o->state_db, st->bname);
        else if (st->kept < 10)
            online_say_warn (on, "rollback: step %zu (%s) %s: document %s %s since "
                             "remodel wrote it: left as it is; its earlier version stays in "
                             "%s.%s (rollback --force restores it, --forget keeps the "
                             "document as it is)", st->s->index, st->s->op, st->in->text, text,
                             d.gone ? "deleted" : "changed", o->state_db, st->bname);
        st->kept++;
        bson_free (text);
    }
    bson_destroy (&d.q);
    return ok;
}

/* The step's line: what was restored, left, forced, forgotten. */
static void
rollback_said (online_t *on, const rb_step_t *st)
{
    char more[200] = "";
    if (st->forced)
        snprintf (more, sizeof more, " (%lld of them changed since remodel wrote them: "
                  "--force)", (long long) st->forced);
    if (st->forgotten)
        snprintf (more + strlen (more), sizeof more - strlen (more), "; %lld %s",
                  (long long) st->forgotten, on->run->o->force ? "deleted since: not brought back"
                                                          : "kept as they are: --forget");
    online_say_note (on, "rollback: step %zu (%s) %s: %lld restored, "
                     "%lld left%s", st->s->index, st->s->op, st->in->text, (long long) st->restored,
                     (long long) st->kept, more);
}

/* One step's backups, each restored where the document is still what
 * remodel wrote; *left grows by those left. */
static bool
rollback_step (online_t *on, const rm_step_t *s, int64_t *left, bson_error_t *err)
{
    const rm_nsref_t *in[4];
    rb_step_t st = {.s = s};
    const online_ops_t *ops = online_ops (on);
    bson_t filter = BSON_INITIALIZER;
    online_cursor_t *cur;
    const bson_t *bd;
    bson_error_t why;
    bool ok = true;

    rm_step_inputs (s, in, 4);
    st.in = in[0];
    rm_name_inplace_backup (&on->run->names, s, st.bname, sizeof st.bname);
    st.b = online_collection (on, on->run->o->state_db, st.bname);
    st.c = online_collection (on, in[0]->db, in[0]->coll);
    cur = ops->find (on, st.b, &filter, NULL);
    while (ok && ops->next (cur, &bd)) {
        /* SIGINT, SIGTERM: between two documents, each restored and its
         * backup removed, so rollback again goes on (online_signal.c). */
        if (online_stop_requested ()) {
            char where[600];
            snprintf (where, sizeof where, "during rollback of step %zu (%s) %s: %lld "
                      "restored", s->index, s->op, in[0]->text, (long long) st.restored);
            ok = online_stop_check (on, where, err);
            break;
        }
        ok = rollback_doc (on, &st, bd, err);
    }
    if (!ops->end (cur, ok ? &why : NULL) && ok)
        ok = online_fail (on, err, &why, "reading the backups");
    if (ok)
        rollback_said (on, &st);
    if (ok && online_select_step (s))
        ok = online_rollback_select_end (on, s, st.kept, err);
    *left += st.kept;
    mongoc_collection_destroy (st.b);
    mongoc_collection_destroy (st.c);
    return ok;
}

/* In place: step by step from the last, each backup restored where the
 * document is still what remodel wrote (only_ours). One changed since
 * (or gone) is left as it is, its backup kept, unless --force (restored
 * anyway, over the version just read; a gone one stays gone) or --forget
 * (kept as it is, its backup dropped). */
static bool
rollback_in_place (online_t *on, int64_t *left, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = on->run->plan.n; ok && i-- > 0;)
        ok = rollback_step (on, &on->run->plan.steps[i], left, err);
    return ok;
}

bool
online_rollback (online_t *on, bson_error_t *err)
{
    int64_t left = 0;
    bool ok, undone = false;

    if (!on->run->o->in_place && (on->run->o->force || on->run->o->forget)) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s ran side by side: --%s is for an in-place "
                      "rollback (the originals there are not touched)", on->run->names.name,
                      on->run->o->force ? "force" : "forget");
        return false;
    }
    if (on->run->o->in_place && (on->run->o->carry_writes || on->run->o->discard_writes)) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s ran in place: --%s is for the rollback of a "
                      "plan finalized side by side", on->run->names.name,
                      on->run->o->carry_writes ? "carry-writes" : "discard-writes-after-switch");
        return false;
    }
    /* The lease for the whole of it: refused while finalize holds it. */
    ok = online_life_check (on, ONLINE_DO_ROLLBACK, err) && online_lease_take (on, err);
    if (!ok)
        return false;
    if (on->run->o->in_place) {
        ok = rollback_in_place (on, &left, err);
    } else {
        online_record_t r;
        /* A finished switch: the application may have written to the new
         * collections since (online_after.c); checked before any rename. */
        online_life_t life;
        bool unsettled;
        ok = online_plan_read (on, &r, err);
        life = ok ? online_life_state (&r, true, false) : ONLINE_LIFE_NOT_RUN;
        /* A switch finalize did not finish (finalize run again completes
         * it): the same check, in the namespaces it switched in already,
         * by its journal's mark (a switch of an earlier remodel, with
         * none, undone as before). */
        if (ok && (life == ONLINE_LIFE_FINALIZED || life == ONLINE_LIFE_SWITCHING))
            ok = online_after_check (on, r.finalized, r.switching, err);
        /* The validators finalize gave go first, the new design's
         * collections still at their names (online_validators.c). */
        ok = ok && online_after_unsettled (on, &unsettled, err) &&
             online_validators_remove (on, err) && online_switch_back (on, unsettled, &undone, err);
        ok = ok && (!undone || online_after_settle (on, err));
        if (ok && undone) {
            online_say_note (on, "plan %s: the original collections are back; the results "
                             "stay beside them (rollback again drops them)", on->run->names.name);
            online_lease_drop (on);
            return true;
        }
        /* Nothing switched, no backup anywhere: the results go, unless
         * they hold writes after a switch that no flag let go. */
        ok = ok && online_after_before_drop (on, err) &&
             rm_names_of_plan (&on->own_run->names, &on->run->plan, err);
        for (size_t i = 0; ok && i < on->run->names.n_moved; i++) {
            char db[128];
            const char *coll;
            split_ns (on->run->names.moved[i].ns, db, sizeof db, &coll);
            ok = online_coll_drop (on, db, on->run->names.moved[i].coll, err);
            /* --to-uri: a final result has its namespace's name there. */
            if (ok)
                online_say_note (on, "rollback: dropped %s.%s%s", db,
                                 on->run->pair ? online_pair_name (on, db, on->run->names.moved[i].coll)
                                               : on->run->names.moved[i].coll,
                                 on->run->pair ? " on the destination" : "");
        }
        rm_names_clear (&on->own_run->names);
    }
    if (ok && left) {
        /* For status, until a rollback leaves none. */
        bson_t *set = BCON_NEW ("$set", "{", "rollbackLeft", BCON_INT64 (left), "}");
        online_plan_update (on, set, err);
        bson_destroy (set);
        rm_error_set (err, RM_ERR_FORMAT, "%s: plan %s: %lld documents changed since remodel "
                      "wrote them and were left as they are (listed above): rollback --force "
                      "restores their originals (their later changes are lost), rollback --forget "
                      "keeps them as they are and forgets the plan", on->run->where, on->run->names.name,
                      (long long) left);
        ok = false;
    }
    /* The plan is forgotten: the indexes it made go first, and with
     * --to-uri what else the run wrote on the destination (online_dest.c). */
    ok = ok && online_index_drop_made (on, err) &&
         (!on->run->pair || online_dest_forget (on, err)) && online_plan_forget (on, err);
    online_lease_drop (on);
    return ok;
}
