/* The join when the children fit in memory: one pass over `from` builds a
 * hash table from join key to children, one pass over `into` looks each
 * parent's keys up. */
#include <pthread.h>
#include <string.h>

#include "embed_join.h"
#include "keytab.h"
#include "thread.h"

typedef struct {
    size_t off;       /* in the arena */
    uint32_t len;
    uint32_t id_at;   /* rm_child_id_at, found while the bytes are in cache */
} crec_t;

/* A child in its key's run: its record, copied there, so that a parent's
 * lookup reads its children's places from one run instead of missing the
 * cache once a child in the records. */
typedef struct {
    size_t off;
    uint32_t len, id_at;
    uint32_t child;
} lrec_t;

/* A (child, key number) pair, in from's order, until the children are laid
 * out by key. */
typedef struct {
    uint32_t child, key;
} node_t;

typedef struct {
    rm_buf_t arena, tmp;
    const uint8_t *base; /* the children: the arena, or the store's own
                          * memory when it is in memory (no copy) */
    crec_t *c;
    size_t n, cap;
    rm_keytab_t keys; /* join key -> its number (uint32_t), from 0 */
    node_t *nodes;
    size_t n_nodes, nodes_cap;
    /* Per key number: its children's count while loading, then where they
     * start in order (n_keys + 1 entries: a key's run ends where the next
     * one's starts). Each key's children lie together in order, in from's
     * order (rec: each child's place and length copied into its run): a
     * parent's lookup reads one run, not a list whose every node is a
     * cache miss that depends on the one before, nor a record per child. */
    size_t *start;
    size_t n_keys, keys_cap;
    lrec_t *rec;
    uint8_t *matched; /* per child: a parent took it (set by the probers) */
    uint64_t *hash;   /* a batch's keys' hashes, while it is added */
    size_t hash_cap;
    bool too_many; /* more keys than a uint32_t numbers */
    /* Every child's _id an ObjectId, none below the one before it (a
     * dump's usual order): then a key's run, in from's order, is in the
     * order a parent of that one key takes its children (_id, then from's
     * order), and the probers need not sort it. */
    bool ids_in_order;
    uint64_t last_hi;  /* the last _id's first 8 bytes, big-endian... */
    uint32_t last_lo;  /* ...and its last 4: its order as two numbers */
    bool failed;       /* the step's match failed on a child: err says why */
    bson_error_t err;
} table_t;

static void
add_child_key (table_t *t, uint32_t child, const uint8_t *key, uint32_t len, uint64_t h)
{
    bool fresh;
    uint32_t *id = rm_keytab_add_hashed (&t->keys, key, len, h, &fresh);
    if (fresh) {
        if (t->n_keys == UINT32_MAX) {
            t->too_many = true;
            return;
        }
        if (t->n_keys + 1 >= t->keys_cap) {
            t->keys_cap = t->keys_cap ? t->keys_cap * 2 : 1024;
            t->start = bson_realloc (t->start, t->keys_cap * sizeof *t->start);
        }
        *id = (uint32_t) t->n_keys;
        t->start[t->n_keys++] = 0;
    }
    t->start[*id]++;
    if (t->n_nodes == t->nodes_cap) {
        t->nodes_cap = t->nodes_cap ? t->nodes_cap * 2 : 1024;
        t->nodes = bson_realloc (t->nodes, t->nodes_cap * sizeof *t->nodes);
    }
    t->nodes[t->n_nodes++] = (node_t){child, *id};
}

/* The records of the keys [lo, hi) put in their runs. */
typedef struct {
    table_t *t;
    uint32_t lo, hi;
} part_t;

static void *
place_part (void *arg)
{
    const part_t *pt = arg;
    table_t *t = pt->t;
    for (size_t i = 0; i < t->n_nodes; i++) {
        uint32_t k = t->nodes[i].key;
        if (k >= pt->lo && k < pt->hi) {
            const crec_t *c = &t->c[t->nodes[i].child];
            t->rec[t->start[k]++] = (lrec_t){c->off, c->len, c->id_at, t->nodes[i].child};
        }
    }
    return NULL;
}

/* Each key's children together, in from's order (a counting sort of the
 * nodes by key number), each with its record. The records go to their
 * runs on both cores, each thread the runs of half the keys: a write at
 * random a child, and the records' fresh pages, were the load's last
 * step on one core while the other waited. */
static void
lay_out (table_t *t)
{
    part_t half[2];
    pthread_t thread;
    bool two;
    size_t at = 0;
    for (size_t k = 0; k < t->n_keys; k++) {
        size_t c = t->start[k];
        t->start[k] = at;
        at += c;
    }
    if (t->keys_cap == 0)
        t->start = bson_malloc (sizeof *t->start);
    t->start[t->n_keys] = at;
    t->rec = bson_malloc ((t->n_nodes ? t->n_nodes : 1) * sizeof *t->rec);
    half[0] = (part_t){t, 0, (uint32_t) (t->n_keys / 2)};
    half[1] = (part_t){t, (uint32_t) (t->n_keys / 2), (uint32_t) t->n_keys};
    two = t->n_nodes >= 65536 && rm_thread_start (&thread, place_part, &half[1]) == 0;
    place_part (&half[0]);
    if (two)
        pthread_join (thread, NULL);
    else
        place_part (&half[1]);
    t->matched = bson_malloc0 (t->n ? t->n : 1);
    /* Each start moved to its run's end, the next run's start: back one. */
    for (size_t k = t->n_keys; k > 0; k--)
        t->start[k] = t->start[k - 1];
    t->start[0] = 0;
    bson_free (t->nodes);
    t->nodes = NULL;
    t->n_nodes = t->nodes_cap = 0;
}

/* Loading runs on both cores: the main thread reads the children, copies
 * them into the arena and finds their keys; a worker adds the keys to the
 * table (a cache miss each), a batch of children behind. */
#define BATCH_CHILDREN 4096
#define BATCH_KEY_BYTES (1u << 20)
#define N_BATCHES 4

typedef struct {
    size_t first, n;             /* the children it holds: first.. first+n */
    uint32_t nk[BATCH_CHILDREN]; /* each one's keys */
    rm_buf_t keys;               /* their keys, each after its uint32 length */
} batch_t;

typedef struct {
    table_t *t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    batch_t b[N_BATCHES];
    size_t filled, done; /* batches handed to the worker, and added */
    bool end;            /* no more batches will come */
} feed_t;

/* Adds a batch's keys in two passes: their hashes first, then each key
 * with its slot asked for KEYS_AHEAD keys before (the misses of many
 * adds overlap instead of coming one after another). */
#define KEYS_AHEAD 16

static void
add_batch (table_t *t, const batch_t *b)
{
    size_t off = 0, x = 0, n = 0;
    for (size_t i = 0; i < b->n; i++)
        n += b->nk[i];
    if (n > t->hash_cap) {
        t->hash_cap = n;
        t->hash = bson_realloc (t->hash, n * sizeof *t->hash);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        memcpy (&len, b->keys.data + off, 4);
        t->hash[i] = rm_key_hash (b->keys.data + off + 4, len);
        off += 4 + len;
    }
    off = 0;
    for (size_t i = 0; i < KEYS_AHEAD && i < n; i++)
        rm_keytab_prefetch (&t->keys, t->hash[i]);
    for (size_t i = 0; i < b->n; i++)
        for (uint32_t k = 0; k < b->nk[i]; k++, x++) {
            uint32_t len;
            if (x + KEYS_AHEAD < n)
                rm_keytab_prefetch (&t->keys, t->hash[x + KEYS_AHEAD]);
            memcpy (&len, b->keys.data + off, 4);
            add_child_key (t, (uint32_t) (b->first + i), b->keys.data + off + 4, len, t->hash[x]);
            off += 4 + len;
        }
}

static void *
feed_main (void *arg)
{
    feed_t *f = arg;
    pthread_mutex_lock (&f->mu);
    for (;;) {
        while (f->done == f->filled && !f->end)
            pthread_cond_wait (&f->cv, &f->mu);
        if (f->done == f->filled)
            break;
        pthread_mutex_unlock (&f->mu);
        add_batch (f->t, &f->b[f->done % N_BATCHES]);
        pthread_mutex_lock (&f->mu);
        f->done++;
        pthread_cond_broadcast (&f->cv);
    }
    pthread_mutex_unlock (&f->mu);
    return NULL;
}

/* Hands the batch being filled over (to the worker, or adds it here when
 * there is none) and returns the next one to fill, once it is free. */
static batch_t *
hand_over (feed_t *f, bool worker)
{
    batch_t *b = &f->b[f->filled % N_BATCHES];
    size_t next_first = b->first + b->n;
    if (!worker) {
        add_batch (f->t, b);
    } else {
        pthread_mutex_lock (&f->mu);
        f->filled++;
        pthread_cond_broadcast (&f->cv);
        while (f->filled - f->done >= N_BATCHES)
            pthread_cond_wait (&f->cv, &f->mu);
        pthread_mutex_unlock (&f->mu);
        b = &f->b[f->filled % N_BATCHES];
    }
    b->first = next_first;
    b->n = 0;
    rm_buf_reset (&b->keys);
    return b;
}

/* One child: its record, its keys into the batch (handed over when full). */
static batch_t *
load_one (table_t *t, const rm_join_t *j, feed_t *f, batch_t *b, bool worker,
          const uint8_t *doc, uint32_t len, size_t off)
{
    size_t nk = 0;
    bool take = false;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->c = bson_realloc (t->c, t->cap * sizeof *t->c);
    }
    rm_probe_doc (j->probe_foreign, doc, len);
    /* A child the step's match leaves out gets no key: no parent takes
     * it, and it stays in `from` as an orphan does. */
    if (!t->failed && !rm_join_take_child (j, doc, len, &take, &t->err))
        t->failed = true;
    t->c[t->n].id_at = RM_CHILD_NO_ID;
    if (take)
        nk = rm_join_child_keys (j, doc, len, &b->keys, &t->tmp, &t->c[t->n].id_at);
    t->c[t->n].off = off;
    t->c[t->n].len = len;
    /* (only the children in the keys' runs are ordered) */
    if (take && t->ids_in_order) {
        uint32_t at = t->c[t->n].id_at;
        uint64_t hi;
        uint32_t lo;
        if (at == RM_CHILD_NO_ID || doc[at] != BSON_TYPE_OID) {
            t->ids_in_order = false;
        } else {
            memcpy (&hi, doc + at + 5, 8);
            memcpy (&lo, doc + at + 13, 4);
            hi = BSON_UINT64_FROM_BE (hi);
            lo = BSON_UINT32_FROM_BE (lo);
            if (t->n && (hi < t->last_hi || (hi == t->last_hi && lo < t->last_lo)))
                t->ids_in_order = false;
            t->last_hi = hi;
            t->last_lo = lo;
        }
    }
    b->nk[b->n++] = (uint32_t) nk;
    t->n++;
    if (b->n == BATCH_CHILDREN || b->keys.len >= BATCH_KEY_BYTES)
        b = hand_over (f, worker);
    return b;
}

static bool
load_children (table_t *t, const rm_join_t *j, rm_ens_t *from, bson_error_t *err)
{
    size_t mem_len = 0;
    const uint8_t *mem = rm_store_mem (from->store, &mem_len);
    rm_instream_t *in = mem ? NULL : rm_store_open (from->store, err);
    feed_t f;
    pthread_t thread;
    bool worker;
    batch_t *b;
    rm_frame_t f_doc;
    int rc = 0;
    if (!mem && !in)
        return false;
    memset (&f, 0, sizeof f);
    f.t = t;
    t->ids_in_order = true;
    for (int i = 0; i < N_BATCHES; i++)
        rm_buf_init (&f.b[i].keys);
    /* The records, and the nodes (one a child of a single key), made once
     * at the store's count rather than grown by doubling, each growth a
     * copy into fresh pages. */
    t->cap = t->nodes_cap = rm_store_count (from->store);
    t->c = bson_malloc ((t->cap ? t->cap : 1) * sizeof *t->c);
    t->nodes = bson_malloc ((t->nodes_cap ? t->nodes_cap : 1) * sizeof *t->nodes);
    pthread_mutex_init (&f.mu, NULL);
    pthread_cond_init (&f.cv, NULL);
    worker = rm_thread_start (&thread, feed_main, &f) == 0;
    b = &f.b[0];
    if (mem) {
        /* In place: the store's documents were checked as they came in,
         * and it framed them itself. */
        for (size_t off = 0; off < mem_len;) {
            uint32_t len;
            if (rm_interrupted) {
                rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
                rc = -1;
                break;
            }
            memcpy (&len, mem + off, 4);
            len = BSON_UINT32_FROM_LE (len);
            b = load_one (t, j, &f, b, worker, mem + off, len, off);
            off += len;
            if (t->failed) {
                *err = t->err;
                rc = -1;
                break;
            }
        }
        t->base = mem;
    } else {
        while ((rc = rm_store_next (in, &f_doc, err)) > 0) {
            b = load_one (t, j, &f, b, worker, f_doc.data, f_doc.len, t->arena.len);
            rm_buf_append (&t->arena, f_doc.data, f_doc.len);
            if (t->failed) {
                *err = t->err;
                rc = -1;
                break;
            }
        }
        t->base = t->arena.data;
    }
    if (rc == 0 && b->n)
        b = hand_over (&f, worker);
    if (worker) {
        pthread_mutex_lock (&f.mu);
        f.end = true;
        pthread_cond_broadcast (&f.cv);
        pthread_mutex_unlock (&f.mu);
        pthread_join (thread, NULL);
    }
    for (int i = 0; i < N_BATCHES; i++)
        rm_buf_destroy (&f.b[i].keys);
    pthread_mutex_destroy (&f.mu);
    pthread_cond_destroy (&f.cv);
    rm_instream_close (in);
    if (rc == 0 && t->too_many) {
        rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: more than %u distinct join keys for the "
                      "in-memory join", rm_store_label (from->store), UINT32_MAX);
        return false;
    }
    if (rc == 0)
        lay_out (t);
    return rc == 0;
}

/* The parents' side runs on both cores too: two probers each take the
 * next batch of parents in turn (read in order, under the lock), look
 * their keys up and order and prepare their children (the misses into
 * the table and the children's records); the main thread (the consumer)
 * takes the batches back in order, builds the parents and writes them.
 * One prober was the bottleneck (a core's worth of misses while the
 * consumer used a third of the other); two share those misses across
 * both cores. */
#define N_PROBERS 2
#define PBATCH_PARENTS 512
#define N_PBATCHES (2 * N_PROBERS)
#define CONSUME_AHEAD 8     /* children between a prefetch and the copy */
/* The children a prober prepares (rm_join_t's prepare) in a batch; a
 * batch's children past this (a key of very many) go as they are, for
 * the consumer to do. */
#define PBATCH_PREP ((size_t) 2 << 20)
/* Children read ahead of their ordering and projection (touch_children). */
#define TOUCH_AHEAD 256

typedef struct {
    size_t n;                           /* parents */
    size_t doc_at[PBATCH_PARENTS];      /* each one's bytes in docs */
    uint32_t doc_len[PBATCH_PARENTS];
    size_t cand_end[PBATCH_PARENTS];    /* where its children end in cand */
    rm_buf_t docs;
    rm_child_t *cand;
    size_t n_cand, cand_cap;
    rm_buf_t prep;      /* the prepared children (rm_join_t's prepare), in order */
    size_t *prep_at;    /* where each prepared cand's bytes start in prep */
    /* per parent: 0 the step's filter takes it, 1 it leaves it out, 2 it
     * failed on it (the consumer asks again, to say so) */
    uint8_t skip[PBATCH_PARENTS];
    bool ready;         /* probed: the consumer may take it */
} pbatch_t;

typedef struct {
    table_t *t;
    const rm_join_t *j;
    rm_instream_t *in; /* the parents, read under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pbatch_t b[N_PBATCHES];
    size_t claimed, done; /* batches claimed by the probers, and consumed */
    size_t running;       /* probers not finished */
    bool in_end;          /* no more parents (or reading them failed: ok) */
    bool stop;            /* the consumer failed: the probers stop */
    bool ok, cons_ok;     /* reading the parents; the consumer */
    bson_error_t err, cons_err;
} probe_t;

/* Hands one batch's parents, each with its children in order, to the
 * consumer. */
static bool
consume (probe_t *p, const pbatch_t *b, bson_error_t *err)
{
    const rm_join_t *j = p->j;
    size_t c0 = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (b->skip[i]) {
            /* Left out by the filter (or it failed): asked again here, on
             * the engine's thread, for the warning's count and the error;
             * then as it is, with no children. */
            bool take;
            if (!rm_join_take_parent (j, j->sel->e, j->sel->cx, b->docs.data + b->doc_at[i],
                                      b->doc_len[i], &take, err) ||
                !j->pass (j->ctx, b->docs.data + b->doc_at[i], b->doc_len[i], err))
                return false;
            continue;
        }
        j->sel->parents++;
        if (!j->begin (j->ctx, b->docs.data + b->doc_at[i], b->doc_len[i], err))
            return false;
        for (size_t c = c0; c < b->cand_end[i]; c++) {
            rm_child_t child = b->cand[c];
            /* The prober's prefetches warmed its own core's cache: ask
             * for the children a few ahead again here, where they are
             * copied (their first touch was a cache miss each, an eighth
             * of embed's time). Prepared ones lie in order in the batch. */
            if (c + CONSUME_AHEAD < b->n_cand && !b->cand[c + CONSUME_AHEAD].prepared) {
                const rm_child_t *ahead = &b->cand[c + CONSUME_AHEAD];
                __builtin_prefetch (ahead->doc);
                __builtin_prefetch (ahead->doc + ahead->len - 1);
            }
            if (child.prepared)
                child.doc = b->prep.data + b->prep_at[c];
            if (!j->child (j->ctx, &child, err))
                return false;
        }
        c0 = b->cand_end[i];
        if (!j->end (j->ctx, err))
            return false;
    }
    return true;
}

/* Under mu: reads the next batch of parents into a free batch, in order;
 * NULL when none is left (or reading failed, or the consumer did). */
static pbatch_t *
claim (probe_t *p)
{
    pbatch_t *b;
    rm_frame_t f;
    int rc = 1;
    while (!p->in_end && !p->stop && p->claimed - p->done >= N_PBATCHES)
        pthread_cond_wait (&p->cv, &p->mu);
    if (p->in_end || p->stop)
        return NULL;
    b = &p->b[p->claimed % N_PBATCHES];
    b->n = 0;
    b->n_cand = 0;
    rm_buf_reset (&b->docs);
    rm_buf_reset (&b->prep);
    while (b->n < PBATCH_PARENTS && (rc = rm_store_next (p->in, &f, &p->err)) > 0) {
        rm_probe_doc (p->j->probe_local, f.data, f.len);
        b->doc_at[b->n] = b->docs.len;
        b->doc_len[b->n++] = f.len;
        rm_buf_append (&b->docs, f.data, f.len);
    }
    if (rc <= 0) {
        p->in_end = true;
        p->ok = rc == 0;
    }
    if (rc < 0 || b->n == 0)
        return NULL; /* a batch cut by a failed read is not handed on */
    p->claimed++;
    return b;
}

static int
seq_slot_cmp (const void *a, const void *b)
{
    const rm_child_t *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

/* A parent of several keys takes each child once, as $lookup does, under
 * the first of its keys that the child matched. */
static size_t
distinct_children (rm_child_t *c, size_t n)
{
    size_t m = 0;
    if (n < 2)
        return n; /* c may be NULL: no child at all yet */
    qsort (c, n, sizeof *c, seq_slot_cmp);
    for (size_t i = 0; i < n; i++)
        if (m == 0 || c[m - 1].seq != c[i].seq)
            c[m++] = c[i];
    return m;
}

/* One of a batch's parents' keys, looked up in stages over the whole
 * batch: each stage asks for what the next one reads (the key's slot,
 * its run's bounds, the run) well before it is read, so that the cache
 * misses of many lookups overlap instead of coming one after another. */
typedef struct {
    size_t at;       /* its bytes in the prober's keys */
    uint32_t len;
    uint32_t k;      /* its place among its parent's keys */
    uint64_t hash;
    uint32_t id;     /* its number in the table, if found */
    bool found;
    size_t from, to; /* its run of children in the table's rec */
} pkey_t;

/* A prober's own scratch space, reused batch after batch. */
typedef struct {
    uint8_t touched; /* what touch_children read (kept, so it is read) */
    rm_expr_ctx_t *cx; /* the step's filter's, with one */
    rm_buf_t tmp, keys;
    pkey_t *pk;
    size_t n_pk, pk_cap;
    size_t pk_end[PBATCH_PARENTS]; /* where each parent's keys end in pk */
} prober_t;

/* Reads a byte of each line a child's order and projection read first
 * (its first, middle and last: the whole of a child up to 192 bytes) for
 * the batch's children [from, to), in a loop where no load waits on
 * another, so that the cache misses of many children (they lie anywhere
 * in the children's memory) overlap; the ordering and the projection then
 * find them in the cache. Prefetches of each parent's children a few
 * parents ahead did not do this: two thirds of the projection's time was
 * still its first load of each child (perf annotate), with prefetches or
 * without, at any distance. Returns where it stopped. */
static size_t
touch_children (const pbatch_t *b, prober_t *w, size_t from, size_t to)
{
    uint8_t sum = 0;
    if (to > b->n_cand)
        to = b->n_cand;
    for (size_t c = from; c < to; c++) {
        const rm_child_t *x = &b->cand[c];
        sum ^= x->doc[0] ^ x->doc[x->len / 2] ^ x->doc[x->len - 1];
    }
    w->touched ^= sum;
    return to > from ? to : from;
}

/* Looks a batch's parents up: their children, ordered, prepared. */
static void
probe_batch (probe_t *p, pbatch_t *b, prober_t *w)
{
    table_t *t = p->t;
    const rm_join_t *j = p->j;
    size_t x = 0, touched = 0;

    /* The parents the step's filter takes (the others get no key: no
     * child, and they pass as they are)... */
    for (size_t i = 0; i < b->n; i++) {
        bool take;
        bson_error_t why;
        b->skip[i] = !rm_join_take_parent (j, NULL, w->cx, b->docs.data + b->doc_at[i],
                                           b->doc_len[i], &take, &why) ? 2 : !take;
    }
    /* ...their keys, back to back, and their hashes. */
    rm_buf_reset (&w->keys);
    w->n_pk = 0;
    for (size_t i = 0; i < b->n; i++) {
        size_t nk = b->skip[i] ? 0
                               : rm_join_keys (j->local, false, false, b->docs.data + b->doc_at[i],
                                               b->doc_len[i], &w->tmp);
        size_t off = 0;
        if (w->n_pk + nk > w->pk_cap) {
            while (w->n_pk + nk > w->pk_cap)
                w->pk_cap = w->pk_cap ? w->pk_cap * 2 : 1024;
            w->pk = bson_realloc (w->pk, w->pk_cap * sizeof *w->pk);
        }
        for (uint32_t k = 0; k < nk; k++) {
            pkey_t *pk = &w->pk[w->n_pk++];
            memcpy (&pk->len, w->tmp.data + off, 4);
            pk->at = w->keys.len;
            pk->k = k;
            pk->hash = rm_key_hash (w->tmp.data + off + 4, pk->len);
            rm_buf_append (&w->keys, w->tmp.data + off + 4, pk->len);
            off += 4 + pk->len;
        }
        w->pk_end[i] = w->n_pk;
    }
    /* Their slots, each asked for KEYS_AHEAD lookups before it is read;
     * each found key's run bounds asked for in turn... */
    for (x = 0; x < KEYS_AHEAD && x < w->n_pk; x++)
        rm_keytab_prefetch (&t->keys, w->pk[x].hash);
    for (x = 0; x < w->n_pk; x++) {
        pkey_t *pk = &w->pk[x];
        const uint32_t *id;
        if (x + KEYS_AHEAD < w->n_pk)
            rm_keytab_prefetch (&t->keys, w->pk[x + KEYS_AHEAD].hash);
        id = rm_keytab_find_hashed (&t->keys, w->keys.data + pk->at, pk->len, pk->hash);
        pk->found = id != NULL;
        if (id) {
            pk->id = *id;
            __builtin_prefetch (&t->start[*id]);
        }
    }
    /* ...and each run's ends asked for once its bounds are known. */
    for (x = 0; x < w->n_pk; x++) {
        pkey_t *pk = &w->pk[x];
        pk->from = pk->to = 0;
        if (pk->found) {
            pk->from = t->start[pk->id];
            pk->to = t->start[pk->id + 1];
            __builtin_prefetch (&t->rec[pk->from]);
            __builtin_prefetch (&t->rec[pk->to - 1]);
        }
    }
    /* Each parent's children, from its keys' runs. */
    x = 0;
    for (size_t i = 0; i < b->n; i++) {
        size_t first = b->n_cand, nk = w->pk_end[i] - x;
        for (; x < w->pk_end[i]; x++) {
            const pkey_t *pk = &w->pk[x];
            if (b->n_cand + (pk->to - pk->from) > b->cand_cap) {
                while (b->n_cand + (pk->to - pk->from) > b->cand_cap)
                    b->cand_cap = b->cand_cap ? b->cand_cap * 2 : 1024;
                b->cand = bson_realloc (b->cand, b->cand_cap * sizeof *b->cand);
                b->prep_at = bson_realloc (b->prep_at, b->cand_cap * sizeof *b->prep_at);
            }
            for (size_t nd = pk->from; nd < pk->to; nd++) {
                const lrec_t *r = &t->rec[nd];
                /* Both probers may mark one child: the same value, read
                 * once they are done. */
                __atomic_store_n (&t->matched[r->child], 1, __ATOMIC_RELAXED);
                b->cand[b->n_cand++] =
                    (rm_child_t){t->base + r->off, r->len, pk->k, r->child, r->id_at, false};
            }
        }
        /* A key's run holds each child once: only several keys can
         * repeat one. */
        if (nk > 1)
            b->n_cand = first + distinct_children (b->cand + first, b->n_cand - first);
        b->cand_end[i] = b->n_cand;
    }
    /* Each parent's children ordered and prepared, once in the cache. */
    for (size_t i = 0; i < b->n; i++) {
        size_t first = i ? b->cand_end[i - 1] : 0;
        size_t nk = w->pk_end[i] - (i ? w->pk_end[i - 1] : 0);
        /* Up to TOUCH_AHEAD children on read, TOUCH_AHEAD / 2 at a time:
         * the whole batch's (a megabyte) left the cache before the
         * projection came to its last ones. */
        if (touched < b->cand_end[i] + TOUCH_AHEAD / 2 && b->prep.len < PBATCH_PREP)
            touched = touch_children (b, w, touched, b->cand_end[i] + TOUCH_AHEAD);
        if (!(t->ids_in_order && nk == 1 && !(j->sort && j->sort->n)))
            rm_join_order (j, b->cand + first, b->cand_end[i] - first, nk > 1);
        /* The consumer's copy of each child made here, on this core,
         * where the child was just read: the consumer then copies bytes
         * in order instead of missing the cache once a child. */
        for (size_t c = first; j->prepare && c < b->cand_end[i] && b->prep.len < PBATCH_PREP;
             c++) {
            size_t at = b->prep.len;
            j->prepare (j->ctx, &b->cand[c], &b->prep);
            b->prep_at[c] = at;
            b->cand[c].len = (uint32_t) (b->prep.len - at);
            b->cand[c].prepared = true;
        }
    }
}

static void
prober_init (prober_t *w, const rm_join_t *j)
{
    memset (w, 0, sizeof *w);
    rm_buf_init (&w->tmp);
    rm_buf_init (&w->keys);
    if (j->sel->filter)
        w->cx = rm_expr_ctx_new (j->sel->now);
}

static void
prober_destroy (prober_t *w)
{
    rm_expr_ctx_destroy (w->cx);
    rm_buf_destroy (&w->tmp);
    rm_buf_destroy (&w->keys);
    bson_free (w->pk);
}

static void *
prober_main (void *arg)
{
    probe_t *p = arg;
    prober_t w;
    pbatch_t *b;
    prober_init (&w, p->j);
    pthread_mutex_lock (&p->mu);
    while ((b = claim (p))) {
        pthread_mutex_unlock (&p->mu);
        probe_batch (p, b, &w);
        pthread_mutex_lock (&p->mu);
        b->ready = true;
        pthread_cond_broadcast (&p->cv);
    }
    p->running--;
    pthread_cond_broadcast (&p->cv);
    pthread_mutex_unlock (&p->mu);
    prober_destroy (&w);
    return NULL;
}

/* The consumer's side: each batch in turn, once probed. */
static void
consume_all (probe_t *p)
{
    pthread_mutex_lock (&p->mu);
    for (;;) {
        pbatch_t *b = &p->b[p->done % N_PBATCHES];
        while (!(p->done < p->claimed && b->ready) && !(p->running == 0 && p->done == p->claimed))
            pthread_cond_wait (&p->cv, &p->mu);
        if (p->done == p->claimed)
            break;
        pthread_mutex_unlock (&p->mu);
        if (p->cons_ok)
            p->cons_ok = consume (p, b, &p->cons_err);
        pthread_mutex_lock (&p->mu);
        b->ready = false;
        p->done++;
        if (!p->cons_ok)
            p->stop = true;
        pthread_cond_broadcast (&p->cv);
    }
    pthread_mutex_unlock (&p->mu);
}

static bool
join_parents (table_t *t, rm_engine_t *e, const rm_join_t *j, bson_error_t *err)
{
    probe_t *p = bson_malloc0 (sizeof *p);
    pthread_t threads[N_PROBERS];
    size_t started = 0;
    bool ok;

    p->t = t;
    p->j = j;
    p->ok = p->cons_ok = true;
    p->in = rm_store_open (rm_engine_find (e, j->into)->store, err);
    if (!p->in) {
        bson_free (p);
        return false;
    }
    for (int i = 0; i < N_PBATCHES; i++) {
        rm_buf_init (&p->b[i].docs);
        rm_buf_init (&p->b[i].prep);
    }
    pthread_mutex_init (&p->mu, NULL);
    pthread_cond_init (&p->cv, NULL);
    pthread_mutex_lock (&p->mu);
    for (int i = 0; i < N_PROBERS; i++)
        if (rm_thread_start (&threads[started], prober_main, p) == 0)
            p->running = ++started;
    pthread_mutex_unlock (&p->mu);
    if (started) {
        consume_all (p);
    } else {
        /* No thread: probe and consume each batch here. */
        prober_t w;
        pbatch_t *b;
        prober_init (&w, j);
        pthread_mutex_lock (&p->mu);
        while ((b = claim (p))) {
            probe_batch (p, b, &w);
            p->cons_ok = consume (p, b, &p->cons_err);
            p->done++;
            if (!p->cons_ok)
                break;
        }
        pthread_mutex_unlock (&p->mu);
        prober_destroy (&w);
    }
    for (size_t i = 0; i < started; i++)
        pthread_join (threads[i], NULL);
    ok = p->cons_ok && p->ok;
    if (!p->cons_ok)
        *err = p->cons_err;
    else if (!p->ok)
        *err = p->err;
    rm_instream_close (p->in);
    for (int i = 0; i < N_PBATCHES; i++) {
        rm_buf_destroy (&p->b[i].docs);
        rm_buf_destroy (&p->b[i].prep);
        bson_free (p->b[i].prep_at);
        bson_free (p->b[i].cand);
    }
    pthread_mutex_destroy (&p->mu);
    pthread_cond_destroy (&p->cv);
    bson_free (p);
    return ok && j->finish (j->ctx, err);
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
        if (!t->matched[i])
            from->stats->orphans++;
        if ((j->keep_source || !t->matched[i]) &&
            !rm_store_add (next, t->base + t->c[i].off, t->c[i].len, err)) {
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
    rm_keytab_init (&t.keys, sizeof (uint32_t));
    ok = load_children (&t, j, from, err) && join_parents (&t, e, j, err);
    if (ok && j->rewrite_from)
        ok = write_children (&t, e, j, from, err);
    else if (ok)
        for (size_t i = 0; i < t.n; i++)
            from->stats->orphans += !t.matched[i];
    rm_buf_destroy (&t.arena);
    rm_buf_destroy (&t.tmp);
    rm_keytab_destroy (&t.keys);
    bson_free (t.c);
    bson_free (t.nodes);
    bson_free (t.start);
    bson_free (t.rec);
    bson_free (t.hash);
    bson_free (t.matched);
    return ok;
}
