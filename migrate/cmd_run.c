/* remodel run PLAN --from SRC --to DST, and remodel check PLAN. */
#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remodel/engine.h"
#include "remodel/idcheck.h"
#include "remodel/tmppath.h"
#include "tool.h"

/* The usages' "%s": the plan parser's operations, from its table. */
static const char run_usage_fmt[] =
    "usage: remodel run PLAN --from SRC --to DST [options]\n"
    "\n"
    "Runs the plan's steps over the dump SRC and writes the result to DST (any\n"
    "format convert writes). Namespaces no step touches are copied byte for byte.\n"
    "\n"
    "  --from SRC            the input dump (any format remodel reads, - for stdin)\n"
    "  --to DST              the output (format from its name, or --format)\n"
    "  --format, --compress, --force, --skip-invalid   as in convert\n"
    "  --threads N           compression threads, and those the field steps\n"
    "                        compute on (default: one per core)\n"
    "  --memory SIZE         budget for joins held in memory (default 512M); past\n"
    "                        it, joins go through external sorts on disk; also\n"
    "                        the bound of one document's expression values\n"
    "  --tmp DIR             where temporary stores and sort runs go (default\n"
    "                        $TMPDIR or /tmp); removed on success, error or signal\n"
    "  --dry-run             check and run everything, count, write nothing\n"
    "  --batch               run every step store to store, as plans with joins\n"
    "                        do, even when the plan could go in one pass (slower;\n"
    "                        the same output, for comparison)\n"
    "  --stats-json FILE     write the per-namespace summary as JSON to FILE\n"
    "  --server-version V    join as MongoDB V's $lookup does (default 8.0: the\n"
    "                        rules of 5.0 to 8.x; 9.0 or later: SERVER-36681's,\n"
    "                        where a null also matches a path through an array\n"
    "                        of scalars or an empty one)\n"
    "  --allow-missing       let every step name a field no document has, or join\n"
    "                        nothing (by default an error: a misspelling)\n"
    "  --keep-indexes        write the input's index specifications as they were\n"
    "                        (by default they follow the plan: a renamed field's\n"
    "                        index renamed, an unset one's dropped, an embedded\n"
    "                        child's moved to the parent; each change is listed\n"
    "                        after the summary)\n"
    "  --preview N           write nothing; print N documents of each namespace\n"
    "                        the plan touches, before and after it\n"
    "  --quiet, -q           no progress or summary\n"
    "\n"
    "PLAN is JSON: {\"remodel\": 1, \"steps\": [{\"<operation>\": {...}}, ...]}, each\n"
    "step one of the operations\n"
    "%s\n"
    "whose keys remodel-plan(5) (docs/plans.md) documents.\n"
    "remodel check PLAN --against SRC validates one without running it.\n"
    "\n"
    "example: remodel run dumps/plans/embed-tasks.json --from dumps/sample --to /tmp/out.archive.zst\n";

static const char check_usage_fmt[] =
    "usage: remodel check PLAN [--against SRC [--report FILE] [--format dot|mermaid]] [options]\n"
    "\n"
    "Checks a plan without writing anything: its keys, types and values; with\n"
    "--against, that every namespace it reads exists in SRC (or is made by an\n"
    "earlier step) and that no step creates one that already exists, then it\n"
    "runs the plan over SRC writing nothing, as run --dry-run does, to find\n"
    "what only the data shows: a field no document has (a misspelling: the\n"
    "closest names that occur are suggested), a join in which nothing\n"
    "matches, lookups that mostly miss, readings that mostly go to onInvalid.\n"
    "The operations (remodel-plan(5), docs/plans.md):\n"
    "%s\n"
    "\n"
    "  --against SRC     also check the plan against a dump, reading it whole\n"
    "  --allow-missing   fields no document has and joins matching nothing are\n"
    "                    fine (as \"allowMissing\": true on every step)\n"
    "  --report FILE     with --against: a page (HTML, all inline) of the design\n"
    "                    before and after, the plan run into a temporary dump and\n"
    "                    analyzed: per namespace documents and size before and\n"
    "                    after, the largest document after, the arrays' lengths\n"
    "  --format dot|mermaid  with --against: the design after as Graphviz or\n"
    "                    Mermaid text, in place of the line saying the plan is valid\n"
    "  --memory SIZE, --tmp DIR, --server-version V   as in run\n"
    "  --quiet, -q       no progress\n"
    "  --help, -h        this text\n"
    "\n"
    "example: remodel check dumps/plans/embed-tasks.json --against dumps/sample\n";

/* "  embed, extract, ...": every operation the plan parser knows, in its
 * table's order, in lines of at most 78 columns. */
static void
operations (char *buf, size_t cap)
{
    size_t n = 0, col = 0;
    for (int k = 0; k < RM_STEP_N_KINDS && n < cap; k++) {
        const char *name = rm_step_kind_name ((rm_step_kind_t) k);
        const char *sep = k + 1 < RM_STEP_N_KINDS ? "," : "";
        if (col && col + 1 + strlen (name) + strlen (sep) > 78) {
            n += (size_t) snprintf (buf + n, cap - n, "\n");
            col = 0;
        }
        col += (size_t) snprintf (buf + n, cap - n, "%s%s%s", col ? " " : "  ", name, sep);
        n += strlen (buf + n);
    }
}

/* A usage with the operations in place of its "%s". */
static const char *
usage_with_operations (char *buf, size_t cap, const char *fmt)
{
    char ops[512];
    operations (ops, sizeof ops);
    snprintf (buf, cap, fmt, ops);
    return buf;
}

typedef struct {
    tool_progress_t *prog;
    rm_reader_t *r;
} progress_ctx_t;

static void
on_progress (void *ctx, uint64_t docs)
{
    progress_ctx_t *p = ctx;
    tool_progress_tick (p->prog, p->r, docs);
}


/* strings[0..n) as the array key of doc. */
static void
append_strings (bson_t *doc, const char *key, char *const *strings, size_t n)
{
    bson_t arr;
    BSON_APPEND_ARRAY_BEGIN (doc, key, &arr);
    for (size_t i = 0; i < n; i++) {
        char buf[16];
        const char *k;
        bson_uint32_to_string ((uint32_t) i, &k, buf, sizeof buf);
        BSON_APPEND_UTF8 (&arr, k, strings[i]);
    }
    bson_append_array_end (doc, &arr);
}

/* Step i's counts, when it rewrites documents where they are: the
 * namespace it rewrites (NULL: no counts). */
static const char *
step_counted (const rm_engine_t *e, const rm_plan_t *plan, size_t i, uint64_t *changed,
              uint64_t *unchanged)
{
    const rm_nsref_t *in[4];
    if (!rm_engine_step_counts (e, i, changed, unchanged) || !rm_step_inputs (&plan->steps[i], in, 4))
        return NULL;
    return in[0]->text;
}

/* print_counts's lines as "steps": [{step, op, ns, changed, unchanged}]. */
static void
append_counts (bson_t *doc, const rm_engine_t *e, const rm_plan_t *plan)
{
    bson_t arr;
    uint32_t n = 0;
    BSON_APPEND_ARRAY_BEGIN (doc, "steps", &arr);
    for (size_t i = 0; i < plan->n; i++) {
        uint64_t changed, unchanged;
        const char *ns = step_counted (e, plan, i, &changed, &unchanged);
        char key[16];
        const char *k;
        bson_t d;
        if (!ns)
            continue;
        bson_uint32_to_string (n++, &k, key, sizeof key);
        bson_append_document_begin (&arr, k, -1, &d);
        BSON_APPEND_INT64 (&d, "step", (int64_t) plan->steps[i].index);
        BSON_APPEND_UTF8 (&d, "op", plan->steps[i].op);
        BSON_APPEND_UTF8 (&d, "ns", ns);
        BSON_APPEND_INT64 (&d, "changed", (int64_t) changed);
        BSON_APPEND_INT64 (&d, "unchanged", (int64_t) unchanged);
        bson_append_document_end (&arr, &d);
    }
    bson_append_array_end (doc, &arr);
}

static bool
write_stats_json (const char *path, const rm_engine_t *e, const rm_plan_t *plan,
                  const tool_opts_t *o, bson_error_t *err)
{
    const rm_ns_stats_t *st;
    size_t n = rm_engine_stats (e, &st);
    char *const *warnings;
    size_t n_warnings = rm_engine_warnings (e, &warnings);
    bool spilled = rm_engine_spilled (e);
    bson_t doc, arr;
    char *json, *tmp;
    FILE *f;
    bool ok;
    bson_init (&doc);
    BSON_APPEND_ARRAY_BEGIN (&doc, "namespaces", &arr);
    for (size_t i = 0; i < n; i++) {
        bson_t d;
        char key[16];
        const char *k;
        bson_uint32_to_string ((uint32_t) i, &k, key, sizeof key);
        bson_append_document_begin (&arr, k, -1, &d);
        BSON_APPEND_UTF8 (&d, "ns", st[i].name);
        BSON_APPEND_BOOL (&d, "changed", st[i].touched);
        BSON_APPEND_BOOL (&d, "created", st[i].created);
        BSON_APPEND_INT64 (&d, "in", (int64_t) st[i].docs_in);
        BSON_APPEND_INT64 (&d, "out", (int64_t) st[i].docs_out);
        BSON_APPEND_INT64 (&d, "embedded", (int64_t) st[i].embedded);
        BSON_APPEND_INT64 (&d, "orphans", (int64_t) st[i].orphans);
        BSON_APPEND_INT64 (&d, "overflow", (int64_t) st[i].overflow);
        BSON_APPEND_INT64 (&d, "extracted", (int64_t) st[i].extracted);
        BSON_APPEND_INT64 (&d, "missed", (int64_t) st[i].missed);
        BSON_APPEND_INT64 (&d, "invalid", (int64_t) st[i].invalid);
        bson_append_document_end (&arr, &d);
    }
    bson_append_array_end (&doc, &arr);
    append_counts (&doc, e, plan);
    BSON_APPEND_BOOL (&doc, "spilled", spilled);
    /* The $lookup rules the joins followed, and the version that chose them. */
    BSON_APPEND_UTF8 (&doc, "serverVersion", o->server_version_text);
    BSON_APPEND_UTF8 (&doc, "lookupRules",
                      rm_compile_lookup_rules (rm_compile_lookup_since_36681 (o->server_version)));
    append_strings (&doc, "warnings", warnings, n_warnings);
    /* the lines print_index_changes prints */
    n_warnings = rm_engine_index_changes (e, &warnings);
    append_strings (&doc, "indexChanges", warnings, n_warnings);
    json = bson_as_relaxed_extended_json (&doc, NULL);
    bson_destroy (&doc);
    /* Like every output: written under a temporary name, renamed when whole. */
    tmp = rm_tmppath_new (path);
    f = fopen (tmp, "w");
    ok = f && fprintf (f, "%s\n", json) >= 0;
    if (f && fclose (f) != 0)
        ok = false;
    if (!ok)
        rm_error_set (err, RM_ERR_IO, "%s: cannot write the stats: %s", path, strerror (errno));
    else
        ok = rm_tmppath_commit (tmp, path, true, err);
    if (!ok)
        rm_tmppath_remove (tmp);
    bson_free (tmp);
    bson_free (json);
    return ok;
}

/* The summary goes to standard error beside the progress meter, except for a
 * dry run, whose result it is: there it goes to standard output. The
 * columns are explained in docs/commands.md (remodel run). */
static void
print_summary (FILE *f, const rm_ns_stats_t *st, size_t n)
{
    fprintf (f, "%-36s %10s %10s %10s %9s %9s %10s %9s %9s\n", "NAMESPACE", "IN", "OUT",
             "EMBEDDED", "ORPHANS", "OVERFLOW", "EXTRACTED", "MISSED", "INVALID");
    for (size_t i = 0; i < n; i++) {
        tool_put_cell (f, st[i].name, 36);
        fprintf (f, " %10llu %10llu %10llu %9llu %9llu %10llu %9llu %9llu%s\n",
                 (unsigned long long) st[i].docs_in, (unsigned long long) st[i].docs_out,
                 (unsigned long long) st[i].embedded, (unsigned long long) st[i].orphans,
                 (unsigned long long) st[i].overflow, (unsigned long long) st[i].extracted,
                 (unsigned long long) st[i].missed, (unsigned long long) st[i].invalid,
                 st[i].created ? "  (new)" : st[i].touched ? "" : "  (unchanged)");
    }
}

/* Under the table, for each step that rewrites documents in place: how
 * many it changed and how many it left as they were (its filter's). */
static void
print_counts (FILE *f, const rm_engine_t *e, const rm_plan_t *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        uint64_t changed, unchanged;
        const char *ns = step_counted (e, plan, i, &changed, &unchanged);
        if (!ns)
            continue;
        fprintf (f, "step %zu (%s) ", plan->steps[i].index, plan->steps[i].op);
        tool_put_cell (f, ns, 0);
        fprintf (f, ": %llu changed, %llu unchanged\n", (unsigned long long) changed,
                 (unsigned long long) unchanged);
    }
}

/* A rekey's line: the documents re-keyed, the references rewritten and
 * those kept without a match (onMissing "keep"). */
static void
print_rekeyed (FILE *f, const rm_engine_t *e, const rm_step_t *s, size_t i, uint64_t n)
{
    uint64_t rewritten, kept;
    fprintf (f, "step %zu (%s) ", s->index, s->op);
    tool_put_cell (f, s->u.rekey.from.text, 0);
    fprintf (f, ": %llu document(s) re-keyed into ", (unsigned long long) n);
    tool_put_cell (f, s->u.rekey.to.text, 0);
    if (rm_engine_step_lookups (e, i, &rewritten, &kept) && s->u.rekey.n_refs) {
        fprintf (f, "; %llu reference(s) rewritten", (unsigned long long) rewritten);
        if (kept)
            fprintf (f, ", %llu kept without a match", (unsigned long long) kept);
    }
    fputc ('\n', f);
}

/* For each step that copies, moves or deletes by a filter (run and
 * check --against): how many documents it selected of how many; for a
 * rekey, what it re-keyed and rewrote. */
static void
print_selected (FILE *f, const rm_engine_t *e, const rm_plan_t *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        uint64_t sel, passed;
        if (!rm_engine_step_selected (e, i, &sel, &passed))
            continue;
        if (s->kind == RM_STEP_REKEY) {
            print_rekeyed (f, e, s, i, sel);
            continue;
        }
        fprintf (f, "step %zu (%s) ", s->index, s->op);
        tool_put_cell (f, s->u.copy.from.text, 0);
        fprintf (f, ": %llu of %llu document(s) selected", (unsigned long long) sel,
                 (unsigned long long) (sel + passed));
        if (s->kind != RM_STEP_DELETE) {
            fprintf (f, ", %s to ", s->kind == RM_STEP_COPY ? "copied" : "moved");
            tool_put_cell (f, s->u.copy.to.text, 0);
        } else {
            fputs (", deleted", f);
        }
        fputc ('\n', f);
    }
}

/* Under the table too: what the plan did to the output's indexes
 * (remodel/indexes.h), one line each. */
static void
print_index_changes (FILE *f, const rm_engine_t *e)
{
    char *const *lines;
    size_t n = rm_engine_index_changes (e, &lines);
    for (size_t i = 0; i < n; i++) {
        fputs ("index: ", f);
        tool_put_cell (f, lines[i], 0);
        fputc ('\n', f);
    }
}

/* Warnings come after the summary and even with --quiet: they are about
 * the data the run wrote. */
static void
print_warnings (const rm_engine_t *e)
{
    char *const *w;
    size_t n = rm_engine_warnings (e, &w);
    for (size_t i = 0; i < n; i++)
        tool_warn ("%s", w[i]);
}

int
cmd_run (int argc, char **argv)
{
    static char usage[4096];
    const tool_cmd_t cmd = {.usage = usage_with_operations (usage, sizeof usage, run_usage_fmt),
                            .cmd = RM_CMD_RUN, .min_pos = 1, .max_pos = 1};
    tool_opts_t o;
    char *pos[1];
    int n, status = 0;
    bool help, ok;
    bson_error_t err;
    rm_plan_t plan;
    rm_reader_t *r = NULL;
    rm_writer_t *w = NULL;
    rm_engine_t *e = NULL;
    rm_dump_info_t out;
    rm_engine_opts_t eo;
    progress_ctx_t pc = {NULL, NULL};
    char *preview_to = NULL;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    if (o.preview && (o.to || o.dry_run || strcmp (o.from ? o.from : "", "-") == 0)) {
        tool_errorf ("--preview writes nothing and reads the source twice: no --to, --dry-run "
                     "or standard input with it");
        return 2;
    }
    if (o.preview) {
        /* The result goes to a temporary archive, read back, then removed. */
        char *where = bson_strdup_printf ("%s/preview.archive", rm_tmpdir (o.tmpdir));
        preview_to = rm_tmppath_new (where);
        bson_free (where);
        o.to = preview_to;
        o.write.format = RM_FORMAT_ARCHIVE;
        o.write.compress.codec = RM_CODEC_NONE;
        o.write.compress_set = true;
    }
    if (!o.from || (!o.to && !o.dry_run)) {
        tool_errorf ("run needs --from SRC and --to DST (or --dry-run)");
        return 2;
    }
    if (!o.dry_run)
        rm_write_opts_resolve (&o.write, o.to);
    {
        const tool_path_t paths[] = {
            {pos[0], "the plan", false, false},
            {o.from, "the source", false, false},
            {o.dry_run ? NULL : o.to, "the destination", true, o.write.format == RM_FORMAT_DIR},
            {o.stats_json, "--stats-json", true, false},
            {o.read.quarantine, "--skip-invalid", true, false},
        };
        if (!tool_paths_check (paths, 5, &err)) {
            tool_error (&err);
            return rm_cli_exit_status (&err);
        }
    }
    tool_sweep (o.dry_run || o.preview ? NULL : o.to, o.tmpdir, o.quiet);
    if ((!o.dry_run && !o.preview && strcmp (o.to, "-") != 0 && !tool_make_parents (o.to, &err)) ||
        (o.stats_json && !tool_make_parents (o.stats_json, &err))) {
        tool_error (&err);
        return rm_cli_exit_status (&err);
    }
    rm_dump_info_init (&out);
    if (!rm_plan_load (&plan, pos[0], &err)) {
        tool_remove_made_parents ();
        tool_error (&err);
        return rm_cli_exit_status (&err);
    }
    o.read.tmpdir = o.tmpdir; /* a tar on stdin is copied there first */
    r = rm_reader_open (o.from, &o.read, &err);
    ok = r != NULL;
    memset (&eo, 0, sizeof eo);
    eo.memory = o.memory;
    eo.tmpdir = o.tmpdir;
    eo.batch = o.batch;
    eo.allow_missing = o.allow_missing;
    eo.follow_indexes = !o.keep_indexes;
    eo.lookup_since_36681 = rm_compile_lookup_since_36681 (o.server_version);
    eo.progress = on_progress;
    eo.progress_ctx = &pc;
    /* --threads, one per core by default, as for compression. */
    eo.threads = o.write.compress.threads > 0 ? o.write.compress.threads
                                              : (int) sysconf (_SC_NPROCESSORS_ONLN);
    if (ok) {
        e = rm_engine_new (&plan, &eo);
        ok = rm_engine_prepare (e, rm_reader_info (r), &out, &err);
        if (!ok)
            rm_error_prefix (&err, "%s", pos[0]);
    }
    if (ok && !o.dry_run) {
        w = rm_writer_open (o.to, &o.write, &out, &err);
        ok = w != NULL;
    }
    if (ok) {
        pc.prog = tool_progress_new (o.quiet, "run");
        pc.r = r;
        ok = rm_engine_run (e, r, w, &err);
        tool_progress_done (pc.prog);
        /* A step's error is the plan's: named after its file, as check
         * --against names it. */
        if (!ok && strncmp (err.message, "step ", 5) == 0)
            rm_error_prefix (&err, "%s", pos[0]);
    }
    if (ok && w)
        ok = rm_writer_commit (w, &err);
    if (ok) {
        const rm_ns_stats_t *st;
        size_t ns = rm_engine_stats (e, &st);
        if (!o.quiet) {
            print_summary (o.dry_run ? stdout : stderr, st, ns);
            print_counts (o.dry_run ? stdout : stderr, e, &plan);
            print_selected (o.dry_run ? stdout : stderr, e, &plan);
            print_index_changes (o.dry_run ? stdout : stderr, e);
        }
        print_warnings (e);
        if (o.preview)
            ok = tool_preview (o.from, preview_to, st, ns, o.preview, &err);
        if (rm_reader_skipped (r) > 0)
            tool_note (false, "%llu invalid document(s) set aside",
                       (unsigned long long) rm_reader_skipped (r));
        if (o.stats_json)
            ok = write_stats_json (o.stats_json, e, &plan, &o, &err);
        if (ok && !o.quiet)
            tool_note (false, o.dry_run || o.preview ? "%s: nothing written" : "wrote %s",
                       o.dry_run ? "dry run" : o.preview ? "preview" : o.to);
    }
    if (!ok) {
        rm_writer_abort (w);
        tool_error (&err);
        status = rm_cli_exit_status (&err);
    }
    rm_writer_destroy (w);
    rm_engine_destroy (e);
    rm_reader_close (r);
    rm_dump_info_destroy (&out);
    rm_plan_destroy (&plan);
    if (preview_to) {
        rm_tmppath_remove (preview_to);
        bson_free (preview_to);
    }
    if (status == 0)
        tool_keep_made_parents ();
    else
        tool_remove_made_parents ();
    return status;
}

static bool
add_id (void *ctx, size_t ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    return rm_idcheck_add (ctx, (uint32_t) ns, doc, len, err);
}

/* check --against: every document a step's expressions fail on,
 * counted, the first few said, so that a plan is fixed once (an onError,
 * a filter) rather than one document at a time. */
#define DOC_ERRORS_SHOWN 5
typedef struct {
    uint64_t n;
} doc_errors_t;

static void
on_doc_error (void *ctx, const bson_error_t *why)
{
    doc_errors_t *d = ctx;
    if (d->n++ < DOC_ERRORS_SHOWN)
        tool_warn ("fails: %s", why->message);
}

/* check --against: the plan run over SRC, nothing written (the engine's
 * checks are what only the data shows), and the result's _ids checked
 * unique in each namespace, as mongorestore needs them. */
static bool
check_against (const rm_plan_t *plan, const tool_opts_t *o, bson_error_t *err)
{
    rm_reader_t *r = rm_reader_open (o->against, NULL, err);
    rm_engine_opts_t eo;
    rm_engine_t *e = NULL;
    rm_dump_info_t out;
    progress_ctx_t pc = {NULL, r};
    rm_idcheck_t *ids = tool_idcheck_new (o);
    doc_errors_t fails = {0};
    bool ok = r && rm_plan_check_against (plan, rm_reader_info (r), err);

    rm_dump_info_init (&out);
    memset (&eo, 0, sizeof eo);
    /* The _ids' sort has its quarter of the budget. */
    eo.memory = (o->memory ? o->memory : tool_idcheck_budget (o) * 4) - tool_idcheck_budget (o);
    eo.output = add_id;
    eo.output_ctx = ids;
    eo.tmpdir = o->tmpdir;
    eo.allow_missing = o->allow_missing;
    eo.follow_indexes = true;
    eo.lookup_since_36681 = rm_compile_lookup_since_36681 (o->server_version);
    eo.progress = on_progress;
    eo.progress_ctx = &pc;
    eo.doc_error = on_doc_error;
    eo.doc_error_ctx = &fails;
    if (ok) {
        e = rm_engine_new (plan, &eo);
        ok = rm_engine_prepare (e, rm_reader_info (r), &out, err);
    }
    if (ok) {
        pc.prog = tool_progress_new (o->quiet, "check");
        ok = rm_engine_run (e, r, NULL, err);
        tool_progress_done (pc.prog);
    }
    if (ok && fails.n) {
        rm_error_set (err, RM_ERR_DATA, "%" PRIu64 " document(s) fail the plan's expressions or "
                      "filters (the first %d said above): give the operator an onError, or the "
                      "step a filter that leaves them out",
                      fails.n, fails.n < DOC_ERRORS_SHOWN ? (int) fails.n : DOC_ERRORS_SHOWN);
        ok = false;
    }
    ok = ok && rm_idcheck_finish (ids, err) && tool_idcheck_error (ids, &out, err);
    if (ok) {
        /* beside the warnings: standard output is the verdict's (or
         * the diagram's), which scripts read; --quiet leaves them out as
         * it leaves out run's summary */
        if (!o->quiet) {
            print_selected (stderr, e, plan);
            print_index_changes (stderr, e);
        }
        print_warnings (e);
    }
    rm_idcheck_destroy (ids);
    rm_engine_destroy (e);
    rm_dump_info_destroy (&out);
    rm_reader_close (r);
    return ok;
}

int
cmd_check (int argc, char **argv)
{
    static char usage[4096];
    const tool_cmd_t cmd = {.usage = usage_with_operations (usage, sizeof usage, check_usage_fmt),
                            .cmd = RM_CMD_CHECK, .min_pos = 1, .max_pos = 1};
    tool_opts_t o;
    char *pos[1];
    int n;
    bool help;
    bson_error_t err;
    rm_plan_t plan;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    if ((o.report || o.diagram) && !o.against) {
        tool_errorf ("--%s needs --against SRC: the pictures are of the plan run over a dump",
                     o.report ? "report" : "format");
        return 2;
    }
    if (!tool_pictures_check (&o, o.against, true))
        return 2;
    if (!rm_plan_load (&plan, pos[0], &err)) {
        tool_error (&err);
        return rm_cli_exit_status (&err);
    }
    if (o.against && !check_against (&plan, &o, &err)) {
        rm_error_prefix (&err, "%s", pos[0]);
        tool_error (&err);
        rm_plan_destroy (&plan);
        return rm_cli_exit_status (&err);
    }
    if ((o.report || o.diagram) && !tool_check_pictures (&plan, pos[0], &o, &err)) {
        tool_error (&err);
        rm_plan_destroy (&plan);
        return rm_cli_exit_status (&err);
    }
    if (!o.diagram)
        printf ("%s: %zu step(s), valid%s%s\n", pos[0], plan.n, o.against ? " against " : "",
                o.against ? o.against : "");
    rm_plan_destroy (&plan);
    return 0;
}
