/* The transform engine: runs a plan over a dump. Namespaces no step
 * touches stream straight from the reader to the writer, byte for byte.
 * Plans of per-document steps (field steps, extract, denormalize) run in
 * the same single pass, each document through its steps and out; other
 * plans park the touched namespaces in compressed temporary stores,
 * transform them step by step and write them at the end. Joins work in
 * memory when their smaller side fits the budget, and through external
 * sorts when it does not. Both paths give the same bytes. */
#ifndef REMODEL_ENGINE_H
#define REMODEL_ENGINE_H

#include "remodel/dump.h"
#include "remodel/plan.h"

typedef struct {
    size_t memory;      /* budget for in-memory joins, bytes (0: 512 MiB) */
    const char *tmpdir; /* stores and spill files (NULL: $TMPDIR or /tmp) */
    bool batch;         /* never the one-pass path (for comparison) */
    bool allow_missing; /* every step as with "allowMissing": true */
    /* $lookup's rules of MongoDB 9.0 (SERVER-36681: a local null matches
     * a foreign path through an array of scalars, or an empty one) rather
     * than those of the servers before it (5.0 to 8.x), the default. */
    bool lookup_since_36681;
    /* An extract's children as they come, two with one _id included,
     * rather than each _id once (remodel/batchstep.h: the online mode
     * checks a batch's results against the whole step's itself). */
    bool keep_copies;
    /* rm_engine_prepare carries the indexes of out's metadata through the
     * plan (remodel/indexes.h): remodel run, unless --keep-indexes, and
     * check --against. false: the metadata as it was. */
    bool follow_indexes;
    /* $$NOW for every expression of the run, in milliseconds since the
     * epoch: one value per run (the online mode records it with the plan,
     * so resumes agree). 0: remodel/expr.h's rm_expr_run_now (). */
    int64_t now_ms;
    /* Called for a document a step could not make (an expression that
     * fails on it: RM_ERR_DATA, why naming the step, namespace, _id,
     * field and operator) instead of stopping the run: the document goes
     * on unchanged, and the caller reports them all at the end (check
     * --against, run --dry-run). NULL: the first one stops the run. */
    void (*doc_error) (void *ctx, const bson_error_t *why);
    void *doc_error_ctx;
    /* Threads the one-pass path computes field steps on, a batch of
     * documents split between them, the results kept in order (0 or 1:
     * the reading thread alone). */
    int threads;
    /* Called for every document read from the source (may be NULL). */
    void (*progress) (void *ctx, uint64_t docs);
    void *progress_ctx;
    /* Called for every document of the result, with its namespace's
     * index in rm_engine_prepare's out list (may be NULL): check --against
     * looks for duplicate _ids there. */
    bool (*output) (void *ctx, size_t ns, const uint8_t *doc, uint32_t len, bson_error_t *err);
    void *output_ctx;
} rm_engine_opts_t;

typedef struct {
    char *name;         /* db.collection */
    bool touched;       /* some step reads or writes it */
    bool created;       /* made by a step */
    uint64_t docs_in;   /* read from the source */
    uint64_t docs_out;  /* written */
    uint64_t embedded;  /* children embedded into its documents */
    uint64_t orphans;   /* its documents that matched no parent (embed from) */
    uint64_t overflow;  /* documents written to it as outlier overflow */
    uint64_t extracted; /* documents made from array elements (extract to) */
    uint64_t missed;    /* references of its documents a denormalize did not find */
    uint64_t invalid;   /* its readings a bucketize sent to onInvalid */
} rm_ns_stats_t;

typedef struct rm_engine rm_engine_t;

rm_engine_t *rm_engine_new (const rm_plan_t *plan, const rm_engine_opts_t *opts);

/* Fills out with the namespaces the result will have: the input's, in
 * order, plus those steps create (with metadata that indexes their parent
 * reference). Checks the plan against the input first. */
bool rm_engine_prepare (rm_engine_t *e, const rm_dump_info_t *in, rm_dump_info_t *out,
                        bson_error_t *err);

/* Adds to out the namespaces step s creates, with the metadata `remodel
 * run` writes for them (the index of their parent reference: an overflow
 * page's parent_id, an extracted child's parentField), as for a dump that
 * has none of them: what the online companion makes on a server too. */
void rm_step_created_info (const rm_step_t *s, rm_dump_info_t *out);

/* Reads r to its end and writes the result to w (opened on the out list of
 * rm_engine_prepare), or only counts when w is NULL. */
bool rm_engine_run (rm_engine_t *e, rm_reader_t *r, rm_writer_t *w, bson_error_t *err);

size_t rm_engine_stats (const rm_engine_t *e, const rm_ns_stats_t **stats);
/* Warnings for the user, one line each ("step 2 (denormalize): 480 of the
 * 500 references ... found nothing ..."), for the tool to print. */
size_t rm_engine_warnings (const rm_engine_t *e, char *const **out);
/* Of step i (0-based) of a run: the documents it changed and those it
 * left as they were (its filter's included), for the steps that rewrite
 * documents in place (the field steps); false for the others. */
bool rm_engine_step_counts (const rm_engine_t *e, size_t i, uint64_t *changed, uint64_t *unchanged);
/* Of step i of a run that copies, moves or deletes by a filter: the
 * documents it selected and those it left; false for the other steps. */
bool rm_engine_step_selected (const rm_engine_t *e, size_t i, uint64_t *selected, uint64_t *passed);
/* Of step i of a run, what it counted of references: denormalize those
 * looked up and those of them that found nothing; rekey those rewritten
 * and those kept without a match (onMissing "keep"). */
bool rm_engine_step_lookups (const rm_engine_t *e, size_t i, uint64_t *found, uint64_t *missed);
/* The index changes rm_engine_prepare made to the metadata with
 * follow_indexes, one line each ("db.coll: index \"x_1\": ..."). */
size_t rm_engine_index_changes (const rm_engine_t *e, char *const **out);
/* Whether some join went through the external sort. */
bool rm_engine_spilled (const rm_engine_t *e);

void rm_engine_destroy (rm_engine_t *e);

#endif
