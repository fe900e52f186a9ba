/* Time zones for the date operators (expr_tz.h): fixed offsets as the
 * server reads them, Olson zones read from the TZif files of the system's
 * tz database (Debian's tzdata) into a process-wide table, and the
 * proleptic Gregorian calendar the operators count days with.
 *
 * A TZif file's version 2+ body holds 64-bit transition times, and its
 * footer a POSIX TZ string ("EST5EDT,M3.2.0,M11.1.0") that rules the
 * times after the last transition; a "slim" file (zic -b slim) stops its
 * table early and leaves the rest to the footer, so both are read. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_tz.h"

#define ZONEINFO "/usr/share/zoneinfo/"
/* The largest TZif file read (the biggest of tzdata's are near 4 KiB). */
#define TZIF_MAX (1 << 20)

/* ---- Calendar ---- */

bool
rm_cal_leap (int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int
rm_cal_month_days (int64_t y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && rm_cal_leap (y) ? 29 : days[m - 1];
}

/* Counted in 400-year eras from 0000-03-01, so that the leap day ends a
 * year of the count and each era is the same 146097 days. */
int64_t
rm_cal_days (int64_t y, int m, int d)
{
    int64_t yy = m <= 2 ? y - 1 : y;
    int64_t era = rm_cal_fdiv (yy, 400);
    int64_t yoe = yy - era * 400;
    int64_t mp = m > 2 ? m - 3 : m + 9;
    int64_t doy = (153 * mp + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void
rm_cal_civil (int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = rm_cal_fdiv (z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int) (doy - (153 * mp + 2) / 5 + 1);
    *m = (int) (mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

void
rm_cal_iso_week (int64_t days, int64_t *iso_year, int *week)
{
    /* The week belongs to the year of its Thursday. */
    int64_t thu = days - rm_cal_iso_dow (days) + 4, y;
    int m, d;
    rm_cal_civil (thu, &y, &m, &d);
    *iso_year = y;
    *week = (int) ((thu - rm_cal_days (y, 1, 1)) / 7 + 1);
}

int64_t
rm_cal_iso_days (int64_t y, int64_t w, int64_t d)
{
    int64_t jan4 = rm_cal_days (y, 1, 4);
    int64_t monday1 = jan4 - (rm_cal_iso_dow (jan4) - 1);
    return monday1 + (w - 1) * 7 + (d - 1);
}

/* ---- POSIX TZ strings (a TZif footer) ---- */

typedef struct {
    char kind;        /* 'J' (1-365, no leap day), 'N' (0-365), 'M' (month.week.day) */
    int n, m, w, d;
    int32_t time;     /* seconds after local midnight (may be negative or past 24h) */
} tzrule_t;

typedef struct {
    int32_t std_off, dst_off; /* seconds east of UTC */
    bool has_dst;
    tzrule_t start, end;
} posix_tz_t;

static bool
posix_name (const char **p)
{
    const char *s = *p;
    if (*s == '<') {
        const char *e = strchr (s, '>');
        if (!e)
            return false;
        *p = e + 1;
        return true;
    }
    while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
        s++;
    if (s - *p < 3)
        return false;
    *p = s;
    return true;
}

static bool
posix_num (const char **p, int *v)
{
    const char *s = *p;
    int n = 0;
    if (*s < '0' || *s > '9')
        return false;
    while (*s >= '0' && *s <= '9' && n < 100000)
        n = n * 10 + (*s++ - '0');
    *v = n;
    *p = s;
    return true;
}

/* [+-]hh[:mm[:ss]], in seconds. */
static bool
posix_time (const char **p, int32_t *secs)
{
    int sign = 1, h, mi = 0, se = 0;
    if (**p == '+' || **p == '-')
        sign = *(*p)++ == '-' ? -1 : 1;
    if (!posix_num (p, &h))
        return false;
    if (**p == ':') {
        (*p)++;
        if (!posix_num (p, &mi))
            return false;
        if (**p == ':') {
            (*p)++;
            if (!posix_num (p, &se))
                return false;
        }
    }
    *secs = sign * (h * 3600 + mi * 60 + se);
    return true;
}

static bool
posix_rule (const char **p, tzrule_t *r)
{
    r->time = 7200;
    if (**p == 'J') {
        (*p)++;
        r->kind = 'J';
        if (!posix_num (p, &r->n))
            return false;
    } else if (**p == 'M') {
        (*p)++;
        r->kind = 'M';
        if (!posix_num (p, &r->m) || *(*p)++ != '.' || !posix_num (p, &r->w) || *(*p)++ != '.' ||
            !posix_num (p, &r->d))
            return false;
        if (r->m < 1 || r->m > 12 || r->w < 1 || r->w > 5 || r->d > 6)
            return false;
    } else {
        r->kind = 'N';
        if (!posix_num (p, &r->n))
            return false;
    }
    if (**p == '/') {
        (*p)++;
        if (!posix_time (p, &r->time))
            return false;
    }
    return true;
}

static bool
posix_parse (const char *s, posix_tz_t *tz)
{
    int32_t off;
    memset (tz, 0, sizeof *tz);
    if (!posix_name (&s) || !posix_time (&s, &off))
        return false;
    /* POSIX counts west of UTC as positive. */
    tz->std_off = -off;
    if (!*s)
        return true;
    if (!posix_name (&s))
        return false;
    tz->has_dst = true;
    tz->dst_off = tz->std_off + 3600;
    if (*s && *s != ',') {
        if (!posix_time (&s, &off))
            return false;
        tz->dst_off = -off;
    }
    if (*s != ',') {
        /* No rules: POSIX leaves them to the implementation; the usual
         * default is the US rules. */
        tz->start = (tzrule_t) {'M', 0, 3, 2, 0, 7200};
        tz->end = (tzrule_t) {'M', 0, 11, 1, 0, 7200};
        return *s == '\0';
    }
    s++;
    if (!posix_rule (&s, &tz->start) || *s++ != ',' || !posix_rule (&s, &tz->end))
        return false;
    return *s == '\0';
}

/* The local midnight (day number) a rule falls on in year y. */
static int64_t
rule_day (const tzrule_t *r, int64_t y)
{
    int64_t jan1 = rm_cal_days (y, 1, 1);
    if (r->kind == 'J')
        return jan1 + r->n - 1 + (rm_cal_leap (y) && r->n >= 60 ? 1 : 0);
    if (r->kind == 'N')
        return jan1 + r->n;
    int64_t first = rm_cal_days (y, r->m, 1);
    int dow0 = rm_cal_iso_dow (first) % 7; /* 0 = Sunday */
    int64_t day = first + (r->d - dow0 + 7) % 7 + (int64_t) (r->w - 1) * 7;
    int64_t last = first + rm_cal_month_days (y, r->m) - 1;
    while (day > last)
        day -= 7;
    return day;
}

static int32_t
posix_offset (const posix_tz_t *tz, int64_t t)
{
    int64_t y, start, end;
    int m, d;
    if (!tz->has_dst)
        return tz->std_off;
    rm_cal_civil (rm_cal_fdiv (t + tz->std_off, 86400), &y, &m, &d);
    start = rule_day (&tz->start, y) * 86400 + tz->start.time - tz->std_off;
    end = rule_day (&tz->end, y) * 86400 + tz->end.time - tz->dst_off;
    if (start < end)
        return t >= start && t < end ? tz->dst_off : tz->std_off;
    /* The southern hemisphere: daylight time spans the new year. */
    return t >= end && t < start ? tz->std_off : tz->dst_off;
}

/* ---- TZif files ---- */

struct rm_tzzone {
    char *name;
    size_t n;          /* transitions */
    int64_t *at;       /* their instants, ascending */
    int32_t *off;      /* the offset from each on */
    int32_t off0;      /* before the first */
    bool has_rule;     /* the footer rules past the last */
    posix_tz_t rule;
    rm_tzzone_t *next;
};

static pthread_mutex_t zones_lock = PTHREAD_MUTEX_INITIALIZER;
static rm_tzzone_t *zones;

static uint32_t
be32 (const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static int64_t
be64 (const uint8_t *p)
{
    return (int64_t) ((uint64_t) be32 (p) << 32 | be32 (p + 4));
}

/* Reads the TZif bytes (data, len) into z: false if they are not one. */
static bool
tzif_read (const uint8_t *data, size_t len, rm_tzzone_t *z)
{
    const uint8_t *p = data, *end = data + len;
    uint32_t c[6];
    int tsize = 4;

    for (int pass = 0; pass < 2; pass++) {
        if (end - p < 44 || memcmp (p, "TZif", 4))
            return false;
        for (int i = 0; i < 6; i++)
            c[i] = be32 (p + 20 + 4 * i);
        /* isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt */
        uint64_t body = (uint64_t) c[3] * tsize + c[3] + (uint64_t) c[4] * 6 + c[5] +
                        (uint64_t) c[2] * (tsize + 4) + c[1] + c[0];
        if (c[4] == 0 || c[4] > 256 || body > (uint64_t) (end - p - 44))
            return false;
        if (pass == 0 && p[4] >= '2') {
            p += 44 + body; /* the 32-bit body: skipped for the 64-bit one */
            tsize = 8;
            continue;
        }
        const uint8_t *times = p + 44, *idx = times + (size_t) c[3] * tsize,
                      *types = idx + c[3];
        z->n = c[3];
        z->at = malloc ((z->n ? z->n : 1) * sizeof *z->at);
        z->off = malloc ((z->n ? z->n : 1) * sizeof *z->off);
        if (!z->at || !z->off)
            return false;
        for (size_t i = 0; i < z->n; i++) {
            if (idx[i] >= c[4])
                return false;
            z->at[i] = tsize == 8 ? be64 (times + 8 * i) : (int32_t) be32 (times + 4 * i);
            z->off[i] = (int32_t) be32 (types + 6 * idx[i]);
        }
        z->off0 = (int32_t) be32 (types);
        p += 44 + body;
        if (tsize == 8 && p < end && *p == '\n') {
            const uint8_t *nl = memchr (p + 1, '\n', (size_t) (end - p - 1));
            char footer[256];
            size_t fl = nl ? (size_t) (nl - p - 1) : 0;
            if (nl && fl > 0 && fl < sizeof footer) {
                memcpy (footer, p + 1, fl);
                footer[fl] = '\0';
                z->has_rule = posix_parse (footer, &z->rule);
            }
        }
        return true;
    }
    return false;
}

/* A name the tz database could hold: no way out of its folder, and none
 * of the copies of it Debian keeps beside it (posix/, right/). */
static bool
zone_name_ok (const char *name, size_t len)
{
    if (len == 0 || len > 200 || name[0] == '/' || name[0] == '.')
        return false;
    if (!strncmp (name, "posix/", 6) || !strncmp (name, "right/", 6) ||
        (len == 10 && !memcmp (name, "posixrules", 10)) || (len == 9 && !memcmp (name, "localtime", 9)))
        return false;
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '/' || ch == '_' || ch == '-' || ch == '+' || ch == '.'))
            return false;
        if (ch == '.' && i > 0 && name[i - 1] == '/')
            return false;
        if (ch == '/' && (i + 1 == len || name[i + 1] == '/'))
            return false;
    }
    return true;
}

static void
zone_free (rm_tzzone_t *z)
{
    free (z->name);
    free (z->at);
    free (z->off);
    free (z);
}

static rm_tzzone_t *
zone_load (const char *name, size_t len)
{
    char path[256];
    FILE *f;
    uint8_t *data;
    size_t got;
    rm_tzzone_t *z;

    snprintf (path, sizeof path, ZONEINFO "%.*s", (int) len, name);
    f = fopen (path, "rb");
    if (!f)
        return NULL;
    data = malloc (TZIF_MAX);
    got = data ? fread (data, 1, TZIF_MAX, f) : 0;
    fclose (f);
    z = calloc (1, sizeof *z);
    if (!data || !z || !tzif_read (data, got, z)) {
        free (data);
        if (z)
            zone_free (z);
        return NULL;
    }
    free (data);
    z->name = malloc (len + 1);
    if (!z->name) {
        zone_free (z);
        return NULL;
    }
    memcpy (z->name, name, len);
    z->name[len] = '\0';
    return z;
}

static const rm_tzzone_t *
zone_get (const char *name, size_t len)
{
    rm_tzzone_t *z;
    if (!zone_name_ok (name, len))
        return NULL;
    pthread_mutex_lock (&zones_lock);
    for (z = zones; z; z = z->next)
        if (strlen (z->name) == len && !memcmp (z->name, name, len))
            break;
    if (!z && (z = zone_load (name, len))) {
        z->next = zones;
        zones = z;
    }
    pthread_mutex_unlock (&zones_lock);
    return z;
}

/* ---- Zones ---- */

void
rm_tz_utc (rm_tz_t *tz)
{
    tz->zone = NULL;
    tz->offset = 0;
    tz->utc = true;
}

static bool
two_digits (const char *s, int *v)
{
    if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
        return false;
    *v = (s[0] - '0') * 10 + (s[1] - '0');
    return true;
}

/* ±HH, ±HHMM, ±HH:MM: the server's forms, with no range check on the
 * digits (as its parseUtcOffset has none). */
static bool
parse_offset (const char *s, size_t len, int32_t *secs)
{
    int h, m = 0;
    if (len < 3 || (s[0] != '+' && s[0] != '-') || !two_digits (s + 1, &h))
        return false;
    if (len == 5) {
        if (!two_digits (s + 3, &m))
            return false;
    } else if (len == 6) {
        if (s[3] != ':' || !two_digits (s + 4, &m))
            return false;
    } else if (len != 3) {
        return false;
    }
    *secs = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return true;
}

bool
rm_tz_find (const char *name, size_t len, rm_tz_t *tz)
{
    int32_t off;
    rm_tz_utc (tz);
    if (len == 3 && !memcmp (name, "UTC", 3))
        return true;
    if (memchr (name, '\0', len))
        return false;
    if (parse_offset (name, len, &off)) {
        tz->offset = off;
        tz->utc = off == 0;
        return true;
    }
    tz->zone = zone_get (name, len);
    tz->utc = false;
    return tz->zone != NULL;
}

int32_t
rm_tz_offset (const rm_tz_t *tz, int64_t t)
{
    const rm_tzzone_t *z = tz->zone;
    size_t lo, hi;
    if (!z)
        return tz->offset;
    if (z->n == 0)
        return z->has_rule ? posix_offset (&z->rule, t) : z->off0;
    if (t < z->at[0])
        return z->off0;
    if (t >= z->at[z->n - 1] && z->has_rule)
        return posix_offset (&z->rule, t);
    /* the last transition at or before t */
    lo = 0;
    hi = z->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->at[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return z->off[lo];
}

int64_t
rm_tz_to_utc (const rm_tz_t *tz, int64_t local)
{
    int32_t before, after;
    if (!tz->zone)
        return local - tz->offset;
    /* The offsets a day either side: one of them holds at the answer
     * unless two changes fall within two days (none does in tzdata). */
    before = rm_tz_offset (tz, local - 86400);
    after = rm_tz_offset (tz, local + 86400);
    if (rm_tz_offset (tz, local - before) == before)
        return local - before;
    if (rm_tz_offset (tz, local - after) == after)
        return local - after;
    return local - before;
}
