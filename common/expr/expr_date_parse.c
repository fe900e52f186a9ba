/* Dates from strings: the lenient parser of $dateFromString without a
 * format (and $toDate, $convert to "date"), the parser by format
 * specifiers, and the ISO form $toString writes.
 *
 * The server parses with timelib's strtotime, a grammar of hundreds of
 * forms (relative dates, "next monday", week dates...). This parser takes
 * the forms data holds: ISO dates ("2017-07-04", "2017-07-04T12:00:00Z",
 * "20170704"), "2017/07/04", American "07/04/2017", day-first
 * "04.07.2017" and "04-07-2017", month names ("July 4th, 2017",
 * "4 Jul 2017", "Tue, 04 Jul 2017 12:00:00 GMT", "2017-Jul-04"), ISO
 * week dates ("2017-W27-2", "2017W272", "2017-W27"), times with seconds,
 * fractions and am/pm ("12pm", "12:30:15.123", "12:30.15"), the words
 * that set the time alone ("noon", "midnight", "today"), and zones as offsets
 * ("+02:00", "-0500", "+03"), "Z", "UTC", "GMT", the US abbreviations
 * (EST, EDT, CST, CDT, MST, MDT, PST, PDT), Europe's (WET, WEST, BST, CET,
 * CEST, EET, EEST) and the military letters. Anything else is refused
 * with an error naming the string, never guessed: a form the server
 * would read differently must not become a wrong date.
 *
 * As the server: a string without a date (year, month and day) is an
 * error, a missing time is midnight, an invalid date (February 30) is an
 * error, an Olson name in the string is refused, and a zone in the string
 * together with a timezone argument other than UTC is an error. */
#include <string.h>

#include "expr_tz.h"

#define UNSET (-1)

typedef struct {
    rm_expr_ctx_t *cx;
    const rm_expr_t *op;
    const char *s;
    size_t len, i;
    int64_t y;
    int m, d, h, mi, sec;
    int64_t us;
    int zone_type;        /* 0 none, 1 an offset, 2 an abbreviation ("Z", "EST") */
    int32_t zone_off;
    char abbr[8];
    int wday;             /* a day name read (0 Sunday .. 6), or UNSET */
    bool conversion;      /* the failure is what onError catches */
    bson_error_t *err;
} dscan_t;

static const char *const month_names[12] = {"january", "february", "march",     "april",
                                            "may",     "june",     "july",      "august",
                                            "september", "october", "november", "december"};
static const char *const day_names[7] = {"sunday",   "monday", "tuesday", "wednesday",
                                         "thursday", "friday", "saturday"};

static bool
fail_at (dscan_t *p, const char *what)
{
    p->conversion = true;
    if (p->i < p->len)
        return rm_xfail (p->err, p->op, "Error parsing date string '%.*s'; %zu: %s '%c'",
                         (int) (p->len > 120 ? 120 : p->len), p->s, p->i, what, p->s[p->i]);
    return rm_xfail (p->err, p->op, "Error parsing date string '%.*s'; %zu: %s",
                     (int) (p->len > 120 ? 120 : p->len), p->s, p->i, what);
}

static inline bool
is_digit (char c)
{
    return c >= '0' && c <= '9';
}

static inline bool
is_alpha (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline char
lower (char c)
{
    return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

static char
peek (const dscan_t *p, size_t k)
{
    return p->i + k < p->len ? p->s[p->i + k] : '\0';
}

/* A run of up to max digits: its value and count (0: none). */
static int
digits (dscan_t *p, int max, int64_t *v)
{
    int k = 0;
    *v = 0;
    while (k < max && p->i < p->len && is_digit (p->s[p->i])) {
        *v = *v * 10 + (p->s[p->i++] - '0');
        k++;
    }
    return k;
}

static size_t
word_len (const dscan_t *p)
{
    size_t k = 0;
    while (p->i + k < p->len && is_alpha (p->s[p->i + k]))
        k++;
    return k;
}

/* A month's name at the cursor, in full or its first three letters
 * ("Sept" too): 1-12, 0 if none. */
static int
month_name (dscan_t *p)
{
    size_t k = word_len (p);
    for (int m = 0; m < 12; m++) {
        size_t n = strlen (month_names[m]);
        bool ok = k == n || k == 3 || (m == 8 && k == 4);
        for (size_t j = 0; ok && j < k; j++)
            ok = j < n && lower (p->s[p->i + j]) == month_names[m][j];
        if (ok) {
            p->i += k;
            return m + 1;
        }
    }
    return 0;
}

static int
day_name (dscan_t *p)
{
    size_t k = word_len (p);
    for (int d = 0; d < 7; d++) {
        size_t n = strlen (day_names[d]);
        bool ok = k == n || k == 3;
        for (size_t j = 0; ok && j < k; j++)
            ok = lower (p->s[p->i + j]) == day_names[d][j];
        if (ok) {
            p->i += k;
            return d;
        }
    }
    return UNSET;
}

static void
skip (dscan_t *p, const char *set)
{
    while (p->i < p->len && strchr (set, p->s[p->i]) && p->s[p->i])
        p->i++;
}

static bool
set_date (dscan_t *p, int64_t y, int m, int d)
{
    if (p->m != UNSET)
        return fail_at (p, "Double date specification");
    p->y = y;
    p->m = m;
    p->d = d;
    return true;
}

/* A year of two digits, as timelib reads one: 70-99 the 1900s. */
static int64_t
year2 (int64_t y, int k)
{
    if (k > 2)
        return y;
    return y < 70 ? y + 2000 : y + 1900;
}

/* am/pm after an hour ("12pm", "7 a.m."): true if one was read. */
static bool
meridian (dscan_t *p, int *pm)
{
    size_t save = p->i;
    skip (p, " \t");
    char c = lower (peek (p, 0));
    if (c != 'a' && c != 'p') {
        p->i = save;
        return false;
    }
    size_t k = 1;
    if (peek (p, k) == '.')
        k++;
    if (lower (peek (p, k)) != 'm') {
        p->i = save;
        return false;
    }
    k++;
    if (peek (p, k) == '.')
        k++;
    if (is_alpha (peek (p, k))) {
        p->i = save;
        return false;
    }
    p->i += k;
    *pm = c == 'p';
    return true;
}

static bool
apply_meridian (dscan_t *p, int pm)
{
    if (p->h < 1 || p->h > 12)
        return fail_at (p, "an hour of 1 to 12 must come before am or pm");
    if (p->h == 12)
        p->h = 0;
    if (pm)
        p->h += 12;
    return true;
}

/* HH:MM[:SS[.frac]] [am|pm], the hour already read. */
static bool
read_time (dscan_t *p, int64_t hour)
{
    int64_t v;
    int pm;
    if (p->h != UNSET)
        return fail_at (p, "Double time specification");
    p->h = (int) hour;
    p->i++; /* ':' */
    if (digits (p, 2, &v) != 2)
        return fail_at (p, "Unexpected character");
    p->mi = (int) v;
    p->sec = 0;
    p->us = 0;
    /* timelib takes '.' between the minute and the second too
     * ("11:56.02"); a lone digit after it is no second */
    if ((peek (p, 0) == ':' && is_digit (peek (p, 1))) ||
        (peek (p, 0) == '.' && is_digit (peek (p, 1)) && is_digit (peek (p, 2)))) {
        p->i++;
        if (digits (p, 2, &v) != 2)
            return fail_at (p, "Unexpected character");
        p->sec = (int) v;
        if ((peek (p, 0) == '.' || peek (p, 0) == ',') && is_digit (peek (p, 1))) {
            int k = 0;
            p->i++;
            while (p->i < p->len && is_digit (p->s[p->i])) {
                if (k < 6) {
                    p->us = p->us * 10 + (p->s[p->i] - '0');
                    k++;
                }
                p->i++;
            }
            for (; k < 6; k++)
                p->us *= 10;
        }
    }
    if (meridian (p, &pm))
        return apply_meridian (p, pm);
    return true;
}

/* +HH, +H, +HHMM, +HMM, +HH:MM after a time or a zone name. */
static bool
read_offset (dscan_t *p)
{
    int sign = p->s[p->i] == '-' ? -1 : 1;
    int64_t a, b = 0;
    int k;
    if (p->zone_type)
        return fail_at (p, "Double timezone specification");
    p->i++;
    k = digits (p, 4, &a);
    if (k == 0)
        return fail_at (p, "Unexpected character");
    if (k <= 2 && peek (p, 0) == ':') {
        p->i++;
        if (digits (p, 2, &b) != 2)
            return fail_at (p, "Unexpected character");
    } else if (k >= 3) {
        b = a % 100;
        a /= 100;
    }
    p->zone_type = 1;
    p->zone_off = (int32_t) (sign * (a * 3600 + b * 60));
    return true;
}

typedef struct {
    const char *name;
    int32_t off;
} abbr_t;

/* The US abbreviations, Europe's that timelib reads one way only, and the
 * military letters (A to I are +1 to +9, K to M +10 to +12, N to Y -1 to
 * -12, Z zero; J is local time, so not a zone), which the server's
 * date_from_string.js reads ("12:02 A" is 11:02 UTC). */
static const abbr_t abbrs[] = {
    {"z", 0},          {"utc", 0},        {"gmt", 0},        {"ut", 0},
    {"est", -5 * 3600}, {"edt", -4 * 3600}, {"cst", -6 * 3600}, {"cdt", -5 * 3600},
    {"mst", -7 * 3600}, {"mdt", -6 * 3600}, {"pst", -8 * 3600}, {"pdt", -7 * 3600},
    {"wet", 0},        {"west", 3600},    {"bst", 3600},     {"cet", 3600},
    {"cest", 2 * 3600}, {"eet", 2 * 3600}, {"eest", 3 * 3600},
    {"a", 3600},       {"b", 2 * 3600},   {"c", 3 * 3600},   {"d", 4 * 3600},
    {"e", 5 * 3600},   {"f", 6 * 3600},   {"g", 7 * 3600},   {"h", 8 * 3600},
    {"i", 9 * 3600},   {"k", 10 * 3600},  {"l", 11 * 3600},  {"m", 12 * 3600},
    {"n", -3600},      {"o", -2 * 3600},  {"p", -3 * 3600},  {"q", -4 * 3600},
    {"r", -5 * 3600},  {"s", -6 * 3600},  {"t", -7 * 3600},  {"u", -8 * 3600},
    {"v", -9 * 3600},  {"w", -10 * 3600}, {"x", -11 * 3600}, {"y", -12 * 3600},
    {NULL, 0},
};

/* A zone at the cursor: an abbreviation of the table ("GMT+2" an offset),
 * or an Olson name (refused). False with the error if neither. */
static bool
read_zone_word (dscan_t *p)
{
    size_t k = 0;
    bool slash = false;
    while (p->i + k < p->len && (is_alpha (p->s[p->i + k]) || p->s[p->i + k] == '/' ||
                                 p->s[p->i + k] == '_'))
        slash |= p->s[p->i + k++] == '/';
    if (slash) {
        p->conversion = true;
        return rm_xfail (p->err, p->op,
                         "Error parsing date string '%.*s'; %zu: passing a time zone identifier "
                         "as part of the string is not allowed '%c'",
                         (int) (p->len > 120 ? 120 : p->len), p->s, p->i, p->s[p->i]);
    }
    for (const abbr_t *a = abbrs; a->name; a++) {
        if (strlen (a->name) != k)
            continue;
        size_t j = 0;
        while (j < k && lower (p->s[p->i + j]) == a->name[j])
            j++;
        if (j < k)
            continue;
        if (p->zone_type)
            return fail_at (p, "Double timezone specification");
        p->i += k;
        if ((a->off == 0 && k > 1) && (peek (p, 0) == '+' || peek (p, 0) == '-') &&
            is_digit (peek (p, 1)))
            return read_offset (p); /* "GMT+02:00": an offset */
        p->zone_type = 2;
        p->zone_off = a->off;
        for (j = 0; j < k && j + 1 < sizeof p->abbr; j++)
            p->abbr[j] = (char) (a->name[j] - 'a' + 'A');
        p->abbr[j] = '\0';
        return true;
    }
    return fail_at (p, "The timezone could not be found in the database");
}

/* After a month's name: [day[st|nd|rd|th]] [,] year, or year alone. */
static bool
after_month_name (dscan_t *p, int m)
{
    int64_t a, b;
    int k;
    skip (p, " \t.-");
    k = digits (p, 4, &a);
    if (k == 4) /* "July 2017": the first of the month */
        return set_date (p, a, m, 1);
    if (k == 0)
        return fail_at (p, "a day or a year must follow the month's name");
    if (peek (p, 0) == ':')
        return fail_at (p, "a day must follow the month's name");
    if (word_len (p) == 2) {
        char s0 = lower (peek (p, 0)), s1 = lower (peek (p, 1));
        if ((s0 == 's' && s1 == 't') || (s0 == 'n' && s1 == 'd') || (s0 == 'r' && s1 == 'd') ||
            (s0 == 't' && s1 == 'h'))
            p->i += 2;
    }
    size_t after_day = p->i;
    skip (p, " \t,.");
    k = digits (p, 4, &b);
    if ((k != 4 && k != 2) || peek (p, 0) == ':') {
        /* "July 4" and "Jul 4 12:00": a date without its year (the
         * incomplete date the server refuses) */
        p->i = after_day;
        return set_date (p, UNSET, m, (int) a);
    }
    return set_date (p, year2 (b, k), m, (int) a);
}

/* After a year, "-Jul-04" (timelib's pgtextreverse): the month by its
 * name, then the day. */
static bool
year_month_name (dscan_t *p, int64_t y)
{
    int64_t d;
    int m;
    p->i++;
    if (!(m = month_name (p)) || peek (p, 0) != '-' || !is_digit (peek (p, 1)))
        return fail_at (p, "Unexpected character");
    p->i++;
    digits (p, 2, &d);
    return set_date (p, y, m, (int) d);
}

/* A token starting with a digit. */
/* After a year, an ISO week date as timelib reads one: "-W27-2",
 * "W272", "-W27" (its Monday); the week 01 to 53, the day 0 to 7 (0 the
 * Sunday before the week's Monday, 7 the one at its end). */
static bool
iso_week_date (dscan_t *p, int64_t y)
{
    int64_t w, d = 1, yy;
    int mm, dd;
    p->i += p->s[p->i] == '-' ? 2 : 1;
    if (digits (p, 2, &w) != 2 || w < 1 || w > 53)
        return fail_at (p, "Unexpected character");
    if (peek (p, 0) == '-' && is_digit (peek (p, 1)))
        p->i++;
    if (is_digit (peek (p, 0))) {
        d = p->s[p->i++] - '0';
        if (d > 7)
            return fail_at (p, "Unexpected character");
    }
    rm_cal_civil (rm_cal_iso_days (y, w, 1) + d - 1, &yy, &mm, &dd);
    return set_date (p, yy, mm, dd);
}

static bool
read_number (dscan_t *p)
{
    size_t start = p->i;
    int64_t a, b, c;
    int k = digits (p, 9, &a), k2, k3, pm;
    char n0 = peek (p, 0);

    if (k == 4 && (n0 == 'W' || (n0 == '-' && peek (p, 1) == 'W')))
        return iso_week_date (p, a);
    if (k == 4 && n0 == '-' && is_alpha (peek (p, 1)))
        return year_month_name (p, a);
    if (k == 4 && (n0 == '-' || n0 == '/') && is_digit (peek (p, 1))) {
        /* 2017-07-04, 2017-07, 2017/07/04 */
        p->i++;
        k2 = digits (p, 2, &b);
        if (peek (p, 0) == n0 && is_digit (peek (p, 1))) {
            p->i++;
            if (digits (p, 2, &c) == 0)
                return fail_at (p, "Unexpected character");
            return set_date (p, a, (int) b, (int) c);
        }
        if (n0 == '/' || k2 == 0)
            return fail_at (p, "Unexpected character");
        return set_date (p, a, (int) b, 1);
    }
    if (k == 8) /* 20170704 */
        return set_date (p, a / 10000, (int) (a / 100 % 100), (int) (a % 100));
    if (k > 2) {
        p->i = start;
        return fail_at (p, "Unexpected character");
    }
    if (n0 == ':' && is_digit (peek (p, 1)))
        return read_time (p, a);
    if (n0 == '/' && is_digit (peek (p, 1))) {
        /* American: 07/04/2017, 7/4/17 */
        p->i++;
        digits (p, 2, &b);
        if (peek (p, 0) != '/' || !is_digit (peek (p, 1)))
            return set_date (p, UNSET, (int) a, (int) b); /* 07/04: no year */
        p->i++;
        k3 = digits (p, 4, &c);
        if (k3 != 4 && k3 != 2)
            return fail_at (p, "Unexpected character");
        return set_date (p, year2 (c, k3), (int) a, (int) b);
    }
    if ((n0 == '.' || n0 == '-') && is_digit (peek (p, 1))) {
        /* day first: 04.07.2017, 04-07-2017 */
        p->i++;
        k2 = digits (p, 2, &b);
        if (peek (p, 0) != n0 || !is_digit (peek (p, 1)))
            return fail_at (p, "Unexpected character");
        p->i++;
        k3 = digits (p, 5, &c);
        if (k3 != 4)
            return fail_at (p, "a day-first date needs a year of 4 digits");
        (void) k2;
        return set_date (p, c, (int) b, (int) a);
    }
    if (meridian (p, &pm)) {
        /* 12pm, 7 a.m. */
        if (p->h != UNSET)
            return fail_at (p, "Double time specification");
        p->h = (int) a;
        p->mi = p->sec = 0;
        p->us = 0;
        return apply_meridian (p, pm);
    }
    /* 4 July 2017, 4th of July is not taken, 4-Jul-2017 */
    size_t save = p->i;
    if (word_len (p) == 2) {
        char s0 = lower (peek (p, 0)), s1 = lower (peek (p, 1));
        if ((s0 == 's' && s1 == 't') || (s0 == 'n' && s1 == 'd') || (s0 == 'r' && s1 == 'd') ||
            (s0 == 't' && s1 == 'h'))
            p->i += 2;
    }
    skip (p, " \t.-");
    int m = month_name (p);
    if (m) {
        skip (p, " \t.-,");
        k3 = digits (p, 4, &c);
        if ((k3 != 4 && k3 != 2) || peek (p, 0) == ':')
            return fail_at (p, "a year must follow the month's name");
        return set_date (p, year2 (c, k3), m, (int) a);
    }
    p->i = save;
    return fail_at (p, "Unexpected character");
}

/* Whether the word at the cursor is w (lower case), whole; read if so. */
static bool
word_is (dscan_t *p, const char *w)
{
    size_t k = word_len (p);
    if (k != strlen (w))
        return false;
    for (size_t j = 0; j < k; j++)
        if (lower (p->s[p->i + j]) != w[j])
            return false;
    p->i += k;
    return true;
}

/* The words that set the time of day without moving the date, as
 * timelib reads them: "noon" is 12:00, "midnight" and "today" drop the
 * time read (midnight). True if one was read. */
static bool
time_word (dscan_t *p)
{
    if (word_is (p, "noon")) {
        p->h = 12;
        p->mi = p->sec = 0;
        p->us = 0;
        return true;
    }
    if (word_is (p, "midnight") || word_is (p, "today")) {
        p->h = p->mi = p->sec = UNSET;
        p->us = UNSET;
        return true;
    }
    return false;
}

static bool
read_word (dscan_t *p)
{
    int m, wd;
    if ((p->s[p->i] == 'T' || p->s[p->i] == 't') && is_digit (peek (p, 1))) {
        int64_t h;
        p->i++;
        size_t at = p->i;
        if (digits (p, 2, &h) == 0 || peek (p, 0) != ':') {
            p->i = at;
            return fail_at (p, "a time must follow 'T'");
        }
        return read_time (p, h);
    }
    if ((m = month_name (p)))
        return after_month_name (p, m);
    if (time_word (p))
        return true;
    if ((wd = day_name (p)) != UNSET) {
        /* timelib resets the time read before a day's name: not taken */
        if (p->h != UNSET)
            return fail_at (p, "a day of the week after the time is not supported");
        if (p->wday != UNSET)
            return fail_at (p, "Double day of the week");
        p->wday = wd;
        return true;
    }
    return read_zone_word (p);
}

static bool
scan_lenient (dscan_t *p)
{
    while (p->i < p->len) {
        char c = p->s[p->i];
        bool ok;
        if (c == ' ' || c == '\t' || c == ',' || c == '\n' || c == '\r') {
            p->i++;
            continue;
        }
        if (is_digit (c))
            ok = read_number (p);
        else if (is_alpha (c))
            ok = read_word (p);
        else if ((c == '+' || c == '-') && is_digit (peek (p, 1)) &&
                 (p->h != UNSET || p->m != UNSET))
            ok = read_offset (p);
        else
            ok = fail_at (p, "Unexpected character");
        if (!ok)
            return false;
    }
    return true;
}

/* ---- By format ---- */

const char rm_xdate_from_specs[] = "bBdGHjLmMSuVYzZ";

bool
rm_xdate_format_ok (const char *specs, const char *f, size_t len, char *why, size_t cap)
{
    for (size_t i = 0; i < len; i++) {
        if (f[i] != '%')
            continue;
        if (++i == len) {
            snprintf (why, cap, "Unmatched '%%' at end of format string");
            return false;
        }
        if (f[i] == '%')
            continue;
        if (!f[i] || !strchr (specs, f[i])) {
            snprintf (why, cap, "Invalid format character '%%%c' in format string", f[i]);
            return false;
        }
    }
    return true;
}

static bool
fixed_digits (dscan_t *p, int min, int max, int64_t *v, const char *what)
{
    int k = digits (p, max, v);
    if (k < min)
        return fail_at (p, what);
    return true;
}

static bool
scan_format (dscan_t *p, const char *f, size_t flen)
{
    int64_t v, iso_y = UNSET, iso_w = UNSET, iso_d = UNSET;
    int64_t y = UNSET, m = UNSET, d = UNSET;

    for (size_t j = 0; j < flen; j++) {
        if (f[j] != '%' || (j + 1 < flen && f[j + 1] == '%')) {
            if (f[j] == '%')
                j++;
            if (p->i >= p->len)
                return fail_at (p, "Data missing");
            if (p->s[p->i] != f[j])
                return fail_at (p, "Format literal not found");
            p->i++;
            continue;
        }
        char spec = f[++j];
        if (p->i >= p->len)
            return fail_at (p, "Data missing");
        switch (spec) {
        case 'Y':
            if (!fixed_digits (p, 1, 4, &y, "A four digit year could not be found"))
                return false;
            break;
        case 'G':
            if (!fixed_digits (p, 1, 4, &iso_y, "A four digit ISO year could not be found"))
                return false;
            break;
        case 'm':
            if (!fixed_digits (p, 1, 2, &m, "A two digit month could not be found"))
                return false;
            break;
        case 'd':
            if (!fixed_digits (p, 1, 2, &d, "A two digit day could not be found"))
                return false;
            break;
        case 'H':
            if (!fixed_digits (p, 1, 2, &v, "A two digit hour could not be found"))
                return false;
            p->h = (int) v;
            break;
        case 'M':
            if (!fixed_digits (p, 2, 2, &v, "A two digit minute could not be found"))
                return false;
            p->mi = (int) v;
            break;
        case 'S':
            if (!fixed_digits (p, 2, 2, &v, "A two digit second could not be found"))
                return false;
            p->sec = (int) v;
            break;
        case 'L': {
            /* up to three digits, as a fraction: "5" is 500 ms */
            size_t at = p->i;
            if (!fixed_digits (p, 1, 3, &v, "A three digit millisecond could not be found"))
                return false;
            for (size_t k = p->i - at; k < 3; k++)
                v *= 10;
            p->us = v * 1000;
            break;
        }
        case 'j': {
            /* timelib counts the day of the year from 0 here (day 1 of
             * the year is "000") and needs the year first */
            int64_t yy;
            int mm, dd;
            if (y == UNSET)
                return fail_at (p, "A 'day of year' can only come after a year has been found");
            if (!fixed_digits (p, 1, 3, &v, "A three digit day-of-year could not be found"))
                return false;
            rm_cal_civil (rm_cal_days (y, 1, 1) + v, &yy, &mm, &dd);
            y = yy;
            m = mm;
            d = dd;
            break;
        }
        case 'V':
            if (!fixed_digits (p, 1, 2, &iso_w, "A two digit ISO week could not be found"))
                return false;
            if (iso_w < 1 || iso_w > 53)
                return fail_at (p, "ISO Week must be between 1 and 53");
            break;
        case 'u':
            if (!fixed_digits (p, 1, 1, &iso_d, "A single digit day of week could not be found"))
                return false;
            if (iso_d < 1 || iso_d > 7)
                return fail_at (p, "Day of week must be between 1 and 7");
            break;
        case 'b':
        case 'B': {
            size_t k = word_len (p);
            int mm = month_name (p);
            if (!mm || (spec == 'b' && k != 3) || (spec == 'B' && k != strlen (month_names[mm - 1]))) {
                p->i -= mm ? k : 0;
                return fail_at (p, "A textual month could not be found");
            }
            m = mm;
            break;
        }
        case 'z':
            /* timelib skips blanks and an opening parenthesis before a
             * zone ("12:02:44.771 GMT+02"), and closing ones after */
            skip (p, " \t(");
            if (p->i >= p->len)
                return fail_at (p, "Data missing");
            if (p->s[p->i] == '+' || p->s[p->i] == '-') {
                if (!is_digit (peek (p, 1)))
                    return fail_at (p, "The timezone could not be found in the database");
                if (!read_offset (p))
                    return false;
            } else if (is_alpha (p->s[p->i])) {
                if (!read_zone_word (p))
                    return false;
            } else {
                return fail_at (p, "The timezone could not be found in the database");
            }
            skip (p, ")");
            break;
        case 'Z': {
            int sign = p->s[p->i] == '-' ? -1 : 1;
            if (p->s[p->i] != '+' && p->s[p->i] != '-')
                return fail_at (p, "A timezone offset in minutes could not be found");
            p->i++;
            if (!fixed_digits (p, 1, 4, &v, "A timezone offset in minutes could not be found"))
                return false;
            if (p->zone_type)
                return fail_at (p, "Double timezone specification");
            p->zone_type = 1;
            p->zone_off = (int32_t) (sign * v * 60);
            break;
        }
        default:
            return fail_at (p, "Invalid format character");
        }
    }
    if (p->i < p->len)
        return fail_at (p, "Trailing data");
    /* timelib's rules for ISO week dates: no mixing with a year, month
     * or day; week and day default to 1; a week without its year is an
     * invalid date */
    if ((y != UNSET && (iso_y != UNSET || iso_w != UNSET || iso_d != UNSET)) ||
        (iso_y != UNSET && (m != UNSET || d != UNSET)))
        return fail_at (p, "Mixing of ISO dates with natural dates is not allowed");
    if (iso_y != UNSET) {
        int64_t yy;
        int mm, dd;
        rm_cal_civil (rm_cal_iso_days (iso_y, iso_w != UNSET ? iso_w : 1, iso_d != UNSET ? iso_d : 1),
                      &yy, &mm, &dd);
        y = yy;
        m = mm;
        d = dd;
    } else if (iso_w != UNSET || iso_d != UNSET) {
        return fail_at (p, "The parsed date was invalid");
    }
    if (y != UNSET)
        p->y = y;
    if (m != UNSET)
        p->m = (int) m;
    if (d != UNSET)
        p->d = (int) d;
    /* Some time read: the rest of it is zero (timelib's clean-up). */
    if (p->h != UNSET || p->mi != UNSET || p->sec != UNSET || p->us != UNSET) {
        if (p->h == UNSET)
            p->h = 0;
        if (p->mi == UNSET)
            p->mi = 0;
        if (p->sec == UNSET)
            p->sec = 0;
        if (p->us == UNSET)
            p->us = 0;
    }
    return true;
}

/* n digits at s as a number, or -1. */
static int
iso_digits (const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit (s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The forms dates are written in ($dateToString's default, ISO 8601 in
 * UTC: "2013-07-15T00:00:00Z", or with ".000" milliseconds; and the date
 * alone, "2013-07-15", midnight UTC, as CSV exports hold them), read
 * straight; false sends anything else, or a field out of range (its
 * message is the scan's), through the scan, which reads it the same. */
static bool
parse_iso_utc (const char *s, size_t len, int64_t *ms)
{
    int y, m, d, h = 0, mi = 0, sec = 0, frac = 0;
    if ((len != 10 && len != 20 && len != 24) || s[4] != '-' || s[7] != '-')
        return false;
    if (len != 10 && (s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len - 1] != 'Z'))
        return false;
    y = iso_digits (s, 4);
    m = iso_digits (s + 5, 2);
    d = iso_digits (s + 8, 2);
    if (len != 10) {
        h = iso_digits (s + 11, 2);
        mi = iso_digits (s + 14, 2);
        sec = iso_digits (s + 17, 2);
    }
    if (len == 24 && (s[19] != '.' || (frac = iso_digits (s + 20, 3)) < 0))
        return false;
    if (y < 1000 || m < 1 || m > 12 || d < 1 || d > rm_cal_month_days (y, m) || h < 0 || h > 23 ||
        mi < 0 || mi > 59 || sec < 0 || sec > 59)
        return false;
    *ms = (rm_cal_days (y, m, d) * 86400 + h * 3600 + mi * 60 + sec) * 1000 + frac;
    return true;
}

bool
rm_xdate_parse_in (rm_expr_ctx_t *cx, const rm_expr_t *op, const char *s, size_t len,
                   const rm_tz_t *tz, const char *format, size_t format_len, int64_t *ms,
                   bool *conversion, bson_error_t *err)
{
    dscan_t p;
    bool ok;
    int64_t days, local, utc;

    *conversion = true;
    if (!format && tz->utc && parse_iso_utc (s, len, ms))
        return true;

    memset (&p, 0, sizeof p);
    p.cx = cx;
    p.op = op;
    p.s = s;
    p.len = len;
    p.err = err;
    p.y = UNSET;
    p.m = p.d = p.h = p.mi = p.sec = p.wday = UNSET;
    p.us = UNSET;
    *conversion = true;
    if (format) {
        /* timelib reads both as C strings: each ends at a NUL, so the
         * rest of the string is missing or the rest of the format never
         * read (date_from_string.js) */
        p.len = len = strnlen (s, len);
        format_len = strnlen (format, format_len);
    }
    ok = format ? scan_format (&p, format, format_len) : scan_lenient (&p);
    if (!ok) {
        *conversion = p.conversion;
        return false;
    }
    if (p.h == UNSET && p.mi == UNSET && p.sec == UNSET) {
        p.h = p.mi = p.sec = 0;
        p.us = 0;
    }
    if (p.y == UNSET || p.m == UNSET || p.d == UNSET || p.h == UNSET || p.mi == UNSET ||
        p.sec == UNSET)
        return rm_xfail (err, op,
                         "an incomplete date/time string has been found, with elements missing: "
                         "\"%.*s\"",
                         (int) (len > 120 ? 120 : len), s);
    if (p.m < 1 || p.m > 12 || p.d < 1 || p.d > rm_cal_month_days (p.y, p.m)) {
        p.i = len;
        return fail_at (&p, "The parsed date was invalid");
    }
    if (p.h > 23 || p.mi > 59 || p.sec > 59) {
        p.i = len;
        return fail_at (&p, "The parsed time was invalid");
    }
    days = rm_cal_days (p.y, p.m, p.d);
    if (p.wday != UNSET && rm_cal_iso_dow (days) % 7 != p.wday) {
        /* timelib would move the date to that weekday: not guessed. */
        return rm_xfail (err, op,
                         "the date string '%.*s' names a day of the week that is not its date's "
                         "(the server would move the date to that day; remodel refuses it)",
                         (int) (len > 120 ? 120 : len), s);
    }
    if (p.zone_type && !tz->utc) {
        if (p.zone_type == 1)
            return rm_xfail (err, op,
                             "you cannot pass in a date/time string with GMT offset together with "
                             "a timezone argument (\"%.*s\")",
                             (int) (len > 120 ? 120 : len), s);
        return rm_xfail (err, op,
                         "you cannot pass in a date/time string with time zone information ('%s') "
                         "together with a timezone argument (\"%.*s\")",
                         p.abbr, (int) (len > 120 ? 120 : len), s);
    }
    local = days * 86400 + p.h * 3600 + p.mi * 60 + p.sec;
    utc = p.zone_type ? local - p.zone_off : rm_tz_to_utc (tz, local);
    *ms = utc * 1000 + p.us / 1000;
    return true;
}

bool
rm_xdate_parse (rm_expr_ctx_t *cx, const rm_expr_t *op, const char *s, size_t len, const char *tz,
                int64_t *ms, bson_error_t *err)
{
    rm_tz_t zone;
    bool conversion;
    if (!tz)
        rm_tz_utc (&zone);
    else if (!rm_tz_find (tz, strlen (tz), &zone))
        return rm_xfail (err, op, "unrecognized time zone identifier: \"%s\"", tz);
    return rm_xdate_parse_in (cx, op, s, len, &zone, NULL, 0, ms, &conversion, err);
}
