/* Writing directory dumps as mongodump lays them out: <db>/<escaped
 * coll>.bson and .metadata.json, oplog.bson and prelude.json at the top,
 * optionally each file gzipped (oplog.bson keeps its name). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/metadata.h"
#include "remodel/nsname.h"
#include "writer_impl.h"

typedef struct {
    int fd;
    rm_outstream_t *out;
} dfile_t;

struct rm_dirw {
    char *root;
    rm_dump_info_t *info;
    bool gzip_files;
    rm_compress_t c;
    dfile_t *files; /* per namespace index */
};

static bool
make_dir (const char *path, bson_error_t *err)
{
    if (mkdir (path, 0755) != 0 && errno != EEXIST) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot create the directory: %s", path, strerror (errno));
        return false;
    }
    return true;
}

/* The path of a namespace's file; kind is ".bson" or ".metadata.json".
 * Built by rm_nsname_file only, which cannot name a path outside root (its
 * directory by rm_nsname_dir); the oplog and prelude.json have fixed names. */
static char *
ns_path (rm_dirw_t *d, const rm_ns_t *ns, const char *kind, bson_error_t *err)
{
    char suffix[32], why[160], name[512], *path;
    if (ns->is_oplog)
        return bson_strdup_printf ("%s/oplog.bson", d->root);
    snprintf (suffix, sizeof suffix, "%s%s", kind, d->gzip_files ? ".gz" : "");
    path = rm_nsname_file (d->root, ns->db, strcmp (kind, ".bson") == 0 ? ns->data_coll : ns->coll,
                           suffix, why, sizeof why);
    if (!path)
        rm_error_set (err, RM_ERR_FORMAT, "namespace \"%s\" cannot be written: %s",
                      rm_ns_name (ns, name, sizeof name), why);
    return path;
}

static bool
open_file (rm_dirw_t *d, dfile_t *f, const char *path, bson_error_t *err)
{
    rm_compress_t c = d->c;
    f->fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot create: %s", path, strerror (errno));
        return false;
    }
    if (!d->gzip_files)
        c.codec = RM_CODEC_NONE;
    f->out = rm_outstream_new (f->fd, path, &c, err);
    return f->out != NULL;
}

static bool
close_file (dfile_t *f, bson_error_t *err)
{
    bool ok = true;
    if (f->out)
        ok = rm_outstream_finish (f->out, err);
    rm_outstream_destroy (f->out);
    f->out = NULL;
    if (f->fd >= 0 && close (f->fd) != 0 && ok) {
        rm_error_set (err, RM_ERR_IO, "close failed: %s", strerror (errno));
        ok = false;
    }
    f->fd = -1;
    return ok;
}

static bool
write_text (rm_dirw_t *d, const char *path, const char *text, size_t len, bson_error_t *err)
{
    dfile_t f = {-1, NULL};
    bool ok = open_file (d, &f, path, err) && rm_outstream_write (f.out, text, len, err);
    return close_file (&f, err) && ok;
}

/* The metadata as written: verbatim, except that collectionName must
 * name the collection when its files are named by a hash (a long name)
 * or when it names another (after --nsTo): readers, remodel's and
 * mongorestore's, take the name from there. */
static bool
write_metadata (rm_dirw_t *d, const rm_ns_t *ns, bson_error_t *err)
{
    char *path = ns_path (d, ns, ".metadata.json", err), *esc, *fixed = NULL, name[512];
    rm_metadata_t m;
    bool need, ok;
    /* A long name needs a metadata file even when the source had none. */
    const char *text = ns->metadata && ns->metadata_len ? ns->metadata : "{}";
    size_t len = ns->metadata && ns->metadata_len ? ns->metadata_len : 2;

    if (!path)
        return false;
    esc = rm_nsname_escape (ns->coll);
    rm_metadata_read (text, len, &m);
    need = m.collection_name ? strcmp (m.collection_name, ns->coll) != 0 : rm_nsname_is_hashed (esc);
    rm_metadata_clear (&m);
    bson_free (esc);
    if (need && !(fixed = rm_metadata_with_name (text, len, ns->coll, &len))) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: %s: its long name needs collectionName in the "
                      "metadata, which is not a JSON object", path, rm_ns_name (ns, name, sizeof name));
        bson_free (path);
        return false;
    }
    ok = write_text (d, path, fixed ? fixed : text, len, err);
    bson_free (fixed);
    bson_free (path);
    return ok;
}


rm_dirw_t *
rm_dirw_new (const char *root, rm_dump_info_t *info, bool gzip_files, const rm_compress_t *c,
             bson_error_t *err)
{
    rm_dirw_t *d = bson_malloc0 (sizeof *d);
    bool ok;

    d->root = bson_strdup (root);
    d->info = info;
    d->gzip_files = gzip_files;
    d->c = *c;
    d->files = bson_malloc (info->n_ns * sizeof *d->files + 1);
    for (size_t i = 0; i < info->n_ns; i++)
        d->files[i] = (dfile_t){-1, NULL};
    ok = make_dir (root, err);
    for (size_t i = 0; ok && i < info->n_ns; i++) {
        rm_ns_t *ns = info->ns[i];
        char *dir, *path;
        bool has_metadata = ns->metadata && ns->metadata_len > 0;
        if (ns->is_oplog)
            continue;
        /* Every name is checked before its directory is made. */
        path = ns_path (d, ns, ".bson", err);
        ok = path != NULL;
        bson_free (path);
        if (ok) {
            char why[160];
            dir = rm_nsname_dir (root, ns->db, why, sizeof why);
            ok = dir && make_dir (dir, err);
            bson_free (dir);
        }
        /* An empty metadata string (users, roles) is no metadata file,
         * unless a long name needs one to carry collectionName. */
        if (ok && !has_metadata) {
            char *esc = rm_nsname_escape (ns->coll);
            has_metadata = rm_nsname_is_hashed (esc);
            bson_free (esc);
        }
        if (ok && has_metadata)
            ok = write_metadata (d, ns, err);
    }
    if (ok && info->server_version) {
        char *path = bson_strdup_printf ("%s/prelude.json%s", root, gzip_files ? ".gz" : "");
        char *json = bson_strdup_printf ("{\"ServerVersion\":\"%s\",\"ToolVersion\":\"%s\"}",
                                         info->server_version, RM_TOOL_VERSION);
        ok = write_text (d, path, json, strlen (json), err);
        bson_free (json);
        bson_free (path);
    }
    if (!ok) {
        rm_dirw_destroy (d);
        return NULL;
    }
    return d;
}

bool
rm_dirw_doc (rm_dirw_t *d, rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    dfile_t *f = &d->files[ns->index];
    if (!f->out) {
        char *path = ns_path (d, ns, ".bson", err);
        bool ok = path && open_file (d, f, path, err);
        bson_free (path);
        if (!ok)
            return false;
    }
    return rm_outstream_write (f->out, doc, len, err);
}

bool
rm_dirw_ns_end (rm_dirw_t *d, rm_ns_t *ns, bson_error_t *err)
{
    dfile_t *f = &d->files[ns->index];
    /* Views have only their metadata; empty collections an empty .bson. */
    if (!f->out && !ns->is_view) {
        char *path = ns_path (d, ns, ".bson", err);
        bool ok = path && open_file (d, f, path, err);
        bson_free (path);
        if (!ok)
            return false;
    }
    return close_file (f, err);
}

bool
rm_dirw_finish (rm_dirw_t *d, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; i < d->info->n_ns; i++)
        ok = close_file (&d->files[i], err) && ok;
    return ok;
}

void
rm_dirw_destroy (rm_dirw_t *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->info->n_ns; i++)
        close_file (&d->files[i], NULL);
    bson_free (d->files);
    bson_free (d->root);
    bson_free (d);
}

/* ---- the writer for directory destinations ---- */

static bool
dirw_open (rm_writer_t *w, bson_error_t *err)
{
    if (w->opts.compress.codec == RM_CODEC_ZSTD) {
        rm_error_set (err, RM_ERR_USAGE,
                      "%s: a directory dump can be gzipped per file (--compress gzip), not zstd: "
                      "mongorestore reads only gzip",
                      w->dst);
        return false;
    }
    w->impl = rm_dirw_new (w->tmp, w->info, w->opts.compress.codec == RM_CODEC_GZIP,
                           &w->opts.compress, err);
    return w->impl != NULL;
}

static bool
dirw_doc (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    return rm_dirw_doc (w->impl, ns, doc, len, err);
}

static bool
dirw_ns_end (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err)
{
    return rm_dirw_ns_end (w->impl, ns, err);
}

static bool
dirw_finish (rm_writer_t *w, bson_error_t *err)
{
    return rm_dirw_finish (w->impl, err);
}

static void
dirw_destroy (rm_writer_t *w)
{
    rm_dirw_destroy (w->impl);
    w->impl = NULL;
}

const rm_writer_ops_t rm_dir_writer_ops = {dirw_open, dirw_doc, dirw_ns_end, dirw_finish,
                                           dirw_destroy, NULL};
