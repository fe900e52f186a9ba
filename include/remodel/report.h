/* Pictures of a design (common/report/): the relationship diagram of an
 * analysis as Graphviz or Mermaid text, laid out and drawn as SVG by
 * Graphviz's libraries, and the page of remodel analyze --report and
 * remodel check --report: one HTML file with its SVG and CSS inline,
 * nothing referenced outside it, no script. */
#ifndef REMODEL_REPORT_H
#define REMODEL_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <bson/bson.h>

#include "remodel/analyze.h"
#include "remodel/buf.h"
#include "remodel/engine.h"
#include "remodel/plan.h"

typedef enum { RM_DIAGRAM_DOT, RM_DIAGRAM_MERMAID } rm_diagram_format_t;

/* The diagram of report (rm_analysis_report's document): each collection
 * a box of its counts and fields, each relationship an arrow from the
 * referencing field to the referenced collection labelled with its class,
 * level and missing index; the rejected candidates are not drawn. Only
 * the n_only namespaces of only when only is not NULL (a step's), and the
 * relationships between them. Appended to out. */
void rm_report_diagram (const bson_t *report, rm_diagram_format_t fmt, const char *const *only,
                        size_t n_only, rm_buf_t *out);

/* Whether this build has Graphviz's libraries (the Makefile's
 * HAVE_GRAPHVIZ): without them there is no SVG, and no page. */
bool rm_report_have_svg (void);

/* Graphviz text laid out by dot and drawn as SVG, appended to out as an
 * element to put inline in HTML (no XML prolog, no namespace URLs). */
bool rm_report_svg (const char *dot, size_t len, rm_buf_t *out, bson_error_t *err);

/* What a page shows. before is an analysis report of the source; after,
 * when not NULL, that of the plan's result; recs, checks (analyze's
 * recommendations and checks, array documents) and plan_checks,
 * hint_notes (array documents of strings) may be NULL. */
typedef struct {
    const char *title;       /* "remodel analyze dumps/sample" */
    const char *plan_name;   /* the plan's file, or NULL (analyze's own) */
    const rm_plan_t *plan;   /* the plan of steps, parsed: each step's namespaces (NULL: none) */
    const bson_t *before, *after;
    const bson_t *steps;     /* the plan's "steps" array (NULL: none) */
    const char *no_plan;     /* why there is no after (NULL: there is one, or no plan) */
    const bson_t *recs, *plan_checks, *hint_notes, *checks;
} rm_page_t;

/* Writes the page to f (flushed and checked by the caller). */
bool rm_report_page (FILE *f, const rm_page_t *p, bson_error_t *err);

/* The plan run over src (only the namespaces select takes, when not NULL:
 * analyze --ns) into a temporary archive under eo->tmpdir (removed before
 * returning), then that archive analyzed with ao: the design after. */
rm_analysis_t *rm_report_after (const rm_plan_t *plan, const char *src, const struct rm_nsselect *select,
                                const rm_engine_opts_t *eo, const rm_analyze_opts_t *ao, bson_error_t *err);

#endif
