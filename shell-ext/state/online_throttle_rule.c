/* The throttle's decisions apart from the server (online_state.h): what a
 * replSetGetStatus reply says of the replication lag, whether
 * serverStatus says flow control is lagged, whether a run goes on or
 * waits given the lag and --max-lag (with hysteresis, so a lag hovering
 * at the limit does not flap), and the batch size --max-latency leaves.
 * Calls nothing of the program: tests/unit/test_online_throttle.c tries
 * it on replies shaped as MongoDB's documentation shows them. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"

/* A member's field as milliseconds since the epoch (a date), or -1. */
static int64_t
member_date (const bson_iter_t *member, const char *key)
{
    bson_iter_t it;
    if (bson_iter_recurse (member, &it) && bson_iter_find (&it, key) &&
        BSON_ITER_HOLDS_DATE_TIME (&it))
        return bson_iter_date_time (&it);
    return -1;
}

static void
member_utf8 (const bson_iter_t *member, const char *key, char *buf, size_t cap)
{
    bson_iter_t it;
    *buf = '\0';
    if (bson_iter_recurse (member, &it) && bson_iter_find (&it, key) && BSON_ITER_HOLDS_UTF8 (&it))
        snprintf (buf, cap, "%s", bson_iter_utf8 (&it, NULL));
}

bool
online_rslag_parse (const bson_t *reply, online_rslag_t *l)
{
    bson_iter_t it, m, op;
    int64_t primary = -1, applied, committed;
    char state[64];

    memset (l, 0, sizeof *l);
    l->majority_ms = -1;
    l->member_ms = -1;
    if (!(bson_iter_init_find (&it, reply, "ok") && bson_iter_as_bool (&it)) ||
        !(bson_iter_init_find (&it, reply, "members") && BSON_ITER_HOLDS_ARRAY (&it)))
        return false;
    /* The primary's optime first: each secondary is measured against it. */
    bson_iter_recurse (&it, &m);
    while (bson_iter_next (&m)) {
        member_utf8 (&m, "stateStr", state, sizeof state);
        if (BSON_ITER_HOLDS_DOCUMENT (&m) && !strcmp (state, "PRIMARY")) {
            primary = member_date (&m, "optimeDate");
            member_utf8 (&m, "name", l->primary, sizeof l->primary);
        }
    }
    /* Majority lag: what the primary applied that a majority has not
     * (MongoDB 4.2+'s optimes wall times; older servers have none). */
    if (bson_iter_init_find (&op, reply, "optimes") && BSON_ITER_HOLDS_DOCUMENT (&op) &&
        (applied = member_date (&op, "lastAppliedWallTime")) >= 0 &&
        (committed = member_date (&op, "lastCommittedWallTime")) >= 0)
        l->majority_ms = applied > committed ? applied - committed : 0;
    if (primary < 0)
        return true; /* an election, or this member sees none: l->primary "" */
    bson_iter_recurse (&it, &m);
    while (bson_iter_next (&m)) {
        bson_iter_t h;
        int64_t at, lag;
        if (!BSON_ITER_HOLDS_DOCUMENT (&m))
            continue;
        member_utf8 (&m, "stateStr", state, sizeof state);
        if (!strcmp (state, "PRIMARY") || !strcmp (state, "ARBITER"))
            continue; /* an arbiter holds no data: it never lags */
        /* A member down (health 0, "(not reachable/healthy)") or not yet
         * a secondary answers with no optime worth comparing: counted
         * apart, never as a lag of 50 years. */
        if ((bson_iter_recurse (&m, &h) && bson_iter_find (&h, "health") &&
             bson_iter_as_int64 (&h) == 0) ||
            strcmp (state, "SECONDARY") != 0 || (at = member_date (&m, "optimeDate")) <= 0) {
            l->not_counted++;
            continue;
        }
        l->secondaries++;
        lag = primary > at ? primary - at : 0;
        if (lag > l->member_ms) {
            l->member_ms = lag;
            member_utf8 (&m, "name", l->member, sizeof l->member);
        }
    }
    return true;
}

bool
online_flow_lagged (const bson_t *server_status, bool *has)
{
    bson_iter_t it, f;
    *has = bson_iter_init (&it, server_status) &&
           bson_iter_find_descendant (&it, "flowControl.isLagged", &f);
    return *has && bson_iter_as_bool (&f);
}

int64_t
online_rslag_worst (const online_rslag_t *l)
{
    return l->majority_ms > l->member_ms ? l->majority_ms : l->member_ms;
}

bool
online_throttle_over (int64_t lag_ms, int64_t max_lag_ms, bool throttled)
{
    if (max_lag_ms <= 0 || lag_ms < 0)
        return false; /* no limit, or no lag known: nothing to wait for */
    /* Over the limit, wait; once waiting, go on only under half of it:
     * a lag at the limit would otherwise let a batch through, push it
     * over again, and stop, batch after batch. */
    return throttled ? lag_ms * 2 > max_lag_ms : lag_ms > max_lag_ms;
}

int64_t
online_throttle_size (int64_t size, int64_t base, int64_t ms, int64_t max_ms)
{
    if (max_ms <= 0)
        return size;
    /* Over the limit: half at once; well under it (half the limit), back
     * by an eighth a batch, never past the size asked for: a server that
     * slowed gets relief at once, and a recovered one its load back only
     * gradually (pt-online-schema-change's --chunk-time does the same by a
     * weighted average). Between the two, the size stays. */
    if (ms > max_ms)
        return size / 2 > 1 ? size / 2 : 1;
    if (ms * 2 <= max_ms && size < base) {
        int64_t next = size + (size / 8 > 1 ? size / 8 : 1);
        return next < base ? next : base;
    }
    return size;
}
