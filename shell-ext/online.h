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
} online_opts_t;

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
} online_t;

/* online_conn.c: connect and ping (errors redact credentials). */
bool online_connect (online_t *on, const online_opts_t *o, bson_error_t *err);
void online_close (online_t *on);
mongoc_collection_t *online_collection (online_t *on, const char *db, const char *coll);
/* A driver error as ours, naming what was being done and where. */
bool online_fail (online_t *on, bson_error_t *err, const bson_error_t *why, const char *what);

/* online_state.c: the plan's record, the lease, checkpoints. */
bool online_plan_load (online_t *on, const online_opts_t *o, bson_error_t *err);
bool online_lease_take (online_t *on, bson_error_t *err);
bool online_lease_renew (online_t *on, bson_error_t *err);
void online_lease_drop (online_t *on);
/* The plan's record: refuses a changed plan unless restart (which forgets
 * the old checkpoints). */
bool online_plan_record (online_t *on, bson_error_t *err);
/* The checkpoint of pass p of step s: its last _id copied into last as
 * "last" (nothing when none), *done when finished. */
bool online_checkpoint_read (online_t *on, const rm_step_t *s, size_t p, bson_t *last, bool *done,
                             int64_t *seen, int64_t *changed, bson_error_t *err);
/* Written only by the lease holder (it renews the lease first). ns: the
 * namespace the pass reads. */
bool online_checkpoint_write (online_t *on, const rm_step_t *s, size_t p, const char *ns,
                              const bson_value_t *last, int64_t seen, int64_t changed, bool done,
                              bson_error_t *err);
int online_status (online_t *on, bson_error_t *err);

/* online_passes.c: how each step runs online. The passes of step s (0:
 * it cannot run online, err says why); in_place: the --in-place form. */
size_t online_step_passes (const rm_step_t *s, bool in_place, online_pass_t *out,
                           bson_error_t *err);

/* online_names.c: where namespaces are as the plan goes. The collection
 * holding ref's documents now. */
const char *online_name_now (const online_t *on, const rm_nsref_t *ref);
/* The collection a side-by-side step writes output ref to:
 * "<coll>.remodel.<plan>.<step>", beside its source until finalize. */
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

/* online_run.c */
bool online_run (online_t *on, bson_error_t *err);

#endif
