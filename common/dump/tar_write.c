/* Writing a tar of a dump directory. A tar member's size comes before its
 * bytes, and archive input interleaves namespaces, so the directory is
 * written first in a staging directory beside the destination and then
 * packed, compressed by libarchive's zstd or gzip filter, under "dump/". */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/tmppath.h"
#include "writer_impl.h"

typedef struct {
    char *staging;
    rm_dirw_t *dir;
} tarw_t;

static bool
tarw_open (rm_writer_t *w, bson_error_t *err)
{
    tarw_t *t = bson_malloc0 (sizeof *t);
    rm_compress_t none = {RM_CODEC_NONE, 0, 0};
    w->impl = t;
    t->staging = rm_tmppath_new (w->dst);
    t->dir = rm_dirw_new (t->staging, w->info, false, &none, err);
    return t->dir != NULL;
}

static bool
tarw_doc (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    tarw_t *t = w->impl;
    return rm_dirw_doc (t->dir, ns, doc, len, err);
}

static bool
tarw_ns_end (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err)
{
    tarw_t *t = w->impl;
    return rm_dirw_ns_end (t->dir, ns, err);
}

static int
cmp_str (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static bool
add_file (struct archive *a, const char *path, const char *name, const struct stat *st,
          bson_error_t *err)
{
    struct archive_entry *e = archive_entry_new ();
    bool ok = true;
    int fd;

    archive_entry_set_pathname (e, name);
    archive_entry_set_size (e, st->st_size);
    archive_entry_set_filetype (e, AE_IFREG);
    archive_entry_set_perm (e, 0644);
    archive_entry_set_mtime (e, st->st_mtime, 0);
    if (archive_write_header (a, e) != ARCHIVE_OK) {
        rm_error_set (err, RM_ERR_IO, "%s: %s", name, archive_error_string (a));
        archive_entry_free (e);
        return false;
    }
    archive_entry_free (e);
    fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot open: %s", path, strerror (errno));
        return false;
    }
    {
        char *buf = bson_malloc (1 << 20);
        ssize_t n;
        /* The whole tar is compressed here, at the end: a signal must stop
         * it like any other writing (one look per MiB). */
        while (ok && (n = read (fd, buf, 1 << 20)) > 0) {
            if (rm_interrupted) {
                rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
                ok = false;
            } else if (archive_write_data (a, buf, (size_t) n) != n) {
                rm_error_set (err, RM_ERR_IO, "%s: %s", name, archive_error_string (a));
                ok = false;
            }
        }
        if (ok && n < 0 && rm_interrupted) {
            rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
            ok = false;
        } else if (ok && n < 0) {
            rm_error_set (err, RM_ERR_IO, "%s: read failed: %s", path, strerror (errno));
            ok = false;
        }
        bson_free (buf);
    }
    close (fd);
    return ok;
}

/* Adds dir (staged at path) and everything under it, in name order. */
static bool
add_tree (struct archive *a, const char *path, const char *name, bson_error_t *err)
{
    DIR *d = opendir (path);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    bool ok = true;

    if (!d) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot open: %s", path, strerror (errno));
        return false;
    }
    while ((e = readdir (d))) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        names = bson_realloc (names, (n + 1) * sizeof *names);
        names[n++] = bson_strdup (e->d_name);
    }
    closedir (d);
    if (n > 1) /* an empty directory (a dump of no namespace) has no list: qsort (NULL) is undefined */
        qsort (names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char *child = bson_strdup_printf ("%s/%s", path, names[i]);
        char *child_name = bson_strdup_printf ("%s/%s", name, names[i]);
        struct stat st;
        if (ok && stat (child, &st) == 0) {
            if (S_ISDIR (st.st_mode)) {
                struct archive_entry *de = archive_entry_new ();
                archive_entry_set_pathname (de, child_name);
                archive_entry_set_filetype (de, AE_IFDIR);
                archive_entry_set_perm (de, 0755);
                archive_entry_set_mtime (de, st.st_mtime, 0);
                ok = archive_write_header (a, de) == ARCHIVE_OK;
                if (!ok)
                    rm_error_set (err, RM_ERR_IO, "%s: %s", child_name, archive_error_string (a));
                archive_entry_free (de);
                ok = ok && add_tree (a, child, child_name, err);
            } else {
                ok = add_file (a, child, child_name, &st, err);
            }
        }
        bson_free (child);
        bson_free (child_name);
        bson_free (names[i]);
    }
    bson_free (names);
    return ok;
}

/* libarchive's output, after its filter, goes through an outstream like
 * every writer's, so the stream's stop on SIGINT/SIGTERM holds here too
 * (libarchive's own fd writer knows nothing of it). The look per MiB in
 * add_file only shortens the wait when the filter emits little: a
 * compressor at a high level on very redundant data. */
typedef struct {
    rm_outstream_t *s;
    bool failed;
    bson_error_t err;
} tar_out_t;

static la_ssize_t
put_block (struct archive *a, void *ctx, const void *buf, size_t len)
{
    tar_out_t *o = ctx;
    if (!rm_outstream_write (o->s, buf, len, &o->err)) {
        o->failed = true;
        archive_set_error (a, EIO, "%s", o->err.message);
        return -1;
    }
    return (la_ssize_t) len;
}

static bool
tarw_finish (rm_writer_t *w, bson_error_t *err)
{
    tarw_t *t = w->impl;
    rm_compress_t none = {RM_CODEC_NONE, 0, 0};
    tar_out_t out = {NULL, false, {0}};
    struct archive *a;
    char opt[64];
    bool ok;
    int fd;

    if (!rm_dirw_finish (t->dir, err))
        return false;
    a = archive_write_new ();
    archive_write_set_format_pax_restricted (a); /* ustar, pax only for long names */
    if (w->opts.compress.codec == RM_CODEC_ZSTD) {
        archive_write_add_filter_zstd (a);
        snprintf (opt, sizeof opt, "zstd:compression-level=%d",
                  w->opts.compress.level ? w->opts.compress.level : 3);
        archive_write_set_options (a, opt);
    } else if (w->opts.compress.codec == RM_CODEC_GZIP) {
        archive_write_add_filter_gzip (a);
        snprintf (opt, sizeof opt, "gzip:compression-level=%d",
                  w->opts.compress.level ? w->opts.compress.level : 6);
        archive_write_set_options (a, opt);
    }
    archive_write_set_bytes_in_last_block (a, 1);
    fd = open (w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0)
        out.s = rm_outstream_new (fd, w->dst, &none, err);
    if (fd < 0 || !out.s || archive_write_open2 (a, &out, NULL, put_block, NULL, NULL) != ARCHIVE_OK) {
        if (fd < 0 || out.s)
            rm_error_set (err, RM_ERR_IO, "%s: cannot create: %s", w->tmp,
                          fd < 0 ? strerror (errno) : archive_error_string (a));
        archive_write_free (a);
        rm_outstream_destroy (out.s);
        if (fd >= 0)
            close (fd);
        return false;
    }
    ok = add_tree (a, t->staging, "dump", err);
    if (archive_write_close (a) != ARCHIVE_OK && ok) {
        rm_error_set (err, RM_ERR_IO, "%s: %s", w->dst, archive_error_string (a));
        ok = false;
    }
    archive_write_free (a);
    /* The stream's own error (a signal, a full disk) says more than
     * libarchive's "write failed". */
    if (out.failed) {
        *err = out.err;
        ok = false;
    }
    ok = ok && rm_outstream_finish (out.s, err);
    rm_outstream_destroy (out.s);
    if (ok && fsync (fd) != 0) {
        rm_error_set (err, RM_ERR_IO, "%s: %s", w->dst, strerror (errno));
        ok = false;
    }
    close (fd);
    return ok;
}

static void
tarw_destroy (rm_writer_t *w)
{
    tarw_t *t = w->impl;
    if (!t)
        return;
    rm_dirw_destroy (t->dir);
    rm_tmppath_remove (t->staging);
    bson_free (t->staging);
    bson_free (t);
    w->impl = NULL;
}

const rm_writer_ops_t rm_tar_writer_ops = {tarw_open, tarw_doc, tarw_ns_end, tarw_finish,
                                           tarw_destroy, NULL};
