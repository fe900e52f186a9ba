/* The depth guard of what steps write (engine_impl.h): no step makes a
 * document nest deeper than MongoDB stores. Such a document would be
 * written, and then refused by mongorestore, by the server and by
 * remodel's own readers; 500 set steps of a 32-part path made one 16,000
 * levels deep. Every step's output goes through here where a step can
 * deepen a document, offline and online alike (the online companion runs
 * these same steps through remodel/batchstep.h). */
#include "engine_impl.h"
#include "remodel/bsondepth.h"

bool
rm_engine_too_deep (const uint8_t *in, size_t in_len, const uint8_t *out, size_t out_len,
                    bson_error_t *err)
{
    int depth, before;

    /* Most documents are too short to nest that deep: no walk for them. */
    if (out == in || out_len < RM_BSON_DEPTH_MIN_LEN (RM_BSON_MAX_NESTING + 1) ||
        rm_bson_depth (out, out_len, RM_BSON_MAX_NESTING) <= RM_BSON_MAX_NESTING)
        return false;
    /* Past the limit: the exact figures, once, for the message. A
     * document that came in as deep (one a server holds: its own bound is
     * higher, remodel/bsondepth.h) is not the step's doing, and goes on
     * as it was. */
    depth = rm_bson_depth (out, out_len, RM_BSON_WALK_DEPTH);
    before = in ? rm_bson_depth (in, in_len, RM_BSON_WALK_DEPTH) : 0;
    if (before >= depth)
        return false;
    if (depth > RM_BSON_WALK_DEPTH)
        rm_error_set (err, RM_ERR_DATA, "would nest more than %d levels deep (MongoDB stores "
                      "at most %d levels of nesting)", RM_BSON_WALK_DEPTH, RM_BSON_MAX_NESTING);
    else
        rm_error_set (err, RM_ERR_DATA, "would nest %d levels deep (MongoDB stores at most %d "
                      "levels of nesting)", depth, RM_BSON_MAX_NESTING);
    return true;
}

bool
rm_engine_depth_ok (const char *ns_name, const char *what, const uint8_t *in, size_t in_len,
                    const uint8_t *out, size_t out_len, bson_error_t *err)
{
    if (!rm_engine_too_deep (in, in_len, out, out_len, err))
        return true;
    return rm_doc_error (err, ns_name, what, in ? in : out, (uint32_t) (in ? in_len : out_len));
}
