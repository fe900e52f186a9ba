/* The online program's clock: the monotonic milliseconds that time
 * batches, leases, windows and progress lines, the wall clock's that the
 * state database's records carry, and a sleep. The lowest
 * file of shell-ext/: it calls nothing of the program, so the files that
 * tell time need not call up into the runner. */
#include <time.h>

#include "online.h"

void
online_sleep_ms (int64_t ms)
{
    struct timespec ts = {(time_t) (ms / 1000), (long) (ms % 1000) * 1000000L};
    if (ms > 0)
        nanosleep (&ts, NULL);
}

int64_t
online_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *
online_dur (char *buf, int64_t ms)
{
    if (ms > -1000 && ms < 1000)
        snprintf (buf, ONLINE_DUR_LEN, "%lld ms", (long long) ms);
    else
        snprintf (buf, ONLINE_DUR_LEN, "%.1f s", (double) ms / 1000.0);
    return buf;
}

/* The wall clock: for what is stored and read by other processes and
 * hosts (checkpoints' and partitions' update times, the throttle's). */
int64_t
online_wall_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
