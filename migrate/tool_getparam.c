/* The offline commands' options: parsed by the option layer
 * (remodel/cli.h, where the table of every option is), then read into
 * tool_opts_t with the checks that need the dump library (formats,
 * compression, namespace patterns). Named like mongodump's and
 * mongorestore's where they have one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"
#include "remodel/expr.h"
#include "remodel/nsselect.h"
#include "tool.h"

/* What the command line gave, and the namespace selection built from it:
 * one command runs per process, and tool_opts_t points into both; freed
 * at exit. */
static rm_cli_args_t args;
static rm_nsselect_t *selection;

static void
free_args (void)
{
    rm_nsselect_destroy (selection);
    selection = NULL;
    rm_cli_args_destroy (&args);
}

static rm_nsselect_t *
get_selection (void)
{
    if (!selection)
        selection = rm_nsselect_new ();
    return selection;
}

/* --nsInclude, --nsExclude, and the --nsFrom/--nsTo pairs. */
static bool
read_selection (const rm_cli_value_t *v, tool_opts_t *o, bson_error_t *err)
{
    const rm_cli_value_t *from = &v[RM_OPT_NS_FROM], *to = &v[RM_OPT_NS_TO];
    for (size_t i = 0; i < v[RM_OPT_NS_INCLUDE].n_all; i++)
        if (!rm_nsselect_include (get_selection (), v[RM_OPT_NS_INCLUDE].all[i], err))
            return false;
    for (size_t i = 0; i < v[RM_OPT_NS_EXCLUDE].n_all; i++)
        if (!rm_nsselect_exclude (get_selection (), v[RM_OPT_NS_EXCLUDE].all[i], err))
            return false;
    if (from->n_all != to->n_all) {
        rm_error_set (err, RM_ERR_USAGE,
                      "--nsFrom and --nsTo come in pairs: %zu --nsFrom, %zu --nsTo", from->n_all,
                      to->n_all);
        return false;
    }
    for (size_t i = 0; i < from->n_all; i++)
        if (!rm_nsselect_rename (get_selection (), from->all[i], to->all[i], err))
            return false;
    o->read.select = selection;
    return true;
}

/* The server version to compile for (compile) or whose $lookup rules to
 * join by (run); when not given, run's is RM_LOOKUP_DEFAULT_VERSION. */
static bool
read_server_version (const rm_cli_value_t *v, tool_opts_t *o, bson_error_t *err)
{
    const char *text = v[RM_OPT_SERVER_VERSION].given ? v[RM_OPT_SERVER_VERSION].text
                                                      : RM_LOOKUP_DEFAULT_VERSION;
    if (!rm_compile_version_option (text, &o->server_version, err))
        return false;
    o->server_version_given = v[RM_OPT_SERVER_VERSION].given;
    o->server_version_text = text;
    return true;
}

/* remodel compile's: its output's format (the layer took only a word its
 * row lists). */
static bool
read_compile_opts (const rm_cli_value_t *v, tool_opts_t *o, bson_error_t *err)
{
    o->compile_format = v[RM_OPT_FORMAT].text;
    o->validation_action = v[RM_OPT_ACTION].given ? v[RM_OPT_ACTION].text : "warn";
    if ((v[RM_OPT_ACTION].given || v[RM_OPT_AGAINST].given) &&
        (!o->compile_format || strcmp (o->compile_format, "validators") != 0)) {
        rm_error_set (err, RM_ERR_USAGE, "--%s: only with --format validators",
                      v[RM_OPT_ACTION].given ? "action" : "against");
        return false;
    }
    o->views = v[RM_OPT_VIEWS].given;
    if (o->views && (!o->compile_format || strcmp (o->compile_format, "mongosh") != 0)) {
        rm_error_set (err, RM_ERR_USAGE, "--views: only with --format mongosh");
        return false;
    }
    return true;
}

/* The dump library's own options: format, compression, threads. */
static bool
read_write_opts (const rm_cli_value_t *v, tool_opts_t *o, bson_error_t *err)
{
    /* The layer took only a word it lists; the dump library names it. */
    if (v[RM_OPT_FORMAT].given && !rm_format_parse (v[RM_OPT_FORMAT].text, &o->write.format)) {
        rm_error_set (err, RM_ERR_USAGE, "--format: unknown format \"%s\"", v[RM_OPT_FORMAT].text);
        return false;
    }
    if (v[RM_OPT_COMPRESS].given && v[RM_OPT_GZIP].given) {
        rm_error_set (err, RM_ERR_USAGE, "--gzip is --compress gzip: one or the other");
        return false;
    }
    if (v[RM_OPT_COMPRESS].given || v[RM_OPT_GZIP].given) {
        /* --gzip: mongodump's and mongorestore's name for it. */
        if (!rm_compress_parse (v[RM_OPT_GZIP].given ? "gzip" : v[RM_OPT_COMPRESS].text,
                                &o->write.compress, err))
            return false;
        o->write.compress_set = true;
    }
    o->write.compress.threads = (int) v[RM_OPT_THREADS].n;
    return true;
}

static bool
read_opts (rm_cmd_t cmd, const rm_cli_value_t *v, tool_opts_t *o, bson_error_t *err)
{
    o->quiet = v[RM_OPT_QUIET].given;
    o->verbose = v[RM_OPT_VERBOSE].given;
    o->force = o->write.force = v[RM_OPT_FORCE].given;
    o->json = v[RM_OPT_JSON].given;
    o->read.skip_invalid = v[RM_OPT_SKIP_INVALID].given;
    o->read.quarantine = v[RM_OPT_SKIP_INVALID].text;
    o->from = v[RM_OPT_FROM].text;
    o->to = v[RM_OPT_TO].text;
    o->tmpdir = v[RM_OPT_TMP].text;
    o->stats_json = v[RM_OPT_STATS_JSON].text;
    o->against = v[RM_OPT_AGAINST].text;
    o->dry_run = v[RM_OPT_DRY_RUN].given;
    o->batch = v[RM_OPT_BATCH].given;
    o->allow_missing = v[RM_OPT_ALLOW_MISSING].given;
    o->keep_indexes = v[RM_OPT_KEEP_INDEXES].given;
    o->compare_uuids = v[RM_OPT_COMPARE_UUIDS].given;
    o->preview = v[RM_OPT_PREVIEW].n;
    if (v[RM_OPT_MEMORY].given) {
        if (v[RM_OPT_MEMORY].n > SIZE_MAX) {
            rm_error_set (err, RM_ERR_USAGE, "--memory %s: more than this machine addresses",
                          v[RM_OPT_MEMORY].text);
            return false;
        }
        o->memory = (size_t) v[RM_OPT_MEMORY].n;
        o->memory_text = v[RM_OPT_MEMORY].text;
        /* It bounds one document's expression values too. */
        rm_expr_set_memory (o->memory);
    }
    o->ns = v[RM_OPT_NS].all;
    o->n_ns = v[RM_OPT_NS].n_all;
    o->show_skip = v[RM_OPT_SKIP].n;
    o->show_limit = v[RM_OPT_LIMIT].given ? v[RM_OPT_LIMIT].n : UINT64_MAX;
    o->show_id = v[RM_OPT_ID].text;
    o->show_canonical = v[RM_OPT_CANONICAL].given;
    o->show_pretty = v[RM_OPT_PRETTY].given;
    o->plan_out = v[RM_OPT_PLAN_OUT].text;
    o->hints = v[RM_OPT_HINTS].text;
    if (!read_server_version (v, o, err))
        return false;
    o->report = v[RM_OPT_REPORT].text;
    if (cmd == RM_CMD_COMPILE)
        return read_compile_opts (v, o, err);
    /* analyze's and check's --format: a diagram's (their row's words). */
    if (cmd == RM_CMD_ANALYZE || cmd == RM_CMD_CHECK) {
        o->diagram = v[RM_OPT_FORMAT].text;
        return read_selection (v, o, err);
    }
    return read_write_opts (v, o, err) && read_selection (v, o, err);
}

bool
tool_getparam (const tool_cmd_t *cmd, int argc, char **argv, tool_opts_t *o, char **pos,
               int *n_pos, bool *help)
{
    static bool registered;
    bson_error_t err;
    const char *name = rm_cli_command_name (cmd->cmd);

    memset (o, 0, sizeof *o);
    *help = false;
    *n_pos = 0;
    if (!registered) {
        atexit (free_args);
        registered = true;
    }
    free_args ();
    if (!rm_cli_parse (cmd->cmd, argc, argv, 1, &args, &err)) {
        tool_error (&err);
        return false;
    }
    if (args.v[RM_OPT_HELP].given) {
        *help = true;
        fputs (cmd->usage, stdout);
        return false;
    }
    if (!read_opts (cmd->cmd, args.v, o, &err)) {
        tool_error (&err);
        return false;
    }
    if (args.n_pos > (size_t) cmd->max_pos) {
        tool_errorf ("too many arguments (see remodel %s --help)", name);
        return false;
    }
    if (args.n_pos < (size_t) cmd->min_pos) {
        tool_errorf ("missing arguments (see remodel %s --help)", name);
        fputs (cmd->usage, stderr);
        return false;
    }
    for (size_t i = 0; i < args.n_pos; i++)
        pos[(*n_pos)++] = args.pos[i];
    return true;
}
