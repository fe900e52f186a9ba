/* The strings of top-level fields that a table's export wrote as text
 * (analyze_int.h, rm_analyze_count_string): dates ("2007-01-01T00:00:00Z",
 * "1996-03-13"), integers and decimals ("42", "12.50") and yes/no flags
 * ("Y"/"N"), counted per field in the first pass, as each string is met:
 * which fields are worth it is known only at its end (analyze_import.c
 * keeps the counts of those), and reading the dump again to count them
 * cost more than counting every field's. */
#include <ctype.h>
#include <string.h>

#include "analyze_int.h"

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
        if (shape[i] == 'd' ? !isdigit ((unsigned char) s[i]) : s[i] != shape[i])
            return false;
    if (n == 10)
        return true;
    if ((s[10] != 'T' && s[10] != ' ') || n < 16 || !isdigit ((unsigned char) s[11]) ||
        !isdigit ((unsigned char) s[12]) || s[13] != ':' || !isdigit ((unsigned char) s[14]) ||
        !isdigit ((unsigned char) s[15]))
        return false;
    i = 16;
    if (i < n && s[i] == ':') {
        if (i + 3 > n || !isdigit ((unsigned char) s[i + 1]) || !isdigit ((unsigned char) s[i + 2]))
            return false;
        i += 3;
        if (i < n && s[i] == '.')
            for (i++; i < n && isdigit ((unsigned char) s[i]); i++)
                ;
    }
    if (i == n)
        return true;
    if (s[i] == 'Z')
        return i + 1 == n;
    if (s[i] != '+' && s[i] != '-')
        return false;
    for (i++; i < n; i++)
        if (!isdigit ((unsigned char) s[i]) && s[i] != ':')
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
        if (!isdigit ((unsigned char) s[i]))
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
        if (!isdigit ((unsigned char) *p))
            return false;
    return true;
}

static bool
is_flag (const char *s, uint32_t n)
{
    static const char *const flags[] = {"Y", "N", "y", "n", "yes", "no", "Yes", "No", "YES", "NO",
                                        NULL};
    for (size_t i = 0; flags[i]; i++)
        if (strlen (flags[i]) == n && !memcmp (flags[i], s, n))
            return true;
    return false;
}

void
rm_analyze_count_string (rm_field_t *f, const uint8_t *v)
{
    uint32_t n = (uint32_t) v[0] | (uint32_t) v[1] << 8 | (uint32_t) v[2] << 16 | (uint32_t) v[3] << 24;
    const char *s = (const char *) v + 4;
    /* n counts the final NUL; an empty string is not counted. */
    if (n <= 1)
        return;
    n--;
    f->str_seen++;
    /* Dates and numbers begin with a digit or '-', flags are at most 3
     * bytes: most strings (names, words) stop here. */
    if (n > 3 && !isdigit ((unsigned char) s[0]) && s[0] != '-')
        return;
    f->str_dates += is_date (s, n);
    f->str_ints += is_int (s, n);
    f->str_decimals += is_decimal (s, n);
    f->str_flags += is_flag (s, n);
}
