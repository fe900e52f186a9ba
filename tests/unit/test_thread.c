/* The threads remodel starts (common/base/thread.c): the operator's
 * signals are blocked in them, for the main thread to unwind; a fault is
 * not, so a mapped input cut short under a thread's read is named by the
 * SIGBUS handler and exits 1, as under the main thread's (a fault blocked
 * in its thread kills the process unhandled, status 135, no message). */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remodel/error.h"
#include "test.h"
#include "thread.h"

static void *
read_mask (void *arg)
{
    pthread_sigmask (SIG_BLOCK, NULL, (sigset_t *) arg);
    return NULL;
}

static void
test_mask (void)
{
    pthread_t t;
    sigset_t mask;

    sigemptyset (&mask);
    T_CHECK (rm_thread_start (&t, read_mask, &mask) == 0);
    pthread_join (t, NULL);
    T_CHECK (sigismember (&mask, SIGINT) == 1);
    T_CHECK (sigismember (&mask, SIGTERM) == 1);
    T_CHECK (sigismember (&mask, SIGBUS) == 0);
    T_CHECK (sigismember (&mask, SIGSEGV) == 0);
}

static volatile const char *mapped;

static void *
touch (void *arg)
{
    (void) arg;
    return (void *) (intptr_t) mapped[8192]; /* past the end now: SIGBUS */
}

/* In a child: a file mapped, cut to nothing, then read by a thread. */
static void
test_cut_under_thread (void)
{
    char path[] = "/tmp/remodel-test-thread-XXXXXX", err[] = "/tmp/remodel-test-thread-err-XXXXXX";
    int fd = mkstemp (path), efd = mkstemp (err), status = 0;
    char buf[512] = "";
    ssize_t n;
    pid_t p;

    T_CHECK (fd >= 0 && efd >= 0 && ftruncate (fd, 65536) == 0);
    p = fork ();
    if (p == 0) {
        pthread_t t;
        dup2 (efd, 2);
        rm_signals_install ();
        rm_mapped_file = path;
        mapped = mmap (NULL, 65536, PROT_READ, MAP_SHARED, fd, 0);
        if (mapped == MAP_FAILED || ftruncate (fd, 0) != 0 || rm_thread_start (&t, touch, NULL))
            _exit (3);
        pthread_join (t, NULL);
        _exit (4); /* the read did not fault */
    }
    T_CHECK (waitpid (p, &status, 0) == p);
    T_CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 1);
    n = pread (efd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    T_CHECK (strstr (buf, path) != NULL);
    T_CHECK (strstr (buf, "the file was cut short while it was read (SIGBUS)") != NULL);
    close (fd);
    close (efd);
    unlink (path);
    unlink (err);
}

int
main (void)
{
    T_RUN (test_mask);
    T_RUN (test_cut_under_thread);
    return t_done ();
}
