/* The state layer of remodel-online (shell-ext/state/): what lasts on
 * the server between two commands, in the state database: the plan's
 * record and checkpoints, the lease, the change log's point (capture) and
 * what the log holds since, the key map, the journal of made _ids. Below
 * it only the connection (online.h). */
#ifndef REMODEL_ONLINE_STATE_H
#define REMODEL_ONLINE_STATE_H

#include "online.h"

/* The join's key map (online_keys.c, below). */
typedef struct online_keys online_keys_t;

/* online_lease.c: one run of a plan at a time, fenced. Takes the lease
 * (a no-op when this process holds it already) and keeps it renewed from
 * a thread of its own until dropped. */
bool online_lease_take (online_t *on, bson_error_t *err);
/* The same rules for another key than the plan's (a partition's, id;
 * what names it in messages): *taken false, and true returned, while a
 * live holder has it; held in on->lease and on->epoch as the plan's is. */
bool online_lease_take_key (online_t *on, const char *id, const char *what, bool *taken,
                            bson_error_t *err);
/* Before every write: false once the lease is lost or not renewed in
 * time, so a run that lost it writes nothing more. */
bool online_lease_check (online_t *on, bson_error_t *err);
void online_lease_drop (online_t *on);
/* follow's: the renewals also look, every second, for finalize's request
 * for the lease in the plan's record, and stop the command's long phases
 * for it (online_stop_for_handover). */
void online_lease_watch_handover (online_t *on);
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
 * when released or not a string), epoch and expires (0 when missing).
 * A partition's lease (online_workers.c) follows the same rules. */
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
/* The holder's name of worker (from 1) of the process named process
 * ("host:pid:ms"), into buf: "host:pid:ms:wN", so that two workers of
 * one process are two holders and holder_dead still finds the process. */
void online_lease_worker (const char *process, int worker, char *buf, size_t cap);

/* online_state.c: the plan's record, checkpoints. */
bool online_plan_load (online_t *on, const online_opts_t *o, bson_error_t *err);
/* What the plan's record says. */
typedef struct {
    bool found;
    char digest[32];
    bool in_place, paused, finalized;
    bool unfused;           /* run --server-side began it: each step its own pass */
    char error[512];        /* the last run's error, "" when none */
    bool switching;         /* a switch's journal is there (online_switch.c) */
    char direction[16];     /* "finalize" or "rollback": who wrote it last */
    int64_t renamed, renames;
    int64_t rollback_left;  /* in place: documents the last rollback left */
    bool after_pending;     /* the results hold writes made after a switch (online_after.c) */
    int lookup_rules;       /* the $lookup rules the run joined by (online_conn.c's
                               on->run->lookup_rules), 0: not recorded */
    int64_t now_ms;         /* $$NOW of the plan's run (remodel/expr.h), 0: not recorded */
} online_record_t;
bool online_plan_read (online_t *on, online_record_t *r, bson_error_t *err);
/* online_record_parse.c: the fields of the plan's record doc into r
 * (found left false: the caller knows). */
void online_record_parse (const bson_t *doc, online_record_t *r);
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
/* A flag of the plan's record (keysMissing, handover): *set when true. */
bool online_plan_flag (online_t *on, const char *name, bool *set, bson_error_t *err);
bool online_plan_paused (online_t *on, bool *paused, bson_error_t *err);
/* Sleeps while the plan is paused, renewing the lease. */
bool online_wait_while_paused (online_t *on, bson_error_t *err);
/* The last run's error, for status (NULL: clears it); best effort, and
 * only while this run holds its lease. */
bool online_plan_note_error (online_t *on, const char *message);
/* Forgets the plan's record and checkpoints (rollback). */
bool online_plan_forget (online_t *on, bson_error_t *err);
/* run --keep-before's collection of the plan in the state database
 * ("kept_" and the plan's id: online_kept.c writes it, rollback
 * --carry-writes reads it), into buf; drop: gone, with the plan. */
void online_kept_name (const online_t *on, char *buf, size_t cap);
bool online_kept_drop (online_t *on, bson_error_t *err);
/* Where a checkpoint is kept: pass p of step s, and for a pass read in
 * partitions, partition k of n (online_part_read, _save). */
typedef struct {
    const rm_step_t *s;
    size_t p;
    uint32_t k, n;
} online_cp_where_t;

/* What a checkpoint counts: the pass (or partition) done, the documents it
 * read (seen) and wrote (changed). */
typedef struct {
    bool done;
    int64_t seen, changed;
} online_cp_tally_t;

/* The checkpoint at (its pass's own): its last _id copied into last as
 * "last" (nothing when none), t->done when finished. */
bool online_checkpoint_read (online_t *on, const online_cp_where_t *at, bson_t *last,
                             online_cp_tally_t *t, bson_error_t *err);
/* online_record_parse.c: a checkpoint document's fields ({"last": <_id>}
 * appended to last when it has one; done, seen, changed: false, 0 when
 * missing). */
void online_checkpoint_parse (const bson_t *doc, bson_t *last, online_cp_tally_t *t);
/* Written only by the lease holder (it renews the lease first). ns: the
 * namespace the pass reads. */
bool online_checkpoint_write (online_t *on, const online_cp_where_t *at, const rm_nsref_t *ns,
                              const char *coll, const bson_value_t *last,
                              const online_cp_tally_t *t, bson_error_t *err);
/* online_checkpoint_write, retried after transient errors (the lease
 * renewed each time); last: {"last": <_id>} or empty. */
bool online_fenced_upsert (online_t *on, const char *coll, const char *id, const bson_t *set,
                          const char *what, bson_error_t *err);
bool online_checkpoint_save (online_t *on, const online_cp_where_t *at, const rm_nsref_t *ns,
                             const char *coll, const bson_t *last, const online_cp_tally_t *t,
                             bson_error_t *err);
/* What the plan's passes read in all, by their checkpoints, and at what
 * rate (documents a second over the time they ran; 0: unknown). */
bool online_checkpoint_totals (online_t *on, int64_t *seen, int64_t *rate, bson_error_t *err);
/* A checkpoint's documents a second over the time its batches took
 * (busyMs; *busy gets it when not NULL); -1 when too short to measure. */
int64_t online_checkpoint_rate (const bson_t *doc, int64_t *busy);

/* online_life.c: one state machine of a plan's life, read from its
 * record (docs/HACKING.md draws it). state: where the plan stands (r: its
 * record; complete: every pass of its run done, by its checkpoints;
 * following: a follow holds its lease). FORGOTTEN is where rollback
 * leaves a plan (its record gone: it reads as NOT_RUN). COMMITTED and
 * FINISHING are --to-uri's, read from the pair's record (pair_state:
 * committed, finishing; else s as it is). allows: whether
 * what may begin in state s (ONLINE_LIFE_OK) or why not; after: the state
 * what leaves s in when it completes (s when refused); states: the states
 * what is allowed in, ONLINE_LIFE_BIT's. Pure: the tests call them. */
typedef enum {
    ONLINE_LIFE_NOT_RUN,
    ONLINE_LIFE_RUNNING,    /* a run begun, not every pass done */
    ONLINE_LIFE_COMPLETE,
    ONLINE_LIFE_FOLLOWING,  /* complete, a follow holding the lease */
    ONLINE_LIFE_SWITCHING,  /* a switch journaled, either way (finalize's or rollback's) */
    ONLINE_LIFE_FINALIZED,
    ONLINE_LIFE_ROLLING_BACK, /* the switch undone, the results holding writes made
                               * after it: rollback with a flag finishes */
    ONLINE_LIFE_FORGOTTEN,
    /* --to-uri, by the pair's record on the destination: */
    ONLINE_LIFE_COMMITTED,  /* committed there: the application writes the results */
    ONLINE_LIFE_FINISHING,  /* a finalize stopped in its drops of intermediates */
    ONLINE_LIFE_N
} online_life_t;
#define ONLINE_LIFE_BIT(s) (1u << (s))
/* What a command does to the plan (the command table's life column). */
typedef enum {
    ONLINE_DO_RUN,
    ONLINE_DO_VERIFY,
    ONLINE_DO_SYNC,
    ONLINE_DO_FOLLOW,
    ONLINE_DO_PREPARE,      /* finalize without --writes-stopped or --block-writes */
    ONLINE_DO_FINALIZE,
    ONLINE_DO_ROLLBACK,
    ONLINE_DO_STATUS,
    ONLINE_DO_CONTROL,      /* pause, resume, throttle, unthrottle, set */
    ONLINE_DO_N
} online_do_t;
typedef enum {
    ONLINE_LIFE_OK,
    ONLINE_LIFE_NOT_RUN_HERE,       /* no record: run first */
    ONLINE_LIFE_UNFINISHED,         /* the run has passes left */
    ONLINE_LIFE_INTERRUPTED,        /* a switch journaled: finalize or rollback it */
    ONLINE_LIFE_IS_FINALIZED,       /* the results are live: rollback first */
    ONLINE_LIFE_WRITES_AFTER,       /* the results hold writes after the switch */
    ONLINE_LIFE_FINALIZED_ALREADY,
    ONLINE_LIFE_UNDER_WAY,          /* a prepare while a switch is journaled */
    ONLINE_LIFE_COMMITTED_THERE,    /* --to-uri: the destination is the application's now */
    ONLINE_LIFE_FINISH_FIRST        /* --to-uri: only finalize completes the drops */
} online_life_why_t;
online_life_t online_life_state (const online_record_t *r, bool complete, bool following);
online_life_t online_life_pair_state (online_life_t s, bool committed, bool finishing);
online_life_why_t online_life_allows (online_life_t s, online_do_t what);
online_life_t online_life_after (online_life_t s, online_do_t what);
unsigned online_life_states (online_do_t what);
const char *online_life_name (online_life_t s);
/* The check a command makes once, at its top: the plan as it ran
 * (online_plan_check, where NOT_RUN is refused), its run finished where
 * what needs it (online_run_complete), then its state; each refusal with
 * the words it always had, into err. */
bool online_life_check (online_t *on, online_do_t what, bson_error_t *err);

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
    /* oplog: the settle window below the point (online_changes.c): the
     * entries after settle_t/settle_i up to the point that the read which
     * gave the point saw, their count and a sum of their ts mixed. None
     * (has_settle false): every entry up to the point is in the results
     * (a run's copy, a rescan). */
    bool has_settle;
    uint32_t settle_t, settle_i;
    int64_t settle_n, settle_sum;
} online_capture_t;

void online_capture_init (online_capture_t *c);
void online_capture_destroy (online_capture_t *c);
const char *online_capture_name (online_capture_mode_t m);
/* Which mode the server offers, and where its log stands when it says so
 * (a stream's postBatchResumeToken and operationTime, the oplog's last
 * ts): change streams on the plan's first source collection, else a capped
 * local.oplog.rs, else none. Only network errors fail. */
bool online_capture_detect (online_t *on, online_capture_t *c, bson_error_t *err);
/* The same, the oplog's last entry not asked (has_ts false): the read of
 * the oplog from the last point gives the next (online_changes_read_next),
 * where the last entry alone costs a whole read on some servers. */
bool online_capture_detect_mode (online_t *on, online_capture_t *c, bson_error_t *err);
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

/* online_complete.c: finalize, follow, sync: the plan's run finished
 * every pass of every step, by its checkpoints; otherwise refused
 * (RM_ERR_USAGE), naming what is left and `remodel online run PLAN`. */
bool online_run_complete (online_t *on, bson_error_t *err);

/* online_state.c: seconds as status shows them ("45s", "12m", "2h05m";
 * "-" for a negative s: none). */
void online_duration (char *buf, size_t cap, int64_t s);

/* online_state.c: a collection's documents as the server counts them
 * from its metadata (no scan); -1 when unknown. _of: of c, why set when
 * -1 (may be NULL). */
int64_t online_estimated (online_t *on, const char *db, const char *coll);
int64_t online_estimated_of (online_t *on, mongoc_collection_t *c, bson_error_t *why);
/* online_state.c: c's bytes from its metadata (collStats' size: the
 * documents' BSON on mongo-java-server, the storage's on FerretDB), -1
 * when unknown; its count in *count (-1: unknown). */
int64_t online_bytes_of (online_t *on, mongoc_collection_t *c, int64_t *count);

/* online_changes.c: what the change log shows written since a point.
 * The _ids of one namespace that changed: each once, in the order first
 * seen, as one-field documents {"": <_id>} one after another in bytes.
 * These lists and online_changes_t's functions below: online_idlist.c. */
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

/* DDL remodel made itself: finalize's renames (from to to, "db.coll"
 * each) and its drops of intermediate results (to ""). An event or entry
 * naming exactly one of these is no rescan (online_change_event.c). */
typedef struct {
    char from[300], to[300];
} online_ddl_t;

typedef struct online_changes_s {
    online_idlist_t *lists;
    size_t n, cap;
    int64_t events;         /* read from the log */
    int64_t log_entries;    /* entries the oplog reads returned, every namespace's */
    int64_t kept;           /* _ids in all lists */
    char rescan[300];       /* not "": why only a full rescan will do */
    uint32_t oldest;        /* the earliest event's time in the log, seconds since the
                               epoch by the server's clock (0: none known), for status */
    const online_ddl_t *own; /* the caller's (NULL: none), n_own of them */
    size_t n_own;
    const char **nss;       /* the caller's: the namespaces whose changes are
                             * kept, nns of them (their databases' commands too) */
    size_t nns;
    bool own_last;          /* the stream's last event was one of them */
    size_t own_anon;        /* drops naming no collection taken for own's
                             * in this stream (mongo-java-server's drop
                             * events name none: as many are taken as own
                             * holds drops) */
    bool last_known;        /* the last event read had a clusterTime: last_t, last_i */
    uint32_t last_t, last_i;
    bool anon_check;        /* the caller tells drops naming no collection by the
                             * sources' identities: counted in anon_drops, not a
                             * rescan */
    int64_t anon_drops;
    bson_t *reopen;         /* an invalidate after one of them: the stream is
                             * opened again after this token (MongoDB
                             * invalidates a stream on a renamed collection) */
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

/* online_change_event.c: what the log's entries say. batch: the events
 * under cursor.<batch> of a change stream's reply (aggregate or getMore),
 * read from ns's stream, into ch (each insert, update, replace and delete
 * its _id, anything else a rescan), *id the cursor's id (0: closed), *at
 * the cluster time of its postBatchResumeToken, where it has one. behind:
 * the stream has not given everything up to to yet (a replica set gives
 * only majority-committed events). entry: one oplog entry into ch, nss the
 * namespaces read (a drop, rename or collMod of one is a rescan, but for
 * ch->own's). */
typedef struct {
    bool known;
    uint32_t t, i;
} online_stream_at_t;
void online_stream_batch (online_changes_t *ch, const char *ns, const bson_t *reply,
                          const char *batch, int64_t *id, online_stream_at_t *at);
bool online_stream_behind (const online_stream_at_t *at, const online_capture_t *to);
void online_oplog_entry (online_changes_t *ch, const bson_t *e);

/* Reads the log from point `from` on (up to `to`, where the mode can bound
 * it; a stream is read until it is quiet: events after `to` are only read
 * twice) into ch: every insert, update, replace and delete of ch->nss. A
 * drop or rename of one of them sets ch->rescan. */
bool online_changes_read (online_t *on, const online_capture_t *from, const online_capture_t *to,
                          online_changes_t *ch, bson_error_t *err);
/* online_changes_read, where `to` is then saved as the next point (a
 * --to-uri copy step): in oplog mode `to` gets the settle window below it
 * that online_changes_read_next gives its point (online_changes.c). */
bool online_changes_read_to (online_t *on, const online_capture_t *from, online_capture_t *to,
                             online_changes_t *ch, bson_error_t *err);
/* The next point into next, and, in oplog mode, what the log holds from
 * `from` up to it, in one read (*read true): every entry after `from`, of
 * every namespace, its last one's ts the next point (from's where there is
 * none), those of ch->nss kept into ch. A server that filters ts after
 * reading every entry (FerretDB) reads the oplog whole for any range, so
 * one read a sync, not one for the last entry and one for the range.
 * Other modes: online_capture_start (*read false: online_changes_read
 * follows). */
bool online_changes_read_next (online_t *on, const online_capture_t *from, online_capture_t *next,
                               online_changes_t *ch, bool *read, bson_error_t *err);

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

/* online_partition.c: a driving collection's partitions, _id ranges
 * of MongoDB's order across types that together hold every _id once,
 * from a sample of its _ids. compute: into parts (an array being built),
 * each {group: the $type alias of its bracket, lo: absent, {after: v} or
 * {from: alias}, hi: absent, {upto: v} or {below: alias}}: one for a
 * small collection (total at most small) or want below 2, else about
 * want (at least one per bracket present, fewer when the sample holds
 * too few distinct values), each of at least small documents. holds:
 * whether id is in part, by the server's comparison: what a reader
 * keeps of what filter (appended: the server's side of part's range)
 * returns. */
typedef struct {
    const bson_t *sample;      /* the sampled _ids: its fields' values */
    const bson_t *type_counts; /* {"int": n, "string": n...} ($type of _id), NULL: the sample's */
    int64_t total;             /* the collection's documents */
    int64_t small;             /* a partition's fewest documents (0: no floor) */
    int want;                  /* --partitions */
} online_partition_in_t;
bool online_partition_compute (const online_partition_in_t *in, bson_t *parts, bson_error_t *err);
bool online_partition_holds (const bson_t *part, const bson_iter_t *id);
bool online_partition_filter (const bson_t *part, bson_t *filter, bson_error_t *err);
/* online_partition_sample.c: c's estimated count into *total and the
 * sample of its _ids to partition it into want (into sample, reset;
 * empty for want below 2 or a collection too small to sample): at random
 * by $sample, or, where the server has none or it failed (why in
 * no_sample), one _id in so many of every _id in natural order. */
bool online_partition_sample (online_t *on, mongoc_collection_t *c, int want, bson_t *sample,
                              int64_t *total, char *no_sample, size_t cap, bson_error_t *err);
/* The same from a count the caller read already (total), not read again. */
bool online_partition_sample_of (online_t *on, mongoc_collection_t *c, int want, int64_t total,
                                 bson_t *sample, char *no_sample, size_t cap, bson_error_t *err);
/* online_partition_state.c: a run's partitions of pass p of step s.
 * get: the bounds the plan's record keeps for it into parts (reset; an
 * array of online_partition_compute's), or, the first time the run
 * reaches the pass, computed from a sample of c (--partitions of them;
 * by default about one a million documents; one with one) and recorded,
 * never recomputed while the plan's run lasts; without may_record (a run
 * that joined, holding no plan lease), parts is left empty until the
 * run that holds it recorded them. count: how many. A pass
 * of more than one keeps a checkpoint per partition k (of n), its _id
 * after "last", fenced by the lease's epoch: read and save as the pass's
 * own (online_checkpoint_read, _save). online_forget.c's forget:
 * every partition's checkpoint of the plan (--restart, rollback; the
 * bounds go with the record). list: status's table of the partitions of each pass split in
 * more than one: each one's state (done; running, or stopped when
 * running is false and it is not done; pending: not begun), documents
 * read and written, range and the worker that last wrote its checkpoint;
 * the rows printed (0: no pass split), -1 on error. */
bool online_parts_get (online_t *on, const online_cp_where_t *at, mongoc_collection_t *c, bool one,
                       bool may_record, bson_t *parts, bson_error_t *err);
uint32_t online_parts_count (const bson_t *parts);
/* The _id of partition k's checkpoint, which its lease has too. */
void online_part_key (online_t *on, const rm_step_t *s, size_t p, uint32_t k, char *buf, size_t cap);
bool online_part_read (online_t *on, const online_cp_where_t *at, bson_t *last,
                       online_cp_tally_t *t, bson_error_t *err);
bool online_part_save (online_t *on, const online_cp_where_t *at, const rm_nsref_t *ns,
                       const bson_t *last, const online_cp_tally_t *t, bson_error_t *err);
bool online_parts_forget (online_t *on, bson_error_t *err);
int online_parts_list (online_t *on, bool running, bson_error_t *err);

/* online_throttle.c, online_throttle_rule.c: the throttle on the server's
 * health and the controls of a running run (docs/online.md). The lag a
 * replSetGetStatus reply shows: the majority's (the primary's last
 * applied wall time minus the last committed; -1 when the reply has no
 * optimes), the most lagging secondary's optimeDate behind the primary's
 * (-1: none), arbiters left out, members down or not secondaries counted
 * apart. parse: false when the reply is no replica set's. */
typedef struct {
    char primary[128], member[128]; /* member: the most lagging one */
    int64_t majority_ms, member_ms;
    int secondaries, not_counted;
} online_rslag_t;
bool online_rslag_parse (const bson_t *reply, online_rslag_t *l);
/* The larger of the two lags (-1: neither known). */
int64_t online_rslag_worst (const online_rslag_t *l);
/* serverStatus's flowControl.isLagged; *has: the reply has it. */
bool online_flow_lagged (const bson_t *server_status, bool *has);
/* Whether a run waits at lag_ms under --max-lag max_lag_ms, throttled:
 * it waits already (it goes on only under half the limit). */
bool online_throttle_over (int64_t lag_ms, int64_t max_lag_ms, bool throttled);
/* --max-latency: the next batch's size after one of size documents that
 * took ms (half over max_ms, back towards base by an eighth under half). */
int64_t online_throttle_size (int64_t size, int64_t base, int64_t ms, int64_t max_ms);

/* The one call before each batch of a pass (n, ms: the last batch's
 * documents and time; both 0 before a pass's first, n -1 after an error
 * retried): its state in on->throttle; --max-latency sizes
 * *batch_size, --max-rate waits, pause waits, then, while the plan's record
 * says so (remodel online throttle, the replication lag one worker reads
 * for all over --max-lag, flow control lagged), it waits, saying when and
 * why, renewing the lease; `set`'s values are taken here. */
bool online_throttle_wait (online_t *on, int64_t n, int64_t ms, int64_t *batch_size,
                           bson_error_t *err);
/* remodel online throttle, unthrottle (on: true, false) and set (the
 * options o was given), into the plan's record. */
bool online_throttle_manual (online_t *on, bool on_, bson_error_t *err);
bool online_throttle_set (online_t *on, const online_opts_t *o, bson_error_t *err);
/* The throttle as the record says it, for status: *state "throttled",
 * "running" or "" (none recorded), reason, since (ms since the epoch, 0),
 * the lag last read (-1: none) and its note ("not available: ..."). */
void online_throttle_read (const bson_t *record, char *state, size_t scap, char *reason,
                           size_t rcap, int64_t *since, int64_t *lag_ms, char *note, size_t ncap);

/* online_pair_record.c (--to-uri): the plan's pair of deployments in the
 * destination's state database (pairs). record: checked against the one
 * recorded (a refusal naming both, RM_ERR_USAGE); none recorded, written
 * when begin (a run that writes), else passed. note: fields $set in it;
 * read: it, into doc (initialized; *found false when none). */
bool online_pair_record (online_t *on, bool begin, bson_error_t *err);
bool online_pair_note (online_t *on, const bson_t *set, bson_error_t *err);
bool online_pair_read (online_t *on, bson_t *doc, bool *found, bson_error_t *err);

#endif
