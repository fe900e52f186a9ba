/* What the array and object operators share: elements as iterators, the
 * sort of indexes, the wrong-type message (expr_elems.h). */
#include "remodel/value.h"

#include "expr_elems.h"

bool
rm_xwrong (rm_expr_ctx_t *cx, bson_error_t *err, const rm_expr_t *e, const char *what, const char *want,
           const bson_value_t *v)
{
    if (rm_xval_missing (v))
        return rm_xfail (err, e, "%s must be %s, but it is missing", what, want);
    if (v->value_type == BSON_TYPE_NULL || v->value_type == BSON_TYPE_UNDEFINED)
        return rm_xfail (err, e, "%s must be %s, not %s", what, want, rm_xval_type_name (v));
    return rm_xfail (err, e, "%s must be %s, not the %s %s", what, want, rm_xval_type_name (v),
                     rm_xshow (cx, v));
}

bool
rm_xarg (rm_expr_ctx_t *cx, const rm_expr_t *e, const rm_expr_t *arg, bson_type_t type, const char *what,
         const char *want, bson_value_t *v, bson_value_t *out, bson_error_t *err)
{
    if (!rm_xeval (cx, arg, v, err))
        return false;
    if (rm_xval_nullish (v)) {
        rm_xset_null (out);
        return true;
    }
    return v->value_type == type || rm_xwrong (cx, err, e, what, want, v);
}

bool
rm_xarg_strict (rm_expr_ctx_t *cx, const rm_expr_t *e, const rm_expr_t *arg, bson_type_t type,
                const char *what, const char *want, bson_value_t *v, bson_error_t *err)
{
    if (!rm_xeval (cx, arg, v, err))
        return false;
    return v->value_type == type || rm_xwrong (cx, err, e, what, want, v);
}

bson_value_t
rm_xbox_value (const rm_xbox_t *box)
{
    bson_iter_t it;
    rm_xunbox (box, &it);
    return *bson_iter_value (&it);
}

int
rm_xbox_compare (const rm_xbox_t *a, const rm_xbox_t *b)
{
    bson_iter_t ia, ib;
    rm_xunbox (a, &ia);
    rm_xunbox (b, &ib);
    return rm_value_compare (&ia, &ib);
}

rm_xbox_t *
rm_xelems (rm_expr_ctx_t *cx, const bson_value_t *arr, uint32_t *n)
{
    uint32_t k = rm_xval_count (arr), i = 0;
    rm_xbox_t *out = rm_xalloc (cx, (k ? k : 1) * sizeof *out);
    bson_iter_t it;
    rm_xval_iter (arr, &it);
    while (i < k && bson_iter_next (&it))
        memcpy (out[i++].b, &it, sizeof it);
    *n = i;
    return out;
}

void
rm_xsort (uint32_t *idx, uint32_t *tmp, uint32_t n, rm_xsort_cmp_fn cmp, void *ctx)
{
    uint32_t *src = idx, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            /* The left run wins ties: equal elements keep their order. */
            while (i < mid && j < hi)
                dst[k++] = cmp (ctx, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx)
        memcpy (idx, src, n * sizeof *idx);
}

uint32_t *
rm_xiota (rm_expr_ctx_t *cx, uint32_t n)
{
    uint32_t *idx = rm_xalloc (cx, (n ? n : 1) * sizeof *idx);
    for (uint32_t i = 0; i < n; i++)
        idx[i] = i;
    return idx;
}
