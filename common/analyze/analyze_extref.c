/* The extended reference (analyze_patterns.h): children that stay in their
 * own collection and reference their parent carry a copy of the few fields
 * that identify it, so that a child is shown without a $lookup of its
 * parent (rules-of-thumb-part1.txt, "database denormalization from one to
 * many": the product's name in each part); and an array of references
 * kept as references carries the children's (from many to one: the
 * part's name in the product's parts[]). The fields are chosen from the
 * parent's statistics: top-level strings in nearly every document, values
 * a key could hold (not long text), nearly one distinct value a parent. */
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

#define EXTREF_MAX_FIELDS 2

/* Whether the children already have a field at path (the reference's
 * prefix, then name): a copy would overwrite it. */
static bool
child_has (const rm_collection_t *c, const char *prefix, size_t prefix_len, const char *name)
{
    for (size_t i = 0; i < c->n_fields; i++) {
        const char *p = c->fields[i].path;
        if (!strncmp (p, prefix, prefix_len) && !strcmp (p + prefix_len, name))
            return true;
    }
    return false;
}

/* A parent's field that identifies it: a string in 95% of its documents,
 * never long text, with a distinct value for 90% of them. */
static bool
identifies (const rm_collection_t *p, const rm_field_t *f, const rm_field_t *key)
{
    return f != key && strcmp (f->path, "_id") && !strchr (f->path, '.') && !f->in_array &&
           !f->arrays && !f->not_key && f->values > 0 &&
           f->types[BSON_TYPE_UTF8] * 100 >= p->docs * 95 && f->distinct * 10 >= p->docs * 9;
}

/* Where the copies go and what they are named. A parent reference from
 * the many side: beside the reference, named after it (post_id ->
 * post_title; rules-of-thumb-part1.txt, "database denormalization from one
 * to many"). Child references: each reference of the array becomes
 * {id, <fields>} (the part's name in the product's parts[]: "from many to
 * one"), the copies named as in the child; for a reference inside array
 * elements (parts.id) they join the element. */
typedef struct {
    const rm_collection_t *holder, *source; /* gets the copies; is referenced */
    const char *local;      /* the reference's path in holder */
    char prefix[300];       /* holder's path the copies go under ("" or "parts.") */
    size_t base_len;        /* parentRef: the reference's name less _id, to name copies */
    const char *leaf;
    bool many_to_one;
} place_t;

static void
place_of (const rm_analysis_t *a, const rm_relation_t *r, place_t *pl)
{
    const char *dot;
    memset (pl, 0, sizeof *pl);
    pl->holder = &a->cols[r->from];
    pl->source = &a->cols[r->to];
    pl->local = pl->holder->fields[r->field].path;
    pl->many_to_one = r->child_refs;
    dot = strrchr (pl->local, '.');
    pl->leaf = dot ? dot + 1 : pl->local;
    if (pl->many_to_one && !pl->holder->fields[r->field].in_array)
        snprintf (pl->prefix, sizeof pl->prefix, "%s.", pl->local); /* parts: [7, 8] */
    else
        snprintf (pl->prefix, sizeof pl->prefix, "%.*s", (int) (pl->leaf - pl->local), pl->local);
    pl->base_len = strlen (pl->leaf);
    if (pl->base_len > 3 && !strcmp (pl->leaf + pl->base_len - 3, "_id"))
        pl->base_len -= 3;
    else if (pl->base_len > 2 &&
             (!strcmp (pl->leaf + pl->base_len - 2, "Id") || !strcmp (pl->leaf + pl->base_len - 2, "ID")))
        pl->base_len -= 2;
}

bool
rm_recommend_extref (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *o,
                     const char *ranked_first, const char *lead)
{
    place_t pl;
    const rm_field_t *key = &a->cols[r->to].fields[r->key];
    const rm_field_t *chosen[EXTREF_MAX_FIELDS];
    char targets[EXTREF_MAX_FIELDS][300];
    char name[600], why[2400], depends[600], list[700] = "", numbers[700] = "";
    size_t n = 0;
    bool alone, has_ratio;
    double ratio = 0;
    bson_t step, body, fields;

    place_of (a, r, &pl);
    /* The children read on their own: a parent reference's holder; the
     * hints of a child-reference array name the children, whose copies
     * the parents hold. */
    alone = rm_hints_lists (a->hints, "readAlone", pl.holder->ns) ||
            rm_hints_lists (a->hints, "updatedAlone", pl.holder->ns);
    has_ratio = rm_hints_ratio (a->hints, pl.source->ns, &ratio);
    /* Rule five: copies of a side written more often than read would be
     * rewritten more often than they save a lookup. */
    if (has_ratio && ratio < 1)
        return false;
    for (size_t i = 0; i < pl.source->n_fields && n < EXTREF_MAX_FIELDS; i++) {
        const rm_field_t *f = &pl.source->fields[i];
        if (!identifies (pl.source, f, key))
            continue;
        if (pl.many_to_one) {
            /* "id" is the reference itself in {id, ...}. */
            if (!strcmp (f->path, "id"))
                continue;
            snprintf (targets[n], sizeof targets[n], "%s", f->path);
        } else {
            snprintf (targets[n], sizeof targets[n], "%.*s_%s", (int) pl.base_len, pl.leaf, f->path);
        }
        if (child_has (pl.holder, pl.prefix, strlen (pl.prefix), targets[n]))
            continue;
        chosen[n++] = f;
    }
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen (list), m = strlen (numbers);
        snprintf (list + l, sizeof list - l, "%s\"%s\"", i ? ", " : "", chosen[i]->path);
        snprintf (numbers + m, sizeof numbers - m, "%s\"%s\" (a string in %llu of %llu, %llu distinct) "
                  "as \"%s%s\"", i ? ", " : "", chosen[i]->path,
                  (unsigned long long) chosen[i]->types[BSON_TYPE_UTF8],
                  (unsigned long long) pl.source->docs, (unsigned long long) chosen[i]->distinct,
                  pl.prefix, targets[i]);
    }
    snprintf (name, sizeof name, "%s.%s -> %s.%s", pl.holder->ns, pl.local, pl.source->ns, key->path);
    if (pl.many_to_one)
        snprintf (why, sizeof why, "%s: the references stay in %s, and showing a parent with its "
                  "children takes a lookup in %s; each reference becomes {id, ...} with copies of "
                  "the fields that identify a child, nearly one value each: %s", name,
                  pl.holder->ns, pl.source->ns, numbers);
    else
        snprintf (why, sizeof why, "%s: the children stay in %s, and showing one with its parent "
                  "takes a lookup in %s; the fields that identify a parent, nearly one value each, "
                  "are copied into each child: %s", name, pl.holder->ns, pl.source->ns, numbers);
    if (alone || has_ratio)
        snprintf (depends, sizeof depends, "settled by the hints:%s%s%s; still open: whether %s "
                  "rarely change%s (a dump cannot show it)",
                  alone ? " the children are read or updated on their own" : "",
                  alone && has_ratio ? ";" : "",
                  has_ratio ? " the copied side's read-to-write ratio" : "", list, n > 1 ? "" : "s");
    else
        snprintf (depends, sizeof depends, "whether %s rarely change%s and %s is read without "
                  "%s: a dump cannot show them (--hints says what is read alone)", list,
                  n > 1 ? "" : "s", pl.holder->ns, pl.source->ns);
    if (lead) {
        size_t l = strlen (why);
        snprintf (why + l, sizeof why - l, "; %s", lead);
    }
    if (ranked_first) {
        size_t l = strlen (why);
        snprintf (why + l, sizeof why - l, "; an alternative, not in the plan: the plan takes one "
                  "step a relationship, and its %s step ranks first", ranked_first);
    }
    rm_rec_append (o, name, NULL, NULL, "extended reference", why,
                   pl.many_to_one
                       ? RM_SRC_ZOLA ", database denormalization from many to one (the "
                         "part's name in the product's parts[]) and rule five: a field that will "
                         "mostly be read and only seldom updated is a good candidate for "
                         "denormalization"
                       : RM_SRC_ZOLA ", database denormalization from one to many (the "
                         "product's name in each part) and rule five: a field that will mostly be "
                         "read and only seldom updated is a good candidate for denormalization",
                   depends);
    if (ranked_first || !rm_rec_step_begin (o, "denormalize", &step, &body))
        return true;
    BSON_APPEND_UTF8 (&body, "in", pl.holder->ns);
    BSON_APPEND_UTF8 (&body, "from", pl.source->ns);
    BSON_APPEND_UTF8 (&body, "localField", pl.local);
    BSON_APPEND_UTF8 (&body, "foreignField", key->path);
    BSON_APPEND_DOCUMENT_BEGIN (&body, "fields", &fields);
    for (size_t i = 0; i < n; i++)
        BSON_APPEND_UTF8 (&fields, targets[i], chosen[i]->path);
    bson_append_document_end (&body, &fields);
    rm_rec_step_end (o, &step, &body, why);
    return true;
}
