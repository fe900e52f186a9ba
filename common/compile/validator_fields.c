/* The fields a plan writes (remodel/compile.h, --format validators): each
 * step's new fields, with the BSON type the step itself decides (a
 * literal's, a bucket's dates and counts) and whether every document of
 * the namespace gets it; a later step's rename and unset applied to what
 * earlier ones wrote. A namespace a step made is the plan's whole. */
#include <string.h>

#include "compile_impl.h"

static rm_vns_t *
vns (rm_vplan_t *v, const rm_nsref_t *ns)
{
    rm_vns_t *x;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp (v->ns[i].ns, ns->text))
            return &v->ns[i];
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->ns = bson_realloc (v->ns, v->cap * sizeof *v->ns);
    }
    x = &v->ns[v->n++];
    memset (x, 0, sizeof *x);
    x->ns = bson_strdup (ns->text);
    return x;
}

static void
clear_fields (rm_vns_t *x)
{
    for (size_t i = 0; i < x->n; i++) {
        bson_free (x->f[i].path);
        bson_free (x->f[i].by);
    }
    x->n = 0;
}

/* Records path on ns (again: the later step's word stands). */
static void
add (rm_vplan_t *v, const rm_step_t *s, const rm_nsref_t *ns, const char *path,
     const char *type, bool required)
{
    rm_vns_t *x = vns (v, ns);
    rm_vfield_t *f = NULL;
    for (size_t i = 0; i < x->n && !f; i++)
        if (!strcmp (x->f[i].path, path))
            f = &x->f[i];
    if (!f) {
        if (x->n == x->cap) {
            x->cap = x->cap ? 2 * x->cap : 8;
            x->f = bson_realloc (x->f, x->cap * sizeof *x->f);
        }
        f = &x->f[x->n++];
        f->path = bson_strdup (path);
    } else {
        bson_free (f->by);
    }
    f->type = type;
    f->required = required && !s->filter;
    f->by = bson_strdup_printf ("step %zu (%s)", s->index, s->op);
}

/* Forgets what earlier steps wrote at path on ns (a step removed it). */
static void
drop (rm_vplan_t *v, const rm_nsref_t *ns, const char *path)
{
    rm_vns_t *x = vns (v, ns);
    for (size_t k = 0; k < x->n; k++)
        if (!strcmp (x->f[k].path, path)) {
            bson_free (x->f[k].path);
            bson_free (x->f[k].by);
            x->f[k--] = x->f[--x->n];
        }
}

/* The $jsonSchema alias of a literal's type (NULL: an expression, whose
 * type the data shows). */
static const char *
type_alias (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_DOUBLE: return "double";
    case BSON_TYPE_INT32: return "int";
    case BSON_TYPE_INT64: return "long";
    case BSON_TYPE_DECIMAL128: return "decimal";
    case BSON_TYPE_BOOL: return "bool";
    case BSON_TYPE_DATE_TIME: return "date";
    case BSON_TYPE_OID: return "objectId";
    case BSON_TYPE_NULL: return "null";
    case BSON_TYPE_UTF8: return "string";
    default: return NULL;
    }
}

static const char *
literal_type (const bson_iter_t *it)
{
    if (BSON_ITER_HOLDS_UTF8 (it) && bson_iter_utf8 (it, NULL)[0] == '$')
        return NULL;
    return type_alias (bson_iter_type (it));
}

static void
fields_step (rm_vplan_t *v, const rm_step_t *s)
{
    const rm_fields_t *f = &s->u.fields;
    rm_vns_t *x = vns (v, &f->in);
    bson_iter_t it;
    switch (s->kind) {
    case RM_STEP_SET:
        if (f->set_doc && bson_iter_init (&it, f->set_doc))
            while (bson_iter_next (&it))
                add (v, s, &f->in, bson_iter_key (&it), literal_type (&it), true);
        break;
    case RM_STEP_VERSION:
        add (v, s, &f->in, f->paths[0].text, type_alias (f->values[0].value_type), true);
        break;
    case RM_STEP_RENAME:
        for (size_t i = 0; i < f->n; i++) {
            bool moved = false;
            for (size_t k = 0; k < x->n; k++)
                if (!strcmp (x->f[k].path, f->paths[i].text)) {
                    bson_free (x->f[k].path);
                    x->f[k].path = bson_strdup (f->to[i].text);
                    moved = true;
                }
            if (!moved)
                add (v, s, &f->in, f->to[i].text, NULL, false);
        }
        break;
    case RM_STEP_UNSET:
        for (size_t i = 0; i < f->n; i++)
            drop (v, &f->in, f->paths[i].text);
        break;
    default:
        break;
    }
}

static void
bucket_fields (rm_vplan_t *v, const rm_step_t *s, const rm_bucketize_t *k)
{
    add (v, s, &k->to, "_id", "objectId", true);
    for (size_t i = 0; i < k->n_meta; i++)
        add (v, s, &k->to, k->meta[i], NULL, true);
    add (v, s, &k->to, "start", "date", true);
    add (v, s, &k->to, "end", "date", true);
    add (v, s, &k->to, "count", "int", true);
    add (v, s, &k->to, "metaPositions", "array", true);
    add (v, s, &k->to, k->as, "array", true);
    if (k->n_stats)
        add (v, s, &k->to, "stats", "object", true);
}

static void
step_fields (rm_vplan_t *v, const rm_step_t *s)
{
    switch (s->kind) {
    case RM_STEP_EMBED:
        add (v, s, &s->u.embed.into, s->u.embed.as, "array", !s->match);
        if (s->u.embed.count_as)
            add (v, s, &s->u.embed.into, s->u.embed.count_as, "int", true);
        break;
    case RM_STEP_EXTRACT:
        /* parentRef takes the array away; the references stay an array */
        if (s->u.extract.style == RM_STYLE_PARENT_REF)
            drop (v, &s->u.extract.from, s->u.extract.path.text);
        else
            add (v, s, &s->u.extract.from, s->u.extract.path.text, "array", false);
        add (v, s, &s->u.extract.to, "_id", NULL, true);
        if (s->u.extract.style != RM_STYLE_CHILD_REFS)
            add (v, s, &s->u.extract.to, s->u.extract.parent_field, NULL, true);
        if (s->u.extract.ordinal_field)
            add (v, s, &s->u.extract.to, s->u.extract.ordinal_field, "int", true);
        break;
    case RM_STEP_DENORMALIZE:
        for (size_t i = 0; i < s->u.denorm.n; i++)
            add (v, s, &s->u.denorm.in, s->u.denorm.targets[i], NULL,
                 s->u.denorm.on_missing == RM_MISSING_NULL);
        break;
    case RM_STEP_SUMMARIZE:
        if (s->u.summarize.as)
            add (v, s, &s->u.summarize.into, s->u.summarize.as, "object", true);
        else
            for (size_t i = 0; i < s->u.summarize.n; i++)
                add (v, s, &s->u.summarize.into, s->u.summarize.names[i], NULL, false);
        break;
    case RM_STEP_BUCKETIZE:
        bucket_fields (v, s, &s->u.bucketize);
        break;
    case RM_STEP_UNBUCKETIZE:
        add (v, s, &s->u.unbucketize.to, s->u.unbucketize.time_field, "date", true);
        for (size_t i = 0; i < s->u.unbucketize.n_meta; i++)
            add (v, s, &s->u.unbucketize.to, s->u.unbucketize.meta[i], NULL, true);
        break;
    case RM_STEP_COPY:
    case RM_STEP_MOVE:
        add (v, s, &s->u.copy.to, "_id", NULL, true);
        break;
    case RM_STEP_REKEY:
        add (v, s, &s->u.rekey.to, "_id", NULL, true);
        break;
    case RM_STEP_DELETE:
        break;
    default:
        fields_step (v, s);
        break;
    }
}

void
rm_compile_validator_fields (const rm_plan_t *plan, rm_vplan_t *out)
{
    memset (out, 0, sizeof *out);
    for (size_t i = 0; i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        const rm_nsref_t *ns[8];
        const char *keys[8];
        size_t n = rm_step_creates (s, ns, keys, 8);
        /* A namespace made (or filled again) by the step is all its. */
        for (size_t k = 0; k < n; k++) {
            rm_vns_t *x = vns (out, ns[k]);
            clear_fields (x);
            x->whole = true;
        }
        n = rm_step_outputs (s, ns, 8);
        for (size_t k = 0; k < n; k++)
            vns (out, ns[k]);
        step_fields (out, s);
        /* A namespace the step empties holds nothing to validate. */
        n = rm_step_empties (s, ns, 8);
        for (size_t k = 0; k < n; k++) {
            rm_vns_t *x = vns (out, ns[k]);
            clear_fields (x);
            x->whole = false;
        }
    }
}

void
rm_vplan_destroy (rm_vplan_t *v)
{
    for (size_t i = 0; i < v->n; i++) {
        clear_fields (&v->ns[i]);
        bson_free (v->ns[i].f);
        bson_free (v->ns[i].ns);
    }
    bson_free (v->ns);
    memset (v, 0, sizeof *v);
}
