/* rekey in a plan (step_class.h): its keys read, then freed; its
 * namespaces; why it has no online passes and no inverse. The run is
 * step_rekey.c's, the references' rewriting step_rekey_refs.c's. */
#include <string.h>

#include "plan_parse.h"

/* Namespaces of references besides `to`: two at most, so that what the
 * step reads and writes fits rm_step_refs_t (from, to and these two). */
#define MAX_REF_NS 2

/* id: any expression over the document of `from` (a path, "$iata", or an
 * operator's document); the value it gives is checked per document. */
static bool
parse_id (rm_plan_ctx_t *c, const bson_iter_t *it, rm_rekey_t *x)
{
    bson_error_t perr;
    x->id = rm_expr_parse (it, &perr);
    if (!x->id && perr.code == RM_ERR_INTERRUPTED) {
        *c->err = perr;
        return false;
    }
    if (!x->id)
        return rm_plan_fail (c, "id", "%s", perr.message);
    x->id_doc = bson_new ();
    bson_append_iter (x->id_doc, "id", 2, it);
    return true;
}

/* Whether the plan's references name ns (a namespace other than `to`)
 * before the ith. */
static bool
ref_ns_seen (const rm_rekey_t *x, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (!strcmp (x->refs[j].in.text, x->refs[i].in.text))
            return true;
    return false;
}

/* One reference: {"in": "db.coll", "field": "path"}. */
static bool
parse_ref (rm_plan_ctx_t *c, bson_iter_t *sub, rm_rekey_t *x)
{
    rm_rekey_ref_t *r = &x->refs[x->n_refs++];
    bool has_in = false, has_field = false;
    while (bson_iter_next (sub)) {
        const char *k = bson_iter_key (sub);
        if (!strcmp (k, "in") && !has_in) {
            if (!rm_plan_get_ns (c, sub, &r->in))
                return false;
            has_in = true;
        } else if (!strcmp (k, "field") && !has_field) {
            if (!rm_plan_get_path (c, sub, &r->path))
                return false;
            has_field = true;
        } else {
            return rm_plan_fail (c, "references", "\"%s\": a reference takes \"in\" (its "
                                 "namespace) and \"field\" (the path of the key), each once", k);
        }
    }
    if (!has_in || !has_field)
        return rm_plan_fail (c, "references", "reference %zu lacks \"%s\"", x->n_refs,
                             has_in ? "field" : "in");
    return true;
}

/* references: [{"in": ..., "field": ...}, ...], none twice. */
static bool
parse_refs (rm_plan_ctx_t *c, const bson_iter_t *it, rm_rekey_t *x)
{
    bson_iter_t arr, sub;
    size_t n = 0;
    if (!BSON_ITER_HOLDS_ARRAY (it) || !bson_iter_recurse (it, &arr))
        return rm_plan_fail (c, "references", "must be an array of {\"in\": \"db.coll\", "
                             "\"field\": \"path\"}");
    while (bson_iter_next (&arr))
        n++;
    x->refs = bson_malloc0 ((n + 1) * sizeof *x->refs);
    bson_iter_recurse (it, &arr);
    while (bson_iter_next (&arr)) {
        if (!BSON_ITER_HOLDS_DOCUMENT (&arr) || !bson_iter_recurse (&arr, &sub))
            return rm_plan_fail (c, "references", "each must be a document {\"in\": "
                                 "\"db.coll\", \"field\": \"path\"}");
        if (!parse_ref (c, &sub, x))
            return false;
        for (size_t j = 0; j + 1 < x->n_refs; j++)
            if (!strcmp (x->refs[j].in.text, x->refs[x->n_refs - 1].in.text) &&
                !strcmp (x->refs[j].path.text, x->refs[x->n_refs - 1].path.text))
                return rm_plan_fail (c, "references", "%s.%s is named twice",
                                     x->refs[j].in.text, x->refs[j].path.text);
    }
    return true;
}

/* What the references may name, once from and to are known. */
static bool
check_refs (rm_plan_ctx_t *c, const rm_rekey_t *x)
{
    size_t others = 0;
    for (size_t i = 0; i < x->n_refs; i++) {
        const rm_rekey_ref_t *r = &x->refs[i];
        if (!strcmp (r->in.text, x->from.text))
            return rm_plan_fail (c, "references", "%s: its documents go to %s; name %s to "
                                 "rewrite references among them", r->in.text, x->to.text,
                                 x->to.text);
        if (r->path.lens[0] == 3 && !memcmp (r->path.parts[0], "_id", 3))
            return rm_plan_fail (c, "references", "%s.%s: a reference is a field outside _id "
                                 "(to change an _id, rekey its namespace)", r->in.text,
                                 r->path.text);
        if (strcmp (r->in.text, x->to.text) && !ref_ns_seen (x, i) && ++others > MAX_REF_NS)
            return rm_plan_fail (c, "references", "a rekey rewrites references in at most %d "
                                 "namespaces besides \"to\"", MAX_REF_NS);
    }
    return true;
}

static bool
parse_on_missing (rm_plan_ctx_t *c, const bson_iter_t *it, rm_rekey_t *x)
{
    const char *v;
    if (!rm_plan_get_string (c, it, &v))
        return false;
    if (strcmp (v, "error") && strcmp (v, "keep"))
        return rm_plan_fail (c, "onMissing", "\"%s\": must be \"error\" (a reference no "
                             "document of \"from\" had stops the run) or \"keep\" (it stays, "
                             "counted in a warning)", v);
    x->keep_missing = !strcmp (v, "keep");
    return true;
}

bool
rm_plan_parse_rekey (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_rekey_t *x = &s->u.rekey;

    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = rm_plan_get_ns (c, it, &x->from);
        else if (!strcmp (k, "to")) ok = rm_plan_get_ns (c, it, &x->to);
        else if (!strcmp (k, "id")) ok = parse_id (c, it, x);
        else if (!strcmp (k, "references")) ok = parse_refs (c, it, x);
        else if (!strcmp (k, "onMissing")) ok = parse_on_missing (c, it, x);
        else if (!strcmp (k, "keepSource")) ok = rm_plan_get_bool (c, it, &x->keep_source);
        if (!ok)
            return false;
    }
    if (x->from.text && x->to.text && !strcmp (x->from.text, x->to.text))
        return rm_plan_fail (c, "to", "must differ from \"from\" (%s): a document's _id never "
                             "changes where it is, so the re-keyed documents go to another "
                             "namespace", x->from.text);
    return check_refs (c, x);
}

void
rm_plan_clear_rekey (rm_step_t *s)
{
    rm_rekey_t *x = &s->u.rekey;
    rm_plan_nsref_clear (&x->from);
    rm_plan_nsref_clear (&x->to);
    rm_expr_destroy (x->id);
    if (x->id_doc)
        bson_destroy (x->id_doc);
    for (size_t i = 0; i < x->n_refs; i++) {
        rm_plan_nsref_clear (&x->refs[i].in);
        rm_path_destroy (&x->refs[i].path);
    }
    bson_free (x->refs);
}

/* from is read and, without keepSource, emptied; to is made; each other
 * namespace of references is read and written (once, however many of its
 * fields are named). */
void
rm_plan_ns_rekey (const rm_step_t *s, rm_step_ns_t *ns)
{
    const rm_rekey_t *x = &s->u.rekey;
    rm_step_refs_add (&ns->reads, &x->from, "from");
    rm_step_ns_make (ns, &x->to, "to");
    if (!x->keep_source) {
        rm_step_refs_add (&ns->writes, &x->from, "from");
        rm_step_refs_add (&ns->empties, &x->from, "from");
    }
    for (size_t i = 0; i < x->n_refs; i++) {
        if (!strcmp (x->refs[i].in.text, x->to.text) || ref_ns_seen (x, i))
            continue;
        rm_step_refs_add (&ns->reads, &x->refs[i].in, "references");
        rm_step_refs_add (&ns->writes, &x->refs[i].in, "references");
    }
}

/* Each reference's field, looked for in its namespace's documents (`to`'s
 * in those of `from`, which it gets but for _id): one in none is a
 * misspelling, refused unless allowMissing (probe.h). */
void
rm_rekey_probes (const rm_step_t *s, rm_step_run_t *run)
{
    const rm_rekey_t *x = &s->u.rekey;
    for (size_t i = 0; i < x->n_refs; i++)
        rm_engine_add_probe (run, "references", x->refs[i].path.text,
                             strcmp (x->refs[i].in.text, x->to.text) ? &x->refs[i].in
                                                                      : &x->from);
}

/* Online, a re-keyed document is a new one whose _id no change event of
 * its source carries, and a change of a reference would need the whole
 * old-to-new map: the side-by-side copy cannot follow either. */
size_t
rm_rekey_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    (void) out;
    return rm_pass_refuse (s, err, "rekey runs offline only (remodel run over a dump): "
                           "online, a change to a document of \"from\" "
                           "or to a reference cannot be followed to the re-keyed documents; "
                           "dump, run the plan, and restore");
}

/* The new _ids are computed and the old ones dropped: nothing gives them
 * back (a `set` before the step can keep them in a field). */
void
rm_rekey_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    (void) s;
    out->why = "rekey drops the old _ids: nothing gives them back (keep each in a field with "
               "a set before the rekey to be able to)";
}
