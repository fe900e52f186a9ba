/* Extended JSON v2 out of BSON. The layout follows the Go driver's writer,
 * which bsondump (canonical) and mongoexport (relaxed) print through, so
 * that `remodel show` and those tools give the same bytes: keys and
 * strings escaped as Go's JSON does without HTML escaping, doubles in Go's
 * shortest 'G' form, regex options sorted, relaxed dates in ISO-8601 with
 * trailing zeros of the milliseconds dropped. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remodel/bsondepth.h"
#include "remodel/extjson.h"
#include "remodel/utf8.h"
#include "dtoa_shortest.h"
#include "thread.h"

static void
put (rm_buf_t *out, const char *s)
{
    rm_buf_append (out, s, strlen (s));
}

static void
put_fmt (rm_buf_t *out, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);

static void
put_fmt (rm_buf_t *out, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    int n;
    va_start (ap, fmt);
    n = vsnprintf (tmp, sizeof tmp, fmt, ap);
    va_end (ap);
    rm_buf_append (out, tmp, (size_t) n);
}

/* A JSON string: '"' and '\' escaped, \n \r \t \b \f, other bytes below
 * 0x20 as \u00XX, U+2028/U+2029 escaped, a byte that is not UTF-8 as
 * \ufffd (what Go writes). */
static void
put_string (rm_buf_t *out, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *s = (const uint8_t *) str;
    size_t i = 0, start = 0;

    rm_buf_append (out, "\"", 1);
    while (i < n) {
        uint8_t b = s[i];
        uint32_t cp = 0;
        size_t len;
        if (b < 0x80) {
            char esc[7];
            const char *e = NULL;
            if (b >= 0x20 && b != '"' && b != '\\') {
                i++;
                continue;
            }
            switch (b) {
            case '"': e = "\\\""; break;
            case '\\': e = "\\\\"; break;
            case '\n': e = "\\n"; break;
            case '\r': e = "\\r"; break;
            case '\t': e = "\\t"; break;
            case '\b': e = "\\b"; break;
            case '\f': e = "\\f"; break;
            default:
                memcpy (esc, "\\u00", 4);
                esc[4] = hex[b >> 4];
                esc[5] = hex[b & 0xF];
                esc[6] = '\0';
                e = esc;
            }
            rm_buf_append (out, s + start, i - start);
            put (out, e);
            start = ++i;
            continue;
        }
        len = rm_utf8_decode (s + i, n - i, &cp);
        if (len == 0) {
            rm_buf_append (out, s + start, i - start);
            put (out, "\\ufffd");
            start = ++i;
            continue;
        }
        if (cp == 0x2028 || cp == 0x2029) {
            rm_buf_append (out, s + start, i - start);
            put (out, cp == 0x2028 ? "\\u2028" : "\\u2029");
            i += len;
            start = i;
            continue;
        }
        i += len;
    }
    rm_buf_append (out, s + start, n - start);
    rm_buf_append (out, "\"", 1);
}

void
rm_extjson_double (rm_buf_t *out, double d)
{
    char digits[RM_DTOA_DIGITS];
    int exp, nd;

    if (isnan (d)) {
        put (out, "NaN");
        return;
    }
    if (isinf (d)) {
        put (out, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (d == 0) {
        put (out, signbit (d) ? "-0.0" : "0.0");
        return;
    }
    /* The shortest digits that read back as d, the closest of those, as
     * Go's FormatFloat(-1). */
    if (d < 0)
        rm_buf_append (out, "-", 1);
    nd = rm_dtoa_shortest (d, digits, &exp);
    /* 'G' with the shortest digits: Go decides the exponent form with a
     * precision of 6 whatever the digits, so below 1e-4 and from 1e6 on. */
    if (exp < -4 || exp >= 6) {
        rm_buf_append (out, digits, 1);
        if (nd > 1) {
            rm_buf_append (out, ".", 1);
            rm_buf_append (out, digits + 1, (size_t) nd - 1);
        }
        put_fmt (out, "E%c%02d", exp < 0 ? '-' : '+', abs (exp));
        return;
    }
    if (exp < 0) {
        put (out, "0.");
        for (int i = -1; i > exp; i--)
            rm_buf_append (out, "0", 1);
        rm_buf_append (out, digits, (size_t) nd);
        return;
    }
    /* exp + 1 digits before the point, zeros if the digits run out. */
    for (int i = 0; i <= exp; i++)
        rm_buf_append (out, i < nd ? &digits[i] : "0", 1);
    rm_buf_append (out, ".", 1);
    if (nd > exp + 1)
        rm_buf_append (out, digits + exp + 1, (size_t) (nd - exp - 1));
    else
        rm_buf_append (out, "0", 1);
}

/* Standard base64 with padding. */
static void
put_base64 (rm_buf_t *out, const uint8_t *p, uint32_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[4];
    for (uint32_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t) p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t) p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        q[0] = abc[v >> 18];
        q[1] = abc[(v >> 12) & 63];
        q[2] = i + 1 < n ? abc[(v >> 6) & 63] : '=';
        q[3] = i + 2 < n ? abc[v & 63] : '=';
        rm_buf_append (out, q, 4);
    }
}

/* A relaxed date: ISO-8601 UTC, milliseconds without trailing zeros. */
static void
put_iso_date (rm_buf_t *out, int64_t ms)
{
    time_t secs = (time_t) (ms / 1000);
    int frac = (int) (ms % 1000);
    struct tm tm;
    char text[40];

    if (frac < 0) {
        frac += 1000;
        secs--;
    }
    gmtime_r (&secs, &tm);
    strftime (text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    put (out, "{\"$date\":\"");
    put (out, text);
    if (frac) {
        snprintf (text, sizeof text, ".%03d", frac);
        size_t n = strlen (text);
        while (text[n - 1] == '0')
            n--;
        rm_buf_append (out, text, n);
    }
    put (out, "Z\"}");
}

static void put_document (rm_buf_t *out, bson_iter_t *it, bool array, rm_extjson_mode_t mode,
                          int depth);

/* A document or array `depth` levels below the top whose contents are not
 * written: past RM_BSON_WALK_DEPTH, deeper than any dump remodel reads,
 * only an expression's value can go, and following it would take a stack
 * frame a level (a value 16,000 levels deep overflowed the stack). */
static void
put_cut (rm_buf_t *out, bool array)
{
    put (out, array ? "[...]" : "{...}");
}

/* A value in a container `depth` levels below the top-level document (0:
 * in it). */
static void
put_value (rm_buf_t *out, bson_iter_t *it, rm_extjson_mode_t mode, int depth)
{
    bool canonical = mode == RM_EXTJSON_CANONICAL;
    uint32_t len;
    const char *str;

    switch (bson_iter_type (it)) {
    case BSON_TYPE_DOUBLE: {
        double d = bson_iter_double (it);
        if (canonical || isnan (d) || isinf (d)) {
            put (out, "{\"$numberDouble\":\"");
            rm_extjson_double (out, d);
            put (out, "\"}");
        } else {
            rm_extjson_double (out, d);
        }
        break;
    }
    case BSON_TYPE_UTF8:
        str = bson_iter_utf8 (it, &len);
        put_string (out, str, len);
        break;
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY: {
        bson_iter_t child;
        bool array = bson_iter_type (it) == BSON_TYPE_ARRAY;
        if (depth >= RM_BSON_WALK_DEPTH)
            put_cut (out, array);
        else if (bson_iter_recurse (it, &child))
            put_document (out, &child, array, mode, depth + 1);
        else
            put (out, array ? "[]" : "{}");
        break;
    }
    case BSON_TYPE_BINARY: {
        bson_subtype_t sub;
        const uint8_t *data;
        bson_iter_binary (it, &sub, &len, &data);
        put (out, "{\"$binary\":{\"base64\":\"");
        put_base64 (out, data, len);
        put_fmt (out, "\",\"subType\":\"%02x\"}}", (unsigned) sub);
        break;
    }
    case BSON_TYPE_UNDEFINED:
        put (out, "{\"$undefined\":true}");
        break;
    case BSON_TYPE_OID: {
        char hex[25];
        bson_oid_to_string (bson_iter_oid (it), hex);
        put (out, "{\"$oid\":\"");
        put (out, hex);
        put (out, "\"}");
        break;
    }
    case BSON_TYPE_BOOL:
        put (out, bson_iter_bool (it) ? "true" : "false");
        break;
    case BSON_TYPE_DATE_TIME: {
        int64_t ms = bson_iter_date_time (it);
        /* Years 1970 to 9999 only: 253402300799999 is 9999-12-31T23:59:59.999Z. */
        if (!canonical && ms >= 0 && ms <= INT64_C (253402300799999))
            put_iso_date (out, ms);
        else
            put_fmt (out, "{\"$date\":{\"$numberLong\":\"%" PRId64 "\"}}", ms);
        break;
    }
    case BSON_TYPE_NULL:
        put (out, "null");
        break;
    case BSON_TYPE_REGEX: {
        const char *opts, *pattern = bson_iter_regex (it, &opts);
        char sorted[64];
        size_t n = strlen (opts);
        char *o = n < sizeof sorted ? sorted : bson_malloc (n + 1);
        /* Go sorts the options (by code point; they are ASCII letters). */
        memcpy (o, opts, n + 1);
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && o[j - 1] > o[j]; j--) {
                char t = o[j];
                o[j] = o[j - 1];
                o[j - 1] = t;
            }
        put (out, "{\"$regularExpression\":{\"pattern\":");
        put_string (out, pattern, strlen (pattern));
        put (out, ",\"options\":\"");
        put (out, o);
        put (out, "\"}}");
        if (o != sorted)
            bson_free (o);
        break;
    }
    case BSON_TYPE_DBPOINTER: {
        const bson_oid_t *oid;
        char hex[25];
        bson_iter_dbpointer (it, &len, &str, &oid);
        bson_oid_to_string (oid, hex);
        /* Go writes the namespace as it is, unescaped. */
        put (out, "{\"$dbPointer\":{\"$ref\":\"");
        rm_buf_append (out, str, len);
        put (out, "\",\"$id\":{\"$oid\":\"");
        put (out, hex);
        put (out, "\"}}}");
        break;
    }
    case BSON_TYPE_CODE:
        str = bson_iter_code (it, &len);
        put (out, "{\"$code\":");
        put_string (out, str, len);
        put (out, "}");
        break;
    case BSON_TYPE_SYMBOL:
        str = bson_iter_symbol (it, &len);
        put (out, "{\"$symbol\":");
        put_string (out, str, len);
        put (out, "}");
        break;
    case BSON_TYPE_CODEWSCOPE: {
        uint32_t scope_len;
        const uint8_t *scope;
        bson_t s;
        bson_iter_t child;
        str = bson_iter_codewscope (it, &len, &scope_len, &scope);
        put (out, "{\"$code\":");
        put_string (out, str, len);
        put (out, ",\"$scope\":");
        if (depth >= RM_BSON_WALK_DEPTH)
            put_cut (out, false);
        else if (bson_init_static (&s, scope, scope_len) && bson_iter_init (&child, &s))
            put_document (out, &child, false, mode, depth + 1);
        else
            put (out, "{}");
        put (out, "}");
        break;
    }
    case BSON_TYPE_INT32:
        put_fmt (out, canonical ? "{\"$numberInt\":\"%" PRId32 "\"}" : "%" PRId32,
                 bson_iter_int32 (it));
        break;
    case BSON_TYPE_TIMESTAMP: {
        uint32_t t, i;
        bson_iter_timestamp (it, &t, &i);
        put_fmt (out, "{\"$timestamp\":{\"t\":%" PRIu32 ",\"i\":%" PRIu32 "}}", t, i);
        break;
    }
    case BSON_TYPE_INT64:
        put_fmt (out, canonical ? "{\"$numberLong\":\"%" PRId64 "\"}" : "%" PRId64,
                 bson_iter_int64 (it));
        break;
    case BSON_TYPE_DECIMAL128: {
        bson_decimal128_t dec;
        char text[BSON_DECIMAL128_STRING];
        bson_iter_decimal128 (it, &dec);
        bson_decimal128_to_string (&dec, text);
        put (out, "{\"$numberDecimal\":\"");
        put (out, text);
        put (out, "\"}");
        break;
    }
    case BSON_TYPE_MAXKEY:
        put (out, "{\"$maxKey\":1}");
        break;
    case BSON_TYPE_MINKEY:
        put (out, "{\"$minKey\":1}");
        break;
    default: /* validated documents hold no other type */
        put (out, "null");
        break;
    }
}

static void
put_document (rm_buf_t *out, bson_iter_t *it, bool array, rm_extjson_mode_t mode, int depth)
{
    bool first = true;
    rm_buf_append (out, array ? "[" : "{", 1);
    while (bson_iter_next (it)) {
        if (!first)
            rm_buf_append (out, ",", 1);
        first = false;
        if (!array) {
            put_string (out, bson_iter_key (it), bson_iter_key_len (it));
            rm_buf_append (out, ":", 1);
        }
        put_value (out, it, mode, depth);
    }
    rm_buf_append (out, array ? "]" : "}", 1);
}

/* Tab indentation of compact JSON, as Go's json.Indent(prefix "", indent
 * "\t") does it: a newline after each opening bracket and comma, ": "
 * after keys, empty {} and [] kept on one line. */
static void
indent (rm_buf_t *out, const uint8_t *json, size_t n)
{
    int depth = 0;
    bool in_string = false;

    for (size_t i = 0; i < n; i++) {
        uint8_t c = json[i];
        if (in_string) {
            rm_buf_append (out, &c, 1);
            if (c == '\\' && i + 1 < n)
                rm_buf_append (out, &json[++i], 1);
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
        case '"':
            in_string = true;
            rm_buf_append (out, &c, 1);
            break;
        case '{':
        case '[':
            rm_buf_append (out, &c, 1);
            if (i + 1 < n && (json[i + 1] == '}' || json[i + 1] == ']')) {
                rm_buf_append (out, &json[++i], 1);
                break;
            }
            depth++;
            rm_buf_append (out, "\n", 1);
            for (int d = 0; d < depth; d++)
                rm_buf_append (out, "\t", 1);
            break;
        case '}':
        case ']':
            depth--;
            rm_buf_append (out, "\n", 1);
            for (int d = 0; d < depth; d++)
                rm_buf_append (out, "\t", 1);
            rm_buf_append (out, &c, 1);
            break;
        case ',':
            rm_buf_append (out, ",\n", 2);
            for (int d = 0; d < depth; d++)
                rm_buf_append (out, "\t", 1);
            break;
        case ':':
            rm_buf_append (out, ": ", 2);
            break;
        default:
            rm_buf_append (out, &c, 1);
        }
    }
}

void
rm_extjson_value (rm_buf_t *out, const bson_iter_t *it, rm_extjson_mode_t mode)
{
    bson_iter_t copy = *it;
    put_value (out, &copy, mode, 0);
}

void
rm_extjson_doc (rm_buf_t *out, const uint8_t *doc, size_t len, rm_extjson_mode_t mode, bool pretty)
{
    static __thread rm_buf_t compact; /* reused: no allocation per document */
    static __thread bool compact_freed_at_end;
    bson_t b;
    bson_iter_t it;
    rm_buf_t *dst = pretty ? &compact : out;

    if (pretty && !compact_freed_at_end) {
        rm_thread_keep_buf (&compact);
        compact_freed_at_end = true;
    }
    if (pretty)
        rm_buf_reset (&compact);
    if (!bson_init_static (&b, doc, len) || !bson_iter_init (&it, &b))
        put (dst, "{}");
    else
        put_document (dst, &it, false, mode, 0);
    if (pretty)
        indent (out, compact.data, compact.len);
}
