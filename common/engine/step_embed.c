/* embed: children of `from` whose foreignField equals a parent's
 * localField go into the parent's array `as` (see embed_build.c for where
 * fields go and embed_join.h for the order). Its keys in a plan are read
 * at the end of this file. */
#include <string.h>

#include "embed_join.h"
#include "plan_parse.h"

bool
rm_step_embed_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_embed_t *spec = &s->u.embed;
    rm_embed_out_t *o = rm_embed_out_new (e, s, err);
    rm_join_t j = {.local = &spec->local, .foreign = &spec->foreign, .sort = &spec->sort,
                   .order_by_id = true, .rewrite_from = true, .keep_source = spec->keep_source,
                   .from = &spec->from, .into = &spec->into, .begin = rm_embed_out_begin,
                   .child = rm_embed_out_child, .end = rm_embed_out_end, .pass = rm_embed_out_pass,
                   .finish = rm_embed_out_finish, .prepare = rm_embed_out_prepare, .ctx = o};
    /* Computed fields are evaluated where an error can be told: on the
     * consumer's thread, not by the probe workers (embed_build.c). */
    if (spec->n_computed)
        j.prepare = NULL;
    bool ok = o && rm_join_run (e, &j, err);
    rm_embed_out_destroy (o);
    return ok;
}

/* The checks once it has run (engine_checks.c): its key fields, and a
 * join in which no child meets a parent (a misspelt key would otherwise
 * leave every parent an empty array); the outliers' collection, indexed on
 * their parent. */
void
rm_embed_probes (const rm_step_t *s, rm_step_run_t *run)
{
    rm_engine_add_probe (run, "localField", s->u.embed.local.text, &s->u.embed.into);
    rm_engine_add_probe (run, "foreignField", s->u.embed.foreign.text, &s->u.embed.from);
}

bool
rm_embed_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run, bson_error_t *err)
{
    const rm_embed_t *m = &s->u.embed;
    return rm_engine_join_check (e, s, run, &m->from, &m->into, &m->local, &m->foreign, err);
}

void
rm_embed_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in)
{
    if (s->u.embed.on_overflow == RM_OVERFLOW_OUTLIER)
        rm_engine_add_created (out, in, &s->u.embed.overflow_to, "parent_id");
}

/* The step in a plan (step_class.h): its keys read, then freed; its
 * namespaces, for plan.c. */

/* A number's or a bool's truth as $project reads a flag: any number but
 * zero (0.5 and -1 too) includes. */
static bool
flag_on (const bson_iter_t *it)
{
    switch (bson_iter_type (it)) {
    case BSON_TYPE_BOOL:
        return bson_iter_bool (it);
    case BSON_TYPE_DOUBLE:
        return bson_iter_double (it) != 0.0;
    case BSON_TYPE_DECIMAL128: {
        bson_decimal128_t d;
        char text[BSON_DECIMAL128_STRING];
        bson_iter_decimal128 (it, &d);
        bson_decimal128_to_string (&d, text);
        /* zero in every exponent: only zeros before the exponent */
        for (const char *p = text; *p && *p != 'E'; p++)
            if (*p >= '1' && *p <= '9')
                return true;
        return !strncmp (text, "NaN", 3) || strstr (text, "Inf") != NULL;
    }
    default:
        return bson_iter_as_int64 (it) != 0;
    }
}

/* project is $project's document over each child: flags include or
 * exclude top-level fields; any other value is an expression over the
 * child, a computed field (which makes it an inclusion, as in
 * $project: a literal number or bool needs {"$literal": ...}). */
static bool
parse_project (rm_plan_ctx_t *c, const bson_iter_t *it, rm_embed_t *e)
{
    bson_iter_t sub;
    uint32_t len;
    const uint8_t *data;
    bool includes = false, excludes = false;

    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
        return rm_plan_fail (c, "project", "must be a document like {\"name\": 1}, "
                             "{\"secret\": 0} or {\"total\": {\"$multiply\": [\"$qty\", "
                             "\"$price\"]}}");
    bson_iter_document (it, &len, &data);
    e->project = bson_new_from_data (data, len);
    e->proj = bson_malloc0 ((bson_count_keys (e->project) + 1) * sizeof *e->proj);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        rm_proj_field_t *f = &e->proj[e->n_proj];
        bool is_id = strcmp (k, "_id") == 0;
        if (!*k || strchr (k, '.') || k[0] == '$')
            return rm_plan_fail (c, "project",
                                 "\"%s\": only top-level field names can be projected", k);
        for (size_t i = 0; i < e->n_proj; i++)
            if (!strcmp (e->proj[i].name, k))
                return rm_plan_fail (c, "project", "\"%s\" is named twice", k);
        if (BSON_ITER_HOLDS_BOOL (&sub) || BSON_ITER_HOLDS_NUMBER (&sub)) {
            f->kind = flag_on (&sub) ? RM_PROJ_INCLUDE : RM_PROJ_EXCLUDE;
        } else {
            bson_iter_t first;
            bson_error_t why;
            /* A document not led by an operator is a projection of a
             * sub-document's fields in $project, not an expression. */
            if (BSON_ITER_HOLDS_DOCUMENT (&sub) && bson_iter_recurse (&sub, &first) &&
                (!bson_iter_next (&first) || bson_iter_key (&first)[0] != '$'))
                return rm_plan_fail (c, "project", "\"%s\": a sub-document's fields cannot "
                                     "be projected (only top-level fields; compute it with "
                                     "an expression: {\"$literal\": {...}} for a literal "
                                     "document)", k);
            f->expr = rm_expr_parse (&sub, &why);
            if (!f->expr)
                return rm_plan_fail (c, "project", "\"%s\": %s", k, why.message);
            f->kind = RM_PROJ_COMPUTED;
            e->n_computed++;
        }
        f->name = bson_strdup (k);
        e->n_proj++;
        /* _id may be excluded from an inclusion, as in $project. */
        if (is_id && f->kind == RM_PROJ_EXCLUDE)
            continue;
        includes |= f->kind != RM_PROJ_EXCLUDE;
        excludes |= f->kind == RM_PROJ_EXCLUDE;
    }
    if (includes && excludes)
        return rm_plan_fail (c, "project", e->n_computed
                                               ? "computed fields make an inclusion projection: "
                                                 "it may exclude only _id"
                                               : "mixes inclusion and exclusion (only _id may be "
                                                 "excluded from an inclusion)");
    /* {"_id": 0} alone is an exclusion, as in $project. */
    e->project_inclusive = includes;
    return true;
}

bool
rm_plan_parse_embed (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_embed_t *e = &s->u.embed;

    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = rm_plan_get_ns (c, it, &e->from);
        else if (!strcmp (k, "into")) ok = rm_plan_get_ns (c, it, &e->into);
        else if (!strcmp (k, "localField")) ok = rm_plan_get_path (c, it, &e->local);
        else if (!strcmp (k, "foreignField")) ok = rm_plan_get_path (c, it, &e->foreign);
        else if (!strcmp (k, "as")) ok = rm_plan_get_field_name (c, it, &e->as);
        else if (!strcmp (k, "project")) ok = parse_project (c, it, e);
        else if (!strcmp (k, "sort")) ok = rm_plan_parse_sort (c, it, &e->sort);
        else if (!strcmp (k, "limit")) ok = rm_plan_get_int (c, it, 1, &e->limit);
        else if (!strcmp (k, "countAs")) ok = rm_plan_get_field_name (c, it, &e->count_as);
        else if (!strcmp (k, "keepSource")) ok = rm_plan_get_bool (c, it, &e->keep_source);
        else if (!strcmp (k, "maxItems")) ok = rm_plan_get_int (c, it, 1, &e->max_items);
        else if (!strcmp (k, "overflowTo")) ok = rm_plan_get_ns (c, it, &e->overflow_to);
        else if (!strcmp (k, "onOverflow")) {
            const char *v;
            ok = rm_plan_get_string (c, it, &v);
            if (ok && !strcmp (v, "error")) e->on_overflow = RM_OVERFLOW_ERROR;
            else if (ok && !strcmp (v, "outlier")) e->on_overflow = RM_OVERFLOW_OUTLIER;
            else if (ok) ok = rm_plan_fail (c, k, "must be \"error\" or \"outlier\", not \"%s\"", v);
        }
        if (!ok)
            return false;
    }
    if (e->count_as && e->as && !strcmp (e->count_as, e->as))
        return rm_plan_fail (c, "countAs", "must differ from \"as\"");
    if (e->limit && e->keep_source == false)
        return rm_plan_fail (c, "limit", "the subset pattern keeps the full set in \"from\": "
                             "set \"keepSource\": true (children beyond the limit would be lost)");
    if (e->overflow_to.text && e->on_overflow != RM_OVERFLOW_OUTLIER)
        return rm_plan_fail (c, "overflowTo", "only applies with \"onOverflow\": \"outlier\"");
    if (e->on_overflow == RM_OVERFLOW_OUTLIER && !e->overflow_to.text && e->into.text) {
        e->overflow_to.db = bson_strdup (e->into.db);
        /* The seeds' outlier pattern: products -> products_reviews_overflow. */
        e->overflow_to.coll = bson_strdup_printf ("%s_%s_overflow", e->into.coll, e->as ? e->as : "items");
        e->overflow_to.text = bson_strdup_printf ("%s.%s", e->overflow_to.db, e->overflow_to.coll);
    }
    if (e->from.text && e->into.text && !strcmp (e->from.text, e->into.text))
        return rm_plan_fail (c, "into", "must differ from \"from\" (%s)", e->from.text);
    return true;
}

void
rm_plan_clear_embed (rm_step_t *s)
{
    rm_embed_t *e = &s->u.embed;
    rm_plan_nsref_clear (&e->from);
    rm_plan_nsref_clear (&e->into);
    rm_plan_nsref_clear (&e->overflow_to);
    rm_path_destroy (&e->local);
    rm_path_destroy (&e->foreign);
    bson_free (e->as);
    bson_free (e->count_as);
    if (e->project)
        bson_destroy (e->project);
    for (size_t i = 0; i < e->n_proj; i++) {
        bson_free (e->proj[i].name);
        rm_expr_destroy (e->proj[i].expr);
    }
    bson_free (e->proj);
    rm_plan_sortspec_clear (&e->sort);
}

/* from and into are read and written; the outliers' namespace is made. */
void
rm_plan_ns_embed (const rm_step_t *s, rm_step_ns_t *ns)
{
    const rm_embed_t *e = &s->u.embed;
    rm_step_refs_add (&ns->reads, &e->from, "from");
    rm_step_refs_add (&ns->reads, &e->into, "into");
    ns->writes = ns->reads;
    if (e->on_overflow == RM_OVERFLOW_OUTLIER)
        rm_step_ns_make (ns, &e->overflow_to, "overflowTo");
}

/* Online (remodel/passes.h). */
size_t
rm_embed_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_embed_t *m = &s->u.embed;
    if (rm_pass_same_ns (&m->into, &m->from))
        return rm_pass_refuse (s, err, "a namespace embedded into itself runs offline only");
    /* The parents, each with every child it matches; then, when the
     * matched children leave `from`, the children, each with every
     * parent that could take it: those no parent takes stay. */
    out[0] = (rm_pass_t){.drive = 1, .partner = 0, .drive_key = &m->local,
                         .partner_key = &m->foreign, .keep = {&m->into}, .n_keep = 1,
                         .driver_field = {rm_pass_is_id (m->as) || rm_pass_is_id (m->count_as)
                                              ? NULL
                                              : "_id"}};
    /* An outlier's overflow pages are new documents, each naming its
     * parent (embed_build.c). */
    if (m->on_overflow == RM_OVERFLOW_OUTLIER) {
        out[0].keep[out[0].n_keep] = &m->overflow_to;
        out[0].driver_field[out[0].n_keep++] = "parent_id";
    }
    if (m->keep_source)
        return 1;
    out[1] = (rm_pass_t){.drive = 0, .partner = 1, .drive_key = &m->foreign,
                         .partner_key = &m->local, .keep = {&m->from}, .n_keep = 1,
                         .driver_field = {"_id"}};
    /* The first pass embeds whole children (its partners); this one only
     * asks which parents take a child: their _id and localField (which
     * rm_step_passes adds) and what the step's filter reads of them, the
     * parents themselves are not kept. */
    out[1].partner_some = true;
    rm_join_pass_reads (&out[1], s->filter);
    return 2;
}

/* Its inverse (remodel/plan.h), where it gives back the originals
 * exactly: {from F, into I, localField "_id", foreignField K (top-level),
 * as A (top-level), project {K: 0}}, no limit, countAs, keepSource or
 * outlier overflow, undone by extract {from I, path A, to F, style
 * parentRef, parentField K}: each child gets K (its parent's _id) back
 * and leaves the parent, and the children no parent took stay in F, as
 * they were. */
void
rm_embed_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    const rm_embed_t *e = &s->u.embed;
    bson_iter_t it;
    if (s->filter || s->match)
        out->why = "a filter or match has no inverse (an extract would take apart what the "
                   "parents left out already held)";
    else if (strcmp (e->local.text, "_id") != 0 || e->foreign.n != 1 || strchr (e->as, '.'))
        out->why = "its inverse needs localField \"_id\" and a top-level foreignField and as";
    else if (!e->project || e->project_inclusive || bson_count_keys (e->project) != 1 ||
             !bson_iter_init_find (&it, e->project, e->foreign.text))
        out->why = "its inverse needs project {foreignField: 0} (the children's reference "
                   "given back by their parent)";
    else if (e->limit || e->count_as || e->keep_source || e->on_overflow != RM_OVERFLOW_ERROR)
        out->why = "limit, countAs, keepSource and an outlier overflow have no inverse";
    else
        out->plan = BCON_NEW ("remodel", BCON_INT32 (1), "steps", "[", "{", "extract", "{",
                              "from", BCON_UTF8 (e->into.text), "path", BCON_UTF8 (e->as), "to",
                              BCON_UTF8 (e->from.text), "style", BCON_UTF8 ("parentRef"),
                              "parentField", BCON_UTF8 (e->foreign.text), "}", "}", "]");
}
