/* Decimal128 arithmetic for $sum and $avg: addition, division by a count,
 * and conversion from doubles and integers. libbson only encodes and
 * prints decimals; the server does this arithmetic with Intel's BID
 * library, and the results here are meant to be the same bits:
 * IEEE 754-2008 decimal128, 34 digits, round half to even, and the
 * standard's preferred exponents (a sum keeps the smaller exponent of its
 * operands when it is exact, a quotient the dividend's exponent when it is
 * exact). The unit test checks them against GCC's _Decimal128 where the
 * compiler has it, which is that same Intel library in libgcc.
 *
 * Coefficients are held in bignum.h's fixed-size big integer: the widest
 * number met is an exact double (53 bits times 5^1074, about 2,550 bits).
 * None of this allocates. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <bson/bson.h>

#include "accum_impl.h"
#include "bignum.h"
#include "dec128.h"

#define DEC_DIGITS 34
#define DEC_EMIN (-6176) /* exponent of the coefficient's last digit */
#define DEC_EMAX 6111

#define SIGN_BIT (1ULL << 63)
#define INF_BITS 0x7800000000000000ULL
#define NAN_BITS 0x7c00000000000000ULL
#define SNAN_BIT 0x0200000000000000ULL

/* 10^33 - 1, the largest NaN payload, high and low words. */
#define PAYLOAD_MAX_HI 0x0000314dc6448d93ULL
#define PAYLOAD_MAX_LO 0x38c15b09ffffffffULL

/* ---- packing */

static void
dec_pack (bson_decimal128_t *r, bool neg, int64_t exp, const rm_big_t *c)
{
    uint64_t lo, hi;
    rm_big_get (c, &hi, &lo);
    r->high = (neg ? SIGN_BIT : 0) | ((uint64_t) (exp + RM_DEC_BIAS) << 49) | hi;
    r->low = lo;
}

static void
dec_inf (bson_decimal128_t *r, bool neg)
{
    r->high = (neg ? SIGN_BIT : 0) | INF_BITS;
    r->low = 0;
}

/* A NaN operand comes out quiet, with its sign and payload; a payload too
 * large to be canonical becomes 0 (as the Intel library does). */
static void
dec_quiet (bson_decimal128_t *r, const bson_decimal128_t *nan)
{
    uint64_t hi = nan->high & 0x00003fffffffffffULL, lo = nan->low;
    if (hi > PAYLOAD_MAX_HI || (hi == PAYLOAD_MAX_HI && lo > PAYLOAD_MAX_LO))
        hi = lo = 0;
    r->high = (nan->high & SIGN_BIT) | NAN_BITS | hi;
    r->low = lo;
}

/* Rounds c * 10^exp to 34 digits and to the exponent range, half to even,
 * and packs it. sticky: a nonzero remainder lies below c's last digit
 * (callers that pass it leave c at least 35 digits). */
static void
dec_round_pack (bson_decimal128_t *r, bool neg, rm_big_t *c, int64_t exp, bool sticky)
{
    unsigned nd = rm_big_digits (c);
    int64_t drop = nd > DEC_DIGITS ? (int64_t) nd - DEC_DIGITS : 0;

    /* Below the smallest exponent the result is subnormal: fewer digits. */
    if (exp + drop < DEC_EMIN)
        drop = DEC_EMIN - exp;
    if (drop > 0) {
        unsigned digit;
        bool rest = sticky;
        if (drop > (int64_t) nd) {
            /* Every digit goes and c < 10^(drop-1): below half a unit. */
            rest |= !rm_big_is_zero (c);
            rm_big_set (c, 0, 0);
            digit = 0;
        } else {
            rest |= rm_big_div_pow10 (c, (unsigned) drop - 1);
            digit = rm_big_divmod_small (c, 10);
        }
        if (digit > 5 || (digit == 5 && (rest || (c->n && (c->w[0] & 1)))))
            rm_big_add_small (c, 1);
        exp += drop;
        if (rm_big_digits (c) > DEC_DIGITS) { /* 99...9 rounded up to 10^34 */
            rm_big_divmod_small (c, 10);
            exp++;
        }
    }
    if (exp > DEC_EMAX) {
        /* Too large an exponent: pad the coefficient with zeros if there is
         * room (a clamped result), else the result overflows. */
        int64_t pad = exp - DEC_EMAX;
        if (rm_big_is_zero (c)) {
            exp = DEC_EMAX;
        } else if ((int64_t) rm_big_digits (c) + pad <= DEC_DIGITS) {
            rm_big_mul_pow10 (c, (unsigned) pad);
            exp = DEC_EMAX;
        } else {
            dec_inf (r, neg);
            return;
        }
    }
    dec_pack (r, neg, exp, c);
}

/* ---- operations */

void
rm_acc_dec_add (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b)
{
    rm_dec_t x, y, t;
    rm_big_t cx, cy;
    int64_t d, exp;
    bool neg;

    rm_dec_unpack (a, &x);
    rm_dec_unpack (b, &y);
    if (x.kind == RM_DEC_NAN || y.kind == RM_DEC_NAN) {
        dec_quiet (r, x.kind == RM_DEC_NAN ? a : b);
        return;
    }
    if (x.kind == RM_DEC_INF || y.kind == RM_DEC_INF) {
        if (x.kind == RM_DEC_INF && y.kind == RM_DEC_INF && x.neg != y.neg) {
            r->high = NAN_BITS; /* Infinity - Infinity */
            r->low = 0;
        } else {
            dec_inf (r, x.kind == RM_DEC_INF ? x.neg : y.neg);
        }
        return;
    }
    if (x.exp < y.exp) { /* x: the operand with the larger exponent */
        t = x;
        x = y;
        y = t;
    }
    rm_big_set (&cx, x.hi, x.lo);
    rm_big_set (&cy, y.hi, y.lo);
    d = (int64_t) x.exp - y.exp;
    exp = y.exp;
    if (d > 72 && !rm_big_is_zero (&cx)) {
        /* y is below a tenth of a unit of x's 37th digit below its last:
         * what it does to the rounding, a 1 there does too, and the sum is
         * rounded anyway (it has more than 34 digits). */
        rm_big_mul_pow10 (&cx, 37);
        exp = x.exp - 37;
        if (!rm_big_is_zero (&cy))
            rm_big_set (&cy, 0, 1);
    } else if (d > 72) {
        rm_big_set (&cx, 0, 0); /* a zero with a far larger exponent */
    } else {
        rm_big_mul_pow10 (&cx, (unsigned) d);
    }
    if (x.neg == y.neg) {
        rm_big_add (&cx, &cy);
        neg = x.neg;
    } else {
        int c = rm_big_cmp (&cx, &cy);
        if (c >= 0) {
            rm_big_sub (&cx, &cy);
            neg = c > 0 && x.neg; /* an exact zero is +0 when rounding to nearest */
        } else {
            rm_big_sub (&cy, &cx);
            cx = cy;
            neg = y.neg;
        }
    }
    dec_round_pack (r, neg, &cx, exp, false);
}

void
rm_acc_dec_div_int64 (bson_decimal128_t *r, const bson_decimal128_t *a, int64_t n)
{
    rm_dec_t x;
    rm_big_t c;
    unsigned dn, dc, k;
    uint64_t rem, un;
    int64_t exp;

    BSON_ASSERT (n > 0);
    rm_dec_unpack (a, &x);
    if (x.kind == RM_DEC_NAN) {
        dec_quiet (r, a);
        return;
    }
    if (x.kind == RM_DEC_INF) {
        dec_inf (r, x.neg);
        return;
    }
    rm_big_set (&c, x.hi, x.lo);
    if (rm_big_is_zero (&c)) { /* 0 / n keeps the dividend's exponent */
        dec_pack (r, x.neg, x.exp, &c);
        return;
    }
    un = (uint64_t) n;
    for (dn = 1; dn < 20 && un / 10 >= 1; dn++)
        un /= 10;
    dc = rm_big_digits (&c);
    /* Scale so that the quotient has at least 35 digits: 34 and a rounding
     * digit, the remainder deciding the rest. */
    k = 35 + dn > dc ? 35 + dn - dc : 0;
    rm_big_mul_pow10 (&c, k);
    rem = rm_big_divmod_u64 (&c, (uint64_t) n);
    exp = (int64_t) x.exp - k;
    if (rem == 0) {
        /* Exact: the preferred exponent is the dividend's, so drop the
         * trailing zeros that scaling put there. */
        while (k > 0 && rm_big_mod_small (&c, 10) == 0) {
            rm_big_divmod_small (&c, 10);
            k--;
            exp++;
        }
    }
    dec_round_pack (r, x.neg, &c, exp, rem != 0);
}

/* The double's exact value, rounded to 34 digits if it has more: an
 * integer keeps exponent 0 (3.0 is "3", 1e20 is "100000000000000000000"),
 * a fraction the fewest decimal places that hold it exactly (0.5 is "0.5",
 * 0.1 is "0.1000000000000000055511151231257827"). */
void
rm_acc_dec_from_double (bson_decimal128_t *r, double d)
{
    rm_big_t c;
    int e2;
    uint64_t bits, mant;
    bool neg = signbit (d) != 0;

    if (isnan (d)) {
        r->high = (neg ? SIGN_BIT : 0) | NAN_BITS;
        r->low = 0;
        return;
    }
    if (isinf (d)) {
        dec_inf (r, neg);
        return;
    }
    if (d == 0) {
        rm_big_set (&c, 0, 0);
        dec_pack (r, neg, 0, &c);
        return;
    }
    /* |d| = mant * 2^e2 with mant odd, from the IEEE 754 fields. */
    memcpy (&bits, &d, sizeof bits);
    mant = bits & ((1ULL << 52) - 1);
    e2 = (int) ((bits >> 52) & 0x7ff);
    if (e2) {
        mant |= 1ULL << 52;
        e2 -= 1075;
    } else {
        e2 = -1074; /* subnormal */
    }
    while (!(mant & 1)) {
        mant >>= 1;
        e2++;
    }
    rm_big_set (&c, 0, mant);
    if (e2 >= 0) {
        rm_big_shl (&c, (unsigned) e2);
        dec_round_pack (r, neg, &c, 0, false);
    } else {
        rm_big_mul_pow5 (&c, (unsigned) -e2); /* mant / 2^k = mant * 5^k / 10^k */
        dec_round_pack (r, neg, &c, e2, false);
    }
}

