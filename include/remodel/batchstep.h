/* One step of a plan over a batch of documents held in memory: the
 * interface both modes share. The offline engine runs a step over a whole
 * dump; the online companion (shell-ext/) reads a batch from a live server
 * (a range of the driving namespace and, for joins, the partners of those
 * documents) and gets from here the documents the step makes of them,
 * byte for byte those `remodel run` writes, because it is the same engine
 * that computes them: no step is implemented twice.
 *
 * Which documents a batch must hold for its outputs to be exact is the
 * caller's part: for a join, every partner of the driving documents (a
 * superset does no harm: the engine matches as $lookup does); bucketize
 * needs every reading of a series. */
#ifndef REMODEL_BATCHSTEP_H
#define REMODEL_BATCHSTEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"
#include "remodel/plan.h"

typedef struct rm_batchstep rm_batchstep_t;

/* An output document of namespace ns ("db.collection"): the step's
 * inputs, changed or passed through, and the namespaces it creates. The
 * bytes are valid during the call only. */
typedef bool (*rm_batchstep_fn) (void *ctx, const char *ns, const uint8_t *doc, uint32_t len,
                                 bson_error_t *err);

/* tmpdir: where a batch too large for memory spills (NULL: $TMPDIR). */
rm_batchstep_t *rm_batchstep_new (const rm_step_t *s, const char *tmpdir);
/* A fused run (remodel/fuse.h): the n_steps steps from s on, consecutive
 * in the caller's plan, in one pass of the engine over the run's first
 * step's inputs; the results are the last step's. */
rm_batchstep_t *rm_batchstep_new_run (const rm_step_t *s, size_t n_steps, const char *tmpdir);

/* Joins by $lookup's rules of MongoDB 9.0 (SERVER-36681) rather than those
 * of 5.0 to 8.x, the default (rm_engine_opts_t.lookup_since_36681). */
void rm_batchstep_lookup (rm_batchstep_t *b, bool since_36681);

/* A document the step's expressions or filters fail on (RM_ERR_DATA) is
 * given to fn, naming it, and left out, rather than failing the batch
 * (rm_engine_opts_t.doc_error): a dry run counts them all. NULL: off. */
void rm_batchstep_doc_error (rm_batchstep_t *b, void (*fn) (void *ctx, const bson_error_t *why),
                             void *ctx);

/* Adds a copy of a document to the step's input number `input` (in the
 * order rm_step_inputs lists them). */
void rm_batchstep_add (rm_batchstep_t *b, size_t input, const uint8_t *doc, uint32_t len);

/* Runs the step over the documents added, giving each result to fn, then
 * forgets them, ready for the next batch. Errors name the step and, for a
 * document the step refuses, its namespace and _id. */
bool rm_batchstep_run (rm_batchstep_t *b, rm_batchstep_fn fn, void *ctx, bson_error_t *err);

void rm_batchstep_destroy (rm_batchstep_t *b);

#endif
