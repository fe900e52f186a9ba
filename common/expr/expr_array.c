/* The array operators: elements and slices ($arrayElemAt, $first, $last,
 * $slice, $firstN, $lastN), sizes and searches ($size, $indexOfArray,
 * $in), building ($concatArrays, $reverseArray, $range, $zip), the
 * operators that bind variables ($map, $filter, $reduce) and ordering
 * ($sortArray, $maxN, $minN), with the server's rules for null, missing
 * and wrong types (its expression evaluators, evaluate_array.cpp and
 * accumulator_multi.cpp).
 *
 * Equality and order are MongoDB's (remodel/value.h's rm_value_compare),
 * run on the elements in place: an array's elements are kept as iterators
 * positioned on them, so comparing never re-encodes a value. A value the
 * server holds as "missing" compares as undefined does, as its Value
 * comparison has it. */
#include <string.h>

#include "remodel/value.h"

#include "expr_elems.h"

/* The server refuses a $range whose elements would take this much of its
 * memory (internalQueryMaxRangeBytes: 24 bytes of vector and 16 bytes a
 * Value). */
#define RANGE_MEM_LIMIT (100 * 1024 * 1024)
/* Our own bound on an array built here ($map, $concatArrays, $zip ...):
 * past it evaluating stops with an error rather than exhausting memory. */
#define BUILD_LIMIT ((size_t) 100 * 1024 * 1024)

/* ---- Helpers ---- */

static bool
too_big (rm_expr_ctx_t *cx, bson_error_t *err, const rm_expr_t *e, rm_xbuild_t *b)
{
    if (b->buf->len <= BUILD_LIMIT)
        return false;
    rm_xbuild_abort (b);
    rm_xfail (err, e, "the array it builds passes %zu MiB: refused rather than exhausting memory",
              BUILD_LIMIT >> 20);
    return true;
}

/* The server's "integral" test: a number with an integral value that fits
 * an int32 (3, 3.0, NumberLong(3), NumberDecimal("3")). */
static bool
int32_of (const bson_value_t *v, int32_t *out)
{
    int64_t i;
    if (!rm_xval_to_int64 (v, &i) || i < INT32_MIN || i > INT32_MAX)
        return false;
    *out = (int32_t) i;
    return true;
}

/* v as an iterator over a document of cx ({"": v}), to compare it with
 * elements in place. Missing stands as undefined: the server's Value
 * comparison puts both in one class, equal to each other. */
static void
iter_of_value (rm_expr_ctx_t *cx, const bson_value_t *v, bson_iter_t *it)
{
    bson_value_t doc, undef;
    rm_xbuild_t b;
    if (rm_xval_missing (v)) {
        undef.value_type = BSON_TYPE_UNDEFINED;
        v = &undef;
    }
    rm_xbuild_begin (cx, &b, false);
    rm_xbuild_field (&b, "", 0, v);
    rm_xbuild_end (&b, &doc);
    bson_iter_init_from_data (it, doc.value.v_doc.data, doc.value.v_doc.data_len);
    bson_iter_next (it);
}

/* ---- Elements and slices ---- */

/* The element at i of an array value (negative: from the end), or
 * missing out of range. */
static void
elem_at (const bson_value_t *arr, int64_t i, bson_value_t *out)
{
    bson_iter_t it;
    int64_t n = rm_xval_count (arr);
    if (i < 0)
        i += n;
    rm_xset_missing (out);
    if (i < 0 || i >= n)
        return;
    rm_xval_iter (arr, &it);
    while (bson_iter_next (&it))
        if (i-- == 0) {
            *out = *bson_iter_value (&it);
            return;
        }
}

/* $arrayElemAt: [array, index]; $first and $last are it with 0 and -1.
 * Null or missing arguments give null; an index out of range is missing,
 * so a $set leaves the field out. */
static bool
elem_common (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *arr, const bson_value_t *idx,
             bson_value_t *out, bson_error_t *err)
{
    int32_t i;
    if (rm_xval_nullish (arr) || rm_xval_nullish (idx)) {
        rm_xset_null (out);
        return true;
    }
    if (arr->value_type != BSON_TYPE_ARRAY)
        return rm_xwrong (cx, err, e, e->n == 1 ? "its argument" : "its first argument", "an array", arr);
    if (!rm_xval_is_number (idx))
        return rm_xwrong (cx, err, e, "its index", "a number", idx);
    if (!int32_of (idx, &i))
        return rm_xfail (err, e, "its index must be an integer that fits 32 bits, not %s",
                         rm_xshow (cx, idx));
    elem_at (arr, i, out);
    return true;
}

static bool
eval_elem_at (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    if (!rm_xeval_args (cx, e, v, err))
        return false;
    return elem_common (cx, e, &v[0], &v[1], out, err);
}

static bool
eval_first_last (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t arr, idx;
    if (!rm_xeval (cx, e->args[0], &arr, err))
        return false;
    rm_xset_int32 (&idx, e->op->name[1] == 'f' ? 0 : -1);
    return elem_common (cx, e, &arr, &idx, out, err);
}

/* Elements [from, to) of an array value as a new array. */
static void
sub_array (rm_expr_ctx_t *cx, const bson_value_t *arr, int64_t from, int64_t to, bson_value_t *out)
{
    bson_iter_t it;
    rm_xbuild_t b;
    int64_t i = 0;
    rm_xbuild_begin (cx, &b, true);
    rm_xval_iter (arr, &it);
    while (i < to && bson_iter_next (&it))
        if (i++ >= from)
            rm_xbuild_push (&b, bson_iter_value (&it));
    rm_xbuild_end (&b, out);
}

/* $slice: [array, n] (n < 0: the last -n) or [array, position, n]
 * (position < 0 counts from the end; n must be positive). */
static bool
eval_slice (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t arr, a2, a3;
    int32_t p, c;
    int64_t len, from, to;

    if (!rm_xeval (cx, e->args[0], &arr, err) || !rm_xeval (cx, e->args[1], &a2, err))
        return false;
    if (rm_xval_nullish (&arr) || rm_xval_nullish (&a2)) {
        rm_xset_null (out);
        return true;
    }
    if (arr.value_type != BSON_TYPE_ARRAY)
        return rm_xwrong (cx, err, e, "its first argument", "an array", &arr);
    if (!rm_xval_is_number (&a2))
        return rm_xwrong (cx, err, e, "its second argument", "a number", &a2);
    if (!int32_of (&a2, &p))
        return rm_xfail (err, e, "its second argument must be an integer that fits 32 bits, not %s",
                         rm_xshow (cx, &a2));
    len = rm_xval_count (&arr);
    if (e->n == 2) {
        from = p >= 0 ? 0 : (len + p > 0 ? len + p : 0);
        to = p >= 0 ? (p < len ? p : len) : len;
    } else {
        from = p >= 0 ? (p < len ? p : len) : (len + p > 0 ? len + p : 0);
        if (!rm_xeval (cx, e->args[2], &a3, err))
            return false;
        if (rm_xval_nullish (&a3)) {
            rm_xset_null (out);
            return true;
        }
        if (!rm_xval_is_number (&a3))
            return rm_xwrong (cx, err, e, "its third argument", "a number", &a3);
        if (!int32_of (&a3, &c))
            return rm_xfail (err, e, "its third argument must be an integer that fits 32 bits, not %s",
                             rm_xshow (cx, &a3));
        if (c <= 0)
            return rm_xfail (err, e, "its third argument (how many) must be positive, not %d", c);
        to = from + c < len ? from + c : len;
    }
    sub_array (cx, &arr, from, to, out);
    return true;
}

/* $size: the number of elements; anything but an array (null and missing
 * included) is an error. */
static bool
eval_size (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xarg_strict (cx, e, e->args[0], BSON_TYPE_ARRAY, "its argument", "an array", &v, err))
        return false;
    rm_xset_int32 (out, (int32_t) rm_xval_count (&v));
    return true;
}

/* ---- Searching ---- */

/* $in: [value, array]: whether an element equals value. The second must
 * be an array, even null is an error. */
static bool
eval_in (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    bson_iter_t key, it;
    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (v[1].value_type != BSON_TYPE_ARRAY)
        return rm_xwrong (cx, err, e, "its second argument", "an array", &v[1]);
    iter_of_value (cx, &v[0], &key);
    rm_xval_iter (&v[1], &it);
    while (bson_iter_next (&it))
        if (rm_value_compare (&key, &it) == 0) {
            rm_xset_bool (out, true);
            return true;
        }
    rm_xset_bool (out, false);
    return true;
}

/* An $indexOfArray bound: an integer, at least 0. */
static bool
index_bound (rm_expr_ctx_t *cx, const rm_expr_t *e, const char *what, const bson_value_t *v, int32_t *i,
             bson_error_t *err)
{
    if (!int32_of (v, i)) {
        char w[32];
        snprintf (w, sizeof w, "its %s", what);
        return rm_xwrong (cx, err, e, w, "an integer that fits 32 bits", v);
    }
    if (*i < 0)
        return rm_xfail (err, e, "its %s must not be negative, not %d", what, *i);
    return true;
}

/* $indexOfArray: [array, value, start, end]: the first index in
 * [start, end) whose element equals value, or -1. */
static bool
eval_index_of (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t arr, v, b;
    bson_iter_t key, it;
    int32_t start = 0, end = INT32_MAX, i = 0;

    if (!rm_xarg (cx, e, e->args[0], BSON_TYPE_ARRAY, "its first argument", "an array", &arr, out, err))
        return false;
    if (rm_xval_nullish (&arr))
        return true;
    if (!rm_xeval (cx, e->args[1], &v, err))
        return false;
    if (e->n > 2 && (!rm_xeval (cx, e->args[2], &b, err) || !index_bound (cx, e, "start", &b, &start, err)))
        return false;
    if (e->n > 3 && (!rm_xeval (cx, e->args[3], &b, err) || !index_bound (cx, e, "end", &b, &end, err)))
        return false;
    iter_of_value (cx, &v, &key);
    rm_xval_iter (&arr, &it);
    for (; i < end && bson_iter_next (&it); i++)
        if (i >= start && rm_value_compare (&key, &it) == 0) {
            rm_xset_int32 (out, i);
            return true;
        }
    rm_xset_int32 (out, -1);
    return true;
}

/* ---- Building ---- */

/* $concatArrays: null as soon as an argument is null or missing (later
 * ones not evaluated, as the server stops there). */
static bool
eval_concat (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    rm_xbuild_t b;
    rm_xbuild_begin (cx, &b, true);
    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        bson_iter_t it;
        if (!rm_xeval (cx, e->args[i], &v, err)) {
            rm_xbuild_abort (&b);
            return false;
        }
        if (rm_xval_nullish (&v)) {
            rm_xbuild_abort (&b);
            rm_xset_null (out);
            return true;
        }
        if (v.value_type != BSON_TYPE_ARRAY) {
            rm_xbuild_abort (&b);
            return rm_xwrong (cx, err, e, "each argument", "an array", &v);
        }
        rm_xval_iter (&v, &it);
        while (bson_iter_next (&it))
            rm_xbuild_push (&b, bson_iter_value (&it));
        if (too_big (cx, err, e, &b))
            return false;
    }
    rm_xbuild_end (&b, out);
    return true;
}

static bool
eval_reverse (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v, x;
    rm_xbox_t *el;
    rm_xbuild_t b;
    uint32_t n;

    if (!rm_xarg (cx, e, e->args[0], BSON_TYPE_ARRAY, "its argument", "an array", &v, out, err))
        return false;
    if (rm_xval_nullish (&v))
        return true;
    el = rm_xelems (cx, &v, &n);
    rm_xbuild_begin (cx, &b, true);
    while (n > 0) {
        x = rm_xbox_value (&el[--n]);
        rm_xbuild_push (&b, &x);
    }
    rm_xbuild_end (&b, out);
    return true;
}

static bool
range_arg (rm_expr_ctx_t *cx, const rm_expr_t *e, const char *what, const bson_value_t *v, int32_t *i,
           bson_error_t *err)
{
    if (!rm_xval_is_number (v))
        return rm_xwrong (cx, err, e, what, "a number", v);
    if (!int32_of (v, i))
        return rm_xfail (err, e, "%s must be an integer that fits 32 bits, not %s", what, rm_xshow (cx, v));
    return true;
}

/* $range: [start, end, step]: int32s from start towards end (excluded).
 * Refused, as the server refuses it, when it would pass the server's
 * memory limit for it (about 6.5 million elements). */
static bool
eval_range (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[3];
    int32_t s32, e32, st32 = 1;
    int64_t cur, end, step, steps, len, need;
    rm_xbuild_t b;

    if (!rm_xeval_args_n (cx, e, v, 2, err) || !range_arg (cx, e, "its start", &v[0], &s32, err) ||
        !range_arg (cx, e, "its end", &v[1], &e32, err))
        return false;
    if (e->n == 3) {
        if (!rm_xeval (cx, e->args[2], &v[2], err) || !range_arg (cx, e, "its step", &v[2], &st32, err))
            return false;
        if (st32 == 0)
            return rm_xfail (err, e, "its step must not be 0");
    }
    cur = s32;
    end = e32;
    step = st32;
    steps = (end - cur) / step;
    len = steps >= 0 ? 1 + steps : 0;
    need = 24 + len * 16;
    if (need >= RANGE_MEM_LIMIT)
        return rm_xfail (err, e, "[%d, %d, %d] would use too much memory (%lld bytes; the server's "
                         "limit for $range is %d bytes)",
                         s32, e32, st32, (long long) need, RANGE_MEM_LIMIT);
    rm_xbuild_begin (cx, &b, true);
    for (; step > 0 ? cur < end : cur > end; cur += step) {
        bson_value_t x;
        rm_xset_int32 (&x, (int32_t) cur);
        rm_xbuild_push (&b, &x);
    }
    rm_xbuild_end (&b, out);
    return true;
}

/* $zip: {inputs: [a, b, ...], useLongestLength, defaults: [...]}: args are
 * the inputs, then the defaults (as many, or none); data says which. */
typedef struct {
    size_t n_inputs;
    bool longest;
    bool has_defaults;
} zip_t;

static bool
count_array (const bson_iter_t *it, size_t *n)
{
    bson_iter_t sub;
    *n = 0;
    if (!BSON_ITER_HOLDS_ARRAY (it))
        return false;
    bson_iter_recurse (it, &sub);
    while (bson_iter_next (&sub))
        (*n)++;
    return true;
}

static bool
parse_zip (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    bson_iter_t sub, inputs, defaults;
    bool has_inputs = false, has_defaults = false, longest = false;
    size_t ni = 0, nd = 0, k = 0;
    zip_t *z;

    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document {inputs, useLongestLength, defaults}");
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        const char *key = bson_iter_key (&sub);
        if (!strcmp (key, "inputs")) {
            if (!count_array (&sub, &ni))
                return rm_xparse_fail (err, e, "'inputs' must be an array of expressions, not %s",
                                       rm_value_type_name (bson_iter_type (&sub)));
            inputs = sub;
            has_inputs = true;
        } else if (!strcmp (key, "defaults")) {
            if (!count_array (&sub, &nd))
                return rm_xparse_fail (err, e, "'defaults' must be an array of expressions, not %s",
                                       rm_value_type_name (bson_iter_type (&sub)));
            defaults = sub;
            has_defaults = true;
        } else if (!strcmp (key, "useLongestLength")) {
            if (!BSON_ITER_HOLDS_BOOL (&sub))
                return rm_xparse_fail (err, e, "'useLongestLength' must be a bool, not %s",
                                       rm_value_type_name (bson_iter_type (&sub)));
            longest = bson_iter_bool (&sub);
        } else {
            return rm_xparse_fail (err, e, "unknown argument '%s'", key);
        }
    }
    if (!has_inputs || ni == 0)
        return rm_xparse_fail (err, e, "needs at least one input array in 'inputs'");
    if (has_defaults && !longest)
        return rm_xparse_fail (err, e, "'defaults' needs 'useLongestLength': true");
    if (has_defaults && nd != ni)
        return rm_xparse_fail (err, e, "'defaults' and 'inputs' must have the same length (%zu and %zu)",
                               nd, ni);
    z = bson_malloc0 (sizeof *z);
    z->n_inputs = ni;
    z->longest = longest;
    z->has_defaults = has_defaults;
    e->data = z;
    e->data_free = bson_free;
    rm_xnode_args (e, ni + (has_defaults ? nd : 0));
    bson_iter_recurse (&inputs, &sub);
    while (bson_iter_next (&sub))
        if (!rm_xparse_expr (p, &sub, &e->args[k++], err))
            return false;
    if (has_defaults) {
        bson_iter_recurse (&defaults, &sub);
        while (bson_iter_next (&sub))
            if (!rm_xparse_expr (p, &sub, &e->args[k++], err))
                return false;
    }
    return true;
}

static bool
eval_zip (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    const zip_t *z = e->data;
    size_t ni = z->n_inputs;
    bson_value_t *in = rm_xvals (cx, ni), *dflt = rm_xvals (cx, ni);
    rm_xbox_t **el = rm_xalloc (cx, ni * sizeof *el);
    uint32_t *len = rm_xalloc (cx, ni * sizeof *len), lo = 0, hi = 0, rows;
    rm_xbuild_t b, row;

    for (size_t i = 0; i < ni; i++) {
        if (!rm_xeval (cx, e->args[i], &in[i], err))
            return false;
        if (rm_xval_nullish (&in[i])) {
            rm_xset_null (out);
            return true;
        }
        if (in[i].value_type != BSON_TYPE_ARRAY)
            return rm_xwrong (cx, err, e, "each input", "an array", &in[i]);
        el[i] = rm_xelems (cx, &in[i], &len[i]);
        lo = i == 0 || len[i] < lo ? len[i] : lo;
        hi = i == 0 || len[i] > hi ? len[i] : hi;
    }
    /* The defaults are evaluated only when some input is short. */
    for (size_t i = 0; i < ni; i++) {
        rm_xset_null (&dflt[i]);
        if (z->has_defaults && lo != hi && !rm_xeval (cx, e->args[ni + i], &dflt[i], err))
            return false;
    }
    rows = z->longest ? hi : lo;
    rm_xbuild_begin (cx, &b, true);
    for (uint32_t r = 0; r < rows; r++) {
        bson_value_t one, x;
        rm_xbuild_begin (cx, &row, true);
        for (size_t i = 0; i < ni; i++) {
            x = r < len[i] ? rm_xbox_value (&el[i][r]) : dflt[i];
            rm_xbuild_push (&row, &x);
        }
        rm_xbuild_end (&row, &one);
        rm_xbuild_push (&b, &one);
        if (too_big (cx, err, e, &b))
            return false;
    }
    rm_xbuild_end (&b, out);
    return true;
}

/* ---- $map, $filter, $reduce ---- */

/* Binds name for the expressions parsed next into *slot; false with err
 * naming the operator. "as": "CURRENT" rebinds CURRENT, as the server's
 * map.js does: each element is then what "$a" reads (RM_XVAR_CURRENT; the
 * scope keeps an entry so that unbinding stays even, and $$CURRENT is
 * matched before the scope is searched). */
static bool
bind_var (rm_xparse_t *p, const rm_expr_t *e, const char *name, int *slot, bson_error_t *err)
{
    if (!strcmp (name, "CURRENT") && p->n_vars < RM_X_MAX_VARS) {
        p->vars[p->n_vars++] = name;
        *slot = RM_XVAR_CURRENT;
        return true;
    }
    *slot = rm_xparse_bind (p, name, err);
    if (*slot < 0) {
        char why[sizeof err->message];
        memcpy (why, err->message, sizeof why);
        return rm_xparse_fail (err, e, "%s", why);
    }
    return true;
}

/* Runs a loop whose "as" may be CURRENT, and gives CURRENT back after. */
static bool
keeping_current (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err,
                 bool (*loop) (rm_expr_ctx_t *, const rm_expr_t *, bson_value_t *, bson_error_t *))
{
    bson_value_t saved;
    bool ok;
    if (e->ivar[0] != RM_XVAR_CURRENT)
        return loop (cx, e, out, err);
    saved = *rm_xcurrent (cx);
    ok = loop (cx, e, out, err);
    rm_xvar_set (cx, RM_XVAR_CURRENT, &saved);
    return ok;
}

/* The parts of {$map: {input, as, in}}, {$filter: {input, as, cond,
 * limit}} and {$reduce: {input, initialValue, in}}: keys[i] (a '*' first
 * marks a required one) lands in its[i]; "as" is read as a name. */
static bool
read_parts (const bson_iter_t *arg, const rm_expr_t *e, const char *const *keys, size_t n, rm_xbox_t *its,
            bool *has, const char **as, bson_error_t *err)
{
    bson_iter_t sub;
    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document of named arguments, not %s",
                               rm_value_type_name (bson_iter_type (arg)));
    memset (has, 0, n * sizeof *has);
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        size_t i;
        if (as && !strcmp (k, "as")) {
            if (!BSON_ITER_HOLDS_UTF8 (&sub))
                return rm_xparse_fail (err, e, "'as' must be a variable name (a string), not %s",
                                       rm_value_type_name (bson_iter_type (&sub)));
            *as = bson_iter_utf8 (&sub, NULL);
            continue;
        }
        for (i = 0; i < n; i++)
            if (!strcmp (k, keys[i] + (keys[i][0] == '*')))
                break;
        if (i == n)
            return rm_xparse_fail (err, e, "unknown argument '%s'", k);
        memcpy (its[i].b, &sub, sizeof sub);
        has[i] = true;
    }
    for (size_t i = 0; i < n; i++)
        if (keys[i][0] == '*' && !has[i])
            return rm_xparse_fail (err, e, "missing the required argument '%s'", keys[i] + 1);
    return true;
}

static bool
parse_part (rm_xparse_t *p, const rm_xbox_t *box, rm_expr_t **out, bson_error_t *err)
{
    bson_iter_t it;
    rm_xunbox (box, &it);
    return rm_xparse_expr (p, &it, out, err);
}

/* $map: args input, in; ivar[0] the slot of "as" ($$this by default).
 * input is read in the outer scope. */
static bool
parse_map (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    static const char *const keys[] = {"*input", "*in"};
    rm_xbox_t its[2];
    bool has[2], ok;
    const char *as = "this";

    if (!read_parts (arg, e, keys, 2, its, has, &as, err))
        return false;
    rm_xnode_args (e, 2);
    if (!parse_part (p, &its[0], &e->args[0], err) || !bind_var (p, e, as, &e->ivar[0], err))
        return false;
    ok = parse_part (p, &its[1], &e->args[1], err);
    rm_xparse_unbind (p, 1);
    return ok;
}

/* The input of $map, $filter, $reduce: false when the operator answers
 * null (null or missing input) or fails (not an array). */
static bool
loop_input (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *in, bson_value_t *out, bool *done,
            bson_error_t *err)
{
    *done = false;
    if (!rm_xeval (cx, e->args[0], in, err))
        return false;
    if (rm_xval_nullish (in)) {
        rm_xset_null (out);
        *done = true;
        return true;
    }
    if (in->value_type != BSON_TYPE_ARRAY)
        return rm_xwrong (cx, err, e, "its input", "an array", in);
    return true;
}

static bool
map_loop (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t in;
    bson_iter_t it;
    rm_xbuild_t b;
    bool done;

    if (!loop_input (cx, e, &in, out, &done, err))
        return false;
    if (done)
        return true;
    rm_xbuild_begin (cx, &b, true);
    /* Each element's scratch goes once it is pushed (copied). */
    rm_xmark_t m;
    rm_xmark (cx, &m);
    rm_xval_iter (&in, &it);
    while (bson_iter_next (&it)) {
        bson_value_t v;
        rm_xvar_set (cx, e->ivar[0], bson_iter_value (&it));
        if (!rm_xeval (cx, e->args[1], &v, err)) {
            rm_xbuild_abort (&b);
            return false;
        }
        /* A missing result is pushed as null, as the server does. */
        rm_xbuild_push (&b, &v);
        rm_xrewind (cx, &m);
        if (too_big (cx, err, e, &b))
            return false;
        if (!rm_xmem_check (cx, e, err)) {
            rm_xbuild_abort (&b);
            return false;
        }
    }
    rm_xbuild_end (&b, out);
    return true;
}

/* $filter: args input, cond, limit (NULL: none); ivar[0] the slot of
 * "as". input and limit are read in the outer scope. */
static bool
parse_filter (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    static const char *const keys[] = {"*input", "*cond", "limit"};
    rm_xbox_t its[3];
    bool has[3], ok;
    const char *as = "this";

    if (!read_parts (arg, e, keys, 3, its, has, &as, err))
        return false;
    rm_xnode_args (e, 3);
    if (!parse_part (p, &its[0], &e->args[0], err) ||
        (has[2] && !parse_part (p, &its[2], &e->args[2], err)) ||
        !bind_var (p, e, as, &e->ivar[0], err))
        return false;
    ok = parse_part (p, &its[1], &e->args[1], err);
    rm_xparse_unbind (p, 1);
    return ok;
}

static bool
filter_loop (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t in, lim;
    bson_iter_t it;
    rm_xbuild_t b;
    int32_t left = -1;
    bool done;

    if (!loop_input (cx, e, &in, out, &done, err))
        return false;
    if (done)
        return true;
    /* An empty input is the answer: the limit is not even evaluated. */
    if (rm_xval_count (&in) == 0) {
        *out = in;
        return true;
    }
    if (e->args[2]) {
        if (!rm_xeval (cx, e->args[2], &lim, err))
            return false;
        if (!rm_xval_nullish (&lim)) {
            if (!int32_of (&lim, &left))
                return rm_xfail (err, e, "its limit must be an integer that fits 32 bits, not %s",
                                 rm_xshow (cx, &lim));
            if (left <= 0)
                return rm_xfail (err, e, "its limit must be greater than 0, not %s", rm_xshow (cx, &lim));
        }
    }
    rm_xbuild_begin (cx, &b, true);
    /* The condition's scratch goes element by element. */
    rm_xmark_t m;
    rm_xmark (cx, &m);
    rm_xval_iter (&in, &it);
    while (left != 0 && bson_iter_next (&it)) {
        bson_value_t c;
        rm_xvar_set (cx, e->ivar[0], bson_iter_value (&it));
        if (!rm_xeval (cx, e->args[1], &c, err)) {
            rm_xbuild_abort (&b);
            return false;
        }
        bool take = rm_xval_truthy (&c);
        rm_xrewind (cx, &m);
        if (!take)
            continue;
        rm_xbuild_push (&b, bson_iter_value (&it));
        if (left > 0)
            left--;
        if (!rm_xmem_check (cx, e, err)) {
            rm_xbuild_abort (&b);
            return false;
        }
    }
    rm_xbuild_end (&b, out);
    return true;
}

static bool
eval_map (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    return keeping_current (cx, e, out, err, map_loop);
}

static bool
eval_filter (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    return keeping_current (cx, e, out, err, filter_loop);
}

/* $reduce: args input, initialValue, in; ivar[0] the slot of $$this,
 * ivar[1] of $$value (both seen by "in" only). */
static bool
parse_reduce (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    static const char *const keys[] = {"*input", "*initialValue", "*in"};
    rm_xbox_t its[3];
    bool has[3], ok;

    if (!read_parts (arg, e, keys, 3, its, has, NULL, err))
        return false;
    rm_xnode_args (e, 3);
    if (!parse_part (p, &its[0], &e->args[0], err) || !parse_part (p, &its[1], &e->args[1], err))
        return false;
    if (!bind_var (p, e, "this", &e->ivar[0], err))
        return false;
    if (!bind_var (p, e, "value", &e->ivar[1], err)) {
        rm_xparse_unbind (p, 1);
        return false;
    }
    ok = parse_part (p, &its[2], &e->args[2], err);
    rm_xparse_unbind (p, 2);
    return ok;
}

/* Each iteration's scratch is given back once its result is kept: the
 * accumulator goes, when it lies in that scratch, into one of two
 * buffers, the one the previous accumulator is not in (the next "in" may
 * read it). So a reduce that appends to a string 16,000 times holds two
 * accumulators at a time, not 16,000. */
static bool
eval_reduce (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t in, acc;
    bson_iter_t it;
    rm_xmark_t m;
    rm_buf_t *keep[2];
    int at = -1; /* the buffer acc may lie in */
    bool done, ok = true;

    if (!loop_input (cx, e, &in, out, &done, err))
        return false;
    if (done)
        return true;
    if (!rm_xeval (cx, e->args[1], &acc, err))
        return false;
    keep[0] = rm_xbuf_take (cx);
    keep[1] = rm_xbuf_take (cx);
    rm_xmark (cx, &m);
    rm_xval_iter (&in, &it);
    while (ok && bson_iter_next (&it)) {
        bson_value_t v;
        rm_xvar_set (cx, e->ivar[0], bson_iter_value (&it));
        rm_xvar_set (cx, e->ivar[1], &acc);
        if (!rm_xeval (cx, e->args[2], &v, err)) {
            ok = false;
            break;
        }
        if ((v.value_type == BSON_TYPE_ARRAY || v.value_type == BSON_TYPE_DOCUMENT) &&
            v.value.v_doc.data_len > BUILD_LIMIT) {
            ok = rm_xfail (err, e, "the value it accumulates passes %zu MiB: refused rather than "
                           "exhausting memory",
                           BUILD_LIMIT >> 20);
            break;
        }
        if (rm_xval_since (cx, &m, &v)) {
            int to = at == 0 ? 1 : 0;
            rm_xval_keep (cx, keep[to], &v, &acc);
            if (at >= 0)
                rm_xval_unkeep (cx, keep[at]);
            at = to;
        } else {
            acc = v; /* the input's, the last accumulator's or a constant's */
        }
        rm_xrewind (cx, &m);
        ok = rm_xmem_check (cx, e, err);
    }
    if (ok && at >= 0 && rm_xval_in_buf (keep[at], &acc))
        rm_xval_from_buf (cx, keep[at], &acc);
    for (int k = 0; k < 2; k++) {
        rm_xval_unkeep (cx, keep[k]);
        rm_xbuf_give (cx, keep[k]);
    }
    *out = acc;
    return ok;
}

/* ---- Ordering: $sortArray, $maxN, $minN ---- */

/* sortBy compiled: dir for the whole value (n == 0), else n field paths,
 * each with its direction. */
typedef struct {
    int dir;
    size_t n;
    char **paths;
    int *dirs;
} sortby_t;

static void
sortby_free (void *data)
{
    sortby_t *s = data;
    for (size_t i = 0; i < s->n; i++)
        bson_free (s->paths[i]);
    bson_free (s->paths);
    bson_free (s->dirs);
    bson_free (s);
}

/* A sort direction: a number equal to 1 or -1. */
static bool
sort_dir (const bson_iter_t *it, int *dir)
{
    double d;
    if (!BSON_ITER_HOLDS_NUMBER (it) && !BSON_ITER_HOLDS_DECIMAL128 (it))
        return false;
    if (!rm_xval_to_double (bson_iter_value ((bson_iter_t *) it), &d) || (d != 1 && d != -1))
        return false;
    *dir = d > 0 ? 1 : -1;
    return true;
}

static bool
path_ok (const char *s)
{
    if (!*s || *s == '.' || s[strlen (s) - 1] == '.' || strstr (s, ".."))
        return false;
    return true;
}

static bool
parse_sortby (const bson_iter_t *it, rm_expr_t *e, sortby_t *s, bson_error_t *err)
{
    bson_iter_t sub;
    size_t n = 0;

    if (!BSON_ITER_HOLDS_DOCUMENT (it)) {
        if (!sort_dir (it, &s->dir))
            return rm_xparse_fail (err, e, "'sortBy' must be 1, -1 or a document of fields to 1 or -1");
        return true;
    }
    bson_iter_recurse (it, &sub);
    while (bson_iter_next (&sub))
        n++;
    if (n == 0)
        return rm_xparse_fail (err, e, "'sortBy' needs at least one field");
    s->paths = bson_malloc0 (n * sizeof *s->paths);
    s->dirs = bson_malloc0 (n * sizeof *s->dirs);
    bson_iter_recurse (it, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        if (!path_ok (k))
            return rm_xparse_fail (err, e, "'sortBy' holds \"%s\", not a valid field path", k);
        if (!sort_dir (&sub, &s->dirs[s->n]))
            return rm_xparse_fail (err, e, "'sortBy' field \"%s\" must be 1 or -1", k);
        s->paths[s->n++] = bson_strdup (k);
    }
    return true;
}

/* $sortArray: {input, sortBy}: args[0] is input; data the sortBy. */
static bool
parse_sort_array (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    bson_iter_t sub, input, by;
    bool has_input = false, has_by = false;
    sortby_t *s;

    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document {input, sortBy}, not %s",
                               rm_value_type_name (bson_iter_type (arg)));
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        if (!strcmp (k, "input")) {
            input = sub;
            has_input = true;
        } else if (!strcmp (k, "sortBy")) {
            by = sub;
            has_by = true;
        } else {
            return rm_xparse_fail (err, e, "unknown argument '%s'", k);
        }
    }
    if (!has_input)
        return rm_xparse_fail (err, e, "missing the required argument 'input'");
    if (!has_by)
        return rm_xparse_fail (err, e, "missing the required argument 'sortBy'");
    s = bson_malloc0 (sizeof *s);
    e->data = s;
    e->data_free = sortby_free;
    if (!parse_sortby (&by, e, s, err))
        return false;
    rm_xnode_args (e, 1);
    return rm_xparse_expr (p, &input, &e->args[0], err);
}

/* What the comparators see: the elements, a direction, and for sorting
 * by fields each element's keys (has[i] false: missing, which sorts as
 * null). */
typedef struct {
    rm_xbox_t *el;
    int dir;
    const sortby_t *by;
    rm_xbox_t *keys;
    bool *has;
} order_t;

static int
cmp_whole (void *ctx, uint32_t a, uint32_t b)
{
    order_t *o = ctx;
    return o->dir * rm_xbox_compare (&o->el[a], &o->el[b]);
}

static int
cmp_keys (void *ctx, uint32_t a, uint32_t b)
{
    order_t *o = ctx;
    size_t k = o->by->n;
    for (size_t j = 0; j < k; j++) {
        bson_iter_t ia, ib;
        if (o->has[a * k + j])
            rm_xunbox (&o->keys[a * k + j], &ia);
        if (o->has[b * k + j])
            rm_xunbox (&o->keys[b * k + j], &ib);
        int c = rm_value_compare (o->has[a * k + j] ? &ia : NULL, o->has[b * k + j] ? &ib : NULL);
        if (c)
            return o->by->dirs[j] * c;
    }
    return 0;
}

/* Each element's sort keys: the value at each path of a document element
 * (through documents and, by index, arrays, as the server's dotted lookup
 * goes); a non-document element has null keys. */
static void
sort_keys (rm_expr_ctx_t *cx, order_t *o, uint32_t n)
{
    size_t k = o->by->n, nk = (size_t) n * k;
    o->keys = rm_xalloc (cx, (nk ? nk : 1) * sizeof *o->keys);
    o->has = rm_xalloc (cx, nk ? nk : 1);
    for (uint32_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++) {
            bson_iter_t el, doc, found;
            rm_xunbox (&o->el[i], &el);
            o->has[i * k + j] = BSON_ITER_HOLDS_DOCUMENT (&el) && bson_iter_recurse (&el, &doc) &&
                                bson_iter_find_descendant (&doc, o->by->paths[j], &found);
            if (o->has[i * k + j])
                memcpy (o->keys[i * k + j].b, &found, sizeof found);
        }
}

static void
push_order (rm_xbuild_t *b, rm_xbox_t *el, const uint32_t *idx, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        bson_value_t x = rm_xbox_value (&el[idx[i]]);
        rm_xbuild_push (b, &x);
    }
}

/* $sortArray: a stable sort, whole values by MongoDB's order or documents
 * by fields. */
static bool
eval_sort_array (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    const sortby_t *s = e->data;
    bson_value_t in;
    order_t o;
    uint32_t n, *idx;
    rm_xbuild_t b;

    if (!rm_xarg (cx, e, e->args[0], BSON_TYPE_ARRAY, "its input", "an array", &in, out, err))
        return false;
    if (rm_xval_nullish (&in))
        return true;
    o.el = rm_xelems (cx, &in, &n);
    o.dir = s->dir;
    o.by = s;
    idx = rm_xiota (cx, n);
    if (s->n) {
        sort_keys (cx, &o, n);
        rm_xsort (idx, rm_xalloc (cx, (n ? n : 1) * sizeof *idx), n, cmp_keys, &o);
    } else {
        rm_xsort (idx, rm_xalloc (cx, (n ? n : 1) * sizeof *idx), n, cmp_whole, &o);
    }
    rm_xbuild_begin (cx, &b, true);
    push_order (&b, o.el, idx, n);
    rm_xbuild_end (&b, out);
    return true;
}

/* The n of $firstN, $lastN, $maxN, $minN: an integral number (as an
 * int64), at least 1. */
static bool
n_of (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, int64_t *n, bson_error_t *err)
{
    if (!rm_xval_is_number (v) || !rm_xval_to_int64 (v, n))
        return rm_xwrong (cx, err, e, "'n'", "an integer", v);
    if (*n <= 0)
        return rm_xfail (err, e, "'n' must be greater than 0, not %lld", (long long) *n);
    return true;
}

/* {n, input} evaluated, n first (its error first), then input, which
 * must be an array: null and missing are errors here, as the server's
 * accumulator-backed forms have it. */
static bool
n_input (rm_expr_ctx_t *cx, const rm_expr_t *e, int64_t *n, bson_value_t *in, bson_error_t *err)
{
    bson_value_t nv;
    if (!rm_xeval (cx, e->args[0], &nv, err) || !n_of (cx, e, &nv, n, err) ||
        !rm_xeval (cx, e->args[1], in, err))
        return false;
    if (in->value_type != BSON_TYPE_ARRAY)
        return rm_xwrong (cx, err, e, "its input", "an array", in);
    return true;
}

/* $firstN, $lastN: the first or last n elements, nulls included. */
static bool
eval_first_last_n (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t in;
    int64_t n, len;
    if (!n_input (cx, e, &n, &in, err))
        return false;
    len = rm_xval_count (&in);
    if (n > len)
        n = len;
    if (e->op->name[1] == 'f')
        sub_array (cx, &in, 0, n, out);
    else
        sub_array (cx, &in, len - n, len, out);
    return true;
}

/* $maxN, $minN: the n largest (smallest) elements, largest (smallest)
 * first; null and undefined elements are skipped. */
static bool
eval_max_min_n (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t in;
    int64_t n;
    uint32_t len, k = 0, *idx;
    order_t o;
    rm_xbuild_t b;

    if (!n_input (cx, e, &n, &in, err))
        return false;
    o.el = rm_xelems (cx, &in, &len);
    o.dir = e->op->name[2] == 'a' ? -1 : 1;
    idx = rm_xalloc (cx, (len ? len : 1) * sizeof *idx);
    for (uint32_t i = 0; i < len; i++) {
        bson_type_t t = rm_xbox_value (&o.el[i]).value_type;
        if (t != BSON_TYPE_NULL && t != BSON_TYPE_UNDEFINED)
            idx[k++] = i;
    }
    rm_xsort (idx, rm_xalloc (cx, (k ? k : 1) * sizeof *idx), k, cmp_whole, &o);
    rm_xbuild_begin (cx, &b, true);
    push_order (&b, o.el, idx, (int64_t) k < n ? k : (uint32_t) n);
    rm_xbuild_end (&b, out);
    return true;
}

const rm_xop_t rm_xops_array[] = {
    {"$arrayElemAt", eval_elem_at, 2, 2, {NULL}, NULL, NULL},
    {"$first", eval_first_last, 1, 1, {NULL}, NULL, NULL},
    {"$last", eval_first_last, 1, 1, {NULL}, NULL, NULL},
    {"$slice", eval_slice, 2, 3, {NULL}, NULL, NULL},
    {"$size", eval_size, 1, 1, {NULL}, NULL, NULL},
    {"$in", eval_in, 2, 2, {NULL}, NULL, NULL},
    {"$indexOfArray", eval_index_of, 2, 4, {NULL}, NULL, NULL},
    {"$concatArrays", eval_concat, 0, -1, {NULL}, NULL, NULL},
    {"$reverseArray", eval_reverse, 1, 1, {NULL}, NULL, NULL},
    {"$range", eval_range, 2, 3, {NULL}, NULL, NULL},
    {"$zip", eval_zip, 0, 0, {NULL}, parse_zip, NULL},
    {"$map", eval_map, 0, 0, {NULL}, parse_map, NULL},
    {"$filter", eval_filter, 0, 0, {NULL}, parse_filter, NULL},
    {"$reduce", eval_reduce, 0, 0, {NULL}, parse_reduce, NULL},
    {"$sortArray", eval_sort_array, 0, 0, {NULL}, parse_sort_array, NULL},
    {"$firstN", eval_first_last_n, 0, 0, {"*n", "*input"}, NULL, NULL},
    {"$lastN", eval_first_last_n, 0, 0, {"*n", "*input"}, NULL, NULL},
    {"$maxN", eval_max_min_n, 0, 0, {"*n", "*input"}, NULL, NULL},
    {"$minN", eval_max_min_n, 0, 0, {"*n", "*input"}, NULL, NULL},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
