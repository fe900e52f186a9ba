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
 * The set, unset, rename and version steps are not probed: a plan that
 * renames or unsets runs again over its own output, where the field is
 * rightly gone. */
#include <string.h>

#include "engine_impl.h"

static void
add_probe (rm_step_run_t *run, const char *key, const char *path, const rm_nsref_t *ns)
{
    rm_probe_t *p;
    run->probes = bson_realloc (run->probes, (run->n_probes + 1) * sizeof *run->probes);
    p = &run->probes[run->n_probes++];
    rm_probe_init (p, key, path, ns->text);
}

/* The fields each step reads, in the order the step's code asks for them
 * (rm_engine_probe's i). */
static void
probes_of (const rm_step_t *s, rm_step_run_t *run)
{
    switch (s->kind) {
    case RM_STEP_EMBED:
        add_probe (run, "localField", s->u.embed.local.text, &s->u.embed.into);
        add_probe (run, "foreignField", s->u.embed.foreign.text, &s->u.embed.from);
        break;
    case RM_STEP_SUMMARIZE:
        add_probe (run, "localField", s->u.summarize.local.text, &s->u.summarize.into);
        add_probe (run, "foreignField", s->u.summarize.foreign.text, &s->u.summarize.from);
        break;
    case RM_STEP_DENORMALIZE:
        add_probe (run, "localField", s->u.denorm.local.text, &s->u.denorm.in);
        add_probe (run, "foreignField", s->u.denorm.foreign.text, &s->u.denorm.from);
        for (size_t i = 0; i < s->u.denorm.n; i++)
            add_probe (run, "fields", s->u.denorm.sources[i].text, &s->u.denorm.from);
        break;
    case RM_STEP_EXTRACT:
        add_probe (run, "path", s->u.extract.path.text, &s->u.extract.from);
        break;
    case RM_STEP_BUCKETIZE:
        add_probe (run, "timeField", s->u.bucketize.time_field, &s->u.bucketize.from);
        for (size_t i = 0; i < s->u.bucketize.n_meta; i++)
            add_probe (run, "metaField", s->u.bucketize.meta[i], &s->u.bucketize.from);
        for (size_t i = 0; i < s->u.bucketize.n_stats; i++)
            add_probe (run, "stats", s->u.bucketize.stats[i].field, &s->u.bucketize.from);
        break;
    default:
        break;
    }
}

void
rm_engine_runs_init (rm_engine_t *e)
{
    e->runs = bson_malloc0 ((e->plan->n + 1) * sizeof *e->runs);
    for (size_t i = 0; i < e->plan->n; i++)
        if (!e->plan->steps[i].allow_missing && !e->opts.allow_missing)
            probes_of (&e->plan->steps[i], &e->runs[i]);
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

static void BSON_GNUC_PRINTF (3, 4)
warn (rm_engine_t *e, const rm_step_t *s, const char *fmt, ...)
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

static bool
join_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
            const rm_nsref_t *from, const rm_nsref_t *into, const rm_path_t *local,
            const rm_path_t *foreign, bson_error_t *err)
{
    if (run->matched || !run->children || !run->parents || s->allow_missing || e->opts.allow_missing)
        return true;
    rm_error_set (err, RM_ERR_FORMAT,
                  "none of the %llu documents of %s matches any of the %llu of %s (localField "
                  "\"%s\" = foreignField \"%s\"): check the fields and their types (if that is "
                  "expected, add \"allowMissing\": true to the step)",
                  (unsigned long long) run->children, from->text,
                  (unsigned long long) run->parents, into->text, local->text, foreign->text);
    return false;
}

bool
rm_engine_check_step (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_step_run_t *run = rm_engine_step_run (e, s);
    bool allow = s->allow_missing || e->opts.allow_missing;
    bool ok = true;

    if (run->checked)
        return true; /* a step the one-pass path deferred ran as a batch */
    run->checked = true;
    if (s->kind == RM_STEP_DENORMALIZE)
        rm_engine_find (e, &s->u.denorm.in)->stats->missed += run->missed;
    if (s->kind == RM_STEP_BUCKETIZE)
        rm_engine_find (e, &s->u.bucketize.from)->stats->invalid += run->invalid;

    for (size_t i = 0; ok && i < run->n_probes; i++)
        ok = rm_probe_check (&run->probes[i], err);
    if (ok && s->kind == RM_STEP_EMBED)
        ok = join_check (e, s, run, &s->u.embed.from, &s->u.embed.into, &s->u.embed.local,
                         &s->u.embed.foreign, err);
    if (ok && s->kind == RM_STEP_SUMMARIZE)
        ok = join_check (e, s, run, &s->u.summarize.from, &s->u.summarize.into,
                         &s->u.summarize.local, &s->u.summarize.foreign, err);
    /* (probe 1, foreignField's, counted `from`'s documents: none, nothing to find) */
    if (ok && s->kind == RM_STEP_DENORMALIZE && run->lookups && run->missed == run->lookups &&
        !allow && run->n_probes > 1 && run->probes[1].docs > 0) {
        rm_error_set (err, RM_ERR_FORMAT,
                      "none of the %llu references in %s (localField \"%s\") is found in %s "
                      "(foreignField \"%s\"): check the fields and their types (if that is "
                      "expected, add \"allowMissing\": true to the step)",
                      (unsigned long long) run->lookups, s->u.denorm.in.text,
                      s->u.denorm.local.text, s->u.denorm.from.text, s->u.denorm.foreign.text);
        ok = false;
    }
    if (!ok) {
        rm_error_prefix (err, "step %zu (%s)", s->index, s->op);
        return false;
    }
    /* Most, not all: a few misses are the data's own (a deleted product). */
    if (s->kind == RM_STEP_DENORMALIZE && run->missed * 2 > run->lookups)
        warn (e, s, "%llu of the %llu references in %s found nothing in %s (localField \"%s\", "
              "foreignField \"%s\")", (unsigned long long) run->missed,
              (unsigned long long) run->lookups, s->u.denorm.in.text, s->u.denorm.from.text,
              s->u.denorm.local.text, s->u.denorm.foreign.text);
    if (s->kind == RM_STEP_BUCKETIZE && run->invalid * 2 > run->readings)
        warn (e, s, "%llu of the %llu readings of %s went to onInvalid (%s): check timeField "
              "\"%s\" and metaField", (unsigned long long) run->invalid,
              (unsigned long long) run->readings, s->u.bucketize.from.text,
              s->u.bucketize.invalid_to.text ? s->u.bucketize.invalid_to.text : "error",
              s->u.bucketize.time_field);
    return true;
}

size_t
rm_engine_warnings (const rm_engine_t *e, char *const **out)
{
    *out = e->warnings;
    return e->n_warnings;
}
