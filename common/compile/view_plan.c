/* remodel compile --format views (remodel/compile.h): the plan undone from
 * its last step back (view_def.h), then a `create` command per namespace
 * a step changed that existed before the plan, a line each:
 *
 *   {"db": DB, "command": {"create": "COLL_before", "viewOn": C,
 *                          "pipeline": [...]}}
 *
 * The view is named apart (COLL_before) so that it can be created while
 * COLL still holds the new design's documents, or the orphans it reads. */
#include <string.h>

#include "view_def.h"

/* Undoes s: its kind's inverse, or the kind's refusal for every namespace
 * it wrote; the namespaces it created held nothing before it. */
static void
undo_step (rm_views_t *vs, const rm_step_t *s)
{
    const rm_view_kind_t *k = (unsigned) s->kind < RM_STEP_N_KINDS ? &rm_view_kinds[s->kind] : NULL;
    const rm_nsref_t *ns[8];
    const char *keys[8];
    size_t n;

    vs->s = s;
    if (k && k->view) {
        k->view (vs, s);
    } else {
        n = rm_step_outputs (s, ns, 8);
        for (size_t i = 0; i < n; i++)
            rm_views_refuse (vs, rm_views_get (vs, ns[i]), "%s",
                             k && k->refusal ? k->refusal : "not a step remodel knows");
    }
    n = rm_step_creates (s, ns, keys, 8);
    for (size_t i = 0; i < n; i++)
        rm_views_absent (rm_views_get (vs, ns[i]));
}

static void
put_command (rm_buf_t *b, const rm_view_def_t *d, bool canonical)
{
    const char *dot = strchr (d->ns, '.');
    char *name = bson_strdup_printf ("%s_before", dot + 1);
    bson_t *line = bson_new (), cmd;
    char *db = bson_strndup (d->ns, (size_t) (dot - d->ns));

    BSON_APPEND_UTF8 (line, "db", db);
    BSON_APPEND_DOCUMENT_BEGIN (line, "command", &cmd);
    BSON_APPEND_UTF8 (&cmd, "create", name);
    BSON_APPEND_UTF8 (&cmd, "viewOn", d->coll);
    BSON_APPEND_ARRAY (&cmd, "pipeline", &d->pipeline);
    bson_append_document_end (line, &cmd);
    rm_compile_put_line (b, line, canonical);
    bson_destroy (line);
    bson_free (db);
    bson_free (name);
}

char *
rm_compile_print_views (const rm_plan_t *plan, rm_compile_version_t v, bool canonical,
                        char **refusals)
{
    rm_views_t vs = {.version = v};
    rm_buf_t out, why;

    rm_buf_init (&out);
    rm_buf_init (&why);
    /* Registered in the plan's order, so that views print in it. */
    for (size_t i = 0; i < plan->n; i++) {
        const rm_nsref_t *ns[8];
        size_t n = rm_step_inputs (&plan->steps[i], ns, 4);
        n += rm_step_outputs (&plan->steps[i], ns + n, 4);
        for (size_t k = 0; k < n; k++)
            rm_views_get (&vs, ns[k]);
    }
    for (size_t i = plan->n; i-- > 0;)
        undo_step (&vs, &plan->steps[i]);
    for (size_t i = 0; i < vs.n; i++) {
        const rm_view_def_t *d = &vs.defs[i];
        const char *dot = strchr (d->ns, '.');
        if (!d->changed || (!d->coll && !d->why))
            continue; /* unchanged, or made by the plan: no old shape */
        if (!d->why && (strncmp (d->ns, d->db, (size_t) (dot - d->ns)) != 0 ||
                        d->db[dot - d->ns] != '\0')) {
            rm_compile_put (&why, "no view of ");
            rm_compile_put (&why, d->ns);
            rm_compile_put (&why, ": its documents are now in another database\n");
        } else if (d->why) {
            rm_compile_put (&why, "no view of ");
            rm_compile_put (&why, d->ns);
            rm_compile_put (&why, ": ");
            rm_compile_put (&why, d->why);
            rm_compile_put (&why, "\n");
        } else {
            put_command (&out, d, canonical);
        }
    }
    rm_views_destroy (&vs);
    rm_buf_append (&out, "", 1);
    rm_buf_append (&why, "", 1);
    *refusals = (char *) why.data;
    return (char *) out.data;
}
