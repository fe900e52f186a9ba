/* Choosing how a join runs: in memory when the children fit the budget,
 * through external sorts otherwise. */
#include "embed_join.h"

/* What the hash join holds per child beyond its bytes: record, table
 * slot, list node and a key (about 100 bytes with a short key). */
#define PER_CHILD_OVERHEAD 100

bool
rm_join_run (rm_engine_t *e, const rm_join_t *j, bson_error_t *err)
{
    rm_ens_t *from = rm_engine_find (e, j->from);
    uint64_t need = rm_store_bytes (from->store) + rm_store_count (from->store) * PER_CHILD_OVERHEAD;

    if (need <= e->opts.memory)
        return rm_join_hash_run (e, j, err);
    e->spilled = true;
    return rm_join_sort_run (e, j, err);
}
