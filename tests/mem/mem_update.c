/* Update documents as MongoDB applies them: the operators remodel and
 * the conformance test use ($set, $unset, $inc, $setOnInsert, $push and
 * $addToSet with $each, $pull, $rename), a replacement, and the document
 * an upsert starts from. Paths are edited by the project's docpath layer
 * (remodel/docpath.h), which keeps every other field in its place. */
#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "remodel/docpath.h"
#include "remodel/value.h"

/* The working copy: a rm_buf holding a whole document. */
typedef struct {
    rm_buf_t cur, next;
} work_t;

static void
swap (work_t *w)
{
    rm_buf_t t = w->cur;
    w->cur = w->next;
    w->next = t;
}

static bool
set_value (work_t *w, const char *path, const bson_value_t *v, bson_error_t *err)
{
    rm_path_t p;
    rm_raw_value_t raw;
    bson_t holder = BSON_INITIALIZER;
    bool ok;
    if (!rm_path_parse (&p, path, err))
        return false;
    rm_raw_value_encode (&holder, v, &raw);
    ok = rm_doc_set (&w->next, w->cur.data, w->cur.len, &p, &raw, err);
    rm_path_destroy (&p);
    bson_destroy (&holder);
    if (!ok) {
        err->domain = 1;
        err->code = MEM_E_PATH_NOT_VIABLE;
        return false;
    }
    swap (w);
    return true;
}

static bool
current (work_t *w, const char *path, bson_iter_t *it)
{
    rm_path_t p;
    bson_error_t e;
    bool found;
    if (!rm_path_parse (&p, path, &e))
        return false;
    found = rm_path_get (w->cur.data, w->cur.len, &p, it);
    rm_path_destroy (&p);
    return found;
}

static bool
op_unset (work_t *w, const char *path, bson_error_t *err)
{
    rm_path_t p;
    bool changed, ok;
    if (!rm_path_parse (&p, path, err))
        return false;
    ok = rm_doc_unset (&w->next, w->cur.data, w->cur.len, &p, &changed, err);
    rm_path_destroy (&p);
    if (ok)
        swap (w);
    return ok;
}

/* $inc: int32 + int32 stays int32 unless it overflows, any double makes
 * a double, else int64. */
static bool
op_inc (work_t *w, const char *path, const bson_iter_t *by, bson_error_t *err)
{
    bson_iter_t old;
    bson_value_t v;
    bool has = current (w, path, &old);
    if (!BSON_ITER_HOLDS_NUMBER (by)) {
        bson_set_error (err, 1, MEM_E_TYPE_MISMATCH, "Cannot increment with non-numeric argument");
        return false;
    }
    if (has && !BSON_ITER_HOLDS_NUMBER (&old)) {
        bson_set_error (err, 1, MEM_E_TYPE_MISMATCH,
                        "Cannot apply $inc to a value of non-numeric type. {_id: ...} has the "
                        "field '%s' of non-numeric type %s",
                        path, rm_value_type_name (bson_iter_type (&old)));
        return false;
    }
    if (!has) {
        bson_value_copy (bson_iter_value ((bson_iter_t *) by), &v);
    } else if (BSON_ITER_HOLDS_DOUBLE (&old) || BSON_ITER_HOLDS_DOUBLE (by)) {
        v.value_type = BSON_TYPE_DOUBLE;
        v.value.v_double = bson_iter_as_double (&old) + bson_iter_as_double (by);
    } else {
        int64_t sum = bson_iter_as_int64 (&old) + bson_iter_as_int64 (by);
        if (BSON_ITER_HOLDS_INT32 (&old) && BSON_ITER_HOLDS_INT32 (by) && sum >= INT32_MIN &&
            sum <= INT32_MAX) {
            v.value_type = BSON_TYPE_INT32;
            v.value.v_int32 = (int32_t) sum;
        } else {
            v.value_type = BSON_TYPE_INT64;
            v.value.v_int64 = sum;
        }
    }
    return set_value (w, path, &v, err);
}

/* The array at path (must be one, or missing) copied into arr, *n its
 * length. */
static bool
array_of (work_t *w, const char *path, const char *op, bson_t *arr, uint32_t *n, bson_error_t *err)
{
    bson_iter_t old, el;
    *n = 0;
    bson_init (arr);
    if (!current (w, path, &old))
        return true;
    if (!BSON_ITER_HOLDS_ARRAY (&old)) {
        bson_set_error (err, 1, MEM_E_BAD_VALUE,
                        "The field '%s' must be an array but is of type %s in document {_id: ...}",
                        path, rm_value_type_name (bson_iter_type (&old)));
        bson_destroy (arr);
        return false;
    }
    bson_iter_recurse (&old, &el);
    while (bson_iter_next (&el)) {
        char k[16];
        snprintf (k, sizeof k, "%u", (*n)++);
        bson_append_iter (arr, k, -1, &el);
    }
    (void) op;
    return true;
}

static bool
contains (const bson_t *arr, const bson_iter_t *v)
{
    bson_iter_t el;
    bson_iter_init (&el, arr);
    while (bson_iter_next (&el))
        if (!rm_value_compare (&el, v))
            return true;
    return false;
}

static bool
put_array (work_t *w, const char *path, bson_t *arr, bson_error_t *err)
{
    bson_value_t v;
    bool ok;
    v.value_type = BSON_TYPE_ARRAY;
    v.value.v_doc.data = (uint8_t *) bson_get_data (arr);
    v.value.v_doc.data_len = arr->len;
    ok = set_value (w, path, &v, err);
    bson_destroy (arr);
    return ok;
}

/* $push and $addToSet (unique), with or without $each. */
static bool
op_push (work_t *w, const char *path, const bson_iter_t *arg, bool unique, bson_error_t *err)
{
    bson_t arr;
    uint32_t n;
    bson_iter_t each, el;
    if (!array_of (w, path, unique ? "$addToSet" : "$push", &arr, &n, err))
        return false;
    if (BSON_ITER_HOLDS_DOCUMENT (arg) && bson_iter_recurse (arg, &each) &&
        bson_iter_find (&each, "$each")) {
        if (!BSON_ITER_HOLDS_ARRAY (&each)) {
            bson_destroy (&arr);
            bson_set_error (err, 1, MEM_E_BAD_VALUE, "The argument to $each must be an array");
            return false;
        }
        bson_iter_recurse (&each, &el);
        while (bson_iter_next (&el))
            if (!unique || !contains (&arr, &el)) {
                char k[16];
                snprintf (k, sizeof k, "%u", n++);
                bson_append_iter (&arr, k, -1, &el);
            }
    } else if (!unique || !contains (&arr, arg)) {
        char k[16];
        snprintf (k, sizeof k, "%u", n++);
        bson_append_iter (&arr, k, -1, arg);
    }
    return put_array (w, path, &arr, err);
}

/* Whether element el is pulled by cond: an operator document is a
 * condition on the element, another document a query on a document
 * element, anything else equality. */
static bool
pulled (const bson_iter_t *cond, const bson_iter_t *el, bson_error_t *err, bool *yes)
{
    bson_t c, d, q = BSON_INITIALIZER, doc = BSON_INITIALIZER;
    bson_iter_t first;
    bool ok = true;
    *yes = false;
    if (!BSON_ITER_HOLDS_DOCUMENT (cond)) {
        *yes = !rm_value_compare (cond, el);
        return true;
    }
    {
        uint32_t len;
        const uint8_t *data;
        bson_iter_document (cond, &len, &data);
        bson_init_static (&c, data, len);
    }
    if (bson_iter_init (&first, &c) && bson_iter_next (&first) && bson_iter_key (&first)[0] == '$') {
        BSON_APPEND_DOCUMENT (&q, "v", &c);
        bson_append_iter (&doc, "v", 1, el);
        ok = mem_matches (&q, &doc, yes, err);
    } else if (BSON_ITER_HOLDS_DOCUMENT (el)) {
        uint32_t len;
        const uint8_t *data;
        bson_iter_document (el, &len, &data);
        bson_init_static (&d, data, len);
        ok = mem_matches (&c, &d, yes, err);
    }
    bson_destroy (&q);
    bson_destroy (&doc);
    return ok;
}

static bool
op_pull (work_t *w, const char *path, const bson_iter_t *cond, bson_error_t *err)
{
    bson_iter_t old, el;
    bson_t arr = BSON_INITIALIZER;
    uint32_t n = 0;
    if (!current (w, path, &old)) {
        bson_destroy (&arr);
        return true;
    }
    if (!BSON_ITER_HOLDS_ARRAY (&old)) {
        bson_destroy (&arr);
        bson_set_error (err, 1, MEM_E_BAD_VALUE, "Cannot apply $pull to a non-array value");
        return false;
    }
    bson_iter_recurse (&old, &el);
    while (bson_iter_next (&el)) {
        bool yes;
        char k[16];
        if (!pulled (cond, &el, err, &yes)) {
            bson_destroy (&arr);
            return false;
        }
        if (yes)
            continue;
        snprintf (k, sizeof k, "%u", n++);
        bson_append_iter (&arr, k, -1, &el);
    }
    return put_array (w, path, &arr, err);
}

static bool
op_rename (work_t *w, const char *from, const bson_iter_t *to, bson_error_t *err)
{
    rm_path_t a, b;
    bool changed, ok;
    if (!BSON_ITER_HOLDS_UTF8 (to)) {
        bson_set_error (err, 1, MEM_E_BAD_VALUE, "The 'to' field for $rename must be a string");
        return false;
    }
    if (!rm_path_parse (&a, from, err))
        return false;
    if (!rm_path_parse (&b, bson_iter_utf8 (to, NULL), err)) {
        rm_path_destroy (&a);
        return false;
    }
    ok = rm_doc_rename (&w->next, w->cur.data, w->cur.len, &a, &b, &changed, err);
    rm_path_destroy (&a);
    rm_path_destroy (&b);
    if (ok)
        swap (w);
    return ok;
}

static bool
apply_one (work_t *w, const char *op, bson_iter_t *field, bool inserting, bson_error_t *err)
{
    const char *path = bson_iter_key (field);
    if (!strcmp (op, "$set") || (!strcmp (op, "$setOnInsert") && inserting))
        return set_value (w, path, bson_iter_value (field), err);
    if (!strcmp (op, "$setOnInsert"))
        return true;
    if (!strcmp (op, "$unset"))
        return op_unset (w, path, err);
    if (!strcmp (op, "$inc"))
        return op_inc (w, path, field, err);
    if (!strcmp (op, "$push") || !strcmp (op, "$addToSet"))
        return op_push (w, path, field, !strcmp (op, "$addToSet"), err);
    if (!strcmp (op, "$pull"))
        return op_pull (w, path, field, err);
    if (!strcmp (op, "$rename"))
        return op_rename (w, path, field, err);
    bson_set_error (err, 1, MEM_E_FAILED_TO_PARSE, "Unknown modifier: %s. Expected a valid update "
                    "modifier or pipeline-style update specified as an array", op);
    return false;
}

static bool
same_id (const bson_t *a, const bson_t *b)
{
    bson_iter_t x, y;
    bool hx = bson_iter_init_find (&x, a, "_id"), hy = bson_iter_init_find (&y, b, "_id");
    return hx == hy && (!hx || (bson_iter_type (&x) == bson_iter_type (&y) && !rm_value_compare (&x, &y)));
}

static bool
replace (const bson_t *doc, const bson_t *u, bson_t *out, bson_error_t *err)
{
    bson_iter_t id, f;
    bson_init (out);
    if (bson_iter_init_find (&id, doc, "_id"))
        bson_append_iter (out, "_id", 3, &id);
    else if (bson_iter_init_find (&id, u, "_id"))
        bson_append_iter (out, "_id", 3, &id);
    bson_iter_init (&f, u);
    while (bson_iter_next (&f))
        if (strcmp (bson_iter_key (&f), "_id"))
            bson_append_iter (out, NULL, 0, &f);
    if (bson_iter_init_find (&id, u, "_id") && !same_id (out, u)) {
        bson_destroy (out);
        bson_init (out);
        bson_set_error (err, 1, MEM_E_IMMUTABLE_FIELD,
                        "After applying the update, the (immutable) field '_id' was found to "
                        "have been altered");
        return false;
    }
    return true;
}

bool
mem_update_apply (const bson_t *doc, const bson_t *u, bool inserting, bson_t *out,
                  bson_error_t *err)
{
    bson_iter_t op, field;
    work_t w;
    bool ok = true;
    if (!bson_iter_init (&op, u) || !bson_iter_next (&op) || bson_iter_key (&op)[0] != '$')
        return replace (doc, u, out, err);
    rm_buf_init (&w.cur);
    rm_buf_init (&w.next);
    rm_buf_append (&w.cur, bson_get_data (doc), doc->len);
    bson_iter_init (&op, u);
    while (ok && bson_iter_next (&op)) {
        if (!BSON_ITER_HOLDS_DOCUMENT (&op)) {
            bson_set_error (err, 1, MEM_E_FAILED_TO_PARSE,
                            "Modifiers operate on fields but we found type %s instead",
                            rm_value_type_name (bson_iter_type (&op)));
            ok = false;
            break;
        }
        bson_iter_recurse (&op, &field);
        while (ok && bson_iter_next (&field))
            ok = apply_one (&w, bson_iter_key (&op), &field, inserting, err);
    }
    bson_init (out);
    if (ok) {
        bson_t res;
        bson_init_static (&res, w.cur.data, w.cur.len);
        bson_concat (out, &res);
        if (!same_id (doc, out) && !(inserting && !bson_has_field (doc, "_id"))) {
            bson_set_error (err, 1, MEM_E_IMMUTABLE_FIELD,
                            "Performing an update on the path '_id' would modify the immutable "
                            "field '_id'");
            ok = false;
        }
    }
    if (!ok && err->domain != 1) {
        err->domain = 1;
        if (!err->code)
            err->code = MEM_E_BAD_VALUE;
    }
    rm_buf_destroy (&w.cur);
    rm_buf_destroy (&w.next);
    return ok;
}

/* The filter's equality conditions, as the document an upsert inserts
 * starts from ({a: 1, "b.c": 2, d: {$eq: 3}}: {a: 1, b: {c: 2}, d: 3}). */
void
mem_update_seed (const bson_t *filter, bson_t *out)
{
    bson_iter_t f;
    work_t w;
    bson_error_t e;
    bson_t empty = BSON_INITIALIZER;
    rm_buf_init (&w.cur);
    rm_buf_init (&w.next);
    rm_buf_append (&w.cur, bson_get_data (&empty), empty.len);
    if (filter && bson_iter_init (&f, filter))
        while (bson_iter_next (&f)) {
            const char *k = bson_iter_key (&f);
            bson_iter_t sub;
            if (k[0] == '$')
                continue;
            if (BSON_ITER_HOLDS_DOCUMENT (&f) && bson_iter_recurse (&f, &sub) && bson_iter_next (&sub) &&
                bson_iter_key (&sub)[0] == '$') {
                if (!strcmp (bson_iter_key (&sub), "$eq"))
                    set_value (&w, k, bson_iter_value (&sub), &e);
                continue;
            }
            set_value (&w, k, bson_iter_value (&f), &e);
        }
    {
        bson_t res;
        bson_init_static (&res, w.cur.data, w.cur.len);
        bson_init (out);
        bson_concat (out, &res);
    }
    rm_buf_destroy (&w.cur);
    rm_buf_destroy (&w.next);
}
