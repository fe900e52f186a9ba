/* copy, move and delete in a plan (step_class.h): their keys read, then
 * freed; their namespaces; how they run online; their inverses. The run
 * is step_copy.c's. */
#include <string.h>

#include "plan_parse.h"

/* project: top-level fields kept ({"name": 1}) or dropped ({"notes": 0}),
 * never both but for dropping _id, which is refused: a copy is its
 * document, found again by its _id (computed fields go in `fields`). */
static bool
parse_project (rm_plan_ctx_t *c, const bson_iter_t *it, rm_copy_t *x)
{
    bson_iter_t sub;
    uint32_t len;
    const uint8_t *data;
    bool includes = false, excludes = false;

    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
        return rm_plan_fail (c, "project", "must be a document like {\"name\": 1} or "
                             "{\"notes\": 0}");
    bson_iter_document (it, &len, &data);
    x->project = bson_new_from_data (data, len);
    x->proj = bson_malloc0 ((bson_count_keys (x->project) + 1) * sizeof *x->proj);
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        bool on;
        if (!*k || strchr (k, '.') || k[0] == '$')
            return rm_plan_fail (c, "project",
                                 "\"%s\": only top-level field names can be projected", k);
        if (!BSON_ITER_HOLDS_BOOL (&sub) && !BSON_ITER_HOLDS_NUMBER (&sub))
            return rm_plan_fail (c, "project", "\"%s\": must be 1 or 0 (true or false): "
                                 "compute a field in \"fields\"", k);
        on = BSON_ITER_HOLDS_BOOL (&sub) ? bson_iter_bool (&sub) : bson_iter_as_double (&sub) != 0;
        if (!strcmp (k, "_id")) {
            if (!on)
                return rm_plan_fail (c, "project", "\"_id\": 0: a copy keeps its document's _id "
                                     "(it is how the copy is found again)");
            continue;
        }
        for (size_t i = 0; i < x->n_proj; i++)
            if (!strcmp (x->proj[i], k))
                return rm_plan_fail (c, "project", "\"%s\" is named twice", k);
        x->proj[x->n_proj++] = bson_strdup (k);
        includes |= on;
        excludes |= !on;
    }
    if (includes && excludes)
        return rm_plan_fail (c, "project", "mixes fields kept (1) and dropped (0): give one or "
                             "the other");
    x->project_inclusive = includes || !excludes;
    return true;
}

/* fields: a $set over each copy, as set's "fields" (docs/plans.md), its
 * paths never _id (the copy's identity). */
static bool
parse_fields (rm_plan_ctx_t *c, bson_iter_t *it, rm_copy_t *x)
{
    bson_error_t perr;
    uint32_t len;
    const uint8_t *data;

    if (!BSON_ITER_HOLDS_DOCUMENT (it))
        return rm_plan_fail (c, "fields", "must be a document of {\"field\": expression}");
    x->set = rm_expr_set_parse (it, &perr);
    if (!x->set && perr.code == RM_ERR_INTERRUPTED) {
        *c->err = perr;
        return false;
    }
    if (!x->set)
        return rm_plan_fail (c, "fields", "%s", perr.message);
    bson_iter_document (it, &len, &data);
    x->set_doc = bson_new_from_data (data, len);
    for (size_t i = 0; i < rm_expr_set_count (x->set); i++)
        if (!rm_plan_check_written (c, "fields", rm_expr_set_path (x->set, i)))
            return false;
    return true;
}

bool
rm_plan_parse_copy (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_copy_t *x = &s->u.copy;

    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = rm_plan_get_ns (c, it, &x->from);
        else if (!strcmp (k, "to")) ok = rm_plan_get_ns (c, it, &x->to);
        else if (!strcmp (k, "fields")) ok = parse_fields (c, it, x);
        else if (!strcmp (k, "project")) ok = parse_project (c, it, x);
        if (!ok)
            return false;
    }
    if (x->from.text && x->to.text && !strcmp (x->from.text, x->to.text))
        return rm_plan_fail (c, "to", "must differ from \"from\" (%s): %s", x->from.text,
                             s->kind == RM_STEP_COPY ? "a copy goes to another namespace"
                                                     : "to change documents where they are, "
                                                       "use set with a filter");
    /* Dropping documents is never the default: {} says every one. */
    if (s->kind == RM_STEP_DELETE && !s->filter)
        return rm_plan_fail (c, NULL, "needs a \"filter\" choosing the documents to delete "
                             "({} for every one of them)");
    return true;
}

void
rm_plan_clear_copy (rm_step_t *s)
{
    rm_copy_t *x = &s->u.copy;
    rm_plan_nsref_clear (&x->from);
    rm_plan_nsref_clear (&x->to);
    rm_expr_set_destroy (x->set);
    if (x->set_doc)
        bson_destroy (x->set_doc);
    if (x->project)
        bson_destroy (x->project);
    for (size_t i = 0; i < x->n_proj; i++)
        bson_free (x->proj[i]);
    bson_free (x->proj);
}

/* from is read (and written by move and delete); to is made. A move
 * without a filter leaves from empty. */
void
rm_plan_ns_copy (const rm_step_t *s, rm_step_ns_t *ns)
{
    const rm_copy_t *x = &s->u.copy;
    rm_step_refs_add (&ns->reads, &x->from, "from");
    if (s->kind != RM_STEP_COPY)
        rm_step_refs_add (&ns->writes, &x->from, "from");
    if (s->kind != RM_STEP_DELETE)
        rm_step_ns_make (ns, &x->to, "to");
    if (s->kind == RM_STEP_MOVE && !s->filter)
        rm_step_refs_add (&ns->empties, &x->from, "from");
}

/* Online (remodel/passes.h): one pass over from, each document's results
 * (its copy in to, itself in from) keeping its _id. */
size_t
rm_copy_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_copy_t *x = &s->u.copy;
    (void) err;
    if (s->kind != RM_STEP_COPY) {
        out[0].keep[out[0].n_keep] = &x->from;
        out[0].driver_field[out[0].n_keep++] = "_id";
    }
    if (s->kind != RM_STEP_DELETE) {
        out[0].keep[out[0].n_keep] = &x->to;
        out[0].driver_field[out[0].n_keep++] = "_id";
    }
    return 1;
}

/* Inverses (remodel/plan.h): a copy's is the delete of every document of
 * to; a move's, without a filter, fields or project, the move back into
 * the emptied from (in the same order); a delete has none. */
void
rm_copy_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    const rm_copy_t *x = &s->u.copy;
    if (s->kind == RM_STEP_DELETE) {
        out->why = "a delete drops its documents and nothing gives them back (a move to another "
                   "namespace keeps them: its inverse is the move back)";
    } else if (s->kind == RM_STEP_COPY) {
        out->plan = BCON_NEW ("remodel", BCON_INT32 (1), "steps", "[", "{", "delete", "{",
                              "from", BCON_UTF8 (x->to.text), "filter", "{", "}", "}", "}", "]");
    } else if (s->filter) {
        out->why = "a move with a filter has no inverse here: the move back needs an empty "
                   "\"from\", which keeps the documents the filter left";
    } else if (x->set || x->project) {
        out->why = "fields and project change the documents moved: no move back gives them "
                   "again";
    } else {
        out->plan = BCON_NEW ("remodel", BCON_INT32 (1), "steps", "[", "{", "move", "{", "from",
                              BCON_UTF8 (x->to.text), "to", BCON_UTF8 (x->from.text), "}", "}",
                              "]");
    }
}
