/* Messages to the user, on standard error, and what reaches standard output.
 * Names and values in a message may come from the input (a crafted dump can
 * hold any byte), so every message goes out through the option layer's
 * rm_cli_vmessage, which escapes them (rm_cli_put_text) as for remodel
 * online's: one message is one line, and nothing from a dump can drive the
 * terminal. */
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

void
tool_errorf (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    rm_cli_vmessage ("error: ", fmt, ap);
    va_end (ap);
}

void
tool_error (const bson_error_t *err)
{
    tool_errorf ("%s", err->message);
}

void
tool_note (bool quiet, const char *fmt, ...)
{
    va_list ap;
    if (quiet)
        return;
    va_start (ap, fmt);
    rm_cli_vmessage ("", fmt, ap);
    va_end (ap);
}

void
tool_warn (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    rm_cli_vmessage ("warning: ", fmt, ap);
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
        return status ? status : RM_EXIT_PIPE;
    tool_errorf ("standard output: write failed: %s",
                 saved ? strerror (saved) : "the stream reported an error");
    return status ? status : 1;
}

void
tool_put_cell (FILE *f, const char *text, int width)
{
    size_t used = rm_cli_put_text (f, text, strlen (text));
    for (; (int) used < width; used++)
        fputc (' ', f);
}
