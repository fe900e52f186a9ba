/* The option layer (remodel/cli.h): exact names only, an abbreviation
 * refused with the nearest name, --opt=value and --opt value, a missing
 * value, an option refused for a command naming it, sizes, durations and
 * counts with their overflows, the exit-status map, the escaping (of
 * messages and of lines such as a progress meter's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"
#include "test.h"

/* Parses the words of line (space-separated) for cmd; the error message
 * in msg ("" when it parsed). */
static bool
parse (rm_cmd_t cmd, const char *line, rm_cli_args_t *a, char *msg, size_t cap)
{
    static char buf[512];
    char *argv[32];
    int argc = 0;
    bson_error_t err = {0};
    bool ok;
    snprintf (buf, sizeof buf, "%s", line);
    argv[argc++] = "remodel";
    for (char *w = strtok (buf, " "); w && argc < 31; w = strtok (NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    ok = rm_cli_parse (cmd, argc, argv, 1, a, &err);
    snprintf (msg, cap, "%s", ok ? "" : err.message);
    T_CHECK (ok || (err.domain == RM_ERROR_DOMAIN && err.code == RM_ERR_USAGE));
    return ok;
}

static void
test_exact_names (void)
{
    rm_cli_args_t a;
    char m[300];
    T_CHECK (parse (RM_CMD_RUN, "plan.json --format dir --to x", &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_FORMAT].given && a.v[RM_OPT_FORMAT].n == 1);
    T_CHECK_STR (a.v[RM_OPT_TO].text, "x");
    T_CHECK (a.n_pos == 1);
    T_CHECK_STR (a.pos[0], "plan.json");
    rm_cli_args_destroy (&a);
    /* getopt_long read these as --format and --create-indexes. */
    T_CHECK (!parse (RM_CMD_RUN, "plan.json --form dir --to x", &a, m, sizeof m));
    T_CHECK_STR (m, "unknown option \"--form\" (did you mean \"--format\"?)");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_ONLINE_RUN, "p.json --create-index", &a, m, sizeof m));
    T_CHECK_STR (m, "unknown option \"--create-index\" (did you mean \"--create-indexes\"?)");
    rm_cli_args_destroy (&a);
    /* A typo, not an abbreviation: still the nearest. */
    T_CHECK (!parse (RM_CMD_CONVERT, "a b --froce", &a, m, sizeof m));
    T_CHECK_STR (m, "unknown option \"--froce\" (did you mean \"--force\"?)");
    rm_cli_args_destroy (&a);
    /* Nothing near: no guess. */
    T_CHECK (!parse (RM_CMD_CONVERT, "a b --bogus", &a, m, sizeof m));
    T_CHECK_STR (m, "unknown option \"--bogus\" (see remodel convert --help)");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_CONVERT, "a b -xq", &a, m, sizeof m));
    T_CHECK_STR (m, "unknown option \"-x\" (see remodel convert --help)");
    rm_cli_args_destroy (&a);
    /* Only what the command takes is suggested: --threads is convert's. */
    T_CHECK (!parse (RM_CMD_INSPECT, "a --thread 2", &a, m, sizeof m));
    T_CHECK_STR (m, "unknown option \"--thread\" (see remodel inspect --help)");
    rm_cli_args_destroy (&a);
}

/* Every option of every command, given longer than it is ("--plan-output"
 * for "--plan-out") or with one dash ("-plan-out"), is suggested. */
static void
test_every_option_suggested (void)
{
    for (int c = 0; c < RM_CMD_N; c++)
        for (size_t i = 0; i < rm_cli_n_options; i++) {
            const rm_opt_t *o = &rm_cli_options[i];
            const char *forms[] = {"p --%s-output", "p -%s"};
            if (!(o->cmds & (1u << c)))
                continue;
            for (int f = 0; f < 2; f++) {
                rm_cli_args_t a;
                char line[128], m[300], want[300], given[100];
                snprintf (line, sizeof line, forms[f], o->name);
                snprintf (given, sizeof given, "%s", strchr (line, '-'));
                snprintf (want, sizeof want, "unknown option \"%s\" (did you mean \"--%s\"?)",
                          given, o->name);
                /* A one-letter group ("-q") is the letters' own. */
                if (f == 1 && o->name[1] == '\0')
                    continue;
                T_CHECK (!parse ((rm_cmd_t) c, line, &a, m, sizeof m));
                if (strcmp (m, want) != 0)
                    fprintf (stderr, "      %s %s: %s\n", rm_cli_command_name ((rm_cmd_t) c),
                             line, m);
                T_CHECK_STR (m, want);
                rm_cli_args_destroy (&a);
            }
        }
}

static void
test_values_and_forms (void)
{
    rm_cli_args_t a;
    char m[300];
    T_CHECK (parse (RM_CMD_CONVERT, "--threads=4 a -qf b --skip-invalid=bad.bson --format=directory -- -c",
                    &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_THREADS].n == 4);
    T_CHECK (a.v[RM_OPT_QUIET].given && a.v[RM_OPT_FORCE].given);
    T_CHECK_STR (a.v[RM_OPT_SKIP_INVALID].text, "bad.bson");
    T_CHECK (a.v[RM_OPT_FORMAT].n == 1); /* dir, by its other spelling */
    T_CHECK (a.n_pos == 3);
    T_CHECK_STR (a.pos[2], "-c");
    rm_cli_args_destroy (&a);
    /* --skip-invalid takes its file after = only: here b is the destination. */
    T_CHECK (parse (RM_CMD_CONVERT, "a --skip-invalid b", &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_SKIP_INVALID].given && !a.v[RM_OPT_SKIP_INVALID].text && a.n_pos == 2);
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_CONVERT, "a b --format", &a, m, sizeof m));
    T_CHECK_STR (m, "option \"--format\" needs a value (see remodel convert --help)");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_CONVERT, "a b --force=yes", &a, m, sizeof m));
    T_CHECK_STR (m, "option \"--force\" takes no value (see remodel convert --help)");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_CONVERT, "a b --format xml", &a, m, sizeof m));
    T_CHECK_STR (m, "--format: expected archive, dir, tar or bson, got \"xml\"");
    rm_cli_args_destroy (&a);
    /* The same option, compile's values. */
    T_CHECK (!parse (RM_CMD_COMPILE, "p --format dir", &a, m, sizeof m));
    T_CHECK_STR (m, "--format: expected pipeline, mongosh, views or validators, got \"dir\"");
    rm_cli_args_destroy (&a);
    T_CHECK (parse (RM_CMD_COMPILE, "p --format mongosh --server-version 4.0", &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_FORMAT].n == 1);
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_CONVERT, "a b --threads 0", &a, m, sizeof m));
    T_CHECK_STR (m, "--threads: expected a number from 1 to 256, got \"0\"");
    rm_cli_args_destroy (&a);
    /* Repeatable: every value, in order. */
    T_CHECK (parse (RM_CMD_SHOW, "s --ns a.* --ns b.c", &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_NS].n_all == 2);
    T_CHECK_STR (a.v[RM_OPT_NS].all[1], "b.c");
    rm_cli_args_destroy (&a);
}

static void
test_refused_for_command (void)
{
    rm_cli_args_t a;
    char m[300];
    T_CHECK (!parse (RM_CMD_INSPECT, "a --threads 3", &a, m, sizeof m));
    T_CHECK_STR (m, "option \"--threads\" is not one of remodel inspect's (see remodel inspect --help)");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_INSPECT, "-f a", &a, m, sizeof m));
    T_CHECK_STR (m, "option \"-f\" is not one of remodel inspect's (see remodel inspect --help)");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_ONLINE_STATUS, "p --batch-size 5", &a, m, sizeof m));
    T_CHECK_STR (m, "option \"--batch-size\" is not one of remodel online status's (see remodel online status --help)");
    rm_cli_args_destroy (&a);
    /* Named as given, the older spelling too, with no value read. */
    T_CHECK (!parse (RM_CMD_ONLINE_STATUS, "p --pause-ms=5", &a, m, sizeof m));
    T_CHECK_STR (m, "option \"--pause-ms\" is not one of remodel online status's (see remodel online status --help)");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_ONLINE_RUN, "p --format mongosh", &a, m, sizeof m));
    T_CHECK_STR (m, "option \"--format\" is not one of remodel online run's (see remodel online run --help)");
    rm_cli_args_destroy (&a);
}

static void
test_durations (void)
{
    rm_cli_args_t a;
    char m[300];
    uint64_t ms;
    T_CHECK (rm_cli_parse_duration ("50ms", 1, &ms) && ms == 50);
    T_CHECK (rm_cli_parse_duration ("2s", 1, &ms) && ms == 2000);
    T_CHECK (rm_cli_parse_duration ("10m", 1000, &ms) && ms == 600000);
    T_CHECK (rm_cli_parse_duration ("1h", 1, &ms) && ms == 3600000);
    T_CHECK (rm_cli_parse_duration ("7", 1, &ms) && ms == 7);
    T_CHECK (rm_cli_parse_duration ("7", 1000, &ms) && ms == 7000);
    T_CHECK (!rm_cli_parse_duration ("", 1, &ms));
    T_CHECK (!rm_cli_parse_duration ("5x", 1, &ms));
    T_CHECK (!rm_cli_parse_duration ("ms", 1, &ms));
    T_CHECK (!rm_cli_parse_duration ("-5s", 1, &ms));
    T_CHECK (!rm_cli_parse_duration ("5 s", 1, &ms));
    T_CHECK (!rm_cli_parse_duration ("5sec", 1, &ms));
    T_CHECK (!rm_cli_parse_duration ("18446744073709552h", 1, &ms));
    T_CHECK (!rm_cli_parse_duration ("99999999999999999999", 1, &ms));
    /* The options: --pause (and --pause-ms) bare in ms, --retry-for in s. */
    T_CHECK (parse (RM_CMD_ONLINE_RUN, "p --pause 50ms --retry-for 10m", &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_PAUSE].n == 50 && a.v[RM_OPT_RETRY_FOR].n == 600000);
    rm_cli_args_destroy (&a);
    T_CHECK (parse (RM_CMD_ONLINE_RUN, "p --pause-ms 20 --retry-for 60 --batch-time 2s", &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_PAUSE].n == 20 && a.v[RM_OPT_RETRY_FOR].n == 60000 &&
             a.v[RM_OPT_BATCH_TIME].n == 2000);
    rm_cli_args_destroy (&a);
    /* Past 2^63 milliseconds: refused, not wrapped. */
    T_CHECK (!parse (RM_CMD_ONLINE_RUN, "p --retry-for 9223372036854776", &a, m, sizeof m));
    T_CHECK_STR (m, "--retry-for: expected a duration like 50ms, 2s, 10m or 1h (a bare number: "
                    "seconds), got \"9223372036854776\"");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_ONLINE_RUN, "p --batch-time 0", &a, m, sizeof m));
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_ONLINE_RUN, "p --pause-ms soon", &a, m, sizeof m));
    T_CHECK_STR (m, "--pause-ms: expected a duration like 50ms, 2s, 10m or 1h (a bare number: "
                    "milliseconds), got \"soon\"");
    rm_cli_args_destroy (&a);
}

static void
test_sizes_and_counts (void)
{
    rm_cli_args_t a;
    char m[300];
    uint64_t v;
    T_CHECK (rm_cli_parse_size ("512M", &v) && v == 512ull << 20);
    T_CHECK (rm_cli_parse_size ("1G", &v) && v == 1ull << 30);
    T_CHECK (rm_cli_parse_size ("100K", &v) && v == 102400);
    T_CHECK (rm_cli_parse_size ("64mb", &v) && v == 64ull << 20);
    T_CHECK (rm_cli_parse_size ("4096", &v) && v == 4096);
    T_CHECK (!rm_cli_parse_size ("-5M", &v));
    T_CHECK (!rm_cli_parse_size ("5X", &v));
    T_CHECK (!rm_cli_parse_size ("lots", &v));
    T_CHECK (!rm_cli_parse_size ("16777216T", &v)); /* 2^64 */
    T_CHECK (rm_cli_parse_count ("18446744073709551615", &v) && v == UINT64_MAX);
    T_CHECK (!rm_cli_parse_count ("18446744073709551616", &v));
    T_CHECK (!rm_cli_parse_count ("", &v));
    T_CHECK (!rm_cli_parse_count ("+1", &v));
    T_CHECK (!rm_cli_parse_count ("1e3", &v));
    T_CHECK (!parse (RM_CMD_ANALYZE, "s --memory lots", &a, m, sizeof m));
    T_CHECK_STR (m, "--memory: expected a size of at least 1K, like 64M or 2G, got \"lots\"");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_RUN, "p --memory 1000", &a, m, sizeof m));
    rm_cli_args_destroy (&a);
    T_CHECK (parse (RM_CMD_RUN, "p --memory=2G", &a, m, sizeof m));
    T_CHECK (a.v[RM_OPT_MEMORY].n == 2ull << 30);
    rm_cli_args_destroy (&a);
    /* An online count holds in an int64_t. */
    T_CHECK (!parse (RM_CMD_ONLINE_RUN, "p --batch-size 9223372036854775808", &a, m, sizeof m));
    T_CHECK_STR (m, "--batch-size: expected a number of documents (1 or more), got \"9223372036854775808\"");
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_ONLINE_RUN, "p --batch-size 99999999999999999999", &a, m, sizeof m));
    rm_cli_args_destroy (&a);
    T_CHECK (!parse (RM_CMD_SHOW, "s --limit -1", &a, m, sizeof m));
    T_CHECK_STR (m, "--limit: expected a number of documents, got \"-1\"");
    rm_cli_args_destroy (&a);
}

static void
test_table (void)
{
    /* No command takes two rows of one name, or of one letter: the
     * parser would read the first and never the second. */
    for (size_t i = 0; i < rm_cli_n_options; i++)
        for (size_t j = i + 1; j < rm_cli_n_options; j++) {
            const rm_opt_t *x = &rm_cli_options[i], *y = &rm_cli_options[j];
            bool same = !strcmp (x->name, y->name) || (x->letter && x->letter == y->letter) ||
                        (x->alias && !strcmp (x->alias, y->name)) ||
                        (y->alias && !strcmp (y->alias, x->name));
            if (same && (x->cmds & y->cmds)) {
                fprintf (stderr, "  rows --%s and --%s: one command takes both\n", x->name, y->name);
                T_CHECK (0);
            }
            if (!strcmp (x->name, y->name))
                T_CHECK (x->id == y->id);
        }
    for (size_t i = 0; i < rm_cli_n_options; i++) {
        T_CHECK (rm_cli_options[i].cmds != 0);
        T_CHECK (rm_cli_options[i].kind != RM_VAL_ENUM || rm_cli_options[i].words);
        T_CHECK (rm_cli_options[i].kind != RM_VAL_DURATION || rm_cli_options[i].unit_ms);
        T_CHECK (!rm_cli_options[i].letter || rm_cli_options[i].kind == RM_VAL_NONE);
    }
    for (int c = 0; c < RM_CMD_N; c++) {
        rm_cmd_t back;
        T_CHECK (rm_cli_command_find (rm_cli_command_name ((rm_cmd_t) c), &back) && back == (rm_cmd_t) c);
    }
}

static void
test_exit_and_text (void)
{
    bson_error_t e = {0};
    char *buf = NULL;
    size_t n = 0, cols;
    FILE *f;
    rm_error_set (&e, RM_ERR_USAGE, "x");
    T_CHECK (rm_cli_exit_status (&e) == 2);
    rm_error_set (&e, RM_ERR_UNSUPPORTED, "x");
    T_CHECK (rm_cli_exit_status (&e) == 2);
    rm_error_set (&e, RM_ERR_INTERRUPTED, "x");
    T_CHECK (rm_cli_exit_status (&e) == 130);
    rm_error_set (&e, RM_ERR_DATA, "x");
    T_CHECK (rm_cli_exit_status (&e) == 1);
    e.domain = 1; /* a driver's own error */
    e.code = RM_ERR_USAGE;
    T_CHECK (rm_cli_exit_status (&e) == 1);
    f = open_memstream (&buf, &n);
    {
        const char *t = "db.a\nb\x1b[2J caf\xc3\xa9 \xc2\x9b \xff";
        cols = rm_cli_put_text (f, t, strlen (t));
    }
    fclose (f);
    T_CHECK_STR (buf, "db.a\\x0ab\\x1b[2J caf\xc3\xa9 \\xc2\\x9b \\xff");
    T_CHECK (cols == 4 + 4 + 1 + 4 + 4 + 3 + 1 + 1 + 8 + 1 + 4);
    free (buf);
    /* A line's own \r and \n kept, what it shows escaped. */
    buf = NULL;
    f = open_memstream (&buf, &n);
    rm_cli_line (f, "\r", "\n", "remodel: step 1 %s: %d read", "a.b\nc\r", 5);
    fclose (f);
    T_CHECK_STR (buf, "\rremodel: step 1 a.b\\x0ac\\x0d: 5 read\n");
    free (buf);
}

int
main (void)
{
    T_RUN (test_exact_names);
    T_RUN (test_every_option_suggested);
    T_RUN (test_values_and_forms);
    T_RUN (test_refused_for_command);
    T_RUN (test_durations);
    T_RUN (test_sizes_and_counts);
    T_RUN (test_table);
    T_RUN (test_exit_and_text);
    return t_done ();
}
