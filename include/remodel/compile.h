/* remodel compile: a plan as the aggregation pipelines that compute it on
 * the server (issue: server-side execution). Plan in, pipelines out: no
 * driver, no connection. Each pass of a step (the same passes as the
 * online runner's, remodel/passes.h: the namespace read range by range,
 * in _id order) becomes one pipeline over that namespace's collection,
 * ending in a $merge into the step's side-by-side target
 * (remodel/names.h), so that the server's own engine computes what
 * remodel run computes, next to the data. A step, or an option of one,
 * that no pipeline expresses exactly for the chosen server version is
 * named with the reason, and runs client-side (the online runner).
 *
 * Every pipeline is safe to run again over the same range: its documents
 * keep their _ids (parents, children, copies) and $merge replaces by _id.
 * The range is a $match of its _ids put first (rm_compile_range_stage). */
#ifndef REMODEL_COMPILE_H
#define REMODEL_COMPILE_H

#include <stdbool.h>
#include <stddef.h>

#include "remodel/error.h"
#include "remodel/names.h"
#include "remodel/passes.h"
#include "remodel/plan.h"

/* A MongoDB server version, as --server-version says it ("5.0", "4.2"):
 * what the pipelines may use. */
typedef struct {
    int major, minor;
} rm_compile_version_t;

#define RM_COMPILE_VERSION(a, b) ((a) * 100 + (b))
#define RM_COMPILE_V(v) RM_COMPILE_VERSION ((v).major, (v).minor)

/* "5.0", "4.2", "5.2.1" (a patch number counts for nothing); 3.6 or later. */
bool rm_compile_version_parse (const char *text, rm_compile_version_t *v);
/* The same for the --server-version option of remodel compile, run and
 * the online commands, refused with RM_ERR_USAGE naming the option. */
bool rm_compile_version_option (const char *text, rm_compile_version_t *v, bson_error_t *err);

/* Whether a server of version v joins as since SERVER-36681 (MongoDB 9.0:
 * a local null matches a foreign path through an array of scalars or an
 * empty one), the engine's lookup_since_36681. The version the engine
 * assumes when none is given is RM_LOOKUP_DEFAULT_VERSION, the servers
 * users run (5.0 to 8.x), whose rule is the older one. */
#define RM_LOOKUP_DEFAULT_VERSION "8.0"
#define RM_LOOKUP_36681_VERSION RM_COMPILE_VERSION (9, 0)
bool rm_compile_lookup_since_36681 (rm_compile_version_t v);
/* The rule's name in stats and messages: "5.0-8.x" or "9.0 (SERVER-36681)". */
const char *rm_compile_lookup_rules (bool since_36681);

#define RM_COMPILE_MAX_NOTES 8

typedef struct {
    size_t pass;            /* 0-based, as rm_step_passes numbers them */
    const rm_nsref_t *drive; /* the namespace read range by range */
    char coll[400];         /* the collection that holds it when the step runs */
    const rm_nsref_t *out;  /* the namespace it writes... */
    char target[400];       /* ...to this collection of out's database ($merge) */
    bson_t pipeline;        /* the stages after the range's $match, $merge last */
} rm_compile_pass_t;

typedef struct {
    const rm_step_t *s;
    size_t n_passes;        /* 0: not a pipeline (reason says why) */
    rm_compile_pass_t passes[RM_MAX_PASSES];
    char reason[600];
    char *notes[RM_COMPILE_MAX_NOTES]; /* exact only where these hold */
    size_t n_notes;
    /* Data the pipelines are not exact for: a document of guard_ns whose
     * guard_field holds an array (guard_ns NULL: none). */
    const rm_nsref_t *guard_ns;
    char guard_coll[400];   /* the collection holding guard_ns then */
    const char *guard_field;
} rm_compile_step_t;

typedef struct {
    rm_compile_version_t version;
    rm_compile_step_t *steps; /* one per plan step, in order */
    size_t n;
} rm_compile_plan_t;

/* Compiles plan for server version v. nm: the plan's identity
 * (rm_names_identify); its moves are left as they are after every step
 * (side by side), which rm_compile_print_pipelines prints as the results. */
bool rm_compile_plan (const rm_plan_t *plan, rm_names_t *nm, rm_compile_version_t v,
                      rm_compile_plan_t *out, bson_error_t *err);
void rm_compile_plan_destroy (rm_compile_plan_t *c);

/* The range's first stage: {$match: {_id: {$in: [its _ids]}}}. Not
 * {$gt: A, $lte: B}: a query's comparison keeps to the bound's type (an
 * _id of another type between A and B in the sort order would be left
 * out), where $in names each one, through the _id index. */
void rm_compile_range_stage (bson_t *stage, const bson_t *ids);

/* The stage names a pipeline uses ("$lookup", ...), appended to names
 * (distinct), for checking a server has them. */
size_t rm_compile_stage_names (const bson_t *pipeline, const char **names, size_t n, size_t max);

/* The plan's pipelines as one document (--format pipeline): values in
 * mongosh's syntax, pasteable with every type kept, or canonical Extended
 * JSON (--canonical); and as a mongosh script running them (--format
 * mongosh); nm as rm_compile_plan left it. Text to bson_free. */
char *rm_compile_print_pipelines (const rm_names_t *nm, const rm_compile_plan_t *c,
                                  bool canonical);
char *rm_compile_print_mongosh (const rm_names_t *nm, const rm_compile_plan_t *c);
/* The same script, which also creates the views of the old shape (as
 * --format views gives them) when run with views = true after finalize;
 * the namespaces without a view in *refusals (to bson_free). */
char *rm_compile_print_mongosh_views (const rm_names_t *nm, const rm_compile_plan_t *c,
                                      const rm_plan_t *plan, char **refusals);

/* --format views: for each namespace a step changed that existed before
 * the plan, the `create` command of a view (COLL_before) over the
 * collections the plan leaves that gives back its old documents, a line
 * each ({"db": DB, "command": {...}}, canonical Extended JSON with
 * canonical, else mongosh's syntax). A namespace no pipeline gives back
 * exactly gets a line "no view of NS: step N (OP): why" in *refusals
 * instead. Both texts to bson_free. */
char *rm_compile_print_views (const rm_plan_t *plan, rm_compile_version_t v, bool canonical,
                              char **refusals);

/* --format validators: the fields a plan writes, per namespace it leaves
 * changed (common/compile/validator_fields.c), for a $jsonSchema each. */
typedef struct {
    char *path;       /* dotted; through an array, its elements' field */
    const char *type; /* a $jsonSchema bsonType alias; NULL: the data's */
    bool required;    /* every document gets it, whatever the data */
    char *by;         /* "step N (op)" */
} rm_vfield_t;

typedef struct {
    char *ns;
    bool whole; /* a step made the namespace: every field is the plan's */
    rm_vfield_t *f;
    size_t n, cap;
} rm_vns_t;

typedef struct {
    rm_vns_t *ns;
    size_t n, cap;
} rm_vplan_t;

void rm_compile_validator_fields (const rm_plan_t *plan, rm_vplan_t *out);
void rm_vplan_destroy (rm_vplan_t *v);

#endif
