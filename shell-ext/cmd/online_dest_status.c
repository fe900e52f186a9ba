/* --to-uri: what status --json says of the move (toUri), and the verify
 * it rests on, recorded in the pair's record.
 *
 * canCommit, as mongosync's /progress says it: the copy done (every pass
 * of every step by its checkpoints, every namespace the plan does not
 * write copied), the destination's lag under --max-lag, and the last
 * verify clean. No change log is followed between two deployments yet,
 * so the lag is what can be proved: the time since a verify last found
 * the destination as the source makes it (verify --to-uri records when). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"

bool
online_dest_verified (online_t *on, int64_t differ, bson_error_t *err)
{
    bson_t *set;
    bool ok;

    if (on->o->dry_run || differ < 0)
        return true;
    set = BCON_NEW ("verified", "{", "at", BCON_DATE_TIME ((int64_t) time (NULL) * 1000),
                    "clean", BCON_BOOL (differ == 0), "differ", BCON_INT64 (differ), "sample",
                    BCON_INT64 (on->o->sample), "}");
    ok = online_pair_note (on, set, err);
    bson_destroy (set);
    return ok;
}

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

/* The reason canCommit is false into why ("" when true). */
static void
judge (online_t *on, const bson_t *rec, int64_t *lag_ms, char *why, size_t cap)
{
    bson_error_t err = {0};
    bson_iter_t it;
    bool clean = false;
    int64_t at = 0;

    *why = '\0';
    *lag_ms = -1;
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "verified.clean", &it))
        clean = bson_iter_as_bool (&it);
    if (bson_iter_init (&it, rec) && bson_iter_find_descendant (&it, "verified.at", &it) &&
        BSON_ITER_HOLDS_DATE_TIME (&it))
        at = bson_iter_date_time (&it);
    if (at)
        *lag_ms = (int64_t) time (NULL) * 1000 - at;
    if (!online_run_complete (on, &err))
        snprintf (why, cap, "the copy is not done: %s", err.message);
    else if (!copies_done (on, rec, &err))
        snprintf (why, cap, "the namespaces the plan does not write are not all copied%s%s",
                  *err.message ? ": " : "", err.message);
    else if (!at)
        snprintf (why, cap, "no verify yet (remodel online verify --to-uri)");
    else if (!clean)
        snprintf (why, cap, "the last verify found results that differ (sync, then verify)");
    else if (*lag_ms > on->o->max_lag_ms)
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

    if (!online_pair_read (on, &rec, &found, &err)) {
        bson_destroy (&rec);
        return; /* status says the server's error itself */
    }
    online_field_utf8 (&rec, "source", src, sizeof src);
    online_field_utf8 (&rec, "destination", dst, sizeof dst);
    committed = bson_iter_init_find (&it, &rec, "committed") && bson_iter_as_bool (&it);
    if (found && !committed)
        judge (on, &rec, &lag, why, sizeof why);
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
    online_dest_rolled_back (&rec, &sub, NULL, 0);
    bson_append_document_end (out, &sub);
    BSON_APPEND_BOOL (out, "canCommit", found && !committed && !*why);
    bson_destroy (&rec);
}
