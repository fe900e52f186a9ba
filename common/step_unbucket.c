/* unbucketize: the inverse of bucketize. Every bucket of `from` becomes its
 * readings in `to`, in bucket order then measurement order; each reading is
 * the measurement's fields with the bucket's meta values put back at the
 * positions recorded in `metaPositions` (or in the measurement's own last
 * field `_metaPositions`, which is then dropped), bytes copied as they are. */
#include <string.h>

#include "bsonwalk.h"
#include "docbuf.h"
#include "engine_impl.h"

struct rm_unbucketizer {
    const rm_unbucketize_t *u;
    size_t *meta_len;      /* strlen of each meta field's name */
    size_t time_len, as_len;
    rm_buf_t doc;
    rm_elem_t *meta;       /* the bucket's meta fields */
    bool *has_meta;
    int32_t *bucket_pos, *pos;
    rm_ens_t *to;
    rm_emit_fn emit;       /* where the readings go */
    void *ctx;
};
typedef rm_unbucketizer_t job_t;

/* An array of n int32 positions into pos. */
static bool
read_positions (const rm_walk_t *in, const rm_elem_t *e, size_t n, int32_t *pos)
{
    rm_walk_t a;
    rm_elem_t x;
    size_t i = 0;
    int rc;

    if (e->type != BSON_TYPE_ARRAY || !rm_walk_into (&a, in, e))
        return false;
    while ((rc = rm_walk_next (&a, &x)) > 0) {
        if (i == n || x.type != BSON_TYPE_INT32)
            return false;
        pos[i++] = (int32_t) rm_walk_le32 (a.data + x.value);
    }
    return rc == 0 && i == n;
}

/* Restores one measurement m of the array walked by arr, in the bucket
 * walked by bucket. */
static bool
restore (job_t *j, const rm_walk_t *bucket, const rm_walk_t *arr, const rm_elem_t *m,
         bson_error_t *err)
{
    const rm_unbucketize_t *u = j->u;
    const char *mkey = rm_elem_key (arr, m);
    rm_walk_t f;
    rm_elem_t e, last;
    uint32_t nf = 0, emitted = 0;
    int32_t p = 0;
    bool has_last = false, has_time = false;
    size_t st;
    int rc;

    if (m->type != BSON_TYPE_DOCUMENT || !rm_walk_into (&f, arr, m)) {
        rm_error_set (err, RM_ERR_FORMAT, "measurement %s is not a document", mkey);
        return false;
    }
    while ((rc = rm_walk_next (&f, &e)) > 0) {
        last = e;
        has_last = true;
        nf++;
    }
    if (rc < 0) {
        rm_error_set (err, RM_ERR_FORMAT, "measurement %s is not valid BSON", mkey);
        return false;
    }
    memcpy (j->pos, j->bucket_pos, u->n_meta * sizeof *j->pos);
    if (has_last && rm_elem_key_is (&f, &last, "_metaPositions", 14)) {
        if (!read_positions (&f, &last, u->n_meta, j->pos)) {
            rm_error_set (err, RM_ERR_FORMAT, "measurement %s: \"_metaPositions\" is not %zu int32s",
                          mkey, u->n_meta);
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
            rm_error_set (err, RM_ERR_FORMAT, "measurement %s: bad meta position %d", mkey,
                          (int) j->pos[i]);
            return false;
        }
    }
    rm_buf_reset (&j->doc);
    st = rm_docbuf_begin (&j->doc);
    rm_walk_into (&f, arr, m);
    for (uint32_t i = 0; i <= nf; i++) {
        bool more = true;
        while (more) { /* the meta fields that stood here */
            more = false;
            for (size_t k = 0; k < u->n_meta; k++)
                if (j->pos[k] == p) {
                    const rm_elem_t *x = &j->meta[k];
                    rm_buf_append (&j->doc, bucket->data + x->start, x->end - x->start);
                    p++;
                    emitted++;
                    more = true;
                }
        }
        if (i == nf)
            break;
        rm_walk_next (&f, &e);
        has_time |= rm_elem_key_is (&f, &e, u->time_field, j->time_len);
        rm_buf_append (&j->doc, f.data + e.start, e.end - e.start);
        p++;
    }
    rm_docbuf_end (&j->doc, st);
    if (emitted != u->n_meta || !has_time) {
        rm_error_set (err, RM_ERR_FORMAT, "measurement %s: %s", mkey,
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
    rm_walk_t w, arr;
    rm_elem_t e, arr_e, m;
    bool has_pos = false, has_arr = false;
    int rc;

    memset (j->has_meta, 0, u->n_meta * sizeof *j->has_meta);
    if (!rm_walk_init (&w, doc, len)) {
        rm_error_set (err, RM_ERR_FORMAT, "the bucket is not valid BSON");
        return false;
    }
    while ((rc = rm_walk_next (&w, &e)) > 0) {
        for (size_t i = 0; i < u->n_meta; i++)
            if (!j->has_meta[i] && rm_elem_key_is (&w, &e, u->meta[i], j->meta_len[i])) {
                j->meta[i] = e;
                j->has_meta[i] = true;
            }
        if (!has_pos && rm_elem_key_is (&w, &e, "metaPositions", 13)) {
            if (!read_positions (&w, &e, u->n_meta, j->bucket_pos)) {
                rm_error_set (err, RM_ERR_FORMAT, "\"metaPositions\" is not an array of %zu int32s",
                              u->n_meta);
                return false;
            }
            has_pos = true;
        }
        if (!has_arr && rm_elem_key_is (&w, &e, u->as, j->as_len)) {
            arr_e = e;
            has_arr = true;
        }
    }
    if (rc < 0) {
        rm_error_set (err, RM_ERR_FORMAT, "the bucket is not valid BSON");
        return false;
    }
    for (size_t i = 0; i < u->n_meta; i++)
        if (!j->has_meta[i]) {
            rm_error_set (err, RM_ERR_FORMAT, "the bucket has no meta field \"%s\"", u->meta[i]);
            return false;
        }
    if (!has_pos) {
        rm_error_set (err, RM_ERR_FORMAT, "the bucket has no \"metaPositions\"");
        return false;
    }
    if (!has_arr || arr_e.type != BSON_TYPE_ARRAY || !rm_walk_into (&arr, &w, &arr_e)) {
        rm_error_set (err, RM_ERR_FORMAT, "the bucket has no array \"%s\"", u->as);
        return false;
    }
    while ((rc = rm_walk_next (&arr, &m)) > 0)
        if (!restore (j, &w, &arr, &m, err))
            return false;
    if (rc < 0) {
        rm_error_set (err, RM_ERR_FORMAT, "the array \"%s\" is not valid BSON", u->as);
        return false;
    }
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
    j->meta = bson_malloc0 ((u->n_meta + 1) * sizeof *j->meta);
    j->has_meta = bson_malloc0 ((u->n_meta + 1) * sizeof *j->has_meta);
    j->meta_len = bson_malloc0 ((u->n_meta + 1) * sizeof *j->meta_len);
    for (size_t i = 0; i < u->n_meta; i++)
        j->meta_len[i] = strlen (u->meta[i]);
    j->time_len = strlen (u->time_field);
    j->as_len = strlen (u->as);
    j->bucket_pos = bson_malloc0 ((u->n_meta + 1) * sizeof *j->bucket_pos);
    j->pos = bson_malloc0 ((u->n_meta + 1) * sizeof *j->pos);
    return j;
}

void
rm_unbucketizer_destroy (rm_unbucketizer_t *j)
{
    if (!j)
        return;
    rm_buf_destroy (&j->doc);
    bson_free (j->meta);
    bson_free (j->has_meta);
    bson_free (j->meta_len);
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
