/* The query layer's internals: a query document compiled into a tree of
 * conditions (query_parse.c), matched against one document at a time
 * (query_match.c), with the regular expressions of $regex compiled once by
 * PCRE2 (query_regex.c), $jsonSchema by its own tree (query_schema.h). The tree follows the server's own
 * (src/mongo/db/matcher/): $ne, $nin, $not and {$exists: false} are a NOT
 * over the positive condition on the whole document, $all is an AND of
 * equalities on one path, {a: {$gt: 1, $lt: 5}} an AND of two leaves. */
#ifndef REMODEL_QUERY_IMPL_H
#define REMODEL_QUERY_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <bson/bson.h>

#include "remodel/docpath.h"
#include "remodel/expr.h"
#include "remodel/query.h"

typedef enum {
    /* logic over the conditions below */
    QN_AND,
    QN_OR,
    QN_NOR,
    QN_NOT,
    QN_FALSE, /* $all: [] */
    QN_EXPR,  /* $expr: over the whole document */
    QN_SCHEMA, /* $jsonSchema: over the whole document (query_schema.h) */
    /* leaves: a test of each value a path gives */
    QN_CMP,
    QN_IN,
    QN_EXISTS,
    QN_TYPE,
    QN_REGEX,
    QN_MOD,
    QN_SIZE,
    QN_BITS,
    QN_ELEM_OBJ, /* {$elemMatch: {a: 1}}: a query over each element */
    QN_ELEM_VAL, /* {$elemMatch: {$gt: 1}}: leaves over each element */
} rm_qkind_t;

#define RM_QN_LEAF(k) ((k) >= QN_CMP)

typedef enum { QC_EQ, QC_LT, QC_LTE, QC_GT, QC_GTE } rm_qcmp_t;
typedef enum { QB_ALL_SET, QB_ALL_CLEAR, QB_ANY_SET, QB_ANY_CLEAR } rm_qbits_t;

/* $type's set: one bit per BSON type number 0 to 19 (0 is a missing
 * value, as the server's EOO), then MinKey and MaxKey. */
#define RM_QT_MINKEY 20
#define RM_QT_MAXKEY 21

typedef struct {
    pcre2_code *code;
    char *pattern, *flags; /* as written: a stored regex equals only these */
} rm_qregex_t;

/* libbson gives bson_iter_t an alignment of 128 but a size of 80: an
 * array of them is misaligned, an array of these is not. */
typedef struct {
    _Alignas (128) bson_iter_t it;
} rm_qiter_t;

typedef struct rm_qnode rm_qnode_t;
struct rm_qnode {
    rm_qkind_t kind;
    int op;          /* rm_qcmp_t, rm_qbits_t */
    rm_path_t *path; /* a leaf's; NULL for one inside {$elemMatch: {$op: ...}} */
    /* $size and $elemMatch see an array at the end of the path whole,
     * never its elements one by one (the server's kNoTraversal). */
    bool leaf_whole;
    rm_qnode_t **kids; /* logic's operands; $in's regexes; $elemMatch's conditions */
    size_t n;
    bson_iter_t rhs;      /* QN_CMP: into the query's copy */
    bson_value_t rhs_value; /* QN_CMP: rhs's value, decoded once at parse */
    rm_qiter_t *set;      /* QN_IN: its values, sorted, distinct */
    size_t nset;
    bool has_null;        /* QN_IN: null is listed (missing matches) */
    uint32_t types;       /* QN_TYPE */
    bool numbers;         /* QN_TYPE: "number" */
    int64_t div, rem;     /* QN_MOD */
    int64_t size;         /* QN_SIZE */
    uint64_t mask;        /* QN_BITS, for numbers (positions past 63 test the sign) */
    uint32_t *bits;       /* QN_BITS, for BinData: the positions */
    size_t nbits;
    rm_qregex_t re;       /* QN_REGEX */
    rm_expr_t *expr;      /* QN_EXPR */
    struct rm_qschema *schema; /* QN_SCHEMA */
};

/* A top-level field's condition, for rm_query_needs_fields. */
typedef struct {
    rm_path_t *path;
    rm_qnode_t *node;
    bool needed; /* it fails on the empty document: found once, at parse */
} rm_qtop_t;

struct rm_query {
    bson_t *src; /* the query's own copy: the iterators of the tree point into it */
    rm_qnode_t *root;
    rm_qtop_t *tops;
    size_t ntops;
    rm_path_t **paths; /* every path of the tree, owned here */
    size_t npaths;
    pcre2_match_context *mctx; /* the limits of every match */
};

/* The state of one rm_query_match: regular expressions match in memory of
 * its stack (a heap block only past that, for a pattern that backtracks
 * deeply), and a failure (an $expr's error, a regex past its limits)
 * stops the match with err set. */
#define RM_QARENA 40960
typedef struct {
    const rm_query_t *q;
    rm_expr_ctx_t *cx;
    const uint8_t *root; /* the whole document, for $expr */
    uint32_t root_len;
    bson_error_t *err;
    bool failed;
    pcre2_general_context *gcx;
    pcre2_match_data *md;
    size_t used;
    _Alignas (16) unsigned char arena[RM_QARENA];
} rm_qstate_t;

/* query_regex.c */
bool rm_qregex_compile (rm_qregex_t *re, const char *pattern, size_t len, const char *flags,
                        bson_error_t *err);
void rm_qregex_destroy (rm_qregex_t *re);
pcre2_match_context *rm_qregex_limits (void);
/* Whether the string s (len bytes) matches; a match past the limits sets
 * st->failed and err. */
bool rm_qregex_match (rm_qstate_t *st, const rm_qregex_t *re, const char *s, uint32_t len);
void rm_qstate_done (rm_qstate_t *st);

/* query_match.c */
bool rm_qmatch_doc (rm_qstate_t *st, const rm_qnode_t *n, const uint8_t *doc, uint32_t len);
bool rm_qtop_needed (const rm_query_t *q, size_t i);
/* A number as an int64: truncated toward zero, or (exact) only if it has
 * no fraction; false for a non-number, NaN, infinities, out of range. */
bool rm_qnum_i64 (const bson_iter_t *v, bool exact, int64_t *out);

#endif
