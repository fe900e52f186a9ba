/* Length-prefixed BSON documents on an instream: the framing shared by
 * .bson files and mongodump archives. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "instream_impl.h"
#include "remodel/bsoncheck.h"

static rm_frame_kind_t BSON_GNUC_PRINTF (3, 4)
bad (rm_frame_t *f, size_t fault_offset, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (f->reason, sizeof f->reason, fmt, ap);
    va_end (ap);
    f->fault_offset = fault_offset;
    return RM_FRAME_ERROR;
}

rm_frame_kind_t
rm_frame_next (rm_instream_t *s, uint32_t max_len, bool check, rm_frame_t *f,
               bson_error_t *err)
{
    const uint8_t *p;
    ssize_t n;
    uint32_t len;

    f->reason[0] = '\0';
    f->fault_offset = 0;
    f->resumable = false;
    s->frame_at = s->offset; /* a boundary: the read-ahead may start here */
    /* Most documents lie whole in the window already: no fill call. */
    n = (ssize_t) rm_instream_peek (s, &p);
    if (n < 4)
        n = rm_instream_fill (s, 4, &p, err);
    f->offset = s->offset;
    if (n > 0)
        rm_instream_prefetch (p, (size_t) n);
    if (n < 0)
        return RM_FRAME_ERROR;
    if (n == 0)
        return RM_FRAME_END;
    if (n < 4)
        return bad (f, 0, "truncated: %zd stray byte(s) at the end where a document "
                    "length was expected", n);
    memcpy (&len, p, 4);
    len = BSON_UINT32_FROM_LE (len);
    if (len == 0xFFFFFFFFu) {
        rm_instream_advance (s, 4);
        return RM_FRAME_TERMINATOR;
    }
    if (len < 5)
        return bad (f, 0, "bad document length %u (the minimum is 5)", len);
    if (len > max_len)
        return bad (f, 0, "bad document length %u (the limit is %u)", len, max_len);
    if ((size_t) n < len)
        n = rm_instream_fill (s, len, &p, err);
    if (n < 0)
        return RM_FRAME_ERROR;
    if ((size_t) n < len)
        return bad (f, (size_t) n,
                    "truncated: the document's length is %u bytes but the input "
                    "ends after %zd",
                    len, n);
    /* checked already by the read-ahead thread, on the other core? */
    if (check && f->offset >= s->checked_from && f->offset + len <= s->checked_end)
        check = false;
    if (check) {
        rm_bson_fault_t fault;
        if (!rm_bson_check (p, len, &fault)) {
            snprintf (f->reason, sizeof f->reason, "%s (at byte %zu of the document)",
                      fault.reason, fault.offset);
            f->fault_offset = fault.offset;
            f->data = p;
            f->len = len;
            f->resumable = true;
            rm_instream_advance (s, len);
            return RM_FRAME_ERROR;
        }
    }
    f->data = p;
    f->len = len;
    rm_instream_advance (s, len);
    return RM_FRAME_DOC;
}
