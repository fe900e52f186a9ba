/* The object operators ($objectToArray, $arrayToObject, $mergeObjects,
 * $getField, $setField, $unsetField, $bsonSize, $binarySize) and the set
 * operators ($setUnion, $setIntersection, $setDifference, $setEquals,
 * $setIsSubset, $allElementsTrue, $anyElementTrue), with the server's
 * rules for null, missing and wrong types.
 *
 * Documents are built as the server's MutableDocument builds them: a key
 * set twice keeps its first place and takes its last value.
 *
 * Sets are arrays with duplicates removed by MongoDB's equality
 * (remodel/value.h: 1, 1.0 and NumberLong(1) are one element). Where the
 * server's result comes out of its ordered set ($setUnion,
 * $setIntersection) the elements come out in MongoDB's order, as there;
 * $setDifference keeps the first array's order, as the server does. */
#include <string.h>

#include "remodel/value.h"

#include "expr_elems.h"

/* ---- Documents with a key set twice ---- */

typedef struct {
    const char *key;
    size_t len;
    bson_value_t v;
} kv_t;

static int
cmp_key (void *ctx, uint32_t a, uint32_t b)
{
    const kv_t *kv = ctx;
    size_t n = kv[a].len < kv[b].len ? kv[a].len : kv[b].len;
    int c = memcmp (kv[a].key, kv[b].key, n);
    return c ? c : (kv[a].len > kv[b].len) - (kv[a].len < kv[b].len);
}

/* The document of the pairs kv[0..n), set in turn: a repeated key keeps
 * its first place and takes its last value. */
static void
build_doc (rm_expr_ctx_t *cx, kv_t *kv, uint32_t n, bson_value_t *out)
{
    uint32_t *idx = rm_xiota (cx, n), *use = rm_xalloc (cx, (n ? n : 1) * sizeof *use);
    rm_xbuild_t b;

    rm_xsort (idx, rm_xalloc (cx, (n ? n : 1) * sizeof *idx), n, cmp_key, kv);
    for (uint32_t i = 0; i < n; i++)
        use[i] = UINT32_MAX;
    /* Sorting is stable: a run of one key is in the order it was set. */
    for (uint32_t g = 0; g < n;) {
        uint32_t h = g + 1;
        while (h < n && cmp_key (kv, idx[g], idx[h]) == 0)
            h++;
        use[idx[g]] = idx[h - 1];
        g = h;
    }
    rm_xbuild_begin (cx, &b, false);
    for (uint32_t i = 0; i < n; i++)
        if (use[i] != UINT32_MAX)
            rm_xbuild_field (&b, kv[i].key, kv[i].len, &kv[use[i]].v);
    rm_xbuild_end (&b, out);
}

/* ---- $objectToArray, $arrayToObject ---- */

static bool
eval_object_to_array (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v, k, pair;
    bson_iter_t it;
    rm_xbuild_t b, one;

    if (!rm_xarg (cx, e, e->args[0], BSON_TYPE_DOCUMENT, "its argument", "a document", &v, out, err))
        return false;
    if (rm_xval_nullish (&v))
        return true;
    rm_xbuild_begin (cx, &b, true);
    rm_xval_iter (&v, &it);
    while (bson_iter_next (&it)) {
        const char *key = bson_iter_key (&it);
        rm_xset_string (cx, &k, key, strlen (key));
        rm_xbuild_begin (cx, &one, false);
        rm_xbuild_field (&one, "k", 1, &k);
        rm_xbuild_field (&one, "v", 1, bson_iter_value (&it));
        rm_xbuild_end (&one, &pair);
        rm_xbuild_push (&b, &pair);
    }
    rm_xbuild_end (&b, out);
    return true;
}

/* One element of $arrayToObject's input, [k, v] or {k, v}, as a pair. */
static bool
a2o_pair (rm_expr_ctx_t *cx, const rm_expr_t *e, const rm_xbox_t *el, bool arrays, kv_t *kv,
          bson_error_t *err)
{
    bson_value_t evv = rm_xbox_value (el);
    const bson_value_t *ev = &evv;
    bson_value_t key = {0}, val = {0};
    bson_iter_t it;
    uint32_t n = 0;
    bool has_k = false, has_v = false;

    if (arrays != (ev->value_type == BSON_TYPE_ARRAY))
        return rm_xfail (err, e, "its elements must be all [key, value] arrays or all {k, v} documents: "
                         "the first is %s, then comes the %s %s",
                         arrays ? "an array" : "a document", rm_xval_type_name (ev), rm_xshow (cx, ev));
    rm_xval_iter (ev, &it);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        n++;
        if (arrays && n == 1)
            key = *bson_iter_value (&it);
        else if (arrays && n == 2)
            val = *bson_iter_value (&it);
        else if (!arrays && !strcmp (k, "k") && (has_k = true))
            key = *bson_iter_value (&it);
        else if (!arrays && !strcmp (k, "v") && (has_v = true))
            val = *bson_iter_value (&it);
    }
    if (arrays && n != 2)
        return rm_xfail (err, e, "each [key, value] array must have 2 elements, not %u: %s", n,
                         rm_xshow (cx, ev));
    if (!arrays && n != 2)
        return rm_xfail (err, e, "each {k, v} document must have exactly the fields k and v, not %u "
                         "field%s: %s",
                         n, n == 1 ? "" : "s", rm_xshow (cx, ev));
    if (!arrays && (!has_k || !has_v))
        return rm_xfail (err, e, "each {k, v} document must have the fields k and v: %s", rm_xshow (cx, ev));
    if (key.value_type != BSON_TYPE_UTF8)
        return rm_xwrong (cx, err, e, "a key", "a string", &key);
    if (strlen (key.value.v_utf8.str) != key.value.v_utf8.len)
        return rm_xfail (err, e, "a key may not hold a NUL byte: %s", rm_xshow (cx, &key));
    kv->key = key.value.v_utf8.str;
    kv->len = key.value.v_utf8.len;
    kv->v = val;
    return true;
}

/* $arrayToObject: [[k, v], ...] or [{k, v}, ...] (the first element says
 * which; mixing them is an error). Keys may hold dots or start with '$'. */
static bool
eval_array_to_object (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v, v0;
    rm_xbox_t *el;
    uint32_t n;
    kv_t *kv;
    bool arrays;

    if (!rm_xarg (cx, e, e->args[0], BSON_TYPE_ARRAY, "its argument", "an array", &v, out, err))
        return false;
    if (rm_xval_nullish (&v))
        return true;
    el = rm_xelems (cx, &v, &n);
    if (n > 0) {
        v0 = rm_xbox_value (&el[0]);
        if (v0.value_type != BSON_TYPE_ARRAY && v0.value_type != BSON_TYPE_DOCUMENT)
            return rm_xwrong (cx, err, e, "each element", "a [key, value] array or a {k, v} document", &v0);
    }
    arrays = n > 0 && v0.value_type == BSON_TYPE_ARRAY;
    kv = rm_xalloc (cx, (n ? n : 1) * sizeof *kv);
    for (uint32_t i = 0; i < n; i++)
        if (!a2o_pair (cx, e, &el[i], arrays, &kv[i], err))
            return false;
    build_doc (cx, kv, n, out);
    return true;
}

/* ---- $mergeObjects ---- */

/* $mergeObjects: [doc, ...] merged left to right; null and missing are
 * skipped, anything else not a document is an error. With one argument
 * that is an array, the array's elements are merged (the server's
 * expression shares its accumulator's code). */
static bool
eval_merge (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t *vals = rm_xvals (cx, e->n), one;
    rm_xbox_t *el = NULL;
    uint32_t n = (uint32_t) e->n, total = 0, k = 0;
    kv_t *kv = NULL;

    /* Each argument is evaluated and judged in turn, as the server does. */
    if (e->n == 1) {
        if (!rm_xeval (cx, e->args[0], &vals[0], err))
            return false;
        if (vals[0].value_type == BSON_TYPE_ARRAY)
            el = rm_xelems (cx, &vals[0], &n);
    }
    for (uint32_t i = 0; i < n; i++) {
        const bson_value_t *src = &vals[i];
        if (el) {
            one = rm_xbox_value (&el[i]);
            src = &one;
        } else if (e->n > 1 && !rm_xeval (cx, e->args[i], &vals[i], err)) {
            return false;
        }
        if (rm_xval_nullish (src))
            continue;
        if (src->value_type != BSON_TYPE_DOCUMENT)
            return rm_xwrong (cx, err, e, "each input", "a document", src);
        total += rm_xval_count (src);
    }
    kv = rm_xalloc (cx, (total ? total : 1) * sizeof *kv);
    for (uint32_t i = 0; i < n; i++) {
        const bson_value_t *src = &vals[i];
        bson_iter_t it;
        if (el) {
            one = rm_xbox_value (&el[i]);
            src = &one;
        }
        if (rm_xval_nullish (src))
            continue;
        rm_xval_iter (src, &it);
        while (k < total && bson_iter_next (&it)) {
            kv[k].key = bson_iter_key (&it);
            kv[k].len = strlen (kv[k].key);
            kv[k].v = *bson_iter_value (&it);
            k++;
        }
    }
    build_doc (cx, kv, k, out);
    return true;
}

/* ---- $getField, $setField, $unsetField ---- */

/* The field argument: a constant string (dots and a leading '$' are the
 * point), or, for $getField, an expression that evaluates to one (MongoDB
 * 7.2 and later); a field path or variable is refused as the server
 * refuses it, pointing at $literal. */
static bool
check_field (const rm_expr_t *e, const rm_expr_t *f, bool constant, bson_error_t *err)
{
    if (f->kind == RM_X_PATH || f->kind == RM_X_VAR)
        return rm_xparse_fail (err, e, "'field' is a field path or variable, not allowed here: for a name "
                               "that starts with '$' write {\"$literal\": \"$name\"}");
    if (f->kind == RM_X_CONST && f->konst.value_type != BSON_TYPE_UTF8)
        return rm_xparse_fail (err, e, "'field' must be a string, not %s",
                               rm_value_type_name (f->konst.value_type));
    if (constant && f->kind != RM_X_CONST)
        return rm_xparse_fail (err, e, "'field' must be a constant string, not an expression");
    return true;
}

/* The reads of one node for rm_expr_paths: $$CURRENT as a whole. */
static rm_expr_t *
current_node (void)
{
    rm_expr_t *c = rm_xnode_new (RM_X_VAR);
    c->var = RM_XVAR_CURRENT;
    return c;
}

/* $getField: {field, input} (input: $$CURRENT when absent), or the short
 * form {$getField: "name"}. args are field, input. */
static bool
parse_get_field (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    bson_iter_t sub;
    rm_xnode_args (e, 2);
    if (BSON_ITER_HOLDS_DOCUMENT (arg)) {
        bson_iter_recurse (arg, &sub);
        if (bson_iter_next (&sub) && bson_iter_key (&sub)[0] == '$') {
            /* {$getField: {$literal: "$a"}}: an expression for the field. */
            if (!rm_xparse_expr (p, arg, &e->args[0], err))
                return false;
        } else {
            bson_iter_recurse (arg, &sub);
            while (bson_iter_next (&sub)) {
                const char *k = bson_iter_key (&sub);
                size_t i = !strcmp (k, "field") ? 0 : !strcmp (k, "input") ? 1 : 2;
                if (i == 2)
                    return rm_xparse_fail (err, e, "unknown argument '%s'", k);
                rm_expr_destroy (e->args[i]);
                e->args[i] = NULL;
                if (!rm_xparse_expr (p, &sub, &e->args[i], err))
                    return false;
            }
            if (!e->args[0])
                return rm_xparse_fail (err, e, "missing the required argument 'field'");
            /* only the shorthand reads $$CURRENT: the server refuses the
             * full form without 'input' (expression_get_field.js) */
            if (!e->args[1])
                return rm_xparse_fail (err, e, "missing the required argument 'input'");
        }
    } else if (!rm_xparse_expr (p, arg, &e->args[0], err)) {
        return false;
    }
    if (!e->args[1])
        e->args[1] = current_node ();
    return check_field (e, e->args[0], false, err);
}

static bool
eval_get_field (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t f, in;
    bson_iter_t it;

    if (!rm_xarg_strict (cx, e, e->args[0], BSON_TYPE_UTF8, "'field'", "a string", &f, err))
        return false;
    if (!rm_xeval (cx, e->args[1], &in, err))
        return false;
    rm_xset_missing (out);
    /* Missing input gives missing, null gives null, and any other
     * non-document missing: the server's evaluator, not an error. */
    if (in.value_type == BSON_TYPE_NULL || in.value_type == BSON_TYPE_UNDEFINED)
        rm_xset_null (out);
    if (in.value_type != BSON_TYPE_DOCUMENT)
        return true;
    rm_xval_iter (&in, &it);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (strlen (k) == f.value.v_utf8.len && !memcmp (k, f.value.v_utf8.str, f.value.v_utf8.len)) {
            *out = *bson_iter_value (&it);
            break;
        }
    }
    return true;
}

/* $setField: {field, input, value}, $unsetField: {field, input}: args are
 * field (a constant string), input, value (NULL for $unsetField). */
static bool
parse_set_field (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    static const char *const names[] = {"field", "input", "value"};
    bool unset = e->op->name[1] == 'u';
    size_t n = unset ? 2 : 3;
    bson_iter_t sub;

    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document {field, input%s}, not %s", unset ? "" : ", value",
                               rm_value_type_name (bson_iter_type (arg)));
    rm_xnode_args (e, 3);
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        size_t i;
        for (i = 0; i < n; i++)
            if (!strcmp (k, names[i]))
                break;
        if (i == n)
            return rm_xparse_fail (err, e, "unknown argument '%s'", k);
        rm_expr_destroy (e->args[i]);
        e->args[i] = NULL;
        if (!rm_xparse_expr (p, &sub, &e->args[i], err))
            return false;
    }
    for (size_t i = 0; i < n; i++)
        if (!e->args[i])
            return rm_xparse_fail (err, e, "missing the required argument '%s'", names[i]);
    return check_field (e, e->args[0], true, err);
}

/* The input with field set to value in place (or appended), or taken out
 * when value is missing ($$REMOVE, $unsetField). */
static bool
eval_set_field (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    const bson_value_t *f = &e->args[0]->konst;
    bson_value_t in, v;
    bson_iter_t it;
    rm_xbuild_t b;
    bool done = false;

    if (!rm_xarg (cx, e, e->args[1], BSON_TYPE_DOCUMENT, "'input'", "a document", &in, out, err))
        return false;
    if (rm_xval_nullish (&in))
        return true;
    if (!rm_xeval (cx, e->args[2], &v, err))
        return false;
    rm_xbuild_begin (cx, &b, false);
    rm_xval_iter (&in, &it);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        size_t kl = strlen (k);
        if (!done && kl == f->value.v_utf8.len && !memcmp (k, f->value.v_utf8.str, kl)) {
            rm_xbuild_field (&b, k, kl, &v);
            done = true;
        } else {
            rm_xbuild_field (&b, k, kl, bson_iter_value (&it));
        }
    }
    if (!done)
        rm_xbuild_field (&b, f->value.v_utf8.str, f->value.v_utf8.len, &v);
    rm_xbuild_end (&b, out);
    return true;
}

/* ---- Sizes ---- */

static bool
eval_bson_size (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xarg (cx, e, e->args[0], BSON_TYPE_DOCUMENT, "its argument", "a document", &v, out, err))
        return false;
    if (rm_xval_nullish (&v))
        return true;
    rm_xset_int32 (out, (int32_t) v.value.v_doc.data_len);
    return true;
}

static bool
eval_binary_size (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    if (rm_xval_nullish (&v))
        rm_xset_null (out);
    else if (v.value_type == BSON_TYPE_UTF8)
        rm_xset_int32 (out, (int32_t) v.value.v_utf8.len);
    else if (v.value_type == BSON_TYPE_BINARY)
        rm_xset_int32 (out, (int32_t) v.value.v_binary.data_len);
    else
        return rm_xwrong (cx, err, e, "its argument", "a string or binary data", &v);
    return true;
}

/* ---- Sets ---- */

/* A set: elements in MongoDB's order, no two equal. */
typedef struct {
    rm_xbox_t *el;
    uint32_t n;
} set_t;

static int
cmp_el (void *ctx, uint32_t a, uint32_t b)
{
    rm_xbox_t *el = ctx;
    return rm_xbox_compare (&el[a], &el[b]);
}

/* The set of el[0..n): sorted (stably), the first of equal elements kept. */
static set_t
to_set (rm_expr_ctx_t *cx, rm_xbox_t *el, uint32_t n)
{
    uint32_t *idx = rm_xiota (cx, n), k = 0;
    set_t s;
    rm_xsort (idx, rm_xalloc (cx, (n ? n : 1) * sizeof *idx), n, cmp_el, el);
    s.el = rm_xalloc (cx, (n ? n : 1) * sizeof *s.el);
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || rm_xbox_compare (&s.el[k - 1], &el[idx[i]]) != 0)
            s.el[k++] = el[idx[i]];
    s.n = k;
    return s;
}

static bool
set_has (const set_t *s, const rm_xbox_t *x)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = rm_xbox_compare (&s->el[mid], x);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

static void
push_set (rm_expr_ctx_t *cx, const set_t *s, bson_value_t *out)
{
    rm_xbuild_t b;
    rm_xbuild_begin (cx, &b, true);
    for (uint32_t i = 0; i < s->n; i++) {
        bson_value_t x = rm_xbox_value (&s->el[i]);
        rm_xbuild_push (&b, &x);
    }
    rm_xbuild_end (&b, out);
}

/* How a message names argument i of $setUnion, $setIntersection. */
static const char *
set_what (const rm_expr_t *e, size_t i)
{
    static const char *const nth[] = {"its first argument", "its second argument"};
    return e->n == 2 && i < 2 ? nth[i] : "each argument";
}

/* $setUnion: null as soon as an argument is null or missing. */
static bool
eval_set_union (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t *vals = rm_xvals (cx, e->n);
    uint32_t total = 0, k = 0;
    rm_xbox_t *all;
    set_t s;

    for (size_t i = 0; i < e->n; i++) {
        if (!rm_xarg (cx, e, e->args[i], BSON_TYPE_ARRAY, set_what (e, i), "an array", &vals[i], out, err))
            return false;
        if (rm_xval_nullish (&vals[i]))
            return true;
        total += rm_xval_count (&vals[i]);
    }
    all = rm_xalloc (cx, (total ? total : 1) * sizeof *all);
    for (size_t i = 0; i < e->n; i++) {
        bson_iter_t it;
        rm_xval_iter (&vals[i], &it);
        while (k < total && bson_iter_next (&it))
            memcpy (all[k++].b, &it, sizeof it);
    }
    s = to_set (cx, all, k);
    push_set (cx, &s, out);
    return true;
}

/* $setIntersection: the elements in every argument. As the server does,
 * each step keeps the elements of the smaller of the two sets. */
static bool
eval_set_intersection (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    set_t cur = {NULL, 0};

    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        rm_xbox_t *el;
        uint32_t n, k = 0;
        set_t next, keep, other;
        if (!rm_xarg (cx, e, e->args[i], BSON_TYPE_ARRAY, set_what (e, i), "an array", &v, out, err))
            return false;
        if (rm_xval_nullish (&v))
            return true;
        el = rm_xelems (cx, &v, &n);
        if (i == 0) {
            cur = to_set (cx, el, n);
            continue;
        }
        if (cur.n == 0)
            continue;
        next = to_set (cx, el, n);
        keep = cur.n > next.n ? next : cur;
        other = cur.n > next.n ? cur : next;
        for (uint32_t j = 0; j < keep.n; j++)
            if (set_has (&other, &keep.el[j]))
                keep.el[k++] = keep.el[j];
        keep.n = k;
        cur = keep;
    }
    push_set (cx, &cur, out);
    return true;
}

/* $setDifference: [a, b]: the elements of a not in b, in a's order, each
 * once. */
static bool
eval_set_difference (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    rm_xbox_t *ea, *eb;
    uint32_t na, nb, *idx, *first;
    set_t sb;
    rm_xbuild_t b;

    /* Both are evaluated before either is judged, as the server does. */
    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (rm_xval_nullish (&v[0]) || rm_xval_nullish (&v[1])) {
        rm_xset_null (out);
        return true;
    }
    if (v[0].value_type != BSON_TYPE_ARRAY)
        return rm_xwrong (cx, err, e, "its first argument", "an array", &v[0]);
    if (v[1].value_type != BSON_TYPE_ARRAY)
        return rm_xwrong (cx, err, e, "its second argument", "an array", &v[1]);
    ea = rm_xelems (cx, &v[0], &na);
    eb = rm_xelems (cx, &v[1], &nb);
    sb = to_set (cx, eb, nb);
    /* The first of each run of equal elements of a is the one kept. */
    idx = rm_xiota (cx, na);
    first = rm_xalloc (cx, (na ? na : 1) * sizeof *first);
    rm_xsort (idx, rm_xalloc (cx, (na ? na : 1) * sizeof *idx), na, cmp_el, ea);
    memset (first, 0, (na ? na : 1) * sizeof *first);
    for (uint32_t i = 0; i < na; i++)
        if (i == 0 || rm_xbox_compare (&ea[idx[i - 1]], &ea[idx[i]]) != 0)
            first[idx[i]] = !set_has (&sb, &ea[idx[i]]);
    rm_xbuild_begin (cx, &b, true);
    for (uint32_t i = 0; i < na; i++)
        if (first[i]) {
            bson_value_t x = rm_xbox_value (&ea[i]);
            rm_xbuild_push (&b, &x);
        }
    rm_xbuild_end (&b, out);
    return true;
}

/* $setEquals: [a, b, ...] (at least 2), every one an array (null is an
 * error); stops at the first that differs, as the server does. */
static bool
eval_set_equals (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    set_t first = {NULL, 0};
    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        rm_xbox_t *el;
        uint32_t n;
        set_t s;
        if (!rm_xeval (cx, e->args[i], &v, err))
            return false;
        if (v.value_type != BSON_TYPE_ARRAY) {
            char what[48];
            snprintf (what, sizeof what, "argument %zu", i + 1);
            return rm_xwrong (cx, err, e, what, "an array", &v);
        }
        el = rm_xelems (cx, &v, &n);
        s = to_set (cx, el, n);
        if (i == 0) {
            first = s;
            continue;
        }
        bool same = s.n == first.n;
        for (uint32_t j = 0; same && j < s.n; j++)
            same = rm_xbox_compare (&s.el[j], &first.el[j]) == 0;
        if (!same) {
            rm_xset_bool (out, false);
            return true;
        }
    }
    rm_xset_bool (out, true);
    return true;
}

/* $setIsSubset: [a, b]: whether every element of a is in b; both must be
 * arrays (null is an error). */
static bool
eval_set_is_subset (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t a, bv;
    rm_xbox_t *ea, *eb;
    uint32_t na, nb;
    set_t sb;

    if (!rm_xarg_strict (cx, e, e->args[0], BSON_TYPE_ARRAY, "its first argument", "an array", &a, err))
        return false;
    if (!rm_xarg_strict (cx, e, e->args[1], BSON_TYPE_ARRAY, "its second argument", "an array", &bv, err))
        return false;
    ea = rm_xelems (cx, &a, &na);
    eb = rm_xelems (cx, &bv, &nb);
    sb = to_set (cx, eb, nb);
    for (uint32_t i = 0; i < na; i++)
        if (!set_has (&sb, &ea[i])) {
            rm_xset_bool (out, false);
            return true;
        }
    rm_xset_bool (out, true);
    return true;
}

/* $allElementsTrue, $anyElementTrue: [array]: by truthiness; the argument
 * must be an array (null is an error). */
static bool
eval_all_any (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bool all = e->op->name[2] == 'l';
    bson_value_t v;
    bson_iter_t it;

    if (!rm_xarg_strict (cx, e, e->args[0], BSON_TYPE_ARRAY, "its argument", "an array", &v, err))
        return false;
    rm_xval_iter (&v, &it);
    while (bson_iter_next (&it))
        if (rm_xval_truthy (bson_iter_value (&it)) != all) {
            rm_xset_bool (out, !all);
            return true;
        }
    rm_xset_bool (out, all);
    return true;
}

const rm_xop_t rm_xops_object[] = {
    {"$objectToArray", eval_object_to_array, 1, 1, {NULL}, NULL, NULL},
    {"$arrayToObject", eval_array_to_object, 1, 1, {NULL}, NULL, NULL},
    {"$mergeObjects", eval_merge, 0, -1, {NULL}, NULL, NULL},
    {"$getField", eval_get_field, 0, 0, {NULL}, parse_get_field, NULL},
    {"$setField", eval_set_field, 0, 0, {NULL}, parse_set_field, NULL},
    {"$unsetField", eval_set_field, 0, 0, {NULL}, parse_set_field, NULL},
    {"$bsonSize", eval_bson_size, 1, 1, {NULL}, NULL, NULL},
    {"$binarySize", eval_binary_size, 1, 1, {NULL}, NULL, NULL},
    {"$setUnion", eval_set_union, 0, -1, {NULL}, NULL, NULL},
    {"$setIntersection", eval_set_intersection, 0, -1, {NULL}, NULL, NULL},
    {"$setDifference", eval_set_difference, 2, 2, {NULL}, NULL, NULL},
    {"$setEquals", eval_set_equals, 2, -1, {NULL}, NULL, NULL},
    {"$setIsSubset", eval_set_is_subset, 2, 2, {NULL}, NULL, NULL},
    {"$allElementsTrue", eval_all_any, 1, 1, {NULL}, NULL, NULL},
    {"$anyElementTrue", eval_all_any, 1, 1, {NULL}, NULL, NULL},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
