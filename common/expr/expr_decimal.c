/* Decimal128 arithmetic for the expression operators (expr_decimal.h):
 * each operation works on the exact coefficients in bignum.h's integers
 * and rounds once, at the end, to 34 digits and the exponent range, so
 * its result is the correctly rounded one IEEE 754-2008 defines, the
 * bits Intel's library gives the server. */
#include <math.h>
#include <string.h>

#include "bignum.h"
#include "dec128.h"
#include "expr_decimal.h"

#define DIGITS 34
#define EMIN (-6176) /* exponent of the coefficient's last digit */
#define EMAX 6111

#define SIGN_BIT (UINT64_C (1) << 63)
#define INF_BITS UINT64_C (0x7800000000000000)
#define NAN_BITS UINT64_C (0x7c00000000000000)
/* A NaN's payload: the low 46 bits of the high word and the low word. */
#define PAYLOAD_HI UINT64_C (0x00003fffffffffff)

/* ---- packing */

static void
pack (bson_decimal128_t *r, bool neg, int64_t exp, const rm_big_t *c)
{
    uint64_t hi, lo;
    rm_big_get (c, &hi, &lo);
    r->high = (neg ? SIGN_BIT : 0) | ((uint64_t) (exp - EMIN) << 49) | hi;
    r->low = lo;
}

static void
set_inf (bson_decimal128_t *r, bool neg)
{
    r->high = (neg ? SIGN_BIT : 0) | INF_BITS;
    r->low = 0;
}

static void
set_nan (bson_decimal128_t *r)
{
    r->high = NAN_BITS;
    r->low = 0;
}

/* A NaN operand passes through quiet, with its sign and payload (a
 * payload of more than 33 digits is not canonical and becomes 0). */
static void
quiet (bson_decimal128_t *r, const bson_decimal128_t *nan)
{
    const uint64_t max_hi = UINT64_C (0x0000314dc6448d93), max_lo = UINT64_C (0x38c15b09ffffffff);
    uint64_t hi = nan->high & PAYLOAD_HI, lo = nan->low;
    if (hi > max_hi || (hi == max_hi && lo > max_lo))
        hi = lo = 0;
    r->high = (nan->high & SIGN_BIT) | NAN_BITS | hi;
    r->low = lo;
}

/* Unpacks both operands of an operation; a NaN among them (a's first)
 * passes through quiet into r: true when r is then the result. */
static bool
unpack_two (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b, rm_dec_t *x,
            rm_dec_t *y)
{
    rm_dec_unpack (a, x);
    rm_dec_unpack (b, y);
    if (x->kind != RM_DEC_NAN && y->kind != RM_DEC_NAN)
        return false;
    quiet (r, x->kind == RM_DEC_NAN ? a : b);
    return true;
}

/* Whether dropping digits whose last is digit (and below it, more when
 * rest) from a coefficient whose kept part is odd or not rounds it up. */
static bool
round_up (rm_xdec_round_t mode, bool neg, unsigned digit, bool rest, bool odd)
{
    switch (mode) {
    case RM_XDEC_HALF_EVEN:
        return digit > 5 || (digit == 5 && (rest || odd));
    case RM_XDEC_DOWN:
        return false;
    case RM_XDEC_FLOOR:
        return neg && (digit || rest);
    case RM_XDEC_CEIL:
        return !neg && (digit || rest);
    }
    return false;
}

/* Drops the last k digits of c by mode; sticky: something nonzero lies
 * below c's last digit already. */
static void
drop_digits (rm_big_t *c, unsigned k, rm_xdec_round_t mode, bool neg, bool sticky)
{
    unsigned digit;
    bool rest = sticky;
    if (k == 0) {
        if (round_up (mode, neg, 0, rest, c->n && (c->w[0] & 1)))
            rm_big_add_small (c, 1);
        return;
    }
    if (k > rm_big_digits (c)) {
        /* Every digit goes, and c is below a tenth of the unit kept. */
        rest |= !rm_big_is_zero (c);
        rm_big_set (c, 0, 0);
        digit = 0;
    } else {
        rest |= rm_big_div_pow10 (c, k - 1);
        digit = rm_big_divmod_small (c, 10);
    }
    if (round_up (mode, neg, digit, rest, c->n && (c->w[0] & 1)))
        rm_big_add_small (c, 1);
}

/* Rounds c * 10^exp (half to even) to 34 digits and to the exponent
 * range, and packs it; sticky as for drop_digits (callers that pass it
 * leave c more than 34 digits). */
static void
round_pack (bson_decimal128_t *r, bool neg, rm_big_t *c, int64_t exp, bool sticky)
{
    unsigned nd = rm_big_digits (c);
    int64_t drop = nd > DIGITS ? (int64_t) nd - DIGITS : 0;

    /* Below the smallest exponent the result is subnormal: fewer digits. */
    if (exp + drop < EMIN)
        drop = EMIN - exp;
    if (drop > 0) {
        unsigned k = drop > (int64_t) nd + 1 ? nd + 1 : (unsigned) drop;
        drop_digits (c, k, RM_XDEC_HALF_EVEN, neg, sticky);
        exp += drop;
        if (rm_big_digits (c) > DIGITS) { /* 99...9 rounded up to 10^34 */
            rm_big_divmod_small (c, 10);
            exp++;
        }
    } else if (sticky) {
        drop_digits (c, 0, RM_XDEC_HALF_EVEN, neg, sticky);
    }
    if (exp > EMAX) {
        /* Pad the coefficient with zeros where there is room (a clamped
         * result); else the result overflows. */
        int64_t pad = exp - EMAX;
        if (rm_big_is_zero (c)) {
            exp = EMAX;
        } else if ((int64_t) rm_big_digits (c) + pad <= DIGITS) {
            rm_big_mul_pow10 (c, (unsigned) pad);
            exp = EMAX;
        } else {
            set_inf (r, neg);
            return;
        }
    }
    pack (r, neg, exp, c);
}

/* ---- small helpers on the big integers */

static void
big_mul (rm_big_t *r, const rm_big_t *a, const rm_big_t *b)
{
    rm_big_t t;
    memset (&t, 0, sizeof t);
    for (size_t i = 0; i < a->n; i++) {
        uint64_t carry = 0;
        for (size_t j = 0; j < b->n; j++) {
            uint64_t p = (uint64_t) a->w[i] * b->w[j] + t.w[i + j] + carry;
            t.w[i + j] = (uint32_t) p;
            carry = p >> 32;
        }
        t.w[i + b->n] = (uint32_t) carry;
    }
    t.n = a->n + b->n;
    while (t.n && !t.w[t.n - 1])
        t.n--;
    *r = t;
}

/* q = a / b, rem = a % b, by bits (b not zero; q may be NULL). */
static void
big_divmod (rm_big_t *q, rm_big_t *rem, const rm_big_t *a, const rm_big_t *b)
{
    rm_big_t r, qq;
    size_t bits = rm_big_bitlen (a);
    rm_big_set (&r, 0, 0);
    rm_big_set (&qq, 0, 0);
    for (size_t i = bits; i-- > 0;) {
        rm_big_shl (&r, 1);
        if ((a->w[i / 32] >> (i % 32)) & 1)
            rm_big_add_small (&r, 1);
        rm_big_shl (&qq, 1);
        if (rm_big_cmp (&r, b) >= 0) {
            rm_big_sub (&r, b);
            rm_big_add_small (&qq, 1);
        }
    }
    if (q)
        *q = qq;
    *rem = r;
}

static void
coef (const rm_dec_t *x, rm_big_t *c)
{
    rm_big_set (c, x->hi, x->lo);
}

/* ---- predicates */

bool
rm_xdec_is_nan (const bson_decimal128_t *a)
{
    return ((a->high >> 58) & 0x1f) == 0x1f;
}

bool
rm_xdec_is_inf (const bson_decimal128_t *a)
{
    return ((a->high >> 58) & 0x1f) == 0x1e;
}

bool
rm_xdec_is_zero (const bson_decimal128_t *a)
{
    rm_dec_t x;
    rm_dec_unpack (a, &x);
    return x.kind == RM_DEC_FINITE && x.hi == 0 && x.lo == 0;
}

bool
rm_xdec_is_neg (const bson_decimal128_t *a)
{
    return (a->high & SIGN_BIT) != 0;
}

int
rm_xdec_cmp (const bson_decimal128_t *a, const bson_decimal128_t *b)
{
    bson_decimal128_t d;
    if (rm_xdec_is_nan (a) || rm_xdec_is_nan (b))
        return 2;
    if (rm_xdec_is_inf (a) || rm_xdec_is_inf (b)) {
        int sa = rm_xdec_is_inf (a) ? (rm_xdec_is_neg (a) ? -2 : 2) : 0;
        int sb = rm_xdec_is_inf (b) ? (rm_xdec_is_neg (b) ? -2 : 2) : 0;
        /* A finite value lies strictly between the infinities. */
        return sa == sb ? 0 : sa < sb ? -1 : 1;
    }
    /* The sign of a rounded difference is the exact difference's, and it
     * is zero only when that is. */
    rm_xdec_sub (&d, a, b);
    if (rm_xdec_is_zero (&d))
        return 0;
    return rm_xdec_is_neg (&d) ? -1 : 1;
}

/* ---- conversions */

void
rm_xdec_from_int64 (bson_decimal128_t *r, int64_t v)
{
    rm_big_t c;
    uint64_t m = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;
    rm_big_set (&c, 0, m);
    pack (r, v < 0, 0, &c);
}

/* The double's exact value rounded to 34 digits: an integer keeps
 * exponent 0, a fraction the fewest places that hold it. */
static void
from_double34 (bson_decimal128_t *r, double d)
{
    rm_big_t c;
    uint64_t bits, mant;
    int e2;
    bool neg = signbit (d) != 0;

    if (isnan (d)) {
        r->high = (neg ? SIGN_BIT : 0) | NAN_BITS;
        r->low = 0;
        return;
    }
    if (isinf (d)) {
        set_inf (r, neg);
        return;
    }
    if (d == 0) {
        rm_big_set (&c, 0, 0);
        pack (r, neg, 0, &c);
        return;
    }
    memcpy (&bits, &d, sizeof bits);
    mant = bits & ((UINT64_C (1) << 52) - 1);
    e2 = (int) ((bits >> 52) & 0x7ff);
    if (e2) {
        mant |= UINT64_C (1) << 52;
        e2 -= 1075;
    } else {
        e2 = -1074;
    }
    while (!(mant & 1)) {
        mant >>= 1;
        e2++;
    }
    rm_big_set (&c, 0, mant);
    if (e2 >= 0) {
        rm_big_shl (&c, (unsigned) e2);
        round_pack (r, neg, &c, 0, false);
    } else {
        /* mant / 2^k = mant * 5^k / 10^k */
        rm_big_mul_pow5 (&c, (unsigned) -e2);
        round_pack (r, neg, &c, e2, false);
    }
}

void
rm_xdec_from_double (bson_decimal128_t *r, double d, bool digits15)
{
    bson_decimal128_t full;
    int e2, e10;
    rm_dec_t x;

    from_double34 (&full, d);
    if (!digits15 || d == 0 || !isfinite (d)) {
        *r = full;
        return;
    }
    /* The server's estimate of the decimal exponent from the binary one
     * (floor (e2 * log10 (2)), in integers), tried first, then one more
     * when the coefficient came out with 16 digits. */
    frexp (d, &e2);
    e2--;
    e10 = (e2 * 30103) / 100000;
    if (e2 < 0)
        e10--;
    rm_xdec_quantize (r, &full, e10 - 14, RM_XDEC_HALF_EVEN);
    rm_dec_unpack (r, &x);
    if (x.hi != 0 || x.lo > UINT64_C (999999999999999))
        rm_xdec_quantize (r, &full, e10 - 13, RM_XDEC_HALF_EVEN);
}

bool
rm_xdec_to_int64 (const bson_decimal128_t *a, int64_t *v)
{
    rm_dec_t x;
    rm_big_t c;
    uint64_t hi, lo;

    rm_dec_unpack (a, &x);
    if (x.kind != RM_DEC_FINITE)
        return false;
    coef (&x, &c);
    if (rm_big_is_zero (&c)) {
        *v = 0;
        return true;
    }
    if (x.exp > 0) {
        if (rm_big_digits (&c) + (unsigned) x.exp > 19)
            return false;
        rm_big_mul_pow10 (&c, (unsigned) x.exp);
    } else if (x.exp < 0) {
        unsigned nd = rm_big_digits (&c);
        drop_digits (&c, -x.exp > (int64_t) nd + 1 ? nd + 1 : (unsigned) -x.exp, RM_XDEC_HALF_EVEN,
                     x.neg, false);
    }
    rm_big_get (&c, &hi, &lo);
    if (hi || lo > (x.neg ? UINT64_C (1) << 63 : (UINT64_C (1) << 63) - 1))
        return false;
    *v = x.neg ? (int64_t) (0 - lo) : (int64_t) lo;
    return true;
}

/* ---- operations */

void
rm_xdec_add (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b)
{
    rm_dec_t x, y, t;
    rm_big_t cx, cy;
    int64_t d, exp;
    bool neg;

    if (unpack_two (r, a, b, &x, &y))
        return;
    if (x.kind == RM_DEC_INF || y.kind == RM_DEC_INF) {
        if (x.kind == RM_DEC_INF && y.kind == RM_DEC_INF && x.neg != y.neg)
            set_nan (r); /* Infinity - Infinity */
        else
            set_inf (r, x.kind == RM_DEC_INF ? x.neg : y.neg);
        return;
    }
    if (x.exp < y.exp) { /* x: the operand with the larger exponent */
        t = x;
        x = y;
        y = t;
    }
    coef (&x, &cx);
    coef (&y, &cy);
    d = (int64_t) x.exp - y.exp;
    exp = y.exp;
    if (d > 70) {
        if (rm_big_is_zero (&cx)) {
            /* A zero far above: the sum is y, exactly. */
            if (rm_big_is_zero (&cy)) {
                pack (r, x.neg && y.neg, y.exp, &cy);
                return;
            }
            pack (r, y.neg, y.exp, &cy);
            return;
        }
        /* y is below a unit of x's 38th digit: as far as rounding x to 34
         * digits goes, a 1 there stands for it. */
        rm_big_mul_pow10 (&cx, 37);
        exp = x.exp - 37;
        if (!rm_big_is_zero (&cy))
            rm_big_set (&cy, 0, 1);
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
            neg = c > 0 && x.neg; /* an exact zero is +0 */
        } else {
            rm_big_sub (&cy, &cx);
            cx = cy;
            neg = y.neg;
        }
    }
    round_pack (r, neg, &cx, exp, false);
}

void
rm_xdec_sub (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b)
{
    bson_decimal128_t nb = *b;
    if (!rm_xdec_is_nan (b))
        nb.high ^= SIGN_BIT;
    rm_xdec_add (r, a, &nb);
}

void
rm_xdec_mul (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b)
{
    rm_dec_t x, y;
    rm_big_t cx, cy;
    bool neg;

    if (unpack_two (r, a, b, &x, &y))
        return;
    neg = x.neg != y.neg;
    coef (&x, &cx);
    coef (&y, &cy);
    if (x.kind == RM_DEC_INF || y.kind == RM_DEC_INF) {
        if ((x.kind == RM_DEC_FINITE && rm_big_is_zero (&cx)) ||
            (y.kind == RM_DEC_FINITE && rm_big_is_zero (&cy)))
            set_nan (r); /* Infinity * 0 */
        else
            set_inf (r, neg);
        return;
    }
    big_mul (&cx, &cx, &cy);
    round_pack (r, neg, &cx, (int64_t) x.exp + y.exp, false);
}

void
rm_xdec_div (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b)
{
    rm_dec_t x, y;
    rm_big_t cx, cy, q, rem;
    unsigned dx, dy, k = 0;
    int64_t exp, pref;
    bool neg;

    if (unpack_two (r, a, b, &x, &y))
        return;
    neg = x.neg != y.neg;
    if (x.kind == RM_DEC_INF) {
        if (y.kind == RM_DEC_INF)
            set_nan (r);
        else
            set_inf (r, neg);
        return;
    }
    coef (&x, &cx);
    if (y.kind == RM_DEC_INF) {
        /* A finite number over infinity: a zero of the smallest exponent. */
        rm_big_set (&cx, 0, 0);
        pack (r, neg, EMIN, &cx);
        return;
    }
    coef (&y, &cy);
    pref = (int64_t) x.exp - y.exp;
    if (rm_big_is_zero (&cx)) {
        round_pack (r, neg, &cx, pref < EMIN ? EMIN : pref, false);
        return;
    }
    /* Scale the dividend so that the quotient has at least 35 digits: 34
     * and a rounding digit, the remainder standing for the rest. */
    dx = rm_big_digits (&cx);
    dy = rm_big_digits (&cy);
    if (dx < dy + 35)
        k = dy + 35 - dx;
    rm_big_mul_pow10 (&cx, k);
    big_divmod (&q, &rem, &cx, &cy);
    exp = pref - k;
    if (rm_big_is_zero (&rem)) {
        /* Exact: the preferred exponent is the difference of theirs, so
         * drop the zeros the scaling added. */
        while (exp < pref && rm_big_mod_small (&q, 10) == 0) {
            rm_big_divmod_small (&q, 10);
            exp++;
        }
    }
    round_pack (r, neg, &q, exp, !rm_big_is_zero (&rem));
}

void
rm_xdec_div_int64 (bson_decimal128_t *r, const bson_decimal128_t *a, int64_t n)
{
    bson_decimal128_t d;
    BSON_ASSERT (n > 0);
    rm_xdec_from_int64 (&d, n);
    rm_xdec_div (r, a, &d);
}

void
rm_xdec_mod (bson_decimal128_t *r, const bson_decimal128_t *a, const bson_decimal128_t *b)
{
    rm_dec_t x, y;
    rm_big_t cx, cy, p;
    int64_t e;

    if (unpack_two (r, a, b, &x, &y))
        return;
    if (x.kind == RM_DEC_INF) {
        set_nan (r);
        return;
    }
    if (y.kind == RM_DEC_INF) {
        *r = *a;
        return;
    }
    coef (&x, &cx);
    coef (&y, &cy);
    e = x.exp < y.exp ? x.exp : y.exp;
    if (y.exp > x.exp) {
        /* The divisor scaled to a's exponent; when it is sure to exceed
         * a, the remainder is a itself. */
        int64_t s = (int64_t) y.exp - x.exp;
        if (rm_big_is_zero (&cx) || s + rm_big_digits (&cy) > rm_big_digits (&cx) + 1) {
            pack (r, x.neg, x.exp, &cx);
            return;
        }
        rm_big_mul_pow10 (&cy, (unsigned) s);
        big_divmod (NULL, &cx, &cx, &cy);
    } else {
        /* a's coefficient times 10^s modulo b's, reduced as it grows so
         * that a huge s stays small. */
        int64_t s = (int64_t) x.exp - y.exp;
        big_divmod (NULL, &cx, &cx, &cy);
        while (s > 0) {
            unsigned k = s > 9 ? 9 : (unsigned) s;
            rm_big_mul_pow10 (&cx, k);
            big_divmod (NULL, &p, &cx, &cy);
            cx = p;
            s -= k;
        }
    }
    pack (r, x.neg, e, &cx);
}

/* floor (sqrt (a)) by Newton's method from above. */
static void
big_isqrt (rm_big_t *s, const rm_big_t *a)
{
    rm_big_t x, y, q, rem;
    if (rm_big_is_zero (a)) {
        *s = *a;
        return;
    }
    rm_big_set (&x, 0, 1);
    rm_big_shl (&x, (unsigned) (rm_big_bitlen (a) + 1) / 2 + 1);
    for (;;) {
        big_divmod (&q, &rem, a, &x);
        y = x;
        rm_big_add (&y, &q);
        rm_big_shr (&y, 1);
        if (rm_big_cmp (&y, &x) >= 0)
            break;
        x = y;
    }
    *s = x;
}

void
rm_xdec_sqrt (bson_decimal128_t *r, const bson_decimal128_t *a)
{
    rm_dec_t x;
    rm_big_t c, s, sq;
    int64_t e, pref;
    unsigned k = 0, nd;

    rm_dec_unpack (a, &x);
    if (x.kind == RM_DEC_NAN) {
        quiet (r, a);
        return;
    }
    coef (&x, &c);
    if (x.kind == RM_DEC_FINITE && rm_big_is_zero (&c)) {
        /* sqrt(-0) is -0; the exponent halves, rounding down. */
        pack (r, x.neg, x.exp >= 0 ? x.exp / 2 : -((1 - x.exp) / 2), &c);
        return;
    }
    if (x.neg) {
        set_nan (r);
        return;
    }
    if (x.kind == RM_DEC_INF) {
        set_inf (r, false);
        return;
    }
    pref = x.exp >= 0 ? x.exp / 2 : -((1 - x.exp) / 2);
    /* Scale to an even exponent and at least 70 digits, so that the root
     * has 35. */
    nd = rm_big_digits (&c);
    if (nd < 70)
        k = 70 - nd;
    if (((int64_t) x.exp - k) % 2 != 0)
        k++;
    rm_big_mul_pow10 (&c, k);
    e = ((int64_t) x.exp - k) / 2;
    big_isqrt (&s, &c);
    big_mul (&sq, &s, &s);
    if (rm_big_cmp (&sq, &c) == 0) {
        while (e < pref && rm_big_mod_small (&s, 10) == 0) {
            rm_big_divmod_small (&s, 10);
            e++;
        }
        round_pack (r, false, &s, e, false);
        return;
    }
    round_pack (r, false, &s, e, true);
}

int32_t
rm_xdec_place_exp (const bson_decimal128_t *a, int32_t exp)
{
    rm_dec_t x;
    rm_big_t c;
    unsigned nd;

    rm_dec_unpack (a, &x);
    if (x.kind != RM_DEC_FINITE || x.exp < exp)
        return exp;
    coef (&x, &c);
    if (rm_big_is_zero (&c))
        return exp;
    nd = rm_big_digits (&c);
    if (nd + (uint64_t) (x.exp - exp) <= DIGITS)
        return exp;
    return (int32_t) (x.exp + (int64_t) nd - DIGITS);
}

void
rm_xdec_quantize (bson_decimal128_t *r, const bson_decimal128_t *a, int32_t exp,
                  rm_xdec_round_t mode)
{
    rm_dec_t x;
    rm_big_t c;

    rm_dec_unpack (a, &x);
    if (x.kind == RM_DEC_NAN) {
        quiet (r, a);
        return;
    }
    if (x.kind == RM_DEC_INF) {
        set_nan (r);
        return;
    }
    coef (&x, &c);
    if (x.exp >= exp) {
        unsigned s = (unsigned) (x.exp - exp);
        if (!rm_big_is_zero (&c)) {
            if (rm_big_digits (&c) + s > DIGITS) {
                set_nan (r);
                return;
            }
            rm_big_mul_pow10 (&c, s);
        }
    } else {
        int64_t k = (int64_t) exp - x.exp;
        unsigned nd = rm_big_digits (&c);
        drop_digits (&c, k > (int64_t) nd + 1 ? nd + 1 : (unsigned) k, mode, x.neg, false);
        if (rm_big_digits (&c) > DIGITS) {
            set_nan (r);
            return;
        }
    }
    pack (r, x.neg, exp, &c);
}

void
rm_xdec_abs (bson_decimal128_t *r, const bson_decimal128_t *a)
{
    *r = *a;
    r->high &= ~SIGN_BIT;
}
