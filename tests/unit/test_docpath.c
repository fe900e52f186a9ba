/* Dotted paths: parsing, reading as $lookup does (through arrays, numeric
 * components, leaf arrays), and $set / $unset / $rename on raw BSON, whose
 * results are compared byte for byte with documents built from JSON, and
 * whose untouched fields must be the input's bytes, for every BSON type. */
#include <bson/bson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/docpath.h"
#include "test.h"
#include "thread.h"

/* ------------------------------------------------------------- helpers */

/* JSON written with ' for " (tables stay readable). */
/* The edits write raw bytes into an rm_buf_t; the checks below read them
 * through a bson_t. These wrappers make out a view of the result (an empty
 * document after a failure, when the edit must have left nothing). */
static rm_buf_t edit_out;

static bool
view_result (bson_t *out, bool ok)
{
    if (!ok) {
        T_CHECK (edit_out.len == 0);
        bson_init (out);
        return false;
    }
    T_CHECK (bson_init_static (out, edit_out.data, edit_out.len));
    return true;
}

static bool
doc_set (bson_t *out, const uint8_t *doc, size_t len, const rm_path_t *p, const bson_value_t *v,
         bson_error_t *err)
{
    bson_t holder = BSON_INITIALIZER;
    rm_raw_value_t raw;
    bool ok;

    if (v)
        rm_raw_value_encode (&holder, v, &raw);
    ok = rm_doc_set (&edit_out, doc, len, p, v ? &raw : NULL, err);
    bson_destroy (&holder);
    return view_result (out, ok);
}

static bool
doc_unset (bson_t *out, const uint8_t *doc, size_t len, const rm_path_t *p, bool *changed,
           bson_error_t *err)
{
    return view_result (out, rm_doc_unset (&edit_out, doc, len, p, changed, err));
}

static bool
doc_rename (bson_t *out, const uint8_t *doc, size_t len, const rm_path_t *from,
            const rm_path_t *to, bool *changed, bson_error_t *err)
{
    return view_result (out, rm_doc_rename (&edit_out, doc, len, from, to, changed, err));
}

static bson_t *
J (const char *json)
{
    char *s = bson_strdup (json);
    bson_error_t err;
    bson_t *b;

    for (char *c = s; *c; c++)
        if (*c == '\'')
            *c = '"';
    b = bson_new_from_json ((const uint8_t *) s, -1, &err);
    if (!b) {
        fprintf (stderr, "  bad test JSON %s: %s\n", s, err.message);
        t_fail_checks++;
        b = bson_new ();
    }
    bson_free (s);
    return b;
}

/* got == the document want_json describes, byte for byte. */
static bool
same_doc (const bson_t *got, const char *want_json, const char *what)
{
    bson_t *want = J (want_json);
    bool ok = got->len == want->len &&
              memcmp (bson_get_data (got), bson_get_data (want), got->len) == 0;

    if (!ok) {
        char *g = bson_as_canonical_extended_json (got, NULL);
        fprintf (stderr, "  %s:\n    got  %s\n    want %s\n", what, g, want_json);
        bson_free (g);
    }
    bson_destroy (want);
    return ok;
}

static bool
parse (rm_path_t *p, const char *text)
{
    bson_error_t err;
    if (!rm_path_parse (p, text, &err)) {
        fprintf (stderr, "  path \"%s\": %s\n", text, err.message);
        t_fail_checks++;
        return false;
    }
    return true;
}

/* A value written as JSON. Its bytes stay in *holder (a bson_value_t
 * points into the document it came from), so holder outlives the value. */
static const bson_value_t *
value_of (const char *json, bson_t **holder)
{
    static bson_value_t v;
    char doc[512];
    bson_iter_t it;

    snprintf (doc, sizeof doc, "{'v':%s}", json);
    *holder = J (doc);
    if (!bson_iter_init_find (&it, *holder, "v")) {
        t_fail_checks++;
        return NULL;
    }
    v = *bson_iter_value (&it);
    return &v;
}

/* The bytes of the top-level element named key: type, key and value. */
static bool
elem_bytes (const bson_t *doc, const char *key, const uint8_t **p, size_t *n)
{
    bson_iter_t it;

    if (!bson_iter_init (&it, doc))
        return false;
    while (bson_iter_next (&it)) {
        if (strcmp (bson_iter_key (&it), key) == 0) {
            uint32_t start = bson_iter_offset (&it);
            *p = bson_get_data (doc) + start;
            *n = (bson_iter_next (&it) ? bson_iter_offset (&it) : doc->len - 1) - start;
            return true;
        }
    }
    return false;
}

/* Every top-level field of src but skip and skip2 is in out with the same
 * bytes, and in the same order. */
static void
check_untouched2 (const bson_t *src, const bson_t *out, const char *skip, const char *skip2,
                  const char *what)
{
    bson_iter_t it;
    uint32_t last_off = 0;

    T_CHECK (bson_iter_init (&it, src));
    while (bson_iter_next (&it)) {
        const char *key = bson_iter_key (&it);
        const uint8_t *a, *b;
        size_t na, nb;
        bson_iter_t o;

        if ((skip && strcmp (key, skip) == 0) || (skip2 && strcmp (key, skip2) == 0))
            continue;
        if (!elem_bytes (src, key, &a, &na) || !elem_bytes (out, key, &b, &nb) || na != nb ||
            memcmp (a, b, na) != 0) {
            fprintf (stderr, "  %s: field \"%s\" is not byte-identical\n", what, key);
            t_fail_checks++;
            continue;
        }
        T_CHECK (bson_iter_init_find (&o, out, key));
        if (bson_iter_offset (&o) < last_off) {
            fprintf (stderr, "  %s: field \"%s\" moved\n", what, key);
            t_fail_checks++;
        }
        last_off = bson_iter_offset (&o);
    }
}

static void
check_untouched (const bson_t *src, const bson_t *out, const char *skip, const char *what)
{
    check_untouched2 (src, out, skip, NULL, what);
}

/* ---------------------------------------------------------------- parse */

static void
test_parse (void)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "invalid path \"\": empty"},
        {"a..b", "invalid path \"a..b\": empty field name between dots"},
        {".a", "invalid path \".a\": starts with '.'"},
        {"a.", "invalid path \"a.\": ends with '.'"},
        {".", "invalid path \".\": starts with '.'"},
        {"$x", "invalid path \"$x\": field name \"$x\" starts with '$'"},
        {"a.$", "invalid path \"a.$\": field name \"$\" starts with '$'"},
        {"a.$[].b", "invalid path \"a.$[].b\": field name \"$[]\" starts with '$'"},
    };
    rm_path_t p;
    bson_error_t err;
    char text[200];

    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset (&err, 0, sizeof err);
        T_CHECK (!rm_path_parse (&p, bad[i].text, &err));
        T_CHECK_STR (err.message, bad[i].msg);
        T_CHECK (err.domain == RM_ERROR_DOMAIN && err.code == RM_ERR_USAGE);
        T_CHECK (p.text == NULL && p.n == 0);
        rm_path_destroy (&p);
    }
    T_CHECK (!rm_path_parse (&p, NULL, &err));
    T_CHECK_STR (err.message, "invalid path \"\": empty");

    T_CHECK (rm_path_parse (&p, "a.b.0.c", &err));
    T_CHECK (p.n == 4);
    T_CHECK_STR (p.text, "a.b.0.c");
    T_CHECK_STR (p.parts[0], "a");
    T_CHECK_STR (p.parts[2], "0");
    T_CHECK_STR (p.parts[3], "c");
    rm_path_destroy (&p);
    rm_path_destroy (&p); /* twice is harmless */

    /* RM_PATH_MAX_PARTS parts, then one more */
    text[0] = '\0';
    for (int i = 0; i < RM_PATH_MAX_PARTS; i++)
        strcat (text, i ? ".p" : "p");
    T_CHECK (rm_path_parse (&p, text, &err));
    T_CHECK (p.n == RM_PATH_MAX_PARTS);
    T_CHECK_STR (p.parts[RM_PATH_MAX_PARTS - 1], "p");
    rm_path_destroy (&p);
    strcat (text, ".p");
    T_CHECK (!rm_path_parse (&p, text, &err));
    T_CHECK (strstr (err.message, ": 33 parts, more than 32") != NULL);
    T_CHECK (strncmp (err.message, "invalid path \"p.p.p", 19) == 0);
}

/* ---------------------------------------------------------------- visit */

typedef struct {
    bson_t *arr;
    uint32_t n;
    uint32_t stop_after; /* 0: never */
} collect_t;

static bool
collect (const bson_iter_t *value, void *ctx)
{
    collect_t *c = ctx;
    char buf[16];
    const char *key;

    bson_uint32_to_string (c->n++, &key, buf, sizeof buf);
    if (!value) /* missing (the foreign side): shown as MinKey */
        T_CHECK (bson_append_minkey (c->arr, key, -1));
    else
        T_CHECK (bson_append_value (c->arr, key, -1, bson_iter_value ((bson_iter_t *) value)));
    return !(c->stop_after && c->n >= c->stop_after);
}

/* The values visited, as {'v': [...]}. */
static void
visited (const char *doc_json, const char *path, bool expand, bool whole, uint32_t stop_after,
         bson_t *got, size_t *count)
{
    bson_t *doc = J (doc_json);
    bson_t arr;
    rm_path_t p;
    collect_t c = {&arr, 0, stop_after};

    bson_init (got);
    bson_append_array_begin (got, "v", -1, &arr);
    *count = 0;
    if (parse (&p, path)) {
        *count = rm_path_visit (bson_get_data (doc), doc->len, &p, expand, whole, collect, &c);
        rm_path_destroy (&p);
    }
    bson_append_array_end (got, &arr);
    T_CHECK (*count == c.n);
    bson_destroy (doc);
}

static void
test_visit (void)
{
    enum { N = 0, E = 1, EW = 2 };
    static const struct {
        const char *doc, *path;
        int mode;
        const char *want;
    } cases[] = {
        /* through arrays of documents; the leaf array's elements, and the
         * array itself on the foreign side */
        {"{'a':[{'x':1},{'x':[2,3]}]}", "a.x", E, "{'v':[1,2,3]}"},
        {"{'a':[{'x':1},{'x':[2,3]}]}", "a.x", EW, "{'v':[1,2,3,[2,3]]}"},
        {"{'a':[{'x':1},{'x':[2,3]}]}", "a.x", N, "{'v':[1,[2,3]]}"},
        {"{'a':{'b':[1,2]}}", "a.b", EW, "{'v':[1,2,[1,2]]}"},
        {"{'a':[]}", "a", E, "{'v':[]}"},
        {"{'a':[]}", "a", EW, "{'v':[[]]}"},
        {"{'a':[{'b':[{'c':1},{'c':[2]}]},{'b':{'c':3}}]}", "a.b.c", E, "{'v':[1,2,3]}"},
        {"{'a':[{'x':1},5,{'y':2},{'x':null}]}", "a.x", E, "{'v':[1,null]}"},
        /* arrays directly in arrays are not entered, nor expanded (on
         * the foreign side the path is missing there) */
        {"{'a':[[{'x':1}],{'x':2}]}", "a.x", E, "{'v':[2]}"},
        {"{'a':[[{'x':1}],{'x':2}]}", "a.x", EW, "{'v':[{'$minKey':1},2]}"},
        {"{'a':[1,[2,3]]}", "a", EW, "{'v':[1,[2,3],[1,[2,3]]]}"},
        {"{'a':[1,[2,3]]}", "a", E, "{'v':[1,[2,3]]}"},
        {"{'a':[1,{'b':2},[{'b':3}]]}", "a.b", E, "{'v':[2]}"},
        /* the foreign side: an element the rest of the path finds
         * nothing in is missing (MinKey here), a document without it
         * always, a scalar since SERVER-36681; the local side skips them */
        {"{'a':[{'x':1},5,{'y':2},{'x':null}]}", "a.x", EW,
         "{'v':[1,{'$minKey':1},{'$minKey':1},null]}"},
        {"{'a':[5,{'b':5}]}", "a.b", EW, "{'v':[{'$minKey':1},5]}"},
        {"{'a':[5,{'b':5}]}", "a.b", E, "{'v':[5]}"},
        {"{'a':[1]}", "a.x", EW, "{'v':[{'$minKey':1}]}"},
        {"{'a':[]}", "a.x", EW, "{'v':[]}"},
        {"{'a':{'b':[{'c':1},7]}}", "a.b.c", EW, "{'v':[1,{'$minKey':1}]}"},
        /* under an array index only a document element is (SERVER-64221) */
        {"{'a':[{'x':1},{'y':1}]}", "a.0.x", EW, "{'v':[{'$minKey':1},1,{'$minKey':1}]}"},
        {"{'a':[{'x':1},5]}", "a.0.x", EW, "{'v':[{'$minKey':1},1]}"},
        /* a numeric component indexes... */
        {"{'a':[{'x':1},{'x':2}]}", "a.0.x", E, "{'v':[1]}"},
        {"{'a':[{'x':1},{'x':2}]}", "a.1", N, "{'v':[{'x':2}]}"},
        {"{'a':[[1,2]]}", "a.0.0", E, "{'v':[1]}"},
        /* ...and names a field "0" in the array's documents, first */
        {"{'a':[{'0':5}]}", "a.0", E, "{'v':[5,{'0':5}]}"},
        {"{'a':[{'x':1},{'0':{'x':2}}]}", "a.0.x", E, "{'v':[1,2]}"},
        {"{'a':[{'0':{'x':7},'x':1}]}", "a.0.x", E, "{'v':[7,1]}"},
        /* an array picked by position is walked, implicitly, in turn */
        {"{'a':[[{'x':1},{'x':2}]]}", "a.0.x", E, "{'v':[1,2]}"},
        /* an array the path ends on by position: elements on the local
         * side, the array alone on the foreign side */
        {"{'a':[[1,2]]}", "a.0", E, "{'v':[1,2]}"},
        {"{'a':[[1,2]]}", "a.0", EW, "{'v':[[1,2]]}"},
        {"{'a':[[1,2]]}", "a.0", N, "{'v':[[1,2]]}"},
        /* "01" is no array key, but is a field name */
        {"{'a':[1,2]}", "a.01", E, "{'v':[]}"},
        {"{'a':{'01':7}}", "a.01", E, "{'v':[7]}"},
        {"{'0':1}", "0", E, "{'v':[1]}"},
        {"{'a':{'0':[4]}}", "a.0", EW, "{'v':[4,[4]]}"},
        /* missing */
        {"{}", "a", E, "{'v':[]}"},
        {"{'a':5}", "a.b", E, "{'v':[]}"},
        {"{'a':[1,2]}", "a.5", E, "{'v':[]}"},
        {"{'a':{'b':{'c':1}}}", "a.b.c", E, "{'v':[1]}"},
        {"{'a':null}", "a", E, "{'v':[null]}"},
        {"{'a':null}", "a.b", E, "{'v':[]}"},
    };
    bson_t got;
    size_t count;

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char what[200];
        snprintf (what, sizeof what, "visit %s in %s (mode %d)", cases[i].path, cases[i].doc,
                  cases[i].mode);
        visited (cases[i].doc, cases[i].path, cases[i].mode != N, cases[i].mode == EW, 0, &got,
                 &count);
        T_CHECK (same_doc (&got, cases[i].want, what));
        bson_destroy (&got);
    }

    /* the callback stops the walk */
    visited ("{'a':[{'x':1},{'x':[2,3]}]}", "a.x", true, true, 2, &got, &count);
    T_CHECK (count == 2);
    T_CHECK (same_doc (&got, "{'v':[1,2]}", "stop after 2"));
    bson_destroy (&got);

    /* no callback: a count */
    {
        bson_t *doc = J ("{'a':[{'x':1},{'x':[2,3]}]}");
        rm_path_t p;
        if (parse (&p, "a.x")) {
            T_CHECK (rm_path_visit (bson_get_data (doc), doc->len, &p, true, true, NULL, NULL) == 4);
            T_CHECK (rm_path_visit (bson_get_data (doc), 3, &p, true, true, NULL, NULL) == 0);
            rm_path_destroy (&p);
        }
        bson_destroy (doc);
    }
}

/* The foreign side by a server's version (rm_path_visit_foreign): what
 * each rule visits, a missing path as one MinKey (the NULL value). */
static void
test_visit_foreign (void)
{
    static const struct {
        const char *doc, *path, *before, *since; /* 5.0-8.x, 9.0 (SERVER-36681) */
    } cases[] = {
        /* the same in both: a document element without the rest, a
         * missing field, a scalar in place of a document, a leaf array */
        {"{'a':[{},{'b':5}]}", "a.b", "{'v':[{'$minKey':1},5]}", "{'v':[{'$minKey':1},5]}"},
        {"{'no_a':1}", "a.b", "{'v':[{'$minKey':1}]}", "{'v':[{'$minKey':1}]}"},
        {"{'a':1}", "a.b", "{'v':[{'$minKey':1}]}", "{'v':[{'$minKey':1}]}"},
        {"{'a':{'b':[]}}", "a.b", "{'v':[[]]}", "{'v':[[]]}"},
        {"{'a':[1,2]}", "a.0.x", "{'v':[{'$minKey':1}]}", "{'v':[{'$minKey':1}]}"},
        /* a crossed array: its scalars and inner arrays are missing since
         * SERVER-36681, skipped before; one that gives nothing is missing
         * since, and before it not missing at all (no value) */
        {"{'a':[5,{'b':5}]}", "a.b", "{'v':[5]}", "{'v':[{'$minKey':1},5]}"},
        {"{'a':[]}", "a.b", "{'v':[]}", "{'v':[{'$minKey':1}]}"},
        {"{'a':[1]}", "a.b", "{'v':[]}", "{'v':[{'$minKey':1}]}"},
        {"{'a':[[]]}", "a.b", "{'v':[]}", "{'v':[{'$minKey':1}]}"},
        {"{'a':{'b':[1]}}", "a.b.c", "{'v':[]}", "{'v':[{'$minKey':1}]}"},
        /* an element document whose rest crosses an array giving nothing */
        {"{'a':[{'b':[1]}]}", "a.b.c", "{'v':[]}", "{'v':[{'$minKey':1}]}"},
        {"{'a':[{'b':{'no_c':1}},1]}", "a.b.c", "{'v':[{'$minKey':1}]}",
         "{'v':[{'$minKey':1},{'$minKey':1}]}"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bson_t *doc = J (cases[i].doc);
        rm_path_t p;
        for (int since = 0; since < 2 && parse (&p, cases[i].path); since++) {
            bson_t got, arr;
            collect_t c = {&arr, 0, 0};
            size_t n;
            char what[200];
            snprintf (what, sizeof what, "foreign %s in %s (%s)", cases[i].path, cases[i].doc,
                      since ? "since SERVER-36681" : "before");
            bson_init (&got);
            bson_append_array_begin (&got, "v", -1, &arr);
            n = rm_path_visit_foreign (bson_get_data (doc), doc->len, &p, since, collect, &c);
            bson_append_array_end (&got, &arr);
            T_CHECK (n == c.n);
            T_CHECK (same_doc (&got, since ? cases[i].since : cases[i].before, what));
            bson_destroy (&got);
            rm_path_destroy (&p);
        }
        bson_destroy (doc);
    }
}

/* ------------------------------------------------------------------ get */

static void
test_get (void)
{
    static const struct {
        const char *doc, *path, *want; /* want NULL: missing */
    } cases[] = {
        {"{'a':{'b':{'c':1}}}", "a.b.c", "1"},
        {"{'a':{'b':{'c':1}}}", "a.b", "{'c':1}"},
        {"{'a':[10,20]}", "a.1", "20"},
        {"{'a':[10,20]}", "a", "[10,20]"},
        {"{'a':[[1,2]]}", "a.0.1", "2"},
        {"{'a':[{'x':[5,6]}]}", "a.0.x.1", "6"},
        {"{'a':{'0':3}}", "a.0", "3"},
        {"{'a':[{'x':1}]}", "a.x", NULL}, /* no walking through arrays */
        {"{'a':[10,20]}", "a.01", NULL},
        {"{'a':[10,20]}", "a.2", NULL},
        {"{'a':5}", "a.b", NULL},
        {"{}", "a", NULL},
    };

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bson_t *doc = J (cases[i].doc);
        rm_path_t p;
        bson_iter_t it;
        bool found;

        if (!parse (&p, cases[i].path))
            continue;
        found = rm_path_get (bson_get_data (doc), doc->len, &p, &it);
        if (found != (cases[i].want != NULL)) {
            fprintf (stderr, "  get %s in %s: found=%d\n", cases[i].path, cases[i].doc, found);
            t_fail_checks++;
        } else if (found) {
            bson_t got = BSON_INITIALIZER;
            char want[200], what[200];
            snprintf (want, sizeof want, "{'v':%s}", cases[i].want);
            snprintf (what, sizeof what, "get %s in %s", cases[i].path, cases[i].doc);
            bson_append_value (&got, "v", 1, bson_iter_value (&it));
            T_CHECK (same_doc (&got, want, what));
            bson_destroy (&got);
        }
        rm_path_destroy (&p);
        bson_destroy (doc);
    }
}

/* ------------------------------------------------------------------ set */

/* Runs a set; want is the document, or, when error is set, the message. */
static void
check_set (const char *doc_json, const char *path, const char *value_json, const char *want,
           const char *error)
{
    bson_t *doc = J (doc_json), *holder = NULL, out;
    const bson_value_t *v = value_of (value_json, &holder);
    rm_path_t p;
    bson_error_t err;
    char what[300];

    snprintf (what, sizeof what, "set %s = %s in %s", path, value_json, doc_json);
    bson_init (&out);
    if (v && parse (&p, path)) {
        bool ok = doc_set (&out, bson_get_data (doc), doc->len, &p, v, &err);
        if (error) {
            T_CHECK (!ok);
            if (!ok) {
                T_CHECK_STR (err.message, error);
                T_CHECK (err.domain == RM_ERROR_DOMAIN);
                T_CHECK (out.len == 5); /* left empty */
            }
        } else if (!ok) {
            fprintf (stderr, "  %s: %s\n", what, err.message);
            t_fail_checks++;
        } else {
            T_CHECK (same_doc (&out, want, what));
        }
        rm_path_destroy (&p);
    }
    bson_destroy (&out);
    bson_destroy (holder);
    bson_destroy (doc);
}

static void
test_set (void)
{
    static const struct {
        const char *doc, *path, *value, *want;
    } cases[] = {
        /* created at the end of the innermost existing document */
        {"{'a':{'c':1}}", "a.b", "2", "{'a':{'c':1,'b':2}}"},
        {"{}", "a.b", "2", "{'a':{'b':2}}"},
        {"{'x':1}", "a.b.c", "true", "{'x':1,'a':{'b':{'c':true}}}"},
        {"{'a':{'c':1},'z':0}", "a.b.c", "1", "{'a':{'c':1,'b':{'c':1}},'z':0}"},
        /* replaced where it is */
        {"{'x':1,'a':2,'y':3}", "a", "'v'", "{'x':1,'a':'v','y':3}"},
        {"{'a':{'x':1,'b':{'z':0},'y':3},'t':0}", "a.b", "[1,2]",
         "{'a':{'x':1,'b':[1,2],'y':3},'t':0}"},
        {"{'a':[1,2],'b':0}", "a", "{'k':[1]}", "{'a':{'k':[1]},'b':0}"},
        {"{'a':1,'a':2}", "a", "9", "{'a':9,'a':2}"},
        /* a numeric component indexes an array (any digits, as $set) */
        {"{'arr':[1,2,3]}", "arr.1", "'v'", "{'arr':[1,'v',3]}"},
        {"{'arr':[1,2,3]}", "arr.01", "'v'", "{'arr':[1,'v',3]}"},
        {"{'arr':[{'b':1},{'b':2}]}", "arr.1.b", "9", "{'arr':[{'b':1},{'b':9}]}"},
        {"{'arr':[{'b':1}]}", "arr.0.c", "9", "{'arr':[{'b':1,'c':9}]}"},
        {"{'arr':[[0,1],[2]]}", "arr.1.0", "9", "{'arr':[[0,1],[9]]}"},
        /* past the end: nulls up to it, as MongoDB pads */
        {"{'arr':[1]}", "arr.1", "'v'", "{'arr':[1,'v']}"},
        {"{'arr':[1]}", "arr.3", "'v'", "{'arr':[1,null,null,'v']}"},
        {"{'arr':[]}", "arr.2.b", "1", "{'arr':[null,null,{'b':1}]}"},
        {"{'arr':[[]]}", "arr.0.1", "1", "{'arr':[[null,1]]}"},
        /* a number is a name in a document, and when creating */
        {"{}", "a.0", "1", "{'a':{'0':1}}"},
        {"{'a':{'1':5}}", "a.1", "6", "{'a':{'1':6}}"},
        /* _id: created first, replaced in place, only at the top */
        {"{'x':1}", "_id", "7", "{'_id':7,'x':1}"},
        {"{'_id':1,'x':2}", "_id", "7", "{'_id':7,'x':2}"},
        {"{'_id':1,'x':2}", "y", "3", "{'_id':1,'x':2,'y':3}"},
        {"{'x':1}", "y._id", "7", "{'x':1,'y':{'_id':7}}"},
        {"{'x':1}", "_id.a", "7", "{'_id':{'a':7},'x':1}"},
    };
    static const struct {
        const char *doc, *path, *value, *error;
    } errors[] = {
        {"{'a':5}", "a.b", "1", "cannot set \"a.b\": cannot create field 'b' in element {a: 5}"},
        {"{'a':{'b':null}}", "a.b.c", "1",
         "cannot set \"a.b.c\": cannot create field 'c' in element {b: null}"},
        {"{'arr':[1,2]}", "arr.x", "1",
         "cannot set \"arr.x\": cannot create field 'x' in element {arr: [ 1, 2 ]}"},
        {"{'a':[{'b':1}]}", "a.b", "1",
         "cannot set \"a.b\": cannot create field 'b' in element {a: [ { b: 1 } ]}"},
        {"{'a':'s'}", "a.b.c", "1", "cannot set \"a.b.c\": cannot create field 'b' in element {a: \"s\"}"},
        {"{'a':1.5}", "a.b", "1", "cannot set \"a.b\": cannot create field 'b' in element {a: 1.5}"},
        {"{'a':{'$numberDouble':'5'}}", "a.b", "1",
         "cannot set \"a.b\": cannot create field 'b' in element {a: 5.0}"},
        {"{'a':{}}", "a.b", "1", NULL},
        {"{'a':[[1]]}", "a.0.x", "1",
         "cannot set \"a.0.x\": cannot create field 'x' in element {0: [ 1 ]}"},
        {"{'arr':[]}", "arr.1500001", "1",
         "cannot set \"arr.1500001\": position 1500001 is past the end of an array of 0: can't "
         "backfill more than 1500000 elements"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_set (cases[i].doc, cases[i].path, cases[i].value, cases[i].want, NULL);
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].error)
            check_set (errors[i].doc, errors[i].path, errors[i].value, NULL, errors[i].error);
}

/* The padding limit itself: 1,500,000 nulls are allowed. */
static void
test_set_backfill_limit (void)
{
    bson_t *doc = J ("{'arr':[]}"), *holder, out;
    const bson_value_t *v = value_of ("1", &holder);
    rm_path_t p;
    bson_error_t err;
    bson_iter_t it, arr;
    uint32_t n = 0;

    bson_init (&out);
    if (parse (&p, "arr.1500000")) {
        T_CHECK (doc_set (&out, bson_get_data (doc), doc->len, &p, v, &err));
        T_CHECK (bson_iter_init_find (&it, &out, "arr") && bson_iter_recurse (&it, &arr));
        while (bson_iter_next (&arr))
            n++;
        T_CHECK (n == 1500001);
        rm_path_destroy (&p);
    }
    bson_destroy (&out);
    bson_destroy (holder);
    bson_destroy (doc);
}

/* ---------------------------------------------------------------- unset */

static void
test_unset (void)
{
    static const struct {
        const char *doc, *path, *want;
        bool changed;
    } cases[] = {
        {"{'a':1,'b':2}", "a", "{'b':2}", true},
        {"{'x':0,'a':{'b':1,'c':2},'y':1}", "a.b", "{'x':0,'a':{'c':2},'y':1}", true},
        {"{'a':{'b':1}}", "a.b", "{'a':{}}", true}, /* the parent stays */
        {"{'_id':1,'a':1}", "_id", "{'a':1}", true},
        /* an array element becomes null: positions stay */
        {"{'a':[1,2,3]}", "a.1", "{'a':[1,null,3]}", true},
        {"{'a':[1,2,3]}", "a.01", "{'a':[1,null,3]}", true},
        {"{'a':[{'b':1},{'b':2}]}", "a.1.b", "{'a':[{'b':1},{}]}", true},
        {"{'a':[[1,2]]}", "a.0.0", "{'a':[[null,2]]}", true},
        /* nothing there: the document as it is */
        {"{'a':1}", "b", "{'a':1}", false},
        {"{'a':5}", "a.b", "{'a':5}", false},
        {"{'a':null}", "a.b", "{'a':null}", false},
        {"{'a':[1]}", "a.5", "{'a':[1]}", false},
        {"{'a':[{'b':1}]}", "a.b", "{'a':[{'b':1}]}", false}, /* no walking through arrays */
        {"{'a':{'b':[1]}}", "a.b.0.c", "{'a':{'b':[1]}}", false},
        {"{}", "a", "{}", false},
    };

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bson_t *doc = J (cases[i].doc), out;
        rm_path_t p;
        bson_error_t err;
        bool changed = !cases[i].changed;
        char what[200];

        snprintf (what, sizeof what, "unset %s in %s", cases[i].path, cases[i].doc);
        bson_init (&out);
        if (parse (&p, cases[i].path)) {
            if (!doc_unset (&out, bson_get_data (doc), doc->len, &p, &changed, &err)) {
                fprintf (stderr, "  %s: %s\n", what, err.message);
                t_fail_checks++;
            } else {
                T_CHECK (same_doc (&out, cases[i].want, what));
                T_CHECK (changed == cases[i].changed);
            }
            rm_path_destroy (&p);
        }
        bson_destroy (&out);
        bson_destroy (doc);
    }
}

/* --------------------------------------------------------------- rename */

static void
check_rename (const char *doc_json, const char *from, const char *to, const char *want,
              bool want_changed, const char *error)
{
    bson_t *doc = J (doc_json), out;
    rm_path_t pf, pt;
    bson_error_t err;
    bool changed = !want_changed;
    char what[300];

    snprintf (what, sizeof what, "rename %s to %s in %s", from, to, doc_json);
    bson_init (&out);
    if (parse (&pf, from)) {
        if (parse (&pt, to)) {
            bool ok = doc_rename (&out, bson_get_data (doc), doc->len, &pf, &pt, &changed, &err);
            if (error) {
                T_CHECK (!ok);
                if (!ok) {
                    T_CHECK_STR (err.message, error);
                    /* paths that conflict are the plan's fault; a document
                     * whose shape blocks the move is a data error */
                    T_CHECK (err.domain == RM_ERROR_DOMAIN &&
                             err.code == (strstr (error, "must differ") || strstr (error, "same path")
                                              ? RM_ERR_USAGE
                                              : RM_ERR_DATA));
                    T_CHECK (out.len == 5);
                    T_CHECK (!changed);
                }
            } else if (!ok) {
                fprintf (stderr, "  %s: %s\n", what, err.message);
                t_fail_checks++;
            } else {
                T_CHECK (same_doc (&out, want, what));
                T_CHECK (changed == want_changed);
            }
            rm_path_destroy (&pt);
        }
        rm_path_destroy (&pf);
    }
    bson_destroy (&out);
    bson_destroy (doc);
}

static void
test_rename (void)
{
    static const struct {
        const char *doc, *from, *to, *want;
        bool changed;
    } cases[] = {
        {"{'a':1,'b':2}", "a", "c", "{'b':2,'c':1}", true},
        /* an existing target keeps its place */
        {"{'a':1,'b':2}", "a", "b", "{'b':1}", true},
        {"{'x':1,'b':2,'y':3,'a':4}", "a", "b", "{'x':1,'b':4,'y':3}", true},
        {"{'a':1,'x':{'y':2,'z':3}}", "a", "x.y", "{'x':{'y':1,'z':3}}", true},
        /* across levels; parents created at the end */
        {"{'a':{'b':1},'c':{'d':2}}", "a.b", "c.e", "{'a':{},'c':{'d':2,'e':1}}", true},
        {"{'a':{'b':1},'t':5}", "a.b", "t", "{'a':{},'t':1}", true},
        {"{'a':1}", "a", "x.y.z", "{'x':{'y':{'z':1}}}", true},
        {"{'a':1}", "a", "ab", "{'ab':1}", true},
        /* the value moved may be an array, and may replace one */
        {"{'a':[1,{'k':2}],'b':1}", "a", "c", "{'b':1,'c':[1,{'k':2}]}", true},
        {"{'a':1,'x':[1]}", "a", "x", "{'x':1}", true},
        {"{'x':1,'a':2}", "a", "_id", "{'_id':2,'x':1}", true},
        /* a missing source is a no-op, whatever the target */
        {"{'x':1}", "a", "b", "{'x':1}", false},
        {"{}", "a.b", "c", "{}", false},
        {"{'a':{}}", "a.b", "c", "{'a':{}}", false},
        {"{'a':[1]}", "a.3", "c", "{'a':[1]}", false},
        {"{'b':1,'x':5}", "a", "x.y", "{'b':1,'x':5}", false},
    };
    static const struct {
        const char *doc, *from, *to, *error;
    } errors[] = {
        {"{'a':1}", "a", "a", "cannot rename \"a\" to \"a\": the source and target must differ"},
        {"{'a':1}", "a", "a.b",
         "cannot rename \"a\" to \"a.b\": the source and target are on the same path"},
        {"{'a':{'b':1}}", "a.b", "a",
         "cannot rename \"a.b\" to \"a\": the source and target are on the same path"},
        {"{'a':5}", "a.b", "c",
         "cannot rename \"a.b\" to \"c\": cannot use the part (b of a.b) to traverse the "
         "element ({a: 5})"},
        {"{'a':[1]}", "a.b", "c",
         "cannot rename \"a.b\" to \"c\": cannot use the part (b of a.b) to traverse the "
         "element ({a: [ 1 ]})"},
        {"{'a':[{'b':1}]}", "a.0.b", "c",
         "cannot rename \"a.0.b\" to \"c\": the source field cannot be an array element (\"a\" "
         "is an array)"},
        {"{'a':[1,2]}", "a.1", "c",
         "cannot rename \"a.1\" to \"c\": the source field cannot be an array element (\"a\" is "
         "an array)"},
        {"{'a':1,'x':[1]}", "a", "x.0",
         "cannot rename \"a\" to \"x.0\": the destination field cannot be an array element "
         "(\"x\" is an array)"},
        {"{'a':1,'x':[1]}", "a", "x.y",
         "cannot rename \"a\" to \"x.y\": the destination field cannot be an array element "
         "(\"x\" is an array)"},
        {"{'a':1,'x':[1]}", "a", "x.5.y",
         "cannot rename \"a\" to \"x.5.y\": the destination field cannot be an array element "
         "(\"x\" is an array)"},
        {"{'a':1,'x':{'y':[{'z':1}]}}", "a", "x.y.0.z",
         "cannot rename \"a\" to \"x.y.0.z\": the destination field cannot be an array element "
         "(\"x.y\" is an array)"},
        {"{'a':1,'x':5}", "a", "x.y",
         "cannot rename \"a\" to \"x.y\": cannot create field 'y' in element {x: 5}"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_rename (cases[i].doc, cases[i].from, cases[i].to, cases[i].want, cases[i].changed,
                      NULL);
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        check_rename (errors[i].doc, errors[i].from, errors[i].to, NULL, false, errors[i].error);
}

/* --------------------------------------------------- every type, as bytes */

/* Every BSON type, plus a regex whose options are not sorted (libbson
 * sorts them when it builds one, so only a copy of bytes keeps them). */
static bson_t *
all_types (void)
{
    static const uint8_t rx[] = {15, 0, 0, 0, 0x0B, 'r', 'x', 0, 'a', '+', 0, 'm', 'i', 0, 0};
    bson_t *doc = J (
        "{'_id':{'$oid':'5f0c8a5e2b3c4d5e6f708192'},"
        "'dbl':1.5,'str':'h\\u00e9llo','doc':{'k':[1,{'z':null}]},'arr':[1,'two',{'three':3}],"
        "'bin':{'$binary':{'base64':'AQID','subType':'00'}},"
        "'bin2':{'$binary':{'base64':'AQID','subType':'02'}},"
        "'uuid':{'$binary':{'base64':'AAECAwQFBgcICQoLDA0ODw==','subType':'04'}},"
        "'undef':{'$undefined':true},'oid':{'$oid':'000102030405060708090a0b'},'bool':true,"
        "'date':{'$date':{'$numberLong':'-1000'}},'null':null,"
        "'regex':{'$regularExpression':{'pattern':'^a.b','options':'ix'}},"
        "'dbptr':{'$dbPointer':{'$ref':'db.c','$id':{'$oid':'000102030405060708090a0b'}}},"
        "'code':{'$code':'function(){}'},'sym':{'$symbol':'sym'},"
        "'cws':{'$code':'f()','$scope':{'x':1}},'i32':{'$numberInt':'-7'},"
        "'ts':{'$timestamp':{'t':5,'i':6}},'i64':{'$numberLong':'1234567890123'},"
        "'dec':{'$numberDecimal':'1.10'},'max':{'$maxKey':1},'min':{'$minKey':1}}");
    bson_t raw;

    T_CHECK (bson_init_static (&raw, rx, sizeof rx));
    T_CHECK (bson_concat (doc, &raw));
    return doc;
}

static void
test_untouched_bytes (void)
{
    bson_t *src = all_types (), *holder, out, expect;
    const bson_value_t *v = value_of ("'new'", &holder);
    const uint8_t *a, *b;
    size_t na, nb;
    rm_path_t p, q;
    bson_error_t err;
    bool changed;
    bson_iter_t it;

    /* the regex really is unsorted in the input */
    T_CHECK (elem_bytes (src, "rx", &a, &na) && na == 10 && memcmp (a + 7, "mi", 2) == 0);

    /* a new field: exactly the input's bytes, then it */
    bson_init (&out);
    if (parse (&p, "zz")) {
        T_CHECK (doc_set (&out, bson_get_data (src), src->len, &p, v, &err));
        bson_copy_to (src, &expect);
        bson_append_utf8 (&expect, "zz", 2, "new", 3);
        T_CHECK (bson_equal (&out, &expect));
        bson_destroy (&expect);
        rm_path_destroy (&p);
    }

    /* a replaced field, a nested edit, a removal, renames */
    bson_reinit (&out);
    if (parse (&p, "i32")) {
        T_CHECK (doc_set (&out, bson_get_data (src), src->len, &p, v, &err));
        check_untouched (src, &out, "i32", "set i32");
        T_CHECK (bson_iter_init_find (&it, &out, "i32") && BSON_ITER_HOLDS_UTF8 (&it));
        rm_path_destroy (&p);
    }
    bson_reinit (&out);
    if (parse (&p, "doc.k.1.z")) {
        T_CHECK (doc_set (&out, bson_get_data (src), src->len, &p, v, &err));
        check_untouched (src, &out, "doc", "set doc.k.1.z");
        rm_path_destroy (&p);
    }
    bson_reinit (&out);
    if (parse (&p, "str")) {
        T_CHECK (doc_unset (&out, bson_get_data (src), src->len, &p, &changed, &err));
        T_CHECK (changed && !bson_has_field (&out, "str"));
        check_untouched (src, &out, "str", "unset str");
        rm_path_destroy (&p);
    }
    bson_reinit (&out);
    if (parse (&p, "nothing")) {
        T_CHECK (doc_unset (&out, bson_get_data (src), src->len, &p, &changed, &err));
        T_CHECK (!changed && bson_equal (&out, src));
        rm_path_destroy (&p);
    }
    bson_reinit (&out);
    if (parse (&p, "rx") && parse (&q, "moved")) {
        /* the moved value keeps its bytes too */
        T_CHECK (doc_rename (&out, bson_get_data (src), src->len, &p, &q, &changed, &err));
        check_untouched (src, &out, "rx", "rename rx");
        T_CHECK (elem_bytes (src, "rx", &a, &na) && elem_bytes (&out, "moved", &b, &nb));
        T_CHECK (nb == na + 3 && a[0] == b[0] && memcmp (a + 4, b + 7, na - 4) == 0);
        rm_path_destroy (&p);
        rm_path_destroy (&q);
    }
    bson_reinit (&out);
    if (parse (&p, "bin2") && parse (&q, "doc.bin2")) {
        T_CHECK (doc_rename (&out, bson_get_data (src), src->len, &p, &q, &changed, &err));
        check_untouched2 (src, &out, "doc", "bin2", "rename bin2 into doc");
        T_CHECK (!bson_has_field (&out, "bin2") && bson_has_field (&out, "doc.bin2"));
        rm_path_destroy (&p);
        rm_path_destroy (&q);
    }
    bson_destroy (&out);

    /* every type as the value set: its bytes land as they are */
    T_CHECK (bson_iter_init (&it, src));
    while (bson_iter_next (&it)) {
        const char *key = bson_iter_key (&it);
        if (strcmp (key, "rx") == 0) /* bson_append_value sorts its options */
            continue;
        bson_init (&out);
        if (parse (&p, "x.copy")) {
            bson_t *one = bson_new ();
            bson_iter_t x, c;
            T_CHECK (doc_set (&out, bson_get_data (src), src->len, &p, bson_iter_value (&it),
                                 &err));
            T_CHECK (bson_iter_init_find (&x, &out, "x") && bson_iter_recurse (&x, &c) &&
                     bson_iter_find (&c, "copy"));
            bson_append_iter (one, "copy", 4, &c);
            T_CHECK (elem_bytes (src, key, &a, &na) && elem_bytes (one, "copy", &b, &nb));
            if (na - strlen (key) != nb - 4 || memcmp (a + 2 + strlen (key), b + 6, nb - 6) != 0) {
                fprintf (stderr, "  set to the value of %s: bytes differ\n", key);
                t_fail_checks++;
            }
            bson_destroy (one);
            check_untouched (src, &out, NULL, "set x.copy");
            rm_path_destroy (&p);
        }
        bson_destroy (&out);
    }
    bson_destroy (holder);
    bson_destroy (src);
}

/* --------------------------------------------------------- deep nesting */

/* {'l0':{'x':0,'l1':{...'l9':{'x':9,INNER9'y':9TAIL9}...,'y':1},'y':0},'z':1},
 * with EXTRA4 after the last field of l4. */
static void
deep_json (char *buf, size_t cap, const char *inner9, const char *tail9, const char *extra4)
{
    size_t n = 0;

    n += (size_t) snprintf (buf + n, cap - n, "{");
    for (int i = 0; i < 10; i++)
        n += (size_t) snprintf (buf + n, cap - n, "'l%d':{'x':%d,", i, i);
    n += (size_t) snprintf (buf + n, cap - n, "%s'y':9%s}", inner9, tail9);
    for (int i = 8; i >= 0; i--)
        n += (size_t) snprintf (buf + n, cap - n, ",'y':%d%s%s}", i, i == 4 && extra4 ? "," : "",
                                i == 4 && extra4 ? extra4 : "");
    snprintf (buf + n, cap - n, ",'z':1}");
}

static void
deep_path (char *buf, size_t cap, int levels, const char *tail)
{
    size_t n = 0;
    for (int i = 0; i < levels; i++)
        n += (size_t) snprintf (buf + n, cap - n, "l%d.", i);
    snprintf (buf + n, cap - n, "%s", tail);
}

/* {'a':[{'a':[...{'a':1},{'a':1}...]},{'a':[...]}]}: two documents per
 * array, `levels` deep. */
static void
tree_json (char *buf, size_t cap, size_t *n, int levels)
{
    if (levels == 1) {
        *n += (size_t) snprintf (buf + *n, cap - *n, "{'a':1}");
        return;
    }
    *n += (size_t) snprintf (buf + *n, cap - *n, "{'a':[");
    tree_json (buf, cap, n, levels - 1);
    *n += (size_t) snprintf (buf + *n, cap - *n, ",");
    tree_json (buf, cap, n, levels - 1);
    *n += (size_t) snprintf (buf + *n, cap - *n, "]}");
}

static void
test_deep (void)
{
    static char doc[4096], want[4096], path[200], tree[65536];
    rm_path_t p, q;
    bson_t *d, out, got;
    bson_error_t err;
    bool changed;
    size_t count, n = 0;

    deep_json (doc, sizeof doc, "'v':1,", "", NULL);

    /* replaced in place, ten levels down */
    deep_path (path, sizeof path, 10, "v");
    deep_json (want, sizeof want, "'v':2,", "", NULL);
    check_set (doc, path, "2", want, NULL);

    /* created at the end of the tenth level */
    deep_path (path, sizeof path, 10, "n");
    deep_json (want, sizeof want, "'v':1,", ",'n':2", NULL);
    check_set (doc, path, "2", want, NULL);

    /* five missing levels under l4 */
    deep_path (path, sizeof path, 5, "m.n.o.p.q");
    deep_json (want, sizeof want, "'v':1,", "", "'m':{'n':{'o':{'p':{'q':2}}}}");
    check_set (doc, path, "2", want, NULL);

    /* an array on the way: the error names its element */
    deep_json (want, sizeof want, "'v':[1],", "", NULL);
    deep_path (path, sizeof path, 10, "v.k");
    check_set (want, path, "2", NULL,
               "cannot set \"l0.l1.l2.l3.l4.l5.l6.l7.l8.l9.v.k\": cannot create field 'k' in "
               "element {v: [ 1 ]}");

    d = J (doc);
    bson_init (&out);
    deep_path (path, sizeof path, 10, "v");
    if (parse (&p, path)) {
        T_CHECK (doc_unset (&out, bson_get_data (d), d->len, &p, &changed, &err) && changed);
        deep_json (want, sizeof want, "", "", NULL);
        T_CHECK (same_doc (&out, want, "deep unset"));

        deep_path (path, sizeof path, 10, "w");
        if (parse (&q, path)) {
            bson_reinit (&out);
            T_CHECK (doc_rename (&out, bson_get_data (d), d->len, &p, &q, &changed, &err));
            deep_json (want, sizeof want, "", ",'w':1", NULL);
            T_CHECK (same_doc (&out, want, "deep rename"));
            rm_path_destroy (&q);
        }
        deep_path (path, sizeof path, 3, "w");
        if (parse (&q, path)) {
            bson_reinit (&out);
            T_CHECK (doc_rename (&out, bson_get_data (d), d->len, &p, &q, &changed, &err));
            deep_json (want, sizeof want, "", "", NULL);
            {
                /* 'w' at the end of l2: after its 'y':2 */
                char *y = strstr (want, ",'y':2}");
                char rest[4096];
                snprintf (rest, sizeof rest, ",'y':2,'w':1}%s", y + 7);
                strcpy (y, rest);
            }
            T_CHECK (same_doc (&out, want, "deep rename up"));
            rm_path_destroy (&q);
        }
        rm_path_destroy (&p);
    }
    deep_path (path, sizeof path, 10, "v");
    visited (doc, path, true, true, 0, &got, &count);
    T_CHECK (count == 1 && same_doc (&got, "{'v':[1]}", "deep visit"));
    bson_destroy (&got);
    bson_destroy (&out);
    bson_destroy (d);

    /* ten levels of arrays of two documents: 2^9 values on a.a.a... */
    tree_json (tree, sizeof tree, &n, 10);
    visited (tree, "a.a.a.a.a.a.a.a.a.a", true, false, 0, &got, &count);
    T_CHECK (count == 512);
    bson_destroy (&got);
    visited (tree, "a.1.a.0.a.1.a.0.a.1.a.0.a.1.a.0.a.1.a", true, false, 0, &got, &count);
    T_CHECK (count == 1);
    bson_destroy (&got);
    /* indexes and implicit walks mixed: 2 * 2 * 2 branches reach the
     * leaf arrays [T2, T2] (2 per branch, 2 elements each) */
    visited (tree, "a.a.1.a.a.0.a.a.1.a.a", true, false, 0, &got, &count);
    T_CHECK (count == 32);
    bson_destroy (&got);
}

/* ------------------------------------------------------------- bad bytes */

static void
test_bad_bytes (void)
{
    bson_t *doc = J ("{'a':{'b':1},'c':2}"), out;
    uint8_t *bad = bson_malloc (doc->len);
    rm_path_t p;
    bson_error_t err;
    bool changed;
    bson_iter_t it;

    memcpy (bad, bson_get_data (doc), doc->len);
    bad[7] = 0x40; /* the length of 'a' now runs past the end */
    bson_init (&out);
    if (parse (&p, "a.b")) {
        const bson_value_t *v;
        bson_t *holder;

        v = value_of ("1", &holder);
        T_CHECK (!doc_set (&out, bad, doc->len, &p, v, &err));
        T_CHECK (err.code == RM_ERR_FORMAT);
        T_CHECK_STR (err.message, "cannot set \"a.b\": the document is not valid BSON");
        T_CHECK (out.len == 5);
        T_CHECK (!doc_unset (&out, bad, doc->len, &p, &changed, &err));
        T_CHECK (rm_path_visit (bad, doc->len, &p, true, true, NULL, NULL) == 0);
        T_CHECK (!rm_path_get (bad, doc->len, &p, &it));
        /* a length that does not match */
        T_CHECK (!doc_set (&out, bson_get_data (doc), doc->len - 1, &p, v, &err));
        T_CHECK (!doc_set (&out, bson_get_data (doc), 3, &p, v, &err));
        T_CHECK_STR (err.message, "not a BSON document (3 bytes)");
        bson_destroy (holder);
        rm_path_destroy (&p);
    }
    bson_destroy (&out);
    bson_free (bad);
    bson_destroy (doc);
}

/* A random document over a few names (repeats included, as BSON allows),
 * with nested documents and arrays, for the differential test below. */
static void
random_doc (bson_t *b, uint64_t *rng, int depth)
{
    static const char *names[] = {"a", "b", "c", "_id", "ab"};
    int n = (int) (t_xorshift (rng) % 6);

    for (int i = 0; i < n; i++) {
        const char *k = names[t_xorshift (rng) % 5];
        bson_t child;
        switch (t_xorshift (rng) % 5) {
        case 0:
            BSON_APPEND_INT32 (b, k, (int32_t) (t_xorshift (rng) % 100));
            break;
        case 1:
            /* lengths given: libbson reads a 1-byte "" past its end */
            bson_append_utf8 (b, k, -1, "text", t_xorshift (rng) % 2 ? 4 : 0);
            break;
        case 2:
            if (depth < 2) {
                BSON_APPEND_DOCUMENT_BEGIN (b, k, &child);
                random_doc (&child, rng, depth + 1);
                bson_append_document_end (b, &child);
                break;
            }
            /* fall through */
        case 3:
            BSON_APPEND_ARRAY_BEGIN (b, k, &child);
            BSON_APPEND_INT32 (&child, "0", 7);
            bson_append_array_end (b, &child);
            break;
        default:
            BSON_APPEND_NULL (b, k);
            break;
        }
    }
}

/* rename takes a shortcut for two top-level fields (one scan, one copy):
 * it must equal its definition, $set of the source's value at the target
 * then $unset of the source, on random documents, for every pair of
 * names, and also for dotted paths (which go the long way). */
static void
test_rename_is_set_then_unset (void)
{
    static const char *paths[] = {"a", "b", "c", "_id", "ab", "a.b", "c.a", "b.c.a"};
    size_t np = sizeof paths / sizeof *paths;
    uint64_t rng = 42;
    rm_buf_t got, mid, want;
    int compared = 0, differ = 0;

    rm_buf_init (&got);
    rm_buf_init (&mid);
    rm_buf_init (&want);
    for (int round = 0; round < 400; round++) {
        bson_t doc = BSON_INITIALIZER;
        random_doc (&doc, &rng, 0);
        for (size_t i = 0; i < np; i++)
            for (size_t j = 0; j < np; j++) {
                rm_path_t from, to;
                bson_error_t err;
                bson_iter_t at;
                rm_raw_value_t v;
                bool changed, ok;

                if (i == j || !rm_path_parse (&from, paths[i], &err))
                    continue;
                T_CHECK (rm_path_parse (&to, paths[j], &err));
                ok = rm_doc_rename (&got, bson_get_data (&doc), doc.len, &from, &to, &changed, &err);
                if (ok && rm_path_get (bson_get_data (&doc), doc.len, &from, &at) && changed) {
                    /* the definition, through the general set and unset */
                    rm_raw_value_of (&at, &v);
                    T_CHECK (rm_doc_set (&mid, bson_get_data (&doc), doc.len, &to, &v, &err));
                    T_CHECK (rm_doc_unset (&want, mid.data, mid.len, &from, NULL, &err));
                    if (got.len != want.len || memcmp (got.data, want.data, got.len) != 0)
                        differ++; /* counted: one line for the lot, not thousands */
                    compared++;
                } else if (ok) {
                    T_CHECK (!changed);
                    T_CHECK (got.len == doc.len && memcmp (got.data, bson_get_data (&doc), doc.len) == 0);
                }
                rm_path_destroy (&from);
                rm_path_destroy (&to);
            }
        bson_destroy (&doc);
    }
    T_CHECK (differ == 0);
    T_CHECK (compared > 1000);
    rm_buf_destroy (&got);
    rm_buf_destroy (&mid);
    rm_buf_destroy (&want);
}

/* A rename through missing parents on a thread that then ends, as the
 * threads computing a field step ahead do: the buffer the rename keeps
 * for its thread (kept_mid) is freed at that thread's end. Before, it was
 * lost: the sanitizer run of make check (LeakSanitizer, at exit) fails
 * on it. */
typedef struct {
    rm_buf_t out;
    bool ok;
} rename_job_t;

static void *
rename_on_thread (void *arg)
{
    rename_job_t *j = arg;
    bson_t *doc = J ("{'_id':1,'x':{'deep':[1]},'y':2}");
    rm_path_t from, to;
    bson_error_t err;
    bool changed;

    memset (&from, 0, sizeof from);
    memset (&to, 0, sizeof to);
    j->ok = rm_path_parse (&from, "x", &err) && rm_path_parse (&to, "m.n.o", &err) &&
            rm_doc_rename (&j->out, bson_get_data (doc), doc->len, &from, &to, &changed, &err) && changed;
    rm_path_destroy (&from);
    rm_path_destroy (&to);
    bson_destroy (doc);
    return NULL;
}

static void
test_rename_on_a_thread (void)
{
    for (int k = 0; k < 3; k++) {
        rename_job_t j;
        pthread_t t;
        bson_t got;
        rm_buf_init (&j.out);
        j.ok = false;
        T_CHECK (rm_thread_start (&t, rename_on_thread, &j) == 0);
        T_CHECK (pthread_join (t, NULL) == 0);
        T_CHECK (j.ok);
        T_CHECK (bson_init_static (&got, j.out.data, j.out.len));
        T_CHECK (same_doc (&got, "{'_id':1,'y':2,'m':{'n':{'o':{'deep':[1]}}}}", "rename on a thread"));
        rm_buf_destroy (&j.out);
    }
}

int
main (void)
{
    T_RUN (test_parse);
    T_RUN (test_visit);
    T_RUN (test_visit_foreign);
    T_RUN (test_get);
    T_RUN (test_set);
    T_RUN (test_set_backfill_limit);
    T_RUN (test_unset);
    T_RUN (test_rename);
    T_RUN (test_rename_is_set_then_unset);
    T_RUN (test_rename_on_a_thread);
    T_RUN (test_untouched_bytes);
    T_RUN (test_deep);
    T_RUN (test_bad_bytes);
    return t_done ();
}
