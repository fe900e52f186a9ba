/*
 * rng.c: the only source of randomness. splitmix64 turns (seed, stream name)
 * into a state for xoshiro256**, which is fast, has a 2^256 period and gives
 * the same sequence on every platform. rand() is avoided: its sequence
 * differs between C libraries, which would break byte-identical output.
 */
#include "gen.h"

static uint64_t
splitmix64 (uint64_t *state)
{
    uint64_t z = (*state += UINT64_C (0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C (0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C (0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t
rotl (uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* Stateless hash of one integer: lets a generator derive a per-item property
 * (is this person deleted? is this part common?) without consuming PRNG state,
 * so other generators can recompute it. */
uint64_t
gen_mix64 (uint64_t x)
{
    return splitmix64 (&x);
}

/* FNV-1a over the string, then mixed with the seed. */
uint64_t
gen_hash_str (uint64_t seed, const char *str)
{
    uint64_t h = UINT64_C (0xcbf29ce484222325);

    for (const unsigned char *p = (const unsigned char *) str; *p; p++) {
        h ^= *p;
        h *= UINT64_C (0x100000001b3);
    }
    return gen_mix64 (h ^ gen_mix64 (seed));
}

void
gen_rng_init (gen_rng_t *rng, uint64_t seed, const char *stream)
{
    uint64_t sm = gen_hash_str (seed, stream);

    for (int i = 0; i < 4; i++) {
        rng->s[i] = splitmix64 (&sm);
    }
    /* xoshiro must not start from all zeros; splitmix64 practically never
     * yields that, but the guard costs nothing. */
    if ((rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3]) == 0) {
        rng->s[0] = 1;
    }
}

uint64_t
gen_rng_next (gen_rng_t *rng)
{
    uint64_t *s = rng->s;
    const uint64_t result = rotl (s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl (s[3], 45);
    return result;
}

/* Uniform in [0, n), n > 0. Lemire's multiply-and-reject: no modulo bias and
 * usually no division. */
uint32_t
gen_rng_below (gen_rng_t *rng, uint32_t n)
{
    uint64_t m = (gen_rng_next (rng) >> 32) * (uint64_t) n;
    uint32_t low = (uint32_t) m;

    if (low < n) {
        const uint32_t threshold = (uint32_t) -n % n;

        while (low < threshold) {
            m = (gen_rng_next (rng) >> 32) * (uint64_t) n;
            low = (uint32_t) m;
        }
    }
    return (uint32_t) (m >> 32);
}

/* Uniform in [0, n), n > 0, for 64-bit ranges (weighted picks). */
uint64_t
gen_rng_below64 (gen_rng_t *rng, uint64_t n)
{
    const uint64_t threshold = -n % n;
    uint64_t x;

    do {
        x = gen_rng_next (rng);
    } while (x < threshold);
    return x % n;
}

/* Uniform in [lo, hi], both inclusive. */
int32_t
gen_rng_between (gen_rng_t *rng, int32_t lo, int32_t hi)
{
    return (int32_t) ((int64_t) lo + gen_rng_below (rng, (uint32_t) ((int64_t) hi - lo + 1)));
}

/* True with the given probability in percent. */
bool
gen_rng_percent (gen_rng_t *rng, uint32_t percent)
{
    return gen_rng_below (rng, 100) < percent;
}
