/* The characters that reorder or break text where it is shown (issue 50
 * item 3): the bidirectional embeddings, overrides and isolates
 * (U+202A..U+202E, U+2066..U+2069: "Trojan Source", a name shown
 * reversed) and the line and paragraph separators (U+2028, U+2029) are
 * escaped as \uXXXX by every escaper, the terminal's (rm_cli_put_text,
 * through which status and every message go) and the report page's (HTML,
 * dot, Mermaid); the characters next to them in Unicode pass as they are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"
#include "report_int.h"
#include "test.h"

/* Each reordering character, as UTF-8, and how it is shown. */
static const struct {
    const char *utf8, *shown;
} reorder[] = {
    {"\xe2\x80\xaa", "\\u202a"}, {"\xe2\x80\xab", "\\u202b"}, {"\xe2\x80\xac", "\\u202c"},
    {"\xe2\x80\xad", "\\u202d"}, {"\xe2\x80\xae", "\\u202e"}, {"\xe2\x81\xa6", "\\u2066"},
    {"\xe2\x81\xa7", "\\u2067"}, {"\xe2\x81\xa8", "\\u2068"}, {"\xe2\x81\xa9", "\\u2069"},
    {"\xe2\x80\xa8", "\\u2028"}, {"\xe2\x80\xa9", "\\u2029"},
};

/* rm_cli_put_text's output for t, and the columns it says it took. */
static char *
put (const char *t, size_t *cols)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream (&buf, &n);
    *cols = rm_cli_put_text (f, t, strlen (t));
    fclose (f);
    return buf;
}

static void
test_terminal (void)
{
    for (size_t i = 0; i < sizeof reorder / sizeof *reorder; i++) {
        char in[64], want[64];
        size_t cols;
        char *got;
        snprintf (in, sizeof in, "db.a%sb", reorder[i].utf8);
        snprintf (want, sizeof want, "db.a%sb", reorder[i].shown);
        got = put (in, &cols);
        T_CHECK_STR (got, want);
        T_CHECK (cols == 4 + 6 + 1);
        free (got);
    }
    {
        /* A collection's name with ESC sequences (clear the screen, set
         * the window's title), a newline and an override: one line, no
         * control byte, the override shown. */
        size_t cols;
        char *got = put ("p\x1b[2J\x1b]0;pwn\x07\n\xe2\x80\xae" "evil", &cols);
        T_CHECK_STR (got, "p\\x1b[2J\\x1b]0;pwn\\x07\\x0a\\u202eevil");
        free (got);
    }
    {
        /* Their neighbours are ordinary characters: U+2029's and U+202E's
         * (U+202F, a narrow no-break space), U+2065's (unassigned) and
         * U+206A's (a deprecated format character, not a reordering one). */
        size_t cols;
        char *got = put ("\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa", &cols);
        T_CHECK_STR (got, "\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa");
        T_CHECK (cols == 4);
        free (got);
    }
    {
        /* A line of a table (rm_cli_line): its own newline kept. */
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream (&buf, &n);
        rm_cli_line (f, "", "\n", "lease: held by %s", "h\xe2\x81\xa7x\xe2\x80\xa8y");
        fclose (f);
        T_CHECK_STR (buf, "lease: held by h\\u2067x\\u2028y\n");
        free (buf);
    }
}

static void
test_report (void)
{
    rm_buf_t b;
    rm_buf_init (&b);
    for (size_t i = 0; i < sizeof reorder / sizeof *reorder; i++) {
        char in[64], want[64];
        snprintf (in, sizeof in, "a%s<b", reorder[i].utf8);
        snprintf (want, sizeof want, "a%s&lt;b", reorder[i].shown);
        rm_rp_html (&b, in);
        rm_buf_append (&b, "", 1);
        T_CHECK_STR ((const char *) b.data, want);
        rm_buf_reset (&b);
        snprintf (in, sizeof in, "a%sb", reorder[i].utf8);
        snprintf (want, sizeof want, "a%sb", reorder[i].shown);
        rm_rp_dot (&b, in);
        rm_buf_append (&b, "", 1);
        T_CHECK_STR ((const char *) b.data, want);
        rm_buf_reset (&b);
        rm_rp_mermaid (&b, in, false);
        rm_buf_append (&b, "", 1);
        T_CHECK_STR ((const char *) b.data, want);
        rm_buf_reset (&b);
    }
    /* An ordinary character beside them passes. */
    rm_rp_html (&b, "caf\xc3\xa9\xe2\x80\xaf");
    rm_buf_append (&b, "", 1);
    T_CHECK_STR ((const char *) b.data, "caf\xc3\xa9\xe2\x80\xaf");
    rm_buf_destroy (&b);
}

int
main (void)
{
    T_RUN (test_terminal);
    T_RUN (test_report);
    return t_done ();
}
