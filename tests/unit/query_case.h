/* Table-driven cases for the query layer: a document, a query and whether
 * it matches, as Extended JSON written with single quotes (turned into
 * double quotes before parsing, so that a table stays readable; no case
 * needs a quote of its own).
 *
 * want is:
 *   "1" / "0"        the query matches / does not match the document
 *   "ERROR:text"     matching fails with a message holding text
 *   "PARSE:text"     compiling fails with a message holding text
 *
 * Each table is { doc, query, want } rows ended by a row of NULLs; Q_TABLE
 * runs them, one harness check per failing row. */
#ifndef REMODEL_QUERY_CASE_H
#define REMODEL_QUERY_CASE_H

#include <stdio.h>
#include <string.h>

#include <bson/bson.h>

#include "remodel/query.h"
#include "test.h"

typedef struct {
    const char *doc;
    const char *query;
    const char *want;
} q_case_t;

#define Q_NOW INT64_C (1704164645678)

/* libbson's JSON reader takes {"$type": ...}, {"$regex": ..., "$options":
 * ...} for legacy Extended JSON: those keys are read under a '%' and
 * renamed once parsed. */
static void
q_rename (bson_iter_t *it, bson_t *out)
{
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        char key[64];
        bson_t sub;
        bson_iter_t child;
        bson_strncpy (key, k, sizeof key);
        if (key[0] == '%')
            key[0] = '$';
        if (BSON_ITER_HOLDS_DOCUMENT (it) || BSON_ITER_HOLDS_ARRAY (it)) {
            bool arr = BSON_ITER_HOLDS_ARRAY (it);
            bson_iter_recurse (it, &child);
            if (arr)
                bson_append_array_begin (out, key, -1, &sub);
            else
                bson_append_document_begin (out, key, -1, &sub);
            q_rename (&child, &sub);
            if (arr)
                bson_append_array_end (out, &sub);
            else
                bson_append_document_end (out, &sub);
        } else {
            bson_append_iter (out, key, -1, it);
        }
    }
}

static bson_t *
q_json (const char *text)
{
    static const char *const legacy[] = {"'$type'", "'$regex'", "'$options'"};
    char buf[8192];
    bson_error_t err;
    bson_t *raw, *out;
    bson_iter_t it;
    size_t i;
    for (i = 0; text[i] && i + 1 < sizeof buf; i++)
        buf[i] = text[i];
    buf[i] = '\0';
    for (size_t l = 0; l < 3; l++)
        for (char *at = strstr (buf, legacy[l]); at; at = strstr (at + 1, legacy[l]))
            at[1] = '%';
    for (i = 0; buf[i]; i++)
        if (buf[i] == '\'')
            buf[i] = '"';
    raw = bson_new_from_json ((const uint8_t *) buf, -1, &err);
    if (!raw)
        return NULL;
    out = bson_new ();
    bson_iter_init (&it, raw);
    q_rename (&it, out);
    bson_destroy (raw);
    return out;
}

/* One case; returns whether it passed (a failure is printed with where). */
static bool
q_case (const char *file, int line, const q_case_t *c)
{
    bson_error_t err;
    bson_t *doc, *qd;
    bson_t holder = BSON_INITIALIZER;
    bson_iter_t it;
    rm_query_t *q;
    rm_expr_ctx_t *cx;
    bool matched = false, ok = false;

    doc = q_json (c->doc);
    qd = q_json (c->query);
    if (!doc || !qd) {
        fprintf (stderr, "  %s row %d: bad case JSON: %s / %s\n", file, line, c->doc, c->query);
        goto done;
    }
    bson_append_document (&holder, "q", 1, qd);
    bson_iter_init_find (&it, &holder, "q");
    q = rm_query_parse (&it, &err);
    if (!q) {
        if (!strncmp (c->want, "PARSE:", 6) && strstr (err.message, c->want + 6))
            ok = true;
        else
            fprintf (stderr, "  %s row %d: %s: parse failed: %s (want %s)\n", file, line, c->query,
                     err.message, c->want);
        goto done;
    }
    if (!strncmp (c->want, "PARSE:", 6)) {
        fprintf (stderr, "  %s row %d: %s: parsed, want a refusal holding \"%s\"\n", file, line,
                 c->query, c->want + 6);
        rm_query_destroy (q);
        goto done;
    }
    cx = rm_expr_ctx_new (Q_NOW);
    if (!rm_query_match (q, cx, bson_get_data (doc), doc->len, &matched, &err)) {
        if (!strncmp (c->want, "ERROR:", 6) && strstr (err.message, c->want + 6))
            ok = true;
        else
            fprintf (stderr, "  %s row %d: %s over %s: failed: %s (want %s)\n", file, line, c->query,
                     c->doc, err.message, c->want);
    } else if (!strncmp (c->want, "ERROR:", 6)) {
        fprintf (stderr, "  %s row %d: %s over %s: gave %d, want an error holding \"%s\"\n", file,
                 line, c->query, c->doc, matched, c->want + 6);
    } else {
        ok = matched == (c->want[0] == '1');
        if (!ok)
            fprintf (stderr, "  %s row %d: %s over %s: %s, want %s\n", file, line, c->query, c->doc,
                     matched ? "matched" : "did not match", c->want[0] == '1' ? "a match" : "none");
    }
    /* Again with the document held, as a step's filter reads it (its
     * comparisons decided from values decoded in place): one answer. */
    if (ok) {
        bool again = false, held_ok;
        rm_expr_ctx_hold (cx, bson_get_data (doc), doc->len);
        held_ok = rm_query_match (q, cx, bson_get_data (doc), doc->len, &again, &err);
        rm_expr_ctx_release (cx);
        if (held_ok != (strncmp (c->want, "ERROR:", 6) != 0) || (held_ok && again != matched)) {
            fprintf (stderr, "  %s row %d: %s over %s: held, %s\n", file, line, c->query, c->doc,
                     !held_ok ? "failed" : again ? "matched" : "did not match");
            ok = false;
        }
    }
    rm_expr_ctx_destroy (cx);
    rm_query_destroy (q);
done:
    bson_destroy (&holder);
    if (doc)
        bson_destroy (doc);
    if (qd)
        bson_destroy (qd);
    return ok;
}

#define Q_TABLE(cases)                                                       \
    do {                                                                     \
        for (const q_case_t *c_ = (cases); c_->query; c_++)                  \
            if (!q_case (__FILE__, (int) (c_ - (cases)) + 1, c_))            \
                t_fail_checks++;                                             \
    } while (0)

/* A query over a set of documents: want lists the indexes (0-based) of
 * those it matches, as the server's jstests state their results. */
static void
q_matrix (const char *file, int line, const char *const *docs, size_t ndocs, const char *query,
          const int *want, size_t nwant)
{
    for (size_t i = 0; i < ndocs; i++) {
        q_case_t c = {docs[i], query, "0"};
        for (size_t k = 0; k < nwant; k++)
            if ((size_t) want[k] == i)
                c.want = "1";
        if (!q_case (file, line, &c))
            t_fail_checks++;
    }
}

#define Q_MATRIX(docs, query, ...)                                                          \
    do {                                                                                    \
        static const int w_[] = {__VA_ARGS__};                                              \
        q_matrix (__FILE__, __LINE__, docs, sizeof docs / sizeof docs[0], query, w_,        \
                  sizeof w_ / sizeof w_[0]);                                                \
    } while (0)

#endif
