/* A collection's options as listCollections gives them, through the
 * table's command row (online_command_each): finalize --validators keeps
 * them to restore at rollback, --to-uri gives a copy the source's
 * collation. Apart from online_ops.c, which this file calls. */
#include "online.h"

/* A listed collection's options, into the bson_t arg. */
static void
options_in (const bson_t *doc, void *arg)
{
    bson_iter_t f;
    const uint8_t *data;
    uint32_t len;
    bson_t o;
    if (bson_iter_init_find (&f, doc, "options") && BSON_ITER_HOLDS_DOCUMENT (&f)) {
        bson_iter_document (&f, &len, &data);
        if (bson_init_static (&o, data, len))
            bson_concat (arg, &o);
    }
}

bool
online_collection_options (online_t *on, mongoc_collection_t *c, const char *db, bson_t *opts,
                           bson_error_t *why)
{
    bson_t *cmd = BCON_NEW ("listCollections", BCON_INT32 (1), "filter", "{", "name",
                            BCON_UTF8 (mongoc_collection_get_name (c)), "}");
    bool ok = online_command_each (on, c, db, cmd, options_in, opts, why);
    bson_destroy (cmd);
    return ok;
}
