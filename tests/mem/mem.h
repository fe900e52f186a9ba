/* remodel-memsrv: an in-memory server speaking MongoDB's wire protocol,
 * for remodel's online tests only (never linked into the product). It
 * drives remodel's own logic without a real server's start-up and
 * latency; tests/cli/test_mem_server.sh checks its answers against
 * FerretDB and mongo-java-server. One global store, one lock: commands
 * run one at a time, whatever connection they come on. */
#ifndef MEM_H
#define MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/buf.h"

/* MongoDB's error codes the server answers with. */
enum {
    MEM_E_BAD_VALUE = 2,
    MEM_E_FAILED_TO_PARSE = 9,
    MEM_E_TYPE_MISMATCH = 14,
    MEM_E_NS_NOT_FOUND = 26,
    MEM_E_PATH_NOT_VIABLE = 28,
    MEM_E_CONFLICTING_UPDATE = 40,
    MEM_E_CURSOR_NOT_FOUND = 43,
    MEM_E_NS_EXISTS = 48,
    MEM_E_CMD_NOT_FOUND = 59,
    MEM_E_IMMUTABLE_FIELD = 66,
    MEM_E_INVALID_NS = 73,
    MEM_E_INDEX_NOT_FOUND = 27,
    MEM_E_DUP_KEY = 11000,
    MEM_E_BAD_STAGE = 40324,
};

typedef struct {
    char *name;
    bson_t key;
    bool unique;
} mem_index_t;

/* A collection: documents in insertion order (NULL where one was
 * removed, compacted when half are holes), an _id hash of slot numbers. */
typedef struct {
    char *db, *name;
    bson_t **docs;
    size_t n, cap, live, bytes;
    size_t *ids; /* open addressing: 0 empty, SIZE_MAX a hole, else slot+1 */
    size_t ids_cap, ids_used;
    bool capped;
    int64_t max_bytes, max_docs;
    bson_t options;
    mem_index_t *idx;
    size_t nidx;
} mem_coll_t;

typedef struct {
    mem_coll_t **c;
    size_t n, cap;
} mem_store_t;

/* ---- mem_store.c: the collections ---- */
mem_store_t *mem_store (void);
mem_coll_t *mem_coll_find (mem_store_t *s, const char *db, const char *name);
mem_coll_t *mem_coll_create (mem_store_t *s, const char *db, const char *name);
void mem_coll_drop (mem_store_t *s, mem_coll_t *c);
void mem_coll_free (mem_coll_t *c);
mem_coll_t *mem_coll_copy (const mem_coll_t *c);
/* The slot of the document whose _id equals id's value, or -1. */
ssize_t mem_coll_find_id (mem_coll_t *c, const bson_iter_t *id);
/* Inserts a copy (unique indexes checked first: code 11000). */
bool mem_coll_insert (mem_coll_t *c, const bson_t *doc, bson_error_t *err);
/* Replaces slot's document with a copy of doc (indexes checked). */
bool mem_coll_replace (mem_coll_t *c, size_t slot, const bson_t *doc, bson_error_t *err);
void mem_coll_remove (mem_coll_t *c, size_t slot);
/* Closes the holes removals left (slot numbers change). */
void mem_coll_tidy (mem_coll_t *c);
/* Whether doc would break a unique index against another document than
 * slot skip (-1: none). */
bool mem_coll_unique_ok (mem_coll_t *c, const bson_t *doc, ssize_t skip, bson_error_t *err);
/* Store-wide snapshots by name (test resets). */
void mem_store_save (mem_store_t *s, const char *name);
bool mem_store_restore (mem_store_t *s, const char *name);
void mem_store_sort (mem_store_t *s);

/* ---- mem_docs.c: reading documents ---- */
/* The matching slots of c (filter may be NULL: all), in order. */
typedef struct {
    bson_t **d;
    size_t n, cap;
} mem_list_t;
void mem_list_push (mem_list_t *l, bson_t *d);
void mem_list_free (mem_list_t *l, bool docs);
bool mem_match_slots (mem_coll_t *c, const bson_t *filter, size_t **slots, size_t *n,
                      bson_error_t *err);
bool mem_matches (const bson_t *filter, const bson_t *doc, bool *yes, bson_error_t *err);
void mem_sort (bson_t **d, size_t n, const bson_t *spec);
/* doc projected by spec into out (initialized here). */
bool mem_project (const bson_t *doc, const bson_t *spec, bson_t *out, bson_error_t *err);
int mem_compare_docs_by (const bson_t *a, const bson_t *b, const bson_t *spec);

/* ---- mem_update.c: update operators ---- */
/* The document after update u (operators or a replacement) into out;
 * inserting: the upsert's insert ($setOnInsert applies). */
bool mem_update_apply (const bson_t *doc, const bson_t *u, bool inserting, bson_t *out,
                       bson_error_t *err);
/* The document an upsert starts from: the filter's equalities. */
void mem_update_seed (const bson_t *filter, bson_t *out);

/* ---- mem_agg.c ---- */
bool mem_aggregate (mem_coll_t *c, const char *db, const char *coll, const bson_t *pipeline,
                    mem_list_t *out, bson_error_t *err);

/* ---- mem_oplog.c ---- */
void mem_oplog_configure (bool on, int64_t bytes);
void mem_oplog_log (const char *op, const char *db, const char *coll, const bson_t *o,
                    const bson_t *o2);
/* Writes while replaying a restore are not logged. */
void mem_oplog_pause (bool paused);
void mem_oplog_hold (int n, const char *ns);
void mem_oplog_release (void);

/* ---- commands ---- */
typedef struct {
    const char *db;     /* $db */
    const char *name;   /* the command's first key */
    const bson_t *body; /* the command with its document sequences as arrays */
    int port;
} mem_call_t;
/* A command's reply into reply (ok 1 or an error document). */
void mem_command (const mem_call_t *call, bson_t *reply);
bool mem_cmd_crud (const mem_call_t *call, bson_t *reply, bool *handled);
bool mem_cmd_write (const mem_call_t *call, bson_t *reply, bool *handled);
bool mem_cmd_admin (const mem_call_t *call, bson_t *reply, bool *handled);
bool mem_cmd_ddl (const mem_call_t *call, bson_t *reply, bool *handled);
bool mem_cmd_test (const mem_call_t *call, bson_t *reply, bool *handled);
/* A cursor reply of docs (taken), batch up to first, the rest kept. */
void mem_cursor_reply (const char *db, const char *coll, mem_list_t *docs, int64_t first,
                       bson_t *reply);
void mem_error_reply (bson_t *reply, int code, const char *msg);
/* getMore's batch of cursor id (size 0: the rest); killCursors. */
void mem_cursor_more (int64_t id, int64_t size, bson_t *reply);
bool mem_cursor_kill (int64_t id);
/* The collection a command names (its first value), in call's db. */
const char *mem_coll_name (const mem_call_t *call);
/* Answers err as an error reply (code from err->code). */
void mem_err_reply (bson_t *reply, const bson_error_t *err);
/* Settings for the tests: replica set name, failures, delays. */
typedef struct {
    char repl_set[64];
    char fail_cmd[64];
    int fail_code, fail_times;
    char delay_cmd[64];
    int delay_ms;
} mem_settings_t;
mem_settings_t *mem_settings (void);

/* ---- helpers ---- */
const char *mem_utf8 (const bson_t *b, const char *key);
bool mem_get (const bson_t *b, const char *key, bson_iter_t *it);
int64_t mem_int (const bson_t *b, const char *key, int64_t dflt);
bool mem_bool (const bson_t *b, const char *key, bool dflt);
bool mem_sub (const bson_t *b, const char *key, bson_t *out); /* document or array, borrowed */

#endif
