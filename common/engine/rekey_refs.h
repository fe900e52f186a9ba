/* rekey's references (step_rekey_refs.c), rewritten from the old _ids to
 * the new ones in bounded memory, for step_rekey.c:
 *   1. each key a reference holds, under its canonical key (remodel/
 *      value.h), with where it stands: [target][seq][ref][slot]; `to`'s
 *      own (target 0) are read off the documents of `from` as they go by,
 *      the other namespaces' (targets 1, 2) from their stores;
 *   2. merged with the map from old key to new _id (sorted by old key):
 *      what each key becomes, or nothing (no document had it), sorted
 *      back by where it stands;
 *   3. each document of a target, in order, with its keys replaced.
 * Private to the engine. */
#ifndef REMODEL_REKEY_REFS_H
#define REMODEL_REKEY_REFS_H

#include "engine_impl.h"
#include "remodel/sorter.h"

typedef struct rm_rekey_refs rm_rekey_refs_t;

/* The map's records: key the old _id's canonical key, value this
 * document. */
#define RM_REKEY_OLD "o"
#define RM_REKEY_NEW "n"

/* NULL when the step names no references. */
rm_rekey_refs_t *rm_rekey_refs_new (rm_engine_t *e, const rm_step_t *s);
/* Step 1 for `to`: the seqth document of `from` (its fields as `to` gets
 * them but _id, which no reference path names). */
bool rm_rekey_refs_feed_to (rm_rekey_refs_t *r, uint64_t seq, const uint8_t *doc, uint32_t len,
                            bson_error_t *err);
/* Step 1 for the other namespaces, then step 2 against map (finished). A
 * map whose old key two documents share with different new _ids fails,
 * naming both. */
bool rm_rekey_refs_match (rm_rekey_refs_t *r, rm_sorter_t *map, bson_error_t *err);
/* Step 3 for `to`: its seqth document with its references rewritten,
 * into *out (valid until the next call). A key no document had fails,
 * naming the document, unless onMissing keeps it (counted). */
bool rm_rekey_refs_apply_to (rm_rekey_refs_t *r, uint64_t seq, const uint8_t *doc, uint32_t len,
                             const uint8_t **out, size_t *out_len, bson_error_t *err);
/* Step 3 for the other namespaces: each rewritten into a new store; then
 * a warning per reference for the keys onMissing "keep" left. */
bool rm_rekey_refs_rewrite (rm_rekey_refs_t *r, bson_error_t *err);
/* Whether its sorts went to disk (r NULL: none). */
bool rm_rekey_refs_spilled (const rm_rekey_refs_t *r);
void rm_rekey_refs_destroy (rm_rekey_refs_t *r);

#endif
