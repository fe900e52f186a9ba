/* TEMPORARY, until the query layer lands (issue 48): weak stand-ins so
 * that the tree links meanwhile; they refuse every filter. Delete this
 * file when query_*.c define these. */
#include "remodel/query.h"

__attribute__ ((weak)) rm_query_t *
rm_query_parse (const bson_iter_t *it, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_UNSUPPORTED, "filters are not available in this build yet");
    return NULL;
}

__attribute__ ((weak)) void
rm_query_destroy (rm_query_t *q)
{
}

__attribute__ ((weak)) bool
rm_query_match (const rm_query_t *q, rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len, bool *matched,
                bson_error_t *err)
{
    *matched = true;
    return true;
}

__attribute__ ((weak)) void
rm_query_paths (const rm_query_t *q, rm_expr_path_fn fn, void *arg, bool *whole)
{
}

__attribute__ ((weak)) void
rm_query_needs_fields (const rm_query_t *q, rm_expr_path_fn fn, void *arg)
{
}
