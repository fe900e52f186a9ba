/* --hints: what a dump cannot show, told by the people who run the
 * application (remodel/analyze.h): which collections are read together,
 * which are read or updated on their own (a collection "db.coll", or the
 * elements of an array "db.coll.path"), read-to-write ratios. They settle
 * what a recommendation depends on (analyze_recommend.c,
 * analyze_extref.c, analyze_recommend_coll.c). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyze_int.h"
#include "remodel/cli.h"

/* An array of names, each "db.coll" or longer ("db.coll.path"): a name
 * without a database could match nothing, silently. */
static bool
all_names (const bson_iter_t *arr)
{
    bson_iter_t e;
    if (!BSON_ITER_HOLDS_ARRAY (arr) || !bson_iter_recurse (arr, &e))
        return false;
    while (bson_iter_next (&e)) {
        const char *s = BSON_ITER_HOLDS_UTF8 (&e) ? bson_iter_utf8 (&e, NULL) : NULL;
        const char *dot = s ? strchr (s, '.') : NULL;
        if (!dot || dot == s || !dot[1])
            return false;
    }
    return true;
}

bool
rm_analyze_hints_check (const bson_t *hints, bson_error_t *err)
{
    bson_iter_t it, e;
    bson_iter_init (&it, hints);
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        bool ok;
        if (!strcmp (k, "readAlone") || !strcmp (k, "updatedAlone")) {
            ok = all_names (&it);
        } else if (!strcmp (k, "readTogether")) {
            ok = BSON_ITER_HOLDS_ARRAY (&it) && bson_iter_recurse (&it, &e);
            while (ok && bson_iter_next (&e))
                ok = all_names (&e);
        } else if (!strcmp (k, "readWriteRatio")) {
            ok = BSON_ITER_HOLDS_DOCUMENT (&it) && bson_iter_recurse (&it, &e);
            while (ok && bson_iter_next (&e))
                ok = BSON_ITER_HOLDS_NUMBER (&e);
        } else if (!strcmp (k, "references")) {
            /* {"db.coll.field": "db.coll.key" or null}: a relationship
             * confirmed, or every one from that field rejected. */
            ok = BSON_ITER_HOLDS_DOCUMENT (&it) && bson_iter_recurse (&it, &e);
            while (ok && bson_iter_next (&e)) {
                const char *name = bson_iter_key (&e), *to;
                const char *d1 = strchr (name, '.'), *d2 = d1 ? strchr (d1 + 1, '.') : NULL;
                ok = d2 && d1 != name && d2 != d1 + 1 && d2[1];
                if (ok && !BSON_ITER_HOLDS_NULL (&e)) {
                    to = BSON_ITER_HOLDS_UTF8 (&e) ? bson_iter_utf8 (&e, NULL) : NULL;
                    d1 = to ? strchr (to, '.') : NULL;
                    d2 = d1 ? strchr (d1 + 1, '.') : NULL;
                    ok = d2 && d1 != to && d2 != d1 + 1 && d2[1];
                }
            }
        } else {
            rm_error_set (err, RM_ERR_USAGE, "hints: \"%s\": unknown key (hints take readTogether, "
                          "readAlone, updatedAlone, readWriteRatio, references)", k);
            return false;
        }
        if (!ok) {
            rm_error_set (err, RM_ERR_USAGE, "hints: \"%s\": must be %s", k,
                          !strcmp (k, "readTogether") ? "an array of arrays of namespaces (db.coll)"
                          : !strcmp (k, "readWriteRatio")
                              ? "a document {namespace: number}"
                          : !strcmp (k, "references")
                              ? "a document {\"db.coll.field\": \"db.coll.key\" or null}"
                              : "an array of namespaces (db.coll, or db.coll.path for the elements "
                                "of an array)");
            return false;
        }
    }
    return true;
}

bool
rm_hints_lists (const bson_t *hints, const char *key, const char *ns)
{
    bson_iter_t it, e;
    if (!hints || !bson_iter_init_find (&it, hints, key) || !bson_iter_recurse (&it, &e))
        return false;
    while (bson_iter_next (&e))
        if (BSON_ITER_HOLDS_UTF8 (&e) && !strcmp (bson_iter_utf8 (&e, NULL), ns))
            return true;
    return false;
}

bool
rm_hints_together (const bson_t *hints, const char *a, const char *b)
{
    bson_iter_t it, g, e;
    if (!hints || !bson_iter_init_find (&it, hints, "readTogether") || !bson_iter_recurse (&it, &g))
        return false;
    while (bson_iter_next (&g)) {
        bool has_a = false, has_b = false;
        if (!bson_iter_recurse (&g, &e))
            continue;
        while (bson_iter_next (&e)) {
            has_a |= !strcmp (bson_iter_utf8 (&e, NULL), a);
            has_b |= !strcmp (bson_iter_utf8 (&e, NULL), b);
        }
        if (has_a && has_b)
            return true;
    }
    return false;
}

bool
rm_hints_ratio (const bson_t *hints, const char *ns, double *ratio)
{
    bson_iter_t it, e;
    if (!hints || !bson_iter_init_find (&it, hints, "readWriteRatio") || !bson_iter_recurse (&it, &e) ||
        !bson_iter_find (&e, ns))
        return false;
    *ratio = bson_iter_as_double (&e);
    return true;
}

/* The collection name begins with (name itself, or name up to a '.'
 * that a path follows), or NULL. */
static const rm_collection_t *
collection_of (const rm_analysis_t *a, const char *name, const char **rest)
{
    for (size_t i = 0; i < a->n_cols; i++) {
        size_t n = strlen (a->cols[i].ns);
        if (!strncmp (name, a->cols[i].ns, n) && (name[n] == '\0' || name[n] == '.')) {
            *rest = name[n] ? name + n + 1 : "";
            return &a->cols[i];
        }
    }
    return NULL;
}

/* One note for a name of hints[key] that meets nothing of the analysis:
 * with_field, a "db.coll.field" whose field must be there too. */
static void
check_name (const rm_analysis_t *a, const char *key, const char *name, bool with_field,
            bson_t *out, uint32_t *n)
{
    const char *rest = "", *close = NULL;
    const rm_collection_t *c = collection_of (a, name, &rest);
    char note[800], idx[16];
    const char *kp;
    size_t kl, best = SIZE_MAX;

    if (c && with_field && *rest) {
        for (size_t f = 0; f < c->n_fields; f++)
            if (!strcmp (c->fields[f].path, rest))
                return;
        for (size_t f = 0; f < c->n_fields; f++) {
            size_t d = rm_cli_distance (rest, c->fields[f].path);
            if (d < best && d <= 3)
                best = d, close = c->fields[f].path;
        }
        snprintf (note, sizeof note, "hints: \"%s\" (%s): %s has no field \"%s\"%s%s%s", name, key,
                  c->ns, rest, close ? "; did you mean \"" : "", close ? close : "",
                  close ? "\"?" : "");
    } else if (c) {
        return;
    } else {
        char ns[400];
        const char *d1 = strchr (name, '.'), *d2 = d1 ? strchr (d1 + 1, '.') : NULL;
        size_t nl = d2 && (with_field || strlen (name) > (size_t) (d2 - name)) ? (size_t) (d2 - name)
                                                                               : strlen (name);
        snprintf (ns, sizeof ns, "%.*s", (int) nl, name);
        for (size_t i = 0; i < a->n_cols; i++) {
            size_t d = rm_cli_distance (ns, a->cols[i].ns);
            if (d < best && d <= 3)
                best = d, close = a->cols[i].ns;
        }
        snprintf (note, sizeof note, "hints: \"%s\" (%s) names no collection this analysis read "
                  "(not in the dump, or left out by --ns), so it does nothing%s%s%s", name, key,
                  close ? "; did you mean \"" : "", close ? close : "", close ? "\"?" : "");
    }
    kl = bson_uint32_to_string ((*n)++, &kp, idx, sizeof idx);
    bson_append_utf8 (out, kp, (int) kl, note, -1);
}

void
rm_analysis_hint_notes (const rm_analysis_t *a, bson_t *out)
{
    bson_iter_t it, e, g;
    uint32_t n = 0;

    if (!a->hints || !bson_iter_init (&it, a->hints))
        return;
    while (bson_iter_next (&it)) {
        const char *k = bson_iter_key (&it);
        if (!bson_iter_recurse (&it, &e))
            continue;
        while (bson_iter_next (&e)) {
            if (!strcmp (k, "readTogether")) {
                if (bson_iter_recurse (&e, &g))
                    while (bson_iter_next (&g))
                        if (BSON_ITER_HOLDS_UTF8 (&g))
                            check_name (a, k, bson_iter_utf8 (&g, NULL), false, out, &n);
            } else if (!strcmp (k, "readWriteRatio")) {
                check_name (a, k, bson_iter_key (&e), false, out, &n);
            } else if (!strcmp (k, "references")) {
                check_name (a, k, bson_iter_key (&e), true, out, &n);
                if (BSON_ITER_HOLDS_UTF8 (&e))
                    check_name (a, k, bson_iter_utf8 (&e, NULL), true, out, &n);
            } else if (BSON_ITER_HOLDS_UTF8 (&e)) {
                check_name (a, k, bson_iter_utf8 (&e, NULL), false, out, &n);
            }
        }
    }
}
