/* The next valid document for every format reader (reader_impl.h): bad
 * ones set aside in the quarantine file when --skip-invalid allows it,
 * the documents' CRC summed in runs. Apart from reader.c, which opens the
 * formats, so that the formats call down to this file and never back up
 * to their opener. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "instream_impl.h"
#include "reader_impl.h"
#include "remodel/crc64.h"

bool
rm_reader_write_all (int fd, const char *name, const uint8_t *p, size_t n, bson_error_t *err)
{
    while (n > 0) {
        ssize_t w = write (fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rm_error_set (err, RM_ERR_IO, "%s: write failed: %s", name, strerror (errno));
            return false;
        }
        p += w;
        n -= (size_t) w;
    }
    return true;
}

/* Opened at the first bad document, so that a run refused before reading
 * (an existing destination, a bad option) leaves the file alone. */
static bool
open_quarantine (rm_reader_t *r, bson_error_t *err)
{
    r->quarantine_fd = open (r->opts.quarantine, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (r->quarantine_fd < 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot create the quarantine file: %s",
                      r->opts.quarantine, strerror (errno));
        return false;
    }
    return true;
}

static bool
quarantine (rm_reader_t *r, const rm_frame_t *f, bson_error_t *err)
{
    if (!r->opts.quarantine)
        return true;
    if (r->quarantine_fd < 0 && !open_quarantine (r, err))
        return false;
    return rm_reader_write_all (r->quarantine_fd, r->opts.quarantine, f->data, f->len, err);
}

void
rm_reader_crc_flush (rm_reader_t *r)
{
    rm_crc_run_t *run = &r->crc_run;
    if (run->len > 0)
        run->ns->crc = rm_crc64_update (run->ns->crc, run->start, run->len);
    run->len = 0;
    run->ns = NULL;
    run->s = NULL;
}

/* True when the next frame on s lies whole in the window already, so that
 * reading it cannot move the bytes of the pending run. */
static bool
next_frame_in_window (rm_instream_t *s)
{
    const uint8_t *p;
    size_t n = rm_instream_peek (s, &p);
    uint32_t len;

    if (n < 4)
        return false;
    memcpy (&len, p, 4);
    len = BSON_UINT32_FROM_LE (len);
    return len == 0xFFFFFFFFu || len <= n;
}

/* Extends the pending run with the document f, or starts a new run. */
static void
crc_run_add (rm_reader_t *r, rm_instream_t *s, rm_ns_t *ns, const rm_frame_t *f)
{
    rm_crc_run_t *run = &r->crc_run;
    if (run->len > 0 && run->ns == ns && run->s == s && run->start + run->len == f->data) {
        run->len += f->len;
        return;
    }
    rm_reader_crc_flush (r);
    run->ns = ns;
    run->s = s;
    run->start = f->data;
    run->len = f->len;
}

uint32_t
rm_reader_frame_run (rm_reader_t *r, rm_instream_t *s, rm_ns_t *ns, uint32_t max_len,
                     rm_frame_t *f)
{
    const uint8_t *p;
    size_t n = rm_instream_peek (s, &p), i = 0;
    uint32_t count = 1;

    /* The pending CRC run ends with f, and f just before the window. */
    if (!r->runs || f->len >= RM_READER_RUN_MAX || f->data + f->len != p ||
        r->crc_run.ns != ns || r->crc_run.start + r->crc_run.len != p)
        return 1;
    while (n - i >= 4) {
        uint32_t len;
        memcpy (&len, p + i, 4);
        len = BSON_UINT32_FROM_LE (len);
        /* A terminator, a length rm_frame_next refuses, a document not
         * whole in the window or not checked yet: rm_reader_frame's. */
        if (len == 0xFFFFFFFFu || len < 5 || len > max_len || len > n - i ||
            f->len + len > RM_READER_RUN_MAX ||
            (!r->opts.no_check &&
             !(s->offset + i >= s->checked_from && s->offset + i + len <= s->checked_end)))
            break;
        rm_instream_prefetch (p + i, n - i);
        i += len;
        f->len += len;
        ns->docs++;
        ns->bytes += len;
        count++;
    }
    r->crc_run.len += i;
    rm_instream_advance (s, i);
    s->frame_at = s->offset;
    return count;
}

rm_frame_kind_t
rm_reader_frame (rm_reader_t *r, rm_instream_t *s, rm_ns_t *ns, uint32_t max_len,
                 rm_frame_t *f, bson_error_t *err)
{
    char name[512];
    rm_frame_kind_t k;

    for (;;) {
        if (r->crc_run.len > 0 && (r->crc_run.s != s || !next_frame_in_window (s)))
            rm_reader_crc_flush (r); /* the window may move or be freed */
        k = rm_frame_next (s, max_len, !r->opts.no_check, f, err);
        if (k != RM_FRAME_ERROR)
            break;
        if (f->reason[0] == '\0') /* I/O or decompression: err is set */
            return k;
        /* Only a collection's documents can be set aside: a bad archive
         * header, prelude or segment header is the dump's own structure. */
        if (f->resumable && r->opts.skip_invalid && ns) {
            if (!quarantine (r, f, err))
                return RM_FRAME_ERROR;
            ns->invalid++;
            r->skipped++;
            continue;
        }
        rm_error_doc (err, RM_ERR_FORMAT, rm_instream_name (s), ns ? rm_ns_name (ns, name, sizeof name) : NULL,
                      (ns ? ns->docs + ns->invalid : 0) + 1, f->offset, "%s",
                      f->reason);
        return RM_FRAME_ERROR;
    }
    if (k == RM_FRAME_DOC && ns) {
        ns->docs++;
        ns->bytes += f->len;
        crc_run_add (r, s, ns, f);
    }
    return k;
}
