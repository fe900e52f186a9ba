/* A growable byte buffer: the base type the layers above build documents,
 * keys and records in (common/base/buf.c). */
#ifndef REMODEL_BUF_H
#define REMODEL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A growable byte buffer, reused across documents (no per-document malloc
 * once it has grown). */
typedef struct {
    uint8_t *data;
    size_t len, cap;
} rm_buf_t;

void rm_buf_init (rm_buf_t *b);
void rm_buf_reset (rm_buf_t *b); /* len = 0, keeps the memory */
void rm_buf_destroy (rm_buf_t *b);
/* Makes room for n more bytes. */
void rm_buf_grow (rm_buf_t *b, size_t n);

/* Inline: document edits append a few short pieces per document. */
static inline void
rm_buf_append (rm_buf_t *b, const void *p, size_t n)
{
    /* memcpy with a NULL source is undefined even for 0 bytes. */
    if (n == 0)
        return;
    if (n > b->cap - b->len)
        rm_buf_grow (b, n);
    memcpy (b->data + b->len, p, n);
    b->len += n;
}

#endif
