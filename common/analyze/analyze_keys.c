/* Distributions and join-key maps for the analysis (analyze_int.h), and
 * the duplicated keys a relationship keeps to show. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

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
    return RM_ANALYZE_KEY_OF_CRC (h);
}

uint64_t
rm_analyze_key (const bson_iter_t *value, rm_buf_t *scratch)
{
    rm_buf_reset (scratch);
    rm_key_append (scratch, value);
    return rm_analyze_key_of (scratch->data, scratch->len);
}

/* The whole pages of len bytes at p made present in one call (where the
 * kernel has MADV_POPULATE_WRITE) before they are written: a new half of
 * megabytes is otherwise a fault a page, each a trap (and on a VM an
 * exit). */
static void
populate (void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t from = ((uintptr_t) p + 4095) & ~(uintptr_t) 4095;
    uintptr_t to = ((uintptr_t) p + len) & ~(uintptr_t) 4095;
    if (len >= 65536 && to > from)
        (void) madvise ((void *) from, to - from, MADV_POPULATE_WRITE);
#else
    (void) p;
    (void) len;
#endif
}

/* m's slots doubled to bytes, the new half zero. Tables from
 * RM_KEYMAP_MAPPED_MIN on are mappings of their own, doubled by mremap:
 * the table is not copied (its pages are not faulted in again at each
 * doubling: on this VM a fresh page costs the host's first touch), and
 * the new half is zero already. realloc did the same only while glibc
 * kept the table in a mapping of its own: once a larger block has been
 * freed, glibc's threshold rises (up to 32 MiB), the table is on the heap
 * and each doubling copied it (10 ms of the 15 a million keys took). */
static void
slots_double (rm_keymap_t *m, size_t bytes)
{
    size_t half = bytes / 2;
    void *p;
    if (bytes >= RM_KEYMAP_MAPPED_MIN) {
        if (m->mapped) {
            p = mremap (m->slots, half, bytes, MREMAP_MAYMOVE);
            if (p != MAP_FAILED) {
                populate ((char *) p + half, half);
                m->slots = p;
                return;
            }
        } else {
            p = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p != MAP_FAILED) {
                populate (p, bytes);
                memcpy (p, m->slots, half);
                bson_free (m->slots);
                m->slots = p;
                m->mapped = true;
                return;
            }
        }
    }
    /* Small, or no mapping to be had: the heap (which aborts if it has
     * none either, as every allocation does). */
    p = bson_malloc (bytes);
    memcpy (p, m->slots, half);
    memset ((char *) p + half, 0, half);
    if (m->mapped)
        munmap (m->slots, half);
    else
        bson_free (m->slots);
    m->slots = p;
    m->mapped = false;
}

size_t
rm_keymap_grow (rm_keymap_t *m)
{
    size_t cap = m->cap, z = 0, n_out = 0;
    rm_keyslot_t *out = NULL;
    if (!cap) {
        m->cap = 64;
        m->slots = bson_malloc (m->cap * sizeof *m->slots);
        memset (m->slots, 0, m->cap * sizeof *m->slots);
        return RM_KEYMAP_BYTES (m);
    }
    slots_double (m, 2 * cap * sizeof *m->slots);
    m->cap = 2 * cap;
    /* Rehashed in place. A key's home in the doubled table is its old home
     * or that plus cap. The slots before the first empty one may hold keys
     * that wrapped around from the end: they are taken out first and put
     * back last. Then, slot by slot, each key is taken out and put back
     * at the first free slot from its new home: one that stays in the
     * lower half lands at or before where it was (every slot from its
     * home to there is already rehashed), one that moves up lands in the
     * upper half or, wrapping, at or before where it was, so no slot a
     * placed key's probe passed is emptied afterwards. */
    while (m->slots[z].key)
        z++;
    if (z) {
        out = bson_malloc (z * sizeof *out);
        memcpy (out, m->slots, z * sizeof *out);
        memset (m->slots, 0, z * sizeof *out);
        n_out = z;
    }
    for (size_t j = z + 1; j < cap; j++) {
        rm_keyslot_t e = m->slots[j];
        if (!e.key)
            continue;
        m->slots[j].key = 0;
        m->slots[j].count = 0;
        m->slots[rm_keymap_slot (m, e.key)] = e;
    }
    for (size_t j = 0; j < n_out; j++)
        m->slots[rm_keymap_slot (m, out[j].key)] = out[j];
    bson_free (out);
    return RM_KEYMAP_BYTES (m) / 2;
}

void
rm_keymap_destroy (rm_keymap_t *m)
{
    if (m->mapped)
        munmap (m->slots, m->cap * sizeof *m->slots);
    else
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
