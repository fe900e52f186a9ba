/* A plan compiled step by step (remodel/compile.h): each step's passes as
 * rm_step_passes plans them, its pipelines from the compiler of its kind (the
 * table in compile_table.c), a $merge into its side-by-side targets, and
 * the names moved on as the online runner moves them, so that a later
 * step reads what this one wrote whether it ran server-side or not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_impl.h"

bool
rm_compile_version_parse (const char *text, rm_compile_version_t *v)
{
    char *end;
    long major = strtol (text, &end, 10), minor = 0;
    if (end == text || major < 3 || major > 99)
        return false;
    if (*end == '.') {
        const char *m = end + 1;
        minor = strtol (m, &end, 10);
        if (end == m || minor < 0 || minor > 99)
            return false;
        /* A patch number ("5.0.14", as buildInfo says it) counts for nothing. */
        if (*end == '.') {
            const char *p = end + 1;
            strtol (p, &end, 10);
            if (end == p)
                return false;
        }
    }
    if (*end)
        return false;
    v->major = (int) major;
    v->minor = (int) minor;
    return true;
}

bool
rm_compile_version_option (const char *text, rm_compile_version_t *v, bson_error_t *err)
{
    if (rm_compile_version_parse (text, v))
        return true;
    rm_error_set (err, RM_ERR_USAGE,
                  "--server-version: \"%s\" is not a MongoDB version like 5.0 (3.6 or later)",
                  text);
    return false;
}

bool
rm_compile_lookup_since_36681 (rm_compile_version_t v)
{
    return RM_COMPILE_V (v) >= RM_LOOKUP_36681_VERSION;
}

const char *
rm_compile_lookup_rules (bool since_36681)
{
    return since_36681 ? "9.0 (SERVER-36681)" : "5.0-8.x";
}

void
rm_compile_range_stage (bson_t *stage, const bson_t *ids)
{
    bson_t match, id;
    BSON_APPEND_DOCUMENT_BEGIN (stage, "$match", &match);
    BSON_APPEND_DOCUMENT_BEGIN (&match, "_id", &id);
    BSON_APPEND_ARRAY (&id, "$in", ids);
    bson_append_document_end (&match, &id);
    bson_append_document_end (stage, &match);
}

size_t
rm_compile_stage_names (const bson_t *pipeline, const char **names, size_t n, size_t max)
{
    bson_iter_t it, st;
    if (!bson_iter_init (&it, pipeline))
        return n;
    while (bson_iter_next (&it)) {
        const char *name;
        bool seen = false;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &st) || !bson_iter_next (&st))
            continue;
        name = bson_iter_key (&st);
        for (size_t i = 0; i < n; i++)
            seen |= !strcmp (names[i], name);
        if (!seen && n < max)
            names[n++] = name;
    }
    return n;
}

/* The pass's last stage: its results replace, by _id, what an earlier
 * attempt at the same range wrote (a $merge that failed part way keeps
 * what it wrote: running the range again completes it). */
static void
append_merge (const rm_names_t *nm, const rm_step_t *s, const rm_nsref_t *target,
              rm_compile_pass_t *cp)
{
    char key[16], *coll = cp->target;
    bson_t stage, merge, into, *pipeline = &cp->pipeline;
    cp->out = target;
    rm_name_target (nm, s, target, cp->target, sizeof cp->target);
    snprintf (key, sizeof key, "%u", bson_count_keys (pipeline));
    BSON_APPEND_DOCUMENT_BEGIN (pipeline, key, &stage);
    BSON_APPEND_DOCUMENT_BEGIN (&stage, "$merge", &merge);
    BSON_APPEND_DOCUMENT_BEGIN (&merge, "into", &into);
    BSON_APPEND_UTF8 (&into, "db", target->db);
    BSON_APPEND_UTF8 (&into, "coll", coll);
    bson_append_document_end (&merge, &into);
    BSON_APPEND_UTF8 (&merge, "on", "_id");
    BSON_APPEND_UTF8 (&merge, "whenMatched", "replace");
    BSON_APPEND_UTF8 (&merge, "whenNotMatched", "insert");
    bson_append_document_end (&stage, &merge);
    bson_append_document_end (pipeline, &stage);
}

/* A filter compiles where the step is one pass whose only results are
 * its own documents, rewritten (the field steps, a denormalize, a
 * summary's parents): the documents it takes go through the step's
 * pipeline, the others through a second pass that copies them as they
 * are, both into the one target. */
static bool
filter_compiles (const rm_step_t *s, const rm_pass_t *passes, size_t np)
{
    const rm_nsref_t *in[4];
    size_t n = rm_step_inputs (s, in, 4);
    return np == 1 && passes[0].n_keep == 1 && (size_t) passes[0].drive < n &&
           !strcmp (passes[0].keep[0]->text, in[passes[0].drive]->text);
}

/* A pipeline with {$match: q} put first. */
static void
prepend_match (bson_t *pipeline, const bson_t *q)
{
    bson_t out = BSON_INITIALIZER, stage;
    bson_iter_t it;
    unsigned k = 0;
    char key[16];

    BSON_APPEND_DOCUMENT_BEGIN (&out, "0", &stage);
    BSON_APPEND_DOCUMENT (&stage, "$match", q);
    bson_append_document_end (&out, &stage);
    bson_iter_init (&it, pipeline);
    while (bson_iter_next (&it)) {
        snprintf (key, sizeof key, "%u", ++k);
        bson_append_iter (&out, key, -1, &it);
    }
    bson_destroy (pipeline);
    bson_copy_to (&out, pipeline);
    bson_destroy (&out);
}

/* Pass 1 (a step of one pass has the room) takes what the filter leaves
 * out ({$nor: [filter]}: exactly the others, missing fields included),
 * numbered apart so that its checkpoints are its own. */
static void
filter_passes (rm_compile_step_t *st)
{
    bson_t nor = BSON_INITIALIZER, arr;
    rm_compile_pass_t *take = &st->passes[0], *keep = &st->passes[1];

    prepend_match (&take->pipeline, st->s->filter_doc);
    *keep = *take;
    keep->pass = 1;
    bson_init (&keep->pipeline);
    BSON_APPEND_ARRAY_BEGIN (&nor, "$nor", &arr);
    BSON_APPEND_DOCUMENT (&arr, "0", st->s->filter_doc);
    bson_append_array_end (&nor, &arr);
    prepend_match (&keep->pipeline, &nor);
    bson_destroy (&nor);
    st->n_passes = 2;
}

static bool
compile_step (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st,
              const rm_pass_t *passes, size_t np)
{
    const rm_step_t *s = st->s;
    const rm_compile_kind_t *k =
        (unsigned) s->kind < RM_STEP_N_KINDS ? &rm_compile_kinds[s->kind] : NULL;

    if (!k || (!k->compile && !k->refusal))
        return rm_compile_refuse (st, "not a step the compiler knows");
    if (!k->compile)
        return rm_compile_refuse (st, "%s", k->refusal);
    if (s->match)
        return rm_compile_refuse (st, "a step with a match runs client-side: its $lookup "
                                      "would need a pipeline the compiler does not write yet");
    if (s->filter && !k->own_filter && !filter_compiles (s, passes, np))
        return rm_compile_refuse (st, "a step with a filter runs client-side: its results are "
                                      "not its own documents, so a pipeline cannot keep the "
                                      "documents it leaves out as they are");
    for (size_t i = 0; i < np; i++) {
        const rm_nsref_t *in[4];
        rm_step_inputs (s, in, 4);
        st->passes[i].pass = i;
        st->passes[i].drive = in[passes[i].drive];
        snprintf (st->passes[i].coll, sizeof st->passes[i].coll, "%s",
                  rm_name_now (nm, in[passes[i].drive]));
        bson_init (&st->passes[i].pipeline);
    }
    st->n_passes = np;
    if (!k->compile (nm, v, st))
        return false;
    if (s->filter && st->n_passes == 1 && !k->own_filter)
        filter_passes (st);
    for (size_t i = 0; i < st->n_passes; i++)
        append_merge (nm, s, k->own_filter ? st->passes[i].out : passes[i < np ? i : 0].keep[0],
                      &st->passes[i]);
    return true;
}

bool
rm_compile_plan (const rm_plan_t *plan, rm_names_t *nm, rm_compile_version_t v,
                 rm_compile_plan_t *out, bson_error_t *err)
{
    memset (out, 0, sizeof *out);
    out->version = v;
    out->steps = bson_malloc0 ((plan->n ? plan->n : 1) * sizeof *out->steps);
    rm_names_clear (nm);
    for (size_t i = 0; i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        rm_compile_step_t *st = &out->steps[out->n++];
        rm_pass_t passes[RM_MAX_PASSES];
        const rm_nsref_t *targets[8];
        bson_error_t why;
        size_t np = rm_step_passes (s, false, passes, &why);

        st->s = s;
        if (!np)
            rm_compile_refuse (st, "%s", why.message);
        else if (!compile_step (nm, v, st, passes, np))
            return false;
        /* The next steps read this one's results, wherever it runs. */
        if (np)
            rm_name_move_step (nm, s, targets, rm_step_targets (s, passes, np, targets));
    }
    (void) err;
    return true;
}

void
rm_compile_plan_destroy (rm_compile_plan_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        for (size_t p = 0; p < c->steps[i].n_passes; p++)
            bson_destroy (&c->steps[i].passes[p].pipeline);
        for (size_t k = 0; k < c->steps[i].n_notes; k++)
            bson_free (c->steps[i].notes[k]);
    }
    bson_free (c->steps);
    memset (c, 0, sizeof *c);
}
