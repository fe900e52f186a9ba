/* Command-line options shared by the commands, named like mongodump's and
 * mongorestore's where they have one. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/nsselect.h"
#include "tool.h"

enum { OPT_FORMAT = 256, OPT_COMPRESS, OPT_FORCE, OPT_QUIET, OPT_JSON, OPT_SKIP, OPT_HELP,
       OPT_THREADS, OPT_FROM, OPT_TO, OPT_MEMORY, OPT_TMP, OPT_DRY_RUN, OPT_STATS_JSON, OPT_BATCH,
       OPT_AGAINST, OPT_NS, OPT_SKIP_N, OPT_LIMIT, OPT_ID, OPT_CANONICAL, OPT_PRETTY,
       OPT_PREVIEW, OPT_NS_INCLUDE, OPT_NS_EXCLUDE, OPT_NS_FROM, OPT_NS_TO, OPT_GZIP, OPT_VERBOSE,
       OPT_ALLOW_MISSING, OPT_SERVER_VERSION };

/* The namespace selection of this process: one command runs per process;
 * freed at exit. */
static rm_nsselect_t *selection;

static void
free_selection (void)
{
    rm_nsselect_destroy (selection);
    selection = NULL;
}

static rm_nsselect_t *
get_selection (void)
{
    if (!selection) {
        selection = rm_nsselect_new ();
        atexit (free_selection);
    }
    return selection;
}

/* The decimal digits at *p (at least one, no sign: strtoull would take
 * "-5M" as a huge number, i.e. no limit) into *v, *p moved past them;
 * false when there are none or they pass 2^64 - 1. */
static bool
parse_digits (const char **p, uint64_t *v)
{
    const char *s = *p;
    *v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (*v > (UINT64_MAX - (unsigned) (*s - '0')) / 10)
            return false;
        *v = *v * 10 + (unsigned) (*s - '0');
    }
    *p = s;
    return true;
}

/* "512M", "64M", "1G", "100K" or bytes: digits, a unit, at most SIZE_MAX. */
bool
tool_parse_size (const char *text, size_t *out)
{
    uint64_t v, mult = 1;
    const char *p = text;

    if (!parse_digits (&p, &v))
        return false;
    switch (*p) {
    case 'k': case 'K': mult = 1ull << 10; p++; break;
    case 'm': case 'M': mult = 1ull << 20; p++; break;
    case 'g': case 'G': mult = 1ull << 30; p++; break;
    case 't': case 'T': mult = 1ull << 40; p++; break;
    default: break;
    }
    if (*p == 'B' || *p == 'b')
        p++;
    if (*p || v == 0 || v > SIZE_MAX / mult)
        return false;
    *out = (size_t) (v * mult);
    return true;
}

/* A decimal integer from lo to hi, nothing else. */
static bool
parse_int (const char *text, int lo, int hi, int *out)
{
    uint64_t v;
    if (!parse_digits (&text, &v) || *text || v < (uint64_t) lo || v > (uint64_t) hi)
        return false;
    *out = (int) v;
    return true;
}

/* A count of documents: digits only, 0 allowed. */
static bool
parse_count (const char *text, uint64_t *out)
{
    return parse_digits (&text, out) && *text == '\0';
}

/* Options only some commands take. */
static bool
allowed (const tool_cmd_t *cmd, int c)
{
    switch (c) {
    case OPT_MEMORY: case OPT_TMP:
        return cmd->runs || cmd->sorts;
    case OPT_FROM: case OPT_TO: case OPT_DRY_RUN: case OPT_PREVIEW:
    case OPT_STATS_JSON: case OPT_BATCH:
        return cmd->runs;
    case OPT_AGAINST:
        return cmd->checks;
    case OPT_ALLOW_MISSING:
        return cmd->runs || cmd->checks;
    case OPT_NS_INCLUDE: case OPT_NS_EXCLUDE: case OPT_NS_FROM: case OPT_NS_TO:
        return cmd->reads;
    case OPT_GZIP:
        return cmd->writes;
    case OPT_NS: case OPT_SKIP_N: case OPT_LIMIT: case OPT_ID: case OPT_CANONICAL: case OPT_PRETTY:
        return cmd->shows;
    case OPT_SKIP:
        return cmd->reads;
    case OPT_FORMAT:
        return cmd->writes || cmd->compiles;
    case OPT_SERVER_VERSION:
        return cmd->compiles;
    case OPT_COMPRESS: case OPT_THREADS: case OPT_FORCE: case 'f':
        return cmd->writes;
    case OPT_JSON:
        return cmd->json;
    case OPT_VERBOSE: case 'v':
        return cmd->copies;
    default: /* --quiet, --help and what getopt itself refuses */
        return true;
    }
}

bool
tool_getparam (const tool_cmd_t *cmd, int argc, char **argv, tool_opts_t *o, char **pos,
               int *n_pos, bool *help)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"compress", required_argument, NULL, OPT_COMPRESS},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"force", no_argument, NULL, OPT_FORCE},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"json", no_argument, NULL, OPT_JSON},
        {"skip-invalid", optional_argument, NULL, OPT_SKIP},
        {"help", no_argument, NULL, OPT_HELP},
        {"from", required_argument, NULL, OPT_FROM},
        {"to", required_argument, NULL, OPT_TO},
        {"memory", required_argument, NULL, OPT_MEMORY},
        {"tmp", required_argument, NULL, OPT_TMP},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"stats-json", required_argument, NULL, OPT_STATS_JSON},
        {"batch", no_argument, NULL, OPT_BATCH},
        {"against", required_argument, NULL, OPT_AGAINST},
        {"ns", required_argument, NULL, OPT_NS},
        {"skip", required_argument, NULL, OPT_SKIP_N},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"id", required_argument, NULL, OPT_ID},
        {"canonical", no_argument, NULL, OPT_CANONICAL},
        {"pretty", no_argument, NULL, OPT_PRETTY},
        {"preview", required_argument, NULL, OPT_PREVIEW},
        {"nsInclude", required_argument, NULL, OPT_NS_INCLUDE},
        {"nsExclude", required_argument, NULL, OPT_NS_EXCLUDE},
        {"nsFrom", required_argument, NULL, OPT_NS_FROM},
        {"nsTo", required_argument, NULL, OPT_NS_TO},
        {"gzip", no_argument, NULL, OPT_GZIP},
        {"verbose", no_argument, NULL, OPT_VERBOSE},
        {"allow-missing", no_argument, NULL, OPT_ALLOW_MISSING},
        {"server-version", required_argument, NULL, OPT_SERVER_VERSION},
        {NULL, 0, NULL, 0},
    };
    bson_error_t err;
    int c, li, threads = 0;
    const char *ns_from[64], *ns_to[64];
    size_t n_from = 0, n_to = 0;

    memset (o, 0, sizeof *o);
    o->show_limit = UINT64_MAX;
    *help = false;
    *n_pos = 0;
    optind = 1;
    opterr = 0;
    while ((li = -1, c = getopt_long (argc, argv, ":qfhv", longopts, &li)) != -1) {
        if (!allowed (cmd, c)) {
            /* Named as given: argv[optind - 1] is the value of "--threads 3". */
            if (li >= 0)
                tool_errorf ("option \"--%s\" is not one of this command's (see --help)",
                             longopts[li].name);
            else
                tool_errorf ("option \"-%c\" is not one of this command's (see --help)", c);
            return false;
        }
        switch (c) {
        case OPT_FROM: o->from = optarg; break;
        case OPT_TO: o->to = optarg; break;
        case OPT_TMP: o->tmpdir = optarg; break;
        case OPT_DRY_RUN: o->dry_run = true; break;
        case OPT_BATCH: o->batch = true; break;
        case OPT_STATS_JSON: o->stats_json = optarg; break;
        case OPT_AGAINST: o->against = optarg; break;
        case OPT_ALLOW_MISSING: o->allow_missing = true; break;
        case OPT_ID: o->show_id = optarg; break;
        case OPT_CANONICAL: o->show_canonical = true; break;
        case OPT_PRETTY: o->show_pretty = true; break;
        case OPT_NS:
            if (o->n_show_ns == sizeof o->show_ns / sizeof *o->show_ns) {
                tool_errorf ("--ns: at most %zu of them", sizeof o->show_ns / sizeof *o->show_ns);
                return false;
            }
            o->show_ns[o->n_show_ns++] = optarg;
            break;
        case OPT_NS_INCLUDE:
        case OPT_NS_EXCLUDE:
            if (!(c == OPT_NS_INCLUDE ? rm_nsselect_include : rm_nsselect_exclude) (get_selection (),
                                                                                 optarg, &err)) {
                tool_error (&err);
                return false;
            }
            o->read.select = get_selection ();
            break;
        case OPT_NS_FROM:
        case OPT_NS_TO:
            if ((c == OPT_NS_FROM ? n_from : n_to) == 64) {
                tool_errorf ("--nsFrom/--nsTo: at most 64 of them");
                return false;
            }
            if (c == OPT_NS_FROM)
                ns_from[n_from++] = optarg;
            else
                ns_to[n_to++] = optarg;
            break;
        case OPT_GZIP: /* mongodump's and mongorestore's name for it */
            if (!rm_compress_parse ("gzip", &o->write.compress, &err)) {
                tool_error (&err);
                return false;
            }
            o->write.compress_set = true;
            break;
        case 'v':
        case OPT_VERBOSE:
            o->verbose = true;
            break;
        case OPT_PREVIEW:
            if (!parse_count (optarg, &o->preview) || o->preview == 0) {
                tool_errorf ("--preview: expected a number of documents (1 or more), got \"%s\"",
                             optarg);
                return false;
            }
            break;
        case OPT_SKIP_N:
        case OPT_LIMIT:
            if (!parse_count (optarg, c == OPT_SKIP_N ? &o->show_skip : &o->show_limit)) {
                tool_errorf ("%s: expected a number of documents, got \"%s\"",
                             c == OPT_SKIP_N ? "--skip" : "--limit", optarg);
                return false;
            }
            break;
        case OPT_MEMORY:
            if (!tool_parse_size (optarg, &o->memory) || o->memory < 1024) {
                tool_errorf ("--memory: expected a positive size of at least 1K, like 64M or 2G, got \"%s\"",
                             optarg);
                return false;
            }
            break;
        case OPT_FORMAT:
            /* compile's formats are its output's, not a dump's */
            if (cmd->compiles) {
                if (strcmp (optarg, "pipeline") && strcmp (optarg, "mongosh")) {
                    tool_errorf ("--format: \"%s\" is not pipeline or mongosh", optarg);
                    return false;
                }
                o->compile_format = optarg;
                break;
            }
            if (!cmd->writes || !rm_format_parse (optarg, &o->write.format)) {
                tool_errorf ("--format: unknown format \"%s\" (archive, dir, tar or bson)", optarg);
                return false;
            }
            break;
        case OPT_SERVER_VERSION:
            if (!rm_compile_version_parse (optarg, &o->server_version)) {
                tool_errorf ("--server-version: \"%s\" is not a MongoDB version like 5.0 (3.6 "
                             "or later)", optarg);
                return false;
            }
            o->server_version_given = true;
            break;
        case OPT_COMPRESS:
            if (!cmd->writes) {
                tool_errorf ("--compress: this command writes nothing");
                return false;
            }
            if (!rm_compress_parse (optarg, &o->write.compress, &err)) {
                tool_error (&err);
                return false;
            }
            o->write.compress_set = true;
            break;
        case OPT_THREADS:
            if (!parse_int (optarg, 1, 256, &threads)) {
                tool_errorf ("--threads: expected a number from 1 to 256, got \"%s\"", optarg);
                return false;
            }
            break;
        case 'f':
        case OPT_FORCE:
            o->force = o->write.force = true;
            break;
        case 'q':
        case OPT_QUIET:
            o->quiet = true;
            break;
        case OPT_JSON:
            if (!cmd->json) {
                tool_errorf ("--json: not an option of this command");
                return false;
            }
            o->json = true;
            break;
        case OPT_SKIP:
            o->read.skip_invalid = true;
            o->read.quarantine = optarg;
            break;
        case 'h':
        case OPT_HELP:
            *help = true;
            fputs (cmd->usage, stdout);
            return false;
        case ':':
            /* optopt is a short option's letter, or a long option's code. */
            if (optopt > 0 && optopt < 256)
                tool_errorf ("option \"-%c\" needs a value (see --help)", optopt);
            else
                tool_errorf ("option \"%s\" needs a value (see --help)", argv[optind - 1]);
            return false;
        default:
            if (optopt > 0 && optopt < 256)
                tool_errorf ("unknown option \"-%c\" (see --help)", optopt);
            else
                tool_errorf ("unknown option \"%s\" (see --help)", argv[optind - 1]);
            return false;
        }
    }
    if (n_from != n_to) {
        tool_errorf ("--nsFrom and --nsTo come in pairs: %zu --nsFrom, %zu --nsTo", n_from, n_to);
        return false;
    }
    for (size_t i = 0; i < n_from; i++)
        if (!rm_nsselect_rename (get_selection (), ns_from[i], ns_to[i], &err)) {
            tool_error (&err);
            return false;
        }
    if (n_from)
        o->read.select = get_selection ();
    o->write.compress.threads = threads;
    for (int i = optind; i < argc; i++) {
        if (*n_pos >= cmd->max_pos) {
            tool_errorf ("too many arguments (see --help)");
            return false;
        }
        pos[(*n_pos)++] = argv[i];
    }
    if (*n_pos < cmd->min_pos) {
        tool_errorf ("missing arguments (see --help)");
        fputs (cmd->usage, stderr);
        return false;
    }
    return true;
}
