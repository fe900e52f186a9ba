/* The _ids a step wrote or should have written to one target, as 64-bit
 * hashes in an open-addressing table (online.h): 16 bytes a result
 * at most. Run checks each batch's results against it (two results with
 * one _id are an error, never an overwrite); verify and sync look up the
 * target's documents in it (one no range makes is a leftover). A step's
 * set is bounded by --memory: past it, its hashes go to an external sort
 * (remodel/sorter.h) and those checks are made at the end of the step by
 * merging in hash order (online_verify.c). */
#include <string.h>

#include "online.h"
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
    rm_sorter_destroy (s->disk);
    memset (s, 0, sizeof *s);
}

void
online_hash_key (uint64_t h, uint8_t key[8])
{
    for (int i = 0; i < 8; i++)
        key[i] = (uint8_t) (h >> (56 - 8 * i));
}

static bool
to_disk (online_idset_t *s, uint64_t h, bson_error_t *err)
{
    uint8_t key[8];
    online_hash_key (h, key);
    return rm_sorter_add (s->disk, key, sizeof key, NULL, 0, err);
}

bool
online_idset_note (online_idset_t *s, uint64_t h, bson_error_t *err)
{
    bool ok = true;
    /* The table grows at half full (grow): to the next size, 8 bytes a
     * slot, while the old one is still there. */
    size_t next = s->cap ? s->cap * 2 : 4096;
    if (!s->disk && s->budget && 2 * (s->n + 1) > s->cap && 8 * (next + s->cap) > s->budget) {
        s->disk = rm_sorter_new (s->budget, s->tmpdir, NULL, NULL);
        for (size_t i = 0; ok && i < s->cap; i++)
            if (s->slots[i])
                ok = to_disk (s, s->slots[i], err);
        bson_free (s->slots);
        s->slots = NULL;
        s->n = s->cap = 0;
    }
    if (!s->disk) {
        online_idset_add (s, h);
        return true;
    }
    return ok && to_disk (s, h, err);
}

bool
online_idset_finish (online_idset_t *s, bson_error_t *err)
{
    return rm_sorter_finish (s->disk, err);
}

int
online_idset_next (online_idset_t *s, uint64_t *h, bson_error_t *err)
{
    const uint8_t *key, *val;
    size_t klen, vlen;
    int r = rm_sorter_next (s->disk, &key, &klen, &val, &vlen, err);
    if (r == 1) {
        *h = 0;
        for (size_t i = 0; i < 8 && i < klen; i++)
            *h = *h << 8 | key[i];
    }
    return r;
}
