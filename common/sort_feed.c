/* The sort-merge joins' feed: see sort_feed.h. The record buffer lives as
 * long as the feed, so no document allocates. */
#include <string.h>

#include "sort_feed.h"
#include "sortkey.h"

bool
rm_sort_feed (rm_store_t *store, rm_sorter_t *dst, rm_sort_doc_fn fn, void *ctx,
              bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (store, err);
    rm_buf_t rec; /* [seq][payload], or [seq][slot] in its first 12 bytes */
    rm_frame_t f;
    uint64_t seq = 0;
    int rc = -1;
    bool ok = in != NULL;

    rm_buf_init (&rec);
    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        rm_sort_doc_t d = {NULL, 0, NULL, 0};
        uint8_t head[12];
        size_t off = 0;

        fn (ctx, f.data, f.len, &d);
        rm_put_be64 (head, seq++);
        if (d.payload) {
            rm_buf_reset (&rec);
            rm_buf_append (&rec, head, 8);
            rm_buf_append (&rec, d.payload, d.payload_len);
        }
        for (size_t k = 0; ok && k < d.n; k++) {
            uint32_t len;
            memcpy (&len, d.keys->data + off, 4);
            off += 4;
            if (len == RM_SORT_NO_KEY)
                continue;
            if (d.payload) {
                ok = rm_sorter_add (dst, d.keys->data + off, len, rec.data, rec.len, err);
            } else {
                uint32_t slot = BSON_UINT32_TO_BE ((uint32_t) k);
                memcpy (head + 8, &slot, 4);
                ok = rm_sorter_add (dst, d.keys->data + off, len, head, 12, err);
            }
            off += len;
        }
    }
    rm_instream_close (in);
    rm_buf_destroy (&rec);
    return ok && rc == 0 && rm_sorter_finish (dst, err);
}
