/* File naming of directory dumps, shared by the directory and tar readers:
 * <db>/<escaped coll>.bson[.gz] beside <escaped coll>.metadata.json[.gz];
 * and the reading of one such .bson file, which is the same in both. */
#include <string.h>

#include "remodel/bsoncheck.h"
#include "remodel/metadata.h"
#include "reader_impl.h"
#include "remodel/nsname.h"

static bool
ends_with (const char *s, const char *suffix, size_t *stem_len)
{
    size_t n = strlen (s), m = strlen (suffix);
    /* An empty stem (".bson") is the file of a collection named "": kept,
     * so that the name check refuses it instead of the data being passed
     * over. */
    if (n < m || strcmp (s + n - m, suffix) != 0)
        return false;
    *stem_len = n - m;
    return true;
}

rm_file_kind_t
rm_layout_classify (const char *name, char **stem)
{
    size_t n;
    *stem = NULL;
    if (ends_with (name, ".metadata.json", &n) || ends_with (name, ".metadata.json.gz", &n)) {
        *stem = bson_strndup (name, n);
        return RM_FILE_METADATA;
    }
    /* .bson.zst is not mongodump's, but remodel writes it for single files. */
    if (ends_with (name, ".bson", &n) || ends_with (name, ".bson.gz", &n) ||
        ends_with (name, ".bson.zst", &n)) {
        *stem = bson_strndup (name, n);
        return RM_FILE_BSON;
    }
    return RM_FILE_OTHER;
}

/* The collection a file stem names: its unescaped form. NULL and an error
 * for a bad %XX or a %00 (no collection name holds a NUL byte); a hashed
 * stem must be named by its metadata. file is the file's path for the
 * message. */
static char *
coll_of_stem (const char *file, const char *db, const char *stem, bson_error_t *err)
{
    size_t len;
    char *coll = rm_nsname_is_hashed (stem) ? NULL : rm_nsname_unescape_len (stem, &len);
    if (coll && strlen (coll) != len) {
        char *shown = rm_nsname_show (coll, len);
        rm_error_set (err, RM_ERR_FORMAT, "%s: namespace with database \"%s\" and collection "
                      "\"%s\": a collection name holding a NUL byte", file, db, shown);
        bson_free (shown);
        bson_free (coll);
        return NULL;
    }
    if (!coll)
        rm_error_set (err, RM_ERR_FORMAT,
                      "%s: cannot tell the collection's name (a bad escape, or a hashed long "
                      "name with no metadata file giving collectionName)", file);
    return coll;
}

static void
apply_metadata (rm_ns_t *ns, const char *json, size_t len)
{
    rm_metadata_t m;
    rm_ns_set_metadata (ns, json, len);
    rm_metadata_read (json, len, &m);
    bson_free (ns->type);
    if (m.type) {
        ns->type = bson_strdup (m.type);
    } else {
        ns->type = bson_strdup (m.is_view ? "view" : m.is_timeseries ? "timeseries" : "collection");
    }
    ns->has_type = true;
    ns->is_view = m.is_view;
    rm_metadata_clear (&m);
}

rm_ns_t *
rm_layout_add_metadata (rm_dump_info_t *info, rm_nsindex_t *names, const char *where, const char *db,
                        const char *stem, const char *json, size_t len, bson_error_t *err)
{
    rm_metadata_t m;
    char *coll;
    rm_ns_t *ns;

    rm_metadata_read (json, len, &m);
    {
        char *file = bson_strdup_printf ("%s/%s.metadata.json", where, stem);
        bool ok = rm_metadata_check_name (&m, file, db, err);
        bson_free (file);
        if (!ok) {
            rm_metadata_clear (&m);
            return NULL;
        }
    }
    if (m.collection_name) {
        coll = bson_strdup (m.collection_name);
    } else {
        char *file = bson_strdup_printf ("%s/%s.metadata.json", where, stem);
        coll = coll_of_stem (file, db, stem, err);
        bson_free (file);
        if (!coll) {
            rm_metadata_clear (&m);
            return NULL;
        }
    }
    rm_metadata_clear (&m);
    ns = rm_nsindex_find (names, info, db, coll);
    if (!ns)
        ns = rm_dump_info_add (info, db, coll);
    bson_free (coll);
    apply_metadata (ns, json, len);
    return ns;
}

rm_ns_t *
rm_layout_ns_for_bson (rm_dump_info_t *info, rm_nsindex_t *names, const char *where, const char *db,
                       const char *stem, bson_error_t *err)
{
    rm_ns_t *ns;
    char *coll = NULL;

    if (rm_nsname_is_hashed (stem)) {
        /* A hashed stem is matched through the metadata's escaped name
         * (long names only: few). */
        for (size_t i = 0; i < info->n_ns; i++) {
            rm_ns_t *c = info->ns[i];
            char *esc;
            if (strcmp (c->db, db) != 0)
                continue;
            esc = rm_nsname_escape (c->coll);
            if (strcmp (esc, stem) == 0) {
                bson_free (esc);
                return c;
            }
            bson_free (esc);
        }
    } else {
        /* Any other stem is the escaped name of the collection it holds:
         * a namespace whose escaped name is the stem is the one its
         * unescaped name finds. */
        size_t len;
        coll = rm_nsname_unescape_len (stem, &len);
        ns = coll && strlen (coll) == len ? rm_nsindex_find (names, info, db, coll) : NULL;
        bson_free (coll);
        coll = NULL;
        if (ns)
            return ns;
    }
    if (strncmp (stem, "system.buckets.", 15) == 0) {
        char *base = rm_nsname_unescape (stem + 15);
        ns = base ? rm_nsindex_find (names, info, db, base) : NULL;
        bson_free (base);
        if (ns && strcmp (ns->type, "timeseries") == 0) {
            bson_free (ns->data_coll);
            ns->data_coll = bson_strdup_printf ("system.buckets.%s", ns->coll);
            return ns;
        }
    }
    {
        char *file = bson_strdup_printf ("%s/%s.bson", where, stem);
        coll = coll_of_stem (file, db, stem, err);
        bson_free (file);
    }
    if (!coll)
        return NULL;
    ns = rm_nsindex_find (names, info, db, coll);
    if (!ns)
        ns = rm_dump_info_add (info, db, coll);
    bson_free (coll);
    return ns;
}

void
rm_layout_read_prelude (rm_dump_info_t *info, const char *json, size_t len)
{
    bson_t *b = bson_new_from_json ((const uint8_t *) json, (ssize_t) len, NULL);
    bson_iter_t it;
    if (!b)
        return;
    if (bson_iter_init_find (&it, b, "ServerVersion") && BSON_ITER_HOLDS_UTF8 (&it)) {
        bson_free (info->server_version);
        info->server_version = bson_strdup (bson_iter_utf8 (&it, NULL));
    }
    if (bson_iter_init_find (&it, b, "ToolVersion") && BSON_ITER_HOLDS_UTF8 (&it)) {
        bson_free (info->tool_version);
        info->tool_version = bson_strdup (bson_iter_utf8 (&it, NULL));
    }
    bson_destroy (b);
}

char *
rm_layout_slurp (rm_instream_t *s, size_t *len, bson_error_t *err)
{
    const size_t limit = 64u << 20;
    const uint8_t *p;
    size_t want = 64u << 10;
    ssize_t n;
    char *text;

    /* Asked for in growing steps, not the limit at once: a metadata file
     * is a few KiB, and a window of the limit's size for each (72 MiB,
     * its shadow poisoned whole at each allocation and each free under
     * ASan: 4,600 page faults a file) made a sanitized convert of a small
     * directory spend two thirds of its time in the kernel. */
    for (;;) {
        n = rm_instream_fill (s, want, &p, err);
        if (n < 0)
            return NULL;
        if ((size_t) n < want || want > limit)
            break; /* the end, or past the limit */
        want = want > limit / 4 ? limit + 1 : want * 4;
    }
    if ((size_t) n > limit) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: larger than 64 MiB: not a metadata file",
                      rm_instream_name (s));
        return NULL;
    }
    text = bson_malloc ((size_t) n + 1);
    memcpy (text, p, (size_t) n);
    text[n] = '\0';
    *len = (size_t) n;
    return text;
}

int
rm_layout_next_doc (rm_reader_t *r, rm_instream_t *s, rm_ns_t *ns, rm_item_t *item,
                    bson_error_t *err)
{
    uint32_t max = ns->is_oplog ? RM_BSON_MAX_OPLOG_SIZE : RM_BSON_MAX_SIZE;
    rm_frame_t f;
    rm_frame_kind_t k = rm_reader_frame (r, s, ns, max, &f, err);

    if (k == RM_FRAME_DOC) {
        item->kind = RM_ITEM_DOC;
        item->ns = ns;
        item->doc = f.data;
        item->len = f.len;
        item->ordinal = ns->docs + ns->invalid;
        return 1;
    }
    if (k == RM_FRAME_TERMINATOR) {
        char name[512];
        rm_error_doc (err, RM_ERR_FORMAT, rm_instream_name (s), rm_ns_name (ns, name, sizeof name),
                      ns->docs + ns->invalid + 1, f.offset, "bad document length -1");
        return -1;
    }
    if (k == RM_FRAME_ERROR)
        return -1;
    /* the member's last documents are CRC'd before its stream goes */
    rm_reader_crc_flush (r);
    return 0;
}

int
rm_layout_end_ns (rm_ns_t *ns, rm_item_t *item)
{
    ns->ended = true;
    item->kind = RM_ITEM_NS_END;
    item->ns = ns;
    item->doc = NULL;
    item->len = 0;
    return 1;
}
