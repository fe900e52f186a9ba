/* Decimal128 arithmetic for the arithmetic operators (expr_arith.c):
 * IEEE 754-2008 decimal128 as the server computes it with Intel's BID
 * library: 34 digits, round half to even, the exponent range, and the
 * standard's preferred exponents (an exact sum keeps the smaller exponent
 * of its operands, an exact product the sum of theirs, an exact quotient
 * the difference). Conversions follow the server's Decimal128 class: a
 * double becomes a decimal of 15 significant digits in arithmetic (0.1 is
 * 0.100000000000000), of up to 34 in $round and $trunc. Nothing here
 * allocates: coefficients are bignum.h's fixed-size integers on the stack.
 * Private to common/expr/ and the layers above ($group's $sum and $avg in
 * common/accum/ use it). */
#ifndef REMODEL_EXPR_DECIMAL_H
#define REMODEL_EXPR_DECIMAL_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

typedef enum {
    RM_XDEC_HALF_EVEN, /* to nearest, ties to even */
    RM_XDEC_DOWN,      /* toward zero */
    RM_XDEC_FLOOR,     /* toward negative infinity */
    RM_XDEC_CEIL,      /* toward positive infinity */
} rm_xdec_round_t;

bool rm_xdec_is_nan (const bson_decimal128_t *a);
bool rm_xdec_is_inf (const bson_decimal128_t *a);
/* A finite zero of any exponent and sign. */
bool rm_xdec_is_zero (const bson_decimal128_t *a);
/* The sign bit (also of -0 and -NaN). */
bool rm_xdec_is_neg (const bson_decimal128_t *a);
/* -1, 0 or 1 by value; 2 when either is NaN. */
int rm_xdec_cmp (const bson_decimal128_t *a, const bson_decimal128_t *b);

void rm_xdec_from_int64 (bson_decimal128_t *r, int64_t v);
/* The double's value: rounded to 15 significant digits, all kept (the
 * server's Decimal128(double), used when arithmetic mixes a double with
 * a decimal), or to at most 34 (digits15 false). */
void rm_xdec_from_double (bson_decimal128_t *r, double d, bool digits15);
/* The value rounded half to even to an integer: false when it is NaN,
 * infinite or outside int64 (the server's toLong with its invalid flag). */
bool rm_xdec_to_int64 (const bson_decimal128_t *a, int64_t *v);

void rm_xdec_add (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b);
void rm_xdec_sub (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b);
void rm_xdec_mul (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b);
/* b must not be zero (the operators refuse it first). */
void rm_xdec_div (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b);
/* a / n for a count n > 0 ($avg's mean): rm_xdec_div by n's decimal. */
void rm_xdec_div_int64 (bson_decimal128_t *r, const bson_decimal128_t *a, int64_t n);
/* a - b * trunc(a / b), exact, with a's sign (C's fmod); b not zero. */
void rm_xdec_mod (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b);
/* The correctly rounded square root (a >= 0 or NaN). */
void rm_xdec_sqrt (bson_decimal128_t *r, const bson_decimal128_t *a);
/* a with exponent exp (its last digit at 10^exp), rounded by mode: NaN
 * when the result needs more than 34 digits or a is infinite, as
 * IEEE 754's quantize says. */
void rm_xdec_quantize (bson_decimal128_t *r, const bson_decimal128_t *a, int32_t exp,
                       rm_xdec_round_t mode);
/* The exponent $round and $trunc quantize a to for a place at 10^exp: exp,
 * or where padding a with zeros to it would need more than 34 digits, the
 * one that gives 34 (the server pads 1.298 at 100 places to 34 digits,
 * round_trunc.js, where IEEE's quantize says NaN). */
int32_t rm_xdec_place_exp (const bson_decimal128_t *a, int32_t exp);
void rm_xdec_abs (bson_decimal128_t *r, const bson_decimal128_t *a);

#endif
