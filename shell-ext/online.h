/* remodel-online: the online companion. `remodel online ...` runs it (it is
 * found beside the remodel binary). It applies a plan's steps to a live
 * server in batches through libmongoc, with the core's document-level
 * transforms (remodel/docstep.h): no step is implemented here. */
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
} online_opts_t;

/* A connection and what a run keeps of its plan. */
typedef struct {
    mongoc_client_t *client;
    char where[300];        /* host:port list, never the credentials */
    const online_opts_t *o;
    rm_plan_t plan;
    char name[256];         /* the plan's name: its file's base name */
    char digest[17];        /* CRC-64 of the plan's bytes, hex */
    char owner[128];        /* this run, in the lease */
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
/* The checkpoint of step s: found (its last _id copied into last, an
 * empty document when none), or created. *done when finished. */
bool online_checkpoint_read (online_t *on, const rm_step_t *s, bson_t *last, bool *done,
                             int64_t *seen, int64_t *changed, bson_error_t *err);
bool online_checkpoint_write (online_t *on, const rm_step_t *s, const bson_value_t *last,
                              int64_t seen, int64_t changed, bool done, bson_error_t *err);
int online_status (online_t *on, bson_error_t *err);

/* online_run.c */
bool online_run (online_t *on, bson_error_t *err);

#endif
