/* The online program's one voice (shell-ext/conn/online_say.c): what each
 * kind of line prints, byte for byte, with and without --quiet and
 * --log-format json, on a terminal and not, and that text from the data
 * is escaped; the lines caught in memory streams the reporter is given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "online.h"
#include "online_batch.h"
#include "test.h"

static char *out_text, *err_text;
static size_t out_len, err_len;
static FILE *out_f, *err_f;
static online_opts_t opts;
static online_t on;
static online_run_t on_run;

/* A fresh capture: options as given, standard error a terminal or not. */
static void
begin (bool quiet, bool json, int tty)
{
    memset (&opts, 0, sizeof opts);
    online_init (&on, &on_run);
    opts.quiet = quiet;
    opts.log_json = json;
    on.own_run->o = &opts;
    snprintf (on.own_run->names.name, sizeof on.run->names.name, "p.json");
    out_f = open_memstream (&out_text, &out_len);
    err_f = open_memstream (&err_text, &err_len);
    online_say_to (out_f, err_f, tty);
}

/* What reached each stream, compared, and the capture ended. */
static void
end (const char *want_out, const char *want_err)
{
    online_say_to (NULL, NULL, -1);
    fclose (out_f);
    fclose (err_f);
    T_CHECK_STR (out_text, want_out);
    T_CHECK_STR (err_text, want_err);
    free (out_text);
    free (err_text);
}

static void
test_how (void)
{
    online_say_how_t h;
    begin (false, false, 1);
    h = online_say_how (&on);
    T_CHECK (!h.quiet && !h.json && h.meter);
    end ("", "");
    /* The meter only on a terminal, and never with --quiet or JSON lines. */
    begin (false, false, 0);
    T_CHECK (!online_say_how (&on).meter);
    end ("", "");
    begin (true, false, 1);
    h = online_say_how (&on);
    T_CHECK (h.quiet && !h.meter);
    end ("", "");
    begin (false, true, 1);
    h = online_say_how (&on);
    T_CHECK (h.json && !h.meter);
    end ("", "");
    /* No options (the driver's log): said, plainly. */
    begin (false, false, 0);
    h = online_say_how (NULL);
    T_CHECK (!h.quiet && !h.json && !h.meter);
    end ("", "");
}

static void
test_note_and_warn (void)
{
    begin (false, false, 0);
    online_say_note (&on, "sync: %lld events", 3LL);
    online_say_warn (&on, "dry run: fails: %s", "x");
    end ("", "remodel: sync: 3 events\nremodel: dry run: fails: x\n");
    /* --quiet: the notes go, the warnings stay. */
    begin (true, false, 1);
    online_say_note (&on, "renamed %s to %s", "a", "b");
    online_say_warn (&on, "finalize: %d document(s)", 2);
    online_say (&on, ONLINE_SAY_NOTE, "sync: step %d", 1);
    online_say (&on, ONLINE_SAY_WARN, "verify: step %d", 1);
    end ("", "remodel: finalize: 2 document(s)\nremodel: verify: step 1\n");
    /* JSON lines: a note is still text. */
    begin (false, true, 1);
    online_say_note (&on, "plan %s resumed", "p");
    end ("", "remodel: plan p resumed\n");
}

static void
test_aside (void)
{
    /* Under a meter that may be open: a line of its own on a terminal. */
    begin (false, false, 1);
    online_say_aside (&on, "throttled: %s", "lag");
    end ("", "\nremodel: throttled: lag\n");
    begin (false, false, 0);
    online_say_aside (&on, "throttled: %s", "lag");
    end ("", "remodel: throttled: lag\n");
    begin (false, true, 1);
    online_say_aside (&on, "x; retrying in %d ms", 250);
    end ("", "remodel: x; retrying in 250 ms\n");
    begin (true, false, 1);
    online_say_aside (&on, "plan %s paused", "p");
    end ("", "");
}

static void
test_meter (void)
{
    bool drawn;
    begin (false, false, 1);
    drawn = online_say_progress (&on, "step %d (%s) %s: %d read", 1, "embed", "db.a", 10);
    online_say_closing (&on, drawn, "step %d (%s) %s: %d read", 1, "embed", "db.a", 20);
    end ("", "\r\033[Kremodel: step 1 (embed) db.a: 10 read"
             "\r\033[Kremodel: step 1 (embed) db.a: 20 read\n");
    T_CHECK (drawn);
    /* No terminal, --quiet, JSON: nothing drawn; the closing line plain
     * (not with --quiet). */
    begin (false, false, 0);
    drawn = online_say_progress (&on, "step %d", 1);
    online_say_closing (&on, drawn, "step %d: done", 1);
    end ("", "remodel: step 1: done\n");
    T_CHECK (!drawn);
    begin (true, false, 1);
    drawn = online_say_progress (&on, "step %d", 1);
    online_say_closing (&on, drawn, "step %d: done", 1);
    end ("", "");
    T_CHECK (!drawn);
    begin (false, true, 1);
    T_CHECK (!online_say_progress (&on, "step %d", 1));
    end ("", "");
    /* A drawn meter ended: a new line, or erased after an error. */
    begin (false, false, 1);
    online_say_meter_end (&on, true, true);
    online_say_meter_end (&on, true, false);
    online_say_meter_end (&on, false, true);
    end ("", "\n\r\033[K");
}

static void
test_progress_of_a_pass (void)
{
    /* batch/online_progress.c asks the reporter: no meter, no progress
     * (and no count asked of a server). */
    begin (false, false, 0);
    T_CHECK (online_progress_new (&on, "db", "a", 0) == NULL);
    online_progress_draw (NULL, 1, "embed", "db.a", 5, 5);
    T_CHECK (!online_progress_end (NULL));
    end ("", "");
    begin (true, false, 1);
    T_CHECK (online_progress_new (&on, "db", "a", 0) == NULL);
    end ("", "");
    begin (false, true, 1);
    T_CHECK (online_progress_new (&on, "db", "a", 0) == NULL);
    end ("", "");
}

static void
test_escaped (void)
{
    /* A namespace from the data: a line break, an escape sequence and a
     * right-to-left override stay one inert line. */
    begin (false, false, 0);
    online_say_note (&on, "renamed %s to %s", "db.a\n\033[2Jb", "db.\xe2\x80\xae" "c");
    end ("", "remodel: renamed db.a\\x0a\\x1b[2Jb to db.\\u202ec\n");
}

static void
test_json_lines (void)
{
    rm_step_t s;
    rm_buf_t line;
    memset (&s, 0, sizeof s);
    s.index = 2;
    s.op = "embed";
    /* A batch's line: JSON-escaped names, and said with --quiet too. */
    begin (true, true, 1);
    snprintf (on.own_run->names.name, sizeof on.run->names.name, "a\"b.json");
    online_json_batch (&on, &(online_batch_line_t){&s, 0, "db.c", false, 10, 5, 10, 9, 2000});
    end ("", "{\"plan\":\"a\\\"b.json\",\"step\":2,\"op\":\"embed\",\"pass\":1,\"ns\":\"db.c\","
             "\"batch\":10,\"ms\":5,\"read\":10,\"written\":9,\"rate\":2000}\n");
    begin (false, true, 0);
    rm_buf_init (&line);
    rm_buf_append (&line, "{\"x\":1}\n", 8);
    online_say_json (&on, &line);
    rm_buf_destroy (&line);
    end ("", "{\"x\":1}\n");
}

static void
test_event (void)
{
    rm_buf_t line;
    rm_buf_init (&line);
    rm_buf_append (&line, "{\"throttle\":\"on\"}\n", 18);
    /* JSON lines asked for: the line, not the text, --quiet or not. */
    begin (true, true, 1);
    online_say_event (&on, ONLINE_SAY_ASIDE, &line, "throttled: %s", "lag");
    online_say_event (&on, ONLINE_SAY_NOTE, &line, "lifted after %d s", 2);
    end ("", "{\"throttle\":\"on\"}\n{\"throttle\":\"on\"}\n");
    /* Text: as the kind says; the JSON line alone says nothing. */
    begin (false, false, 1);
    online_say_event (&on, ONLINE_SAY_ASIDE, &line, "throttled: %s", "lag");
    online_say_event (&on, ONLINE_SAY_NOTE, &line, "lifted after %d s", 2);
    online_say_json (&on, &line);
    end ("", "\nremodel: throttled: lag\nremodel: lifted after 2 s\n");
    begin (true, false, 0);
    online_say_event (&on, ONLINE_SAY_NOTE, &line, "lifted after %d s", 2);
    online_say_event (&on, ONLINE_SAY_WARN, &line, "x");
    online_say_json (&on, &line);
    end ("", "remodel: x\n");
    rm_buf_destroy (&line);
}

static void
test_out (void)
{
    /* A command's report: standard output, as formatted, --quiet or not. */
    begin (true, false, 1);
    online_say_out (&on, "lag: %s: %d events\n", "5 s", 3);
    T_CHECK (online_say_out_stream (&on) == out_f);
    end ("lag: 5 s: 3 events\n", "");
}

static void
test_error_and_usage (void)
{
    bson_error_t err;
    /* The command's last line, escaped, with --quiet too. */
    begin (true, false, 1);
    bson_set_error (&err, 1, 1, "plan %s: no such file", "a\nb");
    online_say_error (&on, &err);
    online_say_error (NULL, &err);
    end ("", "remodel: error: plan a\\x0ab: no such file\n"
             "remodel: error: plan a\\x0ab: no such file\n");
    /* Usage: --help's output, or a refusal's on standard error. */
    begin (false, false, 0);
    online_say_usage ("usage: x\n", true);
    online_say_usage ("usage: y\n", false);
    end ("usage: x\n", "usage: y\n");
}

static void
test_trace (void)
{
    double at[3], took[3];
    char what[3][64];
    const char *line;
    /* Each reply: since the start, then the call's own time; in order. */
    begin (true, true, 0);
    online_say_start ();
    online_say_trace (1500, "admin: { \"ping\" : 1 }", "");
    online_say_trace (300, "db: { \"find\" : \"a\" }", " (failed: x)");
    usleep (2000);
    online_say_trace (123456789, "db: {}", "");
    online_say_to (NULL, NULL, -1);
    fclose (out_f);
    fclose (err_f);
    T_CHECK_STR (out_text, "");
    line = err_text;
    for (int i = 0; i < 3; i++) {
        T_CHECK (sscanf (line, "trace: at %lf ms took %lf ms %63[^\n]", &at[i], &took[i],
                         what[i]) == 3);
        T_CHECK (!strncmp (line, "trace: at ", 10));
        line = strchr (line, '\n') + 1;
    }
    T_CHECK (*line == '\0');
    T_CHECK (at[0] >= 0 && at[0] <= at[1] && at[1] + 2.0 <= at[2]);
    T_CHECK (took[0] == 1.5 && took[1] == 0.3 && took[2] == 123456.8);
    T_CHECK_STR (what[0], "admin: { \"ping\" : 1 }");
    T_CHECK_STR (what[1], "db: { \"find\" : \"a\" } (failed: x)");
    T_CHECK_STR (what[2], "db: {}");
    /* The figures in columns, as before the clock was added. */
    T_CHECK (strstr (err_text, " took      1.5 ms admin: ") != NULL);
    free (out_text);
    free (err_text);
}

static void
test_driver (void)
{
    unsetenv ("REMODEL_ONLINE_DEBUG");
    T_CHECK (online_say_driver_shown (MONGOC_LOG_LEVEL_ERROR));
    T_CHECK (!online_say_driver_shown (MONGOC_LOG_LEVEL_WARNING));
    T_CHECK (!online_say_driver_shown (MONGOC_LOG_LEVEL_DEBUG));
    setenv ("REMODEL_ONLINE_DEBUG", "1", 1);
    T_CHECK (online_say_driver_shown (MONGOC_LOG_LEVEL_WARNING));
    unsetenv ("REMODEL_ONLINE_DEBUG");
}

int
main (void)
{
    T_RUN (test_how);
    T_RUN (test_note_and_warn);
    T_RUN (test_aside);
    T_RUN (test_meter);
    T_RUN (test_progress_of_a_pass);
    T_RUN (test_escaped);
    T_RUN (test_json_lines);
    T_RUN (test_event);
    T_RUN (test_out);
    T_RUN (test_error_and_usage);
    T_RUN (test_trace);
    T_RUN (test_driver);
    return t_done ();
}
