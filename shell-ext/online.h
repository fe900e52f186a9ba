/* remodel-online: the online companion. `remodel online ...` runs it (it is
 * found beside the remodel binary). It applies a plan's steps to a live
 * server in batches through libmongoc, each batch transformed by the core's
 * engine (remodel/batchstep.h): no step is implemented here. */
#ifndef REMODEL_ONLINE_H
#define REMODEL_ONLINE_H

#include <mongoc/mongoc.h>
#include <stdbool.h>
#include <stdint.h>

#include "remodel/error.h"
#include "remodel/plan.h"

/* A MongoDB server version, as --server-version says it ("5.0", "4.2"):
 * what compile.h may use. */
typedef struct {
    int major, minor;
} compile_version_t;

typedef struct {
    const char *plan_path;
    const char *uri;
    const char *state_db;   /* --state-db (default "remodel") */
    int64_t batch_size;     /* --batch-size (default 1000) */
    int64_t pause_ms;       /* --pause-ms between batches */
    int64_t max_rate;       /* --max-rate documents per second (0: none) */
    bool dry_run, restart, quiet;
    bool in_place;          /* --in-place: backfill the namespaces themselves */
    bool create_indexes;    /* --create-indexes: make the join indexes missing */
    mongoc_write_concern_t *write_concern; /* --write-concern (NULL: the URI's) */
    int64_t batch_time_ms;  /* --batch-time: batches sized to take about this */
    bool log_json;          /* --log-format json: a line per batch */
    int64_t retry_for_ms;   /* --retry-for: transient errors retried this long */
    bool writes_stopped;    /* finalize --writes-stopped */
    bool block_writes;      /* finalize --block-writes */
    bool server_side;       /* run --server-side: compiled pipelines (compile.h) */
    compile_version_t server_version; /* --server-version */
    bool server_version_given;
} online_opts_t;

typedef enum {
    ONLINE_RUN,             /* apply the plan, resumable */
    ONLINE_VERIFY,          /* recompute and compare, write nothing */
    ONLINE_SYNC             /* recompute and write what differs */
} online_mode_t;

/* A namespace's documents are, after the steps so far, in this collection
 * of its database: its own, or a step's target (side by side). */
typedef struct {
    char *ns;               /* "db.coll" as the plan names it */
    char *coll;             /* the collection holding it now */
} online_name_t;

/* One pass of a step over the server: the input read in _id order, range
 * by range, and the outputs of the engine that pass writes. */
typedef struct {
    size_t drive;           /* input number (rm_step_inputs' order) */
    const char *series;     /* read series by series of this field (bucketize's
                               metaField) rather than in _id ranges */
    int partner;            /* input number of the join partners, -1: none */
    const rm_path_t *drive_key;   /* the values looked up... */
    const rm_path_t *partner_key; /* ...among the partners' (with $in) */
    const rm_nsref_t *keep[4];    /* the outputs this pass writes */
    size_t n_keep;
} online_pass_t;

/* A connection and what a run keeps of its plan. */
typedef struct {
    mongoc_client_t *client;
    char where[300];        /* host:port list, never the credentials */
    const online_opts_t *o;
    rm_plan_t plan;
    char name[256];         /* the plan's name: its file's base name */
    char digest[17];        /* CRC-64 of the plan's bytes, hex */
    char owner[128];        /* this run, in the lease */
    online_name_t *names;   /* where each namespace is now (online_names.c) */
    size_t n_names;
    bool transient;         /* the last driver error may pass: retry */
} online_t;

/* online_conn.c: connect and ping (errors redact credentials). */
bool online_connect (online_t *on, const online_opts_t *o, bson_error_t *err);
void online_close (online_t *on);
mongoc_collection_t *online_collection (online_t *on, const char *db, const char *coll);
/* A driver error as ours, naming what was being done and where; notes in
 * on->transient whether it is one to retry (network, failover, shutdown). */
bool online_fail (online_t *on, bson_error_t *err, const bson_error_t *why, const char *what);

/* online_state.c: the plan's record, the lease, checkpoints. */
bool online_plan_load (online_t *on, const online_opts_t *o, bson_error_t *err);
bool online_lease_take (online_t *on, bson_error_t *err);
bool online_lease_renew (online_t *on, bson_error_t *err);
void online_lease_drop (online_t *on);
/* The plan's record {_id: name, digest, inPlace, paused, finalized}:
 * refuses a changed plan, or one started in the other mode, unless restart
 * (which forgets the old checkpoints). */
bool online_plan_record (online_t *on, bson_error_t *err);
/* verify, sync, finalize, rollback: the plan has run, as it is now, in the
 * mode given. */
bool online_plan_check (online_t *on, bson_error_t *err);
/* pause, resume: the running process sees it at its next batch. */
bool online_plan_set (online_t *on, const char *field, bool value, bson_error_t *err);
bool online_plan_paused (online_t *on, bool *paused, bson_error_t *err);
bool online_plan_finalized (online_t *on, bool *finalized, bson_error_t *err);
/* The last run's error, for status (NULL: clears it); best effort. */
bool online_plan_note_error (online_t *on, const char *message);
/* Forgets the plan's record and checkpoints (rollback). */
bool online_plan_forget (online_t *on, bson_error_t *err);
/* The checkpoint of pass p of step s: its last _id copied into last as
 * "last" (nothing when none), *done when finished. */
bool online_checkpoint_read (online_t *on, const rm_step_t *s, size_t p, bson_t *last, bool *done,
                             int64_t *seen, int64_t *changed, bson_error_t *err);
/* Written only by the lease holder (it renews the lease first). ns: the
 * namespace the pass reads. */
bool online_checkpoint_write (online_t *on, const rm_step_t *s, size_t p, const rm_nsref_t *ns,
                              const char *coll, const bson_value_t *last, int64_t seen,
                              int64_t changed, bool done, bson_error_t *err);
int online_status (online_t *on, bson_error_t *err);

/* online_passes.c: how each step runs online. The passes of step s (0:
 * it cannot run online, err says why); in_place: the --in-place form. */
size_t online_step_passes (const rm_step_t *s, bool in_place, online_pass_t *out,
                           bson_error_t *err);

/* online_names.c: where namespaces are as the plan goes. The collection
 * holding ref's documents now. */
const char *online_name_now (const online_t *on, const rm_nsref_t *ref);
/* The plan's name for collection names: its file's, without .json, dots
 * made underscores. */
void online_plan_stem (const online_t *on, char *buf, size_t cap);
/* The collection a side-by-side step writes output ref to:
 * "<coll>_remodel_<plan>_<step>", beside its source until finalize. */
void online_name_target (const online_t *on, const rm_step_t *s, const rm_nsref_t *ref,
                         char *buf, size_t cap);
/* From now on ref's documents are in coll. */
void online_name_move (online_t *on, const rm_nsref_t *ref, const char *coll);
void online_names_destroy (online_t *on);

/* online_index.c: partners are fetched by key with $in, which needs an
 * index on it. Checks db.coll has one that starts with key; without it,
 * refuses naming the createIndex to run, or creates it when create. */
bool online_index_check (online_t *on, const char *db, const char *coll, const char *key,
                         bool create, bson_error_t *err);

/* online_run.c: run, verify or sync the plan. Returns the results found
 * not as they should be (verify, sync; 0 for run), -1 on error. */
int64_t online_apply (online_t *on, online_mode_t mode, bson_error_t *err);
/* The collection each namespace ends in once every step has run (side by
 * side), without running anything: on->names. */
bool online_names_of_plan (online_t *on, bson_error_t *err);
/* The namespaces a step writes side by side (its targets). */
size_t online_step_targets (const rm_step_t *s, const online_pass_t *passes, size_t np,
                            const rm_nsref_t **out);

/* Shared by the runners (online_run.c, online_server.c). */
void online_sleep_ms (int64_t ms);
int64_t online_mono_ms (void);
/* Sleeps while the plan is paused, renewing the lease. */
bool online_wait_while_paused (online_t *on, bson_error_t *err);
/* After a transient error (network, failover, shutdown): waits with
 * backoff and returns true to try again, for up to --retry-for. */
bool online_transient_wait (online_t *on, int64_t *since, int *tries, const bson_error_t *err);

/* online_checkpoint_write, retried after transient errors (the lease
 * renewed each time); last: {"last": <_id>} or empty. */
bool online_checkpoint_save (online_t *on, const rm_step_t *s, size_t p, const rm_nsref_t *ns,
                             const char *coll, const bson_t *last, int64_t seen, int64_t changed,
                             bool done, bson_error_t *err);

/* online_finalize.c: the switch to the new design, and back. */
bool online_finalize (online_t *on, bson_error_t *err);
bool online_rollback (online_t *on, bson_error_t *err);

#endif
