/* The nesting depth of a document (remodel/bsondepth.h): a walk over the
 * bytes with one frame per level, on the stack. */
#include "bsonwalk.h"
#include "remodel/bsondepth.h"

int
rm_bson_depth (const uint8_t *doc, size_t len, int stop)
{
    rm_walk_t st[RM_BSON_WALK_DEPTH + 1];
    int level = 1, deepest = 0;
    rm_elem_t e;

    if (stop > RM_BSON_WALK_DEPTH)
        stop = RM_BSON_WALK_DEPTH;
    if (len > UINT32_MAX || !rm_walk_init (&st[0], doc, (uint32_t) len))
        return 0;
    for (;;) {
        int rc = rm_walk_next (&st[level - 1], &e);
        if (rc <= 0) { /* this container is done (or its bytes are bad) */
            if (--level == 0)
                return deepest;
            continue;
        }
        if (level > deepest)
            deepest = level;
        /* An empty container (5 bytes) holds no level. */
        if ((e.type == BSON_TYPE_DOCUMENT || e.type == BSON_TYPE_ARRAY) && e.end - e.value > 5) {
            if (level == stop)
                return stop + 1;
            if (rm_walk_into (&st[level], &st[level - 1], &e))
                level++;
        }
    }
}
