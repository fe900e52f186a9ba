/* Which temporary names are remodel's, and when a name's maker is gone:
 * never our own PID or a live process that may have made the file; always
 * a PID no process has; and a live PID whose process started after the
 * file last changed (a reused PID). Then a sweep of a directory removes
 * exactly the names that qualify. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remodel/tmppath.h"
#include "test.h"

static void
test_patterns (void)
{
    T_CHECK (rm_tmppath_is_temporary (".out.archive.remodel-123-0"));
    T_CHECK (rm_tmppath_is_temporary (".remodel-spill.remodel-99-17"));
    T_CHECK (rm_tmppath_is_temporary ("..preview.archive.remodel-5-0.remodel-5-1"));
    T_CHECK (!rm_tmppath_is_temporary ("out.archive.remodel-123-0")); /* no dot first */
    T_CHECK (!rm_tmppath_is_temporary ("..remodel-1-2"));             /* no NAME */
    T_CHECK (!rm_tmppath_is_temporary (".x.remodel-1-"));
    T_CHECK (!rm_tmppath_is_temporary (".x.remodel--2"));
    T_CHECK (!rm_tmppath_is_temporary (".x.remodel-1-2.bak"));
    T_CHECK (!rm_tmppath_is_temporary (".x.remodel-1a-2"));
}

/* A child that lives until killed; its PID. */
static pid_t
live_child (void)
{
    pid_t p = fork ();
    if (p == 0) {
        pause ();
        _exit (0);
    }
    return p;
}

/* A PID no process has: a child's, once it is reaped. */
static pid_t
dead_pid (void)
{
    pid_t p = fork ();
    if (p == 0)
        _exit (0);
    waitpid (p, NULL, 0);
    return p;
}

static void
test_owner_gone (void)
{
    time_t now = time (NULL);
    pid_t live = live_child (), dead = dead_pid ();

    T_CHECK (!rm_tmppath_owner_gone ((long) getpid (), 0)); /* ours, however old */
    T_CHECK (!rm_tmppath_owner_gone (0, 0));
    T_CHECK (rm_tmppath_owner_gone ((long) dead, now));
    /* The live child may have made a file that changed now... */
    T_CHECK (!rm_tmppath_owner_gone ((long) live, now));
    T_CHECK (!rm_tmppath_owner_gone ((long) live, now - 30)); /* within the margin */
    /* ...but not one that last changed an hour before it started. */
    T_CHECK (rm_tmppath_owner_gone ((long) live, now - 3600));
    kill (live, SIGKILL);
    waitpid (live, NULL, 0);
}

static void
touch (const char *dir, const char *name)
{
    char path[512];
    int fd;
    snprintf (path, sizeof path, "%s/%s", dir, name);
    fd = open (path, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0)
        close (fd);
}

static bool
exists (const char *dir, const char *name)
{
    char path[512];
    struct stat st;
    snprintf (path, sizeof path, "%s/%s", dir, name);
    return lstat (path, &st) == 0;
}

static void
test_sweep (void)
{
    char tmpl[] = "/tmp/remodel-test-tmppath.XXXXXX";
    char *dir = mkdtemp (tmpl), dead_name[64], live_name[64], own_name[64], where[256], sub[512];
    pid_t live = live_child (), dead = dead_pid ();

    T_CHECK (dir != NULL);
    if (!dir)
        return;
    snprintf (dead_name, sizeof dead_name, ".out.tar.remodel-%ld-3", (long) dead);
    snprintf (live_name, sizeof live_name, ".out.tar.remodel-%ld-3", (long) live);
    snprintf (own_name, sizeof own_name, ".remodel-store.remodel-%ld-0", (long) getpid ());
    touch (dir, dead_name);
    touch (dir, live_name);
    touch (dir, own_name);
    /* A dead run's staging directory, with files in it. */
    snprintf (sub, sizeof sub, "%s/.odir.remodel-%ld-1", dir, (long) dead);
    mkdir (sub, 0755);
    touch (sub, "x.bson");
    /* Not remodel's pattern, though it looks close. */
    touch (dir, "out.tar.remodel-1-1");
    {
        char other[64];
        snprintf (other, sizeof other, ".x.remodel-%ld-1.keep", (long) dead);
        touch (dir, other);
    }

    T_CHECK (rm_tmppath_sweep (dir) == 2);
    T_CHECK (!exists (dir, dead_name));
    T_CHECK (!exists (dir, sub + strlen (dir) + 1));
    T_CHECK (exists (dir, live_name));
    T_CHECK (exists (dir, own_name));
    T_CHECK (exists (dir, "out.tar.remodel-1-1"));

    /* The destination's directory and the temporary one, here the same:
     * swept once; where names it. */
    touch (dir, dead_name);
    {
        char dst[512];
        snprintf (dst, sizeof dst, "%s/new.archive", dir);
        T_CHECK (rm_tmppath_sweep_for (dst, dir, where, sizeof where) == 1);
        T_CHECK_STR (where, dir);
        T_CHECK (rm_tmppath_sweep_for (dst, dir, where, sizeof where) == 0);
        T_CHECK_STR (where, "");
    }
    kill (live, SIGKILL);
    waitpid (live, NULL, 0);
    {
        char cmd[600];
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system (cmd) != 0)
            fprintf (stderr, "  cannot remove %s\n", dir);
    }
}

static void
test_tmpdir (void)
{
    setenv ("TMPDIR", "", 1);
    T_CHECK_STR (rm_tmpdir (NULL), "/tmp");
    T_CHECK_STR (rm_tmpdir (""), "/tmp");
    setenv ("TMPDIR", "/var/tmp", 1);
    T_CHECK_STR (rm_tmpdir (NULL), "/var/tmp");
    T_CHECK_STR (rm_tmpdir ("/x"), "/x");
    unsetenv ("TMPDIR");
    T_CHECK_STR (rm_tmpdir (NULL), "/tmp");
}

/* Threads making temporary files at once (an online run's workers, the
 * sorter's spill thread): each name distinct (the file made with O_EXCL),
 * every one registered, so rm_tmppath_remove_all leaves none behind;
 * half are dropped again on the way (rm_tmppath_remove). */
#define MAKERS 4
#define EACH 2000

static char racing_dir[256];
static int racing_failed[MAKERS];

static void *
make_many (void *arg)
{
    int *failed = arg;
    char dst[300];
    snprintf (dst, sizeof dst, "%s/remodel-store", racing_dir);
    for (int i = 0; i < EACH; i++) {
        char *p = rm_tmppath_new (dst);
        int fd = open (p, O_CREAT | O_EXCL | O_WRONLY, 0600);
        if (fd < 0)
            (*failed)++;
        else
            close (fd);
        if (i % 2)
            rm_tmppath_remove (p);
        bson_free (p);
    }
    return NULL;
}

static void
test_threads (void)
{
    pthread_t t[MAKERS];
    struct dirent *e;
    DIR *d;
    int left = 0, failed = 0;

    snprintf (racing_dir, sizeof racing_dir, "/tmp/remodel-tmppath-threads-%ld", (long) getpid ());
    T_CHECK (mkdir (racing_dir, 0700) == 0);
    for (int i = 0; i < MAKERS; i++)
        pthread_create (&t[i], NULL, make_many, &racing_failed[i]);
    for (int i = 0; i < MAKERS; i++) {
        pthread_join (t[i], NULL);
        failed += racing_failed[i];
    }
    T_CHECK (failed == 0);
    rm_tmppath_remove_all ();
    d = opendir (racing_dir);
    while (d && (e = readdir (d)))
        left += e->d_name[0] != '.' || (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."));
    if (d)
        closedir (d);
    T_CHECK (left == 0);
    rmdir (racing_dir);
}

int
main (void)
{
    T_RUN (test_patterns);
    T_RUN (test_owner_gone);
    T_RUN (test_sweep);
    T_RUN (test_tmpdir);
    T_RUN (test_threads);
    return t_done ();
}
