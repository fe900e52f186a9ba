/* The throttle on the server's health and the controls of a running run
 * (online_state.h, docs/online.md): before each batch, one call
 * (online_throttle_wait) sizes the batch by --max-latency, keeps
 * --max-rate, waits while paused, then waits while the plan's record says
 * to: thrown by hand (remodel online throttle), or the replication lag
 * over --max-lag, or flow control lagged. Everything a worker learns is in
 * the plan's record, field throttle:
 *   {manual, manualAt,                  remodel online throttle/unthrottle
 *    state, reason, since,              "throttled" or "running", why, when
 *    lagMs, lagOf, flowLagged, lagAt,   the last read of the server's lag
 *    lagNote}                           "not available: ..." off a replica set
 * and settings {batchSize, maxRate, maxLagMs, at} (remodel online set).
 * The lag is read by one worker for all: whoever moves lagAt on, by an
 * update matched on its old value, reads replSetGetStatus and serverStatus
 * and writes what they say; the others take it from the record (freno's
 * way for MySQL), so N workers cost the server one read a second. lagAt is
 * the reader's clock: a skewed one only reads more or less often. The
 * decisions themselves are online_throttle_rule.c's. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"

/* How old the record's lag may be before a worker reads it again. */
#define LAG_EVERY_MS 1000
/* How often a throttled worker looks again. */
#define WAIT_MS 500


static int64_t
field_int (const bson_t *doc, const char *path, int64_t none)
{
    bson_iter_t it, f;
    if (!bson_iter_init (&it, doc) || !bson_iter_find_descendant (&it, path, &f))
        return none;
    if (BSON_ITER_HOLDS_DATE_TIME (&f))
        return bson_iter_date_time (&f);
    return BSON_ITER_HOLDS_NUMBER (&f) || BSON_ITER_HOLDS_BOOL (&f) ? bson_iter_as_int64 (&f) : none;
}

void
online_throttle_read (const bson_t *record, char *state, size_t scap, char *reason, size_t rcap,
                      int64_t *since, int64_t *lag_ms, char *note, size_t ncap)
{
    online_field_utf8 (record, "throttle.state", state, scap);
    online_field_utf8 (record, "throttle.reason", reason, rcap);
    online_field_utf8 (record, "throttle.lagNote", note, ncap);
    *since = field_int (record, "throttle.since", 0);
    *lag_ms = field_int (record, "throttle.lagAt", -1) < 0 ? -1
                                                            : field_int (record, "throttle.lagMs", -1);
}

/* A --log-format json line {"throttle": what, "reason": ..., more} into
 * line (initialized here; the caller destroys it), for the reporter to
 * say instead of the text where JSON lines are asked for. Events are
 * rare: built whether or not JSON is asked for. */
static void
json_line (rm_buf_t *line_out, online_t *on, const char *what, const char *reason,
           const char *more)
{
    rm_buf_t line;
    rm_buf_init (&line);
    rm_buf_append (&line, "{\"plan\":", 8);
    online_json_string (&line, on->run->names.name);
    rm_buf_append (&line, ",\"throttle\":", 12);
    online_json_string (&line, what);
    if (reason) {
        rm_buf_append (&line, ",\"reason\":", 10);
        online_json_string (&line, reason);
    }
    if (more)
        rm_buf_append (&line, more, strlen (more));
    rm_buf_append (&line, "}\n", 2);
    *line_out = line;
}

/* The server's answer to one command; false only on a network error
 * (*answered false and why's message in note: the server refused it). */
static bool
ask (online_t *on, const char *name, bson_t *reply, bool *answered, char *note, size_t cap,
     bson_error_t *err)
{
    bson_t *cmd = BCON_NEW (name, BCON_INT32 (1));
    bson_error_t why;
    *answered = online_ops (on)->command (on, NULL, "admin", cmd, reply, &why);
    bson_destroy (cmd);
    if (*answered)
        return true;
    snprintf (note, cap, "%s", why.message);
    /* The server's own refusal (not a replica set, no such command) is an
     * answer; only a lost connection is an error. */
    return why.domain == MONGOC_ERROR_SERVER || why.domain == MONGOC_ERROR_QUERY ||
           online_fail (on, err, &why, name);
}

/* Whether this process said the lag is not available. */
static bool lag_note_said;

/* The first batch: whether this server can tell its lag at all, said once. */
static bool
probe (online_t *on, online_throttle_t *th, bson_error_t *err)
{
    bson_t reply;
    bool answered, has = false;
    online_rslag_t l;
    char note[300] = "", line[600];

    if (!ask (on, "replSetGetStatus", &reply, &answered, note, sizeof note, err)) {
        bson_destroy (&reply);
        return false;
    }
    th->lag_readable = answered && online_rslag_parse (&reply, &l);
    if (answered && !th->lag_readable)
        snprintf (note, sizeof note, "replSetGetStatus shows no members");
    bson_destroy (&reply);
    if (!ask (on, "serverStatus", &reply, &answered, line, sizeof line, err)) {
        bson_destroy (&reply);
        return false;
    }
    if (answered)
        online_flow_lagged (&reply, &has);
    th->flow_readable = has;
    bson_destroy (&reply);
    if (!th->lag_readable) {
        bson_t *set;
        snprintf (line, sizeof line, "replication lag not available (%s): --max-lag applies on a "
                  "replica set only%s", note, th->flow_readable ? "" : "; no flow control reported");
        set = BCON_NEW ("$set", "{", "throttle.lagNote", BCON_UTF8 (line), "}");
        (void) online_plan_update (on, set, err);
        bson_destroy (set);
        /* A line of text in either format, as run's capture line: the
         * JSON log's lines stay those of batches and of throttle events. */
        /* Once a process, not once a worker: its workers each probe. */
        if (!__atomic_exchange_n (&lag_note_said, true, __ATOMIC_SEQ_CST))
            online_say_note (on, "throttle: %s", line);
    }
    return true;
}

/* The lag, read from the server when the record's is older than
 * LAG_EVERY_MS and this worker wins the read; else the record's. */
static bool
lag_now (online_t *on, online_throttle_t *th, const bson_t *rec, int64_t *lag_ms, char *of,
         size_t cap, bool *flow, bson_error_t *err)
{
    int64_t at = field_int (rec, "throttle.lagAt", -1), now = online_wall_ms ();
    bson_t *q, *claim, reply, result = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t why;
    bool ok, won, answered, has;
    char note[300];
    online_rslag_t l;

    *lag_ms = field_int (rec, "throttle.lagMs", -1);
    *flow = field_int (rec, "throttle.flowLagged", 0) != 0;
    online_field_utf8 (rec, "throttle.lagOf", of, cap);
    if (at >= 0 && now - at < LAG_EVERY_MS && now >= at)
        return true;
    q = at >= 0 ? BCON_NEW ("_id", BCON_UTF8 (on->run->names.id), "throttle.lagAt", BCON_DATE_TIME (at))
                : BCON_NEW ("_id", BCON_UTF8 (on->run->names.id), "throttle.lagAt", "{", "$exists",
                            BCON_BOOL (false), "}");
    claim = BCON_NEW ("$set", "{", "throttle.lagAt", BCON_DATE_TIME (now), "}");
    ok = online_lease_check (on, err) &&
         (online_ops (on)->state_update (on, "plans", q, claim, false, &result, &why) ||
          online_fail (on, err, &why, "claiming the lag's read"));
    won = ok && bson_iter_init_find (&it, &result, "modifiedCount") && bson_iter_as_int64 (&it) == 1;
    bson_destroy (&result);
    bson_destroy (claim);
    bson_destroy (q);
    if (!won)
        return ok; /* another worker reads it: the record's until then */
    *lag_ms = -1;
    *of = '\0';
    if (th->lag_readable) {
        ok = ask (on, "replSetGetStatus", &reply, &answered, note, sizeof note, err);
        if (ok && answered && online_rslag_parse (&reply, &l)) {
            *lag_ms = online_rslag_worst (&l);
            snprintf (of, cap, "%s", l.member_ms >= l.majority_ms ? l.member : "the majority");
        }
        bson_destroy (&reply);
    }
    if (ok && th->flow_readable) {
        ok = ask (on, "serverStatus", &reply, &answered, note, sizeof note, err);
        *flow = ok && answered && online_flow_lagged (&reply, &has);
        bson_destroy (&reply);
    }
    if (ok) {
        bson_t *set = BCON_NEW ("$set", "{", "throttle.lagMs", BCON_INT64 (*lag_ms), "throttle.lagOf",
                                BCON_UTF8 (of), "throttle.flowLagged", BCON_BOOL (*flow), "}");
        ok = online_plan_update (on, set, err);
        bson_destroy (set);
    }
    return ok;
}

/* remodel online set's values, taken when the record has newer ones than
 * this worker took (said, and recorded as taken). */
static bool
take_settings (online_t *on, online_throttle_t *th, const bson_t *rec, int64_t *batch_size,
               bson_error_t *err)
{
    int64_t at = field_int (rec, "settings.at", 0), v;
    char said[300] = "", more[300];
    size_t k = 0;
    rm_buf_t line;
    bson_t *set;
    bool ok;

    if (!at || at == th->settings_at)
        return true;
    th->settings_at = at;
    if ((v = field_int (rec, "settings.batchSize", -1)) > 0) {
        th->base = th->size = *batch_size = v;
        k += (size_t) snprintf (said + k, sizeof said - k, " --batch-size %lld", (long long) v);
    }
    if ((v = field_int (rec, "settings.maxRate", -1)) >= 0 && k < sizeof said) {
        th->max_rate = v;
        th->rate_t0 = online_mono_ms ();
        th->rate_n = 0;
        k += (size_t) snprintf (said + k, sizeof said - k, " --max-rate %lld", (long long) v);
    }
    if ((v = field_int (rec, "settings.maxLagMs", -1)) >= 0 && k < sizeof said) {
        th->max_lag_ms = v;
        snprintf (said + k, sizeof said - k, " --max-lag %lldms", (long long) v);
    }
    snprintf (more, sizeof more, ",\"batchSize\":%lld,\"maxRate\":%lld,\"maxLagMs\":%lld",
              (long long) *batch_size, (long long) th->max_rate, (long long) th->max_lag_ms);
    json_line (&line, on, "set", said + (*said == ' '), more);
    online_say_event (on, ONLINE_SAY_ASIDE, &line, "set by remodel online set:%s", said);
    rm_buf_destroy (&line);
    set = BCON_NEW ("$set", "{", "settings.takenAt", BCON_DATE_TIME (online_wall_ms ()), "}");
    ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

/* Throttled (why in th->reason) or not, by the record and the lag. */
static bool
decide (online_t *on, online_throttle_t *th, const bson_t *rec, bool *wait, bson_error_t *err)
{
    int64_t lag = -1;
    bool flow = false;
    char of[128] = "", lagb[32], maxb[32];

    *wait = false;
    if (field_int (rec, "throttle.manual", 0)) {
        snprintf (th->reason, sizeof th->reason, "throttled by remodel online throttle "
                  "(remodel online unthrottle goes on)");
        *wait = true;
        return true;
    }
    if ((th->lag_readable || th->flow_readable) && th->max_lag_ms > 0 &&
        !lag_now (on, th, rec, &lag, of, sizeof of, &flow, err))
        return false;
    if (online_throttle_over (lag, th->max_lag_ms, th->throttled)) {
        snprintf (lagb, sizeof lagb, "%.1f s", (double) lag / 1000.0);
        snprintf (maxb, sizeof maxb, "%.1f s", (double) th->max_lag_ms / 1000.0);
        snprintf (th->reason, sizeof th->reason, "replication lag %s (%s) over --max-lag %s%s",
                  lagb, *of ? of : "?", maxb, th->throttled ? " (going on under half of it)" : "");
        *wait = true;
    } else if (flow) {
        snprintf (th->reason, sizeof th->reason, "the server's flow control is lagged "
                  "(serverStatus flowControl.isLagged)");
        *wait = true;
    }
    return true;
}

/* The record's throttle state, as this worker now is. */
static bool
note_state (online_t *on, online_throttle_t *th, bson_error_t *err)
{
    bson_t *set = BCON_NEW ("$set", "{", "throttle.state", BCON_UTF8 (th->throttled ? "throttled" : "running"),
                            "throttle.reason", BCON_UTF8 (th->throttled ? th->reason : ""),
                            "throttle.since", BCON_DATE_TIME (online_wall_ms ()), "}");
    bool ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

bool
online_throttle_wait (online_t *on, int64_t n, int64_t ms, int64_t *batch_size, bson_error_t *err)
{
    online_throttle_t *th = &on->throttle;
    int64_t now = online_mono_ms ();
    bool ok = true;

    if (!th->started) {
        bson_t rec;
        bool found;
        th->started = true;
        th->max_lag_ms = on->run->o->max_lag_ms;
        th->max_latency_ms = on->run->o->max_latency_ms;
        th->max_rate = on->run->o->max_rate;
        th->base = on->run->o->batch_size;
        th->rate_t0 = now;
        /* A `set` before this run began was for the run before: this one
         * takes its own options, and any `set` from now on. */
        if (!online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                               err))
            ok = false;
        th->settings_at = ok ? field_int (&rec, "settings.at", 0) : 0;
        bson_destroy (&rec);
        if (!ok || !probe (on, th, err) || !note_state (on, th, err))
            return false;
    } else if (n == 0 && ms == 0) {
        /* A pass begins: at the size asked for (set's if it gave one), or
         * where --max-latency left the last pass: the server is no faster
         * for a new collection. */
        *batch_size = th->max_latency_ms > 0 && th->size ? th->size : th->base;
    } else if (n > 0) {
        int64_t was = *batch_size;
        *batch_size = th->size = online_throttle_size (*batch_size, th->base, ms, th->max_latency_ms);
        if (*batch_size != was) {
            char more[200];
            rm_buf_t line;
            snprintf (more, sizeof more, ",\"batchSize\":%lld,\"was\":%lld,\"ms\":%lld",
                      (long long) *batch_size, (long long) was, (long long) ms);
            json_line (&line, on, *batch_size < was ? "smaller batches" : "larger batches",
                       *batch_size < was ? "a batch's round trips over --max-latency" : NULL, more);
            /* Larger batches are a JSON line only: on a terminal, no news. */
            if (*batch_size < was)
                online_say_event (on, ONLINE_SAY_ASIDE, &line, "a batch took %lld ms, over "
                                  "--max-latency %lld ms: batches of %lld documents now",
                                  (long long) ms, (long long) th->max_latency_ms,
                                  (long long) *batch_size);
            else
                online_say_json (on, &line);
            rm_buf_destroy (&line);
        }
        th->rate_n += n;
        if (th->max_rate > 0)
            online_sleep_ms (th->rate_t0 + th->rate_n * 1000 / th->max_rate - now);
    }
    for (;;) {
        bson_t rec;
        bool found, wait = false;
        ok = online_state_get (on, "plans", on->run->names.id, &rec, &found, "reading the plan's record",
                               err);
        /* One read of the record a batch, as before the throttle: pause
         * keeps its own wait (and words) when the record says paused. */
        if (ok && field_int (&rec, "paused", 0)) {
            bson_destroy (&rec);
            if (!online_wait_while_paused (on, err))
                return false;
            continue;
        }
        ok = ok &&
             take_settings (on, th, &rec, batch_size, err) && decide (on, th, &rec, &wait, err);
        bson_destroy (&rec);
        if (!ok)
            return false;
        if (!wait && th->throttled) {
            char more[64];
            rm_buf_t line;
            int64_t took = online_mono_ms () - th->since;
            th->throttled = false;
            snprintf (more, sizeof more, ",\"ms\":%lld", (long long) took);
            json_line (&line, on, "off", NULL, more);
            online_say_event (on, ONLINE_SAY_NOTE, &line, "throttle lifted after %.1f s",
                              (double) took / 1000.0);
            rm_buf_destroy (&line);
            /* The rate counts from here: the wait is no reason to hurry. */
            th->rate_t0 = online_mono_ms ();
            th->rate_n = 0;
            return note_state (on, th, err);
        }
        if (!wait)
            return true;
        if (!th->throttled) {
            rm_buf_t line;
            th->throttled = true;
            th->since = online_mono_ms ();
            json_line (&line, on, "on", th->reason, NULL);
            online_say_event (on, ONLINE_SAY_ASIDE, &line, "throttled: %s", th->reason);
            rm_buf_destroy (&line);
            if (!note_state (on, th, err))
                return false;
        }
        if (!online_stop_check (on, "while throttled", err) || !online_lease_check (on, err))
            return false;
        online_sleep_ms (WAIT_MS);
    }
}

bool
online_throttle_manual (online_t *on, bool on_, bson_error_t *err)
{
    bson_t *set = BCON_NEW ("$set", "{", "throttle.manual", BCON_BOOL (on_), "throttle.manualAt",
                            BCON_DATE_TIME (online_wall_ms ()), "}");
    bool ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

bool
online_throttle_set (online_t *on, const online_opts_t *o, bson_error_t *err)
{
    bson_t set = BSON_INITIALIZER, fields, settings;
    bool ok;
    if (!o->given_batch_size && !o->given_max_rate && !o->given_max_lag) {
        rm_error_set (err, RM_ERR_USAGE, "set: give --batch-size, --max-rate or --max-lag");
        bson_destroy (&set);
        return false;
    }
    /* Whole: what an earlier set gave and this one does not is not taken
     * again (a worker's batch size --max-latency halved stays so). */
    BSON_APPEND_DOCUMENT_BEGIN (&set, "$set", &fields);
    BSON_APPEND_DOCUMENT_BEGIN (&fields, "settings", &settings);
    if (o->given_batch_size)
        BSON_APPEND_INT64 (&settings, "batchSize", o->batch_size);
    if (o->given_max_rate)
        BSON_APPEND_INT64 (&settings, "maxRate", o->max_rate);
    if (o->given_max_lag)
        BSON_APPEND_INT64 (&settings, "maxLagMs", o->max_lag_ms);
    BSON_APPEND_DATE_TIME (&settings, "at", online_wall_ms ());
    bson_append_document_end (&fields, &settings);
    bson_append_document_end (&set, &fields);
    ok = online_plan_update (on, &set, err);
    bson_destroy (&set);
    return ok;
}
