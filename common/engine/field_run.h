/* A run of field steps fused (field_run.c): consecutive set and unset
 * steps on one namespace, taken by a document in one pass over its fields
 * rather than one copy of the whole document per step. For step_fields.c,
 * which falls back to the steps one by one where a run does not apply. */
#ifndef REMODEL_FIELD_RUN_H
#define REMODEL_FIELD_RUN_H

#include "engine_impl.h"

typedef struct rm_field_run rm_field_run_t;

/* Whether s can be part of a run: set (of constants or expressions) or
 * unset, of top-level fields only, without a filter. */
bool rm_field_run_fusable (const rm_step_t *s);

/* The run that starts at steps[0] (of the n from there on): the longest
 * series of fusable steps on steps[0]'s namespace; NULL when it is shorter
 * than two (one step alone goes its own way). cx evaluates set's constants
 * once here, and its expressions per document (reset by each
 * rm_field_run_apply). */
rm_field_run_t *rm_field_run_new (const rm_step_t *steps, size_t n, rm_expr_ctx_t *cx);
size_t rm_field_run_steps (const rm_field_run_t *r);

/* One document through every step of the run: its result in *out (doc
 * itself when no step changed it, else the run's buffer, valid until the
 * next call) and changed[k] for step k. False: a document the run cannot
 * take (a field name twice at its top level, an expression that fails on
 * it), to go step by step. */
bool rm_field_run_apply (rm_field_run_t *r, const uint8_t *doc, uint32_t len,
                         const uint8_t **out, size_t *out_len, bool *changed);

void rm_field_run_destroy (rm_field_run_t *r);

#endif
