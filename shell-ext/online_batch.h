/* A batch of one pass (online_batch.c): documents read from the server,
 * the engine's results for them. Buffers are reused from batch to batch. */
#ifndef REMODEL_ONLINE_BATCH_H
#define REMODEL_ONLINE_BATCH_H

#include "online.h"
#include "remodel/batchstep.h"

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

/* What a pass works with: its step, its collections, the engine. */
typedef struct {
    online_t *on;
    const rm_step_t *s;
    const online_pass_t *p;
    size_t index;                 /* the pass's number in its step, from 0 */
    const rm_nsref_t *in[4];      /* the step's inputs */
    mongoc_collection_t *drive;   /* where the driving documents are now */
    mongoc_collection_t *partner; /* where the partners are now (NULL: none) */
    rm_batchstep_t *engine;
    int64_t seen, written;
} online_job_t;

void online_docs_init (online_docs_t *d);
void online_docs_reset (online_docs_t *d);
void online_docs_destroy (online_docs_t *d);
void online_docs_add (online_docs_t *d, const uint8_t *doc, uint32_t len, int keep);
static inline const uint8_t *
online_doc_bytes (const online_docs_t *d, size_t i)
{
    return d->bytes.data + d->docs[i].off;
}

/* Reads the next range of the driving collection after last's "last"
 * value (all of it from the start when last has none) into in: returns
 * the documents read (0: the end), -1 on error. last gets the new end. */
int64_t online_batch_read (online_job_t *j, bson_t *last, online_docs_t *in, bson_error_t *err);

/* Reads the document with in's _id again into in (emptied first):
 * 1, 0 when it is gone, -1. */
int online_batch_reread (online_job_t *j, const bson_iter_t *id, online_docs_t *in,
                         bson_error_t *err);

/* Runs the step over in and the partners of its documents (fetched from
 * the server by key, with $in): out gets the results the pass keeps. */
bool online_batch_compute (online_job_t *j, const online_docs_t *in, online_docs_t *out,
                           bson_error_t *err);

/* Whether two documents carry the same _id (bytes and type). */
bool online_same_id (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen);
/* {_id: <doc's _id>} into sel (false: no _id). */
bool online_id_filter (const uint8_t *doc, uint32_t len, bson_t *sel);

#endif
