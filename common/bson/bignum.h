/* A small unsigned big integer, for the exact decimal arithmetic of $sum and
 * $avg and expressions (common/expr/expr_decimal.c) and the exact number
 * comparisons and keys (value.c):
 * 32-bit limbs, least significant first, n of them in use (no leading zero
 * limb; zero has n = 0). Fixed-size and on the stack: none of this
 * allocates. Internal to the library. */
#ifndef REMODEL_BIGNUM_H
#define REMODEL_BIGNUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 2,688 bits. The widest number met is an exact double in expr_decimal.c, 53
 * bits times 5^1074 (about 2,550 bits); value.c's comparisons stay below
 * about 900. The asserts in bignum.c guard that reasoning. */
#define RM_BIG_LIMBS 84

typedef struct {
    uint32_t w[RM_BIG_LIMBS];
    size_t n;
} rm_big_t;

/* x = hi * 2^64 + lo */
void rm_big_set (rm_big_t *x, uint64_t hi, uint64_t lo);
/* The low 128 bits of x. */
void rm_big_get (const rm_big_t *x, uint64_t *hi, uint64_t *lo);

static inline bool
rm_big_is_zero (const rm_big_t *x)
{
    return x->n == 0;
}

int rm_big_cmp (const rm_big_t *a, const rm_big_t *b);
/* Bits, up to the highest one set (0 for zero). */
size_t rm_big_bitlen (const rm_big_t *x);
/* Decimal digits (1 for zero). */
unsigned rm_big_digits (const rm_big_t *x);
/* Trailing zero bits of a nonzero x. */
size_t rm_big_ctz (const rm_big_t *x);

void rm_big_add_small (rm_big_t *x, uint32_t v);
void rm_big_mul_small (rm_big_t *x, uint32_t m);
/* x /= d; returns the remainder. */
uint32_t rm_big_divmod_small (rm_big_t *x, uint32_t d);
uint32_t rm_big_mod_small (const rm_big_t *x, uint32_t d);
/* x /= d for d below 2^63, one bit at a time (slow: once per $avg group);
 * returns the remainder. */
uint64_t rm_big_divmod_u64 (rm_big_t *x, uint64_t d);

void rm_big_mul_pow5 (rm_big_t *x, unsigned k);
void rm_big_mul_pow10 (rm_big_t *x, unsigned k);
/* x /= 10^k; true if the remainder was not zero. */
bool rm_big_div_pow10 (rm_big_t *x, unsigned k);
void rm_big_shl (rm_big_t *x, unsigned k);
void rm_big_shr (rm_big_t *x, unsigned k);

/* a += b */
void rm_big_add (rm_big_t *a, const rm_big_t *b);
/* a -= b, with a >= b */
void rm_big_sub (rm_big_t *a, const rm_big_t *b);

#endif
