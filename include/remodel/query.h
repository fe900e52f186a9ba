/* MongoDB's query language over one document: a step's "filter" and
 * "match" ({"schemaVersion": {"$lt": 2}}, {"$or": [...]}, {"$expr": ...}),
 * with the server's rules (reference/mongodb-semantics.md, "Queries"):
 * {a: null} matches missing, a condition on an array matches any element
 * or the whole array, comparisons bracket by type; {"$jsonSchema": ...}
 * judges the whole document as the server's validator does. The layer is
 * common/query/, above common/expr/ (for $expr). */
#ifndef REMODEL_QUERY_H
#define REMODEL_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/error.h"
#include "remodel/expr.h"

typedef struct rm_query rm_query_t;

/* Compiles the query document at it; refuses unknown operators, malformed
 * arguments and operators that need the server ($where, $text, $near,
 * $geoWithin ...) by name (RM_ERR_USAGE). */
rm_query_t *rm_query_parse (const bson_iter_t *it, bson_error_t *err);
void rm_query_destroy (rm_query_t *q);

/* Whether the document matches, into *matched. cx evaluates $expr (and
 * holds what it builds until its reset). false with err only when an
 * expression under $expr fails, or a $regex runs past PCRE2's match limit
 * (a pattern that backtracks catastrophically): RM_ERR_DATA. The query is
 * only read: threads may share one, each with its own cx. */
bool rm_query_match (const rm_query_t *q, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                     bool *matched, bson_error_t *err);

/* Calls fn with every field path the query reads; whole is set when it
 * reads the document as a whole ($expr over $$ROOT). */
void rm_query_paths (const rm_query_t *q, rm_expr_path_fn fn, void *arg, bool *whole);

/* For check's warning: the top-level conditions that never match a
 * document lacking the field (a comparison such as {v: {$lt: 2}}, unlike
 * {v: null} or {v: {$exists: false}}), one path each; fn is called with
 * each such path. */
void rm_query_needs_fields (const rm_query_t *q, rm_expr_path_fn fn, void *arg);

#endif
