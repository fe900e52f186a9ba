/* The _ids a step wrote or should have written to one target, as 64-bit
 * hashes in an open-addressing table (online_batch.h): 16 bytes a result
 * at most. Run checks each batch's results against it (two results with
 * one _id are an error, never an overwrite); verify and sync look up the
 * target's documents in it (one no range makes is a leftover). */
#include <string.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"

uint64_t
online_id_hash (const uint8_t *doc, uint32_t len)
{
    bson_iter_t it;
    rm_raw_value_t v;
    uint64_t h;
    if (!rm_doc_field (doc, len, "_id", 3, &it) || !rm_raw_value_of (&it, &v))
        return 1;
    h = rm_crc64_update (0, &v.type, 1);
    h = rm_crc64_update (h, v.data, v.len);
    return h ? h : 1; /* 0 marks an empty slot */
}

static void
grow (online_idset_t *s)
{
    size_t cap = s->cap ? s->cap * 2 : 4096;
    uint64_t *old = s->slots;
    size_t oldcap = s->cap;
    s->slots = bson_malloc0 (cap * sizeof *s->slots);
    s->cap = cap;
    s->n = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i])
            online_idset_add (s, old[i]);
    bson_free (old);
}

bool
online_idset_has (const online_idset_t *s, uint64_t h)
{
    if (!s->cap)
        return false;
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i] == h)
            return true;
        if (!s->slots[i])
            return false;
    }
}

bool
online_idset_add (online_idset_t *s, uint64_t h)
{
    size_t i;
    if (2 * (s->n + 1) > s->cap)
        grow (s);
    for (i = h & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
        if (s->slots[i] == h)
            return false;
    s->slots[i] = h;
    s->n++;
    return true;
}

void
online_idset_destroy (online_idset_t *s)
{
    bson_free (s->slots);
    memset (s, 0, sizeof *s);
}
