/* One online command in a forked child (matrix.h): the online program's
 * own main runs in it, so a point costs a fork, not a process's start and
 * its dynamic loading. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "matrix.h"

/* The online program's waits (a retry's backoff from 250 ms, the lease's
 * polls) shortened 25 times: the in-memory server answers at once after a
 * cut, and the matrix would spend its time asleep. The program is linked
 * with --wrap=online_sleep_ms, so its callers reach this one; what they
 * wait for is still a condition on the monotonic clock. */
void __real_online_sleep_ms (int64_t ms);
void __wrap_online_sleep_ms (int64_t ms);
void
__wrap_online_sleep_ms (int64_t ms)
{
    __real_online_sleep_ms (ms > 0 ? (ms + 24) / 25 : ms);
}

/* The driver's own wait, likewise: after a cut it scans the server again
 * no sooner than its minimum heartbeat (500 ms), waiting in usleep. This
 * program's usleep stands in for libc's in the driver's calls (a symbol
 * of the executable comes first), and waits 25 times less. */
int
usleep (useconds_t us)
{
    struct timespec ts = {(time_t) (us / 25 / 1000000), (long) (us / 25 % 1000000) * 1000L};
    return nanosleep (&ts, NULL);
}

static int64_t
now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool mx_online_stdout;
const char *mx_online_interrupt_at;
void (*mx_online_at_fault) (pid_t pid);

static void
child (const mx_target_t *t, int fd, const char *fault, const char *log, char **argv, int argc)
{
    int null = open ("/dev/null", O_WRONLY);
    dup2 (fd, 2);
    if (mx_online_stdout)
        dup2 (fd, 1);
    else if (null >= 0)
        dup2 (null, 1);
    if (fault)
        setenv ("REMODEL_ONLINE_FAULT", fault, 1);
    else
        unsetenv ("REMODEL_ONLINE_FAULT");
    if (log)
        setenv ("REMODEL_ONLINE_FAULT_LOG", log, 1);
    else
        unsetenv ("REMODEL_ONLINE_FAULT_LOG");
    int rc = remodel_online_main (argc, argv);
    fflush (stdout);
    fflush (stderr);
    _exit (rc);
}

bool
mx_online (const mx_target_t *t, mx_run_t *r, const char *fault, const char *log, bool kill_at,
           const char *cmd, ...)
{
    char *argv[32];
    int argc = 0, fds[2], status;
    size_t got = 0;
    va_list ap;
    const char *a;
    pid_t pid;
    /* Generous: a point takes milliseconds; only a hang reaches it. */
    int64_t deadline = now_ms () + 120000;
    bool timed_out = false, interrupted = false, at_fault = false;

    argv[argc++] = (char *) "remodel-online";
    argv[argc++] = (char *) cmd;
    argv[argc++] = (char *) t->plan;
    argv[argc++] = (char *) "--uri";
    argv[argc++] = (char *) t->uri;
    va_start (ap, cmd);
    while ((a = va_arg (ap, const char *)) && argc < 31)
        argv[argc++] = (char *) a;
    va_end (ap);
    argv[argc] = NULL;

    memset (r, 0, sizeof *r);
    if (pipe (fds)) {
        snprintf (r->err, sizeof r->err, "pipe: %s", strerror (errno));
        return false;
    }
    fflush (stdout);
    fflush (stderr);
    if ((pid = mx_fork ()) < 0) {
        snprintf (r->err, sizeof r->err, "fork: %s", strerror (errno));
        close (fds[0]), close (fds[1]);
        return false;
    }
    if (pid == 0) {
        close (fds[0]);
        child (t, fds[1], fault, log, argv, argc);
    }
    close (fds[1]);
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int64_t left = deadline - now_ms ();
        ssize_t n;
        char sink[4096];
        if (left <= 0) {
            timed_out = true;
            kill (pid, SIGKILL);
            break;
        }
        if (poll (&p, 1, (int) left) < 0 && errno != EINTR)
            break;
        if (!(p.revents & (POLLIN | POLLHUP)))
            continue;
        if (got + 1 < sizeof r->err)
            n = read (fds[0], r->err + got, sizeof r->err - 1 - got);
        else
            n = read (fds[0], sink, sizeof sink);
        if (n <= 0)
            break;
        if (got + 1 < sizeof r->err)
            got += (size_t) n;
        r->err[got] = '\0';
        if (mx_online_interrupt_at && !interrupted && strstr (r->err, mx_online_interrupt_at)) {
            /* follow's rounds end at SIGINT, as at a Ctrl-C. */
            kill (pid, SIGINT);
            interrupted = true;
        }
        if (mx_online_at_fault && !at_fault && strstr (r->err, "fault layer: call ")) {
            at_fault = true;
            mx_online_at_fault (pid);
        }
        if (kill_at && !r->killed && strstr (r->err, "fault layer: call ")) {
            /* Held at the call by the spec's delay: killed before sending it. */
            kill (pid, SIGKILL);
            r->killed = true;
        }
    }
    close (fds[0]);
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    r->rc = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
    if (timed_out) {
        snprintf (r->err + got, sizeof r->err - got, "\n(killed: no end within 120 s)");
        return false;
    }
    if (kill_at && !r->killed) {
        snprintf (r->err + got, sizeof r->err - got, "\n(the faulted call never came)");
        return false;
    }
    return true;
}

const char *
mx_fired (const mx_run_t *r, char *buf, size_t cap)
{
    const char *p = strstr (r->err, "fault layer: call ");
    size_t n = 0;
    if (!p) {
        snprintf (buf, cap, "no fault fired");
        return buf;
    }
    p += strlen ("fault layer: ");
    while (p[n] && p[n] != '\n' && n + 1 < cap)
        n++;
    memcpy (buf, p, n);
    buf[n] = '\0';
    return buf;
}
