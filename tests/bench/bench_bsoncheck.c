/* Micro-benchmark of rm_bson_check: reads a plain mongodump archive into
 * memory, then validates every document in it (namespace headers
 * included) several times with each instruction set's scans, taking turns
 * so that a busy machine slows all alike, and prints the best rate of
 * each. The convert path adds I/O, framing and CRCs around the same
 * calls; this isolates the walk. "layout" is rm_bson_check_like, as the
 * reader's read-ahead thread checks (the layout of the documents before
 * placing the first fields). Built with -DBENCH_OLD, it also times
 * old_rm_bson_check: an object built by hand from an earlier bsoncheck.c
 * with the function renamed, linked in for comparison.
 *
 * usage: bench_bsoncheck ARCHIVE [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remodel/bsoncheck.h"

#ifdef BENCH_OLD
bool old_rm_bson_check (const uint8_t *doc, size_t len, rm_bson_fault_t *fault);
#endif

static uint32_t
get32 (const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
           (uint32_t) p[3] << 24;
}

static double
now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

int
main (int argc, char **argv)
{
    FILE *f;
    uint8_t *data;
    long size;
    size_t *offs = NULL, n = 0, cap = 0, bytes = 0, off = 4;
    int rounds = argc > 2 ? atoi (argv[2]) : 5;
    static const char *names[] = {"scalar", "sse2", "avx2", "layout", "old"};
    double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
    int variants = 4;
    static rm_bson_like_t like;

    if (argc < 2 || !(f = fopen (argv[1], "rb"))) {
        fprintf (stderr, "usage: bench_bsoncheck ARCHIVE [ROUNDS]\n");
        return 2;
    }
    fseek (f, 0, SEEK_END);
    size = ftell (f);
    fseek (f, 0, SEEK_SET);
    data = malloc ((size_t) size);
    if (fread (data, 1, (size_t) size, f) != (size_t) size)
        return 1;
    fclose (f);

    /* After the magic: documents and 0xFFFFFFFF segment terminators. */
    while (off + 4 <= (size_t) size) {
        uint32_t l = get32 (data + off);
        if (l == 0xFFFFFFFFu) {
            off += 4;
            continue;
        }
        if (l < 5 || l > (size_t) size - off)
            break;
        if (n == cap)
            offs = realloc (offs, (cap = cap ? 2 * cap : 1 << 16) * sizeof *offs);
        offs[n++] = off;
        bytes += l;
        off += l;
    }
#ifdef BENCH_OLD
    variants = 5;
#endif
    for (int r = 0; r < rounds; r++) {
        for (int isa = 0; isa < variants; isa++) {
            size_t bad = 0;
            double t = now ();
            rm_bson_like_init (&like);
            for (size_t i = 0; i < n; i++) {
                const uint8_t *d = data + offs[i];
                if (isa == 3) {
                    bad += !rm_bson_check_like (&like, d, get32 (d), NULL);
                    continue;
                }
#ifdef BENCH_OLD
                if (isa == 4) {
                    bad += !old_rm_bson_check (d, get32 (d), NULL);
                    continue;
                }
#endif
                bad += !rm_bson_check_isa (d, get32 (d), NULL, (rm_bson_isa_t) isa);
            }
            t = now () - t;
            if (t < best[isa])
                best[isa] = t;
            if (bad)
                fprintf (stderr, "%zu invalid documents\n", bad);
        }
    }
    printf ("%zu documents, %zu bytes\n", n, bytes);
    for (int isa = 0; isa < variants; isa++)
        printf ("  %-6s best %.3f s, %.2f GB/s, %.1f ns/document\n", names[isa], best[isa],
                (double) bytes / best[isa] / 1e9, best[isa] * 1e9 / (double) n);
    free (offs);
    free (data);
    return 0;
}
