/* CRC-64/XZ: the table, PCLMUL and 256-bit VPCLMUL versions (the last two
 * where the CPU has them) against a bit-at-a-time
 * reference, and against CRCs that mongodump wrote into real archives.
 * Run from the repository root (fixtures in tests/fixtures). */
#include <bson/bson.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc64_clmul.h"
#include "remodel/crc64.h"
#include "test.h"

#define TESTDATA T_FIXTURES "mongo-tools/mongorestore/testdata/"

/* One bit at a time, straight from the definition: reflected polynomial,
 * register preset to ~crc, result inverted. */
static uint64_t
ref_crc64 (uint64_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint64_t reg = ~crc;
    for (size_t i = 0; i < len; i++) {
        reg ^= p[i];
        for (int b = 0; b < 8; b++)
            reg = (reg & 1) ? (reg >> 1) ^ UINT64_C(0xC96C5795D7870F42) : reg >> 1;
    }
    return ~reg;
}

static uint64_t rng_state = UINT64_C(0x9E3779B97F4A7C15);

static uint64_t
rng (void)
{
    return t_xorshift (&rng_state);
}

static void
fill_random (unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char) (rng () >> 56);
}

static unsigned char *
read_file (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    unsigned char *buf = NULL;
    long n;

    if (!f) {
        fprintf (stderr, "  cannot open %s (run from the repository root)\n", path);
        return NULL;
    }
    if (fseek (f, 0, SEEK_END) == 0 && (n = ftell (f)) >= 0 && fseek (f, 0, SEEK_SET) == 0) {
        buf = malloc ((size_t) n + 1);
        if (buf && fread (buf, 1, (size_t) n, f) != (size_t) n) {
            free (buf);
            buf = NULL;
        }
        *len = (size_t) n;
    }
    fclose (f);
    return buf;
}

static void
test_check_value (void)
{
    const char *s = "123456789";
    T_CHECK (rm_crc64_update_table (0, s, 9) == UINT64_C(0x995DC9BBDF1939FA));
    T_CHECK (rm_crc64_update (0, s, 9) == UINT64_C(0x995DC9BBDF1939FA));
    T_CHECK (rm_crc64_update_clmul (0, s, 9) == UINT64_C(0x995DC9BBDF1939FA));
    T_CHECK (ref_crc64 (0, s, 9) == UINT64_C(0x995DC9BBDF1939FA));
}

static void
test_empty (void)
{
    T_CHECK (rm_crc64_update_table (0, "", 0) == 0);
    T_CHECK (rm_crc64_update (0, "", 0) == 0);
    T_CHECK (rm_crc64_update (0, NULL, 0) == 0);
    /* nothing more leaves a CRC unchanged */
    T_CHECK (rm_crc64_update (UINT64_C(0x995DC9BBDF1939FA), "", 0) == UINT64_C(0x995DC9BBDF1939FA));
    T_CHECK (rm_crc64_update_table (12345, "", 0) == 12345);
}

/* All-zero and all-ones inputs of many lengths (64 bytes and up take the
 * PCLMUL path on CPUs that have it). */
static void
test_constant_buffers (void)
{
    unsigned char zeros[4096] = {0};
    unsigned char ff[4096];
    memset (ff, 0xff, sizeof ff);
    for (size_t n = 0; n <= sizeof zeros; n += (n < 200 ? 1 : 97)) {
        T_CHECK (rm_crc64_update (0, zeros, n) == ref_crc64 (0, zeros, n));
        T_CHECK (rm_crc64_update (0, ff, n) == ref_crc64 (0, ff, n));
        T_CHECK (rm_crc64_update_table (0, ff, n) == ref_crc64 (0, ff, n));
        T_CHECK (rm_crc64_update_clmul (0, zeros, n) == ref_crc64 (0, zeros, n));
        T_CHECK (rm_crc64_update_clmul (0, ff, n) == ref_crc64 (0, ff, n));
    }
}

/* Every length 0..1200 at every alignment 0..15, from a zero and from a
 * random starting CRC: every tail after the 128-, 64-, 32- and 16-byte
 * rounds of the vector versions. */
static void
test_lengths_alignments (void)
{
    enum { MAXLEN = 1200 };
    unsigned char *buf = malloc (MAXLEN + 16);
    int bad = 0;

    fill_random (buf, MAXLEN + 16);
    for (size_t align = 0; align < 16; align++)
        for (size_t n = 0; n <= MAXLEN; n++) {
            const unsigned char *p = buf + align;
            uint64_t start = (n & 1) ? rng () : 0;
            uint64_t want = ref_crc64 (start, p, n);
            uint64_t t = rm_crc64_update_table (start, p, n);
            uint64_t f = rm_crc64_update (start, p, n);
            uint64_t c = rm_crc64_update_clmul (start, p, n);
            if (t != want || f != want || c != want) {
                if (bad++ < 5)
                    fprintf (stderr,
                             "  align %zu len %zu start %016" PRIx64 ": ref %016" PRIx64
                             " table %016" PRIx64 " fast %016" PRIx64 " clmul %016" PRIx64
                             "\n",
                             align, n, start, want, t, f, c);
            }
        }
    T_CHECK (bad == 0);
    free (buf);
}

#ifdef RM_CRC64_HAVE_PCLMUL
__attribute__ ((target (RM_CRC64_CLMUL_TARGET))) static uint64_t
clmul_short (uint64_t crc, const unsigned char *p, size_t n)
{
    return ~rm_crc64_clmul_short (~crc, p, n);
}
#endif

/* The inline short-message version (analyze's keys, crc64_clmul.h) at
 * every length it takes and every alignment, from a zero and from a
 * random starting CRC. */
static void
test_clmul_short (void)
{
#ifdef RM_CRC64_HAVE_PCLMUL
    unsigned char buf[RM_CRC64_SHORT_MAX + 16];
    size_t checked = 0;
    if (!rm_crc64_have_clmul ()) {
        fprintf (stderr, "  (no PCLMULQDQ here: nothing to check)\n");
        return;
    }
    fill_random (buf, sizeof buf);
    for (size_t align = 0; align < 16; align++)
        for (size_t n = 8; n <= RM_CRC64_SHORT_MAX; n++) {
            uint64_t start = (n & 1) ? rng () : 0;
            T_CHECK (clmul_short (start, buf + align, n) == ref_crc64 (start, buf + align, n));
            checked++;
        }
    T_CHECK (checked == 16 * (RM_CRC64_SHORT_MAX - 7));
#endif
}

/* Bigger buffers (many 64-byte rounds, every tail length) and a 1 MiB one. */
static void
test_large (void)
{
    size_t n = (1u << 20) + 15;
    unsigned char *buf = malloc (n + 16);
    fill_random (buf, n + 16);
    for (size_t off = 0; off < 16; off += 5) {
        uint64_t want = ref_crc64 (0, buf + off, n - off);
        T_CHECK (rm_crc64_update_table (0, buf + off, n - off) == want);
        T_CHECK (rm_crc64_update (0, buf + off, n - off) == want);
        T_CHECK (rm_crc64_update_clmul (0, buf + off, n - off) == want);
    }
    for (size_t len = 4096; len < 4096 + 160; len++) {
        uint64_t want = ref_crc64 (0, buf + 3, len);
        T_CHECK (rm_crc64_update (0, buf + 3, len) == want);
        T_CHECK (rm_crc64_update_clmul (0, buf + 3, len) == want);
    }
    free (buf);
}

/* update (update (0, a), b) == update (0, a || b) at every split point, for
 * both versions and mixed, and in many small irregular pieces. */
static void
test_chunked (void)
{
    enum { LEN = 1024 };
    unsigned char buf[LEN + 1];
    uint64_t whole, crc;
    int bad = 0;

    fill_random (buf, sizeof buf);
    whole = ref_crc64 (0, buf + 1, LEN);
    for (size_t cut = 0; cut <= LEN; cut++) {
        const unsigned char *p = buf + 1;
        uint64_t a = rm_crc64_update (rm_crc64_update (0, p, cut), p + cut, LEN - cut);
        uint64_t b = rm_crc64_update_table (rm_crc64_update_table (0, p, cut), p + cut, LEN - cut);
        uint64_t c = rm_crc64_update_table (rm_crc64_update (0, p, cut), p + cut, LEN - cut);
        uint64_t d = rm_crc64_update (rm_crc64_update_table (0, p, cut), p + cut, LEN - cut);
        uint64_t e = rm_crc64_update (rm_crc64_update_clmul (0, p, cut), p + cut, LEN - cut);
        if (a != whole || b != whole || c != whole || d != whole || e != whole) {
            if (bad++ < 5)
                fprintf (stderr, "  split at %zu differs\n", cut);
        }
    }
    T_CHECK (bad == 0);

    /* three pieces: every (i, j) on a shorter buffer */
    whole = ref_crc64 (0, buf, 200);
    bad = 0;
    for (size_t i = 0; i <= 200; i++)
        for (size_t j = i; j <= 200; j++) {
            crc = rm_crc64_update (0, buf, i);
            crc = rm_crc64_update (crc, buf + i, j - i);
            crc = rm_crc64_update (crc, buf + j, 200 - j);
            bad += crc != whole;
        }
    T_CHECK (bad == 0);

    /* irregular pieces of 0..99 bytes */
    crc = 0;
    for (size_t pos = 0; pos < LEN;) {
        size_t piece = (size_t) (rng () % 100);
        if (piece > LEN - pos)
            piece = LEN - pos;
        crc = rm_crc64_update (crc, buf + pos, piece);
        pos += piece;
    }
    T_CHECK (crc == ref_crc64 (0, buf, LEN));
}

/* A .bson file of a directory dump whose bytes are the same documents that
 * mongodump wrote, with this CRC, into timeseries_tests/dump.archive
 * (namespace admin.system.version). */
static void
test_bson_file (void)
{
    size_t len = 0;
    unsigned char *buf = read_file (TESTDATA "timeseries_tests/ts_dump/admin/system.version.bson", &len);
    T_CHECK (buf != NULL);
    if (!buf)
        return;
    T_CHECK (len == 59);
    T_CHECK ((int64_t) rm_crc64_update (0, buf, len) == INT64_C(5808966695042502227));
    T_CHECK ((int64_t) rm_crc64_update_table (0, buf, len) == INT64_C(5808966695042502227));
    free (buf);
}

/* Walks a mongodump archive (magic, prelude, data segments), sums each
 * namespace's documents in stream order and checks the CRC of every EOF
 * header with both versions. Returns how many namespaces were checked;
 * *want_crc receives the stored CRC of want_ns (if found). */
typedef struct {
    char name[256];
    uint64_t table, fast;
    size_t bytes;
} ns_sum_t;

static int
check_archive (const char *path, const char *want_ns, int64_t *want_crc, size_t *max_bytes)
{
    size_t len = 0, pos = 4;
    unsigned char *buf = read_file (path, &len);
    ns_sum_t sums[64];
    size_t n_sums = 0;
    int checked = 0, terminators = 0;

    if (!buf)
        return -1;
    if (len < 4 || memcmp (buf, "\x6d\xe2\x99\x81", 4) != 0) {
        fprintf (stderr, "  %s: bad magic\n", path);
        free (buf);
        return -1;
    }
    /* prelude: header document and collection metadata, then a terminator */
    while (terminators == 0 && pos + 4 <= len) {
        int32_t n;
        memcpy (&n, buf + pos, 4);
        n = (int32_t) BSON_UINT32_FROM_LE ((uint32_t) n);
        if (n == -1) {
            terminators++;
            pos += 4;
        } else if (n >= 5 && (size_t) n <= len - pos) {
            pos += (size_t) n;
        } else {
            break;
        }
    }
    T_CHECK (terminators == 1);

    /* data: header, documents, terminator; repeat */
    while (pos + 4 <= len) {
        int32_t n;
        bson_t hdr;
        bson_iter_t it;
        const char *db = NULL, *coll = NULL;
        bool eof = false;
        int64_t crc = 0;
        char name[256];
        ns_sum_t *sum = NULL;

        memcpy (&n, buf + pos, 4);
        n = (int32_t) BSON_UINT32_FROM_LE ((uint32_t) n);
        if (n < 5 || (size_t) n > len - pos || !bson_init_static (&hdr, buf + pos, (size_t) n)) {
            fprintf (stderr, "  %s: bad namespace header at %zu\n", path, pos);
            checked = -1;
            break;
        }
        pos += (size_t) n;
        if (bson_iter_init (&it, &hdr))
            while (bson_iter_next (&it)) {
                const char *k = bson_iter_key (&it);
                if (!strcmp (k, "db") && BSON_ITER_HOLDS_UTF8 (&it))
                    db = bson_iter_utf8 (&it, NULL);
                else if (!strcmp (k, "collection") && BSON_ITER_HOLDS_UTF8 (&it))
                    coll = bson_iter_utf8 (&it, NULL);
                else if (!strcmp (k, "EOF") && BSON_ITER_HOLDS_BOOL (&it))
                    eof = bson_iter_bool (&it);
                else if (!strcmp (k, "CRC") && BSON_ITER_HOLDS_INT64 (&it))
                    crc = bson_iter_int64 (&it);
            }
        if (!db || !coll) {
            checked = -1;
            break;
        }
        snprintf (name, sizeof name, "%s.%s", db, coll);
        for (size_t i = 0; i < n_sums; i++)
            if (!strcmp (sums[i].name, name))
                sum = &sums[i];
        if (!sum && n_sums < sizeof sums / sizeof sums[0]) {
            sum = &sums[n_sums++];
            memset (sum, 0, sizeof *sum);
            snprintf (sum->name, sizeof sum->name, "%s", name);
        }
        if (!sum) {
            checked = -1;
            break;
        }

        /* documents up to the terminator, fed one at a time */
        for (;;) {
            if (pos + 4 > len) {
                checked = -1;
                break;
            }
            memcpy (&n, buf + pos, 4);
            n = (int32_t) BSON_UINT32_FROM_LE ((uint32_t) n);
            if (n == -1) {
                pos += 4;
                break;
            }
            if (n < 5 || (size_t) n > len - pos) {
                checked = -1;
                break;
            }
            sum->table = rm_crc64_update_table (sum->table, buf + pos, (size_t) n);
            sum->fast = rm_crc64_update (sum->fast, buf + pos, (size_t) n);
            sum->bytes += (size_t) n;
            pos += (size_t) n;
        }
        if (checked < 0)
            break;

        if (eof) {
            if ((int64_t) sum->table != crc || (int64_t) sum->fast != crc)
                fprintf (stderr, "  %s %s: stored %" PRId64 ", table %" PRId64 ", fast %" PRId64 "\n",
                         path, name, crc, (int64_t) sum->table, (int64_t) sum->fast);
            T_CHECK ((int64_t) sum->table == crc);
            T_CHECK ((int64_t) sum->fast == crc);
            if (want_ns && !strcmp (name, want_ns))
                *want_crc = crc;
            if (sum->bytes > *max_bytes)
                *max_bytes = sum->bytes;
            checked++;
        }
    }
    T_CHECK (pos == len);
    free (buf);
    return checked;
}

static void
test_archives (void)
{
    int64_t sysver = 0, unused = 0;
    size_t max_bytes = 0;

    /* the brief's fact: admin.system.version of dump-w-oplog.archive */
    T_CHECK (check_archive (TESTDATA "dump-w-oplog.archive", "admin.system.version", &sysver,
                            &max_bytes) == 3);
    T_CHECK (sysver == INT64_C(914493570479648269));
    T_CHECK (check_archive (TESTDATA "test.bar.archive", NULL, &unused, &max_bytes) == 2);
    T_CHECK (check_archive (TESTDATA "timeseries_tests/dump.archive", NULL, &unused, &max_bytes) == 3);
    /* some namespace was long enough for the PCLMUL path (38020 bytes) */
    T_CHECK (max_bytes >= 4096);
}

int
main (void)
{
    T_RUN (test_check_value);
    T_RUN (test_empty);
    T_RUN (test_constant_buffers);
    T_RUN (test_lengths_alignments);
    T_RUN (test_clmul_short);
    T_RUN (test_large);
    T_RUN (test_chunked);
    T_RUN (test_bson_file);
    T_RUN (test_archives);
    return t_done ();
}
