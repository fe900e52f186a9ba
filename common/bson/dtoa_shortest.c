/* The shortest digits of a double that read back (dtoa_shortest.h), by
 * the method of R. Giulietti's "The Schubfach way to render doubles"
 * (2020), written here from the paper's description.
 *
 * A positive double is c 2^q (c below 2^53). Every real strictly between
 * the midpoints to its neighbours reads back as it; the midpoints
 * themselves read back when c is even (the reader rounds a tie to even).
 * That interval is at most 2^q wide; at a power of two (c = 2^52, above
 * the subnormals) the neighbour below is half as far, and it is 3/4 2^q.
 * With k the largest exponent such that 10^k is at most that width, the
 * interval holds at least one multiple of 10^k and at most one of
 * 10^(k+1): if it holds one of 10^(k+1), that one has the fewest digits;
 * otherwise every candidate is a multiple of 10^k with as many digits as
 * the others, and the closest of the two around the value wins (the even
 * one on a tie, as printf rounds). Integers below 2^53 are their own
 * shortest form.
 *
 * Deciding which candidates lie inside needs the bounds and the value
 * scaled by 10^-k, each only to an integer rounded to odd (the floor,
 * with its last bit set when something was cut): compared with an even
 * integer, that answers as the exact value would. The paper shows that a
 * 126-bit g = floor(10^-k 2^-r) + 1 and a product cut below its 64th bit
 * give exactly that rounding for every double; g is computed once, at
 * first use, from exact big integers. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "bignum.h"
#include "dtoa_shortest.h"

typedef unsigned __int128 u128;

#define Q_MIN (-1074) /* the subnormals' exponent, and the least normal's */
#define C_MIN (UINT64_C (1) << 52)
#define K_MIN (-324) /* the range of k over every q */
#define K_MAX 292
#define MASK63 ((UINT64_C (1) << 63) - 1)

/* floor (e log10 2), floor (log10 (3/4 2^e)) and floor (e log2 10), by a
 * fixed-point product: checked equal to exact rational arithmetic for |e|
 * up to 1,100 (the first two) and 350 (the last), beyond every use here
 * (|e| <= 1,075 and <= 324). */
static inline int
flog10_pow2 (int e)
{
    return (int) (((int64_t) e * INT64_C (661971961084)) >> 41);
}

static inline int
flog10_three_quarters_pow2 (int e)
{
    return (int) (((int64_t) e * INT64_C (661971961084) - INT64_C (274743187321)) >> 41);
}

static inline int
flog2_pow10 (int e)
{
    return (int) (((int64_t) e * INT64_C (913124641741)) >> 38);
}

/* g for k, as its high and low 63 bits (g1 2^63 + g0). */
static uint64_t g_hi[K_MAX - K_MIN + 1], g_lo[K_MAX - K_MIN + 1];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* floor (x / 2^s) mod 2^128 */
static u128
big_bits (const rm_big_t *x, int s)
{
    size_t i = (size_t) s / 32;
    int b = s % 32;
    u128 v = 0;

    for (int j = 0; j <= 4; j++) {
        int sh = 32 * j - b;
        uint32_t w = i + (size_t) j < x->n ? x->w[i + (size_t) j] : 0;
        if (sh < 0)
            v |= w >> -sh;
        else if (sh < 128)
            v |= (u128) w << sh;
    }
    return v;
}

static void
g_store (int k, u128 g)
{
    g_hi[k - K_MIN] = (uint64_t) (g >> 63);
    g_lo[k - K_MIN] = (uint64_t) g & MASK63;
}

/* r = flog2_pow10 (-k) - 125 puts 10^-k 2^-r in [2^125, 2^126). */
static void
g_init (void)
{
    enum { L = 1120 }; /* 2^L / 10^k keeps 126 bits at k = K_MAX */
    rm_big_t x;

    /* k <= 0: 10^-k exactly, growing. */
    rm_big_set (&x, 0, 1);
    for (int n = 0; n <= -K_MIN; n++) {
        int r = flog2_pow10 (n) - 125;
        g_store (-n, (r <= 0 ? big_bits (&x, 0) << -r : big_bits (&x, r)) + 1);
        rm_big_mul_small (&x, 10);
    }
    /* k > 0: floor (2^L / 10^k), shrinking (a floor of a floor is the
     * floor of the whole quotient). */
    memset (&x, 0, sizeof x);
    x.w[L / 32] = UINT32_C (1) << (L % 32);
    x.n = L / 32 + 1;
    for (int k = 1; k <= K_MAX; k++) {
        int r = flog2_pow10 (-k) - 125;
        rm_big_divmod_small (&x, 10);
        g_store (k, big_bits (&x, L + r) + 1);
    }
}

/* g cp / 2^127 rounded to odd, the lowest 64 bits of g0 cp cut. */
static inline uint64_t
rop (uint64_t g1, uint64_t g0, uint64_t cp)
{
    u128 lo = (u128) g0 * cp, hi = (u128) g1 * cp;
    uint64_t z = ((uint64_t) hi >> 1) + (uint64_t) (lo >> 64);
    uint64_t v = (uint64_t) (hi >> 64) + (z >> 63);
    return v | ((z & MASK63) != 0);
}

/* c 2^q as f 10^e, f the shortest (maybe with trailing zeros). */
static void
to_decimal (uint64_t c, int q, uint64_t *f, int *e)
{
    uint64_t out = c & 1, cb = c << 2, cbr = cb + 2, cbl, vb, vbl, vbr, s, t, g1, g0;
    int k, h;
    bool uin, win;
    int64_t cmp;

    if (c != C_MIN || q == Q_MIN) {
        cbl = cb - 2;
        k = flog10_pow2 (q);
    } else {
        cbl = cb - 1;
        k = flog10_three_quarters_pow2 (q);
    }
    /* cb << h stays below 2^61: h is 2 to 5 for every q, cbr below 2^55 + 3. */
    h = q + flog2_pow10 (-k) + 2;
    g1 = g_hi[k - K_MIN];
    g0 = g_lo[k - K_MIN];
    vb = rop (g1, g0, cb << h);
    vbl = rop (g1, g0, cbl << h);
    vbr = rop (g1, g0, cbr << h);
    /* The value, the bounds, in quarters of 10^k; out: the bounds
     * themselves read back only for an even c. */
    s = vb >> 2;
    *e = k;
    if (s >= 10) {
        /* A multiple of 10^(k+1) inside has fewer digits than any other. */
        uint64_t up = s / 10 * 10, wp = up + 10;
        uin = vbl + out <= up << 2;
        win = (wp << 2) + out <= vbr;
        if (uin != win) {
            *f = uin ? up : wp;
            return;
        }
    }
    t = s + 1;
    uin = vbl + out <= s << 2;
    win = (t << 2) + out <= vbr;
    if (uin != win) {
        *f = uin ? s : t;
        return;
    }
    /* Both inside: the closer, the even one on a tie. */
    cmp = (int64_t) (vb - ((s + t) << 1));
    *f = cmp < 0 || (cmp == 0 && !(s & 1)) ? s : t;
}

/* "00" to "99". */
static const char two_digits[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                    "8081828384858687888990919293949596979899";

int
rm_dtoa_shortest (double d, char *dig, int *e10)
{
    uint64_t bits, c, f;
    int bq, q, e, n = 0;

    memcpy (&bits, &d, sizeof bits);
    bq = (int) (bits >> 52) & 0x7ff;
    c = bits & (C_MIN - 1);
    if (bq) {
        c |= C_MIN;
        q = bq - 1075;
    } else {
        q = Q_MIN;
    }
    if (!c) { /* zero, which the caller should have written itself */
        dig[0] = '0';
        dig[1] = '\0';
        *e10 = 0;
        return 1;
    }
    if (q < 0 && q > -53 && !(c & ((UINT64_C (1) << -q) - 1))) {
        /* An integer below 2^53: the interval is narrower than 1. */
        f = c >> -q;
        e = 0;
    } else {
        pthread_once (&g_once, g_init);
        to_decimal (c, q, &f, &e);
    }
    /* The trailing zeros by eights, then fours, twos and ones (to_decimal
     * leaves up to sixteen: a zero at a time was a fifth of the call). */
    while (f % 100000000 == 0) {
        f /= 100000000;
        e += 8;
    }
    if (f % 10000 == 0) {
        f /= 10000;
        e += 4;
    }
    if (f % 100 == 0) {
        f /= 100;
        e += 2;
    }
    if (f % 10 == 0) {
        f /= 10;
        e++;
    }
    /* Written from the last digit back, two at a time. */
    for (uint64_t p10 = 10; n < 19 && f >= p10; p10 *= 10)
        n++;
    n++;
    dig[n] = '\0';
    for (int i = n; i > 1; i -= 2, f /= 100)
        memcpy (dig + i - 2, two_digits + 2 * (f % 100), 2);
    if (n & 1)
        dig[0] = (char) ('0' + f);
    *e10 = e + n - 1;
    return n;
}
