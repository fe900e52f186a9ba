/* $group accumulators as the MongoDB server computes them (its
 * accumulator_*.cpp, and its manual's $group page). Choices
 * where the manual leaves room follow the server:
 *
 * $sum, $avg: non-numeric values (strings, arrays, null, missing...) are
 *   ignored. Integers and doubles are summed in a double-double (two
 *   doubles, about 106 bits: the server's DoubleDoubleSummation), so sums
 *   of int32 and int64 are exact and sums of doubles compensated; decimals
 *   are summed in decimal128 apart, and the two totals added at the end.
 *   The result type is the widest type seen (int32 < int64 < double <
 *   decimal128), widened further only by the final value: an int32 total
 *   that does not fit is int64, an int64 total that does not fit is
 *   double. So [2147483647, 1, -1] sums to int32 2147483647, as on the
 *   server. $avg is a double, or a decimal128 if any input was one.
 * $sum of an int32, int64 or double literal ({"$sum": 1}): the server's
 *   fast path adds plainly, int32 until it overflows, then int64, then
 *   double (a double literal is added without compensation). $count is
 *   {"$sum": 1}.
 * $min, $max: rm_value_compare order; null, undefined and missing are
 *   ignored; of equal values the first is kept (1 before 1.0).
 * $first, $last: the value for the first/last document fed (callers feed
 *   the plan's order); missing gives null (the manual: "If the field that
 *   the $first accumulator is processing is missing, $first returns null").
 * $topN, $bottomN: accum_topn.c. $addToSet: accum_set.c. Expressions
 * (paths, $$ROOT, literals): accum_expr.c. Decimal arithmetic and the
 * double-double sum: the expression layer's (expr_decimal.h, expr_ddsum.h),
 * which $sum and $avg as expressions use too.
 *
 * An empty group (no document fed) gives what the header says: $count and
 * $sum int32 0, $avg/$min/$max/$first/$last null, arrays empty. */
#include <math.h>
#include <string.h>

#include "remodel/accum.h"
#include "remodel/value.h"

#include "accum_impl.h"
#include "expr_ddsum.h"
#include "expr_decimal.h"

/* Numeric types from narrowest to widest, as the server widens them. */
typedef enum { T_INT32, T_INT64, T_DOUBLE, T_DECIMAL } numtype_t;

struct rm_acc_spec {
    rm_acc_kind_t kind;
    const char *op;               /* "$sum", for messages */
    rm_acc_expr_t *arg;           /* NULL for $count, $topN, $bottomN */
    rm_acc_topn_spec_t *topn;     /* $topN, $bottomN */
    bool constant;                /* $sum of an int32, int64 or double literal */
    numtype_t const_type;
    int64_t const_int;
    double const_double;
};

static const struct {
    const char *op;
    rm_acc_kind_t kind;
} ops[] = {
    {"$count", RM_ACC_COUNT}, {"$sum", RM_ACC_SUM},          {"$avg", RM_ACC_AVG},
    {"$min", RM_ACC_MIN},     {"$max", RM_ACC_MAX},          {"$first", RM_ACC_FIRST},
    {"$last", RM_ACC_LAST},   {"$topN", RM_ACC_TOP_N},       {"$bottomN", RM_ACC_BOTTOM_N},
    {"$addToSet", RM_ACC_ADD_TO_SET},
};

#define SUPPORTED "$count, $sum, $avg, $min, $max, $first, $last, $topN, $bottomN, $addToSet"

rm_acc_spec_t *
rm_acc_spec_parse (const bson_iter_t *expr, bson_error_t *err)
{
    const char *field = bson_iter_key (expr), *op;
    bson_iter_t sub, arg;
    rm_acc_spec_t *s;
    size_t i;

    if (!BSON_ITER_HOLDS_DOCUMENT (expr) || !bson_iter_recurse (expr, &sub) ||
        !bson_iter_next (&sub)) {
        rm_error_set (err, RM_ERR_USAGE,
                      "\"%s\": an accumulator is a document with one operator, like "
                      "{\"$sum\": \"$qty\"}",
                      field);
        return NULL;
    }
    op = bson_iter_key (&sub);
    arg = sub;
    if (bson_iter_next (&sub)) {
        rm_error_set (err, RM_ERR_USAGE,
                      "\"%s\": an accumulator has one operator, found \"%s\" and \"%s\"", field,
                      op, bson_iter_key (&sub));
        return NULL;
    }
    for (i = 0; i < sizeof ops / sizeof ops[0] && strcmp (ops[i].op, op) != 0; i++)
        ;
    if (i == sizeof ops / sizeof ops[0]) {
        rm_error_set (err, RM_ERR_USAGE,
                      "\"%s\": unknown accumulator \"%s\" (supported: " SUPPORTED ")", field, op);
        return NULL;
    }

    s = bson_malloc0 (sizeof *s);
    s->kind = ops[i].kind;
    s->op = ops[i].op;
    switch (s->kind) {
    case RM_ACC_COUNT: {
        bson_iter_t c;
        if (!BSON_ITER_HOLDS_DOCUMENT (&arg) || !bson_iter_recurse (&arg, &c) ||
            bson_iter_next (&c)) {
            rm_error_set (err, RM_ERR_USAGE,
                          "\"%s\": $count takes no argument: write {\"$count\": {}}", field);
            goto fail;
        }
        /* The server parses it as {"$sum": 1}. */
        s->constant = true;
        s->const_type = T_INT32;
        s->const_int = 1;
        s->const_double = 1;
        break;
    }
    case RM_ACC_TOP_N:
    case RM_ACC_BOTTOM_N:
        s->topn = rm_acc_topn_spec_parse (&arg, s->kind == RM_ACC_BOTTOM_N, err);
        if (!s->topn) {
            rm_error_prefix (err, "\"%s\": %s", field, op);
            goto fail;
        }
        break;
    default: {
        bson_iter_t lit;
        /* In $group every accumulator but $count, $topN and $bottomN takes
         * one expression; the server refuses an array for it. */
        if (BSON_ITER_HOLDS_ARRAY (&arg)) {
            rm_error_set (err, RM_ERR_USAGE,
                          "\"%s\": %s is a unary operator: give one expression, not an array",
                          field, op);
            goto fail;
        }
        s->arg = rm_acc_expr_parse (&arg, err);
        if (!s->arg) {
            rm_error_prefix (err, "\"%s\": %s", field, op);
            goto fail;
        }
        if (s->kind == RM_ACC_SUM && rm_acc_expr_literal (s->arg, &lit) &&
            (BSON_ITER_HOLDS_INT32 (&lit) || BSON_ITER_HOLDS_INT64 (&lit) ||
             BSON_ITER_HOLDS_DOUBLE (&lit))) {
            s->constant = true;
            s->const_type = BSON_ITER_HOLDS_INT32 (&lit)   ? T_INT32
                            : BSON_ITER_HOLDS_INT64 (&lit) ? T_INT64
                                                           : T_DOUBLE;
            s->const_int = bson_iter_as_int64 (&lit);
            s->const_double = bson_iter_as_double (&lit);
        }
        break;
    }
    }
    return s;

fail:
    rm_acc_spec_destroy (s);
    return NULL;
}

void
rm_acc_spec_destroy (rm_acc_spec_t *s)
{
    if (!s)
        return;
    rm_acc_expr_destroy (s->arg);
    rm_acc_topn_spec_destroy (s->topn);
    bson_free (s);
}

/* ---- the running state */

struct rm_acc {
    const rm_acc_spec_t *spec;
    bson_t *scratch;         /* values built for one document */
    uint64_t count;          /* documents ($count, constant $sum) or numbers ($avg) */
    /* $sum, $avg */
    numtype_t type;
    rm_xdd_t dd;
    bson_decimal128_t dec;
    /* constant $sum and $count */
    int32_t c32;
    int64_t c64;
    double cdbl;
    /* $min, $max, $first, $last: {"v": value}. Iterators are not kept
     * in heap structures: libbson aligns them to 128 bytes, more than
     * malloc does. */
    bson_t *val;
    bool have;
    rm_acc_topn_t *topn;
    rm_acc_set_t *set;
    rm_expr_ctx_t *cx;       /* the argument's evaluation, reset per document */
};

rm_acc_t *
rm_acc_new (const rm_acc_spec_t *spec)
{
    rm_acc_t *a = bson_malloc0 (sizeof *a);
    a->spec = spec;
    a->scratch = bson_new ();
    a->val = bson_new ();
    a->cx = rm_expr_ctx_new (0);
    if (spec->topn)
        a->topn = rm_acc_topn_new (spec->topn);
    if (spec->kind == RM_ACC_ADD_TO_SET)
        a->set = rm_acc_set_new ();
    rm_acc_reset (a);
    return a;
}

void
rm_acc_reset (rm_acc_t *a)
{
    a->count = 0;
    a->type = a->spec->constant ? a->spec->const_type : T_INT32;
    memset (&a->dd, 0, sizeof a->dd);
    /* The server's decimal total starts at 0 with exponent 0, which is
     * why a sum of 1.50 stays "1.50" but a sum of 1E+2 becomes "100". */
    bson_decimal128_from_string ("0", &a->dec);
    a->c32 = 0;
    a->c64 = 0;
    a->cdbl = 0;
    a->have = false;
    if (a->topn)
        rm_acc_topn_reset (a->topn);
    if (a->set)
        rm_acc_set_reset (a->set);
}

void
rm_acc_destroy (rm_acc_t *a)
{
    if (!a)
        return;
    bson_destroy (a->scratch);
    bson_destroy (a->val);
    rm_acc_topn_destroy (a->topn);
    rm_acc_set_destroy (a->set);
    rm_expr_ctx_destroy (a->cx);
    bson_free (a);
}

/* The server's constant fast path: overflow widens the running total and
 * the addend is then added in the wider type. */
static void
add_constant (rm_acc_t *a)
{
    const rm_acc_spec_t *s = a->spec;
    switch (a->type) {
    case T_INT32: {
        int64_t r = (int64_t) a->c32 + s->const_int;
        if (r >= INT32_MIN && r <= INT32_MAX) {
            a->c32 = (int32_t) r;
            break;
        }
        a->c64 = a->c32;
        a->type = T_INT64;
    } /* fall through */
    case T_INT64:
        if (!((s->const_int > 0 && a->c64 > INT64_MAX - s->const_int) ||
              (s->const_int < 0 && a->c64 < INT64_MIN - s->const_int))) {
            a->c64 += s->const_int;
            break;
        }
        a->cdbl = (double) a->c64;
        a->type = T_DOUBLE;
        /* fall through */
    default:
        a->cdbl += s->const_double;
        break;
    }
}

static void
widen (rm_acc_t *a, numtype_t t)
{
    if (t > a->type)
        a->type = t;
}

/* Adds a number to the $sum/$avg totals; false if v is not a number. */
static bool
add_number (rm_acc_t *a, const bson_iter_t *v)
{
    bson_decimal128_t d;
    switch (bson_iter_type (v)) {
    case BSON_TYPE_INT32:
        rm_xdd_add (&a->dd, bson_iter_int32 (v));
        widen (a, T_INT32);
        return true;
    case BSON_TYPE_INT64:
        rm_xdd_add_int64 (&a->dd, bson_iter_int64 (v));
        widen (a, T_INT64);
        return true;
    case BSON_TYPE_DOUBLE:
        rm_xdd_add (&a->dd, bson_iter_double (v));
        widen (a, T_DOUBLE);
        return true;
    case BSON_TYPE_DECIMAL128:
        bson_iter_decimal128 (v, &d);
        rm_xdec_add (&a->dec, &a->dec, &d);
        widen (a, T_DECIMAL);
        return true;
    default:
        return false;
    }
}

/* Keeps v as the current value ($min, $max, $first, $last). */
static void
keep (rm_acc_t *a, const bson_iter_t *v)
{
    bson_reinit (a->val);
    bson_append_iter (a->val, "v", 1, v);
    a->have = true;
}

bool
rm_acc_add (rm_acc_t *a, const uint8_t *doc, uint32_t len, uint64_t seq, bson_error_t *err)
{
    const rm_acc_spec_t *s = a->spec;
    bson_iter_t v, cur;
    int found;

    if (s->constant) {
        a->count++;
        add_constant (a);
        return true;
    }
    switch (s->kind) {
    case RM_ACC_TOP_N:
    case RM_ACC_BOTTOM_N:
        return rm_acc_topn_add (a->topn, doc, len, seq, err);
    case RM_ACC_FIRST:
        if (a->have)
            return true;
        /* fall through */
    case RM_ACC_LAST:
        /* Straight into the kept value: no copy of $$ROOT in between. */
        bson_reinit (a->val);
        rm_expr_ctx_reset (a->cx);
        if (rm_acc_expr_append (s->arg, a->cx, doc, len, a->val, "v", 1, true, err) < 0)
            return false;
        a->have = true;
        return true;
    default:
        break;
    }

    rm_expr_ctx_reset (a->cx);
    found = rm_acc_expr_eval (s->arg, a->cx, doc, len, a->scratch, &v, err);
    if (found < 0)
        return false;
    switch (s->kind) {
    case RM_ACC_SUM:
        if (found)
            add_number (a, &v);
        break;
    case RM_ACC_AVG:
        if (found && add_number (a, &v))
            a->count++;
        break;
    case RM_ACC_MIN:
    case RM_ACC_MAX:
        if (!found || BSON_ITER_HOLDS_NULL (&v) || BSON_ITER_HOLDS_UNDEFINED (&v))
            break;
        /* Strictly better only: of equal values the first stays. */
        if (!a->have || !bson_iter_init_find (&cur, a->val, "v") ||
            rm_value_compare (&v, &cur) * (s->kind == RM_ACC_MIN ? 1 : -1) < 0)
            keep (a, &v);
        break;
    case RM_ACC_ADD_TO_SET:
        if (found)
            return rm_acc_set_add (a->set, &v, err);
        break;
    default:
        break;
    }
    return true;
}

static bool
finish_sum (rm_acc_t *a, bson_t *out, const char *name)
{
    bson_decimal128_t d;

    if (a->spec->constant) {
        if (a->count == 0 || a->type == T_INT32)
            return bson_append_int32 (out, name, -1, a->c32);
        if (a->type == T_INT64)
            return bson_append_int64 (out, name, -1, a->c64);
        return bson_append_double (out, name, -1, a->cdbl);
    }
    switch (a->type) {
    case T_INT32:
        if (rm_xdd_fits_int64 (&a->dd)) {
            int64_t v = rm_xdd_int64 (&a->dd);
            if (v >= INT32_MIN && v <= INT32_MAX)
                return bson_append_int32 (out, name, -1, (int32_t) v);
            return bson_append_int64 (out, name, -1, v);
        }
        return bson_append_double (out, name, -1, rm_xdd_double (&a->dd));
    case T_INT64:
        if (rm_xdd_fits_int64 (&a->dd))
            return bson_append_int64 (out, name, -1, rm_xdd_int64 (&a->dd));
        return bson_append_double (out, name, -1, rm_xdd_double (&a->dd));
    case T_DOUBLE:
        return bson_append_double (out, name, -1, rm_xdd_double (&a->dd));
    default:
        rm_xdd_decimal (&a->dd, &d);
        rm_xdec_add (&d, &a->dec, &d);
        return bson_append_decimal128 (out, name, -1, &d);
    }
}

static bool
finish_avg (rm_acc_t *a, bson_t *out, const char *name)
{
    bson_decimal128_t d;

    if (a->count == 0)
        return bson_append_null (out, name, -1);
    if (a->type == T_DECIMAL) {
        rm_xdd_decimal (&a->dd, &d);
        rm_xdec_add (&d, &a->dec, &d);
        rm_xdec_div_int64 (&d, &d, (int64_t) a->count);
        return bson_append_decimal128 (out, name, -1, &d);
    }
    return bson_append_double (out, name, -1, rm_xdd_double (&a->dd) / (double) a->count);
}

bool
rm_acc_finish (rm_acc_t *a, bson_t *out, const char *name, bson_error_t *err)
{
    bson_iter_t v;
    bool ok;

    switch (a->spec->kind) {
    case RM_ACC_COUNT:
    case RM_ACC_SUM:
        ok = finish_sum (a, out, name);
        break;
    case RM_ACC_AVG:
        ok = finish_avg (a, out, name);
        break;
    case RM_ACC_TOP_N:
    case RM_ACC_BOTTOM_N:
        return rm_acc_topn_finish (a->topn, out, name, err);
    case RM_ACC_ADD_TO_SET:
        return rm_acc_set_finish (a->set, out, name, err);
    default:
        ok = a->have && bson_iter_init_find (&v, a->val, "v")
                 ? bson_append_iter (out, name, -1, &v)
                 : bson_append_null (out, name, -1);
        break;
    }
    if (!ok)
        rm_error_set (err, RM_ERR_FORMAT, "%s \"%s\": the result document is too large",
                      a->spec->op, name);
    return ok;
}
