/* Whether a candidate is a relationship, by evidence (analyze_int.h,
 * docs/analyze.md "Evidence and levels"). The values alone cannot tell:
 * small integers in a dense range fall among any other dense range of
 * integers, and words among any collection's words. So each candidate
 * that measured like a relationship (80% of its values found) is scored:
 *
 * - values: how likely the overlap is by chance, the share of the key's
 *   values that the field's own values would hit if spread over their
 *   range; -log10 of it, at most 3 points (ObjectIds and ids with digits:
 *   3; a dense range of integers inside another: 0);
 * - names: the field named after the target collection (customerId,
 *   customer_id, customers against customers) or after the target key
 *   (account_id against account_id): 2; named like a reference (an id or
 *   ref suffix): 1; named like a measurement (amount, price, qty, age,
 *   year...), or a target key that is: -2 each;
 * - types: values of another BSON type than the keys' (double against
 *   int): -1; integers that all look like years: -1;
 * - shape: a target key unique by accident (neither _id nor named like a
 *   key, and no name tying them): -1; values that chance explains
 *   covering under a fifth of the target's keys: -1; once children per
 *   parent are counted (rm_analyze_shape): more than 5% orphans -1, and
 *   where chance explains the values, children spread evenly over all
 *   parents (as values drawn over a range are) -1 unless a name ties
 *   them, skewed (as references are) +1.
 *
 * Confident at 2 points or more, possible from 0, rejected below. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyze_int.h"

#define CONFIDENT_AT 2.0
#define POSSIBLE_AT 0.0
#define MAX_VALUE_POINTS 3.0
/* Codes and words come from small human vocabularies (countries,
 * currencies, sizes, first names): two sets share members far more often
 * than strings spread at random would. */
#define VOCABULARY_CHANCE 0.5
#define MIN_COVERAGE 0.2
/* A field of this many occurrences a distinct value or more, whose values
 * are under this share of the keys, is counting, not referencing; and so
 * is one with ten occurrences a key or more that reaches under half the
 * keys (60,175 line numbers reach 7 of 25 nations). */
#define MIN_RARE_COVERAGE 0.01
#define RARE_REFS 100
/* Shape (rm_analyze_shape): more orphans than real references keep; the
 * dispersion (variance over mean) of children per parent that values
 * spread at random give (a Poisson's: 1, with the noise of a few hundred
 * parents) and that references show; and how much to go by. */
#define MAX_ORPHANS 0.05
#define UNIFORM_DISPERSION 1.5
#define SKEWED_DISPERSION 3.0
#define MIN_SHAPE_PARENTS 30
#define MIN_SHAPE_MEAN 2.0
/* Documents a key a natural key's references average at least: many to
 * one, as references are (natural_key). */
#define NATURAL_REFS_A_KEY 2

const char *
rm_level_name (rm_level_t l)
{
    return l == RM_LEVEL_CONFIDENT ? "confident" : l == RM_LEVEL_POSSIBLE ? "possible" : "rejected";
}

static void
add (rm_evidence_t *ev, double points, const char *fmt, ...) BSON_GNUC_PRINTF (3, 4);

static void
add (rm_evidence_t *ev, double points, const char *fmt, ...)
{
    va_list ap;
    if (ev->n == RM_EVIDENCE_MAX)
        return;
    ev->item[ev->n].points = points;
    va_start (ap, fmt);
    vsnprintf (ev->item[ev->n].what, sizeof ev->item[ev->n].what, fmt, ap);
    va_end (ap);
    ev->n++;
    ev->score += points;
}

static const char *
leaf (const char *path)
{
    const char *dot = strrchr (path, '.');
    return dot ? dot + 1 : path;
}

/* A name's words, lower case, cut at _ - . and at a capital after a
 * small letter ("unitPrice": "unit price"), into out separated by spaces. */
static void
words (const char *name, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = name; *p && n + 2 < len; p++) {
        bool cut = *p == '_' || *p == '-' || *p == '.' || *p == ' ';
        if (cut || (isupper ((unsigned char) *p) && p > name && islower ((unsigned char) p[-1]))) {
            if (n && out[n - 1] != ' ')
                out[n++] = ' ';
            if (cut)
                continue;
        }
        out[n++] = (char) tolower ((unsigned char) *p);
    }
    out[n] = '\0';
}

static bool
has_word (const char *ws, const char *const *set)
{
    char buf[256], *save = NULL;
    snprintf (buf, sizeof buf, "%s", ws);
    for (char *w = strtok_r (buf, " ", &save); w; w = strtok_r (NULL, " ", &save))
        for (size_t i = 0; set[i]; i++)
            if (!strcmp (w, set[i]))
                return true;
    return false;
}

/* Measurements: numbers that are rarely references. */
static const char *const measures[] = {
    "amount", "price", "cost", "total", "subtotal", "sum", "balance", "salary", "fee", "tax",
    "qty", "quantity", "count", "stock", "age", "year", "years", "size", "weight", "height",
    "width", "length", "score", "rating", "stars", "percent", "duration", "temperature", "rank",
    "points", "votes", "views", NULL};
/* The last word of a name that says it holds an identifier. */
static const char *const id_words[] = {"id", "ids", "ref", "refs", "key", "code", "sku", "no",
                                       "number", "uuid", "oid", NULL};

static bool
measure_named (const char *name)
{
    char ws[256];
    words (name, ws, sizeof ws);
    return has_word (ws, measures);
}

/* Its last word says it is an identifier ("customerId", "ref", "sku"). */
static bool
id_named (const char *name)
{
    char ws[256];
    const char *last;
    words (name, ws, sizeof ws);
    last = strrchr (ws, ' ');
    last = last ? last + 1 : ws;
    for (size_t i = 0; id_words[i]; i++)
        if (!strcmp (last, id_words[i]))
            return true;
    /* One word ending in "key" (custkey, nationkey: SQL's column names). */
    return strlen (last) > 4 && !strcmp (last + strlen (last) - 3, "key");
}

/* The words that name a hierarchy's parent in the same collection
 * (employees' manager, reportsTo; categories' parent). */
static const char *const up_words[] = {"parent", "manager", "mgr", "reports", "reportsto", "boss",
                                       "supervisor", "superior", "up", NULL};

bool
rm_hierarchy_named (const char *path)
{
    char ws[256];
    words (leaf (path), ws, sizeof ws);
    return has_word (ws, up_words);
}

/* Whether f is its own collection's key: a top-level field in (almost)
 * every document, (almost) no value twice, named like a key. Such a key is
 * numbered on its own: its values meeting another key's are the two
 * counters' ranges, not a reference. */
static bool
own_key (const rm_collection_t *c, const rm_field_t *f)
{
    return !strchr (f->path, '.') && !f->in_array && !f->arrays && c->docs > 1 &&
           f->values * 100 >= c->docs * 99 && f->distinct * 100 >= f->values * 99 &&
           id_named (f->path);
}

/* A name reduced to compare: lower case letters and digits only, without
 * an identifier suffix (ids, id, refs, ref, name, code, key) and a plural's
 * ending ("customerIds" -> "customer", "countries" -> "country"). */
static void
stem (const char *name, char *out, size_t len)
{
    static const char *const suffixes[] = {"ids", "id", "refs", "ref", "names", "name", "codes",
                                           "code", "keys", "key", NULL};
    size_t n = 0, l;
    /* A table's prefix of one or two letters, as relational schemas name
     * their columns (TPC-H's c_nationkey, ps_partkey): the rest is the
     * name. */
    if (isalpha ((unsigned char) name[0]) &&
        ((name[1] == '_' && strlen (name + 2) >= 3) ||
         (isalpha ((unsigned char) name[1]) && name[2] == '_' && strlen (name + 3) >= 3)))
        name += name[1] == '_' ? 2 : 3;
    for (const char *p = name; *p && n + 1 < len; p++)
        if (isalnum ((unsigned char) *p))
            out[n++] = (char) tolower ((unsigned char) *p);
    out[n] = '\0';
    for (size_t i = 0; suffixes[i]; i++) {
        l = strlen (suffixes[i]);
        if (n > l + 1 && !strcmp (out + n - l, suffixes[i])) {
            out[n -= l] = '\0';
            break;
        }
    }
    if (n > 4 && !strcmp (out + n - 3, "ies"))
        snprintf (out + n - 3, 4, "y");
    /* "addresses", "statuses", "boxes" lose "es"; "courses", "houses"
     * only their "s". */
    else if (n > 4 && ((!strcmp (out + n - 3, "ses") && (out[n - 4] == 's' || out[n - 4] == 'u')) ||
                       !strcmp (out + n - 3, "xes")))
        out[n - 2] = '\0';
    else if (n > 2 && out[n - 1] == 's' && out[n - 2] != 's')
        out[n - 1] = '\0';
}

/* Whether field f's values (pair p) are references to k by the data
 * alone: k in every document of its collection with no value twice, every
 * one of f's values found among k's, and several documents a key found
 * (many to one: a copy of a unique value, a name or an address, is as
 * many as what it was copied from, or nearly). */
static bool
natural_key (const rm_collection_t *tc, const rm_field_t *k, const rm_field_t *f, const rm_pair_t *p)
{
    return k->values >= tc->docs && k->distinct == k->values && p->matched == f->values &&
           p->distinct >= 2 && f->values >= NATURAL_REFS_A_KEY * p->distinct;
}

/* The share of the key's values that the field's values would hit by
 * chance, and how it was found (into how). */
static double
chance (const rm_field_t *f, const rm_field_t *k, char *how, size_t len)
{
    if (f->ints * 2 >= f->values) {
        /* The key's integers, taken as spread evenly over their range:
         * how many fall in the field's range, of all the field's range
         * could hold. */
        double frange = (double) f->int_max - (double) f->int_min + 1;
        double krange = (double) k->int_max - (double) k->int_min + 1;
        double lo = f->int_min > k->int_min ? (double) f->int_min : (double) k->int_min;
        double hi = f->int_max < k->int_max ? (double) f->int_max : (double) k->int_max;
        double in_range, c;
        if (!k->ints || hi < lo)
            return 0;
        in_range = (double) k->ints * (hi - lo + 1) / krange;
        if (in_range > (double) k->distinct * (hi - lo + 1) / krange)
            in_range = (double) k->distinct * (hi - lo + 1) / krange;
        c = in_range / frange;
        c = c > 1 ? 1 : c;
        snprintf (how, len, "integers %lld..%lld against keys %lld..%lld: spread over their range "
                  "they would hit a key %.2g%% of the time", (long long) f->int_min,
                  (long long) f->int_max, (long long) k->int_min, (long long) k->int_max, 100 * c);
        return c;
    }
    if (f->vocab * 2 > f->sampled) {
        snprintf (how, len, "codes and words without digits: drawn from small vocabularies, two "
                  "sets of them share members by chance");
        return VOCABULARY_CHANCE;
    }
    snprintf (how, len, "ObjectIds, binary ids or strings with digits: almost never found "
              "elsewhere by chance");
    return 0;
}

/* The dominant kind of a field's values: integer, double, string, objectId, binary. */
static const char *
kind (const rm_field_t *f)
{
    static const struct { int t; const char *name; } kinds[] = {
        {BSON_TYPE_INT32, "integer"}, {BSON_TYPE_INT64, "integer"}, {BSON_TYPE_DOUBLE, "double"},
        {BSON_TYPE_UTF8, "string"}, {BSON_TYPE_OID, "objectId"}, {BSON_TYPE_BINARY, "binary"}};
    uint64_t best = 0, n[6] = {0};
    const char *k = "none";
    for (size_t i = 0; i < 6; i++)
        n[i] = f->types[kinds[i].t];
    n[0] += n[1];
    n[1] = 0;
    for (size_t i = 0; i < 6; i++)
        if (n[i] > best) {
            best = n[i];
            k = kinds[i].name;
        }
    return k;
}

int
rm_hints_reference (const bson_t *hints, const char *from_ns, const char *field, const char *to_ns,
                    const char *key, bool *target)
{
    bson_iter_t it, e;
    char name[1024];
    if (!hints || !bson_iter_init_find (&it, hints, "references") || !bson_iter_recurse (&it, &e))
        return 0;
    snprintf (name, sizeof name, "%s.%s", from_ns, field);
    if (!bson_iter_find (&e, name))
        return 0;
    if (!BSON_ITER_HOLDS_UTF8 (&e))
        return -1;
    snprintf (name, sizeof name, "%s.%s", to_ns, key);
    *target = !strcmp (bson_iter_utf8 (&e, NULL), name);
    return 1;
}

void
rm_analyze_score (const rm_analysis_t *a, const rm_pair_t *p, rm_evidence_t *ev)
{
    const rm_collection_t *fc = &a->cols[p->from], *tc = &a->cols[p->to];
    const rm_field_t *f = &fc->fields[p->field], *k = &tc->fields[p->key];
    const char *fname = leaf (f->path), *kname = k->path;
    char fs[256], cs[256], ks[256], how[240];
    bool names_tie = false, is_id = !strcmp (kname, "_id");
    double c, v;
    bool target = false, natural;
    int hint;

    memset (ev, 0, sizeof *ev);
    c = chance (f, k, how, sizeof how);
    ev->chance = c;
    v = c <= 0.001 ? MAX_VALUE_POINTS : -log10 (c);
    v = v > MAX_VALUE_POINTS ? MAX_VALUE_POINTS : v < 0.05 ? 0 : v;
    add (ev, round (v * 10) / 10, "chance overlap %.2g: %s", c, how);

    stem (fname, fs, sizeof fs);
    stem (tc->coll, cs, sizeof cs);
    stem (kname, ks, sizeof ks);
    if (fs[0] && !strcmp (fs, cs)) {
        add (ev, 2, "the name \"%s\" names the collection %s", fname, tc->coll);
        names_tie = true;
    } else if (!is_id && fs[0] && !strcmp (fs, ks)) {
        add (ev, 2, "the name \"%s\" is the target key's, \"%s\"", fname, kname);
        names_tie = true;
    } else if (p->from == p->to && rm_hierarchy_named (fname)) {
        add (ev, 2, "the name \"%s\" names a parent in the same collection: a hierarchy", fname);
        names_tie = true;
    } else if (id_named (fname)) {
        add (ev, 1, "the name \"%s\" is a reference's (an id or ref suffix)", fname);
    }
    if (!names_tie && own_key (fc, f))
        add (ev, -2, "\"%s\" is %s's own key (unique, named like a key): two keys numbered "
             "on their own meet by their ranges, not by reference", fname, fc->coll);
    if (measure_named (fname))
        add (ev, -2, "the name \"%s\" is a measurement's (money, a quantity, a count, an age, a year): "
             "numbers that are rarely references", fname);
    natural = !is_id && !names_tie && !id_named (fname) && !id_named (kname) &&
              f->types[BSON_TYPE_UTF8] * 2 > f->values;
    if (natural && natural_key (tc, k, f, p)) {
        /* No name says it, the data does: a natural key (an airport's
         * IATA code in each flight's origin). */
        /* Words and codes (chance 0.5) are all found among a list of
         * names as often as they reference it: a point and a half, so
         * that only their skewed spread (analyze_shape) or a name makes
         * them confident. */
        ev->natural = true;
        add (ev, c >= VOCABULARY_CHANCE ? 1.5 : 2, "a natural key: all %llu of its values found among \"%s\", unique in every "
             "document of %s, each key found referenced by %.1f documents on average (many to "
             "one): coverage, uniqueness and cardinality make it a reference, not its name",
             (unsigned long long) f->values, kname, tc->coll, (double) f->values / (double) p->distinct);
    } else if (!is_id && measure_named (kname))
        add (ev, -2, "the target key \"%s\" is a measurement's: unique by accident", kname);
    else if (!is_id && !names_tie && !id_named (kname) && !natural)
        add (ev, -1, "the target key \"%s\" is neither _id nor named like a key, and no name ties "
             "them: unique by accident", kname);
    /* (An array's elements are not counted by type: nothing to compare.) */
    if (strcmp (kind (f), "none") != 0 && strcmp (kind (f), kind (k)) != 0)
        add (ev, -1, "its values are mostly %s, the keys %s: references usually share the key's "
             "type", kind (f), kind (k));
    if (!names_tie && !id_named (fname) && f->ints * 2 >= f->values && f->int_min >= 1800 &&
        f->int_max <= 2100)
        add (ev, -1, "its integers (%lld..%lld) all look like years", (long long) f->int_min,
             (long long) f->int_max);
    /* Values that chance explains covering few of the keys; or, whatever
     * the chance, a handful of values among a great many keys (an
     * ordinal, 1..7, among 15,000 order numbers): references to so many
     * parents reach far more of them. */
    if (k->distinct && ((c >= VOCABULARY_CHANCE && (double) p->distinct < MIN_COVERAGE * (double) k->distinct) ||
                        (!names_tie && (double) p->distinct < MIN_RARE_COVERAGE * (double) k->distinct &&
                         f->values >= RARE_REFS * p->distinct) ||
                        (!names_tie && f->values >= 10 * k->distinct && p->distinct * 2 < k->distinct)))
        add (ev, -1, c >= VOCABULARY_CHANCE ? "%llu distinct values that chance explains, %.0f%% "
             "of the %llu keys" : "%llu distinct values, %.2g%% of the %llu keys: a count explains "
             "them (references as many reach more keys)",
             (unsigned long long) p->distinct, 100.0 * (double) p->distinct / (double) k->distinct,
             (unsigned long long) k->distinct);
    ev->level = ev->score >= CONFIDENT_AT ? RM_LEVEL_CONFIDENT
                : ev->score >= POSSIBLE_AT ? RM_LEVEL_POSSIBLE
                                           : RM_LEVEL_REJECTED;
    /* Strings of fields no name ties (a code, an address, a name) found
     * among a unique field's: the data decides (natural_key). Short of
     * all of it, the names are what is missing: possible, never acted on
     * without the hints (analyze_relate.c still calls it same values when
     * the collection references the target by a key of its own, as an
     * order's billing address beside its customerId). */
    if (natural) {
        ev->natural_shape = true;
        if (!ev->natural && ev->level == RM_LEVEL_CONFIDENT)
            ev->level = RM_LEVEL_POSSIBLE;
        if (!ev->natural && ev->level == RM_LEVEL_REJECTED && ev->score > -2) {
            ev->level = RM_LEVEL_POSSIBLE;
            add (ev, 0, "only the names are missing: %.0f%% of its values found among a unique "
                 "field's, which a name or the hints would confirm",
                 100.0 * (double) p->matched / (double) f->values);
        }
    }
    hint = rm_hints_reference (a->hints, fc->ns, f->path, tc->ns, kname, &target);
    if (hint > 0 && target)
        ev->same_values = false;
    if (hint < 0 || (hint > 0 && !target)) {
        ev->hinted = true;
        ev->level = RM_LEVEL_REJECTED;
        add (ev, 0, "rejected by the hints (references: %s)", hint < 0 ? "null" : "another target");
    } else if (hint > 0) {
        ev->hinted = true;
        ev->level = RM_LEVEL_CONFIDENT;
        add (ev, 0, "confirmed by the hints (references)");
    }
}

/* The mean and variance of children per parent (exact up to 4096, the
 * middle of a log bucket above). */
static void
moments (const rm_dist_t *d, double *mean, double *var)
{
    double s = 0, s2 = 0, n = (double) d->n;
    for (size_t v = 0; v <= 4096; v++) {
        s += (double) v * (double) d->exact[v];
        s2 += (double) v * (double) v * (double) d->exact[v];
    }
    for (size_t b = 0; b < 1024; b++)
        if (d->log[b]) {
            double v = exp2 (((double) b + 0.5) / 16.0);
            s += v * (double) d->log[b];
            s2 += v * v * (double) d->log[b];
        }
    *mean = n ? s / n : 0;
    *var = n ? s2 / n - *mean * *mean : 0;
}

void
rm_analyze_shape (const rm_analysis_t *a, rm_relation_t *r)
{
    double mean, var, orphans = r->refs ? (double) r->orphans / (double) r->refs : 0;
    double none = r->children.n ? (double) r->parents_none / (double) r->children.n : 0;
    bool tied = false;
    /* A name or ids that chance does not explain; not a natural key,
     * which the data alone makes: words drawn evenly over another
     * collection's unique names (an event's city among stores named
     * after cities) are all found too, and only their spread tells. */
    for (uint8_t i = 0; i < r->ev.n; i++)
        tied |= r->ev.item[i].points >= 2 && strncmp (r->ev.item[i].what, "a natural key", 13) != 0;
    if (orphans > MAX_ORPHANS)
        add (&r->ev, -1, "%.0f%% of its references found nowhere (orphans): references dangle "
             "rarely, values that merely fall among the keys often", 100 * orphans);
    /* Children per parent say what the values could not: values spread
     * over a range hit every key about equally (a Poisson's spread:
     * variance about the mean, hardly a parent without children), while
     * references follow what they refer to (a few parents with many, many
     * with few or none). Only where the values leave it open (chance
     * explains them), and with enough of them to tell. */
    moments (&r->children, &mean, &var);
    if (r->ev.chance >= VOCABULARY_CHANCE && r->children.n >= MIN_SHAPE_PARENTS &&
        mean >= MIN_SHAPE_MEAN) {
        double disp = var / mean;
        if (disp <= UNIFORM_DISPERSION && none <= exp (-mean) + 0.01 && !tied)
            add (&r->ev, -1, "children per parent spread evenly over all parents (mean %.1f, "
                 "variance %.1f, %.0f%% with none), as values drawn over the keys' range are; "
                 "references rarely are", mean, var, 100 * none);
        else if (disp >= SKEWED_DISPERSION)
            add (&r->ev, 1, "children per parent skewed (mean %.1f, variance %.1f, %.0f%% with "
                 "none): few parents with many, as references are, not values spread over a "
                 "range", mean, var, 100 * none);
    }
    if (r->ev.hinted)
        return;
    r->ev.level = r->ev.score >= CONFIDENT_AT ? RM_LEVEL_CONFIDENT
                  : r->ev.score >= POSSIBLE_AT ? RM_LEVEL_POSSIBLE
                                               : RM_LEVEL_REJECTED;
    /* A tie is the hints' to settle, whatever the shape says. */
    if (r->ev.tie[0] && r->ev.level == RM_LEVEL_CONFIDENT)
        r->ev.level = RM_LEVEL_POSSIBLE;
}

void
rm_evidence_confirm (const rm_analysis_t *a, const rm_relation_t *r, char *out, size_t len)
{
    const rm_collection_t *from = &a->cols[r->from], *to = &a->cols[r->to];
    char one[256];
    stem (to->coll, one, sizeof one);
    snprintf (out, len, "the values alone cannot tell (score %.1f, confident from %.0f): confirm it "
              "with --hints {\"references\": {\"%s.%s\": \"%s.%s\"}}, or reject it with null; a "
              "name after %s (%s_id) would confirm it too", r->ev.score, CONFIDENT_AT, from->ns,
              from->fields[r->field].path, to->ns, to->fields[r->key].path, to->coll, one);
}
