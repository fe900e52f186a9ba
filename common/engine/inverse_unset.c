/* The inverse plan of a step that only added fields (denormalize's copies,
 * summarize's results): one unset of them. Apart from step_inverse.c,
 * which reads the step table, so that the steps' own files can build it
 * without a circle through that table. */
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
