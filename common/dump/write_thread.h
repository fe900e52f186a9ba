/* Writes to regular files done by a background thread, so that the
 * kernel's copy into the page cache overlaps with the parsing that produces
 * the next bytes (see write_thread.c). Internal to the outstreams. */
#ifndef REMODEL_WRITE_THREAD_H
#define REMODEL_WRITE_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remodel/error.h"

/* Every buffer is this large: a write() of 1 MiB costs few syscalls. */
#define RM_WSINK_BUF (1u << 20)

/* One file descriptor's queue of buffers waiting for the thread. */
typedef struct rm_wsink rm_wsink_t;

/* Starts a queue for fd (left open); name is used in messages. The thread
 * itself starts only when a first full buffer is handed over. */
rm_wsink_t *rm_wsink_new (int fd, const char *name);

/* The buffer to fill next, RM_WSINK_BUF bytes, owned by the sink. */
uint8_t *rm_wsink_buf (rm_wsink_t *k);

/* The sink's error, an errno (0: none), set by the thread when a write
 * fails: cheap enough to look at on every write, so that the next call
 * reports the failure. */
const atomic_int *rm_wsink_status (const rm_wsink_t *k);

/* Queues the first len bytes of the current buffer for writing and moves on
 * to a fresh buffer (waiting for one while every buffer is in flight).
 * false, err set, if an earlier write of this sink failed. */
bool rm_wsink_submit (rm_wsink_t *k, size_t len, bson_error_t *err);

/* Adds n bytes at p to the current buffer after its first len bytes (its
 * own, filled by the caller), without copying them: p must stay valid and
 * unchanged until the sink is destroyed. The caller goes on filling the
 * buffer after len. 1 when that filled the buffer and it was queued (the
 * caller starts again at 0 in rm_wsink_buf), 0 when not, -1 (err set) as
 * rm_wsink_submit fails. */
int rm_wsink_hold (rm_wsink_t *k, size_t len, const uint8_t *p, size_t n, bson_error_t *err);

/* True when the current buffer holds such bytes: it must go through
 * rm_wsink_submit, not be written from rm_wsink_buf alone. */
bool rm_wsink_held (const rm_wsink_t *k);

/* Waits until every queued buffer is written; false, err set, if one
 * failed. The caller may then write to the fd itself. */
bool rm_wsink_drain (rm_wsink_t *k, bson_error_t *err);

/* Drops queued buffers the thread has not started, waits for the one it is
 * writing, and frees the sink (the last one stops the thread). */
void rm_wsink_destroy (rm_wsink_t *k);

#endif
