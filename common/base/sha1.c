/* SHA-1 (FIPS 180-1), only for mongodump's long-name hashes: not for
 * anything security-related. */
#include <stdint.h>
#include <string.h>

#include "remodel/sha1.h"

static inline uint32_t
rol32 (uint32_t v, int n)
{
    return (v << n) | (v >> (32 - n));
}

static void
sha1_block (uint32_t h[5], const unsigned char *blk)
{
    uint32_t w[80], a, b, c, d, e, f, k, t;

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t) blk[4 * i] << 24 | (uint32_t) blk[4 * i + 1] << 16 |
               (uint32_t) blk[4 * i + 2] << 8 | (uint32_t) blk[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol32 (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

    a = h[0];
    b = h[1];
    c = h[2];
    d = h[3];
    e = h[4];
    for (int i = 0; i < 80; i++) {
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDC;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6;
        }
        t = rol32 (a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol32 (b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void
rm_sha1 (const void *data, size_t len, unsigned char out[20])
{
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    const unsigned char *p = data;
    unsigned char last[128];
    size_t rest, n_last;
    uint64_t bits = (uint64_t) len * 8;

    for (rest = len; rest >= 64; rest -= 64, p += 64)
        sha1_block (h, p);

    /* Padding: 0x80, zeros, then the bit length big-endian in the last 8
     * bytes of a block; one block if the tail leaves room, else two. */
    memset (last, 0, sizeof last);
    if (rest)
        memcpy (last, p, rest);
    last[rest] = 0x80;
    n_last = rest < 56 ? 64 : 128;
    for (size_t i = 0; i < 8; i++)
        last[n_last - 1 - i] = (unsigned char) (bits >> (8 * i));
    sha1_block (h, last);
    if (n_last == 128)
        sha1_block (h, last + 64);

    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char) (h[i] >> 24);
        out[4 * i + 1] = (unsigned char) (h[i] >> 16);
        out[4 * i + 2] = (unsigned char) (h[i] >> 8);
        out[4 * i + 3] = (unsigned char) h[i];
    }
}
