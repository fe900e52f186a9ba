/* A reader's namespaces seen through --nsInclude, --nsExclude and
 * --nsFrom/--nsTo: the format's reader keeps its own list (its indexes,
 * names in messages, CRCs), and callers get a second list holding only the
 * namespaces selected, under their new names, with items mapped onto it. */
#include <string.h>

#include "reader_impl.h"
#include "remodel/nsname.h"
#include "remodel/nsselect.h"

#define UNSELECTED ((size_t) -1)

/* Adds to the view what the format's list gained since the last call. */
static bool
extend (rm_reader_t *r, bson_error_t *err)
{
    const rm_dump_info_t *src = &r->info;
    char name[512], why[160];

    if (r->n_map >= src->n_ns)
        return true;
    r->map = bson_realloc (r->map, src->n_ns * sizeof *r->map);
    for (size_t i = r->n_map; i < src->n_ns; i++) {
        const rm_ns_t *s = src->ns[i];
        char *renamed, *dot;
        rm_ns_t *d;

        r->map[i] = UNSELECTED;
        r->n_map = i + 1;
        rm_ns_name (s, name, sizeof name);
        if (!rm_nsselect_wants (r->opts.select, name))
            continue;
        renamed = s->is_oplog ? NULL : rm_nsselect_new_name (r->opts.select, name);
        if (renamed) {
            dot = strchr (renamed, '.');
            if (!dot || dot == renamed || dot[1] == '\0') {
                rm_error_set (err, RM_ERR_USAGE, "--nsTo makes \"%s\" of %s: not db.collection",
                              renamed, name);
                bson_free (renamed);
                return false;
            }
            *dot = '\0';
            if (!rm_nsname_check (renamed, dot + 1, why, sizeof why)) {
                rm_error_set (err, RM_ERR_USAGE, "--nsTo makes database \"%s\" (collection \"%s\") of %s: %s",
                              renamed, dot + 1, name, why);
                bson_free (renamed);
                return false;
            }
            if (rm_dump_info_find (&r->view, renamed, dot + 1)) {
                rm_error_set (err, RM_ERR_USAGE, "--nsTo renames two namespaces to %s.%s", renamed,
                              dot + 1);
                bson_free (renamed);
                return false;
            }
            d = rm_dump_info_add (&r->view, renamed, dot + 1);
            /* A time-series collection's buckets follow its new name. */
            if (strcmp (s->data_coll, s->coll) != 0 && strncmp (s->data_coll, "system.buckets.", 15) == 0 &&
                strcmp (s->data_coll + 15, s->coll) == 0) {
                bson_free (d->data_coll);
                d->data_coll = bson_strdup_printf ("system.buckets.%s", dot + 1);
            }
            bson_free (renamed);
        } else {
            d = rm_dump_info_add (&r->view, s->db, s->coll);
            bson_free (d->data_coll);
            d->data_coll = bson_strdup (s->data_coll);
        }
        rm_ns_copy_kind (d, s);
        r->map[i] = d->index;
    }
    return true;
}

bool
rm_reader_select_init (rm_reader_t *r, bson_error_t *err)
{
    const rm_dump_info_t *src = &r->info;

    r->viewing = true;
    rm_dump_info_init (&r->view);
    r->view.format = src->format;
    r->view.codec = src->codec;
    r->view.gzip_files = src->gzip_files;
    r->view.server_version = src->server_version ? bson_strdup (src->server_version) : NULL;
    r->view.tool_version = src->tool_version ? bson_strdup (src->tool_version) : NULL;
    r->view.concurrent_collections = src->concurrent_collections;
    return extend (r, err);
}

static void
sync_counts (rm_ns_t *d, const rm_ns_t *s)
{
    d->docs = s->docs;
    d->bytes = s->bytes;
    d->crc = s->crc;
    d->invalid = s->invalid;
    d->crc_checked = s->crc_checked;
    d->ended = s->ended;
}

void
rm_reader_select_sync (rm_reader_t *r)
{
    for (size_t i = 0; i < r->n_map; i++)
        if (r->map[i] != UNSELECTED)
            sync_counts (r->view.ns[r->map[i]], r->info.ns[i]);
}

int
rm_reader_select_item (rm_reader_t *r, rm_item_t *item, bson_error_t *err)
{
    size_t to;
    if (item->ns->index >= r->n_map && !extend (r, err))
        return -1;
    to = r->map[item->ns->index];
    if (to == UNSELECTED)
        return 0;
    if (item->kind == RM_ITEM_NS_END)
        sync_counts (r->view.ns[to], item->ns);
    item->ns = r->view.ns[to];
    return 1;
}

void
rm_reader_select_destroy (rm_reader_t *r)
{
    if (!r->viewing)
        return;
    rm_dump_info_destroy (&r->view);
    bson_free (r->map);
}
