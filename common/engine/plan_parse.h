/* What the steps' plan parsers share (plan_parse.c): the parsing state and
 * the readers of a key's value. Each step's parse and clear (step_class.h)
 * live with the step, in its step_*.c; plan.c reads the plan around them.
 * Private to the engine. A reader given a bad value says why through
 * rm_plan_fail, naming the key it read (the iterator's), and returns
 * false; what it filled before failing is freed by the step's clear. */
#ifndef REMODEL_PLAN_PARSE_H
#define REMODEL_PLAN_PARSE_H

#include "remodel/plan.h"
#include "step_class.h"

/* The step being read, for the messages: "plan: step <index> (<op>): ...". */
struct rm_plan_ctx {
    bson_error_t *err;
    size_t index; /* 1-based */
    const char *op;
};

/* Sets c->err to "plan: step N (op): \"key\": <why>" (without the key part
 * when key is NULL) and returns false, so a parser can `return
 * rm_plan_fail (...)`. */
bool BSON_GNUC_PRINTF (3, 4)
rm_plan_fail (rm_plan_ctx_t *c, const char *key, const char *fmt, ...);

/* ": did you mean "x"?" for the name of names closest to given
 * (rm_closest_names), written to buf; "" when none is close. */
const char *rm_plan_did_you_mean (const char *given, const char *const *names, size_t n,
                                  char *buf, size_t cap);

/* What a value of type t is called in a message ("a string", "a number"). */
const char *rm_plan_type_name (bson_type_t t);

/* A string, not empty and without a NUL byte; *out points into the plan. */
bool rm_plan_get_string (rm_plan_ctx_t *c, const bson_iter_t *it, const char **out);

/* A whole number (a double only when it holds one) of at least min. */
bool rm_plan_get_int (rm_plan_ctx_t *c, const bson_iter_t *it, int64_t min, int64_t *out);

/* true or false, nothing that merely converts to one (plan.c reads every
 * step's allowMissing with it too). */
bool rm_plan_get_bool (rm_plan_ctx_t *c, const bson_iter_t *it, bool *out);

/* "db.collection", checked as MongoDB names them; fills ns (freed by
 * rm_plan_nsref_clear, also when this fails half-way). */
bool rm_plan_get_ns (rm_plan_ctx_t *c, const bson_iter_t *it, rm_nsref_t *ns);

/* A dotted field path, as rm_path_parse takes it. */
bool rm_plan_get_path (rm_plan_ctx_t *c, const bson_iter_t *it, rm_path_t *p);

/* A plain field name (no dots, no leading $), copied to *out. */
bool rm_plan_get_field_name (rm_plan_ctx_t *c, const bson_iter_t *it, char **out);
/* Refuses a field the step writes that is _id or under it, naming key
 * (rm_plan_get_field_name checks its names so; the keys of other shapes
 * call it themselves). */
bool rm_plan_check_written (rm_plan_ctx_t *c, const char *key, const char *name);

/* The key "sort" (embed's and summarize's): {"field": 1, "other": -1}, at
 * least one field; its messages name "sort" whatever the iterator's key.
 * Appends to s as it goes, so rm_plan_sortspec_clear frees a half-read one
 * too. */
bool rm_plan_parse_sort (rm_plan_ctx_t *c, const bson_iter_t *it, rm_sortspec_t *s);

/* Frees what rm_plan_get_ns filled and zeroes ns. */
void rm_plan_nsref_clear (rm_nsref_t *ns);

/* Frees what rm_plan_parse_sort filled. */
void rm_plan_sortspec_clear (rm_sortspec_t *sort);

#endif
