/* embed: children of `from` whose foreignField equals a parent's
 * localField go into the parent's array `as` (see embed_build.c for where
 * fields go and embed_join.h for the order). The hash join is used when
 * the children fit in --memory, the external sort-merge otherwise; both
 * give the same bytes. */
#include "embed_join.h"

/* What the hash join holds per child beyond its bytes: record, table
 * slot, list node and a key (about 100 bytes with a short key). */
#define PER_CHILD_OVERHEAD 100

bool
rm_step_embed_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_ens_t *from = rm_engine_find (e, &s->u.embed.from);
    uint64_t need = rm_store_bytes (from->store) + rm_store_count (from->store) * PER_CHILD_OVERHEAD;

    if (need <= e->opts.memory)
        return rm_embed_hash_run (e, s, err);
    e->spilled = true;
    return rm_embed_sort_run (e, s, err);
}
