/* Indexes that follow the plan (common/engine/index_follow.c): the index
 * specifications of each namespace (as a dump's metadata or listIndexes
 * give them) carried through the steps, so that the result indexes the
 * fields its documents have: a rename's keys renamed, an unset's indexes
 * dropped, an embedded child's indexes made multikey on the parent, an
 * extracted array's indexes moved to the children. Each change is one
 * line for the user. Works on specifications only: the offline run writes
 * them into the output's metadata (rm_indexes_follow_dump); the online
 * mode may feed listIndexes' results to rm_ixplan_add and build what
 * rm_ixplan_step leaves. */
#ifndef REMODEL_INDEXES_H
#define REMODEL_INDEXES_H

#include <bson/bson.h>

#include "remodel/dump.h"
#include "remodel/plan.h"

typedef struct {
    char *ns;       /* db.collection */
    bson_t **specs; /* its index specifications, in their order */
    size_t n, cap;
    bool known;     /* its specifications were given (else left alone) */
    bool changed;   /* some step changed them */
} rm_ixns_t;

typedef struct {
    rm_ixns_t *ns;
    size_t n, cap;
    char **changes; /* "db.coll: index \"name\": what changed (step N, op: why)" */
    size_t n_changes;
} rm_ixplan_t;

void rm_ixplan_init (rm_ixplan_t *p);
void rm_ixplan_destroy (rm_ixplan_t *p);
/* Adds namespace ns with the specifications of the array indexes (NULL:
 * none known; it is then left alone). */
void rm_ixplan_add (rm_ixplan_t *p, const char *ns, const bson_t *indexes);
rm_ixns_t *rm_ixplan_find (rm_ixplan_t *p, const char *ns);
/* Applies step s to the specifications (by its row's `indexes`), adding
 * a line to changes for each index it changes, makes or drops. */
void rm_ixplan_step (rm_ixplan_t *p, const rm_step_t *s);

/* The whole plan over out's metadata (rm_engine_prepare's list, with the
 * namespaces the steps create): each namespace whose indexes change gets
 * its metadata rewritten (canonical Extended JSON, every other key as it
 * was); the lines (caller frees each and the array) in *changes. */
void rm_indexes_follow_dump (const rm_plan_t *plan, rm_dump_info_t *out, char ***changes,
                             size_t *n_changes);

/* MongoDB's default name of an index with this key document ("a_1_b_-1",
 * "loc_2dsphere"); weights: a text index's, whose fields stand for _fts
 * and _ftsx (NULL: none). Caller frees. */
char *rm_index_default_name (const bson_t *key, const bson_t *weights);

#endif
