/* Whether the fields a step names occur where it reads them: the check
 * `remodel run` makes over every document of a dump (a field in no
 * document of a namespace that has documents is almost always a
 * misspelling, and running on would empty data without a word), offered
 * to a caller that sees its documents another way. The online companion
 * asks the server whether each field exists, and feeds a sample of the
 * namespace here for the "did you mean" of the error, which reads as
 * `remodel run`'s. */
#ifndef REMODEL_FIELDCHECK_H
#define REMODEL_FIELDCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"
#include "remodel/plan.h"

typedef struct rm_fieldcheck rm_fieldcheck_t;

/* The fields step s names (none when the step, or allow_missing, allows
 * missing ones). */
rm_fieldcheck_t *rm_fieldcheck_new (const rm_step_t *s, bool allow_missing);
/* Every field step s reads, whether or not missing ones are allowed: what
 * the online companion's in-place writes are conditional on, beside the
 * fields they write (a step with no probes reads only those). */
rm_fieldcheck_t *rm_fieldcheck_reads (const rm_step_t *s);
void rm_fieldcheck_destroy (rm_fieldcheck_t *c);

size_t rm_fieldcheck_count (const rm_fieldcheck_t *c);
/* Field i: its path ("a.b"), and the namespace ("db.coll") it is read in. */
const char *rm_fieldcheck_path (const rm_fieldcheck_t *c, size_t i);
const char *rm_fieldcheck_ns (const rm_fieldcheck_t *c, size_t i);

/* Field i is in some document of its namespace. */
void rm_fieldcheck_seen (rm_fieldcheck_t *c, size_t i);
/* A document of field i's namespace, looked at for the field and for the
 * names near it. */
void rm_fieldcheck_doc (rm_fieldcheck_t *c, size_t i, const uint8_t *doc, uint32_t len);
/* Field i's namespace holds n documents (what the error says). */
void rm_fieldcheck_docs (rm_fieldcheck_t *c, size_t i, uint64_t n);

/* The error for the first field not seen in a namespace that has
 * documents, naming the step's key, the field, the namespace and the
 * closest names; true when there is none. */
bool rm_fieldcheck_result (const rm_fieldcheck_t *c, bson_error_t *err);

/* A join's check (embed, summarize, denormalize): `remodel run` refuses
 * a step none of whose references finds a partner while both sides have
 * documents, in the words below; the online companion asks its server
 * for the same before a run's first write. The side whose references
 * are read (ns, path: the step's localField, query: the step's filter,
 * NULL for every document), and the side they are looked for in
 * (foreignField, the step's match). The queries are the engine's
 * (rm_query_match): a server may lack an operator the plan uses. */
typedef struct {
    const char *ns, *path;
    const rm_query_t *query;
} rm_fieldjoin_side_t;

/* Step s's two sides; false when s joins nothing. */
bool rm_fieldjoin_sides (const rm_step_t *s, rm_fieldjoin_side_t *local,
                         rm_fieldjoin_side_t *foreign);

/* What was found: the local side's documents the step takes, the
 * references among them (localField's values, an array's elements each),
 * the foreign side's documents it takes, and how many references found
 * one of those (any number above zero says the same). */
typedef struct {
    uint64_t docs, refs, partners, found;
} rm_fieldjoin_count_t;

/* The error `remodel run` gives for step s's join counted so (prefixed
 * "step N (op)"), unless allow_missing or the step's "allowMissing";
 * true when there is none. */
bool rm_fieldjoin_result (const rm_step_t *s, bool allow_missing, const rm_fieldjoin_count_t *n,
                          bson_error_t *err);

#endif
