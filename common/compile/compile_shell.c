/* A document in mongosh's syntax (compile_impl.h): what `remodel compile
 * --format pipeline` prints by default, so that a pipeline pasted into
 * mongosh (1.x or 2.x) runs as it is, with every value's BSON type kept.
 *
 * Canonical Extended JSON ({"$numberInt": "1"}) is exact but mongosh reads
 * it as plain objects, and inside a pipeline "$numberInt" is then taken
 * for an operator. Relaxed Extended JSON loses types ({"$numberLong"}
 * becomes a plain number, 1.0 an int). mongosh's own constructors keep
 * them: a JavaScript number that is a whole number is sent as an int32,
 * any other as a double, so
 *   int32                 1
 *   double                1.5 (shortest text that reads back the same),
 *                         NaN, Infinity; a whole one Double(2) (2.0 would be
 *                         read as the int32 2)
 *   int64                 NumberLong("5")
 *   decimal128            NumberDecimal("1.10")
 *   date                  ISODate("2024-01-31T00:00:00.000Z"), or
 *                         new Date(MS) outside the years 0-9999
 *   ObjectId, Timestamp   ObjectId("..."), Timestamp({t: T, i: I})
 *   regex, binary         BSONRegExp("pattern", "flags"), BinData(SUB, "base64")
 *   MinKey, MaxKey        MinKey(), MaxKey()
 * and any other type (code, symbol, DBPointer, undefined) as
 * EJSON.deserialize(<its canonical Extended JSON>), exact in mongosh too.
 * Keys and strings are JSON strings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile_impl.h"

/* The text primitives every printer writes with (compile_print.c,
 * compile_mongosh.c and this file): s as it is, s as a quoted JSON string.
 * They sit here, in the lowest printer, so that the printers above call
 * down to it and never the other way. */
void
rm_compile_put_str (rm_buf_t *b, const char *s)
{
    bson_t d = BSON_INITIALIZER;
    char *j, *v;
    BSON_APPEND_UTF8 (&d, "s", s);
    j = bson_as_relaxed_extended_json (&d, NULL);
    /* { "s" : "..." } */
    v = strchr (j, ':') + 2;
    rm_buf_append (b, v, strlen (v) - 2);
    bson_free (j);
    bson_destroy (&d);
}

void
rm_compile_put (rm_buf_t *b, const char *s)
{
    rm_buf_append (b, s, strlen (s));
}

static void
put_double (rm_buf_t *b, double d)
{
    char num[64];
    if (isnan (d)) {
        rm_compile_put (b, "NaN");
        return;
    }
    if (isinf (d)) {
        rm_compile_put (b, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    /* The fewest digits that read back as the same double. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf (num, sizeof num, "%.*g", prec, d);
        if (strtod (num, NULL) == d)
            break;
    }
    /* A whole number (or -0) would be read as an int32. */
    if (d == floor (d)) {
        rm_compile_put (b, "Double(");
        rm_compile_put (b, signbit (d) && d == 0 ? "-0" : num);
        rm_compile_put (b, ")");
    } else {
        rm_compile_put (b, num);
    }
}

static void
put_date (rm_buf_t *b, int64_t ms)
{
    char text[80];
    int64_t secs = ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
    int milli = (int) (ms - secs * 1000);
    time_t t = (time_t) secs;
    struct tm tm;
    if (gmtime_r (&t, &tm) && tm.tm_year + 1900 >= 0 && tm.tm_year + 1900 <= 9999) {
        snprintf (text, sizeof text, "ISODate(\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\")",
                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                  tm.tm_sec, milli);
    } else {
        snprintf (text, sizeof text, "new Date(%lld)", (long long) ms);
    }
    rm_compile_put (b, text);
}

static void
put_base64 (rm_buf_t *b, const uint8_t *data, uint32_t len)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char out[5] = "";
    for (uint32_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t) data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t) data[i + 1] << 8;
        if (i + 2 < len)
            v |= data[i + 2];
        out[0] = digits[v >> 18 & 63];
        out[1] = digits[v >> 12 & 63];
        out[2] = i + 1 < len ? digits[v >> 6 & 63] : '=';
        out[3] = i + 2 < len ? digits[v & 63] : '=';
        rm_compile_put (b, out);
    }
}

static void put_value (rm_buf_t *b, const bson_iter_t *it);

static void
put_container (rm_buf_t *b, const bson_iter_t *it, bool array)
{
    bson_iter_t child;
    bool first = true;
    rm_compile_put (b, array ? "[" : "{");
    if (bson_iter_recurse (it, &child))
        while (bson_iter_next (&child)) {
            rm_compile_put (b, first ? "" : ", ");
            first = false;
            if (!array) {
                rm_compile_put_str (b, bson_iter_key (&child));
                rm_compile_put (b, ": ");
            }
            put_value (b, &child);
        }
    rm_compile_put (b, array ? "]" : "}");
}

/* The exact fallback: {"v": value} in canonical Extended JSON, its value
 * handed to mongosh's EJSON. */
static void
put_ejson (rm_buf_t *b, const bson_iter_t *it)
{
    bson_t d = BSON_INITIALIZER;
    char *j;
    bson_append_value (&d, "v", 1, bson_iter_value ((bson_iter_t *) it));
    j = bson_as_canonical_extended_json (&d, NULL);
    rm_compile_put (b, "EJSON.deserialize(");
    rm_compile_put (b, j);
    rm_compile_put (b, ").v");
    bson_free (j);
    bson_destroy (&d);
}

static void
put_value (rm_buf_t *b, const bson_iter_t *it)
{
    char text[160];
    switch (bson_iter_type (it)) {
    case BSON_TYPE_UTF8:
        rm_compile_put_str (b, bson_iter_utf8 (it, NULL));
        return;
    case BSON_TYPE_INT32:
        snprintf (text, sizeof text, "%d", bson_iter_int32 (it));
        break;
    case BSON_TYPE_INT64:
        snprintf (text, sizeof text, "NumberLong(\"%lld\")", (long long) bson_iter_int64 (it));
        break;
    case BSON_TYPE_DOUBLE:
        put_double (b, bson_iter_double (it));
        return;
    case BSON_TYPE_DECIMAL128: {
        bson_decimal128_t dec;
        char s[BSON_DECIMAL128_STRING];
        bson_iter_decimal128 (it, &dec);
        bson_decimal128_to_string (&dec, s);
        snprintf (text, sizeof text, "NumberDecimal(\"%s\")", s);
        break;
    }
    case BSON_TYPE_BOOL:
        snprintf (text, sizeof text, "%s", bson_iter_bool (it) ? "true" : "false");
        break;
    case BSON_TYPE_NULL:
        snprintf (text, sizeof text, "null");
        break;
    case BSON_TYPE_DATE_TIME:
        put_date (b, bson_iter_date_time (it));
        return;
    case BSON_TYPE_OID: {
        char hex[25];
        bson_oid_to_string (bson_iter_oid (it), hex);
        snprintf (text, sizeof text, "ObjectId(\"%s\")", hex);
        break;
    }
    case BSON_TYPE_TIMESTAMP: {
        uint32_t t, i;
        bson_iter_timestamp (it, &t, &i);
        snprintf (text, sizeof text, "Timestamp({t: %u, i: %u})", t, i);
        break;
    }
    case BSON_TYPE_REGEX: {
        const char *opts, *re = bson_iter_regex (it, &opts);
        rm_compile_put (b, "BSONRegExp(");
        rm_compile_put_str (b, re);
        rm_compile_put (b, ", ");
        rm_compile_put_str (b, opts ? opts : "");
        rm_compile_put (b, ")");
        return;
    }
    case BSON_TYPE_BINARY: {
        bson_subtype_t sub;
        uint32_t len;
        const uint8_t *data;
        bson_iter_binary (it, &sub, &len, &data);
        snprintf (text, sizeof text, "BinData(%d, \"", (int) sub);
        rm_compile_put (b, text);
        put_base64 (b, data, len);
        rm_compile_put (b, "\")");
        return;
    }
    case BSON_TYPE_MINKEY:
        snprintf (text, sizeof text, "MinKey()");
        break;
    case BSON_TYPE_MAXKEY:
        snprintf (text, sizeof text, "MaxKey()");
        break;
    case BSON_TYPE_DOCUMENT:
        put_container (b, it, false);
        return;
    case BSON_TYPE_ARRAY:
        put_container (b, it, true);
        return;
    default:
        put_ejson (b, it);
        return;
    }
    rm_compile_put (b, text);
}

void
rm_compile_put_shell (rm_buf_t *b, const bson_t *doc)
{
    bson_iter_t it;
    bool first = true;
    rm_compile_put (b, "{");
    if (bson_iter_init (&it, doc))
        while (bson_iter_next (&it)) {
            rm_compile_put (b, first ? "" : ", ");
            first = false;
            rm_compile_put_str (b, bson_iter_key (&it));
            rm_compile_put (b, ": ");
            put_value (b, &it);
        }
    rm_compile_put (b, "}");
}

void
rm_compile_put_line (rm_buf_t *b, const bson_t *line, bool canonical)
{
    if (canonical) {
        char *j = bson_as_canonical_extended_json (line, NULL);
        rm_compile_put (b, j);
        bson_free (j);
    } else {
        rm_compile_put_shell (b, line);
    }
    rm_compile_put (b, "\n");
}
