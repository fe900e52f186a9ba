/* A driving collection's partitions (issue 37): _id ranges that workers
 * will read apart, computed from a sample of its _ids, apart from the
 * server (the sample is read by online_partition_sample.c; a run records
 * them in the plan's record and reads them one by one:
 * online_partition_state.c, online_run.c).
 *
 * Design. The partitions are consecutive ranges of MongoDB's order of
 * _ids across types (MinKey < null < numbers < strings < objects < ...
 * < MaxKey), from its very start to its very end: whatever the sample
 * saw or missed, every _id falls in exactly one. Each range is (lo, hi]:
 *   lo: absent (from the start), {after: v} (past the value v) or
 *       {from: "alias"} (the bracket the $type alias names, and on);
 *   hi: absent (to the end), {upto: v} (v included) or {below: "alias"}
 *       (before that bracket).
 * With two partitions or more, each bracket an alias names that the
 * sample or the counts show gets its own group of ranges, split at
 * values sampled in it (equal values, int 5 and double 5.0, never
 * apart), so that no range spans two types' index bounds; the count is
 * shared between the groups by their number of documents (D'Hondt's
 * rule, at least one each: with more brackets than --partitions asks,
 * there are more partitions). Brackets no alias names (MinKey, symbol,
 * code, MaxKey) are never split at, and no value is a bound where the
 * servers disagree ($gt of a NaN, a document, a regex, a bool, null).
 *
 * Which partition an _id is in is decided by rm_value_compare, the
 * server's comparison (online_partition_holds); the server's filter
 * (online_partition_filter, built by online_range.c's bounds) holds the
 * partition and at most, besides, the _ids of types no alias names,
 * which the reader drops by online_partition_holds. So a reader of each
 * partition reads each _id once, with an index scan of its range. */
#include "online_state.h"
#include "remodel/value.h"

#include <stdlib.h>

/* A sampled value, by its place in the sample (an array of bson_iter_t
 * would break their declared alignment). */
typedef struct {
    const bson_t *sample;
    uint32_t off, keylen;
} cand_t;

static void
cand_iter (const cand_t *c, bson_iter_t *it)
{
    bson_iter_init_from_data_at_offset (it, bson_get_data (c->sample), c->sample->len, c->off,
                                        c->keylen);
}

/* A group: one bracket's sampled values, sorted, equal ones once. */
typedef struct {
    bson_type_t type;      /* a type of the bracket */
    const char *alias;
    double docs;           /* documents of the bracket (counts or sample) */
    cand_t *vals;          /* split candidates, sorted, distinct */
    size_t n, cap;
    int parts;
} group_t;

static int
cmp_cand (const void *a, const void *b)
{
    bson_iter_t x, y;
    cand_iter (a, &x);
    cand_iter (b, &y);
    return rm_value_compare (&x, &y);
}

/* A value the servers agree to compare a range's bound with. */
static bool
splittable (const bson_iter_t *v)
{
    switch (bson_iter_type (v)) {
    case BSON_TYPE_DOUBLE:
        return bson_iter_double (v) == bson_iter_double (v); /* not NaN */
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_UTF8:
    case BSON_TYPE_BINARY:
    case BSON_TYPE_OID:
    case BSON_TYPE_DATE_TIME:
    case BSON_TYPE_TIMESTAMP:
        return true;
    default:
        return false;
    }
}

/* The group of t's bracket, made when new; NULL for a bracket no alias
 * names. Groups stay in the brackets' order. */
static group_t *
group_of (group_t *g, size_t *ng, bson_type_t t)
{
    const char *alias = online_range_bracket_alias (t);
    int rank = rm_value_canonical_type (t);
    size_t i = 0;
    if (!alias)
        return NULL;
    while (i < *ng && rm_value_canonical_type (g[i].type) < rank)
        i++;
    if (i < *ng && rm_value_canonical_type (g[i].type) == rank)
        return &g[i];
    memmove (&g[i + 1], &g[i], (*ng - i) * sizeof *g);
    (*ng)++;
    g[i] = (group_t) {.type = online_range_bracket_type (alias), .alias = alias};
    return &g[i];
}

/* The type a $type alias of a count names ("int", "string"): EOD when
 * none. */
static bson_type_t
type_of_name (const char *name)
{
    for (int t = 1; t <= 0x13; t++)
        if (!strcmp (rm_value_type_name ((bson_type_t) t), name))
            return (bson_type_t) t;
    return BSON_TYPE_EOD;
}

static bool
append_bound (bson_t *part, const char *key, const char *kind, const bson_iter_t *v,
              const char *alias)
{
    bson_t b;
    return BSON_APPEND_DOCUMENT_BEGIN (part, key, &b) &&
           (v ? bson_append_iter (&b, kind, -1, v) : BSON_APPEND_UTF8 (&b, kind, alias)) &&
           bson_append_document_end (part, &b);
}

/* The partitions of one group, appended to parts from index *n. */
static bool
append_group (bson_t *parts, uint32_t *n, const group_t *g, const group_t *prev,
              const group_t *next)
{
    for (int j = 0; j < g->parts; j++) {
        char key[16];
        const char *kp;
        size_t kl = bson_uint32_to_string ((*n)++, &kp, key, sizeof key);
        bson_t part;
        bson_iter_t lo_it, hi_it;
        /* Bound j of p falls at the j/p-th of the distinct values, v[j*n/p
         * - 1] the last of the range before it: with p <= n, the bounds
         * are apart and each range holds a sampled value at least. */
        const bson_iter_t *lo = j ? &lo_it : NULL;
        const bson_iter_t *hi = j + 1 < g->parts ? &hi_it : NULL;
        if (lo)
            cand_iter (&g->vals[(size_t) j * g->n / (size_t) g->parts - 1], &lo_it);
        if (hi)
            cand_iter (&g->vals[(size_t) (j + 1) * g->n / (size_t) g->parts - 1], &hi_it);
        if (!bson_append_document_begin (parts, kp, (int) kl, &part) ||
            !BSON_APPEND_UTF8 (&part, "group", g->alias))
            return false;
        if (lo ? !append_bound (&part, "lo", "after", lo, NULL)
               : prev && !append_bound (&part, "lo", "from", NULL, g->alias))
            return false;
        if (hi ? !append_bound (&part, "hi", "upto", hi, NULL)
               : next && !append_bound (&part, "hi", "below", NULL, next->alias))
            return false;
        if (!bson_append_document_end (parts, &part))
            return false;
    }
    return true;
}

bool
online_partition_compute (const online_partition_in_t *in, bson_t *parts, bson_error_t *err)
{
    /* At most one group per bracket an alias names. */
    group_t g[16];
    size_t ng = 0, nsample = 0;
    double counted = 0;
    int want = in->want, total = 0;
    bson_iter_t it;
    bool ok = true;

    if (in->type_counts && bson_iter_init (&it, in->type_counts))
        while (bson_iter_next (&it)) {
            group_t *grp = group_of (g, &ng, type_of_name (bson_iter_key (&it)));
            double c = BSON_ITER_HOLDS_NUMBER (&it) ? (double) bson_iter_as_int64 (&it) : 0;
            if (grp && c > 0) {
                grp->docs += c;
                counted += c;
            }
        }
    if (bson_iter_init (&it, in->sample))
        while (bson_iter_next (&it)) {
            group_t *grp = group_of (g, &ng, bson_iter_type (&it));
            nsample++;
            if (!grp)
                continue;
            if (!in->type_counts)
                grp->docs += 1;
            if (!splittable (&it))
                continue;
            if (grp->n == grp->cap) {
                grp->cap = grp->cap ? 2 * grp->cap : 64;
                grp->vals = bson_realloc (grp->vals, grp->cap * sizeof *grp->vals);
            }
            grp->vals[grp->n++] =
                (cand_t) {in->sample, bson_iter_offset (&it), bson_iter_key_len (&it)};
        }
    if (!in->type_counts)
        counted = (double) nsample;

    /* A small collection, or one partition asked for: the whole order. */
    if (want <= 1 || ng == 0 || in->total <= in->small) {
        bson_t part;
        ok = BSON_APPEND_DOCUMENT_BEGIN (parts, "0", &part) && bson_append_document_end (parts, &part);
        goto done;
    }
    for (size_t i = 0; i < ng; i++) {
        size_t d = 0;
        qsort (g[i].vals, g[i].n, sizeof *g[i].vals, cmp_cand);
        for (size_t k = 0; k < g[i].n; k++) /* equal values (5, 5L, 5.0) once */
            if (!d || cmp_cand (&g[i].vals[d - 1], &g[i].vals[k]) != 0)
                g[i].vals[d++] = g[i].vals[k];
        g[i].n = d;
        g[i].parts = 1;
        total++;
    }
    /* D'Hondt: each next partition to the group with the most documents
     * per partition, while it has values to split at and, with a floor,
     * documents for another partition of at least small. */
    while (total < want) {
        group_t *best = NULL;
        for (size_t i = 0; i < ng; i++) {
            double share = g[i].docs / g[i].parts;
            double docs = counted > 0 ? (double) in->total * g[i].docs / counted : 0;
            if ((size_t) g[i].parts >= g[i].n || (in->small > 0 && docs / (g[i].parts + 1) < in->small))
                continue;
            if (!best || share > best->docs / best->parts)
                best = &g[i];
        }
        if (!best)
            break;
        best->parts++;
        total++;
    }
    {
        uint32_t n = 0;
        for (size_t i = 0; ok && i < ng; i++)
            ok = append_group (parts, &n, &g[i], i ? &g[i - 1] : NULL, i + 1 < ng ? &g[i + 1] : NULL);
    }
done:
    for (size_t i = 0; i < ng; i++)
        bson_free (g[i].vals);
    if (!ok)
        rm_error_set (err, RM_ERR_NOMEM, "partitions: too large a bound for a document");
    return ok;
}

/* A bound of part (key "lo" or "hi"): its kind's iterator in *v. */
static bool
bound_of (const bson_t *part, const char *key, bson_iter_t *v)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, part, key) && BSON_ITER_HOLDS_DOCUMENT (&it) &&
           bson_iter_recurse (&it, v) && bson_iter_next (v);
}

static bson_type_t
bracket_of (const bson_iter_t *v)
{
    return BSON_ITER_HOLDS_UTF8 (v) ? online_range_bracket_type (bson_iter_utf8 (v, NULL))
                                    : BSON_TYPE_EOD;
}

bool
online_partition_holds (const bson_t *part, const bson_iter_t *id)
{
    int rank = rm_value_canonical_type (bson_iter_type (id));
    bson_iter_t b;
    if (bound_of (part, "lo", &b)) {
        if (!strcmp (bson_iter_key (&b), "after") ? rm_value_compare (id, &b) <= 0
                                                  : rank < rm_value_canonical_type (bracket_of (&b)))
            return false;
    }
    if (bound_of (part, "hi", &b)) {
        if (!strcmp (bson_iter_key (&b), "upto") ? rm_value_compare (id, &b) > 0
                                                 : rank >= rm_value_canonical_type (bracket_of (&b)))
            return false;
    }
    return true;
}

/* One bound's condition, into its own document. */
static bool
bound_filter (const bson_iter_t *b, bson_t *out, bson_error_t *err)
{
    const char *kind = bson_iter_key (b);
    bool ok;
    if (!strcmp (kind, "after"))
        ok = online_range_after (b, out);
    else if (!strcmp (kind, "upto"))
        ok = online_range_upto (b, out);
    else if (bracket_of (b) == BSON_TYPE_EOD)
        ok = false;
    else if (!strcmp (kind, "from"))
        ok = online_range_from_bracket (bracket_of (b), out);
    else if (!strcmp (kind, "below"))
        ok = online_range_below_bracket (bracket_of (b), out);
    else
        ok = false;
    if (!ok)
        rm_error_set (err, RM_ERR_FORMAT, "partitions: a bound %s that is not one", kind);
    return ok;
}

/* A range between two values of one type that is its bracket alone (an
 * ObjectId, a date, a timestamp, binary data): no _id of another type can
 * fall in it, and {$gt: lo, $lte: hi} is exact on every server, where the
 * general form's $not and $type clauses cost mongo-java-server, which
 * scans the whole collection for each partition, 2.4 times the CPU a
 * document. Most partitions of most collections are of ObjectIds. */
static bool
one_type_range (const bson_iter_t *lo, const bson_iter_t *hi)
{
    if (strcmp (bson_iter_key (lo), "after") || strcmp (bson_iter_key (hi), "upto") ||
        bson_iter_type (lo) != bson_iter_type (hi))
        return false;
    switch (bson_iter_type (lo)) {
    case BSON_TYPE_OID:
    case BSON_TYPE_DATE_TIME:
    case BSON_TYPE_TIMESTAMP:
    case BSON_TYPE_BINARY:
        return true;
    default:
        return false;
    }
}

bool
online_partition_filter (const bson_t *part, bson_t *filter, bson_error_t *err)
{
    bson_t lo = BSON_INITIALIZER, hi = BSON_INITIALIZER, and, cond;
    bson_iter_t b, e;
    bool ok;

    if (bound_of (part, "lo", &b) && bound_of (part, "hi", &e) && one_type_range (&b, &e)) {
        ok = BSON_APPEND_DOCUMENT_BEGIN (filter, "_id", &cond) &&
             bson_append_iter (&cond, "$gt", 3, &b) && bson_append_iter (&cond, "$lte", 4, &e) &&
             bson_append_document_end (filter, &cond);
        if (!ok)
            rm_error_set (err, RM_ERR_NOMEM, "partitions: too large a filter");
        return ok;
    }
    ok = (!bound_of (part, "lo", &b) || bound_filter (&b, &lo, err)) &&
         (!bound_of (part, "hi", &b) || bound_filter (&b, &hi, err));
    if (ok && !bson_empty (&lo) && !bson_empty (&hi)) {
        ok = BSON_APPEND_ARRAY_BEGIN (filter, "$and", &and) && BSON_APPEND_DOCUMENT (&and, "0", &lo) &&
             BSON_APPEND_DOCUMENT (&and, "1", &hi) && bson_append_array_end (filter, &and);
        if (!ok)
            rm_error_set (err, RM_ERR_NOMEM, "partitions: too large a filter");
    } else if (ok)
        bson_concat (filter, bson_empty (&lo) ? &hi : &lo);
    bson_destroy (&lo);
    bson_destroy (&hi);
    return ok;
}
