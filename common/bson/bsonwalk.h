/* Walking the elements of a BSON document (or array) over its raw bytes.
 *
 * libbson's iterator decodes each value it passes and is called once per
 * element; the per-document steps (field edits, $lookup paths, unbucketize)
 * only need where each element's key and value lie, so they walk here,
 * inline. Every size is bounded by the container, so bad bytes give -1
 * rather than a read out of bounds, but nested values are not checked:
 * documents are checked once when read (rm_bson_check). */
#ifndef REMODEL_BSONWALK_H
#define REMODEL_BSONWALK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <bson/bson.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct {
    const uint8_t *data; /* the container, length prefix included */
    uint32_t len;
    uint32_t pos;        /* the next element's type byte */
} rm_walk_t;

typedef struct {
    uint8_t type;
    uint32_t start;      /* offsets in the container: the type byte, */
    uint32_t value;      /* the value, */
    uint32_t end;        /* and just past it */
} rm_elem_t;

static inline uint32_t
rm_walk_le32 (const uint8_t *p)
{
    uint32_t v;
    memcpy (&v, p, 4);
    return BSON_UINT32_FROM_LE (v);
}

/* Starts a walk of the container data[0..len): false unless its length
 * prefix says len and it ends with its terminating NUL. */
static inline bool
rm_walk_init (rm_walk_t *w, const uint8_t *data, uint32_t len)
{
    w->data = data;
    w->len = len;
    w->pos = 4;
    return len >= 5 && rm_walk_le32 (data) == len && data[len - 1] == 0;
}

/* The size of each type's value where it is fixed, plus one (0: not
 * fixed, or no type): a load, where the switch below is an indirect jump
 * that a document mixing numbers and strings mispredicts at each field. */
static const uint8_t rm_walk_fixed[256] = {
    [BSON_TYPE_UNDEFINED] = 1, [BSON_TYPE_NULL] = 1,      [BSON_TYPE_MINKEY] = 1, [BSON_TYPE_MAXKEY] = 1,
    [BSON_TYPE_BOOL] = 2,      [BSON_TYPE_INT32] = 5,     [BSON_TYPE_DOUBLE] = 9, [BSON_TYPE_DATE_TIME] = 9,
    [BSON_TYPE_TIMESTAMP] = 9, [BSON_TYPE_INT64] = 9,     [BSON_TYPE_OID] = 13,   [BSON_TYPE_DECIMAL128] = 17,
};

/* rm_walk_value_size's other types: out of line, so that the common ones
 * stay small enough to be inlined in every walk. */
static __attribute__ ((noinline, unused)) bool
rm_walk_value_size_rest (uint8_t t, const uint8_t *v, uint32_t room, uint32_t *size)
{
    const uint8_t *nul;
    uint64_t n;

    switch (t) {
    case BSON_TYPE_UNDEFINED: case BSON_TYPE_NULL: case BSON_TYPE_MINKEY: case BSON_TYPE_MAXKEY:
        n = 0;
        break;
    case BSON_TYPE_BOOL:
        n = 1;
        break;
    case BSON_TYPE_INT32:
        n = 4;
        break;
    case BSON_TYPE_DOUBLE: case BSON_TYPE_DATE_TIME: case BSON_TYPE_TIMESTAMP: case BSON_TYPE_INT64:
        n = 8;
        break;
    case BSON_TYPE_OID:
        n = 12;
        break;
    case BSON_TYPE_DECIMAL128:
        n = 16;
        break;
    case BSON_TYPE_UTF8: case BSON_TYPE_CODE: case BSON_TYPE_SYMBOL:
        n = room < 4 ? (uint64_t) room + 1 : 4 + (uint64_t) rm_walk_le32 (v);
        break;
    case BSON_TYPE_BINARY:
        n = room < 4 ? (uint64_t) room + 1 : 5 + (uint64_t) rm_walk_le32 (v);
        break;
    case BSON_TYPE_DBPOINTER:
        n = room < 4 ? (uint64_t) room + 1 : 16 + (uint64_t) rm_walk_le32 (v);
        break;
    case BSON_TYPE_DOCUMENT: case BSON_TYPE_ARRAY: case BSON_TYPE_CODEWSCOPE:
        n = room < 4 ? (uint64_t) room + 1 : rm_walk_le32 (v);
        break;
    case BSON_TYPE_REGEX: /* two C strings */
        nul = memchr (v, 0, room);
        if (!nul)
            return false;
        n = (uint64_t) (nul + 1 - v);
        nul = memchr (nul + 1, 0, room - (uint32_t) n);
        if (!nul)
            return false;
        n = (uint64_t) (nul + 1 - v);
        break;
    default:
        return false;
    }
    if (n > room)
        return false;
    *size = (uint32_t) n;
    return true;
}

/* The size of a value of type t at v with room bytes left before the
 * container's terminator; false if it does not fit or t is no type. */
static inline bool
rm_walk_value_size (uint8_t t, const uint8_t *v, uint32_t room, uint32_t *size)
{
    uint64_t n;

    if (rm_walk_fixed[t])
        n = rm_walk_fixed[t] - 1u;
    else if (t == BSON_TYPE_UTF8 && room >= 4)
        n = 4 + (uint64_t) rm_walk_le32 (v);
    else
        return rm_walk_value_size_rest (t, v, room, size);
    if (n > room)
        return false;
    *size = (uint32_t) n;
    return true;
}

/* A key's tag: its first eight bytes as a number (fewer, zero-padded,
 * for a shorter key). With the length it tells apart in one comparison
 * nearly all keys of a document, where keys of one length sharing a
 * prefix ("l_shipdate", "l_shipmode": a TPC-H import's) took a byte loop
 * each. One eight-byte read where lim leaves room (a field's key within
 * its document), else byte by byte. */
static inline uint64_t
rm_walk_key_tag (const uint8_t *k, uint32_t klen, const uint8_t *lim)
{
    uint64_t t = 0;
    if (klen >= 8 || (size_t) (lim - k) >= 8) {
        memcpy (&t, k, 8);
        t = BSON_UINT64_FROM_LE (t);
        return klen >= 8 ? t : t & ((UINT64_C (1) << (8 * klen)) - 1);
    }
    for (uint32_t i = 0; i < klen; i++)
        t |= (uint64_t) k[i] << (8 * i);
    return t;
}

/* rm_walk_next and rm_walk_next_tag: tag, when not NULL, gets the key's
 * tag, from the bytes the key's scan loaded already where it can. */
static inline __attribute__ ((always_inline)) int
rm_walk_step (rm_walk_t *w, rm_elem_t *e, uint64_t *tag)
{
    const uint8_t *d = w->data, *key, *nul;
    uint32_t last = w->len - 1, size; /* the terminator */

    if (w->pos >= last)
        return 0;
    key = nul = d + w->pos + 1;
#if defined(__x86_64__) && defined(__SSE2__)
    /* Keys are short: most end in the first sixteen bytes ("l_extendedprice"
     * in one step), never read past the container's terminating NUL. */
    if (nul + 16 <= d + last) {
        __m128i x = _mm_loadu_si128 ((const __m128i *) (const void *) nul);
        int m = _mm_movemask_epi8 (_mm_cmpeq_epi8 (x, _mm_setzero_si128 ()));
        if (m) {
            unsigned kl = (unsigned) __builtin_ctz ((unsigned) m);
            if (tag) {
                uint64_t lo = (uint64_t) _mm_cvtsi128_si64 (x);
                *tag = kl >= 8 ? lo : lo & ((UINT64_C (1) << (8 * kl)) - 1);
            }
            nul += kl;
            goto found;
        }
        nul += 16;
    }
    while (nul + 16 <= d + last) {
        int m = _mm_movemask_epi8 (
            _mm_cmpeq_epi8 (_mm_loadu_si128 ((const __m128i *) (const void *) nul), _mm_setzero_si128 ()));
        if (m) {
            nul += __builtin_ctz ((unsigned) m);
            goto scanned;
        }
        nul += 16;
    }
#endif
    /* Eight bytes at a time, then a plain loop, which stops at the
     * container's terminating NUL at the latest (rm_walk_init saw it). */
    while (nul + 8 <= d + last) {
        uint64_t x;
        memcpy (&x, nul, 8);
        x = BSON_UINT64_FROM_LE (x);
        uint64_t z = (x - UINT64_C (0x0101010101010101)) & ~x & UINT64_C (0x8080808080808080);
        if (z) {
            nul += __builtin_ctzll (z) >> 3;
            goto scanned;
        }
        nul += 8;
    }
    for (; *nul; nul++)
        ;
scanned:
    if (tag)
        *tag = rm_walk_key_tag (key, (uint32_t) (nul - key), d + w->len);
found: __attribute__ ((unused)); /* jumped to by the SSE2 scan alone */
    if (nul == d + last)
        return -1;
    e->type = d[w->pos];
    e->start = w->pos;
    e->value = (uint32_t) (nul + 1 - d);
    if (!rm_walk_value_size (e->type, nul + 1, last - e->value, &size))
        return -1;
    e->end = e->value + size;
    w->pos = e->end;
    return 1;
}

/* The next element: 1, 0 at the end, -1 on bad bytes. Always inline, as
 * rm_walk_step: a call per element was a fifth of a walk. */
static inline __attribute__ ((always_inline)) int
rm_walk_next (rm_walk_t *w, rm_elem_t *e)
{
    return rm_walk_step (w, e, NULL);
}

/* rm_walk_next, with the key's tag (rm_walk_key_tag) in *tag. */
static inline __attribute__ ((always_inline)) int
rm_walk_next_tag (rm_walk_t *w, rm_elem_t *e, uint64_t *tag)
{
    return rm_walk_step (w, e, tag);
}

static inline const char *
rm_elem_key (const rm_walk_t *w, const rm_elem_t *e)
{
    return (const char *) w->data + e->start + 1;
}

static inline uint32_t
rm_elem_key_len (const rm_elem_t *e)
{
    return e->value - e->start - 2;
}

/* Whether n bytes at a and b are the same: a loop, not a call, for keys
 * (short, and most differ early). */
static inline bool
rm_walk_same (const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Whether the element's key is name (name_len bytes). */
static inline bool
rm_elem_key_is (const rm_walk_t *w, const rm_elem_t *e, const char *name, size_t name_len)
{
    return rm_elem_key_len (e) == name_len && rm_walk_same (rm_elem_key (w, e), name, name_len);
}

/* A walk of the value of a document or array element; false if it is
 * neither, or its bytes are bad. */
static inline bool
rm_walk_into (rm_walk_t *child, const rm_walk_t *w, const rm_elem_t *e)
{
    if (e->type != BSON_TYPE_DOCUMENT && e->type != BSON_TYPE_ARRAY)
        return false;
    return rm_walk_init (child, w->data + e->value, e->end - e->value);
}

#endif
