/* Distributions and join-key maps for the analysis (analyze_int.h), and
 * the duplicated keys a relationship keeps to show. */
#include <math.h>
#include <string.h>

#include "analyze_int.h"
#include "remodel/crc64.h"
#include "remodel/value.h"

void
rm_dist_add_n (rm_dist_t *d, uint64_t v, uint64_t times)
{
    if (!times)
        return;
    if (d->n == 0 || v < d->min)
        d->min = v;
    if (v > d->max)
        d->max = v;
    d->n += times;
    d->sum += v * times;
    if (v <= 4096) {
        d->exact[v] += times;
    } else {
        size_t b = (size_t) (16.0 * log2 ((double) v));
        d->log[b < 1024 ? b : 1023] += times;
    }
}

void
rm_dist_add (rm_dist_t *d, uint64_t v)
{
    rm_dist_add_n (d, v, 1);
}

uint64_t
rm_dist_quantile (const rm_dist_t *d, double q)
{
    uint64_t want, seen = 0;
    if (d->n == 0)
        return 0;
    want = (uint64_t) ceil (q * (double) d->n);
    if (want < 1)
        want = 1;
    for (uint64_t v = 0; v <= 4096; v++) {
        seen += d->exact[v];
        if (seen >= want)
            return v;
    }
    for (size_t b = 0; b < 1024; b++) {
        seen += d->log[b];
        if (seen >= want) {
            uint64_t v = (uint64_t) exp2 ((double) (b + 1) / 16.0);
            return v > d->max ? d->max : v;
        }
    }
    return d->max;
}

const char *
rm_class_name (rm_class_t c)
{
    static const char *const names[] = {"one-to-one", "one-to-few", "one-to-many",
                                        "one-to-squillions"};
    return names[c];
}

rm_class_t
rm_class_of (const rm_dist_t *children)
{
    uint64_t p99 = rm_dist_quantile (children, 0.99);
    if (children->max <= 1)
        return RM_CLASS_ONE_TO_ONE;
    if (p99 <= RM_ANALYZE_FEW)
        return RM_CLASS_ONE_TO_FEW;
    if (p99 <= RM_ANALYZE_MANY)
        return RM_CLASS_ONE_TO_MANY;
    return RM_CLASS_ONE_TO_SQUILLIONS;
}

uint64_t
rm_analyze_key_of (const uint8_t *bytes, size_t len)
{
    /* The 128-bit carry-less version directly: keys are short (rarely
     * past 256 bytes, where the wide one would start), and this spares a
     * dispatch (a pthread_once and a call) per key. Every version gives
     * the same CRC (test_crc64). */
    uint64_t h = rm_crc64_update_clmul (0, bytes, len);
    return h ? h : 1;
}

uint64_t
rm_analyze_key (const bson_iter_t *value, rm_buf_t *scratch)
{
    rm_buf_reset (scratch);
    rm_key_append (scratch, value);
    return rm_analyze_key_of (scratch->data, scratch->len);
}

size_t
rm_keymap_grow (rm_keymap_t *m)
{
    rm_keymap_t g = {NULL, 0, m->cap ? m->cap * 2 : 64};
    size_t grew;
    /* Zeroed by writing, not calloc: a fresh mapping's pages would fault
     * twice each, first read (the shared zero page, as the slots are
     * probed) then written. */
    g.slots = bson_malloc (g.cap * sizeof *g.slots);
    memset (g.slots, 0, g.cap * sizeof *g.slots);
    for (size_t k = 0; k < m->cap; k++)
        if (m->slots[k].key) {
            g.slots[rm_keymap_slot (&g, m->slots[k].key)] = m->slots[k];
            g.n++;
        }
    grew = RM_KEYMAP_BYTES (&g) - RM_KEYMAP_BYTES (m);
    rm_keymap_destroy (m);
    *m = g;
    return grew;
}

void
rm_keymap_destroy (rm_keymap_t *m)
{
    bson_free (m->slots);
    memset (m, 0, sizeof *m);
}

void
rm_relation_dup (rm_relation_t *r, uint64_t key, uint64_t docs)
{
    size_t at = r->n_dups;
    while (at > 0 && r->dup_key[at - 1] > key)
        at--;
    if (at == RM_DUPS_SHOWN)
        return;
    if (r->n_dups == RM_DUPS_SHOWN)
        r->n_dups--;
    memmove (&r->dup_key[at + 1], &r->dup_key[at], (r->n_dups - at) * sizeof r->dup_key[0]);
    memmove (&r->dup_docs[at + 1], &r->dup_docs[at], (r->n_dups - at) * sizeof r->dup_docs[0]);
    r->dup_key[at] = key;
    r->dup_docs[at] = docs;
    r->n_dups++;
}
