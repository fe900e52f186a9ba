/* In place, copy, move and delete (online_batch.h, issue 64): the
 * documents a step's filter selects written into its "to" (copy, move)
 * and taken out of its "from" (move, delete) on the live server. Each is
 * journaled in the step's backups before it is written, so that a kill at
 * any call leaves what the same command, or rollback, completes:
 *   - a document taken out of "from": its backup holds it ({doc, gone}),
 *     set before the removal, a findAndModify whose filter is the document
 *     as read and whose answer is the document removed (one the
 *     application changed in between matches nothing: it is read again
 *     and judged again; one it added a field to is kept in the backup as
 *     removed);
 *   - a document written to "to": the checksums of each version written
 *     ({made: [crc], madeFields: [digest]}), added before the write, so
 *     that rollback takes out of "to" only what still is remodel's.
 * A kill between a journal entry and its write leaves an entry for a write
 * not made: the batch done again finds the document as it was and makes
 * the write; rollback finds nothing to undo. "to" is the step's: it held
 * no document when the run began (online_run.c refuses one that does),
 * and a sync keeps it what the step makes of "from" now: a copy's
 * document whose source went or left the filter is taken out. A move's
 * or delete's document is taken out of "from" once: what is gone stays
 * gone, and a document the application inserts later is judged as new. */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"

/* A document that keeps changing under the run is judged again at most
 * this many times, as online_write.c's are. */
#define RETRIES 5

bool
online_select_step (const rm_step_t *s)
{
    return s->kind == RM_STEP_COPY || s->kind == RM_STEP_MOVE || s->kind == RM_STEP_DELETE;
}

void
online_select_open (online_inplace_t *ip, online_t *on, const rm_step_t *s)
{
    ip->to = NULL;
    online_docs_init (&ip->have);
    if (online_select_step (s) && s->kind != RM_STEP_DELETE)
        ip->to = online_collection (on, s->u.copy.to.db, s->u.copy.to.coll);
}

void
online_select_close (online_inplace_t *ip)
{
    if (ip->to)
        mongoc_collection_destroy (ip->to);
    ip->to = NULL;
    online_docs_destroy (&ip->have);
}

/* What a batch comes to: per document of in, its result in "to" (-1:
 * none), whether the filter selects it, and what is to be done. */
typedef struct {
    online_inplace_t *ip;
    online_job_t *j;
    const rm_copy_t *x;
    int kf, kt;            /* the pass's keep[] of from and of to; -1: none */
    size_t *put;           /* out's results to write into to */
    size_t n_put;
    size_t *take;          /* in's documents to take out of from */
    size_t n_take;
    online_values_t drop;  /* _ids to take out of to (a copy's) */
    online_docs_t took;    /* journal entries of later steps (later_took) */
} plan_t;

static int
keep_of (const rm_pass_t *p, const rm_nsref_t *ns)
{
    for (size_t k = 0; k < p->n_keep; k++)
        if (!strcmp (p->keep[k]->text, ns->text))
            return (int) k;
    return -1;
}

/* The result of kind keep among out's whose _id is doc's, from *at on
 * (they mostly come in in's order); -1: none. */
static ssize_t
result_by_id (const uint8_t *doc, uint32_t len, const online_docs_t *out, int keep, size_t *at)
{
    for (size_t k = 0; keep >= 0 && k < out->n; k++) {
        size_t r = (*at + k) % out->n;
        if (out->docs[r].keep == keep &&
            online_same_id (doc, len, online_doc_bytes (out, r), out->docs[r].len)) {
            *at = r + 1;
            return (ssize_t) r;
        }
    }
    return -1;
}

static void
add_id (online_values_t *v, const uint8_t *doc, uint32_t len)
{
    bson_iter_t id;
    if (rm_doc_field (doc, len, "_id", 3, &id))
        online_values_add (v, &id);
}

/* to's documents with one of the batch's _ids (in's, and ids'), into
 * ip->have. */
static bool
read_have (plan_t *pl, const bson_t *ids, const online_docs_t *in, bson_error_t *err)
{
    online_t *on = pl->j->on;
    const online_ops_t *ops = online_ops (on);
    online_values_t all;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bson_iter_t it;
    bool ok = true;

    online_docs_reset (&pl->ip->have);
    online_values_init (&all);
    for (size_t i = 0; i < in->n; i++)
        add_id (&all, online_doc_bytes (in, i), in->docs[i].len);
    if (ids && bson_iter_init (&it, ids))
        while (bson_iter_next (&it))
            online_values_add (&all, &it);
    if (all.n) {
        cur = ops->keys (on, pl->ip->to, "_id", &all.arr, NULL);
        while (ops->next (cur, &doc))
            online_docs_add (&pl->ip->have, bson_get_data (doc), doc->len, 0);
        if (!ops->end (cur, &why))
            ok = online_fail (on, err, &why, "reading the documents of \"to\"");
    }
    bson_destroy (&all.arr);
    return ok;
}

/* Whether d holds a document (of any keep) whose _id is id. */
static bool
id_in (const bson_iter_t *id, const online_docs_t *d)
{
    bson_t one = BSON_INITIALIZER;
    bool there = false;
    online_id_append (&one, id);
    for (size_t i = 0; !there && i < d->n; i++)
        there = online_same_id (bson_get_data (&one), one.len, online_doc_bytes (d, i),
                                d->docs[i].len);
    bson_destroy (&one);
    return there;
}

/* Decides the batch: pl's put, take and drop. */
static void
plan_batch (plan_t *pl, const bson_t *ids, const online_docs_t *in, const online_docs_t *out)
{
    const rm_step_t *s = pl->j->s;
    size_t at_t = 0, at_f = 0, at_h = 0;
    bson_iter_t it;

    for (size_t i = 0; i < in->n; i++) {
        const uint8_t *doc = online_doc_bytes (in, i);
        uint32_t len = in->docs[i].len;
        ssize_t t = result_by_id (doc, len, out, pl->kt, &at_t), h = -1;
        bool stays = pl->kf < 0 || result_by_id (doc, len, out, pl->kf, &at_f) >= 0;
        bool selected = s->kind == RM_STEP_COPY ? t >= 0 : !stays;
        if (pl->ip->to)
            h = result_by_id (doc, len, &pl->ip->have, 0, &at_h);
        if (selected && t >= 0 &&
            (h < 0 || !online_same_doc (out, (size_t) t, &pl->ip->have, (size_t) h)))
            pl->put[pl->n_put++] = (size_t) t;
        if (s->kind == RM_STEP_COPY && !selected && h >= 0)
            add_id (&pl->drop, doc, len);
        if (s->kind != RM_STEP_COPY && selected)
            pl->take[pl->n_take++] = i;
    }
    /* The _ids asked for and gone: a copy's copies of them go too, but
     * for those a later step of the plan took out of the same "from"
     * (found by later_took). */
    if (s->kind == RM_STEP_COPY && ids && bson_iter_init (&it, ids))
        while (bson_iter_next (&it))
            if (!id_in (&it, in) && id_in (&it, &pl->ip->have) && !id_in (&it, &pl->took))
                online_values_add (&pl->drop, &it);
}

/* A copy's documents whose source is gone, and which a later move or
 * delete of the plan took out of the same "from" (its journal says so),
 * into pl->took: their copies stay, as remodel run's copy, made before the
 * move, keeps them. Without this, a sync would read the plan's own removals
 * as the application's and take the copies out. */
static bool
later_took (plan_t *pl, const bson_t *ids, const online_docs_t *in, bson_error_t *err)
{
    online_t *on = pl->j->on;
    const online_ops_t *ops = online_ops (on);
    online_values_t gone;
    bson_iter_t it;
    bool ok = true;

    online_values_init (&gone);
    if (bson_iter_init (&it, ids))
        while (bson_iter_next (&it))
            if (!id_in (&it, in))
                online_values_add (&gone, &it);
    for (size_t i = (size_t) (pl->j->s - on->run->plan.steps) + 1;
         ok && gone.n && i < on->run->plan.n; i++) {
        const rm_step_t *l = &on->run->plan.steps[i];
        char bname[400];
        mongoc_collection_t *b;
        online_cursor_t *cur;
        const bson_t *doc;
        bson_t q = BSON_INITIALIZER, in_ids;
        bson_error_t why;
        if ((l->kind != RM_STEP_MOVE && l->kind != RM_STEP_DELETE) ||
            strcmp (l->u.copy.from.text, pl->x->from.text) != 0)
            continue;
        rm_name_inplace_backup (&on->run->names, l, bname, sizeof bname);
        b = online_collection (on, on->run->o->state_db, bname);
        BSON_APPEND_DOCUMENT_BEGIN (&q, "_id", &in_ids);
        BSON_APPEND_ARRAY (&in_ids, "$in", &gone.arr);
        bson_append_document_end (&q, &in_ids);
        BSON_APPEND_BOOL (&q, "gone", true);
        cur = ops->find (on, b, &q, NULL);
        while (ops->next (cur, &doc))
            online_docs_add (&pl->took, bson_get_data (doc), doc->len, 0);
        if (!ops->end (cur, &why))
            ok = online_fail (on, err, &why, "reading a later step's journal");
        mongoc_collection_destroy (b);
        bson_destroy (&q);
    }
    bson_destroy (&gone.arr);
    return ok;
}

/* The journal entry of the document doc (as read) before it is taken out
 * of from (gone) and, with want, before want is written into to. */
static void
journal (const uint8_t *doc, uint32_t len, bool gone, const uint8_t *want, uint32_t wlen,
         bson_t *sel, bson_t *u)
{
    bson_t inner, d;
    online_id_filter (gone ? doc : want, gone ? len : wlen, sel);
    bson_init (u);
    if (gone) {
        BSON_APPEND_DOCUMENT_BEGIN (u, "$set", &inner);
        if (bson_init_static (&d, doc, len))
            BSON_APPEND_DOCUMENT (&inner, "doc", &d);
        BSON_APPEND_BOOL (&inner, "gone", true);
        bson_append_document_end (u, &inner);
    }
    if (want) {
        BSON_APPEND_DOCUMENT_BEGIN (u, "$addToSet", &inner);
        BSON_APPEND_INT64 (&inner, "made", (int64_t) rm_crc64_update (0, want, wlen));
        BSON_APPEND_INT64 (&inner, "madeFields", (int64_t) online_fields_digest (want, wlen));
        bson_append_document_end (u, &inner);
    }
}

/* One journal entry, now (a document judged again). */
static bool
journal_one (online_inplace_t *ip, const uint8_t *doc, uint32_t len, bool gone,
             const uint8_t *want, uint32_t wlen, bson_error_t *err)
{
    online_t *on = ip->j->on;
    bson_t sel, u;
    bson_error_t why;
    bool ok;
    journal (doc, len, gone, want, wlen, &sel, &u);
    ok = online_lease_check (on, err) &&
         (online_ops (on)->write (on, ip->backup, ONLINE_W_UPDATE, &sel, &u, true, false, NULL,
                                  &why) ||
          online_fail (on, err, &why, "saving an original"));
    bson_destroy (&sel);
    bson_destroy (&u);
    return ok;
}

/* Both the document and its journal entry fit in a document. */
static bool
fits (online_job_t *j, const char *ns, const uint8_t *doc, uint32_t len, const uint8_t *want,
      uint32_t wlen, bson_error_t *err)
{
    /* _id twice, and the entry's few fields. */
    uint64_t entry = (uint64_t) len * 2 + 200;
    if (wlen <= ONLINE_DOC_MAX && entry <= ONLINE_DOC_MAX)
        return true;
    return online_too_large (j, ns, doc, len,
                             wlen > ONLINE_DOC_MAX ? "the result" : "its backup (in the state database)",
                             wlen > ONLINE_DOC_MAX ? wlen : entry, err);
}

/* doc taken out of from on condition that it is still as read: *removed
 * whether it was; the backup's copy made what was removed where the
 * application added a field the condition cannot see. */
static bool
take_one (online_inplace_t *ip, const uint8_t *doc, uint32_t len, bool *removed, bson_error_t *err)
{
    online_t *on = ip->j->on;
    bson_t sel, reply;
    bson_iter_t it;
    bson_error_t why;
    bool ok;

    *removed = false;
    bson_init_static (&sel, doc, len);
    if (!online_lease_check (on, err))
        return false;
    ok = online_ops (on)->replace_if (on, ip->j->drive, &sel, NULL, &reply, &why) ||
         online_fail (on, err, &why, "removing a document");
    if (ok && bson_iter_init_find (&it, &reply, "value") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
        const uint8_t *pre;
        uint32_t plen;
        bson_iter_document (&it, &plen, &pre);
        *removed = true;
        if (plen != len || memcmp (pre, doc, len) != 0)
            ok = journal_one (ip, pre, plen, true, NULL, 0, err);
    }
    bson_destroy (&reply);
    return ok;
}

/* to's document of doc's _id taken out (a move whose document left the
 * filter in between), and the journal told the removal was not made. */
static bool
unmake (online_inplace_t *ip, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    online_t *on = ip->j->on;
    bson_t sel,
        *u = BCON_NEW ("$unset", "{", "gone", BCON_BOOL (true), "doc", BCON_BOOL (true), "}");
    bson_error_t why;
    bool ok;
    online_id_filter (doc, len, &sel);
    ok = online_lease_check (on, err) &&
         (!ip->to || online_ops (on)->write (on, ip->to, ONLINE_W_DELETE, &sel, NULL, false, false,
                                             NULL, &why) ||
          online_fail (on, err, &why, "removing a document of \"to\"")) &&
         (online_ops (on)->write (on, ip->backup, ONLINE_W_UPDATE, &sel, u, false, false, NULL,
                                  &why) ||
          online_fail (on, err, &why, "saving an original"));
    bson_destroy (&sel);
    bson_destroy (u);
    return ok;
}

/* A document whose removal matched nothing: changed (or gone) since it
 * was read. Read again, judged again, and taken out if still selected. */
static bool
redo (plan_t *pl, const uint8_t *orig, uint32_t olen, bson_error_t *err)
{
    online_inplace_t *ip = pl->ip;
    online_job_t *j = pl->j;
    bson_iter_t id;

    if (!rm_doc_field (orig, olen, "_id", 3, &id))
        return true;
    for (int attempt = 0; attempt < RETRIES; attempt++) {
        int rc = online_batch_reread (j, &id, &ip->again, err);
        const uint8_t *doc;
        uint32_t len;
        size_t at = 0;
        ssize_t t;
        bool removed;
        if (rc <= 0)
            return rc == 0; /* gone: as the step would have it */
        if (!online_batch_compute (j, &ip->again, &ip->again_out, err))
            return false;
        doc = online_doc_bytes (&ip->again, 0);
        len = ip->again.docs[0].len;
        t = result_by_id (doc, len, &ip->again_out, pl->kt, &at);
        at = 0;
        if (result_by_id (doc, len, &ip->again_out, pl->kf, &at) >= 0)
            return unmake (ip, doc, len, err); /* no longer selected */
        if (t >= 0) {
            size_t idx = (size_t) t;
            online_writes_t w;
            online_writes_init (&w, j, ip->to, "writing into \"to\"");
            if (!fits (j, pl->x->from.text, doc, len, online_doc_bytes (&ip->again_out, idx),
                       ip->again_out.docs[idx].len, err) ||
                !journal_one (ip, doc, len, true, online_doc_bytes (&ip->again_out, idx),
                              ip->again_out.docs[idx].len, err) ||
                !online_side_rewrite (&w, &ip->again_out, &idx, 1, err))
                return false;
        } else if (!fits (j, pl->x->from.text, doc, len, NULL, 0, err) ||
                   !journal_one (ip, doc, len, true, NULL, 0, err)) {
            return false;
        }
        if (!take_one (ip, doc, len, &removed, err))
            return false;
        if (removed)
            return true;
    }
    return online_keeps_changing (j, pl->x->from.text, orig, olen, RETRIES, err);
}

/* The _ids of what the batch changes, per namespace: for the steps after
 * (ahead: before the writes) or as changed (after them). */
static bool
note_ids (plan_t *pl, const online_docs_t *in, const online_docs_t *out, bool ahead,
          online_changes_t *changed, bson_error_t *err)
{
    online_values_t to, from;
    bson_iter_t it;
    bool ok = true;

    online_values_init (&to);
    online_values_init (&from);
    for (size_t i = 0; i < pl->n_put; i++)
        add_id (&to, online_doc_bytes (out, pl->put[i]), out->docs[pl->put[i]].len);
    if (bson_iter_init (&it, &pl->drop.arr))
        while (bson_iter_next (&it))
            online_values_add (&to, &it);
    for (size_t i = 0; i < pl->n_take; i++)
        add_id (&from, online_doc_bytes (in, pl->take[i]), in->docs[pl->take[i]].len);
    if (ahead) {
        ok = (!to.n || online_made_note (pl->j->on, pl->x->to.text, &to.arr, err)) &&
             (!from.n || online_made_note (pl->j->on, pl->x->from.text, &from.arr, err));
    } else if (changed) {
        if (bson_iter_init (&it, &to.arr))
            while (bson_iter_next (&it))
                online_changes_add (changed, pl->x->to.text, &it);
        if (bson_iter_init (&it, &from.arr))
            while (bson_iter_next (&it))
                online_changes_add (changed, pl->x->from.text, &it);
    }
    bson_destroy (&to.arr);
    bson_destroy (&from.arr);
    return ok;
}

/* Each differing _id for verify's and sync's report. */
static void
note_diffs (plan_t *pl, const online_docs_t *in, const online_docs_t *out)
{
    bson_iter_t it;
    for (size_t i = 0; i < pl->n_put; i++)
        if (rm_doc_field (online_doc_bytes (out, pl->put[i]), out->docs[pl->put[i]].len, "_id", 3,
                          &it))
            online_diff_note (pl->j->on, pl->x->to.text, &it);
    if (bson_iter_init (&it, &pl->drop.arr))
        while (bson_iter_next (&it))
            online_diff_note (pl->j->on, pl->x->to.text, &it);
    for (size_t i = 0; i < pl->n_take; i++)
        if (rm_doc_field (online_doc_bytes (in, pl->take[i]), in->docs[pl->take[i]].len, "_id", 3,
                          &it))
            online_diff_note (pl->j->on, pl->x->from.text, &it);
}

/* The journal of the batch, in commands of the server's size: each
 * document taken out (with, a move's, what it becomes in to), each of a
 * copy's written. */
static bool
journal_batch (plan_t *pl, const online_docs_t *in, const online_docs_t *out, bson_error_t *err)
{
    online_writes_t w;
    bool ok = true;
    online_writes_init (&w, pl->j, pl->ip->backup, "saving the originals");
    for (size_t i = 0; ok && i < pl->n_take; i++) {
        const uint8_t *doc = online_doc_bytes (in, pl->take[i]);
        uint32_t len = in->docs[pl->take[i]].len;
        size_t at = 0;
        ssize_t t = result_by_id (doc, len, out, pl->kt, &at);
        bson_t sel, u;
        journal (doc, len, true, t >= 0 ? online_doc_bytes (out, (size_t) t) : NULL,
                 t >= 0 ? out->docs[t].len : 0, &sel, &u);
        ok = online_writes_add (&w, ONLINE_W_UPDATE, &sel, &u, true, err);
        bson_destroy (&sel);
        bson_destroy (&u);
    }
    for (size_t i = 0; ok && pl->j->s->kind == RM_STEP_COPY && i < pl->n_put; i++) {
        bson_t sel, u;
        journal (NULL, 0, false, online_doc_bytes (out, pl->put[i]), out->docs[pl->put[i]].len,
                 &sel, &u);
        ok = online_writes_add (&w, ONLINE_W_UPDATE, &sel, &u, true, err);
        bson_destroy (&sel);
        bson_destroy (&u);
    }
    return ok && online_writes_flush (&w, err);
}

/* The batch's writes, its journal first: into to, out of to, out of from
 * (each removal on condition, judged again where it matched nothing). */
static bool
write_batch (plan_t *pl, const online_docs_t *in, const online_docs_t *out, bson_error_t *err)
{
    online_job_t *j = pl->j;
    online_writes_t w;
    bson_iter_t it;
    bool ok = true;

    for (size_t i = 0; ok && i < pl->n_take; i++)
        ok = fits (j, pl->x->from.text, online_doc_bytes (in, pl->take[i]), in->docs[pl->take[i]].len, NULL, 0, err);
    for (size_t i = 0; ok && i < pl->n_put; i++)
        ok = fits (j, pl->x->from.text, online_doc_bytes (out, pl->put[i]), out->docs[pl->put[i]].len,
                   online_doc_bytes (out, pl->put[i]), out->docs[pl->put[i]].len, err);
    ok = ok && journal_batch (pl, in, out, err);
    if (ok && pl->n_put) {
        online_writes_init (&w, j, pl->ip->to, "writing into \"to\"");
        ok = online_side_rewrite (&w, out, pl->put, pl->n_put, err);
    }
    if (ok && pl->drop.n) {
        online_writes_init (&w, j, pl->ip->to, "removing from \"to\"");
        if (bson_iter_init (&it, &pl->drop.arr))
            while (ok && bson_iter_next (&it))
                ok = online_writes_delete (&w, &it, err);
        ok = ok && online_writes_flush (&w, err);
    }
    for (size_t i = 0; ok && i < pl->n_take; i++) {
        const uint8_t *doc = online_doc_bytes (in, pl->take[i]);
        uint32_t len = in->docs[pl->take[i]].len;
        bool removed;
        ok = take_one (pl->ip, doc, len, &removed, err) && (removed || redo (pl, doc, len, err));
    }
    return ok;
}

bool
online_select_write (online_inplace_t *ip, const bson_t *ids, const online_docs_t *in,
                     const online_docs_t *out, bool write, bool ahead, online_changes_t *changed,
                     int64_t *differ, bson_error_t *err)
{
    online_job_t *j = ip->j;
    plan_t pl = {.ip = ip, .j = j, .x = &j->s->u.copy};
    bool ok = true;

    pl.kf = keep_of (j->p, &pl.x->from);
    pl.kt = j->s->kind == RM_STEP_DELETE ? -1 : keep_of (j->p, &pl.x->to);
    pl.put = bson_malloc ((out->n + 1) * sizeof *pl.put);
    pl.take = bson_malloc ((in->n + 1) * sizeof *pl.take);
    online_values_init (&pl.drop);
    online_docs_init (&pl.took);
    if (ip->to)
        ok = read_have (&pl, ids, in, err);
    if (ok && ids && j->s->kind == RM_STEP_COPY)
        ok = later_took (&pl, ids, in, err);
    if (ok)
        plan_batch (&pl, ids, in, out);
    /* A move's document is put and taken: one change. */
    *differ = (int64_t) (j->s->kind == RM_STEP_COPY ? pl.n_put + pl.drop.n : pl.n_take);
    if (ok && *differ) {
        note_diffs (&pl, in, out);
        if (write)
            ok = (!ahead || note_ids (&pl, in, out, true, NULL, err)) &&
                 write_batch (&pl, in, out, err) && note_ids (&pl, in, out, false, changed, err);
    }
    bson_free (pl.put);
    bson_free (pl.take);
    bson_destroy (&pl.drop.arr);
    online_docs_destroy (&pl.took);
    return ok;
}

/* One chunk of "to"'s _ids (ids, n of them): those whose source is in
 * neither "from" nor a later step's journal, noted, and removed by a sync. */
static bool
extras_chunk (plan_t *pl, const bson_t *ids, online_mode_t mode, online_writes_t *del,
              int64_t *extra, bson_error_t *err)
{
    online_job_t *j = pl->j;
    online_docs_t src;
    bson_iter_t it;
    bool ok;

    online_docs_init (&src);
    ok = online_batch_read_ids (j, ids, &src, err) >= 0 && later_took (pl, ids, &src, err);
    if (ok && bson_iter_init (&it, ids))
        while (ok && bson_iter_next (&it)) {
            if (id_in (&it, &src) || id_in (&it, &pl->took))
                continue;
            (*extra)++;
            online_diff_note (j->on, pl->x->to.text, &it);
            if (mode == ONLINE_SYNC && !j->on->run->o->dry_run)
                ok = online_writes_delete (del, &it, err);
        }
    online_docs_reset (&pl->took);
    online_docs_destroy (&src);
    return ok;
}

bool
online_select_extras (online_t *on, const rm_step_t *s, online_mode_t mode, int64_t *differ,
                      bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    online_job_t j = {.on = on, .s = s, .batch_size = on->run->o->batch_size};
    plan_t pl = {.j = &j, .x = &s->u.copy};
    mongoc_collection_t *to = online_collection (on, s->u.copy.to.db, s->u.copy.to.coll);
    bson_t all = BSON_INITIALIZER, *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1),
                                                     "}", "sort", "{", "_id", BCON_INT32 (1), "}");
    online_writes_t del;
    online_values_t ids;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    int64_t extra = 0;
    bool ok = true;

    j.drive = online_collection (on, s->u.copy.from.db, s->u.copy.from.coll);
    online_docs_init (&pl.took);
    online_values_init (&ids);
    online_writes_init (&del, &j, to, "removing from \"to\"");
    cur = ops->find (on, to, &all, opts);
    while (ok && ops->next (cur, &doc)) {
        bson_iter_t id;
        if (bson_iter_init_find (&id, doc, "_id"))
            online_values_add (&ids, &id);
        if (ids.n >= (uint32_t) (j.batch_size > 0 ? j.batch_size : 1000)) {
            ok = extras_chunk (&pl, &ids.arr, mode, &del, &extra, err);
            bson_destroy (&ids.arr);
            online_values_init (&ids);
        }
    }
    if (!ops->end (cur, &why) && ok)
        ok = online_fail (on, err, &why, "reading \"to\"");
    ok = ok && (!ids.n || extras_chunk (&pl, &ids.arr, mode, &del, &extra, err)) &&
         online_writes_flush (&del, err);
    if (ok && extra)
        online_say (on, mode == ONLINE_SYNC ? ONLINE_SAY_NOTE : ONLINE_SAY_WARN,
                    "%s: step %zu (%s) %s: %lld documents in %s whose sources are gone%s",
                    mode == ONLINE_SYNC ? "sync" : "verify", s->index, s->op,
                    s->u.copy.from.text, (long long) extra, s->u.copy.to.text,
                    mode != ONLINE_SYNC          ? ""
                    : on->run->o->dry_run ? ": a sync would remove them"
                                          : ": removed");
    *differ += extra;
    bson_destroy (&ids.arr);
    bson_destroy (opts);
    bson_destroy (&all);
    online_docs_destroy (&pl.took);
    online_batch_close (&j);
    mongoc_collection_destroy (j.drive);
    mongoc_collection_destroy (to);
    return ok;
}
