/* The core operators: literals, variables ($let), conditionals ($cond,
 * $ifNull, $switch), logic ($and, $or, $not) and comparisons ($eq ...
 * $cmp). Conditionals evaluate only the branch they take, and $and/$or
 * stop at the first deciding value, as the server does (a branch not
 * taken never raises its error). */
#include <string.h>

#include "expr_impl.h"

/* {$literal: v} and its old name $const: v as it is, never evaluated. */
static bool
parse_literal (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    e->kind = RM_X_CONST;
    e->op = NULL;
    bson_value_copy (bson_iter_value ((bson_iter_t *) arg), &e->konst);
    return true;
}

/* {$let: {vars: {name: expr, ...}, in: expr}}: args are the vars' values,
 * then in; ivar[0] the first slot (the vars take consecutive slots). */
static bool
parse_let (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    bson_iter_t sub, vars, in;
    bool has_vars = false, has_in = false;
    size_t n = 0;
    int bound = 0;
    bool ok = true;

    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document {vars: {...}, in: ...}");
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        if (!strcmp (bson_iter_key (&sub), "vars") && BSON_ITER_HOLDS_DOCUMENT (&sub)) {
            vars = sub;
            has_vars = true;
        } else if (!strcmp (bson_iter_key (&sub), "in")) {
            in = sub;
            has_in = true;
        } else {
            return rm_xparse_fail (err, e, "unknown argument '%s' (it takes vars, a document, and in)",
                                   bson_iter_key (&sub));
        }
    }
    if (!has_vars || !has_in)
        return rm_xparse_fail (err, e, "needs both 'vars' (a document) and 'in'");
    bson_iter_recurse (&vars, &sub);
    while (bson_iter_next (&sub))
        n++;
    rm_xnode_args (e, n + 1);
    /* The values are read in the outer scope: a variable is not visible in
     * its siblings' definitions. */
    bson_iter_recurse (&vars, &sub);
    for (size_t i = 0; ok && bson_iter_next (&sub); i++)
        ok = rm_xparse_expr (p, &sub, &e->args[i], err);
    bson_iter_recurse (&vars, &sub);
    while (ok && bson_iter_next (&sub)) {
        int slot = rm_xparse_bind (p, bson_iter_key (&sub), err);
        if (slot < 0) {
            rm_error_prefix (err, "$let");
            ok = false;
            break;
        }
        if (bound == 0)
            e->ivar[0] = slot;
        bound++;
    }
    if (ok)
        ok = rm_xparse_expr (p, &in, &e->args[n], err);
    rm_xparse_unbind (p, bound);
    return ok;
}

static bool
eval_let (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    size_t n = e->n - 1;
    bson_value_t *vals = rm_xvals (cx, n);
    if (!rm_xeval_args_n (cx, e, vals, n, err))
        return false;
    for (size_t i = 0; i < n; i++)
        rm_xvar_set (cx, e->ivar[0] + (int) i, &vals[i]);
    return rm_xeval (cx, e->args[n], out, err);
}

/* $cond: [if, then, else] or {if, then, else}. */
static bool
parse_cond (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    static const char *names[] = {"if", "then", "else"};
    bson_iter_t sub;
    if (BSON_ITER_HOLDS_ARRAY (arg)) {
        size_t n = 0;
        bson_iter_recurse (arg, &sub);
        while (bson_iter_next (&sub))
            n++;
        if (n != 3)
            return rm_xparse_fail (err, e, "takes exactly 3 arguments, %zu given", n);
        rm_xnode_args (e, 3);
        bson_iter_recurse (arg, &sub);
        for (size_t i = 0; bson_iter_next (&sub); i++)
            if (!rm_xparse_expr (p, &sub, &e->args[i], err))
                return false;
        return true;
    }
    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects [if, then, else] or {if, then, else}");
    rm_xnode_args (e, 3);
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        size_t i;
        for (i = 0; i < 3; i++)
            if (!strcmp (bson_iter_key (&sub), names[i]))
                break;
        if (i == 3)
            return rm_xparse_fail (err, e, "unknown argument '%s'", bson_iter_key (&sub));
        if (!rm_xparse_expr (p, &sub, &e->args[i], err))
            return false;
    }
    for (size_t i = 0; i < 3; i++)
        if (!e->args[i])
            return rm_xparse_fail (err, e, "missing '%s'", names[i]);
    return true;
}

static bool
eval_cond (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t c;
    if (!rm_xeval (cx, e->args[0], &c, err))
        return false;
    return rm_xeval (cx, e->args[rm_xval_truthy (&c) ? 1 : 2], out, err);
}

/* $ifNull: [a, b, ..., replacement]: the first that is not null, undefined
 * or missing, else the last (as it is, even missing). */
static bool
eval_ifnull (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    for (size_t i = 0; i + 1 < e->n; i++) {
        if (!rm_xeval (cx, e->args[i], out, err))
            return false;
        if (!rm_xval_nullish (out))
            return true;
    }
    return rm_xeval (cx, e->args[e->n - 1], out, err);
}

/* $switch: {branches: [{case, then}, ...], default}: args are case, then,
 * case, then ..., then default (NULL: none). */
static bool
parse_switch (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    bson_iter_t sub, br, one;
    bool has_branches = false;
    size_t n = 0, i = 0;
    const bson_iter_t *dflt = NULL;
    bson_iter_t dflt_it;

    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document {branches: [...], default: ...}");
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        if (!strcmp (k, "branches")) {
            if (!BSON_ITER_HOLDS_ARRAY (&sub))
                return rm_xparse_fail (err, e, "'branches' must be an array");
            br = sub;
            has_branches = true;
        } else if (!strcmp (k, "default")) {
            dflt_it = sub;
            dflt = &dflt_it;
        } else {
            return rm_xparse_fail (err, e, "unknown argument '%s'", k);
        }
    }
    if (!has_branches)
        return rm_xparse_fail (err, e, "missing 'branches'");
    bson_iter_recurse (&br, &sub);
    while (bson_iter_next (&sub))
        n++;
    if (n == 0)
        return rm_xparse_fail (err, e, "'branches' needs at least one branch");
    rm_xnode_args (e, 2 * n + 1);
    bson_iter_recurse (&br, &sub);
    while (bson_iter_next (&sub)) {
        bool has_case = false, has_then = false;
        if (!BSON_ITER_HOLDS_DOCUMENT (&sub))
            return rm_xparse_fail (err, e, "each branch must be a document {case, then}");
        bson_iter_recurse (&sub, &one);
        while (bson_iter_next (&one)) {
            const char *k = bson_iter_key (&one);
            if (!strcmp (k, "case")) {
                has_case = true;
                if (!rm_xparse_expr (p, &one, &e->args[2 * i], err))
                    return false;
            } else if (!strcmp (k, "then")) {
                has_then = true;
                if (!rm_xparse_expr (p, &one, &e->args[2 * i + 1], err))
                    return false;
            } else {
                return rm_xparse_fail (err, e, "unknown argument '%s' in a branch", k);
            }
        }
        if (!has_case || !has_then)
            return rm_xparse_fail (err, e, "branch %zu needs both 'case' and 'then'", i);
        i++;
    }
    if (dflt && !rm_xparse_expr (p, dflt, &e->args[2 * n], err))
        return false;
    return true;
}

static bool
eval_switch (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    size_t n = (e->n - 1) / 2;
    for (size_t i = 0; i < n; i++) {
        bson_value_t c;
        if (!rm_xeval (cx, e->args[2 * i], &c, err))
            return false;
        if (rm_xval_truthy (&c))
            return rm_xeval (cx, e->args[2 * i + 1], out, err);
    }
    if (!e->args[2 * n])
        return rm_xfail (err, e, "no branch matched and no default was given");
    return rm_xeval (cx, e->args[2 * n], out, err);
}

static bool
eval_and_or (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bool is_and = e->op->name[1] == 'a';
    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        if (!rm_xeval (cx, e->args[i], &v, err))
            return false;
        if (rm_xval_truthy (&v) != is_and) {
            rm_xset_bool (out, !is_and);
            return true;
        }
    }
    rm_xset_bool (out, is_and);
    return true;
}

static bool
eval_not (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    rm_xset_bool (out, !rm_xval_truthy (&v));
    return true;
}

/* $eq ... $cmp: by MongoDB's order across types, where missing is not
 * null ({$eq: ["$nope", null]} is false: missing sorts below null here,
 * as the server's Value comparison has it). */
static bool
eval_compare (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    int c;
    const char *n = e->op->name;

    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (rm_xval_missing (&v[0]) || rm_xval_missing (&v[1]))
        c = rm_xval_missing (&v[0]) && rm_xval_missing (&v[1]) ? 0 : rm_xval_missing (&v[0]) ? -1 : 1;
    else
        c = rm_xval_compare (cx, &v[0], &v[1]);
    /* By the name's letters ($cmp $eq $ne $gt $gte $lt $lte), not strcmp
     * down the list: this runs for every document. */
    if (n[1] == 'c')
        rm_xset_int32 (out, c < 0 ? -1 : c > 0 ? 1 : 0);
    else if (n[1] == 'e')
        rm_xset_bool (out, c == 0);
    else if (n[1] == 'n')
        rm_xset_bool (out, c != 0);
    else if (n[1] == 'g')
        rm_xset_bool (out, n[3] == 'e' ? c >= 0 : c > 0);
    else
        rm_xset_bool (out, n[3] == 'e' ? c <= 0 : c < 0);
    return true;
}

const rm_xop_t rm_xops_core[] = {
    {"$literal", NULL, 1, 1, {NULL}, parse_literal, NULL},
    {"$const", NULL, 1, 1, {NULL}, parse_literal, NULL},
    {"$let", eval_let, 0, 0, {NULL}, parse_let, NULL},
    {"$cond", eval_cond, 3, 3, {NULL}, parse_cond, NULL},
    {"$ifNull", eval_ifnull, 2, -1, {NULL}, NULL, NULL},
    {"$switch", eval_switch, 0, 0, {NULL}, parse_switch, NULL},
    {"$and", eval_and_or, 0, -1, {NULL}, NULL, NULL},
    {"$or", eval_and_or, 0, -1, {NULL}, NULL, NULL},
    {"$not", eval_not, 1, 1, {NULL}, NULL, NULL},
    {"$eq", eval_compare, 2, 2, {NULL}, NULL, NULL},
    {"$ne", eval_compare, 2, 2, {NULL}, NULL, NULL},
    {"$gt", eval_compare, 2, 2, {NULL}, NULL, NULL},
    {"$gte", eval_compare, 2, 2, {NULL}, NULL, NULL},
    {"$lt", eval_compare, 2, 2, {NULL}, NULL, NULL},
    {"$lte", eval_compare, 2, 2, {NULL}, NULL, NULL},
    {"$cmp", eval_compare, 2, 2, {NULL}, NULL, NULL},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
