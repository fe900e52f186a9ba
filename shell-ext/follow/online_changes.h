/* The follow layer of remodel-online (shell-ext/follow/): the sync that
 * recomputes only what the change log's changes since a point affect
 * (online_incr.c and the followers of each kind of result), and its
 * rounds (online_follow.c), which `sync`, `follow` and `finalize` use.
 * What changed, and the partners' keys as remodel last read them, are the
 * state layer's (online_state.h). */
#ifndef REMODEL_ONLINE_CHANGES_H
#define REMODEL_ONLINE_CHANGES_H

#include "online_batch.h"

/* online_follow.c: a sync from the change log, when the plan's run
 * recorded a point: the next point into next (saved by the caller once
 * every step is synced, when *save), the steps from *first_full on left
 * to rescan in full. on->run->follows false: no point, rescan everything. */
bool online_follow_sync (online_t *on, size_t *first_full, online_capture_t *next, bool *save,
                         bson_error_t *err);
/* The point the plan's record holds into c; *follows: there is one in a
 * change log (not capture none). */
bool online_follow_point (online_t *on, online_capture_t *c, bool *follows, bson_error_t *err);
/* finalize, after the switch: the _ids the log shows written to the plan's
 * sources from the recorded point up to now (0: none slipped in), the
 * switch's own DDL (own, n_own) skipped; why (cap bytes) not "" when the
 * log cannot tell (it shows other DDL, or its history is lost). */
bool online_follow_confirm (online_t *on, const online_ddl_t *own, size_t n_own, int64_t *written,
                            char *why, size_t cap, bson_error_t *err);

/* online_incr_refs.c: a pass's outputs whose results their drivers'
 * results list (rm_pass_t.driver_list), for a chunk of drivers ids (an
 * array). old: before anything of the chunk is written, the _ids the
 * drivers' results in the target list now, one list per such output,
 * under its namespace; old_ids appends output k's to arr. claimed: a
 * result made now that the result of a driver not among drivers lists is
 * refused (online_check_claimed's words), before the chunk writes.
 * missing: old results out does not make again, and that no driver
 * outside the chunk lists now: counted into *missing; sync removes them
 * (and notes them in pr->changed). Called before the chunk's results are
 * written, so that the old lists outlive a kill. */
bool online_refs_old (online_job_t *j, online_passrun_t *pr, const bson_t *ids,
                      online_changes_t *old, bson_error_t *err);
void online_refs_old_ids (const online_job_t *j, size_t k, const online_changes_t *old,
                          online_values_t *a);
bool online_refs_claimed (online_job_t *j, online_passrun_t *pr, const online_docs_t *out,
                          const online_idlist_t *drivers, online_changes_t *old, bson_error_t *err);
bool online_refs_missing (online_job_t *j, online_passrun_t *pr, const bson_t *ids,
                          const online_changes_t *old, const online_docs_t *out, int64_t *missing,
                          bson_error_t *err);

/* online_followers.c: sync from the log. *done false (with a line saying why)
 * when only a full rescan will do, which the caller then runs; the point
 * is saved by the caller once the plan's results cover it. noted: what an
 * earlier sync noted (online_made_load), changes of the targets it names
 * for the steps after the one making them. */
bool online_incr_sync (online_t *on, online_changes_t *ch, const online_changes_t *noted,
                       online_incr_stats_t *st, bool *done, size_t *first_full, bson_error_t *err);

/* online_followers.c: the followers of a change log, a row per way a
 * pass's results trace back to the documents that made them
 * (rm_pass_t.trace), found by online_follower (NULL: not followed, the
 * step and those after it are rescanned in full). A row's follow, asked
 * for pass p (number pi) of step s by a request (online_follow_req_t), finds
 * what the changes of ch affect (the changed drivers and those the
 * changed partners' keys match, their series, what they held), recomputes
 * it, and in mode sync rewrites the results that differ and removes those
 * not made again, each noted in made and, where a later step reads the
 * target (ahead), in the journal before it is written; in mode verify it
 * counts them into st. noted: what an earlier sync noted (NULL: nothing).
 * Its sample puts up to n drivers of the pass into ch, which verify then
 * follows as if they had changed (no_sample: why they are not random). */
typedef struct {
    const rm_step_t *s;
    const rm_pass_t *p;
    size_t pi;                      /* p's number in its step */
    online_mode_t mode;
    online_changes_t *ch;
    const online_changes_t *noted;
    online_changes_t *made;         /* NULL: nothing noted (verify) */
    bool ahead;
    online_incr_stats_t *st;
} online_follow_req_t;
typedef bool (*online_follow_fn) (online_t *on, const online_follow_req_t *rq, bson_error_t *err);
typedef bool (*online_sample_fn) (online_t *on, const rm_step_t *s, const rm_pass_t *p, int64_t n,
                                  online_changes_t *ch, char *no_sample, size_t cap,
                                  bson_error_t *err);
typedef struct {
    online_follow_fn follow;
    online_sample_fn sample;
} online_follower_t;
const online_follower_t *online_follower (const rm_pass_t *p);

/* The rows' functions. online_incr.c: results that name their drivers,
 * by _id or a field, or that their drivers' results list
 * (online_incr_refs.c); a sample of the pass's drivers.
 * online_incr_series.c: by series, by what the drivers hold (the key
 * map). */
bool online_follow_drivers (online_t *on, const online_follow_req_t *rq, bson_error_t *err);
bool online_follow_series (online_t *on, const online_follow_req_t *rq, bson_error_t *err);
bool online_follow_held (online_t *on, const online_follow_req_t *rq, bson_error_t *err);
bool online_sample_drivers (online_t *on, const rm_step_t *s, const rm_pass_t *p, int64_t n,
                            online_changes_t *ch, char *no_sample, size_t cap, bson_error_t *err);
/* The key path "<holds>._id" of a pass whose drivers hold their
 * results' _ids, parsed into path (NULL: none). */
rm_path_t *online_held_path (const rm_pass_t *p, rm_path_t *path);

/* online_followers.c: finalize's verify: up to n drivers of each pass recomputed and
 * compared, step by step, into *differ; the steps from *first_full on
 * (their results are not one per driver) are left to a full verify. */
bool online_incr_verify_sample (online_t *on, int64_t n, int64_t *differ, size_t *first_full,
                                bson_error_t *err);

#endif
