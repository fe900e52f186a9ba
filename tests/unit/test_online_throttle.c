/* The throttle's decisions (shell-ext/state/online_throttle_rule.c)
 * without a server: replSetGetStatus replies shaped as MongoDB's
 * documentation shows them (a primary and two secondaries, an arbiter, a
 * member down, an election with no primary, a standalone's refusal),
 * serverStatus's flowControl, the go/wait decision over a series of lags
 * with its hysteresis, and --max-latency's batch sizes. */
#include <stdio.h>
#include <stdlib.h>

#include "online_state.h"
#include "test.h"

/* 2020-03-05T05:24:38Z, the documentation's example date, in ms. */
#define T0 1583385878000LL

/* A member as the documentation shows one; at < 0: no optimeDate. */
static void
member (bson_t *arr, int i, const char *name, int health, int state, const char *state_str,
        int64_t at)
{
    bson_t m, op;
    char key[8];
    snprintf (key, sizeof key, "%d", i);
    BSON_APPEND_DOCUMENT_BEGIN (arr, key, &m);
    BSON_APPEND_INT32 (&m, "_id", i);
    BSON_APPEND_UTF8 (&m, "name", name);
    BSON_APPEND_DOUBLE (&m, "health", health);
    BSON_APPEND_INT32 (&m, "state", state);
    BSON_APPEND_UTF8 (&m, "stateStr", state_str);
    BSON_APPEND_INT32 (&m, "uptime", 269);
    if (at >= 0) {
        BSON_APPEND_DOCUMENT_BEGIN (&m, "optime", &op);
        BSON_APPEND_TIMESTAMP (&op, "ts", (uint32_t) (at / 1000), 1);
        BSON_APPEND_INT64 (&op, "t", 3);
        bson_append_document_end (&m, &op);
        BSON_APPEND_DATE_TIME (&m, "optimeDate", at);
        BSON_APPEND_DATE_TIME (&m, "lastAppliedWallTime", at);
    }
    if (!health)
        BSON_APPEND_UTF8 (&m, "lastHeartbeatMessage", "Error connecting to m3.example.net:27017");
    bson_append_document_end (arr, &m);
}

/* The reply's head: set, date, myState, optimes (applied, committed:
 * wall times; < 0 none), then the members the caller adds. */
static void
head (bson_t *r, int64_t applied, int64_t committed)
{
    bson_t op;
    bson_init (r);
    BSON_APPEND_UTF8 (r, "set", "replset");
    BSON_APPEND_DATE_TIME (r, "date", T0 + 500);
    BSON_APPEND_INT32 (r, "myState", 1);
    BSON_APPEND_INT64 (r, "term", 3);
    BSON_APPEND_INT64 (r, "heartbeatIntervalMillis", 2000);
    BSON_APPEND_INT32 (r, "majorityVoteCount", 2);
    if (applied >= 0) {
        BSON_APPEND_DOCUMENT_BEGIN (r, "optimes", &op);
        BSON_APPEND_DATE_TIME (&op, "lastCommittedWallTime", committed);
        BSON_APPEND_DATE_TIME (&op, "readConcernMajorityWallTime", committed);
        BSON_APPEND_DATE_TIME (&op, "lastAppliedWallTime", applied);
        BSON_APPEND_DATE_TIME (&op, "lastDurableWallTime", applied);
        bson_append_document_end (r, &op);
    }
}

static void
test_three_members (void)
{
    bson_t r, arr;
    online_rslag_t l;
    head (&r, T0, T0 - 1200);
    BSON_APPEND_ARRAY_BEGIN (&r, "members", &arr);
    member (&arr, 0, "m1.example.net:27017", 1, 1, "PRIMARY", T0);
    member (&arr, 1, "m2.example.net:27017", 1, 2, "SECONDARY", T0 - 3000);
    member (&arr, 2, "m3.example.net:27017", 1, 2, "SECONDARY", T0 - 1000);
    bson_append_array_end (&r, &arr);
    BSON_APPEND_DOUBLE (&r, "ok", 1);
    T_CHECK (online_rslag_parse (&r, &l));
    T_CHECK_STR (l.primary, "m1.example.net:27017");
    T_CHECK (l.majority_ms == 1200);
    T_CHECK (l.member_ms == 3000);
    T_CHECK_STR (l.member, "m2.example.net:27017");
    T_CHECK (l.secondaries == 2 && l.not_counted == 0);
    T_CHECK (online_rslag_worst (&l) == 3000);
    bson_destroy (&r);
}

/* An arbiter holds no data: its optime (Timestamp(0, 0), 1970) is no lag;
 * a member down is counted apart, not as 50 years behind. */
static void
test_arbiter_and_down (void)
{
    bson_t r, arr;
    online_rslag_t l;
    head (&r, T0, T0);
    BSON_APPEND_ARRAY_BEGIN (&r, "members", &arr);
    member (&arr, 0, "m1.example.net:27017", 1, 1, "PRIMARY", T0);
    member (&arr, 1, "m2.example.net:27017", 1, 2, "SECONDARY", T0 - 400);
    member (&arr, 2, "m3.example.net:27017", 0, 8, "(not reachable/healthy)", 0);
    member (&arr, 3, "arb.example.net:27017", 1, 7, "ARBITER", -1);
    bson_append_array_end (&r, &arr);
    BSON_APPEND_INT32 (&r, "ok", 1);
    T_CHECK (online_rslag_parse (&r, &l));
    T_CHECK (l.majority_ms == 0);
    T_CHECK (l.member_ms == 400);
    T_CHECK_STR (l.member, "m2.example.net:27017");
    T_CHECK (l.secondaries == 1 && l.not_counted == 1);
    bson_destroy (&r);
}

/* No primary (an election): no member's lag, the majority's only when
 * the reply has optimes; a reply before 4.2 has none. */
static void
test_no_primary (void)
{
    bson_t r, arr;
    online_rslag_t l;
    head (&r, -1, -1);
    BSON_APPEND_ARRAY_BEGIN (&r, "members", &arr);
    member (&arr, 0, "m1.example.net:27017", 1, 2, "SECONDARY", T0);
    member (&arr, 1, "m2.example.net:27017", 1, 2, "SECONDARY", T0 - 9000);
    bson_append_array_end (&r, &arr);
    BSON_APPEND_INT32 (&r, "ok", 1);
    T_CHECK (online_rslag_parse (&r, &l));
    T_CHECK_STR (l.primary, "");
    T_CHECK (l.majority_ms == -1 && l.member_ms == -1);
    T_CHECK (online_rslag_worst (&l) == -1);
    T_CHECK (!online_throttle_over (online_rslag_worst (&l), 2000, false));
    bson_destroy (&r);
}

/* A standalone's refusal, as both test servers give it. */
static void
test_not_a_replica_set (void)
{
    bson_t *r = BCON_NEW ("ok", BCON_DOUBLE (0), "errmsg", BCON_UTF8 ("not running with --replSet"),
                          "code", BCON_INT32 (76), "codeName", BCON_UTF8 ("NoReplicationEnabled"));
    online_rslag_t l;
    T_CHECK (!online_rslag_parse (r, &l));
    bson_destroy (r);
}

static void
test_flow_control (void)
{
    bool has;
    bson_t *lagged = BCON_NEW ("flowControl", "{", "enabled", BCON_BOOL (true), "targetRateLimit",
                               BCON_INT32 (1000000000), "isLagged", BCON_BOOL (true),
                               "isLaggedCount", BCON_INT32 (3), "}", "ok", BCON_DOUBLE (1));
    bson_t *fine = BCON_NEW ("flowControl", "{", "enabled", BCON_BOOL (true), "isLagged",
                             BCON_BOOL (false), "}", "ok", BCON_DOUBLE (1));
    bson_t *none = BCON_NEW ("host", BCON_UTF8 ("ferretdb"), "ok", BCON_DOUBLE (1));
    T_CHECK (online_flow_lagged (lagged, &has) && has);
    T_CHECK (!online_flow_lagged (fine, &has) && has);
    T_CHECK (!online_flow_lagged (none, &has) && !has);
    bson_destroy (lagged);
    bson_destroy (fine);
    bson_destroy (none);
}

/* A series of lags at --max-lag 2s: waits over 2 s, goes on only under
 * 1 s (half), so a lag hovering near the limit does not let a batch through at
 * every dip. */
static void
test_series (void)
{
    static const int64_t lags[] = {0, 500, 1900, 2000, 2100, 3000, 1900, 1500, 1001, 1000, 1100,
                                   1999, 2000, 2001, 1200, -1};
    static const bool want[] = {false, false, false, false, true, true, true, true, true, false,
                                false, false, false, true, true, false};
    bool throttled = false;
    for (size_t i = 0; i < sizeof lags / sizeof *lags; i++) {
        throttled = online_throttle_over (lags[i], 2000, throttled);
        if (throttled != want[i])
            fprintf (stderr, "  lag %lld: got %d\n", (long long) lags[i], throttled);
        T_CHECK (throttled == want[i]);
    }
    /* --max-lag 0: never; an unknown lag (-1): never. */
    T_CHECK (!online_throttle_over (60000, 0, false));
    T_CHECK (!online_throttle_over (-1, 2000, true));
}

/* --max-latency 500 ms from 1000 documents: halved at once while slow,
 * down to 1; back by an eighth a batch while under 250 ms, never past
 * the size asked for; between 250 and 500 ms it stays. */
static void
test_latency (void)
{
    int64_t s = 1000;
    T_CHECK (online_throttle_size (s, 1000, 900, 0) == 1000); /* no limit */
    s = online_throttle_size (s, 1000, 501, 500);
    T_CHECK (s == 500);
    s = online_throttle_size (s, 1000, 800, 500);
    T_CHECK (s == 250);
    T_CHECK (online_throttle_size (s, 1000, 400, 500) == 250);
    s = online_throttle_size (s, 1000, 100, 500);
    T_CHECK (s == 281);
    for (int i = 0; i < 20; i++)
        s = online_throttle_size (s, 1000, 100, 500);
    T_CHECK (s == 1000);
    T_CHECK (online_throttle_size (1, 1000, 5000, 500) == 1);
    T_CHECK (online_throttle_size (2, 1000, 5000, 500) == 1);
    T_CHECK (online_throttle_size (1, 1000, 10, 500) == 2);
    /* Larger than asked (--batch-time grew it): left to that. */
    T_CHECK (online_throttle_size (4000, 1000, 10, 500) == 4000);
}

int
main (void)
{
    T_RUN (test_three_members);
    T_RUN (test_arbiter_and_down);
    T_RUN (test_no_primary);
    T_RUN (test_not_a_replica_set);
    T_RUN (test_flow_control);
    T_RUN (test_series);
    T_RUN (test_latency);
    return t_done ();
}
