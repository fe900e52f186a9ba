/* Retrying after a transient error (online.h): the network, a primary
 * stepping down, a server shutting down or restarting. The caller loops;
 * this decides whether to go round again, and waits first, with a backoff
 * that doubles from 250 ms up to 8 s, for up to --retry-for from the
 * first error of the run. online_retry_batch: that, and a run of
 * retries ended, at the end of a batch loop's batch. */
#include <stdio.h>

#include "online.h"

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
