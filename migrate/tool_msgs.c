/* Messages to the user, on standard error. */
#include <stdarg.h>
#include <stdio.h>

#include "tool.h"

void
tool_error (const bson_error_t *err)
{
    fprintf (stderr, "remodel: error: %s\n", err->message);
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
tool_errorf (const char *fmt, ...)
{
    va_list ap;
    fputs ("remodel: error: ", stderr);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
}

void
tool_note (bool quiet, const char *fmt, ...)
{
    va_list ap;
    if (quiet)
        return;
    fputs ("remodel: ", stderr);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
}
