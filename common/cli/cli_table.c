/* Every option of every remodel command, one row each (two rows share a
 * meaning only where the values differ by command: --format). A new
 * option is a row here, its field read by the command, a line of its
 * --help and of docs/options.md (docs/HACKING.md, "Adding an option"). */
#include <string.h>

#include "remodel/cli.h"

#define C(x) (1u << RM_CMD_##x)
/* The online commands, and those of them that read the sources in
 * batches (finalize's last sync too). */
#define ONLINE (C (ONLINE_RUN) | C (ONLINE_STATUS) | C (ONLINE_VERIFY) | C (ONLINE_SYNC) | \
                C (ONLINE_FINALIZE) | C (ONLINE_ROLLBACK) | C (ONLINE_PAUSE) | C (ONLINE_RESUME) | \
                C (ONLINE_FOLLOW) | C (ONLINE_THROTTLE) | C (ONLINE_UNTHROTTLE) | C (ONLINE_SET))
#define BATCHES (C (ONLINE_RUN) | C (ONLINE_VERIFY) | C (ONLINE_SYNC) | C (ONLINE_FINALIZE) | \
                 C (ONLINE_FOLLOW))
#define ALL ((1u << RM_CMD_N) - 1)
/* Offline: what reads a dump (and so selects and renames namespaces),
 * what writes one. */
#define READS (C (INSPECT) | C (CONVERT) | C (CAT) | C (RUN) | C (SHOW))
#define WRITES (C (CONVERT) | C (CAT) | C (RUN))

/* A row's fields that every row has; the rest are named where used. */
#define R(ID, NAME, KIND, CMDS) .id = ID, .name = NAME, .kind = KIND, .cmds = CMDS

static const char *const dump_formats[] = {"archive", "dir|directory", "tar", "bson", NULL};
/* Also the merge point of remodel compile's move into remodel: its rows
 * hold all it takes. */
static const char *const compile_formats[] = {"pipeline", "mongosh", "views", "validators", NULL};
/* compile --format validators: what the server does with a document that fails. */
static const char *const validation_actions[] = {"warn", "error", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
/* online --capabilities: how the server's capabilities record is filled. */
static const char *const capability_sources[] = {"probe", NULL};
/* analyze and check: the relationship diagram as text (remodel/report.h). */
static const char *const diagram_formats[] = {"dot", "mermaid", NULL};

const rm_opt_t rm_cli_options[] = {
    {R (RM_OPT_HELP, "help", RM_VAL_NONE, ALL), .letter = 'h'},
    {R (RM_OPT_QUIET, "quiet", RM_VAL_NONE, ALL), .letter = 'q'},

    {R (RM_OPT_FORMAT, "format", RM_VAL_ENUM, WRITES), .words = dump_formats},
    {R (RM_OPT_COMPRESS, "compress", RM_VAL_STRING, WRITES)},
    {R (RM_OPT_GZIP, "gzip", RM_VAL_NONE, WRITES)},
    {R (RM_OPT_THREADS, "threads", RM_VAL_COUNT, WRITES), .min = 1, .max = 256},
    /* online rollback --force: restore originals changed since. */
    {R (RM_OPT_FORCE, "force", RM_VAL_NONE, WRITES | C (ONLINE_ROLLBACK)), .letter = 'f'},
    {R (RM_OPT_VERBOSE, "verbose", RM_VAL_NONE, C (CONVERT) | C (CAT)), .letter = 'v'},
    {R (RM_OPT_SKIP_INVALID, "skip-invalid", RM_VAL_OPTIONAL, READS)},
    {R (RM_OPT_NS_INCLUDE, "nsInclude", RM_VAL_STRING, READS | C (ONLINE_RUN)), .repeat = true},
    {R (RM_OPT_NS_EXCLUDE, "nsExclude", RM_VAL_STRING, READS | C (ONLINE_RUN)), .repeat = true},
    {R (RM_OPT_NS_FROM, "nsFrom", RM_VAL_STRING, READS), .repeat = true},
    {R (RM_OPT_NS_TO, "nsTo", RM_VAL_STRING, READS), .repeat = true},
    /* A pattern wherever it is taken (as --nsInclude's). */
    {R (RM_OPT_NS, "ns", RM_VAL_STRING, C (SHOW) | C (ANALYZE)), .repeat = true},
    {R (RM_OPT_JSON, "json", RM_VAL_NONE, C (INSPECT) | C (DIFF) | C (ANALYZE) | C (ONLINE_STATUS))},

    {R (RM_OPT_FROM, "from", RM_VAL_STRING, C (RUN))},
    {R (RM_OPT_TO, "to", RM_VAL_STRING, C (RUN))},
    /* Online: the step's sets of result _ids (online_idset.c). */
    {R (RM_OPT_MEMORY, "memory", RM_VAL_SIZE,
        C (INSPECT) | C (RUN) | C (CHECK) | C (DIFF) | C (ANALYZE) | BATCHES), .min = 1024},
    {R (RM_OPT_TMP, "tmp", RM_VAL_STRING,
        C (INSPECT) | C (RUN) | C (CHECK) | C (DIFF) | C (ANALYZE) | BATCHES)},
    /* Taken by every online command, to refuse it with its own reason
     * where there is no dry run (online_main.c). */
    {R (RM_OPT_DRY_RUN, "dry-run", RM_VAL_NONE, C (RUN) | ONLINE)},
    {R (RM_OPT_STATS_JSON, "stats-json", RM_VAL_STRING, C (RUN))},
    {R (RM_OPT_BATCH, "batch", RM_VAL_NONE, C (RUN))},
    {R (RM_OPT_PREVIEW, "preview", RM_VAL_COUNT, C (RUN)), .min = 1,
     .what = "a number of documents"},
    {R (RM_OPT_AGAINST, "against", RM_VAL_STRING, C (CHECK) | C (COMPILE))},
    {R (RM_OPT_ALLOW_MISSING, "allow-missing", RM_VAL_NONE, C (RUN) | C (CHECK) | C (ONLINE_RUN))},
    /* run: the output's metadata as the input's (no index follows the plan). */
    {R (RM_OPT_KEEP_INDEXES, "keep-indexes", RM_VAL_NONE, C (RUN) | C (ONLINE_RUN))},
    /* online run: the old values a set overwrites, the documents a delete
     * drops, kept for rollback --carry-writes. */
    {R (RM_OPT_KEEP_BEFORE, "keep-before", RM_VAL_NONE, C (ONLINE_RUN))},
    /* diff: a collection UUID is each server's own, no difference unless asked. */
    {R (RM_OPT_COMPARE_UUIDS, "compare-uuids", RM_VAL_NONE, C (DIFF))},

    {R (RM_OPT_SKIP, "skip", RM_VAL_COUNT, C (SHOW)), .what = "a number of documents"},
    {R (RM_OPT_LIMIT, "limit", RM_VAL_COUNT, C (SHOW)), .what = "a number of documents"},
    {R (RM_OPT_ID, "id", RM_VAL_STRING, C (SHOW))},
    /* show: documents; compile: --format pipeline's values. */
    {R (RM_OPT_CANONICAL, "canonical", RM_VAL_NONE, C (SHOW) | C (COMPILE))},
    {R (RM_OPT_PRETTY, "pretty", RM_VAL_NONE, C (SHOW))},

    {R (RM_OPT_PLAN_OUT, "plan-out", RM_VAL_STRING, C (ANALYZE))},
    {R (RM_OPT_HINTS, "hints", RM_VAL_STRING, C (ANALYZE))},
    {R (RM_OPT_REPORT, "report", RM_VAL_STRING, C (ANALYZE) | C (CHECK))},
    {R (RM_OPT_FORMAT, "format", RM_VAL_ENUM, C (ANALYZE) | C (CHECK)), .words = diagram_formats},

    {R (RM_OPT_FORMAT, "format", RM_VAL_ENUM, C (COMPILE)), .words = compile_formats},
    /* A MongoDB version (5.0), checked by the compiler's own reader: the
     * stages compile may use, and the $lookup rules the engine follows
     * wherever it joins (9.0: SERVER-36681's). */
    {R (RM_OPT_ACTION, "action", RM_VAL_ENUM, C (COMPILE)), .words = validation_actions},
    /* --format mongosh: the script also creates the views of the old shape */
    {R (RM_OPT_VIEWS, "views", RM_VAL_NONE, C (COMPILE))},
    {R (RM_OPT_SERVER_VERSION, "server-version", RM_VAL_STRING, C (COMPILE) | C (RUN) | C (CHECK) | BATCHES)},
    {R (RM_OPT_SERVER_SIDE, "server-side", RM_VAL_NONE, C (ONLINE_RUN))},

    {R (RM_OPT_URI, "uri", RM_VAL_STRING, ONLINE)},
    {R (RM_OPT_STATE_DB, "state-db", RM_VAL_STRING, ONLINE)},
    /* From one deployment to another (shell-ext/conn/online_pair.c): the
     * destination, and run's leave to drop what it holds of the results. */
    {R (RM_OPT_TO_URI, "to-uri", RM_VAL_STRING, ONLINE)},
    {R (RM_OPT_DROP, "drop", RM_VAL_NONE, C (ONLINE_RUN))},
    /* --uri and --to-uri from a file, off the command line (as
     * mongo-tools' --config): shell-ext/cmd/online_config.c. */
    {R (RM_OPT_CONFIG, "config", RM_VAL_STRING, ONLINE)},
    /* The capabilities found by probing the server, as for one the table
     * does not know (shell-ext/conn/online_caps.c; REMODEL_ONLINE_CAPS). */
    {R (RM_OPT_CAPABILITIES, "capabilities", RM_VAL_ENUM, ONLINE), .words = capability_sources},
    /* online set: the values a running run takes at its next batch. */
    {R (RM_OPT_BATCH_SIZE, "batch-size", RM_VAL_COUNT, BATCHES | C (ONLINE_SET)), .min = 1,
     .max = INT64_MAX, .what = "a number of documents"},
    {R (RM_OPT_BATCH_TIME, "batch-time", RM_VAL_DURATION, BATCHES), .min = 1,
     .max = INT64_MAX, .unit_ms = 1},
    /* --pause-ms was its name, in milliseconds: still a bare number's unit. */
    {R (RM_OPT_PAUSE, "pause", RM_VAL_DURATION, BATCHES), .alias = "pause-ms", .max = INT64_MAX,
     .unit_ms = 1},
    {R (RM_OPT_MAX_RATE, "max-rate", RM_VAL_COUNT, BATCHES | C (ONLINE_SET)), .max = INT64_MAX,
     .what = "a number of documents per second"},
    /* The throttle on the server's health (online_throttle.c); a bare
     * number is seconds, as gh-ost's and pt-osc's lag limits read. */
    {R (RM_OPT_MAX_LAG, "max-lag", RM_VAL_DURATION, BATCHES | C (ONLINE_SET) | C (ONLINE_STATUS)), .max = INT64_MAX,
     .unit_ms = 1000},
    {R (RM_OPT_MAX_LATENCY, "max-latency", RM_VAL_DURATION, BATCHES), .min = 1, .max = INT64_MAX,
     .unit_ms = 1},
    {R (RM_OPT_RESTART, "restart", RM_VAL_NONE,
        C (ONLINE_RUN) | C (ONLINE_VERIFY) | C (ONLINE_SYNC))},
    {R (RM_OPT_IN_PLACE, "in-place", RM_VAL_NONE, ONLINE)},
    {R (RM_OPT_CREATE_INDEXES, "create-indexes", RM_VAL_NONE, BATCHES)},
    {R (RM_OPT_WRITE_CONCERN, "write-concern", RM_VAL_STRING,
        C (ONLINE_RUN) | C (ONLINE_SYNC) | C (ONLINE_FINALIZE) | C (ONLINE_ROLLBACK) |
        C (ONLINE_FOLLOW))},
    {R (RM_OPT_LOG_FORMAT, "log-format", RM_VAL_ENUM, BATCHES), .words = log_formats},
    /* Seconds when bare, as it always was. */
    {R (RM_OPT_RETRY_FOR, "retry-for", RM_VAL_DURATION, ONLINE), .max = INT64_MAX,
     .unit_ms = 1000},
    {R (RM_OPT_DISCARD_WRITES, "discard-writes-after-switch", RM_VAL_NONE, C (ONLINE_ROLLBACK))},
    {R (RM_OPT_CARRY_WRITES, "carry-writes", RM_VAL_NONE, C (ONLINE_ROLLBACK))},
    {R (RM_OPT_WRITES_STOPPED, "writes-stopped", RM_VAL_NONE, C (ONLINE_FINALIZE))},
    {R (RM_OPT_BLOCK_WRITES, "block-writes", RM_VAL_NONE, C (ONLINE_FINALIZE))},
    {R (RM_OPT_FULL_VERIFY, "full-verify", RM_VAL_NONE, C (ONLINE_FINALIZE))},
    /* finalize: compile --format validators' commands, after the switch. */
    {R (RM_OPT_VALIDATORS, "validators", RM_VAL_ENUM, C (ONLINE_FINALIZE)),
     .words = validation_actions},
    /* finalize: the longest the writes may stay stopped (0: no bound);
     * a bare number is seconds, as gh-ost's cut-over lock timeout. */
    {R (RM_OPT_MAX_WINDOW, "max-window", RM_VAL_DURATION, C (ONLINE_FINALIZE)), .max = INT64_MAX,
     .unit_ms = 1000},
    {R (RM_OPT_SAMPLE, "sample", RM_VAL_COUNT,
        C (ONLINE_VERIFY) | C (ONLINE_FOLLOW) | C (ONLINE_FINALIZE)), .min = 1,
     .max = INT64_MAX, .what = "a number of documents"},
    {R (RM_OPT_FORGET, "forget", RM_VAL_NONE, C (ONLINE_ROLLBACK))},
    {R (RM_OPT_DIFFERENCES, "differences", RM_VAL_STRING, C (ONLINE_VERIFY))},
    /* online run: a driving collection's _id partitions (issue 37). */
    {R (RM_OPT_PARTITIONS, "partitions", RM_VAL_COUNT, C (ONLINE_RUN)), .min = 1, .max = 10000,
     .what = "a number of partitions"},
    /* run, and verify and sync's rescans by the run's partitions. */
    {R (RM_OPT_WORKERS, "workers", RM_VAL_COUNT,
        C (ONLINE_RUN) | C (ONLINE_VERIFY) | C (ONLINE_SYNC)), .min = 1, .max = 64,
     .what = "a number of workers"},
    {R (RM_OPT_JOIN, "join", RM_VAL_NONE, C (ONLINE_RUN))},
};

const size_t rm_cli_n_options = sizeof rm_cli_options / sizeof rm_cli_options[0];

static const char *const command_names[RM_CMD_N] = {
    [RM_CMD_INSPECT] = "inspect", [RM_CMD_CONVERT] = "convert", [RM_CMD_CAT] = "cat",
    [RM_CMD_RUN] = "run", [RM_CMD_CHECK] = "check", [RM_CMD_SHOW] = "show", [RM_CMD_DIFF] = "diff",
    [RM_CMD_ANALYZE] = "analyze", [RM_CMD_COMPILE] = "compile",
    [RM_CMD_ONLINE_RUN] = "online run", [RM_CMD_ONLINE_STATUS] = "online status",
    [RM_CMD_ONLINE_VERIFY] = "online verify", [RM_CMD_ONLINE_SYNC] = "online sync",
    [RM_CMD_ONLINE_FINALIZE] = "online finalize", [RM_CMD_ONLINE_ROLLBACK] = "online rollback",
    [RM_CMD_ONLINE_PAUSE] = "online pause", [RM_CMD_ONLINE_RESUME] = "online resume",
    [RM_CMD_ONLINE_FOLLOW] = "online follow", [RM_CMD_ONLINE_THROTTLE] = "online throttle",
    [RM_CMD_ONLINE_UNTHROTTLE] = "online unthrottle", [RM_CMD_ONLINE_SET] = "online set",
};

const char *
rm_cli_command_name (rm_cmd_t cmd)
{
    return cmd < RM_CMD_N ? command_names[cmd] : "?";
}

bool
rm_cli_command_find (const char *name, rm_cmd_t *cmd)
{
    for (int i = 0; i < RM_CMD_N; i++)
        if (strcmp (name, command_names[i]) == 0) {
            *cmd = (rm_cmd_t) i;
            return true;
        }
    return false;
}
