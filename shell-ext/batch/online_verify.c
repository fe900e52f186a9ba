/* Checking results against what the sources make of them (online_batch.h):
 * verify and sync compare each batch's results with the targets' documents
 * of the same _ids, then look for documents no range makes; run checks
 * that no two results of a target share an _id. */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"
#include "remodel/value.h"

/* Reports a range that differs (the first few, then a count at the end). */

void
online_report_range (online_job_t *j, online_passrun_t *pr, const bson_t *before, int64_t n, const char *what)
{
    bson_iter_t it;
    char *from = NULL;
    int k = pr->reported_pass ? __atomic_fetch_add (pr->reported_pass, 1, __ATOMIC_RELAXED)
                              : pr->reported++;
    if (k >= ONLINE_REPORT_MAX)
        return;
    if (bson_iter_init_find (&it, before, "last")) {
        bson_t tmp = BSON_INITIALIZER;
        bson_append_iter (&tmp, "_id", 3, &it);
        from = bson_as_relaxed_extended_json (&tmp, NULL);
        bson_destroy (&tmp);
    }
    /* A verify's finding is its output, --quiet or not; a sync's repair a note. */
    online_say (j->on, pr->mode == ONLINE_SYNC ? ONLINE_SAY_NOTE : ONLINE_SAY_WARN,
                "%s: step %zu (%s) %s: the range after %s: %lld %s",
                pr->mode == ONLINE_SYNC ? "sync" : "verify", j->s->index, j->s->op,
                j->in[j->p->drive]->text, from ? from : "the start", (long long) n, what);
    bson_free (from);
}

/* A sync's orphan (online_orphans_t): noted, counted and removed. */
typedef struct {
    online_job_t *j;
    online_passrun_t *pr;
    size_t k;
} gone_ctx_t;

static bool
gone_one (void *ctx, const bson_iter_t *id, bson_error_t *err)
{
    gone_ctx_t *g = ctx;
    online_diff_note (g->j->on, g->j->p->keep[g->k]->text, id);
    __atomic_fetch_add (&g->pr->orphans[g->k]->removed, 1, __ATOMIC_RELAXED);
    return online_writes_delete (&g->pr->targets[g->k], id, err);
}

bool
online_check_side_end (online_job_t *j, online_passrun_t *pr, bson_error_t *err)
{
    bool ok = true;
    for (size_t k = 0; ok && k < 4; k++) {
        gone_ctx_t g = {j, pr, k};
        online_merge_gone_t gone = {gone_one, &g};
        if (pr->orphans[k])
            ok = online_merge_rest (j, k, pr->orphans[k], &gone, err);
        /* The range's rewrites held (online_writes_t.hold) and its
         * orphans' deletes: one delete and one insert command. */
        if (ok && pr->targets[k].coll)
            ok = online_writes_release (&pr->targets[k], err);
    }
    return ok;
}

/* Verify or sync one batch side by side: its results against the
 * targets' documents of the same _ids, read beside a range's drivers
 * (online_merge.c) or by those _ids. */
bool
online_check_side (online_job_t *j, online_passrun_t *pr, const online_docs_t *out, const bson_t *before,
                   const online_docs_t *in, bson_error_t *err)
{
    int64_t differ = 0;
    /* sync: the results that differ, rewritten together after the check */
    bool rewrite = pr->mode == ONLINE_SYNC && !j->on->run->o->dry_run;
    size_t *redo = rewrite ? bson_malloc ((out->n + 1) * sizeof *redo) : NULL;
    for (size_t k = 0; k < j->p->n_keep; k++) {
        online_writes_t *w = &pr->targets[k];
        const online_ops_t *ops = online_ops (j->on);
        online_fold_t *fold;
        bson_t arr = BSON_INITIALIZER;
        online_cursor_t *cur;
        const bson_t *doc;
        bson_error_t why;
        uint32_t n = 0;
        size_t at = 0, nr = 0;
        bool ok = true;

        online_docs_reset (&pr->found);
        for (size_t i = 0; ok && i < out->n; i++) {
            bson_iter_t id;
            char key[16];
            const char *kp;
            if (out->docs[i].keep != (int) k ||
                !rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id))
                continue;
            size_t kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_iter (&arr, kp, (int) kl, &id);
            if (pr->sets[k])
                ok = online_idset_note (pr->sets[k], online_id_hash (online_doc_bytes (out, i),
                                                                     out->docs[i].len), err);
        }
        if (n == 0) {
            bson_destroy (&arr);
            continue;
        }
        /* finalize's verify without a change log: each result read here
         * also goes into its digest, which the switch's mark would
         * otherwise read the results again for (online_blocked.c). */
        fold = pr->mode == ONLINE_VERIFY
                   ? online_blocked_fold (j->on, j->p->keep[k]->db,
                                          mongoc_collection_get_name (w->coll))
                   : NULL;
        /* A range's results: the target read beside its drivers
         * (online_merge.c). Else by their _ids: results with _ids of
         * their own (an extract's children, a bucketize's buckets) are
         * in no order of their drivers', and a change log's drivers are
         * no range. */
        if (ok && online_merge_fits (j, k, in)) {
            gone_ctx_t g = {j, pr, k};
            online_merge_gone_t gone = {gone_one, &g};
            ok = online_merge_read (j, k, w->coll, before, in, out, &pr->found, fold,
                                    pr->orphans[k] ? &gone : NULL, err);
        } else if (ok) {
            cur = ops->keys (j->on, w->coll, "_id", &arr, NULL);
            while (ops->next (cur, &doc)) {
                online_docs_add (&pr->found, bson_get_data (doc), doc->len, (int) k);
                if (fold) {
                    fold->docs++;
                    fold->sum += rm_crc64_update (0, bson_get_data (doc), doc->len);
                }
            }
            if (!ops->end (cur, &why))
                ok = online_fail (j->on, err, &why, "reading a target");
        }
        bson_destroy (&arr);
        for (size_t i = 0; ok && i < out->n; i++) {
            ssize_t r;
            if (out->docs[i].keep != (int) k)
                continue;
            r = online_result_of (out, i, &pr->found, &at);
            if (r >= 0 && online_same_doc (out, i, &pr->found, (size_t) r))
                continue;
            differ++;
            if (j->on->diffs) {
                bson_iter_t id;
                if (rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id))
                    online_diff_note (j->on, j->p->keep[k]->text, &id);
            }
            if (rewrite)
                redo[nr++] = i;
            if (rewrite && pr->changed) {
                bson_iter_t id;
                if (rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id))
                    online_changes_add (pr->changed, j->p->keep[k]->text, &id);
            }
        }
        if (!ok || (nr && !online_side_rewrite (w, out, redo, nr, err))) {
            bson_free (redo);
            return false;
        }
    }
    bson_free (redo);
    if (differ)
        online_report_range (j, pr, before, differ, "results missing or different in the target");
    pr->differ += differ;
    return true;
}

void
online_doc_text (const uint8_t *doc, uint32_t len, char *buf, size_t cap)
{
    bson_t b;
    char *json = bson_init_static (&b, doc, len) ? bson_as_relaxed_extended_json (&b, NULL) : NULL;
    snprintf (buf, cap, "%s", json ? json : "?");
    if (json && strlen (json) >= cap && cap > 4)
        strcpy (buf + cap - 4, "...");
    bson_free (json);
}

/* Run, side by side: two results for one target with one _id would
 * overwrite each other. Checked before a batch is written, against the
 * step's results so far and within the batch: an error naming both. */
bool
online_check_unique (online_job_t *j, online_passrun_t *pr, const online_docs_t *out, bson_error_t *err)
{
    online_idset_t batch;
    bool ok = true;

    memset (&batch, 0, sizeof batch);
    for (size_t i = 0; ok && i < out->n; i++) {
        int k = out->docs[i].keep;
        const uint8_t *doc = online_doc_bytes (out, i);
        uint64_t h = online_id_hash (doc, out->docs[i].len);
        char a[240], b[240] = "";
        bool dup = false;

        if (!online_idset_add (&batch, h ^ ((uint64_t) k * 0x9e3779b97f4a7c15ULL)))
            for (size_t e = 0; !dup && e < i; e++)
                if (out->docs[e].keep == k &&
                    online_same_id (online_doc_bytes (out, e), out->docs[e].len, doc, out->docs[i].len)) {
                    dup = true;
                    online_doc_text (online_doc_bytes (out, e), out->docs[e].len, b, sizeof b);
                }
        /* Across batches, only where a set is kept: a pass whose results
         * carry their driver's _id cannot make one twice. */
        if (!dup && pr->sets[k] && online_idset_has (pr->sets[k], h)) {
            /* Confirmed by the target's document (a hash may collide). */
            const online_ops_t *ops = online_ops (j->on);
            bson_t q;
            online_cursor_t *cur;
            const bson_t *found;
            online_id_filter (doc, out->docs[i].len, &q);
            cur = ops->find (j->on, pr->targets[k].coll, &q, NULL);
            if (ops->next (cur, &found)) {
                dup = true;
                online_doc_text (bson_get_data (found), found->len, b, sizeof b);
            }
            ops->end (cur, NULL);
            bson_destroy (&q);
        }
        if (dup) {
            online_doc_text (doc, out->docs[i].len, a, sizeof a);
            rm_error_set (err, RM_ERR_FORMAT, "%s: step %zu (%s): two results for %s with one _id "
                          "(%s and %s): stopping before either overwrites the other",
                          j->on->run->where, j->s->index, j->s->op, j->p->keep[k]->text, b, a);
            ok = false;
        }
    }
    online_idset_destroy (&batch);
    return ok;
}

/* A target's _ids sorted by their hash (online_idset.c's order), each
 * with its value, for the sets gone to disk. */
static rm_sorter_t *
target_by_hash (online_t *on, mongoc_collection_t *c, bson_error_t *err)
{
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    bson_t empty = BSON_INITIALIZER;
    online_cursor_t *cur = ops->find (on, c, &empty, opts);
    rm_sorter_t *t = rm_sorter_new (on->run->o->memory / 2, on->run->o->tmpdir, NULL, NULL);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    while (ok && ops->next (cur, &doc)) {
        uint8_t key[8];
        online_hash_key (online_id_hash (bson_get_data (doc), doc->len), key);
        ok = rm_sorter_add (t, key, sizeof key, bson_get_data (doc), doc->len, err);
    }
    if (!ops->end (cur, &why) && ok)
        ok = online_fail (on, err, &why, "reading a target");
    ok = ok && rm_sorter_finish (t, err);
    bson_destroy (opts);
    if (!ok) {
        rm_sorter_destroy (t);
        return NULL;
    }
    return t;
}

static uint64_t
key_hash (const uint8_t *key)
{
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
        h = h << 8 | key[i];
    return h;
}

bool
online_check_dups (online_t *on, const rm_step_t *s, const rm_nsref_t *ref, online_idset_t *set,
                   bson_error_t *err)
{
    uint64_t h, prev = 0, dup = 0;
    int r;
    char name[400];
    mongoc_collection_t *c;
    rm_sorter_t *t;
    const uint8_t *key, *val;
    size_t klen, vlen;

    if (!online_idset_finish (set, err))
        return false;
    while ((r = online_idset_next (set, &h, err)) == 1 && !dup)
        if (h == prev)
            dup = h;
        else
            prev = h;
    if (r < 0)
        return false;
    if (!dup)
        return true;
    /* Named by the target's document of that hash. */
    rm_name_target (&on->run->names, s, ref, name, sizeof name);
    c = online_collection (on, ref->db, name);
    t = target_by_hash (on, c, err);
    mongoc_collection_destroy (c);
    if (!t)
        return false;
    while ((r = rm_sorter_next (t, &key, &klen, &val, &vlen, err)) == 1 && key_hash (key) < dup)
        ;
    if (r >= 0) {
        char text[240] = "?";
        if (r == 1 && key_hash (key) == dup)
            online_doc_text (val, (uint32_t) vlen, text, sizeof text);
        rm_error_set (err, RM_ERR_FORMAT, "%s: step %zu (%s): two results for %s with one _id "
                      "(%s), found at the end of the step (past --memory, the results' _ids "
                      "are checked on disk): the later has replaced the earlier in %s.%s; the "
                      "sources are untouched", on->run->where, s->index, s->op, ref->text, text,
                      ref->db, name);
    }
    rm_sorter_destroy (t);
    return false;
}

/* check_extras for a set gone to disk: the target's _ids merged with it
 * in hash order. */
static bool
extras_on_disk (online_t *on, mongoc_collection_t *c, const char *ns, online_idset_t *set,
                online_writes_t *del, int64_t *extra, bson_error_t *err)
{
    rm_sorter_t *t = online_idset_finish (set, err) ? target_by_hash (on, c, err) : NULL;
    const uint8_t *key, *val;
    size_t klen, vlen;
    uint64_t h = 0;
    int r = 0, rs = 1;
    bool ok = t != NULL;

    if (ok)
        rs = online_idset_next (set, &h, err);
    while (ok && rs >= 0 && (r = rm_sorter_next (t, &key, &klen, &val, &vlen, err)) == 1) {
        uint64_t th = key_hash (key);
        bson_t d;
        bson_iter_t id;
        while (rs == 1 && h < th)
            rs = online_idset_next (set, &h, err);
        if (rs == 1 && h == th)
            continue;
        (*extra)++;
        if (!bson_init_static (&d, val, vlen) || !bson_iter_init_find (&id, &d, "_id"))
            continue;
        online_diff_note (on, ns, &id);
        if (del)
            ok = online_writes_delete (del, &id, err);
    }
    ok = ok && rs >= 0 && r >= 0;
    rm_sorter_destroy (t);
    return ok;
}

/* Verify, sync: the documents of a target that no range of the step made
 * (their sources deleted since, or written by someone else). */
bool
online_check_extras (online_t *on, const rm_step_t *s, const rm_nsref_t *ref, online_idset_t *set,
                     mongoc_collection_t *drivers, const char *field, const online_orphans_t *orph,
                     online_mode_t mode, int64_t *differ, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    char name[400];
    mongoc_collection_t *c;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}");
    bson_t filter = BSON_INITIALIZER;
    bson_error_t why;
    online_job_t j;
    rm_pass_t p;
    online_writes_t del;
    int64_t extra = 0;
    bool ok = true;

    memset (&j, 0, sizeof j);
    memset (&p, 0, sizeof p);
    j.on = on;
    j.s = s;
    j.p = &p;
    rm_name_target (&on->run->names, s, ref, name, sizeof name);
    c = online_collection (on, ref->db, name);
    online_writes_init (&del, &j, c, "removing documents no range makes");
    if (orph) {
        extra = orph->removed;
        /* Every range's target read to its end beside its drivers: what
         * no driver makes is gone already. */
        if (orph->ranges > 0 && orph->whole == orph->ranges)
            drivers = NULL, set = NULL;
    }
    if (drivers)
        ok = online_check_orphans (on, c, ref->text, field, drivers,
                                   mode == ONLINE_SYNC && !on->run->o->dry_run ? &del : NULL,
                                   &extra, err);
    else if (set && set->disk)
        ok = extras_on_disk (on, c, ref->text, set,
                             mode == ONLINE_SYNC && !on->run->o->dry_run ? &del : NULL,
                             &extra, err);
    cur = !set || drivers || set->disk ? NULL : ops->find (on, c, &filter, opts);
    while (ok && cur && ops->next (cur, &doc)) {
        bson_iter_t id;
        if (online_idset_has (set, online_id_hash (bson_get_data (doc), doc->len)) ||
            !bson_iter_init_find (&id, doc, "_id"))
            continue;
        extra++;
        online_diff_note (on, ref->text, &id);
        if (mode == ONLINE_SYNC && !on->run->o->dry_run)
            ok = online_writes_delete (&del, &id, err);
    }
    if (!ops->end (cur, &why) && ok)
        ok = online_fail (on, err, &why, "reading a target");
    ok = ok && online_writes_flush (&del, err);
    if (ok && extra)
        online_say (on, mode == ONLINE_SYNC ? ONLINE_SAY_NOTE : ONLINE_SAY_WARN,
                    "%s: step %zu (%s) %s: %lld documents in %s.%s that no range makes (their "
                    "sources are gone)%s", mode == ONLINE_SYNC ? "sync" : "verify", s->index, s->op,
                    ref->text, (long long) extra, ref->db, mongoc_collection_get_name (c),
                    mode != ONLINE_SYNC ? ""
                    : on->run->o->dry_run    ? ": a sync would remove them"
                                        : ": removed");
    *differ += extra;
    bson_destroy (opts);
    mongoc_collection_destroy (c);
    return ok;
}

static void
note_there (void *ctx, const bson_iter_t *id)
{
    online_changes_add (ctx, "there", id);
}

bool
online_check_missing (online_job_t *j, online_passrun_t *pr, const bson_t *ids,
                      const online_docs_t *out, int64_t *missing, bson_error_t *err)
{
    bool write = pr->mode == ONLINE_SYNC && !j->on->run->o->dry_run, ok = true;
    for (size_t k = 0; ok && k < j->p->n_keep; k++) {
        const char *by = j->p->driver_field[k];
        bool own = by && !strcmp (by, "_id");
        online_idset_t made;
        bson_t gone = BSON_INITIALIZER;
        bson_iter_t it;
        uint32_t n = 0;
        online_changes_t found;
        online_idlist_t *l;

        memset (&made, 0, sizeof made);
        online_changes_init (&found);
        for (size_t i = 0; i < out->n; i++)
            if (out->docs[i].keep == (int) k)
                online_idset_add (&made, online_id_hash (online_doc_bytes (out, i), out->docs[i].len));
        /* A result that is its driver's own: only the drivers that made
         * none are looked for. Results naming their driver in another
         * field: every result of these drivers, kept where made again. */
        if (bson_iter_init (&it, ids))
            while (bson_iter_next (&it))
                if (!own || !online_idset_has (&made, online_value_hash (&it))) {
                    char key[16];
                    const char *kp;
                    size_t kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
                    bson_append_iter (&gone, kp, (int) kl, &it);
                }
        /* Only those there count: a driver that makes no result changes
         * nothing unless it made one before. */
        if (n && by)
            ok = online_batch_ids_where (j, pr->targets[k].coll, by, &gone, note_there, &found,
                                         err);
        l = online_changes_list (&found, "there", false);
        for (uint32_t i = 0; ok && l && i < l->n; i++) {
            bson_iter_t id;
            online_idlist_get (l, i, &id);
            if (!own && online_idset_has (&made, online_value_hash (&id)))
                continue;
            online_diff_note (j->on, j->p->keep[k]->text, &id);
            if (write) {
                ok = online_writes_delete (&pr->targets[k], &id, err);
                if (pr->changed)
                    online_changes_add (pr->changed, j->p->keep[k]->text, &id);
            }
            (*missing)++;
        }
        /* A rescan's removals go with its range's rewrites (hold). */
        ok = ok && (pr->targets[k].hold || online_writes_flush (&pr->targets[k], err));
        online_changes_destroy (&found);
        online_idset_destroy (&made);
        bson_destroy (&gone);
    }
    return ok;
}

/* Whether c has a document of _id id (the merge below confirms each
 * target document it finds no driver for: an order the server sorts
 * differently would otherwise look like a missing driver). */
static bool
has_id (online_t *on, mongoc_collection_t *c, const bson_iter_t *id, bool *yes, bson_error_t *err)
{
    bson_t q = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "limit", BCON_INT64 (1));
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    online_id_append (&q, id);
    cur = ops->find (on, c, &q, opts);
    *yes = ops->next (cur, &doc);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading a driving document");
    bson_destroy (opts);
    bson_destroy (&q);
    return ok;
}

bool
online_check_orphans (online_t *on, mongoc_collection_t *target, const char *ns,
                      const char *field, mongoc_collection_t *drivers, online_writes_t *del,
                      int64_t *extra, bson_error_t *err)
{
    bool own = !strcmp (field, "_id");
    /* Sorted by a field other than _id: through the index remodel's
     * metadata gives it, else by the server, which may need the disk. */
    bson_t *topts = own ? BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "sort", "{",
                                    "_id", BCON_INT32 (1), "}")
                        : BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), field, BCON_INT32 (1),
                                    "}", "sort", "{", field, BCON_INT32 (1), "}", "allowDiskUse",
                                    BCON_BOOL (true));
    bson_t *dopts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "sort", "{", "_id",
                              BCON_INT32 (1), "}");
    const online_ops_t *ops = online_ops (on);
    bson_t empty = BSON_INITIALIZER, cur_b = BSON_INITIALIZER;
    online_cursor_t *a, *b;
    const bson_t *doc;
    bson_error_t why, why_b;
    bool ok = true, b_more = true, b_have = false, a_read, b_read;

    a = ops->find (on, target, &empty, topts);
    b = ops->range (on, drivers, NULL, dopts);
    while (ok && ops->next (a, &doc)) {
        bson_iter_t id, v, bid;
        int c = 1;
        bool there = false;
        if (!bson_iter_init_find (&id, doc, "_id"))
            continue;
        /* A result without the field names no driver: an orphan. */
        if (own)
            v = id;
        else if (!bson_iter_init (&v, doc) || !bson_iter_find_descendant (&v, field, &v))
            goto orphan;
        /* The drivers' cursor on to the first _id not below this one. */
        while (b_more) {
            if (b_have && bson_iter_init_find (&bid, &cur_b, "_id") &&
                (c = rm_value_compare (&bid, &v)) >= 0)
                break;
            const bson_t *bd;
            b_have = b_more = ops->next (b, &bd);
            if (b_have) {
                bson_reinit (&cur_b);
                bson_concat (&cur_b, bd);
            }
        }
        if (b_have && c == 0)
            continue;
        ok = has_id (on, drivers, &v, &there, err);
        if (!ok || there)
            continue;
    orphan:
        (*extra)++;
        online_diff_note (on, ns, &id);
        if (del)
            ok = online_writes_delete (del, &id, err);
    }
    a_read = ops->end (a, &why);
    b_read = ops->end (b, &why_b);
    if (ok && (!a_read || !b_read))
        ok = online_fail (on, err, a_read ? &why_b : &why,
                          "reading a target's and its drivers' _ids");
    bson_destroy (&cur_b);
    bson_destroy (topts);
    bson_destroy (dopts);
    return ok;
}

bool
online_check_claimed (online_job_t *j, online_passrun_t *pr, const online_docs_t *out,
                      const online_idlist_t *drivers, bson_error_t *err)
{
    bool ok = true;
    for (size_t k = 0; ok && k < j->p->n_keep; k++) {
        const online_ops_t *ops = online_ops (j->on);
        const char *by = j->p->driver_field[k];
        bson_t arr = BSON_INITIALIZER;
        online_cursor_t *cur;
        const bson_t *doc;
        bson_error_t why;
        uint32_t n = 0;

        if (!by || !strcmp (by, "_id")) {
            bson_destroy (&arr);
            continue;
        }
        for (size_t i = 0; i < out->n; i++) {
            bson_iter_t id;
            char key[16];
            const char *kp;
            size_t kl;
            if (out->docs[i].keep != (int) k ||
                !rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &id))
                continue;
            kl = bson_uint32_to_string (n++, &kp, key, sizeof key);
            bson_append_iter (&arr, kp, (int) kl, &id);
        }
        cur = n ? ops->keys (j->on, pr->targets[k].coll, "_id", &arr, NULL) : NULL;
        while (ok && cur && ops->next (cur, &doc)) {
            bson_iter_t it, v;
            bool there = true;
            char a[240], b[240] = "?";
            if (bson_iter_init (&it, doc) && bson_iter_find_descendant (&it, by, &v) &&
                (online_idlist_has (drivers, &v) ||
                 !(ok = has_id (j->on, j->drive, &v, &there, err)) || !there))
                continue;
            /* The same words as online_check_unique's, the result there
             * first. */
            online_doc_text (bson_get_data (doc), doc->len, a, sizeof a);
            for (size_t i = 0; i < out->n; i++)
                if (out->docs[i].keep == (int) k &&
                    online_same_id (online_doc_bytes (out, i), out->docs[i].len, bson_get_data (doc),
                                    doc->len))
                    online_doc_text (online_doc_bytes (out, i), out->docs[i].len, b, sizeof b);
            rm_error_set (err, RM_ERR_FORMAT, "%s: step %zu (%s): two results for %s with one _id "
                          "(%s and %s): stopping before either overwrites the other",
                          j->on->run->where, j->s->index, j->s->op, j->p->keep[k]->text, a, b);
            ok = false;
        }
        if (!ops->end (cur, &why) && ok)
            ok = online_fail (j->on, err, &why, "reading a target");
        bson_destroy (&arr);
    }
    return ok;
}
