/* Whether the change log's history lasts (online_state.h), as mongosync checks
 * its oplog window before it starts: a run's start point must still be in
 * the oplog when the copy ends, or every sync after it rescans
 * everything (online_capture_lost).
 *
 * What the oplog must hold from the point on: the copy's own results
 * (about the size of the collections the plan reads: each result is an
 * insert entry carrying the whole document) and the application's writes
 * while the copy runs, at the rate the oplog holds now (the bytes it
 * holds over the time between its first and last entries). The copy's
 * time is the documents its passes drive over a rate: the checkpoints'
 * (a run resumed), else a timed read of one batch of the first driving
 * collection, bounded by --max-rate and --pause. Read from
 * local.oplog.rs and its collStats (size, maxSize): a capped oplog,
 * whatever the capture mode (a replica set's change streams are read from
 * it too); an oplog that is not capped (mongo-java-server's) or that this
 * user may not read is never said to be short. Only said, never fatal:
 * the run goes on, and a lost point costs a rescan, not a write.
 * --to-uri: the oplog is the source's; the copy's results go to the
 * destination, so only the application's writes count against it. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"

typedef struct {
    int64_t used, max;    /* bytes */
    uint32_t first, last; /* entries' seconds */
    uint32_t first_i;     /* the first entry's increment */
} oplog_t;

static bool
command_doc (online_t *on, const char *db, bson_t *cmd, bson_t *reply)
{
    bson_error_t why;
    bool ok = online_ops (on)->command (on, NULL, db, cmd, reply, &why);
    bson_destroy (cmd);
    return ok;
}

static int64_t
number (const bson_t *doc, const char *key)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, doc, key) && BSON_ITER_HOLDS_NUMBER (&it)
               ? bson_iter_as_int64 (&it)
               : -1;
}

/* The oplog's size and span; false when it is not capped or not read. */
static bool
oplog_span (online_t *on, oplog_t *o)
{
    bson_t reply;
    bson_iter_t it;
    bson_error_t why;
    uint32_t i;
    bool found1, found2, capped;

    memset (o, 0, sizeof *o);
    if (!command_doc (on, "local", BCON_NEW ("collStats", BCON_UTF8 ("oplog.rs")), &reply)) {
        bson_destroy (&reply);
        return false;
    }
    capped = bson_iter_init_find (&it, &reply, "capped") && bson_iter_as_bool (&it);
    o->used = number (&reply, "size");
    o->max = number (&reply, "maxSize");
    bson_destroy (&reply);
    return capped && o->max > 0 && o->used >= 0 &&
           online_oplog_edge (on, 1, &o->first, &o->first_i, &found1, &why) &&
           online_oplog_edge (on, -1, &o->last, &i, &found2, &why) && found1 && found2;
}

/* --to-uri: the source's oplog, through a view of its connection
 * (online_pair_log): the application writes there. Only a replica set
 * member's is capped; another's is not asked for (mongo-java-server
 * would make a database local for the read). */
static bool
oplog_read (online_t *on, oplog_t *o)
{
    online_t view, *src;
    online_run_t view_run;
    bool ok;

    if (on->run->pair && !*on->run->pair->caps.set_name)
        return false;
    src = online_pair_log (on, &view, &view_run);
    ok = oplog_span (src, o);
    online_pair_log_end (on, src);
    return ok;
}

/* Bytes a second the oplog was written at, over the time it spans (a
 * second at least: a burst logged within one is a second's worth). */
static int64_t
oplog_rate (const oplog_t *o)
{
    int64_t span = o->last > o->first ? (int64_t) (o->last - o->first) : 1;
    return o->used / span;
}

static void
megabytes (char *buf, size_t cap, int64_t bytes)
{
    snprintf (buf, cap, "%.1f MB", (double) bytes / 1e6);
}

/* replSetResizeOplog's size for `needed` bytes: twice as much, in
 * megabytes, and 990 at least (MongoDB's least). */
static int64_t
resize_mb (int64_t needed)
{
    int64_t mb = (2 * needed + 999999) / 1000000;
    return mb < 990 ? 990 : mb;
}

/* How to grow the oplog to hold `needed` bytes, on the server in use
 * (its capabilities record's identity): MongoDB resizes it in place;
 * FerretDB has no replSetResizeOplog (it keeps the capped local.oplog.rs
 * its operator made with --repl-set-name), which is made again larger,
 * losing its history: before a run, not while one follows. */
static void
grow_advice (const online_t *on, int64_t needed, char *buf, size_t cap)
{
    /* The source's server: with --to-uri the pair's record holds it (a
     * view of the source's log has it as its own). */
    const online_caps_t *caps = on->run->pair ? &on->run->pair->caps : &on->run->caps;
    if (!strcmp (caps->identity, "ferretdb"))
        snprintf (buf, cap, "FerretDB has no replSetResizeOplog: make its capped oplog again, "
                  "larger, before the run (its history is lost): "
                  "db.getSiblingDB(\"local\").oplog.rs.drop(); "
                  "db.getSiblingDB(\"local\").createCollection(\"oplog.rs\", {capped: true, "
                  "size: %lld}) (bytes)", (long long) resize_mb (needed) * 1000000);
    else
        snprintf (buf, cap, "db.adminCommand({replSetResizeOplog: 1, size: %lld}) (megabytes)",
                  (long long) resize_mb (needed));
}

/* Documents a second the copy will read: the checkpoints' rate, else a
 * batch of the driving collection read and timed; then --max-rate and
 * --pause. */
static int64_t
copy_rate (online_t *on, int64_t from_checkpoints, const char *db, const char *coll)
{
    int64_t rate = from_checkpoints, b = on->run->o->batch_size > 0 ? on->run->o->batch_size : 1000;
    if (rate <= 0 && db) {
        mongoc_collection_t *c = online_collection (on, db, coll);
        bson_t q = BSON_INITIALIZER;
        bson_t *opts = BCON_NEW ("limit", BCON_INT64 (b), "sort", "{", "_id", BCON_INT32 (1), "}");
        online_cursor_t *cur = online_ops (on)->find (on, c, &q, opts);
        const bson_t *doc;
        int64_t n = 0, t0 = online_mono_ms (), ms;
        while (online_ops (on)->next (cur, &doc))
            n++;
        ms = online_mono_ms () - t0;
        rate = n > 0 ? n * 1000 / (ms > 0 ? ms : 1) : 0;
        online_ops (on)->end (cur, NULL);
        bson_destroy (opts);
        mongoc_collection_destroy (c);
    }
    if (rate <= 0)
        return 0;
    if (on->run->o->max_rate > 0 && rate > on->run->o->max_rate)
        rate = on->run->o->max_rate;
    if (on->run->o->pause_ms > 0)
        rate = b * 1000 / (b * 1000 / rate + on->run->o->pause_ms);
    return rate > 0 ? rate : 1;
}

/* A collection's bytes (collStats size); 0 when it is not there. */
static int64_t
coll_bytes (online_t *on, const char *db, const char *coll)
{
    mongoc_collection_t *c = online_collection (on, db, coll);
    int64_t count, n = online_bytes_of (on, c, &count);
    mongoc_collection_destroy (c);
    return n > 0 ? n : 0;
}

/* --to-uri: the source's oplog against the application's writes alone,
 * at the rate it holds them, over the copy's docs at rate a second. */
static void
window_pair (online_t *on, const oplog_t *o, int64_t docs, int64_t rate)
{
    int64_t secs = (docs + rate - 1) / rate, wrate = oplog_rate (o), needed = wrate * secs;
    char held[32], wr[32], dur[32], hist[32], grow[300];

    if (needed <= o->max)
        return;
    grow_advice (on, needed, grow, sizeof grow);
    megabytes (held, sizeof held, o->max);
    megabytes (wr, sizeof wr, wrate);
    online_duration (dur, sizeof dur, secs);
    online_duration (hist, sizeof hist, wrate > 0 ? o->max / wrate : -1);
    online_say_note (on, "capture: the source's oplog is too small for this run: it keeps %s "
                     "(about %s of history at the %s/s it holds now), and the copy takes about "
                     "%s (%lld documents at about %lld/s): its start point would roll off before "
                     "the copy ends, and every sync then rescans everything; grow it first, on "
                     "the source: %s",
                     held, hist, wr, dur, (long long) docs, (long long) rate, grow);
}

void
online_window_before_run (online_t *on, const online_capture_t *c)
{
    oplog_t o;
    const rm_nsref_t *seen_ns[64], *first_db = NULL;
    size_t n_seen = 0;
    int64_t docs = 0, bytes = 0, done = 0, ck_rate = 0, rate, secs, wrate, needed;
    bson_error_t why;
    char held[32], wr[32], mine[32], dur[32], hist[32], grow[300];

    /* Said only as a note: with --quiet the oplog is not even read. */
    if (online_say_how (on).quiet || c->mode == ONLINE_CAPTURE_NONE || !oplog_read (on, &o))
        return;
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *st = online_step (on, s, on->run->o->in_place);
        const rm_nsref_t *const *in = st->in;
        const rm_pass_t *passes = st->passes;
        size_t ni = st->n_in;
        for (size_t p = 0; p < st->np; p++) {
            int64_t n = online_estimated (on, in[passes[p].drive]->db, in[passes[p].drive]->coll);
            docs += n > 0 ? n : 0;
            if (!first_db)
                first_db = in[passes[p].drive];
        }
        /* Each namespace read once: a later step's input made by an
         * earlier one is not there yet, and counts nothing. */
        for (size_t k = 0; k < ni && n_seen < 64; k++) {
            bool dup = false;
            for (size_t m = 0; m < n_seen; m++)
                dup |= !strcmp (seen_ns[m]->text, in[k]->text);
            if (!dup) {
                seen_ns[n_seen++] = in[k];
                bytes += coll_bytes (on, in[k]->db, in[k]->coll);
            }
        }
    }
    if (online_checkpoint_totals (on, &done, &ck_rate, &why) && done > 0) {
        /* A run resumed: what is left of it, at the rate it went. */
        docs = docs > done ? docs - done : 0;
        bytes = docs > 0 && docs + done > 0 ? bytes * docs / (docs + done) : 0;
    } else {
        ck_rate = 0;
    }
    rate = copy_rate (on, ck_rate, first_db ? first_db->db : NULL,
                      first_db ? first_db->coll : NULL);
    if (docs <= 0 || rate <= 0)
        return;
    /* --to-uri: the copy writes its results to the destination; only the
     * application's writes fill the source's oplog meanwhile. */
    if (on->run->pair) {
        window_pair (on, &o, docs, rate);
        return;
    }
    secs = (docs + rate - 1) / rate;
    wrate = oplog_rate (&o);
    needed = bytes + wrate * secs;
    if (needed <= o.max)
        return;
    grow_advice (on, needed, grow, sizeof grow);
    megabytes (held, sizeof held, o.max);
    megabytes (wr, sizeof wr, wrate);
    megabytes (mine, sizeof mine, bytes);
    online_duration (dur, sizeof dur, secs);
    online_duration (hist, sizeof hist, wrate > 0 ? o.max / wrate : -1);
    online_say_note (on, "capture: the oplog is too small for this run: it keeps %s (about %s "
                     "of history at the %s/s it holds now), and the copy writes about %s of "
                     "results to it over about %s (%lld documents at about %lld/s): its start "
                     "point would roll off before the copy ends, and every sync then rescans "
                     "everything; grow it first: %s",
                     held, hist, wr, mine, dur, (long long) docs, (long long) rate, grow);
}

void
online_window_follow (online_t *on, const online_capture_t *c)
{
    oplog_t o;
    int64_t wrate, history, age;
    char a[32], h[32], left[32], grow[300];

    if (online_say_how (on).quiet || c->mode == ONLINE_CAPTURE_NONE || !c->has_ts ||
        !oplog_read (on, &o))
        return;
    wrate = oplog_rate (&o);
    history = wrate > 0 ? o.max / wrate : -1;
    age = o.last > c->ts_t ? (int64_t) (o.last - c->ts_t) : 0;
    online_duration (a, sizeof a, age);
    online_duration (h, sizeof h, history);
    grow_advice (on, wrate * age, grow, sizeof grow);
    /* Rolled off already: the estimate of history is beside the point (a
     * capped oplog just truncated holds less than its size, so its
     * history reads long), and follow's first round rescans. */
    if (c->ts_t < o.first || (c->ts_t == o.first && c->ts_i < o.first_i)) {
        online_say_note (on, "follow: the recorded point is %s old, older than the oplog's "
                         "first entry: it rolled off, and follow rescans first; grow the oplog: %s",
                         a, grow);
        return;
    }
    if (history < 0 || age * 2 <= history)
        return;
    online_duration (left, sizeof left, history > age ? history - age : 0);
    online_say_note (on, "follow: the recorded point is %s old in an oplog that keeps about %s "
                     "of history at the rate it is written: it rolls off in about %s unless follow "
                     "catches up; grow the oplog: %s", a, h, left, grow);
}
