/* The engine's one-pass path: plans made only of per-document steps
 * (those whose row has a stage class that can run within the plan: set,
 * unset, rename, version, extract, copy, move, delete, unbucketize that
 * keeps its buckets, and denormalize whose `from` no step changes) run
 * while the source is read. Each document goes through its steps in plan order and straight
 * to the writer, with no temporary store in between.
 *
 * A stage with a `from` (denormalize) can only apply once that namespace
 * has been read whole (an archive interleaves namespaces in any order).
 * Until then the documents reaching it wait, in order, in a store of their
 * own, and are let through when `from` ends; documents of one namespace
 * therefore come out in the same order as in the batch path, and the
 * bytes are the same. If `from` turns out too big for --memory, the step
 * is deferred: its waiting documents become the namespace's store and the
 * rest of that namespace's steps run in batch (the external sort-merge)
 * after the pass. */
#include <string.h>

#include "bsonwalk.h"
#include "engine_impl.h"
#include "step_class.h"

typedef struct {
    rm_engine_t *e;
    rm_ens_t *ns;
    size_t next; /* the first stage still to apply */
} feed_t;

/* Documents of one namespace read one after another, held in batches for
 * the namespace's first stage to compute ahead on threads
 * (rm_stage_class_t.ahead): a batch is given when full, and the one given
 * before it is then fed on in order, while the threads compute the new
 * one. A batch: this many documents, or bytes of them, at most. */
#define BATCH_DOCS 1024
#define BATCH_BYTES (4u << 20)
typedef struct {
    rm_buf_t bytes;
    size_t *off;                /* in bytes; SIZE_MAX: the reader holds it */
    const uint8_t **docs;
    uint32_t *lens;
    size_t n;
    size_t held_bytes;          /* of the documents the reader holds */
} held_t;
typedef struct {
    rm_ens_t *ns;       /* the namespace held (NULL: none) */
    rm_stage_t *st;     /* its first stage */
    held_t slot[2];
    int fill;           /* the slot being filled */
    int given;          /* the slot given and not fed (-1: none) */
    int threads;
    size_t max_bytes;   /* BATCH_BYTES, less under a small --memory */
    uint64_t read;      /* documents read, for the progress */
} batch_t;

static bool feed (rm_engine_t *e, rm_ens_t *ns, size_t first, const uint8_t *doc, uint32_t len,
                  bson_error_t *err);

static const rm_stage_class_t *
stage_class (const rm_step_t *s)
{
    return rm_step_classes[s->kind].stage;
}

/* Whether some step of plan writes ref. */
static bool
plan_writes (const rm_plan_t *plan, const rm_nsref_t *ref)
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
        const rm_stage_class_t *c = stage_class (&plan->steps[i]);
        if (!c || (c->can && !c->can (plan, &plan->steps[i])) ||
            (c->reads_first && plan_writes (plan, c->reads_first (&plan->steps[i]))))
            return false;
    }
    return plan->n > 0;
}

static void
stages_new (rm_engine_t *e)
{
    e->stages = bson_malloc0 (e->plan->n * sizeof *e->stages);
    for (size_t i = 0; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        st->s = &e->plan->steps[i];
        stage_class (st->s)->open (e, st);
        /* It applies once `from` has been read whole. */
        st->state = st->from ? RM_STAGE_WAITING : RM_STAGE_READY;
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
        stage_class (st->s)->close (st);
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
 * it, or parks it before a stage that cannot apply yet. A document the
 * reader holds (rm_item_t.held) is copied into the writer's buffer even
 * written as it came: a step's namespace alternates between those and
 * computed ones (a filter's), and the write thread's pieces (64 a
 * buffer) then made a writev every thirty documents, which cost more
 * than the copies. */
static bool
feed (rm_engine_t *e, rm_ens_t *ns, size_t first, const uint8_t *doc, uint32_t len,
      bson_error_t *err)
{
    const uint8_t *came = doc;
    /* Field steps never touch _id (check_paths refuses it): what they
     * give holds the _ids that came. */
    bool ids_came = first == 0;
    for (size_t i = first; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        const uint8_t *out;
        size_t out_len;
        feed_t child;

        if (st->in != ns)
            continue;
        if (st->state != RM_STAGE_READY) {
            if (!st->waiting && !(st->waiting = rm_engine_store_new (e, ns, err)))
                return false;
            return rm_store_add (st->waiting, doc, len, err);
        }
        child = (feed_t){e, st->to, i + 1};
        if (!stage_class (st->s)->apply (st, doc, len, feed_child, &child, &out, &out_len, err))
            return step_error (st, err);
        if (!out)
            return true; /* taken out of ns (move, delete) */
        ids_came &= out == came || st->s->kind == RM_STEP_SET || st->s->kind == RM_STEP_UNSET ||
                    st->s->kind == RM_STEP_RENAME || st->s->kind == RM_STEP_VERSION;
        doc = out;
        len = (uint32_t) out_len;
    }
    return rm_engine_emit_as (e, ns, doc, len, ids_came, err);
}

/* `from` of a waiting stage has been read whole: the documents that
 * waited go through, in their order, and the rest follow directly. */
static bool
release (rm_engine_t *e, size_t i, bson_error_t *err)
{
    rm_stage_t *st = &e->stages[i];
    rm_instream_t *in;
    rm_frame_t f;
    int rc;

    st->state = RM_STAGE_READY;
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

/* A document of the source's namespace ns that some stage must read whole
 * first (a denormalize's `from`): it fills their data (and a store, should
 * one be deferred). */
static bool
fill_stages (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    if (!rm_store_add (ns->store, doc, len, err))
        return false;
    for (size_t i = 0; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        if (st->from != ns || st->state != RM_STAGE_WAITING)
            continue;
        if (stage_class (st->s)->fill (st, doc, len) > e->opts.memory) {
            /* The batch path reads `from` whole again: its probes start
             * over. */
            rm_step_run_t *run = rm_engine_step_run (e, st->s);
            for (size_t p = 0; p < run->n_probes; p++)
                if (!strcmp (run->probes[p].ns, ns->stats->name))
                    run->probes[p].docs = 0;
            st->state = RM_STAGE_DEFERRED;
            stage_class (st->s)->close (st);
            st->data = NULL;
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
        if (st->state == RM_STAGE_DEFERRED && !held[in]) {
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

/* The stage a document of ns goes to first when it computes ahead and
 * applies now (NULL: none, or the engine has one thread). A namespace that
 * is some stage's `from` is filled document by document (fill_stages). */
static rm_stage_t *
ahead_stage (rm_engine_t *e, const batch_t *b, rm_ens_t *ns)
{
    if (b->threads < 2 || ns->store || !(ns->stats->touched || ns->read))
        return NULL;
    for (size_t i = 0; i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        if (st->in == ns)
            return stage_class (st->s)->ahead && st->state == RM_STAGE_READY ? st : NULL;
    }
    return NULL;
}

/* The slot's documents fed on in order, their results as computed
 * ahead; emptied. */
static bool
batch_feed (rm_engine_t *e, batch_t *b, int k, bson_error_t *err)
{
    const rm_stage_class_t *c = stage_class (b->st->s);
    held_t *h = &b->slot[k];
    bool ok = true;

    c->ahead_use (b->st, k);
    for (size_t i = 0; ok && i < h->n; i++) {
        b->ns->stats->docs_in++;
        if (e->opts.progress)
            e->opts.progress (e->opts.progress_ctx, ++b->read);
        ok = feed (e, b->ns, 0, h->docs[i], h->lens[i], err);
    }
    c->ahead_use (b->st, -1);
    rm_buf_reset (&h->bytes);
    h->n = 0;
    h->held_bytes = 0;
    return ok;
}

/* The slot being filled given to the stage, the one given before fed
 * while the threads compute it. */
static bool
batch_give (rm_engine_t *e, batch_t *b, bson_error_t *err)
{
    held_t *h = &b->slot[b->fill];
    int before = b->given;

    for (size_t i = 0; i < h->n; i++)
        if (h->off[i] != SIZE_MAX)
            h->docs[i] = h->bytes.data + h->off[i];
    stage_class (b->st->s)->ahead (b->st, b->fill, h->docs, h->lens, h->n, b->threads);
    b->given = b->fill;
    b->fill = 1 - b->fill;
    if (before < 0)
        return true;
    return batch_feed (e, b, before, err);
}

/* Everything held fed on, in order. */
static bool
batch_flush (rm_engine_t *e, batch_t *b, bson_error_t *err)
{
    bool ok = true;
    if (!b->ns)
        return true;
    if (b->slot[b->fill].n)
        ok = batch_give (e, b, err);
    /* Failed, a slot given stays noted: batch_destroy waits for it. */
    if (ok && b->given >= 0) {
        ok = batch_feed (e, b, b->given, err);
        b->given = -1;
    }
    b->ns = ok ? NULL : b->ns;
    return ok;
}

/* A document into the batch (what is held of another namespace fed on
 * first): copied, unless the reader holds it until it closes (held: a
 * mapped archive), which spares a copy of each. */
static bool
batch_add (rm_engine_t *e, batch_t *b, rm_ens_t *ns, rm_stage_t *st, const uint8_t *doc,
           uint32_t len, bool held, bson_error_t *err)
{
    held_t *h;
    if (b->ns && b->ns != ns && !batch_flush (e, b, err))
        return false;
    h = &b->slot[b->fill];
    if (!h->off) {
        h->off = bson_malloc (BATCH_DOCS * sizeof *h->off);
        h->docs = bson_malloc (BATCH_DOCS * sizeof *h->docs);
        h->lens = bson_malloc (BATCH_DOCS * sizeof *h->lens);
    }
    b->ns = ns;
    b->st = st;
    if (held) {
        h->off[h->n] = SIZE_MAX;
        h->docs[h->n] = doc;
        h->held_bytes += len;
    } else {
        h->off[h->n] = h->bytes.len;
        rm_buf_append (&h->bytes, doc, len);
    }
    h->lens[h->n++] = len;
    return h->n < BATCH_DOCS && h->bytes.len + h->held_bytes < b->max_bytes ? true
                                                                           : batch_give (e, b, err);
}

static void
batch_destroy (batch_t *b)
{
    /* After an error, a slot given may still be computed on threads that
     * read its documents: waited for before they are freed. */
    if (b->given >= 0) {
        stage_class (b->st->s)->ahead_use (b->st, b->given);
        stage_class (b->st->s)->ahead_use (b->st, -1);
    }
    for (int k = 0; k < 2; k++) {
        rm_buf_destroy (&b->slot[k].bytes);
        bson_free (b->slot[k].off);
        bson_free (b->slot[k].docs);
        bson_free (b->slot[k].lens);
    }
}

/* Whether ns's documents pass straight to the writer, as they came: no
 * step reads them, nor the output hook. */
static bool
passes (const rm_engine_t *e, const rm_ens_t *ns)
{
    return !ns->store && !ns->stats->touched && !ns->read && !e->opts.output;
}

/* A run of such documents (a reader's, rm_item_t.n_docs), counted and
 * written in one piece: one call per document was half again a constant
 * set's cost over convert's. */
static bool
pass_run (rm_engine_t *e, batch_t *b, rm_ens_t *ns, const rm_item_t *item, bson_error_t *err)
{
    ns->stats->docs_in += item->n_docs;
    ns->stats->docs_out += item->n_docs;
    for (uint32_t k = 0; e->opts.progress && k < item->n_docs; k++)
        e->opts.progress (e->opts.progress_ctx, ++b->read);
    return !e->w || rm_writer_docs (e->w, ns->out, item->doc, item->len, item->n_docs, item->held, err);
}

/* One document of ns read: into the batch of its first stage's threads,
 * or through its stages (what the batch holds fed on first). */
static bool
stream_doc (rm_engine_t *e, batch_t *b, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bool held,
            bson_error_t *err)
{
    rm_stage_t *st = ahead_stage (e, b, ns);
    if (st)
        return batch_add (e, b, ns, st, doc, len, held, err);
    /* What the batch holds came first. */
    if (!batch_flush (e, b, err))
        return false;
    ns->stats->docs_in++;
    if (e->opts.progress)
        e->opts.progress (e->opts.progress_ctx, ++b->read);
    /* Only a stage's `from` has a store during the pass. */
    if (ns->store && !fill_stages (e, ns, doc, len, err))
        return false;
    if (ns->stats->touched || ns->read)
        return feed (e, ns, 0, doc, len, err);
    return held ? rm_engine_emit_held (e, ns, doc, len, err) : rm_engine_emit_as (e, ns, doc, len, true, err);
}

bool
rm_engine_stream (rm_engine_t *e, rm_reader_t *r, const size_t *map, bson_error_t *err)
{
    bool *held = bson_malloc0 (e->n_ns * sizeof *held);
    rm_item_t item;
    batch_t b;
    bool ok = true;
    int rc;

    memset (&b, 0, sizeof b);
    rm_buf_init (&b.slot[0].bytes);
    rm_buf_init (&b.slot[1].bytes);
    b.given = -1;
    b.threads = e->opts.threads;
    /* Two batches and their results are held: a sixteenth of --memory
     * each at most. */
    b.max_bytes = e->opts.memory / 16 < BATCH_BYTES ? e->opts.memory / 16 : BATCH_BYTES;
    stages_new (e);
    for (size_t i = 0; i < e->n_ns; i++)
        e->ns[i].out->crc_given = !e->ns[i].stats->touched;
    /* A stage's `from` is also kept in a store, in case its data outgrows
     * --memory and the batch path needs it. */
    for (size_t i = 0; ok && i < e->plan->n; i++) {
        rm_ens_t *from = e->stages[i].from;
        if (from && !from->store && !(from->store = rm_engine_store_new (e, from, err)))
            ok = false;
    }
    /* Runs of documents (rm_reader_next_run): a namespace no step reads
     * goes to the writer a run at a time, the others' one by one. */
    while (ok && (rc = rm_reader_next_run (r, &item, err)) > 0) {
        rm_ens_t *ns = &e->ns[map[item.ns->index]];
        if (item.kind == RM_ITEM_DOC && passes (e, ns)) {
            ok = batch_flush (e, &b, err) && pass_run (e, &b, ns, &item, err);
            continue;
        }
        if (item.kind == RM_ITEM_DOC) {
            for (uint32_t at = 0, k = 0; ok && k < item.n_docs; k++) {
                const uint8_t *doc = item.doc + at;
                /* A run's lengths were checked by the reader. */
                uint32_t len = item.n_docs == 1 ? item.len : rm_walk_le32 (doc);
                at += len;
                ok = stream_doc (e, &b, ns, doc, len, item.held, err);
            }
            continue;
        }
        /* What the batch holds came first. */
        if (!batch_flush (e, &b, err)) {
            ok = false;
            break;
        }
        if (!ns->stats->touched && e->w) {
            ns->out->crc = item.ns->crc;
            ok = rm_writer_ns_end (e->w, ns->out, err);
        }
        if (ns->store)
            ok = ok && rm_store_seal (ns->store, err);
        for (size_t i = 0; ok && i < e->plan->n; i++)
            if (e->stages[i].from == ns && e->stages[i].state == RM_STAGE_WAITING)
                ok = release (e, i, err);
    }
    if (ok && rc < 0)
        ok = false;
    ok = ok && batch_flush (e, &b, err);
    batch_destroy (&b);
    /* Documents a stage held back for the whole source (an extract's
     * children, each _id once) go on through the later stages. */
    for (size_t i = 0; ok && i < e->plan->n; i++) {
        rm_stage_t *st = &e->stages[i];
        feed_t child = {e, st->to, i + 1};
        if (st->data && stage_class (st->s)->finish &&
            !stage_class (st->s)->finish (st, feed_child, &child, err))
            ok = step_error (st, err);
    }
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
