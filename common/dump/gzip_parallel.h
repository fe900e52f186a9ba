/* gzip on several cores: the stream is cut into 1 MiB blocks, each
 * compressed on its own thread as an independent gzip member; the members,
 * written in order, are one gzip stream to every reader (RFC 1952 allows
 * concatenated members; gzip -d, zlib, Go's gzip and so mongorestore read
 * them). */
#ifndef REMODEL_GZIP_PARALLEL_H
#define REMODEL_GZIP_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"

typedef struct rm_pgzip rm_pgzip_t;

/* Writes finished members, in order. */
typedef bool (*rm_pgzip_emit_fn) (void *ctx, const uint8_t *data, size_t len, bson_error_t *err);

rm_pgzip_t *rm_pgzip_new (int level, int threads, rm_pgzip_emit_fn emit, void *ctx);
bool rm_pgzip_write (rm_pgzip_t *z, const void *data, size_t len, bson_error_t *err);
/* Compresses what is left and waits for every member. */
bool rm_pgzip_finish (rm_pgzip_t *z, bson_error_t *err);
void rm_pgzip_destroy (rm_pgzip_t *z);

#endif
