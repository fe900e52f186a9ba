/* Running a plan (see remodel/engine.h). */
#include <stdio.h>
#include <string.h>

#include "engine_impl.h"
#include "step_class.h"
#include "remodel/bsoncheck.h"

#define DEFAULT_MEMORY ((size_t) 512 << 20)

rm_engine_t *
rm_engine_new (const rm_plan_t *plan, const rm_engine_opts_t *opts)
{
    rm_engine_t *e = bson_malloc0 (sizeof *e);
    e->plan = plan;
    if (opts)
        e->opts = *opts;
    if (e->opts.memory == 0)
        e->opts.memory = DEFAULT_MEMORY;
    return e;
}

size_t
rm_engine_sort_budget (const rm_engine_t *e)
{
    size_t half = e->opts.memory / 2;
    return half < (64u << 10) ? (64u << 10) : half;
}

rm_ens_t *
rm_engine_find (rm_engine_t *e, const rm_nsref_t *ref)
{
    for (size_t i = 0; i < e->n_ns; i++)
        if (!strcmp (e->ns[i].out->db, ref->db) && !strcmp (e->ns[i].out->coll, ref->coll))
            return &e->ns[i];
    return NULL;
}

/* Metadata for a namespace a step creates: the _id index, and an index on
 * the parent reference, which the seeds advise and mongorestore builds. */
static char *
created_metadata (const char *coll, const char *indexed_field)
{
    const char *id_index =
        "{\"v\":{\"$numberInt\":\"2\"},\"key\":{\"_id\":{\"$numberInt\":\"1\"}},\"name\":\"_id_\"}";
    if (indexed_field)
        return bson_strdup_printf (
            "{\"indexes\":[%s,{\"v\":{\"$numberInt\":\"2\"},\"key\":{\"%s\":{\"$numberInt\":"
            "\"1\"}},\"name\":\"%s_1\"}],\"collectionName\":\"%s\",\"type\":\"collection\"}",
            id_index, indexed_field, indexed_field, coll);
    return bson_strdup_printf ("{\"indexes\":[%s],\"collectionName\":\"%s\",\"type\":\"collection\"}",
                               id_index, coll);
}

/* An empty namespace of the input that a step fills keeps its metadata
 * (bucketize then unbucketize gives back the options, indexes and uuid as
 * they were); a new one gets meta. */
void
rm_engine_add_created_meta (rm_dump_info_t *out, const rm_dump_info_t *in, const rm_nsref_t *ref,
                  char *meta)
{
    rm_ns_t *ns;
    if (rm_dump_info_find (in, ref->db, ref->coll)) {
        bson_free (meta);
        return;
    }
    ns = rm_dump_info_add (out, ref->db, ref->coll);
    rm_ns_set_metadata (ns, meta, strlen (meta));
    bson_free (ns->type);
    ns->type = bson_strdup ("collection");
    ns->has_type = true;
    bson_free (meta);
}

void
rm_engine_add_created (rm_dump_info_t *out, const rm_dump_info_t *in, const rm_nsref_t *ref,
                       const char *indexed_field)
{
    rm_engine_add_created_meta (out, in, ref, created_metadata (ref->coll, indexed_field));
}

void
rm_step_created_info (const rm_step_t *s, rm_dump_info_t *out)
{
    rm_dump_info_t none;
    rm_dump_info_init (&none);
    if (rm_step_classes[s->kind].created)
        rm_step_classes[s->kind].created (s, out, &none);
    rm_dump_info_destroy (&none);
}

bool
rm_engine_prepare (rm_engine_t *e, const rm_dump_info_t *in, rm_dump_info_t *out,
                   bson_error_t *err)
{
    if (!rm_plan_check_against (e->plan, in, err))
        return false;
    rm_dump_info_copy (out, in);
    for (size_t i = 0; i < e->plan->n; i++) {
        const rm_step_t *s = &e->plan->steps[i];
        if (rm_step_classes[s->kind].created)
            rm_step_classes[s->kind].created (s, out, in);
    }
    /* The oplog stays the last namespace of the output. */
    for (size_t i = 0; i + 1 < out->n_ns; i++)
        if (out->ns[i]->is_oplog) {
            rm_ns_t *oplog = out->ns[i];
            memmove (&out->ns[i], &out->ns[i + 1], (out->n_ns - i - 1) * sizeof *out->ns);
            out->ns[out->n_ns - 1] = oplog;
            for (size_t j = 0; j < out->n_ns; j++)
                out->ns[j]->index = j;
            break;
        }

    e->out = out;
    e->n_ns = out->n_ns;
    rm_engine_runs_init (e);
    e->ns = bson_malloc0 (e->n_ns * sizeof *e->ns);
    e->stats = bson_malloc0 (e->n_ns * sizeof *e->stats);
    e->sinks = bson_malloc0 (e->n_ns * sizeof *e->sinks);
    for (size_t i = 0; i < e->n_ns; i++) {
        e->ns[i].out = out->ns[i];
        e->ns[i].stats = &e->stats[i];
        e->ns[i].stats->name = bson_strdup_printf ("%s.%s", out->ns[i]->db, out->ns[i]->coll);
        e->ns[i].stats->created = !rm_dump_info_find (in, out->ns[i]->db, out->ns[i]->coll);
    }
    for (size_t i = 0; i < e->plan->n; i++) {
        const rm_nsref_t *refs[4];
        size_t n = rm_step_outputs (&e->plan->steps[i], refs, 4);
        for (size_t j = 0; j < n; j++) {
            rm_engine_find (e, refs[j])->stats->touched = true;
            rm_engine_find (e, refs[j])->last_step = i + 1;
        }
        n = rm_step_inputs (&e->plan->steps[i], refs, 4);
        for (size_t j = 0; j < n; j++) {
            rm_engine_find (e, refs[j])->read = true;
            rm_engine_find (e, refs[j])->last_step = i + 1;
        }
    }
    return true;
}

typedef struct rm_sink_ctx sink_ctx_t;

static bool
sink_add (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    sink_ctx_t *c = ctx;
    return rm_engine_emit (c->e, c->ns, doc, len, err);
}

static bool
sink_seal (void *ctx, bson_error_t *err)
{
    sink_ctx_t *c = ctx;
    c->ns->written = true;
    return !c->e->w || rm_writer_ns_end (c->e->w, c->ns->out, err);
}

rm_store_t *
rm_engine_store_new (rm_engine_t *e, rm_ens_t *ns, bson_error_t *err)
{
    static const rm_store_sink_t sink = {sink_add, sink_seal};
    if (e->step && e->step == ns->last_step && !ns->written) {
        sink_ctx_t *c = &e->sinks[ns->out->index];
        c->e = e;
        c->ns = ns;
        return rm_store_new_sink (ns->stats->name, &sink, c);
    }
    return rm_store_new (e->opts.tmpdir, ns->stats->name, err);
}

bool
rm_engine_store_swap (rm_ens_t *ns, rm_store_t *next, bson_error_t *err)
{
    if (!rm_store_seal (next, err)) {
        rm_store_destroy (next);
        return false;
    }
    rm_store_destroy (ns->store);
    ns->store = next;
    return true;
}

char *
rm_doc_id_json (const uint8_t *doc, uint32_t len)
{
    bson_t b, tmp;
    bson_iter_t it;
    char *json, *out;
    if (!bson_init_static (&b, doc, len) || !bson_iter_init_find (&it, &b, "_id"))
        return bson_strdup ("(no _id)");
    bson_init (&tmp);
    bson_append_iter (&tmp, "_id", 3, &it);
    json = bson_as_relaxed_extended_json (&tmp, NULL);
    out = bson_strdup (json ? json : "?");
    bson_free (json);
    bson_destroy (&tmp);
    return out;
}

bool
rm_doc_error (bson_error_t *err, const char *ns_name, const char *what, const uint8_t *doc,
              uint32_t len)
{
    char *id = rm_doc_id_json (doc, len);
    rm_error_prefix (err, "%s: %s %s", ns_name, what, id);
    bson_free (id);
    return false;
}

bool
rm_store_emit (void *ctx, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    return rm_store_add (ctx, doc, len, err);
}

/* A step writes only to a new namespace or an empty one (plan.h). */
static bool
targets_empty (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_nsref_t *made[4];
    const char *keys[4];
    size_t n = rm_step_creates (s, made, keys, 4);
    for (size_t j = 0; j < n; j++) {
        rm_ens_t *ns = rm_engine_find (e, made[j]);
        uint64_t docs = ns->store ? rm_store_count (ns->store) : 0;
        if (docs) {
            rm_error_set (err, RM_ERR_USAGE,
                          "step %zu (%s): \"%s\": namespace %s already exists and holds %llu "
                          "document(s) (a step writes only to a new or an empty namespace)",
                          s->index, s->op, keys[j], made[j]->text, (unsigned long long) docs);
            return false;
        }
    }
    return true;
}

/* Whether a step fills a namespace the input has (then the plan runs store
 * to store, where the step can see that it is empty). */
static bool
fills_input_namespace (rm_engine_t *e)
{
    for (size_t i = 0; i < e->plan->n; i++) {
        const rm_nsref_t *made[4];
        const char *keys[4];
        size_t n = rm_step_creates (&e->plan->steps[i], made, keys, 4);
        for (size_t j = 0; j < n; j++)
            if (!rm_engine_find (e, made[j])->stats->created)
                return true;
    }
    return false;
}

bool
rm_engine_run_step (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    bool ok;
    if (!targets_empty (e, s, err))
        return false;
    e->step = (size_t) (s - e->plan->steps) + 1; /* its position: see rm_engine_step_run */
    ok = rm_step_classes[s->kind].run (e, s, err);
    e->step = 0;
    if (!ok && err->message[0] && strncmp (err->message, "step ", 5) != 0)
        rm_error_prefix (err, "step %zu (%s)", s->index, s->op);
    return ok && rm_engine_check_step (e, s, err);
}

/* Touched namespaces go to stores; the rest streams straight through. */
static int
run_input (rm_engine_t *e, rm_reader_t *r, rm_writer_t *w, const size_t *map, bson_error_t *err)
{
    rm_item_t item;
    uint64_t docs = 0;
    int rc;

    /* A namespace only read (denormalize's from) is both stored for the
     * step and copied through unchanged. */
    for (size_t i = 0; i < e->n_ns; i++)
        e->ns[i].out->crc_given = !e->ns[i].stats->touched;
    for (size_t i = 0; i < e->n_ns; i++)
        if ((e->ns[i].stats->touched || e->ns[i].read) &&
            !(e->ns[i].store = rm_engine_store_new (e, &e->ns[i], err)))
            return -1;
    while ((rc = rm_reader_next (r, &item, err)) > 0) {
        rm_ens_t *ns = &e->ns[map[item.ns->index]];
        if (item.kind == RM_ITEM_DOC) {
            ns->stats->docs_in++;
            if (e->opts.progress)
                e->opts.progress (e->opts.progress_ctx, ++docs);
            if (ns->store && !rm_store_add (ns->store, item.doc, item.len, err))
                return -1;
            if (!ns->stats->touched) {
                ns->stats->docs_out++;
                if (w && !rm_writer_doc (w, ns->out, item.doc, item.len, err))
                    return -1;
                if (e->opts.output &&
                    !e->opts.output (e->opts.output_ctx, ns->out->index, item.doc, item.len, err))
                    return -1;
            }
        } else if (!ns->stats->touched && w) {
            /* An untouched namespace is the reader's documents, unchanged. */
            ns->out->crc = item.ns->crc;
            if (!rm_writer_ns_end (w, ns->out, err))
                return -1;
        }
    }
    if (rc < 0)
        return -1;
    for (size_t i = 0; i < e->n_ns; i++)
        if (e->ns[i].store && !rm_store_seal (e->ns[i].store, err))
            return -1;
    return 0;
}

bool
rm_engine_emit (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    if (len > RM_BSON_MAX_SIZE && !ns->out->is_oplog) {
        char *id = rm_doc_id_json (doc, len);
        rm_error_set (err, RM_ERR_FORMAT, "%s: document %s would be %u bytes, over the "
                      "16 MiB limit", ns->stats->name, id, len);
        bson_free (id);
        return false;
    }
    ns->stats->docs_out++;
    if (e->opts.output && !e->opts.output (e->opts.output_ctx, ns->out->index, doc, len, err))
        return false;
    return !e->w || rm_writer_doc (e->w, ns->out, doc, len, err);
}

/* The transformed namespaces, in the output's order. */
bool
rm_engine_write_stores (rm_engine_t *e, const bool *only, bson_error_t *err)
{
    int rc;

    for (size_t i = 0; i < e->n_ns; i++) {
        rm_ens_t *ns = &e->ns[i];
        rm_instream_t *s;
        rm_frame_t f;
        if (!ns->stats->touched || ns->written || (only && !only[i]))
            continue;
        s = rm_store_open (ns->store, err);
        if (!s)
            return false;
        while ((rc = rm_store_next (s, &f, err)) > 0)
            if (!rm_engine_emit (e, ns, f.data, f.len, err)) {
                rc = -1;
                break;
            }
        rm_instream_close (s);
        if (rc < 0 || (e->w && !rm_writer_ns_end (e->w, ns->out, err)))
            return false;
        rm_store_destroy (ns->store);
        ns->store = NULL;
    }
    return true;
}

bool
rm_engine_run (rm_engine_t *e, rm_reader_t *r, rm_writer_t *w, bson_error_t *err)
{
    const rm_dump_info_t *in = rm_reader_info (r);
    size_t *map = bson_malloc0 ((in->n_ns + 1) * sizeof *map);
    bool ok = true;

    e->w = w;
    /* Reader namespace -> engine namespace, once, not per document. */
    for (size_t i = 0; i < in->n_ns; i++)
        map[i] = rm_dump_info_find (e->out, in->ns[i]->db, in->ns[i]->coll)->index;
    if (!e->opts.batch && rm_engine_can_stream (e->plan) && !fills_input_namespace (e)) {
        ok = rm_engine_stream (e, r, map, err);
    } else {
        ok = run_input (e, r, w, map, err) == 0;
        for (size_t i = 0; ok && i < e->plan->n; i++)
            ok = rm_engine_run_step (e, &e->plan->steps[i], err);
        ok = ok && rm_engine_write_stores (e, NULL, err);
    }
    bson_free (map);
    return ok;
}

size_t
rm_engine_stats (const rm_engine_t *e, const rm_ns_stats_t **stats)
{
    *stats = e->stats;
    return e->n_ns;
}

bool
rm_engine_spilled (const rm_engine_t *e)
{
    return e->spilled;
}

void
rm_engine_destroy (rm_engine_t *e)
{
    if (!e)
        return;
    rm_engine_stages_destroy (e);
    rm_engine_runs_destroy (e);
    for (size_t i = 0; i < e->n_ns; i++) {
        rm_store_destroy (e->ns[i].store);
        bson_free (e->stats[i].name);
    }
    bson_free (e->ns);
    bson_free (e->stats);
    bson_free (e->sinks);
    bson_free (e);
}
