/* A store: documents of one namespace parked between the engine's steps in
 * a zstd-compressed temporary file (framed BSON, exactly as in a .bson
 * file), written once and read back as often as needed. */
#ifndef REMODEL_STORE_H
#define REMODEL_STORE_H

#include "remodel/stream.h"

typedef struct rm_store rm_store_t;

rm_store_t *rm_store_new (const char *tmpdir, const char *label, bson_error_t *err);

/* A sink looks like a store to the steps but keeps nothing: each document
 * goes to add as it comes, and seal is called once at the end. It cannot
 * be opened for reading. */
typedef struct {
    bool (*add) (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err);
    bool (*seal) (void *ctx, bson_error_t *err);
} rm_store_sink_t;
rm_store_t *rm_store_new_sink (const char *label, const rm_store_sink_t *sink, void *ctx);
bool rm_store_add (rm_store_t *s, const uint8_t *doc, uint32_t len, bson_error_t *err);
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
