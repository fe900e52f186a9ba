/* The join when the children fit in memory: one pass over `from` builds a
 * hash table from join key to children, one pass over `into` looks each
 * parent's keys up. */
#include <string.h>

#include "embed_join.h"
#include "keytab.h"

typedef struct {
    size_t off;       /* in the arena */
    uint32_t len;
    uint32_t id_at;   /* rm_child_id_at, found while the bytes are in cache */
    uint64_t seen;    /* the last parent that took it, to take it once; 0
                       * none did (parents count from 1): not matched */
} crec_t;

/* A key's children: a list of nodes, in from's order. */
typedef struct {
    size_t head, tail;
} klist_t;

typedef struct {
    size_t child;
    size_t next;
} node_t;

#define NIL ((size_t) -1)

typedef struct {
    rm_buf_t arena, tmp;
    crec_t *c;
    size_t n, cap;
    rm_keytab_t keys; /* join key -> klist_t */
    node_t *nodes;
    size_t n_nodes, nodes_cap;
} table_t;

static void
add_child_key (table_t *t, size_t child, const uint8_t *key, uint32_t len)
{
    bool fresh;
    klist_t *l = rm_keytab_add (&t->keys, key, len, &fresh);
    if (fresh)
        l->head = l->tail = NIL;
    if (t->n_nodes == t->nodes_cap) {
        t->nodes_cap = t->nodes_cap ? t->nodes_cap * 2 : 1024;
        t->nodes = bson_realloc (t->nodes, t->nodes_cap * sizeof *t->nodes);
    }
    t->nodes[t->n_nodes] = (node_t){child, NIL};
    if (l->tail == NIL)
        l->head = t->n_nodes;
    else
        t->nodes[l->tail].next = t->n_nodes;
    l->tail = t->n_nodes++;
}

static bool
load_children (table_t *t, const rm_join_t *j, rm_ens_t *from, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (from->store, err);
    rm_frame_t f;
    int rc;
    if (!in)
        return false;
    while ((rc = rm_store_next (in, &f, err)) > 0) {
        size_t nk, off = 0;
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 1024;
            t->c = bson_realloc (t->c, t->cap * sizeof *t->c);
        }
        rm_probe_doc (j->probe_foreign, f.data, f.len);
        t->c[t->n] = (crec_t){t->arena.len, f.len, rm_child_id_at (f.data, f.len), 0};
        rm_buf_append (&t->arena, f.data, f.len);
        nk = rm_join_keys (j->foreign, true, j->since_36681, f.data, f.len, &t->tmp);
        for (size_t k = 0; k < nk; k++) {
            uint32_t len;
            memcpy (&len, t->tmp.data + off, 4);
            add_child_key (t, t->n, t->tmp.data + off + 4, len);
            off += 4 + len;
        }
        t->n++;
    }
    rm_instream_close (in);
    return rc == 0;
}

static bool
join_parents (table_t *t, rm_engine_t *e, const rm_join_t *j, bson_error_t *err)
{
    rm_ens_t *into = rm_engine_find (e, j->into);
    rm_instream_t *in = rm_store_open (into->store, err);
    rm_buf_t lkeys;
    rm_child_t *cand = NULL;
    size_t cand_cap = 0;
    uint64_t parent = 0;
    rm_frame_t f;
    int rc = -1;

    rm_buf_init (&lkeys);
    while (in && (rc = rm_store_next (in, &f, err)) > 0) {
        size_t nk = rm_join_keys (j->local, false, false, f.data, f.len, &lkeys), off = 0, n = 0;
        rm_probe_doc (j->probe_local, f.data, f.len);
        parent++;
        for (uint32_t k = 0; k < nk; k++) {
            uint32_t len;
            const klist_t *l;
            memcpy (&len, lkeys.data + off, 4);
            l = rm_keytab_find (&t->keys, lkeys.data + off + 4, len);
            off += 4 + len;
            for (size_t nd = l ? l->head : NIL; nd != NIL; nd = t->nodes[nd].next) {
                crec_t *c = &t->c[t->nodes[nd].child];
                if (c->seen == parent)
                    continue; /* each child once per parent, as $lookup */
                c->seen = parent;
                if (n == cand_cap) {
                    cand_cap = cand_cap ? cand_cap * 2 : 64;
                    cand = bson_realloc (cand, cand_cap * sizeof *cand);
                }
                cand[n++] = (rm_child_t){t->arena.data + c->off, c->len, k, t->nodes[nd].child, c->id_at};
            }
        }
        /* The children lie anywhere in the arena: ask for each one's
         * first and last bytes (what a walk reads first) together, so
         * the misses overlap rather than come one per child. */
        for (size_t i = 0; i < n; i++) {
            __builtin_prefetch (cand[i].doc);
            __builtin_prefetch (cand[i].doc + cand[i].len - 1);
        }
        rm_join_order (j, cand, n, nk > 1);
        if (!j->begin (j->ctx, f.data, f.len, err)) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < n && rc > 0; i++)
            if (!j->child (j->ctx, &cand[i], err))
                rc = -1;
        if (rc < 0 || !j->end (j->ctx, err)) {
            rc = -1;
            break;
        }
    }
    rm_instream_close (in);
    rm_buf_destroy (&lkeys);
    bson_free (cand);
    return rc == 0 && j->finish (j->ctx, err);
}

/* `from` keeps its unmatched children (all of them with keepSource). */
static bool
write_children (table_t *t, rm_engine_t *e, const rm_join_t *j, rm_ens_t *from,
                bson_error_t *err)
{
    rm_store_t *next = rm_engine_store_new (e, from, err);
    if (!next)
        return false;
    for (size_t i = 0; i < t->n; i++) {
        if (!t->c[i].seen)
            from->stats->orphans++;
        if ((j->keep_source || !t->c[i].seen) &&
            !rm_store_add (next, t->arena.data + t->c[i].off, t->c[i].len, err)) {
            rm_store_destroy (next);
            return false;
        }
    }
    return rm_engine_store_swap (from, next, err);
}

bool
rm_join_hash_run (rm_engine_t *e, const rm_join_t *j, bson_error_t *err)
{
    rm_ens_t *from = rm_engine_find (e, j->from);
    table_t t;
    bool ok;

    memset (&t, 0, sizeof t);
    rm_keytab_init (&t.keys, sizeof (klist_t));
    ok = load_children (&t, j, from, err) && join_parents (&t, e, j, err);
    if (ok && j->rewrite_from)
        ok = write_children (&t, e, j, from, err);
    else if (ok)
        for (size_t i = 0; i < t.n; i++)
            from->stats->orphans += !t.c[i].seen;
    rm_buf_destroy (&t.arena);
    rm_buf_destroy (&t.tmp);
    rm_keytab_destroy (&t.keys);
    bson_free (t.c);
    bson_free (t.nodes);
    return ok;
}
