/* The plan: {"remodel": 1, "steps": [{"<op>": {...}}, ...]}, a JSON file
 * whose literal values are MongoDB Extended JSON. It is parsed and checked
 * completely before any data is read. */
#ifndef REMODEL_PLAN_H
#define REMODEL_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/datetrunc.h"
#include "remodel/docpath.h"
#include "remodel/dump.h"
#include "remodel/expr.h"
#include "remodel/query.h"

typedef enum {
    RM_STEP_EMBED,
    RM_STEP_EXTRACT,
    RM_STEP_SET,
    RM_STEP_UNSET,
    RM_STEP_RENAME,
    RM_STEP_VERSION,
    RM_STEP_DENORMALIZE,
    RM_STEP_SUMMARIZE,
    RM_STEP_BUCKETIZE,
    RM_STEP_UNBUCKETIZE,
    RM_STEP_COPY,
    RM_STEP_MOVE,
    RM_STEP_DELETE,
    RM_STEP_REKEY,
#ifdef REMODEL_TOY_STEP
    RM_STEP_TOY, /* the test build's only: tests/toy/ (HACKING.md) */
#endif
    RM_STEP_N_KINDS
} rm_step_kind_t;

/* "db.collection", split at the first dot. */
typedef struct {
    char *db;
    char *coll;
    char *text;
} rm_nsref_t;

typedef struct {
    rm_path_t path;
    int dir; /* 1 or -1 */
} rm_sortkey_t;

typedef struct {
    rm_sortkey_t *keys;
    size_t n;
} rm_sortspec_t;

typedef enum { RM_OVERFLOW_ERROR, RM_OVERFLOW_OUTLIER } rm_overflow_t;
typedef enum { RM_STYLE_PARENT_REF, RM_STYLE_CHILD_REFS, RM_STYLE_BOTH } rm_style_t;

/* One key of embed's project, read as $project reads it: 1/true (any
 * number but zero) includes, 0/false excludes, anything else is an
 * expression over the child (a computed field, in an inclusion). */
typedef enum { RM_PROJ_EXCLUDE, RM_PROJ_INCLUDE, RM_PROJ_COMPUTED } rm_proj_kind_t;

typedef struct {
    char *name;             /* a top-level field name */
    rm_proj_kind_t kind;
    rm_expr_t *expr;        /* RM_PROJ_COMPUTED's */
} rm_proj_field_t;

typedef struct {
    rm_nsref_t from, into;
    rm_path_t local, foreign;
    char *as;
    bson_t *project;        /* NULL: whole child documents; as the plan wrote it */
    bool project_inclusive;
    rm_proj_field_t *proj;  /* project's keys, in its order */
    size_t n_proj;
    size_t n_computed;      /* of them, computed fields */
    rm_sortspec_t sort;     /* n == 0: child _id ascending */
    int64_t limit;          /* 0: no limit */
    char *count_as;         /* NULL: no count */
    bool keep_source;
    int64_t max_items;      /* 0: only the 16 MiB document limit */
    rm_overflow_t on_overflow;
    rm_nsref_t overflow_to; /* outlier documents go here */
} rm_embed_t;

typedef struct {
    rm_nsref_t from, to;
    rm_path_t path;
    rm_style_t style;
    char *parent_field;
    char *ordinal_field;    /* NULL: none */
} rm_extract_t;

typedef struct {
    rm_nsref_t in;
    size_t n, cap;        /* cap: room allocated (grown by doubling) */
    rm_path_t *paths;       /* set, unset, rename (from), version (1 path) */
    rm_path_t *to;          /* rename: the new paths */
    bson_value_t *values;   /* version (1 value) */
    rm_raw_value_t *raw;    /* the values as bytes, for the edits */
    bson_t *raw_holder;     /* where those bytes are */
    rm_expr_set_t *set;     /* set: the $set stage its fields make */
    rm_expr_unset_t *unset; /* unset: the $unset stage its paths make */
    bson_t *set_doc;        /* set: "fields" as the plan wrote it (for compile) */
} rm_fields_t;

typedef enum { RM_MISSING_KEEP, RM_MISSING_NULL, RM_MISSING_ERROR } rm_on_missing_t;

typedef struct {
    rm_nsref_t in, from;
    rm_path_t local, foreign;
    size_t n;
    char **targets;         /* field names written into `in` */
    rm_path_t *sources;     /* paths read from the matched `from` document
                             * (n == 0 where exprs[i] computes it instead) */
    rm_expr_t **exprs;      /* per target: an expression over the matched
                             * document, or NULL (a path) */
    size_t n_exprs;         /* of them, expressions */
    bson_t *expr_doc;       /* {target: expression} as the plan wrote them
                             * (for compile) */
    rm_on_missing_t on_missing;
} rm_denorm_t;

typedef struct rm_acc_spec rm_acc_spec_t;

typedef struct {
    rm_nsref_t into, from;
    rm_path_t local, foreign;
    char *as;               /* NULL: the results are top-level fields */
    rm_sortspec_t sort;     /* the order children are fed in ($first, $last) */
    size_t n;
    char **names;
    rm_acc_spec_t **accs;
    bson_t *exprs;          /* "fields" as the plan wrote it (for compile) */
} rm_summarize_t;

/* bucketize's statistics of one measurement field. */
typedef enum { RM_BSTAT_COUNT, RM_BSTAT_MIN, RM_BSTAT_MAX, RM_BSTAT_SUM, RM_BSTAT_AVG } rm_bstat_kind_t;

typedef struct {
    char *field;            /* a top-level field of the measurements, or with
                             * expr the name of the statistics computed */
    size_t n;
    rm_bstat_kind_t *kinds; /* in the order requested */
    rm_expr_t *expr;        /* NULL: the field's values; else this
                             * expression's over each measurement */
    bson_t *expr_doc;       /* {"e": expr} as the plan wrote it */
} rm_bstat_t;

typedef struct {
    rm_nsref_t from, to;
    rm_nsref_t invalid_to;  /* text NULL: onInvalid "error" */
    char *time_field;
    size_t n_meta;
    char **meta;            /* metaField, in its order */
    int64_t span;           /* the window, in seconds (0: calendar) */
    bool calendar;          /* unit given: windows are $dateTrunc's bins */
    rm_dt_bins_t bins;      /* unit, binSize, timezone, startOfWeek */
    char *timezone;         /* as the plan gave it; NULL: UTC */
    char *start_of_week;    /* as the plan gave it; NULL: Sunday */
    int64_t max_count;
    char *as;
    size_t n_stats;
    rm_bstat_t *stats;
    bool keep_source;
} rm_bucketize_t;

/* unbucketize takes the keys of the bucketize it reverses: from (the
 * buckets), to (the readings), timeField, metaField, as; granularity or
 * spanSeconds (span 0: not given) or unit (calendar), maxCount (0: not given) and stats are
 * checked against each bucket; keepSource (default true here: the buckets
 * stay) and onInvalid's namespace, whose set-aside readings come back too. */
typedef rm_bucketize_t rm_unbucketize_t;

/* copy, move, delete (common/engine/step_copy.c): the documents of `from`
 * the step's filter selects, in their order, go to `to` (copy, move: a
 * new or empty namespace), through `fields` (a $set) and then `project`
 * (top-level fields kept or dropped); move and delete take them out of
 * `from`. delete has no `to`, `fields` or `project`. */
typedef struct {
    rm_nsref_t from, to;
    rm_expr_set_t *set;     /* NULL: no fields */
    bson_t *set_doc;        /* "fields" as the plan wrote it (for compile) */
    bson_t *project;        /* NULL: whole documents; as the plan wrote it */
    char **proj;            /* project's field names, in its order */
    size_t n_proj;
    bool project_inclusive; /* proj lists the fields kept (else dropped) */
} rm_copy_t;

/* rekey (common/engine/step_rekey.c): each document of `from`, in order,
 * goes to `to` (a new or empty namespace) with its _id replaced by `id`
 * evaluated over it, `from` left empty unless keepSource; two documents
 * given one _id stop the run, both named. Each reference (a namespace and
 * the path of a key or of an array of keys) is rewritten from the old _id
 * to the new one; onMissing says what becomes of a key no document of
 * `from` had. */
typedef struct {
    rm_nsref_t in;
    rm_path_t path;
} rm_rekey_ref_t;

typedef struct {
    rm_nsref_t from, to;
    rm_expr_t *id;
    bson_t *id_doc;         /* {"id": <the expression as written>}, for messages */
    rm_rekey_ref_t *refs;
    size_t n_refs;
    bool keep_source;       /* from stays as it was */
    bool keep_missing;      /* onMissing "keep": a key with no match stays */
} rm_rekey_t;

#ifdef REMODEL_TOY_STEP
/* tests/toy/step_toy.c: sets `field` of each document of `in` to "toy". */
typedef struct {
    rm_nsref_t in;
    char *field;
} rm_toy_t;
#endif

typedef struct {
    rm_step_kind_t kind;
    size_t index;           /* 1-based, for messages */
    const char *op;
    bool allow_missing;     /* "allowMissing": fields in no document are fine */
    /* "filter": the documents the step changes (field steps: `in`; joins:
     * those that receive the field; extract, bucketize: their source),
     * the others passing through byte for byte; "match": the joined side's
     * documents a join takes. NULL: every document. The documents as the
     * plan wrote them are kept for compile. */
    rm_query_t *filter, *match;
    bson_t *filter_doc, *match_doc;
    union {
        rm_embed_t embed;
        rm_extract_t extract;
        rm_fields_t fields;
        rm_denorm_t denorm;
        rm_summarize_t summarize;
        rm_bucketize_t bucketize;
        rm_unbucketize_t unbucketize;
        rm_copy_t copy; /* copy, move, delete */
        rm_rekey_t rekey;
#ifdef REMODEL_TOY_STEP
        rm_toy_t toy;
#endif
    } u;
} rm_step_t;

typedef struct {
    rm_step_t *steps;
    size_t n;
} rm_plan_t;

const char *rm_step_kind_name (rm_step_kind_t k);

/* Parses and checks a plan (keys, types, values); errors name the step's
 * index, its operation, the key and the reason. */
bool rm_plan_parse (rm_plan_t *plan, const char *json, size_t len, bson_error_t *err);
bool rm_plan_load (rm_plan_t *plan, const char *path, bson_error_t *err);

/* Checks the plan against a dump's namespaces: every namespace a step reads
 * exists (in the dump or made by an earlier step), and no step creates a
 * namespace an earlier step made and did not empty (one in the dump must
 * be empty when the step runs: the engine checks). */
bool rm_plan_check_against (const rm_plan_t *plan, const rm_dump_info_t *info,
                            bson_error_t *err);

/* The namespaces a step reads, and those it writes (new or changed). */
size_t rm_step_inputs (const rm_step_t *s, const rm_nsref_t **out, size_t max);
size_t rm_step_outputs (const rm_step_t *s, const rm_nsref_t **out, size_t max);
/* Those it creates, with the plan key naming each: a namespace that does
 * not exist, or an empty one (which keeps its metadata); and those it
 * leaves empty (bucketize, unbucketize without keepSource). */
size_t rm_step_creates (const rm_step_t *s, const rm_nsref_t **out, const char **keys,
                        size_t max);
size_t rm_step_empties (const rm_step_t *s, const rm_nsref_t **out, size_t max);

/* The exact inverse of a step, for rollback --carry-writes: a plan of one
 * step whose run over the step's results gives back its inputs. plan: its
 * document (bson_destroy it), NULL where the step has none (why says why,
 * a phrase). own_ids: it is exact only where every element of the array
 * at own_ids_path of own_ids's documents was a document with an _id of
 * its own (the data decides); NULL: always. From the step's row
 * (common/engine/step_inverse.c). */
typedef struct {
    bson_t *plan;
    const char *why;
    const rm_nsref_t *own_ids;
    const char *own_ids_path;
} rm_step_inverse_t;
void rm_step_inverse (const rm_step_t *s, rm_step_inverse_t *out);

void rm_plan_destroy (rm_plan_t *plan);

#endif
