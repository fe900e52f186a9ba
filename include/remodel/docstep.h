/* A step's document-level transform, the one implementation both modes
 * call: the offline engine over a dump's documents, the online companion
 * (shell-ext/) over a batch read from a live server. Given a document, the
 * document the step makes of it, byte for byte what `remodel run` writes.
 *
 * The steps that act on one document at a time: set, unset, rename and
 * version (rm_docstep_in_place tells). Others are refused by new, naming
 * the step. */
#ifndef REMODEL_DOCSTEP_H
#define REMODEL_DOCSTEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"
#include "remodel/plan.h"

typedef struct rm_docstep rm_docstep_t;

/* Whether a step rewrites documents of one namespace in place, one at a
 * time, so that a batch of them can be transformed alone. */
bool rm_docstep_in_place (const rm_step_t *s);

rm_docstep_t *rm_docstep_new (const rm_step_t *s, bson_error_t *err);

/* The step applied to doc (len bytes): *out and *out_len, valid until the
 * next call (the input itself when nothing changes). Errors name ns_name
 * and the document's _id. */
bool rm_docstep_apply (rm_docstep_t *d, const char *ns_name, const uint8_t *doc, size_t len,
                       const uint8_t **out, size_t *out_len, bson_error_t *err);

void rm_docstep_destroy (rm_docstep_t *d);

#endif
