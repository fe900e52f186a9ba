/* The recommendations and the plan's steps as they are written
 * (analyze_patterns.h, rm_recout_t), by every recommender: apart from
 * analyze_recommend.c, which calls the others (analyze_extref.c,
 * analyze_recommend_coll.c), so that they call down to this file and
 * never back up to it. */
#include <stdio.h>

#include "analyze_patterns.h"

void
rm_rec_append (rm_recout_t *o, const char *name, const char *ns, const char *field,
               const char *pattern, const char *why, const char *rule, const char *depends)
{
    char key[16];
    bson_t rec;
    snprintf (key, sizeof key, "%u", o->n_recs++);
    BSON_APPEND_DOCUMENT_BEGIN (o->recs, key, &rec);
    BSON_APPEND_UTF8 (&rec, "relationship", name);
    if (ns)
        BSON_APPEND_UTF8 (&rec, "ns", ns);
    if (field)
        BSON_APPEND_UTF8 (&rec, "field", field);
    BSON_APPEND_UTF8 (&rec, "pattern", pattern);
    BSON_APPEND_UTF8 (&rec, "why", why);
    BSON_APPEND_UTF8 (&rec, "rule", rule);
    BSON_APPEND_UTF8 (&rec, "dependsOn", depends);
    bson_append_document_end (o->recs, &rec);
}

bool
rm_rec_step_begin (rm_recout_t *o, const char *op, bson_t *step, bson_t *body)
{
    char key[16];
    uint32_t tried = o->n_tried++;
    if (!o->steps || (o->skip && tried < o->n_skip && o->skip[tried]))
        return false;
    snprintf (key, sizeof key, "%u", o->n_steps++);
    BSON_APPEND_DOCUMENT_BEGIN (o->steps, key, step);
    BSON_APPEND_DOCUMENT_BEGIN (step, op, body);
    return true;
}

void
rm_rec_step_end (rm_recout_t *o, bson_t *step, bson_t *body, const char *why)
{
    BSON_APPEND_UTF8 (body, "why", why);
    bson_append_document_end (step, body);
    bson_append_document_end (o->steps, step);
}
