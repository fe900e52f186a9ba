/* The steps in one table (step_table.c): what the plan parser and the
 * engine know of each operation, found by its rm_step_kind_t rather than
 * by name. Adding a step: its kind (plan.h), its row in the table, its
 * parse and clear (plan.c) and its run (its step_*.c). */
#ifndef REMODEL_STEP_CLASS_H
#define REMODEL_STEP_CLASS_H

#include "remodel/engine.h"
#include "remodel/plan.h"

/* plan.c's parsing state: the step being read, for its messages. */
typedef struct rm_plan_ctx rm_plan_ctx_t;

typedef struct {
    const char *name;       /* the operation's name in a plan */
    const char *keys[14];   /* the keys it takes; '*' marks the required ones */
    /* Reads the operation's keys (checked against `keys` already). */
    bool (*parse) (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
    /* Frees what parse allocated. */
    void (*clear) (rm_step_t *s);
    /* Runs the step store to store (engine.c prefixes its errors). */
    bool (*run) (rm_engine_t *e, const rm_step_t *s, bson_error_t *err);
} rm_step_class_t;

extern const rm_step_class_t rm_step_classes[RM_STEP_N_KINDS];

bool rm_plan_parse_embed (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
bool rm_plan_parse_extract (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s);
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

#endif
