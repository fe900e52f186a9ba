/* online run (online.h): each step of the plan over the server, pass by
 * pass (online_passes.c), range by range in _id order, resumable.
 *
 * A batch: read up to --batch-size documents of the driving collection
 * after the checkpoint's _id, fetch their join partners, let the engine
 * compute what the step makes of them (online_batch.c), write that, then
 * the checkpoint. Side by side (the default) the results are upserted by
 * _id into the step's own new collections (online_names.c), so a batch
 * replayed after a crash writes the same documents again and nothing
 * twice. In place (--in-place, backfills) the originals of the documents
 * that change are saved first (the first original of each kept: a
 * $setOnInsert), then each is replaced on condition that it is still the
 * document read (a filter on all its fields): one the application changed
 * in between is read again and recomputed, never overwritten stale. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online_batch.h"

/* A document read again because it changed under us is recomputed at most
 * this many times before the run stops naming it. */
#define RETRIES 5
/* Write commands carry at most this many statements: FerretDB 1.x (SQLite)
 * stops answering an update command of about a hundred (sixty is fine). */
#define WRITE_CHUNK 50

static void
sleep_ms (int64_t ms)
{
    struct timespec ts = {(time_t) (ms / 1000), (long) (ms % 1000) * 1000000L};
    if (ms > 0)
        nanosleep (&ts, NULL);
}

static int64_t
mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Statements of one collection gathered into commands of WRITE_CHUNK. */
typedef struct {
    online_job_t *j;
    mongoc_collection_t *coll;
    mongoc_bulk_operation_t *b;
    size_t n;
    const char *what;
    int64_t matched;
} writes_t;

static bool
writes_flush (writes_t *w, bson_error_t *err)
{
    bson_t reply;
    bson_error_t why;
    bson_iter_t it;
    bool ok;
    if (!w->b)
        return true;
    ok = mongoc_bulk_operation_execute (w->b, &reply, &why) != 0;
    if (!ok)
        online_fail (w->j->on, err, &why, w->what);
    else if (bson_iter_init_find (&it, &reply, "nMatched"))
        w->matched += bson_iter_as_int64 (&it);
    bson_destroy (&reply);
    mongoc_bulk_operation_destroy (w->b);
    w->b = NULL;
    w->n = 0;
    return ok;
}

static mongoc_bulk_operation_t *
writes_next (writes_t *w, bson_error_t *err)
{
    if (w->n == WRITE_CHUNK && !writes_flush (w, err))
        return NULL;
    if (!w->b) {
        bson_t opts = BSON_INITIALIZER;
        BSON_APPEND_BOOL (&opts, "ordered", false);
        w->b = mongoc_collection_create_bulk_operation_with_opts (w->coll, &opts);
        bson_destroy (&opts);
    }
    w->n++;
    return w->b;
}

/* replaceOne({_id}, doc, {upsert: true}). */
static bool
writes_upsert (writes_t *w, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    mongoc_bulk_operation_t *b = writes_next (w, err);
    bson_t sel, d, opts = BSON_INITIALIZER;
    bson_error_t why;
    bool ok;
    if (!b)
        return false;
    if (!online_id_filter (doc, len, &sel) || !bson_init_static (&d, doc, len)) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: step %zu (%s): a result without _id",
                      w->j->on->where, w->j->s->index, w->j->s->op);
        bson_destroy (&sel);
        return false;
    }
    BSON_APPEND_BOOL (&opts, "upsert", true);
    ok = mongoc_bulk_operation_replace_one_with_opts (b, &sel, &d, &opts, &why) ||
         online_fail (w->j->on, err, &why, w->what);
    bson_destroy (&opts);
    bson_destroy (&sel);
    return ok;
}

/* ---- side by side ---- */

typedef struct {
    online_job_t *j;
    writes_t targets[4]; /* per keep[] */
} side_t;

static bool
side_write (side_t *sb, const online_docs_t *out, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; ok && i < out->n; i++)
        ok = writes_upsert (&sb->targets[out->docs[i].keep], online_doc_bytes (out, i),
                            out->docs[i].len, err);
    for (size_t k = 0; ok && k < sb->j->p->n_keep; k++)
        ok = writes_flush (&sb->targets[k], err);
    return ok;
}

/* ---- in place ---- */

/* {$setOnInsert: doc without _id}: the backup keeps the first original. */
static void
set_on_insert (const uint8_t *doc, uint32_t len, bson_t *u)
{
    bson_t inner;
    bson_iter_t it;
    bson_init (u);
    BSON_APPEND_DOCUMENT_BEGIN (u, "$setOnInsert", &inner);
    if (bson_iter_init_from_data (&it, doc, len))
        while (bson_iter_next (&it))
            if (strcmp (bson_iter_key (&it), "_id") != 0)
                bson_append_iter (&inner, bson_iter_key (&it), -1, &it);
    bson_append_document_end (u, &inner);
}

/* The result for in's ith document among out's, found by _id; from *at on
 * (results mostly come in the input's order). */
static ssize_t
result_of (const online_docs_t *in, size_t i, const online_docs_t *out, size_t *at)
{
    for (size_t k = 0; k < out->n; k++) {
        size_t r = (*at + k) % out->n;
        if (online_same_id (online_doc_bytes (in, i), in->docs[i].len, online_doc_bytes (out, r),
                            out->docs[r].len)) {
            *at = r + 1;
            return (ssize_t) r;
        }
    }
    return -1;
}

static bool
same_bytes (const online_docs_t *a, size_t i, const online_docs_t *b, size_t k)
{
    return a->docs[i].len == b->docs[k].len &&
           memcmp (online_doc_bytes (a, i), online_doc_bytes (b, k), a->docs[i].len) == 0;
}

typedef struct {
    online_job_t *j;
    mongoc_collection_t *backup;
    online_docs_t again, again_out; /* a document read again, its result */
} inplace_t;

/* The document whose conditional replace matched nothing: it changed or
 * went since it was read. Read it again and redo it. */
static bool
redo (inplace_t *ip, const uint8_t *orig, uint32_t olen, bson_error_t *err)
{
    online_job_t *j = ip->j;
    bson_iter_t id;
    bson_error_t why;

    if (!rm_doc_field (orig, olen, "_id", 3, &id))
        return true;
    for (int attempt = 0; attempt < RETRIES; attempt++) {
        int rc = online_batch_reread (j, &id, &ip->again, err);
        ssize_t r;
        size_t at = 0;
        bson_t cur, want, reply;
        bson_iter_t it;
        bool done;
        if (rc <= 0)
            return rc == 0; /* gone: nothing to do */
        if (!online_batch_compute (j, &ip->again, &ip->again_out, err))
            return false;
        r = result_of (&ip->again, 0, &ip->again_out, &at);
        if (r < 0 || same_bytes (&ip->again, 0, &ip->again_out, (size_t) r))
            return true; /* already what the step makes of it */
        /* Saved first, as in a batch: a first write of this document. */
        {
            bson_t sel, u, up = BSON_INITIALIZER;
            online_id_filter (online_doc_bytes (&ip->again, 0), ip->again.docs[0].len, &sel);
            set_on_insert (online_doc_bytes (&ip->again, 0), ip->again.docs[0].len, &u);
            BSON_APPEND_BOOL (&up, "upsert", true);
            done = mongoc_collection_update_one (ip->backup, &sel, &u, &up, NULL, &why);
            bson_destroy (&sel);
            bson_destroy (&u);
            bson_destroy (&up);
            if (!done)
                return online_fail (j->on, err, &why, "saving an original");
        }
        bson_init_static (&cur, online_doc_bytes (&ip->again, 0), ip->again.docs[0].len);
        bson_init_static (&want, online_doc_bytes (&ip->again_out, (size_t) r),
                          ip->again_out.docs[r].len);
        if (!mongoc_collection_replace_one (j->drive, &cur, &want, NULL, &reply, &why)) {
            bson_destroy (&reply);
            return online_fail (j->on, err, &why, "replacing a document");
        }
        done = bson_iter_init_find (&it, &reply, "matchedCount") && bson_iter_as_int64 (&it) == 1;
        bson_destroy (&reply);
        if (done)
            return true;
    }
    {
        bson_t sel;
        char *text;
        online_id_filter (orig, olen, &sel);
        text = bson_as_relaxed_extended_json (&sel, NULL);
        rm_error_set (err, RM_ERR_IO, "%s: %s: document %s keeps changing under the run "
                      "(%d attempts); stopping (the checkpoint stands)", j->on->where,
                      j->in[j->p->drive]->text, text, RETRIES);
        bson_free (text);
        bson_destroy (&sel);
    }
    return false;
}

static bool
inplace_write (inplace_t *ip, const online_docs_t *in, const online_docs_t *out, bson_error_t *err)
{
    online_job_t *j = ip->j;
    writes_t save = {j, ip->backup, NULL, 0, "saving the originals", 0};
    writes_t repl = {j, j->drive, NULL, 0, "replacing documents", 0};
    size_t at = 0, changed = 0;
    bool ok = true;

    /* The originals first (a crash between the two keeps them), then the
     * documents, each in commands of WRITE_CHUNK. */
    for (int pass = 0; ok && pass < 2; pass++) {
        for (size_t i = 0; ok && i < in->n; i++) {
            ssize_t r = result_of (in, i, out, &at);
            const uint8_t *doc = online_doc_bytes (in, i);
            uint32_t len = in->docs[i].len;
            mongoc_bulk_operation_t *b;
            bson_t sel, u, opts = BSON_INITIALIZER;
            bson_error_t why;
            if (r < 0 || same_bytes (in, i, out, (size_t) r))
                continue;
            changed += pass;
            if (!(b = writes_next (pass ? &repl : &save, err)))
                return false;
            if (pass) {
                bson_t want;
                bson_init_static (&sel, doc, len);
                bson_init_static (&want, online_doc_bytes (out, (size_t) r), out->docs[r].len);
                ok = mongoc_bulk_operation_replace_one_with_opts (b, &sel, &want, NULL, &why);
            } else {
                online_id_filter (doc, len, &sel);
                set_on_insert (doc, len, &u);
                BSON_APPEND_BOOL (&opts, "upsert", true);
                ok = mongoc_bulk_operation_update_one_with_opts (b, &sel, &u, &opts, &why);
                bson_destroy (&sel);
                bson_destroy (&u);
            }
            bson_destroy (&opts);
            if (!ok)
                online_fail (j->on, err, &why, "queueing a write");
        }
        ok = ok && writes_flush (pass ? &repl : &save, err);
    }
    j->written += (int64_t) changed;
    /* Some changed in between: each is checked and redone alone. */
    at = 0;
    for (size_t i = 0; ok && repl.matched < (int64_t) changed && i < in->n; i++) {
        ssize_t r = result_of (in, i, out, &at);
        if (r >= 0 && !same_bytes (in, i, out, (size_t) r))
            ok = redo (ip, online_doc_bytes (in, i), in->docs[i].len, err);
    }
    return ok;
}

/* Counts what a dry run would change or write. */
static int64_t
would_write (const online_docs_t *in, const online_docs_t *out, bool in_place)
{
    size_t at = 0;
    int64_t n = 0;
    if (!in_place)
        return (int64_t) out->n;
    for (size_t i = 0; i < in->n; i++) {
        ssize_t r = result_of (in, i, out, &at);
        n += r >= 0 && !same_bytes (in, i, out, (size_t) r);
    }
    return n;
}

/* ---- a pass, a step, the plan ---- */

static bool
create_collection (online_t *on, const char *db, const char *coll, bson_error_t *err)
{
    mongoc_database_t *d = mongoc_client_get_database (on->client, db);
    bson_t *cmd = BCON_NEW ("create", BCON_UTF8 (coll));
    bson_error_t why;
    bool ok = mongoc_database_command_simple (d, cmd, NULL, NULL, &why) ||
              why.code == 48 /* NamespaceExists: made by an earlier attempt */ ||
              online_fail (on, err, &why, "creating a target collection");
    bson_destroy (cmd);
    mongoc_database_destroy (d);
    return ok;
}

static bool
run_pass (online_t *on, const rm_step_t *s, const online_pass_t *p, size_t pi, bson_error_t *err)
{
    const online_opts_t *o = on->o;
    online_job_t j;
    side_t sb;
    inplace_t ip;
    online_docs_t in, out;
    bson_t last = BSON_INITIALIZER;
    bool done = false, ok = true;
    int64_t t0 = mono_ms (), n = 0;
    const char *drive_ns;

    memset (&j, 0, sizeof j);
    memset (&sb, 0, sizeof sb);
    memset (&ip, 0, sizeof ip);
    j.on = on;
    j.s = s;
    j.p = p;
    j.index = pi;
    rm_step_inputs (s, j.in, 4);
    drive_ns = j.in[p->drive]->text;
    if (!o->dry_run)
        ok = online_checkpoint_read (on, s, pi, &last, &done, &j.seen, &j.written, err);
    if (ok && done) {
        if (!o->quiet)
            fprintf (stderr, "remodel: step %zu (%s) %s: done before\n", s->index, s->op,
                     drive_ns);
        bson_destroy (&last);
        return true;
    }
    online_docs_init (&in);
    online_docs_init (&out);
    online_docs_init (&ip.again);
    online_docs_init (&ip.again_out);
    j.drive = online_collection (on, j.in[p->drive]->db, online_name_now (on, j.in[p->drive]));
    if (p->partner >= 0)
        j.partner = online_collection (on, j.in[p->partner]->db, online_name_now (on, j.in[p->partner]));
    j.engine = rm_batchstep_new (s, NULL);
    sb.j = ip.j = &j;
    if (o->in_place) {
        char backup[400];
        snprintf (backup, sizeof backup, "backup.%s.%zu", on->name, s->index);
        ip.backup = online_collection (on, o->state_db, backup);
    } else {
        for (size_t k = 0; k < p->n_keep; k++) {
            char target[400];
            online_name_target (on, s, p->keep[k], target, sizeof target);
            sb.targets[k] = (writes_t){&j, online_collection (on, p->keep[k]->db, target), NULL,
                                       0, "writing results", 0};
        }
    }
    while (ok && (n = online_batch_read (&j, &last, &in, err)) > 0) {
        bson_iter_t it;
        j.seen += n;
        ok = online_batch_compute (&j, &in, &out, err);
        if (ok && o->dry_run)
            j.written += would_write (&in, &out, o->in_place);
        else if (ok && o->in_place)
            ok = inplace_write (&ip, &in, &out, err);
        else if (ok) {
            ok = side_write (&sb, &out, err);
            j.written += (int64_t) out.n;
        }
        if (ok && !o->dry_run)
            ok = online_checkpoint_write (on, s, pi, drive_ns,
                                          bson_iter_init_find (&it, &last, "last")
                                              ? bson_iter_value (&it) : NULL,
                                          j.seen, j.written, false, err);
        if (ok && !o->quiet && isatty (STDERR_FILENO))
            fprintf (stderr, "\rremodel: step %zu (%s) %s: %lld read, %lld written", s->index,
                     s->op, drive_ns, (long long) j.seen, (long long) j.written);
        if (o->max_rate > 0)
            sleep_ms (t0 + j.seen * 1000 / o->max_rate - mono_ms ());
        sleep_ms (o->pause_ms);
    }
    if (n < 0)
        ok = false;
    if (ok && !o->dry_run) {
        bson_iter_t it;
        ok = online_checkpoint_write (on, s, pi, drive_ns,
                                      bson_iter_init_find (&it, &last, "last")
                                          ? bson_iter_value (&it) : NULL,
                                      j.seen, j.written, true, err);
    }
    if (ok && !o->quiet)
        fprintf (stderr, "%sremodel: step %zu (%s) %s: %lld read, %lld %s\n",
                 j.seen && isatty (STDERR_FILENO) ? "\r" : "", s->index, s->op, drive_ns,
                 (long long) j.seen, (long long) j.written,
                 o->dry_run ? (o->in_place ? "would change" : "would write")
                            : (o->in_place ? "changed" : "written"));
    for (size_t k = 0; k < 4; k++)
        if (sb.targets[k].coll)
            mongoc_collection_destroy (sb.targets[k].coll);
    if (ip.backup)
        mongoc_collection_destroy (ip.backup);
    if (j.partner)
        mongoc_collection_destroy (j.partner);
    mongoc_collection_destroy (j.drive);
    rm_batchstep_destroy (j.engine);
    online_docs_destroy (&in);
    online_docs_destroy (&out);
    online_docs_destroy (&ip.again);
    online_docs_destroy (&ip.again_out);
    bson_destroy (&last);
    return ok;
}

/* The namespaces a step gives new contents side by side: what its passes
 * write, and what it empties. */
static size_t
step_targets (const rm_step_t *s, const online_pass_t *passes, size_t np, const rm_nsref_t **out)
{
    size_t n = 0, ne;
    const rm_nsref_t *emptied[4];
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < passes[i].n_keep; k++) {
            bool seen = false;
            for (size_t m = 0; m < n; m++)
                seen |= out[m] == passes[i].keep[k] || !strcmp (out[m]->text, passes[i].keep[k]->text);
            if (!seen)
                out[n++] = passes[i].keep[k];
        }
    ne = rm_step_empties (s, emptied, 4);
    for (size_t i = 0; i < ne; i++) {
        bool seen = false;
        for (size_t m = 0; m < n; m++)
            seen |= !strcmp (out[m]->text, emptied[i]->text);
        if (!seen)
            out[n++] = emptied[i];
    }
    return n;
}

static bool
run_step (online_t *on, const rm_step_t *s, bson_error_t *err)
{
    online_pass_t passes[2];
    const rm_nsref_t *targets[8];
    size_t np = online_step_passes (s, on->o->in_place, passes, err);
    size_t nt = on->o->in_place ? 0 : step_targets (s, passes, np, targets);
    const rm_nsref_t *in[4];
    bool ok = true;

    /* The indexes the joins need, before anything is written. */
    rm_step_inputs (s, in, 4);
    for (size_t i = 0; ok && i < np; i++) {
        const rm_nsref_t *pr;
        const char *now;
        if (passes[i].partner < 0)
            continue;
        pr = in[passes[i].partner];
        now = online_name_now (on, pr);
        /* A collection remodel made itself gets its index without asking. */
        ok = online_index_check (on, pr->db, now, passes[i].partner_key->text,
                                 on->o->create_indexes || strcmp (now, pr->coll) != 0, err);
        if (!ok && err->code == RM_ERR_USAGE)
            rm_error_prefix (err, "%s: step %zu (%s)", on->where, s->index, s->op);
    }
    for (size_t t = 0; ok && !on->o->dry_run && t < nt; t++) {
        char name[400];
        online_name_target (on, s, targets[t], name, sizeof name);
        ok = create_collection (on, targets[t]->db, name, err);
    }
    for (size_t i = 0; ok && i < np; i++)
        ok = run_pass (on, s, &passes[i], i, err);
    /* The next steps read this one's results. */
    for (size_t t = 0; ok && t < nt; t++) {
        char name[400];
        online_name_target (on, s, targets[t], name, sizeof name);
        online_name_move (on, targets[t], name);
    }
    return ok;
}

bool
online_run (online_t *on, bson_error_t *err)
{
    bool ok = true;
    /* Refused whole before anything is written. */
    for (size_t i = 0; i < on->plan.n; i++) {
        online_pass_t passes[2];
        if (!online_step_passes (&on->plan.steps[i], on->o->in_place, passes, err)) {
            rm_error_prefix (err, "%s", on->o->plan_path);
            return false;
        }
    }
    if (!on->o->dry_run)
        ok = online_lease_take (on, err) && online_plan_record (on, err);
    for (size_t i = 0; ok && i < on->plan.n; i++)
        ok = run_step (on, &on->plan.steps[i], err);
    if (!on->o->dry_run)
        online_lease_drop (on);
    online_names_destroy (on);
    return ok;
}
