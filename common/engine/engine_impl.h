/* Internals shared by the engine and its steps. */
#ifndef REMODEL_ENGINE_IMPL_H
#define REMODEL_ENGINE_IMPL_H

#include "probe.h"
#include "remodel/engine.h"
#include "remodel/value.h"
#include "store.h"

typedef struct {
    rm_ns_stats_t *stats; /* into rm_engine_t.stats */
    rm_ns_t *out;       /* the namespace in the output list */
    rm_store_t *store;  /* its documents so far, when a step reads it */
    bool read;          /* some step reads it (it may be only read) */
    size_t last_step;   /* 1 + index of the last step that reads or writes it */
    bool written;       /* its result went straight to the writer */
} rm_ens_t;

typedef struct rm_stage rm_stage_t;


/* What one step saw, for the checks once it has run (engine_checks.c,
 * engine_step.c). */
typedef struct {
    rm_probe_t *probes;    /* the fields it names (none with allowMissing) */
    size_t n_probes;
    uint64_t parents;      /* embed, summarize: documents of `into`... */
    uint64_t children;     /* ...of `from`... */
    uint64_t matched;      /* ...and of them, those some parent took */
    uint64_t lookups;      /* denormalize: references looked up... */
    uint64_t missed;       /* ...that found nothing */
    uint64_t readings;     /* bucketize: readings... */
    uint64_t invalid;      /* ...sent to onInvalid */
    bool checked;          /* rm_engine_check_step ran */
    bool counts;           /* a step rewriting documents in place... */
    uint64_t changed;      /* ...counts those whose bytes it changed... */
    uint64_t unchanged;    /* ...and those it left as they were */
    bool selects;          /* copy, move, delete count... */
    uint64_t selected;     /* ...the documents their filter took... */
    uint64_t passed;       /* ...and those it left */
    uint64_t filter_lacking; /* documents the filter left out that lack... */
    char filter_path[128];   /* ...this field, which it compares (a warning) */
} rm_step_run_t;

/* What a sink store (rm_engine_store_new) writes to. */
struct rm_sink_ctx {
    struct rm_engine *e;
    rm_ens_t *ns;
};

struct rm_engine {
    const rm_plan_t *plan;
    rm_engine_opts_t opts;
    rm_dump_info_t *out;
    rm_ens_t *ns;       /* parallel to out->ns */
    rm_ns_stats_t *stats;
    size_t n_ns;
    bool spilled;
    rm_stage_t *stages; /* the one-pass path's per-step state */
    rm_writer_t *w;     /* the output while running (NULL: count only) */
    struct rm_sink_ctx *sinks; /* per namespace, for rm_engine_store_new */
    size_t step;        /* 1 + index of the step running, 0 between steps */
    rm_step_run_t *runs; /* per step */
    /* Store to store, the stores stay in memory within half of --memory
     * (pooled); a step that needs more of it for its own tables moves
     * them to their files first (rm_engine_stores_fit). */
    bool pooled;
    rm_store_pool_t pool;
    char **warnings;
    size_t n_warnings;
    char **index_changes; /* rm_engine_index_changes */
    size_t n_index_changes;
};

/* $$NOW of the run (rm_engine_opts_t's now_ms). */
int64_t rm_engine_now (const rm_engine_t *e);
/* A step's error on one document: handed to the caller's doc_error
 * (true: the step goes on, the document unchanged) where it collects
 * them and the error is RM_ERR_DATA, else false (the run stops). The
 * error is prefixed with the step first. */
bool rm_engine_doc_error (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);

/* A step that rewrites documents where they are counts each: changed
 * when its bytes differ from what came in (the summary's counts). */
void rm_engine_rewrote (rm_engine_t *e, const rm_step_t *s, const uint8_t *in, size_t in_len,
                        const uint8_t *out, size_t out_len);

/* A step's filter over one document: *take whether the step changes it
 * (true without a filter). A document it leaves out that lacks a field
 * the filter compares ({v: {$lt: 2}} never matches a missing v) is
 * counted for the step's warning. false with err (prefixed "filter")
 * when an expression of it fails. cx: the step's, reset by it. */
bool rm_engine_filter (rm_engine_t *e, const rm_step_t *s, rm_expr_ctx_t *cx, const uint8_t *doc,
                       uint32_t len, bool *take, bson_error_t *err);
/* Its two halves for a document the filter left out: the field it
 * compares that doc lacks (NULL: none), found with the cx that matched
 * (no engine: a thread may ask), and that count kept for the warning. */
const rm_path_t *rm_engine_filter_lacking (const rm_step_t *s, rm_expr_ctx_t *cx,
                                           const uint8_t *doc, uint32_t len);
void rm_engine_filter_left (rm_engine_t *e, const rm_step_t *s, const rm_path_t *lacking);

/* The steps' runs, with the probes their rows ask for (engine_step.c),
 * and freed (engine_checks.c). */
void rm_engine_runs_init (rm_engine_t *e);
void rm_engine_runs_destroy (rm_engine_t *e);
rm_step_run_t *rm_engine_step_run (rm_engine_t *e, const rm_step_t *s);
/* The step's ith probe (in the order engine_checks.c lists them), or NULL
 * when it has none (allowMissing). */
rm_probe_t *rm_engine_probe (rm_engine_t *e, const rm_step_t *s, size_t i);
/* The checks once a step has run (engine_step.c): fields in no document,
 * joins matching nothing (errors, prefixed with the step), mostly-missed
 * lookups and mostly-invalid readings (warnings). */
bool rm_engine_check_step (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);

/* The namespaces and their stores (engine_ns.c). */
rm_ens_t *rm_engine_find (rm_engine_t *e, const rm_nsref_t *ref);
/* The budget of each of a sort-merge's sorters: half of --memory, but
 * never below 64 KiB, so that a tiny budget spills runs of a sensible size
 * rather than one file per record. */
size_t rm_engine_sort_budget (const rm_engine_t *e);
/* A new, empty store labelled for ns, for the step running to fill. When
 * that is the last step to touch ns, a sink that writes the documents
 * straight out instead (no later step needs them back). */
rm_store_t *rm_engine_store_new (rm_engine_t *e, rm_ens_t *ns, bson_error_t *err);
/* Makes the in-memory stores and those made until rm_engine_stores_free
 * leave need bytes of --memory to a step's tables, moving stores other
 * than keep (whose bytes need counts: a hash join's children are read in
 * place) to their files as far as it takes. */
bool rm_engine_stores_fit (rm_engine_t *e, uint64_t need, const rm_store_t *keep,
                           bson_error_t *err);
/* The step is done with its tables: stores may take their half again. */
void rm_engine_stores_free (rm_engine_t *e);
/* Seals next and makes it ns's documents, dropping the old store. */
bool rm_engine_store_swap (rm_ens_t *ns, rm_store_t *next, bson_error_t *err);

/* Runs one step store to store, its errors prefixed with the step
 * (engine_step.c). */
bool rm_engine_run_step (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
/* Writes one result document of ns (no writer: counts it only), refusing
 * one over the 16 MiB limit (engine_ns.c, as the next). */
bool rm_engine_emit (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len,
                     bson_error_t *err);
bool rm_engine_emit_as (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bool as_read,
                       bson_error_t *err);
/* As rm_engine_emit_as of a document as read, that the reader holds
 * until it is closed, after the writer (rm_item_t.held): a plain archive
 * writes it from the reader's mapping, without a copy. */
bool rm_engine_emit_held (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len,
                          bson_error_t *err);
/* Writes and ends the touched namespaces whose documents are in stores
 * (only those with only[i] set, when only is not NULL). */
bool rm_engine_write_stores (rm_engine_t *e, const bool *only, bson_error_t *err);

/* The one-pass path (engine_stream.c): whether a plan can take it, and the
 * run. map: reader namespace index -> engine namespace index. */
bool rm_engine_can_stream (const rm_plan_t *plan);
bool rm_engine_stream (rm_engine_t *e, rm_reader_t *r, const size_t *map, bson_error_t *err);
void rm_engine_stages_destroy (rm_engine_t *e);

/* "{_id: ...}" of a document as relaxed JSON, for messages. bson_free it. */
char *rm_doc_id_json (const uint8_t *doc, uint32_t len);
/* Prefixes err with "<ns_name>: <what> <_id>" (what: "document", "bucket")
 * and returns false, for a step that failed on one document. */
bool rm_doc_error (bson_error_t *err, const char *ns_name, const char *what, const uint8_t *doc,
                   uint32_t len);

/* Whether a step's output document out nests deeper than MongoDB stores
 * (remodel/bsondepth.h) and than the document in it came from (NULL: one
 * made of others): then err, RM_ERR_DATA, "would nest N levels deep ..."
 * (engine_depth.c). */
bool rm_engine_too_deep (const uint8_t *in, size_t in_len, const uint8_t *out, size_t out_len,
                         bson_error_t *err);
/* The same, as "<ns_name>: <what> <_id>: would nest ..." (rm_doc_error)
 * and false when it does, for the caller to prefix with its step. */
bool rm_engine_depth_ok (const char *ns_name, const char *what, const uint8_t *in, size_t in_len,
                         const uint8_t *out, size_t out_len, bson_error_t *err);

/* Takes a document (valid only during the call). */
typedef bool (*rm_emit_fn) (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err);
/* An rm_emit_fn adding to the store ctx. */
bool rm_store_emit (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err);

/* A step in the one-pass path (engine_stream.c), set up by its stage class
 * (below) and fed the documents of `in` one at a time, in order. */
typedef enum { RM_STAGE_READY, RM_STAGE_WAITING, RM_STAGE_DEFERRED } rm_stage_state_t;
struct rm_stage {
    const rm_step_t *s;
    rm_ens_t *in;   /* the namespace whose documents the step takes */
    rm_ens_t *to;   /* the namespace it makes from them (NULL: none) */
    rm_ens_t *from; /* one it must have read whole first (NULL: none) */
    rm_stage_state_t state;
    rm_store_t *waiting; /* documents of `in` held until `from` ends */
    void *data;     /* the step's own, from open to close */
};

/* How a step kind streams (its row's `stage`; NULL: it never does). */
typedef struct {
    /* Whether it can within this plan (NULL: always). */
    bool (*can) (const rm_plan_t *plan, const rm_step_t *s);
    /* The namespace it reads whole before applying (its `from`; NULL:
     * none): the plan streams only when no step writes that one. The
     * engine asks, not the step: which steps write what is in their rows,
     * above the steps. */
    const rm_nsref_t *(*reads_first) (const rm_step_t *s);
    /* Sets st->in, st->to, st->from and st->data (st->s is set). */
    void (*open) (rm_engine_t *e, rm_stage_t *st);
    /* One document of st->in: its result to *out (valid until the next
     * call); documents it makes (of st->to) to emit. */
    bool (*apply) (rm_stage_t *st, const uint8_t *doc, uint32_t len, rm_emit_fn emit, void *ctx,
                   const uint8_t **out, size_t *out_len, bson_error_t *err);
    /* Optional: the next n documents of st->in, in order, given into
     * slot (0 or 1) before they are applied, for the step to compute
     * their results on up to threads threads while the other slot's are
     * applied (engine_stream.c batches them where the step is the first
     * of that namespace's); docs stay until the slot is used. Then
     * ahead_use: apply takes that slot's results as its documents come
     * (-1: no slot's any more). What apply takes must be what it would
     * have made. */
    void (*ahead) (rm_stage_t *st, int slot, const uint8_t *const *docs, const uint32_t *lens,
                   size_t n, int threads);
    void (*ahead_use) (rm_stage_t *st, int slot);
    /* With `from`: takes one of its documents; returns the bytes st->data
     * now needs (past --memory, the step is deferred to the batch path). */
    uint64_t (*fill) (rm_stage_t *st, const uint8_t *doc, uint32_t len);
    /* The source read whole: documents of st->to it held back until then
     * go on to emit (NULL: it holds none back). */
    bool (*finish) (rm_stage_t *st, rm_emit_fn emit, void *ctx, bson_error_t *err);
    /* Frees st->data (which may be NULL). */
    void (*close) (rm_stage_t *st);
} rm_stage_class_t;

/* For the rows' checks (engine_checks.c): adds a probe of the field at path
 * of ns, which the plan names by key, to the step's run; whether fields in
 * no document are allowed (allowMissing on the step or the run); the check
 * that a join matched something; a warning printed with the summary. */
void rm_engine_add_probe (rm_step_run_t *run, const char *key, const char *path,
                          const rm_nsref_t *ns);
/* After the row's probes: the other paths the step reads, riding on them. */
void rm_engine_add_read_probes (const rm_step_t *s, rm_step_run_t *run);
bool rm_engine_allows_missing (const rm_engine_t *e, const rm_step_t *s);
bool rm_engine_join_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                           const rm_nsref_t *from, const rm_nsref_t *into, const rm_path_t *local,
                           const rm_path_t *foreign, bson_error_t *err);
void rm_engine_warn (rm_engine_t *e, const rm_step_t *s, const char *fmt, ...)
    BSON_GNUC_PRINTF (3, 4);

/* For the rows' `created` (engine_ns.c): adds to out a namespace ref the step
 * creates, with the metadata of a new collection (its _id index, and one
 * on indexed_field unless NULL) or with meta (taken), unless the input in
 * has it already (then its own metadata stays). */
void rm_engine_add_created (rm_dump_info_t *out, const rm_dump_info_t *in, const rm_nsref_t *ref,
                            const char *indexed_field);
void rm_engine_add_created_meta (rm_dump_info_t *out, const rm_dump_info_t *in,
                                 const rm_nsref_t *ref, char *meta);

bool rm_step_fields_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_extract_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_embed_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_denorm_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_summarize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_bucketize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_unbucketize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);

#endif
