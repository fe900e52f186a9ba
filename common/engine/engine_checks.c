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
 * own output, where the field is rightly gone.
 *
 * Every other path a step reads gets the same check (a misspelt
 * {"$sum": "$totl"} once summed to 0 for every parent, and check said
 * "valid"): rm_engine_add_read_probes adds them as riders (probe.h) of the
 * probes the step's code feeds already, so no step's loop changes. */
#include <string.h>

#include "engine_impl.h"
#include "remodel/expr.h"
#include "remodel/query.h"

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
    rm_join_seen_t j = {.refs = run->children, .partners = run->parents, .found = run->matched,
                        .refs_ns = from->text, .partner_ns = into->text, .local = local->text,
                        .foreign = foreign->text};
    return rm_join_seen_check (&j, rm_engine_allows_missing (e, s), err);
}

size_t
rm_engine_warnings (const rm_engine_t *e, char *const **out)
{
    *out = e->warnings;
    return e->n_warnings;
}

/* The probe the documents of a side come through: the step's first (the
 * documents it changes: the filter's), or its "foreignField" one (the
 * joined side: match, sort, accumulators). */
static rm_probe_t *
host_probe (rm_step_run_t *run, const char *key)
{
    for (size_t i = 0; i < run->n_probes; i++)
        if (!key || !strcmp (run->probes[i].key, key))
            return &run->probes[i];
    return NULL;
}

typedef struct {
    rm_probe_t *host;
    const char *key;
} rider_t;

static void
ride (const rm_path_t *path, void *arg)
{
    rider_t *r = arg;
    rm_probe_add_rider (r->host, r->key, path->text);
}

/* The paths an expression reads (none when it reads the whole document). */
static void
expr_riders (rm_probe_t *host, const char *key, const bson_iter_t *it)
{
    bson_error_t err;
    rm_expr_t *e = rm_expr_parse (it, &err);
    rider_t r = {host, key};
    bool whole = false;
    if (!e)
        return; /* the step's parser took it: its run says what is wrong */
    rm_expr_paths (e, ride, &r, &whole);
    rm_expr_destroy (e);
}

/* A filter's or match's fields: those its conditions need (a comparison
 * such as {"stauts": "A"} never matches a document lacking the field: in
 * none, it takes nothing). Not {"f": null} nor {"f": {"$exists": false}}:
 * a field in no document yet is how a plan picks the documents not
 * migrated yet. */
static void
query_riders (rm_probe_t *host, const char *key, const rm_query_t *q)
{
    rider_t r = {host, key};
    if (host && q)
        rm_query_needs_fields (q, ride, &r);
}

static void
sort_riders (rm_probe_t *host, const rm_sortspec_t *sort)
{
    for (size_t i = 0; host && i < sort->n; i++)
        rm_probe_add_rider (host, "sort", sort->keys[i].path.text);
}

/* summarize's accumulators: {"name": {"$op": ARG}}, ARG an expression, or
 * for $topN and $bottomN {"n", "sortBy", "output"}. */
static void
accumulator_riders (rm_probe_t *host, const bson_t *fields)
{
    bson_iter_t it, acc, arg, sub;
    if (!host || !fields || !bson_iter_init (&it, fields))
        return;
    while (bson_iter_next (&it)) {
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &acc) ||
            !bson_iter_next (&acc))
            continue;
        if (strcmp (bson_iter_key (&acc), "$topN") && strcmp (bson_iter_key (&acc), "$bottomN")) {
            if (strcmp (bson_iter_key (&acc), "$count"))
                expr_riders (host, "fields", &acc);
            continue;
        }
        if (!BSON_ITER_HOLDS_DOCUMENT (&acc) || !bson_iter_recurse (&acc, &arg))
            continue;
        while (bson_iter_next (&arg)) {
            if (!strcmp (bson_iter_key (&arg), "output"))
                expr_riders (host, "fields", &arg);
            else if (!strcmp (bson_iter_key (&arg), "sortBy") &&
                     BSON_ITER_HOLDS_DOCUMENT (&arg) && bson_iter_recurse (&arg, &sub))
                while (bson_iter_next (&sub))
                    rm_probe_add_rider (host, "sortBy", bson_iter_key (&sub));
        }
    }
}

/* What the joins read of their joined side beyond the keys their rows
 * probe, by kind. The natural home of these is a row of step_table.c
 * (a "reads" function in each step file); they are here while those files
 * change under the filters' work. */
static void
embed_reads (const rm_step_t *s, rm_probe_t *joined)
{
    /* Not its project: a projection names fields a child may lack, as
     * $project does (tests/transforms' edge cases keep one no document
     * has), and the children come out without it, as on the server. */
    sort_riders (joined, &s->u.embed.sort);
}

static void
summarize_reads (const rm_step_t *s, rm_probe_t *joined)
{
    accumulator_riders (joined, s->u.summarize.exprs);
    sort_riders (joined, &s->u.summarize.sort);
}

static void (*const joined_reads[RM_STEP_N_KINDS]) (const rm_step_t *, rm_probe_t *) = {
    [RM_STEP_EMBED] = embed_reads,
    [RM_STEP_SUMMARIZE] = summarize_reads,
};

void
rm_engine_add_read_probes (const rm_step_t *s, rm_step_run_t *run)
{
    rm_probe_t *joined = host_probe (run, "foreignField");
    query_riders (host_probe (run, NULL), "filter", s->filter);
    query_riders (joined, "match", s->match);
    if (joined && joined_reads[s->kind])
        joined_reads[s->kind](s, joined);
}

/* What the steps ask of the run as they go (here, not in engine.c or
 * engine_step.c, which call the steps: a step calling back into them would
 * make a circle of files). */

bool
rm_engine_doc_error (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    bson_error_t why;
    if (!e || !e->opts.doc_error || err->code != RM_ERR_DATA)
        return false;
    why = *err;
    rm_error_prefix (&why, "step %zu (%s)", s->index, s->op);
    e->opts.doc_error (e->opts.doc_error_ctx, &why);
    return true;
}

int64_t
rm_engine_now (const rm_engine_t *e)
{
    return e->opts.now_ms;
}

/* rm_engine_filter's count of what the filter left out for lack of a
 * field it compares. */
typedef struct {
    rm_expr_ctx_t *cx;
    const uint8_t *doc;
    uint32_t len;
    const rm_path_t *lacking;
} lacking_t;

static void
note_lacking (const rm_path_t *p, void *arg)
{
    lacking_t *l = arg;
    bson_iter_t it;
    bson_value_t v;
    /* A top-level field: through the walk the filter held (no iterator
     * set up when it is held). */
    int held = p->n == 1 ? rm_expr_ctx_held_value (l->cx, l->doc, l->len, p->parts[0], p->lens[0], &v) : -1;
    bool there = held >= 0 ? held == 1
                 : p->n == 1 ? rm_expr_ctx_field (l->cx, l->doc, l->len, p->parts[0], (uint32_t) p->lens[0], &it)
                             : rm_path_get (l->doc, l->len, p, &it);
    if (!l->lacking && !there)
        l->lacking = p;
}

bool
rm_engine_filter (rm_engine_t *e, const rm_step_t *s, rm_expr_ctx_t *cx, const uint8_t *doc,
                  uint32_t len, bool *take, bson_error_t *err)
{
    *take = true;
    if (!s->filter)
        return true;
    if (!rm_query_match (s->filter, cx, doc, len, take, err)) {
        rm_error_prefix (err, "filter");
        return false;
    }
    if (*take || !e)
        return true;
    rm_engine_filter_left (e, s, rm_engine_filter_lacking (s, cx, doc, len));
    return true;
}

const rm_path_t *
rm_engine_filter_lacking (const rm_step_t *s, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len)
{
    lacking_t l = {cx, doc, len, NULL};
    rm_query_needs_fields (s->filter, note_lacking, &l);
    return l.lacking;
}

void
rm_engine_filter_left (rm_engine_t *e, const rm_step_t *s, const rm_path_t *lacking)
{
    rm_step_run_t *run;
    if (!lacking)
        return;
    run = rm_engine_step_run (e, s);
    if (!run->filter_lacking++)
        snprintf (run->filter_path, sizeof run->filter_path, "%s", lacking->text);
}

void
rm_engine_rewrote (rm_engine_t *e, const rm_step_t *s, const uint8_t *in, size_t in_len,
                   const uint8_t *out, size_t out_len)
{
    rm_step_run_t *run;
    if (!e)
        return;
    run = rm_engine_step_run (e, s);
    run->counts = true;
    if (in == out || (in_len == out_len && !memcmp (in, out, in_len)))
        run->unchanged++;
    else
        run->changed++;
}

bool
rm_engine_step_counts (const rm_engine_t *e, size_t i, uint64_t *changed, uint64_t *unchanged)
{
    const rm_step_run_t *run;
    if (!e->runs || i >= e->plan->n)
        return false;
    run = &e->runs[i];
    *changed = run->changed;
    *unchanged = run->unchanged;
    return run->counts;
}

bool
rm_engine_step_lookups (const rm_engine_t *e, size_t i, uint64_t *found, uint64_t *missed)
{
    if (!e->runs || i >= e->plan->n)
        return false;
    *found = e->runs[i].lookups;
    *missed = e->runs[i].missed;
    return true;
}

bool
rm_engine_step_selected (const rm_engine_t *e, size_t i, uint64_t *selected, uint64_t *passed)
{
    const rm_step_run_t *run;
    if (!e->runs || i >= e->plan->n)
        return false;
    run = &e->runs[i];
    *selected = run->selected;
    *passed = run->passed;
    return run->selects;
}
