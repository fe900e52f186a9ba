/* The hash joins' key table: see keytab.h. It grows by doubling at three
 * quarters full, from 1024 slots. */
#include <string.h>

#include "keytab.h"

/* Keys this short (an ObjectId's is 13 bytes) lie in their slot, zero
 * padded: a probe then reads one place, not the slot and then the key's
 * bytes elsewhere (a second cache miss per child added or parent looked
 * up in a join of a million children). */
#define INLINE 16

typedef struct {
    uint64_t hash;
    uint32_t key_len;
    uint32_t used;
    union {
        size_t off; /* in keys, past INLINE bytes */
        uint8_t bytes[INLINE];
    } key;
} slot_t;

/* The payload follows the slot; slot_t's size keeps it 8-byte aligned. */
_Static_assert (sizeof (slot_t) % 8 == 0, "payloads stay aligned");

static inline slot_t *
slot_at (const rm_keytab_t *t, size_t i)
{
    return (slot_t *) (t->slots + i * t->stride);
}

/* key's slot, or the empty slot where it would go. pad: the key zero
 * padded to INLINE bytes, if it is that short. */
static inline slot_t *
probe (const rm_keytab_t *t, const uint8_t *key, uint32_t len, uint64_t h, const uint8_t *pad)
{
    size_t mask = t->n_slots - 1, i = (size_t) h & mask;
    for (;; i = (i + 1) & mask) {
        slot_t *s = slot_at (t, i);
        if (!s->used)
            return s;
        if (s->hash == h && s->key_len == len &&
            (len <= INLINE ? !memcmp (s->key.bytes, pad, INLINE)
                           : !memcmp (t->keys.data + s->key.off, key, len)))
            return s;
    }
}

static inline void
pad_key (uint8_t *pad, const uint8_t *key, uint32_t len)
{
    memset (pad, 0, INLINE);
    if (len <= INLINE)
        memcpy (pad, key, len);
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
rm_keytab_find_hashed (const rm_keytab_t *t, const uint8_t *key, uint32_t len, uint64_t h)
{
    uint8_t pad[INLINE];
    slot_t *s;
    if (!t->n_slots)
        return NULL;
    pad_key (pad, key, len);
    s = probe (t, key, len, h, pad);
    return s->used ? s + 1 : NULL;
}

void *
rm_keytab_find (const rm_keytab_t *t, const uint8_t *key, uint32_t len)
{
    return rm_keytab_find_hashed (t, key, len, rm_key_hash (key, len));
}

void
rm_keytab_prefetch (const rm_keytab_t *t, uint64_t h)
{
    if (t->n_slots)
        __builtin_prefetch (slot_at (t, (size_t) h & (t->n_slots - 1)));
}

void *
rm_keytab_add (rm_keytab_t *t, const uint8_t *key, uint32_t len, bool *fresh)
{
    return rm_keytab_add_hashed (t, key, len, rm_key_hash (key, len), fresh);
}

void *
rm_keytab_add_hashed (rm_keytab_t *t, const uint8_t *key, uint32_t len, uint64_t h, bool *fresh)
{
    uint8_t pad[INLINE];
    slot_t *s;

    if ((t->used + 1) * 4 > t->n_slots * 3)
        grow (t);
    pad_key (pad, key, len);
    s = probe (t, key, len, h, pad);
    *fresh = !s->used;
    if (*fresh) {
        /* The payload is zero already: slots start zeroed and stay unused
         * until this. */
        s->hash = h;
        s->key_len = len;
        s->used = 1;
        if (len <= INLINE) {
            memcpy (s->key.bytes, pad, INLINE);
        } else {
            s->key.off = t->keys.len;
            rm_buf_append (&t->keys, key, len);
        }
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
