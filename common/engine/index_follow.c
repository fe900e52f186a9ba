/* Indexes that follow the plan (remodel/indexes.h): each step's effect on
 * the index specifications of the namespaces it changes, called through
 * its row's `indexes` (step_table.c; NULL: it changes no indexed field).
 * The steps that only add fields (set, version, denormalize, summarize)
 * and the buckets (whose metadata step_bucket.c writes) have none.
 *
 * Every part of a specification that names fields goes through one
 * function per step (a path_fn): the key, a partialFilterExpression's
 * field names (inside $and/$or too), a text index's weights and a
 * wildcard index's wildcardProjection. The other options (unique, sparse,
 * collation, expireAfterSeconds, hidden...) are kept as they are, except
 * where the index moves to another namespace and their meaning would
 * change (uniqueness across array elements, a TTL on an array). */
#include <stdio.h>
#include <string.h>

#include "remodel/buf.h"
#include "remodel/extjson.h"
#include "remodel/indexes.h"
#include "step_class.h"

typedef enum { IX_KEY, IX_FILTER, IX_WEIGHTS, IX_WILDCARD } where_t;
typedef enum { PATH_KEEP, PATH_MAP, PATH_DROP } verdict_t;

/* A field path of a specification: kept, mapped (*to, allocated), or the
 * index dropped. */
typedef verdict_t (*path_fn) (void *ctx, where_t where, const char *path, char **to);

/* ---- the set of namespaces ---- */

void
rm_ixplan_init (rm_ixplan_t *p)
{
    memset (p, 0, sizeof *p);
}

static void
ns_clear (rm_ixns_t *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        bson_destroy (ns->specs[i]);
    bson_free (ns->specs);
    bson_free (ns->ns);
}

void
rm_ixplan_destroy (rm_ixplan_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        ns_clear (&p->ns[i]);
    bson_free (p->ns);
    for (size_t i = 0; i < p->n_changes; i++)
        bson_free (p->changes[i]);
    bson_free (p->changes);
    memset (p, 0, sizeof *p);
}

static void
ns_append (rm_ixns_t *ns, bson_t *spec)
{
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 4;
        ns->specs = bson_realloc (ns->specs, ns->cap * sizeof *ns->specs);
    }
    ns->specs[ns->n++] = spec;
}

static void
ns_remove (rm_ixns_t *ns, size_t i)
{
    bson_destroy (ns->specs[i]);
    memmove (&ns->specs[i], &ns->specs[i + 1], (ns->n - i - 1) * sizeof *ns->specs);
    ns->n--;
}

void
rm_ixplan_add (rm_ixplan_t *p, const char *name, const bson_t *indexes)
{
    rm_ixns_t *ns;
    bson_iter_t it;
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 8;
        p->ns = bson_realloc (p->ns, p->cap * sizeof *p->ns);
    }
    ns = &p->ns[p->n++];
    memset (ns, 0, sizeof *ns);
    ns->ns = bson_strdup (name);
    ns->known = indexes != NULL;
    if (indexes && bson_iter_init (&it, indexes))
        while (bson_iter_next (&it)) {
            uint32_t len;
            const uint8_t *data;
            if (!BSON_ITER_HOLDS_DOCUMENT (&it))
                continue;
            bson_iter_document (&it, &len, &data);
            ns_append (ns, bson_new_from_data (data, len));
        }
}

rm_ixns_t *
rm_ixplan_find (rm_ixplan_t *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp (p->ns[i].ns, name))
            return &p->ns[i];
    return NULL;
}

static void
say (rm_ixplan_t *p, const rm_step_t *s, const char *ns, const char *index, const char *fmt,
     ...) BSON_GNUC_PRINTF (5, 6);

/* One line: "NS: index \"NAME\": WHAT (step N, OP)". */
static void
say (rm_ixplan_t *p, const rm_step_t *s, const char *ns, const char *index, const char *fmt, ...)
{
    va_list ap;
    char *what;
    va_start (ap, fmt);
    what = bson_strdupv_printf (fmt, ap);
    va_end (ap);
    p->changes = bson_realloc (p->changes, (p->n_changes + 1) * sizeof *p->changes);
    p->changes[p->n_changes++] =
        bson_strdup_printf ("%s: index \"%s\": %s (step %zu, %s)", ns, index, what, s->index, s->op);
    bson_free (what);
}

/* ---- specifications ---- */

static const char *
spec_name (const bson_t *spec)
{
    bson_iter_t it;
    if (bson_iter_init_find (&it, spec, "name") && BSON_ITER_HOLDS_UTF8 (&it))
        return bson_iter_utf8 (&it, NULL);
    return "";
}

static bool
spec_doc (const bson_t *spec, const char *key, bson_t *out)
{
    bson_iter_t it;
    uint32_t len;
    const uint8_t *data;
    if (!bson_iter_init_find (&it, spec, key) || !BSON_ITER_HOLDS_DOCUMENT (&it))
        return false;
    bson_iter_document (&it, &len, &data);
    return bson_init_static (out, data, len);
}

static bool
spec_flag (const bson_t *spec, const char *key)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, spec, key) && bson_iter_as_bool (&it);
}

static bool
spec_has (const bson_t *spec, const char *key)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, spec, key);
}

/* The _id index, which every collection has and no step changes. */
static bool
is_id_index (const bson_t *spec)
{
    bson_t key;
    bson_iter_t it;
    if (!strcmp (spec_name (spec), "_id_"))
        return true;
    return spec_doc (spec, "key", &key) && bson_count_keys (&key) == 1 &&
           bson_iter_init_find (&it, &key, "_id");
}

static bool
key_has_value (const bson_t *spec, const char *value)
{
    bson_t key;
    bson_iter_t it;
    if (!spec_doc (spec, "key", &key) || !bson_iter_init (&it, &key))
        return false;
    while (bson_iter_next (&it))
        if (BSON_ITER_HOLDS_UTF8 (&it) && !strcmp (bson_iter_utf8 (&it, NULL), value))
            return true;
    return false;
}

static void
name_part (rm_buf_t *b, const char *field, const bson_iter_t *v)
{
    char num[64];
    const char *text = num;
    rm_buf_append (b, field, strlen (field));
    rm_buf_append (b, "_", 1);
    switch (bson_iter_type (v)) {
    case BSON_TYPE_INT32:
        snprintf (num, sizeof num, "%d", bson_iter_int32 (v));
        break;
    case BSON_TYPE_INT64:
        snprintf (num, sizeof num, "%lld", (long long) bson_iter_int64 (v));
        break;
    case BSON_TYPE_DOUBLE: {
        double d = bson_iter_double (v);
        if (d == (double) (long long) d)
            snprintf (num, sizeof num, "%lld", (long long) d);
        else
            snprintf (num, sizeof num, "%g", d);
        break;
    }
    case BSON_TYPE_UTF8:
        text = bson_iter_utf8 (v, NULL);
        break;
    default:
        snprintf (num, sizeof num, "%s", bson_iter_as_bool (v) ? "1" : "0");
    }
    rm_buf_append (b, text, strlen (text));
}

/* b's bytes as a string (libbson's strndup reads one byte past n). */
static char *
buf_string (rm_buf_t *b)
{
    rm_buf_append (b, "", 1);
    return bson_strdup ((const char *) b->data);
}

char *
rm_index_default_name (const bson_t *key, const bson_t *weights)
{
    rm_buf_t b;
    bson_iter_t it, w;
    char *out;
    rm_buf_init (&b);
    if (bson_iter_init (&it, key))
        while (bson_iter_next (&it)) {
            const char *k = bson_iter_key (&it);
            if (!strcmp (k, "_ftsx"))
                continue;
            if (!strcmp (k, "_fts")) {
                /* the text fields as the user gave them: the weights' */
                if (weights && bson_iter_init (&w, weights))
                    while (bson_iter_next (&w)) {
                        if (b.len)
                            rm_buf_append (&b, "_", 1);
                        rm_buf_append (&b, bson_iter_key (&w), strlen (bson_iter_key (&w)));
                        rm_buf_append (&b, "_text", 5);
                    }
                continue;
            }
            if (b.len)
                rm_buf_append (&b, "_", 1);
            name_part (&b, k, &it);
        }
    out = buf_string (&b);
    rm_buf_destroy (&b);
    return out;
}

static char *
spec_default_name (const bson_t *spec)
{
    bson_t key, weights;
    bool has_w = spec_doc (spec, "weights", &weights);
    if (!spec_doc (spec, "key", &key))
        return bson_strdup ("");
    return rm_index_default_name (&key, has_w ? &weights : NULL);
}

static char *
json_of (const bson_t *doc)
{
    rm_buf_t b;
    char *out;
    rm_buf_init (&b);
    rm_extjson_doc (&b, bson_get_data (doc), doc->len, RM_EXTJSON_RELAXED, false);
    out = buf_string (&b);
    rm_buf_destroy (&b);
    return out;
}

static char *
key_json (const bson_t *spec)
{
    bson_t key;
    return spec_doc (spec, "key", &key) ? json_of (&key) : bson_strdup ("{}");
}

/* What stopped a mapping: the field and where it was. */
typedef struct {
    char *field;
    where_t where;
    size_t position; /* in the key, 0-based */
} dropped_t;

static const char *
where_text (where_t w)
{
    return w == IX_KEY ? "key" : w == IX_FILTER ? "partialFilterExpression"
                                 : w == IX_WEIGHTS ? "weights" : "wildcardProjection";
}

/* Copies doc's fields into out, each name through fn (field names only;
 * a filter's operators recursed into for $and/$or). */
static bool
map_fields (const bson_t *doc, bson_t *out, where_t where, path_fn fn, void *ctx,
            unsigned *changed, dropped_t *d)
{
    bson_iter_t it;
    size_t pos = 0;
    if (!bson_iter_init (&it, doc))
        return true;
    for (; bson_iter_next (&it); pos++) {
        const char *k = bson_iter_key (&it);
        char *to = NULL;
        verdict_t v;
        if (where == IX_FILTER && k[0] == '$') {
            /* {$and: [{...}, ...]}: each clause's fields */
            if (BSON_ITER_HOLDS_ARRAY (&it) || BSON_ITER_HOLDS_DOCUMENT (&it)) {
                bson_iter_t sub;
                bson_t child;
                bool arr = BSON_ITER_HOLDS_ARRAY (&it);
                bson_iter_recurse (&it, &sub);
                if (arr)
                    bson_append_array_begin (out, k, -1, &child);
                else
                    bson_append_document_begin (out, k, -1, &child);
                while (bson_iter_next (&sub)) {
                    if (BSON_ITER_HOLDS_DOCUMENT (&sub)) {
                        bson_t clause, into;
                        uint32_t len;
                        const uint8_t *data;
                        bool ok;
                        bson_iter_document (&sub, &len, &data);
                        bson_init_static (&clause, data, len);
                        bson_append_document_begin (&child, bson_iter_key (&sub), -1, &into);
                        ok = map_fields (&clause, &into, where, fn, ctx, changed, d);
                        bson_append_document_end (&child, &into);
                        if (!ok) {
                            if (arr)
                                bson_append_array_end (out, &child);
                            else
                                bson_append_document_end (out, &child);
                            return false;
                        }
                    } else {
                        bson_append_iter (&child, NULL, 0, &sub);
                    }
                }
                if (arr)
                    bson_append_array_end (out, &child);
                else
                    bson_append_document_end (out, &child);
            } else {
                bson_append_iter (out, NULL, 0, &it);
            }
            continue;
        }
        /* a text index's own key fields, and a wildcard's "$**" alone */
        if (where == IX_KEY && (!strcmp (k, "_fts") || !strcmp (k, "_ftsx")))
            v = PATH_KEEP;
        else
            v = fn (ctx, where, k, &to);
        if (v == PATH_DROP) {
            d->field = bson_strdup (k);
            d->where = where;
            d->position = pos;
            bson_free (to);
            return false;
        }
        if (v == PATH_MAP) {
            if (strcmp (to, k))
                *changed |= 1u << where;
            bson_append_iter (out, to, -1, &it);
            bson_free (to);
        } else {
            bson_append_iter (out, NULL, 0, &it);
        }
    }
    return true;
}

/* spec with every field name through fn into *out (NULL and false when fn
 * drops it: *d says why); *changed: the parts that changed, 1 << where_t. */
static bool
map_spec (const bson_t *spec, path_fn fn, void *ctx, bson_t **out, unsigned *changed,
          dropped_t *d)
{
    bson_iter_t it;
    bson_t *o = bson_new ();
    *changed = false;
    memset (d, 0, sizeof *d);
    bson_iter_init (&it, spec);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        where_t w;
        bson_t sub, into;
        uint32_t len;
        const uint8_t *data;
        bool ok;
        if (!strcmp (k, "key"))
            w = IX_KEY;
        else if (!strcmp (k, "partialFilterExpression"))
            w = IX_FILTER;
        else if (!strcmp (k, "weights"))
            w = IX_WEIGHTS;
        else if (!strcmp (k, "wildcardProjection"))
            w = IX_WILDCARD;
        else {
            bson_append_iter (o, NULL, 0, &it);
            continue;
        }
        if (!BSON_ITER_HOLDS_DOCUMENT (&it)) {
            bson_append_iter (o, NULL, 0, &it);
            continue;
        }
        bson_iter_document (&it, &len, &data);
        bson_init_static (&sub, data, len);
        bson_append_document_begin (o, k, -1, &into);
        ok = map_fields (&sub, &into, w, fn, ctx, changed, d);
        bson_append_document_end (o, &into);
        if (!ok) {
            bson_destroy (o);
            *out = NULL;
            return false;
        }
    }
    *out = o;
    return true;
}

/* spec with its keys in drop[] removed and name/ns set (NULL: kept). */
static bson_t *
spec_edit (const bson_t *spec, const char *const *drop, const char *name, const char *ns)
{
    bson_iter_t it;
    bson_t *o = bson_new ();
    bson_iter_init (&it, spec);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        bool skip = false;
        for (size_t i = 0; drop && drop[i]; i++)
            skip = skip || !strcmp (k, drop[i]);
        if (skip)
            continue;
        if (name && !strcmp (k, "name"))
            BSON_APPEND_UTF8 (o, "name", name);
        else if (ns && !strcmp (k, "ns"))
            BSON_APPEND_UTF8 (o, "ns", ns);
        else
            bson_append_iter (o, NULL, 0, &it);
    }
    return o;
}

/* Whether path is p or under it. */
static bool
at_or_under (const char *path, const char *p)
{
    size_t n = strlen (p);
    return !strncmp (path, p, n) && (path[n] == '\0' || path[n] == '.');
}

static size_t
find_name (const rm_ixns_t *ns, const char *name)
{
    for (size_t i = 0; i < ns->n; i++)
        if (!strcmp (spec_name (ns->specs[i]), name))
            return i;
    return (size_t) -1;
}

/* The index of ns with the same key as spec, if any. */
static const char *
same_key (const rm_ixns_t *ns, const bson_t *spec, size_t except)
{
    bson_t a, b;
    if (!spec_doc (spec, "key", &a))
        return NULL;
    for (size_t i = 0; i < ns->n; i++)
        if (i != except && spec_doc (ns->specs[i], "key", &b) && a.len == b.len &&
            !memcmp (bson_get_data (&a), bson_get_data (&b), a.len))
            return spec_name (ns->specs[i]);
    return NULL;
}

/* ---- in place: rename, unset ---- */

/* The paths a field step removes (from) or moves (from, to). */
typedef struct {
    const char **from, **to;
    size_t n;
} fields_ctx_t;

static verdict_t
rename_path (void *ctx, where_t where, const char *path, char **to)
{
    const fields_ctx_t *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (at_or_under (path, f->from[i])) {
            *to = bson_strdup_printf ("%s%s", f->to[i], path + strlen (f->from[i]));
            return PATH_MAP;
        }
    return PATH_KEEP;
}

static verdict_t
unset_path (void *ctx, where_t where, const char *path, char **to)
{
    const fields_ctx_t *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (at_or_under (path, f->from[i]))
            return PATH_DROP;
    return PATH_KEEP;
}

static void
follow_rename (rm_ixplan_t *p, const rm_step_t *s, rm_ixns_t *ns, fields_ctx_t *c)
{
    size_t n0 = ns->n;
    for (size_t i = 0; i < n0; i++) {
        bson_t *next = NULL;
        unsigned changed = 0;
        dropped_t d = {NULL, IX_KEY, 0};
        char *old_default, *new_name = NULL, *before, *after;
        const char *name = spec_name (ns->specs[i]), *dup;
        if (is_id_index (ns->specs[i]) ||
            !map_spec (ns->specs[i], rename_path, c, &next, &changed, &d) || !changed) {
            bson_free (d.field);
            if (!changed && next)
                bson_destroy (next);
            continue;
        }
        if (!s->filter && (dup = same_key (ns, next, i))) {
            /* two indexes on one key: mongorestore refuses the second */
            char *k = key_json (next);
            say (p, s, ns->ns, name, "dropped: its new key %s is index \"%s\"'s", k, dup);
            bson_free (k);
            bson_destroy (next);
            ns_remove (ns, i);
            ns->changed = true;
            n0--;
            i--; /* the next spec is at i now (unsigned wrap, then ++) */
            continue;
        }
        old_default = spec_default_name (ns->specs[i]);
        if (s->filter) {
            /* the documents the filter leaves out keep the old names: the
             * index stays, and a copy on the new names is made */
            char *copy_name = spec_default_name (next);
            char *k = key_json (next);
            if (find_name (ns, copy_name) != (size_t) -1 || same_key (ns, next, (size_t) -1)) {
                say (p, s, ns->ns, name, "kept (the step's filter renames in some documents "
                     "only); no copy on key %s: an index of that name or key exists", k);
            } else {
                bson_t *copy = spec_edit (next, NULL, copy_name, NULL);
                say (p, s, ns->ns, name, "kept (the step's filter renames in some documents "
                     "only), and a copy \"%s\" made on key %s, every option kept", copy_name, k);
                ns_append (ns, copy);
                ns->changed = true;
            }
            bson_free (copy_name);
            bson_free (k);
            bson_free (old_default);
            bson_destroy (next);
            continue;
        }
        if (!strcmp (old_default, name)) {
            new_name = spec_default_name (next);
            if (find_name (ns, new_name) != (size_t) -1) {
                /* another index has that name already: keep this one's */
                bson_free (new_name);
                new_name = NULL;
            }
        }
        before = key_json (ns->specs[i]);
        after = key_json (next);
        {
            /* the other parts that name the renamed fields */
            char parts[128] = "";
            for (int w = IX_FILTER; w <= IX_WILDCARD; w++)
                if (changed & (1u << w)) {
                    strcat (parts, ", its ");
                    strcat (parts, where_text ((where_t) w));
                    strcat (parts, " too");
                }
            if (new_name) {
                bson_t *named = spec_edit (next, NULL, new_name, NULL);
                bson_destroy (next);
                next = named;
                say (p, s, ns->ns, name, "now \"%s\", key %s -> %s%s, every option kept",
                     new_name, before, after, parts);
            } else {
                say (p, s, ns->ns, name, "key %s -> %s%s%s, every option kept", before, after,
                     parts, strcmp (old_default, name) ? " (its own name kept)"
                                                       : " (name kept: the new default name "
                                                         "is another index's)");
            }
        }
        ns->changed = true;
        bson_destroy (ns->specs[i]);
        ns->specs[i] = next;
        bson_free (old_default);
        bson_free (new_name);
        bson_free (before);
        bson_free (after);
    }
}

static void
follow_unset (rm_ixplan_t *p, const rm_step_t *s, rm_ixns_t *ns, fields_ctx_t *c)
{
    for (size_t i = 0; i < ns->n;) {
        bson_t *next = NULL, key;
        unsigned changed;
        dropped_t d = {NULL, IX_KEY, 0};
        if (is_id_index (ns->specs[i]) ||
            map_spec (ns->specs[i], unset_path, c, &next, &changed, &d)) {
            if (next)
                bson_destroy (next);
            i++;
            continue;
        }
        if (s->filter) {
            say (p, s, ns->ns, spec_name (ns->specs[i]), "kept, though its %s names \"%s\": "
                 "the step's filter unsets it in some documents only", where_text (d.where),
                 d.field);
            bson_free (d.field);
            i++;
            continue;
        }
        if (d.where == IX_KEY && d.position == 0 && spec_doc (ns->specs[i], "key", &key) &&
            bson_count_keys (&key) > 1) {
            char *k = key_json (ns->specs[i]);
            say (p, s, ns->ns, spec_name (ns->specs[i]),
                 "dropped: \"%s\", the first field of its compound key %s, is unset (no index "
                 "on the remaining fields is made: create one if queries need it)",
                 d.field, k);
            bson_free (k);
        } else {
            say (p, s, ns->ns, spec_name (ns->specs[i]), "dropped: its %s names \"%s\", which "
                 "is unset", where_text (d.where), d.field);
        }
        bson_free (d.field);
        ns_remove (ns, i);
        ns->changed = true;
    }
}

void
rm_fields_indexes (const rm_step_t *s, rm_ixplan_t *p)
{
    const rm_fields_t *f = &s->u.fields;
    rm_ixns_t *ns = rm_ixplan_find (p, f->in.text);
    fields_ctx_t c = {NULL, NULL, 0};
    bson_iter_t it;
    if (!ns)
        return;
    c.from = bson_malloc0 ((f->n + 1) * sizeof *c.from);
    c.to = bson_malloc0 ((f->n + 1) * sizeof *c.to);
    if (s->kind == RM_STEP_RENAME || s->kind == RM_STEP_UNSET) {
        for (size_t i = 0; i < f->n; i++) {
            c.from[i] = f->paths[i].text;
            c.to[i] = s->kind == RM_STEP_RENAME ? f->to[i].text : NULL;
        }
        c.n = f->n;
    } else if (s->kind == RM_STEP_SET && f->set_doc && bson_iter_init (&it, f->set_doc)) {
        /* a set writes fields, and removes those it sets to "$$REMOVE";
         * one that may give a value (a $cond) leaves the index */
        while (bson_iter_next (&it) && c.n < f->n)
            if (BSON_ITER_HOLDS_UTF8 (&it) && !strcmp (bson_iter_utf8 (&it, NULL), "$$REMOVE"))
                c.from[c.n++] = bson_iter_key (&it);
    }
    if (s->kind == RM_STEP_RENAME)
        follow_rename (p, s, ns, &c);
    else if (c.n)
        follow_unset (p, s, ns, &c);
    bson_free (c.from);
    bson_free (c.to);
}

/* ---- moved to another namespace: embed, extract ---- */

/* Adds spec (taken) to the target of a move, or says why not. */
static void
move_into (rm_ixplan_t *p, const rm_step_t *s, rm_ixns_t *to, const char *from_ns,
           const char *from_name, bson_t *spec, const char *how)
{
    const char *dup = same_key (to, spec, (size_t) -1);
    const char *name = spec_name (spec);
    if (!to->known) {
        say (p, s, from_ns, from_name, "not carried to %s, which has no metadata", to->ns);
        bson_destroy (spec);
        return;
    }
    if (dup) {
        say (p, s, to->ns, dup, "already indexes the key of %s's \"%s\"", from_ns, from_name);
        bson_destroy (spec);
        return;
    }
    if (find_name (to, name) != (size_t) -1) {
        say (p, s, from_ns, from_name, "not carried to %s: it has an index named \"%s\"",
             to->ns, name);
        bson_destroy (spec);
        return;
    }
    {
        char *k = key_json (spec);
        say (p, s, to->ns, name, "new, key %s, from %s's \"%s\"%s", k, from_ns, from_name, how);
        bson_free (k);
    }
    ns_append (to, spec);
    to->changed = true;
}

typedef struct {
    const rm_embed_t *e;
} embed_ctx_t;

static bool
has_text_index (const rm_ixns_t *ns)
{
    for (size_t j = 0; j < ns->n; j++)
        if (key_has_value (ns->specs[j], "text"))
            return true;
    return false;
}

/* Whether embed's project leaves the child's top-level field in place. */
static bool
embedded (const rm_embed_t *e, const char *path)
{
    size_t n = strcspn (path, ".");
    bool inclusive = e->project_inclusive;
    if (!e->project)
        return true;
    for (size_t i = 0; i < e->n_proj; i++)
        if (strlen (e->proj[i].name) == n && !strncmp (e->proj[i].name, path, n))
            return e->proj[i].kind == RM_PROJ_INCLUDE;
    /* _id is in an inclusion unless excluded */
    return !inclusive || (n == 3 && !strncmp (path, "_id", 3));
}

static verdict_t
embed_path (void *ctx, where_t where, const char *path, char **to)
{
    const rm_embed_t *e = ((embed_ctx_t *) ctx)->e;
    if (where == IX_KEY && at_or_under (path, e->foreign.text))
        return PATH_DROP;
    if (!embedded (e, path))
        return PATH_DROP;
    *to = bson_strdup_printf ("%s.%s", e->as, path);
    return PATH_MAP;
}

void
rm_embed_indexes (const rm_step_t *s, rm_ixplan_t *p)
{
    const rm_embed_t *e = &s->u.embed;
    embed_ctx_t c = {e};
    rm_ixns_t *from = rm_ixplan_find (p, e->from.text), *into = rm_ixplan_find (p, e->into.text);
    if (!from || !into || from == into)
        return;
    for (size_t i = 0; i < from->n; i++) {
        const bson_t *spec = from->specs[i];
        const char *name = spec_name (spec);
        bson_t *next, *done;
        unsigned changed;
        dropped_t d;
        char *old_default, *new_name;
        const char *drop[] = {"unique", "expireAfterSeconds", NULL};
        rm_buf_t how;
        if (is_id_index (spec))
            continue;
        if (!map_spec (spec, embed_path, &c, &next, &changed, &d)) {
            if (d.where == IX_KEY && at_or_under (d.field, e->foreign.text))
                say (p, s, from->ns, name, "not carried to %s: its key holds the join key "
                     "\"%s\"", into->ns, d.field);
            else
                say (p, s, from->ns, name, "not carried to %s: its %s names \"%s\", which "
                     "project leaves out", into->ns, where_text (d.where), d.field);
            bson_free (d.field);
            continue;
        }
        if (key_has_value (spec, "hashed") || spec_has (spec, "wildcardProjection") ||
            (key_has_value (spec, "text") && has_text_index (into))) {
            say (p, s, from->ns, name, "not carried to %s: %s", into->ns,
                 key_has_value (spec, "hashed")
                     ? "a hashed index cannot index the elements of an array"
                 : spec_has (spec, "wildcardProjection")
                     ? "a wildcard index with a wildcardProjection cannot be moved under a path"
                     : "the parent has a text index already (one per collection)");
            bson_destroy (next);
            continue;
        }
        old_default = spec_default_name (spec);
        new_name = !strcmp (old_default, name) ? spec_default_name (next)
                                               : bson_strdup_printf ("%s_%s", e->as, name);
        done = spec_edit (next, drop, new_name, into->ns);
        bson_destroy (next);
        rm_buf_init (&how);
        rm_buf_append (&how, ", multikey on the array \"", 25);
        rm_buf_append (&how, e->as, strlen (e->as));
        rm_buf_append (&how, "\"", 1);
        if (spec_flag (spec, "unique")) {
            static const char why[] =
                "; not unique: unique there would refuse two parents holding equal elements, "
                "and not refuse two equal elements in one parent";
            rm_buf_append (&how, why, sizeof why - 1);
        }
        if (spec_has (spec, "expireAfterSeconds")) {
            static const char why[] = "; no expireAfterSeconds: a TTL on an array would "
                                      "delete the whole parent at its earliest date";
            rm_buf_append (&how, why, sizeof why - 1);
        }
        rm_buf_append (&how, "", 1);
        move_into (p, s, into, from->ns, name, done, (const char *) how.data);
        rm_buf_destroy (&how);
        bson_free (old_default);
        bson_free (new_name);
    }
}

typedef struct {
    const rm_extract_t *x;
    bool child; /* the children's side: only what is under the array */
} extract_ctx_t;

static verdict_t
extract_path (void *ctx, where_t where, const char *path, char **to)
{
    extract_ctx_t *c = ctx;
    const char *a = c->x->path.text;
    size_t n = strlen (a);
    if (c->child) {
        if (!strncmp (path, a, n) && path[n] == '.') {
            *to = bson_strdup (path + n + 1);
            return PATH_MAP;
        }
        return PATH_DROP;
    }
    /* the parent: parentRef removes the array; the others leave the
     * children's _ids there, and nothing under it */
    if (c->x->style == RM_STYLE_PARENT_REF ? at_or_under (path, a)
                                           : (!strncmp (path, a, n) && path[n] == '.'))
        return PATH_DROP;
    return PATH_KEEP;
}

void
rm_extract_indexes (const rm_step_t *s, rm_ixplan_t *p)
{
    const rm_extract_t *x = &s->u.extract;
    extract_ctx_t parent = {x, false}, child = {x, true};
    rm_ixns_t *from = rm_ixplan_find (p, x->from.text), *to = rm_ixplan_find (p, x->to.text);
    if (!from || !to || from == to)
        return;
    for (size_t i = 0; i < from->n;) {
        const bson_t *spec = from->specs[i];
        const char *name = spec_name (spec);
        bson_t *next = NULL;
        unsigned changed;
        dropped_t d = {NULL, IX_KEY, 0}, parent_d;
        if (is_id_index (spec) || map_spec (spec, extract_path, &parent, &next, &changed, &d)) {
            if (next)
                bson_destroy (next);
            i++;
            continue;
        }
        parent_d = d;
        /* it named the array: to the children, when all of it is theirs */
        if (map_spec (spec, extract_path, &child, &next, &changed, &d)) {
            const char *drop[] = {"unique", "expireAfterSeconds", NULL};
            char *old_default = spec_default_name (spec);
            char *new_name = !strcmp (old_default, name) ? spec_default_name (next)
                                                         : bson_strdup (name);
            bson_t *done = spec_edit (next, drop, new_name, to->ns);
            char *how = bson_strdup_printf (
                ", the elements of \"%s\"%s%s", x->path.text,
                spec_flag (spec, "unique")
                    ? "; not unique: unique on the parents allowed two equal elements in one "
                      "parent"
                    : "",
                spec_has (spec, "expireAfterSeconds")
                    ? "; no expireAfterSeconds: it expired whole parents, not elements"
                    : "");
            bson_destroy (next);
            move_into (p, s, to, from->ns, name, done, how);
            if (!s->filter)
                say (p, s, from->ns, name, "dropped: its fields moved with \"%s\" to %s",
                     x->path.text, to->ns);
            bson_free (how);
            bson_free (old_default);
            bson_free (new_name);
        } else if (s->filter) {
            /* said below */
        } else if (!strcmp (d.field, x->path.text)) {
            say (p, s, from->ns, name, "dropped: its %s names the array \"%s\", which %s "
                 "(an index on whole elements is not carried to %s)", where_text (d.where),
                 d.field, x->style == RM_STYLE_PARENT_REF ? "goes to the children"
                                                          : "now holds the children's _ids",
                 to->ns);
        } else {
            say (p, s, from->ns, name, "dropped: its %s names \"%s\", which goes to %s, and "
                 "\"%s\", which the children do not have", where_text (parent_d.where),
                 parent_d.field, to->ns, d.field);
        }
        bson_free (d.field);
        if (s->filter) {
            /* the parents the filter leaves out keep their arrays */
            say (p, s, from->ns, name, "kept, though its %s names \"%s\": the step's filter "
                 "leaves the array in the parents it does not select", where_text (parent_d.where),
                 parent_d.field);
            bson_free (parent_d.field);
            i++;
            continue;
        }
        bson_free (parent_d.field);
        ns_remove (from, i);
        from->changed = true;
    }
}
