/* denormalize (the extended-reference pattern): copies fields of the
 * referenced document of `from` into the documents of `in`. Three shapes of
 * reference, told apart by the data:
 *   scalar      {product_id: 7}            -> {product_id: 7, product_name: ...}
 *               (the copies go beside the reference, in the same document)
 *   array       {parts: [7, 8]}            -> {parts: [{id: 7, name: ...}, {id: 8, ...}]}
 *   in elements {parts: [{id: 7, qty: 2}]} with localField "parts.id"
 *                                          -> {parts: [{id: 7, qty: 2, name: ...}]}
 * Re-running refreshes the copies in place of the old ones, so a second run
 * over its own output gives the same bytes. When several documents of
 * `from` match a reference, the first in `from`'s order is used. */
#ifndef REMODEL_DENORM_H
#define REMODEL_DENORM_H

#include "embed_join.h"
#include "engine_impl.h"

#define RM_DENORM_NO_REF UINT32_MAX

/* The references of one document, in order: each a canonical key framed by
 * a uint32 length (RM_DENORM_NO_REF for an element without one). */
typedef struct {
    rm_buf_t keys;
    size_t n;
} rm_refs_t;

/* Finds a document's references and rewrites it given, per reference
 * slot, the copied values (a BSON document) or NULL when nothing matched. */
typedef struct rm_denorm_apply rm_denorm_apply_t;

/* The copied values of one matched document of `from`: {target: value}
 * for each target whose source exists or whose expression gives a value,
 * into out (reset first). An expression that fails makes instead
 * {"$error": why} (why naming the document of `from` and the target),
 * told by rm_denorm_apply only when a reference finds it: on the server,
 * an expression over the joined document runs only for a match. */
void rm_denorm_values (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len, rm_buf_t *out);
/* run: the step's probes and counts (references looked up, missed), or
 * NULL; e: the engine (the filter's and match's $$NOW, their warning and
 * errors: rm_step_select). */
rm_denorm_apply_t *rm_denorm_apply_new (rm_engine_t *e, const rm_step_t *s, rm_step_run_t *run);
/* Whether the step's filter takes a document of `in` (ns_name), into
 * *take: one it leaves out is shown to the probes and passes as it is
 * (again: asked before, rm_step_select's e NULL: a failure then leaves it
 * out too); and whether its match takes a document of `from`: one it
 * leaves out is found by no reference. false with err naming the
 * document when the query fails on it (rm_step_select). */
bool rm_denorm_take (rm_denorm_apply_t *a, bool again, const char *ns_name, const uint8_t *doc,
                     uint32_t len, bool *take, bson_error_t *err);
bool rm_denorm_take_from (rm_denorm_apply_t *a, const char *ns_name, const uint8_t *doc,
                          uint32_t len, bool *take, bson_error_t *err);
/* Shows a document of `from` to the step's probes. */
void rm_denorm_probe_from (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len);
void rm_denorm_refs (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len, rm_refs_t *refs);
bool rm_denorm_apply (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len,
                      const uint8_t *const *values, const uint8_t **out, size_t *out_len,
                      bson_error_t *err);
void rm_denorm_apply_destroy (rm_denorm_apply_t *a);

bool rm_denorm_hash_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_denorm_sort_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);

#endif
