/* CRC-64/XZ (Go's crc64.ECMA): reflected polynomial 0xC96C5795D7870F42,
 * register preset to all ones, result inverted. Three implementations:
 *
 *   rm_crc64_update_table   portable slicing-by-8 (eight 256-entry tables);
 *   rm_crc64_update_clmul   carry-less multiplication (PCLMULQDQ) on x86-64
 *                           CPUs that have it, for inputs of 8 bytes or
 *                           more (under 64, one block at a time, odd
 *                           lengths as if padded in front); the rest goes
 *                           to the table version;
 *   rm_crc64_update         the same on 256-bit registers (VPCLMULQDQ with
 *                           AVX2), twice the bytes per instruction, for
 *                           inputs of 256 bytes or more on CPUs that have
 *                           it; else as rm_crc64_update_clmul.
 *
 * Both take and return a finished CRC (0 for "nothing yet") and invert on the
 * way in and out, so update (update (0, a), b) == update (0, a || b). The
 * internal *_raw functions work on the bare register (no inversion). */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "bytes.h"
#include "remodel/crc64.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RM_CRC64_HAVE_PCLMUL 1
#include <immintrin.h>
#endif

/* The reflected polynomial: bit i holds the coefficient of x^(63-i) of
 * P(x) - x^64, where P(x) = x^64 + x^62 + x^57 + ... + 1 (ECMA-182, normal
 * form 0x42F0E1EBA9EA3693). */
#define POLY UINT64_C(0xC96C5795D7870F42)

/* Inputs shorter than this go to the table: the vector setup and the final
 * reduction cost about as much as a few table steps. */
#define PCLMUL_MIN_LEN 64
#ifndef PCLMUL_SHORT_MIN_LEN
#define PCLMUL_SHORT_MIN_LEN 16
#endif
#define VPCLMUL_MIN_LEN 256

static uint64_t tab[8][256];
#ifdef RM_CRC64_HAVE_PCLMUL
static bool have_pclmul, have_vpclmul;
#endif
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void
crc64_init (void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        tab[0][i] = c;
    }
    /* tab[k][i]: byte i followed by k zero bytes. */
    for (unsigned i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            tab[k][i] = (tab[k - 1][i] >> 8) ^ tab[0][tab[k - 1][i] & 0xff];
#ifdef RM_CRC64_HAVE_PCLMUL
    __builtin_cpu_init ();
    have_pclmul = __builtin_cpu_supports ("pclmul") && __builtin_cpu_supports ("sse4.1");
    have_vpclmul = have_pclmul && __builtin_cpu_supports ("avx2") &&
                   __builtin_cpu_supports ("vpclmulqdq");
#endif
}

static uint64_t
crc64_raw_table (uint64_t reg, const unsigned char *p, size_t len)
{
    while (len >= 8) {
        reg ^= rm_load_le64 (p);
        reg = tab[7][reg & 0xff] ^ tab[6][(reg >> 8) & 0xff] ^ tab[5][(reg >> 16) & 0xff] ^
              tab[4][(reg >> 24) & 0xff] ^ tab[3][(reg >> 32) & 0xff] ^
              tab[2][(reg >> 40) & 0xff] ^ tab[1][(reg >> 48) & 0xff] ^ tab[0][reg >> 56];
        p += 8;
        len -= 8;
    }
    /* The last 1 to 7 bytes in one step too, as the loop above does 8:
     * placed at the top of the register (after 8 - len zero bytes, whose
     * lookups give 0), so the lookups are independent instead of one
     * byte's result feeding the next (analyze hashes many short keys). */
    if (len) {
        uint64_t d = 0;
        unsigned sh = (unsigned) (64 - 8 * len);
        for (size_t i = 0; i < len; i++)
            d |= (uint64_t) p[i] << (8 * i);
        d = (reg ^ d) << sh;
        reg = (reg >> (64 - sh)) ^ tab[7][d & 0xff] ^ tab[6][(d >> 8) & 0xff] ^
              tab[5][(d >> 16) & 0xff] ^ tab[4][(d >> 24) & 0xff] ^ tab[3][(d >> 32) & 0xff] ^
              tab[2][(d >> 40) & 0xff] ^ tab[1][(d >> 48) & 0xff] ^ tab[0][d >> 56];
    }
    return reg;
}

uint64_t
rm_crc64_update_table (uint64_t crc, const void *buf, size_t len)
{
    pthread_once (&init_once, crc64_init);
    if (len == 0)
        return crc;
    return ~crc64_raw_table (~crc, buf, len);
}

#ifdef RM_CRC64_HAVE_PCLMUL
/* Folding with carry-less multiplication.
 *
 * Conventions. A CRC is a remainder of polynomials over GF(2). This CRC is
 * "reflected": the first bit of the message is bit 0 of its first byte, and
 * it is the highest-degree coefficient. A 16-byte block loaded little-endian
 * into an xmm register is therefore the 128-bit integer whose bit k is the
 * coefficient of x^(127-k); a 64-bit value (a register half, a constant)
 * likewise holds in bit i the coefficient of x^(63-i). With that reading the
 * low qword of a block is its high-degree half.
 *
 * PCLMULQDQ on two such 64-bit values A, B gives a 127-bit product whose bit
 * k holds the coefficient of x^(126-k) of A*B. Read as a 128-bit block (bit k
 * = x^(127-k)) that is A*B*x: every reflected product carries one extra
 * factor of x, which the constants below absorb by using x^(n-1) where the
 * algebra asks for x^n.
 *
 * The register. The table code keeps R = (I*x^N + M(x)) * x^64 mod P for an
 * N-bit message M and preset I, i.e. the preset is XORed onto the first 64
 * message bits. Here the preset (~crc) is XORed into the low qword of the
 * first block, then the algorithm keeps 128-bit values S whose sum is
 * congruent to the message so far modulo P; only at the end is S*x^64 mod P
 * computed.
 *
 * Folding. When D more bits of message arrive, M becomes M*x^D + B. Write
 * S = H*x^64 + L (H = low qword, L = high qword). Then
 *     S*x^D = H*x^(D+64) + L*x^D
 *           == H*(x^(D+63) mod P)*x + L*(x^(D-1) mod P)*x   (mod P)
 * and both products have degree <= 127, so one PCLMULQDQ each, XORed
 * together and with the new block B, gives the new S in 128 bits:
 *     D = 128 (next block):        x^191 mod P, x^127 mod P
 *     D = 512 (four lanes of 128): x^575 mod P, x^511 mod P
 * Four independent lanes hide the multiplier latency; they are merged by
 * folding one into the next with D = 128. The 256-bit version holds two
 * lanes per register and keeps four registers, eight lanes of 128 bits:
 *     D = 1024 (eight lanes):       x^1087 mod P, x^1023 mod P
 *     D = 256 (one register):       x^319 mod P, x^255 mod P
 * and ends in one 128-bit lane, reduced as below.
 *
 * Reduction. With everything folded into one S, the CRC register is
 *     S*x^64 mod P = (H*x^128 + L*x^64) mod P.
 * H*x^128 == H*(x^127 mod P)*x: one PCLMULQDQ, plus L moved to the
 * high-degree half, gives T = Th*x^64 + Tl (degree < 128) with the same
 * remainder. Barrett reduction then finds T mod P without division: with
 * mu = floor(x^128 / P) = x^64 + mu' (mu' of degree < 64, precomputed),
 *     Q = floor(Th*x^64 / P) = floor(Th*mu / x^64) = Th + floor(Th*mu' / x^64)
 * (exact because Th*x^128 = Th*mu*P + Th*(x^128 mod P) and the last term
 * divided by P has degree below 64, which dividing by x^64 drops), and
 *     T mod P = Tl + (Q*P mod x^64) = Tl + (Q*(P - x^64) mod x^64).
 * floor(Th*mu'/x^64) is the top half of the product (bits 0..62 of the
 * PCLMULQDQ result, shifted up by one for the extra x); Q*(P - x^64) mod x^64
 * is its bottom half (bits 63..126, shifted down by 63).
 *
 * The constants are reflected like the data (bit i = x^(63-i)); they were
 * computed by long division of x^n by P (and x^128 by P for mu) and checked
 * by the unit tests against the table code and a bit-at-a-time reference. */
#define K_127 UINT64_C(0xDABE95AFC7875F40) /* x^127 mod P */
#define K_191 UINT64_C(0xE05DD497CA393AE4) /* x^191 mod P */
#define K_511 UINT64_C(0x081F6054A7842DF4) /* x^511 mod P */
#define K_575 UINT64_C(0x6AE3EFBB9DD441F3) /* x^575 mod P */
#define K_MU UINT64_C(0x4E1F23360B94B1EA)  /* floor(x^128 / P) - x^64 */
#define K_255 UINT64_C(0x3BE653A30FE1AF51)  /* x^255 mod P */
#define K_319 UINT64_C(0x60095B008A9EFA44)  /* x^319 mod P */
#define K_1023 UINT64_C(0xD7D86B2AF73DE740) /* x^1023 mod P */
#define K_1087 UINT64_C(0x8757D71D4FCC1000) /* x^1087 mod P */

__attribute__ ((target ("pclmul,sse4.1"))) static inline __m128i
fold (__m128i s, __m128i k)
{
    /* low qword * low constant, high qword * high constant */
    return _mm_xor_si128 (_mm_clmulepi64_si128 (s, k, 0x00), _mm_clmulepi64_si128 (s, k, 0x11));
}

#define LOADU(p) _mm_loadu_si128 ((const __m128i *) (const void *) (p))

/* Folds the 16-byte blocks of p (len a multiple of 16) into s, then
 * reduces s to the CRC register. */
__attribute__ ((target ("pclmul,sse4.1"))) static inline uint64_t
fold_tail (__m128i s, const unsigned char *p, size_t len)
{
    const __m128i k128 = _mm_set_epi64x ((int64_t) K_127, (int64_t) K_191);
    __m128i t, prod;
    uint64_t th, tl, q, lo, hi;

    while (len >= 16) {
        s = _mm_xor_si128 (fold (s, k128), LOADU (p));
        p += 16;
        len -= 16;
    }

    /* T = H*(x^127 mod P)*x + L*x^64 */
    t = _mm_xor_si128 (_mm_clmulepi64_si128 (s, _mm_cvtsi64_si128 ((int64_t) K_127), 0x00),
                       _mm_srli_si128 (s, 8));
    th = (uint64_t) _mm_cvtsi128_si64 (t);
    tl = (uint64_t) _mm_extract_epi64 (t, 1);

    /* Q = Th + floor(Th*mu' / x^64) */
    prod = _mm_clmulepi64_si128 (_mm_cvtsi64_si128 ((int64_t) th),
                                 _mm_cvtsi64_si128 ((int64_t) K_MU), 0x00);
    q = th ^ ((uint64_t) _mm_cvtsi128_si64 (prod) << 1);

    /* T mod P = Tl + (Q*(P - x^64) mod x^64) */
    prod = _mm_clmulepi64_si128 (_mm_cvtsi64_si128 ((int64_t) q),
                                 _mm_cvtsi64_si128 ((int64_t) POLY), 0x00);
    lo = (uint64_t) _mm_cvtsi128_si64 (prod);
    hi = (uint64_t) _mm_extract_epi64 (prod, 1);
    return tl ^ ((hi << 1) | (lo >> 63));
}

/* Runs the register over len bytes, len a multiple of 16 and >= 64. */
__attribute__ ((target ("pclmul,sse4.1"))) static uint64_t
crc64_raw_pclmul (uint64_t reg, const unsigned char *p, size_t len)
{
    const __m128i k512 = _mm_set_epi64x ((int64_t) K_511, (int64_t) K_575);
    const __m128i k128 = _mm_set_epi64x ((int64_t) K_127, (int64_t) K_191);
    __m128i x0, x1, x2, x3, s;

    x0 = _mm_xor_si128 (LOADU (p), _mm_cvtsi64_si128 ((int64_t) reg));
    x1 = LOADU (p + 16);
    x2 = LOADU (p + 32);
    x3 = LOADU (p + 48);
    p += 64;
    len -= 64;
    while (len >= 64) {
        x0 = _mm_xor_si128 (fold (x0, k512), LOADU (p));
        x1 = _mm_xor_si128 (fold (x1, k512), LOADU (p + 16));
        x2 = _mm_xor_si128 (fold (x2, k512), LOADU (p + 32));
        x3 = _mm_xor_si128 (fold (x3, k512), LOADU (p + 48));
        p += 64;
        len -= 64;
    }
    s = _mm_xor_si128 (fold (x0, k128), x1);
    s = _mm_xor_si128 (fold (s, k128), x2);
    s = _mm_xor_si128 (fold (s, k128), x3);
    return fold_tail (s, p, len);
}

/* Runs the register over len bytes, len a multiple of 16 and >= 16: for
 * inputs under 64 bytes (analyze's keys), one fold a block and the
 * reduction, against a table lookup chain a byte or eight. */
__attribute__ ((target ("pclmul,sse4.1"))) static uint64_t
crc64_raw_pclmul_short (uint64_t reg, const unsigned char *p, size_t len)
{
    return fold_tail (_mm_xor_si128 (LOADU (p), _mm_cvtsi64_si128 ((int64_t) reg)), p + 16,
                      len - 16);
}

/* Runs the register over len bytes, 8 <= len < PCLMUL_MIN_LEN and not a
 * multiple of 16 (analyze's keys: an ObjectId's 13 bytes, a number's 10,
 * short strings): as if behind 16 - len % 16 zero bytes, in whole blocks,
 * the register XORed onto the message's first 8 bytes as ever. Zero bytes
 * before a message add nothing to its polynomial, so the blocks give the
 * same register as the table would for the odd bytes, in one fold a block
 * and the reduction instead of a table step of eight lookups per 8 bytes.
 * The first block is put together in two registers from loads inside the
 * message (no copy through memory: a load of bytes just stored in pieces
 * waits for them). Under 8 bytes the register would reach past the
 * message: those stay on the table. */
__attribute__ ((target ("pclmul,sse4.1"))) static uint64_t
crc64_raw_pclmul_odd (uint64_t reg, const unsigned char *p, size_t len)
{
    const __m128i k128 = _mm_set_epi64x ((int64_t) K_127, (int64_t) K_191);
    size_t t = len & 15; /* the first block's message bytes */
    uint64_t m0 = rm_load_le64 (p) ^ reg, lo, hi;
    __m128i s;
    if (t >= 8) {
        /* [16 - t zeros | m[0..t-1]]: the low qword holds m's first
         * 8 - (16 - t) bytes at its top, the high one m[t-8..t-1], of which
         * those below 8 carry the register too. */
        lo = t == 8 ? 0 : m0 << (8 * (16 - t));
        hi = rm_load_le64 (p + t - 8) ^ (reg >> (8 * (t - 8)));
        return fold_tail (_mm_set_epi64x ((int64_t) hi, (int64_t) lo), p + t, len - t);
    }
    /* t < 8 (len > 16): [8 + (8 - t) zeros | m[0..t-1]], and the register's
     * other 8 - t bytes on the next block's first bytes. */
    hi = m0 << (8 * (8 - t));
    s = _mm_set_epi64x ((int64_t) hi, 0);
    s = _mm_xor_si128 (fold (s, k128),
                       _mm_xor_si128 (LOADU (p + t), _mm_cvtsi64_si128 ((int64_t) (reg >> (8 * t)))));
    return fold_tail (s, p + t + 16, len - t - 16);
}

#define VPCLMUL_TARGET "avx2,vpclmulqdq,pclmul,sse4.1"

__attribute__ ((target (VPCLMUL_TARGET))) static inline __m256i
fold256 (__m256i s, __m256i k)
{
    return _mm256_xor_si256 (_mm256_clmulepi64_epi128 (s, k, 0x00),
                             _mm256_clmulepi64_epi128 (s, k, 0x11));
}

#define LOADU256(p) _mm256_loadu_si256 ((const __m256i *) (const void *) (p))

/* As crc64_raw_pclmul with two lanes per register: len a multiple of 16
 * and >= 128. */
__attribute__ ((target (VPCLMUL_TARGET))) static uint64_t
crc64_raw_vpclmul (uint64_t reg, const unsigned char *p, size_t len)
{
    const __m256i k1024 = _mm256_set_epi64x ((int64_t) K_1023, (int64_t) K_1087,
                                             (int64_t) K_1023, (int64_t) K_1087);
    const __m256i k256 = _mm256_set_epi64x ((int64_t) K_255, (int64_t) K_319, (int64_t) K_255,
                                            (int64_t) K_319);
    const __m128i k128 = _mm_set_epi64x ((int64_t) K_127, (int64_t) K_191);
    __m256i y0, y1, y2, y3, y;

    y0 = _mm256_xor_si256 (LOADU256 (p), _mm256_set_epi64x (0, 0, 0, (int64_t) reg));
    y1 = LOADU256 (p + 32);
    y2 = LOADU256 (p + 64);
    y3 = LOADU256 (p + 96);
    p += 128;
    len -= 128;
    while (len >= 128) {
        y0 = _mm256_xor_si256 (fold256 (y0, k1024), LOADU256 (p));
        y1 = _mm256_xor_si256 (fold256 (y1, k1024), LOADU256 (p + 32));
        y2 = _mm256_xor_si256 (fold256 (y2, k1024), LOADU256 (p + 64));
        y3 = _mm256_xor_si256 (fold256 (y3, k1024), LOADU256 (p + 96));
        p += 128;
        len -= 128;
    }
    y = _mm256_xor_si256 (fold256 (y0, k256), y1);
    y = _mm256_xor_si256 (fold256 (y, k256), y2);
    y = _mm256_xor_si256 (fold256 (y, k256), y3);
    while (len >= 32) {
        y = _mm256_xor_si256 (fold256 (y, k256), LOADU256 (p));
        p += 32;
        len -= 32;
    }
    /* The low lane is the earlier 16 bytes: fold it into the high one. */
    return fold_tail (_mm_xor_si128 (fold (_mm256_castsi256_si128 (y), k128),
                                     _mm256_extracti128_si256 (y, 1)),
                      p, len);
}
#endif

uint64_t
rm_crc64_update (uint64_t crc, const void *buf, size_t len)
{
    pthread_once (&init_once, crc64_init);
#ifdef RM_CRC64_HAVE_PCLMUL
    if (len >= VPCLMUL_MIN_LEN && have_vpclmul) {
        const unsigned char *p = buf;
        size_t blocks = len & ~(size_t) 15;
        uint64_t reg = crc64_raw_vpclmul (~crc, p, blocks);
        return ~crc64_raw_table (reg, p + blocks, len - blocks);
    }
#endif
    return rm_crc64_update_clmul (crc, buf, len);
}

uint64_t
rm_crc64_update_clmul (uint64_t crc, const void *buf, size_t len)
{
    pthread_once (&init_once, crc64_init);
#ifdef RM_CRC64_HAVE_PCLMUL
    if (len >= 8 && len < PCLMUL_MIN_LEN && (len & 15) && have_pclmul)
        return ~crc64_raw_pclmul_odd (~crc, buf, len);
    if (len >= PCLMUL_SHORT_MIN_LEN && have_pclmul) {
        const unsigned char *p = buf;
        size_t blocks = len & ~(size_t) 15;
        uint64_t reg = blocks >= PCLMUL_MIN_LEN ? crc64_raw_pclmul (~crc, p, blocks)
                                                : crc64_raw_pclmul_short (~crc, p, blocks);
        return ~crc64_raw_table (reg, p + blocks, len - blocks);
    }
#endif
    return rm_crc64_update_table (crc, buf, len);
}
