/* Field steps for schema evolution: set, unset, rename, version. Each
 * document is rewritten by copying its bytes with the changes (docpath),
 * through two byte buffers reused for every document. */
#include "engine_impl.h"

void
rm_fields_scratch_init (rm_fields_scratch_t *sc)
{
    rm_buf_init (&sc->buf[0]);
    rm_buf_init (&sc->buf[1]);
}

void
rm_fields_scratch_destroy (rm_fields_scratch_t *sc)
{
    rm_buf_destroy (&sc->buf[0]);
    rm_buf_destroy (&sc->buf[1]);
}

bool
rm_fields_apply (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                 const uint8_t *doc, size_t len, const uint8_t **out, size_t *out_len,
                 bson_error_t *err)
{
    const rm_fields_t *f = &s->u.fields;

    for (size_t i = 0; i < f->n; i++) {
        rm_buf_t *b = &sc->buf[i & 1];
        bool changed = false, ok;
        switch (s->kind) {
        case RM_STEP_SET:
        case RM_STEP_VERSION:
            ok = rm_doc_set (b, doc, len, &f->paths[i], &f->raw[i], err);
            break;
        case RM_STEP_UNSET:
            ok = rm_doc_unset (b, doc, len, &f->paths[i], &changed, err);
            break;
        default:
            ok = rm_doc_rename (b, doc, len, &f->paths[i], &f->to[i], &changed, err);
            break;
        }
        if (!ok)
            return rm_doc_error (err, ns_name, "document", doc, (uint32_t) len);
        doc = b->data;
        len = b->len;
    }
    *out = doc;
    *out_len = len;
    return true;
}

bool
rm_step_fields_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_ens_t *ns = rm_engine_find (e, &s->u.fields.in);
    rm_store_t *next = rm_engine_store_new (e, ns, err);
    rm_instream_t *in;
    rm_fields_scratch_t sc;
    rm_frame_t fr;
    bool ok = true;
    int rc = 0;

    if (!next)
        return false;
    in = rm_store_open (ns->store, err);
    if (!in) {
        rm_store_destroy (next);
        return false;
    }
    rm_fields_scratch_init (&sc);
    while (ok && (rc = rm_store_next (in, &fr, err)) > 0) {
        const uint8_t *doc;
        size_t len;
        ok = rm_fields_apply (&sc, s, ns->stats->name, fr.data, fr.len, &doc, &len, err) &&
             rm_store_add (next, doc, (uint32_t) len, err);
    }
    if (rc < 0)
        ok = false;
    rm_fields_scratch_destroy (&sc);
    rm_instream_close (in);
    if (!ok) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (ns, next, err);
}
