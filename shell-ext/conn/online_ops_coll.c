/* The table's collMod row (online.h), in a file of its family: online_ops.c
 * is past its 400 lines. finalize --validators gives the new design's
 * collections their validators with it, and rollback their earlier
 * options back. */
#include "online.h"

bool
online_ops_mongoc_coll_mod (online_t *on, mongoc_collection_t *c, const bson_t *mod,
                            bson_error_t *why)
{
    bson_t *cmd = BCON_NEW ("collMod", BCON_UTF8 (mongoc_collection_get_name (c)));
    online_retry_t r = {0, 0};
    bool ok;
    bson_concat (cmd, mod);
    /* The collection's own connection (--to-uri: the destination's). */
    while (!(ok = mongoc_collection_command_simple (c, cmd, NULL, NULL, why)) &&
           online_retry_call (on, &r, false, NULL, why))
        ;
    bson_destroy (cmd);
    return ok;
}
