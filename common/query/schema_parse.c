/* Compiling a $jsonSchema into a tree (query_schema.h), with the server's
 * checks and messages: every keyword of draft 4 it supports, bsonType
 * beside type (never both), "integer" refused as the server refuses it,
 * the keywords it omits ($ref, $schema, default, definitions, format, id)
 * refused by name, title and description accepted and ignored. Each
 * keyword is checked here, so that matching never meets a malformed one. */
#include <stdlib.h>
#include <string.h>

#include "query_schema.h"
#include "remodel/value.h"

/* Schemas nested deeper than this are refused: hostile input must not
 * exhaust the stack of the parser or a match. */
#define MAX_DEPTH 100

typedef struct {
    bson_error_t *err;
    int depth;
} sctx_t;

static rm_qschema_t *parse_schema (sctx_t *c, const bson_iter_t *obj);

static bool
fail (sctx_t *c, const char *fmt, const char *a, const char *b)
{
    rm_error_set (c->err, RM_ERR_USAGE, fmt, a, b);
    return false;
}

/* ---- Types ----------------------------------------------------------------- */

/* bsonType's names: $type's aliases (no numbers), and "number". */
static bool
bson_type_add (rm_qschema_t *s, const char *name)
{
    static const char *const names[] = {
        NULL, "double", "string", "object", "array", "binData", "undefined", "objectId", "bool",
        "date", "null", "regex", "dbPointer", "javascript", "symbol", "javascriptWithScope", "int",
        "timestamp", "long", "decimal",
    };
    if (!strcmp (name, "number")) {
        s->numbers = true;
        return true;
    }
    if (!strcmp (name, "minKey") || !strcmp (name, "maxKey")) {
        s->types |= 1u << (name[1] == 'i' ? RM_QT_MINKEY : RM_QT_MAXKEY);
        return true;
    }
    for (unsigned i = 1; i < 20; i++)
        if (!strcmp (name, names[i])) {
            s->types |= 1u << i;
            return true;
        }
    return false;
}

/* type's names: JSON's, which are fewer ("boolean", no "integer"). */
static bool
json_type_add (sctx_t *c, rm_qschema_t *s, const char *name)
{
    static const struct {
        const char *name;
        bson_type_t t;
    } names[] = {
        {"object", BSON_TYPE_DOCUMENT}, {"array", BSON_TYPE_ARRAY}, {"boolean", BSON_TYPE_BOOL},
        {"string", BSON_TYPE_UTF8},     {"null", BSON_TYPE_NULL},
    };
    if (!strcmp (name, "number")) {
        s->numbers = true;
        return true;
    }
    if (!strcmp (name, "integer"))
        return fail (c, "$jsonSchema type '%s' is not currently supported.%s", name, "");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp (name, names[i].name)) {
            s->types |= 1u << names[i].t;
            return true;
        }
    return fail (c, "Unknown JSON Schema alias: %s%s", name, "");
}

static bool
type_one (sctx_t *c, rm_qschema_t *s, const char *kw, const char *name)
{
    if (!strcmp (kw, "type"))
        return json_type_add (c, s, name);
    if (!bson_type_add (s, name))
        return fail (c, "Unknown type name alias: %s%s", name, "");
    return true;
}

/* type or bsonType: a name or a non-empty array of distinct names. */
static bool
parse_type (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v, const char *kw)
{
    bson_iter_t e, f;

    if (s->has & SK_TYPE)
        return fail (c, "Cannot specify both $jsonSchema keywords '%s' and '%s'", "type", "bsonType");
    s->has |= SK_TYPE;
    if (BSON_ITER_HOLDS_UTF8 (v))
        return type_one (c, s, kw, bson_iter_utf8 (v, NULL));
    if (!BSON_ITER_HOLDS_ARRAY (v))
        return fail (c, "$jsonSchema keyword '%s' must be either a string or an array of strings%s",
                     kw, "");
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        if (!BSON_ITER_HOLDS_UTF8 (&e))
            return fail (c, "$jsonSchema keyword '%s' array elements must be strings%s", kw, "");
        f = e;
        while (bson_iter_next (&f))
            if (BSON_ITER_HOLDS_UTF8 (&f) &&
                !strcmp (bson_iter_utf8 (&e, NULL), bson_iter_utf8 (&f, NULL)))
                return fail (c, "$jsonSchema keyword '%s' has duplicate value: %s", kw,
                             bson_iter_utf8 (&e, NULL));
        if (!type_one (c, s, kw, bson_iter_utf8 (&e, NULL)))
            return false;
    }
    if (!s->types && !s->numbers)
        return fail (c, "$jsonSchema keyword '%s' must name at least one type%s", kw, "");
    return true;
}

/* ---- Scalars ---------------------------------------------------------------- */

/* minItems and the like: a whole number, not negative. */
static bool
parse_count (sctx_t *c, const bson_iter_t *v, const char *kw, int64_t *out)
{
    if (!rm_iter_is_number (v))
        return fail (c, "$jsonSchema keyword '%s' must be a number%s", kw, "");
    if (!rm_qnum_i64 (v, true, out))
        return fail (c, "$jsonSchema keyword '%s' must be representable as a long integer%s", kw,
                     "");
    if (*out < 0)
        return fail (c, "$jsonSchema keyword '%s' must be a non-negative integer%s", kw, "");
    return true;
}

static bool
parse_bool (sctx_t *c, const bson_iter_t *v, const char *kw, bool *out)
{
    if (!BSON_ITER_HOLDS_BOOL (v))
        return fail (c, "$jsonSchema keyword '%s' must be a boolean%s", kw, "");
    *out = bson_iter_bool (v);
    return true;
}

static bool
parse_number (sctx_t *c, const bson_iter_t *v, const char *kw, rm_qiter_t *out)
{
    if (!rm_iter_is_number (v))
        return fail (c, "$jsonSchema keyword '%s' must be a number%s", kw, "");
    out->it = *v;
    return true;
}

static bool
parse_multiple_of (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v)
{
    static const uint8_t zero[] = {12, 0, 0, 0, 0x10, 'z', 0, 0, 0, 0, 0, 0}; /* {z: 0} */
    bson_iter_t z;

    if (!parse_number (c, v, "multipleOf", &s->multiple_of))
        return false;
    if (!bson_iter_init_from_data (&z, zero, sizeof zero) || !bson_iter_next (&z))
        return fail (c, "out of memory%s%s", "", "");
    /* NaN sorts below every number: it is refused with the rest */
    if (rm_value_compare (v, &z) <= 0)
        return fail (c, "$jsonSchema keyword '%s' must have a positive value%s", "multipleOf", "");
    s->has |= SK_MULT;
    return true;
}

/* ---- Names ------------------------------------------------------------------ */

/* required and a dependency's list: a non-empty array of distinct strings. */
static bool
parse_names (sctx_t *c, const bson_iter_t *v, const char *kw, const char ***out, size_t *n)
{
    bson_iter_t e;

    if (!BSON_ITER_HOLDS_ARRAY (v))
        return fail (c, "$jsonSchema keyword '%s' must be an array%s", kw, "");
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        const char *name;
        if (!BSON_ITER_HOLDS_UTF8 (&e))
            return fail (c, "$jsonSchema keyword '%s' must contain only strings%s", kw, "");
        name = bson_iter_utf8 (&e, NULL);
        for (size_t i = 0; i < *n; i++)
            if (!strcmp ((*out)[i], name))
                return fail (c, "$jsonSchema keyword '%s' array cannot contain duplicate values%s",
                             kw, "");
        *out = bson_realloc (*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = name;
    }
    if (!*n)
        return fail (c, "$jsonSchema keyword '%s' cannot be an empty array%s", kw, "");
    return true;
}

static bool
parse_enum (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_ARRAY (v))
        return fail (c, "$jsonSchema keyword '%s' must be an array%s", "enum", "");
    bson_iter_recurse (v, &e);
    if (!bson_iter_next (&e))
        return fail (c, "$jsonSchema keyword '%s' cannot be an empty array%s", "enum", "");
    s->enum_vals.it = *v;
    s->has |= SK_ENUM;
    return true;
}

static bool
parse_pattern (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v)
{
    uint32_t len;
    const char *p;
    if (!BSON_ITER_HOLDS_UTF8 (v))
        return fail (c, "$jsonSchema keyword '%s' must be a string%s", "pattern", "");
    p = bson_iter_utf8 (v, &len);
    if (!rm_qregex_compile (&s->pattern, p, len, "", c->err)) {
        rm_error_prefix (c->err, "$jsonSchema keyword 'pattern'");
        return false;
    }
    s->has |= SK_PATTERN;
    return true;
}

/* ---- Subschemas --------------------------------------------------------------- */

static rm_qschema_t *
sub_schema (sctx_t *c, const bson_iter_t *v, const char *kw)
{
    if (!BSON_ITER_HOLDS_DOCUMENT (v)) {
        fail (c, "$jsonSchema keyword '%s' must be an object%s", kw, "");
        return NULL;
    }
    return parse_schema (c, v);
}

/* allOf, anyOf, oneOf and items' array form: schemas, a non-empty array
 * of them for the logic. */
static bool
parse_list (sctx_t *c, const bson_iter_t *v, const char *kw, bool may_be_empty,
            rm_qschema_t ***out, size_t *n)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_ARRAY (v))
        return fail (c, "$jsonSchema keyword '%s' must be an array%s", kw, "");
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        rm_qschema_t *sub;
        if (!BSON_ITER_HOLDS_DOCUMENT (&e))
            return fail (c, "$jsonSchema keyword '%s' must be an array of objects%s", kw, "");
        sub = parse_schema (c, &e);
        if (!sub)
            return false;
        *out = bson_realloc (*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = sub;
    }
    if (!*n && !may_be_empty)
        return fail (c, "$jsonSchema keyword '%s' must be a non-empty array%s", kw, "");
    return true;
}

static bool
parse_properties (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_DOCUMENT (v))
        return fail (c, "$jsonSchema keyword '%s' must be an object%s", "properties", "");
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        rm_qschema_t *sub;
        if (!BSON_ITER_HOLDS_DOCUMENT (&e))
            return fail (c, "Nested schema for $jsonSchema property '%s' must be an object%s",
                         bson_iter_key (&e), "");
        sub = parse_schema (c, &e);
        if (!sub)
            return false;
        s->props = bson_realloc (s->props, (s->nprops + 1) * sizeof *s->props);
        s->props[s->nprops].name = bson_iter_key (&e);
        s->props[s->nprops++].s = sub;
    }
    return true;
}

static bool
parse_pattern_properties (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_DOCUMENT (v))
        return fail (c, "$jsonSchema keyword '%s' must be an object%s", "patternProperties", "");
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        rm_qspat_t *p;
        const char *k = bson_iter_key (&e);
        if (!BSON_ITER_HOLDS_DOCUMENT (&e))
            return fail (c, "Nested schema for $jsonSchema property '%s' must be an object%s", k,
                         "");
        s->pats = bson_realloc (s->pats, (s->npats + 1) * sizeof *s->pats);
        p = &s->pats[s->npats];
        memset (p, 0, sizeof *p);
        if (!rm_qregex_compile (&p->re, k, strlen (k), "", c->err)) {
            rm_error_prefix (c->err, "$jsonSchema keyword 'patternProperties'");
            return false;
        }
        s->npats++;
        p->s = parse_schema (c, &e);
        if (!p->s)
            return false;
    }
    return true;
}

/* additionalProperties and additionalItems: a boolean or a schema. */
static bool
parse_additional (sctx_t *c, const bson_iter_t *v, const char *kw, bool *ok, rm_qschema_t **out)
{
    if (BSON_ITER_HOLDS_BOOL (v)) {
        *ok = bson_iter_bool (v);
        return true;
    }
    if (!BSON_ITER_HOLDS_DOCUMENT (v))
        return fail (c, "$jsonSchema keyword '%s' must be either an object or a boolean%s", kw, "");
    *out = parse_schema (c, v);
    return *out != NULL;
}

static bool
parse_items (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v)
{
    if (BSON_ITER_HOLDS_ARRAY (v)) {
        s->has |= SK_TUPLE;
        return parse_list (c, v, "items", true, &s->tuple, &s->ntuple);
    }
    if (!BSON_ITER_HOLDS_DOCUMENT (v))
        return fail (c, "$jsonSchema keyword '%s' must be an array or an object%s", "items", "");
    s->items = parse_schema (c, v);
    return s->items != NULL;
}

static bool
parse_dependencies (sctx_t *c, rm_qschema_t *s, const bson_iter_t *v)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_DOCUMENT (v))
        return fail (c, "$jsonSchema keyword '%s' must be an object%s", "dependencies", "");
    bson_iter_recurse (v, &e);
    while (bson_iter_next (&e)) {
        rm_qsdep_t *d;
        s->deps = bson_realloc (s->deps, (s->ndeps + 1) * sizeof *s->deps);
        d = &s->deps[s->ndeps++];
        memset (d, 0, sizeof *d);
        d->name = bson_iter_key (&e);
        if (BSON_ITER_HOLDS_DOCUMENT (&e)) {
            d->s = parse_schema (c, &e);
            if (!d->s)
                return false;
        } else if (BSON_ITER_HOLDS_ARRAY (&e)) {
            if (!parse_names (c, &e, "dependencies", &d->names, &d->nnames))
                return false;
        } else {
            return fail (c, "property '%s' in $jsonSchema keyword 'dependencies' must be either an "
                            "object or an array%s",
                         d->name, "");
        }
    }
    return true;
}

/* ---- Keywords ------------------------------------------------------------------- */

typedef enum {
    K_TYPE, K_BSONTYPE, K_REQUIRED, K_PROPERTIES, K_ADDL_PROPS, K_PATTERN_PROPS, K_MIN_PROPS,
    K_MAX_PROPS, K_ITEMS, K_ADDL_ITEMS, K_MIN_ITEMS, K_MAX_ITEMS, K_UNIQUE, K_ENUM, K_MINIMUM,
    K_MAXIMUM, K_EXCL_MIN, K_EXCL_MAX, K_MULTIPLE_OF, K_MIN_LEN, K_MAX_LEN, K_PATTERN, K_ALL_OF,
    K_ANY_OF, K_ONE_OF, K_NOT, K_DEPENDENCIES, K_TITLE, K_DESCRIPTION, K_COUNT
} kw_t;

static const char *const keywords[K_COUNT] = {
    "type", "bsonType", "required", "properties", "additionalProperties", "patternProperties",
    "minProperties", "maxProperties", "items", "additionalItems", "minItems", "maxItems",
    "uniqueItems", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "pattern", "allOf", "anyOf", "oneOf", "not",
    "dependencies", "title", "description",
};

/* The keywords of JSON Schema that the server leaves out. */
static const char *const omitted[] = {
    "$ref", "$schema", "default", "definitions", "format", "id", "encrypt", "encryptMetadata", NULL,
};

static bool
parse_keyword (sctx_t *c, rm_qschema_t *s, kw_t k, const bson_iter_t *v)
{
    const char *kw = keywords[k];
    switch (k) {
    case K_TYPE:
    case K_BSONTYPE: return parse_type (c, s, v, kw);
    case K_REQUIRED: return parse_names (c, v, kw, &s->required, &s->nrequired);
    case K_PROPERTIES: return parse_properties (c, s, v);
    case K_ADDL_PROPS:
        s->has |= SK_ADDL_PROPS;
        return parse_additional (c, v, kw, &s->addl_props_ok, &s->addl_props);
    case K_PATTERN_PROPS: return parse_pattern_properties (c, s, v);
    case K_MIN_PROPS: return parse_count (c, v, kw, &s->min_props);
    case K_MAX_PROPS: return parse_count (c, v, kw, &s->max_props);
    case K_ITEMS: return parse_items (c, s, v);
    case K_ADDL_ITEMS:
        s->has |= SK_ADDL_ITEMS;
        return parse_additional (c, v, kw, &s->addl_items_ok, &s->addl_items);
    case K_MIN_ITEMS: return parse_count (c, v, kw, &s->min_items);
    case K_MAX_ITEMS: return parse_count (c, v, kw, &s->max_items);
    case K_UNIQUE: return parse_bool (c, v, kw, &s->unique_items);
    case K_ENUM: return parse_enum (c, s, v);
    case K_MINIMUM: s->has |= SK_MIN; return parse_number (c, v, kw, &s->minimum);
    case K_MAXIMUM: s->has |= SK_MAX; return parse_number (c, v, kw, &s->maximum);
    case K_EXCL_MIN: return parse_bool (c, v, kw, &s->excl_min);
    case K_EXCL_MAX: return parse_bool (c, v, kw, &s->excl_max);
    case K_MULTIPLE_OF: return parse_multiple_of (c, s, v);
    case K_MIN_LEN: return parse_count (c, v, kw, &s->min_len);
    case K_MAX_LEN: return parse_count (c, v, kw, &s->max_len);
    case K_PATTERN: return parse_pattern (c, s, v);
    case K_ALL_OF: return parse_list (c, v, kw, false, &s->all_of, &s->nall);
    case K_ANY_OF: return parse_list (c, v, kw, false, &s->any_of, &s->nany);
    case K_ONE_OF: return parse_list (c, v, kw, false, &s->one_of, &s->none);
    case K_NOT: return (s->not_ = sub_schema (c, v, kw)) != NULL;
    case K_DEPENDENCIES: return parse_dependencies (c, s, v);
    default: /* title, description: notes for people */
        if (!BSON_ITER_HOLDS_UTF8 (v))
            return fail (c, "$jsonSchema keyword '%s' must be of type string%s", kw, "");
        return true;
    }
}

static bool
lookup_keyword (sctx_t *c, const char *name, kw_t *k)
{
    for (int i = 0; i < K_COUNT; i++)
        if (!strcmp (name, keywords[i])) {
            *k = (kw_t) i;
            return true;
        }
    for (size_t i = 0; omitted[i]; i++)
        if (!strcmp (name, omitted[i]))
            return fail (c, "$jsonSchema keyword '%s' is not currently supported%s", name, "");
    return fail (c, "Unknown $jsonSchema keyword: %s%s", name, "");
}

/* The exclusive bounds mean nothing alone (draft 4). */
static bool
check_bounds (sctx_t *c, const rm_qschema_t *s, const bool seen[K_COUNT])
{
    if (seen[K_EXCL_MIN] && !(s->has & SK_MIN))
        return fail (c, "$jsonSchema keyword '%s' must be a present if %s is present", "minimum",
                     "exclusiveMinimum");
    if (seen[K_EXCL_MAX] && !(s->has & SK_MAX))
        return fail (c, "$jsonSchema keyword '%s' must be a present if %s is present", "maximum",
                     "exclusiveMaximum");
    return true;
}

static rm_qschema_t *
schema_new (void)
{
    size_t align = _Alignof (rm_qschema_t);
    rm_qschema_t *s = aligned_alloc (align, (sizeof *s + align - 1) / align * align);
    if (!s)
        abort ();
    memset (s, 0, sizeof *s);
    s->min_props = s->max_props = s->min_items = s->max_items = s->min_len = s->max_len = -1;
    return s;
}

static rm_qschema_t *
parse_schema (sctx_t *c, const bson_iter_t *obj)
{
    rm_qschema_t *s;
    bool seen[K_COUNT] = {false};
    bson_iter_t e;

    if (++c->depth > MAX_DEPTH) {
        fail (c, "$jsonSchema is nested more than %s levels deep%s", "100", "");
        return NULL;
    }
    s = schema_new ();
    bson_iter_recurse (obj, &e);
    while (bson_iter_next (&e)) {
        kw_t k;
        if (!lookup_keyword (c, bson_iter_key (&e), &k))
            goto fail;
        if (seen[k]) {
            fail (c, "Duplicate $jsonSchema keyword: %s%s", keywords[k], "");
            goto fail;
        }
        seen[k] = true;
        if (!parse_keyword (c, s, k, &e))
            goto fail;
    }
    if (!check_bounds (c, s, seen))
        goto fail;
    c->depth--;
    return s;
fail:
    rm_qschema_destroy (s);
    return NULL;
}

rm_qschema_t *
rm_qschema_parse (const bson_iter_t *it, bson_error_t *err)
{
    sctx_t c = {err, 0};
    if (!BSON_ITER_HOLDS_DOCUMENT (it)) {
        rm_error_set (err, RM_ERR_USAGE, "$jsonSchema must be an object");
        return NULL;
    }
    return parse_schema (&c, it);
}

static void
destroy_list (rm_qschema_t **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rm_qschema_destroy (list[i]);
    bson_free (list);
}

void
rm_qschema_destroy (rm_qschema_t *s)
{
    if (!s)
        return;
    bson_free (s->required);
    for (size_t i = 0; i < s->nprops; i++)
        rm_qschema_destroy (s->props[i].s);
    bson_free (s->props);
    for (size_t i = 0; i < s->npats; i++) {
        rm_qregex_destroy (&s->pats[i].re);
        rm_qschema_destroy (s->pats[i].s);
    }
    bson_free (s->pats);
    for (size_t i = 0; i < s->ndeps; i++) {
        bson_free (s->deps[i].names);
        rm_qschema_destroy (s->deps[i].s);
    }
    bson_free (s->deps);
    rm_qschema_destroy (s->addl_props);
    rm_qschema_destroy (s->items);
    rm_qschema_destroy (s->addl_items);
    rm_qschema_destroy (s->not_);
    destroy_list (s->tuple, s->ntuple);
    destroy_list (s->all_of, s->nall);
    destroy_list (s->any_of, s->nany);
    destroy_list (s->one_of, s->none);
    rm_qregex_destroy (&s->pattern);
    free (s);
}
