/* (to be written) */
#include "expr_impl.h"

const rm_xop_t rm_xops_date[] = {
    {NULL, NULL, 0, 0, {NULL}, NULL, NULL},
};
