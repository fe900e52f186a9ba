/* Retrying after a transient error (online.h): the network, a primary
 * stepping down, a server shutting down or restarting. The caller loops;
 * this decides whether to go round again, and waits first, with a backoff
 * that doubles from 250 ms up to 8 s, for up to --retry-for from the
 * first error of the run. online_retry_batch: that, and a run of
 * retries ended, at the end of a batch loop's batch. online_retry_call:
 * the table's own, for one call (online_ops.c). */
#include <stdio.h>

#include "online.h"

/* online.h. Errors that pass: the network, a server that is not (yet)
 * primary or is shutting down, a failover. The server's codes
 * (error_codes.yml):
 * HostUnreachable 6, HostNotFound 7, NetworkTimeout 89, ShutdownInProgress
 * 91, PrimarySteppedDown 189, SocketException 9001, NotWritablePrimary
 * 10107, InterruptedAtShutdown 11600, InterruptedDueToReplStateChange
 * 11602, NotPrimaryNoSecondaryOk 13435, NotPrimaryOrSecondary 13436; and
 * MaxTimeMSExpired 50 and ExceededTimeLimit 262, which remodel never asks
 * for (it sets no maxTimeMS): FerretDB answers an operation cut short by
 * its shutdown with 50; CursorNotFound 43, a pass's cursor that timed
 * out while the run was paused (it is opened again). */
bool
online_transient (const bson_error_t *why)
{
    static const uint32_t codes[] = {6,    7,     43,    50,    89,    91,    189,
                                     262, 9001, 10107, 11600, 11602, 13435, 13436};
    if (why->domain == MONGOC_ERROR_STREAM || why->domain == MONGOC_ERROR_SERVER_SELECTION)
        return true;
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (why->code == codes[i])
            return true;
    return false;
}

bool
online_retry (online_t *on, online_retry_t *r, const bson_error_t *err)
{
    int64_t now = online_mono_ms (), wait;
    if (!on->transient)
        return false;
    on->transient = false;
    if (!r->since)
        r->since = now;
    if (now - r->since >= on->run->o->retry_for_ms)
        return false;
    wait = 250LL << (r->tries < 5 ? r->tries : 5);
    r->tries++;
    online_say_aside (on, "%s; retrying in %lld ms", err->message, (long long) wait);
    online_sleep_ms (wait);
    return true;
}

online_batch_end_t
online_retry_batch (online_t *on, online_retry_t *r, int64_t n, const bson_error_t *err)
{
    if (n < 0)
        return online_retry (on, r, err) ? ONLINE_BATCH_AGAIN : ONLINE_BATCH_FAILED;
    ONLINE_RETRY_RESET (*r);
    return n == 0 ? ONLINE_BATCH_DONE : ONLINE_BATCH_ON;
}

/* Sent again whoever the caller (issue 60): a call the driver found no
 * server for never went out (the connection cut, the next one's
 * handshake cut too), so any goes again, a write too; a read goes again
 * after any transient error. A write whose reply was lost is its
 * caller's to check. Not on a connection whose server never answered (a
 * wrong address fails at once) nor on the lease's renewals' (answered
 * false: they try again on their own timer, the lease's deadline
 * standing), nor once SIGINT or SIGTERM came (the caller stops). */
bool
online_retry_call (online_t *on, online_retry_t *r, bool read, bson_t *reply,
                   const bson_error_t *why)
{
    if (!on || !on->answered || !why || online_stop_requested () ||
        !(why->domain == MONGOC_ERROR_SERVER_SELECTION || (read && online_transient (why))))
        return false;
    on->transient = true;
    if (!online_retry (on, r, why))
        return false;
    if (reply) /* the driver fills it, failed or not */
        bson_destroy (reply);
    return true;
}
