/* The plan's identity on the server, and where each namespace's documents
 * are as a plan runs side by side (remodel/names.h): a step reads its
 * inputs where the steps before it left them and writes its outputs to
 * new collections of its own, so no collection is ever read and rewritten
 * by one step, a replayed batch only upserts the same documents again,
 * and the sources stay as they were. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remodel/crc64.h"
#include "remodel/fuse.h"
#include "remodel/names.h"
#include "remodel/passes.h"
#include "remodel/sha1.h"

const char *
rm_name_now (const rm_names_t *nm, const rm_nsref_t *ref)
{
    for (size_t i = nm->n_moved; i-- > 0;)
        if (strcmp (nm->moved[i].ns, ref->text) == 0)
            return nm->moved[i].coll;
    return ref->coll;
}

static void
make_id (rm_names_t *nm)
{
    const char *base = strrchr (nm->path, '/');
    unsigned char sha[20];
    size_t n, at;

    base = base ? base + 1 : nm->path;
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
        nm->id[at] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                             c == '-' || c == '_'
                         ? (char) c
                         : '_';
    }
    /* The full path makes the name unique: v1.2.json and v1_2.json, or
     * a.json in two folders, share the stem but not the hash. */
    rm_sha1 (nm->path, strlen (nm->path), sha);
    snprintf (nm->id + at, sizeof nm->id - at, "_%02x%02x%02x%02x%02x%02x", sha[0], sha[1], sha[2],
              sha[3], sha[4], sha[5]);
}

void
rm_names_identify (rm_names_t *nm, const char *plan_path)
{
    FILE *f;
    char buf[65536];
    size_t n;
    uint64_t crc = 0;
    const char *base = strrchr (plan_path, '/');

    memset (nm, 0, sizeof *nm);
    f = fopen (plan_path, "rb");
    while (f && (n = fread (buf, 1, sizeof buf, f)) > 0)
        crc = rm_crc64_update (crc, buf, n);
    if (f)
        fclose (f);
    snprintf (nm->digest, sizeof nm->digest, "%016llx", (unsigned long long) crc);
    snprintf (nm->name, sizeof nm->name, "%s", base ? base + 1 : plan_path);
    if (!realpath (plan_path, nm->path))
        snprintf (nm->path, sizeof nm->path, "%s", plan_path);
    make_id (nm);
}

/* The step number last: a backup name ends in "_backup", a result's in
 * digits, and the id is the same length of hex in both, so no plan's
 * result is another's (or its own) backup. */
/* Whether s is a step of the plan nm fuses (not another plan's, such as
 * an inverse built for a rollback). */
static bool
fused_step (const rm_names_t *nm, const rm_step_t *s)
{
    return nm->fused && s->index >= 1 && s->index <= nm->fused->n &&
           &nm->fused->steps[s->index - 1] == s;
}

void
rm_name_target (const rm_names_t *nm, const rm_step_t *s, const rm_nsref_t *ref, char *buf,
                size_t cap)
{
    size_t index = s->index;
    if (fused_step (nm, s)) {
        size_t first, n = rm_plan_run (nm->fused, s->index - 1, &first);
        index = nm->fused->steps[first + n - 1].index;
    }
    snprintf (buf, cap, "%s_remodel_%s_%zu", ref->coll, nm->id, index);
}

void
rm_name_backup (const rm_names_t *nm, const char *coll, char *buf, size_t cap)
{
    snprintf (buf, cap, "%s_remodel_%s_backup", coll, nm->id);
}

void
rm_name_inplace_backup (const rm_names_t *nm, const rm_step_t *s, char *buf, size_t cap)
{
    snprintf (buf, cap, "backup.%s.%zu", nm->id, s->index);
}

void
rm_name_move (rm_names_t *nm, const rm_nsref_t *ref, const char *coll)
{
    nm->moved = bson_realloc (nm->moved, (nm->n_moved + 1) * sizeof *nm->moved);
    nm->moved[nm->n_moved].ns = bson_strdup (ref->text);
    nm->moved[nm->n_moved].coll = bson_strdup (coll);
    nm->n_moved++;
}

void
rm_name_move_step (rm_names_t *nm, const rm_step_t *s, const rm_nsref_t *const *targets, size_t nt)
{
    for (size_t t = 0; t < nt; t++) {
        char name[400];
        rm_name_target (nm, s, targets[t], name, sizeof name);
        rm_name_move (nm, targets[t], name);
    }
}

size_t
rm_names_run (const rm_names_t *nm, size_t i)
{
    size_t first, n;
    if (!nm->fused || i >= nm->fused->n)
        return 1;
    n = rm_plan_run (nm->fused, i, &first);
    return first == i ? n : 0;
}

void
rm_names_label (const rm_names_t *nm, const rm_step_t *s, char *buf, size_t cap)
{
    size_t n = fused_step (nm, s) ? rm_names_run (nm, s->index - 1) : 1, at;
    if (n <= 1) {
        snprintf (buf, cap, "step %zu (%s)", s->index, s->op);
        return;
    }
    at = (size_t) snprintf (buf, cap, "steps %zu-%zu (", s->index, s[n - 1].index);
    for (size_t k = 0; k < n && at < cap; k++)
        at += (size_t) snprintf (buf + at, cap - at, "%s%s", k ? ", " : "", s[k].op);
    if (at < cap)
        snprintf (buf + at, cap - at, ")");
}

bool
rm_names_last (const rm_names_t *nm, size_t i)
{
    for (size_t k = i + 1; k < nm->n_moved; k++)
        if (!strcmp (nm->moved[k].ns, nm->moved[i].ns))
            return false;
    return true;
}

void
rm_names_clear (rm_names_t *nm)
{
    for (size_t i = 0; i < nm->n_moved; i++) {
        bson_free (nm->moved[i].ns);
        bson_free (nm->moved[i].coll);
    }
    bson_free (nm->moved);
    nm->moved = NULL;
    nm->n_moved = 0;
}

bool
rm_names_of_plan (rm_names_t *nm, const rm_plan_t *plan, bson_error_t *err)
{
    rm_names_clear (nm);
    for (size_t i = 0; i < plan->n; i++) {
        const rm_step_t *s = &plan->steps[i];
        rm_pass_t passes[RM_MAX_PASSES];
        const rm_nsref_t *targets[8];
        size_t np = rm_step_passes (s, false, passes, err), first;
        if (!np)
            return false;
        if (nm->fused && (rm_plan_run (nm->fused, i, &first), first != i))
            continue;
        rm_name_move_step (nm, s, targets, rm_step_targets (s, passes, np, targets));
    }
    return true;
}
