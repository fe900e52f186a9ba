/* An expression compiled from its BSON: a string starting with "$" is a
 * field path, "$$" a variable; a document whose first key starts with '$'
 * is an operator (exactly one key), any other document an object of
 * expressions; an array an array of expressions; anything else a literal.
 * Each operator's argument is read by its row (expr_impl.h): positional,
 * named, or its own parser. Errors name the operator and say what is
 * wrong, as the server's do. */
#include <string.h>

#include "expr_impl.h"

rm_expr_t *
rm_xnode_new (rm_xkind_t kind)
{
    rm_expr_t *e = bson_malloc0 (sizeof *e);
    e->kind = kind;
    e->ivar[0] = e->ivar[1] = -1;
    return e;
}

void
rm_xnode_args (rm_expr_t *e, size_t n)
{
    e->n = n;
    e->args = bson_malloc0 ((n ? n : 1) * sizeof *e->args);
}

void
rm_expr_destroy (rm_expr_t *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++) {
        rm_expr_destroy (e->args[i]);
        if (e->names)
            bson_free (e->names[i]);
    }
    bson_free (e->args);
    bson_free (e->names);
    if (e->kind == RM_X_CONST)
        bson_value_destroy (&e->konst);
    if (e->has_path)
        rm_path_destroy (&e->path);
    if (e->data && e->data_free)
        e->data_free (e->data);
    bson_free (e);
}

bool
rm_xparse_fail (bson_error_t *err, const rm_expr_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    rm_xerr_v (err, RM_ERR_USAGE, e, fmt, ap);
    va_end (ap);
    return false;
}

/* A variable's name, as the server takes it: a lowercase letter or a
 * non-ASCII byte first, then letters, digits, '_' and non-ASCII bytes. */
static bool
var_name_ok (const char *s, size_t n)
{
    if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (unsigned char) s[0] >= 0x80))
        return false;
    for (size_t i = 1; i < n; i++) {
        unsigned char c = (unsigned char) s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c >= 0x80))
            return false;
    }
    return true;
}

int
rm_xparse_bind (rm_xparse_t *p, const char *name, bson_error_t *err)
{
    if (!var_name_ok (name, strlen (name))) {
        rm_error_set (err, RM_ERR_USAGE,
                      "'%s' is not a valid variable name (it must start with a lowercase letter)", name);
        return -1;
    }
    if (!strcmp (name, "ROOT") || !strcmp (name, "CURRENT") || !strcmp (name, "REMOVE") ||
        !strcmp (name, "NOW")) {
        rm_error_set (err, RM_ERR_USAGE, "the variable %s cannot be rebound", name);
        return -1;
    }
    if (p->n_vars >= RM_X_MAX_VARS) {
        rm_error_set (err, RM_ERR_USAGE, "more than %d variables in scope at once", RM_X_MAX_VARS);
        return -1;
    }
    p->vars[p->n_vars] = name;
    return p->n_vars++;
}

void
rm_xparse_unbind (rm_xparse_t *p, int k)
{
    p->n_vars -= k;
}

static bool
parse_path_rest (rm_expr_t *e, const char *rest, const char *whole, bson_error_t *err)
{
    bson_error_t perr;
    if (!rm_path_parse (&e->path, rest, &perr)) {
        rm_error_set (err, RM_ERR_USAGE, "\"%s\": not a valid field path: %s", whole, perr.message);
        return false;
    }
    e->has_path = true;
    return true;
}

static bool
parse_string (rm_xparse_t *p, const char *s, size_t len, rm_expr_t **out, bson_error_t *err)
{
    rm_expr_t *e;

    if (strlen (s) != len)
        return rm_xparse_fail (err, NULL, "a field path may not hold a NUL byte");
    if (s[1] != '$') {
        if (s[1] == '\0')
            return rm_xparse_fail (err, NULL, "\"$\" is not a valid field path");
        e = rm_xnode_new (RM_X_PATH);
        if (!parse_path_rest (e, s + 1, s, err)) {
            rm_expr_destroy (e);
            return false;
        }
        *out = e;
        return true;
    }
    const char *name = s + 2, *dot = strchr (name, '.');
    size_t n = dot ? (size_t) (dot - name) : strlen (name);
    e = rm_xnode_new (RM_X_VAR);
    if (n == 4 && !memcmp (name, "ROOT", 4))
        e->var = RM_XVAR_ROOT;
    else if (n == 7 && !memcmp (name, "CURRENT", 7))
        e->var = RM_XVAR_CURRENT;
    else if (n == 6 && !memcmp (name, "REMOVE", 6))
        e->var = RM_XVAR_REMOVE;
    else if (n == 3 && !memcmp (name, "NOW", 3))
        e->var = RM_XVAR_NOW;
    else {
        int i;
        for (i = p->n_vars - 1; i >= 0; i--)
            if (strlen (p->vars[i]) == n && !memcmp (p->vars[i], name, n))
                break;
        if (i < 0) {
            rm_expr_destroy (e);
            if (n == 12 && !memcmp (name, "CLUSTER_TIME", 12))
                return rm_xparse_fail (err, NULL, "$$CLUSTER_TIME is not supported: it is the "
                                       "server's clock of a replica set (use $$NOW)");
            if ((n == 10 && !memcmp (name, "USER_ROLES", 10)) ||
                (n == 11 && !memcmp (name, "SEARCH_META", 11)))
                return rm_xparse_fail (err, NULL, "\"%s\" is not supported: it needs the server", s);
            return rm_xparse_fail (err, NULL, "use of undefined variable: %.*s", (int) n, name);
        }
        e->var = i;
    }
    if (dot && !parse_path_rest (e, dot + 1, s, err)) {
        rm_expr_destroy (e);
        return false;
    }
    *out = e;
    return true;
}

static bool
parse_positional (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    const rm_xop_t *op = e->op;
    if (BSON_ITER_HOLDS_ARRAY (arg)) {
        bson_iter_t sub;
        size_t n = 0;
        bson_iter_recurse (arg, &sub);
        while (bson_iter_next (&sub))
            n++;
        rm_xnode_args (e, n);
        bson_iter_recurse (arg, &sub);
        for (size_t i = 0; bson_iter_next (&sub); i++)
            if (!rm_xparse_expr (p, &sub, &e->args[i], err))
                return false;
    } else {
        rm_xnode_args (e, 1);
        if (!rm_xparse_expr (p, arg, &e->args[0], err))
            return false;
    }
    if ((int) e->n < op->min_args || (op->max_args >= 0 && (int) e->n > op->max_args)) {
        if (op->min_args == op->max_args)
            return rm_xparse_fail (err, e, "takes exactly %d argument%s, %zu given", op->min_args,
                                   op->min_args == 1 ? "" : "s", e->n);
        if (op->max_args < 0)
            return rm_xparse_fail (err, e, "takes at least %d argument%s, %zu given", op->min_args,
                                   op->min_args == 1 ? "" : "s", e->n);
        return rm_xparse_fail (err, e, "takes %d to %d arguments, %zu given", op->min_args,
                               op->max_args, e->n);
    }
    return true;
}

static bool
parse_named (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    const rm_xop_t *op = e->op;
    size_t n = 0;
    bson_iter_t sub;

    while (n < sizeof op->named / sizeof op->named[0] && op->named[n])
        n++;
    rm_xnode_args (e, n);
    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document of named arguments, not %s",
                               rm_value_type_name (bson_iter_type (arg)));
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        size_t i;
        for (i = 0; i < n; i++) {
            const char *name = op->named[i] + (op->named[i][0] == '*');
            if (!strcmp (name, k))
                break;
        }
        if (i == n)
            return rm_xparse_fail (err, e, "unknown argument '%s'", k);
        if (e->args[i])
            return rm_xparse_fail (err, e, "argument '%s' given twice", k);
        if (!rm_xparse_expr (p, &sub, &e->args[i], err))
            return false;
    }
    for (size_t i = 0; i < n; i++)
        if (op->named[i][0] == '*' && !e->args[i])
            return rm_xparse_fail (err, e, "missing the required argument '%s'", op->named[i] + 1);
    return true;
}

static bool
parse_operator (rm_xparse_t *p, const char *name, const bson_iter_t *arg, rm_expr_t **out,
                bson_error_t *err)
{
    const rm_xop_t *op = p->find (name);
    const char *why;
    rm_expr_t *e;
    bool ok;

    if (!op) {
        if ((why = p->refused (name)))
            return rm_xparse_fail (err, NULL, "%s is not supported: %s", name, why);
        return rm_xparse_fail (err, NULL, "unknown expression operator %s", name);
    }
    e = rm_xnode_new (RM_X_OP);
    e->op = op;
    if (op->parse)
        ok = op->parse (p, arg, e, err);
    else if (op->named[0])
        ok = parse_named (p, arg, e, err);
    else
        ok = parse_positional (p, arg, e, err);
    if (ok && op->check)
        ok = op->check (p, e, err);
    if (!ok) {
        rm_expr_destroy (e);
        return false;
    }
    *out = e;
    return true;
}

static bool
parse_document (rm_xparse_t *p, const bson_iter_t *it, rm_expr_t **out, bson_error_t *err)
{
    bson_iter_t sub;
    size_t n = 0;
    rm_expr_t *e;

    bson_iter_recurse (it, &sub);
    if (bson_iter_next (&sub) && bson_iter_key (&sub)[0] == '$') {
        const char *name = bson_iter_key (&sub);
        bson_iter_t arg = sub;
        if (bson_iter_next (&sub))
            return rm_xparse_fail (err, NULL,
                                   "an expression document holds one operator: %s is followed by "
                                   "'%s' (use $and, or one document per field)",
                                   name, bson_iter_key (&sub));
        return parse_operator (p, name, &arg, out, err);
    }
    bson_iter_recurse (it, &sub);
    while (bson_iter_next (&sub))
        n++;
    e = rm_xnode_new (RM_X_OBJECT);
    rm_xnode_args (e, n);
    e->names = bson_malloc0 ((n ? n : 1) * sizeof *e->names);
    bson_iter_recurse (it, &sub);
    for (size_t i = 0; bson_iter_next (&sub); i++) {
        const char *k = bson_iter_key (&sub);
        e->names[i] = bson_strdup (k);
        if (k[0] == '$' || strchr (k, '.') || !k[0]) {
            rm_expr_destroy (e);
            return rm_xparse_fail (err, NULL,
                                   "field name \"%s\" in an object expression: a name may not be empty, "
                                   "start with '$' or hold a '.' (use $setField, or {\"$literal\": ...} "
                                   "for a literal document)",
                                   k);
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp (e->names[j], k)) {
                rm_expr_destroy (e);
                return rm_xparse_fail (err, NULL, "field \"%s\" given twice in an object expression", k);
            }
        if (!rm_xparse_expr (p, &sub, &e->args[i], err)) {
            rm_expr_destroy (e);
            return false;
        }
    }
    *out = e;
    return true;
}

bool
rm_xparse_expr (rm_xparse_t *p, const bson_iter_t *it, rm_expr_t **out, bson_error_t *err)
{
    bool ok;

    *out = NULL;
    if (++p->depth > RM_X_MAX_DEPTH) {
        p->depth--;
        return rm_xparse_fail (err, NULL, "an expression nested more than %d levels deep", RM_X_MAX_DEPTH);
    }
    if (BSON_ITER_HOLDS_UTF8 (it) && bson_iter_utf8 (it, NULL)[0] == '$') {
        uint32_t len;
        const char *s = bson_iter_utf8 (it, &len);
        ok = parse_string (p, s, len, out, err);
    } else if (BSON_ITER_HOLDS_DOCUMENT (it)) {
        ok = parse_document (p, it, out, err);
    } else if (BSON_ITER_HOLDS_ARRAY (it)) {
        bson_iter_t sub;
        size_t n = 0;
        rm_expr_t *e = rm_xnode_new (RM_X_ARRAY);
        bson_iter_recurse (it, &sub);
        while (bson_iter_next (&sub))
            n++;
        rm_xnode_args (e, n);
        bson_iter_recurse (it, &sub);
        ok = true;
        for (size_t i = 0; ok && bson_iter_next (&sub); i++)
            ok = rm_xparse_expr (p, &sub, &e->args[i], err);
        if (ok)
            *out = e;
        else
            rm_expr_destroy (e);
    } else {
        rm_expr_t *e = rm_xnode_new (RM_X_CONST);
        bson_value_copy (bson_iter_value ((bson_iter_t *) it), &e->konst);
        *out = e;
        ok = true;
    }
    p->depth--;
    return ok;
}

bool
rm_expr_constant (const rm_expr_t *e, const bson_value_t **value)
{
    if (e->kind != RM_X_CONST)
        return false;
    *value = &e->konst;
    return true;
}

void
rm_expr_paths (const rm_expr_t *e, rm_expr_path_fn fn, void *arg, bool *whole)
{
    if (!e)
        return;
    if (e->kind == RM_X_PATH)
        fn (&e->path, arg);
    if (e->kind == RM_X_VAR && (e->var == RM_XVAR_ROOT || e->var == RM_XVAR_CURRENT)) {
        if (e->has_path)
            fn (&e->path, arg);
        else if (whole)
            *whole = true;
    }
    for (size_t i = 0; i < e->n; i++)
        rm_expr_paths (e->args[i], fn, arg, whole);
}

bool
rm_expr_uses_now (const rm_expr_t *e)
{
    if (!e)
        return false;
    if (e->kind == RM_X_VAR && e->var == RM_XVAR_NOW)
        return true;
    for (size_t i = 0; i < e->n; i++)
        if (rm_expr_uses_now (e->args[i]))
            return true;
    return false;
}
