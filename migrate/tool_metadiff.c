/* What differs between two namespaces' metadata, for remodel diff, named
 * rather than merely noticed: indexes only on one side, then for an index
 * both have, a collection option or another field, the first path that
 * differs and its value on each side. A collection's UUID is what each
 * server gave it (a restore gives a new one), so it is no difference
 * unless asked (--compare-uuids); nor is an index's "ns", which older
 * mongodumps wrote and which follows the namespace's name. */
#include <stdlib.h>
#include <string.h>

#include "remodel/buf.h"
#include "remodel/docdiff.h"
#include "remodel/extjson.h"
#include "tool.h"

#define VALUE_SHOWN 80

static void
put (rm_buf_t *out, const char *s)
{
    rm_buf_append (out, s, strlen (s));
}

static void
sep (rm_buf_t *out)
{
    if (out->len)
        put (out, "; ");
}

/* The value at path in doc (relaxed JSON, cut), or "none". */
static void
value_at (rm_buf_t *out, const bson_t *doc, const char *path)
{
    bson_iter_t it, v;
    rm_buf_t text;
    if (!bson_iter_init (&it, doc) || !bson_iter_find_descendant (&it, path, &v)) {
        put (out, "none");
        return;
    }
    rm_buf_init (&text);
    rm_extjson_value (&text, &v, RM_EXTJSON_RELAXED);
    if (text.len > VALUE_SHOWN) {
        rm_buf_append (out, text.data, VALUE_SHOWN);
        put (out, "...");
    } else {
        rm_buf_append (out, text.data, text.len);
    }
    rm_buf_destroy (&text);
}

/* "WHAT PATH: <a> in A, <b> in B" when a and b differ (prefix names what
 * they belong to, e.g. "index \"x_1\" "). Where the two values at the
 * first difference read the same, the fields around them are in another
 * order (an index's key {a: 1, b: 1} and {b: 1, a: 1}): the document
 * that holds them is named, whole, instead. */
static void
compare (rm_buf_t *out, const char *prefix, const bson_t *a, const bson_t *b)
{
    rm_buf_t path, va, vb;
    char *dot;
    rm_buf_init (&path);
    if (rm_doc_first_difference (bson_get_data (a), a->len, bson_get_data (b), b->len, &path)) {
        rm_buf_append (&path, "", 1);
        for (;;) {
            rm_buf_init (&va);
            rm_buf_init (&vb);
            value_at (&va, a, (const char *) path.data);
            value_at (&vb, b, (const char *) path.data);
            dot = strrchr ((char *) path.data, '.');
            if (!dot || va.len != vb.len || memcmp (va.data, vb.data, va.len))
                break;
            *dot = '\0';
            rm_buf_destroy (&va);
            rm_buf_destroy (&vb);
        }
        sep (out);
        put (out, prefix);
        put (out, (const char *) path.data);
        put (out, ": ");
        rm_buf_append (out, va.data, va.len);
        put (out, " in A, ");
        rm_buf_append (out, vb.data, vb.len);
        put (out, " in B");
        rm_buf_destroy (&va);
        rm_buf_destroy (&vb);
    }
    rm_buf_destroy (&path);
}

/* An index's field names (qsort's), for its spec in a sorted order. */
static int
by_key (const void *a, const void *b)
{
    return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The index named name in the indexes array at it, without "ns", into
 * out (initialized), its fields by name: a spec's options are a set (the
 * server gives them in its own order, a tool in another), where its key's
 * order is the index's own and is kept as it is; false when there is
 * none. */
static bool
index_named (const bson_t *meta, const char *name, bson_t *out)
{
    bson_iter_t it, arr, f;
    if (!bson_iter_init_find (&it, meta, "indexes") || !BSON_ITER_HOLDS_ARRAY (&it) ||
        !bson_iter_recurse (&it, &arr))
        return false;
    while (bson_iter_next (&arr)) {
        bson_t ix;
        uint32_t len;
        const uint8_t *data;
        if (!BSON_ITER_HOLDS_DOCUMENT (&arr))
            continue;
        bson_iter_document (&arr, &len, &data);
        if (!bson_init_static (&ix, data, len) || !bson_iter_init_find (&f, &ix, "name") ||
            !BSON_ITER_HOLDS_UTF8 (&f) || strcmp (bson_iter_utf8 (&f, NULL), name) != 0)
            continue;
        {
            /* The names (into ix's bytes), not iterators: bson_iter_t
             * wants an alignment bson_malloc does not give. */
            const char **keys = bson_malloc ((bson_count_keys (&ix) + 1) * sizeof *keys);
            size_t n = 0;
            bson_iter_init (&f, &ix);
            while (bson_iter_next (&f))
                keys[n++] = bson_iter_key (&f);
            qsort (keys, n, sizeof *keys, by_key);
            bson_init (out);
            for (size_t k = 0; k < n; k++)
                if (strcmp (keys[k], "ns") && bson_iter_init_find (&f, &ix, keys[k]))
                    bson_append_iter (out, NULL, 0, &f);
            bson_free (keys);
        }
        return true;
    }
    return false;
}

/* Indexes only on one side (by name), then those both have that differ. */
static void
compare_indexes (rm_buf_t *out, const bson_t *m[2])
{
    for (int side = 0; side < 2; side++) {
        bson_iter_t it, arr, f;
        bool first = true;
        if (!bson_iter_init_find (&it, m[side], "indexes") || !BSON_ITER_HOLDS_ARRAY (&it) ||
            !bson_iter_recurse (&it, &arr))
            continue;
        while (bson_iter_next (&arr)) {
            bson_t mine, theirs;
            const char *name;
            if (!BSON_ITER_HOLDS_DOCUMENT (&arr) || !bson_iter_recurse (&arr, &f) ||
                !bson_iter_find (&f, "name") || !BSON_ITER_HOLDS_UTF8 (&f))
                continue;
            name = bson_iter_utf8 (&f, NULL);
            if (index_named (m[!side], name, &theirs)) {
                if (side == 0 && index_named (m[0], name, &mine)) {
                    char prefix[300];
                    snprintf (prefix, sizeof prefix, "index \"%s\" ", name);
                    compare (out, prefix, &mine, &theirs);
                    bson_destroy (&mine);
                }
                bson_destroy (&theirs);
                continue;
            }
            if (first) {
                sep (out);
                put (out, side ? "indexes only in B: " : "indexes only in A: ");
            } else {
                put (out, ", ");
            }
            put (out, name);
            first = false;
        }
    }
}

/* {key: value} of meta, for compare (empty when meta has no key). */
static void
field_doc (const bson_t *meta, const char *key, bson_t *out)
{
    bson_iter_t it;
    bson_init (out);
    if (bson_iter_init_find (&it, meta, key))
        bson_append_iter (out, key, -1, &it);
}

char *
tool_metadata_difference (const char *a, size_t alen, const char *b, size_t blen, bool uuids)
{
    bson_t *m[2];
    rm_buf_t out;

    if (alen == blen && memcmp (a, b, alen) == 0)
        return NULL;
    m[0] = alen ? bson_new_from_json ((const uint8_t *) a, (ssize_t) alen, NULL) : bson_new ();
    m[1] = blen ? bson_new_from_json ((const uint8_t *) b, (ssize_t) blen, NULL) : bson_new ();
    rm_buf_init (&out);
    if (!m[0] || !m[1]) {
        put (&out, m[0]   ? "B's is not valid JSON"
                   : m[1] ? "A's is not valid JSON"
                          : "the texts differ (neither is valid JSON)");
    } else {
        compare_indexes (&out, (const bson_t **) m);
        /* Every other field, A's in A's order, then those only in B. */
        for (int side = 0; side < 2; side++) {
            bson_iter_t it;
            bson_iter_init (&it, m[side]);
            while (bson_iter_next (&it)) {
                const char *k = bson_iter_key (&it);
                bson_t fa, fb;
                if (!strcmp (k, "indexes") || (!uuids && !strcmp (k, "uuid")) ||
                    (side == 1 && bson_has_field (m[0], k)))
                    continue;
                field_doc (m[0], k, &fa);
                field_doc (m[1], k, &fb);
                compare (&out, "", &fa, &fb);
                bson_destroy (&fa);
                bson_destroy (&fb);
            }
        }
    }
    bson_destroy (m[0]);
    bson_destroy (m[1]);
    if (!out.len) {
        rm_buf_destroy (&out);
        return NULL;
    }
    rm_buf_append (&out, "", 1);
    return (char *) out.data;
}
