/* The table of steps (step_class.h): one row per kind, the only place
 * that names them. */
#include "step_class.h"

#define FIELD_STEP(op, inv, ...)                                                               \
    {.name = op, .keys = {__VA_ARGS__, NULL}, .parse = rm_plan_parse_fields,                    \
     .clear = rm_plan_clear_fields, .ns = rm_plan_ns_fields, .run = rm_step_fields_run,         \
     .stage = &rm_fields_stage, .passes = rm_fields_passes, .in_place = true, .inverse = inv,   \
     .filters = true, .indexes = rm_fields_indexes}

/* copy, move, delete: by the filter, from `from` (step_copy.c). */
#define COPY_STEP(op, ...)                                                                     \
    {.name = op, .keys = {__VA_ARGS__, NULL}, .parse = rm_plan_parse_copy,                      \
     .clear = rm_plan_clear_copy, .ns = rm_plan_ns_copy, .run = rm_step_copy_run,               \
     .created = rm_copy_created, .stage = &rm_copy_stage, .passes = rm_copy_passes,            \
     .in_place = true, .inverse = rm_copy_inverse, .filters = true, .indexes = rm_copy_indexes}

/* Sized by its rows (see the assertion after it). */
const rm_step_class_t rm_step_classes[] = {
    [RM_STEP_EMBED] = {.name = "embed",
                       .keys = {"*from", "*into", "*localField", "*foreignField", "*as",
                                "project", "sort", "limit", "countAs", "keepSource", "maxItems",
                                "onOverflow", "overflowTo", "match", NULL},
                       .filters = true,
                       .parse = rm_plan_parse_embed,
                       .clear = rm_plan_clear_embed,
                       .ns = rm_plan_ns_embed,
                       .run = rm_step_embed_run,
                       .probes = rm_embed_probes,
                       .check = rm_embed_check,
                       .created = rm_embed_created,
                       .passes = rm_embed_passes,
                       .inverse = rm_embed_inverse,
                       .indexes = rm_embed_indexes},
    [RM_STEP_EXTRACT] = {.name = "extract",
                         .keys = {"*from", "*path", "*to", "*style", "parentField",
                                  "ordinalField", NULL},
                         .filters = true,
                         .parse = rm_plan_parse_extract,
                         .clear = rm_plan_clear_extract,
                         .ns = rm_plan_ns_extract,
                         .run = rm_step_extract_run,
                         .probes = rm_extract_probes,
                         .created = rm_extract_created,
                         .stage = &rm_extract_stage,
                         .passes = rm_extract_passes,
                         .inverse = rm_extract_inverse,
                         .indexes = rm_extract_indexes},
    [RM_STEP_SET] = FIELD_STEP ("set", rm_set_inverse, "*in", "*fields"),
    [RM_STEP_UNSET] = FIELD_STEP ("unset", rm_fields_no_inverse, "*in", "*fields"),
    [RM_STEP_RENAME] = FIELD_STEP ("rename", rm_rename_inverse, "*in", "*fields"),
    [RM_STEP_VERSION] = FIELD_STEP ("version", rm_fields_no_inverse, "*in", "field", "*value"),
    [RM_STEP_DENORMALIZE] = {.name = "denormalize",
                             .keys = {"*in", "*from", "*localField", "foreignField", "*fields",
                                      "onMissing", "match", NULL},
                             .filters = true,
                             .parse = rm_plan_parse_denorm,
                             .clear = rm_plan_clear_denorm,
                             .ns = rm_plan_ns_denorm,
                             .run = rm_step_denorm_run,
                             .probes = rm_denorm_probes,
                             .check = rm_denorm_check,
                             .stage = &rm_denorm_stage,
                             .passes = rm_denorm_passes,
                             .in_place = true,
                             .inverse = rm_denorm_inverse},
    [RM_STEP_SUMMARIZE] = {.name = "summarize",
                           .keys = {"*into", "*from", "*localField", "*foreignField", "as",
                                    "sort", "*fields", "match", NULL},
                           .filters = true,
                           .parse = rm_plan_parse_summarize,
                           .clear = rm_plan_clear_summarize,
                           .ns = rm_plan_ns_summarize,
                           .run = rm_step_summarize_run,
                           .probes = rm_summarize_probes,
                           .check = rm_summarize_check,
                           .passes = rm_summarize_passes,
                           .in_place = true,
                           .inverse = rm_summarize_inverse},
    /* unbucketize takes the keys of the bucketize it reverses (plan.h) */
    [RM_STEP_BUCKETIZE] = {.name = "bucketize",
                           .keys = {"*from", "*to", "*timeField", "metaField", "granularity",
                                    "spanSeconds", "unit", "binSize", "timezone", "startOfWeek",
                                    "maxCount", "as", "stats", "keepSource",
                                    "onInvalid", NULL},
                           .filters = true,
                           .parse = rm_plan_parse_bucketize,
                           .clear = rm_plan_clear_bucket,
                           .ns = rm_plan_ns_bucketize,
                           .run = rm_step_bucketize_run,
                           .probes = rm_bucketize_probes,
                           .check = rm_bucketize_check,
                           .created = rm_bucketize_created,
                           .passes = rm_bucketize_passes,
                           .inverse = rm_bucketize_inverse},
    [RM_STEP_UNBUCKETIZE] = {.name = "unbucketize",
                             .keys = {"*from", "*to", "*timeField", "metaField", "granularity",
                                      "spanSeconds", "unit", "binSize", "timezone", "startOfWeek",
                                      "maxCount", "as", "stats", "keepSource",
                                      "onInvalid", NULL},
                             .filters = true,
                             .parse = rm_plan_parse_unbucketize,
                             .clear = rm_plan_clear_bucket,
                             .ns = rm_plan_ns_unbucketize,
                             .run = rm_step_unbucketize_run,
                             .created = rm_unbucketize_created,
                             .stage = &rm_unbucketize_stage,
                             .passes = rm_unbucketize_passes,
                             .inverse = rm_unbucketize_inverse},
    [RM_STEP_COPY] = COPY_STEP ("copy", "*from", "*to", "fields", "project"),
    [RM_STEP_MOVE] = COPY_STEP ("move", "*from", "*to", "fields", "project"),
    [RM_STEP_DELETE] = COPY_STEP ("delete", "*from"),
    /* every document of `from`, so no filter (step_rekey*.c) */
    [RM_STEP_REKEY] = {.name = "rekey",
                       .keys = {"*from", "*to", "*id", "references", "onMissing", "keepSource",
                                NULL},
                       .parse = rm_plan_parse_rekey,
                       .clear = rm_plan_clear_rekey,
                       .ns = rm_plan_ns_rekey,
                       .run = rm_step_rekey_run,
                       .probes = rm_rekey_probes,
                       .created = rm_rekey_created,
                       .passes = rm_rekey_passes,
                       .inverse = rm_rekey_inverse},
#ifdef REMODEL_TOY_STEP
    /* The test build's toy (tests/toy/step_toy.c): shows that a row and a
     * file are all a step needs. */
    [RM_STEP_TOY] = {.name = "toy",
                     .keys = {"*in", "*field", NULL},
                     .parse = rm_plan_parse_toy,
                     .clear = rm_plan_clear_toy,
                     .ns = rm_plan_ns_toy,
                     .run = rm_step_toy_run,
                     .passes = rm_toy_passes,
                     .in_place = true},
#endif
};

/* A missing last row shrinks the table; a missing row before it is left
 * zeroed, which test_batchstep.c's test_step_table catches. */
_Static_assert (sizeof rm_step_classes / sizeof rm_step_classes[0] == RM_STEP_N_KINDS,
                "one row per step kind (rm_step_kind_t)");
