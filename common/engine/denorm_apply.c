/* Finding references and writing the copies for denormalize (denorm.h). */
#include <string.h>

#include "bsonwalk.h"
#include "denorm.h"
#include "docbuf.h"

typedef enum { SHAPE_NONE, SHAPE_SCALAR, SHAPE_ARRAY, SHAPE_ELEMENTS } shape_t;

struct rm_denorm_apply {
    const rm_denorm_t *d;
    rm_engine_t *e;
    const rm_step_t *s;
    rm_expr_ctx_t *cx;       /* its filter's and match's: one per run */
    rm_step_run_t *run;      /* probes and counts (NULL: none) */
    rm_path_t prefix;        /* localField without its last part (n == 0: top) */
    const char *last;        /* localField's last part */
    rm_path_t *target_paths; /* prefix + target, for the scalar shape */
    rm_buf_t arr, one;
    rm_buf_t buf[2];
    uint8_t *done;           /* per target: written in this element */
    rm_expr_ctx_t *vcx;      /* the fields' expressions' (NULL: none) */
    const char *in_name, *from_name;
};

/* The key of the values that stand for an expression's failure: no
 * target starts with "$" (step_denorm.c). */
#define ERROR_KEY "$error"

rm_denorm_apply_t *
rm_denorm_apply_new (rm_engine_t *e, const rm_step_t *s, rm_step_run_t *run)
{
    const rm_denorm_t *d = &s->u.denorm;
    rm_denorm_apply_t *a = bson_malloc0 (sizeof *a);
    char *prefix = bson_strdup (d->local.text);
    char *dot = strrchr (prefix, '.');
    a->d = d;
    a->run = run;
    a->e = e;
    a->s = s;
    if (s->filter || s->match)
        a->cx = rm_expr_ctx_new (rm_engine_now (e));
    if (d->n_exprs)
        a->vcx = rm_expr_ctx_new (rm_engine_now (e));
    a->in_name = rm_engine_find (e, &d->in)->stats->name;
    a->from_name = rm_engine_find (e, &d->from)->stats->name;
    a->last = d->local.parts[d->local.n - 1];
    if (dot) {
        *dot = '\0';
        rm_path_parse (&a->prefix, prefix, NULL);
    }
    a->target_paths = bson_malloc0 (d->n * sizeof *a->target_paths);
    a->done = bson_malloc0 (d->n);
    for (size_t i = 0; i < d->n; i++) {
        char *t = dot ? bson_strdup_printf ("%s.%s", prefix, d->targets[i]) : bson_strdup (d->targets[i]);
        rm_path_parse (&a->target_paths[i], t, NULL);
        bson_free (t);
    }
    bson_free (prefix);
    rm_buf_init (&a->buf[0]);
    rm_buf_init (&a->buf[1]);
    return a;
}

void
rm_denorm_apply_destroy (rm_denorm_apply_t *a)
{
    if (!a)
        return;
    rm_expr_ctx_destroy (a->cx);
    rm_expr_ctx_destroy (a->vcx);
    if (a->prefix.n)
        rm_path_destroy (&a->prefix);
    for (size_t i = 0; i < a->d->n; i++)
        rm_path_destroy (&a->target_paths[i]);
    bson_free (a->target_paths);
    bson_free (a->done);
    rm_buf_destroy (&a->arr);
    rm_buf_destroy (&a->one);
    rm_buf_destroy (&a->buf[0]);
    rm_buf_destroy (&a->buf[1]);
    bson_free (a);
}

static shape_t
shape_of (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len, bson_iter_t *it)
{
    if (a->prefix.n && rm_path_get (doc, len, &a->prefix, it) && BSON_ITER_HOLDS_ARRAY (it))
        return SHAPE_ELEMENTS;
    if (!rm_path_get (doc, len, &a->d->local, it) || BSON_ITER_HOLDS_NULL (it))
        return SHAPE_NONE;
    return BSON_ITER_HOLDS_ARRAY (it) ? SHAPE_ARRAY : SHAPE_SCALAR;
}

/* The reference inside an array element, if any. */
static bool
element_ref (rm_denorm_apply_t *a, shape_t shape, const bson_iter_t *elem, bson_iter_t *ref)
{
    bson_iter_t sub;
    if (shape == SHAPE_ARRAY && !BSON_ITER_HOLDS_DOCUMENT (elem)) {
        *ref = *elem;
        return true;
    }
    if (!BSON_ITER_HOLDS_DOCUMENT (elem) || !bson_iter_recurse (elem, &sub))
        return false;
    return bson_iter_find (&sub, shape == SHAPE_ARRAY ? "id" : a->last) && (*ref = sub, true);
}

static void
add_ref (rm_refs_t *refs, const bson_iter_t *ref, rm_buf_t *one)
{
    uint32_t l;
    if (!ref) {
        l = RM_DENORM_NO_REF;
        rm_buf_append (&refs->keys, &l, 4);
    } else {
        rm_buf_reset (one);
        rm_key_append (one, ref);
        l = (uint32_t) one->len;
        rm_buf_append (&refs->keys, &l, 4);
        rm_buf_append (&refs->keys, one->data, one->len);
    }
    refs->n++;
}

void
rm_denorm_refs (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len, rm_refs_t *refs)
{
    bson_iter_t it, elem, ref;
    shape_t shape = shape_of (a, doc, len, &it);

    rm_buf_reset (&refs->keys);
    refs->n = 0;
    if (shape == SHAPE_SCALAR) {
        add_ref (refs, &it, &a->one);
    } else if (shape != SHAPE_NONE) {
        bson_iter_recurse (&it, &elem);
        while (bson_iter_next (&elem))
            add_ref (refs, element_ref (a, shape, &elem, &ref) ? &ref : NULL, &a->one);
    }
}

bool
rm_denorm_take (rm_denorm_apply_t *a, bool again, const char *ns_name, const uint8_t *doc,
                uint32_t len, bool *take, bson_error_t *err)
{
    bson_error_t why;
    if (again && !rm_step_select (NULL, a->s, false, a->cx, ns_name, doc, len, take, &why))
        *take = false; /* it failed the first time, and check --against took that */
    else if (!again && !rm_step_select (a->e, a->s, false, a->cx, ns_name, doc, len, take, err))
        return false;
    if (!*take && a->run && a->run->n_probes)
        rm_probe_doc (&a->run->probes[0], doc, len); /* localField, as rm_denorm_apply */
    return true;
}

bool
rm_denorm_take_from (rm_denorm_apply_t *a, const char *ns_name, const uint8_t *doc, uint32_t len,
                     bool *take, bson_error_t *err)
{
    return rm_step_select (a->e, a->s, true, a->cx, ns_name, doc, len, take, err);
}

void
rm_denorm_probe_from (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len)
{
    /* probes 1 on: foreignField, then the copied fields (engine_checks.c) */
    for (size_t i = 1; a->run && i < a->run->n_probes; i++)
        rm_probe_doc (&a->run->probes[i], doc, len);
}

/* One reference looked up, for the counts. */
static void
looked_up (rm_denorm_apply_t *a, const uint8_t *v)
{
    if (!a->run)
        return;
    a->run->lookups++;
    a->run->missed += v == NULL;
}

void
rm_denorm_values (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len, rm_buf_t *out)
{
    const rm_denorm_t *d = a->d;
    size_t start;
    rm_buf_reset (out);
    start = rm_docbuf_begin (out);
    if (a->vcx)
        rm_expr_ctx_reset (a->vcx);
    for (size_t i = 0; i < d->n; i++) {
        bson_iter_t v;
        bson_value_t val;
        rm_raw_value_t raw;
        bson_error_t err;
        if (!d->exprs[i]) {
            if (rm_path_get (doc, len, &d->sources[i], &v))
                rm_docbuf_copy_as (out, d->targets[i], &v);
            continue;
        }
        if (!rm_expr_eval (a->vcx, d->exprs[i], doc, len, &val, &err)) {
            bson_t why = BSON_INITIALIZER;
            rm_error_prefix (&err, "field \"%s\"", d->targets[i]);
            rm_doc_error (&err, a->from_name, "document", doc, len);
            BSON_APPEND_UTF8 (&why, ERROR_KEY, err.message);
            rm_buf_reset (out);
            rm_buf_append (out, bson_get_data (&why), why.len);
            bson_destroy (&why);
            return;
        }
        /* A missing result copies nothing, as a path finding nothing. */
        if (val.value_type == BSON_TYPE_EOD)
            continue;
        rm_expr_raw (a->vcx, &val, &raw);
        rm_docbuf_key (out, (bson_type_t) raw.type, d->targets[i]);
        rm_buf_append (out, raw.data, raw.len);
    }
    rm_docbuf_end (out, start);
}

/* The failure values found by a reference hold, if any (rm_denorm_values):
 * its message into err. */
static bool
values_failed (const uint8_t *values, bson_error_t *err)
{
    bson_iter_t it;
    if (!values || !rm_doc_field (values, rm_walk_le32 (values), ERROR_KEY, sizeof ERROR_KEY - 1,
                                  &it) || !BSON_ITER_HOLDS_UTF8 (&it))
        return false;
    rm_error_set (err, RM_ERR_DATA, "%s", bson_iter_utf8 (&it, NULL));
    return true;
}

/* Whether an expression failed on a document of `from` that one of doc's
 * references (n_slots of them) finds: err says so; where the engine
 * collects failures (check --against), *keep is set instead and doc
 * stays as it was. */
static bool
refs_failed (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len, const uint8_t *const *values,
             size_t n_slots, bool *keep, bson_error_t *err)
{
    bson_error_t why;
    *keep = false;
    for (size_t i = 0; a->vcx && i < n_slots; i++)
        if (values_failed (values[i], err)) {
            why = *err;
            rm_doc_error (&why, a->in_name, "document", doc, len);
            *keep = rm_engine_doc_error (a->e, a->s, &why);
            return true;
        }
    return false;
}

static bool
missing (rm_denorm_apply_t *a, const bson_iter_t *ref, bson_error_t *err)
{
    bson_t tmp;
    char *json;
    bson_init (&tmp);
    bson_append_iter (&tmp, "ref", 3, ref);
    json = bson_as_relaxed_extended_json (&tmp, NULL);
    rm_error_set (err, RM_ERR_FORMAT, "no document of %s has %s equal to %s (onMissing \"error\")",
                  a->d->from.text, a->d->foreign.text, json ? json : "?");
    bson_free (json);
    bson_destroy (&tmp);
    return false;
}

/* Target i's copy in values, the copies kept for one document of `from`
 * ({target: value, ...}): false when that document lacked the field. */
static bool
copied_value (const rm_denorm_t *d, const uint8_t *values, size_t i, bson_iter_t *it)
{
    return rm_doc_field (values, rm_walk_le32 (values), d->targets[i], strlen (d->targets[i]), it);
}

/* Writes target i's copy (or null when nothing matched) to b; false when
 * the matched document has no such source field. */
static bool
put_copy (rm_denorm_apply_t *a, rm_buf_t *b, const uint8_t *values, size_t i)
{
    bson_iter_t it;
    if (!values) {
        rm_docbuf_key (b, BSON_TYPE_NULL, a->d->targets[i]);
        return true;
    }
    if (!copied_value (a->d, values, i, &it))
        return false;
    rm_docbuf_copy (b, &it);
    return true;
}

static size_t
target_index (const rm_denorm_t *d, const char *key)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp (d->targets[i], key))
            return i;
    return SIZE_MAX;
}

/* The new array for the array and in-elements shapes, into a->arr. */
static bool
build_array (rm_denorm_apply_t *a, shape_t shape, const bson_iter_t *arr,
             const uint8_t *const *values, bson_error_t *err)
{
    const rm_denorm_t *d = a->d;
    bson_iter_t elem, ref;
    size_t start = (rm_buf_reset (&a->arr), rm_docbuf_begin (&a->arr));
    uint32_t i = 0;

    bson_iter_recurse (arr, &elem);
    for (; bson_iter_next (&elem); i++) {
        char key[16];
        const uint8_t *v = values[i];
        bool has_ref = element_ref (a, shape, &elem, &ref);
        size_t es;
        bson_iter_t f;

        snprintf (key, sizeof key, "%u", i);
        if (has_ref)
            looked_up (a, v);
        if (!has_ref || (!v && d->on_missing == RM_MISSING_KEEP)) {
            rm_docbuf_copy_as (&a->arr, key, &elem); /* left as it is */
            continue;
        }
        if (!v && d->on_missing == RM_MISSING_ERROR)
            return missing (a, &ref, err);
        rm_docbuf_key (&a->arr, BSON_TYPE_DOCUMENT, key);
        es = rm_docbuf_begin (&a->arr);
        memset (a->done, 0, d->n);
        if (BSON_ITER_HOLDS_DOCUMENT (&elem)) {
            /* Its own fields stay where they are; old copies are refreshed
             * where they stand (kept when the source lacks the field). */
            bson_iter_recurse (&elem, &f);
            while (bson_iter_next (&f)) {
                size_t t = target_index (d, bson_iter_key (&f));
                if (t == SIZE_MAX || !put_copy (a, &a->arr, v, t))
                    rm_docbuf_copy (&a->arr, &f);
                if (t != SIZE_MAX)
                    a->done[t] = 1;
            }
        } else {
            rm_docbuf_copy_as (&a->arr, "id", &elem);
        }
        for (size_t t = 0; t < d->n; t++)
            if (!a->done[t])
                put_copy (a, &a->arr, v, t);
        rm_docbuf_end (&a->arr, es);
    }
    rm_docbuf_end (&a->arr, start);
    return true;
}

static bool denorm_apply (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len,
                          const uint8_t *const *values, const uint8_t **out, size_t *out_len,
                          bson_error_t *err);

/* The copied fields may nest: the result no deeper than MongoDB stores
 * (the callers name the document). */
bool
rm_denorm_apply (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len,
                 const uint8_t *const *values, const uint8_t **out, size_t *out_len,
                 bson_error_t *err)
{
    return denorm_apply (a, doc, len, values, out, out_len, err) &&
           !rm_engine_too_deep (doc, len, *out, *out_len, err);
}

static bool
denorm_apply (rm_denorm_apply_t *a, const uint8_t *doc, uint32_t len,
              const uint8_t *const *values, const uint8_t **out, size_t *out_len,
              bson_error_t *err)
{
    const rm_denorm_t *d = a->d;
    bson_iter_t it;
    shape_t shape = shape_of (a, doc, len, &it);
    const uint8_t *cur = doc;
    size_t cur_len = len;

    *out = doc;
    *out_len = len;
    if (a->run && a->run->n_probes)
        rm_probe_doc (&a->run->probes[0], doc, len); /* localField */
    if (shape == SHAPE_NONE)
        return true;
    if (a->vcx) {
        size_t n_slots = 1;
        bool keep;
        if (shape != SHAPE_SCALAR) {
            bson_iter_t elem;
            n_slots = 0;
            bson_iter_recurse (&it, &elem);
            while (bson_iter_next (&elem))
                n_slots++;
        }
        if (refs_failed (a, doc, len, values, n_slots, &keep, err))
            return keep;
    }
    if (shape == SHAPE_SCALAR) {
        const uint8_t *v = values[0];
        looked_up (a, v);
        if (!v && d->on_missing == RM_MISSING_ERROR)
            return missing (a, &it, err);
        if (!v && d->on_missing == RM_MISSING_KEEP)
            return true;
        /* Each set reads the last result: alternate the two buffers. */
        for (size_t i = 0, writes = 0; i < d->n; i++) {
            rm_raw_value_t val = {BSON_TYPE_NULL, NULL, 0};
            bson_iter_t vi;
            rm_buf_t *dst = &a->buf[writes & 1];
            if (v) {
                if (!copied_value (d, v, i, &vi))
                    continue;
                rm_raw_value_of (&vi, &val);
            }
            if (!rm_doc_set (dst, cur, cur_len, &a->target_paths[i], &val, err))
                return false;
            writes++;
            cur = dst->data;
            cur_len = dst->len;
        }
    } else {
        rm_raw_value_t val;
        if (!build_array (a, shape, &it, values, err))
            return false;
        val.type = BSON_TYPE_ARRAY;
        val.data = a->arr.data;
        val.len = (uint32_t) a->arr.len;
        if (!rm_doc_set (&a->buf[0], doc, len, shape == SHAPE_ARRAY ? &d->local : &a->prefix, &val, err))
            return false;
        cur = a->buf[0].data;
        cur_len = a->buf[0].len;
    }
    *out = cur;
    *out_len = cur_len;
    return true;
}
