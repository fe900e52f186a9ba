/* Matching a compiled query against one document, as the server's classic
 * matcher does (src/mongo/db/matcher/path.cpp, expression_leaf.cpp,
 * expression_array.cpp):
 *
 * - A leaf is tried on every value its path gives, and matches when one
 *   of them does. A path walks documents; at an array with more of the
 *   path left it goes into each element that is a document (an element
 *   that is a scalar or an inner array gives nothing), and a numeric
 *   component also picks the element at that position. A path that ends
 *   at an array gives each element, then the array itself (only the array
 *   for $size and $elemMatch). A path that finds nothing gives one missing
 *   value, also inside an array's document element ({"a.b": null} matches
 *   {a: [{}]}), but an array with the path going on gives nothing of its
 *   own ({"a.b": null} does not match {a: []}).
 * - Comparisons bracket by type: values of different canonical types never
 *   compare, except null against missing (8.0: not against undefined) and
 *   MinKey and MaxKey against anything.
 *
 * Nothing here allocates: values are read in place, regexes match in the
 * state's arena (query_regex.c). */
#include <math.h>
#include <string.h>

#include "dec128.h"
#include "query_schema.h"
#include "remodel/value.h"

typedef bool (*leaf_fn) (rm_qstate_t *st, const rm_qnode_t *n, const bson_iter_t *v);

static bool leaf_single (rm_qstate_t *st, const rm_qnode_t *n, const bson_iter_t *v);

/* ---- Paths ------------------------------------------------------------- */

static bool walk_doc (rm_qstate_t *st, const rm_qnode_t *n, const uint8_t *doc, uint32_t len,
                      size_t i);

/* The server's isArrayOffsetMatch: the component is all digits and reads
 * as this element's key ("01" never matches "1"). */
static bool
offset_match (const rm_path_t *p, size_t i, const char *key)
{
    const char *c = p->parts[i];
    if (!*c)
        return false;
    for (const char *s = c; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return !strcmp (c, key);
}

static bool
container_of (const bson_iter_t *it, const uint8_t **data, uint32_t *len)
{
    if (BSON_ITER_HOLDS_DOCUMENT (it))
        bson_iter_document (it, len, data);
    else if (BSON_ITER_HOLDS_ARRAY (it))
        bson_iter_array (it, len, data);
    else
        return false;
    return true;
}

/* The path ends at this value: an array gives its elements and then
 * itself, unless the leaf takes arrays whole. */
static bool
visit_end (rm_qstate_t *st, const rm_qnode_t *n, const bson_iter_t *v)
{
    if (BSON_ITER_HOLDS_ARRAY (v) && !n->leaf_whole) {
        const uint8_t *data;
        uint32_t len;
        bson_iter_t el;
        bson_iter_array (v, &len, &data);
        if (bson_iter_init_from_data (&el, data, len))
            while (bson_iter_next (&el))
                if (leaf_single (st, n, &el) || st->failed)
                    return !st->failed;
    }
    return leaf_single (st, n, v) && !st->failed;
}

/* An array met with components i.. of the path still to go. */
static bool
walk_array (rm_qstate_t *st, const rm_qnode_t *n, const uint8_t *arr, uint32_t arr_len, size_t i)
{
    const rm_path_t *p = n->path;
    bool last = i + 1 == p->n;
    const uint8_t *data;
    uint32_t len;
    bson_iter_t el;

    if (!bson_iter_init_from_data (&el, arr, arr_len))
        return false;
    while (bson_iter_next (&el)) {
        bool doc = BSON_ITER_HOLDS_DOCUMENT (&el);
        if (doc) {
            bson_iter_document (&el, &len, &data);
            if (walk_doc (st, n, data, len, i))
                return true;
        }
        if (st->failed)
            return false;
        if (!offset_match (p, i, bson_iter_key (&el)))
            continue;
        /* The element at that position: itself if the path ends there
         * (an array element is not opened), else the rest of the path
         * inside it. */
        if (last) {
            if (leaf_single (st, n, &el))
                return !st->failed;
        } else if (doc) {
            if (walk_doc (st, n, data, len, i + 1))
                return true;
        } else if (BSON_ITER_HOLDS_ARRAY (&el)) {
            bson_iter_array (&el, &len, &data);
            if (walk_array (st, n, data, len, i + 1))
                return true;
        }
        if (st->failed)
            return false;
    }
    return false;
}

/* Components i.. of the path in the document doc (the server's
 * getFieldDottedOrArray, then the iteration of what it found). */
static bool
walk_doc (rm_qstate_t *st, const rm_qnode_t *n, const uint8_t *doc, uint32_t len, size_t i)
{
    const rm_path_t *p = n->path;
    bson_iter_t v;

    for (;; i++) {
        if (!rm_expr_ctx_field (st->cx, doc, len, p->parts[i], (uint32_t) p->lens[i], &v))
            return leaf_single (st, n, NULL) && !st->failed;
        if (i + 1 == p->n)
            return visit_end (st, n, &v);
        if (BSON_ITER_HOLDS_DOCUMENT (&v)) {
            bson_iter_document (&v, &len, &doc);
        } else if (BSON_ITER_HOLDS_ARRAY (&v)) {
            bson_iter_array (&v, &len, &doc);
            return walk_array (st, n, doc, len, i + 1);
        } else {
            return leaf_single (st, n, NULL) && !st->failed;
        }
    }
}

/* ---- Leaves -------------------------------------------------------------- */

/* Whether a comparison's answer c (<0, 0, >0) meets op. */
static bool
op_holds (rm_qcmp_t op, int c)
{
    switch (op) {
    case QC_EQ: return c == 0;
    case QC_LT: return c < 0;
    case QC_LTE: return c <= 0;
    case QC_GT: return c > 0;
    default: return c >= 0;
    }
}

/* The server's canonical type, with missing apart from null (as its EOO). */
static int
canon (const bson_iter_t *v)
{
    return v ? rm_value_canonical_type (bson_iter_type (v)) : 0;
}

static bool
cmp_single (const rm_qnode_t *n, const bson_iter_t *v)
{
    const bson_iter_t *r = &n->rhs;
    bson_type_t tr = bson_iter_type (r);
    int c;

    if (!v || bson_iter_type (v) != tr) {
        int cv = canon (v), cr = canon (r);
        if (cv != cr) {
            /* null stands for missing; since 8.0 not for undefined */
            if (!v && tr == BSON_TYPE_NULL)
                return n->op == QC_EQ || n->op == QC_LTE || n->op == QC_GTE;
            if (tr == BSON_TYPE_MAXKEY)
                return n->op == QC_LT || n->op == QC_LTE;
            if (tr == BSON_TYPE_MINKEY)
                return n->op == QC_GT || n->op == QC_GTE;
            return false;
        }
    }
    if (n->op != QC_EQ) {
        /* NaN equals NaN and is neither above nor below any number */
        bool nv = rm_iter_is_nan (v), nr = rm_iter_is_nan (r);
        if (nv || nr)
            return (n->op == QC_LTE || n->op == QC_GTE) && nv && nr;
    }
    c = rm_value_compare (v, r);
    return op_holds (n->op, c);
}

static bool
in_single (rm_qstate_t *st, const rm_qnode_t *n, const bson_iter_t *v)
{
    size_t lo = 0, hi = n->nset;

    if (!v)
        return n->has_null;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = rm_value_compare (v, &n->set[mid].it);
        if (c == 0)
            return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (size_t i = 0; i < n->n; i++)
        if (leaf_single (st, n->kids[i], v))
            return true;
    return false;
}

static bool
type_single (const rm_qnode_t *n, const bson_iter_t *v)
{
    bson_type_t t;
    if (!v)
        return n->types & 1u;
    t = bson_iter_type (v);
    if (n->numbers && (t == BSON_TYPE_INT32 || t == BSON_TYPE_INT64 || t == BSON_TYPE_DOUBLE ||
                       t == BSON_TYPE_DECIMAL128))
        return true;
    if (t == BSON_TYPE_MINKEY)
        return n->types & (1u << RM_QT_MINKEY);
    if (t == BSON_TYPE_MAXKEY)
        return n->types & (1u << RM_QT_MAXKEY);
    return (unsigned) t < 20 && (n->types & (1u << t));
}

static bool
regex_single (rm_qstate_t *st, const rm_qnode_t *n, const bson_iter_t *v)
{
    const char *s, *flags;
    uint32_t len;

    if (!v)
        return false;
    switch (bson_iter_type (v)) {
    case BSON_TYPE_UTF8:
        s = bson_iter_utf8 (v, &len);
        return rm_qregex_match (st, &n->re, s, len);
    case BSON_TYPE_SYMBOL:
        s = bson_iter_symbol (v, &len);
        return rm_qregex_match (st, &n->re, s, len);
    case BSON_TYPE_REGEX:
        /* a stored regex is compared as written, never run */
        s = bson_iter_regex (v, &flags);
        return !strcmp (s, n->re.pattern) && !strcmp (flags ? flags : "", n->re.flags);
    default:
        return false;
    }
}

bool
rm_qnum_i64 (const bson_iter_t *v, bool exact, int64_t *out)
{
    if (BSON_ITER_HOLDS_INT32 (v)) {
        *out = bson_iter_int32 (v);
        return true;
    }
    if (BSON_ITER_HOLDS_INT64 (v)) {
        *out = bson_iter_int64 (v);
        return true;
    }
    if (BSON_ITER_HOLDS_DOUBLE (v)) {
        double d = bson_iter_double (v);
        if (!isfinite (d) || (exact && d != trunc (d)))
            return false;
        d = trunc (d);
        if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
            return false;
        *out = (int64_t) d;
        return true;
    }
    if (BSON_ITER_HOLDS_DECIMAL128 (v)) {
        bson_decimal128_t d;
        rm_dec_t x;
        unsigned __int128 c;
        uint64_t mag;
        int32_t e;

        bson_iter_decimal128 (v, &d);
        rm_dec_unpack (&d, &x);
        if (x.kind != RM_DEC_FINITE)
            return false;
        /* the coefficient times 10^exp, its fraction dropped */
        c = ((unsigned __int128) x.hi << 64) | x.lo;
        for (e = x.exp; e < 0 && c; e++) {
            if (exact && c % 10)
                return false;
            c /= 10;
        }
        if (c >> 64)
            return false;
        mag = (uint64_t) c;
        for (; e > 0 && mag; e--) {
            if (mag > UINT64_MAX / 10)
                return false;
            mag *= 10;
        }
        if (x.neg) {
            if (mag > UINT64_C (9223372036854775808))
                return false;
            *out = (int64_t) (0 - mag);
        } else {
            if (mag > INT64_MAX)
                return false;
            *out = (int64_t) mag;
        }
        return true;
    }
    return false;
}

static bool
mod_single (const rm_qnode_t *n, const bson_iter_t *v)
{
    int64_t x;
    if (!v || !rm_qnum_i64 (v, false, &x))
        return false;
    if (n->div == -1) /* INT64_MIN % -1 traps in C; its remainder is 0 */
        return n->rem == 0;
    return x % n->div == n->rem;
}

static bool
bits_number (const rm_qnode_t *n, int64_t x)
{
    uint64_t u = (uint64_t) x, m = n->mask;
    switch (n->op) {
    case QB_ALL_SET: return (u & m) == m;
    case QB_ALL_CLEAR: return (~u & m) == m;
    case QB_ANY_SET: return (u & m) != 0;
    default: return (~u & m) != 0;
    }
}

static bool
bits_binary (const rm_qnode_t *n, const uint8_t *data, uint32_t len)
{
    bool all = n->op == QB_ALL_SET || n->op == QB_ALL_CLEAR;
    bool want_set = n->op == QB_ALL_SET || n->op == QB_ANY_SET;

    for (size_t i = 0; i < n->nbits; i++) {
        uint32_t b = n->bits[i];
        /* past the data, bits are zero */
        bool set = b / 8 < len && (data[b / 8] >> (b % 8)) & 1;
        if (set == want_set) {
            if (!all)
                return true;
        } else if (all) {
            return false;
        }
    }
    return all;
}

static bool
bits_single (const rm_qnode_t *n, const bson_iter_t *v)
{
    int64_t x;
    if (!v)
        return false;
    if (BSON_ITER_HOLDS_BINARY (v)) {
        bson_subtype_t sub;
        uint32_t len;
        const uint8_t *data;
        bson_iter_binary (v, &sub, &len, &data);
        return bits_binary (n, data, len);
    }
    /* a number only if an int64 holds it exactly (no fraction, in range) */
    return rm_qnum_i64 (v, true, &x) && bits_number (n, x);
}

/* The elements of an array, each as the leaves of n see it alone. */
static bool
elem_single (rm_qstate_t *st, const rm_qnode_t *n, const bson_iter_t *v)
{
    const uint8_t *data;
    uint32_t len;
    bson_iter_t el;

    if (!v || !BSON_ITER_HOLDS_ARRAY (v))
        return false;
    bson_iter_array (v, &len, &data);
    if (!bson_iter_init_from_data (&el, data, len))
        return false;
    while (bson_iter_next (&el)) {
        bool all = true;
        if (n->kind == QN_ELEM_OBJ) {
            /* an element that is a document, or an array (its keys are
             * "0", "1", ...), matched as a whole query */
            const uint8_t *d;
            uint32_t l;
            if (!container_of (&el, &d, &l))
                continue;
            all = rm_qmatch_doc (st, n->kids[0], d, l);
        } else {
            for (size_t i = 0; i < n->n && all; i++)
                all = leaf_single (st, n->kids[i], &el);
        }
        if (st->failed)
            return false;
        if (all)
            return true;
    }
    return false;
}

/* One value against a condition with no path of its own (the server's
 * matchesSingleElement): a leaf, or the logic over such leaves that
 * {$elemMatch: {$not: ..., $all: ...}} makes. v NULL is missing. */
static bool
leaf_single (rm_qstate_t *st, const rm_qnode_t *n, const bson_iter_t *v)
{
    switch (n->kind) {
    case QN_CMP: return cmp_single (n, v);
    case QN_IN: return in_single (st, n, v);
    case QN_EXISTS: return v != NULL;
    case QN_TYPE: return type_single (n, v);
    case QN_REGEX: return regex_single (st, n, v);
    case QN_MOD: return mod_single (n, v);
    case QN_SIZE: {
        const uint8_t *data;
        uint32_t len;
        bson_iter_t el;
        int64_t count = 0;
        if (!v || !BSON_ITER_HOLDS_ARRAY (v))
            return false;
        bson_iter_array (v, &len, &data);
        if (bson_iter_init_from_data (&el, data, len))
            while (bson_iter_next (&el))
                count++;
        return count == n->size;
    }
    case QN_BITS: return bits_single (n, v);
    case QN_ELEM_OBJ:
    case QN_ELEM_VAL: return elem_single (st, n, v);
    case QN_NOT: return !leaf_single (st, n->kids[0], v);
    case QN_AND:
        for (size_t i = 0; i < n->n; i++)
            if (!leaf_single (st, n->kids[i], v))
                return false;
        return true;
    case QN_OR:
        for (size_t i = 0; i < n->n; i++)
            if (leaf_single (st, n->kids[i], v))
                return true;
        return false;
    case QN_NOR:
        for (size_t i = 0; i < n->n; i++)
            if (leaf_single (st, n->kids[i], v))
                return false;
        return true;
    default: /* QN_FALSE; QN_EXPR never sits under a path */
        return false;
    }
}

/* ---- Logic ----------------------------------------------------------------- */

/* Truthiness of $expr's result: false, null, undefined, missing and any
 * numeric zero are false; everything else ("", [], {}, NaN) true. */
static bool
truthy (const bson_value_t *v)
{
    switch (v->value_type) {
    case BSON_TYPE_EOD:
    case BSON_TYPE_NULL:
    case BSON_TYPE_UNDEFINED: return false;
    case BSON_TYPE_BOOL: return v->value.v_bool;
    case BSON_TYPE_INT32: return v->value.v_int32 != 0;
    case BSON_TYPE_INT64: return v->value.v_int64 != 0;
    case BSON_TYPE_DOUBLE: return v->value.v_double != 0.0;
    case BSON_TYPE_DECIMAL128: {
        rm_dec_t x;
        rm_dec_unpack (&v->value.v_decimal128, &x);
        return x.kind != RM_DEC_FINITE || x.hi || x.lo;
    }
    default: return true;
    }
}

static bool
expr_match (rm_qstate_t *st, const rm_qnode_t *n)
{
    bson_value_t out;
    if (!st->cx) {
        rm_error_set (st->err, RM_ERR_USAGE, "$expr: no expression context to evaluate it in");
        st->failed = true;
        return false;
    }
    if (!rm_expr_eval (st->cx, n->expr, st->root, st->root_len, &out, st->err)) {
        st->failed = true;
        return false;
    }
    return truthy (&out);
}

/* A comparison of one top-level field of the held document with a
 * number, a string or a bool of the same kind, decided from the value
 * decoded in place (no iterator, no general compare): 1 or 0, or -1 for
 * every other case (an array, a document, a missing field, NaN, mixed
 * kinds), which goes the general way. */
static int
cmp_held (rm_qstate_t *st, const rm_qnode_t *n, const uint8_t *doc, uint32_t len)
{
    const rm_path_t *p = n->path;
    const bson_value_t *r;
    bson_value_t v;
    int c;

    if (p->n != 1 || rm_expr_ctx_held_value (st->cx, doc, len, p->parts[0], p->lens[0], &v) != 1)
        return -1;
    r = &n->rhs_value;
    if (v.value_type == BSON_TYPE_BOOL && r->value_type == BSON_TYPE_BOOL)
        c = (int) v.value.v_bool - (int) r->value.v_bool;
    else if (!rm_value_compare_quick (&v, r, &c) ||
             (v.value_type == BSON_TYPE_DOUBLE && v.value.v_double != v.value.v_double) ||
             (r->value_type == BSON_TYPE_DOUBLE && r->value.v_double != r->value.v_double))
        return -1;
    return op_holds (n->op, c);
}

bool
rm_qmatch_doc (rm_qstate_t *st, const rm_qnode_t *n, const uint8_t *doc, uint32_t len)
{
    bool r;
    switch (n->kind) {
    case QN_AND:
        for (size_t i = 0; i < n->n; i++)
            if (!rm_qmatch_doc (st, n->kids[i], doc, len) || st->failed)
                return false;
        return true;
    case QN_OR:
        for (size_t i = 0; i < n->n; i++) {
            r = rm_qmatch_doc (st, n->kids[i], doc, len);
            if (st->failed)
                return false;
            if (r)
                return true;
        }
        return false;
    case QN_NOR:
        for (size_t i = 0; i < n->n; i++) {
            r = rm_qmatch_doc (st, n->kids[i], doc, len);
            if (st->failed || r)
                return false;
        }
        return true;
    case QN_NOT:
        r = rm_qmatch_doc (st, n->kids[0], doc, len);
        return !st->failed && !r;
    case QN_FALSE: return false;
    case QN_EXPR: return expr_match (st, n);
    case QN_SCHEMA: return rm_qschema_match_doc (st, n->schema, doc, len) && !st->failed;
    default:
        if (!n->path) /* cannot happen: a pathless leaf is only met by leaf_single */
            return false;
        if (n->kind == QN_CMP) {
            int quick = cmp_held (st, n, doc, len);
            if (quick >= 0)
                return quick;
        }
        return walk_doc (st, n, doc, len, 0);
    }
}

/* ---- The face ------------------------------------------------------------ */

static void
state_init (rm_qstate_t *st, const rm_query_t *q, rm_expr_ctx_t *cx, const uint8_t *doc,
            uint32_t len, bson_error_t *err)
{
    st->q = q;
    st->cx = cx;
    st->root = doc;
    st->root_len = len;
    st->err = err;
    st->failed = false;
    st->gcx = NULL;
    st->md = NULL;
    st->used = 0;
}

bool
rm_query_match (const rm_query_t *q, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                bool *matched, bson_error_t *err)
{
    rm_qstate_t st;
    bool r;

    state_init (&st, q, cx, doc, len, err);
    r = rm_qmatch_doc (&st, q->root, doc, len);
    rm_qstate_done (&st);
    *matched = r && !st.failed;
    return !st.failed;
}

/* Whether top-level condition i fails on the empty document: a field's
 * condition that does fails on any document that lacks the field (a
 * missing path gives one missing value, wherever it stops). The same for
 * every document: rm_query_parse asks once. */
bool
rm_qtop_needed (const rm_query_t *q, size_t i)
{
    static const uint8_t empty[5] = {5, 0, 0, 0, 0};
    rm_qstate_t st;
    bson_error_t err;
    bool r;

    state_init (&st, q, NULL, empty, sizeof empty, &err);
    r = rm_qmatch_doc (&st, q->tops[i].node, empty, sizeof empty);
    rm_qstate_done (&st);
    return !r && !st.failed;
}

void
rm_query_needs_fields (const rm_query_t *q, rm_expr_path_fn fn, void *arg)
{
    for (size_t i = 0; i < q->ntops; i++)
        if (q->tops[i].needed)
            fn (q->tops[i].path, arg);
}
