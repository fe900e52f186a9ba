/* Dotted paths over raw BSON: reading them as MongoDB's query matcher does
 * (the foreign side of $lookup), and $set, $unset and $rename as the update
 * operators do, by copying byte ranges, never through a tree.
 *
 * Reading (rm_path_visit), after src/mongo/db/matcher/path.cpp:
 *  - documents are walked by field name (the first field of that name);
 *  - an array met before the path ends is walked element by element: each
 *    document element is searched for the rest of the path; other elements
 *    are skipped, so an array directly inside an array is not entered
 *    (a.x finds nothing in {a: [[{x: 1}]]}). On the foreign side
 *    (also_whole) an element the rest of the path finds nothing in gives
 *    a missing value instead, as the matcher reads {"a.x": null}: a
 *    document without it, and since SERVER-36681 a scalar or an inner
 *    array (under a field name; under an array index only a document).
 *    rm_path_visit_foreign reads by either server's rules: before
 *    SERVER-36681 (MongoDB 5.0-8.x) a scalar or inner array is skipped,
 *    and a path that crossed an array by name is not missing even where
 *    it found nothing ({a: []} for "a.x");
 *  - a numeric component after an array does both things, in this order,
 *    for each element: a document element is searched for a field of that
 *    name ("0"), then the element at that position stands for the
 *    component. So a.0 over {a: [{"0": 5}]} gives 5, then {"0": 5}; and an
 *    array at that position is walked in turn (a.0.x over {a: [[{x: 1}]]}
 *    gives 1). The component must be written as the array key is: "01"
 *    never indexes. MongoDB's own localField walk (document_path_support)
 *    indexes only; one walk here serves both sides;
 *  - an array the path ends on, found by name, gives its elements
 *    (expand_leaf_array), then itself (also_whole). An array the path ends
 *    on by position (a.0 over {a: [[1, 2]]}) is one value on the foreign
 *    side (also_whole: [1, 2], as the matcher) and its elements on the
 *    local side (expand alone: 1 and 2, as document_path_support).
 *
 * Editing, after src/mongo/db/update (path_support.cpp, rename_node.cpp):
 *  - a numeric component indexes an array and is read as the update system
 *    reads it: any digits ("01" is 1). Arrays are never walked implicitly;
 *  - $set creates missing documents, and pads an array with nulls up to a
 *    position past its end (at most 1,500,000 nulls, MongoDB's limit); it
 *    fails on a scalar, or on a name applied to an array, on the way;
 *  - $unset removes a field, sets an array element to null (the array keeps
 *    its length), and ignores a path that does not lead anywhere;
 *  - $rename is $set of the value at the new place then removal of the old
 *    one; a missing source is a no-op, and neither path may go through an
 *    array.
 *  - A top-level _id the edit creates goes first: stored documents begin
 *    with _id.
 * Untouched elements are copied as bytes, and edits write raw bytes: no
 * libbson builder, so an edit costs a walk of the fields on the path and
 * a few memcpy. (bson_append_iter would not do anyway: it re-encodes
 * values and sorts regex options.) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/docpath.h"

#include "bsonwalk.h"
#include "docbuf.h"
#include "thread.h"

/* MongoDB's kMaxPaddingAllowed: $set pads an array with at most this many
 * nulls. */
#define MAX_BACKFILL 1500000u

/* ------------------------------------------------------------------ paths */

static bool
path_error (rm_path_t *p, bson_error_t *err, rm_errcode_t code, const char *text,
            const char *fmt, ...) BSON_GNUC_PRINTF (5, 6);

static bool
path_error (rm_path_t *p, bson_error_t *err, rm_errcode_t code, const char *text,
            const char *fmt, ...)
{
    char why[256];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (why, sizeof why, fmt, ap);
    va_end (ap);
    rm_error_set (err, code, "invalid path \"%s\": %s", text, why);
    rm_path_destroy (p);
    return false;
}

bool
rm_path_parse (rm_path_t *p, const char *text, bson_error_t *err)
{
    size_t len, n = 1;
    char *copy, *s;

    memset (p, 0, sizeof *p);
    if (!text || !*text)
        return path_error (p, err, RM_ERR_USAGE, "", "empty");
    len = strlen (text);
    if (text[0] == '.')
        return path_error (p, err, RM_ERR_USAGE, text, "starts with '.'");
    if (text[len - 1] == '.')
        return path_error (p, err, RM_ERR_USAGE, text, "ends with '.'");
    if (strstr (text, ".."))
        return path_error (p, err, RM_ERR_USAGE, text, "empty field name between dots");
    for (s = strchr (text, '.'); s; s = strchr (s + 1, '.'))
        n++;
    if (n > RM_PATH_MAX_PARTS)
        return path_error (p, err, RM_ERR_USAGE, text, "%zu parts, more than %d", n,
                           RM_PATH_MAX_PARTS);

    /* One allocation: the text, then a copy cut at the dots for parts[]. */
    p->text = malloc (2 * (len + 1));
    if (!p->text)
        return path_error (p, err, RM_ERR_NOMEM, text, "out of memory");
    memcpy (p->text, text, len + 1);
    copy = p->text + len + 1;
    memcpy (copy, text, len + 1);
    for (s = copy;; s++) {
        char *dot = strchr (s, '.');
        p->parts[p->n] = s;
        p->lens[p->n++] = (uint32_t) (dot ? (size_t) (dot - s) : strlen (s));
        if (!dot)
            break;
        s = dot;
        *s = '\0';
    }
    /* $-names are operators ($, $[], $[id]) or not storable; none is a path
     * this code can follow. */
    for (size_t i = 0; i < p->n; i++)
        if (p->parts[i][0] == '$')
            return path_error (p, err, RM_ERR_USAGE, text, "field name \"%s\" starts with '$'",
                               p->parts[i]);
    return true;
}

void
rm_path_destroy (rm_path_t *p)
{
    if (!p)
        return;
    free (p->text);
    memset (p, 0, sizeof *p);
}

/* The first parts+1 components of p as text, for messages. */
static int
prefix_len (const rm_path_t *p, size_t parts)
{
    return (int) (p->parts[parts] - p->parts[0] + (ptrdiff_t) strlen (p->parts[parts]));
}

/* Any digits, as the update system reads an array position ("01" is 1). */
static bool
index_loose (const char *s, uint32_t *out)
{
    uint64_t v = 0;

    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t) (*s - '0');
        if (v > UINT32_MAX)
            return false;
    }
    *out = (uint32_t) v;
    return true;
}

/* The way array keys are written ("0", "17", never "017"): the matcher
 * compares the component with the key as text. */
static bool
index_strict (const char *s, uint32_t *out)
{
    if (s[0] == '0' && s[1])
        return false;
    return index_loose (s, out);
}

/* ------------------------------------------------------------ containers */

/* A document or array as bytes: where its fields are copied from. */
typedef struct {
    const uint8_t *data;
    uint32_t len;
    bool is_array;
} box_t;

static bool
box_of (const bson_iter_t *it, box_t *b)
{
    if (BSON_ITER_HOLDS_DOCUMENT (it))
        bson_iter_document (it, &b->len, &b->data);
    else if (BSON_ITER_HOLDS_ARRAY (it))
        bson_iter_array (it, &b->len, &b->data);
    else
        return false;
    b->is_array = BSON_ITER_HOLDS_ARRAY (it);
    return true;
}

/* One element of a container, found by walking its bytes (bsonwalk.h). */
typedef struct {
    const uint8_t *in; /* the container's bytes */
    uint32_t in_len;
    uint32_t start;    /* the type byte */
    uint32_t value;    /* the value's first byte */
    uint32_t end;      /* just past the value */
    uint32_t count;    /* elements before it; all of them when not found */
    uint8_t type;
} hit_t;

static void
hit_from (hit_t *h, const box_t *b, const rm_elem_t *e)
{
    h->in = b->data;
    h->in_len = b->len;
    h->start = e->start;
    h->value = e->value;
    h->end = e->end;
    h->type = e->type;
}

static const char *
hit_key (const hit_t *h)
{
    return (const char *) h->in + h->start + 1;
}

/* The value of a document or array element as a container. */
static bool
hit_box (const hit_t *h, box_t *b)
{
    if (h->type != BSON_TYPE_DOCUMENT && h->type != BSON_TYPE_ARRAY)
        return false;
    b->data = h->in + h->value;
    b->len = h->end - h->value;
    b->is_array = h->type == BSON_TYPE_ARRAY;
    return b->len >= 5;
}

/* An iterator on the element, for messages (show_element). */
static bool
hit_iter (const hit_t *h, bson_iter_t *it)
{
    return bson_iter_init_from_data_at_offset (it, h->in, h->in_len, h->start,
                                               h->value - h->start - 2);
}

/* The element a component names in a container: the first field of that
 * name in a document, the element at that position in an array (the
 * update system's reading of the number). 1 found, 0 not, -1 bad bytes. */
static int
find_in (const box_t *b, const char *name, uint32_t name_len, hit_t *h)
{
    uint32_t idx = 0, n = 0;
    bool by_index = b->is_array && index_loose (name, &idx);
    rm_walk_t w;
    rm_elem_t e;
    int rc;

    if (!rm_walk_init (&w, b->data, b->len))
        return -1;
    while ((rc = rm_walk_next (&w, &e)) > 0) {
        if (b->is_array ? by_index && n == idx : rm_elem_key_is (&w, &e, name, name_len)) {
            hit_from (h, b, &e);
            h->count = n;
            return 1;
        }
        n++;
    }
    h->count = n;
    return rc;
}

/* The first fields named a->parts[0] and b->parts[0] in document d, in one
 * scan: bit 1 set when a is found (hits[0]), bit 2 when b is (hits[1]);
 * -1 on bad bytes. */
static int
find_pair (const box_t *d, const rm_path_t *a, const rm_path_t *b, hit_t hits[2])
{
    int found = 0, rc;
    rm_walk_t w;
    rm_elem_t e;

    if (!rm_walk_init (&w, d->data, d->len))
        return -1;
    while (found != 3 && (rc = rm_walk_next (&w, &e)) != 0) {
        if (rc < 0)
            return -1;
        if (!(found & 1) && rm_elem_key_is (&w, &e, a->parts[0], a->lens[0])) {
            hit_from (&hits[0], d, &e);
            found |= 1;
        } else if (!(found & 2) && rm_elem_key_is (&w, &e, b->parts[0], b->lens[0])) {
            hit_from (&hits[1], d, &e);
            found |= 2;
        }
    }
    return found;
}

/* ---------------------------------------------------------------- reading */

bool
rm_doc_field (const uint8_t *doc, size_t len, const char *name, size_t name_len, bson_iter_t *out)
{
    box_t b = {doc, (uint32_t) len, false};
    hit_t h;

    return doc && len <= INT32_MAX && find_in (&b, name, (uint32_t) name_len, &h) > 0 &&
           hit_iter (&h, out);
}

bool
rm_path_get (const uint8_t *doc, size_t len, const rm_path_t *p, bson_iter_t *out)
{
    box_t b = {doc, (uint32_t) len, false};
    uint32_t idx;
    hit_t h;

    if (!doc || !p || !p->n || len > INT32_MAX)
        return false;
    for (size_t i = 0; i < p->n; i++) {
        if (i > 0 && !hit_box (&h, &b))
            return false;
        if (b.is_array && !index_strict (p->parts[i], &idx))
            return false;
        if (find_in (&b, p->parts[i], p->lens[i], &h) <= 0)
            return false;
    }
    return hit_iter (&h, out);
}

typedef struct {
    const rm_path_t *p;
    bool expand, whole;
    rm_path_visit_fn fn;
    void *ctx;
    size_t count;
    bool stop;
    /* The foreign side before SERVER-36681: an array the path crosses by
     * name is not missing, whatever it holds (crossed counts them). */
    bool before_36681;
    size_t crossed;
} visit_t;

static void
emit (visit_t *v, const bson_iter_t *it)
{
    if (v->stop)
        return;
    v->count++;
    if (v->fn && !v->fn (it, v->ctx))
        v->stop = true;
}

static void
emit_elements (visit_t *v, const bson_iter_t *arr)
{
    bson_iter_t el;

    if (!bson_iter_recurse (arr, &el))
        return;
    while (!v->stop && bson_iter_next (&el))
        emit (v, &el);
}

/* The value the path ends on, found by name. */
static void
emit_named (visit_t *v, const bson_iter_t *it)
{
    if (v->expand && BSON_ITER_HOLDS_ARRAY (it)) {
        emit_elements (v, it);
        if (v->whole)
            emit (v, it);
    } else {
        emit (v, it);
    }
}

/* The value the path ends on, an array element picked by position. */
static void
emit_positional (visit_t *v, const bson_iter_t *it)
{
    if (v->expand && !v->whole && BSON_ITER_HOLDS_ARRAY (it))
        emit_elements (v, it);
    else
        emit (v, it);
}

static void visit_array (visit_t *v, const bson_iter_t *arr, size_t i);

/* parts[i] in a document. */
static void
visit_doc (visit_t *v, const uint8_t *data, size_t len, size_t i)
{
    bson_iter_t it;
    box_t b;

    if (v->stop || !rm_doc_field (data, len, v->p->parts[i], v->p->lens[i], &it))
        return;
    if (i + 1 == v->p->n)
        emit_named (v, &it);
    else if (BSON_ITER_HOLDS_DOCUMENT (&it) && box_of (&it, &b))
        visit_doc (v, b.data, b.len, i + 1);
    else if (BSON_ITER_HOLDS_ARRAY (&it))
        visit_array (v, &it, i + 1);
}

/* parts[i] applied to each element of an array the path goes through. */
static void
visit_array (visit_t *v, const bson_iter_t *arr, size_t i)
{
    bool last = i + 1 == v->p->n;
    uint32_t idx = 0, pos = 0;
    bool by_index = index_strict (v->p->parts[i], &idx);
    bson_iter_t el;
    box_t b;

    if (!bson_iter_recurse (arr, &el))
        return;
    if (!by_index)
        v->crossed++;
    while (!v->stop && bson_iter_next (&el)) {
        bool here = by_index && pos == idx;

        pos++;
        if (BSON_ITER_HOLDS_DOCUMENT (&el) && box_of (&el, &b)) {
            size_t before = v->count, crossed = v->crossed;
            visit_doc (v, b.data, b.len, i);
            /* The foreign side reads the path as a query does ({"a.x":
             * null} matches {a: [{x: 1}, {y: 2}]}): an element document
             * in which the rest of the path finds nothing is a null. The
             * local side does not: there only a path that finds nothing at
             * all is null (MongoDB's lookup_equijoin_semantics cases).
             * Before SERVER-36681 the rest must be missing there, not an
             * array that held nothing ({a: [{b: [1]}]} for "a.b.c"). */
            if (v->whole && v->count == before && !(v->before_36681 && v->crossed != crossed))
                emit (v, NULL);
            if (here && last)
                emit (v, &el);
            else if (here)
                visit_doc (v, b.data, b.len, i + 1);
        } else if (here) {
            if (last)
                emit_positional (v, &el);
            else if (BSON_ITER_HOLDS_ARRAY (&el))
                visit_array (v, &el, i + 1);
        } else if (v->whole && !by_index && !v->before_36681) {
            /* A scalar or an inner array, which a field name cannot enter:
             * the path is missing there, so a null too, the server's rule
             * since SERVER-36681 ({"a.b": null} matches {a: [5, {b: 5}]}
             * and {a: [1]}; servers before it skipped such elements). Left
             * as before under an array index (a.0.x), where no test of the
             * server's says what it does. */
            emit (v, NULL);
        }
    }
}

size_t
rm_path_visit (const uint8_t *doc, size_t len, const rm_path_t *p, bool expand_leaf_array,
               bool also_whole, rm_path_visit_fn fn, void *ctx)
{
    visit_t v = {p, expand_leaf_array, also_whole, fn, ctx, 0, false, false, 0};

    if (!doc || !p || !p->n)
        return 0;
    visit_doc (&v, doc, len, 0);
    return v.count;
}

size_t
rm_path_visit_foreign (const uint8_t *doc, size_t len, const rm_path_t *p, bool since_36681,
                       rm_path_visit_fn fn, void *ctx)
{
    visit_t v = {p, true, true, fn, ctx, 0, false, !since_36681, 0};

    if (doc && p && p->n)
        visit_doc (&v, doc, len, 0);
    /* Missing: a null. Before SERVER-36681, a path that crossed an array
     * ({a: []}, {a: [1]} for "a.b") is not missing: it matches nothing. */
    if (v.count == 0 && !(v.before_36681 && v.crossed))
        emit (&v, NULL);
    return v.count;
}

/* ------------------------------------------------------ values in messages */

typedef struct {
    char *s;
    size_t cap, len;
    bool full;
} text_t;

static void put (text_t *t, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);

static void
put (text_t *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->full)
        return;
    va_start (ap, fmt);
    n = vsnprintf (t->s + t->len, t->cap - t->len, fmt, ap);
    va_end (ap);
    if (n < 0 || (size_t) n >= t->cap - t->len) {
        t->full = true;
        t->len = t->cap - 1;
    } else {
        t->len += (size_t) n;
    }
}

static void
put_double (text_t *t, double d)
{
    char buf[40];

    /* the shortest form that reads back, with ".0" on whole numbers as the
     * shell prints them */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf (buf, sizeof buf, "%.*g", prec, d);
        if (strtod (buf, NULL) == d || d != d)
            break;
    }
    put (t, "%s%s", buf, strpbrk (buf, ".eni") ? "" : ".0");
}

/* A value as the mongo shell shows it, roughly; cut short in depth. */
static void
put_value (text_t *t, const bson_iter_t *it, int depth)
{
    uint32_t n, a, b;
    const char *s, *opts;
    char hex[25];

    switch (bson_iter_type (it)) {
    case BSON_TYPE_DOUBLE:
        put_double (t, bson_iter_double (it));
        break;
    case BSON_TYPE_UTF8:
        s = bson_iter_utf8 (it, &n);
        put (t, "\"%.*s\"", (int) n, s);
        break;
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY: {
        bool arr = BSON_ITER_HOLDS_ARRAY (it), first = true;
        bson_iter_t c;

        put (t, "%s", arr ? "[" : "{");
        if (depth >= 3) {
            put (t, " ... ");
        } else if (bson_iter_recurse (it, &c)) {
            while (!t->full && bson_iter_next (&c)) {
                put (t, first ? " " : ", ");
                first = false;
                if (!arr)
                    put (t, "%s: ", bson_iter_key (&c));
                put_value (t, &c, depth + 1);
            }
            if (!first)
                put (t, " ");
        }
        put (t, "%s", arr ? "]" : "}");
        break;
    }
    case BSON_TYPE_BINARY: {
        bson_subtype_t sub;
        const uint8_t *bin;

        bson_iter_binary (it, &sub, &n, &bin);
        put (t, "BinData(%d, ", (int) sub);
        for (uint32_t i = 0; i < n && i < 16; i++)
            put (t, "%02X", bin[i]);
        put (t, "%s)", n > 16 ? "..." : "");
        break;
    }
    case BSON_TYPE_UNDEFINED:
        put (t, "undefined");
        break;
    case BSON_TYPE_OID:
        bson_oid_to_string (bson_iter_oid (it), hex);
        put (t, "ObjectId('%s')", hex);
        break;
    case BSON_TYPE_BOOL:
        put (t, "%s", bson_iter_bool (it) ? "true" : "false");
        break;
    case BSON_TYPE_DATE_TIME:
        put (t, "new Date(%lld)", (long long) bson_iter_date_time (it));
        break;
    case BSON_TYPE_NULL:
        put (t, "null");
        break;
    case BSON_TYPE_REGEX:
        s = bson_iter_regex (it, &opts);
        put (t, "/%s/%s", s, opts);
        break;
    case BSON_TYPE_DBPOINTER: {
        const bson_oid_t *oid;

        bson_iter_dbpointer (it, &n, &s, &oid);
        bson_oid_to_string (oid, hex);
        put (t, "DBPointer('%.*s', ObjectId('%s'))", (int) n, s, hex);
        break;
    }
    case BSON_TYPE_CODE:
        s = bson_iter_code (it, &n);
        put (t, "%.*s", (int) n, s);
        break;
    case BSON_TYPE_SYMBOL:
        s = bson_iter_symbol (it, &n);
        put (t, "%.*s", (int) n, s);
        break;
    case BSON_TYPE_CODEWSCOPE: {
        const uint8_t *scope;

        s = bson_iter_codewscope (it, &n, &a, &scope);
        put (t, "%.*s", (int) n, s);
        break;
    }
    case BSON_TYPE_INT32:
        put (t, "%d", bson_iter_int32 (it));
        break;
    case BSON_TYPE_TIMESTAMP:
        bson_iter_timestamp (it, &a, &b);
        put (t, "Timestamp(%u, %u)", a, b);
        break;
    case BSON_TYPE_INT64:
        put (t, "%lld", (long long) bson_iter_int64 (it));
        break;
    case BSON_TYPE_DECIMAL128: {
        bson_decimal128_t dec;
        char str[BSON_DECIMAL128_STRING];

        bson_iter_decimal128 (it, &dec);
        bson_decimal128_to_string (&dec, str);
        put (t, "NumberDecimal(\"%s\")", str);
        break;
    }
    case BSON_TYPE_MAXKEY:
        put (t, "MaxKey");
        break;
    case BSON_TYPE_MINKEY:
        put (t, "MinKey");
        break;
    default:
        put (t, "?");
        break;
    }
}

/* "{key: value}", as MongoDB names the element in its messages. */
static const char *
show_element (char *buf, size_t cap, const bson_iter_t *it)
{
    text_t t = {buf, cap, 0, false};

    buf[0] = '\0';
    put (&t, "{%s: ", bson_iter_key (it));
    put_value (&t, it, 0);
    put (&t, "}");
    if (t.full && cap > 4)
        memcpy (buf + cap - 4, "...", 4);
    return buf;
}

/* ---------------------------------------------------------------- editing */

bool
rm_raw_value_of (const bson_iter_t *it, rm_raw_value_t *v)
{
    v->type = (uint8_t) bson_iter_type (it);
    v->data = rm_iter_value_bytes (it, &v->len);
    return true;
}

void
rm_raw_value_encode (bson_t *holder, const bson_value_t *value, rm_raw_value_t *v)
{
    bson_iter_t it;
    uint32_t at = holder->len - 1; /* where the element will start */

    BSON_ASSERT (bson_append_value (holder, "", 0, value));
    BSON_ASSERT (bson_iter_init_from_data_at_offset (&it, bson_get_data (holder), holder->len, at, 0));
    rm_raw_value_of (&it, v);
}

typedef struct {
    const rm_path_t *p;
    rm_raw_value_t value; /* set: the new value; rename: the moved one */
    bool changed;
    /* What is done, for messages: op "set" and op_path "a.b" (and for
     * rename op_to), formatted only when an edit fails. */
    const char *op;
    const rm_path_t *op_path, *op_to;
    bson_error_t *err;
} edit_t;

static bool edit_fail (edit_t *e, rm_errcode_t code, const char *fmt, ...) BSON_GNUC_PRINTF (3, 4);

static bool
edit_fail (edit_t *e, rm_errcode_t code, const char *fmt, ...)
{
    char why[400];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (why, sizeof why, fmt, ap);
    va_end (ap);
    if (e->op_to)
        rm_error_set (e->err, code, "cannot %s \"%s\" to \"%s\": %s", e->op, e->op_path->text,
                      e->op_to->text, why);
    else
        rm_error_set (e->err, code, "cannot %s \"%s\": %s", e->op, e->op_path->text, why);
    return false;
}

static bool
bad_bytes (edit_t *e)
{
    return edit_fail (e, RM_ERR_FORMAT, "the document is not valid BSON");
}

static bool
cannot_create (edit_t *e, const char *name, const hit_t *in)
{
    char shown[160];
    bson_iter_t it;

    if (!hit_iter (in, &it))
        return bad_bytes (e);
    return edit_fail (e, RM_ERR_DATA, "cannot create field '%s' in element %s", name,
                      show_element (shown, sizeof shown, &it));
}

static bool
is_id (const char *name, uint32_t len)
{
    return len == 3 && memcmp (name, "_id", 3) == 0;
}

/* The output is written as raw bytes into an rm_buf_t; nested documents
 * get their length when they end (rm_docbuf_end). */
static void
put_key (rm_buf_t *out, uint8_t type, const char *key, size_t key_len)
{
    rm_buf_append (out, &type, 1);
    rm_buf_append (out, key, key_len + 1);
}

/* Elements [from, to) of a container, as they are. */
static void
copy_run (rm_buf_t *out, const box_t *b, uint32_t from, uint32_t to)
{
    rm_buf_append (out, b->data + from, to - from);
}

static void
put_new_value (edit_t *e, rm_buf_t *out, const char *key, size_t key_len)
{
    put_key (out, e->value.type, key, key_len);
    rm_buf_append (out, e->value.data, e->value.len);
}

/* The missing rest of the path, from part d under key: documents down to
 * the value. */
static void
create (edit_t *e, rm_buf_t *out, const char *key, size_t d)
{
    size_t start;

    if (d + 1 == e->p->n) {
        put_new_value (e, out, key, strlen (key));
        return;
    }
    put_key (out, BSON_TYPE_DOCUMENT, key, strlen (key));
    start = rm_docbuf_begin (out);
    create (e, out, e->p->parts[d + 1], d + 1);
    rm_docbuf_end (out, start);
}

static bool set_in (edit_t *e, rm_buf_t *out, const box_t *b, const hit_t *self, size_t d);
static bool unset_in (edit_t *e, rm_buf_t *out, const box_t *b, size_t d);

/* Rewrites the container element h (inner) under its own key. */
static bool
descend (edit_t *e, rm_buf_t *out, const hit_t *h, const box_t *inner, size_t d, bool unset)
{
    size_t start;
    bool ok;

    put_key (out, h->type, hit_key (h), h->value - h->start - 2);
    start = rm_docbuf_begin (out);
    ok = unset ? unset_in (e, out, inner, d) : set_in (e, out, inner, h, d);
    rm_docbuf_end (out, start);
    return ok;
}

/* Copies container b (the value of self; NULL at the top) with parts[d..]
 * set. Errors are found before this level writes anything. */
static bool
set_in (edit_t *e, rm_buf_t *out, const box_t *b, const hit_t *self, size_t d)
{
    const char *name = e->p->parts[d];
    bool last = d + 1 == e->p->n;
    uint32_t idx = 0;
    box_t inner;
    hit_t h;
    int found;

    if (b->is_array && !index_loose (name, &idx))
        return cannot_create (e, name, self);
    found = find_in (b, name, e->p->lens[d], &h);
    if (found < 0)
        return bad_bytes (e);
    if (found) {
        if (!last && !hit_box (&h, &inner))
            return cannot_create (e, e->p->parts[d + 1], &h);
        copy_run (out, b, 4, h.start);
        if (last)
            put_new_value (e, out, hit_key (&h), h.value - h.start - 2);
        else if (!descend (e, out, &h, &inner, d + 1, false))
            return false;
        copy_run (out, b, h.end, b->len - 1);
        return true;
    }
    if (b->is_array) {
        char buf[16];
        const char *key;

        if (idx - h.count > MAX_BACKFILL)
            return edit_fail (e, RM_ERR_DATA,
                              "position %u is past the end of an array of %u: can't backfill "
                              "more than %u elements",
                              idx, h.count, MAX_BACKFILL);
        copy_run (out, b, 4, b->len - 1);
        for (uint32_t i = h.count; i < idx; i++) {
            size_t n = bson_uint32_to_string (i, &key, buf, sizeof buf);
            put_key (out, BSON_TYPE_NULL, key, n);
        }
        bson_uint32_to_string (idx, &key, buf, sizeof buf);
        create (e, out, key, d);
        return true;
    }
    if (!self && is_id (name, e->p->lens[d])) {
        create (e, out, name, d);
        copy_run (out, b, 4, b->len - 1);
    } else {
        copy_run (out, b, 4, b->len - 1);
        create (e, out, name, d);
    }
    return true;
}

/* Copies container b with parts[d..] removed, if they lead anywhere. */
static bool
unset_in (edit_t *e, rm_buf_t *out, const box_t *b, size_t d)
{
    const char *name = e->p->parts[d];
    uint32_t idx;
    box_t inner;
    hit_t h;
    int found = 0;

    if (!b->is_array || index_loose (name, &idx))
        found = find_in (b, name, e->p->lens[d], &h);
    if (found < 0)
        return bad_bytes (e);
    if (!found) {
        copy_run (out, b, 4, b->len - 1);
        return true;
    }
    copy_run (out, b, 4, h.start);
    if (d + 1 == e->p->n) {
        /* an array keeps its positions: the element becomes null */
        e->changed = true;
        if (b->is_array)
            put_key (out, BSON_TYPE_NULL, hit_key (&h), h.value - h.start - 2);
    } else if (hit_box (&h, &inner)) {
        if (!descend (e, out, &h, &inner, d + 1, true))
            return false;
    } else {
        copy_run (out, b, h.start, h.end);
    }
    copy_run (out, b, h.end, b->len - 1);
    return true;
}

static bool
edit_start (edit_t *e, rm_buf_t *out, const uint8_t *doc, size_t len, const rm_path_t *p,
            bson_error_t *err, box_t *root)
{
    memset (e, 0, sizeof *e);
    e->p = p;
    e->op_path = p;
    e->err = err;
    root->data = doc;
    root->len = (uint32_t) len;
    root->is_array = false;
    rm_buf_reset (out);
    if (!p || !p->n) {
        rm_error_set (err, RM_ERR_USAGE, "empty path");
        return false;
    }
    if (!doc || len < 5 || len > INT32_MAX) {
        rm_error_set (err, RM_ERR_FORMAT, "not a BSON document (%zu bytes)", len);
        return false;
    }
    return true;
}

/* Ends the document begun at start in out, or empties out on failure. */
static bool
edit_finish (edit_t *e, rm_buf_t *out, size_t start, bool ok)
{
    if (ok && out->len - start + 1 > INT32_MAX)
        ok = edit_fail (e, RM_ERR_FORMAT, "the result would exceed the largest BSON document");
    if (!ok) {
        rm_buf_reset (out);
        return false;
    }
    rm_docbuf_end (out, start);
    return true;
}

/* Runs one edit of the root into out as a whole document. On failure out
 * is left empty: half an edit is not a document to keep. */
static bool
edit_root (edit_t *e, rm_buf_t *out, const box_t *root, bool unset)
{
    size_t start = rm_docbuf_begin (out);
    bool ok = unset ? unset_in (e, out, root, 0) : set_in (e, out, root, NULL, 0);

    return edit_finish (e, out, start, ok);
}

bool
rm_doc_set (rm_buf_t *out, const uint8_t *doc, size_t len, const rm_path_t *p,
            const rm_raw_value_t *value, bson_error_t *err)
{
    edit_t e;
    box_t root;

    if (!edit_start (&e, out, doc, len, p, err, &root))
        return false;
    e.op = "set";
    if (!value)
        return edit_fail (&e, RM_ERR_USAGE, "no value");
    e.value = *value;
    return edit_root (&e, out, &root, false);
}

bool
rm_doc_unset (rm_buf_t *out, const uint8_t *doc, size_t len, const rm_path_t *p, bool *changed,
              bson_error_t *err)
{
    edit_t e;
    box_t root;
    bool ok;

    if (changed)
        *changed = false;
    if (!edit_start (&e, out, doc, len, p, err, &root))
        return false;
    e.op = "unset";
    ok = edit_root (&e, out, &root, true);
    if (changed)
        *changed = ok && e.changed;
    return ok;
}

/* How far a path leads in a document, read as the update system does. */
typedef enum {
    WALK_FOUND,   /* every part exists */
    WALK_MISSING, /* parts[depth] does not exist */
    WALK_BLOCKED, /* parts[depth] would go through a scalar, or name an array's field */
} walk_end_t;

typedef struct {
    walk_end_t end;
    size_t depth; /* parts that exist */
    hit_t last;   /* the deepest of them (depth > 0) */
    int array_at; /* the first part before the last that is an array, or -1 */
} walk_t;

static int
walk (const box_t *root, const rm_path_t *p, walk_t *w)
{
    box_t b = *root;
    uint32_t idx;
    int found;

    memset (w, 0, sizeof *w);
    w->array_at = -1;
    for (size_t i = 0; i < p->n; i++) {
        if ((i > 0 && !hit_box (&w->last, &b)) ||
            (b.is_array && !index_loose (p->parts[i], &idx))) {
            w->end = WALK_BLOCKED;
            return 0;
        }
        found = find_in (&b, p->parts[i], p->lens[i], &w->last);
        if (found <= 0) {
            w->end = WALK_MISSING;
            return found;
        }
        w->depth = i + 1;
        if (w->array_at < 0 && i + 1 < p->n && w->last.type == BSON_TYPE_ARRAY)
            w->array_at = (int) i;
    }
    w->end = WALK_FOUND;
    return 0;
}

static bool
same_parts (const rm_path_t *a, const rm_path_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a->lens[i] != b->lens[i] || memcmp (a->parts[i], b->parts[i], a->lens[i]) != 0)
            return false;
    return true;
}

/* rename between two top-level fields in one copy: the same result as
 * the set then unset below, without the half-way document. */
static bool
rename_top (edit_t *e, rm_buf_t *out, const box_t *root, const hit_t *src, const hit_t *dst,
            const char *to, uint32_t to_len)
{
    size_t start = rm_docbuf_begin (out);

    if (dst) {
        /* the target's value replaced where it stands, the source gone */
        const hit_t *first = src->start < dst->start ? src : dst;
        const hit_t *second = first == src ? dst : src;
        copy_run (out, root, 4, first->start);
        if (first == dst)
            put_new_value (e, out, to, dst->value - dst->start - 2);
        copy_run (out, root, first->end, second->start);
        if (second == dst)
            put_new_value (e, out, to, dst->value - dst->start - 2);
        copy_run (out, root, second->end, root->len - 1);
    } else {
        bool id_first = is_id (to, to_len); /* stored documents begin with _id */
        if (id_first)
            put_new_value (e, out, to, to_len);
        copy_run (out, root, 4, src->start);
        copy_run (out, root, src->end, root->len - 1);
        if (!id_first)
            put_new_value (e, out, to, to_len);
    }
    return edit_finish (e, out, start, true);
}

/* rename's half-way document (the value set at the target), kept between
 * documents so that renaming millions of them does not allocate for each;
 * a huge one is given back. */
#define MID_KEEP (1u << 20)
static __thread rm_buf_t kept_mid;
static __thread bool kept_mid_freed_at_end; /* rm_thread_keep_buf called */

bool
rm_doc_rename (rm_buf_t *out, const uint8_t *doc, size_t len, const rm_path_t *from,
               const rm_path_t *to, bool *changed, bson_error_t *err)
{
    edit_t e;
    box_t root, mid;
    walk_t src, dst;
    bool ok;

    if (changed)
        *changed = false;
    if (!edit_start (&e, out, doc, len, from, err, &root))
        return false;
    if (!to || !to->n) {
        rm_error_set (err, RM_ERR_USAGE, "empty path");
        return false;
    }
    e.op = "rename";
    e.op_to = to;

    if (from->n == to->n && same_parts (from, to, from->n))
        return edit_fail (&e, RM_ERR_USAGE, "the source and target must differ");
    if (same_parts (from, to, from->n < to->n ? from->n : to->n))
        return edit_fail (&e, RM_ERR_USAGE, "the source and target are on the same path");

    if (from->n == 1 && to->n == 1) {
        /* top-level fields: one scan finds both, nothing else can block */
        hit_t hits[2];
        int found = find_pair (&root, from, to, hits);
        if (found < 0)
            return bad_bytes (&e);
        if (!(found & 1)) {
            rm_buf_append (out, doc, len);
            return true;
        }
        e.value.type = hits[0].type;
        e.value.data = hits[0].in + hits[0].value;
        e.value.len = hits[0].end - hits[0].value;
        ok = rename_top (&e, out, &root, &hits[0], found & 2 ? &hits[1] : NULL, to->parts[0],
                         to->lens[0]);
        if (changed)
            *changed = ok;
        return ok;
    }
    if (walk (&root, from, &src) < 0 || walk (&root, to, &dst) < 0)
        return bad_bytes (&e);
    if (src.end == WALK_BLOCKED) {
        char shown[160];
        bson_iter_t it;
        if (!hit_iter (&src.last, &it))
            return bad_bytes (&e);
        return edit_fail (&e, RM_ERR_DATA,
                          "cannot use the part (%s of %s) to traverse the element (%s)",
                          from->parts[src.depth], from->text,
                          show_element (shown, sizeof shown, &it));
    }
    if (src.end == WALK_MISSING) {
        /* nothing to move: the document as it is */
        rm_buf_append (out, doc, len);
        return true;
    }
    if (src.array_at >= 0)
        return edit_fail (&e, RM_ERR_DATA,
                          "the source field cannot be an array element (\"%.*s\" is an array)",
                          prefix_len (from, (size_t) src.array_at), from->text);
    /* Where the target does not exist, the deepest part that does is a
     * parent too: it may not be an array either. */
    if (dst.array_at >= 0)
        return edit_fail (&e, RM_ERR_DATA,
                          "the destination field cannot be an array element (\"%.*s\" is an "
                          "array)",
                          prefix_len (to, (size_t) dst.array_at), to->text);
    if (dst.end == WALK_BLOCKED)
        return cannot_create (&e, to->parts[dst.depth], &dst.last);

    /* $set the value at the target, then remove the source (as MongoDB
     * does): the target keeps its place when it exists. */
    e.value.type = src.last.type;
    e.value.data = src.last.in + src.last.value;
    e.value.len = src.last.end - src.last.value;
    e.p = to;
    if (!kept_mid_freed_at_end) {
        rm_thread_keep_buf (&kept_mid);
        kept_mid_freed_at_end = true;
    }
    ok = edit_root (&e, &kept_mid, &root, false);
    if (ok) {
        mid.data = kept_mid.data;
        mid.len = (uint32_t) kept_mid.len;
        mid.is_array = false;
        e.p = from;
        ok = edit_root (&e, out, &mid, true);
    }
    if (kept_mid.cap > MID_KEEP)
        rm_buf_destroy (&kept_mid);
    else
        rm_buf_reset (&kept_mid);
    if (changed)
        *changed = ok;
    return ok;
}
