/* Consecutive set and unset steps on one namespace, fused (field_run.h).
 *
 * Step by step, each step copies the whole document: a plan of N steps
 * that each add a field costs N copies of a document that grows to N
 * fields, quadratic in N. Fused, a document's top-level fields are read
 * once into a table (its order, and a hash of its names), every step's
 * edits go to that table, and the document is written once at the end.
 *
 * The result is the steps' byte for byte, because a run takes only what
 * it can do exactly as they do (expr_addfields.c, expr_unset.c): set of a
 * constant (its bytes computed once, by the set itself over an empty
 * document) at a top-level field replaces an existing field in its place
 * or adds a new one at the end; unset of a top-level field drops it. A
 * set of expressions does the same with the values it computes, per
 * document, over the document as the step would get it: the one that
 * came into the run when none of the fields it reads was written by an
 * earlier step of the run, else the run's table written out first (so a
 * step reading what an earlier one set sees the new value); a missing
 * value drops the field, as the set does. A document an expression fails
 * on, or holding a name twice, is left to the steps (which say why). A
 * step changed the document when its bytes after differ from its bytes
 * before: a value replaced by the same type and bytes is no change. */
#include <string.h>

#include "bsonwalk.h"
#include "field_run.h"

typedef struct {
    size_t step;            /* within the run */
    bool unset;
    const char *key;
    uint32_t klen, hash;
    uint8_t type;           /* set: the value's */
    size_t val;             /* set: its offset in r->vals, then its bytes' */
    uint32_t vlen;
    const rm_expr_t *expr;  /* a set of expressions: this field's */
    size_t n_step;          /* the first op of such a step: its ops */
    bool current;           /* ... evaluated over the run's table written out */
} op_t;

/* A field of the document as the run has it: where its name and value
 * are (the document's bytes, or an op's), and whether a step removed it. */
typedef struct {
    const uint8_t *key;
    uint32_t klen, hash;
    uint8_t type;
    const uint8_t *val;
    uint32_t vlen;
    bool gone;
} field_t;

struct rm_field_run {
    size_t n_steps;
    op_t *ops;
    size_t n_ops, n_new;    /* n_new: the set ops (fields a document may gain) */
    rm_buf_t vals;          /* set's values, encoded */
    field_t *fields;
    size_t n_fields, cap_fields;
    uint32_t *slots;        /* the hash: 1 + a field's index, 0 free */
    size_t n_slots, cap_slots;
    rm_buf_t out;
    /* Sets of expressions: their context, each op's value for the
     * document (0 type: missing), the document as a step sees it. */
    rm_expr_ctx_t *cx;
    bool has_expr;
    uint8_t *x_type;
    const uint8_t **x_val;
    uint32_t *x_len;
    rm_buf_t view;
};

static uint32_t
name_hash (const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

bool
rm_field_run_fusable (const rm_step_t *s)
{
    const rm_fields_t *f = &s->u.fields;
    if ((s->kind != RM_STEP_SET && s->kind != RM_STEP_UNSET) || s->filter)
        return false;
    for (size_t i = 0; i < f->n; i++)
        if (f->paths[i].n != 1)
            return false;
    if (s->kind == RM_STEP_SET && (!f->set || rm_expr_set_count (f->set) != f->n))
        return false;
    return f->n > 0;
}

static op_t *
op_add (rm_field_run_t *r, size_t *cap)
{
    if (r->n_ops == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        r->ops = bson_realloc (r->ops, *cap * sizeof *r->ops);
    }
    memset (&r->ops[r->n_ops], 0, sizeof *r->ops);
    return &r->ops[r->n_ops++];
}

/* set's fields as it writes them into an empty document: each a new
 * field, in its order, with the bytes it gives any document. */
static bool
add_set (rm_field_run_t *r, size_t k, const rm_step_t *s, rm_expr_ctx_t *cx, size_t *cap)
{
    static const uint8_t empty[5] = {5, 0, 0, 0, 0};
    rm_buf_t doc;
    rm_walk_t w;
    rm_elem_t el;
    bson_error_t err;
    size_t n = 0;
    bool ok;

    rm_buf_init (&doc);
    rm_expr_ctx_reset (cx);
    ok = rm_expr_set_apply (s->u.fields.set, cx, empty, 5, &doc, &err) &&
         rm_walk_init (&w, doc.data, (uint32_t) doc.len);
    while (ok && rm_walk_next (&w, &el) > 0) {
        op_t *op = op_add (r, cap);
        const char *key = rm_elem_key (&w, &el);
        op->step = k;
        /* the step's own path text: it outlives the run */
        op->key = s->u.fields.paths[n].parts[0];
        op->klen = rm_elem_key_len (&el);
        ok = n < s->u.fields.n && strlen (op->key) == op->klen && !memcmp (op->key, key, op->klen);
        op->hash = name_hash (op->key, op->klen);
        op->type = el.type;
        op->val = r->vals.len;
        op->vlen = el.end - el.value;
        rm_buf_append (&r->vals, w.data + el.value, op->vlen);
        r->n_new++;
        n++;
    }
    rm_buf_destroy (&doc);
    /* Every field there, each in the step's order: else the step goes its
     * own way. */
    return ok && n == s->u.fields.n;
}

static bool
all_constant (const rm_step_t *s)
{
    const bson_value_t *v;
    for (size_t i = 0; i < s->u.fields.n; i++)
        if (!rm_expr_constant (rm_expr_set_expr (s->u.fields.set, i), &v))
            return false;
    return true;
}

/* The names the run's steps so far write or remove (ops' indexes + 1),
 * for telling whether a later set reads one: built once, with the run. */
typedef struct {
    const op_t *ops;
    uint32_t *slots;
    size_t cap, n;
} names_t;

static bool
names_has (const names_t *w, const char *key, uint32_t klen, uint32_t h)
{
    if (!w->cap)
        return false;
    for (size_t i = h & (w->cap - 1); w->slots[i]; i = (i + 1) & (w->cap - 1)) {
        const op_t *o = &w->ops[w->slots[i] - 1];
        if (o->hash == h && o->klen == klen && !memcmp (o->key, key, klen))
            return true;
    }
    return false;
}

static void
names_add (names_t *w, const op_t *ops, size_t from, size_t to)
{
    w->ops = ops;
    for (size_t k = from; k < to; k++) {
        if (names_has (w, ops[k].key, ops[k].klen, ops[k].hash))
            continue;
        if (2 * (w->n + 1) > w->cap) {
            size_t cap = w->cap ? 2 * w->cap : 64;
            uint32_t *slots = bson_malloc0 (cap * sizeof *slots);
            for (size_t i = 0; i < w->cap; i++)
                if (w->slots[i]) {
                    size_t j = ops[w->slots[i] - 1].hash & (cap - 1);
                    while (slots[j])
                        j = (j + 1) & (cap - 1);
                    slots[j] = w->slots[i];
                }
            bson_free (w->slots);
            w->slots = slots;
            w->cap = cap;
        }
        size_t j = ops[k].hash & (w->cap - 1);
        while (w->slots[j])
            j = (j + 1) & (w->cap - 1);
        w->slots[j] = (uint32_t) (k + 1);
        w->n++;
    }
}

typedef struct {
    const names_t *w;
    bool hit;
} reads_t;

static void
note_read (const rm_path_t *p, void *arg)
{
    reads_t *r = arg;
    if (p->n > 0 && names_has (r->w, p->parts[0], p->lens[0], name_hash (p->parts[0], p->lens[0])))
        r->hit = true;
}

/* A set of expressions: one op per field, evaluated per document. */
static void
add_xset (rm_field_run_t *r, size_t k, const rm_step_t *s, names_t *written, size_t *cap)
{
    const rm_fields_t *f = &s->u.fields;
    reads_t reads = {written, false};
    bool whole = false;
    size_t first = r->n_ops;

    for (size_t i = 0; i < f->n; i++) {
        const rm_expr_t *x = rm_expr_set_expr (f->set, i);
        op_t *op = op_add (r, cap);
        op->step = k;
        op->key = f->paths[i].parts[0];
        op->klen = (uint32_t) strlen (op->key);
        op->hash = name_hash (op->key, op->klen);
        op->expr = x;
        written->ops = r->ops; /* op_add may have moved them */
        rm_expr_paths (x, note_read, &reads, &whole);
        r->n_new++;
    }
    r->ops[first].n_step = f->n;
    /* $$ROOT as a whole sees every change before it. */
    r->ops[first].current = reads.hit || (whole && k > 0);
    r->has_expr = true;
}

rm_field_run_t *
rm_field_run_new (const rm_step_t *steps, size_t n, rm_expr_ctx_t *cx)
{
    names_t written = {0};
    rm_field_run_t *r;
    size_t len = 0, cap = 0;

    while (len < n && rm_field_run_fusable (&steps[len]) &&
           !strcmp (steps[len].u.fields.in.text, steps[0].u.fields.in.text))
        len++;
    if (len < 2)
        return NULL;
    r = bson_malloc0 (sizeof *r);
    rm_buf_init (&r->vals);
    rm_buf_init (&r->out);
    rm_buf_init (&r->view);
    r->cx = cx;
    for (size_t k = 0; k < len; k++) {
        const rm_fields_t *f = &steps[k].u.fields;
        size_t mark = r->n_ops, new_mark = r->n_new, vals_mark = r->vals.len;
        if (steps[k].kind == RM_STEP_SET && !all_constant (&steps[k])) {
            add_xset (r, k, &steps[k], &written, &cap);
        } else if (steps[k].kind == RM_STEP_SET) {
            if (!add_set (r, k, &steps[k], cx, &cap)) {
                /* The run ends before this step. */
                r->n_ops = mark;
                r->n_new = new_mark;
                r->vals.len = vals_mark;
                break;
            }
        } else {
            for (size_t i = 0; i < f->n; i++) {
                op_t *op = op_add (r, &cap);
                op->step = k;
                op->unset = true;
                op->key = f->paths[i].parts[0];
                op->klen = (uint32_t) strlen (op->key);
                op->hash = name_hash (op->key, op->klen);
            }
        }
        names_add (&written, r->ops, mark, r->n_ops);
        r->n_steps = k + 1;
    }
    bson_free (written.slots);
    if (r->n_steps < 2) {
        rm_field_run_destroy (r);
        return NULL;
    }
    if (r->has_expr) {
        r->x_type = bson_malloc0 (r->n_ops * sizeof *r->x_type);
        r->x_val = bson_malloc0 (r->n_ops * sizeof *r->x_val);
        r->x_len = bson_malloc0 (r->n_ops * sizeof *r->x_len);
    }
    return r;
}

size_t
rm_field_run_steps (const rm_field_run_t *r)
{
    return r->n_steps;
}

/* The field named key (of hash h) the table holds, or where it would go:
 * *slot. */
static field_t *
lookup (rm_field_run_t *r, const void *key, uint32_t klen, uint32_t h, size_t *slot)
{
    size_t mask = r->n_slots - 1, i = h & mask;
    for (; r->slots[i]; i = (i + 1) & mask) {
        field_t *f = &r->fields[r->slots[i] - 1];
        if (f->hash == h && f->klen == klen && !memcmp (f->key, key, klen)) {
            *slot = i;
            return f;
        }
    }
    *slot = i;
    return NULL;
}

static field_t *
field_add (rm_field_run_t *r)
{
    if (r->n_fields == r->cap_fields) {
        r->cap_fields = r->cap_fields ? 2 * r->cap_fields : 64;
        r->fields = bson_realloc (r->fields, r->cap_fields * sizeof *r->fields);
    }
    return &r->fields[r->n_fields++];
}

/* The document's top-level fields into the table; false on a name twice
 * (or bytes the walk refuses). */
static bool
load (rm_field_run_t *r, const uint8_t *doc, uint32_t len)
{
    rm_walk_t w;
    rm_elem_t el;
    size_t want = 16, slot;
    int rc;

    r->n_fields = 0;
    if (!rm_walk_init (&w, doc, len))
        return false;
    while ((rc = rm_walk_next (&w, &el)) > 0) {
        const char *key = rm_elem_key (&w, &el);
        uint32_t klen = rm_elem_key_len (&el);
        field_t *f = field_add (r);
        *f = (field_t){(const uint8_t *) key, klen, name_hash (key, klen), el.type,
                       w.data + el.value, el.end - el.value, false};
    }
    if (rc < 0)
        return false;
    /* Sized by the fields there and those the run may add: at most half
     * full, whatever the document's size. */
    while (want < 2 * (r->n_fields + r->n_new + 1))
        want *= 2;
    if (want > r->cap_slots) {
        bson_free (r->slots);
        r->slots = bson_malloc (want * sizeof *r->slots);
        r->cap_slots = want;
    }
    /* Only what this document uses: a huge one before it costs the next
     * small ones nothing. */
    r->n_slots = want;
    memset (r->slots, 0, r->n_slots * sizeof *r->slots);
    for (size_t i = 0; i < r->n_fields; i++) {
        const field_t *f = &r->fields[i];
        if (lookup (r, f->key, f->klen, f->hash, &slot))
            return false;
        r->slots[slot] = (uint32_t) (i + 1);
    }
    return true;
}

static void
write_out (rm_field_run_t *r, rm_buf_t *out)
{
    uint32_t n;
    rm_buf_reset (out);
    rm_buf_append (out, "\0\0\0\0", 4);
    for (size_t i = 0; i < r->n_fields; i++) {
        const field_t *f = &r->fields[i];
        if (f->gone)
            continue;
        rm_buf_append (out, &f->type, 1);
        rm_buf_append (out, f->key, f->klen);
        rm_buf_append (out, "", 1);
        rm_buf_append (out, f->val, f->vlen);
    }
    rm_buf_append (out, "", 1);
    n = BSON_UINT32_TO_LE ((uint32_t) out->len);
    memcpy (out->data, &n, 4);
}

/* The values of the set of expressions whose ops start at ops[i], over
 * the document as that step gets it; false when one fails. */
static bool
eval_step (rm_field_run_t *r, size_t i, const uint8_t *doc, uint32_t len)
{
    const op_t *head = &r->ops[i];
    bson_error_t err;

    if (head->current) {
        write_out (r, &r->view);
        doc = r->view.data;
        len = (uint32_t) r->view.len;
    }
    /* Afresh: the view may be rewritten in place between two steps. */
    rm_expr_ctx_release (r->cx);
    rm_expr_ctx_hold (r->cx, doc, len);
    for (size_t k = i; k < i + head->n_step; k++) {
        bson_value_t v;
        rm_raw_value_t raw;
        if (!rm_expr_eval (r->cx, r->ops[k].expr, doc, len, &v, &err)) {
            rm_expr_ctx_release (r->cx);
            return false;
        }
        if (v.value_type == BSON_TYPE_EOD) {
            r->x_type[k] = 0;
            continue;
        }
        rm_expr_raw (r->cx, &v, &raw);
        r->x_type[k] = raw.type;
        r->x_val[k] = raw.data;
        r->x_len[k] = raw.len;
    }
    rm_expr_ctx_release (r->cx);
    return true;
}

bool
rm_field_run_apply (rm_field_run_t *r, const uint8_t *doc, uint32_t len,
                    const uint8_t **out, size_t *out_len, bool *changed)
{
    bool any = false;
    size_t slot;

    if (!load (r, doc, len))
        return false;
    if (r->has_expr)
        rm_expr_ctx_reset (r->cx);
    memset (changed, 0, r->n_steps * sizeof *changed);
    for (size_t i = 0; i < r->n_ops; i++) {
        const op_t *op = &r->ops[i];
        uint8_t type = op->type;
        const uint8_t *val = r->vals.data + op->val;
        uint32_t vlen = op->vlen;
        bool unset = op->unset;
        if (op->n_step && !eval_step (r, i, doc, len))
            return false; /* the steps one by one say why */
        if (op->expr) {
            type = r->x_type[i];
            val = r->x_val[i];
            vlen = r->x_len[i];
            unset = type == 0; /* missing: the set removes the field */
        }
        field_t *f = lookup (r, op->key, op->klen, op->hash, &slot);
        if (f && f->gone)
            f = NULL; /* removed by an earlier step: a set adds it anew, at the end */
        if (unset) {
            if (f) {
                f->gone = true;
                changed[op->step] = true;
            }
            continue;
        }
        if (f) {
            if (f->type != type || f->vlen != vlen || memcmp (f->val, val, vlen)) {
                f->type = type;
                f->val = val;
                f->vlen = vlen;
                changed[op->step] = true;
            }
            continue;
        }
        f = field_add (r);
        *f = (field_t){(const uint8_t *) op->key, op->klen, op->hash, type, val, vlen, false};
        r->slots[slot] = (uint32_t) r->n_fields;
        changed[op->step] = true;
    }
    for (size_t k = 0; k < r->n_steps; k++)
        any |= changed[k];
    if (!any) {
        *out = doc;
        *out_len = len;
        return true;
    }
    write_out (r, &r->out);
    *out = r->out.data;
    *out_len = r->out.len;
    return true;
}

void
rm_field_run_destroy (rm_field_run_t *r)
{
    if (!r)
        return;
    bson_free (r->ops);
    bson_free (r->fields);
    bson_free (r->slots);
    rm_buf_destroy (&r->vals);
    rm_buf_destroy (&r->out);
    rm_buf_destroy (&r->view);
    bson_free (r->x_type);
    bson_free (r->x_val);
    bson_free (r->x_len);
    bson_free (r);
}
