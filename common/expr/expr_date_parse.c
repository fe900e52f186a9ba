/* (to be written) */
#include "expr_impl.h"

bool
rm_xdate_parse (rm_expr_ctx_t *cx, const rm_expr_t *op, const char *s, size_t len, const char *tz,
                int64_t *ms, bson_error_t *err)
{
    return rm_xfail (err, op, "parsing dates from strings is not written yet");
}

size_t
rm_xdate_iso (int64_t ms, char *out)
{
    out[0] = '\0';
    return 0;
}
