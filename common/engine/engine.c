/* Running a plan (see remodel/engine.h). */
#include <string.h>

#include "engine_impl.h"
#include "step_class.h"

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
    if (e->opts.now_ms == 0)
        e->opts.now_ms = rm_expr_run_now ();
    else
        rm_expr_set_run_now (e->opts.now_ms);
    return e;
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
    if (e->opts.follow_indexes)
        rm_indexes_follow_dump (e->plan, out, &e->index_changes, &e->n_index_changes);
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
    e->pooled = true;
    rm_engine_stores_free (e);
    for (size_t i = 0; i < e->n_ns; i++)
        if ((e->ns[i].stats->touched || e->ns[i].read) &&
            !(e->ns[i].store = rm_engine_store_new (e, &e->ns[i], err)))
            return -1;
    /* Runs of documents (rm_reader_next_run): an untouched namespace's
     * go to the writer whole, the others' one by one. */
    while ((rc = rm_reader_next_run (r, &item, err)) > 0) {
        rm_ens_t *ns = &e->ns[map[item.ns->index]];
        if (item.kind == RM_ITEM_DOC && !ns->store && !ns->stats->touched && !e->opts.output) {
            ns->stats->docs_in += item.n_docs;
            ns->stats->docs_out += item.n_docs;
            for (uint32_t k = 0; e->opts.progress && k < item.n_docs; k++)
                e->opts.progress (e->opts.progress_ctx, ++docs);
            if (w && !rm_writer_docs (w, ns->out, item.doc, item.len, item.n_docs, false, err))
                return -1;
        } else if (item.kind == RM_ITEM_DOC) {
            for (uint32_t at = 0, k = 0; k < item.n_docs; k++) {
                const uint8_t *doc = item.doc + at;
                uint32_t len;
                memcpy (&len, doc, 4);
                len = BSON_UINT32_FROM_LE (len);
                at += len;
                ns->stats->docs_in++;
                if (e->opts.progress)
                    e->opts.progress (e->opts.progress_ctx, ++docs);
                if (ns->store && !(item.held ? rm_store_add_held (ns->store, doc, len, err)
                                             : rm_store_add (ns->store, doc, len, err)))
                    return -1;
                if (!ns->stats->touched) {
                    ns->stats->docs_out++;
                    if (w && !rm_writer_doc (w, ns->out, doc, len, err))
                        return -1;
                    if (e->opts.output &&
                        !e->opts.output (e->opts.output_ctx, ns->out->index, doc, len, err))
                        return -1;
                }
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
    for (size_t i = 0; i < e->n_index_changes; i++)
        bson_free (e->index_changes[i]);
    bson_free (e->index_changes);
    bson_free (e->ns);
    bson_free (e->stats);
    bson_free (e->sinks);
    bson_free (e);
}

size_t
rm_engine_index_changes (const rm_engine_t *e, char *const **out)
{
    *out = e->index_changes;
    return e->n_index_changes;
}
