/* denormalize in bounded memory: the referenced side sorted by join key,
 * the references sorted by join key, merged, and the matches sorted back
 * into document order:
 *   1. from -> sorter by key: [seq][copied values]
 *   2. in's references -> sorter by key: [doc seq][slot]
 *   3. merge: the first document of each key (stable sort: the first in
 *      from's order, as the hash join takes) -> sorter by [doc seq][slot]
 *   4. in, in order, each document with its slots' values. */
#include <string.h>

#include "denorm.h"
#include "sort_feed.h"
#include "sortkey.h"

typedef struct {
    rm_engine_t *e;
    const rm_step_t *s;
    const rm_denorm_t *d;
    rm_expr_ctx_t *cx; /* the filter's in step 2 (rm_denorm_take probes too) */
    rm_ens_t *in, *from;
    rm_denorm_apply_t *a;
    rm_sorter_t *source, *refs, *matches;
    rm_buf_t keys, vals;
    rm_refs_t r;
    bool failed; /* the step's filter or match failed on a document */
    bson_error_t err;
} djob_t;

_Static_assert (RM_DENORM_NO_REF == RM_SORT_NO_KEY, "a reference without a key adds nothing");

/* Step 1: each document of from under its keys, with its copied values. */
static void
source_doc (void *ctx, const uint8_t *doc, uint32_t len, rm_sort_doc_t *out)
{
    djob_t *j = ctx;
    bool take = false;
    rm_denorm_probe_from (j->a, doc, len);
    /* One the step's match leaves out is found by no reference. */
    if (!j->failed && !rm_denorm_take_from (j->a, j->from->stats->name, doc, len, &take, &j->err))
        j->failed = true;
    out->n = take && !j->failed ? rm_join_keys (&j->d->foreign, true,
                                                j->e->opts.lookup_since_36681, doc, len, &j->keys)
                                : 0;
    out->keys = &j->keys;
    rm_denorm_values (j->a, doc, len, &j->vals);
    out->payload = j->vals.data;
    out->payload_len = j->vals.len;
}

/* Step 2: each reference of each document of in, with its slot. */
static void
ref_doc (void *ctx, const uint8_t *doc, uint32_t len, rm_sort_doc_t *out)
{
    djob_t *j = ctx;
    bool take = false;
    /* One the step's filter leaves out looks nothing up. */
    if (!j->failed &&
        !rm_step_select (j->e, j->s, false, j->cx, j->in->stats->name, doc, len, &take, &j->err))
        j->failed = true;
    rm_buf_reset (&j->r.keys);
    j->r.n = 0;
    if (take && !j->failed)
        rm_denorm_refs (j->a, doc, len, &j->r);
    out->n = j->r.n;
    out->keys = &j->r.keys;
}

static bool
merge (djob_t *j, bson_error_t *err)
{
    const uint8_t *sk, *sv, *rk, *rv;
    size_t skl = 0, svl = 0, rkl = 0, rvl = 0;
    int src = rm_sorter_next (j->source, &sk, &skl, &sv, &svl, err);
    int rrc = rm_sorter_next (j->refs, &rk, &rkl, &rv, &rvl, err);
    rm_buf_t key;
    bool ok = true;

    rm_buf_init (&key);
    while (ok && src > 0 && rrc > 0) {
        int c = rm_keycmp (sk, skl, rk, rkl);
        if (c < 0) {
            src = rm_sorter_next (j->source, &sk, &skl, &sv, &svl, err);
        } else if (c > 0) {
            rrc = rm_sorter_next (j->refs, &rk, &rkl, &rv, &rvl, err);
        } else {
            /* The first record of the key is the first document in from. */
            rm_buf_reset (&key);
            rm_buf_append (&key, sk, skl);
            rm_buf_reset (&j->vals);
            rm_buf_append (&j->vals, sv + 8, svl - 8);
            while (ok && rrc > 0 && rm_keycmp (rk, rkl, key.data, key.len) == 0) {
                ok = rm_sorter_add (j->matches, rv, 12, j->vals.data, j->vals.len, err);
                rrc = rm_sorter_next (j->refs, &rk, &rkl, &rv, &rvl, err);
            }
            while (src > 0 && rm_keycmp (sk, skl, key.data, key.len) == 0)
                src = rm_sorter_next (j->source, &sk, &skl, &sv, &svl, err);
        }
    }
    rm_buf_destroy (&key);
    return ok && src >= 0 && rrc >= 0 && rm_sorter_finish (j->matches, err);
}

static bool
assemble (djob_t *j, bson_error_t *err)
{
    rm_store_t *next = rm_engine_store_new (j->e, j->in, err);
    rm_instream_t *in = next ? rm_store_open (j->in->store, err) : NULL;
    const uint8_t *mk = NULL, *mv = NULL;
    size_t mkl = 0, mvl = 0;
    int mrc = in ? rm_sorter_next (j->matches, &mk, &mkl, &mv, &mvl, err) : -1;
    const uint8_t **values = NULL;
    size_t *voff = NULL, cap = 0;
    rm_buf_t held;
    uint64_t seq = 0;
    rm_frame_t f;
    int rc = 0;
    bool ok = in && mrc >= 0;

    rm_buf_init (&held);
    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        const uint8_t *out;
        size_t out_len;
        bool take;
        /* The filter asked again (it took the document or not in step 2):
         * one left out has no matches, and passes as it is. */
        if (!rm_denorm_take (j->a, true, j->in->stats->name, f.data, f.len, &take, err)) {
            ok = false;
            break;
        }
        if (!take) {
            ok = rm_store_add (next, f.data, f.len, err);
            seq++;
            continue;
        }
        rm_denorm_refs (j->a, f.data, f.len, &j->r);
        if (j->r.n + 1 > cap) {
            cap = (j->r.n + 1) * 2;
            values = bson_realloc (values, cap * sizeof *values);
            voff = bson_realloc (voff, cap * sizeof *voff);
        }
        for (size_t i = 0; i < j->r.n; i++)
            voff[i] = SIZE_MAX;
        rm_buf_reset (&held);
        while (mrc > 0 && rm_get_be64 (mk) == seq) {
            uint32_t slot;
            memcpy (&slot, mk + 8, 4);
            slot = BSON_UINT32_FROM_BE (slot);
            if (slot < j->r.n) {
                voff[slot] = held.len;
                rm_buf_append (&held, mv, mvl);
            }
            mrc = rm_sorter_next (j->matches, &mk, &mkl, &mv, &mvl, err);
        }
        if (mrc < 0) {
            ok = false;
            break;
        }
        for (size_t i = 0; i < j->r.n; i++)
            values[i] = voff[i] == SIZE_MAX ? NULL : held.data + voff[i];
        ok = rm_denorm_apply (j->a, f.data, f.len, values, &out, &out_len, err);
        if (!ok) {
            rm_doc_error (err, j->in->stats->name, "document", f.data, f.len);
            break;
        }
        ok = rm_store_add (next, out, (uint32_t) out_len, err);
        seq++;
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    rm_buf_destroy (&held);
    bson_free (values);
    bson_free (voff);
    if (!ok) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (j->in, next, err);
}

bool
rm_denorm_sort_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    djob_t j;
    bool ok;
    size_t budget = rm_engine_sort_budget (e);

    memset (&j, 0, sizeof j);
    j.e = e;
    j.d = &s->u.denorm;
    j.in = rm_engine_find (e, &j.d->in);
    j.from = rm_engine_find (e, &j.d->from);
    j.s = s;
    j.a = rm_denorm_apply_new (e, s, rm_engine_step_run (e, s));
    if (s->filter)
        j.cx = rm_expr_ctx_new (rm_engine_now (e));
    j.source = rm_sorter_new (budget, e->opts.tmpdir, NULL, NULL);
    j.refs = rm_sorter_new (budget, e->opts.tmpdir, NULL, NULL);
    j.matches = rm_sorter_new (budget, e->opts.tmpdir, NULL, NULL);
    ok = rm_sort_feed (j.from->store, j.source, source_doc, &j, err) && !j.failed &&
         rm_sort_feed (j.in->store, j.refs, ref_doc, &j, err) && !j.failed && merge (&j, err) &&
         assemble (&j, err);
    if (j.failed)
        *err = j.err;
    rm_expr_ctx_destroy (j.cx);
    rm_sorter_destroy (j.source);
    rm_sorter_destroy (j.refs);
    rm_sorter_destroy (j.matches);
    rm_denorm_apply_destroy (j.a);
    rm_buf_destroy (&j.keys);
    rm_buf_destroy (&j.vals);
    rm_buf_destroy (&j.r.keys);
    return ok;
}
