/*
 * main.c: command line of remodel-gen.
 *
 *   remodel-gen --out DIR [--scale N] [--seed S] [--force] [--verbose]
 *
 * Writes a mongodump directory dump into DIR. The dump is built in DIR.tmp
 * and renamed into place at the end, so an interrupted run never leaves a
 * half-written DIR behind; an existing DIR is replaced only with --force and
 * only if it looks like a dump (holds prelude.json, or is empty).
 */
#include "gen.h"

#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GEN_MAX_SCALE 10000 /* ~8 GB; unique SSNs need under 8M people */

/* What mongodump 100.10 writes for a 7.0 server; mongorestore parses the
 * server version, so it must be a real X.Y.Z. */
#define GEN_PRELUDE "{\"ServerVersion\":\"7.0.16\",\"ToolVersion\":\"100.10.0\"}"

typedef bool (*gen_dataset_fn) (gen_ctx_t *ctx, bson_error_t *error);

static const gen_dataset_fn datasets[] = {
    gen_crm, gen_catalog, gen_logging, gen_school, gen_blog, gen_iot,
};

static void
usage (FILE *fp)
{
    fputs ("usage: remodel-gen --out DIR [--scale N] [--seed S] [--force] [--verbose]\n"
           "\n"
           "Writes a deterministic sample mongodump directory dump into DIR:\n"
           "databases crm, catalog, logging, school, blog and iot.\n"
           "\n"
           "  --out DIR    output directory; must not exist unless --force\n"
           "  --scale N    multiply every document count by N (1 to 10000, default 1;\n"
           "               1 is about 0.8 MB, 1000 about 0.8 GB)\n"
           "  --seed S     64-bit seed, decimal or 0x-hex (default 1); same seed and\n"
           "               scale give byte-identical output\n"
           "  --force      replace DIR if it already holds a dump\n"
           "  --verbose    print per-collection counts on stderr\n"
           "\n"
           "example: remodel-gen --out dumps/sample --scale 1 --seed 1 --force\n",
           fp);
}

/* Digits only (strtoull would accept "-1", spaces and trailing junk). */
static bool
parse_u64 (const char *text, int base, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!text[0] || text[0] == '-' || text[0] == '+' || text[0] == ' ') {
        return false;
    }
    errno = 0;
    v = strtoull (text, &end, base);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = (uint64_t) v;
    return true;
}

static int
remove_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st;
    (void) flag;
    (void) ftw;
    return remove (path);
}

/* rm -rf without following symlinks. Missing paths are fine. */
static bool
remove_tree (const char *path, bson_error_t *error)
{
    struct stat st;

    if (lstat (path, &st) != 0 && errno == ENOENT) {
        return true;
    }
    if (nftw (path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        return gen_errno_error (error, "cannot remove", path);
    }
    return true;
}

static bool
path_exists (const char *path)
{
    struct stat st;

    return lstat (path, &st) == 0;
}

/* --force replaces only what this tool could have written: a directory that
 * holds prelude.json, or an empty one. A typo in --out then cannot wipe an
 * unrelated directory. */
static bool
check_replaceable (const char *dir, bson_error_t *error)
{
    struct stat st;
    char *prelude;
    bool ok;

    if (lstat (dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        bson_set_error (error, GEN_ERROR_DOMAIN, ENOTDIR,
                        "%s exists and is not a directory; not replacing it", dir);
        return false;
    }
    prelude = bson_strdup_printf ("%s/prelude.json", dir);
    /* An empty directory is simply removed here: rmdir fails otherwise. */
    ok = path_exists (prelude) || rmdir (dir) == 0;
    bson_free (prelude);
    if (!ok) {
        bson_set_error (error, GEN_ERROR_DOMAIN, EEXIST,
                        "%s is not empty and holds no prelude.json: it does not "
                        "look like a dump; not replacing it",
                        dir);
    }
    return ok;
}

static bool
generate (gen_ctx_t *ctx, bson_error_t *error)
{
    char *prelude;
    bool ok;

    if (mkdir (ctx->root, 0777) != 0) {
        return gen_errno_error (error, "cannot create directory", ctx->root);
    }
    for (size_t i = 0; i < GEN_COUNT (datasets); i++) {
        if (!datasets[i](ctx, error)) {
            return false;
        }
    }
    prelude = bson_strdup_printf ("%s/prelude.json", ctx->root);
    ok = gen_write_file (prelude, GEN_PRELUDE, error);
    bson_free (prelude);
    return ok;
}

/* Moves the finished DIR.tmp to DIR, replacing an old dump via DIR.old so
 * that DIR always holds a complete dump. */
static bool
install (const char *tmp, const char *out, bson_error_t *error)
{
    char *old = bson_strdup_printf ("%s.old", out);
    bool had_old = path_exists (out);
    bool ok = true;

    if (had_old) {
        ok = remove_tree (old, error);
        if (ok && rename (out, old) != 0) {
            bson_set_error (error, GEN_ERROR_DOMAIN, (uint32_t) errno, "cannot rename %s to %s: %s",
                            out, old, strerror (errno));
            ok = false;
        }
    }
    if (ok && rename (tmp, out) != 0) {
        bson_set_error (error, GEN_ERROR_DOMAIN, (uint32_t) errno, "cannot rename %s to %s: %s",
                        tmp, out, strerror (errno));
        ok = false;
    }
    if (ok && had_old) {
        ok = remove_tree (old, error);
    }
    bson_free (old);
    return ok;
}

int
main (int argc, char **argv)
{
    static const struct option options[] = {
        {"out", required_argument, NULL, 'o'},
        {"scale", required_argument, NULL, 's'},
        {"seed", required_argument, NULL, 'S'},
        {"force", no_argument, NULL, 'f'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gen_ctx_t ctx = {.seed = 1, .scale = 1};
    char *out = NULL;
    bool force = false;
    bson_error_t error;
    char *tmp;
    int c;

    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 's':
            if (!parse_u64 (optarg, 10, &ctx.scale) || ctx.scale < 1 || ctx.scale > GEN_MAX_SCALE) {
                fprintf (stderr,
                         "remodel-gen: --scale must be a whole number from 1 to %d, not '%s'\n",
                         GEN_MAX_SCALE, optarg);
                return 2;
            }
            break;
        case 'S':
            if (!parse_u64 (optarg, 0, &ctx.seed)) {
                fprintf (stderr,
                         "remodel-gen: --seed must be an unsigned 64-bit number, not '%s'\n",
                         optarg);
                return 2;
            }
            break;
        case 'f':
            force = true;
            break;
        case 'v':
            ctx.verbose = true;
            break;
        case 'h':
            usage (stdout);
            return 0;
        default:
            usage (stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "remodel-gen: unexpected argument '%s'\n", argv[optind]);
        usage (stderr);
        return 2;
    }
    if (!out || !out[0]) {
        fprintf (stderr, "remodel-gen: --out DIR is required\n");
        usage (stderr);
        return 2;
    }
    /* "dumps/sample/" must not turn into "dumps/sample/.tmp", inside DIR. */
    for (size_t len = strlen (out); len > 1 && out[len - 1] == '/'; len--) {
        out[len - 1] = '\0';
    }

    if (path_exists (out)) {
        if (!force) {
            fprintf (stderr, "remodel-gen: %s already exists; use --force to replace it\n", out);
            return 1;
        }
        if (!check_replaceable (out, &error)) {
            fprintf (stderr, "remodel-gen: %s\n", error.message);
            return 1;
        }
    }

    tmp = bson_strdup_printf ("%s.tmp", out);
    if (path_exists (tmp)) {
        /* Left over from an interrupted run of this tool. */
        if (!force) {
            fprintf (stderr,
                     "remodel-gen: %s exists (left by an interrupted run?); "
                     "remove it or use --force\n",
                     tmp);
            bson_free (tmp);
            return 1;
        }
        if (!remove_tree (tmp, &error)) {
            fprintf (stderr, "remodel-gen: %s\n", error.message);
            bson_free (tmp);
            return 1;
        }
    }

    ctx.root = tmp;
    if (!generate (&ctx, &error) || !install (tmp, out, &error)) {
        bson_error_t cleanup_error;

        fprintf (stderr, "remodel-gen: %s\n", error.message);
        if (!remove_tree (tmp, &cleanup_error)) {
            fprintf (stderr, "remodel-gen: %s\n", cleanup_error.message);
        }
        bson_free (tmp);
        return 1;
    }
    if (ctx.verbose) {
        fprintf (stderr,
                 "remodel-gen: wrote %s: %" PRIu64 " documents, %" PRIu64
                 " bytes of BSON (seed %" PRIu64 ", scale %" PRIu64 ")\n",
                 out, ctx.total_docs, ctx.total_bytes, ctx.seed, ctx.scale);
    }
    bson_free (tmp);
    return 0;
}
