/* A step over a batch held in memory (remodel/batchstep.h): the engine
 * itself, given a one-step plan (or a fused run's steps, remodel/fuse.h),
 * a reader over the batch's documents and a writer that hands the results
 * back. */
#include "engine_impl.h"
#include "remodel/batchstep.h"

/* Joins of a batch stay in memory far below this; past it they sort
 * through files as offline. */
#define BATCH_MEMORY (64u << 20)
#define MAX_INPUTS 4

struct rm_batchstep {
    rm_plan_t plan;             /* one step or a run: the caller's, by pointer */
    const char *tmpdir;
    rm_dump_info_t info;        /* the step's distinct inputs */
    size_t slot[MAX_INPUTS];    /* input number -> namespace of info */
    rm_buf_t docs[MAX_INPUTS];  /* per namespace of info */
    bool lookup_since_36681;
    void (*doc_error) (void *ctx, const bson_error_t *why); /* NULL: a failing document fails */
    void *doc_error_ctx;
};

rm_batchstep_t *
rm_batchstep_new (const rm_step_t *s, const char *tmpdir)
{
    return rm_batchstep_new_run (s, 1, tmpdir);
}

/* The run's inputs are its first step's: the steps after it read what it
 * writes (remodel/fuse.h). */
rm_batchstep_t *
rm_batchstep_new_run (const rm_step_t *s, size_t n_steps, const char *tmpdir)
{
    rm_batchstep_t *b = bson_malloc0 (sizeof *b);
    const rm_nsref_t *in[MAX_INPUTS];
    size_t n = rm_step_inputs (s, in, MAX_INPUTS);

    b->plan.steps = (rm_step_t *) s;
    b->plan.n = n_steps ? n_steps : 1;
    b->tmpdir = tmpdir;
    rm_dump_info_init (&b->info);
    for (size_t i = 0; i < n; i++) {
        rm_ns_t *ns = rm_dump_info_find (&b->info, in[i]->db, in[i]->coll);
        if (!ns)
            ns = rm_dump_info_add (&b->info, in[i]->db, in[i]->coll);
        b->slot[i] = ns->index;
    }
    for (size_t i = 0; i < MAX_INPUTS; i++)
        rm_buf_init (&b->docs[i]);
    return b;
}

void
rm_batchstep_lookup (rm_batchstep_t *b, bool since_36681)
{
    b->lookup_since_36681 = since_36681;
}

void
rm_batchstep_add (rm_batchstep_t *b, size_t input, const uint8_t *doc, uint32_t len)
{
    rm_buf_append (&b->docs[b->slot[input]], doc, len);
}

typedef struct {
    rm_batchstep_fn fn;
    void *ctx;
} relay_t;

static bool
relay (void *ctx, const rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    relay_t *r = ctx;
    char name[512];
    return r->fn (r->ctx, rm_ns_name (ns, name, sizeof name), doc, len, err);
}

void
rm_batchstep_doc_error (rm_batchstep_t *b, void (*fn) (void *ctx, const bson_error_t *why),
                        void *ctx)
{
    b->doc_error = fn;
    b->doc_error_ctx = ctx;
}

bool
rm_batchstep_run (rm_batchstep_t *b, rm_batchstep_fn fn, void *ctx, bson_error_t *err)
{
    /* allow_missing: a batch may lack a field the whole collection has;
     * the checks of the data as a whole are the caller's. */
    rm_engine_opts_t o = {.memory = BATCH_MEMORY, .tmpdir = b->tmpdir, .allow_missing = true,
                          .lookup_since_36681 = b->lookup_since_36681, .keep_copies = true,
                          .doc_error = b->doc_error, .doc_error_ctx = b->doc_error_ctx};
    const uint8_t *docs[MAX_INPUTS];
    size_t lens[MAX_INPUTS];
    rm_dump_info_t out;
    rm_engine_t *e;
    rm_reader_t *r;
    rm_writer_t *w = NULL;
    relay_t rl = {fn, ctx};
    bool ok;

    for (size_t i = 0; i < b->info.n_ns; i++) {
        docs[i] = b->docs[i].data;
        lens[i] = b->docs[i].len;
    }
    rm_dump_info_init (&out);
    e = rm_engine_new (&b->plan, &o);
    r = rm_reader_open_memory ("<batch>", &b->info, docs, lens);
    ok = rm_engine_prepare (e, rm_reader_info (r), &out, err);
    if (ok) {
        w = rm_writer_open_fn (&out, relay, &rl);
        ok = rm_engine_run (e, r, w, err) && rm_writer_commit (w, err);
    }
    rm_writer_destroy (w);
    rm_reader_close (r);
    rm_engine_destroy (e);
    rm_dump_info_destroy (&out);
    for (size_t i = 0; i < MAX_INPUTS; i++)
        rm_buf_reset (&b->docs[i]);
    return ok;
}

void
rm_batchstep_destroy (rm_batchstep_t *b)
{
    if (!b)
        return;
    rm_dump_info_destroy (&b->info);
    for (size_t i = 0; i < MAX_INPUTS; i++)
        rm_buf_destroy (&b->docs[i]);
    bson_free (b);
}
