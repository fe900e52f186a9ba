/* Keys a relationship's target holds more than once (analyze_int.h): a
 * field unique in 99% of its values is taken as a key (the Atlas sample's
 * accounts.account_id holds 627788 twice), and a $lookup then brings both
 * documents to each parent referencing it. The report names the values,
 * so users can see which documents to fix; the key tables hold only their
 * hashes, so the values come from one more read of the target collections,
 * made only when there are some, and ended as soon as all are found. The
 * keys named are those of the smallest hashes: the same whether the key
 * tables stayed in memory or spilled (the merged file is in key order). */
#include <stdio.h>
#include <string.h>

#include "analyze_int.h"

/* A value as relaxed Extended JSON, at most len - 1 bytes. */
static void
value_text (const bson_iter_t *it, char *out, size_t len)
{
    bson_t b = BSON_INITIALIZER;
    char *j, *v;
    size_t n;
    bson_append_iter (&b, "v", 1, it);
    j = bson_as_relaxed_extended_json (&b, NULL);
    /* { "v" : VALUE } */
    v = j ? strstr (j, " : ") : NULL;
    if (v) {
        v += 3;
        n = strlen (v);
        if (n >= 2 && !strcmp (v + n - 2, " }"))
            n -= 2;
        snprintf (out, len, "%.*s", (int) n, v);
    } else {
        snprintf (out, len, "?");
    }
    bson_free (j);
    bson_destroy (&b);
}

/* Fills the values of doc's duplicated keys; the number still missing. */
/* The values of the duplicated keys a document of collection c holds,
 * for the relationships of c's (rels[0..n)); returns how many it filled. */
static size_t
find_values (rm_analysis_t *a, size_t c, const size_t *rels, size_t n, const uint8_t *doc, uint32_t len,
             rm_buf_t *scratch)
{
    size_t filled = 0;
    bson_t d;
    if (!bson_init_static (&d, doc, len))
        return 0;
    for (size_t i = 0; i < n; i++) {
        rm_relation_t *r = &a->rels[rels[i]];
        bson_iter_t it;
        uint64_t key;
        if (bson_iter_init_find (&it, &d, a->cols[c].fields[r->key].path)) {
            key = rm_analyze_key (&it, scratch);
            for (uint8_t k = 0; k < r->n_dups; k++)
                if (r->dup_key[k] == key && !r->dup_value[k][0]) {
                    value_text (&it, r->dup_value[k], sizeof r->dup_value[k]);
                    filled += r->dup_value[k][0] != 0;
                }
        }
    }
    return filled;
}

bool
rm_analyze_dups (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err)
{
    size_t *col_of, missing = 0, *first, *by_col;
    const rm_dump_info_t *info;
    rm_reader_t *rd;
    rm_item_t item;
    rm_buf_t scratch;
    int rc = 0;
    bool any = false;

    for (size_t i = 0; i < a->n_rels; i++) {
        rm_relation_t *r = &a->rels[i];
        const rm_field_t *k = &a->cols[r->to].fields[r->key];
        /* Only what acts: a possible relationship is no join yet. */
        if (!RM_REL_ACTS (r) || k->values == k->distinct)
            continue;
        any = true;
        for (size_t s = 0; !a->merged && s < k->keys.cap; s++)
            if (k->keys.slots[s].key && k->keys.slots[s].count > 1)
                rm_relation_dup (r, k->keys.slots[s].key, k->keys.slots[s].count);
    }
    /* The merged file is read again only when there is something to find. */
    if (any && a->merged && !rm_analyze_spill_dups (a, err))
        return false;
    for (size_t i = 0; i < a->n_rels; i++) {
        if (!RM_REL_ACTS (&a->rels[i]))
            a->rels[i].n_dups = 0;
        missing += a->rels[i].n_dups;
    }
    if (!missing)
        return true;
    rd = rm_reader_open (a->src, ro, err);
    if (!rd)
        return false;
    info = rm_reader_info (rd);
    col_of = rm_analysis_col_of (a, info);
    /* Each target collection's relationships with values to find
     * (first[c]..first[c + 1] of by_col): a document asks only those. */
    first = bson_malloc0 ((a->n_cols + 2) * sizeof *first);
    by_col = bson_malloc ((a->n_rels ? a->n_rels : 1) * sizeof *by_col);
    for (size_t i = 0; i < a->n_rels; i++)
        first[a->rels[i].to + 2] += a->rels[i].n_dups > 0;
    for (size_t c = 0; c < a->n_cols; c++)
        first[c + 2] += first[c + 1];
    for (size_t i = 0; i < a->n_rels; i++)
        if (a->rels[i].n_dups)
            by_col[first[a->rels[i].to + 1]++] = i;
    rm_buf_init (&scratch);
    while (missing && (rc = rm_reader_next (rd, &item, err)) == 1) {
        size_t c;
        if (item.kind != RM_ITEM_DOC || item.ns->index >= info->n_ns || !(c = col_of[item.ns->index]))
            continue;
        missing -= find_values (a, c - 1, by_col + first[c - 1], first[c] - first[c - 1], item.doc,
                                item.len, &scratch);
    }
    bson_free (first);
    bson_free (by_col);
    rm_buf_destroy (&scratch);
    rm_reader_close (rd);
    bson_free (col_of);
    return missing == 0 || rc == 0;
}
