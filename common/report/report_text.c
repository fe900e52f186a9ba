/* Text for the pictures: the analysis report's fields read by path, and
 * names made safe for HTML, Graphviz and Mermaid. A dump's names may hold
 * any byte: none of them may end a tag, a label or a string early. */
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include "remodel/utf8.h"
#include "report_int.h"

static bool
find (const bson_t *d, const char *path, bson_iter_t *f)
{
    bson_iter_t it;
    return bson_iter_init (&it, d) && bson_iter_find_descendant (&it, path, f);
}

int64_t
rm_rp_int (const bson_t *d, const char *path)
{
    bson_iter_t f;
    return find (d, path, &f) ? bson_iter_as_int64 (&f) : 0;
}

double
rm_rp_double (const bson_t *d, const char *path)
{
    bson_iter_t f;
    return find (d, path, &f) ? bson_iter_as_double (&f) : 0;
}

const char *
rm_rp_str (const bson_t *d, const char *path)
{
    bson_iter_t f;
    return find (d, path, &f) && BSON_ITER_HOLDS_UTF8 (&f) ? bson_iter_utf8 (&f, NULL) : "";
}

bool
rm_rp_bool (const bson_t *d, const char *path)
{
    bson_iter_t f;
    return find (d, path, &f) && bson_iter_as_bool (&f);
}

bool
rm_rp_docs (const bson_t *d, const char *key, bson_iter_t *arr)
{
    bson_iter_t it;
    return d && bson_iter_init_find (&it, d, key) &&
           (BSON_ITER_HOLDS_ARRAY (&it) || BSON_ITER_HOLDS_DOCUMENT (&it)) && bson_iter_recurse (&it, arr);
}

bool
rm_rp_next (bson_iter_t *arr, bson_t *out)
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

void
rm_rp_printf (rm_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start (ap, fmt);
    s = bson_strdupv_printf (fmt, ap);
    va_end (ap);
    rm_rp_puts (b, s);
    bson_free (s);
}

void
rm_rp_puts (rm_buf_t *b, const char *s)
{
    rm_buf_append (b, s, strlen (s));
}

/* Characters that reorder what is around them where a browser, Graphviz
 * or Mermaid shows it: the bidirectional embeddings, overrides and
 * isolates (U+202A..U+202E, U+2066..U+2069: "Trojan Source", a name shown
 * reversed), and the line and paragraph separators (U+2028, U+2029). */
static bool
reorders (uint32_t cp)
{
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
           cp == 0x2029;
}

/* Calls put for each valid character of s (len bytes) and shows the rest
 * as \xNN, and those that reorder the text as \uXXXX, as rm_cli_put_text
 * does. */
static void
walk (rm_buf_t *b, const char *s, void (*put) (rm_buf_t *, const char *, size_t, void *), void *ctx)
{
    const uint8_t *p = (const uint8_t *) s;
    size_t n = strlen (s), i = 0;
    while (i < n) {
        uint32_t cp = p[i];
        size_t len = p[i] < 0x80 ? 1 : rm_utf8_decode (p + i, n - i, &cp);
        if (len == 0 || p[i] < 0x20 || p[i] == 0x7f) {
            rm_rp_printf (b, "\\x%02X", p[i]);
            i++;
            continue;
        }
        if (reorders (cp))
            rm_rp_printf (b, "\\u%04x", (unsigned) cp);
        else
            put (b, s + i, len, ctx);
        i += len;
    }
}

static void
put_html (rm_buf_t *b, const char *c, size_t len, void *ctx)
{
    switch (*c) {
    case '&': rm_rp_puts (b, "&amp;"); break;
    case '<': rm_rp_puts (b, "&lt;"); break;
    case '>': rm_rp_puts (b, "&gt;"); break;
    case '"': rm_rp_puts (b, "&quot;"); break;
    case '\'': rm_rp_puts (b, "&#39;"); break;
    /* Graphviz reads a backslash in a label as an escape (\N, \G). */
    case '\\': rm_rp_puts (b, "&#92;"); break;
    default: rm_buf_append (b, c, len);
    }
}

void
rm_rp_html (rm_buf_t *b, const char *s)
{
    walk (b, s, put_html, NULL);
}

static void
put_dot (rm_buf_t *b, const char *c, size_t len, void *ctx)
{
    if (*c == '"' || *c == '\\')
        rm_rp_puts (b, "\\");
    rm_buf_append (b, c, len);
}

void
rm_rp_dot (rm_buf_t *b, const char *s)
{
    walk (b, s, put_dot, NULL);
}

static void
put_mermaid (rm_buf_t *b, const char *c, size_t len, void *ctx)
{
    bool ident = *(bool *) ctx;
    if (ident && !(len == 1 && (isalnum ((unsigned char) *c) || *c == '_' || *c == '-')))
        rm_rp_puts (b, "_");
    else if (*c == '"' || *c == '\\')
        rm_rp_puts (b, "'");
    else if (!ident && strchr ("{}[]<>#;", *c) && len == 1)
        rm_rp_puts (b, "_");
    else
        rm_buf_append (b, c, len);
}

void
rm_rp_mermaid (rm_buf_t *b, const char *s, bool ident)
{
    walk (b, s, put_mermaid, &ident);
}

void
rm_rp_bytes (rm_buf_t *b, double n)
{
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (n >= 1024 && u < 4) {
        n /= 1024;
        u++;
    }
    rm_rp_printf (b, u == 0 ? "%.0f %s" : n < 10 ? "%.1f %s" : "%.0f %s", n, unit[u]);
}

void
rm_rp_count (rm_buf_t *b, int64_t n)
{
    char digits[32];
    int len = snprintf (digits, sizeof digits, "%lld", (long long) (n < 0 ? -n : n));
    if (n < 0)
        rm_rp_puts (b, "-");
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            rm_rp_puts (b, ",");
        rm_buf_append (b, digits + i, 1);
    }
}

void
rm_rp_types (rm_buf_t *b, const bson_t *field, bool html)
{
    bson_iter_t it, types;
    const char *name[4];
    int64_t count[4], total = 0;
    int n = 0, more = 0;

    if (!bson_iter_init_find (&it, field, "types") || !bson_iter_recurse (&it, &types))
        return;
    /* The four most frequent, in order; the rest counted. */
    while (bson_iter_next (&types)) {
        int64_t c = bson_iter_as_int64 (&types);
        int k;
        total += c;
        if (n == 4 && c <= count[3]) {
            more++;
            continue;
        }
        if (n == 4)
            more++;
        k = n < 4 ? n++ : 3;
        while (k > 0 && count[k - 1] < c) {
            name[k] = name[k - 1];
            count[k] = count[k - 1];
            k--;
        }
        name[k] = bson_iter_key (&types);
        count[k] = c;
    }
    for (int i = 0; i < n; i++) {
        if (i)
            rm_rp_puts (b, " · ");
        if (html)
            rm_rp_html (b, name[i]);
        else
            rm_rp_mermaid (b, name[i], false);
        /* A few of many are "<1%", never "0%": they are there. */
        if (n > 1)
            rm_rp_printf (b, count[i] * 100 < total ? (html ? " &lt;1%%" : " <1%%")
                             : count[i] * 100 > total * 99 ? (html ? " &gt;99%%" : " >99%%") : " %.0f%%",
                          100.0 * (double) count[i] / (double) total);
    }
    if (more)
        rm_rp_printf (b, " · %d more", more);
}
