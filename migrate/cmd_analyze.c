/* remodel analyze SRC: what the data says about its design (remodel/analyze.h):
 * each collection's documents, sizes, fields and arrays, and the
 * relationships between collections, with their cardinality class. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remodel/analyze.h"
#include "remodel/nsselect.h"
#include "remodel/tmppath.h"
#include "tool.h"

/* --plan-out with no step to recommend: not written, and this status. */
#define RM_ANALYZE_EXIT_NOTHING 4

static const char usage[] =
    "usage: remodel analyze SRC [--ns PATTERN]... [--json] [--plan-out FILE] [--hints FILE]\n"
    "                        [--report FILE] [--format dot|mermaid] [--memory SIZE] [--tmp DIR]\n"
    "\n"
    "Reads a dump (twice when a relationship is held in arrays) and reports, per\n"
    "collection, documents, sizes (average, p99, largest, and how close to\n"
    "16 MiB), fields with their presence and BSON types, arrays with their\n"
    "lengths; then the relationships between collections that the values show:\n"
    "a field whose values are found among another collection's _id or a field\n"
    "unique there (matched as $lookup matches), its direction, children per\n"
    "parent, orphans, shared children and its class (one-to-one, one-to-few,\n"
    "one-to-many, one-to-squillions).\n"
    "\n"
    "  --ns PATTERN   only the collections the pattern matches (as --nsInclude;\n"
    "                 repeatable)\n"
    "  --json         one JSON document (docs/analyze.md: --json)\n"
    "  --plan-out FILE  the recommended steps as a plan remodel check and run\n"
    "                 take, each with a \"why\"\n"
    "  --report FILE  a page (HTML, all inline: opens offline) drawing the design,\n"
    "                 the relationships, and the recommended plan's before and\n"
    "                 after (the plan run over SRC into a temporary dump, then\n"
    "                 analyzed); needs a build with Graphviz (libgraphviz-dev)\n"
    "  --format dot|mermaid  the relationship diagram as Graphviz or Mermaid text\n"
    "                 instead of the text report\n"
    "  --hints FILE   what the dump cannot show (JSON: readTogether [[ns, ns]],\n"
    "                 readAlone [ns], updatedAlone [ns], readWriteRatio {ns: n},\n"
    "                 references {\"db.coll.field\": \"db.coll.key\" or null})\n"
    "  --memory SIZE  budget for the join keys and their sorts (default 512M);\n"
    "                 past it they spill to sorted files: the same report\n"
    "  --tmp DIR      where they spill (default $TMPDIR or /tmp)\n"
    "  --quiet, -q    no progress meter, no note of spilling\n"
    "  --help, -h     this text\n"
    "\n"
    "example: remodel analyze dumps/sample\n";

static int64_t
get_i (const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    return bson_iter_init (&it, d) && bson_iter_find_descendant (&it, path, &f) ? bson_iter_as_int64 (&f) : 0;
}

static double
get_d (const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    return bson_iter_init (&it, d) && bson_iter_find_descendant (&it, path, &f) ? bson_iter_as_double (&f) : 0;
}

/* s as rm_cli_put_text shows it (control bytes and bytes that are not UTF-8
 * as \xNN), in a ring of buffers: the names a dump holds cannot drive the
 * terminal through the text report. */
static const char *
shown (const char *s)
{
    static char *ring[16];
    static int k;
    size_t n;
    FILE *m;
    k = (k + 1) % 16;
    free (ring[k]);
    ring[k] = NULL;
    m = open_memstream (&ring[k], &n);
    if (!m)
        return "?";
    rm_cli_put_text (m, s, strlen (s));
    fclose (m);
    return ring[k];
}

static const char *
get_s (const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    return shown (bson_iter_init (&it, d) && bson_iter_find_descendant (&it, path, &f) &&
                          BSON_ITER_HOLDS_UTF8 (&f) ? bson_iter_utf8 (&f, NULL) : "");
}

static bool
get_b (const bson_t *d, const char *path)
{
    bson_iter_t it, f;
    return bson_iter_init (&it, d) && bson_iter_find_descendant (&it, path, &f) && bson_iter_as_bool (&f);
}

/* Each element of the report's array key, as a document. */
static bool
next_doc (bson_iter_t *arr, bson_t *out)
{
    uint32_t len;
    const uint8_t *data;
    while (bson_iter_next (arr))
        if (BSON_ITER_HOLDS_DOCUMENT (arr)) {
            bson_iter_document (arr, &len, &data);
            return bson_init_static (out, data, len);
        }
    return false;
}

/* A relationship's level and score, then its evidence, one line each. */
static void
print_evidence (const bson_t *rel)
{
    bson_iter_t it, arr;
    bson_t e;
    printf ("  %s, score %.1f:", get_s (rel, "level"), get_d (rel, "score"));
    if (!bson_iter_init_find (&it, rel, "evidence") || !bson_iter_recurse (&it, &arr))
        return;
    while (next_doc (&arr, &e))
        printf (" [%+.1f] %s;", get_d (&e, "points"), get_s (&e, "what"));
    printf ("\n");
}

/* A relationship's target keys held by more than one document: a join
 * brings each of them. */
static void
print_duplicates (const bson_t *rel)
{
    bson_iter_t it, arr;
    bson_t d;
    size_t n = 0;
    if (!get_i (rel, "keyDuplicates"))
        return;
    printf ("  %lld duplicate key(s) in %s.%s (", (long long) get_i (rel, "keyDuplicates"),
            get_s (rel, "to"), get_s (rel, "key"));
    if (bson_iter_init_find (&it, rel, "keyDuplicateValues") && bson_iter_recurse (&it, &arr))
        while (next_doc (&arr, &d))
            printf ("%s%s in %lld documents", n++ ? ", " : "", get_s (&d, "value"),
                    (long long) get_i (&d, "documents"));
    printf ("%s): a join brings every document holding a key, so a parent referencing one "
            "gets more children than references\n", get_i (rel, "keyDuplicates") > (int64_t) n ? ", ..." : "");
}

/* The strings of report[key], under title; nothing when there are none. */
static void
print_notes (const bson_t *r, const char *key, const char *title)
{
    bson_iter_t it, arr;
    size_t n = 0;
    if (!bson_iter_init_find (&it, r, key) || !bson_iter_recurse (&it, &arr))
        return;
    while (bson_iter_next (&arr))
        if (BSON_ITER_HOLDS_UTF8 (&arr)) {
            if (!n++)
                printf ("\n%s\n", title);
            printf ("%s\n", shown (bson_iter_utf8 (&arr, NULL)));
        }
}

/* A relational import's own kinds (report[key]: {what, why}), under title. */
static void
print_kind (const bson_t *r, const char *key, const char *title)
{
    bson_iter_t it, arr;
    bson_t e;
    size_t n = 0;
    if (!bson_iter_init_find (&it, r, key) || !bson_iter_recurse (&it, &arr))
        return;
    while (next_doc (&arr, &e)) {
        if (!n++)
            printf ("\n%s\n", title);
        printf ("%s\n  %s\n", shown (get_s (&e, "what")), shown (get_s (&e, "why")));
    }
}

/* The fields a relational import typed wrong, with their counts. */
static void
print_types (const bson_t *r)
{
    bson_iter_t it, arr;
    bson_t e;
    size_t n = 0;
    if (!bson_iter_init_find (&it, r, "types") || !bson_iter_recurse (&it, &arr))
        return;
    while (next_doc (&arr, &e)) {
        if (!n++)
            printf ("\nTYPES\n");
        printf ("%s.%s: %s (%lld of %lld)", shown (get_s (&e, "ns")), shown (get_s (&e, "field")),
                get_s (&e, "what"), (long long) get_i (&e, "matching"), (long long) get_i (&e, "of"));
        if (bson_iter_init_find (&it, &e, "format"))
            printf (", format \"%s\"", shown (bson_iter_utf8 (&it, NULL)));
        if (bson_iter_init_find (&it, &e, "advice"))
            printf (": %s", shown (bson_iter_utf8 (&it, NULL)));
        printf ("\n");
    }
}

static void
print_text (const bson_t *r)
{
    bson_iter_t it, arr, fit, farr;
    bson_t c, f, rel;
    size_t n = 0;

    printf ("%s\n\n", get_s (r, "source"));
    printf ("%-36s %10s %9s %9s %9s %9s\n", "COLLECTION", "DOCUMENTS", "AVG SIZE", "P99 SIZE",
            "MAX SIZE", "OF 16 MiB");
    bson_iter_init_find (&it, r, "collections");
    bson_iter_recurse (&it, &arr);
    while (next_doc (&arr, &c)) {
        tool_put_cell (stdout, get_s (&c, "ns"), 36);
        printf (" %10lld %9lld %9lld %9lld %8.2f%%\n", (long long) get_i (&c, "documents"),
                (long long) get_i (&c, "avgSize"), (long long) get_i (&c, "p99Size"),
                (long long) get_i (&c, "maxSize"), 100.0 * get_d (&c, "maxOf16MiB"));
    }
    /* The fields past the cap are in no table below: say so here too. */
    bson_iter_init_find (&it, r, "collections");
    bson_iter_recurse (&it, &arr);
    while (next_doc (&arr, &c))
        if (get_b (&c, "fieldsCapped"))
            printf ("%s: more than %d field paths; the first %d are analyzed, the rest left out "
                    "(fieldsCapped)\n", get_s (&c, "ns"), RM_ANALYZE_PATHS_CAP, RM_ANALYZE_PATHS_CAP);
    printf ("\n%-44s %9s %5s %5s %5s %6s\n", "ARRAY", "DOCUMENTS", "MIN", "P50", "P99", "MAX");
    bson_iter_init_find (&it, r, "collections");
    bson_iter_recurse (&it, &arr);
    while (next_doc (&arr, &c)) {
        bson_iter_init_find (&fit, &c, "fields");
        bson_iter_recurse (&fit, &farr);
        while (next_doc (&farr, &f)) {
            char name[600];
            if (!get_i (&f, "arrays"))
                continue;
            snprintf (name, sizeof name, "%s.%s", get_s (&c, "ns"), get_s (&f, "path"));
            tool_put_cell (stdout, name, 44);
            printf (" %9lld %5lld %5lld %5lld %6lld\n", (long long) get_i (&f, "arrays"),
                    (long long) get_i (&f, "arrayLengths.min"), (long long) get_i (&f, "arrayLengths.p50"),
                    (long long) get_i (&f, "arrayLengths.p99"), (long long) get_i (&f, "arrayLengths.max"));
        }
    }
    printf ("\nRELATIONSHIPS\n");
    bson_iter_init_find (&it, r, "relationships");
    bson_iter_recurse (&it, &arr);
    while (next_doc (&arr, &rel)) {
        bool child = !strcmp (get_s (&rel, "direction"), "childRefs");
        bool possible = !strcmp (get_s (&rel, "level"), "possible");
        n++;
        printf ("%s.%s -> %s.%s: %s, %s%s%s%s\n", get_s (&rel, "from"), get_s (&rel, "field"),
                get_s (&rel, "to"), get_s (&rel, "key"),
                child ? "child references in an array of the parent" : "parent reference from the many side",
                get_s (&rel, "class"), get_b (&rel, "manyToMany") ? " (many-to-many: children shared)" : "",
                get_b (&rel, "twoWay") ? " (two-way)" : "",
                possible ? " [possible: not acted on]" : "");
        print_evidence (&rel);
        if (possible)
            printf ("  to confirm: %s\n", get_s (&rel, "confirm"));
        printf ("  %lld of %lld references found (%.1f%%), %lld orphan reference(s); children per "
                "parent (%s) min %lld p50 %lld p99 %lld max %lld, %lld of %lld parent(s) with none",
                (long long) get_i (&rel, "matched"), (long long) get_i (&rel, "references"),
                100.0 * get_d (&rel, "matchRate"), (long long) get_i (&rel, "orphanReferences"),
                get_s (&rel, "parent"), (long long) get_i (&rel, "childrenPerParent.min"),
                (long long) get_i (&rel, "childrenPerParent.p50"),
                (long long) get_i (&rel, "childrenPerParent.p99"),
                (long long) get_i (&rel, "childrenPerParent.max"),
                (long long) get_i (&rel, "parentsWithNone"), (long long) get_i (&rel, "parents"));
        if (child)
            printf (", %lld child(ren) referenced more than once", (long long) get_i (&rel, "sharedChildren"));
        /* The field the join looks documents up by: the children's. */
        printf ("; %s.%s %s\n", get_s (&rel, "indexNs"), get_s (&rel, "indexField"),
                get_b (&rel, "indexed") ? "indexed" : "not indexed in the dump's metadata");
        print_duplicates (&rel);
    }
    if (!n)
        printf ("(none found)\n");
    n = 0;
    bson_iter_init_find (&it, r, "rejected");
    bson_iter_recurse (&it, &arr);
    while (next_doc (&arr, &rel))
        n++;
    if (n)
        printf ("(%zu candidate(s) that the values alone matched rejected on the evidence: --json "
                "lists them, with why)\n", n);
    print_kind (r, "ownership", "OWNERSHIP");
    print_kind (r, "joins", "JOIN COLLECTIONS");
    print_kind (r, "hierarchies", "HIERARCHIES");
    print_kind (r, "ties", "TIES");
    print_kind (r, "sameValues", "SAME VALUES");
    print_types (r);
    print_notes (r, "planChecks", "PLAN CHECK");
    print_notes (r, "hintNotes", "HINTS");
    printf ("\nCHECKS\n");
    n = 0;
    bson_iter_init_find (&it, r, "checks");
    bson_iter_recurse (&it, &arr);
    while (next_doc (&arr, &rel)) {
        n++;
        printf ("%s %s%s%s: %s\n  rule: %s\n", get_s (&rel, "check"), get_s (&rel, "ns"),
                *get_s (&rel, "field") ? "." : "", get_s (&rel, "field"), get_s (&rel, "finding"),
                get_s (&rel, "rule"));
    }
    if (!n)
        printf ("(nothing found)\n");
    printf ("\nRECOMMENDATIONS\n");
    bson_iter_init_find (&it, r, "recommendations");
    bson_iter_recurse (&it, &arr);
    n = 0;
    while (next_doc (&arr, &rel)) {
        n++;
        printf ("%s: %s\n  %s\n  rule: %s\n  depends on: %s\n", get_s (&rel, "relationship"),
                get_s (&rel, "pattern"), get_s (&rel, "why"), get_s (&rel, "rule"),
                get_s (&rel, "dependsOn"));
    }
    if (!n)
        printf ("(nothing to recommend: the design holds no move these rules make)\n");
}

/* The recommended steps as a plan file, written whole or not at all. */
static bool
write_plan (const rm_analysis_t *a, const char *path, bool *empty, bson_error_t *err)
{
    bson_t steps = BSON_INITIALIZER;
    bson_iter_t it;
    char *tmp = bson_strdup_printf ("%s.tmp-%ld", path, (long) getpid ());
    FILE *f = fopen (tmp, "w");
    bool ok = f != NULL, first = true;

    /* Checked: a plan that would lose a document is not written. Nor
     * is an empty one, which check and run refuse: a script that acts on
     * the file is told by the exit status that there is nothing to do
     * (a file already there is left as it was). */
    *empty = false;
    if (!rm_analysis_plan (a, &steps, err) ||
        (bson_count_keys (&steps) == 0 && (*empty = true) &&
         (rm_error_set (err, RM_ERR_DATA, "%s: analyze recommends no step (the report says "
                        "what it found): nothing to do, no plan written", path), true))) {
        if (f)
            fclose (f);
        unlink (tmp);
        bson_free (tmp);
        bson_destroy (&steps);
        return false;
    }
    if (ok) {
        fprintf (f, "{\"remodel\": 1, \"steps\": [");
        bson_iter_init (&it, &steps);
        while (bson_iter_next (&it)) {
            uint32_t len;
            const uint8_t *data;
            bson_t step;
            char *j;
            bson_iter_document (&it, &len, &data);
            bson_init_static (&step, data, len);
            j = bson_as_canonical_extended_json (&step, NULL);
            fprintf (f, "%s\n  %s", first ? "" : ",", j);
            bson_free (j);
            first = false;
        }
        fprintf (f, "\n]}\n");
        ok = fclose (f) == 0 && rename (tmp, path) == 0;
    }
    if (!ok) {
        rm_error_set (err, RM_ERR_IO, "%s: cannot write the plan: %s", path, strerror (errno));
        unlink (tmp);
    }
    bson_free (tmp);
    bson_destroy (&steps);
    return ok;
}

/* The meter of each pass over the dump. */
typedef struct {
    tool_progress_t *meter;
    int pass;
    bool quiet;
} meter_t;

static void
progress (void *ctx, int pass, rm_reader_t *r, uint64_t docs)
{
    meter_t *m = ctx;
    if (m->pass != pass) {
        if (m->meter)
            tool_progress_done (m->meter);
        m->meter = tool_progress_new (m->quiet, pass == 1 ? "analyze" : "analyze (pass 2)");
        m->pass = pass;
    }
    tool_progress_draw (m->meter, r, docs);
}

int
cmd_analyze (int argc, char **argv)
{
    static const tool_cmd_t cmd = {.usage = usage, .cmd = RM_CMD_ANALYZE, .min_pos = 1, .max_pos = 1};
    tool_opts_t to;
    char *pos[1];
    int n_pos;
    bool help;
    rm_analyze_opts_t o = {0};
    rm_nsselect_t *sel = NULL;
    const char *src, *hints_path;
    bson_t hints;
    bool have_hints = false;
    bool json, quiet, empty = false;
    bson_error_t err = {0};
    rm_analysis_t *a;
    bson_t report;
    bson_iter_t it, notes;
    meter_t meter = {NULL, 0, false};
    const char *memory_arg = "512M";
    size_t runs;
    uint64_t spilled;

    if (!tool_getparam (&cmd, argc, argv, &to, pos, &n_pos, &help))
        return help ? 0 : 2;
    src = pos[0];
    if (!tool_pictures_check (&to, src, to.report != NULL))
        return 2;
    json = to.json;
    quiet = to.quiet;
    hints_path = to.hints;
    o.tmpdir = to.tmpdir;
    if (to.memory) {
        o.memory = to.memory;
        memory_arg = to.memory_text;
    }
    /* --ns: patterns, as --nsInclude's. */
    for (size_t i = 0; i < to.n_ns; i++) {
        if (!sel)
            sel = rm_nsselect_new ();
        if (!rm_nsselect_include (sel, to.ns[i], &err)) {
            tool_error (&err);
            rm_nsselect_destroy (sel);
            return 2;
        }
    }
    if (hints_path) {
        bson_json_reader_t *jr = bson_json_reader_new_from_file (hints_path, &err);
        int got = jr ? bson_json_reader_read (jr, (bson_init (&hints), &hints), &err) : -1;
        if (jr)
            bson_json_reader_destroy (jr);
        if (got != 1 || !rm_analyze_hints_check (&hints, &err)) {
            if (got == 0)
                rm_error_set (&err, RM_ERR_USAGE, "holds no JSON document");
            tool_errorf ("%s: %s", hints_path, err.message);
            if (jr || got >= 0)
                bson_destroy (&hints);
            rm_nsselect_destroy (sel);
            return 2;
        }
        have_hints = true;
        o.hints = &hints;
    }
    o.select = sel;
    /* What a killed analyze spilled there is of no use to anyone now. */
    tool_sweep (NULL, o.tmpdir, quiet);
    meter.quiet = quiet;
    o.progress = progress;
    o.progress_ctx = &meter;
    a = rm_analyze (src, &o, &err);
    if (meter.meter)
        tool_progress_done (meter.meter);
    if (have_hints)
        bson_destroy (&hints);
    if (!a) {
        tool_error (&err);
        rm_nsselect_destroy (sel);
        return rm_cli_exit_status (&err);
    }
    /* Not in the report: it is the same either way. */
    if (rm_analysis_spilled (a, &runs, &spilled) && !quiet)
        fprintf (stderr, "remodel: analyze: the join keys outgrew --memory %s: %zu sorted run(s), "
                 "%.1f MB, spilled under %s\n", memory_arg,
                 runs, (double) spilled / 1e6, rm_tmpdir (o.tmpdir));
    bson_init (&report);
    rm_analysis_report (a, &report);
    if (json) {
        char *j = bson_as_relaxed_extended_json (&report, NULL);
        printf ("%s\n", j);
        bson_free (j);
    } else if (to.diagram) {
        tool_diagram_print (&report, to.diagram);
    } else {
        print_text (&report);
    }
    /* What the plan's check left out, where the plan goes: a note, not
     * an error (the plan is written, and the exit status is 0), a line a
     * recommendation left out. */
    if (to.plan_out && bson_iter_init_find (&it, &report, "planChecks") && bson_iter_recurse (&it, &notes))
        while (bson_iter_next (&notes))
            if (BSON_ITER_HOLDS_UTF8 (&notes))
                tool_note (false, "analyze: %s: %s", to.plan_out, shown (bson_iter_utf8 (&notes, NULL)));
    /* --report runs the plan over what --ns selected: the selection lives
     * until then. */
    o.hints = NULL;
    if (to.report && !tool_analyze_report (a, &report, src, &to, &o, &err)) {
        tool_error (&err);
        bson_destroy (&report);
        rm_analysis_destroy (a);
        rm_nsselect_destroy (sel);
        return rm_cli_exit_status (&err);
    }
    rm_nsselect_destroy (sel);
    bson_destroy (&report);
    if (to.plan_out && !write_plan (a, to.plan_out, &empty, &err)) {
        tool_error (&err);
        rm_analysis_destroy (a);
        /* Nothing to do is no failure, nor success: a status of its own
         * (docs/remodel.1.md) that a script tells from both. */
        return empty ? RM_ANALYZE_EXIT_NOTHING : 1;
    }
    rm_analysis_destroy (a);
    return 0;
}
