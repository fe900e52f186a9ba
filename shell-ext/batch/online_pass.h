/* A step and its passes resolved once (issue 53): what each pass reads
 * and writes, under the names those namespaces have now, and the sets of
 * its results' _ids, computed in one place (online_pass.c) into values
 * that run, verify and sync drive (online_run.c) and that the pass's
 * workers share read only: names, not connections, so a worker opens its
 * own collections from them on its own connection.
 *
 * The step is the run's, derived when the plan was loaded (online_step,
 * conn/online_steps.c); a pass is resolved here, in batch/, beside the
 * code that reads and writes it, and the commands above hand it down.
 *
 * A pass is one step's, or a fused run's (remodel/fuse.h, issue 49): s is
 * then the run's first step, whose inputs it reads, whose checkpoints and
 * partitions it keeps, and whose engine computes the whole run
 * (online_engine_new); its targets are the run's one result per
 * namespace, named after its last step (rm_name_target). Its users see
 * one pass either way. */
#ifndef REMODEL_ONLINE_PASS_H
#define REMODEL_ONLINE_PASS_H

#include "online_batch.h"

/* Pass number index of a step, as it is before the step runs. */
typedef struct {
    const online_step_t *st;
    const rm_step_t *s;
    const rm_pass_t *p;
    size_t index;
    char label[200];        /* "step 3 (set)", "steps 3-5 (set, unset, rename)" */
    /* What it reads: the driving namespace (its text for messages), the
     * partners' (NULL: none), and the collections holding them now (an
     * earlier step's results, side by side). */
    const rm_nsref_t *drive, *partner;
    const char *drive_ns;
    char drive_coll[400], partner_coll[400];
    bool self_join;         /* the partners are the drivers' namespace */
    /* What it writes: side by side, per keep[], the result collection and
     * the step's set of its _ids (NULL: the target says whose a result
     * is, online_check_claimed); in place, the backups' collection in the
     * state database. */
    char target[4][400];
    online_idset_t *sets[4];
    /* A sync's rescan, per keep[]: the step's count of what the merge
     * removed (online_orphans_t; NULL: not asked), linked by the step. */
    online_orphans_t *orphans[4];
    bool keeps_set;         /* some keep[] has a set: one reader fills it */
    char backup[400];
} online_pass_t;

/* Pass pi of st, its sets among the step's (sets[n_sets], matched by
 * namespace; those kept by drivers are no set). */
void online_pass_resolve (const online_t *on, const online_step_t *st, size_t pi,
                          online_idset_t *sets, size_t n_sets, online_pass_t *ps);

#endif
