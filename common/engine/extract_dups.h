/* An extract's children that two parents (or two elements) make with one
 * _id (extract_dups.c): written once when they are the same bytes, refused
 * naming both parents when not. MongoDB's unique _id index would take
 * neither twice (mongorestore stops at the second). */
#ifndef REMODEL_EXTRACT_DUPS_H
#define REMODEL_EXTRACT_DUPS_H

#include "engine_impl.h"

typedef struct rm_extract_dups rm_extract_dups_t;

/* memory: the budget of its external sort (remodel/sorter.h). */
rm_extract_dups_t *rm_extract_dups_new (size_t memory, const char *tmpdir);
/* The next child, in the order the children are stored, and the _id of
 * the parent it came from. */
bool rm_extract_dups_add (rm_extract_dups_t *d, const uint8_t *child, uint32_t len,
                          const bson_iter_t *parent_id, bson_error_t *err);
/* No more children: refuses two with one _id and different bytes (to: the
 * namespace they are for), and counts the copies to leave out. */
bool rm_extract_dups_finish (rm_extract_dups_t *d, const char *to, bson_error_t *err);
uint64_t rm_extract_dups_copies (const rm_extract_dups_t *d);
/* The children of in (all that were added, in that order) to emit, each
 * _id once: the first of its copies. */
bool rm_extract_dups_copy (rm_extract_dups_t *d, rm_store_t *in, rm_emit_fn emit, void *ctx,
                           bson_error_t *err);
void rm_extract_dups_destroy (rm_extract_dups_t *d);

#endif
