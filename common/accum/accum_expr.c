/* The expressions an accumulator evaluates for each document: a field path
 * ("$a.b"), "$$ROOT" (or "$$CURRENT"), a literal, {"$literal": v}, and
 * documents and arrays built of those ({"text": "$text", "n": 1},
 * ["$a", "$b"]). Operators ($add, $cond...) are not supported.
 *
 * Field paths follow the server's aggregation rules (ExpressionFieldPath),
 * which are not $lookup's (docpath.h's rm_path_visit) nor a plain lookup
 * (rm_path_get): when a path meets an array before its last component, the
 * rest of the path is applied to each document in the array and the value
 * is the array of what was found: "$a.b" over {a: [{b: 1}, {c: 2}, {b: 3}]}
 * is [1, 3]; elements that are not documents (nested arrays included) are
 * skipped. A numeric component is a field name, never an array index. An
 * array at the end of the path is the value itself.
 *
 * Evaluating never allocates once the caller's scratch document has grown:
 * a value that is in the document is returned as an iterator into it, and
 * one that has to be built (an array gathered along a path, $$ROOT, a
 * document or array expression) is built into the scratch document. */
#include <string.h>

#include "remodel/docpath.h"
#include "remodel/error.h"

#include "accum_impl.h"

/* The server's limit on nesting in a document is 100 levels too. */
#define EXPR_MAX_DEPTH 100

typedef enum { X_LITERAL, X_PATH, X_ROOT, X_OBJECT, X_ARRAY } xkind_t;

struct rm_acc_expr {
    xkind_t kind;
    rm_path_t path;     /* X_PATH */
    bson_t *lit;        /* X_LITERAL: {"v": value} (no iterator kept: libbson
                         * aligns them to 128 bytes, more than malloc does) */
    size_t n;           /* X_OBJECT, X_ARRAY: children */
    char **names;       /* X_OBJECT: field names */
    rm_acc_expr_t **kids;
};

void
rm_acc_expr_destroy (rm_acc_expr_t *e)
{
    if (!e)
        return;
    if (e->kind == X_PATH)
        rm_path_destroy (&e->path);
    if (e->lit)
        bson_destroy (e->lit);
    for (size_t i = 0; i < e->n; i++) {
        if (e->names)
            bson_free (e->names[i]);
        rm_acc_expr_destroy (e->kids[i]);
    }
    bson_free (e->names);
    bson_free (e->kids);
    bson_free (e);
}

static rm_acc_expr_t *
make_literal (const bson_iter_t *it)
{
    rm_acc_expr_t *e = bson_malloc0 (sizeof *e);
    e->kind = X_LITERAL;
    e->lit = bson_new ();
    bson_append_iter (e->lit, "v", 1, it);
    return e;
}

rm_acc_expr_t *
rm_acc_expr_path (const char *dotted, bson_error_t *err)
{
    rm_acc_expr_t *e = bson_malloc0 (sizeof *e);
    e->kind = X_PATH;
    if (!rm_path_parse (&e->path, dotted, err)) {
        bson_free (e);
        return NULL;
    }
    return e;
}

static rm_acc_expr_t *parse (const bson_iter_t *it, int depth, bson_error_t *err);

static rm_acc_expr_t *
parse_string (const char *s, bson_error_t *err)
{
    rm_acc_expr_t *e;

    if (strncmp (s, "$$", 2) != 0)
        return rm_acc_expr_path (s + 1, err);
    /* $$ROOT and $$CURRENT are the document; "$$ROOT.a" is "$a". */
    if (!strcmp (s, "$$ROOT") || !strcmp (s, "$$CURRENT")) {
        e = bson_malloc0 (sizeof *e);
        e->kind = X_ROOT;
        return e;
    }
    if (!strncmp (s, "$$ROOT.", 7))
        return rm_acc_expr_path (s + 7, err);
    if (!strncmp (s, "$$CURRENT.", 10))
        return rm_acc_expr_path (s + 10, err);
    rm_error_set (err, RM_ERR_UNSUPPORTED,
                  "\"%s\": only the variables $$ROOT and $$CURRENT are supported", s);
    return NULL;
}

static rm_acc_expr_t *
parse_children (const bson_iter_t *it, bool object, int depth, bson_error_t *err)
{
    rm_acc_expr_t *e = bson_malloc0 (sizeof *e);
    bson_iter_t sub;
    size_t cap = 0;

    e->kind = object ? X_OBJECT : X_ARRAY;
    bson_iter_recurse (it, &sub);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        rm_acc_expr_t *kid;
        if (object && strchr (k, '.')) {
            rm_error_set (err, RM_ERR_USAGE, "field name \"%s\" in an expression may not contain '.'", k);
            rm_acc_expr_destroy (e);
            return NULL;
        }
        kid = parse (&sub, depth + 1, err);
        if (!kid) {
            if (object)
                rm_error_prefix (err, "\"%s\"", k);
            rm_acc_expr_destroy (e);
            return NULL;
        }
        if (e->n == cap) {
            cap = cap ? cap * 2 : 4;
            e->kids = bson_realloc (e->kids, cap * sizeof *e->kids);
            if (object)
                e->names = bson_realloc (e->names, cap * sizeof *e->names);
        }
        e->kids[e->n] = kid;
        if (object)
            e->names[e->n] = bson_strdup (k);
        e->n++;
    }
    return e;
}

static rm_acc_expr_t *
parse_document (const bson_iter_t *it, int depth, bson_error_t *err)
{
    bson_iter_t sub, lit;
    const char *k;

    if (!bson_iter_recurse (it, &sub) || !bson_iter_next (&sub))
        return make_literal (it); /* {} */
    k = bson_iter_key (&sub);
    if (k[0] != '$')
        return parse_children (it, true, depth, err);
    lit = sub;
    if (!strcmp (k, "$literal") && !bson_iter_next (&sub))
        return make_literal (&lit);
    rm_error_set (err, RM_ERR_UNSUPPORTED,
                  "expression operator \"%s\" is not supported (only field paths, "
                  "$$ROOT, literals, {\"$literal\": ...}, and documents and arrays of those)",
                  k);
    return NULL;
}

static rm_acc_expr_t *
parse (const bson_iter_t *it, int depth, bson_error_t *err)
{
    if (depth > EXPR_MAX_DEPTH) {
        rm_error_set (err, RM_ERR_USAGE, "expression nested more than %d levels deep",
                      EXPR_MAX_DEPTH);
        return NULL;
    }
    if (BSON_ITER_HOLDS_UTF8 (it)) {
        const char *s = bson_iter_utf8 (it, NULL);
        if (s[0] == '$')
            return parse_string (s, err);
    } else if (BSON_ITER_HOLDS_DOCUMENT (it)) {
        return parse_document (it, depth, err);
    } else if (BSON_ITER_HOLDS_ARRAY (it)) {
        return parse_children (it, false, depth, err);
    }
    return make_literal (it);
}

rm_acc_expr_t *
rm_acc_expr_parse (const bson_iter_t *it, bson_error_t *err)
{
    return parse (it, 0, err);
}

bool
rm_acc_expr_literal (const rm_acc_expr_t *e, bson_iter_t *out)
{
    return e->kind == X_LITERAL && bson_iter_init_find (out, e->lit, "v");
}

/* ---- field paths */

typedef enum { P_MISSING, P_FOUND, P_ARRAY } pfind_t;

/* Walks p from component `from` in the document (doc, len) through nested
 * documents. P_FOUND: *out is the value. P_ARRAY: *out is an array met
 * before the last component and *next the component to apply to its
 * elements. */
static pfind_t
path_find (const rm_path_t *p, size_t from, const uint8_t *doc, uint32_t len, bson_iter_t *out,
           size_t *next)
{
    bson_iter_t it;

    for (size_t i = from;; i++) {
        if (!rm_doc_field (doc, len, p->parts[i], p->lens[i], &it))
            return P_MISSING;
        if (i + 1 == p->n) {
            *out = it;
            return P_FOUND;
        }
        if (BSON_ITER_HOLDS_ARRAY (&it)) {
            *out = it;
            *next = i + 1;
            return P_ARRAY;
        }
        if (!BSON_ITER_HOLDS_DOCUMENT (&it))
            return P_MISSING;
        bson_iter_document (&it, &len, &doc);
    }
}

static bool path_append_from (const rm_path_t *p, size_t from, const uint8_t *doc, uint32_t len,
                              bson_t *dst, const char *key, int keylen);

/* Appends as key the array of p's values (from component `from`) in the
 * documents of the array at arr. */
static void
path_append_array (const rm_path_t *p, size_t from, const bson_iter_t *arr, bson_t *dst,
                   const char *key, int keylen)
{
    bson_t child;
    bson_iter_t e;
    uint32_t i = 0;

    bson_append_array_begin (dst, key, keylen, &child);
    if (bson_iter_recurse (arr, &e)) {
        while (bson_iter_next (&e)) {
            const uint8_t *data;
            uint32_t dlen;
            char buf[16];
            const char *ik;
            size_t kl;

            if (!BSON_ITER_HOLDS_DOCUMENT (&e))
                continue;
            bson_iter_document (&e, &dlen, &data);
            kl = bson_uint32_to_string (i, &ik, buf, sizeof buf);
            if (path_append_from (p, from, data, dlen, &child, ik, (int) kl))
                i++;
        }
    }
    bson_append_array_end (dst, &child);
}

static bool
path_append_from (const rm_path_t *p, size_t from, const uint8_t *doc, uint32_t len, bson_t *dst,
                  const char *key, int keylen)
{
    bson_iter_t v;
    size_t next = 0;

    switch (path_find (p, from, doc, len, &v, &next)) {
    case P_FOUND:
        bson_append_iter (dst, key, keylen, &v);
        return true;
    case P_ARRAY:
        path_append_array (p, next, &v, dst, key, keylen);
        return true;
    default:
        return false;
    }
}

/* ---- evaluation */

bool
rm_acc_expr_append (const rm_acc_expr_t *e, const uint8_t *doc, uint32_t len, bson_t *dst,
                    const char *key, int keylen, bool null_if_missing)
{
    bson_t child, root;
    bson_iter_t lit;

    switch (e->kind) {
    case X_LITERAL:
        if (!bson_iter_init_find (&lit, e->lit, "v"))
            break;
        bson_append_iter (dst, key, keylen, &lit);
        return true;
    case X_ROOT:
        if (!bson_init_static (&root, doc, len))
            break;
        bson_append_document (dst, key, keylen, &root);
        return true;
    case X_PATH:
        if (path_append_from (&e->path, 0, doc, len, dst, key, keylen))
            return true;
        break;
    case X_OBJECT:
        /* A field whose value is missing is left out, as the server does. */
        bson_append_document_begin (dst, key, keylen, &child);
        for (size_t i = 0; i < e->n; i++)
            rm_acc_expr_append (e->kids[i], doc, len, &child, e->names[i], -1, false);
        bson_append_document_end (dst, &child);
        return true;
    case X_ARRAY:
        /* An element whose value is missing becomes null. */
        bson_append_array_begin (dst, key, keylen, &child);
        for (size_t i = 0; i < e->n; i++) {
            char buf[16];
            const char *ik;
            size_t kl = bson_uint32_to_string ((uint32_t) i, &ik, buf, sizeof buf);
            rm_acc_expr_append (e->kids[i], doc, len, &child, ik, (int) kl, true);
        }
        bson_append_array_end (dst, &child);
        return true;
    }
    if (null_if_missing)
        bson_append_null (dst, key, keylen);
    return false;
}

bool
rm_acc_expr_eval (const rm_acc_expr_t *e, const uint8_t *doc, uint32_t len, bson_t *scratch,
                  bson_iter_t *out)
{
    size_t next = 0;

    if (e->kind == X_LITERAL)
        return bson_iter_init_find (out, e->lit, "v");
    if (e->kind == X_PATH) {
        /* The common case, a value in the document: no copy. */
        pfind_t f = path_find (&e->path, 0, doc, len, out, &next);
        if (f != P_ARRAY)
            return f == P_FOUND;
        bson_reinit (scratch);
        path_append_array (&e->path, next, out, scratch, "v", 1);
    } else {
        bson_reinit (scratch);
        if (!rm_acc_expr_append (e, doc, len, scratch, "v", 1, false))
            return false;
    }
    return bson_iter_init_find (out, scratch, "v");
}
