/* Byte streams with the compression found in mongodump output.
 *
 * An instream detects gzip and zstd from the first bytes (never from a file
 * name) and hands out decompressed bytes through an explicit window, so a
 * document is parsed where it lies in the buffer, without a copy. An
 * outstream compresses (none, gzip, zstd) into a file descriptor. */
#ifndef REMODEL_STREAM_H
#define REMODEL_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "remodel/error.h"

typedef enum { RM_CODEC_NONE = 0, RM_CODEC_GZIP, RM_CODEC_ZSTD } rm_codec_t;

const char *rm_codec_name (rm_codec_t codec);

/* ---- input ---- */

typedef struct rm_instream rm_instream_t;

/* A raw byte source: returns bytes read, 0 at the end, -1 with err set. */
typedef ssize_t (*rm_raw_read_fn) (void *ctx, void *buf, size_t len, bson_error_t *err);

/* Opens a file ("-" is standard input). name is used in messages. */
rm_instream_t *rm_instream_open (const char *path, bson_error_t *err);

/* Bytes already in memory, read in place (not copied; they must outlive
 * the stream): no codec, no read-ahead. */
rm_instream_t *rm_instream_new_memory (const uint8_t *data, size_t len, const char *name);

/* Wraps a raw source, e.g. one member of a tar archive. */
rm_instream_t *rm_instream_new (rm_raw_read_fn read, void *ctx, const char *name,
                                uint64_t raw_size);

/* Makes at least `need` decompressed bytes available at *data and returns how
 * many are there (fewer than need only at the end of the stream), -1 on error.
 * The window stays valid until the next fill or skip. */
ssize_t rm_instream_fill (rm_instream_t *s, size_t need, const uint8_t **data,
                          bson_error_t *err);

/* Consumes n bytes of the window. */
void rm_instream_skip (rm_instream_t *s, size_t n);

/* Raw (compressed) bytes consumed so far, and the raw size (0 if unknown). */
uint64_t rm_instream_raw_pos (const rm_instream_t *s);
uint64_t rm_instream_raw_size (const rm_instream_t *s);

rm_codec_t rm_instream_codec (const rm_instream_t *s);
/* Changes the name used in messages. */
void rm_instream_rename (rm_instream_t *s, const char *name);
const char *rm_instream_name (const rm_instream_t *s);
void rm_instream_close (rm_instream_t *s);

/* ---- framed BSON on an instream ---- */

typedef enum {
    RM_FRAME_END = 0,    /* clean end of stream */
    RM_FRAME_DOC,        /* a document */
    RM_FRAME_TERMINATOR, /* FF FF FF FF, the archive's segment terminator */
    RM_FRAME_ERROR = -1,
} rm_frame_kind_t;

typedef struct {
    const uint8_t *data; /* valid until the next call on the stream */
    uint32_t len;
    uint64_t offset;     /* decompressed offset of the first byte */
    char reason[200];    /* why, when RM_FRAME_ERROR comes from the bytes */
    size_t fault_offset; /* offset of the fault inside the document */
    bool resumable;      /* the bad document was whole and has been consumed
                            (data, len set): reading may go on after it */
} rm_frame_t;

/* Declares that from the current position on the stream is a sequence of
 * length-prefixed documents and 0xFFFFFFFF terminators (a mongodump
 * archive after its magic, a .bson file), read with rm_frame_next. The
 * read-ahead thread, if one starts at a document boundary, then checks the
 * documents ahead of the main thread (the second core), and rm_frame_next
 * does not check them again. */
void rm_instream_expect_frames (rm_instream_t *s);

/* True when the documents framed from now on stay valid and unchanged
 * until the stream is closed (a mapped file), not only until the next
 * call. */
bool rm_instream_held (const rm_instream_t *s);

/* Reads the next length-prefixed document, checking it fully
 * (rm_bson_check) unless `check` is false. Documents longer than max_len
 * are refused. On RM_FRAME_ERROR, err is set for I/O or decompression
 * errors, else frame->reason tells what is wrong with the bytes. */
rm_frame_kind_t rm_frame_next (rm_instream_t *s, uint32_t max_len, bool check,
                               rm_frame_t *frame, bson_error_t *err);

/* ---- output ---- */

typedef struct {
    rm_codec_t codec;
    int level;   /* 0: the codec's default */
    int threads; /* zstd workers; 0: one per core */
} rm_compress_t;

/* Parses "zstd[:LEVEL]", "gzip[:LEVEL]" or "none". */
bool rm_compress_parse (const char *text, rm_compress_t *out, bson_error_t *err);

typedef struct rm_outstream rm_outstream_t;

/* Compresses into fd (not closed by the stream). name is used in messages. */
rm_outstream_t *rm_outstream_new (int fd, const char *name, const rm_compress_t *c,
                                  bson_error_t *err);
bool rm_outstream_write (rm_outstream_t *s, const void *buf, size_t len,
                         bson_error_t *err);
/* As rm_outstream_write, but buf stays valid and unchanged until the
 * stream is destroyed (a mapped input's document, rm_item_t.held): a plain
 * stream to a regular file then writes it from where it is, without a
 * copy into its buffer. */
bool rm_outstream_write_held (rm_outstream_t *s, const void *buf, size_t len,
                              bson_error_t *err);
/* Flushes the codec's last frame and the buffer. */
bool rm_outstream_finish (rm_outstream_t *s, bson_error_t *err);
void rm_outstream_destroy (rm_outstream_t *s);

#endif
