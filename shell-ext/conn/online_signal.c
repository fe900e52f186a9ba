/* Stopping on SIGINT or SIGTERM (online.h): the commands that hold a
 * plan's lease (run, sync, follow, finalize, rollback) catch them, so that Ctrl-C
 * or a service manager's stop leaves a checkpoint and a released lease
 * rather than a lease that blocks the next run until it expires.
 *
 * The handler only notes the signal. The loops poll online_stop_requested
 * between two batches (or two documents, where each is a step of its
 * own), finish what they began, save their checkpoint and unwind through
 * the ordinary error path with RM_ERR_INTERRUPTED; the lease is released
 * on the way out and main says so in one line, exit 128 + the signal.
 * What must not stop halfway (a switch's renames, journaled) simply does
 * not poll: it completes. The handler is reset after the first signal
 * (SA_RESETHAND), so a second Ctrl-C ends the process at once, as it did
 * before: its lease is then taken over at once by the next run on this
 * host (online_lease.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "online.h"

static volatile sig_atomic_t stop_signal;
static bool tty;

/* On a terminal the first Ctrl-C is answered at once (a batch on a slow
 * server may take a while); write(2) is what a handler may call. In a
 * script, the one line main prints at the end is all. */
static void
on_stop (int sig)
{
    static const char said[] = "\nremodel: stopping after this batch (again: at once)\n";
    if (stop_signal)
        return;
    stop_signal = sig;
    if (tty && write (STDERR_FILENO, said, sizeof said - 1) < 0)
        return;
}

/* No SA_RESTART: a sleep between batches (a --pause, a retry's backoff,
 * a pause's wait) ends early, so the stop is seen at once. The driver's
 * own waits on sockets retry after EINTR. */
void
online_signal_install (void)
{
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset (&sa.sa_mask);
    tty = isatty (STDERR_FILENO);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
}

int
online_stop_requested (void)
{
    return stop_signal;
}

const char *
online_stop_name (void)
{
    return stop_signal == SIGINT ? "SIGINT" : stop_signal == SIGTERM ? "SIGTERM" : "a signal";
}

bool
online_stop_check (online_t *on, const char *where, bson_error_t *err)
{
    if (!stop_signal)
        return true;
    rm_error_set (err, RM_ERR_INTERRUPTED, "plan %s: stopped by %s %s", on->names.name,
                  online_stop_name (), where);
    return false;
}

bool
online_stop_check_step (online_t *on, const rm_step_t *s, const char *ns, int64_t seen,
                        const char *kept, bson_error_t *err)
{
    char where[600];
    if (!stop_signal)
        return true;
    snprintf (where, sizeof where, "after step %zu (%s) %s: %lld read, %s", s->index, s->op, ns,
              (long long) seen, kept);
    return online_stop_check (on, where, err);
}

void
online_signal_block (sigset_t *old)
{
    sigset_t set;
    sigemptyset (&set);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGTERM);
    pthread_sigmask (SIG_BLOCK, &set, old);
}
