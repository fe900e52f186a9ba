/* What both embed joins share: join keys, the order of a parent's
 * children, and building the parent (and its overflow) from them.
 *
 * Where fields go: `as` replaces a field of that name where it stands, or
 * is appended at the end of the parent; `countAs` likewise, after `as`; on
 * overflow (onOverflow "outlier") the parent also gets
 * hasExtra<As> = true (the seeds' outlier pattern: hasExtraReviews), and the
 * rest go to the overflow namespace as pages {_id, parent_id, page, <as>},
 * page 2 onward (page 1 is the parent's own array). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsonwalk.h"
#include "docbuf.h"
#include "embed_join.h"
#include "remodel/bsoncheck.h"
#include "remodel/bsondepth.h"

/* ---- keys ---- */

typedef struct {
    rm_buf_t *keys;
    size_t n;
    bool distinct;
} keyctx_t;

/* The key goes straight into keys, after its length; a repeat is taken
 * off again (no scratch buffer, no copy, nothing allocated per document
 * once keys has grown). */
static bool
add_key (const bson_iter_t *value, void *ctx)
{
    keyctx_t *k = ctx;
    size_t at = k->keys->len;
    uint32_t len = 0;
    rm_buf_append (k->keys, &len, 4);
    rm_key_append (k->keys, value);
    len = (uint32_t) (k->keys->len - at - 4);
    memcpy (k->keys->data + at, &len, 4);
    if (k->distinct) {
        /* Few keys per document: a linear scan beats a set. */
        size_t off = 0;
        for (size_t i = 0; i < k->n; i++) {
            uint32_t l;
            memcpy (&l, k->keys->data + off, 4);
            if (l == len && !memcmp (k->keys->data + off + 4, k->keys->data + at + 4, l)) {
                k->keys->len = at;
                return true;
            }
            off += 4 + l;
        }
    }
    k->n++;
    return true;
}

size_t
rm_join_keys (const rm_path_t *path, bool foreign, bool since_36681, const uint8_t *doc,
              uint32_t len, rm_buf_t *keys)
{
    keyctx_t k = {keys, 0, true};
    rm_buf_reset (keys);
    if (foreign) {
        rm_path_visit_foreign (doc, len, path, since_36681, add_key, &k);
    } else {
        rm_path_visit (doc, len, path, true, false, add_key, &k);
        if (k.n == 0)
            add_key (NULL, &k); /* missing, null or [] act as null */
    }
    return k.n;
}

size_t
rm_join_child_keys (const rm_join_t *j, const uint8_t *doc, uint32_t len, rm_buf_t *keys,
                    rm_buf_t *tmp, uint32_t *id_at)
{
    rm_walk_t w;
    rm_elem_t e;
    int rc = 0;
    uint32_t at = RM_CHILD_NO_ID, key_len = 0;
    size_t mark = keys->len;
    bool found = false, keyed = false;
    size_t n;

    /* One walk finds both when foreignField is a top-level field holding
     * a scalar (a reference: the usual case), its key written in place;
     * anything else goes by the general rules. The key's bytes are those
     * rm_key_append gives. */
    if (j->foreign->n == 1 && rm_walk_init (&w, doc, len)) {
        while ((!found || at == RM_CHILD_NO_ID) && (rc = rm_walk_next (&w, &e)) > 0) {
            if (at == RM_CHILD_NO_ID && rm_elem_key_is (&w, &e, "_id", 3))
                at = e.start;
            if (!found && rm_elem_key_is (&w, &e, j->foreign->parts[0], j->foreign->lens[0])) {
                found = true;
                rm_buf_append (keys, &key_len, 4);
                /* false (nothing added): an array, a document, null... */
                keyed = rm_key_append_scalar (keys, (bson_type_t) e.type, doc + e.value);
            }
        }
        if (rc >= 0 && keyed) {
            key_len = (uint32_t) (keys->len - mark - 4);
            memcpy (keys->data + mark, &key_len, 4);
            *id_at = at;
            return 1;
        }
        keys->len = mark;
    }
    *id_at = rm_child_id_at (doc, len);
    n = rm_join_keys (j->foreign, true, j->since_36681, doc, len, tmp);
    rm_buf_append (keys, tmp->data, tmp->len);
    return n;
}

/* ---- order ---- */

/* The value a sort key sees: an array sorts by its smallest element
 * ascending and its largest descending; an empty array below null. */
typedef struct {
    bson_iter_t it;
    int rank; /* 0: missing/null, 1: a value in it, -1: empty array */
} sortval_t;

static void
sort_value (const rm_sortkey_t *k, const rm_child_t *c, sortval_t *v)
{
    bson_iter_t arr, e;
    v->rank = 0;
    if (!rm_path_get (c->doc, c->len, &k->path, &v->it) || BSON_ITER_HOLDS_NULL (&v->it))
        return;
    v->rank = 1;
    if (!BSON_ITER_HOLDS_ARRAY (&v->it))
        return;
    arr = v->it;
    v->rank = -1;
    bson_iter_recurse (&arr, &e);
    while (bson_iter_next (&e))
        if (v->rank == -1 || rm_value_compare (&e, &v->it) * k->dir < 0) {
            v->it = e;
            v->rank = 1;
        }
}

uint32_t
rm_child_id_at (const uint8_t *doc, uint32_t len)
{
    bson_iter_t it;
    return rm_doc_field (doc, len, "_id", 3, &it) ? bson_iter_offset (&it) : RM_CHILD_NO_ID;
}

/* A child's _id, where rm_child_id_at found it (or finds it now). */
static bool
child_id (const rm_child_t *c, bson_iter_t *it)
{
    uint32_t at = c->id_at ? c->id_at : rm_child_id_at (c->doc, c->len);
    return at != RM_CHILD_NO_ID &&
           bson_iter_init_from_data_at_offset (it, c->doc, c->len, at, 3);
}

/* A child's _id against another's, in MongoDB's order (missing lowest). */
static int
child_id_cmp (const rm_child_t *a, const rm_child_t *b)
{
    bson_iter_t ia, ib;
    bool ha, hb;
    /* Two ObjectIds (most _ids) compare as their 12 bytes: read them where
     * rm_child_id_at found them (type, "_id\0", value). */
    if (a->id_at && b->id_at && a->id_at != RM_CHILD_NO_ID && b->id_at != RM_CHILD_NO_ID &&
        a->doc[a->id_at] == BSON_TYPE_OID && b->doc[b->id_at] == BSON_TYPE_OID) {
        int c = memcmp (a->doc + a->id_at + 5, b->doc + b->id_at + 5, 12);
        return (c > 0) - (c < 0);
    }
    ha = child_id (a, &ia);
    hb = child_id (b, &ib);
    return rm_value_compare (ha ? &ia : NULL, hb ? &ib : NULL);
}

int
rm_join_child_cmp (const rm_join_t *j, bool by_slot, const rm_child_t *a, const rm_child_t *b)
{
    const rm_sortspec_t *sort = j->sort;
    int c;

    for (size_t i = 0; sort && i < sort->n; i++) {
        const rm_sortkey_t *k = &sort->keys[i];
        sortval_t va, vb;
        sort_value (k, a, &va);
        sort_value (k, b, &vb);
        if (va.rank == -1 || vb.rank == -1) {
            /* [] sorts above MinKey and below null and everything else. */
            const sortval_t *other = va.rank == -1 ? &vb : &va;
            int sign = va.rank == -1 ? 1 : -1;
            if (va.rank == vb.rank)
                c = 0;
            else if (other->rank == 1 && BSON_ITER_HOLDS_MINKEY (&other->it))
                c = sign;
            else
                c = -sign;
        } else
            c = rm_value_compare (va.rank ? &va.it : NULL, vb.rank ? &vb.it : NULL);
        if (c)
            return c * k->dir;
    }
    /* Ties (and no sort) go in an order the compiled pipeline can state,
     * not from's: a server's $lookup hands children in an order of its own
     * (an index's, a collection scan's, mongo-java-server's by the
     * parent's references), so from's order is not one a pipeline can
     * keep. Embed: the parent's array of references, then _id; summarize:
     * _id. seq only separates two children of one _id (a dump may hold
     * them; a collection cannot). */
    if (j->order_by_id && by_slot && a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    if ((c = child_id_cmp (a, b)) != 0)
        return c;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

typedef struct {
    const rm_join_t *j;
    bool by_slot;
} orderctx_t;

static int
order_cmp (const void *a, const void *b, void *arg)
{
    const orderctx_t *o = arg;
    return rm_join_child_cmp (o->j, o->by_slot, a, b);
}

void
rm_join_order (const rm_join_t *j, rm_child_t *c, size_t n, bool by_slot)
{
    orderctx_t o = {j, by_slot};
    size_t i = 1;
    /* A comparison reads both _ids: find each child's once (a key with
     * thousands of children costs n log n comparisons when they are out
     * of order). */
    for (size_t k = 0; n > 1 && k < n; k++)
        if (!c[k].id_at)
            c[k].id_at = rm_child_id_at (c[k].doc, c[k].len);
    /* Children mostly come in order already (from's order is often _id
     * order): n - 1 comparisons then, not a sort's n log n. The order is
     * total (seq breaks ties), so a sorted array is what qsort gives. */
    while (i < n && rm_join_child_cmp (j, by_slot, &c[i - 1], &c[i]) < 0)
        i++;
    if (i < n)
        qsort_r (c, n, sizeof *c, order_cmp, &o);
}

/* ---- building ---- */

struct rm_embed_out {
    rm_engine_t *e;
    const rm_step_t *s;
    const rm_embed_t *spec;
    rm_ens_t *into, *overflow;
    rm_store_t *next, *next_overflow;
    char flag[300];          /* hasExtra<As> */
    /* The parent being built. Its items (projected children, back to back)
     * are [0, k) for its own array once that is settled (`closed`), and
     * [k, n) for the overflow page being filled: at most one document's
     * worth of each, however many children the parent has. */
    const uint8_t *pdoc;
    uint32_t plen;
    uint64_t total;          /* matching children (countAs) */
    size_t taken;            /* of them, within `limit` */
    size_t n, k;
    bool closed;
    int32_t page;            /* the next overflow page's number */
    size_t too_many;         /* without outlier: children past maxItems... */
    size_t too_big, big_bytes; /* ...or past 16 MiB: the error at end */
    rm_buf_t items;
    size_t *item_off;
    size_t item_cap;
    rm_buf_t doc, key;
    size_t as_len, count_as_len, flag_len;
    /* the lengths of project's keys, measured once, not per field of
     * every child */
    uint32_t *proj_len;
    /* project's computed fields: evaluated on the consumer's thread (the
     * probe workers prepare no child then), in cx, reset per child */
    rm_expr_ctx_t *cx;
    const char *from_name;
};

rm_embed_out_t *
rm_embed_out_new (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_embed_out_t *o = bson_malloc0 (sizeof *o);
    o->e = e;
    o->s = s;
    o->spec = &s->u.embed;
    o->into = rm_engine_find (e, &o->spec->into);
    snprintf (o->flag, sizeof o->flag, "hasExtra%c%s", toupper ((unsigned char) o->spec->as[0]),
              o->spec->as + 1);
    o->as_len = strlen (o->spec->as);
    o->count_as_len = o->spec->count_as ? strlen (o->spec->count_as) : 0;
    o->flag_len = strlen (o->flag);
    o->proj_len = bson_malloc0 ((o->spec->n_proj + 1) * sizeof *o->proj_len);
    for (size_t i = 0; i < o->spec->n_proj; i++)
        o->proj_len[i] = (uint32_t) strlen (o->spec->proj[i].name);
    if (o->spec->n_computed) {
        o->cx = rm_expr_ctx_new (rm_engine_now (e));
        o->from_name = rm_engine_find (e, &o->spec->from)->stats->name;
    }
    o->next = rm_engine_store_new (e, o->into, err);
    if (!o->next) {
        rm_embed_out_destroy (o);
        return NULL;
    }
    if (o->spec->on_overflow == RM_OVERFLOW_OUTLIER) {
        o->overflow = rm_engine_find (e, &o->spec->overflow_to);
        o->next_overflow = rm_engine_store_new (e, o->overflow, err);
        if (!o->next_overflow) {
            rm_embed_out_destroy (o);
            return NULL;
        }
    }
    return o;
}

/* Appends one child's computed fields (project's, in its order) to the
 * document being built in out: a missing result leaves its field out, as
 * $project does. A failure names the child and the field; where the
 * engine collects failures (check --against), the field is left out and
 * the run goes on. */
static bool
computed_fields (rm_embed_out_t *o, const rm_child_t *c, rm_buf_t *out, bson_error_t *err)
{
    const rm_embed_t *spec = o->spec;
    rm_expr_ctx_reset (o->cx);
    for (size_t i = 0; i < spec->n_proj; i++) {
        const rm_proj_field_t *f = &spec->proj[i];
        bson_value_t v;
        rm_raw_value_t raw;
        if (f->kind != RM_PROJ_COMPUTED)
            continue;
        if (!rm_expr_eval (o->cx, f->expr, c->doc, c->len, &v, err)) {
            rm_error_prefix (err, "project \"%s\"", f->name);
            rm_doc_error (err, o->from_name, "document", c->doc, c->len);
            if (rm_engine_doc_error (o->e, o->s, err))
                continue;
            return false;
        }
        if (v.value_type == BSON_TYPE_EOD)
            continue;
        rm_expr_raw (o->cx, &v, &raw);
        rm_docbuf_key (out, (bson_type_t) raw.type, f->name);
        rm_buf_append (out, raw.data, raw.len);
    }
    return true;
}

/* Appends one child, projected, as a whole document to out. Only reads o
 * when project computes nothing (the probe worker calls it then too,
 * rm_embed_out_prepare). */
static bool
project_child (rm_embed_out_t *o, const rm_child_t *c, rm_buf_t *out, bson_error_t *err)
{
    const rm_embed_t *spec = o->spec;
    size_t start;
    rm_walk_t w;
    rm_elem_t e;
    size_t from = 0, to = 0; /* kept bytes not copied yet: [from, to) of the child */

    /* A raw walk of the child's fields (checked when read), each kept
     * field's bytes copied as they are: neighbours together, in one copy
     * (most children lose one field or none). An inclusion keeps the
     * fields it includes and _id unless excluded (a computed one is
     * computed), in the child's order; an exclusion all but those it
     * excludes; computed fields follow, in project's order ($project's). */
    start = rm_docbuf_begin (out);
    if (rm_walk_init (&w, c->doc, c->len))
        while (rm_walk_next (&w, &e) > 0) {
            bool keep = true;
            if (spec->project) {
                const char *k = rm_elem_key (&w, &e);
                uint32_t kl = rm_elem_key_len (&e);
                bool is_id = rm_elem_key_is (&w, &e, "_id", 3);
                size_t p = 0;
                while (p < spec->n_proj &&
                       (o->proj_len[p] != kl || !rm_walk_same (spec->proj[p].name, k, kl)))
                    p++;
                if (p < spec->n_proj)
                    keep = spec->proj[p].kind == RM_PROJ_INCLUDE;
                else
                    keep = !spec->project_inclusive || is_id;
            }
            if (!keep)
                continue;
            if (to != e.start) {
                if (to > from)
                    rm_buf_append (out, c->doc + from, to - from);
                from = e.start;
            }
            to = e.end;
        }
    if (to > from)
        rm_buf_append (out, c->doc + from, to - from);
    if (spec->n_computed && !computed_fields (o, c, out, err)) {
        out->len = start;
        return false;
    }
    rm_docbuf_end (out, start);
    return true;
}

void
rm_embed_out_prepare (const void *o, const rm_child_t *c, rm_buf_t *out)
{
    /* (never with computed fields: step_embed.c sets no prepare then) */
    project_child ((rm_embed_out_t *) o, c, out, NULL);
}

/* Appends one child, projected, to o->items: as it came when prepared. */
static bool
add_item (rm_embed_out_t *o, const rm_child_t *c, bson_error_t *err)
{
    if (c->prepared) {
        rm_buf_append (&o->items, c->doc, c->len);
        return true;
    }
    return project_child (o, c, &o->items, err);
}

/* Appends the array of items [from, to) to out, as a BSON array's value:
 * straight into the document being built, not copied there after. */
static void
build_array (rm_embed_out_t *o, size_t from, size_t to, rm_buf_t *out)
{
    size_t start = rm_docbuf_begin (out);
    for (size_t i = from; i < to; i++) {
        char buf[16];
        const char *key;
        bson_uint32_to_string ((uint32_t) (i - from), &key, buf, sizeof buf);
        rm_docbuf_key (out, BSON_TYPE_DOCUMENT, key);
        rm_buf_append (out, o->items.data + o->item_off[i], o->item_off[i + 1] - o->item_off[i]);
    }
    rm_docbuf_end (out, start);
}

static void
append_count (rm_buf_t *b, const char *key, uint64_t n)
{
    if (n <= INT32_MAX) {
        int32_t v = (int32_t) BSON_UINT32_TO_LE ((uint32_t) n);
        rm_docbuf_key (b, BSON_TYPE_INT32, key);
        rm_buf_append (b, &v, 4);
    } else {
        int64_t v = (int64_t) BSON_UINT64_TO_LE (n);
        rm_docbuf_key (b, BSON_TYPE_INT64, key);
        rm_buf_append (b, &v, 8);
    }
}

/* The parent being built with items [0, k) as `as`, the count and the
 * flag, into o->doc. A raw walk of the parent's fields: the runs of
 * fields kept as they are copied whole, each in one copy. */
static void
build_parent (rm_embed_out_t *o, size_t k, bool flag)
{
    const rm_embed_t *spec = o->spec;
    bool wrote_as = false, wrote_count = !spec->count_as, wrote_flag = !flag;
    rm_walk_t w;
    rm_elem_t e;
    size_t start, from = 0, to = 0; /* fields not copied yet: [from, to) of the parent */

    rm_buf_reset (&o->doc);
    start = rm_docbuf_begin (&o->doc);
    if (rm_walk_init (&w, o->pdoc, o->plen))
        while (rm_walk_next (&w, &e) > 0) {
            bool is_as = rm_elem_key_is (&w, &e, spec->as, o->as_len);
            bool is_count = !is_as && spec->count_as &&
                            rm_elem_key_is (&w, &e, spec->count_as, o->count_as_len);
            bool is_flag = !is_as && !is_count && rm_elem_key_is (&w, &e, o->flag, o->flag_len);
            if (!is_as && !is_count && !is_flag) {
                if (to != e.start) {
                    rm_buf_append (&o->doc, o->pdoc + from, to - from);
                    from = e.start;
                }
                to = e.end;
                continue;
            }
            rm_buf_append (&o->doc, o->pdoc + from, to - from);
            from = to = 0;
            if (is_as) {
                rm_docbuf_key (&o->doc, BSON_TYPE_ARRAY, spec->as);
                build_array (o, 0, k, &o->doc);
                wrote_as = true;
            } else if (is_count) {
                append_count (&o->doc, spec->count_as, o->total);
                wrote_count = true;
            } else if (flag) {
                rm_docbuf_key (&o->doc, BSON_TYPE_BOOL, o->flag);
                rm_buf_append (&o->doc, "\x01", 1);
                wrote_flag = true;
            }
        }
    rm_buf_append (&o->doc, o->pdoc + from, to - from);
    if (!wrote_as) {
        rm_docbuf_key (&o->doc, BSON_TYPE_ARRAY, spec->as);
        build_array (o, 0, k, &o->doc);
    }
    if (!wrote_count)
        append_count (&o->doc, spec->count_as, o->total);
    if (!wrote_flag) {
        rm_docbuf_key (&o->doc, BSON_TYPE_BOOL, o->flag);
        rm_buf_append (&o->doc, "\x01", 1);
    }
    rm_docbuf_end (&o->doc, start);
}

/* Whether the parent with items [0, k) (and the flag) fits in 16 MiB;
 * leaves it in o->doc. */
static bool
parent_fits (rm_embed_out_t *o, size_t k, bool flag)
{
    build_parent (o, k, flag);
    return o->doc.len <= RM_BSON_MAX_SIZE;
}

/* Fails the parent being built: "<ns>: parent <_id> <what>". */
static bool BSON_GNUC_PRINTF (3, 4)
parent_fail (rm_embed_out_t *o, bson_error_t *err, const char *fmt, ...)
{
    char what[400], *id = rm_doc_id_json (o->pdoc, o->plen);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (what, sizeof what, fmt, ap);
    va_end (ap);
    rm_error_set (err, RM_ERR_FORMAT, "%s: parent %s %s", o->into->stats->name, id, what);
    bson_free (id);
    return false;
}

/* Settles the parent's array (onOverflow "outlier"): the most of its first
 * `cap` items that fit in 16 MiB with the flag, by a binary search on the
 * count; the items after them start the overflow pages. */
static bool
settle (rm_embed_out_t *o, size_t cap, bson_error_t *err)
{
    size_t lo = 0, hi = cap;
    if (!parent_fits (o, cap, true)) {
        hi = cap - 1;
        while (lo < hi) {
            size_t mid = (lo + hi + 1) / 2;
            if (parent_fits (o, mid, true))
                lo = mid;
            else
                hi = mid - 1;
        }
        if (lo == 0 && !parent_fits (o, 0, true))
            return parent_fail (o, err, "is over 16 MiB even without children");
        cap = lo;
    }
    o->k = cap;
    o->closed = true;
    return true;
}

/* Where the overflow page starting at item `from` ends: at most maxItems
 * items and under 16 MiB. */
static size_t
page_end (const rm_embed_out_t *o, size_t from)
{
    size_t end = from, bytes = 0;
    while (end < o->n && (!o->spec->max_items || end - from < (size_t) o->spec->max_items) &&
           (end == from ||
            bytes + (o->item_off[end + 1] - o->item_off[end]) + 64 < RM_BSON_MAX_SIZE - 4096)) {
        bytes += o->item_off[end + 1] - o->item_off[end] + 16;
        end++;
    }
    return end;
}

/* One overflow page {_id, parent_id, page, <as>} of items [from, to). */
static bool
write_page (rm_embed_out_t *o, size_t from, size_t to, bson_error_t *err)
{
    bson_t d;
    bson_iter_t parent_id;
    uint8_t oid[12];
    size_t start;

    bson_init_static (&d, o->pdoc, o->plen);
    if (!bson_iter_init_find (&parent_id, &d, "_id")) {
        rm_error_set (err, RM_ERR_FORMAT, "%s: a parent without _id cannot have overflow",
                      o->into->stats->name);
        return false;
    }
    rm_derived_oid (&o->key, &parent_id, o->spec->as, (uint32_t) o->page, oid);
    rm_buf_reset (&o->doc);
    start = rm_docbuf_begin (&o->doc);
    rm_docbuf_key (&o->doc, BSON_TYPE_OID, "_id");
    rm_buf_append (&o->doc, oid, 12);
    rm_docbuf_copy_as (&o->doc, "parent_id", &parent_id);
    append_count (&o->doc, "page", (uint64_t) o->page);
    rm_docbuf_key (&o->doc, BSON_TYPE_ARRAY, o->spec->as);
    build_array (o, from, to, &o->doc);
    rm_docbuf_end (&o->doc, start);
    if (rm_engine_too_deep (NULL, 0, o->doc.data, o->doc.len, err)) {
        char *id = rm_doc_id_json (o->pdoc, o->plen);
        rm_error_prefix (err, "%s: overflow page %d of parent %s", o->overflow->stats->name,
                         o->page, id);
        bson_free (id);
        return false;
    }
    if (!rm_store_add (o->next_overflow, o->doc.data, (uint32_t) o->doc.len, err))
        return false;
    o->overflow->stats->overflow++;
    o->page++;
    return true;
}

/* Writes the overflow pages that are full (all of them when `all`) and
 * lets go of their items. */
static bool
flush_pages (rm_embed_out_t *o, bool all, bson_error_t *err)
{
    while (o->k < o->n) {
        size_t end = page_end (o, o->k), cut, moved;
        if (end == o->n && !all)
            return true; /* the page may take more */
        if (!write_page (o, o->k, end, err))
            return false;
        cut = o->item_off[end] - o->item_off[o->k];
        moved = o->n - end;
        memmove (o->items.data + o->item_off[o->k], o->items.data + o->item_off[end],
                 o->items.len - o->item_off[end]);
        o->items.len -= cut;
        for (size_t i = 0; i <= moved; i++)
            o->item_off[o->k + i] = o->item_off[end + i] - cut;
        o->n -= end - o->k;
    }
    return true;
}

bool
rm_embed_out_begin (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    rm_embed_out_t *o = ctx;
    (void) err;
    o->pdoc = doc;
    o->plen = len;
    o->total = 0;
    o->taken = o->n = o->k = 0;
    o->closed = false;
    o->page = 2;
    o->too_many = o->too_big = o->big_bytes = 0;
    rm_buf_reset (&o->items);
    return true;
}

bool
rm_embed_out_child (void *ctx, const rm_child_t *c, bson_error_t *err)
{
    rm_embed_out_t *o = ctx;
    const rm_embed_t *spec = o->spec;
    bool outlier = spec->on_overflow == RM_OVERFLOW_OUTLIER;

    o->total++;
    if (spec->limit && o->taken >= (size_t) spec->limit)
        return true;
    o->taken++;
    if (o->too_many || o->too_big)
        return true; /* an error at end: only counting now */
    if (o->n + 2 > o->item_cap) {
        o->item_cap = (o->n + 2) * 2;
        o->item_off = bson_realloc (o->item_off, o->item_cap * sizeof *o->item_off);
    }
    o->item_off[o->n] = o->items.len;
    if (!add_item (o, c, err))
        return false;
    o->item_off[++o->n] = o->items.len;
    if (!o->closed) {
        if (spec->max_items && o->n > (size_t) spec->max_items) {
            if (!outlier) {
                o->too_many = 1;
                rm_buf_reset (&o->items);
                return true;
            }
            if (!settle (o, (size_t) spec->max_items, err))
                return false;
        } else if (o->items.len > RM_BSON_MAX_SIZE) {
            /* The array alone no longer fits in a document. */
            if (!outlier) {
                o->too_big = o->n;
                o->big_bytes = o->items.len;
                rm_buf_reset (&o->items);
                return true;
            }
            if (!settle (o, o->n, err))
                return false;
        }
    }
    return !o->closed || flush_pages (o, false, err);
}

/* Whether the parent built with items [0, k) surely nests no deeper than
 * MongoDB stores, from lengths alone: its own fields stay at their
 * levels, each item's two below (the array at level 1, the item at 2),
 * and a document of n bytes nests at most n / 7 levels
 * (RM_BSON_DEPTH_MIN_LEN). Most parents and children are far too short
 * to nest that deep: no walk over the whole output for them (the walk was
 * 7% of an embed). */
static bool
shallow (const rm_embed_out_t *o)
{
    size_t longest = 0;
    if (o->plen >= RM_BSON_DEPTH_MIN_LEN (RM_BSON_MAX_NESTING + 1))
        return false;
    for (size_t i = 0; i < o->k; i++)
        if (o->item_off[i + 1] - o->item_off[i] > longest)
            longest = o->item_off[i + 1] - o->item_off[i];
    return longest < RM_BSON_DEPTH_MIN_LEN (RM_BSON_MAX_NESTING - 1);
}

bool
rm_embed_out_end (void *ctx, bson_error_t *err)
{
    rm_embed_out_t *o = ctx;
    bool outlier = o->spec->on_overflow == RM_OVERFLOW_OUTLIER;

    if (o->too_many)
        return parent_fail (o, err, "has %zu matching children, more than maxItems %lld "
                            "(onOverflow \"outlier\" moves the rest aside)",
                            o->taken, (long long) o->spec->max_items);
    if (o->too_big)
        return parent_fail (o, err, "with its %zu children would be over the 16 MiB document "
                            "limit (its first %zu alone make %zu bytes; onOverflow \"outlier\" "
                            "moves the rest aside)", o->taken, o->too_big, o->big_bytes);
    if (!o->closed) {
        if (parent_fits (o, o->n, false))
            o->k = o->n;
        else if (!outlier)
            return parent_fail (o, err, "with its %zu children would be %zu bytes, over the "
                                "16 MiB document limit (onOverflow \"outlier\" moves the rest "
                                "aside)", o->n, o->doc.len);
        else if (!settle (o, o->n, err))
            return false;
    }
    /* Settled earlier, the count may since have grown a width. */
    if (o->closed && !parent_fits (o, o->k, true))
        return parent_fail (o, err, "with %zu children is over 16 MiB", o->k);
    /* The children nest a level below the array: the parent no deeper
     * than MongoDB stores. */
    if (!shallow (o) && !rm_engine_depth_ok (o->into->stats->name, "parent", o->pdoc, o->plen, o->doc.data,
                             o->doc.len, err))
        return false;
    o->into->stats->embedded += o->k;
    return rm_store_add (o->next, o->doc.data, (uint32_t) o->doc.len, err) &&
           flush_pages (o, true, err);
}

bool
rm_embed_out_pass (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    rm_embed_out_t *o = ctx;
    return rm_store_add (o->next, doc, len, err);
}

bool
rm_embed_out_finish (void *ctx, bson_error_t *err)
{
    rm_embed_out_t *o = ctx;
    rm_store_t *next = o->next, *next_overflow = o->next_overflow;
    o->next = o->next_overflow = NULL;
    if (!rm_engine_store_swap (o->into, next, err)) {
        rm_store_destroy (next_overflow);
        return false;
    }
    return !next_overflow || rm_engine_store_swap (o->overflow, next_overflow, err);
}

void
rm_embed_out_destroy (rm_embed_out_t *o)
{
    if (!o)
        return;
    rm_store_destroy (o->next);
    rm_store_destroy (o->next_overflow);
    rm_buf_destroy (&o->items);
    rm_buf_destroy (&o->doc);
    rm_buf_destroy (&o->key);
    bson_free (o->item_off);
    bson_free (o->proj_len);
    rm_expr_ctx_destroy (o->cx);
    bson_free (o);
}
