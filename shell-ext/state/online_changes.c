/* What changed since a point of the change log (online_state.h): the
 * _ids written in each of the plan's source namespaces, read from a
 * change stream per namespace or from local.oplog.rs.
 *
 * Only _ids are kept: whatever an event says of the document, the sync
 * reads it again as it is now (an update event's fullDocument is already
 * the document as it was when the event was read, not as it was written),
 * so an event read twice, or out of order between two namespaces, only
 * costs a document read again. The lists are online_idlist.c's; what
 * each event or entry says, online_change_event.c's. */
#include <stdio.h>
#include <string.h>

#include "online_interrupt.h"
#include "online_state.h"
#include "remodel/value.h"

size_t
online_changes_sources (online_t *on, const char **out, size_t cap)
{
    const rm_nsref_t *made[64];
    size_t n = 0, nm = 0;
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *st = online_step (on, s, false);
        const rm_nsref_t *const *in = st->in;
        size_t ni = st->n_in;
        for (size_t k = 0; k < ni; k++) {
            bool skip = false;
            for (size_t m = 0; m < nm; m++)
                skip |= !strcmp (made[m]->text, in[k]->text);
            for (size_t m = 0; m < n; m++)
                skip |= !strcmp (out[m], in[k]->text);
            if (!skip && n < cap)
                out[n++] = in[k]->text;
        }
        /* In place a step rewrites its sources, whose events are in the
         * log: nothing is made elsewhere. */
        if (on->run->o->in_place)
            continue;
        for (size_t t = 0; t < st->nt && nm < 64; t++)
            made[nm++] = st->targets[t];
    }
    return n;
}

/* ---- change streams ---- */

/* How long a stream may stay behind the next point before the read fails
 * (rather than end there, leaving events out). */
#define STREAM_BEHIND_MS 60000

/* How long a getMore waits for events that may still come: one that
 * returns none means the stream has given everything written before it
 * (where the server says how far its batches reached, postBatchResumeToken,
 * the read goes on until that passes the next point: online_stream_behind).
 * Where the next point is a sentinel, its event was seen before the read
 * began, so every event before it is visible already: the wait is short. */
#define STREAM_QUIET_MS 300
#define STREAM_QUIET_SENTINEL_MS 50

/* How many times one read opens its stream again after an invalidate
 * that followed remodel's own rename (finalize's switch: two renames a
 * namespace). */
#define STREAM_REOPEN_MAX 8

/* One namespace's change stream being read: its cursor and how far its
 * events have come. */
typedef struct {
    char db[128];
    const char *coll, *ns;
    int64_t id;             /* the cursor (0: none open) */
    online_stream_at_t at;
} stream_t;

/* st's stream opened at from (or, after an invalidate, after token), its
 * first batch into ch; history lost is said in ch->rescan. */
static bool
stream_open (online_t *on, stream_t *st, const online_capture_t *from, const bson_t *token,
             online_changes_t *ch, bson_error_t *err)
{
    bson_t *cmd, reply;
    bson_error_t why;
    bool ok;
    /* A cluster time opens any collection's stream at that moment (real
     * MongoDB); a server without one gives tokens that are positions in
     * its one log (online_capture.c). startAfter, not resumeAfter:
     * mongo-java-server answers a resumeAfter on a collection once dropped
     * with an invalidate and nothing else, for any token, even one after
     * the drop; startAfter gives the events (the drop among them), so a
     * drop handled once is not seen again at every round. It is also what
     * opens a stream again after an invalidate. */
    if (!token && from->has_ts)
        cmd = BCON_NEW ("aggregate", BCON_UTF8 (st->coll), "pipeline", "[", "{", "$changeStream",
                        "{", "fullDocument", BCON_UTF8 ("updateLookup"), "startAtOperationTime",
                        BCON_TIMESTAMP (from->ts_t, from->ts_i), "}", "}", "]", "cursor", "{",
                        "}");
    else
        cmd = BCON_NEW ("aggregate", BCON_UTF8 (st->coll), "pipeline", "[", "{", "$changeStream",
                        "{", "fullDocument", BCON_UTF8 ("updateLookup"), "startAfter",
                        BCON_DOCUMENT (token ? token : &from->token), "}", "}", "]", "cursor",
                        "{", "}");
    ok = online_ops (on)->stream (on, st->db, cmd, &reply, &why);
    bson_destroy (cmd);
    st->id = 0;
    if (!ok) {
        bson_destroy (&reply);
        if (why.code == 286 || why.code == 280) {
            snprintf (ch->rescan, sizeof ch->rescan, "history lost since the last point (%s)",
                      why.message);
            return true;
        }
        return online_fail (on, err, &why, "reading the change stream");
    }
    online_stream_batch (ch, st->ns, &reply, "firstBatch", &st->id, &st->at);
    bson_destroy (&reply);
    return true;
}

/* The position of the point to, where it has one: its cluster time, or
 * its token's (MongoDB's KeyString; mongo-java-server's "_data" is 16 hex
 * digits, the seconds and the counter of its one oplog, as its events'
 * clusterTime). */
static bool
point_time (const online_capture_t *to, uint32_t *t, uint32_t *i)
{
    bson_iter_t it;
    const char *hex;
    uint32_t len;
    uint64_t v = 0;
    if (to->has_ts) {
        *t = to->ts_t;
        *i = to->ts_i;
        return true;
    }
    if (rm_resume_token_time (&to->token, t, i))
        return true;
    if (!bson_iter_init_find (&it, &to->token, "_data") || !BSON_ITER_HOLDS_UTF8 (&it))
        return false;
    hex = bson_iter_utf8 (&it, &len);
    if (len != 16)
        return false;
    for (uint32_t k = 0; k < len; k++) {
        char c = hex[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t) d;
    }
    *t = (uint32_t) (v >> 32);
    *i = (uint32_t) v;
    return true;
}

/* Whether the stream's last event is at or past the point (t, i): every
 * event before the point is read; those after are the next read's. */
static bool
past_point (const online_changes_t *ch, bool bounded, uint32_t t, uint32_t i)
{
    return bounded && ch->last_known &&
           (ch->last_t > t || (ch->last_t == t && ch->last_i >= i));
}

static bool
stream_read (online_t *on, const online_capture_t *from, const online_capture_t *to,
             const char *ns, online_changes_t *ch, bson_error_t *err)
{
    const char *dot = strchr (ns, '.');
    stream_t st = {.ns = ns};
    bson_t *cmd, reply;
    bson_error_t why;
    int64_t before, t0 = online_mono_ms ();
    uint32_t pt = 0, pi = 0;
    bool ok, bounded;
    int reopened = 0;

    if (!dot || (size_t) (dot - ns) >= sizeof st.db)
        return true;
    snprintf (st.db, sizeof st.db, "%.*s", (int) (dot - ns), ns);
    st.coll = dot + 1;
    ch->own_last = false;
    ch->own_anon = 0;
    ch->last_known = false;
    /* A read stops at the point taken when its sync began, not at a quiet
     * getMore: while the application writes faster than the getMore's
     * wait, there is none (on MongoDB, whose getMore waits for the first
     * event, too). */
    bounded = point_time (to, &pt, &pi);
    if (!stream_open (on, &st, from, NULL, ch, err))
        return false;
    do {
        before = ch->events;
        /* An invalidate after remodel's own rename: on after it. */
        if (ch->reopen && reopened++ < STREAM_REOPEN_MAX && !*ch->rescan) {
            bson_t *tok = ch->reopen;
            ch->reopen = NULL;
            online_cursor_kill (on, st.db, st.coll, st.id);
            ok = stream_open (on, &st, from, tok, ch, err);
            bson_destroy (tok);
            if (!ok)
                return false;
            before = -1;
            continue;
        }
        if (!st.id)
            break;
        /* SIGINT, SIGTERM: between two getMores (each waits a fraction of
         * a second), not after the whole log. */
        if (online_stop_requested ()) {
            online_cursor_kill (on, st.db, st.coll, st.id);
            return online_stop_check (on, "while reading the change log (nothing applied from "
                                      "it: the next sync reads it again)", err);
        }
        if (online_stream_behind (&st.at, to) && online_mono_ms () - t0 > STREAM_BEHIND_MS) {
            rm_error_set (err, RM_ERR_IO, "%s: the change stream of %s has not reached the next "
                          "point, Timestamp(%u, %u), after %d s (at Timestamp(%u, %u)): its events "
                          "are not majority-committed yet; run it again", on->run->where, ns,
                          to->ts_t, to->ts_i, STREAM_BEHIND_MS / 1000, st.at.t, st.at.i);
            /* A lag that passes: retried like a network error. */
            on->transient = true;
            return false;
        }
        cmd = BCON_NEW ("getMore", BCON_INT64 (st.id), "collection", BCON_UTF8 (st.coll),
                        "maxTimeMS",
                        BCON_INT32 (to->sentinel ? STREAM_QUIET_SENTINEL_MS : STREAM_QUIET_MS));
        ok = online_ops (on)->stream (on, st.db, cmd, &reply, &why);
        bson_destroy (cmd);
        if (ok)
            online_stream_batch (ch, ns, &reply, "nextBatch", &st.id, &st.at);
        bson_destroy (&reply);
        if (!ok)
            return online_fail (on, err, &why, "reading the change stream");
    } while ((ch->events > before || online_stream_behind (&st.at, to)) && !*ch->rescan &&
             !past_point (ch, bounded, pt, pi));
    if (ch->reopen && !*ch->rescan)
        snprintf (ch->rescan, sizeof ch->rescan, "the change stream of %s was invalidated more "
                  "than %d times", ns, STREAM_REOPEN_MAX);
    online_cursor_kill (on, st.db, st.coll, st.id);
    return true;
}

/* ---- the oplog ---- */

/* FerretDB writes a document, then takes its oplog entry's ts, then
 * inserts the entry: two connections' entries can become visible out of
 * ts order, so a read that returned ts T may have missed one below T that
 * shows up later (under load, once in a loaded CI run: a write that never
 * reached the results). MongoDB hides such holes from oplog readers;
 * nothing tells the two apart, so a point that a read of the log gave
 * keeps a settle window below it: the next read starts at the window's
 * start (SETTLE_S seconds below the point, never below the last window's)
 * and compares what it finds there with what the read that gave the point
 * found (a count and a sum of their ts, mixed). The same: nothing came
 * late, and those entries are not applied twice. Not the same: every entry
 * in the window is applied again, which is harmless (applying an entry
 * recomputes its _id's results from the sources as they are). A point
 * taken before a copy (run) or a rescan has no window: the copy read
 * every document after every entry up to it was written. A read bounded
 * by a point taken before it, that point then saved (a --to-uri copy
 * step: online_changes_read_to), gives it the same window. */
#define SETTLE_S 30

static inline uint64_t
ts64 (uint32_t t, uint32_t i)
{
    return (uint64_t) t << 32 | i;
}

/* An entry's ts as the window's sum adds it: mixed, so that two sets of
 * one count rarely sum alike. */
static inline uint64_t
ts_mix (uint64_t ts)
{
    ts ^= ts >> 29;
    ts *= UINT64_C (0xBF58476D1CE4E5B9);
    return ts ^ (ts >> 32);
}

/* One read of the oplog, made on a call a signal cuts short
 * (online_interrupt.h): FerretDB 1.x filters on ts in its own code, after
 * reading every entry, so the first batch of a read of a few entries
 * comes after the whole oplog (13 s at remodel-gen scale 20). What the
 * call keeps of each entry is what online_oplog_entry reads: the op, ns,
 * ts and the _id, the whole o of a command; a few dozen bytes an entry,
 * whatever the documents weigh. */
typedef struct {
    bson_t filter;
    bson_t kept; /* the entries, as an array */
    uint32_t n;
    const online_ops_t *ops; /* the run's (the call has its client only) */
    /* A read to the log's end (online_changes_read_next): every
     * namespace's entries come, those of want (the filter's $in, as an
     * array) are kept; the last ts of all of them is the next point. */
    bool all;
    bson_t want;
    int64_t returned;
    bool last;
    uint32_t last_t, last_i;
    /* The settle window: from, the point (entries at or below it are
     * read again); of those of nss, their count and sum; the ts of every
     * entry of nss read, for the next point's window. */
    uint64_t from;
    int64_t again_n;
    uint64_t again_sum;
    uint64_t *read;
    size_t n_read, cap_read;
} oplog_call_t;

static void
oplog_call_free (void *p)
{
    oplog_call_t *r = p;
    bson_destroy (&r->filter);
    bson_destroy (&r->kept);
    bson_destroy (&r->want);
    bson_free (r->read);
    bson_free (r);
}

/* Whether the namespace of entry e is one of r->want. */
static bool
oplog_wanted (const oplog_call_t *r, const bson_t *e)
{
    bson_iter_t it, w;
    const char *ns;
    if (!bson_iter_init_find (&it, e, "ns") || !BSON_ITER_HOLDS_UTF8 (&it))
        return false;
    ns = bson_iter_utf8 (&it, NULL);
    if (!bson_iter_init (&w, &r->want))
        return false;
    while (bson_iter_next (&w))
        if (BSON_ITER_HOLDS_UTF8 (&w) && !strcmp (bson_iter_utf8 (&w, NULL), ns))
            return true;
    return false;
}

/* The latest ts of the entries read (has: the entry has one): the
 * insertion order is the ts order on every server seen, the greatest kept
 * anyway. */
static void
oplog_note_ts (oplog_call_t *r, bool has, uint32_t t, uint32_t i)
{
    r->returned++;
    if (!has)
        return;
    if (!r->last || t > r->last_t || (t == r->last_t && i > r->last_i)) {
        r->last_t = t;
        r->last_i = i;
        r->last = true;
    }
}

/* Appends to dst the element of src at path (top level or one below),
 * under the same top-level key, when there is one. */
static void
keep_field (bson_t *dst, const bson_t *src, const char *key, const char *sub)
{
    bson_iter_t it, in;
    bson_t d;
    if (!bson_iter_init_find (&it, src, key))
        return;
    if (!sub) {
        bson_append_iter (dst, key, -1, &it);
        return;
    }
    if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &in) || !bson_iter_find (&in, sub))
        return;
    BSON_APPEND_DOCUMENT_BEGIN (dst, key, &d);
    bson_append_iter (&d, sub, -1, &in);
    bson_append_document_end (dst, &d);
}

/* What the oplog read keeps of an entry (the table's oplog calls it). */
static void
oplog_keep (const bson_t *e, void *arg)
{
    oplog_call_t *r = arg;
    bson_iter_t it;
    bson_t one;
    char key[16];
    const char *kp;
    uint32_t t = 0, i = 0;
    bool cmd = bson_iter_init_find (&it, e, "op") && BSON_ITER_HOLDS_UTF8 (&it) &&
               !strcmp (bson_iter_utf8 (&it, NULL), "c");
    bool has = bson_iter_init_find (&it, e, "ts") && BSON_ITER_HOLDS_TIMESTAMP (&it);
    if (has)
        bson_iter_timestamp (&it, &t, &i);
    /* Within the settle window: read again, not counted as the log's. */
    bool again = ts64 (t, i) <= r->from;
    if (!again)
        oplog_note_ts (r, has, t, i);
    if (r->all && !oplog_wanted (r, e))
        return;
    if (r->n_read == r->cap_read) {
        r->cap_read = r->cap_read ? 2 * r->cap_read : 256;
        r->read = bson_realloc (r->read, r->cap_read * sizeof *r->read);
    }
    r->read[r->n_read++] = ts64 (t, i);
    if (again) {
        r->again_n++;
        r->again_sum += ts_mix (ts64 (t, i));
    }
    bson_uint32_to_string (r->n++, &kp, key, sizeof key);
    BSON_APPEND_DOCUMENT_BEGIN (&r->kept, kp, &one);
    keep_field (&one, e, "op", NULL);
    keep_field (&one, e, "ns", NULL);
    keep_field (&one, e, "ts", NULL);
    keep_field (&one, e, "o", cmd ? NULL : "_id");
    keep_field (&one, e, "o2", "_id");
    bson_append_document_end (&r->kept, &one);
}

static bool
oplog_call (mongoc_client_t *client, void *arg, bson_error_t *why)
{
    oplog_call_t *r = arg;
    return r->ops->oplog (client, &r->filter, oplog_keep, r, why);
}

/* The namespaces an oplog read keeps: nss and their databases' commands
 * ("db.$cmd"), as an array into arr. */
static void
oplog_namespaces (bson_t *arr, const char **nss, size_t nns)
{
    uint32_t n = 0;
    for (size_t i = 0; i < nns; i++) {
        char key[16], cmd[200];
        const char *kp, *dot = strchr (nss[i], '.');
        size_t kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
        bson_append_utf8 (arr, kp, (int) kl, nss[i], -1);
        if (dot) {
            snprintf (cmd, sizeof cmd, "%.*s.$cmd", (int) (dot - nss[i]), nss[i]);
            kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_utf8 (arr, kp, (int) kl, cmd, -1);
        }
    }
}

/* The entries after from, of ch->nss, into ch: up to to (bounded,
 * filtered on ns by the server), or (to NULL) up to the log's end, every
 * namespace's read and those of ch->nss kept here. next (NULL: none) is
 * given the next point: to's ts, or an unbounded read's last entry's
 * (from's when none came after it), and the settle window below it. */
static bool
oplog_read (online_t *on, const online_capture_t *from, const online_capture_t *to,
            online_changes_t *ch, online_capture_t *next, bson_error_t *err)
{
    oplog_call_t *r = bson_aligned_alloc0 (BSON_ALIGNOF (oplog_call_t), sizeof *r);
    bson_t ts, in, arr;
    bson_iter_t it;
    bson_error_t why;
    bool ok, stopped;

    r->ops = online_ops (on);
    r->all = !to;
    r->from = ts64 (from->ts_t, from->ts_i);
    /* From the point's window on, where it has one. */
    uint64_t after = from->has_settle ? ts64 (from->settle_t, from->settle_i) : r->from;
    bson_init (&r->filter);
    bson_init (&r->kept);
    bson_init (&r->want);
    BSON_APPEND_DOCUMENT_BEGIN (&r->filter, "ts", &ts);
    BSON_APPEND_TIMESTAMP (&ts, "$gt", (uint32_t) (after >> 32), (uint32_t) after);
    if (to && to->has_ts)
        BSON_APPEND_TIMESTAMP (&ts, "$lte", to->ts_t, to->ts_i);
    bson_append_document_end (&r->filter, &ts);
    if (r->all) {
        oplog_namespaces (&r->want, ch->nss, ch->nns);
    } else {
        BSON_APPEND_DOCUMENT_BEGIN (&r->filter, "ns", &in);
        BSON_APPEND_ARRAY_BEGIN (&in, "$in", &arr);
        oplog_namespaces (&arr, ch->nss, ch->nns);
        bson_append_array_end (&in, &arr);
        bson_append_document_end (&r->filter, &in);
    }
    ok = online_call_interruptible (on, oplog_call, r, oplog_call_free,
                                    "the change log's entries since the last point "
                                    "(local.oplog.rs, read whole by some servers)",
                                    "while reading local.oplog.rs (nothing applied from it: the "
                                    "next sync reads it again)", &stopped, &why, err);
    if (stopped)
        return false; /* r is the call's to free */
    if (!ok) {
        oplog_call_free (r);
        return online_fail (on, err, &why, "reading local.oplog.rs");
    }
    ch->log_entries += r->returned;
    /* The window read again as the read that gave the point saw it: its
     * entries are in the results already. */
    bool same = from->has_settle && r->again_n == from->settle_n &&
                (int64_t) r->again_sum == from->settle_sum;
    if (next) {
        /* The next point's window: SETTLE_S seconds below it, from this
         * window's start at the lowest, and what this read saw there. A
         * bounded read's next point is its bound; an unbounded one's, the
         * last entry it read, or with none after from, from again (its
         * entry is in the log while the next sync's loss check finds it
         * there). */
        uint64_t upto = to && to->has_ts ? ts64 (to->ts_t, to->ts_i)
                        : r->last       ? ts64 (r->last_t, r->last_i)
                                        : r->from;
        uint64_t start = upto >> 32 > SETTLE_S ? ((upto >> 32) - SETTLE_S) << 32 : 0;
        uint64_t sum = 0;
        int64_t n = 0;
        if (start < after)
            start = after;
        for (size_t k = 0; k < r->n_read; k++)
            if (r->read[k] > start && r->read[k] <= upto) {
                n++;
                sum += ts_mix (r->read[k]);
            }
        next->ts_t = (uint32_t) (upto >> 32);
        next->ts_i = (uint32_t) upto;
        next->has_ts = true;
        next->has_settle = true;
        next->settle_t = (uint32_t) (start >> 32);
        next->settle_i = (uint32_t) start;
        next->settle_n = n;
        next->settle_sum = (int64_t) sum;
    }
    if (bson_iter_init (&it, &r->kept))
        while (bson_iter_next (&it)) {
            const uint8_t *data;
            uint32_t len, t = 0, i = 0;
            bson_t one;
            bson_iter_t ts_it;
            int64_t events = ch->events;
            bson_iter_document (&it, &len, &data);
            if (!bson_init_static (&one, data, len))
                continue;
            if (bson_iter_init_find (&ts_it, &one, "ts") && BSON_ITER_HOLDS_TIMESTAMP (&ts_it))
                bson_iter_timestamp (&ts_it, &t, &i);
            bool again = ts64 (t, i) <= r->from;
            if (again && same)
                continue;
            online_oplog_entry (ch, &one);
            /* Read again within the settle window: applied, not counted
             * as an event since the point. */
            if (again)
                ch->events = events;
        }
    oplog_call_free (r);
    return true;
}

/* --to-uri: the source's log, read through a view of its connection
 * (online_pair_log): the sources are there, the results elsewhere.
 * settle: to, the oplog's point, is given the window of what was read
 * below it (to is then saved as the next point). */
static bool
changes_read (online_t *on, const online_capture_t *from, const online_capture_t *to,
              online_capture_t *settle, online_changes_t *ch, bson_error_t *err)
{
    online_run_t view_run;
    online_t view, *src = online_pair_log (on, &view, &view_run);
    bool ok = true;

    if (from->mode == ONLINE_CAPTURE_OPLOG)
        ok = oplog_read (src, from, to, ch, settle && settle->has_ts ? settle : NULL, err);
    for (size_t i = 0; ok && from->mode != ONLINE_CAPTURE_OPLOG && i < ch->nns && !*ch->rescan; i++)
        ok = stream_read (src, from, to, ch->nss[i], ch, err);
    online_pair_log_end (on, src);
    return ok;
}

bool
online_changes_read (online_t *on, const online_capture_t *from, const online_capture_t *to,
                     online_changes_t *ch, bson_error_t *err)
{
    return changes_read (on, from, to, NULL, ch, err);
}

bool
online_changes_read_to (online_t *on, const online_capture_t *from, online_capture_t *to,
                        online_changes_t *ch, bson_error_t *err)
{
    return changes_read (on, from, to, to, ch, err);
}

bool
online_changes_read_next (online_t *on, const online_capture_t *from, online_capture_t *next,
                          online_changes_t *ch, bool *read, bson_error_t *err)
{
    online_run_t view_run;
    online_t view, *src;
    bool ok;

    *read = false;
    if (from->mode != ONLINE_CAPTURE_OPLOG || !from->has_ts)
        return online_capture_start (on, next, err);
    if (!online_capture_detect_mode (on, next, err))
        return false;
    /* The server no longer offers the oplog: as before, the point its
     * mode gives, then the read of the recorded mode. */
    if (next->mode != ONLINE_CAPTURE_OPLOG)
        return online_capture_start (on, next, err);
    src = online_pair_log (on, &view, &view_run);
    ok = oplog_read (src, from, NULL, ch, next, err);
    online_pair_log_end (on, src);
    *read = ok;
    return ok;
}
