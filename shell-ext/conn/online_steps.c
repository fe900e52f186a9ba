/* Each step's passes derived once, when the plan is loaded (online.h,
 * "online_steps.c"): run, verify, sync, follow, status, finalize and the
 * change log's readers all ask what a step reads and writes, and a
 * second derivation of it, in a file that did it its own way, is a
 * second answer waiting to differ. Both modes are kept: status reads a
 * record begun in the other mode, and the change log's readers ask what
 * a step makes side by side whatever the run's mode. */
#include "online.h"

static void
resolve (const rm_step_t *s, bool in_place, online_step_t *st)
{
    memset (st, 0, sizeof *st);
    st->s = s;
    st->n_in = rm_step_inputs (s, st->in, 4);
    st->np = rm_step_passes (s, in_place, st->passes, &st->why);
    st->n_written = rm_step_targets (s, st->passes, st->np, st->written);
    if (!in_place) {
        memcpy (st->targets, st->written, sizeof st->targets);
        st->nt = st->n_written;
    }
}

void
online_steps_resolve (online_run_t *run)
{
    for (int m = 0; m < 2; m++) {
        bson_free (run->steps[m]);
        run->steps[m] = bson_malloc0 ((run->plan.n ? run->plan.n : 1) * sizeof *run->steps[m]);
        for (size_t i = 0; i < run->plan.n; i++)
            resolve (&run->plan.steps[i], m == 1, &run->steps[m][i]);
    }
}

const online_step_t *
online_step (const online_t *on, const rm_step_t *s, bool in_place)
{
    size_t i = (size_t) (s - on->run->plan.steps);

    BSON_ASSERT (on->run->steps[in_place] && i < on->run->plan.n);
    return &on->run->steps[in_place][i];
}

bool
online_step_runs (const online_step_t *st, bson_error_t *err)
{
    if (st->np)
        return true;
    *err = st->why;
    return false;
}
