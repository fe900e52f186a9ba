/* status's lag line (online_cmd.h): how far the results of a plan
 * following a change log are behind it, in events, documents and
 * seconds, and when follow will have caught up.
 *
 * The seconds are the age of the oldest event after the recorded point:
 * its time in the log (an oplog entry's ts, a change event's clusterTime
 * or wallTime) against the server's clock; where the log gives no time
 * (mongo-java-server's events), the time since the recorded point was
 * taken, which the oldest event cannot be older than. The catch-up ETA
 * is those events at the rate follow's last round that applied any did
 * (followRate in the plan's record, online_follow.c): "-" before one did. */
#include <stdio.h>
#include <time.h>

#include "online_cmd.h"

/* A date of the plan's record at path, in seconds (0: none). */
static int64_t
record_date (const bson_t *rec, const char *path)
{
    bson_iter_t it;
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, path, &it) &&
        BSON_ITER_HOLDS_DATE_TIME (&it))
        return bson_iter_date_time (&it) / 1000;
    return 0;
}

static int64_t
record_int (const bson_t *rec, const char *path)
{
    bson_iter_t it;
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, path, &it) &&
        BSON_ITER_HOLDS_NUMBER (&it))
        return bson_iter_as_int64 (&it);
    return 0;
}

void
online_lag_line (online_t *on, const bson_t *rec, const online_changes_t *ch)
{
    int64_t now = time (NULL), taken = record_date (rec, "capture.taken"), server = 0, lag = -1;
    int64_t events = record_int (rec, "followRate.events"), ms = record_int (rec, "followRate.ms");
    bson_error_t why;
    char age[64], eta[32], rate[80] = "", when[64] = "";
    const char *bound = "";

    if (ch->oldest && online_server_now (on, &server, &why))
        lag = server / 1000 - (int64_t) ch->oldest;
    else if (taken) {
        lag = now - taken;
        bound = "at most ";
    }
    if (lag < 0 && (ch->oldest || taken))
        lag = 0; /* clocks a second apart */
    if (lag >= 0)
        snprintf (age, sizeof age, "%s%lld s", bound, (long long) lag);
    else
        snprintf (age, sizeof age, "not known");
    if (events > 0 && ms > 0) {
        online_duration (eta, sizeof eta, (ch->events * ms + events * 1000 - 1) / (events * 1000));
        /* Never "0 events/s" for a round that applied some: under one a
         * second, how many seconds an event took. */
        if (events * 1000 >= ms)
            snprintf (rate, sizeof rate, " at follow's %lld events/s",
                      (long long) (events * 1000 / ms));
        else
            snprintf (rate, sizeof rate, " at follow's one event every %.1f s",
                      (double) ms / 1000.0 / (double) events);
    } else {
        online_duration (eta, sizeof eta, -1);
        snprintf (rate, sizeof rate, " (no round of follow has applied an event yet)");
    }
    if (taken)
        snprintf (when, sizeof when, ", taken %lld s ago", (long long) (now - taken));
    online_say_out (on, "lag: %s: %lld events (%lld documents) after the recorded point%s; "
                    "catch-up ETA %s%s\n", age, (long long) ch->events, (long long) ch->kept,
                    when, eta, rate);
}
