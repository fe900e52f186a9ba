/* The date operators: parts of a date ($year ... $millisecond, $week, the
 * ISO ones), $dateToParts and $dateFromParts, $dateToString and
 * $dateFromString, the arithmetic ($dateAdd, $dateSubtract, $dateDiff)
 * and $dateTrunc, each in a timezone (UTC by default, an Olson name or an
 * offset: expr_tz.h), and rm_xdate_iso, the form $toString writes.
 *
 * The order in which each operator evaluates its arguments and answers
 * null follows the server's (src/mongo/db/exec/expression/ for 8.0):
 * which of a null argument and a bad one wins is visible to users. A
 * constant timezone, unit or format is checked and resolved once, when
 * parsed. Dates are int64 milliseconds; every operation that can leave
 * that range says so, as the server's "dateAdd overflowed" does. */
#include <stdlib.h>
#include <string.h>

#include "expr_tz.h"

/* The operators, in the order of the table at the end (e->op -
 * rm_xops_date). */
enum {
    OP_YEAR, OP_MONTH, OP_DAY_OF_MONTH, OP_DAY_OF_WEEK, OP_DAY_OF_YEAR, OP_WEEK, OP_ISO_WEEK,
    OP_ISO_WEEK_YEAR, OP_ISO_DAY_OF_WEEK, OP_HOUR, OP_MINUTE, OP_SECOND, OP_MILLISECOND,
};

static const char *const unit_names[] = {"year", "quarter", "month", "week", "day",
                                         "hour", "minute", "second", "millisecond"};

#define MS_PER_DAY INT64_C (86400000)

/* What a check resolved once: the arguments that were constants. */
typedef struct {
    int tz_arg, unit_arg, sow_arg; /* their indexes, -1: none */
    bool tz_const, unit_const, sow_const;
    rm_tz_t tz;
    int unit;
    int sow; /* 1 Monday .. 7 Sunday */
} ddata_t;

static const ddata_t *
dd (const rm_expr_t *e)
{
    return e->data;
}

/* ---- Arguments ---- */

static const char *
type_name (const bson_value_t *v)
{
    return rm_xval_type_name (v);
}

static bool
tz_lookup (const bson_value_t *v, rm_tz_t *tz)
{
    return rm_tz_find (v->value.v_utf8.str, v->value.v_utf8.len, tz);
}

/* The timezone argument: 1 resolved, 0 null (the answer is null), -1 an
 * error. Absent: UTC. */
static int
eval_tz (rm_expr_ctx_t *cx, const rm_expr_t *e, rm_tz_t *tz, bson_error_t *err)
{
    const ddata_t *d = dd (e);
    bson_value_t v;
    if (d->tz_arg < 0 || !e->args[d->tz_arg]) {
        rm_tz_utc (tz);
        return 1;
    }
    if (d->tz_const) {
        *tz = d->tz;
        return 1;
    }
    if (!rm_xeval (cx, e->args[d->tz_arg], &v, err))
        return -1;
    if (rm_xval_nullish (&v))
        return 0;
    if (v.value_type != BSON_TYPE_UTF8) {
        rm_xfail (err, e, "timezone must evaluate to a string, found %s", type_name (&v));
        return -1;
    }
    if (!tz_lookup (&v, tz)) {
        rm_xfail (err, e, "unrecognized time zone identifier: %s", rm_xshow (cx, &v));
        return -1;
    }
    return 1;
}

int
rm_dt_unit (const char *s, size_t len)
{
    for (int u = 0; u <= RM_DT_MILLISECOND; u++)
        if (strlen (unit_names[u]) == len && !memcmp (unit_names[u], s, len))
            return u;
    return -1;
}

/* The unit argument: as eval_tz. */
static int
eval_unit (rm_expr_ctx_t *cx, const rm_expr_t *e, int *unit, bson_error_t *err)
{
    const ddata_t *d = dd (e);
    bson_value_t v;
    if (d->unit_const) {
        *unit = d->unit;
        return 1;
    }
    if (!rm_xeval (cx, e->args[d->unit_arg], &v, err))
        return -1;
    if (rm_xval_nullish (&v))
        return 0;
    if (v.value_type != BSON_TYPE_UTF8) {
        rm_xfail (err, e, "requires 'unit' to be a string, but got %s", type_name (&v));
        return -1;
    }
    if ((*unit = rm_dt_unit (v.value.v_utf8.str, v.value.v_utf8.len)) < 0) {
        rm_xfail (err, e, "parameter 'unit' value parsing failed: unknown time unit value: %s",
                  rm_xshow (cx, &v));
        return -1;
    }
    return 1;
}

const char *
rm_dt_unit_name (int unit)
{
    return unit >= RM_DT_YEAR && unit <= RM_DT_MILLISECOND ? unit_names[unit] : "?";
}

int
rm_dt_day_of_week (const char *s, size_t len)
{
    static const char *const names[] = {"monday", "tuesday", "wednesday", "thursday",
                                        "friday", "saturday", "sunday"};
    for (int i = 0; i < 7; i++) {
        size_t n = strlen (names[i]);
        if (len != n && len != 3)
            continue;
        size_t j = 0;
        while (j < len && (s[j] | 0x20) == names[i][j])
            j++;
        if (j == len)
            return i + 1;
    }
    return -1;
}

/* startOfWeek, read only for the unit week (Sunday when absent). */
static int
eval_sow (rm_expr_ctx_t *cx, const rm_expr_t *e, int *sow, bson_error_t *err)
{
    const ddata_t *d = dd (e);
    bson_value_t v;
    *sow = 7;
    if (!e->args[d->sow_arg])
        return 1;
    if (d->sow_const) {
        *sow = d->sow;
        return 1;
    }
    if (!rm_xeval (cx, e->args[d->sow_arg], &v, err))
        return -1;
    if (rm_xval_nullish (&v))
        return 0;
    if (v.value_type != BSON_TYPE_UTF8) {
        rm_xfail (err, e, "requires 'startOfWeek' to be a string, but got %s", type_name (&v));
        return -1;
    }
    if ((*sow = rm_dt_day_of_week (v.value.v_utf8.str, v.value.v_utf8.len)) < 0) {
        rm_xfail (err, e, "parameter 'startOfWeek' value cannot be recognized as a day of a week: %s",
                  rm_xshow (cx, &v));
        return -1;
    }
    return 1;
}

/* A date, a Timestamp (its seconds) or an ObjectId (its time), as the
 * server's coerceToDate takes them. */
static bool
date_of (const bson_value_t *v, int64_t *ms)
{
    switch (v->value_type) {
    case BSON_TYPE_DATE_TIME:
        *ms = v->value.v_datetime;
        return true;
    case BSON_TYPE_TIMESTAMP:
        *ms = (int64_t) v->value.v_timestamp.timestamp * 1000;
        return true;
    case BSON_TYPE_OID: {
        const uint8_t *b = v->value.v_oid.bytes;
        *ms = (int64_t) ((uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3]) * 1000;
        return true;
    }
    default:
        return false;
    }
}

static bool
coerce_date (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, int64_t *ms,
             bson_error_t *err)
{
    if (date_of (v, ms))
        return true;
    return rm_xfail (err, e, "can't convert from BSON type %s to Date: %s", type_name (v),
                     rm_xshow (cx, v));
}

/* ---- Local time ---- */

typedef struct {
    int64_t days;   /* local day number */
    int64_t y;
    int m, d, h, mi, s, ms;
    int32_t off;    /* the offset in force, seconds */
} lt_t;

static void
local_time (const rm_tz_t *tz, int64_t ms, lt_t *t)
{
    /* Floor division without ms - secs * 1000, which overflows at the
     * ends of the range (a date of -2^63 ms is a valid BSON date). */
    int64_t rem = ms % 1000, secs = ms / 1000 - (rem < 0), local, sod;
    t->ms = (int) (rem < 0 ? rem + 1000 : rem);
    t->off = rm_tz_offset (tz, secs);
    local = secs + t->off;
    t->days = rm_cal_fdiv (local, 86400);
    sod = local - t->days * 86400;
    t->h = (int) (sod / 3600);
    t->mi = (int) (sod / 60 % 60);
    t->s = (int) (sod % 60);
    rm_cal_civil (t->days, &t->y, &t->m, &t->d);
}

/* The instant of a local time in tz (days, seconds of the day, ms). */
static int64_t
utc_of (const rm_tz_t *tz, int64_t local_secs, int64_t ms)
{
    return rm_tz_to_utc (tz, local_secs) * 1000 + ms;
}

static int
day_of_year (const lt_t *t)
{
    return (int) (t->days - rm_cal_days (t->y, 1, 1)) + 1;
}

/* 1 Sunday .. 7 Saturday */
static int
day_of_week (const lt_t *t)
{
    return rm_cal_iso_dow (t->days) % 7 + 1;
}

/* The week of the year, 0 before the first Sunday. */
static int
week_of (const lt_t *t)
{
    return (day_of_year (t) - day_of_week (t) + 7) / 7;
}

/* ---- $year ... $millisecond ---- */

/* {$year: date}, {$year: [date]} or {$year: {date, timezone}}. */
static bool
parse_date_part (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    bson_iter_t sub;
    rm_xnode_args (e, 2);
    if (BSON_ITER_HOLDS_DOCUMENT (arg)) {
        bson_iter_recurse (arg, &sub);
        /* {} too: the server reads an empty document as named arguments */
        if (!bson_iter_next (&sub) || bson_iter_key (&sub)[0] != '$') {
            bson_iter_recurse (arg, &sub);
            while (bson_iter_next (&sub)) {
                const char *k = bson_iter_key (&sub);
                int i = !strcmp (k, "date") ? 0 : !strcmp (k, "timezone") ? 1 : -1;
                if (i < 0)
                    return rm_xparse_fail (err, e, "unrecognized option to %s: \"%s\"", e->op->name, k);
                if (e->args[i])
                    return rm_xparse_fail (err, e, "argument '%s' given twice", k);
                if (!rm_xparse_expr (p, &sub, &e->args[i], err))
                    return false;
            }
            if (!e->args[0])
                return rm_xparse_fail (err, e, "missing 'date' argument to %s", e->op->name);
            return true;
        }
    }
    if (BSON_ITER_HOLDS_ARRAY (arg)) {
        size_t n = 0;
        bson_iter_recurse (arg, &sub);
        while (bson_iter_next (&sub))
            n++;
        if (n != 1)
            return rm_xparse_fail (err, e, "takes exactly 1 argument, %zu given", n);
        bson_iter_recurse (arg, &sub);
        bson_iter_next (&sub);
        return rm_xparse_expr (p, &sub, &e->args[0], err);
    }
    return rm_xparse_expr (p, arg, &e->args[0], err);
}

static bool
eval_date_part (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    rm_tz_t tz;
    int64_t ms, iy;
    int r, w;
    lt_t t;

    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    if (rm_xval_nullish (&v)) {
        rm_xset_null (out);
        return true;
    }
    if (!coerce_date (cx, e, &v, &ms, err))
        return false;
    if ((r = eval_tz (cx, e, &tz, err)) <= 0) {
        rm_xset_null (out);
        return r == 0;
    }
    local_time (&tz, ms, &t);
    switch (e->op - rm_xops_date) {
    case OP_YEAR:
        rm_xset_int32 (out, (int32_t) t.y);
        break;
    case OP_MONTH:
        rm_xset_int32 (out, t.m);
        break;
    case OP_DAY_OF_MONTH:
        rm_xset_int32 (out, t.d);
        break;
    case OP_DAY_OF_WEEK:
        rm_xset_int32 (out, day_of_week (&t));
        break;
    case OP_DAY_OF_YEAR:
        rm_xset_int32 (out, day_of_year (&t));
        break;
    case OP_WEEK:
        rm_xset_int32 (out, week_of (&t));
        break;
    case OP_ISO_WEEK:
        rm_cal_iso_week (t.days, &iy, &w);
        rm_xset_int32 (out, w);
        break;
    case OP_ISO_WEEK_YEAR:
        /* a long, as the server's isoYear is */
        rm_cal_iso_week (t.days, &iy, &w);
        rm_xset_int64 (out, iy);
        break;
    case OP_ISO_DAY_OF_WEEK:
        rm_xset_int32 (out, rm_cal_iso_dow (t.days));
        break;
    case OP_HOUR:
        rm_xset_int32 (out, t.h);
        break;
    case OP_MINUTE:
        rm_xset_int32 (out, t.mi);
        break;
    case OP_SECOND:
        rm_xset_int32 (out, t.s);
        break;
    default:
        rm_xset_int32 (out, t.ms);
        break;
    }
    return true;
}

/* ---- Checks: constants resolved once ---- */

static bool
is_const (const rm_expr_t *a)
{
    return a && a->kind == RM_X_CONST;
}

static bool
check_args (rm_xparse_t *p, rm_expr_t *e, int tz_arg, int unit_arg, int sow_arg, bson_error_t *err)
{
    ddata_t *d = bson_malloc0 (sizeof *d);
    e->data = d;
    e->data_free = bson_free;
    d->tz_arg = tz_arg;
    d->unit_arg = unit_arg;
    d->sow_arg = sow_arg;
    if (tz_arg >= 0 && is_const (e->args[tz_arg])) {
        const bson_value_t *v = &e->args[tz_arg]->konst;
        if (v->value_type == BSON_TYPE_UTF8) {
            if (!tz_lookup (v, &d->tz))
                return rm_xparse_fail (err, e, "unrecognized time zone identifier: \"%s\"",
                                       v->value.v_utf8.str);
            d->tz_const = true;
        } else if (!rm_xval_nullish (v)) {
            return rm_xparse_fail (err, e, "timezone must evaluate to a string, found %s", type_name (v));
        }
    }
    if (unit_arg >= 0 && is_const (e->args[unit_arg])) {
        const bson_value_t *v = &e->args[unit_arg]->konst;
        if (v->value_type == BSON_TYPE_UTF8) {
            if ((d->unit = rm_dt_unit (v->value.v_utf8.str, v->value.v_utf8.len)) < 0)
                return rm_xparse_fail (err, e, "parameter 'unit' value parsing failed: unknown time "
                                       "unit value: %s", v->value.v_utf8.str);
            d->unit_const = true;
        } else if (!rm_xval_nullish (v)) {
            return rm_xparse_fail (err, e, "requires 'unit' to be a string, but got %s", type_name (v));
        }
    }
    /* A bad constant startOfWeek is an error only where the unit is week:
     * left to the evaluation. */
    if (sow_arg >= 0 && is_const (e->args[sow_arg])) {
        const bson_value_t *v = &e->args[sow_arg]->konst;
        if (v->value_type == BSON_TYPE_UTF8 &&
            (d->sow = rm_dt_day_of_week (v->value.v_utf8.str, v->value.v_utf8.len)) > 0)
            d->sow_const = true;
    }
    return true;
}

static bool
check_date_part (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    return check_args (p, e, 1, -1, -1, err);
}

/* ---- $dateToParts ---- */

static void
field_int (rm_xbuild_t *b, const char *k, int64_t i)
{
    bson_value_t v;
    rm_xset_int32 (&v, (int32_t) i);
    rm_xbuild_field (b, k, strlen (k), &v);
}

static bool
eval_to_parts (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v, iso;
    rm_tz_t tz;
    int64_t ms;
    int r;
    bool iso8601 = false;
    lt_t t;
    rm_xbuild_t b;

    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    if ((r = eval_tz (cx, e, &tz, err)) <= 0) {
        rm_xset_null (out);
        return r == 0;
    }
    if (e->args[2]) {
        if (!rm_xeval (cx, e->args[2], &iso, err))
            return false;
        if (rm_xval_nullish (&iso)) {
            rm_xset_null (out);
            return true;
        }
        if (iso.value_type != BSON_TYPE_BOOL)
            return rm_xfail (err, e, "iso8601 must evaluate to a bool, found %s", type_name (&iso));
        iso8601 = iso.value.v_bool;
    }
    if (rm_xval_nullish (&v)) {
        rm_xset_null (out);
        return true;
    }
    if (!coerce_date (cx, e, &v, &ms, err))
        return false;
    local_time (&tz, ms, &t);
    rm_xbuild_begin (cx, &b, false);
    if (iso8601) {
        int64_t iy;
        int w;
        rm_cal_iso_week (t.days, &iy, &w);
        field_int (&b, "isoWeekYear", iy);
        field_int (&b, "isoWeek", w);
        field_int (&b, "isoDayOfWeek", rm_cal_iso_dow (t.days));
    } else {
        field_int (&b, "year", t.y);
        field_int (&b, "month", t.m);
        field_int (&b, "day", t.d);
    }
    field_int (&b, "hour", t.h);
    field_int (&b, "minute", t.mi);
    field_int (&b, "second", t.s);
    field_int (&b, "millisecond", t.ms);
    rm_xbuild_end (&b, out);
    return true;
}

static bool
check_to_parts (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    return check_args (p, e, 1, -1, -1, err);
}

/* ---- $dateFromParts ---- */

enum { FP_YEAR, FP_MONTH, FP_DAY, FP_HOUR, FP_MINUTE, FP_SECOND, FP_MS, FP_ISO_YEAR, FP_ISO_WEEK,
       FP_ISO_DOW, FP_TZ, FP_N };
static const char *const fp_names[FP_N] = {"year",   "month",       "day",     "hour",
                                           "minute", "second",      "millisecond", "isoWeekYear",
                                           "isoWeek", "isoDayOfWeek", "timezone"};

static bool
parse_from_parts (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e, bson_error_t *err)
{
    bson_iter_t sub;
    rm_xnode_args (e, FP_N);
    if (!BSON_ITER_HOLDS_DOCUMENT (arg))
        return rm_xparse_fail (err, e, "expects a document of named arguments, not %s",
                               rm_value_type_name (bson_iter_type (arg)));
    bson_iter_recurse (arg, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        int i;
        for (i = 0; i < FP_N; i++)
            if (!strcmp (k, fp_names[i]))
                break;
        if (i == FP_N)
            return rm_xparse_fail (err, e, "Unrecognized argument to $dateFromParts: %s", k);
        if (e->args[i])
            return rm_xparse_fail (err, e, "argument '%s' given twice", k);
        if (!rm_xparse_expr (p, &sub, &e->args[i], err))
            return false;
    }
    bool natural = e->args[FP_YEAR] || e->args[FP_MONTH] || e->args[FP_DAY];
    bool iso = e->args[FP_ISO_YEAR] || e->args[FP_ISO_WEEK] || e->args[FP_ISO_DOW];
    if (natural && iso)
        return rm_xparse_fail (err, e, "$dateFromParts does not allow mixing natural dates with ISO dates");
    if (!e->args[FP_YEAR] && !e->args[FP_ISO_YEAR])
        return rm_xparse_fail (err, e, "$dateFromParts requires either 'year' or 'isoWeekYear' to be present");
    return check_args (p, e, FP_TZ, -1, -1, err);
}

/* A part: 1 read (dflt when absent), 0 null, -1 an error. bounded: the
 * server's limit of a 16-bit int on all but year, second and
 * millisecond. */
static int
eval_part (rm_expr_ctx_t *cx, const rm_expr_t *e, int i, int64_t dflt, bool bounded, int64_t *out,
           bson_error_t *err)
{
    bson_value_t v;
    if (!e->args[i]) {
        *out = dflt;
        return 1;
    }
    if (!rm_xeval (cx, e->args[i], &v, err))
        return -1;
    if (rm_xval_nullish (&v))
        return 0;
    if (!rm_xval_to_int64 (&v, out)) {
        rm_xfail (err, e, "'%s' must evaluate to an integer, found %s with value %s", fp_names[i],
                  type_name (&v), rm_xshow (cx, &v));
        return -1;
    }
    if (bounded && (*out < -32768 || *out > 32767)) {
        rm_xfail (err, e, "'%s' must evaluate to a value in the range [-32768, 32767]; value %lld is "
                  "not in range", fp_names[i], (long long) *out);
        return -1;
    }
    return 1;
}

static bool
eval_from_parts (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    int64_t h, mi, s, ms, y, a, b, days, secs, local_ms;
    int r;
    rm_tz_t tz;
    bool iso = e->args[FP_ISO_YEAR] != NULL;

    if ((r = eval_part (cx, e, FP_HOUR, 0, true, &h, err)) <= 0 ||
        (r = eval_part (cx, e, FP_MINUTE, 0, true, &mi, err)) <= 0 ||
        (r = eval_part (cx, e, FP_SECOND, 0, false, &s, err)) <= 0 ||
        (r = eval_part (cx, e, FP_MS, 0, false, &ms, err)) <= 0 || (r = eval_tz (cx, e, &tz, err)) <= 0 ||
        (r = eval_part (cx, e, iso ? FP_ISO_YEAR : FP_YEAR, 1970, false, &y, err)) <= 0 ||
        (r = eval_part (cx, e, iso ? FP_ISO_WEEK : FP_MONTH, 1, true, &a, err)) <= 0 ||
        (r = eval_part (cx, e, iso ? FP_ISO_DOW : FP_DAY, 1, true, &b, err)) <= 0) {
        rm_xset_null (out);
        return r == 0;
    }
    if (y < 1 || y > 9999)
        return rm_xfail (err, e, "'%s' must evaluate to an integer in the range 1 to 9999, found %lld",
                         iso ? "isoWeekYear" : "year", (long long) y);
    if (iso) {
        days = rm_cal_iso_days (y, a, b);
    } else {
        /* month 14 is February of the next year, day 0 the last of the
         * month before: carried as the server's timelib carries them */
        int64_t m0 = a - 1;
        days = rm_cal_days (y + rm_cal_fdiv (m0, 12), (int) rm_cal_fmod (m0, 12) + 1, 1) + b - 1;
    }
    /* second and millisecond are unbounded: carry them in int64, refusing
     * what cannot be a date */
    if (__builtin_mul_overflow (s, 1000, &s) || __builtin_add_overflow (s, ms, &ms) ||
        __builtin_add_overflow (ms, (days * 86400 + h * 3600 + mi * 60) * 1000, &local_ms))
        return rm_xfail (err, e, "the date is out of the range of a date");
    secs = rm_cal_fdiv (local_ms, 1000);
    rm_xset_date (out, utc_of (&tz, secs, local_ms - secs * 1000));
    return true;
}

/* ---- $dateToString ---- */

static const char to_specs[] = "bBdGHjLmMSuUVwYzZ";
static const char *const month_full[12] = {"January", "February", "March",     "April",
                                           "May",     "June",     "July",      "August",
                                           "September", "October", "November", "December"};

/* The 'format' of $dateToString and $dateFromString (e->args[1]), which
 * may hold only the specifiers in specs: evaluated into *f when given;
 * null or missing passes (the operator answers null). */
static bool
eval_format (rm_expr_ctx_t *cx, const rm_expr_t *e, const char *specs, bson_value_t *f, bson_error_t *err)
{
    char why[200];
    if (!e->args[1])
        return true;
    if (is_const (e->args[1])) {
        /* Checked once, when the plan was read (check_format). */
        *f = e->args[1]->konst;
        return true;
    }
    if (!rm_xeval (cx, e->args[1], f, err))
        return false;
    if (rm_xval_nullish (f))
        return true;
    if (f->value_type != BSON_TYPE_UTF8)
        return rm_xfail (err, e, "%s requires that 'format' be a string, found: %s with value %s", e->op->name,
                         type_name (f), rm_xshow (cx, f));
    if (!rm_xdate_format_ok (specs, f->value.v_utf8.str, f->value.v_utf8.len, why, sizeof why))
        return rm_xfail (err, e, "%s", why);
    return true;
}

/* The same, once, for a constant 'format'; then the arguments. */
static bool
check_format (rm_xparse_t *p, rm_expr_t *e, const char *specs, bson_error_t *err)
{
    char why[200];
    if (is_const (e->args[1])) {
        const bson_value_t *f = &e->args[1]->konst;
        if (f->value_type == BSON_TYPE_UTF8) {
            if (!rm_xdate_format_ok (specs, f->value.v_utf8.str, f->value.v_utf8.len, why, sizeof why))
                return rm_xparse_fail (err, e, "%s", why);
        } else if (!rm_xval_nullish (f)) {
            return rm_xparse_fail (err, e, "%s requires that 'format' be a string, found: %s", e->op->name,
                                   type_name (f));
        }
    }
    return check_args (p, e, 2, -1, -1, err);
}

/* v (0 to 9999) in decimal, zero-padded to width: sprintf's "%0*d" without
 * its cost, which was most of a $dateToString. */
static size_t
put_digits (char *to, int v, int width)
{
    char d[4];
    int n = 0;
    do {
        d[n++] = (char) ('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < width)
        d[n++] = '0';
    for (int i = 0; i < n; i++)
        to[i] = d[n - 1 - i];
    return (size_t) n;
}

static bool
format_date (rm_expr_ctx_t *cx, const rm_expr_t *e, const rm_tz_t *tz, int64_t ms, const char *f,
             size_t flen, bson_value_t *out, bson_error_t *err)
{
    lt_t t;
    char *buf = rm_xalloc (cx, flen * 12 + 16);
    size_t n = 0;
    int64_t iy, bad = 0;
    int w;
    bool ok = true;

    local_time (tz, ms, &t);
    /* The ISO week only for %G and %V: most formats have neither. */
    iy = w = 0;
    if (memchr (f, 'G', flen) || memchr (f, 'V', flen))
        rm_cal_iso_week (t.days, &iy, &w);
    for (size_t i = 0; i < flen && ok; i++) {
        if (f[i] != '%') {
            buf[n++] = f[i];
            continue;
        }
        char c = f[++i];
        int64_t v = -1;
        int width = 2;
        switch (c) {
        case '%':
            buf[n++] = '%';
            continue;
        case 'Y': v = t.y; width = 4; break;
        case 'G': v = iy; width = 4; break;
        case 'm': v = t.m; break;
        case 'd': v = t.d; break;
        case 'H': v = t.h; break;
        case 'M': v = t.mi; break;
        case 'S': v = t.s; break;
        case 'L': v = t.ms; width = 3; break;
        case 'j': v = day_of_year (&t); width = 3; break;
        case 'w': v = day_of_week (&t); width = 1; break;
        case 'u': v = rm_cal_iso_dow (t.days); width = 1; break;
        case 'U': v = week_of (&t); break;
        case 'V': v = w; break;
        case 'b':
            memcpy (buf + n, month_full[t.m - 1], 3);
            n += 3;
            continue;
        case 'B':
            n += (size_t) sprintf (buf + n, "%s", month_full[t.m - 1]);
            continue;
        case 'z':
            /* ±hhmm, the hours and minutes each truncated toward zero */
            n += (size_t) sprintf (buf + n, "%c%02d%02d", t.off < 0 ? '-' : '+', abs (t.off / 3600),
                                   abs (t.off / 60) % 60);
            continue;
        case 'Z':
            n += (size_t) sprintf (buf + n, "%d", t.off / 60);
            continue;
        }
        if (v < 0 || v > 9999) {
            bad = v;
            ok = false;
            break;
        }
        n += put_digits (buf + n, (int) v, width);
    }
    if (!ok)
        return rm_xfail (err, e, "Could not convert date to string: date component was outside the "
                         "supported range of 0-9999: %lld", (long long) bad);
    /* The value is buf itself (it has room for the NUL): no second copy. */
    rm_xset_string_in (out, buf, n);
    return true;
}

static bool
eval_to_string (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v, f;
    rm_tz_t tz;
    int64_t ms;
    int r;

    if (!rm_xeval (cx, e->args[0], &v, err) || !eval_format (cx, e, to_specs, &f, err))
        return false;
    if ((r = eval_tz (cx, e, &tz, err)) < 0)
        return false;
    if (rm_xval_nullish (&v)) {
        if (e->args[3])
            return rm_xeval (cx, e->args[3], out, err);
        rm_xset_null (out);
        return true;
    }
    if (r == 0 || (e->args[1] && rm_xval_nullish (&f))) {
        rm_xset_null (out);
        return true;
    }
    if (!coerce_date (cx, e, &v, &ms, err))
        return false;
    if (e->args[1])
        return format_date (cx, e, &tz, ms, f.value.v_utf8.str, f.value.v_utf8.len, out, err);
    /* No format: ISO, with the Z only in UTC. */
    return tz.utc ? format_date (cx, e, &tz, ms, "%Y-%m-%dT%H:%M:%S.%LZ", 21, out, err)
                  : format_date (cx, e, &tz, ms, "%Y-%m-%dT%H:%M:%S.%L", 20, out, err);
}

static bool
check_to_string (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    return check_format (p, e, to_specs, err);
}

/* ---- $dateFromString ---- */

static bool
eval_from_string (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t s, f;
    rm_tz_t tz;
    int64_t ms;
    int r;
    bool conversion;

    if (!rm_xeval (cx, e->args[0], &s, err) || !eval_format (cx, e, rm_xdate_from_specs, &f, err))
        return false;
    if ((r = eval_tz (cx, e, &tz, err)) < 0)
        return false;
    if (rm_xval_nullish (&s)) {
        if (e->args[4])
            return rm_xeval (cx, e->args[4], out, err);
        rm_xset_null (out);
        return true;
    }
    if (s.value_type != BSON_TYPE_UTF8) {
        if (e->args[3])
            return rm_xeval (cx, e->args[3], out, err);
        return rm_xfail (err, e, "$dateFromString requires that 'dateString' be a string, found: %s "
                         "with value %s", type_name (&s), rm_xshow (cx, &s));
    }
    if (r == 0 || (e->args[1] && rm_xval_nullish (&f))) {
        rm_xset_null (out);
        return true;
    }
    if (!rm_xdate_parse_in (cx, e, s.value.v_utf8.str, s.value.v_utf8.len, &tz,
                            e->args[1] ? f.value.v_utf8.str : NULL, e->args[1] ? f.value.v_utf8.len : 0,
                            &ms, &conversion, err)) {
        if (conversion && e->args[3])
            return rm_xeval (cx, e->args[3], out, err);
        return false;
    }
    rm_xset_date (out, ms);
    return true;
}

static bool
check_from_string (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    return check_format (p, e, rm_xdate_from_specs, err);
}

/* ---- $dateAdd, $dateSubtract ---- */

/* The server's bounds on amount, so that the arithmetic cannot
 * overflow before the result is checked. */
static bool
amount_ok (int unit, int64_t amount)
{
    const int64_t max_days = INT64_C (213503982335); /* 2^64 ms in days, + 1 */
    int64_t max;
    switch (unit) {
    case RM_DT_YEAR: max = max_days / 365 + 1; break;
    case RM_DT_QUARTER: max = (max_days / 365 + 1) * 4; break;
    case RM_DT_MONTH: max = (max_days / 365 + 1) * 12; break;
    case RM_DT_WEEK: max = max_days / 7; break;
    case RM_DT_DAY: max = max_days; break;
    case RM_DT_HOUR: max = max_days * 24; break;
    case RM_DT_MINUTE: max = max_days * 24 * 60; break;
    default: max = max_days * 24 * 60 * 60; break;
    }
    return -max < amount && amount < max;
}

static const int64_t unit_ms[] = {0, 0, 0, 7 * MS_PER_DAY, MS_PER_DAY, 3600000, 60000, 1000, 1};

/* date + amount units in tz: units of a day and more in local time
 * (keeping the time of day across daylight changes), the month ones
 * clamped to the month's last day; smaller units in absolute time. */
static bool
date_add (const rm_expr_t *e, int64_t date, int unit, int64_t amount, const rm_tz_t *tz, int64_t *res,
          bson_error_t *err)
{
    lt_t t;
    int64_t days, prod;

    if (unit == RM_DT_MILLISECOND) {
        if (__builtin_add_overflow (date, amount, res))
            return rm_xfail (err, e, "dateAdd overflowed");
        return true;
    }
    if (!amount_ok (unit, amount))
        return rm_xfail (err, e, "invalid dateAdd 'amount' parameter value: %lld %s", (long long) amount,
                         unit_names[unit]);
    if (unit >= RM_DT_HOUR) {
        if (__builtin_mul_overflow (amount, unit_ms[unit], &prod) || __builtin_add_overflow (date, prod, res))
            return rm_xfail (err, e, "dateAdd overflowed");
        return true;
    }
    local_time (tz, date, &t);
    if (unit == RM_DT_DAY || unit == RM_DT_WEEK) {
        days = t.days + amount * (unit == RM_DT_WEEK ? 7 : 1);
    } else {
        int64_t months = amount * (unit == RM_DT_YEAR ? 12 : unit == RM_DT_QUARTER ? 3 : 1);
        int64_t m0 = t.m - 1 + months;
        int64_t y = t.y + rm_cal_fdiv (m0, 12);
        int m = (int) rm_cal_fmod (m0, 12) + 1;
        int d = t.d < rm_cal_month_days (y, m) ? t.d : rm_cal_month_days (y, m);
        days = rm_cal_days (y, m, d);
    }
    int64_t local = days * 86400 + t.h * 3600 + t.mi * 60 + t.s;
    int64_t secs = rm_tz_to_utc (tz, local);
    if (__builtin_mul_overflow (secs, 1000, &prod) || __builtin_add_overflow (prod, t.ms, res))
        return rm_xfail (err, e, "dateAdd overflowed");
    return true;
}

static bool
eval_add (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t sd, am;
    rm_tz_t tz;
    int unit, r;
    int64_t date, amount, res;
    bool sub = !strcmp (e->op->name, "$dateSubtract");

    if (!rm_xeval (cx, e->args[0], &sd, err))
        return false;
    if (rm_xval_nullish (&sd)) {
        rm_xset_null (out);
        return true;
    }
    if ((r = eval_unit (cx, e, &unit, err)) <= 0) {
        rm_xset_null (out);
        return r == 0;
    }
    if (!rm_xeval (cx, e->args[2], &am, err))
        return false;
    if (rm_xval_nullish (&am)) {
        rm_xset_null (out);
        return true;
    }
    if ((r = eval_tz (cx, e, &tz, err)) <= 0) {
        rm_xset_null (out);
        return r == 0;
    }
    if (!date_of (&sd, &date))
        return rm_xfail (err, e, "%s requires startDate to be convertible to a date, found %s %s",
                         e->op->name, type_name (&sd), rm_xshow (cx, &sd));
    if (!rm_xval_to_int64 (&am, &amount))
        return rm_xfail (err, e, "%s expects integer amount of time units, found %s %s", e->op->name,
                         type_name (&am), rm_xshow (cx, &am));
    if (sub) {
        if (amount == INT64_MIN)
            return rm_xfail (err, e, "invalid $dateSubtract 'amount' parameter value: %lld",
                             (long long) amount);
        amount = -amount;
    }
    if (!date_add (e, date, unit, amount, &tz, &res, err))
        return false;
    rm_xset_date (out, res);
    return true;
}

static bool
check_add (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    return check_args (p, e, 3, 1, -1, err);
}

/* ---- $dateDiff ---- */

static int
quarter_of (int m)
{
    return (m - 1) / 3;
}

/* The day of the week counted from startOfWeek (0 its first day). */
static int64_t
dow_from (int64_t days, int sow)
{
    return (rm_cal_iso_dow (days) - sow + 7) % 7;
}

static bool
get_date (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, const char *name, int64_t *ms,
          bson_error_t *err)
{
    if (date_of (v, ms))
        return true;
    return rm_xfail (err, e, "%s requires '%s' to be a date, but got %s: %s", e->op->name, name,
                     type_name (v), rm_xshow (cx, v));
}

/* Whether argument i (if given) is null or missing. */
static bool
arg_nullish (rm_expr_ctx_t *cx, const rm_expr_t *e, int i, bool *nullish, bson_error_t *err)
{
    bson_value_t v;
    *nullish = false;
    if (i < 0 || !e->args[i])
        return true;
    if (is_const (e->args[i])) {
        *nullish = rm_xval_nullish (&e->args[i]->konst);
        return true;
    }
    if (!rm_xeval (cx, e->args[i], &v, err))
        return false;
    *nullish = rm_xval_nullish (&v);
    return true;
}

static bool
eval_diff (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t sv, ev;
    rm_tz_t tz;
    int unit, sow = 7, r;
    int64_t a, b, res;
    bool tz_null;
    lt_t s, t;

    if (!rm_xeval (cx, e->args[0], &sv, err))
        return false;
    if (rm_xval_nullish (&sv)) {
        rm_xset_null (out);
        return true;
    }
    /* as the server (date_diff.js): a null or missing timezone makes null
     * before the unit is checked */
    if (!rm_xeval (cx, e->args[1], &ev, err) || !arg_nullish (cx, e, dd (e)->tz_arg, &tz_null, err))
        return false;
    if (rm_xval_nullish (&ev) || tz_null) {
        rm_xset_null (out);
        return true;
    }
    if ((r = eval_unit (cx, e, &unit, err)) <= 0 ||
        (unit == RM_DT_WEEK && (r = eval_sow (cx, e, &sow, err)) <= 0) || (r = eval_tz (cx, e, &tz, err)) <= 0) {
        rm_xset_null (out);
        return r == 0;
    }
    if (!get_date (cx, e, &sv, "startDate", &a, err) || !get_date (cx, e, &ev, "endDate", &b, err))
        return false;
    if (unit == RM_DT_MILLISECOND) {
        if (__builtin_sub_overflow (b, a, &res))
            return rm_xfail (err, e, "dateDiff overflowed");
        rm_xset_int64 (out, res);
        return true;
    }
    local_time (&tz, a, &s);
    local_time (&tz, b, &t);
    int64_t ddays = t.days - s.days;
    /* the hours, minutes and seconds of the local clocks, corrected by the
     * change of offset between them (truncated, as the server's) */
    int64_t dh = t.h - s.h + ddays * 24, dmi = t.mi - s.mi + dh * 60;
    switch (unit) {
    case RM_DT_YEAR: res = t.y - s.y; break;
    case RM_DT_QUARTER: res = quarter_of (t.m) - quarter_of (s.m) + (t.y - s.y) * 4; break;
    case RM_DT_MONTH: res = t.m - s.m + (t.y - s.y) * 12; break;
    case RM_DT_WEEK: res = (ddays + dow_from (s.days, sow) - dow_from (t.days, sow)) / 7; break;
    case RM_DT_DAY: res = ddays; break;
    case RM_DT_HOUR: res = dh + (s.off - t.off) / 3600; break;
    case RM_DT_MINUTE: res = dmi + (s.off - t.off) / 60; break;
    default: res = t.s - s.s + dmi * 60 + (s.off - t.off); break;
    }
    rm_xset_int64 (out, res);
    return true;
}

static bool
check_diff (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    return check_args (p, e, 3, 2, 4, err);
}

/* ---- $dateTrunc ---- */

/* The bin of date: its start, and (end not NULL) the next bin's start.
 * e names the operator in errors (NULL outside an expression). */
static bool
trunc_bin (const rm_expr_t *e, const rm_dt_bins_t *b, int64_t date, int64_t *start, int64_t *end,
           bson_error_t *err)
{
    int unit = b->unit;
    int64_t bin = b->bin;
    lt_t t;

    /* The reference point: 2000-01-01 local (moved to the first day of
     * a week for weeks), the instant bins are counted from. */
    int64_t ref = INT64_C (946684800000) - (int64_t) rm_tz_offset (&b->tz, INT64_C (946684800)) * 1000;
    int ref_day = 1;
    if (unit == RM_DT_WEEK) {
        int adjust = (int) ((7 - dow_from (rm_cal_days (2000, 1, 1), b->sow)) % 7);
        ref += adjust * MS_PER_DAY;
        ref_day += adjust;
    }
    if (unit >= RM_DT_HOUR) {
        int64_t bin_ms, shifted;
        if (__builtin_mul_overflow (bin, unit_ms[unit], &bin_ms) ||
            __builtin_sub_overflow (date, ref, &shifted) ||
            __builtin_sub_overflow (date, rm_cal_fmod (shifted, bin_ms), start) ||
            (end && __builtin_add_overflow (*start, bin_ms, end)))
            return rm_xfail (err, e, "dateTrunc overflowed");
        return true;
    }
    if (bin > INT64_C (100000000000))
        return rm_xfail (err, e, "dateTrunc unsupported binSize value: %lld", (long long) bin);
    local_time (&b->tz, date, &t);
    int64_t ref_days = rm_cal_days (2000, 1, ref_day), dist;
    switch (unit) {
    case RM_DT_DAY: dist = t.days - ref_days; break;
    case RM_DT_WEEK: dist = (t.days - ref_days + dow_from (ref_days, b->sow) - dow_from (t.days, b->sow)) / 7; break;
    case RM_DT_MONTH: dist = t.m - 1 + (t.y - 2000) * 12; break;
    case RM_DT_QUARTER: dist = quarter_of (t.m) + (t.y - 2000) * 4; break;
    default: dist = t.y - 2000; break;
    }
    dist -= rm_cal_fmod (dist, bin);
    /* The end from the reference too, not from the start: a start moved
     * by a daylight change (midnight in a gap) would carry its shift. */
    return date_add (e, ref, unit, dist, &b->tz, start, err) &&
           (!end || date_add (e, ref, unit, dist + bin, &b->tz, end, err));
}

bool
rm_dt_bin (const rm_dt_bins_t *b, int64_t date, int64_t *start, int64_t *end, bson_error_t *err)
{
    return trunc_bin (NULL, b, date, start, end, err);
}

static bool
eval_trunc (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    const ddata_t *d = dd (e);
    bson_value_t dv, bv;
    rm_tz_t tz;
    rm_dt_bins_t bins;
    int unit, sow = 7, r;
    int64_t date, bin = 1, res;
    bool unit_null, tz_null;

    /* The server's order (date_trunc.js): a null or missing date, unit,
     * binSize or timezone makes null before any of them is checked, then
     * the unit, then a null startOfWeek for weeks, then the rest. */
    rm_xset_missing (&bv);
    if (!rm_xeval (cx, e->args[0], &dv, err) || (e->args[2] && !rm_xeval (cx, e->args[2], &bv, err)) ||
        !arg_nullish (cx, e, d->unit_arg, &unit_null, err) || !arg_nullish (cx, e, d->tz_arg, &tz_null, err))
        return false;
    if (rm_xval_nullish (&dv) || (e->args[2] && rm_xval_nullish (&bv)) || unit_null || tz_null) {
        rm_xset_null (out);
        return true;
    }
    if ((r = eval_unit (cx, e, &unit, err)) <= 0 ||
        (unit == RM_DT_WEEK && (r = eval_sow (cx, e, &sow, err)) <= 0)) {
        rm_xset_null (out);
        return r == 0;
    }
    if (e->args[2]) {
        if (!rm_xval_to_int64 (&bv, &bin))
            return rm_xfail (err, e, "$dateTrunc requires 'binSize' to be a 64-bit integer, but got "
                             "value %s of type %s", rm_xshow (cx, &bv), type_name (&bv));
        if (bin <= 0)
            return rm_xfail (err, e, "$dateTrunc requires 'binSize' to be greater than 0, but got "
                             "value %lld", (long long) bin);
    }
    if ((r = eval_tz (cx, e, &tz, err)) <= 0) {
        rm_xset_null (out);
        return r == 0;
    }
    if (!get_date (cx, e, &dv, "date", &date, err))
        return false;
    bins.unit = unit;
    bins.bin = bin;
    bins.sow = sow;
    bins.tz = tz;
    if (!trunc_bin (e, &bins, date, &res, NULL, err))
        return false;
    rm_xset_date (out, res);
    return true;
}

static bool
check_trunc (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    return check_args (p, e, 3, 1, 4, err);
}

/* ---- $toString's form ---- */

size_t
rm_xdate_iso (int64_t ms, char *out)
{
    int64_t days = rm_cal_fdiv (ms, MS_PER_DAY), rest = ms - days * MS_PER_DAY, y;
    int m, d;
    rm_cal_civil (days, &y, &m, &d);
    if (y < 0 || y > 9999) {
        /* The server refuses these (18537: "date component was outside
         * the supported range of 0-9999"): 0 tells the caller to. */
        out[0] = '\0';
        return 0;
    }
    return (size_t) snprintf (out, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int) y, m, d,
                              (int) (rest / 3600000), (int) (rest / 60000 % 60),
                              (int) (rest / 1000 % 60), (int) (rest % 1000));
}

#define DATE_PART(name) {name, eval_date_part, 0, 0, {NULL}, parse_date_part, check_date_part}

const rm_xop_t rm_xops_date[] = {
    /* in the order of OP_YEAR ... OP_MILLISECOND */
    DATE_PART ("$year"),
    DATE_PART ("$month"),
    DATE_PART ("$dayOfMonth"),
    DATE_PART ("$dayOfWeek"),
    DATE_PART ("$dayOfYear"),
    DATE_PART ("$week"),
    DATE_PART ("$isoWeek"),
    DATE_PART ("$isoWeekYear"),
    DATE_PART ("$isoDayOfWeek"),
    DATE_PART ("$hour"),
    DATE_PART ("$minute"),
    DATE_PART ("$second"),
    DATE_PART ("$millisecond"),
    {"$dateToParts", eval_to_parts, 0, 0, {"*date", "timezone", "iso8601"}, NULL, check_to_parts},
    {"$dateFromParts", eval_from_parts, 0, 0, {NULL}, parse_from_parts, NULL},
    {"$dateToString", eval_to_string, 0, 0, {"*date", "format", "timezone", "onNull"}, NULL, check_to_string},
    {"$dateFromString", eval_from_string, 0, 0, {"*dateString", "format", "timezone", "onError", "onNull"},
     NULL, check_from_string},
    {"$dateAdd", eval_add, 0, 0, {"*startDate", "*unit", "*amount", "timezone"}, NULL, check_add},
    {"$dateSubtract", eval_add, 0, 0, {"*startDate", "*unit", "*amount", "timezone"}, NULL, check_add},
    {"$dateDiff", eval_diff, 0, 0, {"*startDate", "*endDate", "*unit", "timezone", "startOfWeek"}, NULL,
     check_diff},
    {"$dateTrunc", eval_trunc, 0, 0, {"*date", "*unit", "binSize", "timezone", "startOfWeek"}, NULL,
     check_trunc},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
