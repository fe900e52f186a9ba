/* The field steps as pipelines (compile.h): set and version as $addFields
 * of literals (a field replaced where it stands, else appended: the
 * engine's order), unset as a $project exclusion, rename as the old
 * value put at the new name (where it stands, else appended) and the old
 * name dropped. Top-level fields only: through a dotted path $addFields
 * would set the field in every element of an array on the way, and
 * replace a scalar that is in the way, where the step does neither. */
#include <string.h>

#include "compile_stage.h"

bool
compile_fields (online_t *on, compile_version_t v, compile_step_t *st)
{
    const rm_step_t *s = st->s;
    const rm_fields_t *f = &s->u.fields;
    bson_t *p = &st->passes[0].pipeline;
    cs_stage_t stage;
    (void) on;
    (void) v;

    for (size_t i = 0; i < f->n; i++) {
        if (!cs_top_level (&f->paths[i]) || (s->kind == RM_STEP_RENAME && !cs_top_level (&f->to[i])))
            return compile_refuse (st, "\"%s\" is a dotted path: through one, $addFields and "
                                       "$project reach into every element of an array on the "
                                       "way and replace a scalar in the way, where the step "
                                       "does not; compile takes top-level fields",
                                   s->kind == RM_STEP_RENAME && cs_top_level (&f->paths[i])
                                       ? f->to[i].text : f->paths[i].text);
        if (cs_reserved (f->paths[i].text) ||
            (s->kind == RM_STEP_RENAME && cs_reserved (f->to[i].text)))
            return compile_refuse (st, "a field starting with __rm, the compiled pipelines' "
                                       "scratch fields");
    }
    switch (s->kind) {
    case RM_STEP_SET:
    case RM_STEP_VERSION:
        cs_begin (p, &stage, "$addFields");
        for (size_t i = 0; i < f->n; i++) {
            bson_t lit;
            BSON_APPEND_DOCUMENT_BEGIN (&stage.body, f->paths[i].text, &lit);
            BSON_APPEND_VALUE (&lit, "$literal", &f->values[i]);
            bson_append_document_end (&stage.body, &lit);
        }
        cs_end (&stage);
        break;
    case RM_STEP_UNSET: {
        const char *names[64];
        size_t n = 0;
        for (size_t i = 0; i < f->n; i++) {
            names[n++] = f->paths[i].text;
            if (n == 64 || i + 1 == f->n) {
                cs_drop (p, names, n);
                n = 0;
            }
        }
        break;
    }
    case RM_STEP_RENAME:
        /* One pair at a time, in the plan's order: a pair's new field
         * appended before the next pair's. */
        for (size_t i = 0; i < f->n; i++) {
            char *from = bson_strdup_printf ("$%s", f->paths[i].text);
            char *to = bson_strdup_printf ("$%s", f->to[i].text);
            const char *drop[1] = {f->paths[i].text};
            bson_t c, arr;
            cs_begin (p, &stage, "$addFields");
            BSON_APPEND_DOCUMENT_BEGIN (&stage.body, f->to[i].text, &c);
            BSON_APPEND_ARRAY_BEGIN (&c, "$cond", &arr);
            cs_append_has_field (&arr, "0", "$$ROOT", f->paths[i].text);
            BSON_APPEND_UTF8 (&arr, "1", from);
            BSON_APPEND_UTF8 (&arr, "2", to);
            bson_append_array_end (&c, &arr);
            bson_append_document_end (&stage.body, &c);
            cs_end (&stage);
            cs_drop (p, drop, 1);
            bson_free (from);
            bson_free (to);
        }
        break;
    default:
        return compile_refuse (st, "not a field step");
    }
    return true;
}
