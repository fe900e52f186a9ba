/* Which consecutive steps of a plan run as one pass over their
 * collection (issue 49): the online companion reads such a run once and
 * writes one result collection for it, as the offline engine runs them in
 * one pass (engine_stream.c). Pure computation from the plan: the names
 * layer (remodel/names.h) and the online runner ask the same question and
 * so agree on where a namespace is after each step. */
#ifndef REMODEL_FUSE_H
#define REMODEL_FUSE_H

#include <stdbool.h>
#include <stddef.h>

#include "remodel/plan.h"

/* Whether step s can be one of a run: the one-pass path takes it (a stage
 * class, reading nothing whole first), and online it is one pass over the
 * namespace it writes, no partners, each result its driver's own (by
 * _id), nothing created or emptied. */
bool rm_step_fusable (const rm_plan_t *plan, const rm_step_t *s);

/* The run holding plan's step number i (0-based): its first step's
 * number, and how many steps it has (1: step i runs alone). Two
 * consecutive fusable steps on one namespace are in one run. */
size_t rm_plan_run (const rm_plan_t *plan, size_t i, size_t *first);

#endif
