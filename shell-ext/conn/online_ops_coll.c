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
    bool ok;
    (void) on;
    bson_concat (cmd, mod);
    /* The collection's own connection (--to-uri: the destination's). */
    ok = mongoc_collection_command_simple (c, cmd, NULL, NULL, why);
    bson_destroy (cmd);
    return ok;
}
