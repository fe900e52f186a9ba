/* The join in bounded memory, when the children do not fit: external
 * sorts instead of a hash table.
 *   1. children -> sorter by (join key): [child seq][child bytes]
 *   2. parents' local keys -> sorter by (join key): a request
 *      [parent seq][slot][by_slot]
 *   3. merging the two by key: each child of a key is paired with each
 *      request for it, a match [parent seq][child seq][slot][by_slot][child
 *      bytes] -> the matches sorter, in the order the parent takes its
 *      children (rm_join_child_cmp); the matched child seqs -> a sorter
 *   4. parents in order, each handed its matches from 3 one by one
 *   5. children in order, dropping the matched ones (unless keepSource).
 * A child that matches a parent through several of its keys is taken once,
 * under its first slot. Where several keys order the children by slot,
 * those duplicates are not next to each other in the matches' order: the
 * matches then go through one more sorter by [parent seq][child seq][slot]
 * first, which drops them.
 * Memory: the sorters' budgets and a key's requests up to REQ_MEMORY (the
 * rest wait in a temporary store). Neither the children of one key nor
 * those of one parent are ever held: a key shared by every parent, or one
 * with millions of children, streams through. */
#include <stdlib.h>
#include <string.h>

#include "embed_join.h"
#include "sort_feed.h"
#include "sortkey.h"
#include "store.h"

/* A key's requests kept in memory before the rest go to a store. */
#define REQ_MEMORY ((size_t) 1 << 20)
#define REQ_LEN 13  /* parent seq, slot, by_slot */
#define MATCH_HEAD 21 /* parent seq, child seq, slot, by_slot */

typedef struct {
    rm_engine_t *e;
    const rm_join_t *spec;
    rm_ens_t *from, *into;
    size_t budget; /* per sorter */
    rm_sorter_t *children, *requests, *pairs, *matches, *matched;
    bool multi; /* a parent had several keys: duplicates to drop */
    rm_buf_t keys, rec;
    /* the current key's requests */
    rm_buf_t reqs;
    rm_store_t *more_reqs;
    bool failed; /* the step's filter or match failed on a document */
    bson_error_t err;
} job_t;

/* Step 1: each child under its keys, whole. */
static void
child_doc (void *ctx, const uint8_t *doc, uint32_t len, rm_sort_doc_t *out)
{
    job_t *j = ctx;
    bool take = false;
    rm_probe_doc (j->spec->probe_foreign, doc, len);
    /* A child the step's match leaves out gets no key: no parent takes
     * it (it stays in `from` as an orphan does). */
    if (!j->failed && !rm_join_take_child (j->spec, doc, len, &take, &j->err))
        j->failed = true;
    out->n = take && !j->failed
                 ? rm_join_keys (j->spec->foreign, true, j->spec->since_36681, doc, len, &j->keys)
                 : 0;
    out->keys = &j->keys;
    out->payload = doc;
    out->payload_len = len;
}

/* Step 2: each parent's local keys, with their slots (the sort feed adds
 * the parent seq and slot; the payload says whether the parent has
 * several keys). */
static void
request_doc (void *ctx, const uint8_t *doc, uint32_t len, rm_sort_doc_t *out)
{
    job_t *j = ctx;
    static const uint8_t several = 1, one = 0;
    bool take = false;
    rm_probe_doc (j->spec->probe_local, doc, len);
    /* A parent the step's filter leaves out asks for nothing (assemble
     * passes it on as it is). */
    if (!j->failed &&
        !rm_join_take_parent (j->spec, j->spec->sel->e, j->spec->sel->cx, doc, len, &take, &j->err))
        j->failed = true;
    out->n = take && !j->failed ? rm_join_keys (j->spec->local, false, false, doc, len, &j->keys)
                                : 0;
    out->keys = &j->keys;
    out->payload = out->n > 1 ? &several : &one;
    out->payload_len = 1;
    out->slot = true;
    j->multi |= out->n > 1;
}

static void
match_child (const uint8_t *k, size_t kl, rm_child_t *c)
{
    uint32_t slot;
    memcpy (&slot, k + 16, 4);
    c->doc = k + MATCH_HEAD;
    c->len = (uint32_t) (kl - MATCH_HEAD);
    c->slot = BSON_UINT32_FROM_BE (slot);
    c->seq = rm_get_be64 (k + 8);
    c->id_at = 0;
    c->prepared = false;
}

/* The matches' order: by parent, then as the parent takes its children. */
static int
match_cmp (const uint8_t *a, size_t al, const uint8_t *b, size_t bl, void *ctx)
{
    const job_t *j = ctx;
    rm_child_t ca, cb;
    int c = memcmp (a, b, 8);
    if (c)
        return c;
    match_child (a, al, &ca);
    match_child (b, bl, &cb);
    c = rm_join_child_cmp (j->spec, a[20] != 0, &ca, &cb);
    return c ? c : (ca.slot < cb.slot ? -1 : ca.slot > cb.slot);
}

/* The sorter's rm_key_ordered_fn: match_cmp's parent seq is memcmp-ordered. */
static size_t
match_ordered (const uint8_t *k, size_t kl, void *ctx)
{
    (void) k;
    (void) kl;
    (void) ctx;
    return 8;
}

/* A request (from the requests sorter: the key's value is parent seq and
 * slot, then by_slot) paired with a child ([child seq][bytes]). */
static bool
add_match (job_t *j, const uint8_t *req, const uint8_t *child, size_t child_len,
           bson_error_t *err)
{
    rm_buf_reset (&j->rec);
    rm_buf_append (&j->rec, req, 8);
    rm_buf_append (&j->rec, child, 8);
    rm_buf_append (&j->rec, req + 8, 5);
    rm_buf_append (&j->rec, child + 8, child_len - 8);
    return rm_sorter_add (j->pairs ? j->pairs : j->matches, j->rec.data, j->rec.len, NULL, 0,
                          err);
}

/* Pairs one child of the current key with each of the key's requests. */
static bool
pair_child (job_t *j, const uint8_t *child, size_t child_len, bson_error_t *err)
{
    rm_instream_t *in;
    bool ok = true;

    for (size_t off = 0; off < j->reqs.len; off += REQ_LEN)
        if (!add_match (j, j->reqs.data + off, child, child_len, err))
            return false;
    if (!j->more_reqs)
        return true;
    if (!(in = rm_store_open (j->more_reqs, err)))
        return false;
    for (uint64_t i = rm_store_count (j->more_reqs); ok && i > 0; i--) {
        const uint8_t *r;
        ssize_t got = rm_instream_fill (in, REQ_LEN, &r, err);
        if (got < REQ_LEN) {
            if (got >= 0)
                rm_error_set (err, RM_ERR_IO, "%s: temporary store cut short",
                              rm_store_label (j->more_reqs));
            ok = false;
            break;
        }
        ok = add_match (j, r, child, child_len, err);
        rm_instream_skip (in, REQ_LEN);
    }
    rm_instream_close (in);
    return ok;
}

/* Keeps one request of the current key: in memory, then in a store (raw
 * REQ_LEN-byte records, not documents: only pair_child reads it). */
static bool
keep_request (job_t *j, const uint8_t *v, bson_error_t *err)
{
    if (j->reqs.len + REQ_LEN <= REQ_MEMORY) {
        rm_buf_append (&j->reqs, v, REQ_LEN);
        return true;
    }
    if (!j->more_reqs &&
        !(j->more_reqs = rm_store_new (j->e->opts.tmpdir, "join requests", err)))
        return false;
    return rm_store_add (j->more_reqs, v, REQ_LEN, err);
}

/* Step 3: the merge join of children and requests by key. A key's
 * requests are gathered (they are small), then its children stream past
 * them. */
static bool
join (job_t *j, bson_error_t *err)
{
    const uint8_t *ck, *cv, *rk, *rv;
    size_t ckl = 0, cvl = 0, rkl = 0, rvl = 0;
    int crc = rm_sorter_next (j->children, &ck, &ckl, &cv, &cvl, err);
    int rrc = crc < 0 ? -1 : rm_sorter_next (j->requests, &rk, &rkl, &rv, &rvl, err);
    rm_buf_t gkey;
    bool ok = true;

    rm_buf_init (&gkey);
    while (ok && crc > 0 && rrc > 0) {
        int c = rm_keycmp (ck, ckl, rk, rkl);
        if (c < 0) {
            crc = rm_sorter_next (j->children, &ck, &ckl, &cv, &cvl, err);
            continue;
        }
        if (c > 0) {
            rrc = rm_sorter_next (j->requests, &rk, &rkl, &rv, &rvl, err);
            continue;
        }
        rm_buf_reset (&gkey);
        rm_buf_append (&gkey, rk, rkl);
        rm_buf_reset (&j->reqs);
        while (ok && rrc > 0 && rm_keycmp (rk, rkl, gkey.data, gkey.len) == 0) {
            ok = keep_request (j, rv, err);
            rrc = rm_sorter_next (j->requests, &rk, &rkl, &rv, &rvl, err);
        }
        if (ok && j->more_reqs)
            ok = rm_store_seal (j->more_reqs, err);
        while (ok && crc > 0 && rm_keycmp (ck, ckl, gkey.data, gkey.len) == 0) {
            ok = pair_child (j, cv, cvl, err) && rm_sorter_add (j->matched, cv, 8, NULL, 0, err);
            crc = rm_sorter_next (j->children, &ck, &ckl, &cv, &cvl, err);
        }
        rm_store_destroy (j->more_reqs);
        j->more_reqs = NULL;
    }
    rm_buf_destroy (&gkey);
    if (crc < 0 || rrc < 0)
        ok = false;
    return ok && (!j->pairs || rm_sorter_finish (j->pairs, err)) &&
           rm_sorter_finish (j->matched, err);
}

/* Step 3b, with parents of several keys ordered by slot: the matches by
 * [parent seq][child seq][slot] give each child's first slot first. */
static bool
drop_repeats (job_t *j, bson_error_t *err)
{
    const uint8_t *k, *v;
    size_t kl, vl;
    int rc;
    bool have = false;
    uint8_t last[16];

    while ((rc = rm_sorter_next (j->pairs, &k, &kl, &v, &vl, err)) > 0) {
        if (have && memcmp (last, k, 16) == 0)
            continue;
        memcpy (last, k, 16);
        have = true;
        if (!rm_sorter_add (j->matches, k, kl, NULL, 0, err))
            return false;
    }
    return rc == 0;
}

/* Step 4: each parent with its matches. Where a parent's duplicates were
 * not dropped in 3b they are next to each other, the first slot first. */
static bool
assemble (job_t *j, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (j->into->store, err);
    const uint8_t *mk = NULL, *mv = NULL;
    size_t mkl = 0, mvl = 0;
    int mrc = in ? rm_sorter_next (j->matches, &mk, &mkl, &mv, &mvl, err) : -1;
    uint64_t pseq = 0;
    rm_frame_t f;
    int rc = -1;
    bool ok = in != NULL && mrc >= 0;

    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        uint64_t last = UINT64_MAX;
        bool take;
        /* The filter asked again (it took this parent or not in step 2,
         * where a failure stopped the run unless check --against took
         * it): one left out has no matches, and passes as it is. */
        bson_error_t why;
        if (!rm_join_take_parent (j->spec, NULL, j->spec->sel->cx, f.data, f.len, &take, &why))
            take = false;
        if (!take) {
            ok = j->spec->pass (j->spec->ctx, f.data, f.len, err);
            pseq++;
            continue;
        }
        j->spec->sel->parents++;
        ok = j->spec->begin (j->spec->ctx, f.data, f.len, err);
        while (ok && mrc > 0 && rm_get_be64 (mk) == pseq) {
            rm_child_t c;
            match_child (mk, mkl, &c);
            if (c.seq != last)
                ok = j->spec->child (j->spec->ctx, &c, err);
            last = c.seq;
            mrc = rm_sorter_next (j->matches, &mk, &mkl, &mv, &mvl, err);
        }
        if (mrc < 0)
            ok = false;
        ok = ok && j->spec->end (j->spec->ctx, err);
        pseq++;
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    return ok && j->spec->finish (j->spec->ctx, err);
}

/* Step 5 for a join that only reads `from`: the orphans are the children
 * less the matched ones, counted without reading `from` again. */
static bool
count_orphans (job_t *j, bson_error_t *err)
{
    const uint8_t *mk, *mv;
    size_t mkl, mvl;
    uint64_t matched = 0, last = 0;
    int rc;

    while ((rc = rm_sorter_next (j->matched, &mk, &mkl, &mv, &mvl, err)) > 0) {
        uint64_t seq = rm_get_be64 (mk);
        matched += matched == 0 || seq != last;
        last = seq;
    }
    if (rc < 0)
        return false;
    j->from->stats->orphans += rm_store_count (j->from->store) - matched;
    return true;
}

/* Step 5: `from` keeps the children no parent took (all with keepSource). */
static bool
leftovers (job_t *j, bson_error_t *err)
{
    rm_store_t *next = rm_engine_store_new (j->e, j->from, err);
    rm_instream_t *in = next ? rm_store_open (j->from->store, err) : NULL;
    const uint8_t *mk = NULL, *mv;
    size_t mkl = 0, mvl;
    int mrc = in ? rm_sorter_next (j->matched, &mk, &mkl, &mv, &mvl, err) : -1;
    uint64_t seq = 0;
    rm_frame_t f;
    int rc = -1;
    bool ok = in != NULL && mrc >= 0;

    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        bool matched = false;
        while (mrc > 0 && rm_get_be64 (mk) <= seq) {
            matched |= rm_get_be64 (mk) == seq;
            mrc = rm_sorter_next (j->matched, &mk, &mkl, &mv, &mvl, err);
        }
        if (mrc < 0)
            ok = false;
        if (!matched)
            j->from->stats->orphans++;
        if (ok && next && (j->spec->keep_source || !matched))
            ok = rm_store_add (next, f.data, f.len, err);
        seq++;
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    if (!ok) {
        rm_store_destroy (next);
        return false;
    }
    return !next || rm_engine_store_swap (j->from, next, err);
}

/* Whether parents with several keys take their children by slot (embed:
 * with or without sort, ties go by the parent's references). */
static bool
orders_by_slot (const rm_join_t *spec)
{
    return spec->order_by_id;
}

bool
rm_join_sort_run (rm_engine_t *e, const rm_join_t *spec, bson_error_t *err)
{
    job_t j;
    bool ok;

    memset (&j, 0, sizeof j);
    j.e = e;
    j.spec = spec;
    j.from = rm_engine_find (e, spec->from);
    j.into = rm_engine_find (e, spec->into);
    /* Two sorters are filled at a time at most: half the budget each. */
    j.budget = rm_engine_sort_budget (e);
    j.children = rm_sorter_new (j.budget, e->opts.tmpdir, NULL, NULL);
    j.requests = rm_sorter_new (j.budget, e->opts.tmpdir, NULL, NULL);
    j.matches = rm_sorter_new (j.budget, e->opts.tmpdir, match_cmp, &j);
    j.matched = rm_sorter_new (j.budget, e->opts.tmpdir, NULL, NULL);
    rm_sorter_set_ordered (j.matches, match_ordered);
    rm_buf_init (&j.keys);
    rm_buf_init (&j.rec);
    rm_buf_init (&j.reqs);
    ok = rm_sort_feed (j.from->store, j.children, child_doc, &j, err) && !j.failed &&
         rm_sort_feed (j.into->store, j.requests, request_doc, &j, err) && !j.failed;
    if (j.failed)
        *err = j.err;
    if (ok && j.multi && orders_by_slot (spec))
        j.pairs = rm_sorter_new (j.budget, e->opts.tmpdir, NULL, NULL);
    ok = ok && join (&j, err);
    rm_sorter_destroy (j.children);
    rm_sorter_destroy (j.requests);
    j.children = j.requests = NULL;
    ok = ok && (!j.pairs || drop_repeats (&j, err)) && rm_sorter_finish (j.matches, err);
    rm_sorter_destroy (j.pairs);
    j.pairs = NULL;
    ok = ok && assemble (&j, err) &&
         (spec->rewrite_from ? leftovers (&j, err) : count_orphans (&j, err));
    rm_sorter_destroy (j.matches);
    rm_sorter_destroy (j.matched);
    rm_store_destroy (j.more_reqs);
    rm_buf_destroy (&j.keys);
    rm_buf_destroy (&j.rec);
    rm_buf_destroy (&j.reqs);
    return ok;
}
