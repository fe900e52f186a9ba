/* Writing a single .bson file (or a document stream on stdout): the
 * documents of the dump's one collection, back to back, optionally
 * compressed as a whole. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "remodel/bsoncheck.h"
#include "writer_impl.h"

typedef struct {
    int fd;
    rm_outstream_t *out;
    uint32_t max; /* the largest document the file may hold */
} bsonw_t;

/* Whether path's file name is oplog.bson (.gz, .zst). */
static bool
is_oplog_name (const char *path)
{
    const char *base = strrchr (path, '/');
    base = base ? base + 1 : path;
    return strcmp (base, "oplog.bson") == 0 || strcmp (base, "oplog.bson.gz") == 0 ||
           strcmp (base, "oplog.bson.zst") == 0;
}

static bool
bsonw_open (rm_writer_t *w, bson_error_t *err)
{
    bsonw_t *b = bson_malloc0 (sizeof *b);
    size_t holding = 0;
    char names[400] = "";

    w->impl = b;
    b->fd = -1;
    /* What reading the file back allows: a .bson file is read with the
     * 16 MiB limit unless it is named oplog.bson (bson_read.c). */
    b->max = !w->to_stdout && is_oplog_name (w->dst) ? RM_BSON_MAX_OPLOG_SIZE : RM_BSON_MAX_SIZE;
    /* A .bson file holds one collection: refuse to merge several. */
    for (size_t i = 0; i < w->info->n_ns; i++) {
        char name[256];
        if (w->info->ns[i]->is_view)
            continue;
        if (holding++ < 4) {
            if (names[0])
                strncat (names, ", ", sizeof names - strlen (names) - 1);
            strncat (names, rm_ns_name (w->info->ns[i], name, sizeof name),
                     sizeof names - strlen (names) - 1);
        }
    }
    if (holding != 1) {
        rm_error_set (err, RM_ERR_USAGE,
                      "%s: a .bson file holds exactly one collection, and the source has "
                      "%zu (%s%s); write an archive or a directory instead",
                      w->dst, holding, names, holding > 4 ? ", ..." : "");
        return false;
    }
    if (w->to_stdout) {
        b->fd = STDOUT_FILENO;
    } else {
        b->fd = open (w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (b->fd < 0) {
            rm_error_set (err, RM_ERR_IO, "%s: cannot create: %s", w->tmp, strerror (errno));
            return false;
        }
    }
    b->out = rm_outstream_new (b->fd, w->to_stdout ? "<stdout>" : w->dst, &w->opts.compress, err);
    return b->out != NULL;
}

static bool
bsonw_doc (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    bsonw_t *b = w->impl;
    if (len > b->max) {
        char name[512];
        rm_error_set (err, RM_ERR_DATA,
                      "%s: %s: document %llu is %u bytes, over the limit of a .bson file (%u%s)",
                      w->dst, rm_ns_name (ns, name, sizeof name), (unsigned long long) ns->docs + 1,
                      len, b->max,
                      b->max < RM_BSON_MAX_OPLOG_SIZE ? "; only one named oplog.bson holds "
                                                        "oplog entries up to 16 MiB + 16 KiB" : "");
        return false;
    }
    return rm_outstream_write (b->out, doc, len, err);
}

static bool
bsonw_ns_end (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err)
{
    return true;
}

static bool
bsonw_finish (rm_writer_t *w, bson_error_t *err)
{
    bsonw_t *b = w->impl;
    if (!rm_outstream_finish (b->out, err))
        return false;
    if (!w->to_stdout) {
        int rc = fsync (b->fd) | close (b->fd);
        b->fd = -1;
        if (rc != 0) {
            rm_error_set (err, RM_ERR_IO, "%s: cannot close: %s", w->dst, strerror (errno));
            return false;
        }
    }
    return true;
}

static void
bsonw_destroy (rm_writer_t *w)
{
    bsonw_t *b = w->impl;
    if (!b)
        return;
    rm_outstream_destroy (b->out);
    if (!w->to_stdout && b->fd >= 0)
        close (b->fd);
    bson_free (b);
    w->impl = NULL;
}

const rm_writer_ops_t rm_bson_writer_ops = {bsonw_open, bsonw_doc, bsonw_ns_end, bsonw_finish,
                                            bsonw_destroy, NULL};
