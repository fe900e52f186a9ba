/* The $set stage over one document (remodel/expr.h's rm_expr_set_*):
 * where fields go, what a missing value does, paths through documents,
 * arrays and scalars, every expression seeing the document as it came
 * in, and the refusals at parse. The expected documents are MongoDB's
 * ($addFields / $set documentation and the stage's rules). */
#include "expr_case.h"
#include "remodel/buf.h"

typedef struct {
    const char *doc, *fields, *want; /* want: a document, or "PARSE:text" / "ERROR:text" */
} set_case_t;

static const set_case_t cases[] = {
    /* replaced in place, new ones appended in the order named */
    {"{\"_id\": 1, \"a\": 1, \"b\": 2}", "{\"c\": 3, \"a\": 9}", "{\"_id\": 1, \"a\": 9, \"b\": 2, \"c\": 3}"},
    /* each expression sees the document as it came in */
    {"{\"a\": 1}", "{\"a\": 2, \"b\": \"$a\"}", "{\"a\": 2, \"b\": 1}"},
    /* a missing value removes the field, or leaves it out */
    {"{\"a\": 1, \"b\": 2}", "{\"a\": \"$$REMOVE\", \"c\": \"$nope\"}", "{\"b\": 2}"},
    {"{\"a\": {\"x\": 1, \"y\": 2}}", "{\"a.x\": \"$$REMOVE\"}", "{\"a\": {\"y\": 2}}"},
    /* a document value is its fields (the stage merges into documents) */
    {"{\"specs\": {\"doors\": 4, \"wheels\": 4}}", "{\"specs\": {\"fuel_type\": \"unleaded\"}}",
     "{\"specs\": {\"doors\": 4, \"wheels\": 4, \"fuel_type\": \"unleaded\"}}"},
    {"{\"specs\": {\"doors\": 4}}", "{\"specs.fuel_type\": \"unleaded\"}",
     "{\"specs\": {\"doors\": 4, \"fuel_type\": \"unleaded\"}}"},
    /* through a scalar: replaced by a new document */
    {"{\"a\": 5}", "{\"a.b\": 1}", "{\"a\": {\"b\": 1}}"},
    /* through an array: into each element, scalars becoming documents */
    {"{\"a\": [{\"c\": 1}, 5, [{\"c\": 2}]]}", "{\"a.b\": 1}",
     "{\"a\": [{\"c\": 1, \"b\": 1}, {\"b\": 1}, [{\"c\": 2, \"b\": 1}]]}"},
    /* missing parents are made */
    {"{}", "{\"a.b.c\": 1}", "{\"a\": {\"b\": {\"c\": 1}}}"},
    {"{}", "{\"a.b\": \"$nope\"}", "{\"a\": {}}"},
    /* literals */
    {"{}", "{\"s\": {\"$literal\": \"$a\"}, \"d\": {\"$date\": \"2020-01-01T00:00:00Z\"}, \"e\": {}}",
     "{\"s\": \"$a\", \"d\": {\"$date\": \"2020-01-01T00:00:00Z\"}, \"e\": {}}"},
    {"{\"a\": 1}", "{\"arr\": [\"$a\", \"$nope\"]}", "{\"a\": 1, \"arr\": [1, null]}"},
    /* the refusals */
    {"{}", "{\"a\": 1, \"a.b\": 2}", "PARSE:overlap (a path collision)"},
    {"{}", "{\"a.b\": 2, \"a\": {\"b\": 3}}", "PARSE:\"a.b\": set twice"},
    {"{}", "{\"$a\": 1}", "PARSE:may not be empty nor start with '$'"},
    {"{}", "{\"d\": {\"$toDatee\": \"$s\"}}", "PARSE:unknown expression operator $toDatee"},
    {"{}", "{\"d\": {\"x\": {\"$bad\": 1}}}", "PARSE:unknown expression operator $bad"},
    {"{}", "{\"a..b\": 1}", "PARSE:empty part"},
    {"{\"p\": 1}", "{\"q\": {\"$switch\": {\"branches\": [{\"case\": false, \"then\": 1}]}}}",
     "ERROR:field \"q\": $switch: no branch matched"},
    {NULL, NULL, NULL},
};

static bool
run_case (int row, const set_case_t *c)
{
    char buf[4096];
    bson_error_t err;
    bson_t *doc = bson_new_from_json ((const uint8_t *) c->doc, -1, &err);
    bson_t *spec;
    bson_iter_t it;
    rm_expr_set_t *s;
    bool ok = false;

    snprintf (buf, sizeof buf, "{\"f\": %s}", c->fields);
    spec = bson_new_from_json ((const uint8_t *) buf, -1, &err);
    if (!doc || !spec) {
        fprintf (stderr, "  row %d: bad JSON\n", row);
        return false;
    }
    bson_iter_init_find (&it, spec, "f");
    s = rm_expr_set_parse (&it, &err);
    if (!s) {
        ok = !strncmp (c->want, "PARSE:", 6) && strstr (err.message, c->want + 6);
        if (!ok)
            fprintf (stderr, "  row %d: parse: %s (want %s)\n", row, err.message, c->want);
    } else {
        rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);
        rm_buf_t out;
        rm_buf_init (&out);
        if (!rm_expr_set_apply (s, cx, bson_get_data (doc), doc->len, &out, &err)) {
            ok = !strncmp (c->want, "ERROR:", 6) && strstr (err.message, c->want + 6);
            if (!ok)
                fprintf (stderr, "  row %d: apply: %s (want %s)\n", row, err.message, c->want);
        } else if (c->want[0] != '{') {
            fprintf (stderr, "  row %d: applied, want %s\n", row, c->want);
        } else {
            bson_t *w = bson_new_from_json ((const uint8_t *) c->want, -1, &err);
            bson_t got;
            bson_init_static (&got, out.data, out.len);
            ok = w && w->len == out.len && !memcmp (bson_get_data (w), out.data, out.len);
            if (!ok) {
                char *g = bson_as_canonical_extended_json (&got, NULL);
                fprintf (stderr, "  row %d:\n      got  %s\n      want %s\n", row, g, c->want);
                bson_free (g);
            }
            if (w)
                bson_destroy (w);
        }
        rm_buf_destroy (&out);
        rm_expr_ctx_destroy (cx);
        rm_expr_set_destroy (s);
    }
    bson_destroy (doc);
    bson_destroy (spec);
    return ok;
}

static void
test_expr_set_stage (void)
{
    for (int i = 0; cases[i].doc; i++)
        if (!run_case (i + 1, &cases[i]))
            t_fail_checks++;
}

/* The untouched fields keep their bytes: a field of a type the writer
 * would re-encode differently (a deprecated binary subtype 2) is copied
 * as it was. */
static void
test_expr_set_keeps_bytes (void)
{
    static const uint8_t bin2[] = {1, 2, 3};
    bson_t doc = BSON_INITIALIZER, spec = BSON_INITIALIZER, f;
    bson_iter_t it;
    bson_error_t err;
    rm_expr_set_t *s;
    rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);
    rm_buf_t out;

    bson_append_binary (&doc, "b", 1, BSON_SUBTYPE_BINARY_DEPRECATED, bin2, 3);
    BSON_APPEND_INT32 (&doc, "n", 1);
    BSON_APPEND_DOCUMENT_BEGIN (&spec, "f", &f);
    BSON_APPEND_INT32 (&f, "n", 1);
    bson_append_document_end (&spec, &f);
    bson_iter_init_find (&it, &spec, "f");
    s = rm_expr_set_parse (&it, &err);
    rm_buf_init (&out);
    T_CHECK (s && rm_expr_set_apply (s, cx, bson_get_data (&doc), doc.len, &out, &err));
    T_CHECK (out.len == doc.len && !memcmp (out.data, bson_get_data (&doc), doc.len));
    rm_buf_destroy (&out);
    rm_expr_set_destroy (s);
    rm_expr_ctx_destroy (cx);
    bson_destroy (&doc);
    bson_destroy (&spec);
}

int
main (void)
{
    T_RUN (test_expr_set_stage);
    T_RUN (test_expr_set_keeps_bytes);
    return t_done ();
}
