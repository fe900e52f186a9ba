/* The relationships a dump's values show (remodel/analyze.h): a field
 * whose values are mostly found among another collection's _id, or among
 * the values of a field unique there. Keys match as $lookup matches them
 * (rm_analyze_key), so 1, NumberLong(1) and 1.0 are one key.
 *
 * A field whose values sit in arrays holds child references (its
 * collection is the one side: the parent); a plain field is a parent
 * reference from the many side. Children per parent come from the key
 * counts for parent references, and from a second pass, document by
 * document, for child references. */
#include <string.h>

#include "analyze_int.h"

/* How much of a field's values must be found for a relationship: chance
 * matches (small numbers, common codes) rarely reach it, and a real
 * reference with a few dangling values does. */
#define MIN_MATCH_RATE 0.8
#define MIN_DISTINCT 2
/* Small numbers and short codes (quantities, years, "s1") fall among any
 * collection's integer or short ids by chance: such a field must also
 * reference at least this share of the target's keys. */
#define MIN_SMALL_COVERAGE 0.2

static bool
is_target (const rm_collection_t *c, const rm_field_t *f)
{
    if (!strcmp (f->path, "_id"))
        return f->distinct > 0;
    /* A top-level field, never an array, in (almost) every document, with
     * (almost) no value twice: real data has the odd duplicate (the Atlas
     * sample's accounts.account_id has one), which a $lookup then matches
     * twice; the report counts them (keyDuplicates). */
    return !strchr (f->path, '.') && !f->in_array && !f->arrays && !f->not_key && c->docs > 1 &&
           f->values * 100 >= c->docs * 99 && f->distinct * 100 >= f->values * 99;
}

static bool
holds_refs (const rm_field_t *f)
{
    return !f->not_key && f->values > 0 && strcmp (f->path, "_id") != 0;
}

bool
rm_analyze_indexed (const rm_collection_t *c, const char *path)
{
    char *needle;
    bool found;
    if (!strcmp (path, "_id"))
        return true;
    if (!c->metadata)
        return false;
    needle = bson_strdup_printf ("\"key\":{\"%s\":", path);
    found = strstr (c->metadata, needle) != NULL;
    bson_free (needle);
    if (!found) {
        needle = bson_strdup_printf ("\"key\" : { \"%s\" :", path);
        found = strstr (c->metadata, needle) != NULL;
        bson_free (needle);
    }
    return found;
}

static void
measure (rm_analysis_t *a, rm_relation_t *r)
{
    rm_field_t *f = &a->cols[r->from].fields[r->field];
    rm_field_t *k = &a->cols[r->to].fields[r->key];
    for (size_t i = 0; i < f->keys.cap; i++) {
        uint64_t n = f->keys.counts[i];
        if (!f->keys.keys[i] || !rm_keymap_get (&k->keys, f->keys.keys[i]))
            continue;
        if (r->child_refs && n > 1)
            r->shared++;
    }
    r->orphans = r->refs - r->matched;
    r->indexed = rm_analyze_indexed (&a->cols[r->from], f->path);
    if (r->child_refs)
        return; /* children per parent: the second pass */
    for (size_t i = 0; i < k->keys.cap; i++) {
        uint64_t n;
        if (!k->keys.keys[i])
            continue;
        n = rm_keymap_get (&f->keys, k->keys.keys[i]);
        rm_dist_add (&r->children, n);
        r->parents_none += n == 0;
    }
}

typedef struct {
    const rm_keymap_t *target;
    uint64_t n;
    rm_buf_t *scratch;
} countctx_t;

static bool
count_found (const bson_iter_t *v, void *ctx)
{
    countctx_t *c = ctx;
    if (v && !BSON_ITER_HOLDS_NULL (v) && !BSON_ITER_HOLDS_ARRAY (v) &&
        rm_keymap_get (c->target, rm_analyze_key (v, c->scratch)))
        c->n++;
    return true;
}

/* Children per parent of the child-reference relationships: each parent
 * document's references found. */
static bool
second_pass (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err)
{
    rm_path_t *paths;
    rm_reader_t *r;
    rm_buf_t scratch;
    rm_item_t item;
    int rc;
    bool any = false;

    for (size_t i = 0; i < a->n_rels; i++)
        any |= a->rels[i].child_refs;
    if (!any)
        return true;
    paths = bson_malloc0 (a->n_rels * sizeof *paths);
    for (size_t i = 0; i < a->n_rels; i++)
        if (a->rels[i].child_refs)
            rm_path_parse (&paths[i], a->cols[a->rels[i].from].fields[a->rels[i].field].path, NULL);
    rm_buf_init (&scratch);
    r = rm_reader_open (a->src, ro, err);
    while (r && (rc = rm_reader_next (r, &item, err)) == 1) {
        char name[512];
        if (item.kind != RM_ITEM_DOC)
            continue;
        rm_ns_name (item.ns, name, sizeof name);
        for (size_t i = 0; i < a->n_rels; i++) {
            rm_relation_t *rel = &a->rels[i];
            countctx_t c;
            if (!rel->child_refs || strcmp (a->cols[rel->from].ns, name) != 0)
                continue;
            c.target = &a->cols[rel->to].fields[rel->key].keys;
            c.n = 0;
            c.scratch = &scratch;
            rm_path_visit (item.doc, item.len, &paths[i], true, false, count_found, &c);
            rm_dist_add (&rel->children, c.n);
            rel->parents_none += c.n == 0;
        }
    }
    for (size_t i = 0; i < a->n_rels; i++)
        if (a->rels[i].child_refs)
            rm_path_destroy (&paths[i]);
    bson_free (paths);
    rm_buf_destroy (&scratch);
    if (!r)
        return false;
    rm_reader_close (r);
    return rc == 0;
}

bool
rm_analyze_relate (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err)
{
    for (size_t ci = 0; ci < a->n_cols; ci++) {
        rm_collection_t *c = &a->cols[ci];
        for (size_t fi = 0; fi < c->n_fields; fi++) {
            rm_field_t *f = &c->fields[fi];
            rm_relation_t best;
            double best_rate = 0;
            if (!holds_refs (f))
                continue;
            memset (&best, 0, sizeof best);
            for (size_t ti = 0; ti < a->n_cols; ti++) {
                rm_collection_t *t = &a->cols[ti];
                /* $lookup joins collections of one database. */
                if (ti == ci || strcmp (t->db, c->db) != 0)
                    continue;
                for (size_t ki = 0; ki < t->n_fields; ki++) {
                    rm_field_t *k = &t->fields[ki];
                    uint64_t matched = 0, distinct = 0;
                    double rate;
                    if (!is_target (t, k))
                        continue;
                    for (size_t i = 0; i < f->keys.cap; i++)
                        if (f->keys.keys[i] && rm_keymap_get (&k->keys, f->keys.keys[i])) {
                            matched += f->keys.counts[i];
                            distinct++;
                        }
                    rate = (double) matched / (double) f->values;
                    if (rate < MIN_MATCH_RATE || distinct < MIN_DISTINCT || rate <= best_rate)
                        continue;
                    if (f->small * 2 > f->values &&
                        (double) distinct < MIN_SMALL_COVERAGE * (double) k->distinct)
                        continue;
                    best_rate = rate;
                    best.from = ci;
                    best.field = fi;
                    best.to = ti;
                    best.key = ki;
                    best.refs = f->values;
                    best.matched = matched;
                    best.distinct_matched = distinct;
                    best.child_refs = f->arrays > 0 || f->in_array;
                }
            }
            if (best_rate > 0) {
                a->rels = bson_realloc (a->rels, (a->n_rels + 1) * sizeof *a->rels);
                a->rels[a->n_rels++] = best;
            }
        }
    }
    for (size_t i = 0; i < a->n_rels; i++) {
        measure (a, &a->rels[i]);
        for (size_t k = 0; k < a->n_rels; k++)
            if (k != i && a->rels[k].from == a->rels[i].to && a->rels[k].to == a->rels[i].from)
                a->rels[i].two_way = true;
    }
    return second_pass (a, ro, err);
}
