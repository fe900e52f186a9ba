/* Compiling a query document into a tree of conditions, with the server's
 * parser's rules and messages (src/mongo/db/matcher/expression_parser.cpp):
 * a field's value is an operator document when its first key starts with
 * '$' (and it is not a DBRef), a regex, or else a value to equal; $ne,
 * $nin, $not and {$exists: false} negate the positive condition; $all is
 * an AND of equalities (or of $elemMatch); $in keeps its values sorted for
 * a binary search. The operators that need the server ($where, $text, the
 * geospatial ones, $sampleRate) are refused by name, with
 * the reason. Everything a match needs is built here, so that matching
 * allocates nothing. */
#include <stdlib.h>
#include <string.h>

#include "query_schema.h"
#include "remodel/value.h"

/* Nesting deeper than this ($and in $or in $elemMatch ...) is refused, so
 * that hostile input cannot exhaust the stack of the parser or a match. */
#define MAX_DEPTH 100

typedef enum {
    LEVEL_TOP, /* the document's own fields: $expr allowed */
    LEVEL_SUB, /* inside $elemMatch: an element's fields */
} level_t;

typedef struct {
    rm_query_t *q;
    bson_error_t *err;
    int depth;
    rm_path_t **paths; /* every path the tree points to, freed with it */
    size_t npaths, cap_paths;
} pctx_t;

static const struct {
    const char *name, *why;
} needs_server[] = {
    {"$where", "it runs JavaScript on the server"},
    {"$text", "it needs the server's text index"},
    {"$near", "it needs the server's geospatial index"},
    {"$nearSphere", "it needs the server's geospatial index"},
    {"$geoNear", "it needs the server's geospatial index"},
    {"$geoWithin", "it needs the server's geometry"},
    {"$within", "it needs the server's geometry"},
    {"$geoIntersects", "it needs the server's geometry"},
    {"$sampleRate", "it samples at random: a migration must give the same result on every run"},
    {"$rand", "it samples at random: a migration must give the same result on every run"},
    {NULL, NULL},
};

static const char *
server_only (const char *name)
{
    for (size_t i = 0; needs_server[i].name; i++)
        if (!strcmp (needs_server[i].name, name))
            return needs_server[i].why;
    return NULL;
}

static bool
refuse_server_only (pctx_t *p, const char *name)
{
    rm_error_set (p->err, RM_ERR_USAGE, "%s is not supported: it needs the server (%s)", name,
                  server_only (name));
    return false;
}

/* ---- Nodes ---------------------------------------------------------------- */

/* Memory for values holding a bson_iter_t, which libbson aligns to 128
 * bytes (more than malloc promises). */
static void *
alloc_iters (size_t size)
{
    size_t align = _Alignof (bson_iter_t);
    void *p = aligned_alloc (align, (size + align - 1) / align * align);
    if (!p)
        abort ();
    memset (p, 0, size);
    return p;
}

static rm_qnode_t *
node_new (rm_qkind_t kind, rm_path_t *path)
{
    rm_qnode_t *n = alloc_iters (sizeof *n);
    n->kind = kind;
    n->path = path;
    return n;
}

static void
node_add (rm_qnode_t *parent, rm_qnode_t *kid)
{
    parent->kids = bson_realloc (parent->kids, (parent->n + 1) * sizeof *parent->kids);
    parent->kids[parent->n++] = kid;
}

static void
node_destroy (rm_qnode_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++)
        node_destroy (n->kids[i]);
    bson_free (n->kids);
    free (n->set);
    bson_free (n->bits);
    rm_qregex_destroy (&n->re);
    rm_expr_destroy (n->expr);
    rm_qschema_destroy (n->schema);
    free (n);
}

/* The AND of a field's conditions, or its one condition alone. */
static rm_qnode_t *
node_simplify (rm_qnode_t *and_node)
{
    if (and_node->kind == QN_AND && and_node->n == 1) {
        rm_qnode_t *only = and_node->kids[0];
        and_node->n = 0;
        node_destroy (and_node);
        return only;
    }
    return and_node;
}

/* ---- Values ------------------------------------------------------------- */

/* The element as {"key": value} JSON, for messages (cut to 200 bytes). */
static void
show (const bson_iter_t *it, char *out, size_t cap)
{
    bson_t d = BSON_INITIALIZER;
    char *s;
    bson_append_iter (&d, bson_iter_key (it), -1, it);
    s = bson_as_relaxed_extended_json (&d, NULL);
    bson_strncpy (out, s ? s : "?", cap);
    bson_free (s);
    bson_destroy (&d);
}

/* The server's parseIntegerElementToLong: a whole number, the reason why
 * not otherwise. */
static bool
whole_number (const bson_iter_t *it, int64_t *out, const char **why)
{
    if (!rm_iter_is_number (it)) {
        *why = "Expected a number in";
        return false;
    }
    if (BSON_ITER_HOLDS_DOUBLE (it)) {
        double d = bson_iter_double (it);
        if (d != d) {
            *why = "Expected an integer, but found NaN in";
            return false;
        }
        if (d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
            *why = "Cannot represent as a 64-bit integer";
            return false;
        }
        if (!rm_qnum_i64 (it, true, out)) {
            *why = "Expected an integer";
            return false;
        }
        return true;
    }
    if (!rm_qnum_i64 (it, true, out)) {
        *why = "Cannot represent as a 64-bit integer";
        return false;
    }
    return true;
}

/* A non-negative whole number up to max. */
static bool
count_number (const bson_iter_t *it, int64_t max, int64_t *out, const char **why)
{
    if (!whole_number (it, out, why))
        return false;
    if (*out < 0) {
        *why = "Expected a non-negative number in";
        return false;
    }
    if (*out > max) {
        *why = "Cannot represent as a 32-bit integer";
        return false;
    }
    return true;
}

/* The server's trueValue, for $exists. */
static bool
true_value (const bson_iter_t *it)
{
    int64_t i;
    switch (bson_iter_type (it)) {
    case BSON_TYPE_EOD:
    case BSON_TYPE_NULL:
    case BSON_TYPE_UNDEFINED: return false;
    case BSON_TYPE_BOOL: return bson_iter_bool (it);
    case BSON_TYPE_INT32: return bson_iter_int32 (it) != 0;
    case BSON_TYPE_INT64: return bson_iter_int64 (it) != 0;
    case BSON_TYPE_DOUBLE: return bson_iter_double (it) != 0.0;
    case BSON_TYPE_DECIMAL128:
        return !rm_qnum_i64 (it, true, &i) || i != 0;
    default: return true;
    }
}

static bool
first_key (const bson_iter_t *it, bson_iter_t *first)
{
    return (BSON_ITER_HOLDS_DOCUMENT (it) || BSON_ITER_HOLDS_ARRAY (it)) &&
           bson_iter_recurse (it, first) && bson_iter_next (first);
}

/* A DBRef ({$ref, $id}, or any of $ref, $id, $db when incomplete ones
 * count): a value to equal, not operators. */
static bool
is_dbref (const bson_iter_t *obj, bool incomplete)
{
    bson_iter_t f;
    bool ref = false, id = false, db = false;
    if (!bson_iter_recurse (obj, &f))
        return false;
    while (bson_iter_next (&f)) {
        const char *k = bson_iter_key (&f);
        ref |= !strcmp (k, "$ref");
        id |= !strcmp (k, "$id");
        db |= !strcmp (k, "$db");
    }
    return incomplete ? ref || id || db : ref && id;
}

/* The server's isExpressionDocument: a non-empty document whose first key
 * starts with '$' and that is not a DBRef. */
static bool
is_operator_doc (const bson_iter_t *it, bool incomplete_dbref)
{
    bson_iter_t f;
    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !first_key (it, &f))
        return false;
    return bson_iter_key (&f)[0] == '$' && !is_dbref (it, incomplete_dbref);
}

/* The operators that take a path ($gt, $in, ...): parsePathAcceptingKeyword. */
static const char *const path_ops[] = {
    "$all", "$bitsAllClear", "$bitsAllSet", "$bitsAnyClear", "$bitsAnySet", "$elemMatch", "$eq",
    "$exists", "$geoIntersects", "$geoNear", "$geoWithin", "$gt", "$gte", "$in", "$lt", "$lte",
    "$mod", "$ne", "$near", "$nearSphere", "$nin", "$options", "$regex", "$size", "$type",
    "$within", NULL,
};

static bool
is_path_op (const char *k)
{
    for (size_t i = 0; path_ops[i]; i++)
        if (!strcmp (path_ops[i], k))
            return true;
    return false;
}

/* The operators that stand for a whole query ($and, $expr, ...): an
 * $elemMatch starting with one is the document form. */
static const char *const pathless_ops[] = {
    "$and", "$or", "$nor", "$expr", "$where", "$text", "$comment", "$jsonSchema", "$sampleRate",
    "$alwaysTrue", "$alwaysFalse", "$id", "$ref", "$db", NULL,
};

static bool
is_pathless_op (const char *k)
{
    for (size_t i = 0; pathless_ops[i]; i++)
        if (!strcmp (pathless_ops[i], k))
            return true;
    return k[0] == '$' && k[1] == '_';
}

/* ---- Paths ------------------------------------------------------------------ */

static rm_path_t *
path_new (pctx_t *p, const char *name)
{
    rm_path_t *path = bson_malloc0 (sizeof *path);
    if (!rm_path_parse (path, name, p->err)) {
        rm_error_prefix (p->err, "field \"%s\"", name);
        bson_free (path);
        return NULL;
    }
    if (p->npaths == p->cap_paths) {
        p->cap_paths = p->cap_paths ? 2 * p->cap_paths : 8;
        p->paths = bson_realloc (p->paths, p->cap_paths * sizeof *p->paths);
    }
    p->paths[p->npaths++] = path;
    return path;
}

/* ---- Leaves -------------------------------------------------------------- */

static rm_qnode_t *
cmp_new (pctx_t *p, rm_path_t *path, rm_qcmp_t op, const bson_iter_t *v, const char *field)
{
    rm_qnode_t *n;
    if (BSON_ITER_HOLDS_UNDEFINED (v)) {
        rm_error_set (p->err, RM_ERR_USAGE, "cannot compare to undefined");
        return NULL;
    }
    if (op != QC_EQ && BSON_ITER_HOLDS_REGEX (v)) {
        rm_error_set (p->err, RM_ERR_USAGE, "Can't have RegEx as arg to predicate over field '%s'.",
                      field);
        return NULL;
    }
    n = node_new (QN_CMP, path);
    n->op = op;
    n->rhs = *v;
    n->rhs_value = *bson_iter_value (&n->rhs);
    return n;
}

static rm_qnode_t *
regex_new (pctx_t *p, rm_path_t *path, const char *pattern, size_t len, const char *flags)
{
    rm_qnode_t *n = node_new (QN_REGEX, path);
    if (!rm_qregex_compile (&n->re, pattern, len, flags, p->err)) {
        node_destroy (n);
        return NULL;
    }
    return n;
}

static rm_qnode_t *
regex_of (pctx_t *p, rm_path_t *path, const bson_iter_t *v)
{
    const char *flags, *pattern = bson_iter_regex (v, &flags);
    return regex_new (p, path, pattern, strlen (pattern), flags ? flags : "");
}

/* $regex and $options, read from the whole operator document (they may
 * come in either order). */
static rm_qnode_t *
regex_doc (pctx_t *p, rm_path_t *path, const bson_iter_t *ctx)
{
    const char *pattern = "", *options = "";
    uint32_t len = 0;
    bson_iter_t f;

    bson_iter_recurse (ctx, &f);
    while (bson_iter_next (&f)) {
        const char *k = bson_iter_key (&f);
        if (!strcmp (k, "$regex")) {
            if (BSON_ITER_HOLDS_UTF8 (&f)) {
                pattern = bson_iter_utf8 (&f, &len);
            } else if (BSON_ITER_HOLDS_REGEX (&f)) {
                const char *fl;
                pattern = bson_iter_regex (&f, &fl);
                len = (uint32_t) strlen (pattern);
                if (fl && *fl) {
                    if (*options) {
                        rm_error_set (p->err, RM_ERR_USAGE, "options set in both $regex and $options");
                        return NULL;
                    }
                    options = fl;
                }
            } else {
                rm_error_set (p->err, RM_ERR_USAGE, "$regex has to be a string");
                return NULL;
            }
        } else if (!strcmp (k, "$options")) {
            if (!BSON_ITER_HOLDS_UTF8 (&f)) {
                rm_error_set (p->err, RM_ERR_USAGE, "$options has to be a string");
                return NULL;
            }
            if (*options) {
                rm_error_set (p->err, RM_ERR_USAGE, "options set in both $regex and $options");
                return NULL;
            }
            options = bson_iter_utf8 (&f, NULL);
        }
    }
    return regex_new (p, path, pattern, len, options);
}

static int
iter_cmp (const void *a, const void *b)
{
    return rm_value_compare (&((const rm_qiter_t *) a)->it, &((const rm_qiter_t *) b)->it);
}

static rm_qnode_t *
in_new (pctx_t *p, rm_path_t *path, const bson_iter_t *v, const char *op)
{
    rm_qnode_t *n;
    bson_iter_t e;
    size_t cap = 0;

    if (!BSON_ITER_HOLDS_ARRAY (v)) {
        rm_error_set (p->err, RM_ERR_USAGE, "%s needs an array", op);
        return NULL;
    }
    n = node_new (QN_IN, path);
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        if (is_operator_doc (&e, false)) {
            rm_error_set (p->err, RM_ERR_USAGE, "cannot nest $ under %s", op);
            goto fail;
        }
        if (BSON_ITER_HOLDS_REGEX (&e)) {
            rm_qnode_t *re = regex_of (p, NULL, &e);
            if (!re)
                goto fail;
            node_add (n, re);
            continue;
        }
        if (BSON_ITER_HOLDS_UNDEFINED (&e)) {
            rm_error_set (p->err, RM_ERR_USAGE, "InMatchExpression equality cannot be undefined");
            goto fail;
        }
        if (BSON_ITER_HOLDS_NULL (&e))
            n->has_null = true;
        if (n->nset == cap) {
            rm_qiter_t *grown;
            cap = cap ? 2 * cap : 8;
            grown = alloc_iters (cap * sizeof *n->set);
            if (n->nset)
                memcpy (grown, n->set, n->nset * sizeof *n->set);
            free (n->set);
            n->set = grown;
        }
        n->set[n->nset++].it = e;
    }
    if (n->nset) {
        size_t w = 1;
        qsort (n->set, n->nset, sizeof *n->set, iter_cmp);
        for (size_t r = 1; r < n->nset; r++)
            if (rm_value_compare (&n->set[w - 1].it, &n->set[r].it))
                n->set[w++] = n->set[r];
        n->nset = w;
    }
    if (!strcmp (op, "$nin")) {
        rm_qnode_t *not = node_new (QN_NOT, NULL);
        node_add (not, n);
        return not;
    }
    return n;
fail:
    node_destroy (n);
    return NULL;
}

/* One $type: a name, "number", or a type number (-1, 0 to 19, 127). */
static bool
type_add (pctx_t *p, rm_qnode_t *n, const bson_iter_t *t)
{
    static const char *const names[] = {
        NULL, "double", "string", "object", "array", "binData", "undefined", "objectId", "bool",
        "date", "null", "regex", "dbPointer", "javascript", "symbol", "javascriptWithScope", "int",
        "timestamp", "long", "decimal",
    };
    int64_t code;
    const char *why;

    if (BSON_ITER_HOLDS_UTF8 (t)) {
        const char *s = bson_iter_utf8 (t, NULL);
        if (!strcmp (s, "number")) {
            n->numbers = true;
            return true;
        }
        if (!strcmp (s, "minKey")) {
            n->types |= 1u << RM_QT_MINKEY;
            return true;
        }
        if (!strcmp (s, "maxKey")) {
            n->types |= 1u << RM_QT_MAXKEY;
            return true;
        }
        for (unsigned i = 1; i < 20; i++)
            if (!strcmp (s, names[i])) {
                n->types |= 1u << i;
                return true;
            }
        rm_error_set (p->err, RM_ERR_USAGE, "Unknown type name alias: %s", s);
        return false;
    }
    if (!rm_iter_is_number (t)) {
        rm_error_set (p->err, RM_ERR_USAGE, "type must be represented as a number or a string");
        return false;
    }
    if (!whole_number (t, &code, &why) || (code != -1 && code != 127 && (code < 0 || code > 19))) {
        char buf[256];
        show (t, buf, sizeof buf);
        rm_error_set (p->err, RM_ERR_USAGE, "Invalid numerical type code: %s", buf);
        return false;
    }
    n->types |= 1u << (code == -1 ? RM_QT_MINKEY : code == 127 ? RM_QT_MAXKEY : (unsigned) code);
    return true;
}

static rm_qnode_t *
type_new (pctx_t *p, rm_path_t *path, const bson_iter_t *v, const char *field)
{
    rm_qnode_t *n = node_new (QN_TYPE, path);
    if (BSON_ITER_HOLDS_ARRAY (v)) {
        bson_iter_t e;
        bson_iter_recurse (v, &e);
        while (bson_iter_next (&e))
            if (!type_add (p, n, &e))
                goto fail;
    } else if (!type_add (p, n, v)) {
        goto fail;
    }
    if (!n->types && !n->numbers) {
        rm_error_set (p->err, RM_ERR_USAGE, "%s must match at least one type", field);
        goto fail;
    }
    return n;
fail:
    node_destroy (n);
    return NULL;
}

static rm_qnode_t *
mod_new (pctx_t *p, rm_path_t *path, const bson_iter_t *v)
{
    bson_iter_t e, d, r;
    rm_qnode_t *n;
    int64_t div, rem;

    if (!BSON_ITER_HOLDS_ARRAY (v)) {
        rm_error_set (p->err, RM_ERR_USAGE, "malformed mod, needs to be an array");
        return NULL;
    }
    bson_iter_recurse (v, &e);
    if (!bson_iter_next (&e)) {
        rm_error_set (p->err, RM_ERR_USAGE, "malformed mod, not enough elements");
        return NULL;
    }
    d = e;
    if (!rm_iter_is_number (&d)) {
        rm_error_set (p->err, RM_ERR_USAGE, "malformed mod, divisor not a number");
        return NULL;
    }
    if (!bson_iter_next (&e)) {
        rm_error_set (p->err, RM_ERR_USAGE, "malformed mod, not enough elements");
        return NULL;
    }
    r = e;
    if (!rm_iter_is_number (&r)) {
        rm_error_set (p->err, RM_ERR_USAGE, "malformed mod, remainder not a number");
        return NULL;
    }
    if (bson_iter_next (&e)) {
        rm_error_set (p->err, RM_ERR_USAGE, "malformed mod, too many elements");
        return NULL;
    }
    /* fractions are truncated; NaN, infinities and values past int64 refused */
    if (!rm_qnum_i64 (&d, false, &div)) {
        rm_error_set (p->err, RM_ERR_USAGE,
                      "malformed mod, divisor value is invalid: NaN, infinite or out of range");
        return NULL;
    }
    if (!rm_qnum_i64 (&r, false, &rem)) {
        rm_error_set (p->err, RM_ERR_USAGE,
                      "malformed mod, remainder value is invalid: NaN, infinite or out of range");
        return NULL;
    }
    if (div == 0) {
        rm_error_set (p->err, RM_ERR_USAGE, "divisor cannot be 0");
        return NULL;
    }
    n = node_new (QN_MOD, path);
    n->div = div;
    n->rem = rem;
    return n;
}

static void
bits_add (rm_qnode_t *n, uint32_t pos)
{
    n->bits = bson_realloc (n->bits, (n->nbits + 1) * sizeof *n->bits);
    n->bits[n->nbits++] = pos;
    /* numbers are sign-extended: a position past 63 is the sign bit */
    n->mask |= UINT64_C (1) << (pos > 63 ? 63 : pos);
}

static rm_qnode_t *
bits_new (pctx_t *p, rm_path_t *path, const bson_iter_t *v, const char *op)
{
    static const char *const names[] = {"$bitsAllSet", "$bitsAllClear", "$bitsAnySet",
                                        "$bitsAnyClear"};
    rm_qnode_t *n = node_new (QN_BITS, path);
    char buf[256];
    const char *why;
    int64_t x;

    for (int i = 0; i < 4; i++)
        if (!strcmp (op, names[i]))
            n->op = i;
    if (BSON_ITER_HOLDS_ARRAY (v)) {
        bson_iter_t e;
        bson_iter_recurse (v, &e);
        while (bson_iter_next (&e)) {
            if (!count_number (&e, INT32_MAX, &x, &why)) {
                show (&e, buf, sizeof buf);
                rm_error_set (p->err, RM_ERR_USAGE, "Failed to parse bit position. %s: %s", why, buf);
                goto fail;
            }
            bits_add (n, (uint32_t) x);
        }
    } else if (rm_iter_is_number (v)) {
        if (!count_number (v, INT64_MAX, &x, &why)) {
            show (v, buf, sizeof buf);
            rm_error_set (p->err, RM_ERR_USAGE, "%s: %s", why, buf);
            goto fail;
        }
        for (uint32_t b = 0; b < 63; b++)
            if ((uint64_t) x >> b & 1)
                bits_add (n, b);
    } else if (BSON_ITER_HOLDS_BINARY (v)) {
        bson_subtype_t sub;
        uint32_t len;
        const uint8_t *data;
        bson_iter_binary (v, &sub, &len, &data);
        for (uint32_t i = 0; i < len; i++)
            for (uint32_t b = 0; b < 8; b++)
                if (data[i] >> b & 1)
                    bits_add (n, 8 * i + b);
    } else {
        show (v, buf, sizeof buf);
        rm_error_set (p->err, RM_ERR_USAGE, "%s takes an Array, a number, or a BinData but received: %s",
                      op, buf);
        goto fail;
    }
    return n;
fail:
    node_destroy (n);
    return NULL;
}

static rm_qnode_t *
size_new (pctx_t *p, rm_path_t *path, const bson_iter_t *v)
{
    rm_qnode_t *n;
    const char *why;
    int64_t x;

    if (!count_number (v, INT32_MAX, &x, &why)) {
        char buf[256];
        show (v, buf, sizeof buf);
        rm_error_set (p->err, RM_ERR_USAGE, "Failed to parse $size. %s: %s", why, buf);
        return NULL;
    }
    n = node_new (QN_SIZE, path);
    n->size = x;
    n->leaf_whole = true;
    return n;
}

/* ---- Structure ------------------------------------------------------------ */

static rm_qnode_t *parse_doc (pctx_t *p, const bson_iter_t *obj, level_t level, bool top);
static bool parse_ops (pctx_t *p, rm_path_t *path, const char *field, const bson_iter_t *obj,
                       rm_qnode_t *into, level_t level);

static rm_qnode_t *
elem_match_new (pctx_t *p, rm_path_t *path, const bson_iter_t *v, level_t level)
{
    bson_iter_t f;
    rm_qnode_t *n, *sub;

    if (!BSON_ITER_HOLDS_DOCUMENT (v)) {
        rm_error_set (p->err, RM_ERR_USAGE, "$elemMatch needs an Object");
        return NULL;
    }
    if (is_operator_doc (v, true) && first_key (v, &f) && !is_pathless_op (bson_iter_key (&f))) {
        /* {$elemMatch: {$gt: 1, $lt: 5}}: the conditions on each element */
        n = node_new (QN_ELEM_VAL, path);
        n->leaf_whole = true;
        if (!parse_ops (p, NULL, "", v, n, LEVEL_SUB)) {
            node_destroy (n);
            return NULL;
        }
        return n;
    }
    /* {$elemMatch: {a: 1, b: {$gt: 2}}}: a query over each element */
    sub = parse_doc (p, v, LEVEL_SUB, false);
    if (!sub)
        return NULL;
    n = node_new (QN_ELEM_OBJ, path);
    n->leaf_whole = true;
    node_add (n, sub);
    (void) level;
    return n;
}

static rm_qnode_t *
all_new (pctx_t *p, rm_path_t *path, const bson_iter_t *v, level_t level)
{
    bson_iter_t e, f;
    rm_qnode_t *and_node, *kid;
    bool elem = false;

    if (!BSON_ITER_HOLDS_ARRAY (v)) {
        rm_error_set (p->err, RM_ERR_USAGE, "$all needs an array");
        return NULL;
    }
    bson_iter_recurse (v, &e);
    if (bson_iter_next (&e) && BSON_ITER_HOLDS_DOCUMENT (&e) && first_key (&e, &f) &&
        !strcmp (bson_iter_key (&f), "$elemMatch"))
        elem = true;
    and_node = node_new (QN_AND, NULL);
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        if (elem) {
            /* $all: [{$elemMatch: ...}, ...]: every one an $elemMatch */
            if (!BSON_ITER_HOLDS_DOCUMENT (&e) || !first_key (&e, &f) ||
                strcmp (bson_iter_key (&f), "$elemMatch")) {
                rm_error_set (p->err, RM_ERR_USAGE, "$all/$elemMatch has to be consistent");
                goto fail;
            }
            kid = elem_match_new (p, path, &f, level);
        } else if (BSON_ITER_HOLDS_REGEX (&e)) {
            kid = regex_of (p, path, &e);
        } else if (BSON_ITER_HOLDS_DOCUMENT (&e) && first_key (&e, &f) &&
                   is_path_op (bson_iter_key (&f))) {
            rm_error_set (p->err, RM_ERR_USAGE, "no $ expressions in $all");
            goto fail;
        } else {
            kid = cmp_new (p, path, QC_EQ, &e, path ? path->text : "");
        }
        if (!kid)
            goto fail;
        node_add (and_node, kid);
    }
    if (!and_node->n) {
        /* $all of nothing matches nothing */
        and_node->kind = QN_FALSE;
        return and_node;
    }
    return and_node;
fail:
    node_destroy (and_node);
    return NULL;
}

static rm_qnode_t *
not_new (pctx_t *p, rm_path_t *path, const char *field, const bson_iter_t *v, level_t level)
{
    rm_qnode_t *not, *kid;
    bson_iter_t f;

    if (BSON_ITER_HOLDS_REGEX (v)) {
        kid = regex_of (p, path, v);
    } else if (BSON_ITER_HOLDS_DOCUMENT (v)) {
        if (!first_key (v, &f)) {
            rm_error_set (p->err, RM_ERR_USAGE, "$not cannot be empty");
            return NULL;
        }
        kid = node_new (QN_AND, NULL);
        if (!parse_ops (p, path, field, v, kid, level)) {
            node_destroy (kid);
            return NULL;
        }
        kid = node_simplify (kid);
    } else {
        rm_error_set (p->err, RM_ERR_USAGE, "$not needs a regex or a document");
        return NULL;
    }
    if (!kid)
        return NULL;
    not = node_new (QN_NOT, NULL);
    node_add (not, kid);
    return not;
}

/* One operator of a field's operator document ({$gt: 1} of {a: {$gt: 1}});
 * *skip for $options (read with its $regex). */
static rm_qnode_t *
parse_op (pctx_t *p, rm_path_t *path, const char *field, const bson_iter_t *ctx,
          const bson_iter_t *e, level_t level, bool *skip)
{
    const char *k = bson_iter_key (e);
    static const struct {
        const char *name;
        rm_qcmp_t op;
    } cmps[] = {{"$eq", QC_EQ}, {"$lt", QC_LT}, {"$lte", QC_LTE}, {"$gt", QC_GT}, {"$gte", QC_GTE}};

    *skip = false;
    if (!strcmp (k, "$not"))
        return not_new (p, path, field, e, level);
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
        if (!strcmp (k, cmps[i].name))
            return cmp_new (p, path, cmps[i].op, e, field);
    if (!strcmp (k, "$ne")) {
        rm_qnode_t *eq, *not;
        if (BSON_ITER_HOLDS_REGEX (e)) {
            rm_error_set (p->err, RM_ERR_USAGE, "Can't have regex as arg to $ne.");
            return NULL;
        }
        eq = cmp_new (p, path, QC_EQ, e, field);
        if (!eq)
            return NULL;
        not = node_new (QN_NOT, NULL);
        node_add (not, eq);
        return not;
    }
    if (!strcmp (k, "$in") || !strcmp (k, "$nin"))
        return in_new (p, path, e, k);
    if (!strcmp (k, "$size"))
        return size_new (p, path, e);
    if (!strcmp (k, "$exists")) {
        rm_qnode_t *ex = node_new (QN_EXISTS, path), *not;
        if (true_value (e))
            return ex;
        not = node_new (QN_NOT, NULL);
        node_add (not, ex);
        return not;
    }
    if (!strcmp (k, "$type"))
        return type_new (p, path, e, field);
    if (!strcmp (k, "$mod"))
        return mod_new (p, path, e);
    if (!strcmp (k, "$options")) {
        bson_iter_t f;
        bson_iter_recurse (ctx, &f);
        while (bson_iter_next (&f))
            if (!strcmp (bson_iter_key (&f), "$regex")) {
                *skip = true;
                return NULL;
            }
        rm_error_set (p->err, RM_ERR_USAGE, "$options needs a $regex");
        return NULL;
    }
    if (!strcmp (k, "$regex"))
        return regex_doc (p, path, ctx);
    if (!strcmp (k, "$elemMatch"))
        return elem_match_new (p, path, e, level);
    if (!strcmp (k, "$all"))
        return all_new (p, path, e, level);
    if (!strncmp (k, "$bits", 5) && is_path_op (k))
        return bits_new (p, path, e, k);
    if (server_only (k)) {
        refuse_server_only (p, k);
        return NULL;
    }
    rm_error_set (p->err, RM_ERR_USAGE, "unknown operator: %s", k);
    return NULL;
}

/* A field's operator document, each operator a condition added to into. */
static bool
parse_ops (pctx_t *p, rm_path_t *path, const char *field, const bson_iter_t *obj,
           rm_qnode_t *into, level_t level)
{
    bson_iter_t e;

    if (++p->depth > MAX_DEPTH) {
        rm_error_set (p->err, RM_ERR_USAGE, "the query is nested more than %d levels deep", MAX_DEPTH);
        return false;
    }
    bson_iter_recurse (obj, &e);
    while (bson_iter_next (&e)) {
        bool skip;
        rm_qnode_t *n = parse_op (p, path, field, obj, &e, level, &skip);
        if (skip)
            continue;
        if (!n)
            return false;
        node_add (into, n);
    }
    p->depth--;
    return true;
}

/* A field of a query document: {a: {$op: ...}}, {a: /re/} or {a: value}. */
static rm_qnode_t *
parse_field (pctx_t *p, const bson_iter_t *e, level_t level, rm_path_t **path_out)
{
    const char *name = bson_iter_key (e);
    rm_path_t *path = path_new (p, name);
    rm_qnode_t *n;

    *path_out = path;
    if (!path)
        return NULL;
    if (is_operator_doc (e, false)) {
        n = node_new (QN_AND, NULL);
        if (!parse_ops (p, path, name, e, n, level)) {
            node_destroy (n);
            return NULL;
        }
        return node_simplify (n);
    }
    if (BSON_ITER_HOLDS_REGEX (e))
        return regex_of (p, path, e);
    return cmp_new (p, path, QC_EQ, e, name);
}

static rm_qnode_t *
parse_tree (pctx_t *p, const bson_iter_t *e, rm_qkind_t kind, level_t level)
{
    const char *k = bson_iter_key (e);
    bson_iter_t el;
    rm_qnode_t *n;

    if (!BSON_ITER_HOLDS_ARRAY (e)) {
        rm_error_set (p->err, RM_ERR_USAGE, "%s must be an array", k);
        return NULL;
    }
    bson_iter_recurse (e, &el);
    if (!bson_iter_next (&el)) {
        rm_error_set (p->err, RM_ERR_USAGE, "$and/$or/$nor must be a nonempty array");
        return NULL;
    }
    n = node_new (kind, NULL);
    do {
        rm_qnode_t *kid;
        if (!BSON_ITER_HOLDS_DOCUMENT (&el)) {
            rm_error_set (p->err, RM_ERR_USAGE, "$or/$and/$nor entries need to be full objects");
            node_destroy (n);
            return NULL;
        }
        kid = parse_doc (p, &el, level, false);
        if (!kid) {
            node_destroy (n);
            return NULL;
        }
        node_add (n, kid);
    } while (bson_iter_next (&el));
    return n;
}

/* A top-level operator ($and, $expr, $comment ...); *skip for $comment. */
static rm_qnode_t *
parse_top_op (pctx_t *p, const bson_iter_t *e, level_t level, bool *skip)
{
    const char *k = bson_iter_key (e);

    *skip = false;
    if (!strcmp (k, "$and"))
        return parse_tree (p, e, QN_AND, level);
    if (!strcmp (k, "$or"))
        return parse_tree (p, e, QN_OR, level);
    if (!strcmp (k, "$nor"))
        return parse_tree (p, e, QN_NOR, level);
    if (!strcmp (k, "$comment")) {
        *skip = true;
        return NULL;
    }
    if (!strcmp (k, "$expr")) {
        rm_qnode_t *n;
        rm_expr_t *x;
        if (level != LEVEL_TOP) {
            rm_error_set (p->err, RM_ERR_USAGE, "$expr can only be applied to the top-level document");
            return NULL;
        }
        x = rm_expr_parse (e, p->err);
        if (!x) {
            rm_error_prefix (p->err, "$expr");
            return NULL;
        }
        n = node_new (QN_EXPR, NULL);
        n->expr = x;
        return n;
    }
    if (!strcmp (k, "$jsonSchema")) {
        rm_qnode_t *n;
        rm_qschema_t *s;
        if (level != LEVEL_TOP) {
            rm_error_set (p->err, RM_ERR_USAGE,
                          "$jsonSchema can only be applied to the top-level document");
            return NULL;
        }
        s = rm_qschema_parse (e, p->err);
        if (!s)
            return NULL;
        n = node_new (QN_SCHEMA, NULL);
        n->schema = s;
        return n;
    }
    if (!strcmp (k, "$alwaysTrue") || !strcmp (k, "$alwaysFalse")) {
        int64_t one;
        const char *why;
        if (!whole_number (e, &one, &why) || one != 1) {
            rm_error_set (p->err, RM_ERR_USAGE, "%s must be an integer value of 1", k);
            return NULL;
        }
        return node_new (k[7] == 'T' ? QN_AND : QN_FALSE, NULL);
    }
    if (server_only (k)) {
        refuse_server_only (p, k);
        return NULL;
    }
    if (!strcmp (k, "$id") || !strcmp (k, "$ref") || !strcmp (k, "$db")) {
        rm_error_set (p->err, RM_ERR_UNSUPPORTED,
                      "%s: a query on a DBRef's own field is not supported", k);
        return NULL;
    }
    rm_error_set (p->err, RM_ERR_USAGE, "unknown top level operator: %s%s", k,
                  !strcmp (k, "$not")
                      ? ". If you are trying to negate an entire expression, use $nor."
                      : ". If you have a field name that starts with a '$' symbol, consider "
                        "using $getField or $setField.");
    return NULL;
}

/* A query document: the AND of its fields' and operators' conditions. */
static rm_qnode_t *
parse_doc (pctx_t *p, const bson_iter_t *obj, level_t level, bool top)
{
    rm_qnode_t *root;
    bson_iter_t e;

    if (++p->depth > MAX_DEPTH) {
        rm_error_set (p->err, RM_ERR_USAGE, "the query is nested more than %d levels deep", MAX_DEPTH);
        return NULL;
    }
    root = node_new (QN_AND, NULL);
    bson_iter_recurse (obj, &e);
    while (bson_iter_next (&e)) {
        rm_qnode_t *n;
        const char *k = bson_iter_key (&e);
        if (k[0] == '$') {
            bool skip;
            n = parse_top_op (p, &e, level, &skip);
            if (skip)
                continue;
        } else {
            rm_path_t *path;
            n = parse_field (p, &e, level, &path);
            if (n && top) {
                rm_query_t *q = p->q;
                q->tops = bson_realloc (q->tops, (q->ntops + 1) * sizeof *q->tops);
                q->tops[q->ntops].path = path;
                q->tops[q->ntops++].node = n;
            }
        }
        if (!n) {
            node_destroy (root);
            return NULL;
        }
        node_add (root, n);
    }
    p->depth--;
    return top ? root : node_simplify (root);
}

/* ---- The face ------------------------------------------------------------------ */

rm_query_t *
rm_query_parse (const bson_iter_t *it, bson_error_t *err)
{
    rm_query_t *q;
    pctx_t p = {0};
    const uint8_t *data;
    uint32_t len;
    bson_iter_t top;
    bson_t inner;

    if (!BSON_ITER_HOLDS_DOCUMENT (it)) {
        rm_error_set (err, RM_ERR_USAGE, "a query must be a document, not %s",
                      rm_value_type_name (bson_iter_type (it)));
        return NULL;
    }
    q = bson_malloc0 (sizeof *q);
    p.q = q;
    p.err = err;
    q->mctx = rm_qregex_limits ();
    /* The query's own copy, as the one field of a holder, so that the
     * parser reads it as a document value like any other. */
    q->src = bson_new ();
    bson_iter_document (it, &len, &data);
    if (!q->mctx || !bson_init_static (&inner, data, len) ||
        !bson_append_document (q->src, "", 0, &inner) || !bson_iter_init (&top, q->src) ||
        !bson_iter_next (&top)) {
        rm_error_set (err, RM_ERR_NOMEM, "out of memory compiling a query");
        goto fail;
    }
    q->root = parse_doc (&p, &top, LEVEL_TOP, true);
    if (!q->root)
        goto fail;
    q->paths = p.paths;
    q->npaths = p.npaths;
    for (size_t i = 0; i < q->ntops; i++)
        q->tops[i].needed = rm_qtop_needed (q, i);
    return q;
fail:
    for (size_t i = 0; i < p.npaths; i++) {
        rm_path_destroy (p.paths[i]);
        bson_free (p.paths[i]);
    }
    bson_free (p.paths);
    q->npaths = 0;
    rm_query_destroy (q);
    return NULL;
}

void
rm_query_destroy (rm_query_t *q)
{
    if (!q)
        return;
    node_destroy (q->root);
    for (size_t i = 0; i < q->npaths; i++) {
        rm_path_destroy (q->paths[i]);
        bson_free (q->paths[i]);
    }
    bson_free (q->paths);
    bson_free (q->tops);
    if (q->src)
        bson_destroy (q->src);
    pcre2_match_context_free (q->mctx);
    bson_free (q);
}

static void
paths_of (const rm_qnode_t *n, rm_expr_path_fn fn, void *arg, bool *whole)
{
    if (n->kind == QN_EXPR) {
        rm_expr_paths (n->expr, fn, arg, whole);
        return;
    }
    if (n->kind == QN_SCHEMA) {
        if (whole) /* a schema may read any field ("additionalProperties") */
            *whole = true;
        return;
    }
    if (n->path)
        fn (n->path, arg);
    /* an $elemMatch's conditions read inside the array its path gives */
    if (n->kind == QN_ELEM_OBJ || n->kind == QN_ELEM_VAL)
        return;
    for (size_t i = 0; i < n->n; i++)
        paths_of (n->kids[i], fn, arg, whole);
}

void
rm_query_paths (const rm_query_t *q, rm_expr_path_fn fn, void *arg, bool *whole)
{
    if (whole)
        *whole = false;
    paths_of (q->root, fn, arg, whole);
}
