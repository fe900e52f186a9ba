/* Atomic output. Every file or directory a writer creates starts under a
 * registered temporary name beside its destination; commit renames it into
 * place, and anything still registered is removed on failure, at exit and
 * after SIGINT/SIGTERM (the commands turn the signal into an error, unwind,
 * and end here).
 *
 * The registry is shared by threads: an online run's workers and the
 * sorter's spill thread each make and drop temporary files, so every
 * reach into it holds one lock (two workers once took the same counter,
 * one failing with "File exists", or freed one entry twice). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/tmppath.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **registered;
static size_t n_registered;
static unsigned counter;
static bool at_exit_set;

static void
forget (const char *path)
{
    pthread_mutex_lock (&lock);
    for (size_t i = 0; i < n_registered; i++)
        if (strcmp (registered[i], path) == 0) {
            bson_free (registered[i]);
            registered[i] = registered[--n_registered];
            break;
        }
    pthread_mutex_unlock (&lock);
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
    pthread_mutex_lock (&lock);
    path = bson_strdup_printf ("%s/.%s.remodel-%ld-%u", dir, base, (long) getpid (), counter++);
    if (!at_exit_set)
        at_exit_set = atexit (rm_tmppath_remove_all) == 0;
    registered = bson_realloc (registered, (n_registered + 1) * sizeof *registered);
    registered[n_registered++] = bson_strdup (path);
    pthread_mutex_unlock (&lock);
    bson_free (copy1);
    bson_free (copy2);
    return path;
}

bool
rm_tmppath_is_temporary (const char *base)
{
    const char *tag = strstr (base, ".remodel-");
    const char *p;
    if (base[0] != '.' || !tag)
        return false;
    /* the last ".remodel-" followed by digits, '-', digits to the end,
     * after a NAME of at least one byte */
    for (const char *t = tag; (t = strstr (t + 1, ".remodel-"));)
        tag = t;
    if (tag < base + 2)
        return false;
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

const char *
rm_tmpdir (const char *tmpdir)
{
    const char *env = getenv ("TMPDIR");
    if (tmpdir && *tmpdir)
        return tmpdir;
    return env && *env ? env : "/tmp";
}

/* The PID in a temporary name (one rm_tmppath_is_temporary accepts), or 0
 * when it is not one a process can have. */
static long
pid_of (const char *base)
{
    const char *tag = strstr (base, ".remodel-");
    long pid;
    for (const char *t = tag; t && (t = strstr (t + 1, ".remodel-"));)
        tag = t;
    if (!tag)
        return 0;
    errno = 0;
    pid = strtol (tag + 9, NULL, 10);
    return errno || pid <= 0 || pid > INT_MAX ? 0 : pid;
}

/* When process pid started, in seconds since the epoch, from /proc: its
 * start in clock ticks after boot (the 22nd field of /proc/PID/stat, the
 * first ones after the command name in parentheses) plus the boot time
 * (btime in /proc/stat). -1 when /proc cannot say. */
static double
started_at (long pid)
{
    char path[64], buf[1024], *p;
    unsigned long long ticks = 0, btime = 0;
    long hz = sysconf (_SC_CLK_TCK);
    FILE *f;
    size_t n;
    int field;

    snprintf (path, sizeof path, "/proc/%ld/stat", pid);
    if (!(f = fopen (path, "r")))
        return -1;
    n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf[n] = '\0';
    /* The command name may hold spaces and ')': the fields start after the
     * last ')', with field 3 (the state). */
    if (!(p = strrchr (buf, ')')))
        return -1;
    for (field = 2; field < 22 && p; field++)
        p = strchr (p + 1, ' ');
    if (!p || sscanf (p + 1, "%llu", &ticks) != 1)
        return -1;
    if (!(f = fopen ("/proc/stat", "r")))
        return -1;
    while (fgets (buf, sizeof buf, f))
        if (sscanf (buf, "btime %llu", &btime) == 1)
            break;
    fclose (f);
    if (btime == 0 || hz <= 0)
        return -1;
    return (double) btime + (double) ticks / (double) hz;
}

/* How much earlier than the process a file must have last changed for the
 * process not to be its maker: the boot time /proc gives is whole seconds
 * and moves when the clock is set, so a live run's own file is never
 * taken for older than its run. */
#define REUSE_MARGIN 60

bool
rm_tmppath_owner_gone (long pid, time_t changed)
{
    double start;
    if (pid <= 0 || pid == (long) getpid ())
        return false;
    if (kill ((pid_t) pid, 0) != 0 && errno == ESRCH)
        return true; /* no process has that PID */
    /* A process has it (kill succeeded, or we may not signal it). If it
     * started well after the file last changed, it cannot have made the
     * file: the PID was reused, and the maker is gone. */
    start = started_at (pid);
    return start > 0 && start > (double) changed + REUSE_MARGIN;
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
        struct stat st;
        char *path;
        if (!rm_tmppath_is_temporary (e->d_name))
            continue;
        path = bson_strdup_printf ("%s/%s", dir, e->d_name);
        /* The later of the last write and the last change of the inode (a
         * rename sets it: a directory moved aside by a commit is new). Only
         * this user's: on a shared /tmp another user's killed run left its
         * files for that user's next run, whose PIDs ours cannot judge. */
        if (lstat (path, &st) == 0 && st.st_uid == geteuid () &&
            rm_tmppath_owner_gone (pid_of (e->d_name),
                                   st.st_ctime > st.st_mtime ? st.st_ctime : st.st_mtime) &&
            rm_rmtree (path))
            removed++;
        bson_free (path);
    }
    closedir (d);
    return removed;
}

/* The directory path lands in (for "out/" the parent of out). */
static char *
parent_of (const char *path)
{
    char *copy = bson_strdup (path), *dir;
    size_t len = strlen (copy);
    while (len > 1 && copy[len - 1] == '/')
        copy[--len] = '\0';
    dir = bson_strdup (dirname (copy));
    bson_free (copy);
    return dir;
}

size_t
rm_tmppath_sweep_for (const char *dst, const char *tmpdir, char *where, size_t where_len)
{
    const char *dirs[2];
    char *parent = dst && *dst && strcmp (dst, "-") != 0 ? parent_of (dst) : NULL;
    struct stat a, b;
    size_t n = 0, total = 0;

    if (where_len)
        where[0] = '\0';
    dirs[n++] = rm_tmpdir (tmpdir);
    /* Once for one directory, however it is spelled. */
    if (parent && !(stat (parent, &a) == 0 && stat (dirs[0], &b) == 0 && a.st_dev == b.st_dev &&
                    a.st_ino == b.st_ino))
        dirs[n++] = parent;
    for (size_t i = 0; i < n; i++) {
        size_t removed = rm_tmppath_sweep (dirs[i]);
        if (removed && where_len) {
            size_t used = strlen (where);
            snprintf (where + used, where_len - used, "%s%s", used ? " and " : "", dirs[i]);
        }
        total += removed;
    }
    bson_free (parent);
    return total;
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
    for (;;) {
        char *p = NULL;
        pthread_mutex_lock (&lock);
        if (n_registered > 0)
            p = registered[--n_registered];
        pthread_mutex_unlock (&lock);
        if (!p)
            return;
        rm_rmtree (p);
        bson_free (p);
    }
}
