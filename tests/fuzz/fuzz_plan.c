/* Fuzzes the plan parser and checker, and what a plan evaluates: the input
 * is the plan's text. A plan that parses is checked against a small dump's
 * namespaces, as `remodel check --against` does; then its expressions and
 * filters run over a few fixed documents (nested documents and arrays,
 * strings, dates, numbers of every type, the limits of each): each step's
 * filter and match, each set step's $set stage (its output fed to the next
 * step, as a run chains them), each summarize accumulator over all of
 * them. So the evaluator and the query matcher run under the fuzzer, not
 * only their parsers. Errors are the point and are dropped; a crash, a
 * sanitizer report, a hang, or a set whose output is not BSON is a
 * finding. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "remodel/accum.h"
#include "remodel/buf.h"
#include "remodel/plan.h"

/* $$NOW, fixed: the same input does the same thing each time. */
#define FUZZ_NOW 1700000000123LL
/* How many documents a set may chain through (each step's output is the
 * next step's input) before the harness stops: a plan of many steps that
 * each double the document would otherwise only measure memcpy. */
#define FUZZ_MAX_DOC (4u << 20)

enum { N_DOCS = 5 };
static bson_t *docs[N_DOCS];

static void
append_dec (bson_t *b, const char *key, const char *text)
{
    bson_decimal128_t d;
    bson_decimal128_from_string (text, &d);
    BSON_APPEND_DECIMAL128 (b, key, &d);
}

/* One of every BSON type, nested documents and arrays of mixed elements,
 * the fields a plan of the project's samples names (name, first, last,
 * due_date, qty, price, tags, schemaVersion, ...). */
static bson_t *
doc_typical (void)
{
    bson_t *b = bson_new (), sub, sub2, arr, el;
    bson_oid_t oid;
    uint8_t bin[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    char key[16], long_s[1201];

    bson_oid_init_from_string (&oid, "5f1d7f0c9d3e2a0011a1b2c3");
    BSON_APPEND_OID (b, "_id", &oid);
    BSON_APPEND_UTF8 (b, "name", "Ada Lovelace");
    BSON_APPEND_UTF8 (b, "first", "Ada");
    BSON_APPEND_UTF8 (b, "last", "Lovelace");
    BSON_APPEND_UTF8 (b, "title", "  Héllo, Wörld ✓ 𝄞  ");
    BSON_APPEND_UTF8 (b, "s", "2007-01-01T00:00:00Z");
    BSON_APPEND_UTF8 (b, "sdate", "2023-03-26 02:30:00");
    BSON_APPEND_UTF8 (b, "num", "42");
    BSON_APPEND_UTF8 (b, "hex", "5f1d7f0c9d3e2a0011a1b2c3");
    BSON_APPEND_UTF8 (b, "empty", "");
    BSON_APPEND_DATE_TIME (b, "due_date", 1167609600000LL);
    BSON_APPEND_DATE_TIME (b, "created", -62135596800001LL);
    BSON_APPEND_INT32 (b, "qty", 7);
    BSON_APPEND_INT32 (b, "i32max", INT32_MAX);
    BSON_APPEND_INT32 (b, "i32min", INT32_MIN);
    BSON_APPEND_INT64 (b, "i64", 9007199254740993LL);
    BSON_APPEND_INT64 (b, "i64min", INT64_MIN);
    BSON_APPEND_INT64 (b, "i64max", INT64_MAX);
    BSON_APPEND_DOUBLE (b, "price", 19.99);
    BSON_APPEND_DOUBLE (b, "negzero", -0.0);
    BSON_APPEND_DOUBLE (b, "nan", NAN);
    BSON_APPEND_DOUBLE (b, "inf", INFINITY);
    BSON_APPEND_DOUBLE (b, "dmax", DBL_MAX);
    BSON_APPEND_DOUBLE (b, "tiny", 4.9e-324);
    append_dec (b, "dec", "1234567890.123456789012345678901234");
    append_dec (b, "decmax", "9.999999999999999999999999999999999E+6144");
    append_dec (b, "decnan", "NaN");
    append_dec (b, "decinf", "-Infinity");
    append_dec (b, "dectiny", "1E-6176");
    BSON_APPEND_BOOL (b, "done", false);
    BSON_APPEND_NULL (b, "nothing");
    BSON_APPEND_INT32 (b, "schemaVersion", 1);
    BSON_APPEND_BINARY (b, "bin", BSON_SUBTYPE_BINARY, bin, sizeof bin);
    BSON_APPEND_BINARY (b, "uuid", BSON_SUBTYPE_UUID, bin, sizeof bin);
    BSON_APPEND_REGEX (b, "re", "^a(b+)c$", "im");
    BSON_APPEND_TIMESTAMP (b, "ts", 1700000000, 7);
    BSON_APPEND_MINKEY (b, "lo");
    BSON_APPEND_MAXKEY (b, "hi");
    BSON_APPEND_SYMBOL (b, "sym", "sym");
    BSON_APPEND_CODE (b, "code", "function () {}");
    BSON_APPEND_UNDEFINED (b, "undef");
    memset (long_s, 'a', sizeof long_s - 1);
    long_s[sizeof long_s - 1] = '\0';
    long_s[sizeof long_s - 2] = '!';
    BSON_APPEND_UTF8 (b, "long", long_s);
    BSON_APPEND_UTF8 (b, "abc", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!");

    BSON_APPEND_DOCUMENT_BEGIN (b, "a", &sub);
    BSON_APPEND_DOCUMENT_BEGIN (&sub, "b", &sub2);
    BSON_APPEND_INT32 (&sub2, "c", 1);
    BSON_APPEND_ARRAY_BEGIN (&sub2, "d", &arr);
    BSON_APPEND_INT32 (&arr, "0", 1);
    BSON_APPEND_DOCUMENT_BEGIN (&arr, "1", &el);
    BSON_APPEND_INT32 (&el, "e", 2);
    bson_append_document_end (&arr, &el);
    BSON_APPEND_UTF8 (&arr, "2", "x");
    bson_append_array_end (&sub2, &arr);
    bson_append_document_end (&sub, &sub2);
    BSON_APPEND_UTF8 (&sub, "$odd", "dollar");
    BSON_APPEND_UTF8 (&sub, "dot.ted", "dotted");
    bson_append_document_end (b, &sub);

    BSON_APPEND_ARRAY_BEGIN (b, "arr", &arr);
    BSON_APPEND_INT32 (&arr, "0", 3);
    BSON_APPEND_INT64 (&arr, "1", 1);
    BSON_APPEND_DOUBLE (&arr, "2", 2.5);
    append_dec (&arr, "3", "0.1");
    BSON_APPEND_UTF8 (&arr, "4", "x");
    BSON_APPEND_NULL (&arr, "5");
    BSON_APPEND_DOCUMENT_BEGIN (&arr, "6", &el);
    BSON_APPEND_INT32 (&el, "b", 1);
    BSON_APPEND_UTF8 (&el, "k", "key");
    BSON_APPEND_UTF8 (&el, "v", "value");
    bson_append_document_end (&arr, &el);
    BSON_APPEND_ARRAY_BEGIN (&arr, "7", &sub);
    BSON_APPEND_INT32 (&sub, "0", 1);
    BSON_APPEND_INT32 (&sub, "1", 2);
    bson_append_array_end (&arr, &sub);
    BSON_APPEND_DATE_TIME (&arr, "8", 0);
    BSON_APPEND_BOOL (&arr, "9", true);
    bson_append_array_end (b, &arr);

    BSON_APPEND_ARRAY_BEGIN (b, "tags", &arr);
    BSON_APPEND_UTF8 (&arr, "0", "red");
    BSON_APPEND_UTF8 (&arr, "1", "green");
    BSON_APPEND_UTF8 (&arr, "2", "red");
    bson_append_array_end (b, &arr);

    /* [{k, v}] pairs ($arrayToObject) and order lines ($sum of products) */
    BSON_APPEND_ARRAY_BEGIN (b, "lines", &arr);
    for (int i = 0; i < 12; i++) {
        snprintf (key, sizeof key, "%d", i);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, key, &el);
        snprintf (key, sizeof key, "k%d", i % 5);
        BSON_APPEND_UTF8 (&el, "k", key);
        BSON_APPEND_INT32 (&el, "v", i);
        BSON_APPEND_INT32 (&el, "qty", i + 1);
        BSON_APPEND_DOUBLE (&el, "unitPrice", 0.25 * i);
        BSON_APPEND_DATE_TIME (&el, "at", 1700000000000LL + 86400000LL * i);
        bson_append_document_end (&arr, &el);
    }
    bson_append_array_end (b, &arr);
    return b;
}

/* The same names with other types: where the typical document has a
 * string, a number; a document where an array was; the wrong kind of
 * everything an operator may be handed. */
static bson_t *
doc_swapped (void)
{
    bson_t *b = bson_new (), sub, arr;
    BSON_APPEND_INT32 (b, "_id", 2);
    BSON_APPEND_INT64 (b, "name", -1);
    BSON_APPEND_NULL (b, "first");
    BSON_APPEND_ARRAY_BEGIN (b, "last", &arr);
    BSON_APPEND_UTF8 (&arr, "0", "Love");
    BSON_APPEND_UTF8 (&arr, "1", "lace");
    bson_append_array_end (b, &arr);
    BSON_APPEND_UTF8 (b, "s", "n/a");
    BSON_APPEND_UTF8 (b, "sdate", "31/12/1999 23:59:60.999 +14:00");
    BSON_APPEND_UTF8 (b, "num", "1e400");
    BSON_APPEND_DOUBLE (b, "due_date", 1e300);
    BSON_APPEND_UTF8 (b, "qty", "seven");
    BSON_APPEND_INT32 (b, "price", 0);
    BSON_APPEND_INT32 (b, "schemaVersion", 3);
    BSON_APPEND_DOCUMENT_BEGIN (b, "arr", &sub);
    BSON_APPEND_INT32 (&sub, "0", 1);
    bson_append_document_end (b, &sub);
    BSON_APPEND_ARRAY_BEGIN (b, "a", &arr);
    BSON_APPEND_DOCUMENT_BEGIN (&arr, "0", &sub);
    BSON_APPEND_INT32 (&sub, "b", 5);
    bson_append_document_end (&arr, &sub);
    BSON_APPEND_DOCUMENT_BEGIN (&arr, "1", &sub);
    BSON_APPEND_NULL (&sub, "b");
    bson_append_document_end (&arr, &sub);
    BSON_APPEND_INT32 (&arr, "2", 9);
    bson_append_array_end (b, &arr);
    BSON_APPEND_UTF8 (b, "tags", "red");
    BSON_APPEND_DATE_TIME (b, "lines", INT64_MAX);
    BSON_APPEND_BOOL (b, "done", true);
    return b;
}

/* Depth: a document nested 90 levels ({"a": {"a": [{"a": ...}]}}), every
 * other level an array of one document, past what a path or a recursion
 * should assume. */
static bson_t *
doc_deep (void)
{
    enum { DEPTH = 90 };
    bson_t *levels = bson_malloc0 (sizeof (bson_t) * (DEPTH + 1));
    bson_t *b = bson_new ();
    BSON_APPEND_UTF8 (b, "_id", "deep");
    for (int i = 0; i <= DEPTH; i++)
        bson_init (&levels[i]);
    /* innermost first: each level holds the one inside it */
    BSON_APPEND_INT32 (&levels[DEPTH], "leaf", 1);
    for (int i = DEPTH; i > 0; i--) {
        bson_t arr;
        BSON_APPEND_INT32 (&levels[i - 1], "n", i);
        if (i % 2) {
            BSON_APPEND_ARRAY_BEGIN (&levels[i - 1], "a", &arr);
            BSON_APPEND_DOCUMENT (&arr, "0", &levels[i]);
            BSON_APPEND_INT32 (&arr, "1", i);
            bson_append_array_end (&levels[i - 1], &arr);
        } else {
            BSON_APPEND_DOCUMENT (&levels[i - 1], "a", &levels[i]);
        }
    }
    BSON_APPEND_DOCUMENT (b, "a", &levels[0]);
    for (int i = 0; i <= DEPTH; i++)
        bson_destroy (&levels[i]);
    bson_free (levels);
    return b;
}

/* Width: long arrays and strings ($map, $reduce, $split, $concat over
 * them), many fields. */
static bson_t *
doc_wide (void)
{
    bson_t *b = bson_new (), arr;
    char key[16], *s = bson_malloc (8193);
    BSON_APPEND_UTF8 (b, "_id", "wide");
    BSON_APPEND_ARRAY_BEGIN (b, "arr", &arr);
    for (int i = 0; i < 1000; i++) {
        snprintf (key, sizeof key, "%d", i);
        if (i % 3 == 0)
            BSON_APPEND_INT32 (&arr, key, i);
        else if (i % 3 == 1)
            BSON_APPEND_DOUBLE (&arr, key, i / 7.0);
        else
            BSON_APPEND_UTF8 (&arr, key, key);
    }
    bson_append_array_end (b, &arr);
    for (int i = 0; i < 8192; i++)
        s[i] = (char) (i % 11 == 10 ? ' ' : 'a' + i % 26);
    s[8192] = '\0';
    BSON_APPEND_UTF8 (b, "name", s);
    BSON_APPEND_UTF8 (b, "long", s);
    for (int i = 0; i < 200; i++) {
        snprintf (key, sizeof key, "f%d", i);
        BSON_APPEND_INT64 (b, key, (int64_t) i * 1000003);
    }
    bson_free (s);
    return b;
}

static void
init_docs (void)
{
    if (docs[0])
        return;
    docs[0] = doc_typical ();
    docs[1] = doc_swapped ();
    docs[2] = doc_deep ();
    docs[3] = doc_wide ();
    docs[4] = bson_new (); /* {}: every path missing */
}

/* Whether a step's query passes the document; a failing $expr counts as
 * not matched (the run would stop with its error). */
static bool
match (rm_query_t *q, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len)
{
    bool matched = true;
    bson_error_t err;
    if (!q)
        return true;
    if (!rm_query_match (q, cx, doc, len, &matched, &err))
        return false;
    return matched;
}

/* A set's output must be a document, whatever it was given. */
static void
check_bson (const uint8_t *data, size_t len)
{
    bson_t b;
    size_t off;
    if (len > INT32_MAX || !bson_init_static (&b, data, len) || !bson_validate (&b, BSON_VALIDATE_NONE, &off))
        abort ();
}

static void
eval_plan (const rm_plan_t *plan, rm_expr_ctx_t *cx)
{
    rm_buf_t buf[2];
    bson_error_t err;

    rm_buf_init (&buf[0]);
    rm_buf_init (&buf[1]);
    for (int d = 0; d < N_DOCS; d++) {
        const uint8_t *doc = bson_get_data (docs[d]);
        uint32_t len = docs[d]->len;
        int cur = 0;
        for (size_t i = 0; i < plan->n; i++) {
            const rm_step_t *s = &plan->steps[i];
            rm_expr_ctx_reset (cx);
            (void) match (s->match, cx, doc, len);
            rm_expr_ctx_reset (cx);
            if (!match (s->filter, cx, doc, len) || s->kind != RM_STEP_SET || !s->u.fields.set)
                continue;
            rm_expr_ctx_reset (cx);
            if (!rm_expr_set_apply (s->u.fields.set, cx, doc, len, &buf[cur], &err)) {
                if (!err.message[0])
                    abort (); /* an error must say what failed */
                continue;
            }
            check_bson (buf[cur].data, buf[cur].len);
            if (buf[cur].len > FUZZ_MAX_DOC)
                break;
            doc = buf[cur].data;
            len = (uint32_t) buf[cur].len;
            cur ^= 1;
        }
    }
    rm_buf_destroy (&buf[0]);
    rm_buf_destroy (&buf[1]);

    /* summarize: every accumulator over every document, as one group */
    for (size_t i = 0; i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        if (s->kind != RM_STEP_SUMMARIZE)
            continue;
        for (size_t k = 0; k < s->u.summarize.n; k++) {
            rm_acc_t *a = rm_acc_new (s->u.summarize.accs[k]);
            bson_t out = BSON_INITIALIZER;
            bool ok = true;
            for (int d = 0; d < N_DOCS && ok; d++)
                ok = rm_acc_add (a, bson_get_data (docs[d]), docs[d]->len, (uint64_t) d, &err);
            if (ok)
                rm_acc_finish (a, &out, "x", &err);
            bson_destroy (&out);
            rm_acc_destroy (a);
        }
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    rm_plan_t plan;
    bson_error_t err;
    rm_dump_info_t info;
    rm_expr_ctx_t *cx;

    if (!rm_plan_parse (&plan, (const char *) data, size, &err))
        return 0;
    rm_dump_info_init (&info);
    rm_dump_info_add (&info, "crm", "people");
    rm_dump_info_add (&info, "crm", "tasks");
    rm_dump_info_add (&info, "iot", "readings");
    rm_plan_check_against (&plan, &info, &err);
    rm_dump_info_destroy (&info);

    init_docs ();
    cx = rm_expr_ctx_new (FUZZ_NOW);
    eval_plan (&plan, cx);
    rm_expr_ctx_destroy (cx);
    rm_plan_destroy (&plan);
    return 0;
}
