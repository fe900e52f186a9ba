/* The field steps as pipelines (compile_impl.h): set as the $addFields
 * stage it is, version as $addFields of a literal (a field replaced where
 * it stands, else appended: the engine's order), unset as a $project exclusion, rename as
 * the old value put at the new name (where it stands, else appended) and
 * the old name dropped. Top-level fields only: through a dotted path
 * $addFields would set the field in every element of an array on the way,
 * and replace a scalar that is in the way, where the step does neither. */
#include <string.h>

#include "compile_stage.h"

static bool rm_compile_version_step (rm_compile_step_t *st);

/* Refuses a step naming a dotted path or a scratch field; to (rename's
 * new names) NULL for the other steps. */
static bool
fields_compile (const rm_fields_t *f, const rm_path_t *to, rm_compile_step_t *st)
{
    for (size_t i = 0; i < f->n; i++) {
        if (!rm_cs_top_level (&f->paths[i]) || (to && !rm_cs_top_level (&to[i]))) {
            rm_compile_refuse (st, "\"%s\" is a dotted path: through one, $addFields and "
                                   "$project reach into every element of an array on the "
                                   "way and replace a scalar in the way, where the step "
                                   "does not; compile takes top-level fields",
                               to && rm_cs_top_level (&f->paths[i]) ? to[i].text
                                                                    : f->paths[i].text);
            return false;
        }
        if (rm_cs_reserved (f->paths[i].text) || (to && rm_cs_reserved (to[i].text))) {
            rm_compile_refuse (st, "a field starting with __rm, the compiled pipelines' "
                                   "scratch fields");
            return false;
        }
    }
    return true;
}

/* set: the $addFields stage as the plan wrote it (the engine's set is
 * that stage, dotted paths and all). */
bool
rm_compile_set (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st)
{
    const rm_fields_t *f = &st->s->u.fields;
    rm_cs_stage_t stage;

    if (!f->set) /* version: its value as a literal, where it stands */
        return rm_compile_version_step (st);
    for (size_t i = 0; i < f->n; i++)
        if (rm_cs_reserved (f->paths[i].text))
            return rm_compile_refuse (st, "a field starting with __rm, the compiled pipelines' "
                                          "scratch fields");
    /* A top-level field set to "$$REMOVE" is the same as dropping it after
     * the others are computed (they read the document as it came in),
     * which servers without $$REMOVE also run. */
    const char *drop[64];
    size_t n_drop = 0, n_set = 0;
    bson_t body = BSON_INITIALIZER;
    bson_iter_t it;
    bson_iter_init (&it, f->set_doc);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (n_drop < 64 && !strchr (k, '.') && BSON_ITER_HOLDS_UTF8 (&it) &&
            !strcmp (bson_iter_utf8 (&it, NULL), "$$REMOVE")) {
            drop[n_drop++] = k;
        } else {
            bson_append_iter (&body, k, -1, &it);
            n_set++;
        }
    }
    if (n_set) {
        rm_cs_begin (&st->passes[0].pipeline, &stage, "$addFields");
        bson_concat (&stage.body, &body);
        rm_cs_end (&stage);
    }
    if (n_drop)
        rm_cs_drop (&st->passes[0].pipeline, drop, n_drop);
    bson_destroy (&body);
    return true;
}

/* version: its value as a literal at its (top-level) field. */
static bool
rm_compile_version_step (rm_compile_step_t *st)
{
    const rm_fields_t *f = &st->s->u.fields;
    rm_cs_stage_t stage;

    if (!fields_compile (f, NULL, st))
        return true;
    rm_cs_begin (&st->passes[0].pipeline, &stage, "$addFields");
    for (size_t i = 0; i < f->n; i++) {
        bson_t lit;
        BSON_APPEND_DOCUMENT_BEGIN (&stage.body, f->paths[i].text, &lit);
        BSON_APPEND_VALUE (&lit, "$literal", &f->values[i]);
        bson_append_document_end (&stage.body, &lit);
    }
    rm_cs_end (&stage);
    return true;
}

/* In $project exclusions of at most 64 fields each. */
bool
rm_compile_unset (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st)
{
    const rm_fields_t *f = &st->s->u.fields;
    const char *names[64];
    size_t n = 0;

    /* The step is the $unset stage: dotted paths and all, as $project
     * excludes them. */
    for (size_t i = 0; i < f->n; i++)
        if (rm_cs_reserved (f->paths[i].text))
            return rm_compile_refuse (st, "a field starting with __rm, the compiled pipelines' "
                                          "scratch fields");
    for (size_t i = 0; i < f->n; i++) {
        names[n++] = f->paths[i].text;
        if (n == 64 || i + 1 == f->n) {
            rm_cs_drop (&st->passes[0].pipeline, names, n);
            n = 0;
        }
    }
    return true;
}

/* One pair at a time, in the plan's order: a pair's new field appended
 * before the next pair's. */
bool
rm_compile_rename (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st)
{
    const rm_fields_t *f = &st->s->u.fields;
    bson_t *p = &st->passes[0].pipeline;
    rm_cs_stage_t stage;

    if (!fields_compile (f, f->to, st))
        return true;
    for (size_t i = 0; i < f->n; i++) {
        char *from = bson_strdup_printf ("$%s", f->paths[i].text);
        char *to = bson_strdup_printf ("$%s", f->to[i].text);
        const char *drop[1] = {f->paths[i].text};
        bson_t c, arr;
        rm_cs_begin (p, &stage, "$addFields");
        BSON_APPEND_DOCUMENT_BEGIN (&stage.body, f->to[i].text, &c);
        BSON_APPEND_ARRAY_BEGIN (&c, "$cond", &arr);
        rm_cs_append_has_field (&arr, "0", "$$ROOT", f->paths[i].text);
        BSON_APPEND_UTF8 (&arr, "1", from);
        BSON_APPEND_UTF8 (&arr, "2", to);
        bson_append_array_end (&c, &arr);
        bson_append_document_end (&stage.body, &c);
        rm_cs_end (&stage);
        rm_cs_drop (p, drop, 1);
        bson_free (from);
        bson_free (to);
    }
    return true;
}
