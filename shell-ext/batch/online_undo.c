/* In place: what remodel wrote to each document, field by field, noted in
 * its backup (online_write.c), and what rollback (online_finalize.c) makes
 * of it (online_batch.h).
 *
 * A backup's fieldsWrote holds, for each top-level field a write of
 * remodel's set or removed, the checksums of every value remodel gave it
 * (a removal is the checksum of nothing). rollback then needs no history
 * of the application's writes: a field of the document that differs from
 * the original and is not in fieldsWrote is the application's (kept); a
 * field in fieldsWrote whose value now is neither the original's nor any
 * remodel gave it is the application's too (the document is kept and named, with what that field
 * holds: restoring it would lose the write, keeping it keeps remodel's
 * other fields); the rest are remodel's, given back their original value.
 * A kill between a backup and its write leaves a value remodel was about
 * to give: still one of its own, so undone. A field whose name a $set
 * cannot take (a dot, a leading $) marks the backup undoWhole: rollback
 * then judges the whole document as before (online_finalize.c). */
#include <stdio.h>
#include <string.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "remodel/docpath.h"

/* The checksum of a value (its type and bytes); of nothing when v is NULL. */
static int64_t
value_crc (const rm_raw_value_t *v)
{
    uint8_t none = 0;
    if (!v)
        return (int64_t) rm_crc64_update (0, &none, 1);
    return (int64_t) rm_crc64_update (rm_crc64_update (0, &v->type, 1), v->data, v->len);
}

static bool
find_value (const uint8_t *doc, uint32_t len, const char *k, rm_raw_value_t *v)
{
    bson_iter_t it;
    return bson_iter_init_from_data (&it, doc, len) && bson_iter_find (&it, k) &&
           rm_raw_value_of (&it, v);
}

static bool
same_value (const rm_raw_value_t *a, const rm_raw_value_t *b)
{
    return a->type == b->type && a->len == b->len && memcmp (a->data, b->data, a->len) == 0;
}

/* Whether field k differs between a and b (present in one only, or with
 * another value). */
static bool
differs (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen, const char *k)
{
    rm_raw_value_t va, vb;
    bool ina = find_value (a, alen, k, &va), inb = find_value (b, blen, k, &vb);
    return ina != inb || (ina && !same_value (&va, &vb));
}

static bool
plain (const char *k)
{
    return *k && *k != '$' && !strchr (k, '.');
}

/* Calls fn for each top-level field of a or b that differs between them,
 * each once; false when fn does. */
static bool
each_difference (const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen,
                 bool (*fn) (const char *k, const uint8_t *b, uint32_t blen, void *arg), void *arg)
{
    bson_iter_t it;
    rm_raw_value_t v;
    if (!bson_iter_init_from_data (&it, b, blen))
        return false;
    while (bson_iter_next (&it))
        if (strcmp (bson_iter_key (&it), "_id") && differs (a, alen, b, blen, bson_iter_key (&it)) &&
            !fn (bson_iter_key (&it), b, blen, arg))
            return false;
    if (!bson_iter_init_from_data (&it, a, alen))
        return false;
    while (bson_iter_next (&it))
        if (!find_value (b, blen, bson_iter_key (&it), &v) && !fn (bson_iter_key (&it), b, blen, arg))
            return false;
    return true;
}

static bool
note_one (const char *k, const uint8_t *want, uint32_t wlen, void *arg)
{
    bson_t *add = arg;
    char path[300];
    rm_raw_value_t v;
    bool there = find_value (want, wlen, k, &v);
    if (!plain (k) || strlen (k) > 250)
        return false;
    snprintf (path, sizeof path, "fieldsWrote.%s", k);
    return BSON_APPEND_INT64 (add, path, value_crc (there ? &v : NULL));
}

bool
online_undo_note (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen,
                  bson_t *add)
{
    return each_difference (doc, len, want, wlen, note_one, add);
}

static bool
count_room (const char *k, const uint8_t *want, uint32_t wlen, void *arg)
{
    /* "fieldsWrote.k": an array of a dozen 11-byte checksums. */
    *(uint64_t *) arg += 1 + strlen (k) + 1 + 4 + 12 * 11 + 1;
    return true;
}

uint64_t
online_undo_room (const uint8_t *doc, uint32_t len, const uint8_t *want, uint32_t wlen)
{
    uint64_t n = 1 + 12 + 4 + 1;
    each_difference (doc, len, want, wlen, count_room, &n);
    return n;
}

/* Whether value crc c is among the checksums of array it. */
static bool
among (bson_iter_t *arr, int64_t c)
{
    bson_iter_t a;
    if (!BSON_ITER_HOLDS_ARRAY (arr) || !bson_iter_recurse (arr, &a))
        return false;
    while (bson_iter_next (&a))
        if (bson_iter_as_int64 (&a) == c)
            return true;
    return false;
}

typedef struct {
    bson_iter_t wrote; /* fieldsWrote */
    bool foreign;      /* a difference remodel did not write */
} scan_t;

static bool
remodels (const char *k, const uint8_t *now, uint32_t nlen, void *arg)
{
    scan_t *s = arg;
    bson_iter_t f;
    if (!bson_iter_recurse (&s->wrote, &f) || !bson_iter_find (&f, k))
        s->foreign = true;
    return true;
}

online_undo_t
online_undo_plan (const bson_t *backup, const uint8_t *orig, uint32_t olen, const bson_t *now,
                  bson_t *sel, bson_t *update, char *held, size_t cap)
{
    const uint8_t *nd = bson_get_data (now);
    scan_t s;
    bson_iter_t it, f;
    bson_t set, unset;
    size_t n_set = 0, n_unset = 0, n_held = 0;

    *held = '\0';
    if ((bson_iter_init_find (&it, backup, "undoWhole") && bson_iter_as_bool (&it)) ||
        !bson_iter_init_find (&s.wrote, backup, "fieldsWrote") ||
        !BSON_ITER_HOLDS_DOCUMENT (&s.wrote) || !bson_iter_recurse (&s.wrote, &f))
        return ONLINE_UNDO_UNKNOWN;
    /* Each field remodel wrote: still one of its values, or the
     * application's since. */
    while (bson_iter_next (&f)) {
        rm_raw_value_t v;
        bool there = find_value (nd, now->len, bson_iter_key (&f), &v);
        /* Back to the original's value (or never written): nothing to give back. */
        if (!differs (orig, olen, nd, now->len, bson_iter_key (&f)))
            continue;
        if (!among (&f, value_crc (there ? &v : NULL))) {
            size_t at = strlen (held);
            n_held++;
            if (at < cap && there) {
                bson_t one = BSON_INITIALIZER;
                char *text;
                bson_iter_t w;
                bson_iter_init_find (&w, now, bson_iter_key (&f));
                bson_append_iter (&one, bson_iter_key (&f), -1, &w);
                text = bson_as_relaxed_extended_json (&one, NULL);
                snprintf (held + at, cap - at, "%s%s", n_held > 1 ? ", " : "", text);
                bson_free (text);
                bson_destroy (&one);
            } else if (at < cap) {
                snprintf (held + at, cap - at, "%s{ \"%s\" : (removed) }", n_held > 1 ? ", " : "",
                          bson_iter_key (&f));
            }
        }
    }
    if (n_held)
        return ONLINE_UNDO_KEEP;
    /* Every difference from the original remodel's: the original back
     * whole, byte for byte where the server stores it as given. */
    s.foreign = false;
    each_difference (orig, olen, nd, now->len, remodels, &s);
    if (!s.foreign)
        return ONLINE_UNDO_WHOLE;
    /* The application's fields kept: only remodel's given back, on
     * condition that the document still holds what was just read of them. */
    bson_init (&set);
    bson_init (&unset);
    bson_init (sel);
    bson_iter_recurse (&s.wrote, &f);
    bson_iter_init_find (&it, now, "_id");
    bson_append_iter (sel, "_id", 3, &it);
    while (bson_iter_next (&f)) {
        const char *k = bson_iter_key (&f);
        bson_iter_t o, w;
        bool in_orig = bson_iter_init_from_data (&o, orig, olen) && bson_iter_find (&o, k);
        bool in_now = bson_iter_init_find (&w, now, k);
        if (in_now) {
            bson_append_iter (sel, k, -1, &w);
        } else {
            bson_t ex;
            BSON_APPEND_DOCUMENT_BEGIN (sel, k, &ex);
            BSON_APPEND_BOOL (&ex, "$exists", false);
            bson_append_document_end (sel, &ex);
        }
        if (!differs (orig, olen, nd, now->len, k))
            continue;
        if (in_orig)
            n_set += bson_append_iter (&set, k, -1, &o);
        else
            n_unset += BSON_APPEND_UTF8 (&unset, k, "");
    }
    bson_init (update);
    if (n_set)
        BSON_APPEND_DOCUMENT (update, "$set", &set);
    if (n_unset)
        BSON_APPEND_DOCUMENT (update, "$unset", &unset);
    bson_destroy (&set);
    bson_destroy (&unset);
    return n_set || n_unset ? ONLINE_UNDO_FIELDS : ONLINE_UNDO_DONE;
}
