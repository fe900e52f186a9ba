/* Internals shared by the engine and its steps. */
#ifndef REMODEL_ENGINE_IMPL_H
#define REMODEL_ENGINE_IMPL_H

#include "remodel/engine.h"
#include "remodel/value.h"
#include "store.h"

typedef struct {
    rm_ns_stats_t *stats; /* into rm_engine_t.stats */
    rm_ns_t *out;       /* the namespace in the output list */
    rm_store_t *store;  /* its documents so far, when a step reads it */
    bool read;          /* some step reads it (it may be only read) */
} rm_ens_t;

struct rm_engine {
    const rm_plan_t *plan;
    rm_engine_opts_t opts;
    rm_dump_info_t *out;
    rm_ens_t *ns;       /* parallel to out->ns */
    rm_ns_stats_t *stats;
    size_t n_ns;
    bool spilled;
};

rm_ens_t *rm_engine_find (rm_engine_t *e, const rm_nsref_t *ref);
/* The budget of each of a sort-merge's sorters: half of --memory, but
 * never below 64 KiB, so that a tiny budget spills runs of a sensible size
 * rather than one file per record. */
size_t rm_engine_sort_budget (const rm_engine_t *e);
/* A new, empty store labelled for ns. */
rm_store_t *rm_engine_store_new (rm_engine_t *e, rm_ens_t *ns, bson_error_t *err);
/* Seals next and makes it ns's documents, dropping the old store. */
bool rm_engine_store_swap (rm_ens_t *ns, rm_store_t *next, bson_error_t *err);

/* Reads the next document of a store's stream: 1, 0 at the end, -1. */
int rm_store_next (rm_instream_t *s, rm_frame_t *f, bson_error_t *err);

/* "{_id: ...}" of a document as relaxed JSON, for messages. bson_free it. */
char *rm_doc_id_json (const uint8_t *doc, uint32_t len);

bool rm_step_fields_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_extract_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_embed_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_denorm_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_summarize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_bucketize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
bool rm_step_unbucketize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);

#endif
