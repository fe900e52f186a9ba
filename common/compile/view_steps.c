/* Each step kind's inverse as pipeline stages (view_def.h): what the
 * namespaces a step read held, computed from what it wrote. Only what
 * gives the old documents back exactly (values and types) is a view; the
 * rest is refused with the reason (docs/compile.md, "Views of the old
 * shape"). Fields a view puts back come where $addFields and
 * $mergeObjects put them, so a document's field order may differ. */
#include <string.h>

#include "view_def.h"

/* {$project: {f: 0, ...}} of the non-NULL names. */
static bson_t *
drop_stage (const char *const *names, size_t n)
{
    bson_t *st = bson_new (), body;
    BSON_APPEND_DOCUMENT_BEGIN (st, "$project", &body);
    for (size_t i = 0; i < n; i++)
        if (names[i])
            BSON_APPEND_INT32 (&body, names[i], 0);
    bson_append_document_end (st, &body);
    return st;
}

/* Why an embed's children cannot be read back from their parents (NULL:
 * they can). */
static const char *
embed_refusal (const rm_step_t *s)
{
    const rm_embed_t *e = &s->u.embed;
    if (s->filter || s->match)
        return "with a filter or match the children left in the source cannot be told apart "
               "from those embedded";
    if (e->limit)
        return "limit dropped children";
    if (e->max_items && e->on_overflow == RM_OVERFLOW_OUTLIER)
        return "children past maxItems went to overflowTo's pages";
    if (e->project && (e->project_inclusive || e->n_proj != 1 || e->n_computed ||
                       strcmp (e->proj[0].name, e->foreign.text) != 0))
        return "project dropped or computed the children's fields (only {foreignField: 0} "
               "is given back, from the parent)";
    if (e->project && e->foreign.n != 1)
        return "the children's foreignField is a dotted path";
    return NULL;
}

void
rm_view_embed (rm_views_t *vs, const rm_step_t *s)
{
    const rm_embed_t *e = &s->u.embed;
    rm_view_def_t *into = rm_views_get (vs, &e->into), *from = rm_views_get (vs, &e->from);
    const char *why = embed_refusal (s);
    const char *drop[2] = {e->as, e->count_as};
    char *as_ref = bson_strdup_printf ("$%s", e->as);

    if (why)
        rm_views_refuse (vs, from, "%s", why);
    else if (!e->keep_source) {
        /* The children: each parent's array unwound, the reference the
         * project removed given back from the parent; then the orphans. */
        rm_view_def_t kids = {0};
        bson_init (&kids.pipeline);
        rm_views_copy (&kids, into);
        rm_views_append (&kids, BCON_NEW ("$unwind", BCON_UTF8 (as_ref)));
        if (e->project) {
            char *local = bson_strdup_printf ("$%s", e->local.text);
            rm_views_append (&kids, BCON_NEW ("$replaceRoot", "{", "newRoot", "{",
                                              "$mergeObjects", "[", BCON_UTF8 (as_ref), "{",
                                              e->foreign.text, BCON_UTF8 (local), "}", "]",
                                              "}", "}"));
            bson_free (local);
        } else {
            rm_views_append (&kids,
                             BCON_NEW ("$replaceRoot", "{", "newRoot", BCON_UTF8 (as_ref), "}"));
        }
        rm_views_union (vs, &kids, from);
        rm_views_copy (from, &kids);
        rm_views_def_clear (&kids);
    }
    rm_views_append (into, drop_stage (drop, 2));
    bson_free (as_ref);
}

/* The children of a parent (in "__rm", from a $lookup) in their ordinal
 * order, without the parent and ordinal fields the extract gave them:
 * {$map} over 0..n-1 picking the child of each ordinal. */
static void
append_ordered (bson_t *doc, const char *key, const rm_extract_t *x)
{
    char *ord = bson_strdup_printf ("$$c.%s", x->ordinal_field);
    bson_t *expr = BCON_NEW (
        "$map", "{", "input", "{", "$range", "[", BCON_INT32 (0), "{", "$size", BCON_UTF8 ("$__rm"),
        "}", "]", "}", "as", BCON_UTF8 ("i"), "in", "{", "$arrayToObject", "{", "$filter", "{",
        "input", "{", "$objectToArray", "{", "$arrayElemAt", "[", "{", "$filter", "{", "input",
        BCON_UTF8 ("$__rm"), "as", BCON_UTF8 ("c"), "cond", "{", "$eq", "[", BCON_UTF8 (ord),
        BCON_UTF8 ("$$i"), "]", "}", "}", "}", BCON_INT32 (0), "]", "}", "}", "as",
        BCON_UTF8 ("f"), "cond", "{", "$not", "[", "{", "$in", "[", BCON_UTF8 ("$$f.k"), "[",
        BCON_UTF8 (x->parent_field), BCON_UTF8 (x->ordinal_field), "]", "]", "}", "]", "}", "}",
        "}", "}", "}");
    BSON_APPEND_DOCUMENT (doc, key, expr);
    bson_destroy (expr);
    bson_free (ord);
}

void
rm_view_extract (rm_views_t *vs, const rm_step_t *s)
{
    const rm_extract_t *x = &s->u.extract;
    rm_view_def_t *from = rm_views_get (vs, &x->from), *to = rm_views_get (vs, &x->to);
    bson_t *st, body, cond, args;
    char *path_ref;

    if (s->filter)
        {
            rm_views_refuse (vs, from, "a filter left arrays in parents the view cannot "
                                          "tell from those extracted");
            return;
        }
    if (x->style == RM_STYLE_CHILD_REFS)
        {
            rm_views_refuse (vs, from, "style childRefs: the children do not name their "
                                          "parent");
            return;
        }
    if (x->path.n != 1 || strchr (x->parent_field, '.') || !x->ordinal_field ||
        strchr (x->ordinal_field, '.'))
        {
            rm_views_refuse (vs, from, "the view needs a top-level path and parentField, "
                                          "and an ordinalField (the elements' order)");
            return;
        }
    if (to->why || !to->coll || bson_count_keys (&to->pipeline) ||
        strcmp (to->db, from->db ? from->db : "") != 0)
        {
            rm_views_refuse (vs, from, "the view joins %s as the plan leaves it, in the "
                                          "parents' database: a later step changed it",
                                x->to.text);
            return;
        }
    rm_views_append (from, BCON_NEW ("$lookup", "{", "from", BCON_UTF8 (to->coll), "localField",
                                     BCON_UTF8 ("_id"), "foreignField",
                                     BCON_UTF8 (x->parent_field), "as", BCON_UTF8 ("__rm"), "}"));
    /* A parent with no child keeps the field as it has it (missing or
     * null); one with children gets them back, in order. */
    path_ref = bson_strdup_printf ("$%s", x->path.text);
    st = bson_new ();
    BSON_APPEND_DOCUMENT_BEGIN (st, "$addFields", &body);
    BSON_APPEND_DOCUMENT_BEGIN (&body, x->path.text, &cond);
    BSON_APPEND_ARRAY_BEGIN (&cond, "$cond", &args);
    {
        bson_t *gt = BCON_NEW ("$gt", "[", "{", "$size", BCON_UTF8 ("$__rm"), "}",
                               BCON_INT32 (0), "]");
        BSON_APPEND_DOCUMENT (&args, "0", gt);
        bson_destroy (gt);
    }
    append_ordered (&args, "1", x);
    BSON_APPEND_UTF8 (&args, "2", path_ref);
    bson_append_array_end (&cond, &args);
    bson_append_document_end (&body, &cond);
    bson_append_document_end (st, &body);
    rm_views_append (from, st);
    rm_views_append (from, BCON_NEW ("$project", "{", "__rm", BCON_INT32 (0), "}"));
    bson_free (path_ref);
}

void
rm_view_rename (rm_views_t *vs, const rm_step_t *s)
{
    const rm_fields_t *f = &s->u.fields;
    rm_view_def_t *in = rm_views_get (vs, &f->in);
    bson_t *expr = NULL;

    if (s->filter)
        {
            rm_views_refuse (vs, in, "with a filter the view cannot tell the renamed "
                                        "documents from the others");
            return;
        }
    for (size_t i = 0; i < f->n; i++)
        if (f->paths[i].n != 1 || f->to[i].n != 1)
            {
            rm_views_refuse (vs, in, "the view renames top-level fields only");
            return;
        }
    /* Each field renamed back where it stands: {$arrayToObject} of the
     * fields, a {$cond} a renamed one. */
    expr = BCON_NEW ("r", BCON_UTF8 ("$$f"));
    for (size_t i = f->n; i-- > 0;) {
        bson_iter_t it;
        bson_t *next;
        bson_iter_init_find (&it, expr, "r");
        next = BCON_NEW ("r", "{", "$cond", "[", "{", "$eq", "[", BCON_UTF8 ("$$f.k"),
                         BCON_UTF8 (f->to[i].text), "]", "}", "{", "k",
                         BCON_UTF8 (f->paths[i].text), "v", BCON_UTF8 ("$$f.v"), "}",
                         BCON_ITER (&it), "]", "}");
        bson_destroy (expr);
        expr = next;
    }
    {
        bson_iter_t it;
        bson_iter_init_find (&it, expr, "r");
        rm_views_append (in, BCON_NEW ("$replaceRoot", "{", "newRoot", "{", "$arrayToObject", "{",
                                       "$map", "{", "input", "{", "$objectToArray",
                                       BCON_UTF8 ("$$ROOT"), "}", "as", BCON_UTF8 ("f"), "in",
                                       BCON_ITER (&it), "}", "}", "}", "}"));
    }
    bson_destroy (expr);
}

void
rm_view_denormalize (rm_views_t *vs, const rm_step_t *s)
{
    const rm_denorm_t *d = &s->u.denorm;
    rm_views_append (rm_views_get (vs, &d->in),
                     drop_stage ((const char *const *) d->targets, d->n));
}

void
rm_view_summarize (rm_views_t *vs, const rm_step_t *s)
{
    const rm_summarize_t *m = &s->u.summarize;
    const char *as[1] = {m->as};
    rm_views_append (rm_views_get (vs, &m->into),
                     m->as ? drop_stage (as, 1)
                           : drop_stage ((const char *const *) m->names, m->n));
}

void
rm_view_bucketize (rm_views_t *vs, const rm_step_t *s)
{
    const rm_bucketize_t *k = &s->u.bucketize;
    rm_view_def_t *from = rm_views_get (vs, &k->from), *to = rm_views_get (vs, &k->to);
    rm_view_def_t readings = {0};
    bson_t *st, root, merge, meta;
    char *as_ref;

    if (k->keep_source)
        return; /* the readings are still where they were */
    if (s->filter)
        {
            rm_views_refuse (vs, from, "a filter left readings beside the buckets: the view "
                                          "cannot tell them apart");
            return;
        }
    for (size_t i = 0; i < k->n_meta; i++)
        if (strchr (k->meta[i], '.'))
            {
            rm_views_refuse (vs, from, "the view gives back top-level meta fields only");
            return;
        }
    as_ref = bson_strdup_printf ("$%s", k->as);
    bson_init (&readings.pipeline);
    rm_views_copy (&readings, to);
    rm_views_append (&readings, BCON_NEW ("$unwind", BCON_UTF8 (as_ref)));
    /* A reading: its meta fields from the bucket, then its measurement. */
    st = bson_new ();
    BSON_APPEND_DOCUMENT_BEGIN (st, "$replaceRoot", &root);
    BSON_APPEND_DOCUMENT_BEGIN (&root, "newRoot", &merge);
    {
        bson_t arr;
        BSON_APPEND_ARRAY_BEGIN (&merge, "$mergeObjects", &arr);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, "0", &meta);
        for (size_t i = 0; i < k->n_meta; i++) {
            char *ref = bson_strdup_printf ("$%s", k->meta[i]);
            BSON_APPEND_UTF8 (&meta, k->meta[i], ref);
            bson_free (ref);
        }
        bson_append_document_end (&arr, &meta);
        BSON_APPEND_UTF8 (&arr, "1", as_ref);
        bson_append_array_end (&merge, &arr);
    }
    bson_append_document_end (&root, &merge);
    bson_append_document_end (st, &root);
    rm_views_append (&readings, st);
    /* The meta fields' positions, which this view does not restore. */
    rm_views_append (&readings, BCON_NEW ("$project", "{", "_metaPositions", BCON_INT32 (0), "}"));
    if (k->invalid_to.text)
        rm_views_union (vs, &readings, rm_views_get (vs, &k->invalid_to));
    rm_views_copy (from, &readings);
    rm_views_def_clear (&readings);
    bson_free (as_ref);
}

void
rm_view_unbucketize (rm_views_t *vs, const rm_step_t *s)
{
    if (!s->u.unbucketize.keep_source)
        rm_views_refuse (vs, rm_views_get (vs, &s->u.unbucketize.from),
                         "the buckets are gone: a view cannot group readings into buckets "
                         "whose _ids remodel computes");
}
