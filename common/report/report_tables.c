/* The page's tables and lists (report_page.c puts them in order): the
 * relationships and the rejected candidates, the plan's before and after
 * per namespace, the collections, the checks and the recommendations. */
#include <string.h>

#include "report_int.h"

size_t
rm_rp_n_docs (const bson_t *d, const char *key)
{
    bson_iter_t arr;
    bson_t x;
    size_t n = 0;
    if (rm_rp_docs (d, key, &arr))
        while (rm_rp_next (&arr, &x))
            n++;
    return n;
}

void
rm_rp_strings (rm_buf_t *b, const bson_t *arr_doc, const char *title)
{
    bson_iter_t it;
    size_t n = 0;
    if (!arr_doc || !bson_iter_init (&it, arr_doc))
        return;
    while (bson_iter_next (&it))
        if (BSON_ITER_HOLDS_UTF8 (&it)) {
            if (!n++)
                rm_rp_printf (b, "<h3>%s</h3>\n<ul class=\"notes\">\n", title);
            rm_rp_puts (b, "<li>");
            rm_rp_html (b, bson_iter_utf8 (&it, NULL));
            rm_rp_puts (b, "</li>\n");
        }
    if (n)
        rm_rp_puts (b, "</ul>\n");
}

void
rm_rp_relationships (rm_buf_t *b, const bson_t *r, const char *id, const char *title)
{
    bson_iter_t arr;
    bson_t rel;
    size_t n = 0;

    rm_rp_printf (b, "<h3 id=\"%s\">%s</h3>\n", id, title);
    rm_rp_docs (r, "relationships", &arr);
    while (rm_rp_next (&arr, &rel)) {
        if (!n++)
            rm_rp_puts (b, "<table><tr><th>reference</th><th>held as</th><th>class</th>"
                           "<th class=\"n\">children per parent<br>p50 / p99 / max</th>"
                           "<th class=\"n\">found</th><th>evidence</th><th>index</th></tr>\n");
        rm_rp_puts (b, "<tr><td>");
        rm_rp_html (b, rm_rp_str (&rel, "from"));
        rm_rp_puts (b, ".<b>");
        rm_rp_html (b, rm_rp_str (&rel, "field"));
        rm_rp_puts (b, "</b> → ");
        rm_rp_html (b, rm_rp_str (&rel, "to"));
        rm_rp_puts (b, ".");
        rm_rp_html (b, rm_rp_str (&rel, "key"));
        rm_rp_printf (b, "</td><td>%s</td><td><b>",
                      !strcmp (rm_rp_str (&rel, "direction"), "childRefs") ? "array of the parent"
                                                                              : "field of the child");
        rm_rp_html (b, rm_rp_str (&rel, "class"));
        rm_rp_printf (b, "</b>%s</td><td class=\"n\">%lld / %lld / %lld</td><td class=\"n\">%.1f%%</td>",
                      rm_rp_bool (&rel, "manyToMany") ? " (many-to-many)" : "",
                      (long long) rm_rp_int (&rel, "childrenPerParent.p50"),
                      (long long) rm_rp_int (&rel, "childrenPerParent.p99"),
                      (long long) rm_rp_int (&rel, "childrenPerParent.max"),
                      100.0 * rm_rp_double (&rel, "matchRate"));
        rm_rp_puts (b, "<td><span class=\"tag ");
        rm_rp_html (b, rm_rp_str (&rel, "level"));
        rm_rp_puts (b, "\">");
        rm_rp_html (b, rm_rp_str (&rel, "level"));
        rm_rp_printf (b, "</span> score %.1f</td><td>", rm_rp_double (&rel, "score"));
        if (rm_rp_bool (&rel, "indexed"))
            rm_rp_puts (b, "indexed");
        else {
            rm_rp_puts (b, "<span class=\"bad\">none on ");
            rm_rp_html (b, rm_rp_str (&rel, "indexNs"));
            rm_rp_puts (b, ".");
            rm_rp_html (b, rm_rp_str (&rel, "indexField"));
            rm_rp_puts (b, "</span>");
        }
        rm_rp_puts (b, "</td></tr>\n");
    }
    rm_rp_puts (b, n ? "</table>\n" : "<p>None found.</p>\n");

    n = 0;
    rm_rp_docs (r, "rejected", &arr);
    while (rm_rp_next (&arr, &rel)) {
        if (!n++)
            rm_rp_puts (b, "<h3 id=\"rejected\">Rejected candidates (not drawn)</h3>\n<ul class=\"notes\">\n");
        rm_rp_puts (b, "<li>");
        rm_rp_html (b, rm_rp_str (&rel, "from"));
        rm_rp_puts (b, ".");
        rm_rp_html (b, rm_rp_str (&rel, "field"));
        rm_rp_puts (b, " → ");
        rm_rp_html (b, rm_rp_str (&rel, "to"));
        rm_rp_puts (b, ".");
        rm_rp_html (b, rm_rp_str (&rel, "key"));
        rm_rp_printf (b, ": score %.1f", rm_rp_double (&rel, "score"));
        {
            bson_iter_t ev;
            bson_t e;
            rm_rp_docs (&rel, "evidence", &ev);
            while (rm_rp_next (&ev, &e)) {
                rm_rp_printf (b, "; [%+.1f] ", rm_rp_double (&e, "points"));
                rm_rp_html (b, rm_rp_str (&e, "what"));
            }
        }
        rm_rp_puts (b, "</li>\n");
    }
    if (n)
        rm_rp_puts (b, "</ul>\n");
}

/* The namespace's row of an analysis report, or false. */
static bool
find_coll (const bson_t *r, const char *ns, bson_t *out)
{
    bson_iter_t arr;
    if (!r)
        return false;
    rm_rp_docs (r, "collections", &arr);
    while (rm_rp_next (&arr, out))
        if (!strcmp (rm_rp_str (out, "ns"), ns))
            return true;
    return false;
}

static void
size_cell (rm_buf_t *b, const bson_t *c, const char *key)
{
    rm_rp_puts (b, "<td class=\"n\">");
    if (c)
        rm_rp_bytes (b, (double) rm_rp_int (c, key));
    else
        rm_rp_puts (b, "<span class=\"dim\">–</span>");
    rm_rp_puts (b, "</td>");
}

static void
count_cell (rm_buf_t *b, const bson_t *c)
{
    rm_rp_puts (b, "<td class=\"n\">");
    if (c)
        rm_rp_count (b, rm_rp_int (c, "documents"));
    else
        rm_rp_puts (b, "<span class=\"dim\">–</span>");
    rm_rp_puts (b, "</td>");
}

/* Per namespace of before or after: documents and size before and after,
 * the largest document after against 16 MiB, the arrays after. */
void
rm_rp_changes (rm_buf_t *b, const rm_page_t *p)
{
    bson_iter_t arr;
    bson_t c, other;
    const bson_t *lists[2] = {p->before, p->after};

    rm_rp_puts (b, "<h3 id=\"namespaces\">Per namespace</h3>\n<table id=\"per-namespace\"><tr><th>namespace</th>"
                   "<th class=\"n\">documents before</th><th class=\"n\">after</th>"
                   "<th class=\"n\">size before</th><th class=\"n\">after</th>"
                   "<th class=\"n\">largest after</th><th class=\"n\">of 16 MiB</th>"
                   "<th>arrays after: length p50 / max</th></tr>\n");
    for (int l = 0; l < 2; l++) {
        rm_rp_docs (lists[l], "collections", &arr);
        while (rm_rp_next (&arr, &c)) {
            const char *ns = rm_rp_str (&c, "ns");
            bool in_before = find_coll (p->before, ns, &other);
            bson_t before, after;
            bool has_after;
            bson_iter_t farr;
            bson_t f;
            size_t n = 0;
            if (l == 1 && in_before)
                continue; /* listed with the before's */
            if (in_before)
                before = other;
            has_after = find_coll (p->after, ns, &after);
            /* What the plan left as it was, dimmed: the eye goes to the changes. */
            rm_rp_puts (b, in_before && has_after && rm_rp_int (&before, "documents") == rm_rp_int (&after, "documents") &&
                                   rm_rp_int (&before, "bytes") == rm_rp_int (&after, "bytes")
                               ? "<tr class=\"same\"><td>" : "<tr><td>");
            rm_rp_html (b, ns);
            if (!in_before)
                rm_rp_puts (b, " <span class=\"tag\">new</span>");
            else if (!has_after)
                rm_rp_puts (b, " <span class=\"tag\">gone</span>");
            rm_rp_puts (b, "</td>");
            count_cell (b, in_before ? &before : NULL);
            count_cell (b, has_after ? &after : NULL);
            size_cell (b, in_before ? &before : NULL, "bytes");
            size_cell (b, has_after ? &after : NULL, "bytes");
            size_cell (b, has_after ? &after : NULL, "maxSize");
            rm_rp_puts (b, "<td class=\"n\">");
            if (has_after) {
                double of = rm_rp_double (&after, "maxOf16MiB");
                rm_rp_printf (b, of >= 0.5 ? "<span class=\"bad\">%.2f%%</span>" : "%.2f%%", 100.0 * of);
            }
            rm_rp_puts (b, "</td><td>");
            if (has_after) {
                rm_rp_docs (&after, "fields", &farr);
                while (rm_rp_next (&farr, &f))
                    if (rm_rp_int (&f, "arrays")) {
                        rm_rp_puts (b, n++ ? ", " : "");
                        rm_rp_html (b, rm_rp_str (&f, "path"));
                        rm_rp_printf (b, " %lld / %lld", (long long) rm_rp_int (&f, "arrayLengths.p50"),
                                      (long long) rm_rp_int (&f, "arrayLengths.max"));
                    }
            }
            rm_rp_puts (b, "</td></tr>\n");
        }
    }
    rm_rp_puts (b, "</table>\n");
}

void
rm_rp_collections (rm_buf_t *b, const bson_t *r)
{
    bson_iter_t arr;
    bson_t c;
    rm_rp_puts (b, "<h2 id=\"collections\">Collections</h2>\n<table><tr><th>namespace</th>"
                   "<th class=\"n\">documents</th><th class=\"n\">size</th><th class=\"n\">average</th>"
                   "<th class=\"n\">p99</th><th class=\"n\">largest</th><th class=\"n\">of 16 MiB</th>"
                   "<th class=\"n\">fields</th></tr>\n");
    rm_rp_docs (r, "collections", &arr);
    while (rm_rp_next (&arr, &c)) {
        rm_rp_puts (b, "<tr><td>");
        rm_rp_html (b, rm_rp_str (&c, "ns"));
        rm_rp_puts (b, "</td>");
        count_cell (b, &c);
        size_cell (b, &c, "bytes");
        size_cell (b, &c, "avgSize");
        size_cell (b, &c, "p99Size");
        size_cell (b, &c, "maxSize");
        rm_rp_printf (b, "<td class=\"n\">%.4f%%</td><td class=\"n\">%zu%s</td></tr>\n",
                      100.0 * rm_rp_double (&c, "maxOf16MiB"), rm_rp_n_docs (&c, "fields"),
                      rm_rp_bool (&c, "fieldsCapped") ? "+" : "");
    }
    rm_rp_puts (b, "</table>\n");
}

void
rm_rp_checks_and_recs (rm_buf_t *b, const rm_page_t *p)
{
    bson_iter_t arr;
    bson_t d;
    size_t n = 0;

    if (p->checks && bson_iter_init (&arr, p->checks))
        while (rm_rp_next (&arr, &d)) {
            if (!n++)
                rm_rp_puts (b, "<h2 id=\"checks\">Checks</h2>\n<ul class=\"notes\">\n");
            rm_rp_puts (b, "<li><b>");
            rm_rp_html (b, rm_rp_str (&d, "check"));
            rm_rp_puts (b, "</b> ");
            rm_rp_html (b, rm_rp_str (&d, "ns"));
            if (*rm_rp_str (&d, "field")) {
                rm_rp_puts (b, ".");
                rm_rp_html (b, rm_rp_str (&d, "field"));
            }
            rm_rp_puts (b, ": ");
            rm_rp_html (b, rm_rp_str (&d, "finding"));
            rm_rp_puts (b, "<p class=\"rule\">");
            rm_rp_html (b, rm_rp_str (&d, "rule"));
            rm_rp_puts (b, "</p></li>\n");
        }
    if (n)
        rm_rp_puts (b, "</ul>\n");
    n = 0;
    if (p->recs && bson_iter_init (&arr, p->recs))
        while (rm_rp_next (&arr, &d)) {
            if (!n++)
                rm_rp_puts (b, "<h2 id=\"recommendations\">Every recommendation</h2>\n<table><tr>"
                               "<th>relationship</th><th>pattern</th><th>why, and the rule of thumb</th>"
                               "<th>depends on</th></tr>\n");
            rm_rp_puts (b, "<tr><td>");
            rm_rp_html (b, rm_rp_str (&d, "relationship"));
            rm_rp_puts (b, "</td><td><b>");
            rm_rp_html (b, rm_rp_str (&d, "pattern"));
            rm_rp_puts (b, "</b></td><td>");
            rm_rp_html (b, rm_rp_str (&d, "why"));
            rm_rp_puts (b, "<p class=\"rule\">");
            rm_rp_html (b, rm_rp_str (&d, "rule"));
            rm_rp_puts (b, "</p></td><td class=\"dim\">");
            rm_rp_html (b, rm_rp_str (&d, "dependsOn"));
            rm_rp_puts (b, "</td></tr>\n");
        }
    if (n)
        rm_rp_puts (b, "</table>\n");
}
