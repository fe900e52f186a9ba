/* Which inverse each step kind has as a view (view_def.h), or why it has
 * none: what no pipeline over the new collections gives back exactly. */
#include "view_def.h"

/* Sized by its rows (see the assertion after it). */
const rm_view_kind_t rm_view_kinds[] = {
    [RM_STEP_EMBED] = {rm_view_embed, NULL},
    [RM_STEP_EXTRACT] = {rm_view_extract, NULL},
    [RM_STEP_SET] = {NULL, "set wrote computed values over the old ones: no view gives them "
                           "back"},
    [RM_STEP_UNSET] = {NULL, "unset removed the data: no view gives it back"},
    [RM_STEP_RENAME] = {rm_view_rename, NULL},
    [RM_STEP_VERSION] = {NULL, "version wrote its field over whatever it held: no view gives "
                               "that back"},
    [RM_STEP_DENORMALIZE] = {rm_view_denormalize, NULL},
    [RM_STEP_SUMMARIZE] = {rm_view_summarize, NULL},
    [RM_STEP_BUCKETIZE] = {rm_view_bucketize, NULL},
    [RM_STEP_UNBUCKETIZE] = {rm_view_unbucketize, NULL},
    [RM_STEP_COPY] = {rm_view_copy, NULL},
    [RM_STEP_MOVE] = {rm_view_copy, NULL},
    [RM_STEP_DELETE] = {NULL, "delete dropped the documents: no view gives them back"},
    [RM_STEP_REKEY] = {NULL, "rekey dropped the old _ids: no view gives them back"},
#ifdef REMODEL_TOY_STEP
    [RM_STEP_TOY] = {NULL, "the test build's toy step has no inverse"},
#endif
};
_Static_assert (sizeof rm_view_kinds / sizeof rm_view_kinds[0] == RM_STEP_N_KINDS,
                "one row per step kind (rm_step_kind_t)");
