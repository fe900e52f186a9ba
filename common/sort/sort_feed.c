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
    rm_buf_t rec; /* [seq], [slot] if any, [payload] if any */
    rm_frame_t f;
    uint64_t seq = 0;
    int rc = -1;
    bool ok = in != NULL;

    rm_buf_init (&rec);
    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        rm_sort_doc_t d = {NULL, 0, NULL, 0, false};
        uint8_t head[12];
        size_t off = 0;

        fn (ctx, f.data, f.len, &d);
        rm_put_be64 (head, seq++);
        if (!d.payload)
            d.slot = true;
        rm_buf_reset (&rec);
        rm_buf_append (&rec, head, d.slot ? 12 : 8);
        if (d.payload)
            rm_buf_append (&rec, d.payload, d.payload_len);
        for (size_t k = 0; ok && k < d.n; k++) {
            uint32_t len;
            memcpy (&len, d.keys->data + off, 4);
            off += 4;
            if (len == RM_SORT_NO_KEY)
                continue;
            if (d.slot) {
                uint32_t slot = BSON_UINT32_TO_BE ((uint32_t) k);
                memcpy (rec.data + 8, &slot, 4);
            }
            ok = rm_sorter_add (dst, d.keys->data + off, len, rec.data, rec.len, err);
            off += len;
        }
    }
    rm_instream_close (in);
    rm_buf_destroy (&rec);
    return ok && rc == 0 && rm_sorter_finish (dst, err);
}
