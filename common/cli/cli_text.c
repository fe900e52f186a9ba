/* Messages to the user, on standard error. Names and values in a message
 * may come from the data (a crafted dump or a server can hold any byte in
 * a namespace or a value), so every message of every program goes out
 * through rm_cli_put_text: one message is one line, and nothing from the
 * data can drive the terminal. */
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"
#include "remodel/utf8.h"

/* The length of the UTF-8 character at s if it is valid and no C1 control
 * (U+0080..U+009F, which some terminals obey); else 0. */
static size_t
printable_len (const unsigned char *s, size_t n)
{
    uint32_t cp;
    size_t len = rm_utf8_decode (s, n, &cp);
    return len && cp > 0x9F ? len : 0;
}

size_t
rm_cli_put_text (FILE *f, const char *text, size_t n)
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
        if (s[i] >= 0x80 && (len = printable_len (s + i, n - i)) > 0) {
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

/* The formatted text, escaped, on f. */
static void
put_formatted (FILE *f, const char *fmt, va_list ap)
{
    char small[1024], *text = small;
    va_list again;
    int n;

    va_copy (again, ap);
    n = vsnprintf (small, sizeof small, fmt, ap);
    if (n >= (int) sizeof small && (text = malloc ((size_t) n + 1)) != NULL)
        vsnprintf (text, (size_t) n + 1, fmt, again);
    else if (n >= (int) sizeof small)
        text = small, n = (int) sizeof small - 1; /* cut rather than lost */
    va_end (again);
    if (n > 0)
        rm_cli_put_text (f, text, (size_t) n);
    if (text != small)
        free (text);
}

void
rm_cli_vmessage (const char *prefix, const char *fmt, va_list ap)
{
    fputs ("remodel: ", stderr);
    fputs (prefix, stderr);
    put_formatted (stderr, fmt, ap);
    fputc ('\n', stderr);
}

void
rm_cli_line (FILE *f, const char *lead, const char *end, const char *fmt, ...)
{
    va_list ap;
    fputs (lead, f);
    va_start (ap, fmt);
    put_formatted (f, fmt, ap);
    va_end (ap);
    fputs (end, f);
}

static void
message (const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    rm_cli_vmessage (prefix, fmt, ap);
    va_end (ap);
}

void
rm_cli_error (const bson_error_t *err)
{
    message ("error: ", "%s", err->message);
}
