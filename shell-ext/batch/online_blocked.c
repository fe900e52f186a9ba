/* finalize's write-blocked window, said (online_batch.h): before it, what
 * finalize will do while the application cannot write, and its estimate;
 * in it, a line every few seconds of any long pass (a line on a terminal
 * is not enough: finalize is run from scripts, with the output to a
 * log); after it, how long it lasted.
 *
 * The window opens when finalize is told the writes stopped (its start,
 * --writes-stopped) or blocks them itself (--block-writes), and closes at
 * the end of the switch, once the change log confirmed nothing slipped
 * in and the writes are unblocked: from then on the application writes
 * to the new collections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online_batch.h"

/* How often a long pass in the window says where it is. */
#define WINDOW_PROGRESS_MS 5000

void
online_blocked_open (online_t *on, int64_t t0)
{
    on->window_t0 = t0;
    on->window_said = online_mono_ms ();
    on->window_summed = 0;
}

/* The last follow round's time, from the plan's record (-1: none). */
static int64_t
last_round_ms (online_t *on)
{
    bson_t doc;
    bson_iter_t it;
    bson_error_t why;
    bool found;
    int64_t ms = -1;
    if (online_state_get (on, "plans", on->run->names.id, &doc, &found, "reading the plan's record",
                          &why) &&
        bson_iter_init (&it, &doc) && bson_iter_find_descendant (&it, "follow.lagMs", &it))
        ms = bson_iter_as_int64 (&it);
    bson_destroy (&doc);
    return ms;
}

void
online_blocked_plan (online_t *on, const online_record_t *r, bool follows, bool ahead)
{
    const char *how = on->run->o->block_writes ? "blocked (--block-writes)"
                                          : "stopped (--writes-stopped)";
    char what[700];

    if (online_say_how (on).quiet)
        return;
    if (r->switching) {
        snprintf (what, sizeof what, "complete the interrupted switch (%lld of %lld renames "
                  "done), nothing read", (long long) r->renamed, (long long) r->renames);
    } else if (follows) {
        char verify[120], est[200];
        int64_t ms = last_round_ms (on);
        if (ahead)
            snprintf (verify, sizeof verify, "verify nothing (a sample was verified ahead)");
        else
            snprintf (verify, sizeof verify, "verify a sample of %lld drivers a pass",
                      (long long) (on->run->o->sample > 0 ? on->run->o->sample : ONLINE_FINALIZE_SAMPLE));
        if (ms >= 0)
            snprintf (est, sizeof est, "the drain about as long as follow's last round "
                      "(%.1f s) when the writes stopped as it ended", (double) ms / 1000.0);
        else
            snprintf (est, sizeof est, "the drain as long as a sync of what was written since "
                      "the last one (no follow round recorded)");
        snprintf (what, sizeof what, "drain the change log (every write since the last sync's "
                  "point), %s, switch the collections and confirm from the log that nothing was "
                  "written meanwhile; %s", verify, est);
    } else {
        char cost[300] = "the cost not known (no checkpoint counts)";
        int64_t seen, rate;
        bson_error_t why;
        if (online_checkpoint_totals (on, &seen, &rate, &why))
            online_capture_cost (seen, false, rate, cost, sizeof cost);
        /* The results' checksums (online_after.c) come from the
         * verify's read: nothing more read for them. */
        snprintf (what, sizeof what, "read every source it switches (checksums), sync and verify "
                  "every result in full (%s; the verify's read gives the results' checksums), "
                  "switch the collections, then check the originals against the checksums: %s",
                  on->run->o->full_verify ? "--full-verify" : "no change log to drain", cost);
    }
    online_say_note (on, "finalize: with the writes %s, it will %s", how, what);
}

void
online_blocked_progress (online_t *on, const char *what, const rm_step_t *s, const char *ns,
                        int64_t n, int64_t of)
{
    char step[200] = "", count[80];
    int64_t now;
    if (!on->window_t0 || online_say_how (on).quiet ||
        (now = online_mono_ms ()) - on->window_said < WINDOW_PROGRESS_MS)
        return;
    on->window_said = now;
    if (s)
        snprintf (step, sizeof step, "step %zu (%s) ", s->index, s->op);
    if (of < 0)
        snprintf (count, sizeof count, "%lld read", (long long) n);
    else
        snprintf (count, sizeof count, "%lld of %lld drivers recomputed", (long long) n,
                  (long long) of);
    online_say_note (on, "finalize: %s: %s%s: %s (the writes %s for %lld s)", what, step, ns,
                     count, on->run->o->block_writes ? "blocked" : "stopped",
                     (long long) ((now - on->window_t0) / 1000));
}

void
online_blocked_close (online_t *on, bool switched)
{
    if (!on->window_t0)
        return;
    online_say_note (on, "finalize: the writes were %s for %.1f s (from %s to %s; %lld documents "
                     "read whole for checksums in it)", on->run->o->block_writes ? "blocked" : "stopped",
                     (double) (online_mono_ms () - on->window_t0) / 1000.0,
                     on->run->o->block_writes ? "setUserWriteBlockMode" : "the start of finalize",
                     switched ? "the end of the switch" : "its stop, nothing switched",
                     (long long) on->window_summed);
    on->window_t0 = 0;
}

/* ---- the verify's read folded into the results' digests ---- */

/* At most this many collections are folded (a plan switches at most 64
 * namespaces, each with intermediate results besides). */
#define FOLD_MAX 256

void
online_blocked_fold_begin (online_t *on)
{
    online_blocked_fold_end (on);
    on->fold = bson_malloc0 (FOLD_MAX * sizeof *on->fold);
}

online_fold_t *
online_blocked_fold (online_t *on, const char *db, const char *coll)
{
    char ns[400];
    if (!on->fold)
        return NULL;
    snprintf (ns, sizeof ns, "%s.%s", db, coll);
    for (size_t i = 0; i < on->n_fold; i++)
        if (!strcmp (on->fold[i].ns, ns))
            return &on->fold[i];
    if (on->n_fold == FOLD_MAX)
        return NULL;
    snprintf (on->fold[on->n_fold].ns, sizeof on->fold[0].ns, "%s", ns);
    return &on->fold[on->n_fold++];
}

bool
online_blocked_folded (const online_t *on, const char *db, const char *coll, int64_t *docs,
                       uint64_t *sum)
{
    char ns[400];
    snprintf (ns, sizeof ns, "%s.%s", db, coll);
    for (size_t i = 0; on->fold && i < on->n_fold; i++)
        if (!strcmp (on->fold[i].ns, ns)) {
            *docs = on->fold[i].docs;
            *sum = on->fold[i].sum;
            return true;
        }
    return false;
}

void
online_blocked_fold_end (online_t *on)
{
    bson_free (on->fold);
    on->fold = NULL;
    on->n_fold = 0;
}
