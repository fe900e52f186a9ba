/* online run, verify and sync (online_cmd.h): each step of the plan over the
 * server, pass by pass (remodel/passes.h), range by range in _id order.
 *
 * run: a batch reads up to --batch-size documents of the driving
 * collection after the checkpoint's _id, fetches their join partners, lets
 * the engine compute what the step makes of them (online_batch.c), writes
 * that (online_write.c), then the checkpoint. Side by side (the default)
 * the results are upserted by _id into the step's own new collections
 * (remodel/names.h), so a batch replayed after a crash writes the same
 * documents again and nothing twice; in place (--in-place, backfills) the
 * documents that change are replaced on condition, their backups first.
 * Before the first batch of a plan's first run, the change log's position
 * is recorded (online_capture.c), so that every write the copy may miss is
 * after it; run's first line says the mode.
 *
 * verify recomputes every range from the sources as they are now and
 * compares: side by side, each result with the target's document of that
 * _id, then the target for documents no range makes (a source deleted
 * since); in place, each document with what the step makes of it. sync
 * does the same and writes what differs. Neither uses the checkpoints;
 * with --workers, both read a pass by the partitions its run recorded,
 * each once, with threads (online_workers_rescan), and add up what they
 * find into what one reader finds.
 *
 * Each step and pass is resolved once (online_pass.h: what it reads and
 * writes, under the names they have now) and handed to its command's
 * driver (pass_run, pass_verify, pass_sync); the batches below them are
 * the modes' own (batch_run, batch_check_*). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online_interrupt.h"
#include "online_cmd.h"
#include "online_pass.h"
#include "remodel/cli.h"

/* ---- a pass, a step, the plan ---- */

/* With the default collation of source, the collection it replaces
 * (online_index_copy.c): only a create gives one. */
static bool
create_collection (online_t *on, const char *db, const char *coll, const char *source,
                   bson_error_t *err)
{
    /* The handle's name: with --to-uri a final result has its
     * namespace's own on the destination (online_ops_pair.c). */
    mongoc_collection_t *c = online_collection (on, db, coll);
    bson_t *cmd = BCON_NEW ("create", BCON_UTF8 (mongoc_collection_get_name (c)));
    bson_error_t why;
    bool ok = online_index_copy_create (on, db, source, cmd, err) &&
              online_lease_check (on, err) &&
              (online_ops (on)->command (on, c, db, cmd, NULL, &why) ||
               why.code == 48 /* NamespaceExists: made by an earlier attempt */ ||
               online_fail (on, err, &why, "creating a target collection"));
    bson_destroy (cmd);
    mongoc_collection_destroy (c);
    return ok;
}

static void
log_batch (online_job_t *j, online_progress_t *pg, int64_t n, int64_t ms, int64_t t0)
{
    const online_opts_t *o = j->on->run->o;
    int64_t all = online_mono_ms () - t0;
    online_batch_line_t line = {j->s, j->index, j->in[j->p->drive]->text, false, n, ms, j->seen,
                                j->written, all > 0 ? j->seen * 1000 / all : 0};
    if (o->log_json)
        online_json_batch (j->on, &line);
    else
        online_progress_draw (pg, j->s->index, j->s->op, j->in[j->p->drive]->text, j->seen,
                              j->written);
}

/* --batch-time: the next batch sized to take about that long, changing
 * by at most a factor of two at a time. */
static void
size_batch (online_job_t *j, int64_t n, int64_t ms)
{
    int64_t want = j->on->run->o->batch_time_ms, next;
    if (want <= 0 || n < j->batch_size)
        return;
    next = ms > 0 ? j->batch_size * want / ms : j->batch_size * 2;
    if (next > j->batch_size * 2)
        next = j->batch_size * 2;
    if (next < j->batch_size / 2)
        next = j->batch_size / 2;
    j->batch_size = next < 1 ? 1 : next > 100000 ? 100000 : next;
}

/* Run side by side, a pass whose results name their driver in a field:
 * a result may not take the _id of another driver's result
 * (online_check_claimed), this batch's drivers being those in. */
static bool
batch_claims (online_job_t *j, online_passrun_t *pr, const online_docs_t *in,
              const online_docs_t *out, bson_error_t *err)
{
    online_changes_t mine;
    bool ok, field = false;
    for (size_t k = 0; k < j->p->n_keep; k++)
        field |= j->p->driver_field[k] && strcmp (j->p->driver_field[k], "_id") != 0;
    if (!field || pr->sets[0])
        return true;
    online_changes_init (&mine);
    for (size_t i = 0; i < in->n; i++) {
        bson_iter_t id;
        if (rm_doc_field (online_doc_bytes (in, i), in->docs[i].len, "_id", 3, &id))
            online_changes_add (&mine, "drivers", &id);
    }
    ok = online_check_claimed (j, pr, out, online_changes_list (&mine, "drivers", true), err);
    online_changes_destroy (&mine);
    return ok;
}

/* run's batch: written (side by side, in place), or, in a dry run,
 * counted. */
static bool
batch_run (online_job_t *j, online_passrun_t *pr, const online_docs_t *in, const online_docs_t *out,
           bson_error_t *err)
{
    const online_opts_t *o = j->on->run->o;
    bool ok;

    if (o->in_place && online_select_step (j->s)) {
        int64_t changed;
        ok = online_select_write (&pr->ip, NULL, in, out, !o->dry_run, false, NULL, &changed, err);
        j->written += changed;
        return ok;
    }
    if (o->dry_run) {
        j->written += o->in_place ? online_would_change (in, out) : (int64_t) out->n;
        return true;
    }
    if (o->in_place)
        return online_inplace_write (&pr->ip, in, out, err);
    /* The _ids join the step's set only once their batch is written: a
     * batch retried after an error is checked against the batches before
     * it, never against itself. Results naming their driver in a field
     * keep no set: the target says whose a result with that _id is. */
    ok = online_check_unique (j, pr, out, err) && batch_claims (j, pr, in, out, err) &&
         online_side_write (pr->targets, out, err) &&
         online_kept_batch (j, NULL, in, out, false, err);
    for (size_t i = 0; ok && i < out->n; i++)
        if (pr->sets[out->docs[i].keep])
            ok = online_idset_note (pr->sets[out->docs[i].keep],
                                    online_id_hash (online_doc_bytes (out, i), out->docs[i].len),
                                    err);
    if (ok)
        j->written += (int64_t) out->n;
    return ok;
}

/* verify's and sync's batch in place: the documents the step would
 * change, reported, and sync (not a dry run) changes them. */
static bool
batch_check_inplace (online_job_t *j, online_passrun_t *pr, const bson_t *before,
                     const online_docs_t *in, const online_docs_t *out, bson_error_t *err)
{
    int64_t differ;
    if (online_select_step (j->s)) {
        /* copy, move, delete: counted, and written by sync, at once. */
        bool ok = online_select_write (&pr->ip, NULL, in, out,
                                       pr->mode == ONLINE_SYNC && !j->on->run->o->dry_run, false,
                                       NULL, &differ, err);
        if (ok && differ)
            online_report_range (j, pr, before, differ, "documents not as the step makes them");
        pr->differ += differ;
        return ok;
    }
    differ = online_would_change (in, out);
    if (differ) {
        online_diffs_inplace (j->on, j->in[j->p->drive]->text, in, out);
        online_report_range (j, pr, before, differ, "documents not as the step makes them");
    }
    pr->differ += differ;
    if (differ && pr->mode == ONLINE_SYNC && !j->on->run->o->dry_run)
        return online_inplace_write (&pr->ip, in, out, err);
    return true;
}

/* verify's and sync's batch side by side: each result against the
 * target's document of its _id; without a set of every result's _id, a
 * result its driver no longer makes is found batch by batch. */
static bool
batch_check_side (online_job_t *j, online_passrun_t *pr, const bson_t *before,
                  const online_docs_t *in, const online_docs_t *out, bson_error_t *err)
{
    bson_t ids = BSON_INITIALIZER;
    int64_t missing = 0;
    bool ok = online_check_side (j, pr, out, before, in, err);

    /* A sync's rescan: what --keep-before kept of the range, as now. */
    if (ok && pr->mode == ONLINE_SYNC)
        ok = online_kept_batch (j, NULL, in, out, true, err);

    if (!ok || !rm_pass_traced (j->p) || pr->sets[0])
        return ok;
    for (size_t i = 0; i < in->n; i++) {
        bson_iter_t id;
        char key[16];
        const char *kp;
        size_t kl = bson_uint32_to_string ((uint32_t) i, &kp, key, sizeof key);
        if (rm_doc_field (online_doc_bytes (in, i), in->docs[i].len, "_id", 3, &id))
            bson_append_iter (&ids, kp, (int) kl, &id);
    }
    ok = online_check_missing (j, pr, &ids, out, &missing, err);
    if (ok && missing)
        online_report_range (j, pr, before, missing, "results their documents no longer make");
    pr->differ += missing;
    bson_destroy (&ids);
    return ok;
}

/* One batch: read, compute, and what the mode does with it. Returns the
 * documents read (0: the end), -1. A dry run (run or sync) computes and
 * counts and writes nothing. */
static int64_t
one_batch (online_job_t *j, online_passrun_t *pr, bson_t *last, online_docs_t *in, online_docs_t *out,
           bson_error_t *err)
{
    bson_t before;
    int64_t n;
    bool ok;

    bson_copy_to (last, &before);
    n = online_batch_read (j, last, in, err);
    ok = n >= 0;
    if (ok && n > 0)
        ok = online_batch_compute (j, in, out, err);
    if (ok && n > 0) {
        if (pr->mode == ONLINE_RUN)
            ok = batch_run (j, pr, in, out, err);
        else if (j->on->run->o->in_place)
            ok = batch_check_inplace (j, pr, &before, in, out, err);
        else
            ok = batch_check_side (j, pr, &before, in, out, err);
    }
    if (!ok) {
        /* The range is done again from where it began. */
        bson_reinit (last);
        bson_concat (last, &before);
        online_batch_close (j);
        j->ended = false;
        /* An error while the engine held documents (fetching the
         * partners, reading a changed document again) leaves them in it:
         * the retried batch would add them a second time, and every
         * result would come out twice (a false "two results with one
         * _id"). A new engine starts empty. */
        rm_batchstep_destroy (j->engine);
        j->engine = online_engine_new (j->on, j->s);
    }
    bson_destroy (&before);
    return ok ? n : -1;
}

/* A pass that is one partition whatever --partitions says: one read by
 * series (its ranges are the series' values, not _ids), or one whose
 * checkpoint a remodel before partitions wrote (last, seen). */
static bool
one_part (const rm_pass_t *p, const bson_t *last, int64_t seen)
{
    return p->series || !bson_empty (last) || seen > 0;
}

/* Where a range's checkpoint goes: the pass's own (k < 0), or that of
 * partition k of n, whose counts are the pass's from seen0 and
 * written0 on. */
typedef struct {
    int64_t k;
    uint32_t n;
    int64_t seen0, written0;
} range_cp_t;

static bool
range_save (online_job_t *j, const range_cp_t *r, const bson_t *last, bool done, bson_error_t *err)
{
    const rm_nsref_t *ns = j->in[j->p->drive];
    online_cp_where_t at = {j->s, j->index, r->k < 0 ? 0 : (uint32_t) r->k, r->n};
    online_cp_tally_t t = {done, j->seen - r->seen0, j->written - r->written0};
    if (r->k < 0)
        return online_checkpoint_save (j->on, &at, ns, rm_name_now (&j->on->run->names, ns), last,
                                       &t, err);
    return online_part_save (j->on, &at, ns, last, &t, err);
}

/* The batches of a range (a partition, or the whole collection) after
 * last, each followed by its checkpoint (r's), up to its end, then its
 * checkpoint done; or up to a stop asked for, or an error. */
static bool
run_range (online_job_t *j, online_passrun_t *pr, online_mode_t mode, bson_t *last,
           const range_cp_t *r, online_docs_t *in, online_docs_t *out, online_progress_t *pg,
           int64_t t0, bson_error_t *err)
{
    online_t *on = j->on;
    const online_opts_t *o = on->run->o;
    const rm_step_t *s = j->s;
    bool state = mode != ONLINE_VERIFY && !o->dry_run;
    bool checkpoints = mode == ONLINE_RUN && !o->dry_run;
    const char *drive_ns = j->in[j->p->drive]->text;
    online_retry_t retry = {0, 0};
    bool ok = true;
    int64_t n = 0, ms = 0;

    while (ok) {
        int64_t b0 = online_mono_ms ();
        /* SIGINT, SIGTERM: here, between two batches, the last one's
         * checkpoint saved (online_signal.c). */
        if (!(ok = online_stop_check_step (on, s, drive_ns, j->seen,
                                           checkpoints ? "the checkpoint saved"
                                                       : "nothing kept (it starts over)",
                                           err)))
            break;
        /* finalize's bound on its window, between two batches of its full
         * sync or verify (no bound outside finalize). */
        if (!(ok = online_call_deadline_check ("recomputing the results", err)))
            break;
        /* Paused, throttled, resized, set (online_throttle.c). */
        if (state && !online_throttle_wait (on, n, ms, &j->batch_size, err)) {
            if (online_retry (on, &retry, err))
                continue;
            ok = false;
            break;
        }
        b0 = online_mono_ms (); /* a pause is no batch's time */
        n = one_batch (j, pr, last, in, out, err);
        online_batch_end_t end = online_retry_batch (on, &retry, n, err);
        if (end == ONLINE_BATCH_AGAIN)
            continue;
        if (!(ok = end != ONLINE_BATCH_FAILED) || end == ONLINE_BATCH_DONE)
            break;
        j->seen += n;
        on->busy_ms += online_mono_ms () - b0;
        if (checkpoints)
            ok = range_save (j, r, last, false, err);
        ms = online_mono_ms () - b0;
        log_batch (j, pg, n, ms, t0);
        online_blocked_progress (on, mode == ONLINE_SYNC ? "sync" : "verify", s, drive_ns, j->seen, -1);
        size_batch (j, n, ms);
        if (o->max_rate > 0 && !state) /* else the throttle keeps it */
            online_sleep_ms (t0 + j->seen * 1000 / o->max_rate - online_mono_ms ());
        online_sleep_ms (o->pause_ms);
    }
    if (ok && checkpoints)
        ok = range_save (j, r, last, true, err);
    return ok;
}

/* What one reader of a pass holds: its job (collections, engine, key
 * map), the pass's writes, its buffers. The run's own, on its
 * connection, or a worker's (online_workers.c), on the worker's. */
typedef struct {
    online_job_t j;
    online_passrun_t *pr;
    online_passrun_t own;   /* a worker's (pr points here) */
    online_docs_t in, out;
    rm_path_t held;
    online_mode_t mode;
    int64_t t0;
    uint32_t n_parts;       /* the pass's partitions, for their checkpoints */
    struct pass_ctx *ctx;   /* a worker's: its pass's */
} reader_t;

static void
passrun_init (online_passrun_t *pr, online_mode_t mode)
{
    memset (pr, 0, sizeof *pr);
    pr->mode = mode;
    online_docs_init (&pr->found);
    online_docs_init (&pr->ip.again);
    online_docs_init (&pr->ip.again_out);
}

static void
passrun_destroy (online_passrun_t *pr)
{
    online_docs_destroy (&pr->found);
    online_docs_destroy (&pr->ip.again);
    online_docs_destroy (&pr->ip.again_out);
}

/* The reader of pass ps on on's connection: its collections opened by
 * the names ps resolved, its engine, its key map, its writes. */
static void
reader_open (reader_t *r, online_t *on, const online_pass_t *ps, online_mode_t mode,
             online_passrun_t *pr)
{
    const online_opts_t *o = on->run->o;
    const rm_pass_t *p = ps->p;
    bool state = mode != ONLINE_VERIFY && !o->dry_run;
    online_job_t *j = &r->j;

    memset (r, 0, sizeof *r);
    /* A worker's own, begun here: the memset above would undo it (its
     * mode, verify's or sync's, lost to run's, which writes). */
    if (pr == &r->own)
        passrun_init (pr, mode);
    r->pr = pr;
    r->mode = mode;
    r->t0 = online_mono_ms ();
    j->on = on;
    j->s = ps->s;
    j->p = p;
    j->index = ps->index;
    j->batch_size = o->batch_size;
    memcpy (j->in, ps->st->in, sizeof j->in);
    online_docs_init (&r->in);
    online_docs_init (&r->out);
    j->drive = online_collection (on, ps->drive->db, ps->drive_coll);
    if (ps->partner)
        j->partner = online_collection (on, ps->partner->db, ps->partner_coll);
    j->engine = online_engine_new (on, ps->s);
    /* While the plan follows a change log, what a partner was read with
     * is kept (online_keys.c): a later change to it finds its old results. */
    if (on->run->follows && ps->partner && state)
        j->keys = online_keys_new (on, ps->s, ps->index, p->partner_key);
    else if (on->run->follows && state && online_held_path (p, &r->held))
        j->keys = online_keys_new (on, ps->s, ps->index, &r->held);
    pr->ip.j = j;
    if (o->in_place) {
        pr->ip.backup = online_collection (on, o->state_db, ps->backup);
        online_select_open (&pr->ip, on, ps->s);
        return;
    }
    for (size_t k = 0; k < p->n_keep; k++) {
        online_writes_init (&pr->targets[k], j,
                            online_collection (on, p->keep[k]->db, ps->target[k]),
                            "writing results");
        /* A sync's rescan writes a range's rewrites together (online_write.c). */
        pr->targets[k].hold = mode == ONLINE_SYNC;
        pr->sets[k] = ps->sets[k];
        pr->orphans[k] = ps->orphans[k];
    }
}

static void
reader_close (reader_t *r)
{
    online_passrun_t *pr = r->pr;
    online_job_t *j = &r->j;
    for (size_t k = 0; k < 4; k++)
        if (pr->targets[k].coll) {
            online_writes_destroy (&pr->targets[k]);
            mongoc_collection_destroy (pr->targets[k].coll);
        }
    if (pr->ip.backup)
        mongoc_collection_destroy (pr->ip.backup);
    online_select_close (&pr->ip);
    if (j->partner)
        mongoc_collection_destroy (j->partner);
    mongoc_collection_destroy (j->drive);
    rm_batchstep_destroy (j->engine);
    online_keys_destroy (j->keys);
    rm_path_destroy (&r->held);
    online_batch_close (j);
    online_job_destroy_series (j);
    online_docs_destroy (&r->in);
    online_docs_destroy (&r->out);
}

/* A worker's reader (online_worker_ops_t): the pass on the worker's
 * connection, with writes of its own. A pass keeping a set of its
 * results' _ids has one worker, which keeps the step's sets.
 *
 * verify and sync's rescan adds up what its workers find: the results
 * that differ, the ranges reported (one count, shared as they report
 * them: the first ONLINE_REPORT_MAX of the pass are shown, whatever the
 * number of workers), the documents read, and verify's
 * list of differing _ids, one per partition, adopted in the partitions'
 * order as soon as those before are (so the list and its first _ids are
 * the same whichever worker read which partition; a partition done
 * early waits in memory). */
typedef struct pass_ctx {
    const online_pass_t *ps; /* read only, shared by the workers */
    online_mode_t mode;
    uint32_t n;
    online_t *on;           /* the rescan's own, whose list is the command's */
    pthread_mutex_t mu;
    int64_t differ, read;
    int reported;           /* the workers' online_passrun_t.reported_pass */
    online_diffs_t **lists; /* partition k's, until adopted */
    bool *finished;
    uint32_t adopted;       /* the partitions before this one are */
    const online_partners_t *partners; /* run's, read once for the workers */
} pass_ctx_t;

static void *
worker_open (online_t *won, void *ctx, bson_error_t *err)
{
    pass_ctx_t *c = ctx;
    reader_t *r = bson_aligned_alloc0 (BSON_ALIGNOF (reader_t), sizeof *r);
    (void) err;
    reader_open (r, won, c->ps, c->mode, &r->own);
    r->j.partners = c->partners;
    r->own.reported_pass = &c->reported;
    r->n_parts = c->n;
    r->ctx = c;
    return r;
}

static bool
worker_run (void *reader, uint32_t k, const bson_t *part, bson_error_t *err)
{
    reader_t *r = reader;
    online_job_t *j = &r->j;
    bson_t last = BSON_INITIALIZER;
    online_cp_where_t at = {j->s, j->index, k, r->n_parts};
    online_cp_tally_t t;
    bool ok = online_part_read (j->on, &at, &last, &t, err);
    if (ok) {
        /* The partition's own counts, from its checkpoint on. */
        range_cp_t rc = {k, r->n_parts, 0, 0};
        j->seen = t.seen;
        j->written = t.changed;
        j->part = part;
        j->ended = false;
        online_batch_close (j);
        ok = run_range (j, r->pr, r->mode, &last, &rc, &r->in, &r->out, NULL, r->t0, err);
        online_batch_close (j);
        j->part = NULL;
        if (ok)
            j->on->read_now += j->seen - t.seen;
    }
    bson_destroy (&last);
    return ok;
}

/* A rescan's partition k, whole (no checkpoint: verify and sync keep
 * none). */
static bool
rescan_run (void *reader, uint32_t k, const bson_t *part, bson_error_t *err)
{
    reader_t *r = reader;
    pass_ctx_t *c = r->ctx;
    online_job_t *j = &r->j;
    bson_t last = BSON_INITIALIZER;
    range_cp_t rc = {k, r->n_parts, 0, 0};
    int64_t seen = j->seen; /* the worker's, for --max-rate */
    bool ok;

    j->part = part;
    j->ended = false;
    j->on->diffs = online_diffs_child (c->on);
    online_batch_close (j);
    ok = run_range (j, r->pr, r->mode, &last, &rc, &r->in, &r->out, NULL, r->t0, err) &&
         online_check_side_end (j, r->pr, err);
    online_batch_close (j);
    j->part = NULL;
    bson_destroy (&last);
    pthread_mutex_lock (&c->mu);
    c->read += j->seen - seen;
    c->lists[k] = j->on->diffs;
    c->finished[k] = ok;
    while (c->adopted < c->n && c->finished[c->adopted]) {
        online_diffs_adopt (c->on, c->lists[c->adopted]);
        c->lists[c->adopted++] = NULL;
    }
    pthread_mutex_unlock (&c->mu);
    j->on->diffs = NULL;
    return ok;
}

static void
worker_close (void *reader)
{
    reader_t *r = reader;
    if (r->ctx && r->ctx->lists) {
        /* A rescan's: what this worker found, added to the pass's. */
        pthread_mutex_lock (&r->ctx->mu);
        r->ctx->differ += r->own.differ;
        pthread_mutex_unlock (&r->ctx->mu);
    }
    reader_close (r);
    passrun_destroy (&r->own);
    bson_free (r);
}

/* run --join, not holding the plan's lease: takes it when its holder is
 * gone (a process of this host that ended, or its lease lapsed), and
 * becomes the run that records partitions and checkpoints passes. */
static bool
join_take (online_t *on, bson_error_t *err)
{
    char what[300];
    bool taken;
    if (on->lease)
        return true;
    snprintf (what, sizeof what, "plan %s", on->run->names.name);
    return online_lease_take_key (on, on->run->names.id, what, &taken, err);
}

/* run: the pass's checkpoint (last, t) and partitions (parts, n_parts). A run that joined waits for what only the plan's
 * lease holder does (recording the partitions, reading a pass of one or
 * keeping a set of its results' _ids), or takes the lease over from a
 * holder gone. A dry run keeps no checkpoint: one range from the start. */
static bool
run_where (online_t *on, const online_pass_t *ps, bson_t *last, online_cp_tally_t *t,
           bson_t *parts, uint32_t *n_parts, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    online_cp_where_t at = {ps->s, ps->index, 0, 0};
    bool checkpoints = !o->dry_run, ok = true, said = false;

    for (;;) {
        bool joined = checkpoints && o->join && !on->lease;
        if (joined)
            ok = join_take (on, err);
        joined = checkpoints && o->join && !on->lease;
        bson_reinit (last);
        if (ok && checkpoints)
            ok = online_checkpoint_read (on, &at, last, t, err);
        if (!ok || t->done)
            break;
        if (checkpoints) {
            mongoc_collection_t *c = online_collection (on, ps->drive->db, ps->drive_coll);
            ok = online_parts_get (on, &at, c, one_part (ps->p, last, t->seen), !joined, parts,
                                   err);
            mongoc_collection_destroy (c);
            *n_parts = ok ? online_parts_count (parts) : 1;
        }
        if (!ok || !joined || (*n_parts > 1 && !ps->keeps_set))
            break;
        if (!said)
            online_say_note (on, "%s %s: joined: waiting for the run that holds the plan's "
                             "lease (%s)", ps->label, ps->drive_ns,
                             *n_parts == 0 ? "to record its partitions" : "to read it");
        said = true;
        online_sleep_ms (500);
    }
    return ok;
}

/* The pass's counts, its n partitions' added up (sum->done untouched). */
static bool
parts_totals (online_t *on, const online_pass_t *ps, uint32_t n, online_cp_tally_t *sum,
              bson_error_t *err)
{
    bool ok = true;
    sum->seen = sum->changed = 0;
    for (uint32_t k = 0; ok && k < n; k++) {
        bson_t ignored = BSON_INITIALIZER;
        online_cp_where_t at = {ps->s, ps->index, k, n};
        online_cp_tally_t t;
        ok = online_part_read (on, &at, &ignored, &t, err);
        sum->seen += t.seen;
        sum->changed += t.changed;
        bson_destroy (&ignored);
    }
    return ok;
}

/* One reader over the whole pass (one partition), from last on, its
 * progress drawn in *pg; seen0: the pass's count before this process. */
static bool
read_whole (online_t *on, const online_pass_t *ps, reader_t *r, bson_t *last, int64_t seen0,
            online_progress_t **pg, bson_error_t *err)
{
    range_cp_t whole = {-1, 1, 0, 0};
    bool ok;
    *pg = online_progress_new (on, ps->drive->db, ps->drive_coll, seen0);
    ok = run_range (&r->j, r->pr, r->mode, last, &whole, &r->in, &r->out, *pg, r->t0, err);
    if (ok)
        on->read_now += r->j.seen - seen0;
    return ok;
}

/* run's partitions read by this process's workers (online_workers_pass;
 * a pass keeping a set of its results' _ids by one), then the pass's
 * totals theirs and its checkpoint done, written by the plan's lease
 * holder: a run that joined waits for it, or takes the lease over from
 * one gone. */
static bool
run_workers (online_t *on, const online_pass_t *ps, reader_t *r, const bson_t *parts,
             uint32_t n_parts, const online_partners_t *partners, int64_t *taken,
             bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    pass_ctx_t ctx = {ps, ONLINE_RUN, n_parts, .lists = NULL, .partners = partners};
    online_worker_ops_t ops = {worker_open, worker_run, worker_close, &ctx};
    bson_t empty = BSON_INITIALIZER;
    online_cp_where_t at = {ps->s, ps->index, 0, 0};
    online_cp_tally_t sum = {true, 0, 0};
    bool ok = online_workers_pass (on, ps->s, ps->index, parts, ps->keeps_set ? 1 : (int) o->workers,
                                   &ops, taken, err);

    /* Every partition is done: the pass's totals are theirs. */
    ok = ok && parts_totals (on, ps, n_parts, &sum, err);
    r->j.seen = sum.seen;
    r->j.written = sum.changed;
    while (ok && o->join && !on->lease) {
        online_cp_tally_t t = {false, 0, 0};
        bson_t ignored = BSON_INITIALIZER;
        ok = join_take (on, err) &&
             (on->lease || online_checkpoint_read (on, &at, &ignored, &t, err));
        bson_destroy (&ignored);
        if (!ok || t.done)
            break;
        online_sleep_ms (500);
    }
    if (ok && on->lease)
        ok = online_checkpoint_save (on, &at, ps->drive, ps->drive_coll, &empty, &sum, err);
    bson_destroy (&empty);
    return ok;
}

/* The progress line ended: by run's closing line, a new line, or, after
 * an error (said once at the top, alone), cleared. */
static void
pass_said (online_t *on, const online_pass_t *ps, const reader_t *r, online_progress_t *pg,
           uint32_t n_parts, int64_t taken, bool ok)
{
    const online_opts_t *o = on->run->o;
    bool drawn = online_progress_end (pg);
    /* Asked of the reporter first: the split counts the results on the
     * server, which a --quiet run does not say. */
    if (ok && !online_say_how (on).quiet && r->mode == ONLINE_RUN) {
        char split[600] = "", mine[100] = "";
        if (!o->dry_run && !o->in_place)
            online_written_split (on, ps->s, ps->p, split, sizeof split);
        if (n_parts > 1 && taken < n_parts)
            snprintf (mine, sizeof mine, " (%lld of the %u partitions read here)",
                      (long long) taken, n_parts);
        online_say_closing (on, drawn, "%s %s: %lld read, %lld %s%s%s", ps->label, ps->drive_ns,
                            (long long) r->j.seen, (long long) r->j.written,
                            o->dry_run ? (o->in_place ? "would change" : "would write")
                                       : (o->in_place ? "changed" : "written"),
                            split, mine);
    } else {
        online_say_meter_end (on, drawn, ok);
    }
}

/* An in-place pass that failed part way on a document (a failing
 * expression, a document nested too deep: RM_ERR_DATA) leaves its collection part migrated: the documents of
 * the batches before are changed where they are. Said in the error, with
 * what puts them back, rather than left for the operator to find. */
static void
inplace_failed (online_t *on, const online_pass_t *ps, const reader_t *r, uint32_t n_parts,
                bson_error_t *err)
{
    int64_t changed = r->j.written;
    online_cp_tally_t sum;
    bson_error_t why = *err, scratch;
    char tail[400];
    int room;

    /* With workers, the partitions' checkpoints hold what they wrote. */
    if (n_parts > 1 && parts_totals (on, ps, n_parts, &sum, &scratch))
        changed = sum.changed;
    if (changed <= 0 || !err->message[0])
        return;
    snprintf (tail, sizeof tail, " (--in-place: %s is left part migrated, %lld document(s) "
              "changed where they are; `remodel online rollback %s` with the same --uri puts "
              "them back, or fix the plan and run again to go on)", ps->drive_ns,
              (long long) changed, on->run->o->plan_path);
    /* The advice whole, the cause cut short if both do not fit. */
    room = (int) sizeof err->message - 1 - (int) strlen (tail);
    if (room < 40)
        room = 40;
    if ((int) strlen (why.message) > room)
        rm_error_set (err, (rm_errcode_t) why.code, "%.*s...%s", room - 3, why.message, tail);
    else
        rm_error_set (err, (rm_errcode_t) why.code, "%s%s", why.message, tail);
    err->domain = why.domain;
}

/* run's driver: from the pass's checkpoint (or each partition's) to its
 * end, the partners read once before the workers start, which share
 * them; after the change-log point capture_begin recorded (why that is
 * safe: online_partners.c). Not in place, where a self-join's partners
 * are the documents the pass rewrites. */
static bool
pass_run (online_t *on, const online_pass_t *ps, online_passrun_t *pr, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    reader_t r;
    bson_t last = BSON_INITIALIZER, parts = BSON_INITIALIZER;
    online_cp_tally_t t = {false, 0, 0};
    bool ok;
    int64_t seen0, taken = 0;
    uint32_t n_parts = 1;
    online_progress_t *pg = NULL;
    online_partners_t *partners = NULL;

    ok = run_where (on, ps, &last, &t, &parts, &n_parts, err);
    if (ok && t.done) {
        online_say_note (on, "%s %s: done before", ps->label, ps->drive_ns);
        bson_destroy (&last);
        bson_destroy (&parts);
        return true;
    }
    if (ok && n_parts > 1) {
        ok = parts_totals (on, ps, n_parts, &t, err);
        if (ok)
            online_say_note (on, "%s %s: %u partitions, %lld worker(s)%s", ps->label,
                             ps->drive_ns, n_parts, (long long) (ps->keeps_set ? 1 : o->workers),
                             ps->keeps_set && o->workers > 1 ? " (its results' _ids are checked "
                                                               "in one set)" : "");
    }
    seen0 = t.seen; /* what this process reads is counted from here */
    reader_open (&r, on, ps, ONLINE_RUN, pr);
    if (ok && !o->in_place && r.j.partner && !ps->self_join) {
        partners = online_partners_read (on, r.j.partner, ps->p, o->batch_size, o->memory, err);
        ok = partners || err->code == 0;
        r.j.partners = partners;
    }
    r.j.seen = t.seen;
    r.j.written = t.changed;
    if (ok && n_parts <= 1)
        ok = read_whole (on, ps, &r, &last, seen0, &pg, err);
    else if (ok)
        ok = run_workers (on, ps, &r, &parts, n_parts, partners, &taken, err);
    pass_said (on, ps, &r, pg, n_parts, taken, ok);
    if (!ok && o->in_place && !o->dry_run && err->domain == RM_ERROR_DOMAIN &&
        err->code == RM_ERR_DATA)
        inplace_failed (on, ps, &r, n_parts, err);
    reader_close (&r);
    online_partners_destroy (partners);
    bson_destroy (&last);
    bson_destroy (&parts);
    return ok;
}

/* verify and sync's rescan with --workers: by the partitions the run
 * recorded (online_workers_rescan); one range, as with one worker, where
 * it recorded none (a run before partitions, or of one) or the pass
 * keeps a set of its results' _ids, which one reader fills. */
static bool
rescan_parts (online_t *on, const online_pass_t *ps, online_mode_t mode, bson_t *parts,
              uint32_t *n_parts, bson_error_t *err)
{
    online_cp_where_t at = {ps->s, ps->index, 0, 0};
    bool ok = ps->keeps_set || online_parts_get (on, &at, NULL, false, false, parts, err);
    *n_parts = ok && !ps->keeps_set && !bson_empty (parts) ? online_parts_count (parts) : 1;
    if (ok && *n_parts <= 1)
        online_say_note (on, "%s: %s %s: one range, one worker (%s)",
                         mode == ONLINE_SYNC ? "sync" : "verify", ps->label, ps->drive_ns,
                         ps->keeps_set ? "its results' _ids are checked in one set"
                                       : "its run read it whole");
    return ok;
}

/* The rescan's partitions read by workers, what they found added up. */
static bool
rescan_workers (online_t *on, const online_pass_t *ps, reader_t *r, const bson_t *parts,
                uint32_t n_parts, bson_error_t *err)
{
    online_passrun_t *pr = r->pr;
    pass_ctx_t ctx = {ps, r->mode, n_parts, .on = on};
    online_worker_ops_t ops = {worker_open, rescan_run, worker_close, &ctx};
    int n = on->run->o->workers < n_parts ? (int) on->run->o->workers : (int) n_parts;
    bool ok;

    pthread_mutex_init (&ctx.mu, NULL);
    ctx.lists = bson_malloc0 (n_parts * sizeof *ctx.lists);
    ctx.finished = bson_malloc0 (n_parts * sizeof *ctx.finished);
    ok = online_workers_rescan (on, parts, n, &ops, err);
    /* After an error, what was found is dropped with the list. */
    for (uint32_t k = ctx.adopted; k < n_parts; k++)
        online_diffs_adopt (on, ctx.lists[k]);
    bson_free (ctx.lists);
    bson_free (ctx.finished);
    pthread_mutex_destroy (&ctx.mu);
    pr->differ += ctx.differ;
    pr->reported = ctx.reported;
    r->j.seen = ctx.read;
    if (ok)
        online_say_note (on, "%s: %s %s: %u partitions, %d worker(s): %lld read",
                         r->mode == ONLINE_SYNC ? "sync" : "verify", ps->label, ps->drive_ns,
                         n_parts, n, (long long) ctx.read);
    return ok;
}

/* verify's and sync's rescan: every range recomputed from the sources as
 * they are now, no checkpoint kept (it starts over when stopped). */
static bool
pass_rescan (online_t *on, const online_pass_t *ps, online_mode_t mode, online_passrun_t *pr,
             bson_error_t *err)
{
    reader_t r;
    bson_t last = BSON_INITIALIZER, parts = BSON_INITIALIZER;
    uint32_t n_parts = 1;
    online_progress_t *pg = NULL;
    bool ok = true;

    if (on->run->o->workers > 1)
        ok = rescan_parts (on, ps, mode, &parts, &n_parts, err);
    reader_open (&r, on, ps, mode, pr);
    if (ok && n_parts <= 1)
        ok = read_whole (on, ps, &r, &last, 0, &pg, err) && online_check_side_end (&r.j, r.pr, err);
    else if (ok)
        ok = rescan_workers (on, ps, &r, &parts, n_parts, err);
    pass_said (on, ps, &r, pg, n_parts, 0, ok);
    reader_close (&r);
    bson_destroy (&last);
    bson_destroy (&parts);
    return ok;
}

/* verify's driver: compares, writes nothing. */
static bool
pass_verify (online_t *on, const online_pass_t *ps, online_passrun_t *pr, bson_error_t *err)
{
    return pass_rescan (on, ps, ONLINE_VERIFY, pr, err);
}

/* sync's driver: writes what differs (a dry run counts it). */
static bool
pass_sync (online_t *on, const online_pass_t *ps, online_passrun_t *pr, bson_error_t *err)
{
    return pass_rescan (on, ps, ONLINE_SYNC, pr, err);
}

/* A pass's driver, by the command's mode. */
typedef bool (*pass_driver_t) (online_t *on, const online_pass_t *ps, online_passrun_t *pr,
                               bson_error_t *err);
static const pass_driver_t pass_drivers[] = {
    [ONLINE_RUN] = pass_run,
    [ONLINE_VERIFY] = pass_verify,
    [ONLINE_SYNC] = pass_sync,
};

static bool
create_targets (online_t *on, const rm_step_t *s, const rm_nsref_t *const *targets, size_t nt,
                bson_error_t *err)
{
    bool ok = true;
    char names[8][400];
    const char *colls[8];
    for (size_t t = 0; ok && t < nt && t < 8; t++) {
        rm_name_target (&on->run->names, s, targets[t], names[t], sizeof names[t]);
        colls[t] = names[t];
        ok = create_collection (on, targets[t]->db, names[t], targets[t]->coll, err);
    }
    /* With the indexes remodel run's metadata gives them. */
    return ok && online_index_created (on, s, targets, colls, nt < 8 ? nt : 8, err);
}

/* A dry run writes no step's results, so a later step's input that an
 * earlier step makes (side by side) is not there unless a real run made
 * it: said once per namespace, and read as it is (nothing when absent). */
static void
dry_run_note (online_t *on, const rm_step_t *s, const rm_nsref_t *ref, const rm_nsref_t **said,
              size_t *n_said)
{
    const char *now = rm_name_now (&on->run->names, ref);
    bson_error_t why;
    char **names;
    bool there = false;

    /* Asked of the reporter first: the note lists the collections. */
    if (!strcmp (now, ref->coll) || online_say_how (on).quiet)
        return;
    for (size_t i = 0; i < *n_said; i++)
        if (said[i] == ref)
            return;
    said[(*n_said)++] = ref;
    names = online_collection_names (on, ref->db, NULL, &why);
    for (size_t i = 0; names && names[i]; i++)
        there |= !strcmp (names[i], now);
    bson_strfreev (names);
    online_say_note (on, "step %zu (%s): dry run: %s is an earlier step's result (%s.%s), which "
                     "a dry run does not write: %s", s->index, s->op, ref->text, ref->db, now,
                     there ? "read as an earlier run left it" : "not there, so read as empty");
}

/* The indexes the joins need, before anything is written. A dry run
 * creates none: it refuses as a run would, or says what a run would
 * create (online_index_check). */
static bool
check_indexes (online_t *on, const online_step_t *st, bson_error_t *err)
{
    const rm_step_t *s = st->s;
    const rm_pass_t *passes = st->passes;
    const rm_nsref_t *const *in = st->in, *said[8];
    size_t n_said = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < st->np; i++) {
        const rm_nsref_t *pr;
        const char *now;
        bool made;
        if (on->run->o->dry_run)
            dry_run_note (on, s, in[passes[i].drive], said, &n_said);
        if (passes[i].partner < 0)
            continue;
        pr = in[passes[i].partner];
        now = rm_name_now (&on->run->names, pr);
        made = strcmp (now, pr->coll) != 0;
        if (made && on->run->o->dry_run) {
            /* A run makes this one's index itself, after the earlier step
             * made the collection. */
            dry_run_note (on, s, pr, said, &n_said);
            continue;
        }
        /* A collection remodel made itself gets its index without asking. */
        ok = online_index_check (on, pr->db, now, passes[i].partner_key->text,
                                 on->run->create_indexes || made, err);
        if (!ok && err->code == RM_ERR_USAGE)
            rm_error_prefix (err, "%s: step %zu (%s)", on->run->where, s->index, s->op);
    }
    return ok;
}

/* Every step's join indexes on the sources, before the first step
 * writes (check_indexes then makes or checks each as its step starts):
 * a plan whose step 8 lacks one is refused before steps 1 to 7 write.
 * A partner an earlier step makes gets its index from remodel. */
static bool
indexes_first (online_t *on, bson_error_t *err)
{
    const rm_nsref_t *made[64];
    size_t nm = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *st = online_step (on, s, on->run->o->in_place);
        if (!online_step_runs (st, err))
            return false;
        for (size_t p = 0; ok && p < st->np; p++) {
            const rm_pass_t *pass = &st->passes[p];
            const rm_nsref_t *pr;
            bool ours = false;
            if (pass->partner < 0)
                continue;
            pr = st->in[pass->partner];
            for (size_t m = 0; m < nm; m++)
                ours |= !strcmp (made[m]->text, pr->text);
            if (ours)
                continue;
            ok = online_index_check (on, pr->db, pr->coll, pass->partner_key->text, false, err);
            if (!ok && err->code == RM_ERR_USAGE)
                rm_error_prefix (err, "%s: step %zu (%s), checked before any step writes",
                                 on->run->where, s->index, s->op);
        }
        for (size_t t = 0; t < st->nt && nm < 64; t++)
            made[nm++] = st->targets[t];
    }
    return ok;
}

/* The one pass that keeps target, when its results name their driver,
 * and the field that does (NULL: none, or more than one pass keeps it). */
static const rm_pass_t *
kept_traced (const rm_pass_t *passes, size_t np, const rm_nsref_t *target, const char **field)
{
    const rm_pass_t *by = NULL;
    size_t n = 0;
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < passes[i].n_keep; k++)
            if (!strcmp (passes[i].keep[k]->text, target->text)) {
                by = &passes[i];
                *field = passes[i].driver_field[k];
                n++;
            }
    /* A target listed by its drivers' results (rm_pass_t.driver_list)
     * has no field to merge with the drivers: it keeps a set. */
    return n == 1 && rm_pass_traced (by) && *field ? by : NULL;
}

/* --server-side: the step's compiled pipelines, when they are exact for
 * the data there (*np 0: nothing left to run client-side); otherwise it
 * runs client-side. */
static bool
server_step (online_t *on, const rm_step_t *s, const rm_compile_step_t *cs, online_mode_t mode,
             size_t *np, bson_error_t *err)
{
    bool ok = true, exact;
    if (!cs || mode != ONLINE_RUN)
        return true;
    if (!cs->n_passes) {
        online_say_note (on, "step %zu (%s) runs client-side: %s", s->index, s->op, cs->reason);
        return true;
    }
    ok = online_server_exact (on, cs, &exact, err);
    for (size_t i = 0; ok && exact && i < cs->n_passes; i++)
        ok = online_server_pass (on, cs, &cs->passes[i], err);
    if (ok && exact)
        *np = 0;
    return ok;
}

/* verify and sync, after the passes: the results no driver makes now. A
 * target one pass keeps, naming their drivers, is merged with the
 * drivers' _ids rather than looked up in a set. */
static bool
step_extras (online_t *on, const online_step_t *st, online_idset_t *sets,
             const online_orphans_t *orph, online_mode_t mode, int64_t *differ, bson_error_t *err)
{
    bool ok = true;
    for (size_t t = 0; ok && t < st->nt; t++) {
        const char *field = NULL;
        const rm_pass_t *by = kept_traced (st->passes, st->np, st->targets[t], &field);
        mongoc_collection_t *drivers = NULL;
        if (by)
            drivers = online_collection (on, st->in[by->drive]->db,
                                         rm_name_now (&on->run->names, st->in[by->drive]));
        ok = online_check_extras (on, st->s, st->targets[t], &sets[t], drivers, field,
                                  by ? &orph[t] : NULL, mode, differ, err);
        if (drivers)
            mongoc_collection_destroy (drivers);
    }
    return ok;
}

/* In place, a copy or move writes into its "to" itself: refused, before
 * any step writes, where it holds documents no run of this plan wrote (its
 * journal empty: online_write_select.c), as remodel run refuses a step
 * writing to a namespace that holds some. */
static bool
select_targets_first (online_t *on, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const rm_nsref_t *to = &s->u.copy.to;
        char bname[400];
        mongoc_collection_t *t, *b;
        bson_t all = BSON_INITIALIZER;
        bson_error_t why;
        int64_t n, mine = 0;
        if (!online_select_step (s) || s->kind == RM_STEP_DELETE)
            continue;
        rm_name_inplace_backup (&on->run->names, s, bname, sizeof bname);
        t = online_collection (on, to->db, to->coll);
        b = online_collection (on, on->run->o->state_db, bname);
        n = online_ops (on)->count (on, t, &all, &why);
        if (n > 0)
            mine = online_ops (on)->count (on, b, &all, &why);
        ok = (n >= 0 && mine >= 0) || online_fail (on, err, &why, "counting the documents of \"to\"");
        if (ok && n > 0 && mine == 0) {
            rm_error_set (err, RM_ERR_USAGE, "%s: step %zu (%s): --in-place writes into %s "
                          "itself, which holds %lld document(s): a step writes only to a new or "
                          "an empty namespace (empty it, or run side by side: finalize replaces "
                          "it); checked before any step writes",
                          on->run->where, s->index, s->op, to->text, (long long) n);
            ok = false;
        }
        mongoc_collection_destroy (t);
        mongoc_collection_destroy (b);
        bson_destroy (&all);
    }
    return ok;
}

/* The "to" a copy or move writes into in place, made as its side-by-side
 * target is (the indexes remodel run gives it); one this plan
 * made is noted first, so that rollback, once it has emptied it, drops
 * it (online_rollback_select.c). */
static bool
select_target (online_t *on, const rm_step_t *s, bson_error_t *err)
{
    const rm_nsref_t *to = &s->u.copy.to;
    const char *coll = to->coll;
    char **names, flag[64];
    bson_error_t why;
    bool ok, there = false;

    names = online_collection_names (on, to->db, NULL, &why);
    ok = names || online_fail (on, err, &why, "listing collections");
    for (size_t i = 0; names && names[i]; i++)
        there |= !strcmp (names[i], to->coll);
    bson_strfreev (names);
    online_select_made_flag (s, flag, sizeof flag);
    ok = ok && (there || online_plan_set (on, flag, true, err));
    return ok && (there || create_collection (on, to->db, to->coll, to->coll, err)) &&
           online_index_created (on, s, &to, &coll, 1, err);
}

/* A sync's rescan side by side, not dry: each of the pass's results kept
 * by their drivers' own _id (the one pass keeping that target) has its
 * orphans found by the merge (online_orphans_t), counted in orph[t]. */
static void
orphans_link (const online_t *on, const online_step_t *st, const online_idset_t *sets,
              online_orphans_t *orph, online_mode_t mode, online_pass_t *ps)
{
    const rm_pass_t *p = ps->p;
    if (mode != ONLINE_SYNC || on->run->o->dry_run || on->run->o->in_place)
        return;
    for (size_t k = 0; k < p->n_keep && k < 4; k++)
        for (size_t t = 0; t < st->nt; t++)
            if (sets[t].by_drivers && !strcmp (sets[t].ns, p->keep[k]->text) &&
                p->driver_field[k] && !strcmp (p->driver_field[k], "_id"))
                ps->orphans[k] = &orph[t];
}

static bool
run_step (online_t *on, const rm_step_t *s, const rm_compile_step_t *cs, online_mode_t mode,
          int64_t *differ, bson_error_t *err)
{
    const online_step_t *st = online_step (on, s, on->run->o->in_place);
    online_idset_t sets[8];
    online_orphans_t orph[8];
    size_t np;
    bool ok = online_step_runs (st, err) && check_indexes (on, st, err);

    memset (sets, 0, sizeof sets);
    memset (orph, 0, sizeof orph);
    for (size_t t = 0; t < st->nt; t++) {
        const char *field;
        sets[t].ns = st->targets[t]->text;
        sets[t].by_drivers = kept_traced (st->passes, st->np, st->targets[t], &field) != NULL;
        /* --memory, shared by the step's sets. */
        sets[t].budget = on->run->o->memory / st->nt;
        sets[t].tmpdir = on->run->o->tmpdir;
    }
    if (ok && mode != ONLINE_VERIFY && !on->run->o->dry_run)
        ok = create_targets (on, s, st->targets, st->nt, err);
    if (ok && mode == ONLINE_RUN && !on->run->o->dry_run && on->run->o->in_place &&
        online_select_step (s) && s->kind != RM_STEP_DELETE)
        ok = select_target (on, s, err);
    np = st->np;
    ok = ok && server_step (on, s, cs, mode, &np, err);
    for (size_t i = 0; ok && i < np; i++) {
        online_pass_t ps;
        online_passrun_t pr;
        online_pass_resolve (on, st, i, sets, st->nt, &ps);
        orphans_link (on, st, sets, orph, mode, &ps);
        passrun_init (&pr, mode);
        ok = pass_drivers[mode](on, &ps, &pr, err);
        *differ += pr.differ;
        /* verify's finding is always said, sync's (it repairs them) a note. */
        if (pr.reported > ONLINE_REPORT_MAX)
            online_say (on, mode == ONLINE_SYNC ? ONLINE_SAY_NOTE : ONLINE_SAY_WARN,
                        "%s: %s: %d more ranges differ", mode == ONLINE_SYNC ? "sync" : "verify",
                        ps.label, pr.reported - ONLINE_REPORT_MAX);
        passrun_destroy (&pr);
    }
    /* Past --memory, two results of a run with one _id are found here,
     * after the step's writes. */
    for (size_t t = 0; ok && mode == ONLINE_RUN && t < st->nt; t++)
        if (sets[t].disk)
            ok = online_check_dups (on, s, st->targets[t], &sets[t], err);
    if (ok && mode != ONLINE_RUN)
        ok = step_extras (on, st, sets, orph, mode, differ, err);
    if (ok && mode != ONLINE_RUN && on->run->o->in_place && s->kind == RM_STEP_COPY)
        ok = online_select_extras (on, s, mode, differ, err);
    for (size_t t = 0; t < st->nt; t++)
        online_idset_destroy (&sets[t]);
    /* The next steps read this one's results. */
    if (ok)
        rm_name_move_step (&on->own_run->names, s, st->targets, st->nt);
    return ok;
}

/* The $lookup rules the plan joins by (online_engine_new): run records
 * them in the plan's record (the given --server-version's, else the
 * server's); verify, sync and finalize take the recorded ones unless
 * given --server-version, so a plan is checked by the rules it ran by. */
static bool
lookup_rules_settle (online_t *on, online_mode_t mode, bson_error_t *err)
{
    online_record_t r;
    bson_t *set;
    bool ok, joins = false;
    /* Only a plan with a join has rules to keep. */
    for (size_t i = 0; i < on->run->plan.n; i++) {
        const online_step_t *st = online_step (on, &on->run->plan.steps[i], on->run->o->in_place);
        for (size_t p = 0; p < st->np; p++)
            joins |= st->passes[p].partner >= 0;
    }
    if (!joins)
        return true;
    if (!online_plan_read (on, &r, err))
        return false;
    if (mode != ONLINE_RUN && r.lookup_rules && !on->run->o->server_version_given)
        on->own_run->lookup_rules = r.lookup_rules;
    if (mode != ONLINE_RUN || r.lookup_rules == online_lookup_rules (on))
        return true;
    set = BCON_NEW ("$set", "{", "lookupRules", BCON_UTF8 (on->run->lookup_rules == 2 ? "9.0" : "5.0-8.x"),
                    "}");
    ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

/* $$NOW (remodel/expr.h): one value for the whole life of a plan's run,
 * so that a batch, a resume, a sync and follow all write what the first
 * batch did. The first run records it in the plan's record; every later
 * command takes it from there. */
static bool
now_settle (online_t *on, online_mode_t mode, bson_error_t *err)
{
    online_record_t r;
    bson_t *set;
    bool ok;

    if (!online_plan_read (on, &r, err))
        return false;
    if (r.now_ms) {
        rm_expr_set_run_now (r.now_ms);
        return true;
    }
    if (mode != ONLINE_RUN)
        return true; /* a record from before $$NOW was kept: this process's clock */
    set = BCON_NEW ("$set", "{", "now", BCON_DATE_TIME (rm_expr_run_now ()), "}");
    ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

/* At the start of a run, the partitions of every pass that reads a
 * source, recorded before the first batch (a pass an earlier step's
 * results drive has them once that step is done, in run_pass). */
static bool
parts_at_start (online_t *on, bson_error_t *err)
{
    const char *nss[64];
    size_t nn = online_changes_sources (on, nss, 64);
    bool ok = true;
    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        const online_step_t *st = online_step (on, s, on->run->o->in_place);
        for (size_t pi = 0; ok && pi < st->np; pi++) {
            const rm_nsref_t *ref = st->in[st->passes[pi].drive];
            bson_t last = BSON_INITIALIZER, parts = BSON_INITIALIZER;
            online_cp_where_t at = {s, pi, 0, 0};
            online_cp_tally_t t = {false, 0, 0};
            bool source = false;
            for (size_t k = 0; k < nn; k++)
                source |= !strcmp (nss[k], ref->text);
            if (source)
                ok = online_checkpoint_read (on, &at, &last, &t, err);
            if (ok && source && !t.done) {
                mongoc_collection_t *c = online_collection (on, ref->db, ref->coll);
                ok = online_parts_get (on, &at, c, one_part (&st->passes[pi], &last, t.seen), true,
                                       &parts, err);
                mongoc_collection_destroy (c);
            }
            bson_destroy (&parts);
            bson_destroy (&last);
        }
    }
    return ok;
}

/* *none: no checkpoint of the plan is there, so nothing was copied. */
static bool
copied (online_t *on, bool *none, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *c = online_collection (on, on->run->o->state_db, "checkpoints");
    /* The pipeline the driver's count of documents with a limit of 1 sent. */
    bson_t *pipeline = BCON_NEW ("0", "{", "$match", "{", "plan", BCON_UTF8 (on->run->names.id), "}",
                                 "}", "1", "{", "$limit", BCON_INT64 (1), "}", "2", "{", "$group",
                                 "{", "_id", BCON_INT32 (1), "n", "{", "$sum", BCON_INT32 (1), "}",
                                 "}", "}");
    online_cursor_t *cur = ops->aggregate (on, c, pipeline, NULL);
    const bson_t *doc;
    bson_iter_t it;
    bson_error_t why;
    int64_t n = 0;
    if (ops->next (cur, &doc) && bson_iter_init_find (&it, doc, "n"))
        n = bson_iter_as_int64 (&it);
    if (!ops->end (cur, &why))
        n = -1;
    bson_destroy (pipeline);
    mongoc_collection_destroy (c);
    *none = n == 0;
    return n >= 0 || online_fail (on, err, &why, "reading the checkpoints");
}

/* run's first line: the capture mode, and its start point, taken now when
 * the plan begins (fresh), kept from the record when a run resumes. A dry
 * run records nothing, so it only says what the server offers. */
static bool
capture_begin (online_t *on, online_capture_t *c, bool fresh, bson_error_t *err)
{
    const char *none = on->run->o->in_place ? "the cost of a rescan is said when this run ends"
                                       : "the cost of finalize is said when this run ends";
    const char *more = NULL;
    char line[1200];
    bool ok = true, recorded = false;

    if (on->run->o->dry_run) {
        ok = online_capture_detect (on, c, err);
        more = "a dry run records no start point";
    } else if (!fresh) {
        bson_t doc;
        bool found;
        ok = online_state_get (on, "plans", on->run->names.id, &doc, &found, "reading the plan's record",
                               err);
        recorded = ok && online_capture_load (&doc, c);
        bson_destroy (&doc);
        more = c->mode == ONLINE_CAPTURE_NONE ? none : "recorded when the plan's run began";
        /* A run that stopped before its point was recorded stopped before
         * it copied anything (no checkpoint): a point taken now is still
         * before the copy. */
        if (ok && !recorded)
            ok = copied (on, &fresh, err);
        if (ok && !recorded && !fresh) {
            /* A run begun before remodel recorded a point: one taken now
             * would miss what the copy so far did not see. */
            ok = online_capture_detect (on, c, err);
            more = "no start point: the run began before remodel recorded one; --restart "
                   "records one";
            bson_reinit (&c->token);
            c->has_ts = false;
        }
    }
    if (ok && fresh && !on->run->o->dry_run) {
        /* A key map of an earlier run of the plan is of results gone. */
        const char *nss[64];
        ok = online_keys_drop_plan (on, err) && online_made_drop (on, true, err) &&
             online_capture_start (on, c, err) &&
             online_identity_now (on, nss, online_changes_sources (on, nss, 64), &c->sources,
                                  err) &&
             online_capture_save (on, c, err);
        more = c->mode == ONLINE_CAPTURE_NONE ? none : "recorded now, before the copy";
    }
    on->own_run->follows = ok && !on->run->o->dry_run && c->mode != ONLINE_CAPTURE_NONE &&
                  (!bson_empty (&c->token) || c->has_ts);
    if (ok) {
        online_capture_describe (c, more, line, sizeof line);
        online_say_note (on, "capture: %s", line);
    }
    /* Whether the log's history will outlast the copy (online_window.c). */
    if (ok && (on->run->follows || on->run->o->dry_run))
        online_window_before_run (on, c);
    return ok;
}

/* run --join: the capture the run recorded (nothing is recorded here),
 * so that partners' keys are noted as the run notes them. */
static bool
capture_joined (online_t *on, online_capture_t *c, bson_error_t *err)
{
    bson_t doc;
    bool found, ok = online_state_get (on, "plans", on->run->names.id, &doc, &found,
                                       "reading the plan's record", err);
    on->own_run->follows = ok && online_capture_load (&doc, c) && c->mode != ONLINE_CAPTURE_NONE &&
                  (!bson_empty (&c->token) || c->has_ts);
    bson_destroy (&doc);
    if (ok)
        online_say_note (on, "plan %s: joining its run in progress", on->run->names.name);
    return ok;
}

/* capture none: what the cut-over will cost, from what the checkpoints
 * say the plan read, at this run's own rate (or, when it read nothing
 * itself, as a run done before or on the server's side, the checkpoints'). */
static void
capture_end (online_t *on, const online_capture_t *c, int64_t ms)
{
    char cost[300];
    int64_t seen, rate;
    bson_error_t why;
    /* Asked of the reporter first: the totals are read from the server. */
    if (c->mode != ONLINE_CAPTURE_NONE || online_say_how (on).quiet || on->run->o->dry_run ||
        !online_checkpoint_totals (on, &seen, &rate, &why))
        return;
    if (on->read_now > 0 && ms > 0)
        rate = on->read_now * 1000 / ms;
    online_capture_cost (seen, on->run->o->in_place, rate, cost, sizeof cost);
    online_say_note (on, "capture: none: %s (%s)", cost,
                     on->read_now > 0 ? "this run's rate" : "the rate its checkpoints show");
}

/* What one command's run, verify or sync holds from its start to its
 * end (online_apply's phases below). */
typedef struct {
    online_mode_t mode;
    bool server;            /* run --server-side */
    bool joining;           /* run --join */
    bool took;              /* this command took the plan's lease */
    bool fresh;             /* the run begins the plan */
    bool save;              /* sync: the next point is saved at the end */
    rm_compile_plan_t compiled;
    online_capture_t capture, next;
    size_t first;           /* the first step rescanned */
    int64_t differ, t0;
} apply_t;

/* --keep-before as the run that began the plan was given it (keepBefore
 * in its record, read by every command that writes results: sync,
 * follow, finalize's drain). Given to a run in place (its backups keep
 * every original already) or on the server's side (no batch of it is
 * remodel's), refused; to a resume of a run begun without it, refused
 * too: the batches before had kept nothing. */
static bool
keep_before_settle (online_t *on, const apply_t *a, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    online_record_t r;
    if (!online_plan_flag (on, "keepBefore", &on->own_run->keep_before, err))
        return false;
    if (!o->keep_before || a->mode != ONLINE_RUN || on->run->keep_before)
        return true;
    if (o->in_place || a->server) {
        rm_error_set (err, RM_ERR_USAGE, "--keep-before: %s", o->in_place
                      ? "an in-place run keeps every document it changes in its backup already; "
                        "leave it out"
                      : "--server-side writes its results on the server, where remodel keeps "
                        "nothing of them; run without --server-side");
        return false;
    }
    if (!online_plan_read (on, &r, err))
        return false;
    if (r.found && !o->restart) {
        rm_error_set (err, RM_ERR_USAGE, "--keep-before: plan %s: its run began without it, "
                      "and what the batches before kept nothing of; --restart runs it again "
                      "from the start with it", on->run->names.name);
        return false;
    }
    on->own_run->keep_before = true;
    return true;
}

/* Refused whole before anything is written: a step that cannot run
 * online, a misspelt namespace or field, a missing join index, a plan
 * the server cannot run on its side. */
static bool
apply_refuse (online_t *on, apply_t *a, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    rm_compile_version_t v = o->server_version;
    bool ok;

    for (size_t i = 0; i < on->run->plan.n; i++) {
        if (!online_step_runs (online_step (on, &on->run->plan.steps[i], o->in_place), err)) {
            rm_error_prefix (err, "%s", o->plan_path);
            return false;
        }
    }
    /* A plan whose results are live (finalized, or a switch begun) is
     * refused before the preflight reads those collections, which are no
     * longer its sources: with the words online_plan_record says it. */
    if (a->mode == ONLINE_RUN) {
        online_record_t r;
        if (!online_plan_read (on, &r, err) || (r.found && !online_plan_unswitched (on, &r, err)))
            return false;
    }
    if (a->mode == ONLINE_RUN && !online_preflight (on, err))
        return false;
    /* --create-indexes as the run that began the plan was given it; else
     * every step's join indexes there before the first writes. */
    if (!online_plan_flag (on, "createIndexes", &on->own_run->create_indexes, err))
        return false;
    on->own_run->create_indexes |= o->create_indexes;
    if (!keep_before_settle (on, a, err))
        return false;
    if (a->mode == ONLINE_RUN && !o->dry_run && !on->run->create_indexes && !indexes_first (on, err))
        return false;
    if (a->mode == ONLINE_RUN && !o->dry_run && o->in_place && !select_targets_first (on, err))
        return false;
    if (!a->server)
        return true;
    /* The pipelines for this server's version, checked against the
     * stages it has, before anything is written. */
    if (o->in_place || o->dry_run) {
        rm_error_set (err, RM_ERR_USAGE, "--server-side runs side by side and writes: "
                      "without --%s (client-side mode has it)", o->in_place ? "in-place" : "dry-run");
        return false;
    }
    ok = (o->server_version_given || online_server_version (on, &v, err)) &&
         rm_compile_plan (&on->run->plan, &on->own_run->names, v, &a->compiled, err) &&
         online_server_check (on, &a->compiled, err);
    rm_names_clear (&on->own_run->names);
    return ok;
}

/* A run's flags remembered with it: a resume without one is the same. */
static bool
flags_remember (online_t *on, const apply_t *a, bson_error_t *err)
{
    bool ok = true;
    if (on->run->create_indexes)
        ok = online_plan_set (on, "createIndexes", true, err);
    /* The results get the sources' indexes as they were, at every carry. */
    if (ok && on->run->o->keep_indexes)
        ok = online_plan_set (on, "keepIndexes", true, err);
    /* A run that begins the plan (or --restart) keeps afresh. */
    if (ok && on->run->keep_before)
        ok = (!a->fresh || online_kept_drop (on, err)) &&
             online_plan_set (on, "keepBefore", true, err);
    return ok;
}

/* The lease (finalize holds it already, for its sync and verify; run
 * --join works beside the run that holds it: run_where takes it over
 * from one gone), the plan's record and what it settles, where the change
 * log stands before any source document is read, the sources'
 * partitions before the first batch. */
static bool
apply_begin (online_t *on, apply_t *a, bson_error_t *err)
{
    const online_opts_t *o = on->run->o;
    online_mode_t mode = a->mode;
    bool run = mode == ONLINE_RUN && !o->dry_run, lease = mode != ONLINE_VERIFY && !o->dry_run;
    bool ok = true;

    lease &= !a->joining;
    a->took = lease && !on->lease;
    if (a->joining)
        ok = online_plan_check (on, err);
    else if (lease)
        ok = online_lease_take (on, err) && (mode == ONLINE_RUN ? online_plan_record (on, &a->fresh, err)
                                                                 : online_plan_check (on, err));
    else if (mode == ONLINE_VERIFY)
        ok = online_plan_check (on, err);
    /* A source another plan switched since this one's run began. */
    if (ok && !o->dry_run && !a->joining)
        ok = online_shared_check (on, mode == ONLINE_RUN, a->fresh, err);
    /* A run that joins joins by the rules the run recorded. */
    if (ok && !o->dry_run)
        ok = lookup_rules_settle (on, a->joining ? ONLINE_SYNC : mode, err);
    /* Every batch, resume and sync evaluates $$NOW as the run began. */
    if (ok && !o->dry_run)
        ok = now_settle (on, mode, err);
    if (ok && a->joining)
        ok = capture_joined (on, &a->capture, err);
    else if (ok && mode == ONLINE_RUN)
        ok = capture_begin (on, &a->capture, a->fresh, err);
    if (ok && run && !a->server && !a->joining)
        ok = parts_at_start (on, err);
    if (ok && run && !a->joining)
        ok = flags_remember (on, a, err);
    /* A run on the server's side notes no partner's keys: the next sync
     * rescans in full to write them (online_follow_sync). */
    if (ok && run && (a->server || a->fresh))
        ok = online_plan_set (on, "keysMissing", a->server, err);
    return ok;
}

/* The steps: sync from the change log first where the run recorded a
 * point (what it cannot follow is rescanned), finalize's verify by
 * sample where the steps' results are one per driver, the rest in full. */
static bool
apply_steps (online_t *on, apply_t *a, bson_error_t *err)
{
    online_mode_t mode = a->mode;
    bool ok = true;

    /* Nothing to recompute once the results are the live collections, or
     * half of them are. */
    if (mode != ONLINE_RUN) {
        online_record_t r;
        ok = online_plan_read (on, &r, err) && online_plan_unswitched (on, &r, err);
    }
    if (ok && mode == ONLINE_SYNC && !on->run->o->dry_run) {
        ok = online_follow_sync (on, &a->first, &a->next, &a->save, err);
        a->differ += on->incr.rewritten + on->incr.removed;
    }
    if (ok && mode == ONLINE_VERIFY && on->run->verify_sample > 0)
        ok = online_incr_verify_sample (on, on->run->verify_sample, &a->differ, &a->first, err);
    /* A fused run (remodel/fuse.h) is one pass, its first step's, which
     * runs client-side: the compiler's pipelines are a step's each. */
    for (size_t i = a->first; ok && i < on->run->plan.n;) {
        size_t n = rm_names_run (&on->run->names, i);
        if (n > 1 && a->server) {
            char label[200];
            rm_names_label (&on->run->names, &on->run->plan.steps[i], label, sizeof label);
            online_say_note (on, "%s runs client-side: its steps are fused into one pass", label);
        }
        if (n > 0)
            ok = run_step (on, &on->run->plan.steps[i],
                           a->server && n == 1 ? &a->compiled.steps[i] : NULL, mode, &a->differ,
                           err);
        i += n ? n : 1;
    }
    if (ok && on->run->o->dry_run && on->doc_fails) {
        rm_error_set (err, RM_ERR_DATA, "%s: dry run: %lld document(s) fail the plan's "
                      "expressions or filters (the first %d said above): nothing written; give "
                      "the operator an onError, or the step a filter that leaves them out",
                      on->run->o->plan_path, (long long) on->doc_fails,
                      on->doc_fails < 5 ? (int) on->doc_fails : 5);
        ok = false;
    }
    /* The results now cover the log up to the next point. */
    if (ok && a->save)
        ok = online_capture_save (on, &a->next, err) && online_made_drop (on, false, err) &&
             (!on->run->keys_rebuilt || online_plan_set (on, "keysMissing", false, err));
    return ok;
}

/* After the steps: the sources' indexes on the results, before finalize
 * (which checks them itself, before it blocks the writes); capture
 * none's cost; for status, what stopped the run or that it went through,
 * written while the lease is held (a run that lost it writes nothing);
 * the lease dropped. */
static bool
apply_end (online_t *on, apply_t *a, bool ok, bson_error_t *err)
{
    online_mode_t mode = a->mode;
    on->own_run->keys_rebuilt = false;
    if (ok && mode != ONLINE_VERIFY && !on->run->o->switching && (!a->joining || on->lease))
        ok = online_index_copy (on, false, err);
    if (ok && mode == ONLINE_RUN && !a->joining)
        capture_end (on, &a->capture, online_mono_ms () - a->t0);
    if ((a->took || (a->joining && on->lease)) && mode == ONLINE_RUN &&
        err->code != RM_ERR_USAGE && err->code != RM_ERR_UNSUPPORTED)
        online_plan_note_error (on, ok ? NULL : err->message);
    if (a->took || a->joining)
        online_lease_drop (on);
    return ok;
}

int64_t
online_apply (online_t *on, online_mode_t mode, bson_error_t *err)
{
    apply_t a;
    bool ok;

    memset (&a, 0, sizeof a);
    a.mode = mode;
    a.server = on->run->o->server_side && mode == ONLINE_RUN;
    a.joining = mode == ONLINE_RUN && on->run->o->join;
    online_capture_init (&a.capture);
    online_capture_init (&a.next);
    if (!apply_refuse (on, &a, err)) {
        rm_compile_plan_destroy (&a.compiled);
        return -1;
    }
    ok = apply_begin (on, &a, err);
    a.t0 = online_mono_ms ();
    ok = ok && apply_steps (on, &a, err);
    ok = apply_end (on, &a, ok, err);
    rm_names_clear (&on->own_run->names);
    rm_compile_plan_destroy (&a.compiled);
    online_capture_destroy (&a.capture);
    online_capture_destroy (&a.next);
    return ok ? a.differ : -1;
}
