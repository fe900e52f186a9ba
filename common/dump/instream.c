/* Input streams: raw bytes from a file or a callback, decompressed when the
 * first bytes say gzip or zstd, handed out through a window that grows to
 * hold the largest document asked for. Big files are read and decompressed
 * ahead by a thread (read_ahead.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instream_impl.h"

#define RAW_CAP (1u << 20)   /* compressed input is read 1 MiB at a time */
#define WINDOW_CAP (4u << 20)
/* Streams of at least this many bytes read ahead in a thread; smaller ones
 * (metadata, the tests' thousands of tiny files) never start one. */
#define READ_AHEAD_MIN (8u << 20)

const char *
rm_codec_name (rm_codec_t c)
{
    switch (c) {
    case RM_CODEC_GZIP: return "gzip";
    case RM_CODEC_ZSTD: return "zstd";
    default: return "none";
    }
}

static ssize_t
fd_read (void *ctx, void *buf, size_t len, bson_error_t *err)
{
    rm_instream_t *s = ctx;
    for (;;) {
        ssize_t r = read (s->fd, buf, len);
        if (r >= 0)
            return r;
        if (errno == EINTR && !rm_interrupted)
            continue;
        if (rm_interrupted) {
            rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
            return -1;
        }
        rm_error_set (err, RM_ERR_IO, "%s: read failed: %s", s->msg_name, strerror (errno));
        return -1;
    }
}

static rm_instream_t *
stream_new (const char *name)
{
    rm_instream_t *s = bson_malloc0 (sizeof *s);
    s->name = bson_strdup (name);
    s->msg_name = s->name;
    s->fd = -1;
    s->cap = WINDOW_CAP;
    s->buf = bson_malloc (s->cap);
    s->win = s->buf;
    return s;
}

rm_instream_t *
rm_instream_open (const char *path, bson_error_t *err)
{
    rm_instream_t *s;
    struct stat st;
    int fd;

    if (strcmp (path, "-") == 0) {
        fd = STDIN_FILENO;
    } else {
        fd = open (path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            rm_error_set (err, RM_ERR_IO, "%s: cannot open: %s", path, strerror (errno));
            return NULL;
        }
    }
    s = stream_new (strcmp (path, "-") == 0 ? "<stdin>" : path);
    s->fd = fd;
    s->own_fd = fd != STDIN_FILENO;
    s->read = fd_read;
    s->ctx = s;
    if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode)) {
        s->regular = true;
        s->raw_size = (uint64_t) st.st_size;
        posix_fadvise (fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    return s;
}

rm_instream_t *
rm_instream_new (rm_raw_read_fn read_fn, void *ctx, const char *name, uint64_t raw_size)
{
    rm_instream_t *s = stream_new (name);
    s->read = read_fn;
    s->ctx = ctx;
    s->raw_size = raw_size;
    return s;
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

/* Looks at the first bytes to pick the codec. Whatever was read for that
 * stays in raw and is consumed by the codec (or copied out for none). */
static bool
detect (rm_instream_t *s, bson_error_t *err)
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

/* A thread pays for itself on big streams from regular files only: a read
 * from a pipe may block for good, where SIGINT must still reach it. Not on
 * the first fill: the reader looks at the first bytes to learn the format,
 * and the thread starts later, at a document boundary, so that it can
 * check documents ahead (rm_instream_expect_frames). */
static bool
wants_read_ahead (const rm_instream_t *s)
{
    return s->regular && !s->ra && s->produced > 0 &&
           (s->raw_size >= READ_AHEAD_MIN || s->produced >= READ_AHEAD_MIN);
}

ssize_t
rm_instream_fill (rm_instream_t *s, size_t need, const uint8_t **data, bson_error_t *err)
{
    if (!s->raw && !s->eof && !detect (s, err))
        return -1;
    if (s->end - s->start < need && !s->eof) {
        if (s->ra || (wants_read_ahead (s) && rm_readahead_start (s))) {
            ssize_t n = rm_readahead_fill (s, need, err);
            *data = s->win + s->start;
            return n;
        }
        rm_instream_make_room (s, need);
        while (s->end - s->start < need && !s->eof) {
            size_t before = s->end;
            if (rm_interrupted) {
                rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
                return -1;
            }
            if (!rm_instream_produce (s, s->buf, &s->end, s->cap, &s->eof, err))
                return -1;
            s->produced += s->end - before;
        }
    }
    *data = s->win + s->start;
    return (ssize_t) (s->end - s->start);
}

size_t
rm_instream_window (const rm_instream_t *s, const uint8_t **data)
{
    return rm_instream_peek (s, data);
}

void
rm_instream_skip (rm_instream_t *s, size_t n)
{
    rm_instream_advance (s, n);
}

void
rm_instream_expect_frames (rm_instream_t *s)
{
    s->frames = true;
    s->frame_at = s->offset;
}

uint64_t rm_instream_offset (const rm_instream_t *s) { return s->offset; }
uint64_t
rm_instream_raw_pos (const rm_instream_t *s)
{
    return s->ra ? rm_readahead_raw_pos (s) : s->raw_pos;
}

uint64_t rm_instream_raw_size (const rm_instream_t *s) { return s->raw_size; }
rm_codec_t rm_instream_codec (const rm_instream_t *s) { return s->codec; }
const char *rm_instream_name (const rm_instream_t *s) { return s->name; }

void
rm_instream_rename (rm_instream_t *s, const char *name)
{
    bool msgs = s->msg_name == s->name; /* not while a thread has its copy */
    bson_free (s->name);
    s->name = bson_strdup (name);
    if (msgs)
        s->msg_name = s->name;
}

void
rm_instream_close (rm_instream_t *s)
{
    if (!s)
        return;
    rm_readahead_stop (s); /* before the fd and the codec it uses go */
    if (s->own_fd)
        close (s->fd);
    if (s->z_open)
        inflateEnd (&s->z);
    ZSTD_freeDStream (s->zd);
    bson_free (s->raw);
    bson_free (s->buf);
    bson_free (s->name);
    bson_free (s);
}
