/* The one voice of remodel-online (online.h, "say"): every note, warning,
 * progress line and --log-format json line of the layers below the
 * commands' own closing words goes out here, as curl's infof and failf
 * and git's progress do. What is shown, and how, is decided in one place
 * (online_say_how) from --quiet, --log-format json and whether standard
 * error is a terminal, so that no caller picks a stream, tests --quiet or
 * asks isatty itself.
 *
 * Text from the data (a namespace, a plan's name, a server's message) is
 * escaped here by rm_cli_put_text, as every message of every program is:
 * one message stays one line and cannot drive the terminal. A line goes
 * out under the stream's lock, so that two workers' lines never mix. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "online.h"
#include "remodel/cli.h"

/* Where the lines go: standard output and error, unless a test gave
 * others (online_say_to). tty: -1 asks isatty of the error stream. */
static FILE *say_out, *say_err;
static int say_tty = -1;

/* Clears the line a progress meter left: back to its start, then erased. */
#define METER_LEAD "\r\033[K"

void
online_say_to (FILE *out, FILE *err, int tty)
{
    say_out = out;
    say_err = err;
    say_tty = tty;
}

static FILE *
out_stream (void)
{
    return say_out ? say_out : stdout;
}

static FILE *
err_stream (void)
{
    return say_err ? say_err : stderr;
}

online_say_how_t
online_say_how (const online_t *on)
{
    online_say_how_t h;
    const online_opts_t *o = on ? on->run->o : NULL;
    bool tty = say_tty >= 0 ? say_tty > 0 : isatty (fileno (err_stream ()));

    h.quiet = o && o->quiet;
    h.json = o && o->log_json;
    /* A meter only where a person watches, and where it would not break
     * the lines a program reads (JSON) or a silence asked for. */
    h.meter = tty && !h.quiet && !h.json;
    return h;
}

/* lead, "remodel: " and the formatted text escaped, end: one write under
 * the stream's lock. */
static void
put_line (FILE *f, const char *lead, const char *end, const char *fmt, va_list ap)
{
    /* stdio's locks nest: rm_cli_vline's writes stay inside this one. */
    flockfile (f);
    fputs (lead, f);
    fputs ("remodel: ", f);
    rm_cli_vline (f, "", end, fmt, ap);
    funlockfile (f);
}

static void
vsay (const online_t *on, online_say_kind_t kind, const char *fmt, va_list ap)
{
    online_say_how_t h = online_say_how (on);
    const char *lead = "";

    switch (kind) {
    case ONLINE_SAY_WARN:
        break;
    case ONLINE_SAY_ASIDE:
        /* A meter may be open on the terminal: this line goes under it. */
        if (h.meter)
            lead = "\n";
        /* fall through */
    case ONLINE_SAY_NOTE:
        if (h.quiet)
            return;
        break;
    }
    put_line (err_stream (), lead, "\n", fmt, ap);
}

void
online_say (const online_t *on, online_say_kind_t kind, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsay (on, kind, fmt, ap);
    va_end (ap);
}

void
online_say_note (const online_t *on, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsay (on, ONLINE_SAY_NOTE, fmt, ap);
    va_end (ap);
}

void
online_say_warn (const online_t *on, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsay (on, ONLINE_SAY_WARN, fmt, ap);
    va_end (ap);
}

void
online_say_aside (const online_t *on, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsay (on, ONLINE_SAY_ASIDE, fmt, ap);
    va_end (ap);
}

bool
online_say_progress (const online_t *on, const char *fmt, ...)
{
    va_list ap;
    if (!online_say_how (on).meter)
        return false;
    va_start (ap, fmt);
    put_line (err_stream (), METER_LEAD, "", fmt, ap);
    va_end (ap);
    return true;
}

void
online_say_closing (const online_t *on, bool drawn, const char *fmt, ...)
{
    va_list ap;
    if (online_say_how (on).quiet)
        return;
    va_start (ap, fmt);
    put_line (err_stream (), drawn ? METER_LEAD : "", "\n", fmt, ap);
    va_end (ap);
}

void
online_say_meter_end (const online_t *on, bool drawn, bool keep)
{
    FILE *f = err_stream ();
    (void) on;
    if (drawn)
        fputs (keep ? "\n" : METER_LEAD, f);
}

/* The one line an error ends the command with: main says it, once. */
void
online_say_error (const online_t *on, const bson_error_t *err)
{
    online_say_warn (on, "error: %s", err->message);
}

void
online_say_usage (const char *text, bool asked)
{
    /* Asked for (--help): the command's output; else a refusal's. */
    fputs (text, asked ? out_stream () : err_stream ());
}

/* The trace's clock starts where main starts it, or at its first line. */
static int64_t say_t0;

void
online_say_start (void)
{
    __atomic_store_n (&say_t0, bson_get_monotonic_time (), __ATOMIC_SEQ_CST);
}

void
online_say_trace (int64_t took_usec, const char *what, const char *how)
{
    FILE *f = err_stream ();
    int64_t zero = 0, now;

    (void) __atomic_compare_exchange_n (&say_t0, &zero, bson_get_monotonic_time (), false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    /* The clock read under the stream's lock: a trace read top to bottom
     * is in time order, whichever worker's reply each line is. */
    flockfile (f);
    now = bson_get_monotonic_time ();
    fprintf (f, "trace: at %9.1f ms took %8.1f ms %s%s\n",
             (double) (now - __atomic_load_n (&say_t0, __ATOMIC_SEQ_CST)) / 1000.0,
             (double) took_usec / 1000.0, what, how);
    funlockfile (f);
}

void
online_say_json (const online_t *on, const rm_buf_t *line)
{
    FILE *f = err_stream ();
    if (!online_say_how (on).json)
        return;
    /* One call: lines of two writers never interleave. */
    fwrite (line->data, 1, line->len, f);
}

void
online_say_event (const online_t *on, online_say_kind_t kind, const rm_buf_t *json,
                  const char *fmt, ...)
{
    va_list ap;
    if (online_say_how (on).json) {
        online_say_json (on, json);
        return;
    }
    va_start (ap, fmt);
    vsay (on, kind, fmt, ap);
    va_end (ap);
}

void
online_say_out (const online_t *on, const char *fmt, ...)
{
    va_list ap;
    (void) on;
    va_start (ap, fmt);
    vfprintf (out_stream (), fmt, ap);
    va_end (ap);
}

FILE *
online_say_out_stream (const online_t *on)
{
    (void) on;
    return out_stream ();
}

bool
online_say_driver_shown (mongoc_log_level_t level)
{
    /* Only its errors: a server without endSessions (mongo-java-server)
     * draws warnings that are noise, unless REMODEL_ONLINE_DEBUG asks. */
    return level <= MONGOC_LOG_LEVEL_ERROR || getenv ("REMODEL_ONLINE_DEBUG");
}

void
online_say_driver (mongoc_log_level_t level, const char *domain, const char *message)
{
    if (online_say_driver_shown (level))
        mongoc_log_default_handler (level, domain, message, NULL);
}
