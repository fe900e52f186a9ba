/* rekey's references: see rekey_refs.h. A record of step 1 is keyed by
 * the old key and carries where it stands, [target][seq][ref][slot], each
 * big-endian, so that step 2's results sort back by target, then document,
 * then reference and element; slot SCALAR is a reference holding one key,
 * any other the index of a key in an array. No document allocates: the
 * buffers and the list of a document's hits grow to the largest. */
#include <string.h>

#include "docbuf.h"
#include "rekey_refs.h"
#include "sortkey.h"
#include "step_class.h"

#define SCALAR UINT32_MAX
#define WHERE 20 /* [target: 4][seq: 8][ref: 4][slot: 4] */

typedef struct {
    uint32_t ref, slot;
    size_t off, len; /* the new _id in held: [type][bytes]; len 0: none */
} hit_t;

struct rm_rekey_refs {
    rm_engine_t *e;
    const rm_step_t *s;
    const rm_rekey_t *x;
    rm_step_run_t *run;
    const rm_nsref_t *targets[3]; /* `to`, then the other namespaces */
    size_t n_targets;
    uint32_t *target_of; /* per reference */
    uint64_t *kept;      /* per reference: keys onMissing "keep" left */
    rm_sorter_t *refs, *matches;
    rm_buf_t key, rec, held, out[2], arr;
    const uint8_t *mk, *mv; /* the match read ahead */
    size_t mkl, mvl;
    int mrc;
    bool started;
    hit_t *hits;
    size_t n_hits, cap_hits;
};

rm_rekey_refs_t *
rm_rekey_refs_new (rm_engine_t *e, const rm_step_t *s)
{
    const rm_rekey_t *x = &s->u.rekey;
    rm_rekey_refs_t *r;
    size_t budget = rm_engine_sort_budget (e) / 2;

    if (!x->n_refs)
        return NULL;
    r = bson_malloc0 (sizeof *r);
    r->e = e;
    r->s = s;
    r->x = x;
    r->run = rm_engine_step_run (e, s);
    r->targets[r->n_targets++] = &x->to;
    r->target_of = bson_malloc0 (x->n_refs * sizeof *r->target_of);
    r->kept = bson_malloc0 (x->n_refs * sizeof *r->kept);
    for (size_t i = 0; i < x->n_refs; i++) {
        size_t t = 0;
        while (t < r->n_targets && strcmp (r->targets[t]->text, x->refs[i].in.text))
            t++;
        /* plan parsing allows two namespaces besides `to` */
        if (t == r->n_targets)
            r->targets[r->n_targets++] = &x->refs[i].in;
        r->target_of[i] = (uint32_t) t;
    }
    r->refs = rm_sorter_new (budget, e->opts.tmpdir, NULL, NULL);
    r->matches = rm_sorter_new (budget, e->opts.tmpdir, NULL, NULL);
    rm_buf_init (&r->key);
    rm_buf_init (&r->rec);
    rm_buf_init (&r->held);
    rm_buf_init (&r->out[0]);
    rm_buf_init (&r->out[1]);
    rm_buf_init (&r->arr);
    return r;
}

void
rm_rekey_refs_destroy (rm_rekey_refs_t *r)
{
    if (!r)
        return;
    rm_sorter_destroy (r->refs);
    rm_sorter_destroy (r->matches);
    rm_buf_destroy (&r->key);
    rm_buf_destroy (&r->rec);
    rm_buf_destroy (&r->held);
    rm_buf_destroy (&r->out[0]);
    rm_buf_destroy (&r->out[1]);
    rm_buf_destroy (&r->arr);
    bson_free (r->target_of);
    bson_free (r->kept);
    bson_free (r->hits);
    bson_free (r);
}

/* null and undefined are no reference: they stay, and are not counted. */
static bool
is_key (const bson_iter_t *it)
{
    return !BSON_ITER_HOLDS_NULL (it) && !BSON_ITER_HOLDS_UNDEFINED (it);
}

static bool
add_key (rm_rekey_refs_t *r, const bson_iter_t *it, uint32_t t, uint64_t seq, uint32_t ref,
         uint32_t slot, bson_error_t *err)
{
    uint8_t where[WHERE];
    rm_put_be32 (where, t);
    rm_put_be64 (where + 4, seq);
    rm_put_be32 (where + 12, ref);
    rm_put_be32 (where + 16, slot);
    rm_buf_reset (&r->key);
    rm_key_append (&r->key, it);
    return rm_sorter_add (r->refs, r->key.data, r->key.len, where, WHERE, err);
}

/* Step 1 for one document of target t: the keys each of its references
 * holds (a document without the path holds none). */
static bool
feed_doc (rm_rekey_refs_t *r, uint32_t t, uint64_t seq, const uint8_t *doc, uint32_t len,
          bson_error_t *err)
{
    bool ok = true;
    for (uint32_t i = 0; ok && i < r->x->n_refs; i++) {
        bson_iter_t it, el;
        uint32_t k = 0;
        if (r->target_of[i] != t)
            continue;
        rm_probe_doc (rm_engine_probe (r->e, r->s, i), doc, len);
        if (!rm_path_get (doc, len, &r->x->refs[i].path, &it))
            continue;
        if (!BSON_ITER_HOLDS_ARRAY (&it)) {
            ok = !is_key (&it) || add_key (r, &it, t, seq, i, SCALAR, err);
            continue;
        }
        if (bson_iter_recurse (&it, &el))
            for (; ok && bson_iter_next (&el); k++)
                ok = !is_key (&el) || add_key (r, &el, t, seq, i, k, err);
    }
    return ok;
}

bool
rm_rekey_refs_feed_to (rm_rekey_refs_t *r, uint64_t seq, const uint8_t *doc, uint32_t len,
                       bson_error_t *err)
{
    return feed_doc (r, 0, seq, doc, len, err);
}

/* Step 1 for the namespaces other than `to`. */
static bool
feed_others (rm_rekey_refs_t *r, bson_error_t *err)
{
    for (uint32_t t = 1; t < r->n_targets; t++) {
        rm_instream_t *in = rm_store_open (rm_engine_find (r->e, r->targets[t])->store, err);
        rm_frame_t f;
        uint64_t seq = 0;
        int rc = 0;
        bool ok = in != NULL;
        while (ok && (rc = rm_store_next (in, &f, err)) > 0)
            ok = feed_doc (r, t, seq++, f.data, f.len, err);
        rm_instream_close (in);
        if (!ok || rc < 0)
            return false;
    }
    return rm_sorter_finish (r->refs, err);
}

/* The map value's field f as [type][bytes] into out (reset first). */
static void
map_value (const uint8_t *v, size_t vlen, const char *f, rm_buf_t *out)
{
    bson_iter_t it;
    rm_raw_value_t raw;
    rm_buf_reset (out);
    if (rm_doc_field (v, vlen, f, strlen (f), &it) && rm_raw_value_of (&it, &raw)) {
        rm_buf_append (out, &raw.type, 1);
        rm_buf_append (out, raw.data, raw.len);
    }
}

/* A map value as relaxed JSON, for a message: bson_free it. */
static char *
map_json (const uint8_t *v, size_t vlen)
{
    bson_t b;
    char *json = bson_init_static (&b, v, vlen) ? bson_as_relaxed_extended_json (&b, NULL) : NULL;
    return json ? json : bson_strdup ("?");
}

/* Two documents of `from` with one _id (a dump can hold them) that get
 * different new ones: which a reference to it means is unknown. */
static bool
ambiguous (rm_rekey_refs_t *r, const rm_buf_t *first, const uint8_t *v, size_t vlen,
           bson_error_t *err)
{
    char *a = map_json (first->data, first->len), *b = map_json (v, vlen);
    rm_error_set (err, RM_ERR_DATA, "%s: two documents of one _id get different new _ids "
                  "(%s and %s, \"o\" the old _id, \"n\" the new): a reference to it cannot be "
                  "rewritten", r->x->from.text, a, b);
    bson_free (a);
    bson_free (b);
    return false;
}

/* The new _id of each key of the group at key (the map read at *src),
 * and the map read past the group. */
static bool
match_group (rm_rekey_refs_t *r, rm_sorter_t *map, int *src, const uint8_t **sk, size_t *skl,
             const uint8_t **sv, size_t *svl, bson_error_t *err)
{
    rm_buf_t *first = &r->arr, *nv = &r->held;
    rm_buf_reset (&r->rec);
    rm_buf_append (&r->rec, *sk, *skl);
    rm_buf_reset (first);
    rm_buf_append (first, *sv, *svl);
    map_value (*sv, *svl, RM_REKEY_NEW, nv);
    while ((*src = rm_sorter_next (map, sk, skl, sv, svl, err)) > 0 &&
           rm_keycmp (*sk, *skl, r->rec.data, r->rec.len) == 0) {
        map_value (*sv, *svl, RM_REKEY_NEW, &r->out[0]);
        if (r->out[0].len != nv->len || memcmp (r->out[0].data, nv->data, nv->len))
            return ambiguous (r, first, *sv, *svl, err);
    }
    return *src >= 0;
}

bool
rm_rekey_refs_match (rm_rekey_refs_t *r, rm_sorter_t *map, bson_error_t *err)
{
    const uint8_t *sk = NULL, *sv = NULL, *rk = NULL, *rv = NULL;
    size_t skl = 0, svl = 0, rkl = 0, rvl = 0;
    int src, rrc;
    bool ok = feed_others (r, err);

    src = ok ? rm_sorter_next (map, &sk, &skl, &sv, &svl, err) : -1;
    rrc = ok ? rm_sorter_next (r->refs, &rk, &rkl, &rv, &rvl, err) : -1;
    while (ok && src > 0 && rrc > 0) {
        int c = rm_keycmp (sk, skl, rk, rkl);
        if (c < 0) {
            src = rm_sorter_next (map, &sk, &skl, &sv, &svl, err);
            continue;
        }
        if (c > 0) {
            /* a key no document of from had: empty */
            ok = rm_sorter_add (r->matches, rv, WHERE, "", 0, err);
            rrc = rm_sorter_next (r->refs, &rk, &rkl, &rv, &rvl, err);
            continue;
        }
        ok = match_group (r, map, &src, &sk, &skl, &sv, &svl, err);
        while (ok && rrc > 0 && rm_keycmp (rk, rkl, r->rec.data, r->rec.len) == 0) {
            ok = rm_sorter_add (r->matches, rv, WHERE, r->held.data, r->held.len, err);
            rrc = rm_sorter_next (r->refs, &rk, &rkl, &rv, &rvl, err);
        }
    }
    while (ok && src >= 0 && rrc > 0) {
        ok = rm_sorter_add (r->matches, rv, WHERE, "", 0, err);
        rrc = rm_sorter_next (r->refs, &rk, &rkl, &rv, &rvl, err);
    }
    return ok && src >= 0 && rrc >= 0 && rm_sorter_finish (r->matches, err);
}

/* Step 3's hits for the seqth document of target t, into r->hits (their
 * new _ids in r->held), in order of reference and slot. */
static bool
gather (rm_rekey_refs_t *r, uint32_t t, uint64_t seq, bson_error_t *err)
{
    r->n_hits = 0;
    rm_buf_reset (&r->held);
    if (!r->started) {
        r->mrc = rm_sorter_next (r->matches, &r->mk, &r->mkl, &r->mv, &r->mvl, err);
        r->started = true;
    }
    while (r->mrc > 0 && rm_get_be32 (r->mk) == t && rm_get_be64 (r->mk + 4) == seq) {
        if (r->n_hits == r->cap_hits) {
            r->cap_hits = r->cap_hits ? r->cap_hits * 2 : 16;
            r->hits = bson_realloc (r->hits, r->cap_hits * sizeof *r->hits);
        }
        r->hits[r->n_hits++] = (hit_t){rm_get_be32 (r->mk + 12), rm_get_be32 (r->mk + 16),
                                       r->held.len, r->mvl};
        rm_buf_append (&r->held, r->mv, r->mvl);
        r->mrc = rm_sorter_next (r->matches, &r->mk, &r->mkl, &r->mv, &r->mvl, err);
    }
    return r->mrc >= 0;
}

/* A reference's key no document of from had, and onMissing is "error". */
static bool
no_match (rm_rekey_refs_t *r, uint32_t t, const bson_iter_t *key, uint32_t ref,
          const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    bson_t b;
    char *json;
    bson_init (&b);
    bson_append_iter (&b, r->x->refs[ref].path.text, -1, key);
    json = bson_as_relaxed_extended_json (&b, NULL);
    rm_error_set (err, RM_ERR_DATA, "%s: no document of %s had this _id (\"onMissing\": "
                  "\"keep\" leaves such a reference as it is)", json ? json : "?",
                  r->x->from.text);
    bson_free (json);
    bson_destroy (&b);
    return rm_doc_error (err, r->targets[t]->text, "document", doc, len);
}

/* The value of hit h as a raw value. */
static rm_raw_value_t
hit_value (const rm_rekey_refs_t *r, const hit_t *h)
{
    rm_raw_value_t v = {r->held.data[h->off], r->held.data + h->off + 1, (uint32_t) h->len - 1};
    return v;
}

/* Whether a hit has no new _id: an error, or with onMissing "keep" one
 * more kept (counted). */
static bool
check_missing (rm_rekey_refs_t *r, uint32_t t, const hit_t *h, const bson_iter_t *key,
               const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    if (h->len)
        return true;
    if (!r->x->keep_missing)
        return no_match (r, t, key, h->ref, doc, len, err);
    r->run->missed++;
    r->kept[h->ref]++;
    return true;
}

/* The array at `it` with the keys of hits[0..n) replaced, as a raw value
 * in r->arr. */
static bool
new_array (rm_rekey_refs_t *r, uint32_t t, const bson_iter_t *it, const hit_t *hits, size_t n,
           const uint8_t *doc, uint32_t len, rm_raw_value_t *out, bson_error_t *err)
{
    bson_iter_t el;
    size_t start, h = 0;
    rm_buf_reset (&r->arr);
    start = rm_docbuf_begin (&r->arr);
    if (bson_iter_recurse (it, &el))
        for (uint32_t k = 0; bson_iter_next (&el); k++) {
            if (h < n && hits[h].slot == k && hits[h].len) {
                rm_raw_value_t v = hit_value (r, &hits[h]);
                rm_docbuf_key (&r->arr, (bson_type_t) v.type, bson_iter_key (&el));
                rm_buf_append (&r->arr, v.data, v.len);
                r->run->lookups++;
            } else {
                if (h < n && hits[h].slot == k &&
                    !check_missing (r, t, &hits[h], &el, doc, len, err))
                    return false;
                rm_docbuf_copy (&r->arr, &el);
            }
            if (h < n && hits[h].slot == k)
                h++;
        }
    rm_docbuf_end (&r->arr, start);
    *out = (rm_raw_value_t){BSON_TYPE_ARRAY, r->arr.data + start, (uint32_t) (r->arr.len - start)};
    return true;
}

/* One reference of a document (hits[0..n), all of it) rewritten into
 * out; *changed false when every key stays. */
static bool
rewrite_ref (rm_rekey_refs_t *r, uint32_t t, const hit_t *hits, size_t n, const uint8_t *doc,
             uint32_t len, rm_buf_t *out, bool *changed, bson_error_t *err)
{
    const rm_path_t *path = &r->x->refs[hits[0].ref].path;
    rm_raw_value_t v;
    bson_iter_t it;
    bool any = false;

    *changed = false;
    if (!rm_path_get (doc, len, path, &it))
        return true; /* fed from this document: never */
    for (size_t i = 0; i < n && !any; i++)
        any = hits[i].len != 0;
    if (hits[0].slot == SCALAR) {
        if (!check_missing (r, t, &hits[0], &it, doc, len, err))
            return false;
        if (!any)
            return true;
        v = hit_value (r, &hits[0]);
        r->run->lookups++;
    } else if (!new_array (r, t, &it, hits, n, doc, len, &v, err)) {
        return false;
    } else if (!any) {
        return true;
    }
    *changed = true;
    return rm_doc_set (out, doc, len, path, &v, err) ||
           rm_doc_error (err, r->targets[t]->text, "document", doc, len);
}

/* The seqth document of target t with each of its references rewritten:
 * *out, *out_len (doc itself when it has none). */
static bool
apply_doc (rm_rekey_refs_t *r, uint32_t t, uint64_t seq, const uint8_t *doc, uint32_t len,
           const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    const uint8_t *cur = doc;
    size_t cur_len = len, a = 0;
    int which = 0;

    if (!gather (r, t, seq, err))
        return false;
    while (a < r->n_hits) {
        size_t b = a;
        bool changed;
        while (b < r->n_hits && r->hits[b].ref == r->hits[a].ref)
            b++;
        if (!rewrite_ref (r, t, r->hits + a, b - a, cur, (uint32_t) cur_len, &r->out[which],
                          &changed, err))
            return false;
        if (changed) {
            cur = r->out[which].data;
            cur_len = r->out[which].len;
            which ^= 1;
        }
        a = b;
    }
    *out = cur;
    *out_len = cur_len;
    return true;
}

bool
rm_rekey_refs_apply_to (rm_rekey_refs_t *r, uint64_t seq, const uint8_t *doc, uint32_t len,
                        const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    return apply_doc (r, 0, seq, doc, len, out, out_len, err);
}

/* Step 3 for one namespace other than `to`. */
static bool
rewrite_ns (rm_rekey_refs_t *r, uint32_t t, bson_error_t *err)
{
    rm_ens_t *ns = rm_engine_find (r->e, r->targets[t]);
    rm_store_t *next = rm_engine_store_new (r->e, ns, err);
    rm_instream_t *in = next ? rm_store_open (ns->store, err) : NULL;
    rm_frame_t f;
    uint64_t seq = 0;
    int rc = 0;
    bool ok = in != NULL;

    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        const uint8_t *out;
        size_t out_len;
        ok = apply_doc (r, t, seq++, f.data, f.len, &out, &out_len, err) &&
             rm_store_add (next, out, (uint32_t) out_len, err);
    }
    rm_instream_close (in);
    if (!ok || rc < 0) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (ns, next, err);
}

bool
rm_rekey_refs_spilled (const rm_rekey_refs_t *r)
{
    return r && (rm_sorter_spilled_runs (r->refs) || rm_sorter_spilled_runs (r->matches));
}

bool
rm_rekey_refs_rewrite (rm_rekey_refs_t *r, bson_error_t *err)
{
    for (uint32_t t = 1; t < r->n_targets; t++)
        if (!rewrite_ns (r, t, err))
            return false;
    /* onMissing "keep": said, per reference, with the summary */
    for (size_t i = 0; i < r->x->n_refs; i++)
        if (r->kept[i])
            rm_engine_warn (r->e, r->s, "%llu key(s) in %s.%s matched no document of %s: kept as "
                            "they were (\"onMissing\": \"keep\")",
                            (unsigned long long) r->kept[i], r->x->refs[i].in.text,
                            r->x->refs[i].path.text, r->x->from.text);
    return true;
}
