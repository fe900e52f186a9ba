/* What the numbers recommend (remodel/analyze.h): per relationship, the
 * pattern the seeds' rules of thumb give for its class (or the outlier
 * pattern, when only a few parents pass rule 4), with the numbers and the
 * rule behind it, what it depends on that a dump cannot show, and, where
 * the pattern is a step remodel runs, that step for --plan-out; then the
 * extended references (analyze_extref.c) and the per-collection patterns
 * (analyze_recommend_coll.c). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

/* How many parents have more than v children (v within the exact table). */
static uint64_t
parents_above (const rm_dist_t *d, uint64_t v)
{
    uint64_t n = d->n;
    for (uint64_t i = 0; i <= v && i <= 4096; i++)
        n -= d->exact[i];
    return n;
}

/* The outlier pattern's maxItems: the p99 rounded up to ten, at least a
 * few, so that 99% of the parents keep all their children embedded. */
static uint64_t
outlier_max_items (uint64_t p99)
{
    uint64_t n = (p99 + 9) / 10 * 10;
    return n < RM_ANALYZE_FEW ? RM_ANALYZE_FEW : n;
}

/* A date field of the children in (nearly) every one: the order of a
 * subset (the newest first). */
static const char *
date_field (const rm_collection_t *c)
{
    for (size_t i = 0; i < c->n_fields; i++) {
        const rm_field_t *f = &c->fields[i];
        if (!strchr (f->path, '.') && f->types[BSON_TYPE_DATE_TIME] * 10 >= c->docs * 9)
            return f->path;
    }
    return NULL;
}

static void
append_join (bson_t *step, const rm_analysis_t *a, const rm_relation_t *r, char *as, size_t as_len)
{
    const rm_collection_t *from = &a->cols[r->from], *to = &a->cols[r->to];
    const char *field = from->fields[r->field].path, *key = to->fields[r->key].path;
    /* parentRef: from (children) -> to (parents); childRefs: from (parents) -> to (children). */
    BSON_APPEND_UTF8 (step, "from", r->child_refs ? to->ns : from->ns);
    BSON_APPEND_UTF8 (step, "into", r->child_refs ? from->ns : to->ns);
    BSON_APPEND_UTF8 (step, "localField", r->child_refs ? field : key);
    BSON_APPEND_UTF8 (step, "foreignField", r->child_refs ? key : field);
    /* The embedded array: in place of an array of references; else named
     * after the children's collection (references inside array elements,
     * lines.part, and parent references), as a plain field name. */
    snprintf (as, as_len, "%s", r->child_refs && !strchr (field, '.') ? field
                                : r->child_refs ? to->coll : from->coll);
    for (char *p = as; *p; p++)
        if (*p == '.' || (p == as && *p == '$'))
            *p = '_';
}

/* Child references the extended reference can carry copies beside: an
 * array of plain references (parts: [7, 8]) or a reference inside array
 * elements (parts.id), never documents denormalize would take for its own
 * {id, ...} elements. */
static bool
extref_array (const rm_analysis_t *a, const rm_relation_t *r)
{
    const rm_field_t *f = &a->cols[r->from].fields[r->field];
    return f->in_array || (f->arrays && !f->elem_docs && !strchr (f->path, '.'));
}

/* Why an embed keeps its source (keepSource): how many children have
 * more than one parent, and, weighed, what else would do. keepSource
 * loses nothing whatever the count; but when one child in a thousand is
 * shared, keeping all of them for its sake is a choice a user should see:
 * the few could be copied into each parent instead, or all referenced. */
static void
shared_why_of (const rm_analysis_t *a, const rm_relation_t *r, char *out, size_t len)
{
    const rm_collection_t *cc = &a->cols[r->child_refs ? r->to : r->from];
    const rm_field_t *k = &a->cols[r->to].fields[r->key];
    uint64_t dups = k->values - k->distinct, odd = r->shared + dups;
    size_t l = 0;
    l += (size_t) snprintf (out + l, len - l, "; ");
    if (r->shared)
        l += (size_t) snprintf (out + l, len - l, "%llu of %s's %llu documents referenced by more "
                                "than one parent", (unsigned long long) r->shared, cc->ns,
                                (unsigned long long) cc->docs);
    if (dups && l < len)
        l += (size_t) snprintf (out + l, len - l, "%s%llu key(s) of %s.%s held by more than one "
                                "document (duplicateKey)", r->shared ? ", and " : "",
                                (unsigned long long) dups, a->cols[r->to].ns, k->path);
    if (l >= len)
        return;
    if (odd * 100 <= cc->docs)
        snprintf (out + l, len - l, ": for %s, keepSource keeps all %llu in %s besides the copies "
                  "embedded; weighed: so few that the alternatives are to duplicate %s (each parent "
                  "embeds its own copy, %s is dropped, and %s copies must be kept in step), or to "
                  "keep referencing them if they are read or updated on their own; the plan keeps "
                  "the source, which loses nothing either way", odd > 1 ? "those" : "that one",
                  (unsigned long long) cc->docs, cc->ns, odd > 1 ? "those" : "the one", cc->ns,
                  odd > 1 ? "their" : "its");
    else
        snprintf (out + l, len - l, ": children shared by several parents stay in their collection "
                  "too (keepSource); weighed: so many that duplicating them would copy each into "
                  "several parents, to be kept in step; keep referencing them if they are updated "
                  "on their own");
}

/* The class's pattern for one relationship (lead: a line of why, the
 * ownership's, to add; NULL none), with its step. */
static void
recommend_class (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *op, const char *lead)
{
    const rm_collection_t *from = &a->cols[r->from], *to = &a->cols[r->to];
    rm_class_t cls = rm_class_of (&r->children);
    uint64_t p99 = rm_dist_quantile (&r->children, 0.99);
    uint64_t max_items = outlier_max_items (p99);
    const char *child = r->child_refs ? to->ns : from->ns;
    const char *parent = r->child_refs ? from->ns : to->ns;
    const char *pattern, *rule;
    char why[2400], name[600], depends[300], shared_why[800];
    bson_t step, body;
    char as[300];
    bool has_step = true;
    double ratio = 0;
    bool has_ratio = rm_hints_ratio (a->hints, parent, &ratio);
    /* A parent key seen twice gives a child two parents. */
    bool one_parent = !r->shared && to->fields[r->key].values == to->fields[r->key].distinct;

    if (!one_parent)
        shared_why_of (a, r, shared_why, sizeof shared_why);
    else
        shared_why[0] = '\0';
    snprintf (name, sizeof name, "%s.%s -> %s.%s", from->ns, from->fields[r->field].path,
              to->ns, to->fields[r->key].path);
    if (r->children.max > RM_ANALYZE_MANY && p99 <= RM_ANALYZE_MANY) {
        /* The typical parent is within what embedding takes, a few are
         * far past it: embedding everything would follow the few. */
        const rm_collection_t *pc = r->child_refs ? from : to;
        const char *as_name = r->child_refs ? from->fields[r->field].path : from->coll;
        pattern = "outlier";
        rule = RM_SRC_GUIDE ", the outlier pattern: handle the rare case where a "
               "document would grow unbounded by splitting overflow to a separate collection; "
               RM_SRC_RULES ", rule 4: more than a couple of hundred "
               "documents on the many side, don't embed them";
        snprintf (why, sizeof why, "%s: %s by the p99 (p50 %llu, p99 %llu children per parent), "
                  "but the largest parent has %llu, past rule 4's couple of hundred: each parent "
                  "in %s keeps up to %llu of %s's documents (the p99 rounded up to ten), and the "
                  "%llu parent(s) with more get hasExtra%c%s and page the rest into "
                  "%s.%s_%s_overflow%s", name, rm_class_name (cls),
                  (unsigned long long) rm_dist_quantile (&r->children, 0.5),
                  (unsigned long long) p99, (unsigned long long) r->children.max, parent,
                  (unsigned long long) max_items, child,
                  (unsigned long long) parents_above (&r->children, max_items),
                  toupper ((unsigned char) as_name[0]), as_name + 1, pc->db, pc->coll, as_name,
                  shared_why);
    } else if (cls <= RM_CLASS_ONE_TO_FEW ||
               (cls == RM_CLASS_ONE_TO_MANY && (!r->child_refs || !r->shared))) {
        /* Up to a couple of hundred children, embed (docs/analyze.md,
         * "Thresholds"): one-to-few and one-to-many alike. */
        pattern = "embed";
        rule = cls <= RM_CLASS_ONE_TO_FEW
                   ? RM_SRC_ZOLA ", one-to-few: embed; " RM_SRC_RULES ", "
                     "rule 1: favor embedding unless there is a compelling reason not to"
                   : RM_SRC_RULES ", rule 1: favor embedding unless there is a compelling "
                     "reason not to; rule 4: more than a couple of hundred documents on the "
                     "many side, don't embed them (so up to that, embed)";
        snprintf (why, sizeof why, "%s: %s children per parent (p99 %llu, max %llu, within a "
                  "couple of hundred), so %s's documents go into %s's%s", name,
                  rm_class_name (cls), (unsigned long long) p99,
                  (unsigned long long) r->children.max, child, parent, shared_why);
    } else if (cls == RM_CLASS_ONE_TO_SQUILLIONS && !r->child_refs) {
        pattern = "computed summary";
        rule = RM_SRC_ZOLA ", one-to-squillions: keep the parent reference; the "
               "computed pattern for what the parent shows of them";
        snprintf (why, sizeof why, "%s: one-to-squillions (p99 %llu, max %llu children per "
                  "parent), past a couple of hundred: keep referencing from %s, and keep a "
                  "count of them in %s (the computed pattern; the newest few embedded, the "
                  "subset pattern, if %s shows them)", name,
                  (unsigned long long) p99, (unsigned long long) r->children.max, child, parent,
                  parent);
    } else {
        pattern = "keep referencing";
        rule = RM_SRC_RULES ", rule 4: more than a few thousand "
               "references is too many for an array; a couple of hundred embedded too many";
        snprintf (why, sizeof why, "%s: %s held as an array of references (p99 %llu, max %llu): "
                  "past what embedding takes, within what an array of references does", name,
                  rm_class_name (cls), (unsigned long long) p99,
                  (unsigned long long) r->children.max);
        has_step = false;
    }
    if (lead) {
        size_t l = strlen (why);
        snprintf (why + l, sizeof why - l, "; %s", lead);
    }
    /* What the hints settle. */
    {
        const bson_t *h = a->hints;
        bool alone = rm_hints_lists (h, "readAlone", child) || rm_hints_lists (h, "updatedAlone", child);
        bool together = rm_hints_together (h, parent, child);
        size_t l = strlen (why);
        depends[0] = '\0';
        if ((!strcmp (pattern, "embed") || !strcmp (pattern, "outlier")) && alone) {
            pattern = "keep referencing";
            rule = RM_SRC_RULES ", rule 2: needing to access an object on "
                   "its own is a compelling reason not to embed it";
            snprintf (why + l, sizeof why - l, "; but the hints say %s is read or updated on its "
                      "own, so it keeps its collection and %s keeps referencing it", child, parent);
            has_step = false;
        } else if (!strcmp (pattern, "computed summary") && has_ratio && ratio < 1) {
            pattern = "keep referencing";
            rule = RM_SRC_ZOLA ", rule five: consider the read-to-write ratio with "
                   "denormalization";
            snprintf (why + l, sizeof why - l, "; but the hints give %s a read-to-write ratio of "
                      "%g: a count kept in it would be rewritten more often than read", parent, ratio);
            has_step = false;
        }
        if (alone || together || has_ratio)
            snprintf (depends, sizeof depends, "settled by the hints:%s%s%s%s%s",
                      together ? " read together" : "", together && (alone || has_ratio) ? ";" : "",
                      alone ? " the children are read or updated on their own" : "",
                      alone && has_ratio ? ";" : "", has_ratio ? " the parent's read-to-write ratio" : "");
    }
    rm_rec_append (op, name, NULL, NULL, pattern, why, rule,
                   depends[0] ? depends
                              : "whether the children are read or updated on their own, and "
                                "the read-to-write ratio: a dump cannot show them (--hints says)");
    if (has_step && !strcmp (pattern, "computed summary") &&
        rm_rec_step_begin (op, "summarize", &step, &body)) {
        bson_t fields, cnt, empty;
        char n[300];
        append_join (&body, a, r, as, sizeof as);
        snprintf (n, sizeof n, "%s_count", as);
        BSON_APPEND_DOCUMENT_BEGIN (&body, "fields", &fields);
        BSON_APPEND_DOCUMENT_BEGIN (&fields, n, &cnt);
        BSON_APPEND_DOCUMENT_BEGIN (&cnt, "$count", &empty);
        bson_append_document_end (&cnt, &empty);
        bson_append_document_end (&fields, &cnt);
        bson_append_document_end (&body, &fields);
        rm_rec_step_end (op, &step, &body, why);
    } else if (has_step && rm_rec_step_begin (op, "embed", &step, &body)) {
        append_join (&body, a, r, as, sizeof as);
        BSON_APPEND_UTF8 (&body, "as", as);
        if (!strcmp (pattern, "subset with count")) {
            const char *d = date_field (&a->cols[r->child_refs ? r->to : r->from]);
            char n[300];
            if (d) {
                bson_t sort;
                BSON_APPEND_DOCUMENT_BEGIN (&body, "sort", &sort);
                BSON_APPEND_INT32 (&sort, d, -1);
                bson_append_document_end (&body, &sort);
            }
            BSON_APPEND_INT32 (&body, "limit", RM_ANALYZE_FEW);
            snprintf (n, sizeof n, "%s_count", as);
            BSON_APPEND_UTF8 (&body, "countAs", n);
            BSON_APPEND_BOOL (&body, "keepSource", true);
        } else {
            if (!strcmp (pattern, "outlier")) {
                BSON_APPEND_INT32 (&body, "maxItems", (int32_t) max_items);
                BSON_APPEND_UTF8 (&body, "onOverflow", "outlier");
            }
            if (!one_parent)
                BSON_APPEND_BOOL (&body, "keepSource", true);
        }
        rm_rec_step_end (op, &step, &body, why);
    }
    /* Children that stay in their collection may carry a copy of what
     * identifies their parent, and references that stay references a
     * copy of what identifies their child (rule five permitting). One
     * step a relationship in the plan: two would both act on it (a
     * subset of the children embedded, and the parent copied into the
     * same children), and the plan's check judges steps one by one, not
     * what a pair of them make; the class's pattern ranks first. */
    if (strcmp (pattern, "embed") && strcmp (pattern, "outlier") &&
        (!r->child_refs || extref_array (a, r)))
        rm_recommend_extref (a, r, op, has_step ? pattern : NULL, NULL);
}

/* Steps that read a child come before an owner's embed takes it out of
 * its collection (the plan's check: nothing reads what an earlier step
 * took): the extended references toward the other parents and the
 * lookups, the arrays of the joins; then the class's patterns. */
static bool
reads_first (rm_role_t role)
{
    return role == RM_ROLE_REFERENCED || role == RM_ROLE_LOOKUP || role == RM_ROLE_JOIN;
}

/* A join by its shape whose other references are only possible: its rows
 * stay where they are (embedded into this side, the other side's pairs
 * would be lost to it), and the hints that would make it a join. */
static void
keep_join (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *o)
{
    const rm_collection_t *f = &a->cols[r->from], *t = &a->cols[r->to];
    char name[600], why[2400];
    size_t l;
    snprintf (name, sizeof name, "%s.%s -> %s.%s", f->ns, f->fields[r->field].path, t->ns,
              t->fields[r->key].path);
    l = (size_t) snprintf (why, sizeof why, "%s: %s holds nothing but _id and references to two "
                           "or more collections, and nothing references it: a join collection by "
                           "its shape (a many-to-many), whose rows are embedded into neither side; "
                           "confirm its other references with --hints", name, f->ns);
    for (size_t i = 0; i < a->n_rels && l < sizeof why; i++) {
        const rm_relation_t *x = &a->rels[i];
        if (x->from == r->from && !RM_REL_ACTS (x))
            l += (size_t) snprintf (why + l, sizeof why - l, " {\"references\": {\"%s.%s\": \"%s.%s\"}}",
                                    f->ns, f->fields[x->field].path, a->cols[x->to].ns,
                                    a->cols[x->to].fields[x->key].path);
    }
    /* A field only rejected candidates measured: its first, once. */
    for (size_t i = 0; i < a->n_rejected && l < sizeof why; i++) {
        const rm_pair_t *x = &a->rejected[i].pair;
        bool seen = false;
        for (size_t k = 0; k < a->n_rels; k++)
            seen |= a->rels[k].from == x->from && a->rels[k].field == x->field;
        for (size_t k = 0; k < i; k++)
            seen |= a->rejected[k].pair.from == x->from && a->rejected[k].pair.field == x->field;
        if (x->from == r->from && !seen)
            l += (size_t) snprintf (why + l, sizeof why - l, " {\"references\": {\"%s.%s\": \"%s.%s\"}} "
                                    "(or the collection it references)", f->ns,
                                    f->fields[x->field].path, a->cols[x->to].ns,
                                    a->cols[x->to].fields[x->key].path);
    }
    rm_rec_append (o, name, NULL, NULL, "keep referencing", why,
                   RM_SRC_GUIDE ", Many-to-Many: arrays of references on one or both sides, "
                   "never the pairs embedded into one",
                   "whether the possible references are references: the hints settle it");
}

void
rm_analysis_recommend (const rm_analysis_t *a, bson_t *recs, bson_t *steps)
{
    rm_recout_t o = {recs, steps, 0, 0, 0, a->plan_skip, a->n_plan_steps};
    char lead[2000];
    /* Types first: every later step then copies typed values. */
    rm_recommend_types (a, &o);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < a->n_rels; i++) {
            const rm_relation_t *r = &a->rels[i];
            rm_role_t role;
            if (!RM_REL_ACTS (r))
                continue; /* possible: reported with what would confirm it, no more */
            role = rm_role_of (a, i, lead, sizeof lead);
            if ((pass == 0) != reads_first (role))
                continue;
            if (role == RM_ROLE_JOIN) {
                size_t rels[RM_JOIN_MAX];
                if (rm_join_rels (a, r->from, rels, RM_JOIN_MAX) && rels[0] == i)
                    rm_recommend_join (a, r->from, &o);
            } else if (role == RM_ROLE_TREE) {
                rm_recommend_tree (a, r, &o);
            } else if (role == RM_ROLE_REFERENCED || role == RM_ROLE_LOOKUP) {
                if (!rm_recommend_extref (a, r, &o, NULL, lead)) {
                    const rm_collection_t *f = &a->cols[r->from], *t = &a->cols[r->to];
                    char name[600], why[2400];
                    snprintf (name, sizeof name, "%s.%s -> %s.%s", f->ns, f->fields[r->field].path,
                              t->ns, t->fields[r->key].path);
                    snprintf (why, sizeof why, "%s: %s; %s has no field that identifies a "
                              "document to copy, so the reference stays as it is", name, lead, t->ns);
                    rm_rec_append (&o, name, NULL, NULL, "keep referencing", why,
                                   RM_SRC_ZOLA ", one-to-squillions and denormalization: the "
                                   "child keeps a reference to the one side",
                                   "whether the children are read with the parent: a dump cannot "
                                   "show it");
                }
            } else if (!r->child_refs && rm_join_shaped (a, r->from)) {
                keep_join (a, r, &o);
            } else {
                recommend_class (a, r, &o, role == RM_ROLE_OWNER ? lead : NULL);
            }
        }
    rm_recommend_collections (a, &o);
}
