/* Stores: temporary zstd files of framed BSON, removed on destroy, at exit
 * and on signals (they are registered with rm_tmppath); or sinks, which
 * hand every document on and keep nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remodel/tmppath.h"
#include "store.h"

struct rm_store {
    char *path;
    char *label;
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
    /* Level 1: the store is read back soon; speed beats ratio. Two zstd
     * workers compress while the main thread parses (about 5% off a
     * spilled embed or summarize at --scale 1200). */
    rm_compress_t c = {RM_CODEC_ZSTD, 1, 2};
    char *base = bson_strdup_printf ("%s/remodel-store", tmpdir && *tmpdir ? tmpdir
                                     : getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");

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
    if (!s->out) {
        rm_store_destroy (s);
        return NULL;
    }
    return s;
}

bool
rm_store_add (rm_store_t *s, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    s->count++;
    s->bytes += len;
    if (s->sink.add)
        return s->sink.add (s->sink_ctx, doc, len, err);
    return rm_outstream_write (s->out, doc, len, err);
}

bool
rm_store_seal (rm_store_t *s, bson_error_t *err)
{
    bool ok = true;
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
    if (!s->path) {
        rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: documents already written out, not kept",
                      s->label);
        return NULL;
    }
    in = rm_instream_open (s->path, err);
    if (in)
        rm_instream_rename (in, s->label);
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
    rm_outstream_destroy (s->out);
    if (s->fd >= 0)
        close (s->fd);
    if (s->path)
        rm_tmppath_remove (s->path);
    bson_free (s->path);
    bson_free (s->label);
    bson_free (s);
}
