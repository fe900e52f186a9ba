/* Atomic output. Every file or directory a writer creates starts under a
 * registered temporary name beside its destination; commit renames it into
 * place, and anything still registered is removed on failure, at exit and
 * after SIGINT/SIGTERM (the commands turn the signal into an error, unwind,
 * and end here). */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/tmppath.h"

static char **registered;
static size_t n_registered;
static unsigned counter;

static void
forget (const char *path)
{
    for (size_t i = 0; i < n_registered; i++)
        if (strcmp (registered[i], path) == 0) {
            bson_free (registered[i]);
            registered[i] = registered[--n_registered];
            return;
        }
}

char *
rm_tmppath_new (const char *dst)
{
    char *copy1 = bson_strdup (dst), *copy2 = bson_strdup (dst);
    char *dir, *base, *path;
    size_t len = strlen (copy1);

    while (len > 1 && copy1[len - 1] == '/') { /* "out/" names the directory out */
        copy1[--len] = '\0';
        copy2[len] = '\0';
    }
    dir = dirname (copy1);
    base = basename (copy2);
    path = bson_strdup_printf ("%s/.%s.remodel-%ld-%u", dir, base, (long) getpid (), counter++);
    bson_free (copy1);
    bson_free (copy2);
    if (n_registered == 0)
        atexit (rm_tmppath_remove_all);
    registered = bson_realloc (registered, (n_registered + 1) * sizeof *registered);
    registered[n_registered++] = bson_strdup (path);
    return path;
}

bool
rm_tmppath_is_temporary (const char *base)
{
    const char *tag = strstr (base, ".remodel-");
    const char *p;
    if (base[0] != '.' || !tag)
        return false;
    /* the last ".remodel-" followed by digits, '-', digits to the end */
    for (const char *t = tag; (t = strstr (t + 1, ".remodel-"));)
        tag = t;
    p = tag + 9;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p++ != '-' || *p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return *p == '\0';
}

/* The PID in a temporary name, or 0. */
static long
pid_of (const char *base)
{
    const char *tag = strstr (base, ".remodel-");
    for (const char *t = tag; t && (t = strstr (t + 1, ".remodel-"));)
        tag = t;
    return tag ? strtol (tag + 9, NULL, 10) : 0;
}

size_t
rm_tmppath_sweep (const char *dir)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    size_t removed = 0;

    if (!d)
        return 0;
    while ((e = readdir (d))) {
        long pid;
        char *path;
        if (!rm_tmppath_is_temporary (e->d_name))
            continue;
        pid = pid_of (e->d_name);
        /* Ours, or a process that is still there (kill says so, or that we
         * may not signal it): not to be touched. Only a PID no process has
         * is proof that the file is left over. */
        if (pid <= 0 || pid == (long) getpid () || kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
            continue;
        path = bson_strdup_printf ("%s/%s", dir, e->d_name);
        if (rm_rmtree (path))
            removed++;
        bson_free (path);
    }
    closedir (d);
    return removed;
}

bool
rm_tmppath_check_dst (const char *dst, bool force, bson_error_t *err)
{
    struct stat st;
    char *copy, *dir;
    bool ok = true;

    if (lstat (dst, &st) == 0 && !force) {
        rm_error_set (err, RM_ERR_EXISTS, "%s: already exists (use --force to replace it)", dst);
        return false;
    }
    /* Say it here, about dst, rather than later about a temporary name. */
    copy = bson_strdup (dst);
    dir = dirname (copy);
    if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot write there: %s is not a directory", dst, dir);
        ok = false;
    } else if (access (dir, W_OK | X_OK) != 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot write into %s: %s", dst, dir, strerror (errno));
        ok = false;
    }
    bson_free (copy);
    return ok;
}

bool
rm_rmtree (const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    bool ok = true;

    if (lstat (path, &st) != 0)
        return errno == ENOENT;
    if (!S_ISDIR (st.st_mode))
        return unlink (path) == 0;
    d = opendir (path);
    if (!d)
        return false;
    while ((e = readdir (d))) {
        char *child;
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        child = bson_strdup_printf ("%s/%s", path, e->d_name);
        ok = rm_rmtree (child) && ok;
        bson_free (child);
    }
    closedir (d);
    return rmdir (path) == 0 && ok;
}

bool
rm_tmppath_commit (const char *tmp, const char *dst, bool force, bson_error_t *err)
{
    struct stat st;
    char *old = NULL;

    /* rename() replaces a file atomically but not a non-empty directory:
     * move the old one aside first, then remove it once the new one is in. */
    if (lstat (dst, &st) == 0) {
        if (!force) {
            rm_error_set (err, RM_ERR_EXISTS, "%s: already exists (use --force to replace it)", dst);
            return false;
        }
        if (S_ISDIR (st.st_mode)) {
            old = rm_tmppath_new (dst);
            if (rename (dst, old) != 0) {
                rm_error_set (err, RM_ERR_IO, "%s: cannot move the old one aside: %s", dst,
                              strerror (errno));
                forget (old);
                bson_free (old);
                return false;
            }
        }
    }
    if (rename (tmp, dst) != 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot rename %s into place: %s", dst, tmp,
                      strerror (errno));
        if (old) {
            rename (old, dst);
            forget (old);
            bson_free (old);
        }
        return false;
    }
    forget (tmp);
    if (old) {
        rm_rmtree (old);
        forget (old);
        bson_free (old);
    }
    return true;
}

void
rm_tmppath_remove (const char *tmp)
{
    rm_rmtree (tmp);
    forget (tmp);
}

void
rm_tmppath_remove_all (void)
{
    while (n_registered > 0) {
        char *p = registered[n_registered - 1];
        rm_rmtree (p);
        forget (p);
    }
}
