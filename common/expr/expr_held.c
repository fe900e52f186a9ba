/* The held document (rm_expr_ctx_hold): one walk of its top-level fields,
 * shared by every read of a step's filter and expressions and by a set's
 * copy. The fields met are kept in order (seen), and the walk goes on
 * only as far as a read needs.
 *
 * The names reads ask for are kept too (the needs, from document to
 * document: a step asks for the same few every time). The walk matches
 * each field it meets against them, by a hash of its key's tag, and notes
 * where each need is; a read of a need met already is then one load,
 * where a scan of the fields met cost a comparison per field at every
 * read (a filter and six expressions over TPC-H's lineitems made ten
 * scans of up to seventeen fields per document). A name's first field is
 * the one found, as rm_doc_field finds it: a need keeps its first.
 *
 * Before any walk, the fields a document has where the layout of one
 * before had them (bsonlayout.h) are taken at once, and a need among
 * them is found by its place in that layout. */
#include <string.h>

#include "bsonlayout.h"
#include "bsonwalk.h"
#include "expr_ctx.h"

/* A need's place in the hash, by its tag and length. */
static inline unsigned
need_slot (uint64_t tag, uint32_t klen)
{
    return (unsigned) (((tag ^ klen) * UINT64_C (0x9E3779B97F4A7C15)) >> 57);
}

/* Eight bytes at p as a number. */
static inline uint64_t
load8 (const char *p)
{
    uint64_t v;
    memcpy (&v, p, 8);
    return v;
}

/* Whether need n is the key of klen bytes at k whose tag is tag: the tag
 * and the length first, then the last eight bytes as one number (within
 * the key, over the tag's when shorter than sixteen), a byte loop only
 * for the middle of a key longer than that. */
static inline bool
need_is_key (const rm_xneed_t *n, const char *k, uint32_t klen, uint64_t tag)
{
    return n->tag == tag && n->klen == klen &&
           (klen <= 8 || (load8 (k + klen - 8) == n->tail &&
                          (klen <= 16 || rm_walk_same (k + 8, n->name + 8, klen - 16))));
}

/* Whether need n is field f's key. */
static inline bool
need_is (const rm_expr_ctx_t *cx, const rm_xneed_t *n, const rm_xfield_t *f)
{
    const uint8_t *k = cx->held + f->start + 1;
    return need_is_key (n, (const char *) k, f->klen, rm_walk_key_tag (k, f->klen, cx->held + cx->held_len));
}

/* The need whose name is the key of klen bytes at k of tag tag (1 + its
 * index; 0: none). */
static inline uint8_t
need_at (const rm_expr_ctx_t *cx, const char *k, uint32_t klen, uint64_t tag)
{
    for (unsigned h = need_slot (tag, klen); cx->need_hash[h]; h = (h + 1) % RM_XNEED_HASH)
        if (need_is_key (&cx->needs[cx->need_hash[h] - 1], k, klen, tag))
            return cx->need_hash[h];
    return 0;
}

#if defined(__x86_64__) && defined(__SSE2__)
/* From byte 15 - n on: n + 1 bytes of ones, then zeros. */
static const uint8_t key_ones[32] = {
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};
#endif

/* Whether the key at k, with room bytes before the document's
 * terminator, is sh's: its bytes and its NUL, in one sixteen-byte
 * comparison where sixteen bytes are there. */
static inline bool
shape_is (const rm_xshape_t *sh, const uint8_t *k, uint32_t room)
{
    if (sh->klen >= room)
        return false; /* UINT32_MAX too */
#if defined(__x86_64__) && defined(__SSE2__)
    if (room >= 15) {
        __m128i x = _mm_loadu_si128 ((const __m128i *) (const void *) k);
        __m128i m = _mm_loadu_si128 ((const __m128i *) (const void *) (key_ones + 15 - sh->klen));
        __m128i want = _mm_load_si128 ((const __m128i *) (const void *) sh->key);
        return _mm_movemask_epi8 (_mm_cmpeq_epi8 (_mm_and_si128 (x, m), want)) == 0xFFFF;
    }
#endif
    return memcmp (k, sh->key, sh->klen + 1) == 0;
}

/* Place i's key, from a field walked the long way. */
static __attribute__ ((noinline)) void
shape_set (rm_expr_ctx_t *cx, size_t i, const uint8_t *k, uint32_t klen, uint8_t need)
{
    if (i >= cx->cap_shape) {
        cx->cap_shape = i < 16 ? 32 : 2 * i;
        cx->shape = bson_realloc (cx->shape, cx->cap_shape * sizeof *cx->shape);
    }
    for (; cx->n_shape < i; cx->n_shape++)
        cx->shape[cx->n_shape].klen = UINT32_MAX; /* never met: no key */
    rm_xshape_t *sh = &cx->shape[i];
    cx->none_set = 0; /* the places change */
    cx->layout.n = 0; /* its keys were the places' */
    memset (sh->key, 0, sizeof sh->key);
    if (klen < sizeof sh->key)
        memcpy (sh->key, k, klen);
    sh->klen = klen < sizeof sh->key ? klen : UINT32_MAX;
    sh->need = need;
    if (cx->n_shape <= i)
        cx->n_shape = i + 1;
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
    cx->held_slow = false;
    /* A new number, so that every need's place is stale; at the wrap
     * the needs forget theirs, rather than take one 2^32 documents old. */
    if (++cx->gen == 0) {
        for (size_t i = 0; i < cx->n_needs; i++)
            cx->needs[i].gen = 0;
        cx->lay_gen = 0;
        cx->gen = 1;
    }
}

void
rm_expr_ctx_release (rm_expr_ctx_t *cx)
{
    cx->held = NULL;
}

/* Need k's place noted at field i of the held document, unless an
 * earlier field of its name came first: whether it is want, met now. */
static inline bool
note_need (rm_expr_ctx_t *cx, uint8_t k, size_t i, const rm_xneed_t *want)
{
    rm_xneed_t *nd = &cx->needs[k - 1];
    if (nd->gen == cx->gen || (cx->lay_gen == cx->gen && nd->lay_at < cx->lay_k))
        return false;
    nd->gen = cx->gen;
    nd->at = (uint32_t) i;
    return nd == want;
}

/* One field the long way, at pos of the held document, as seen[i]: its
 * key scanned for its end, hashed against the needs (*need), and made
 * its place's shape. 1, 0 at the end, -1 on bad bytes, as rm_walk_next. */
static __attribute__ ((noinline)) int
field_slow (rm_expr_ctx_t *cx, uint32_t pos, size_t i, uint8_t *need)
{
    rm_walk_t w;
    rm_elem_t e;
    uint64_t t = 0;
    int r;

    if (i == cx->cap_seen) {
        /* Kept from document to document: grows to the widest. */
        rm_xlayout_t *l = &cx->layout;
        cx->cap_seen = cx->cap_seen ? 2 * cx->cap_seen : 32;
        cx->seen = bson_realloc (cx->seen, cx->cap_seen * sizeof *cx->seen);
        l->fields = bson_realloc (l->fields, cx->cap_seen * sizeof *l->fields);
        l->ends = bson_realloc (l->ends, cx->cap_seen * sizeof *l->ends);
        l->need = bson_realloc (l->need, cx->cap_seen);
        if (!l->bytes) {
            l->bytes = bson_malloc (RM_XLAYOUT_MAX);
            l->mask = bson_malloc (RM_XLAYOUT_MAX);
        }
    }
    rm_walk_init (&w, cx->held, cx->held_len);
    w.pos = pos;
    if ((r = rm_walk_next_tag (&w, &e, &t)) <= 0)
        return r;
    rm_xfield_t *s = &cx->seen[i];
    s->start = e.start;
    s->klen = rm_elem_key_len (&e);
    s->end = e.end;
    *need = need_at (cx, (const char *) cx->held + pos + 1, s->klen, t);
    shape_set (cx, i, cx->held + pos + 1, s->klen, *need);
    return 1;
}

/* ---- The layout of the documents before (bsonlayout.h) ----
 *
 * The fields a document has where the one the layout was made from had
 * them (TPC-H's lineitems: fourteen of seventeen) are taken at once, where
 * the walk paid a key comparison and a size per field (two fifths of a
 * set's walk over lineitems). */

/* The layout of the held document, walked whole with every field its
 * place's (the shape's: a document that held_slow marks is not taken,
 * so that apply_held may trust the places of those it places), over
 * its fields that end within RM_XLAYOUT_MAX bytes. */
static __attribute__ ((noinline)) void
layout_make (rm_expr_ctx_t *cx)
{
    rm_xlayout_t *l = &cx->layout;
    const uint8_t *d = cx->held;
    size_t n = 0;

    if (!l->bytes)
        return; /* no field met yet: its memory comes with seen's */
    memset (l->mask, 0, 4); /* the length */
    for (; n < cx->n_seen && cx->seen[n].end <= RM_XLAYOUT_MAX; n++) {
        const rm_xfield_t *f = &cx->seen[n];
        rm_layout_mask (l->mask, d[f->start], f->start, f->start + f->klen + 2, f->end);
        l->fields[n] = *f;
        l->ends[n] = f->end;
        l->need[n] = need_at (cx, (const char *) d + f->start + 1, f->klen,
                              rm_walk_key_tag (d + f->start + 1, f->klen, d + cx->held_len));
    }
    l->len = n ? cx->seen[n - 1].end : 0;
    rm_layout_bytes (l->bytes, d, l->mask, l->len);
    l->n = n;
    l->served = 0;
    /* The needs this document has in the old layout's places noted now,
     * before their places change to the new one's. */
    for (size_t j = 0; j < cx->n_needs; j++) {
        rm_xneed_t *nd = &cx->needs[j];
        if (nd->gen != cx->gen && cx->lay_gen == cx->gen && nd->lay_at < cx->lay_k) {
            nd->gen = cx->gen;
            nd->at = nd->lay_at;
        }
        nd->lay_at = UINT32_MAX;
    }
    cx->lay_k = 0;
    for (size_t i = n; i-- > 0;)
        if (l->need[i])
            cx->needs[l->need[i] - 1].lay_at = (uint32_t) i; /* the first wins */
}

/* The fields the held document (none walked yet) has where the layout
 * has them, taken as met (their needs found by lay_at). A layout that
 * places fewer than half of its fields is made again from a later
 * document (rm_layout_keep). */
static void
layout_take (rm_expr_ctx_t *cx)
{
    rm_xlayout_t *l = &cx->layout;
    uint32_t lim = l->len < cx->held_len - 1 ? l->len : cx->held_len - 1;
    uint32_t agree = rm_layout_agree_best (cx->held, l->bytes, l->mask, lim);
    size_t k = agree < l->len ? rm_layout_count (l->ends, (uint32_t) l->n, agree) : l->n;

    if (k && k <= cx->cap_seen) {
        /* Their needs are found by lay_at, not noted one by one. */
        memcpy (cx->seen, l->fields, k * sizeof *l->fields);
        cx->n_seen = k;
        cx->held_pos = l->fields[k - 1].end;
        cx->lay_gen = cx->gen;
        cx->lay_k = k;
    }
    if (!rm_layout_keep ((uint32_t) k, (uint32_t) l->n, &l->served, &l->wait, &l->backoff))
        l->n = 0;
}

/* Walks on from where the last walk stopped, keeping each field met,
 * until need want is met (NULL: to the end). A field whose key is its
 * place's in the documents before (shape) is taken at the key's known
 * length, its need known with it, in the inner loop, which keeps few
 * values live (a first version spilled a dozen to the stack at each
 * field); any other goes the long way (field_slow). */
static __attribute__ ((noinline)) bool
walk_fields (rm_expr_ctx_t *cx, const rm_xneed_t *want)
{
    const uint8_t *d = cx->held;
    uint32_t last = cx->held_len - 1, pos = cx->held_pos;
    size_t n = cx->n_seen;
    bool hit = false;
    int r = 0;

    if (cx->held_end)
        return false;
    if (cx->held_len < 5 || rm_walk_le32 (d) != cx->held_len || d[last] != 0) {
        cx->held_end = cx->held_bad = true;
        return false;
    }
    if (n == 0 && cx->layout.n) {
        layout_take (cx);
        n = cx->n_seen;
        pos = cx->held_pos;
        if (want && cx->lay_gen == cx->gen && want->lay_at < cx->lay_k)
            return true;
    }
    while (pos < last) {
        /* The places the shape knows and seen has room for. */
        size_t lim = cx->n_shape < cx->cap_seen ? cx->n_shape : cx->cap_seen;
        rm_xfield_t *seen = cx->seen;
        const rm_xshape_t *shape = cx->shape;
        uint8_t need;
        while (pos < last && n < lim && shape_is (&shape[n], d + pos + 1, last - pos - 1)) {
            const rm_xshape_t *sh = &shape[n];
            uint32_t v = pos + sh->klen + 2, size;
            if (!rm_walk_value_size (d[pos], d + v, last - v, &size)) {
                r = -1;
                goto out;
            }
            seen[n] = (rm_xfield_t){pos, sh->klen, v + size};
            pos = v + size;
            n++;
            if (sh->need && note_need (cx, sh->need, n - 1, want)) {
                hit = true;
                goto out;
            }
        }
        if (pos >= last)
            break;
        cx->held_slow = true;
        if ((r = field_slow (cx, pos, n, &need)) <= 0)
            break;
        pos = cx->seen[n].end;
        n++;
        if (need && note_need (cx, need, n - 1, want)) {
            hit = true;
            break;
        }
    }
out:
    cx->n_seen = n;
    cx->held_pos = pos;
    if (!hit) {
        cx->held_end = true;
        cx->held_bad = r < 0;
        if (r >= 0 && !cx->held_slow && !cx->layout.n && (!cx->layout.wait || !--cx->layout.wait))
            layout_make (cx);
    }
    return hit;
}

/* A name asked for the first time: a need from now on (NULL when the
 * needs are full), placed at its first field among those met already. */
static __attribute__ ((noinline)) rm_xneed_t *
need_add (rm_expr_ctx_t *cx, const char *name, uint32_t nlen, uint64_t tag, unsigned h)
{
    rm_xneed_t *n;
    if (cx->n_needs == RM_XNEEDS)
        return NULL;
    n = &cx->needs[cx->n_needs];
    n->tag = tag;
    n->klen = nlen;
    n->gen = 0;
    n->lay_at = UINT32_MAX;
    n->name = bson_strndup (name, nlen);
    n->tail = nlen > 8 ? load8 (name + nlen - 8) : 0;
    cx->need_hash[h] = (uint8_t) ++cx->n_needs;
    cx->n_shape = 0; /* its places knew no such need */
    cx->none_set = 0;
    cx->layout.n = 0;
    for (size_t i = 0; i < cx->n_seen; i++)
        if (need_is (cx, n, &cx->seen[i])) {
            n->gen = cx->gen;
            n->at = (uint32_t) i;
            break;
        }
    return n;
}

/* The need named (name, nlen), made one if new (NULL: no room). */
static inline rm_xneed_t *
need_of (rm_expr_ctx_t *cx, const char *name, uint32_t nlen, uint64_t tag)
{
    unsigned h = need_slot (tag, nlen);
    for (; cx->need_hash[h]; h = (h + 1) % RM_XNEED_HASH) {
        rm_xneed_t *n = &cx->needs[cx->need_hash[h] - 1];
        if (need_is_key (n, name, nlen, tag))
            return n;
    }
    return need_add (cx, name, nlen, tag, h);
}

/* Past RM_XNEEDS names (a plan reading more top-level fields than that
 * in one step): the fields met scanned, then the rest walked. */
static __attribute__ ((noinline)) const rm_xfield_t *
find_unneeded (rm_expr_ctx_t *cx, const char *name, uint32_t nlen, uint64_t tag)
{
    rm_xneed_t key = {.tag = tag, .klen = nlen, .name = (char *) name,
                      .tail = nlen > 8 ? load8 (name + nlen - 8) : 0};
    walk_fields (cx, NULL);
    for (size_t i = 0; i < cx->n_seen; i++)
        if (need_is (cx, &key, &cx->seen[i]))
            return &cx->seen[i];
    return NULL;
}

const rm_xfield_t *
rm_xheld_find (rm_expr_ctx_t *cx, const char *name, uint32_t nlen)
{
    /* A name's eight bytes may not all be there: by the byte when short. */
    uint64_t tag = rm_walk_key_tag ((const uint8_t *) name, nlen, (const uint8_t *) name + nlen);
    rm_xneed_t *n = need_of (cx, name, nlen, tag);
    if (!n)
        return find_unneeded (cx, name, nlen, tag);
    if (n->gen == cx->gen)
        return &cx->seen[n->at];
    if (cx->lay_gen == cx->gen && n->lay_at < cx->lay_k)
        return &cx->seen[n->lay_at];
    if (walk_fields (cx, n))
        return &cx->seen[cx->lay_gen == cx->gen && n->lay_at < cx->lay_k ? n->lay_at : n->at];
    return NULL;
}

bool
rm_xheld_all (rm_expr_ctx_t *cx)
{
    walk_fields (cx, NULL);
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
