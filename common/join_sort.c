/* The join in bounded memory, when the children do not fit: external
 * sorts instead of a hash table.
 *   1. children -> sorter by (join key): [child seq][child bytes]
 *   2. parents' local keys -> sorter by (join key): [parent seq][slot]
 *   3. merging the two by key gives (parent, slot, child) matches ->
 *      sorter by [parent seq][slot][child seq], and the matched child
 *      seqs -> sorter by [child seq]
 *   4. parents in order, each with its matches from 3
 *   5. children in order, dropping the matched ones (unless keepSource).
 * Memory: the sorters' budgets, plus the children of one join key (step 3)
 * and of one parent (step 4), which a 16 MiB parent bounds in practice. */
#include <stdlib.h>
#include <string.h>

#include "embed_join.h"
#include "sort_feed.h"
#include "sortkey.h"

typedef struct {
    rm_engine_t *e;
    const rm_join_t *spec;
    rm_ens_t *from, *into;
    size_t budget; /* per sorter */
    rm_sorter_t *children, *requests, *matches, *matched;
    rm_buf_t keys;
} job_t;

/* Step 1: each child under its keys, whole. */
static void
child_doc (void *ctx, const uint8_t *doc, uint32_t len, rm_sort_doc_t *out)
{
    job_t *j = ctx;
    out->n = rm_join_keys (j->spec->foreign, true, doc, len, &j->keys);
    out->keys = &j->keys;
    out->payload = doc;
    out->payload_len = len;
}

/* Step 2: each parent's local keys, with their slots. */
static void
request_doc (void *ctx, const uint8_t *doc, uint32_t len, rm_sort_doc_t *out)
{
    job_t *j = ctx;
    out->n = rm_join_keys (j->spec->local, false, doc, len, &j->keys);
    out->keys = &j->keys;
}

/* Step 3: the merge join of children and requests by key. */
static bool
join (job_t *j, bson_error_t *err)
{
    const uint8_t *ck, *cv, *rk, *rv;
    size_t ckl = 0, cvl = 0, rkl = 0, rvl = 0;
    int crc = rm_sorter_next (j->children, &ck, &ckl, &cv, &cvl, err);
    int rrc = rm_sorter_next (j->requests, &rk, &rkl, &rv, &rvl, err);
    rm_buf_t group, gkey;       /* the children of the current key */
    size_t *goff = NULL, gn = 0, gcap = 0;
    bool ok = true;

    rm_buf_init (&group);
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
        /* Gather this key's children, then pair them with its requests. */
        rm_buf_reset (&group);
        rm_buf_reset (&gkey);
        rm_buf_append (&gkey, ck, ckl);
        gn = 0;
        while (crc > 0 && rm_keycmp (ck, ckl, gkey.data, gkey.len) == 0) {
            if (gn + 1 >= gcap) {
                gcap = gcap ? gcap * 2 : 64;
                goff = bson_realloc (goff, gcap * sizeof *goff);
            }
            goff[gn++] = group.len;
            rm_buf_append (&group, cv, cvl);
            crc = rm_sorter_next (j->children, &ck, &ckl, &cv, &cvl, err);
        }
        goff[gn] = group.len;
        while (ok && rrc > 0 && rm_keycmp (rk, rkl, gkey.data, gkey.len) == 0) {
            for (size_t i = 0; ok && i < gn; i++) {
                const uint8_t *child = group.data + goff[i];
                uint8_t key[20];
                memcpy (key, rv, 12);          /* parent seq, slot */
                memcpy (key + 12, child, 8);   /* child seq */
                ok = rm_sorter_add (j->matches, key, 20, child + 8, goff[i + 1] - goff[i] - 8, err) &&
                     rm_sorter_add (j->matched, child, 8, NULL, 0, err);
            }
            rrc = rm_sorter_next (j->requests, &rk, &rkl, &rv, &rvl, err);
        }
    }
    rm_buf_destroy (&group);
    rm_buf_destroy (&gkey);
    bson_free (goff);
    if (crc < 0 || rrc < 0)
        ok = false;
    return ok && rm_sorter_finish (j->matches, err) && rm_sorter_finish (j->matched, err);
}

static int
by_seq_slot (const void *pa, const void *pb)
{
    const rm_child_t *a = pa, *b = pb;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* A child matched through several of a parent's keys is taken once, under
 * its first key (as the hash join does). */
static size_t
once_each (rm_child_t *c, size_t n)
{
    size_t w = 0;
    if (n < 2)
        return n;
    qsort (c, n, sizeof *c, by_seq_slot);
    for (size_t i = 0; i < n; i++)
        if (w == 0 || c[w - 1].seq != c[i].seq)
            c[w++] = c[i];
    return w;
}

/* Step 4: each parent with its matches. */
static bool
assemble (job_t *j, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (j->into->store, err);
    const uint8_t *mk = NULL, *mv = NULL;
    size_t mkl = 0, mvl = 0;
    int mrc = in ? rm_sorter_next (j->matches, &mk, &mkl, &mv, &mvl, err) : -1;
    rm_buf_t docs;
    size_t *off = NULL, cap = 0;
    rm_child_t *cand = NULL;
    uint64_t pseq = 0;
    rm_frame_t f;
    int rc = -1;
    bool ok = in != NULL && mrc >= 0;

    rm_buf_init (&docs);
    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        size_t n = 0, nk = rm_join_keys (j->spec->local, false, f.data, f.len, &j->keys);
        rm_buf_reset (&docs);
        while (mrc > 0 && rm_get_be64 (mk) == pseq) {
            uint64_t cseq = rm_get_be64 (mk + 12);
            uint32_t slot;
            memcpy (&slot, mk + 8, 4);
            {
                if (n + 1 >= cap) {
                    cap = cap ? cap * 2 : 64;
                    cand = bson_realloc (cand, cap * sizeof *cand);
                    off = bson_realloc (off, cap * sizeof *off);
                }
                off[n] = docs.len;
                rm_buf_append (&docs, mv, mvl);
                cand[n].len = (uint32_t) mvl;
                cand[n].slot = BSON_UINT32_FROM_BE (slot);
                cand[n].seq = cseq;
                n++;
            }
            mrc = rm_sorter_next (j->matches, &mk, &mkl, &mv, &mvl, err);
        }
        if (mrc < 0) {
            ok = false;
            break;
        }
        for (size_t i = 0; i < n; i++)
            cand[i].doc = docs.data + off[i];
        n = once_each (cand, n);
        rm_join_order (j->spec, cand, n, nk > 1);
        ok = j->spec->parent (j->spec->ctx, f.data, f.len, cand, n, err);
        pseq++;
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    rm_buf_destroy (&docs);
    bson_free (off);
    bson_free (cand);
    return ok && j->spec->finish (j->spec->ctx, err);
}

/* Step 5 for a join that only reads `from`: the orphans are the children
 * less the distinct matched ones, counted without reading `from` again. */
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
    j.matches = rm_sorter_new (j.budget, e->opts.tmpdir, NULL, NULL);
    j.matched = rm_sorter_new (j.budget, e->opts.tmpdir, NULL, NULL);
    rm_buf_init (&j.keys);
    ok = rm_sort_feed (j.from->store, j.children, child_doc, &j, err) &&
         rm_sort_feed (j.into->store, j.requests, request_doc, &j, err) && join (&j, err);
    rm_sorter_destroy (j.children);
    rm_sorter_destroy (j.requests);
    j.children = j.requests = NULL;
    ok = ok && assemble (&j, err) &&
         (spec->rewrite_from ? leftovers (&j, err) : count_orphans (&j, err));
    rm_sorter_destroy (j.children);
    rm_sorter_destroy (j.requests);
    rm_sorter_destroy (j.matches);
    rm_sorter_destroy (j.matched);
    rm_buf_destroy (&j.keys);
    return ok;
}
