/* One step of a plan run store to store (engine_impl.h): its probes set
 * up, its row's run, then the checks of what it saw (engine_checks.c
 * says what they are). Above the steps' table, which it reads; below the
 * one-pass path (engine_stream.c) and the plan's run (engine.c), which
 * call it. */
#include <string.h>

#include "engine_impl.h"
#include "step_class.h"

void
rm_engine_runs_init (rm_engine_t *e)
{
    e->runs = bson_malloc0 ((e->plan->n + 1) * sizeof *e->runs);
    for (size_t i = 0; i < e->plan->n; i++)
        if (!rm_engine_allows_missing (e, &e->plan->steps[i]) &&
            rm_step_classes[e->plan->steps[i].kind].probes) {
            rm_step_classes[e->plan->steps[i].kind].probes (&e->plan->steps[i], &e->runs[i]);
            rm_engine_add_read_probes (&e->plan->steps[i], &e->runs[i]);
        }
}

/* A step writes only to a new namespace or an empty one (plan.h). */
static bool
targets_empty (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_nsref_t *made[4];
    const char *keys[4];
    size_t n = rm_step_creates (s, made, keys, 4);
    for (size_t j = 0; j < n; j++) {
        rm_ens_t *ns = rm_engine_find (e, made[j]);
        uint64_t docs = ns->store ? rm_store_count (ns->store) : 0;
        if (docs) {
            rm_error_set (err, RM_ERR_USAGE,
                          "step %zu (%s): \"%s\": namespace %s already exists and holds %llu "
                          "document(s) (a step writes only to a new or an empty namespace)",
                          s->index, s->op, keys[j], made[j]->text, (unsigned long long) docs);
            return false;
        }
    }
    return true;
}

bool
rm_engine_run_step (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    bool ok;
    if (!targets_empty (e, s, err))
        return false;
    e->step = (size_t) (s - e->plan->steps) + 1; /* its position: see rm_engine_step_run */
    ok = rm_step_classes[s->kind].run (e, s, err);
    e->step = 0;
    if (!ok && err->message[0] && strncmp (err->message, "step ", 5) != 0)
        rm_error_prefix (err, "step %zu (%s)", s->index, s->op);
    return ok && rm_engine_check_step (e, s, err);
}

bool
rm_engine_check_step (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_step_run_t *run = rm_engine_step_run (e, s);
    bool (*check) (rm_engine_t *, const rm_step_t *, const rm_step_run_t *, bson_error_t *) =
        rm_step_classes[s->kind].check;
    bool ok = true;

    if (run->checked)
        return true; /* a step the one-pass path deferred ran as a batch */
    run->checked = true;
    for (size_t i = 0; ok && i < run->n_probes; i++)
        ok = rm_probe_check (&run->probes[i], err);
    if (ok && check)
        ok = check (e, s, run, err);
    if (ok && run->filter_lacking)
        rm_engine_warn (e, s, "filter: %llu document(s) lack \"%s\", which the filter compares, "
                        "and so were left as they were (a comparison such as $lt never matches "
                        "a missing field: to take them too, add {\"%s\": {\"$exists\": false}} "
                        "in an $or)",
                        (unsigned long long) run->filter_lacking, run->filter_path, run->filter_path);
    if (!ok)
        rm_error_prefix (err, "step %zu (%s)", s->index, s->op);
    return ok;
}

