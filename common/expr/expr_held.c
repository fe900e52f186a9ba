/* The held document (rm_expr_ctx_hold): one walk of its top-level fields,
 * shared by every read of a step's filter and expressions and by a set's
 * copy. The fields met are kept in order (seen); a read looks among them
 * first, and the walk goes on only as far as a read needs. A name's first
 * field is the one found, as rm_doc_field finds it. */
#include <string.h>

#include "bsonwalk.h"
#include "expr_ctx.h"

/* A key's tag: its first eight bytes as a number (fewer, zero-padded,
 * for a shorter key). With the length it tells apart in one comparison
 * nearly all keys of a document, where keys of one length sharing a
 * prefix ("l_shipdate", "l_shipmode": a TPC-H import's) took a byte loop
 * each. One eight-byte read where lim leaves room (a field's key within
 * its document), else byte by byte. */
static inline uint64_t
key_tag (const uint8_t *k, uint32_t klen, const uint8_t *lim)
{
    uint64_t t = 0;
    if (klen >= 8 || (size_t) (lim - k) >= 8) {
        memcpy (&t, k, 8);
        t = BSON_UINT64_FROM_LE (t);
        return klen >= 8 ? t : t & ((UINT64_C (1) << (8 * klen)) - 1);
    }
    for (uint32_t i = 0; i < klen; i++)
        t |= (uint64_t) k[i] << (8 * i);
    return t;
}

/* A field's tag not taken yet: taken the first time a name of its length
 * is compared with it, so that a walk compares nothing (a set's copy) and
 * most fields never need one. No checked key has it (0xFF is no UTF-8),
 * and one that had would only be taken again. */
#define UNTAGGED UINT64_MAX

/* Whether seen field f's key is (name, nlen) of tag: the length and the
 * tag first, the bytes past the eighth only when both agree. */
static inline bool
same_key (const rm_expr_ctx_t *cx, rm_xfield_t *f, const char *name, uint32_t nlen, uint64_t tag)
{
    if (f->klen != nlen)
        return false;
    if (f->tag == UNTAGGED)
        f->tag = key_tag (cx->held + f->start + 1, nlen, cx->held + cx->held_len);
    if (f->tag != tag)
        return false;
    /* The few bytes left. */
    return nlen <= 8 || rm_walk_same ((const char *) cx->held + f->start + 9, name + 8, nlen - 8);
}

void
rm_expr_ctx_hold (rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len)
{
    if (cx->held == doc && cx->held_len == len)
        return; /* held already: what its reads met stays */
    cx->held = doc;
    cx->held_len = len;
    cx->held_pos = 4;
    cx->held_end = cx->held_bad = false;
    cx->n_seen = 0;
}

void
rm_expr_ctx_release (rm_expr_ctx_t *cx)
{
    cx->held = NULL;
}

/* Walks on from where the last read stopped, keeping each field met,
 * until one named (name, nlen) (NULL: to the end). Its loop is inline:
 * the walk is most of a read's cost. */
static const rm_xfield_t *
walk_on (rm_expr_ctx_t *cx, const char *name, uint32_t nlen, uint64_t tag)
{
    rm_walk_t w;
    rm_elem_t e;
    int r;

    if (cx->held_end)
        return NULL;
    if (!rm_walk_init (&w, cx->held, cx->held_len)) {
        cx->held_end = cx->held_bad = true;
        return NULL;
    }
    w.pos = cx->held_pos;
    while ((r = rm_walk_next (&w, &e)) > 0) {
        if (cx->n_seen == cx->cap_seen) {
            /* Kept from document to document: grows to the widest. */
            cx->cap_seen = cx->cap_seen ? 2 * cx->cap_seen : 32;
            cx->seen = bson_realloc (cx->seen, cx->cap_seen * sizeof *cx->seen);
        }
        rm_xfield_t *s = &cx->seen[cx->n_seen++];
        s->start = e.start;
        s->klen = rm_elem_key_len (&e);
        s->end = e.end;
        s->tag = UNTAGGED;
        cx->held_pos = w.pos;
        if (name && same_key (cx, s, name, nlen, tag))
            return s;
    }
    cx->held_end = true;
    cx->held_bad = r < 0;
    return NULL;
}

const rm_xfield_t *
rm_xheld_find (rm_expr_ctx_t *cx, const char *name, uint32_t nlen)
{
    /* A name's eight bytes may not all be there: by the byte when short. */
    uint64_t tag = key_tag ((const uint8_t *) name, nlen, (const uint8_t *) name + nlen);
    for (size_t i = 0; i < cx->n_seen; i++)
        if (same_key (cx, &cx->seen[i], name, nlen, tag))
            return &cx->seen[i];
    return walk_on (cx, name, nlen, tag);
}

bool
rm_xheld_all (rm_expr_ctx_t *cx)
{
    walk_on (cx, NULL, 0, 0);
    return !cx->held_bad;
}

static bool
held_field (rm_expr_ctx_t *cx, const char *name, uint32_t nlen, bson_iter_t *out)
{
    const rm_xfield_t *f = rm_xheld_find (cx, name, nlen);
    return f && bson_iter_init_from_data_at_offset (out, cx->held, cx->held_len, f->start, f->klen);
}

bool
rm_expr_ctx_field (rm_expr_ctx_t *cx, const uint8_t *doc, uint32_t len, const char *name,
                   uint32_t name_len, bson_iter_t *out)
{
    if (cx && doc == cx->held && len == cx->held_len)
        return held_field (cx, name, name_len, out);
    return rm_doc_field (doc, len, name, name_len, out);
}
