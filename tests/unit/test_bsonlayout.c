/* The masked comparison of documents laid out alike (common/bson/
 * bsonlayout.h): every version (sixteen bytes at a time, thirty-two where
 * the CPU has AVX2, the one that picks) against a byte at a time, over
 * every length to 300 bytes and every place of a first difference, in a
 * masked byte or under the mask; and the count of fields ending where
 * they agree. */
#include <stdio.h>
#include <string.h>

#include "bsonlayout.h"
#include "test.h"

static uint64_t state = 88172645463325252u;

static unsigned
rnd (unsigned n)
{
    return (unsigned) (t_xorshift (&state) % n);
}

static uint32_t
agree_bytes (const uint8_t *d, const uint8_t *bytes, const uint8_t *mask, uint32_t lim)
{
    for (uint32_t i = 0; i < lim; i++)
        if ((d[i] & mask[i]) != bytes[i])
            return i;
    return lim;
}

static void
test_agree_every_length (void)
{
    enum { MAX = 300 };
    static uint8_t d[MAX], bytes[MAX], mask[MAX];
    long cases = 0, wrong = 0;

    for (uint32_t lim = 0; lim <= MAX; lim++)
        for (uint32_t at = 0; at <= lim; at++) {
            for (uint32_t i = 0; i < MAX; i++) {
                d[i] = (uint8_t) rnd (256);
                mask[i] = rnd (3) ? 0xFF : 0;
                bytes[i] = d[i] & mask[i];
            }
            if (at < lim) {
                /* the first difference at at: a masked byte, or (when at
                 * is under the mask) none there but one later */
                if (mask[at])
                    bytes[at] ^= (uint8_t) (1 + rnd (255));
                else
                    d[at] ^= 0x5A; /* moves nothing */
            }
            /* past lim anything: not looked at */
            for (uint32_t i = lim; i < MAX; i++)
                bytes[i] = (uint8_t) ~(d[i] & mask[i]);
            uint32_t want = agree_bytes (d, bytes, mask, lim);
            uint32_t a = rm_layout_agree (d, bytes, mask, lim);
            uint32_t b = rm_layout_agree_avx2 (d, bytes, mask, lim);
            uint32_t c = rm_layout_agree_best (d, bytes, mask, lim);
            cases++;
            if (a != want || b != want || c != want) {
                if (wrong++ < 5)
                    fprintf (stderr, "  lim %u, difference at %u: %u %u %u, want %u\n", lim, at, a, b, c,
                             want);
            }
        }
    printf ("  %ld comparisons\n", cases);
    T_CHECK (wrong == 0);
    T_CHECK (cases > 45000);
}

static void
test_count (void)
{
    static const uint32_t ends[] = {16, 25, 25, 40, 41, 100};
    static const struct {
        uint32_t agree, want;
    } rows[] = {{0, 0}, {15, 0}, {16, 1}, {24, 1}, {25, 3}, {39, 3}, {40, 4}, {41, 5}, {99, 5}, {100, 6}, {500, 6}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint32_t got = rm_layout_count (ends, 6, rows[i].agree);
        if (got != rows[i].want)
            fprintf (stderr, "  agree %u: %u fields, want %u\n", rows[i].agree, got, rows[i].want);
        T_CHECK (got == rows[i].want);
    }
    T_CHECK (rm_layout_count (ends, 0, 100) == 0);
}

int
main (void)
{
    T_RUN (test_agree_every_length);
    T_RUN (test_count);
    return t_done ();
}
