/* The pictures of remodel analyze and remodel check (remodel/report.h):
 * --format dot|mermaid, the relationship diagram as text on standard
 * output; --report FILE, the page, written whole or not at all. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remodel/report.h"
#include "tool.h"

bool
tool_pictures_check (const tool_opts_t *o, const char *src, bool rereads)
{
    if (rereads && src && !strcmp (src, "-")) {
        tool_errorf ("--%s reads the source again, to run the plan: not from standard input "
                     "(save the dump to a file first)", o->report ? "report" : "format");
        return false;
    }
    if (o->json && o->diagram) {
        tool_errorf ("--json and --format %s: one or the other", o->diagram);
        return false;
    }
    if (o->report && !rm_report_have_svg ()) {
        bson_error_t err;
        rm_report_svg ("", 0, NULL, &err);
        tool_error (&err);
        return false;
    }
    return true;
}

void
tool_diagram_print (const bson_t *report, const char *format)
{
    rm_buf_t b;
    rm_buf_init (&b);
    rm_report_diagram (report, strcmp (format, "dot") ? RM_DIAGRAM_MERMAID : RM_DIAGRAM_DOT, NULL, 0, &b);
    fwrite (b.data, 1, b.len, stdout);
    rm_buf_destroy (&b);
}

/* The page at path, by a temporary name renamed over it: a failed write
 * leaves nothing, and an earlier page stays whole until the new one is. */
static bool
write_page (const char *path, const rm_page_t *p, bson_error_t *err)
{
    struct stat st;
    /* Something other than a file (/dev/stdout, a pipe) is written to as
     * it is: renaming over it would replace it. */
    bool direct = stat (path, &st) == 0 && !S_ISREG (st.st_mode);
    char *tmp = direct ? bson_strdup (path) : bson_strdup_printf ("%s.tmp-%ld", path, (long) getpid ());
    FILE *f = fopen (tmp, "w");
    bool ok = false;
    int e = f ? 0 : errno;   /* the system's reason, when it is one */

    if (f) {
        ok = rm_report_page (f, p, err);
        if (fclose (f) != 0 && ok) {
            e = errno;
            ok = false;
        }
        if (ok && !direct && rename (tmp, path) != 0) {
            e = errno;
            ok = false;
        }
        if (!ok && !direct)
            unlink (tmp);
    }
    if (!ok) {
        if (e)
            rm_error_set (err, RM_ERR_IO, "cannot write the report: %s", strerror (e));
        rm_error_prefix (err, "%s", path);
    }
    bson_free (tmp);
    return ok;
}

static void
engine_opts (const tool_opts_t *o, rm_engine_opts_t *eo)
{
    memset (eo, 0, sizeof *eo);
    eo->memory = o->memory;
    eo->tmpdir = o->tmpdir;
    eo->allow_missing = o->allow_missing;
    eo->lookup_since_36681 = rm_compile_lookup_since_36681 (o->server_version);
}

/* The array report[key] as a document, or NULL (out unused). */
static const bson_t *
array_of (const bson_t *report, const char *key, bson_t *out)
{
    bson_iter_t it;
    uint32_t len;
    const uint8_t *data;
    if (!bson_iter_init_find (&it, report, key) || !BSON_ITER_HOLDS_ARRAY (&it))
        return NULL;
    bson_iter_array (&it, &len, &data);
    return bson_init_static (out, data, len) ? out : NULL;
}

/* The steps as a plan's JSON, for the plan parser. */
static char *
plan_json (const bson_t *steps)
{
    bson_t doc = BSON_INITIALIZER;
    char *j;
    BSON_APPEND_INT32 (&doc, "remodel", 1);
    BSON_APPEND_ARRAY (&doc, "steps", steps);
    j = bson_as_canonical_extended_json (&doc, NULL);
    bson_destroy (&doc);
    return j;
}

bool
tool_analyze_report (const rm_analysis_t *a, const bson_t *report, const char *src, const tool_opts_t *o,
                     const rm_analyze_opts_t *ao, bson_error_t *err)
{
    bson_t steps = BSON_INITIALIZER, after, recs, checks, hints, tests;
    rm_analyze_opts_t after_ao = *ao;
    rm_engine_opts_t eo;
    rm_plan_t plan;
    rm_analysis_t *aa = NULL;
    bson_error_t why = {0};
    char *title = bson_strdup_printf ("remodel analyze %s", src), *j;
    rm_page_t p = {.title = title, .before = report};
    bool ok, planned;

    p.recs = array_of (report, "recommendations", &recs);
    p.plan_checks = array_of (report, "planChecks", &checks);
    p.hint_notes = array_of (report, "hintNotes", &hints);
    p.checks = array_of (report, "checks", &tests);
    /* The after of the plan --plan-out writes: the same steps, checked. */
    planned = rm_analysis_plan (a, &steps, &why);
    if (planned && bson_empty (&steps))
        p.no_plan = "Nothing to change: no step recommended.";
    else if (planned) {
        j = plan_json (&steps);
        planned = rm_plan_parse (&plan, j, strlen (j), &why);
        bson_free (j);
        if (planned) {
            engine_opts (o, &eo);
            /* The plan runs over what --ns took; its result is read whole,
             * with the namespaces the plan made, which --ns may not name. */
            after_ao.select = NULL;
            after_ao.hints = NULL;
            after_ao.progress = NULL;
            aa = rm_report_after (&plan, src, ao->select, &eo, &after_ao, err);
            if (!aa) {
                rm_plan_destroy (&plan);
                bson_destroy (&steps);
                bson_free (title);
                return false;
            }
        }
        p.steps = &steps;
        if (planned)
            p.plan = &plan;
    }
    if (!planned)
        p.no_plan = why.message;
    if (aa) {
        bson_init (&after);
        rm_analysis_report (aa, &after);
        p.after = &after;
    }
    ok = write_page (o->report, &p, err);
    if (p.plan)
        rm_plan_destroy (&plan);
    if (aa) {
        bson_destroy (&after);
        rm_analysis_destroy (aa);
    }
    bson_destroy (&steps);
    bson_free (title);
    return ok;
}

/* The plan file's steps, as shown on the page (NULL when it holds none). */
static bool
plan_steps (const char *path, bson_t *doc, bson_t *steps)
{
    bson_error_t err;
    bson_json_reader_t *jr = bson_json_reader_new_from_file (path, &err);
    bool ok = jr && bson_json_reader_read (jr, doc, &err) == 1;
    if (jr)
        bson_json_reader_destroy (jr);
    return ok && array_of (doc, "steps", steps);
}

bool
tool_check_pictures (const rm_plan_t *plan, const char *plan_path, const tool_opts_t *o, bson_error_t *err)
{
    rm_analyze_opts_t ao = {0};
    rm_engine_opts_t eo;
    rm_analysis_t *before = NULL, *after = NULL;
    bson_t rb = BSON_INITIALIZER, ra = BSON_INITIALIZER, doc = BSON_INITIALIZER, steps;
    bool ok;

    ao.memory = o->memory;
    ao.tmpdir = o->tmpdir;
    engine_opts (o, &eo);
    after = rm_report_after (plan, o->against, NULL, &eo, &ao, err);
    ok = after != NULL;
    if (ok)
        rm_analysis_report (after, &ra);
    if (ok && o->diagram)
        tool_diagram_print (&ra, o->diagram);
    if (ok && o->report) {
        char *title = bson_strdup_printf ("remodel check %s --against %s", plan_path, o->against);
        rm_page_t p = {.title = title, .plan_name = plan_path, .plan = plan, .after = &ra};
        before = rm_analyze (o->against, &ao, err);
        ok = before != NULL;
        if (ok) {
            rm_analysis_report (before, &rb);
            p.before = &rb;
            if (plan_steps (plan_path, &doc, &steps))
                p.steps = &steps;
            ok = write_page (o->report, &p, err);
        }
        bson_free (title);
    }
    rm_analysis_destroy (before);
    rm_analysis_destroy (after);
    bson_destroy (&rb);
    bson_destroy (&ra);
    bson_destroy (&doc);
    return ok;
}
