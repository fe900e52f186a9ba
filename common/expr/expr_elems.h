/* What the array and object operators share (expr_array.c,
 * expr_object.c): an array's elements kept as iterators in memory of the
 * context, compared in place in MongoDB's order; a stable sort of
 * indexes; and the message for an argument of the wrong type. Private to
 * common/expr/ and the layers above. */
#ifndef REMODEL_EXPR_ELEMS_H
#define REMODEL_EXPR_ELEMS_H

#include <string.h>

#include "expr_impl.h"

/* "$op: WHAT must be WANT, not the TYPE VALUE" (or "not null", "but it
 * is missing"); returns false, for "return rm_xwrong (...)". */
bool rm_xwrong (rm_expr_ctx_t *cx, bson_error_t *err, const rm_expr_t *e, const char *what,
                const char *want, const bson_value_t *v);

/* The opening these operators share: evaluates arg into *v; null or
 * missing sets *out to null (the operator answers null: go on only when
 * !rm_xval_nullish (v)); any type but type fails with rm_xwrong (what,
 * want). false on an error. */
bool rm_xarg (rm_expr_ctx_t *cx, const rm_expr_t *e, const rm_expr_t *arg, bson_type_t type,
              const char *what, const char *want, bson_value_t *v, bson_value_t *out, bson_error_t *err);
/* The same where null is an error too ($setEquals, $setIsSubset,
 * $allElementsTrue): false unless *v is of type. */
bool rm_xarg_strict (rm_expr_ctx_t *cx, const rm_expr_t *e, const rm_expr_t *arg, bson_type_t type,
                     const char *what, const char *want, bson_value_t *v, bson_error_t *err);

/* An iterator kept in memory of cx: bson_iter_t asks for 128-byte
 * alignment (more than its size), so arrays of them are kept as bytes and
 * copied out to a local to be used. */
typedef struct {
    unsigned char b[sizeof (bson_iter_t)];
} rm_xbox_t;

static inline void
rm_xunbox (const rm_xbox_t *box, bson_iter_t *it)
{
    memcpy (it, box->b, sizeof *it);
}

/* The element's value: strings, documents and binaries point into the
 * array, not the iterator, so the copy outlives it. */
bson_value_t rm_xbox_value (const rm_xbox_t *box);
/* MongoDB's order of two elements (remodel/value.h's rm_value_compare). */
int rm_xbox_compare (const rm_xbox_t *a, const rm_xbox_t *b);
/* An array value's elements, *n of them, in memory of cx. */
rm_xbox_t *rm_xelems (rm_expr_ctx_t *cx, const bson_value_t *arr, uint32_t *n);

/* A stable merge sort of the indexes idx[0..n) by cmp (tmp: room for n):
 * no allocation, and equal elements keep their order. */
typedef int (*rm_xsort_cmp_fn) (void *ctx, uint32_t a, uint32_t b);
void rm_xsort (uint32_t *idx, uint32_t *tmp, uint32_t n, rm_xsort_cmp_fn cmp, void *ctx);
/* 0, 1, ... n-1 in memory of cx. */
uint32_t *rm_xiota (rm_expr_ctx_t *cx, uint32_t n);

#endif
