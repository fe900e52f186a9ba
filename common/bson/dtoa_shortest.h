/* The shortest decimal digits that read back as a double (issue 61): what
 * $toString of a double (common/expr/expr_convert.c) and Extended JSON's
 * doubles (extjson.c) print, in tens of nanoseconds instead of a loop of
 * snprintf and strtod. Internal to the library. */
#ifndef REMODEL_DTOA_SHORTEST_H
#define REMODEL_DTOA_SHORTEST_H

/* Room for the digits and their NUL: 17 digits always read back. */
#define RM_DTOA_DIGITS 18

/* The digits of a positive finite d (not zero): the fewest that read back
 * as d with a correctly rounding reader (strtod), and among those the
 * closest to d, the even last digit on an exact tie; no trailing zeros.
 * Writes them NUL-terminated to dig (RM_DTOA_DIGITS bytes), the decimal
 * exponent of the first to *e10 (d ~ d.ddd x 10^e10), and returns how many
 * there are. The sign of d is ignored. */
int rm_dtoa_shortest (double d, char *dig, int *e10);

#endif
