/* What copy and move do to the indexes (remodel/indexes.h): `to` gets
 * those of `from` (its _id index it has already), each under its name,
 * except one whose key names a field project drops or fields rewrites
 * (the values it indexed are not the copies'). `from` keeps its own. */
#include <string.h>

#include "step_class.h"

/* One line, as index_follow.c writes them: "NS: index \"NAME\": WHAT
 * (step N, OP)". */
static void
say (rm_ixplan_t *p, const rm_step_t *s, const char *ns, const char *index, const char *what,
     const char *arg)
{
    char *text;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    text = bson_strdup_printf (what, arg); /* what: one of this file's, with one %s */
#pragma GCC diagnostic pop
    p->changes = bson_realloc (p->changes, (p->n_changes + 1) * sizeof *p->changes);
    p->changes[p->n_changes++] =
        bson_strdup_printf ("%s: index \"%s\": %s (step %zu, %s)", ns, index, text, s->index, s->op);
    bson_free (text);
}

static const char *
spec_str (const bson_t *spec, const char *key)
{
    bson_iter_t it;
    if (bson_iter_init_find (&it, spec, key) && BSON_ITER_HOLDS_UTF8 (&it))
        return bson_iter_utf8 (&it, NULL);
    return NULL;
}

/* Whether path is f or under it, or f under path. */
static bool
overlaps (const char *path, const char *f)
{
    size_t a = strlen (path), b = strlen (f), n = a < b ? a : b;
    return !strncmp (path, f, n) && (path[n] == '\0' || path[n] == '.') &&
           (f[n] == '\0' || f[n] == '.');
}

/* The first field of spec's key the copies do not hold as `from` did
 * (NULL: none). A text index's key names _fts: its weights' fields. */
static const char *
lost_field (const rm_copy_t *x, const bson_t *spec)
{
    const char *keys[] = {"key", "weights"};
    for (size_t k = 0; k < 2; k++) {
        bson_iter_t it, sub;
        if (!bson_iter_init_find (&it, spec, keys[k]) || !BSON_ITER_HOLDS_DOCUMENT (&it) ||
            !bson_iter_recurse (&it, &sub))
            continue;
        while (bson_iter_next (&sub)) {
            const char *f = bson_iter_key (&sub);
            char top[256];
            size_t n = strcspn (f, ".");
            if (!strncmp (f, "_fts", 4))
                continue;
            snprintf (top, sizeof top, "%.*s", (int) n, f);
            if (x->project) {
                bool listed = false;
                for (size_t i = 0; i < x->n_proj && !listed; i++)
                    listed = !strcmp (x->proj[i], top);
                if (listed != x->project_inclusive && strcmp (top, "_id"))
                    return f;
            }
            for (size_t i = 0; x->set && i < rm_expr_set_count (x->set); i++)
                if (overlaps (rm_expr_set_path (x->set, i), f))
                    return f;
        }
    }
    return NULL;
}

/* spec under to's name (its "ns", where it has one, rewritten). */
static bson_t *
spec_for (const bson_t *spec, const char *to)
{
    bson_t *out = bson_new ();
    bson_iter_t it;
    bson_iter_init (&it, spec);
    while (bson_iter_next (&it)) {
        if (!strcmp (bson_iter_key (&it), "ns"))
            BSON_APPEND_UTF8 (out, "ns", to);
        else
            bson_append_iter (out, NULL, 0, &it);
    }
    return out;
}

void
rm_copy_indexes (const rm_step_t *s, rm_ixplan_t *p)
{
    const rm_copy_t *x = &s->u.copy;
    rm_ixns_t *from, *to;
    if (s->kind == RM_STEP_DELETE)
        return;
    from = rm_ixplan_find (p, x->from.text);
    to = rm_ixplan_find (p, x->to.text);
    if (!from || !to || from == to || !from->known)
        return;
    for (size_t i = 0; i < from->n; i++) {
        const bson_t *spec = from->specs[i];
        const char *name = spec_str (spec, "name"), *lost = lost_field (x, spec);
        bool taken = false;
        if (!name || !strcmp (name, "_id_"))
            continue;
        for (size_t j = 0; j < to->n && !taken; j++)
            taken = spec_str (to->specs[j], "name") && !strcmp (spec_str (to->specs[j], "name"), name);
        if (!to->known)
            say (p, s, from->ns, name, "not carried to %s, which has no metadata", to->ns);
        else if (lost)
            say (p, s, from->ns, name, "not carried: the copies do not hold \"%s\" as it is "
                 "(project drops it or fields rewrites it)", lost);
        else if (taken)
            say (p, s, from->ns, name, "not carried: %s has an index of that name", to->ns);
        if (!to->known || lost || taken)
            continue;
        if (to->n == to->cap) {
            to->cap = to->cap ? 2 * to->cap : 4;
            to->specs = bson_realloc (to->specs, to->cap * sizeof *to->specs);
        }
        to->specs[to->n++] = spec_for (spec, to->ns);
        to->changed = true;
        say (p, s, to->ns, name, "carried from %s", from->ns);
    }
}
