/* The recommendations about one collection rather than a relationship
 * (analyze_patterns.h): time series of tiny documents into buckets, and
 * arrays of entities with ids of their own into a collection of their own
 * when the hints say they are read or updated on their own. The candidates
 * are the checks' (analyze_candidates.c). */
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

/* "hours" -> "hour": one bucket per series and hour. */
static const char *
unit (const char *granularity)
{
    return !strcmp (granularity, "seconds") ? "second"
           : !strcmp (granularity, "minutes") ? "minute"
           : !strcmp (granularity, "hours")   ? "hour"
                                              : "day";
}

#define BUCKET_MAX_STATS 4

/* The readings' measurements: top-level numbers in (nearly) every reading,
 * whose min, max and average a bucket keeps (the computed pattern: what
 * a query of a window would otherwise compute from every reading). */
static size_t
measurements (const rm_collection_t *c, const rm_bucket_cand_t *b, const rm_field_t **out)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_fields && n < BUCKET_MAX_STATS; i++) {
        const rm_field_t *f = &c->fields[i];
        uint64_t numbers = f->types[BSON_TYPE_INT32] + f->types[BSON_TYPE_INT64] +
                           f->types[BSON_TYPE_DOUBLE] + f->types[BSON_TYPE_DECIMAL128];
        if (f == b->time || f == b->series || !strcmp (f->path, "_id") || strchr (f->path, '.') ||
            f->in_array || f->arrays || numbers * 100 < c->docs * 95)
            continue;
        out[n++] = f;
    }
    return n;
}

static void
bucket (const rm_analysis_t *a, const rm_collection_t *c, rm_recout_t *o)
{
    const rm_field_t *stats[BUCKET_MAX_STATS];
    size_t n_stats;
    rm_bucket_cand_t b;
    bool alone = rm_hints_lists (a->hints, "readAlone", c->ns) ||
                 rm_hints_lists (a->hints, "updatedAlone", c->ns);
    char why[1600], to[300], invalid[300], series[300];
    bson_t step, body;
    size_t l;

    if (!rm_bucket_candidate (a, c, &b))
        return;
    snprintf (to, sizeof to, "%s.%s_buckets", c->db, c->coll);
    snprintf (invalid, sizeof invalid, "%s.%s_invalid", c->db, c->coll);
    if (b.series)
        snprintf (series, sizeof series, "%llu series of \"%s\" (a reading every %.0f seconds a "
                  "series, on average): one document per series and",
                  (unsigned long long) b.series->distinct, b.series->path, b.interval);
    else
        snprintf (series, sizeof series, "one series, no field naming others (a reading every "
                  "%.0f seconds, on average): one document per", b.interval);
    snprintf (why, sizeof why, "%s: %llu documents of %llu bytes on average, dated by \"%s\", in "
              "%s %s holds about %.0f readings (at most %d), so %s holds about %.0f buckets "
              "instead", c->ns, (unsigned long long) c->docs,
              (unsigned long long) (c->bytes / c->docs), b.time->path, series,
              unit (b.granularity), b.per_bucket,
              RM_BUCKET_MAX_COUNT, to,
              b.per_bucket > 1 ? (double) c->docs / b.per_bucket : (double) c->docs);
    l = strlen (why);
    n_stats = measurements (c, &b, stats);
    for (size_t i = 0; i < n_stats; i++) {
        l = strlen (why);
        snprintf (why + l, sizeof why - l, "%s\"%s\"%s", i ? (i + 1 == n_stats ? " and " : ", ")
                  : "; each bucket keeps the min, max and average of ", stats[i]->path,
                  i + 1 == n_stats ? " (numbers in nearly every reading)" : "");
    }
    l = strlen (why);
    if (!b.complete && b.series)
        snprintf (why + l, sizeof why - l, "; readings without a date or a \"%s\" go to %s as they are",
                  b.series->path, invalid);
    else if (!b.complete)
        snprintf (why + l, sizeof why - l, "; readings without a date go to %s as they are", invalid);
    if (alone) {
        l = strlen (why);
        snprintf (why + l, sizeof why - l, "; but the hints say its readings are read or updated "
                  "one by one, so they keep a document each");
        rm_rec_append (o, c->ns, c->ns, NULL, "keep as is", why,
                       RM_SRC_RULES ", rule 2: needing to access an object on "
                       "its own is a compelling reason not to embed it",
                       "settled by the hints: the readings are read or updated on their own");
        return;
    }
    rm_rec_append (o, c->ns, c->ns, NULL, "bucket", why, RM_RULE_BUCKET,
                   "whether the readings are read by series and time range rather than one by one, "
                   "and arrive in time order: a dump cannot show it (--hints says what is read or "
                   "updated on its own)");
    if (!rm_rec_step_begin (o, "bucketize", &step, &body))
        return;
    BSON_APPEND_UTF8 (&body, "from", c->ns);
    BSON_APPEND_UTF8 (&body, "to", to);
    BSON_APPEND_UTF8 (&body, "timeField", b.time->path);
    if (b.series)
        BSON_APPEND_UTF8 (&body, "metaField", b.series->path);
    BSON_APPEND_UTF8 (&body, "granularity", b.granularity);
    BSON_APPEND_INT32 (&body, "maxCount", RM_BUCKET_MAX_COUNT);
    if (n_stats) {
        bson_t sub, list;
        BSON_APPEND_DOCUMENT_BEGIN (&body, "stats", &sub);
        for (size_t i = 0; i < n_stats; i++) {
            BSON_APPEND_ARRAY_BEGIN (&sub, stats[i]->path, &list);
            BSON_APPEND_UTF8 (&list, "0", "min");
            BSON_APPEND_UTF8 (&list, "1", "max");
            BSON_APPEND_UTF8 (&list, "2", "avg");
            bson_append_array_end (&sub, &list);
        }
        bson_append_document_end (&body, &sub);
    }
    if (!b.complete) {
        bson_t sub;
        BSON_APPEND_DOCUMENT_BEGIN (&body, "onInvalid", &sub);
        BSON_APPEND_UTF8 (&sub, "to", invalid);
        bson_append_document_end (&body, &sub);
    }
    rm_rec_step_end (o, &step, &body, why);
}

/* The array's elements' field name, when they have one. */
static bool
element_has (const rm_collection_t *c, const char *path, const char *name)
{
    size_t n = strlen (path);
    for (size_t i = 0; i < c->n_fields; i++)
        if (!strncmp (c->fields[i].path, path, n) && c->fields[i].path[n] == '.' &&
            !strcmp (c->fields[i].path + n + 1, name))
            return true;
    return false;
}

static void
extract (const rm_analysis_t *a, const rm_collection_t *c, const rm_field_t *f, rm_recout_t *o)
{
    char name[600], why[1600], to[300], parent_field[300], ordinal[300];
    bson_t step, body;
    bool alone;

    /* The hints name an array by its namespace and path. */
    snprintf (name, sizeof name, "%s.%s", c->ns, f->path);
    alone = rm_hints_lists (a->hints, "readAlone", name) || rm_hints_lists (a->hints, "updatedAlone", name);
    snprintf (to, sizeof to, "%s.%s_%s", c->db, c->coll, f->path);
    for (char *p = to + strlen (c->db) + 1; *p; p++)
        if (*p == '.')
            *p = '_';
    /* parent_id, unless the elements have a field of that name. */
    snprintf (parent_field, sizeof parent_field, "%s", "parent_id");
    if (element_has (c, f->path, parent_field))
        snprintf (parent_field, sizeof parent_field, "%s_parent_id", c->coll);
    /* The element's place in its array, so that the array's order is
     * kept (and the move can be undone by an embed sorted by it). */
    snprintf (ordinal, sizeof ordinal, "%s", "position");
    if (element_has (c, f->path, ordinal))
        snprintf (ordinal, sizeof ordinal, "%s_position", c->coll);
    snprintf (why, sizeof why, "%s: %llu of its %llu embedded documents carry an _id (or id) of "
              "their own (arrays of %llu to %llu, p50 %llu), like entities of their own",
              name, (unsigned long long) f->elem_ids, (unsigned long long) f->elem_docs,
              (unsigned long long) f->lengths->min, (unsigned long long) f->lengths->max,
              (unsigned long long) rm_dist_quantile (f->lengths, 0.5));
    if (!alone) {
        size_t l = strlen (why);
        snprintf (why + l, sizeof why - l, ": extract them into a collection of their own if they "
                  "are read or updated on their own");
        rm_rec_append (o, name, c->ns, f->path, "extract", why, RM_RULE_EXTRACT,
                       "whether the elements are read or updated on their own: a dump cannot show "
                       "it, so no step (--hints: list the array as \"db.coll.path\" in readAlone "
                       "or updatedAlone)");
        return;
    }
    {
        size_t l = strlen (why);
        snprintf (why + l, sizeof why - l, ", and the hints say they are read or updated on their "
                  "own: they go to %s, each with its parent's _id in \"%s\" and its place in the array in "
                  "\"%s\"", to, parent_field, ordinal);
    }
    rm_rec_append (o, name, c->ns, f->path, "extract", why,
                   RM_RULE_EXTRACT "; " RM_SRC_RULES ", rule 2: needing to "
                   "access an object on its own is a compelling reason not to embed it",
                   "settled by the hints: the elements are read or updated on their own");
    if (!rm_rec_step_begin (o, "extract", &step, &body))
        return;
    BSON_APPEND_UTF8 (&body, "from", c->ns);
    BSON_APPEND_UTF8 (&body, "path", f->path);
    BSON_APPEND_UTF8 (&body, "to", to);
    BSON_APPEND_UTF8 (&body, "style", "parentRef");
    BSON_APPEND_UTF8 (&body, "parentField", parent_field);
    BSON_APPEND_UTF8 (&body, "ordinalField", ordinal);
    rm_rec_step_end (o, &step, &body, why);
}

void
rm_recommend_collections (const rm_analysis_t *a, rm_recout_t *o)
{
    for (size_t ci = 0; ci < a->n_cols; ci++) {
        const rm_collection_t *c = &a->cols[ci];
        for (size_t i = 0; i < c->n_fields; i++)
            if (!c->fields[i].in_array && rm_extract_candidate (&c->fields[i]))
                extract (a, c, &c->fields[i], o);
        bucket (a, c, o);
    }
}
