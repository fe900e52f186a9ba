/* The patterns remodel analyze finds beyond a relationship's class
 * (outlier, extended reference, bucket, extract): what makes a candidate,
 * computed in one place for the checks (analyze_checks.c) and the
 * recommendations (analyze_recommend.c) alike, and how a recommendation
 * and its plan step are written. Internal to common/analyze. */
#ifndef REMODEL_ANALYZE_PATTERNS_H
#define REMODEL_ANALYZE_PATTERNS_H

#include "analyze_int.h"

/* The public articles the rules come from, cited by title (docs/analyze.md,
 * "The rules it applies", says each rule in the project's words). */
#define RM_SRC_ZOLA "\"6 Rules of Thumb for MongoDB Schema Design\" (William Zola)"
#define RM_SRC_GUIDE "\"MongoDB Schema Design Guide | Embed vs Reference, Patterns, and Best " \
                     "Practices\""
#define RM_SRC_HOWTO "\"How To Design a Document Schema in MongoDB\" (Mateusz Papiernik)"
#define RM_SRC_RULES "\"Schema Design\", General Rules for MongoDB Schema Design"

/* The rules behind the bucket and extract patterns, in their checks and
 * their recommendations. */
#define RM_RULE_BUCKET RM_SRC_GUIDE ", the bucket pattern: group time-series " \
                       "data into buckets to reduce document count"
#define RM_RULE_EXTRACT RM_SRC_GUIDE ": entities read or updated on their own " \
                        "are referenced, not embedded"

/* bucketize's default maxCount: the window chosen keeps a bucket within it. */
#define RM_BUCKET_MAX_COUNT 1000

/* A bucket candidate: many small documents with a date and a field naming
 * few series. */
typedef struct {
    const rm_field_t *time, *series;
    const char *granularity; /* the widest window that keeps a bucket within maxCount */
    double interval;         /* a series' average seconds between readings */
    double per_bucket;       /* readings a bucket at that interval */
    bool complete;           /* every document has a date and a series: none would be invalid */
} rm_bucket_cand_t;

/* Whether collection c is a bucket candidate (out filled); a collection in
 * a relationship is not (its relationship's recommendation speaks for it). */
bool rm_bucket_candidate (const rm_analysis_t *a, const rm_collection_t *c, rm_bucket_cand_t *out);
/* Whether field f is an array of objects whose elements carry an _id or id
 * of their own, like entities of their own. */
bool rm_extract_candidate (const rm_field_t *f);

/* The recommendations being written (an array) and, for --plan-out, the
 * steps (a plan's "steps" array; NULL: none asked). */
typedef struct {
    bson_t *recs, *steps;
    uint32_t n_recs, n_steps;
    uint32_t n_tried;       /* steps recommended, those the plan's check left out too */
    const bool *skip;       /* by that number: left out of the plan (NULL: none) */
    size_t n_skip;
} rm_recout_t;

/* analyze_recout.c. Appends one recommendation: name is the relationship,
 * or the collection or array it is about (then ns, and field when an
 * array, say which). */
void rm_rec_append (rm_recout_t *o, const char *name, const char *ns, const char *field,
                    const char *pattern, const char *why, const char *rule, const char *depends);
/* Opens the step {op: {...}} (false when no plan is asked, or when the
 * plan's check left this step out: analyze_plancheck.c); rm_rec_step_end
 * appends its "why" and closes it. */
bool rm_rec_step_begin (rm_recout_t *o, const char *op, bson_t *step, bson_t *body);
void rm_rec_step_end (rm_recout_t *o, bson_t *step, bson_t *body, const char *why);

/* analyze_extref.c: the extended reference of a parent reference whose
 * children stay in their own collection (the parent's identifying fields
 * copied into them), when the parent has such fields. ranked_first: the
 * relationship's own pattern (ranked_first names it) makes a step, so the
 * extended reference stays in the report as the alternative and makes
 * none (NULL: it is the relationship's step). */
void rm_recommend_extref (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *o,
                          const char *ranked_first);
/* analyze_recommend_coll.c: the bucket and extract recommendations, per
 * collection. */
void rm_recommend_collections (const rm_analysis_t *a, rm_recout_t *o);

#endif
