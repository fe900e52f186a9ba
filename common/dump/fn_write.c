/* A writer that hands documents to a function (rm_writer_open_fn): the
 * engine's output for a batch of the online companion, with no file. */
#include "writer_impl.h"

typedef struct {
    rm_writer_fn fn;
    void *ctx;
} fnwrite_t;

static bool
fn_open (rm_writer_t *w, bson_error_t *err)
{
    return true;
}

static bool
fn_doc (rm_writer_t *w, rm_ns_t *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    fnwrite_t *f = w->impl;
    return f->fn (f->ctx, ns, doc, len, err);
}

static bool
fn_ns_end (rm_writer_t *w, rm_ns_t *ns, bson_error_t *err)
{
    return true;
}

static bool
fn_finish (rm_writer_t *w, bson_error_t *err)
{
    return true;
}

static void
fn_destroy (rm_writer_t *w)
{
    bson_free (w->impl);
    w->impl = NULL;
}

static const rm_writer_ops_t fn_ops = {fn_open, fn_doc, fn_ns_end, fn_finish, fn_destroy, NULL};

rm_writer_t *
rm_writer_open_fn (rm_dump_info_t *info, rm_writer_fn fn, void *ctx)
{
    rm_writer_t *w = bson_malloc0 (sizeof *w);
    fnwrite_t *f = bson_malloc0 (sizeof *f);
    f->fn = fn;
    f->ctx = ctx;
    w->ops = &fn_ops;
    w->impl = f;
    w->dst = bson_strdup ("<batch>");
    w->info = info;
    for (size_t i = 0; i < info->n_ns; i++) {
        info->ns[i]->docs = info->ns[i]->bytes = info->ns[i]->crc = 0;
        info->ns[i]->ended = false;
    }
    return w;
}
