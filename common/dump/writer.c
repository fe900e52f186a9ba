/* Choosing a writer for a destination, and the atomic commit they share. */
#include <string.h>

#include "remodel/tmppath.h"
#include "writer_impl.h"

static bool
ends_with (const char *s, const char *suffix)
{
    size_t n = strlen (s), m = strlen (suffix);
    return n >= m && strcmp (s + n - m, suffix) == 0;
}

void
rm_write_opts_resolve (rm_write_opts_t *o, const char *dst)
{
    rm_codec_t by_name = RM_CODEC_NONE;
    char *base = bson_strdup (dst);
    size_t n = strlen (base);

    if (ends_with (base, ".gz") || ends_with (base, ".tgz"))
        by_name = RM_CODEC_GZIP;
    else if (ends_with (base, ".zst") || ends_with (base, ".tzst"))
        by_name = RM_CODEC_ZSTD;
    if (ends_with (base, ".gz") || ends_with (base, ".zst"))
        base[n - (ends_with (base, ".gz") ? 3 : 4)] = '\0';

    if (o->format == RM_FORMAT_AUTO) {
        if (strcmp (dst, "-") == 0 || ends_with (base, ".archive"))
            o->format = RM_FORMAT_ARCHIVE;
        else if (ends_with (base, ".tar") || ends_with (dst, ".tgz") || ends_with (dst, ".tzst"))
            o->format = RM_FORMAT_TAR;
        else if (ends_with (base, ".bson"))
            o->format = RM_FORMAT_BSON;
        else
            o->format = RM_FORMAT_DIR;
    }
    if (!o->compress_set) {
        int threads = o->compress.threads; /* --threads holds without --compress */
        memset (&o->compress, 0, sizeof o->compress);
        o->compress.codec = o->format == RM_FORMAT_DIR ? RM_CODEC_NONE : by_name;
        o->compress.threads = threads;
        o->compress_set = true;
    }
    bson_free (base);
}

rm_writer_t *
rm_writer_open (const char *dst, const rm_write_opts_t *opts, rm_dump_info_t *info,
                bson_error_t *err)
{
    rm_writer_t *w = bson_malloc0 (sizeof *w);

    w->opts = *opts;
    rm_write_opts_resolve (&w->opts, dst);
    w->dst = bson_strdup (dst);
    w->info = info;
    w->to_stdout = strcmp (dst, "-") == 0;
    switch (w->opts.format) {
    case RM_FORMAT_ARCHIVE: w->ops = &rm_archive_writer_ops; break;
    case RM_FORMAT_DIR: w->ops = &rm_dir_writer_ops; break;
    case RM_FORMAT_TAR: w->ops = &rm_tar_writer_ops; break;
    default: w->ops = &rm_bson_writer_ops; break;
    }
    if (w->to_stdout && w->opts.format != RM_FORMAT_ARCHIVE && w->opts.format != RM_FORMAT_BSON) {
        rm_error_set (err, RM_ERR_USAGE, "standard output takes an archive or .bson stream, not %s",
                      rm_format_name (w->opts.format));
        goto fail;
    }
    if (!w->to_stdout) {
        if (!rm_tmppath_check_dst (dst, w->opts.force, err))
            goto fail;
        w->tmp = rm_tmppath_new (dst);
    }
    for (size_t i = 0; i < info->n_ns; i++) {
        rm_ns_t *ns = info->ns[i];
        ns->docs = ns->bytes = ns->crc = ns->invalid = 0;
        ns->ended = false;
    }
    if (!w->ops->open (w, err)) {
        rm_writer_abort (w);
        rm_writer_destroy (w);
        return NULL;
    }
    return w;

fail:
    bson_free (w->dst);
    bson_free (w);
    return NULL;
}

bool
rm_writer_doc (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    if (ns->ended) {
        char name[512];
        rm_error_set (err, RM_ERR_USAGE, "%s: a document for %s after its end", w->dst,
                      rm_ns_name (ns, name, sizeof name));
        return false;
    }
    if (!w->ops->doc (w, ns, doc, len, err))
        return false;
    ns->docs++;
    ns->bytes += len;
    return true;
}

bool
rm_writer_doc_held (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len,
                    bson_error_t *err)
{
    bool ok;
    w->doc_held = true;
    ok = rm_writer_doc (w, ns, doc, len, err);
    w->doc_held = false;
    return ok;
}

bool
rm_writer_docs (rm_writer_t *w, rm_ns_t *ns, const uint8_t *docs, uint32_t len, uint32_t n,
                bool held, bson_error_t *err)
{
    uint32_t at = 0;
    bool ok = true;

    if (n == 1 || !w->ops->docs || ns->ended) {
        /* Each on its own (and the error of a namespace ended). */
        while (ok && at < len) {
            uint32_t dl;
            memcpy (&dl, docs + at, 4);
            dl = BSON_UINT32_FROM_LE (dl);
            ok = (held ? rm_writer_doc_held : rm_writer_doc) (w, ns, docs + at, dl, err);
            at += dl;
        }
        return ok;
    }
    w->doc_held = held;
    ok = w->ops->docs (w, ns, docs, len, err);
    w->doc_held = false;
    if (!ok)
        return false;
    ns->docs += n;
    ns->bytes += len;
    return true;
}

bool
rm_writer_ns_end (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err)
{
    if (ns->ended)
        return true;
    if (!w->ops->ns_end (w, ns, err))
        return false;
    ns->ended = true;
    return true;
}

bool
rm_writer_commit (rm_writer_t *w, bson_error_t *err)
{
    /* Whatever is still open ends now, the oplog last. */
    for (int oplog = 0; oplog < 2; oplog++)
        for (size_t i = 0; i < w->info->n_ns; i++) {
            rm_ns_t *ns = w->info->ns[i];
            if (ns->is_oplog == (oplog == 1) && !rm_writer_ns_end (w, ns, err))
                return false;
        }
    if (!w->ops->finish (w, err))
        return false;
    if (w->tmp) {
        if (!rm_tmppath_commit (w->tmp, w->dst, w->opts.force, err))
            return false;
        bson_free (w->tmp);
        w->tmp = NULL;
    }
    w->done = true;
    return true;
}

void
rm_writer_abort (rm_writer_t *w)
{
    if (!w || w->done)
        return;
    if (w->ops->destroy && w->impl) {
        w->ops->destroy (w);
        w->impl = NULL;
    }
    if (w->tmp) {
        rm_tmppath_remove (w->tmp);
        bson_free (w->tmp);
        w->tmp = NULL;
    }
    w->done = true;
}

void
rm_writer_destroy (rm_writer_t *w)
{
    if (!w)
        return;
    if (!w->done)
        rm_writer_abort (w);
    if (w->impl && w->ops->destroy)
        w->ops->destroy (w);
    bson_free (w->tmp);
    bson_free (w->dst);
    bson_free (w);
}
