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
 * host (online_lease.c).
 *
 * A server call that may itself last many seconds, with nothing to poll
 * in between (the oplog's last entry on FerretDB), runs on a thread and a
 * connection of its own while the command's thread waits on the flag
 * (online_interrupt.h): the driver retries its socket waits after EINTR,
 * so a signal alone would not end the call. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online_interrupt.h"

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

/* Set from the lease's renewals' thread, read by the command's. */
static volatile sig_atomic_t handover;

void
online_stop_for_handover (void)
{
    handover = 1;
}

bool
online_stop_handover (void)
{
    return handover && !stop_signal;
}

int
online_stop_requested (void)
{
    return stop_signal ? stop_signal : handover ? ONLINE_STOP_HANDOVER : 0;
}

const char *
online_stop_name (void)
{
    return stop_signal == SIGINT    ? "SIGINT"
           : stop_signal == SIGTERM ? "SIGTERM"
           : !stop_signal && handover ? "finalize's request for the lease"
                                      : "a signal";
}

bool
online_stop_check (online_t *on, const char *where, bson_error_t *err)
{
    if (!online_stop_requested ())
        return true;
    rm_error_set (err, RM_ERR_INTERRUPTED, "plan %s: stopped by %s %s", on->run->names.name,
                  online_stop_name (), where);
    return false;
}

bool
online_stop_check_step (online_t *on, const rm_step_t *s, const char *ns, int64_t seen,
                        const char *kept, bson_error_t *err)
{
    char where[600];
    if (!online_stop_requested ())
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

/* ---- a call a signal cuts short (online_interrupt.h) ---- */

/* How often the wait looks at the stop flag, and after how long it says
 * what it waits for (finalize's phases say so from two seconds on). */
#define CALL_POLL_MS 100
#define CALL_SAY_MS 2000

/* The calls' threads still running, left ones too: until it is 0 the
 * driver's global state is in use (online_calls_settle). */
static int calls_running;
/* Set at the program's end: a test's slow call (ONLINE_HOOK_SLOW_CALL_MS)
 * waits no longer, so that it runs while the program ends. */
static int calls_released;

/* finalize's deadline (online_mono_ms; 0: none). Set and cleared by the
 * command's thread only, around phases in which no worker runs a call. */
static int64_t call_deadline;

void
online_call_deadline (int64_t at_ms)
{
    call_deadline = at_ms;
}

static bool
past_deadline (void)
{
    return call_deadline > 0 && online_mono_ms () >= call_deadline;
}

bool
online_call_deadline_check (const char *where, bson_error_t *err)
{
    if (!past_deadline ())
        return true;
    rm_error_set (err, RM_ERR_WINDOW, "%s, given up at the window's bound", where);
    return false;
}

/* One call, shared by its thread and the waiter; whichever is last to
 * let go frees it (the waiter's side may go first, on a signal). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mongoc_uri_t *uri;
    online_call_fn fn;
    void *arg;
    void (*arg_free) (void *);
    int64_t delay_ms;
    bool done, left, ok;
    bson_error_t why;
} call_t;

static void
call_free (call_t *c)
{
    if (c->left && c->arg_free)
        c->arg_free (c->arg);
    mongoc_uri_destroy (c->uri);
    pthread_cond_destroy (&c->cv);
    pthread_mutex_destroy (&c->mu);
    free (c);
}

static void *
call_run (void *p)
{
    call_t *c = p;
    bson_error_t why;
    mongoc_client_t *client = mongoc_client_new_from_uri_with_error (c->uri, &why);
    bool ok = false, last;

    /* A test's stand-in for a server that takes this long to answer
     * (the tests' build's REMODEL_ONLINE_SLOW_CALL_MS; 0 in the product). */
    for (int64_t end = online_mono_ms () + c->delay_ms;
         online_mono_ms () < end && !__atomic_load_n (&calls_released, __ATOMIC_ACQUIRE);)
        online_sleep_ms (10);
    /* Under the tests' fault layer as the command's own connection is: its
     * calls are the command's, made while the command waits for them, so
     * they are numbered with the command's. */
    if (client && online_fault_install (client, &why))
        ok = c->fn (client, c->arg, &why);
    if (client)
        mongoc_client_destroy (client);
    pthread_mutex_lock (&c->mu);
    c->ok = ok;
    c->why = why;
    c->done = true;
    last = c->left;
    pthread_cond_signal (&c->cv);
    pthread_mutex_unlock (&c->mu);
    if (last)
        call_free (c);
    __atomic_sub_fetch (&calls_running, 1, __ATOMIC_RELEASE);
    return NULL;
}

bool
online_call_interruptible (online_t *on, online_call_fn fn, void *arg,
                           void (*arg_free) (void *), const char *waits, const char *where,
                           bool *stopped, bson_error_t *why, bson_error_t *err)
{
    call_t *c = calloc (1, sizeof *c);
    pthread_t th;
    pthread_attr_t attr;
    sigset_t old;
    int64_t t0 = online_mono_ms (), ms;
    bool said = false, ok, started;
    const char *trace = getenv ("REMODEL_ONLINE_TRACE");

    *stopped = false;
    memset (why, 0, sizeof *why);
    /* Past the bound already: a call that would only keep the window
     * open is not begun (arg stays the caller's, as when fn ends). */
    if (past_deadline ()) {
        free (c);
        if (arg_free)
            arg_free (arg);
        *stopped = true;
        rm_error_set (err, RM_ERR_WINDOW, "waiting for %s, given up at the window's bound",
                      waits);
        return false;
    }
    if (!c) {
        bson_set_error (why, MONGOC_ERROR_CLIENT, 0, "out of memory");
        return false;
    }
    pthread_mutex_init (&c->mu, NULL);
    pthread_cond_init (&c->cv, NULL);
    c->uri = mongoc_uri_copy (mongoc_client_get_uri (on->client));
    c->fn = fn;
    c->arg = arg;
    c->arg_free = arg_free;
    c->delay_ms = online_hook_ms (ONLINE_HOOK_SLOW_CALL_MS);
    /* The signal is the waiter's to see: the call's thread blocks it. */
    online_signal_block (&old);
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    __atomic_add_fetch (&calls_running, 1, __ATOMIC_ACQ_REL);
    started = pthread_create (&th, &attr, call_run, c) == 0;
    if (!started)
        __atomic_sub_fetch (&calls_running, 1, __ATOMIC_RELEASE);
    pthread_attr_destroy (&attr);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    if (!started) {
        bson_set_error (why, MONGOC_ERROR_CLIENT, 0, "cannot start a thread for %s", waits);
        c->arg_free = NULL;
        call_free (c);
        return false;
    }
    pthread_mutex_lock (&c->mu);
    while (!c->done && !online_stop_requested () && !past_deadline ()) {
        struct timespec until;
        clock_gettime (CLOCK_REALTIME, &until);
        until.tv_nsec += CALL_POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait (&c->cv, &c->mu, &until);
        if (!said && !c->done && online_mono_ms () - t0 >= CALL_SAY_MS) {
            said = true;
            online_say_note (on, "waiting for %s (Ctrl-C stops it)", waits);
        }
    }
    if (!c->done) {
        /* Left to finish on its own: its connection and arg go with it. */
        c->left = true;
        pthread_mutex_unlock (&c->mu);
        *stopped = true;
        if (online_stop_requested ())
            return online_stop_check (on, where, err);
        rm_error_set (err, RM_ERR_WINDOW, "waiting for %s (%s), given up at the window's "
                      "bound", waits, ONLINE_DUR (online_mono_ms () - t0));
        return false;
    }
    pthread_mutex_unlock (&c->mu);
    ms = online_mono_ms () - t0;
    if (trace && *trace && strcmp (trace, "0"))
        online_say_trace (ms * 1000, waits, " (a connection of its own)");
    ok = c->ok;
    if (!ok)
        *why = c->why;
    c->arg_free = NULL;
    call_free (c);
    return ok;
}

bool
online_calls_settle (int64_t ms)
{
    int64_t end = online_mono_ms () + ms;
    __atomic_store_n (&calls_released, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n (&calls_running, __ATOMIC_ACQUIRE) > 0) {
        if (online_mono_ms () >= end)
            return false;
        online_sleep_ms (10);
    }
    return true;
}
