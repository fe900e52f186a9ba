/* MongoDB's aggregation expressions ("$a.b", {"$concat": [...]},
 * {"$toDate": "$s"}) compiled once from a plan and evaluated per document
 * with the server's semantics (docs/plans.md, "Expressions and filters";
 * shared traps in reference/mongodb-semantics.md). The layer is
 * common/expr/; queries (a step's filter) are remodel/query.h, above it.
 *
 * Values are libbson's bson_value_t. A value of type BSON_TYPE_EOD (0) is
 * "missing": a path that found nothing, $$REMOVE, $arrayElemAt out of
 * range; $set leaves such a field out. Strings, documents and arrays point
 * into the evaluated document, the compiled expression, or memory the
 * context owns until its next rm_expr_ctx_reset: evaluating allocates
 * nothing once the context has grown to the largest document's needs. */
#ifndef REMODEL_EXPR_H
#define REMODEL_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/buf.h"
#include "remodel/docpath.h"
#include "remodel/error.h"

typedef struct rm_expr rm_expr_t;
typedef struct rm_expr_ctx rm_expr_ctx_t;

/* Compiles the expression at it (any BSON value: a path string, a
 * literal, an operator document, a document or array of expressions).
 * Refuses unknown and unsupported operators by name ($function, $meta,
 * ...), malformed arguments, and field names with a leading '$' or a dot
 * in an object expression: err says which (RM_ERR_USAGE). */
rm_expr_t *rm_expr_parse (const bson_iter_t *it, bson_error_t *err);
void rm_expr_destroy (rm_expr_t *e);

/* Whether e is a constant (a literal with no path, variable or operator):
 * *value then holds it (owned by e). */
bool rm_expr_constant (const rm_expr_t *e, const bson_value_t **value);

/* Calls fn with every field path e reads from the document ("$a.b",
 * "$$ROOT.a", "$$CURRENT.a"); whole is set when e reads $$ROOT or
 * $$CURRENT as a whole (every field). */
typedef void (*rm_expr_path_fn) (const rm_path_t *path, void *arg);
void rm_expr_paths (const rm_expr_t *e, rm_expr_path_fn fn, void *arg, bool *whole);

/* Whether e uses $$NOW (the value a run records: rm_expr_ctx_set_now). */
bool rm_expr_uses_now (const rm_expr_t *e);

/* $$NOW of the run this process is making, in milliseconds since the
 * epoch: set once by whoever starts it (the engine; the online mode from
 * the plan's record, so that resumes agree), else the clock when first
 * asked. */
void rm_expr_set_run_now (int64_t ms);
int64_t rm_expr_run_now (void);

/* The bound on the memory one document's expression values take in a
 * context (everything built between two rm_expr_ctx_reset), for contexts
 * made from now on: the command's --memory (0: its default, 512 MiB).
 * Past it the evaluation fails, RM_ERR_DATA, naming the operator.
 * Process-wide, as $$NOW is. rm_expr_ctx_set_memory bounds one context
 * (0: the process's). */
void rm_expr_set_memory (size_t bytes);
size_t rm_expr_memory (void);

/* An evaluation context: reused for every document of a run (one per
 * thread). now_ms is $$NOW (0: rm_expr_run_now ()). */
rm_expr_ctx_t *rm_expr_ctx_new (int64_t now_ms);
void rm_expr_ctx_destroy (rm_expr_ctx_t *cx);
/* Frees (for reuse) every value built since the last reset: call it
 * before each document, once the values of the last one are written. */
void rm_expr_ctx_reset (rm_expr_ctx_t *cx);
void rm_expr_ctx_set_memory (rm_expr_ctx_t *cx, size_t bytes);
/* Until rm_expr_ctx_release (or a reset), doc (len bytes) stays as it is
 * and evaluations over it share one walk of its top-level fields. */
void rm_expr_ctx_hold (rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len);
void rm_expr_ctx_release (rm_expr_ctx_t *cx);
/* rm_doc_field's first field named (name, name_len) of doc, through the
 * held walk when doc is the held document (cx may be NULL). */
bool rm_expr_ctx_field (rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len, const char *name,
                        uint32_t name_len, bson_iter_t *out);
/* The same field's value, decoded from the held walk without an
 * iterator: 1 found, 0 missing, -1 doc is not the held document (cx may
 * be NULL). Strings, documents and arrays point into doc. */
int rm_expr_ctx_held_value (rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len, const char *name,
                            uint32_t name_len, bson_value_t *out);

/* Evaluates e over the document (doc, len: $$ROOT and $$CURRENT) into
 * *out. An error (a conversion that fails, $size of a non-array, a
 * division by zero) is RM_ERR_DATA with a message naming the operator
 * and the value ("$toDate: cannot convert the string \"n/a\" to a
 * date"). */
bool rm_expr_eval (rm_expr_ctx_t *cx, const rm_expr_t *e, const uint8_t *doc, uint32_t len,
                   bson_value_t *out, bson_error_t *err);

/* The value as a BSON element's bytes, for docpath's edits (remodel/
 * docpath.h's rm_doc_set): encoded into memory of cx (until its reset).
 * v must not be missing. */
void rm_expr_raw (rm_expr_ctx_t *cx, const bson_value_t *v, rm_raw_value_t *raw);

/* Appends v to doc as field key (a missing v appends nothing), as
 * bson_append_value does but without copying strings twice. */
void rm_expr_append (bson_t *doc, const char *key, int key_len, const bson_value_t *v);

/* Compares two values in MongoDB's order (remodel/value.h's
 * rm_value_compare); a missing value compares as null. */
int rm_expr_compare (rm_expr_ctx_t *cx, const bson_value_t *a, const bson_value_t *b);

/* A value as relaxed Extended JSON, escaped and cut to about max bytes,
 * for messages: in memory of cx (until its reset). */
const char *rm_expr_show (rm_expr_ctx_t *cx, const bson_value_t *v, size_t max);

/* A $set (or $addFields) stage: its fields, a document of {"path":
 * expression} where a document of fields stands for their dotted paths
 * ({"a": {"b": 1}} is {"a.b": 1}). Refuses path collisions ("a" and
 * "a.b"), names starting with '$', and bad expressions, naming the path. */
typedef struct rm_expr_set rm_expr_set_t;
rm_expr_set_t *rm_expr_set_parse (const bson_iter_t *fields, bson_error_t *err);
void rm_expr_set_destroy (rm_expr_set_t *s);
/* Its fields, in the order named: the dotted path and the expression. */
size_t rm_expr_set_count (const rm_expr_set_t *s);
const char *rm_expr_set_path (const rm_expr_set_t *s, size_t i);
const rm_expr_t *rm_expr_set_expr (const rm_expr_set_t *s, size_t i);
/* Writes into out (emptied first) the document with the stage applied:
 * every expression evaluated against doc as it came in; a missing result
 * removes the field; paths go through documents and into arrays' elements
 * as the stage's do; every other field keeps its place and its bytes. An
 * error names the field: "field \"d\": $toDate: ...". */
bool rm_expr_set_apply (const rm_expr_set_t *s, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                        rm_buf_t *out, bson_error_t *err);
/* rm_expr_set_apply, the document appended to out's bytes instead (out
 * left as it was on an error): a caller gathering many results writes
 * each where it keeps it, not through a buffer of its own and a copy. */
bool rm_expr_set_append (const rm_expr_set_t *s, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                         rm_buf_t *out, bson_error_t *err);
/* Whether the last rm_expr_set_apply on cx (since its reset) set only
 * top-level fields, each to a value at most RM_BSON_MAX_NESTING - 1
 * levels deep: its result then nests past RM_BSON_MAX_NESTING only where
 * its input already did, and the depth guard need not walk it. */
bool rm_expr_set_shallow (const rm_expr_ctx_t *cx);

/* The $unset stage (a $project exclusion): removes each path, through
 * documents and into each document of an array, a numeric component a
 * field name; a path through a scalar changes nothing. paths stay the
 * caller's while u lives. changed: whether a field went. */
typedef struct rm_expr_unset rm_expr_unset_t;
rm_expr_unset_t *rm_expr_unset_new (const rm_path_t *paths, size_t n);
void rm_expr_unset_destroy (rm_expr_unset_t *u);
void rm_expr_unset_apply (const rm_expr_unset_t *u, const uint8_t *doc, uint32_t len, rm_buf_t *out,
                          bool *changed);

/* The catalogue: whether name ("$toDate") is an operator this build
 * evaluates; rm_expr_op_name(i) lists them, NULL past the last. */
bool rm_expr_op_supported (const char *name);
const char *rm_expr_op_name (size_t i);

#endif
