/* copy, move, delete (remodel/plan.h's rm_copy_t): the documents of
 * `from` the step's filter selects, in their order, go to `to` (copy,
 * move), each through `fields` (a $set over it as it came) and then
 * `project` (top-level fields kept or dropped, _id always kept); move and
 * delete take them out of `from`, whose other documents keep their place
 * and bytes. A copy keeps its document's _id, so `to` (a new or empty
 * namespace) holds each once. The keys, the namespaces, the inverse and
 * the online passes are in step_copy_plan.c. */
#include <string.h>

#include "docbuf.h"
#include "embed_join.h"
#include "engine_impl.h"
#include "step_class.h"

typedef struct {
    rm_engine_t *e;
    const rm_step_t *s;
    rm_expr_ctx_t *cx;       /* the filter's and the fields' */
    rm_buf_t set, out;       /* the document through fields, then project */
} copier_t;

static copier_t *
copier_new (rm_engine_t *e, const rm_step_t *s)
{
    copier_t *c = bson_malloc0 (sizeof *c);
    c->e = e;
    c->s = s;
    c->cx = rm_expr_ctx_new (rm_engine_now (e));
    rm_buf_init (&c->set);
    rm_buf_init (&c->out);
    rm_engine_step_run (e, s)->selects = true;
    return c;
}

static void
copier_destroy (copier_t *c)
{
    if (!c)
        return;
    rm_expr_ctx_destroy (c->cx);
    rm_buf_destroy (&c->set);
    rm_buf_destroy (&c->out);
    bson_free (c);
}

/* Whether project keeps the top-level field k. */
static bool
kept (const rm_copy_t *x, const char *k)
{
    bool listed = false;
    if (!strcmp (k, "_id"))
        return true;
    for (size_t i = 0; i < x->n_proj && !listed; i++)
        listed = !strcmp (x->proj[i], k);
    return listed == x->project_inclusive;
}

/* The copy of doc (len) as `to` gets it: *out, *out_len. false with err
 * when a field's expression fails on it. */
static bool
make_copy (copier_t *c, const uint8_t *doc, uint32_t len, const uint8_t **out, size_t *out_len,
           bson_error_t *err)
{
    const rm_copy_t *x = &c->s->u.copy;
    bson_iter_t it;
    size_t start;

    *out = doc;
    *out_len = len;
    if (x->set) {
        if (!rm_expr_set_apply (x->set, c->cx, doc, len, &c->set, err))
            return false;
        *out = c->set.data;
        *out_len = c->set.len;
    }
    if (!x->project)
        return true;
    rm_buf_reset (&c->out);
    start = rm_docbuf_begin (&c->out);
    if (bson_iter_init_from_data (&it, *out, *out_len))
        while (bson_iter_next (&it))
            if (kept (x, bson_iter_key (&it)))
                rm_docbuf_copy (&c->out, &it);
    rm_docbuf_end (&c->out, start);
    *out = c->out.data;
    *out_len = c->out.len;
    return true;
}

/* One document of `from`: its copy to emit when selected (copy, move);
 * *out what `from` keeps of it: itself, or NULL (move, delete: taken). A
 * document whose filter or fields fail, where the run collects such
 * failures, stays where it is and is not copied. */
static bool
copier_apply (copier_t *c, const char *ns_name, const uint8_t *doc, uint32_t len,
              rm_emit_fn emit, void *ctx, const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    rm_step_run_t *run = rm_engine_step_run (c->e, c->s);
    const uint8_t *copy;
    size_t copy_len;
    bool take;

    *out = doc;
    *out_len = len;
    rm_expr_ctx_reset (c->cx);
    if (!rm_step_select (c->e, c->s, false, c->cx, ns_name, doc, len, &take, err))
        return false;
    if (!take) {
        run->passed++;
        return true;
    }
    if (c->s->kind != RM_STEP_DELETE) {
        if (!make_copy (c, doc, len, &copy, &copy_len, err)) {
            rm_doc_error (err, ns_name, "document", doc, len);
            if (!rm_engine_doc_error (c->e, c->s, err))
                return false;
            run->passed++;
            return true;
        }
        if (!emit (ctx, copy, (uint32_t) copy_len, err))
            return false;
    }
    run->selected++;
    if (c->s->kind != RM_STEP_COPY)
        *out = NULL;
    return true;
}

bool
rm_step_copy_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_copy_t *x = &s->u.copy;
    rm_ens_t *from = rm_engine_find (e, &x->from);
    rm_ens_t *to = s->kind != RM_STEP_DELETE ? rm_engine_find (e, &x->to) : NULL;
    /* copy leaves `from` as it is: no new store for it */
    rm_store_t *next = s->kind != RM_STEP_COPY ? rm_engine_store_new (e, from, err) : NULL;
    rm_store_t *made = NULL;
    copier_t *c = NULL;
    rm_instream_t *in = NULL;
    rm_frame_t fr;
    bool ok = s->kind == RM_STEP_COPY || next != NULL;
    int rc = 0;

    if (ok && to)
        ok = (made = rm_engine_store_new (e, to, err)) != NULL;
    if (ok)
        ok = (in = rm_store_open (from->store, err)) != NULL;
    if (ok)
        c = copier_new (e, s);
    while (ok && (rc = rm_store_next (in, &fr, err)) > 0) {
        const uint8_t *out;
        size_t out_len;
        ok = copier_apply (c, from->stats->name, fr.data, fr.len, rm_store_emit, made, &out,
                           &out_len, err) &&
             (!out || !next || rm_store_add (next, out, (uint32_t) out_len, err));
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    copier_destroy (c);
    if (!ok) {
        rm_store_destroy (next);
        rm_store_destroy (made);
        return false;
    }
    if (next && !rm_engine_store_swap (from, next, err)) {
        rm_store_destroy (made);
        return false;
    }
    return !made || rm_engine_store_swap (to, made, err);
}

/* The one-pass path (rm_stage_class_t): each document of `from` as it is
 * read, its copy going on through the later stages. */
static void
copy_open (rm_engine_t *e, rm_stage_t *st)
{
    st->in = rm_engine_find (e, &st->s->u.copy.from);
    st->to = st->s->kind != RM_STEP_DELETE ? rm_engine_find (e, &st->s->u.copy.to) : NULL;
    st->data = copier_new (e, st->s);
}

static bool
copy_apply (rm_stage_t *st, const uint8_t *doc, uint32_t len, rm_emit_fn emit, void *ctx,
            const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    return copier_apply (st->data, st->in->stats->name, doc, len, emit, ctx, out, out_len, err);
}

static void
copy_close (rm_stage_t *st)
{
    copier_destroy (st->data);
}

const rm_stage_class_t rm_copy_stage = {.open = copy_open, .apply = copy_apply,
                                        .close = copy_close};

/* `to` is a new collection: its _id index here, the source's others
 * carried by the indexes function (step_copy_indexes.c). */
void
rm_copy_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in)
{
    if (s->kind != RM_STEP_DELETE)
        rm_engine_add_created (out, in, &s->u.copy.to, NULL);
}
