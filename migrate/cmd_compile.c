/* remodel compile PLAN: the plan as the server's aggregation pipelines
 * (remodel/compile.h), or a mongosh script running them. Plan in,
 * pipelines out: no server, no driver. */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const char usage[] =
    "usage: remodel compile PLAN [--format pipeline|mongosh|views] [--canonical]\n"
    "                            [--server-version V] [--views]\n"
    "       remodel compile PLAN --format validators [--against SRC] [--action A]\n"
    "                            [--canonical]\n"
    "\n"
    "Prints the plan as the server's aggregation pipelines, one per step and\n"
    "pass, each ending in a $merge into the step's side-by-side result (the\n"
    "names remodel online uses), or as a mongosh script that runs them range\n"
    "by range, resumably, with the online mode's lease and checkpoints. Steps\n"
    "no pipeline expresses are named on standard error (exit 0: remodel online\n"
    "run --server-side runs them client-side). No server is needed.\n"
    "\n"
    "  --format F         pipeline (default; values in mongosh's syntax, to paste:\n"
    "                     NumberLong(\"5\"), Double(1), ISODate(...)), mongosh (a\n"
    "                     script that runs them range by range, resumable),\n"
    "                     views (per namespace the plan changed, the create\n"
    "                     command of a view COLL_before of the new collections\n"
    "                     giving back the old documents, a line each; the\n"
    "                     namespaces no view gives back named on standard\n"
    "                     error) or\n"
    "                     validators (per namespace the plan changed, the\n"
    "                     collMod command of a $jsonSchema validator of the\n"
    "                     fields it writes, a line each)\n"
    "  --against SRC      --format validators: the types and required fields\n"
    "                     from SRC, a dump of the new design (remodel run's\n"
    "                     output), as analyze counts them\n"
    "  --action A         --format validators: validationAction warn (default)\n"
    "                     or error\n"
    "  --views            --format mongosh: the script also creates the views of\n"
    "                     the old shape, when run again after finalize with\n"
    "                     var views = true\n"
    "  --canonical        --format pipeline, views, validators: canonical\n"
    "                     Extended JSON (strict JSON, for programs) instead\n"
    "  --server-version V the stages and operators of MongoDB V only (default\n"
    "                     5.0; 3.6 or later)\n"
    "  --quiet, -q        the steps that run client-side (views: the namespaces\n"
    "                     without a view) not named\n"
    "  --help, -h         this text\n";

/* The namespaces without a view, a line each in why, on standard error. */
static void
print_refusals (const char *why, const tool_opts_t *o)
{
    for (const char *line = why, *nl; !o->quiet && *line; line = nl + 1) {
        nl = strchr (line, '\n');
        fprintf (stderr, "remodel: compile: %.*s\n", (int) (nl - line), line);
    }
}

/* --format views: the views of the old shape; a namespace without one
 * named on standard error (exit 0: the others are printed). */
static int
print_views (const char *path, const tool_opts_t *o)
{
    bson_error_t err;
    rm_plan_t plan;
    char *text, *why;

    if (!rm_plan_load (&plan, path, &err)) {
        tool_error (&err);
        return err.code == RM_ERR_USAGE || err.code == RM_ERR_UNSUPPORTED ? 2 : 1;
    }
    text = rm_compile_print_views (&plan, o->server_version, o->show_canonical, &why);
    fputs (text, stdout);
    print_refusals (why, o);
    bson_free (text);
    bson_free (why);
    rm_plan_destroy (&plan);
    return 0;
}

/* --format validators: with --against, analyze's type counts of that
 * dump (the new design's) decide the types and `required`. */
static int
print_validators (const char *path, const tool_opts_t *o)
{
    bson_error_t err;
    rm_plan_t plan;
    rm_analysis_t *a = NULL;
    bson_t report = BSON_INITIALIZER;
    char *text;

    if (!rm_plan_load (&plan, path, &err)) {
        tool_error (&err);
        return err.code == RM_ERR_USAGE || err.code == RM_ERR_UNSUPPORTED ? 2 : 1;
    }
    if (o->against) {
        rm_analyze_opts_t ao = {.memory = o->memory, .tmpdir = o->tmpdir};
        if (!(a = rm_analyze (o->against, &ao, &err))) {
            tool_error (&err);
            bson_destroy (&report);
            rm_plan_destroy (&plan);
            return rm_cli_exit_status (&err);
        }
        rm_analysis_report (a, &report);
    }
    text = rm_validators_print (&plan, a ? &report : NULL, o->validation_action,
                                o->show_canonical);
    fputs (text, stdout);
    bson_free (text);
    bson_destroy (&report);
    if (a)
        rm_analysis_destroy (a);
    rm_plan_destroy (&plan);
    return 0;
}

int
cmd_compile (int argc, char **argv)
{
    static const tool_cmd_t cmd = {.usage = usage, .cmd = RM_CMD_COMPILE, .min_pos = 1, .max_pos = 1};
    tool_opts_t o;
    char *pos[1], *text;
    int n;
    bool help;
    bson_error_t err;
    rm_plan_t plan;
    rm_names_t nm;
    rm_compile_plan_t c;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    if (!o.server_version_given)
        rm_compile_version_parse ("5.0", &o.server_version);
    if (o.compile_format && !strcmp (o.compile_format, "views"))
        return print_views (pos[0], &o);
    if (o.compile_format && !strcmp (o.compile_format, "validators"))
        return print_validators (pos[0], &o);
    if (!rm_plan_load (&plan, pos[0], &err)) {
        tool_error (&err);
        /* A plan at fault is a refusal, as remodel online says it. */
        return err.code == RM_ERR_USAGE || err.code == RM_ERR_UNSUPPORTED ? 2 : 1;
    }
    rm_names_identify (&nm, pos[0]);
    /* A step no pipeline expresses is a reason (below), not an error. */
    if (!rm_compile_plan (&plan, &nm, o.server_version, &c, &err)) {
        tool_error (&err);
        rm_compile_plan_destroy (&c);
        rm_names_clear (&nm);
        rm_plan_destroy (&plan);
        return rm_cli_exit_status (&err);
    }
    for (size_t i = 0; i < c.n && !o.quiet; i++)
        if (!c.steps[i].n_passes)
            fprintf (stderr, "remodel: compile: step %zu (%s) runs client-side: %s\n",
                     c.steps[i].s->index, c.steps[i].s->op, c.steps[i].reason);
    if (o.views) {
        char *why;
        text = rm_compile_print_mongosh_views (&nm, &c, &plan, &why);
        print_refusals (why, &o);
        bson_free (why);
    } else if (o.compile_format && !strcmp (o.compile_format, "mongosh")) {
        text = rm_compile_print_mongosh (&nm, &c);
    } else {
        text = rm_compile_print_pipelines (&nm, &c, o.show_canonical);
    }
    fputs (text, stdout);
    bson_free (text);
    rm_compile_plan_destroy (&c);
    rm_names_clear (&nm);
    rm_plan_destroy (&plan);
    return 0;
}
