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
#include "crc64_clmul.h"
#include "remodel/crc64.h"

/* Inputs from this length on go to the four-lane loop (shorter ones of 8
 * bytes or more to rm_crc64_clmul_short), from VPCLMUL_MIN_LEN on to the
 * eight-lane one. */
#define PCLMUL_MIN_LEN (RM_CRC64_SHORT_MAX + 1)
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
            c = (c & 1) ? (c >> 1) ^ RM_CRC64_POLY : c >> 1;
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
/* The folding and its constants: crc64_clmul.h. Those of the four- and
 * eight-lane loops below: */
#define K_511 UINT64_C(0x081F6054A7842DF4) /* x^511 mod P */
#define K_575 UINT64_C(0x6AE3EFBB9DD441F3) /* x^575 mod P */
#define K_255 UINT64_C(0x3BE653A30FE1AF51)  /* x^255 mod P */
#define K_319 UINT64_C(0x60095B008A9EFA44)  /* x^319 mod P */
#define K_1023 UINT64_C(0xD7D86B2AF73DE740) /* x^1023 mod P */
#define K_1087 UINT64_C(0x8757D71D4FCC1000) /* x^1087 mod P */

/* Runs the register over len bytes, len a multiple of 16 and >= 64. */
__attribute__ ((target (RM_CRC64_CLMUL_TARGET))) static uint64_t
crc64_raw_pclmul (uint64_t reg, const unsigned char *p, size_t len)
{
    const __m128i k512 = _mm_set_epi64x ((int64_t) K_511, (int64_t) K_575);
    const __m128i k128 = _mm_set_epi64x ((int64_t) RM_CRC64_K_127, (int64_t) RM_CRC64_K_191);
    __m128i x0, x1, x2, x3, s;

    x0 = _mm_xor_si128 (RM_CRC64_LOADU (p), _mm_cvtsi64_si128 ((int64_t) reg));
    x1 = RM_CRC64_LOADU (p + 16);
    x2 = RM_CRC64_LOADU (p + 32);
    x3 = RM_CRC64_LOADU (p + 48);
    p += 64;
    len -= 64;
    while (len >= 64) {
        x0 = _mm_xor_si128 (rm_crc64_fold (x0, k512), RM_CRC64_LOADU (p));
        x1 = _mm_xor_si128 (rm_crc64_fold (x1, k512), RM_CRC64_LOADU (p + 16));
        x2 = _mm_xor_si128 (rm_crc64_fold (x2, k512), RM_CRC64_LOADU (p + 32));
        x3 = _mm_xor_si128 (rm_crc64_fold (x3, k512), RM_CRC64_LOADU (p + 48));
        p += 64;
        len -= 64;
    }
    s = _mm_xor_si128 (rm_crc64_fold (x0, k128), x1);
    s = _mm_xor_si128 (rm_crc64_fold (s, k128), x2);
    s = _mm_xor_si128 (rm_crc64_fold (s, k128), x3);
    return rm_crc64_fold_tail (s, p, len);
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
    const __m128i k128 = _mm_set_epi64x ((int64_t) RM_CRC64_K_127, (int64_t) RM_CRC64_K_191);
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
    /* The low lane is the earlier 16 bytes: rm_crc64_fold it into the high one. */
    return rm_crc64_fold_tail (_mm_xor_si128 (rm_crc64_fold (_mm256_castsi256_si128 (y), k128),
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
    if (len >= 8 && len <= RM_CRC64_SHORT_MAX && have_pclmul)
        return ~rm_crc64_clmul_short (~crc, buf, len);
    if (len >= PCLMUL_MIN_LEN && have_pclmul) {
        const unsigned char *p = buf;
        size_t blocks = len & ~(size_t) 15;
        return ~crc64_raw_table (crc64_raw_pclmul (~crc, p, blocks), p + blocks, len - blocks);
    }
#endif
    return rm_crc64_update_table (crc, buf, len);
}

bool
rm_crc64_have_clmul (void)
{
    pthread_once (&init_once, crc64_init);
#ifdef RM_CRC64_HAVE_PCLMUL
    return have_pclmul;
#else
    return false;
#endif
}
