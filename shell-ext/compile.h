/* remodel compile: a plan as the aggregation pipelines that compute it on
 * the server (issue: server-side execution). Each pass of a step (the same
 * passes as online_passes.c: the namespace read range by range, in _id
 * order) becomes one pipeline over that namespace's collection, ending in
 * a $merge into the step's side-by-side target (online_names.c), so that
 * the server's own engine computes what remodel run computes, next to the
 * data. A step, or an option of one, that no pipeline expresses exactly
 * for the chosen server version is named with the reason, and runs
 * client-side (online_run.c).
 *
 * Every pipeline is safe to run again over the same range: its documents
 * keep their _ids (parents, children, copies) and $merge replaces by _id.
 * The range is a $match of its _ids put first (compile_range_stage). */
#ifndef REMODEL_COMPILE_H
#define REMODEL_COMPILE_H

#include <stdbool.h>
#include <stddef.h>

#include "online.h"
#include "remodel/value.h"

#define COMPILE_VERSION(a, b) ((a) * 100 + (b))
#define COMPILE_V(v) COMPILE_VERSION ((v).major, (v).minor)

bool compile_version_parse (const char *text, compile_version_t *v);

#define COMPILE_MAX_NOTES 8

typedef struct {
    size_t pass;            /* 0-based, as online_step_passes numbers them */
    const rm_nsref_t *drive; /* the namespace read range by range */
    char coll[400];         /* the collection that holds it when the step runs */
    const rm_nsref_t *out;  /* the namespace it writes... */
    char target[400];       /* ...to this collection of out's database ($merge) */
    bson_t pipeline;        /* the stages after the range's $match, $merge last */
} compile_pass_t;

typedef struct {
    const rm_step_t *s;
    size_t n_passes;        /* 0: not a pipeline (reason says why) */
    compile_pass_t passes[2];
    char reason[600];
    char *notes[COMPILE_MAX_NOTES]; /* exact only where these hold */
    size_t n_notes;
    /* Data the pipelines are not exact for: a document of guard_ns whose
     * guard_field holds an array (guard_ns NULL: none). */
    const rm_nsref_t *guard_ns;
    char guard_coll[400];   /* the collection holding guard_ns then */
    const char *guard_field;
} compile_step_t;

typedef struct {
    compile_version_t version;
    compile_step_t *steps;  /* one per plan step, in order */
    size_t n;
    /* Where each namespace the plan changes or creates ends (side by side):
     * on->names after the last step. */
} compile_plan_t;

/* Compiles on->plan (loaded by online_plan_load; no connection needed).
 * Leaves on->names as they are after every step. */
bool compile_plan (online_t *on, compile_version_t v, compile_plan_t *out, bson_error_t *err);
void compile_plan_destroy (compile_plan_t *c);

/* The steps' pipelines, one per kind (compile_join.c, compile_fields.c):
 * fill st->passes (coll and pipeline, without the range and the $merge),
 * or st->reason. */
bool compile_embed (online_t *on, compile_version_t v, compile_step_t *st);
bool compile_summarize (online_t *on, compile_version_t v, compile_step_t *st);
bool compile_denormalize (online_t *on, compile_version_t v, compile_step_t *st);
bool compile_fields (online_t *on, compile_version_t v, compile_step_t *st);
/* Says why st is not a pipeline (printf-style); returns true (not an error). */
bool compile_refuse (compile_step_t *st, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
void compile_note (compile_step_t *st, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
/* The step's pipelines are exact unless a document of ns has an array at
 * field (checked before running: online_server.c, the script). */
void compile_guard (online_t *on, compile_step_t *st, const rm_nsref_t *ns, const char *field);

/* The range's first stage: {$match: {_id: {$in: [its _ids]}}}. Not
 * {$gt: A, $lte: B}: a query's comparison keeps to the bound's type (an
 * _id of another type between A and B in the sort order would be left
 * out), where $in names each one, through the _id index. */
void compile_range_stage (bson_t *stage, const bson_t *ids);

/* The stage names a pipeline uses ("$lookup", ...), appended to names
 * (distinct), for checking a server has them. */
size_t compile_stage_names (const bson_t *pipeline, const char **names, size_t n, size_t max);

/* compile_print.c: the plan's pipelines as one Extended JSON document, and
 * as a mongosh script (compile_mongosh.c); the JSON text both write: s as
 * it is, s as a quoted string, a pipeline as [stage, ...] a stage a line
 * (canonical Extended JSON). */
void compile_put (rm_buf_t *b, const char *s);
void compile_put_str (rm_buf_t *b, const char *s);
void compile_put_pipeline (rm_buf_t *b, const bson_t *pipeline, const char *indent);
char *compile_print_pipelines (online_t *on, const compile_plan_t *c);
char *compile_print_mongosh (online_t *on, const compile_plan_t *c, bson_error_t *err);

/* online_server.c: remodel online run --server-side. The server's version
 * (buildInfo), whether it has every stage c uses (a clear refusal naming
 * the one it lacks), and one step's pass run range by range. */
bool online_server_version (online_t *on, compile_version_t *v, bson_error_t *err);
bool online_server_check (online_t *on, const compile_plan_t *c, bson_error_t *err);
/* Whether the step's pipelines are exact for the data (its guard finds
 * nothing); *exact false: it runs client-side (said on stderr). */
bool online_server_exact (online_t *on, const compile_step_t *st, bool *exact, bson_error_t *err);
bool online_server_pass (online_t *on, const compile_step_t *st, const compile_pass_t *cp,
                         bson_error_t *err);

#endif
