/* A plan compiled step by step (compile.h): each step's passes as
 * online_passes.c defines them, its pipelines from the compiler of its
 * kind, a $merge into its side-by-side targets, and the names moved on as
 * online_run.c moves them, so that a later step reads what this one wrote
 * whether it ran server-side or not. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

bool
compile_version_parse (const char *text, compile_version_t *v)
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
compile_refuse (compile_step_t *st, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (st->reason, sizeof st->reason, fmt, ap);
    va_end (ap);
    for (size_t i = 0; i < st->n_passes; i++)
        bson_destroy (&st->passes[i].pipeline);
    st->n_passes = 0;
    return true;
}

void
compile_note (compile_step_t *st, const char *fmt, ...)
{
    va_list ap;
    if (st->n_notes == COMPILE_MAX_NOTES)
        return;
    va_start (ap, fmt);
    st->notes[st->n_notes++] = bson_strdupv_printf (fmt, ap);
    va_end (ap);
}

void
compile_guard (online_t *on, compile_step_t *st, const rm_nsref_t *ns, const char *field)
{
    st->guard_ns = ns;
    st->guard_field = field;
    snprintf (st->guard_coll, sizeof st->guard_coll, "%s", online_name_now (on, ns));
}

void
compile_range_stage (bson_t *stage, const bson_t *ids)
{
    bson_t match, id;
    BSON_APPEND_DOCUMENT_BEGIN (stage, "$match", &match);
    BSON_APPEND_DOCUMENT_BEGIN (&match, "_id", &id);
    BSON_APPEND_ARRAY (&id, "$in", ids);
    bson_append_document_end (&match, &id);
    bson_append_document_end (stage, &match);
}

size_t
compile_stage_names (const bson_t *pipeline, const char **names, size_t n, size_t max)
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
append_merge (online_t *on, const rm_step_t *s, const rm_nsref_t *target, compile_pass_t *cp)
{
    char key[16], *coll = cp->target;
    bson_t stage, merge, into, *pipeline = &cp->pipeline;
    cp->out = target;
    online_name_target (on, s, target, cp->target, sizeof cp->target);
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

static bool
compile_step (online_t *on, compile_version_t v, compile_step_t *st)
{
    const rm_step_t *s = st->s;
    online_pass_t passes[2];
    bson_error_t why;
    size_t np = online_step_passes (s, false, passes, &why);

    if (!np)
        return compile_refuse (st, "%s", why.message);
    for (size_t i = 0; i < np; i++) {
        const rm_nsref_t *in[4];
        rm_step_inputs (s, in, 4);
        st->passes[i].pass = i;
        st->passes[i].drive = in[passes[i].drive];
        snprintf (st->passes[i].coll, sizeof st->passes[i].coll, "%s",
                  online_name_now (on, in[passes[i].drive]));
        bson_init (&st->passes[i].pipeline);
    }
    st->n_passes = np;
    switch (s->kind) {
    case RM_STEP_EMBED: compile_embed (on, v, st); break;
    case RM_STEP_SUMMARIZE: compile_summarize (on, v, st); break;
    case RM_STEP_DENORMALIZE: compile_denormalize (on, v, st); break;
    case RM_STEP_SET:
    case RM_STEP_UNSET:
    case RM_STEP_RENAME:
    case RM_STEP_VERSION: compile_fields (on, v, st); break;
    case RM_STEP_EXTRACT:
        return compile_refuse (st, "an element without an _id of its own gets a deterministic "
                                   "ObjectId (a hash of the parent's _id, the path and the "
                                   "position), which no aggregation expression computes");
    case RM_STEP_BUCKETIZE:
        return compile_refuse (st, "a bucket's _id is a deterministic ObjectId (a hash of the "
                                   "meta values and the window), and a bucket's size is cut at "
                                   "16 MiB, neither of which an aggregation expression computes");
    case RM_STEP_UNBUCKETIZE:
        return compile_refuse (st, "a reading's meta fields go back to the positions "
                                   "metaPositions records, and each bucket is checked against "
                                   "the window and stats: no pipeline stage places fields by "
                                   "position or stops on a bucket that disagrees");
    default:
        return compile_refuse (st, "not a step the compiler knows");
    }
    for (size_t i = 0; i < st->n_passes; i++)
        append_merge (on, s, passes[i].keep[0], &st->passes[i]);
    return true;
}

bool
compile_plan (online_t *on, compile_version_t v, compile_plan_t *out, bson_error_t *err)
{
    memset (out, 0, sizeof *out);
    out->version = v;
    out->steps = bson_malloc0 ((on->plan.n ? on->plan.n : 1) * sizeof *out->steps);
    online_names_destroy (on);
    for (size_t i = 0; i < on->plan.n; i++) {
        const rm_step_t *s = &on->plan.steps[i];
        compile_step_t *st = &out->steps[out->n++];
        online_pass_t passes[2];
        const rm_nsref_t *targets[8];
        size_t np, nt;
        bson_error_t why;

        st->s = s;
        if (!compile_step (on, v, st))
            return false;
        /* The next steps read this one's results, wherever it runs. */
        np = online_step_passes (s, false, passes, &why);
        nt = np ? online_step_targets (s, passes, np, targets) : 0;
        for (size_t t = 0; t < nt; t++) {
            char name[400];
            online_name_target (on, s, targets[t], name, sizeof name);
            online_name_move (on, targets[t], name);
        }
    }
    (void) err;
    return true;
}

void
compile_plan_destroy (compile_plan_t *c)
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
