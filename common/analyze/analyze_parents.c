/* Pass 2 of the analysis (analyze_int.h): the documents of the parent
 * side of each child-reference relationship, read once for all of them.
 * Below both of its callers (analyze_relate.c in memory, analyze_spill.c
 * past the budget) and the duplicate keys' read (analyze_dups.c). */
#include <string.h>

#include "analyze_int.h"

size_t *
rm_analysis_col_of (const rm_analysis_t *a, const rm_dump_info_t *info)
{
    size_t *col_of = bson_malloc0 ((info->n_ns ? info->n_ns : 1) * sizeof *col_of);
    for (size_t i = 0; i < info->n_ns; i++) {
        char name[512];
        rm_ns_name (info->ns[i], name, sizeof name);
        for (size_t c = 0; c < a->n_cols; c++)
            if (!strcmp (a->cols[c].ns, name))
                col_of[i] = c + 1;
    }
    return col_of;
}

bool
rm_analyze_each_parent (rm_analysis_t *a, const rm_read_opts_t *ro, rm_parent_fn fn, void *ctx,
                        bson_error_t *err)
{
    rm_path_t *paths = bson_malloc0 ((a->n_rels ? a->n_rels : 1) * sizeof *paths);
    size_t *col_of = NULL; /* by the namespace's index: its collection + 1 (0: none) */
    const rm_dump_info_t *info;
    rm_reader_t *r;
    rm_item_t item;
    int rc = -1;
    uint64_t seq = 0;

    for (size_t i = 0; i < a->n_rels; i++)
        if (a->rels[i].child_refs)
            rm_path_parse (&paths[i], a->cols[a->rels[i].from].fields[a->rels[i].field].path, NULL);
    r = rm_reader_open (a->src, ro, err);
    if (r) {
        info = rm_reader_info (r);
        col_of = rm_analysis_col_of (a, info);
    }
    while (r && (rc = rm_reader_next (r, &item, err)) == 1) {
        size_t c;
        if (item.kind != RM_ITEM_DOC)
            continue;
        if (a->progress && (++seq & 4095) == 0)
            a->progress (a->progress_ctx, 2, r, seq);
        if (item.ns->index >= info->n_ns || !(c = col_of[item.ns->index]))
            continue;
        for (size_t i = 0; i < a->n_rels; i++)
            if (a->rels[i].child_refs && a->rels[i].from == c - 1 &&
                !fn (ctx, i, item.doc, item.len, &paths[i], seq, err)) {
                rc = -1;
                break;
            }
        if (rc < 0)
            break;
    }
    if (r)
        rm_reader_close (r);
    for (size_t i = 0; i < a->n_rels; i++)
        if (a->rels[i].child_refs)
            rm_path_destroy (&paths[i]);
    bson_free (paths);
    bson_free (col_of);
    return rc == 0;
}
