/* --hints: what a dump cannot show, told by the people who run the
 * application (remodel/analyze.h): which collections are read together,
 * which are read or updated on their own (a collection "db.coll", or the
 * elements of an array "db.coll.path"), read-to-write ratios. They settle
 * what a recommendation depends on (analyze_recommend.c,
 * analyze_extref.c, analyze_recommend_coll.c). */
#include <string.h>

#include "analyze_int.h"

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
