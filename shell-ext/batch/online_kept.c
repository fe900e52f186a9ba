/* run --keep-before (online_batch.h): what a batch's set overwrites and
 * its delete drops, kept in the state database beside the results, so
 * that rollback --carry-writes can give it back (online_carry.c).
 *
 * One collection a plan, <state-db>.kept_<plan id>, written a batch at a
 * time with the batch's results: per document of a set's namespace,
 * {_id: {s: step, i: its _id}, s, old: {the fields the set writes that
 * it had, as they were}, new: {what the set made of those}} (one with
 * none of them too: the carry tells a document the application inserted
 * after the switch by its having no entry); per document a delete
 * dropped, {_id: {s, i}, s, doc: the document}. On the server, never in
 * memory past a batch. A sync (follow, finalize's drain) rewrites the
 * entries of the drivers it recomputes and deletes those of drivers gone
 * or no longer dropped: at the switch they are the sources' as they were
 * then. */
#include <stdlib.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/docpath.h"

bool
online_kept_step (const online_t *on, const rm_step_t *s)
{
    if (!on->run->keep_before || on->run->o->in_place)
        return false;
    if (s->kind == RM_STEP_DELETE)
        return true;
    if (s->kind != RM_STEP_SET)
        return false;
    /* Its inverse restores top-level fields only (rm_set_inverse). */
    for (size_t i = 0; i < s->u.fields.n; i++)
        if (s->u.fields.paths[i].n != 1)
            return false;
    return true;
}

void
online_kept_key (bson_t *b, const char *name, size_t step, const bson_iter_t *id)
{
    bson_t k;
    BSON_APPEND_DOCUMENT_BEGIN (b, name, &k);
    BSON_APPEND_INT64 (&k, "s", (int64_t) step);
    bson_append_iter (&k, "i", 1, id);
    bson_append_document_end (b, &k);
}

/* out's kept results by their _ids' hashes, sorted (a batch's: a
 * delete's results skip the documents it dropped, so places differ). */
typedef struct {
    uint64_t h;
    size_t i;
} by_t;

static int
by_cmp (const void *x, const void *y)
{
    const by_t *a = x, *b = y;
    return a->h < b->h ? -1 : a->h > b->h;
}

static by_t *
results_by (const online_docs_t *out, size_t *n)
{
    by_t *by = bson_malloc ((out->n + 1) * sizeof *by);
    *n = 0;
    for (size_t k = 0; k < out->n; k++)
        if (out->docs[k].keep >= 0) {
            by[*n].h = online_id_hash (online_doc_bytes (out, k), out->docs[k].len);
            by[(*n)++].i = k;
        }
    qsort (by, *n, sizeof *by, by_cmp);
    return by;
}

/* The result of in's document i among out's (the same place first: a
 * set keeps its batch's order), NULL when there is none. */
static const uint8_t *
result_of (const online_docs_t *in, size_t i, const online_docs_t *out, const by_t *by, size_t nb,
           uint32_t *len)
{
    const uint8_t *d = online_doc_bytes (in, i);
    uint32_t dl = in->docs[i].len;
    by_t k = {online_id_hash (d, dl), 0};
    const by_t *at;
    if (i < out->n && online_same_id (d, dl, online_doc_bytes (out, i), out->docs[i].len)) {
        *len = out->docs[i].len;
        return online_doc_bytes (out, i);
    }
    at = nb ? bsearch (&k, by, nb, sizeof *by, by_cmp) : NULL;
    while (at && at > by && at[-1].h == k.h)
        at--;
    for (; at && at < by + nb && at->h == k.h; at++)
        if (online_same_id (d, dl, online_doc_bytes (out, at->i), out->docs[at->i].len)) {
            *len = out->docs[at->i].len;
            return online_doc_bytes (out, at->i);
        }
    return NULL;
}

/* The entry of a set's document (doc, its result res) into e. */
static void
set_entry (const rm_step_t *s, const uint8_t *doc, uint32_t len, const uint8_t *res,
           uint32_t rlen, bson_t *e)
{
    const rm_fields_t *f = &s->u.fields;
    bson_t old, made;

    BSON_APPEND_DOCUMENT_BEGIN (e, "old", &old);
    for (size_t i = 0; i < f->n; i++) {
        bson_iter_t v;
        if (rm_doc_field (doc, len, f->paths[i].text, strlen (f->paths[i].text), &v))
            bson_append_iter (&old, f->paths[i].text, -1, &v);
    }
    bson_append_document_end (e, &old);
    BSON_APPEND_DOCUMENT_BEGIN (e, "new", &made);
    for (size_t i = 0; res && i < f->n; i++) {
        bson_iter_t v, was;
        if (rm_doc_field (doc, len, f->paths[i].text, strlen (f->paths[i].text), &was) &&
            rm_doc_field (res, rlen, f->paths[i].text, strlen (f->paths[i].text), &v))
            bson_append_iter (&made, f->paths[i].text, -1, &v);
    }
    bson_append_document_end (e, &made);
}

/* One driver's entry written (e not empty) or deleted. */
static bool
entry_put (online_writes_t *w, size_t step, const bson_iter_t *id, const bson_t *e, bool del,
           bson_error_t *err)
{
    bson_t sel = BSON_INITIALIZER, doc = BSON_INITIALIZER;
    bool ok;
    online_kept_key (&sel, "_id", step, id);
    if (del) {
        ok = online_writes_delete_where (w, &sel, err);
    } else {
        online_kept_key (&doc, "_id", step, id);
        BSON_APPEND_INT64 (&doc, "s", (int64_t) step);
        bson_concat (&doc, e);
        ok = online_writes_upsert (w, &sel, &doc, err);
    }
    bson_destroy (&doc);
    bson_destroy (&sel);
    return ok;
}

static int
hash_cmp (const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *) x, b = *(const uint64_t *) y;
    return a < b ? -1 : a > b;
}

/* A sync's drivers gone (among ids, not read into in): their entries
 * deleted. By their _ids' hashes, sorted once a batch; two _ids of one
 * hash leave an entry, which the carry passes over: a set's is read for
 * a document there only, a delete's document given back only where its
 * original is. */
static bool
gone_forget (online_writes_t *w, size_t step, const bson_t *ids, const online_docs_t *in,
             bson_error_t *err)
{
    uint64_t *h = bson_malloc ((in->n + 1) * sizeof *h);
    bson_iter_t it;
    bool ok = true;
    for (size_t i = 0; i < in->n; i++)
        h[i] = online_id_hash (online_doc_bytes (in, i), in->docs[i].len);
    qsort (h, in->n, sizeof *h, hash_cmp);
    bson_iter_init (&it, ids);
    while (ok && bson_iter_next (&it)) {
        uint64_t k = online_value_hash (&it);
        if (!bsearch (&k, h, in->n, sizeof *h, hash_cmp))
            ok = entry_put (w, step, &it, NULL, true, err);
    }
    bson_free (h);
    return ok;
}

bool
online_kept_batch (online_job_t *j, const bson_t *ids, const online_docs_t *in,
                   const online_docs_t *out, bool sync, bson_error_t *err)
{
    online_t *on = j->on;
    const rm_step_t *s = j->s;
    online_writes_t w;
    mongoc_collection_t *c;
    char name[160];
    bson_t e = BSON_INITIALIZER;
    bool ok = true;
    by_t *by;
    size_t nb;

    if (!online_kept_step (on, s) || on->run->o->dry_run)
        return true;
    by = results_by (out, &nb);
    online_kept_name (on, name, sizeof name);
    c = online_collection (on, on->run->o->state_db, name);
    online_writes_init (&w, j, c, "keeping what the step overwrites (--keep-before)");
    for (size_t i = 0; ok && i < in->n; i++) {
        const uint8_t *d = online_doc_bytes (in, i), *res;
        uint32_t len = in->docs[i].len, rlen = 0;
        bson_iter_t id;
        bool keep;
        if (!rm_doc_field (d, len, "_id", 3, &id))
            continue;
        res = result_of (in, i, out, by, nb, &rlen);
        bson_reinit (&e);
        if (s->kind == RM_STEP_DELETE) {
            bson_t whole;
            keep = !res;
            if (keep && bson_init_static (&whole, d, len))
                BSON_APPEND_DOCUMENT (&e, "doc", &whole);
        } else {
            set_entry (s, d, len, res, rlen, &e);
            keep = true;
        }
        /* A run's first write of an entry needs no delete before it. */
        if (keep || sync)
            ok = entry_put (&w, s->index, &id, &e, !keep, err);
    }
    /* A sync's drivers gone since: their entries with them. */
    if (ok && ids && sync)
        ok = gone_forget (&w, s->index, ids, in, err);
    ok = ok && online_writes_flush (&w, err);
    if (!ok && w.b)
        online_ops (on)->discard (w.b);
    bson_destroy (&e);
    bson_free (by);
    mongoc_collection_destroy (c);
    return ok;
}
