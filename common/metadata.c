/* Reading collection metadata JSON with libbson's Extended JSON parser. */
#include <string.h>

#include <bson/bson.h>

#include "remodel/metadata.h"

void
rm_metadata_read (const char *json, size_t len, rm_metadata_t *out)
{
    bson_t *b;
    bson_iter_t it, sub;

    memset (out, 0, sizeof *out);
    if (!json || len == 0)
        return;
    b = bson_new_from_json ((const uint8_t *) json, (ssize_t) len, NULL);
    if (!b)
        return;
    out->parsed = true;
    if (bson_iter_init_find (&it, b, "collectionName") && BSON_ITER_HOLDS_UTF8 (&it))
        out->collection_name = bson_strdup (bson_iter_utf8 (&it, NULL));
    if (bson_iter_init_find (&it, b, "type") && BSON_ITER_HOLDS_UTF8 (&it))
        out->type = bson_strdup (bson_iter_utf8 (&it, NULL));
    if (bson_iter_init_find (&it, b, "options") && BSON_ITER_HOLDS_DOCUMENT (&it) &&
        bson_iter_recurse (&it, &sub)) {
        while (bson_iter_next (&sub)) {
            if (strcmp (bson_iter_key (&sub), "viewOn") == 0)
                out->is_view = true;
            if (strcmp (bson_iter_key (&sub), "timeseries") == 0)
                out->is_timeseries = true;
        }
    }
    if (out->type && strcmp (out->type, "view") == 0)
        out->is_view = true;
    if (out->type && strcmp (out->type, "timeseries") == 0)
        out->is_timeseries = true;
    if (bson_iter_init_find (&it, b, "indexes") && BSON_ITER_HOLDS_ARRAY (&it) &&
        bson_iter_recurse (&it, &sub)) {
        while (bson_iter_next (&sub)) {
            bson_iter_t ix;
            if (BSON_ITER_HOLDS_DOCUMENT (&sub) && bson_iter_recurse (&sub, &ix) &&
                bson_iter_find (&ix, "name") && BSON_ITER_HOLDS_UTF8 (&ix)) {
                out->index_names = bson_realloc (out->index_names,
                                                 (out->n_indexes + 1) * sizeof (char *));
                out->index_names[out->n_indexes++] = bson_strdup (bson_iter_utf8 (&ix, NULL));
            }
        }
    }
    bson_destroy (b);
}

void
rm_metadata_clear (rm_metadata_t *m)
{
    for (size_t i = 0; i < m->n_indexes; i++)
        bson_free (m->index_names[i]);
    bson_free (m->index_names);
    bson_free (m->collection_name);
    bson_free (m->type);
    memset (m, 0, sizeof *m);
}
