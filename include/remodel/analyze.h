/* remodel analyze: what a dump's data says about its design. Per
 * collection: documents, sizes, fields (nested paths too) with their
 * presence and BSON types, arrays with their lengths. Between collections:
 * the relationships the values show (a field whose values are found among
 * another collection's _id, or among the values of a field unique there,
 * matched as $lookup matches: 1, NumberLong(1) and 1.0 are one key), each
 * with its direction, children per parent, orphans, shared children and
 * the cardinality class of the seeds' rules of thumb.
 *
 * Two passes over the dump: the first counts and collects the join keys of
 * every candidate field, the second measures the relationships held in
 * arrays, per document. */
#ifndef REMODEL_ANALYZE_H
#define REMODEL_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/dump.h"
#include "remodel/error.h"
#include "remodel/plan.h"

/* A distribution of counts: exact quantiles (the values are kept in a
 * table of exact counts up to 4096, in 1/16-octave buckets above). */
typedef struct {
    uint64_t n, min, max, sum;
    uint64_t exact[4097];   /* exact[v]: how many were v (v <= 4096) */
    uint64_t log[1024];     /* above 4096: bucket 16*log2(v) */
} rm_dist_t;

void rm_dist_add (rm_dist_t *d, uint64_t v);
/* times values of v at once. */
void rm_dist_add_n (rm_dist_t *d, uint64_t v, uint64_t times);
/* The q-quantile (0..1) as MongoDB users read p50/p99: the smallest value
 * with at least q of the values at or below it (0 when empty). */
uint64_t rm_dist_quantile (const rm_dist_t *d, double q);

typedef enum {
    RM_CLASS_ONE_TO_ONE, RM_CLASS_ONE_TO_FEW, RM_CLASS_ONE_TO_MANY, RM_CLASS_ONE_TO_SQUILLIONS
} rm_class_t;

/* The thresholds (docs/analyze.md): children per parent at the
 * 99th percentile; one-to-one when no parent has more than one. */
#define RM_ANALYZE_FEW  10   /* a few: embed them */
#define RM_ANALYZE_MANY 200  /* rule 4: past a couple of hundred, don't embed */
/* Field paths kept a collection (fieldsCapped: more were left out). */
#define RM_ANALYZE_PATHS_CAP 256

const char *rm_class_name (rm_class_t c);
rm_class_t rm_class_of (const rm_dist_t *children);

typedef struct rm_analysis rm_analysis_t;

typedef struct {
    const struct rm_nsselect *select; /* --ns: the collections analyzed (NULL: all) */
    /* Called every 4096 documents of each pass over the dump (1, then 2
     * where child references need it) with the reader: a meter's numbers
     * (NULL: none). */
    void (*progress) (void *ctx, int pass, rm_reader_t *r, uint64_t docs);
    void *progress_ctx;
    /* --memory: the budget for what grows with the data, the join keys
     * and their sorts; past a sixth of it the key tables spill to a sort
     * under tmpdir (NULL: $TMPDIR or /tmp) and the report is the same,
     * computed by sorting. 0: 512 MiB. */
    size_t memory;
    const char *tmpdir;
    /* --hints: what a dump cannot show (NULL: none), checked by
     * rm_analyze_hints_check: {"readTogether": [[ns, ns], ...],
     * "readAlone": [ns, ...], "updatedAlone": [ns, ...],
     * "readWriteRatio": {ns: number, ...}}; readAlone and updatedAlone
     * may name an array's elements as "db.coll.path". */
    const bson_t *hints;
} rm_analyze_opts_t;

/* Checks a hints document's keys and types; errors name the key. */
bool rm_analyze_hints_check (const bson_t *hints, bson_error_t *err);

rm_analysis_t *rm_analyze (const char *src, const rm_analyze_opts_t *opts, bson_error_t *err);
/* The report as a BSON document ("collections", "relationships"), the
 * fields of docs/analyze.md's "remodel analyze --json". */
void rm_analysis_report (const rm_analysis_t *a, bson_t *out);
/* Per relationship, the pattern its numbers recommend (embed, outlier,
 * subset with count, computed summary, keep referencing; an extended
 * reference besides where the children stay in their collection), then
 * per collection bucket and extract, each with the rule behind it
 * (appended to recs, an array); and where that is a step remodel runs,
 * the step (appended to steps, a plan's "steps" array; NULL: none), each
 * with a "why" the plan parser passes over. */
void rm_analysis_recommend (const rm_analysis_t *a, bson_t *recs, bson_t *steps);
/* The plan --plan-out writes: the recommended steps (appended to steps, a
 * plan's "steps" array) less those analyze's own check left out (the
 * report's planChecks say which and why), checked again: false (err
 * says why) when they would lose a document, and then no plan is to be
 * written. */
bool rm_analysis_plan (const rm_analysis_t *a, bson_t *steps, bson_error_t *err);
/* Whether the join keys spilled, and how much went to disk. */
bool rm_analysis_spilled (const rm_analysis_t *a, size_t *runs, uint64_t *bytes);
void rm_analysis_destroy (rm_analysis_t *a);

/* remodel compile --format validators: per namespace the plan leaves
 * changed, a line {"db": DB, "command": {"collMod": COLL, "validator":
 * {"$jsonSchema": ...}, "validationLevel": "moderate",
 * "validationAction": action}} for the fields the plan writes (canonical
 * Extended JSON, or mongosh's syntax). report: rm_analysis_report of a
 * dump in the new design, whose types and presence decide (NULL: the
 * types the steps decide). Text to bson_free. */
char *rm_validators_print (const rm_plan_t *plan, const bson_t *report, const char *action,
                           bool canonical);
/* The same commands as documents, appended to out (an array, initialized
 * and empty): what online finalize --validators sends. */
void rm_validators_commands (const rm_plan_t *plan, const bson_t *report, const char *action,
                             bson_t *out);

#endif
