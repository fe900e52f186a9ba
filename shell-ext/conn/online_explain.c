/* explain's replies judged (online.h, "explain"): whether a query is
 * served from an index or without a whole read, as MongoDB's plans and
 * FerretDB's pushdown flags say it. A leaf: capabilities' probe
 * (online_caps.c) and the point reads' (online_points.c) ask. */
#include <string.h>

#include "online.h"

/* Whether explain's reply names a stage whose name holds one of stages
 * anywhere in its plans (MongoDB's classic and slot-based plans nest
 * their stages, a mongos's under shards). */
static bool
names_stage (bson_iter_t *it, const char *const *stages)
{
    while (bson_iter_next (it)) {
        bson_iter_t sub;
        if (BSON_ITER_HOLDS_UTF8 (it) && !strcmp (bson_iter_key (it), "stage"))
            for (const char *const *s = stages; *s; s++)
                if (strstr (bson_iter_utf8 (it, NULL), *s))
                    return true;
        if ((BSON_ITER_HOLDS_DOCUMENT (it) || BSON_ITER_HOLDS_ARRAY (it)) &&
            bson_iter_recurse (it, &sub) && names_stage (&sub, stages))
            return true;
    }
    return false;
}

/* {stage: "IXSCAN"} or {stage: "EXPRESS_IXSCAN"}. */
bool
online_explain_indexed (const bson_t *explain)
{
    static const char *const ixscan[] = {"IXSCAN", NULL};
    bson_iter_t it;
    return bson_iter_init (&it, explain) && names_stage (&it, ixscan);
}

/* MongoDB before 8.0 names an _id equality IDHACK, 8.0 EXPRESS_IXSCAN or
 * EXPRESS_CLUSTERED_IXSCAN; FerretDB says filterPushdown. */
bool
online_explain_served (const bson_t *explain)
{
    static const char *const served[] = {"IXSCAN", "IDHACK", "EXPRESS", NULL};
    bson_iter_t it;
    if (bson_iter_init_find (&it, explain, "filterPushdown") && BSON_ITER_HOLDS_BOOL (&it) &&
        bson_iter_bool (&it))
        return true;
    return bson_iter_init (&it, explain) && names_stage (&it, served);
}
