/* Internals shared by the accumulator files: expressions
 * (accum_expr.c), $topN/$bottomN (accum_topn.c) and $addToSet
 * (accum_set.c), all used by accum.c. Decimal arithmetic is the
 * expression layer's (expr_decimal.h). */
#ifndef REMODEL_ACCUM_IMPL_H
#define REMODEL_ACCUM_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/expr.h"

/* accum_expr.c: an aggregation expression (remodel/expr.h) as the
 * accumulators use it. eval: 1 with the value at *out (in scratch, or in
 * the expression), 0 when missing, -1 with err when evaluating failed;
 * append: the value as field key of dst (null when missing and
 * null_if_missing), the same results. cx: the caller's context, reset by
 * it once per document. */
typedef struct rm_acc_expr rm_acc_expr_t;
rm_acc_expr_t *rm_acc_expr_parse (const bson_iter_t *it, bson_error_t *err);
rm_acc_expr_t *rm_acc_expr_path (const char *dotted, bson_error_t *err);
void rm_acc_expr_destroy (rm_acc_expr_t *e);
bool rm_acc_expr_literal (const rm_acc_expr_t *e, bson_iter_t *out);
const rm_expr_t *rm_acc_expr_expr (const rm_acc_expr_t *e);
int rm_acc_expr_eval (const rm_acc_expr_t *e, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                      bson_t *scratch, bson_iter_t *out, bson_error_t *err);
int rm_acc_expr_append (const rm_acc_expr_t *e, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                        bson_t *dst, const char *key, int keylen, bool null_if_missing,
                        bson_error_t *err);

/* accum_topn.c */
typedef struct rm_acc_topn_spec rm_acc_topn_spec_t;
typedef struct rm_acc_topn rm_acc_topn_t;
rm_acc_topn_spec_t *rm_acc_topn_spec_parse (const bson_iter_t *arg, bool bottom, bson_error_t *err);
void rm_acc_topn_spec_destroy (rm_acc_topn_spec_t *s);
rm_acc_topn_t *rm_acc_topn_new (const rm_acc_topn_spec_t *s);
void rm_acc_topn_reset (rm_acc_topn_t *t);
bool rm_acc_topn_add (rm_acc_topn_t *t, const uint8_t *doc, uint32_t len, uint64_t seq,
                      bson_error_t *err);
bool rm_acc_topn_finish (rm_acc_topn_t *t, bson_t *out, const char *name, bson_error_t *err);
void rm_acc_topn_destroy (rm_acc_topn_t *t);

/* accum_set.c */
typedef struct rm_acc_set rm_acc_set_t;
rm_acc_set_t *rm_acc_set_new (void);
void rm_acc_set_reset (rm_acc_set_t *s);
bool rm_acc_set_add (rm_acc_set_t *s, const bson_iter_t *v, bson_error_t *err);
bool rm_acc_set_finish (rm_acc_set_t *s, bson_t *out, const char *name, bson_error_t *err);
void rm_acc_set_destroy (rm_acc_set_t *s);

#endif
