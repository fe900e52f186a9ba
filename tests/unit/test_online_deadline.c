/* finalize's bound in a call a signal cuts short (shell-ext/conn/
 * online_signal.c, online_interrupt.h), without a server: the call's
 * function only sleeps (its client, made from a URI nothing listens on,
 * is never used). No deadline: the call runs to its end. A deadline
 * passed while it waits: given up (RM_ERR_WINDOW), left to finish on its
 * own, before it did. A deadline already passed: not begun at all, its
 * argument freed. The check a loop makes between batches. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online.h"
#include "online_interrupt.h"
#include "remodel/error.h"
#include "test.h"

static online_opts_t opts;
static online_t on;
static online_run_t on_run;
static atomic_int begun, finished, freed;

typedef struct {
    int64_t ms;
} nap_t;

static bool
nap (mongoc_client_t *client, void *arg, bson_error_t *why)
{
    const nap_t *n = arg;
    struct timespec ts = {n->ms / 1000, (n->ms % 1000) * 1000000L};
    (void) client;
    (void) why;
    atomic_fetch_add (&begun, 1);
    while (nanosleep (&ts, &ts))
        ;
    atomic_fetch_add (&finished, 1);
    return true;
}

static void
nap_free (void *arg)
{
    atomic_fetch_add (&freed, 1);
    free (arg);
}

static nap_t *
nap_of (int64_t ms)
{
    nap_t *n = malloc (sizeof *n);
    n->ms = ms;
    atomic_store (&begun, 0);
    atomic_store (&finished, 0);
    atomic_store (&freed, 0);
    return n;
}

static bool
call (nap_t *n, bool *stopped, bson_error_t *err)
{
    bson_error_t why;
    memset (err, 0, sizeof *err);
    return online_call_interruptible (&on, nap, n, nap_free, "a nap", "while napping", stopped,
                                      &why, err);
}

static void
test_no_deadline (void)
{
    nap_t *n = nap_of (200);
    bson_error_t err;
    bool stopped;
    online_call_deadline (0);
    T_CHECK (call (n, &stopped, &err));
    T_CHECK (!stopped);
    /* Ended first: the argument is the caller's again. */
    T_CHECK (atomic_load (&finished) == 1);
    T_CHECK (atomic_load (&freed) == 0);
    free (n);
}

static void
test_given_up_at_the_deadline (void)
{
    nap_t *n = nap_of (5000);
    bson_error_t err;
    bool stopped;
    online_call_deadline (online_mono_ms () + 300);
    T_CHECK (!call (n, &stopped, &err));
    /* Back before the nap ended: the call is left with its argument. */
    T_CHECK (stopped);
    T_CHECK (atomic_load (&begun) == 1);
    T_CHECK (atomic_load (&finished) == 0);
    T_CHECK (err.domain == RM_ERROR_DOMAIN && err.code == RM_ERR_WINDOW);
    T_CHECK (strstr (err.message, "waiting for a nap (") != NULL);
    T_CHECK (strstr (err.message, "given up at the window's bound") != NULL);
    online_call_deadline (0);
}

static void
test_not_begun_past_the_deadline (void)
{
    nap_t *n = nap_of (5000);
    bson_error_t err;
    bool stopped;
    online_call_deadline (online_mono_ms () - 1);
    T_CHECK (!call (n, &stopped, &err));
    T_CHECK (stopped);
    T_CHECK (atomic_load (&begun) == 0);
    T_CHECK (atomic_load (&freed) == 1);
    T_CHECK (err.domain == RM_ERROR_DOMAIN && err.code == RM_ERR_WINDOW);
    online_call_deadline (0);
}

static void
test_check_between_batches (void)
{
    bson_error_t err;
    memset (&err, 0, sizeof err);
    online_call_deadline (0);
    T_CHECK (online_call_deadline_check ("draining", &err));
    online_call_deadline (online_mono_ms () + 60000);
    T_CHECK (online_call_deadline_check ("draining", &err));
    online_call_deadline (online_mono_ms () - 1);
    T_CHECK (!online_call_deadline_check ("draining", &err));
    T_CHECK (err.code == RM_ERR_WINDOW);
    T_CHECK_STR (err.message, "draining, given up at the window's bound");
    online_call_deadline (0);
}

int
main (void)
{
    mongoc_init ();
    opts.quiet = true;
    online_init (&on, &on_run);
    on.own_run->o = &opts;
    snprintf (on.own_run->names.name, sizeof on.run->names.name, "p.json");
    on.client = mongoc_client_new ("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100");
    T_RUN (test_no_deadline);
    T_RUN (test_given_up_at_the_deadline);
    T_RUN (test_not_begun_past_the_deadline);
    T_RUN (test_check_between_batches);
    /* The nap given up still sleeps on its thread: the process ends with
     * it, as remodel-online does. */
    return t_done ();
}
