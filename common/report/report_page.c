/* The page of --report: one HTML file, its CSS and SVG inline, no script,
 * nothing it names outside itself, so it opens offline, attached to a
 * ticket or printed. The design as a diagram, then the relationships,
 * what was rejected and a relational import's own kinds, the plan's
 * before and after side by side with its steps, their rules and why, and
 * the collections' numbers. */
#include <errno.h>
#include <string.h>

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
    "h1{font-size:1.57em;margin:0 0 4px}\n"
    "h2{font-size:1.29em;margin:28px 0 8px;padding-bottom:3px;border-bottom:1px solid var(--line)}\n"
    "h3{font-size:1.07em;margin:18px 0 6px}\n"
    ".summary{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0 0;padding:0;list-style:none}\n"
    ".summary li{background:var(--band);border:1px solid var(--line);border-radius:6px;padding:4px 10px}\n"
    ".summary b{font-size:1.14em}\n"
    "figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:10px;background:#fbfcfd;"
    "overflow:auto}\n"
    "figcaption{font-weight:bold;margin-bottom:6px}\n"
    "figure svg{display:block;max-width:100%;height:auto;margin:0 auto}\n"
    ".pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:14px;align-items:start}\n"
    ".legend{color:var(--dim);font-size:.86em;margin:6px 0 0}\n"
    ".legend .bad{color:var(--warn)}\n"
    "table{border-collapse:collapse;width:100%;margin:6px 0;font-size:.93em}\n"
    "th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}\n"
    "th{background:var(--band);font-weight:600}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".bad{color:var(--warn);font-weight:600}.dim{color:var(--dim)}\n"
    "tr.same td{color:#8a96a3}\n"
    ".tag{display:inline-block;border-radius:4px;padding:0 6px;font-size:.86em;background:var(--band);"
    "border:1px solid var(--line)}\n"
    ".tag.confident{background:#e5f3e8;border-color:#9cc9a5}.tag.likely{background:#fff4dc;"
    "border-color:#e2c27a}.tag.possible{background:#f6e7e7;border-color:#d9a3a3}\n"
    "ol.steps{padding-left:22px}ol.steps li{margin:0 0 14px}\n"
    "pre{background:var(--band);border:1px solid var(--line);border-radius:4px;padding:6px 8px;"
    "white-space:pre-wrap;word-break:break-word;font-size:.86em;margin:4px 0}\n"
    ".why,.rule{margin:2px 0}.rule{color:var(--dim);font-size:.93em}\n"
    "ul.notes li{margin:3px 0}\n"
    "footer{margin-top:30px;color:var(--dim);font-size:.86em}\n"
    "@media print{main{max-width:none;padding:0}body{font-size:11px}.pair{display:block}"
    ".pair figure{margin-bottom:10px}figure,tr,li{break-inside:avoid}h2{break-after:avoid}"
    "figure{overflow:visible}}\n"
    "</style>\n";

static bool
design_section (rm_buf_t *b, const rm_page_t *p, bson_error_t *err)
{
    rm_rp_printf (b, "<h2 id=\"design\">The design%s</h2>\n", p->plan_name ? " before" : "");
    if (!rm_rp_figure (b, p->before, NULL, 0, "diagram", NULL, err))
        return false;
    rm_rp_puts (b, "<p class=\"legend\">A box per collection: its documents, size, average and "
                   "largest document, its fields (nested ones indented under their parent, "
                   "arrays marked [ ]) with their types and, when not in every document, how "
                   "often present. An arrow per relationship, from the referencing field to the "
                   "referenced collection: the field, its class, the evidence level; "
                   "<span class=\"bad\">red: no index on the field the join looks up by</span>; "
                   "dashed: possible only, not acted on.</p>\n");
    rm_rp_relationships (b, p->before, "relationships", "Relationships");
    rm_rp_kinds (b, p->before);
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
        rm_rp_html (b, p->plan_name);
        rm_rp_puts (b, ", run");
    } else
        rm_rp_puts (b, "The steps remodel analyze --plan-out writes, run");
    rm_rp_puts (b, " over the source into a temporary dump which was then analyzed: the after is "
                   "measured, not predicted.</p>\n");
    if (p->no_plan) {
        rm_rp_puts (b, "<p class=\"bad\">");
        rm_rp_html (b, p->no_plan);
        rm_rp_puts (b, "</p>\n");
    }
    if (p->after)
        rm_rp_changes (b, p);
    if (!rm_rp_steps (b, p, err))
        return false;
    if (p->after) {
        rm_rp_puts (b, "<h3 id=\"after\">The design after</h3>\n");
        if (!rm_rp_figure (b, p->after, NULL, 0, "after", NULL, err))
            return false;
        if (p->plan_name)
            rm_rp_relationships (b, p->after, "relationships-after", "Relationships after");
    }
    return true;
}

static bool
page (rm_buf_t *b, const rm_page_t *p, bson_error_t *err)
{
    rm_rp_puts (b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    rm_rp_html (b, p->title);
    rm_rp_puts (b, "</title>\n");
    rm_rp_puts (b, css);
    rm_rp_puts (b, "</head>\n<body>\n<main>\n<header>\n<h1>");
    rm_rp_html (b, p->title);
    rm_rp_puts (b, "</h1>\n<ul class=\"summary\">");
    rm_rp_printf (b, "<li><b>%zu</b> collections</li><li><b>%zu</b> relationships</li>",
                  rm_rp_n_docs (p->before, "collections"), rm_rp_n_docs (p->before, "relationships"));
    if (p->plan_name || p->steps)
        rm_rp_printf (b, "<li><b>%u</b> plan steps</li>", p->steps ? bson_count_keys (p->steps) : 0);
    rm_rp_puts (b, "<li>source <b>");
    rm_rp_html (b, rm_rp_str (p->before, "source"));
    rm_rp_puts (b, "</b></li></ul>\n</header>\n");

    /* What a reader of check came for first: the plan's change. */
    if (p->plan_name ? !plan_section (b, p, err) || !design_section (b, p, err)
                     : !design_section (b, p, err) || !plan_section (b, p, err))
        return false;
    rm_rp_strings (b, p->plan_checks, "What the plan check found");
    rm_rp_strings (b, p->hint_notes, "Hints");
    rm_rp_collections (b, p->before);
    rm_rp_checks_and_recs (b, p);
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
