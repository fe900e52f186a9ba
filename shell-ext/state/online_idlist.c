/* The _ids that changed, per namespace, each once in the order first
 * seen (online_state.h): the lists the change log's events are noted
 * in (online_change_event.c) and a sync recomputes from, with a hash
 * table for membership. Calls nothing of the program. */
#include <stdio.h>
#include <string.h>

#include "online_state.h"
#include "remodel/crc64.h"
#include "remodel/value.h"

void
online_changes_init (online_changes_t *ch)
{
    memset (ch, 0, sizeof *ch);
}

void
online_changes_destroy (online_changes_t *ch)
{
    for (size_t i = 0; i < ch->n; i++) {
        online_idlist_t *l = &ch->lists[i];
        bson_free (l->ns);
        rm_buf_destroy (&l->bytes);
        bson_free (l->at);
        bson_free (l->hash);
        bson_free (l->slot);
    }
    bson_free (ch->lists);
    if (ch->reopen)
        bson_destroy (ch->reopen);
    memset (ch, 0, sizeof *ch);
}

online_idlist_t *
online_changes_list (online_changes_t *ch, const char *ns, bool create)
{
    online_idlist_t *l;
    for (size_t i = 0; i < ch->n; i++)
        if (!strcmp (ch->lists[i].ns, ns))
            return &ch->lists[i];
    if (!create)
        return NULL;
    if (ch->n == ch->cap) {
        ch->cap = ch->cap ? ch->cap * 2 : 8;
        ch->lists = bson_realloc (ch->lists, ch->cap * sizeof *ch->lists);
    }
    l = &ch->lists[ch->n++];
    memset (l, 0, sizeof *l);
    l->ns = bson_strdup (ns);
    rm_buf_init (&l->bytes);
    return l;
}

uint64_t
online_value_hash (const bson_iter_t *v)
{
    rm_raw_value_t raw;
    uint64_t h;
    if (!rm_raw_value_of (v, &raw))
        return 1;
    h = rm_crc64_update (0, &raw.type, 1);
    h = rm_crc64_update (h, raw.data, raw.len);
    return h ? h : 1;
}

void
online_idlist_clear (online_idlist_t *l, int64_t *kept)
{
    *kept -= l->n;
    l->n = 0;
    rm_buf_reset (&l->bytes);
    if (l->slot)
        memset (l->slot, 0, l->slots * sizeof *l->slot);
}

bool
online_idlist_get (const online_idlist_t *l, uint32_t i, bson_iter_t *id)
{
    const uint8_t *doc = l->bytes.data + l->at[i];
    uint32_t len;
    memcpy (&len, doc, 4);
    return bson_iter_init_from_data (id, doc, len) && bson_iter_next (id);
}

static bool
same_value (const bson_iter_t *a, const bson_iter_t *b)
{
    rm_raw_value_t x, y;
    return rm_raw_value_of (a, &x) && rm_raw_value_of (b, &y) && x.type == y.type &&
           x.len == y.len && !memcmp (x.data, y.data, x.len);
}

static void
grow_table (online_idlist_t *l)
{
    size_t cap = l->slots ? l->slots * 2 : 1024;
    bson_free (l->hash);
    bson_free (l->slot);
    l->hash = bson_malloc (cap * sizeof *l->hash);
    l->slot = bson_malloc0 (cap * sizeof *l->slot);
    l->slots = cap;
    for (uint32_t i = 0; i < l->n; i++) {
        bson_iter_t id;
        uint64_t h;
        size_t s;
        online_idlist_get (l, i, &id);
        h = online_value_hash (&id);
        for (s = h & (cap - 1); l->slot[s]; s = (s + 1) & (cap - 1))
            ;
        l->hash[s] = h;
        l->slot[s] = i + 1;
    }
}

void
online_values_init (online_values_t *a)
{
    bson_init (&a->arr);
    a->n = 0;
}

void
online_values_add (void *ctx, const bson_iter_t *id)
{
    online_values_t *a = ctx;
    char key[16];
    const char *kp;
    size_t kl = bson_uint32_to_string (a->n++, &kp, key, sizeof key);
    bson_append_iter (&a->arr, kp, (int) kl, id);
}

uint32_t
online_idlist_chunk (const online_idlist_t *l, uint32_t *at, int64_t max, online_values_t *v)
{
    bson_reinit (&v->arr);
    v->n = 0;
    for (; *at < l->n && (int64_t) v->n < max; (*at)++) {
        bson_iter_t it;
        if (online_idlist_get (l, *at, &it))
            online_values_add (v, &it);
    }
    return v->n;
}

bool
online_idlist_has (const online_idlist_t *l, const bson_iter_t *id)
{
    uint64_t h = online_value_hash (id);
    for (size_t s = l->slots ? h & (l->slots - 1) : 0; l->slots && l->slot[s];
         s = (s + 1) & (l->slots - 1)) {
        bson_iter_t old;
        if (l->hash[s] == h && online_idlist_get (l, l->slot[s] - 1, &old) && same_value (&old, id))
            return true;
    }
    return false;
}

void
online_changes_add (online_changes_t *ch, const char *ns, const bson_iter_t *id)
{
    online_idlist_t *l;
    uint64_t h = online_value_hash (id);
    size_t s;
    bson_t one;

    if (*ch->rescan)
        return;
    l = online_changes_list (ch, ns, true);
    if (2 * ((size_t) l->n + 1) > l->slots)
        grow_table (l);
    for (s = h & (l->slots - 1); l->slot[s]; s = (s + 1) & (l->slots - 1)) {
        bson_iter_t old;
        if (l->hash[s] == h && online_idlist_get (l, l->slot[s] - 1, &old) &&
            same_value (&old, id))
            return;
    }
    if (ch->kept >= ONLINE_CHANGES_MAX) {
        snprintf (ch->rescan, sizeof ch->rescan, "more than %d documents changed",
                  ONLINE_CHANGES_MAX);
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->at = bson_realloc (l->at, l->cap * sizeof *l->at);
    }
    bson_init (&one);
    bson_append_iter (&one, "", 0, id);
    l->at[l->n] = (uint32_t) l->bytes.len;
    rm_buf_append (&l->bytes, bson_get_data (&one), one.len);
    bson_destroy (&one);
    l->hash[s] = h;
    l->slot[s] = ++l->n;
    ch->kept++;
}
