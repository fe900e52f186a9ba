/* Field steps for schema evolution: set, unset, rename, version. Each
 * document is rewritten by copying its bytes with the changes (docpath),
 * through two buffers reused for every document. */
#include "engine_impl.h"

bool
rm_step_fields_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    const rm_fields_t *f = &s->u.fields;
    rm_ens_t *ns = rm_engine_find (e, &f->in);
    rm_store_t *next = rm_engine_store_new (e, ns, err);
    rm_instream_t *in;
    bson_t buf[2];
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
    bson_init (&buf[0]);
    bson_init (&buf[1]);
    while (ok && (rc = rm_store_next (in, &fr, err)) > 0) {
        const uint8_t *doc = fr.data;
        size_t len = fr.len;
        for (size_t i = 0; ok && i < f->n; i++) {
            bson_t *out = &buf[i & 1];
            bool changed = false;
            bson_reinit (out);
            switch (s->kind) {
            case RM_STEP_SET:
            case RM_STEP_VERSION:
                ok = rm_doc_set (out, doc, len, &f->paths[i], &f->values[i], err);
                break;
            case RM_STEP_UNSET:
                ok = rm_doc_unset (out, doc, len, &f->paths[i], &changed, err);
                break;
            default:
                ok = rm_doc_rename (out, doc, len, &f->paths[i], &f->to[i], &changed, err);
                break;
            }
            if (!ok) {
                char *id = rm_doc_id_json (doc, (uint32_t) len);
                rm_error_prefix (err, "%s: document %s", ns->stats->name, id);
                bson_free (id);
                break;
            }
            doc = bson_get_data (out);
            len = out->len;
        }
        if (ok)
            ok = rm_store_add (next, doc, (uint32_t) len, err);
    }
    if (rc < 0)
        ok = false;
    bson_destroy (&buf[0]);
    bson_destroy (&buf[1]);
    rm_instream_close (in);
    if (!ok) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (ns, next, err);
}
