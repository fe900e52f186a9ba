/* Reading one .bson file (or a stream of documents on standard input): one
 * namespace, named after the file and the directory it sits in, with the
 * .metadata.json beside it when there is one. */
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "remodel/metadata.h"
#include "reader_impl.h"
#include "remodel/bsoncheck.h"
#include "remodel/crc64.h"
#include "remodel/nsname.h"

typedef struct {
    rm_instream_t *s;
    rm_ns_t *ns;
    bool done;
} bsonfile_t;

static int
bson_next (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    bsonfile_t *b = r->impl;
    rm_frame_t f;
    rm_frame_kind_t k;

    if (b->done)
        return 0;
    /* The server's limit, as for every other input; only an oplog (a file
     * named oplog.bson) may hold entries up to 16 KiB over it. */
    k = rm_reader_frame (r, b->s, b->ns,
                         strcmp (b->ns->coll, "oplog") == 0 ? RM_BSON_MAX_OPLOG_SIZE : RM_BSON_MAX_SIZE,
                         &f, err);
    if (k == RM_FRAME_DOC) {
        item->kind = RM_ITEM_DOC;
        item->ns = b->ns;
        item->doc = f.data;
        item->len = f.len;
        item->ordinal = b->ns->docs + b->ns->invalid;
        return 1;
    }
    if (k == RM_FRAME_TERMINATOR) {
        rm_error_doc (err, RM_ERR_FORMAT, r->path, b->ns->coll, b->ns->docs + b->ns->invalid + 1,
                      f.offset, "bad document length -1");
        return -1;
    }
    if (k == RM_FRAME_END) {
        b->done = true;
        b->ns->ended = true;
        item->kind = RM_ITEM_NS_END;
        item->ns = b->ns;
        item->doc = NULL;
        item->len = 0;
        return 1;
    }
    return -1;
}

static void
bson_progress (const rm_reader_t *r, uint64_t *done, uint64_t *total)
{
    bsonfile_t *b = r->impl;
    *done = rm_instream_raw_pos (b->s);
    *total = rm_instream_raw_size (b->s);
}

static void
bson_close (rm_reader_t *r)
{
    bsonfile_t *b = r->impl;
    rm_instream_close (b->s);
    bson_free (b);
}

static const rm_reader_ops_t bson_ops = {bson_next, bson_progress, bson_close};

/* Reads PATH.metadata.json[.gz] beside the .bson file, if there is one. */
static char *
read_side_metadata (const char *dir, const char *stem, size_t *len)
{
    static const char *suffixes[] = {".metadata.json", ".metadata.json.gz"};
    for (size_t i = 0; i < 2; i++) {
        char *path = bson_strdup_printf ("%s/%s%s", dir, stem, suffixes[i]);
        rm_instream_t *s = rm_instream_open (path, NULL);
        bson_free (path);
        if (s) {
            const uint8_t *p;
            ssize_t n = rm_instream_fill (s, 16 << 20, &p, NULL);
            char *text = NULL;
            if (n >= 0) {
                text = bson_malloc ((size_t) n + 1);
                memcpy (text, p, (size_t) n);
                text[n] = '\0';
                *len = (size_t) n;
            }
            rm_instream_close (s);
            return text;
        }
    }
    return NULL;
}

bool
rm_bson_reader_init (rm_reader_t *r, rm_instream_t *s, bson_error_t *err)
{
    bsonfile_t *b = bson_malloc0 (sizeof *b);
    char *stem = NULL, *dir = NULL, *db = NULL, *coll;
    rm_file_kind_t kind = RM_FILE_OTHER;
    bool ok = true;

    b->s = s;
    if (!r->opts.no_check) /* else no document is checked, ahead or not */
        rm_instream_expect_frames (s);
    r->impl = b;
    r->ops = &bson_ops;
    r->info.format = RM_FORMAT_BSON;
    r->info.codec = rm_instream_codec (s);

    if (strcmp (r->path, "<stdin>") != 0) {
        char *c1 = bson_strdup (r->path), *c2 = bson_strdup (r->path);
        kind = rm_layout_classify (basename (c1), &stem);
        dir = bson_strdup (dirname (c2));
        db = bson_strdup (basename (dir));
        bson_free (c1);
        bson_free (c2);
    }
    if (kind != RM_FILE_BSON) {
        /* Not named like a dump file: keep the whole name as the collection. */
        char *c1 = bson_strdup (r->path);
        bson_free (stem);
        stem = bson_strdup (strcmp (r->path, "<stdin>") == 0 ? "stdin" : basename (c1));
        bson_free (c1);
    }
    if (!db || strcmp (db, ".") == 0 || strcmp (db, "/") == 0) {
        bson_free (db);
        db = bson_strdup ("test");
    }
    /* The database is only guessed from the parent directory's name, which
     * may hold what MongoDB refuses in one (/tmp/dump.2024/c.bson): such
     * characters become '_' (and the name is cut to 63 bytes), where a
     * name a dump itself gives is refused instead. */
    for (char *p = db; *p; p++)
        if (strchr ("/\\. \"$", *p))
            *p = '_';
    if (strlen (db) > 63)
        db[63] = '\0';
    coll = rm_nsname_unescape (stem);
    b->ns = rm_dump_info_add (&r->info, db, coll ? coll : stem);
    if (dir && kind == RM_FILE_BSON) {
        size_t len = 0;
        char *meta = read_side_metadata (dir, stem, &len);
        if (meta) {
            rm_metadata_t m;
            rm_ns_set_metadata (b->ns, meta, len);
            rm_metadata_read (meta, len, &m);
            {
                char *file = bson_strdup_printf ("%s/%s.metadata.json", dir, stem);
                ok = rm_metadata_check_name (&m, file, db, err);
                bson_free (file);
            }
            if (ok && m.collection_name) {
                bson_free (b->ns->coll);
                b->ns->coll = bson_strdup (m.collection_name);
            }
            rm_metadata_clear (&m);
            bson_free (meta);
        }
    }
    bson_free (b->ns->data_coll);
    b->ns->data_coll = bson_strdup (b->ns->coll);
    bson_free (coll);
    bson_free (stem);
    bson_free (dir);
    bson_free (db);
    return ok;
}
