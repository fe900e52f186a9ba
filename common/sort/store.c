/* Stores: temporary files of framed BSON, removed on destroy, at exit and
 * on signals (they are registered with rm_tmppath); or sinks, which hand
 * every document on and keep nothing.
 *
 * Not compressed: a store lives for seconds, mostly in the page cache, and
 * zstd level 1 on two workers cost more CPU than its writes saved (a
 * spilled embed at --scale 1200 spent 1.2 s of CPU on it for 0.19 GB).
 * The file starts with MAGIC, so that an instream cannot take a first
 * document whose length happens to begin with gzip's magic bytes for a
 * gzip stream, and its size is checked when it is opened. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/bsoncheck.h"
#include "remodel/buf.h"
#include "remodel/error.h"
#include "remodel/tmppath.h"
#include "store.h"

#define MAGIC "rmS1"
#define MAGIC_LEN 4

struct rm_store {
    char *path;
    char *label;
    rm_store_pool_t *pool; /* NULL: a file from the start */
    rm_buf_t mem;          /* the documents while pool holds them */
    /* Or, instead of mem, while they all lie back to back in a mapped
     * input (rm_store_add_held): where they are, not copied (the copy and
     * its page faults were a tenth of embed's CPU). */
    const uint8_t *held;
    size_t held_len;
    bool sealed;
    int fd;
    rm_outstream_t *out;
    uint64_t count, bytes;
    rm_store_sink_t sink; /* a sink: add and seal go here, no file */
    void *sink_ctx;
};

rm_store_t *
rm_store_new_sink (const char *label, const rm_store_sink_t *sink, void *ctx)
{
    rm_store_t *s = bson_malloc0 (sizeof *s);
    s->label = bson_strdup (label);
    s->fd = -1;
    s->sink = *sink;
    s->sink_ctx = ctx;
    return s;
}

rm_store_t *
rm_store_new (const char *tmpdir, const char *label, bson_error_t *err)
{
    rm_store_t *s = bson_malloc0 (sizeof *s);
    rm_compress_t c = {RM_CODEC_NONE, 0, 0};
    char *base = bson_strdup_printf ("%s/remodel-store", rm_tmpdir (tmpdir));

    s->path = rm_tmppath_new (base);
    bson_free (base);
    s->label = bson_strdup (label);
    s->fd = open (s->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot create a temporary file (--tmp): %s", s->path,
                      strerror (errno));
        rm_store_destroy (s);
        return NULL;
    }
    s->out = rm_outstream_new (s->fd, s->path, &c, err);
    if (!s->out || !rm_outstream_write (s->out, MAGIC, MAGIC_LEN, err)) {
        rm_store_destroy (s);
        return NULL;
    }
    return s;
}

/* The file is made at once all the same: a --tmp that cannot take it
 * fails where it always did, and a killed run leaves it for the next one
 * to sweep. Until a spill it holds MAGIC only. */
rm_store_t *
rm_store_new_pooled (const char *tmpdir, const char *label, rm_store_pool_t *pool,
                     bson_error_t *err)
{
    rm_store_t *s = rm_store_new (tmpdir, label, err);
    if (s) {
        s->pool = pool;
        rm_buf_init (&s->mem);
    }
    return s;
}

/* Lets go of the held documents. Their pages, read again since the
 * reader gave them back, would otherwise stay resident until the input
 * closes, on top of whatever holds the documents next: they are given
 * back again (a read-only mapping of the file: an access after this
 * reads the file again, so the pages at either end, shared with other
 * documents, may go too). */
static void
drop_held (rm_store_t *s)
{
    uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
    uintptr_t a = (uintptr_t) s->held & ~(page - 1);
    uintptr_t b = ((uintptr_t) s->held + s->held_len + page - 1) & ~(page - 1);
    if (s->held_len)
        madvise ((void *) a, b - a, MADV_DONTNEED);
    s->held = NULL;
    s->held_len = 0;
}

/* Frees the in-memory documents and gives their bytes back to the pool. */
static void
drop_mem (rm_store_t *s)
{
    s->pool->used -= s->mem.len + s->held_len;
    rm_buf_destroy (&s->mem);
    drop_held (s);
    s->pool = NULL;
}

/* The documents in memory, held or copied (one of the two is empty). */
static const uint8_t *
mem_data (const rm_store_t *s, size_t *len)
{
    if (s->held_len) {
        *len = s->held_len;
        return s->held;
    }
    *len = s->mem.len;
    return s->mem.data;
}

bool
rm_store_spill (rm_store_t *s, bson_error_t *err)
{
    rm_compress_t c = {RM_CODEC_NONE, 0, 0};
    const uint8_t *data;
    size_t len;
    bool ok;
    if (!s->pool)
        return true;
    data = mem_data (s, &len);
    /* A sealed store's stream wrote MAGIC and ended: a new one goes on
     * after it. */
    if (!s->out)
        s->out = rm_outstream_new (s->fd, s->path, &c, err);
    ok = s->out && rm_outstream_write (s->out, data, len, err);
    drop_mem (s);
    if (ok && s->sealed) {
        ok = rm_outstream_finish (s->out, err);
        rm_outstream_destroy (s->out);
        s->out = NULL;
    }
    return ok;
}

const uint8_t *
rm_store_mem (const rm_store_t *s, size_t *len)
{
    const uint8_t *data;
    if (!s->pool || !s->sealed)
        return NULL;
    data = mem_data (s, len);
    return data ? data : (const uint8_t *) "";
}

bool
rm_store_add (rm_store_t *s, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    s->count++;
    s->bytes += len;
    if (s->sink.add)
        return s->sink.add (s->sink_ctx, doc, len, err);
    if (s->pool) {
        if (s->pool->used + len <= s->pool->cap) {
            rm_buf_append (&s->mem, doc, len);
            s->pool->used += len;
            return true;
        }
        if (!rm_store_spill (s, err))
            return false;
    }
    return rm_outstream_write (s->out, doc, len, err);
}

bool
rm_store_add_held (rm_store_t *s, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    bool fits = s->pool && s->pool->used + len <= s->pool->cap;
    if (fits && !s->mem.len && (!s->held_len || s->held + s->held_len == doc)) {
        s->count++;
        s->bytes += len;
        if (!s->held_len)
            s->held = doc;
        s->held_len += len;
        s->pool->used += len;
        return true;
    }
    /* Not next to the ones held (another part of the input): from here on
     * the store copies, those first (a store that no longer fits writes
     * them to its file from where they are). */
    if (fits && s->held_len) {
        rm_buf_append (&s->mem, s->held, s->held_len);
        drop_held (s);
    }
    return rm_store_add (s, doc, len, err);
}

bool
rm_store_seal (rm_store_t *s, bson_error_t *err)
{
    bool ok = true;
    s->sealed = true;
    if (s->sink.seal) {
        ok = s->sink.seal (s->sink_ctx, err);
        s->sink.seal = NULL;
        s->sink.add = NULL;
    }
    if (s->out) {
        ok = rm_outstream_finish (s->out, err);
        rm_outstream_destroy (s->out);
        s->out = NULL;
    }
    return ok;
}

rm_instream_t *
rm_store_open (rm_store_t *s, bson_error_t *err)
{
    rm_instream_t *in;
    const uint8_t *head;
    struct stat st;
    ssize_t n;
    if (s->pool) {
        size_t len;
        const uint8_t *data = mem_data (s, &len);
        return rm_instream_new_memory (data, len, s->label);
    }
    if (!s->path) {
        rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: documents already written out, not kept",
                      s->label);
        return NULL;
    }
    if (stat (s->path, &st) != 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot open temporary store %s: %s", s->label,
                      s->path, strerror (errno));
        return NULL;
    }
    if ((uint64_t) st.st_size != MAGIC_LEN + s->bytes) {
        rm_error_set (err, RM_ERR_IO, "%s: damaged temporary store %s: %llu bytes, %llu written",
                      s->label, s->path, (unsigned long long) st.st_size,
                      (unsigned long long) (MAGIC_LEN + s->bytes));
        return NULL;
    }
    in = rm_instream_open (s->path, err);
    if (!in)
        return NULL;
    rm_instream_rename (in, s->label);
    n = rm_instream_fill (in, MAGIC_LEN, &head, err);
    if (n < MAGIC_LEN || memcmp (head, MAGIC, MAGIC_LEN) != 0) {
        if (n >= 0)
            rm_error_set (err, RM_ERR_IO, "%s: damaged temporary store %s: no header", s->label,
                          s->path);
        rm_instream_close (in);
        return NULL;
    }
    rm_instream_skip (in, MAGIC_LEN);
    return in;
}

uint64_t rm_store_count (const rm_store_t *s) { return s->count; }
uint64_t rm_store_bytes (const rm_store_t *s) { return s->bytes; }
const char *rm_store_label (const rm_store_t *s) { return s->label; }

void
rm_store_destroy (rm_store_t *s)
{
    if (!s)
        return;
    if (s->pool)
        drop_mem (s);
    rm_outstream_destroy (s->out);
    if (s->fd >= 0)
        close (s->fd);
    if (s->path)
        rm_tmppath_remove (s->path);
    bson_free (s->path);
    bson_free (s->label);
    bson_free (s);
}

int
rm_store_next (rm_instream_t *s, rm_frame_t *f, bson_error_t *err)
{
    rm_frame_kind_t k;
    /* An in-memory store never reads, where a stop is otherwise noticed. */
    if (rm_interrupted) {
        rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
        return -1;
    }
    k = rm_frame_next (s, RM_BSON_MAX_OPLOG_SIZE, false, f, err);
    if (k == RM_FRAME_DOC)
        return 1;
    if (k == RM_FRAME_END)
        return 0;
    if (k != RM_FRAME_ERROR || f->reason[0])
        rm_error_set (err, RM_ERR_IO, "%s: damaged temporary store: %s", rm_instream_name (s),
                      f->reason[0] ? f->reason : "unexpected terminator");
    return -1;
}
