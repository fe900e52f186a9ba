/* $dateTrunc's bins outside an expression: the window a date falls in,
 * for a unit, a binSize, a timezone and a startOfWeek, as the server's
 * $dateTrunc defines them (bins counted from 2000-01-01 local time, or
 * from the first startOfWeek day on or after it for weeks). One
 * computation serves both the operator (common/expr/expr_date.c) and
 * bucketize's calendar windows (common/engine/bucket_record.c), so the
 * two cannot disagree. */
#ifndef REMODEL_DATETRUNC_H
#define REMODEL_DATETRUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bson/bson.h>

typedef struct rm_tzzone rm_tzzone_t;

/* A timezone: UTC, a fixed offset or an Olson zone (loaded once a
 * process, never freed: a copy of the struct stays valid). */
typedef struct {
    const rm_tzzone_t *zone; /* an Olson zone; NULL: a fixed offset */
    int32_t offset;          /* the fixed offset, in seconds */
    bool utc;                /* the server's UTC zone ("UTC", an offset of 0, none) */
} rm_tz_t;

/* The UTC zone. */
void rm_tz_utc (rm_tz_t *tz);
/* Resolves a timezone argument (an Olson name or an offset such as
 * "+04:45", "-0530"): false if it is neither. May read a file the first
 * time a name is seen. */
bool rm_tz_find (const char *name, size_t len, rm_tz_t *tz);

/* $dateTrunc's units, largest first (the order of their names). */
enum {
    RM_DT_YEAR, RM_DT_QUARTER, RM_DT_MONTH, RM_DT_WEEK, RM_DT_DAY,
    RM_DT_HOUR, RM_DT_MINUTE, RM_DT_SECOND, RM_DT_MILLISECOND
};
/* A unit's index from its name (exact, lower case), -1 if none. */
int rm_dt_unit (const char *name, size_t len);
const char *rm_dt_unit_name (int unit);
/* A day of the week from its name, full or of three letters, in any
 * case: 1 Monday .. 7 Sunday, -1 if none. */
int rm_dt_day_of_week (const char *name, size_t len);

typedef struct {
    int unit;       /* RM_DT_* */
    int64_t bin;    /* binSize, at least 1 */
    int sow;        /* startOfWeek (unit week only): 1 Monday .. 7 Sunday */
    rm_tz_t tz;
} rm_dt_bins_t;

/* The bin of date: *start its $dateTrunc, *end the next bin's start
 * (exclusive). False with err set (RM_ERR_DATA) when either falls
 * outside an int64 of milliseconds, or binSize is past the server's
 * bound for units of a day and more. Allocates nothing. */
bool rm_dt_bin (const rm_dt_bins_t *b, int64_t date, int64_t *start, int64_t *end,
                bson_error_t *err);

#endif
