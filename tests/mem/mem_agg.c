/* aggregate's pipeline over a collection's documents: $match, $sort,
 * $limit, $skip, $project, $addFields/$set, $replaceRoot/$replaceWith,
 * $unwind, $group ($sum, $count, $avg, $min, $max, $first, $last,
 * $push, $addToSet), $count, $collStats {count}. Expressions are the
 * project's own (remodel/expr.h). Any other stage is refused with
 * MongoDB's 40324, as a server that lacks it answers. */
#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "remodel/docpath.h"
#include "remodel/expr.h"
#include "remodel/value.h"

static rm_expr_ctx_t *
cx (void)
{
    static rm_expr_ctx_t *one;
    if (!one)
        one = rm_expr_ctx_new (0);
    rm_expr_ctx_reset (one);
    return one;
}

static void
swap_list (mem_list_t *docs, mem_list_t *next)
{
    mem_list_free (docs, true);
    *docs = *next;
    memset (next, 0, sizeof *next);
}

static bool
st_match (const bson_t *arg, mem_list_t *docs, bson_error_t *err)
{
    mem_list_t next = {0};
    for (size_t i = 0; i < docs->n; i++) {
        bool yes;
        if (!mem_matches (arg, docs->d[i], &yes, err)) {
            mem_list_free (&next, false);
            return false;
        }
        if (yes) {
            mem_list_push (&next, docs->d[i]);
            docs->d[i] = NULL;
        }
    }
    for (size_t i = 0; i < docs->n; i++)
        if (docs->d[i])
            bson_destroy (docs->d[i]);
    docs->n = 0;
    swap_list (docs, &next);
    return true;
}

/* Evaluates expression e over doc, appending it as key to out. */
static bool
eval_into (const rm_expr_t *e, const bson_t *doc, bson_t *out, const char *key, bson_error_t *err)
{
    bson_value_t v;
    rm_expr_ctx_t *c = cx ();
    if (!rm_expr_eval (c, e, bson_get_data (doc), doc->len, &v, err))
        return false;
    rm_expr_append (out, key, -1, &v);
    return true;
}

static bool
plain_projection (const bson_t *spec)
{
    bson_iter_t it;
    bson_iter_init (&it, spec);
    while (bson_iter_next (&it))
        if (!BSON_ITER_HOLDS_NUMBER (&it) && !BSON_ITER_HOLDS_BOOL (&it))
            return false;
    return true;
}

/* $project: included fields in the document's order, then computed
 * ones in the stage's. */
static bool
st_project (const bson_t *spec, mem_list_t *docs, bson_error_t *err)
{
    bson_t incl = BSON_INITIALIZER;
    bson_iter_t it;
    bool plain = plain_projection (spec);
    if (!plain) {
        bson_iter_init (&it, spec);
        while (bson_iter_next (&it))
            if (BSON_ITER_HOLDS_NUMBER (&it) || BSON_ITER_HOLDS_BOOL (&it))
                bson_append_iter (&incl, NULL, 0, &it);
        if (bson_empty (&incl))
            BSON_APPEND_INT32 (&incl, "_id", 1);
    }
    for (size_t i = 0; i < docs->n; i++) {
        bson_t *out = bson_malloc (sizeof *out), p;
        if (!mem_project (docs->d[i], plain ? spec : &incl, &p, err)) {
            bson_destroy (&p);
            bson_free (out);
            bson_destroy (&incl);
            return false;
        }
        bson_free (out);
        out = bson_copy (&p);
        bson_destroy (&p);
        if (!plain) {
            bson_iter_init (&it, spec);
            while (bson_iter_next (&it)) {
                rm_expr_t *e;
                if (BSON_ITER_HOLDS_NUMBER (&it) || BSON_ITER_HOLDS_BOOL (&it))
                    continue;
                if (!(e = rm_expr_parse (&it, err)) ||
                    !eval_into (e, docs->d[i], out, bson_iter_key (&it), err)) {
                    rm_expr_destroy (e);
                    bson_destroy (out);
                    bson_destroy (&incl);
                    return false;
                }
                rm_expr_destroy (e);
            }
        }
        bson_destroy (docs->d[i]);
        docs->d[i] = out;
    }
    bson_destroy (&incl);
    return true;
}

static bool
st_add_fields (const bson_iter_t *arg, mem_list_t *docs, bson_error_t *err)
{
    rm_expr_set_t *s = rm_expr_set_parse (arg, err);
    rm_buf_t a, b;
    bool ok = s != NULL;
    rm_buf_init (&a);
    rm_buf_init (&b);
    for (size_t i = 0; ok && i < docs->n; i++) {
        rm_buf_reset (&a);
        rm_buf_append (&a, bson_get_data (docs->d[i]), docs->d[i]->len);
        for (size_t k = 0; ok && k < rm_expr_set_count (s); k++) {
            bson_value_t v;
            rm_raw_value_t raw;
            rm_path_t p;
            rm_expr_ctx_t *c = cx ();
            rm_buf_t t;
            ok = rm_expr_eval (c, rm_expr_set_expr (s, k), bson_get_data (docs->d[i]),
                               docs->d[i]->len, &v, err) &&
                 rm_path_parse (&p, rm_expr_set_path (s, k), err);
            if (!ok)
                break;
            rm_expr_raw (c, &v, &raw);
            ok = rm_doc_set (&b, a.data, a.len, &p, &raw, err);
            rm_path_destroy (&p);
            t = a;
            a = b;
            b = t;
        }
        if (ok) {
            bson_t r;
            bson_init_static (&r, a.data, a.len);
            bson_destroy (docs->d[i]);
            docs->d[i] = bson_copy (&r);
        }
    }
    rm_buf_destroy (&a);
    rm_buf_destroy (&b);
    rm_expr_set_destroy (s);
    return ok;
}

static bool
st_replace_root (const bson_iter_t *arg, bool with, mem_list_t *docs, bson_error_t *err)
{
    bson_iter_t root;
    rm_expr_t *e;
    if (with) {
        root = *arg;
    } else if (!BSON_ITER_HOLDS_DOCUMENT (arg) || !bson_iter_recurse (arg, &root) ||
               !bson_iter_find (&root, "newRoot")) {
        bson_set_error (err, 1, 40231, "no newRoot specified for the $replaceRoot stage");
        return false;
    }
    if (!(e = rm_expr_parse (&root, err)))
        return false;
    for (size_t i = 0; i < docs->n; i++) {
        bson_value_t v;
        if (!rm_expr_eval (cx (), e, bson_get_data (docs->d[i]), docs->d[i]->len, &v, err))
            break;
        if (v.value_type != BSON_TYPE_DOCUMENT) {
            bson_set_error (err, 1, 40228, "'newRoot' expression must evaluate to an object");
            break;
        }
        bson_destroy (docs->d[i]);
        docs->d[i] = bson_new_from_data (v.value.v_doc.data, v.value.v_doc.data_len);
    }
    rm_expr_destroy (e);
    return err->code == 0;
}

static bool
st_unwind (const bson_iter_t *arg, mem_list_t *docs, bson_error_t *err)
{
    const char *path = NULL;
    bool keep = false;
    mem_list_t next = {0};
    rm_path_t p;
    if (BSON_ITER_HOLDS_UTF8 (arg)) {
        path = bson_iter_utf8 (arg, NULL);
    } else if (BSON_ITER_HOLDS_DOCUMENT (arg)) {
        bson_iter_t f;
        bson_iter_recurse (arg, &f);
        while (bson_iter_next (&f)) {
            if (!strcmp (bson_iter_key (&f), "path") && BSON_ITER_HOLDS_UTF8 (&f))
                path = bson_iter_utf8 (&f, NULL);
            else if (!strcmp (bson_iter_key (&f), "preserveNullAndEmptyArrays"))
                keep = bson_iter_as_bool (&f);
        }
    }
    if (!path || path[0] != '$' || !rm_path_parse (&p, path + 1, err)) {
        bson_set_error (err, 1, 28818, "path option to $unwind stage should be prefixed with a '$'");
        return false;
    }
    for (size_t i = 0; i < docs->n; i++) {
        bson_iter_t v, el;
        bool has = rm_path_get (bson_get_data (docs->d[i]), docs->d[i]->len, &p, &v);
        bool any = false;
        if (has && BSON_ITER_HOLDS_ARRAY (&v)) {
            rm_buf_t out;
            rm_buf_init (&out);
            bson_iter_recurse (&v, &el);
            while (bson_iter_next (&el)) {
                rm_raw_value_t raw;
                bson_t r;
                rm_raw_value_of (&el, &raw);
                if (!rm_doc_set (&out, bson_get_data (docs->d[i]), docs->d[i]->len, &p, &raw, err))
                    break;
                bson_init_static (&r, out.data, out.len);
                mem_list_push (&next, bson_copy (&r));
                any = true;
            }
            rm_buf_destroy (&out);
            if (!any && keep)
                mem_list_push (&next, bson_copy (docs->d[i]));
        } else if ((has && !BSON_ITER_HOLDS_NULL (&v)) || keep) {
            mem_list_push (&next, bson_copy (docs->d[i]));
        }
    }
    rm_path_destroy (&p);
    swap_list (docs, &next);
    return err->code == 0;
}

static bool
st_count (const bson_iter_t *arg, mem_list_t *docs, bson_error_t *err)
{
    size_t n = docs->n;
    mem_list_t next = {0};
    if (!BSON_ITER_HOLDS_UTF8 (arg)) {
        bson_set_error (err, 1, 40156, "the count field must be a non-empty string");
        return false;
    }
    if (n) {
        bson_t *d = bson_new ();
        BSON_APPEND_INT32 (d, bson_iter_utf8 (arg, NULL), (int32_t) n);
        mem_list_push (&next, d);
    }
    swap_list (docs, &next);
    return true;
}

bool mem_agg_group (const bson_iter_t *arg, mem_list_t *docs, bson_error_t *err);

static bool
stage (mem_coll_t *c, const char *db, const char *coll, bson_iter_t *st, bool first,
       mem_list_t *docs, bson_error_t *err)
{
    bson_iter_t arg;
    const char *name;
    bson_t sub;
    uint32_t len;
    const uint8_t *data;
    if (!BSON_ITER_HOLDS_DOCUMENT (st) || !bson_iter_recurse (st, &arg) || !bson_iter_next (&arg)) {
        bson_set_error (err, 1, 40323, "A pipeline stage specification object must contain exactly one field.");
        return false;
    }
    name = bson_iter_key (&arg);
    if (BSON_ITER_HOLDS_DOCUMENT (&arg)) {
        bson_iter_document (&arg, &len, &data);
        bson_init_static (&sub, data, len);
    } else {
        bson_init (&sub);
    }
    if (!strcmp (name, "$match"))
        return st_match (&sub, docs, err);
    if (!strcmp (name, "$sort")) {
        mem_sort (docs->d, docs->n, &sub);
        return true;
    }
    if (!strcmp (name, "$limit") || !strcmp (name, "$skip")) {
        int64_t k = bson_iter_as_int64 (&arg);
        size_t from = !strcmp (name, "$skip") ? (size_t) k : 0, to = !strcmp (name, "$skip") ? docs->n : (size_t) k;
        mem_list_t next = {0};
        for (size_t i = 0; i < docs->n; i++)
            if (i >= from && i < to)
                mem_list_push (&next, bson_copy (docs->d[i]));
        swap_list (docs, &next);
        return true;
    }
    if (!strcmp (name, "$project"))
        return st_project (&sub, docs, err);
    if (!strcmp (name, "$addFields") || !strcmp (name, "$set"))
        return st_add_fields (&arg, docs, err);
    if (!strcmp (name, "$replaceRoot") || !strcmp (name, "$replaceWith"))
        return st_replace_root (&arg, !strcmp (name, "$replaceWith"), docs, err);
    if (!strcmp (name, "$unwind"))
        return st_unwind (&arg, docs, err);
    if (!strcmp (name, "$group"))
        return mem_agg_group (&arg, docs, err);
    if (!strcmp (name, "$count"))
        return st_count (&arg, docs, err);
    if (!strcmp (name, "$collStats") && first) {
        mem_list_t next = {0};
        bson_t *d = bson_new ();
        char ns[400];
        snprintf (ns, sizeof ns, "%s.%s", db, coll);
        BSON_APPEND_UTF8 (d, "ns", ns);
        if (bson_has_field (&sub, "count"))
            BSON_APPEND_INT64 (d, "count", c ? (int64_t) c->live : 0);
        mem_list_push (&next, d);
        swap_list (docs, &next);
        return true;
    }
    bson_set_error (err, 1, MEM_E_BAD_STAGE, "Unrecognized pipeline stage name: '%s'", name);
    return false;
}

bool
mem_aggregate (mem_coll_t *c, const char *db, const char *coll, const bson_t *pipeline,
               mem_list_t *out, bson_error_t *err)
{
    bson_iter_t st;
    bool first = true;
    if (c)
        for (size_t i = 0; i < c->n; i++)
            if (c->docs[i])
                mem_list_push (out, bson_copy (c->docs[i]));
    bson_iter_init (&st, pipeline);
    while (bson_iter_next (&st)) {
        if (!stage (c, db, coll, &st, first, out, err)) {
            if (!err->code)
                err->code = MEM_E_BAD_VALUE;
            err->domain = 1;
            return false;
        }
        first = false;
    }
    return true;
}
