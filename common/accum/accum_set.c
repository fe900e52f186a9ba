/* $addToSet: the distinct values of a group, told apart by their canonical
 * keys (rm_key_append: 1, 1.0, NumberLong(1) and NumberDecimal("1") are one
 * value, documents and arrays compare whole). The first value seen is the
 * one kept, and the result lists values in the order they were first
 * seen: the manual leaves the order unspecified, and this one is stable
 * and easy to test.
 *
 * The values go straight into the result array as they come; their keys
 * go into one arena, indexed by an open-addressing hash table. Slots carry
 * the number of the group that filled them, so starting a new group is
 * O(1) and, once the table has grown, adding allocates nothing. */
#include <string.h>

#include "remodel/bsoncheck.h"
#include "remodel/error.h"
#include "remodel/value.h"

#include "accum_impl.h"

typedef struct {
    size_t off, len; /* the key in the arena */
    uint64_t hash;
} member_t;

typedef struct {
    uint32_t group; /* the slot is in use when this is the current group */
    uint32_t member;
} slot_t;

struct rm_acc_set {
    bson_t *values;   /* the result array, {"0": v0, "1": v1, ...} */
    rm_buf_t keys;    /* the members' keys, back to back */
    rm_buf_t key;     /* the key being looked up */
    member_t *members;
    size_t n, cap;
    slot_t *slots;
    size_t nslots;    /* a power of two, at least twice n */
    uint32_t group;
};

rm_acc_set_t *
rm_acc_set_new (void)
{
    rm_acc_set_t *s = bson_malloc0 (sizeof *s);
    s->values = bson_new ();
    rm_buf_init (&s->keys);
    rm_buf_init (&s->key);
    s->group = 1;
    return s;
}

void
rm_acc_set_reset (rm_acc_set_t *s)
{
    bson_reinit (s->values);
    rm_buf_reset (&s->keys);
    s->n = 0;
    if (++s->group == 0) { /* wrapped: clear the table once */
        if (s->slots)
            memset (s->slots, 0, s->nslots * sizeof *s->slots);
        s->group = 1;
    }
}

void
rm_acc_set_destroy (rm_acc_set_t *s)
{
    if (!s)
        return;
    bson_destroy (s->values);
    rm_buf_destroy (&s->keys);
    rm_buf_destroy (&s->key);
    bson_free (s->members);
    bson_free (s->slots);
    bson_free (s);
}

/* The slot of the member with this key, or the empty slot where it goes. */
static slot_t *
find (rm_acc_set_t *s, const uint8_t *key, size_t len, uint64_t hash)
{
    size_t mask = s->nslots - 1;
    for (size_t i = (size_t) hash & mask;; i = (i + 1) & mask) {
        slot_t *slot = &s->slots[i];
        const member_t *m;
        if (slot->group != s->group)
            return slot;
        m = &s->members[slot->member];
        if (m->hash == hash && m->len == len && !memcmp (s->keys.data + m->off, key, len))
            return slot;
    }
}

static void
grow_table (rm_acc_set_t *s)
{
    size_t n = s->nslots ? s->nslots * 2 : 64;
    bson_free (s->slots);
    s->slots = bson_malloc0 (n * sizeof *s->slots);
    s->nslots = n;
    for (size_t i = 0; i < s->n; i++) {
        const member_t *m = &s->members[i];
        slot_t *slot = find (s, s->keys.data + m->off, m->len, m->hash);
        slot->group = s->group;
        slot->member = (uint32_t) i;
    }
}

bool
rm_acc_set_add (rm_acc_set_t *s, const bson_iter_t *v, bson_error_t *err)
{
    uint64_t hash;
    slot_t *slot;
    char buf[16];
    const char *ik;
    size_t kl;

    rm_buf_reset (&s->key);
    rm_key_append (&s->key, v);
    hash = rm_key_hash (s->key.data, s->key.len);
    if (2 * (s->n + 1) > s->nslots)
        grow_table (s);
    slot = find (s, s->key.data, s->key.len, hash);
    if (slot->group == s->group)
        return true; /* already there */
    if (s->n == UINT32_MAX) {
        rm_error_set (err, RM_ERR_UNSUPPORTED, "$addToSet: more than %u distinct values",
                      UINT32_MAX);
        return false;
    }
    kl = bson_uint32_to_string ((uint32_t) s->n, &ik, buf, sizeof buf);
    /* The set only grows: once past 16 MiB it can never fit in a document,
     * so it stops here rather than growing to 2 GiB. */
    if (!bson_append_iter (s->values, ik, (int) kl, v) || s->values->len > RM_BSON_MAX_SIZE) {
        rm_error_set (err, RM_ERR_FORMAT,
                      "$addToSet: the %zu distinct values pass 16 MiB: the result could not fit "
                      "in a document", s->n + 1);
        return false;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->members = bson_realloc (s->members, s->cap * sizeof *s->members);
    }
    s->members[s->n].off = s->keys.len;
    s->members[s->n].len = s->key.len;
    s->members[s->n].hash = hash;
    rm_buf_append (&s->keys, s->key.data, s->key.len);
    slot->group = s->group;
    slot->member = (uint32_t) s->n++;
    return true;
}

bool
rm_acc_set_finish (rm_acc_set_t *s, bson_t *out, const char *name, bson_error_t *err)
{
    if (!bson_append_array (out, name, -1, s->values)) {
        rm_error_set (err, RM_ERR_FORMAT, "\"%s\": the result is too large", name);
        return false;
    }
    return true;
}
