/* The string operators: $concat, $split, $substr/$substrBytes/$substrCP,
 * $strLenBytes/$strLenCP, $indexOfBytes/$indexOfCP, $toLower/$toUpper,
 * $strcasecmp, $trim/$ltrim/$rtrim, $replaceOne/$replaceAll.
 *
 * Strings are UTF-8 and most operators work on their bytes, as the
 * server's do: $split and $replace* search bytes, $toLower/$toUpper and
 * $strcasecmp change ASCII letters only. The *CP variants count code
 * points the way the server does (a code point starts at every byte that
 * is not a continuation byte), and $substrBytes refuses a cut inside a
 * multi-byte sequence. $substr*, $toLower, $toUpper and $strcasecmp take
 * any scalar through the server's coerceToString (null is "", 1.5 is
 * "1.5", a date its ISO form); the others want strings and say so.
 *
 * Results are built in the context's memory; a result that is the whole
 * input is the input itself. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "expr_impl.h"
#include "expr_utf8.h"

/* ---- Coercions ---- */

/* The server's Value::coerceToString: strings (and symbols, code) as they
 * are; null, undefined and missing as ""; numbers as its stream prints
 * them (a double with printf's %g: 1.5 -> "1.5", 1e20 -> "1e+20"); a date
 * in ISO form with milliseconds; a timestamp as ctime's "Mon dd
 * hh:mm:ss" then ":increment" (the server uses its local time: UTC
 * here). Anything else is an error. */
static bool
coerce_string (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, const char **s,
               size_t *len, bson_error_t *err)
{
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char buf[64];
    int n = 0;

    switch (v->value_type) {
    case BSON_TYPE_UTF8:
        *s = v->value.v_utf8.str;
        *len = v->value.v_utf8.len;
        return true;
    case BSON_TYPE_SYMBOL:
        *s = v->value.v_symbol.symbol;
        *len = v->value.v_symbol.len;
        return true;
    case BSON_TYPE_CODE:
        *s = v->value.v_code.code;
        *len = v->value.v_code.code_len;
        return true;
    case BSON_TYPE_EOD:
    case BSON_TYPE_NULL:
    case BSON_TYPE_UNDEFINED:
        *s = "";
        *len = 0;
        return true;
    case BSON_TYPE_INT32:
        n = snprintf (buf, sizeof buf, "%" PRId32, v->value.v_int32);
        break;
    case BSON_TYPE_INT64:
        n = snprintf (buf, sizeof buf, "%" PRId64, v->value.v_int64);
        break;
    case BSON_TYPE_DOUBLE:
        n = snprintf (buf, sizeof buf, "%g", v->value.v_double);
        break;
    case BSON_TYPE_DECIMAL128:
        bson_decimal128_to_string (&v->value.v_decimal128, buf);
        n = (int) strlen (buf);
        break;
    case BSON_TYPE_DATE_TIME:
        n = (int) rm_xdate_iso (v->value.v_datetime, buf);
        if (n == 0)
            return rm_xfail (err, e, "failed while coercing date to string: %s is outside the years "
                             "0-9999 it can print", rm_xshow (cx, v));
        break;
    case BSON_TYPE_TIMESTAMP: {
        time_t t = (time_t) v->value.v_timestamp.timestamp;
        struct tm tm;
        gmtime_r (&t, &tm);
        n = snprintf (buf, sizeof buf, "%s%3d %02d:%02d:%02d:%" PRIu32, months[tm.tm_mon], tm.tm_mday,
                      tm.tm_hour, tm.tm_min, tm.tm_sec, v->value.v_timestamp.increment);
        break;
    }
    default:
        return rm_xfail (err, e, "can't convert from BSON type %s to String: %s", rm_xval_type_name (v),
                         rm_xshow (cx, v));
    }
    char *p = rm_xalloc (cx, (size_t) n + 1);
    memcpy (p, buf, (size_t) n + 1);
    *s = p;
    *len = (size_t) n;
    return true;
}

/* Value::integral(): a number that is a whole value an int32 holds. */
static bool
integral32 (const bson_value_t *v, int32_t *out)
{
    int64_t i;
    if (v->value_type == BSON_TYPE_INT32) {
        *out = v->value.v_int32;
        return true;
    }
    if (!rm_xval_is_number (v) || !rm_xval_to_int64 (v, &i) || i < INT32_MIN || i > INT32_MAX)
        return false;
    *out = (int32_t) i;
    return true;
}

/* Value::coerceToLong() of a number: a double is truncated, and one out
 * of the range of a long (NaN too) is an error; a decimal rounds half to
 * even, as Decimal128::toLong does. */
static bool
coerce_long (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, int64_t *out,
             bson_error_t *err)
{
    double d;
    switch (v->value_type) {
    case BSON_TYPE_INT32:
        *out = v->value.v_int32;
        return true;
    case BSON_TYPE_INT64:
        *out = v->value.v_int64;
        return true;
    default:
        rm_xval_to_double (v, &d);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
            return rm_xfail (err, e, "can't coerce out of range value %s to long", rm_xshow (cx, v));
        *out = v->value_type == BSON_TYPE_DECIMAL128 ? (int64_t) nearbyint (d) : (int64_t) d;
        return true;
    }
}

/* A string result of len bytes at s: the input value itself when it is
 * all of it (no copy), else a copy in the context's memory. */
static void
set_sub (rm_expr_ctx_t *cx, bson_value_t *out, const bson_value_t *in, const char *s, size_t len)
{
    if (in && in->value_type == BSON_TYPE_UTF8 && s == in->value.v_utf8.str && len == in->value.v_utf8.len)
        *out = *in;
    else
        rm_xset_string (cx, out, s, len);
}

/* ---- $concat ---- */

/* Null at the first null or missing argument (those after it are not
 * evaluated, as the server stops there); any other non-string is an
 * error; no argument at all is "". */
/* A string past a document's limit can never be written: refused before
 * it is built (a $reduce doubling a string would otherwise take all the
 * memory there is). */
static bool
too_long (bson_error_t *err, const rm_expr_t *e, size_t total)
{
    return rm_xfail (err, e, "the result would be %zu bytes, over the %d-byte limit of a string "
                             "(a document holds at most 16 MiB)",
                     total, RM_X_MAX_STRING);
}

static bool
eval_concat (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t *vals = rm_xvals (cx, e->n);
    size_t total = 0;
    char *p;

    for (size_t i = 0; i < e->n; i++) {
        if (!rm_xeval (cx, e->args[i], &vals[i], err))
            return false;
        if (rm_xval_nullish (&vals[i])) {
            rm_xset_null (out);
            return true;
        }
        if (vals[i].value_type != BSON_TYPE_UTF8)
            return rm_xfail (err, e, "only supports strings, not %s: %s", rm_xval_type_name (&vals[i]),
                             rm_xshow (cx, &vals[i]));
        total += vals[i].value.v_utf8.len;
    }
    if (e->n == 1) {
        *out = vals[0];
        return true;
    }
    if (total > RM_X_MAX_STRING)
        return too_long (err, e, total);
    p = rm_xalloc (cx, total + 1);
    total = 0;
    for (size_t i = 0; i < e->n; i++) {
        memcpy (p + total, vals[i].value.v_utf8.str, vals[i].value.v_utf8.len);
        total += vals[i].value.v_utf8.len;
    }
    p[total] = '\0';
    out->value_type = BSON_TYPE_UTF8;
    out->value.v_utf8.str = p;
    out->value.v_utf8.len = (uint32_t) total;
    return true;
}

/* ---- $split ---- */

/* By bytes: "" split by "a" is [""], a delimiter at either end gives an
 * empty string there. Null when either argument is null or missing,
 * before any type is checked. */
static bool
eval_split (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2], piece;
    rm_xbuild_t b;
    const char *s, *end, *hit;
    size_t dlen;

    if (!rm_xeval_args (cx, e, v, err))
        return false;
    if (rm_xval_nullish (&v[0]) || rm_xval_nullish (&v[1])) {
        rm_xset_null (out);
        return true;
    }
    if (v[0].value_type != BSON_TYPE_UTF8)
        return rm_xfail (err, e, "requires an expression that evaluates to a string as a first argument, "
                         "found: %s %s", rm_xval_type_name (&v[0]), rm_xshow (cx, &v[0]));
    if (v[1].value_type != BSON_TYPE_UTF8)
        return rm_xfail (err, e, "requires an expression that evaluates to a string as a second argument, "
                         "found: %s %s", rm_xval_type_name (&v[1]), rm_xshow (cx, &v[1]));
    dlen = v[1].value.v_utf8.len;
    if (dlen == 0)
        return rm_xfail (err, e, "requires a non-empty separator");
    s = v[0].value.v_utf8.str;
    end = s + v[0].value.v_utf8.len;
    rm_xbuild_begin (cx, &b, true);
    piece.value_type = BSON_TYPE_UTF8;
    while ((hit = memmem (s, (size_t) (end - s), v[1].value.v_utf8.str, dlen))) {
        piece.value.v_utf8.str = (char *) s;
        piece.value.v_utf8.len = (uint32_t) (hit - s);
        rm_xbuild_push (&b, &piece);
        s = hit + dlen;
    }
    piece.value.v_utf8.str = (char *) s;
    piece.value.v_utf8.len = (uint32_t) (end - s);
    rm_xbuild_push (&b, &piece);
    rm_xbuild_end (&b, out);
    return true;
}

/* ---- Lengths ---- */

/* Both want a string: null and missing are errors, not null. */
static bool
eval_strlen (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    if (v.value_type != BSON_TYPE_UTF8)
        return rm_xfail (err, e, "requires a string argument, found: %s %s", rm_xval_type_name (&v),
                         rm_xshow (cx, &v));
    if (!strcmp (e->op->name, "$strLenBytes"))
        rm_xset_int32 (out, (int32_t) v.value.v_utf8.len);
    else
        rm_xset_int32 (out, (int32_t) rm_xutf8_count (v.value.v_utf8.str, v.value.v_utf8.len));
    return true;
}

/* ---- Substrings ---- */

/* $substrBytes (and its old name $substr): [string, start, length] in
 * bytes. A negative length is "to the end"; a negative start an error; a
 * start past the end gives ""; either end of the cut inside a UTF-8
 * sequence is an error. */
static bool
eval_substr_bytes (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[3];
    const char *s;
    size_t len, lower, length;
    int64_t slower, slength;

    if (!rm_xeval_args (cx, e, v, err) || !coerce_string (cx, e, &v[0], &s, &len, err))
        return false;
    if (!rm_xval_is_number (&v[1]))
        return rm_xfail (err, e, "starting index must be a numeric type (is BSON type %s)",
                         rm_xval_type_name (&v[1]));
    if (!rm_xval_is_number (&v[2]))
        return rm_xfail (err, e, "length must be a numeric type (is BSON type %s)", rm_xval_type_name (&v[2]));
    if (!coerce_long (cx, e, &v[1], &slower, err))
        return false;
    if (slower < 0)
        return rm_xfail (err, e, "starting index must be non-negative (got: %" PRId64 ")", slower);
    if (!coerce_long (cx, e, &v[2], &slength, err))
        return false;
    lower = (size_t) slower;
    length = slength < 0 ? len : (size_t) slength;
    if (lower < len && rm_xutf8_is_cont ((unsigned char) s[lower]))
        return rm_xfail (err, e, "Invalid range, starting index is a UTF-8 continuation byte "
                         "(byte %zu of %s)", lower, rm_xshow (cx, &v[0]));
    if (lower + length < len && rm_xutf8_is_cont ((unsigned char) s[lower + length]))
        return rm_xfail (err, e, "Invalid range, ending index is in the middle of a UTF-8 character "
                         "(byte %zu of %s)", lower + length, rm_xshow (cx, &v[0]));
    if (lower >= len) {
        rm_xset_string (cx, out, "", 0);
        return true;
    }
    if (length > len - lower)
        length = len - lower;
    set_sub (cx, out, &v[0], s + lower, length);
    return true;
}

/* $substrCP: [string, start, length] in code points, both int32 values
 * (2.0 will do, 2.5 will not) and neither negative. */
static bool
eval_substr_cp (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[3];
    const char *s;
    size_t len, from = 0, to;
    int32_t start, length;

    if (!rm_xeval_args (cx, e, v, err) || !coerce_string (cx, e, &v[0], &s, &len, err))
        return false;
    if (!rm_xval_is_number (&v[1]))
        return rm_xfail (err, e, "starting index must be a numeric type (is BSON type %s)",
                         rm_xval_type_name (&v[1]));
    if (!integral32 (&v[1], &start))
        return rm_xfail (err, e, "starting index cannot be represented as a 32-bit integral value: %s",
                         rm_xshow (cx, &v[1]));
    if (!rm_xval_is_number (&v[2]))
        return rm_xfail (err, e, "length must be a numeric type (is BSON type %s)", rm_xval_type_name (&v[2]));
    if (!integral32 (&v[2], &length))
        return rm_xfail (err, e, "length cannot be represented as a 32-bit integral value: %s",
                         rm_xshow (cx, &v[2]));
    if (length < 0)
        return rm_xfail (err, e, "length must be a nonnegative integer (got %" PRId32 ")", length);
    if (start < 0)
        return rm_xfail (err, e, "the starting index must be nonnegative integer (got %" PRId32 ")", start);
    for (int32_t i = 0; i < start; i++) {
        if (from >= len) {
            rm_xset_string (cx, out, "", 0);
            return true;
        }
        if (rm_xutf8_is_cont ((unsigned char) s[from]) || rm_xutf8_len ((unsigned char) s[from]) > 4)
            return rm_xfail (err, e, "invalid UTF-8 string: %s", rm_xshow (cx, &v[0]));
        from += rm_xutf8_len ((unsigned char) s[from]);
    }
    to = from;
    for (int32_t i = 0; i < length && to < len; i++) {
        if (rm_xutf8_is_cont ((unsigned char) s[to]) || rm_xutf8_len ((unsigned char) s[to]) > 4)
            return rm_xfail (err, e, "invalid UTF-8 string: %s", rm_xshow (cx, &v[0]));
        to += rm_xutf8_len ((unsigned char) s[to]);
    }
    /* A truncated last sequence: the server's substr stops at the end. */
    if (to > len)
        to = len;
    if (from > len)
        from = len;
    set_sub (cx, out, &v[0], s + from, to - from);
    return true;
}

/* ---- $indexOfBytes, $indexOfCP ---- */

/* An optional index argument: an int32 value, not negative. */
static bool
index_arg (rm_expr_ctx_t *cx, const rm_expr_t *e, size_t i, const char *what, size_t *out,
           bson_error_t *err)
{
    bson_value_t v;
    int32_t n;
    if (!rm_xeval (cx, e->args[i], &v, err))
        return false;
    if (!integral32 (&v, &n))
        return rm_xfail (err, e, "requires an integral %s, found a value of type: %s, with value: %s", what,
                         rm_xval_type_name (&v), rm_xshow (cx, &v));
    if (n < 0)
        return rm_xfail (err, e, "requires a nonnegative %s, found: %" PRId32, what, n);
    *out = (size_t) n;
    return true;
}

/* What $indexOfBytes and $indexOfCP read first: the string into v[0]
 * (null or missing: *out is null and the rest unevaluated; the caller
 * answers when rm_xval_nullish (&v[0])), the token into v[1] (a string:
 * null is an error) and the optional starting index. */
static bool
index_strings (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *v, size_t *start, bson_value_t *out,
               bson_error_t *err)
{
    if (!rm_xeval (cx, e->args[0], &v[0], err))
        return false;
    if (rm_xval_nullish (&v[0])) {
        rm_xset_null (out);
        return true;
    }
    if (v[0].value_type != BSON_TYPE_UTF8)
        return rm_xfail (err, e, "requires a string as the first argument, found: %s %s",
                         rm_xval_type_name (&v[0]), rm_xshow (cx, &v[0]));
    if (!rm_xeval (cx, e->args[1], &v[1], err))
        return false;
    if (v[1].value_type != BSON_TYPE_UTF8)
        return rm_xfail (err, e, "requires a string as the second argument, found: %s %s",
                         rm_xval_type_name (&v[1]), rm_xshow (cx, &v[1]));
    *start = 0;
    return e->n <= 2 || index_arg (cx, e, 2, "starting index", start, err);
}

static bool
eval_index_bytes (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    size_t start, end, len, tlen;
    const char *s, *hit;

    if (!index_strings (cx, e, v, &start, out, err))
        return false;
    if (rm_xval_nullish (&v[0]))
        return true;
    s = v[0].value.v_utf8.str;
    len = v[0].value.v_utf8.len;
    tlen = v[1].value.v_utf8.len;
    end = len;
    if (e->n > 3 && !index_arg (cx, e, 3, "ending index", &end, err))
        return false;
    if (end > len)
        end = len;
    if (start > len || end < start) {
        rm_xset_int32 (out, -1);
        return true;
    }
    /* The token must lie wholly before end (the server searches the
     * string cut at end); an empty token is found at start itself. */
    hit = tlen == 0 ? s + start : memmem (s + start, end - start, v[1].value.v_utf8.str, tlen);
    rm_xset_int32 (out, hit ? (int32_t) (hit - s) : -1);
    return true;
}

/* In code points. As on the server, a start past the end finds nothing,
 * even the empty token, except in the empty string ("" in "" is 0). */
static bool
eval_index_cp (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    size_t start, end, len, tlen, ncp = 0, sbyte = 0, b;
    const char *s, *t;

    if (!index_strings (cx, e, v, &start, out, err))
        return false;
    if (rm_xval_nullish (&v[0]))
        return true;
    s = v[0].value.v_utf8.str;
    len = v[0].value.v_utf8.len;
    t = v[1].value.v_utf8.str;
    tlen = v[1].value.v_utf8.len;
    for (b = 0; b < len; ncp++) {
        if (ncp == start)
            sbyte = b;
        if (rm_xutf8_is_cont ((unsigned char) s[b]))
            return rm_xfail (err, e, "found bad UTF-8 in the input: %s", rm_xshow (cx, &v[0]));
        b += rm_xutf8_len ((unsigned char) s[b]);
    }
    end = ncp;
    if (e->n > 3 && !index_arg (cx, e, 3, "ending index", &end, err))
        return false;
    if (end > ncp)
        end = ncp;
    if (end < start) {
        rm_xset_int32 (out, -1);
        return true;
    }
    if (len == 0 && tlen == 0) {
        rm_xset_int32 (out, 0);
        return true;
    }
    b = sbyte;
    for (size_t i = start; i < end; i++) {
        if (b + tlen <= len && !memcmp (s + b, t, tlen)) {
            rm_xset_int32 (out, (int32_t) i);
            return true;
        }
        b += rm_xutf8_len ((unsigned char) s[b]);
    }
    rm_xset_int32 (out, -1);
    return true;
}

/* ---- Case ---- */

/* ASCII letters only (the server's C locale): é stays é. */
static bool
eval_case (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    const char *s;
    size_t len;
    bool upper = e->op->name[3] == 'U';
    char *p;

    if (!rm_xeval (cx, e->args[0], &v, err) || !coerce_string (cx, e, &v, &s, &len, err))
        return false;
    p = rm_xalloc (cx, len + 1);
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (upper && c >= 'a' && c <= 'z')
            c = (char) (c - 'a' + 'A');
        else if (!upper && c >= 'A' && c <= 'Z')
            c = (char) (c - 'A' + 'a');
        p[i] = c;
    }
    p[len] = '\0';
    out->value_type = BSON_TYPE_UTF8;
    out->value.v_utf8.str = p;
    out->value.v_utf8.len = (uint32_t) len;
    return true;
}

static inline unsigned char
ascii_upper (unsigned char c)
{
    return c >= 'a' && c <= 'z' ? (unsigned char) (c - 'a' + 'A') : c;
}

/* Both upper-cased (ASCII), then compared bytewise: so "_" sorts after
 * "a" ('A' < '_'), as on the server. */
static bool
eval_strcasecmp (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v[2];
    const char *a, *b;
    size_t la, lb, n;
    int c = 0;

    if (!rm_xeval_args (cx, e, v, err) || !coerce_string (cx, e, &v[0], &a, &la, err) ||
        !coerce_string (cx, e, &v[1], &b, &lb, err))
        return false;
    n = la < lb ? la : lb;
    for (size_t i = 0; i < n && !c; i++) {
        unsigned char x = ascii_upper ((unsigned char) a[i]), y = ascii_upper ((unsigned char) b[i]);
        c = x < y ? -1 : x > y ? 1 : 0;
    }
    if (!c)
        c = la < lb ? -1 : la > lb ? 1 : 0;
    rm_xset_int32 (out, c);
    return true;
}

/* ---- $trim, $ltrim, $rtrim ---- */

/* A code point to trim: its bytes. */
typedef struct {
    const char *s;
    size_t len;
} cp_t;

/* Without chars: the whitespace the server trims, NUL included. */
static const cp_t default_space[] = {
    {"\0", 1},           {" ", 1},            {"\t", 1},           {"\n", 1},
    {"\v", 1},           {"\f", 1},           {"\r", 1},           {"\xc2\xa0", 2},
    {"\xe1\x9a\x80", 3}, {"\xe2\x80\x80", 3}, {"\xe2\x80\x81", 3}, {"\xe2\x80\x82", 3},
    {"\xe2\x80\x83", 3}, {"\xe2\x80\x84", 3}, {"\xe2\x80\x85", 3}, {"\xe2\x80\x86", 3},
    {"\xe2\x80\x87", 3}, {"\xe2\x80\x88", 3}, {"\xe2\x80\x89", 3}, {"\xe2\x80\x8a", 3},
};

/* Whether one of the code points is at s[at] (at + its length <= len). */
static size_t
cp_at (const char *s, size_t len, size_t at, const cp_t *cps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cps[i].len <= len - at && !memcmp (s + at, cps[i].s, cps[i].len))
            return cps[i].len;
    return 0;
}

/* The server's extractCodePointsFromChars: each lead byte takes as many
 * bytes as it announces; a continuation byte where a code point should
 * start, or a sequence cut by the end, is an error. */
static bool
chars_cps (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, cp_t **out, size_t *n,
           bson_error_t *err)
{
    const char *s = v->value.v_utf8.str;
    size_t len = v->value.v_utf8.len, i = 0;
    cp_t *cps = rm_xalloc (cx, (len ? len : 1) * sizeof *cps);

    *n = 0;
    while (i < len) {
        size_t k = rm_xutf8_len ((unsigned char) s[i]);
        if (rm_xutf8_is_cont ((unsigned char) s[i]))
            return rm_xfail (err, e, "invalid UTF-8 in 'chars' %s: a continuation byte where a code point "
                             "should start", rm_xshow (cx, v));
        if (k > len - i)
            return rm_xfail (err, e, "invalid UTF-8 in 'chars' %s: a code point cut by the end of the "
                             "string", rm_xshow (cx, v));
        cps[*n].s = s + i;
        cps[(*n)++].len = k;
        i += k;
    }
    *out = cps;
    return true;
}

static bool
eval_trim (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t in, chars;
    const cp_t *cps = default_space;
    cp_t *user = NULL;
    size_t n = sizeof default_space / sizeof default_space[0], from = 0, to, k;
    bool left = e->op->name[1] != 'r', right = e->op->name[1] != 'l';
    const char *s;

    if (!rm_xeval (cx, e->args[0], &in, err))
        return false;
    if (rm_xval_nullish (&in)) {
        rm_xset_null (out);
        return true;
    }
    if (in.value_type != BSON_TYPE_UTF8)
        return rm_xfail (err, e, "requires its input to be a string, got %s (of type %s) instead",
                         rm_xshow (cx, &in), rm_xval_type_name (&in));
    if (e->args[1]) {
        if (!rm_xeval (cx, e->args[1], &chars, err))
            return false;
        if (rm_xval_nullish (&chars)) {
            rm_xset_null (out);
            return true;
        }
        if (chars.value_type != BSON_TYPE_UTF8)
            return rm_xfail (err, e, "requires 'chars' to be a string, got %s (of type %s) instead",
                             rm_xshow (cx, &chars), rm_xval_type_name (&chars));
        if (!chars_cps (cx, e, &chars, &user, &n, err))
            return false;
        cps = user;
    }
    s = in.value.v_utf8.str;
    to = in.value.v_utf8.len;
    if (left)
        while (from < to && (k = cp_at (s, to, from, cps, n)))
            from += k;
    if (right) {
        while (to > from) {
            size_t i;
            for (i = 0; i < n; i++)
                if (cps[i].len <= to - from && !memcmp (s + to - cps[i].len, cps[i].s, cps[i].len))
                    break;
            if (i == n)
                break;
            to -= cps[i].len;
        }
    }
    set_sub (cx, out, &in, s + from, to - from);
    return true;
}

/* ---- $replaceOne, $replaceAll ---- */

/* Each argument a string or null (another type is an error, checked
 * before nulls); null if any is null or missing. By bytes: an empty find
 * matches before the first byte ($replaceOne) or around every byte
 * ($replaceAll, even inside a multi-byte sequence, as the server does). */
static bool
eval_replace (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    static const char *names[] = {"input", "find", "replacement"};
    bson_value_t v[3];
    bool all = e->op->name[8] == 'A';
    const char *s, *f, *r, *hit, *at;
    size_t len, flen, rlen, total, n = 0;
    char *p;

    if (!rm_xeval_args (cx, e, v, err))
        return false;
    for (size_t i = 0; i < 3; i++)
        if (v[i].value_type != BSON_TYPE_UTF8 && !rm_xval_nullish (&v[i]))
            return rm_xfail (err, e, "requires that '%s' be a string, found: %s %s", names[i],
                             rm_xval_type_name (&v[i]), rm_xshow (cx, &v[i]));
    for (size_t i = 0; i < 3; i++)
        if (rm_xval_nullish (&v[i])) {
            rm_xset_null (out);
            return true;
        }
    s = v[0].value.v_utf8.str;
    len = v[0].value.v_utf8.len;
    f = v[1].value.v_utf8.str;
    flen = v[1].value.v_utf8.len;
    r = v[2].value.v_utf8.str;
    rlen = v[2].value.v_utf8.len;

    if (flen == 0) {
        size_t slots = all ? len + 1 : 1;
        total = len + slots * rlen;
        if (total > RM_X_MAX_STRING)
            return too_long (err, e, total);
        p = rm_xalloc (cx, total + 1);
        if (!all) {
            memcpy (p, r, rlen);
            memcpy (p + rlen, s, len);
        } else {
            size_t o = 0;
            for (size_t i = 0; i < len; i++) {
                memcpy (p + o, r, rlen);
                o += rlen;
                p[o++] = s[i];
            }
            memcpy (p + o, r, rlen);
        }
        p[total] = '\0';
        out->value_type = BSON_TYPE_UTF8;
        out->value.v_utf8.str = p;
        out->value.v_utf8.len = (uint32_t) total;
        return true;
    }
    /* Count first, then write: one allocation of the exact size. */
    for (at = s; (hit = memmem (at, len - (size_t) (at - s), f, flen)); at = hit + flen) {
        n++;
        if (!all)
            break;
    }
    if (n == 0) {
        *out = v[0];
        return true;
    }
    total = len - n * flen + n * rlen;
    if (total > RM_X_MAX_STRING)
        return too_long (err, e, total);
    p = rm_xalloc (cx, total + 1);
    {
        size_t o = 0;
        at = s;
        for (size_t i = 0; i < n; i++) {
            hit = memmem (at, len - (size_t) (at - s), f, flen);
            memcpy (p + o, at, (size_t) (hit - at));
            o += (size_t) (hit - at);
            memcpy (p + o, r, rlen);
            o += rlen;
            at = hit + flen;
        }
        memcpy (p + o, at, len - (size_t) (at - s));
    }
    p[total] = '\0';
    out->value_type = BSON_TYPE_UTF8;
    out->value.v_utf8.str = p;
    out->value.v_utf8.len = (uint32_t) total;
    return true;
}

const rm_xop_t rm_xops_string[] = {
    {"$concat", eval_concat, 0, -1, {NULL}, NULL, NULL},
    {"$split", eval_split, 2, 2, {NULL}, NULL, NULL},
    {"$strLenBytes", eval_strlen, 1, 1, {NULL}, NULL, NULL},
    {"$strLenCP", eval_strlen, 1, 1, {NULL}, NULL, NULL},
    {"$substr", eval_substr_bytes, 3, 3, {NULL}, NULL, NULL},
    {"$substrBytes", eval_substr_bytes, 3, 3, {NULL}, NULL, NULL},
    {"$substrCP", eval_substr_cp, 3, 3, {NULL}, NULL, NULL},
    {"$indexOfBytes", eval_index_bytes, 2, 4, {NULL}, NULL, NULL},
    {"$indexOfCP", eval_index_cp, 2, 4, {NULL}, NULL, NULL},
    {"$toLower", eval_case, 1, 1, {NULL}, NULL, NULL},
    {"$toUpper", eval_case, 1, 1, {NULL}, NULL, NULL},
    {"$strcasecmp", eval_strcasecmp, 2, 2, {NULL}, NULL, NULL},
    {"$trim", eval_trim, 0, 0, {"*input", "chars"}, NULL, NULL},
    {"$ltrim", eval_trim, 0, 0, {"*input", "chars"}, NULL, NULL},
    {"$rtrim", eval_trim, 0, 0, {"*input", "chars"}, NULL, NULL},
    {"$replaceOne", eval_replace, 0, 0, {"*input", "*find", "*replacement"}, NULL, NULL},
    {"$replaceAll", eval_replace, 0, 0, {"*input", "*find", "*replacement"}, NULL, NULL},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
