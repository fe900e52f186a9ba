/* The $set stage over one document (remodel/expr.h's rm_expr_set_*):
 * where fields go, what a missing value does, paths through documents,
 * arrays and scalars, every expression seeing the document as it came
 * in, and the refusals at parse. The expected documents are MongoDB's
 * ($addFields / $set documentation and the stage's rules). */
#include "expr_case.h"
#include "remodel/buf.h"
#include "remodel/docpath.h"

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
    /* the fields read share one walk of the document (rm_expr_ctx_hold):
     * in any order, a missing one first, a name twice giving the first */
    {"{\"a\": 1, \"b\": 2, \"a\": 3, \"c\": {\"d\": 4}}",
     "{\"r1\": \"$c.d\", \"r2\": \"$nope\", \"r3\": \"$a\", \"r4\": \"$b\", \"r5\": \"$c\"}",
     "{\"a\": 1, \"b\": 2, \"a\": 3, \"c\": {\"d\": 4}, \"r1\": 4, \"r3\": 1, \"r4\": 2, "
     "\"r5\": {\"d\": 4}}"},
    {"{\"b\": 2, \"a\": 1}", "{\"r\": {\"$add\": [\"$a\", \"$b\", \"$a\"]}, \"s\": \"$b\"}",
     "{\"b\": 2, \"a\": 1, \"r\": 4, \"s\": 2}"},
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

/* A set of many fields, nested ones under one name too: each found in
 * place among 20,000 (the names hashed past a few); collisions still
 * refused; a signal stops the reading (issue 62, item 6). */
static void
test_expr_set_many_fields (void)
{
    rm_buf_t spec, out;
    bson_error_t err;
    bson_iter_t it, f;
    bson_t *b;
    rm_expr_set_t *s;
    rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);
    const size_t n = 20000;

    rm_buf_init (&spec);
    rm_buf_init (&out);
    for (int round = 0; round < 3; round++) {
        rm_buf_reset (&spec);
        rm_buf_append (&spec, "{\"e\": {", strlen ("{\"e\": {"));
        for (size_t i = 0; i < n; i++) {
            char one[64];
            int k = snprintf (one, sizeof one, "%s\"%sf%zu\": %zu", i ? ", " : "",
                              round == 1 ? "o." : "", i, i);
            rm_buf_append (&spec, one, (size_t) k);
        }
        if (round == 2)
            rm_buf_append (&spec, ", \"f77.x\": 1", strlen (", \"f77.x\": 1"));
        rm_buf_append (&spec, "}}", 3);
        b = bson_new_from_json (spec.data, -1, &err);
        T_CHECK (b != NULL);
        bson_iter_init_find (&it, b, "e");
        s = rm_expr_set_parse (&it, &err);
        if (round == 2) {
            T_CHECK (s == NULL && strstr (err.message, "\"f77\" and \"f77.x\" overlap") != NULL);
            bson_destroy (b);
            continue;
        }
        T_CHECK (s != NULL && rm_expr_set_count (s) == n);
        /* a document holding some of the names already: replaced in place */
        bson_t *d = BCON_NEW ("f99", BCON_INT32 (-1), "z", BCON_INT32 (2), "o", BCON_INT32 (3));
        rm_expr_ctx_reset (cx);
        T_CHECK (rm_expr_set_apply (s, cx, bson_get_data (d), d->len, &out, &err));
        bson_t got;
        T_CHECK (bson_init_static (&got, out.data, out.len));
        size_t seen = 0;
        bool in_order = true;
        bson_iter_init (&f, &got);
        if (round == 0) {
            /* f99 where it was, z, o, then the others in their order */
            const char *first[] = {"f99", "z", "o"};
            for (size_t i = 0; bson_iter_next (&f); i++, seen++) {
                char want[32];
                if (i < 3)
                    snprintf (want, sizeof want, "%s", first[i]);
                else
                    snprintf (want, sizeof want, "f%zu", i - 3 < 99 ? i - 3 : i - 2);
                if (strcmp (bson_iter_key (&f), want) != 0 ||
                    (!strncmp (want, "f", 1) && bson_iter_int32 (&f) != atoi (want + 1)))
                    in_order = false;
            }
            T_CHECK (in_order && seen == n + 2);
        } else {
            /* o, a scalar, became a document of every field */
            bson_iter_t o;
            T_CHECK (bson_iter_init_find (&f, &got, "o") && BSON_ITER_HOLDS_DOCUMENT (&f));
            bson_iter_recurse (&f, &o);
            for (size_t i = 0; bson_iter_next (&o); i++, seen++) {
                char want[32];
                snprintf (want, sizeof want, "f%zu", i);
                if (strcmp (bson_iter_key (&o), want) != 0 || bson_iter_int32 (&o) != (int32_t) i)
                    in_order = false;
            }
            T_CHECK (in_order && seen == n);
        }
        bson_destroy (d);
        rm_expr_set_destroy (s);
        /* the same spec with a signal arrived: stopped, and said so */
        rm_interrupted = 2;
        s = rm_expr_set_parse (&it, &err);
        rm_interrupted = 0;
        T_CHECK (s == NULL && err.code == RM_ERR_INTERRUPTED);
        rm_expr_set_destroy (s);
        bson_destroy (b);
    }
    rm_buf_destroy (&spec);
    rm_buf_destroy (&out);
    rm_expr_ctx_destroy (cx);
}

/* One context over documents one after another, as a step's: the held
 * walk keeps the names read and the keys each place had (expr_held.c),
 * so each document here changes what the one before it taught. Every
 * result must be what a fresh context makes of the document alone. */
static void
test_expr_set_layouts (void)
{
    static const char *docs[] = {
        "{\"_id\": 1, \"l_shipdate\": \"a\", \"l_shipmode\": \"b\", \"a_very_long_key_name_x\": 1, \"k\": 2}",
        "{\"_id\": 2, \"l_shipdate\": \"c\", \"l_shipmode\": \"d\", \"a_very_long_key_name_x\": 3, \"k\": 4}",
        /* same lengths and first eight bytes, swapped */
        "{\"_id\": 3, \"l_shipmode\": \"e\", \"l_shipdate\": \"f\", \"a_very_long_key_name_y\": 5, \"k\": 6}",
        /* a name twice: the first is read */
        "{\"_id\": 4, \"k\": 7, \"l_shipdate\": \"g\", \"k\": 8, \"l_shipmode\": \"h\"}",
        "{\"_id\": 5, \"l_shipdate\": \"i\", \"k\": 9, \"l_shipdate\": \"j\"}",
        /* missing ones, a key where a shorter one was, the last ones short */
        "{\"_id\": 6, \"l_shipdatex\": 1, \"kk\": 2}",
        "{\"k\": 10}",
        "{}",
        "{\"_id\": 7, \"l_shipdate\": \"k\", \"l_shipmode\": \"l\", \"a_very_long_key_name_x\": 11, \"k\": 12}",
        /* a field of the set's own, replaced in place; then the same
         * places again, and with none of the set's fields */
        "{\"_id\": 8, \"r1\": 0, \"l_shipdate\": \"m\", \"k\": 13}",
        "{\"_id\": 9, \"r1\": 1, \"l_shipdate\": \"n\", \"k\": 14}",
        "{\"_id\": 10, \"r0\": 1, \"l_shipdate\": \"o\", \"k\": 15}",
        "{\"_id\": 11, \"r0\": 1, \"l_shipdate\": \"p\", \"k\": 16}",
        "{\"_id\": 12, \"r1\": 1, \"l_shipdate\": \"q\", \"k\": 17}",
        NULL,
    };
    const char *fields = "{\"f\": {\"r1\": \"$l_shipdate\", \"r2\": \"$l_shipmode\", "
                         "\"r3\": \"$a_very_long_key_name_x\", \"r4\": \"$k\", "
                         "\"r5\": {\"$concat\": [\"$l_shipmode\", \"$l_shipdate\"]}}}";
    bson_error_t err;
    bson_t *spec = bson_new_from_json ((const uint8_t *) fields, -1, &err);
    bson_iter_t it;
    rm_expr_set_t *s;
    rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);
    rm_buf_t out, fresh_out;

    T_CHECK (spec && bson_iter_init_find (&it, spec, "f"));
    s = rm_expr_set_parse (&it, &err);
    T_CHECK (s != NULL);
    rm_buf_init (&out);
    rm_buf_init (&fresh_out);
    for (int round = 0; round < 2; round++)
        for (int i = 0; docs[i]; i++) {
            bson_t *d = bson_new_from_json ((const uint8_t *) docs[i], -1, &err);
            rm_expr_ctx_t *fresh = rm_expr_ctx_new (X_NOW);
            T_CHECK (d != NULL);
            rm_expr_ctx_reset (cx);
            T_CHECK (rm_expr_set_apply (s, cx, bson_get_data (d), d->len, &out, &err));
            T_CHECK (rm_expr_set_apply (s, fresh, bson_get_data (d), d->len, &fresh_out, &err));
            if (out.len != fresh_out.len || memcmp (out.data, fresh_out.data, out.len)) {
                fprintf (stderr, "  round %d, document %d differs from a fresh context's\n", round, i);
                t_fail_checks++;
            }
            rm_expr_ctx_destroy (fresh);
            bson_destroy (d);
        }
    rm_buf_destroy (&out);
    rm_buf_destroy (&fresh_out);
    rm_expr_set_destroy (s);
    rm_expr_ctx_destroy (cx);
    bson_destroy (spec);
}

/* Documents drawn from a few layouts with random changes (a type, a
 * string's or a document's length, a field dropped, doubled or moved, a
 * collection switched), each collection changing its documents more or
 * less often, one context over all of them: every read must
 * find what libbson finds, whatever order the names are asked in and
 * whatever the documents before taught the walk (the shape, the layout,
 * expr_held.c), and a set's result must be a fresh context's. */
static uint64_t rnd_state;

static unsigned
rnd (unsigned n)
{
    return (unsigned) (t_xorshift (&rnd_state) % n);
}

static const char *const rnd_names[] = {"_id", "l_orderkey", "l_quantity", "l_extendedprice",
                                        "l_returnflag", "l_shipdate", "a_very_long_key_name_x",
                                        "k", "v", "l_comment", "nested", "tags"};
#define N_RND_NAMES (sizeof rnd_names / sizeof rnd_names[0])

static void
rnd_value (bson_t *b, const char *key, unsigned kind)
{
    static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    char str[40];
    bson_t sub;
    switch (kind % 9) {
    case 0: BSON_APPEND_INT32 (b, key, (int32_t) rnd (1000)); break;
    case 1: BSON_APPEND_INT64 (b, key, (int64_t) rnd (1000000)); break;
    case 2: BSON_APPEND_DOUBLE (b, key, rnd (100000) / 100.0); break;
    case 3: /* a string of one length, or of any */
    case 4: {
        size_t n = kind % 9 == 3 ? 10 : 1 + rnd (30);
        for (size_t i = 0; i < n; i++)
            str[i] = text[rnd (sizeof text - 1)];
        bson_append_utf8 (b, key, -1, str, (int) n);
        break;
    }
    case 5: BSON_APPEND_DATE_TIME (b, key, (int64_t) rnd (1000000000)); break;
    case 6: BSON_APPEND_BOOL (b, key, rnd (2)); break;
    case 7:
        BSON_APPEND_DOCUMENT_BEGIN (b, key, &sub);
        for (unsigned i = rnd (3); i > 0; i--)
            BSON_APPEND_INT32 (&sub, "x", (int32_t) i);
        bson_append_document_end (b, &sub);
        break;
    default: BSON_APPEND_REGEX (b, key, rnd (2) ? "^a" : "^ab+", "i"); break;
    }
}

static bson_t *
rnd_doc (const unsigned *order, const unsigned *kinds, unsigned n, unsigned noise)
{
    bson_t *b = bson_new ();
    for (unsigned i = 0; i < n; i++) {
        unsigned at = i, kind = kinds[i];
        switch (rnd (noise)) {
        case 0: continue;                              /* dropped */
        case 1: kind = rnd (9); break;                 /* another type */
        case 2: rnd_value (b, rnd_names[order[at]], kinds[i]); break; /* doubled */
        case 3: at = rnd (n); break;                   /* another name here */
        default: break;
        }
        rnd_value (b, rnd_names[order[at]], kind);
    }
    return b;
}

static void
test_expr_held_random_layouts (void)
{
    const char *fields = "{\"f\": {\"r1\": \"$l_shipdate\", \"r2\": {\"$concat\": [\"$l_returnflag\", \"x\"]}, "
                         "\"k\": \"$a_very_long_key_name_x\", \"l_quantity\": {\"$add\": [\"$l_quantity\", 1]}}}";
    bson_error_t err;
    bson_t *spec = bson_new_from_json ((const uint8_t *) fields, -1, &err);
    bson_iter_t it;
    rm_expr_set_t *s;
    rm_buf_t out, fresh_out;
    long reads = 0, diffs = 0;

    T_CHECK (spec && bson_iter_init_find (&it, spec, "f"));
    s = rm_expr_set_parse (&it, &err);
    T_CHECK (s != NULL);
    rm_buf_init (&out);
    rm_buf_init (&fresh_out);
    for (unsigned seed = 1; seed <= 6; seed++) {
        rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);
        unsigned order[N_RND_NAMES], kinds[N_RND_NAMES], n = 0, noise = 4;
        rnd_state = 0x9E3779B97F4A7C15u * seed;
        for (unsigned d = 0; d < 4000; d++) {
            if (d % 500 == 0) { /* another collection: another layout */
                static const unsigned noises[] = {4, 8, 40, 400, 100000};
                noise = noises[rnd (5)];
                n = 3 + rnd (N_RND_NAMES - 3);
                for (unsigned i = 0; i < n; i++) {
                    order[i] = (i + rnd (N_RND_NAMES)) % N_RND_NAMES;
                    kinds[i] = rnd (9);
                }
            }
            bson_t *b = rnd_doc (order, kinds, n, noise);
            const uint8_t *data = bson_get_data (b);
            rm_expr_ctx_reset (cx);
            if (d % 3 == 0) {
                rm_expr_ctx_t *fresh = rm_expr_ctx_new (X_NOW);
                bool ok = rm_expr_set_apply (s, cx, data, b->len, &out, &err);
                bool fresh_ok = rm_expr_set_apply (s, fresh, data, b->len, &fresh_out, &err);
                if (ok != fresh_ok || (ok && (out.len != fresh_out.len || memcmp (out.data, fresh_out.data, out.len))))
                    diffs++;
                rm_expr_ctx_destroy (fresh);
            } else {
                /* Names asked in a random order, some twice, some absent. */
                rm_expr_ctx_hold (cx, data, b->len);
                for (unsigned q = 0; q < 6; q++) {
                    const char *name = rnd_names[rnd (N_RND_NAMES)];
                    bson_iter_t got, want;
                    bool g = rm_expr_ctx_field (cx, data, b->len, name, (uint32_t) strlen (name), &got);
                    bool w = rm_doc_field (data, b->len, name, strlen (name), &want);
                    reads++;
                    if (g != w || (g && bson_iter_offset (&got) != bson_iter_offset (&want)))
                        diffs++;
                }
                rm_expr_ctx_release (cx);
            }
            bson_destroy (b);
        }
        rm_expr_ctx_destroy (cx);
    }
    if (diffs)
        fprintf (stderr, "  %ld of the reads and sets differed from libbson's or a fresh context's\n", diffs);
    T_CHECK (diffs == 0);
    T_CHECK (reads > 50000);
    rm_buf_destroy (&out);
    rm_buf_destroy (&fresh_out);
    rm_expr_set_destroy (s);
    bson_destroy (spec);
}

int
main (void)
{
    T_RUN (test_expr_set_stage);
    T_RUN (test_expr_set_keeps_bytes);
    T_RUN (test_expr_set_many_fields);
    T_RUN (test_expr_set_layouts);
    T_RUN (test_expr_held_random_layouts);
    return t_done ();
}
