/* Writing a batch's results (online_batch.h).
 *
 * Side by side: each result inserted into its target, or deleted and
 * inserted again where its _id is there already (online_side_rewrite), so
 * a batch written twice leaves the same documents, byte for byte.
 *
 * In place: for each document that changes, first its backup (the
 * original, and checksums of what remodel read and wrote:
 * online_write_backup), then $set/$unset of the fields that change
 * (online_write_form; a replacement where those would not give the same
 * bytes), on condition that what the step depends on is still as read
 * (online_write_filter: the _id, the fields the step reads and those it
 * writes; a replacement: all its fields, and a field the application
 * added since given back: online_replace_checked): one the application
 * changed in between is read again and recomputed, never overwritten
 * stale. The decisions are online_write_rule.c's. */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/docpath.h"

/* A document read again because it changed under us is recomputed at most
 * this many times before the run stops naming it. */
#define RETRIES 5

/* Deletes by _id go as one statement of their _ids ({_id: {$in: [...]}})
 * of up to this many, or this many bytes of them: FerretDB reads the whole
 * collection for each statement it cannot push down (a number _id), so a
 * statement a document cost a whole read each (50 of them 15.7 s against
 * 0.6 s for one of the 50 _ids, at 20,000 documents); MongoDB finds
 * either by the _id index. */
#define GONE_MAX 1000
#define GONE_BYTES (1 << 20)

/* A sync's rescan holds its rewrites across a range's batches up to this
 * many results, or bytes of them: a batch's rewrite is a delete (of its
 * _ids) and an insert, and FerretDB reads the whole collection for each
 * delete of number _ids, so 7 changes spread over 20 batches cost 20
 * whole reads (a sync 2 to 3 times the run's time) where a range's cost
 * one. */
#define HOLD_MAX GONE_MAX
#define HOLD_BYTES (8 << 20)

static bool gone_send (online_writes_t *w, bson_error_t *err);

void
online_writes_init (online_writes_t *w, online_job_t *j, mongoc_collection_t *coll,
                    const char *what)
{
    memset (w, 0, sizeof *w);
    online_docs_init (&w->held);
    w->j = j;
    w->coll = coll;
    w->what = what;
}

bool
online_writes_flush (online_writes_t *w, bson_error_t *err)
{
    bson_t reply;
    bson_error_t why;
    bson_iter_t it;
    bool ok;
    if (w->gone && !gone_send (w, err))
        return false;
    if (!w->b)
        return true;
    /* Fenced: a run that lost its lease sends nothing more. */
    if (!online_lease_check (w->j->on, err)) {
        online_ops (w->j->on)->discard (w->b);
        w->b = NULL;
        w->n = 0;
        return false;
    }
    ok = online_ops (w->j->on)->send (w->b, &reply, &why);
    if (!ok)
        online_fail (w->j->on, err, &why, w->what);
    else if (bson_iter_init_find (&it, &reply, "nMatched"))
        w->matched += bson_iter_as_int64 (&it);
    if (ok && bson_iter_init_find (&it, &reply, "nRemoved"))
        w->removed += bson_iter_as_int64 (&it);
    bson_destroy (&reply);
    w->b = NULL;
    w->n = 0;
    return ok;
}

/* The batch a statement goes into (the last one sent when full). */
static online_wbatch_t *
writes_slot (online_writes_t *w, bson_error_t *err)
{
    /* Statements a command: the server's (online_caps_write_chunk). */
    if ((int64_t) w->n >= online_caps_write_chunk (w->j->on) && !online_writes_flush (w, err))
        return NULL;
    if (!w->b)
        w->b = online_ops (w->j->on)->batch (w->j->on, w->coll);
    w->n++;
    return w->b;
}

/* The _ids to delete as one statement, in the batch: a command's
 * statements go in their order (libmongoc sends a run of one kind as one
 * command, the runs in turn), so the deletes keep their place before
 * what is added after them. */
static bool
gone_send (online_writes_t *w, bson_error_t *err)
{
    bson_t sel = BSON_INITIALIZER, cond;
    online_wbatch_t *b;
    bson_error_t why;
    bson_t *gone = w->gone;
    bool ok;
    w->gone = NULL;
    w->n_gone = 0;
    b = writes_slot (w, err);
    BSON_APPEND_DOCUMENT_BEGIN (&sel, "_id", &cond);
    BSON_APPEND_ARRAY (&cond, "$in", gone);
    bson_append_document_end (&sel, &cond);
    ok = b && (online_ops (w->j->on)->add (b, ONLINE_W_DELETE_ALL, &sel, NULL, false, &why) ||
               online_fail (w->j->on, err, &why, w->what));
    bson_destroy (&sel);
    bson_destroy (gone);
    return ok;
}

/* The batch the next statement other than a delete by _id goes into,
 * after those deletes. */
static online_wbatch_t *
writes_next (online_writes_t *w, bson_error_t *err)
{
    if (w->gone && !gone_send (w, err))
        return NULL;
    return writes_slot (w, err);
}

bool
online_writes_delete (online_writes_t *w, const bson_iter_t *id, bson_error_t *err)
{
    char key[16];
    const char *kp;
    size_t kl;
    if (!w->gone)
        w->gone = bson_new ();
    kl = bson_uint32_to_string (w->n_gone++, &kp, key, sizeof key);
    bson_append_iter (w->gone, kp, (int) kl, id);
    if (w->n_gone >= GONE_MAX || w->gone->len >= GONE_BYTES)
        return gone_send (w, err);
    return true;
}

bool
online_writes_add (online_writes_t *w, online_wkind_t kind, const bson_t *sel, const bson_t *doc,
                   bool upsert, bson_error_t *err)
{
    online_wbatch_t *b = writes_next (w, err);
    bson_error_t why;
    return b && (online_ops (w->j->on)->add (b, kind, sel, doc, upsert, &why) ||
                 online_fail (w->j->on, err, &why, w->what));
}

bool
online_writes_delete_where (online_writes_t *w, const bson_t *sel, bson_error_t *err)
{
    return online_writes_add (w, ONLINE_W_DELETE, sel, NULL, false, err);
}

bool
online_writes_upsert (online_writes_t *w, const bson_t *sel, const bson_t *doc, bson_error_t *err)
{
    return online_writes_add (w, ONLINE_W_REPLACE, sel, doc, true, err);
}

bool
online_keeps_changing (const online_job_t *j, const char *ns, const uint8_t *orig, uint32_t olen,
                       int attempts, bson_error_t *err)
{
    bson_t sel;
    char *text;
    online_id_filter (orig, olen, &sel);
    text = bson_as_relaxed_extended_json (&sel, NULL);
    rm_error_set (err, RM_ERR_IO, "%s: %s: document %s keeps changing under the run (%d "
                  "attempts); stopping (the checkpoint stands)", j->on->run->where, ns, text,
                  attempts);
    bson_free (text);
    bson_destroy (&sel);
    return false;
}

/* Side-by-side results are inserted (inserting into a new collection is
 * the fast way: on FerretDB 1.x a hundred times faster than upserts, which
 * it answers by scanning, BENCHMARKS.md), in commands of the server's
 * size (online_caps_insert_chunk). */

/* The error for a document of the step too large to store, naming its
 * namespace and _id; not one to retry. */
bool
online_too_large (online_job_t *j, const char *ns, const uint8_t *doc, uint32_t len,
                  const char *what, uint64_t size, bson_error_t *err)
{
    bson_t sel;
    char *id;
    online_id_filter (doc, len, &sel);
    id = bson_as_relaxed_extended_json (&sel, NULL);
    rm_error_set (err, RM_ERR_FORMAT, "%s: step %zu (%s): %s document %s: %s would be %llu "
                  "bytes, over the %d a document can hold (16 MiB); nothing of its batch was "
                  "written", j->on->run->where, j->s->index, j->s->op, ns, id ? id : "?", what,
                  (unsigned long long) size, ONLINE_DOC_MAX);
    bson_free (id);
    bson_destroy (&sel);
    j->on->transient = false;
    return false;
}

/* Side by side: every result of the batch fits in a document. */
static bool
results_fit (online_job_t *j, const online_docs_t *out, bson_error_t *err)
{
    for (size_t i = 0; i < out->n; i++)
        if (out->docs[i].len > ONLINE_DOC_MAX && out->docs[i].keep >= 0)
            return online_too_large (j, j->p->keep[out->docs[i].keep]->text,
                                     online_doc_bytes (out, i), out->docs[i].len, "the result",
                                     out->docs[i].len, err);
    return true;
}

static bool insert_chunk (online_writes_t *w, const online_docs_t *out, const size_t *idx,
                          size_t from, size_t to, bool rewrite_dups, bson_error_t *err);

/* Each of out's documents idx[0..n) as an upserting replace of its _id,
 * in commands of the server's size. */
static bool
side_replace (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t n,
              bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        online_wbatch_t *b;
        bson_t sel = BSON_INITIALIZER, d;
        bson_iter_t id;
        bson_error_t why;
        const uint8_t *doc = online_doc_bytes (out, idx[i]);
        uint32_t len = out->docs[idx[i]].len;
        if (!rm_doc_field (doc, len, "_id", 3, &id) || !bson_init_static (&d, doc, len)) {
            bson_destroy (&sel);
            continue;
        }
        online_id_append (&sel, &id);
        b = writes_next (w, err);
        ok = b && (online_ops (w->j->on)->add (b, ONLINE_W_REPLACE, &sel, &d, true, &why) ||
                   online_fail (w->j->on, err, &why, w->what));
        bson_destroy (&sel);
    }
    return ok && online_writes_flush (w, err);
}

/* online_side_rewrite now; rewrite_dups: as insert_chunk's (results
 * held from several batches may share an _id: the last one written
 * stays, as when each batch wrote its own). */
static bool
rewrite_now (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t n,
             bool rewrite_dups, bson_error_t *err)
{
    bool ok = true;
    /* Where a replace keeps the given field order (online_caps.c), one
     * replace a result: the result is never missing in between. */
    if (online_caps_replace_keeps_order (w->j->on))
        return side_replace (w, out, idx, n, err);
    for (size_t i = 0; ok && i < n; i++) {
        bson_iter_t id;
        if (rm_doc_field (online_doc_bytes (out, idx[i]), out->docs[idx[i]].len, "_id", 3, &id))
            ok = online_writes_delete (w, &id, err);
    }
    ok = ok && online_writes_flush (w, err);
    for (size_t from = 0, step = (size_t) online_caps_insert_chunk (w->j->on); ok && from < n;
         from += step)
        ok = insert_chunk (w, out, idx, from, from + step < n ? from + step : n, rewrite_dups,
                           err);
    return ok;
}

bool
online_writes_release (online_writes_t *w, bson_error_t *err)
{
    size_t *idx;
    bool ok = true;
    if (w->held.n) {
        idx = bson_malloc (w->held.n * sizeof *idx);
        for (size_t i = 0; i < w->held.n; i++)
            idx[i] = i;
        ok = rewrite_now (w, &w->held, idx, w->held.n, true, err);
        bson_free (idx);
        /* Kept when the write failed: a batch retried (online_retry.c)
         * adds its own again, and the next release sends them all. */
        if (ok)
            online_docs_reset (&w->held);
    }
    return ok && online_writes_flush (w, err);
}

void
online_writes_destroy (online_writes_t *w)
{
    online_docs_destroy (&w->held);
    online_docs_init (&w->held);
    if (w->gone)
        bson_destroy (w->gone);
    w->gone = NULL;
    if (w->b)
        online_ops (w->j->on)->discard (w->b);
    w->b = NULL;
}

bool
online_side_rewrite (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t n,
                     bson_error_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (out->docs[idx[i]].len > ONLINE_DOC_MAX) /* refused before any is deleted */
            return online_too_large (w->j, w->j->p->keep[out->docs[idx[i]].keep]->text,
                                     online_doc_bytes (out, idx[i]), out->docs[idx[i]].len,
                                     "the result", out->docs[idx[i]].len, err);
    if (!w->hold)
        return rewrite_now (w, out, idx, n, false, err);
    for (size_t i = 0; i < n; i++)
        online_docs_add (&w->held, online_doc_bytes (out, idx[i]), out->docs[idx[i]].len,
                         out->docs[idx[i]].keep);
    if (w->held.n >= HOLD_MAX || w->held.bytes.len >= HOLD_BYTES)
        return online_writes_release (w, err);
    return true;
}

/* Inserts the documents of out whose keep is k, idx[from..to), into
 * w's collection; those whose _id is there already (a batch replayed
 * after a crash) are rewritten (online_side_rewrite) when rewrite_dups. */
static bool
insert_chunk (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t from,
              size_t to, bool rewrite_dups, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (w->j->on);
    bson_t reply, d;
    bson_error_t why;
    online_wbatch_t *b;
    bool ok = true;

    b = ops->batch (w->j->on, w->coll);
    for (size_t i = from; ok && i < to; i++)
        ok = bson_init_static (&d, online_doc_bytes (out, idx[i]), out->docs[idx[i]].len) &&
             ops->add (b, ONLINE_W_INSERT, NULL, &d, false, &why);
    if (!ok) {
        ops->discard (b);
        return online_fail (w->j->on, err, &why, "queueing results");
    }
    if (!online_lease_check (w->j->on, err)) {
        ops->discard (b);
        return false;
    }
    if (!ops->send (b, &reply, &why)) {
        /* Only duplicate keys are expected (a batch replayed after its
         * write's reply was lost); those results are rewritten. The
         * failure must be theirs: one the server never answered (the
         * connection lost; the driver's reply holds writeErrors then too,
         * empty) vouches for nothing, and is an error, the batch retried
         * from its start, never counted as written. When the server
         * stopped at its first duplicate despite ordered: false (not every
         * result inserted or refused), the whole chunk is rewritten. */
        size_t *dups = bson_malloc ((to - from) * sizeof *dups), nd;
        switch (online_insert_failed (&reply, why.code, rewrite_dups, idx, from, to, dups, &nd)) {
        case ONLINE_INSERT_REWRITE_DUPS:
            ok = rewrite_now (w, out, dups, nd, false, err);
            break;
        case ONLINE_INSERT_REWRITE_ALL:
            ok = rewrite_now (w, out, idx + from, to - from, false, err);
            break;
        default:
            ok = online_fail (w->j->on, err, &why, w->what);
        }
        bson_free (dups);
    }
    bson_destroy (&reply);
    return ok;
}

void
online_written_split (online_t *on, const rm_step_t *s, const rm_pass_t *p, char *buf, size_t cap)
{
    const rm_nsref_t *made[8];
    const char *keys[8];
    size_t nm = rm_step_creates (s, made, keys, 8), at = 0;

    *buf = '\0';
    if (p->n_keep < 2)
        return;
    for (size_t k = 0; k < p->n_keep; k++) {
        char target[400];
        const char *key = NULL;
        mongoc_collection_t *c;
        bson_t all = BSON_INITIALIZER;
        int64_t n;
        rm_name_target (&on->run->names, s, p->keep[k], target, sizeof target);
        c = online_collection (on, p->keep[k]->db, target);
        n = online_ops (on)->count (on, c, &all, NULL);
        mongoc_collection_destroy (c);
        if (n < 0) {
            *buf = '\0';
            return;
        }
        /* A namespace the step makes is named, then its plan key in
         * quotes (after the name: a key called "to" read "1 to to x"),
         * the one it fills (into) by its name alone. */
        for (size_t m = 0; m < nm; m++)
            if (!strcmp (made[m]->text, p->keep[k]->text))
                key = keys[m];
        at += (size_t) snprintf (buf + at, at < cap ? cap - at : 0, "%s%lld to %s%s%s%s",
                                 k ? ", " : " (", (long long) n, p->keep[k]->text,
                                 key ? " \"" : "", key ? key : "", key ? "\"" : "");
    }
    if (at < cap)
        snprintf (buf + at, cap - at, ")");
}

bool
online_side_write (online_writes_t *targets, const online_docs_t *out, bson_error_t *err)
{
    size_t *idx, step = (size_t) online_caps_insert_chunk (targets[0].j->on);
    bool ok = results_fit (targets[0].j, out, err);
    idx = ok ? bson_malloc ((out->n + 1) * sizeof *idx) : NULL;
    for (size_t k = 0; ok && k < targets[0].j->p->n_keep; k++) {
        size_t n = 0;
        for (size_t i = 0; i < out->n; i++)
            if (out->docs[i].keep == (int) k)
                idx[n++] = i;
        for (size_t from = 0; ok && from < n; from += step)
            ok = insert_chunk (&targets[k], out, idx, from, from + step < n ? from + step : n,
                               true, err);
    }
    bson_free (idx);
    return ok;
}

ssize_t
online_result_of (const online_docs_t *in, size_t i, const online_docs_t *out, size_t *at)
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

bool
online_same_doc (const online_docs_t *a, size_t i, const online_docs_t *b, size_t k)
{
    return a->docs[i].len == b->docs[k].len &&
           memcmp (online_doc_bytes (a, i), online_doc_bytes (b, k), a->docs[i].len) == 0;
}

int64_t
online_would_change (const online_docs_t *in, const online_docs_t *out)
{
    size_t at = 0;
    int64_t n = 0;
    for (size_t i = 0; i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        n += r >= 0 && !online_same_doc (in, i, out, (size_t) r);
    }
    return n;
}

/* The application's writes a replacement of doc by want undid, given
 * back: each field of pre (the document it replaced) that doc lacks or
 * holds otherwise, by a $set on condition that it still holds what want
 * gave it (a later write of the application's stands). Names a $set cannot
 * take stay as the replacement left them. *undid: whether there was one. */
static bool
give_back (online_t *on, mongoc_collection_t *c, const uint8_t *doc, uint32_t len,
           const uint8_t *pre, uint32_t plen, const uint8_t *want, uint32_t wlen, bool *undid,
           bson_error_t *err)
{
    bson_t sel, u;
    bson_error_t why;
    bool ok = true;

    *undid = online_write_give_back (doc, len, pre, plen, want, wlen, &sel, &u);
    if (*undid) {
        ok = online_lease_check (on, err) &&
             (online_ops (on)->write (on, c, ONLINE_W_UPDATE, &sel, &u, false, false, NULL, &why) ||
              online_fail (on, err, &why, "giving back an application's write"));
    }
    bson_destroy (&sel);
    bson_destroy (&u);
    return ok;
}

/* A replacement of doc by want, on condition that the document still
 * holds each field of doc as read. A filter tests only the fields it
 * names: one the application added since would still match and go with
 * the replacement. So it is a findAndModify, which answers with the
 * document it replaced (atomically, where the server's updates are):
 * whatever of the application's that shows is given back at once
 * (give_back), and *undid is true then, so that run reads the document
 * again and checks it (redo). *replaced: whether it matched. Rollback's
 * whole-document restores use it too (online_finalize.c). */
bool
online_replace_checked (online_t *on, mongoc_collection_t *c, const uint8_t *doc, uint32_t len,
                        const uint8_t *want, uint32_t wlen, bool *replaced, bool *undid,
                        bson_error_t *err)
{
    bson_t sel, w, reply;
    bson_iter_t it;
    bson_error_t why;
    bool ok;

    *replaced = *undid = false;
    bson_init_static (&sel, doc, len);
    bson_init_static (&w, want, wlen);
    ok = online_lease_check (on, err);
    if (ok) {
        /* reply is set either way */
        if (!online_ops (on)->replace_if (on, c, &sel, &w, &reply, &why)) {
            ok = online_fail (on, err, &why, "replacing a document");
        } else if (bson_iter_init_find (&it, &reply, "value") && BSON_ITER_HOLDS_DOCUMENT (&it)) {
            const uint8_t *pre;
            uint32_t plen;
            bson_iter_document (&it, &plen, &pre);
            *replaced = true;
            ok = give_back (on, c, doc, len, pre, plen, want, wlen, undid, err);
        }
        bson_destroy (&reply);
    }
    return ok;
}

/* The conditional write of want over doc: an update of the fields that
 * change, queued in w, where it can be; else a replacement, sent now
 * (online_replace_checked), *replaced counting those that replaced. */
static bool
write_one (online_inplace_t *ip, online_writes_t *w, const uint8_t *doc, uint32_t len,
           const uint8_t *want, uint32_t wlen, int64_t *replaced, bson_error_t *err)
{
    online_wbatch_t *b;
    bson_t sel, u;
    bson_error_t why;
    bool ok, matched, undid;
    if (online_write_form (doc, len, want, wlen, &u) == ONLINE_WRITE_REPLACE) {
        bson_destroy (&u);
        ok = online_replace_checked (ip->j->on, ip->j->drive, doc, len, want, wlen, &matched,
                                     &undid, err);
        *replaced += matched && !undid;
        return ok;
    }
    if (!(b = writes_next (w, err))) {
        bson_destroy (&u);
        return false;
    }
    online_write_filter (ip->reads, ip->j->in[ip->j->p->drive]->text, doc, len, &u, &sel);
    ok = online_ops (ip->j->on)->add (b, ONLINE_W_UPDATE, &sel, &u, false, &why) ||
         online_fail (ip->j->on, err, &why, "queueing a write");
    bson_destroy (&sel);
    bson_destroy (&u);
    return ok;
}

/* In place: the document doc becomes want, after its backup; both must
 * fit in a document, checked before anything of the batch is written. */
static bool
inplace_fits (online_job_t *j, const uint8_t *doc, uint32_t len, const uint8_t *want,
              uint32_t wlen, bson_error_t *err)
{
    const char *ns = j->in[j->p->drive]->text;
    uint64_t size;
    switch (online_write_fits (doc, len, want, wlen, &size)) {
    case ONLINE_WRITE_DOC_TOO_LARGE:
        return online_too_large (j, ns, doc, len, "the document as the step makes it", size, err);
    case ONLINE_WRITE_BACKUP_TOO_LARGE:
        return online_too_large (j, ns, doc, len, "its backup (the original and checksums, in the state "
                          "database)", size, err);
    default:
        return true;
    }
}

/* The document whose conditional replace matched nothing: it changed or
 * went since it was read. Read it again and redo it. */
static bool
redo (online_inplace_t *ip, const uint8_t *orig, uint32_t olen, bson_error_t *err)
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
        bson_t cur, want, reply, sel, u;
        bson_iter_t it;
        bool done, matched, undid;
        if (rc <= 0)
            return rc == 0; /* gone: nothing to do */
        if (!online_batch_compute (j, &ip->again, &ip->again_out, err))
            return false;
        r = online_result_of (&ip->again, 0, &ip->again_out, &at);
        if (r < 0 || online_same_doc (&ip->again, 0, &ip->again_out, (size_t) r))
            return true; /* already what the step makes of it */
        if (!inplace_fits (j, online_doc_bytes (&ip->again, 0), ip->again.docs[0].len,
                           online_doc_bytes (&ip->again_out, (size_t) r), ip->again_out.docs[r].len,
                           err))
            return false;
        online_write_backup (online_doc_bytes (&ip->again, 0), ip->again.docs[0].len,
                       online_doc_bytes (&ip->again_out, (size_t) r), ip->again_out.docs[r].len,
                       &sel, &u);
        done = online_lease_check (j->on, err);
        if (!done) {
            bson_destroy (&sel);
            bson_destroy (&u);
            return false;
        }
        done = online_ops (j->on)->write (j->on, ip->backup, ONLINE_W_UPDATE, &sel, &u, true,
                                          false, NULL, &why);
        bson_destroy (&sel);
        bson_destroy (&u);
        if (!done)
            return online_fail (j->on, err, &why, "saving an original");
        bson_init_static (&cur, online_doc_bytes (&ip->again, 0), ip->again.docs[0].len);
        bson_init_static (&want, online_doc_bytes (&ip->again_out, (size_t) r),
                          ip->again_out.docs[r].len);
        if (!online_lease_check (j->on, err))
            return false;
        if (online_write_form (bson_get_data (&cur), cur.len, bson_get_data (&want), want.len,
                               &u) == ONLINE_WRITE_REPLACE) {
            bson_destroy (&u);
            if (!online_replace_checked (j->on, j->drive, bson_get_data (&cur), cur.len,
                                         bson_get_data (&want), want.len, &matched, &undid, err))
                return false;
            if (matched && !undid)
                return true;
            continue;
        }
        online_write_filter (ip->reads, j->in[j->p->drive]->text, bson_get_data (&cur), cur.len, &u,
                             &sel);
        done = online_ops (j->on)->write (j->on, j->drive, ONLINE_W_UPDATE, &sel, &u, false, false,
                                          &reply, &why);
        bson_destroy (&sel);
        bson_destroy (&u);
        if (!done) {
            bson_destroy (&reply);
            return online_fail (j->on, err, &why, "replacing a document");
        }
        done = bson_iter_init_find (&it, &reply, "matchedCount") && bson_iter_as_int64 (&it) == 1;
        bson_destroy (&reply);
        if (done)
            return true;
    }
    return online_keeps_changing (j, j->in[j->p->drive]->text, orig, olen, RETRIES, err);
}

bool
online_inplace_write (online_inplace_t *ip, const online_docs_t *in, const online_docs_t *out,
                      bson_error_t *err)
{
    online_job_t *j = ip->j;
    online_writes_t save, repl;
    size_t at = 0, changed = 0;
    int64_t replaced = 0;
    bool ok = true;

    for (size_t i = 0; i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        if (r >= 0 && !online_same_doc (in, i, out, (size_t) r) &&
            !inplace_fits (j, online_doc_bytes (in, i), in->docs[i].len,
                           online_doc_bytes (out, (size_t) r), out->docs[r].len, err))
            return false;
    }
    at = 0;
    ip->reads = rm_fieldcheck_reads (j->s);
    online_writes_init (&save, j, ip->backup, "saving the originals");
    online_writes_init (&repl, j, j->drive, "replacing documents");
    /* The originals first (a crash between the two keeps them), then the
     * documents, each in commands of the server's size
     * (online_caps_write_chunk). */
    for (int pass = 0; ok && pass < 2; pass++) {
        for (size_t i = 0; ok && i < in->n; i++) {
            ssize_t r = online_result_of (in, i, out, &at);
            const uint8_t *doc = online_doc_bytes (in, i);
            uint32_t len = in->docs[i].len;
            online_wbatch_t *b;
            bson_error_t why;
            if (r < 0 || online_same_doc (in, i, out, (size_t) r))
                continue;
            changed += pass;
            if (pass) {
                ok = write_one (ip, &repl, doc, len, online_doc_bytes (out, (size_t) r),
                                out->docs[r].len, &replaced, err);
                continue;
            }
            bson_t sel, u;
            if (!(b = writes_next (&save, err))) {
                ok = false;
                break;
            }
            online_write_backup (doc, len, online_doc_bytes (out, (size_t) r), out->docs[r].len,
                                 &sel, &u);
            ok = online_ops (j->on)->add (b, ONLINE_W_UPDATE, &sel, &u, true, &why) ||
                 online_fail (j->on, err, &why, "queueing a write");
            bson_destroy (&sel);
            bson_destroy (&u);
        }
        ok = ok && online_writes_flush (pass ? &repl : &save, err);
    }
    j->written += (int64_t) changed;
    /* Some changed in between: each is checked and redone alone. */
    at = 0;
    for (size_t i = 0; ok && repl.matched + replaced < (int64_t) changed && i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        if (r >= 0 && !online_same_doc (in, i, out, (size_t) r))
            ok = redo (ip, online_doc_bytes (in, i), in->docs[i].len, err);
    }
    rm_fieldcheck_destroy (ip->reads);
    ip->reads = NULL;
    return ok;
}
