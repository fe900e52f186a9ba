/* Where each namespace's documents are as a plan runs side by side
 * (online.h): a step reads its inputs where the steps before it left them
 * and writes its outputs to new collections of its own, so no collection
 * is ever read and rewritten by one step, a replayed batch only upserts
 * the same documents again, and the sources stay as they were. */
#include <stdio.h>
#include <string.h>

#include "online.h"

const char *
online_name_now (const online_t *on, const rm_nsref_t *ref)
{
    for (size_t i = on->n_names; i-- > 0;)
        if (strcmp (on->names[i].ns, ref->text) == 0)
            return on->names[i].coll;
    return ref->coll;
}

void
online_plan_stem (const online_t *on, char *buf, size_t cap)
{
    size_t n;
    snprintf (buf, cap, "%s", on->name);
    n = strlen (buf);
    if (n > 5 && strcmp (buf + n - 5, ".json") == 0)
        buf[n - 5] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '.')
            *p = '_';
}

/* No dot of our own in the names: FerretDB 1.x renames no collection
 * whose name has one (finalize renames these). */
void
online_name_target (const online_t *on, const rm_step_t *s, const rm_nsref_t *ref, char *buf,
                    size_t cap)
{
    char plan[256];
    online_plan_stem (on, plan, sizeof plan);
    snprintf (buf, cap, "%s_remodel_%s_%zu", ref->coll, plan, s->index);
}

void
online_name_move (online_t *on, const rm_nsref_t *ref, const char *coll)
{
    on->names = bson_realloc (on->names, (on->n_names + 1) * sizeof *on->names);
    on->names[on->n_names].ns = bson_strdup (ref->text);
    on->names[on->n_names].coll = bson_strdup (coll);
    on->n_names++;
}

void
online_names_destroy (online_t *on)
{
    for (size_t i = 0; i < on->n_names; i++) {
        bson_free (on->names[i].ns);
        bson_free (on->names[i].coll);
    }
    bson_free (on->names);
    on->names = NULL;
    on->n_names = 0;
}
