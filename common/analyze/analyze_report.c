/* The analysis as one BSON document (remodel/analyze.h), the fields of
 * docs/analyze.md's "remodel analyze --json". */
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

static void
append_dist (bson_t *out, const char *key, const rm_dist_t *d)
{
    bson_t s;
    BSON_APPEND_DOCUMENT_BEGIN (out, key, &s);
    BSON_APPEND_INT64 (&s, "min", (int64_t) d->min);
    BSON_APPEND_INT64 (&s, "p50", (int64_t) rm_dist_quantile (d, 0.5));
    BSON_APPEND_INT64 (&s, "p99", (int64_t) rm_dist_quantile (d, 0.99));
    BSON_APPEND_INT64 (&s, "max", (int64_t) d->max);
    bson_append_document_end (out, &s);
}

static void
append_collection (bson_t *out, const rm_collection_t *c)
{
    bson_t fields, f;
    BSON_APPEND_UTF8 (out, "ns", c->ns);
    BSON_APPEND_INT64 (out, "documents", (int64_t) c->docs);
    BSON_APPEND_INT64 (out, "bytes", (int64_t) c->bytes);
    BSON_APPEND_INT64 (out, "avgSize", c->docs ? (int64_t) (c->bytes / c->docs) : 0);
    BSON_APPEND_INT64 (out, "p99Size", (int64_t) rm_collection_size_quantile (c, 0.99));
    BSON_APPEND_INT64 (out, "maxSize", (int64_t) c->max_size);
    BSON_APPEND_DOUBLE (out, "maxOf16MiB", (double) c->max_size / (16.0 * 1024 * 1024));
    BSON_APPEND_ARRAY_BEGIN (out, "fields", &fields);
    for (size_t i = 0; i < c->n_fields; i++) {
        const rm_field_t *x = &c->fields[i];
        char key[16];
        bson_t types;
        snprintf (key, sizeof key, "%zu", i);
        BSON_APPEND_DOCUMENT_BEGIN (&fields, key, &f);
        BSON_APPEND_UTF8 (&f, "path", x->path);
        BSON_APPEND_INT64 (&f, "documents", (int64_t) x->docs);
        BSON_APPEND_DOUBLE (&f, "presence", c->docs ? (double) x->docs / (double) c->docs : 0);
        BSON_APPEND_DOCUMENT_BEGIN (&f, "types", &types);
        for (int t = 0; t < 256; t++)
            if (x->types[t])
                BSON_APPEND_INT64 (&types, rm_value_type_name ((bson_type_t) t), (int64_t) x->types[t]);
        bson_append_document_end (&f, &types);
        /* A name no path spells (["a.b"]): left out of relationships and steps. */
        if (x->not_path)
            BSON_APPEND_BOOL (&f, "pathless", true);
        /* Targets its values fit past the likeliest few (analyze_pairs.c). */
        if (x->targets_left)
            BSON_APPEND_INT64 (&f, "targetsLeftOut", (int64_t) x->targets_left);
        if (x->lengths) {
            BSON_APPEND_INT64 (&f, "arrays", (int64_t) x->arrays);
            append_dist (&f, "arrayLengths", x->lengths);
        }
        bson_append_document_end (&fields, &f);
    }
    bson_append_array_end (out, &fields);
    BSON_APPEND_BOOL (out, "fieldsCapped", c->fields_capped);
}

static void
append_evidence (bson_t *out, const rm_evidence_t *ev)
{
    bson_t arr, e;
    BSON_APPEND_UTF8 (out, "level", rm_level_name (ev->level));
    BSON_APPEND_DOUBLE (out, "score", ev->score);
    BSON_APPEND_DOUBLE (out, "chance", ev->chance);
    BSON_APPEND_BOOL (out, "hinted", ev->hinted);
    BSON_APPEND_ARRAY_BEGIN (out, "evidence", &arr);
    for (uint8_t i = 0; i < ev->n; i++) {
        char key[16];
        snprintf (key, sizeof key, "%u", i);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, key, &e);
        BSON_APPEND_DOUBLE (&e, "points", ev->item[i].points);
        BSON_APPEND_UTF8 (&e, "what", ev->item[i].what);
        bson_append_document_end (&arr, &e);
    }
    bson_append_array_end (out, &arr);
}

/* A rejected candidate: what it shares, and why it is no relationship. */
static void
append_rejected (bson_t *out, const rm_analysis_t *a, const rm_rejected_t *x)
{
    const rm_collection_t *from = &a->cols[x->pair.from], *to = &a->cols[x->pair.to];
    char why[RM_EVIDENCE_MAX * 250] = "";
    size_t l = 0;
    BSON_APPEND_UTF8 (out, "from", from->ns);
    BSON_APPEND_UTF8 (out, "field", from->fields[x->pair.field].path);
    BSON_APPEND_UTF8 (out, "to", to->ns);
    BSON_APPEND_UTF8 (out, "key", to->fields[x->pair.key].path);
    BSON_APPEND_INT64 (out, "references", (int64_t) x->refs);
    BSON_APPEND_INT64 (out, "matched", (int64_t) x->pair.matched);
    BSON_APPEND_DOUBLE (out, "matchRate", x->refs ? (double) x->pair.matched / (double) x->refs : 0);
    append_evidence (out, &x->ev);
    BSON_APPEND_BOOL (out, "sameValues", x->ev.same_values);
    /* Why: what counted against it. */
    for (uint8_t i = 0; i < x->ev.n && l < sizeof why; i++)
        if (x->ev.item[i].points < 0 || (x->ev.item[i].points == 0 && i > 0))
            l += (size_t) snprintf (why + l, sizeof why - l, "%s%s", l ? "; " : "", x->ev.item[i].what);
    if (!l)
        snprintf (why, sizeof why, "%s", x->ev.n ? x->ev.item[0].what : "");
    BSON_APPEND_UTF8 (out, "why", why);
}

static void
append_relation (bson_t *out, const rm_analysis_t *a, const rm_relation_t *r)
{
    const rm_collection_t *from = &a->cols[r->from], *to = &a->cols[r->to];
    bson_t dups;
    BSON_APPEND_UTF8 (out, "from", from->ns);
    BSON_APPEND_UTF8 (out, "field", from->fields[r->field].path);
    BSON_APPEND_UTF8 (out, "to", to->ns);
    BSON_APPEND_UTF8 (out, "key", to->fields[r->key].path);
    BSON_APPEND_UTF8 (out, "direction", r->child_refs ? "childRefs" : "parentRef");
    BSON_APPEND_UTF8 (out, "parent", r->child_refs ? from->ns : to->ns);
    BSON_APPEND_UTF8 (out, "child", r->child_refs ? to->ns : from->ns);
    BSON_APPEND_BOOL (out, "twoWay", r->two_way);
    BSON_APPEND_INT64 (out, "keyDuplicates",
                       (int64_t) (to->fields[r->key].values - to->fields[r->key].distinct));
    BSON_APPEND_INT64 (out, "references", (int64_t) r->refs);
    BSON_APPEND_INT64 (out, "matched", (int64_t) r->matched);
    BSON_APPEND_DOUBLE (out, "matchRate", r->refs ? (double) r->matched / (double) r->refs : 0);
    BSON_APPEND_INT64 (out, "orphanReferences", (int64_t) r->orphans);
    BSON_APPEND_INT64 (out, "parents", (int64_t) r->children.n);
    BSON_APPEND_INT64 (out, "parentsWithNone", (int64_t) r->parents_none);
    append_dist (out, "childrenPerParent", &r->children);
    BSON_APPEND_INT64 (out, "sharedChildren", (int64_t) r->shared);
    BSON_APPEND_INT64 (out, "childrenNeverReferenced",
                       (int64_t) (to->fields[r->key].distinct - r->distinct_matched));
    BSON_APPEND_BOOL (out, "manyToMany", r->shared > 0);
    BSON_APPEND_UTF8 (out, "class", rm_class_name (rm_class_of (&r->children)));
    BSON_APPEND_UTF8 (out, "indexNs", r->child_refs ? to->ns : from->ns);
    BSON_APPEND_UTF8 (out, "indexField", r->child_refs ? to->fields[r->key].path
                                                      : from->fields[r->field].path);
    BSON_APPEND_BOOL (out, "indexed", r->indexed);
    BSON_APPEND_ARRAY_BEGIN (out, "keyDuplicateValues", &dups);
    for (uint8_t i = 0; i < r->n_dups; i++) {
        char key[16];
        bson_t d;
        snprintf (key, sizeof key, "%u", i);
        BSON_APPEND_DOCUMENT_BEGIN (&dups, key, &d);
        BSON_APPEND_UTF8 (&d, "value", r->dup_value[i]);
        BSON_APPEND_INT64 (&d, "documents", (int64_t) r->dup_docs[i]);
        bson_append_document_end (&dups, &d);
    }
    bson_append_array_end (out, &dups);
    append_evidence (out, &r->ev);
    {
        char why[2000];
        rm_role_t role = rm_role_of (a, (size_t) (r - a->rels), why, sizeof why);
        BSON_APPEND_UTF8 (out, "role", rm_role_name (role));
        if (why[0])
            BSON_APPEND_UTF8 (out, "roleWhy", why);
    }
    if (r->ev.tie[0])
        BSON_APPEND_UTF8 (out, "tiedWith", r->ev.tie);
    if (r->ev.level == RM_LEVEL_POSSIBLE) {
        char confirm[800];
        rm_evidence_confirm (a, r, confirm, sizeof confirm);
        BSON_APPEND_UTF8 (out, "confirm", confirm);
    }
}

void
rm_analysis_report (const rm_analysis_t *a, bson_t *out)
{
    bson_t arr, e;
    BSON_APPEND_UTF8 (out, "source", a->src);
    BSON_APPEND_ARRAY_BEGIN (out, "collections", &arr);
    for (size_t i = 0; i < a->n_cols; i++) {
        char key[16];
        snprintf (key, sizeof key, "%zu", i);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, key, &e);
        append_collection (&e, &a->cols[i]);
        bson_append_document_end (&arr, &e);
    }
    bson_append_array_end (out, &arr);
    BSON_APPEND_ARRAY_BEGIN (out, "relationships", &arr);
    for (size_t i = 0; i < a->n_rels; i++) {
        char key[16];
        snprintf (key, sizeof key, "%zu", i);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, key, &e);
        append_relation (&e, a, &a->rels[i]);
        bson_append_document_end (&arr, &e);
    }
    bson_append_array_end (out, &arr);
    BSON_APPEND_ARRAY_BEGIN (out, "rejected", &arr);
    for (size_t i = 0; i < a->n_rejected; i++) {
        char key[16];
        snprintf (key, sizeof key, "%zu", i);
        BSON_APPEND_DOCUMENT_BEGIN (&arr, key, &e);
        append_rejected (&e, a, &a->rejected[i]);
        bson_append_document_end (&arr, &e);
    }
    bson_append_array_end (out, &arr);
    /* A relational import's own kinds: who owns a child, join
     * collections, hierarchies, ties, same values, types held wrong. */
    rm_analysis_roles (a, out);
    BSON_APPEND_ARRAY_BEGIN (out, "types", &arr);
    rm_analysis_types (a, &arr);
    bson_append_array_end (out, &arr);
    BSON_APPEND_ARRAY_BEGIN (out, "planChecks", &arr);
    for (size_t i = 0; i < a->n_plan_notes; i++) {
        char key[16];
        snprintf (key, sizeof key, "%zu", i);
        BSON_APPEND_UTF8 (&arr, key, a->plan_notes[i]);
    }
    bson_append_array_end (out, &arr);
    BSON_APPEND_ARRAY_BEGIN (out, "hintNotes", &arr);
    rm_analysis_hint_notes (a, &arr);
    bson_append_array_end (out, &arr);
    BSON_APPEND_ARRAY_BEGIN (out, "checks", &arr);
    rm_analysis_checks (a, &arr);
    bson_append_array_end (out, &arr);
    BSON_APPEND_ARRAY_BEGIN (out, "recommendations", &arr);
    rm_analysis_recommend (a, &arr, NULL);
    bson_append_array_end (out, &arr);
}
