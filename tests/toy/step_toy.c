/* A toy step, compiled only into the test build (make toy;
 * tests/cli/test_toy_step.sh): {"toy": {"in": NS, "field": NAME}} sets
 * NAME to "toy" in every document of NS. It exists to show that a step is
 * this file and its rows, under REMODEL_TOY_STEP: its row in the step
 * table (common/engine/step_table.c: its functions here, its passes
 * among them) and, above the engine, in the compiler's
 * (common/compile/compile_table.c).
 * The plan parser, check, run, the online mode and compile pick it up, or
 * refuse it, by the tables alone. */
#include <string.h>

#include "engine_impl.h"
#include "plan_parse.h"

bool
rm_plan_parse_toy (rm_plan_ctx_t *c, bson_iter_t *it, rm_step_t *s)
{
    rm_toy_t *t = &s->u.toy;
    while (bson_iter_next (it)) {
        const char *k = bson_iter_key (it);
        bool ok = true;
        if (!strcmp (k, "in"))
            ok = rm_plan_get_ns (c, it, &t->in);
        else if (!strcmp (k, "field"))
            ok = rm_plan_get_field_name (c, it, &t->field);
        if (!ok)
            return false;
    }
    return true;
}

void
rm_plan_clear_toy (rm_step_t *s)
{
    rm_plan_nsref_clear (&s->u.toy.in);
    bson_free (s->u.toy.field);
}

/* in is read and written. */
void
rm_plan_ns_toy (const rm_step_t *s, rm_step_ns_t *ns)
{
    rm_step_refs_add (&ns->reads, &s->u.toy.in, "in");
    ns->writes = ns->reads;
}

/* Store to store: each document with the field dropped where it stood
 * and set again at the end. */
bool
rm_step_toy_run (rm_engine_t *e, const rm_step_t *s, bson_error_t *err)
{
    rm_ens_t *ns = rm_engine_find (e, &s->u.toy.in);
    rm_store_t *next = rm_engine_store_new (e, ns, err);
    rm_instream_t *in = next ? rm_store_open (ns->store, err) : NULL;
    rm_frame_t fr;
    bson_t out = BSON_INITIALIZER;
    int rc = -1;
    bool ok = in != NULL;

    while (ok && (rc = rm_store_next (in, &fr, err)) > 0) {
        bson_t doc;
        if (!bson_init_static (&doc, fr.data, fr.len)) {
            rm_error_set (err, RM_ERR_FORMAT, "%s: a document that is not BSON", ns->stats->name);
            ok = false;
            break;
        }
        bson_reinit (&out);
        bson_copy_to_excluding_noinit (&doc, &out, s->u.toy.field, NULL);
        ok = BSON_APPEND_UTF8 (&out, s->u.toy.field, "toy") &&
             rm_store_add (next, bson_get_data (&out), out.len, err);
    }
    bson_destroy (&out);
    rm_instream_close (in);
    if (!ok || rc < 0) {
        rm_store_destroy (next);
        return false;
    }
    return rm_engine_store_swap (ns, next, err);
}

/* Online (remodel/passes.h): one pass over `in`, each document on its own,
 * also in place. Each result is its driver's own, with its _id: that trace
 * is all a sync from the change log needs to recompute only the documents
 * that changed (shell-ext/online_followers.c). */
size_t
rm_toy_passes (const rm_step_t *s, rm_pass_t *out, bson_error_t *err)
{
    (void) err;
    out[0].keep[out[0].n_keep] = &s->u.toy.in;
    out[0].driver_field[out[0].n_keep++] = "_id";
    return 1;
}
