/* Evaluating a compiled expression: constants, field paths with the
 * server's array traversal, variables, object and array expressions, and
 * operators through their rows.
 *
 * Field paths follow the aggregation rules (ExpressionFieldPath), not
 * $lookup's nor a query's: when a path meets an array before its last
 * component, the rest of the path is applied to each document in the
 * array and the value is the array of what was found ("$a.b" over
 * {a: [{b: 1}, {c: 2}, {b: 3}]} is [1, 3]); elements that are not
 * documents (inner arrays too) are skipped, as the server's
 * evaluatePathArray skips them. A
 * numeric component is a field name, never an array index. An array at the
 * end of the path is the value itself. */
#include <string.h>

#include "bsonwalk.h"
#include "expr_ctx.h"

/* The value of component k.. of path p in the document (data, len). */
static bool path_in_doc (rm_expr_ctx_t *cx, const uint8_t *data, uint32_t len, const rm_path_t *p,
                         size_t k, bson_value_t *out);

/* An array met with components k.. of the path to go: the values they
 * give in its document elements. Out of line, as every case that needs
 * an iterator: libbson's is aligned to 128 bytes, and a frame holding
 * one costs every path read that never meets it. */
static void path_in_value (rm_expr_ctx_t *cx, const bson_value_t *v, const rm_path_t *p, size_t k,
                           bson_value_t *out);

static __attribute__ ((noinline)) void
path_in_array (rm_expr_ctx_t *cx, const bson_value_t *v, const rm_path_t *p, size_t k, bson_value_t *out)
{
    rm_xbuild_t b;
    bson_iter_t it;
    rm_xbuild_begin (cx, &b, true);
    rm_xval_iter (v, &it);
    while (bson_iter_next (&it)) {
        const bson_value_t *ev = bson_iter_value (&it);
        bson_value_t got;
        bson_value_t elem = *ev;
        if (elem.value_type != BSON_TYPE_DOCUMENT)
            continue;
        path_in_value (cx, &elem, p, k, &got);
        if (!rm_xval_missing (&got))
            rm_xbuild_push (&b, &got);
    }
    rm_xbuild_end (&b, out);
}

static void
path_in_value (rm_expr_ctx_t *cx, const bson_value_t *v, const rm_path_t *p, size_t k, bson_value_t *out)
{
    if (v->value_type == BSON_TYPE_DOCUMENT)
        path_in_doc (cx, v->value.v_doc.data, v->value.v_doc.data_len, p, k, out);
    else if (v->value_type == BSON_TYPE_ARRAY)
        path_in_array (cx, v, p, k, out);
    else
        rm_xset_missing (out);
}

/* A field of a document that is not the held one, by libbson. */
static __attribute__ ((noinline)) bool
doc_field_value (const uint8_t *data, uint32_t len, const char *name, uint32_t nlen, bson_value_t *out)
{
    bson_iter_t it;
    if (!rm_doc_field (data, len, name, nlen, &it))
        return false;
    *out = *bson_iter_value (&it);
    return true;
}

/* The held field at f of a type held_value does not decode itself. */
static __attribute__ ((noinline)) void
held_value_other (const rm_expr_ctx_t *cx, const rm_xfield_t *f, bson_value_t *out)
{
    bson_iter_t it;
    bson_iter_init_from_data_at_offset (&it, cx->held, cx->held_len, f->start, f->klen);
    *out = *bson_iter_value (&it);
}

/* The value of the held document's field f, read from its bytes: the
 * common types directly (an iterator's set-up was a fifth of a path's
 * read), the rest through libbson. The document was checked when read. */
static void
held_value (const rm_expr_ctx_t *cx, const rm_xfield_t *f, bson_value_t *out)
{
    const uint8_t *v = cx->held + f->start + f->klen + 2;
    uint64_t u;

    out->value_type = (bson_type_t) cx->held[f->start];
    switch (out->value_type) {
    case BSON_TYPE_DOUBLE:
        memcpy (&u, v, 8);
        u = BSON_UINT64_FROM_LE (u);
        memcpy (&out->value.v_double, &u, 8);
        return;
    case BSON_TYPE_UTF8:
        out->value.v_utf8.len = rm_walk_le32 (v) - 1;
        out->value.v_utf8.str = (char *) v + 4;
        return;
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY:
        out->value.v_doc.data_len = rm_walk_le32 (v);
        out->value.v_doc.data = (uint8_t *) v;
        return;
    case BSON_TYPE_BOOL:
        out->value.v_bool = v[0] != 0;
        return;
    case BSON_TYPE_NULL:
        return;
    case BSON_TYPE_INT32:
        out->value.v_int32 = (int32_t) rm_walk_le32 (v);
        return;
    case BSON_TYPE_INT64:
    case BSON_TYPE_DATE_TIME:
        memcpy (&u, v, 8);
        u = BSON_UINT64_FROM_LE (u);
        if (out->value_type == BSON_TYPE_INT64)
            out->value.v_int64 = (int64_t) u;
        else
            out->value.v_datetime = (int64_t) u;
        return;
    case BSON_TYPE_OID:
        memcpy (out->value.v_oid.bytes, v, 12);
        return;
    default:
        held_value_other (cx, f, out);
        return;
    }
}

int
rm_expr_ctx_held_value (rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len, const char *name,
                        uint32_t name_len, bson_value_t *out)
{
    const rm_xfield_t *f;
    if (!cx || doc != cx->held || len != cx->held_len)
        return -1;
    f = rm_xheld_find (cx, name, name_len);
    if (!f)
        return 0;
    held_value (cx, f, out);
    return 1;
}

static bool
path_in_doc (rm_expr_ctx_t *cx, const uint8_t *data, uint32_t len, const rm_path_t *p, size_t k,
             bson_value_t *out)
{
    bson_value_t here;
    if (cx && data == cx->held && len == cx->held_len) {
        const rm_xfield_t *f = rm_xheld_find (cx, p->parts[k], (uint32_t) p->lens[k]);
        if (!f) {
            rm_xset_missing (out);
            return true;
        }
        held_value (cx, f, &here);
    } else if (!doc_field_value (data, len, p->parts[k], p->lens[k], &here)) {
        rm_xset_missing (out);
        return true;
    }
    if (k + 1 == p->n) {
        *out = here;
        return true;
    }
    path_in_value (cx, &here, p, k + 1, out);
    return true;
}

static void
root_value (rm_expr_ctx_t *cx, bson_value_t *out)
{
    out->value_type = BSON_TYPE_DOCUMENT;
    out->value.v_doc.data = (uint8_t *) cx->root;
    out->value.v_doc.data_len = cx->root_len;
}

/* A variable, with its path if it has one. */
static __attribute__ ((noinline)) void
eval_var (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out)
{
    bson_value_t base;

    switch (e->var) {
    case RM_XVAR_ROOT:
        root_value (cx, &base);
        break;
    case RM_XVAR_CURRENT:
        base = cx->current;
        break;
    case RM_XVAR_REMOVE:
        rm_xset_missing (out);
        return;
    case RM_XVAR_NOW:
        rm_xset_date (&base, cx->now_ms);
        break;
    default:
        base = cx->vars[e->var];
        break;
    }
    if (!e->has_path)
        *out = base;
    else if (base.value_type == BSON_TYPE_DOCUMENT || base.value_type == BSON_TYPE_ARRAY)
        path_in_value (cx, &base, &e->path, 0, out);
    else
        rm_xset_missing (out);
}

/* An object or array expression: its members evaluated and built. */
static __attribute__ ((noinline)) bool
eval_members (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    rm_xbuild_t b;

    rm_xbuild_begin (cx, &b, e->kind == RM_X_ARRAY);
    for (size_t i = 0; i < e->n; i++) {
        bson_value_t v;
        if (!rm_xeval (cx, e->args[i], &v, err)) {
            rm_xbuild_abort (&b);
            return false;
        }
        if (e->kind == RM_X_ARRAY)
            rm_xbuild_push (&b, &v);
        else
            rm_xbuild_field (&b, e->names[i], strlen (e->names[i]), &v);
    }
    rm_xbuild_end (&b, out);
    return rm_xmem_check (cx, NULL, err);
}

/* The cases every document meets (constants, paths, operators) here, the
 * rest in the functions above: this one's frame stays small. */
bool
rm_xeval (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err)
{
    if (!e) {
        rm_xset_missing (out);
        return true;
    }
    switch (e->kind) {
    case RM_X_CONST:
        *out = e->konst;
        return true;
    case RM_X_PATH:
        /* A top-level field of the held document, the common read: its
         * value straight from the held walk. */
        if (e->path.n == 1 && cx->current.value_type == BSON_TYPE_DOCUMENT &&
            cx->current.value.v_doc.data == cx->held && cx->current.value.v_doc.data_len == cx->held_len) {
            const rm_xfield_t *f = rm_xheld_find (cx, e->path.parts[0], e->path.lens[0]);
            if (f)
                held_value (cx, f, out);
            else
                rm_xset_missing (out);
            return true;
        }
        path_in_value (cx, &cx->current, &e->path, 0, out);
        return true;
    case RM_X_VAR:
        eval_var (cx, e, out);
        return true;
    case RM_X_OBJECT:
    case RM_X_ARRAY:
        return eval_members (cx, e, out, err);
    case RM_X_OP:
        /* A signal stops a long evaluation ($reduce over a large array)
         * within the operator it is in, not at the next document. */
        if (rm_interrupted) {
            rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
            return false;
        }
        if (++cx->depth > 4 * RM_X_MAX_DEPTH) {
            cx->depth--;
            return rm_xfail (err, e, "evaluation nested too deeply");
        }
        bool ok = e->op->eval (cx, e, out, err);
        cx->depth--;
        /* The operator that took the document past its bound says so
         * (those around it see the error; one that would swallow it
         * still meets the flag on its own return). */
        /* The flag read here: a call per operator for a bound seldom
         * crossed was a tenth of the dispatch. */
        return ok && (!cx->over || rm_xmem_check (cx, e, err));
    }
    return false;
}

bool
rm_xeval_args (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *vals, bson_error_t *err)
{
    for (size_t i = 0; i < e->n; i++)
        if (!rm_xeval (cx, e->args[i], &vals[i], err))
            return false;
    return true;
}

bool
rm_xeval_args_n (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *vals, size_t n,
                 bson_error_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (!rm_xeval (cx, e->args[i], &vals[i], err))
            return false;
    return true;
}

bson_value_t *
rm_xvals (rm_expr_ctx_t *cx, size_t n)
{
    return rm_xalloc (cx, (n ? n : 1) * sizeof (bson_value_t));
}

void
rm_xvar_set (rm_expr_ctx_t *cx, int slot, const bson_value_t *v)
{
    if (slot == RM_XVAR_CURRENT)
        cx->current = *v;
    else if (slot >= 0 && slot < RM_X_MAX_VARS)
        cx->vars[slot] = *v;
}

const bson_value_t *
rm_xcurrent (rm_expr_ctx_t *cx)
{
    return &cx->current;
}

int64_t
rm_xnow (rm_expr_ctx_t *cx)
{
    return cx->now_ms;
}

bool
rm_xerr_v (bson_error_t *err, rm_errcode_t code, const rm_expr_t *e, const char *fmt, va_list ap)
{
    char msg[400];
    vsnprintf (msg, sizeof msg, fmt, ap);
    if (e && e->op)
        rm_error_set (err, code, "%s: %s", e->op->name, msg);
    else
        rm_error_set (err, code, "%s", msg);
    return false;
}

bool
rm_xfail (bson_error_t *err, const rm_expr_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    rm_xerr_v (err, RM_ERR_DATA, e, fmt, ap);
    va_end (ap);
    return false;
}

bool
rm_expr_eval (rm_expr_ctx_t *cx, const rm_expr_t *e, const uint8_t *doc, uint32_t len,
              bson_value_t *out, bson_error_t *err)
{
    cx->root = doc;
    cx->root_len = len;
    root_value (cx, &cx->current);
    cx->depth = 0;
    return rm_xeval (cx, e, out, err) && (!cx->over || rm_xmem_check (cx, NULL, err));
}
