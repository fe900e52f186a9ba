/* The hash joins' key table: see keytab.h. It grows by doubling at three
 * quarters full, from 1024 slots. */
#include <string.h>

#include "keytab.h"

typedef struct {
    uint64_t hash;
    size_t key_off; /* in keys */
    uint32_t key_len;
    bool used;
} slot_t;

/* The payload follows the slot; slot_t's size keeps it 8-byte aligned. */
_Static_assert (sizeof (slot_t) % 8 == 0, "payloads stay aligned");

static inline slot_t *
slot_at (const rm_keytab_t *t, size_t i)
{
    return (slot_t *) (t->slots + i * t->stride);
}

/* key's slot, or the empty slot where it would go. */
static inline slot_t *
probe (const rm_keytab_t *t, const uint8_t *key, uint32_t len, uint64_t h)
{
    size_t mask = t->n_slots - 1, i = (size_t) h & mask;
    for (;; i = (i + 1) & mask) {
        slot_t *s = slot_at (t, i);
        if (!s->used ||
            (s->hash == h && s->key_len == len && !memcmp (t->keys.data + s->key_off, key, len)))
            return s;
    }
}

static void
grow (rm_keytab_t *t)
{
    uint8_t *old = t->slots;
    size_t n_old = t->n_slots;

    t->n_slots = n_old ? n_old * 2 : 1024;
    t->slots = bson_malloc0 (t->n_slots * t->stride);
    for (size_t i = 0; i < n_old; i++) {
        const slot_t *o = (const slot_t *) (old + i * t->stride);
        if (o->used) {
            size_t mask = t->n_slots - 1, j = (size_t) o->hash & mask;
            while (slot_at (t, j)->used)
                j = (j + 1) & mask;
            memcpy (slot_at (t, j), o, t->stride);
        }
    }
    bson_free (old);
}

void
rm_keytab_init (rm_keytab_t *t, size_t payload_size)
{
    memset (t, 0, sizeof *t);
    rm_buf_init (&t->keys);
    t->stride = sizeof (slot_t) + (payload_size + 7) / 8 * 8;
}

void *
rm_keytab_find (const rm_keytab_t *t, const uint8_t *key, uint32_t len)
{
    slot_t *s;
    if (!t->n_slots)
        return NULL;
    s = probe (t, key, len, rm_key_hash (key, len));
    return s->used ? s + 1 : NULL;
}

void *
rm_keytab_add (rm_keytab_t *t, const uint8_t *key, uint32_t len, bool *fresh)
{
    uint64_t h = rm_key_hash (key, len);
    slot_t *s;

    if ((t->used + 1) * 4 > t->n_slots * 3)
        grow (t);
    s = probe (t, key, len, h);
    *fresh = !s->used;
    if (*fresh) {
        /* The payload is zero already: slots start zeroed and stay unused
         * until this. */
        *s = (slot_t){h, t->keys.len, len, true};
        rm_buf_append (&t->keys, key, len);
        t->used++;
    }
    return s + 1;
}

void
rm_keytab_destroy (rm_keytab_t *t)
{
    rm_buf_destroy (&t->keys);
    bson_free (t->slots);
    memset (t, 0, sizeof *t);
}
