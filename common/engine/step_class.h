/* The steps in one table (step_table.c): everything the plan parser and
 * the engine know of each operation, found by its rm_step_kind_t rather
 * than by name. Nothing else in the core names a kind. Adding a step
 * touches:
 *   - plan.h: its kind in rm_step_kind_t and its struct in rm_step_t's
 *     union;
 *   - its own step_*.c: parse (with plan_parse.h's readers), clear, ns,
 *     run, and where they apply its probes, its check after running, the
 *     namespaces it creates and its stage class for the one-pass path
 *     (declared below); the parsing goes in a sibling step_*_parse.c if
 *     the step's file would pass ~700 lines;
 *   - step_table.c: its row pointing at them;
 *   - its passes function (how it runs online and how its results trace
 *     back to the documents that made them: remodel/passes.h) and, where
 *     it has an exact one, its inverse (rollback --carry-writes:
 *     remodel/plan.h's rm_step_inverse), in its step file too, and in its
 *     row whether --in-place takes it;
 *   - where it removes or moves fields, its indexes function
 *     (index_follow.c: what it does to the index specifications);
 *   - above the engine, its row in the compile layer's table:
 *     compile_table.c (its compiler, or why no pipeline expresses it).
 * Each table is sized by its rows and checked against RM_STEP_N_KINDS, so
 * a missing row fails the build; test_batchstep.c and test_compile.c fail
 * on an empty one. tests/toy/step_toy.c is such a step, built only into
 * the test build (make toy; tests/cli/test_toy_step.sh). */
#ifndef REMODEL_STEP_CLASS_H
#define REMODEL_STEP_CLASS_H

#include "engine_impl.h"
#include "remodel/indexes.h"
#include "remodel/passes.h"
#include "remodel/plan.h"

/* The parsing state: the step being read, for its messages (defined in
 * plan_parse.h). */
typedef struct rm_plan_ctx rm_plan_ctx_t;

/* A namespace a step names, with the plan key that names it. */
typedef struct {
    const rm_nsref_t *ns;
    const char *key;
} rm_step_ref_t;

/* Those of one role, in order (a step names at most four: rekey's
 * writes, its source, its target and two namespaces of references). */
typedef struct {
    rm_step_ref_t at[4];
    size_t n;
} rm_step_refs_t;

/* What a parsed step does to namespaces (plan.h's rm_step_inputs,
 * rm_step_outputs, rm_step_creates, rm_step_empties): those it reads,
 * writes (new or changed), creates (absent or empty) and leaves empty. */
typedef struct {
    rm_step_refs_t reads, writes, creates, empties;
} rm_step_ns_t;

typedef struct {
    const char *name;       /* the operation's name in a plan */
    const char *keys[16];   /* the keys it takes; '*' marks the required ones
                             * ("filter", every step's, is not listed) */
    /* Whether its run applies "filter" (remodel/plan.h): a plan giving one
     * to a step that does not is refused, never run unfiltered. */
    bool filters;
    /* Reads the operation's keys (checked against `keys` already). */
    bool (*parse) (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
    /* Frees what parse allocated. */
    void (*clear) (rm_step_t *s);
    /* Fills a zeroed `ns` with the namespaces of a parsed step. */
    void (*ns) (const rm_step_t *s, rm_step_ns_t *ns);
    /* Runs the step store to store (engine_step.c prefixes its errors). */
    bool (*run) (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
    /* The rest may be NULL (none). The fields it reads, as probes added to
     * run with rm_engine_add_probe, in the order its code asks for them
     * (rm_engine_probe's i): engine_checks.c, engine_step.c. */
    void (*probes) (const rm_step_t *s, rm_step_run_t *run);
    /* What it checks once it has run, from what it saw: an error, or
     * warnings (rm_engine_warn) and its counts added to the namespaces'. */
    bool (*check) (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                   bson_error_t *err);
    /* Adds the namespaces it creates to out, with their metadata
     * (rm_engine_add_created): engine.c's rm_engine_prepare. */
    void (*created) (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in);
    /* How it runs in the one-pass path (engine_stream.c); NULL: store to
     * store only. */
    const rm_stage_class_t *stage;
    /* How it runs online (step_passes.c's rm_step_passes): fills out
     * (zeroed, partners -1) with its passes, each saying how its results
     * trace back to their drivers (remodel/passes.h), which is how the
     * online mode follows a change log; 0 after rm_pass_refuse. */
    size_t (*passes) (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
    /* Whether --in-place takes it (it rewrites documents where they are,
     * or, copy, move and delete, writes its selected documents straight
     * into a new namespace and removes them where they are, rather than
     * making new ones). */
    bool in_place;
    /* Fills a zeroed out with its exact inverse, or why it has none here
     * (remodel/plan.h's rm_step_inverse); NULL: it has none. */
    void (*inverse) (const rm_step_t *s, rm_step_inverse_t *out);
    /* What it does to the indexes of the namespaces it changes
     * (index_follow.c, remodel/indexes.h); NULL: nothing (it only adds
     * fields, or writes its own metadata). */
    void (*indexes) (const rm_step_t *s, rm_ixplan_t *ix);
} rm_step_class_t;

/* One row per kind: unsized here so that step_table.c's _Static_assert
 * sees how many rows it has. */
extern const rm_step_class_t rm_step_classes[];

/* For the ns functions: appends a namespace to a role; adds one the step
 * makes (writes and creates). Inline: the steps call them, and the file
 * that reads the steps' rows (plan.c) is above them. */
static inline void
rm_step_refs_add (rm_step_refs_t *l, const rm_nsref_t *ns, const char *key)
{
    /* A kind that needs more grows at[] (above). */
    BSON_ASSERT (l->n < sizeof l->at / sizeof l->at[0]);
    l->at[l->n].ns = ns;
    l->at[l->n++].key = key;
}

static inline void
rm_step_ns_make (rm_step_ns_t *ns, const rm_nsref_t *ref, const char *key)
{
    rm_step_refs_add (&ns->writes, ref, key);
    rm_step_refs_add (&ns->creates, ref, key);
}

bool rm_plan_parse_embed (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
bool rm_plan_parse_extract (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
void rm_fields_no_inverse (const rm_step_t *s, rm_step_inverse_t *out);
bool rm_plan_parse_fields (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
bool rm_plan_parse_denorm (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
bool rm_plan_parse_summarize (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
bool rm_plan_parse_bucketize (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
bool rm_plan_parse_unbucketize (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
void rm_plan_clear_embed (rm_step_t *s);
void rm_plan_clear_extract (rm_step_t *s);
void rm_plan_clear_fields (rm_step_t *s);
void rm_plan_clear_denorm (rm_step_t *s);
void rm_plan_clear_summarize (rm_step_t *s);
void rm_plan_clear_bucket (rm_step_t *s);
void rm_plan_ns_embed (const rm_step_t *s, rm_step_ns_t *ns);
void rm_plan_ns_extract (const rm_step_t *s, rm_step_ns_t *ns);
void rm_plan_ns_fields (const rm_step_t *s, rm_step_ns_t *ns);
void rm_plan_ns_denorm (const rm_step_t *s, rm_step_ns_t *ns);
void rm_plan_ns_summarize (const rm_step_t *s, rm_step_ns_t *ns);
void rm_plan_ns_bucketize (const rm_step_t *s, rm_step_ns_t *ns);
void rm_plan_ns_unbucketize (const rm_step_t *s, rm_step_ns_t *ns);

void rm_embed_probes (const rm_step_t *s, rm_step_run_t *run);
void rm_extract_probes (const rm_step_t *s, rm_step_run_t *run);
void rm_denorm_probes (const rm_step_t *s, rm_step_run_t *run);
void rm_summarize_probes (const rm_step_t *s, rm_step_run_t *run);
void rm_bucketize_probes (const rm_step_t *s, rm_step_run_t *run);
bool rm_embed_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                     bson_error_t *err);
bool rm_denorm_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                      bson_error_t *err);
bool rm_summarize_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                         bson_error_t *err);
bool rm_bucketize_check (rm_engine_t *e, const rm_step_t *s, const rm_step_run_t *run,
                         bson_error_t *err);
void rm_embed_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in);
void rm_extract_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in);
void rm_bucketize_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in);
void rm_unbucketize_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in);
/* copy, move, delete (step_copy.c, step_copy_plan.c, step_copy_indexes.c). */
bool rm_plan_parse_copy (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
void rm_plan_clear_copy (rm_step_t *s);
void rm_plan_ns_copy (const rm_step_t *s, rm_step_ns_t *ns);
bool rm_step_copy_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
void rm_copy_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in);
size_t rm_copy_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
void rm_copy_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_copy_indexes (const rm_step_t *s, rm_ixplan_t *ix);
extern const rm_stage_class_t rm_copy_stage;
/* rekey (step_rekey_plan.c, step_rekey.c, step_rekey_refs.c). */
bool rm_plan_parse_rekey (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
void rm_plan_clear_rekey (rm_step_t *s);
void rm_plan_ns_rekey (const rm_step_t *s, rm_step_ns_t *ns);
bool rm_step_rekey_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
void rm_rekey_probes (const rm_step_t *s, rm_step_run_t *run);
void rm_rekey_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in);
size_t rm_rekey_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
void rm_rekey_inverse (const rm_step_t *s, rm_step_inverse_t *out);
#ifdef REMODEL_TOY_STEP
bool rm_plan_parse_toy (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
void rm_plan_clear_toy (rm_step_t *s);
void rm_plan_ns_toy (const rm_step_t *s, rm_step_ns_t *ns);
bool rm_step_toy_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
size_t rm_toy_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
#endif
size_t rm_embed_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
size_t rm_extract_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
size_t rm_fields_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
size_t rm_denorm_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
size_t rm_summarize_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
size_t rm_bucketize_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
size_t rm_unbucketize_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err);
void rm_embed_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_embed_indexes (const rm_step_t *s, rm_ixplan_t *ix);
void rm_extract_indexes (const rm_step_t *s, rm_ixplan_t *ix);
void rm_fields_indexes (const rm_step_t *s, rm_ixplan_t *ix);
void rm_extract_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_rename_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_set_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_bucketize_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_unbucketize_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_denorm_inverse (const rm_step_t *s, rm_step_inverse_t *out);
void rm_summarize_inverse (const rm_step_t *s, rm_step_inverse_t *out);
/* An inverse that removes the n top-level fields names of in's documents
 * (inverse_unset.c): exact only where no document had them before the
 * step, which the caller establishes (the online run records it). */
bson_t *rm_inverse_unset (const rm_nsref_t *in, char *const *names, size_t n);
/* What the passes functions share (passes_shared.c): the refusal of a step
 * the online mode cannot run (0 passes); whether a field a step writes is
 * _id or under it (its results then do not keep their driver's _id:
 * rm_pass_t.driver_field), or any of n is; whether two namespaces are
 * one. */
size_t rm_pass_refuse (const rm_step_t *s, bson_error_t *err, const char *why);
bool rm_pass_is_id (const char *field);
bool rm_pass_any_id (char **fields, size_t n);
bool rm_pass_same_ns (const rm_nsref_t *a, const rm_nsref_t *b);
extern const rm_stage_class_t rm_fields_stage, rm_extract_stage, rm_denorm_stage,
    rm_unbucketize_stage;

#endif
