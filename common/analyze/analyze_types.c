/* The types a relational import gets wrong (analyze_patterns.h): a
 * table's export writes dates and numbers as text ("2007-01-01T00:00:00Z",
 * "12.50") and flags as "Y"/"N" or 0/1. Counted per field (the strings by
 * analyze_import.c, the 0/1 integers from the first pass's range), reported
 * with their counts (types[]), and converted by one set step a collection
 * with the expressions of docs/plans.md: $convert, which keeps a value it
 * cannot convert as it was (onError) and leaves a missing field missing
 * (onNull of a missing path is missing). And the reverse, which only a
 * new import mends: a few numbers an import made of a column of text. */
#include <stdio.h>
#include <string.h>

#include "analyze_patterns.h"

/* What most of a field's strings must read as. */
#define TYPE_SHARE 0.95

typedef enum { T_NONE, T_DATE, T_INT, T_DECIMAL, T_FLAG, T_BOOL01, T_DATE_FORMAT, T_NUMS_AMID } wrong_t;

/* The fewest values for a few numbers among strings to say anything. */
#define NUMS_AMID_MIN 20

/* Fields whose digits are codes, never numbers (a version "4.10" is no
 * decimal: as a number it would sort before "4.9"). */
static bool
code_named (const char *path)
{
    static const char *const words[] = {"zip", "postal", "postcode", "phone", "fax", "tel", "code",
                                        "sku", "isbn", "account", "iban", "ssn", "version", NULL};
    char low[256];
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < sizeof low; p++)
        low[n++] = (char) (*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    low[n] = '\0';
    for (size_t i = 0; words[i]; i++)
        if (strstr (low, words[i]))
            return true;
    return false;
}

/* Whether a field joins (a reference or a key a relationship acts on):
 * converting it would change what it matches. */
static bool
joins (const rm_analysis_t *a, size_t col, size_t field)
{
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        if ((r->from == col && r->field == field) || (r->to == col && r->key == field))
            return true;
    }
    return false;
}

/* A few numbers among a field's strings (at most 1 in 20, none of another
 * type): what an import's typing makes of codes that read as numbers
 * ("0E0" and "0E8" as the double 0, "007" as 7) in a column of text.
 * Reported only: the number no longer holds the text it was read from, so
 * no expression gives it back; the column must be imported again as text.
 * A join by the field matters more, not less: those values match nothing. */
static bool
nums_amid (const rm_field_t *f, uint64_t *n, uint64_t *of)
{
    uint64_t strs = f->types[BSON_TYPE_UTF8];
    uint64_t nums = f->types[BSON_TYPE_INT32] + f->types[BSON_TYPE_INT64] + f->types[BSON_TYPE_DOUBLE] +
                    f->types[BSON_TYPE_DECIMAL128];
    uint64_t all = 0;
    for (int t = 0; t < 256; t++)
        all += f->types[t];
    if (f->in_array || !nums || strs + nums != all || strs + nums < NUMS_AMID_MIN || nums * 20 > strs + nums)
        return false;
    *n = nums;
    *of = strs + nums;
    return true;
}

static wrong_t
wrong_of (const rm_analysis_t *a, size_t col, size_t k, uint64_t *n, uint64_t *of)
{
    const rm_collection_t *c = &a->cols[col];
    const rm_field_t *f = &c->fields[k];
    double seen = (double) f->str_seen;
    uint64_t ints = f->types[BSON_TYPE_INT32] + f->types[BSON_TYPE_INT64];
    size_t pl = strlen (f->path);
    /* The server's own collections (system.version) hold what it wrote.
     * A name no path spells (["a.b"], ["$x"], [""]: not_path) has no
     * "$f" for the step's $convert to read, whatever its values. */
    if (strchr (f->path, '.') || f->not_path || !strcmp (f->path, "_id") ||
        !strncmp (c->coll, "system.", 7))
        return T_NONE;
    if (joins (a, col, k))
        return nums_amid (f, n, of) ? T_NUMS_AMID : T_NONE;
    *of = f->str_seen;
    if (f->str_seen) {
        char fmt[sizeof f->str_format];
        if ((double) (*n = f->str_dates) >= TYPE_SHARE * seen)
            return T_DATE;
        if ((double) (*n = f->str_formatted) >= TYPE_SHARE * seen && rm_analyze_date_format (f, fmt, sizeof fmt))
            return T_DATE_FORMAT;
        if ((double) (*n = f->str_flags) >= TYPE_SHARE * seen)
            return T_FLAG;
        if (!code_named (f->path) && (double) (*n = f->str_ints) >= TYPE_SHARE * seen)
            return T_INT;
        if (!code_named (f->path) && f->str_decimals &&
            (double) (*n = f->str_ints + f->str_decimals) >= TYPE_SHARE * seen)
            return T_DECIMAL;
    }
    if (nums_amid (f, n, of))
        return T_NUMS_AMID;
    /* 0 and 1 only, in every value: a flag a table held as a bit (but an
     * id that is 0 or 1 is a key: stmtId). */
    if (ints && !(pl >= 2 && (!strcmp (f->path + pl - 2, "id") || !strcmp (f->path + pl - 2, "Id") ||
                              !strcmp (f->path + pl - 2, "ID"))) &&
        ints == f->values && f->int_min == 0 && f->int_max == 1 && f->distinct == 2 &&
        f->types[BSON_TYPE_INT32] + f->types[BSON_TYPE_INT64] == f->docs) {
        *n = *of = ints;
        return T_BOOL01;
    }
    return T_NONE;
}

static const char *const wrong_names[] = {"", "dates held as strings", "integers held as strings",
                                          "decimal numbers held as strings",
                                          "yes/no flags held as strings", "booleans held as 0/1",
                                          "dates held as strings", "numbers among strings"};

void
rm_analysis_types (const rm_analysis_t *a, bson_t *arr)
{
    uint32_t n_out = 0;
    for (size_t c = 0; c < a->n_cols; c++)
        for (size_t k = 0; k < a->cols[c].n_fields; k++) {
            uint64_t n = 0, of = 0;
            wrong_t w = wrong_of (a, c, k, &n, &of);
            char key[16];
            bson_t e;
            if (w == T_NONE)
                continue;
            snprintf (key, sizeof key, "%u", n_out++);
            BSON_APPEND_DOCUMENT_BEGIN (arr, key, &e);
            BSON_APPEND_UTF8 (&e, "ns", a->cols[c].ns);
            BSON_APPEND_UTF8 (&e, "field", a->cols[c].fields[k].path);
            BSON_APPEND_UTF8 (&e, "what", wrong_names[w]);
            BSON_APPEND_INT64 (&e, "matching", (int64_t) n);
            BSON_APPEND_INT64 (&e, "of", (int64_t) of);
            if (w == T_NUMS_AMID)
                BSON_APPEND_UTF8 (&e, "advice", "an import read text that looks like a number as one "
                                                "(\"0E0\", \"007\"); import the column again as text "
                                                "(mongoimport --columnsHaveTypes, FIELD.string())");
            if (w == T_DATE_FORMAT) {
                char fmt[sizeof a->cols[c].fields[k].str_format];
                rm_analyze_date_format (&a->cols[c].fields[k], fmt, sizeof fmt);
                BSON_APPEND_UTF8 (&e, "format", fmt);
            }
            bson_append_document_end (arr, &e);
        }
}

/* {"$convert": {"input": "$f", "to": to, "onError": "$f", "onNull": "$f"}} */
static void
append_convert (bson_t *fields, const char *path, const char *to)
{
    bson_t v, c;
    char ref[300];
    snprintf (ref, sizeof ref, "$%s", path);
    BSON_APPEND_DOCUMENT_BEGIN (fields, path, &v);
    BSON_APPEND_DOCUMENT_BEGIN (&v, "$convert", &c);
    BSON_APPEND_UTF8 (&c, "input", ref);
    BSON_APPEND_UTF8 (&c, "to", to);
    BSON_APPEND_UTF8 (&c, "onError", ref);
    BSON_APPEND_UTF8 (&c, "onNull", ref);
    bson_append_document_end (&v, &c);
    bson_append_document_end (fields, &v);
}

/* {"$dateFromString": {"dateString": "$f", "format": fmt, "onError": "$f", "onNull": "$f"}} */
static void
append_date_from (bson_t *fields, const rm_field_t *f)
{
    bson_t v, c;
    char ref[300], fmt[sizeof f->str_format];
    snprintf (ref, sizeof ref, "$%s", f->path);
    rm_analyze_date_format (f, fmt, sizeof fmt);
    BSON_APPEND_DOCUMENT_BEGIN (fields, f->path, &v);
    BSON_APPEND_DOCUMENT_BEGIN (&v, "$dateFromString", &c);
    BSON_APPEND_UTF8 (&c, "dateString", ref);
    BSON_APPEND_UTF8 (&c, "format", fmt);
    BSON_APPEND_UTF8 (&c, "onError", ref);
    BSON_APPEND_UTF8 (&c, "onNull", ref);
    bson_append_document_end (&v, &c);
    bson_append_document_end (fields, &v);
}

/* {"$switch": {"branches": [{"case": {"$in": ["$f", [yes...]]}, "then": true}, {... false}],
 *  "default": "$f"}} */
static void
append_flag (bson_t *fields, const char *path)
{
    static const char *const yes[] = {"Y", "y", "yes", "Yes", "YES", NULL};
    static const char *const no[] = {"N", "n", "no", "No", "NO", NULL};
    const char *const *sets[2] = {yes, no};
    bson_t v, sw, br, b, cs, in, set;
    char ref[300];
    snprintf (ref, sizeof ref, "$%s", path);
    BSON_APPEND_DOCUMENT_BEGIN (fields, path, &v);
    BSON_APPEND_DOCUMENT_BEGIN (&v, "$switch", &sw);
    BSON_APPEND_ARRAY_BEGIN (&sw, "branches", &br);
    for (int s = 0; s < 2; s++) {
        BSON_APPEND_DOCUMENT_BEGIN (&br, s ? "1" : "0", &b);
        BSON_APPEND_DOCUMENT_BEGIN (&b, "case", &cs);
        BSON_APPEND_ARRAY_BEGIN (&cs, "$in", &in);
        BSON_APPEND_UTF8 (&in, "0", ref);
        BSON_APPEND_ARRAY_BEGIN (&in, "1", &set);
        for (int i = 0; sets[s][i]; i++) {
            char key[16];
            snprintf (key, sizeof key, "%d", i);
            BSON_APPEND_UTF8 (&set, key, sets[s][i]);
        }
        bson_append_array_end (&in, &set);
        bson_append_array_end (&cs, &in);
        bson_append_document_end (&b, &cs);
        BSON_APPEND_BOOL (&b, "then", s == 0);
        bson_append_document_end (&br, &b);
    }
    bson_append_array_end (&sw, &br);
    BSON_APPEND_UTF8 (&sw, "default", ref);
    bson_append_document_end (&v, &sw);
    bson_append_document_end (fields, &v);
}

void
rm_recommend_types (const rm_analysis_t *a, rm_recout_t *o)
{
    for (size_t c = 0; c < a->n_cols; c++) {
        char why[2000], name[300];
        size_t l = 0, n_wrong = 0;
        bson_t step, body, fields;
        for (size_t k = 0; k < a->cols[c].n_fields; k++) {
            uint64_t n = 0, of = 0;
            wrong_t w = wrong_of (a, c, k, &n, &of);
            if (w == T_NONE || w == T_NUMS_AMID || l >= sizeof why)
                continue;
            l += (size_t) snprintf (why + l, sizeof why - l, "%s\"%s\": %s (%llu of %llu)",
                                    n_wrong++ ? "; " : "", a->cols[c].fields[k].path, wrong_names[w],
                                    (unsigned long long) n, (unsigned long long) of);
        }
        if (!n_wrong)
            continue;
        snprintf (name, sizeof name, "%s", a->cols[c].ns);
        if (l < sizeof why)
            snprintf (why + l, sizeof why - l, ": a table's export wrote them as text; typed, they "
                      "sort, compare and index as what they are (a value that does not convert is "
                      "kept as it was)");
        rm_rec_append (o, name, a->cols[c].ns, NULL, "convert types", why,
                       RM_SRC_HOWTO ": its documents hold dates as dates "
                       "(\"issued_on\": ISODate(\"2020-01-23\")), not as text",
                       "nothing a dump cannot show: values that do not convert stay strings");
        if (!rm_rec_step_begin (o, "set", &step, &body))
            continue;
        BSON_APPEND_UTF8 (&body, "in", a->cols[c].ns);
        BSON_APPEND_DOCUMENT_BEGIN (&body, "fields", &fields);
        for (size_t k = 0; k < a->cols[c].n_fields; k++) {
            uint64_t n = 0, of = 0;
            wrong_t w = wrong_of (a, c, k, &n, &of);
            const char *path = a->cols[c].fields[k].path;
            if (w == T_DATE)
                append_convert (&fields, path, "date");
            else if (w == T_INT)
                append_convert (&fields, path, "long");
            else if (w == T_DECIMAL)
                append_convert (&fields, path, "decimal");
            else if (w == T_BOOL01)
                append_convert (&fields, path, "bool");
            else if (w == T_FLAG)
                append_flag (&fields, path);
            else if (w == T_DATE_FORMAT)
                append_date_from (&fields, &a->cols[c].fields[k]);
        }
        bson_append_document_end (&body, &fields);
        rm_rec_step_end (o, &step, &body, why);
    }
}
