/* The plan's identity on the server, and where each namespace's documents
 * are as a plan runs side by side (online.h): a step reads its inputs where the steps before it left them
 * and writes its outputs to new collections of its own, so no collection
 * is ever read and rewritten by one step, a replayed batch only upserts
 * the same documents again, and the sources stay as they were. */
#include <stdio.h>
#include <string.h>

#include "online.h"
#include "remodel/nsname.h"
#include "remodel/sha1.h"

const char *
online_name_now (const online_t *on, const rm_nsref_t *ref)
{
    for (size_t i = on->n_names; i-- > 0;)
        if (strcmp (on->names[i].ns, ref->text) == 0)
            return on->names[i].coll;
    return ref->coll;
}

void
online_plan_identify (online_t *on)
{
    const char *base = strrchr (on->path, '/');
    unsigned char sha[20];
    size_t n, at;

    base = base ? base + 1 : on->path;
    n = strlen (base);
    if (n > 5 && strcmp (base + n - 5, ".json") == 0)
        n -= 5;
    /* Short enough that COLL_remodel_ID_STEP fits a namespace for any
     * reasonable COLL; no dot (FerretDB 1.x renames no collection whose
     * name has one), no regex or path metacharacter, no ':' or '#' (the
     * checkpoints' and fences' separators). */
    if (n > 40)
        n = 40;
    for (at = 0; at < n; at++) {
        unsigned char c = (unsigned char) base[at];
        on->id[at] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                             c == '-' || c == '_'
                         ? (char) c
                         : '_';
    }
    /* The full path makes the name unique: v1.2.json and v1_2.json, or
     * a.json in two folders, share the stem but not the hash. */
    rm_sha1 (on->path, strlen (on->path), sha);
    snprintf (on->id + at, sizeof on->id - at, "_%02x%02x%02x%02x%02x%02x", sha[0], sha[1], sha[2],
              sha[3], sha[4], sha[5]);
}

/* The step number last: a backup name ends in "_backup", a result's in
 * digits, and the id is the same length of hex in both, so no plan's
 * result is another's (or its own) backup. */
void
online_name_target (const online_t *on, const rm_step_t *s, const rm_nsref_t *ref, char *buf,
                    size_t cap)
{
    snprintf (buf, cap, "%s_remodel_%s_%zu", ref->coll, on->id, s->index);
}

void
online_name_backup (const online_t *on, const char *coll, char *buf, size_t cap)
{
    snprintf (buf, cap, "%s_remodel_%s_backup", coll, on->id);
}

void
online_name_inplace_backup (const online_t *on, const rm_step_t *s, char *buf, size_t cap)
{
    snprintf (buf, cap, "backup.%s.%zu", on->id, s->index);
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
