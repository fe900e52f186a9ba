/* The held document (rm_expr_ctx_hold): one walk of its top-level fields,
 * shared by every read of a step's filter and expressions and by a set's
 * copy. The fields met are kept in order (seen); a read looks among them
 * first, and the walk goes on only as far as a read needs. A name's first
 * field is the one found, as rm_doc_field finds it. */
#include <string.h>

#include "bsonwalk.h"
#include "expr_ctx.h"

/* Whether seen field f's key is (name, nlen) of tag: the tag and the
 * length first, the bytes past the eighth only when both agree. */
static inline bool
same_key (const rm_expr_ctx_t *cx, const rm_xfield_t *f, const char *name, uint32_t nlen,
          uint64_t tag)
{
    return f->tag == tag && f->klen == nlen &&
           (nlen <= 8 || rm_walk_same ((const char *) cx->held + f->start + 9, name + 8, nlen - 8));
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
    cx->n_seen = cx->n_tagged = 0;
}

void
rm_expr_ctx_release (rm_expr_ctx_t *cx)
{
    cx->held = NULL;
}

/* Walks on from where the last read stopped, keeping each field met,
 * until one named (name, nlen) (NULL: to the end). Its loop is inline:
 * the walk is most of a read's cost. Each key's tag is taken as the walk
 * passes, from the bytes its scan loaded, so that the finds' scan is one
 * comparison a field; a walk to the end for no name (a set's copy) takes
 * none, and leaves them to a find after it (fill_tags). The rest stays in
 * locals until the walk stops, not stored through cx at each field. */
static inline __attribute__ ((always_inline)) const rm_xfield_t *
walk_fields (rm_expr_ctx_t *cx, const char *name, uint32_t nlen, uint64_t tag)
{
    const rm_xfield_t *hit = NULL;
    rm_xfield_t *seen = cx->seen;
    size_t n = cx->n_seen;
    rm_walk_t w;
    rm_elem_t e;
    uint64_t t = 0;
    int r;

    if (cx->held_end)
        return NULL;
    if (!rm_walk_init (&w, cx->held, cx->held_len)) {
        cx->held_end = cx->held_bad = true;
        return NULL;
    }
    w.pos = cx->held_pos;
    while ((r = name ? rm_walk_next_tag (&w, &e, &t) : rm_walk_next (&w, &e)) > 0) {
        if (n == cx->cap_seen) {
            /* Kept from document to document: grows to the widest. */
            cx->cap_seen = cx->cap_seen ? 2 * cx->cap_seen : 32;
            cx->seen = seen = bson_realloc (seen, cx->cap_seen * sizeof *seen);
        }
        rm_xfield_t *s = &seen[n++];
        s->start = e.start;
        s->klen = rm_elem_key_len (&e);
        s->end = e.end;
        s->tag = t;
        if (name && t == tag && same_key (cx, s, name, nlen, tag)) {
            hit = s;
            break;
        }
    }
    cx->n_seen = n;
    if (name)
        cx->n_tagged = n;
    cx->held_pos = w.pos;
    if (!hit) {
        cx->held_end = true;
        cx->held_bad = r < 0;
    }
    return hit;
}

/* The tags a walk to the end did not take: only ever the last fields
 * (nothing is walked after such a walk). */
static __attribute__ ((noinline)) void
fill_tags (rm_expr_ctx_t *cx)
{
    for (size_t i = cx->n_tagged; i < cx->n_seen; i++) {
        rm_xfield_t *f = &cx->seen[i];
        f->tag = rm_walk_key_tag (cx->held + f->start + 1, f->klen, cx->held + cx->held_len);
    }
    cx->n_tagged = cx->n_seen;
}

const rm_xfield_t *
rm_xheld_find (rm_expr_ctx_t *cx, const char *name, uint32_t nlen)
{
    /* A name's eight bytes may not all be there: by the byte when short. */
    uint64_t tag = rm_walk_key_tag ((const uint8_t *) name, nlen, (const uint8_t *) name + nlen);
    if (cx->n_tagged < cx->n_seen)
        fill_tags (cx);
    const rm_xfield_t *f = cx->seen, *end = f + cx->n_seen;
    for (; f < end; f++)
        if (f->tag == tag && same_key (cx, f, name, nlen, tag))
            return f;
    return walk_fields (cx, name, nlen, tag);
}

bool
rm_xheld_all (rm_expr_ctx_t *cx)
{
    walk_fields (cx, NULL, 0, 0);
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
