/* online run: each step of the plan over its namespace on the server, in
 * batches in _id order, resumable. Only the steps that rewrite one document
 * at a time in place (set, unset, rename, version: remodel/docstep.h) run
 * online so far; a plan with any other step is refused before anything is
 * written.
 *
 * A batch: read up to --batch-size documents after the checkpoint's _id;
 * transform each with the core's rm_docstep_apply; save the originals of
 * those that change into the backup collection (first original kept:
 * $setOnInsert); replace each on condition that it is still the document
 * read (a filter on all its fields), so an application's write in between
 * is never overwritten with stale data: such a document is read again and
 * recomputed; then the checkpoint. Replaying a batch after a crash changes
 * nothing (the steps give the same document again), so nothing is lost or
 * done twice. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online.h"
#include "remodel/docstep.h"

/* A document read again because it changed under us is recomputed at most
 * this many times before the run stops naming it. */
#define RETRIES 5
/* Write commands carry at most this many statements: FerretDB 1.x (SQLite)
 * stops answering an update command of about a hundred (sixty is fine). */
#define WRITE_CHUNK 50

typedef struct {
    online_t *on;
    const rm_step_t *s;
    const rm_nsref_t *ns;
    rm_docstep_t *d;
    mongoc_collection_t *coll, *backup;
    int64_t seen, changed;
} stepjob_t;

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

/* {$setOnInsert: doc without _id}: the backup keeps the first original. */
static bson_t *
set_on_insert (const bson_t *doc)
{
    bson_t *u = bson_new (), inner;
    bson_iter_t it;
    BSON_APPEND_DOCUMENT_BEGIN (u, "$setOnInsert", &inner);
    bson_iter_init (&it, doc);
    while (bson_iter_next (&it))
        if (strcmp (bson_iter_key (&it), "_id") != 0)
            bson_append_iter (&inner, bson_iter_key (&it), -1, &it);
    bson_append_document_end (u, &inner);
    return u;
}

static bool
id_filter (const bson_t *doc, bson_t *out)
{
    bson_iter_t it;
    bson_init (out);
    return bson_iter_init_find (&it, doc, "_id") && bson_append_iter (out, "_id", 3, &it);
}

/* Applies the step to cur; *changed false when it gives cur back. */
static bool
transform (stepjob_t *j, const bson_t *cur, bson_t *out, bool *changed, bson_error_t *err)
{
    const uint8_t *o;
    size_t olen;
    if (!rm_docstep_apply (j->d, j->ns->text, bson_get_data (cur), cur->len, &o, &olen, err))
        return false;
    *changed = olen != cur->len || memcmp (o, bson_get_data (cur), olen) != 0;
    if (*changed && !bson_init_static (out, o, olen)) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: a step made a document libbson refuses",
                      j->ns->text);
        return false;
    }
    return true;
}

/* The one document whose conditional replace matched nothing: it changed
 * or went since it was read. Read it again and redo it. */
static bool
redo (stepjob_t *j, const bson_t *orig, const bson_t *want, bson_error_t *err)
{
    bson_t q;
    bson_error_t why;
    id_filter (orig, &q);
    for (int attempt = 0; attempt < RETRIES; attempt++) {
        mongoc_cursor_t *cur = mongoc_collection_find_with_opts (j->coll, &q, NULL, NULL);
        const bson_t *now;
        bson_t copy, out;
        bool changed, ok;
        bson_t reply;
        bson_iter_t it;

        if (!mongoc_cursor_next (cur, &now)) {
            bool failed = mongoc_cursor_error (cur, &why);
            mongoc_cursor_destroy (cur);
            bson_destroy (&q);
            return !failed || online_fail (j->on, err, &why, "reading a document again");
        }
        bson_copy_to (now, &copy);
        mongoc_cursor_destroy (cur);
        if (copy.len == want->len && !memcmp (bson_get_data (&copy), bson_get_data (want), want->len)) {
            bson_destroy (&copy);
            break; /* it was applied after all */
        }
        ok = transform (j, &copy, &out, &changed, err);
        if (ok && changed) {
            ok = mongoc_collection_replace_one (j->coll, &copy, &out, NULL, &reply, &why) ||
                 online_fail (j->on, err, &why, "replacing a document");
            if (ok && bson_iter_init_find (&it, &reply, "matchedCount") &&
                bson_iter_as_int64 (&it) == 1) {
                bson_destroy (&reply);
                bson_destroy (&copy);
                break;
            }
            bson_destroy (&reply);
        }
        bson_destroy (&copy);
        if (!ok) {
            bson_destroy (&q);
            return false;
        }
        if (!changed)
            break; /* the application already made it what the step would */
        if (attempt + 1 == RETRIES) {
            char *id = bson_as_relaxed_extended_json (&q, NULL);
            rm_error_set (err, RM_ERR_IO, "%s: %s: document %s keeps changing under the run "
                          "(%d attempts); stopping (the checkpoint stands)", j->on->where,
                          j->ns->text, id, RETRIES);
            bson_free (id);
            bson_destroy (&q);
            return false;
        }
    }
    bson_destroy (&q);
    return true;
}

/* One batch after last: returns the documents read (0: the end), -1. */
static int64_t
batch (stepjob_t *j, bson_t *last, bson_error_t *err)
{
    const online_opts_t *o = j->on->o;
    bson_t filter = BSON_INITIALIZER, sub, *opts;
    bson_iter_t lit;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bson_t **orig = NULL, **want = NULL;
    size_t n = 0, nc = 0, cap = 0;
    int64_t count = 0;
    bool ok = true;

    if (bson_iter_init_find (&lit, last, "last")) {
        BSON_APPEND_DOCUMENT_BEGIN (&filter, "_id", &sub);
        bson_append_iter (&sub, "$gt", 3, &lit);
        bson_append_document_end (&filter, &sub);
    }
    opts = BCON_NEW ("sort", "{", "_id", BCON_INT32 (1), "}", "limit", BCON_INT64 (o->batch_size));
    cur = mongoc_collection_find_with_opts (j->coll, &filter, opts, NULL);
    bson_destroy (opts);
    bson_destroy (&filter);
    while (ok && mongoc_cursor_next (cur, &doc)) {
        bson_t out;
        bool changed;
        count++;
        bson_reinit (last);
        {
            bson_iter_t id;
            if (bson_iter_init_find (&id, doc, "_id"))
                bson_append_iter (last, "last", 4, &id);
        }
        ok = transform (j, doc, &out, &changed, err);
        if (ok && changed) {
            if (nc == cap) {
                cap = cap ? cap * 2 : 64;
                orig = bson_realloc (orig, cap * sizeof *orig);
                want = bson_realloc (want, cap * sizeof *want);
            }
            orig[nc] = bson_copy (doc);
            want[nc] = bson_copy (&out);
            nc++;
        }
        n++;
    }
    if (ok && mongoc_cursor_error (cur, &why))
        ok = online_fail (j->on, err, &why, "reading a batch");
    mongoc_cursor_destroy (cur);

    if (ok && nc && !o->dry_run) {
        bson_t bopts = BSON_INITIALIZER, up = BSON_INITIALIZER;
        int64_t matched = 0;

        BSON_APPEND_BOOL (&bopts, "ordered", false);
        BSON_APPEND_BOOL (&up, "upsert", true);
        /* The originals first (a crash between the two keeps them), then
         * the documents, each part in commands of WRITE_CHUNK. */
        for (int pass = 0; ok && pass < 2; pass++)
            for (size_t from = 0; ok && from < nc; from += WRITE_CHUNK) {
                size_t to = from + WRITE_CHUNK < nc ? from + WRITE_CHUNK : nc;
                mongoc_bulk_operation_t *b = mongoc_collection_create_bulk_operation_with_opts (
                    pass ? j->coll : j->backup, &bopts);
                bson_t reply;
                bson_iter_t it;
                for (size_t i = from; ok && i < to; i++) {
                    if (pass) {
                        ok = mongoc_bulk_operation_replace_one_with_opts (b, orig[i], want[i], NULL,
                                                                          &why);
                    } else {
                        bson_t q, *u = set_on_insert (orig[i]);
                        id_filter (orig[i], &q);
                        ok = mongoc_bulk_operation_update_one_with_opts (b, &q, u, &up, &why);
                        bson_destroy (&q);
                        bson_destroy (u);
                    }
                }
                ok = ok && mongoc_bulk_operation_execute (b, &reply, &why);
                if (!ok)
                    online_fail (j->on, err, &why, pass ? "replacing documents"
                                                        : "saving the originals");
                if (ok && pass && bson_iter_init_find (&it, &reply, "nMatched"))
                    matched += bson_iter_as_int64 (&it);
                bson_destroy (&reply);
                mongoc_bulk_operation_destroy (b);
            }
        bson_destroy (&bopts);
        bson_destroy (&up);
        /* Some changed in between: each is checked and redone alone. */
        for (size_t i = 0; ok && matched < (int64_t) nc && i < nc; i++)
            ok = redo (j, orig[i], want[i], err);
    }
    j->changed += (int64_t) nc;
    j->seen += count;
    for (size_t i = 0; i < nc; i++) {
        bson_destroy (orig[i]);
        bson_destroy (want[i]);
    }
    bson_free (orig);
    bson_free (want);
    return ok ? count : -1;
}

static bool
run_step (online_t *on, const rm_step_t *s, bson_error_t *err)
{
    const online_opts_t *o = on->o;
    stepjob_t j;
    const rm_nsref_t *ns[4];
    bson_t last = BSON_INITIALIZER;
    bool done = false, ok;
    char backup[400];
    int64_t t0 = mono_ms (), n;

    memset (&j, 0, sizeof j);
    j.on = on;
    j.s = s;
    rm_step_inputs (s, ns, 4);
    j.ns = ns[0];
    ok = (j.d = rm_docstep_new (s, err)) != NULL &&
         (o->dry_run || online_checkpoint_read (on, s, &last, &done, &j.seen, &j.changed, err));
    if (ok && done) {
        if (!o->quiet)
            fprintf (stderr, "remodel: step %zu (%s): done before\n", s->index, s->op);
        goto out;
    }
    j.coll = online_collection (on, ns[0]->db, ns[0]->coll);
    snprintf (backup, sizeof backup, "backup.%s.%zu", on->name, s->index);
    j.backup = online_collection (on, o->state_db, backup);
    while (ok && (n = batch (&j, &last, err)) > 0) {
        bson_iter_t it;
        if (!o->dry_run)
            ok = online_checkpoint_write (on, s, bson_iter_init_find (&it, &last, "last")
                                                     ? bson_iter_value (&it) : NULL,
                                          j.seen, j.changed, false, err);
        if (!o->quiet && isatty (STDERR_FILENO))
            fprintf (stderr, "\rremodel: step %zu (%s) %s: %lld read, %lld changed", s->index,
                     s->op, ns[0]->text, (long long) j.seen, (long long) j.changed);
        if (o->max_rate > 0) {
            int64_t due = t0 + j.seen * 1000 / o->max_rate - mono_ms ();
            sleep_ms (due);
        }
        sleep_ms (o->pause_ms);
    }
    if (n < 0)
        ok = false;
    if (ok && !o->dry_run) {
        bson_iter_t it;
        ok = online_checkpoint_write (on, s, bson_iter_init_find (&it, &last, "last")
                                                 ? bson_iter_value (&it) : NULL,
                                      j.seen, j.changed, true, err);
    }
    if (!o->quiet)
        fprintf (stderr, "%sremodel: step %zu (%s) %s: %lld read, %lld %s\n",
                 j.seen && isatty (STDERR_FILENO) ? "\r" : "", s->index, s->op, ns[0]->text,
                 (long long) j.seen,
                 (long long) j.changed, o->dry_run ? "would change" : "changed");
out:
    if (j.coll)
        mongoc_collection_destroy (j.coll);
    if (j.backup)
        mongoc_collection_destroy (j.backup);
    rm_docstep_destroy (j.d);
    bson_destroy (&last);
    return ok;
}

bool
online_run (online_t *on, bson_error_t *err)
{
    bool ok = true;
    /* Refused whole before anything is written. */
    for (size_t i = 0; i < on->plan.n; i++)
        if (!rm_docstep_in_place (&on->plan.steps[i])) {
            rm_error_set (err, RM_ERR_UNSUPPORTED,
                          "%s: step %zu (%s): the online mode runs set, unset, rename and "
                          "version so far; run this plan offline (remodel run)",
                          on->o->plan_path, on->plan.steps[i].index, on->plan.steps[i].op);
            return false;
        }
    if (!on->o->dry_run)
        ok = online_lease_take (on, err) && online_plan_record (on, err);
    for (size_t i = 0; ok && i < on->plan.n; i++)
        ok = run_step (on, &on->plan.steps[i], err);
    if (!on->o->dry_run)
        online_lease_drop (on);
    return ok;
}
