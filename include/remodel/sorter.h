/* External sort of (key, value) records in bounded memory: records are
 * kept in memory up to a budget, then sorted runs are spilled to
 * checksummed (uncompressed) files under a temporary directory and merged.
 * Used by joins and groupings whose sides do not fit in memory. */
#ifndef REMODEL_SORTER_H
#define REMODEL_SORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"

typedef struct rm_sorter rm_sorter_t;

/* Compares two keys; NULL means memcmp, then shorter first. It may be
 * called from two threads at once (an in-memory sort's two halves), so it
 * only reads ctx. */
typedef int (*rm_key_cmp_fn) (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                              void *ctx);

/* memory: the budget in bytes for buffered records (at least 1 MiB is
 * sensible; tiny budgets must still work: a record larger than the budget
 * is a run of its own). tmpdir: where spill files go (NULL: $TMPDIR or
 * /tmp). Spill files are registered with rm_tmppath so that a signal or an
 * error removes them. */
rm_sorter_t *rm_sorter_new (size_t memory, const char *tmpdir, rm_key_cmp_fn cmp, void *ctx);

/* For a custom comparator: the length of the key's first part that it
 * orders as memcmp then shorter first does, comparing the rest only when
 * those parts are equal. The sorter then orders by that part mostly from
 * its index, without reading the records. Called with the cmp's ctx, from
 * two threads at once too. */
typedef size_t (*rm_key_ordered_fn) (const uint8_t *key, size_t klen, void *ctx);

/* Before the first rm_sorter_add. */
void rm_sorter_set_ordered (rm_sorter_t *s, rm_key_ordered_fn ordered);

/* Copies the record in. */
bool rm_sorter_add (rm_sorter_t *s, const void *key, size_t klen, const void *val,
                    size_t vlen, bson_error_t *err);

/* Waits for the run being sorted and written in the background, if any:
 * then every spill file so far is complete (tests damage them). */
bool rm_sorter_sync (rm_sorter_t *s, bson_error_t *err);

/* No more records: prepares the merge. */
bool rm_sorter_finish (rm_sorter_t *s, bson_error_t *err);

/* The records in key order; records with equal keys come in the order they
 * were added (the sort is stable). Pointers are valid until the next call.
 * 1: a record; 0: the end; -1: error. */
int rm_sorter_next (rm_sorter_t *s, const uint8_t **key, size_t *klen, const uint8_t **val,
                    size_t *vlen, bson_error_t *err);

uint64_t rm_sorter_count (const rm_sorter_t *s);
/* How many runs went to disk, and their bytes (0: all in memory). */
size_t rm_sorter_spilled_runs (const rm_sorter_t *s);
uint64_t rm_sorter_spilled_bytes (const rm_sorter_t *s);

/* Frees everything and removes every spill file. */
void rm_sorter_destroy (rm_sorter_t *s);

#endif
