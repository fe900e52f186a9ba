/* remodel-online: the online companion. `remodel online ...` runs it (it is
 * found beside the remodel binary). It applies a plan's steps to a live
 * server in batches through libmongoc, each batch transformed by the core's
 * engine (remodel/batchstep.h): no step is implemented here. */
#ifndef REMODEL_ONLINE_H
#define REMODEL_ONLINE_H

#include <mongoc/mongoc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "remodel/batchstep.h"
#include "remodel/compile.h"
#include "remodel/error.h"
#include "remodel/names.h"
#include "remodel/passes.h"
#include "remodel/plan.h"

typedef struct {
    const char *plan_path;
    const char *command;    /* "run", "sync", ...: for messages */
    const char *uri;
    const char *state_db;   /* --state-db (default "remodel") */
    int64_t batch_size;     /* --batch-size (default 1000) */
    int64_t pause_ms;       /* --pause-ms between batches */
    int64_t max_rate;       /* --max-rate documents per second (0: none) */
    bool dry_run, restart, quiet;
    bool in_place;          /* --in-place: backfill the namespaces themselves */
    bool create_indexes;    /* --create-indexes: make the join indexes missing */
    bool allow_missing;     /* run --allow-missing: a field in no document passes */
    mongoc_write_concern_t *write_concern; /* --write-concern (NULL: the URI's) */
    int64_t batch_time_ms;  /* --batch-time: batches sized to take about this */
    bool log_json;          /* --log-format json: a line per batch */
    int64_t retry_for_ms;   /* --retry-for: transient errors retried this long */
    bool writes_stopped;    /* finalize --writes-stopped */
    bool full_verify;       /* finalize --full-verify: every result, not a sample */
    int64_t sample;         /* finalize --sample: drivers verified a pass (default 1000) */
    bool block_writes;      /* finalize --block-writes */
    bool force;             /* rollback --force: restore originals changed since */
    bool forget;            /* rollback --forget: keep them, forget the plan */
    bool discard_writes;    /* rollback --discard-writes-after-switch */
    bool carry_writes;      /* rollback --carry-writes: back through the inverse */
    bool server_side;       /* run --server-side: compiled pipelines (remodel/compile.h) */
    rm_compile_version_t server_version; /* --server-version */
    bool server_version_given;
    size_t memory;          /* --memory: for a step's sets of result _ids (default 512M) */
    const char *tmpdir;     /* --tmp: where they spill past it (NULL: $TMPDIR or /tmp) */
    const char *differences; /* verify --differences FILE: every differing _id (NULL: none) */
} online_opts_t;

typedef enum {
    ONLINE_RUN,             /* apply the plan, resumable */
    ONLINE_VERIFY,          /* recompute and compare, write nothing */
    ONLINE_SYNC             /* recompute and write what differs */
} online_mode_t;

typedef struct online_lease online_lease_t;
typedef struct online_diffs online_diffs_t;
typedef struct online_progress online_progress_t;

/* What a sync from the change log did (online_follow.c). */
typedef struct {
    int64_t events, read, rewritten, removed, recomputed;
    int64_t point_at;       /* when the next point was taken (ms since the epoch) */
} online_incr_stats_t;

/* A connection and what a run keeps of its plan. */
typedef struct {
    mongoc_client_t *client;
    char where[300];        /* host:port list, never the credentials */
    const online_opts_t *o;
    rm_plan_t plan;
    /* The plan's name, path, id and digest, and where each namespace is
     * now (remodel/names.h). */
    rm_names_t names;
    char owner[128];        /* this run, in the lease */
    online_lease_t *lease;  /* held (online_lease.c), or NULL */
    int64_t epoch;          /* the lease's epoch while held: the fencing token */
    bool transient;         /* the last driver error may pass: retry */
    /* run: documents this process read, for capture none's cost of
     * finalize at this run's rate. */
    int64_t read_now;
    /* run: the milliseconds since the last checkpoint spent on batches
     * (reading, computing, writing), which the next one adds to its
     * busyMs: status's rate leaves out pauses, lease waits and the time
     * between two runs. */
    int64_t busy_ms;
    /* The plan follows a change log (a point is recorded): partners'
     * keys are noted as they are read (online_keys.c). */
    bool follows;
    bool following;         /* in `follow`: quiet rounds say nothing */
    bool incr_running;      /* a sync from the log is recomputing */
    /* sync: the run was --server-side, which writes no key map: this
     * sync rescans every step, writing it (keysMissing in the record). */
    bool keys_rebuilt;
    bool made_noted;        /* online_made.c: the journal may hold _ids */
    online_incr_stats_t incr; /* the last sync from the log */
    int64_t verify_sample;  /* verify: this many drivers a pass (0: all) */
    int lookup_rules;       /* 0 not known yet, 1 MongoDB 5.0-8.x's, 2 9.0's */
    online_diffs_t *diffs;  /* verify: the differing _ids (online_diffs.c), or NULL */
    /* finalize: when the writes stopped (online_mono_ms; 0: not in the
     * window), and when a progress line last said so (online_blocked.c). */
    int64_t window_t0, window_said;
} online_t;

/* online_conn.c: connect and ping (errors redact credentials). */
bool online_connect (online_t *on, const online_opts_t *o, bson_error_t *err);
void online_close (online_t *on);
mongoc_collection_t *online_collection (online_t *on, const char *db, const char *coll);
/* A driver error as ours, naming what was being done and where; notes in
 * on->transient whether it is one to retry (network, failover, shutdown). */
bool online_fail (online_t *on, bson_error_t *err, const bson_error_t *why, const char *what);

/* online_lease.c: one run of a plan at a time, fenced. Takes the lease
 * (a no-op when this process holds it already) and keeps it renewed from
 * a thread of its own until dropped. */
bool online_lease_take (online_t *on, bson_error_t *err);
/* Before every write: false once the lease is lost or not renewed in
 * time, so a run that lost it writes nothing more. */
bool online_lease_check (online_t *on, bson_error_t *err);
void online_lease_drop (online_t *on);
/* The server's clock (hello's localTime), which judges expiry. */
bool online_server_now (online_t *on, int64_t *now, bson_error_t *err);
/* Who holds the lease now ("" when nobody), for how long, its epoch;
 * *gone: a process of this host that is no more. */
bool online_lease_status (online_t *on, char *holder, size_t cap, int64_t *left, int64_t *epoch,
                          bool *gone, bson_error_t *err);
/* online_lease_rule.c: the lease's decisions, apart from the server.
 * holder_dead: owner ("host:pid:ms") is a process of this host that is
 * gone (or a zombie). blocks: a lease document (found, its owner, when it
 * expires by the server's clock) keeps run me out at now. claim_blocks:
 * so does the newest fence (newest, taken at newest_at by claimer) past
 * the lease's epoch, a run taking the lease that is not gone. next_epoch:
 * the epoch a take fences. verdict: whether a holder may write at mono
 * (its clock), last renewed at renewed. fenced: a fence newer than the
 * holder's epoch, a run taking over. parse: a lease document's owner (""
 * when released or not a string), epoch and expires (0 when missing). */
typedef enum { ONLINE_LEASE_OK, ONLINE_LEASE_LOST, ONLINE_LEASE_STALE } online_lease_verdict_t;
bool online_lease_holder_dead (const char *owner);
bool online_lease_blocks (bool found, const char *owner, const char *me, int64_t expires,
                          int64_t now);
bool online_lease_claim_blocks (int64_t newest, int64_t epoch, int64_t newest_at, int64_t lease_ms,
                                int64_t now, const char *claimer, const char *me);
int64_t online_lease_next_epoch (int64_t newest, int64_t epoch);
online_lease_verdict_t online_lease_verdict (bool lost, int64_t mono, int64_t renewed,
                                             int64_t lease_ms, int64_t margin_ms);
bool online_lease_fenced (int64_t newest, int64_t epoch);
void online_lease_parse (const bson_t *doc, char *owner, size_t cap, int64_t *epoch,
                         int64_t *expires);

/* online_signal.c: SIGINT and SIGTERM, caught by the commands that hold
 * the lease, ask the loops to stop at their next safe point. install: in
 * main, before the lease is taken (a second signal kills at once).
 * requested: the signal, 0 while none came; a loop polls it between two
 * batches. check: false with RM_ERR_INTERRUPTED "plan P: stopped by
 * SIGINT WHERE" once one came. block: this thread ignores them (the
 * lease's renewals; old restored with pthread_sigmask). */
void online_signal_install (void);
int online_stop_requested (void);
const char *online_stop_name (void);
bool online_stop_check (online_t *on, const char *where, bson_error_t *err);
void online_signal_block (sigset_t *old);

/* online_state.c: the plan's record, checkpoints. */
bool online_plan_load (online_t *on, const online_opts_t *o, bson_error_t *err);
/* What the plan's record says. */
typedef struct {
    bool found;
    char digest[32];
    bool in_place, paused, finalized;
    char error[512];        /* the last run's error, "" when none */
    bool switching;         /* a switch's journal is there (online_switch.c) */
    char direction[16];     /* "finalize" or "rollback": who wrote it last */
    int64_t renamed, renames;
    int64_t rollback_left;  /* in place: documents the last rollback left */
    bool after_pending;     /* the results hold writes made after a switch (online_after.c) */
    int lookup_rules;       /* the $lookup rules the run joined by (online_server.c's
                               on->lookup_rules), 0: not recorded */
} online_record_t;
bool online_plan_read (online_t *on, online_record_t *r, bson_error_t *err);
/* online_record_parse.c: the fields of the plan's record doc into r
 * (found left false: the caller knows). */
void online_record_parse (const bson_t *doc, online_record_t *r);
/* The state database's document coll {_id: id} into doc (initialized
 * here; empty and *found false when there is none). */
bool online_state_get (online_t *on, const char *coll, const char *id, bson_t *doc, bool *found,
                       const char *what, bson_error_t *err);
/* An update of the plan's record, by the lease's holder only. */
bool online_plan_update (online_t *on, const bson_t *update, bson_error_t *err);
/* run, verify, sync: refused while a switch is journaled or finalized, or
 * while the results hold writes made after the switch that a rollback
 * left there (a sync would overwrite them). */
bool online_plan_unswitched (online_t *on, const online_record_t *r, bson_error_t *err);
/* The plan's record {_id: name, digest, inPlace, paused, finalized}:
 * refuses a changed plan, or one started in the other mode, unless restart
 * (which forgets the old checkpoints). *fresh: the plan begins (first run,
 * --restart, a changed plan), so its change capture point is taken anew. */
bool online_plan_record (online_t *on, bool *fresh, bson_error_t *err);
/* The mode the plan's record says (docs/online.md): a plan that ran in
 * place is run, verified, synced, finalized and rolled back in place
 * without --in-place; --in-place for a plan that ran side by side is
 * refused (run: by online_plan_record). run --restart keeps the mode its
 * flags say; no record: the flags'. */
bool online_plan_mode (online_t *on, online_opts_t *o, bool run, bson_error_t *err);
/* verify, sync, finalize, rollback: the plan has run, as it is now, in the
 * mode given. */
bool online_plan_check (online_t *on, bson_error_t *err);
/* pause, resume: the running process sees it at its next batch. */
bool online_plan_set (online_t *on, const char *field, bool value, bson_error_t *err);
bool online_plan_paused (online_t *on, bool *paused, bson_error_t *err);
/* The last run's error, for status (NULL: clears it); best effort, and
 * only while this run holds its lease. */
bool online_plan_note_error (online_t *on, const char *message);
/* Forgets the plan's record and checkpoints (rollback). */
bool online_plan_forget (online_t *on, bson_error_t *err);
/* The checkpoint of pass p of step s: its last _id copied into last as
 * "last" (nothing when none), *done when finished. */
bool online_checkpoint_read (online_t *on, const rm_step_t *s, size_t p, bson_t *last, bool *done,
                             int64_t *seen, int64_t *changed, bson_error_t *err);
/* online_record_parse.c: a checkpoint document's fields ({"last": <_id>}
 * appended to last when it has one; done, seen, changed: false, 0 when
 * missing). */
void online_checkpoint_parse (const bson_t *doc, bson_t *last, bool *done, int64_t *seen,
                              int64_t *changed);
/* Written only by the lease holder (it renews the lease first). ns: the
 * namespace the pass reads. */
bool online_checkpoint_write (online_t *on, const rm_step_t *s, size_t p, const rm_nsref_t *ns,
                              const char *coll, const bson_value_t *last, int64_t seen,
                              int64_t changed, bool done, bson_error_t *err);
int online_status (online_t *on, bson_error_t *err);
/* What the plan's passes read in all, by their checkpoints, and at what
 * rate (documents a second over the time they ran; 0: unknown). */
bool online_checkpoint_totals (online_t *on, int64_t *seen, int64_t *rate, bson_error_t *err);

/* online_index.c: partners are fetched by key with $in, which needs an
 * index on it. Checks db.coll has one that starts with key; without it,
 * refuses naming the createIndex to run, or creates it when create. */
bool online_index_check (online_t *on, const char *db, const char *coll, const char *key,
                         bool create, bson_error_t *err);
/* The indexes `remodel run` gives the namespaces step s creates (its
 * metadata's: an overflow page's parent_id), made on their targets
 * (targets[i] is written to db colls[i]). */
bool online_index_created (online_t *on, const rm_step_t *s, const rm_nsref_t **targets,
                           const char **colls, size_t n, bson_error_t *err);
/* rollback: drops the indexes the plan's runs made (noted in its record)
 * that are still there as made, saying each; never one made by others. */
bool online_index_drop_made (online_t *on, bson_error_t *err);

/* online_index_copy.c: what the switch carries over. Each result that
 * replaces a source collection gets its indexes (every option), and its
 * validator unless that rejects a document of the new design; an index
 * the new design cannot keep, and a unique one the results violate, are
 * named and not made. At the end of run and sync, at follow's first
 * round; finalize (before it blocks the writes): refused while a unique
 * index would be violated. */
bool online_index_copy (online_t *on, bool finalize, bson_error_t *err);
/* A result written for the namespace db.source is created with cmd
 * ({create: ...}), given here the source's default collation. */
bool online_index_copy_create (online_t *on, const char *db, const char *source, bson_t *cmd,
                               bson_error_t *err);

/* online_shared.c: plans that share sources. A source switched by
 * another plan's finalize (its original under that plan's backup name)
 * after this plan's run began: refused, naming that plan. run: the
 * switches already there are noted (fresh: a run begun anew). */
bool online_shared_check (online_t *on, bool run, bool fresh, bson_error_t *err);
/* finalize, before it blocks the writes: both checks above. */
bool online_switch_ready (online_t *on, bson_error_t *err);

/* online_run.c: run, verify or sync the plan. Returns the results found
 * not as they should be (verify, sync; 0 for run), -1 on error. */
int64_t online_apply (online_t *on, online_mode_t mode, bson_error_t *err);
/* online_preflight.c: before a run writes anything, every namespace the
 * plan reads is on the server and every field a step names is in some
 * document of its namespace (refused as `remodel run` refuses them). */
bool online_preflight (online_t *on, bson_error_t *err);

/* online_field.c: a string field of a stored record into buf ("" when
 * missing or not a string). */
void online_field_utf8 (const bson_t *doc, const char *key, char *buf, size_t cap);

/* online_clock.c: a sleep and the monotonic clock, in milliseconds. */
void online_sleep_ms (int64_t ms);
int64_t online_mono_ms (void);
/* Sleeps while the plan is paused, renewing the lease. */
bool online_wait_while_paused (online_t *on, bson_error_t *err);
/* online_retry.c: after a transient error (network, failover,
 * shutdown), online_retry waits with backoff and returns true to try
 * again, for up to --retry-for since the first of a run of them; any
 * other error, false. A success ends the run: ONLINE_RETRY_RESET. */
typedef struct {
    int64_t since;          /* the run's first error, 0: none yet */
    int tries;
} online_retry_t;
#define ONLINE_RETRY_RESET(r) ((r) = (online_retry_t) {0, 0})
bool online_retry (online_t *on, online_retry_t *r, const bson_error_t *err);

/* online_checkpoint_write, retried after transient errors (the lease
 * renewed each time); last: {"last": <_id>} or empty. */
bool online_checkpoint_save (online_t *on, const rm_step_t *s, size_t p, const rm_nsref_t *ns,
                             const char *coll, const bson_t *last, int64_t seen, int64_t changed,
                             bool done, bson_error_t *err);

/* online_range.c: resuming after a checkpoint's _id. Appends to filter
 * the condition "every _id after last in MongoDB's sort order", of any
 * type ({$gt: last} alone keeps to last's type); false when it does not fit. */
bool online_range_after (const bson_iter_t *last, bson_t *filter);
/* Read through that filter, id sorts before last after all (a MinKey, a
 * symbol: types no $type alias names): the reader skips it. Such _ids come
 * first in _id order, so only those before the first kept need asking. */
bool online_range_before (const bson_iter_t *id, const bson_iter_t *last);

/* online_switch.c: the journaled switch (renames) between the designs.
 * forward: finalize's renames, begun or completed, then the plan marked
 * finalized and the intermediate results dropped; *n_switched the
 * namespaces switched. back: rollback's, from any point of a switch or
 * after it; *undone false when nothing was switched (no backup is there
 * either: the results may go). */
bool online_switch_forward (online_t *on, size_t *n_switched, bson_error_t *err);
bool online_switch_back (online_t *on, bool *undone, bson_error_t *err);
bool online_switch_rename (online_t *on, const char *db, const char *from, const char *to,
                           bson_error_t *err);
bool online_switch_note (online_t *on, const bson_t *update, bson_error_t *err);
bool online_coll_exists (online_t *on, const char *db, const char *coll, bool *yes,
                         bson_error_t *err);
bool online_coll_drop (online_t *on, const char *db, const char *coll, bson_error_t *err);
/* online_switch_state.c: one move's state machine, decided apart from
 * the server. state: where a move stands by which of its collections
 * exist (COLL, RESULT, BACKUP; original: COLL had a collection before
 * the switch); NONE is no state the switch leaves. done: the renames of
 * the move in place at. next: the rename that moves it one step forward
 * (back: backward), *at then its state; NONE when it is at its end. */
typedef enum { ONLINE_AT_BEFORE, ONLINE_AT_HALF, ONLINE_AT_AFTER, ONLINE_AT_NONE } online_switch_at_t;
typedef enum {
    ONLINE_RENAME_NONE,
    ONLINE_RENAME_COLL_TO_BACKUP,   /* forward: the original kept aside */
    ONLINE_RENAME_RESULT_TO_COLL,   /* forward: the result in its place */
    ONLINE_RENAME_COLL_TO_RESULT,   /* back: the result out of the way */
    ONLINE_RENAME_BACKUP_TO_COLL    /* back: the original in its place */
} online_switch_step_t;
online_switch_at_t online_switch_state (bool original, bool coll, bool result, bool backup);
int64_t online_switch_done (bool original, online_switch_at_t at);
online_switch_step_t online_switch_next (bool original, bool back, online_switch_at_t *at);

/* online_server.c: remodel online run --server-side, the plan compiled
 * (remodel/compile.h). The server's version (buildInfo), whether it has
 * every stage c uses (a clear refusal naming the one it lacks), and one
 * step's pass run range by range. */
bool online_server_version (online_t *on, rm_compile_version_t *v, bson_error_t *err);
/* The engine for a step's batches, joining by the $lookup rules of
 * --server-version, else of the server's own version (buildInfo), else of
 * MongoDB 8.0 (remodel/compile.h's RM_LOOKUP_DEFAULT_VERSION): the rules
 * the server's own $lookup follows, so that client-side results are
 * --server-side's. */
rm_batchstep_t *online_engine_new (online_t *on, const rm_step_t *s);
/* Those rules, settled once a process (on->lookup_rules: 1 MongoDB
 * 5.0-8.x's, 2 9.0's; a plan's record may have set them first). */
int online_lookup_rules (online_t *on);
bool online_server_check (online_t *on, const rm_compile_plan_t *c, bson_error_t *err);
/* Whether the step's pipelines are exact for the data (its guard finds
 * nothing); *exact false: it runs client-side (said on stderr). */
bool online_server_exact (online_t *on, const rm_compile_step_t *st, bool *exact,
                          bson_error_t *err);
bool online_server_pass (online_t *on, const rm_compile_step_t *st, const rm_compile_pass_t *cp,
                         bson_error_t *err);

/* online_capture.c: change capture, what the server offers to follow the
 * application's writes (docs/online.md). */
typedef enum {
    ONLINE_CAPTURE_NONE,    /* a standalone server: full rescans */
    ONLINE_CAPTURE_STREAM,  /* change streams */
    ONLINE_CAPTURE_OPLOG    /* tailing local.oplog.rs */
} online_capture_mode_t;

/* A mode and a point in its log: a resume token (change streams), a
 * Timestamp (an oplog entry's ts; a stream's cluster time, where the
 * server gave one). */
typedef struct {
    online_capture_mode_t mode;
    bson_t token;           /* empty: none */
    bool has_ts;
    uint32_t ts_t, ts_i;
    bool sentinel;          /* token: the event of remodel's own write */
    char db[128], coll[256]; /* the namespace the stream was opened on */
    bson_t sources;         /* the sources' identities at the point
                             * (online_identity.h); empty: not recorded */
    char rescan[300];       /* not "": a source was gone at a round after
                             * the point, so the next sync rescans */
} online_capture_t;

void online_capture_init (online_capture_t *c);
void online_capture_destroy (online_capture_t *c);
const char *online_capture_name (online_capture_mode_t m);
/* Which mode the server offers, and where its log stands when it says so
 * (a stream's postBatchResumeToken and operationTime, the oplog's last
 * ts): change streams on the plan's first source collection, else a capped
 * local.oplog.rs, else none. Only network errors fail. */
bool online_capture_detect (online_t *on, online_capture_t *c, bson_error_t *err);
/* A change stream reply's cursor.postBatchResumeToken, as a read-only view
 * into reply in *tok (false: it has none): online_change_event.c. */
bool online_stream_token (const bson_t *reply, bson_t *tok);
/* detect, then a point that is safe to follow from: a stream without
 * tokens gets one from a sentinel write in the state database. Call it
 * before the run reads any source document, by the lease's holder. */
bool online_capture_start (online_t *on, online_capture_t *c, bson_error_t *err);
/* The point in the plan's record (field capture), and back; load: false
 * when the record has none. */
bool online_capture_save (online_t *on, const online_capture_t *c, bson_error_t *err);
bool online_capture_load (const bson_t *record, online_capture_t *c);
/* The point as a document key of doc, as save writes it (the switch's
 * point, online_after.c, is kept so). */
void online_capture_append (const online_capture_t *c, const char *key, bson_t *doc);
/* *lost: the point is no longer in the log (the oplog's first ts is past
 * it; the stream refuses to resume: ChangeStreamHistoryLost, or a token
 * it no longer knows). */
bool online_capture_lost (online_t *on, const online_capture_t *c, bool *lost, bson_error_t *err);
/* local.oplog.rs's first (dir 1) or last (dir -1) entry's ts; *found
 * false when it has none. */
bool online_oplog_edge (online_t *on, int dir, uint32_t *t, uint32_t *i, bool *found,
                        bson_error_t *err);
/* online_window.c: whether the oplog's history lasts. before_run: before
 * a run's copy (c: the capture it recorded or kept), says on stderr when
 * the oplog will not hold what is written during the copy (the copy's
 * own results and the application's writes at the oplog's rate, over the
 * time the copy is expected to take), with the replSetResizeOplog that
 * would. follow: says when the recorded point has aged past half the
 * history the oplog holds. Nothing when the oplog is not capped or not
 * readable (mongo-java-server's is neither), nor with --quiet. */
void online_window_before_run (online_t *on, const online_capture_t *c);
void online_window_follow (online_t *on, const online_capture_t *c);
/* For people: the point ({"_data": ...} or Timestamp(T, I)), and the
 * mode's line after "capture: ", more (NULL: nothing) added inside its
 * parentheses. */
void online_capture_point (const online_capture_t *c, char *buf, size_t cap);
void online_capture_describe (const online_capture_t *c, const char *more, char *buf, size_t cap);
/* capture: none: finalize re-reads every source about this many times (a
 * checksum, a sync, a verify, the checksum again after the renames). */
#define ONLINE_FINALIZE_READS 4
/* finalize with a change log: drivers verified a pass (--sample). */
#define ONLINE_FINALIZE_SAMPLE 1000
/* "finalize re-reads about N documents with writes stopped, about D at
 * R/s" from what the plan's passes read (plan_read) and a rate (documents
 * read per second; <= 0: unknown); in place, where nothing is switched,
 * what each sync and verify re-reads. */
void online_capture_cost (int64_t plan_read, bool in_place, int64_t rate, char *buf, size_t cap);

/* online_follow.c: a sync from the change log, when the plan's run
 * recorded a point: the next point into next (saved by the caller once
 * every step is synced, when *save), the steps from *first_full on left
 * to rescan in full. on->follows false: no point, rescan everything. */
bool online_follow_sync (online_t *on, size_t *first_full, online_capture_t *next, bool *save,
                         bson_error_t *err);
/* remodel online follow: syncs from the log in rounds until a signal or
 * finalize stops it. 0, -1. */
int online_follow (online_t *on, bson_error_t *err);
/* The point the plan's record holds into c; *follows: there is one in a
 * change log (not capture none). */
bool online_follow_point (online_t *on, online_capture_t *c, bool *follows, bson_error_t *err);
/* finalize, after the switch: the _ids the log shows written to the plan's
 * sources from the recorded point up to now (0: none slipped in). */
bool online_follow_confirm (online_t *on, int64_t *written, bson_error_t *err);

/* online_sample.c: a sample of the results verified ahead of the
 * cut-over. verify: n drivers a pass (the steps whose results are not one
 * per driver in full), *differ the results that differ; none, in a plan
 * that follows a log, is recorded in the plan's record (sampled), which
 * read gives back (false: none) and describe says in words. */
typedef struct {
    int64_t at_ms;          /* when, ms since the epoch */
    int64_t drivers;        /* drivers a pass */
    char by[16];            /* the command: "verify" or "follow" */
} online_sample_t;
bool online_sample_verify (online_t *on, int64_t n, int64_t *differ, bson_error_t *err);
bool online_sample_read (const bson_t *rec, online_sample_t *s);
void online_sample_describe (const online_sample_t *s, char *buf, size_t cap);

/* online_complete.c: finalize, follow, sync: the plan's run finished
 * every pass of every step, by its checkpoints; otherwise refused
 * (RM_ERR_USAGE), naming what is left and `remodel online run PLAN`. */
bool online_run_complete (online_t *on, bson_error_t *err);

/* online_blocked.c: finalize's write-blocked window. open: it began at
 * t0 (online_mono_ms). plan: the line before it, what finalize will do
 * in it (follows: drained from the change log; ahead: a sample verified
 * before). progress: in the window, a line every few seconds of a long
 * pass (s NULL: not a step's, as a checksum): n read (of < 0), or n of
 * of drivers recomputed (a drain). close: the line saying how
 * long it lasted. */
void online_blocked_open (online_t *on, int64_t t0);
void online_blocked_plan (online_t *on, const online_record_t *r, bool follows, bool ahead);
void online_blocked_progress (online_t *on, const char *what, const rm_step_t *s, const char *ns,
                             int64_t n, int64_t of);
void online_blocked_close (online_t *on, bool switched);

/* online_after.c: the application's writes to the switched-in collections
 * after the switch, which rollback must not lose. Each namespace the plan
 * switched: its collection, its result's and backup's names, and at the
 * switch its count and digest (online_coll_sum); written: the documents
 * written since (-1: changed, how many unknown; -2: nothing recorded to
 * tell by). */
#define ONLINE_AFTER_MAX 64
typedef struct {
    char ns[300], db[128], coll[256], result[400], backup[400];
    int64_t docs;
    uint64_t sum;
    int64_t written;
} online_after_coll_t;
typedef struct {
    online_after_coll_t c[ONLINE_AFTER_MAX];
    size_t n;
    bool found;             /* the plan's record has afterSwitch */
    bool has_point;         /* and the change log's point at the switch */
    online_capture_t point;
    char decided[16];       /* rollback's choice: "none", "carry", "discard" */
    bool pending;           /* writes after the switch left in the results */
} online_after_t;
/* A collection's count and the sum of its documents' CRC-64s. */
bool online_coll_sum (online_t *on, const char *db, const char *coll, int64_t *docs, uint64_t *sum,
                      bson_error_t *err);
/* The namespaces the plan switches (no digest), into a. */
bool online_after_plan (online_t *on, online_after_t *a, bson_error_t *err);
/* finalize, once switched, writes still stopped: the record. */
bool online_after_mark (online_t *on, bool follows, bson_error_t *err);
/* rollback of a finalized plan, before any rename: refused (RM_ERR_USAGE)
 * when written since, without --carry-writes or
 * --discard-writes-after-switch; the choice recorded. */
bool online_after_check (online_t *on, bson_error_t *err);
/* rollback, the originals back: carried back, or the results checked for
 * writes that came after the check. */
bool online_after_settle (online_t *on, bson_error_t *err);
/* rollback, before it drops the results: none holds writes after the
 * switch that no flag let go. */
bool online_after_before_drop (online_t *on, bson_error_t *err);

/* online_carry.c: rollback --carry-writes, through the plan's inverse
 * (embed, extract, rename). check: there is one, exact for the originals'
 * data (RM_ERR_UNSUPPORTED naming the step), the originals back under
 * their names (back) or under their backups'. carry: the results (under
 * their result names) into the originals (back under their own). */
bool online_carry_check (online_t *on, bool back, bson_error_t *err);
bool online_carry (online_t *on, bson_error_t *err);

/* online_finalize.c: the switch to the new design, and back. */
bool online_finalize (online_t *on, bson_error_t *err);
bool online_rollback (online_t *on, bson_error_t *err);

/* online_state.c: seconds as status shows them ("45s", "12m", "2h05m";
 * "-" for a negative s: none). */
void online_duration (char *buf, size_t cap, int64_t s);

/* online_progress.c: a pass's line on a terminal (NULL, and nothing
 * drawn, when stderr is none, --quiet or --log-format json): read of the
 * driving collection db.coll's count, the percentage, the rate since new
 * (seen0: read before) and an ETA. end: frees it; whether a line was
 * drawn (the pass's last line then clears it first). */
online_progress_t *online_progress_new (online_t *on, const char *db, const char *coll,
                                        int64_t seen0);
void online_progress_draw (online_progress_t *p, size_t step, const char *op, const char *ns,
                           int64_t seen, int64_t written);
bool online_progress_end (online_progress_t *p);
/* online_state.c: a collection's documents as the server counts them
 * from its metadata (estimatedDocumentCount, no scan); -1 when unknown. */
int64_t online_estimated (online_t *on, const char *db, const char *coll);

/* online_diffs.c: the _ids a verify finds differing, the first
 * ONLINE_DIFFS_SHOWN for its message, and with --differences (path) all of
 * them to that file, one Extended JSON _id a line, renamed into place by
 * close when commit (otherwise the file is left as it was). note: ns is
 * the plan's namespace of the document (a no-op while none is open). */
#define ONLINE_DIFFS_SHOWN 3
bool online_diffs_open (online_t *on, const char *path, bson_error_t *err);
void online_diff_note (online_t *on, const char *ns, const bson_iter_t *id);
void online_diffs_first (const online_t *on, char *buf, size_t cap);
bool online_diffs_close (online_t *on, bool commit, int64_t *written, bson_error_t *err);

#endif
