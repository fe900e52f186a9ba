/* The readers the steps' plan parsers share (plan_parse.h): each reads
 * one key's value and, when it is wrong, says which step and key and why. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan_parse.h"
#include "probe.h"
#include "remodel/nsname.h"

bool BSON_GNUC_PRINTF (3, 4)
rm_plan_fail (rm_plan_ctx_t *c, const char *key, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (why, sizeof why, fmt, ap);
    va_end (ap);
    if (key)
        rm_error_set (c->err, RM_ERR_USAGE, "plan: step %zu (%s): \"%s\": %s", c->index, c->op,
                      key, why);
    else
        rm_error_set (c->err, RM_ERR_USAGE, "plan: step %zu (%s): %s", c->index, c->op, why);
    return false;
}

const char *
rm_plan_did_you_mean (const char *given, const char *const *names, size_t n, char *buf, size_t cap)
{
    const char *close[1];
    if (rm_closest_names (given, (char *const *) names, n, close, 1))
        snprintf (buf, cap, ": did you mean \"%s\"?", close[0]);
    else if (cap)
        buf[0] = '\0';
    return buf;
}

const char *
rm_plan_type_name (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_UTF8: return "a string";
    case BSON_TYPE_DOCUMENT: return "a document";
    case BSON_TYPE_ARRAY: return "an array";
    case BSON_TYPE_BOOL: return "a boolean";
    case BSON_TYPE_NULL: return "null";
    case BSON_TYPE_INT32:
    case BSON_TYPE_INT64:
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DECIMAL128: return "a number";
    default: return "another type";
    }
}

bool
rm_plan_get_string (rm_plan_ctx_t *c, const bson_iter_t *it, const char **out)
{
    if (!BSON_ITER_HOLDS_UTF8 (it))
        return rm_plan_fail (c, bson_iter_key (it), "must be a string, not %s",
                             rm_plan_type_name (bson_iter_type (it)));
    uint32_t len;
    *out = bson_iter_utf8 (it, &len);
    if (!**out && len == 0)
        return rm_plan_fail (c, bson_iter_key (it), "must not be empty");
    if (strlen (*out) != len)
        return rm_plan_fail (c, bson_iter_key (it), "must not hold a NUL byte");
    return true;
}

bool
rm_plan_get_int (rm_plan_ctx_t *c, const bson_iter_t *it, int64_t min, int64_t *out)
{
    if (!BSON_ITER_HOLDS_INT32 (it) && !BSON_ITER_HOLDS_INT64 (it) &&
        !(BSON_ITER_HOLDS_DOUBLE (it) && bson_iter_double (it) == (double) (int64_t) bson_iter_double (it)))
        return rm_plan_fail (c, bson_iter_key (it), "must be a whole number, not %s",
                             rm_plan_type_name (bson_iter_type (it)));
    *out = bson_iter_as_int64 (it);
    if (*out < min)
        return rm_plan_fail (c, bson_iter_key (it), "must be at least %lld", (long long) min);
    return true;
}

bool
rm_plan_get_bool (rm_plan_ctx_t *c, const bson_iter_t *it, bool *out)
{
    if (!BSON_ITER_HOLDS_BOOL (it))
        return rm_plan_fail (c, bson_iter_key (it), "must be true or false, not %s",
                             rm_plan_type_name (bson_iter_type (it)));
    *out = bson_iter_bool (it);
    return true;
}

bool
rm_plan_get_ns (rm_plan_ctx_t *c, const bson_iter_t *it, rm_nsref_t *ns)
{
    const char *text, *dot;
    if (!rm_plan_get_string (c, it, &text))
        return false;
    dot = strchr (text, '.');
    if (!dot || dot == text || !dot[1])
        return rm_plan_fail (c, bson_iter_key (it), "\"%.60s%s\" is not a namespace (db.collection)",
                             text, strlen (text) > 60 ? "..." : "");
    /* MongoDB's limits, so that compile and check refuse what no server
     * (nor mongorestore) takes, not only run, which finds it nowhere. */
    if (dot - text > 63 || strlen (text) > 255)
        return rm_plan_fail (c, bson_iter_key (it),
                             "\"%.60s...\" (%zu bytes): %s", text, strlen (text),
                             dot - text > 63 ? "a database name is at most 63 bytes"
                                             : "a namespace is at most 255 bytes");
    ns->text = bson_strdup (text);
    ns->db = bson_strndup (text, (size_t) (dot - text));
    ns->coll = bson_strdup (dot + 1);
    {
        char why[160];
        if (!rm_nsname_check (ns->db, ns->coll, why, sizeof why))
            return rm_plan_fail (c, bson_iter_key (it), "\"%s\": %s", text, why);
    }
    return true;
}

bool
rm_plan_get_path (rm_plan_ctx_t *c, const bson_iter_t *it, rm_path_t *p)
{
    const char *text;
    bson_error_t perr;
    if (!rm_plan_get_string (c, it, &text))
        return false;
    if (!rm_path_parse (p, text, &perr))
        return rm_plan_fail (c, bson_iter_key (it), "%s", perr.message);
    return true;
}

bool
rm_plan_get_field_name (rm_plan_ctx_t *c, const bson_iter_t *it, char **out)
{
    const char *text;
    if (!rm_plan_get_string (c, it, &text))
        return false;
    if (strchr (text, '.') || text[0] == '$')
        return rm_plan_fail (c, bson_iter_key (it),
                             "\"%s\" must be a plain field name (no dots, no $)", text);
    if (!rm_plan_check_written (c, bson_iter_key (it), text))
        return false;
    *out = bson_strdup (text);
    return true;
}

bool
rm_plan_check_written (rm_plan_ctx_t *c, const char *key, const char *name)
{
    if (strcmp (name, "_id") != 0 && strncmp (name, "_id.", 4) != 0)
        return true;
    return rm_plan_fail (c, key, "\"%s\": a step may not write _id (a document's _id is its "
                                 "identity: MongoDB refuses to change it, and two documents with one "
                                 "_id cannot be restored)",
                         name);
}

void
rm_plan_nsref_clear (rm_nsref_t *ns)
{
    bson_free (ns->db);
    bson_free (ns->coll);
    bson_free (ns->text);
    memset (ns, 0, sizeof *ns);
}

bool
rm_plan_parse_sort (rm_plan_ctx_t *c, const bson_iter_t *it, rm_sortspec_t *s)
{
    bson_iter_t sub;
    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub))
        return rm_plan_fail (c, "sort", "must be a document like {\"field\": 1, \"other\": -1}");
    while (bson_iter_next (&sub)) {
        int64_t dir = BSON_ITER_HOLDS_NUMBER (&sub) ? bson_iter_as_int64 (&sub) : 0;
        bson_error_t perr;
        rm_sortkey_t *k;
        if (dir != 1 && dir != -1)
            return rm_plan_fail (c, "sort", "the direction of \"%s\" must be 1 or -1", bson_iter_key (&sub));
        s->keys = bson_realloc (s->keys, (s->n + 1) * sizeof *s->keys);
        k = &s->keys[s->n];
        memset (k, 0, sizeof *k);
        if (!rm_path_parse (&k->path, bson_iter_key (&sub), &perr))
            return rm_plan_fail (c, "sort", "%s", perr.message);
        k->dir = (int) dir;
        s->n++;
    }
    if (s->n == 0)
        return rm_plan_fail (c, "sort", "must name at least one field");
    return true;
}

void
rm_plan_sortspec_clear (rm_sortspec_t *sort)
{
    for (size_t j = 0; j < sort->n; j++)
        rm_path_destroy (&sort->keys[j].path);
    bson_free (sort->keys);
}
