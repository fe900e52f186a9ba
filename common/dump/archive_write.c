/* Writing mongodump --archive streams that mongorestore accepts: header,
 * prelude, one data segment per run of documents of a namespace, and an EOF
 * block with the recomputed CRC-64 when the namespace ends. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "remodel/bsoncheck.h"
#include "remodel/buf.h"
#include "remodel/crc64.h"
#include "writer_impl.h"

typedef struct {
    int fd;
    rm_outstream_t *out;
    rm_ns_t *cur; /* namespace whose segment is open */
    /* Small documents' bytes not in their namespace's CRC yet: one call
     * over many of them costs a fraction of one call each (the folding
     * loops need 64 and 256 bytes). Added before the CRC is read (the
     * namespace's end) and before another namespace's bytes come. */
    rm_buf_t crc_pend;
    rm_ns_t *crc_ns;
} archw_t;

#define CRC_PEND_DOC 512    /* a document from this size on is added at once */
#define CRC_PEND_MAX 65536  /* the pending bytes are added from this size on */

static void
crc_settle (archw_t *a)
{
    if (a->crc_pend.len) {
        a->crc_ns->crc = rm_crc64_update (a->crc_ns->crc, a->crc_pend.data, a->crc_pend.len);
        rm_buf_reset (&a->crc_pend);
    }
}

static void
crc_add (archw_t *a, rm_ns_t *ns, const uint8_t *docs, uint32_t len)
{
    if (a->crc_ns != ns || len >= CRC_PEND_DOC) {
        crc_settle (a);
        a->crc_ns = ns;
    }
    if (len >= CRC_PEND_DOC) {
        ns->crc = rm_crc64_update (ns->crc, docs, len);
        return;
    }
    rm_buf_append (&a->crc_pend, docs, len);
    if (a->crc_pend.len >= CRC_PEND_MAX)
        crc_settle (a);
}

static const uint8_t magic[4] = {0x6d, 0xe2, 0x99, 0x81};
static const uint8_t terminator[4] = {0xff, 0xff, 0xff, 0xff};

static bool
put_bson (archw_t *a, const bson_t *b, bson_error_t *err)
{
    return rm_outstream_write (a->out, bson_get_data (b), b->len, err);
}

static bool
put_ns_header (archw_t *a, const rm_ns_t *ns, bool eof, bson_error_t *err)
{
    bson_t h;
    bool ok;
    bson_init (&h);
    BSON_APPEND_UTF8 (&h, "db", ns->db);
    BSON_APPEND_UTF8 (&h, "collection", ns->is_oplog ? "oplog" : ns->data_coll);
    BSON_APPEND_BOOL (&h, "EOF", eof);
    BSON_APPEND_INT64 (&h, "CRC", eof ? (int64_t) ns->crc : 0);
    ok = put_bson (a, &h, err);
    bson_destroy (&h);
    return ok;
}

static bool
archw_open (rm_writer_t *w, bson_error_t *err)
{
    archw_t *a = bson_malloc0 (sizeof *a);
    const rm_dump_info_t *info = w->info;
    rm_buf_init (&a->crc_pend);
    bson_t h;
    bool ok;

    w->impl = a;
    if (w->to_stdout) {
        a->fd = STDOUT_FILENO;
    } else {
        a->fd = open (w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (a->fd < 0) {
            rm_error_set (err, RM_ERR_IO, "%s: cannot create: %s", w->tmp, strerror (errno));
            return false;
        }
    }
    a->out = rm_outstream_new (a->fd, w->to_stdout ? "<stdout>" : w->dst, &w->opts.compress, err);
    if (!a->out)
        return false;

    bson_init (&h);
    BSON_APPEND_INT32 (&h, "concurrent_collections",
                       info->concurrent_collections > 0 ? info->concurrent_collections : 4);
    BSON_APPEND_UTF8 (&h, "version", "0.1");
    BSON_APPEND_UTF8 (&h, "server_version",
                      info->server_version ? info->server_version : RM_DEFAULT_SERVER_VERSION);
    BSON_APPEND_UTF8 (&h, "tool_version", RM_TOOL_VERSION);
    ok = rm_outstream_write (a->out, magic, 4, err) && put_bson (a, &h, err);
    bson_destroy (&h);

    for (size_t i = 0; ok && i < info->n_ns; i++) {
        const rm_ns_t *ns = info->ns[i];
        bson_t e;
        bson_init (&e);
        BSON_APPEND_UTF8 (&e, "db", ns->db);
        BSON_APPEND_UTF8 (&e, "collection", ns->coll);
        bson_append_utf8 (&e, "metadata", -1, ns->metadata ? ns->metadata : "",
                          ns->metadata ? (int) ns->metadata_len : 0);
        BSON_APPEND_INT32 (&e, "size", 0);
        if (ns->has_type)
            BSON_APPEND_UTF8 (&e, "type", ns->type);
        ok = put_bson (a, &e, err);
        bson_destroy (&e);
    }
    return ok && rm_outstream_write (a->out, terminator, 4, err);
}

/* Documents one after another, into the namespace's segment: one (from
 * archw_doc), or a run (rm_writer_docs: each small, the reader's runs stop
 * short of 1 MiB, so archw_doc's limit holds for each). */
static bool
archw_docs (rm_writer_t *w, rm_ns_t *ns, const uint8_t *docs, uint32_t len, bson_error_t *err)
{
    archw_t *a = w->impl;
    if (a->cur != ns) {
        if (a->cur && !rm_outstream_write (a->out, terminator, 4, err))
            return false;
        if (!put_ns_header (a, ns, false, err))
            return false;
        a->cur = ns;
    }
    if (!ns->crc_given)
        crc_add (a, ns, docs, len);
    if (w->doc_held)
        return rm_outstream_write_held (a->out, docs, len, err);
    return rm_outstream_write (a->out, docs, len, err);
}

static bool
archw_doc (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    /* mongorestore's archive parser takes documents up to 16 MiB, the
     * oplog's too (an oplog entry may reach 16 MiB + 16 KiB: a directory
     * holds those). */
    if (len > RM_BSON_MAX_SIZE) {
        char name[512];
        rm_error_set (err, RM_ERR_DATA,
                      "%s: %s: document %llu is %u bytes, over the limit of an archive (%u, "
                      "the most mongorestore reads from one; a directory or a tar holds oplog "
                      "entries up to %u)",
                      w->dst, rm_ns_name (ns, name, sizeof name), (unsigned long long) ns->docs + 1,
                      len, RM_BSON_MAX_SIZE, RM_BSON_MAX_OPLOG_SIZE);
        return false;
    }
    return archw_docs (w, ns, doc, len, err);
}

static bool
archw_ns_end (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err)
{
    archw_t *a = w->impl;
    if (a->cur && !rm_outstream_write (a->out, terminator, 4, err))
        return false;
    a->cur = NULL;
    crc_settle (a);
    /* Empty collections and views still get a (zero-document) segment. */
    if (ns->docs == 0 &&
        !(put_ns_header (a, ns, false, err) && rm_outstream_write (a->out, terminator, 4, err)))
        return false;
    return put_ns_header (a, ns, true, err) && rm_outstream_write (a->out, terminator, 4, err);
}

static bool
archw_finish (rm_writer_t *w, bson_error_t *err)
{
    archw_t *a = w->impl;
    if (!rm_outstream_finish (a->out, err))
        return false;
    if (!w->to_stdout) {
        if (fsync (a->fd) != 0 || close (a->fd) != 0) {
            rm_error_set (err, RM_ERR_IO, "%s: cannot close: %s", w->dst, strerror (errno));
            a->fd = -1;
            return false;
        }
        a->fd = -1;
    }
    return true;
}

static void
archw_destroy (rm_writer_t *w)
{
    archw_t *a = w->impl;
    if (!a)
        return;
    rm_outstream_destroy (a->out);
    if (!w->to_stdout && a->fd >= 0)
        close (a->fd);
    rm_buf_destroy (&a->crc_pend);
    bson_free (a);
    w->impl = NULL;
}

const rm_writer_ops_t rm_archive_writer_ops = {archw_open,   archw_doc,     archw_ns_end,
                                               archw_finish, archw_destroy, archw_docs};
