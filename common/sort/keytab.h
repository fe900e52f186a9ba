/* A hash table from join keys (canonical key bytes, remodel/value.h) to a
 * small fixed-size payload, for the hash joins: embed's and summarize's
 * (join_hash.c) and denormalize's (step_denorm.c). Open addressing with
 * linear probing; the keys are copied back to back into one buffer, and
 * each slot holds a key's hash, its place in that buffer and the payload,
 * so a lookup allocates nothing (keys of up to 16 bytes lie in their slot
 * instead). Internal. */
#ifndef REMODEL_KEYTAB_H
#define REMODEL_KEYTAB_H

#include "remodel/value.h"

typedef struct {
    rm_buf_t keys;  /* the keys' bytes */
    uint8_t *slots; /* n_slots of stride bytes each: a slot, then its payload */
    size_t stride, n_slots, used;
} rm_keytab_t;

/* An empty table whose payloads are payload_size bytes, aligned for 8-byte
 * fields. It takes no memory until the first key. */
void rm_keytab_init (rm_keytab_t *t, size_t payload_size);
/* The payload of key, or NULL if the table does not hold it. */
void *rm_keytab_find (const rm_keytab_t *t, const uint8_t *key, uint32_t len);
/* The same with the key's hash (rm_key_hash) given, for a caller that asked
 * for its slot ahead with rm_keytab_prefetch: many lookups' cache misses
 * then overlap instead of coming one after another. */
void *rm_keytab_find_hashed (const rm_keytab_t *t, const uint8_t *key, uint32_t len, uint64_t h);
void rm_keytab_prefetch (const rm_keytab_t *t, uint64_t h);
/* The payload of key, adding the key with an all-zero payload if the table
 * does not hold it yet (*fresh says which). The pointer lasts until the
 * next add. */
void *rm_keytab_add (rm_keytab_t *t, const uint8_t *key, uint32_t len, bool *fresh);
/* The same with the key's hash given (see rm_keytab_find_hashed). */
void *rm_keytab_add_hashed (rm_keytab_t *t, const uint8_t *key, uint32_t len, uint64_t h,
                            bool *fresh);
void rm_keytab_destroy (rm_keytab_t *t);

#endif
