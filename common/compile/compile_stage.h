/* Building pipeline stages for the compilers (compile_*.c). The names the
 * pipelines use for their own scratch fields all start with "__rm": a
 * document's own field of such a name would be overwritten (docs/compile.md). */
#ifndef REMODEL_COMPILE_STAGE_H
#define REMODEL_COMPILE_STAGE_H

#include <bson/bson.h>

#include "compile_impl.h"

/* Appends {op: <body>} to the pipeline: rm_cs_begin, fill s->body, rm_cs_end. */
typedef struct {
    bson_t *pipeline;
    bson_t stage, body;
} rm_cs_stage_t;

void rm_cs_begin (bson_t *pipeline, rm_cs_stage_t *s, const char *op);
void rm_cs_end (rm_cs_stage_t *s);
/* Appends a whole stage made with BCON_NEW, and frees it. */
void rm_cs_append (bson_t *pipeline, bson_t *stage);

/* "$<prefix>.<path>" or "$<path>" (prefix NULL), to free. */
char *rm_cs_ref (const char *prefix, const char *path);

/* {$lookup: {from, localField, foreignField, as: "__rm"}} */
void rm_cs_lookup (bson_t *pipeline, const char *from, const char *local, const char *foreign);
/* {$unwind: {path: "$__rm", includeArrayIndex: "__rm_i",
 * preserveNullAndEmptyArrays: true}}: one row per child, its position in
 * the $lookup's array (the tie-break: from's order), and one row with
 * __rm_i null for a parent with no child. */
void rm_cs_unwind (bson_t *pipeline);
/* {$project: {name: 0, ...}}: the scratch fields out again. */
void rm_cs_drop (bson_t *pipeline, const char *const *names, size_t n);

/* Appends key: <whether expr has a value> (missing: false; null: true):
 * an object expression leaves out a field whose value is missing, so
 * {$objectToArray: {v: expr}} has one element or none ($type would say
 * "missing", but not every server has it). */
void rm_cs_append_has (bson_t *doc, const char *key, const char *expr);
/* Appends key: <whether the document base ("$__rm") has the field path>:
 * a top-level one among its field names, exactly; a dotted one as
 * rm_cs_append_has. */
void rm_cs_append_has_field (bson_t *doc, const char *key, const char *base, const char *path);
/* Appends key: {$eq: ["$__rm_i", null]}: the row of a parent with no child. */
void rm_cs_append_no_child (bson_t *doc, const char *key);
/* Whether a plan's path names a top-level field. */
bool rm_cs_top_level (const rm_path_t *p);
/* Whether a field name could collide with the scratch fields. */
bool rm_cs_reserved (const char *name);

#endif
