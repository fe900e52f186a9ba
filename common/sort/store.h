/* A store: documents of one namespace parked between the engine's steps in
 * a temporary file (framed BSON, exactly as in a .bson file), or in memory
 * while a pool's share of --memory holds them, written once and read back
 * as often as needed. */
#ifndef REMODEL_STORE_H
#define REMODEL_STORE_H

#include "remodel/stream.h"

typedef struct rm_store rm_store_t;

rm_store_t *rm_store_new (const char *tmpdir, const char *label, bson_error_t *err);

/* The memory in-memory stores share: a store whose next document would
 * take used past cap moves to its file, whole, and stays there. */
typedef struct {
    uint64_t cap, used;
} rm_store_pool_t;
/* A store that keeps its documents in memory while the pool has room. */
rm_store_t *rm_store_new_pooled (const char *tmpdir, const char *label, rm_store_pool_t *pool,
                                 bson_error_t *err);
/* Moves an in-memory store's documents to its file (nothing if there). */
bool rm_store_spill (rm_store_t *s, bson_error_t *err);
/* The documents of a sealed in-memory store, one after another, and their
 * bytes; NULL if the store is a file. */
const uint8_t *rm_store_mem (const rm_store_t *s, size_t *len);

/* A sink looks like a store to the steps but keeps nothing: each document
 * goes to add as it comes, and seal is called once at the end. It cannot
 * be opened for reading. */
typedef struct {
    bool (*add) (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err);
    bool (*seal) (void *ctx, bson_error_t *err);
} rm_store_sink_t;
rm_store_t *rm_store_new_sink (const char *label, const rm_store_sink_t *sink, void *ctx);
bool rm_store_add (rm_store_t *s, const uint8_t *doc, uint32_t len, bson_error_t *err);
/* As rm_store_add, for a document that stays valid and unchanged as long
 * as the store is read (a mapped input's, rm_item_t.held: in a read-only
 * mapping of a file): while such documents come back to back, an
 * in-memory store keeps them where they are instead of copying them, and
 * once done with them gives their pages back (madvise). */
bool rm_store_add_held (rm_store_t *s, const uint8_t *doc, uint32_t len, bson_error_t *err);
/* Ends writing; the store can then be read. */
bool rm_store_seal (rm_store_t *s, bson_error_t *err);
/* A new reader over the documents (rm_frame_next with check = false: they
 * were checked when they entered). */
rm_instream_t *rm_store_open (rm_store_t *s, bson_error_t *err);
/* The next document of a reader rm_store_open made: 1, 0 at the end, -1
 * (a damaged temporary file, named). */
int rm_store_next (rm_instream_t *s, rm_frame_t *f, bson_error_t *err);
uint64_t rm_store_count (const rm_store_t *s);
uint64_t rm_store_bytes (const rm_store_t *s);
const char *rm_store_label (const rm_store_t *s);
/* Removes the file. */
void rm_store_destroy (rm_store_t *s);

#endif
