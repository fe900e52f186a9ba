/* A minimal test harness: each test prints "PASS name" or "FAIL name";
 * tests/run.sh counts those lines across every suite. */
#ifndef REMODEL_TEST_H
#define REMODEL_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The fixtures in the repository (tests/fixtures/README.md); the unit
 * tests run from the repository root. */
#define T_FIXTURES "tests/fixtures/"

static int t_fail_checks;
static int t_passed, t_failed;

#define T_CHECK(cond)                                                        \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf (stderr, "  %s:%d: check failed: %s\n", __FILE__,       \
                     __LINE__, #cond);                                       \
            t_fail_checks++;                                                 \
        }                                                                    \
    } while (0)

#define T_CHECK_STR(got, want)                                               \
    do {                                                                     \
        const char *g_ = (got), *w_ = (want);                                \
        if (!g_ || strcmp (g_, w_) != 0) {                                   \
            fprintf (stderr, "  %s:%d: got \"%s\", want \"%s\"\n", __FILE__, \
                     __LINE__, g_ ? g_ : "(null)", w_);                      \
            t_fail_checks++;                                                 \
        }                                                                    \
    } while (0)

#define T_RUN(fn) t_run (#fn, fn)

static void
t_run (const char *name, void (*fn) (void))
{
    int before = t_fail_checks;
    fn ();
    if (t_fail_checks == before) {
        printf ("PASS %s\n", name);
        t_passed++;
    } else {
        printf ("FAIL %s\n", name);
        t_failed++;
    }
    fflush (stdout);
}

static int
t_done (void)
{
    return t_failed ? 1 : 0;
}

/* An array's next key, "0", "1"..., into key (each append its own call:
 * BSON_APPEND_* read their key twice). */
static inline const char *
t_key_next (char *key, size_t cap, int *k)
{
    snprintf (key, cap, "%d", (*k)++);
    return key;
}

/* xorshift64*: random test data from a fixed seed, so failures reproduce. */
static inline uint64_t
t_xorshift (uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C (0x2545F4914F6CDD1D);
}

#endif
