/* An input stream's bytes as they come from its source: read, and
 * decompressed when the first bytes say gzip or zstd (instream_impl.h).
 * Below both the stream (instream.c) and its read-ahead thread
 * (read_ahead.c), which take their bytes from here. */
#include <string.h>

#include "instream_impl.h"

#define RAW_CAP (1u << 20)   /* compressed input is read 1 MiB at a time */

const char *
rm_codec_name (rm_codec_t c)
{
    switch (c) {
    case RM_CODEC_GZIP: return "gzip";
    case RM_CODEC_ZSTD: return "zstd";
    default: return "none";
    }
}

/* Reads more compressed bytes; false on error. Sets raw_eof at the end. */
static bool
raw_refill (rm_instream_t *s, bson_error_t *err)
{
    ssize_t r;
    if (s->raw_off > 0) {
        memmove (s->raw, s->raw + s->raw_off, s->raw_len - s->raw_off);
        s->raw_len -= s->raw_off;
        s->raw_off = 0;
    }
    r = s->read (s->ctx, s->raw + s->raw_len, RAW_CAP - s->raw_len, err);
    if (r < 0)
        return false;
    if (r == 0)
        s->raw_eof = true;
    s->raw_len += (size_t) r;
    s->raw_pos += (uint64_t) r;
    return true;
}

bool
rm_instream_detect (rm_instream_t *s, bson_error_t *err)
{
    s->raw = bson_malloc (RAW_CAP);
    while (s->raw_len < 4 && !s->raw_eof)
        if (!raw_refill (s, err))
            return false;
    if (s->raw_len >= 2 && s->raw[0] == 0x1f && s->raw[1] == 0x8b) {
        s->codec = RM_CODEC_GZIP;
    } else if (s->raw_len >= 4 && ((s->raw[0] == 0x28 && s->raw[1] == 0xb5 && s->raw[2] == 0x2f &&
                                    s->raw[3] == 0xfd) ||
                                   /* a skippable frame (0x184D2A50..5F) first, as pzstd
                                    * writes: the decoder passes over it */
                                   ((s->raw[0] & 0xf0) == 0x50 && s->raw[1] == 0x2a &&
                                    s->raw[2] == 0x4d && s->raw[3] == 0x18))) {
        s->codec = RM_CODEC_ZSTD;
        s->zd = ZSTD_createDStream ();
        ZSTD_initDStream (s->zd);
    } else {
        s->codec = RM_CODEC_NONE;
        memcpy (s->buf, s->raw, s->raw_len);
        s->end = s->raw_len;
        s->produced = s->raw_len;
        s->raw_len = 0;
        if (s->raw_eof)
            s->eof = true;
        return true;
    }
    if (s->codec == RM_CODEC_GZIP) {
        memset (&s->z, 0, sizeof s->z);
        if (inflateInit2 (&s->z, 16 + MAX_WBITS) != Z_OK) {
            rm_error_set (err, RM_ERR_NOMEM, "%s: cannot start gzip", s->msg_name);
            return false;
        }
        s->z_open = true;
    }
    return true;
}

/* The codecs do not say where in their input they failed: name the span of
 * compressed bytes handed to them. */
static void
corrupt (rm_instream_t *s, bson_error_t *err, const char *why)
{
    rm_error_set (err, RM_ERR_FORMAT,
                  "%s: corrupt %s data in compressed bytes %llu..%llu: %s", s->msg_name,
                  rm_codec_name (s->codec),
                  (unsigned long long) (s->raw_pos - (s->raw_len - s->raw_off)),
                  (unsigned long long) s->raw_pos, why);
}

bool
rm_instream_produce (rm_instream_t *s, uint8_t *out, size_t *end, size_t cap, bool *eof,
                     bson_error_t *err)
{
    if (s->codec == RM_CODEC_NONE) {
        ssize_t r = s->read (s->ctx, out + *end, cap - *end, err);
        if (r < 0)
            return false;
        if (r == 0)
            *eof = true;
        *end += (size_t) r;
        s->raw_pos += (uint64_t) r;
        return true;
    }

    if (s->raw_off == s->raw_len) {
        if (s->raw_eof) {
            if (s->frame_open) {
                rm_error_set (err, RM_ERR_FORMAT,
                              "%s: truncated %s stream: it ends at compressed byte %llu "
                              "inside a %s",
                              s->msg_name, rm_codec_name (s->codec),
                              (unsigned long long) s->raw_pos,
                              s->codec == RM_CODEC_GZIP ? "member" : "frame");
                return false;
            }
            *eof = true;
            return true;
        }
        if (!raw_refill (s, err))
            return false;
        return true;
    }

    if (s->codec == RM_CODEC_GZIP) {
        int zr;
        s->z.next_in = s->raw + s->raw_off;
        s->z.avail_in = (uInt) (s->raw_len - s->raw_off);
        s->z.next_out = out + *end;
        s->z.avail_out = (uInt) (cap - *end);
        s->frame_open = true;
        zr = inflate (&s->z, Z_NO_FLUSH);
        s->raw_off = s->raw_len - s->z.avail_in;
        *end = cap - s->z.avail_out;
        if (zr == Z_STREAM_END) {
            /* Concatenated members are one stream to every gzip reader. */
            s->frame_open = false;
            inflateReset (&s->z);
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            corrupt (s, err, s->z.msg ? s->z.msg : "inflate failed");
            return false;
        }
        return true;
    } else {
        ZSTD_inBuffer in = {s->raw, s->raw_len, s->raw_off};
        ZSTD_outBuffer o = {out, cap, *end};
        size_t zr = ZSTD_decompressStream (s->zd, &o, &in);
        if (ZSTD_isError (zr)) {
            corrupt (s, err, ZSTD_getErrorName (zr));
            return false;
        }
        s->raw_off = in.pos;
        *end = o.pos;
        s->frame_open = zr != 0;
        return true;
    }
}

void
rm_instream_make_room (rm_instream_t *s, size_t need)
{
    if (s->cap - s->start >= need)
        return;
    /* Slide the window to the front, and grow it for a big document. */
    memmove (s->buf, s->buf + s->start, s->end - s->start);
    s->end -= s->start;
    s->start = 0;
    if (s->cap < need) {
        s->cap = need + (need >> 3);
        s->buf = bson_realloc (s->buf, s->cap);
    }
    s->win = s->buf;
}
