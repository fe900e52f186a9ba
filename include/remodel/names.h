/* The names a plan's side-by-side results go by on a server: the plan's
 * identity (its id, part of every result's name and of its state
 * documents) and where each namespace's documents are as the steps go (a
 * step reads its inputs where the steps before it left them, and writes
 * its outputs to new collections of its own). Pure computation from the
 * plan and its file's path: the online runner and the compiler share it,
 * and neither needs a connection for it. */
#ifndef REMODEL_NAMES_H
#define REMODEL_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "remodel/error.h"
#include "remodel/plan.h"

/* A namespace's documents are, from this move on, in coll of its db. */
typedef struct {
    char *ns;               /* "db.coll" as the plan names it */
    char *coll;
} rm_name_t;

typedef struct {
    char name[256];         /* the plan's name for people: its file's base name */
    char path[4096];        /* the plan file's full path */
    char id[96];            /* the plan's identity on the server */
    char digest[17];        /* CRC-64 of the plan's bytes, hex */
    rm_name_t *moved;       /* each move, in order: a namespace's last says */
    size_t n_moved;         /* where it is now */
    /* The plan whose runs of steps run fused (remodel/fuse.h): a run has
     * one result per namespace, named after its last step, and no other;
     * NULL (rm_names_identify's): every step its own (the compiler's). */
    const rm_plan_t *fused;
} rm_names_t;

/* Fills nm's identity from the plan file's path (nothing moved yet). id:
 * "<stem>_<hash>", the file's name without .json (bytes other than
 * letters, digits, - and _ made _), and 12 hex digits of the SHA-1 of its
 * full path; digest: of its bytes as they are now. */
void rm_names_identify (rm_names_t *nm, const char *plan_path);

/* The collection holding ref's documents now. */
const char *rm_name_now (const rm_names_t *nm, const rm_nsref_t *ref);
/* The collection a side-by-side step writes output ref to:
 * "<coll>_remodel_<id>_<step>", beside its source until finalize; with
 * fused runs, any step of a run writes its run's, named after its last. */
void rm_name_target (const rm_names_t *nm, const rm_step_t *s, const rm_nsref_t *ref, char *buf,
                     size_t cap);
/* Where finalize keeps coll's original: "<coll>_remodel_<id>_backup". */
void rm_name_backup (const rm_names_t *nm, const char *coll, char *buf, size_t cap);
/* In place, step s's backups in the state database: "backup.<id>.<step>". */
void rm_name_inplace_backup (const rm_names_t *nm, const rm_step_t *s, char *buf, size_t cap);
/* From now on ref's documents are in coll. */
void rm_name_move (rm_names_t *nm, const rm_nsref_t *ref, const char *coll);
/* Step s ran side by side (a fused run: its first step): its targets are
 * where their namespaces are. */
void rm_name_move_step (rm_names_t *nm, const rm_step_t *s, const rm_nsref_t *const *targets, size_t nt);
/* How many steps the run beginning at plan step number i (0-based) has
 * under nm: 1 without fused runs or for a step alone, 0 for a step
 * inside a run begun before it (that run's pass computes it). */
size_t rm_names_run (const rm_names_t *nm, size_t i);
/* For messages: "step 3 (set)", or a fused run's "steps 3-5 (set, unset,
 * rename)", for the step s begins. */
void rm_names_label (const rm_names_t *nm, const rm_step_t *s, char *buf, size_t cap);
/* Whether move i is its namespace's last (its final result): no later
 * move of the same namespace; an earlier one is an intermediate. */
bool rm_names_last (const rm_names_t *nm, size_t i);
/* Forgets every move (the identity stays). */
void rm_names_clear (rm_names_t *nm);
/* Where each namespace ends once every step of plan has run side by side,
 * without running anything (false: a step that cannot run online). With
 * nm->fused, a run moves its namespace once, to its one result: its
 * steps' other names are never made, so nothing expects them. */
bool rm_names_of_plan (rm_names_t *nm, const rm_plan_t *plan, bson_error_t *err);

#endif
