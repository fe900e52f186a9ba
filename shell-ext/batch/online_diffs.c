/* The _ids verify finds differing (online_batch.h): the first few, named in its
 * last line, and with --differences FILE every one of them, one Extended
 * JSON _id a line (canonical, so an Int64 or a Decimal128 _id keeps its
 * type), written under a temporary name beside FILE and renamed onto it
 * once the verify is through: a verify that fails or is stopped leaves
 * FILE as it was. verify --workers: each partition's _ids are kept in a
 * list of their own and adopted into the command's in the partitions'
 * order, so the file is what one reader writes. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "online_batch.h"
#include "remodel/docpath.h"
#include "remodel/extjson.h"
#include "remodel/tmppath.h"

struct online_diffs {
    int64_t n;
    char shown[ONLINE_DIFFS_SHOWN][200];
    const char *path; /* --differences, or NULL */
    char *tmp;
    FILE *f;
    rm_buf_t line;
    bool failed; /* a write to the temporary file failed: said at the end */
    int errnum;
    /* A worker's list of a partition (online_diffs_child): its lines kept
     * here until adopted, in order, into the one the file is written from. */
    bool keeps;
    rm_buf_t kept;
};

bool
online_diffs_open (online_t *on, const char *path, bson_error_t *err)
{
    online_diffs_t *d = bson_malloc0 (sizeof *d);
    struct stat st;
    rm_buf_init (&d->line);
    d->path = path;
    if (path && stat (path, &st) == 0 && S_ISDIR (st.st_mode)) {
        /* Only a file is replaced: a directory's contents are no list. */
        rm_error_set (err, RM_ERR_USAGE, "--differences %s: a directory; give a file's name",
                      path);
        rm_buf_destroy (&d->line);
        bson_free (d);
        return false;
    }
    if (path) {
        /* As the offline commands do: what a verify killed before its
         * rename left beside FILE goes first. */
        char where[2 * PATH_MAX + 8];
        size_t n = rm_tmppath_sweep_for (path, NULL, where, sizeof where);
        if (n)
            online_say_note (on, "removed %zu stale temporary file(s) of killed remodel runs from "
                             "%s", n, where);
        d->tmp = rm_tmppath_new (path);
        if (!(d->f = fopen (d->tmp, "w"))) {
            rm_error_set (err, RM_ERR_IO, "--differences %s: cannot write %s: %s", path, d->tmp,
                          strerror (errno));
            rm_tmppath_remove (d->tmp);
            bson_free (d->tmp);
            rm_buf_destroy (&d->line);
            bson_free (d);
            return false;
        }
    }
    on->diffs = d;
    return true;
}

void
online_diff_note (online_t *on, const char *ns, const bson_iter_t *id)
{
    online_diffs_t *d = on->diffs;
    if (!d)
        return;
    if (d->n < ONLINE_DIFFS_SHOWN) {
        rm_buf_reset (&d->line);
        rm_extjson_value (&d->line, id, RM_EXTJSON_RELAXED);
        snprintf (d->shown[d->n], sizeof d->shown[d->n], "%.*s in %s", (int) d->line.len,
                  (const char *) d->line.data, ns);
    }
    d->n++;
    if (d->keeps || (d->f && !d->failed)) {
        rm_buf_reset (&d->line);
        rm_extjson_value (&d->line, id, RM_EXTJSON_CANONICAL);
        rm_buf_append (&d->line, "\n", 1);
        if (d->keeps) {
            rm_buf_append (&d->kept, d->line.data, d->line.len);
        } else if (fwrite (d->line.data, 1, d->line.len, d->f) != d->line.len) {
            d->failed = true;
            d->errnum = errno;
        }
    }
}

online_diffs_t *
online_diffs_child (const online_t *on)
{
    online_diffs_t *d;
    if (!on->diffs)
        return NULL;
    d = bson_malloc0 (sizeof *d);
    rm_buf_init (&d->line);
    rm_buf_init (&d->kept);
    d->keeps = on->diffs->f != NULL;
    return d;
}

void
online_diffs_adopt (online_t *on, online_diffs_t *child)
{
    online_diffs_t *d = on->diffs;
    if (!child)
        return;
    for (int64_t i = 0; d && i < child->n && d->n + i < ONLINE_DIFFS_SHOWN; i++)
        memcpy (d->shown[d->n + i], child->shown[i], sizeof d->shown[0]);
    if (d) {
        d->n += child->n;
        if (d->f && !d->failed && child->kept.len &&
            fwrite (child->kept.data, 1, child->kept.len, d->f) != child->kept.len) {
            d->failed = true;
            d->errnum = errno;
        }
    }
    rm_buf_destroy (&child->kept);
    rm_buf_destroy (&child->line);
    bson_free (child);
}

void
online_diffs_first (const online_t *on, char *buf, size_t cap)
{
    const online_diffs_t *d = on->diffs;
    size_t used = 0;
    *buf = '\0';
    for (int64_t i = 0; d && i < d->n && i < ONLINE_DIFFS_SHOWN && used + 1 < cap; i++) {
        int w = snprintf (buf + used, cap - used, "%s%s", i ? ", " : "", d->shown[i]);
        used += w > 0 ? (size_t) w : 0;
    }
    if (used >= cap && cap > 4)
        strcpy (buf + cap - 4, "...");
}

bool
online_diffs_close (online_t *on, bool commit, int64_t *written, bson_error_t *err)
{
    online_diffs_t *d = on->diffs;
    bool ok = true;
    if (!d)
        return true;
    if (written)
        *written = d->n;
    on->diffs = NULL;
    if (d->f) {
        if (fclose (d->f) != 0 && !d->failed) {
            d->failed = true;
            d->errnum = errno;
        }
        if (commit && d->failed) {
            rm_error_set (err, RM_ERR_IO, "--differences %s: writing %s: %s", d->path, d->tmp,
                          strerror (d->errnum));
            ok = false;
        }
        if (commit && ok)
            ok = rm_tmppath_commit (d->tmp, d->path, true, err);
        else
            rm_tmppath_remove (d->tmp);
        bson_free (d->tmp);
    }
    rm_buf_destroy (&d->line);
    bson_free (d);
    return ok;
}

void
online_diffs_inplace (online_t *on, const char *ns, const online_docs_t *in,
                      const online_docs_t *out)
{
    size_t at = 0;
    for (size_t i = 0; on->diffs && i < in->n; i++) {
        ssize_t r = online_result_of (in, i, out, &at);
        bson_iter_t id;
        if (r >= 0 && !online_same_doc (in, i, out, (size_t) r) &&
            rm_doc_field (online_doc_bytes (in, i), in->docs[i].len, "_id", 3, &id))
            online_diff_note (on, ns, &id);
    }
}
