/* The double-double sum of $sum and $avg (expr_ddsum.h). */
#include <math.h>

#include "expr_ddsum.h"
#include "expr_decimal.h"

void
rm_xdd_add (rm_xdd_t *d, double x)
{
    double s, z, t, a, b;

    d->special += x;
    /* The new value with the old compensation (Fast2Sum: the addend is
     * the smaller). */
    s = x + d->addend;
    z = s - x;
    t = d->addend - z;
    x = s;
    d->addend = t;
    /* Then with the sum (2Sum: either may be the larger). */
    s = d->sum + x;
    a = s - x;
    b = s - a;
    d->addend += (d->sum - a) + (x - b);
    d->sum = s;
}

void
rm_xdd_add_int64 (rm_xdd_t *d, int64_t v)
{
    int64_t high = v / ((int64_t) 1 << 32) * ((int64_t) 1 << 32);
    rm_xdd_add (d, (double) (v - high));
    rm_xdd_add (d, (double) high);
}

double
rm_xdd_double (const rm_xdd_t *d)
{
    return isnan (d->sum) ? d->special : d->sum;
}

/* 2^63: the first double above INT64_MAX. */
#define TWO63 9223372036854775808.0

bool
rm_xdd_fits_int64 (const rm_xdd_t *d)
{
    if (d->sum > -TWO63 && d->sum < TWO63)
        return true;
    /* At a boundary the addend says which way the total rounds. */
    if (d->sum == TWO63)
        return d->addend < -0.5;
    if (d->sum == -TWO63)
        return d->addend >= -0.5;
    return false; /* out of range, infinite or NaN */
}

int64_t
rm_xdd_int64 (const rm_xdd_t *d)
{
    int64_t v;
    if (d->sum == TWO63) /* then -1024 <= addend < -0.5 */
        return llround (d->addend) - INT64_MIN;
    v = llround (d->sum);
    return v + llround ((d->sum - (double) v) + d->addend);
}

void
rm_xdd_decimal (const rm_xdd_t *d, bson_decimal128_t *r)
{
    bson_decimal128_t lo;
    if (!isfinite (d->sum)) {
        rm_xdec_from_double (r, d->special, false);
        return;
    }
    rm_xdec_from_double (r, d->sum, false);
    rm_xdec_from_double (&lo, d->addend, false);
    rm_xdec_add (r, r, &lo);
}
