/* The values options take: counts, sizes with units, durations with units.
 * Each reads the whole text or nothing: no sign (strtoull would take
 * "-5M" as a huge number, i.e. no limit), no blanks, nothing that passes
 * 2^64 - 1 (refused, never wrapped or saturated). */
#include <string.h>

#include "remodel/cli.h"

/* The decimal digits at *p (at least one) into *v, *p moved past them. */
static bool
digits (const char **p, uint64_t *v)
{
    const char *s = *p;
    *v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (*v > (UINT64_MAX - (unsigned) (*s - '0')) / 10)
            return false;
        *v = *v * 10 + (unsigned) (*s - '0');
    }
    *p = s;
    return true;
}

bool
rm_cli_parse_count (const char *text, uint64_t *out)
{
    return digits (&text, out) && *text == '\0';
}

bool
rm_cli_parse_size (const char *text, uint64_t *out)
{
    uint64_t v, mult = 1;
    const char *p = text;

    if (!digits (&p, &v))
        return false;
    switch (*p) {
    case 'k': case 'K': mult = 1ull << 10; p++; break;
    case 'm': case 'M': mult = 1ull << 20; p++; break;
    case 'g': case 'G': mult = 1ull << 30; p++; break;
    case 't': case 'T': mult = 1ull << 40; p++; break;
    default: break;
    }
    if (*p == 'B' || *p == 'b')
        p++;
    if (*p || v > UINT64_MAX / mult)
        return false;
    *out = v * mult;
    return true;
}

bool
rm_cli_parse_duration (const char *text, uint64_t unit_ms, uint64_t *ms)
{
    static const struct {
        const char *suffix;
        uint64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    uint64_t v, mult = unit_ms ? unit_ms : 1;
    const char *p = text;

    if (!digits (&p, &v))
        return false;
    if (*p) {
        size_t i;
        for (i = 0; i < sizeof units / sizeof *units; i++)
            if (strcmp (p, units[i].suffix) == 0)
                break;
        if (i == sizeof units / sizeof *units)
            return false;
        mult = units[i].ms;
    }
    if (v > UINT64_MAX / mult)
        return false;
    *ms = v * mult;
    return true;
}
