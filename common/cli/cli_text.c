/* Messages to the user, on standard error. Names and values in a message
 * may come from the data (a crafted dump or a server can hold any byte in
 * a namespace or a value), so every message of every program goes out
 * through rm_cli_put_text: one message is one line, and nothing from the
 * data can drive the terminal or reorder what it shows. */
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"
#include "remodel/utf8.h"

/* Characters that reorder or break what is around them where a terminal
 * or a browser shows it: the bidirectional embeddings, overrides and
 * isolates (U+202A..U+202E, U+2066..U+2069: "Trojan Source", a name shown
 * reversed) and the line and paragraph separators (U+2028, U+2029: a line
 * break a byte check does not see). Shown as \uXXXX. */
static bool
reorders (uint32_t cp)
{
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
           cp == 0x2029;
}

size_t
rm_cli_put_text (FILE *f, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *) text;
    size_t i = 0, columns = 0;

    while (i < n) {
        size_t run = i, len;
        uint32_t cp;
        /* Printable ASCII goes out in runs. */
        while (run < n && s[run] >= 0x20 && s[run] < 0x7F)
            run++;
        if (run > i)
            fwrite (s + i, 1, run - i, f);
        columns += run - i;
        i = run;
        if (i >= n)
            break;
        /* A C1 control (U+0080..U+009F, which some terminals obey) is
         * shown byte by byte, as a byte that is not UTF-8 is. */
        if (s[i] >= 0x80 && (len = rm_utf8_decode (s + i, n - i, &cp)) > 0 && cp > 0x9F) {
            if (reorders (cp)) {
                fprintf (f, "\\u%04x", (unsigned) cp);
                columns += 6;
            } else {
                fwrite (s + i, 1, len, f);
                columns++; /* one character, one column (wide CJK aside) */
            }
            i += len;
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
rm_cli_vline (FILE *f, const char *lead, const char *end, const char *fmt, va_list ap)
{
    fputs (lead, f);
    put_formatted (f, fmt, ap);
    fputs (end, f);
}

void
rm_cli_line (FILE *f, const char *lead, const char *end, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    rm_cli_vline (f, lead, end, fmt, ap);
    va_end (ap);
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
