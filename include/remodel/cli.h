/* The command line of every remodel program: one table of options (each
 * with its commands, its kind of value and its spellings), one parser
 * over it, the value parsers (sizes, counts, durations), one map from
 * errors to exit statuses, and the escaping of text from the data in
 * messages. `remodel`, `remodel analyze`, `remodel compile` and `remodel
 * online ...` all parse through it, so an option is spelled, refused and
 * reported the same way everywhere (docs/options.md is the table in
 * prose). Needs no driver: the offline program links it without
 * libmongoc. */
#ifndef REMODEL_CLI_H
#define REMODEL_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "remodel/error.h"

/* Every command of every program; an option row says which take it. */
typedef enum {
    RM_CMD_INSPECT, RM_CMD_CONVERT, RM_CMD_CAT, RM_CMD_RUN, RM_CMD_CHECK, RM_CMD_SHOW,
    RM_CMD_DIFF, RM_CMD_ANALYZE, RM_CMD_COMPILE,
    RM_CMD_ONLINE_RUN, RM_CMD_ONLINE_STATUS, RM_CMD_ONLINE_VERIFY, RM_CMD_ONLINE_SYNC,
    RM_CMD_ONLINE_FINALIZE, RM_CMD_ONLINE_ROLLBACK, RM_CMD_ONLINE_PAUSE, RM_CMD_ONLINE_RESUME,
    RM_CMD_ONLINE_FOLLOW, RM_CMD_ONLINE_THROTTLE, RM_CMD_ONLINE_UNTHROTTLE, RM_CMD_ONLINE_SET,
    RM_CMD_N
} rm_cmd_t;

/* "inspect", "online run": the words after "remodel". */
const char *rm_cli_command_name (rm_cmd_t cmd);
/* The command named so ("online run"); false when there is none. */
bool rm_cli_command_find (const char *name, rm_cmd_t *cmd);

/* An option's meaning. Two rows may share one (--format: a dump format
 * for convert, cat and run, pipeline or mongosh for compile) as long as
 * no command takes both. */
typedef enum {
    RM_OPT_HELP, RM_OPT_QUIET,
    /* the offline commands: reading and writing dumps */
    RM_OPT_FORMAT, RM_OPT_COMPRESS, RM_OPT_GZIP, RM_OPT_THREADS, RM_OPT_FORCE, RM_OPT_VERBOSE,
    RM_OPT_SKIP_INVALID, RM_OPT_NS_INCLUDE, RM_OPT_NS_EXCLUDE, RM_OPT_NS_FROM, RM_OPT_NS_TO,
    RM_OPT_NS, RM_OPT_JSON,
    /* run, check, diff, analyze */
    RM_OPT_FROM, RM_OPT_TO, RM_OPT_MEMORY, RM_OPT_TMP, RM_OPT_DRY_RUN, RM_OPT_STATS_JSON,
    RM_OPT_BATCH, RM_OPT_PREVIEW, RM_OPT_AGAINST, RM_OPT_ALLOW_MISSING, RM_OPT_KEEP_INDEXES,
    RM_OPT_KEEP_BEFORE, /* online run: what a set overwrites, a delete drops */
    /* diff */
    RM_OPT_COMPARE_UUIDS,
    /* show */
    RM_OPT_SKIP, RM_OPT_LIMIT, RM_OPT_ID, RM_OPT_CANONICAL, RM_OPT_PRETTY,
    /* analyze */
    RM_OPT_PLAN_OUT, RM_OPT_HINTS,
    /* analyze and check: the pictures */
    RM_OPT_REPORT,
    /* compile, and online run --server-side */
    RM_OPT_SERVER_VERSION, RM_OPT_SERVER_SIDE,
    RM_OPT_ACTION, /* compile --format validators */
    RM_OPT_VIEWS,  /* compile --format mongosh */
    /* online */
    RM_OPT_URI, RM_OPT_STATE_DB, RM_OPT_BATCH_SIZE, RM_OPT_BATCH_TIME, RM_OPT_PAUSE,
    RM_OPT_DISCARD_WRITES, RM_OPT_CARRY_WRITES, /* online rollback after finalize */
    RM_OPT_MAX_RATE, RM_OPT_RESTART, RM_OPT_IN_PLACE, RM_OPT_CREATE_INDEXES,
    RM_OPT_WRITE_CONCERN, RM_OPT_LOG_FORMAT, RM_OPT_RETRY_FOR, RM_OPT_WRITES_STOPPED,
    RM_OPT_BLOCK_WRITES, RM_OPT_FULL_VERIFY, RM_OPT_SAMPLE, RM_OPT_FORGET,
    RM_OPT_DIFFERENCES, RM_OPT_PARTITIONS, RM_OPT_WORKERS, RM_OPT_JOIN,
    RM_OPT_MAX_LAG, RM_OPT_MAX_LATENCY, RM_OPT_MAX_WINDOW,
    RM_OPT_VALIDATORS, /* online finalize: the compiled validators applied */
    RM_OPT_TO_URI, RM_OPT_DROP, /* online, from one deployment to another */
    RM_OPT_CONFIG,              /* online: the connection strings from a file */
    RM_OPT_CAPABILITIES,        /* online: the server's capabilities probed */
    RM_OPT_N
} rm_opt_id_t;

typedef enum {
    RM_VAL_NONE,      /* a flag: --force */
    RM_VAL_OPTIONAL,  /* a flag, or with =TEXT: --skip-invalid[=FILE] */
    RM_VAL_STRING,    /* any text, checked by the command */
    RM_VAL_COUNT,     /* a whole number, within the row's bounds */
    RM_VAL_SIZE,      /* bytes: 100K, 512M, 1G, 2T or plain bytes */
    RM_VAL_DURATION,  /* 50ms, 2s, 10m, 1h; a bare number in the row's unit */
    RM_VAL_ENUM,      /* one of the row's words */
} rm_val_kind_t;

typedef struct {
    rm_opt_id_t id;
    const char *name;          /* the spelling, without "--" */
    const char *alias;         /* an older spelling still taken, or NULL */
    char letter;               /* -q for --quiet, or 0 */
    rm_val_kind_t kind;
    uint32_t cmds;             /* 1 << rm_cmd_t of each command taking it */
    bool repeat;               /* every value kept (patterns), else the last */
    uint64_t min, max;         /* COUNT, SIZE, DURATION (ms): bounds (max 0: none) */
    uint64_t unit_ms;          /* DURATION: what a bare number counts */
    const char *what;          /* COUNT: what is counted ("a number of documents") */
    const char *const *words;  /* ENUM: the values, NULL-ended; "dir|directory":
                                  one value, two spellings, the first shown */
} rm_opt_t;

extern const rm_opt_t rm_cli_options[];
extern const size_t rm_cli_n_options;

/* What the command line gave for one option. */
typedef struct {
    bool given;
    const char *text;     /* the last value as given (NULL: a flag) */
    uint64_t n;           /* COUNT, SIZE: the number; DURATION: ms; ENUM: index */
    const char **all;     /* repeat: every value, in order */
    size_t n_all;
} rm_cli_value_t;

typedef struct {
    rm_cmd_t cmd;
    rm_cli_value_t v[RM_OPT_N];
    char **pos;           /* the other arguments, in order */
    size_t n_pos;
} rm_cli_args_t;

/* Parses argv[first..argc) for cmd into a (its strings point into argv).
 * Options and arguments mix in any order; "--" ends the options. A long
 * option is named exactly (never by a prefix) as --name VALUE or
 * --name=VALUE; single letters group (-qf). Refused with RM_ERR_USAGE:
 * an unknown option (naming the nearest the command takes), one the
 * command does not take (naming the command), a missing or bad value.
 * rm_cli_args_destroy frees a in either case. */
bool rm_cli_parse (rm_cmd_t cmd, int argc, char **argv, int first, rm_cli_args_t *a,
                   bson_error_t *err);
void rm_cli_args_destroy (rm_cli_args_t *a);

/* The value parsers, each the whole text or false (no sign, no blanks,
 * nothing past 2^64 - 1). */
bool rm_cli_parse_count (const char *text, uint64_t *out);
/* "512M", "64m", "1G", "100K", "2T" (powers of 1024, an optional B) or bytes. */
bool rm_cli_parse_size (const char *text, uint64_t *out);
/* "50ms", "2s", "10m", "1h", or a bare number of unit_ms each; in ms. */
bool rm_cli_parse_duration (const char *text, uint64_t unit_ms, uint64_t *ms);

/* The Levenshtein distance between a and b (for "did you mean"). */
size_t rm_cli_distance (const char *a, const char *b);

/* The exit status for an error: 2 a refusal (RM_ERR_USAGE, RM_ERR_UNSUPPORTED),
 * 130 after SIGINT or SIGTERM, 1 anything else; and 141 (128 + SIGPIPE)
 * when standard output's reader went away. */
#define RM_EXIT_PIPE 141
int rm_cli_exit_status (const bson_error_t *err);

/* Writes n bytes of text to f with control bytes, C1 controls and bytes
 * that are not UTF-8 shown as \xNN: anything from the data (a crafted dump
 * or server holds any byte) stays one line and cannot drive the terminal.
 * Returns the columns it took (a UTF-8 character counts one). */
size_t rm_cli_put_text (FILE *f, const char *text, size_t n);
/* "remodel: " PREFIX and the formatted text, escaped, then a newline, on
 * standard error: every message of every program. */
void rm_cli_vmessage (const char *prefix, const char *fmt, va_list ap);
/* lead, the formatted text escaped, end, on f: a line that is not one
 * message, as a progress meter redrawn after "\r" (lead) and left open
 * (end ""), its own control bytes kept apart from what it shows. */
void rm_cli_line (FILE *f, const char *lead, const char *end, const char *fmt, ...)
    BSON_GNUC_PRINTF (4, 5);
void rm_cli_vline (FILE *f, const char *lead, const char *end, const char *fmt, va_list ap);
/* "remodel: error: MESSAGE", escaped: an error printed once, at the top. */
void rm_cli_error (const bson_error_t *err);

#endif
