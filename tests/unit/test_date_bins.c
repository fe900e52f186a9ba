/* $dateTrunc's bins (remodel/datetrunc.h), as bucketize's calendar
 * windows use them: each case a date, a unit, a binSize, a timezone and a
 * startOfWeek, and the bin's start and end worked out by hand from the
 * manual's rules (bins counted from 2000-01-01 local time, or from the
 * first startOfWeek day on or after it; units of a day and more in local
 * time). Then properties over many dates: every date lies in its bin, a
 * bin's end is the next bin's start, and a bin's start is its own bin. */
#include <stdlib.h>
#include <time.h>

#include "remodel/datetrunc.h"
#include "test.h"

/* "2024-03-10T07:00:00Z" (or with .mmm) in ms, by the C library's timegm:
 * not by the code under test. */
static int64_t
ms_of (const char *iso)
{
    struct tm tm = {0};
    int ms = 0;
    if (sscanf (iso, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                &tm.tm_min, &tm.tm_sec, &ms) < 6)
        abort ();
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t) timegm (&tm) * 1000 + ms;
}

typedef struct {
    const char *date, *unit;
    int64_t bin;
    const char *tz, *sow; /* NULL: UTC, Sunday */
    const char *start, *end;
} bin_case_t;

static bool
bins_of (const char *unit, int64_t bin, const char *tz, const char *sow, rm_dt_bins_t *b)
{
    b->unit = rm_dt_unit (unit, strlen (unit));
    b->bin = bin;
    b->sow = sow ? rm_dt_day_of_week (sow, strlen (sow)) : 7;
    if (tz)
        return b->unit >= 0 && b->sow > 0 && rm_tz_find (tz, strlen (tz), &b->tz);
    rm_tz_utc (&b->tz);
    return b->unit >= 0 && b->sow > 0;
}

static void
run_cases (const bin_case_t *cases)
{
    for (const bin_case_t *c = cases; c->date; c++) {
        rm_dt_bins_t b;
        int64_t start, end;
        bson_error_t err;
        if (!bins_of (c->unit, c->bin, c->tz, c->sow, &b)) {
            fprintf (stderr, "  bad case %s %s\n", c->date, c->unit);
            T_CHECK (false);
            continue;
        }
        if (!rm_dt_bin (&b, ms_of (c->date), &start, &end, &err)) {
            fprintf (stderr, "  %s %s: %s\n", c->date, c->unit, err.message);
            T_CHECK (false);
            continue;
        }
        if (start != ms_of (c->start) || end != ms_of (c->end)) {
            fprintf (stderr, "  %s unit %s bin %lld tz %s sow %s: got [%lld, %lld) want [%s, %s)\n",
                     c->date, c->unit, (long long) c->bin, c->tz ? c->tz : "UTC",
                     c->sow ? c->sow : "-", (long long) start, (long long) end, c->start, c->end);
            T_CHECK (false);
        }
    }
}

#define NY "America/New_York"

/* New York's clocks: 2024-03-10 02:00 EST became 03:00 EDT (a 23-hour
 * day), 2024-11-03 02:00 EDT became 01:00 EST (a 25-hour day). */
static void
test_bins_across_dst (void)
{
    static const bin_case_t cases[] = {
        {"2024-03-10T06:59:59Z", "day", 1, NY, NULL, "2024-03-10T05:00:00Z", "2024-03-11T04:00:00Z"},
        {"2024-03-10T07:00:00Z", "day", 1, NY, NULL, "2024-03-10T05:00:00Z", "2024-03-11T04:00:00Z"},
        {"2024-11-03T05:30:00Z", "day", 1, NY, NULL, "2024-11-03T04:00:00Z", "2024-11-04T05:00:00Z"},
        {"2024-11-03T06:30:00Z", "day", 1, NY, NULL, "2024-11-03T04:00:00Z", "2024-11-04T05:00:00Z"},
        /* hours are counted in absolute time from 2000-01-01 local */
        {"2024-11-03T06:30:00Z", "hour", 1, NY, NULL, "2024-11-03T06:00:00Z", "2024-11-03T07:00:00Z"},
        {"2024-07-01T12:00:00Z", "hour", 6, NY, NULL, "2024-07-01T11:00:00Z", "2024-07-01T17:00:00Z"},
        /* a month starting in EST and ending in EDT */
        {"2024-03-15T12:00:00Z", "month", 1, NY, NULL, "2024-03-01T05:00:00Z", "2024-04-01T04:00:00Z"},
        {"2024-04-01T03:59:59.999Z", "month", 1, NY, NULL, "2024-03-01T05:00:00Z", "2024-04-01T04:00:00Z"},
        {"2024-04-01T04:00:00Z", "month", 1, NY, NULL, "2024-04-01T04:00:00Z", "2024-05-01T04:00:00Z"},
        {"2025-01-01T04:59:59Z", "year", 1, NY, NULL, "2024-01-01T05:00:00Z", "2025-01-01T05:00:00Z"},
        {"2025-01-01T05:00:00Z", "year", 1, NY, NULL, "2025-01-01T05:00:00Z", "2026-01-01T05:00:00Z"},
        /* the week of the spring change, from Sunday local midnight */
        {"2024-03-13T12:00:00Z", "week", 1, NY, NULL, "2024-03-10T05:00:00Z", "2024-03-17T04:00:00Z"},
        /* Sao Paulo's clocks went from 00:00 to 01:00 on 2018-11-04: that
         * day starts at 01:00, where the day before ends */
        {"2018-11-04T12:00:00Z", "day", 1, "America/Sao_Paulo", NULL, "2018-11-04T03:00:00Z",
         "2018-11-05T02:00:00Z"},
        {"2018-11-03T12:00:00Z", "day", 1, "America/Sao_Paulo", NULL, "2018-11-03T03:00:00Z",
         "2018-11-04T03:00:00Z"},
        /* fixed offsets */
        {"2024-11-27T20:00:00Z", "day", 1, "+05:30", NULL, "2024-11-27T18:30:00Z", "2024-11-28T18:30:00Z"},
        {"2024-11-30T19:00:00Z", "month", 1, "+05:30", NULL, "2024-11-30T18:30:00Z", "2024-12-31T18:30:00Z"},
        {"2024-01-01T02:00:00Z", "year", 1, "-0500", NULL, "2023-01-01T05:00:00Z", "2024-01-01T05:00:00Z"},
        {NULL, NULL, 0, NULL, NULL, NULL, NULL},
    };
    run_cases (cases);
}

static void
test_bins_leap_years (void)
{
    static const bin_case_t cases[] = {
        /* 2000 is a leap year (divisible by 400): 366 days */
        {"2000-12-31T23:59:59Z", "year", 1, NULL, NULL, "2000-01-01T00:00:00Z", "2001-01-01T00:00:00Z"},
        {"2000-02-29T00:00:00Z", "month", 1, NULL, NULL, "2000-02-01T00:00:00Z", "2000-03-01T00:00:00Z"},
        {"2024-02-29T12:00:00Z", "month", 1, NULL, NULL, "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"},
        {"2024-02-29T12:00:00Z", "day", 1, NULL, NULL, "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z"},
        /* 2100 is not (divisible by 100, not 400) */
        {"2100-02-28T23:00:00Z", "month", 1, NULL, NULL, "2100-02-01T00:00:00Z", "2100-03-01T00:00:00Z"},
        {"2100-03-01T00:00:00Z", "day", 1, NULL, NULL, "2100-03-01T00:00:00Z", "2100-03-02T00:00:00Z"},
        /* a year's bin does not drift: 2000, 2001, ... each from Jan 1 */
        {"2001-12-25T00:00:00Z", "year", 1, NULL, NULL, "2001-01-01T00:00:00Z", "2002-01-01T00:00:00Z"},
        {"2024-12-31T23:59:59.999Z", "year", 1, NULL, NULL, "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
        /* before 1970 and before 2000 */
        {"1969-12-31T23:59:59Z", "year", 1, NULL, NULL, "1969-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
        {"1996-02-29T05:00:00Z", "month", 1, NULL, NULL, "1996-02-01T00:00:00Z", "1996-03-01T00:00:00Z"},
        {NULL, NULL, 0, NULL, NULL, NULL, NULL},
    };
    run_cases (cases);
}

/* 2000-01-01 was a Saturday: week bins start at the first startOfWeek
 * day on or after it. 2024-11-27 is a Wednesday. */
static void
test_bins_start_of_week (void)
{
    static const bin_case_t cases[] = {
        {"2024-11-27T10:00:00Z", "week", 1, NULL, NULL, "2024-11-24T00:00:00Z", "2024-12-01T00:00:00Z"},
        {"2024-11-27T10:00:00Z", "week", 1, NULL, "sunday", "2024-11-24T00:00:00Z", "2024-12-01T00:00:00Z"},
        {"2024-11-27T10:00:00Z", "week", 1, NULL, "monday", "2024-11-25T00:00:00Z", "2024-12-02T00:00:00Z"},
        {"2024-11-27T10:00:00Z", "week", 1, NULL, "MON", "2024-11-25T00:00:00Z", "2024-12-02T00:00:00Z"},
        {"2024-11-27T10:00:00Z", "week", 1, NULL, "sat", "2024-11-23T00:00:00Z", "2024-11-30T00:00:00Z"},
        {"2024-11-27T10:00:00Z", "week", 1, NULL, "Wednesday", "2024-11-27T00:00:00Z", "2024-12-04T00:00:00Z"},
        /* two-week bins from Monday 2000-01-03: 2024-11-25 is week 1299,
         * odd, so its bin began a week before */
        {"2024-11-27T10:00:00Z", "week", 2, NULL, "monday", "2024-11-18T00:00:00Z", "2024-12-02T00:00:00Z"},
        {"2024-11-25T00:00:00Z", "week", 2, NULL, "monday", "2024-11-18T00:00:00Z", "2024-12-02T00:00:00Z"},
        {"2024-12-02T00:00:00Z", "week", 2, NULL, "monday", "2024-12-02T00:00:00Z", "2024-12-16T00:00:00Z"},
        {"2024-11-27T10:00:00Z", "week", 1, "+05:30", "monday", "2024-11-24T18:30:00Z", "2024-12-01T18:30:00Z"},
        {NULL, NULL, 0, NULL, NULL, NULL, NULL},
    };
    run_cases (cases);
}

/* binSize counts bins from the reference: months from January 2000,
 * quarters from its first, years from 2000. */
static void
test_bins_bin_size (void)
{
    static const bin_case_t cases[] = {
        /* 2024-05 is month 292 of 2000: 291 starts its bin of 3, 290 of 5 */
        {"2024-05-10T00:00:00Z", "month", 3, NULL, NULL, "2024-04-01T00:00:00Z", "2024-07-01T00:00:00Z"},
        {"2024-05-10T00:00:00Z", "quarter", 1, NULL, NULL, "2024-04-01T00:00:00Z", "2024-07-01T00:00:00Z"},
        {"2024-05-10T00:00:00Z", "month", 5, NULL, NULL, "2024-03-01T00:00:00Z", "2024-08-01T00:00:00Z"},
        {"2024-05-10T00:00:00Z", "month", 5, NY, NULL, "2024-03-01T05:00:00Z", "2024-08-01T04:00:00Z"},
        /* quarter 98 (2024-Q3) and 97 (Q2) in halves */
        {"2024-08-15T00:00:00Z", "quarter", 2, NULL, NULL, "2024-07-01T00:00:00Z", "2025-01-01T00:00:00Z"},
        {"2024-05-15T00:00:00Z", "quarter", 2, NULL, NULL, "2024-01-01T00:00:00Z", "2024-07-01T00:00:00Z"},
        {"2023-06-01T00:00:00Z", "year", 4, NULL, NULL, "2020-01-01T00:00:00Z", "2024-01-01T00:00:00Z"},
        {"1999-05-05T00:00:00Z", "year", 10, NULL, NULL, "1990-01-01T00:00:00Z", "2000-01-01T00:00:00Z"},
        {"2025-06-01T00:00:00Z", "year", 2, NY, NULL, "2024-01-01T05:00:00Z", "2026-01-01T05:00:00Z"},
        /* the manual's forum example: 7-day bins start 2024-11-30 */
        {"2024-12-03T00:00:00Z", "day", 7, NULL, NULL, "2024-11-30T00:00:00Z", "2024-12-07T00:00:00Z"},
        {"2024-12-03T10:11:12.345Z", "second", 15, NULL, NULL, "2024-12-03T10:11:00Z", "2024-12-03T10:11:15Z"},
        {"2024-12-03T10:11:12.345Z", "millisecond", 100, NULL, NULL, "2024-12-03T10:11:12.300Z",
         "2024-12-03T10:11:12.400Z"},
        {NULL, NULL, 0, NULL, NULL, NULL, NULL},
    };
    run_cases (cases);
}

/* Over 30 years of dates a few hours apart (and random milliseconds),
 * in zones with daylight saving time (one whose change is at midnight):
 * date in [start, end), the bin of start is [start, end), the bin of
 * end starts at end. */
static void
test_bins_properties (void)
{
    static const char *const zones[] = {NULL, NY, "America/Sao_Paulo", "Australia/Lord_Howe",
                                        "+05:45"};
    static const struct {
        const char *unit;
        int64_t bin;
        const char *sow;
    } kinds[] = {{"year", 1, NULL}, {"year", 3, NULL}, {"quarter", 1, NULL}, {"quarter", 3, NULL},
                 {"month", 1, NULL}, {"month", 7, NULL}, {"week", 1, "tue"}, {"week", 3, NULL},
                 {"day", 1, NULL}, {"day", 10, NULL}, {"hour", 5, NULL}, {"minute", 90, NULL}};
    uint64_t seed = 20261127;
    int checked = 0;
    for (size_t z = 0; z < sizeof zones / sizeof zones[0]; z++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            rm_dt_bins_t b;
            T_CHECK (bins_of (kinds[k].unit, kinds[k].bin, zones[z], kinds[k].sow, &b));
            for (int i = 0; i < 2000; i++) {
                int64_t t = ms_of ("1990-01-01T00:00:00Z") +
                            (int64_t) (t_xorshift (&seed) % (UINT64_C (30) * 365 * 86400000));
                int64_t s, e, s2, e2, s3, e3;
                bson_error_t err;
                bool ok = rm_dt_bin (&b, t, &s, &e, &err) && rm_dt_bin (&b, s, &s2, &e2, &err) &&
                          rm_dt_bin (&b, e, &s3, &e3, &err);
                if (!ok || !(s <= t && t < e) || s2 != s || e2 != e || s3 != e) {
                    fprintf (stderr, "  %s %s/%lld at %lld: [%lld, %lld) [%lld, %lld) next %lld\n",
                             zones[z] ? zones[z] : "UTC", kinds[k].unit, (long long) kinds[k].bin,
                             (long long) t, (long long) s, (long long) e, (long long) s2,
                             (long long) e2, (long long) s3);
                    T_CHECK (false);
                    break;
                }
                checked++;
            }
        }
    T_CHECK (checked == 5 * 12 * 2000);
}

static void
test_bins_names_and_bounds (void)
{
    rm_dt_bins_t b;
    int64_t s, e;
    bson_error_t err;
    T_CHECK (rm_dt_unit ("month", 5) == RM_DT_MONTH);
    T_CHECK (rm_dt_unit ("months", 6) == -1);
    T_CHECK (rm_dt_unit ("Month", 5) == -1);
    T_CHECK_STR (rm_dt_unit_name (RM_DT_QUARTER), "quarter");
    T_CHECK (rm_dt_day_of_week ("sun", 3) == 7);
    T_CHECK (rm_dt_day_of_week ("FRIDAY", 6) == 5);
    T_CHECK (rm_dt_day_of_week ("fr", 2) == -1);
    /* the server's bound on binSize for units of a day and more */
    T_CHECK (bins_of ("year", INT64_C (100000000001), NULL, NULL, &b));
    T_CHECK (!rm_dt_bin (&b, 0, &s, &e, &err));
    T_CHECK (strstr (err.message, "unsupported binSize") != NULL);
    /* an end past the dates an int64 of ms holds */
    T_CHECK (bins_of ("millisecond", 10, NULL, NULL, &b));
    T_CHECK (!rm_dt_bin (&b, INT64_MAX - 2, &s, &e, &err));
    T_CHECK (strstr (err.message, "overflowed") != NULL);
}

int
main (void)
{
    T_RUN (test_bins_across_dst);
    T_RUN (test_bins_leap_years);
    T_RUN (test_bins_start_of_week);
    T_RUN (test_bins_bin_size);
    T_RUN (test_bins_properties);
    T_RUN (test_bins_names_and_bounds);
    return t_done ();
}
