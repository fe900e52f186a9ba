/* Unaligned little-endian loads, for the hot loops that read BSON (which
 * is little-endian) eight bytes at a time. */
#ifndef REMODEL_BYTES_H
#define REMODEL_BYTES_H

#include <stdint.h>
#include <string.h>

/* Byte i of p is always bits 8i..8i+7 of the result, whatever the host. */
static inline uint64_t
rm_load_le64 (const void *p)
{
    uint64_t v;
    memcpy (&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64 (v);
#endif
    return v;
}

#endif
