/* The strings of top-level fields that a table's export wrote as text
 * (analyze_int.h, rm_analyze_count_string): dates ("2007-01-01T00:00:00Z",
 * "1996-03-13"), integers and decimals ("42", "12.50") and yes/no flags
 * ("Y"/"N"), counted per field in the first pass, as each string is met:
 * which fields are worth it is known only at its end (analyze_import.c
 * keeps the counts of those), and reading the dump again to count them
 * cost more than counting every field's. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "analyze_int.h"

/* isdigit without its table's lookup (a call per byte: every string of
 * every document comes here); the same answer in every locale. */
#define DIGIT(c) ((unsigned) ((unsigned char) (c) - '0') < 10u)

/* Whether the string is a date as exports write them: YYYY-MM-DD, then
 * optionally a time (T or a space, hh:mm, :ss, .fraction) and a zone. */
static bool
is_date (const char *s, uint32_t n)
{
    static const char shape[] = "dddd-dd-dd";
    uint32_t i;
    if (n < 10)
        return false;
    for (i = 0; i < 10; i++)
        if (shape[i] == 'd' ? !DIGIT (s[i]) : s[i] != shape[i])
            return false;
    if (n == 10)
        return true;
    if ((s[10] != 'T' && s[10] != ' ') || n < 16 || !DIGIT (s[11]) ||
        !DIGIT (s[12]) || s[13] != ':' || !DIGIT (s[14]) ||
        !DIGIT (s[15]))
        return false;
    i = 16;
    if (i < n && s[i] == ':') {
        if (i + 3 > n || !DIGIT (s[i + 1]) || !DIGIT (s[i + 2]))
            return false;
        i += 3;
        if (i < n && s[i] == '.')
            for (i++; i < n && DIGIT (s[i]); i++)
                ;
    }
    if (i == n)
        return true;
    if (s[i] == 'Z')
        return i + 1 == n;
    if (s[i] != '+' && s[i] != '-')
        return false;
    for (i++; i < n; i++)
        if (!DIGIT (s[i]) && s[i] != ':')
            return false;
    return true;
}

/* An integer as text, without leading zeros (a code like "007" or a zip
 * code stays a string), that fits a long. */
static bool
is_int (const char *s, uint32_t n)
{
    uint32_t i = s[0] == '-';
    if (n == i || n - i > 18 || (s[i] == '0' && n - i > 1))
        return false;
    for (; i < n; i++)
        if (!DIGIT (s[i]))
            return false;
    return true;
}

static bool
is_decimal (const char *s, uint32_t n)
{
    const char *dot = memchr (s, '.', n);
    uint32_t k;
    if (!dot || dot == s + n - 1)
        return false;
    k = (uint32_t) (dot - s);
    if (!(k == 1 && s[0] == '0') && !is_int (s, k) && !(k == 2 && s[0] == '-' && s[1] == '0'))
        return false;
    for (const char *p = dot + 1; p < s + n; p++)
        if (!DIGIT (*p))
            return false;
    return true;
}

static bool
is_flag (const char *s, uint32_t n)
{
    /* Each with its length: a column of one-letter codes (a TPC-H
     * import's status flags) measured the whole list at every value. */
    static const struct {
        const char *s;
        uint32_t n;
    } flags[] = {{"Y", 1},   {"N", 1},  {"y", 1},   {"n", 1},  {"yes", 3},
                 {"no", 2},  {"Yes", 3}, {"No", 2}, {"YES", 3}, {"NO", 2}};
    /* No flag is longer: most strings stop here. */
    if (n > 3)
        return false;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        uint32_t k = 0;
        if (flags[i].n != n)
            continue;
        while (k < n && flags[i].s[k] == s[k])
            k++;
        if (k == n)
            return true;
    }
    return false;
}

/* Dates in the other shapes exports write, as a format of $dateFromString
 * (docs/plans.md): Y/m/d, m/d/Y (or d.m.Y, d-m-Y), "Jun 12 1998",
 * "June 12, 1998", "12 Jun 1998", then optionally " H:M", ":S", ".L".
 * Read as tokens (numbers, month names) and the separators between them. */
#define FMT_TOKENS 8

typedef struct {
    int n;
    char kind[FMT_TOKENS];       /* 'n' a number, 'b' a month's 3 letters, 'B' its name,
                                  * 'm' May (both) */
    int len[FMT_TOKENS], val[FMT_TOKENS];
    char sep[FMT_TOKENS][3];     /* after the token ("" at the end) */
} tokens_t;

static int
month_of (const char *s, int len, char *kind)
{
    static const char *const names[12] = {"january", "february", "march", "april", "may", "june", "july",
                                          "august", "september", "october", "november", "december"};
    static const int lens[12] = {7, 8, 5, 5, 3, 4, 4, 6, 9, 7, 8, 8};
    for (int m = 0; m < 12; m++) {
        int nl = lens[m];
        /* The first letter before the call: most words here are names
         * that start like a month ("Mark", "Junior"). */
        if ((len != 3 && len != nl) || ((unsigned char) s[0] | 0x20) != (unsigned char) names[m][0])
            continue;
        if (strncasecmp (s, names[m], (size_t) len) == 0) {
            *kind = len == nl ? (len == 3 ? 'm' : 'B') : 'b';
            return m + 1;
        }
    }
    return 0;
}

static inline bool
is_sep (char c)
{
    return c == ' ' || c == '/' || c == '-' || c == '.' || c == ',' || c == ':';
}

static bool
tokenize (const char *s, uint32_t n, tokens_t *t)
{
    uint32_t i = 0;
    t->n = 0;
    while (i < n) {
        uint32_t at = i, k = 0;
        if (t->n == FMT_TOKENS)
            return false;
        if (DIGIT (s[i])) {
            int v = 0;
            for (; i < n && DIGIT (s[i]) && i - at < 5; i++)
                v = v * 10 + (s[i] - '0');
            if (i - at > 4)
                return false;
            t->kind[t->n] = 'n';
            t->val[t->n] = v;
        } else {
            for (; i < n && isalpha ((unsigned char) s[i]); i++)
                ;
            if (!(t->val[t->n] = month_of (s + at, (int) (i - at), &t->kind[t->n])))
                return false;
        }
        t->len[t->n] = (int) (i - at);
        for (; i < n && k < 2 && is_sep (s[i]); i++)
            t->sep[t->n][k++] = s[i];
        t->sep[t->n][k] = '\0';
        if (i < n && !k)
            return false;
        t->n++;
    }
    return t->n >= 3 && !t->sep[t->n - 1][0];
}

/* Appends the pieces (to a NULL) to fmt at l, as far as cap allows: the
 * formats are built per string, where a printf cost more than the rest
 * of the string's reading. */
static size_t
put (char *fmt, size_t cap, size_t l, ...)
{
    va_list ap;
    const char *piece;
    va_start (ap, l);
    while ((piece = va_arg (ap, const char *)))
        for (; *piece && l + 1 < cap; piece++)
            fmt[l++] = *piece;
    va_end (ap);
    fmt[l] = '\0';
    return l;
}

static bool
num (const tokens_t *t, int i, int lo, int hi, int max_len)
{
    return t->kind[i] == 'n' && t->len[i] <= max_len && t->val[i] >= lo && t->val[i] <= hi;
}

/* The format of string s into fmt ("" when it is no date of these
 * shapes), a month's name always as %b; order: 1 when its numbers can
 * only be day first, 2 month first; | 4 a month's full name, | 8 its
 * three letters (May is both: neither). */
static void
date_format (const char *s, uint32_t n, char *fmt, size_t cap, int *order)
{
    tokens_t t;
    const char *s0, *s1;
    size_t l = 0;
    fmt[0] = '\0';
    *order = 0;
    if (n > 40 || !tokenize (s, n, &t))
        return;
    s0 = t.sep[0];
    s1 = t.sep[1];
    if (num (&t, 0, 1, 9999, 4) && t.len[0] == 4 && num (&t, 1, 1, 12, 2) && num (&t, 2, 1, 31, 2) &&
        !strcmp (s0, s1) && strlen (s0) == 1 && strchr ("/-.", s0[0]))
        l = put (fmt, cap, 0, "%Y", s0, "%m", s0, "%d", NULL);
    else if (num (&t, 0, 1, 31, 2) && num (&t, 1, 1, 31, 2) && num (&t, 2, 1, 9999, 4) &&
             t.len[2] == 4 && !strcmp (s0, s1) && strlen (s0) == 1 && strchr ("/-.", s0[0])) {
        if (t.val[0] > 12 && t.val[1] > 12)
            return;
        *order = t.val[0] > 12 ? 1 : t.val[1] > 12 ? 2 : 0;
        /* As the lenient parser reads them: "/" month first, "." and "-"
         * day first (the field's strings may say otherwise: rm_analyze_date_format). */
        l = put (fmt, cap, 0, s0[0] == '/' ? "%m" : "%d", s0, s0[0] == '/' ? "%d" : "%m", s0, "%Y", NULL);
    } else if (t.kind[0] != 'n' && num (&t, 1, 1, 31, 2) && num (&t, 2, 1, 9999, 4) &&
               t.len[2] == 4 && (!strcmp (s0, " ") || !strcmp (s0, "-")) &&
               (!strcmp (s1, s0) || !strcmp (s1, ", ")))
        l = put (fmt, cap, 0, "%b", s0, "%d", s1, "%Y", NULL);
    else if (num (&t, 0, 1, 31, 2) && t.kind[1] != 'n' && num (&t, 2, 1, 9999, 4) &&
             t.len[2] == 4 && (!strcmp (s0, " ") || !strcmp (s0, "-")) && !strcmp (s1, s0))
        l = put (fmt, cap, 0, "%d", s0, "%b", s0, "%Y", NULL);
    else
        return;
    /* A time: " H:M", then ":S", then ".L". */
    if (t.n > 3 && (strcmp (t.sep[2], " ") || !num (&t, 3, 0, 23, 2) || t.n < 5 ||
                    strcmp (t.sep[3], ":") || !num (&t, 4, 0, 59, 2) || t.len[4] != 2 ||
                    (t.n > 5 && (strcmp (t.sep[4], ":") || !num (&t, 5, 0, 59, 2) || t.len[5] != 2)) ||
                    (t.n > 6 && (strcmp (t.sep[5], ".") || !num (&t, 6, 0, 999, 3))) || t.n > 7)) {
        fmt[0] = '\0';
        return;
    }
    for (int k = 0; k < 2; k++)
        *order |= t.kind[k] == 'B' ? 4 : t.kind[k] == 'b' ? 8 : 0;
    if (t.n > 3)
        put (fmt, cap, l, t.n == 5 ? " %H:%M" : t.n == 6 ? " %H:%M:%S" : " %H:%M:%S.%L", NULL);
}

bool
rm_analyze_date_format (const rm_field_t *f, char *out, size_t cap)
{
    char *m, *d, *b;
    snprintf (out, cap, "%s", f->str_format);
    if ((f->str_day_first && f->str_month_first) || (f->str_month_names & 12) == 12)
        return false;
    /* Full names: %B (May alone reads as either). */
    if ((b = strstr (out, "%b")) && (f->str_month_names & 4))
        b[1] = 'B';
    m = strstr (out, "%m");
    d = strstr (out, "%d");
    /* The numbers say the other order than the separator's: swap them. */
    if (m && d && ((m < d && f->str_day_first) || (d < m && f->str_month_first))) {
        m[1] = 'd';
        d[1] = 'm';
    }
    return true;
}

/* Strings of a letter first go no further unless a month's name starts
 * them (cheap: most are words). */
static bool
month_first (const char *s, uint32_t n)
{
    /* The months' first three letters, lower case, packed: twelve
     * compares of an integer (every word of every document comes here). */
    static const uint32_t abbr[12] = {
        0x6a616e, 0x666562, 0x6d6172, 0x617072, 0x6d6179, 0x6a756e,
        0x6a756c, 0x617567, 0x736570, 0x6f6374, 0x6e6f76, 0x646563};
    uint32_t k;
    char kind;
    bool any = false;
    /* The months' first letters (a, d, f, j, m, n, o, s): one test sends
     * most words away. */
    static const uint32_t initials = 1u << 0 | 1u << 3 | 1u << 5 | 1u << 9 | 1u << 12 | 1u << 13 |
                                     1u << 14 | 1u << 18;
    uint32_t c0 = (uint32_t) ((unsigned char) s[0] | 0x20) - 'a';
    if (n < 8 || c0 >= 26 || !(initials >> c0 & 1))
        return false;
    k = (uint32_t) (s[0] | 0x20) << 16 | (uint32_t) (s[1] | 0x20) << 8 | (uint32_t) (s[2] | 0x20);
    for (int m = 0; m < 12; m++)
        any |= k == abbr[m];
    return any && (!isalpha ((unsigned char) s[3]) || month_of (s, (int) strcspn (s, " -,"), &kind));
}

/* Counts a string of format fmt (not "") and order (date_format's). */
static void
count_as (rm_field_t *f, const char *fmt, int order)
{
    if (!f->str_format[0])
        memcpy (f->str_format, fmt, strlen (fmt) + 1);
    else if (strcmp (f->str_format, fmt) != 0)
        return;
    f->str_formatted++;
    f->str_day_first |= (order & 3) == 1;
    f->str_month_first |= (order & 3) == 2;
    f->str_month_names |= (uint8_t) (order & 12);
}

static void
count_format (rm_field_t *f, const char *s, uint32_t n)
{
    char fmt[sizeof f->str_format];
    int order;
    date_format (s, n, fmt, sizeof fmt, &order);
    if (fmt[0])
        count_as (f, fmt, order);
}

/* A date alone, YYYY-MM-DD (is_date's shape of 10 bytes), the commonest:
 * date_format's answer without its tokens, "%Y-%m-%d" when year, month
 * and day are in range. */
static void
count_day (rm_field_t *f, const char *s)
{
    int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
    if (year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= 31)
        count_as (f, "%Y-%m-%d", 0);
}

void
rm_analyze_count_string (rm_field_t *f, const uint8_t *v)
{
    uint32_t n = (uint32_t) v[0] | (uint32_t) v[1] << 8 | (uint32_t) v[2] << 16 | (uint32_t) v[3] << 24;
    const char *s = (const char *) v + 4;
    bool date;
    /* n counts the final NUL; an empty string is not counted. */
    if (n <= 1)
        return;
    n--;
    f->str_seen++;
    /* Dates and numbers begin with a digit or '-', flags are at most 3
     * bytes: most strings (names, words) stop here. */
    if (n > 3 && !DIGIT (s[0]) && s[0] != '-') {
        if (month_first (s, n))
            count_format (f, s, n);
        return;
    }
    /* A date alone ("2006-11-17") is also %Y-%m-%d: a field may hold
     * "2006-3-7" beside it. */
    date = is_date (s, n);
    f->str_dates += date;
    if (date && n == 10)
        count_day (f, s);
    else if (!date && n >= 8 && DIGIT (s[0]))
        count_format (f, s, n);
    f->str_ints += is_int (s, n);
    f->str_decimals += is_decimal (s, n);
    f->str_flags += is_flag (s, n);
}
