/* The engine's namespaces as the steps use them (engine_impl.h): found by
 * reference, their stores made, swapped and written out, documents
 * emitted and named in messages, the namespaces a step creates. Below the
 * steps, which call it, and so apart from what calls the steps through
 * their table (engine_step.c, engine_stream.c, engine.c). */
#include <string.h>

#include "bsonwalk.h"
#include "engine_impl.h"
#include "remodel/bsoncheck.h"

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
    if (e->pooled)
        return rm_store_new_pooled (e->opts.tmpdir, ns->stats->name, &e->pool, err);
    return rm_store_new (e->opts.tmpdir, ns->stats->name, err);
}

static uint64_t
mem_bytes (const rm_store_t *s)
{
    size_t len = 0;
    return s && rm_store_mem (s, &len) ? len : 0;
}

bool
rm_engine_stores_fit (rm_engine_t *e, uint64_t need, const rm_store_t *keep,
                      bson_error_t *err)
{
    uint64_t mem = e->opts.memory, kept = mem_bytes (keep);
    if (!e->pooled)
        return true;
    /* keep's bytes are in need and in used: count them once. */
    for (size_t i = 0; i < e->n_ns && e->pool.used - kept + need > mem; i++)
        if (e->ns[i].store && e->ns[i].store != keep && !rm_store_spill (e->ns[i].store, err))
            return false;
    e->pool.cap = need - kept >= mem ? e->pool.used : mem - (need - kept);
    if (e->pool.cap < e->pool.used)
        e->pool.cap = e->pool.used;
    return true;
}

/* Half of --memory: a sort step's sorter takes the other half
 * (rm_engine_sort_budget); a join or denormalize that needs more makes
 * room first (rm_engine_stores_fit). */
void
rm_engine_stores_free (rm_engine_t *e)
{
    e->pool.cap = e->opts.memory / 2;
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

/* The last guard behind the plan's own checks (no step may write _id):
 * a document with two top-level _ids is never written. */
static bool
one_id (const uint8_t *doc, uint32_t len)
{
    rm_walk_t w;
    rm_elem_t el;
    int ids = 0;
    if (!rm_walk_init (&w, doc, len))
        return true; /* not ours to judge: the writer checks the bytes */
    while (rm_walk_next (&w, &el) > 0)
        if (rm_elem_key_is (&w, &el, "_id", 3) && ++ids > 1)
            return false;
    return true;
}

bool
rm_engine_emit (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    return rm_engine_emit_as (e, ns, doc, len, false, err);
}

/* as_read: the document's bytes are those read, no step's: the guard
 * against a written _id has nothing to judge, and a walk of every
 * document passed through would cost a third of a constant set. */
static bool emit (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bool as_read,
                  bool held, bson_error_t *err);

bool
rm_engine_emit_as (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bool as_read,
                   bson_error_t *err)
{
    return emit (e, ns, doc, len, as_read, false, err);
}

bool
rm_engine_emit_held (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len,
                     bson_error_t *err)
{
    return emit (e, ns, doc, len, true, true, err);
}

static bool
emit (rm_engine_t *e, rm_ens_t *ns, const uint8_t *doc, uint32_t len, bool as_read, bool held,
      bson_error_t *err)
{
    if (len > RM_BSON_MAX_SIZE && !ns->out->is_oplog) {
        char *id = rm_doc_id_json (doc, len);
        rm_error_set (err, RM_ERR_FORMAT, "%s: document %s would be %u bytes, over the "
                      "16 MiB limit", ns->stats->name, id, len);
        bson_free (id);
        return false;
    }
    if (!as_read && !ns->out->is_oplog && !one_id (doc, len)) {
        char *id = rm_doc_id_json (doc, len);
        rm_error_set (err, RM_ERR_DATA, "%s: document %s would hold _id twice (a step wrote "
                      "one; mongorestore would refuse it)", ns->stats->name, id);
        bson_free (id);
        return false;
    }
    ns->stats->docs_out++;
    if (e->opts.output && !e->opts.output (e->opts.output_ctx, ns->out->index, doc, len, err))
        return false;
    return !e->w || (held ? rm_writer_doc_held : rm_writer_doc) (e->w, ns->out, doc, len, err);
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
