/* Internals shared by the instream (instream.c), its read-ahead thread
 * (read_ahead.c) and the codec under both (instream_codec.c). */
#ifndef REMODEL_INSTREAM_IMPL_H
#define REMODEL_INSTREAM_IMPL_H

#include <zlib.h>
#include <zstd.h>

#include "remodel/stream.h"

typedef struct rm_readahead rm_readahead_t;

/* Once the read-ahead thread runs, it owns the source and codec fields
 * (fd to frame_open) and the main thread owns the window fields. */
struct rm_instream {
    char *name;
    const char *msg_name; /* the name in read and codec errors: name, or the
                             read-ahead's own copy once it runs */
    int fd;
    bool own_fd;
    bool regular;         /* a regular file: reads never block for long */
    rm_raw_read_fn read;
    void *ctx;
    uint64_t raw_pos, raw_size;
    rm_codec_t codec;

    uint8_t *raw; /* compressed bytes not yet decompressed */
    size_t raw_off, raw_len;
    bool raw_eof;

    z_stream z;
    bool z_open;
    ZSTD_DStream *zd;
    bool frame_open; /* a gzip member or zstd frame has started, not ended */

    /* The window: win[start..end), win being buf, or a chunk of the
     * read-ahead. buf grows to hold the largest document asked for. */
    uint8_t *win;
    size_t start, end;
    uint8_t *buf;
    size_t cap;
    uint64_t offset;   /* stream offset of win[start] */
    /* Documents checked ahead by the read-ahead thread: those within
     * [checked_from, checked_end) need no check on the main thread. */
    bool frames;         /* rm_instream_expect_frames was called */
    uint64_t frame_at;   /* where the frame rm_frame_next reads begins */
    uint64_t checked_from, checked_end;
    uint64_t produced; /* bytes decompressed (or read) without the thread */
    bool eof;

    rm_readahead_t *ra;
};

/* A look at the window and rm_instream_skip without a call, for the
 * per-document paths (framing, the reader's CRC runs). */
static inline size_t
rm_instream_peek (const rm_instream_t *s, const uint8_t **data)
{
    *data = s->win + s->start;
    return s->end - s->start;
}

static inline void
rm_instream_advance (rm_instream_t *s, size_t n)
{
    s->start += n;
    s->offset += n;
}

/* Asks for the cache lines PREFETCH_AHEAD bytes past p (the next few
 * documents' worth), when the n bytes at p reach that far. The pages a
 * document walk reads were last touched by another thread (the read-ahead,
 * on the other core) or by none (just read from the file), and the
 * hardware's prefetch stops at each page's end: without this the first
 * touch of each document waited for memory (convert: 14% of the main
 * thread's samples, 13% of the check's). Three lines a call cover the
 * documents of 192 bytes or less one for one; longer ones are sequential
 * runs the hardware follows. */
#define RM_PREFETCH_AHEAD 2048
static inline void
rm_instream_prefetch (const uint8_t *p, size_t n)
{
    if (n >= RM_PREFETCH_AHEAD + 3 * 64) {
        __builtin_prefetch (p + RM_PREFETCH_AHEAD);
        __builtin_prefetch (p + RM_PREFETCH_AHEAD + 64);
        __builtin_prefetch (p + RM_PREFETCH_AHEAD + 128);
    }
}

/* ---- instream_codec.c ---- */

/* Looks at the first bytes to pick the codec. Whatever was read for that
 * stays in raw and is consumed by the codec (or copied out for none). */
bool rm_instream_detect (rm_instream_t *s, bson_error_t *err);

/* Decompresses (or reads) more bytes into out[*end..cap), moving *end; sets
 * *eof at the end of the stream. false with err set on an error (bytes
 * added by the failing call are not to be used). */
bool rm_instream_produce (rm_instream_t *s, uint8_t *out, size_t *end, size_t cap, bool *eof,
                          bson_error_t *err);

/* Makes room for need bytes in buf: slides the window to its front and
 * grows buf. The window must be in buf. */
void rm_instream_make_room (rm_instream_t *s, size_t need);

/* ---- read_ahead.c ---- */

/* Starts a thread that reads (and decompresses) ahead into a few chunks;
 * false if none could be had (reading goes on without one). */
bool rm_readahead_start (rm_instream_t *s);
/* rm_instream_fill's work once the thread runs. */
ssize_t rm_readahead_fill (rm_instream_t *s, size_t need, bson_error_t *err);
/* True when the window is a mapping of the file (kept until the stream
 * is closed). */
bool rm_readahead_mapped (const rm_instream_t *s);
/* Raw bytes behind the chunks handed out so far. */
uint64_t rm_readahead_raw_pos (const rm_instream_t *s);
/* Stops the thread and frees the chunks. */
void rm_readahead_stop (rm_instream_t *s);

#endif
