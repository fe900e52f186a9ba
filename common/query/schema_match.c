/* Matching a compiled $jsonSchema (query_schema.h) against a document, as
 * the server's validator judges it: each keyword tests the value it is
 * given whole, a type's keywords hold for values of other types, "enum"
 * and "uniqueItems" compare documents regardless of their fields' order
 * and numbers by value, "minLength" counts code points, "pattern" is
 * unanchored, "multipleOf" divides exactly in decimal (a double read with
 * its 15 significant digits, as the server converts it). Nothing here
 * allocates. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dec128.h"
#include "query_schema.h"
#include "remodel/value.h"

/* A value: an element, or (it NULL) the document being matched. */
typedef struct {
    const bson_iter_t *it;
    const uint8_t *doc;
    uint32_t len;
} sval_t;

static bool match_value (rm_qstate_t *st, const rm_qschema_t *s, const sval_t *v);

static bool
is_numeric (bson_type_t t)
{
    return t == BSON_TYPE_INT32 || t == BSON_TYPE_INT64 || t == BSON_TYPE_DOUBLE ||
           t == BSON_TYPE_DECIMAL128;
}

static bool
type_ok (const rm_qschema_t *s, bson_type_t t)
{
    if (s->numbers && is_numeric (t))
        return true;
    if (t == BSON_TYPE_MINKEY)
        return s->types & (1u << RM_QT_MINKEY);
    if (t == BSON_TYPE_MAXKEY)
        return s->types & (1u << RM_QT_MAXKEY);
    return (unsigned) t < 20 && (s->types & (1u << t));
}

/* ---- Equality (enum, uniqueItems) --------------------------------------------- */

static bool eq_values (const bson_iter_t *a, const bson_iter_t *b);

static uint32_t
count_fields (const uint8_t *data, uint32_t len)
{
    bson_iter_t e;
    uint32_t n = 0;
    if (bson_iter_init_from_data (&e, data, len))
        while (bson_iter_next (&e))
            n++;
    return n;
}

/* Documents with the same fields, in any order. */
static bool
eq_docs (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    bson_iter_t ea, eb;
    if (count_fields (a, alen) != count_fields (b, blen) || !bson_iter_init_from_data (&ea, a, alen))
        return false;
    while (bson_iter_next (&ea))
        if (!bson_iter_init_from_data (&eb, b, blen) || !bson_iter_find (&eb, bson_iter_key (&ea)) ||
            !eq_values (&ea, &eb))
            return false;
    return true;
}

static bool
eq_arrays (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    bson_iter_t ea, eb;
    if (!bson_iter_init_from_data (&ea, a, alen) || !bson_iter_init_from_data (&eb, b, blen))
        return false;
    for (;;) {
        bool na = bson_iter_next (&ea), nb = bson_iter_next (&eb);
        if (na != nb)
            return false;
        if (!na)
            return true;
        if (!eq_values (&ea, &eb))
            return false;
    }
}

static bool
eq_values (const bson_iter_t *a, const bson_iter_t *b)
{
    bson_type_t ta = bson_iter_type (a), tb = bson_iter_type (b);
    const uint8_t *da, *db;
    uint32_t la, lb;

    if (ta == BSON_TYPE_DOCUMENT && tb == BSON_TYPE_DOCUMENT) {
        bson_iter_document (a, &la, &da);
        bson_iter_document (b, &lb, &db);
        return eq_docs (da, la, db, lb);
    }
    if (ta == BSON_TYPE_ARRAY && tb == BSON_TYPE_ARRAY) {
        bson_iter_array (a, &la, &da);
        bson_iter_array (b, &lb, &db);
        return eq_arrays (da, la, db, lb);
    }
    return rm_value_canonical_type (ta) == rm_value_canonical_type (tb) &&
           rm_value_compare (a, b) == 0;
}

static bool
in_enum (const rm_qschema_t *s, const sval_t *v)
{
    bson_iter_t e;
    bson_iter_recurse (&s->enum_vals.it, &e);
    while (bson_iter_next (&e)) {
        if (v->it) {
            if (eq_values (v->it, &e))
                return true;
        } else if (BSON_ITER_HOLDS_DOCUMENT (&e)) {
            const uint8_t *d;
            uint32_t l;
            bson_iter_document (&e, &l, &d);
            if (eq_docs (v->doc, v->len, d, l))
                return true;
        }
    }
    return false;
}

/* ---- Objects ------------------------------------------------------------------ */

static bool
has_field (const uint8_t *doc, uint32_t len, const char *name)
{
    bson_iter_t e;
    return bson_iter_init_from_data (&e, doc, len) && bson_iter_find (&e, name);
}

/* properties, patternProperties, additionalProperties on one field. */
static bool
field_ok (rm_qstate_t *st, const rm_qschema_t *s, const bson_iter_t *f)
{
    const char *k = bson_iter_key (f);
    sval_t fv = {f, NULL, 0};
    bool named = false;

    for (size_t i = 0; i < s->nprops; i++)
        if (!strcmp (s->props[i].name, k)) {
            named = true;
            if (!match_value (st, s->props[i].s, &fv))
                return false;
        }
    for (size_t i = 0; i < s->npats; i++) {
        bool hit = rm_qregex_match (st, &s->pats[i].re, k, (uint32_t) strlen (k));
        if (st->failed)
            return false;
        if (hit) {
            named = true;
            if (!match_value (st, s->pats[i].s, &fv))
                return false;
        }
    }
    if (named || !(s->has & SK_ADDL_PROPS))
        return true;
    return s->addl_props ? match_value (st, s->addl_props, &fv) : s->addl_props_ok;
}

static bool
deps_ok (rm_qstate_t *st, const rm_qschema_t *s, const sval_t *v)
{
    for (size_t i = 0; i < s->ndeps; i++) {
        const rm_qsdep_t *d = &s->deps[i];
        if (!has_field (v->doc, v->len, d->name))
            continue;
        for (size_t j = 0; j < d->nnames; j++)
            if (!has_field (v->doc, v->len, d->names[j]))
                return false;
        if (d->s && !match_value (st, d->s, v))
            return false;
    }
    return true;
}

static bool
object_ok (rm_qstate_t *st, const rm_qschema_t *s, const sval_t *v)
{
    bson_iter_t f;
    int64_t n = 0;

    for (size_t i = 0; i < s->nrequired; i++)
        if (!has_field (v->doc, v->len, s->required[i]))
            return false;
    if (!bson_iter_init_from_data (&f, v->doc, v->len))
        return false;
    while (bson_iter_next (&f)) {
        n++;
        if (!field_ok (st, s, &f))
            return false;
    }
    if ((s->min_props >= 0 && n < s->min_props) || (s->max_props >= 0 && n > s->max_props))
        return false;
    return deps_ok (st, s, v);
}

/* ---- Arrays ------------------------------------------------------------------- */

static bool
element_ok (rm_qstate_t *st, const rm_qschema_t *s, const bson_iter_t *el, size_t i)
{
    sval_t ev = {el, NULL, 0};
    if (s->items)
        return match_value (st, s->items, &ev);
    if (!(s->has & SK_TUPLE))
        return true;
    if (i < s->ntuple)
        return match_value (st, s->tuple[i], &ev);
    /* additionalItems means something only beside items' array form */
    if (!(s->has & SK_ADDL_ITEMS))
        return true;
    return s->addl_items ? match_value (st, s->addl_items, &ev) : s->addl_items_ok;
}

static bool
unique_ok (const uint8_t *data, uint32_t len)
{
    bson_iter_t a, b;
    if (!bson_iter_init_from_data (&a, data, len))
        return false;
    while (bson_iter_next (&a)) {
        b = a;
        while (bson_iter_next (&b))
            if (eq_values (&a, &b))
                return false;
    }
    return true;
}

static bool
array_ok (rm_qstate_t *st, const rm_qschema_t *s, const bson_iter_t *v)
{
    const uint8_t *data;
    uint32_t len;
    bson_iter_t el;
    int64_t n = 0;

    bson_iter_array (v, &len, &data);
    if (!bson_iter_init_from_data (&el, data, len))
        return false;
    while (bson_iter_next (&el))
        if (!element_ok (st, s, &el, (size_t) n++))
            return false;
    if ((s->min_items >= 0 && n < s->min_items) || (s->max_items >= 0 && n > s->max_items))
        return false;
    return !s->unique_items || unique_ok (data, len);
}

/* ---- Strings and numbers ----------------------------------------------------------- */

static bool
string_ok (rm_qstate_t *st, const rm_qschema_t *s, const bson_iter_t *v)
{
    uint32_t len;
    const char *str = bson_iter_utf8 (v, &len);
    int64_t points = 0;

    if (s->min_len >= 0 || s->max_len >= 0) {
        for (uint32_t i = 0; i < len; i++)
            points += ((unsigned char) str[i] & 0xC0) != 0x80;
        if ((s->min_len >= 0 && points < s->min_len) || (s->max_len >= 0 && points > s->max_len))
            return false;
    }
    return !(s->has & SK_PATTERN) || rm_qregex_match (st, &s->pattern, str, len);
}

/* v against a bound: NaN is within a bound only when the bound is NaN
 * and inclusive, as the server's comparisons have it. */
static bool
bound_ok (const bson_iter_t *v, const bson_iter_t *bound, bool lower, bool exclusive)
{
    int c;
    if (rm_iter_is_nan (v) || rm_iter_is_nan (bound))
        return rm_iter_is_nan (v) && rm_iter_is_nan (bound) && !exclusive;
    c = rm_value_compare (v, bound);
    if (lower)
        return exclusive ? c > 0 : c >= 0;
    return exclusive ? c < 0 : c <= 0;
}

/* A number as a decimal coefficient and exponent (sign dropped). */
typedef struct {
    bool finite;
    unsigned __int128 c;
    int32_t e;
} dnum_t;

static dnum_t
dnum_of (const bson_iter_t *v)
{
    dnum_t r = {true, 0, 0};
    if (BSON_ITER_HOLDS_INT32 (v) || BSON_ITER_HOLDS_INT64 (v)) {
        int64_t x = BSON_ITER_HOLDS_INT32 (v) ? bson_iter_int32 (v) : bson_iter_int64 (v);
        r.c = x < 0 ? (uint64_t) 0 - (uint64_t) x : (uint64_t) x;
    } else if (BSON_ITER_HOLDS_DOUBLE (v)) {
        char buf[40];
        double d = bson_iter_double (v);
        int exp10 = 0;
        if (!isfinite (d)) {
            r.finite = false;
            return r;
        }
        /* 15 significant digits: d.dddddddddddddde±x */
        snprintf (buf, sizeof buf, "%.14e", fabs (d));
        for (const char *p = buf; *p && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9')
                r.c = r.c * 10 + (unsigned) (*p - '0');
        sscanf (strchr (buf, 'e') + 1, "%d", &exp10);
        r.e = exp10 - 14;
    } else {
        bson_decimal128_t d;
        rm_dec_t x;
        bson_iter_decimal128 (v, &d);
        rm_dec_unpack (&d, &x);
        r.finite = x.kind == RM_DEC_FINITE;
        r.c = ((unsigned __int128) x.hi << 64) | x.lo;
        r.e = x.exp;
    }
    return r;
}

/* Whether x is a whole multiple of d (d > 0), exactly in decimal. */
static bool
multiple_ok (const bson_iter_t *v, const bson_iter_t *div)
{
    dnum_t x = dnum_of (v), d = dnum_of (div);
    unsigned __int128 r, m;

    if (!x.finite)
        return false;
    if (!x.c)
        return true;
    if (!d.finite) /* x modulo infinity is x */
        return false;
    if (x.e >= d.e) {
        /* x.c * 10^(x.e - d.e) modulo d.c, one power of ten at a time */
        r = x.c % d.c;
        for (int32_t k = x.e - d.e; k > 0 && r; k--)
            r = r * 10 % d.c;
        return r == 0;
    }
    /* x.c modulo d.c * 10^(d.e - x.e), which is larger than x.c soon */
    m = d.c;
    for (int32_t k = d.e - x.e; k > 0; k--) {
        if (m > x.c)
            return false;
        m *= 10;
    }
    return m <= x.c && x.c % m == 0;
}

static bool
number_ok (const rm_qschema_t *s, const bson_iter_t *v)
{
    if ((s->has & SK_MIN) && !bound_ok (v, &s->minimum.it, true, s->excl_min))
        return false;
    if ((s->has & SK_MAX) && !bound_ok (v, &s->maximum.it, false, s->excl_max))
        return false;
    return !(s->has & SK_MULT) || multiple_ok (v, &s->multiple_of.it);
}

/* ---- A value ---------------------------------------------------------------------- */

static bool
logic_ok (rm_qstate_t *st, const rm_qschema_t *s, const sval_t *v)
{
    size_t hits = 0;
    for (size_t i = 0; i < s->nall; i++)
        if (!match_value (st, s->all_of[i], v))
            return false;
    if (s->nany) {
        size_t i = 0;
        while (i < s->nany && !match_value (st, s->any_of[i], v) && !st->failed)
            i++;
        if (i == s->nany || st->failed)
            return false;
    }
    for (size_t i = 0; i < s->none && !st->failed; i++)
        hits += match_value (st, s->one_of[i], v);
    if (s->none && hits != 1)
        return false;
    if (s->not_ && (match_value (st, s->not_, v) || st->failed))
        return false;
    return !st->failed;
}

static bool
typed_ok (rm_qstate_t *st, const rm_qschema_t *s, const sval_t *v, bson_type_t t)
{
    sval_t obj;
    switch (t) {
    case BSON_TYPE_DOCUMENT:
        if (!v->it)
            return object_ok (st, s, v);
        obj.it = v->it;
        bson_iter_document (v->it, &obj.len, &obj.doc);
        return object_ok (st, s, &obj);
    case BSON_TYPE_ARRAY: return array_ok (st, s, v->it);
    case BSON_TYPE_UTF8: return string_ok (st, s, v->it);
    default: return !is_numeric (t) || number_ok (s, v->it);
    }
}

static bool
match_value (rm_qstate_t *st, const rm_qschema_t *s, const sval_t *v)
{
    bson_type_t t = v->it ? bson_iter_type (v->it) : BSON_TYPE_DOCUMENT;

    if (st->failed)
        return false;
    if ((s->has & SK_TYPE) && !type_ok (s, t))
        return false;
    if ((s->has & SK_ENUM) && !in_enum (s, v))
        return false;
    if (!typed_ok (st, s, v, t) || st->failed)
        return false;
    return logic_ok (st, s, v);
}

bool
rm_qschema_match_doc (rm_qstate_t *st, const rm_qschema_t *s, const uint8_t *doc, uint32_t len)
{
    sval_t v = {NULL, doc, len};
    return match_value (st, s, &v);
}
