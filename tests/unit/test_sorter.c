/* The external sorter gives exactly what a stable in-memory sort gives, at
 * every budget (all in memory, a few runs, hundreds of runs, one record per
 * run with multi-pass merges), with custom comparators, empty and huge
 * records; errors name the path, and no spill file outlives the sorter. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/sorter.h"
#include "remodel/tmppath.h"
#include "test.h"

typedef struct {
    const uint8_t *key, *val;
    size_t klen, vlen;
    size_t seq; /* insertion order: the reference's tie-break */
} rec_t;

static uint64_t rng_state;

static uint64_t
rng (void)
{
    /* xorshift64*: seeded, so a failure is the same on every run */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static int
bytes_cmp (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp (a, b, n) : 0;
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

/* The custom comparator: reverse order, counting its calls through ctx. */
static int
reverse_cmp (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, void *ctx)
{
    ++*(uint64_t *) ctx;
    return -bytes_cmp (a, alen, b, blen);
}

static bool ref_reverse;

static int
ref_cmp (const void *x, const void *y)
{
    const rec_t *a = x, *b = y;
    int c = bytes_cmp (a->key, a->klen, b->key, b->klen);
    if (ref_reverse)
        c = -c;
    if (c)
        return c;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* n records; keys of 0..40 bytes, three in four drawn from a pool of 300
 * over a 4-letter alphabet with 0x00 and 0xff (many duplicates, shared
 * prefixes longer than 8 bytes, keys that are prefixes of others), the rest
 * random; each value starts with the record's index. */
static rec_t *
make_records (size_t n, uint64_t seed, uint8_t **storage)
{
    static const uint8_t alphabet[4] = {0x00, 0x01, 'a', 0xff};
    enum { POOL = 300, MAXK = 40, MAXV = 8 + 16 };
    uint8_t pool[POOL][MAXK];
    size_t pool_len[POOL];
    rec_t *r = malloc (n * sizeof *r);
    uint8_t *p = malloc (n * (MAXK + MAXV));

    rng_state = seed;
    for (size_t i = 0; i < POOL; i++) {
        pool_len[i] = rng () % (MAXK + 1);
        for (size_t j = 0; j < pool_len[i]; j++)
            pool[i][j] = alphabet[rng () % 4];
    }
    *storage = p;
    for (size_t i = 0; i < n; i++) {
        uint8_t *k = p, *v = p + MAXK;
        uint64_t x = i;
        if (rng () % 4) {
            size_t which = rng () % POOL;
            r[i].klen = pool_len[which];
            memcpy (k, pool[which], r[i].klen);
        } else {
            r[i].klen = rng () % (MAXK + 1);
            for (size_t j = 0; j < r[i].klen; j++)
                k[j] = (uint8_t) rng ();
        }
        memcpy (v, &x, 8);
        r[i].vlen = 8 + rng () % 17;
        for (size_t j = 8; j < r[i].vlen; j++)
            v[j] = (uint8_t) rng ();
        r[i].key = k;
        r[i].val = v;
        r[i].seq = i;
        p += MAXK + MAXV;
    }
    return r;
}

static char *
make_dir (void)
{
    char tmpl[] = "/tmp/test_sorter.XXXXXX";
    char *d = mkdtemp (tmpl);
    return d ? strdup (d) : NULL;
}

static int
dir_entries (const char *path)
{
    DIR *d = opendir (path);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir (d)))
        if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
            n++;
    closedir (d);
    return n;
}

static bool
add_all (rm_sorter_t *s, const rec_t *r, size_t n, bson_error_t *err)
{
    for (size_t i = 0; i < n; i++) /* empty keys and values come as NULL */
        if (!rm_sorter_add (s, r[i].klen ? r[i].key : NULL, r[i].klen,
                            r[i].vlen ? r[i].val : NULL, r[i].vlen, err))
            return false;
    return true;
}

/* Reads the sorter to the end and compares with want[0..n) record by record. */
static void
check_output (rm_sorter_t *s, const rec_t *want, size_t n)
{
    const uint8_t *k, *v;
    size_t kl, vl, i = 0, bad = 0;
    bson_error_t err;
    int rc;

    while ((rc = rm_sorter_next (s, &k, &kl, &v, &vl, &err)) == 1) {
        if (i >= n || kl != want[i].klen || vl != want[i].vlen ||
            (kl && memcmp (k, want[i].key, kl) != 0) || (vl && memcmp (v, want[i].val, vl) != 0)) {
            if (!bad)
                fprintf (stderr, "  first difference at output record %zu\n", i);
            bad++;
        }
        i++;
    }
    if (rc < 0)
        fprintf (stderr, "  next: %s\n", err.message);
    T_CHECK (rc == 0);
    T_CHECK (i == n);
    T_CHECK (bad == 0);
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 0); /* the end stays the end */
}

/* Sorts r[0..n) with the sorter and checks it against qsort on (key,
 * insertion order); the tmpdir is empty afterwards. Returns the runs spilled. */
static size_t
sort_case (const rec_t *r, size_t n, size_t budget, bool reverse)
{
    uint64_t calls = 0;
    char *dir = make_dir ();
    rm_sorter_t *s = rm_sorter_new (budget, dir, reverse ? reverse_cmp : NULL, &calls);
    rec_t *want = malloc ((n ? n : 1) * sizeof *want);
    bson_error_t err;
    size_t runs;
    bool ok;

    T_CHECK (dir != NULL);
    ok = add_all (s, r, n, &err) && rm_sorter_finish (s, &err);
    if (!ok)
        fprintf (stderr, "  budget %zu: %s\n", budget, err.message);
    T_CHECK (ok);
    if (n)
        memcpy (want, r, n * sizeof *want);
    ref_reverse = reverse;
    qsort (want, n, sizeof *want, ref_cmp);
    check_output (s, want, n);
    T_CHECK (rm_sorter_count (s) == n);
    runs = rm_sorter_spilled_runs (s);
    T_CHECK ((runs > 0) == (rm_sorter_spilled_bytes (s) > 0));
    if (reverse && n > 1)
        T_CHECK (calls > 0);
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);
    rm_rmtree (dir); /* empty when the checks passed */
    free (dir);
    free (want);
    return runs;
}

#define N_RANDOM 20000

static void
test_random_in_memory (void)
{
    uint8_t *storage;
    rec_t *r = make_records (N_RANDOM, 1, &storage);
    T_CHECK (sort_case (r, N_RANDOM, SIZE_MAX, false) == 0);
    T_CHECK (sort_case (r, N_RANDOM, 64 << 20, false) == 0);
    free (r);
    free (storage);
}

static void
test_random_64k (void)
{
    uint8_t *storage;
    rec_t *r = make_records (N_RANDOM, 2, &storage);
    size_t runs = sort_case (r, N_RANDOM, 64 << 10, false);
    T_CHECK (runs >= 10); /* ~1 MiB of records and index */
    T_CHECK (runs <= 64);
    free (r);
    free (storage);
}

static void
test_random_4k (void)
{
    uint8_t *storage;
    rec_t *r = make_records (N_RANDOM, 3, &storage);
    T_CHECK (sort_case (r, N_RANDOM, 4 << 10, false) > 64); /* merged in several passes */
    free (r);
    free (storage);
}

static void
test_random_1_byte (void)
{
    enum { N = 1500 };
    uint8_t *storage;
    rec_t *r = make_records (N, 4, &storage);
    T_CHECK (sort_case (r, N, 1, false) == N); /* one record per run */
    T_CHECK (sort_case (r, N, 0, false) == N);
    free (r);
    free (storage);
}

static void
test_custom_comparator (void)
{
    uint8_t *storage;
    rec_t *r = make_records (N_RANDOM, 5, &storage);
    T_CHECK (sort_case (r, N_RANDOM, SIZE_MAX, true) == 0);
    T_CHECK (sort_case (r, N_RANDOM, 4 << 10, true) > 64);
    T_CHECK (sort_case (r, 300, 1, true) == 300);
    free (r);
    free (storage);
}

/* A comparator with an ordered part, as rm_sorter_set_ordered describes:
 * key[0] is the length of the part after it; [0, 1 + key[0]) orders as
 * memcmp then shorter first, the rest in reverse. */
static size_t
lead_len (const uint8_t *key, size_t klen, void *ctx)
{
    (void) ctx;
    return klen ? 1 + (size_t) key[0] : 0;
}

static int
lead_cmp (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, void *ctx)
{
    size_t pa = lead_len (a, alen, ctx), pb = lead_len (b, blen, ctx);
    int c = bytes_cmp (a, pa, b, pb);
    ++*(uint64_t *) ctx;
    return c ? c : -bytes_cmp (a + pa, alen - pa, b + pb, blen - pb);
}

static int
lead_ref_cmp (const void *x, const void *y)
{
    const rec_t *a = x, *b = y;
    uint64_t calls = 0;
    int c = lead_cmp (a->key, a->klen, b->key, b->klen, &calls);
    return c ? c : (a->seq < b->seq ? -1 : a->seq > b->seq);
}

static int
plain_ref_cmp (const void *x, const void *y)
{
    ref_reverse = false;
    return ref_cmp (x, y);
}

/* n records for lead_cmp: a 1-byte length, an ordered part of 0 to 90
 * bytes from a pool of 200 that share long stretches (one of three
 * 70-byte starts, cut anywhere, then 0x00/0x01/0xff: past the multikey
 * sort's levels too), a tail of 0 to 3 bytes of 0x00/0x01 (ties on the
 * ordered part that only the tail decides, and whole-key ties). */
static rec_t *
make_lead_records (size_t n, uint64_t seed, uint8_t **storage)
{
    static const uint8_t alphabet[3] = {0x00, 0x01, 0xff};
    enum { POOL = 200, MAXO = 90, MAXK = 1 + MAXO + 3, MAXV = 8 };
    uint8_t starts[3][70], pool[POOL][MAXO];
    size_t pool_len[POOL];
    rec_t *r = malloc (n * sizeof *r);
    uint8_t *p = malloc (n * (MAXK + MAXV));

    rng_state = seed;
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 70; j++)
            starts[i][j] = (uint8_t) (j == 69 ? i : 'a' + j % 26);
    for (size_t i = 0; i < POOL; i++) {
        size_t cut = rng () % 71;
        pool_len[i] = cut + rng () % (MAXO - cut + 1);
        memcpy (pool[i], starts[rng () % 3], cut);
        for (size_t j = cut; j < pool_len[i]; j++)
            pool[i][j] = alphabet[rng () % 3];
    }
    *storage = p;
    for (size_t i = 0; i < n; i++) {
        uint8_t *k = p, *v = p + MAXK;
        size_t which = rng () % POOL, tail = rng () % 4;
        uint64_t x = i;
        k[0] = (uint8_t) pool_len[which];
        memcpy (k + 1, pool[which], pool_len[which]);
        for (size_t j = 0; j < tail; j++)
            k[1 + pool_len[which] + j] = (uint8_t) (rng () % 2);
        r[i].klen = 1 + pool_len[which] + tail;
        memcpy (v, &x, 8);
        r[i].vlen = 8;
        r[i].key = k;
        r[i].val = v;
        r[i].seq = i;
        p += MAXK + MAXV;
    }
    return r;
}

/* Sorts r[0..n) with lead_cmp and its ordered part (or, plain, the
 * default comparator) and checks it against qsort. Returns the runs. */
static size_t
lead_case (const rec_t *r, size_t n, size_t budget, bool plain)
{
    uint64_t calls = 0;
    char *dir = make_dir ();
    rm_sorter_t *s = rm_sorter_new (budget, dir, plain ? NULL : lead_cmp, &calls);
    rec_t *want = malloc (n * sizeof *want);
    bson_error_t err;
    size_t runs;

    if (!plain)
        rm_sorter_set_ordered (s, lead_len);
    T_CHECK (add_all (s, r, n, &err) && rm_sorter_finish (s, &err));
    memcpy (want, r, n * sizeof *want);
    qsort (want, n, sizeof *want, plain ? plain_ref_cmp : lead_ref_cmp);
    check_output (s, want, n);
    runs = rm_sorter_spilled_runs (s);
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);
    rm_rmtree (dir);
    free (dir);
    free (want);
    return runs;
}

/* Long shared key starts, in memory (two halves merged: more than 65,536
 * records), spilled and one record a run; both comparators. */
static void
test_ordered_part (void)
{
    enum { N = 70000 };
    uint8_t *storage;
    rec_t *r = make_lead_records (N, 6, &storage);
    for (int plain = 0; plain < 2; plain++) {
        T_CHECK (lead_case (r, N, SIZE_MAX, plain) == 0);
        T_CHECK (lead_case (r, N, 256 << 10, plain) > 8);
        T_CHECK (lead_case (r, 500, 1, plain) == 500);
    }
    free (r);
    free (storage);
}

static void
test_empty_sorter (void)
{
    const uint8_t *k, *v;
    size_t kl, vl;
    bson_error_t err;
    rm_sorter_t *s = rm_sorter_new (1, NULL, NULL, NULL);

    T_CHECK (rm_sorter_finish (s, &err));
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 0);
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 0);
    T_CHECK (rm_sorter_count (s) == 0);
    T_CHECK (rm_sorter_spilled_runs (s) == 0 && rm_sorter_spilled_bytes (s) == 0);
    rm_sorter_destroy (s);
    rm_sorter_destroy (NULL);
    T_CHECK (sort_case (NULL, 0, SIZE_MAX, false) == 0);
}

static void
test_one_record (void)
{
    rec_t r = {(const uint8_t *) "key", (const uint8_t *) "value", 3, 5, 0};
    T_CHECK (sort_case (&r, 1, SIZE_MAX, false) == 0);
    T_CHECK (sort_case (&r, 1, 1, false) == 0); /* nothing to spill it for */
    T_CHECK (sort_case (&r, 1, 1, true) == 0);
}

static void
test_empty_keys_and_values (void)
{
    /* Empty records are all alike but for their place: the value letters
     * show the order. */
    static const char *kv[][2] = {
        {"", ""}, {"", "1"}, {"b", ""}, {"", ""}, {"a", ""}, {"", "2"}, {"a", "x"},
        {"", ""}, {"\0", ""}, {"b", ""}, {"", "3"}, {"a", ""},
    };
    enum { N = sizeof kv / sizeof *kv };
    rec_t r[N];

    for (size_t i = 0; i < N; i++) {
        r[i].key = (const uint8_t *) kv[i][0];
        r[i].klen = (i == 8) ? 1 : strlen (kv[i][0]);
        r[i].val = (const uint8_t *) kv[i][1];
        r[i].vlen = strlen (kv[i][1]);
        r[i].seq = i;
    }
    T_CHECK (sort_case (r, N, SIZE_MAX, false) == 0);
    T_CHECK (sort_case (r, N, 1, false) == N);
    T_CHECK (sort_case (r, N, 100, false) > 0);
    T_CHECK (sort_case (r, N, 1, true) == N);

    /* Enough for the in-memory sort to partition: an empty record takes no
     * bytes, yet must not tie with the record stored after it. */
    {
        enum { M = 2000 };
        static const char keys[3][2] = {"", "a", "\0"};
        static char vals[M][8];
        rec_t *m = malloc (M * sizeof *m);
        rng_state = 10;
        for (size_t i = 0; i < M; i++) {
            size_t which = rng () % 3;
            m[i].key = (const uint8_t *) keys[which];
            m[i].klen = which == 0 ? 0 : 1;
            snprintf (vals[i], sizeof vals[i], "%zu", i);
            m[i].val = (const uint8_t *) vals[i];
            m[i].vlen = rng () % 2 ? strlen (vals[i]) : 0;
            m[i].seq = i;
        }
        T_CHECK (sort_case (m, M, SIZE_MAX, false) == 0);
        T_CHECK (sort_case (m, M, 4 << 10, false) > 0);
        free (m);
    }
}

static void
test_huge_value (void)
{
    enum { BIG = 5 << 20 };
    uint8_t *big = malloc (BIG);
    rec_t r[5] = {
        {(const uint8_t *) "b", (const uint8_t *) "1", 1, 1, 0},
        {(const uint8_t *) "a", big, 1, BIG, 1},
        {(const uint8_t *) "c", (const uint8_t *) "2", 1, 1, 2},
        {(const uint8_t *) "a", (const uint8_t *) "3", 1, 1, 3},
        {big, big + 7, 300000, BIG - 7, 4}, /* a huge key too */
    };

    for (size_t i = 0; i < BIG; i++)
        big[i] = (uint8_t) (i * 7 + (i >> 13));
    T_CHECK (sort_case (r, 5, 1 << 20, false) >= 3);
    T_CHECK (sort_case (r, 5, 1 << 20, true) >= 3);
    T_CHECK (sort_case (r, 5, SIZE_MAX, false) == 0);
    free (big);
}

static rm_sorter_t *
filled_sorter (const char *dir, size_t budget, const rec_t *r, size_t n)
{
    bson_error_t err;
    rm_sorter_t *s = rm_sorter_new (budget, dir, NULL, NULL);
    T_CHECK (add_all (s, r, n, &err));
    return s;
}

static void
test_no_spill_files_left (void)
{
    uint8_t *storage;
    rec_t *r = make_records (3000, 6, &storage);
    char *dir = make_dir (), *old;
    const uint8_t *k, *v;
    size_t kl, vl;
    bson_error_t err;
    rm_sorter_t *s;

    /* Destroyed half way through the output (the merge reads a block
     * ahead on its thread, so some runs may be gone already). */
    s = filled_sorter (dir, 4 << 10, r, 3000);
    T_CHECK (dir_entries (dir) > 0);
    T_CHECK (rm_sorter_finish (s, &err));
    for (int i = 0; i < 10; i++)
        T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 1);
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);

    /* Destroyed before finish. */
    s = filled_sorter (dir, 4 << 10, r, 3000);
    T_CHECK (rm_sorter_spilled_runs (s) > 0);
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);

    /* tmpdir NULL: $TMPDIR (the caller's put back afterwards). */
    old = getenv ("TMPDIR") ? strdup (getenv ("TMPDIR")) : NULL;
    setenv ("TMPDIR", dir, 1);
    s = filled_sorter (NULL, 4 << 10, r, 3000);
    T_CHECK (dir_entries (dir) > 0);
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);
    if (old)
        setenv ("TMPDIR", old, 1);
    else
        unsetenv ("TMPDIR");
    free (old);

    rm_rmtree (dir); /* empty when the checks passed */
    free (dir);
    free (r);
    free (storage);
}

typedef struct {
    uint64_t calls, trip_at; /* trip_at 0: never */
} trip_t;

/* The default order, raising the interrupt flag at the trip_at-th call. */
static int
tripping_cmp (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, void *ctx)
{
    trip_t *t = ctx;
    if (++t->calls == t->trip_at)
        rm_interrupted = SIGINT;
    return bytes_cmp (a, alen, b, blen);
}

static void
test_interrupted (void)
{
    uint8_t *storage, *storage20k;
    rec_t *r = make_records (3000, 7, &storage);
    rec_t *r20k = make_records (N_RANDOM, 9, &storage20k);
    char *dir = make_dir ();
    const uint8_t *k, *v;
    size_t kl, vl, i;
    bson_error_t err;
    rm_sorter_t *s;

    /* While adding: the next spill fails, and so does everything after. */
    s = filled_sorter (dir, 4 << 10, r, 100);
    rm_interrupted = SIGINT;
    for (i = 100; i < 3000; i++)
        if (!rm_sorter_add (s, r[i].key, r[i].klen, r[i].val, r[i].vlen, &err))
            break;
    rm_interrupted = 0;
    T_CHECK (i < 3000);
    T_CHECK (err.domain == RM_ERROR_DOMAIN && err.code == RM_ERR_INTERRUPTED);
    T_CHECK (!rm_sorter_add (s, r[0].key, r[0].klen, r[0].val, r[0].vlen, &err));
    T_CHECK (err.code == RM_ERR_INTERRUPTED);
    T_CHECK (!rm_sorter_finish (s, &err));
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);

    /* Before finish. */
    s = filled_sorter (dir, 4 << 10, r, 3000);
    rm_interrupted = SIGTERM;
    T_CHECK (!rm_sorter_finish (s, &err));
    rm_interrupted = 0;
    T_CHECK (err.code == RM_ERR_INTERRUPTED);
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == -1);
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);

    /* During finish's merge passes, in a group of small runs (budget 1)
     * and inside a large group (64 KiB: ~1000 records per run): the
     * comparator raises the flag part way through. */
    for (int big = 0; big < 2; big++) {
        trip_t t = {0, 0};
        s = rm_sorter_new (big ? 64 << 10 : 1, dir, tripping_cmp, &t);
        T_CHECK (add_all (s, big ? r20k : r, big ? N_RANDOM : 1000, &err));
        t.trip_at = t.calls + 5000;
        T_CHECK (!rm_sorter_finish (s, &err));
        rm_interrupted = 0;
        T_CHECK (err.code == RM_ERR_INTERRUPTED);
        T_CHECK (t.calls < t.trip_at + 50000); /* stopped soon after */
        T_CHECK (dir_entries (dir) > 0);
        rm_sorter_destroy (s);
        T_CHECK (dir_entries (dir) == 0);
    }

    /* During the in-memory sort in finish. */
    {
        trip_t t = {0, 0};
        s = rm_sorter_new (SIZE_MAX, dir, tripping_cmp, &t);
        T_CHECK (add_all (s, r20k, N_RANDOM, &err));
        t.trip_at = t.calls + 1000;
        T_CHECK (!rm_sorter_finish (s, &err));
        rm_interrupted = 0;
        T_CHECK (err.code == RM_ERR_INTERRUPTED);
        T_CHECK (t.calls < t.trip_at + 50000); /* a whole sort is ~300000 */
        rm_sorter_destroy (s);
    }

    /* While reading the output. */
    s = filled_sorter (dir, 4 << 10, r, 3000);
    T_CHECK (rm_sorter_finish (s, &err));
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 1);
    rm_interrupted = SIGINT;
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == -1);
    rm_interrupted = 0;
    T_CHECK (err.code == RM_ERR_INTERRUPTED);
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == -1);
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);

    rm_rmtree (dir); /* empty when the checks passed */
    free (dir);
    free (r);
    free (storage);
    free (r20k);
    free (storage20k);
}

/* Spills r[0..n) at budget, damages every spill file with how(fd, size),
 * then finishes and reads: one of them must fail with an error naming the
 * file, and nothing may crash. Small runs are read whole before they could
 * be damaged, so the files are damaged before finish: with many runs the
 * merge passes in finish meet the damage, with a few large ones next does. */
static void
damaged_case (const rec_t *r, size_t n, size_t budget, void (*how) (int fd, off_t size),
              const char *want)
{
    char *dir = make_dir ();
    rm_sorter_t *s = filled_sorter (dir, budget, r, n);
    const uint8_t *k, *v;
    size_t kl, vl;
    bson_error_t err;
    struct dirent *e;
    DIR *d;
    int rc = -1, damaged = 0;

    T_CHECK (rm_sorter_sync (s, &err)); /* the last run is whole */

    d = opendir (dir);
    while (d && (e = readdir (d))) {
        char path[4096];
        struct stat st;
        int fd;
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        fd = open (path, O_RDWR);
        if (fd >= 0 && fstat (fd, &st) == 0) {
            how (fd, st.st_size);
            damaged++;
        }
        if (fd >= 0)
            close (fd);
    }
    if (d)
        closedir (d);
    T_CHECK (damaged > 0);
    if (rm_sorter_finish (s, &err))
        while ((rc = rm_sorter_next (s, &k, &kl, &v, &vl, &err)) == 1)
            ;
    T_CHECK (rc == -1);
    if (rc == -1) {
        T_CHECK (err.code == RM_ERR_FORMAT);
        T_CHECK (strstr (err.message, dir) != NULL);
        T_CHECK (strstr (err.message, "damaged sort spill file") != NULL);
        if (want && !strstr (err.message, want)) {
            fprintf (stderr, "  got \"%s\", want \"%s\"\n", err.message, want);
            T_CHECK (0);
        }
    }
    rm_sorter_destroy (s);
    T_CHECK (dir_entries (dir) == 0);
    rm_rmtree (dir); /* empty when the checks passed */
    free (dir);
}

static void
truncate_half (int fd, off_t size)
{
    T_CHECK (ftruncate (fd, size / 2) == 0);
}

static void
truncate_checksum (int fd, off_t size)
{
    T_CHECK (ftruncate (fd, size - 2) == 0);
}

static void
flip_middle (int fd, off_t size)
{
    uint8_t b;
    T_CHECK (pread (fd, &b, 1, size / 2) == 1);
    b ^= 0x10;
    T_CHECK (pwrite (fd, &b, 1, size / 2) == 1);
}

/* A first record that claims a 2 GiB key, in a file of the right size:
 * refused, not allocated. */
static void
forge_length (int fd, off_t size)
{
    static const uint8_t hdr[] = {0xff, 0xff, 0xff, 0xff, 0x07, 0x00};
    T_CHECK (size >= (off_t) sizeof hdr);
    T_CHECK (pwrite (fd, hdr, sizeof hdr, 0) == (ssize_t) sizeof hdr);
}

/* The last byte of the last value: every record still parses, only the
 * CRC can tell. */
static void
flip_last_value_byte (int fd, off_t size)
{
    uint8_t b;
    T_CHECK (pread (fd, &b, 1, size - 9) == 1);
    b ^= 0x01;
    T_CHECK (pwrite (fd, &b, 1, size - 9) == 1);
}

static void
append_junk (int fd, off_t size)
{
    T_CHECK (pwrite (fd, "junk", 4, size) == 4);
}

static void
test_damaged_spill_files (void)
{
    void (*hows[]) (int, off_t) = {truncate_half, truncate_checksum, flip_middle, append_junk};
    uint8_t *storage;
    rec_t *r = make_records (N_RANDOM, 8, &storage);
    for (size_t i = 0; i < sizeof hows / sizeof *hows; i++) {
        damaged_case (r, 3000, 4 << 10, hows[i], NULL);
        damaged_case (r, N_RANDOM, 1 << 20, hows[i], NULL);
    }
    damaged_case (r, 3000, 4 << 10, forge_length, "bad record length");
    damaged_case (r, 3000, 4 << 10, truncate_checksum, "truncated");
    damaged_case (r, 3000, 4 << 10, flip_last_value_byte, "checksum mismatch");
    damaged_case (r, N_RANDOM, 1 << 20, flip_last_value_byte, "checksum mismatch");
    free (r);
    free (storage);
}

static void
bad_tmpdir_case (const char *tmpdir, const char *reason)
{
    const uint8_t *k, *v;
    size_t kl, vl;
    bson_error_t err;
    rm_sorter_t *s = rm_sorter_new (1, tmpdir, NULL, NULL);

    T_CHECK (rm_sorter_add (s, "a", 1, "1", 1, &err)); /* no spill yet */
    T_CHECK (!rm_sorter_add (s, "b", 1, "2", 1, &err));
    T_CHECK (err.domain == RM_ERROR_DOMAIN && err.code == RM_ERR_IO);
    if (!strstr (err.message, tmpdir) || !strstr (err.message, reason)) {
        fprintf (stderr, "  got \"%s\", want %s and %s\n", err.message, tmpdir, reason);
        T_CHECK (0);
    }
    /* The sorter is failed for good, with the same error. */
    memset (&err, 0, sizeof err);
    T_CHECK (!rm_sorter_finish (s, &err));
    T_CHECK (strstr (err.message, tmpdir) != NULL);
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == -1);
    rm_sorter_destroy (s);

    /* A budget that never spills never needs the tmpdir. */
    s = rm_sorter_new (SIZE_MAX, tmpdir, NULL, NULL);
    T_CHECK (rm_sorter_add (s, "b", 1, "2", 1, &err));
    T_CHECK (rm_sorter_add (s, "a", 1, "1", 1, &err));
    T_CHECK (rm_sorter_finish (s, &err));
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 1 && kl == 1 && k[0] == 'a');
    rm_sorter_destroy (s);
}

static void
test_unwritable_tmpdir (void)
{
    char *dir = make_dir ();
    char file[4096], sub[4096], ro[4096];
    int fd;

    /* A path under a regular file fails for root too. */
    snprintf (file, sizeof file, "%s/file", dir);
    snprintf (sub, sizeof sub, "%s/file/x", dir);
    fd = open (file, O_WRONLY | O_CREAT, 0600);
    T_CHECK (fd >= 0);
    if (fd >= 0)
        close (fd);
    bad_tmpdir_case (sub, strerror (ENOTDIR));
    snprintf (sub, sizeof sub, "%s/missing", dir);
    bad_tmpdir_case (sub, strerror (ENOENT));
    unlink (file);

    /* Root ignores permissions: only as another user. */
    if (geteuid () != 0) {
        snprintf (ro, sizeof ro, "%s/ro", dir);
        T_CHECK (mkdir (ro, 0500) == 0);
        bad_tmpdir_case (ro, strerror (EACCES));
        T_CHECK (dir_entries (ro) == 0);
        rm_rmtree (ro);
    }
    T_CHECK (dir_entries (dir) == 0);
    rm_rmtree (dir); /* empty when the checks passed */
    free (dir);
}

static void
test_misuse (void)
{
    const uint8_t *k, *v;
    size_t kl, vl;
    bson_error_t err;
    rm_sorter_t *s = rm_sorter_new (SIZE_MAX, NULL, NULL, NULL);

    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == -1);
    T_CHECK (err.code == RM_ERR_USAGE);
    /* Too long for the format, refused before its bytes are read; the
     * sorter goes on. */
    T_CHECK (!rm_sorter_add (s, "x", (size_t) UINT32_MAX + 1, "", 0, &err));
    T_CHECK (err.code == RM_ERR_UNSUPPORTED);
    T_CHECK (rm_sorter_add (s, "x", 1, "", 0, &err));
    T_CHECK (rm_sorter_finish (s, &err));
    T_CHECK (!rm_sorter_finish (s, &err));
    T_CHECK (err.code == RM_ERR_USAGE);
    T_CHECK (!rm_sorter_add (s, "y", 1, "", 0, &err));
    T_CHECK (err.code == RM_ERR_USAGE);
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 1);
    T_CHECK (rm_sorter_next (s, &k, &kl, &v, &vl, &err) == 0);
    rm_sorter_destroy (s);
}

int
main (void)
{
    T_RUN (test_random_in_memory);
    T_RUN (test_random_64k);
    T_RUN (test_random_4k);
    T_RUN (test_random_1_byte);
    T_RUN (test_custom_comparator);
    T_RUN (test_ordered_part);
    T_RUN (test_empty_sorter);
    T_RUN (test_one_record);
    T_RUN (test_empty_keys_and_values);
    T_RUN (test_huge_value);
    T_RUN (test_no_spill_files_left);
    T_RUN (test_interrupted);
    T_RUN (test_damaged_spill_files);
    T_RUN (test_unwritable_tmpdir);
    T_RUN (test_misuse);
    return t_done ();
}
