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
/* The fewest readings a bucket of the widest window must average (a
 * handful) for the collection to be a bucket candidate. */
#define RM_BUCKET_MIN_READINGS 5

/* A bucket candidate: many small documents with a date and a field naming
 * few series, or readings of one series (series NULL: a date and a
 * number or two, nothing else to name a series by). */
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
bool rm_recommend_extref (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *o,
                          const char *ranked_first, const char *lead);
/* lead (NULL: none) is a sentence added to the why (who owns the child);
 * false when it recommends nothing (no identifying field, or rule five). */
/* analyze_roles.c: what a relational import's collections are to each
 * other (docs/analyze.md "Relational imports"). A lookup: a small
 * collection of few fields others reference (nation, region, a media
 * type): copied into its referrers, never their owner. */
bool rm_is_lookup (const rm_analysis_t *a, size_t col);
/* A join collection: its acting parent references to two or more other
 * collections (their indexes into rels, at most max; the count returned,
 * 0 when col is none) and at most RM_JOIN_OTHER_FIELDS other fields. */
#define RM_JOIN_OTHER_FIELDS 3
#define RM_JOIN_MAX 8
size_t rm_join_rels (const rm_analysis_t *a, size_t col, size_t *rels, size_t max);
/* Whether col holds nothing but _id and references to two or more other
 * collections (confident or possible), and nothing references it: a join
 * by its shape, whose rows no embed takes into one side even while a
 * reference is only possible. */
bool rm_join_shaped (const rm_analysis_t *a, size_t col);
/* The relationship by which a collection referencing several parents is
 * owned (SIZE_MAX: none, or a single parent), why saying in one line why
 * it and not the others. */
size_t rm_owner_rel (const rm_analysis_t *a, size_t col, char *why, size_t len);
/* What a relationship is in the design: its role and a line of why. */
typedef enum {
    RM_ROLE_PLAIN,      /* the class's pattern */
    RM_ROLE_OWNER,      /* owns a child that references others too */
    RM_ROLE_REFERENCED, /* the child has another owner: an extended reference */
    RM_ROLE_LOOKUP,     /* the parent is a lookup: copied into the child */
    RM_ROLE_JOIN,       /* one side of a join collection (many-to-many) */
    RM_ROLE_TREE        /* a reference to its own collection: a hierarchy */
} rm_role_t;
rm_role_t rm_role_of (const rm_analysis_t *a, size_t rel, char *why, size_t len);
const char *rm_role_name (rm_role_t r);
/* The report's own kinds (--json): ownership[], joins[], hierarchies[],
 * ties[], sameValues[], each an array of {.., "why"} (appended to out, a
 * document). */
void rm_analysis_roles (const rm_analysis_t *a, bson_t *out);
/* analyze_types.c: the fields a relational import typed wrong (dates,
 * numbers, flags held as strings; flags as 0/1), the report's types[]
 * (appended to arr), and their recommendation with its set step. */
void rm_analysis_types (const rm_analysis_t *a, bson_t *arr);
void rm_recommend_types (const rm_analysis_t *a, rm_recout_t *o);
/* analyze_recommend_rel.c: the many-to-many of a join collection and the
 * tree of a hierarchy, recommended with their steps. */
void rm_recommend_join (const rm_analysis_t *a, size_t col, rm_recout_t *o);
void rm_recommend_tree (const rm_analysis_t *a, const rm_relation_t *r, rm_recout_t *o);

/* analyze_recommend_coll.c: the bucket and extract recommendations, per
 * collection. */
void rm_recommend_collections (const rm_analysis_t *a, rm_recout_t *o);

#endif
