/* The arithmetic operators: $add, $subtract, $multiply, $divide, $mod,
 * $abs, rounding ($round, $trunc, $floor, $ceil), logarithms and powers,
 * trigonometry, the bitwise operators, and the expression forms of $sum,
 * $avg, $min, $max, $stdDevPop and $stdDevSamp.
 *
 * Types follow the server (its evaluate_math.cpp): integers stay int32
 * while the result fits, become int64, then double on overflow; a double
 * operand makes a double and a decimal128 one a decimal128 (a double met
 * by a decimal is first read to 15 digits, as the server's Decimal128
 * does); $divide gives a double unless decimal. Null, undefined or missing
 * operands give null, but where the server checks a type before it looks
 * for null, a bad type earlier in the list is an error all the same
 * ({$add: ["a", null]} fails, {$add: [null, "a"]} is null). Decimal
 * arithmetic is expr_decimal.c's, exact and rounded once. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_ddsum.h"
#include "expr_decimal.h"
#include "expr_impl.h"

/* The server's numeric widening order. */
typedef enum { W_INT, W_LONG, W_DOUBLE, W_DEC } widest_t;

static widest_t
width_of (const bson_value_t *v)
{
    switch (v->value_type) {
    case BSON_TYPE_INT32:
        return W_INT;
    case BSON_TYPE_INT64:
        return W_LONG;
    case BSON_TYPE_DOUBLE:
        return W_DOUBLE;
    default:
        return W_DEC;
    }
}

/* An int32 or int64 value (others are not asked). */
static int64_t
as_long (const bson_value_t *v)
{
    return v->value_type == BSON_TYPE_INT32 ? v->value.v_int32 : v->value.v_int64;
}

static double
as_double (const bson_value_t *v)
{
    double d = 0;
    rm_xval_to_double (v, &d);
    return d;
}

/* A number as the server's coerceToDecimal reads it. */
static void
as_dec (const bson_value_t *v, bson_decimal128_t *r)
{
    switch (v->value_type) {
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
        rm_xdec_from_int64 (r, as_long (v));
        break;
    case BSON_TYPE_DOUBLE:
        rm_xdec_from_double (r, v->value.v_double, true);
        break;
    default:
        *r = v->value.v_decimal128;
        break;
    }
}

static void
set_dec (bson_value_t *out, const bson_decimal128_t *d)
{
    out->value_type = BSON_TYPE_DECIMAL128;
    out->value.v_decimal128 = *d;
}

static double
dec_to_double (const bson_decimal128_t *d)
{
    bson_value_t v;
    set_dec (&v, d);
    return as_double (&v);
}

/* An int64 result of integer operands: int32 when it fits and no operand
 * was an int64 (the server's createIntOrLong). */
static void
set_int_or_long (bson_value_t *out, int64_t v, bool was_long)
{
    if (!was_long && v >= INT32_MIN && v <= INT32_MAX)
        rm_xset_int32 (out, (int32_t) v);
    else
        rm_xset_int64 (out, v);
}

static bool
not_numeric (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, bson_error_t *err)
{
    return rm_xfail (err, e, "only supports numeric types, not %s %s", rm_xval_type_name (v),
                     rm_xshow (cx, v));
}

/* ---- $add */

/* The server's AddState: an int64 total while integers fit, a double one
 * after, a decimal one once a decimal is seen; with a date, the total is
 * the date's milliseconds and every number is added to it as an integer
 * (doubles rounded half away from zero, decimals half to even). */
typedef struct {
    widest_t w;
    int64_t l;
    double d;
    bson_decimal128_t dec;
    bool is_date;
} add_t;

static void
add_value (const add_t *s, bson_value_t *out)
{
    if (s->is_date)
        rm_xset_date (out, s->l);
    else if (s->w == W_INT)
        set_int_or_long (out, s->l, false);
    else if (s->w == W_LONG)
        rm_xset_int64 (out, s->l);
    else if (s->w == W_DOUBLE)
        rm_xset_double (out, s->d);
    else
        set_dec (out, &s->dec);
}

static bool
add_to_date (add_t *s, const bson_value_t *v, const rm_expr_t *e, bson_error_t *err)
{
    int64_t n;
    switch (v->value_type) {
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
        n = as_long (v);
        break;
    case BSON_TYPE_DOUBLE:
        /* The upper bound is exclusive: 2^63 - 1 reads as 2^63. */
        if (!(v->value.v_double >= -9223372036854775808.0 && v->value.v_double < 9223372036854775808.0))
            return rm_xfail (err, e, "date overflow");
        n = llround (v->value.v_double);
        break;
    default:
        if (!rm_xdec_to_int64 (&v->value.v_decimal128, &n))
            return rm_xfail (err, e, "date overflow");
        break;
    }
    if (__builtin_add_overflow (s->l, n, &s->l))
        return rm_xfail (err, e, "date overflow");
    return true;
}

static bool
add_one (add_t *s, const bson_value_t *v, const rm_expr_t *e, bson_error_t *err)
{
    widest_t old = s->w;
    bson_value_t ms;

    if (v->value_type == BSON_TYPE_DATE_TIME) {
        bson_value_t sofar;
        if (s->is_date)
            return rm_xfail (err, e, "only one date allowed in an $add expression");
        add_value (s, &sofar);
        s->l = 0;
        if (!add_to_date (s, &sofar, e, err))
            return false;
        s->is_date = true;
        rm_xset_int64 (&ms, v->value.v_datetime);
        return add_to_date (s, &ms, e, err);
    }
    if (s->is_date)
        return add_to_date (s, v, e, err);
    if (width_of (v) > s->w)
        s->w = width_of (v);
    if (old != s->w) {
        if (s->w == W_DOUBLE)
            s->d = (double) s->l;
        else if (s->w == W_DEC && old == W_DOUBLE)
            rm_xdec_from_double (&s->dec, s->d, true);
        else if (s->w == W_DEC)
            rm_xdec_from_int64 (&s->dec, s->l);
    }
    if (s->w == W_INT || s->w == W_LONG) {
        int64_t n;
        if (__builtin_add_overflow (s->l, as_long (v), &n)) {
            s->w = W_DOUBLE;
            s->d = (double) s->l + (double) as_long (v);
        } else {
            s->l = n;
        }
    } else if (s->w == W_DOUBLE) {
        s->d += as_double (v);
    } else {
        bson_decimal128_t d;
        as_dec (v, &d);
        rm_xdec_add (&s->dec, &s->dec, &d);
    }
    return true;
}

static bool
eval_add (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    add_t s = {W_INT, 0, 0, {0, 0}, false};
    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        if (!rm_xeval (cx, e->args[i], &v, err))
            return false;
        if (rm_xval_nullish (&v)) {
            rm_xset_null (out);
            return true;
        }
        if (!rm_xval_is_number (&v) && v.value_type != BSON_TYPE_DATE_TIME)
            return rm_xfail (err, e, "only supports numeric or date types, not %s %s",
                             rm_xval_type_name (&v), rm_xshow (cx, &v));
        if (!add_one (&s, &v, e, err))
            return false;
    }
    add_value (&s, out);
    return true;
}

/* ---- $subtract */

static bool
eval_subtract (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    int64_t r;

    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (rm_xval_is_number (&v[0]) && rm_xval_is_number (&v[1])) {
        widest_t w = width_of (&v[0]) > width_of (&v[1]) ? width_of (&v[0]) : width_of (&v[1]);
        if (w == W_DEC) {
            bson_decimal128_t a, b;
            as_dec (&v[0], &a);
            as_dec (&v[1], &b);
            rm_xdec_sub (&a, &a, &b);
            set_dec (out, &a);
        } else if (w == W_DOUBLE) {
            rm_xset_double (out, as_double (&v[0]) - as_double (&v[1]));
        } else if (__builtin_sub_overflow (as_long (&v[0]), as_long (&v[1]), &r)) {
            rm_xset_double (out, as_double (&v[0]) - as_double (&v[1]));
        } else {
            set_int_or_long (out, r, w == W_LONG);
        }
        return true;
    }
    if (rm_xval_nullish (&v[0]) || rm_xval_nullish (&v[1])) {
        rm_xset_null (out);
        return true;
    }
    if (v[0].value_type == BSON_TYPE_DATE_TIME) {
        int64_t ms = v[0].value.v_datetime, n;
        switch (v[1].value_type) {
        case BSON_TYPE_DATE_TIME:
            rm_xset_int64 (out, (int64_t) ((uint64_t) ms - (uint64_t) v[1].value.v_datetime));
            return true;
        case BSON_TYPE_INT32:
        case BSON_TYPE_INT64:
            n = as_long (&v[1]);
            break;
        case BSON_TYPE_DOUBLE:
            if (!(v[1].value.v_double >= -9223372036854775808.0 &&
                  v[1].value.v_double < 9223372036854775808.0))
                return rm_xfail (err, e, "date overflow");
            n = llround (v[1].value.v_double);
            break;
        case BSON_TYPE_DECIMAL128:
            if (!rm_xdec_to_int64 (&v[1].value.v_decimal128, &n))
                return rm_xfail (err, e, "date overflow");
            break;
        default:
            return rm_xfail (err, e, "can't subtract %s %s from a date", rm_xval_type_name (&v[1]),
                             rm_xshow (cx, &v[1]));
        }
        if (__builtin_sub_overflow (ms, n, &ms))
            return rm_xfail (err, e, "date overflow");
        rm_xset_date (out, ms);
        return true;
    }
    return rm_xfail (err, e, "can't subtract %s %s from %s %s", rm_xval_type_name (&v[1]),
                     rm_xshow (cx, &v[1]), rm_xval_type_name (&v[0]), rm_xshow (cx, &v[0]));
}

/* ---- $multiply */

static bool
eval_multiply (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    double dp = 1;
    int64_t lp = 1;
    bson_decimal128_t decp;
    widest_t w = W_INT;

    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        widest_t old = w;
        if (!rm_xeval (cx, e->args[i], &v, err))
            return false;
        if (rm_xval_nullish (&v)) {
            rm_xset_null (out);
            return true;
        }
        if (!rm_xval_is_number (&v))
            return not_numeric (cx, e, &v, err);
        if (width_of (&v) > w)
            w = width_of (&v);
        if (w == W_DEC) {
            bson_decimal128_t d;
            if (old != W_DEC) {
                if (old == W_DOUBLE)
                    rm_xdec_from_double (&decp, dp, true);
                else
                    rm_xdec_from_int64 (&decp, lp);
            }
            as_dec (&v, &d);
            rm_xdec_mul (&decp, &decp, &d);
        } else {
            dp *= as_double (&v);
            /* The integer product runs beside the double one until it
             * overflows. */
            if (w != W_DOUBLE && __builtin_mul_overflow (lp, as_long (&v), &lp))
                w = W_DOUBLE;
        }
    }
    if (w == W_DEC)
        set_dec (out, &decp);
    else if (w == W_DOUBLE)
        rm_xset_double (out, dp);
    else
        set_int_or_long (out, lp, w == W_LONG);
    return true;
}

/* ---- $divide, $mod */

/* What $divide and $mod answer when their two arguments are not both
 * numbers: null when either is null or missing, else an error. */
static bool
not_two_numbers (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, bson_value_t *out,
                 bson_error_t *err)
{
    if (rm_xval_nullish (&v[0]) || rm_xval_nullish (&v[1])) {
        rm_xset_null (out);
        return true;
    }
    return rm_xfail (err, e, "only supports numeric types, not %s %s and %s %s", rm_xval_type_name (&v[0]),
                     rm_xshow (cx, &v[0]), rm_xval_type_name (&v[1]), rm_xshow (cx, &v[1]));
}

/* v[0] / v[1] or v[0] % v[1] in decimal, refusing a zero divisor with
 * the server's words. */
static bool
dec_divide (const rm_expr_t *e, const bson_value_t v[2],
            void (*op) (bson_decimal128_t *, const bson_decimal128_t *, const bson_decimal128_t *),
            const char *by_zero, bson_value_t *out, bson_error_t *err)
{
    bson_decimal128_t a, b;
    as_dec (&v[0], &a);
    as_dec (&v[1], &b);
    if (rm_xdec_is_zero (&b))
        return rm_xfail (err, e, "%s", by_zero);
    op (&a, &a, &b);
    set_dec (out, &a);
    return true;
}

static bool
eval_divide (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (rm_xval_is_number (&v[0]) && rm_xval_is_number (&v[1])) {
        if (v[0].value_type == BSON_TYPE_DECIMAL128 || v[1].value_type == BSON_TYPE_DECIMAL128)
            return dec_divide (e, v, rm_xdec_div, "can't divide by zero", out, err);
        if (as_double (&v[1]) == 0)
            return rm_xfail (err, e, "can't divide by zero");
        rm_xset_double (out, as_double (&v[0]) / as_double (&v[1]));
        return true;
    }
    return not_two_numbers (cx, e, v, out, err);
}

static bool
eval_mod (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (rm_xval_is_number (&v[0]) && rm_xval_is_number (&v[1])) {
        widest_t w = width_of (&v[0]) > width_of (&v[1]) ? width_of (&v[0]) : width_of (&v[1]);
        if (w == W_DEC)
            return dec_divide (e, v, rm_xdec_mod, "can't mod by zero", out, err);
        if (as_double (&v[1]) == 0)
            return rm_xfail (err, e, "can't mod by zero");
        /* A double divisor an int32 holds exactly leaves an int or long
         * dividend's type ({$mod: [8, 3.0]} is the int 2): the server's
         * expression_mod.js. */
        if (w == W_DOUBLE && v[0].value_type != BSON_TYPE_DOUBLE && v[1].value.v_double >= INT32_MIN &&
            v[1].value.v_double <= INT32_MAX && v[1].value.v_double == trunc (v[1].value.v_double))
            w = width_of (&v[0]);
        if (w == W_DOUBLE) {
            rm_xset_double (out, fmod (as_double (&v[0]), as_double (&v[1])));
        } else {
            int64_t a = as_long (&v[0]);
            int64_t b = v[1].value_type == BSON_TYPE_DOUBLE ? (int64_t) v[1].value.v_double : as_long (&v[1]);
            /* INT64_MIN % -1 is 0, not a trap. */
            int64_t r = b == -1 ? 0 : a % b;
            set_int_or_long (out, r, w == W_LONG);
        }
        return true;
    }
    return not_two_numbers (cx, e, v, out, err);
}

/* ---- one numeric argument */

/* Evaluates the only argument: false with *done set when the answer is
 * already out (null) or an error was raised. */
static bool
one_number (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *v, bson_value_t *out,
            bson_error_t *err, bool *ok)
{
    *ok = rm_xeval (cx, e->args[0], v, err);
    if (!*ok)
        return false;
    if (rm_xval_nullish (v)) {
        rm_xset_null (out);
        return false;
    }
    if (!rm_xval_is_number (v)) {
        *ok = not_numeric (cx, e, v, err);
        return false;
    }
    return true;
}

static bool
eval_abs (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    bool ok;
    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    switch (v.value_type) {
    case BSON_TYPE_DOUBLE:
        rm_xset_double (out, fabs (v.value.v_double));
        break;
    case BSON_TYPE_DECIMAL128:
        out->value_type = BSON_TYPE_DECIMAL128;
        rm_xdec_abs (&out->value.v_decimal128, &v.value.v_decimal128);
        break;
    default:
        if (as_long (&v) == INT64_MIN)
            return rm_xfail (err, e, "can't take the absolute value of the smallest long, %s",
                             rm_xshow (cx, &v));
        set_int_or_long (out, llabs (as_long (&v)), v.value_type == BSON_TYPE_INT64);
        break;
    }
    return true;
}

/* $ceil and $floor: integers as they are, a decimal to exponent 0. */
static bool
eval_ceil_floor (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bool ceil_ = e->op->name[1] == 'c';
    bson_value_t v;
    bool ok;
    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    if (v.value_type == BSON_TYPE_DOUBLE) {
        rm_xset_double (out, ceil_ ? ceil (v.value.v_double) : floor (v.value.v_double));
    } else if (v.value_type == BSON_TYPE_DECIMAL128) {
        out->value_type = BSON_TYPE_DECIMAL128;
        rm_xdec_quantize (&out->value.v_decimal128, &v.value.v_decimal128, 0,
                          ceil_ ? RM_XDEC_CEIL : RM_XDEC_FLOOR);
    } else {
        *out = v;
    }
    return true;
}

/* A decimal as a long double (through its string: correctly rounded). */
static long double
dec_to_ld (const bson_decimal128_t *a)
{
    char s[BSON_DECIMAL128_STRING];
    bson_decimal128_to_string (a, s);
    if (!strcmp (s, "NaN") || !strcmp (s, "-NaN"))
        return NAN;
    if (!strcmp (s, "Infinity"))
        return INFINITY;
    if (!strcmp (s, "-Infinity"))
        return -INFINITY;
    return strtold (s, NULL);
}

/* A long double result as a decimal of 18 significant digits, trailing
 * zeros dropped so that exact results read short (1, not
 * 1.00000000000000000). The server's decimal functions give 34 digits:
 * this keeps only those a long double computes well. */
static void
ld_to_dec (long double y, bson_decimal128_t *r)
{
    char m[64], s[80], *ep;
    size_t n;
    if (isnan (y)) {
        bson_decimal128_from_string ("NaN", r);
        return;
    }
    if (isinf (y)) {
        bson_decimal128_from_string (y < 0 ? "-Infinity" : "Infinity", r);
        return;
    }
    snprintf (m, sizeof m, "%.17Le", y);
    ep = strchr (m, 'e');
    n = (size_t) (ep - m);
    while (n > 0 && m[n - 1] == '0')
        n--;
    if (n > 0 && m[n - 1] == '.')
        n--;
    snprintf (s, sizeof s, "%.*s%s", (int) n, m, ep);
    bson_decimal128_from_string (s, r);
}

static void
dec_via_ld (const bson_decimal128_t *a, long double (*fn) (long double), bson_decimal128_t *r)
{
    ld_to_dec (fn (dec_to_ld (a)), r);
}

static long double
ld_exp (long double x)
{
    return expl (x);
}
static long double
ld_ln (long double x)
{
    return logl (x);
}
static long double
ld_log10 (long double x)
{
    return log10l (x);
}

static bool
eval_exp (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    bool ok;
    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    if (v.value_type == BSON_TYPE_DECIMAL128) {
        out->value_type = BSON_TYPE_DECIMAL128;
        dec_via_ld (&v.value.v_decimal128, ld_exp, &out->value.v_decimal128);
    } else {
        rm_xset_double (out, exp (as_double (&v)));
    }
    return true;
}

static bool
dec_positive (const bson_value_t *v)
{
    bson_decimal128_t zero;
    rm_xdec_from_int64 (&zero, 0);
    return v->value_type == BSON_TYPE_DECIMAL128 && rm_xdec_cmp (&v->value.v_decimal128, &zero) == 1;
}

/* $ln and $log10: a decimal above zero stays decimal; anything else is
 * read as a double, and must be above zero (or NaN). */
static bool
eval_ln_log10 (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bool ln = e->op->name[2] == 'n';
    bson_value_t v;
    bool ok;
    double d;
    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    if (dec_positive (&v)) {
        out->value_type = BSON_TYPE_DECIMAL128;
        dec_via_ld (&v.value.v_decimal128, ln ? ld_ln : ld_log10, &out->value.v_decimal128);
        return true;
    }
    d = as_double (&v);
    if (!(d > 0 || isnan (d)))
        return rm_xfail (err, e, "the argument must be a positive number, not %s", rm_xshow (cx, &v));
    rm_xset_double (out, ln ? log (d) : log10 (d));
    return true;
}

static bool
eval_sqrt (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    bool ok;
    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    if (v.value_type == BSON_TYPE_DECIMAL128) {
        bson_decimal128_t zero;
        rm_xdec_from_int64 (&zero, 0);
        if (rm_xdec_cmp (&v.value.v_decimal128, &zero) == -1)
            return rm_xfail (err, e, "the argument must be greater than or equal to 0, not %s",
                             rm_xshow (cx, &v));
        out->value_type = BSON_TYPE_DECIMAL128;
        rm_xdec_sqrt (&out->value.v_decimal128, &v.value.v_decimal128);
        return true;
    }
    if (as_double (&v) < 0)
        return rm_xfail (err, e, "the argument must be greater than or equal to 0, not %s",
                         rm_xshow (cx, &v));
    rm_xset_double (out, sqrt (as_double (&v)));
    return true;
}

/* ---- $log, $pow */

/* The opening $log and $pow share: both arguments evaluated, then null if
 * either is null or missing, else each must be a number (what[i] names
 * it in the message). As one_number: true to go on; false with *ok to
 * return. */
static bool
two_numbers (rm_expr_ctx_t *cx, const rm_expr_t *e, const char *const what[2], bson_value_t *v,
             bson_value_t *out, bson_error_t *err, bool *ok)
{
    *ok = rm_xeval_args (cx, e, v, err);
    if (!*ok)
        return false;
    if (rm_xval_nullish (&v[0]) || rm_xval_nullish (&v[1])) {
        rm_xset_null (out);
        return false;
    }
    for (int i = 0; i < 2; i++)
        if (!rm_xval_is_number (&v[i])) {
            *ok = rm_xfail (err, e, "the %s must be numeric, not %s %s", what[i], rm_xval_type_name (&v[i]),
                            rm_xshow (cx, &v[i]));
            return false;
        }
    return true;
}

static bool
eval_log (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    static const char *const what[2] = {"argument", "base"};
    bson_value_t v[2];
    double a, b;
    bool ok;
    if (!two_numbers (cx, e, what, v, out, err, &ok))
        return ok;
    if (v[0].value_type == BSON_TYPE_DECIMAL128 || v[1].value_type == BSON_TYPE_DECIMAL128) {
        bson_decimal128_t x, base, zero, one;
        as_dec (&v[0], &x);
        as_dec (&v[1], &base);
        rm_xdec_from_int64 (&zero, 0);
        rm_xdec_from_int64 (&one, 1);
        if (rm_xdec_cmp (&x, &zero) == 1 && rm_xdec_cmp (&base, &one) != 0 &&
            rm_xdec_cmp (&base, &zero) == 1) {
            /* ln(x) / ln(base), in long double. */
            out->value_type = BSON_TYPE_DECIMAL128;
            ld_to_dec (logl (dec_to_ld (&x)) / logl (dec_to_ld (&base)), &out->value.v_decimal128);
            return true;
        }
    }
    a = as_double (&v[0]);
    b = as_double (&v[1]);
    if (!(a > 0 || isnan (a)))
        return rm_xfail (err, e, "the argument must be a positive number, not %s", rm_xshow (cx, &v[0]));
    if (!((b > 0 && b != 1) || isnan (b)))
        return rm_xfail (err, e, "the base must be a positive number not equal to 1, not %s",
                         rm_xshow (cx, &v[1]));
    rm_xset_double (out, log (a) / log (b));
    return true;
}

static bool
eval_pow (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    static const char *const what[2] = {"base", "exponent"};
    bson_value_t v[2];
    double b, x;
    int64_t bl, xl, r = 1;
    bool wide, ok;

    if (!two_numbers (cx, e, what, v, out, err, &ok))
        return ok;
    if (v[0].value_type == BSON_TYPE_DECIMAL128 || v[1].value_type == BSON_TYPE_DECIMAL128) {
        bson_decimal128_t db, dx;
        as_dec (&v[0], &db);
        as_dec (&v[1], &dx);
        if (rm_xdec_is_zero (&db) && rm_xdec_is_neg (&dx))
            return rm_xfail (err, e, "cannot take a base of 0 and a negative exponent");
        out->value_type = BSON_TYPE_DECIMAL128;
        ld_to_dec (powl (dec_to_ld (&db), dec_to_ld (&dx)), &out->value.v_decimal128);
        return true;
    }
    b = as_double (&v[0]);
    x = as_double (&v[1]);
    if (b == 0 && x < 0)
        return rm_xfail (err, e, "cannot take a base of 0 and a negative exponent");
    if (v[0].value_type == BSON_TYPE_DOUBLE || v[1].value_type == BSON_TYPE_DOUBLE) {
        rm_xset_double (out, pow (b, x));
        return true;
    }
    /* Integers: exact while the result fits an int64 (int32 when both
     * are and it fits), else the double. */
    wide = v[0].value_type == BSON_TYPE_INT64 || v[1].value_type == BSON_TYPE_INT64;
    bl = as_long (&v[0]);
    xl = as_long (&v[1]);
    if (bl == 0 || bl == 1) {
        set_int_or_long (out, bl == 0 && xl != 0 ? 0 : 1, wide);
        return true;
    }
    if (bl == -1) {
        set_int_or_long (out, xl % 2 == 0 ? 1 : -1, wide);
        return true;
    }
    if (xl < 0 || xl > 63) {
        rm_xset_double (out, pow ((double) bl, (double) xl));
        return true;
    }
    for (int64_t i = 0; i < xl; i++) {
        if (__builtin_mul_overflow (r, bl, &r)) {
            rm_xset_double (out, pow ((double) bl, (double) xl));
            return true;
        }
    }
    set_int_or_long (out, r, wide);
    return true;
}

/* ---- $round, $trunc */

/* $round of a double x to place 0..15, straight, when the answer is the
 * slow path's: x * 10^place held exactly as hi + lo (fma), rounded half
 * to even, divided back (one correctly rounded division, as the slow
 * path's read of the decimal is). The slow path first rounds x to 34
 * digits, which never moves it onto or across a tie: x = m * 2^e (m <
 * 2^53, e < 0) lies at least 1 / (2 * 10^place * m) of itself, over
 * 5.5e-32, from any (n + 0.5) / 10^place it is not, the 34th digit moves
 * it 5e-34 at most, and the ties themselves have under 18 digits. False:
 * the slow path decides (a product of 2^51 or more, a zero result, whose
 * sign is the decimal's). */
static bool
round_double_fast (double x, int64_t place, double *out)
{
    static const double tens[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    double s, hi, lo, fl, t, n;

    if (place < 0 || place > 15)
        return false;
    s = tens[place];
    hi = x * s;
    if (!(fabs (hi) < 0x1p51))
        return false;
    lo = fma (x, s, -hi);
    fl = floor (hi);
    t = (hi - fl) - 0.5; /* exact: both are multiples of hi's last bit */
    n = fl;
    if (t > 0 || (t == 0 && (lo > 0 || (lo == 0 && fmod (fl, 2) != 0))))
        n = fl + 1;
    if (n == 0)
        return false;
    *out = n / s;
    return true;
}

static bool
eval_round_trunc (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    rm_xdec_round_t mode = e->op->name[1] == 'r' && e->op->name[2] == 'o' ? RM_XDEC_HALF_EVEN
                                                                          : RM_XDEC_DOWN;
    bson_value_t v, p;
    int64_t place = 0;
    bson_decimal128_t d;

    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    if (rm_xval_nullish (&v)) {
        rm_xset_null (out);
        return true;
    }
    if (!rm_xval_is_number (&v))
        return not_numeric (cx, e, &v, err);
    if (e->n > 1) {
        if (!rm_xeval (cx, e->args[1], &p, err))
            return false;
        if (rm_xval_nullish (&p)) {
            rm_xset_null (out);
            return true;
        }
        /* An integral number that fits an int32 (the server's integral()). */
        if (!rm_xval_is_number (&p) || !rm_xval_to_int64 (&p, &place) || place < INT32_MIN ||
            place > INT32_MAX)
            return rm_xfail (err, e, "the place must be an integral number, not %s %s",
                             rm_xval_type_name (&p), rm_xshow (cx, &p));
        if (place < -20 || place > 100)
            return rm_xfail (err, e, "the place %lld is outside [-20, 100]", (long long) place);
    }
    switch (v.value_type) {
    case BSON_TYPE_DECIMAL128:
        if (rm_xdec_is_inf (&v.value.v_decimal128)) {
            *out = v;
            return true;
        }
        out->value_type = BSON_TYPE_DECIMAL128;
        rm_xdec_quantize (&out->value.v_decimal128, &v.value.v_decimal128,
                          rm_xdec_place_exp (&v.value.v_decimal128, (int32_t) -place), mode);
        return true;
    case BSON_TYPE_DOUBLE:
        /* The double's value to 34 digits, rounded in decimal (so 2.675,
         * really 2.67499999..., rounds to 2.67), read back. */
        if (isinf (v.value.v_double) || isnan (v.value.v_double)) {
            *out = v;
            return true;
        }
        if (mode == RM_XDEC_HALF_EVEN && round_double_fast (v.value.v_double, place, &out->value.v_double)) {
            out->value_type = BSON_TYPE_DOUBLE;
            return true;
        }
        rm_xdec_from_double (&d, v.value.v_double, false);
        rm_xdec_quantize (&d, &d, rm_xdec_place_exp (&d, (int32_t) -place), mode);
        rm_xset_double (out, dec_to_double (&d));
        return true;
    default: {
        int64_t r;
        if (place >= 0) {
            *out = v;
            return true;
        }
        rm_xdec_from_int64 (&d, as_long (&v));
        rm_xdec_quantize (&d, &d, (int32_t) -place, mode);
        if (!rm_xdec_to_int64 (&d, &r))
            return rm_xfail (err, e, "the result of %s with place %lld does not fit a long",
                             rm_xshow (cx, &v), (long long) place);
        set_int_or_long (out, r, v.value_type == BSON_TYPE_INT64);
        return true;
    }
    }
}

/* ---- trigonometry */

typedef struct {
    const char *name;
    double (*fn) (double);
    long double (*lfn) (long double);
    double lo, hi;     /* the domain; infinite: unbounded on that side */
    bool open;         /* the bounds excluded (only the infinite ones are) */
} trig_t;

static const trig_t trigs[] = {
    {"$sin", sin, sinl, -INFINITY, INFINITY, true},
    {"$cos", cos, cosl, -INFINITY, INFINITY, true},
    {"$tan", tan, tanl, -INFINITY, INFINITY, true},
    {"$asin", asin, asinl, -1, 1, false},
    {"$acos", acos, acosl, -1, 1, false},
    {"$atanh", atanh, atanhl, -1, 1, false},
    {"$acosh", acosh, acoshl, 1, INFINITY, false},
    {"$atan", atan, atanl, 0, 0, false},
    {"$asinh", asinh, asinhl, 0, 0, false},
    {"$sinh", sinh, sinhl, 0, 0, false},
    {"$cosh", cosh, coshl, 0, 0, false},
    {"$tanh", tanh, tanhl, 0, 0, false},
    {NULL, NULL, NULL, 0, 0, false},
};

static const trig_t *
trig_of (const char *name)
{
    for (const trig_t *t = trigs; t->name; t++)
        if (!strcmp (t->name, name))
            return t;
    return NULL;
}

/* Whether x lies in t's domain (the unbounded ones take anything). */
static bool
trig_in (const trig_t *t, double x)
{
    if (t->lo == 0 && t->hi == 0)
        return true;
    if (t->open)
        return x > t->lo && x < t->hi;
    return x >= t->lo && x <= t->hi;
}

static bool
eval_trig (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    const trig_t *t = trig_of (e->op->name);
    bson_value_t v;
    bool ok;
    double x;

    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    if (v.value_type == BSON_TYPE_DECIMAL128) {
        const bson_decimal128_t *a = &v.value.v_decimal128;
        if (rm_xdec_is_nan (a)) {
            *out = v;
            return true;
        }
        if (!(t->lo == 0 && t->hi == 0)) {
            bson_decimal128_t lo, hi;
            bool in;
            if (t->open) {
                in = !rm_xdec_is_inf (a);
            } else {
                rm_xdec_from_int64 (&lo, (int64_t) t->lo);
                in = rm_xdec_cmp (a, &lo) >= 0 && rm_xdec_cmp (a, &lo) != 2;
                if (in && isfinite (t->hi)) {
                    rm_xdec_from_int64 (&hi, (int64_t) t->hi);
                    in = rm_xdec_cmp (a, &hi) <= 0;
                }
            }
            if (!in)
                goto out_of_domain;
        }
        out->value_type = BSON_TYPE_DECIMAL128;
        dec_via_ld (a, t->lfn, &out->value.v_decimal128);
        return true;
    }
    x = as_double (&v);
    if (isnan (x)) {
        *out = v;
        return true;
    }
    if (!trig_in (t, x))
        goto out_of_domain;
    rm_xset_double (out, t->fn (x));
    return true;
out_of_domain:
    if (t->open)
        return rm_xfail (err, e, "cannot apply it to %s, the value must be in (-Infinity,Infinity)",
                         rm_xshow (cx, &v));
    if (isinf (t->hi))
        return rm_xfail (err, e, "cannot apply it to %s, the value must be in [%g,Infinity)",
                         rm_xshow (cx, &v), t->lo);
    return rm_xfail (err, e, "cannot apply it to %s, the value must be in [%g,%g]", rm_xshow (cx, &v),
                     t->lo, t->hi);
}

static bool
eval_atan2 (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    for (int i = 0; i < 2; i++) {
        if (!rm_xeval (cx, e->args[i], &v[i], err))
            return false;
        if (rm_xval_nullish (&v[i])) {
            rm_xset_null (out);
            return true;
        }
        if (!rm_xval_is_number (&v[i]))
            return not_numeric (cx, e, &v[i], err);
    }
    if (v[0].value_type == BSON_TYPE_DECIMAL128 || v[1].value_type == BSON_TYPE_DECIMAL128) {
        bson_decimal128_t y, x;
        as_dec (&v[0], &y);
        as_dec (&v[1], &x);
        out->value_type = BSON_TYPE_DECIMAL128;
        ld_to_dec (atan2l (dec_to_ld (&y), dec_to_ld (&x)), &out->value.v_decimal128);
        return true;
    }
    rm_xset_double (out, atan2 (as_double (&v[0]), as_double (&v[1])));
    return true;
}

/* $degreesToRadians and $radiansToDegrees: by pi/180 or 180/pi, with pi
 * to 34 digits for a decimal. */
static bool
eval_degrees (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bool to_rad = e->op->name[1] == 'd';
    const double pi = 3.141592653589793;
    bson_value_t v;
    bool ok;
    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    if (v.value_type == BSON_TYPE_DECIMAL128) {
        bson_decimal128_t dpi, d180, f;
        bson_decimal128_from_string ("3.141592653589793238462643383279503", &dpi);
        rm_xdec_from_int64 (&d180, 180);
        if (to_rad)
            rm_xdec_div (&f, &dpi, &d180);
        else
            rm_xdec_div (&f, &d180, &dpi);
        out->value_type = BSON_TYPE_DECIMAL128;
        rm_xdec_mul (&out->value.v_decimal128, &v.value.v_decimal128, &f);
        return true;
    }
    rm_xset_double (out, as_double (&v) * (to_rad ? pi / 180.0 : 180.0 / pi));
    return true;
}

/* ---- bitwise */

static bool
eval_bit_not (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    bool ok;
    if (!one_number (cx, e, &v, out, err, &ok))
        return ok;
    if (v.value_type == BSON_TYPE_INT32)
        rm_xset_int32 (out, ~v.value.v_int32);
    else if (v.value_type == BSON_TYPE_INT64)
        rm_xset_int64 (out, ~v.value.v_int64);
    else
        return rm_xfail (err, e, "only supports int and long, not %s %s", rm_xval_type_name (&v),
                         rm_xshow (cx, &v));
    return true;
}

static bool
eval_bitwise (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    char kind = e->op->name[4]; /* $bitAnd, $bitOr, $bitXor */
    int64_t r = kind == 'A' ? -1 : 0;
    bool wide = false;

    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        if (!rm_xeval (cx, e->args[i], &v, err))
            return false;
        if (rm_xval_nullish (&v)) {
            rm_xset_null (out);
            return true;
        }
        if (v.value_type != BSON_TYPE_INT32 && v.value_type != BSON_TYPE_INT64)
            return rm_xfail (err, e, "only supports int and long operands, not %s %s",
                             rm_xval_type_name (&v), rm_xshow (cx, &v));
        wide |= v.value_type == BSON_TYPE_INT64;
        if (kind == 'A')
            r &= as_long (&v);
        else if (kind == 'O')
            r |= as_long (&v);
        else
            r ^= as_long (&v);
    }
    if (wide)
        rm_xset_int64 (out, r);
    else
        rm_xset_int32 (out, (int32_t) r);
    return true;
}

/* ---- $sum, $avg, $stdDevPop, $stdDevSamp, $min, $max */

typedef struct {
    widest_t w;
    rm_xdd_t dd;
    bson_decimal128_t dec; /* the decimals' own total, from 0 (exponent 0) */
    int64_t count;         /* the numbers seen */
    double mean, m2;       /* $stdDev*: Welford's running mean and squares */
    bool has_best;
    bson_value_t best;     /* $min, $max */
} acc_t;

static void
acc_number (acc_t *a, const bson_value_t *v)
{
    double x;
    if (width_of (v) > a->w)
        a->w = width_of (v);
    switch (v->value_type) {
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
        rm_xdd_add_int64 (&a->dd, as_long (v));
        break;
    case BSON_TYPE_DOUBLE:
        rm_xdd_add (&a->dd, v->value.v_double);
        break;
    default:
        rm_xdec_add (&a->dec, &a->dec, &v->value.v_decimal128);
        break;
    }
    a->count++;
    x = as_double (v);
    {
        double delta = x - a->mean;
        if (delta != 0.0) {
            a->mean += delta / (double) a->count;
            a->m2 += delta * (x - a->mean);
        }
    }
}

static void
acc_one (rm_expr_ctx_t *cx, acc_t *a, const bson_value_t *v, int sense)
{
    if (sense) {
        if (rm_xval_nullish (v))
            return;
        if (!a->has_best || rm_xval_compare (cx, &a->best, v) * sense > 0) {
            a->best = *v;
            a->has_best = true;
        }
        return;
    }
    if (rm_xval_is_number (v))
        acc_number (a, v);
}

static bool
eval_accum (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    const char *n = e->op->name;
    int sense = !strcmp (n, "$min") ? 1 : !strcmp (n, "$max") ? -1 : 0;
    acc_t a;
    bson_value_t v;

    memset (&a, 0, sizeof a);
    a.w = W_INT;
    rm_xdec_from_int64 (&a.dec, 0);
    if (e->n == 1) {
        /* One argument: an array's elements, or the value itself. */
        if (!rm_xeval (cx, e->args[0], &v, err))
            return false;
        if (v.value_type == BSON_TYPE_ARRAY) {
            bson_iter_t it;
            rm_xval_iter (&v, &it);
            while (bson_iter_next (&it)) {
                bson_value_t x = *bson_iter_value (&it);
                acc_one (cx, &a, &x, sense);
            }
        } else {
            acc_one (cx, &a, &v, sense);
        }
    } else {
        for (size_t i = 0; i < e->n; i++) {
            if (!rm_xeval (cx, e->args[i], &v, err))
                return false;
            acc_one (cx, &a, &v, sense);
        }
    }
    if (sense) {
        if (a.has_best)
            *out = a.best;
        else
            rm_xset_null (out);
        return true;
    }
    if (!strcmp (n, "$sum")) {
        if (a.w == W_DEC) {
            bson_decimal128_t d;
            rm_xdd_decimal (&a.dd, &d);
            out->value_type = BSON_TYPE_DECIMAL128;
            rm_xdec_add (&out->value.v_decimal128, &a.dec, &d);
        } else if (a.w != W_DOUBLE && rm_xdd_fits_int64 (&a.dd)) {
            set_int_or_long (out, rm_xdd_int64 (&a.dd), a.w == W_LONG);
        } else {
            rm_xset_double (out, rm_xdd_double (&a.dd));
        }
        return true;
    }
    if (!strcmp (n, "$avg")) {
        if (a.count == 0) {
            rm_xset_null (out);
        } else if (a.w == W_DEC) {
            bson_decimal128_t d, c;
            rm_xdd_decimal (&a.dd, &d);
            rm_xdec_add (&d, &a.dec, &d);
            rm_xdec_from_int64 (&c, a.count);
            out->value_type = BSON_TYPE_DECIMAL128;
            rm_xdec_div (&out->value.v_decimal128, &d, &c);
        } else {
            rm_xset_double (out, rm_xdd_double (&a.dd) / (double) a.count);
        }
        return true;
    }
    /* $stdDevPop, $stdDevSamp: undefined (null) without enough numbers. */
    {
        int64_t k = n[7] == 'S' ? a.count - 1 : a.count;
        if (k <= 0)
            rm_xset_null (out);
        else
            rm_xset_double (out, sqrt (a.m2 / (double) k));
    }
    return true;
}

const rm_xop_t rm_xops_arith[] = {
    {"$add", eval_add, 0, -1, {NULL}, NULL, NULL},
    {"$subtract", eval_subtract, 2, 2, {NULL}, NULL, NULL},
    {"$multiply", eval_multiply, 0, -1, {NULL}, NULL, NULL},
    {"$divide", eval_divide, 2, 2, {NULL}, NULL, NULL},
    {"$mod", eval_mod, 2, 2, {NULL}, NULL, NULL},
    {"$abs", eval_abs, 1, 1, {NULL}, NULL, NULL},
    {"$ceil", eval_ceil_floor, 1, 1, {NULL}, NULL, NULL},
    {"$floor", eval_ceil_floor, 1, 1, {NULL}, NULL, NULL},
    {"$round", eval_round_trunc, 1, 2, {NULL}, NULL, NULL},
    {"$trunc", eval_round_trunc, 1, 2, {NULL}, NULL, NULL},
    {"$exp", eval_exp, 1, 1, {NULL}, NULL, NULL},
    {"$ln", eval_ln_log10, 1, 1, {NULL}, NULL, NULL},
    {"$log10", eval_ln_log10, 1, 1, {NULL}, NULL, NULL},
    {"$log", eval_log, 2, 2, {NULL}, NULL, NULL},
    {"$pow", eval_pow, 2, 2, {NULL}, NULL, NULL},
    {"$sqrt", eval_sqrt, 1, 1, {NULL}, NULL, NULL},
    {"$sin", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$cos", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$tan", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$asin", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$acos", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$atan", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$atan2", eval_atan2, 2, 2, {NULL}, NULL, NULL},
    {"$sinh", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$cosh", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$tanh", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$asinh", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$acosh", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$atanh", eval_trig, 1, 1, {NULL}, NULL, NULL},
    {"$degreesToRadians", eval_degrees, 1, 1, {NULL}, NULL, NULL},
    {"$radiansToDegrees", eval_degrees, 1, 1, {NULL}, NULL, NULL},
    {"$bitAnd", eval_bitwise, 0, -1, {NULL}, NULL, NULL},
    {"$bitOr", eval_bitwise, 0, -1, {NULL}, NULL, NULL},
    {"$bitXor", eval_bitwise, 0, -1, {NULL}, NULL, NULL},
    {"$bitNot", eval_bit_not, 1, 1, {NULL}, NULL, NULL},
    {"$sum", eval_accum, 0, -1, {NULL}, NULL, NULL},
    {"$avg", eval_accum, 0, -1, {NULL}, NULL, NULL},
    {"$min", eval_accum, 0, -1, {NULL}, NULL, NULL},
    {"$max", eval_accum, 0, -1, {NULL}, NULL, NULL},
    {"$stdDevPop", eval_accum, 0, -1, {NULL}, NULL, NULL},
    {"$stdDevSamp", eval_accum, 0, -1, {NULL}, NULL, NULL},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
