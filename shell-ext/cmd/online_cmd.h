/* The command layer of remodel-online (shell-ext/cmd/): run, verify and
 * sync, --server-side, follow, status, finalize with its switch and the
 * writes after it, rollback, and main. The only layer that takes and
 * releases the lease for a command and picks the exit status; it sees
 * every layer below. */
#ifndef REMODEL_ONLINE_CMD_H
#define REMODEL_ONLINE_CMD_H

#include "online_changes.h"
#include "remodel/cli.h"
#include "online_identity.h"

/* online_commands.c: the commands as a table, which main dispatches by
 * (docs/HACKING.md). A row: the command's name; its function (the exit
 * status it returns, err set for main to print: 0, 1); its transition in
 * the plan's life (online_life.c: the states it begins in), checked once
 * at its top; whether it holds the plan's lease, takes --dry-run, stops
 * cleanly on SIGINT and SIGTERM (signal handlers installed), takes the
 * mode the plan's run recorded (online_plan_mode), and the flags it sets
 * in online_opts_t (switching, starts); on_stop: what its stopped line
 * tells to do next; said: its line once done (pause, resume, throttle,
 * unthrottle, set). */
typedef struct online_cmd online_cmd_t;
struct online_cmd {
    const char *name;
    int (*fn) (online_t *on, const online_cmd_t *c, bson_error_t *err);
    online_do_t life;
    bool lease, dry_run, signals, mode, switching, starts;
    const char *on_stop;
    const char *said;
};
/* The row named name; NULL when none. */
const online_cmd_t *online_cmd_find (const char *name);

/* online_status.c: remodel online status. The rows it printed, -1. */
int online_status (online_t *on, bson_error_t *err);
/* online_status_json.c: status --json (0, -1); its partitions, from the
 * checkpoints (one a pass today): appended to arr, *step the first step
 * not done (0: none), *rate the running ones' documents a second; and
 * status's throttle line (alive: a run holds the lease). */
int online_status_json (online_t *on, bson_error_t *err);
bool online_status_partitions (online_t *on, const online_record_t *r, const char *holder,
                               bool alive, bson_t *arr, int64_t *step, int64_t *rate,
                               bson_error_t *err);
void online_status_throttle (online_t *on, bool alive);

/* online_index_copy.c: what the switch carries over. Each result that
 * replaces a source collection gets its indexes as the plan maps them
 * (remodel/indexes.h; every option kept), and its
 * validator unless that rejects a document of the new design; an index
 * the new design cannot keep, and a unique one the results violate, are
 * named and not made. At the end of run and sync, at follow's first
 * round; finalize (before it blocks the writes): refused while a unique
 * index would be violated. */
bool online_index_copy (online_t *on, bool finalize, bson_error_t *err);
/* status: the results' indexes the last of those made or found, a line
 * each (nothing when none is recorded). */
void online_index_copy_status (online_t *on);
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
/* online_workers.c: a pass's partitions (parts, online_partition_
 * state.c) read by n workers, threads each on its own connection (a copy
 * of on), each taking a partition not done that no live holder has under
 * the partition's own lease, until every partition is done, whoever read
 * it (workers of another process, run --join, too). ops: open makes a
 * worker's reader of the pass on its connection (NULL, err: failed), run
 * reads partition k from its checkpoint to its end, close frees the
 * reader. *taken: the partitions this process's workers read. False
 * with the first worker's error (its lease lost, the server), the other
 * workers stopped at their next partition. */
typedef struct {
    void *(*open) (online_t *worker, void *ctx, bson_error_t *err);
    bool (*run) (void *reader, uint32_t k, const bson_t *part, bson_error_t *err);
    void (*close) (void *reader);
    void *ctx;
} online_worker_ops_t;
bool online_workers_pass (online_t *on, const rm_step_t *s, size_t pi, const bson_t *parts, int n,
                          const online_worker_ops_t *ops, int64_t *taken, bson_error_t *err);
/* verify and sync's rescan of a pass by n workers, each on its own
 * connection (a copy of on, the plan's lease shared: checked, never
 * dropped), taking the partitions (the run's) one at a time from a
 * counter of this process, each once; ops->run reads partition k whole.
 * False with the first worker's error, the others stopped at their next
 * partition, or once SIGINT or SIGTERM stopped the rescan. */
bool online_workers_rescan (online_t *on, const bson_t *parts, int n, const online_worker_ops_t *ops,
                            bson_error_t *err);
/* online_preflight.c: before a run writes anything, every namespace the
 * plan reads is on the server and every field a step names is in some
 * document of its namespace (refused as `remodel run` refuses them). */
bool online_preflight (online_t *on, bson_error_t *err);

/* online_switch.c: the journaled switch (renames) between the designs.
 * forward: finalize's renames, begun or completed, then the plan marked
 * finalized and the intermediate results dropped; *n_switched the
 * namespaces switched; mark: fields $set with its journal, before its
 * first rename (finalize's afterSwitch, online_after.c). back: rollback's, from any point of a switch or
 * after it; *undone false when nothing was switched (no backup is there
 * either: the results may go); unsettled: a switch back stopped before it
 * settled (online_after_unsettled), finished, not taken for nothing
 * switched. */
bool online_switch_forward (online_t *on, const bson_t *mark, size_t *n_switched,
                            bson_error_t *err);
bool online_switch_back (online_t *on, bool unsettled, bool *undone, bson_error_t *err);
/* finalize, before the writes stop: the server renames to names of the
 * switch's shapes (a probe collection named like each backup, in the
 * state database, where no read of the sources' change log sees it:
 * created, renamed, dropped); *rename_ms the slowest of those renames,
 * *renames how many the switch will make, for the window's estimate. */
bool online_switch_probe (online_t *on, int64_t *rename_ms, size_t *renames, bson_error_t *err);
/* online_cutover.c: the cut-over's budget. Its figures (ms; drain_ms -1:
 * not measured), from the plan's record (fresh: measured within the last
 * half hour). prepare: finalize with the writes running (a sync, a
 * sample verify unless ahead, the indexes, the probe, a point), the
 * figures recorded and said. switch_ms: the renames and confirmation;
 * total: with the drain. phase: a line as a phase of est_ms starts, when
 * it is 2 s or more. fits: false (RM_ERR_WINDOW, nothing switched: say so,
 * and what to run) when the window begun at t0 (online_mono_ms), with
 * left_ms still to come, would pass --max-window; done names what the
 * time went on. */
typedef struct {
    int64_t at;             /* ms since the epoch; 0: never measured */
    int64_t drain_ms, rename_ms, renames, point_ms;
    int64_t verify_ms;      /* the verify in the window (0: none, verified ahead) */
    bool verify_all;        /* of every result (no log, --full-verify), not a sample */
    bool fresh;
} online_cutover_t;
bool online_cutover_read (online_t *on, online_cutover_t *c, bson_error_t *err);
bool online_cutover_prepare (online_t *on, bool follows, bool ahead, bson_error_t *err);
int64_t online_cutover_switch_ms (const online_cutover_t *c);
int64_t online_cutover_total (const online_cutover_t *c);
void online_cutover_describe (const online_cutover_t *c, char *buf, size_t cap);
void online_cutover_phase (online_t *on, const char *what, int64_t est_ms);
bool online_cutover_fits (online_t *on, const online_cutover_t *c, int64_t t0, int64_t left_ms,
                          const char *done, bson_error_t *err);
bool online_switch_rename (online_t *on, const char *db, const char *from, const char *to,
                           bson_error_t *err);
bool online_switch_note (online_t *on, const bson_t *update, bson_error_t *err);

bool online_coll_exists (online_t *on, const char *db, const char *coll, bool *yes,
                         bson_error_t *err);
bool online_coll_drop (online_t *on, const char *db, const char *coll, bson_error_t *err);
/* online_switch_state.c: one move's state machine, decided apart from
 * the server. state: where a move stands by which of its collections
 * exist (COLL, RESULT, BACKUP; original: COLL had a collection before
 * the switch); RACED is half-way with COLL made again by the
 * application's writes (online_raced.c); NONE is no state the switch
 * leaves. done: the renames of the move in place at. next: the rename
 * that moves it one step forward (back: backward), *at then its state;
 * NONE when it is at its end. */
typedef enum {
    ONLINE_AT_BEFORE,
    ONLINE_AT_HALF,
    ONLINE_AT_AFTER,
    ONLINE_AT_RACED,
    ONLINE_AT_NONE
} online_switch_at_t;
typedef enum {
    ONLINE_RENAME_NONE,
    ONLINE_RENAME_COLL_TO_BACKUP,   /* forward: the original kept aside */
    ONLINE_RENAME_RESULT_TO_COLL,   /* forward: the result in its place */
    ONLINE_RENAME_COLL_TO_RESULT,   /* back: the result out of the way */
    ONLINE_RENAME_BACKUP_TO_COLL,   /* back: the original in its place */
    ONLINE_RENAME_RACED_ASIDE       /* either way: the made-again COLL aside */
} online_switch_step_t;
online_switch_at_t online_switch_state (bool original, bool coll, bool result, bool backup);
int64_t online_switch_done (bool original, online_switch_at_t at);
online_switch_step_t online_switch_next (bool original, bool back, online_switch_at_t *at);

/* online_raced.c: a switch the application's writes race. name: the
 * Nth name a namespace's collection made again by a write between its
 * two renames is renamed aside to (COLL_remodel_ID_raced_N, by
 * online_switch.c); check (finalize, after its switch): fails naming such
 * collections, whose writes the results lack; carry (rollback, once the
 * originals are back): their documents inserted into the originals, each
 * collection dropped once empty. */
void online_raced_name (online_t *on, const char *coll, int n, char *buf, size_t cap);
bool online_raced_check (online_t *on, bson_error_t *err);
bool online_raced_carry (online_t *on, bson_error_t *err);

/* online_server.c: remodel online run --server-side, the plan compiled
 * (remodel/compile.h): whether the server has every stage c uses (a clear
 * refusal naming the one it lacks; its version: online_server_version),
 * and one step's pass run range by range. */
bool online_server_check (online_t *on, const rm_compile_plan_t *c, bson_error_t *err);
/* Whether the step's pipelines are exact for the data (its guard finds
 * nothing); *exact false: it runs client-side (said on stderr). */
bool online_server_exact (online_t *on, const rm_compile_step_t *st, bool *exact,
                          bson_error_t *err);
bool online_server_pass (online_t *on, const rm_compile_step_t *st, const rm_compile_pass_t *cp,
                         bson_error_t *err);

/* online_follow_cmd.c: remodel online follow: syncs from the log in
 * rounds until a signal or finalize stops it, its transition (life)
 * checked first; every server call retried for --retry-for. 0, -1. */
int online_follow (online_t *on, online_do_t life, bson_error_t *err);

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

/* online_after.c: the application's writes to the switched-in collections
 * after the switch, which rollback must not lose. Each namespace the plan
 * switched: its collection, its result's and backup's names, and its
 * count and digest (online_coll_sum): at the switch without a change log,
 * at rollback's check with one (summed says there are some); written: the
 * documents written since (-1: changed, how many unknown; -2: nothing
 * recorded to tell by; -3: the change log's history since the switch is
 * lost). */
#define ONLINE_AFTER_MAX 64
typedef struct {
    char ns[300], db[128], coll[256], result[400], backup[400];
    int64_t docs;
    uint64_t sum;
    int64_t written;
    /* Not switched in at rollback's check: a finalize stopped before its
     * result took COLL's place (COLL the original still, or neither):
     * nothing after the switch went there, and the application's own
     * writes to the original stay as they are. */
    bool unswitched;
} online_after_coll_t;
typedef struct {
    online_after_coll_t c[ONLINE_AFTER_MAX];
    size_t n;
    char drops[ONLINE_AFTER_MAX][300]; /* the intermediate results finalize
                                        * drops, "db.coll" */
    size_t n_drops;
    bool found;             /* the plan's record has afterSwitch */
    bool has_point;         /* and the change log's point at the switch */
    bool summed;            /* c[].docs and c[].sum were taken */
    online_capture_t point;
    char decided[16];       /* rollback's choice: "none", "carry", "discard" */
    bool pending;           /* writes after the switch left in the results */
} online_after_t;
/* online_switch.c, for rollback of a switch finalize did not finish: each
 * of a's namespaces whose move the server shows done (its result under
 * COLL) switched in, the others unswitched. */
bool online_switch_in (online_t *on, online_after_t *a, bson_error_t *err);
/* A collection's count and the sum of its documents' CRC-64s. */
bool online_coll_sum (online_t *on, const char *db, const char *coll, int64_t *docs, uint64_t *sum,
                      bson_error_t *err);
/* The namespaces the plan switches (no digest), into a. */
bool online_after_plan (online_t *on, online_after_t *a, bson_error_t *err);
/* finalize, before its first rename, writes still stopped: the record
 * into a (follows: the change log's point, else the results' digests
 * under their result names), written with the switch's journal
 * (append: a's afterSwitch into a $set document). destroy: a's point. */
bool online_after_mark (online_t *on, bool follows, online_after_t *a, bson_error_t *err);
void online_after_append (const online_after_t *a, bson_t *set);
void online_after_destroy (online_after_t *a);
/* The switch's own DDL in the change log, into own (at most cap; the
 * count returned): each namespace's renames (COLL to its backup, its
 * result to COLL) and the intermediates' drops. */
size_t online_after_own (const online_after_t *a, online_ddl_t *own, size_t cap);
/* What was recorded for the switch goes (carried back, or nothing
 * written after it). */
bool online_after_forget (online_t *on, bson_error_t *err);
/* rollback, before any rename, of a finalized plan (finalized) or of a
 * switch finalize did not finish (its namespaces switched in already, as
 * the server shows them, checked; the others not): refused (RM_ERR_USAGE)
 * when written since, without --carry-writes or
 * --discard-writes-after-switch; the choice recorded. switching: a switch
 * is journaled (a rollback begun keeps its choice). */
bool online_after_check (online_t *on, bool finalized, bool switching, bson_error_t *err);
/* rollback, the originals back: carried back, or the results checked for
 * writes that came after the check. */
bool online_after_settle (online_t *on, bson_error_t *err);
/* rollback, before it drops the results: none holds writes after the
 * switch that no flag let go. */
bool online_after_before_drop (online_t *on, bson_error_t *err);
/* rollback, of a plan neither finalized nor switching: whether a rollback
 * put the originals back and stopped before it settled (its record's
 * afterSwitch still there, not pending). */
bool online_after_unsettled (online_t *on, bool *unsettled, bson_error_t *err);

/* online_carry.c: rollback --carry-writes, through the plan's inverse
 * (embed, extract, rename). check: there is one, exact for the originals'
 * data (RM_ERR_UNSUPPORTED naming the step), the originals back under
 * their names (back) or under their backups'. carry: the results (under
 * their result names) into the originals (back under their own). */
bool online_carry_check (online_t *on, bool back, bson_error_t *err);
/* rollback's refusal, offering --carry-writes only where this plan's
 * inverse will carry: works (the offer's words) into buf, or, why not
 * said on a line of its own, "--carry-writes cannot ... (said above)". */
void online_carry_offer (online_t *on, bool back, const char *works, char *buf, size_t cap);
/* rec: the record's afterSwitch (its namespaces not switched in are
 * compared, not written: a difference there refused, named). */
bool online_carry (online_t *on, const online_after_t *rec, bson_error_t *err);
/* online_carry_kept.c: the inverses of a set and a delete that run
 * --keep-before kept (online_kept_step), each document they make given
 * to put, as the carry gives the engine's. set: docs, a batch of the
 * set's namespace as it is now, each restored (online_carry_restore; one
 * without an entry is the application's since).
 * dropped: every document delete s kept whose original is still in
 * originals and whose _id seen says the results do not hold, batch at
 * a time. */
typedef bool (*online_carry_put_fn) (void *ctx, const char *ns, const uint8_t *doc, uint32_t len,
                                     bson_error_t *err);
typedef bool (*online_carry_seen_fn) (void *ctx, const char *ns, const uint8_t *doc,
                                      uint32_t len);
bool online_carry_kept_set (online_t *on, const rm_step_t *s, const online_docs_t *docs,
                            online_carry_put_fn put, void *ctx, bson_error_t *err);
bool online_carry_kept_dropped (online_t *on, const rm_step_t *s, mongoc_collection_t *originals,
                                size_t batch, online_carry_seen_fn seen, online_carry_put_fn put,
                                void *ctx, bson_error_t *err);

/* online_finalize.c: the switch to the new design, and back. */
bool online_finalize (online_t *on, bson_error_t *err);
/* The plan's lease for a finalize, handed over by a `follow` that holds
 * it (asked in the plan's record, waited for up to a minute). */
bool online_finalize_lease (online_t *on, bson_error_t *err);
bool online_rollback (online_t *on, bson_error_t *err);
/* online_validators.c: what finalize does after the switch, and again on
 * a finalized plan: the joins' indexes remodel made dropped from the new
 * design's collections; with --validators, the plan's validators given
 * (collMod), the collections' earlier options kept in the plan's record.
 * It takes and drops the lease. probe: whether the server keeps a
 * validator (a scratch collection of the state database), RM_ERR_UNSUPPORTED
 * when not, before anything of the plan is done. remove: the kept options
 * given back, under the rollback's lease, once its checks passed and
 * before it switches anything (nothing when none were given). */
bool online_finalize_after (online_t *on, bson_error_t *err);
bool online_validators_probe (online_t *on, bson_error_t *err);
bool online_validators_remove (online_t *on, bson_error_t *err);

/* online_lag.c: status's lag line for a plan following a log, with
 * events (ch, read after the recorded point) not yet applied: how old the
 * oldest is, and when follow will have caught up at the rate its rounds
 * applied events (rec: the plan's record). */
void online_lag_line (online_t *on, const bson_t *rec, const online_changes_t *ch);
/* How old the oldest event of ch is, in ms, by the source's clock (with
 * --to-uri the source's); *at_most where the log gives no time: the time
 * since the point was taken. status --json's toUri.lagMs is this too. */
bool online_lag_age (online_t *on, const bson_t *rec, const online_changes_t *ch, int64_t *ms,
                     bool *at_most, bson_error_t *err);

/* online_dest.c, online_dest_copy.c, online_dest_finalize.c (--to-uri):
 * from one deployment to another. opts: --drop, --nsInclude, --nsExclude
 * into o (refused without --to-uri). check: at every command's start, the
 * pair recorded or checked (online_pair_record); a run that begins the
 * plan refuses first a destination holding a namespace it would write
 * (--drop: dropped). finals: the namespaces the plan writes, and those it
 * copies as they are (listCollections documents with "db"). run: the
 * steps, then those copies (the exit status). copy_all: the copies not
 * noted done (again: every one, taken anew). finalize: the cut-over. */
bool online_dest_opts (const rm_cli_value_t *v, online_opts_t *o, bson_error_t *err);
/* online_config.c: --config FILE's uri and toUri into o (o->config_*,
 * uri and to_uri pointing at them); a key given twice, on the command
 * line too, unknown, or a line that is no "key: value" is refused,
 * naming the file and line (RM_ERR_USAGE). */
bool online_config_read (const char *path, online_opts_t *o, bson_error_t *err);
/* The same over a file's text (name: the file, for messages; the fuzz
 * harness's entry). */
bool online_config_parse (const char *name, const char *text, size_t len, online_opts_t *o,
                          bson_error_t *err);
/* --to-uri: the checks every command makes (online_main.c's begin): the
 * pair recorded, what the command (what: its life column) may do in the
 * pair's state, and for a run that begins, the namespaces claimed. */
bool online_dest_check (online_t *on, online_do_t what, bool starts, bson_error_t *err);
/* When the plan was committed on the destination, into at ("": not). */
bool online_dest_committed (online_t *on, char *at, size_t cap, bson_error_t *err);
bool online_dest_finals (online_t *on, online_after_t *finals, bson_t *copies, int *n,
                         bson_error_t *err);
int online_dest_run (online_t *on, bson_error_t *err);
bool online_dest_copy_all (online_t *on, const bson_t *copies, bool again, int *copied,
                          int64_t *docs, bson_error_t *err);
/* db.name dropped on the destination; none there is done too (a drop
 * whose reply was lost, an earlier command cut after it); what names the
 * drop in an error. */
bool online_dest_drop (online_t *on, const char *db, const char *name, const char *what,
                       bson_error_t *err);
bool online_dest_finalize (online_t *on, bson_error_t *err);
/* online_dest_copy.c: the documents of src that filter selects (opts: the
 * find's) written into dst, replaced by _id with upsert, in batches of the
 * destination's size; *docs counts them. */
bool online_dest_copy_where (online_t *on, mongoc_collection_t *src, mongoc_collection_t *dst,
                             const bson_t *filter, const bson_t *opts, int64_t *docs,
                             bson_error_t *err);
/* online_dest_copy_step.c: the copied namespaces kept in step by the
 * source's change log. mark: a point noted before the run's first copy
 * (a resumed run keeps it). step: the copies not made yet made, then the
 * documents the log shows written to any copy since the noted point
 * written again as the source holds them, the point moved on; where the
 * log cannot tell (st->whole says why), every copy taken again whole.
 * said: what a step did, in words. */
typedef struct {
    int copied;             /* namespaces copied whole */
    int64_t docs;           /* their documents */
    int64_t events, rewritten;
    char whole[300];
} online_copy_step_t;
bool online_dest_copy_mark (online_t *on, bson_error_t *err);
bool online_dest_copy_step (online_t *on, const bson_t *copies, online_copy_step_t *st,
                            bson_error_t *err);
void online_dest_copy_said (const online_copy_step_t *st, char *buf, size_t cap);
/* online_dest_cutover.c: finalize --to-uri's window. prepare: finalize
 * without --writes-stopped (each phase timed with the writes running, the
 * figures in the pair's record, the estimate said). est_read: those
 * figures (fresh: from the last half hour); after_drain, after_copy: what
 * is still to come then; fits: false (RM_ERR_WINDOW, nothing committed,
 * said) when the window begun at t0 with left_ms to come passes
 * --max-window, done naming what the time went on. */
typedef struct {
    int64_t at;             /* ms since the epoch; 0: never prepared */
    int64_t drain_ms, verify_ms, copy_ms, confirm_ms, record_ms;
    bool fresh;
} online_dest_est_t;
bool online_dest_prepare (online_t *on, bson_error_t *err);
bool online_dest_est_read (online_t *on, online_dest_est_t *e, bson_error_t *err);
int64_t online_dest_est_total (const online_dest_est_t *e);
int64_t online_dest_est_after_drain (const online_dest_est_t *e);
int64_t online_dest_est_after_copy (const online_dest_est_t *e);
void online_dest_est_describe (const online_dest_est_t *e, bool full, char *buf, size_t cap);
bool online_dest_fits (online_t *on, int64_t t0, int64_t left_ms, const char *done,
                       bson_error_t *err);
/* rollback before the commit, its results dropped, under its lease and
 * before the plan is forgotten (online_rollback): the namespaces the run
 * copied as they are dropped too (the run claimed each: the destination
 * held none, or --drop dropped it), and the pair's record, so that the
 * destination is as it was and a run can begin again. */
bool online_dest_forget (online_t *on, bson_error_t *err);
/* online_dest_status.c: verify's outcome (differ results) in the pair's
 * record; status --json's toUri and canCommit, appended to out. */
bool online_dest_verified (online_t *on, int64_t differ, bson_error_t *err);
void online_dest_status (online_t *on, bson_t *out);
/* online_dest_log.c: the destination's change log, read as the one
 * deployment's. take: its point now (write: a sentinel where a stream
 * gives no token; else only asked), for finalize's commit; load: the
 * pair's record's destPoint into c (false: none); changes: what the log
 * shows written to the namespaces nss since from (ch->rescan: it cannot
 * tell, said why). */
bool online_dest_point_take (online_t *on, bool write, online_capture_t *c, bson_error_t *err);
bool online_dest_point_load (const bson_t *rec, online_capture_t *c);
bool online_dest_changes (online_t *on, const online_capture_t *from, const char **nss,
                          size_t nns, online_changes_t *ch, bson_error_t *err);
/* online_dest_copy_back.c: a namespace the run copied as it is (ns): the
 * documents ch shows written on the destination since the commit given
 * back to the source as the destination holds them (*put), or deleted
 * there (*gone); count: only counted (a dry run). */
bool online_dest_copy_back (online_t *on, online_changes_t *ch, const char *ns, bool count,
                            int64_t *put, int64_t *gone, bson_error_t *err);
/* online_dest_rollback.c: rollback --to-uri of a committed plan: refused
 * when the destination was written since the commit, unless
 * --carry-writes (back to the source through the plan's inverse) or
 * --discard-writes-after-switch; the plan marked rolled back there. */
bool online_dest_rollback (online_t *on, bson_error_t *err);
/* status --json: a plan rolled back (the pair's record rec says when and
 * how): its record under sub's rolledBack, and why canCommit is false
 * (each when not NULL); nothing when it was not. */
void online_dest_rolled_back (const bson_t *rec, bson_t *sub, char *why, size_t cap);
/* status (text): a committed plan's line, and how it was rolled back. */
void online_dest_status_line (online_t *on);

/* online_rollback_select.c: in place, rollback of one journal entry bd
 * of a copy, move or delete (its backups' collection b, named bname, and
 * its "from"): the original back in from, remodel's document out of "to",
 * the entry removed; one the application changed since left and named
 * (t->kept), unless --force or --forget. */
typedef struct {
    int64_t restored, kept, forced, forgotten;
} online_rb_tally_t;
bool online_rollback_select (online_t *on, const rm_step_t *s, mongoc_collection_t *b,
                             mongoc_collection_t *from, const char *bname, const bson_t *bd,
                             online_rb_tally_t *t, bson_error_t *err);
/* The plan record's flag that step s's "to" was made by the run (run
 * sets it before making it); online_rollback_select_end: once the step's
 * entries are undone, with none left (kept), "to" dropped if the run made
 * it and it is empty. */
void online_select_made_flag (const rm_step_t *s, char *buf, size_t cap);
bool online_rollback_select_end (online_t *on, const rm_step_t *s, int64_t kept,
                                 bson_error_t *err);

#endif
