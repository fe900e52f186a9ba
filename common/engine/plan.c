/* Parsing and checking plans. Every error names the step (1-based), its
 * operation, the key and the reason, so a plan can be fixed before any
 * data is read. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"
#include "remodel/accum.h"
#include "remodel/nsname.h"
#include "remodel/plan.h"
#include "step_class.h"

const char *
rm_step_kind_name (rm_step_kind_t k)
{
    return rm_step_classes[k].name;
}

struct rm_plan_ctx {
    bson_error_t *err;
    size_t index;
    const char *op;
};
typedef rm_plan_ctx_t ctx_t;

static bool BSON_GNUC_PRINTF (3, 4)
fail (ctx_t *c, const char *key, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (why, sizeof why, fmt, ap);
    va_end (ap);
    if (key)
        rm_error_set (c->err, RM_ERR_USAGE, "plan: step %zu (%s): \"%s\": %s", c->index, c->op,
                      key, why);
    else
        rm_error_set (c->err, RM_ERR_USAGE, "plan: step %zu (%s): %s", c->index, c->op, why);
    return false;
}

static const char *
type_name (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_UTF8: return "a string";
    case BSON_TYPE_DOCUMENT: return "a document";
    case BSON_TYPE_ARRAY: return "an array";
    case BSON_TYPE_BOOL: return "a boolean";
    case BSON_TYPE_NULL: return "null";
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128: return "a number";
    default: return "another type";
    }
}

static bool
get_string (ctx_t *c, const bson_iter_t *it, const char **out)
{
    if (!BSON_ITER_HOLDS_UTF8 (it))
        return fail (c, bson_iter_key (it), "must be a string, not %s",
                     type_name (bson_iter_type (it)));
    uint32_t len;
    *out = bson_iter_utf8 (it, &len);
    if (!**out && len == 0)
        return fail (c, bson_iter_key (it), "must not be empty");
    if (strlen (*out) != len)
        return fail (c, bson_iter_key (it), "must not hold a NUL byte");
    return true;
}

static bool
get_int (ctx_t *c, const bson_iter_t *it, int64_t min, int64_t *out)
{
    if (!BSON_ITER_HOLDS_INT32 (it) && !BSON_ITER_HOLDS_INT64 (it) &&
        !(BSON_ITER_HOLDS_DOUBLE (it) && bson_iter_double (it) == (double) (int64_t) bson_iter_double (it)))
        return fail (c, bson_iter_key (it), "must be a whole number, not %s",
                     type_name (bson_iter_type (it)));
    *out = bson_iter_as_int64 (it);
    if (*out < min)
        return fail (c, bson_iter_key (it), "must be at least %lld", (long long) min);
    return true;
}

static bool
get_bool (ctx_t *c, const bson_iter_t *it, bool *out)
{
    if (!BSON_ITER_HOLDS_BOOL (it))
        return fail (c, bson_iter_key (it), "must be true or false, not %s",
                     type_name (bson_iter_type (it)));
    *out = bson_iter_bool (it);
    return true;
}

static bool
get_ns (ctx_t *c, const bson_iter_t *it, rm_nsref_t *ns)
{
    const char *text, *dot;
    if (!get_string (c, it, &text))
        return false;
    dot = strchr (text, '.');
    if (!dot || dot == text || !dot[1])
        return fail (c, bson_iter_key (it), "\"%s\" is not a namespace (db.collection)", text);
    ns->text = bson_strdup (text);
    ns->db = bson_strndup (text, (size_t) (dot - text));
    ns->coll = bson_strdup (dot + 1);
    {
        char why[160];
        if (!rm_nsname_check (ns->db, ns->coll, why, sizeof why))
            return fail (c, bson_iter_key (it), "\"%s\": %s", text, why);
    }
    return true;
}

static bool
get_path (ctx_t *c, const bson_iter_t *it, rm_path_t *p)
{
    const char *text;
    bson_error_t perr;
    if (!get_string (c, it, &text))
        return false;
    if (!rm_path_parse (p, text, &perr))
        return fail (c, bson_iter_key (it), "%s", perr.message);
    return true;
}

static bool
get_field_name (ctx_t *c, const bson_iter_t *it, char **out)
{
    const char *text;
    if (!get_string (c, it, &text))
        return false;
    if (strchr (text, '.') || text[0] == '$')
        return fail (c, bson_iter_key (it), "\"%s\" must be a plain field name (no dots, no $)",
                     text);
    *out = bson_strdup (text);
    return true;
}

static void
nsref_clear (rm_nsref_t *ns)
{
    bson_free (ns->db);
    bson_free (ns->coll);
    bson_free (ns->text);
    memset (ns, 0, sizeof *ns);
}

static bool
parse_sort (ctx_t *c, const bson_iter_t *it, rm_sortspec_t *s)
{
    bson_iter_t sub;
    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
        return fail (c, "sort", "must be a document like {\"field\": 1, \"other\": -1}");
    while (bson_iter_next (&sub)) {
        int64_t dir = BSON_ITER_HOLDS_NUMBER (&sub) ? bson_iter_as_int64 (&sub) : 0;
        bson_error_t perr;
        rm_sortkey_t *k;
        if (dir != 1 && dir != -1)
            return fail (c, "sort", "the direction of \"%s\" must be 1 or -1", bson_iter_key (&sub));
        s->keys = bson_realloc (s->keys, (s->n + 1) * sizeof *s->keys);
        k = &s->keys[s->n];
        memset (k, 0, sizeof *k);
        if (!rm_path_parse (&k->path, bson_iter_key (&sub), &perr))
            return fail (c, "sort", "%s", perr.message);
        k->dir = (int) dir;
        s->n++;
    }
    if (s->n == 0)
        return fail (c, "sort", "must name at least one field");
    return true;
}

static bool
parse_project (ctx_t *c, const bson_iter_t *it, rm_embed_t *e)
{
    bson_iter_t sub;
    uint32_t len;
    const uint8_t *data;
    int mode = -1; /* 1 inclusion, 0 exclusion */

    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
        return fail (c, "project", "must be a document like {\"name\": 1} or {\"secret\": 0}");
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        int v;
        if (strchr (k, '.') || k[0] == '$')
            return fail (c, "project", "\"%s\": only top-level field names can be projected", k);
        if (BSON_ITER_HOLDS_BOOL (&sub))
            v = bson_iter_bool (&sub);
        else if (BSON_ITER_HOLDS_NUMBER (&sub))
            v = bson_iter_as_int64 (&sub) != 0;
        else
            return fail (c, "project", "\"%s\": only 1/true (include) or 0/false (exclude) are supported", k);
        /* _id may be excluded in an inclusion projection, as in $project. */
        if (strcmp (k, "_id") == 0 && v == 0)
            continue;
        if (mode >= 0 && mode != v)
            return fail (c, "project", "mixes inclusion and exclusion (only _id may be excluded "
                         "from an inclusion)");
        mode = v;
    }
    bson_iter_document (it, &len, &data);
    e->project = bson_new_from_data (data, len);
    /* {"_id": 0} alone is an exclusion, as in $project. */
    e->project_inclusive = mode == 1;
    return true;
}

static bool
parse_embed (ctx_t *c, bson_iter_t *it, rm_embed_t *e)
{
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = get_ns (c, it, &e->from);
        else if (!strcmp (k, "into")) ok = get_ns (c, it, &e->into);
        else if (!strcmp (k, "localField")) ok = get_path (c, it, &e->local);
        else if (!strcmp (k, "foreignField")) ok = get_path (c, it, &e->foreign);
        else if (!strcmp (k, "as")) ok = get_field_name (c, it, &e->as);
        else if (!strcmp (k, "project")) ok = parse_project (c, it, e);
        else if (!strcmp (k, "sort")) ok = parse_sort (c, it, &e->sort);
        else if (!strcmp (k, "limit")) ok = get_int (c, it, 1, &e->limit);
        else if (!strcmp (k, "countAs")) ok = get_field_name (c, it, &e->count_as);
        else if (!strcmp (k, "keepSource")) ok = get_bool (c, it, &e->keep_source);
        else if (!strcmp (k, "maxItems")) ok = get_int (c, it, 1, &e->max_items);
        else if (!strcmp (k, "overflowTo")) ok = get_ns (c, it, &e->overflow_to);
        else if (!strcmp (k, "onOverflow")) {
            const char *v;
            ok = get_string (c, it, &v);
            if (ok && !strcmp (v, "error")) e->on_overflow = RM_OVERFLOW_ERROR;
            else if (ok && !strcmp (v, "outlier")) e->on_overflow = RM_OVERFLOW_OUTLIER;
            else if (ok) ok = fail (c, k, "must be \"error\" or \"outlier\", not \"%s\"", v);
        }
        if (!ok)
            return false;
    }
    if (e->count_as && e->as && !strcmp (e->count_as, e->as))
        return fail (c, "countAs", "must differ from \"as\"");
    if (e->limit && e->keep_source == false)
        return fail (c, "limit", "the subset pattern keeps the full set in \"from\": "
                     "set \"keepSource\": true (children beyond the limit would be lost)");
    if (e->overflow_to.text && e->on_overflow != RM_OVERFLOW_OUTLIER)
        return fail (c, "overflowTo", "only applies with \"onOverflow\": \"outlier\"");
    if (e->on_overflow == RM_OVERFLOW_OUTLIER && !e->overflow_to.text && e->into.text) {
        e->overflow_to.db = bson_strdup (e->into.db);
        /* The seeds' outlier pattern: products -> products_reviews_overflow. */
        e->overflow_to.coll = bson_strdup_printf ("%s_%s_overflow", e->into.coll, e->as ? e->as : "items");
        e->overflow_to.text = bson_strdup_printf ("%s.%s", e->overflow_to.db, e->overflow_to.coll);
    }
    if (e->from.text && e->into.text && !strcmp (e->from.text, e->into.text))
        return fail (c, "into", "must differ from \"from\" (%s)", e->from.text);
    return true;
}

static bool
parse_extract (ctx_t *c, bson_iter_t *it, rm_extract_t *x)
{
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = get_ns (c, it, &x->from);
        else if (!strcmp (k, "to")) ok = get_ns (c, it, &x->to);
        else if (!strcmp (k, "path")) ok = get_path (c, it, &x->path);
        else if (!strcmp (k, "parentField")) ok = get_field_name (c, it, &x->parent_field);
        else if (!strcmp (k, "ordinalField")) ok = get_field_name (c, it, &x->ordinal_field);
        else if (!strcmp (k, "style")) {
            const char *v;
            ok = get_string (c, it, &v);
            if (ok && !strcmp (v, "parentRef")) x->style = RM_STYLE_PARENT_REF;
            else if (ok && !strcmp (v, "childRefs")) x->style = RM_STYLE_CHILD_REFS;
            else if (ok && !strcmp (v, "both")) x->style = RM_STYLE_BOTH;
            else if (ok) ok = fail (c, k, "must be \"parentRef\", \"childRefs\" or \"both\", not \"%s\"", v);
        }
        if (!ok)
            return false;
    }
    if (!x->parent_field)
        x->parent_field = bson_strdup ("parent_id");
    if (x->from.text && x->to.text && !strcmp (x->from.text, x->to.text))
        return fail (c, "to", "must differ from \"from\" (%s)", x->from.text);
    if (x->ordinal_field && !strcmp (x->ordinal_field, x->parent_field))
        return fail (c, "ordinalField", "must differ from \"parentField\"");
    return true;
}

static bool
denorm_add (ctx_t *c, rm_denorm_t *d, const char *target, const char *source)
{
    bson_error_t perr;
    if (!*target || strchr (target, '.') || target[0] == '$')
        return fail (c, "fields", "\"%s\" must be a plain field name (no dots, no $)", target);
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp (d->targets[i], target))
            return fail (c, "fields", "\"%s\" is named twice", target);
    d->targets = bson_realloc (d->targets, (d->n + 1) * sizeof *d->targets);
    d->sources = bson_realloc (d->sources, (d->n + 1) * sizeof *d->sources);
    d->targets[d->n] = bson_strdup (target);
    memset (&d->sources[d->n], 0, sizeof *d->sources);
    d->n++;
    if (source[0] == '$')
        source++; /* {"name": "$name"} reads like an aggregation expression */
    if (!rm_path_parse (&d->sources[d->n - 1], source, &perr))
        return fail (c, "fields", "%s", perr.message);
    return true;
}

static bool
parse_denorm (ctx_t *c, bson_iter_t *it, rm_denorm_t *d)
{
    bson_error_t perr;
    bool has_foreign = false;
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "in")) ok = get_ns (c, it, &d->in);
        else if (!strcmp (k, "from")) ok = get_ns (c, it, &d->from);
        else if (!strcmp (k, "localField")) ok = get_path (c, it, &d->local);
        else if (!strcmp (k, "foreignField")) ok = get_path (c, it, &d->foreign), has_foreign = true;
        else if (!strcmp (k, "onMissing")) {
            const char *v;
            ok = get_string (c, it, &v);
            if (ok && !strcmp (v, "keep")) d->on_missing = RM_MISSING_KEEP;
            else if (ok && !strcmp (v, "null")) d->on_missing = RM_MISSING_NULL;
            else if (ok && !strcmp (v, "error")) d->on_missing = RM_MISSING_ERROR;
            else if (ok) ok = fail (c, k, "must be \"keep\", \"null\" or \"error\", not \"%s\"", v);
        } else if (!strcmp (k, "fields")) {
            bson_iter_t sub;
            if (BSON_ITER_HOLDS_DOCUMENT (it) && bson_iter_recurse (it, &sub)) {
                while (ok && bson_iter_next (&sub)) {
                    if (!BSON_ITER_HOLDS_UTF8 (&sub))
                        return fail (c, k, "the source of \"%s\" must be a field path string",
                                     bson_iter_key (&sub));
                    ok = denorm_add (c, d, bson_iter_key (&sub), bson_iter_utf8 (&sub, NULL));
                }
            } else if (BSON_ITER_HOLDS_ARRAY (it) && bson_iter_recurse (it, &sub)) {
                while (ok && bson_iter_next (&sub)) {
                    if (!BSON_ITER_HOLDS_UTF8 (&sub))
                        return fail (c, k, "must list field names (strings)");
                    ok = denorm_add (c, d, bson_iter_utf8 (&sub, NULL), bson_iter_utf8 (&sub, NULL));
                }
            } else {
                return fail (c, k, "must be {\"target\": \"source.path\"} or [\"name\", ...]");
            }
            if (ok && d->n == 0)
                return fail (c, k, "names no field");
        }
        if (!ok)
            return false;
    }
    if (!has_foreign)
        rm_path_parse (&d->foreign, "_id", &perr);
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp (d->targets[i], "id") || (d->local.n == 1 && !strcmp (d->targets[i], d->local.parts[0])))
            return fail (c, "fields", "\"%s\" would overwrite the reference itself", d->targets[i]);
    if (d->in.text && d->from.text && !strcmp (d->in.text, d->from.text))
        return fail (c, "from", "must differ from \"in\" (%s)", d->in.text);
    return true;
}

static bool
parse_summarize (ctx_t *c, bson_iter_t *it, rm_summarize_t *m)
{
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "into")) ok = get_ns (c, it, &m->into);
        else if (!strcmp (k, "from")) ok = get_ns (c, it, &m->from);
        else if (!strcmp (k, "localField")) ok = get_path (c, it, &m->local);
        else if (!strcmp (k, "foreignField")) ok = get_path (c, it, &m->foreign);
        else if (!strcmp (k, "as")) ok = get_field_name (c, it, &m->as);
        else if (!strcmp (k, "sort")) ok = parse_sort (c, it, &m->sort);
        else if (!strcmp (k, "fields")) {
            bson_iter_t sub;
            if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
                return fail (c, k, "must be a document {\"name\": {\"$sum\": \"$qty\"}, ...}");
            while (bson_iter_next (&sub)) {
                const char *name = bson_iter_key (&sub);
                bson_error_t aerr;
                rm_acc_spec_t *acc;
                if (!*name || strchr (name, '.') || name[0] == '$')
                    return fail (c, k, "\"%s\" must be a plain field name (no dots, no $)", name);
                acc = rm_acc_spec_parse (&sub, &aerr);
                if (!acc)
                    return fail (c, k, "\"%s\": %s", name, aerr.message);
                m->names = bson_realloc (m->names, (m->n + 1) * sizeof *m->names);
                m->accs = bson_realloc (m->accs, (m->n + 1) * sizeof *m->accs);
                m->names[m->n] = bson_strdup (name);
                m->accs[m->n++] = acc;
            }
            if (m->n == 0)
                return fail (c, k, "names no field");
            {
                uint32_t flen;
                const uint8_t *fdata;
                bson_iter_document (it, &flen, &fdata);
                if (m->exprs)
                    bson_destroy (m->exprs);
                m->exprs = bson_new_from_data (fdata, flen);
            }
        }
        if (!ok)
            return false;
    }
    if (m->into.text && m->from.text && !strcmp (m->into.text, m->from.text))
        return fail (c, "into", "must differ from \"from\" (%s)", m->from.text);
    return true;
}

static void
fields_add (rm_fields_t *f)
{
    /* Doubling: a step of 200,000 fields must not copy its arrays each time. */
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->paths = bson_realloc (f->paths, f->cap * sizeof *f->paths);
        f->to = bson_realloc (f->to, f->cap * sizeof *f->to);
        f->values = bson_realloc (f->values, f->cap * sizeof *f->values);
    }
    memset (&f->paths[f->n], 0, sizeof *f->paths);
    memset (&f->to[f->n], 0, sizeof *f->to);
    memset (&f->values[f->n], 0, sizeof *f->values);
    f->n++;
}

/* The values as the edits take them (encoded once, not per document). */
static void
fields_encode (rm_fields_t *f)
{
    bson_iter_t it;

    f->raw_holder = bson_new ();
    f->raw = bson_malloc0 ((f->n ? f->n : 1) * sizeof *f->raw);
    for (size_t i = 0; i < f->n; i++)
        if (f->values[i].value_type)
            bson_append_value (f->raw_holder, "", 0, &f->values[i]);
    /* pointed at only now: appending may move the holder's bytes */
    bson_iter_init (&it, f->raw_holder);
    for (size_t i = 0; i < f->n; i++)
        if (f->values[i].value_type && bson_iter_next (&it))
            rm_raw_value_of (&it, &f->raw[i]);
}

/* Two paths conflict when one is a prefix of the other (as in an update). */
static bool
paths_conflict (const rm_path_t *a, const rm_path_t *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++)
        if (strcmp (a->parts[i], b->parts[i]) != 0)
            return false;
    return true;
}

/* Part by part, a prefix first: then a path and every path it is a prefix
 * of stand together, and a conflict is always between neighbours. */
static int
path_order (const void *x, const void *y)
{
    const rm_path_t *a = *(const rm_path_t *const *) x, *b = *(const rm_path_t *const *) y;
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        int c = strcmp (a->parts[i], b->parts[i]);
        if (c)
            return c;
    }
    return (a->n > b->n) - (a->n < b->n);
}

/* Every path the step writes or removes (for rename, the old and the new
 * paths together, as $rename takes them): none may be _id or under it
 * (the update operators refuse to change _id), and no two may overlap.
 * Sorted, so that 200,000 fields take n log n, not n^2. */
static bool
check_paths (ctx_t *c, rm_step_kind_t kind, const rm_fields_t *f)
{
    size_t n = kind == RM_STEP_RENAME ? 2 * f->n : f->n;
    const rm_path_t **all = bson_malloc ((n ? n : 1) * sizeof *all);
    bool ok = true;

    for (size_t i = 0; i < f->n; i++) {
        all[i] = &f->paths[i];
        if (kind == RM_STEP_RENAME)
            all[f->n + i] = &f->to[i];
    }
    for (size_t i = 0; ok && i < n; i++)
        if (all[i]->n > 0 && strcmp (all[i]->parts[0], "_id") == 0)
            ok = fail (c, kind == RM_STEP_VERSION ? "field" : "fields",
                       "\"%s\": _id cannot be changed (MongoDB's update operators refuse it)",
                       all[i]->text);
    if (ok)
        qsort (all, n, sizeof *all, path_order);
    for (size_t i = 0; ok && i + 1 < n; i++)
        if (paths_conflict (all[i], all[i + 1]))
            ok = fail (c, "fields", kind == RM_STEP_RENAME
                       ? "\"%s\" and \"%s\" overlap (as $rename refuses: to swap, rename through a "
                         "third name in separate steps)"
                       : "\"%s\" and \"%s\" overlap",
                       all[i]->text, all[i + 1]->text);
    bson_free (all);
    return ok;
}

static bool
parse_fields (ctx_t *c, rm_step_kind_t kind, bson_iter_t *it, rm_fields_t *f)
{
    bson_error_t perr;
    bool has_field = false;

    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        if (!strcmp (k, "in")) {
            if (!get_ns (c, it, &f->in))
                return false;
        } else if (kind == RM_STEP_VERSION && !strcmp (k, "field")) {
            if (f->n == 0)
                fields_add (f);
            if (!get_path (c, it, &f->paths[0]))
                return false;
            has_field = true;
        } else if (kind == RM_STEP_VERSION && !strcmp (k, "value")) {
            if (f->n == 0)
                fields_add (f);
            bson_value_copy (bson_iter_value (it), &f->values[0]);
        } else if (!strcmp (k, "fields") && kind == RM_STEP_UNSET) {
            bson_iter_t sub;
            if (!BSON_ITER_HOLDS_ARRAY (it) || !bson_iter_recurse (it, &sub))
                return fail (c, k, "must be an array of field paths");
            while (bson_iter_next (&sub)) {
                fields_add (f);
                if (!get_path (c, &sub, &f->paths[f->n - 1]))
                    return fail (c, k, "element %s: %s", bson_iter_key (&sub), "must be a field path");
            }
        } else if (!strcmp (k, "fields") && kind != RM_STEP_VERSION) {
            bson_iter_t sub;
            if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
                return fail (c, k, "must be a document of %s",
                             kind == RM_STEP_SET ? "{\"path\": value}" : "{\"old.path\": \"new.path\"}");
            while (bson_iter_next (&sub)) {
                fields_add (f);
                if (!rm_path_parse (&f->paths[f->n - 1], bson_iter_key (&sub), &perr))
                    return fail (c, k, "%s", perr.message);
                if (kind == RM_STEP_SET) {
                    bson_value_copy (bson_iter_value (&sub), &f->values[f->n - 1]);
                } else {
                    const char *to;
                    if (!BSON_ITER_HOLDS_UTF8 (&sub))
                        return fail (c, k, "the new name of \"%s\" must be a string", bson_iter_key (&sub));
                    uint32_t to_len;
                    to = bson_iter_utf8 (&sub, &to_len);
                    if (strlen (to) != to_len)
                        return fail (c, k, "the new name of \"%s\" must not hold a NUL byte",
                                     bson_iter_key (&sub));
                    if (!rm_path_parse (&f->to[f->n - 1], to, &perr))
                        return fail (c, k, "%s", perr.message);
                    if (paths_conflict (&f->paths[f->n - 1], &f->to[f->n - 1]))
                        return fail (c, k, "cannot rename \"%s\" to \"%s\": one contains the other",
                                     bson_iter_key (&sub), to);
                }
            }
        } else {
            return fail (c, k, "unknown key");
        }
    }
    if (kind == RM_STEP_VERSION && !has_field) {
        if (f->n == 0)
            fields_add (f);
        rm_path_parse (&f->paths[0], "schemaVersion", &perr);
    }
    fields_encode (f);
    if (kind != RM_STEP_VERSION && f->n == 0 && f->in.text)
        return fail (c, "fields", "names no field");
    return check_paths (c, kind, f);
}

static bool
check_keys (ctx_t *c, rm_step_kind_t kind, const bson_t *body)
{
    bson_iter_t it;
    char allowed[400] = "";

    for (size_t i = 0; rm_step_classes[kind].keys[i]; i++) {
        const char *k = rm_step_classes[kind].keys[i] + (rm_step_classes[kind].keys[i][0] == '*');
        if (i)
            strncat (allowed, ", ", sizeof allowed - strlen (allowed) - 1);
        strncat (allowed, k, sizeof allowed - strlen (allowed) - 1);
    }
    strncat (allowed, ", allowMissing, why", sizeof allowed - strlen (allowed) - 1);
    bson_iter_init (&it, body);
    while (bson_iter_next (&it)) {
        bool known = !strcmp (bson_iter_key (&it), "allowMissing") ||
                     (!strcmp (bson_iter_key (&it), "why") && BSON_ITER_HOLDS_UTF8 (&it));
        for (size_t i = 0; rm_step_classes[kind].keys[i] && !known; i++)
            known = !strcmp (bson_iter_key (&it), rm_step_classes[kind].keys[i] + (rm_step_classes[kind].keys[i][0] == '*'));
        if (!known)
            return fail (c, bson_iter_key (&it), "unknown key (%s takes %s)", c->op, allowed);
    }
    for (size_t i = 0; rm_step_classes[kind].keys[i]; i++)
        if (rm_step_classes[kind].keys[i][0] == '*' && !bson_has_field (body, rm_step_classes[kind].keys[i] + 1))
            return fail (c, rm_step_classes[kind].keys[i] + 1, "missing (required)");
    return true;
}

/* metaField: a field name or a list of distinct names. */
static bool
get_meta (ctx_t *c, const bson_iter_t *it, size_t *n, char ***names)
{
    bson_iter_t sub;
    if (BSON_ITER_HOLDS_UTF8 (it)) {
        *names = bson_malloc0 (sizeof **names);
        *n = 1;
        return get_field_name (c, it, &(*names)[0]);
    }
    if (!BSON_ITER_HOLDS_ARRAY (it) || !bson_iter_recurse (it, &sub))
        return fail (c, "metaField", "must be a field name or a list of field names, not %s",
                     type_name (bson_iter_type (it)));
    while (bson_iter_next (&sub)) {
        const char *name = BSON_ITER_HOLDS_UTF8 (&sub) ? bson_iter_utf8 (&sub, NULL) : NULL;
        if (!name)
            return fail (c, "metaField", "must list field names (strings)");
        if (!*name || strchr (name, '.') || name[0] == '$')
            return fail (c, "metaField", "\"%s\" must be a plain field name (no dots, no $)", name);
        *names = bson_realloc (*names, (*n + 1) * sizeof **names);
        (*names)[(*n)++] = bson_strdup (name);
        for (size_t i = 0; i + 1 < *n; i++)
            if (!strcmp ((*names)[i], name))
                return fail (c, "metaField", "\"%s\" is named twice", name);
    }
    if (*n == 0)
        return fail (c, "metaField", "names no field");
    return true;
}

/* The bucket's own fields: a meta field or "as" of the same name would
 * make a document with two fields of one name. */
static const char *const bucket_fields[] = {"_id", "start", "end", "count", "metaPositions",
                                            "stats", NULL};

static bool
check_bucket_names (ctx_t *c, const char *time_field, size_t n_meta, char **meta, const char *as)
{
    for (size_t i = 0; i < n_meta; i++) {
        for (size_t j = 0; bucket_fields[j]; j++)
            if (!strcmp (meta[i], bucket_fields[j]))
                return fail (c, "metaField", "\"%s\" is a field of the bucket itself", meta[i]);
        if (time_field && !strcmp (meta[i], time_field))
            return fail (c, "metaField", "\"%s\" is also the timeField", meta[i]);
        if (!strcmp (meta[i], as))
            return fail (c, "metaField", "\"%s\" is also \"as\"", meta[i]);
    }
    for (size_t j = 0; bucket_fields[j]; j++)
        if (!strcmp (as, bucket_fields[j]))
            return fail (c, "as", "\"%s\" is a field of the bucket itself", as);
    return true;
}

static bool
parse_bucket_stats (ctx_t *c, const bson_iter_t *it, rm_bucketize_t *b)
{
    static const char *const stat_names[] = {"count", "min", "max", "sum", "avg"};
    bson_iter_t sub, list;
    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
        return fail (c, "stats", "must be a document like {\"value\": [\"min\", \"max\"]}");
    while (bson_iter_next (&sub)) {
        const char *f = bson_iter_key (&sub);
        rm_bstat_t *st;
        if (!*f || strchr (f, '.') || f[0] == '$')
            return fail (c, "stats", "\"%s\" must be a plain field name (no dots, no $)", f);
        b->stats = bson_realloc (b->stats, (b->n_stats + 1) * sizeof *b->stats);
        st = &b->stats[b->n_stats++];
        memset (st, 0, sizeof *st);
        st->field = bson_strdup (f);
        if (!BSON_ITER_HOLDS_ARRAY (&sub) || !bson_iter_recurse (&sub, &list))
            return fail (c, "stats", "\"%s\": must be a list of statistics (count, min, max, sum, avg)", f);
        while (bson_iter_next (&list)) {
            const char *v = BSON_ITER_HOLDS_UTF8 (&list) ? bson_iter_utf8 (&list, NULL) : "";
            int k = -1;
            for (int i = 0; i < 5; i++)
                if (!strcmp (v, stat_names[i]))
                    k = i;
            if (k < 0)
                return fail (c, "stats", "\"%s\": unknown statistic \"%s\" (count, min, max, sum, avg)",
                             f, v);
            for (size_t i = 0; i < st->n; i++)
                if (st->kinds[i] == (rm_bstat_kind_t) k)
                    return fail (c, "stats", "\"%s\": \"%s\" is named twice", f, v);
            st->kinds = bson_realloc (st->kinds, (st->n + 1) * sizeof *st->kinds);
            st->kinds[st->n++] = (rm_bstat_kind_t) k;
        }
        if (st->n == 0)
            return fail (c, "stats", "\"%s\": names no statistic", f);
    }
    if (b->n_stats == 0)
        return fail (c, "stats", "names no field");
    return true;
}

static bool
parse_bucket_keys (ctx_t *c, bson_iter_t *it, rm_bucketize_t *b, bool reverse)
{
    bool has_gran = false, has_span = false;
    b->max_count = reverse ? 0 : 1000;
    b->keep_source = reverse;
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = get_ns (c, it, &b->from);
        else if (!strcmp (k, "to")) ok = get_ns (c, it, &b->to);
        else if (!strcmp (k, "timeField")) ok = get_field_name (c, it, &b->time_field);
        else if (!strcmp (k, "metaField")) ok = get_meta (c, it, &b->n_meta, &b->meta);
        else if (!strcmp (k, "as")) ok = get_field_name (c, it, &b->as);
        else if (!strcmp (k, "maxCount")) ok = get_int (c, it, 1, &b->max_count);
        else if (!strcmp (k, "keepSource")) ok = get_bool (c, it, &b->keep_source);
        else if (!strcmp (k, "stats")) ok = parse_bucket_stats (c, it, b);
        else if (!strcmp (k, "spanSeconds")) ok = get_int (c, it, 1, &b->span), has_span = true;
        else if (!strcmp (k, "granularity")) {
            const char *v;
            has_gran = true;
            ok = get_string (c, it, &v);
            if (ok && !strcmp (v, "seconds")) b->span = 1;
            else if (ok && !strcmp (v, "minutes")) b->span = 60;
            else if (ok && !strcmp (v, "hours")) b->span = 3600;
            else if (ok && !strcmp (v, "days")) b->span = 86400;
            else if (ok) ok = fail (c, k, "must be \"seconds\", \"minutes\", \"hours\" or \"days\", not \"%s\"", v);
        } else if (!strcmp (k, "onInvalid")) {
            bson_iter_t sub;
            if (BSON_ITER_HOLDS_UTF8 (it) && !strcmp (bson_iter_utf8 (it, NULL), "error"))
                ;
            else if (BSON_ITER_HOLDS_DOCUMENT (it) && bson_iter_recurse (it, &sub) &&
                     bson_iter_next (&sub) && !strcmp (bson_iter_key (&sub), "to")) {
                bson_iter_t rest = sub;
                if (bson_iter_next (&rest))
                    return fail (c, k, "unknown key \"%s\" (onInvalid takes \"to\")", bson_iter_key (&rest));
                const char *text = BSON_ITER_HOLDS_UTF8 (&sub) ? bson_iter_utf8 (&sub, NULL) : "";
                const char *dot = strchr (text, '.');
                if (!dot || dot == text || !dot[1])
                    return fail (c, k, "\"to\": \"%s\" is not a namespace (db.collection)", text);
                b->invalid_to.text = bson_strdup (text);
                b->invalid_to.db = bson_strndup (text, (size_t) (dot - text));
                b->invalid_to.coll = bson_strdup (dot + 1);
            } else
                ok = fail (c, k, "must be \"error\" or {\"to\": \"db.collection\"}");
        }
        if (!ok)
            return false;
    }
    if (has_gran && has_span)
        return fail (c, "spanSeconds", "give either \"granularity\" or \"spanSeconds\", not both");
    if (!has_gran && !has_span && !reverse)
        return fail (c, "granularity", "missing (give \"granularity\" or \"spanSeconds\")");
    if (b->span > INT64_MAX / 1000)
        return fail (c, "spanSeconds", "is too large");
    if (!b->as)
        b->as = bson_strdup ("measurements");
    if (!check_bucket_names (c, b->time_field, b->n_meta, b->meta, b->as))
        return false;
    if (!strcmp (b->from.text, b->to.text))
        return fail (c, "to", "must differ from \"from\" (%s)", b->from.text);
    if (b->invalid_to.text && (!strcmp (b->invalid_to.text, b->from.text) ||
                               !strcmp (b->invalid_to.text, b->to.text)))
        return fail (c, "onInvalid", "its namespace must differ from \"from\" and \"to\" (%s)",
                     b->invalid_to.text);
    return true;
}

static bool
parse_bucketize (ctx_t *c, bson_iter_t *it, rm_bucketize_t *b)
{
    return parse_bucket_keys (c, it, b, false);
}

/* The same keys, read as the bucketize being reversed (plan.h). */
static bool
parse_unbucketize (ctx_t *c, bson_iter_t *it, rm_unbucketize_t *u)
{
    return parse_bucket_keys (c, it, u, true);
}

/* The table's entry points (step_class.h). */
bool rm_plan_parse_embed (ctx_t *c, bson_iter_t *it, rm_step_t *s) { return parse_embed (c, it, &s->u.embed); }
bool rm_plan_parse_extract (ctx_t *c, bson_iter_t *it, rm_step_t *s) { return parse_extract (c, it, &s->u.extract); }
bool rm_plan_parse_fields (ctx_t *c, bson_iter_t *it, rm_step_t *s) { return parse_fields (c, s->kind, it, &s->u.fields); }
bool rm_plan_parse_denorm (ctx_t *c, bson_iter_t *it, rm_step_t *s) { return parse_denorm (c, it, &s->u.denorm); }
bool rm_plan_parse_summarize (ctx_t *c, bson_iter_t *it, rm_step_t *s) { return parse_summarize (c, it, &s->u.summarize); }
bool rm_plan_parse_bucketize (ctx_t *c, bson_iter_t *it, rm_step_t *s) { return parse_bucketize (c, it, &s->u.bucketize); }
bool rm_plan_parse_unbucketize (ctx_t *c, bson_iter_t *it, rm_step_t *s) { return parse_unbucketize (c, it, &s->u.unbucketize); }

/* Skips a JSON string starting at its opening quote; returns the index
 * after the closing quote. */

static int
key_order (const void *x, const void *y)
{
    return strcmp (*(const char *const *) x, *(const char *const *) y);
}

/* A key given twice in the document at it or in any document inside it
 * (JSON allows it, libbson keeps both, and which one counts would be a
 * guess). Writes the dotted path of the first such key to path; sorts the
 * keys of each document, so a large "fields" costs n log n. */
static bool
has_duplicate_key (bson_iter_t *it, char *path, size_t path_len)
{
    const char **keys = NULL;
    size_t n = 0, cap = 0;
    bool dup = false;
    bson_iter_t walk = *it;

    while (!dup && bson_iter_next (&walk)) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            keys = bson_realloc (keys, cap * sizeof *keys);
        }
        keys[n++] = bson_iter_key (&walk);
        if (BSON_ITER_HOLDS_DOCUMENT (&walk) || BSON_ITER_HOLDS_ARRAY (&walk)) {
            bson_iter_t sub;
            char inner[256] = "";
            if (bson_iter_recurse (&walk, &sub) && has_duplicate_key (&sub, inner, sizeof inner)) {
                snprintf (path, path_len, "%s.%s", bson_iter_key (&walk), inner);
                dup = true;
            }
        }
    }
    if (!dup && n > 1) {
        qsort (keys, n, sizeof *keys, key_order);
        for (size_t i = 0; i + 1 < n && !dup; i++)
            if (strcmp (keys[i], keys[i + 1]) == 0) {
                snprintf (path, path_len, "%s", keys[i]);
                dup = true;
            }
    }
    bson_free (keys);
    return dup;
}

/* The end of the JSON object that starts the text (after leading blanks):
 * what follows it must be blank, or the plan file holds more than a plan. */
static size_t
object_end (const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return rm_json_value_end (s, i, len);
}

/* The N of libbson's "position N" in a parse error, or -1. */
static long
parse_position (const char *message)
{
    const char *p = strstr (message, "position ");
    return p ? strtol (p + 9, NULL, 10) : -1;
}

/* "line L column C" (from 1) of byte at in the text, as editors count. */
static void
line_column (const char *s, size_t at, char *out, size_t out_len)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at; i++) {
        if (s[i] == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char) s[i] & 0xC0) != 0x80) { /* characters, not UTF-8 bytes */
            col++;
        }
    }
    snprintf (out, out_len, "line %zu column %zu", line, col);
}

/* When the whole plan does not parse, finds which step holds the bad
 * literal: the steps array's elements are cut out by bracket matching and
 * parsed one by one. Returns the 1-based step, 0 if not found. */
static size_t
locate_bad_step (const char *s, size_t len, char *op, size_t op_len, size_t *at, bson_error_t *why)
{
    /* s need not end with a NUL (a plan given as bytes): search within len. */
    const char *key = memmem (s, len, "\"steps\"", 7);
    size_t i, step = 0;
    if (!key)
        return 0;
    i = (size_t) (key - s) + 7;
    while (i < len && s[i] != '[')
        i++;
    for (i++; i < len;) {
        size_t start;
        while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t' || s[i] == ','))
            i++;
        if (i >= len || s[i] == ']')
            return 0;
        start = i;
        i = rm_json_value_end (s, i, len);
        step++;
        {
            char *wrapped = bson_strdup_printf ("{\"s\": %.*s}", (int) (i - start), s + start);
            bson_t *b = bson_new_from_json ((const uint8_t *) wrapped, -1, why);
            bson_free (wrapped);
            if (b) {
                bson_destroy (b);
                continue;
            }
            /* The operation: the step's first key. */
            {
                const char *q = memchr (s + start, '"', i - start);
                const char *q2 = q ? memchr (q + 1, '"', (size_t) (s + i - q - 1)) : NULL;
                snprintf (op, op_len, "%.*s", q && q2 ? (int) (q2 - q - 1) : 1, q && q2 ? q + 1 : "?");
            }
            *at = start;
            return step;
        }
    }
    return 0;
}

bool
rm_plan_parse (rm_plan_t *plan, const char *json, size_t len, bson_error_t *err)
{
    bson_error_t jerr;
    bson_t *doc;
    bson_iter_t it, steps;
    bool ok = true, has_version = false, has_steps = false;

    memset (plan, 0, sizeof *plan);
    {
        /* Said before parsing: libbson would only call the rest a bad token. */
        size_t end = object_end (json, len);
        for (size_t i = end; i < len; i++)
            if (json[i] != ' ' && json[i] != '\n' && json[i] != '\r' && json[i] != '\t') {
                char where[64];
                line_column (json, i, where, sizeof where);
                rm_error_set (err, RM_ERR_USAGE, "plan: %s: something follows the plan's closing "
                              "brace (a plan file holds one JSON object)", where);
                return false;
            }
    }
    doc = bson_new_from_json ((const uint8_t *) json, (ssize_t) len, &jerr);
    if (!doc) {
        char op[64];
        bson_error_t why;
        size_t start = 0, step = locate_bad_step (json, len, op, sizeof op, &start, &why);
        char where[64];
        /* libbson says "position N" in the text it parsed: the step wrapped
         * in {"s": ...} (6 bytes before it), or the whole plan. */
        long pos = parse_position (step ? why.message : jerr.message);
        size_t at = step ? (pos >= 6 ? start + (size_t) pos - 6 : start) : (pos >= 0 ? (size_t) pos : len);
        line_column (json, at < len ? at : len, where, sizeof where);
        if (step)
            rm_error_set (err, RM_ERR_USAGE, "plan: step %zu (%s), %s: not valid Extended JSON: %s", step,
                          op, where, why.message);
        else
            rm_error_set (err, RM_ERR_USAGE, "plan: %s: not valid JSON: %s", where, jerr.message);
        return false;
    }
    bson_iter_init (&it, doc);
    {
        /* Duplicates at the top, or inside one step (named by its number). */
        bson_iter_t top = it, steps_it, one;
        char path[300] = "";
        size_t step = 0;
        if (ok && bson_iter_find (&top, "steps") && BSON_ITER_HOLDS_ARRAY (&top) &&
            bson_iter_recurse (&top, &steps_it)) {
            while (ok && bson_iter_next (&steps_it)) {
                step++;
                if ((BSON_ITER_HOLDS_DOCUMENT (&steps_it)) && bson_iter_recurse (&steps_it, &one) &&
                    has_duplicate_key (&one, path, sizeof path)) {
                    bson_iter_t op;
                    const char *name = bson_iter_recurse (&steps_it, &op) && bson_iter_next (&op)
                                           ? bson_iter_key (&op) : "?";
                    const char *dot = strchr (path, '.');
                    rm_error_set (err, RM_ERR_USAGE, "plan: step %zu (%s): \"%s\": given twice", step,
                                  name, dot ? dot + 1 : path);
                    ok = false;
                }
            }
        }
        top = it;
        if (ok && has_duplicate_key (&top, path, sizeof path) && !strchr (path, '.')) {
            rm_error_set (err, RM_ERR_USAGE, "plan: \"%s\": given twice", path);
            ok = false;
        }
    }
    while (ok && bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (!strcmp (k, "remodel")) {
            has_version = true;
            /* Exactly 1: 1.5 is not the format's version 1. */
            if (!(BSON_ITER_HOLDS_INT32 (&it) || BSON_ITER_HOLDS_INT64 (&it) ||
                  BSON_ITER_HOLDS_DOUBLE (&it)) ||
                (BSON_ITER_HOLDS_DOUBLE (&it) ? bson_iter_double (&it) != 1.0
                                              : bson_iter_as_int64 (&it) != 1)) {
                rm_error_set (err, RM_ERR_USAGE, "plan: \"remodel\" must be 1 (the plan format's version)");
                ok = false;
            }
        } else if (!strcmp (k, "steps")) {
            has_steps = true;
            if (!BSON_ITER_HOLDS_ARRAY (&it)) {
                rm_error_set (err, RM_ERR_USAGE, "plan: \"steps\" must be an array");
                ok = false;
            } else {
                steps = it;
            }
        } else {
            rm_error_set (err, RM_ERR_USAGE, "plan: unknown top-level key \"%s\" (a plan has "
                          "\"remodel\" and \"steps\")", k);
            ok = false;
        }
    }
    if (ok && !has_version) {
        rm_error_set (err, RM_ERR_USAGE, "plan: missing \"remodel\": 1");
        ok = false;
    }
    if (ok && !has_steps) {
        rm_error_set (err, RM_ERR_USAGE, "plan: missing \"steps\"");
        ok = false;
    }
    if (ok) {
        bson_iter_t s;
        bson_iter_recurse (&steps, &s);
        while (ok && bson_iter_next (&s)) {
            ctx_t c = {err, plan->n + 1, "?"};
            bson_iter_t body;
            rm_step_t *st;
            uint32_t blen;
            const uint8_t *bdata;
            bson_t b;
            int kind = -1;

            plan->steps = bson_realloc (plan->steps, (plan->n + 1) * sizeof *plan->steps);
            st = &plan->steps[plan->n++];
            memset (st, 0, sizeof *st);
            st->index = c.index;
            if (!BSON_ITER_HOLDS_DOCUMENT (&s) || !bson_iter_recurse (&s, &body) ||
                !bson_iter_next (&body)) {
                ok = fail (&c, NULL, "a step is a document with one operation, like {\"embed\": {...}}");
                break;
            }
            for (int i = 0; i < RM_STEP_N_KINDS; i++)
                if (!strcmp (bson_iter_key (&body), rm_step_classes[i].name))
                    kind = i;
            if (kind < 0) {
                c.op = bson_iter_key (&body);
                ok = fail (&c, NULL, "unknown operation (embed, extract, denormalize, summarize, "
                           "set, unset, rename, version, bucketize, unbucketize)");
                break;
            }
            st->kind = (rm_step_kind_t) kind;
            st->op = rm_step_classes[kind].name;
            c.op = st->op;
            if (!BSON_ITER_HOLDS_DOCUMENT (&body)) {
                ok = fail (&c, NULL, "the operation's value must be a document");
                break;
            }
            bson_iter_document (&body, &blen, &bdata);
            bson_init_static (&b, bdata, blen);
            if (bson_iter_next (&body)) {
                ok = fail (&c, bson_iter_key (&body), "a step holds exactly one operation");
                break;
            }
            ok = check_keys (&c, st->kind, &b);
            if (ok) {
                /* allowMissing is every step's: read here, hidden from the
                 * operation's own parser; so is "why", a comment (remodel
                 * analyze --plan-out says there why it chose the step). */
                bson_iter_t fields;
                bson_t rest;
                if (bson_iter_init_find (&fields, &b, "allowMissing"))
                    ok = get_bool (&c, &fields, &st->allow_missing);
                bson_init (&rest);
                bson_copy_to_excluding_noinit (&b, &rest, "allowMissing", "why", NULL);
                bson_iter_init (&fields, &rest);
                if (ok)
                    ok = rm_step_classes[st->kind].parse (&c, &fields, st);
                bson_destroy (&rest);
            }
        }
        if (ok && plan->n == 0) {
            rm_error_set (err, RM_ERR_USAGE, "plan: \"steps\" is empty");
            ok = false;
        }
    }
    bson_destroy (doc);
    if (!ok)
        rm_plan_destroy (plan);
    return ok;
}

bool
rm_plan_load (rm_plan_t *plan, const char *path, bson_error_t *err)
{
    FILE *f = fopen (path, "rb");
    char *text;
    long len;
    bool ok;

    memset (plan, 0, sizeof *plan);
    if (!f) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot open the plan: %s", path, strerror (errno));
        return false;
    }
    fseek (f, 0, SEEK_END);
    len = ftell (f);
    fseek (f, 0, SEEK_SET);
    if (len < 0 || len > (16 << 20)) {
        fclose (f);
        rm_error_set (err, RM_ERR_USAGE, "%s: not a plan (larger than 16 MiB)", path);
        return false;
    }
    text = bson_malloc ((size_t) len + 1);
    if (fread (text, 1, (size_t) len, f) != (size_t) len) {
        fclose (f);
        bson_free (text);
        rm_error_set (err, RM_ERR_IO, "%s: cannot read the plan", path);
        return false;
    }
    fclose (f);
    text[len] = '\0';
    ok = rm_plan_parse (plan, text, (size_t) len, err);
    if (!ok)
        rm_error_prefix (err, "%s", path);
    bson_free (text);
    return ok;
}

size_t
rm_step_inputs (const rm_step_t *s, const rm_nsref_t **out, size_t max)
{
    size_t n = 0;
    switch (s->kind) {
    case RM_STEP_EMBED:
        out[n++] = &s->u.embed.from;
        out[n++] = &s->u.embed.into;
        break;
    case RM_STEP_EXTRACT:
        out[n++] = &s->u.extract.from;
        break;
    case RM_STEP_DENORMALIZE:
        out[n++] = &s->u.denorm.in;
        out[n++] = &s->u.denorm.from;
        break;
    case RM_STEP_SUMMARIZE:
        out[n++] = &s->u.summarize.into;
        out[n++] = &s->u.summarize.from;
        break;
    case RM_STEP_BUCKETIZE:
        out[n++] = &s->u.bucketize.from;
        break;
    case RM_STEP_UNBUCKETIZE:
        out[n++] = &s->u.unbucketize.from;
        if (s->u.unbucketize.invalid_to.text)
            out[n++] = &s->u.unbucketize.invalid_to; /* its set-aside readings come back */
        break;
    default:
        out[n++] = &s->u.fields.in;
        break;
    }
    (void) max;
    return n;
}

size_t
rm_step_outputs (const rm_step_t *s, const rm_nsref_t **out, size_t max)
{
    size_t n;
    if (s->kind == RM_STEP_DENORMALIZE || s->kind == RM_STEP_SUMMARIZE) { /* from is only read */
        out[0] = s->kind == RM_STEP_DENORMALIZE ? &s->u.denorm.in : &s->u.summarize.into;
        return 1;
    }
    if (s->kind == RM_STEP_UNBUCKETIZE) { /* from is emptied unless keepSource */
        out[0] = &s->u.unbucketize.to;
        return s->u.unbucketize.keep_source ? 1 : 1 + rm_step_inputs (s, out + 1, max - 1);
    }
    n = rm_step_inputs (s, out, max);
    if (s->kind == RM_STEP_BUCKETIZE) {
        out[n++] = &s->u.bucketize.to;
        if (s->u.bucketize.invalid_to.text)
            out[n++] = &s->u.bucketize.invalid_to;
    }
    if (s->kind == RM_STEP_EXTRACT)
        out[n++] = &s->u.extract.to;
    if (s->kind == RM_STEP_EMBED && s->u.embed.on_overflow == RM_OVERFLOW_OUTLIER)
        out[n++] = &s->u.embed.overflow_to;
    return n;
}

/* The plan key that names a step's i-th input (as rm_step_inputs lists). */
static const char *
input_key (const rm_step_t *s, size_t i)
{
    switch (s->kind) {
    case RM_STEP_EMBED: return i == 0 ? "from" : "into";
    case RM_STEP_EXTRACT: return "from";
    case RM_STEP_DENORMALIZE: return i == 0 ? "in" : "from";
    case RM_STEP_SUMMARIZE: return i == 0 ? "into" : "from";
    case RM_STEP_BUCKETIZE: return "from";
    case RM_STEP_UNBUCKETIZE: return i == 0 ? "from" : "onInvalid";
    default: return "in";
    }
}

/* A name list that tracks what exists as the steps run. */
typedef struct {
    char **names;
    size_t n;
} names_t;

static bool
names_has (const names_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp (l->names[i], name))
            return true;
    return false;
}

static void
names_remove (names_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp (l->names[i], name)) {
            bson_free (l->names[i]);
            l->names[i--] = l->names[--l->n];
        }
}

static void
names_clear (names_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        bson_free (l->names[i]);
    bson_free (l->names);
}

size_t
rm_step_creates (const rm_step_t *s, const rm_nsref_t **out, const char **keys, size_t max)
{
    size_t n = 0;
    (void) max;
    if (s->kind == RM_STEP_EXTRACT)
        keys[n] = "to", out[n++] = &s->u.extract.to;
    if (s->kind == RM_STEP_EMBED && s->u.embed.on_overflow == RM_OVERFLOW_OUTLIER)
        keys[n] = "overflowTo", out[n++] = &s->u.embed.overflow_to;
    if (s->kind == RM_STEP_BUCKETIZE || s->kind == RM_STEP_UNBUCKETIZE)
        keys[n] = "to", out[n++] = &s->u.bucketize.to;
    if (s->kind == RM_STEP_BUCKETIZE && s->u.bucketize.invalid_to.text)
        keys[n] = "onInvalid", out[n++] = &s->u.bucketize.invalid_to;
    return n;
}

size_t
rm_step_empties (const rm_step_t *s, const rm_nsref_t **out, size_t max)
{
    if ((s->kind != RM_STEP_BUCKETIZE && s->kind != RM_STEP_UNBUCKETIZE) ||
        s->u.bucketize.keep_source)
        return 0;
    /* bucketize empties from; unbucketize also onInvalid's namespace */
    return s->kind == RM_STEP_BUCKETIZE ? (out[0] = &s->u.bucketize.from, 1)
                                        : rm_step_inputs (s, out, max);
}

static void
names_add (names_t *l, const char *name)
{
    l->names = bson_realloc (l->names, (l->n + 1) * sizeof *l->names);
    l->names[l->n++] = bson_strdup (name);
}

bool
rm_plan_check_against (const rm_plan_t *plan, const rm_dump_info_t *info, bson_error_t *err)
{
    names_t have = {NULL, 0}, made = {NULL, 0}, emptied = {NULL, 0};
    const char *keys[4];
    bool ok = true;

    for (size_t i = 0; i < info->n_ns; i++) {
        char *name = bson_strdup_printf ("%s.%s", info->ns[i]->db, info->ns[i]->coll);
        names_add (&have, name);
        bson_free (name);
    }
    for (size_t i = 0; ok && i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        const rm_nsref_t *refs[4];
        size_t n = rm_step_inputs (s, refs, 4);
        ctx_t c = {err, s->index, s->op};
        for (size_t j = 0; ok && j < n; j++)
            if (!names_has (&have, refs[j]->text))
                ok = fail (&c, input_key (s, j),
                           "namespace %s is not in the input (nor made by an earlier step)",
                           refs[j]->text);
        /* A step creates a namespace that does not exist, or one that is
         * empty: in the input (checked when the step runs), or emptied by
         * an earlier step (bucketize, unbucketize without keepSource). */
        n = ok ? rm_step_creates (s, refs, keys, 4) : 0;
        for (size_t j = 0; ok && j < n; j++) {
            if (names_has (&made, refs[j]->text) && !names_has (&emptied, refs[j]->text))
                ok = fail (&c, keys[j], "namespace %s already exists (made by an earlier step)",
                           refs[j]->text);
            names_add (&have, refs[j]->text);
            names_add (&made, refs[j]->text);
            names_remove (&emptied, refs[j]->text);
        }
        n = ok ? rm_step_empties (s, refs, 4) : 0;
        for (size_t j = 0; j < n; j++)
            names_add (&emptied, refs[j]->text);
    }
    names_clear (&made);
    names_clear (&emptied);
    for (size_t i = 0; i < have.n; i++)
        bson_free (have.names[i]);
    bson_free (have.names);
    return ok;
}

void
rm_plan_clear_fields (rm_step_t *s)
{
    rm_fields_t *f = &s->u.fields;
    nsref_clear (&f->in);
    for (size_t i = 0; i < f->n; i++) {
        rm_path_destroy (&f->paths[i]);
        rm_path_destroy (&f->to[i]);
        if (f->values[i].value_type)
            bson_value_destroy (&f->values[i]);
    }
    bson_free (f->paths);
    bson_free (f->to);
    bson_free (f->values);
    bson_free (f->raw);
    if (f->raw_holder)
        bson_destroy (f->raw_holder);
}

static void
sortspec_clear (rm_sortspec_t *sort)
{
    for (size_t j = 0; j < sort->n; j++)
        rm_path_destroy (&sort->keys[j].path);
    bson_free (sort->keys);
}

void
rm_plan_clear_embed (rm_step_t *s)
{
    rm_embed_t *e = &s->u.embed;
    nsref_clear (&e->from);
    nsref_clear (&e->into);
    nsref_clear (&e->overflow_to);
    rm_path_destroy (&e->local);
    rm_path_destroy (&e->foreign);
    bson_free (e->as);
    bson_free (e->count_as);
    if (e->project)
        bson_destroy (e->project);
    sortspec_clear (&e->sort);
}

void
rm_plan_clear_summarize (rm_step_t *s)
{
    rm_summarize_t *m = &s->u.summarize;
    nsref_clear (&m->into);
    nsref_clear (&m->from);
    rm_path_destroy (&m->local);
    rm_path_destroy (&m->foreign);
    bson_free (m->as);
    sortspec_clear (&m->sort);
    for (size_t j = 0; j < m->n; j++) {
        bson_free (m->names[j]);
        rm_acc_spec_destroy (m->accs[j]);
    }
    bson_free (m->names);
    bson_free (m->accs);
    if (m->exprs)
        bson_destroy (m->exprs);
}

void
rm_plan_clear_denorm (rm_step_t *s)
{
    rm_denorm_t *d = &s->u.denorm;
    nsref_clear (&d->in);
    nsref_clear (&d->from);
    rm_path_destroy (&d->local);
    rm_path_destroy (&d->foreign);
    for (size_t j = 0; j < d->n; j++) {
        bson_free (d->targets[j]);
        rm_path_destroy (&d->sources[j]);
    }
    bson_free (d->targets);
    bson_free (d->sources);
}

/* bucketize and unbucketize: the same struct */
void
rm_plan_clear_bucket (rm_step_t *s)
{
    rm_bucketize_t *b = &s->u.bucketize;
    nsref_clear (&b->from);
    nsref_clear (&b->to);
    nsref_clear (&b->invalid_to);
    bson_free (b->time_field);
    bson_free (b->as);
    for (size_t j = 0; j < b->n_meta; j++)
        bson_free (b->meta[j]);
    bson_free (b->meta);
    for (size_t j = 0; j < b->n_stats; j++) {
        bson_free (b->stats[j].field);
        bson_free (b->stats[j].kinds);
    }
    bson_free (b->stats);
}

void
rm_plan_clear_extract (rm_step_t *s)
{
    rm_extract_t *x = &s->u.extract;
    nsref_clear (&x->from);
    nsref_clear (&x->to);
    rm_path_destroy (&x->path);
    bson_free (x->parent_field);
    bson_free (x->ordinal_field);
}

void
rm_plan_destroy (rm_plan_t *plan)
{
    /* A step that failed to parse has its kind (or none yet: zeroed, and
     * clearing zeroes frees nothing). */
    for (size_t i = 0; i < plan->n; i++)
        rm_step_classes[plan->steps[i].kind].clear (&plan->steps[i]);
    bson_free (plan->steps);
    memset (plan, 0, sizeof *plan);
}
