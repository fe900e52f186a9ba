/* A server call a signal can cut short (online_signal.c), for the few
 * calls that may take many seconds with nothing to poll in between: on
 * FerretDB 1.x the oplog's last entry is found by reading all of
 * local.oplog.rs (16 s at remodel-gen scale 20), and SIGINT or SIGTERM
 * must still be acted on within a second.
 *
 * online_call_interruptible runs fn on a thread of its own, with a
 * connection of its own (the same URI), and waits for it, polling the
 * stop flag ten times a second. fn reads the server into job memory only:
 * arg, allocated by the caller. When fn ends first, arg is the caller's
 * again (to read and free), *why fn's error where it returned false.
 * When a signal comes first, the call is left to finish on its own (its
 * thread frees arg with arg_free and closes its connection; the
 * program's end waits a second for it, online_calls_settle) and
 * RM_ERR_INTERRUPTED is set in err, "plan P: stopped by SIGINT WHERE".
 * A wait of two seconds or more says on the terminal what it waits for
 * (waits), unless --quiet. Returns false on the stop (err) or when fn
 * failed or no connection could be made (*why).
 *
 * finalize's bound on its window of stopped writes reaches into these
 * calls, the ones that take its time on a slow server: from the deadline
 * set by online_call_deadline (online_mono_ms; 0: none) on, a call still
 * waiting is left as on a signal (*stopped), and one asked after it is
 * not begun, with RM_ERR_WINDOW in err ("waiting for WAITS, given up at
 * the window's bound"), for finalize to say with its own words. finalize
 * sets it only while nothing is switched: no call after the first rename
 * is ever given up. online_call_deadline_check is the same bound for a
 * loop between two of its batches (where: what it was doing). */
#ifndef ONLINE_INTERRUPT_H
#define ONLINE_INTERRUPT_H

#include "online.h"

typedef bool (*online_call_fn) (mongoc_client_t *client, void *arg, bson_error_t *why);

bool online_call_interruptible (online_t *on, online_call_fn fn, void *arg,
                                void (*arg_free) (void *), const char *waits, const char *where,
                                bool *stopped, bson_error_t *why, bson_error_t *err);
void online_call_deadline (int64_t at_ms);
bool online_call_deadline_check (const char *where, bson_error_t *err);
/* Waits up to ms for every call's thread to end, the ones left on a
 * signal or at the window's bound too; true once none runs. The program's
 * end asks before the driver's cleanup, which frees the global state
 * (the handshake's strings) that a call still running reads. */
bool online_calls_settle (int64_t ms);

#endif
