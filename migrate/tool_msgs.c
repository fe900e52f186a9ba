/* Messages to the user, on standard error, and what reaches standard output.
 * Names and values in a message may come from the input (a crafted dump can
 * hold any byte), so every message goes out through tool_put_text, which
 * shows control bytes and bytes that are not UTF-8 as \xNN: one message is
 * one line, and nothing from a dump can drive the terminal. */
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "remodel/utf8.h"
#include "tool.h"

/* The length of the UTF-8 character at s if it is valid and no C1 control
 * (U+0080..U+009F, which some terminals obey); else 0. */
static size_t
utf8_printable_len (const unsigned char *s, size_t n)
{
    uint32_t cp;
    size_t len = rm_utf8_decode (s, n, &cp);
    return len && cp > 0x9F ? len : 0;
}

size_t
tool_put_text (FILE *f, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *) text;
    size_t i = 0, columns = 0;

    while (i < n) {
        size_t run = i, len;
        /* Printable ASCII goes out in runs. */
        while (run < n && s[run] >= 0x20 && s[run] < 0x7F)
            run++;
        if (run > i)
            fwrite (s + i, 1, run - i, f);
        columns += run - i;
        i = run;
        if (i >= n)
            break;
        if (s[i] >= 0x80 && (len = utf8_printable_len (s + i, n - i)) > 0) {
            fwrite (s + i, 1, len, f);
            i += len;
            columns++; /* one character, one column (wide CJK aside) */
        } else {
            fprintf (f, "\\x%02x", s[i]);
            i++;
            columns += 4;
        }
    }
    return columns;
}

/* "remodel: " PREFIX, the formatted text escaped, a newline. */
static void
put_message (const char *prefix, const char *fmt, va_list ap)
{
    char small[1024], *text = small;
    va_list again;
    int n;

    va_copy (again, ap);
    n = vsnprintf (small, sizeof small, fmt, ap);
    if (n >= (int) sizeof small) {
        text = bson_malloc ((size_t) n + 1);
        vsnprintf (text, (size_t) n + 1, fmt, again);
    }
    va_end (again);
    fputs ("remodel: ", stderr);
    fputs (prefix, stderr);
    if (n > 0)
        tool_put_text (stderr, text, (size_t) n);
    fputc ('\n', stderr);
    if (text != small)
        bson_free (text);
}

void
tool_errorf (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    put_message ("error: ", fmt, ap);
    va_end (ap);
}

void
tool_error (const bson_error_t *err)
{
    tool_errorf ("%s", err->message);
}

int
tool_exit_status (const bson_error_t *err)
{
    if (err->domain == RM_ERROR_DOMAIN && err->code == RM_ERR_USAGE)
        return 2;
    if (err->domain == RM_ERROR_DOMAIN && err->code == RM_ERR_INTERRUPTED)
        return 130;
    return 1;
}

void
tool_note (bool quiet, const char *fmt, ...)
{
    va_list ap;
    if (quiet)
        return;
    va_start (ap, fmt);
    put_message ("", fmt, ap);
    va_end (ap);
}

void
tool_warn (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    put_message ("warning: ", fmt, ap);
    va_end (ap);
}

bool
tool_stdout_gone (void)
{
    struct stat st;
    struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT};
    return fstat (STDOUT_FILENO, &st) == 0 && S_ISFIFO (st.st_mode) && poll (&p, 1, 0) == 1 &&
           (p.revents & POLLERR);
}

int
tool_stdout_close (int status)
{
    int saved;

    /* fflush writes what is still buffered; an earlier failed write left
     * the stream's error flag, and errno from that write if nothing since
     * has changed it. */
    errno = 0;
    if (fflush (stdout) == 0 && !ferror (stdout))
        return status;
    saved = errno;
    /* errno of the failed write may be gone by now: a pipe whose reader
     * has closed it polls as an error. */
    if (saved != EPIPE && tool_stdout_gone ())
        saved = EPIPE;
    if (saved == EPIPE) /* the reader downstream has gone: end quietly, as cat does */
        return status ? status : TOOL_EXIT_PIPE;
    tool_errorf ("standard output: write failed: %s",
                 saved ? strerror (saved) : "the stream reported an error");
    return status ? status : 1;
}

void
tool_put_cell (FILE *f, const char *text, int width)
{
    size_t used = tool_put_text (f, text, strlen (text));
    for (; (int) used < width; used++)
        fputc (' ', f);
}
