/* --to-uri: finalize. The cut-over is the operator's switch of connection
 * string, so nothing on the source is renamed or written: with the
 * application's writes to the source stopped (--writes-stopped), the
 * results are brought to the source as it is now (a sync: the drain of
 * the source's change log from the recorded point, where the run
 * recorded one; else a rescan of every step), then verified (a sample,
 * or every result with --full-verify), the namespaces the plan does not
 * write brought to the source's state (what its change log shows written
 * since the last copy: online_dest_copy_step.c), the intermediate results
 * dropped, and the plan recorded as committed in the pair's record, all
 * within --max-window (online_dest_cutover.c: the prepare's estimate
 * before anything, the time spent after each phase; past it nothing is
 * committed, exit 3). The results have had their
 * final names on the destination from the start (online_ops_pair.c):
 * nothing is renamed. Run again after an interruption, it takes each of
 * those as the destination shows it; once the drops have begun (noted
 * "finishing" in the pair's record before the first), only they are done
 * again: a sync then would read an intermediate result already dropped. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"

/* The intermediate results dropped (one gone already: the same; any
 * other failure stops the commit, or one would stay). Each under its own
 * name on the destination (no final result's: online_ops_pair.c). */
static bool
drop_intermediates (online_t *on, const online_after_t *finals, bson_error_t *err)
{
    bool ok = true;

    for (size_t k = 0; ok && k < finals->n_drops; k++) {
        const char *dot = strchr (finals->drops[k], '.');
        char db[128];
        if (!dot)
            continue;
        snprintf (db, sizeof db, "%.*s", (int) (dot - finals->drops[k]), finals->drops[k]);
        ok = online_coll_drop (on, db, dot + 1, err);
    }
    return ok;
}

/* Whether an interrupted finalize began the drops (the pair's record). */
static bool
online_dest_finishing (online_t *on, bool *finishing, bson_error_t *err)
{
    bson_t rec;
    bson_iter_t it;
    bool found, ok = online_pair_read (on, &rec, &found, err);

    *finishing = ok && found && bson_iter_init_find (&it, &rec, "finishing") &&
                 bson_iter_as_bool (&it);
    bson_destroy (&rec);
    return ok;
}

/* A sync, then the verify asked for: false (err) when a result differs.
 * how: what the sync did, for finalize's closing line. */
static bool
drained (online_t *on, int64_t *rewritten, char *how, size_t cap, bson_error_t *err)
{
    int64_t differ = 0;

    *rewritten = online_apply (on, ONLINE_SYNC, err);
    if (*rewritten < 0)
        return false;
    if (on->run->follows)
        snprintf (how, cap, "the drain applied %lld event(s) of the source's change log%s",
                  (long long) on->incr.events, on->incr.events ? "" : " (none since the last sync)");
    else
        snprintf (how, cap, "no change log followed: every step rescanned");
    if (on->run->o->full_verify)
        differ = online_apply (on, ONLINE_VERIFY, err);
    else if (!online_sample_verify (on, on->run->o->sample, &differ, err))
        return false;
    if (differ < 0)
        return false;
    if (differ > 0) {
        rm_error_set (err, RM_ERR_DATA, "finalize: plan %s: %lld result(s) differ from what the "
                      "source makes after the sync (the writes had not stopped?): nothing "
                      "committed; finalize again", on->run->names.name, (long long) differ);
        return false;
    }
    return true;
}

/* Before anything, with the writes stopped: the prepare's estimate said
 * and held against --max-window; without a fresh one, said so (the bound
 * still holds after each phase). */
static bool
estimate_fits (online_t *on, online_dest_est_t *e, int64_t t0, bson_error_t *err)
{
    char est[600];
    if (!online_dest_est_read (on, e, err))
        return false;
    if (!e->fresh) {
        memset (e, 0, sizeof *e);
        online_say_note (on, "finalize: no estimate of the window (finalize without "
                         "--writes-stopped prepares one, with the writes running); --max-window "
                         "%s still bounds it after each phase", ONLINE_DUR (on->run->o->max_window_ms));
        return true;
    }
    online_dest_est_describe (e, on->run->o->full_verify, est, sizeof est);
    online_say_note (on, "finalize: the window, estimated by the prepare: %s; --max-window %s",
                     est, ONLINE_DUR (on->run->o->max_window_ms));
    return online_dest_fits (on, t0, online_dest_est_total (e), "the checks took", err);
}

/* The copied namespaces brought to the source's state, said; within the
 * bound with the confirmation and the record to come. */
static bool
copies_in_step (online_t *on, const bson_t *copies, const online_dest_est_t *e, int64_t t0,
                int *copied, int64_t *docs, bson_error_t *err)
{
    online_copy_step_t st;
    char said[400];
    bool ok = online_dest_copy_step (on, copies, &st, err);
    if (!ok)
        return false;
    *copied = st.copied;
    *docs = st.docs + st.rewritten;
    online_dest_copy_said (&st, said, sizeof said);
    online_say_note (on, "finalize: the copied namespaces: %s", said);
    return online_dest_fits (on, t0, online_dest_est_after_copy (e),
                             "the drain, the verify and the copies took", err);
}

bool
online_dest_finalize (online_t *on, bson_error_t *err)
{
    online_after_t finals;
    online_dest_est_t est;
    bson_t copies, *set;
    int n = 0, copied = 0;
    int64_t t0 = online_mono_ms (), docs = 0, rewritten = 0, took;
    time_t now;
    char at[32], point[80] = "not a replica set: no oplog read", how[160] = "";
    uint32_t ts_t = 0, ts_i = 0;
    bool ok, has_ts, finishing = false;
    online_capture_t dest_point;

    memset (&est, 0, sizeof est);
    if (!online_dest_committed (on, at, sizeof at, err))
        return false;
    if (*at) {
        online_say_note (on, "finalize: plan %s was committed on %s at %s already",
                         on->run->names.name, on->run->where, at);
        return true;
    }
    /* Without --writes-stopped: the window prepared and estimated
     * (online_dest_cutover.c), nothing committed. */
    if (!on->run->o->writes_stopped)
        return online_dest_prepare (on, err);
    /* A follow keeping DEST current hands its lease over, as within one
     * deployment (online_finalize.c). */
    if (!online_finalize_lease (on, err) || !online_dest_finishing (on, &finishing, err) ||
        !online_life_check (on, ONLINE_DO_SYNC, err) ||
        (!finishing && (!estimate_fits (on, &est, t0, err) ||
                        !drained (on, &rewritten, how, sizeof how, err) ||
                        !online_dest_fits (on, t0, online_dest_est_after_drain (&est),
                                           "the drain and the verify took", err))))
        return false;
    now = time (NULL);
    strftime (at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime (&now));
    ok = online_dest_finals (on, &finals, &copies, &n, err) &&
         (finishing || copies_in_step (on, &copies, &est, t0, &copied, &docs, err));
    /* The source's log point the destination now reflects, where it has
     * an oplog (read, never followed yet): the writes are stopped. Only a
     * replica set member keeps one; asking another could make it a local
     * database (mongo-java-server makes one for any read). */
    has_ts = false;
    if (ok && *on->run->pair->caps.set_name)
        ok = online_pair_oplog_last (on, &ts_t, &ts_i, &has_ts, err);
    if (has_ts)
        snprintf (point, sizeof point, "its oplog at Timestamp(%u, %u)", ts_t, ts_i);
    if (ok && !finishing && finals.n_drops) {
        set = BCON_NEW ("finishing", BCON_BOOL (true));
        ok = online_pair_note (on, set, err);
        bson_destroy (set);
    }
    ok = ok && drop_intermediates (on, &finals, err);
    /* The destination's log point at the commit, after finalize's own
     * drops: what the application writes there from now on is what
     * rollback --carry-writes reads back (online_dest_log.c). */
    online_capture_init (&dest_point);
    ok = ok && online_dest_point_take (on, true, &dest_point, err);
    took = online_mono_ms () - t0;
    if (ok) {
        set = BCON_NEW ("committed", BCON_BOOL (true), "committedAt", BCON_UTF8 (at),
                        "finalizeMs", BCON_INT64 (took), "sourcePoint", BCON_UTF8 (point));
        online_capture_append (&dest_point, "destPoint", set);
        ok = online_pair_note (on, set, err);
        bson_destroy (set);
    }
    if (ok) {
        char dp[300];
        online_capture_describe (&dest_point, NULL, dp, sizeof dp);
        online_say_note (on, "finalize: the destination's change log at the commit: %s "
                         "(rollback --carry-writes reads the application's writes from there)",
                         dp);
    }
    online_capture_destroy (&dest_point);
    if (ok) {
        on->run->pair->all_dest = true;
        online_say_note (on, "finalize: plan %s committed on %s: %zu result(s) under "
                         "their final names, %d namespace(s) copied whole, %lld document(s) "
                         "written; %lld result(s) rewritten by the last sync; the source as of "
                         "%s, %s (%s)", on->run->names.name, on->run->where, finals.n, copied,
                         (long long) docs, (long long) rewritten, at, point,
                         *how ? how : "the drops completed: no sync");
        online_say_note (on, "finalize: the writes were stopped for %s (from finalize "
                         "--writes-stopped to the commit; --max-window %s)", ONLINE_DUR (took),
                         ONLINE_DUR (on->run->o->max_window_ms));
    }
    online_after_destroy (&finals);
    bson_destroy (&copies);
    return ok;
}
