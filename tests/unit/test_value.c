/* Value order and join keys: a table of values in MongoDB's sort order
 * across every type, numeric edge cases checked against independent
 * oracles (long double, glibc's exact printf), and random values whose keys
 * must be equal exactly when the values compare equal. */
#include <bson/bson.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/value.h"
#include "test.h"

/* Canonical extended JSON, short. */
#define I32(s) "{\"$numberInt\": \"" s "\"}"
#define I64(s) "{\"$numberLong\": \"" s "\"}"
#define DBL(s) "{\"$numberDouble\": \"" s "\"}"
#define DEC(s) "{\"$numberDecimal\": \"" s "\"}"
#define OID(s) "{\"$oid\": \"" s "\"}"
#define BIN(b64, sub) "{\"$binary\": {\"base64\": \"" b64 "\", \"subType\": \"" sub "\"}}"

static uint64_t rng_state = UINT64_C (0x9E3779B97F4A7C15);

static uint64_t
rng (void)
{
    /* xorshift64*, fixed seed: failures reproduce */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C (0x2545F4914F6CDD1D);
}

/* bson_iter_t is over-aligned, so arrays of it need a wrapper. */
typedef struct {
    bson_iter_t it;
} iter_slot_t;

static int
sgn (int c)
{
    return (c > 0) - (c < 0);
}

/* "VALUE" for a failure message; missing for NULL. */
static const char *
describe (const bson_iter_t *it, char *buf, size_t len)
{
    bson_t tmp = BSON_INITIALIZER;
    char *json;

    if (!it) {
        snprintf (buf, len, "missing");
        return buf;
    }
    bson_append_iter (&tmp, "v", 1, it);
    json = bson_as_canonical_extended_json (&tmp, NULL);
    snprintf (buf, len, "%s", json ? json : "?");
    bson_free (json);
    bson_destroy (&tmp);
    return buf;
}

/* An array's JSON as a document's, {"0": a, "1": b, ...}: libbson 1.23
 * (Debian's) fails now and then, in about one process of sixty, to parse
 * $code or $dbPointer as an element of an array ("Error storing Javascript
 * code"), never as a field of a document. Splits at the top-level commas. */
static void
array_as_document (const char *json, char *out, size_t cap)
{
    size_t o = 0, n = 0;
    int depth = 0;
    bool in_string = false;
    o += (size_t) snprintf (out + o, cap - o, "{\"%zu\": ", n++);
    for (const char *p = json + 1; *p && o + 16 < cap; p++) {
        if (in_string) {
            out[o++] = *p;
            if (*p == '\\' && p[1])
                out[o++] = *++p;
            else if (*p == '"')
                in_string = false;
            continue;
        }
        if (*p == '"')
            in_string = true;
        else if (*p == '[' || *p == '{')
            depth++;
        else if ((*p == ']' || *p == '}') && depth > 0)
            depth--;
        else if (*p == ']' && depth == 0)
            break;
        else if (*p == ',' && depth == 0) {
            o += (size_t) snprintf (out + o, cap - o, ", \"%zu\": ", n++);
            continue;
        }
        out[o++] = *p;
    }
    snprintf (out + o, cap - o, "}");
}

/* Parses "{"v": JSON}" into doc and points it at v. */
static bool
parse_value (const char *json, bson_t *doc, bson_iter_t *it)
{
    char text[1024];
    bson_error_t err;

    snprintf (text, sizeof text, "{\"v\": %s}", json);
    if (!bson_init_from_json (doc, text, -1, &err)) {
        fprintf (stderr, "  cannot parse %s: %s\n", json, err.message);
        return false;
    }
    return bson_iter_init_find (it, doc, "v");
}

static bool
keys_equal (const bson_iter_t *a, const bson_iter_t *b)
{
    rm_buf_t ka, kb;
    bool eq;

    rm_buf_init (&ka);
    rm_buf_init (&kb);
    rm_key_append (&ka, a);
    rm_key_append (&kb, b);
    eq = ka.len == kb.len && memcmp (ka.data, kb.data, ka.len) == 0;
    rm_buf_destroy (&ka);
    rm_buf_destroy (&kb);
    return eq;
}

/* The sign of compare(a, b) for two values in extended JSON ("missing" for
 * none), after checking that compare(b, a) is its opposite and that the
 * keys are equal exactly when it is 0. 99 if either does not parse. */
static int
cmp_json (const char *a, const char *b)
{
    bson_t da, db;
    bson_iter_t ia, ib;
    bool miss_a = strcmp (a, "missing") == 0, miss_b = strcmp (b, "missing") == 0;
    int c, r;

    if ((!miss_a && !parse_value (a, &da, &ia)) || (!miss_b && !parse_value (b, &db, &ib)))
        return 99;
    c = sgn (rm_value_compare (miss_a ? NULL : &ia, miss_b ? NULL : &ib));
    r = sgn (rm_value_compare (miss_b ? NULL : &ib, miss_a ? NULL : &ia));
    if (r != -c)
        fprintf (stderr, "  %s vs %s: not antisymmetric (%d, %d)\n", a, b, c, r);
    if ((c == 0) != keys_equal (miss_a ? NULL : &ia, miss_b ? NULL : &ib)) {
        fprintf (stderr, "  %s vs %s: compare %d but keys %s\n", a, b, c,
                 c ? "equal" : "differ");
        c = 98;
    }
    if (!miss_a)
        bson_destroy (&da);
    if (!miss_b)
        bson_destroy (&db);
    return c;
}

#define T_CMP(a, b, want)                                                      \
    do {                                                                       \
        int got_ = cmp_json ((a), (b));                                        \
        if (got_ != (want)) {                                                  \
            fprintf (stderr, "  %s:%d: compare(%s, %s) = %d, want %d\n",      \
                     __FILE__, __LINE__, (a), (b), got_, (want));              \
            t_fail_checks++;                                                   \
        }                                                                      \
    } while (0)

static void
test_buf (void)
{
    rm_buf_t b;
    size_t cap;
    uint8_t bytes[1000];

    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t) i;
    rm_buf_init (&b);
    T_CHECK (b.data == NULL && b.len == 0 && b.cap == 0);
    rm_buf_append (&b, NULL, 0);
    T_CHECK (b.len == 0);
    for (size_t i = 0; i < sizeof bytes; i++)
        rm_buf_append (&b, bytes + i, 1);
    T_CHECK (b.len == sizeof bytes && b.cap >= b.len);
    T_CHECK (memcmp (b.data, bytes, sizeof bytes) == 0);
    cap = b.cap;
    rm_buf_reset (&b);
    T_CHECK (b.len == 0 && b.cap == cap && b.data != NULL);
    rm_buf_append (&b, bytes, 10);
    rm_buf_append (&b, bytes + 10, sizeof bytes - 10);
    T_CHECK (b.cap == cap); /* refilling to the same size reuses the memory */
    T_CHECK (memcmp (b.data, bytes, sizeof bytes) == 0);
    rm_buf_destroy (&b);
    T_CHECK (b.data == NULL && b.len == 0 && b.cap == 0);
}

/* ---- The order table --------------------------------------------------
 * Each line is one group of equal values; groups ascend. */
static const char *const order_table[] = {
    "[{\"$minKey\": 1}]",
    "[{\"$undefined\": true}]", /* the server's canonical type 0, below null */
#define NULL_GROUP 2
    "[null]", /* and missing, added by the test */

    /* Numbers: NaN lowest, then by exact value across the four types. */
    "[" DBL ("NaN") "," DEC ("NaN") "," DEC ("-NaN") "]",
    "[" DBL ("-Infinity") "," DEC ("-Infinity") "]",
    "[" DEC ("-9.999999999999999999999999999999999E+6144") "]",
    "[" DEC ("-1E+6000") "]",
    "[" DBL ("-1.7976931348623157e308") "]",
    "[" DEC ("-1.797693134862315708145274237317043E+308") "]", /* DBL_MAX cut to 34 digits */
    "[" DBL ("-18446744073709551616") "," DEC ("-18446744073709551616") "]",
    "[" DEC ("-9223372036854775809") "]",
    "[" I64 ("-9223372036854775808") "," DBL ("-9223372036854775808") "," DEC (
        "-9223372036854775808") "," DEC ("-9.223372036854775808E+18") "]",
    "[" I64 ("-9223372036854775807") "," DEC ("-9223372036854775807") "]",
    "[" DBL ("-9223372036854774784") "]", /* the next double above -2^63 */
    "[" I64 ("-9007199254740993") "," DEC ("-9007199254740993") "]",
    "[" I64 ("-9007199254740992") "," DBL ("-9007199254740992") "]",
    "[" I32 ("-1") "," I64 ("-1") "," DBL ("-1") "," DEC ("-1") "," DEC ("-1.000") "," DEC (
        "-0.1E+1") "]",
    "[" DBL ("-0.5") "," DEC ("-0.50") "]",
    "[" DEC ("-1E-6176") "]",
    "[" I32 ("0") "," I64 ("0") "," DBL ("0") "," DBL ("-0.0") "," DEC ("0") "," DEC (
        "-0") "," DEC ("0E+6000") "," DEC ("-0E-6000") "]",
    "[" DEC ("1E-6176") "]",
    "[" DEC ("4.940656458412465441765687928682213E-324") "]",
    "[" DBL ("4.9406564584124654e-324") "]", /* the smallest subnormal */
    "[" DEC ("4.940656458412465441765687928682214E-324") "]",
    "[" DEC ("0.1") "]",
    "[" DEC ("0.1000000000000000055511151231257827") "]",
    "[" DBL ("0.1") "]", /* 0.1000000000000000055511151231257827021181583404541015625 */
    "[" DEC ("0.1000000000000000055511151231257828") "]",
    "[" DBL ("0.5") "," DEC ("0.5") "," DEC ("5E-1") "," DEC ("0.5000") "]",
    "[" I32 ("1") "," I64 ("1") "," DBL ("1") "," DEC ("1") "," DEC ("1.0") "," DEC (
        "1.00") "," DEC ("0.1E+1") "," DEC ("1000E-3") "]",
    "[" DBL ("1.0000000000000002") "]",
    "[" I32 ("2147483647") "," I64 ("2147483647") "," DBL ("2147483647") "," DEC (
        "2147483647") "]",
    "[" I64 ("9007199254740992") "," DBL ("9007199254740992") "," DEC ("9007199254740992") "]",
    "[" I64 ("9007199254740993") "," DEC ("9007199254740993") "," DEC (
        "9.007199254740993E+15") "]",
    "[" I64 ("9007199254740994") "," DBL ("9007199254740994") "]",
    "[" DBL ("9223372036854774784") "]", /* the largest double below 2^63 */
    "[" I64 ("9223372036854775807") "," DEC ("9223372036854775807") "]",
    "[" DBL ("9.223372036854775807e18") "," DEC ("9223372036854775808") "]", /* 2^63 */
    "[" DEC ("9223372036854775809") "]",
    "[" DBL ("1e22") "," DEC ("1E+22") "," DEC ("10000000000000000000000") "]",
    "[" DBL ("1e23") "]", /* 99999999999999991611392 */
    "[" DEC ("1E+23") "]",
    "[" DEC ("1.797693134862315708145274237317043E+308") "]",
    "[" DBL ("1.7976931348623157e308") "]",
    "[" DEC ("1E+6000") "]",
    "[" DEC ("9.999999999999999999999999999999999E+6144") "]",
    "[" DBL ("Infinity") "," DEC ("Infinity") "]",

    /* Strings and symbols: bytes, then length. */
    "[\"\", {\"$symbol\": \"\"}]",
    "[\"\\u0000\"]",
    "[\"a\", {\"$symbol\": \"a\"}]",
    "[\"a\\u0000\"]",
    "[\"a\\u0000b\"]",
    "[\"a\\u0001\"]",
    "[\"ab\"]",
    "[\"b\", {\"$symbol\": \"b\"}]",
    "[\"\\u00e9\"]",

    /* Objects: per field, type class, then name, then value. */
    "[{}]",
    "[{\"a\": null}]",
    "[{\"b\": null}]", /* null < number decides before the names */
    "[{\"a\": " I32 ("1") "}, {\"a\": " DBL ("1") "}, {\"a\": " I64 ("1") "}, {\"a\": " DEC (
        "1.0") "}]",
    "[{\"a\": " I32 ("1") ", \"b\": " I32 ("1") "}]",
    "[{\"a\": " I32 ("2") "}]",
    "[{\"b\": " I32 ("1") "}]",
    "[{\"a\": \"x\"}]",
    "[{\"a\": {}}]",
    "[{\"a\": []}]",
    "[{\"a\": {\"$maxKey\": 1}}]",

    /* Arrays: element by element, a prefix first. */
    "[[]]",
    "[[{\"$minKey\": 1}]]",
    "[[null]]",
    "[[" I32 ("1") "], [" DBL ("1") "], [" DEC ("1") "]]",
    "[[" I32 ("1") ", " I32 ("2") "]]",
    "[[" I32 ("1") ", \"a\"]]",
    "[[" I32 ("2") "]]",
    "[[" I32 ("2") ", " I32 ("1") "]]",
    "[[{}]]",
    "[[[]]]",

    /* BinData: length, then subtype, then bytes. */
    "[" BIN ("", "80") "]",
    "[" BIN ("YQ==", "00") "]", /* "a" */
    "[" BIN ("Yg==", "00") "]", /* "b" */
    "[" BIN ("YQ==", "05") "]",
    "[" BIN ("YWE=", "00") "]", /* "aa" */

    "[" OID ("000000000000000000000000") "]",
    "[" OID ("000000000000000000000001") "]",
    "[" OID ("0000000000000000000000ff") "]",
    "[" OID ("ffffffffffffffffffffffff") "]",

    "[false]",
    "[true]",

    /* Dates: signed. */
    "[{\"$date\": " I64 ("-62135596800000") "}]",
    "[{\"$date\": " I64 ("-1") "}]",
    "[{\"$date\": " I64 ("0") "}]",
    "[{\"$date\": " I64 ("1") "}]",

    /* Timestamps: unsigned, t then i. */
    "[{\"$timestamp\": {\"t\": 0, \"i\": 0}}]",
    "[{\"$timestamp\": {\"t\": 1, \"i\": 4294967295}}]",
    "[{\"$timestamp\": {\"t\": 2, \"i\": 0}}]",
    "[{\"$timestamp\": {\"t\": 4294967295, \"i\": 0}}]",

    "[{\"$regularExpression\": {\"pattern\": \"a\", \"options\": \"\"}}]",
    "[{\"$regularExpression\": {\"pattern\": \"a\", \"options\": \"i\"}}]",
    "[{\"$regularExpression\": {\"pattern\": \"a\", \"options\": \"ix\"}}]",
    "[{\"$regularExpression\": {\"pattern\": \"b\", \"options\": \"\"}}]",

    /* DBPointer: namespace length, namespace, ObjectId. */
    "[{\"$dbPointer\": {\"$ref\": \"b\", \"$id\": " OID ("000000000000000000000001") "}}]",
    "[{\"$dbPointer\": {\"$ref\": \"aa\", \"$id\": " OID ("000000000000000000000000") "}}]",
    "[{\"$dbPointer\": {\"$ref\": \"aa\", \"$id\": " OID ("000000000000000000000001") "}}]",
    "[{\"$dbPointer\": {\"$ref\": \"ab\", \"$id\": " OID ("000000000000000000000000") "}}]",

    "[{\"$code\": \"\"}]",
    "[{\"$code\": \"a\"}]",
    "[{\"$code\": \"b\"}]",

    /* Code with scope: the code, then the scope as a document. */
    "[{\"$code\": \"a\", \"$scope\": {}}]",
    "[{\"$code\": \"a\", \"$scope\": {\"x\": null}}]",
    "[{\"$code\": \"a\", \"$scope\": {\"x\": " I32 ("1") "}}, {\"$code\": \"a\", \"$scope\": "
    "{\"x\": " DBL ("1") "}}]",
    "[{\"$code\": \"a\", \"$scope\": {\"x\": " I32 ("2") "}}]",
    "[{\"$code\": \"b\", \"$scope\": {}}]",

    "[{\"$maxKey\": 1}]",
};

#define N_GROUPS (sizeof order_table / sizeof order_table[0])
#define MAX_VALUES 512

static void
test_order_table (void)
{
    bson_t all = BSON_INITIALIZER;
    static iter_slot_t iters[MAX_VALUES];
    const bson_iter_t *v[MAX_VALUES];
    int group[MAX_VALUES];
    size_t n = 0, bad = 0;
    bson_iter_t it;
    char key[16], da[256], db[256];

    /* Every value goes into one array, so that they are read the way a
     * reader reads them: from a document's bytes. */
    for (size_t g = 0; g < N_GROUPS; g++) {
        bson_t doc;
        bson_iter_t gi, vi;
        char as_doc[900];
        array_as_document (order_table[g], as_doc, sizeof as_doc);
        if (!parse_value (as_doc, &doc, &gi) || !bson_iter_recurse (&gi, &vi)) {
            T_CHECK (!"table line parses");
            continue;
        }
        while (bson_iter_next (&vi) && n < MAX_VALUES) {
            snprintf (key, sizeof key, "%zu", n);
            bson_append_value (&all, key, -1, bson_iter_value (&vi));
            group[n++] = (int) g;
        }
        bson_destroy (&doc);
    }
    T_CHECK (bson_iter_init (&it, &all));
    for (size_t i = 0; i < n && bson_iter_next (&it); i++) {
        iters[i].it = it;
        v[i] = &iters[i].it;
    }
    T_CHECK (v[0] && BSON_ITER_HOLDS_MINKEY (v[0]));
    T_CHECK (n >= 2 && BSON_ITER_HOLDS_MAXKEY (v[n - 1]));
    /* missing is in the null group */
    if (n < MAX_VALUES) {
        v[n] = NULL;
        group[n++] = NULL_GROUP;
    }

    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            int want = sgn (group[i] - group[j]);
            int got = sgn (rm_value_compare (v[i], v[j]));
            bool keq = keys_equal (v[i], v[j]);
            if (got != want || keq != (want == 0)) {
                if (bad++ < 10)
                    fprintf (stderr, "  compare(%s, %s) = %d, want %d; keys %s\n",
                             describe (v[i], da, sizeof da), describe (v[j], db, sizeof db),
                             got, want, keq ? "equal" : "differ");
            }
        }
        /* the canonical type never goes down along the table */
        if (i > 0 && v[i] && v[i - 1])
            T_CHECK (rm_value_canonical_type (bson_iter_type (v[i - 1])) <=
                     rm_value_canonical_type (bson_iter_type (v[i])));
    }
    T_CHECK (bad == 0);
    printf ("  order table: %zu values in %zu groups, %zu pairs\n", n, N_GROUPS, n * n);
    bson_destroy (&all);
}

static void
test_canonical_types (void)
{
    T_CHECK (rm_value_canonical_type (BSON_TYPE_MINKEY) <
             rm_value_canonical_type (BSON_TYPE_UNDEFINED));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_UNDEFINED) <
             rm_value_canonical_type (BSON_TYPE_NULL));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_EOD) == rm_value_canonical_type (BSON_TYPE_NULL));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_INT32) ==
             rm_value_canonical_type (BSON_TYPE_DECIMAL128));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_INT64) ==
             rm_value_canonical_type (BSON_TYPE_DOUBLE));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_SYMBOL) ==
             rm_value_canonical_type (BSON_TYPE_UTF8));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_REGEX) <
             rm_value_canonical_type (BSON_TYPE_DBPOINTER));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_DBPOINTER) <
             rm_value_canonical_type (BSON_TYPE_CODE));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_CODE) <
             rm_value_canonical_type (BSON_TYPE_CODEWSCOPE));
    T_CHECK (rm_value_canonical_type (BSON_TYPE_CODEWSCOPE) <
             rm_value_canonical_type (BSON_TYPE_MAXKEY));
}

/* ---- Numeric edge cases ------------------------------------------------ */

static void
test_numbers_edges (void)
{
    /* int64 against doubles near its ends: exact, no rounding to double */
    T_CMP (I64 ("9223372036854775807"), DBL ("9.223372036854775807e18"), -1);
    T_CMP (I64 ("9223372036854775807"), DBL ("9223372036854774784"), 1);
    T_CMP (I64 ("9223372036854775806"), DBL ("9223372036854774784"), 1);
    T_CMP (I64 ("-9223372036854775808"), DBL ("-9223372036854775808"), 0);
    T_CMP (I64 ("-9223372036854775808"), DBL ("-9223372036854777856"), 1);
    T_CMP (I64 ("-9223372036854775807"), DBL ("-9223372036854775808"), 1);
    T_CMP (I64 ("9223372036854775807"), DBL ("Infinity"), -1);
    T_CMP (I64 ("-9223372036854775808"), DBL ("-Infinity"), 1);
    /* 2^53 + 1 is no double: it is above 2^53 and below 2^53 + 2 */
    T_CMP (I64 ("9007199254740993"), DBL ("9007199254740992"), 1);
    T_CMP (I64 ("9007199254740993"), DBL ("9007199254740994"), -1);
    T_CMP (I64 ("9007199254740992"), DBL ("9007199254740992"), 0);
    T_CMP (I64 ("3"), DBL ("3.5"), -1);
    T_CMP (I64 ("-3"), DBL ("-3.5"), 1);
    T_CMP (I64 ("-3"), DBL ("-2.5"), -1);
    T_CMP (I32 ("0"), DBL ("-0.0"), 0);
    T_CMP (I32 ("0"), DBL ("4.9406564584124654e-324"), -1);
    T_CMP (I32 ("0"), DBL ("-4.9406564584124654e-324"), 1);

    /* decimal128 against the others */
    T_CMP (DEC ("1.0"), I32 ("1"), 0);
    T_CMP (DEC ("1.00"), I64 ("1"), 0);
    T_CMP (DEC ("1.00"), DBL ("1"), 0);
    T_CMP (DEC ("0.1"), DBL ("0.1"), -1); /* the double is 0.1000000000000000055... */
    T_CMP (DEC ("0.3"), DBL ("0.3"), 1);  /* the double is 0.2999999999999999888... */
    T_CMP (DEC ("0.5"), DBL ("0.5"), 0);
    T_CMP (DEC ("-0.125"), DBL ("-0.125"), 0);
    T_CMP (DEC ("9.094947017729282379150390625E-13"), DBL ("9.094947017729282379150390625e-13"),
           0); /* 2^-40 exactly */
    T_CMP (DEC ("1E+22"), DBL ("1e22"), 0); /* 10^22 = 2^22 * 5^22 fits a double */
    T_CMP (DEC ("1E+23"), DBL ("1e23"), 1);
    T_CMP (DEC ("9223372036854775807"), I64 ("9223372036854775807"), 0);
    T_CMP (DEC ("9223372036854775807.5"), I64 ("9223372036854775807"), 1);
    T_CMP (DEC ("-9223372036854775808.5"), I64 ("-9223372036854775808"), -1);
    T_CMP (DEC ("9223372036854775808"), DBL ("9223372036854775808"), 0);
    T_CMP (DEC ("9223372036854775807"), DBL ("9223372036854775808"), -1);
    T_CMP (DEC ("18446744073709551616"), DBL ("18446744073709551616"), 0);
    T_CMP (DEC ("1180591620717411303424"), DBL ("1180591620717411303424"), 0); /* 2^70 */
    T_CMP (DEC ("1180591620717411303425"), DBL ("1180591620717411303424"), 1);

    /* NaN: equal to NaN, below every number, above null */
    T_CMP (DBL ("NaN"), DEC ("NaN"), 0);
    T_CMP (DBL ("NaN"), DBL ("NaN"), 0);
    T_CMP (DBL ("NaN"), DBL ("-Infinity"), -1);
    T_CMP (DEC ("NaN"), DEC ("-Infinity"), -1);
    T_CMP (DEC ("NaN"), I64 ("-9223372036854775808"), -1);
    T_CMP (DBL ("NaN"), "null", 1);
    T_CMP (DEC ("NaN"), "missing", 1);

    /* zeros and infinities */
    T_CMP (DBL ("-0.0"), DEC ("-0E+5"), 0);
    T_CMP (DEC ("-0"), DEC ("0E-6176"), 0);
    T_CMP (DBL ("Infinity"), DEC ("Infinity"), 0);
    T_CMP (DBL ("-Infinity"), DEC ("-Infinity"), 0);
    T_CMP (DBL ("Infinity"), DEC ("9.999999999999999999999999999999999E+6144"), 1);
    T_CMP (DEC ("-Infinity"), DBL ("-1.7976931348623157e308"), -1);

    /* decimal exponents far outside a double's range */
    T_CMP (DEC ("1E+6111"), DBL ("1.7976931348623157e308"), 1);
    T_CMP (DEC ("1E-6176"), DBL ("4.9406564584124654e-324"), -1);
    T_CMP (DEC ("1E-6176"), I32 ("0"), 1);
    T_CMP (DEC ("-1E-6176"), I32 ("0"), -1);
    T_CMP (DEC ("1E+6111"), DEC ("1E+6110"), 1);
    T_CMP (DEC ("1000000000000000000000000000000000E+6111"), DEC ("1E+6144"), 0);
    T_CMP (DEC ("1E+6144"), DEC ("9.999999999999999999999999999999999E+6143"), 1);
    T_CMP (DEC ("4.940656458412465441765687928682213E-324"), DBL ("4.9406564584124654e-324"),
           -1);
    T_CMP (DEC ("4.940656458412465441765687928682214E-324"), DBL ("4.9406564584124654e-324"),
           1);
    T_CMP (DEC ("2.225073858507201136057409796709131E-308"), DBL ("2.2250738585072014e-308"),
           -1); /* DBL_MIN, the smallest normal */
    T_CMP (DEC ("2.225073858507201383090232717332404E-308"), DBL ("2.2250738585072014e-308"),
           -1);
    T_CMP (DEC ("2.225073858507201383090232717332405E-308"), DBL ("2.2250738585072014e-308"),
           1);
}

/* Decimals written as raw bits: non-canonical coefficients, payloads. */
static void
test_decimal_encodings (void)
{
    struct {
        uint64_t high, low;
        const char *equals; /* extended JSON of an equal value */
    } cases[] = {
        /* coefficient 10^34: above 10^34 - 1, non-canonical, reads as 0 */
        {UINT64_C (0x3040000000000000) | UINT64_C (0x1ed09bead87c0), UINT64_C (0x378d8e6400000000),
         I32 ("0")},
        /* coefficient 10^34 - 1: canonical */
        {UINT64_C (0x3040000000000000) | UINT64_C (0x1ed09bead87c0), UINT64_C (0x378d8e63ffffffff),
         DEC ("9999999999999999999999999999999999")},
        /* the "11" form: coefficient >= 2^113, always non-canonical: 0 */
        {UINT64_C (0x6000000000000000) | UINT64_C (0x0000800000000000), 5, I32 ("0")},
        {UINT64_C (0xe000000000000000), 0, I32 ("0")}, /* and -0 */
        /* a negative zero with an odd exponent */
        {UINT64_C (0xb040000000000000), 0, DBL ("0")},
        /* signaling NaN, quiet NaN with a payload, negative NaN: all NaN */
        {UINT64_C (0x7e00000000000000), 0, DBL ("NaN")},
        {UINT64_C (0x7c00000000000000), 12345, DBL ("NaN")},
        {UINT64_C (0xfc00000000000000), 0, DBL ("NaN")},
        /* infinity with junk in the low bits */
        {UINT64_C (0x7800000000000001), 99, DBL ("Infinity")},
        {UINT64_C (0xf800000000000000), 0, DBL ("-Infinity")},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bson_t doc = BSON_INITIALIZER, other;
        bson_decimal128_t d = {.low = cases[i].low, .high = cases[i].high};
        bson_iter_t a, b;

        bson_append_decimal128 (&doc, "v", 1, &d);
        T_CHECK (bson_iter_init_find (&a, &doc, "v"));
        if (!parse_value (cases[i].equals, &other, &b)) {
            T_CHECK (!"parses");
            continue;
        }
        if (rm_value_compare (&a, &b) != 0 || !keys_equal (&a, &b)) {
            fprintf (stderr, "  decimal %016" PRIx64 " %016" PRIx64 " should equal %s\n",
                     cases[i].high, cases[i].low, cases[i].equals);
            t_fail_checks++;
        }
        bson_destroy (&doc);
        bson_destroy (&other);
    }
}

/* A double's bits as a double and back, without libm. */
static double
dbl_from_bits (uint64_t bits)
{
    double d;
    memcpy (&d, &bits, sizeof d);
    return d;
}

static uint64_t
dbl_bits (double d)
{
    uint64_t bits;
    memcpy (&bits, &d, sizeof bits);
    return bits;
}

/* int64 against double, against long double arithmetic where long double
 * holds every int64 and double exactly (x86 and 128-bit long doubles). */
static void
test_int64_double_oracle (void)
{
#if LDBL_MANT_DIG >= 64
    bson_t doc = BSON_INITIALIZER;
    bson_iter_t ia, ib;
    int bad = 0, checked = 0;
    const int64_t anchors[] = {0, 1, -1, INT64_C (1) << 53, -(INT64_C (1) << 53), INT64_MAX,
                               INT64_MIN, INT64_C (1) << 62, INT64_MAX - 1023, INT64_MIN + 1};

    for (int n = 0; n < 200000; n++) {
        int64_t i;
        double d;
        int want, got;

        /* near the interesting places, or anywhere */
        if (n % 3 == 0)
            i = (int64_t) rng ();
        else
            /* wrapping past the ends is fine: any int64 will do */
            i = (int64_t) ((uint64_t) anchors[rng () % (sizeof anchors / sizeof anchors[0])] +
                           rng () % 4096 - 2048);
        switch (rng () % 4) {
        case 0: /* the double nearest i, or a neighbour of it */
            d = (double) i;
            if (d != 0 && rng () % 2)
                d = dbl_from_bits (dbl_bits (d) + (rng () % 2 ? 1 : -1));
            break;
        case 1: /* any finite double */
            do
                d = dbl_from_bits (rng ());
            while (isnan (d) || isinf (d));
            break;
        case 2: /* i and a half */
            d = (double) i + 0.5;
            break;
        default: /* a random double of int64-ish magnitude */
            d = (double) (int64_t) rng () / (double) (1 + rng () % 1000);
            break;
        }
        want = (long double) i < (long double) d ? -1 : (long double) i > (long double) d ? 1 : 0;

        bson_reinit (&doc);
        bson_append_int64 (&doc, "a", 1, i);
        bson_append_double (&doc, "b", 1, d);
        bson_iter_init_find (&ia, &doc, "a");
        bson_iter_init_find (&ib, &doc, "b");
        got = sgn (rm_value_compare (&ia, &ib));
        checked++;
        if (got != want || sgn (rm_value_compare (&ib, &ia)) != -want ||
            keys_equal (&ia, &ib) != (want == 0)) {
            if (bad++ < 5)
                fprintf (stderr, "  int64 %" PRId64 " vs double %.17g: got %d, want %d\n", i, d,
                         got, want);
        }
    }
    T_CHECK (bad == 0);
    printf ("  int64/double: %d pairs against long double\n", checked);
    bson_destroy (&doc);
#else
    printf ("  int64/double oracle skipped: long double is not wide enough\n");
#endif
}

/* The exact decimal expansion of a positive finite double: glibc's printf
 * prints doubles exactly, and 800 digits after the point hold any of them
 * (at most 767 significant digits). digits gets the significant digits
 * without trailing zeros, *exp the power of ten of the first. */
static bool
exact_decimal (double d, char *digits, size_t cap, int *exp)
{
    char text[900];
    size_t n = 0;
    const char *p = text;

    snprintf (text, sizeof text, "%.800e", d);
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && n + 1 < cap)
            digits[n++] = *p;
    if (*p != 'e')
        return false;
    *exp = atoi (p + 1);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return true;
}

/* Decimal string "D.DDDE<exp>" from up to 34 digits. */
static void
decimal_text (char *out, size_t cap, bool neg, const char *digits, int exp)
{
    snprintf (out, cap, "%s%c%s%sE%+d", neg ? "-" : "", digits[0], digits[1] ? "." : "",
              digits + 1, exp);
}

/* decimal128 against double: the double's exact expansion cut to 34 digits
 * is below it (equal when it has no more digits), and one unit more in the
 * 34th digit is above it. */
static void
test_decimal_double_oracle (void)
{
    bson_t doc = BSON_INITIALIZER;
    int bad = 0, checked = 0, equal = 0;

    for (int n = 0; n < 20000; n++) {
        char exact[900], cut[40], up[40], text[80];
        int exp, up_exp;
        size_t len;
        bool neg = rng () % 2;
        double d;

        if (n % 2) { /* anywhere: random bits */
            do
                d = dbl_from_bits (rng () & ~(UINT64_C (1) << 63));
            while (isnan (d) || isinf (d) || d == 0);
        } else { /* short expansions, often exact in 34 digits */
            int64_t m = (int64_t) (rng () % (UINT64_C (1) << (1 + rng () % 53))) + 1;
            int e = (int) (rng () % 120) - 60;
            d = (double) m;
            while (e > 0) {
                d *= 2;
                e--;
            }
            while (e < 0) {
                d /= 2;
                e++;
            }
        }
        if (!exact_decimal (d, exact, sizeof exact, &exp)) {
            T_CHECK (!"printf gives an exponent");
            break;
        }
        len = strlen (exact);
        snprintf (cut, sizeof cut, "%.34s", exact);

        /* one unit in the 34th place (or the last place if fewer) */
        snprintf (up, sizeof up, "%s", cut);
        up_exp = exp;
        {
            int i = (int) strlen (up) - 1;
            while (i >= 0 && up[i] == '9')
                up[i--] = '0';
            if (i >= 0) {
                up[i]++;
            } else { /* 999... + 1: 1000... with the exponent one up */
                memmove (up + 1, up, strlen (up) + 1);
                up[0] = '1';
                up[strlen (up) - 1] = '\0';
                up_exp++;
            }
        }

        for (int which = 0; which < 2; which++) {
            bson_decimal128_t dec;
            bson_iter_t ia, ib;
            int want, got;

            decimal_text (text, sizeof text, neg, which ? up : cut, which ? up_exp : exp);
            if (!bson_decimal128_from_string (text, &dec)) {
                T_CHECK (!"decimal parses");
                continue;
            }
            want = which ? 1 : (len <= 34 ? 0 : -1);
            if (neg)
                want = -want;
            bson_reinit (&doc);
            bson_append_decimal128 (&doc, "a", 1, &dec);
            bson_append_double (&doc, "b", 1, neg ? -d : d);
            bson_iter_init_find (&ia, &doc, "a");
            bson_iter_init_find (&ib, &doc, "b");
            got = sgn (rm_value_compare (&ia, &ib));
            checked++;
            equal += want == 0;
            if (got != want || sgn (rm_value_compare (&ib, &ia)) != -want ||
                keys_equal (&ia, &ib) != (want == 0)) {
                if (bad++ < 5)
                    fprintf (stderr, "  decimal %s vs double %.17g: got %d, want %d\n", text,
                             neg ? -d : d, got, want);
            }
        }
    }
    T_CHECK (bad == 0);
    T_CHECK (equal > 1000); /* the equal case was exercised */
    printf ("  decimal/double: %d pairs against exact printf, %d equal\n", checked, equal);
    bson_destroy (&doc);
}

/* decimal128 against int64, written in several equal forms and off by a
 * fraction. */
static void
test_decimal_int64_oracle (void)
{
    bson_t doc = BSON_INITIALIZER;
    int bad = 0;

    for (int n = 0; n < 20000; n++) {
        int64_t i = n % 2 ? (int64_t) rng () : (int64_t) (rng () % 2001) - 1000;
        char text[64];
        int form = (int) (rng () % 5), want;
        bson_decimal128_t dec;
        bson_iter_t ia, ib;

        switch (form) {
        case 0:
            snprintf (text, sizeof text, "%" PRId64, i);
            want = 0;
            break;
        case 1:
            snprintf (text, sizeof text, "%" PRId64 ".000", i);
            want = 0;
            break;
        case 2:
            snprintf (text, sizeof text, "%" PRId64 "00E-2", i);
            want = 0;
            break;
        case 3: /* i and a half, away from zero */
            snprintf (text, sizeof text, "%" PRId64 ".5", i);
            want = i < 0 ? -1 : 1;
            break;
        default: /* i and 10^-15 away from zero: 34 digits at most */
            snprintf (text, sizeof text, "%" PRId64 ".000000000000001", i);
            want = i < 0 ? -1 : 1;
            break;
        }
        if (!bson_decimal128_from_string (text, &dec)) {
            T_CHECK (!"decimal parses");
            continue;
        }
        bson_reinit (&doc);
        bson_append_decimal128 (&doc, "a", 1, &dec);
        bson_append_int64 (&doc, "b", 1, i);
        bson_iter_init_find (&ia, &doc, "a");
        bson_iter_init_find (&ib, &doc, "b");
        if (sgn (rm_value_compare (&ia, &ib)) != want || keys_equal (&ia, &ib) != (want == 0)) {
            if (bad++ < 5)
                fprintf (stderr, "  decimal %s vs int64 %" PRId64 ": got %d, want %d\n", text,
                         i, sgn (rm_value_compare (&ia, &ib)), want);
        }
    }
    T_CHECK (bad == 0);
    bson_destroy (&doc);
}

/* ---- Keys --------------------------------------------------------------- */

static void
test_keys_basics (void)
{
    /* null and missing are one key; undefined is not null (see value.c) */
    T_CMP ("null", "missing", 0);
    T_CMP ("missing", "missing", 0);
    T_CMP ("{\"$undefined\": true}", "null", -1);
    T_CMP ("{\"$undefined\": true}", "missing", -1);
    T_CMP ("{\"$undefined\": true}", "{\"$undefined\": true}", 0);
    /* documents by canonical value, field order significant */
    T_CMP ("{\"a\": " I32 ("1") "}", "{\"a\": " DBL ("1") "}", 0);
    T_CMP ("{\"a\": {\"b\": [" I64 ("5") "]}}", "{\"a\": {\"b\": [" DEC ("5.0") "]}}", 0);
    T_CMP ("{\"a\": 1, \"b\": 2}", "{\"b\": 2, \"a\": 1}", -1);
    T_CMP ("{\"a\": null}", "{}", 1);
    T_CMP ("{\"a\": null}", "{\"b\": null}", -1);
    /* arrays in order */
    T_CMP ("[" I32 ("1") ", " I32 ("2") "]", "[" I32 ("2") ", " I32 ("1") "]", -1);
    T_CMP ("[" I32 ("1") ", " I32 ("2") "]", "[" DBL ("1") ", " DEC ("2") "]", 0);
    T_CMP ("[]", "{}", 1);
    T_CMP ("[]", "null", 1);
    T_CMP ("[[]]", "[]", 1);
    /* strings and symbols are one class */
    T_CMP ("\"abc\"", "{\"$symbol\": \"abc\"}", 0);
    T_CMP ("\"abc\"", "{\"$code\": \"abc\"}", -1);
    /* NaN doubles and decimals, zeros of every type */
    T_CMP (DBL ("NaN"), DEC ("-NaN"), 0);
    T_CMP (DBL ("-0.0"), DEC ("-0E-3"), 0);
    T_CMP (I64 ("0"), DEC ("0E+100"), 0);
    /* code with scope: the scope's values are canonical too */
    T_CMP ("{\"$code\": \"f\", \"$scope\": {\"x\": " I64 ("3") "}}",
           "{\"$code\": \"f\", \"$scope\": {\"x\": " DEC ("3.00") "}}", 0);
    /* containers do not absorb their neighbours: [[1], 2] is not [[1, 2]];
     * the shorter inner container decides first */
    T_CMP ("[[" I32 ("1") "], " I32 ("2") "]", "[[" I32 ("1") ", " I32 ("2") "]]", -1);
    T_CMP ("{\"a\": {\"b\": 1}, \"c\": 2}", "{\"a\": {\"b\": 1, \"c\": 2}}", -1);

    /* a key appends: two keys in one buffer */
    {
        bson_t doc;
        bson_iter_t it;
        rm_buf_t b, one;
        rm_buf_init (&b);
        rm_buf_init (&one);
        T_CHECK (parse_value (I32 ("7"), &doc, &it));
        rm_key_append (&one, &it);
        rm_key_append (&b, &it);
        rm_key_append (&b, NULL);
        T_CHECK (b.len > one.len && memcmp (b.data, one.data, one.len) == 0);
        T_CHECK (rm_key_hash (b.data, one.len) == rm_key_hash (one.data, one.len));
        rm_buf_destroy (&b);
        rm_buf_destroy (&one);
        bson_destroy (&doc);
    }
}

/* Values drawn from small pools, so that equal values (often of different
 * types) come up all the time. */
static const char *const number_pool[] = {
    I32 ("0"), I32 ("1"), I32 ("-1"), I32 ("2"), I64 ("0"), I64 ("1"), I64 ("-1"), I64 ("2"),
    I64 ("9007199254740992"), I64 ("9007199254740993"), I64 ("9223372036854775807"),
    I64 ("-9223372036854775808"), DBL ("0"), DBL ("-0.0"), DBL ("1"), DBL ("-1"), DBL ("2"),
    DBL ("0.5"), DBL ("0.1"), DBL ("NaN"), DBL ("Infinity"), DBL ("-Infinity"),
    DBL ("9007199254740992"), DBL ("9223372036854775808"), DBL ("-9223372036854775808"),
    DBL ("1e22"), DBL ("1e23"), DBL ("9.094947017729282379150390625e-13"), DEC ("0"), DEC ("-0"),
    DEC ("0E+10"), DEC ("1"), DEC ("1.0"), DEC ("1.000"), DEC ("10E-1"), DEC ("-1"), DEC ("2"),
    DEC ("0.5"), DEC ("0.50"), DEC ("5E-1"), DEC ("0.1"), DEC ("NaN"), DEC ("Infinity"),
    DEC ("-Infinity"), DEC ("9007199254740992"), DEC ("9007199254740993"),
    DEC ("9223372036854775807"), DEC ("9223372036854775808"), DEC ("-9223372036854775808"),
    DEC ("1E+22"), DEC ("1E+23"), DEC ("9.094947017729282379150390625E-13"), DEC ("1E+6000"),
    DEC ("1E-6000"), DEC ("0.3"), DEC ("0.30"),
};
#define N_NUMBERS (sizeof number_pool / sizeof number_pool[0])

static bson_t numbers;          /* number_pool parsed, as an array */
static iter_slot_t number_iters[N_NUMBERS];

static void
gen_value (bson_t *parent, const char *key, int depth)
{
    static const bson_oid_t oids[2] = {{{0}}, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}};
    static const char *const strings[] = {"", "a", "b", "a\0"};
    static const uint32_t string_lens[] = {0, 1, 1, 2};
    unsigned r = (unsigned) (rng () % 20);
    bson_t child;
    char k[8];

    if (depth >= 3 && r >= 15)
        r = 0;
    switch (r) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
        bson_append_value (parent, key, -1, bson_iter_value (&number_iters[rng () % N_NUMBERS].it));
        break;
    case 8: {
        unsigned s = (unsigned) (rng () % 4);
        if (rng () % 2)
            bson_append_utf8 (parent, key, -1, strings[s], (int) string_lens[s]);
        else
            bson_append_symbol (parent, key, -1, strings[s], (int) string_lens[s]);
        break;
    }
    case 9:
        if (rng () % 2)
            bson_append_null (parent, key, -1);
        else
            bson_append_undefined (parent, key, -1);
        break;
    case 10:
        if (rng () % 2)
            bson_append_minkey (parent, key, -1);
        else
            bson_append_maxkey (parent, key, -1);
        break;
    case 11:
        bson_append_bool (parent, key, -1, rng () % 2);
        break;
    case 12:
        switch (rng () % 3) {
        case 0:
            bson_append_oid (parent, key, -1, &oids[rng () % 2]);
            break;
        case 1:
            bson_append_date_time (parent, key, -1, (int64_t) (rng () % 3) - 1);
            break;
        default:
            bson_append_timestamp (parent, key, -1, (uint32_t) (rng () % 2),
                                   (uint32_t) (rng () % 2));
            break;
        }
        break;
    case 13:
        if (rng () % 2)
            bson_append_regex (parent, key, -1, rng () % 2 ? "a" : "b", rng () % 2 ? "" : "i");
        else
            bson_append_binary (parent, key, -1, (bson_subtype_t) (rng () % 2),
                                (const uint8_t *) "ab", (uint32_t) (rng () % 3));
        break;
    case 14:
        if (rng () % 2)
            bson_append_code (parent, key, -1, rng () % 2 ? "f" : "g");
        else
            bson_append_dbpointer (parent, key, -1, rng () % 2 ? "db.a" : "db.b",
                                   &oids[rng () % 2]);
        break;
    case 15: {
        bson_t scope = BSON_INITIALIZER;
        if (rng () % 2)
            gen_value (&scope, "x", depth + 1);
        bson_append_code_with_scope (parent, key, -1, "f", &scope);
        bson_destroy (&scope);
        break;
    }
    case 16: case 17: {
        int n = (int) (rng () % 3);
        bson_append_document_begin (parent, key, -1, &child);
        for (int i = 0; i < n; i++)
            gen_value (&child, rng () % 2 ? "a" : "b", depth + 1);
        bson_append_document_end (parent, &child);
        break;
    }
    default: {
        int n = (int) (rng () % 4);
        bson_append_array_begin (parent, key, -1, &child);
        for (int i = 0; i < n; i++) {
            snprintf (k, sizeof k, "%d", i);
            gen_value (&child, k, depth + 1);
        }
        bson_append_array_end (parent, &child);
        break;
    }
    }
}

static void
load_number_pool (void)
{
    bson_iter_t it;

    bson_init (&numbers);
    for (size_t i = 0; i < N_NUMBERS; i++) {
        bson_t doc;
        bson_iter_t v;
        char key[8];
        if (!parse_value (number_pool[i], &doc, &v)) {
            T_CHECK (!"number pool parses");
            bson_append_int32 (&numbers, "x", 1, 0);
            continue;
        }
        snprintf (key, sizeof key, "%zu", i);
        bson_append_value (&numbers, key, -1, bson_iter_value (&v));
        bson_destroy (&doc);
    }
    bson_iter_init (&it, &numbers);
    for (size_t i = 0; i < N_NUMBERS && bson_iter_next (&it); i++)
        number_iters[i].it = it;
}

#define N_RANDOM 2000
#define N_MISSING 3

static bson_t random_values;
static iter_slot_t random_iters[N_RANDOM];
static const bson_iter_t *rv[N_RANDOM + N_MISSING]; /* the last few: missing */
static size_t key_off[N_RANDOM + N_MISSING + 1];
static rm_buf_t random_keys;

static int
cmp_rv (const void *a, const void *b)
{
    return rm_value_compare (rv[*(const size_t *) a], rv[*(const size_t *) b]);
}

/* The equal-iff property over every pair of N_RANDOM random values: keys
 * are byte-equal exactly when rm_value_compare says 0. No pair needs to be
 * excluded: the one place where MongoDB's $lookup equality and its sort
 * order could part (undefined, which $lookup stopped matching to null in
 * 8.0) is a class of its own in both here. Also: compare is antisymmetric
 * and transitive (a sort by it is consistent), and no key is a proper
 * prefix of another (so concatenated keys cannot collide). */
static void
test_keys_random (void)
{
    static size_t order[N_RANDOM + N_MISSING];
    size_t n = N_RANDOM + N_MISSING, bad = 0, equal_pairs = 0, cross_type = 0, prefix = 0;
    bson_iter_t it;
    char da[512], db[512];

    load_number_pool ();
    bson_init (&random_values);
    for (int i = 0; i < N_RANDOM; i++) {
        char key[16];
        snprintf (key, sizeof key, "%d", i);
        gen_value (&random_values, key, 0);
    }
    bson_iter_init (&it, &random_values);
    for (size_t i = 0; i < N_RANDOM && bson_iter_next (&it); i++) {
        random_iters[i].it = it;
        rv[i] = &random_iters[i].it;
    }
    for (size_t i = N_RANDOM; i < n; i++)
        rv[i] = NULL;

    rm_buf_init (&random_keys);
    for (size_t i = 0; i < n; i++) {
        key_off[i] = random_keys.len;
        rm_key_append (&random_keys, rv[i]);
    }
    key_off[n] = random_keys.len;

    for (size_t i = 0; i < n; i++) {
        const uint8_t *ki = random_keys.data + key_off[i];
        size_t li = key_off[i + 1] - key_off[i];
        for (size_t j = i + 1; j < n; j++) {
            const uint8_t *kj = random_keys.data + key_off[j];
            size_t lj = key_off[j + 1] - key_off[j];
            int c = sgn (rm_value_compare (rv[i], rv[j]));
            int r = sgn (rm_value_compare (rv[j], rv[i]));
            bool keq = li == lj && memcmp (ki, kj, li) == 0;

            if ((c == 0) != keq || r != -c) {
                if (bad++ < 5)
                    fprintf (stderr, "  %s vs %s: compare %d/%d, keys %s\n",
                             describe (rv[i], da, sizeof da), describe (rv[j], db, sizeof db), c,
                             r, keq ? "equal" : "differ");
            }
            if (keq) {
                equal_pairs++;
                if (rv[i] && rv[j] && bson_iter_type (rv[i]) != bson_iter_type (rv[j]))
                    cross_type++;
                if (rm_key_hash (ki, li) != rm_key_hash (kj, lj))
                    bad++;
            } else if (li != lj && memcmp (ki, kj, li < lj ? li : lj) == 0) {
                prefix++;
            }
        }
    }
    T_CHECK (bad == 0);
    T_CHECK (prefix == 0);
    /* the property was exercised, across types too */
    T_CHECK (equal_pairs > 1000);
    T_CHECK (cross_type > 100);

    /* sorted by compare, every earlier value is <= every later one */
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort (order, n, sizeof order[0], cmp_rv);
    bad = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (rm_value_compare (rv[order[i]], rv[order[j]]) > 0 && bad++ < 5)
                fprintf (stderr, "  not transitive: %s after %s\n",
                         describe (rv[order[i]], da, sizeof da),
                         describe (rv[order[j]], db, sizeof db));
    T_CHECK (bad == 0);
    printf ("  random: %zu values, %zu pairs, %zu equal (%zu across types)\n", n,
            n * (n - 1) / 2, equal_pairs, cross_type);
}

/* Keys and compares of values in hand allocate nothing once the buffer
 * has grown. Runs after test_keys_random, on its values. */
static size_t n_allocs;

static void *
count_malloc (size_t n)
{
    n_allocs++;
    return malloc (n);
}

static void *
count_calloc (size_t n, size_t size)
{
    n_allocs++;
    return calloc (n, size);
}

static void *
count_realloc (void *p, size_t n)
{
    n_allocs++;
    return realloc (p, n);
}

static void *
count_aligned_alloc (size_t align, size_t n)
{
    n_allocs++;
    return aligned_alloc (align, n);
}

static void
test_no_allocation (void)
{
    bson_mem_vtable_t vt = {count_malloc, count_calloc, count_realloc, free, count_aligned_alloc,
                            {NULL, NULL, NULL}};
    rm_buf_t b;
    size_t n = N_RANDOM + N_MISSING;
    int64_t sum = 0;

    rm_buf_init (&b);
    for (size_t i = 0; i < n; i++) /* grow once */
        rm_key_append (&b, rv[i]);
    bson_mem_set_vtable (&vt);
    n_allocs = 0;
    for (int round = 0; round < 3; round++) {
        rm_buf_reset (&b);
        for (size_t i = 0; i < n; i++)
            rm_key_append (&b, rv[i]);
        for (size_t i = 0; i + 1 < n; i++)
            sum += rm_value_compare (rv[i], rv[i + 1]);
    }
    bson_mem_restore_vtable ();
    T_CHECK (n_allocs == 0);
    T_CHECK (sum != INT64_MIN); /* keep the loop */
    rm_buf_destroy (&b);
}

/* Nesting deeper than the recursion limit: no crash, and compare and keys
 * still agree at every depth, including around the limit (beyond it both
 * fall back to the raw bytes, so 1 and 1.0 down there differ; at any depth
 * the server accepts they are equal). */
static void
nested (bson_t *out, int depth, bool as_double)
{
    bson_t *stack = bson_malloc ((size_t) depth * sizeof *stack);
    bson_t *parent = out;

    for (int i = 0; i < depth; i++) {
        bson_append_document_begin (parent, "d", 1, &stack[i]);
        parent = &stack[i];
    }
    if (as_double)
        bson_append_double (parent, "x", 1, 1.0);
    else
        bson_append_int32 (parent, "x", 1, 1);
    for (int i = depth - 1; i >= 0; i--)
        bson_append_document_end (i ? &stack[i - 1] : out, &stack[i]);
    bson_free (stack);
}

static void
test_deep_nesting (void)
{
    for (int depth = 1; depth <= 100000; depth = depth < 300 ? depth + 1 : depth * 10) {
        bson_t a = BSON_INITIALIZER, b = BSON_INITIALIZER, c = BSON_INITIALIZER;
        bson_iter_t ia, ib, ic;
        bool equal;

        nested (&a, depth, false);
        nested (&b, depth, true);
        nested (&c, depth, false);
        T_CHECK (bson_iter_init_find (&ia, &a, "d"));
        T_CHECK (bson_iter_init_find (&ib, &b, "d"));
        T_CHECK (bson_iter_init_find (&ic, &c, "d"));
        T_CHECK (rm_value_compare (&ia, &ic) == 0 && keys_equal (&ia, &ic));
        equal = rm_value_compare (&ia, &ib) == 0;
        if (equal != keys_equal (&ia, &ib)) {
            fprintf (stderr, "  depth %d: compare and keys disagree\n", depth);
            t_fail_checks++;
        }
        if (depth <= 200)
            T_CHECK (equal);
        if (depth >= 100000)
            T_CHECK (!equal);
        bson_destroy (&a);
        bson_destroy (&b);
        bson_destroy (&c);
    }
}

/* A 64-bit hash good enough for hash tables: low and high bits spread
 * evenly over consecutive integer keys, and each input bit flips each
 * output bit about half the time. */
static void
test_hash_quality (void)
{
    enum { N = 65536, BUCKETS = 1024 };
    static unsigned low[BUCKETS], high[BUCKETS];
    double chi_low = 0, chi_high = 0, expect = (double) N / BUCKETS;
    static unsigned flips[64];
    unsigned long total = 0, trials = 0;
    rm_buf_t b;

    rm_buf_init (&b);
    for (int i = 0; i < N; i++) {
        bson_t doc = BSON_INITIALIZER;
        bson_iter_t it;
        uint64_t h;
        bson_append_int64 (&doc, "v", 1, i);
        bson_iter_init_find (&it, &doc, "v");
        rm_buf_reset (&b);
        rm_key_append (&b, &it);
        h = rm_key_hash (b.data, b.len);
        low[h % BUCKETS]++;
        high[h >> 54]++;
        bson_destroy (&doc);
    }
    for (int i = 0; i < BUCKETS; i++) {
        chi_low += (low[i] - expect) * (low[i] - expect) / expect;
        chi_high += (high[i] - expect) * (high[i] - expect) / expect;
    }
    /* 1023 degrees of freedom: mean 1023, deviation about 45 */
    T_CHECK (chi_low < 1300 && chi_high < 1300);

    for (int t = 0; t < 2000; t++) {
        uint8_t in[13]; /* a full word and a tail */
        uint64_t h0;
        for (size_t i = 0; i < sizeof in; i++)
            in[i] = (uint8_t) rng ();
        h0 = rm_key_hash (in, sizeof in);
        for (size_t bit = 0; bit < 8 * sizeof in; bit++) {
            uint64_t diff;
            in[bit / 8] ^= (uint8_t) (1u << bit % 8);
            diff = h0 ^ rm_key_hash (in, sizeof in);
            in[bit / 8] ^= (uint8_t) (1u << bit % 8);
            for (int o = 0; o < 64; o++)
                if (diff >> o & 1) {
                    flips[o]++;
                    total++;
                }
            trials++;
        }
    }
    for (int o = 0; o < 64; o++) {
        double p = (double) flips[o] / (double) trials;
        T_CHECK (p > 0.48 && p < 0.52);
    }
    T_CHECK ((double) total / (double) trials > 31.5 && (double) total / (double) trials < 32.5);
    /* trailing zero bytes change the hash (the length is in it) */
    T_CHECK (rm_key_hash ((const uint8_t *) "a\0", 1) != rm_key_hash ((const uint8_t *) "a\0", 2));
    T_CHECK (rm_key_hash (NULL, 0) == rm_key_hash ((const uint8_t *) "", 0));
    printf ("  hash: chi-square %.0f (low bits), %.0f (high bits) over 1023 d.f.\n", chi_low,
            chi_high);
    rm_buf_destroy (&b);
}

/* Resume tokens as MongoDB 4.2+ gives them (KeyString hex: 0x82, the
 * Timestamp's 8 bytes), and tokens of other forms refused. */
static void
test_resume_token_time (void)
{
    uint32_t t = 0, i = 0;
    bson_t *tok = BCON_NEW ("_data", BCON_UTF8 ("8263A2C1E3000000042B022C0100296E5A1004AB"));
    T_CHECK (rm_resume_token_time (tok, &t, &i));
    T_CHECK (t == 0x63A2C1E3 && i == 4);
    bson_destroy (tok);
    tok = BCON_NEW ("_data", BCON_UTF8 ("82ffffffff00000001"));
    T_CHECK (rm_resume_token_time (tok, &t, &i) && t == 0xffffffffu && i == 1);
    bson_destroy (tok);
    /* mongo-java-server's: the oplog entry's ts, no type byte */
    tok = BCON_NEW ("_data", BCON_UTF8 ("6b05347500000002"));
    T_CHECK (!rm_resume_token_time (tok, &t, &i));
    bson_destroy (tok);
    tok = BCON_NEW ("_data", BCON_UTF8 ("8263A2C1E30000zz04"));
    T_CHECK (!rm_resume_token_time (tok, &t, &i));
    bson_destroy (tok);
    tok = BCON_NEW ("_data", BCON_INT32 (1));
    T_CHECK (!rm_resume_token_time (tok, &t, &i));
    bson_destroy (tok);
    T_CHECK (!rm_resume_token_time (NULL, &t, &i));
}

/* rm_key_append_scalar gives, from a value's bytes, the key rm_key_append
 * gives from an iterator over it (analyze walks documents over their
 * bytes), and declines the types it does not key. */
static void
test_keys_scalar (void)
{
    static const char *const keyed[] = {
        I32 ("0"), I32 ("7"), I32 ("-1"), I32 ("2147483647"), I32 ("-2147483648"), I64 ("0"),
        I64 ("-1"), I64 ("9223372036854775807"), I64 ("-9223372036854775808"), DBL ("0"),
        DBL ("-0.0"), DBL ("2"), DBL ("0.5"), DBL ("NaN"), DBL ("-Infinity"), DBL ("1e23"),
        "\"\"", "\"abc\"", "\"caf\\u00e9 \\u65e5\"", "\"with\\u0000nul\"",
        "{\"$oid\": \"5f0c3a1b2c3d4e5f60718293\"}",
        "{\"$binary\": {\"base64\": \"\", \"subType\": \"00\"}}",
        "{\"$binary\": {\"base64\": \"AQIDBA==\", \"subType\": \"04\"}}",
        "{\"$binary\": {\"base64\": \"AQIDBAU=\", \"subType\": \"02\"}}",
        "{\"$binary\": {\"base64\": \"AQ==\", \"subType\": \"80\"}}",
    };
    static const char *const declined[] = {
        "true", "null", "{\"$date\": {\"$numberLong\": \"1\"}}", "{\"a\": 1}", "[1]",
        DEC ("1"), "{\"$minKey\": 1}", "{\"$timestamp\": {\"t\": 1, \"i\": 2}}",
    };
    for (size_t i = 0; i < sizeof keyed / sizeof keyed[0]; i++) {
        bson_t doc;
        bson_iter_t it;
        rm_buf_t a, b;
        T_CHECK (parse_value (keyed[i], &doc, &it));
        rm_buf_init (&a);
        rm_buf_init (&b);
        rm_buf_append (&b, "x", 1); /* appended to what is there */
        rm_buf_append (&a, "x", 1);
        rm_key_append (&a, &it);
        /* {"v": value}: the value's bytes after the length, the type and "v". */
        T_CHECK (rm_key_append_scalar (&b, bson_iter_type (&it), bson_get_data (&doc) + 7));
        if (a.len != b.len || memcmp (a.data, b.data, a.len) != 0)
            fprintf (stderr, "  %s: keys differ\n", keyed[i]);
        T_CHECK (a.len == b.len && memcmp (a.data, b.data, a.len) == 0);
        rm_buf_destroy (&a);
        rm_buf_destroy (&b);
        bson_destroy (&doc);
    }
    for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++) {
        bson_t doc;
        bson_iter_t it;
        rm_buf_t b;
        T_CHECK (parse_value (declined[i], &doc, &it));
        rm_buf_init (&b);
        T_CHECK (!rm_key_append_scalar (&b, bson_iter_type (&it), bson_get_data (&doc) + 7));
        T_CHECK (b.len == 0);
        rm_buf_destroy (&b);
        bson_destroy (&doc);
    }
}

int
main (void)
{
    T_RUN (test_buf);
    T_RUN (test_canonical_types);
    T_RUN (test_order_table);
    T_RUN (test_numbers_edges);
    T_RUN (test_decimal_encodings);
    T_RUN (test_int64_double_oracle);
    T_RUN (test_decimal_double_oracle);
    T_RUN (test_decimal_int64_oracle);
    T_RUN (test_keys_basics);
    T_RUN (test_keys_random);
    T_RUN (test_keys_scalar);
    T_RUN (test_no_allocation);
    T_RUN (test_deep_nesting);
    T_RUN (test_hash_quality);
    T_RUN (test_resume_token_time);
    rm_buf_destroy (&random_keys);
    bson_destroy (&random_values);
    bson_destroy (&numbers);
    return t_done ();
}
