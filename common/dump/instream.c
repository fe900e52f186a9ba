/* Input streams: raw bytes from a file or a callback, decompressed when the
 * first bytes say gzip or zstd, handed out through a window that grows to
 * hold the largest document asked for. Big files are read and decompressed
 * ahead by a thread (read_ahead.c); both take their bytes from the codec
 * (instream_codec.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instream_impl.h"

#define WINDOW_CAP (4u << 20)
/* Streams of at least this many bytes read ahead in a thread; smaller ones
 * (metadata, the tests' thousands of tiny files) never start one. */
#define READ_AHEAD_MIN (8u << 20)

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

rm_instream_t *
rm_instream_new_memory (const uint8_t *data, size_t len, const char *name)
{
    rm_instream_t *s = bson_malloc0 (sizeof *s);
    s->name = bson_strdup (name);
    s->msg_name = s->name;
    s->fd = -1;
    /* The whole stream is the window, and it has ended: rm_instream_fill
     * never reads or grows buf. */
    s->win = (uint8_t *) (data ? data : (const uint8_t *) "");
    s->end = len;
    s->eof = true;
    s->raw_size = len;
    s->raw_pos = len;
    return s;
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
    if (!s->raw && !s->eof && !rm_instream_detect (s, err))
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

uint64_t
rm_instream_raw_pos (const rm_instream_t *s)
{
    return s->ra ? rm_readahead_raw_pos (s) : s->raw_pos;
}

bool
rm_instream_held (const rm_instream_t *s)
{
    return s->ra && rm_readahead_mapped (s);
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
