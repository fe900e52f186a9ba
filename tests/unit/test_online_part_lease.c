/* A partition's lease decisions (shell-ext/state/online_lease_rule.c, as
 * online_workers.c uses them) without a server: each worker of a process
 * its own holder (two workers of one live process keep each other out),
 * a worker of a process gone taken over at once, one of a stopped
 * process (alive) or of another host only once its lease lapsed, a
 * worker stalled past its lease stops writing, a newer epoch fences it;
 * and the workers' names. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "online_state.h"
#include "test.h"

#define LEASE 2000
#define MARGIN (LEASE / 3)

/* Worker w of process pid on this host, as online_workers.c names it. */
static void
worker_of (long pid, int w, char *buf, size_t cap)
{
    char host[256] = "", process[300];
    gethostname (host, sizeof host - 1);
    snprintf (process, sizeof process, "%s:%ld:1700000000000", host, pid);
    online_lease_worker (process, w, buf, cap);
}

static void
test_names (void)
{
    char w[128], host[256] = "", want[400];
    gethostname (host, sizeof host - 1);
    worker_of ((long) getpid (), 3, w, sizeof w);
    snprintf (want, sizeof want, "%s:%ld:1700000000000:w3", host, (long) getpid ());
    T_CHECK_STR (w, want);
    /* A name too long is cut before the worker's number, never after. */
    online_lease_worker ("a-very-long-host-name:123:1700000000000", 12, w, 44);
    T_CHECK (strlen (w) < 44 && !strcmp (w + strlen (w) - 4, ":w12"));
    T_CHECK (!strncmp (w, "a-very-long-host-name:123:", 26));
}

static void
test_two_workers (void)
{
    char w1[128], w2[128];
    worker_of ((long) getpid (), 1, w1, sizeof w1);
    worker_of ((long) getpid (), 2, w2, sizeof w2);
    /* This process is alive: its other worker's lease holds. */
    T_CHECK (!online_lease_holder_dead (w2));
    T_CHECK (online_lease_blocks (true, w2, w1, 5000, 1000));
    T_CHECK (!online_lease_blocks (true, w2, w1, 1000, 1000)); /* lapsed */
    T_CHECK (!online_lease_blocks (true, w1, w1, 5000, 1000)); /* its own */
    T_CHECK (!online_lease_blocks (true, "", w1, 5000, 1000)); /* released */
}

static void
test_gone_and_stopped (void)
{
    char me[128], gone[128], stopped[128], far[128];
    pid_t child;
    int status;
    worker_of ((long) getpid (), 1, me, sizeof me);
    /* A process that ended: its worker's partition is taken at once. */
    child = fork ();
    if (child == 0)
        _exit (0);
    waitpid (child, &status, 0);
    worker_of ((long) child, 2, gone, sizeof gone);
    T_CHECK (online_lease_holder_dead (gone));
    T_CHECK (!online_lease_blocks (true, gone, me, 5000, 1000));
    T_CHECK (!online_lease_claim_blocks (4, 3, 900, LEASE, 1000, gone, me));
    /* A stopped one (SIGSTOP) is alive: only its lease's lapse frees it. */
    child = fork ();
    if (child == 0) {
        pause ();
        _exit (0);
    }
    kill (child, SIGSTOP);
    worker_of ((long) child, 1, stopped, sizeof stopped);
    T_CHECK (!online_lease_holder_dead (stopped));
    T_CHECK (online_lease_blocks (true, stopped, me, 5000, 1000));
    T_CHECK (!online_lease_blocks (true, stopped, me, 5000, 5000));
    T_CHECK (online_lease_claim_blocks (4, 3, 900, LEASE, 1000, stopped, me));
    T_CHECK (!online_lease_claim_blocks (4, 3, 900, LEASE, 900 + LEASE, stopped, me));
    kill (child, SIGKILL);
    waitpid (child, &status, 0);
    /* Another host's worker: never judged gone. */
    snprintf (far, sizeof far, "elsewhere.example:%ld:1:w1", (long) getpid ());
    T_CHECK (!online_lease_holder_dead (far));
    T_CHECK (online_lease_blocks (true, far, me, 5000, 1000));
}

static void
test_stalled_worker (void)
{
    /* Renewed at 0: it writes until the margin before the lease lapses,
     * and not from then on, whatever the server says. */
    T_CHECK (online_lease_verdict (false, LEASE - MARGIN - 1, 0, LEASE, MARGIN) == ONLINE_LEASE_OK);
    T_CHECK (online_lease_verdict (false, LEASE - MARGIN, 0, LEASE, MARGIN) == ONLINE_LEASE_STALE);
    /* Taken over (a newer epoch's fence seen): lost at once. */
    T_CHECK (online_lease_fenced (2, 1));
    T_CHECK (!online_lease_fenced (1, 1));
    T_CHECK (online_lease_verdict (true, 1, 0, LEASE, MARGIN) == ONLINE_LEASE_LOST);
    /* Each partition counts its own epochs from 1. */
    T_CHECK (online_lease_next_epoch (0, 0) == 1);
    T_CHECK (online_lease_next_epoch (3, 2) == 4);
}

int
main (void)
{
    T_RUN (test_names);
    T_RUN (test_two_workers);
    T_RUN (test_gone_and_stopped);
    T_RUN (test_stalled_worker);
    return t_done ();
}
