/* Reading directory dumps: <root>/<db>/<coll>.bson[.gz] and metadata, the
 * top-level oplog.bson and prelude.json; or a single database's directory. */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader_impl.h"
#include "remodel/tmppath.h"

typedef struct {
    char **data_path;  /* per namespace index: its .bson file or NULL */
    size_t n_slots;
    size_t next_ns;    /* the namespace being read */
    rm_instream_t *s;  /* open on data_path[next_ns] */
    uint64_t done_bytes, total_bytes;
} dirdump_t;

static int
cmp_str (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Sorted entries of a directory, so that the dump is read in one order. */
static char **
list_dir (const char *path, size_t *n, bson_error_t *err)
{
    DIR *d = opendir (path);
    struct dirent *e;
    char **names = NULL;

    *n = 0;
    if (!d) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot open the directory", path);
        return NULL;
    }
    while ((e = readdir (d))) {
        /* Not "." and "..", nor remodel's own temporary names; other names
         * starting with a dot are collections ("..%2Fx.bson" is mongodump's
         * file for the collection "../x"). */
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0 ||
            rm_tmppath_is_temporary (e->d_name))
            continue;
        names = bson_realloc (names, (*n + 1) * sizeof *names);
        names[(*n)++] = bson_strdup (e->d_name);
    }
    closedir (d);
    if (*n > 1) /* an empty directory has no list to sort (qsort of NULL is undefined) */
        qsort (names, *n, sizeof *names, cmp_str);
    return names;
}

static void
free_list (char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bson_free (names[i]);
    bson_free (names);
}

static bool
is_dir (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

static char *
slurp_path (const char *path, size_t *len, bson_error_t *err)
{
    rm_instream_t *s = rm_instream_open (path, err);
    char *text;
    if (!s)
        return NULL;
    text = rm_layout_slurp (s, len, err);
    rm_instream_close (s);
    return text;
}

/* Grows data_path to one slot per namespace, new slots empty. */
static void
grow_slots (dirdump_t *d, size_t n)
{
    if (n <= d->n_slots)
        return;
    d->data_path = bson_realloc (d->data_path, n * sizeof (char *));
    memset (d->data_path + d->n_slots, 0, (n - d->n_slots) * sizeof (char *));
    d->n_slots = n;
}

static bool
add_file_size (dirdump_t *d, const char *path)
{
    struct stat st;
    if (stat (path, &st) == 0)
        d->total_bytes += (uint64_t) st.st_size;
    return true;
}

static bool
scan_db (rm_reader_t *r, dirdump_t *d, rm_nsindex_t *names_ix, const char *dir, const char *db,
         bson_error_t *err)
{
    size_t n;
    char **names = list_dir (dir, &n, err);
    bool ok = names != NULL || n == 0;

    /* Metadata first: it gives the real names the .bson files are matched to. */
    for (size_t i = 0; ok && i < n; i++) {
        char *stem, *path;
        if (rm_layout_classify (names[i], &stem) == RM_FILE_METADATA) {
            size_t len = 0;
            char *json;
            path = bson_strdup_printf ("%s/%s", dir, names[i]);
            json = slurp_path (path, &len, err);
            ok = json && rm_layout_add_metadata (&r->info, names_ix, dir, db, stem, json, len, err);
            bson_free (json);
            bson_free (path);
        } else if (strcmp (names[i], "prelude.json") == 0 || strcmp (names[i], "prelude.json.gz") == 0) {
            size_t len = 0;
            char *json;
            path = bson_strdup_printf ("%s/%s", dir, names[i]);
            json = slurp_path (path, &len, err);
            if (json)
                rm_layout_read_prelude (&r->info, json, len);
            ok = json != NULL;
            bson_free (json);
            bson_free (path);
        }
        bson_free (stem);
    }
    for (size_t i = 0; ok && i < n; i++) {
        char *stem, *path;
        rm_ns_t *ns;
        if (rm_layout_classify (names[i], &stem) != RM_FILE_BSON) {
            bson_free (stem);
            continue;
        }
        path = bson_strdup_printf ("%s/%s", dir, names[i]);
        if (is_dir (path)) {
            bson_free (path);
            bson_free (stem);
            continue;
        }
        ns = rm_layout_ns_for_bson (&r->info, names_ix, dir, db, stem, err);
        bson_free (stem);
        if (!ns) {
            bson_free (path);
            ok = false;
            break;
        }
        grow_slots (d, r->info.n_ns);
        if (d->data_path[ns->index]) {
            rm_error_set (err, RM_ERR_FORMAT, "%s and %s hold the same collection", path,
                          d->data_path[ns->index]);
            bson_free (path);
            ok = false;
            break;
        }
        add_file_size (d, path);
        if (strlen (names[i]) > 3 && strcmp (names[i] + strlen (names[i]) - 3, ".gz") == 0)
            r->info.gzip_files = true;
        d->data_path[ns->index] = path;
    }
    free_list (names, n);
    return ok;
}

static bool
has_dump_files (const char *dir)
{
    size_t n;
    char **names = list_dir (dir, &n, NULL);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) {
        char *stem;
        rm_file_kind_t k = rm_layout_classify (names[i], &stem);
        found = k != RM_FILE_OTHER && strcmp (names[i], "oplog.bson") != 0;
        bson_free (stem);
    }
    free_list (names, n);
    return found;
}

static int
dir_next (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    dirdump_t *d = r->impl;

    while (d->next_ns < r->info.n_ns) {
        rm_ns_t *ns = r->info.ns[d->next_ns];
        const char *path = d->data_path[d->next_ns];

        if (path && !d->s) {
            d->s = rm_instream_open (path, err);
            if (!d->s)
                return -1;
            if (!r->opts.no_check) /* else no document is checked, ahead or not */
                rm_instream_expect_frames (d->s);
        }
        if (d->s) {
            int rc = rm_layout_next_doc (r, d->s, ns, item, err);
            if (rc != 0)
                return rc;
            d->done_bytes += rm_instream_raw_pos (d->s);
            rm_instream_close (d->s);
            d->s = NULL;
        }
        d->next_ns++;
        return rm_layout_end_ns (ns, item);
    }
    return 0;
}

static void
dir_progress (const rm_reader_t *r, uint64_t *done, uint64_t *total)
{
    dirdump_t *d = r->impl;
    *done = d->done_bytes + (d->s ? rm_instream_raw_pos (d->s) : 0);
    *total = d->total_bytes;
}

static void
dir_close (rm_reader_t *r)
{
    dirdump_t *d = r->impl;
    for (size_t i = 0; i < d->n_slots; i++)
        bson_free (d->data_path[i]);
    bson_free (d->data_path);
    rm_instream_close (d->s);
    bson_free (d);
}

static const rm_reader_ops_t dir_ops = {dir_next, dir_progress, dir_close};

bool
rm_dir_reader_init (rm_reader_t *r, bson_error_t *err)
{
    dirdump_t *d = bson_malloc0 (sizeof *d);
    const char *root = r->path;
    rm_nsindex_t names_ix; /* the namespaces by name, while the files are matched */
    bool ok = true;

    rm_nsindex_init (&names_ix);
    r->impl = d;
    r->ops = &dir_ops;
    r->info.format = RM_FORMAT_DIR;

    if (has_dump_files (root)) {
        /* The directory of one database: its name is the database's. */
        char *copy = bson_strdup (root), *db;
        size_t len = strlen (copy);
        while (len > 1 && copy[len - 1] == '/')
            copy[--len] = '\0';
        db = basename (copy);
        /* "." or "..": the name is the real directory's ("remodel inspect ."
         * inside dump/crm reads crm), not a database named "." (refused). */
        if (strcmp (db, ".") == 0 || strcmp (db, "..") == 0) {
            char *real = realpath (root, NULL);
            if (real) {
                bson_free (copy);
                copy = bson_strdup (real);
                free (real);
                db = basename (copy);
            }
        }
        ok = scan_db (r, d, &names_ix, root, db, err);
        bson_free (copy);
    } else {
        size_t n;
        char **names = list_dir (root, &n, err);
        if (!names && n == 0 && err && err->code == RM_ERR_IO)
            ok = false;
        for (size_t i = 0; ok && i < n; i++) {
            char *path = bson_strdup_printf ("%s/%s", root, names[i]);
            if (is_dir (path)) {
                ok = scan_db (r, d, &names_ix, path, names[i], err);
            } else if (strcmp (names[i], "prelude.json") == 0 ||
                       strcmp (names[i], "prelude.json.gz") == 0) {
                size_t len = 0;
                char *json = slurp_path (path, &len, err);
                if (json)
                    rm_layout_read_prelude (&r->info, json, len);
                ok = json != NULL;
                bson_free (json);
            }
            bson_free (path);
        }
        /* The oplog is read last, as mongorestore replays it after the data. */
        if (ok) {
            for (size_t i = 0; i < n; i++) {
                if (strcmp (names[i], "oplog.bson") == 0) {
                    char *path = bson_strdup_printf ("%s/%s", root, names[i]);
                    rm_ns_t *ns = rm_dump_info_add (&r->info, "", "oplog");
                    rm_ns_set_metadata (ns, "", 0);
                    add_file_size (d, path);
                    grow_slots (d, r->info.n_ns);
                    d->data_path[ns->index] = path;
                }
            }
        }
        free_list (names, n);
    }
    if (ok && r->info.n_ns == 0) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: no dump files (<db>/<coll>.bson or "
                      ".metadata.json) in this directory", root);
        ok = false;
    }
    rm_nsindex_destroy (&names_ix);
    /* Namespaces added by metadata alone have no slot yet. */
    grow_slots (d, r->info.n_ns);
    if (!ok) {
        dir_close (r);
        r->ops = NULL;
    }
    return ok;
}
