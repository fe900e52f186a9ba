/* (to be written) */
#include <stdio.h>

#include "expr_impl.h"

size_t
rm_xdouble_string (double d, char *out, size_t cap)
{
    return (size_t) snprintf (out, cap, "%.17g", d);
}

const rm_xop_t rm_xops_convert[] = {
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
