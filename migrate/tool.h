/* The remodel command: shared declarations of its small parts. */
#ifndef REMODEL_TOOL_H
#define REMODEL_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "remodel/analyze.h"
#include "remodel/cli.h"
#include "remodel/compile.h"
#include "remodel/dump.h"
#include "remodel/engine.h"

/* Options every command that reads or writes a dump understands. */
typedef struct {
    bool quiet;
    bool verbose;        /* -v: what each namespace held */
    bool force;
    bool json;
    rm_read_opts_t read;
    rm_write_opts_t write;
    /* remodel run and check */
    const char *from, *to, *tmpdir, *stats_json, *against;
    size_t memory;
    const char *memory_text;  /* --memory as given */
    bool dry_run;
    bool batch;          /* every step store to store (--batch) */
    bool allow_missing;  /* --allow-missing: every step as with "allowMissing" */
    bool keep_indexes;   /* run --keep-indexes: the metadata's indexes as they were */
    bool compare_uuids;  /* diff --compare-uuids */
    uint64_t preview;    /* --preview N: documents shown before and after */
    /* remodel show, analyze: --ns patterns (nsselect.h), as given */
    const char **ns;
    size_t n_ns;
    /* remodel show */
    uint64_t show_skip, show_limit;   /* limit UINT64_MAX unless given */
    const char *show_id;
    bool show_canonical, show_pretty;
    /* remodel analyze */
    const char *plan_out, *hints;
    /* remodel analyze and check: --report FILE, --format dot|mermaid (NULL: not given) */
    const char *report, *diagram;
    /* remodel compile */
    const char *validation_action;        /* compile --action: warn (default) or error */
    bool views;                           /* compile --views: the script creates them too */
    const char *compile_format;           /* --format pipeline|mongosh (NULL: pipeline) */
    rm_compile_version_t server_version;  /* --server-version... */
    bool server_version_given;            /* ...when given */
    const char *server_version_text;      /* as given, or run's default */
} tool_opts_t;

/* Commands: each returns the process exit status. */
int cmd_inspect (int argc, char **argv);
int cmd_convert (int argc, char **argv);
int cmd_cat (int argc, char **argv);
int cmd_run (int argc, char **argv);
int cmd_check (int argc, char **argv);
int cmd_show (int argc, char **argv);
int cmd_diff (int argc, char **argv);
int cmd_analyze (int argc, char **argv);
int cmd_compile (int argc, char **argv);

/* Messages (tool_msgs.c): printed once, at the top, escaped
 * (rm_cli_put_text); the exit status is rm_cli_exit_status's. */
void tool_error (const bson_error_t *err);
void tool_errorf (const char *fmt, ...) BSON_GNUC_PRINTF (1, 2);
void tool_note (bool quiet, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
/* "remodel: warning: ...", printed even with --quiet. */
void tool_warn (const char *fmt, ...) BSON_GNUC_PRINTF (1, 2);
/* rm_cli_put_text, then spaces up to width columns: a table cell that stays
 * aligned with non-ASCII names (db1.cafés). */
void tool_put_cell (FILE *f, const char *text, int width);
/* Flushes standard output and reports a failed write (a full disk, a closed
 * descriptor) once; a closed pipe ends quietly with RM_EXIT_PIPE, as if
 * SIGPIPE had ended it, like cat. Returns
 * the command's final status given the one it had. */
int tool_stdout_close (int status);
/* Standard output is a pipe whose reader has gone. */
bool tool_stdout_gone (void);

/* Options (tool_getparam.c): the command's options, through the option
 * layer (remodel/cli.h: which commands take each is its table's), into o;
 * the positional arguments into pos[]. Returns false after printing an
 * error, or with *help set when --help was asked. */
typedef struct {
    const char *usage;   /* the command's usage text */
    rm_cmd_t cmd;
    int min_pos, max_pos;
} tool_cmd_t;
bool tool_getparam (const tool_cmd_t *cmd, int argc, char **argv, tool_opts_t *o,
                    char **pos, int *n_pos, bool *help);

/* Progress meter (tool_progress.c): on a terminal unless --quiet. */
typedef struct tool_progress tool_progress_t;
tool_progress_t *tool_progress_new (bool quiet, const char *label);
/* Redraws, at most 4 times a second. */
void tool_progress_draw (tool_progress_t *p, rm_reader_t *r, uint64_t docs);
/* Called per document: only every 4096th goes on to look at the clock. */
static inline void
tool_progress_tick (tool_progress_t *p, rm_reader_t *r, uint64_t docs)
{
    if ((docs & 4095) == 0)
        tool_progress_draw (p, r, docs);
}
void tool_progress_done (tool_progress_t *p);

/* Paths a command reads and writes (tool_paths.c). */
#define TOOL_PATHS_MAX 8
typedef struct {
    const char *path;   /* NULL or "-": not a file, skipped */
    const char *role;   /* for the message: "the source", "--stats-json", ... */
    bool output;        /* written (or replaced) by the command */
    bool dir;           /* an output written as a directory */
} tool_path_t;
/* Refuses (RM_ERR_USAGE) an output that is the same file as another path,
 * lies inside a directory read or written, or is a directory holding an
 * input. Call before anything is opened. */
bool tool_paths_check (const tool_path_t *paths, size_t n, bson_error_t *err);

/* run --preview (tool_preview.c): prints up to n documents of each
 * namespace touched or created (per the run's stats) from src, then the
 * same _ids (or a new namespace's first n) from result. */
bool tool_preview (const char *src, const char *result, const rm_ns_stats_t *st, size_t n_st,
                   uint64_t n, bson_error_t *err);

/* For the commands that only read (inspect, show): checks the source and
 * --skip-invalid's file against each other and opens the source; NULL after
 * printing the error, with the exit status in *status. */
rm_reader_t *tool_open_source (const char *src, tool_opts_t *o, int *status);

/* Creates the missing parent directories of an output, as mongodump does
 * for --out; tool_remove_made_parents undoes it after a failure (removing
 * only those still empty), tool_keep_made_parents after success. */
bool tool_make_parents (const char *path, bson_error_t *err);
void tool_remove_made_parents (void);
void tool_keep_made_parents (void);

/* Removes what killed remodel runs left beside dst and in the temporary
 * directory (tmpdir, else $TMPDIR or /tmp), with a note unless quiet. */
void tool_sweep (const char *dst, const char *tmpdir, bool quiet);

/* The pictures of analyze and check (cmd_report.c, remodel/report.h).
 * tool_pictures_check refuses, with its message printed, what cannot be
 * done before anything is read: --json with --format, --report in a build
 * without Graphviz, a picture that reads src again (rereads) when src is
 * standard input. */
bool tool_pictures_check (const tool_opts_t *o, const char *src, bool rereads);
/* The relationship diagram of an analysis report on standard output,
 * format "dot" or "mermaid". */
void tool_diagram_print (const bson_t *report, const char *format);
/* analyze --report: the page of a, whose report is report, with the
 * recommended plan run over src for its after. */
bool tool_analyze_report (const rm_analysis_t *a, const bson_t *report, const char *src,
                          const tool_opts_t *o, const rm_analyze_opts_t *ao, bson_error_t *err);
/* check --against with --format or --report: plan (loaded from plan_path)
 * run over o->against, the after's diagram printed or the page written. */
bool tool_check_pictures (const rm_plan_t *plan, const char *plan_path, const tool_opts_t *o,
                          bson_error_t *err);

/* Duplicate _ids (tool_idcheck.c): a sort with a quarter of --memory; after
 * rm_idcheck_finish, an error (RM_ERR_DATA) naming the first namespace of
 * info that holds one _id twice, its count and the first such _id. */
typedef struct rm_idcheck rm_idcheck_t;
size_t tool_idcheck_budget (const tool_opts_t *o);
rm_idcheck_t *tool_idcheck_new (const tool_opts_t *o);
bool tool_idcheck_error (const rm_idcheck_t *c, const rm_dump_info_t *info, bson_error_t *err);

/* remodel diff (tool_metadiff.c): what differs between two namespaces'
 * metadata texts, named, as one line to bson_free; NULL when nothing does
 * (a collection UUID only when uuids). */
char *tool_metadata_difference (const char *a, size_t alen, const char *b, size_t blen,
                                bool uuids);

/* The copy loop shared by convert and cat (tool_copy.c). */
int tool_copy (const char *src, const char *dst, tool_opts_t *o, const char *label);

#endif
