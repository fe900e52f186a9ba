/* The relational import's own recommendations (analyze_patterns.h):
 *
 * - a join collection (two or more references and at most a few other
 *   fields) is a many-to-many: each side the counts favour gets an array
 *   of references to the other side (the guide's Many-to-Many: arrays of
 *   references on one or both sides),
 *   built by a summarize step with $addToSet; the join collection is kept
 *   (its own fields, if any, stay there; dropping it is the user's call);
 * - a hierarchy (a reference to its own collection) keeps its parent
 *   references (the tree's parent-reference pattern); an array of its
 *   children (when the fan-out is within what an array takes) and an
 *   ancestors array (for a shallow tree) are named, with the numbers, and
 *   left to the user: no step joins a collection with itself (summarize
 *   refuses "into" equal to "from"), and ancestors need a recursive
 *   lookup. So a tree makes no step. */
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

/* An array of references past this many is rule 4's "a few thousand
 * ObjectID references"; each side within it may hold one. */
#define REF_ARRAY_MAX 2000
/* Ancestors arrays for trees this shallow. */
#define SHALLOW_DEPTH 5

/* A name for the array: the other side's collection, then _ids. */
static void
array_name (const rm_collection_t *other, const rm_collection_t *holder, char *out, size_t len)
{
    snprintf (out, len, "%s_ids", other->coll);
    for (char *p = out; *p; p++)
        if (*p == '.' || *p == '$')
            *p = '_';
    for (size_t k = 0; k < holder->n_fields; k++)
        if (!strcmp (holder->fields[k].path, out)) {
            size_t l = strlen (out);
            snprintf (out + l, len - l, "_joined");
            break;
        }
}

void
rm_recommend_join (const rm_analysis_t *a, size_t col, rm_recout_t *o)
{
    size_t rels[RM_JOIN_MAX], n = rm_join_rels (a, col, rels, RM_JOIN_MAX), fewest = 0;
    const rm_collection_t *j = &a->cols[col];
    char name[600], why[3000];
    size_t l;

    for (size_t k = 1; k < n; k++)
        if (rm_dist_quantile (&a->rels[rels[k]].children, 0.99) <
            rm_dist_quantile (&a->rels[rels[fewest]].children, 0.99))
            fewest = k;
    for (size_t k = 0; k < n; k++) {
        const rm_relation_t *r = &a->rels[rels[k]];
        const rm_collection_t *side = &a->cols[r->to];
        uint64_t p99 = rm_dist_quantile (&r->children, 0.99);
        bool holds = k == fewest || r->children.max <= REF_ARRAY_MAX;
        bson_t step, body, fields, acc;

        snprintf (name, sizeof name, "%s: %s", j->ns, side->ns);
        l = (size_t) snprintf (why, sizeof why, "%s joins", j->ns);
        for (size_t m = 0; m < n; m++)
            l += (size_t) snprintf (why + l, sizeof why - l, "%s%s", m ? " and " : " ",
                                    a->cols[a->rels[rels[m]].to].ns);
        l += (size_t) snprintf (why + l, sizeof why - l, " (a join collection: %zu references, at "
                                "most %d other fields): a many-to-many; per %s document, p50 %llu, "
                                "p99 %llu, max %llu of them", n, RM_JOIN_OTHER_FIELDS, side->ns,
                                (unsigned long long) rm_dist_quantile (&r->children, 0.5),
                                (unsigned long long) p99, (unsigned long long) r->children.max);
        if (!holds) {
            snprintf (why + l, sizeof why - l, ": past a few thousand references, %s keeps no "
                      "array; the other side's holds the relationship", side->ns);
            rm_rec_append (o, name, j->ns, NULL, "keep referencing", why,
                           RM_SRC_RULES ", rule 4: more than a few thousand references is too "
                           "many for an array", "nothing a dump cannot show");
            continue;
        }
        snprintf (why + l, sizeof why - l, ": %s gets an array of references to the other side%s; "
                  "%s is kept (dropping it once nothing reads it is yours to decide)", side->ns,
                  n > 1 && k != fewest ? " too (two-way referencing)" : " (the side with the fewest)",
                  j->ns);
        rm_rec_append (o, name, j->ns, NULL, "array of references", why,
                       RM_SRC_GUIDE ", Many-to-Many: use arrays of references on one or both "
                       "sides depending on access patterns; " RM_SRC_ZOLA ": an N-to-N schema "
                       "without any need for a join table",
                       "how each side is read, and whether the join collection's own fields are "
                       "needed: a dump cannot show them (--hints readTogether says what is read "
                       "with what)");
        if (!rm_rec_step_begin (o, "summarize", &step, &body))
            continue;
        BSON_APPEND_UTF8 (&body, "into", side->ns);
        BSON_APPEND_UTF8 (&body, "from", j->ns);
        BSON_APPEND_UTF8 (&body, "localField", side->fields[r->key].path);
        BSON_APPEND_UTF8 (&body, "foreignField", j->fields[r->field].path);
        BSON_APPEND_DOCUMENT_BEGIN (&body, "fields", &fields);
        for (size_t m = 0; m < n; m++) {
            const rm_relation_t *x = &a->rels[rels[m]];
            char arr[300], ref[300];
            if (m == k)
                continue;
            array_name (&a->cols[x->to], side, arr, sizeof arr);
            snprintf (ref, sizeof ref, "$%s", j->fields[x->field].path);
            BSON_APPEND_DOCUMENT_BEGIN (&fields, arr, &acc);
            BSON_APPEND_UTF8 (&acc, "$addToSet", ref);
            bson_append_document_end (&fields, &acc);
        }
        bson_append_document_end (&body, &fields);
        rm_rec_step_end (o, &step, &body, why);
    }
}

void
rm_recommend_tree (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *o)
{
    const rm_collection_t *c = &a->cols[r->from];
    const char *field = c->fields[r->field].path, *key = c->fields[r->key].path;
    uint64_t p99 = rm_dist_quantile (&r->children, 0.99);
    bool children = r->children.max <= REF_ARRAY_MAX;
    char name[600], why[2000], arr[300];
    size_t l;

    snprintf (name, sizeof name, "%s.%s -> %s.%s", c->ns, field, c->ns, key);
    snprintf (arr, sizeof arr, "%s_children", field);
    l = (size_t) snprintf (why, sizeof why, "%s: a hierarchy (a reference to its own collection) "
                           "of depth %u, %llu root(s), fan-out p50 %llu, p99 %llu, max %llu",
                           name, r->depth, (unsigned long long) r->roots,
                           (unsigned long long) rm_dist_quantile (&r->children, 0.5),
                           (unsigned long long) p99, (unsigned long long) r->children.max);
    if (r->cycles)
        l += (size_t) snprintf (why + l, sizeof why - l, ", %llu document(s) in circles (no root)",
                                (unsigned long long) r->cycles);
    l += (size_t) snprintf (why + l, sizeof why - l, ": the tree's parent references stay");
    if (children)
        l += (size_t) snprintf (why + l, sizeof why - l, "; each node may get \"%s\", its "
                                "children's %s (child references: a node's children without a "
                                "query on the parent field), which no step builds (summarize "
                                "joins two collections, not one with itself)", arr, key);
    if (r->depth <= SHALLOW_DEPTH)
        snprintf (why + l, sizeof why - l, "; shallow enough (depth %u) for an ancestors array "
                  "too (the path from the root, for a subtree in one query), which no step builds: "
                  "$graphLookup makes it", r->depth);
    rm_rec_append (o, name, NULL, NULL, "tree", why,
                   "the seeds name no tree pattern; its parts are theirs: " RM_SRC_ZOLA
                   ", parent-referencing (the reference kept in each node); " RM_SRC_HOWTO
                   ", guideline 4: child references (the children's ids in an array)",
                   "how the tree is read (up to the root, down to the children, whole subtrees): "
                   "a dump cannot show it");
}
