/* The page's steps: each as the plan writes it, its namespaces drawn
 * before and after side by side, its why, and the rule of thumb of the
 * recommendation it came from. */
#include <string.h>

#include "remodel/extjson.h"
#include "report_int.h"

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
    ok = rm_rp_figure (b, p->before, names, n, "", "Before", err) && rm_rp_figure (b, p->after, names, n, "", "After", err);
    rm_rp_puts (b, "</div>\n");
    return ok;
}

bool
rm_rp_steps (rm_buf_t *b, const rm_page_t *p, bson_error_t *err)
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
        rm_rp_html (b, bson_iter_key (&op));
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
        rm_rp_html (b, (const char *) json.data);
        rm_rp_puts (b, "</pre>\n");
        if (*why) {
            rm_rp_puts (b, "<p class=\"why\"><b>Why:</b> ");
            rm_rp_html (b, why);
            rm_rp_puts (b, "</p>\n");
        }
        if ((rule = rule_of (p->recs, why)) && *rule) {
            rm_rp_puts (b, "<p class=\"rule\"><b>Rule of thumb:</b> ");
            rm_rp_html (b, rule);
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
