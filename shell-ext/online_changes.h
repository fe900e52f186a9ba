/* Following the change log: what changed since a point
 * (online_changes.c), the partners' keys as remodel last read them
 * (online_keys.c), and the sync that recomputes only what those changes
 * affect (online_incr.c), which `sync`, `follow` and `finalize` use. */
#ifndef REMODEL_ONLINE_CHANGES_H
#define REMODEL_ONLINE_CHANGES_H

#include "online_batch.h"

/* The _ids of one namespace that changed: each once, in the order first
 * seen, as one-field documents {"": <_id>} one after another in bytes. */
typedef struct {
    char *ns;               /* "db.coll", as the plan names it */
    rm_buf_t bytes;
    uint32_t *at;           /* each _id's offset in bytes */
    uint32_t n, cap;
    uint64_t *hash;         /* an open-addressing table: hashes... */
    uint32_t *slot;         /* ...and 1 + the _id's number (0: empty) */
    size_t slots;
} online_idlist_t;

/* Empties l (kept: the count of _ids it is part of). */
void online_idlist_clear (online_idlist_t *l, int64_t *kept);
/* The ith _id of l. */
bool online_idlist_get (const online_idlist_t *l, uint32_t i, bson_iter_t *id);
/* Whether l holds id. */
bool online_idlist_has (const online_idlist_t *l, const bson_iter_t *id);

/* An array of values (_ids, series) being built, for a {$in: ...} or the
 * journal: add appends one (an online_batch_id_fn, ctx the array). */
typedef struct {
    bson_t arr;
    uint32_t n;
} online_values_t;
void online_values_init (online_values_t *a);
void online_values_add (void *a, const bson_iter_t *id);
/* The values of l from *at on (moved past them), up to max, into v
 * (emptied first): how many. */
uint32_t online_idlist_chunk (const online_idlist_t *l, uint32_t *at, int64_t max,
                              online_values_t *v);

/* At most this many _ids are kept for one sync: past it, recomputing
 * them one by one costs more than a rescan, which is what follows. */
#define ONLINE_CHANGES_MAX 1000000

typedef struct online_changes_s {
    online_idlist_t *lists;
    size_t n, cap;
    int64_t events;         /* read from the log */
    int64_t kept;           /* _ids in all lists */
    char rescan[300];       /* not "": why only a full rescan will do */
    uint32_t oldest;        /* the earliest event's time in the log, seconds since the
                               epoch by the server's clock (0: none known), for status */
} online_changes_t;

void online_changes_init (online_changes_t *ch);
void online_changes_destroy (online_changes_t *ch);
/* ns's list (NULL when none and !create). */
online_idlist_t *online_changes_list (online_changes_t *ch, const char *ns, bool create);
/* Notes id under ns (once); past ONLINE_CHANGES_MAX, notes a rescan. */
void online_changes_add (online_changes_t *ch, const char *ns, const bson_iter_t *id);
/* A hash of a value (type and bytes), never 0. */
uint64_t online_value_hash (const bson_iter_t *v);

/* The namespaces the plan's log must be read for: every step's input that
 * no earlier step made (those an earlier step makes change as remodel
 * rewrites them, which it notes itself). "db.coll" each, at most cap. */
size_t online_changes_sources (online_t *on, const char **out, size_t cap);

/* Reads the log from point `from` on (up to `to`, where the mode can bound
 * it; a stream is read until it is quiet: events after `to` are only read
 * twice) into ch: every insert, update, replace and delete of nss. A drop
 * or rename of one of them sets ch->rescan. */
bool online_changes_read (online_t *on, const online_capture_t *from, const online_capture_t *to,
                          const char **nss, size_t nns, online_changes_t *ch, bson_error_t *err);

/* The key map (online_keys.c): for each join's partners, every key value
 * remodel read them with, in the state database's collection keys.
 * An update event carries the document as it is, not as it was: when a
 * child moves to another parent, the map says which parent had it. Keys
 * are only ever added (a partner read with key a, then b, was in results
 * of both), and dropped with the plan. */
online_keys_t *online_keys_new (online_t *on, const rm_step_t *s, size_t pass,
                                const rm_path_t *key);
void online_keys_destroy (online_keys_t *k);
/* Queues partner doc's key values (as $lookup matches them). */
bool online_keys_note (online_keys_t *k, const uint8_t *doc, uint32_t len, bson_error_t *err);
bool online_keys_flush (online_keys_t *k, bson_error_t *err);
/* Appends to arr (from *n on) every key value recorded for the partners
 * ids (an array of _ids). */
bool online_keys_old (online_keys_t *k, const bson_t *ids, bson_t *arr, uint32_t *n,
                      bson_error_t *err);
/* Forgets the plan's whole map (--restart, rollback). */
bool online_keys_drop_plan (online_t *on, bson_error_t *err);
/* The key values of doc at key, as $lookup matches them, appended to arr. */
void online_keys_values (const uint8_t *doc, uint32_t len, const rm_path_t *key, bson_t *arr,
                         uint32_t *n);

/* online_verify.c: a result naming its driver in another field than _id
 * may take the _id of another driver's result (an extract's child with an
 * _id of its own): an overwrite, unless that driver is one of drivers
 * (recomputed too: the child moved) or is gone (the result an orphan).
 * Checked against the target before a batch of out is written: an error
 * naming the document there. */
bool online_check_claimed (online_job_t *j, online_passrun_t *pr, const online_docs_t *out,
                           const online_idlist_t *drivers, bson_error_t *err);

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

/* online_made.c: the _ids a sync may rewrite or remove in a target a
 * later step reads, noted in <state-db>.made_<plan id> before it writes
 * them, so that a sync killed between two steps tells the next one what
 * the first step changed. load adds what is noted to made (by target
 * namespace); note notes ids (an array) of target ns; drop forgets them
 * all once the point they lead to is saved (always: even when this
 * process noted nothing, as rollback and --restart do). */
bool online_made_load (online_t *on, online_changes_t *made, bson_error_t *err);
bool online_made_note (online_t *on, const char *ns, const bson_t *ids, bson_error_t *err);
bool online_made_drop (online_t *on, bool always, bson_error_t *err);

/* online_incr.c: sync from the log. *done false (with a line saying why)
 * when only a full rescan will do, which the caller then runs; the point
 * is saved by the caller once the plan's results cover it. noted: what an
 * earlier sync noted (online_made_load), changes of the targets it names
 * for the steps after the one making them. */
bool online_incr_sync (online_t *on, online_changes_t *ch, const online_changes_t *noted,
                       online_incr_stats_t *st, bool *done, size_t *first_full, bson_error_t *err);

/* online_followers.c: the followers of a change log, a row per way a
 * pass's results trace back to the documents that made them
 * (rm_pass_t.trace), found by online_follower (NULL: not followed, the
 * step and those after it are rescanned in full). A row's follow finds
 * what the changes of ch affect (the changed drivers and those the
 * changed partners' keys match, their series, what they held), recomputes
 * it, and in mode sync rewrites the results that differ and removes those
 * not made again, each noted in made and, where a later step reads the
 * target (ahead), in the journal before it is written; in mode verify it
 * counts them into st. noted: what an earlier sync noted (NULL: nothing).
 * Its sample puts up to n drivers of the pass into ch, which verify then
 * follows as if they had changed (no_sample: why they are not random). */
typedef bool (*online_follow_fn) (online_t *on, const rm_step_t *s, const rm_pass_t *p, size_t pi,
                                  online_mode_t mode, online_changes_t *ch,
                                  const online_changes_t *noted, online_changes_t *made,
                                  bool ahead, online_incr_stats_t *st, bson_error_t *err);
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
bool online_follow_drivers (online_t *on, const rm_step_t *s, const rm_pass_t *p, size_t pi,
                            online_mode_t mode, online_changes_t *ch,
                            const online_changes_t *noted, online_changes_t *made, bool ahead,
                            online_incr_stats_t *st, bson_error_t *err);
bool online_follow_series (online_t *on, const rm_step_t *s, const rm_pass_t *p, size_t pi,
                           online_mode_t mode, online_changes_t *ch, const online_changes_t *noted,
                           online_changes_t *made, bool ahead, online_incr_stats_t *st,
                           bson_error_t *err);
bool online_follow_held (online_t *on, const rm_step_t *s, const rm_pass_t *p, size_t pi,
                         online_mode_t mode, online_changes_t *ch, const online_changes_t *noted,
                         online_changes_t *made, bool ahead, online_incr_stats_t *st,
                         bson_error_t *err);
bool online_sample_drivers (online_t *on, const rm_step_t *s, const rm_pass_t *p, int64_t n,
                            online_changes_t *ch, char *no_sample, size_t cap, bson_error_t *err);
/* The key path "<holds>._id" of a pass whose drivers hold their
 * results' _ids, parsed into path (NULL: none). */
rm_path_t *online_held_path (const rm_pass_t *p, rm_path_t *path);

/* finalize's verify: up to n drivers of each pass recomputed and
 * compared, step by step, into *differ; the steps from *first_full on
 * (their results are not one per driver) are left to a full verify. */
bool online_incr_verify_sample (online_t *on, int64_t n, int64_t *differ, size_t *first_full,
                                bson_error_t *err);

/* online_lag.c: status's lag line for a plan following a log, with
 * events (ch, read after the recorded point) not yet applied: how old the
 * oldest is, and when follow will have caught up at the rate its rounds
 * applied events (rec: the plan's record). */
void online_lag_line (online_t *on, const bson_t *rec, const online_changes_t *ch);

#endif
