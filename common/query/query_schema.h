/* $jsonSchema inside the query layer: a schema compiled into a tree
 * (schema_parse.c) and matched against the whole document
 * (schema_match.c), with the rules of the server's JSON Schema support
 * (draft 4 with its omissions, plus bsonType). Unlike a query's leaves, a
 * schema never walks into arrays on its own: "properties" sees a field's
 * value whole, and only "items" looks at elements. A keyword that belongs
 * to one type (minimum to numbers, pattern to strings, properties to
 * objects) holds for a value of any other type; "type" and "bsonType"
 * restrict the type. Internal to common/query. */
#ifndef REMODEL_QUERY_SCHEMA_H
#define REMODEL_QUERY_SCHEMA_H

#include "query_impl.h"

typedef struct rm_qschema rm_qschema_t;

typedef struct {
    const char *name; /* into the query's copy */
    rm_qschema_t *s;
} rm_qsprop_t;

typedef struct {
    rm_qregex_t re;
    rm_qschema_t *s;
} rm_qspat_t;

/* dependencies: the field's presence asks for these fields, or for the
 * object to satisfy s. */
typedef struct {
    const char *name;
    const char **names;
    size_t nnames;
    rm_qschema_t *s;
} rm_qsdep_t;

/* The keywords present, as bits of has. */
enum {
    SK_TYPE = 1u << 0,
    SK_MIN = 1u << 1,
    SK_MAX = 1u << 2,
    SK_MULT = 1u << 3,
    SK_ENUM = 1u << 4,
    SK_PATTERN = 1u << 5,
    SK_ADDL_PROPS = 1u << 6, /* additionalProperties: a boolean or addl_props */
    SK_ADDL_ITEMS = 1u << 7, /* additionalItems: a boolean or addl_items */
    SK_TUPLE = 1u << 8,      /* items is an array */
};

struct rm_qschema {
    /* iterators into the query's copy: minimum, maximum, multipleOf, enum */
    rm_qiter_t minimum, maximum, multiple_of, enum_vals;
    uint32_t has;
    uint32_t types;   /* one bit per BSON type, as $type's set (query_impl.h) */
    bool numbers;     /* "number" */
    bool excl_min, excl_max, unique_items;
    bool addl_props_ok, addl_items_ok; /* the boolean forms */
    int64_t min_props, max_props, min_items, max_items, min_len, max_len; /* -1: absent */
    const char **required;
    size_t nrequired;
    rm_qsprop_t *props;
    size_t nprops;
    rm_qspat_t *pats;
    size_t npats;
    rm_qschema_t *addl_props, *items, *addl_items, *not_;
    rm_qschema_t **tuple, **all_of, **any_of, **one_of;
    size_t ntuple, nall, nany, none;
    rm_qsdep_t *deps;
    size_t ndeps;
    rm_qregex_t pattern;
};

/* schema_parse.c: the schema at it (the value of $jsonSchema), or NULL
 * with err set (RM_ERR_USAGE, the server's wording where it has one). */
rm_qschema_t *rm_qschema_parse (const bson_iter_t *it, bson_error_t *err);
void rm_qschema_destroy (rm_qschema_t *s);

/* schema_match.c: whether the document satisfies the schema. */
bool rm_qschema_match_doc (rm_qstate_t *st, const rm_qschema_t *s, const uint8_t *doc,
                           uint32_t len);

#endif
