/* The report layer's own helpers: reading the analysis report's fields,
 * and text made safe for HTML, Graphviz and Mermaid (report_text.c). */
#ifndef REMODEL_REPORT_INT_H
#define REMODEL_REPORT_INT_H

#include <stdarg.h>

#include "remodel/report.h"

/* A field of d by dotted path: 0, "" or false when absent. */
int64_t rm_rp_int (const bson_t *d, const char *path);
double rm_rp_double (const bson_t *d, const char *path);
const char *rm_rp_str (const bson_t *d, const char *path);
bool rm_rp_bool (const bson_t *d, const char *path);
/* Each document of d[key] (an array) in turn: start with rm_rp_docs, then
 * rm_rp_next until false. */
bool rm_rp_docs (const bson_t *d, const char *key, bson_iter_t *arr);
bool rm_rp_next (bson_iter_t *arr, bson_t *out);

void rm_rp_printf (rm_buf_t *b, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
void rm_rp_puts (rm_buf_t *b, const char *s);
/* s for an HTML text or attribute (also Graphviz's HTML-like labels): &, <,
 * >, " and ' as entities; control bytes and bytes that are not UTF-8 as
 * \xNN, as the text report shows them (rm_cli_put_text). */
void rm_rp_html (rm_buf_t *b, const char *s);
/* s in a dot quoted string (a node's name): " and \ escaped, control
 * bytes and bytes that are not UTF-8 as \xNN (Graphviz reads UTF-8). */
void rm_rp_dot (rm_buf_t *b, const char *s);
/* s in a Mermaid quoted string or name: what Mermaid would read as syntax
 * (quotes, brackets, braces) replaced by a look-alike or '_'. */
void rm_rp_mermaid (rm_buf_t *b, const char *s, bool ident);
/* A size for people: 512 B, 101 KB, 1.4 MB (powers of 1024, as 16 MiB). */
void rm_rp_bytes (rm_buf_t *b, double n);
/* A count with thousands apart: 29,470. */
void rm_rp_count (rm_buf_t *b, int64_t n);
/* "string 87% · null 13%": a field's type mix, most frequent first, for
 * HTML or (html false) for a Mermaid string. */
void rm_rp_types (rm_buf_t *b, const bson_t *field, bool html);

/* The page's parts (report_page.c, report_tables.c, report_kinds.c,
 * report_steps.c). */
/* The diagram of report (only the n_only namespaces of only, when not
 * NULL) drawn into a figure, with its id ("": none) and caption (NULL:
 * none). */
bool rm_rp_figure (rm_buf_t *b, const bson_t *report, const char *const *only, size_t n_only,
                   const char *id, const char *caption, bson_error_t *err);
/* How many documents d[key], an array, holds. */
size_t rm_rp_n_docs (const bson_t *d, const char *key);
/* The strings of an array document as a list under title (nothing when
 * there are none). */
void rm_rp_strings (rm_buf_t *b, const bson_t *arr_doc, const char *title);
void rm_rp_relationships (rm_buf_t *b, const bson_t *r, const char *id, const char *title);
/* A relational import's kinds of r (ownership, joins, hierarchies, ties,
 * same values, types held wrong), each under its heading when it has any
 * (report_kinds.c). */
void rm_rp_kinds (rm_buf_t *b, const bson_t *r);
void rm_rp_changes (rm_buf_t *b, const rm_page_t *p);
void rm_rp_collections (rm_buf_t *b, const bson_t *r);
void rm_rp_checks_and_recs (rm_buf_t *b, const rm_page_t *p);
bool rm_rp_steps (rm_buf_t *b, const rm_page_t *p, bson_error_t *err);

#endif
