/* remodel analyze, the first pass (remodel/analyze.h): each collection's
 * documents, sizes and fields, and the join keys of every field that could
 * hold references; then the relationships (analyze_relate.c). */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze_int.h"
#include "bsonwalk.h"
#include "remodel/nsselect.h"

#define PATH_HASH_START 2166136261u

/* FNV-1a, continued from h: a path's hash is its parent's continued by
 * "." and the key, so the walk never hashes a prefix twice. */
static uint32_t
path_hash_more (uint32_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t) s[i]) * 16777619u;
    return h;
}

/* A path's statistics, found through c->slots (no string compared but
 * the one the hash leads to). */
static rm_field_t *
collection_field (rm_collection_t *c, const char *path, size_t len, uint32_t hash, bool in_array)
{
    size_t cap = sizeof c->slots / sizeof c->slots[0];
    size_t i = hash & (cap - 1);
    rm_field_t *f;
    for (; c->slots[i]; i = (i + 1) & (cap - 1))
        if (c->fields[c->slots[i] - 1].path_len == len &&
            !memcmp (c->fields[c->slots[i] - 1].path, path, len))
            return &c->fields[c->slots[i] - 1];
    if (c->n_fields == RM_ANALYZE_MAX_PATHS) {
        c->fields_capped = true;
        return NULL;
    }
    c->fields = bson_realloc (c->fields, (c->n_fields + 1) * sizeof *c->fields);
    f = &c->fields[c->n_fields++];
    c->slots[i] = (uint16_t) c->n_fields;
    memset (f, 0, sizeof *f);
    f->path = bson_strndup (path, len);
    f->path_len = len;
    f->hash = hash;
    f->in_array = in_array;
    /* Under a map's generated keys: no path a join or a step could name. */
    f->not_key = strstr (path, RM_ANALYZE_MAP_KEY) != NULL;
    f->last_doc = UINT64_MAX;
    return f;
}

/* The documents are walked over their bytes, not with libbson's iterator:
 * the reader checked each one (rm_bson_check: every length holds, every
 * container ends in 0x00, no unknown type), so each element's extent is
 * read as it is, without the iterator checking it again. */
static inline uint32_t
le32 (const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static inline int64_t
le64 (const uint8_t *p)
{
    return (int64_t) ((uint64_t) le32 (p) | (uint64_t) le32 (p + 4) << 32);
}

/* The elements of a document: the next one, and the document's final
 * 0x00. */
typedef struct {
    const uint8_t *at, *end;
} elems_t;

typedef struct {
    bson_type_t t;
    const char *key;
    uint32_t klen;
    const uint8_t *v;       /* the value's first byte */
} elem_t;

static inline void
elems_init (elems_t *s, const uint8_t *doc)
{
    s->at = doc + 4;
    s->end = doc + le32 (doc) - 1;
}

/* The bytes of a value of type t at v. */
static inline size_t
value_len (bson_type_t t, const uint8_t *v)
{
    size_t n;
    switch (t) {
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DATE_TIME:
    case BSON_TYPE_TIMESTAMP:
    case BSON_TYPE_INT64:
        return 8;
    case BSON_TYPE_UTF8:
    case BSON_TYPE_CODE:
    case BSON_TYPE_SYMBOL:
        return 4 + (size_t) le32 (v);
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY:
    case BSON_TYPE_CODEWSCOPE:
        return le32 (v);
    case BSON_TYPE_BINARY:
        return 5 + (size_t) le32 (v);
    case BSON_TYPE_OID:
        return 12;
    case BSON_TYPE_BOOL:
        return 1;
    case BSON_TYPE_INT32:
        return 4;
    case BSON_TYPE_DECIMAL128:
        return 16;
    case BSON_TYPE_REGEX:
        n = strlen ((const char *) v) + 1;
        return n + strlen ((const char *) v + n) + 1;
    case BSON_TYPE_DBPOINTER:
        return 4 + (size_t) le32 (v) + 12;
    default: /* null, undefined, minKey, maxKey */
        return 0;
    }
}

static inline bool
elems_next (elems_t *s, elem_t *e)
{
    if (s->at >= s->end)
        return false;
    e->t = (bson_type_t) s->at[0];
    e->key = (const char *) s->at + 1;
    e->klen = (uint32_t) strlen (e->key);
    e->v = s->at + 1 + e->klen + 1;
    s->at = e->v + value_len (e->t, e->v);
    return true;
}

/* A string's length as bson_iter_utf8 gives it (its final NUL not
 * counted). */
static inline uint32_t
utf8_len (const uint8_t *v)
{
    uint32_t n = le32 (v);
    return n ? n - 1 : 0;
}

static inline double
value_double (const uint8_t *v)
{
    double d;
    memcpy (&d, v, 8);
    return BSON_DOUBLE_FROM_LE (d);
}

/* Values a reference can be: ids, codes, numbers that are whole. */
static bool
key_like (const uint8_t *v, bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_OID:
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_BINARY:
        return true;
    case BSON_TYPE_UTF8:
        return utf8_len (v) <= RM_ANALYZE_KEY_MAX_STRING;
    case BSON_TYPE_DOUBLE: {
        double d = value_double (v);
        return d == (double) (int64_t) d;
    }
    default:
        return false;
    }
}

/* A number, or a string of up to 3 bytes: values any collection of
 * integer or short ids holds by chance. */
static bool
small_value (const uint8_t *v, bson_type_t t)
{
    if (t == BSON_TYPE_UTF8)
        return utf8_len (v) <= 3;
    return t != BSON_TYPE_OID && t != BSON_TYPE_BINARY;
}

static void
add_scalar (rm_collection_t *c, rm_field_t *f, const uint8_t *v, bson_type_t t)
{
    if (f->not_key)
        return;
    if (t == BSON_TYPE_NULL)
        return;
    if (!key_like (v, t)) {
        /* Its table dropped, after the keys sent before (in order). */
        f->not_key = true;
        rm_adds_push (c->adds, RM_ADD_DROP, c->index, (size_t) (f - c->fields), t, NULL);
        return;
    }
    rm_adds_push (c->adds, RM_ADD_KEY, c->index, (size_t) (f - c->fields), t, v);
    f->key_kinds |= t == BSON_TYPE_UTF8 ? 2 : t == BSON_TYPE_OID ? 4 : t == BSON_TYPE_BINARY ? 8 : 1;
    f->values++;
    if (small_value (v, t))
        f->small++;
    /* What the evidence needs to tell chance from reference
     * (analyze_score.c): the range of the whole numbers, and the strings
     * that are words rather than ids. */
    if (t == BSON_TYPE_INT32 || t == BSON_TYPE_INT64 || t == BSON_TYPE_DOUBLE) {
        /* As bson_iter_as_int64 reads them. */
        int64_t x = t == BSON_TYPE_INT32   ? (int64_t) (int32_t) le32 (v)
                    : t == BSON_TYPE_INT64 ? le64 (v)
                                           : (int64_t) value_double (v);
        if (!f->ints || x < f->int_min)
            f->int_min = x;
        if (!f->ints || x > f->int_max)
            f->int_max = x;
        f->ints++;
    } else if (f->sampled < RM_ANALYZE_SAMPLE) {
        /* Whether the rest are words or ids: the first few thousand say
         * it as well as all of them, and cost nothing past those. */
        f->sampled++;
        if (t == BSON_TYPE_UTF8) {
            size_t n = utf8_len (v);
            const char *str = (const char *) v + 4;
            bool digit = false;
            for (size_t i = 0; i < n && !digit; i++)
                digit = (unsigned) (str[i] - '0') < 10;
            f->vocab += n <= 3 || !digit;
        }
    }
}

static void walk (rm_collection_t *c, uint64_t seq, size_t plen, uint32_t phash, const uint8_t *doc,
                  int depth, bool in_array, size_t parent);

/* Whether a document holds a field named name (n bytes). */
static bool
doc_has (const uint8_t *doc, const char *name, uint32_t n)
{
    elems_t s;
    elem_t e;
    elems_init (&s, doc);
    while (elems_next (&s, &e))
        if (e.klen == n && !memcmp (e.key, name, n))
            return true;
    return false;
}

/* v's statistics into f, the field of its path (plen bytes); t is v's
 * type. */
static void
add_value (rm_collection_t *c, uint64_t seq, rm_field_t *f, size_t plen, bson_type_t t,
           const uint8_t *v, int depth, bool in_array)
{
    uint32_t phash = f->hash;
    size_t fi;
    /* c->fields grows while the fields below are walked: f is found again
     * by its index after each walk. */
    fi = (size_t) (f - c->fields);
    if (f->last_doc != seq) {
        f->last_doc = seq;
        f->docs++;
    }
    if (t == BSON_TYPE_DATE_TIME) {
        int64_t when = le64 (v);
        if (!f->types[BSON_TYPE_DATE_TIME] || when < f->date_min)
            f->date_min = when;
        if (!f->types[BSON_TYPE_DATE_TIME] || when > f->date_max)
            f->date_max = when;
    }
    f->types[t]++;
    if (t == BSON_TYPE_DOCUMENT && depth < RM_ANALYZE_MAX_DEPTH) {
        walk (c, seq, plen, phash, v, depth + 1, in_array, fi);
    } else if (t == BSON_TYPE_ARRAY) {
        uint64_t n = 0;
        elems_t s;
        elem_t el;
        f->arrays++;
        if (!f->lengths)
            f->lengths = bson_malloc0 (sizeof *f->lengths);
        elems_init (&s, v);
        while (elems_next (&s, &el)) {
            n++;
            /* Documents in an array: their fields are path.field;
             * scalars are values of the path itself. */
            if (el.t == BSON_TYPE_DOCUMENT) {
                c->fields[fi].elem_docs++;
                if (doc_has (el.v, "_id", 3) || doc_has (el.v, "id", 2))
                    c->fields[fi].elem_ids++;
            }
            if (el.t == BSON_TYPE_DOCUMENT && depth < RM_ANALYZE_MAX_DEPTH)
                walk (c, seq, plen, phash, el.v, depth + 1, true, fi);
            else if (el.t != BSON_TYPE_ARRAY && el.t != BSON_TYPE_DOCUMENT)
                add_scalar (c, &c->fields[fi], el.v, el.t);
        }
        rm_dist_add (c->fields[fi].lengths, n);
    } else {
        add_scalar (c, f, v, t);
    }
}

/* A field name that is data, not schema: an id generated per entry (the
 * Atlas sample's tier_and_details.<32 hex digits>), 16 to 36 hex digits,
 * dashes allowed (UUIDs), a digit among them. Names of a schema are words;
 * these would give each document paths of its own, filling the 256 paths
 * with one field. Most names are shorter than 16: one compare. */
static bool
generated_key (const char *k, uint32_t n)
{
    bool digit = false;
    if (n < 16 || n > 36)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        char ch = k[i];
        if (ch >= '0' && ch <= '9')
            digit = true;
        else if (!((ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F') || ch == '-'))
            return false;
    }
    return digit;
}

/* Whether a field name (a NUL-terminated key, its document's bytes
 * before lim) is name's n bytes: the compare stops at the key's end,
 * whichever is shorter. A name of 8 to 16 bytes (most column names of a
 * relational import: the byte loop was a tenth of analyze on TPC-H) is
 * two eight-byte compares, overlapping, where the document has the bytes. */
static inline bool
name_is (const char *key, const char *name, size_t n, const uint8_t *lim)
{
    if (n >= 8 && n <= 16 && (const uint8_t *) key + n < lim) {
        uint64_t a, b, c, d;
        memcpy (&a, key, 8);
        memcpy (&b, name, 8);
        memcpy (&c, key + n - 8, 8);
        memcpy (&d, name + n - 8, 8);
        return a == b && c == d && key[n] == '\0';
    }
    return rm_walk_same (key, name, n) && key[n] == '\0';
}

/* Whether a field name can be no part of a path: a step, a $lookup or
 * the plan would read a dot as a step down, a leading $ as an operator,
 * and an empty name as nothing. */
static bool
pathless_name (const char *key, uint32_t n)
{
    if (n == 0 || key[0] == '$')
        return true;
    /* Names are short (array indexes mostly, a byte or two): a loop,
     * not a call of memchr per name. */
    if (n > 32)
        return memchr (key, '.', n) != NULL;
    for (uint32_t i = 0; i < n; i++)
        if (key[i] == '.')
            return true;
    return false;
}

/* The fields of a document under the path of parent (plen bytes), the
 * field whose value the document is, or whose elements (SIZE_MAX: none, at
 * the top). A field's path is spelt out in c->path only when the shape
 * does not give its field. */
static void
walk (rm_collection_t *c, uint64_t seq, size_t plen, uint32_t phash, const uint8_t *doc, int depth,
      bool in_array, size_t parent)
{
    uint32_t dhash = plen ? path_hash_more (phash, ".", 1) : phash;
    uint16_t *shape = parent == SIZE_MAX ? c->top_shape : c->shape[parent];
    size_t places = parent == SIZE_MAX ? RM_ANALYZE_MAX_PATHS : RM_ANALYZE_SHAPE;
    size_t at = 0, sep = plen ? 1 : 0;
    char seg[208];
    elems_t s;
    elems_init (&s, doc);
    while (s.at < s.end) {
        bson_type_t t = (bson_type_t) s.at[0];
        const char *key = (const char *) s.at + 1;
        uint32_t klen, raw_len;
        const uint8_t *v;
        size_t len;
        rm_field_t *f = NULL;
        /* The documents of a collection mostly share a shape: the field
         * at this place under this parent last time, if its name is
         * this one (its prefix is the parent's path, the same), is the
         * field, without measuring the name, hashing the path and
         * looking it up. Its name is never a generated key's: those are
         * <key> in a path. */
        if (at < places && shape[at]) {
            rm_field_t *g = &c->fields[shape[at] - 1];
            size_t n = g->path_len - plen - sep;
            if (name_is (key, g->path + plen + sep, n, s.end))
                f = g;
        }
        if (f) {
            raw_len = klen = (uint32_t) (f->path_len - plen - sep);
            len = f->path_len;
        } else {
            raw_len = klen = (uint32_t) strlen (key);
            if (parent != SIZE_MAX && generated_key (key, klen)) {
                rm_field_t *p = &c->fields[parent];
                if (!p->map_keys++)
                    snprintf (p->map_example, sizeof p->map_example, "%.*s", (int) klen, key);
                key = RM_ANALYZE_MAP_KEY;
                klen = (uint32_t) strlen (key);
            }
        }
        v = s.at + 1 + raw_len + 1;
        s.at = v + value_len (t, v);
        if (f)
            goto found;
        /* A name no path can spell (a dot in it, a leading $, empty: legal
         * since MongoDB 5.0): "owner.id" at the top is not owner's id. Its
         * segment is written ["owner.id"], a field of its own, never a
         * key, a target or a step's path (not_path), and its report says
         * so; so is everything under it. */
        if (pathless_name (key, klen)) {
            int n = snprintf (seg, sizeof seg, "[\"%.*s\"]", (int) (klen < 200 ? klen : 200), key);
            key = seg;
            klen = (uint32_t) (n < (int) sizeof seg ? n : (int) sizeof seg - 1);
        }
        if (plen + 1 + klen + 1 > sizeof c->path)
            continue; /* a path past 510 bytes: not analyzed */
        len = plen + sep + klen;
        /* A generated key's field, found by its place as <key>. */
        if (at < places && shape[at]) {
            rm_field_t *g = &c->fields[shape[at] - 1];
            if (g->path_len == len && !memcmp (g->path + len - klen, key, klen))
                f = g;
        }
        if (!f) {
            /* The path spelt out only to look it up: its prefix is the
             * parent field's path (plen bytes), kept by the field. */
            if (plen) {
                memcpy (c->path, c->fields[parent].path, plen);
                c->path[plen] = '.';
            }
            memcpy (c->path + plen + sep, key, klen);
            c->path[len] = '\0';
            f = collection_field (c, c->path, len, path_hash_more (dhash, key, klen), in_array);
            if (f && at < places)
                shape[at] = (uint16_t) (f - c->fields + 1);
            if (f && (key == seg || (parent != SIZE_MAX && c->fields[parent].not_path)))
                f->not_path = f->not_key = true;
        }
    found:
        at++;
        /* A top-level string, counted here for analyze_import.c: its
         * field's path is its name, but for a name no path spells. */
        if (f && t == BSON_TYPE_UTF8 && parent == SIZE_MAX && key != seg)
            rm_analyze_count_string (f, v);
        if (f)
            add_value (c, seq, f, len, t, v, depth, in_array);
    }
}

static int
cmp_u32 (const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *) x, b = *(const uint32_t *) y;
    return a < b ? -1 : a > b;
}

uint64_t
rm_collection_size_quantile (const rm_collection_t *c, double q)
{
    uint32_t v[RM_ANALYZE_FEW_SIZES];
    uint64_t want, x;
    size_t b;
    if (c->sizes)
        return rm_dist_quantile (c->sizes, q);
    if (!c->docs)
        return 0;
    /* What rm_dist_quantile says of the same values: exact up to 4096,
     * the top of a 1/16-octave bucket above (at most the largest). */
    memcpy (v, c->few_sizes, c->docs * sizeof *v);
    qsort (v, c->docs, sizeof *v, cmp_u32);
    want = (uint64_t) ceil (q * (double) c->docs);
    x = v[(want < 1 ? 1 : want) - 1];
    if (x <= 4096)
        return x;
    b = (size_t) (16.0 * log2 ((double) x));
    x = (uint64_t) exp2 ((double) ((b < 1024 ? b : 1023) + 1) / 16.0);
    return x > c->max_size ? c->max_size : x;
}

void
rm_collection_add (rm_collection_t *c, uint64_t seq, const uint8_t *doc, uint32_t len)
{
    uint64_t mark = RM_ADDS_MARK (c->adds);
    c->docs++;
    c->bytes += len;
    if (len > c->max_size)
        c->max_size = len;
    if (c->docs <= RM_ANALYZE_FEW_SIZES) {
        c->few_sizes[c->docs - 1] = len;
    } else {
        if (!c->sizes) {
            c->sizes = bson_malloc0 (sizeof *c->sizes);
            for (size_t i = 0; i < RM_ANALYZE_FEW_SIZES; i++)
                rm_dist_add (c->sizes, c->few_sizes[i]);
        }
        rm_dist_add (c->sizes, len);
    }
    /* The walk's memory of the shapes, from the first document to the
     * end of the pass (8.5 KB a collection). */
    if (!c->shape) {
        c->shape = bson_malloc0 (RM_ANALYZE_MAX_PATHS * sizeof *c->shape);
        c->top_shape = bson_malloc0 (RM_ANALYZE_MAX_PATHS * sizeof *c->top_shape);
    }
    /* The reader checked it (rm_bson_check): its length is its header's. */
    if (len >= 5 && le32 (doc) == len)
        walk (c, seq, 0, PATH_HASH_START, doc, 0, false, SIZE_MAX);
    /* Where the key tables may spill (analyze_adds.c). */
    rm_adds_end_doc (c->adds, c->index, mark);
    c->path[0] = '\0';
}

/* The report is one BSON document (rm_analysis_report), which cannot pass
 * 2 GiB: libbson's appends fail past it, and a failed append of a
 * subdocument leaves nothing to end. A bound on its size, generous (every
 * string at its longest, each relationship with a recommendation): an
 * analysis whose report could not be built fails here, with what to do,
 * instead of crashing there. Each field keeps its likeliest targets only
 * (analyze_pairs.c), so this takes tens of thousands of collections. */
#define REPORT_MAX ((uint64_t) 1 << 30)
#define ITEM_BYTES 8192 /* a relationship or rejected candidate, its evidence, its recommendation */

static uint64_t
report_bound (const rm_analysis_t *a)
{
    uint64_t b = 4096;
    for (size_t i = 0; i < a->n_cols; i++) {
        const rm_collection_t *c = &a->cols[i];
        b += 512 + 3 * strlen (c->ns);
        for (size_t k = 0; k < c->n_fields; k++) {
            size_t types = 0;
            for (int t = 0; t < 256; t++)
                types += c->fields[k].types[t] != 0;
            b += 256 + c->fields[k].path_len + types * 32 + (c->fields[k].lengths ? 128 : 0);
        }
    }
    return b + (uint64_t) (a->n_rels * 2 + a->n_rejected) * ITEM_BYTES;
}

rm_analysis_t *
rm_analyze (const char *src, const rm_analyze_opts_t *opts, bson_error_t *err)
{
    rm_read_opts_t ro = {0};
    rm_reader_t *r;
    rm_analysis_t *a;
    const rm_dump_info_t *info;
    rm_item_t item;
    int rc;
    uint64_t seq = 0;
    rm_collection_t **by_ns;
    rm_adds_t *adds;
    bson_error_t spill_err; /* a spill's, when reading failed first */

    ro.select = opts->select;
    r = rm_reader_open (src, &ro, err);
    if (!r)
        return NULL;
    a = bson_malloc0 (sizeof *a);
    a->src = bson_strdup (src);
    a->hints = opts->hints ? bson_copy (opts->hints) : NULL;
    a->memory = opts->memory ? opts->memory : (size_t) 512 << 20;
    a->tmpdir = opts->tmpdir;
    info = rm_reader_info (r);
    a->cols = bson_malloc0 ((info->n_ns ? info->n_ns : 1) * sizeof *a->cols);
    /* The collection of each namespace, by its index: no name formatted per
     * document. */
    by_ns = bson_malloc0 ((info->n_ns ? info->n_ns : 1) * sizeof *by_ns);
    for (size_t i = 0; i < info->n_ns; i++) {
        const rm_ns_t *ns = info->ns[i];
        rm_collection_t *c;
        char name[512];
        if (ns->is_oplog || ns->is_view)
            continue;
        c = &a->cols[a->n_cols++];
        by_ns[i] = c;
        rm_ns_name (ns, name, sizeof name);
        c->ns = bson_strdup (name);
        c->db = bson_strdup (ns->db);
        c->coll = bson_strdup (ns->coll);
        c->metadata = ns->metadata ? bson_strndup (ns->metadata, ns->metadata_len) : NULL;
    }
    /* The key tables' adds and spills go to a worker (analyze_adds.c). */
    adds = rm_adds_start (a);
    while ((rc = rm_reader_next (r, &item, err)) == 1) {
        rm_collection_t *c;
        if (item.kind != RM_ITEM_DOC || item.ns->index >= info->n_ns || !(c = by_ns[item.ns->index]))
            continue;
        rm_collection_add (c, ++seq, item.doc, item.len);
        if (adds->failed)
            break;
        if (opts->progress && (seq & 4095) == 0)
            opts->progress (opts->progress_ctx, 1, r, seq);
    }
    if (!rm_adds_finish (adds, a, rc < 0 ? &spill_err : err))
        rc = -1;
    rm_reader_close (r);
    bson_free (by_ns);
    for (size_t i = 0; i < a->n_cols; i++) {
        bson_free (a->cols[i].shape);
        bson_free (a->cols[i].top_shape);
        a->cols[i].shape = NULL;
        a->cols[i].top_shape = NULL;
    }
    if (rc == 0 && a->spill) {
        if (!rm_analyze_spill_merge (a, err))
            rc = -1;
    } else {
        for (size_t i = 0; i < a->n_cols; i++)
            for (size_t k = 0; k < a->cols[i].n_fields; k++)
                a->cols[i].fields[k].distinct = a->cols[i].fields[k].keys.n;
    }
    a->progress = opts->progress;
    a->progress_ctx = opts->progress_ctx;
    if (rc < 0 || !rm_analyze_relate (a, &ro, err)) {
        rm_analysis_destroy (a);
        return NULL;
    }
    if (report_bound (a) > REPORT_MAX) {
        rm_error_set (err, RM_ERR_UNSUPPORTED,
                      "analyze: the report of %zu collections and %zu relationships could pass "
                      "%llu MiB, more than one document holds: analyze fewer at a time (--ns)",
                      a->n_cols, a->n_rels, (unsigned long long) (REPORT_MAX >> 20));
        rm_analysis_destroy (a);
        return NULL;
    }
    /* Which recommended steps a plan leaves out, so that it loses nothing:
     * decided once, for the report and --plan-out alike. */
    rm_analyze_plan_resolve (a);
    return a;
}

bool
rm_analysis_spilled (const rm_analysis_t *a, size_t *runs, uint64_t *bytes)
{
    *runs = a->spilled_runs;
    *bytes = a->spilled_bytes;
    return a->merged != NULL;
}

void
rm_analysis_destroy (rm_analysis_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_cols; i++) {
        rm_collection_t *c = &a->cols[i];
        for (size_t k = 0; k < c->n_fields; k++) {
            bson_free (c->fields[k].path);
            bson_free (c->fields[k].lengths);
            rm_keymap_destroy (&c->fields[k].keys);
        }
        bson_free (c->fields);
        bson_free (c->sizes);
        bson_free (c->shape);
        bson_free (c->top_shape);
        bson_free (c->ns);
        bson_free (c->db);
        bson_free (c->coll);
        bson_free ((char *) c->metadata);
    }
    rm_analyze_spill_destroy (a);
    bson_free (a->cols);
    bson_free (a->rels);
    bson_free (a->rejected);
    bson_free (a->plan_skip);
    for (size_t i = 0; i < a->n_plan_notes; i++)
        bson_free (a->plan_notes[i]);
    bson_free (a->plan_notes);
    bson_free (a->src);
    if (a->hints)
        bson_destroy (a->hints);
    bson_free (a);
}
