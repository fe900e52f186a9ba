/* Documents laid out alike: the bytes that place a document's fields.
 *
 * Documents of one collection often start alike: the same keys, in the
 * same order, with values of fixed sizes (numbers, dates, ObjectIds) or of
 * the same lengths. What places a field is its type byte, its key and the
 * NUL after it, and the length of a value that has one; the rest of the
 * value moves nothing. A layout keeps those bytes of one document under a
 * mask (ones where they place a field, zeros over the values), and a
 * later document whose bytes agree with them under the mask up to a
 * field's end has that field, and every one before it, where the first
 * had them: one comparison of sixteen bytes at a time, where a walk pays
 * a key scan and a size per field. Used by the reader's check
 * (bsoncheck.c) and the expressions' held walk (expr_held.c). */
#ifndef REMODEL_BSONLAYOUT_H
#define REMODEL_BSONLAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The first offset below lim where d and bytes differ under mask (lim:
 * none). bytes holds a document's bytes & mask. */
static inline uint32_t
rm_layout_agree (const uint8_t *d, const uint8_t *bytes, const uint8_t *mask, uint32_t lim)
{
    uint32_t i = 0;
#if defined(__x86_64__) && defined(__SSE2__)
#define RM_LAYOUT_DIFF16(at)                                                                         \
    ((unsigned) _mm_movemask_epi8 (_mm_cmpeq_epi8 (                                                   \
         _mm_and_si128 (_mm_loadu_si128 ((const __m128i *) (const void *) (d + (at))),                \
                        _mm_loadu_si128 ((const __m128i *) (const void *) (mask + (at)))),            \
         _mm_loadu_si128 ((const __m128i *) (const void *) (bytes + (at))))) ^ 0xFFFFu)
    unsigned m;
    for (; i + 16 <= lim; i += 16)
        if ((m = RM_LAYOUT_DIFF16 (i)))
            return i + (uint32_t) __builtin_ctz (m);
    /* The rest in the window that ends at lim (what it repeats agreed). */
    if (i < lim && lim >= 16) {
        m = RM_LAYOUT_DIFF16 (lim - 16);
        return m ? lim - 16 + (uint32_t) __builtin_ctz (m) : lim;
    }
#undef RM_LAYOUT_DIFF16
#else
    for (; i + 8 <= lim; i += 8) {
        uint64_t x, m, b;
        memcpy (&x, d + i, 8);
        memcpy (&m, mask + i, 8);
        memcpy (&b, bytes + i, 8);
        if ((x & m) != b)
            break; /* the byte, below */
    }
#endif
    for (; i < lim; i++)
        if ((d[i] & mask[i]) != bytes[i])
            return i;
    return lim;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* rm_layout_agree, 32 bytes at a time, for CPUs with AVX2. */
static __attribute__ ((target ("avx2"), noinline, unused)) uint32_t
rm_layout_agree_avx2 (const uint8_t *d, const uint8_t *bytes, const uint8_t *mask, uint32_t lim)
{
    uint32_t i = 0;
    for (; i + 32 <= lim; i += 32) {
        __m256i x = _mm256_and_si256 (_mm256_loadu_si256 ((const __m256i *) (const void *) (d + i)),
                                      _mm256_loadu_si256 ((const __m256i *) (const void *) (mask + i)));
        __m256i b = _mm256_loadu_si256 ((const __m256i *) (const void *) (bytes + i));
        uint32_t m = (uint32_t) _mm256_movemask_epi8 (_mm256_cmpeq_epi8 (x, b));
        if (m != 0xFFFFFFFFu)
            return i + (uint32_t) __builtin_ctz (~m);
    }
    if (i == lim)
        return lim;
    if (lim >= 32) { /* the window that ends at lim (what it repeats agreed) */
        uint32_t j = lim - 32;
        __m256i x = _mm256_and_si256 (_mm256_loadu_si256 ((const __m256i *) (const void *) (d + j)),
                                      _mm256_loadu_si256 ((const __m256i *) (const void *) (mask + j)));
        __m256i b = _mm256_loadu_si256 ((const __m256i *) (const void *) (bytes + j));
        uint32_t m = (uint32_t) _mm256_movemask_epi8 (_mm256_cmpeq_epi8 (x, b));
        return m != 0xFFFFFFFFu ? j + (uint32_t) __builtin_ctz (~m) : lim;
    }
    return rm_layout_agree (d, bytes, mask, lim);
}
#else
#define rm_layout_agree_avx2 rm_layout_agree
#endif

/* rm_layout_agree on the widest registers the CPU has. */
static inline uint32_t
rm_layout_agree_best (const uint8_t *d, const uint8_t *bytes, const uint8_t *mask, uint32_t lim)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports ("avx2"))
        return rm_layout_agree_avx2 (d, bytes, mask, lim);
#endif
    return rm_layout_agree (d, bytes, mask, lim);
}

/* Marks in mask the bytes that place the field of type t whose type byte
 * is at start, whose value starts at value and which ends at end. */
static inline void
rm_layout_mask (uint8_t *mask, uint8_t t, uint32_t start, uint32_t value, uint32_t end)
{
    memset (mask + start, 0xFF, value - start); /* the type, the key, its NUL */
    switch (t) {
    case 0x02: /* string */
    case 0x03: /* document */
    case 0x04: /* array */
    case 0x05: /* binary: the subtype moves nothing */
    case 0x0C: /* DBPointer: a string, then twelve bytes */
    case 0x0D: /* code */
    case 0x0E: /* symbol */
    case 0x0F: /* code with scope: its whole length first */
        memset (mask + value, 0xFF, 4);
        memset (mask + value + 4, 0, end - value - 4);
        break;
    case 0x0B: /* regex: two C strings, their bytes their size */
        memset (mask + value, 0xFF, end - value);
        break;
    default: /* a size fixed by the type */
        memset (mask + value, 0, end - value);
        break;
    }
}

/* bytes = d & mask over len bytes, eight at a time. */
static inline void
rm_layout_bytes (uint8_t *bytes, const uint8_t *d, const uint8_t *mask, uint32_t len)
{
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x, m;
        memcpy (&x, d + i, 8);
        memcpy (&m, mask + i, 8);
        x &= m;
        memcpy (bytes + i, &x, 8);
    }
    for (; i < len; i++)
        bytes[i] = d[i] & mask[i];
}

/* After a document: whether the layout of n fields that placed k of
 * them stays (at least half), else when to make another. One that served
 * many documents is made again at once (the documents changed); one that
 * served few, after waits that double (its documents differ early, and
 * each layout made from one costs a walk and serves none), up to 4,096
 * documents. */
#define RM_LAYOUT_SERVED 64
static inline bool
rm_layout_keep (uint32_t k, uint32_t n, uint32_t *served, uint32_t *wait, uint32_t *backoff)
{
    if (2 * k >= n) {
        if (++*served >= RM_LAYOUT_SERVED)
            *backoff = 0;
        return true;
    }
    if (*served >= RM_LAYOUT_SERVED) {
        *wait = 0;
        *backoff = 16;
    } else {
        *wait = *backoff;
        *backoff = *backoff ? (*backoff < 4096 ? 2 * *backoff : 4096) : 16;
    }
    *served = 0;
    return false;
}

/* The number of fields (ends ascending, n of them) that end at or before
 * agree. */
static inline uint32_t
rm_layout_count (const uint32_t *ends, uint32_t n, uint32_t agree)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (ends[mid] <= agree)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
