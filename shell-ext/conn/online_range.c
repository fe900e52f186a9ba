/* Resuming after a checkpoint's _id (online.h): the filter for every _id
 * after it in MongoDB's sort order, whatever their types.
 *
 * {_id: {$gt: last}} keeps to last's type bracket (MinKey < null <
 * numbers < strings < objects < arrays < binData < objectId < bool < date <
 * timestamp < regex < code < MaxKey): after a string no ObjectId, date or
 * MaxKey is greater, and a resume skipped them. {$not: {$lte: last}} is
 * every value of last's bracket above it and every value of the other
 * brackets; those before last's are then left out by name:
 *
 *   {$and: [{_id: {$not: {$lte: last}}},
 *            {_id: {$not: {$type: [the aliases of the brackets before]}}}]}
 *
 * On MongoDB the first is an index scan from last on (its bounds are the
 * complement of [bracket start, last]); the second, which no index serves,
 * only filters it. Naming the brackets after last's instead would need the
 * "maxKey" alias, which FerretDB 1.x refuses (with "minKey", "decimal" and
 * type codes -1, 127, 19): the aliases below are the ones both FerretDB
 * 1.24 and mongo-java-server take. What no alias names and sorts before
 * last still comes through (a MinKey, a symbol after a string bracket,
 * code): first in _id order, skipped by the reader (online_range_before). */
#include "online.h"
#include "remodel/value.h"

#include <math.h>

/* The brackets a $type alias names, lowest first, each by a type of it. */
static const struct {
    const char *alias;
    bson_type_t type;
} brackets[] = {
    {"null", BSON_TYPE_NULL},         {"number", BSON_TYPE_DOUBLE}, /* int, long, double, decimal */
    {"string", BSON_TYPE_UTF8},       {"object", BSON_TYPE_DOCUMENT},
    {"array", BSON_TYPE_ARRAY},       {"binData", BSON_TYPE_BINARY},
    {"objectId", BSON_TYPE_OID},      {"bool", BSON_TYPE_BOOL},
    {"date", BSON_TYPE_DATE_TIME},    {"timestamp", BSON_TYPE_TIMESTAMP},
    {"regex", BSON_TYPE_REGEX},
};

/* _id: {$not: {$lte: last}}. $lte's operand is a value whatever it holds
 * (a document {$gt: 1} is compared as one, never read as an operator);
 * after a MinKey it is every other _id, after a MaxKey none, after a NaN
 * every number that is not one (NaN sorts below them all). */
static bool
append_after (bson_t *doc, const bson_iter_t *last)
{
    bson_t cond, not;
    return BSON_APPEND_DOCUMENT_BEGIN (doc, "_id", &cond) &&
           BSON_APPEND_DOCUMENT_BEGIN (&cond, "$not", &not) &&
           bson_append_iter (&not, "$lte", 4, last) && bson_append_document_end (&cond, &not) &&
           bson_append_document_end (doc, &cond);
}

/* _id: {$not: {$type: [the aliases from .. to - 1]}} */
static bool
append_not_types (bson_t *doc, size_t from, size_t to)
{
    bson_t cond, not, types;
    bool ok = BSON_APPEND_DOCUMENT_BEGIN (doc, "_id", &cond) &&
              BSON_APPEND_DOCUMENT_BEGIN (&cond, "$not", &not) &&
              BSON_APPEND_ARRAY_BEGIN (&not, "$type", &types);
    for (size_t i = from; ok && i < to; i++) {
        char key[16];
        const char *kp;
        size_t kl = bson_uint32_to_string ((uint32_t) (i - from), &kp, key, sizeof key);
        ok = bson_append_utf8 (&types, kp, (int) kl, brackets[i].alias, -1);
    }
    return ok && bson_append_array_end (&not, &types) && bson_append_document_end (&cond, &not) &&
           bson_append_document_end (doc, &cond);
}

#define N_BRACKETS (sizeof brackets / sizeof *brackets)

/* How many of the brackets an alias names sort before rank (or, with
 * upto, before or at it). */
static size_t
brackets_before (int rank, bool upto)
{
    size_t n = 0;
    while (n < N_BRACKETS && (rm_value_canonical_type (brackets[n].type) < rank ||
                              (upto && rm_value_canonical_type (brackets[n].type) == rank)))
        n++;
    return n;
}

bool
online_range_after (const bson_iter_t *last, bson_t *filter)
{
    size_t before = brackets_before (rm_value_canonical_type (bson_iter_type (last)), false);
    bson_t and, clause;

    /* After a null, {$ne: null}: the same on MongoDB, where {$lte: null}
     * is null's bracket, but mongo-java-server's {$lte: null} matches
     * nothing, and a null _id would be read again. */
    if (BSON_ITER_HOLDS_NULL (last)) {
        bson_t cond;
        return BSON_APPEND_DOCUMENT_BEGIN (filter, "_id", &cond) &&
               BSON_APPEND_NULL (&cond, "$ne") && bson_append_document_end (filter, &cond);
    }
    if (!before) /* after a MinKey, no bracket an alias names is before */
        return append_after (filter, last);
    return BSON_APPEND_ARRAY_BEGIN (filter, "$and", &and) &&
           BSON_APPEND_DOCUMENT_BEGIN (&and, "0", &clause) && append_after (&clause, last) &&
           bson_append_document_end (&and, &clause) &&
           BSON_APPEND_DOCUMENT_BEGIN (&and, "1", &clause) && append_not_types (&clause, 0, before) &&
           bson_append_document_end (&and, &clause) && bson_append_array_end (filter, &and);
}

bool
online_range_before (const bson_iter_t *id, const bson_iter_t *last)
{
    /* Within last's bracket the server's $lte decides; only a bracket
     * before it (one no alias names) can come through. */
    return rm_value_canonical_type (bson_iter_type (id)) <
           rm_value_canonical_type (bson_iter_type (last));
}

/* Partitions (online_partition.c) bound their ranges with the three
 * below, each the mirror of online_range_after: exact for every type an
 * alias names, and letting through what no alias names (a MinKey, a
 * symbol, code), which the reader sorts out by rm_value_compare. */
/* _id: {$not: {$gt: hi}} */
static bool
append_not_gt (bson_t *doc, const bson_iter_t *hi)
{
    bson_t cond, not;
    return BSON_APPEND_DOCUMENT_BEGIN (doc, "_id", &cond) &&
           BSON_APPEND_DOCUMENT_BEGIN (&cond, "$not", &not) && bson_append_iter (&not, "$gt", 3, hi) &&
           bson_append_document_end (&cond, &not) && bson_append_document_end (doc, &cond);
}

/* _id: {$not: {$lte: Infinity}} */
static bool
append_not_lte_inf (bson_t *doc)
{
    bson_t cond, not;
    return BSON_APPEND_DOCUMENT_BEGIN (doc, "_id", &cond) &&
           BSON_APPEND_DOCUMENT_BEGIN (&cond, "$not", &not) && BSON_APPEND_DOUBLE (&not, "$lte", INFINITY) &&
           bson_append_document_end (&cond, &not) && bson_append_document_end (doc, &cond);
}

bool
online_range_upto (const bson_iter_t *hi, bson_t *filter)
{
    int rank = rm_value_canonical_type (bson_iter_type (hi));
    size_t upto = brackets_before (rank, true);
    bson_t and, clause;

    /* Up to a null: null's bracket and those before, by alias alone
     * (mongo-java-server's comparisons with null match nothing). */
    if (BSON_ITER_HOLDS_NULL (hi))
        return upto >= N_BRACKETS || append_not_types (filter, upto, N_BRACKETS);
    /* _id: {$not: {$gt: hi}}: hi's bracket up to it, and every other.
     * Up to a number, or a NaN too: MongoDB sorts it below every number,
     * mongo-java-server above them all (its {$gt: -4} holds a NaN, which
     * this range would lose); a NaN's range is the reader's to decide.
     * {$not: {$lte: Infinity}} is a NaN on mongo-java-server (nothing on
     * MongoDB); {_id: NaN} would do, but FerretDB 1.24 drops the
     * connection on it. */
    if (!BSON_APPEND_ARRAY_BEGIN (filter, "$and", &and) ||
        !BSON_APPEND_DOCUMENT_BEGIN (&and, "0", &clause))
        return false;
    if (rank == rm_value_canonical_type (BSON_TYPE_DOUBLE)) {
        bson_t or, alt, nan;
        if (!BSON_APPEND_ARRAY_BEGIN (&clause, "$or", &or) ||
            !BSON_APPEND_DOCUMENT_BEGIN (&or, "0", &alt) || !append_not_gt (&alt, hi) ||
            !bson_append_document_end (&or, &alt) || !BSON_APPEND_DOCUMENT_BEGIN (&or, "1", &nan) ||
            !append_not_lte_inf (&nan) || !bson_append_document_end (&or, &nan) ||
            !bson_append_array_end (&clause, &or))
            return false;
    } else if (!append_not_gt (&clause, hi))
        return false;
    if (!bson_append_document_end (&and, &clause))
        return false;
    if (upto < N_BRACKETS && (!BSON_APPEND_DOCUMENT_BEGIN (&and, "1", &clause) ||
                              !append_not_types (&clause, upto, N_BRACKETS) ||
                              !bson_append_document_end (&and, &clause)))
        return false;
    return bson_append_array_end (filter, &and);
}

bool
online_range_from_bracket (bson_type_t t, bson_t *filter)
{
    size_t before = brackets_before (rm_value_canonical_type (t), false);
    return !before || append_not_types (filter, 0, before);
}

bool
online_range_below_bracket (bson_type_t t, bson_t *filter)
{
    size_t before = brackets_before (rm_value_canonical_type (t), false);
    return before >= N_BRACKETS || append_not_types (filter, before, N_BRACKETS);
}

const char *
online_range_bracket_alias (bson_type_t t)
{
    for (size_t i = 0; i < N_BRACKETS; i++)
        if (rm_value_canonical_type (brackets[i].type) == rm_value_canonical_type (t))
            return brackets[i].alias;
    return NULL;
}

bson_type_t
online_range_bracket_type (const char *alias)
{
    for (size_t i = 0; i < N_BRACKETS; i++)
        if (!strcmp (brackets[i].alias, alias))
            return brackets[i].type;
    return BSON_TYPE_EOD;
}
