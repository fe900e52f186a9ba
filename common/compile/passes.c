/* How each step runs online (remodel/passes.h): which input a pass reads
 * range by range, which partners it fetches for each range, and which of
 * the engine's outputs it keeps. The transform itself is the engine's
 * (remodel/batchstep.h); this only makes sure each batch holds everything
 * its outputs depend on. One function per kind, found through the table
 * at the end. */
#include <stdio.h>
#include <string.h>

#include "compile_impl.h"

static bool
same_ns (const rm_nsref_t *a, const rm_nsref_t *b)
{
    return strcmp (a->text, b->text) == 0;
}

/* A field a step writes that is _id, or under it: its results then do
 * not keep their driver's _id (rm_pass_t.driver_field). */
static bool
is_id (const char *field)
{
    return field && (!strcmp (field, "_id") || !strncmp (field, "_id.", 4));
}

static bool
any_id (char **fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_id (fields[i]))
            return true;
    return false;
}

size_t
rm_pass_refuse (const rm_step_t *s, bson_error_t *err, const char *why)
{
    rm_error_set (err, RM_ERR_UNSUPPORTED, "step %zu (%s): %s", s->index, s->op, why);
    return 0;
}

/* set, unset, rename, version: each document rewritten on its own. */
static size_t
passes_fields (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    out[0].keep[out[0].n_keep] = &s->u.fields.in;
    out[0].driver_field[out[0].n_keep++] = "_id";
    return 1;
}

static size_t
passes_denormalize (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_denorm_t *d = &s->u.denorm;
    if (same_ns (&d->in, &d->from))
        return rm_pass_refuse (s, err, "a namespace denormalized from itself runs offline only");
    out[0] = (rm_pass_t){.drive = 0, .partner = 1, .drive_key = &d->local,
                         .partner_key = &d->foreign, .keep = {&d->in}, .n_keep = 1,
                         .driver_field = {any_id (d->targets, d->n) ? NULL : "_id"}};
    return 1;
}

static size_t
passes_summarize (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_summarize_t *m = &s->u.summarize;
    if (same_ns (&m->into, &m->from))
        return rm_pass_refuse (s, err, "a namespace summarized from itself runs offline only");
    out[0] = (rm_pass_t){.drive = 0, .partner = 1, .drive_key = &m->local,
                         .partner_key = &m->foreign, .keep = {&m->into}, .n_keep = 1,
                         .driver_field = {(m->as ? is_id (m->as) : any_id (m->names, m->n))
                                              ? NULL : "_id"}};
    return 1;
}

static size_t
passes_embed (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_embed_t *m = &s->u.embed;
    if (same_ns (&m->into, &m->from))
        return rm_pass_refuse (s, err, "a namespace embedded into itself runs offline only");
    /* The parents, each with every child it matches; then, when the
     * matched children leave `from`, the children, each with every
     * parent that could take it: those no parent takes stay. */
    out[0] = (rm_pass_t){.drive = 1, .partner = 0, .drive_key = &m->local,
                         .partner_key = &m->foreign, .keep = {&m->into}, .n_keep = 1,
                         .driver_field = {is_id (m->as) || is_id (m->count_as) ? NULL : "_id"}};
    /* An outlier's overflow pages are new documents, each naming its
     * parent (embed_build.c). */
    if (m->on_overflow == RM_OVERFLOW_OUTLIER) {
        out[0].keep[out[0].n_keep] = &m->overflow_to;
        out[0].driver_field[out[0].n_keep++] = "parent_id";
    }
    if (m->keep_source)
        return 1;
    out[1] = (rm_pass_t){.drive = 0, .partner = 1, .drive_key = &m->foreign,
                         .partner_key = &m->local, .keep = {&m->from}, .n_keep = 1,
                         .driver_field = {"_id"}};
    return 2;
}

static size_t
passes_extract (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_extract_t *x = &s->u.extract;
    /* The parents keep their _id; the children name theirs in
     * parentField, except with childRefs, where only the parent's array
     * of their _ids says whose they are. */
    out[0].keep[out[0].n_keep] = &x->from;
    out[0].driver_field[out[0].n_keep++] = "_id";
    out[0].keep[out[0].n_keep] = &x->to;
    if (x->style == RM_STYLE_CHILD_REFS) {
        /* The parent's result (output 0) lists them at path. */
        out[0].driver_list[out[0].n_keep] = x->path.text;
        out[0].list_in[out[0].n_keep] = 0;
    }
    out[0].driver_field[out[0].n_keep++] =
        x->style == RM_STYLE_CHILD_REFS || is_id (x->parent_field) ? NULL : x->parent_field;
    return 1;
}

static size_t
passes_unbucketize (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_unbucketize_t *u = &s->u.unbucketize;
    /* The buckets' readings, then those onInvalid set aside; emptied
     * inputs (no keepSource) get no documents. */
    out[0].keep[out[0].n_keep++] = &u->to;
    out[0].holds = u->as;
    out[0].followed = true;
    if (!u->invalid_to.text)
        return 1;
    /* A reading set aside comes back as it is, with its own _id; the
     * buckets may hold that _id too, so its result is followed with the
     * first pass's (a reading gone from here may be a bucket's now). */
    out[1].drive = 1;
    out[1].keep[out[1].n_keep++] = &u->to;
    out[1].followed = true;
    return 2;
}

static size_t
passes_bucketize (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_bucketize_t *b = &s->u.bucketize;
    /* A bucket needs every reading of its series in one batch: the
     * readings are read series by series of the metaField. */
    if (b->n_meta != 1)
        return rm_pass_refuse (s, err, "bucketize by several metaFields runs offline only (the "
                                       "online mode reads the readings series by series of one "
                                       "field)");
    out[0].series = b->meta[0];
    out[0].keep[out[0].n_keep++] = &b->to;
    if (b->invalid_to.text)
        out[0].keep[out[0].n_keep++] = &b->invalid_to;
    /* A bucket holds its series' value at its top, under the metaField's
     * name (a plain field: the plan refuses a dotted one). */
    out[0].followed = true;
    return 1;
}

/* Sized by its rows (see the assertion after it); a row left out before
 * the last is zeroed, which test_compile.c's test_tables catches. */
const rm_pass_kind_t rm_pass_kinds[] = {
    [RM_STEP_EMBED] = {passes_embed, false},
    [RM_STEP_EXTRACT] = {passes_extract, false},
    [RM_STEP_SET] = {passes_fields, true},
    [RM_STEP_UNSET] = {passes_fields, true},
    [RM_STEP_RENAME] = {passes_fields, true},
    [RM_STEP_VERSION] = {passes_fields, true},
    [RM_STEP_DENORMALIZE] = {passes_denormalize, true},
    [RM_STEP_SUMMARIZE] = {passes_summarize, true},
    [RM_STEP_BUCKETIZE] = {passes_bucketize, false},
    [RM_STEP_UNBUCKETIZE] = {passes_unbucketize, false},
#ifdef REMODEL_TOY_STEP
    [RM_STEP_TOY] = {rm_toy_passes, true}, /* tests/toy/step_toy.c */
#endif
};
_Static_assert (sizeof rm_pass_kinds / sizeof rm_pass_kinds[0] == RM_STEP_N_KINDS,
                "one row per step kind (rm_step_kind_t)");

size_t
rm_step_passes (const rm_step_t *s, bool in_place, rm_pass_t *out, bson_error_t *err)
{
    const rm_pass_kind_t *k = (unsigned) s->kind < RM_STEP_N_KINDS ? &rm_pass_kinds[s->kind] : NULL;
    memset (out, 0, RM_MAX_PASSES * sizeof *out);
    out[0].partner = out[1].partner = -1;
    if (!k || !k->passes)
        return rm_pass_refuse (s, err, "not a step the online mode knows");
    if (in_place && !k->in_place) {
        /* "--in-place takes a, b and c": the kinds whose row says so. */
        char why[400];
        int total = 0, m = 0;
        size_t n = (size_t) snprintf (why, sizeof why, "--in-place takes");
        for (int i = 0; i < RM_STEP_N_KINDS; i++)
            total += rm_pass_kinds[i].in_place;
        for (int i = 0; i < RM_STEP_N_KINDS && n < sizeof why; i++)
            if (rm_pass_kinds[i].in_place)
                n += (size_t) snprintf (why + n, sizeof why - n, "%s %s",
                                        !m++ ? "" : m == total ? " and" : ",",
                                        rm_step_kind_name ((rm_step_kind_t) i));
        if (n < sizeof why)
            snprintf (why + n, sizeof why - n, " (the others make new documents: run them side "
                                               "by side, without --in-place)");
        return rm_pass_refuse (s, err, why);
    }
    size_t n = k->passes (s, out, err);
    /* by_id from the outputs' driver fields, in one place. */
    for (size_t i = 0; i < n; i++) {
        out[i].by_id = out[i].n_keep > 0;
        for (size_t o = 0; o < out[i].n_keep; o++)
            out[i].by_id &= out[i].driver_field[o] && !strcmp (out[i].driver_field[o], "_id");
    }
    return n;
}

bool
rm_pass_traced (const rm_pass_t *p)
{
    for (size_t o = 0; o < p->n_keep; o++)
        if (!p->driver_field[o] && !p->driver_list[o])
            return false;
    return p->n_keep > 0;
}

bool
rm_pass_followed (const rm_pass_t *p)
{
    return rm_pass_traced (p) || p->followed;
}

/* What the passes write, and what the step empties. */
size_t
rm_step_targets (const rm_step_t *s, const rm_pass_t *passes, size_t np, const rm_nsref_t **out)
{
    size_t n = 0, ne;
    const rm_nsref_t *emptied[4];
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < passes[i].n_keep; k++) {
            bool seen = false;
            for (size_t m = 0; m < n; m++)
                seen |= !strcmp (out[m]->text, passes[i].keep[k]->text);
            if (!seen)
                out[n++] = passes[i].keep[k];
        }
    ne = rm_step_empties (s, emptied, 4);
    for (size_t i = 0; i < ne; i++) {
        bool seen = false;
        for (size_t m = 0; m < n; m++)
            seen |= !strcmp (out[m]->text, emptied[i]->text);
        if (!seen)
            out[n++] = emptied[i];
    }
    return n;
}
