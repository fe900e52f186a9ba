/* --to-uri: what status --json says of the move (toUri), and the verify
 * it rests on, recorded in the pair's record.
 *
 * canCommit, as mongosync's /progress says it: the copy done (every pass
 * of every step by its checkpoints, every namespace the plan does not
 * write copied), the destination's lag under --max-lag, and the last
 * verify clean (verify --to-uri's, or a sample follow verified since).
 * Where the run recorded a point in the source's change log, the lag is
 * the log's: how old the oldest write to a source after the point the
 * destination reflects is, by the source's clock (0 when the log shows
 * none), as status's lag line says it (online_lag_age: at most the time
 * since the point was taken, where the log's events say no time). Where
 * it recorded none (a source without a log), the lag is
 * what can be proved: the time since a verify last found the
 * destination as the source makes it (verify --to-uri records when). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"

/* Whether every namespace the plan does not write is noted copied. */
static bool
copies_done (online_t *on, const bson_t *rec, bson_error_t *err)
{
    online_after_t finals;
    bson_t copies;
    bson_iter_t it, c;
    int n = 0, noted = 0;
    bool ok = online_dest_finals (on, &finals, &copies, &n, err);

    if (ok && bson_iter_init_find (&it, rec, "copied") && BSON_ITER_HOLDS_ARRAY (&it) &&
        bson_iter_recurse (&it, &c))
        while (bson_iter_next (&c))
            noted++;
    online_after_destroy (&finals);
    bson_destroy (&copies);
    return ok && noted >= n;
}

/* The source's log since the plan's recorded point, for its lag: the
 * events there (lag->events), how old the oldest is by the source's
 * clock (lag->ms; 0: none; at_most: a bound, online_lag_age), or why it
 * is not known (lag->why: the point rolled off, the log or the source's
 * clock not read). lag->follows false: no point recorded. */
typedef struct {
    bool follows, at_most;
    int64_t events, ms;
    char why[400];
} log_lag_t;

/* How old the oldest event of ch is, by the plan's record (its point's
 * time), as the lag line says it. */
static void
log_age (online_t *on, const online_changes_t *ch, log_lag_t *lag)
{
    bson_t plan;
    bson_error_t err = {0};
    bool found = false;

    if (!online_state_get (on, "plans", on->run->names.id, &plan, &found,
                           "reading the plan's record", &err) ||
        !online_lag_age (on, &plan, ch, &lag->ms, &lag->at_most, &err))
        snprintf (lag->why, sizeof lag->why, "the lag not known: %s", err.message);
    bson_destroy (&plan);
}

static void
log_lag (online_t *on, log_lag_t *lag)
{
    online_capture_t from, to;
    online_changes_t ch;
    const char *nss[64];
    bson_error_t err = {0};
    bool lost = false;

    memset (lag, 0, sizeof *lag);
    online_capture_init (&from);
    online_capture_init (&to);
    online_changes_init (&ch);
    ch.nss = nss;
    ch.nns = online_changes_sources (on, nss, 64);
    if (!online_follow_point (on, &from, &lag->follows, &err))
        snprintf (lag->why, sizeof lag->why, "the plan's point not read: %s", err.message);
    else if (lag->follows && !online_capture_lost (on, &from, &lost, &err))
        snprintf (lag->why, sizeof lag->why, "the source's change log not read: %s", err.message);
    else if (lost)
        snprintf (lag->why, sizeof lag->why, "the source's change log no longer holds the "
                  "recorded point: the next sync rescans");
    else if (lag->follows && !online_changes_read (on, &from, &to, &ch, &err))
        snprintf (lag->why, sizeof lag->why, "the source's change log not read: %s", err.message);
    else if (*ch.rescan)
        snprintf (lag->why, sizeof lag->why, "%s: the next sync rescans", ch.rescan);
    lag->events = ch.events;
    if (lag->follows && !*lag->why && ch.events)
        log_age (on, &ch, lag);
    online_changes_destroy (&ch);
    online_capture_destroy (&to);
    online_capture_destroy (&from);
}

/* Results that differ while the source's log shows no write since the
 * plan's point (someone else wrote the destination): a sync from the log
 * would recompute none of them. The next sync, follow round or
 * finalize's drain rescans every step in full, saying why
 * (capture.rescan, as for a source put back; the point it saves forgets
 * it). Writes in the log may explain them: the sync applies those, and a
 * verify after it that still finds some marks the rescan. A plan with no
 * point, or whose log is lost, rescans anyway. */
static bool
rescan_next (online_t *on, int64_t differ, bson_error_t *err)
{
    bson_t *upd;
    char why[300];
    log_lag_t lag;
    bool ok;

    log_lag (on, &lag);
    if (!lag.follows || *lag.why || lag.events)
        return true;
    snprintf (why, sizeof why, "verify found %lld result(s) on %s that differ from what the "
              "source makes, and the source's change log shows no write since the last point",
              (long long) differ, on->run->where);
    upd = BCON_NEW ("$set", "{", "capture.rescan", BCON_UTF8 (why), "}");
    ok = online_plan_update (on, upd, err);
    bson_destroy (upd);
    return ok;
}

bool
online_dest_verified (online_t *on, int64_t differ, bson_error_t *err)
{
    bson_t *set;
    bool ok;

    if (on->run->o->dry_run || differ < 0)
        return true;
    set = BCON_NEW ("verified", "{", "at", BCON_DATE_TIME ((int64_t) time (NULL) * 1000),
                    "clean", BCON_BOOL (differ == 0), "differ", BCON_INT64 (differ), "sample",
                    BCON_INT64 (on->run->o->sample), "}");
    ok = online_pair_note (on, set, err);
    bson_destroy (set);
    if (ok && differ > 0)
        ok = rescan_next (on, differ, err);
    return ok;
}

/* The last verify's time and whether it was clean: verify --to-uri's
 * (verified in the pair's record), or a sample verified since by follow
 * or verify --sample (sampled in the plan's, recorded only clean). */
static void
last_verify (online_t *on, const bson_t *rec, int64_t *at, bool *clean)
{
    bson_t plan;
    bson_iter_t it;
    bson_error_t err;
    online_sample_t s;
    bool found;

    *at = 0;
    *clean = false;
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "verified.clean", &it))
        *clean = bson_iter_as_bool (&it);
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "verified.at", &it) &&
        BSON_ITER_HOLDS_DATE_TIME (&it))
        *at = bson_iter_date_time (&it);
    if (online_state_get (on, "plans", on->run->names.id, &plan, &found, "reading the plan's record",
                          &err) &&
        found && online_sample_read (&plan, &s) && s.at_ms > *at) {
        *at = s.at_ms;
        *clean = true;
    }
    bson_destroy (&plan);
}

/* The reason canCommit is false into why ("" when true); lag: the
 * source's log's, when the plan follows one. */
static void
judge (online_t *on, const bson_t *rec, int64_t *lag_ms, log_lag_t *lag, char *why, size_t cap)
{
    bson_error_t err = {0};
    bool clean = false;
    int64_t at = 0;

    *why = '\0';
    *lag_ms = -1;
    last_verify (on, rec, &at, &clean);
    if (at)
        *lag_ms = (int64_t) time (NULL) * 1000 - at;
    log_lag (on, lag);
    if (!online_run_complete (on, &err))
        snprintf (why, cap, "the copy is not done: %s", err.message);
    else if (!copies_done (on, rec, &err))
        snprintf (why, cap, "the namespaces the plan does not write are not all copied%s%s",
                  *err.message ? ": " : "", err.message);
    else if (!at)
        snprintf (why, cap, "no verify yet (remodel online verify --to-uri)");
    else if (!clean)
        snprintf (why, cap, "the last verify found results that differ (sync, then verify)");
    else if (lag->follows && *lag->why)
        snprintf (why, cap, "%s", lag->why);
    else if (lag->follows && lag->ms > on->run->o->max_lag_ms)
        snprintf (why, cap, "the source's change log holds %lld event(s) not applied, the "
                  "oldest %s%llds old, over --max-lag (follow, or sync)", (long long) lag->events,
                  lag->at_most ? "at most " : "", (long long) (lag->ms / 1000));
    else if (!lag->follows && *lag_ms > on->run->o->max_lag_ms)
        snprintf (why, cap, "the last clean verify is %llds old, over --max-lag",
                  (long long) (*lag_ms / 1000));
}

void
online_dest_status (online_t *on, bson_t *out)
{
    bson_t rec, sub;
    bson_error_t err;
    bool found, committed = false;
    bson_iter_t it;
    char src[512] = "", dst[512] = "", why[700];
    int64_t lag = -1;
    log_lag_t log = {0};

    if (!online_pair_read (on, &rec, &found, &err)) {
        bson_destroy (&rec);
        return; /* status says the server's error itself */
    }
    online_field_utf8 (&rec, "source", src, sizeof src);
    online_field_utf8 (&rec, "destination", dst, sizeof dst);
    committed = bson_iter_init_find (&it, &rec, "committed") && bson_iter_as_bool (&it);
    if (found && !committed)
        judge (on, &rec, &lag, &log, why, sizeof why);
    else
        snprintf (why, sizeof why, "%s", committed ? "committed already" : "not begun");
    online_dest_rolled_back (&rec, NULL, why, sizeof why); /* online_dest_rollback.c */
    BSON_APPEND_DOCUMENT_BEGIN (out, "toUri", &sub);
    BSON_APPEND_UTF8 (&sub, "source", src);
    BSON_APPEND_UTF8 (&sub, "destination", dst);
    BSON_APPEND_BOOL (&sub, "committed", committed);
    BSON_APPEND_BOOL (&sub, "canCommit", found && !committed && !*why);
    if (*why)
        BSON_APPEND_UTF8 (&sub, "why", why);
    else
        BSON_APPEND_NULL (&sub, "why");
    if (found && !committed && lag >= 0)
        BSON_APPEND_INT64 (&sub, "verifiedAgoMs", lag);
    /* The lag canCommit weighed: the source's log's where it is followed. */
    if (found && !committed && log.follows && !*log.why) {
        BSON_APPEND_UTF8 (&sub, "lagFrom", "the source's change log");
        BSON_APPEND_INT64 (&sub, "lagMs", log.ms);
        BSON_APPEND_BOOL (&sub, "lagAtMost", log.at_most);
        BSON_APPEND_INT64 (&sub, "lagEvents", log.events);
    } else if (found && !committed) {
        BSON_APPEND_UTF8 (&sub, "lagFrom", log.follows ? "not known" : "the last clean verify");
        if (!log.follows && lag >= 0)
            BSON_APPEND_INT64 (&sub, "lagMs", lag);
        else
            BSON_APPEND_NULL (&sub, "lagMs");
    }
    online_dest_rolled_back (&rec, &sub, NULL, 0);
    bson_append_document_end (out, &sub);
    BSON_APPEND_BOOL (out, "canCommit", found && !committed && !*why);
    bson_destroy (&rec);
}
