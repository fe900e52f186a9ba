/* unbucketize: the inverse of bucketize. Every bucket of `from` becomes its
 * readings in `to`, in bucket order then measurement order; each reading is
 * the measurement's fields with the bucket's meta values put back at the
 * positions recorded in `metaPositions` (or in the measurement's own last
 * field `_metaPositions`, which is then dropped), bytes copied as they are. */
#include <string.h>

#include "docbuf.h"
#include "engine_impl.h"

/* bson_iter_t asks for 128-byte alignment but its sizeof is not a multiple
 * of it, so arrays of it hold misaligned elements: each gets a slot. */
typedef struct {
    bson_iter_t it;
} slot_t;

struct rm_unbucketizer {
    const rm_unbucketize_t *u;
    rm_buf_t doc;
    slot_t *meta;          /* the bucket's meta fields */
    int32_t *bucket_pos, *pos;
    rm_ens_t *to;
    rm_emit_fn emit;       /* where the readings go */
    void *ctx;
};
typedef rm_unbucketizer_t job_t;

/* An array of n int32 positions into pos. */
static bool
read_positions (const bson_iter_t *it, size_t n, int32_t *pos)
{
    bson_iter_t a;
    size_t i = 0;
    if (!BSON_ITER_HOLDS_ARRAY (it) || !bson_iter_recurse (it, &a))
        return false;
    while (bson_iter_next (&a)) {
        if (i == n || !BSON_ITER_HOLDS_INT32 (&a))
            return false;
        pos[i++] = bson_iter_int32 (&a);
    }
    return i == n;
}

static bool
restore (job_t *j, const bson_iter_t *m, bson_error_t *err)
{
    const rm_unbucketize_t *u = j->u;
    bson_iter_t f, last;
    uint32_t nf = 0, emitted = 0;
    int32_t p = 0;
    bool has_last = false, has_time = false;
    size_t st;

    if (!BSON_ITER_HOLDS_DOCUMENT (m) || !bson_iter_recurse (m, &f)) {
        rm_error_set (err, RM_ERR_FORMAT, "measurement %s is not a document", bson_iter_key (m));
        return false;
    }
    while (bson_iter_next (&f)) {
        last = f;
        has_last = true;
        nf++;
    }
    memcpy (j->pos, j->bucket_pos, u->n_meta * sizeof *j->pos);
    if (has_last && !strcmp (bson_iter_key (&last), "_metaPositions")) {
        if (!read_positions (&last, u->n_meta, j->pos)) {
            rm_error_set (err, RM_ERR_FORMAT, "measurement %s: \"_metaPositions\" is not %zu int32s",
                          bson_iter_key (m), u->n_meta);
            return false;
        }
        nf--;
    }
    /* The positions must be distinct and fall inside the restored reading. */
    for (size_t i = 0; i < u->n_meta; i++) {
        bool ok = j->pos[i] >= 0 && (uint32_t) j->pos[i] < nf + u->n_meta;
        for (size_t k = 0; ok && k < i; k++)
            ok = j->pos[k] != j->pos[i];
        if (!ok) {
            rm_error_set (err, RM_ERR_FORMAT, "measurement %s: bad meta position %d",
                          bson_iter_key (m), (int) j->pos[i]);
            return false;
        }
    }
    rm_buf_reset (&j->doc);
    st = rm_docbuf_begin (&j->doc);
    bson_iter_recurse (m, &f);
    for (uint32_t i = 0; i <= nf; i++) {
        bool more = true;
        while (more) { /* the meta fields that stood here */
            more = false;
            for (size_t k = 0; k < u->n_meta; k++)
                if (j->pos[k] == p) {
                    rm_docbuf_copy (&j->doc, &j->meta[k].it);
                    p++;
                    emitted++;
                    more = true;
                }
        }
        if (i == nf)
            break;
        bson_iter_next (&f);
        has_time |= !strcmp (bson_iter_key (&f), u->time_field);
        rm_docbuf_copy (&j->doc, &f);
        p++;
    }
    rm_docbuf_end (&j->doc, st);
    if (emitted != u->n_meta || !has_time) {
        rm_error_set (err, RM_ERR_FORMAT, "measurement %s: %s", bson_iter_key (m),
                      has_time ? "bad meta positions" : "no time field");
        return false;
    }
    j->to->stats->extracted++;
    return j->emit (j->ctx, j->doc.data + st, (uint32_t) (j->doc.len - st), err);
}

static bool
one_bucket (job_t *j, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    const rm_unbucketize_t *u = j->u;
    bson_t b;
    bson_iter_t it, arr, m;
    bool has_pos = false, has_arr = false;

    for (size_t k = 0; k < u->n_meta; k++)
        memset (&j->meta[k].it, 0, sizeof j->meta[k].it);
    bson_init_static (&b, doc, len);
    bson_iter_init (&it, &b);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        for (size_t i = 0; i < u->n_meta; i++)
            if (!j->meta[i].it.raw && !strcmp (k, u->meta[i]))
                j->meta[i].it = it;
        if (!has_pos && !strcmp (k, "metaPositions")) {
            if (!read_positions (&it, u->n_meta, j->bucket_pos)) {
                rm_error_set (err, RM_ERR_FORMAT, "\"metaPositions\" is not an array of %zu int32s",
                              u->n_meta);
                return false;
            }
            has_pos = true;
        }
        if (!has_arr && !strcmp (k, u->as)) {
            arr = it;
            has_arr = true;
        }
    }
    for (size_t i = 0; i < u->n_meta; i++)
        if (!j->meta[i].it.raw) {
            rm_error_set (err, RM_ERR_FORMAT, "the bucket has no meta field \"%s\"", u->meta[i]);
            return false;
        }
    if (!has_pos) {
        rm_error_set (err, RM_ERR_FORMAT, "the bucket has no \"metaPositions\"");
        return false;
    }
    if (!has_arr || !BSON_ITER_HOLDS_ARRAY (&arr) || !bson_iter_recurse (&arr, &m)) {
        rm_error_set (err, RM_ERR_FORMAT, "the bucket has no array \"%s\"", u->as);
        return false;
    }
    while (bson_iter_next (&m))
        if (!restore (j, &m, err))
            return false;
    return true;
}

rm_unbucketizer_t *
rm_unbucketizer_new (const rm_step_t *s, rm_ens_t *to)
{
    const rm_unbucketize_t *u = &s->u.unbucketize;
    job_t *j = bson_malloc0 (sizeof *j);

    j->u = u;
    j->to = to;
    rm_buf_init (&j->doc);
    j->meta = bson_aligned_alloc0 (BSON_ALIGNOF (slot_t), u->n_meta * sizeof (slot_t));
    j->bucket_pos = bson_malloc0 (u->n_meta * sizeof *j->bucket_pos);
    j->pos = bson_malloc0 (u->n_meta * sizeof *j->pos);
    return j;
}

void
rm_unbucketizer_destroy (rm_unbucketizer_t *j)
{
    if (!j)
        return;
    rm_buf_destroy (&j->doc);
    bson_free (j->meta);
    bson_free (j->bucket_pos);
    bson_free (j->pos);
    bson_free (j);
}

bool
rm_unbucketizer_apply (rm_unbucketizer_t *j, rm_ens_t *from, const uint8_t *doc, uint32_t len,
                       rm_emit_fn emit, void *ctx, bson_error_t *err)
{
    j->emit = emit;
    j->ctx = ctx;
    return one_bucket (j, doc, len, err) || rm_doc_error (err, from->stats->name, "bucket", doc, len);
}

bool
rm_step_unbucketize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_ens_t *from = rm_engine_find (e, &s->u.unbucketize.from);
    rm_ens_t *to = rm_engine_find (e, &s->u.unbucketize.to);
    rm_unbucketizer_t *j = rm_unbucketizer_new (s, to);
    rm_store_t *out;
    rm_instream_t *in = NULL;
    rm_frame_t f;
    int rc = -1;
    bool ok;

    ok = (out = rm_engine_store_new (e, to, err)) && (in = rm_store_open (from->store, err));
    while (ok && (rc = rm_store_next (in, &f, err)) > 0)
        ok = rm_unbucketizer_apply (j, from, f.data, f.len, rm_store_emit, out, err);
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    if (ok)
        ok = rm_engine_store_swap (to, out, err);
    else
        rm_store_destroy (out);
    rm_unbucketizer_destroy (j);
    return ok;
}
