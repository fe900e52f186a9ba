/* Pass 2 of the analysis (analyze_int.h): the documents of the parent
 * side of each child-reference relationship, read once for all of them.
 * Below both of its callers (analyze_relate.c in memory, analyze_spill.c
 * past the budget) and the duplicate keys' read (analyze_dups.c). */
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"

static int
cmp_ns (const void *x, const void *y, void *ctx)
{
    const rm_analysis_t *a = ctx;
    return strcmp (a->cols[*(const size_t *) x].ns, a->cols[*(const size_t *) y].ns);
}

size_t *
rm_analysis_col_of (const rm_analysis_t *a, const rm_dump_info_t *info)
{
    size_t *col_of = bson_malloc0 ((info->n_ns ? info->n_ns : 1) * sizeof *col_of);
    size_t *order = bson_malloc ((a->n_cols ? a->n_cols : 1) * sizeof *order);
    /* The collections by name, each namespace found by halving: a
     * comparison of every namespace with every collection was quadratic
     * in them (thousands of collections: one per tenant). */
    for (size_t c = 0; c < a->n_cols; c++)
        order[c] = c;
    qsort_r (order, a->n_cols, sizeof *order, cmp_ns, (void *) a);
    for (size_t i = 0; i < info->n_ns; i++) {
        char name[512];
        size_t lo = 0, hi = a->n_cols;
        rm_ns_name (info->ns[i], name, sizeof name);
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp (a->cols[order[mid]].ns, name);
            if (!c) {
                col_of[i] = order[mid] + 1;
                break;
            }
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    bson_free (order);
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

    /* Each collection's child-reference relationships, side by side
     * (first[c]..first[c + 1] of by_col): a document asks only its own. */
    size_t *first = bson_malloc0 ((a->n_cols + 1) * sizeof *first);
    size_t *by_col = bson_malloc ((a->n_rels ? a->n_rels : 1) * sizeof *by_col);

    for (size_t i = 0; i < a->n_rels; i++)
        if (a->rels[i].child_refs) {
            rm_path_parse (&paths[i], a->cols[a->rels[i].from].fields[a->rels[i].field].path, NULL);
            first[a->rels[i].from + 1]++;
        }
    for (size_t c = 0; c < a->n_cols; c++)
        first[c + 1] += first[c];
    /* Each collection's from its start up, a cursor each. */
    size_t *at = bson_malloc ((a->n_cols + 1) * sizeof *at);
    memcpy (at, first, (a->n_cols + 1) * sizeof *at);
    for (size_t i = 0; i < a->n_rels; i++)
        if (a->rels[i].child_refs)
            by_col[at[a->rels[i].from]++] = i;
    bson_free (at);
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
        for (size_t k = first[c - 1]; k < first[c]; k++) {
            size_t i = by_col[k];
            if (!fn (ctx, i, item.doc, item.len, &paths[i], seq, err)) {
                rc = -1;
                break;
            }
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
    bson_free (first);
    bson_free (by_col);
    return rc == 0;
}
