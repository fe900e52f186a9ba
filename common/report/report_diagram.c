/* The relationship diagram as text: Graphviz's dot language (which
 * report_svg.c lays out and draws) or a Mermaid erDiagram (which GitHub
 * and GitLab draw in Markdown). Each collection is a box of its counts and
 * fields; each relationship an arrow from the referencing field to the
 * referenced collection. */
#include <ctype.h>
#include <string.h>

#include "remodel/utf8.h"
#include "report_int.h"

/* Field rows a box shows: past them a "more fields" row, so a collection
 * of 256 paths stays a box one can take in. */
#define BOX_ROWS 14

#define FONT "Helvetica,Arial,sans-serif"

/* The row of field path in collection ns (its port), or -1 when the box
 * does not show it. */
static int
field_row (const bson_t *coll, const char *path)
{
    bson_iter_t arr;
    bson_t f;
    int i = 0;
    rm_rp_docs (coll, "fields", &arr);
    while (rm_rp_next (&arr, &f) && i < BOX_ROWS) {
        if (!strcmp (rm_rp_str (&f, "path"), path))
            return i;
        i++;
    }
    return -1;
}

static bool
find_coll (const bson_t *report, const char *ns, bson_t *out)
{
    bson_iter_t arr;
    rm_rp_docs (report, "collections", &arr);
    while (rm_rp_next (&arr, out))
        if (!strcmp (rm_rp_str (out, "ns"), ns))
            return true;
    return false;
}

/* Characters that are no text: the noncharacters (U+FDD0..U+FDEF and the
 * last two of each plane), which Graphviz's label parser refuses (the box
 * is then drawn without its fields, and dot still exits 0). */
static bool
noncharacter (uint32_t cp)
{
    return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

/* s made fit for a diagram's label, in a new string: each noncharacter
 * shown as \uXXXX, an empty name as "", and for Graphviz (gv) each
 * backslash doubled: a label reads \N as the node's name and \G as the
 * graph's (&#92; is decoded before that, so it is no help), and \\ as
 * one backslash. */
static char *
label_text (const char *s, bool gv)
{
    rm_buf_t b;
    const uint8_t *p = (const uint8_t *) s;
    size_t n = strlen (s), i = 0;
    char *out;
    rm_buf_init (&b);
    if (!n)
        rm_rp_puts (&b, "\"\"");
    while (i < n) {
        uint32_t cp = p[i];
        size_t len = p[i] < 0x80 ? 1 : rm_utf8_decode (p + i, n - i, &cp);
        if (len == 0)
            len = 1; /* bad UTF-8: the escapes below show it */
        else if (cp >= 0x80 && noncharacter (cp)) {
            rm_rp_printf (&b, gv ? "\\\\u%04X" : "U+%04X", (unsigned) cp);
            i += len;
            continue;
        }
        if (gv && p[i] == '\\')
            rm_rp_puts (&b, "\\");
        rm_buf_append (&b, s + i, len);
        i += len;
    }
    rm_buf_append (&b, "", 1);
    out = bson_strdup ((const char *) b.data);
    rm_buf_destroy (&b);
    return out;
}

/* Text inside one of Graphviz's HTML labels. */
static void
gv_html (rm_buf_t *b, const char *s)
{
    char *t = label_text (s, true);
    rm_rp_html (b, t);
    bson_free (t);
}

/* Text for Mermaid: an attribute's name (ident) must match the grammar's
 * ATTRIBUTE_WORD, whose first character is a letter, _ or *: a name that
 * starts otherwise (2fa, -x, "") takes a _ in front (its comment keeps the
 * name as it is); an entity's shown name (ENTITY_NAME) holds no %. */
static void
mermaid_text (rm_buf_t *b, const char *s, bool ident)
{
    char *t = label_text (s, false);
    if (ident && !(isalpha ((unsigned char) t[0]) || t[0] == '_'))
        rm_rp_puts (b, "_");
    rm_rp_mermaid (b, t, ident);
    bson_free (t);
}

static void
mermaid_entity (rm_buf_t *b, const char *ns)
{
    char *t = label_text (ns, false);
    for (const char *p = t, *pct; *p; p = pct + 1) {
        char *part;
        pct = strchr (p, '%');
        part = bson_strndup (p, pct ? (size_t) (pct - p) : strlen (p));
        rm_rp_mermaid (b, part, false);
        bson_free (part);
        if (!pct)
            break;
        rm_rp_puts (b, "\xEF\xBC\x85"); /* U+FF05, the fullwidth percent sign */
    }
    bson_free (t);
}

/* The node's name, quoted for dot. */
static void
dot_id (rm_buf_t *b, const char *ns)
{
    rm_rp_puts (b, "\"");
    rm_rp_dot (b, ns);
    rm_rp_puts (b, "\"");
}

/* A field's name in its box: nested paths indented under their parent,
 * arrays marked [ ]. */
static void
field_name (rm_buf_t *b, const bson_t *f)
{
    const char *path = rm_rp_str (f, "path"), *last = NULL;
    bool quoted = false;
    /* A dot inside ["a.b"] (a name no path spells: analyze.c) is the
     * name's, not a step down. */
    for (const char *p = path; *p; p++) {
        if (*p == '"' && p > path && (p[-1] == '[' || p[1] == ']'))
            quoted = p[-1] == '[';
        if (*p == '.' && !quoted) {
            rm_rp_puts (b, "&#160;&#160;&#160;");
            last = p;
        }
    }
    if (last)
        rm_rp_puts (b, "<font color=\"#888888\">.</font>");
    gv_html (b, last ? last + 1 : path);
    if (rm_rp_int (f, "arrays"))
        rm_rp_puts (b, "[ ]");
}

static void
dot_box (rm_buf_t *b, const bson_t *c)
{
    bson_iter_t arr;
    bson_t f;
    int rows = 0, all = 0;

    rm_rp_puts (b, "  ");
    dot_id (b, rm_rp_str (c, "ns"));
    /* No id: a page draws a collection more than once (before, after). */
    rm_rp_puts (b, " [class=\"coll\" label=<<table border=\"1\" color=\"#5b7a99\" cellborder=\"0\" cellspacing=\"0\" "
                   "cellpadding=\"3\" bgcolor=\"#ffffff\">\n    <tr><td colspan=\"2\" bgcolor=\"#2f5d8a\" "
                   "align=\"left\"><font color=\"#ffffff\" point-size=\"12\"><b>");
    gv_html (b, rm_rp_str (c, "ns"));
    rm_rp_puts (b, "</b></font></td></tr>\n    <tr><td colspan=\"2\" bgcolor=\"#e8eef5\" align=\"left\">"
                   "<font point-size=\"9\">");
    rm_rp_count (b, rm_rp_int (c, "documents"));
    rm_rp_puts (b, rm_rp_int (c, "documents") == 1 ? " doc · " : " docs · ");
    rm_rp_bytes (b, (double) rm_rp_int (c, "bytes"));
    rm_rp_puts (b, " · avg ");
    rm_rp_bytes (b, (double) rm_rp_int (c, "avgSize"));
    rm_rp_puts (b, " · max ");
    rm_rp_bytes (b, (double) rm_rp_int (c, "maxSize"));
    rm_rp_puts (b, "</font></td></tr>\n");
    rm_rp_docs (c, "fields", &arr);
    while (rm_rp_next (&arr, &f)) {
        double presence = rm_rp_double (&f, "presence");
        if (all++ >= BOX_ROWS)
            continue;
        /* The port on the right cell: an arrow leaves from the box's edge. */
        rm_rp_puts (b, "    <tr><td align=\"left\">");
        field_name (b, &f);
        rm_rp_printf (b, "</td><td port=\"f%d\" align=\"right\"><font color=\"#556677\" point-size=\"9\">",
                      rows++);
        if (rm_rp_int (&f, "arrays"))
            rm_rp_printf (b, "array, p50 %lld, max %lld", (long long) rm_rp_int (&f, "arrayLengths.p50"),
                          (long long) rm_rp_int (&f, "arrayLengths.max"));
        else
            rm_rp_types (b, &f, true);
        if (presence < 0.995)
            rm_rp_printf (b, presence < 0.005 ? " <font color=\"#b35900\">(in &lt;1%%)</font>"
                                              : " <font color=\"#b35900\">(in %.0f%%)</font>", 100.0 * presence);
        rm_rp_puts (b, "</font></td></tr>\n");
    }
    if (all > rows)
        rm_rp_printf (b, "    <tr><td colspan=\"2\" align=\"left\"><font color=\"#888888\" point-size=\"9\">"
                         "… %d more field%s</font></td></tr>\n", all - rows, all - rows > 1 ? "s" : "");
    rm_rp_puts (b, "  </table>>];\n");
}

/* The arrow's label: the field, the class, the level, the missing index. */
static void
dot_label (rm_buf_t *b, const bson_t *rel)
{
    rm_rp_puts (b, "<<b>");
    gv_html (b, rm_rp_str (rel, "field"));
    rm_rp_puts (b, "</b><br/>");
    rm_rp_html (b, rm_rp_str (rel, "class"));
    if (rm_rp_bool (rel, "manyToMany"))
        rm_rp_puts (b, " (many-to-many)");
    rm_rp_puts (b, "<br/><font color=\"#666666\">");
    rm_rp_html (b, rm_rp_str (rel, "level"));
    rm_rp_puts (b, "</font>");
    if (!rm_rp_bool (rel, "indexed")) {
        rm_rp_puts (b, "<br/><font color=\"#b30000\">no index on ");
        gv_html (b, rm_rp_str (rel, "indexNs"));
        rm_rp_puts (b, ".");
        gv_html (b, rm_rp_str (rel, "indexField"));
        rm_rp_puts (b, "</font>");
    }
    rm_rp_puts (b, ">");
}

/* A relationship: its label a node of its own between the two halves of
 * the arrow, since dot drops edge labels when it packs the components
 * (packmode) that put the boxes side by side; the node named after the
 * field. */
static void
rel_id (rm_buf_t *b, const bson_t *rel)
{
    char *name = bson_strdup_printf ("rel: %s.%s", rm_rp_str (rel, "from"), rm_rp_str (rel, "field"));
    dot_id (b, name);
    bson_free (name);
}

static void
dot_edge (rm_buf_t *b, const bson_t *report, const bson_t *rel)
{
    bson_t from;
    int row = find_coll (report, rm_rp_str (rel, "from"), &from) ? field_row (&from, rm_rp_str (rel, "field")) : -1;
    bool possible = !strcmp (rm_rp_str (rel, "level"), "possible");
    const char *color = !rm_rp_bool (rel, "indexed") ? "#b30000" : "#2f5d8a";

    rm_rp_puts (b, "  ");
    rel_id (b, rel);
    rm_rp_puts (b, " [class=\"rel ");
    rm_rp_html (b, rm_rp_str (rel, "class"));
    rm_rp_puts (b, "\" shape=none margin=\"0.1,0.03\" label=");
    dot_label (b, rel);
    rm_rp_puts (b, "];\n  ");
    dot_id (b, rm_rp_str (rel, "from"));
    if (row >= 0)
        rm_rp_printf (b, ":f%d:e", row);
    rm_rp_puts (b, " -> ");
    rel_id (b, rel);
    rm_rp_printf (b, " [class=\"ref\" arrowhead=none color=\"%s\"%s];\n  ", color, possible ? " style=dashed" : "");
    rel_id (b, rel);
    rm_rp_puts (b, " -> ");
    dot_id (b, rm_rp_str (rel, "to"));
    rm_rp_printf (b, " [class=\"ref\" color=\"%s\"%s];\n", color, possible ? " style=dashed" : "");
}

typedef struct {
    const char *const *names;
    size_t n;
} only_t;

static bool
shown (const only_t *only, const char *ns)
{
    if (!only->names)
        return true;
    for (size_t i = 0; i < only->n; i++)
        if (!strcmp (only->names[i], ns))
            return true;
    return false;
}

static bool
rel_shown (const only_t *only, const bson_t *rel)
{
    return shown (only, rm_rp_str (rel, "from")) && shown (only, rm_rp_str (rel, "to"));
}

static void
dot (const bson_t *report, const only_t *only, rm_buf_t *out)
{
    bson_iter_t arr;
    bson_t d;

    rm_rp_puts (out, "digraph design {\n"
                     "  graph [rankdir=LR nodesep=0.35 ranksep=0.4 pack=24 packmode=\"array_u\" bgcolor=\"transparent\" fontname=\"" FONT "\"];\n"
                     "  node [shape=plain fontname=\"" FONT "\" fontsize=10];\n"
                     "  edge [fontname=\"" FONT "\" fontsize=9 arrowsize=0.8 penwidth=1.4];\n");
    rm_rp_docs (report, "collections", &arr);
    while (rm_rp_next (&arr, &d))
        if (shown (only, rm_rp_str (&d, "ns")))
            dot_box (out, &d);
    rm_rp_docs (report, "relationships", &arr);
    while (rm_rp_next (&arr, &d))
        if (rel_shown (only, &d))
            dot_edge (out, report, &d);
    rm_rp_puts (out, "}\n");
}

/* A Mermaid entity's name: c1, c2, ... in the report's order, with the
 * namespace as its shown name (any byte a namespace may hold is fine
 * there, and ids stay unique). */
static int
coll_index (const bson_t *report, const char *ns)
{
    bson_iter_t arr;
    bson_t c;
    int i = 0;
    rm_rp_docs (report, "collections", &arr);
    while (rm_rp_next (&arr, &c)) {
        i++;
        if (!strcmp (rm_rp_str (&c, "ns"), ns))
            return i;
    }
    return 0;
}

static void
mermaid (const bson_t *report, const only_t *only, rm_buf_t *out)
{
    bson_iter_t arr, farr;
    bson_t c, f, rel;
    int i = 0;

    rm_rp_puts (out, "erDiagram\n");
    rm_rp_docs (report, "collections", &arr);
    while (rm_rp_next (&arr, &c)) {
        ++i;
        if (!shown (only, rm_rp_str (&c, "ns")))
            continue;
        rm_rp_printf (out, "    c%d[\"", i);
        mermaid_entity (out, rm_rp_str (&c, "ns"));
        rm_rp_puts (out, "\"] {\n");
        rm_rp_docs (&c, "fields", &farr);
        while (rm_rp_next (&farr, &f)) {
            bson_iter_t t;
            const char *type = "mixed";
            double presence = rm_rp_double (&f, "presence");
            if (bson_iter_init_find (&t, &f, "types") && bson_iter_recurse (&t, &t) && bson_iter_next (&t) &&
                !bson_iter_next (&t))
                type = rm_rp_int (&f, "arrays") ? "array" : NULL;
            rm_rp_puts (out, "        ");
            if (type)
                rm_rp_puts (out, type);
            else {
                bson_iter_init_find (&t, &f, "types");
                bson_iter_recurse (&t, &t);
                bson_iter_next (&t);
                rm_rp_mermaid (out, bson_iter_key (&t), true);
            }
            rm_rp_puts (out, " ");
            mermaid_text (out, rm_rp_str (&f, "path"), true);
            rm_rp_puts (out, " \"");
            mermaid_text (out, rm_rp_str (&f, "path"), false);
            rm_rp_puts (out, ": ");
            if (rm_rp_int (&f, "arrays"))
                rm_rp_printf (out, "array, p50 %lld, max %lld", (long long) rm_rp_int (&f, "arrayLengths.p50"),
                              (long long) rm_rp_int (&f, "arrayLengths.max"));
            else
                rm_rp_types (out, &f, false);
            if (presence < 0.995)
                rm_rp_printf (out, presence < 0.005 ? ", in <1%%" : ", in %.0f%%", 100.0 * presence);
            rm_rp_puts (out, "\"\n");
        }
        rm_rp_puts (out, "    }\n");
    }
    rm_rp_docs (report, "relationships", &arr);
    while (rm_rp_next (&arr, &rel)) {
        const char *cls = rm_rp_str (&rel, "class");
        if (!rel_shown (only, &rel))
            continue;
        /* The parent's side first: one parent, zero or more children (at
         * most one for one-to-one). */
        rm_rp_printf (out, "    c%d ||--%s c%d : \"", coll_index (report, rm_rp_str (&rel, "parent")),
                      !strcmp (cls, "one-to-one") ? "o|" : "o{", coll_index (report, rm_rp_str (&rel, "child")));
        mermaid_text (out, rm_rp_str (&rel, "field"), false);
        rm_rp_puts (out, ": ");
        rm_rp_mermaid (out, cls, false);
        rm_rp_puts (out, ", ");
        rm_rp_mermaid (out, rm_rp_str (&rel, "level"), false);
        if (!rm_rp_bool (&rel, "indexed")) {
            rm_rp_puts (out, ", no index on ");
            mermaid_text (out, rm_rp_str (&rel, "indexField"), false);
        }
        rm_rp_puts (out, "\"\n");
    }
}

void
rm_report_diagram (const bson_t *report, rm_diagram_format_t fmt, const char *const *only,
                   size_t n_only, rm_buf_t *out)
{
    only_t o = {only, n_only};
    if (fmt == RM_DIAGRAM_DOT)
        dot (report, &o, out);
    else
        mermaid (report, &o, out);
}
