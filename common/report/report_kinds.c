/* A relational import's own kinds on the page (issue 51): who owns a
 * child and which collections are lookups, join collections, hierarchies,
 * ties between targets, values equal by coincidence, and the fields an
 * export typed wrong. Each is an array of the analysis report that --json
 * carries as it is (analyze_roles.c, analyze_types.c); here each becomes
 * a short list or table under the relationships, as the text report puts
 * them, and nothing when analyze found none. */
#include "report_int.h"

/* The kinds whose entries are {ns, what, why}: the key, the heading's id
 * and its words. */
static const struct {
    const char *key, *id, *title;
} kinds[] = {
    {"ownership", "ownership", "Ownership and lookups"},
    {"joins", "joins", "Join collections"},
    {"hierarchies", "hierarchies", "Hierarchies"},
    {"ties", "ties", "Ties between targets (not acted on)"},
    {"sameValues", "same-values", "Same values, not references (not acted on)"},
};

/* One kind: its what in bold, its why below it in the rules' dim. */
static void
kind_list (rm_buf_t *b, const bson_t *r, const char *key, const char *id, const char *title)
{
    bson_iter_t arr;
    bson_t e;
    size_t n = 0;
    if (!rm_rp_docs (r, key, &arr))
        return;
    while (rm_rp_next (&arr, &e)) {
        if (!n++)
            rm_rp_printf (b, "<h3 id=\"%s\">%s</h3>\n<ul class=\"notes\">\n", id, title);
        rm_rp_puts (b, "<li><b>");
        rm_rp_html (b, rm_rp_str (&e, "what"));
        rm_rp_puts (b, "</b><p class=\"rule\">");
        rm_rp_html (b, rm_rp_str (&e, "why"));
        rm_rp_puts (b, "</p></li>\n");
    }
    if (n)
        rm_rp_puts (b, "</ul>\n");
}

/* The fields held as the wrong type: a row each with its counts. */
static void
types_table (rm_buf_t *b, const bson_t *r)
{
    bson_iter_t arr;
    bson_t e;
    size_t n = 0;
    if (!rm_rp_docs (r, "types", &arr))
        return;
    while (rm_rp_next (&arr, &e)) {
        if (!n++)
            rm_rp_puts (b, "<h3 id=\"types\">Types held wrong</h3>\n<table id=\"types-held\"><tr>"
                           "<th>field</th><th>held as</th><th class=\"n\">matching</th>"
                           "<th class=\"n\">of</th></tr>\n");
        rm_rp_puts (b, "<tr><td>");
        rm_rp_html (b, rm_rp_str (&e, "ns"));
        rm_rp_puts (b, ".<b>");
        rm_rp_html (b, rm_rp_str (&e, "field"));
        rm_rp_puts (b, "</b></td><td>");
        rm_rp_html (b, rm_rp_str (&e, "what"));
        rm_rp_puts (b, "</td><td class=\"n\">");
        rm_rp_count (b, rm_rp_int (&e, "matching"));
        rm_rp_puts (b, "</td><td class=\"n\">");
        rm_rp_count (b, rm_rp_int (&e, "of"));
        rm_rp_puts (b, "</td></tr>\n");
    }
    if (n)
        rm_rp_puts (b, "</table>\n");
}

void
rm_rp_kinds (rm_buf_t *b, const bson_t *r)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        kind_list (b, r, kinds[i].key, kinds[i].id, kinds[i].title);
    types_table (b, r);
}
