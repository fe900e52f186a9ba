/* Time zones and the calendar for the date operators: a zone is UTC, a
 * fixed offset ("+04:45", "-0530", "+03", as the server's
 * TimeZoneDatabase::parseUtcOffset takes them) or an Olson zone read from
 * the system's tz database (the TZif files of /usr/share/zoneinfo:
 * version 2+ 64-bit data, and the footer's POSIX TZ string for the times
 * past its table). Olson zones are loaded once into a process-wide table
 * (a mutex guards it) and live until the process ends: an operator with a
 * constant timezone resolves it when parsed, one with a computed timezone
 * finds it in the table (loading it the first time only).
 *
 * rm_tz_t, rm_tz_utc and rm_tz_find are public (remodel/datetrunc.h).
 *
 * The calendar is the proleptic Gregorian one, by days since 1970-01-01,
 * for any year an int64 of milliseconds can reach. */
#ifndef REMODEL_EXPR_TZ_H
#define REMODEL_EXPR_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expr_impl.h"
#include "remodel/datetrunc.h"

/* The offset from UTC, in seconds, at the instant t (seconds since the
 * epoch). */
int32_t rm_tz_offset (const rm_tz_t *tz, int64_t t);
/* The instant whose local time in tz is local (seconds as if UTC): in a
 * gap (clocks moved forward) the offset before the change is used, so the
 * time lands after it; in an overlap, the earlier instant. */
int64_t rm_tz_to_utc (const rm_tz_t *tz, int64_t local);

/* ---- Calendar ---- */

/* Days since 1970-01-01 of y-m-d (m 1-12, d 1-31; no checks). */
int64_t rm_cal_days (int64_t y, int m, int d);
/* The civil date of a day number. */
void rm_cal_civil (int64_t days, int64_t *y, int *m, int *d);
bool rm_cal_leap (int64_t y);
int rm_cal_month_days (int64_t y, int m);
/* Floor division and its remainder (0 <= r < b). */
static inline int64_t
rm_cal_fdiv (int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
static inline int64_t
rm_cal_fmod (int64_t a, int64_t b)
{
    return a - rm_cal_fdiv (a, b) * b;
}
/* ISO 8601 day of week of a day number: 1 (Monday) to 7 (Sunday). */
static inline int
rm_cal_iso_dow (int64_t days)
{
    /* 1970-01-01 was a Thursday (4) */
    return (int) rm_cal_fmod (days + 3, 7) + 1;
}
/* The ISO week-numbering year and week of a day number. */
void rm_cal_iso_week (int64_t days, int64_t *iso_year, int *week);
/* The day number of ISO year y, week w, day d (1-7), carried as the
 * server carries them (week 0, day 8). */
int64_t rm_cal_iso_days (int64_t y, int64_t w, int64_t d);

/* ---- Dates from strings (expr_date_parse.c) ---- */

/* Parses s (len bytes) into *ms: with format NULL, leniently as the
 * server's $dateFromString without a format does; else by the format's
 * specifiers. tz is the timezone argument (a zone in the string conflicts
 * with any tz that is not UTC). On a failure *conversion says whether it
 * is a conversion failure (what onError catches) rather than a bad
 * format. */
bool rm_xdate_parse_in (rm_expr_ctx_t *cx, const rm_expr_t *op, const char *s, size_t len,
                        const rm_tz_t *tz, const char *format, size_t format_len, int64_t *ms,
                        bool *conversion, bson_error_t *err);
/* The specifiers $dateFromString takes after '%'. */
extern const char rm_xdate_from_specs[];
/* Whether format holds only the specifiers in specs after each '%' ("%%"
 * stands for itself; a message in why, cap bytes, when not): for
 * $dateFromString's and $dateToString's formats. */
bool rm_xdate_format_ok (const char *specs, const char *format, size_t len, char *why, size_t cap);

#endif
