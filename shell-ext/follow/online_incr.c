/* Sync from the change log (online_changes.h): each step recomputes only
 * the driving documents a change affects, by its passes
 * (remodel/passes.h):
 *   - a changed driving document: itself;
 *   - a changed partner: the drivers its key matches now, and those its
 *     key matched when remodel last read it (the key map, online_keys.c),
 *     so a child moved to another parent changes both parents, a deleted
 *     child its old parent, and a parent whose key changed re-homes its
 *     children.
 * Each affected driver is read again, the engine computes its results,
 * and these are compared with the target's documents of the same _id:
 * rewritten where they differ, removed where the driver makes none now
 * (it is gone, or a parent took it). The _ids rewritten or removed are
 * changes of that target for the steps after, which read it.
 *
 * How a pass is followed is the row of online_followers.c for its trace
 * (rm_pass_t.trace), which its step's passes declare. This file holds
 * the row for results that name their driver (rm_pass_t.driver_field):
 * by its _id, or, where a driver makes several (an extract's children,
 * an outlier's overflow pages), in a field holding it, by which a
 * driver's results are found again; or results the driver's own result
 * lists (an extract's childRefs: rm_pass_t.driver_list,
 * online_incr_refs.c). Passes followed otherwise (by series, by what the
 * drivers hold) are online_incr_series.c's rows. A step with a pass no
 * row follows (a denormalize or summarize writing _id) and every step
 * after it are rescanned in full (the runner says so).
 *
 * In place (--in-place: the field steps, denormalize, summarize, each
 * document its own driver's result) the affected drivers are read by _id
 * and rewritten as a rescan's sync rewrites them (online_inplace_write:
 * the backup first, then the write on condition that the document is
 * still the one read); a driver gone has nothing to rewrite. The _ids
 * rewritten are changes of that same namespace for the steps after, added
 * to the application's (a later step reads both). remodel's own writes
 * land in the log too: the next sync recomputes those documents and finds
 * them right, so it writes nothing. */
#include <stdio.h>
#include <string.h>

#include "online_changes.h"
#include "online_interrupt.h"
#include "remodel/cli.h"

typedef struct {
    online_changes_t *ch;
    const char *ns;
} note_t;

static void
note_id (void *ctx, const bson_iter_t *id)
{
    note_t *n = ctx;
    online_changes_add (n->ch, n->ns, id);
}

/* Adds to aff the drivers a change to the partners in pc affects: by
 * their old keys (the map) and their keys now. The map's entries of a
 * partner gone stay: forgotten here, a sync killed before its results
 * were written would, run again, no longer know the parents to fix; kept,
 * they only cost a recompute if the _id comes back. */
static bool
partners_affect (online_job_t *j, const online_idlist_t *pc, online_changes_t *aff,
                 int64_t *read, bson_error_t *err)
{
    online_values_t ids;
    note_t nt = {aff, "drivers"};
    bool ok = true;

    online_values_init (&ids);
    for (uint32_t at = 0; ok && at < pc->n;) {
        uint32_t nk = 0;
        bson_t keys = BSON_INITIALIZER;
        const online_ops_t *ops = online_ops (j->on);
        online_cursor_t *cur;
        const bson_t *doc;
        bson_error_t why;

        online_idlist_chunk (pc, &at, j->batch_size, &ids);
        ok = online_keys_old (j->keys, &ids.arr, &keys, &nk, err);
        cur = ok ? ops->keys (j->on, j->partner, "_id", &ids.arr, NULL) : NULL;
        while (cur && ops->next (cur, &doc)) {
            online_keys_values (bson_get_data (doc), doc->len, j->p->partner_key, &keys, &nk);
            (*read)++;
        }
        if (cur && !ops->end (cur, &why))
            ok = online_fail (j->on, err, &why, "reading changed partners");
        if (ok && nk)
            ok = online_batch_ids_where (j, j->drive, j->p->drive_key->text, &keys, note_id, &nt,
                                         err);
        bson_destroy (&keys);
    }
    bson_destroy (&ids.arr);
    return ok;
}


/* Before a chunk's results are written, for the steps after that read
 * them (online_made.c): every _id the chunk may rewrite or remove, the
 * results its drivers (ids) make now and those they had. */
static bool
note_ahead (online_job_t *j, online_passrun_t *pr, const bson_t *ids, const online_docs_t *out,
            const online_changes_t *old, bson_error_t *err)
{
    bool ok = true;
    for (size_t k = 0; ok && k < j->p->n_keep; k++) {
        const char *by = j->p->driver_field[k];
        online_values_t a;
        bson_iter_t it;

        online_values_init (&a);
        for (size_t i = 0; i < out->n; i++)
            if (out->docs[i].keep == (int) k &&
                rm_doc_field (online_doc_bytes (out, i), out->docs[i].len, "_id", 3, &it))
                online_values_add (&a, &it);
        /* Those they had: a result that is its driver's own has the
         * driver's _id; others are found by the field naming it, or in
         * the lists of the drivers' results (read before any write). */
        if (!by) {
            online_refs_old_ids (j, k, old, &a);
        } else if (!strcmp (by, "_id")) {
            if (bson_iter_init (&it, ids))
                while (bson_iter_next (&it))
                    online_values_add (&a, &it);
        } else {
            ok = online_batch_ids_where (j, pr->targets[k].coll, by, ids, online_values_add, &a,
                                         err);
        }
        ok = ok && online_made_note (j->on, j->p->keep[k]->text, &a.arr, err);
        bson_destroy (&a.arr);
    }
    return ok;
}

/* In place, a chunk of drivers as a rescan's sync does it (online_run.c,
 * one_batch): the documents out changes are backed up and rewritten on
 * condition (online_inplace_write), their _ids noted in made for the steps
 * after, and, where a later step reads them (ahead), in the state
 * database before anything is written, as note_ahead does side by side. */
static bool
inplace_chunk (online_job_t *j, online_passrun_t *pr, const online_docs_t *in,
               const online_docs_t *out, bool ahead, online_incr_stats_t *st, bson_error_t *err)
{
    /* The pass keeps the namespace it drives on: the documents themselves. */
    const char *ns = j->p->keep[0]->text;
    online_values_t a;
    bson_iter_t it;
    size_t at = 0;
    bool ok = true;

    online_values_init (&a);
    for (size_t i = 0; i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        if (r >= 0 && !online_same_doc (in, i, out, (size_t) r) &&
            rm_doc_field (online_doc_bytes (in, i), in->docs[i].len, "_id", 3, &it)) {
            online_values_add (&a, &it);
            online_diff_note (j->on, ns, &it);
        }
    }
    if (a.n && pr->mode == ONLINE_SYNC) {
        ok = (!ahead || online_made_note (j->on, ns, &a.arr, err)) &&
             online_inplace_write (&pr->ip, in, out, err);
        if (ok && pr->changed && bson_iter_init (&it, &a.arr))
            while (bson_iter_next (&it))
                online_changes_add (pr->changed, ns, &it);
    }
    st->rewritten += a.n;
    bson_destroy (&a.arr);
    return ok;
}

/* What a followed pass works with while it recomputes its drivers: the
 * job (collections, engine, key map), its writes, and per chunk the
 * drivers read, their results and the lists those had. */
typedef struct {
    online_job_t j;
    online_passrun_t pr;
    online_idset_t scratch[4];
    online_docs_t in, out;
    online_changes_t old;
    bson_t none;
} follow_t;

static void
follow_open (follow_t *f, online_t *on, const online_follow_req_t *rq)
{
    online_job_t *j = &f->j;
    const rm_step_t *s = rq->s;
    const rm_pass_t *p = rq->p;

    memset (f, 0, sizeof *f);
    online_changes_init (&f->old);
    online_docs_init (&f->in);
    online_docs_init (&f->out);
    online_docs_init (&f->pr.found);
    bson_init (&f->none);
    j->on = on;
    j->s = s;
    j->p = p;
    j->index = rq->pi;
    j->batch_size = on->run->o->batch_size;
    rm_step_inputs (s, j->in, 4);
    j->drive = online_collection (on, j->in[p->drive]->db, rm_name_now (&on->run->names, j->in[p->drive]));
    if (p->partner >= 0) {
        j->partner = online_collection (on, j->in[p->partner]->db,
                                        rm_name_now (&on->run->names, j->in[p->partner]));
        if (rq->mode == ONLINE_SYNC)
            j->keys = online_keys_new (on, s, rq->pi, p->partner_key);
    }
    j->engine = online_engine_new (on, s);
    f->pr.mode = rq->mode;
    f->pr.changed = rq->made;
    /* No range reports: the count is said once, at the end. */
    f->pr.reported = ONLINE_REPORT_MAX + 1;
    online_docs_init (&f->pr.ip.again);
    online_docs_init (&f->pr.ip.again_out);
    if (on->run->o->in_place) {
        char backup[400];
        rm_name_inplace_backup (&on->run->names, s, backup, sizeof backup);
        f->pr.ip.j = j;
        f->pr.ip.backup = online_collection (on, on->run->o->state_db, backup);
        online_select_open (&f->pr.ip, on, s);
    }
    for (size_t k = 0; !on->run->o->in_place && k < p->n_keep; k++) {
        char target[400];
        rm_name_target (&on->run->names, s, p->keep[k], target, sizeof target);
        online_writes_init (&f->pr.targets[k], j, online_collection (on, p->keep[k]->db, target),
                            "writing results");
        f->pr.sets[k] = &f->scratch[k];
    }
}

static void
follow_close (follow_t *f)
{
    for (size_t k = 0; k < 4; k++)
        if (f->pr.targets[k].coll)
            mongoc_collection_destroy (f->pr.targets[k].coll);
    if (f->pr.ip.backup)
        mongoc_collection_destroy (f->pr.ip.backup);
    online_select_close (&f->pr.ip);
    online_docs_destroy (&f->pr.ip.again);
    online_docs_destroy (&f->pr.ip.again_out);
    online_keys_destroy (f->j.keys);
    if (f->j.partner)
        mongoc_collection_destroy (f->j.partner);
    mongoc_collection_destroy (f->j.drive);
    rm_batchstep_destroy (f->j.engine);
    online_docs_destroy (&f->in);
    online_docs_destroy (&f->out);
    online_docs_destroy (&f->pr.found);
    online_changes_destroy (&f->old);
    bson_destroy (&f->none);
}

/* Side by side, a chunk of drivers (ids, among all the pass's drivers)
 * recomputed into f->out: their results rewritten where they differ,
 * removed where the drivers make them no more. */
static bool
side_chunk (follow_t *f, const bson_t *ids, const online_idlist_t *drivers, bool ahead,
            online_incr_stats_t *st, bson_error_t *err)
{
    online_job_t *j = &f->j;
    online_passrun_t *pr = &f->pr;
    bool ok;

    /* The lists of the drivers' results, before they are rewritten. */
    online_changes_destroy (&f->old);
    online_changes_init (&f->old);
    ok = online_refs_old (j, pr, ids, &f->old, err);
    if (ok && f->out.n && pr->mode == ONLINE_SYNC)
        ok = online_check_unique (j, pr, &f->out, err) &&
             online_check_claimed (j, pr, &f->out, drivers, err) &&
             online_refs_claimed (j, pr, &f->out, drivers, &f->old, err);
    if (ok && ahead)
        ok = note_ahead (j, pr, ids, &f->out, &f->old, err);
    ok = ok && online_refs_missing (j, pr, ids, &f->old, &f->out, &st->removed, err);
    if (ok && f->out.n) {
        int64_t before = pr->differ;
        ok = online_check_side (j, pr, &f->out, &f->none, NULL, err);
        st->rewritten += pr->differ - before;
    }
    return ok && online_check_missing (j, pr, ids, &f->out, &st->removed, err);
}

/* Which drivers a pass recomputes (into aff's "drivers", a name no
 * namespace has: no dot): the changed ones, then those changed partners
 * affect. */
static bool
drivers_affected (follow_t *f, online_changes_t *ch, online_changes_t *aff,
                  online_incr_stats_t *st, bson_error_t *err)
{
    online_job_t *j = &f->j;
    const online_idlist_t *d = online_changes_list (ch, j->in[j->p->drive]->text, false);
    const online_idlist_t *pc = NULL;
    bool ok = true;

    if (j->p->partner >= 0)
        pc = online_changes_list (ch, j->in[j->p->partner]->text, false);
    for (uint32_t i = 0; d && i < d->n; i++) {
        bson_iter_t id;
        online_idlist_get (d, i, &id);
        online_changes_add (aff, "drivers", &id);
    }
    if (pc && j->keys)
        ok = partners_affect (j, pc, aff, &st->read, err);
    if (*aff->rescan && !*ch->rescan)
        snprintf (ch->rescan, sizeof ch->rescan, "%s", aff->rescan);
    return ok;
}

/* One pass whose results name their drivers (online_followers.c's rows
 * by _id, by a field, by the driver's list): ch holds the changes of its
 * inputs; what it rewrites or removes is noted in made, and, where a later
 * step reads it (ahead), in the state database before it is written. */
bool
online_follow_drivers (online_t *on, const online_follow_req_t *rq, bson_error_t *err)
{
    const rm_step_t *s = rq->s;
    const rm_pass_t *p = rq->p;
    online_changes_t *ch = rq->ch;
    online_incr_stats_t *st = rq->st;
    bool ahead = rq->ahead;
    follow_t f;
    online_changes_t aff;
    online_idlist_t *drivers;
    online_values_t ids;
    bool ok;

    online_values_init (&ids);
    online_changes_init (&aff);
    follow_open (&f, on, rq);
    ok = drivers_affected (&f, ch, &aff, st, err);
    drivers = online_changes_list (&aff, "drivers", false);
    for (uint32_t at = 0; ok && !*aff.rescan && drivers && at < drivers->n;) {
        uint32_t n;
        int64_t got;
        /* finalize's bound on its window, between two batches of the
         * drain (no bound outside finalize). */
        if (!(ok = online_call_deadline_check ("draining the change log", err)))
            break;
        n = online_idlist_chunk (drivers, &at, f.j.batch_size, &ids);
        /* finalize's drain with the writes stopped: said when long. */
        online_blocked_progress (on, rq->mode == ONLINE_SYNC ? "drain" : "verify", s,
                                f.j.in[p->drive]->text, (int64_t) at - n, (int64_t) drivers->n);
        st->recomputed += n;
        got = online_batch_read_ids (&f.j, &ids.arr, &f.in, err);
        ok = got >= 0;
        st->read += got > 0 ? got : 0;
        /* A chunk of drivers all gone still removes their results. */
        if (ok && f.in.n)
            ok = online_batch_compute (&f.j, &f.in, &f.out, err);
        else
            online_docs_reset (&f.out);
        if (on->run->o->in_place && online_select_step (s)) {
            /* copy, move, delete: a driver gone takes a copy's copy. */
            int64_t changed = 0;
            ok = ok && online_select_write (&f.pr.ip, &ids.arr, &f.in, &f.out,
                                            f.pr.mode == ONLINE_SYNC, ahead, f.pr.changed,
                                            &changed, err);
            st->rewritten += changed;
            continue;
        }
        if (on->run->o->in_place) {
            ok = ok && inplace_chunk (&f.j, &f.pr, &f.in, &f.out, ahead, st, err);
            continue;
        }
        ok = ok && side_chunk (&f, &ids.arr, drivers, ahead, st, err);
        /* What --keep-before kept of these drivers, as they are now. */
        if (ok && rq->mode == ONLINE_SYNC)
            ok = online_kept_batch (&f.j, &ids.arr, &f.in, &f.out, true, err);
        for (size_t k = 0; k < p->n_keep; k++)
            online_idset_destroy (&f.scratch[k]);
    }
    follow_close (&f);
    online_changes_destroy (&aff);
    bson_destroy (&ids.arr);
    return ok;
}

/* Adds the _ids cur yields to ns's list of ch. */
static void
add_ids (online_t *on, online_cursor_t *cur, online_changes_t *ch, const char *ns)
{
    const bson_t *doc;
    while (online_ops (on)->next (cur, &doc)) {
        bson_iter_t id;
        if (bson_iter_init_find (&id, doc, "_id"))
            online_changes_add (ch, ns, &id);
    }
}

/* Up to n _ids of c, at random where the server's $sample answers
 * (online_random_ids), into ns's list of ch; otherwise the first n in _id
 * order, and why goes into no_sample. ch holds nothing else. */
static bool
sample_ids (online_t *on, mongoc_collection_t *c, int64_t n, online_changes_t *ch, const char *ns,
            char *no_sample, size_t cap, bson_error_t *err)
{
    bson_t ids = BSON_INITIALIZER;
    bool sampled, ok = online_random_ids (on, c, n, &ids, &sampled, no_sample, cap,
                                          "sampling documents to verify", err);
    if (ok && sampled) {
        bson_iter_t id;
        bson_iter_init (&id, &ids);
        while (bson_iter_next (&id))
            online_changes_add (ch, ns, &id);
    } else if (ok) {
        bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "sort", "{", "_id",
                                 BCON_INT32 (1), "}", "limit", BCON_INT64 (n));
        bson_t empty = BSON_INITIALIZER;
        online_cursor_t *cur = online_ops (on)->find (on, c, &empty, opts);
        bson_error_t why;
        add_ids (on, cur, ch, ns);
        if (!online_ops (on)->end (cur, &why))
            ok = online_fail (on, err, &why, "reading documents to verify");
        bson_destroy (opts);
    }
    bson_destroy (&ids);
    return ok;
}

/* Every row's sample (online_followers.c): drivers of the pass's own
 * driving namespace, followed as if they had changed. */
bool
online_sample_drivers (online_t *on, const rm_step_t *s, const rm_pass_t *p, int64_t n,
                       online_changes_t *ch, char *no_sample, size_t cap, bson_error_t *err)
{
    const rm_nsref_t *in[4];
    mongoc_collection_t *c;
    bool ok;
    rm_step_inputs (s, in, 4);
    c = online_collection (on, in[p->drive]->db, rm_name_now (&on->run->names, in[p->drive]));
    ok = sample_ids (on, c, n, ch, in[p->drive]->text, no_sample, cap, err);
    mongoc_collection_destroy (c);
    return ok;
}
