/* The table of steps (step_class.h). */
#include "engine_impl.h"
#include "step_class.h"

#define FIELD_STEP(op, ...) \
    {op, {__VA_ARGS__, NULL}, rm_plan_parse_fields, rm_plan_clear_fields, rm_plan_ns_fields, \
     rm_step_fields_run}

/* Sized by its rows (see the assertion after it). */
const rm_step_class_t rm_step_classes[] = {
    [RM_STEP_EMBED] = {"embed",
                       {"*from", "*into", "*localField", "*foreignField", "*as", "project", "sort",
                        "limit", "countAs", "keepSource", "maxItems", "onOverflow", "overflowTo",
                        NULL},
                       rm_plan_parse_embed, rm_plan_clear_embed, rm_plan_ns_embed,
                       rm_step_embed_run},
    [RM_STEP_EXTRACT] = {"extract",
                         {"*from", "*path", "*to", "*style", "parentField", "ordinalField", NULL},
                         rm_plan_parse_extract, rm_plan_clear_extract, rm_plan_ns_extract,
                         rm_step_extract_run},
    [RM_STEP_SET] = FIELD_STEP ("set", "*in", "*fields"),
    [RM_STEP_UNSET] = FIELD_STEP ("unset", "*in", "*fields"),
    [RM_STEP_RENAME] = FIELD_STEP ("rename", "*in", "*fields"),
    [RM_STEP_VERSION] = FIELD_STEP ("version", "*in", "field", "*value"),
    [RM_STEP_DENORMALIZE] = {"denormalize",
                             {"*in", "*from", "*localField", "foreignField", "*fields",
                              "onMissing", NULL},
                             rm_plan_parse_denorm, rm_plan_clear_denorm, rm_plan_ns_denorm,
                             rm_step_denorm_run},
    [RM_STEP_SUMMARIZE] = {"summarize",
                           {"*into", "*from", "*localField", "*foreignField", "as", "sort",
                            "*fields", NULL},
                           rm_plan_parse_summarize, rm_plan_clear_summarize,
                           rm_plan_ns_summarize, rm_step_summarize_run},
    /* unbucketize takes the keys of the bucketize it reverses (plan.h) */
    [RM_STEP_BUCKETIZE] = {"bucketize",
                           {"*from", "*to", "*timeField", "*metaField", "granularity",
                            "spanSeconds", "maxCount", "as", "stats", "keepSource", "onInvalid",
                            NULL},
                           rm_plan_parse_bucketize, rm_plan_clear_bucket, rm_plan_ns_bucketize,
                           rm_step_bucketize_run},
    [RM_STEP_UNBUCKETIZE] = {"unbucketize",
                             {"*from", "*to", "*timeField", "*metaField", "granularity",
                              "spanSeconds", "maxCount", "as", "stats", "keepSource", "onInvalid",
                              NULL},
                             rm_plan_parse_unbucketize, rm_plan_clear_bucket,
                             rm_plan_ns_unbucketize, rm_step_unbucketize_run},
};

/* A missing last row shrinks the table; a missing row before it is left
 * zeroed, which test_batchstep.c's test_step_table catches. */
_Static_assert (sizeof rm_step_classes / sizeof rm_step_classes[0] == RM_STEP_N_KINDS,
                "one row per step kind (rm_step_kind_t)");
