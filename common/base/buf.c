/* A growable byte buffer. It only ever grows (doubling), so a buffer that
 * is reset and refilled for every document stops allocating once it has
 * reached the size of the largest one. Allocation failure aborts, as
 * everything built on bson_malloc does. */
#include <string.h>

#include <bson/bson.h>

#include "remodel/buf.h"

/* The first allocation: large enough for most join keys at once. */
#define RM_BUF_MIN_CAP 64

void
rm_buf_init (rm_buf_t *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void
rm_buf_reset (rm_buf_t *b)
{
    b->len = 0;
}

void
rm_buf_grow (rm_buf_t *b, size_t n)
{
    size_t cap = b->cap ? b->cap : RM_BUF_MIN_CAP;

    BSON_ASSERT (n <= SIZE_MAX - b->len);
    while (cap < b->len + n) {
        BSON_ASSERT (cap <= SIZE_MAX / 2);
        cap *= 2;
    }
    b->data = bson_realloc (b->data, cap);
    b->cap = cap;
}

void
rm_buf_destroy (rm_buf_t *b)
{
    bson_free (b->data);
    rm_buf_init (b);
}
