/* unbucketize: the inverse of bucketize. Every bucket of `from` becomes its
 * readings in `to`, in bucket order then measurement order; each reading is
 * the measurement's fields with the bucket's meta values put back at the
 * positions recorded in `metaPositions` (or in the measurement's own last
 * field `_metaPositions`, which is then dropped), bytes copied as they are.
 * Its keys in a plan (bucketize's) are read in step_bucket_parse.c. */
#include <stdio.h>
#include <string.h>

#include "bsonwalk.h"
#include "bucket_record.h"
#include "docbuf.h"
#include "embed_join.h"
#include "engine_impl.h"
#include "step_class.h"

typedef struct rm_unbucketizer rm_unbucketizer_t;
struct rm_unbucketizer {
    const rm_unbucketize_t *u;
    rm_engine_t *e;
    const rm_step_t *s;       /* its filter: the buckets it unpacks */
    rm_expr_ctx_t *cx;        /* the filter's context (one per run or stage) */
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

static const char *const stat_names[] = {"count", "min", "max", "sum", "avg"};

/* The keys of the bucketize being reversed, when given, must describe the
 * bucket: its window (start aligned, end - start the span), its count
 * within maxCount, and each statistic asked for present. */
static bool
agree (job_t *j, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    const rm_unbucketize_t *u = j->u;
    bson_t b;
    bson_iter_t it, end;

    bson_init_static (&b, doc, len);
    if (u->span || u->calendar) {
        int64_t start, stop, ws, we;
        char why[300];
        if (!bson_iter_init_find (&it, &b, "start") || !BSON_ITER_HOLDS_DATE_TIME (&it) ||
            !bson_iter_init_find (&end, &b, "end") || !BSON_ITER_HOLDS_DATE_TIME (&end)) {
            rm_error_set (err, RM_ERR_FORMAT, "the bucket has no dates \"start\" and \"end\" "
                          "(the plan gives its window)");
            return false;
        }
        start = bson_iter_date_time (&it);
        stop = bson_iter_date_time (&end);
        /* The window bucketize gives its start is the bucket's own. */
        if (!rm_bucket_window (u, start, &ws, &we, why, sizeof why) || ws != start ||
            we != stop) {
            if (u->calendar)
                rm_error_set (err, RM_ERR_FORMAT,
                              "its window (%lld to %lld ms) is not a bin of the plan's unit "
                              "\"%s\" (binSize %lld, timezone %s)", (long long) start,
                              (long long) stop, rm_dt_unit_name (u->bins.unit),
                              (long long) u->bins.bin, u->timezone ? u->timezone : "UTC");
            else
                rm_error_set (err, RM_ERR_FORMAT,
                              "its window (%lld ms from %lld) is not the plan's window of %lld s "
                              "(granularity or spanSeconds)", (long long) (stop - start),
                              (long long) start, (long long) u->span);
            return false;
        }
    }
    if (u->max_count) {
        if (!bson_iter_init_find (&it, &b, "count") || !BSON_ITER_HOLDS_INT32 (&it) ||
            bson_iter_int32 (&it) > u->max_count) {
            rm_error_set (err, RM_ERR_FORMAT, "its count is not an int32 of at most maxCount %lld",
                          (long long) u->max_count);
            return false;
        }
    }
    for (size_t f = 0; f < u->n_stats; f++)
        for (size_t k = 0; k < u->stats[f].n; k++) {
            char path[400];
            snprintf (path, sizeof path, "stats.%s.%s", u->stats[f].field,
                      stat_names[u->stats[f].kinds[k]]);
            if (!bson_iter_init (&it, &b) || !bson_iter_find_descendant (&it, path, &end)) {
                rm_error_set (err, RM_ERR_FORMAT, "the bucket has no \"%s\" (the plan's stats)",
                              path);
                return false;
            }
        }
    return true;
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
    if (!agree (j, doc, len, err))
        return false;
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
            /* Without metaField the plan has no meta value to put back:
             * a bucket with meta positions is another bucketize's. */
            if (u->n_meta == 0 && !read_positions (&w, &e, 0, j->bucket_pos)) {
                rm_error_set (err, RM_ERR_FORMAT, "it has meta positions (\"metaPositions\" is "
                              "not []), but the plan gives no metaField to put them back");
                return false;
            }
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

static rm_unbucketizer_t *
rm_unbucketizer_new (rm_engine_t *e, const rm_step_t *s, rm_ens_t *to)
{
    const rm_unbucketize_t *u = &s->u.unbucketize;
    job_t *j = bson_malloc0 (sizeof *j);

    j->u = u;
    j->e = e;
    j->s = s;
    if (s->filter)
        j->cx = rm_expr_ctx_new (rm_engine_now (e));
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

static void
rm_unbucketizer_destroy (rm_unbucketizer_t *j)
{
    if (!j)
        return;
    rm_expr_ctx_destroy (j->cx);
    rm_buf_destroy (&j->doc);
    bson_free (j->meta);
    bson_free (j->has_meta);
    bson_free (j->meta_len);
    bson_free (j->bucket_pos);
    bson_free (j->pos);
    bson_free (j);
}

/* Whether the step's filter takes the bucket, into *take: one it leaves
 * out is not unpacked and stays as it is. */
static bool
rm_unbucketizer_take (rm_unbucketizer_t *j, rm_ens_t *from, const uint8_t *doc, uint32_t len,
                      bool *take, bson_error_t *err)
{
    return rm_step_select (j->e, j->s, false, j->cx, from->stats->name, doc, len, take, err);
}

static bool
rm_unbucketizer_apply (rm_unbucketizer_t *j, rm_ens_t *from, const uint8_t *doc, uint32_t len,
                       rm_emit_fn emit, void *ctx, bson_error_t *err)
{
    j->emit = emit;
    j->ctx = ctx;
    return one_bucket (j, doc, len, err) || rm_doc_error (err, from->stats->name, "bucket", doc, len);
}

/* Adds every document of ns's store to out. */
static bool
copy_store (rm_ens_t *ns, rm_store_t *out, bson_error_t *err)
{
    rm_instream_t *in = rm_store_open (ns->store, err);
    rm_frame_t f;
    int rc = -1;
    while (in && (rc = rm_store_next (in, &f, err)) > 0)
        if (!rm_store_add (out, f.data, f.len, err))
            rc = -1;
    rm_instream_close (in);
    return rc == 0;
}

/* Leaves ns empty (its metadata stays: a later step or run may fill it). */
static bool
empty (rm_engine_t *e, rm_ens_t *ns, bson_error_t *err)
{
    rm_store_t *none = rm_engine_store_new (e, ns, err);
    return none && rm_engine_store_swap (ns, none, err);
}

bool
rm_step_unbucketize_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_unbucketize_t *u = &s->u.unbucketize;
    rm_ens_t *from = rm_engine_find (e, &u->from), *to = rm_engine_find (e, &u->to);
    rm_ens_t *aside = u->invalid_to.text ? rm_engine_find (e, &u->invalid_to) : NULL;
    rm_unbucketizer_t *j = rm_unbucketizer_new (e, s, to);
    rm_store_t *out, *kept = NULL;
    rm_instream_t *in = NULL;
    rm_frame_t f;
    int rc = -1;
    bool ok;

    ok = (out = rm_engine_store_new (e, to, err)) && (in = rm_store_open (from->store, err));
    /* Without keepSource, `from` keeps the buckets the filter leaves out. */
    if (ok && s->filter && !u->keep_source)
        ok = (kept = rm_engine_store_new (e, from, err)) != NULL;
    while (ok && (rc = rm_store_next (in, &f, err)) > 0) {
        bool take;
        ok = rm_unbucketizer_take (j, from, f.data, f.len, &take, err);
        if (ok && take)
            ok = rm_unbucketizer_apply (j, from, f.data, f.len, rm_store_emit, out, err);
        else if (ok && kept)
            ok = rm_store_add (kept, f.data, f.len, err);
    }
    if (rc < 0)
        ok = false;
    rm_instream_close (in);
    /* The readings bucketize set aside come back after the others. */
    if (ok && aside)
        ok = copy_store (aside, out, err);
    if (ok)
        ok = rm_engine_store_swap (to, out, err);
    else
        rm_store_destroy (out);
    rm_unbucketizer_destroy (j);
    if (ok && kept) {
        ok = rm_engine_store_swap (from, kept, err);
        kept = NULL;
    } else if (ok && !u->keep_source) {
        ok = empty (e, from, err);
    }
    if (ok && !u->keep_source && aside)
        ok = empty (e, aside, err);
    rm_store_destroy (kept);
    return ok;
}

/* The one-pass path (rm_stage_class_t), when the buckets stay and no
 * reading was set aside (emptying them, or bringing those back after the
 * others, is store to store). */
static bool
unbucketize_can (const rm_plan_t *plan, const rm_step_t *s)
{
    (void) plan;
    return s->u.unbucketize.keep_source && !s->u.unbucketize.invalid_to.text;
}

static void
unbucketize_open (rm_engine_t *e, rm_stage_t *st)
{
    st->in = rm_engine_find (e, &st->s->u.unbucketize.from);
    st->to = rm_engine_find (e, &st->s->u.unbucketize.to);
    st->data = rm_unbucketizer_new (e, st->s, st->to);
}

static bool
unbucketize_apply (rm_stage_t *st, const uint8_t *doc, uint32_t len, rm_emit_fn emit, void *ctx,
                   const uint8_t **out, size_t *out_len, bson_error_t *err)
{
    bool take;
    /* the buckets stay as they are; those the filter leaves out make no
     * readings */
    *out = doc;
    *out_len = len;
    if (!rm_unbucketizer_take (st->data, st->in, doc, len, &take, err))
        return false;
    return !take || rm_unbucketizer_apply (st->data, st->in, doc, len, emit, ctx, err);
}

static void
unbucketize_close (rm_stage_t *st)
{
    rm_unbucketizer_destroy (st->data);
}

const rm_stage_class_t rm_unbucketize_stage = {.can = unbucketize_can,
                                               .open = unbucketize_open,
                                               .apply = unbucketize_apply,
                                               .close = unbucketize_close};

void
rm_unbucketize_created (const rm_step_t *s, rm_dump_info_t *out, const rm_dump_info_t *in)
{
    rm_engine_add_created (out, in, &s->u.unbucketize.to, NULL);
}

/* Online (remodel/passes.h). */
size_t
rm_unbucketize_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    const rm_unbucketize_t *u = &s->u.unbucketize;
    /* The buckets' readings, then those onInvalid set aside; emptied
     * inputs (no keepSource) get no documents. */
    out[0].keep[out[0].n_keep++] = &u->to;
    out[0].holds = u->as;
    out[0].followed = true;
    /* The buckets a filter leaves out stay in `from`, each its own. */
    if (s->filter && !u->keep_source) {
        out[0].keep[out[0].n_keep] = &u->from;
        out[0].driver_field[out[0].n_keep++] = "_id";
    }
    if (!u->invalid_to.text)
        return 1;
    /* A reading set aside comes back as it is, with its own _id; the
     * buckets may hold that _id too, so its result is followed with the
     * first pass's (a reading gone from here may be a bucket's now). */
    out[1].drive = 1;
    out[1].keep[out[1].n_keep++] = &u->to;
    out[1].followed = true;
    return 2;
}

/* Its inverse (remodel/plan.h): none that is exact. bucketize gives back
 * the buckets only where they were its own, made with the same keys,
 * which the readings alone do not show. */
void
rm_unbucketize_inverse (const rm_step_t *s, rm_step_inverse_t *out)
{
    out->why = "its inverse (bucketize) gives back only buckets remodel made with the same "
               "keys, which the data does not show";
}
