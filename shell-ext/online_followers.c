/* The followers of a change log (online_changes.h), one row per way a
 * pass's results trace back to the documents that made them (rm_trace_t,
 * which each step's passes declare: remodel/passes.h). A sync and a
 * sampled verify (online_incr.c) find a pass's row here and nothing else
 * about it: no step kind is named in the online mode, so a new kind whose
 * passes declare a trace is followed as it is, and a new trace is a row
 * here and its functions. */
#include "online_changes.h"

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
