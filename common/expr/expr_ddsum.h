/* The server's DoubleDoubleSummation, for $sum and $avg both as
 * expressions (expr_arith.c) and as $group's accumulators
 * (common/accum/accum.c): sum + addend, two doubles (Fast2Sum, then
 * 2Sum), is the exact total of integers up to about 2^106 and a
 * compensated one of doubles; special is the plain sum, kept for when the
 * compensation turns an infinity into NaN. Private to common/expr/ and
 * the layers above. */
#ifndef REMODEL_EXPR_DDSUM_H
#define REMODEL_EXPR_DDSUM_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

typedef struct {
    double sum, addend, special;
} rm_xdd_t;

/* Adds a double (an int32 too: exact as one). */
void rm_xdd_add (rm_xdd_t *d, double x);
/* Adds an int64 as two doubles that each hold their part exactly: the
 * high 32 bits and the low, split the way C division truncates. */
void rm_xdd_add_int64 (rm_xdd_t *d, int64_t v);
/* The total as a double. */
double rm_xdd_double (const rm_xdd_t *d);
/* Whether the total, rounded to an integer, fits an int64. */
bool rm_xdd_fits_int64 (const rm_xdd_t *d);
/* The total rounded to the nearest integer, halves away from zero; only
 * when rm_xdd_fits_int64. */
int64_t rm_xdd_int64 (const rm_xdd_t *d);
/* The total as a decimal128: each double's exact value, added. */
void rm_xdd_decimal (const rm_xdd_t *d, bson_decimal128_t *r);

#endif
