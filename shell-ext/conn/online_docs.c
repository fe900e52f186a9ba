/* Documents one after another in one buffer (online_docs_t), and their
 * _ids: compared, and as the filter that finds them. The lowest layer:
 * batches, the key map and the writes all hold documents so. */
#include <string.h>

#include "online.h"
#include "remodel/docpath.h"
#include "remodel/value.h"

void
online_docs_init (online_docs_t *d)
{
    memset (d, 0, sizeof *d);
    rm_buf_init (&d->bytes);
}

void
online_docs_reset (online_docs_t *d)
{
    rm_buf_reset (&d->bytes);
    d->n = 0;
}

void
online_docs_destroy (online_docs_t *d)
{
    rm_buf_destroy (&d->bytes);
    bson_free (d->docs);
}

void
online_docs_add (online_docs_t *d, const uint8_t *doc, uint32_t len, int keep)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 256;
        d->docs = bson_realloc (d->docs, d->cap * sizeof *d->docs);
    }
    d->docs[d->n++] = (online_doc_t){d->bytes.len, len, keep};
    rm_buf_append (&d->bytes, doc, len);
}

static bool
raw_id (const uint8_t *doc, uint32_t len, rm_raw_value_t *v)
{
    bson_iter_t it;
    return rm_doc_field (doc, len, "_id", 3, &it) && rm_raw_value_of (&it, v);
}

bool
online_same_id (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    rm_raw_value_t x, y;
    return raw_id (a, alen, &x) && raw_id (b, blen, &y) && x.type == y.type && x.len == y.len &&
           memcmp (x.data, y.data, x.len) == 0;
}

void
online_id_append (bson_t *sel, const bson_iter_t *id)
{
    bson_iter_t in;
    bson_t eq;
    if (BSON_ITER_HOLDS_DOCUMENT (id) && bson_iter_recurse (id, &in) && bson_iter_next (&in) &&
        bson_iter_key (&in)[0] == '$') {
        BSON_APPEND_DOCUMENT_BEGIN (sel, "_id", &eq);
        bson_append_iter (&eq, "$eq", 3, id);
        bson_append_document_end (sel, &eq);
    } else {
        bson_append_iter (sel, "_id", 3, id);
    }
}

bool
online_id_filter (const uint8_t *doc, uint32_t len, bson_t *sel)
{
    bson_iter_t it;
    bson_init (sel);
    if (!rm_doc_field (doc, len, "_id", 3, &it))
        return false;
    online_id_append (sel, &it);
    return true;
}
