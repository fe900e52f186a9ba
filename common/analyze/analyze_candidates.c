/* What makes a collection a bucket candidate and an array an extract
 * candidate (analyze_patterns.h): one computation, which the checks report
 * and the recommendations turn into steps. */
#include <string.h>

#include "analyze_patterns.h"

/* Readings of one series: besides _id and the date, at most three
 * top-level fields, each a number in nearly every document (a city's
 * hourly temperature). Anything more (a name, a status, a text) may be
 * what tells series apart, or make them events rather than readings. */
static bool
one_series (const rm_collection_t *c, const rm_field_t *time)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_fields; i++) {
        const rm_field_t *f = &c->fields[i];
        uint64_t numbers = f->types[BSON_TYPE_INT32] + f->types[BSON_TYPE_INT64] +
                           f->types[BSON_TYPE_DOUBLE] + f->types[BSON_TYPE_DECIMAL128];
        if (f == time || !strcmp (f->path, "_id"))
            continue;
        if (strchr (f->path, '.') || f->not_path || f->in_array || f->arrays ||
            numbers * 100 < c->docs * 95 || ++n > 3)
            return false;
    }
    return n > 0;
}

bool
rm_bucket_candidate (const rm_analysis_t *a, const rm_collection_t *c, rm_bucket_cand_t *out)
{
    const rm_field_t *time = NULL, *series = NULL;
    static const struct { const char *name; double s; } windows[] = {
        {"seconds", 1}, {"minutes", 60}, {"hours", 3600}, {"days", 86400}};

    if (c->docs < 500 || c->bytes / c->docs > 256)
        return false;
    for (size_t i = 0; i < a->n_rels; i++)
        if (RM_REL_ACTS (&a->rels[i]) && (&a->cols[a->rels[i].from] == c || &a->cols[a->rels[i].to] == c))
            return false; /* the relationship's recommendation speaks for it */
    for (size_t i = 0; i < c->n_fields; i++) {
        const rm_field_t *f = &c->fields[i];
        if (strchr (f->path, '.') || f->not_path || f->in_array || f->arrays)
            continue;
        if (!time && f->types[BSON_TYPE_DATE_TIME] * 100 >= c->docs * 95)
            time = f;
        else if (strcmp (f->path, "_id") && !f->not_key && f->values * 100 >= c->docs * 95 &&
                 f->distinct >= 2 && f->distinct * 20 <= c->docs &&
                 (!series || (f->types[BSON_TYPE_UTF8] && !series->types[BSON_TYPE_UTF8]) ||
                  (!!f->types[BSON_TYPE_UTF8] == !!series->types[BSON_TYPE_UTF8] &&
                   f->distinct < series->distinct)))
            series = f;
    }
    if (!time || (!series && !one_series (c, time)))
        return false;
    out->time = time;
    out->series = series;
    out->granularity = "days";
    out->per_bucket = 0;
    out->interval = 0;
    /* A reading lacking either would be set aside by bucketize. */
    out->complete = time->types[BSON_TYPE_DATE_TIME] == c->docs && (!series || series->docs == c->docs);
    /* The window: the widest that keeps a bucket within maxCount readings,
     * from a series' average interval. */
    out->interval = (double) (time->date_max - time->date_min) / 1000.0 /
                    ((double) c->docs / (double) (series ? series->distinct : 1));
    for (size_t w = 0; w < 4 && out->interval > 0; w++)
        if (windows[w].s / out->interval <= RM_BUCKET_MAX_COUNT) {
            out->granularity = windows[w].name;
            out->per_bucket = windows[w].s / out->interval;
        }
    /* A bucket of a reading or two saves nothing and costs a document of
     * its own with its statistics: readings that sparse (a price a
     * month, bucketed by day) are no bucket candidate. */
    return out->per_bucket >= RM_BUCKET_MIN_READINGS;
}

bool
rm_extract_candidate (const rm_field_t *f)
{
    /* A name no path spells: no step could name the array. */
    return !f->not_path && f->lengths && f->elem_docs > 0 && f->elem_ids * 10 >= f->elem_docs * 9;
}
