/* Paths a command reads and writes, checked against each other before
 * anything is opened: an output (the destination, --stats-json FILE,
 * --skip-invalid=FILE) that is an input, another output, or lies inside a
 * directory being read or replaced would destroy what the command reads or
 * writes. Refused with nothing created. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/tmppath.h"
#include "tool.h"

/* path made absolute with symbolic links resolved, as far as it exists:
 * the deepest existing ancestor through realpath, the rest appended. */
static char *
canonical (const char *path)
{
    char *resolved = realpath (path, NULL), *copy, *dir, *base, *parent, *out;

    if (resolved) {
        out = bson_strdup (resolved);
        free (resolved);
        return out;
    }
    copy = bson_strdup (path);
    dir = bson_strdup (dirname (copy));
    bson_free (copy);
    copy = bson_strdup (path);
    base = basename (copy);
    if (strcmp (dir, path) == 0) /* "/" or "." */
        parent = bson_strdup (dir);
    else
        parent = canonical (dir);
    out = bson_strdup_printf ("%s%s%s", parent, strcmp (parent, "/") == 0 ? "" : "/", base);
    bson_free (parent);
    bson_free (dir);
    bson_free (copy);
    return out;
}

/* a lies inside directory b (a longer path under b/). */
static bool
inside (const char *a, const char *b)
{
    size_t n = strlen (b);
    if (strcmp (b, "/") == 0)
        return a[0] == '/' && a[1] != '\0';
    return strncmp (a, b, n) == 0 && a[n] == '/';
}

static bool
is_dir (const char *path, const tool_path_t *p)
{
    struct stat st;
    return p->dir || (stat (path, &st) == 0 && S_ISDIR (st.st_mode));
}

bool
tool_paths_check (const tool_path_t *paths, size_t n, bson_error_t *err)
{
    char *canon[TOOL_PATHS_MAX] = {NULL};
    struct stat st[TOOL_PATHS_MAX];
    bool exists[TOOL_PATHS_MAX] = {false}, ok = true;

    BSON_ASSERT (n <= TOOL_PATHS_MAX);
    for (size_t i = 0; i < n; i++) {
        if (!paths[i].path || strcmp (paths[i].path, "-") == 0)
            continue;
        canon[i] = canonical (paths[i].path);
        exists[i] = stat (paths[i].path, &st[i]) == 0;
    }
    for (size_t i = 0; ok && i < n; i++) {
        const tool_path_t *o = &paths[i];
        if (!canon[i] || !o->output)
            continue;
        for (size_t j = 0; ok && j < n; j++) {
            const tool_path_t *p = &paths[j];
            const char *why = NULL;
            if (j == i || !canon[j])
                continue;
            if ((exists[i] && exists[j] && st[i].st_dev == st[j].st_dev &&
                 st[i].st_ino == st[j].st_ino) ||
                strcmp (canon[i], canon[j]) == 0)
                why = "is the same file as";
            else if (is_dir (p->path, p) && inside (canon[i], canon[j]))
                why = p->output ? "lies inside the directory written as" : "lies inside the directory read as";
            else if (!p->output && is_dir (o->path, o) && inside (canon[j], canon[i]))
                why = "is a directory that holds";
            if (why) {
                rm_error_set (err, RM_ERR_USAGE, "%s %s: %s %s %s; nothing written", o->role,
                              o->path, why, p->role, p->path);
                ok = false;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        bson_free (canon[i]);
    return ok;
}

/* Directories tool_make_parents created, deepest last, for undoing. */
static char *made[64];
static size_t n_made;

bool
tool_make_parents (const char *path, bson_error_t *err)
{
    char *copy = bson_strdup (path), *dir;
    size_t len = strlen (copy);
    struct stat st;

    while (len > 1 && copy[len - 1] == '/') /* "out/": the directory out itself */
        copy[--len] = '\0';
    dir = dirname (copy);
    if (stat (dir, &st) == 0) {
        bson_free (copy);
        return true;
    }
    /* Each missing component, from the top down. */
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (stat (dir, &st) != 0) {
            if (mkdir (dir, 0777) != 0) {
                rm_error_set (err, RM_ERR_IO, "%s: cannot create the directory %s: %s", path, dir,
                              strerror (errno));
                *p = saved;
                bson_free (copy);
                tool_remove_made_parents ();
                return false;
            }
            if (n_made < sizeof made / sizeof *made)
                made[n_made++] = bson_strdup (dir);
        } else if (!S_ISDIR (st.st_mode)) {
            rm_error_set (err, RM_ERR_IO, "%s: cannot write there: %s is not a directory", path, dir);
            *p = saved;
            bson_free (copy);
            tool_remove_made_parents ();
            return false;
        }
        *p = saved;
        if (saved == '\0')
            break;
    }
    bson_free (copy);
    return true;
}

void
tool_remove_made_parents (void)
{
    while (n_made > 0) {
        char *d = made[--n_made];
        rmdir (d); /* only if empty: anything else there stays */
        bson_free (d);
    }
}

void
tool_keep_made_parents (void)
{
    while (n_made > 0)
        bson_free (made[--n_made]);
}

void
tool_sweep (const char *dst, const char *tmpdir, bool quiet)
{
    char where[2 * PATH_MAX + 8];
    size_t n = rm_tmppath_sweep_for (dst, tmpdir, where, sizeof where);
    if (n)
        tool_note (quiet, "removed %zu stale temporary file(s) of killed remodel runs from %s", n,
                   where);
}

rm_reader_t *
tool_open_source (const char *src, tool_opts_t *o, int *status)
{
    const tool_path_t paths[] = {
        {src, "the source", false, false},
        {o->read.quarantine, "--skip-invalid", true, false},
    };
    bson_error_t err;
    rm_reader_t *r = NULL;

    if (tool_paths_check (paths, 2, &err))
        r = rm_reader_open (src, &o->read, &err);
    if (!r) {
        tool_error (&err);
        *status = rm_cli_exit_status (&err);
    }
    return r;
}
