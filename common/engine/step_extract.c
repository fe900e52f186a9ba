/* extract: the inverse of embed. Each element of the array at `path`
 * becomes a document of `to`; the parent keeps a reference list, or loses
 * the array (parentRef), or both.
 *
 * A child document is {_id, <the element's fields>, <parentField>,
 * <ordinalField>}: its own _id when the element has one, else an ObjectId
 * derived from the parent's _id, the path and the position, so the same
 * input always gives the same ids (the online mode relies on it). A
 * scalar element becomes {_id, value: <element>, ...}.
 *
 * Two elements may make children with one _id (an account two customers
 * hold): the children are kept in a store until every parent has been
 * read, then written each _id once, or refused when the copies differ
 * (extract_dups.h). */
#include <string.h>

#include "docbuf.h"
#include "embed_join.h"
#include "engine_impl.h"
#include "extract_dups.h"
#include "plan_parse.h"

typedef struct rm_extractor rm_extractor_t;
struct rm_extractor {
    rm_engine_t *e;
    const rm_step_t *s;
    const rm_extract_t *x;
    rm_probe_t *probe; /* of path */
    rm_buf_t child, key, ids, parent;
    rm_extract_dups_t *dups;
    rm_store_t *held; /* the one-pass path: the children until the end */
    rm_expr_ctx_t *cx; /* the step's filter's (one per run or stage) */
};

static rm_extractor_t *
rm_extractor_new (rm_engine_t *e, const rm_step_t *s, rm_probe_t *probe)
{
    rm_extractor_t *sc = bson_malloc0 (sizeof *sc);
    sc->e = e;
    sc->s = s;
    sc->x = &s->u.extract;
    sc->probe = probe;
    if (s->filter)
        sc->cx = rm_expr_ctx_new (rm_engine_now (e));
    /* A quarter of --memory: in the one-pass path, denormalize's tables
     * may hold the rest meanwhile. */
    if (!e->opts.keep_copies)
        sc->dups = rm_extract_dups_new (rm_engine_sort_budget (e) / 2, e->opts.tmpdir);
    rm_buf_init (&sc->child);
    rm_buf_init (&sc->key);
    rm_buf_init (&sc->ids);
    rm_buf_init (&sc->parent);
    return sc;
}

static void
rm_extractor_destroy (rm_extractor_t *sc)
{
    if (!sc)
        return;
    rm_buf_destroy (&sc->child);
    rm_buf_destroy (&sc->key);
    rm_buf_destroy (&sc->ids);
    rm_buf_destroy (&sc->parent);
    rm_extract_dups_destroy (sc->dups);
    rm_store_destroy (sc->held);
    rm_expr_ctx_destroy (sc->cx);
    bson_free (sc);
}

static bool
build_child (rm_extractor_t *sc, const rm_extract_t *x, const bson_iter_t *parent_id,
             const bson_iter_t *elem, uint32_t i, bson_error_t *err)
{
    size_t start;
    bson_iter_t f, id;
    bool has_id = false;

    rm_buf_reset (&sc->child);
    start = rm_docbuf_begin (&sc->child);
    if (BSON_ITER_HOLDS_DOCUMENT (elem) && bson_iter_recurse (elem, &id) && bson_iter_find (&id, "_id")) {
        rm_docbuf_copy (&sc->child, &id);
        has_id = true;
    }
    if (!has_id) {
        uint8_t oid[12];
        rm_derived_oid (&sc->key, parent_id, x->path.text, i, oid);
        rm_docbuf_key (&sc->child, BSON_TYPE_OID, "_id");
        rm_buf_append (&sc->child, oid, 12);
    }
    if (BSON_ITER_HOLDS_DOCUMENT (elem)) {
        bson_iter_recurse (elem, &f);
        while (bson_iter_next (&f)) {
            const char *k = bson_iter_key (&f);
            if (!strcmp (k, "_id"))
                continue;
            if ((x->style != RM_STYLE_CHILD_REFS && !strcmp (k, x->parent_field)) ||
                (x->ordinal_field && !strcmp (k, x->ordinal_field))) {
                rm_error_set (err, RM_ERR_DATA,
                              "element %u already has a field \"%s\": choose another "
                              "parentField or ordinalField", i, k);
                return false;
            }
            rm_docbuf_copy (&sc->child, &f);
        }
    } else {
        rm_docbuf_copy_as (&sc->child, "value", elem);
    }
    if (x->style != RM_STYLE_CHILD_REFS)
        rm_docbuf_copy_as (&sc->child, x->parent_field, parent_id);
    if (x->ordinal_field) {
        int32_t v = (int32_t) BSON_UINT32_TO_LE (i);
        rm_docbuf_key (&sc->child, BSON_TYPE_INT32, x->ordinal_field);
        rm_buf_append (&sc->child, &v, 4);
    }
    rm_docbuf_end (&sc->child, start);
    return true;
}

/* Extracts one parent: each child goes to emit (its bytes live until the
 * next child), and out/out_len get the parent to keep. */
static bool
extract_one (rm_extractor_t *sc, rm_ens_t *to, const uint8_t *doc, uint32_t len,
             rm_emit_fn emit, void *ctx, const uint8_t **out, size_t *out_len,
             bson_error_t *err)
{
    bson_t b;
    bson_iter_t parent_id, arr, elem;
    uint32_t i = 0;
    size_t ids_start;
    char key[16];
    const char *k;
    const rm_extract_t *x = sc->x;

    *out = doc;
    *out_len = len;
    bson_init_static (&b, doc, len);
    if (!bson_iter_init_find (&parent_id, &b, "_id")) {
        rm_error_set (err, RM_ERR_FORMAT, "a document without _id");
        return false;
    }
    if (!rm_path_get (doc, len, &x->path, &arr) || BSON_ITER_HOLDS_NULL (&arr))
        return true; /* nothing to extract: the parent stays as it is */
    if (!BSON_ITER_HOLDS_ARRAY (&arr)) {
        rm_error_set (err, RM_ERR_FORMAT, "\"%s\" holds a %s, not an array", x->path.text,
                      BSON_ITER_HOLDS_DOCUMENT (&arr) ? "document" : "scalar");
        return false;
    }
    rm_buf_reset (&sc->ids);
    ids_start = rm_docbuf_begin (&sc->ids);
    bson_iter_recurse (&arr, &elem);
    while (bson_iter_next (&elem)) {
        bson_iter_t child_it;
        if (!build_child (sc, x, &parent_id, &elem, i, err) ||
            !emit (ctx, sc->child.data, (uint32_t) sc->child.len, err) ||
            (sc->dups && !rm_extract_dups_add (sc->dups, sc->child.data,
                                               (uint32_t) sc->child.len, &parent_id, err)))
            return false;
        bson_iter_init_from_data (&child_it, sc->child.data, sc->child.len);
        bson_iter_next (&child_it); /* _id is the child's first field */
        bson_uint32_to_string (i, &k, key, sizeof key);
        rm_docbuf_copy_as (&sc->ids, k, &child_it);
        to->stats->extracted++;
        i++;
    }
    rm_docbuf_end (&sc->ids, ids_start);
    if (x->style == RM_STYLE_PARENT_REF) {
        bool changed;
        if (!rm_doc_unset (&sc->parent, doc, len, &x->path, &changed, err))
            return false;
    } else {
        rm_raw_value_t v = {BSON_TYPE_ARRAY, sc->ids.data, (uint32_t) sc->ids.len};
        if (!rm_doc_set (&sc->parent, doc, len, &x->path, &v, err))
            return false;
    }
    *out = sc->parent.data;
    *out_len = sc->parent.len;
    return true;
}

static bool
rm_extractor_apply (rm_extractor_t *sc, rm_ens_t *from, rm_ens_t *to, const uint8_t *doc,
                    uint32_t len, rm_emit_fn emit, void *ctx, const uint8_t **out,
                    size_t *out_len, bson_error_t *err)
{
    bool take;
    rm_probe_doc (sc->probe, doc, len);
    /* One the step's filter leaves out passes as it is, its array in
     * place, and makes no children. */
    *out = doc;
    *out_len = len;
    if (!rm_step_select (sc->e, sc->s, false, sc->cx, from->stats->name, doc, len, &take, err))
        return false;
    if (!take)
        return true;
    return extract_one (sc, to, doc, len, emit, ctx, out, out_len, err) ||
           rm_doc_error (err, from->stats->name, "document", doc, len);
}

/* Every parent read: the children held (sealed here) go to emit, each _id
 * once. */
static bool
write_children (rm_extractor_t *sc, rm_ens_t *to, rm_store_t *held, rm_emit_fn emit, void *ctx,
                bson_error_t *err)
{
    uint64_t copies;
    if (!rm_store_seal (held, err) || !rm_extract_dups_finish (sc->dups, to->stats->name, err))
        return false;
    if ((copies = rm_extract_dups_copies (sc->dups)) > 0) {
        to->stats->extracted -= copies;
        rm_engine_warn (sc->e, sc->s, "%llu element(s) of \"%s\" made a child already made from "
                        "another (the same _id and contents): written once to %s",
                        (unsigned long long) copies, sc->x->path.text, to->stats->name);
    }
    return rm_extract_dups_copy (sc->dups, held, emit, ctx, err);
}

bool
rm_step_extract_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_extract_t *x = &s->u.extract;
    rm_ens_t *from = rm_engine_find (e, &x->from), *to = rm_engine_find (e, &x->to);
    rm_store_t *next = rm_engine_store_new (e, from, err);
    rm_extractor_t *sc = rm_extractor_new (e, s, rm_engine_probe (e, s, 0));
    rm_store_t *children = next ? rm_engine_store_new (e, to, err) : NULL;
    /* Without copies to leave out, the children go to `to` directly. */
    rm_store_t *held = !sc->dups ? NULL
                       : children ? rm_store_new (e->opts.tmpdir, to->stats->name, err) : NULL;
    rm_instream_t *in = NULL;
    rm_frame_t fr;
    bool ok = children != NULL && (held || !sc->dups);
    int rc = 0;

    if (ok)
        ok = (in = rm_store_open (from->store, err)) != NULL;
    while (ok && (rc = rm_store_next (in, &fr, err)) > 0) {
        const uint8_t *out;
        size_t out_len;
        ok = rm_extractor_apply (sc, from, to, fr.data, fr.len, rm_store_emit,
                                 held ? held : children, &out, &out_len, err) &&
             rm_store_add (next, out, (uint32_t) out_len, err);
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    ok = ok && (!held || write_children (sc, to, held, rm_store_emit, children, err));
    rm_extractor_destroy (sc);
    rm_store_destroy (held);
    if (!ok) {
        rm_store_destroy (next);
        rm_store_destroy (children);
        return false;
    }
    if (!rm_engine_store_swap (from, next, err)) {
        rm_store_destroy (children);
        return false;
    }
    return rm_engine_store_swap (to, children, err);
}

/* The one-pass path (rm_stage_class_t): each parent as it is read, its
 * children going on through the later stages. */
static void
extract_open (rm_engine_t *e, rm_stage_t *st)
{
    st->in = rm_engine_find (e, &st->s->u.extract.from);
    st->to = rm_engine_find (e, &st->s->u.extract.to);
    st->data = rm_extractor_new (e, st->s, rm_engine_probe (e, st->s, 0));
}

/* The children wait in a store of the stage's own until finish. */
static bool
extract_apply (rm_stage_t *st, const uint8_t *doc, uint32_t len, rm_emit_fn emit, void *ctx,
               const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    rm_extractor_t *sc = st->data;
    if (!sc->dups)
        return rm_extractor_apply (sc, st->in, st->to, doc, len, emit, ctx, out, out_len, err);
    if (!sc->held && !(sc->held = rm_store_new (sc->e->opts.tmpdir, st->to->stats->name, err)))
        return false;
    return rm_extractor_apply (sc, st->in, st->to, doc, len, rm_store_emit, sc->held, out,
                               out_len, err);
}

static bool
extract_finish (rm_stage_t *st, rm_emit_fn emit, void *ctx, bson_error_t *err)
{
    rm_extractor_t *sc = st->data;
    return !sc->held || write_children (sc, st->to, sc->held, emit, ctx, err);
}

static void
extract_close (rm_stage_t *st)
{
    rm_extractor_destroy (st->data);
}

const rm_stage_class_t rm_extract_stage = {
    .open = extract_open, .apply = extract_apply, .finish = extract_finish, .close = extract_close};

/* The field it takes apart (rm_engine_probe's 0), and the children's
 * collection with an index on their parent reference when they have one. */
void
rm_extract_probes (const rm_step_t *s, rm_step_run_t *run)
{
    rm_engine_add_probe (run, "path", s->u.extract.path.text, &s->u.extract.from);
}

void
rm_extract_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in)
{
    const rm_extract_t *x = &s->u.extract;
    rm_engine_add_created (out, in, &x->to,
                           x->style == RM_STYLE_CHILD_REFS ? NULL : x->parent_field);
}

/* The step in a plan (step_class.h): its keys read, then freed; its
 * namespaces, for plan.c. */

bool
rm_plan_parse_extract (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_extract_t *x = &s->u.extract;

    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "from")) ok = rm_plan_get_ns (c, it, &x->from);
        else if (!strcmp (k, "to")) ok = rm_plan_get_ns (c, it, &x->to);
        else if (!strcmp (k, "path")) ok = rm_plan_get_path (c, it, &x->path);
        else if (!strcmp (k, "parentField")) ok = rm_plan_get_field_name (c, it, &x->parent_field);
        else if (!strcmp (k, "ordinalField")) ok = rm_plan_get_field_name (c, it, &x->ordinal_field);
        else if (!strcmp (k, "style")) {
            const char *v;
            ok = rm_plan_get_string (c, it, &v);
            if (ok && !strcmp (v, "parentRef")) x->style = RM_STYLE_PARENT_REF;
            else if (ok && !strcmp (v, "childRefs")) x->style = RM_STYLE_CHILD_REFS;
            else if (ok && !strcmp (v, "both")) x->style = RM_STYLE_BOTH;
            else if (ok) ok = rm_plan_fail (c, k, "must be \"parentRef\", \"childRefs\" or \"both\", not \"%s\"", v);
        }
        if (!ok)
            return false;
    }
    if (!x->parent_field)
        x->parent_field = bson_strdup ("parent_id");
    if (x->from.text && x->to.text && !strcmp (x->from.text, x->to.text))
        return rm_plan_fail (c, "to", "must differ from \"from\" (%s)", x->from.text);
    if (x->ordinal_field && !strcmp (x->ordinal_field, x->parent_field))
        return rm_plan_fail (c, "ordinalField", "must differ from \"parentField\"");
    return true;
}

void
rm_plan_clear_extract (rm_step_t *s)
{
    rm_extract_t *x = &s->u.extract;
    rm_plan_nsref_clear (&x->from);
    rm_plan_nsref_clear (&x->to);
    rm_path_destroy (&x->path);
    bson_free (x->parent_field);
    bson_free (x->ordinal_field);
}

/* from is read and written (its path removed); to is made. */
void
rm_plan_ns_extract (const rm_step_t *s, rm_step_ns_t *ns)
{
    rm_step_refs_add (&ns->reads, &s->u.extract.from, "from");
    ns->writes = ns->reads;
    rm_step_ns_make (ns, &s->u.extract.to, "to");
}

/* Online (remodel/passes.h): one pass over the parents. */
size_t
rm_extract_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_extract_t *x = &s->u.extract;
    /* The parents keep their _id; the children name theirs in
     * parentField, except with childRefs, where only the parent's array
     * of their _ids says whose they are. */
    out[0].keep[out[0].n_keep] = &x->from;
    out[0].driver_field[out[0].n_keep++] = "_id";
    out[0].keep[out[0].n_keep] = &x->to;
    if (x->style == RM_STYLE_CHILD_REFS) {
        /* The parent's result (output 0) lists them at path. */
        out[0].driver_list[out[0].n_keep] = x->path.text;
        out[0].list_in[out[0].n_keep] = 0;
    }
    out[0].driver_field[out[0].n_keep++] =
        x->style == RM_STYLE_CHILD_REFS || rm_pass_is_id (x->parent_field) ? NULL : x->parent_field;
    return 1;
}

/* Its inverse (remodel/plan.h): {from P, path A, to C, style parentRef,
 * parentField K, ordinalField N} (all top-level) is undone by embed {from
 * C, into P, localField "_id", foreignField K, as A, project {K: 0, N:
 * 0}, sort {N: 1}}, exact when each element had an _id of its own (the
 * data decides: own_ids). */
void
rm_extract_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    const rm_extract_t *x = &s->u.extract;
    if (s->filter) {
        out->why = "a filter has no inverse (an embed would give the documents it left out an "
                   "empty array)";
    } else if (x->style != RM_STYLE_PARENT_REF) {
        out->why = "its inverse needs style parentRef (each child naming its parent)";
    } else if (x->path.n != 1 || strchr (x->parent_field, '.') || !x->ordinal_field ||
               strchr (x->ordinal_field, '.')) {
        out->why = "its inverse needs a top-level path and parentField, and an ordinalField (the "
                   "elements' order)";
    } else {
        out->plan = BCON_NEW ("remodel", BCON_INT32 (1), "steps", "[", "{", "embed", "{", "from",
                              BCON_UTF8 (x->to.text), "into", BCON_UTF8 (x->from.text),
                              "localField", BCON_UTF8 ("_id"), "foreignField",
                              BCON_UTF8 (x->parent_field), "as", BCON_UTF8 (x->path.text),
                              "project", "{", x->parent_field, BCON_INT32 (0), x->ordinal_field,
                              BCON_INT32 (0), "}", "sort", "{", x->ordinal_field, BCON_INT32 (1),
                              "}", "}", "}", "]");
        out->own_ids = &x->from;
        out->own_ids_path = x->path.text;
    }
}
