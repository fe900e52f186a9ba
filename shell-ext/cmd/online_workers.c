/* The workers of a pass split in partitions (online_cmd.h; issue 37):
 * threads of this process, each on a connection of its own (with
 * --to-uri, two: the destination's, where the partitions' leases and
 * checkpoints are, and the source's, read), taking the partitions nobody
 * holds, one at a time, each under its own lease.
 *
 * A partition's lease is the plan's lease's rules on another key
 * (online_lease_take_key: a fence inserted for each epoch, the server's
 * clock, a renewal thread, online_lease_check before every write): a
 * worker takes a partition that is not done and that no live holder has,
 * at once when its holder was a process of this host that is gone,
 * otherwise once its lease lapsed; it reads it from its checkpoint on
 * (online_partition_state.c, fenced by the partition's epoch), and
 * releases it when done. Workers of other processes (run --join) take
 * partitions the same way, so it does not matter which process or host
 * a partition is read by. A worker that lost its lease (stalled past it,
 * taken over) writes nothing more: its error stops this process's other
 * workers at their next batch, and the command exits non-zero.
 *
 * The pass ends when every partition is done, whoever read it: a worker
 * that finds the rest held by others sweeps again every half second (a
 * holder gone is taken over at its next sweep), or as soon as one of
 * this process's workers ends a partition (most often the last one: no
 * half second lost at the end of each pass).
 *
 * What the state database says is checked before it is believed (issue
 * 50): a partition's checkpoint outside its range is refused, naming the
 * plan, step and partition (a checkpoint past its range's end would end
 * the partition with the rest of it unread, exit 0); and a partition done
 * before this pass began whose range still holds _ids after its
 * checkpoint (marked done by hand, or written since) is read on from its
 * checkpoint rather than skipped. The bounds themselves are checked when
 * the record is read (online_partition_state.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online_cmd.h"
#include "online_pass.h"
#include "remodel/value.h"

typedef struct {
    online_t *on;
    const rm_step_t *s;
    size_t pi;
    const bson_t *parts;
    uint32_t n;
    const online_worker_ops_t *ops;
    pthread_mutex_t mu;
    pthread_cond_t moved;   /* a partition ended here, or a worker stopped */
    uint64_t ended;         /* how many times */
    bool stop;              /* an error: every worker stops at its next partition */
    bson_error_t err;       /* the first */
    int64_t taken;          /* partitions this process's workers read */
    bool *reopen;           /* partition k: done, but read on from its checkpoint */
} shared_t;

/* A worker's online_t, built from zero by worker_begin: the command's
 * run (plan, names, settings), shared through a const pointer and
 * without own_run, so that a worker cannot change what the others read;
 * of its own, its connections (opened in its thread by
 * online_connect_worker, closed by worker_end; with --to-uri the
 * destination's and the source's, a driver client serving one thread),
 * its name in the leases (two workers of one process are two holders),
 * its counts (added up by the command: read_now, doc_fails), its
 * throttle (from the command's), no differences list (the caller's ops
 * give it one), no finalize fold;
 * and a lease of its own (a run's worker takes each partition's) or the
 * plan's, shared (a rescan's: checked by its writes, never dropped by
 * it). */
typedef enum { WORKER_OWN_LEASE, WORKER_SHARED_LEASE } worker_lease_t;

typedef struct {
    shared_t *sh;
    int index;
    online_t on;            /* this worker's (worker_begin) */
} worker_t;

static bool
stopped (shared_t *sh)
{
    bool s;
    pthread_mutex_lock (&sh->mu);
    s = sh->stop;
    pthread_mutex_unlock (&sh->mu);
    return s;
}

static void
fail (shared_t *sh, const bson_error_t *err)
{
    pthread_mutex_lock (&sh->mu);
    if (!sh->stop)
        sh->err = *err;
    sh->stop = true;
    pthread_cond_broadcast (&sh->moved);
    pthread_mutex_unlock (&sh->mu);
}

/* Tells the workers waiting for the others' partitions to sweep again. */
static void
moved (shared_t *sh)
{
    pthread_mutex_lock (&sh->mu);
    sh->ended++;
    pthread_cond_broadcast (&sh->moved);
    pthread_mutex_unlock (&sh->mu);
}

/* Up to ms, or until moved() after the sweep that saw ended as seen. */
static void
wait_moved (shared_t *sh, uint64_t seen, int ms)
{
    struct timespec until;
    clock_gettime (CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long) (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock (&sh->mu);
    while (sh->ended == seen && !sh->stop &&
           pthread_cond_timedwait (&sh->moved, &sh->mu, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock (&sh->mu);
}

/* A partition (pass at->p of step at->s's, partition at->k of at->n):
 * the words of every message. */
static void
part_name (const online_t *on, const online_cp_where_t *at, char *buf, size_t cap)
{
    char pass[32] = "";
    if (at->p > 0)
        snprintf (pass, sizeof pass, "/%zu", at->p + 1);
    snprintf (buf, cap, "plan %s, step %zu%s, partition %u of %u", on->run->names.name,
              at->s->index, pass, at->k + 1, at->n);
}

/* A partition's checkpoint (last: {last: _id} or empty) lies in its
 * range: what a run wrote always does (online_batch_read keeps only the
 * _ids the partition holds); one past its end would make the partition
 * read nothing more and end done. */
static bool
checkpoint_in_range (const online_t *on, const online_cp_where_t *at, const bson_t *part,
                     const bson_t *last, bson_error_t *err)
{
    bson_iter_t lit;
    char what[400];
    if (!bson_iter_init_find (&lit, last, "last") || online_partition_holds (part, &lit))
        return true;
    part_name (on, at, what, sizeof what);
    rm_error_set (err, RM_ERR_DATA, "%s: %s: its checkpoint in %s.partitions lies outside its "
                  "range (its _id is not one the partition holds): the state database was "
                  "changed or is damaged, and reading on from it would leave the partition's "
                  "other documents unread: remodel online run %s --restart starts the plan over "
                  "(what it wrote stays)", on->run->where, what, on->run->o->state_db, on->run->o->plan_path);
    return false;
}

/* Whether the partition's range on the server (c) holds an _id after its
 * checkpoint (all of it without one): *more. Read in _id order, the _ids
 * only; the range's filter may let through _ids of types no $type alias
 * names, which the partition does not hold (online_partition.c). */
static bool
range_goes_on (online_t *on, mongoc_collection_t *c, const bson_t *part, const bson_t *last,
               bool *more, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    bson_t filter = BSON_INITIALIZER, range = BSON_INITIALIZER, after = BSON_INITIALIZER, *opts;
    bson_iter_t lit;
    bool has_last = bson_iter_init_find (&lit, last, "last"), ok;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;

    *more = false;
    ok = online_partition_filter (part, &range, err);
    if (ok && has_last && !online_range_after (&lit, &after)) {
        rm_error_set (err, RM_ERR_DATA, "%s: a partition's checkpoint makes too large a query",
                      on->run->where);
        ok = false;
    }
    if (ok && !bson_empty (&after) && !bson_empty (&range)) {
        bson_t and;
        BSON_APPEND_ARRAY_BEGIN (&filter, "$and", &and);
        BSON_APPEND_DOCUMENT (&and, "0", &range);
        BSON_APPEND_DOCUMENT (&and, "1", &after);
        bson_append_array_end (&filter, &and);
    } else if (ok) {
        bson_concat (&filter, bson_empty (&after) ? &range : &after);
    }
    bson_destroy (&range);
    bson_destroy (&after);
    if (!ok) {
        bson_destroy (&filter);
        return false;
    }
    opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "sort", "{", "_id",
                     BCON_INT32 (1), "}", "batchSize", BCON_INT32 (16));
    cur = ops->find (on, c, &filter, opts);
    while (!*more && ops->next (cur, &doc)) {
        bson_iter_t id;
        *more = bson_iter_init_find (&id, doc, "_id") && online_partition_holds (part, &id) &&
                (!has_last || rm_value_compare (&id, &lit) > 0);
    }
    ok = ops->end (cur, &why) || online_fail (on, err, &why, "reading a partition's range");
    bson_destroy (opts);
    bson_destroy (&filter);
    return ok;
}

/* Before the workers start: every partition's checkpoint in its range
 * (checkpoint_in_range), and each one done whose range goes on past its
 * checkpoint marked in reopen, to be read on from it. */
static bool
parts_check (online_t *on, const rm_step_t *s, size_t pi, const bson_t *parts, uint32_t n,
             bool *reopen, bson_error_t *err)
{
    const online_step_t *st = online_step (on, s, on->run->o->in_place);
    online_pass_t ps;
    mongoc_collection_t *c = NULL;
    bson_iter_t it;
    uint32_t k = 0;
    bool ok = true;

    if (!online_step_runs (st, err))
        return false;
    online_pass_resolve (on, st, pi, NULL, 0, &ps);
    for (bson_iter_init (&it, parts); ok && bson_iter_next (&it); k++) {
        bson_t part, last = BSON_INITIALIZER;
        const uint8_t *data;
        uint32_t len;
        bool more = false;
        online_cp_where_t at = {s, pi, k, n};
        online_cp_tally_t t;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it))
            continue; /* refused when the record was read */
        bson_iter_document (&it, &len, &data);
        ok = bson_init_static (&part, data, len) &&
             online_part_read (on, &at, &last, &t, err) &&
             checkpoint_in_range (on, &at, &part, &last, err);
        if (ok && t.done) {
            if (!c)
                c = online_collection (on, ps.drive->db, ps.drive_coll);
            ok = range_goes_on (on, c, &part, &last, &more, err);
        }
        if (ok && more) {
            char what[400];
            reopen[k] = true;
            part_name (on, &at, what, sizeof what);
            online_say_note (on, "%s: marked done, but its range holds _ids after its "
                             "checkpoint (written since it was done, or its checkpoint was "
                             "changed): read on from there", what);
        }
        bson_destroy (&last);
    }
    if (c)
        mongoc_collection_destroy (c);
    return ok;
}

static bool
reopened (shared_t *sh, uint32_t k, bool clear)
{
    bool r;
    pthread_mutex_lock (&sh->mu);
    r = sh->reopen[k];
    if (clear)
        sh->reopen[k] = false;
    pthread_mutex_unlock (&sh->mu);
    return r;
}

/* One sweep over the partitions: each not done that this worker can take,
 * read. *left: some are not done (held by others, or read now). */
static bool
sweep (worker_t *w, void *st, bool *left, bool *read, bson_error_t *err)
{
    shared_t *sh = w->sh;
    online_t *on = &w->on;
    bson_iter_t it;
    uint32_t k = 0;
    *left = *read = false;
    for (bson_iter_init (&it, sh->parts); bson_iter_next (&it) && !stopped (sh); k++) {
        bson_t part, last = BSON_INITIALIZER;
        const uint8_t *data;
        uint32_t len;
        char id[400], what[400];
        bool taken, ok, ran = false;
        online_cp_where_t at = {sh->s, sh->pi, k, sh->n};
        online_cp_tally_t t;
        bson_iter_document (&it, &len, &data);
        if (!bson_init_static (&part, data, len))
            continue;
        ok = online_part_read (on, &at, &last, &t, err);
        bson_destroy (&last);
        if (!ok)
            return false;
        if (t.done && !reopened (sh, k, false))
            continue;
        *left = true;
        online_part_key (on, sh->s, sh->pi, k, id, sizeof id);
        snprintf (what, sizeof what, "plan %s, step %zu, partition %u of %u", on->run->names.name,
                  sh->s->index, k + 1, sh->n);
        if (!online_lease_take_key (on, id, what, &taken, err))
            return false;
        if (!taken)
            continue;
        /* Done by another between the read and the take; the
         * checkpoint read from is in the range. */
        bson_init (&last);
        ok = online_part_read (on, &at, &last, &t, err) &&
             checkpoint_in_range (on, &at, &part, &last, err);
        bson_destroy (&last);
        if (ok && (!t.done || reopened (sh, k, true))) {
            ok = sh->ops->run (st, k, &part, err);
            *read = ran = true;
            pthread_mutex_lock (&sh->mu);
            sh->taken++;
            pthread_mutex_unlock (&sh->mu);
        }
        online_lease_drop (on);
        if (!ok)
            return false;
        if (ran)
            moved (sh);
    }
    return true;
}

static void
worker_begin (const online_t *on, int i, worker_lease_t lease, online_t *won)
{
    memset (won, 0, sizeof *won);
    won->run = on->run;
    /* Its throttle from where the command's is, its own from then on:
     * the settings a `set` gave this run hold in its workers too. */
    won->throttle = on->throttle;
    if (lease == WORKER_SHARED_LEASE) {
        won->lease = on->lease;
        won->epoch = on->epoch;
    }
    online_lease_worker (on->owner, i + 1, won->owner, sizeof won->owner);
}

/* What the worker opened (online_close: its own only); its lease, if its
 * own, is dropped already. */
static void
worker_end (online_t *won)
{
    online_close (won);
}

static void *
worker_main (void *arg)
{
    worker_t *w = arg;
    shared_t *sh = w->sh;
    bson_error_t err = {0};
    online_retry_t retry = {0, 0};
    void *st = NULL;
    bool ok, left = true, read;

    ok = online_connect_worker (&w->on, &err);
    if (ok)
        st = sh->ops->open (&w->on, sh->ops->ctx, &err);
    ok = ok && st;
    while (ok && left && !stopped (sh)) {
        uint64_t seen;
        pthread_mutex_lock (&sh->mu);
        seen = sh->ended;
        pthread_mutex_unlock (&sh->mu);
        ok = sweep (w, st, &left, &read, &err);
        /* A network error taking or reading a partition: tried again
         * for up to --retry-for, as a batch is (a batch's own are
         * retried inside it). */
        if (!ok && online_retry (&w->on, &retry, &err)) {
            ok = left = true;
            continue;
        }
        ONLINE_RETRY_RESET (retry);
        if (ok && left && !read)
            wait_moved (sh, seen, 500);
    }
    if (st)
        sh->ops->close (st);
    if (!ok)
        fail (sh, &err);
    worker_end (&w->on);
    return NULL;
}

/* Runs fn on each of the n items of size sz (workers), one thread each,
 * and waits for them all; how many started (a thread that cannot start
 * leaves the rest to those that did). SIGINT and SIGTERM are the main
 * thread's to see (online_signal.c): the workers' loops poll the flag it
 * sets. */
static int
run_all (void *items, size_t sz, int n, void *(*fn) (void *))
{
    pthread_t *t = bson_malloc0 ((size_t) n * sizeof *t);
    int started = 0;
    sigset_t mask;

    online_signal_block (&mask);
    while (started < n &&
           pthread_create (&t[started], NULL, fn, (char *) items + (size_t) started * sz) == 0)
        started++;
    pthread_sigmask (SIG_SETMASK, &mask, NULL);
    for (int i = 0; i < started; i++)
        pthread_join (t[i], NULL);
    bson_free (t);
    return started;
}

bool
online_workers_pass (online_t *on, const rm_step_t *s, size_t pi, const bson_t *parts, int n,
                     const online_worker_ops_t *ops, int64_t *taken, bson_error_t *err)
{
    shared_t sh;
    worker_t *w;
    int started;

    memset (&sh, 0, sizeof sh);
    sh.on = on;
    sh.s = s;
    sh.pi = pi;
    sh.parts = parts;
    sh.n = online_parts_count (parts);
    sh.ops = ops;
    sh.reopen = bson_malloc0 ((size_t) sh.n * sizeof *sh.reopen + 1);
    if (!parts_check (on, s, pi, parts, sh.n, sh.reopen, err)) {
        bson_free (sh.reopen);
        return false;
    }
    pthread_mutex_init (&sh.mu, NULL);
    pthread_cond_init (&sh.moved, NULL);
    /* The $lookup rules every batch asks for, kept in the run now: a
     * worker cannot keep them (online_lookup_rules). */
    online_lookup_rules (on);
    w = bson_malloc0 ((size_t) n * sizeof *w);
    for (int i = 0; i < n; i++) {
        w[i].sh = &sh;
        w[i].index = i;
        worker_begin (on, i, WORKER_OWN_LEASE, &w[i].on);
    }
    started = run_all (w, sizeof *w, n, worker_main);
    for (int i = 0; i < started; i++) {
        on->read_now += w[i].on.read_now;
        on->doc_fails += w[i].on.doc_fails;
    }
    bson_free (w);
    bson_free (sh.reopen);
    pthread_cond_destroy (&sh.moved);
    pthread_mutex_destroy (&sh.mu);
    *taken = sh.taken;
    if (started < n && !sh.stop) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot start the workers", on->run->where);
        return false;
    }
    if (sh.stop)
        *err = sh.err;
    return !sh.stop;
}

/* ---- verify and sync's rescan ----
 *
 * The run's partitions, handed out by a counter of this process: a rescan
 * keeps no state in the server (no checkpoint: it starts over when
 * stopped) and is never joined, so no partition needs a lease of its own
 * to be read by one worker only. sync's writes are fenced by the plan's
 * lease, which this process holds for the whole sync: every worker checks
 * it (online_lease_check, thread safe) before each write, and one that
 * finds it lost stops them all, as the run's workers stop. */
typedef struct {
    online_t *on;
    const bson_t *parts;
    uint32_t n, next;
    const online_worker_ops_t *ops;
    pthread_mutex_t mu;
    bool stop;
    bson_error_t err;
} rescan_t;

typedef struct {
    rescan_t *rs;
    online_t on;
} rescan_worker_t;

static void *
rescan_main (void *arg)
{
    rescan_worker_t *w = arg;
    rescan_t *rs = w->rs;
    bson_error_t err = {0};
    void *st = NULL;
    bool ok = online_connect_worker (&w->on, &err);

    if (ok)
        ok = (st = rs->ops->open (&w->on, rs->ops->ctx, &err)) != NULL;
    while (ok) {
        uint32_t k;
        bson_t part;
        bson_iter_t it;
        char key[16];
        const uint8_t *data;
        uint32_t len;
        pthread_mutex_lock (&rs->mu);
        k = rs->stop || online_stop_requested () ? rs->n : rs->next;
        if (k < rs->n)
            rs->next++;
        pthread_mutex_unlock (&rs->mu);
        if (k >= rs->n)
            break;
        snprintf (key, sizeof key, "%u", k);
        ok = bson_iter_init_find (&it, rs->parts, key) && BSON_ITER_HOLDS_DOCUMENT (&it);
        if (ok) {
            bson_iter_document (&it, &len, &data);
            ok = bson_init_static (&part, data, len);
        }
        if (!ok)
            rm_error_set (&err, RM_ERR_FORMAT, "%s: plan %s: partition %u of %u in its record is "
                          "not a document", rs->on->run->where, rs->on->run->names.name, k + 1, rs->n);
        else
            ok = rs->ops->run (st, k, &part, &err);
    }
    if (st)
        rs->ops->close (st);
    if (!ok) {
        pthread_mutex_lock (&rs->mu);
        if (!rs->stop)
            rs->err = err;
        rs->stop = true;
        pthread_mutex_unlock (&rs->mu);
    }
    worker_end (&w->on);
    return NULL;
}

bool
online_workers_rescan (online_t *on, const bson_t *parts, int n, const online_worker_ops_t *ops,
                       bson_error_t *err)
{
    rescan_t rs;
    rescan_worker_t *w;
    int started;

    memset (&rs, 0, sizeof rs);
    rs.on = on;
    rs.parts = parts;
    rs.n = online_parts_count (parts);
    rs.ops = ops;
    pthread_mutex_init (&rs.mu, NULL);
    online_lookup_rules (on); /* as online_workers_pass */
    w = bson_malloc0 ((size_t) n * sizeof *w);
    /* The plan's lease, held by this process (NULL: verify, a dry run),
     * shared: checked by the workers' writes, never dropped by them. */
    for (int i = 0; i < n; i++) {
        w[i].rs = &rs;
        worker_begin (on, i, WORKER_SHARED_LEASE, &w[i].on);
    }
    started = run_all (w, sizeof *w, n, rescan_main);
    bson_free (w);
    pthread_mutex_destroy (&rs.mu);
    if (started < n && !rs.stop) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot start the workers", on->run->where);
        return false;
    }
    if (rs.stop)
        *err = rs.err;
    /* SIGINT, SIGTERM: the rescan stops between two partitions, as
     * between two batches. */
    if (!rs.stop && rs.next < rs.n && online_stop_requested ())
        return online_stop_check (on, "in a rescan (nothing kept: it starts over)", err);
    return !rs.stop;
}
