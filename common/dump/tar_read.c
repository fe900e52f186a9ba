/* Reading a tar (or any archive libarchive reads, compressed or not) that
 * holds a dump directory, streamed without unpacking to disk.
 *
 * A first pass reads the small files (metadata, prelude) and lists the .bson
 * members, so every namespace is known before the first document, as the
 * archive format's prelude needs. A second pass streams the documents; the
 * oplog, wherever it sits in the tar, is streamed last by a third. A tar
 * on standard input is first copied to a temporary file (reader.c). */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "reader_impl.h"

typedef struct {
    struct archive *a;
    const char *path;
} member_src_t;

typedef struct {
    char *member;  /* path inside the tar */
    rm_ns_t *ns;
} member_t;

typedef struct {
    char *root;        /* the dump directory inside the tar ("" or "dump/") */
    member_t *members; /* .bson members, in tar order */
    size_t n_members;
    struct archive *a; /* the pass in progress */
    enum { STAGE_DATA, STAGE_ENDS, STAGE_OPLOG, STAGE_DONE } stage;
    rm_ns_t *oplog;
    member_t *cur;     /* member being streamed */
    rm_instream_t *s;
    size_t next_end;   /* namespaces without data are ended at the close */
    uint64_t raw_size;
    member_src_t src;  /* the member being streamed */
} tar_t;

static struct archive *
tar_open (const rm_reader_t *r, bson_error_t *err)
{
    struct archive *a = archive_read_new ();
    archive_read_support_filter_all (a);
    archive_read_support_format_all (a);
    if (archive_read_open_filename (a, rm_reader_file (r), 1 << 20) != ARCHIVE_OK) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: cannot read as a tar: %s", r->path,
                      archive_error_string (a));
        archive_read_free (a);
        return NULL;
    }
    return a;
}

static ssize_t
member_read (void *ctx, void *buf, size_t len, bson_error_t *err)
{
    member_src_t *m = ctx;
    la_ssize_t n = archive_read_data (m->a, buf, len);
    if (n < 0) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: %s", m->path, archive_error_string (m->a));
        return -1;
    }
    return (ssize_t) n;
}

/* An absolute member path, or one with a ".." component. */
static bool
climbs (const char *path)
{
    if (path[0] == '/')
        return true;
    for (const char *p = path; *p;) {
        const char *end = strchr (p, '/');
        size_t n = end ? (size_t) (end - p) : strlen (p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return true;
        p += n + (end != NULL);
        if (!end)
            break;
    }
    return false;
}

/* Splits a member path "ROOT/db/file" at its last two components. */
static bool
split_member (const char *path, char **root, char **db, char **file)
{
    const char *last = strrchr (path, '/'), *prev;
    if (!last || last == path)
        return false;
    prev = last - 1;
    while (prev > path && *prev != '/')
        prev--;
    if (*prev == '/') {
        *root = bson_strndup (path, (size_t) (prev - path + 1));
        *db = bson_strndup (prev + 1, (size_t) (last - prev - 1));
    } else {
        *root = bson_strdup ("");
        *db = bson_strndup (path, (size_t) (last - path));
    }
    *file = bson_strdup (last + 1);
    return true;
}

static char *
read_member_text (struct archive *a, const char *label, size_t *len, bson_error_t *err)
{
    member_src_t src = {a, label};
    rm_instream_t *s = rm_instream_new (member_read, &src, label, 0);
    char *text = rm_layout_slurp (s, len, err);
    rm_instream_close (s);
    return text;
}

typedef struct {
    char *db, *stem, *member, *where;
} pending_t;

static bool
first_pass (rm_reader_t *r, tar_t *t, bson_error_t *err)
{
    struct archive *a = tar_open (r, err);
    struct archive_entry *e;
    pending_t *bson = NULL;
    size_t n_bson = 0;
    char *oplog_member = NULL;
    rm_nsindex_t names_ix; /* the namespaces by name, while the members are matched */
    bool ok = true;
    int rc;

    if (!a)
        return false;
    rm_nsindex_init (&names_ix);
    while (ok && (rc = archive_read_next_header (a, &e)) == ARCHIVE_OK) {
        const char *path = archive_entry_pathname (e);
        char *root = NULL, *db = NULL, *file = NULL, *stem = NULL, *label;
        rm_file_kind_t kind;
        const char *base;

        if (archive_entry_filetype (e) != AE_IFREG)
            continue;
        if (strncmp (path, "./", 2) == 0)
            path += 2;
        if (climbs (path)) {
            rm_error_set (err, RM_ERR_FORMAT, "%s: member \"%s\": an absolute path or one that "
                          "climbs with \"..\" (refused: a dump's files stay inside it)", r->path,
                          archive_entry_pathname (e));
            ok = false;
            break;
        }
        base = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
        label = bson_strdup_printf ("%s:%s", r->path, archive_entry_pathname (e));
        if (strcmp (base, "oplog.bson") == 0 || strcmp (base, "prelude.json") == 0 ||
            strcmp (base, "prelude.json.gz") == 0) {
            if (strcmp (base, "oplog.bson") == 0) {
                bson_free (oplog_member);
                oplog_member = bson_strdup (archive_entry_pathname (e));
            } else {
                size_t len;
                char *json = read_member_text (a, label, &len, err);
                if (json)
                    rm_layout_read_prelude (&r->info, json, len);
                ok = json != NULL;
                bson_free (json);
            }
            bson_free (label);
            continue;
        }
        if (!split_member (path, &root, &db, &file)) {
            bson_free (label);
            continue;
        }
        kind = rm_layout_classify (file, &stem);
        if (kind != RM_FILE_OTHER && !t->root)
            t->root = bson_strdup (root);
        if (kind == RM_FILE_METADATA && t->root && strcmp (root, t->root) == 0) {
            size_t len;
            char *json = read_member_text (a, label, &len, err);
            char *where = bson_strdup_printf ("%s:%s%s", r->path, root, db);
            ok = json && rm_layout_add_metadata (&r->info, &names_ix, where, db, stem, json, len, err);
            bson_free (where);
            bson_free (json);
        } else if (kind == RM_FILE_BSON && t->root && strcmp (root, t->root) == 0) {
            bson = bson_realloc (bson, (n_bson + 1) * sizeof *bson);
            bson[n_bson].db = db;
            bson[n_bson].stem = stem;
            bson[n_bson].member = bson_strdup (archive_entry_pathname (e));
            bson[n_bson].where = bson_strdup_printf ("%s:%s%s", r->path, root, db);
            n_bson++;
            db = stem = NULL;
        }
        bson_free (label);
        bson_free (root);
        bson_free (db);
        bson_free (file);
        bson_free (stem);
    }
    if (ok && rc != ARCHIVE_EOF) {
        /* libarchive's "Truncated input file" (a cut inside a member) is
         * worded as the other formats' truncations are. */
        const char *why = archive_error_string (a);
        rm_error_set (err, RM_ERR_FORMAT, "%s: %s%s", r->path,
                      why && strstr (why, "runcated") ? "truncated tar: " : "", why ? why : "unreadable");
        ok = false;
    }
    /* libarchive takes the end of the input for the end of the tar, even
     * between two members. A whole tar ends with two zero blocks: after
     * them, the position read is 1024 bytes past where the last "header"
     * (the first zero block) began. Anything short of that is a cut. */
    if (ok && archive_filter_bytes (a, 0) < archive_read_header_position (a) + 1024) {
        rm_error_set (err, RM_ERR_FORMAT,
                      "%s: truncated tar: it ends at byte %lld without the end-of-archive "
                      "blocks (two 512-byte zero blocks)",
                      r->path, (long long) archive_filter_bytes (a, 0));
        ok = false;
    }
    archive_read_free (a);

    /* Data members are matched once every metadata file has been seen. */
    for (size_t i = 0; i < n_bson; i++) {
        if (ok) {
            rm_ns_t *ns = rm_layout_ns_for_bson (&r->info, &names_ix, bson[i].where, bson[i].db,
                                                 bson[i].stem, err);
            ok = ns != NULL;
            if (ok) {
                t->members = bson_realloc (t->members, (t->n_members + 1) * sizeof *t->members);
                t->members[t->n_members].member = bson[i].member;
                t->members[t->n_members].ns = ns;
                t->n_members++;
                bson[i].member = NULL;
            }
        }
        bson_free (bson[i].db);
        bson_free (bson[i].where);
        bson_free (bson[i].stem);
        bson_free (bson[i].member);
    }
    bson_free (bson);
    rm_nsindex_destroy (&names_ix);
    if (ok && oplog_member) {
        rm_ns_t *ns = rm_dump_info_add (&r->info, "", "oplog");
        rm_ns_set_metadata (ns, "", 0);
        t->members = bson_realloc (t->members, (t->n_members + 1) * sizeof *t->members);
        t->members[t->n_members].member = oplog_member;
        t->members[t->n_members].ns = ns;
        t->n_members++;
        t->oplog = ns;
        oplog_member = NULL;
    }
    bson_free (oplog_member);
    if (ok && r->info.n_ns == 0) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: no dump files (<db>/<coll>.bson or "
                      ".metadata.json) in this tar", r->path);
        ok = false;
    }
    return ok;
}

static member_t *
find_member (tar_t *t, const char *path)
{
    for (size_t i = 0; i < t->n_members; i++)
        if (strcmp (t->members[i].member, path) == 0)
            return &t->members[i];
    return NULL;
}

static int
tar_next (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    tar_t *t = r->impl;

    for (;;) {
        if (t->cur) {
            rm_ns_t *ns = t->cur->ns;
            int rc = rm_layout_next_doc (r, t->s, ns, item, err);
            if (rc != 0)
                return rc;
            rm_instream_close (t->s);
            t->s = NULL;
            t->cur = NULL;
            return rm_layout_end_ns (ns, item);
        }

        switch (t->stage) {
        case STAGE_DATA:
        case STAGE_OPLOG:
            if (!t->a && !(t->a = tar_open (r, err)))
                return -1;
            {
                struct archive_entry *e;
                int rc = archive_read_next_header (t->a, &e);
                if (rc == ARCHIVE_OK) {
                    member_t *m = find_member (t, archive_entry_pathname (e));
                    char *label;
                    if (!m || m->ns->ended || m->ns->is_oplog != (t->stage == STAGE_OPLOG))
                        continue;
                    label = bson_strdup_printf ("%s:%s", r->path, m->member);
                    t->src.a = t->a;
                    t->s = rm_instream_new (member_read, &t->src, label, 0);
                    t->src.path = rm_instream_name (t->s);
                    bson_free (label);
                    t->cur = m;
                    continue;
                }
                if (rc != ARCHIVE_EOF) {
                    rm_error_set (err, RM_ERR_FORMAT, "%s: %s", r->path,
                                  archive_error_string (t->a));
                    return -1;
                }
                archive_read_free (t->a);
                t->a = NULL;
                t->stage = t->stage == STAGE_DATA ? STAGE_ENDS : STAGE_DONE;
            }
            continue;
        case STAGE_ENDS:
            /* Views and metadata-only collections end before the oplog. */
            while (t->next_end < r->info.n_ns) {
                rm_ns_t *ns = r->info.ns[t->next_end++];
                if (!ns->ended && !ns->is_oplog)
                    return rm_layout_end_ns (ns, item);
            }
            t->stage = t->oplog ? STAGE_OPLOG : STAGE_DONE;
            continue;
        default:
            if (t->oplog && !t->oplog->ended) /* an oplog member with no data */
                return rm_layout_end_ns (t->oplog, item);
            return 0;
        }
    }
}

static void
tar_progress (const rm_reader_t *r, uint64_t *done, uint64_t *total)
{
    tar_t *t = r->impl;
    *done = t->a ? (uint64_t) archive_filter_bytes (t->a, -1)
                 : t->stage == STAGE_DATA ? 0 : t->raw_size;
    *total = t->raw_size;
}

static void
tar_close (rm_reader_t *r)
{
    tar_t *t = r->impl;
    rm_instream_close (t->s);
    if (t->a)
        archive_read_free (t->a);
    for (size_t i = 0; i < t->n_members; i++)
        bson_free (t->members[i].member);
    bson_free (t->members);
    bson_free (t->root);
    bson_free (t);
}

static const rm_reader_ops_t tar_ops = {tar_next, tar_progress, tar_close};

bool
rm_tar_reader_init (rm_reader_t *r, bson_error_t *err)
{
    tar_t *t = bson_malloc0 (sizeof *t);
    struct stat st;

    r->impl = t;
    r->ops = &tar_ops;
    r->info.format = RM_FORMAT_TAR;
    if (stat (rm_reader_file (r), &st) == 0)
        t->raw_size = (uint64_t) st.st_size;
    if (!first_pass (r, t, err)) {
        tar_close (r);
        r->ops = NULL;
        return false;
    }
    return true;
}
