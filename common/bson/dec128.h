/* The fields of a BSON decimal128: IEEE 754-2008 decimal128 in the binary
 * integer decimal encoding. A sign bit, a 5-bit combination field telling
 * NaN and infinity apart, a 14-bit exponent biased by 6176, a coefficient
 * of up to 113 bits. A coefficient above 10^34 - 1 is non-canonical and
 * reads as zero, as the standard (and libbson's to_string) says; that
 * includes every coefficient of the "11" form, which starts at 2^113.
 * Shared by the decimal arithmetic (common/expr/expr_decimal.c) and the comparisons and
 * keys (value.c), so that both read a decimal the same way. Internal. */
#ifndef REMODEL_DEC128_H
#define REMODEL_DEC128_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

#define RM_DEC_BIAS 6176

typedef enum { RM_DEC_FINITE, RM_DEC_INF, RM_DEC_NAN } rm_dec_kind_t;

typedef struct {
    rm_dec_kind_t kind;
    bool neg;        /* as written, also for zero and NaN */
    int32_t exp;     /* unbiased, of the coefficient's last digit */
    uint64_t hi, lo; /* the coefficient, at most 10^34 - 1 */
} rm_dec_t;

/* Inline: value.c reads a decimal for every decimal it compares or keys. */
static inline void
rm_dec_unpack (const bson_decimal128_t *d, rm_dec_t *x)
{
    const uint64_t max_hi = UINT64_C (0x1ed09bead87c0); /* 10^34 - 1 */
    const uint64_t max_lo = UINT64_C (0x378d8e63ffffffff);
    uint64_t h = d->high;

    x->neg = h >> 63;
    x->hi = x->lo = 0;
    x->exp = 0;
    if (((h >> 61) & 3) == 3) {
        unsigned g = (unsigned) ((h >> 58) & 0x1f);
        if (g == 0x1f) {
            x->kind = RM_DEC_NAN;
        } else if (g == 0x1e) {
            x->kind = RM_DEC_INF;
        } else {
            /* The large-coefficient form always encodes more than 34
             * digits: a non-canonical zero, as the standard reads it. */
            x->kind = RM_DEC_FINITE;
            x->exp = (int32_t) ((h >> 47) & 0x3fff) - RM_DEC_BIAS;
        }
        return;
    }
    x->kind = RM_DEC_FINITE;
    x->exp = (int32_t) ((h >> 49) & 0x3fff) - RM_DEC_BIAS;
    x->hi = h & ((UINT64_C (1) << 49) - 1);
    x->lo = d->low;
    if (x->hi > max_hi || (x->hi == max_hi && x->lo > max_lo))
        x->hi = x->lo = 0; /* non-canonical: zero */
}

#endif
