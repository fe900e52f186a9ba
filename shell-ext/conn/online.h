/* remodel-online: the online companion. `remodel online ...` runs it (it is
 * found beside the remodel binary). It applies a plan's steps to a live
 * server in batches through libmongoc, each batch transformed by the core's
 * engine (remodel/batchstep.h): no step is implemented here.
 *
 * This is its lowest layer's header (shell-ext/conn/): the types every
 * layer shares, the connection, retries, signals, the clock, documents in
 * a buffer, sets of _id hashes, JSON log lines. Each layer above has its
 * own, which includes the one below: online_state.h, online_batch.h,
 * online_changes.h (follow), online_cmd.h; the Makefile lets a layer see
 * only its own and those below it (shell-ext/README.md). */
#ifndef REMODEL_ONLINE_H
#define REMODEL_ONLINE_H

#include <mongoc/mongoc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "remodel/batchstep.h"
#include "remodel/compile.h"
#include "remodel/error.h"
#include "remodel/names.h"
#include "remodel/nsselect.h"
#include "remodel/passes.h"
#include "remodel/plan.h"
#include "remodel/sorter.h"

typedef struct {
    const char *plan_path;
    const char *command;    /* "run", "sync", ...: for messages only; what the
                             * code below cmd/ must know of it is in the flags
                             * the command table sets (switching, starts) */
    bool switching;         /* the command switches the results in (finalize):
                             * it checks the indexes itself, before the writes stop */
    bool starts;            /* the command starts a run (run): the others take a
                             * finished run's results */
    const char *uri;
    const char *state_db;   /* --state-db (default "remodel") */
    int64_t batch_size;     /* --batch-size (default 1000) */
    int64_t pause_ms;       /* --pause-ms between batches */
    int64_t max_rate;       /* --max-rate documents per second (0: none) */
    int64_t partitions;     /* run --partitions: a driving collection's (0: by its size) */
    int64_t workers;        /* run --workers: threads reading partitions (default 1) */
    bool join;              /* run --join: a run in progress, its partitions nobody holds */
    bool dry_run, restart, quiet;
    bool in_place;          /* --in-place: backfill the namespaces themselves */
    bool create_indexes;    /* --create-indexes: make the join indexes missing */
    bool keep_indexes;      /* run --keep-indexes: the sources' indexes as they were */
    bool keep_before;       /* run --keep-before: what a set overwrites, a delete drops */
    bool allow_missing;     /* run --allow-missing: a field in no document passes */
    mongoc_write_concern_t *write_concern; /* --write-concern (NULL: the URI's) */
    int64_t batch_time_ms;  /* --batch-time: batches sized to take about this */
    bool log_json;          /* --log-format json: a line per batch */
    int64_t retry_for_ms;   /* --retry-for: transient errors retried this long */
    bool writes_stopped;    /* finalize --writes-stopped */
    bool full_verify;       /* finalize --full-verify: every result, not a sample */
    int64_t max_window_ms;  /* finalize --max-window: the writes stopped at most this
                             * long (default 10 s; 0: no bound) */
    int64_t sample;         /* finalize --sample: drivers verified a pass (default 1000) */
    const char *validators; /* finalize --validators warn|error (NULL: none applied) */
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
    int64_t max_lag_ms;     /* --max-lag: a replica set's lag that throttles (default 2 s) */
    int64_t max_latency_ms; /* --max-latency: a batch slower halves the size (0: none) */
    bool json;              /* status --json */
    bool probe_caps;        /* --capabilities probe (or REMODEL_ONLINE_CAPS=probe):
                             * the server probed, as one the table does not know */
    /* set: which of --batch-size, --max-rate, --max-lag it was given */
    bool given_batch_size, given_max_rate, given_max_lag;
    /* --to-uri: the destination (NULL: one deployment); run --drop, and
     * run's --nsInclude/--nsExclude of the namespaces copied as they are
     * (NULL: every one). online_ops_pair.c. */
    const char *to_uri;
    bool drop;
    rm_nsselect_t *ns_select;
    bool ns_included;       /* --nsInclude given: --drop may drop what it names
                             * in a database the plan does not (online_dest.c) */
    /* --config FILE's uri and toUri (uri and to_uri point at them where
     * the file gave them): the command's to free. */
    char *config_uri, *config_to_uri;
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

/* A worker's throttle between its batches and passes (state/
 * online_throttle.c, the only one to read or write it). */
typedef struct {
    bool started;
    bool lag_readable, flow_readable; /* the server answers replSetGetStatus, flowControl */
    bool throttled;
    char reason[300];
    int64_t since;                    /* online_mono_ms when it began waiting */
    int64_t max_lag_ms, max_latency_ms, max_rate, base; /* base: the batch size asked for */
    int64_t size;                     /* --max-latency's size now, kept for the next pass */
    int64_t settings_at;              /* the last `set` taken (its time in the record) */
    int64_t rate_t0, rate_n;          /* --max-rate: counted since it last changed */
} online_throttle_t;

/* caps: begin (online_caps.c, issue 53) */
/* What the server is and does, filled once at connect (online_caps_fill)
 * from hello (or isMaster), buildInfo and a table keyed by the server's
 * identity; the write forms and batch sizes of the layers above are read
 * from it, never from constants (online_caps_write_chunk...). */
typedef struct {
    bool known;                 /* the server answered buildInfo: the choices are its own */
    char identity[24];          /* "mongodb", "ferretdb", "mongo-java-server", "unknown" */
    char version[32];           /* buildInfo.version */
    char set_name[64];          /* hello.setName ("": not a replica set member) */
    char msg[16];               /* hello.msg ("isdbgrid": a mongos) */
    int64_t max_write_batch;    /* hello.maxWriteBatchSize (0: not said) */
    int64_t max_bson_size;      /* hello.maxBsonObjectSize */
    int64_t max_message_size;   /* hello.maxMessageSizeBytes */
    /* The choices made from them. */
    int64_t write_chunk;        /* statements a write command (batch/online_write.c) */
    int64_t insert_chunk;       /* side-by-side results an insert command (the same) */
    int64_t update_chunk;       /* key-map updates a command (state/online_keys.c) */
    bool replace_keeps_order;   /* a side-by-side rewrite is a replace, not delete+insert */
    bool in_by_index;           /* $in on a secondary index is read from it: partners by key */
    const char *source;         /* where the choices came from (static text) */
    /* The change log the server offers, probed (online_caps_log.c) by
     * status, never taken from the identity. */
    bool log_probed, change_streams, oplog, oplog_tailable;
} online_caps_t;
/* caps: end */

/* What one command's run shares with every thread it starts: made once by
 * the command (online_init, then online_plan_load and online_connect fill
 * it), read by its workers through online_t.run, a const pointer, and
 * freed once by the command (online_run_destroy). Only the thread that
 * made it changes it, through online_t.own_run, between the passes its
 * workers read: a worker's online_t has no own_run, so a worker cannot
 * change what the others read. */
/* A step's passes, resolved once when the plan is loaded (online_steps.c)
 * for both modes, and read by every layer from there on: its passes
 * (rm_step_passes; np 0: it cannot run this way, why says so), its inputs
 * (rm_step_inputs' order, which rm_pass_t.drive and partner index) and,
 * side by side, its targets (rm_step_targets; none in place). */
typedef struct online_step {
    const rm_step_t *s;
    rm_pass_t passes[RM_MAX_PASSES];
    size_t np;
    const rm_nsref_t *in[4];
    size_t n_in;
    const rm_nsref_t *targets[8];
    size_t nt;
    /* What the passes write, in either mode (rm_step_targets): sync asks
     * whether a later step reads it. */
    const rm_nsref_t *written[8];
    size_t n_written;
    bson_error_t why;
} online_step_t;

typedef struct online_run {
    /* The command line and the plan: fixed from the start. */
    const online_opts_t *o;
    rm_plan_t plan;
    /* Each plan step's, side by side [0] and in place [1]: the one place
     * passes are derived (online_step). */
    online_step_t *steps[2];
    /* The plan's name, path, id and digest, and where each namespace is
     * now (remodel/names.h): moved by the command (finalize, switch,
     * follow) as it renames, never while workers read. */
    rm_names_t names;
    /* The deployment, as the command's connect found it: the same server
     * for every connection of the run, so asked once (online_connect). */
    char where[300];        /* host:port list, never the credentials */
    online_caps_t caps;         /* the server's capabilities (online_caps.c) */
    const struct online_ops *ops; /* the server's operations (online_ops.c); NULL: libmongoc's */
    /* --to-uri: the source's where and capabilities (online_ops_pair.c);
     * NULL: one deployment. With it, a connection's client is the
     * destination's, and its source the source's (online_t.source). */
    struct online_pair *pair;
    /* Settled by the command before its passes, read by every batch. */
    /* --create-indexes, given now or recorded by the run that began the
     * plan (createIndexes in its record): a resume behaves the same. */
    bool create_indexes;
    /* --keep-before, given now or recorded (keepBefore): each batch of a
     * set or a delete keeps what it overwrites or drops (online_kept.c). */
    bool keep_before;
    int64_t verify_sample;  /* verify: this many drivers a pass (0: all) */
    int lookup_rules;       /* 0 not known yet, 1 MongoDB 5.0-8.x's, 2 9.0's */
    /* The plan follows a change log (a point is recorded): partners'
     * keys are noted as they are read (online_keys.c). */
    bool follows;
    /* What the command is doing, for the code below it. */
    bool following;         /* in `follow`: quiet rounds say nothing */
    bool incr_running;      /* a sync from the log is recomputing */
    /* sync: the run was --server-side, which writes no key map: this
     * sync rescans every step, writing it (keysMissing in the record). */
    bool keys_rebuilt;
} online_run_t;

/* A connection and what one thread does on it: the command's, or a
 * worker's (cmd/online_workers.c). A worker's is made from zero around
 * the run (nothing of the command's is copied, so nothing is cleared by
 * hand), and online_close closes only what it holds. */
/* online_points.c: what this connection's server said, by explain, of
 * reading a few _ids (in_served: 0 not asked, 1 an _id $in is served from
 * an index, 2 not or no answer; asked and served: a bit per BSON type, of
 * a point read {_id: v}). */
typedef struct {
    int in_served;
    uint64_t asked[2], served[2];
} online_points_memo_t;

typedef struct {
    const online_run_t *run;    /* the run's, shared: read only */
    online_run_t *own_run;      /* the same run where this is the command's,
                                 * which alone may change it; NULL in a worker */
    /* This thread's connection: its client, and what its last error was. */
    mongoc_client_t *client;
    /* --to-uri: this thread's connection to the source (NULL: one
     * deployment), opened and closed with client: the command's by
     * online_pair_connect, a worker's by online_connect_worker. A driver
     * client serves one thread, so no two threads share one. */
    mongoc_client_t *source;
    bool transient;         /* the last driver error may pass: retry */
    bool answered;          /* the server answered client's first call (online_ops.c) */
    int random_cursor;      /* online_random_cursor: 0 not asked, 1 yes, -1 no, */
    char random_why[160];   /* and why not (asked on this connection, once) */
    online_points_memo_t points; /* online_points.c: asked on this connection */
    /* Its name in the leases (two workers of one process are two
     * holders) and the lease it holds: its own, or the plan's, shared
     * with the command that holds it (a rescan's: checked, never dropped). */
    char owner[128];        /* this run, in the lease */
    online_lease_t *lease;  /* held (online_lease.c), or NULL */
    int64_t epoch;          /* the lease's epoch while held: the fencing token */
    /* What this thread did, which its command adds up (workers'). */
    /* run: documents this process read, for capture none's cost of
     * finalize at this run's rate. */
    int64_t read_now;
    /* run: the milliseconds since the last checkpoint spent on batches
     * (reading, computing, writing), which the next one adds to its
     * busyMs: status's rate leaves out pauses, lease waits and the time
     * between two runs. */
    int64_t busy_ms;
    /* run --dry-run: the documents the steps' expressions or filters fail
     * on, counted rather than stopping the run at the first; the first
     * few said as they come (online_batch.c). */
    int64_t doc_fails;
    online_incr_stats_t incr; /* the last sync from the log */
    bool made_noted;        /* online_made.c: the journal may hold _ids */
    online_throttle_t throttle; /* run, sync: before each batch (online_throttle_wait) */
    online_diffs_t *diffs;  /* verify: the differing _ids (online_diffs.c), or NULL */
    /* finalize's, a command without workers. When the writes stopped
     * (online_mono_ms; 0: not in the window), and when a progress line
     * last said so (online_blocked.c); the documents read whole for
     * checksums in it (online_coll_sum), which its closing line says:
     * what grows with the data. */
    int64_t window_t0, window_said, window_summed;
    /* finalize without a change log: each result its full verify read,
     * folded into a count and digest as it went (online_blocked.c), so
     * that the switch's mark need not read them again; NULL: not asked. */
    struct online_fold_s *fold;
    size_t n_fold;
} online_t;

/* on, the command's, over run, both made empty: online_plan_load and
 * online_connect fill them. */
static inline void
online_init (online_t *on, online_run_t *run)
{
    memset (run, 0, sizeof *run);
    memset (on, 0, sizeof *on);
    on->run = on->own_run = run;
}

/* view: on as seen over another deployment or side (--to-uri's views of
 * one of the two), with run its own copy of on's, which the caller
 * changes where they differ (where, caps, pair). The plan and names
 * are on's, shared (nothing is freed through the view); what is written
 * to the view's run stays in it. */
static inline void
online_view (const online_t *on, online_t *view, online_run_t *run)
{
    *view = *on;
    *run = *on->run;
    view->run = view->own_run = run;
}

/* online_steps.c: run's steps resolved (online_plan_load calls it once
 * the plan is read; a test over a plan of its own too); online_step:
 * step s's as in_place runs it (s one of the run's plan's steps);
 * online_step_runs: false with its why in err when it has no passes. */
void online_steps_resolve (online_run_t *run);
const online_step_t *online_step (const online_t *on, const rm_step_t *s, bool in_place);
bool online_step_runs (const online_step_t *st, bson_error_t *err);

/* ops: begin (online_ops.c, issue 53) */
/* Every call remodel makes of a server goes through this table: one
 * implementation over libmongoc (online_ops_mongoc), and, because each is
 * a pointer, room for another that picks the server per operation (a
 * source read, a destination written: issue 54) or names the operation
 * (a fault layer, a trace). Collections are the driver's handles
 * (online_collection); a read is a cursor read with next and ended with
 * end (its error, then freed); a write batch is filled with add and sent
 * with send (freed either way; discard frees one unsent). Each says only
 * the server's error in why: the caller names what it was doing
 * (online_fail). reply arguments are initialized either way, or NULL. */
typedef struct online_cursor online_cursor_t;
typedef struct online_wbatch online_wbatch_t;
typedef enum {
    ONLINE_W_INSERT,        /* doc */
    ONLINE_W_UPDATE,        /* the document sel finds, by the update doc */
    ONLINE_W_REPLACE,       /* the document sel finds, by doc whole */
    ONLINE_W_DELETE,        /* the document sel finds */
    ONLINE_W_DELETE_ALL     /* every document sel finds */
} online_wkind_t;
/* What the oplog read does with each entry (online_changes.c keeps a few fields). */
typedef void (*online_entry_fn) (const bson_t *entry, void *arg);
typedef struct online_ops {
    const char *name;
    /* Reads: filter with opts (sort, projection, limit...); range, in _id
     * order after the _id after (NULL: from the first); keys, whose field
     * is one of the array keys; indexes, listIndexes. */
    online_cursor_t *(*find) (online_t *on, mongoc_collection_t *c, const bson_t *filter,
                              const bson_t *opts);
    online_cursor_t *(*range) (online_t *on, mongoc_collection_t *c, const bson_iter_t *after,
                               const bson_t *opts);
    online_cursor_t *(*keys) (online_t *on, mongoc_collection_t *c, const char *field,
                              const bson_t *keys, const bson_t *opts);
    online_cursor_t *(*indexes) (online_t *on, mongoc_collection_t *c);
    bool (*next) (online_cursor_t *cur, const bson_t **doc);
    bool (*end) (online_cursor_t *cur, bson_error_t *why);
    int64_t (*count) (online_t *on, mongoc_collection_t *c, const bson_t *filter,
                      bson_error_t *why);
    /* The count from the server's metadata (estimatedDocumentCount): no scan. */
    int64_t (*estimate) (online_t *on, mongoc_collection_t *c, bson_error_t *why);
    /* A write batch, unordered, in --write-concern; its size and forms are
     * the caller's, from online_t.caps. */
    online_wbatch_t *(*batch) (online_t *on, mongoc_collection_t *c);
    bool (*add) (online_wbatch_t *b, online_wkind_t kind, const bson_t *sel, const bson_t *doc,
                 bool upsert, bson_error_t *why);
    bool (*send) (online_wbatch_t *b, bson_t *reply, bson_error_t *why);
    void (*discard) (online_wbatch_t *b);
    /* One write now (a delete: of every match when many); replace_if, a
     * findAndModify replacing the document sel finds by want (want NULL:
     * removing it), its reply holding the one it replaced or removed. */
    bool (*write) (online_t *on, mongoc_collection_t *c, online_wkind_t kind, const bson_t *sel,
                   const bson_t *doc, bool upsert, bool many, bson_t *reply, bson_error_t *why);
    bool (*replace_if) (online_t *on, mongoc_collection_t *c, const bson_t *sel,
                        const bson_t *want, bson_t *reply, bson_error_t *why);
    /* Collections: renameCollection ("db.coll" names), drop, and index
     * commands on c (createIndexes; drop_index by name). */
    bool (*rename) (online_t *on, const char *from, const char *to, bool drop_target,
                    bson_error_t *why);
    bool (*drop) (online_t *on, mongoc_collection_t *c, bson_error_t *why);
    bool (*index_command) (online_t *on, mongoc_collection_t *c, const bson_t *cmd,
                           bson_t *reply, bson_error_t *why);
    bool (*drop_index) (online_t *on, mongoc_collection_t *c, const char *name,
                        bson_error_t *why);
    /* collMod of c with the fields of mod (validator, validationLevel,
     * validationAction...), on the connection c belongs to. */
    bool (*coll_mod) (online_t *on, mongoc_collection_t *c, const bson_t *mod, bson_error_t *why);
    /* The change log: a change stream's aggregate, getMore or killCursors
     * in db; the oplog's entries matching filter, each to fn, on client
     * (a connection of its own that a signal may cut: online_interrupt.h). */
    bool (*stream) (online_t *on, const char *db, const bson_t *cmd, bson_t *reply,
                    bson_error_t *why);
    bool (*oplog) (mongoc_client_t *client, const bson_t *filter, online_entry_fn fn, void *arg,
                   bson_error_t *why);
    /* Anything else the server is asked: a pipeline over c (a cursor, as
     * find's), and a command (hello, buildInfo, listCollections, create,
     * collMod, serverStatus...) of database db on on's connection or, with
     * c, of c's database on the connection c belongs to (--to-uri: the
     * source's or the destination's). The rows above are preferred where one fits: they
     * say what is done, which a trace or a second server can act on. */
    online_cursor_t *(*aggregate) (online_t *on, mongoc_collection_t *c, const bson_t *pipeline,
                                   const bson_t *opts);
    bool (*command) (online_t *on, mongoc_collection_t *c, const char *db, const bson_t *cmd,
                     bson_t *reply, bson_error_t *why);
    /* The state database's documents (--state-db): the first coll holds
     * that matches filter into doc (initialized; *found), one inserted,
     * one updated (reply as write's), those matching filter deleted. */
    bool (*state_read) (online_t *on, const char *coll, const bson_t *filter, bson_t *doc,
                        bool *found, bson_error_t *why);
    bool (*state_insert) (online_t *on, const char *coll, const bson_t *doc, bson_error_t *why);
    bool (*state_update) (online_t *on, const char *coll, const bson_t *sel, const bson_t *u,
                          bool upsert, bson_t *reply, bson_error_t *why);
    bool (*state_delete) (online_t *on, const char *coll, const bson_t *filter, bool many,
                          bson_error_t *why);
} online_ops_t;
extern const online_ops_t online_ops_mongoc;
/* online_ops_coll.c: libmongoc's coll_mod row. */
bool online_ops_mongoc_coll_mod (online_t *on, mongoc_collection_t *c, const bson_t *mod,
                                 bson_error_t *why);
/* A command answered by a cursor (listCollections, listIndexes...) through
 * the table's command row, as online_ops_t.command sends it: each document
 * of its batches to each, with a getMore while the cursor lasts. */
bool online_command_each (online_t *on, mongoc_collection_t *c, const char *db, const bson_t *cmd,
                          online_entry_fn each, void *arg, bson_error_t *why);
/* online_coll_options.c: c's options as listCollections gives them (empty:
 * none), on c's own connection (--to-uri: a destination's handle has its
 * namespace's name there); db: c's database. */
bool online_collection_options (online_t *on, mongoc_collection_t *c, const char *db, bson_t *opts,
                                bson_error_t *why);
/* db's collections' names (filter: listCollections', or NULL), through
 * the table's command row on on's connection; NULL with why on an error
 * (bson_strfreev them). */
char **online_collection_names (online_t *on, const char *db, const bson_t *filter,
                                bson_error_t *why);
/* The driver's handle of db.coll (--to-uri: on the side it is on,
 * online_pair_client); mongoc_collection_destroy it. */
mongoc_collection_t *online_collection (online_t *on, const char *db, const char *coll);
static inline const online_ops_t *
online_ops (const online_t *on)
{
    return on->run->ops ? on->run->ops : &online_ops_mongoc;
}
/* ops: end */

/* caps: begin (online_caps.c, issue 53) */
/* The choices of a server that said nothing (caps not filled): today's
 * conservative ones, right on every server. choose: the record from the
 * replies (hello NULL: the server refused it, isMaster's in its place or
 * NULL too; build_info NULL: refused). fill: asks them, once, at connect
 * (and, for a server the table does not know, reads the probe's findings
 * recorded in the state database's capabilities, or, in a run that starts
 * and writes, probes and records them); a refusal leaves the conservative
 * choices, never an error. */
void online_caps_choose (online_caps_t *c, const bson_t *hello, bool hello_refused,
                         const bson_t *build_info);
void online_caps_fill (online_t *on);
/* The probe fill leaves to the command (a run that starts and writes,
 * on a server the table does not know): it writes in the state
 * database, so it comes after the checks that the state database is
 * remodel's and the destination not the source (cmd/online_main.c). */
void online_caps_probe (online_t *on);
int64_t online_caps_write_chunk (const online_t *on);
int64_t online_caps_insert_chunk (const online_t *on);
int64_t online_caps_update_chunk (const online_t *on);
bool online_caps_replace_keeps_order (const online_t *on);
bool online_caps_in_by_index (const online_t *on);
/* status: the record as "server:" lines on out; --json: as a document
 * under key in doc. */
void online_caps_print (const online_caps_t *c, FILE *out);
void online_caps_append (const online_caps_t *c, bson_t *doc, const char *key);
/* online_caps_log.c: the change-log rows, asked of the server once
 * (status), then shown as a line of print and a document (changeLog) of
 * append. */
void online_caps_log_probe (online_t *on);
void online_caps_log_print (const online_caps_t *c, FILE *out);
void online_caps_log_append (const online_caps_t *c, bson_t *sub);
/* A change stream's or a tailable cursor's id killed, best effort (an
 * open cursor costs the server until it times out); 0: none. */
void online_cursor_kill (online_t *on, const char *db, const char *coll, int64_t id);
/* Whether s, a host a server's hello lists, is one the driver parses as
 * host[:port] (a name, an IPv4 address, a bracketed IPv6 one, a .sock
 * path): libmongoc 1.23.1 crashes on one it cannot parse (issue 50).
 * hosts_ok: every one of hello's hosts, passives, arbiters and me; the
 * first that fails, escaped, into bad. */
bool online_caps_host_ok (const char *s);
bool online_caps_hosts_ok (const bson_t *hello, char *bad, size_t cap);
/* The probe's judge (a server the table does not know): whether stored
 * has given's fields in given's order. */
bool online_caps_order_kept (const bson_t *given, const bson_t *stored);
/* caps: end */

/* online_explain.c: explain's replies judged. indexed: the plan names an
 * index scan; served: the query is read without the whole collection (an
 * index scan or an _id lookup on MongoDB, a filter pushed down to storage:
 * FerretDB's filterPushdown). */
bool online_explain_indexed (const bson_t *explain);
bool online_explain_served (const bson_t *explain);

/* online_points.c: whether ops_keys reads keys (of field, with opts) of c
 * as one find each rather than one $in: a few _ids of types this
 * connection's server serves a point read of and not their $in, asked by
 * explain once a connection, through ask (the table's command: the
 * caller's, so that this file does not call up into the table). */
typedef bool (*online_points_ask_fn) (online_t *on, mongoc_collection_t *c, const char *db,
                                      const bson_t *cmd, bson_t *reply, bson_error_t *why);
bool online_points_fit (online_t *on, mongoc_collection_t *c, const char *field,
                        const bson_t *keys, const bson_t *opts, online_points_ask_fn ask);

/* online_conn.c: connect and ping (errors redact credentials). connect:
 * the command's, which fills its run's o, where and capabilities;
 * connect_worker: a worker's connection of its own to the run's server
 * (cmd/online_workers.c), which asks nothing the run knows already;
 * with --to-uri, two: the destination's and the source's. */
bool online_connect (online_t *on, const online_opts_t *o, bson_error_t *err);
bool online_connect_worker (online_t *on, bson_error_t *err);
/* Closes what on holds: its connections (a lease still held is the
 * caller's to drop first, online_lease_drop); never the run, which
 * online_run_destroy frees once, when the command ends. */
void online_close (online_t *on);
void online_run_destroy (online_run_t *run);
/* A driver error as ours, naming what was being done and where; notes in
 * on->transient whether it is one to retry (network, failover, shutdown). */
bool online_fail (online_t *on, bson_error_t *err, const bson_error_t *why, const char *what);
/* online_retry.c: whether a driver error is one of those (online_fail's on->transient). */
bool online_transient (const bson_error_t *why);

/* online_conn.c: the state database's document coll {_id: id} into doc
 * (initialized here; empty and *found false when there is none). */
bool online_state_get (online_t *on, const char *coll, const char *id, bson_t *doc, bool *found,
                       const char *what, bson_error_t *err);

/* online_signal.c: SIGINT and SIGTERM, caught by the commands that hold
 * the lease, ask the loops to stop at their next safe point. install: in
 * main, before the lease is taken (a second signal kills at once).
 * requested: the signal, 0 while none came; a loop polls it between two
 * batches. check: false with RM_ERR_INTERRUPTED "plan P: stopped by
 * SIGINT WHERE" once one came; check_step: the same between two batches
 * of step s reading ns, WHERE "after step N (op) NS: SEEN read, KEPT" (the
 * one wording of run's and --server-side's loops). block: this thread
 * ignores them (the lease's renewals; old restored with pthread_sigmask). */
void online_signal_install (void);
int online_stop_requested (void);
/* A stop with no signal: finalize asked a follow for its lease while a
 * long phase ran (set by the lease's renewals, online_lease.c); requested
 * then returns ONLINE_STOP_HANDOVER and the loops stop as for a signal,
 * the name saying why. handover: whether it came. */
#define ONLINE_STOP_HANDOVER 0x100
void online_stop_for_handover (void);
bool online_stop_handover (void);
const char *online_stop_name (void);
bool online_stop_check (online_t *on, const char *where, bson_error_t *err);
bool online_stop_check_step (online_t *on, const rm_step_t *s, const char *ns, int64_t seen,
                             const char *kept, bson_error_t *err);
void online_signal_block (sigset_t *old);

/* online_field.c: a string field of a stored record into buf ("" when
 * missing or not a string; a dotted key reaches into sub-documents). */
void online_field_utf8 (const bson_t *doc, const char *key, char *buf, size_t cap);

/* online_clock.c: a sleep, the monotonic clock and the wall clock, in milliseconds. */
void online_sleep_ms (int64_t ms);
int64_t online_mono_ms (void);
int64_t online_wall_ms (void);
/* A duration for a message: "20 ms" below a second, where "0.0 s" would
 * say nothing (--max-window 20ms), "1.5 s" from there on; into buf, which
 * it returns. ONLINE_DUR(ms): the same in a buffer of the statement's. */
#define ONLINE_DUR_LEN 32
const char *online_dur (char *buf, int64_t ms);
#define ONLINE_DUR(ms) online_dur ((char[ONLINE_DUR_LEN]){0}, (ms))
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
/* The end of one batch of run's and --server-side's loops, n its count
 * (negative: it failed, err says why): AGAIN, a transient error waited
 * for (online_retry), the loop goes round; FAILED, it ends failed; DONE,
 * nothing was left (n == 0); ON, the loop goes on with the batch. A
 * batch not failed ends a run of retries. */
typedef enum {
    ONLINE_BATCH_ON,
    ONLINE_BATCH_AGAIN,
    ONLINE_BATCH_FAILED,
    ONLINE_BATCH_DONE
} online_batch_end_t;
online_batch_end_t online_retry_batch (online_t *on, online_retry_t *r, int64_t n,
                                       const bson_error_t *err);
/* The table's rows (online_ops.c): whether a call that failed with why
 * is sent again, after online_retry's wait: any call the driver found no
 * server for (it never went out), and a read (read true) after any
 * transient error; reply, filled by the failed call, emptied (NULL:
 * none). Never on a connection whose server has not answered yet. */
bool online_retry_call (online_t *on, online_retry_t *r, bool read, bson_t *reply,
                        const bson_error_t *why);

/* online_range.c: resuming after a checkpoint's _id. Appends to filter
 * the condition "every _id after last in MongoDB's sort order", of any
 * type ({$gt: last} alone keeps to last's type); false when it does not fit. */
bool online_range_after (const bson_iter_t *last, bson_t *filter);
/* Read through that filter, id sorts before last after all (a MinKey, a
 * symbol: types no $type alias names): the reader skips it. Such _ids come
 * first in _id order, so only those before the first kept need asking. */
bool online_range_before (const bson_iter_t *id, const bson_iter_t *last);
/* The bounds of a partition's range (state/online_partition.c), each
 * appending one condition to filter (nothing when it holds for every
 * _id): upto, every _id up to hi, hi included; from_bracket, every _id of
 * t's bracket and those after it; below_bracket, every _id of the
 * brackets before t's. Like online_range_after, exact for the types a
 * $type alias names, and letting through those it cannot name (a MinKey,
 * a symbol, code, a MaxKey): the reader keeps or skips them by
 * rm_value_compare. bracket_alias: the $type alias of t's bracket (NULL
 * when none names it: then no partition splits there); bracket_type: a
 * type of an alias's bracket (BSON_TYPE_EOD for another word). */
bool online_range_upto (const bson_iter_t *hi, bson_t *filter);
bool online_range_from_bracket (bson_type_t t, bson_t *filter);
bool online_range_below_bracket (bson_type_t t, bson_t *filter);
const char *online_range_bracket_alias (bson_type_t t);
bson_type_t online_range_bracket_type (const char *alias);

/* online_random.c: up to n _ids of c at random, by the server's
 * $sample, into ids (reset; keys "0", "1"...). *sampled false, ids empty
 * and the server's reason in why when it has no $sample or it failed
 * three times: the caller reads another way. False only on a network
 * error (what: what was being done, for the message). */
bool online_random_ids (online_t *on, mongoc_collection_t *c, int64_t n, bson_t *ids,
                        bool *sampled, char *why, size_t cap, const char *what, bson_error_t *err);
/* Whether the server's $sample of a small share reads a random cursor
 * (MongoDB's WiredTiger and in-memory engines, a mongos asking its
 * shards) rather than ordering the whole collection at random; when not,
 * why goes into why. Asked once a process (serverStatus; one refused
 * counts as yes); _of: from a serverStatus reply. */
bool online_random_cursor (online_t *on, char *why, size_t cap);
bool online_random_cursor_of (const bson_t *server_status, char *why, size_t cap);

/* online_conn.c: the server's version (buildInfo), and the $lookup rules
 * it follows, settled once a process (on->run->lookup_rules: 1 MongoDB
 * 5.0-8.x's, 2 9.0's; a plan's record may have set them first). */
bool online_server_version (online_t *on, rm_compile_version_t *v, bson_error_t *err);
int online_lookup_rules (online_t *on);

/* online_docs.c: documents one after another in one buffer. */
typedef struct {
    size_t off;             /* in the batch's bytes */
    uint32_t len;
    int keep;               /* outputs: which of the pass's keep[] (-1: not kept) */
} online_doc_t;

typedef struct {
    rm_buf_t bytes;         /* the documents, one after another */
    online_doc_t *docs;
    size_t n, cap;
} online_docs_t;

void online_docs_init (online_docs_t *d);
void online_docs_reset (online_docs_t *d);
void online_docs_destroy (online_docs_t *d);
void online_docs_add (online_docs_t *d, const uint8_t *doc, uint32_t len, int keep);
static inline const uint8_t *
online_doc_bytes (const online_docs_t *d, size_t i)
{
    return d->bytes.data + d->docs[i].off;
}
/* Whether two documents carry the same _id (bytes and type). */
bool online_same_id (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen);
/* {_id: <doc's _id>} into sel (false: no _id). */
bool online_id_filter (const uint8_t *doc, uint32_t len, bson_t *sel);
/* Appends to sel the filter for _id equal to id: {_id: id}, the one form
 * that mongo-java-server answers through its _id index, and FerretDB
 * pushes down; {_id: {$eq: id}} only for a document _id whose first field
 * starts with '$', which the plain form would read as operators. */
void online_id_append (bson_t *sel, const bson_iter_t *id);

/* online_idset.c: a set of _id hashes. */
typedef struct {
    const char *ns;         /* the namespace whose results these are */
    bool by_drivers;        /* unused: the results name their driver
                               (rm_pass_t.driver_field), and online_run.c
                               checks them by the drivers' _ids */
    uint64_t *slots;        /* 0: empty */
    size_t n, cap;
    /* A step's set (online_idset_note): past budget bytes of table, every
     * hash goes to an external sort under tmpdir instead, and the checks
     * are made at the end of the step, in hash order (online_verify.c). */
    size_t budget;
    const char *tmpdir;
    rm_sorter_t *disk;
} online_idset_t;

/* A hash of a document's _id (type and bytes), never 0. */
uint64_t online_id_hash (const uint8_t *doc, uint32_t len);
bool online_idset_has (const online_idset_t *s, uint64_t h);
/* false when h was there already. */
bool online_idset_add (online_idset_t *s, uint64_t h);
void online_idset_destroy (online_idset_t *s);
/* Notes h in a step's set, within its budget: past it, the set goes to
 * disk, and online_idset_has no longer answers for it. */
bool online_idset_note (online_idset_t *s, uint64_t h, bson_error_t *err);
/* The hashes of a set on disk in order, each as often as noted (finish
 * first): 1 and *h, 0 at the end, -1 on error. */
bool online_idset_finish (online_idset_t *s, bson_error_t *err);
int online_idset_next (online_idset_t *s, uint64_t *h, bson_error_t *err);
/* A hash as a sort key: 8 bytes, big-endian, so that bytes sort as numbers. */
void online_hash_key (uint64_t h, uint8_t key[8]);

/* online_json.c: appends s as a JSON string (quotes, backslashes and
 * control bytes escaped, UTF-8 kept), for --log-format json lines. */
void online_json_string (rm_buf_t *out, const char *s);
/* A batch of step s's pass (from 0) over ns, as --log-format json says
 * it: its documents (n) and milliseconds, the pass's documents read and
 * written so far and their rate a second. */
typedef struct {
    const rm_step_t *s;
    size_t pass;
    const char *ns;
    bool server_side;
    int64_t n, ms, seen, written, rate;
} online_batch_line_t;
void online_json_batch (const online_t *on, const online_batch_line_t *b);

/* say: begin (online_say.c, issue 53) */
/* The one voice: every line the program says below its commands' own
 * closing words goes out through these, which decide once, from --quiet,
 * --log-format json and whether standard error is a terminal, what is
 * shown and how; text from the data is escaped (rm_cli_put_text). */
typedef struct {
    bool quiet;             /* --quiet: no notes, no meter */
    bool json;              /* --log-format json: batches and throttle events as JSON lines */
    bool meter;             /* a progress line redrawn in place: a terminal, neither of those */
} online_say_how_t;
typedef enum {
    ONLINE_SAY_NOTE,        /* what it did or will do: not with --quiet */
    ONLINE_SAY_WARN,        /* what the user must know (a finding, a failing document): always */
    ONLINE_SAY_ASIDE        /* a note that may come while a meter is drawn: under it */
} online_say_kind_t;
/* on may be NULL (no options: shown, no JSON). */
online_say_how_t online_say_how (const online_t *on);
/* "remodel: " and the formatted text, escaped, a line on standard error,
 * as kind says (note, warn and aside: shorthands). */
void online_say (const online_t *on, online_say_kind_t kind, const char *fmt, ...)
    BSON_GNUC_PRINTF (3, 4);
void online_say_note (const online_t *on, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
void online_say_warn (const online_t *on, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
void online_say_aside (const online_t *on, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
/* The meter: the line redrawn in place, left open; false (nothing drawn)
 * where there is no meter. closing: a pass's last line, over the meter
 * when one was drawn (not with --quiet). meter_end: a drawn meter ended
 * by a new line (keep) or erased (after an error, said alone). */
bool online_say_progress (const online_t *on, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
void online_say_closing (const online_t *on, bool drawn, const char *fmt, ...)
    BSON_GNUC_PRINTF (3, 4);
void online_say_meter_end (const online_t *on, bool drawn, bool keep);
/* A --log-format json line (its newline included), in one write on
 * standard error, only where JSON lines are asked for (a caller may build
 * it only where online_say_how says json: a batch's, made often). event:
 * something that happened, said once in the form asked for: json, or
 * the text as kind says. */
void online_say_json (const online_t *on, const rm_buf_t *line);
void online_say_event (const online_t *on, online_say_kind_t kind, const rm_buf_t *json,
                       const char *fmt, ...) BSON_GNUC_PRINTF (4, 5);
/* A command's report (status, lag) on standard output, as formatted
 * (its fields are the caller's to escape); _stream: that stream. */
void online_say_out (const online_t *on, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
FILE *online_say_out_stream (const online_t *on);
/* libmongoc's log (main's handler): its errors only, unless
 * REMODEL_ONLINE_DEBUG is set (a server without endSessions draws
 * warnings that are noise), in the driver's own form. */
bool online_say_driver_shown (mongoc_log_level_t level);
void online_say_driver (mongoc_log_level_t level, const char *domain, const char *message);
/* error: "remodel: error: " and err's message, always (main's last line);
 * usage: the usage text, on standard output when asked for (--help), on
 * standard error with a refusal. */
void online_say_error (const online_t *on, const bson_error_t *err);
void online_say_usage (const char *text, bool asked);
/* REMODEL_ONLINE_TRACE's line of a reply: "trace: at T ms took D ms "
 * then what and how, T since online_say_start (main's first act; else
 * the first trace line), read as the line is written, so that the lines
 * are in time order; D the call's own duration. */
void online_say_start (void);
void online_say_trace (int64_t took_usec, const char *what, const char *how);
/* Tests: the streams instead of standard output and error (NULL: those),
 * and whether err counts as a terminal (-1: isatty says). */
void online_say_to (FILE *out, FILE *err, int tty);
/* say: end */

/* Whether a failed drop failed only because the collection is not there
 * (the same as dropped): NamespaceNotFound (26), or the message ("ns not
 * found") of the servers that give it no code (mongo-java-server). */
static inline bool
online_drop_gone (const bson_error_t *why)
{
    return why->code == 26 || strstr (why->message, "not found") != NULL;
}

/* online_state_db.c: --state-db is remodel's alone. name_check: a name
 * MongoDB takes for a database, not the server's own (admin, local,
 * config). plan_check: the plan reads and writes none of its namespaces.
 * holdings_check: it holds no collection remodel does not make (ours
 * says which are), on the server and, with --to-uri, on the source too
 * (whose database of that name the copy leaves out). RM_ERR_USAGE.
 * The command runs holdings_check once connected, for a run that writes,
 * before the capabilities' probe writes there (online_caps_probe). */
bool online_state_db_name_check (const char *db, bson_error_t *err);
bool online_state_db_plan_check (const online_t *on, bson_error_t *err);
/* The first namespace of database db a step of the plan reads or writes
 * (its step's index in *step), or NULL: the plan does not name db. */
const rm_nsref_t *online_plan_ns_in_db (const online_t *on, const char *db, size_t *step);
bool online_state_db_ours (const char *coll);
bool online_state_db_holdings_check (online_t *on, bson_error_t *err);

/* --- online_ops_pair.c (issue 54): from one deployment to another --- */
/* With --to-uri, on is connected to the destination (its client, where,
 * caps: the state database lives there) and to the source (its source;
 * on->run->pair: the source's where and its own capabilities record).
 * The source is only read: a collection of the plan's namespaces under
 * its own name is the source's (the drivers and partners of a step that
 * reads it where it is), every other (the results and the state
 * database) the destination's. The layers above
 * name a result as within one deployment (COLL_remodel_ID_N, names.h);
 * on the destination, a namespace's final result is written under the
 * namespace's own name from the start, so that finalize renames nothing
 * (the pair's names; an intermediate result, read by a later step and
 * dropped by finalize, keeps its own). */
typedef enum { ONLINE_SOURCE, ONLINE_DEST } online_side_t;
typedef struct {
    char db[128];
    char result[256];           /* as the layers above name it */
    char coll[256];             /* its name on the destination */
} online_pair_name_t;
typedef struct online_pair {
    char where[300];            /* the source's */
    online_caps_t caps;
    bool all_dest;              /* committed: every name is the destination's */
    online_pair_name_t *names;  /* each namespace's final result */
    size_t n_names;
} online_pair_t;
/* Connects the destination (o->to_uri) into on and the source (o->uri)
 * into on->run->pair, and fills the pair's names from the plan (loaded
 * before); err names which of the two failed. */
bool online_pair_connect (online_t *on, const online_opts_t *o, bson_error_t *err);
/* online_pair_same.c: false, RM_ERR_USAGE, where the two connections
 * reach one deployment (one process answers both, or a marker written
 * through the destination is found through the source; a dry run asks
 * only the former). Before anything of a plan's is written or dropped. */
bool online_pair_distinct (online_t *on, bson_error_t *err);
void online_pair_close (online_t *on);
/* The client db.coll is read and written by (online_collection's hook,
 * online_ops.c): a result's ("_remodel_" in its name) or a state
 * document's collection is the destination's, and so is every one once
 * the plan is committed there; a plan's namespace under its own name is
 * the source's. */
static inline mongoc_client_t *
online_pair_client (const online_t *on, const char *db, const char *coll)
{
    bool dest = on->run->pair->all_dest || !strcmp (db, on->run->o->state_db) ||
                strstr (coll, "_remodel_");
    return dest ? on->client : on->source;
}
/* db.coll's name on the destination: its namespace's own where it is a
 * final result, else coll. Here, not in online_ops_pair.c, for
 * online_collection (online_ops.c), which that file's connecting calls. */
static inline const char *
online_pair_name (const online_t *on, const char *db, const char *coll)
{
    const online_pair_t *p = on->run->pair;
    for (size_t k = 0; k < p->n_names; k++)
        if (!strcmp (p->names[k].result, coll) && !strcmp (p->names[k].db, db))
            return p->names[k].coll;
    return coll;
}
/* The collection db.coll on the side asked; _primary: read from the
 * primary whatever the URI's read preference (a secondary may lag behind
 * a write just made). */
mongoc_collection_t *online_pair_side (online_t *on, online_side_t side, const char *db,
                                       const char *coll);
mongoc_collection_t *online_pair_side_primary (online_t *on, online_side_t side, const char *db,
                                               const char *coll);
/* The collections of db on a side: each one's listCollections document
 * (name, type, options, info) appended to out (an array, keys from *n). */
bool online_pair_list (online_t *on, online_side_t side, const char *db, bson_t *out, int *n,
                       bson_error_t *err);
/* create with options on the destination (collation, validator...). */
bool online_pair_create (online_t *on, const char *db, const char *coll, const bson_t *options,
                         bson_error_t *err);
/* The client the sources are read by: the source's with --to-uri, else
 * the one (for the code that lists them without online_collection). */
mongoc_client_t *online_source_client (online_t *on);
/* The ts of the source's local.oplog.rs's last entry (*found false when
 * it has none: no oplog there, or an empty one). */
bool online_pair_oplog_last (online_t *on, uint32_t *t, uint32_t *i, bool *found,
                             bson_error_t *err);
/* The databases of a side (ONLINE_DEST without a pair: the one
 * deployment's); bson_strfreev them; NULL on error. */
char **online_pair_databases (online_t *on, online_side_t side, bson_error_t *err);
/* The source's change log read as one deployment's (the change capture:
 * state/online_capture.c, online_changes.c, online_window.c): on itself
 * without a pair; else view (its run in view_run), filled as a copy of on whose connection,
 * host and capabilities are the source's and whose every collection is
 * the source's (pair NULL, no lease). Only reads go through a view: the
 * state database and the plan's record stay on's, the destination's.
 * log_end carries a view's transient error back to on. */
online_t *online_pair_log (online_t *on, online_t *view, online_run_t *view_run);
void online_pair_log_end (online_t *on, const online_t *view);
/* --- end of online_ops_pair.c --- */

/* --- online_fault.c (issue 53): the fault layer and the tests' hooks,
 * linked into test programs only; online_fault_off.c, the installed
 * program's, does nothing --- */
/* Wraps client's connections in the fault layer when REMODEL_ONLINE_FAULT
 * asks (read once): the Nth call of a kind cut before or after sending,
 * failed or delayed; "count" only counts. Unset: nothing is wrapped. False
 * with err when the variable says nothing the layer reads. */
bool online_fault_install (mongoc_client_t *client, bson_error_t *err);
/* The calls this thread makes from now on counted as "KIND.command", out
 * of "any": for a thread a timer drives (the lease's renewals). */
void online_fault_thread (const char *kind);
/* The tests' other hooks, each a number of milliseconds: the product's
 * code asks here, never the environment, so the installed program (0 for
 * each, from online_fault_off.c) has none and the tests' build reads
 * REMODEL_ONLINE_<NAME> at each ask (a test sets one for one command). */
typedef enum {
    ONLINE_HOOK_LEASE_MS,               /* LEASE_MS: the lease's length (>= 1000) */
    ONLINE_HOOK_PAUSE_BEFORE_SWITCH_MS, /* finalize's pause before its renames */
    ONLINE_HOOK_SLOW_CALL_MS,           /* a delay before each interruptible call */
    ONLINE_HOOK_EXIT_WAIT_MS,           /* at the end, after the driver's cleanup, a
                                         * wait for the calls left running */
} online_hook_t;
/* The hook's value; 0: not set (the product's behaviour). */
int64_t online_hook_ms (online_hook_t hook);
/* --- end of online_fault.c --- */

#endif
