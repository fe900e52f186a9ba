/* Raw document building (see docbuf.h). bson_iter_t's public fields give the
 * element's extent: raw + off is its type byte, raw + next_off the next. */
#include <string.h>

#include "docbuf.h"

size_t
rm_docbuf_begin (rm_buf_t *b)
{
    static const uint8_t zero[4] = {0};
    size_t start = b->len;
    rm_buf_append (b, zero, 4);
    return start;
}

void
rm_docbuf_copy (rm_buf_t *b, const bson_iter_t *it)
{
    rm_buf_append (b, it->raw + it->off, it->next_off - it->off);
}

const uint8_t *
rm_iter_value_bytes (const bson_iter_t *it, uint32_t *len)
{
    /* The value starts after the type byte and the key's terminator. */
    uint32_t value_off = it->off + 1 + (uint32_t) strlen (bson_iter_key (it)) + 1;
    *len = it->next_off - value_off;
    return it->raw + value_off;
}

void
rm_docbuf_key (rm_buf_t *b, bson_type_t type, const char *key)
{
    uint8_t t = (uint8_t) type;
    rm_buf_append (b, &t, 1);
    rm_buf_append (b, key, strlen (key) + 1);
}

void
rm_docbuf_copy_as (rm_buf_t *b, const char *key, const bson_iter_t *it)
{
    uint32_t len;
    const uint8_t *v = rm_iter_value_bytes (it, &len);
    rm_docbuf_key (b, bson_iter_type (it), key);
    rm_buf_append (b, v, len);
}

void
rm_docbuf_append_all (rm_buf_t *b, const bson_t *src)
{
    /* Every element: the bytes between the length prefix and the terminator. */
    rm_buf_append (b, bson_get_data (src) + 4, src->len - 5);
}

void
rm_docbuf_end (rm_buf_t *b, size_t start)
{
    static const uint8_t term = 0;
    uint32_t len;
    rm_buf_append (b, &term, 1);
    len = BSON_UINT32_TO_LE ((uint32_t) (b->len - start));
    memcpy (b->data + start, &len, 4);
}

void
rm_derived_oid (rm_buf_t *scratch, const bson_iter_t *parent_id, const char *tag, uint32_t n,
                uint8_t oid[12])
{
    uint64_t h;
    rm_buf_reset (scratch);
    rm_key_append (scratch, parent_id);
    rm_buf_append (scratch, tag, strlen (tag) + 1);
    rm_buf_append (scratch, &n, sizeof n);
    h = rm_key_hash (scratch->data, scratch->len);
    /* The parent's creation time first, so derived documents sort near it. */
    if (BSON_ITER_HOLDS_OID (parent_id))
        memcpy (oid, bson_iter_oid (parent_id)->bytes, 4);
    else
        memset (oid, 0, 4);
    for (int b = 0; b < 8; b++)
        oid[4 + b] = (uint8_t) (h >> (56 - 8 * b));
}
