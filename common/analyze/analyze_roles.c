/* What a relational import's collections are to each other
 * (analyze_patterns.h, docs/analyze.md "Relational imports"): lookups,
 * join collections, the owner of a child that references several parents,
 * and hierarchies; and the report's own kinds for them (ownership[],
 * joins[], hierarchies[], ties[], sameValues[]). Computed from the
 * relationships alone, every time they are asked: a few comparisons per
 * pair of relationships. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

/* A lookup is small and narrow, named: a code and a name or two
 * ("nation", "region", "media types"). */
#define LOOKUP_MAX_DOCS 100
#define LOOKUP_MAX_FIELDS 4

static bool
top_level (const rm_field_t *f)
{
    return !strchr (f->path, '.') && strcmp (f->path, "_id") != 0;
}

bool
rm_is_lookup (const rm_analysis_t *a, size_t col)
{
    const rm_collection_t *c = &a->cols[col];
    size_t fields = 0;
    bool referenced = false, named = false;
    if (c->docs > LOOKUP_MAX_DOCS)
        return false;
    for (size_t k = 0; k < c->n_fields; k++) {
        const rm_field_t *f = &c->fields[k];
        fields += top_level (f);
        /* A name or a code: a short string, one a document. */
        named |= top_level (f) && !f->not_key && f->types[BSON_TYPE_UTF8] * 100 >= c->docs * 95 &&
                 f->distinct * 10 >= c->docs * 9;
    }
    if (!named)
        return false;
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        if (!RM_REL_ACTS (r) || r->from == r->to)
            continue;
        /* It refers to a bigger one: a lookup refers only to lookups. */
        if (r->from == col && !r->child_refs && a->cols[r->to].docs > LOOKUP_MAX_DOCS)
            return false;
        referenced |= r->to == col && !r->child_refs && a->cols[r->from].docs > c->docs;
    }
    return referenced && fields <= LOOKUP_MAX_FIELDS;
}

/* Whether an acting relationship refers to col from another collection. */
static bool
referenced (const rm_analysis_t *a, size_t col)
{
    for (size_t i = 0; i < a->n_rels; i++)
        if (RM_REL_ACTS (&a->rels[i]) && a->rels[i].to == col && a->rels[i].from != col)
            return true;
    return false;
}

/* Whether r is one of col's parent references to another collection that
 * acts. */
static bool
parent_ref_of (const rm_relation_t *r, size_t col)
{
    return RM_REL_ACTS (r) && r->from == col && !r->child_refs && r->to != col;
}

/* Whether col's fields but _id are all references that act. */
static bool
only_refs (const rm_analysis_t *a, size_t col)
{
    const rm_collection_t *c = &a->cols[col];
    for (size_t k = 0; k < c->n_fields; k++) {
        bool ref = false;
        if (!strcmp (c->fields[k].path, "_id"))
            continue;
        for (size_t j = 0; j < a->n_rels; j++)
            ref |= parent_ref_of (&a->rels[j], col) && a->rels[j].field == k;
        if (!ref)
            return false;
    }
    return true;
}

/* A rejected candidate's score above which it may still be a join's
 * reference: a measurement's name (-2) says it is none. */
#define JOIN_MIN_SCORE -2.0

bool
rm_join_shaped (const rm_analysis_t *a, size_t col)
{
    const rm_collection_t *c = &a->cols[col];
    size_t first = SIZE_MAX;
    bool two = false;
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        if (r->to == col && r->from != col)
            return false; /* referenced, even possibly: no join */
        if (r->from != col || r->child_refs || r->to == col)
            continue;
        if (first == SIZE_MAX)
            first = r->to;
        else
            two |= r->to != first;
    }
    for (size_t k = 0; k < c->n_fields; k++) {
        bool ref = false;
        if (!strcmp (c->fields[k].path, "_id"))
            continue;
        for (size_t j = 0; j < a->n_rels; j++)
            ref |= a->rels[j].from == col && a->rels[j].field == k && !a->rels[j].child_refs;
        /* Or values found among another collection's keys that the
         * evidence could not tell from chance (integers of a dense range
         * fit any such range), but neither a measurement's nor a copy. */
        for (size_t j = 0; j < a->n_rejected; j++) {
            const rm_rejected_t *x = &a->rejected[j];
            if (x->pair.from == col && x->pair.field == k && x->pair.to != col &&
                !x->ev.same_values && x->ev.score > JOIN_MIN_SCORE) {
                ref = true;
                two |= first != SIZE_MAX && x->pair.to != first;
            }
        }
        if (!ref)
            return false;
    }
    return two;
}

size_t
rm_join_rels (const rm_analysis_t *a, size_t col, size_t *rels, size_t max)
{
    const rm_collection_t *c = &a->cols[col];
    size_t n = 0, other = 0;
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        bool dup = false;
        /* A join collection is referenced by none. */
        if (RM_REL_ACTS (r) && r->to == col && r->from != col)
            return 0;
        if (!parent_ref_of (r, col))
            continue;
        for (size_t k = 0; k < n; k++)
            dup |= a->rels[rels[k]].to == r->to;
        if (!dup && n < max)
            rels[n++] = i;
    }
    if (n < 2)
        return 0;
    /* A row of a join table has no key of its own (the pair is its key):
     * its _id is made up on import (an ObjectId), no other field a key;
     * or, whatever its _id (a row number), it holds nothing but the
     * references: the shape alone says it is a join. */
    for (size_t k = 0; k < c->n_fields; k++)
        if (!strcmp (c->fields[k].path, "_id") && c->fields[k].types[BSON_TYPE_OID] < c->docs &&
            !only_refs (a, col))
            return 0;
    for (size_t k = 0; k < c->n_fields; k++) {
        bool ref = false;
        if (!top_level (&c->fields[k]))
            continue;
        if (c->fields[k].values * 100 >= c->docs * 99 &&
            c->fields[k].distinct * 100 >= c->fields[k].values * 99 &&
            c->fields[k].types[BSON_TYPE_UTF8] < c->fields[k].values)
            return 0; /* a unique field that is no text: a key of its own */
        for (size_t j = 0; j < a->n_rels; j++)
            ref |= parent_ref_of (&a->rels[j], col) && a->rels[j].field == k;
        other += !ref;
    }
    return other <= RM_JOIN_OTHER_FIELDS ? n : 0;
}

/* A collection's name reduced: lower case letters and digits, a plural's
 * ending dropped ("order_lines" -> "orderline", "categories" -> "category"). */
static void
reduce (const char *name, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < len; p++)
        if (isalnum ((unsigned char) *p))
            out[n++] = (char) tolower ((unsigned char) *p);
    out[n] = '\0';
    if (n > 4 && !strcmp (out + n - 3, "ies"))
        snprintf (out + n - 3, 4, "y");
    else if (n > 2 && out[n - 1] == 's' && out[n - 2] != 's')
        out[n - 1] = '\0';
}

size_t
rm_owner_rel (const rm_analysis_t *a, size_t col, char *why, size_t len)
{
    size_t cand[RM_JOIN_MAX], n = 0, parents = 0, best = SIZE_MAX, lookups = 0;
    char child[256], pname[256];
    const char *how = "";
    size_t joins[RM_JOIN_MAX];

    if (why)
        why[0] = '\0';
    if (rm_join_rels (a, col, joins, RM_JOIN_MAX))
        return SIZE_MAX;
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        if (!parent_ref_of (r, col))
            continue;
        parents++;
        /* A lookup is copied, never an owner; nor a parent past what
         * embedding takes (rule 4). */
        if (rm_is_lookup (a, r->to)) {
            lookups++;
            continue;
        }
        if (rm_dist_quantile (&r->children, 0.99) <= RM_ANALYZE_MANY && n < RM_JOIN_MAX)
            cand[n++] = i;
    }
    if (parents < 2 || !n)
        return SIZE_MAX;
    reduce (a->cols[col].coll, child, sizeof child);
    /* The child named after its owner: order_lines of orders. */
    for (size_t k = 0; k < n && best == SIZE_MAX; k++) {
        reduce (a->cols[a->rels[cand[k]].to].coll, pname, sizeof pname);
        if (pname[0] && !strncmp (child, pname, strlen (pname))) {
            best = cand[k];
            how = "its name is the owner's";
        }
    }
    /* Else the parent every one of which has children (they are made
     * together), with the fewest of them. */
    for (size_t k = 0; k < n && best == SIZE_MAX; k++) {
        const rm_relation_t *r = &a->rels[cand[k]];
        if (r->parents_none)
            continue;
        for (size_t j = 0; j < n; j++)
            if (!a->rels[cand[j]].parents_none &&
                rm_dist_quantile (&a->rels[cand[j]].children, 0.99) <
                    rm_dist_quantile (&r->children, 0.99))
                goto next;
        best = cand[k];
        how = "every parent has children (they are made together), the fewest per parent";
    next:;
    }
    if (best == SIZE_MAX && n == 1) {
        best = cand[0];
        how = "the other parents are lookups";
    }
    if (best == SIZE_MAX)
        return SIZE_MAX;
    if (why) {
        const rm_relation_t *o = &a->rels[best];
        size_t l = (size_t) snprintf (why, len, "%s is owned by %s (%s: p99 %llu children per "
                                      "parent, %llu of %llu parents with none)",
                                      a->cols[col].ns, a->cols[o->to].ns, how,
                                      (unsigned long long) rm_dist_quantile (&o->children, 0.99),
                                      (unsigned long long) o->parents_none,
                                      (unsigned long long) o->children.n);
        for (size_t i = 0; i < a->n_rels && l < len; i++) {
            const rm_relation_t *r = &a->rels[i];
            if (i == best || !parent_ref_of (r, col))
                continue;
            if (rm_is_lookup (a, r->to))
                l += (size_t) snprintf (why + l, len - l, "; %s is a lookup (%llu documents of few "
                                        "fields): copied into the children, never their owner",
                                        a->cols[r->to].ns, (unsigned long long) a->cols[r->to].docs);
            else
                l += (size_t) snprintf (why + l, len - l, "; %s is referenced, not an owner (p99 "
                                        "%llu children per parent, %llu of %llu with none): its "
                                        "identifying fields are copied (extended reference)",
                                        a->cols[r->to].ns,
                                        (unsigned long long) rm_dist_quantile (&r->children, 0.99),
                                        (unsigned long long) r->parents_none,
                                        (unsigned long long) r->children.n);
        }
    }
    (void) lookups;
    return best;
}

const char *
rm_role_name (rm_role_t r)
{
    static const char *const names[] = {"plain", "owner", "referenced", "lookup", "join", "tree"};
    return names[r];
}

rm_role_t
rm_role_of (const rm_analysis_t *a, size_t rel, char *why, size_t len)
{
    const rm_relation_t *r = &a->rels[rel];
    size_t joins[RM_JOIN_MAX], owner;
    if (why)
        why[0] = '\0';
    if (r->from == r->to)
        return RM_ROLE_TREE;
    if (r->child_refs || !RM_REL_ACTS (r))
        return RM_ROLE_PLAIN;
    if (rm_join_rels (a, r->from, joins, RM_JOIN_MAX))
        return RM_ROLE_JOIN;
    owner = rm_owner_rel (a, r->from, why, len);
    if (owner == rel)
        return RM_ROLE_OWNER;
    /* A lookup's documents are copied into the child when the child is
     * more than a few a lookup document (an embed would gather a crowd
     * into each: 60 customers a nation), has another parent, or is
     * referenced itself (it must stay where the others find it). */
    if (rm_is_lookup (a, r->to) &&
        (rm_dist_quantile (&r->children, 0.99) > RM_ANALYZE_FEW || owner != SIZE_MAX ||
         referenced (a, r->from))) {
        if (why && !why[0])
            snprintf (why, len, "%s is a lookup (%llu documents of few fields): copied into %s, "
                      "not the owner of its documents", a->cols[r->to].ns,
                      (unsigned long long) a->cols[r->to].docs, a->cols[r->from].ns);
        return RM_ROLE_LOOKUP;
    }
    if (owner != SIZE_MAX)
        return RM_ROLE_REFERENCED;
    return RM_ROLE_PLAIN;
}

static void
entry (bson_t *arr, uint32_t *n, const char *what, const char *ns, const char *why)
{
    char key[16];
    bson_t e;
    snprintf (key, sizeof key, "%u", (*n)++);
    BSON_APPEND_DOCUMENT_BEGIN (arr, key, &e);
    BSON_APPEND_UTF8 (&e, "ns", ns);
    BSON_APPEND_UTF8 (&e, "what", what);
    BSON_APPEND_UTF8 (&e, "why", why);
    bson_append_document_end (arr, &e);
}

void
rm_analysis_roles (const rm_analysis_t *a, bson_t *out)
{
    bson_t arr;
    uint32_t n = 0;
    char why[2000], what[800];

    BSON_APPEND_ARRAY_BEGIN (out, "ownership", &arr);
    for (size_t c = 0; c < a->n_cols; c++) {
        size_t o = rm_owner_rel (a, c, why, sizeof why);
        if (o == SIZE_MAX)
            continue;
        snprintf (what, sizeof what, "%s owned by %s (%s)", a->cols[c].ns, a->cols[a->rels[o].to].ns,
                  a->cols[c].fields[a->rels[o].field].path);
        entry (&arr, &n, what, a->cols[c].ns, why);
    }
    for (size_t c = 0; c < a->n_cols; c++)
        if (rm_is_lookup (a, c)) {
            snprintf (what, sizeof what, "%s is a lookup", a->cols[c].ns);
            snprintf (why, sizeof why, "%llu documents of few fields, referenced by larger "
                      "collections: its identifying fields are copied into them (extended "
                      "reference), never embedded with them", (unsigned long long) a->cols[c].docs);
            entry (&arr, &n, what, a->cols[c].ns, why);
        }
    bson_append_array_end (out, &arr);

    n = 0;
    BSON_APPEND_ARRAY_BEGIN (out, "joins", &arr);
    for (size_t c = 0; c < a->n_cols; c++) {
        size_t rels[RM_JOIN_MAX], k = rm_join_rels (a, c, rels, RM_JOIN_MAX), l = 0;
        if (!k)
            continue;
        l += (size_t) snprintf (what + l, sizeof what - l, "%s joins", a->cols[c].ns);
        for (size_t j = 0; j < k; j++)
            l += (size_t) snprintf (what + l, sizeof what - l, "%s%s", j ? " and " : " ",
                                    a->cols[a->rels[rels[j]].to].ns);
        snprintf (what + l, sizeof what - l, ": many-to-many");
        l = (size_t) snprintf (why, sizeof why, "its documents hold %zu references and at most "
                               "%d other fields", k, RM_JOIN_OTHER_FIELDS);
        for (size_t j = 0; j < k; j++) {
            const rm_relation_t *r = &a->rels[rels[j]];
            l += (size_t) snprintf (why + l, sizeof why - l, "; per %s: p50 %llu, p99 %llu, max %llu",
                                    a->cols[r->to].ns,
                                    (unsigned long long) rm_dist_quantile (&r->children, 0.5),
                                    (unsigned long long) rm_dist_quantile (&r->children, 0.99),
                                    (unsigned long long) r->children.max);
        }
        entry (&arr, &n, what, a->cols[c].ns, why);
    }
    bson_append_array_end (out, &arr);

    n = 0;
    BSON_APPEND_ARRAY_BEGIN (out, "hierarchies", &arr);
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        const rm_collection_t *c = &a->cols[r->from];
        if (r->from != r->to)
            continue;
        snprintf (what, sizeof what, "%s.%s -> %s.%s: a hierarchy", c->ns,
                  c->fields[r->field].path, c->ns, c->fields[r->key].path);
        snprintf (why, sizeof why, "depth %u, %llu root(s), %llu in circles; fan-out (children "
                  "per parent) p50 %llu, p99 %llu, max %llu, %llu leaves", r->depth,
                  (unsigned long long) r->roots, (unsigned long long) r->cycles,
                  (unsigned long long) rm_dist_quantile (&r->children, 0.5),
                  (unsigned long long) rm_dist_quantile (&r->children, 0.99),
                  (unsigned long long) r->children.max, (unsigned long long) r->parents_none);
        entry (&arr, &n, what, c->ns, why);
    }
    bson_append_array_end (out, &arr);

    n = 0;
    BSON_APPEND_ARRAY_BEGIN (out, "ties", &arr);
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        const rm_collection_t *c = &a->cols[r->from], *t = &a->cols[r->to];
        if (!r->ev.tie[0])
            continue;
        snprintf (what, sizeof what, "%s.%s -> %s.%s or %s", c->ns, c->fields[r->field].path, t->ns,
                  t->fields[r->key].path, r->ev.tie);
        snprintf (why, sizeof why, "the values fit each target as well (score %.1f): not acted on; "
                  "settle it with --hints {\"references\": {\"%s.%s\": \"%s.%s\"}}, naming the "
                  "one meant (%s, or one of %s)", r->ev.score, c->ns, c->fields[r->field].path,
                  t->ns, t->fields[r->key].path, t->ns, r->ev.tie);
        entry (&arr, &n, what, c->ns, why);
    }
    bson_append_array_end (out, &arr);

    n = 0;
    BSON_APPEND_ARRAY_BEGIN (out, "sameValues", &arr);
    for (size_t i = 0; i < a->n_rejected; i++) {
        const rm_rejected_t *x = &a->rejected[i];
        const rm_collection_t *c = &a->cols[x->pair.from], *t = &a->cols[x->pair.to];
        if (!x->ev.same_values)
            continue;
        snprintf (what, sizeof what, "%s.%s = %s.%s", c->ns, c->fields[x->pair.field].path, t->ns,
                  t->fields[x->pair.key].path);
        snprintf (why, sizeof why, "%llu of %llu values (%llu distinct) equal to values of %s.%s: "
                  "copies of the same data (an address, a name, an email), not a reference: "
                  "neither is named like a key, and %s references %s by a key already",
                  (unsigned long long) x->pair.matched, (unsigned long long) x->refs,
                  (unsigned long long) x->pair.distinct, t->ns, t->fields[x->pair.key].path,
                  c->ns, t->ns);
        entry (&arr, &n, what, c->ns, why);
    }
    bson_append_array_end (out, &arr);
}
