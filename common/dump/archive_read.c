/* Reading mongodump --archive streams (mongo-tools' archive format):
 * magic, header, prelude of namespaces, then interleaved data segments, each
 * namespace closed by an EOF block whose CRC-64 is checked here. */
#include <stdio.h>
#include <string.h>

#include "reader_impl.h"
#include "remodel/nsname.h"
#include "remodel/bsoncheck.h"
#include "remodel/crc64.h"

typedef struct {
    rm_instream_t *s;
    rm_ns_t *cur;        /* the namespace whose segment is open, or NULL */
    size_t open_ns;      /* namespaces not yet closed by their EOF block */
} archive_t;

static bool
versions_at_least (const char *v, int major, int minor)
{
    int a = 0, b = 0;
    if (!v || sscanf (v, "%d.%d", &a, &b) < 1)
        return false;
    return a > major || (a == major && b >= minor);
}

static bool
read_header (rm_reader_t *r, archive_t *a, bson_error_t *err)
{
    rm_frame_t f;
    bson_t b;
    bson_iter_t it;

    switch (rm_reader_frame (r, a->s, NULL, RM_BSON_MAX_SIZE, &f, err)) {
    case RM_FRAME_DOC:
        break;
    case RM_FRAME_ERROR:
        rm_error_prefix (err, "archive header");
        return false;
    default:
        rm_error_set (err, RM_ERR_FORMAT, "%s: truncated archive: no header after the magic",
                      r->path);
        return false;
    }
    bson_init_static (&b, f.data, f.len);
    bson_iter_init (&it, &b);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (strcmp (k, "server_version") == 0 && BSON_ITER_HOLDS_UTF8 (&it))
            r->info.server_version = bson_strdup (bson_iter_utf8 (&it, NULL));
        else if (strcmp (k, "tool_version") == 0 && BSON_ITER_HOLDS_UTF8 (&it))
            r->info.tool_version = bson_strdup (bson_iter_utf8 (&it, NULL));
        else if (strcmp (k, "concurrent_collections") == 0 && BSON_ITER_HOLDS_INT32 (&it))
            r->info.concurrent_collections = bson_iter_int32 (&it);
    }
    return true;
}

/* A BSON string may hold NUL bytes, which no database or collection name
 * does (MongoDB refuses them) and which C strings would silently cut: a
 * name "db\0../x" must not pass as "db". The message shows the whole name,
 * its NULs as \x00. */
static bool
names_without_nul (const rm_reader_t *r, const char *db, uint32_t db_len, const char *coll,
                   uint32_t coll_len, bson_error_t *err)
{
    bool db_nul = strlen (db) != db_len, coll_nul = strlen (coll) != coll_len;
    char *d, *c;
    if (!db_nul && !coll_nul)
        return true;
    d = rm_nsname_show (db, db_len);
    c = rm_nsname_show (coll, coll_len);
    rm_error_set (err, RM_ERR_FORMAT,
                  "%s: namespace with database \"%s\" and collection \"%s\": a %s name holding a "
                  "NUL byte", r->path, d, c, db_nul ? "database" : "collection");
    bson_free (d);
    bson_free (c);
    return false;
}

static bool
read_prelude (rm_reader_t *r, archive_t *a, bson_error_t *err)
{
    /* Time-series data lives under system.buckets.<coll> before 8.3. */
    bool buckets = !versions_at_least (r->info.server_version, 8, 3);

    for (;;) {
        rm_frame_t f;
        bson_t b;
        bson_iter_t it;
        const char *db = NULL, *coll = NULL, *meta = NULL, *type = NULL;
        uint32_t meta_len = 0, db_len = 0, coll_len = 0;
        rm_ns_t *ns;

        switch (rm_reader_frame (r, a->s, NULL, RM_BSON_MAX_SIZE, &f, err)) {
        case RM_FRAME_TERMINATOR:
            return true;
        case RM_FRAME_ERROR:
            rm_error_prefix (err, "archive prelude");
            return false;
        case RM_FRAME_END:
            rm_error_set (err, RM_ERR_FORMAT,
                          "%s: truncated archive: it ends inside the prelude at byte %llu",
                          r->path, (unsigned long long) f.offset);
            return false;
        default:
            break;
        }
        bson_init_static (&b, f.data, f.len);
        bson_iter_init (&it, &b);
        while (bson_iter_next (&it)) {
            const char *k = bson_iter_key (&it);
            if (!BSON_ITER_HOLDS_UTF8 (&it))
                continue;
            if (strcmp (k, "db") == 0 || strcmp (k, "collection") == 0)
                *(k[0] == 'd' ? &db : &coll) = bson_iter_utf8 (&it, k[0] == 'd' ? &db_len : &coll_len);
            else if (strcmp (k, "metadata") == 0)
                meta = bson_iter_utf8 (&it, &meta_len);
            else if (strcmp (k, "type") == 0)
                type = bson_iter_utf8 (&it, NULL);
        }
        if (!db || !coll) {
            rm_error_set (err, RM_ERR_FORMAT,
                          "%s: prelude entry at byte %llu has no db or collection", r->path,
                          (unsigned long long) f.offset);
            return false;
        }
        if (!names_without_nul (r, db, db_len, coll, coll_len, err))
            return false;
        if (rm_dump_info_find (&r->info, db, coll)) {
            rm_error_set (err, RM_ERR_FORMAT, "%s: prelude names %s.%s twice", r->path, db, coll);
            return false;
        }
        ns = rm_dump_info_add (&r->info, db, coll);
        if (type) {
            bson_free (ns->type);
            ns->type = bson_strdup (type);
            ns->has_type = true;
            ns->is_view = strcmp (type, "view") == 0;
            if (strcmp (type, "timeseries") == 0 && buckets) {
                bson_free (ns->data_coll);
                ns->data_coll = bson_strdup_printf ("system.buckets.%s", coll);
            }
        }
        /* An empty metadata string (oplog, users, roles) stays empty. */
        rm_ns_set_metadata (ns, meta ? meta : "", meta ? meta_len : 0);
        a->open_ns++;
    }
}

/* Parses a namespace header: exactly db, collection, EOF, CRC (int64). */
static bool
parse_ns_header (rm_reader_t *r, const rm_frame_t *f, const char **db, const char **coll,
                 bool *eof, int64_t *crc, bson_error_t *err)
{
    bson_t b;
    bson_iter_t it;
    int seen = 0;
    const char *extra = NULL;
    uint32_t db_len = 0, coll_len = 0;

    bson_init_static (&b, f->data, f->len);
    bson_iter_init (&it, &b);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (strcmp (k, "db") == 0 && BSON_ITER_HOLDS_UTF8 (&it))
            *db = bson_iter_utf8 (&it, &db_len), seen |= 1;
        else if (strcmp (k, "collection") == 0 && BSON_ITER_HOLDS_UTF8 (&it))
            *coll = bson_iter_utf8 (&it, &coll_len), seen |= 2;
        else if (strcmp (k, "EOF") == 0 && BSON_ITER_HOLDS_BOOL (&it))
            *eof = bson_iter_bool (&it), seen |= 4;
        else if (strcmp (k, "CRC") == 0 && BSON_ITER_HOLDS_INT64 (&it))
            *crc = bson_iter_int64 (&it), seen |= 8;
        else if (!extra)
            extra = k;
    }
    if (extra) {
        /* mongorestore refuses any other key; name the namespace if known. */
        rm_error_set (err, RM_ERR_FORMAT,
                      "%s: %s%s%s: bad namespace header at byte %llu: unexpected field \"%s\"",
                      r->path, (seen & 1) ? *db : "?", ".", (seen & 2) ? *coll : "?",
                      (unsigned long long) f->offset, extra);
        return false;
    }
    if (seen != 15) {
        rm_error_set (err, RM_ERR_FORMAT,
                      "%s: bad namespace header at byte %llu: it needs db, collection, EOF "
                      "and an int64 CRC",
                      r->path, (unsigned long long) f->offset);
        return false;
    }
    /* "db\0x" must not pass for the prelude's "db". */
    return names_without_nul (r, *db, db_len, *coll, coll_len, err);
}

static rm_ns_t *
find_segment_ns (rm_reader_t *r, const char *db, const char *coll)
{
    rm_ns_t *ns = rm_dump_info_find_data (&r->info, db, coll);
    if (!ns && strncmp (coll, "system.buckets.", 15) == 0) {
        ns = rm_dump_info_find (&r->info, db, coll + 15);
        if (ns) {
            bson_free (ns->data_coll);
            ns->data_coll = bson_strdup (coll);
        }
    }
    return ns;
}

static int
archive_next (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    archive_t *a = r->impl;
    char name[512];

    for (;;) {
        rm_frame_t f;
        rm_frame_kind_t k;

        if (a->cur) {
            uint32_t max = a->cur->is_oplog ? RM_BSON_MAX_OPLOG_SIZE : RM_BSON_MAX_SIZE;
            k = rm_reader_frame (r, a->s, a->cur, max, &f, err);
            if (k == RM_FRAME_DOC) {
                item->kind = RM_ITEM_DOC;
                item->ns = a->cur;
                item->ordinal = a->cur->docs + a->cur->invalid;
                item->n_docs = rm_reader_frame_run (r, a->s, a->cur, max, &f);
                item->doc = f.data;
                item->len = f.len;
                item->held = rm_instream_held (a->s);
                return 1;
            }
            if (k == RM_FRAME_TERMINATOR) {
                a->cur = NULL;
                continue;
            }
            if (k == RM_FRAME_END)
                rm_error_set (err, RM_ERR_FORMAT,
                              "%s: %s: truncated archive: it ends inside a data segment "
                              "after document %llu, at byte %llu",
                              r->path, rm_ns_name (a->cur, name, sizeof name),
                              (unsigned long long) (a->cur->docs + a->cur->invalid),
                              (unsigned long long) f.offset);
            return -1;
        }

        k = rm_reader_frame (r, a->s, NULL, RM_BSON_MAX_SIZE, &f, err);
        if (k == RM_FRAME_END) {
            if (a->open_ns == 0)
                return 0;
            for (size_t i = 0; i < r->info.n_ns; i++)
                if (!r->info.ns[i]->ended) {
                    rm_error_set (err, RM_ERR_FORMAT,
                                  "%s: %s: truncated archive: it ends at byte %llu before "
                                  "the namespace's EOF block (%zu namespace(s) left open)",
                                  r->path, rm_ns_name (r->info.ns[i], name, sizeof name),
                                  (unsigned long long) f.offset, a->open_ns);
                    break;
                }
            return -1;
        }
        if (k == RM_FRAME_TERMINATOR) {
            rm_error_set (err, RM_ERR_FORMAT,
                          "%s: a terminator at byte %llu where a namespace header belongs",
                          r->path, (unsigned long long) f.offset);
            return -1;
        }
        if (k != RM_FRAME_DOC) {
            rm_error_prefix (err, "namespace header");
            return -1;
        }

        {
            const char *db = NULL, *coll = NULL;
            bool eof = false;
            int64_t crc = 0;
            rm_ns_t *ns;
            uint64_t at = f.offset;

            if (!parse_ns_header (r, &f, &db, &coll, &eof, &crc, err))
                return -1;
            ns = find_segment_ns (r, db, coll);
            if (!ns) {
                rm_error_set (err, RM_ERR_FORMAT,
                              "%s: %s.%s: a data segment at byte %llu for a namespace "
                              "missing from the prelude",
                              r->path, db, coll, (unsigned long long) at);
                return -1;
            }
            if (ns->ended) {
                rm_error_set (err, RM_ERR_FORMAT,
                              "%s: %s: a segment at byte %llu reopens the namespace after "
                              "its EOF block",
                              r->path, rm_ns_name (ns, name, sizeof name), (unsigned long long) at);
                return -1;
            }
            if (!eof) {
                a->cur = ns;
                continue;
            }
            rm_reader_crc_flush (r);
            /* Documents set aside by --skip-invalid leave the CRC unverifiable. */
            if (ns->invalid == 0 && (uint64_t) crc != ns->crc) {
                rm_error_set (err, RM_ERR_CRC,
                              "%s: %s: CRC mismatch at the EOF block at byte %llu: the "
                              "archive says %016llx, the %llu document(s) read give %016llx",
                              r->path, rm_ns_name (ns, name, sizeof name),
                              (unsigned long long) at, (unsigned long long) crc,
                              (unsigned long long) ns->docs, (unsigned long long) ns->crc);
                return -1;
            }
            /* The EOF block is followed by its own terminator. */
            k = rm_frame_next (a->s, 4, false, &f, err);
            if (k != RM_FRAME_TERMINATOR) {
                if (k != RM_FRAME_ERROR || f.reason[0])
                    rm_error_set (err, RM_ERR_FORMAT,
                                  "%s: %s: no terminator after the EOF block (byte %llu)",
                                  r->path, rm_ns_name (ns, name, sizeof name),
                                  (unsigned long long) f.offset);
                return -1;
            }
            ns->crc_checked = ns->invalid == 0;
            ns->ended = true;
            a->open_ns--;
            item->kind = RM_ITEM_NS_END;
            item->ns = ns;
            item->doc = NULL;
            item->len = 0;
            return 1;
        }
    }
}

static void
archive_progress (const rm_reader_t *r, uint64_t *done, uint64_t *total)
{
    archive_t *a = r->impl;
    *done = rm_instream_raw_pos (a->s);
    *total = rm_instream_raw_size (a->s);
}

static void
archive_close (rm_reader_t *r)
{
    archive_t *a = r->impl;
    rm_instream_close (a->s);
    bson_free (a);
}

static const rm_reader_ops_t archive_ops = {archive_next, archive_progress, archive_close};

bool
rm_archive_reader_init (rm_reader_t *r, rm_instream_t *s, bson_error_t *err)
{
    archive_t *a = bson_malloc0 (sizeof *a);
    a->s = s;
    r->impl = a;
    r->ops = &archive_ops;
    r->info.format = RM_FORMAT_ARCHIVE;
    r->info.codec = rm_instream_codec (s);
    rm_instream_skip (s, 4); /* the magic, checked by the caller */
    if (!r->opts.no_check) /* else no document is checked, ahead or not */
        rm_instream_expect_frames (s);
    if (!read_header (r, a, err) || !read_prelude (r, a, err)) {
        archive_close (r);
        r->ops = NULL;
        return false;
    }
    return true;
}
