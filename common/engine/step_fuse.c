/* Runs of steps fused into one pass (remodel/fuse.h). The test is the
 * one-pass path's own (a stage class, nothing read whole first) together
 * with the shape of the step's online pass, so that a run read once online
 * computes, through the same engine, what the steps compute one by one:
 * a join, a bucketize, an extract or anything with partners ends a run. */
#include <string.h>

#include "remodel/fuse.h"
#include "remodel/passes.h"
#include "step_class.h"

bool
rm_step_fusable (const rm_plan_t *plan, const rm_step_t *s)
{
    const rm_stage_class_t *c = rm_step_classes[s->kind].stage;
    const rm_nsref_t *in[4], *out[4], *made[4];
    const char *keys[4];
    rm_pass_t passes[RM_MAX_PASSES];
    const rm_pass_t *p = &passes[0];
    bson_error_t err;

    if (!c || c->reads_first || (c->can && !c->can (plan, s)))
        return false;
    if (rm_step_inputs (s, in, 4) != 1 || rm_step_outputs (s, out, 4) != 1 ||
        strcmp (in[0]->text, out[0]->text) != 0 || rm_step_creates (s, made, keys, 4) != 0 ||
        rm_step_empties (s, made, 4) != 0)
        return false;
    if (rm_step_passes (s, false, passes, &err) != 1)
        return false;
    return p->partner < 0 && !p->series && p->n_keep == 1 && p->by_id &&
           !strcmp (p->keep[0]->text, in[0]->text);
}

/* Whether step i goes on the run of step i - 1. */
static bool
joins (const rm_plan_t *plan, size_t i)
{
    const rm_nsref_t *a[4], *b[4];
    if (i == 0 || !rm_step_fusable (plan, &plan->steps[i - 1]) ||
        !rm_step_fusable (plan, &plan->steps[i]))
        return false;
    rm_step_inputs (&plan->steps[i - 1], a, 4);
    rm_step_inputs (&plan->steps[i], b, 4);
    return !strcmp (a[0]->text, b[0]->text);
}

size_t
rm_plan_run (const rm_plan_t *plan, size_t i, size_t *first)
{
    size_t f = i, end = i + 1;
    while (f > 0 && joins (plan, f))
        f--;
    while (end < plan->n && joins (plan, end))
        end++;
    if (first)
        *first = f;
    return end - f;
}
