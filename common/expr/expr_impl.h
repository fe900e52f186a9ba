/* The expression layer's insides (remodel/expr.h is its face): the
 * compiled tree, the operator rows each family file contributes, and the
 * helpers every operator uses to evaluate its arguments, build values and
 * say what went wrong. Private to common/expr/ and the layers above.
 *
 * An operator family is one file (expr_arith.c, expr_string.c, ...) that
 * defines its evaluators and one table of rows, rm_xops_FAMILY[], ended by
 * a row with a NULL name; expr_table.c lists the tables. */
#ifndef REMODEL_EXPR_IMPL_H
#define REMODEL_EXPR_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

#include "remodel/buf.h"
#include "remodel/docpath.h"
#include "remodel/error.h"
#include "remodel/expr.h"

/* The server's own limit on nesting. */
#define RM_X_MAX_DEPTH 150
/* The longest string an operator builds: a document (16 MiB) could not
 * hold a longer one. */
#define RM_X_MAX_STRING (16 * 1024 * 1024)
/* Variables in scope at once ($let, $map, $filter, $reduce, ... nest). */
#define RM_X_MAX_VARS 64

/* The variables every expression sees, as negative slots. */
enum { RM_XVAR_ROOT = -1, RM_XVAR_CURRENT = -2, RM_XVAR_REMOVE = -3, RM_XVAR_NOW = -4 };

typedef enum {
    RM_X_CONST,  /* konst */
    RM_X_PATH,   /* "$a.b": path over $$CURRENT */
    RM_X_VAR,    /* "$$name" or "$$name.a.b": var (slot), path when has_path */
    RM_X_OBJECT, /* {"name": expr, ...}: names[i], args[i] */
    RM_X_ARRAY,  /* [expr, ...]: args[i] */
    RM_X_OP,     /* {"$op": ...}: op, args (by position, or by op->named) */
} rm_xkind_t;

typedef struct rm_xop rm_xop_t;
typedef struct rm_xparse rm_xparse_t;

struct rm_expr {
    rm_xkind_t kind;
    const rm_xop_t *op;
    size_t n;
    rm_expr_t **args;     /* n of them; a named operator's absent ones NULL */
    char **names;         /* RM_X_OBJECT: the field names */
    bson_value_t konst;   /* RM_X_CONST: owned */
    int var;              /* RM_X_VAR: a slot >= 0, or RM_XVAR_* */
    bool has_path;
    rm_path_t path;       /* RM_X_PATH; RM_X_VAR with has_path */
    /* What an operator compiled once (a regex, a time zone, a constant
     * format): freed with data_free. */
    void *data;
    void (*data_free) (void *data);
    int ivar[2];          /* slots an operator binds ($map's "as", $reduce's
                           * $$this and $$value) */
};

/* An operator's evaluator: out is its value; false with err on an error. */
typedef bool (*rm_xop_eval_fn) (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out,
                                bson_error_t *err);
/* An operator's own parser, where the generic one will not do: it reads
 * arg (the value after "$op") into e (kind, op and the rest set by the
 * caller); args with rm_xparse_expr. */
typedef bool (*rm_xop_parse_fn) (rm_xparse_t *p, const bson_iter_t *arg, rm_expr_t *e,
                                 bson_error_t *err);
/* An optional check once parsed (constant arguments, a regex compiled). */
typedef bool (*rm_xop_check_fn) (rm_xparse_t *p, rm_expr_t *e, bson_error_t *err);

struct rm_xop {
    const char *name;        /* "$concat" */
    rm_xop_eval_fn eval;
    /* The positional form (named NULL): its argument is an array of
     * expressions, or one expression standing for an array of one. At
     * least min_args, at most max_args (-1: any number). */
    int min_args, max_args;
    /* The named form: its argument is a document of these keys (a '*'
     * first marks a required one; at most 8); args[i] is named[i]'s
     * expression, NULL when absent. */
    const char *named[9];
    rm_xop_parse_fn parse;   /* NULL: the generic parsers above */
    rm_xop_check_fn check;   /* NULL: none */
};

/* The family tables (expr_table.c lists them). */
extern const rm_xop_t rm_xops_core[];    /* expr_core.c: $literal, $let, $cond, logic, comparisons */
extern const rm_xop_t rm_xops_arith[];   /* expr_arith.c */
extern const rm_xop_t rm_xops_convert[]; /* expr_convert.c: $type, $convert, $toX */
extern const rm_xop_t rm_xops_string[];  /* expr_string.c */
extern const rm_xop_t rm_xops_regex[];   /* expr_regex.c */
extern const rm_xop_t rm_xops_date[];    /* expr_date.c */
extern const rm_xop_t rm_xops_array[];   /* expr_array.c */
extern const rm_xop_t rm_xops_object[];  /* expr_object.c: objects and sets */
/* The operators refused by name, with why (expr_table.c). */
const char *rm_xop_refused (const char *name);
const rm_xop_t *rm_xop_find (const char *name);

/* ---- Parsing (expr_parse.c) ---- */

struct rm_xparse {
    const char *vars[RM_X_MAX_VARS]; /* the names in scope, innermost last */
    int n_vars;
    int depth;
    /* The catalogue (expr_table.c's rm_xop_find, rm_xop_refused), given
     * by the entry point: the families call the parser, so the parser
     * may not call the table that lists them. */
    const rm_xop_t *(*find) (const char *name);
    const char *(*refused) (const char *name);
};

/* Compiles the expression at it into *out. */
bool rm_xparse_expr (rm_xparse_t *p, const bson_iter_t *it, rm_expr_t **out, bson_error_t *err);
/* Brings a variable into scope: its slot, or -1 with err (a bad name, too
 * many). rm_xparse_unbind(p, k) takes the last k out again. */
int rm_xparse_bind (rm_xparse_t *p, const char *name, bson_error_t *err);
void rm_xparse_unbind (rm_xparse_t *p, int k);
/* A parse error naming the operator: "$op: REASON" (RM_ERR_USAGE). */
bool rm_xparse_fail (bson_error_t *err, const rm_expr_t *e, const char *fmt, ...)
    BSON_GNUC_PRINTF (3, 4);
/* A new node (zeroed; kind set). */
rm_expr_t *rm_xnode_new (rm_xkind_t kind);
/* Room for n arguments, zeroed. */
void rm_xnode_args (rm_expr_t *e, size_t n);

/* ---- Evaluating (expr_eval.c) ---- */

/* Evaluates a sub-expression (NULL: missing). */
bool rm_xeval (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *out, bson_error_t *err);
/* Evaluates every argument of e into vals (room for e->n); _n the first n. */
bool rm_xeval_args (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *vals, bson_error_t *err);
bool rm_xeval_args_n (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_value_t *vals, size_t n,
                      bson_error_t *err);
/* Room for n values in memory of cx, for an operator's arguments. */
bson_value_t *rm_xvals (rm_expr_ctx_t *cx, size_t n);
/* Sets a variable's slot (the operators that bind them). */
void rm_xvar_set (rm_expr_ctx_t *cx, int slot, const bson_value_t *v);
/* $$CURRENT, swapped by the operators that rebind it. */
const bson_value_t *rm_xcurrent (rm_expr_ctx_t *cx);
int64_t rm_xnow (rm_expr_ctx_t *cx);

/* An error naming the operator, "$op: REASON", with code (what the two
 * below share). */
bool rm_xerr_v (bson_error_t *err, rm_errcode_t code, const rm_expr_t *e, const char *fmt, va_list ap);
/* An evaluation error naming the operator: "$op: REASON" (RM_ERR_DATA). */
bool rm_xfail (bson_error_t *err, const rm_expr_t *e, const char *fmt, ...)
    BSON_GNUC_PRINTF (3, 4);
/* A value for a message: relaxed Extended JSON cut to 60 bytes. */
const char *rm_xshow (rm_expr_ctx_t *cx, const bson_value_t *v);

/* ---- Values (expr_value.c) ---- */

static inline bool
rm_xval_missing (const bson_value_t *v)
{
    return v->value_type == BSON_TYPE_EOD;
}
/* null, undefined or missing: what most operators answer null for. */
static inline bool
rm_xval_nullish (const bson_value_t *v)
{
    return v->value_type == BSON_TYPE_EOD || v->value_type == BSON_TYPE_NULL ||
           v->value_type == BSON_TYPE_UNDEFINED;
}
static inline bool
rm_xval_is_number (const bson_value_t *v)
{
    return v->value_type == BSON_TYPE_INT32 || v->value_type == BSON_TYPE_INT64 ||
           v->value_type == BSON_TYPE_DOUBLE || v->value_type == BSON_TYPE_DECIMAL128;
}
static inline void
rm_xset_missing (bson_value_t *v)
{
    v->value_type = BSON_TYPE_EOD;
}
static inline void
rm_xset_null (bson_value_t *v)
{
    v->value_type = BSON_TYPE_NULL;
}
static inline void
rm_xset_bool (bson_value_t *v, bool b)
{
    v->value_type = BSON_TYPE_BOOL;
    v->value.v_bool = b;
}
static inline void
rm_xset_int32 (bson_value_t *v, int32_t i)
{
    v->value_type = BSON_TYPE_INT32;
    v->value.v_int32 = i;
}
static inline void
rm_xset_int64 (bson_value_t *v, int64_t i)
{
    v->value_type = BSON_TYPE_INT64;
    v->value.v_int64 = i;
}
static inline void
rm_xset_double (bson_value_t *v, double d)
{
    v->value_type = BSON_TYPE_DOUBLE;
    v->value.v_double = d;
}
static inline void
rm_xset_date (bson_value_t *v, int64_t ms)
{
    v->value_type = BSON_TYPE_DATE_TIME;
    v->value.v_datetime = ms;
}

/* Truthiness: false, null, undefined, missing and numeric zero are false;
 * everything else ("", [], {}) true. */
bool rm_xval_truthy (const bson_value_t *v);
/* MongoDB's order (rm_expr_compare). */
int rm_xval_compare (rm_expr_ctx_t *cx, const bson_value_t *a, const bson_value_t *b);
/* The $type name of a value ("missing" for missing). */
const char *rm_xval_type_name (const bson_value_t *v);
/* A number as a double (decimal128 rounded; false if not a number). */
bool rm_xval_to_double (const bson_value_t *v, double *d);
/* A number that is integral and fits an int64 (a double 3.0, a decimal
 * "3"): false otherwise. */
bool rm_xval_to_int64 (const bson_value_t *v, int64_t *i);

/* Memory of cx until its next reset (8-byte aligned). Counted against
 * the document's bound: past it the evaluation fails at the next
 * rm_xmem_check (every operator's return is one). */
void *rm_xalloc (rm_expr_ctx_t *cx, size_t n);
/* false with err naming e's operator when the document's values passed
 * the bound (remodel/expr.h, rm_expr_set_memory). */
bool rm_xmem_check (rm_expr_ctx_t *cx, const rm_expr_t *e, bson_error_t *err);

/* A point in cx's memory to come back to: what a loop's iteration made
 * ($reduce's, $map's scratch) is garbage once its result is kept, and
 * rm_xrewind gives it back, so that a loop's peak is its largest
 * iteration, not the sum of them all. */
typedef struct {
    size_t cur, used, live;
} rm_xmark_t;
void rm_xmark (rm_expr_ctx_t *cx, rm_xmark_t *m);
void rm_xrewind (rm_expr_ctx_t *cx, const rm_xmark_t *m);
/* Whether v's bytes lie in memory handed out since m (a rewind would
 * take them); false for values without bytes of their own (numbers). */
bool rm_xval_since (rm_expr_ctx_t *cx, const rm_xmark_t *m, const bson_value_t *v);
/* A buffer of cx's pool (reused document after document), and back. */
rm_buf_t *rm_xbuf_take (rm_expr_ctx_t *cx);
void rm_xbuf_give (rm_expr_ctx_t *cx, rm_buf_t *buf);
/* v copied into buf (emptied first), as *out pointing there; the bytes
 * count as kept until rm_xval_unkeep (buf). */
void rm_xval_keep (rm_expr_ctx_t *cx, rm_buf_t *buf, const bson_value_t *v, bson_value_t *out);
void rm_xval_unkeep (rm_expr_ctx_t *cx, rm_buf_t *buf);
/* Whether v's bytes are those buf keeps. */
bool rm_xval_in_buf (const rm_buf_t *buf, const bson_value_t *v);
/* The value buf keeps, copied into memory of cx as *out; buf unkept. */
void rm_xval_from_buf (rm_expr_ctx_t *cx, rm_buf_t *buf, bson_value_t *out);
/* A string value of len bytes copied into memory of cx (NUL added). */
void rm_xset_string (rm_expr_ctx_t *cx, bson_value_t *v, const char *s, size_t len);
/* A string value that is p itself: len bytes in memory of cx, room for
 * the NUL after them (added here). */
static inline void
rm_xset_string_in (bson_value_t *v, char *p, size_t len)
{
    p[len] = '\0';
    v->value_type = BSON_TYPE_UTF8;
    v->value.v_utf8.str = p;
    v->value.v_utf8.len = (uint32_t) len;
}

/* Building a document or an array (a value of cx once ended). Builders
 * nest (an operator may build while evaluating arguments that build):
 * each takes a buffer of cx and gives it back when ended. */
typedef struct {
    rm_expr_ctx_t *cx;
    rm_buf_t *buf;
    uint32_t n;     /* elements so far: an array's next key */
    bool array;
} rm_xbuild_t;

void rm_xbuild_begin (rm_expr_ctx_t *cx, rm_xbuild_t *b, bool array);
/* A document's field (a missing v appends nothing). */
void rm_xbuild_field (rm_xbuild_t *b, const char *key, size_t key_len, const bson_value_t *v);
/* An array's next element (a missing v is appended as null). */
void rm_xbuild_push (rm_xbuild_t *b, const bson_value_t *v);
/* Ends the document or array into *out (a value of cx). */
void rm_xbuild_end (rm_xbuild_t *b, bson_value_t *out);
/* Abandons a builder (an error while building). */
void rm_xbuild_abort (rm_xbuild_t *b);

/* Iterating an array or a document value: bson_iter_init over its bytes
 * (false if v is neither). */
bool rm_xval_iter (const bson_value_t *v, bson_iter_t *it);
/* The number of elements of an array value. */
uint32_t rm_xval_count (const bson_value_t *v);

/* Appends v as element key of a BSON document under construction in buf
 * (the element's type byte, key, value). */
void rm_xval_encode (rm_buf_t *buf, const char *key, size_t key_len, const bson_value_t *v);

/* ---- Shared between families ---- */

/* Parses a date string as $dateFromString does without a format (and
 * $toDate, $convert to "date"): *ms since the epoch, in the zone tz
 * (NULL: UTC) unless the string names an offset. false with err
 * naming op when it cannot (expr_date_parse.c). */
bool rm_xdate_parse (rm_expr_ctx_t *cx, const rm_expr_t *op, const char *s, size_t len,
                     const char *tz, int64_t *ms, bson_error_t *err);
/* A date as $toString writes it: "2017-07-04T12:00:00.000Z" (room for
 * 32 bytes; dates outside years 0-9999 as the server writes them). */
size_t rm_xdate_iso (int64_t ms, char *out);
/* A double as $toString writes it: the shortest form that reads back. */
size_t rm_xdouble_string (double d, char *out, size_t cap);

#endif
