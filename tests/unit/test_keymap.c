/* analyze's key tables (analyze_int.h, analyze_keys.c), doubled in place:
 * after every doubling each key added so far is found with its count and
 * no other key is, whatever the clusters were: keys made to share homes
 * at the table's end (a cluster wrapping around to slot 0), keys that
 * stay in the lower half and keys that move up, and random ones. */
#include "analyze_int.h"
#include "test.h"

#define PHI UINT64_C (0x9E3779B97F4A7C15)

/* The key whose home is h & (cap - 1) at every cap: the inverse of the
 * table's multiplier times h. */
static uint64_t
key_at (uint64_t h)
{
    uint64_t inv = PHI;
    for (int i = 0; i < 6; i++) /* Newton's step: twice the correct bits each */
        inv *= 2 - PHI * inv;
    return h * inv;
}

/* Adds keys[i] (count i + 1) one by one; after each add that doubled the
 * table, and at the end, every key so far is looked up. */
static void
add_and_check (const uint64_t *keys, size_t n)
{
    rm_keymap_t m = {0};
    size_t grown = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t grew = rm_keymap_add (&m, keys[i], i + 1);
        bytes += grew;
        if (!grew && i + 1 < n)
            continue;
        grown++;
        T_CHECK (bytes == RM_KEYMAP_BYTES (&m));
        T_CHECK (m.n == i + 1);
        /* Large tables are mappings of their own (doubled by mremap). */
        T_CHECK (m.mapped == (RM_KEYMAP_BYTES (&m) >= RM_KEYMAP_MAPPED_MIN));
        for (size_t k = 0; k <= i; k++)
            if (rm_keymap_get (&m, keys[k]) != k + 1) {
                fprintf (stderr, "  key %zu of %zu lost at cap %zu\n", k, i + 1, m.cap);
                T_CHECK (0);
                break;
            }
        T_CHECK (rm_keymap_get (&m, key_at (UINT64_C (0x5555555555555555))) == 0);
    }
    T_CHECK (grown > 2);
    rm_keymap_destroy (&m);
}

/* Homes crowded into the table's last slots, so that every doubling
 * finds a cluster wrapping from the end into slot 0 (taken out and put
 * back last), with keys whose next bit sends them up and others whose
 * next bit keeps them below. */
static void
test_wrapping_clusters (void)
{
    static uint64_t keys[6000];
    uint64_t rng = 7;
    for (size_t i = 0; i < 6000; i++) {
        /* Low bits all ones (the last slot at any cap), or near the end
         * of a small table, the high bits random. */
        uint64_t low = i % 3 == 0 ? UINT64_C (0xFFFFFFFF) : (i % 3 == 1 ? 0x3F - i % 5 : 0x7FF - i % 9);
        keys[i] = key_at ((t_xorshift (&rng) << 32) | low);
    }
    add_and_check (keys, 6000);
}

/* Keys in runs of the same home with the bit above alternating: half of
 * each cluster moves up at a doubling, half stays. */
static void
test_split_clusters (void)
{
    static uint64_t keys[5000];
    uint64_t rng = 11;
    for (size_t i = 0; i < 5000; i++)
        keys[i] = key_at ((t_xorshift (&rng) & ~UINT64_C (0xFFFF)) | (i % 7) * 97 | (i & 1) << 12);
    add_and_check (keys, 5000);
}

static void
test_random_keys (void)
{
    static uint64_t keys[200000];
    uint64_t rng = 3;
    for (size_t i = 0; i < 200000; i++)
        keys[i] = t_xorshift (&rng) | 1;
    add_and_check (keys, 200000);
}

int
main (void)
{
    T_RUN (test_wrapping_clusters);
    T_RUN (test_split_clusters);
    T_RUN (test_random_keys);
    return t_done ();
}
