/* denormalize: the hash join (the referenced side fits in --memory; only
 * its copied values are kept, not whole documents) and the dispatch to the
 * external sort-merge otherwise. */
#include <string.h>

#include "denorm.h"

#define PER_DOC_OVERHEAD 100

typedef struct {
    uint64_t hash;
    size_t key_off, val_off;
    uint32_t key_len;
    bool used;
} dslot_t;

typedef struct {
    rm_buf_t keys, vals, tmp, one;
    dslot_t *slots;
    size_t n_slots, used;
} dtable_t;

static dslot_t *
dfind (dtable_t *t, const uint8_t *key, uint32_t len, bool *fresh)
{
    uint64_t h = rm_key_hash (key, len);
    size_t mask = t->n_slots - 1, i = (size_t) h & mask;
    for (;; i = (i + 1) & mask) {
        dslot_t *s = &t->slots[i];
        if (!s->used) {
            if (fresh) {
                *s = (dslot_t){h, t->keys.len, 0, len, true};
                rm_buf_append (&t->keys, key, len);
                t->used++;
                *fresh = true;
            }
            return fresh ? s : NULL;
        }
        if (s->hash == h && s->key_len == len && !memcmp (t->keys.data + s->key_off, key, len)) {
            if (fresh)
                *fresh = false;
            return s;
        }
    }
}

static void
dgrow (dtable_t *t)
{
    dslot_t *old = t->slots;
    size_t n_old = t->n_slots;
    t->n_slots = n_old ? n_old * 2 : 1024;
    t->slots = bson_malloc0 (t->n_slots * sizeof *t->slots);
    for (size_t i = 0; i < n_old; i++)
        if (old[i].used) {
            size_t j = (size_t) old[i].hash & (t->n_slots - 1);
            while (t->slots[j].used)
                j = (j + 1) & (t->n_slots - 1);
            t->slots[j] = old[i];
        }
    bson_free (old);
}

struct rm_denorm_table {
    const rm_denorm_t *d;
    dtable_t t;
    rm_denorm_apply_t *apply;
    rm_refs_t refs;
    const uint8_t **values;
    size_t values_cap;
    uint64_t docs, bytes; /* of `from`, for the memory estimate */
};

rm_denorm_table_t *
rm_denorm_table_new (const rm_step_t *s)
{
    rm_denorm_table_t *dt = bson_malloc0 (sizeof *dt);
    dt->d = &s->u.denorm;
    dt->apply = rm_denorm_apply_new (dt->d);
    dgrow (&dt->t);
    return dt;
}

void
rm_denorm_table_destroy (rm_denorm_table_t *dt)
{
    if (!dt)
        return;
    rm_denorm_apply_destroy (dt->apply);
    rm_buf_destroy (&dt->refs.keys);
    rm_buf_destroy (&dt->t.keys);
    rm_buf_destroy (&dt->t.vals);
    rm_buf_destroy (&dt->t.tmp);
    rm_buf_destroy (&dt->t.one);
    bson_free (dt->t.slots);
    bson_free (dt->values);
    bson_free (dt);
}

/* The one estimate of a table's memory, used in both engine modes so
 * they agree on which way a join goes. */
static uint64_t
need (uint64_t bytes, uint64_t docs)
{
    return bytes + docs * PER_DOC_OVERHEAD;
}

uint64_t
rm_denorm_table_need (const rm_denorm_table_t *dt)
{
    return need (dt->bytes, dt->docs);
}

/* key -> copied values of the first document of `from` with that key. */
void
rm_denorm_table_add (rm_denorm_table_t *dt, const uint8_t *doc, uint32_t doc_len)
{
    dtable_t *t = &dt->t;
    size_t nk = rm_join_keys (&dt->d->foreign, true, doc, doc_len, &t->tmp), off = 0;
    bool values_made = false;
    size_t val_off = 0;

    dt->docs++;
    dt->bytes += doc_len;
    for (size_t k = 0; k < nk; k++) {
        uint32_t len;
        bool fresh;
        dslot_t *s;
        memcpy (&len, t->tmp.data + off, 4);
        if ((t->used + 1) * 4 > t->n_slots * 3)
            dgrow (t);
        s = dfind (t, t->tmp.data + off + 4, len, &fresh);
        if (fresh) {
            if (!values_made) {
                rm_denorm_values (dt->d, doc, doc_len, &t->one);
                val_off = t->vals.len;
                rm_buf_append (&t->vals, t->one.data, t->one.len);
                values_made = true;
            }
            s->val_off = val_off;
        }
        off += 4 + len;
    }
}

bool
rm_denorm_table_apply (rm_denorm_table_t *dt, const char *ns_name, const uint8_t *doc,
                       uint32_t len, const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    rm_refs_t *refs = &dt->refs;
    size_t off = 0;

    rm_denorm_refs (dt->apply, doc, len, refs);
    if (refs->n > dt->values_cap) {
        dt->values_cap = refs->n * 2;
        dt->values = bson_realloc (dt->values, dt->values_cap * sizeof *dt->values);
    }
    for (size_t i = 0; i < refs->n; i++) {
        uint32_t klen;
        dslot_t *sl;
        memcpy (&klen, refs->keys.data + off, 4);
        dt->values[i] = NULL;
        if (klen == RM_DENORM_NO_REF) {
            off += 4;
            continue;
        }
        sl = dfind (&dt->t, refs->keys.data + off + 4, klen, NULL);
        if (sl)
            dt->values[i] = dt->t.vals.data + sl->val_off;
        off += 4 + klen;
    }
    return rm_denorm_apply (dt->apply, doc, len, dt->values, out, out_len, err) ||
           rm_doc_error (err, ns_name, "document", doc, len);
}

static bool
load (rm_denorm_table_t *dt, rm_ens_t *from, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (from->store, err);
    rm_frame_t f;
    int rc;

    if (!in)
        return false;
    while ((rc = rm_store_next (in, &f, err)) > 0)
        rm_denorm_table_add (dt, f.data, f.len);
    rm_instream_close (in);
    return rc == 0;
}

bool
rm_denorm_hash_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_denorm_t *d = &s->u.denorm;
    rm_ens_t *in = rm_engine_find (e, &d->in), *from = rm_engine_find (e, &d->from);
    rm_denorm_table_t *dt = rm_denorm_table_new (s);
    rm_store_t *next = NULL;
    rm_instream_t *is = NULL;
    rm_frame_t f;
    bool ok;
    int rc = 0;

    ok = load (dt, from, err) && (next = rm_engine_store_new (e, in, err)) &&
         (is = rm_store_open (in->store, err));
    while (ok && (rc = rm_store_next (is, &f, err)) > 0) {
        const uint8_t *out;
        size_t out_len;
        ok = rm_denorm_table_apply (dt, in->stats->name, f.data, f.len, &out, &out_len, err) &&
             rm_store_add (next, out, (uint32_t) out_len, err);
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (is);
    rm_denorm_table_destroy (dt);
    if (!ok) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (in, next, err);
}

bool
rm_step_denorm_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_ens_t *from = rm_engine_find (e, &s->u.denorm.from);
    if (need (rm_store_bytes (from->store), rm_store_count (from->store)) <= e->opts.memory)
        return rm_denorm_hash_run (e, s, err);
    e->spilled = true;
    return rm_denorm_sort_run (e, s, err);
}
