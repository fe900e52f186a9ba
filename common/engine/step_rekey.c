/* rekey (remodel/plan.h's rm_rekey_t), store to store, in bounded memory:
 *   1. each document of `from` through `id`: its new _id's canonical key
 *      (remodel/value.h: equal exactly when a unique index on _id finds
 *      them equal) into a sorter, with its old _id for the message; with
 *      references, the map from old key to new _id into another, and the
 *      references among `from`'s own fields (those named in `to`);
 *   2. the first sorter read in order: two records of one key stop the
 *      run, both documents named, before anything is written;
 *   3. `from` read again, each document re-keyed (`id` evaluated again,
 *      rather than held) and its references rewritten, into `to`; then
 *      the other namespaces' references (step_rekey_refs.c); then `from`
 *      emptied unless keepSource.
 * The new _id takes the old one's place in the document, as the server's
 * $set of _id does; every other field stays byte for byte. The keys, the
 * namespaces and the refusals online are step_rekey_plan.c's. */
#include <string.h>

#include "docbuf.h"
#include "rekey_refs.h"
#include "sortkey.h"
#include "step_class.h"

typedef struct {
    rm_engine_t *e;
    const rm_step_t *s;
    const rm_rekey_t *x;
    rm_ens_t *from, *to;
    rm_expr_ctx_t *cx;
    rm_sorter_t *bynew, *map; /* map: NULL without references */
    rm_rekey_refs_t *refs;
    rm_buf_t doc;           /* the document re-keyed */
    rm_buf_t val;           /* {o: old _id, n: new _id} */
    rm_buf_t key_new, key_old;
} rekeyer_t;

/* Why a value cannot be an _id (a server refuses each), or NULL. */
static const char *
bad_id (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_EOD: return "nothing (a missing value)";
    case BSON_TYPE_ARRAY: return "an array";
    case BSON_TYPE_UNDEFINED: return "undefined";
    case BSON_TYPE_REGEX: return "a regular expression";
    default: return NULL;
    }
}

/* doc re-keyed into k->doc, {o, n} into k->val, both _ids' canonical keys
 * into k->key_old and k->key_new. */
static bool
rekey_doc (rekeyer_t *k, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    const char *name = k->from->stats->name, *why;
    bson_iter_t it, old, nid;
    bson_value_t v;
    rm_raw_value_t raw;
    size_t start;
    bool replaced = false;

    rm_expr_ctx_reset (k->cx);
    if (!rm_doc_field (doc, len, "_id", 3, &old)) {
        rm_error_set (err, RM_ERR_DATA, "has no _id to replace");
        return rm_doc_error (err, name, "document", doc, len);
    }
    if (!rm_expr_eval (k->cx, k->x->id, doc, len, &v, err))
        return rm_doc_error (err, name, "document", doc, len);
    if ((why = bad_id (v.value_type))) {
        rm_error_set (err, RM_ERR_DATA, "\"id\" gives %s, which no _id can be", why);
        return rm_doc_error (err, name, "document", doc, len);
    }
    rm_expr_raw (k->cx, &v, &raw);
    rm_buf_reset (&k->doc);
    start = rm_docbuf_begin (&k->doc);
    if (bson_iter_init_from_data (&it, doc, len))
        while (bson_iter_next (&it)) {
            if (replaced || strcmp (bson_iter_key (&it), "_id")) {
                rm_docbuf_copy (&k->doc, &it);
                continue;
            }
            rm_docbuf_key (&k->doc, (bson_type_t) raw.type, "_id");
            rm_buf_append (&k->doc, raw.data, raw.len);
            replaced = true;
        }
    rm_docbuf_end (&k->doc, start);
    rm_doc_field (k->doc.data, k->doc.len, "_id", 3, &nid);
    rm_buf_reset (&k->val);
    start = rm_docbuf_begin (&k->val);
    rm_docbuf_copy_as (&k->val, RM_REKEY_OLD, &old);
    rm_docbuf_copy_as (&k->val, RM_REKEY_NEW, &nid);
    rm_docbuf_end (&k->val, start);
    rm_buf_reset (&k->key_new);
    rm_key_append (&k->key_new, &nid);
    rm_buf_reset (&k->key_old);
    rm_key_append (&k->key_old, &old);
    return true;
}

/* Step 1. */
static bool
pass_keys (rekeyer_t *k, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (k->from->store, err);
    rm_frame_t f;
    uint64_t seq = 0;
    int rc = 0;
    bool ok = in != NULL;

    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        ok = rekey_doc (k, f.data, f.len, err) &&
             rm_sorter_add (k->bynew, k->key_new.data, k->key_new.len, k->val.data, k->val.len,
                            err) &&
             (!k->map || rm_sorter_add (k->map, k->key_old.data, k->key_old.len, k->val.data,
                                        k->val.len, err)) &&
             (!k->refs || rm_rekey_refs_feed_to (k->refs, seq, k->doc.data,
                                                 (uint32_t) k->doc.len, err));
        seq++;
    }
    rm_instream_close (in);
    return ok && rc == 0 && rm_sorter_finish (k->bynew, err) &&
           (!k->map || rm_sorter_finish (k->map, err));
}

/* {_id: <field f of the record value v>} as relaxed JSON: bson_free it. */
static char *
id_json (const uint8_t *v, size_t vlen, const char *f)
{
    bson_iter_t it;
    bson_t b;
    char *json = NULL;
    bson_init (&b);
    if (rm_doc_field (v, vlen, f, strlen (f), &it)) {
        bson_append_iter (&b, "_id", 3, &it);
        json = bson_as_relaxed_extended_json (&b, NULL);
    }
    bson_destroy (&b);
    return json ? json : bson_strdup ("?");
}

static bool
dup_error (rekeyer_t *k, const rm_buf_t *first, const uint8_t *v, size_t vlen,
           bson_error_t *err)
{
    char *a = id_json (first->data, first->len, RM_REKEY_OLD);
    char *b = id_json (v, vlen, RM_REKEY_OLD);
    char *n = id_json (v, vlen, RM_REKEY_NEW);
    rm_error_set (err, RM_ERR_DATA, "%s: documents %s and %s both get %s in %s: give \"id\" "
                  "an expression unique to each document", k->x->from.text, a, b, n,
                  k->x->to.text);
    bson_free (a);
    bson_free (b);
    bson_free (n);
    return false;
}

/* Step 2: the first two documents given one _id, if any. */
static bool
check_dups (rekeyer_t *k, bson_error_t *err)
{
    const uint8_t *key, *val;
    size_t klen, vlen;
    bool have = false;
    int rc;

    while ((rc = rm_sorter_next (k->bynew, &key, &klen, &val, &vlen, err)) > 0) {
        if (have && rm_keycmp (key, klen, k->key_new.data, k->key_new.len) == 0)
            return dup_error (k, &k->val, val, vlen, err);
        rm_buf_reset (&k->key_new);
        rm_buf_append (&k->key_new, key, klen);
        rm_buf_reset (&k->val);
        rm_buf_append (&k->val, val, vlen);
        have = true;
    }
    return rc == 0;
}

/* Step 3 for `to`. */
static bool
pass_write (rekeyer_t *k, bson_error_t *err)
{
    rm_step_run_t *run = rm_engine_step_run (k->e, k->s);
    rm_store_t *made = rm_engine_store_new (k->e, k->to, err);
    rm_instream_t *in = made ? rm_store_open (k->from->store, err) : NULL;
    rm_frame_t f;
    uint64_t seq = 0;
    int rc = 0;
    bool ok = in != NULL;

    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        const uint8_t *out;
        size_t out_len;
        ok = rekey_doc (k, f.data, f.len, err);
        out = k->doc.data;
        out_len = k->doc.len;
        ok = ok && (!k->refs || rm_rekey_refs_apply_to (k->refs, seq, k->doc.data,
                                                        (uint32_t) k->doc.len, &out, &out_len,
                                                        err));
        ok = ok && rm_store_add (made, out, (uint32_t) out_len, err);
        run->selected++;
        seq++;
    }
    rm_instream_close (in);
    if (!ok || rc < 0) {
        rm_store_destroy (made);
        return false;
    }
    return rm_engine_store_swap (k->to, made, err);
}

/* Without keepSource, `from` ends empty, as a move without a filter
 * leaves it. */
static bool
empty_from (rekeyer_t *k, bson_error_t *err)
{
    rm_store_t *none;
    if (k->x->keep_source)
        return true;
    none = rm_engine_store_new (k->e, k->from, err);
    return none && rm_engine_store_swap (k->from, none, err);
}

bool
rm_step_rekey_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rekeyer_t k;
    size_t budget = rm_engine_sort_budget (e) / 2;
    bool ok;

    memset (&k, 0, sizeof k);
    k.e = e;
    k.s = s;
    k.x = &s->u.rekey;
    k.from = rm_engine_find (e, &k.x->from);
    k.to = rm_engine_find (e, &k.x->to);
    k.cx = rm_expr_ctx_new (rm_engine_now (e));
    k.bynew = rm_sorter_new (budget, e->opts.tmpdir, NULL, NULL);
    k.refs = rm_rekey_refs_new (e, s);
    if (k.refs)
        k.map = rm_sorter_new (budget, e->opts.tmpdir, NULL, NULL);
    rm_buf_init (&k.doc);
    rm_buf_init (&k.val);
    rm_buf_init (&k.key_new);
    rm_buf_init (&k.key_old);
    rm_engine_step_run (e, s)->selects = true;
    /* the sorters take --memory: the stores in memory go to their files */
    ok = rm_engine_stores_fit (e, e->opts.memory, NULL, err) && pass_keys (&k, err) &&
         check_dups (&k, err) &&
         (!k.refs || rm_rekey_refs_match (k.refs, k.map, err)) && pass_write (&k, err) &&
         (!k.refs || rm_rekey_refs_rewrite (k.refs, err)) && empty_from (&k, err);
    rm_engine_stores_free (e);
    if (rm_sorter_spilled_runs (k.bynew) || (k.map && rm_sorter_spilled_runs (k.map)) ||
        rm_rekey_refs_spilled (k.refs))
        e->spilled = true;
    rm_expr_ctx_destroy (k.cx);
    rm_sorter_destroy (k.bynew);
    rm_sorter_destroy (k.map);
    rm_rekey_refs_destroy (k.refs);
    rm_buf_destroy (&k.doc);
    rm_buf_destroy (&k.val);
    rm_buf_destroy (&k.key_new);
    rm_buf_destroy (&k.key_old);
    return ok;
}

/* `to` is a new collection: its _id index only (the source's others name
 * fields of documents keyed otherwise; a plan adds what it needs). */
void
rm_rekey_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in)
{
    rm_engine_add_created (out, in, &s->u.rekey.to, NULL);
}
