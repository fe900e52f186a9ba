/*
 * pick.c: weighted choice. Real data is skewed (a few hosts log most
 * messages, a few posts draw most comments, some people own no tasks), and a
 * uniform pick would hide exactly the cases later transforms must handle.
 *
 * gen_picker_init takes each item's weight and keeps running sums; a pick is
 * a binary search in them. Weight 0 means the item is never picked.
 * gen_append_picked_ids draws a document's array of distinct references to
 * another collection.
 */
#include "gen.h"

#include <errno.h>
#include <string.h>

bool
gen_picker_init (gen_picker_t *picker, uint32_t n, gen_weight_fn weight, uint64_t salt,
                 bson_error_t *error)
{
    uint64_t sum = 0;

    picker->n = n;
    picker->total = 0;
    picker->cum = calloc (n ? n : 1, sizeof *picker->cum);
    if (!picker->cum) {
        bson_set_error (error, GEN_ERROR_DOMAIN, ENOMEM, "out of memory for %u weights",
                        (unsigned) n);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        sum += weight (i, salt);
        picker->cum[i] = sum;
    }
    picker->total = sum;
    return true;
}

/* Returns the first index whose running sum exceeds a uniform draw in
 * [0, total). Callers make sure total > 0. */
uint32_t
gen_picker_pick (const gen_picker_t *picker, gen_rng_t *rng)
{
    const uint64_t u = gen_rng_below64 (rng, picker->total);
    uint32_t lo = 0;
    uint32_t hi = picker->n - 1;

    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;

        if (picker->cum[mid] > u) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

void
gen_picker_destroy (gen_picker_t *picker)
{
    free (picker->cum);
    memset (picker, 0, sizeof *picker);
}

void
gen_append_picked_ids (bson_t *doc, const char *key, const gen_picker_t *picker,
                       gen_rng_t *rng, uint32_t k, const gen_idgen_t *ids, gen_secs_fn secs)
{
    uint32_t chosen[GEN_MAX_PICKS];
    char keybuf[16];
    bson_t arr;

    BSON_ASSERT (k <= GEN_MAX_PICKS);
    bson_append_array_begin (doc, key, -1, &arr);
    for (uint32_t p = 0; p < k; p++) {
        const char *elem_key = gen_array_key (p, keybuf);
        bson_oid_t oid;
        bool dup;

        do {
            chosen[p] = gen_picker_pick (picker, rng);
            dup = false;
            for (uint32_t q = 0; q < p && !dup; q++) {
                dup = chosen[q] == chosen[p];
            }
        } while (dup);
        gen_idgen_oid (ids, chosen[p], secs (chosen[p], picker->n), &oid);
        BSON_APPEND_OID (&arr, elem_key, &oid);
    }
    bson_append_array_end (doc, &arr);
}
