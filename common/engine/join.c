/* Choosing how a join runs: in memory when the children fit the budget,
 * through external sorts otherwise. */
#include <string.h>

#include "embed_join.h"

/* What the hash join holds per child beyond its bytes: record, table
 * slot, list node and a key (about 100 bytes with a short key). */
#define PER_CHILD_OVERHEAD 100

bool
rm_join_run (rm_engine_t *e, const rm_join_t *spec, bson_error_t *err)
{
    const rm_step_t *s = &e->plan->steps[e->step - 1];
    rm_step_run_t *run = rm_engine_step_run (e, s);
    rm_ens_t *from = rm_engine_find (e, spec->from), *into = rm_engine_find (e, spec->into);
    uint64_t children = rm_store_count (from->store), orphans = from->stats->orphans;
    uint64_t need = rm_store_bytes (from->store) + children * PER_CHILD_OVERHEAD;
    rm_join_t j = *spec;
    rm_join_sel_t sel = {.e = e, .s = s, .filter = s->filter, .match = s->match, .now = rm_engine_now (e),
                         .into_name = into->stats->name, .from_name = from->stats->name};
    bool ok;

    /* One context per run for the main thread (the probers make theirs). */
    if (s->filter || s->match)
        sel.cx = rm_expr_ctx_new (sel.now);
    j.sel = &sel;
    j.probe_local = rm_engine_probe (e, s, 0);
    j.probe_foreign = rm_engine_probe (e, s, 1);
    j.since_36681 = e->opts.lookup_since_36681;
    /* The hash join numbers children with a uint32_t. */
    if (need <= e->opts.memory && children < UINT32_MAX) {
        ok = rm_engine_stores_fit (e, need, from->store, err) && rm_join_hash_run (e, &j, err);
    } else {
        e->spilled = true;
        /* Its sorters take --memory between them. */
        ok = rm_engine_stores_fit (e, e->opts.memory, NULL, err) && rm_join_sort_run (e, &j, err);
    }
    rm_engine_stores_free (e);
    rm_expr_ctx_destroy (sel.cx);
    /* The check (rm_engine_join_check) counts the selected ones; a child
     * match leaves out stays as an orphan does, and counts as one. */
    run->parents += sel.parents;
    run->children += sel.children;
    run->matched += children - (from->stats->orphans - orphans);
    return ok;
}

void
rm_join_copy_child (const void *ctx, const rm_child_t *c, rm_buf_t *out)
{
    (void) ctx;
    rm_buf_append (out, c->doc, c->len);
}
