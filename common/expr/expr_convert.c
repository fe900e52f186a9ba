/* Types and conversions: $type, $isNumber, $isArray, $convert and its
 * shorthands ($toString, $toInt, $toLong, $toDouble, $toDecimal, $toBool,
 * $toDate, $toObjectId, $toUUID), and rm_xdouble_string, a double as the
 * server's $toString writes it.
 *
 * The conversion table is the server's (its ExpressionConvert): what it
 * refuses we refuse, and a refusal or a value that does not convert is a
 * "conversion failure", the only error onError catches; so is a 'to' that
 * names a type $convert does not make (an object, "missing"), as the
 * server's convert.js expects. An error while evaluating input, or a 'to'
 * or 'format' that names nothing, is not one: it goes up as it is. Numbers parse as the server's NumberParser does (no
 * whitespace, no "0x", the whole string), and a double becomes a decimal
 * rounded to 15 significant digits, as its Decimal128(double) does. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtoa_shortest.h"
#include "expr_impl.h"

/* What a conversion gave: a value, a failure onError may catch, or an
 * error it may not (a bad 'to' or 'format'). err is set for both. */
typedef enum { CV_OK, CV_FAIL, CV_HARD } cv_t;

/* The binData formats of 8.0's $convert ('format'). */
typedef enum { FMT_NONE, FMT_AUTO, FMT_BASE64, FMT_BASE64URL, FMT_HEX, FMT_UTF8, FMT_UUID } fmt_t;

typedef struct {
    int target;   /* a bson_type_t */
    int subtype;  /* binData's, for a binData target */
    fmt_t format;
} conv_t;

/* $convert's named arguments, in the order of its row. */
enum { A_INPUT, A_TO, A_ONERROR, A_ONNULL, A_FORMAT };

/* ---- Doubles as strings ---- */

/* The server formats with fmt's "{}": the shortest digits (the closest of
 * those that read back, dtoa_shortest.h), fixed notation
 * for decimal exponents -4 to 15, else d.ddde+XX (two exponent digits at
 * least): 1e+16, 1e-05, 1337, 0.0001. */
size_t
rm_xdouble_string (double d, char *out, size_t cap)
{
    char buf[48], dig[24];
    size_t n = 0;
    int nd, e10;

    if (isnan (d))
        return (size_t) snprintf (out, cap, "NaN");
    if (isinf (d))
        return (size_t) snprintf (out, cap, "%s", d < 0 ? "-Infinity" : "Infinity");
    if (d == 0)
        return (size_t) snprintf (out, cap, "%s", signbit (d) ? "-0" : "0");
    if (d < 0)
        buf[n++] = '-';
    nd = rm_dtoa_shortest (d, dig, &e10);
    if (e10 < -4 || e10 >= 16) {
        buf[n++] = dig[0];
        if (nd > 1) {
            buf[n++] = '.';
            memcpy (buf + n, dig + 1, (size_t) nd - 1);
            n += (size_t) nd - 1;
        }
        int x = abs (e10);
        buf[n++] = 'e';
        buf[n++] = e10 < 0 ? '-' : '+';
        if (x >= 100)
            buf[n++] = (char) ('0' + x / 100);
        buf[n++] = (char) ('0' + x / 10 % 10);
        buf[n++] = (char) ('0' + x % 10);
    } else if (e10 < 0) {
        buf[n++] = '0';
        buf[n++] = '.';
        for (int i = -1; i > e10; i--)
            buf[n++] = '0';
        memcpy (buf + n, dig, (size_t) nd);
        n += (size_t) nd;
    } else {
        for (int i = 0; i < nd || i <= e10; i++) {
            if (i == e10 + 1)
                buf[n++] = '.';
            buf[n++] = i < nd ? dig[i] : '0';
        }
    }
    /* As snprintf would: the whole length, what fits copied and ended. */
    if (cap) {
        size_t k = n < cap ? n : cap - 1;
        memcpy (out, buf, k);
        out[k] = '\0';
    }
    return n;
}

/* ---- Decimal128 ---- */

static void
dec_special (bson_decimal128_t *d, bool neg, bool nan)
{
    d->low = 0;
    d->high = (neg ? UINT64_C (0x8000000000000000) : 0) |
              (nan ? UINT64_C (0x7c00000000000000) : UINT64_C (0x7800000000000000));
}

/* A decimal's digits (no point), its exponent (value = digits x 10^exp)
 * and sign; false for NaN and infinity (*inf says which). */
static bool
dec_parts (const bson_decimal128_t *d, char *dig, int *nd, int *exp, bool *neg, bool *inf)
{
    char s[BSON_DECIMAL128_STRING];
    const char *p = s;
    int point = -1, n = 0;

    bson_decimal128_to_string (d, s);
    *neg = *p == '-';
    if (*neg)
        p++;
    *inf = !strcmp (p, "Infinity");
    if (*inf || !strcmp (p, "NaN"))
        return false;
    for (; *p && *p != 'E'; p++) {
        if (*p == '.')
            point = n;
        else
            dig[n++] = *p;
    }
    *exp = *p == 'E' ? atoi (p + 1) : 0;
    if (point >= 0)
        *exp -= n - point;
    dig[n] = '\0';
    *nd = n;
    return true;
}

/* The decimal truncated toward zero, as the server's toInt/toLong with
 * kRoundTowardZero: CV_FAIL with why set when NaN, infinite or out of
 * [lo, hi]. */
static bool
dec_trunc (const bson_decimal128_t *d, int64_t lo, int64_t hi, int64_t *out, const char **why)
{
    char dig[48];
    int nd, exp;
    bool neg, inf;
    uint64_t mag = 0, lim;

    if (!dec_parts (d, dig, &nd, &exp, &neg, &inf)) {
        *why = inf ? "infinity" : "NaN";
        return false;
    }
    for (int k = 0; k < nd + exp; k++) {
        unsigned dv = k < nd ? (unsigned) (dig[k] - '0') : 0;
        if (mag > (UINT64_MAX - dv) / 10) {
            *why = "out of range";
            return false;
        }
        mag = mag * 10 + dv;
    }
    lim = neg ? (uint64_t) (-(lo + 1)) + 1 : (uint64_t) hi;
    if (mag > lim) {
        *why = "out of range";
        return false;
    }
    *out = neg ? (mag ? -(int64_t) (mag - 1) - 1 : 0) : (int64_t) mag;
    return true;
}

/* The decimal as the nearest double; false when it is out of a double's
 * range: the server refuses both overflow and underflow (its conversion
 * may only be inexact), and a non-zero decimal can never be a subnormal
 * exactly, its 34 digits being too few. */
static bool
dec_to_double (const bson_decimal128_t *d, double *out)
{
    char s[BSON_DECIMAL128_STRING], dig[48];
    int nd, exp;
    bool neg, inf, zero = true;

    if (!dec_parts (d, dig, &nd, &exp, &neg, &inf)) {
        *out = inf ? (neg ? -INFINITY : INFINITY) : NAN;
        return true;
    }
    for (int i = 0; i < nd; i++)
        if (dig[i] != '0')
            zero = false;
    bson_decimal128_to_string (d, s);
    *out = strtod (s, NULL);
    if (zero)
        return true;
    return !isinf (*out) && fabs (*out) >= DBL_MIN;
}

typedef unsigned __int128 u128;

/* 5^0 to 5^27, the powers of five below 2^64. */
static const uint64_t pow5_64[28] = {
    1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125, 9765625, 48828125, 244140625,
    1220703125, 6103515625, 30517578125, 152587890625, 762939453125, 3814697265625,
    19073486328125, 95367431640625, 476837158203125, 2384185791015625, 11920928955078125,
    59604644775390625, 298023223876953125, 1490116119384765625, 7450580596923828125};

/* x (positive, finite) at 34 significant digits, rounded half to even,
 * exactly, as "%.33e" does: *n34 (10^33 to 10^34 - 1) x 10^(*e10 - 33).
 * Integer arithmetic on x = c 2^q: the product c 5^s (s = 33 - e10) in
 * 192 bits, shifted by q + s. false where 5^s passes 2^128 or s < 0
 * (|x| below about 1e-21, or from 1e34 on): the caller's printf does
 * those. */
static bool
dec34_of_double (double x, u128 *n34, int *e10)
{
    const u128 ten34 = (u128) 10000000000000000000ull * 1000000000000000ull;
    uint64_t bits, c, p[3];
    int q, e;

    memcpy (&bits, &x, sizeof bits);
    q = (int) (bits >> 52) & 0x7ff;
    if (!q)
        return false; /* a subnormal, far below 1e-21 */
    c = (bits & ((UINT64_C (1) << 52) - 1)) | UINT64_C (1) << 52;
    q -= 1075;
    /* floor (log10 2^(q + 52)): floor (log10 x) or one below it; one
     * more when rounding to 34 digits carries into a 35th. */
    e = (int) (((int64_t) (q + 52) * INT64_C (661971961084)) >> 41);
    for (int pass = 0; pass < 3; pass++, e++) {
        int s = 33 - e, sh, cmp = -1;
        u128 f, lo, hi, low128, n;

        if (s < 0 || s > 54)
            return false;
        f = s < 28 ? pow5_64[s] : (u128) pow5_64[27] * pow5_64[s - 27];
        lo = (u128) c * (uint64_t) f;
        hi = (u128) c * (uint64_t) (f >> 64) + (uint64_t) (lo >> 64);
        p[0] = (uint64_t) lo;
        p[1] = (uint64_t) hi;
        p[2] = (uint64_t) (hi >> 64);
        low128 = (u128) p[1] << 64 | p[0];
        sh = -(q + s);
        if (sh <= 0) {
            /* An integer: c 5^s 2^-sh, below 10^35 (checked: never lose a bit). */
            if (p[2] || sh <= -128 || (sh < 0 && low128 >> (128 + sh)))
                return false;
            n = low128 << -sh;
        } else {
            /* n = P >> sh; cmp: the bits cut against half of 2^sh. */
            int hb = sh - 1;
            bool half, sticky = false;
            if (sh >= 192)
                return false;
            half = (p[hb / 64] >> (hb % 64)) & 1;
            for (int i = 0; i < hb / 64; i++)
                sticky |= p[i] != 0;
            sticky |= (p[hb / 64] & ((UINT64_C (1) << (hb % 64)) - 1)) != 0;
            cmp = !half ? -1 : sticky ? 1 : 0;
            if (sh >= 128)
                n = p[2] >> (sh - 128);
            else if (sh >= 64)
                n = ((u128) p[2] << 64 | p[1]) >> (sh - 64);
            else
                n = (u128) p[2] << (128 - sh) | low128 >> sh;
        }
        if (cmp > 0 || (cmp == 0 && (n & 1)))
            n++;
        if (n < ten34) {
            *n34 = n;
            *e10 = e;
            return true;
        }
    }
    return false;
}

/* A double as the server's Decimal128(double): exactly 15 significant
 * digits, trailing zeros kept (2.5 -> 2.50000000000000). The server first
 * takes the double to 34 digits, then quantizes to 15, rounding half to
 * even both times: dec34_of_double, or "%.33e", is that first rounding. */
static void
dec_of_double (double x, bson_decimal128_t *out)
{
    char s[64], t[64], dig[40];
    int n = 0, e10;
    bool up;
    u128 n34;

    if (isnan (x)) {
        dec_special (out, false, true);
        return;
    }
    if (isinf (x)) {
        dec_special (out, x < 0, false);
        return;
    }
    if (x == 0) {
        bson_decimal128_from_string (signbit (x) ? "-0" : "0", out);
        return;
    }
    if (dec34_of_double (fabs (x), &n34, &e10)) {
        const uint64_t p19 = 10000000000000000000ull, p15 = 1000000000000000ull;
        uint64_t n15 = (uint64_t) (n34 / p19), rem = (uint64_t) (n34 % p19);
        if (rem > p19 / 2 || (rem == p19 / 2 && (n15 & 1)))
            n15++;
        if (n15 == p15) {
            n15 /= 10;
            e10++;
        }
        /* 15 digits x 10^(e10 - 14): a coefficient in the low word. */
        out->low = n15;
        out->high = (x < 0 ? UINT64_C (0x8000000000000000) : 0) | (uint64_t) (e10 - 14 + 6176) << 49;
        return;
    }
    snprintf (s, sizeof s, "%.33e", fabs (x));
    for (const char *p = s; *p != 'e'; p++)
        if (*p != '.')
            dig[n++] = *p;
    e10 = atoi (strchr (s, 'e') + 1);
    up = dig[15] > '5';
    if (dig[15] == '5') {
        up = (dig[14] - '0') % 2 == 1;
        for (int i = 16; i < n; i++)
            if (dig[i] != '0')
                up = true;
    }
    if (up) {
        int i = 14;
        while (i >= 0 && dig[i] == '9')
            dig[i--] = '0';
        if (i >= 0) {
            dig[i]++;
        } else {
            dig[0] = '1';
            e10++;
        }
    }
    dig[15] = '\0';
    snprintf (t, sizeof t, "%s%sE%d", x < 0 ? "-" : "", dig, e10 - 14);
    bson_decimal128_from_string (t, out);
}

static void
dec_of_int64 (int64_t i, bson_decimal128_t *out)
{
    char s[32];
    snprintf (s, sizeof s, "%" PRId64, i);
    bson_decimal128_from_string (s, out);
}

static bool
ieq (const char *a, size_t n, const char *b)
{
    if (strlen (b) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = a[i] >= 'A' && a[i] <= 'Z' ? (char) (a[i] + 32) : a[i];
        if (c != b[i])
            return false;
    }
    return true;
}

/* A string as the server reads a decimal: [+-] digits with an optional
 * point and e[+-]digits, or nan, inf, infinity in any case; more than 34
 * significant digits round half to even (the server only loses precision
 * there), an exponent out of range is an error. */
static bool
parse_decimal (rm_expr_ctx_t *cx, const char *s, size_t len, bson_decimal128_t *out)
{
    size_t i = 0, nsig = 0;
    bool neg = false, any = false, point = false;
    long exp = 0, frac = 0;
    char *buf, *d;

    if (len && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (ieq (s + i, len - i, "nan") || ieq (s + i, len - i, "inf") || ieq (s + i, len - i, "infinity")) {
        dec_special (out, neg, (s[i] | 32) == 'n');
        return true;
    }
    d = buf = rm_xalloc (cx, len + 32);
    if (neg)
        *d++ = '-';
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.' && !point) {
            point = true;
        } else if (c >= '0' && c <= '9') {
            any = true;
            frac += point;
            if (c != '0' || nsig)
                d[nsig++] = c;
        } else {
            break;
        }
    }
    if (!any)
        return false;
    if (i < len) {
        char num[16];
        size_t k = i + 1, m = 0;
        if (s[i] != 'e' && s[i] != 'E')
            return false;
        if (k < len && (s[k] == '+' || s[k] == '-'))
            num[m++] = s[k++];
        if (k == len)
            return false;
        for (; k < len; k++) {
            if (s[k] < '0' || s[k] > '9')
                return false;
            if (m < 12)
                num[m++] = s[k];
        }
        num[m] = '\0';
        exp = strtol (num, NULL, 10);
    }
    exp -= frac;
    if (nsig == 0) {
        d[nsig++] = '0';
    } else if (nsig > 34) {
        /* Beyond 34 digits the server rounds, half to even. */
        bool sticky = false, up;
        for (size_t k = 35; k < nsig; k++)
            if (d[k] != '0')
                sticky = true;
        up = d[34] > '5' || (d[34] == '5' && (sticky || (d[33] - '0') % 2 == 1));
        exp += (long) nsig - 34;
        nsig = 34;
        if (up) {
            size_t k = nsig;
            while (k > 0 && d[k - 1] == '9')
                d[--k] = '0';
            if (k > 0) {
                d[k - 1]++;
            } else {
                d[0] = '1';
                exp++;
            }
        }
    }
    snprintf (d + nsig, 24, "E%ld", exp);
    /* libbson refuses (or answers NaN for) what does not fit exactly: the
     * server's overflow and underflow. */
    return bson_decimal128_from_string (buf, out) && ((out->high >> 58) & 0x1f) != 0x1f;
}

/* ---- Strings to numbers ---- */

static bool
hex_prefixed (const char *s, size_t len)
{
    return len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* An integer in base 10: an optional sign, then digits only. */
static bool
parse_integer (const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    uint64_t mag = 0, lim;

    if (len && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == len)
        return false;
    for (; i < len; i++) {
        unsigned dv;
        if (s[i] < '0' || s[i] > '9')
            return false;
        dv = (unsigned) (s[i] - '0');
        if (mag > (UINT64_MAX - dv) / 10)
            return false;
        mag = mag * 10 + dv;
    }
    lim = neg ? (uint64_t) (-(lo + 1)) + 1 : (uint64_t) hi;
    if (mag > lim)
        return false;
    *out = neg ? (mag ? -(int64_t) (mag - 1) - 1 : 0) : (int64_t) mag;
    return true;
}

/* strtod over the whole string, as the server's parser: no leading
 * space, and out of range (over- or underflow) is an error. */
static bool
parse_double (rm_expr_ctx_t *cx, const char *s, size_t len, double *out)
{
    char *copy, *end;
    if (len == 0 || s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r'))
        return false;
    copy = rm_xalloc (cx, len + 1);
    memcpy (copy, s, len);
    copy[len] = '\0';
    errno = 0;
    *out = strtod (copy, &end);
    return end != copy && errno != ERANGE && end == copy + len;
}

/* ---- Binary data ---- */

static int
hexval (char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool
parse_hex (const char *s, size_t len, uint8_t *out)
{
    if (len % 2)
        return false;
    for (size_t i = 0; i < len; i += 2) {
        int a = hexval (s[i]), b = hexval (s[i + 1]);
        if (a < 0 || b < 0)
            return false;
        out[i / 2] = (uint8_t) (a * 16 + b);
    }
    return true;
}

/* 8-4-4-4-12 hex digits. */
static bool
parse_uuid (const char *s, size_t len, uint8_t *out)
{
    char h[32];
    size_t n = 0;
    if (len != 36)
        return false;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return false;
        } else {
            h[n++] = s[i];
        }
    }
    return parse_hex (h, 32, out);
}

static size_t
write_uuid (const uint8_t *b, char *out)
{
    size_t n = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[n++] = '-';
        n += (size_t) snprintf (out + n, 3, "%02x", b[i]);
    }
    return n;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t
write_base64 (const uint8_t *b, size_t n, bool url, char *out)
{
    const char *a = url ? b64url : b64;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t) b[i] << 16 | (i + 1 < n ? (uint32_t) b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = a[(v >> 6) & 63];
        else if (!url)
            out[o++] = '=';
        if (i + 2 < n)
            out[o++] = a[v & 63];
        else if (!url)
            out[o++] = '=';
    }
    return o;
}

/* Base64 (padded, a multiple of 4) or base64url (padding optional). */
static bool
parse_base64 (const char *s, size_t len, bool url, uint8_t *out, size_t *n)
{
    const char *a = url ? b64url : b64;
    uint32_t v = 0;
    int k = 0;
    size_t o = 0, pad = 0;

    if (!url && len % 4)
        return false;
    while (len && s[len - 1] == '=' && pad < 2) {
        len--;
        pad++;
    }
    if (url && pad && (len + pad) % 4)
        return false;
    if (len % 4 == 1)
        return false;
    for (size_t i = 0; i < len; i++) {
        const char *p = s[i] ? strchr (a, s[i]) : NULL;
        if (!p)
            return false;
        v = v << 6 | (uint32_t) (p - a);
        if (++k == 4) {
            out[o++] = (uint8_t) (v >> 16);
            out[o++] = (uint8_t) (v >> 8);
            out[o++] = (uint8_t) v;
            v = 0;
            k = 0;
        }
    }
    if (k == 2) {
        out[o++] = (uint8_t) (v >> 4);
    } else if (k == 3) {
        out[o++] = (uint8_t) (v >> 10);
        out[o++] = (uint8_t) (v >> 2);
    }
    *n = o;
    return true;
}

static bool
valid_utf8 (const uint8_t *s, size_t n)
{
    return bson_utf8_validate ((const char *) s, n, true);
}

/* ---- The conversion table ---- */

static const char *
target_name (int t)
{
    switch (t) {
    case BSON_TYPE_DOUBLE: return "a double";
    case BSON_TYPE_UTF8: return "a string";
    case BSON_TYPE_OID: return "an objectId";
    case BSON_TYPE_BOOL: return "a bool";
    case BSON_TYPE_DATE_TIME: return "a date";
    case BSON_TYPE_INT32: return "an int";
    case BSON_TYPE_INT64: return "a long";
    case BSON_TYPE_DECIMAL128: return "a decimal";
    case BSON_TYPE_BINARY: return "binData";
    case 0: return "missing";
    case BSON_TYPE_DOCUMENT: return "an object";
    case BSON_TYPE_ARRAY: return "an array";
    case BSON_TYPE_NULL: return "null";
    case BSON_TYPE_UNDEFINED: return "undefined";
    case BSON_TYPE_REGEX: return "a regex";
    case BSON_TYPE_TIMESTAMP: return "a timestamp";
    case BSON_TYPE_CODE: return "javascript";
    case BSON_TYPE_SYMBOL: return "a symbol";
    case BSON_TYPE_DBPOINTER: return "a dbPointer";
    case BSON_TYPE_CODEWSCOPE: return "javascriptWithScope";
    case -1: return "minKey";
    case 127: return "maxKey";
    default: return "that type";
    }
}

/* A conversion failure; err NULL when onError will catch it: the message
 * (which shows the value, and so allocates) is then not written. */
static cv_t
fail (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_error_t *err, const bson_value_t *v, int target,
      const char *why)
{
    if (!err)
        return CV_FAIL;
    rm_xfail (err, e, "cannot convert the %s %s to %s (%s)", rm_xval_type_name (v), rm_xshow (cx, v),
              target_name (target), why);
    return CV_FAIL;
}

static cv_t
unsupported (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_error_t *err, const bson_value_t *v, int target)
{
    return fail (cx, e, err, v, target, "unsupported conversion");
}

static void
set_string_buf (rm_expr_ctx_t *cx, bson_value_t *out, const char *s, size_t n)
{
    rm_xset_string (cx, out, s, n);
}

static void
set_binary (rm_expr_ctx_t *cx, bson_value_t *out, const uint8_t *b, size_t n, int subtype)
{
    uint8_t *p = rm_xalloc (cx, n ? n : 1);
    if (n)
        memcpy (p, b, n);
    out->value_type = BSON_TYPE_BINARY;
    out->value.v_binary.subtype = (bson_subtype_t) subtype;
    out->value.v_binary.data = p;
    out->value.v_binary.data_len = (uint32_t) n;
}

/* An error onError does not catch (err NULL: the caller asks again). */
static cv_t
hard (bson_error_t *err, const rm_expr_t *e, const char *msg)
{
    if (err)
        rm_xfail (err, e, "%s", msg);
    return CV_HARD;
}

static cv_t
to_string (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, const conv_t *c,
           bson_value_t *out, bson_error_t *err)
{
    char buf[64];
    size_t n;

    switch (v->value_type) {
    case BSON_TYPE_UTF8:
        *out = *v;
        return CV_OK;
    case BSON_TYPE_DOUBLE:
        n = rm_xdouble_string (v->value.v_double, buf, sizeof buf);
        break;
    case BSON_TYPE_INT32:
        n = (size_t) snprintf (buf, sizeof buf, "%" PRId32, v->value.v_int32);
        break;
    case BSON_TYPE_INT64:
        n = (size_t) snprintf (buf, sizeof buf, "%" PRId64, v->value.v_int64);
        break;
    case BSON_TYPE_DECIMAL128:
        bson_decimal128_to_string (&v->value.v_decimal128, buf);
        n = strlen (buf);
        break;
    case BSON_TYPE_BOOL:
        n = (size_t) snprintf (buf, sizeof buf, "%s", v->value.v_bool ? "true" : "false");
        break;
    case BSON_TYPE_OID:
        bson_oid_to_string (&v->value.v_oid, buf);
        n = 24;
        break;
    case BSON_TYPE_DATE_TIME:
        n = rm_xdate_iso (v->value.v_datetime, buf);
        break;
    case BSON_TYPE_BINARY: {
        const uint8_t *b = v->value.v_binary.data;
        uint32_t bl = v->value.v_binary.data_len;
        bool uuid = v->value.v_binary.subtype == BSON_SUBTYPE_UUID && bl == 16;
        fmt_t f = c->format;
        char *s;
        if (f == FMT_NONE)
            return hard (err, e, "'format' is needed to convert binData to a string");
        if (f == FMT_AUTO)
            f = uuid ? FMT_UUID : FMT_BASE64;
        s = rm_xalloc (cx, (size_t) bl * 2 + 40);
        switch (f) {
        case FMT_UUID:
            if (!uuid)
                return fail (cx, e, err, v, BSON_TYPE_UTF8, "not a UUID");
            n = write_uuid (b, s);
            break;
        case FMT_HEX:
            n = 0;
            for (uint32_t i = 0; i < bl; i++)
                n += (size_t) snprintf (s + n, 3, "%02X", b[i]);
            break;
        case FMT_UTF8:
            if (!valid_utf8 (b, bl))
                return fail (cx, e, err, v, BSON_TYPE_UTF8, "not valid UTF-8");
            memcpy (s, b, bl);
            n = bl;
            break;
        default:
            n = write_base64 (b, bl, f == FMT_BASE64URL, s);
            break;
        }
        out->value_type = BSON_TYPE_UTF8;
        s[n] = '\0';
        out->value.v_utf8.str = s;
        out->value.v_utf8.len = (uint32_t) n;
        return CV_OK;
    }
    default:
        return unsupported (cx, e, err, v, BSON_TYPE_UTF8);
    }
    set_string_buf (cx, out, buf, n);
    return CV_OK;
}

/* To int or long: lo and hi are the target's range. */
static cv_t
to_integer (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, int target, int64_t *i,
            bson_error_t *err)
{
    bool is_int = target == BSON_TYPE_INT32;
    int64_t lo = is_int ? INT32_MIN : INT64_MIN, hi = is_int ? INT32_MAX : INT64_MAX;
    const char *why;

    switch (v->value_type) {
    case BSON_TYPE_INT32:
        *i = v->value.v_int32;
        return CV_OK;
    case BSON_TYPE_INT64:
        *i = v->value.v_int64;
        if (*i < lo || *i > hi)
            return fail (cx, e, err, v, target, "out of range");
        return CV_OK;
    case BSON_TYPE_BOOL:
        *i = v->value.v_bool;
        return CV_OK;
    case BSON_TYPE_DOUBLE: {
        double d = v->value.v_double;
        if (isnan (d))
            return fail (cx, e, err, v, target, "NaN");
        if (isinf (d))
            return fail (cx, e, err, v, target, "infinity");
        /* The server compares the double itself: 2147483647.5 is out of
         * an int's range although it truncates into it. */
        if (is_int ? (d < (double) INT32_MIN || d > (double) INT32_MAX)
                   : (d < -9223372036854775808.0 || d >= 9223372036854775808.0))
            return fail (cx, e, err, v, target, "out of range");
        *i = (int64_t) d;
        return CV_OK;
    }
    case BSON_TYPE_DECIMAL128:
        if (!dec_trunc (&v->value.v_decimal128, lo, hi, i, &why))
            return fail (cx, e, err, v, target, why);
        return CV_OK;
    case BSON_TYPE_UTF8:
        if (hex_prefixed (v->value.v_utf8.str, v->value.v_utf8.len))
            return fail (cx, e, err, v, target, "hexadecimal input");
        if (!parse_integer (v->value.v_utf8.str, v->value.v_utf8.len, lo, hi, i))
            return fail (cx, e, err, v, target, "not an integer in range");
        return CV_OK;
    case BSON_TYPE_DATE_TIME:
        if (is_int)
            return unsupported (cx, e, err, v, target);
        *i = v->value.v_datetime;
        return CV_OK;
    default:
        return unsupported (cx, e, err, v, target);
    }
}

static cv_t
to_double (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, double *d, bson_error_t *err)
{
    switch (v->value_type) {
    case BSON_TYPE_DOUBLE:
        *d = v->value.v_double;
        return CV_OK;
    case BSON_TYPE_INT32:
        *d = v->value.v_int32;
        return CV_OK;
    case BSON_TYPE_INT64:
        *d = (double) v->value.v_int64;
        return CV_OK;
    case BSON_TYPE_BOOL:
        *d = v->value.v_bool ? 1.0 : 0.0;
        return CV_OK;
    case BSON_TYPE_DATE_TIME:
        *d = (double) v->value.v_datetime;
        return CV_OK;
    case BSON_TYPE_DECIMAL128:
        if (!dec_to_double (&v->value.v_decimal128, d))
            return fail (cx, e, err, v, BSON_TYPE_DOUBLE, "out of a double's range");
        return CV_OK;
    case BSON_TYPE_UTF8:
        if (hex_prefixed (v->value.v_utf8.str, v->value.v_utf8.len))
            return fail (cx, e, err, v, BSON_TYPE_DOUBLE, "hexadecimal input");
        if (!parse_double (cx, v->value.v_utf8.str, v->value.v_utf8.len, d))
            return fail (cx, e, err, v, BSON_TYPE_DOUBLE, "not a number in range");
        return CV_OK;
    default:
        return unsupported (cx, e, err, v, BSON_TYPE_DOUBLE);
    }
}

static cv_t
to_decimal (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, bson_decimal128_t *d,
            bson_error_t *err)
{
    switch (v->value_type) {
    case BSON_TYPE_DECIMAL128:
        *d = v->value.v_decimal128;
        return CV_OK;
    case BSON_TYPE_DOUBLE:
        dec_of_double (v->value.v_double, d);
        return CV_OK;
    case BSON_TYPE_INT32:
        dec_of_int64 (v->value.v_int32, d);
        return CV_OK;
    case BSON_TYPE_INT64:
        dec_of_int64 (v->value.v_int64, d);
        return CV_OK;
    case BSON_TYPE_BOOL:
        dec_of_int64 (v->value.v_bool, d);
        return CV_OK;
    case BSON_TYPE_DATE_TIME:
        dec_of_int64 (v->value.v_datetime, d);
        return CV_OK;
    case BSON_TYPE_UTF8:
        if (hex_prefixed (v->value.v_utf8.str, v->value.v_utf8.len))
            return fail (cx, e, err, v, BSON_TYPE_DECIMAL128, "hexadecimal input");
        if (!parse_decimal (cx, v->value.v_utf8.str, v->value.v_utf8.len, d))
            return fail (cx, e, err, v, BSON_TYPE_DECIMAL128, "not a number in range");
        return CV_OK;
    default:
        return unsupported (cx, e, err, v, BSON_TYPE_DECIMAL128);
    }
}

static cv_t
to_date (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, int64_t *ms, bson_error_t *err)
{
    bson_error_t quiet;
    const char *why;
    switch (v->value_type) {
    case BSON_TYPE_DATE_TIME:
        *ms = v->value.v_datetime;
        return CV_OK;
    case BSON_TYPE_INT64:
        *ms = v->value.v_int64;
        return CV_OK;
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128:
        /* as a long first, with that conversion's failures */
        return to_integer (cx, e, v, BSON_TYPE_INT64, ms, err) == CV_OK
                   ? CV_OK
                   : fail (cx, e, err, v, BSON_TYPE_DATE_TIME,
                           v->value_type == BSON_TYPE_DOUBLE && isnan (v->value.v_double) ? "NaN"
                                                                                         : "out of range");
    case BSON_TYPE_OID:
        *ms = (int64_t) bson_oid_get_time_t (&v->value.v_oid) * 1000;
        return CV_OK;
    case BSON_TYPE_TIMESTAMP:
        *ms = (int64_t) v->value.v_timestamp.timestamp * 1000;
        return CV_OK;
    case BSON_TYPE_UTF8:
        /* Whatever the parser says is a conversion failure, as the
         * server's date parsing raises ConversionFailure. */
        if (!rm_xdate_parse (cx, e, v->value.v_utf8.str, v->value.v_utf8.len, NULL, ms,
                             err ? err : &quiet))
            return CV_FAIL;
        return CV_OK;
    default:
        why = "unsupported conversion";
        return fail (cx, e, err, v, BSON_TYPE_DATE_TIME, why);
    }
}

static cv_t
to_binary (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, const conv_t *c,
           bson_value_t *out, bson_error_t *err)
{
    if (v->value_type == BSON_TYPE_BINARY) {
        if ((int) v->value.v_binary.subtype != c->subtype)
            return fail (cx, e, err, v, BSON_TYPE_BINARY, "a different binData subtype");
        *out = *v;
        return CV_OK;
    }
    if (v->value_type == BSON_TYPE_UTF8) {
        const char *s = v->value.v_utf8.str;
        size_t n = v->value.v_utf8.len, bn = 0;
        uint8_t *b;
        bool ok;
        if (c->format == FMT_NONE)
            return hard (err, e, "'format' (base64, base64url, hex, utf8 or uuid) is needed to "
                                 "convert a string to binData");
        /* 'auto' is a format, only not one a string can be read in: the
         * server counts that a failed conversion, not a bad argument */
        if (c->format == FMT_AUTO)
            return fail (cx, e, err, v, BSON_TYPE_BINARY, "'auto' does not read a string");
        if ((c->format == FMT_UUID) != (c->subtype == BSON_SUBTYPE_UUID))
            return fail (cx, e, err, v, BSON_TYPE_BINARY,
                         "only the 'uuid' format goes with the UUID subtype 4");
        b = rm_xalloc (cx, n + 16);
        switch (c->format) {
        case FMT_UUID:
            ok = parse_uuid (s, n, b);
            bn = 16;
            break;
        case FMT_HEX:
            ok = parse_hex (s, n, b);
            bn = n / 2;
            break;
        case FMT_UTF8:
            ok = valid_utf8 ((const uint8_t *) s, n);
            memcpy (b, s, n);
            bn = n;
            break;
        default:
            ok = parse_base64 (s, n, c->format == FMT_BASE64URL, b, &bn);
            break;
        }
        if (!ok)
            return fail (cx, e, err, v, BSON_TYPE_BINARY, "not in the given format");
        set_binary (cx, out, b, bn, c->subtype);
        return CV_OK;
    }
    return unsupported (cx, e, err, v, BSON_TYPE_BINARY);
}

/* v (not null, undefined or missing) converted as c says. */
static cv_t
convert (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, const conv_t *c,
         bson_value_t *out, bson_error_t *err)
{
    cv_t r;
    int64_t i;
    double d;

    switch (c->target) {
    case BSON_TYPE_UTF8:
        return to_string (cx, e, v, c, out, err);
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
        if ((r = to_integer (cx, e, v, c->target, &i, err)) != CV_OK)
            return r;
        if (c->target == BSON_TYPE_INT32)
            rm_xset_int32 (out, (int32_t) i);
        else
            rm_xset_int64 (out, i);
        return CV_OK;
    case BSON_TYPE_DOUBLE:
        if ((r = to_double (cx, e, v, &d, err)) != CV_OK)
            return r;
        rm_xset_double (out, d);
        return CV_OK;
    case BSON_TYPE_DECIMAL128:
        out->value_type = BSON_TYPE_DECIMAL128;
        return to_decimal (cx, e, v, &out->value.v_decimal128, err);
    case BSON_TYPE_BOOL:
        /* Every type converts: numbers by truthiness, the rest true. */
        rm_xset_bool (out, rm_xval_is_number (v) || v->value_type == BSON_TYPE_BOOL ? rm_xval_truthy (v)
                                                                                   : true);
        return CV_OK;
    case BSON_TYPE_DATE_TIME:
        if ((r = to_date (cx, e, v, &i, err)) != CV_OK)
            return r;
        rm_xset_date (out, i);
        return CV_OK;
    case BSON_TYPE_OID:
        if (v->value_type == BSON_TYPE_OID) {
            *out = *v;
            return CV_OK;
        }
        if (v->value_type != BSON_TYPE_UTF8)
            return unsupported (cx, e, err, v, BSON_TYPE_OID);
        if (v->value.v_utf8.len != 24 || !parse_hex (v->value.v_utf8.str, 24, out->value.v_oid.bytes))
            return fail (cx, e, err, v, BSON_TYPE_OID, "not 24 hexadecimal digits");
        out->value_type = BSON_TYPE_OID;
        return CV_OK;
    case BSON_TYPE_BINARY:
        return to_binary (cx, e, v, c, out, err);
    default:
        /* a type 'to' names but $convert does not make */
        return unsupported (cx, e, err, v, c->target);
    }
}

/* ---- 'to' and 'format' ---- */

static const struct {
    const char *name;
    int code;
} type_names[] = {
    {"double", 1},     {"string", 2},     {"object", 3},     {"array", 4},
    {"binData", 5},    {"undefined", 6},  {"objectId", 7},   {"bool", 8},
    {"date", 9},       {"null", 10},      {"regex", 11},     {"dbPointer", 12},
    {"javascript", 13}, {"symbol", 14},   {"javascriptWithScope", 15},
    {"int", 16},       {"timestamp", 17}, {"long", 18},      {"decimal", 19},
    {"minKey", -1},    {"maxKey", 127},
    /* what $type says of a missing value: a name 'to' takes, though no
     * conversion makes it */
    {"missing", 0},
};

/* A type as 'to' names it (a name or a BSON type number) into c->target;
 * false with err (not a conversion failure) if it names none. One that
 * $convert does not make is kept: converting to it is a failure onError
 * catches. */
static bool
resolve_type (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, conv_t *c, bson_error_t *err)
{
    int code = 0;
    bool found = false;

    if (v->value_type == BSON_TYPE_UTF8) {
        for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
            if (!strcmp (v->value.v_utf8.str, type_names[i].name)) {
                code = type_names[i].code;
                found = true;
            }
        if (!found)
            return rm_xfail (err, e, "unknown type name %s in 'to'", rm_xshow (cx, v));
    } else if (rm_xval_is_number (v)) {
        int64_t i;
        if (!rm_xval_to_int64 (v, &i))
            return rm_xfail (err, e, "numeric 'to' argument %s is not an integer", rm_xshow (cx, v));
        for (size_t k = 0; k < sizeof type_names / sizeof type_names[0]; k++)
            if (type_names[k].code == i && i != 0) {
                code = (int) i;
                found = true;
            }
        if (!found)
            return rm_xfail (err, e, "'to' %s does not correspond to a BSON type", rm_xshow (cx, v));
    } else {
        return rm_xfail (err, e, "'to' must be a string or a number, not %s", rm_xval_type_name (v));
    }
    c->target = code;
    return true;
}

static bool
resolve_subtype (rm_expr_ctx_t *cx, const rm_expr_t *e, const bson_value_t *v, conv_t *c,
                 bson_error_t *err)
{
    int64_t i;
    if (rm_xval_missing (v))
        return true;
    if (!rm_xval_is_number (v) || !rm_xval_to_int64 (v, &i) || i < 0 || i > 255 || (i > 9 && i < 128))
        return rm_xfail (err, e, "'to.subtype' %s is not a binData subtype", rm_xshow (cx, v));
    c->subtype = (int) i;
    return true;
}

/* The type and subtype of 'to' as a document, computed (a field of the
 * document, as 8.0's {type, subtype}); a missing type is a null one. */
static void
to_doc_fields (const bson_value_t *doc, bson_value_t *type, bson_value_t *sub)
{
    bson_iter_t it;

    rm_xset_missing (type);
    if (!rm_xval_iter (doc, &it))
        return;
    while (bson_iter_next (&it)) {
        if (!strcmp (bson_iter_key (&it), "type"))
            *type = *bson_iter_value (&it);
        else if (!strcmp (bson_iter_key (&it), "subtype"))
            *sub = *bson_iter_value (&it);
    }
}

/* $convert's 'to' into c; *none when it is null (the result is null). */
static bool
eval_to (rm_expr_ctx_t *cx, const rm_expr_t *e, conv_t *c, bool *none, bson_error_t *err)
{
    const rm_expr_t *to = e->args[A_TO];
    bson_value_t v, sub;

    *none = false;
    rm_xset_missing (&v);
    rm_xset_missing (&sub);
    if (to->kind == RM_X_OBJECT) {
        /* the 8.0 form {type, subtype} (checked when parsed) */
        for (size_t i = 0; i < to->n; i++) {
            bool is_type = !strcmp (to->names[i], "type");
            if (!rm_xeval (cx, to->args[i], is_type ? &v : &sub, err))
                return false;
        }
    } else if (!rm_xeval (cx, to, &v, err)) {
        return false;
    } else if (v.value_type == BSON_TYPE_DOCUMENT) {
        bson_value_t doc = v;
        to_doc_fields (&doc, &v, &sub);
    }
    if (rm_xval_nullish (&v)) {
        *none = true;
        return true;
    }
    return resolve_type (cx, e, &v, c, err) && resolve_subtype (cx, e, &sub, c, err);
}

static bool
eval_format (rm_expr_ctx_t *cx, const rm_expr_t *e, conv_t *c, bson_error_t *err)
{
    static const struct {
        const char *name;
        fmt_t f;
    } names[] = {{"auto", FMT_AUTO}, {"base64", FMT_BASE64}, {"base64url", FMT_BASE64URL},
                 {"hex", FMT_HEX},   {"utf8", FMT_UTF8},     {"uuid", FMT_UUID}};
    bson_value_t v;

    c->format = FMT_NONE;
    if (!e->args[A_FORMAT])
        return true;
    if (!rm_xeval (cx, e->args[A_FORMAT], &v, err))
        return false;
    /* a format computed per document may be missing there: none given */
    if (rm_xval_nullish (&v))
        return true;
    if (v.value_type == BSON_TYPE_UTF8)
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (!strcmp (v.value.v_utf8.str, names[i].name)) {
                c->format = names[i].f;
                return true;
            }
    return rm_xfail (err, e, "'format' %s is not one of auto, base64, base64url, hex, utf8, uuid",
                     rm_xshow (cx, &v));
}

/* 'to' as a document must be exactly {type, subtype?}. */
static bool
check_convert (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    const rm_expr_t *to = e->args[A_TO];
    bool has_type = false;
    (void) p;
    if (to->kind != RM_X_OBJECT)
        return true;
    for (size_t i = 0; i < to->n; i++) {
        if (!strcmp (to->names[i], "type"))
            has_type = true;
        else if (strcmp (to->names[i], "subtype"))
            return rm_xparse_fail (err, e, "'to' as a document takes only 'type' and 'subtype', not '%s'",
                                   to->names[i]);
    }
    if (!has_type)
        return rm_xparse_fail (err, e, "'to' as a document needs 'type'");
    return true;
}

/* ---- The operators ---- */

static bool
eval_convert (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    conv_t c = {0, 0, FMT_NONE};
    bson_value_t in;
    bool none;
    cv_t r;

    /* The server reads 'to' first, and a bad one is an error even when
     * the input is null; 'format' only once there is something to
     * convert. */
    if (!eval_to (cx, e, &c, &none, err))
        return false;
    if (!rm_xeval (cx, e->args[A_INPUT], &in, err))
        return false;
    if (rm_xval_nullish (&in)) {
        if (e->args[A_ONNULL])
            return rm_xeval (cx, e->args[A_ONNULL], out, err);
        rm_xset_null (out);
        return true;
    }
    if (none) {
        rm_xset_null (out);
        return true;
    }
    if (!eval_format (cx, e, &c, err))
        return false;
    if (!e->args[A_ONERROR])
        return convert (cx, e, &in, &c, out, err) == CV_OK;
    r = convert (cx, e, &in, &c, out, NULL);
    if (r == CV_FAIL)
        return rm_xeval (cx, e->args[A_ONERROR], out, err);
    if (r == CV_HARD)
        return convert (cx, e, &in, &c, out, err) == CV_OK;
    return true;
}

/* The shorthands: $convert with a fixed 'to', no onError or onNull. Each
 * is a row here; its check finds the row once, when parsed (e->data, not
 * owned). */
typedef struct {
    const char *name;
    int target;
} fixed_t;

static const fixed_t fixed_targets[] = {
    {"$toString", BSON_TYPE_UTF8},         {"$toInt", BSON_TYPE_INT32},
    {"$toLong", BSON_TYPE_INT64},          {"$toDouble", BSON_TYPE_DOUBLE},
    {"$toDecimal", BSON_TYPE_DECIMAL128},  {"$toBool", BSON_TYPE_BOOL},
    {"$toDate", BSON_TYPE_DATE_TIME},      {"$toObjectId", BSON_TYPE_OID},
};

static bool
check_to_fixed (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err)
{
    for (size_t i = 0; i < sizeof fixed_targets / sizeof fixed_targets[0]; i++)
        if (!strcmp (e->op->name, fixed_targets[i].name)) {
            e->data = (void *) &fixed_targets[i];
            return true;
        }
    return rm_xparse_fail (err, e, "no conversion by this name");
}

static bool
eval_to_fixed (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    conv_t c = {((const fixed_t *) e->data)->target, 0, FMT_AUTO};
    bson_value_t in;

    if (!rm_xeval (cx, e->args[0], &in, err))
        return false;
    if (rm_xval_nullish (&in)) {
        rm_xset_null (out);
        return true;
    }
    return convert (cx, e, &in, &c, out, err) == CV_OK;
}

/* $toUUID: a string in the uuid format to binData subtype 4. It is the
 * server's $convert to that subtype, so a UUID already (binData subtype 4)
 * comes back as it is and another binData subtype fails as $convert's does;
 * anything else but null is an error. */
static bool
eval_to_uuid (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    conv_t c = {BSON_TYPE_BINARY, BSON_SUBTYPE_UUID, FMT_UUID};
    bson_value_t in;

    if (!rm_xeval (cx, e->args[0], &in, err))
        return false;
    if (rm_xval_nullish (&in)) {
        rm_xset_null (out);
        return true;
    }
    if (in.value_type != BSON_TYPE_UTF8 && in.value_type != BSON_TYPE_BINARY)
        return unsupported (cx, e, err, &in, BSON_TYPE_BINARY) == CV_OK;
    return convert (cx, e, &in, &c, out, err) == CV_OK;
}

static bool
eval_type (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    const char *name;
    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    name = rm_xval_type_name (&v);
    rm_xset_string (cx, out, name, strlen (name));
    return true;
}

static bool
eval_is_number (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    rm_xset_bool (out, rm_xval_is_number (&v));
    return true;
}

static bool
eval_is_array (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    rm_xset_bool (out, v.value_type == BSON_TYPE_ARRAY);
    return true;
}

/* $tsSecond and $tsIncrement: a timestamp's two halves, as longs; null
 * or missing gives null, any other type is an error. */
static bool
eval_ts_part (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    bson_value_t v;
    if (!rm_xeval (cx, e->args[0], &v, err))
        return false;
    if (rm_xval_nullish (&v)) {
        rm_xset_null (out);
        return true;
    }
    if (v.value_type != BSON_TYPE_TIMESTAMP)
        return rm_xfail (err, e, "takes a timestamp, not %s %s", rm_xval_type_name (&v),
                         rm_xshow (cx, &v));
    rm_xset_int64 (out, e->op->name[3] == 'S' ? (int64_t) v.value.v_timestamp.timestamp
                                               : (int64_t) v.value.v_timestamp.increment);
    return true;
}

const rm_xop_t rm_xops_convert[] = {
    {"$tsSecond", eval_ts_part, 1, 1, {NULL}, NULL, NULL},
    {"$tsIncrement", eval_ts_part, 1, 1, {NULL}, NULL, NULL},
    {"$type", eval_type, 1, 1, {NULL}, NULL, NULL},
    {"$isNumber", eval_is_number, 1, 1, {NULL}, NULL, NULL},
    {"$isArray", eval_is_array, 1, 1, {NULL}, NULL, NULL},
    {"$convert", eval_convert, 0, 0, {"*input", "*to", "onError", "onNull", "format", NULL}, NULL,
     check_convert},
    {"$toString", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toInt", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toLong", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toDouble", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toDecimal", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toBool", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toDate", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toObjectId", eval_to_fixed, 1, 1, {NULL}, NULL, check_to_fixed},
    {"$toUUID", eval_to_uuid, 1, 1, {NULL}, NULL, NULL},
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
