/* The engine's one-pass path: plans made only of per-document steps
 * (set, unset, rename, version, extract, unbucketize, and denormalize
 * whose `from` no step changes) run while the source is read. Each document goes through
 * its steps in plan order and straight to the writer, with no temporary
 * store in between.
 *
 * A denormalize step can only apply once its `from` namespace has been
 * read whole (an archive interleaves namespaces in any order). Until then
 * the documents reaching it wait, in order, in a store of their own, and
 * are let through when `from` ends; documents of one namespace therefore
 * come out in the same order as in the batch path, and the bytes are the
 * same. If `from` turns out too big for --memory, the step is deferred:
 * its waiting documents become the namespace's store and the rest of that
 * namespace's steps run in batch (the external sort-merge) after the pass. */
#include <string.h>

#include "denorm.h"
#include "engine_impl.h"

typedef enum { STAGE_READY, STAGE_WAITING, STAGE_DEFERRED } stage_state_t;

struct rm_stage {
    const rm_step_t *s;
    rm_ens_t *in;   /* the namespace whose documents the step takes */
    rm_ens_t *to;   /* extract, unbucketize: the namespace it creates */
    rm_ens_t *from; /* denormalize: the namespace it copies from */
    stage_state_t state;
    rm_store_t *waiting;
    rm_fields_scratch_t fields;
    rm_extractor_t *x;
    rm_unbucketizer_t *ub;
    rm_denorm_table_t *table;
};

typedef struct {
    rm_engine_t *e;
    rm_ens_t *ns;
    size_t next; /* the first stage still to apply */
} feed_t;

static bool feed (rm_engine_t *e, rm_ens_t *ns, size_t first, const uint8_t *doc, uint32_t len,
                  bson_error_t *err);

static bool
is_field_step (rm_step_kind_t k)
{
    return k == RM_STEP_SET || k == RM_STEP_UNSET || k == RM_STEP_RENAME || k == RM_STEP_VERSION;
}

static bool
is_output (const rm_plan_t *plan, const rm_nsref_t *ref)
{
    for (size_t i = 0; i < plan->n; i++) {
        const rm_nsref_t *outs[4];
        size_t n = rm_step_outputs (&plan->steps[i], outs, 4);
        for (size_t j = 0; j < n; j++)
            if (!strcmp (outs[j]->text, ref->text))
                return true;
    }
    return false;
}

bool
rm_engine_can_stream (const rm_plan_t *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        switch (s->kind) {
        case RM_STEP_SET:
        case RM_STEP_UNSET:
        case RM_STEP_RENAME:
        case RM_STEP_VERSION:
        case RM_STEP_EXTRACT:
            break;
        case RM_STEP_UNBUCKETIZE:
            /* Emptying the buckets, or bringing back onInvalid's readings,
             * is store to store. */
            if (!s->u.unbucketize.keep_source || s->u.unbucketize.invalid_to.text)
                return false;
            break;
        case RM_STEP_DENORMALIZE:
            /* The table is built from the source's own documents. */
            if (is_output (plan, &s->u.denorm.from))
                return false;
            break;
        default:
            return false;
        }
    }
    return plan->n > 0;
}

static void
stages_new (rm_engine_t *e)
{
    /* stages hold bson_t's, which libbson declares 128-byte aligned */
    e->stages = bson_aligned_alloc0 (BSON_ALIGNOF (rm_stage_t), e->plan->n * sizeof *e->stages);
    for (size_t i = 0; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        const rm_step_t *s = &e->plan->steps[i];
        st->s = s;
        switch (s->kind) {
        case RM_STEP_EXTRACT:
            st->in = rm_engine_find (e, &s->u.extract.from);
            st->to = rm_engine_find (e, &s->u.extract.to);
            st->x = rm_extractor_new (s, rm_engine_probe (e, s, 0));
            break;
        case RM_STEP_UNBUCKETIZE:
            st->in = rm_engine_find (e, &s->u.unbucketize.from);
            st->to = rm_engine_find (e, &s->u.unbucketize.to);
            st->ub = rm_unbucketizer_new (s, st->to);
            break;
        case RM_STEP_DENORMALIZE:
            st->in = rm_engine_find (e, &s->u.denorm.in);
            st->from = rm_engine_find (e, &s->u.denorm.from);
            st->table = rm_denorm_table_new (s, rm_engine_step_run (e, s));
            st->state = STAGE_WAITING;
            break;
        default:
            st->in = rm_engine_find (e, &s->u.fields.in);
            rm_fields_scratch_init (&st->fields);
            break;
        }
    }
}

void
rm_engine_stages_destroy (rm_engine_t *e)
{
    if (!e->stages)
        return;
    for (size_t i = 0; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        rm_store_destroy (st->waiting);
        rm_extractor_destroy (st->x);
        rm_unbucketizer_destroy (st->ub);
        rm_denorm_table_destroy (st->table);
        if (is_field_step (st->s->kind))
            rm_fields_scratch_destroy (&st->fields);
    }
    bson_free (e->stages);
    e->stages = NULL;
}

static bool
step_error (const rm_stage_t *st, bson_error_t *err)
{
    if (err->message[0] && strncmp (err->message, "step ", 5) != 0)
        rm_error_prefix (err, "step %zu (%s)", st->s->index, st->s->op);
    return false;
}

static bool
feed_child (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    feed_t *f = ctx;
    return feed (f->e, f->ns, f->next, doc, len, err);
}

/* Takes one document of ns through the stages from `first` on and writes
 * it, or parks it before a stage that cannot apply yet. */
static bool
feed (rm_engine_t *e, rm_ens_t *ns, size_t first, const uint8_t *doc, uint32_t len,
      bson_error_t *err)
{
    for (size_t i = first; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        const uint8_t *out;
        size_t out_len;

        if (st->in != ns)
            continue;
        if (st->state != STAGE_READY) {
            if (!st->waiting && !(st->waiting = rm_engine_store_new (e, ns, err)))
                return false;
            return rm_store_add (st->waiting, doc, len, err);
        }
        switch (st->s->kind) {
        case RM_STEP_EXTRACT: {
            feed_t child = {e, st->to, i + 1};
            if (!rm_extractor_apply (st->x, ns, st->to, doc, len, feed_child, &child, &out,
                                     &out_len, err))
                return step_error (st, err);
            break;
        }
        case RM_STEP_UNBUCKETIZE: {
            /* the buckets stay as they are */
            feed_t child = {e, st->to, i + 1};
            if (!rm_unbucketizer_apply (st->ub, ns, doc, len, feed_child, &child, err))
                return step_error (st, err);
            out = doc;
            out_len = len;
            break;
        }
        case RM_STEP_DENORMALIZE:
            if (!rm_denorm_table_apply (st->table, ns->stats->name, doc, len, &out, &out_len, err))
                return step_error (st, err);
            break;
        default:
            if (!rm_fields_apply (&st->fields, st->s, ns->stats->name, doc, len, &out, &out_len,
                                  err))
                return step_error (st, err);
            break;
        }
        doc = out;
        len = (uint32_t) out_len;
    }
    return rm_engine_emit (e, ns, doc, len, err);
}

/* `from` of a waiting denormalize has been read whole: the documents that
 * waited go through, in their order, and the rest follow directly. */
static bool
release (rm_engine_t *e, size_t i, bson_error_t *err)
{
    rm_stage_t *st = &e->stages[i];
    rm_instream_t *in;
    rm_frame_t f;
    int rc;

    st->state = STAGE_READY;
    if (!st->waiting)
        return true;
    if (!rm_store_seal (st->waiting, err) || !(in = rm_store_open (st->waiting, err)))
        return false;
    while ((rc = rm_store_next (in, &f, err)) > 0)
        if (!feed (e, st->in, i, f.data, f.len, err)) {
            rc = -1;
            break;
        }
    rm_instream_close (in);
    rm_store_destroy (st->waiting);
    st->waiting = NULL;
    return rc == 0;
}

/* A document of the source's namespace ns that some denormalize copies
 * from: it fills their tables (and a store, should one be deferred). */
static bool
fill_tables (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    if (!rm_store_add (ns->store, doc, len, err))
        return false;
    for (size_t i = 0; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        if (st->from != ns || st->state != STAGE_WAITING)
            continue;
        rm_denorm_table_add (st->table, doc, len);
        if (rm_denorm_table_need (st->table) > e->opts.memory) {
            /* The sort-merge reads `from` whole again: its probes start over. */
            rm_step_run_t *run = rm_engine_step_run (e, st->s);
            for (size_t p = 1; p < run->n_probes; p++)
                run->probes[p].docs = 0;
            st->state = STAGE_DEFERRED;
            rm_denorm_table_destroy (st->table);
            st->table = NULL;
        }
    }
    return true;
}

/* After the pass: deferred steps, and every later step on what they hold
 * back, run store to store as in the batch path. held[i]: namespace i's
 * documents are in its store rather than written. */
static bool
run_deferred (rm_engine_t *e, bool *held, bson_error_t *err)
{
    for (size_t i = 0; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        size_t in = st->in->out->index;
        if (st->state == STAGE_DEFERRED && !held[in]) {
            if (st->waiting) {
                if (!rm_store_seal (st->waiting, err))
                    return false;
                st->in->store = st->waiting;
                st->waiting = NULL;
            } else if (!(st->in->store = rm_engine_store_new (e, st->in, err)) ||
                       !rm_store_seal (st->in->store, err)) {
                return false;
            }
            held[in] = true;
        }
        if (!held[in])
            continue;
        if (st->to)
            held[st->to->out->index] = true;
        if (!rm_engine_run_step (e, st->s, err))
            return false;
    }
    return true;
}

bool
rm_engine_stream (rm_engine_t *e, rm_reader_t *r, const size_t *map, bson_error_t *err)
{
    bool *held = bson_malloc0 (e->n_ns * sizeof *held);
    rm_item_t item;
    uint64_t docs = 0;
    bool ok = true;
    int rc;

    stages_new (e);
    for (size_t i = 0; i < e->n_ns; i++)
        e->ns[i].out->crc_given = !e->ns[i].stats->touched;
    /* A denormalize's `from` is also kept in a store, in case its table
     * outgrows --memory and the sort-merge needs it. */
    for (size_t i = 0; ok && i < e->plan->n; i++) {
        rm_ens_t *from = e->stages[i].from;
        if (from && !from->store && !(from->store = rm_engine_store_new (e, from, err)))
            ok = false;
    }
    while (ok && (rc = rm_reader_next (r, &item, err)) > 0) {
        rm_ens_t *ns = &e->ns[map[item.ns->index]];
        if (item.kind == RM_ITEM_DOC) {
            ns->stats->docs_in++;
            if (e->opts.progress)
                e->opts.progress (e->opts.progress_ctx, ++docs);
            /* Only the `from` of a denormalize has a store during the pass. */
            if (ns->store)
                ok = fill_tables (e, ns, item.doc, item.len, err);
            if (ok)
                ok = ns->stats->touched || ns->read
                         ? feed (e, ns, 0, item.doc, item.len, err)
                         : rm_engine_emit (e, ns, item.doc, item.len, err);
            continue;
        }
        if (!ns->stats->touched && e->w) {
            ns->out->crc = item.ns->crc;
            ok = rm_writer_ns_end (e->w, ns->out, err);
        }
        if (ns->store)
            ok = ok && rm_store_seal (ns->store, err);
        for (size_t i = 0; ok && i < e->plan->n; i++)
            if (e->stages[i].from == ns && e->stages[i].state == STAGE_WAITING)
                ok = release (e, i, err);
    }
    if (ok && rc < 0)
        ok = false;
    ok = ok && run_deferred (e, held, err);
    /* Namespaces written during the pass end now: extract's children and
     * released documents may come until the very end. */
    for (size_t i = 0; ok && e->w && i < e->n_ns; i++)
        if (e->ns[i].stats->touched && !held[i])
            ok = rm_writer_ns_end (e->w, e->ns[i].out, err);
    ok = ok && rm_engine_write_stores (e, held, err);
    for (size_t i = 0; ok && i < e->plan->n; i++)
        ok = rm_engine_check_step (e, &e->plan->steps[i], err);
    rm_engine_stages_destroy (e);
    bson_free (held);
    return ok;
}
