/* The small unsigned big integer of bignum.h: just the operations exact
 * decimal arithmetic and exact number comparison need, schoolbook, with
 * single-limb multipliers and divisors where that is enough. */
#include <string.h>

#include <bson/bson.h>

#include "bignum.h"

static const uint32_t pow10_32[10] = {1,      10,      100,      1000,      10000,
                                      100000, 1000000, 10000000, 100000000, 1000000000};

static void
trim (rm_big_t *x)
{
    while (x->n && !x->w[x->n - 1])
        x->n--;
}

void
rm_big_set (rm_big_t *x, uint64_t hi, uint64_t lo)
{
    x->w[0] = (uint32_t) lo;
    x->w[1] = (uint32_t) (lo >> 32);
    x->w[2] = (uint32_t) hi;
    x->w[3] = (uint32_t) (hi >> 32);
    x->n = 4;
    trim (x);
}

void
rm_big_get (const rm_big_t *x, uint64_t *hi, uint64_t *lo)
{
    uint32_t w[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < x->n && i < 4; i++)
        w[i] = x->w[i];
    *lo = (uint64_t) w[1] << 32 | w[0];
    *hi = (uint64_t) w[3] << 32 | w[2];
}

int
rm_big_cmp (const rm_big_t *a, const rm_big_t *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (size_t i = a->n; i-- > 0;)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

size_t
rm_big_bitlen (const rm_big_t *x)
{
    size_t bits;
    uint32_t top;
    if (!x->n)
        return 0;
    top = x->w[x->n - 1];
    bits = (x->n - 1) * 32;
    while (top) {
        bits++;
        top >>= 1;
    }
    return bits;
}

unsigned
rm_big_digits (const rm_big_t *x)
{
    rm_big_t p;
    unsigned d;
    size_t bits = rm_big_bitlen (x);

    if (bits <= 32) {
        uint32_t v = x->n ? x->w[0] : 0;
        for (d = 1; d < 10 && v >= pow10_32[d]; d++)
            ;
        return d;
    }
    /* 2^(bits-1) <= x, so x has at least floor((bits-1) log10 2) + 1 digits
     * (0.30102 is below log10 2, so this never overshoots); count up from
     * there by comparing with powers of ten (at most twice). */
    d = (unsigned) ((bits - 1) * 30102 / 100000) + 1;
    rm_big_set (&p, 0, 1);
    rm_big_mul_pow10 (&p, d);
    while (rm_big_cmp (x, &p) >= 0) {
        rm_big_mul_small (&p, 10);
        d++;
    }
    return d;
}

size_t
rm_big_ctz (const rm_big_t *x)
{
    size_t n = 0, i = 0;
    uint32_t w;

    while (x->w[i] == 0) {
        i++;
        n += 32;
    }
    for (w = x->w[i]; !(w & 1); w >>= 1)
        n++;
    return n;
}

/* x = x * m + a */
static void
mul_add (rm_big_t *x, uint32_t m, uint32_t a)
{
    uint64_t carry = a;
    for (size_t i = 0; i < x->n; i++) {
        uint64_t t = (uint64_t) x->w[i] * m + carry;
        x->w[i] = (uint32_t) t;
        carry = t >> 32;
    }
    if (carry) {
        BSON_ASSERT (x->n < RM_BIG_LIMBS);
        x->w[x->n++] = (uint32_t) carry;
    }
}

void
rm_big_add_small (rm_big_t *x, uint32_t v)
{
    mul_add (x, 1, v);
}

void
rm_big_mul_small (rm_big_t *x, uint32_t m)
{
    mul_add (x, m, 0);
}

uint32_t
rm_big_divmod_small (rm_big_t *x, uint32_t d)
{
    uint64_t rem = 0;
    for (size_t i = x->n; i-- > 0;) {
        uint64_t cur = (rem << 32) | x->w[i];
        x->w[i] = (uint32_t) (cur / d);
        rem = cur % d;
    }
    trim (x);
    return (uint32_t) rem;
}

uint32_t
rm_big_mod_small (const rm_big_t *x, uint32_t d)
{
    uint64_t rem = 0;
    for (size_t i = x->n; i-- > 0;)
        rem = ((rem << 32) | x->w[i]) % d;
    return (uint32_t) rem;
}

uint64_t
rm_big_divmod_u64 (rm_big_t *x, uint64_t d)
{
    uint64_t rem = 0;
    for (size_t i = rm_big_bitlen (x); i-- > 0;) {
        uint32_t *w = &x->w[i / 32], bit = 1u << (i % 32);
        rem = (rem << 1) | ((*w & bit) != 0);
        *w &= ~bit;
        if (rem >= d) {
            rem -= d;
            *w |= bit;
        }
    }
    trim (x);
    return rem;
}

void
rm_big_mul_pow5 (rm_big_t *x, unsigned k)
{
    static const uint32_t pow5[14] = {1,       5,        25,        125,      625,
                                      3125,    15625,    78125,     390625,   1953125,
                                      9765625, 48828125, 244140625, 1220703125};
    for (; k >= 13; k -= 13)
        rm_big_mul_small (x, pow5[13]);
    if (k)
        rm_big_mul_small (x, pow5[k]);
}

void
rm_big_mul_pow10 (rm_big_t *x, unsigned k)
{
    for (; k >= 9; k -= 9)
        rm_big_mul_small (x, pow10_32[9]);
    if (k)
        rm_big_mul_small (x, pow10_32[k]);
}

bool
rm_big_div_pow10 (rm_big_t *x, unsigned k)
{
    bool rest = false;
    for (; k >= 9; k -= 9)
        rest |= rm_big_divmod_small (x, pow10_32[9]) != 0;
    if (k)
        rest |= rm_big_divmod_small (x, pow10_32[k]) != 0;
    return rest;
}

void
rm_big_shl (rm_big_t *x, unsigned k)
{
    size_t limbs = k / 32, n = x->n;
    unsigned bits = k % 32;

    if (!n)
        return;
    BSON_ASSERT (n + limbs + 1 <= RM_BIG_LIMBS);
    x->w[n + limbs] = 0;
    for (size_t i = n; i-- > 0;) {
        uint64_t v = (uint64_t) x->w[i] << bits;
        x->w[i + limbs + 1] |= (uint32_t) (v >> 32);
        x->w[i + limbs] = (uint32_t) v;
    }
    memset (x->w, 0, limbs * sizeof x->w[0]);
    x->n = n + limbs + 1;
    trim (x);
}

void
rm_big_shr (rm_big_t *x, unsigned k)
{
    size_t limbs = k / 32;
    unsigned bits = k % 32;

    if (limbs >= x->n) {
        x->n = 0;
        return;
    }
    if (limbs) {
        memmove (x->w, x->w + limbs, (x->n - limbs) * sizeof x->w[0]);
        x->n -= limbs;
    }
    if (bits) {
        for (size_t i = 0; i < x->n; i++) {
            uint32_t next = i + 1 < x->n ? x->w[i + 1] : 0;
            x->w[i] = x->w[i] >> bits | next << (32 - bits);
        }
    }
    trim (x);
}

void
rm_big_add (rm_big_t *a, const rm_big_t *b)
{
    uint64_t carry = 0;
    size_t n = a->n > b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = carry + (i < a->n ? a->w[i] : 0) + (i < b->n ? b->w[i] : 0);
        a->w[i] = (uint32_t) t;
        carry = t >> 32;
    }
    a->n = n;
    if (carry) {
        BSON_ASSERT (n < RM_BIG_LIMBS);
        a->w[a->n++] = (uint32_t) carry;
    }
}

void
rm_big_sub (rm_big_t *a, const rm_big_t *b)
{
    int64_t borrow = 0;
    for (size_t i = 0; i < a->n; i++) {
        int64_t t = (int64_t) a->w[i] - (i < b->n ? b->w[i] : 0) - borrow;
        borrow = t < 0;
        a->w[i] = (uint32_t) (t + (borrow ? (int64_t) 1 << 32 : 0));
    }
    trim (a);
}
