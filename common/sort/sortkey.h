/* Big-endian integers inside sort keys, so memcmp orders them by value,
 * and the byte order the external sorts use. Shared by the sort-merge
 * joins. */
#ifndef REMODEL_SORTKEY_H
#define REMODEL_SORTKEY_H

#include <stdint.h>
#include <string.h>

static inline void
rm_put_be64 (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (56 - 8 * i));
}

static inline uint64_t
rm_get_be64 (const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline void
rm_put_be32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (24 - 8 * i));
}

static inline uint32_t
rm_get_be32 (const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* memcmp, then the shorter first: the rm_sorter default order. */
static inline int
rm_keycmp (const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    int c = memcmp (a, b, al < bl ? al : bl);
    return c ? c : (al < bl ? -1 : al > bl);
}

#endif
