/* $group accumulators with MongoDB's semantics (reference/mongodb-semantics.md),
 * over BSON values, for the summarize step: $count, $sum, $avg, $min, $max,
 * $first, $last, $topN, $bottomN, $addToSet. */
#ifndef REMODEL_ACCUM_H
#define REMODEL_ACCUM_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/docpath.h"
#include "remodel/error.h"

typedef enum {
    RM_ACC_COUNT, RM_ACC_SUM, RM_ACC_AVG, RM_ACC_MIN, RM_ACC_MAX, RM_ACC_FIRST,
    RM_ACC_LAST, RM_ACC_TOP_N, RM_ACC_BOTTOM_N, RM_ACC_ADD_TO_SET,
} rm_acc_kind_t;

/* A parsed accumulator expression, e.g. {"$sum": "$qty"} or
 * {"$topN": {"n": 3, "sortBy": {"ts": -1}, "output": "$text"}}. The
 * argument is a field path ("$a.b"), a literal (e.g. {"$sum": 1}), or for
 * $topN/$bottomN/$first/$last an output that is a path, "$$ROOT" or a
 * document of paths ({"text": "$text", "ts": "$ts"}). */
typedef struct rm_acc_spec rm_acc_spec_t;

/* Parses one accumulator; errors name the accumulator and the reason. */
rm_acc_spec_t *rm_acc_spec_parse (const bson_iter_t *expr, bson_error_t *err);
void rm_acc_spec_destroy (rm_acc_spec_t *s);

/* The running state of one accumulator for one group. States are reused
 * across groups with rm_acc_reset (no allocation per group once grown). */
typedef struct rm_acc rm_acc_t;

rm_acc_t *rm_acc_new (const rm_acc_spec_t *spec);
void rm_acc_reset (rm_acc_t *a);
/* Feeds one input document (raw BSON) of the group, in input order; seq is
 * its input position (ties in $first/$last/$topN keep input order). */
bool rm_acc_add (rm_acc_t *a, const uint8_t *doc, uint32_t len, uint64_t seq,
                 bson_error_t *err);
/* Appends the group's result as field `name` to out. An empty group gives
 * what $group gives: $count 0, $sum 0 (int32), $avg/$min/$max/$first/$last
 * null, $topN/$bottomN/$addToSet []. */
bool rm_acc_finish (rm_acc_t *a, bson_t *out, const char *name, bson_error_t *err);
void rm_acc_destroy (rm_acc_t *a);

#endif
