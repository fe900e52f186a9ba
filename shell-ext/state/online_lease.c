/* The lease: one run of a plan at a time, and a run that lost it writes
 * nothing more (online_state.h).
 *
 * In the state database:
 *   leases {_id: <plan id>, owner, epoch, expires, digest}: who holds the
 *          plan, under which epoch, until when (the server's time)
 *   fences {_id: "<plan id>#<epoch>", plan, epoch, owner, at}: one per
 *          epoch ever taken, never deleted while the plan is known
 *
 * Taking the lease is decided by one atomic operation both test servers
 * honour: inserting the next epoch's fence (a unique _id turns a lost race
 * into a duplicate key; an update of the lease document is not atomic on
 * FerretDB 1.x, which granted it twice). The lease document then names the
 * holder; releasing it unsets the holder and keeps the epoch, so the
 * counter never goes back.
 *
 * Time is the server's: its localTime (hello, or isMaster where hello is
 * missing: neither test server runs the pipeline updates that $$NOW needs),
 * read when the lease is taken, and carried forward by this process's
 * monotonic clock; so two hosts with skewed clocks judge expiry alike.
 *
 * Fencing: a thread renews the lease every LEASE_MS / 6 on a connection of
 * its own (a batch that takes long does not let it lapse); after each
 * renewal it looks for a newer epoch's fence (a run taking over writes it
 * first). Every write of a run first calls online_lease_check, which
 * refuses once the last renewal is older than LEASE_MS - MARGIN_MS by the
 * monotonic clock, or a newer epoch was seen. Another run takes over only
 * once the server's clock is past expires, that is LEASE_MS after the
 * holder's last renewal reached the server, so a holder that was stalled
 * (SIGSTOP, a swapped-out VM) stops writing MARGIN_MS before anyone else
 * may start. Checkpoints carry the epoch and are written only over an
 * older one's (online_state.c).
 *
 * An epoch is a count of takes: from 1, one more each time. One below 0
 * or past EPOCH_MAX was not written by a run (the state database edited,
 * or damaged), and believed it would lock the plan for good (2^63 - 1 has
 * no next epoch). So would a lease document whose fields are not of the
 * types a run writes (online_lease_doc_check: an owner that is no string
 * reads as released, an epoch that is no number as 0, whose next epoch's
 * fence exists already). The take refuses either, naming the field and
 * the ways out, which are run --restart (or sync --restart) and rollback
 * --forget: they drop the impossible fences and set the lease back to the
 * newest possible one, released, so the count stays above every epoch a
 * run wrote under. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online_lease_doc.h"
#include "online_state.h"
#include "remodel/tmppath.h"

/* How long a lease lasts without renewal (the tests' build's hook,
 * REMODEL_ONLINE_LEASE_MS, shortens it; the product has none); a holder
 * stops writing a third of it before its end (margin_ms). */
#define LEASE_MS_DEFAULT 30000

/* The largest epoch a run can have written: 2^53 takes is one a second
 * for 285 million years, and a double (what a tool or a server may turn
 * the number into) holds every epoch up to it exactly. */
#define EPOCH_MAX (INT64_C (1) << 53)

static bool
epoch_possible (int64_t epoch)
{
    return epoch >= 0 && epoch <= EPOCH_MAX;
}

struct online_lease {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mongoc_client_t *client;  /* the renewals' own connection */
    online_t *own;            /* the run's table and options on that connection */
    online_run_t renew_run;   /* the run as it sees it: options and table, no pair */
    char id[300], owner[128], state_db[128];
    char what[400];           /* for messages: "plan P", or a partition of it */
    int64_t epoch;
    int64_t lease_ms, margin_ms;
    int64_t server0, mono0;   /* the server's time at mono0 */
    int64_t renewed;          /* mono time the last good renewal was sent */
    bool lost, stop;
    bool watch;               /* a follow's: finalize's request looked for */
};

/* How often a follow's lease looks for finalize's request (the plan's
 * record's handover), so that a verify or a rescan stops within about
 * this long of it, rather than at the round's end. */
#define WATCH_MS 1000

static int64_t
lease_ms (void)
{
    int64_t v = online_hook_ms (ONLINE_HOOK_LEASE_MS);
    return v >= 1000 ? v : LEASE_MS_DEFAULT;
}

static mongoc_collection_t *
state (online_t *on, const char *coll)
{
    return online_collection (on, on->run->o->state_db, coll);
}

bool
online_server_now (online_t *on, int64_t *now, bson_error_t *err)
{
    static const char *const cmds[] = {"hello", "isMaster"};
    bson_error_t why = {0};
    for (size_t i = 0; i < 2; i++) {
        bson_t *cmd = BCON_NEW (cmds[i], BCON_INT32 (1));
        bson_t reply;
        bson_iter_t it;
        bool ok = online_ops (on)->command (on, NULL, "admin", cmd, &reply, &why);
        bool found = ok && bson_iter_init_find (&it, &reply, "localTime") &&
                     BSON_ITER_HOLDS_DATE_TIME (&it);
        if (found)
            *now = bson_iter_date_time (&it);
        bson_destroy (&reply);
        bson_destroy (cmd);
        if (found)
            return true;
        /* A network error is the run's to retry; a refusal of hello
         * means isMaster is worth a try. */
        if (!ok && !online_fail (on, err, &why, "asking the server's time") && on->transient)
            return false;
    }
    rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: the server says no localTime in hello or "
                  "isMaster, which the lease judges expiry by", on->run->where);
    return false;
}

typedef struct {
    bool found;
    char owner[160];        /* "" when released */
    int64_t epoch, expires;
    const char *bad;        /* a field of a type no run writes (NULL: none) */
    char why[160];          /* what it holds */
} lease_doc_t;

static bool
lease_read (online_t *on, const char *id, lease_doc_t *l, bson_error_t *err)
{
    bson_t doc;
    bool ok = online_state_get (on, "leases", id, &doc, &l->found, "reading the lease", err);

    online_lease_parse (&doc, l->owner, sizeof l->owner, &l->epoch, &l->expires);
    online_lease_doc_check (&doc, &l->bad, l->why, sizeof l->why);
    bson_destroy (&doc);
    return ok;
}

/* The newest fence of the plan: its epoch and when it was taken (0, 0:
 * none). */
static bool
fence_newest (online_t *on, mongoc_collection_t *c, const char *id, int64_t *epoch, int64_t *at,
              char *owner, size_t cap, bson_error_t *why)
{
    bson_t *q = BCON_NEW ("plan", BCON_UTF8 (id));
    bson_t *opts = BCON_NEW ("sort", "{", "epoch", BCON_INT32 (-1), "}", "limit", BCON_INT64 (1));
    online_cursor_t *cur = online_ops (on)->find (on, c, q, opts);
    const bson_t *doc;
    bson_iter_t it;
    bool ok;
    *epoch = *at = 0;
    if (owner)
        *owner = '\0';
    if (online_ops (on)->next (cur, &doc)) {
        if (bson_iter_init_find (&it, doc, "epoch") && BSON_ITER_HOLDS_NUMBER (&it))
            *epoch = bson_iter_as_int64 (&it);
        if (bson_iter_init_find (&it, doc, "at") && BSON_ITER_HOLDS_DATE_TIME (&it))
            *at = bson_iter_date_time (&it);
        if (owner && bson_iter_init_find (&it, doc, "owner") && BSON_ITER_HOLDS_UTF8 (&it))
            snprintf (owner, cap, "%s", bson_iter_utf8 (&it, NULL));
    }
    ok = online_ops (on)->end (cur, why);
    bson_destroy (opts);
    bson_destroy (q);
    return ok;
}

static int
refuse_held (online_t *on, const char *what, const char *holder, int64_t left, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_USAGE,
                  "%s: %s is being run by %s (its lease expires in %lld s unless renewed)",
                  on->run->where, what, holder, (long long) (left > 0 ? (left + 999) / 1000 : 0));
    return false;
}

static int64_t
server_time (const online_lease_t *l, int64_t mono)
{
    return l->server0 + (mono - l->mono0);
}

/* One renewal on the lease's own connection; *lost when it is not ours
 * any more. False: the server did not answer (tried again next time). */
static bool
renew_once (online_lease_t *l, bool *lost)
{
    online_t *own = l->own;
    mongoc_collection_t *fc = online_collection (own, l->state_db, "fences");
    int64_t sent = online_mono_ms (), newer = 0, at;
    bson_t *filter = BCON_NEW ("_id", BCON_UTF8 (l->id), "owner", BCON_UTF8 (l->owner), "epoch",
                               BCON_INT64 (l->epoch));
    bson_t *update = BCON_NEW ("$set", "{", "expires",
                               BCON_DATE_TIME (server_time (l, sent) + l->lease_ms), "}");
    bson_t reply;
    bson_iter_t it;
    bson_error_t why;
    bool ok = online_ops (own)->state_update (own, "leases", filter, update, false, &reply, &why);

    *lost = ok && !(bson_iter_init_find (&it, &reply, "matchedCount") &&
                    bson_iter_as_int64 (&it) == 1);
    /* A run taking over writes its fence before the lease document. */
    if (ok && !*lost) {
        ok = fence_newest (own, fc, l->id, &newer, &at, NULL, 0, &why);
        *lost = ok && online_lease_fenced (newer, l->epoch);
    }
    if (ok && !*lost) {
        pthread_mutex_lock (&l->mu);
        l->renewed = sent;
        pthread_mutex_unlock (&l->mu);
    }
    bson_destroy (&reply);
    bson_destroy (filter);
    bson_destroy (update);
    mongoc_collection_destroy (fc);
    return ok;
}

/* Whether the plan's record asks for the lease (on the renewals' own
 * connection); a failed read is tried again next time. */
static bool
handover_asked (online_lease_t *l)
{
    online_t *own = l->own;
    bson_t *sel = BCON_NEW ("_id", BCON_UTF8 (l->id)), doc;
    bson_iter_t it;
    bson_error_t why;
    bool found, asked;

    asked = online_ops (own)->state_read (own, "plans", sel, &doc, &found, &why) && found &&
            bson_iter_init_find (&it, &doc, "handover") && bson_iter_as_bool (&it);
    bson_destroy (&doc);
    bson_destroy (sel);
    return asked;
}

void
online_lease_watch_handover (online_t *on)
{
    online_lease_t *l = on->lease;
    if (!l)
        return;
    pthread_mutex_lock (&l->mu);
    l->watch = true;
    pthread_cond_signal (&l->cv);
    pthread_mutex_unlock (&l->mu);
}

static void *
renewer (void *arg)
{
    online_lease_t *l = arg;
    /* Renewals come when the timer says, a number of them between two of
     * the command's calls that varies from run to run: the fault layer
     * counts them as a kind of their own ("lease.update"), out of the
     * command's numbering, which then stays the same from run to run. */
    online_fault_thread ("lease");
    int64_t due = online_mono_ms () + l->lease_ms / 6;
    pthread_mutex_lock (&l->mu);
    while (!l->stop && !l->lost) {
        struct timespec until;
        int64_t wait = due - online_mono_ms ();
        bool lost = false, watch = l->watch;
        if (watch && wait > WATCH_MS)
            wait = WATCH_MS;
        if (wait < 0)
            wait = 0;
        clock_gettime (CLOCK_REALTIME, &until);
        until.tv_sec += wait / 1000;
        until.tv_nsec += (wait % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait (&l->cv, &l->mu, &until);
        if (l->stop)
            break;
        pthread_mutex_unlock (&l->mu);
        /* A failed renewal (the server away) is tried again next time;
         * meanwhile the deadline stands and the writes stop at it. */
        if (online_mono_ms () >= due) {
            renew_once (l, &lost);
            due = online_mono_ms () + l->lease_ms / 6;
        }
        /* The command's loops stop at their next batch, as for a signal
         * (online_signal.c); follow then hands the lease over. */
        if (watch && !lost && handover_asked (l))
            online_stop_for_handover ();
        pthread_mutex_lock (&l->mu);
        l->lost |= lost;
    }
    pthread_mutex_unlock (&l->mu);
    return NULL;
}

/* The renewals' connection: to the deployment holding the lease, the
 * run's own (on->client's): with --to-uri the destination, never the
 * source, which a run only reads. */
static mongoc_client_t *
lease_client (online_t *on)
{
    bson_error_t why;
    mongoc_uri_t *uri = mongoc_uri_new_with_error (on->run->o->to_uri ? on->run->o->to_uri : on->run->o->uri, &why);
    mongoc_client_t *c;
    if (!uri)
        return NULL;
    if (!mongoc_uri_has_option (uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
        mongoc_uri_set_option_as_int32 (uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
    c = mongoc_client_new_from_uri (uri);
    mongoc_uri_destroy (uri);
    if (c)
        mongoc_client_set_appname (c, "remodel-online-lease");
    /* The tests' fault layer under it too (its variable was read at the
     * run's own connection: nothing new to refuse here). */
    if (c && !online_fault_install (c, &why)) {
        mongoc_client_destroy (c);
        return NULL;
    }
    return c;
}

/* The fence of epoch next: inserted, or false with *raced when another
 * run inserted it first. */
static bool
fence_insert (online_t *on, const char *id, int64_t next, int64_t now, bool *raced,
              bson_error_t *err)
{
    char fid[340];
    bson_t *doc;
    bson_error_t why;
    bool ok;
    snprintf (fid, sizeof fid, "%s#%lld", id, (long long) next);
    doc = BCON_NEW ("_id", BCON_UTF8 (fid), "plan", BCON_UTF8 (id), "epoch", BCON_INT64 (next),
                    "owner", BCON_UTF8 (on->owner), "at", BCON_DATE_TIME (now));
    ok = online_ops (on)->state_insert (on, "fences", doc, &why);
    *raced = !ok && why.code == 11000;
    bson_destroy (doc);
    /* Our own fence, inserted and its reply lost, then sent again by the
     * driver (a retryable write FerretDB applies twice): not a race. */
    if (*raced) {
        bson_t fence;
        bool found = false;
        char owner[sizeof on->owner] = "";
        bool read = online_state_get (on, "fences", fid, &fence, &found,
                                      "reading the lease's fence", err);
        if (read && found)
            online_field_utf8 (&fence, "owner", owner, sizeof owner);
        bson_destroy (&fence);
        if (!read) {
            *raced = false; /* err says why */
            return false;
        }
        *raced = !found || strcmp (owner, on->owner) != 0;
        return !*raced;
    }
    if (!ok)
        online_fail (on, err, &why, "taking the lease (its fence)");
    return ok;
}

/* The ways out of a lease that cannot be taken, for the refusals (short:
 * an error's message holds 504 bytes, and the plan's path is in it twice). */
#define WAYS_OUT "the state database was changed or is damaged: remodel online run %s " \
                 "--restart or remodel online rollback %s --forget (a plan run in place) sets " \
                 "the lease back"

/* An impossible epoch of id's lease (its document's, or its newest
 * fence's): refused, with the ways out. */
static bool
epoch_refused (online_t *on, const char *what, const char *where, int64_t epoch,
               bson_error_t *err)
{
    rm_error_set (err, RM_ERR_DATA, "%s: %s: the lease's epoch %lld (in %s.%s) is impossible: "
                  "no run could have taken it; " WAYS_OUT, on->run->where, what, (long long) epoch,
                  on->run->o->state_db, where, on->run->o->plan_path, on->run->o->plan_path);
    return false;
}

/* A field of the lease document of a type no run writes: refused, naming
 * it, with the ways out. */
static bool
field_refused (online_t *on, const char *what, const lease_doc_t *l, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_DATA, "%s: %s: the lease's %s (in %s.leases) %s; " WAYS_OUT,
                  on->run->where, what, l->bad, on->run->o->state_db, l->why, on->run->o->plan_path,
                  on->run->o->plan_path);
    return false;
}

/* The repair of a lease that cannot be taken (run --restart, rollback
 * --forget): the fences past or below the possible ones dropped, and the
 * lease released at the newest fence left (each field of the type a run
 * writes), so the next take's epoch is above every one a run wrote
 * under. said: what was wrong, for the line that tells. */
static bool
lease_repair (online_t *on, const char *id, const char *what, const char *said,
              bson_error_t *err)
{
    mongoc_collection_t *fc = state (on, "fences");
    bson_t *del = BCON_NEW ("plan", BCON_UTF8 (id), "$or", "[", "{", "epoch", "{", "$lt",
                            BCON_INT64 (0), "}", "}", "{", "epoch", "{", "$gt",
                            BCON_INT64 (EPOCH_MAX), "}", "}", "]");
    bson_t *filter = BCON_NEW ("_id", BCON_UTF8 (id)), *update = NULL;
    int64_t newest = 0, at;
    bson_error_t why;
    bool ok = online_ops (on)->state_delete (on, "fences", del, true, &why) &&
              fence_newest (on, fc, id, &newest, &at, NULL, 0, &why);
    if (ok) {
        update = BCON_NEW ("$set", "{", "owner", BCON_UTF8 (""), "epoch", BCON_INT64 (newest),
                           "expires", BCON_DATE_TIME (0), "}");
        ok = online_ops (on)->state_update (on, "leases", filter, update, false, NULL, &why);
    }
    if (!ok)
        online_fail (on, err, &why, "setting the lease's epoch back");
    else
        online_say_note (on, "%s: the lease's %s set back to %lld, the newest possible one (%s)",
                         what, said, (long long) newest, on->run->o->restart ? "--restart" : "--forget");
    if (update)
        bson_destroy (update);
    bson_destroy (filter);
    bson_destroy (del);
    mongoc_collection_destroy (fc);
    return ok;
}

/* The lease document: ours at epoch next, unless a run with a newer epoch
 * wrote it first (refused as held). */
static bool
lease_write (online_t *on, const char *id, const char *what, int64_t next, int64_t now,
             bson_error_t *err)
{
    bson_error_t why;
    /* Only over an older epoch (or none): a newer run's lease stays. */
    bson_t *filter = BCON_NEW ("_id", BCON_UTF8 (id), "$or", "[", "{", "epoch", "{", "$lt",
                               BCON_INT64 (next), "}", "}", "{", "epoch", "{", "$exists",
                               BCON_BOOL (false), "}", "}", "]");
    bson_t *update = BCON_NEW ("$set", "{", "owner", BCON_UTF8 (on->owner), "epoch",
                               BCON_INT64 (next), "expires",
                               BCON_DATE_TIME (now + lease_ms ()), "digest",
                               BCON_UTF8 (on->run->names.digest), "plan", BCON_UTF8 (on->run->names.name), "}");
    bool ok = online_ops (on)->state_update (on, "leases", filter, update, true, NULL, &why);
    lease_doc_t now_l;
    bson_destroy (filter);
    bson_destroy (update);
    /* Our own write, applied and its reply lost, then sent again by the
     * driver (a retryable write, which a server without transactions'
     * bookkeeping, FerretDB, applies twice): the condition refuses the
     * second, the upsert then collides with the lease. Ours if it says so. */
    if (!ok && why.code == 11000) {
        if (!lease_read (on, id, &now_l, err))
            return false;
        if (now_l.found && now_l.epoch == next && !strcmp (now_l.owner, on->owner))
            return true;
        return refuse_held (on, what, "a newer run", lease_ms (), err);
    }
    if (!ok)
        return online_fail (on, err, &why, "taking the lease");
    return true;
}

/* on->lease: the lease just written, with its renewals started in a
 * thread of its own (and client of its own). */
static bool
lease_start (online_t *on, const char *id, const char *what, int64_t next, int64_t now,
             int64_t mono, bson_error_t *err)
{
    online_lease_t *l;
    bool started;
    sigset_t mask;

    l = bson_malloc0 (sizeof *l);
    pthread_mutex_init (&l->mu, NULL);
    pthread_cond_init (&l->cv, NULL);
    snprintf (l->id, sizeof l->id, "%s", id);
    snprintf (l->what, sizeof l->what, "%s", what);
    snprintf (l->state_db, sizeof l->state_db, "%s", on->run->o->state_db);
    snprintf (l->owner, sizeof l->owner, "%s", on->owner);
    l->epoch = next;
    l->lease_ms = lease_ms ();
    l->margin_ms = l->lease_ms / 3;
    l->server0 = now;
    l->mono0 = mono;
    l->renewed = mono;
    l->client = lease_client (on);
    l->own = bson_malloc0 (sizeof *l->own);
    l->own->client = l->client;
    l->renew_run.o = on->run->o;
    l->renew_run.ops = on->run->ops;
    l->own->run = &l->renew_run;
    on->lease = l;
    on->epoch = next;
    /* The renewals never see SIGINT or SIGTERM: the main thread's loops
     * stop on them (online_signal.c), and the thread inherits the mask. */
    online_signal_block (&mask);
    started = l->client && pthread_create (&l->thread, NULL, renewer, l) == 0;
    pthread_sigmask (SIG_SETMASK, &mask, NULL);
    if (!started) {
        if (l->client)
            mongoc_client_destroy (l->client);
        l->client = NULL;
        online_lease_drop (on);
        rm_error_set (err, RM_ERR_IO, "%s: cannot start the lease's renewals", on->run->where);
        return false;
    }
    return true;
}

/* The lease of id (the plan's, or one of its partitions', what names it
 * in messages) into on->lease; refused (RM_ERR_USAGE) while another
 * holds it. repaired: an impossible epoch was set back already. */
static bool
lease_take (online_t *on, const char *id, const char *what, bool repaired, bson_error_t *err)
{
    lease_doc_t cur, again;
    char claimer[160];
    int64_t now, mono, newest, newest_at, next;
    bool raced = false, repairs;
    bson_error_t why;
    mongoc_collection_t *c;

    mono = online_mono_ms ();
    if (!online_server_now (on, &now, err) || !lease_read (on, id, &cur, err))
        return false;
    /* Asked to repair (starting over, or forgetting the plan): a lease
     * that cannot be taken is set back, then taken. */
    repairs = (on->run->o->restart || on->run->o->forget) && !repaired;
    if (cur.found && cur.bad) {
        char said[260];
        if (!repairs)
            return field_refused (on, what, &cur, err);
        snprintf (said, sizeof said, "%s, which %s,", cur.bad, cur.why);
        return lease_repair (on, id, what, said, err) && lease_take (on, id, what, true, err);
    }
    if (online_lease_blocks (cur.found, cur.owner, on->owner, cur.expires, now))
        return refuse_held (on, what, cur.owner, cur.expires - now, err);
    c = state (on, "fences");
    if (!fence_newest (on, c, id, &newest, &newest_at, claimer, sizeof claimer, &why)) {
        mongoc_collection_destroy (c);
        return online_fail (on, err, &why, "reading the lease's fences");
    }
    mongoc_collection_destroy (c);
    if (!epoch_possible (cur.epoch) || !epoch_possible (newest)) {
        int64_t bad = epoch_possible (cur.epoch) ? newest : cur.epoch;
        char said[80];
        if (!repairs)
            return epoch_refused (on, what, epoch_possible (cur.epoch) ? "fences" : "leases", bad,
                                  err);
        snprintf (said, sizeof said, "impossible epoch %lld", (long long) bad);
        return lease_repair (on, id, what, said, err) && lease_take (on, id, what, true, err);
    }
    /* A newer fence than the lease names, by another run that is not
     * gone: it is taking the lease right now (or died doing so on another
     * host: its claim lapses like a lease). */
    if (online_lease_claim_blocks (newest, cur.epoch, newest_at, lease_ms (), now, claimer,
                                   on->owner))
        return refuse_held (on, what, "a run taking the lease right now", newest_at + lease_ms () - now,
                            err);
    next = online_lease_next_epoch (newest, cur.epoch);
    if (!fence_insert (on, id, next, now, &raced, err)) {
        if (raced)
            return refuse_held (on, what, "a run that took the lease at the same moment", lease_ms (),
                                err);
        return false;
    }
    /* The holder may have renewed between our read and our fence: then it
     * keeps running until it sees the fence, and we back off. */
    if (!lease_read (on, id, &again, err))
        return false;
    if (online_lease_blocks (again.found, again.owner, on->owner, again.expires, now))
        return refuse_held (on, what, again.owner, again.expires - now, err);
    if (!lease_write (on, id, what, next, now, err))
        return false;
    /* Said, so that a user who saw "is being run by" before knows why
     * this run did not wait: the epoch went up, so nothing the gone
     * process may have left in flight counts after this. */
    if (cur.found && *cur.owner && strcmp (cur.owner, on->owner) && cur.expires > now)
        online_say_note (on, "%s: lease taken over at once from %s, a process of this host that is "
                         "gone (epoch %lld, after its %lld)", what, cur.owner,
                         (long long) next, (long long) cur.epoch);
    return lease_start (on, id, what, next, now, mono, err);
}

/* The spill files (--tmp) of remodel processes that are gone (killed
 * with SIGKILL mid-run), removed as the offline commands remove theirs
 * (rm_tmppath_sweep_for: only names rm_tmppath_new made, of a process
 * that is no more). Here because every command that writes takes a lease
 * first, before it spills anything: the plan's, or, for a run that joins
 * (run --join), its partitions'. Once a process: its workers take
 * partition leases from threads of their own. */
static void
sweep_spills (online_t *on)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static bool swept;
    char where[2 * 4096 + 8];
    size_t n = 0;
    bool now;

    pthread_mutex_lock (&mu);
    now = !swept;
    swept = true;
    pthread_mutex_unlock (&mu);
    if (now)
        n = rm_tmppath_sweep_for (NULL, on->run->o->tmpdir, where, sizeof where);
    if (n)
        online_say_note (on, "removed %zu stale temporary file(s) of killed remodel runs from %s",
                         n, where);
}

bool
online_lease_take (online_t *on, bson_error_t *err)
{
    char what[300];
    if (on->lease)
        return true; /* held for the whole command (finalize, rollback) */
    snprintf (what, sizeof what, "plan %s", on->run->names.name);
    if (!lease_take (on, on->run->names.id, what, false, err))
        return false;
    sweep_spills (on);
    return true;
}

bool
online_lease_take_key (online_t *on, const char *id, const char *what, bool *taken,
                       bson_error_t *err)
{
    *taken = lease_take (on, id, what, false, err);
    if (*taken)
        sweep_spills (on);
    if (!*taken && err->code == RM_ERR_USAGE) {
        memset (err, 0, sizeof *err);
        return true; /* held by another: not an error */
    }
    return *taken;
}

bool
online_lease_check (online_t *on, bson_error_t *err)
{
    online_lease_t *l = on->lease;
    bool lost;
    int64_t renewed;
    online_lease_verdict_t verdict;
    if (!l)
        return true; /* nothing held: verify and --dry-run write nothing */
    pthread_mutex_lock (&l->mu);
    lost = l->lost;
    renewed = l->renewed;
    pthread_mutex_unlock (&l->mu);
    verdict = online_lease_verdict (lost, online_mono_ms (), renewed, l->lease_ms, l->margin_ms);
    if (verdict == ONLINE_LEASE_LOST) {
        rm_error_set (err, RM_ERR_IO, "%s: %s: this run lost its lease to another; "
                      "stopping before writing anything more (its checkpoint stands)",
                      on->run->where, l->what);
        return false;
    }
    if (verdict == ONLINE_LEASE_STALE) {
        rm_error_set (err, RM_ERR_IO, "%s: %s: the lease was not renewed for %lld s (the "
                      "server away, or this process stalled); stopping before writing anything "
                      "more, since another run may take it over", on->run->where, l->what,
                      (long long) ((online_mono_ms () - renewed) / 1000));
        return false;
    }
    return true;
}

void
online_lease_drop (online_t *on)
{
    online_lease_t *l = on->lease;
    bson_t *filter, *update;
    bool lost;
    if (!l)
        return;
    pthread_mutex_lock (&l->mu);
    l->stop = true;
    pthread_cond_signal (&l->cv);
    pthread_mutex_unlock (&l->mu);
    if (l->client) {
        pthread_join (l->thread, NULL);
        mongoc_client_destroy (l->client);
    }
    lost = l->lost;
    /* Released by unsetting the holder: the epoch stays, so the next
     * run's is higher than any this one wrote under. */
    if (!lost) {
        filter = BCON_NEW ("_id", BCON_UTF8 (l->id), "owner", BCON_UTF8 (on->owner), "epoch",
                           BCON_INT64 (l->epoch));
        update = BCON_NEW ("$set", "{", "owner", BCON_UTF8 (""), "expires", BCON_DATE_TIME (0),
                           "}");
        online_ops (on)->state_update (on, "leases", filter, update, false, NULL, NULL);
        bson_destroy (filter);
        bson_destroy (update);
    }
    pthread_cond_destroy (&l->cv);
    pthread_mutex_destroy (&l->mu);
    bson_free (l->own);
    bson_free (l);
    on->lease = NULL;
}

bool
online_lease_status (online_t *on, char *holder, size_t cap, int64_t *left, int64_t *epoch,
                     bool *gone, bson_error_t *err)
{
    lease_doc_t l;
    int64_t now;
    *holder = '\0';
    *gone = false;
    *left = 0;
    *epoch = 0;
    if (!online_server_now (on, &now, err) || !lease_read (on, on->run->names.id, &l, err))
        return false;
    *epoch = l.epoch;
    if (l.found && *l.owner && l.expires > now) {
        *gone = online_lease_holder_dead (l.owner);
        snprintf (holder, cap, "%s%s", l.owner, *gone ? " (gone)" : "");
        *left = l.expires - now;
    }
    return true;
}
