/* $group accumulators give MongoDB's results: number types and overflow,
 * decimal arithmetic, null and missing values, order across types, ties,
 * empty groups, and the errors of a bad specification. Each case runs one
 * accumulator over a group of documents and compares the result, as
 * canonical Extended JSON (which keeps int32, int64, double and decimal
 * apart), with the expected one. */
#include <math.h>
#include <stdlib.h>

#include "expr_decimal.h" /* the decimal arithmetic $sum and $avg use */
#include "remodel/accum.h"
#include "test.h"

#define MAX_DOCS 12

typedef struct {
    const char *acc;             /* {"$sum": "$a"} */
    const char *docs[MAX_DOCS];  /* the group, in feeding order; NULL ends it */
    const char *want;            /* {"r": <result>} in Extended JSON */
} case_t;

/* The canonical Extended JSON of a document given as Extended JSON. */
static char *
canonical (const char *json)
{
    bson_error_t err;
    bson_t *b = bson_new_from_json ((const uint8_t *) json, -1, &err);
    char *s;
    if (!b) {
        fprintf (stderr, "  bad JSON in the test: %s: %s\n", json, err.message);
        return bson_strdup ("(bad JSON)");
    }
    s = bson_as_canonical_extended_json (b, NULL);
    bson_destroy (b);
    return s;
}

static rm_acc_spec_t *
parse_acc (const char *acc, bson_error_t *err)
{
    char json[512];
    bson_t *b;
    bson_iter_t it;
    rm_acc_spec_t *s;

    snprintf (json, sizeof json, "{\"r\": %s}", acc);
    b = bson_new_from_json ((const uint8_t *) json, -1, err);
    if (!b)
        return NULL;
    bson_iter_init_find (&it, b, "r");
    s = rm_acc_spec_parse (&it, err);
    bson_destroy (b);
    return s;
}

/* Feeds the documents to a, finishes as "r" and returns the JSON. */
static char *
run_group (rm_acc_t *a, const char *const *docs, size_t ndocs)
{
    bson_error_t err;
    bson_t out = BSON_INITIALIZER;
    char *s;

    for (size_t i = 0; i < ndocs && docs[i]; i++) {
        bson_t *d = bson_new_from_json ((const uint8_t *) docs[i], -1, &err);
        if (!d) {
            fprintf (stderr, "  bad JSON in the test: %s: %s\n", docs[i], err.message);
            bson_destroy (&out);
            return bson_strdup ("(bad JSON)");
        }
        if (!rm_acc_add (a, bson_get_data (d), d->len, i, &err)) {
            bson_destroy (d);
            bson_destroy (&out);
            return bson_strdup_printf ("add error: %s", err.message);
        }
        bson_destroy (d);
    }
    if (!rm_acc_finish (a, &out, "r", &err)) {
        bson_destroy (&out);
        return bson_strdup_printf ("finish error: %s", err.message);
    }
    s = bson_as_canonical_extended_json (&out, NULL);
    bson_destroy (&out);
    return s;
}

/* Runs a case twice on one state, with a reset between (states are reused
 * across groups), and checks both results. */
static void
check_case (const case_t *c)
{
    bson_error_t err;
    rm_acc_spec_t *spec = parse_acc (c->acc, &err);
    rm_acc_t *a;
    char *want = canonical (c->want), *got1, *got2;

    if (!spec) {
        fprintf (stderr, "  %s: parse error: %s\n", c->acc, err.message);
        t_fail_checks++;
        bson_free (want);
        return;
    }
    a = rm_acc_new (spec);
    got1 = run_group (a, c->docs, MAX_DOCS);
    rm_acc_reset (a);
    got2 = run_group (a, c->docs, MAX_DOCS);
    if (strcmp (got1, want) != 0)
        fprintf (stderr, "  case %s over %s...:\n", c->acc, c->docs[0] ? c->docs[0] : "nothing");
    T_CHECK_STR (got1, want);
    T_CHECK_STR (got2, got1);
    bson_free (want);
    bson_free (got1);
    bson_free (got2);
    rm_acc_destroy (a);
    rm_acc_spec_destroy (spec);
}

static void
check_cases (const case_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_case (&cases[i]);
}

#define CHECK_CASES(t) check_cases (t, sizeof t / sizeof t[0])

#define I(v) "{\"$numberInt\": \"" #v "\"}"
#define L(v) "{\"$numberLong\": \"" #v "\"}"
#define D(v) "{\"$numberDouble\": \"" #v "\"}"
#define DEC(v) "{\"$numberDecimal\": \"" #v "\"}"

static void
test_sum_types (void)
{
    static const case_t cases[] = {
        {"{\"$sum\": \"$a\"}", {"{\"a\": 1}", "{\"a\": 2}"}, "{\"r\": " I (3) "}"},
        /* int32 overflows into int64 */
        {"{\"$sum\": \"$a\"}", {"{\"a\": 2147483647}", "{\"a\": 1}"}, "{\"r\": " L (2147483648) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": -2147483648}", "{\"a\": -1}"}, "{\"r\": " L (-2147483649) "}"},
        /* the type follows the final total, as on the server */
        {"{\"$sum\": \"$a\"}", {"{\"a\": 2147483647}", "{\"a\": 1}", "{\"a\": -1}"},
         "{\"r\": " I (2147483647) "}"},
        /* int64 overflows into double */
        {"{\"$sum\": \"$a\"}", {"{\"a\": " L (9223372036854775807) "}", "{\"a\": " L (1) "}"},
         "{\"r\": " D (9223372036854775808) "}"},
        {"{\"$sum\": \"$a\"}",
         {"{\"a\": " L (9223372036854775807) "}", "{\"a\": " L (1) "}", "{\"a\": " L (-1) "}"},
         "{\"r\": " L (9223372036854775807) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " L (-9223372036854775808) "}", "{\"a\": -1}"},
         "{\"r\": " D (-9223372036854775809) "}"},
        /* int32 + int64 is int64 even when it fits in int32 */
        {"{\"$sum\": \"$a\"}", {"{\"a\": 1}", "{\"a\": " L (2) "}"}, "{\"r\": " L (3) "}"},
        /* int64 sums are exact beyond 2^53 */
        {"{\"$sum\": \"$a\"}", {"{\"a\": " L (9007199254740993) "}", "{\"a\": " L (1) "}"},
         "{\"r\": " L (9007199254740994) "}"},
        /* any double makes a double */
        {"{\"$sum\": \"$a\"}", {"{\"a\": 1}", "{\"a\": 2.5}"}, "{\"r\": " D (3.5) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": 1.0}", "{\"a\": 2}"}, "{\"r\": " D (3.0) "}"},
        /* doubles are summed with compensation (naively this is 0.9999999999999999) */
        {"{\"$sum\": \"$a\"}",
         {"{\"a\": 0.1}", "{\"a\": 0.1}", "{\"a\": 0.1}", "{\"a\": 0.1}", "{\"a\": 0.1}",
          "{\"a\": 0.1}", "{\"a\": 0.1}", "{\"a\": 0.1}", "{\"a\": 0.1}", "{\"a\": 0.1}"},
         "{\"r\": " D (1.0) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": 1e308}", "{\"a\": 1e308}"}, "{\"r\": " D (Infinity) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " D (Infinity) "}", "{\"a\": " D (-Infinity) "}"},
         "{\"r\": " D (NaN) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " D (Infinity) "}", "{\"a\": 1}"}, "{\"r\": " D (Infinity) "}"},
        /* any decimal makes a decimal, exactly */
        {"{\"$sum\": \"$a\"}", {"{\"a\": " DEC (0.1) "}", "{\"a\": " DEC (0.2) "}"},
         "{\"r\": " DEC (0.3) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": 1}", "{\"a\": " DEC (2.5) "}"}, "{\"r\": " DEC (3.5) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " L (5) "}", "{\"a\": " DEC (-0.25) "}"},
         "{\"r\": " DEC (4.75) "}"},
        /* a double enters the decimal sum with its exact binary value */
        {"{\"$sum\": \"$a\"}", {"{\"a\": 0.1}", "{\"a\": " DEC (0) "}"},
         "{\"r\": " DEC (0.1000000000000000055511151231257827) "}"},
        /* decimal exponents: kept when exact, the total starts at 0E0 */
        {"{\"$sum\": \"$a\"}", {"{\"a\": " DEC (1.50) "}"}, "{\"r\": " DEC (1.50) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " DEC (1E+2) "}"}, "{\"r\": " DEC (100) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " DEC (1.5) "}", "{\"a\": " DEC (-1.5) "}"},
         "{\"r\": " DEC (0.0) "}"},
        /* 34 digits, then rounding half to even */
        {"{\"$sum\": \"$a\"}",
         {"{\"a\": " DEC (1234567890123456789012345678901234) "}", "{\"a\": " DEC (0.5) "}"},
         "{\"r\": " DEC (1234567890123456789012345678901234) "}"},
        {"{\"$sum\": \"$a\"}",
         {"{\"a\": " DEC (1234567890123456789012345678901235) "}", "{\"a\": " DEC (0.5) "}"},
         "{\"r\": " DEC (1234567890123456789012345678901236) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " DEC (NaN) "}", "{\"a\": 1}"}, "{\"r\": " DEC (NaN) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " DEC (Infinity) "}", "{\"a\": " DEC (-Infinity) "}"},
         "{\"r\": " DEC (NaN) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": " DEC (9.999999999999999999999999999999999E+6144) "}",
                                "{\"a\": " DEC (9.999999999999999999999999999999999E+6144) "}"},
         "{\"r\": " DEC (Infinity) "}"},
    };
    CHECK_CASES (cases);
}

static void
test_sum_ignores (void)
{
    static const case_t cases[] = {
        /* strings, booleans, null, arrays, documents and missing are ignored */
        {"{\"$sum\": \"$a\"}",
         {"{\"a\": 1}", "{\"a\": \"7\"}", "{\"a\": true}", "{\"a\": null}", "{\"a\": [1, 2]}",
          "{\"a\": {\"b\": 1}}", "{\"b\": 5}", "{\"a\": 2}"},
         "{\"r\": " I (3) "}"},
        {"{\"$sum\": \"$a\"}", {"{\"a\": \"x\"}", "{}"}, "{\"r\": " I (0) "}"},
        /* dotted paths */
        {"{\"$sum\": \"$a.b\"}", {"{\"a\": {\"b\": 4}}", "{\"a\": {\"b\": 5}}", "{\"a\": 3}"},
         "{\"r\": " I (9) "}"},
        /* a path through an array of documents gives an array: ignored */
        {"{\"$sum\": \"$a.b\"}", {"{\"a\": [{\"b\": 4}, {\"b\": 5}]}"}, "{\"r\": " I (0) "}"},
        /* a literal string or null is no number */
        {"{\"$sum\": \"abc\"}", {"{}", "{}"}, "{\"r\": " I (0) "}"},
        {"{\"$sum\": null}", {"{}", "{}"}, "{\"r\": " I (0) "}"},
    };
    CHECK_CASES (cases);
}

static void
test_sum_constant (void)
{
    static const case_t cases[] = {
        {"{\"$sum\": 1}", {"{}", "{}", "{}"}, "{\"r\": " I (3) "}"},
        {"{\"$sum\": 2147483647}", {"{}", "{}", "{}"}, "{\"r\": " L (6442450941) "}"},
        {"{\"$sum\": " L (2) "}", {"{}"}, "{\"r\": " L (2) "}"},
        {"{\"$sum\": " L (9223372036854775807) "}", {"{}", "{}"},
         "{\"r\": " D (18446744073709551616) "}"},
        /* the server's constant fast path adds doubles plainly */
        {"{\"$sum\": 0.1}",
         {"{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}"},
         "{\"r\": " D (0.9999999999999999) "}"},
        /* a decimal literal takes the general path */
        {"{\"$sum\": " DEC (1.5) "}", {"{}", "{}"}, "{\"r\": " DEC (3.0) "}"},
        {"{\"$count\": {}}", {"{}", "{\"a\": 1}", "{}"}, "{\"r\": " I (3) "}"},
    };
    CHECK_CASES (cases);
}

static void
test_avg (void)
{
    static const case_t cases[] = {
        {"{\"$avg\": \"$a\"}", {"{\"a\": 1}", "{\"a\": 2}"}, "{\"r\": " D (1.5) "}"},
        {"{\"$avg\": \"$a\"}", {"{\"a\": 4}"}, "{\"r\": " D (4.0) "}"},
        {"{\"$avg\": \"$a\"}", {"{\"a\": " L (1) "}", "{\"a\": 2.0}", "{\"a\": 3}"},
         "{\"r\": " D (2.0) "}"},
        /* non-numbers are not counted */
        {"{\"$avg\": \"$a\"}", {"{\"a\": 1}", "{\"a\": \"x\"}", "{\"a\": null}", "{}", "{\"a\": 3}"},
         "{\"r\": " D (2.0) "}"},
        {"{\"$avg\": \"$a\"}", {"{\"a\": \"x\"}", "{}"}, "{\"r\": null}"},
        /* exact integer totals beyond 2^53 */
        {"{\"$avg\": \"$a\"}", {"{\"a\": " L (9223372036854775807) "}", "{\"a\": " L (9223372036854775807) "}"},
         "{\"r\": " D (9223372036854775807) "}"},
        /* decimals */
        {"{\"$avg\": \"$a\"}", {"{\"a\": " DEC (1) "}", "{\"a\": " DEC (2) "}"},
         "{\"r\": " DEC (1.5) "}"},
        {"{\"$avg\": \"$a\"}", {"{\"a\": " DEC (1) "}", "{\"a\": " DEC (2) "}", "{\"a\": 2}"},
         "{\"r\": " DEC (1.666666666666666666666666666666667) "}"},
        {"{\"$avg\": \"$a\"}", {"{\"a\": " DEC (0.10) "}", "{\"a\": " DEC (0.30) "}"},
         "{\"r\": " DEC (0.20) "}"},
        {"{\"$avg\": \"$a\"}", {"{\"a\": 1}", "{\"a\": " DEC (2) "}"}, "{\"r\": " DEC (1.5) "}"},
    };
    CHECK_CASES (cases);
}

static void
test_min_max (void)
{
    static const case_t cases[] = {
        {"{\"$min\": \"$a\"}", {"{\"a\": 3}", "{\"a\": 1.5}", "{\"a\": " L (2) "}"},
         "{\"r\": " D (1.5) "}"},
        {"{\"$max\": \"$a\"}", {"{\"a\": 3}", "{\"a\": 1.5}", "{\"a\": " DEC (3.5) "}"},
         "{\"r\": " DEC (3.5) "}"},
        /* a string is above every number */
        {"{\"$max\": \"$a\"}", {"{\"a\": 100}", "{\"a\": \"a\"}", "{\"a\": 5}"}, "{\"r\": \"a\"}"},
        {"{\"$min\": \"$a\"}", {"{\"a\": \"a\"}", "{\"a\": 100}"}, "{\"r\": " I (100) "}"},
        /* and an array above a document above a string, compared whole */
        {"{\"$max\": \"$a\"}", {"{\"a\": \"z\"}", "{\"a\": [1, 2]}", "{\"a\": {\"x\": 9}}"},
         "{\"r\": [" I (1) ", " I (2) "]}"},
        {"{\"$max\": \"$a\"}", {"{\"a\": [1, 2]}", "{\"a\": [1, 3]}"}, "{\"r\": [" I (1) ", " I (3) "]}"},
        {"{\"$max\": \"$a\"}", {"{\"a\": true}", "{\"a\": {\"$date\": \"2020-01-01T00:00:00Z\"}}"},
         "{\"r\": {\"$date\": {\"$numberLong\": \"1577836800000\"}}}"},
        /* null and missing are ignored unless they are all there is */
        {"{\"$min\": \"$a\"}", {"{\"a\": null}", "{}", "{\"a\": 7}"}, "{\"r\": " I (7) "}"},
        {"{\"$max\": \"$a\"}", {"{\"a\": null}", "{}"}, "{\"r\": null}"},
        {"{\"$min\": \"$a\"}", {"{}"}, "{\"r\": null}"},
        /* of equal values the first stays */
        {"{\"$min\": \"$a\"}", {"{\"a\": 1}", "{\"a\": 1.0}", "{\"a\": " L (1) "}"}, "{\"r\": " I (1) "}"},
        {"{\"$max\": \"$a\"}", {"{\"a\": 1.0}", "{\"a\": 1}"}, "{\"r\": " D (1.0) "}"},
        /* nested documents */
        {"{\"$max\": \"$a.b\"}", {"{\"a\": {\"b\": {\"x\": 1}}}", "{\"a\": {\"b\": {\"x\": 2}}}"},
         "{\"r\": {\"x\": " I (2) "}}"},
    };
    CHECK_CASES (cases);
}

static void
test_first_last (void)
{
    static const case_t cases[] = {
        {"{\"$first\": \"$a\"}", {"{\"a\": 1}", "{\"a\": 2}"}, "{\"r\": " I (1) "}"},
        {"{\"$last\": \"$a\"}", {"{\"a\": 1}", "{\"a\": 2}"}, "{\"r\": " I (2) "}"},
        /* missing gives null; null is a value */
        {"{\"$first\": \"$a\"}", {"{}", "{\"a\": 2}"}, "{\"r\": null}"},
        {"{\"$last\": \"$a\"}", {"{\"a\": 1}", "{}"}, "{\"r\": null}"},
        {"{\"$last\": \"$a\"}", {"{\"a\": 1}", "{\"a\": null}"}, "{\"r\": null}"},
        {"{\"$first\": \"$$ROOT\"}", {"{\"a\": 1, \"b\": [2]}", "{\"a\": 2}"},
         "{\"r\": {\"a\": " I (1) ", \"b\": [" I (2) "]}}"},
        /* a document of paths and literals; a missing field is left out */
        {"{\"$last\": {\"x\": \"$a\", \"y\": \"$b\", \"k\": \"lit\", \"n\": {\"$literal\": \"$a\"}}}",
         {"{\"a\": 1, \"b\": 2}", "{\"a\": 3}"},
         "{\"r\": {\"x\": " I (3) ", \"k\": \"lit\", \"n\": \"$a\"}}"},
        /* an array of paths; a missing element is null */
        {"{\"$first\": {\"p\": [\"$a\", \"$b\"]}}", {"{\"a\": 1}"},
         "{\"r\": {\"p\": [" I (1) ", null]}}"},
        /* paths through arrays of documents, as the server evaluates them */
        {"{\"$first\": \"$items.sku\"}",
         {"{\"items\": [{\"sku\": \"a\"}, {\"qty\": 1}, 5, [{\"sku\": \"n\"}], {\"sku\": \"b\"}]}"},
         "{\"r\": [\"a\", \"b\"]}"},
        {"{\"$first\": \"$a.b.c\"}", {"{\"a\": [{\"b\": [{\"c\": 1}, {\"c\": 2}]}, {\"b\": {\"c\": 3}}]}"},
         "{\"r\": [[" I (1) ", " I (2) "], " I (3) "]}"},
        /* a numeric component names a field, it does not index the array */
        {"{\"$first\": \"$a.0\"}", {"{\"a\": [5, 6]}"}, "{\"r\": []}"},
        {"{\"$first\": \"$a.0\"}", {"{\"a\": {\"0\": 5}}"}, "{\"r\": " I (5) "}"},
    };
    CHECK_CASES (cases);
}

static void
test_top_n (void)
{
    static const case_t cases[] = {
        {"{\"$topN\": {\"n\": 2, \"sortBy\": {\"s\": -1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 1}", "{\"p\": \"B\", \"s\": 3}", "{\"p\": \"C\", \"s\": 2}",
          "{\"p\": \"D\", \"s\": 0}"},
         "{\"r\": [\"B\", \"C\"]}"},
        /* ties keep input order, and a later tie does not displace */
        {"{\"$topN\": {\"n\": 2, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 5}", "{\"p\": \"B\", \"s\": 5}", "{\"p\": \"C\", \"s\": 5}",
          "{\"p\": \"D\", \"s\": 9}"},
         "{\"r\": [\"A\", \"B\"]}"},
        {"{\"$topN\": {\"n\": 3, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 5}", "{\"p\": \"B\", \"s\": 1}", "{\"p\": \"C\", \"s\": 5}",
          "{\"p\": \"D\", \"s\": 5}"},
         "{\"r\": [\"B\", \"A\", \"C\"]}"},
        /* n larger than the group: all of it, sorted */
        {"{\"$topN\": {\"n\": 10, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 2}", "{\"p\": \"B\", \"s\": 1}"}, "{\"r\": [\"B\", \"A\"]}"},
        /* output as a document, and missing output as null */
        {"{\"$topN\": {\"n\": 2, \"sortBy\": {\"s\": -1}, \"output\": {\"p\": \"$p\", \"s\": \"$s\"}}}",
         {"{\"p\": \"A\", \"s\": 1}", "{\"p\": \"B\", \"s\": 3}"},
         "{\"r\": [{\"p\": \"B\", \"s\": " I (3) "}, {\"p\": \"A\", \"s\": " I (1) "}]}"},
        {"{\"$topN\": {\"n\": 2, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"s\": 1}", "{\"p\": \"B\", \"s\": 3}"}, "{\"r\": [null, \"B\"]}"},
        /* the manual's example: missing and null scores sort first, as null */
        {"{\"$topN\": {\"n\": 3, \"sortBy\": {\"score\": 1}, \"output\": [\"$playerId\", \"$score\"]}}",
         {"{\"playerId\": \"PlayerA\", \"score\": 1}", "{\"playerId\": \"PlayerB\", \"score\": 2}",
          "{\"playerId\": \"PlayerC\", \"score\": 3}", "{\"playerId\": \"PlayerD\"}",
          "{\"playerId\": \"PlayerE\", \"score\": null}"},
         "{\"r\": [[\"PlayerD\", null], [\"PlayerE\", null], [\"PlayerA\", " I (1) "]]}"},
        /* across types: strings after numbers ascending, before them descending */
        {"{\"$topN\": {\"n\": 2, \"sortBy\": {\"s\": -1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 1}", "{\"p\": \"B\", \"s\": \"2\"}", "{\"p\": \"C\", \"s\": \"\"}"},
         "{\"r\": [\"B\", \"C\"]}"},
        /* arrays sort by their smallest element ascending, largest descending;
         * an empty array before null */
        {"{\"$topN\": {\"n\": 4, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": [4, 1]}", "{\"p\": \"B\", \"s\": 2}", "{\"p\": \"C\", \"s\": []}",
          "{\"p\": \"D\"}"},
         "{\"r\": [\"C\", \"D\", \"A\", \"B\"]}"},
        {"{\"$topN\": {\"n\": 2, \"sortBy\": {\"s\": -1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": [4, 1]}", "{\"p\": \"B\", \"s\": 3}", "{\"p\": \"C\", \"s\": [0, 5]}"},
         "{\"r\": [\"C\", \"A\"]}"},
        /* a second key breaks ties of the first */
        {"{\"$topN\": {\"n\": 3, \"sortBy\": {\"a\": 1, \"b\": -1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"a\": 1, \"b\": 1}", "{\"p\": \"B\", \"a\": 1, \"b\": 2}",
          "{\"p\": \"C\", \"a\": 0, \"b\": 0}"},
         "{\"r\": [\"C\", \"B\", \"A\"]}"},
        /* $$ROOT output, and a dotted sort key */
        {"{\"$topN\": {\"n\": 1, \"sortBy\": {\"m.t\": -1}, \"output\": \"$$ROOT\"}}",
         {"{\"m\": {\"t\": 1}}", "{\"m\": {\"t\": 2}, \"x\": true}"},
         "{\"r\": [{\"m\": {\"t\": " I (2) "}, \"x\": true}]}"},
    };
    CHECK_CASES (cases);
}

static void
test_bottom_n (void)
{
    static const case_t cases[] = {
        {"{\"$bottomN\": {\"n\": 2, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 1}", "{\"p\": \"B\", \"s\": 3}", "{\"p\": \"C\", \"s\": 2}",
          "{\"p\": \"D\", \"s\": 0}"},
         "{\"r\": [\"C\", \"B\"]}"},
        {"{\"$bottomN\": {\"n\": 2, \"sortBy\": {\"s\": -1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 1}", "{\"p\": \"B\", \"s\": 3}", "{\"p\": \"C\", \"s\": 2}",
          "{\"p\": \"D\", \"s\": 0}"},
         "{\"r\": [\"A\", \"D\"]}"},
        /* ties: like the server, the earliest tied documents stay */
        {"{\"$bottomN\": {\"n\": 2, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 5}", "{\"p\": \"B\", \"s\": 5}", "{\"p\": \"C\", \"s\": 5}"},
         "{\"r\": [\"A\", \"B\"]}"},
        /* and a larger value evicts the earliest of the tied lowest */
        {"{\"$bottomN\": {\"n\": 2, \"sortBy\": {\"s\": 1}, \"output\": \"$p\"}}",
         {"{\"p\": \"A\", \"s\": 5}", "{\"p\": \"B\", \"s\": 5}", "{\"p\": \"C\", \"s\": 7}"},
         "{\"r\": [\"B\", \"C\"]}"},
        {"{\"$bottomN\": {\"n\": 5, \"sortBy\": {\"s\": 1}, \"output\": {\"p\": \"$p\"}}}",
         {"{\"p\": \"A\", \"s\": 2}", "{\"p\": \"B\", \"s\": 1}"},
         "{\"r\": [{\"p\": \"B\"}, {\"p\": \"A\"}]}"},
    };
    CHECK_CASES (cases);
}

static void
test_add_to_set (void)
{
    static const case_t cases[] = {
        /* 1, 1.0, NumberLong(1) and NumberDecimal("1") are one value: the first */
        {"{\"$addToSet\": \"$a\"}",
         {"{\"a\": 1}", "{\"a\": 1.0}", "{\"a\": " L (1) "}", "{\"a\": " DEC (1.0) "}", "{\"a\": 2}"},
         "{\"r\": [" I (1) ", " I (2) "]}"},
        {"{\"$addToSet\": \"$a\"}", {"{\"a\": 1.0}", "{\"a\": 1}"}, "{\"r\": [" D (1.0) "]}"},
        /* first-seen order; strings and numbers apart */
        {"{\"$addToSet\": \"$a\"}", {"{\"a\": \"b\"}", "{\"a\": \"a\"}", "{\"a\": \"b\"}", "{\"a\": 1}"},
         "{\"r\": [\"b\", \"a\", " I (1) "]}"},
        /* null is a value, missing is not */
        {"{\"$addToSet\": \"$a\"}", {"{}", "{\"a\": null}", "{}", "{\"a\": null}"}, "{\"r\": [null]}"},
        /* documents and arrays compare whole and deep; field order counts */
        {"{\"$addToSet\": \"$a\"}",
         {"{\"a\": {\"x\": 1, \"y\": [1, {\"z\": 2}]}}", "{\"a\": {\"x\": 1.0, \"y\": [1, {\"z\": " L (2) "}]}}",
          "{\"a\": {\"y\": [1, {\"z\": 2}], \"x\": 1}}", "{\"a\": [1, 2]}", "{\"a\": [2, 1]}",
          "{\"a\": [1, 2]}"},
         "{\"r\": [{\"x\": " I (1) ", \"y\": [" I (1) ", {\"z\": " I (2) "}]}, "
         "{\"y\": [" I (1) ", {\"z\": " I (2) "}], \"x\": " I (1) "}, "
         "[" I (1) ", " I (2) "], [" I (2) ", " I (1) "]]}"},
        {"{\"$addToSet\": {\"k\": \"$a\"}}", {"{\"a\": 1}", "{\"a\": 1}", "{}"},
         "{\"r\": [{\"k\": " I (1) "}, {}]}"},
    };
    CHECK_CASES (cases);
}

/* With no document fed, each gives what $group would. */
static void
test_empty_groups (void)
{
    static const case_t cases[] = {
        {"{\"$count\": {}}", {NULL}, "{\"r\": " I (0) "}"},
        {"{\"$sum\": \"$a\"}", {NULL}, "{\"r\": " I (0) "}"},
        {"{\"$sum\": 2.5}", {NULL}, "{\"r\": " I (0) "}"},
        {"{\"$avg\": \"$a\"}", {NULL}, "{\"r\": null}"},
        {"{\"$min\": \"$a\"}", {NULL}, "{\"r\": null}"},
        {"{\"$max\": \"$a\"}", {NULL}, "{\"r\": null}"},
        {"{\"$first\": \"$a\"}", {NULL}, "{\"r\": null}"},
        {"{\"$last\": \"$a\"}", {NULL}, "{\"r\": null}"},
        {"{\"$topN\": {\"n\": 1, \"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}", {NULL}, "{\"r\": []}"},
        {"{\"$bottomN\": {\"n\": 1, \"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}", {NULL}, "{\"r\": []}"},
        {"{\"$addToSet\": \"$a\"}", {NULL}, "{\"r\": []}"},
    };
    CHECK_CASES (cases);
}

/* A state reused for groups of different sizes forgets the previous one. */
static void
test_reuse (void)
{
    static const char *big[] = {"{\"a\": 3, \"s\": 3}", "{\"a\": 1, \"s\": 1}", "{\"a\": 2, \"s\": 2}",
                                "{\"a\": 1, \"s\": 0}"};
    static const char *small[] = {"{\"a\": 9, \"s\": 9}"};
    static const struct {
        const char *acc, *big, *small;
    } cases[] = {
        {"{\"$topN\": {\"n\": 2, \"sortBy\": {\"s\": 1}, \"output\": \"$a\"}}",
         "{\"r\": [" I (1) ", " I (1) "]}", "{\"r\": [" I (9) "]}"},
        {"{\"$addToSet\": \"$a\"}", "{\"r\": [" I (3) ", " I (1) ", " I (2) "]}", "{\"r\": [" I (9) "]}"},
        {"{\"$sum\": \"$a\"}", "{\"r\": " I (7) "}", "{\"r\": " I (9) "}"},
        {"{\"$first\": \"$a\"}", "{\"r\": " I (3) "}", "{\"r\": " I (9) "}"},
        {"{\"$min\": \"$a\"}", "{\"r\": " I (1) "}", "{\"r\": " I (9) "}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bson_error_t err;
        rm_acc_spec_t *spec = parse_acc (cases[i].acc, &err);
        rm_acc_t *a;
        char *got, *want;
        T_CHECK (spec != NULL);
        if (!spec)
            continue;
        a = rm_acc_new (spec);
        for (int round = 0; round < 2; round++) {
            got = run_group (a, big, 4);
            want = canonical (cases[i].big);
            T_CHECK_STR (got, want);
            bson_free (got);
            bson_free (want);
            rm_acc_reset (a);
            got = run_group (a, small, 1);
            want = canonical (cases[i].small);
            T_CHECK_STR (got, want);
            bson_free (got);
            bson_free (want);
            rm_acc_reset (a);
        }
        rm_acc_destroy (a);
        rm_acc_spec_destroy (spec);
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng (void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

typedef struct {
    int key;
    uint32_t seq;
} ks_t;

static int
ks_cmp (const void *pa, const void *pb)
{
    const ks_t *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The bounded heap against a full sort: $topN is the n first by (key,
 * input order); with distinct keys $bottomN is the n last. */
static void
test_top_bottom_many (void)
{
    enum { N = 2000 };
    static ks_t docs[N], sorted[N];
    static char pad[20000];
    const int64_t ns[] = {1, 2, 7, 100, 1999, 2000, 5000};

    memset (pad, 'x', sizeof pad - 1);

    for (int bottom = 0; bottom < 2; bottom++) {
        for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
            int64_t n = ns[t];
            char acc[200];
            bson_error_t err;
            rm_acc_spec_t *spec;
            rm_acc_t *a;
            bson_t out = BSON_INITIALIZER;
            bson_iter_t it, arr;
            size_t got = 0, want_n = (size_t) (n < N ? n : N);
            bool same = true;

            snprintf (acc, sizeof acc,
                      "{\"r\": {\"%s\": {\"n\": %lld, \"sortBy\": {\"k\": 1}, \"output\": \"$i\"}}}",
                      bottom ? "$bottomN" : "$topN", (long long) n);
            {
                bson_t *b = bson_new_from_json ((const uint8_t *) acc, -1, &err);
                bson_iter_init_find (&it, b, "r");
                spec = rm_acc_spec_parse (&it, &err);
                bson_destroy (b);
            }
            T_CHECK (spec != NULL);
            if (!spec)
                continue;
            a = rm_acc_new (spec);
            for (uint32_t i = 0; i < N; i++) {
                bson_t d = BSON_INITIALIZER;
                /* duplicates for $topN; a permutation for $bottomN */
                docs[i].key = bottom ? (int) ((i * 7919u) % N) : (int) (rng () % 50);
                docs[i].seq = i;
                BSON_APPEND_INT32 (&d, "k", docs[i].key);
                BSON_APPEND_INT32 (&d, "i", (int32_t) i);
                /* Every third one over 16 KiB: its output is evaluated as
                 * it enters, the others' at finish. */
                if (i % 3 == 0)
                    BSON_APPEND_UTF8 (&d, "pad", pad);
                T_CHECK (rm_acc_add (a, bson_get_data (&d), d.len, i, &err));
                bson_destroy (&d);
            }
            memcpy (sorted, docs, sizeof docs);
            qsort (sorted, N, sizeof sorted[0], ks_cmp);
            T_CHECK (rm_acc_finish (a, &out, "r", &err));
            if (bson_iter_init_find (&it, &out, "r") && bson_iter_recurse (&it, &arr)) {
                while (bson_iter_next (&arr)) {
                    size_t want_at = bottom ? N - want_n + got : got;
                    if (got >= want_n || bson_iter_int32 (&arr) != (int32_t) sorted[want_at].seq)
                        same = false;
                    got++;
                }
            }
            T_CHECK (got == want_n);
            T_CHECK (same);
            bson_destroy (&out);
            rm_acc_destroy (a);
            rm_acc_spec_destroy (spec);
        }
    }
}

static void
check_parse_error (const char *acc, const char *want)
{
    bson_error_t err;
    rm_acc_spec_t *s = parse_acc (acc, &err);
    T_CHECK (s == NULL);
    if (s) {
        fprintf (stderr, "  %s: parsed, want an error\n", acc);
        rm_acc_spec_destroy (s);
        return;
    }
    if (!strstr (err.message, want)) {
        fprintf (stderr, "  %s: error \"%s\" lacks \"%s\"\n", acc, err.message, want);
        t_fail_checks++;
    }
}

static void
test_parse_errors (void)
{
    check_parse_error ("{\"$median\": \"$a\"}", "\"r\": unknown accumulator \"$median\"");
    check_parse_error ("{\"$sum\": \"$a\", \"$avg\": \"$b\"}", "one operator");
    check_parse_error ("{}", "a document with one operator");
    check_parse_error ("5", "a document with one operator");
    check_parse_error ("{\"$sum\": [\"$a\"]}", "$sum is a unary operator");
    check_parse_error ("{\"$count\": 1}", "$count takes no argument");
    check_parse_error ("{\"$count\": {\"a\": 1}}", "$count takes no argument");
    check_parse_error ("{\"$sum\": {\"$addd\": [\"$a\", 1]}}",
                       "\"r\": $sum: unknown expression operator $addd");
    check_parse_error ("{\"$sum\": {\"$function\": {}}}", "$function is not supported");
    check_parse_error ("{\"$first\": \"$$nope\"}", "use of undefined variable: nope");
    check_parse_error ("{\"$max\": \"$\"}", "\"r\": $max");
    check_parse_error ("{\"$max\": \"$a..b\"}", "\"r\": $max");
    check_parse_error ("{\"$first\": {\"a.b\": \"$x\"}}", "may not be empty, start with '$' or hold a '.'");
    check_parse_error ("{\"$topN\": {\"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}",
                       "\"r\": $topN: missing \"n\"");
    check_parse_error ("{\"$topN\": {\"n\": 1, \"output\": \"$a\"}}", "missing \"sortBy\"");
    check_parse_error ("{\"$bottomN\": {\"n\": 1, \"sortBy\": {\"a\": 1}}}",
                       "\"r\": $bottomN: missing \"output\"");
    check_parse_error ("{\"$topN\": {\"n\": 0, \"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}",
                       "\"n\" must be greater than 0, found 0");
    check_parse_error ("{\"$topN\": {\"n\": -3, \"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}",
                       "greater than 0, found -3");
    check_parse_error ("{\"$topN\": {\"n\": 2.5, \"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}",
                       "\"n\" must be an integer");
    check_parse_error ("{\"$topN\": {\"n\": \"3\", \"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}",
                       "constant positive integer");
    check_parse_error ("{\"$topN\": {\"n\": \"$k\", \"sortBy\": {\"a\": 1}, \"output\": \"$a\"}}",
                       "constant positive integer");
    check_parse_error ("{\"$topN\": {\"n\": 1, \"sortBy\": {\"a\": 2}, \"output\": \"$a\"}}",
                       "the direction of \"a\" must be 1 or -1");
    check_parse_error ("{\"$topN\": {\"n\": 1, \"sortBy\": {\"a\": \"asc\"}, \"output\": \"$a\"}}",
                       "must be 1 or -1");
    check_parse_error ("{\"$topN\": {\"n\": 1, \"sortBy\": \"a\", \"output\": \"$a\"}}",
                       "\"sortBy\" must be a document");
    check_parse_error ("{\"$topN\": {\"n\": 1, \"sortBy\": {}, \"output\": \"$a\"}}",
                       "at least one field");
    check_parse_error ("{\"$topN\": {\"n\": 1, \"sortBy\": {\"$a\": 1}, \"output\": \"$a\"}}",
                       "\"sortBy\"");
    check_parse_error ("{\"$topN\": {\"n\": 1, \"sortBy\": {\"a\": 1}, \"output\": \"$a\", \"x\": 1}}",
                       "unknown or repeated argument \"x\"");
    check_parse_error ("{\"$topN\": [1]}", "must be a document");
}

/* ---- decimal arithmetic */

static void
dec_str (const bson_decimal128_t *d, char *out)
{
    bson_decimal128_to_string (d, out);
}

static void
check_dec_add (const char *a, const char *b, const char *want)
{
    bson_decimal128_t x, y, r;
    char got[BSON_DECIMAL128_STRING];
    bson_decimal128_from_string (a, &x);
    bson_decimal128_from_string (b, &y);
    rm_xdec_add (&r, &x, &y);
    dec_str (&r, got);
    T_CHECK_STR (got, want);
}

static void
check_dec_div (const char *a, int64_t n, const char *want)
{
    bson_decimal128_t x, r;
    char got[BSON_DECIMAL128_STRING];
    bson_decimal128_from_string (a, &x);
    rm_xdec_div_int64 (&r, &x, n);
    dec_str (&r, got);
    T_CHECK_STR (got, want);
}

static void
check_dec_double (double d, const char *want)
{
    bson_decimal128_t r;
    char got[BSON_DECIMAL128_STRING];
    rm_xdec_from_double (&r, d, false);
    dec_str (&r, got);
    T_CHECK_STR (got, want);
}

/* Values worked out by hand and checked against the Intel library. */
static void
test_decimal_vectors (void)
{
    check_dec_add ("0.1", "0.2", "0.3");
    check_dec_add ("1.50", "1", "2.50");
    check_dec_add ("0", "1E+2", "100");
    check_dec_add ("1E+40", "1", "1.000000000000000000000000000000000E+40");
    /* 40 nines round up to 10^40 */
    check_dec_add ("1E+40", "-1", "1.000000000000000000000000000000000E+40");
    check_dec_add ("1E+40", "-0.5", "1.000000000000000000000000000000000E+40");
    check_dec_add ("1234567890123456789012345678901234E+6", "-500000", "1.234567890123456789012345678901234E+39");
    check_dec_add ("1234567890123456789012345678901234E+6", "-500001", "1.234567890123456789012345678901233E+39");
    /* operands far apart: the small one only sways the rounding */
    check_dec_add ("1E+100", "1E-100", "1.000000000000000000000000000000000E+100");
    check_dec_add ("1.000000000000000000000000000000001E+100", "-1E-100",
                   "1.000000000000000000000000000000001E+100");
    check_dec_add ("1.000000000000000000000000000000005E+100", "-1E-100",
                   "1.000000000000000000000000000000005E+100");
    check_dec_add ("0E+100", "7E-100", "7E-100");
    check_dec_add ("7E+100", "0E-100", "7.000000000000000000000000000000000E+100");
    check_dec_add ("5E-6176", "-5E-6176", "0E-6176");
    check_dec_add ("-0", "-0", "-0");
    check_dec_add ("-0", "0", "0");
    check_dec_add ("-1.0", "1", "0.0");
    check_dec_add ("9999999999999999999999999999999999", "1", "1.000000000000000000000000000000000E+34");
    check_dec_add ("9999999999999999999999999999999999", "0.5", "1.000000000000000000000000000000000E+34");
    check_dec_add ("9999999999999999999999999999999998", "0.5", "9999999999999999999999999999999998");
    check_dec_add ("Infinity", "1", "Infinity");
    check_dec_add ("-Infinity", "Infinity", "NaN");

    check_dec_div ("1", 3, "0.3333333333333333333333333333333333");
    check_dec_div ("2", 3, "0.6666666666666666666666666666666667");
    check_dec_div ("3", 2, "1.5");
    check_dec_div ("3.00", 3, "1.00");
    check_dec_div ("1E+2", 4, "25");
    check_dec_div ("1E+2", 3, "33.33333333333333333333333333333333");
    check_dec_div ("0E+5", 7, "0E+5");
    check_dec_div ("-7", 2, "-3.5");
    check_dec_div ("1E-6176", 2, "0E-6176");
    check_dec_div ("3E-6176", 2, "2E-6176");
    check_dec_div ("1", 9223372036854775807, "1.084202172485504434125002235952170E-19");

    check_dec_double (0.0, "0");
    check_dec_double (-0.0, "-0");
    check_dec_double (3.0, "3");
    check_dec_double (0.5, "0.5");
    check_dec_double (0.1, "0.1000000000000000055511151231257827");
    check_dec_double (1e20, "100000000000000000000");
    check_dec_double (1e40, "1.000000000000000030378602842700367E+40");
    check_dec_double (4.9406564584124654e-324, "4.940656458412465441765687928682214E-324");
    check_dec_double (1.0 / 0.0, "Infinity");
}

#if defined(__DEC128_MANT_DIG__) && defined(__DECIMAL_BID_FORMAT__) && \
    BSON_BYTE_ORDER == BSON_LITTLE_ENDIAN
/* GCC's _Decimal128 on x86 is the Intel BID library the server uses: a
 * random comparison, bit for bit, over every kind of operand. */
static bson_decimal128_t
random_dec (void)
{
    bson_decimal128_t d;
    uint64_t hi = 0, lo = 0, kind = rng () % 100;
    int digits = 1 + (int) (rng () % 34), e;

    for (int i = 0; i < digits; i++) { /* hi:lo = hi:lo * 10 + digit */
        uint64_t l1 = lo << 1, l3 = lo << 3, h = (hi << 1) + (lo >> 63) + (hi << 3) + (lo >> 61);
        uint64_t sum = l1 + l3, digit = rng () % 10;
        h += sum < l1;
        lo = sum + digit;
        h += lo < sum;
        hi = h;
    }
    if (kind < 3)
        hi = lo = 0;
    e = kind < 40 ? (int) (rng () % 41) - 20
        : kind < 80 ? (int) (rng () % 201) - 100
                    : (int) (rng () % 12288) - 6176;
    d.high = ((rng () & 1) ? 1ULL << 63 : 0) | ((uint64_t) (e + 6176) << 49) | hi;
    d.low = lo;
    if (kind == 99)
        d.high = (d.high & (1ULL << 63)) | 0x7800000000000000ULL;
    if (kind == 98)
        d.high = (d.high & (1ULL << 63)) | 0x7c00000000000000ULL;
    return d;
}

static bool
same_bits (const bson_decimal128_t *a, _Decimal128 b)
{
    bson_decimal128_t x;
    memcpy (&x, &b, sizeof x);
    return a->high == x.high && a->low == x.low;
}

static void
test_decimal_against_bid (void)
{
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        bson_decimal128_t a = random_dec (), b = random_dec (), r;
        volatile _Decimal128 x, y;
        volatile double dv;
        volatile long long n;
        uint64_t bits = rng ();

        if (rng () % 4 == 0) /* close exponents: carries and cancellation */
            b.high = (b.high & ~(0x3fffULL << 49)) | (a.high & (0x3fffULL << 49));
        memcpy ((void *) &x, &a, sizeof a);
        memcpy ((void *) &y, &b, sizeof b);
        rm_xdec_add (&r, &a, &b);
        bad += !same_bits (&r, x + y);

        n = (long long) (rng () % (rng () % 3 ? 20 : 1000000000000ULL)) + 1;
        rm_xdec_div_int64 (&r, &a, n);
        bad += !same_bits (&r, x / (_Decimal128) n);

        memcpy ((void *) &dv, &bits, sizeof bits);
        if (rng () % 2)
            dv = (double) (int64_t) (rng () % 2000000) / (double) (1 + rng () % 1000);
        if (!isnan (dv)) {
            rm_xdec_from_double (&r, dv, false);
            bad += !same_bits (&r, (_Decimal128) dv);
        }
    }
    T_CHECK (bad == 0);
}
#else
static void
test_decimal_against_bid (void)
{
    printf ("# no BID _Decimal128 in this compiler: decimal comparison skipped\n");
}
#endif

int
main (void)
{
    T_RUN (test_sum_types);
    T_RUN (test_sum_ignores);
    T_RUN (test_sum_constant);
    T_RUN (test_avg);
    T_RUN (test_min_max);
    T_RUN (test_first_last);
    T_RUN (test_top_n);
    T_RUN (test_bottom_n);
    T_RUN (test_add_to_set);
    T_RUN (test_empty_groups);
    T_RUN (test_reuse);
    T_RUN (test_top_bottom_many);
    T_RUN (test_parse_errors);
    T_RUN (test_decimal_vectors);
    T_RUN (test_decimal_against_bid);
    return t_done ();
}
