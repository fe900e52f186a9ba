/* The followers of a change log (online_changes.h), one row per way a
 * pass's results trace back to the documents that made them (rm_trace_t,
 * which each step's passes declare: remodel/passes.h), and the two loops
 * that use them: a sync's steps (online_incr_sync) and a sampled verify's
 * (online_incr_verify_sample). They find a pass's row here and nothing
 * else about it: no step kind is named in the online mode, so a new kind
 * whose passes declare a trace is followed as it is, and a new trace is a
 * row here and its functions (online_incr.c, online_incr_series.c). The
 * loops live with the table, above the rows' functions, so the rows'
 * files never call back into it. */
#include <stdio.h>
#include <string.h>

#include "online_changes.h"

/* err prefixed with the step, unless it names it already (the engine's
 * errors do, and the writes' "HOST: step N (OP): ..."): said once. */
static void
online_error_step (const online_t *on, bson_error_t *err, const rm_step_t *s)
{
    char tag[200];
    rm_names_label (&on->run->names, s, tag, sizeof tag);
    if (!strstr (err->message, tag))
        rm_error_prefix (err, "%s", tag);
}

/* Indexed by rm_trace_t; RM_TRACE_NONE's row is empty: rescanned. */
static const online_follower_t followers[] = {
    [RM_TRACE_NONE] = {NULL, NULL},
    /* Each result its driver's own: found by the driver's _id. */
    [RM_TRACE_ID] = {online_follow_drivers, online_sample_drivers},
    /* Some results name their driver in a field (an extract's children by
     * parentField, overflow pages by parent_id). */
    [RM_TRACE_FIELD] = {online_follow_drivers, online_sample_drivers},
    /* Some results listed by their driver's own result (childRefs). */
    [RM_TRACE_LIST] = {online_follow_drivers, online_sample_drivers},
    /* A series read whole, its results found by the series they hold. */
    [RM_TRACE_SERIES] = {online_follow_series, online_sample_drivers},
    /* Results whose _ids their drivers hold, kept in the key map. */
    [RM_TRACE_HELD] = {online_follow_held, online_sample_drivers},
};
_Static_assert (sizeof followers / sizeof followers[0] == RM_TRACE_N,
                "one row per trace (rm_trace_t)");

const online_follower_t *
online_follower (const rm_pass_t *p)
{
    const online_follower_t *f =
        (unsigned) p->trace < RM_TRACE_N ? &followers[p->trace] : NULL;
    return f && f->follow ? f : NULL;
}

/* After a step: its targets' changes are what it made, and what an
 * earlier sync, killed, noted it was making. Side by side these replace
 * what the application wrote to the namespace (the steps after read the
 * step's results, not it); in place they are added to it (the steps after
 * read the namespace itself, the application's changes and the step's). */
static void
take_made (online_changes_t *ch, online_changes_t *made, const online_changes_t *noted,
           const rm_nsref_t *const *targets, size_t nt, bool in_place)
{
    for (size_t t = 0; t < nt; t++) {
        online_idlist_t *l = online_changes_list (ch, targets[t]->text, false);
        const online_idlist_t *m[2] = {
            online_changes_list (made, targets[t]->text, false),
            online_changes_list ((online_changes_t *) noted, targets[t]->text, false)};
        if (l && !in_place)
            online_idlist_clear (l, &ch->kept);
        for (int w = 0; w < 2; w++)
            for (uint32_t i = 0; m[w] && i < m[w]->n; i++) {
                bson_iter_t id;
                online_idlist_get (m[w], i, &id);
                online_changes_add (ch, targets[t]->text, &id);
            }
    }
    if (*made->rescan && !*ch->rescan)
        snprintf (ch->rescan, sizeof ch->rescan, "%s", made->rescan);
}

/* Whether a step after step i reads one of its targets. */
static bool
read_later (const online_t *on, size_t i, const rm_nsref_t *const *targets, size_t nt)
{
    for (size_t l = i + 1; l < on->run->plan.n; l++) {
        const rm_nsref_t *in[4];
        size_t n = rm_step_inputs (&on->run->plan.steps[l], in, 4);
        for (size_t a = 0; a < n; a++)
            for (size_t t = 0; t < nt; t++)
                if (!strcmp (in[a]->text, targets[t]->text))
                    return true;
    }
    return false;
}

bool
online_incr_sync (online_t *on, online_changes_t *ch, const online_changes_t *noted,
                  online_incr_stats_t *st, bool *done, size_t *first_full, bson_error_t *err)
{
    *done = false;
    *first_full = 0;
    for (size_t i = 0, run; i < on->run->plan.n; i += run) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *os = online_step (on, s, on->run->o->in_place);
        const rm_pass_t *passes = os->passes;
        size_t np = os->np;
        bool traced = true;
        online_changes_t made;
        char label[200];

        /* A fused run is its first step's pass (remodel/fuse.h). */
        run = rm_names_run (&on->run->names, i);
        if (!run) {
            run = 1;
            continue;
        }
        rm_names_label (&on->run->names, s, label, sizeof label);
        if (!online_step_runs (os, err))
            return false;
        for (size_t p = 0; p < np; p++)
            traced &= online_follower (&passes[p]) != NULL;
        if (!traced || *ch->rescan) {
            online_say_note (on, "sync: %s%s: rescanned in full (%s)", label,
                             i + run < on->run->plan.n ? " and the steps after it" : "",
                             *ch->rescan ? ch->rescan
                                         : "its results do not say which source document made "
                                           "them");
            *first_full = i;
            return true;
        }
        online_changes_init (&made);
        for (size_t p = 0; p < np; p++) {
            online_follow_req_t rq = {s, &passes[p], p, ONLINE_SYNC, ch, noted, &made,
                                      read_later (on, i + run - 1, os->written, os->n_written),
                                      st};
            if (!online_follower (&passes[p])->follow (on, &rq, err)) {
                online_changes_destroy (&made);
                online_error_step (on, err, s);
                return false;
            }
        }
        /* Too many drivers to recompute one by one: this step is
         * rescanned in full, from where its names still are. */
        if (*ch->rescan) {
            online_changes_destroy (&made);
            online_say_note (on, "sync: %s%s: rescanned in full (%s)", label,
                             i + run < on->run->plan.n ? " and the steps after it" : "", ch->rescan);
            *first_full = i;
            return true;
        }
        take_made (ch, &made, noted, os->written, os->n_written, on->run->o->in_place);
        online_changes_destroy (&made);
        /* In place the next steps read the same collections. */
        if (!on->run->o->in_place)
            rm_name_move_step (&on->own_run->names, s, os->written, os->n_written);
        *first_full = i + run;
    }
    *done = true;
    return true;
}

bool
online_incr_verify_sample (online_t *on, int64_t n, int64_t *differ, size_t *first_full,
                           bson_error_t *err)
{
    *first_full = 0;
    for (size_t i = 0, run; i < on->run->plan.n; i += run) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *os = online_step (on, s, false);
        const rm_pass_t *passes = os->passes;
        size_t np = os->np;
        bool traced = np > 0;
        char no_sample[200] = "", label[200];
        int64_t checked = 0;
        online_incr_stats_t st;

        run = rm_names_run (&on->run->names, i);
        if (!run) {
            run = 1;
            continue;
        }
        rm_names_label (&on->run->names, s, label, sizeof label);
        if (!online_step_runs (os, err))
            return false;
        for (size_t p = 0; p < np; p++)
            traced &= online_follower (&passes[p]) != NULL;
        if (!traced)
            return true; /* this step and those after: verified in full */
        memset (&st, 0, sizeof st);
        for (size_t p = 0; p < np; p++) {
            const online_follower_t *f = online_follower (&passes[p]);
            online_changes_t ch;
            online_follow_req_t rq = {s, &passes[p], p, ONLINE_VERIFY, &ch, NULL, NULL, false, &st};
            bool ok;
            /* A stop (a signal, finalize asking follow for the lease)
             * between two passes: the sample is no state to keep. */
            if (!online_stop_check (on, "while verifying a sample", err))
                return false;
            online_changes_init (&ch);
            ok = f->sample (on, s, &passes[p], n, &ch, no_sample, sizeof no_sample, err) &&
                 f->follow (on, &rq, err);
            checked += ch.kept;
            online_changes_destroy (&ch);
            if (!ok) {
                online_error_step (on, err, s);
                return false;
            }
        }
        *differ += st.rewritten + st.removed;
        online_say_note (on, "%s: %s: %lld documents verified (%s%s), %lld differ",
                         on->run->o->command, label,
                         (long long) checked,
                         *no_sample ? "the first in _id order, as the server's $sample "
                                      "failed: " :
                                      "a random sample",
                         no_sample, (long long) (st.rewritten + st.removed));
        rm_name_move_step (&on->own_run->names, s, os->targets, os->nt);
        *first_full = i + run;
    }
    return true;
}
