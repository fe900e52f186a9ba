/* A batch of one pass (online_batch.c): documents read from the server,
 * the engine's results for them. Buffers are reused from batch to batch. */
#ifndef REMODEL_ONLINE_BATCH_H
#define REMODEL_ONLINE_BATCH_H

#include "online_state.h"
#include "remodel/batchstep.h"
#include "remodel/fieldcheck.h"
#include "remodel/sorter.h"

/* online_index.c: partners are fetched by key with $in, which needs an
 * index on it. Checks db.coll has one that starts with key; without it,
 * refuses naming the createIndex to run, or creates it when create. */
bool online_index_check (online_t *on, const char *db, const char *coll, const char *key,
                         bool create, bson_error_t *err);
/* The indexes `remodel run` gives the namespaces step s creates (its
 * metadata's: an overflow page's parent_id), made on their targets
 * (targets[i] is written to db colls[i]). */
bool online_index_created (online_t *on, const rm_step_t *s, const rm_nsref_t *const *targets,
                           const char **colls, size_t n, bson_error_t *err);
/* rollback: drops the indexes the plan's runs made (noted in its record)
 * that are still there as made, saying each; never one made by others. */
bool online_index_drop_made (online_t *on, bson_error_t *err);

/* online_batch.c: the engine for a step's batches, joining by the
 * $lookup rules of --server-version, else of the server's own version
 * (buildInfo), else of MongoDB 8.0 (remodel/compile.h's
 * RM_LOOKUP_DEFAULT_VERSION): the rules the server's own $lookup follows,
 * so that client-side results are --server-side's. */
rm_batchstep_t *online_engine_new (online_t *on, const rm_step_t *s);

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
/* The verify in the window (no change log) folds each result it reads
 * into db.coll's count and digest (the sum of the documents' CRC-64s, as
 * online_coll_sum's): fold_begin asks for it, fold the accumulator to add
 * to (NULL when not asked), folded what it read of db.coll (false: none),
 * fold_end forgets them. */
typedef struct online_fold_s {
    char ns[400];
    int64_t docs;
    uint64_t sum;
} online_fold_t;
void online_blocked_fold_begin (online_t *on);
online_fold_t *online_blocked_fold (online_t *on, const char *db, const char *coll);
bool online_blocked_folded (const online_t *on, const char *db, const char *coll, int64_t *docs,
                            uint64_t *sum);
void online_blocked_fold_end (online_t *on);

/* online_partner_fields.c: appends to opts (a find's options) the
 * projection of p's partners to the fields p reads of them (remodel/
 * passes.h's partner_fields: _id, the join key, what the step reads):
 * whether it did (false: p reads whole partners, or has none). Every
 * find of a pass's join partners takes it, so that it is exact in one
 * place. */
bool online_partner_projection (const rm_pass_t *p, bson_t *opts);

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
/* A worker's list of one partition (verify --workers): child, a list
 * kept in memory (NULL when on has none open), noted into as on's is;
 * adopt appends it to on's (its count, its first, its lines) and frees
 * it, so that the partitions' lists, adopted in their order, make the
 * list one reader would have. */
online_diffs_t *online_diffs_child (const online_t *on);
void online_diffs_adopt (online_t *on, online_diffs_t *child);

/* What a pass works with: its step, its collections, the engine. */
typedef struct {
    online_t *on;
    const rm_step_t *s;
    const rm_pass_t *p;
    size_t index;                 /* the pass's number in its step, from 0 */
    const rm_nsref_t *in[4];      /* the step's inputs */
    mongoc_collection_t *drive;   /* where the driving documents are now */
    mongoc_collection_t *partner; /* where the partners are now (NULL: none) */
    rm_batchstep_t *engine;
    int64_t batch_size;           /* this batch's (--batch-time adjusts it) */
    /* A pass read by series (rm_pass_t.series): the series' values in
     * MongoDB's order, those after the checkpoint's, and how many a batch
     * takes. */
    bson_t *series;
    bson_iter_t *values;
    size_t n_values, per_batch;
    mongoc_cursor_t *cursor;      /* the pass's reading, between batches */
    /* While the plan follows a change log: the partners' keys are noted
     * as they are fetched (NULL: not noted). */
    online_keys_t *keys;
    bool ended;                   /* it reached the end */
    int64_t seen, written;
    /* The partition read (online_partition.c's bounds; NULL: the whole
     * collection): the cursor's filter holds it, and the reader keeps
     * only its _ids (what no $type alias names comes through). */
    const bson_t *part;
    /* run: the pass's partners read once (online_partners.c; NULL: each
     * batch finds its own), shared read-only by the pass's workers. */
    const struct online_partners *partners;
    /* verify, sync side by side: per keep[], the target read beside the
     * drivers' cursor (online_merge.c; NULL: none open). */
    struct online_merge *merge[4];
} online_job_t;

void online_job_destroy_series (online_job_t *j);
/* online_verify.c: a document's JSON for a message, cut to a line's
 * worth (cap bytes, "..." at the end when cut). */
void online_doc_text (const uint8_t *doc, uint32_t len, char *buf, size_t cap);

/* Reads the next range of the driving collection after last's "last"
 * value (all of it from the start when last has none) into in: returns
 * the documents read (0: the end), -1 on error. last gets the new end.
 * For a pass read by series, a range is every document of the next few
 * values of the series field, and "last" the last value read. */
int64_t online_batch_read (online_job_t *j, bson_t *last, online_docs_t *in, bson_error_t *err);

/* Reads the driving documents whose _id is among ids (an array) into in:
 * how many, -1. */
int64_t online_batch_read_ids (online_job_t *j, const bson_t *ids, online_docs_t *in,
                               bson_error_t *err);
/* A pass read by series: every driving document of the series values (an
 * array) into in, as a run's batch of them reads it: how many, -1. */
int64_t online_batch_read_series (online_job_t *j, const bson_t *values, online_docs_t *in,
                                  bson_error_t *err);
/* Calls fn with each document of c whose path holds one of values (an
 * array; {path: {$in: values}}), found with opts (a projection; NULL:
 * none); *read (when not NULL) counts them. */
typedef void (*online_batch_doc_fn) (void *ctx, const bson_t *doc);
bool online_batch_docs_where (online_job_t *j, mongoc_collection_t *c, const char *path,
                              const bson_t *values, const bson_t *opts, online_batch_doc_fn fn,
                              void *ctx, int64_t *read, bson_error_t *err);
/* The same with the _id of each. */
typedef void (*online_batch_id_fn) (void *ctx, const bson_iter_t *id);
bool online_batch_ids_where (online_job_t *j, mongoc_collection_t *c, const char *path,
                             const bson_t *values, online_batch_id_fn fn, void *ctx,
                             bson_error_t *err);

/* Closes the pass's cursor (the next read opens one after "last"), and
 * the targets' read beside it. */
void online_batch_close (online_job_t *j);

/* Reads the document with in's _id again into in (emptied first):
 * 1, 0 when it is gone, -1. */
int online_batch_reread (online_job_t *j, const bson_iter_t *id, online_docs_t *in,
                         bson_error_t *err);

/* online_partners.c: pass p's partner collection read once, with the
 * fields p reads of it (online_partner_projection), when its key is a
 * top-level field and it fits in budget bytes: NULL otherwise (err
 * set when the read failed past online_retry's retries, err->code 0 when
 * none was made or it did not fit). each calls fn with every partner a
 * find of key $in values would return, each once, in _id order: 1, -1
 * when fn failed, 0 when values hold what only the server matches (a
 * regex) or, first_wins (the first partner of a value in the server's
 * order is the one taken), a value has two partners. */
typedef struct online_partners online_partners_t;
typedef bool (*online_partners_fn) (void *ctx, const uint8_t *doc, uint32_t len,
                                    bson_error_t *err);
online_partners_t *online_partners_read (online_t *on, mongoc_collection_t *partner,
                                         const rm_pass_t *p, int64_t batch_size, size_t budget,
                                         bson_error_t *err);
int online_partners_each (const online_partners_t *c, const bson_t *values, bool first_wins,
                          online_partners_fn fn, void *ctx, bson_error_t *err);
void online_partners_destroy (online_partners_t *c);
/* The 16-byte ordering prefix of a key value (two big-endian halves):
 * a lower prefix is a lower value by rm_value_compare; an equal one is
 * an equal value when online_partner_prefix_exact says so. */
void online_partner_prefix (const bson_iter_t *v, uint64_t *hi, uint64_t *lo);
bool online_partner_prefix_exact (uint64_t hi, uint64_t lo);

/* Runs the step over in and the partners of its documents (fetched from
 * the server by key, with $in): out gets the results the pass keeps.
 * With j->keys, the partners' keys (or, for a pass without partners,
 * what the drivers hold: rm_pass_t.holds) are noted first. */
bool online_batch_compute (online_job_t *j, const online_docs_t *in, online_docs_t *out,
                           bson_error_t *err);

/* online_write.c: statements for one collection, sent in commands of the
 * server's size (online_caps_write_chunk: a few dozen on FerretDB 1.x,
 * which stops answering an update command of about a hundred). */
typedef struct {
    online_job_t *j;
    mongoc_collection_t *coll;
    online_wbatch_t *b;     /* the table's batch being filled (online_ops) */
    size_t n;
    const char *what;       /* for errors: "writing results", ... */
    int64_t matched, removed;
    /* The _ids online_writes_delete was given since the last statement,
     * sent as one (online_write.c); NULL: none. */
    bson_t *gone;
    uint32_t n_gone;
    /* A sync's rescan: the results to rewrite, held across the range's
     * batches and written together (online_writes_release), up to a
     * bound; held.n 0: none. */
    bool hold;
    online_docs_t held;
} online_writes_t;

void online_writes_init (online_writes_t *w, online_job_t *j, mongoc_collection_t *coll,
                         const char *what);
bool online_writes_delete (online_writes_t *w, const bson_iter_t *id, bson_error_t *err);
/* One statement of any kind (online_ops_t.add's), sent with the next
 * command; the two below are its forms the kept entries use. */
bool online_writes_add (online_writes_t *w, online_wkind_t kind, const bson_t *sel,
                        const bson_t *doc, bool upsert, bson_error_t *err);
/* The document sel finds deleted; replaced by doc, or inserted. */
bool online_writes_delete_where (online_writes_t *w, const bson_t *sel, bson_error_t *err);
bool online_writes_upsert (online_writes_t *w, const bson_t *sel, const bson_t *doc,
                           bson_error_t *err);
/* The error for a document of ns that changed at each of attempts
 * conditional writes, naming its _id; false. */
/* The error for ns's document doc whose what would be size bytes, past
 * what a document can hold, naming its _id; not one to retry. */
bool online_too_large (online_job_t *j, const char *ns, const uint8_t *doc, uint32_t len,
                       const char *what, uint64_t size, bson_error_t *err);
bool online_keeps_changing (const online_job_t *j, const char *ns, const uint8_t *orig,
                            uint32_t olen, int attempts, bson_error_t *err);
bool online_writes_flush (online_writes_t *w, bson_error_t *err);
/* Writes what a rescan held (online_writes_t.hold), then flushes: at the
 * end of a range, before anything reads the target again. */
bool online_writes_release (online_writes_t *w, bson_error_t *err);
/* Frees what was held and not released (a rescan stopped: the next sync
 * writes it). */
void online_writes_destroy (online_writes_t *w);
/* Side by side: out's documents into targets[keep]: inserted, or
 * rewritten (online_side_rewrite) where their _id is there already. A
 * result over 16 MiB is refused by _id before any is written. */
bool online_side_write (online_writes_t *targets, const online_docs_t *out, bson_error_t *err);
/* Side by side, a pass that writes several namespaces (embed's overflow
 * pages beside its parents): how its results split between them, counted
 * in its targets, into buf (" (500 to crm.people, 83 to overflowTo
 * crm.pages)"); "" for a pass of one, or when a count fails. */
void online_written_split (online_t *on, const rm_step_t *s, const rm_pass_t *p, char *buf,
                           size_t cap);
/* Side by side: out's documents idx[0..n) into w's collection, where their
 * _id may be there already: replaced where the server's replace keeps the
 * given field order (online_caps_replace_keeps_order: MongoDB), else
 * deleted, then inserted. mongo-java-server keeps the stored document's
 * field order on a replace (a field a source gained lands last), so there
 * the result would never be the bytes written and sync would rewrite it
 * forever. Only remodel writes these collections; a stop between a delete
 * and its insert leaves the result missing, which the batch's replay or
 * the next sync writes. With w->hold, copied and written later. */
bool online_side_rewrite (online_writes_t *w, const online_docs_t *out, const size_t *idx, size_t n,
                          bson_error_t *err);

/* In place: the backups, then the conditional replaces, of in's documents
 * that out changes (redone alone when the application got there first). */
typedef struct {
    online_job_t *j;
    mongoc_collection_t *backup;
    online_docs_t again, again_out; /* a document read again, its result */
    rm_fieldcheck_t *reads;         /* the fields the step reads (a batch's) */
    /* copy, move: the step's "to", and its documents of a batch's _ids
     * (online_write_select.c; NULL for the other steps). */
    mongoc_collection_t *to;
    online_docs_t have;
} online_inplace_t;
/* online_write_rule.c: a digest of doc's top-level fields and values that
 * does not depend on their order (a sum of each field's CRC-64): what a
 * backup's wroteFields holds, so that rollback knows remodel's version in
 * another order. */
uint64_t online_fields_digest (const uint8_t *doc, uint32_t len);
bool online_inplace_write (online_inplace_t *ip, const online_docs_t *in, const online_docs_t *out,
                           bson_error_t *err);
/* online_write_select.c: in place, copy, move and delete (their
 * journal, and rollback's use of it: online_rollback_select.c).
 * online_select_step: whether s is one of them. online_select_open: ip's
 * "to" for step s (none for a delete or another step); _close frees it.
 * online_select_write: the batch in, whose results are out, made so on
 * the server (write) or only counted: into "to" the documents selected
 * (copy, move) and, a copy's, out of it those its source no longer makes;
 * out of "from" the selected (move, delete), each journaled in ip's
 * backups first. ids (may be NULL): the _ids the batch was read for, of
 * which those not in in are gone (a copy's are taken out of "to").
 * *differ: the documents that were (or would be) changed; with ahead,
 * their _ids are noted for the steps after (online_made_note) before any
 * write, and added to changed (NULL: not) once written, under each
 * namespace's name. */
bool online_select_step (const rm_step_t *s);
void online_select_open (online_inplace_t *ip, online_t *on, const rm_step_t *s);
void online_select_close (online_inplace_t *ip);
bool online_select_write (online_inplace_t *ip, const bson_t *ids, const online_docs_t *in,
                          const online_docs_t *out, bool write, bool ahead,
                          online_changes_t *changed, int64_t *differ, bson_error_t *err);
/* verify's and sync's rescan of a copy in place, after its pass: the
 * documents of "to" whose source is gone from "from" (and no later step
 * of the plan took it), counted into *differ; sync removes them. */
bool online_select_extras (online_t *on, const rm_step_t *s, online_mode_t mode, int64_t *differ,
                           bson_error_t *err);

/* The replacement of doc (as read) by want in c, on condition that the
 * document still holds each of doc's fields, a field the application
 * added since given back at once by a conditional $set (online_write.c):
 * *replaced whether it matched, *undid whether it gave something back. */
bool online_replace_checked (online_t *on, mongoc_collection_t *c, const uint8_t *doc,
                             uint32_t len, const uint8_t *want, uint32_t wlen, bool *replaced,
                             bool *undid, bson_error_t *err);

/* In place, field by field (online_undo.c): into add (a backup's
 * $addToSet), fieldsWrote.<field> for each top-level field want sets or
 * removes of doc (false: a name a $set cannot take, the backup is then
 * marked undoWhole); the room that takes in a backup; and what rollback
 * does with a document now, given its backup and its original: */
bool online_undo_note (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen,
                       bson_t *add);
uint64_t online_undo_room (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen);
typedef enum {
    ONLINE_UNDO_UNKNOWN, /* no field noted (an earlier remodel's backup): judged whole */
    ONLINE_UNDO_WHOLE,   /* every difference from the original remodel's: replaced by it */
    ONLINE_UNDO_FIELDS,  /* the application's fields kept: update (on sel) gives remodel's back */
    ONLINE_UNDO_DONE,    /* remodel's fields hold their original values already */
    ONLINE_UNDO_KEEP,    /* the application wrote a field remodel wrote: held names it */
} online_undo_t;
online_undo_t online_undo_plan (const bson_t *backup, const uint8_t *orig, uint32_t olen,
                                const bson_t *now, bson_t *sel, bson_t *update, char *held,
                                size_t cap);

/* The result for in's ith document among out's, found by _id, from *at on
 * (results mostly come in the input's order); -1: none. */
ssize_t online_result_of (const online_docs_t *in, size_t i, const online_docs_t *out, size_t *at);
bool online_same_doc (const online_docs_t *a, size_t i, const online_docs_t *b, size_t k);
/* How many of in's documents out changes. */
int64_t online_would_change (const online_docs_t *in, const online_docs_t *out);

/* A sync's rescan, side by side, of a target whose results are their
 * drivers' own (online_merge.c): the results no driver makes, found by
 * the merge as it reads the target beside the drivers, and removed there,
 * so that the step's end need not read the target's and the drivers' _ids
 * again (online_check_extras) where the merge read every range to its
 * end. Shared by the pass's workers (atomic). */
typedef struct {
    int64_t ranges;  /* the ranges the pass ran */
    int64_t whole;   /* of them, those the merge read to the end, every _id sure */
    int64_t removed; /* results removed */
} online_orphans_t;

/* What a pass does with its batches. */
typedef struct {
    online_mode_t mode;
    online_writes_t targets[4];   /* side by side: per keep[] */
    online_idset_t *sets[4];      /* per keep[]: the _ids of the step's results */
    online_orphans_t *orphans[4]; /* per keep[]: a sync's, found by the merge (or NULL) */
    online_inplace_t ip;          /* in place */
    online_docs_t found;          /* verify, sync: the targets' documents */
    int64_t differ;               /* verify, sync: results not as they should be */
    int reported;
    /* A worker's (online_run.c): the pass's count of ranges reported,
     * shared by its workers (atomic), so that the first ONLINE_REPORT_MAX
     * are shown whatever their number (NULL: reported alone counts). */
    int *reported_pass;
    /* sync from the change log: the _ids of results rewritten, noted
     * under their namespace for the steps that read them (NULL: none). */
    struct online_changes_s *changed;
} online_passrun_t;

/* Reports a range that differs: the first ONLINE_REPORT_MAX of a pass
 * (all its workers together), then a count. */
#define ONLINE_REPORT_MAX 10

/* online_verify.c */
/* "remodel: verify: step ... the range after {_id}: N <what>" */
void online_report_range (online_job_t *j, online_passrun_t *pr, const bson_t *before, int64_t n,
                          const char *what);
/* Verify or sync one batch side by side: its results against the targets'
 * documents of the same _ids (sync rewrites those that differ). in: the
 * batch's drivers where it is a range read after before's "last" (the
 * targets are then read beside it, online_merge.c); NULL: drivers picked
 * by _id (a change log's), whose results are read by their _ids. */
bool online_check_side (online_job_t *j, online_passrun_t *pr, const online_docs_t *out,
                        const bson_t *before, const online_docs_t *in, bson_error_t *err);

/* online_merge.c: a range's targets read beside its drivers. */
/* Whether keep k's results for the batch of drivers in can be read so:
 * each result is its driver's own (its _id the driver's), in a pass read
 * by _id ranges. */
bool online_merge_fits (const online_job_t *j, size_t k, const online_docs_t *in);
/* Into found (and fold, when not NULL): c's documents whose _id is that
 * of a result of keep k in out, as a query of those _ids would give them,
 * from one cursor over the range in _id order, opened after before's
 * "last" and kept open from batch to batch. */
/* gone (NULL: not asked): called with each target document's _id in the
 * range that no driver of the batch has, where the merge is sure of it
 * (online_orphans_t). */
typedef struct {
    bool (*fn) (void *ctx, const bson_iter_t *id, bson_error_t *err);
    void *ctx;
} online_merge_gone_t;
bool online_merge_read (online_job_t *j, size_t k, mongoc_collection_t *c, const bson_t *before,
                        const online_docs_t *in, const online_docs_t *out, online_docs_t *found,
                        online_fold_t *fold, const online_merge_gone_t *gone, bson_error_t *err);
/* At the end of a range (its drivers read to their end): the rest of keep
 * k's merge's target read, each document of it to gone, and the range
 * counted in orph, whole or not. */
bool online_merge_rest (online_job_t *j, size_t k, online_orphans_t *orph,
                        const online_merge_gone_t *gone, bson_error_t *err);
/* online_verify.c: a sync's rescan at the end of a range: what no driver
 * makes past its last driver removed (online_merge_rest), the removals
 * and the rewrites held sent. */
bool online_check_side_end (online_job_t *j, online_passrun_t *pr, bson_error_t *err);
void online_merge_close (online_job_t *j);
/* Into filter (initialized here): the driving collection's documents
 * after last's "last" (all without one), within j's partition. */
bool online_batch_range_filter (const online_job_t *j, const bson_t *last, bson_t *filter,
                                bson_error_t *err);
/* Run side by side: no two results of a target with one _id (an error
 * naming both). */
bool online_check_unique (online_job_t *j, online_passrun_t *pr, const online_docs_t *out,
                          bson_error_t *err);
/* Run, a set gone to disk (online_idset_note): two results of the step's
 * target for ref with one _id, found at the end of the step in hash
 * order (the later has replaced the earlier in the side-by-side result):
 * an error naming the _id. */
bool online_check_dups (online_t *on, const rm_step_t *s, const rm_nsref_t *ref, online_idset_t *set,
                        bson_error_t *err);
/* Verify, sync: the documents of the step's target for ref that no range
 * made (sync removes them); counted into *differ. drivers: for a target
 * whose results name their driver in field (rm_pass_t.driver_field), the
 * driving collection, whose _ids are merged with the target's field (set
 * is then unused); NULL: set holds every result's _id. orph: what a
 * sync's merge removed already (counted here too), and, where it read
 * every range whole, the drivers are not merged again (NULL: none). */
bool online_check_extras (online_t *on, const rm_step_t *s, const rm_nsref_t *ref,
                          online_idset_t *set, mongoc_collection_t *drivers, const char *field,
                          const online_orphans_t *orph, online_mode_t mode, int64_t *differ,
                          bson_error_t *err);
/* Verify, sync, a pass whose results name their driver (rm_pass_t.
 * driver_field): the target's results of the drivers ids (an array) that
 * out does not make again: counted into *missing; sync removes them (and
 * notes them in pr->changed). */
bool online_check_missing (online_job_t *j, online_passrun_t *pr, const bson_t *ids,
                           const online_docs_t *out, int64_t *missing, bson_error_t *err);
/* The documents of target whose field (their driver's _id: "_id", or
 * rm_pass_t.driver_field) names no document in drivers (merged in that
 * order, each confirmed by a lookup): counted into *extra; deleted
 * through del when not NULL. */
bool online_check_orphans (online_t *on, mongoc_collection_t *target, const char *ns,
                           const char *field, mongoc_collection_t *drivers, online_writes_t *del,
                           int64_t *extra, bson_error_t *err);
/* online_diffs.c: verify in place, the documents of in that out changes
 * noted as differing (online_diff_note), under ns. */
void online_diffs_inplace (online_t *on, const char *ns, const online_docs_t *in,
                           const online_docs_t *out);

/* online_verify.c: a result naming its driver in another field than _id
 * may take the _id of another driver's result (an extract's child with an
 * _id of its own): an overwrite, unless that driver is one of drivers
 * (recomputed too: the child moved) or is gone (the result an orphan).
 * Checked against the target before a batch of out is written: an error
 * naming the document there. */
bool online_check_claimed (online_job_t *j, online_passrun_t *pr, const online_docs_t *out,
                           const online_idlist_t *drivers, bson_error_t *err);

/* ---- server-free decisions (issue 53; tests/unit/test_online_write.c,
 * test_online_undo.c): plain values in, a choice and the documents it
 * sends out, no server. ---- */

/* online_write_rule.c: the most a document can hold (MongoDB's
 * BSONObjectMaxUserSize). A larger one is refused before anything of its
 * batch is written: servers answer it with an error no retry mends, or
 * (mongo-java-server) by dropping the connection, which would look
 * transient. */
#define ONLINE_DOC_MAX 16777216
/* Whether doc (as read) can become want in place, its backup beside it:
 * *size is want's (DOC_TOO_LARGE) or the backup's (otherwise). */
typedef enum {
    ONLINE_WRITE_FITS,
    ONLINE_WRITE_DOC_TOO_LARGE,    /* want is over ONLINE_DOC_MAX */
    ONLINE_WRITE_BACKUP_TOO_LARGE, /* the original and its checksums are */
} online_write_fit_t;
online_write_fit_t online_write_fits (const uint8_t *doc, uint32_t len, const uint8_t *want,
                                      uint32_t wlen, uint64_t *size);
/* The backup of doc before it becomes want, upserted on sel ({_id}):
 * u is {$setOnInsert: {doc}, $set: {wrote, wroteFields[, undoWhole]},
 * $addToSet: {read, wrote_all, fieldsWrote.<field>...}}. */
void online_write_backup (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen,
                          bson_t *sel, bson_t *u);
/* How doc becomes want in place: FIELDS when a $set/$unset of top-level
 * fields (u) gives exactly want's bytes on the server; REPLACE otherwise
 * (u left empty; online_replace_checked). u is initialised either way. */
typedef enum {
    ONLINE_WRITE_FIELDS,
    ONLINE_WRITE_REPLACE,
} online_write_form_t;
online_write_form_t online_write_form (const uint8_t *doc, uint32_t len, const uint8_t *want,
                                       uint32_t wlen, bson_t *u);
/* The condition update u of doc is written on, into sel (initialised
 * here): the _id, each top-level field the step reads (reads, those of
 * namespace ns) and each u writes, as read: a value, or {$exists: false}. */
void online_write_filter (const rm_fieldcheck_t *reads, const char *ns, const uint8_t *doc,
                          uint32_t len, const bson_t *u, bson_t *sel);
/* After doc (as read) was replaced by want and the server answered with
 * pre (what it replaced): the application's writes in between, given
 * back by u ({$set}) on sel (the _id, and each such field as want gave
 * it). false: nothing to give back (sel and u initialised either way). */
bool online_write_give_back (const uint8_t *doc, uint32_t len, const uint8_t *pre, uint32_t plen,
                             const uint8_t *want, uint32_t wlen, bson_t *sel, bson_t *u);
/* An insert of idx[from..to) that failed with error code and reply:
 * FAIL (not only duplicate keys, or rewrite_dups false: an error),
 * REWRITE_DUPS (the rest inserted: dups[0..*nd) rewritten), REWRITE_ALL
 * (the server stopped at a duplicate: the whole chunk rewritten). dups
 * holds to - from. */
typedef enum {
    ONLINE_INSERT_FAIL,
    ONLINE_INSERT_REWRITE_DUPS,
    ONLINE_INSERT_REWRITE_ALL,
} online_insert_retry_t;
online_insert_retry_t online_insert_failed (const bson_t *reply, uint32_t code, bool rewrite_dups,
                                            const size_t *idx, size_t from, size_t to,
                                            size_t *dups, size_t *nd);
/* ---- end of the server-free decisions ---- */

/* online_kept.c: run --keep-before. step: whether s keeps what it
 * overwrites or drops in this run (a set of top-level fields, a delete;
 * never in place). key: {name: {s: step, i: id}},
 * an entry's _id, appended to b. batch: in's drivers and their results
 * out: each one's entry written, or (sync: a sync's, which also deletes
 * the entries of ids, the drivers it recomputed, that are gone) deleted
 * where it loses nothing now (online_kept_name's collection). */
bool online_kept_step (const online_t *on, const rm_step_t *s);
void online_kept_key (bson_t *b, const char *name, size_t step, const bson_iter_t *id);
bool online_kept_batch (online_job_t *j, const bson_t *ids, const online_docs_t *in,
                        const online_docs_t *out, bool sync, bson_error_t *err);

#endif
