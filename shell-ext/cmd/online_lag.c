/* status's lag line (online_cmd.h): how far the results of a plan
 * following a change log are behind it, in events, documents and
 * seconds, and when follow will have caught up.
 *
 * The seconds are the age of the oldest event after the recorded point
 * (online_lag_age, which status --json's toUri.lagMs reads too, so the
 * two agree): its time in the log (an oplog entry's ts, a change event's
 * clusterTime or wallTime), written by the source's clock, against the
 * source's clock now (its hello's localTime: with --to-uri the source's,
 * never the destination's nor ours). Where the log gives no time
 * (mongo-java-server's events), the time since the recorded point was
 * taken, which the oldest event cannot be older than, by our clock, which
 * stamped it. The catch-up ETA is those events at the rate follow's last
 * round that applied any did (followRate in the plan's record,
 * online_follow.c): "-" before one did. */
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

bool
online_lag_age (online_t *on, const bson_t *rec, const online_changes_t *ch, int64_t *ms,
                bool *at_most, bson_error_t *err)
{
    int64_t taken = record_date (rec, "capture.taken"), now = 0;
    online_t view, *src;
    online_run_t view_run;
    bool ok = true;

    *ms = 0;
    *at_most = false;
    if (ch->oldest) {
        src = online_pair_log (on, &view, &view_run);
        ok = online_server_now (src, &now, err);
        online_pair_log_end (on, src);
        *ms = now - (int64_t) ch->oldest * 1000;
    } else if (taken && ch->events) {
        *ms = ((int64_t) time (NULL) - taken) * 1000;
        *at_most = true;
    }
    if (*ms < 0)
        *ms = 0; /* clocks a second apart, or the log's time rounded down */
    return ok;
}

void
online_lag_line (online_t *on, const bson_t *rec, const online_changes_t *ch)
{
    int64_t now = time (NULL), taken = record_date (rec, "capture.taken"), lag = 0;
    int64_t events = record_int (rec, "followRate.events"), ms = record_int (rec, "followRate.ms");
    bson_error_t why;
    char age[300], eta[32], rate[80] = "", when[64] = "";
    bool at_most;

    if (!online_lag_age (on, rec, ch, &lag, &at_most, &why))
        snprintf (age, sizeof age, "not known (%s)", why.message);
    else if (ch->oldest || at_most)
        snprintf (age, sizeof age, "%s%lld s", at_most ? "at most " : "",
                  (long long) (lag / 1000));
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
