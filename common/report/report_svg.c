/* The diagram laid out by Graphviz's dot and drawn as SVG by its own
 * renderer (libgvc, libcgraph): the only file that includes them, built
 * with them where the Makefile found them (REMODEL_HAVE_GRAPHVIZ). */
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

#ifdef REMODEL_HAVE_GRAPHVIZ
#include <gvc.h>

bool
rm_report_have_svg (void)
{
    return true;
}

/* Appends svg from its <svg element on, without the namespace attributes:
 * inline in HTML they mean nothing, and a page that names no URL is
 * plainly one that fetches nothing. */
static void
put_inline (rm_buf_t *out, const char *svg, size_t len)
{
    const char *start = strstr (svg, "<svg"), *end = svg + len, *tag_end;
    if (!start)
        return;
    tag_end = strchr (start, '>');
    for (const char *p = start; p < end;) {
        if (p < tag_end && !strncmp (p, " xmlns", 6)) {
            const char *q = strchr (p + 1, '"');
            q = q ? strchr (q + 1, '"') : NULL;
            if (q) {
                p = q + 1;
                continue;
            }
        }
        /* Graphviz's title in a tooltip and its comments: kept, they are
         * the names (the test finds the nodes by them). */
        rm_buf_append (out, p, 1);
        p++;
    }
}

/* One Graphviz context for the process: its text-size plugin (pango)
 * keeps a pointer to the last font name, which belongs to the context, so
 * a second context after the first was freed reads freed memory
 * (Graphviz 2.42, caught by ASan). Freed at exit. */
static GVC_t *context;

static void
context_free (void)
{
    gvFreeContext (context);
    context = NULL;
}

static GVC_t *
context_get (void)
{
    if (!context && (context = gvContext ()))
        atexit (context_free);
    return context;
}

bool
rm_report_svg (const char *dot, size_t len, rm_buf_t *out, bson_error_t *err)
{
    GVC_t *gvc = context_get ();
    char *text = bson_strndup (dot, len);
    Agraph_t *g = gvc ? agmemread (text) : NULL;
    char *svg = NULL;
    unsigned int n = 0;
    bool ok = g && gvLayout (gvc, g, "dot") == 0;

    if (ok) {
        ok = gvRenderData (gvc, g, "svg", &svg, &n) == 0 && svg;
        gvFreeLayout (gvc, g);
    }
    if (ok)
        put_inline (out, svg, n);
    else
        rm_error_set (err, RM_ERR_IO, "Graphviz could not lay out the diagram (%s)",
                      g ? "dot layout or SVG renderer missing: is libgvc's plugin configuration installed?"
                        : "the diagram's text was refused");
    if (svg)
        gvFreeRenderData (svg);
    if (g)
        agclose (g);
    bson_free (text);
    return ok;
}

#else

bool
rm_report_have_svg (void)
{
    return false;
}

bool
rm_report_svg (const char *dot, size_t len, rm_buf_t *out, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_UNSUPPORTED, "this remodel was built without Graphviz's libraries "
                  "(libgvc, libcgraph): no --report; make deps installs them (libgraphviz-dev), "
                  "then make");
    return false;
}

#endif
