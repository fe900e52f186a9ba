/* Opening any dump: the format is told by the bytes, never by the name. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instream_impl.h"
#include "reader_impl.h"
#include "remodel/nsname.h"
#include "remodel/nsselect.h"
#include "remodel/tmppath.h"

static const uint8_t archive_magic[4] = {0x6d, 0xe2, 0x99, 0x81};

/* Compressions libarchive reads that our instream does not: a file that
 * starts with one of these is taken for a compressed tar. */
static bool
other_compression (const uint8_t *p, ssize_t n)
{
    return (n >= 6 && memcmp (p, "\xfd" "7zXZ\0", 6) == 0) ||
           (n >= 3 && memcmp (p, "BZh", 3) == 0) ||
           (n >= 4 && memcmp (p, "\x04\x22\x4d\x18", 4) == 0) ||
           (n >= 4 && memcmp (p, "\x89LZO", 4) == 0);
}

static rm_reader_t *
reader_new (const char *name, const rm_read_opts_t *opts)
{
    rm_reader_t *r = bson_malloc0 (sizeof *r);
    r->path = bson_strdup (name);
    r->quarantine_fd = -1;
    if (opts)
        r->opts = *opts;
    rm_dump_info_init (&r->info);
    return r;
}

static void
reader_free (rm_reader_t *r)
{
    if (r->spool)
        rm_tmppath_remove (r->spool);
    bson_free (r->spool);
    rm_reader_select_destroy (r);
    rm_dump_info_destroy (&r->info);
    bson_free (r->path);
    bson_free (r);
}

/* A tar is read in several passes (its metadata may follow its data), so
 * one that arrives on a stream is first copied to a temporary file, as
 * the stream gives it (gzip and zstd already undone). */
static bool
spool (rm_reader_t *r, rm_instream_t *s, bson_error_t *err)
{
    const char *dir = r->opts.tmpdir && *r->opts.tmpdir ? r->opts.tmpdir
                      : getenv ("TMPDIR") && *getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
    char *base = bson_strdup_printf ("%s/remodel-stdin.tar", dir);
    const uint8_t *p;
    ssize_t n;
    int fd;

    r->spool = rm_tmppath_new (base);
    bson_free (base);
    fd = open (r->spool, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot create a temporary copy of the tar: %s",
                      r->spool, strerror (errno));
        return false;
    }
    while ((n = rm_instream_fill (s, 1 << 20, &p, err)) > 0) {
        if (!rm_reader_write_all (fd, r->spool, p, (size_t) n, err)) {
            close (fd);
            return false;
        }
        rm_instream_skip (s, (size_t) n);
    }
    if (close (fd) != 0 && n == 0) {
        rm_error_set (err, RM_ERR_IO, "%s: %s", r->spool, strerror (errno));
        return false;
    }
    return n == 0;
}

/* Picks the reader for a stream by its first (decompressed) bytes. tar_ok:
 * the stream is a file that the tar reader can open again by path. */
static bool
init_by_content (rm_reader_t *r, rm_instream_t *s, bool tar_ok, bson_error_t *err)
{
    const uint8_t *p;
    ssize_t n = rm_instream_fill (s, 512, &p, err);

    if (n < 0) {
        rm_instream_close (s);
        return false;
    }
    if (n >= 4 && memcmp (p, archive_magic, 4) == 0)
        return rm_archive_reader_init (r, s, err);
    if ((n >= 262 && memcmp (p + 257, "ustar", 5) == 0) ||
        (rm_instream_codec (s) == RM_CODEC_NONE && other_compression (p, n))) {
        bool ok = tar_ok || spool (r, s, err);
        rm_instream_close (s);
        return ok && rm_tar_reader_init (r, err);
    }
    return rm_bson_reader_init (r, s, err);
}

/* Every namespace a dump names must be one MongoDB allows: a name that
 * breaks the rules ("..", "a/b", an empty one) is refused here, naming the
 * input, before anything can be written under it. */
static bool
check_names (rm_reader_t *r, bson_error_t *err)
{
    const rm_dump_info_t *info = rm_reader_info (r); /* after --nsFrom/--nsTo */
    for (size_t i = 0; i < info->n_ns; i++) {
        const rm_ns_t *ns = info->ns[i];
        char why[160];
        if (ns->is_oplog || rm_nsname_check (ns->db, ns->coll, why, sizeof why))
            continue;
        rm_error_set (err, RM_ERR_FORMAT, "%s: namespace with database \"%s\" and collection \"%s\": %s",
                      r->path, ns->db, ns->coll, why);
        return false;
    }
    return true;
}

rm_reader_t *
rm_reader_open (const char *path, const rm_read_opts_t *opts, bson_error_t *err)
{
    bool is_stdin = strcmp (path, "-") == 0;
    rm_reader_t *r = reader_new (is_stdin ? "<stdin>" : path, opts);
    struct stat st;
    bool ok;

    if (!is_stdin && stat (path, &st) == 0 && S_ISDIR (st.st_mode)) {
        ok = rm_dir_reader_init (r, err);
    } else {
        rm_instream_t *s = rm_instream_open (path, err);
        ok = s && init_by_content (r, s, !is_stdin, err);
    }
    if (ok && !rm_nsselect_empty (r->opts.select))
        ok = rm_reader_select_init (r, err);
    ok = ok && check_names (r, err);
    if (!ok) {
        if (r->ops) /* the format opened, then a check failed: close it whole */
            rm_reader_close (r);
        else
            reader_free (r);
        return NULL;
    }
    return r;
}

rm_reader_t *
rm_reader_open_stream (rm_instream_t *s, const rm_read_opts_t *opts, bson_error_t *err)
{
    rm_reader_t *r = reader_new (rm_instream_name (s), opts);
    if (!init_by_content (r, s, false, err) ||
        (!rm_nsselect_empty (r->opts.select) && !rm_reader_select_init (r, err)) ||
        !check_names (r, err)) {
        if (r->ops) /* the format opened, then a check failed: close it whole */
            rm_reader_close (r);
        else
            reader_free (r);
        return NULL;
    }
    return r;
}

rm_reader_t *
rm_reader_open_memory (const char *name, const rm_dump_info_t *info, const uint8_t *const *docs,
                       const size_t *lens)
{
    rm_reader_t *r = reader_new (name, NULL);
    rm_mem_reader_init (r, info, docs, lens);
    return r;
}

const rm_dump_info_t *
rm_reader_info (const rm_reader_t *r)
{
    return r->viewing ? &r->view : &r->info;
}

int
rm_reader_next (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    for (;;) {
        int rc;
        item->held = false; /* set by a format that holds its documents */
        item->n_docs = 1;   /* more by a format that gives runs */
        rc = r->ops->next (r, item, err);
        /* The caller may read item->ns->crc at a namespace's end; at the end
         * or on an error it may print every namespace's. */
        if (rc != 1 || item->kind != RM_ITEM_DOC)
            rm_reader_crc_flush (r);
        if (!r->viewing)
            return rc;
        if (rc != 1) {
            rm_reader_select_sync (r);
            return rc;
        }
        rc = rm_reader_select_item (r, item, err);
        if (rc != 0)
            return rc;
    }
}

int
rm_reader_next_run (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    int rc;
    r->runs = true;
    rc = rm_reader_next (r, item, err);
    r->runs = false;
    return rc;
}

void
rm_reader_progress (const rm_reader_t *r, uint64_t *done, uint64_t *total)
{
    r->ops->progress (r, done, total);
}

uint64_t
rm_reader_skipped (const rm_reader_t *r)
{
    return r->skipped;
}

void
rm_reader_close (rm_reader_t *r)
{
    if (!r)
        return;
    rm_reader_crc_flush (r);
    if (r->ops)
        r->ops->close (r);
    if (r->quarantine_fd >= 0)
        close (r->quarantine_fd);
    reader_free (r);
}
