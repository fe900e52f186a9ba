/* An extract's children with one _id (extract_dups.h), in bounded memory:
 * each child is one record of an external sort, (its _id's canonical key,
 * its position) -> (the SHA-1 of its bytes, its _id, its parent's _id),
 * small whatever the child's size. Sorted, the records of one _id are side
 * by side, the first made first: a later one with the same digest is a
 * copy, its position going to a second sort, by position, that the copy
 * of the children then skips; one with another digest is an error naming
 * both parents. The keys are $lookup's (remodel/value.h): 1 and 1.0 are
 * one _id for the server's unique index as for a join. */
#include <string.h>

#include "docbuf.h"
#include "extract_dups.h"
#include "remodel/sha1.h"
#include "remodel/sorter.h"
#include "sortkey.h"

#define SHA_LEN 20
#define POS_LEN 8

struct rm_extract_dups {
    rm_sorter_t *ids;   /* every child, by _id then position */
    rm_sorter_t *drops; /* the copies' positions */
    uint64_t n, copies;
    rm_buf_t key, val, first;
};

/* The _id's key, then the position: a group per _id, oldest first. */
static int
id_then_pos (const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, void *ctx)
{
    int c = rm_keycmp (a, alen - POS_LEN, b, blen - POS_LEN);
    (void) ctx;
    return c ? c : memcmp (a + alen - POS_LEN, b + blen - POS_LEN, POS_LEN);
}

rm_extract_dups_t *
rm_extract_dups_new (size_t memory, const char *tmpdir)
{
    rm_extract_dups_t *d = bson_malloc0 (sizeof *d);
    d->ids = rm_sorter_new (memory, tmpdir, id_then_pos, NULL);
    d->drops = rm_sorter_new (memory / 4, tmpdir, NULL, NULL);
    rm_buf_init (&d->key);
    rm_buf_init (&d->val);
    rm_buf_init (&d->first);
    return d;
}

void
rm_extract_dups_destroy (rm_extract_dups_t *d)
{
    if (!d)
        return;
    rm_sorter_destroy (d->ids);
    rm_sorter_destroy (d->drops);
    rm_buf_destroy (&d->key);
    rm_buf_destroy (&d->val);
    rm_buf_destroy (&d->first);
    bson_free (d);
}

/* {_id: <it>} appended to b. */
static void
id_doc (rm_buf_t *b, const bson_iter_t *it)
{
    size_t start = rm_docbuf_begin (b);
    rm_docbuf_copy_as (b, "_id", it);
    rm_docbuf_end (b, start);
}

bool
rm_extract_dups_add (rm_extract_dups_t *d, const uint8_t *child, uint32_t len,
                     const bson_iter_t *parent_id, bson_error_t *err)
{
    bson_iter_t id;
    uint8_t pos[POS_LEN];
    unsigned char sha[SHA_LEN];

    /* build_child puts the _id first. */
    bson_iter_init_from_data (&id, child, len);
    bson_iter_next (&id);
    rm_buf_reset (&d->key);
    rm_key_append (&d->key, &id);
    rm_put_be64 (pos, d->n++);
    rm_buf_append (&d->key, pos, sizeof pos);
    rm_sha1 (child, len, sha);
    rm_buf_reset (&d->val);
    rm_buf_append (&d->val, sha, sizeof sha);
    id_doc (&d->val, &id);
    id_doc (&d->val, parent_id);
    return rm_sorter_add (d->ids, d->key.data, d->key.len, d->val.data, d->val.len, err);
}

static uint32_t
doc_len (const uint8_t *p)
{
    uint32_t n;
    memcpy (&n, p, 4);
    return BSON_UINT32_FROM_LE (n);
}

/* The values' parts: the child's {_id} and the parent's {_id}. */
static void
parts (const uint8_t *val, const uint8_t **child, const uint8_t **parent)
{
    *child = val + SHA_LEN;
    *parent = *child + doc_len (*child);
}

static bool
refuse (const char *to, const uint8_t *a, const uint8_t *b, bson_error_t *err)
{
    const uint8_t *child, *pa, *pb;
    char *id, *first, *second;
    parts (a, &child, &pa);
    parts (b, &child, &pb);
    id = rm_doc_id_json (child, doc_len (child));
    first = rm_doc_id_json (pa, doc_len (pa));
    second = rm_doc_id_json (pb, doc_len (pb));
    /* online_check_unique's words, with the parents each came from. */
    rm_error_set (err, RM_ERR_DATA, "two results for %s with one _id (%s, from the parents %s "
                  "and %s, with different contents): stopping before either overwrites the other",
                  to, id, first, second);
    bson_free (id);
    bson_free (first);
    bson_free (second);
    return false;
}

bool
rm_extract_dups_finish (rm_extract_dups_t *d, const char *to, bson_error_t *err)
{
    const uint8_t *key, *val;
    size_t klen, vlen, first_klen = 0;
    int r;

    if (!rm_sorter_finish (d->ids, err))
        return false;
    while ((r = rm_sorter_next (d->ids, &key, &klen, &val, &vlen, err)) == 1) {
        if (first_klen &&
            !rm_keycmp (key, klen - POS_LEN, d->first.data, first_klen - POS_LEN)) {
            if (memcmp (val, d->first.data + first_klen, SHA_LEN) != 0)
                return refuse (to, d->first.data + first_klen, val, err);
            d->copies++;
            if (!rm_sorter_add (d->drops, key + klen - POS_LEN, POS_LEN, "", 0, err))
                return false;
            continue;
        }
        /* The first of a group: kept whole (key, then value) to compare
         * the next ones with. */
        rm_buf_reset (&d->first);
        rm_buf_append (&d->first, key, klen);
        rm_buf_append (&d->first, val, vlen);
        first_klen = klen;
    }
    return r == 0 && rm_sorter_finish (d->drops, err);
}

uint64_t
rm_extract_dups_copies (const rm_extract_dups_t *d)
{
    return d->copies;
}

bool
rm_extract_dups_copy (rm_extract_dups_t *d, rm_store_t *in, rm_emit_fn emit, void *ctx,
                      bson_error_t *err)
{
    rm_instream_t *s = rm_store_open (in, err);
    const uint8_t *key, *val;
    size_t klen, vlen;
    uint64_t at = 0, skip = UINT64_MAX;
    rm_frame_t f;
    int rc = 0, r;

    if (!s)
        return false;
    if ((r = rm_sorter_next (d->drops, &key, &klen, &val, &vlen, err)) == 1)
        skip = rm_get_be64 (key);
    while (r >= 0 && (rc = rm_store_next (s, &f, err)) > 0) {
        if (at++ == skip) {
            if ((r = rm_sorter_next (d->drops, &key, &klen, &val, &vlen, err)) == 1)
                skip = rm_get_be64 (key);
            continue;
        }
        if (!emit (ctx, f.data, f.len, err)) {
            rc = -1;
            break;
        }
    }
    rm_instream_close (s);
    return r >= 0 && rc == 0;
}
