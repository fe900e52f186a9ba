/* The compiler's insides (remodel/compile.h): the table that says, per
 * step kind, what compiles it (how it runs in passes is its row of the
 * step table, remodel/passes.h), and what the per-kind compilers share.
 * The table is the only place here that names a kind; it is sized by its
 * rows and checked against RM_STEP_N_KINDS. */
#ifndef REMODEL_COMPILE_IMPL_H
#define REMODEL_COMPILE_IMPL_H

#include "remodel/buf.h"
#include "remodel/compile.h"

/* How a kind compiles (compile_table.c): compile, filling st->passes
 * (coll and pipeline, without the range and the $merge) or st->reason
 * (rm_compile_refuse); or, compile NULL, not a pipeline, for `refusal`. */
typedef bool (*rm_compile_fn) (const rm_names_t *nm, rm_compile_version_t v,
                               rm_compile_step_t *st);
typedef struct {
    rm_compile_fn compile;
    const char *refusal;
    /* compile takes the step's filter into its pipelines itself, and sets
     * each pass's `out` (copy, move, delete). */
    bool own_filter;
} rm_compile_kind_t;

extern const rm_compile_kind_t rm_compile_kinds[];

/* The per-kind compilers (compile_join.c, compile_fields.c). */
bool rm_compile_embed (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st);
bool rm_compile_summarize (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st);
bool rm_compile_denormalize (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st);
bool rm_compile_set (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st);
bool rm_compile_unset (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st);
bool rm_compile_rename (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st);
bool rm_compile_copy (const rm_names_t *nm, rm_compile_version_t v, rm_compile_step_t *st);

/* What a compiler records on its step (compile_step.c). Says why st is not
 * a pipeline (printf-style); returns true (not an error). */
bool rm_compile_refuse (rm_compile_step_t *st, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
void rm_compile_note (rm_compile_step_t *st, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
/* The step's pipelines are exact unless a document of ns has an array at
 * field (checked before running: the online runner, the script). */
void rm_compile_guard (const rm_names_t *nm, rm_compile_step_t *st, const rm_nsref_t *ns,
                       const char *field);

/* The JSON text both printers write: s as it is, s as a quoted string
 * (compile_shell.c), a pipeline as [stage, ...] a stage a line (canonical
 * Extended JSON; compile_print.c). */
void rm_compile_put (rm_buf_t *b, const char *s);
void rm_compile_put_str (rm_buf_t *b, const char *s);
void rm_compile_put_pipeline (rm_buf_t *b, const bson_t *pipeline, const char *indent);
/* doc in mongosh's syntax, every BSON type kept (compile_shell.c). */
void rm_compile_put_shell (rm_buf_t *b, const bson_t *doc);
/* One command of the views' and validators' formats, a line: canonical
 * Extended JSON, or mongosh's syntax (compile_shell.c). */
void rm_compile_put_line (rm_buf_t *b, const bson_t *line, bool canonical);
/* The mongosh script's part that creates the views of the old shape
 * (compile_mongosh_views.c); the namespaces without one in *refusals, as
 * rm_compile_print_views says them. Both to bson_free. */
char *rm_compile_mongosh_views (const rm_plan_t *plan, rm_compile_version_t v, char **refusals);

#endif
