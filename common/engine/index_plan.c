/* The plan's steps over index specifications (remodel/indexes.h): each
 * step through its row's `indexes` (index_follow.c holds them), and the
 * whole plan over a dump's metadata, the namespaces whose indexes change
 * rewritten. Apart from index_follow.c, which the step table points to:
 * this file reads the table. */
#include <string.h>

#include "remodel/buf.h"
#include "remodel/extjson.h"
#include "remodel/indexes.h"
#include "step_class.h"

void
rm_ixplan_step (rm_ixplan_t *p, const rm_step_t *s)
{
    if (rm_step_classes[s->kind].indexes)
        rm_step_classes[s->kind].indexes (s, p);
}

/* The metadata's "indexes" array, a copy (NULL: none, or not readable). */
static bson_t *
metadata_indexes (const rm_ns_t *ns)
{
    bson_t *meta, *out = NULL;
    bson_iter_t it;
    if (!ns->metadata || !ns->metadata_len || ns->is_view)
        return NULL;
    meta = bson_new_from_json ((const uint8_t *) ns->metadata, (ssize_t) ns->metadata_len, NULL);
    if (meta && bson_iter_init_find (&it, meta, "indexes") && BSON_ITER_HOLDS_ARRAY (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_iter_array (&it, &len, &data);
        out = bson_new_from_data (data, len);
    }
    if (meta)
        bson_destroy (meta);
    return out;
}

/* ns's metadata with its indexes those of ix. */
static void
metadata_write (rm_ns_t *ns, const rm_ixns_t *ix)
{
    bson_t *meta = bson_new_from_json ((const uint8_t *) ns->metadata,
                                       (ssize_t) ns->metadata_len, NULL);
    bson_t out, arr;
    bson_iter_t it;
    rm_buf_t text;
    if (!meta)
        return;
    bson_init (&out);
    bson_iter_init (&it, meta);
    while (bson_iter_next (&it)) {
        if (strcmp (bson_iter_key (&it), "indexes")) {
            bson_append_iter (&out, NULL, 0, &it);
            continue;
        }
        bson_append_array_begin (&out, "indexes", 7, &arr);
        for (size_t i = 0; i < ix->n; i++) {
            char k[16];
            const char *key;
            bson_uint32_to_string ((uint32_t) i, &key, k, sizeof k);
            bson_append_document (&arr, key, -1, ix->specs[i]);
        }
        bson_append_array_end (&out, &arr);
    }
    rm_buf_init (&text);
    rm_extjson_doc (&text, bson_get_data (&out), out.len, RM_EXTJSON_CANONICAL, false);
    rm_ns_set_metadata (ns, (const char *) text.data, text.len);
    rm_buf_destroy (&text);
    bson_destroy (&out);
    bson_destroy (meta);
}

void
rm_indexes_follow_dump (const rm_plan_t *plan, rm_dump_info_t *out, char ***changes,
                        size_t *n_changes)
{
    rm_ixplan_t p;
    rm_ixplan_init (&p);
    for (size_t i = 0; i < out->n_ns; i++) {
        char *name = bson_strdup_printf ("%s.%s", out->ns[i]->db, out->ns[i]->coll);
        bson_t *ix = metadata_indexes (out->ns[i]);
        rm_ixplan_add (&p, name, ix);
        if (ix)
            bson_destroy (ix);
        bson_free (name);
    }
    for (size_t i = 0; i < plan->n; i++)
        rm_ixplan_step (&p, &plan->steps[i]);
    for (size_t i = 0; i < out->n_ns; i++)
        if (p.ns[i].changed && p.ns[i].known)
            metadata_write (out->ns[i], &p.ns[i]);
    *changes = p.changes;
    *n_changes = p.n_changes;
    p.changes = NULL;
    p.n_changes = 0;
    rm_ixplan_destroy (&p);
}
