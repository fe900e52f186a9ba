/* Sync from the change log for the passes whose results do not name the
 * document that made them, yet can be found again (rm_pass_t.followed):
 *
 * By series (bucketize). A bucket is made from every reading of its
 * series, so the unit recomputed is a series, not a reading. A changed
 * reading affects the series of its meta value now (the reading read
 * again) and the one it was in (the bucket of the target holding its
 * _id, as a measurement keeps its reading's _id); a deleted one, that
 * second only. Each affected series is read whole and computed as a run's
 * batch computes it; buckets that differ are rewritten (their _ids hash
 * the series, window and index, so a bucket unchanged compares equal),
 * and the series' buckets of the target not made again are removed,
 * found by the meta field each holds at its top. A reading onInvalid set
 * aside is its own result there: written or removed by its _id.
 * The series are noted in the journal (online_made.c) before anything
 * is written: once a series' buckets are rewritten, the target no longer
 * says which series a deleted reading was in, and a sync killed then
 * would, run again, not recompute it.
 *
 * By what the drivers hold (unbucketize). A bucket's readings keep the
 * measurements' _ids, which do not name the bucket, and an update leaves
 * no trace of what the bucket held before: so whenever a bucket is read
 * while the plan follows a log (run and sync), the _ids it holds go to
 * the key map (online_keys.c). A changed bucket is read again and its
 * readings computed and compared; a reading it held and no longer makes
 * is removed, unless a bucket of the source holds it now, or the
 * readings onInvalid set aside do (the source is the truth: the map only
 * ever grows).
 *
 * What either rewrites or removes is noted for the steps after, as
 * online_incr.c does: in made, and in the journal before writing where a
 * later step reads the target. Memory holds the changed _ids and the
 * affected series (as the change list holds _ids), and a batch. */
#include <stdio.h>
#include <string.h>

#include "online_changes.h"
#include "remodel/docpath.h"

static const uint8_t null_doc[] = {8, 0, 0, 0, 10, 0, 0, 0};

rm_path_t *
online_held_path (const rm_pass_t *p, rm_path_t *path)
{
    char text[300];
    bson_error_t err;
    if (!p->holds || (size_t) snprintf (text, sizeof text, "%s._id", p->holds) >= sizeof text)
        return NULL;
    return rm_path_parse (path, text, &err) ? path : NULL;
}


/* The series a document is in: its field's value, null when absent. */
static void
series_of (const uint8_t *doc, uint32_t len, const char *field, bson_iter_t *v)
{
    if (!rm_doc_field (doc, len, field, strlen (field), v)) {
        bson_iter_init_from_data (v, null_doc, sizeof null_doc);
        bson_iter_next (v);
    }
}

/* The _ids of out's results for keep k into v; their hashes into set. */
static void
made_ids (const online_docs_t *out, int k, online_values_t *v, online_idset_t *set)
{
    bson_iter_t id;
    for (size_t i = 0; i < out->n; i++)
        if (out->docs[i].keep == k &&
            rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id)) {
            if (v)
                online_values_add (v, &id);
            if (set)
                online_idset_add (set, online_value_hash (&id));
        }
}

/* Removes from target k the documents of _ids there (an array) whose
 * hash is in neither made nor kept; each noted for the steps after. */
static bool
remove_unmade (online_job_t *j, online_passrun_t *pr, size_t k, const bson_t *there,
               const online_idset_t *made, const online_idset_t *kept, online_incr_stats_t *st,
               bson_error_t *err)
{
    bool write = pr->mode == ONLINE_SYNC && !j->on->run->o->dry_run, ok = true;
    bson_iter_t it;
    if (!bson_iter_init (&it, there))
        return true;
    while (ok && bson_iter_next (&it)) {
        uint64_t h = online_value_hash (&it);
        if ((made && online_idset_has (made, h)) || (kept && online_idset_has (kept, h)))
            continue;
        online_diff_note (j->on, j->p->keep[k]->text, &it);
        if (write) {
            ok = online_writes_delete (&pr->targets[k], &it, err);
            if (pr->changed)
                online_changes_add (pr->changed, j->p->keep[k]->text, &it);
        }
        st->removed++;
    }
    return ok && online_writes_flush (&pr->targets[k], err);
}

typedef struct {
    online_changes_t *aff;
    const char *field;
} series_note_t;

static void
note_series (void *ctx, const bson_t *doc)
{
    series_note_t *n = ctx;
    bson_iter_t v;
    series_of (bson_get_data (doc), doc->len, n->field, &v);
    online_changes_add (n->aff, "series", &v);
}

/* Into aff's "series": the series the changed readings d are in now,
 * and were in (the buckets holding them). */
static bool
affected_series (online_job_t *j, online_passrun_t *pr, const online_idlist_t *d,
                 online_changes_t *aff, online_incr_stats_t *st, bson_error_t *err)
{
    const char *meta = j->p->series;
    char held[300];
    bson_t *opts = BCON_NEW ("projection", "{", meta, BCON_INT32 (1), "}");
    series_note_t nt = {aff, meta};
    online_docs_t in;
    online_values_t ids;
    bool ok = true;

    snprintf (held, sizeof held, "%s._id", j->p->held_in);
    online_docs_init (&in);
    online_values_init (&ids);
    for (uint32_t at = 0; ok && d && at < d->n;) {
        int64_t got;
        online_idlist_chunk (d, &at, j->batch_size, &ids);
        got = online_batch_read_ids (j, &ids.arr, &in, err);
        ok = got >= 0;
        st->read += got > 0 ? got : 0;
        for (size_t i = 0; ok && i < in.n; i++) {
            bson_iter_t v;
            series_of (online_doc_bytes (&in, i), in.docs[i].len, meta, &v);
            online_changes_add (aff, "series", &v);
        }
        ok = ok && online_batch_docs_where (j, pr->targets[0].coll, held, &ids.arr, opts,
                                            note_series, &nt, &st->read, err);
    }
    online_docs_destroy (&in);
    bson_destroy (&ids.arr);
    bson_destroy (opts);
    return ok;
}

/* bucketize: see the head of the file. */
static bool
series_pass (online_job_t *j, online_passrun_t *pr, const online_follow_req_t *rq,
             bson_error_t *err)
{
    online_changes_t *ch = rq->ch;
    const online_changes_t *noted = rq->noted;
    online_incr_stats_t *st = rq->st;
    bool ahead = rq->ahead;
    const rm_pass_t *p = j->p;
    const online_idlist_t *d = online_changes_list (ch, j->in[p->drive]->text, false);
    const online_idlist_t *was, *series;
    char journal[64];
    online_changes_t aff;
    online_docs_t in, out;
    online_idset_t aside;  /* the readings set aside this sync made again */
    bson_t none = BSON_INITIALIZER;
    online_values_t vals, ids;
    int64_t per = 1;
    bool ok = true;

    /* No namespace lacks a dot: the journal's name for this step's series. */
    snprintf (journal, sizeof journal, "series of step %zu", j->s->index);
    online_changes_init (&aff);
    online_docs_init (&in);
    online_docs_init (&out);
    memset (&aside, 0, sizeof aside);
    online_values_init (&vals);
    online_values_init (&ids);
    ok = affected_series (j, pr, d, &aff, st, err);
    was = noted ? online_changes_list ((online_changes_t *) noted, journal, false) : NULL;
    for (uint32_t i = 0; was && i < was->n; i++) {
        bson_iter_t v;
        online_idlist_get (was, i, &v);
        online_changes_add (&aff, "series", &v);
    }
    series = online_changes_list (&aff, "series", false);
    if (ok && series && pr->mode == ONLINE_SYNC && !j->on->run->o->dry_run)
        for (uint32_t at = 0; ok && at < series->n;) {
            online_idlist_chunk (series, &at, 10000, &vals);
            ok = online_made_note (j->on, journal, &vals.arr, err);
        }

    for (uint32_t at = 0; ok && series && at < series->n;) {
        uint32_t n = online_idlist_chunk (series, &at, per, &vals);
        online_idset_t made;
        int64_t got;

        memset (&made, 0, sizeof made);
        st->recomputed += n;
        got = online_batch_read_series (j, &vals.arr, &in, err);
        ok = got >= 0;
        st->read += got > 0 ? got : 0;
        if (ok && in.n)
            ok = online_batch_compute (j, &in, &out, err);
        else
            online_docs_reset (&out);
        if (ok && out.n && pr->mode == ONLINE_SYNC)
            ok = online_check_unique (j, pr, &out, err);
        /* The buckets these series have and make, the readings set aside
         * they make: all a later step may see rewritten or removed. */
        bson_reinit (&ids.arr);
        ids.n = 0;
        ok = ok && online_batch_ids_where (j, pr->targets[0].coll, p->series, &vals.arr,
                                           online_values_add, &ids, err);
        st->read += ids.n;
        if (ok && ahead) {
            online_values_t note;
            online_values_init (&note);
            made_ids (&out, 0, &note, NULL);
            ok = online_made_note (j->on, p->keep[0]->text, &note.arr, err) &&
                 online_made_note (j->on, p->keep[0]->text, &ids.arr, err);
            bson_reinit (&note.arr);
            note.n = 0;
            made_ids (&out, 1, &note, NULL);
            ok = ok && (p->n_keep < 2 ||
                        online_made_note (j->on, p->keep[1]->text, &note.arr, err));
            bson_destroy (&note.arr);
        }
        if (ok && out.n) {
            int64_t before = pr->differ;
            ok = online_check_side (j, pr, &out, &none, NULL, err);
            st->rewritten += pr->differ - before;
        }
        made_ids (&out, 0, NULL, &made);
        made_ids (&out, 1, NULL, &aside);
        ok = ok && remove_unmade (j, pr, 0, &ids.arr, &made, NULL, st, err);
        online_idset_destroy (&made);
        /* About a batch of readings next time, from these series'. */
        per = got > 0 ? j->batch_size * n / got : (int64_t) n * 2;
        if (per < 1)
            per = 1;
    }

    /* A changed reading's copy onInvalid set aside: removed where no
     * series made it again. */
    for (uint32_t at = 0; ok && p->n_keep > 1 && d && at < d->n;) {
        online_idlist_chunk (d, &at, j->batch_size, &vals);
        bson_reinit (&ids.arr);
        ids.n = 0;
        ok = online_batch_ids_where (j, pr->targets[1].coll, "_id", &vals.arr, online_values_add,
                                     &ids, err);
        if (ok && ahead && ids.n)
            ok = online_made_note (j->on, p->keep[1]->text, &ids.arr, err);
        ok = ok && remove_unmade (j, pr, 1, &ids.arr, &aside, NULL, st, err);
    }
    online_idset_destroy (&aside);
    online_changes_destroy (&aff);
    online_docs_destroy (&in);
    online_docs_destroy (&out);
    bson_destroy (&vals.arr);
    bson_destroy (&ids.arr);
    return ok;
}

typedef struct {
    const rm_path_t *path;
    online_idset_t *kept;
} held_note_t;

static void
note_held (void *ctx, const bson_t *doc)
{
    held_note_t *h = ctx;
    bson_t arr = BSON_INITIALIZER;
    bson_iter_t it;
    uint32_t n = 0;
    online_keys_values (bson_get_data (doc), doc->len, h->path, &arr, &n);
    if (bson_iter_init (&it, &arr))
        while (bson_iter_next (&it))
            online_idset_add (h->kept, online_value_hash (&it));
    bson_destroy (&arr);
}

static void
note_kept (void *ctx, const bson_iter_t *id)
{
    online_idset_add (ctx, online_value_hash (id));
}

/* unbucketize: see the head of the file. Its buckets (keys: the map of
 * what they held), or the readings set aside (keys NULL: each its own
 * result); either way a reading is kept while the buckets (holding it at
 * path) or the readings set aside (aside, NULL: none) have it. */
static bool
held_pass (online_job_t *j, online_passrun_t *pr, online_keys_t *keys, const rm_path_t *path,
           mongoc_collection_t *buckets, mongoc_collection_t *aside,
           const online_follow_req_t *rq, bson_error_t *err)
{
    online_changes_t *ch = rq->ch;
    online_incr_stats_t *st = rq->st;
    bool ahead = rq->ahead;
    const rm_pass_t *p = j->p;
    const online_idlist_t *d = online_changes_list (ch, j->in[p->drive]->text, false);
    online_docs_t in, out;
    bson_t none = BSON_INITIALIZER;
    online_values_t ids, old, there;
    bool ok = true;

    online_docs_init (&in);
    online_docs_init (&out);
    online_values_init (&ids);
    online_values_init (&old);
    online_values_init (&there);
    for (uint32_t at = 0; ok && d && at < d->n;) {
        uint32_t n = online_idlist_chunk (d, &at, j->batch_size, &ids);
        online_idset_t made, kept;
        int64_t got;

        memset (&made, 0, sizeof made);
        memset (&kept, 0, sizeof kept);
        bson_reinit (&old.arr);
        old.n = 0;
        /* What these buckets held when remodel last read them, before
         * their new contents are noted by the compute below; a reading
         * set aside made itself. */
        if (keys) {
            ok = online_keys_old (keys, &ids.arr, &old.arr, &old.n, err);
        } else {
            bson_concat (&old.arr, &ids.arr);
            old.n = ids.n;
        }
        st->recomputed += n;
        got = ok ? online_batch_read_ids (j, &ids.arr, &in, err) : -1;
        ok = got >= 0;
        st->read += got > 0 ? got : 0;
        /* verify notes nothing in the map */
        j->keys = pr->mode == ONLINE_SYNC ? keys : NULL;
        if (ok && in.n)
            ok = online_batch_compute (j, &in, &out, err);
        else
            online_docs_reset (&out);
        j->keys = NULL;
        if (ok && out.n && pr->mode == ONLINE_SYNC)
            ok = online_check_unique (j, pr, &out, err);
        if (ok && ahead) {
            online_values_t note;
            online_values_init (&note);
            made_ids (&out, 0, &note, NULL);
            ok = online_made_note (j->on, p->keep[0]->text, &note.arr, err) &&
                 online_made_note (j->on, p->keep[0]->text, &old.arr, err);
            bson_destroy (&note.arr);
        }
        if (ok && out.n) {
            int64_t before = pr->differ;
            ok = online_check_side (j, pr, &out, &none, NULL, err);
            st->rewritten += pr->differ - before;
        }
        made_ids (&out, 0, NULL, &made);
        /* The readings held before and not made now that the target has,
         * kept where the source still holds them. */
        bson_reinit (&there.arr);
        there.n = 0;
        if (ok && old.n)
            ok = online_batch_ids_where (j, pr->targets[0].coll, "_id", &old.arr,
                                         online_values_add, &there, err);
        if (ok && there.n) {
            held_note_t h = {path, &kept};
            ok = online_batch_docs_where (j, buckets, path->text, &there.arr, NULL, note_held, &h,
                                          &st->read, err) &&
                 (!aside || online_batch_ids_where (j, aside, "_id", &there.arr, note_kept, &kept,
                                                    err));
        }
        ok = ok && remove_unmade (j, pr, 0, &there.arr, &made, &kept, st, err);
        online_idset_destroy (&made);
        online_idset_destroy (&kept);
    }
    online_docs_destroy (&in);
    online_docs_destroy (&out);
    bson_destroy (&ids.arr);
    bson_destroy (&old.arr);
    bson_destroy (&there.arr);
    return ok;
}

/* What both rows share around their pass: the job over its driving
 * namespace and the engine, the writes to its targets; then freed. */
static void
follow_open (online_job_t *j, online_passrun_t *pr, online_t *on, const online_follow_req_t *rq)
{
    const rm_step_t *s = rq->s;
    const rm_pass_t *p = rq->p;
    memset (j, 0, sizeof *j);
    memset (pr, 0, sizeof *pr);
    online_docs_init (&pr->found);
    j->on = on;
    j->s = s;
    j->p = p;
    j->index = rq->pi;
    j->batch_size = on->run->o->batch_size;
    rm_step_inputs (s, j->in, 4);
    j->drive =
        online_collection (on, j->in[p->drive]->db, rm_name_now (&on->run->names, j->in[p->drive]));
    j->engine = online_engine_new (on, s);
    pr->mode = rq->mode;
    pr->changed = rq->made;
    /* No range reports: the count is said once, at the end. */
    pr->reported = ONLINE_REPORT_MAX + 1;
    for (size_t k = 0; k < p->n_keep; k++) {
        char target[400];
        rm_name_target (&on->run->names, s, p->keep[k], target, sizeof target);
        online_writes_init (&pr->targets[k], j, online_collection (on, p->keep[k]->db, target),
                            "writing results");
    }
}

static void
follow_close (online_job_t *j, online_passrun_t *pr)
{
    for (size_t k = 0; k < j->p->n_keep; k++)
        mongoc_collection_destroy (pr->targets[k].coll);
    mongoc_collection_destroy (j->drive);
    rm_batchstep_destroy (j->engine);
    online_docs_destroy (&pr->found);
}

/* By series: see the head of the file. */
bool
online_follow_series (online_t *on, const online_follow_req_t *rq, bson_error_t *err)
{
    online_job_t j;
    online_passrun_t pr;
    bool ok;
    follow_open (&j, &pr, on, rq);
    ok = series_pass (&j, &pr, rq, err);
    follow_close (&j, &pr);
    return ok;
}

/* By what the drivers hold: see the head of the file. */
bool
online_follow_held (online_t *on, const online_follow_req_t *rq, bson_error_t *err)
{
    const rm_step_t *s = rq->s;
    online_job_t j;
    online_passrun_t pr;
    online_keys_t *keys = NULL;
    const online_step_t *os = online_step (on, s, false);
    const rm_pass_t *all = os->passes;
    rm_path_t path;
    size_t np;
    bool ok;

    memset (&path, 0, sizeof path);
    follow_open (&j, &pr, on, rq);
    /* The buckets are the first pass's drivers, the readings set aside
     * the second's. */
    np = os->np;
    if (!online_step_runs (os, err) || !online_held_path (&all[0], &path)) {
        ok = false;
        if (np)
            rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: %s._id is not a path", on->run->where,
                          all[0].holds);
    } else {
        const rm_nsref_t *b = j.in[all[0].drive], *a = np > 1 ? j.in[all[1].drive] : NULL;
        mongoc_collection_t *buckets = online_collection (on, b->db, rm_name_now (&on->run->names, b));
        mongoc_collection_t *aside =
            a ? online_collection (on, a->db, rm_name_now (&on->run->names, a)) : NULL;
        if (rq->p->holds)
            keys = online_keys_new (on, s, rq->pi, &path);
        ok = held_pass (&j, &pr, keys, &path, buckets, aside, rq, err);
        mongoc_collection_destroy (buckets);
        if (aside)
            mongoc_collection_destroy (aside);
    }
    online_keys_destroy (keys);
    rm_path_destroy (&path);
    follow_close (&j, &pr);
    return ok;
}
