/* Table-driven cases for the expression layer: a document, an expression
 * and what it must give, all as Extended JSON (libbson's reader: 1 is an
 * int32, 1.0 a double, {"$numberLong": "1"} an int64, {"$date": ...} a
 * date). The result is compared by type and bytes, so 1 and 1.0 differ.
 *
 * want is the value's JSON, or:
 *   "MISSING"        the expression gives missing (a $set leaves the field out)
 *   "ERROR:text"     evaluating fails with a message holding text
 *   "PARSE:text"     compiling fails with a message holding text
 *
 * Each table is { doc, expr, want } rows ended by a row of NULLs; x_run
 * runs one and counts its failures as the harness's checks. */
#ifndef REMODEL_EXPR_CASE_H
#define REMODEL_EXPR_CASE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bson/bson.h>

#include "remodel/expr.h"
#include "test.h"

typedef struct {
    const char *doc;
    const char *expr;
    const char *want;
} x_case_t;

/* $$NOW in every case: 2024-01-02T03:04:05.678Z. */
#define X_NOW INT64_C (1704164645678)

static inline char *
x_json_of (const bson_value_t *v)
{
    bson_t d = BSON_INITIALIZER;
    char *s;
    if (v->value_type != BSON_TYPE_EOD)
        bson_append_value (&d, "v", 1, v);
    s = bson_as_canonical_extended_json (&d, NULL);
    bson_destroy (&d);
    return s;
}

/* One case; returns whether it passed (a failure is printed with where). */
static inline bool
x_case (const char *file, int line, const x_case_t *c)
{
    char buf[8192];
    bson_error_t err;
    bson_t *doc, *ex;
    bson_iter_t it;
    rm_expr_t *e;
    rm_expr_ctx_t *cx;
    bson_value_t out;
    bool ok = false;

    doc = bson_new_from_json ((const uint8_t *) c->doc, -1, &err);
    snprintf (buf, sizeof buf, "{\"e\": %s}", c->expr);
    ex = bson_new_from_json ((const uint8_t *) buf, -1, &err);
    if (!doc || !ex) {
        fprintf (stderr, "  %s row %d: bad case JSON: %s / %s\n", file, line, c->doc, c->expr);
        goto done;
    }
    bson_iter_init_find (&it, ex, "e");
    e = rm_expr_parse (&it, &err);
    if (!e) {
        if (!strncmp (c->want, "PARSE:", 6) && strstr (err.message, c->want + 6))
            ok = true;
        else
            fprintf (stderr, "  %s row %d: %s: parse failed: %s (want %s)\n", file, line, c->expr,
                     err.message, c->want);
        goto done;
    }
    if (!strncmp (c->want, "PARSE:", 6)) {
        fprintf (stderr, "  %s row %d: %s: parsed, want a refusal holding \"%s\"\n", file, line, c->expr,
                 c->want + 6);
        rm_expr_destroy (e);
        goto done;
    }
    cx = rm_expr_ctx_new (X_NOW);
    if (!rm_expr_eval (cx, e, bson_get_data (doc), doc->len, &out, &err)) {
        if (!strncmp (c->want, "ERROR:", 6) && strstr (err.message, c->want + 6))
            ok = true;
        else
            fprintf (stderr, "  %s row %d: %s over %s: failed: %s (want %s)\n", file, line, c->expr,
                     c->doc, err.message, c->want);
    } else if (!strncmp (c->want, "ERROR:", 6)) {
        char *g = x_json_of (&out);
        fprintf (stderr, "  %s row %d: %s over %s: gave %s, want an error holding \"%s\"\n", file, line,
                 c->expr, c->doc, g, c->want + 6);
        bson_free (g);
    } else if (!strcmp (c->want, "MISSING")) {
        ok = out.value_type == BSON_TYPE_EOD;
        if (!ok) {
            char *g = x_json_of (&out);
            fprintf (stderr, "  %s row %d: %s over %s: gave %s, want missing\n", file, line, c->expr,
                     c->doc, g);
            bson_free (g);
        }
    } else {
        bson_t *w;
        snprintf (buf, sizeof buf, "{\"v\": %s}", c->want);
        w = bson_new_from_json ((const uint8_t *) buf, -1, &err);
        if (!w) {
            fprintf (stderr, "  %s row %d: bad expected JSON: %s\n", file, line, c->want);
        } else {
            bson_t got = BSON_INITIALIZER;
            if (out.value_type != BSON_TYPE_EOD)
                bson_append_value (&got, "v", 1, &out);
            ok = got.len == w->len && !memcmp (bson_get_data (&got), bson_get_data (w), w->len);
            if (!ok) {
                char *g = bson_as_canonical_extended_json (&got, NULL);
                char *ws = bson_as_canonical_extended_json (w, NULL);
                fprintf (stderr, "  %s row %d: %s over %s:\n      got  %s\n      want %s\n", file, line,
                         c->expr, c->doc, g, ws);
                bson_free (g);
                bson_free (ws);
            }
            bson_destroy (&got);
            bson_destroy (w);
        }
    }
    rm_expr_ctx_destroy (cx);
    rm_expr_destroy (e);
done:
    if (doc)
        bson_destroy (doc);
    if (ex)
        bson_destroy (ex);
    return ok;
}

/* Runs a table: one harness check per failing row. */
#define X_TABLE(cases)                                                       \
    do {                                                                     \
        for (const x_case_t *c_ = (cases); c_->expr; c_++)                   \
            if (!x_case (__FILE__, (int) (c_ - (cases)) + 1, c_))            \
                t_fail_checks++;                                             \
    } while (0)

/* A test function that runs one table: X_TABLE_TEST (test_maps, maps). */
#define X_TABLE_TEST(fn, cases)                                              \
    static void fn (void)                                                    \
    {                                                                        \
        X_TABLE (cases);                                                     \
    }

/* libbson's allocations counted, through bson_mem_set_vtable, between
 * x_count_start and x_count_stop (the "no allocation once warm" tests;
 * test_expr_alloc.c adds the C library's own on top). */
static size_t x_allocs;

static inline void *
x_count_malloc (size_t n)
{
    x_allocs++;
    return malloc (n);
}

static inline void *
x_count_calloc (size_t n, size_t m)
{
    x_allocs++;
    return calloc (n, m);
}

static inline void *
x_count_realloc (void *p, size_t n)
{
    x_allocs++;
    return realloc (p, n);
}

static inline void
x_count_start (void)
{
    static bson_mem_vtable_t vt = {x_count_malloc, x_count_calloc, x_count_realloc, free, NULL, {0}};
    x_allocs = 0;
    bson_mem_set_vtable (&vt);
}

static inline size_t
x_count_stop (void)
{
    bson_mem_restore_vtable ();
    return x_allocs;
}

/* Warm passes before counting, and counted passes. */
enum { X_WARM_PASSES = 3, X_COUNTED_PASSES = 100 };

/* Evaluates expr_json over doc_json until warm (the context reset before
 * each pass, as a stage does per document), then X_COUNTED_PASSES more
 * times with libbson's allocations counted. Returns how many there were,
 * or -1, with the reason printed, where the case does not parse, a pass
 * fails, or the last result is not of type want: so that one check,
 * x_no_alloc_when_warm (...) == 0, says all of it. */
static inline long
x_no_alloc_when_warm (const char *doc_json, const char *expr_json, bson_type_t want)
{
    char *wrapped = bson_strdup_printf ("{\"e\": %s}", expr_json);
    bson_error_t err;
    bson_t *ex = bson_new_from_json ((const uint8_t *) wrapped, -1, &err);
    bson_t *doc = bson_new_from_json ((const uint8_t *) doc_json, -1, &err);
    bson_iter_t it;
    bson_value_t out = {.value_type = BSON_TYPE_EOD};
    rm_expr_t *e = NULL;
    rm_expr_ctx_t *cx = NULL;
    long n = -1;
    int failed = 0;

    bson_free (wrapped);
    if (!ex || !doc) {
        fprintf (stderr, "  no_alloc_when_warm: bad JSON: %s / %s\n", doc_json, expr_json);
        goto done;
    }
    bson_iter_init_find (&it, ex, "e");
    e = rm_expr_parse (&it, &err);
    if (!e) {
        fprintf (stderr, "  no_alloc_when_warm: %s: parse failed: %s\n", expr_json, err.message);
        goto done;
    }
    cx = rm_expr_ctx_new (X_NOW);
    for (int i = 0; i < X_WARM_PASSES + X_COUNTED_PASSES; i++) {
        if (i == X_WARM_PASSES)
            x_count_start ();
        rm_expr_ctx_reset (cx);
        if (!rm_expr_eval (cx, e, bson_get_data (doc), doc->len, &out, &err) && !failed++)
            fprintf (stderr, "  no_alloc_when_warm: %s: pass %d failed: %s\n", expr_json, i, err.message);
    }
    n = (long) x_count_stop ();
    if (failed) {
        n = -1;
    } else if (out.value_type != want) {
        fprintf (stderr, "  no_alloc_when_warm: %s: gave type 0x%02x, want 0x%02x\n", expr_json,
                 (unsigned) out.value_type, (unsigned) want);
        n = -1;
    } else if (n) {
        fprintf (stderr, "  no_alloc_when_warm: %s: %ld allocation(s) in %d warm passes\n", expr_json, n,
                 (int) X_COUNTED_PASSES);
    }
    rm_expr_ctx_destroy (cx);
done:
    if (e)
        rm_expr_destroy (e);
    if (ex)
        bson_destroy (ex);
    if (doc)
        bson_destroy (doc);
    return n;
}

#endif
