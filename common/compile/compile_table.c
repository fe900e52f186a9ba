/* Which compiler each step kind has (compile_impl.h), or why it has none:
 * what no aggregation pipeline computes exactly. */
#include "compile_impl.h"

/* Sized by its rows (see the assertion after it); a row left out before
 * the last is zeroed, which test_compile.c's test_tables catches. */
const rm_compile_kind_t rm_compile_kinds[] = {
    [RM_STEP_EMBED] = {rm_compile_embed, NULL},
    [RM_STEP_EXTRACT] = {NULL, "an element without an _id of its own gets a deterministic "
                               "ObjectId (a hash of the parent's _id, the path and the "
                               "position), which no aggregation expression computes"},
    [RM_STEP_SET] = {rm_compile_set, NULL},
    [RM_STEP_UNSET] = {rm_compile_unset, NULL},
    [RM_STEP_RENAME] = {rm_compile_rename, NULL},
    /* version sets its one field as set does */
    [RM_STEP_VERSION] = {rm_compile_set, NULL},
    [RM_STEP_DENORMALIZE] = {rm_compile_denormalize, NULL},
    [RM_STEP_SUMMARIZE] = {rm_compile_summarize, NULL},
    [RM_STEP_BUCKETIZE] = {NULL, "a bucket's _id is a deterministic ObjectId (a hash of the "
                                 "meta values and the window), and a bucket's size is cut at "
                                 "16 MiB, neither of which an aggregation expression computes"},
    [RM_STEP_UNBUCKETIZE] = {NULL, "a reading's meta fields go back to the positions "
                                   "metaPositions records, and each bucket is checked against "
                                   "the window and stats: no pipeline stage places fields by "
                                   "position or stops on a bucket that disagrees"},
    /* the filter's $match, $addFields, $project; a move's and a delete's
     * other documents through {$nor: [filter]} */
    [RM_STEP_COPY] = {rm_compile_copy, NULL, true},
    [RM_STEP_MOVE] = {rm_compile_copy, NULL, true},
    [RM_STEP_DELETE] = {rm_compile_copy, NULL, true},
    [RM_STEP_REKEY] = {NULL, "two documents given one _id must stop the migration with both "
                             "named before anything is written, and references are rewritten "
                             "through the whole old-to-new map: a $set of _id and $out stop "
                             "half-way on a duplicate key naming neither source (run it "
                             "offline: remodel run)"},
#ifdef REMODEL_TOY_STEP
    [RM_STEP_TOY] = {NULL, "the test build's toy step has no pipeline"},
#endif
};
_Static_assert (sizeof rm_compile_kinds / sizeof rm_compile_kinds[0] == RM_STEP_N_KINDS,
                "one row per step kind (rm_step_kind_t)");
