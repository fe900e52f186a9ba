/* A step's exact inverse (remodel/plan.h), from its row of the step table
 * (step_class.h): for rollback --carry-writes, which carries the
 * application's writes after a switch back through it, and names no step
 * kind itself. */
#include <string.h>

#include "step_class.h"

bson_t *
rm_inverse_unset (const rm_nsref_t *in, char *const *names, size_t n)
{
    bson_t *plan = bson_new (), steps, st, u, fields;
    BSON_APPEND_INT32 (plan, "remodel", 1);
    BSON_APPEND_ARRAY_BEGIN (plan, "steps", &steps);
    BSON_APPEND_DOCUMENT_BEGIN (&steps, "0", &st);
    BSON_APPEND_DOCUMENT_BEGIN (&st, "unset", &u);
    BSON_APPEND_UTF8 (&u, "in", in->text);
    BSON_APPEND_ARRAY_BEGIN (&u, "fields", &fields);
    for (size_t i = 0; i < n; i++) {
        char key[16];
        const char *k;
        bson_uint32_to_string ((uint32_t) i, &k, key, sizeof key);
        BSON_APPEND_UTF8 (&fields, k, names[i]);
    }
    bson_append_array_end (&u, &fields);
    bson_append_document_end (&st, &u);
    bson_append_document_end (&steps, &st);
    bson_append_array_end (plan, &steps);
    return plan;
}

void
rm_step_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    memset (out, 0, sizeof *out);
    if ((unsigned) s->kind < RM_STEP_N_KINDS && rm_step_classes[s->kind].inverse)
        rm_step_classes[s->kind].inverse (s, out);
    else
        out->why = "remodel knows no exact inverse of it to carry writes back through";
}
