/* Output streams: bytes buffered in large blocks and compressed (gzip or
 * zstd with worker threads) on their way to a file descriptor; for regular
 * files the write() calls themselves are done by a thread (write_thread.c).
 *
 * Every byte any writer produces passes here (the tar writer's too, from
 * libarchive's filters), so this is where SIGINT and SIGTERM are heard on
 * the way out: once the flag is up, every write and finish fails with
 * RM_ERR_INTERRUPTED, whatever the input side is doing. Before this, only
 * the readers looked at the flag, and a tar compressed from its staged
 * files after the last read ran to the end and exited 0. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getCParams: a level's window */
#include <zstd.h>

#include "gzip_parallel.h"
#include "remodel/stream.h"
#include "write_thread.h"

#define OUT_CAP RM_WSINK_BUF
/* zstd input gathered before one ZSTD_compressStream2 call: with workers,
 * each call takes a lock, too dear once per small document. */
#define ZIN_CAP (256u << 10)

struct rm_outstream {
    int fd;
    char *name;
    rm_compress_t c;
    uint8_t *buf; /* bytes ready for the fd */
    size_t len;
    rm_wsink_t *sink; /* regular files: buf is the sink's, written by its thread */
    const atomic_int *sink_error;
    z_stream z;
    bool z_open;
    rm_pgzip_t *pgz; /* gzip on several cores */
    ZSTD_CCtx *zc;
    uint8_t *zin; /* zstd input not yet handed to the codec */
    size_t zin_len;
};

bool
rm_compress_parse (const char *text, rm_compress_t *out, bson_error_t *err)
{
    const char *colon = strchr (text, ':');
    size_t n = colon ? (size_t) (colon - text) : strlen (text);
    char *end;
    long level = 0;

    memset (out, 0, sizeof *out);
    if (n == 4 && strncmp (text, "zstd", 4) == 0)
        out->codec = RM_CODEC_ZSTD;
    else if (n == 4 && strncmp (text, "gzip", 4) == 0)
        out->codec = RM_CODEC_GZIP;
    else if (n == 4 && strncmp (text, "none", 4) == 0 && !colon)
        out->codec = RM_CODEC_NONE;
    else {
        rm_error_set (err, RM_ERR_USAGE,
                      "--compress: unknown \"%s\" (use zstd[:LEVEL], gzip[:LEVEL] or none)", text);
        return false;
    }
    if (colon) {
        errno = 0;
        level = strtol (colon + 1, &end, 10);
        if (errno || *end || end == colon + 1 ||
            (out->codec == RM_CODEC_GZIP && (level < 1 || level > 9)) ||
            (out->codec == RM_CODEC_ZSTD && (level < 1 || level > ZSTD_maxCLevel ()))) {
            rm_error_set (err, RM_ERR_USAGE, "--compress: bad level in \"%s\" (gzip 1-9, zstd 1-%d)",
                          text, ZSTD_maxCLevel ());
            return false;
        }
    }
    out->level = (int) level;
    return true;
}

/* false, err set, once a signal has come: one load of a flag nothing
 * else writes, cheap enough for every call. */
static bool
stopped (bson_error_t *err)
{
    if (!rm_interrupted)
        return false;
    rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
    return true;
}

static bool
write_all (rm_outstream_t *s, const uint8_t *p, size_t n, bson_error_t *err)
{
    while (n > 0) {
        ssize_t w;
        if (stopped (err))
            return false;
        w = write (s->fd, p, n);
        if (w < 0) {
            if (errno == EINTR && !rm_interrupted)
                continue;
            if (rm_interrupted)
                rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
            else
                rm_error_set (err, RM_ERR_IO, "%s: write failed: %s", s->name, strerror (errno));
            return false;
        }
        p += w;
        n -= (size_t) w;
    }
    return true;
}

/* Hands the buffer to the write thread (or writes it, without one). */
static bool
flush_buf (rm_outstream_t *s, bson_error_t *err)
{
    bool ok;
    if (!s->sink) {
        ok = write_all (s, s->buf, s->len, err);
    } else {
        ok = rm_wsink_submit (s->sink, s->len, err);
        s->buf = rm_wsink_buf (s->sink);
    }
    s->len = 0;
    return ok;
}

/* Writes bytes from this thread, after whatever the write thread still
 * holds: for large writes (no copy into a buffer) and the last bytes. */
static bool
write_direct (rm_outstream_t *s, const uint8_t *p, size_t n, bson_error_t *err)
{
    if (s->sink && !rm_wsink_drain (s->sink, err))
        return false;
    return write_all (s, p, n, err);
}

static bool
emit_member (void *ctx, const uint8_t *data, size_t len, bson_error_t *err)
{
    return write_all (ctx, data, len, err);
}

/* With workers, a ZSTD_compressStream2 call that can neither take input
 * nor give output waits for a whole job, and a job is 4 windows by
 * default: 32 MiB at level 19, 512 MiB at 22, a minute or more in which no
 * signal is heard (40 MB of text at 19 on two cores: 81 s, the signal
 * heard at the end). From level 10 on (under ~40 MB/s a core), jobs of
 * 1 MiB, 512 KiB (zstd's least) from level 16 (the optimal parsers), each
 * overlapping the last by as much (the overlap is the floor of a job's
 * size), keep a call well under a second, for little ratio (the same
 * 40 MB at 19: 23 s, 0.02% larger). */
static void
small_jobs (ZSTD_CCtx *zc, int level)
{
    ZSTD_compressionParameters p = ZSTD_getCParams (level, 0, 0);
    int job_log = level >= 16 ? 19 : 20;
    int overlap_log = 9 - ((int) p.windowLog - job_log); /* window >> (9 - log) = a job */

    if (level < 10)
        return;
    ZSTD_CCtx_setParameter (zc, ZSTD_c_jobSize, 1 << job_log);
    ZSTD_CCtx_setParameter (zc, ZSTD_c_overlapLog,
                            overlap_log < 1 ? 1 : overlap_log > 9 ? 9 : overlap_log);
}

rm_outstream_t *
rm_outstream_new (int fd, const char *name, const rm_compress_t *c, bson_error_t *err)
{
    rm_outstream_t *s = bson_malloc0 (sizeof *s);
    struct stat st;

    s->fd = fd;
    s->name = bson_strdup (name);
    s->c = *c;
    /* Not pipes or terminals: a write there may block for good, and must
     * stay where SIGINT interrupts it. */
    if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode)) {
        s->sink = rm_wsink_new (fd, name);
        s->sink_error = rm_wsink_status (s->sink);
        s->buf = rm_wsink_buf (s->sink);
    } else {
        s->buf = bson_malloc (OUT_CAP);
    }
    if (c->codec == RM_CODEC_GZIP) {
        int level = c->level ? c->level : 6;
        int threads = c->threads > 0 ? c->threads : (int) sysconf (_SC_NPROCESSORS_ONLN);
        if (threads > 1) {
            s->pgz = rm_pgzip_new (level, threads, emit_member, s);
            return s;
        }
        if (deflateInit2 (&s->z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            rm_error_set (err, RM_ERR_NOMEM, "%s: cannot start gzip", name);
            rm_outstream_destroy (s);
            return NULL;
        }
        s->z_open = true;
    } else if (c->codec == RM_CODEC_ZSTD) {
        int threads = c->threads > 0 ? c->threads : (int) sysconf (_SC_NPROCESSORS_ONLN);
        s->zc = ZSTD_createCCtx ();
        s->zin = bson_malloc (ZIN_CAP);
        ZSTD_CCtx_setParameter (s->zc, ZSTD_c_compressionLevel, c->level ? c->level : 3);
        ZSTD_CCtx_setParameter (s->zc, ZSTD_c_checksumFlag, 1);
        /* Workers compress while this thread parses; 1 core: stay inline. */
        if (threads > 1) {
            ZSTD_CCtx_setParameter (s->zc, ZSTD_c_nbWorkers, threads);
            small_jobs (s->zc, c->level ? c->level : 3);
        }
    }
    return s;
}

static bool
gzip_run (rm_outstream_t *s, const void *buf, size_t len, int flush, bson_error_t *err)
{
    int zr;
    s->z.next_in = (Bytef *) buf;
    s->z.avail_in = (uInt) len;
    do {
        if (stopped (err) || (s->len == OUT_CAP && !flush_buf (s, err)))
            return false;
        s->z.next_out = s->buf + s->len;
        s->z.avail_out = (uInt) (OUT_CAP - s->len);
        zr = deflate (&s->z, flush);
        s->len = OUT_CAP - s->z.avail_out;
        if (zr == Z_STREAM_ERROR) {
            rm_error_set (err, RM_ERR_IO, "%s: gzip compression failed", s->name);
            return false;
        }
    } while (s->z.avail_in > 0 || (flush == Z_FINISH && zr != Z_STREAM_END) ||
             s->z.avail_out == 0);
    return true;
}

static bool
zstd_run (rm_outstream_t *s, const void *buf, size_t len, ZSTD_EndDirective mode,
          bson_error_t *err)
{
    ZSTD_inBuffer in = {buf, len, 0};
    size_t left;
    do {
        ZSTD_outBuffer out;
        if (stopped (err) || (s->len == OUT_CAP && !flush_buf (s, err)))
            return false;
        out.dst = s->buf;
        out.size = OUT_CAP;
        out.pos = s->len;
        left = ZSTD_compressStream2 (s->zc, &out, &in, mode);
        s->len = out.pos;
        if (ZSTD_isError (left)) {
            rm_error_set (err, RM_ERR_IO, "%s: zstd compression failed: %s", s->name,
                          ZSTD_getErrorName (left));
            return false;
        }
    } while (in.pos < in.size || (mode == ZSTD_e_end && left != 0));
    return true;
}

/* The codec's output does not depend on how its input is cut, so small
 * writes are gathered and large ones go straight in, without a copy. */
static bool
zstd_write (rm_outstream_t *s, const void *buf, size_t len, bson_error_t *err)
{
    if (s->zin_len + len > ZIN_CAP) {
        if (s->zin_len > 0 && !zstd_run (s, s->zin, s->zin_len, ZSTD_e_continue, err))
            return false;
        s->zin_len = 0;
        if (len >= ZIN_CAP)
            return zstd_run (s, buf, len, ZSTD_e_continue, err);
    }
    memcpy (s->zin + s->zin_len, buf, len);
    s->zin_len += len;
    return true;
}

bool
rm_outstream_write (rm_outstream_t *s, const void *buf, size_t len, bson_error_t *err)
{
    if (stopped (err))
        return false;
    /* A write the thread failed is told by the next call. */
    if (s->sink_error && atomic_load_explicit (s->sink_error, memory_order_relaxed) != 0)
        return rm_wsink_drain (s->sink, err);
    /* Nothing to write (an empty store moved to its file passes no
     * buffer at all): memcpy must not see its NULL. */
    if (len == 0)
        return true;
    switch (s->c.codec) {
    case RM_CODEC_GZIP:
        if (s->pgz)
            return rm_pgzip_write (s->pgz, buf, len, err);
        return gzip_run (s, buf, len, Z_NO_FLUSH, err);
    case RM_CODEC_ZSTD:
        return zstd_write (s, buf, len, err);
    default:
        if (s->len + len > OUT_CAP) {
            if (!flush_buf (s, err))
                return false;
            if (len >= OUT_CAP)
                return write_direct (s, buf, len, err);
        }
        memcpy (s->buf + s->len, buf, len);
        s->len += len;
        return true;
    }
}

bool
rm_outstream_write_held (rm_outstream_t *s, const void *buf, size_t len, bson_error_t *err)
{
    int r;
    /* A codec copies its input anyway. Documents side by side in the
     * input become one piece, however small each is. A document of a
     * buffer or more is copied (rare, and it keeps the bytes the queue
     * points at within a few buffers of the input's window). */
    if (!s->sink || s->c.codec != RM_CODEC_NONE || len >= OUT_CAP || stopped (err) ||
        atomic_load_explicit (s->sink_error, memory_order_relaxed) != 0)
        return rm_outstream_write (s, buf, len, err);
    r = rm_wsink_hold (s->sink, s->len, buf, len, err);
    if (r < 0)
        return false;
    if (r > 0) {
        s->buf = rm_wsink_buf (s->sink);
        s->len = 0;
    }
    return true;
}

/* The last bytes, written here once the thread is done: a small file
 * never wakes the thread (one that holds bytes elsewhere goes through
 * it, which alone writes pieces). */
static bool
flush_last (rm_outstream_t *s, bson_error_t *err)
{
    bool ok;
    if (s->sink && rm_wsink_held (s->sink)) {
        ok = flush_buf (s, err) && rm_wsink_drain (s->sink, err);
        s->len = 0;
        return ok;
    }
    ok = write_direct (s, s->buf, s->len, err);
    s->len = 0;
    return ok;
}

bool
rm_outstream_finish (rm_outstream_t *s, bson_error_t *err)
{
    if (stopped (err))
        return false;
    if (s->pgz)
        return rm_pgzip_finish (s->pgz, err) && flush_last (s, err);
    if (s->c.codec == RM_CODEC_GZIP && !gzip_run (s, NULL, 0, Z_FINISH, err))
        return false;
    if (s->c.codec == RM_CODEC_ZSTD) {
        bool ok = zstd_run (s, s->zin, s->zin_len, ZSTD_e_end, err);
        s->zin_len = 0;
        if (!ok)
            return false;
    }
    return flush_last (s, err);
}


void
rm_outstream_destroy (rm_outstream_t *s)
{
    if (!s)
        return;
    if (s->z_open)
        deflateEnd (&s->z);
    rm_pgzip_destroy (s->pgz);
    ZSTD_freeCCtx (s->zc);
    bson_free (s->zin);
    if (s->sink)
        rm_wsink_destroy (s->sink); /* owns buf */
    else
        bson_free (s->buf);
    bson_free (s->name);
    bson_free (s);
}
