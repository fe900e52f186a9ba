/* embed: children of `from` whose foreignField equals a parent's
 * localField go into the parent's array `as` (see embed_build.c for where
 * fields go and embed_join.h for the order). */
#include "embed_join.h"

bool
rm_step_embed_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_embed_t *spec = &s->u.embed;
    rm_embed_out_t *o = rm_embed_out_new (e, s, err);
    rm_join_t j = {.local = &spec->local, .foreign = &spec->foreign, .sort = &spec->sort,
                   .order_by_id = true, .rewrite_from = true, .keep_source = spec->keep_source,
                   .from = &spec->from, .into = &spec->into, .begin = rm_embed_out_begin,
                   .child = rm_embed_out_child, .end = rm_embed_out_end,
                   .finish = rm_embed_out_finish, .ctx = o};
    bool ok = o && rm_join_run (e, &j, err);
    rm_embed_out_destroy (o);
    return ok;
}
