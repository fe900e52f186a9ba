/* The first difference between two documents, walked in parallel. */
#include <string.h>

#include "docbuf.h"
#include "remodel/bsondepth.h"
#include "remodel/docdiff.h"

static void
path_add (rm_buf_t *path, const char *key)
{
    if (path->len)
        rm_buf_append (path, ".", 1);
    rm_buf_append (path, key, strlen (key));
}

/* a and b walk containers `depth` levels below the top-level documents.
 * Below RM_BSON_WALK_DEPTH (deeper than any dump is read) the difference
 * is said at the container, never looked for further down: one stack
 * frame a level. */
static bool
differ (bson_iter_t *a, bson_iter_t *b, rm_buf_t *path, int depth)
{
    for (;;) {
        bool more_a = bson_iter_next (a), more_b = bson_iter_next (b);
        uint32_t alen, blen;
        const uint8_t *av, *bv;

        if (!more_a && !more_b)
            return false;
        if (!more_a || !more_b) { /* one side has a field more */
            path_add (path, bson_iter_key (more_a ? a : b));
            return true;
        }
        if (strcmp (bson_iter_key (a), bson_iter_key (b)) != 0 ||
            bson_iter_type (a) != bson_iter_type (b)) {
            path_add (path, bson_iter_key (a));
            return true;
        }
        av = rm_iter_value_bytes (a, &alen);
        bv = rm_iter_value_bytes (b, &blen);
        if (alen == blen && memcmp (av, bv, alen) == 0)
            continue;
        path_add (path, bson_iter_key (a));
        if ((BSON_ITER_HOLDS_DOCUMENT (a) || BSON_ITER_HOLDS_ARRAY (a)) &&
            depth < RM_BSON_WALK_DEPTH) {
            bson_iter_t ca, cb;
            size_t mark = path->len;
            if (bson_iter_recurse (a, &ca) && bson_iter_recurse (b, &cb) &&
                differ (&ca, &cb, path, depth + 1))
                return true;
            path->len = mark; /* the same elements, other bytes: say the container */
        }
        return true;
    }
}

bool
rm_doc_first_difference (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                         rm_buf_t *path)
{
    bson_t da, db;
    bson_iter_t ia, ib;

    if (alen == blen && memcmp (a, b, alen) == 0)
        return false;
    if (!bson_init_static (&da, a, alen) || !bson_init_static (&db, b, blen) ||
        !bson_iter_init (&ia, &da) || !bson_iter_init (&ib, &db))
        return true; /* not documents: they differ as a whole */
    differ (&ia, &ib, path, 0);
    return true;
}
