/* The expression layer's core: paths and their array traversal,
 * variables, object and array expressions, $literal, $let, the
 * conditionals, logic and comparisons, and the parser's refusals. Cases
 * from MongoDB's documentation of each operator, and the expression
 * language's known traps. */
#include "expr_case.h"

static const x_case_t paths[] = {
    {"{\"a\": {\"b\": 5}}", "\"$a.b\"", "5"},
    {"{\"a\": [{\"b\": 1}, {\"c\": 2}, {\"b\": 3}]}", "\"$a.b\"", "[1, 3]"},
    /* inner arrays and scalars are skipped (evaluatePathArray) */
    {"{\"a\": [[{\"b\": 1}], 7, {\"b\": 2}]}", "\"$a.b\"", "[2]"},
    {"{\"a\": [1, 2]}", "\"$a\"", "[1, 2]"},
    {"{\"a\": [{\"b\": 1}]}", "\"$a.0\"", "[]"},
    {"{\"a\": 1}", "\"$nope\"", "MISSING"},
    {"{\"a\": 1}", "\"$a.b\"", "MISSING"},
    {"{\"a\": 1}", "\"$$ROOT\"", "{\"a\": 1}"},
    {"{\"a\": 1}", "\"$$CURRENT.a\"", "1"},
    {"{\"a\": 1}", "\"$$REMOVE\"", "MISSING"},
    {"{}", "\"$$NOW\"", "{\"$date\": {\"$numberLong\": \"1704164645678\"}}"},
    {"{}", "\"$$nope\"", "PARSE:undefined variable"},
    {"{}", "\"$$CLUSTER_TIME\"", "PARSE:not supported"},
    {"{}", "\"$\"", "PARSE:not a valid field path"},
    {"{}", "\"$a..b\"", "PARSE:not a valid field path"},
    {NULL, NULL, NULL},
};

static const x_case_t literals[] = {
    {"{\"a\": 1}", "{\"x\": \"$a\", \"y\": [\"$a\", \"$nope\"], \"z\": \"$nope\"}",
     "{\"x\": 1, \"y\": [1, null]}"},
    {"{}", "{\"$literal\": \"$a\"}", "\"$a\""},
    {"{}", "{\"$const\": {\"$add\": 1}}", "{\"$add\": 1}"},
    {"{}", "{\"$date\": \"2020-01-01T00:00:00Z\"}", "{\"$date\": {\"$numberLong\": \"1577836800000\"}}"},
    {"{}", "{}", "{}"},
    {"{}", "{\"$nosuch\": 1}", "PARSE:unknown expression operator $nosuch"},
    {"{}", "{\"$function\": {}}", "PARSE:$function is not supported"},
    {"{}", "{\"$meta\": \"textScore\"}", "PARSE:$meta is not supported"},
    {"{}", "{\"a.b\": 1}", "PARSE:field name \"a.b\""},
    {"{}", "{\"$eq\": [1, 1], \"x\": 1}", "PARSE:holds one operator"},
    {"{}", "{\"a\": {\"$bad\": 1}}", "PARSE:unknown expression operator $bad"},
    {NULL, NULL, NULL},
};

static const x_case_t lets[] = {
    {"{\"p\": 10, \"q\": 3}",
     "{\"$let\": {\"vars\": {\"total\": \"$p\", \"d\": \"$q\"}, \"in\": {\"$cond\": [{\"$gt\": [\"$$total\", \"$$d\"]}, \"$$total\", \"$$d\"]}}}",
     "10"},
    {"{}", "{\"$let\": {\"vars\": {\"x\": {\"a\": 1}}, \"in\": \"$$x.a\"}}", "1"},
    {"{}", "{\"$let\": {\"vars\": {\"x\": 1}, \"in\": {\"$let\": {\"vars\": {\"x\": 2}, \"in\": \"$$x\"}}}}", "2"},
    {"{}", "{\"$let\": {\"vars\": {\"x\": 1, \"y\": \"$$x\"}, \"in\": \"$$y\"}}", "PARSE:undefined variable: x"},
    {"{}", "{\"$let\": {\"vars\": {\"Bad\": 1}, \"in\": 1}}", "PARSE:not a valid variable name"},
    {"{}", "{\"$let\": {\"vars\": {\"ROOT\": 1}, \"in\": 1}}", "PARSE:not a valid variable name"},
    {"{}", "{\"$let\": {\"vars\": {}}}", "PARSE:needs both"},
    {NULL, NULL, NULL},
};

static const x_case_t conds[] = {
    {"{\"q\": 300}", "{\"$cond\": {\"if\": {\"$gte\": [\"$q\", 250]}, \"then\": 30, \"else\": 20}}", "30"},
    {"{\"q\": 3}", "{\"$cond\": [{\"$gte\": [\"$q\", 250]}, 30, 20]}", "20"},
    /* truthiness: "", [], {} are true; 0, null, missing false */
    {"{}", "{\"$cond\": [\"\", 1, 2]}", "1"},
    {"{}", "{\"$cond\": [[], 1, 2]}", "1"},
    {"{}", "{\"$cond\": [0.0, 1, 2]}", "2"},
    {"{}", "{\"$cond\": [{\"$numberDecimal\": \"0E-5\"}, 1, 2]}", "2"},
    {"{}", "{\"$cond\": [\"$nope\", 1, 2]}", "2"},
    {"{}", "{\"$cond\": [true, \"$$REMOVE\", 2]}", "MISSING"},
    {"{}", "{\"$cond\": [1, 2]}", "PARSE:exactly 3"},
    {"{}", "{\"$cond\": {\"if\": 1, \"then\": 2}}", "PARSE:missing 'else'"},
    {"{\"d\": null}", "{\"$ifNull\": [\"$d\", \"Unspecified\"]}", "\"Unspecified\""},
    {"{}", "{\"$ifNull\": [\"$d\", \"$e\", 5]}", "5"},
    {"{\"e\": 0}", "{\"$ifNull\": [\"$d\", \"$e\", 5]}", "0"},
    {"{}", "{\"$ifNull\": [\"$d\", \"$e\"]}", "MISSING"},
    {"{}", "{\"$ifNull\": [1]}", "PARSE:at least 2"},
    {"{\"s\": 80}",
     "{\"$switch\": {\"branches\": [{\"case\": {\"$gte\": [\"$s\", 90]}, \"then\": \"A\"}, {\"case\": {\"$gte\": [\"$s\", 80]}, \"then\": \"B\"}], \"default\": \"C\"}}",
     "\"B\""},
    {"{\"s\": 1}", "{\"$switch\": {\"branches\": [{\"case\": false, \"then\": 1}], \"default\": \"$nope\"}}", "MISSING"},
    {"{\"s\": 1}", "{\"$switch\": {\"branches\": [{\"case\": false, \"then\": 1}]}}", "ERROR:no branch matched"},
    {"{}", "{\"$switch\": {\"branches\": []}}", "PARSE:at least one branch"},
    {NULL, NULL, NULL},
};

static const x_case_t logic[] = {
    {"{}", "{\"$and\": [1, \"green\"]}", "true"},
    {"{}", "{\"$and\": []}", "true"},
    {"{}", "{\"$and\": [null, true]}", "false"},
    {"{}", "{\"$and\": [0, {\"$divide\": [1, 0]}]}", "false"},
    {"{}", "{\"$or\": []}", "false"},
    {"{}", "{\"$or\": [null, 0, \"$nope\", [0]]}", "true"},
    {"{}", "{\"$not\": [[false]]}", "false"},
    {"{}", "{\"$not\": [null]}", "true"},
    {"{}", "{\"$not\": \"$nope\"}", "true"},
    {"{}", "{\"$not\": [1, 2]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

static const x_case_t compares[] = {
    {"{\"q\": 250}", "{\"$eq\": [\"$q\", 250.0]}", "true"},
    {"{\"q\": 250}", "{\"$eq\": [\"$q\", {\"$numberDecimal\": \"250.00\"}]}", "true"},
    {"{}", "{\"$eq\": [\"$nope\", null]}", "false"},
    {"{}", "{\"$lt\": [\"$nope\", null]}", "true"},
    {"{}", "{\"$eq\": [\"$nope\", \"$alsonope\"]}", "true"},
    /* across types by the sort order: a number is below a string */
    {"{}", "{\"$lt\": [5, \"a\"]}", "true"},
    {"{}", "{\"$gt\": [{\"a\": 1}, \"zzz\"]}", "true"},
    {"{}", "{\"$cmp\": [\"abc\", \"abd\"]}", "-1"},
    {"{}", "{\"$cmp\": [2, 1.5]}", "1"},
    {"{}", "{\"$cmp\": [[1, 2], [1, 2]]}", "0"},
    {"{}", "{\"$ne\": [{\"$date\": \"2020-01-01T00:00:00Z\"}, {\"$numberLong\": \"1577836800000\"}]}", "true"},
    {"{}", "{\"$gte\": [{\"$numberDouble\": \"NaN\"}, 0]}", "false"},
    {"{}", "{\"$eq\": [{\"$numberDouble\": \"NaN\"}, {\"$numberDouble\": \"NaN\"}]}", "true"},
    {"{}", "{\"$eq\": [1]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t timestamps[] = {
    {"{\"t\": {\"$timestamp\": {\"t\": 1622731060, \"i\": 5}}}", "{\"$tsSecond\": \"$t\"}",
     "{\"$numberLong\": \"1622731060\"}"},
    {"{\"t\": {\"$timestamp\": {\"t\": 1622731060, \"i\": 5}}}", "{\"$tsIncrement\": \"$t\"}",
     "{\"$numberLong\": \"5\"}"},
    {"{}", "{\"$tsSecond\": \"$nope\"}", "null"},
    {"{\"t\": 5}", "{\"$tsIncrement\": \"$t\"}", "ERROR:takes a timestamp, not int 5"},
    {"{}", "{\"$median\": {\"input\": [1], \"method\": \"approximate\"}}", "PARSE:$median is not supported"},
    {NULL, NULL, NULL},
};

X_TABLE_TEST (test_expr_timestamps, timestamps)

X_TABLE_TEST (test_expr_paths, paths)
X_TABLE_TEST (test_expr_literals, literals)
X_TABLE_TEST (test_expr_let, lets)
X_TABLE_TEST (test_expr_cond, conds)
X_TABLE_TEST (test_expr_logic, logic)
X_TABLE_TEST (test_expr_compare, compares)

/* Once warmed, evaluating does not allocate: the same expression over the
 * same document, after a reset, takes no new memory (libbson's allocator
 * counted through bson_mem_set_vtable). */
static void
test_expr_no_alloc_when_warm (void)
{
    const char *expr = "{\"x\": {\"$cond\": [{\"$gt\": [\"$a.b\", 1]}, [\"$a.b\", \"$$ROOT\"], "
                       "{\"$let\": {\"vars\": {\"v\": \"$a\"}, \"in\": \"$$v.b\"}}]}}";
    const char *doc = "{\"a\": [{\"b\": 1}, {\"b\": 5}, {\"c\": 2}]}";

    T_CHECK (x_no_alloc_when_warm (doc, expr, BSON_TYPE_DOCUMENT) == 0);
}

/* docs/plans.md's catalogue lists every operator this build evaluates
 * (and test_man.sh-like: a new operator without its line fails here). */
static void
test_expr_catalogue_documented (void)
{
    FILE *f = fopen ("docs/plans.md", "r");
    static char text[1 << 18];
    size_t n;
    const char *from, *to;

    T_CHECK (f != NULL);
    if (!f)
        return;
    n = fread (text, 1, sizeof text - 1, f);
    fclose (f);
    text[n] = '\0';
    from = strstr (text, "<!-- catalogue:");
    to = from ? strstr (from, "<!-- end of catalogue -->") : NULL;
    T_CHECK (from && to);
    if (!from || !to)
        return;
    for (size_t i = 0; rm_expr_op_name (i); i++) {
        char want[64];
        const char *at;
        snprintf (want, sizeof want, "`%s`", rm_expr_op_name (i));
        at = strstr (from, want);
        if (!at || at > to) {
            fprintf (stderr, "  docs/plans.md's catalogue lacks %s\n", want);
            t_fail_checks++;
        }
    }
}

int
main (void)
{
    T_RUN (test_expr_paths);
    T_RUN (test_expr_timestamps);
    T_RUN (test_expr_literals);
    T_RUN (test_expr_let);
    T_RUN (test_expr_cond);
    T_RUN (test_expr_logic);
    T_RUN (test_expr_compare);
    T_RUN (test_expr_no_alloc_when_warm);
    T_RUN (test_expr_catalogue_documented);
    return t_done ();
}
