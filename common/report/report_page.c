/* The page of --report: one HTML file, its CSS and SVG inline, no script,
 * nothing it names outside itself, so it opens offline, attached to a
 * ticket or printed. The design as a diagram, then the relationships and
 * what was rejected, the plan's before and after side by side with its
 * steps, their rules and why, and the collections' numbers. */
#include <errno.h>
#include <string.h>

#include "remodel/extjson.h"
#include "report_int.h"

/* Sized for a laptop's screen and for A4 or Letter paper: the diagrams
 * scale to the column, tables stay within it, nothing depends on color
 * alone (dashed arrows, words beside the reds). */
static const char css[] =
    "<style>\n"
    ":root{--ink:#1d2733;--dim:#5b6b7c;--line:#d5dde6;--accent:#2f5d8a;--warn:#b30000;--band:#f3f6f9}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:14px/1.45 -apple-system,\"Segoe UI\",Helvetica,Arial,sans-serif;color:var(--ink);"
    "background:#fff}\n"
    "main{max-width:1400px;margin:0 auto;padding:20px 28px 40px}\n"
    "header{border-bottom:3px solid var(--accent);margin-bottom:8px;padding-bottom:8px}\n"
    "h1{font-size:22px;margin:0 0 4px}h1 small{font-weight:normal;color:var(--dim);font-size:14px}\n"
    "h2{font-size:18px;margin:28px 0 8px;padding-bottom:3px;border-bottom:1px solid var(--line)}\n"
    "h3{font-size:15px;margin:18px 0 6px}\n"
    ".summary{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0 0;padding:0;list-style:none}\n"
    ".summary li{background:var(--band);border:1px solid var(--line);border-radius:6px;padding:4px 10px}\n"
    ".summary b{font-size:16px}\n"
    "figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:10px;background:#fbfcfd;"
    "overflow:auto}\n"
    "figcaption{font-weight:bold;margin-bottom:6px}\n"
    "figure svg{display:block;max-width:100%;height:auto;margin:0 auto}\n"
    ".pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:14px;align-items:start}\n"
    ".legend{color:var(--dim);font-size:12px;margin:6px 0 0}\n"
    ".legend .bad{color:var(--warn)}\n"
    "table{border-collapse:collapse;width:100%;margin:6px 0;font-size:13px}\n"
    "th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}\n"
    "th{background:var(--band);font-weight:600}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".bad{color:var(--warn);font-weight:600}.dim{color:var(--dim)}\n"
    "tr.same td{color:#8a96a3}\n"
    ".tag{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;background:var(--band);"
    "border:1px solid var(--line)}\n"
    ".tag.confident{background:#e5f3e8;border-color:#9cc9a5}.tag.likely{background:#fff4dc;"
    "border-color:#e2c27a}.tag.possible{background:#f6e7e7;border-color:#d9a3a3}\n"
    "ol.steps{padding-left:22px}ol.steps li{margin:0 0 14px}\n"
    "pre{background:var(--band);border:1px solid var(--line);border-radius:4px;padding:6px 8px;"
    "white-space:pre-wrap;word-break:break-word;font-size:12px;margin:4px 0}\n"
    ".why,.rule{margin:2px 0}.rule{color:var(--dim);font-size:13px}\n"
    "ul.notes li{margin:3px 0}\n"
    "footer{margin-top:30px;color:var(--dim);font-size:12px}\n"
    "@media print{main{max-width:none;padding:0}body{font-size:11px}.pair{display:block}"
    ".pair figure{margin-bottom:10px}figure,tr,li{break-inside:avoid}h2{break-after:avoid}"
    "figure{overflow:visible}}\n"
    "</style>\n";

static void
h (rm_buf_t *b, const char *s)
{
    rm_rp_html (b, s);
}

/* The diagram of report (only the n_only namespaces of only, when not
 * NULL), drawn, in a figure. */
static bool
figure (rm_buf_t *b, const bson_t *report, const char *const *only, size_t n_only, const char *id,
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

static size_t
count (const bson_t *d, const char *key)
{
    bson_iter_t arr;
    bson_t x;
    size_t n = 0;
    if (rm_rp_docs (d, key, &arr))
        while (rm_rp_next (&arr, &x))
            n++;
    return n;
}

static void
strings (rm_buf_t *b, const bson_t *arr_doc, const char *title)
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
            h (b, bson_iter_utf8 (&it, NULL));
            rm_rp_puts (b, "</li>\n");
        }
    if (n)
        rm_rp_puts (b, "</ul>\n");
}

static void
relationships (rm_buf_t *b, const bson_t *r, const char *id, const char *title)
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
        h (b, rm_rp_str (&rel, "from"));
        rm_rp_puts (b, ".<b>");
        h (b, rm_rp_str (&rel, "field"));
        rm_rp_puts (b, "</b> → ");
        h (b, rm_rp_str (&rel, "to"));
        rm_rp_puts (b, ".");
        h (b, rm_rp_str (&rel, "key"));
        rm_rp_printf (b, "</td><td>%s</td><td><b>",
                      !strcmp (rm_rp_str (&rel, "direction"), "childRefs") ? "array of the parent"
                                                                              : "field of the child");
        h (b, rm_rp_str (&rel, "class"));
        rm_rp_printf (b, "</b>%s</td><td class=\"n\">%lld / %lld / %lld</td><td class=\"n\">%.1f%%</td>",
                      rm_rp_bool (&rel, "manyToMany") ? " (many-to-many)" : "",
                      (long long) rm_rp_int (&rel, "childrenPerParent.p50"),
                      (long long) rm_rp_int (&rel, "childrenPerParent.p99"),
                      (long long) rm_rp_int (&rel, "childrenPerParent.max"),
                      100.0 * rm_rp_double (&rel, "matchRate"));
        rm_rp_puts (b, "<td><span class=\"tag ");
        h (b, rm_rp_str (&rel, "level"));
        rm_rp_puts (b, "\">");
        h (b, rm_rp_str (&rel, "level"));
        rm_rp_printf (b, "</span> score %.1f</td><td>", rm_rp_double (&rel, "score"));
        if (rm_rp_bool (&rel, "indexed"))
            rm_rp_puts (b, "indexed");
        else {
            rm_rp_puts (b, "<span class=\"bad\">none on ");
            h (b, rm_rp_str (&rel, "indexNs"));
            rm_rp_puts (b, ".");
            h (b, rm_rp_str (&rel, "indexField"));
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
        h (b, rm_rp_str (&rel, "from"));
        rm_rp_puts (b, ".");
        h (b, rm_rp_str (&rel, "field"));
        rm_rp_puts (b, " → ");
        h (b, rm_rp_str (&rel, "to"));
        rm_rp_puts (b, ".");
        h (b, rm_rp_str (&rel, "key"));
        rm_rp_printf (b, ": score %.1f", rm_rp_double (&rel, "score"));
        {
            bson_iter_t ev;
            bson_t e;
            rm_rp_docs (&rel, "evidence", &ev);
            while (rm_rp_next (&ev, &e)) {
                rm_rp_printf (b, "; [%+.1f] ", rm_rp_double (&e, "points"));
                h (b, rm_rp_str (&e, "what"));
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
static void
changes (rm_buf_t *b, const rm_page_t *p)
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
            h (b, ns);
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
                        h (b, rm_rp_str (&f, "path"));
                        rm_rp_printf (b, " %lld / %lld", (long long) rm_rp_int (&f, "arrayLengths.p50"),
                                      (long long) rm_rp_int (&f, "arrayLengths.max"));
                    }
            }
            rm_rp_puts (b, "</td></tr>\n");
        }
    }
    rm_rp_puts (b, "</table>\n");
}

/* The recommendation whose why is the step's, for its rule of thumb. */
static const char *
rule_of (const bson_t *recs, const char *why)
{
    bson_iter_t arr;
    bson_t r;
    if (!recs || !*why || !bson_iter_init (&arr, recs))
        return NULL;
    while (rm_rp_next (&arr, &r))
        if (!strcmp (rm_rp_str (&r, "why"), why))
            return rm_rp_str (&r, "rule");
    return NULL;
}

/* Step i's namespaces, read or written, each once. */
static size_t
step_names (const rm_page_t *p, size_t i, const char **names, size_t max)
{
    const rm_nsref_t *refs[16];
    size_t n = 0, k;
    if (!p->plan || i >= p->plan->n)
        return 0;
    for (int dir = 0; dir < 2; dir++) {
        k = dir ? rm_step_outputs (&p->plan->steps[i], refs, 16) : rm_step_inputs (&p->plan->steps[i], refs, 16);
        for (size_t j = 0; j < k && n < max; j++) {
            size_t m = 0;
            while (m < n && strcmp (names[m], refs[j]->text))
                m++;
            if (m == n)
                names[n++] = refs[j]->text;
        }
    }
    return n;
}

/* The step's namespaces before and after, side by side. */
static bool
step_pair (rm_buf_t *b, const rm_page_t *p, size_t i, bson_error_t *err)
{
    const char *names[32];
    size_t n = step_names (p, i, names, 32);
    bool ok;
    if (!n || !p->after)
        return true;
    rm_rp_puts (b, "<div class=\"pair\">\n");
    ok = figure (b, p->before, names, n, "", "Before", err) && figure (b, p->after, names, n, "", "After", err);
    rm_rp_puts (b, "</div>\n");
    return ok;
}

static bool
steps (rm_buf_t *b, const rm_page_t *p, bson_error_t *err)
{
    bson_iter_t it, op;
    size_t n = 0;
    rm_buf_t json;

    if (!p->steps || !bson_iter_init (&it, p->steps))
        return true;
    rm_buf_init (&json);
    while (bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t body, shown = BSON_INITIALIZER;
        const char *why, *rule;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &op) || !bson_iter_next (&op) ||
            !BSON_ITER_HOLDS_DOCUMENT (&op))
            continue;
        if (!n++)
            rm_rp_puts (b, "<h3 id=\"steps\">Steps</h3>\n<ol class=\"steps\">\n");
        bson_iter_document (&op, &len, &data);
        bson_init_static (&body, data, len);
        why = rm_rp_str (&body, "why");
        bson_copy_to_excluding_noinit (&body, &shown, "why", NULL);
        rm_rp_puts (b, "<li><b>");
        h (b, bson_iter_key (&op));
        rm_rp_puts (b, "</b>\n");
        if (!step_pair (b, p, n - 1, err)) {
            bson_destroy (&shown);
            rm_buf_destroy (&json);
            return false;
        }
        rm_rp_puts (b, "<pre>");
        rm_buf_reset (&json);
        rm_extjson_doc (&json, bson_get_data (&shown), shown.len, RM_EXTJSON_RELAXED, false);
        rm_buf_append (&json, "", 1);
        h (b, (const char *) json.data);
        rm_rp_puts (b, "</pre>\n");
        if (*why) {
            rm_rp_puts (b, "<p class=\"why\"><b>Why:</b> ");
            h (b, why);
            rm_rp_puts (b, "</p>\n");
        }
        if ((rule = rule_of (p->recs, why)) && *rule) {
            rm_rp_puts (b, "<p class=\"rule\"><b>Rule of thumb:</b> ");
            h (b, rule);
            rm_rp_puts (b, "</p>\n");
        }
        rm_rp_puts (b, "</li>\n");
        bson_destroy (&shown);
    }
    if (n)
        rm_rp_puts (b, "</ol>\n");
    rm_buf_destroy (&json);
    return true;
}

static void
collections (rm_buf_t *b, const bson_t *r)
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
        h (b, rm_rp_str (&c, "ns"));
        rm_rp_puts (b, "</td>");
        count_cell (b, &c);
        size_cell (b, &c, "bytes");
        size_cell (b, &c, "avgSize");
        size_cell (b, &c, "p99Size");
        size_cell (b, &c, "maxSize");
        rm_rp_printf (b, "<td class=\"n\">%.4f%%</td><td class=\"n\">%zu%s</td></tr>\n",
                      100.0 * rm_rp_double (&c, "maxOf16MiB"), count (&c, "fields"),
                      rm_rp_bool (&c, "fieldsCapped") ? "+" : "");
    }
    rm_rp_puts (b, "</table>\n");
}

static void
checks_and_recs (rm_buf_t *b, const rm_page_t *p)
{
    bson_iter_t arr;
    bson_t d;
    size_t n = 0;

    if (p->checks && bson_iter_init (&arr, p->checks))
        while (rm_rp_next (&arr, &d)) {
            if (!n++)
                rm_rp_puts (b, "<h2 id=\"checks\">Checks</h2>\n<ul class=\"notes\">\n");
            rm_rp_puts (b, "<li><b>");
            h (b, rm_rp_str (&d, "check"));
            rm_rp_puts (b, "</b> ");
            h (b, rm_rp_str (&d, "ns"));
            if (*rm_rp_str (&d, "field")) {
                rm_rp_puts (b, ".");
                h (b, rm_rp_str (&d, "field"));
            }
            rm_rp_puts (b, ": ");
            h (b, rm_rp_str (&d, "finding"));
            rm_rp_puts (b, "<p class=\"rule\">");
            h (b, rm_rp_str (&d, "rule"));
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
            h (b, rm_rp_str (&d, "relationship"));
            rm_rp_puts (b, "</td><td><b>");
            h (b, rm_rp_str (&d, "pattern"));
            rm_rp_puts (b, "</b></td><td>");
            h (b, rm_rp_str (&d, "why"));
            rm_rp_puts (b, "<p class=\"rule\">");
            h (b, rm_rp_str (&d, "rule"));
            rm_rp_puts (b, "</p></td><td class=\"dim\">");
            h (b, rm_rp_str (&d, "dependsOn"));
            rm_rp_puts (b, "</td></tr>\n");
        }
    if (n)
        rm_rp_puts (b, "</table>\n");
}

static bool
design_section (rm_buf_t *b, const rm_page_t *p, bson_error_t *err)
{
    rm_rp_printf (b, "<h2 id=\"design\">The design%s</h2>\n", p->plan_name ? " before" : "");
    if (!figure (b, p->before, NULL, 0, "diagram", NULL, err))
        return false;
    rm_rp_puts (b, "<p class=\"legend\">A box per collection: its documents, size, average and "
                   "largest document, its fields (nested ones indented under their parent, "
                   "arrays marked [ ]) with their types and, when not in every document, how "
                   "often present. An arrow per relationship, from the referencing field to the "
                   "referenced collection: the field, its class, the evidence level; "
                   "<span class=\"bad\">red: no index on the field the join looks up by</span>; "
                   "dashed: possible only, not acted on.</p>\n");
    relationships (b, p->before, "relationships", "Relationships");
    return true;
}

/* The plan: what changes per namespace, each step before and after with
 * its why and rule, then the whole design after. */
static bool
plan_section (rm_buf_t *b, const rm_page_t *p, bson_error_t *err)
{
    rm_rp_printf (b, "<h2 id=\"plan\">%s</h2>\n", p->plan_name ? "The plan" : "The recommended plan");
    rm_rp_puts (b, "<p>");
    if (p->plan_name) {
        h (b, p->plan_name);
        rm_rp_puts (b, ", run");
    } else
        rm_rp_puts (b, "The steps remodel analyze --plan-out writes, run");
    rm_rp_puts (b, " over the source into a temporary dump which was then analyzed: the after is "
                   "measured, not predicted.</p>\n");
    if (p->no_plan) {
        rm_rp_puts (b, "<p class=\"bad\">");
        h (b, p->no_plan);
        rm_rp_puts (b, "</p>\n");
    }
    if (p->after)
        changes (b, p);
    if (!steps (b, p, err))
        return false;
    if (p->after) {
        rm_rp_puts (b, "<h3 id=\"after\">The design after</h3>\n");
        if (!figure (b, p->after, NULL, 0, "after", NULL, err))
            return false;
        if (p->plan_name)
            relationships (b, p->after, "relationships-after", "Relationships after");
    }
    return true;
}

static bool
page (rm_buf_t *b, const rm_page_t *p, bson_error_t *err)
{
    rm_rp_puts (b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    h (b, p->title);
    rm_rp_puts (b, "</title>\n");
    rm_rp_puts (b, css);
    rm_rp_puts (b, "</head>\n<body>\n<main>\n<header>\n<h1>");
    h (b, p->title);
    rm_rp_puts (b, "</h1>\n<ul class=\"summary\">");
    rm_rp_printf (b, "<li><b>%zu</b> collections</li><li><b>%zu</b> relationships</li>",
                  count (p->before, "collections"), count (p->before, "relationships"));
    if (p->plan_name || p->steps)
        rm_rp_printf (b, "<li><b>%u</b> plan steps</li>", p->steps ? bson_count_keys (p->steps) : 0);
    rm_rp_puts (b, "<li>source <b>");
    h (b, rm_rp_str (p->before, "source"));
    rm_rp_puts (b, "</b></li></ul>\n</header>\n");

    /* What a reader of check came for first: the plan's change. */
    if (p->plan_name ? !plan_section (b, p, err) || !design_section (b, p, err)
                     : !design_section (b, p, err) || !plan_section (b, p, err))
        return false;
    strings (b, p->plan_checks, "What the plan check found");
    strings (b, p->hint_notes, "Hints");
    collections (b, p->before);
    checks_and_recs (b, p);
    rm_rp_puts (b, "<footer>Made by remodel: the diagrams laid out by Graphviz. Sizes in KB and MB "
                   "of 1024; p50 and p99 are the median and 99th percentile.</footer>\n"
                   "</main>\n</body>\n</html>\n");
    return true;
}

bool
rm_report_page (FILE *f, const rm_page_t *p, bson_error_t *err)
{
    rm_buf_t b;
    bool ok;
    rm_buf_init (&b);
    ok = page (&b, p, err);
    if (ok && fwrite (b.data, 1, b.len, f) != b.len) {
        rm_error_set (err, RM_ERR_IO, "cannot write the report: %s", strerror (errno));
        ok = false;
    }
    rm_buf_destroy (&b);
    return ok;
}
