/* The $set (alias $addFields) stage over one document: its fields compiled
 * into a tree of paths ("a.b" and {"a": {"b": ...}} are the same field),
 * every expression evaluated against the document as it came in, then one
 * copy of its bytes with the results in place.
 *
 * The stage's rules, which are not the update operator's: a field whose
 * value is missing ("$nope", $$REMOVE) is removed or left out; a path
 * through an existing document goes into it, through an array into each of
 * its elements (a document element gets the field, any other element is
 * replaced by a new document holding it, an inner array is walked the
 * same way), and through any other value replaces it with a new document.
 * New fields go at the end of their document, in the order the stage
 * names them; every other field keeps its place and its bytes. */
#include <stdlib.h>
#include <string.h>

#include "bsonwalk.h"
#include "expr_ctx.h"
#include "remodel/bsondepth.h"

typedef struct xset_node xset_node_t;
struct xset_node {
    char *name;
    size_t name_len;
    rm_expr_t *expr;      /* a leaf: its expression */
    size_t slot;          /* a leaf: its place in the values */
    xset_node_t *kids;    /* nested fields, in the order named */
    size_t n_kids, cap;
    /* Past a few kids, their names hashed (1 + a kid's index, 0 free):
     * a set of 40,000 fields is read, and applied to each document, in
     * time linear in its fields, not quadratic. */
    uint32_t *slots;
    size_t n_slots;
    /* Two bits per kid's name (name_bit, name_bit2): a document's field
     * whose bits are not both set is no kid, found without hashing or
     * comparing its name. One bit let through a sixth of TPC-H's keys
     * ("l_" and a few lengths), each then compared with every kid. */
    uint64_t bits, bits2;
};

struct rm_expr_set {
    xset_node_t root;
    size_t n_leaves, cap_leaves;
    const xset_node_t **leaves; /* by slot */
    char **paths;               /* by slot: the dotted path */
    size_t seen_size;           /* tree_size of root, + 1: apply's scratch */
    bool top_only;              /* every field set is a top-level one */
    uint64_t id;                /* this set's number, never another's (a
                                 * context's memo of its copies) */
};

/* The sets' numbers: from 1, across threads. */
static uint64_t set_ids;

static void
node_clear (xset_node_t *n)
{
    for (size_t i = 0; i < n->n_kids; i++)
        node_clear (&n->kids[i]);
    bson_free (n->kids);
    bson_free (n->slots);
    bson_free (n->name);
    rm_expr_destroy (n->expr);
}

void
rm_expr_set_destroy (rm_expr_set_t *s)
{
    if (!s)
        return;
    node_clear (&s->root);
    for (size_t i = 0; i < s->n_leaves; i++)
        bson_free (s->paths[i]);
    bson_free (s->paths);
    bson_free (s->leaves);
    bson_free (s);
}

#define HASH_FROM 8

static uint32_t
name_hash (const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t) p[i]) * 16777619u;
    return h;
}

static inline uint64_t
name_bit (const char *name, size_t len)
{
    unsigned b = (unsigned) len + (len ? 7u * (uint8_t) name[0] + 3u * (uint8_t) name[len - 1] : 0);
    return (uint64_t) 1 << (b & 63);
}

/* A second bit, from other bytes: the middle one and the one before the
 * last. */
static inline uint64_t
name_bit2 (const char *name, size_t len)
{
    unsigned b = 5u * (unsigned) len + (len > 1 ? 11u * (uint8_t) name[len / 2] + (uint8_t) name[len - 2] : 0);
    return (uint64_t) 1 << (b & 63);
}

/* The index of n's kid named (name, len), or n->n_kids; *slot where it
 * would go in the hash. */
static size_t node_find_named (const xset_node_t *n, const char *name, size_t len, size_t *slot);

static inline size_t
node_find (const xset_node_t *n, const char *name, size_t len, size_t *slot)
{
    /* Inline: most of a document's fields are no kid, told by one bit. */
    if (!slot && (!(n->bits & name_bit (name, len)) || !(n->bits2 & name_bit2 (name, len))))
        return n->n_kids;
    return node_find_named (n, name, len, slot);
}

static size_t
node_find_named (const xset_node_t *n, const char *name, size_t len, size_t *slot)
{
    if (!n->slots) {
        size_t i;
        for (i = 0; i < n->n_kids; i++)
            if (n->kids[i].name_len == len && !memcmp (n->kids[i].name, name, len))
                break;
        return i;
    }
    size_t mask = n->n_slots - 1, j = name_hash (name, len) & mask;
    for (; n->slots[j]; j = (j + 1) & mask) {
        const xset_node_t *k = &n->kids[n->slots[j] - 1];
        if (k->name_len == len && !memcmp (k->name, name, len))
            return n->slots[j] - 1;
    }
    if (slot)
        *slot = j;
    return n->n_kids;
}

/* Every kid into a hash of at least four times their number. */
static void
node_rehash (xset_node_t *n)
{
    size_t want = 16;
    while (want < 4 * n->n_kids)
        want *= 2;
    bson_free (n->slots);
    n->slots = bson_malloc0 (want * sizeof *n->slots);
    n->n_slots = want;
    for (size_t i = 0; i < n->n_kids; i++) {
        size_t mask = want - 1, j = name_hash (n->kids[i].name, n->kids[i].name_len) & mask;
        while (n->slots[j])
            j = (j + 1) & mask;
        n->slots[j] = (uint32_t) (i + 1);
    }
}

static xset_node_t *
node_kid (xset_node_t *n, const char *name, size_t len)
{
    size_t slot = 0, i = node_find (n, name, len, &slot);
    if (i < n->n_kids)
        return &n->kids[i];
    if (n->n_kids == n->cap) {
        n->cap = n->cap ? 2 * n->cap : 4;
        n->kids = bson_realloc (n->kids, n->cap * sizeof *n->kids);
    }
    xset_node_t *k = &n->kids[n->n_kids++];
    memset (k, 0, sizeof *k);
    k->name = bson_strndup (name, len);
    k->name_len = len;
    n->bits |= name_bit (name, len);
    n->bits2 |= name_bit2 (name, len);
    if (n->slots && 2 * n->n_kids <= n->n_slots)
        n->slots[slot] = (uint32_t) n->n_kids;
    else if (n->n_kids > HASH_FROM)
        node_rehash (n);
    return k;
}

/* A value that is a document of fields rather than an expression: a
 * non-empty document whose first key does not start with '$'. */
static bool
is_nested_spec (const bson_iter_t *it)
{
    bson_iter_t sub;
    return BSON_ITER_HOLDS_DOCUMENT (it) && bson_iter_recurse (it, &sub) && bson_iter_next (&sub) &&
           bson_iter_key (&sub)[0] != '$';
}

/* Two fields of which one contains the other: named shorter first, as
 * the stage's "path collision" refuses them. */
static void
collision (bson_error_t *err, const char *a, const char *b)
{
    if (strlen (a) > strlen (b)) {
        const char *t = a;
        a = b;
        b = t;
    }
    rm_error_set (err, RM_ERR_USAGE, "\"%s\" and \"%s\" overlap (a path collision)", a, b);
}

static const xset_node_t *
first_leaf (const xset_node_t *n)
{
    while (!n->expr && n->n_kids)
        n = &n->kids[0];
    return n;
}

static bool add_fields (rm_expr_set_t *s, xset_node_t *at, const char *prefix, bson_iter_t *it,
                        int depth, bson_error_t *err);

static bool
add_field (rm_expr_set_t *s, xset_node_t *at, const char *prefix, const char *key, bson_iter_t *val,
           int depth, bson_error_t *err)
{
    char *path = prefix[0] ? bson_strdup_printf ("%s.%s", prefix, key) : bson_strdup (key);
    const char *p = key;
    xset_node_t *n = at;
    bool ok = true;

    if (!key[0] || key[0] == '$') {
        rm_error_set (err, RM_ERR_USAGE, "\"%s\": a field name may not be empty nor start with '$'", path);
        bson_free (path);
        return false;
    }
    for (;;) {
        const char *dot = strchr (p, '.');
        size_t len = dot ? (size_t) (dot - p) : strlen (p);
        if (len == 0) {
            rm_error_set (err, RM_ERR_USAGE, "\"%s\": a path may not have an empty part", path);
            ok = false;
            break;
        }
        if (n->expr) {
            collision (err, s->paths[n->slot], path);
            ok = false;
            break;
        }
        n = node_kid (n, p, len);
        if (!dot)
            break;
        p = dot + 1;
    }
    if (ok && n->expr) {
        rm_error_set (err, RM_ERR_USAGE, "\"%s\": set twice (a path collision)", path);
        ok = false;
    } else if (ok && n->n_kids && !is_nested_spec (val)) {
        collision (err, path, s->paths[first_leaf (n)->slot]);
        ok = false;
    }
    if (ok && is_nested_spec (val)) {
        bson_iter_t sub;
        if (depth > 100) {
            rm_error_set (err, RM_ERR_USAGE, "\"%s\": nested more than 100 levels deep", path);
            ok = false;
        } else {
            bson_iter_recurse (val, &sub);
            ok = add_fields (s, n, path, &sub, depth + 1, err);
        }
    } else if (ok) {
        n->expr = rm_expr_parse (val, err);
        if (!n->expr) {
            rm_error_prefix (err, "\"%s\"", path);
            ok = false;
        } else {
            n->slot = s->n_leaves++;
            if (s->n_leaves > s->cap_leaves) {
                s->cap_leaves = s->cap_leaves ? 2 * s->cap_leaves : 8;
                s->paths = bson_realloc (s->paths, s->cap_leaves * sizeof *s->paths);
            }
            s->paths[n->slot] = path;
            path = NULL;
        }
    }
    bson_free (path);
    return ok;
}

static bool
add_fields (rm_expr_set_t *s, xset_node_t *at, const char *prefix, bson_iter_t *it, int depth,
            bson_error_t *err)
{
    while (bson_iter_next (it)) {
        /* A signal stops a long plan's reading too. */
        if (rm_interrupted) {
            rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
            return false;
        }
        if (!add_field (s, at, prefix, bson_iter_key (it), it, depth, err))
            return false;
    }
    return true;
}

static void
index_leaves (rm_expr_set_t *s, const xset_node_t *n)
{
    if (n->expr)
        s->leaves[n->slot] = n;
    for (size_t i = 0; i < n->n_kids; i++)
        index_leaves (s, &n->kids[i]);
}

static size_t
tree_size (const xset_node_t *n)
{
    size_t t = n->n_kids, deepest = 0;
    for (size_t i = 0; i < n->n_kids; i++) {
        size_t d = tree_size (&n->kids[i]);
        if (d > deepest)
            deepest = d;
    }
    return t + deepest;
}

rm_expr_set_t *
rm_expr_set_parse (const bson_iter_t *fields, bson_error_t *err)
{
    rm_expr_set_t *s = bson_malloc0 (sizeof *s);
    bson_iter_t sub;

    if (!BSON_ITER_HOLDS_DOCUMENT (fields) || !bson_iter_recurse (fields, &sub)) {
        rm_error_set (err, RM_ERR_USAGE, "must be a document of {\"path\": expression}");
        bson_free (s);
        return NULL;
    }
    if (!add_fields (s, &s->root, "", &sub, 0, err)) {
        rm_expr_set_destroy (s);
        return NULL;
    }
    s->leaves = bson_malloc0 ((s->n_leaves ? s->n_leaves : 1) * sizeof *s->leaves);
    index_leaves (s, &s->root);
    s->seen_size = tree_size (&s->root) + 1;
    s->id = __atomic_add_fetch (&set_ids, 1, __ATOMIC_RELAXED);
    s->top_only = true;
    for (size_t i = 0; i < s->root.n_kids; i++)
        s->top_only &= s->root.kids[i].expr != NULL;
    return s;
}

size_t
rm_expr_set_count (const rm_expr_set_t *s)
{
    return s->n_leaves;
}

const char *
rm_expr_set_path (const rm_expr_set_t *s, size_t i)
{
    return s->paths[i];
}

const rm_expr_t *
rm_expr_set_expr (const rm_expr_set_t *s, size_t i)
{
    return s->leaves[i]->expr;
}

/* ---- Applying ---- */

static void
put_key (rm_buf_t *out, uint8_t type, const char *key, size_t len)
{
    rm_buf_append (out, &type, 1);
    rm_buf_append (out, key, len);
    rm_buf_append (out, "", 1);
}

static void
begin_doc (rm_buf_t *out, size_t *start)
{
    *start = out->len;
    rm_buf_append (out, "\0\0\0\0", 4);
}

static void
end_doc (rm_buf_t *out, size_t start)
{
    uint32_t len;
    rm_buf_append (out, "", 1);
    len = BSON_UINT32_TO_LE ((uint32_t) (out->len - start));
    memcpy (out->data + start, &len, 4);
}

static const uint8_t empty_doc[5] = {5, 0, 0, 0, 0};

static void apply_doc (rm_buf_t *out, const uint8_t *data, uint32_t len, const xset_node_t *n,
                       const bson_value_t *vals, uint8_t *seen);

/* The value of one element under nested fields n: a document gets them,
 * an array has each element get them, anything else becomes a new
 * document of them. Its key is written already. */
static void
apply_value (rm_buf_t *out, uint8_t type, const uint8_t *v, uint32_t vlen, const xset_node_t *n,
             const bson_value_t *vals, uint8_t *seen)
{
    if (type == BSON_TYPE_DOCUMENT) {
        apply_doc (out, v, vlen, n, vals, seen);
    } else if (type == BSON_TYPE_ARRAY) {
        rm_walk_t w;
        rm_elem_t el;
        size_t start;
        begin_doc (out, &start);
        rm_walk_init (&w, v, vlen);
        while (rm_walk_next (&w, &el) > 0) {
            uint8_t t = el.type == BSON_TYPE_ARRAY ? BSON_TYPE_ARRAY : BSON_TYPE_DOCUMENT;
            put_key (out, t, rm_elem_key (&w, &el), rm_elem_key_len (&el));
            if (el.type == BSON_TYPE_DOCUMENT || el.type == BSON_TYPE_ARRAY)
                apply_value (out, el.type, w.data + el.value, el.end - el.value, n, vals, seen);
            else
                apply_doc (out, empty_doc, 5, n, vals, seen);
        }
        end_doc (out, start);
    } else {
        apply_doc (out, empty_doc, 5, n, vals, seen);
    }
}

static void
put_leaf (rm_buf_t *out, const xset_node_t *k, const bson_value_t *vals)
{
    if (!rm_xval_missing (&vals[k->slot]))
        rm_xval_encode (out, k->name, k->name_len, &vals[k->slot]);
}

/* The fields of n the document did not have, after its own: each a
 * leaf's value, or a new document built from nothing. */
static void
put_unseen (rm_buf_t *out, const xset_node_t *n, const bson_value_t *vals, uint8_t *seen)
{
    for (size_t i = 0; i < n->n_kids; i++) {
        if (seen[i])
            continue;
        const xset_node_t *k = &n->kids[i];
        if (k->expr) {
            put_leaf (out, k, vals);
        } else {
            put_key (out, BSON_TYPE_DOCUMENT, k->name, k->name_len);
            apply_doc (out, empty_doc, 5, k, vals, seen + n->n_kids);
        }
    }
}

/* seen: scratch of n->n_kids flags per level, the caller's (one byte per
 * kid at every level of the tree: sized at the tree's total). */
static void
apply_doc (rm_buf_t *out, const uint8_t *data, uint32_t len, const xset_node_t *n,
           const bson_value_t *vals, uint8_t *seen)
{
    rm_walk_t w;
    rm_elem_t el;
    size_t start;
    uint32_t kept = 4; /* untouched elements from here on, copied as one run */

    memset (seen, 0, n->n_kids);
    begin_doc (out, &start);
    rm_walk_init (&w, data, len);
    while (rm_walk_next (&w, &el) > 0) {
        const char *key = rm_elem_key (&w, &el);
        size_t klen = rm_elem_key_len (&el), i = node_find (n, key, klen, NULL);
        if (i == n->n_kids || seen[i])
            continue; /* untouched (or a second field of one name: the
                       * first took the change, this one stays as it was) */
        rm_buf_append (out, w.data + kept, el.start - kept);
        kept = el.end;
        seen[i] = 1;
        const xset_node_t *k = &n->kids[i];
        if (k->expr) {
            put_leaf (out, k, vals);
        } else {
            uint8_t t = el.type == BSON_TYPE_ARRAY ? BSON_TYPE_ARRAY : BSON_TYPE_DOCUMENT;
            put_key (out, t, key, klen);
            apply_value (out, el.type, w.data + el.value, el.end - el.value, k, vals, seen + n->n_kids);
        }
    }
    /* To the last element's end (a walk stopped by bad bytes copies what
     * it passed, as element by element did). */
    if (len && w.pos < len && w.pos > kept)
        rm_buf_append (out, w.data + kept, w.pos - kept);
    put_unseen (out, n, vals, seen);
    end_doc (out, start);
}


/* apply_doc at the top level of the held document, by the fields its
 * walk met (all of them: rm_xheld_all) instead of a second walk. When
 * every field was its place's key (the held walk's shape) and the
 * documents before had none of n's names at those places, neither does
 * this one: its fields are not compared with n's names at all (a
 * comparison per field, a tenth of a six-expression set). */
static void
apply_held (rm_buf_t *out, rm_expr_ctx_t *cx, const rm_expr_set_t *s, const bson_value_t *vals,
            uint8_t *seen)
{
    const xset_node_t *n = &s->root;
    const uint8_t *d = cx->held;
    size_t start, n_seen = cx->n_seen;
    uint32_t kept = 4; /* untouched fields from here on, copied as one run */
    bool same = !cx->held_slow && cx->none_set == s->id && n_seen <= cx->none_upto;

    memset (seen, 0, n->n_kids);
    begin_doc (out, &start);
    for (size_t f = 0; !same && f < n_seen; f++) {
        const rm_xfield_t *el = &cx->seen[f];
        const char *key = (const char *) d + el->start + 1;
        size_t i = node_find (n, key, el->klen, NULL);
        if (i == n->n_kids || seen[i])
            continue; /* as apply_doc */
        rm_buf_append (out, d + kept, el->start - kept);
        kept = el->end;
        seen[i] = 1;
        const xset_node_t *k = &n->kids[i];
        uint8_t type = d[el->start];
        if (k->expr) {
            put_leaf (out, k, vals);
        } else {
            uint32_t v = el->start + el->klen + 2;
            put_key (out, type == BSON_TYPE_ARRAY ? BSON_TYPE_ARRAY : BSON_TYPE_DOCUMENT, key, el->klen);
            apply_value (out, type, d + v, el->end - v, k, vals, seen + n->n_kids);
        }
    }
    if (kept == 4 && !cx->held_slow && n_seen <= cx->n_shape &&
        (cx->none_set != s->id || cx->none_upto < n_seen)) {
        cx->none_set = s->id; /* none of its names at these places */
        cx->none_upto = n_seen;
    }
    rm_buf_append (out, d + kept, cx->held_len - 1 - kept);
    put_unseen (out, n, vals, seen);
    end_doc (out, start);
}

bool
rm_expr_set_apply (const rm_expr_set_t *s, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                   rm_buf_t *out, bson_error_t *err)
{
    rm_buf_reset (out);
    return rm_expr_set_append (s, cx, doc, len, out, err);
}

bool
rm_expr_set_append (const rm_expr_set_t *s, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len,
                    rm_buf_t *out, bson_error_t *err)
{
    bson_value_t *vals = rm_xvals (cx, s->n_leaves);
    uint8_t *seen;
    bool shallow = s->top_only;

    /* Held by the caller already (its filter read it), or here. */
    bool mine = cx->held != doc || cx->held_len != len;
    rm_expr_ctx_hold (cx, doc, len);
    for (size_t i = 0; i < s->n_leaves; i++)
        if (!rm_expr_eval (cx, s->leaves[i]->expr, doc, len, &vals[i], err)) {
            if (mine)
                rm_expr_ctx_release (cx);
            rm_error_prefix (err, "field \"%s\"", s->paths[i]);
            return false;
        }
    /* A value's own levels, +1 for its field: scalars have none. */
    for (size_t i = 0; shallow && i < s->n_leaves; i++)
        if (vals[i].value_type == BSON_TYPE_DOCUMENT || vals[i].value_type == BSON_TYPE_ARRAY)
            shallow = rm_bson_depth (vals[i].value.v_doc.data, vals[i].value.v_doc.data_len,
                                     RM_BSON_MAX_NESTING) + 1 <= RM_BSON_MAX_NESTING;
    cx->set_shallow = shallow;
    seen = rm_xalloc (cx, s->seen_size);
    /* The held walk, finished, is the copy's; bad bytes (the document was
     * checked when read) go the walk's own way. */
    if (cx->held == doc && cx->held_len == len && rm_xheld_all (cx))
        apply_held (out, cx, s, vals, seen);
    else
        apply_doc (out, doc, len, &s->root, vals, seen);
    if (mine)
        rm_expr_ctx_release (cx);
    return true;
}

bool
rm_expr_set_shallow (const rm_expr_ctx_t *cx)
{
    return cx->set_shallow;
}
