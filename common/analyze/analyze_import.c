/* What a relational import holds that the first pass does not measure
 * (analyze_int.h, rm_analyze_import):
 *
 * - the strings of top-level fields that a table's export wrote as text:
 *   dates ("2007-01-01T00:00:00Z", "1996-03-13"), integers and decimals
 *   ("42", "12.50") and yes/no flags ("Y"/"N"), counted per field by the
 *   first pass (analyze_strings.c), kept here for the fields whose
 *   strings may be another type's, so that the report and the plan
 *   convert them (analyze_types.c);
 * - from one more read of the dump, made only when there is one: the
 *   depth of each hierarchy (a reference to its own collection: the
 *   employees' manager): each document's key and its parent's, as hashes,
 *   then the longest path from a root, the roots, and the documents whose
 *   parents go round a circle. 16 bytes a document of such a collection. */
#include <string.h>

#include "analyze_int.h"
#include "remodel/nsselect.h"

/* Of the strings sampled in the first pass, the share (%) with a digit
 * that makes a field's strings worth reporting: dates and numbers all
 * have one; names and words mostly none. */
#define STRINGS_WITH_DIGITS 90

/* A top-level field whose strings could be some other type's: strings
 * with digits among those sampled (dates, numbers), or short ones only
 * (flags). */
static bool
strings_to_read (const rm_field_t *f)
{
    return !strchr (f->path, '.') && strcmp (f->path, "_id") != 0 && f->types[BSON_TYPE_UTF8] &&
           ((f->sampled && (f->sampled - f->vocab) * 100 >= f->sampled * STRINGS_WITH_DIGITS) ||
            (f->small == f->values && f->vocab));
}

/* Only the collections to measure are read again (a directory dump's
 * other files are not opened): a selection of their names, escaped as
 * mongorestore's patterns escape a star; none (all read) when a name
 * holds a '$', which no pattern may. */
static rm_nsselect_t *
select_of (const rm_analysis_t *a, const bool *wanted)
{
    rm_nsselect_t *sel = rm_nsselect_new ();
    for (size_t c = 0; c < a->n_cols; c++) {
        char pat[1100];
        size_t n = 0;
        bson_error_t err;
        if (!wanted[c])
            continue;
        if (strchr (a->cols[c].ns, '$'))
            goto all;
        for (const char *p = a->cols[c].ns; *p && n + 3 < sizeof pat; p++) {
            if (*p == '*' || *p == '\\')
                pat[n++] = '\\';
            pat[n++] = *p;
        }
        pat[n] = '\0';
        if (!rm_nsselect_include (sel, pat, &err))
            goto all;
    }
    return sel;
all:
    rm_nsselect_destroy (sel);
    return NULL;
}

/* A hierarchy being measured: its documents' keys and parents. */
typedef struct {
    size_t rel;
    uint64_t *key, *parent; /* parent 0: none */
    size_t n, cap;
} tree_t;

static bool
self_ref (const rm_relation_t *r, const rm_analysis_t *a)
{
    return r->from == r->to && !r->child_refs && r->ev.level != RM_LEVEL_REJECTED &&
           !strchr (a->cols[r->from].fields[r->field].path, '.');
}

/* The key of a top-level value (0: null, an array or a document). */
static uint64_t
value_key (const bson_iter_t *it, rm_buf_t *scratch)
{
    if (BSON_ITER_HOLDS_NULL (it) || BSON_ITER_HOLDS_ARRAY (it) || BSON_ITER_HOLDS_DOCUMENT (it))
        return 0;
    return rm_analyze_key (it, scratch);
}

/* The keys of a document's first top-level fields named key_name and
 * parent_name (0: missing), in one walk of its fields. */
static void
keys_at (const uint8_t *doc, uint32_t len, const char *key_name, const char *parent_name,
         uint64_t *key, uint64_t *parent, rm_buf_t *scratch)
{
    bson_iter_t it;
    bool got_key = false, got_parent = false;
    *key = *parent = 0;
    if (!bson_iter_init_from_data (&it, doc, len))
        return;
    while ((!got_key || !got_parent) && bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (!got_key && !strcmp (k, key_name)) {
            got_key = true;
            *key = value_key (&it, scratch);
        } else if (!got_parent && !strcmp (k, parent_name)) {
            got_parent = true;
            *parent = value_key (&it, scratch);
        }
    }
}

/* The slot of key in a table of indexes + 1 (cap a power of two). */
static size_t
slot_of (const size_t *tab, size_t cap, const uint64_t *keys, uint64_t key)
{
    size_t i = (size_t) (key * 0x9E3779B97F4A7C15ULL) & (cap - 1);
    while (tab[i] && keys[tab[i] - 1] != key)
        i = (i + 1) & (cap - 1);
    return i;
}

/* Depth, roots and circles of one hierarchy: each document's depth is one
 * more than its parent's; a parent that is not in the collection (null,
 * or an orphan) makes a root. Walked without recursion: a chain is
 * followed up to a known depth, then numbered back down. */
static void
measure_tree (rm_relation_t *r, tree_t *t)
{
    size_t cap = 16, *tab, *chain;
    uint32_t *depth;
    uint8_t *state; /* 0 not yet, 1 on the chain being walked, 2 done */
    while (cap < t->n * 2)
        cap *= 2;
    tab = bson_malloc0 (cap * sizeof *tab);
    depth = bson_malloc0 ((t->n ? t->n : 1) * sizeof *depth);
    state = bson_malloc0 (t->n ? t->n : 1);
    chain = bson_malloc ((t->n ? t->n : 1) * sizeof *chain);
    for (size_t i = 0; i < t->n; i++)
        if (t->key[i]) {
            size_t s = slot_of (tab, cap, t->key, t->key[i]);
            if (!tab[s])
                tab[s] = i + 1;
        }
    for (size_t i = 0; i < t->n; i++) {
        size_t n = 0, at = i;
        uint32_t d = 0;
        while (state[at] == 0) {
            size_t s;
            state[at] = 1;
            chain[n++] = at;
            if (!t->parent[at] || !(tab[s = slot_of (tab, cap, t->key, t->parent[at])])) {
                r->roots++;
                d = 0;
                at = SIZE_MAX;
                break;
            }
            at = tab[s] - 1;
        }
        if (at != SIZE_MAX && state[at] == 1) {
            /* A circle: its documents have no root; counted, depth 0. */
            r->cycles += n;
            for (size_t k = 0; k < n; k++)
                state[chain[k]] = 2;
            continue;
        }
        if (at != SIZE_MAX)
            d = depth[at] + 1;
        else if (n)
            d = 0, n--, depth[chain[n]] = 0, state[chain[n]] = 2, d = 1;
        while (n) {
            n--;
            depth[chain[n]] = d;
            state[chain[n]] = 2;
            if (d > r->depth)
                r->depth = d;
            d++;
        }
    }
    r->tree_measured = true;
    bson_free (tab);
    bson_free (depth);
    bson_free (state);
    bson_free (chain);
}

bool
rm_analyze_import (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err)
{
    tree_t *trees = NULL;
    size_t n_trees = 0, *col_of = NULL;
    const rm_dump_info_t *info;
    rm_reader_t *r;
    rm_item_t item;
    rm_buf_t scratch;
    rm_read_opts_t only = *ro;
    rm_nsselect_t *sel;
    int rc = 0;

    /* The first pass counted every top-level field's strings: the report
     * speaks of those that may be another type's only. */
    for (size_t c = 0; c < a->n_cols; c++)
        for (size_t k = 0; k < a->cols[c].n_fields; k++) {
            rm_field_t *f = &a->cols[c].fields[k];
            if (!strings_to_read (f))
                f->str_seen = f->str_dates = f->str_ints = f->str_decimals = f->str_flags =
                    f->str_formatted = 0;
        }
    for (size_t i = 0; i < a->n_rels; i++)
        if (self_ref (&a->rels[i], a)) {
            trees = bson_realloc (trees, (n_trees + 1) * sizeof *trees);
            memset (&trees[n_trees], 0, sizeof *trees);
            trees[n_trees++].rel = i;
        }
    if (!n_trees)
        return true;
    {
        bool *wanted = bson_malloc0 ((a->n_cols ? a->n_cols : 1) * sizeof *wanted);
        for (size_t t = 0; t < n_trees; t++)
            wanted[a->rels[trees[t].rel].from] = true;
        sel = select_of (a, wanted);
        bson_free (wanted);
    }
    if (sel)
        only.select = sel;
    /* The first pass checked every document of src (and failed on one
     * that was not whole) but when bad ones are set aside: checking them
     * again was half of this read. What is read here goes through
     * libbson's iterator, which stops at a length that does not hold. */
    only.no_check = !ro->skip_invalid;
    rm_buf_init (&scratch);
    r = rm_reader_open (a->src, &only, err);
    rc = r ? 1 : -1;
    if (r) {
        info = rm_reader_info (r);
        col_of = rm_analysis_col_of (a, info);
    }
    while (r && (rc = rm_reader_next (r, &item, err)) == 1) {
        size_t c;
        if (item.kind != RM_ITEM_DOC || item.ns->index >= info->n_ns || !(c = col_of[item.ns->index]))
            continue;
        c--;
        for (size_t t = 0; t < n_trees; t++) {
            const rm_relation_t *rel = &a->rels[trees[t].rel];
            tree_t *tr = &trees[t];
            if (rel->from != c)
                continue;
            if (tr->n == tr->cap) {
                tr->cap = tr->cap ? tr->cap * 2 : 256;
                tr->key = bson_realloc (tr->key, tr->cap * sizeof *tr->key);
                tr->parent = bson_realloc (tr->parent, tr->cap * sizeof *tr->parent);
            }
            keys_at (item.doc, item.len, a->cols[c].fields[rel->key].path,
                     a->cols[c].fields[rel->field].path, &tr->key[tr->n], &tr->parent[tr->n],
                     &scratch);
            tr->n++;
        }
    }
    if (r)
        rm_reader_close (r);
    for (size_t t = 0; t < n_trees; t++) {
        if (rc == 0)
            measure_tree (&a->rels[trees[t].rel], &trees[t]);
        bson_free (trees[t].key);
        bson_free (trees[t].parent);
    }
    bson_free (trees);
    bson_free (col_of);
    rm_nsselect_destroy (sel);
    rm_buf_destroy (&scratch);
    return rc == 0;
}
