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

/* key -> copied values of the first document of `from` with that key. */
static bool
load (dtable_t *t, const rm_denorm_t *d, rm_ens_t *from, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (from->store, err);
    rm_frame_t f;
    int rc;

    if (!in)
        return false;
    while ((rc = rm_store_next (in, &f, err)) > 0) {
        size_t nk = rm_join_keys (&d->foreign, true, f.data, f.len, &t->tmp), off = 0;
        bool values_made = false;
        size_t val_off = 0;
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
                    rm_denorm_values (d, f.data, f.len, &t->one);
                    val_off = t->vals.len;
                    rm_buf_append (&t->vals, t->one.data, t->one.len);
                    values_made = true;
                }
                s->val_off = val_off;
            }
            off += 4 + len;
        }
    }
    rm_instream_close (in);
    return rc == 0;
}

bool
rm_denorm_hash_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_denorm_t *d = &s->u.denorm;
    rm_ens_t *in = rm_engine_find (e, &d->in), *from = rm_engine_find (e, &d->from);
    rm_denorm_apply_t *a = rm_denorm_apply_new (d);
    rm_store_t *next = NULL;
    rm_instream_t *is = NULL;
    const uint8_t **values = NULL;
    size_t values_cap = 0;
    rm_refs_t refs;
    dtable_t t;
    rm_frame_t f;
    bool ok;
    int rc = 0;

    memset (&t, 0, sizeof t);
    memset (&refs, 0, sizeof refs);
    dgrow (&t);
    ok = load (&t, d, from, err) && (next = rm_engine_store_new (e, in, err)) &&
         (is = rm_store_open (in->store, err));
    while (ok && (rc = rm_store_next (is, &f, err)) > 0) {
        const uint8_t *out;
        size_t out_len, off = 0;
        rm_denorm_refs (a, f.data, f.len, &refs);
        if (refs.n > values_cap) {
            values_cap = refs.n * 2;
            values = bson_realloc (values, values_cap * sizeof *values);
        }
        for (size_t i = 0; i < refs.n; i++) {
            uint32_t len;
            dslot_t *sl;
            memcpy (&len, refs.keys.data + off, 4);
            values[i] = NULL;
            if (len == RM_DENORM_NO_REF) {
                off += 4;
                continue;
            }
            sl = dfind (&t, refs.keys.data + off + 4, len, NULL);
            if (sl)
                values[i] = t.vals.data + sl->val_off;
            off += 4 + len;
        }
        ok = rm_denorm_apply (a, f.data, f.len, values, &out, &out_len, err);
        if (!ok) {
            char *id = rm_doc_id_json (f.data, f.len);
            rm_error_prefix (err, "%s: document %s", in->stats->name, id);
            bson_free (id);
            break;
        }
        ok = rm_store_add (next, out, (uint32_t) out_len, err);
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (is);
    rm_denorm_apply_destroy (a);
    rm_buf_destroy (&refs.keys);
    rm_buf_destroy (&t.keys);
    rm_buf_destroy (&t.vals);
    rm_buf_destroy (&t.tmp);
    rm_buf_destroy (&t.one);
    bson_free (t.slots);
    bson_free (values);
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
    uint64_t need = rm_store_bytes (from->store) + rm_store_count (from->store) * PER_DOC_OVERHEAD;
    if (need <= e->opts.memory)
        return rm_denorm_hash_run (e, s, err);
    e->spilled = true;
    return rm_denorm_sort_run (e, s, err);
}
