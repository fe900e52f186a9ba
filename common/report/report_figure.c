/* A diagram in the page: the dot text of report_diagram.c laid out and
 * drawn by report_svg.c, wrapped in a figure. Below the page and its steps,
 * which both draw figures. */
#include "report_int.h"

/* The diagram of report (only the n_only namespaces of only, when not
 * NULL), drawn, in a figure. */
bool
rm_rp_figure (rm_buf_t *b, const bson_t *report, const char *const *only, size_t n_only, const char *id,
        const char *caption, bson_error_t *err)
{
    rm_buf_t dot;
    bool ok;
    rm_buf_init (&dot);
    rm_report_diagram (report, RM_DIAGRAM_DOT, only, n_only, &dot);
    if (*id)
        rm_rp_printf (b, "<figure id=\"%s\">", id);
    else
        rm_rp_puts (b, "<figure>");
    if (caption)
        rm_rp_printf (b, "<figcaption>%s</figcaption>", caption);
    rm_rp_puts (b, "\n");
    ok = rm_report_svg ((const char *) dot.data, dot.len, b, err);
    rm_rp_puts (b, "</figure>\n");
    rm_buf_destroy (&dot);
    return ok;
}
