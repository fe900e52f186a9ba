/* The carry-less multiplication core of CRC-64/XZ (crc64.c), inline for
 * callers that hash many short messages (analyze's keys), where a call
 * and a dispatch per message cost about half as much as the CRC. Only on
 * x86-64 with GCC or Clang (RM_CRC64_HAVE_PCLMUL); a function using it
 * carries RM_CRC64_CLMUL_TARGET and runs only if rm_crc64_have_clmul (). */
#ifndef REMODEL_CRC64_CLMUL_H
#define REMODEL_CRC64_CLMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

/* The reflected polynomial: bit i holds the coefficient of x^(63-i) of
 * P(x) - x^64, where P(x) = x^64 + x^62 + x^57 + ... + 1 (ECMA-182, normal
 * form 0x42F0E1EBA9EA3693). */
#define RM_CRC64_POLY UINT64_C(0xC96C5795D7870F42)

/* Whether this CPU has PCLMULQDQ and SSE4.1 (checked once). */
bool rm_crc64_have_clmul (void);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RM_CRC64_HAVE_PCLMUL 1
#include <immintrin.h>

#define RM_CRC64_CLMUL_TARGET "pclmul,sse4.1"

/* Messages of 8 bytes up to this length go to rm_crc64_clmul_short; longer
 * ones to the four-lane loop. */
#define RM_CRC64_SHORT_MAX 63

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
#define RM_CRC64_K_127 UINT64_C(0xDABE95AFC7875F40) /* x^127 mod P */
#define RM_CRC64_K_191 UINT64_C(0xE05DD497CA393AE4) /* x^191 mod P */
#define RM_CRC64_K_MU UINT64_C(0x4E1F23360B94B1EA)  /* floor(x^128 / P) - x^64 */

__attribute__ ((target (RM_CRC64_CLMUL_TARGET))) static inline __m128i
rm_crc64_fold (__m128i s, __m128i k)
{
    /* low qword * low constant, high qword * high constant */
    return _mm_xor_si128 (_mm_clmulepi64_si128 (s, k, 0x00), _mm_clmulepi64_si128 (s, k, 0x11));
}

#define RM_CRC64_LOADU(p) _mm_loadu_si128 ((const __m128i *) (const void *) (p))

/* Folds the 16-byte blocks of p (len a multiple of 16) into s, then
 * reduces s to the CRC register. */
__attribute__ ((target (RM_CRC64_CLMUL_TARGET))) static inline uint64_t
rm_crc64_fold_tail (__m128i s, const unsigned char *p, size_t len)
{
    const __m128i k128 = _mm_set_epi64x ((int64_t) RM_CRC64_K_127, (int64_t) RM_CRC64_K_191);
    __m128i t, prod;
    uint64_t th, tl, q, lo, hi;

    while (len >= 16) {
        s = _mm_xor_si128 (rm_crc64_fold (s, k128), RM_CRC64_LOADU (p));
        p += 16;
        len -= 16;
    }

    /* T = H*(x^127 mod P)*x + L*x^64 */
    t = _mm_xor_si128 (_mm_clmulepi64_si128 (s, _mm_cvtsi64_si128 ((int64_t) RM_CRC64_K_127), 0x00),
                       _mm_srli_si128 (s, 8));
    th = (uint64_t) _mm_cvtsi128_si64 (t);
    tl = (uint64_t) _mm_extract_epi64 (t, 1);

    /* Q = Th + floor(Th*mu' / x^64) */
    prod = _mm_clmulepi64_si128 (_mm_cvtsi64_si128 ((int64_t) th),
                                 _mm_cvtsi64_si128 ((int64_t) RM_CRC64_K_MU), 0x00);
    q = th ^ ((uint64_t) _mm_cvtsi128_si64 (prod) << 1);

    /* T mod P = Tl + (Q*(P - x^64) mod x^64) */
    prod = _mm_clmulepi64_si128 (_mm_cvtsi64_si128 ((int64_t) q),
                                 _mm_cvtsi64_si128 ((int64_t) RM_CRC64_POLY), 0x00);
    lo = (uint64_t) _mm_cvtsi128_si64 (prod);
    hi = (uint64_t) _mm_extract_epi64 (prod, 1);
    return tl ^ ((hi << 1) | (lo >> 63));
}

/* Runs the register over len bytes, 8 <= len <= RM_CRC64_SHORT_MAX
 * (analyze's keys: an ObjectId's 13 bytes, a number's 10, short strings).
 * A message of whole blocks: one fold a block and the reduction. Any
 * other: as if behind 16 - len % 16 zero bytes, in whole blocks, the
 * register XORed onto the message's first 8 bytes as ever. Zero bytes
 * before a message add nothing to its polynomial, so the blocks give the
 * same register as the table would for the odd bytes, in one fold a block
 * and the reduction instead of a table step of eight lookups per 8 bytes.
 * The first block is put together in two registers from loads inside the
 * message (no copy through memory: a load of bytes just stored in pieces
 * waits for them). Under 8 bytes the register would reach past the
 * message: those stay on the table. */
__attribute__ ((target (RM_CRC64_CLMUL_TARGET))) static inline uint64_t
rm_crc64_clmul_short (uint64_t reg, const unsigned char *p, size_t len)
{
    const __m128i k128 = _mm_set_epi64x ((int64_t) RM_CRC64_K_127, (int64_t) RM_CRC64_K_191);
    size_t t = len & 15; /* the first block's message bytes */
    uint64_t m0 = rm_load_le64 (p) ^ reg, lo, hi;
    __m128i s;
    if (!t) {
        s = _mm_xor_si128 (RM_CRC64_LOADU (p), _mm_cvtsi64_si128 ((int64_t) reg));
        return rm_crc64_fold_tail (s, p + 16, len - 16);
    }
    if (t >= 8) {
        /* [16 - t zeros | m[0..t-1]]: the low qword holds m's first
         * 8 - (16 - t) bytes at its top, the high one m[t-8..t-1], of which
         * those below 8 carry the register too. */
        lo = t == 8 ? 0 : m0 << (8 * (16 - t));
        hi = rm_load_le64 (p + t - 8) ^ (reg >> (8 * (t - 8)));
        return rm_crc64_fold_tail (_mm_set_epi64x ((int64_t) hi, (int64_t) lo), p + t, len - t);
    }
    /* t < 8 (len > 16): [8 + (8 - t) zeros | m[0..t-1]], and the register's
     * other 8 - t bytes on the next block's first bytes. */
    hi = m0 << (8 * (8 - t));
    s = _mm_set_epi64x ((int64_t) hi, 0);
    s = _mm_xor_si128 (rm_crc64_fold (s, k128),
                       _mm_xor_si128 (RM_CRC64_LOADU (p + t),
                                      _mm_cvtsi64_si128 ((int64_t) (reg >> (8 * t)))));
    return rm_crc64_fold_tail (s, p + t + 16, len - t - 16);
}
#endif

#endif
