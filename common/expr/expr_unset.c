/* The $unset stage (a $project exclusion) over one document: its paths
 * compiled into a tree once, then one copy of the document's bytes
 * without them. The stage's rules, not the update operator's: a path goes
 * into documents and into each document of an array (an inner array is
 * walked the same way; a scalar element stays), a numeric component is a
 * field name, never an index, and a path through a scalar or a missing
 * field changes nothing. Every other field keeps its place and bytes. */
#include <string.h>

#include "bsonwalk.h"
#include "expr_impl.h"

typedef struct xun_node xun_node_t;
struct xun_node {
    const char *name;   /* into the path's text */
    uint32_t len;
    bool leaf;          /* the field goes */
    xun_node_t *kids;
    size_t n_kids, cap;
};

struct rm_expr_unset {
    xun_node_t root;
};

static void
node_clear (xun_node_t *n)
{
    for (size_t i = 0; i < n->n_kids; i++)
        node_clear (&n->kids[i]);
    bson_free (n->kids);
}

void
rm_expr_unset_destroy (rm_expr_unset_t *u)
{
    if (!u)
        return;
    node_clear (&u->root);
    bson_free (u);
}

static xun_node_t *
node_kid (xun_node_t *n, const char *name, uint32_t len)
{
    for (size_t i = 0; i < n->n_kids; i++)
        if (n->kids[i].len == len && !memcmp (n->kids[i].name, name, len))
            return &n->kids[i];
    if (n->n_kids == n->cap) {
        n->cap = n->cap ? 2 * n->cap : 4;
        n->kids = bson_realloc (n->kids, n->cap * sizeof *n->kids);
    }
    xun_node_t *k = &n->kids[n->n_kids++];
    memset (k, 0, sizeof *k);
    k->name = name;
    k->len = len;
    return k;
}

rm_expr_unset_t *
rm_expr_unset_new (const rm_path_t *paths, size_t n)
{
    rm_expr_unset_t *u = bson_malloc0 (sizeof *u);
    for (size_t i = 0; i < n; i++) {
        xun_node_t *at = &u->root;
        /* The paths stay the caller's (the plan's) while u lives. */
        for (size_t k = 0; k < paths[i].n && !at->leaf; k++)
            at = node_kid (at, paths[i].parts[k], paths[i].lens[k]);
        at->leaf = true;
    }
    return u;
}

static void apply_doc (rm_buf_t *out, const uint8_t *data, uint32_t len, const xun_node_t *n,
                       bool *changed);

static void
put_len (rm_buf_t *out, size_t start)
{
    uint32_t len = BSON_UINT32_TO_LE ((uint32_t) (out->len - start));
    memcpy (out->data + start, &len, 4);
}

/* An array under the node n: its documents lose n's fields, inner arrays
 * the same, everything else as it was. */
static void
apply_array (rm_buf_t *out, const uint8_t *data, uint32_t len, const xun_node_t *n, bool *changed)
{
    rm_walk_t w;
    rm_elem_t el;
    size_t start = out->len;

    rm_buf_append (out, "\0\0\0\0", 4);
    rm_walk_init (&w, data, len);
    while (rm_walk_next (&w, &el) > 0) {
        if (el.type == BSON_TYPE_DOCUMENT || el.type == BSON_TYPE_ARRAY) {
            rm_buf_append (out, w.data + el.start, el.value - el.start);
            if (el.type == BSON_TYPE_DOCUMENT)
                apply_doc (out, w.data + el.value, el.end - el.value, n, changed);
            else
                apply_array (out, w.data + el.value, el.end - el.value, n, changed);
        } else {
            rm_buf_append (out, w.data + el.start, el.end - el.start);
        }
    }
    rm_buf_append (out, "", 1);
    put_len (out, start);
}

static void
apply_doc (rm_buf_t *out, const uint8_t *data, uint32_t len, const xun_node_t *n, bool *changed)
{
    rm_walk_t w;
    rm_elem_t el;
    size_t start = out->len;

    rm_buf_append (out, "\0\0\0\0", 4);
    rm_walk_init (&w, data, len);
    while (rm_walk_next (&w, &el) > 0) {
        const char *key = rm_elem_key (&w, &el);
        uint32_t klen = rm_elem_key_len (&el);
        const xun_node_t *k = NULL;
        for (size_t i = 0; i < n->n_kids; i++)
            if (n->kids[i].len == klen && !memcmp (n->kids[i].name, key, klen)) {
                k = &n->kids[i];
                break;
            }
        if (k && k->leaf) {
            *changed = true;
            continue;
        }
        if (k && el.type == BSON_TYPE_DOCUMENT) {
            rm_buf_append (out, w.data + el.start, el.value - el.start);
            apply_doc (out, w.data + el.value, el.end - el.value, k, changed);
        } else if (k && el.type == BSON_TYPE_ARRAY) {
            rm_buf_append (out, w.data + el.start, el.value - el.start);
            apply_array (out, w.data + el.value, el.end - el.value, k, changed);
        } else {
            rm_buf_append (out, w.data + el.start, el.end - el.start);
        }
    }
    rm_buf_append (out, "", 1);
    put_len (out, start);
}

void
rm_expr_unset_apply (const rm_expr_unset_t *u, const uint8_t *doc, uint32_t len, rm_buf_t *out,
                     bool *changed)
{
    rm_buf_reset (out);
    *changed = false;
    apply_doc (out, doc, len, &u->root, changed);
}
