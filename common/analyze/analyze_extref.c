/* The extended reference (analyze_patterns.h): children that stay in their
 * own collection and reference their parent carry a copy of the few fields
 * that identify it, so that a child is shown without a $lookup of its
 * parent (rules-of-thumb-part1.txt, "database denormalization from one to
 * many": the product's name in each part). The fields are chosen from the
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

void
rm_recommend_extref (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *o)
{
    const rm_collection_t *child = &a->cols[r->from], *parent = &a->cols[r->to];
    const rm_field_t *key = &parent->fields[r->key];
    const char *local = child->fields[r->field].path;
    const char *leaf = strrchr (local, '.') ? strrchr (local, '.') + 1 : local;
    size_t prefix_len = (size_t) (leaf - local), base_len = strlen (leaf);
    const rm_field_t *chosen[EXTREF_MAX_FIELDS];
    char targets[EXTREF_MAX_FIELDS][300];
    char name[600], why[1600], depends[600], list[700] = "", numbers[700] = "";
    size_t n = 0;
    bool alone = rm_hints_lists (a->hints, "readAlone", child->ns) ||
                 rm_hints_lists (a->hints, "updatedAlone", child->ns);
    double ratio = 0;
    bool has_ratio = rm_hints_ratio (a->hints, parent->ns, &ratio);
    bson_t step, body, fields;

    /* The copies are named after the reference: post_id -> post_title. */
    if (base_len > 3 && !strcmp (leaf + base_len - 3, "_id"))
        base_len -= 3;
    else if (base_len > 2 && (!strcmp (leaf + base_len - 2, "Id") || !strcmp (leaf + base_len - 2, "ID")))
        base_len -= 2;
    for (size_t i = 0; i < parent->n_fields && n < EXTREF_MAX_FIELDS; i++) {
        const rm_field_t *f = &parent->fields[i];
        if (!identifies (parent, f, key))
            continue;
        snprintf (targets[n], sizeof targets[n], "%.*s_%s", (int) base_len, leaf, f->path);
        if (child_has (child, local, prefix_len, targets[n]))
            continue;
        chosen[n++] = f;
    }
    if (!n)
        return;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen (list), m = strlen (numbers);
        snprintf (list + l, sizeof list - l, "%s\"%s\"", i ? ", " : "", chosen[i]->path);
        snprintf (numbers + m, sizeof numbers - m, "%s\"%s\" (a string in %llu of %llu, %llu distinct) "
                  "as \"%s\"", i ? ", " : "", chosen[i]->path,
                  (unsigned long long) chosen[i]->types[BSON_TYPE_UTF8],
                  (unsigned long long) parent->docs, (unsigned long long) chosen[i]->distinct,
                  targets[i]);
    }
    snprintf (name, sizeof name, "%s.%s -> %s.%s", child->ns, local, parent->ns, key->path);
    snprintf (why, sizeof why, "%s: the children stay in %s, and showing one with its parent takes "
              "a lookup in %s; the fields that identify a parent, nearly one value each, are copied "
              "into each child: %s", name, child->ns, parent->ns, numbers);
    if (alone || has_ratio)
        snprintf (depends, sizeof depends, "settled by the hints:%s%s%s; still open: whether %s "
                  "rarely change%s (a dump cannot show it)",
                  alone ? " the children are read or updated on their own" : "",
                  alone && has_ratio ? ";" : "",
                  has_ratio ? " the parent's read-to-write ratio" : "", list, n > 1 ? "" : "s");
    else
        snprintf (depends, sizeof depends, "whether %s rarely change%s and the children are read "
                  "without their parent: a dump cannot show them (--hints says what is read alone)",
                  list, n > 1 ? "" : "s");
    rm_rec_append (o, name, NULL, NULL, "extended reference", why,
                   "rules-of-thumb-part1.txt, database denormalization from one to many (the "
                   "product's name in each part) and rule five: a field that will mostly be read "
                   "and only seldom updated is a good candidate for denormalization",
                   depends);
    if (!rm_rec_step_begin (o, "denormalize", &step, &body))
        return;
    BSON_APPEND_UTF8 (&body, "in", child->ns);
    BSON_APPEND_UTF8 (&body, "from", parent->ns);
    BSON_APPEND_UTF8 (&body, "localField", local);
    BSON_APPEND_UTF8 (&body, "foreignField", key->path);
    BSON_APPEND_DOCUMENT_BEGIN (&body, "fields", &fields);
    for (size_t i = 0; i < n; i++)
        BSON_APPEND_UTF8 (&fields, targets[i], chosen[i]->path);
    bson_append_document_end (&body, &fields);
    rm_rec_step_end (o, &step, &body, why);
}
