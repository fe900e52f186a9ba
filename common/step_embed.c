/* embed: children of `from` whose foreignField equals a parent's
 * localField go into the parent's array `as` (see embed_build.c for where
 * fields go and embed_join.h for the order). */
#include "embed_join.h"

static bool
on_parent (void *ctx, const uint8_t *doc, uint32_t len, rm_child_t *c, size_t n, bson_error_t *err)
{
    return rm_embed_out_parent (ctx, doc, len, c, n, err);
}

static bool
on_finish (void *ctx, bson_error_t *err)
{
    return rm_embed_out_finish (ctx, err);
}

bool
rm_step_embed_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_embed_t *spec = &s->u.embed;
    rm_embed_out_t *o = rm_embed_out_new (e, s, err);
    rm_join_t j = {&spec->local, &spec->foreign, &spec->sort, true, true, spec->keep_source,
                   &spec->from, &spec->into, on_parent, on_finish, o};
    bool ok = o && rm_join_run (e, &j, err);
    rm_embed_out_destroy (o);
    return ok;
}
