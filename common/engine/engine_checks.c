/* What the engine checks once a step has run, from what the step saw:
 *   - a field the step names that is in no document of its namespace
 *     (probes: probe.h), and a join in which no child meets any parent,
 *     are refused: they are almost always a misspelling, and running on
 *     would empty data (an embed's array of ids replaced by []) without a
 *     word; "allowMissing": true on the step, or --allow-missing, lets them
 *     through;
 *   - a denormalize whose lookups mostly find nothing, and a bucketize that
 *     sends most readings to onInvalid, run but leave a warning, which the
 *     tool prints with the summary.
 * Each step's row (step_class.h) says which fields it probes and what it
 * checks after; engine_step.c runs them, with what this file gives the
 * rows (probes, warnings, the join check). The set, unset, rename and version
 * steps have no probes: a plan that renames or unsets runs again over its
 * own output, where the field is rightly gone. */
#include <string.h>

#include "engine_impl.h"

void
rm_engine_add_probe (rm_step_run_t *run, const char *key, const char *path, const rm_nsref_t *ns)
{
    rm_probe_t *p;
    run->probes = bson_realloc (run->probes, (run->n_probes + 1) * sizeof *run->probes);
    p = &run->probes[run->n_probes++];
    rm_probe_init (p, key, path, ns->text);
}

bool
rm_engine_allows_missing (const rm_engine_t *e, const rm_step_t *s)
{
    return s->allow_missing || e->opts.allow_missing;
}

void
rm_engine_runs_destroy (rm_engine_t *e)
{
    for (size_t i = 0; e->runs && i < e->plan->n; i++) {
        for (size_t j = 0; j < e->runs[i].n_probes; j++)
            rm_probe_destroy (&e->runs[i].probes[j]);
        bson_free (e->runs[i].probes);
    }
    bson_free (e->runs);
    for (size_t i = 0; i < e->n_warnings; i++)
        bson_free (e->warnings[i]);
    bson_free (e->warnings);
}

rm_step_run_t *
rm_engine_step_run (rm_engine_t *e, const rm_step_t *s)
{
    /* By position in the engine's plan, not s->index: a plan of one step
     * taken from a longer one (remodel/batchstep.h) keeps its number. */
    return &e->runs[s - e->plan->steps];
}

rm_probe_t *
rm_engine_probe (rm_engine_t *e, const rm_step_t *s, size_t i)
{
    rm_step_run_t *run = rm_engine_step_run (e, s);
    return i < run->n_probes ? &run->probes[i] : NULL;
}

void
rm_engine_warn (rm_engine_t *e, const rm_step_t *s, const char *fmt, ...)
{
    va_list ap;
    char *text;
    va_start (ap, fmt);
    text = bson_strdupv_printf (fmt, ap);
    va_end (ap);
    e->warnings = bson_realloc (e->warnings, (e->n_warnings + 1) * sizeof *e->warnings);
    e->warnings[e->n_warnings++] = bson_strdup_printf ("step %zu (%s): %s", s->index, s->op, text);
    bson_free (text);
}

bool
rm_engine_join_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                      const rm_nsref_t *from, const rm_nsref_t *into, const rm_path_t *local,
                      const rm_path_t *foreign, bson_error_t *err)
{
    if (run->matched || !run->children || !run->parents || rm_engine_allows_missing (e, s))
        return true;
    rm_error_set (err, RM_ERR_FORMAT,
                  "none of the %llu documents of %s matches any of the %llu of %s (localField "
                  "\"%s\" = foreignField \"%s\"): check the fields and their types (if that is "
                  "expected, add \"allowMissing\": true to the step)",
                  (unsigned long long) run->children, from->text,
                  (unsigned long long) run->parents, into->text, local->text, foreign->text);
    return false;
}

size_t
rm_engine_warnings (const rm_engine_t *e, char *const **out)
{
    *out = e->warnings;
    return e->n_warnings;
}
