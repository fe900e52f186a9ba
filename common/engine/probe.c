/* Probes (see probe.h). While the field has not been seen, the names that
 * occur where it would be are gathered from the first documents, as whole
 * paths a user could have meant: for "adress.city", each top-level name
 * with ".city" after it ("address.city"), and each name inside the
 * documents at "adress" ("adress.cty" -> "adress.city"). */
#include <stdio.h>
#include <string.h>

#include "probe.h"

/* Documents whose names are gathered: enough to see a collection's fields,
 * few enough to cost nothing on a large one. */
#define SAMPLE_DOCS 1000

void
rm_probe_init (rm_probe_t *p, const char *key, const char *path, const char *ns)
{
    memset (p, 0, sizeof *p);
    p->key = key;
    rm_path_parse (&p->path, path, NULL); /* the plan parsed it already */
    p->ns = bson_strdup (ns);
    if (p->path.n > 1) {
        size_t cut = strlen (p->path.text) - strlen (p->path.parts[p->path.n - 1]) - 1;
        char *parent = bson_strndup (p->path.text, cut);
        rm_path_parse (&p->parent, parent, NULL);
        bson_free (parent);
    }
}

void
rm_probe_destroy (rm_probe_t *p)
{
    for (size_t i = 0; i < p->n_names; i++)
        bson_free (p->names[i]);
    for (size_t i = 0; i < p->n_riders; i++)
        rm_probe_destroy (&p->riders[i]);
    bson_free (p->riders);
    if (p->parent.n)
        rm_path_destroy (&p->parent);
    rm_path_destroy (&p->path);
    bson_free (p->ns);
    memset (p, 0, sizeof *p);
}

static bool
stop (const bson_iter_t *value, void *ctx)
{
    (void) value;
    (void) ctx;
    return false;
}

static void
add_name (rm_probe_t *p, const char *name)
{
    if (p->n_names == RM_PROBE_NAMES)
        return;
    for (size_t i = 0; i < p->n_names; i++)
        if (!strcmp (p->names[i], name))
            return;
    p->names[p->n_names++] = bson_strdup (name);
}

/* Each name of a document with `before` in front and `after` behind;
 * with `after`, only names whose value could hold it (a document or an
 * array: "owner.id" is no suggestion where "owner" is a string). */
static void
add_names_of (rm_probe_t *p, const uint8_t *data, uint32_t len, const char *before,
              const char *after)
{
    bson_t d;
    bson_iter_t it;
    if (!bson_init_static (&d, data, len) || !bson_iter_init (&it, &d))
        return;
    while (bson_iter_next (&it) && p->n_names < RM_PROBE_NAMES) {
        if (after[0] && !BSON_ITER_HOLDS_DOCUMENT (&it) && !BSON_ITER_HOLDS_ARRAY (&it))
            continue;
        char *full = bson_strdup_printf ("%s%s%s", before, bson_iter_key (&it), after);
        add_name (p, full);
        bson_free (full);
    }
}

static bool
add_parent_names (const bson_iter_t *value, void *ctx)
{
    rm_probe_t *p = ctx;
    uint32_t len;
    const uint8_t *data;
    char *before;
    if (!BSON_ITER_HOLDS_DOCUMENT (value))
        return true;
    bson_iter_document (value, &len, &data);
    before = bson_strdup_printf ("%s.", p->parent.text);
    add_names_of (p, data, len, before, "");
    bson_free (before);
    return p->n_names < RM_PROBE_NAMES;
}

/* Looks for p's field in one document, gathering names while it has not
 * been seen. */
static void
look (rm_probe_t *p, const uint8_t *doc, uint32_t len)
{
    if (rm_path_visit (doc, len, &p->path, false, false, stop, NULL) > 0) {
        p->seen = true;
        return;
    }
    if (p->sampled >= SAMPLE_DOCS || p->n_names == RM_PROBE_NAMES)
        return;
    p->sampled++;
    if (p->path.n > 1) {
        bson_iter_t whole;
        /* Legal since MongoDB 5.0, and never reachable by a path. */
        if (rm_doc_field (doc, len, p->path.text, strlen (p->path.text), &whole))
            p->whole_name = true;
        const char *rest = p->path.text + strlen (p->path.parts[0]);
        add_names_of (p, doc, len, "", rest);
        rm_path_visit (doc, len, &p->parent, true, false, add_parent_names, p);
    } else {
        add_names_of (p, doc, len, "", "");
    }
}

void
rm_probe_slow (rm_probe_t *p, const uint8_t *doc, uint32_t len)
{
    if (!p->seen)
        look (p, doc, len);
    /* Once every rider has seen its field, rm_probe_doc stops calling here
     * (a rider's count then stays behind: seen, it is never reported). */
    for (size_t i = 0; p->riders_unseen && i < p->n_riders; i++) {
        rm_probe_t *r = &p->riders[i];
        if (r->seen)
            continue;
        r->docs++;
        look (r, doc, len);
        if (r->seen)
            p->riders_unseen--;
    }
}

void
rm_probe_doc_alone (rm_probe_t *p, const uint8_t *doc, uint32_t len)
{
    p->docs++;
    if (!p->seen)
        look (p, doc, len);
}

void
rm_probe_add_rider (rm_probe_t *p, const char *key, const char *path)
{
    rm_path_t parsed;
    bson_error_t err;
    /* A path the plan parser would refuse (it read the expression, not
     * this path) is not probed: its own check says what is wrong. */
    if (!rm_path_parse (&parsed, path, &err))
        return;
    rm_path_destroy (&parsed);
    if (!strcmp (p->path.text, path))
        return;
    for (size_t i = 0; i < p->n_riders; i++)
        if (!strcmp (p->riders[i].path.text, path))
            return;
    p->riders = bson_realloc (p->riders, (p->n_riders + 1) * sizeof *p->riders);
    rm_probe_init (&p->riders[p->n_riders++], key, path, p->ns);
    p->riders_unseen++;
}

/* Optimal string alignment distance (Levenshtein with swaps of two
 * neighbours), in bytes; capped at 255 by the caller's lengths. */
static size_t
distance (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    size_t d[3][256], *prev2 = d[0], *prev = d[1], *cur = d[2];
    if (la > 254 || lb > 254)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *t;
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1], best = prev[j - 1] + cost;
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

size_t
rm_closest_names (const char *word, char *const *names, size_t n, const char **out, size_t max)
{
    size_t got = 0, len = strlen (word);
    /* A third of the word, at least one edit and at most three: "acounts"
     * finds "accounts", "id" finds "_id" (and "ts"), "customer" does not
     * find "consumer". */
    size_t limit = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
    for (size_t dist = 1; dist <= limit && got < max; dist++)
        for (size_t i = 0; i < n && got < max; i++)
            if (distance (word, names[i]) == dist)
                out[got++] = names[i];
    return got;
}

bool
rm_probe_check (const rm_probe_t *p, bson_error_t *err)
{
    const char *close[3];
    char hint[600] = "";
    size_t n;

    if (p->seen || p->docs == 0) {
        for (size_t i = 0; i < p->n_riders; i++)
            if (!rm_probe_check (&p->riders[i], err))
                return false;
        return true;
    }
    n = rm_closest_names (p->path.text, p->names, p->n_names, close, 3);
    if (p->whole_name) {
        snprintf (hint, sizeof hint, "; a field is named \"%s\" itself, dots and all: a path reads "
                  "each dot as a step down, so no plan path names that field", p->path.text);
    } else if (n) {
        size_t at = (size_t) snprintf (hint, sizeof hint, "; did you mean ");
        for (size_t i = 0; i < n && at < sizeof hint; i++)
            at += (size_t) snprintf (hint + at, sizeof hint - at, "%s\"%s\"", i ? " or " : "",
                                     close[i]);
        if (at < sizeof hint)
            snprintf (hint + at, sizeof hint - at, "?");
    } else if (p->n_names) {
        size_t at = (size_t) snprintf (hint, sizeof hint, "; fields there: ");
        for (size_t i = 0; i < p->n_names && i < 8 && at < sizeof hint; i++)
            at += (size_t) snprintf (hint + at, sizeof hint - at, "%s\"%s\"", i ? ", " : "",
                                     p->names[i]);
        if (p->n_names > 8 && at < sizeof hint)
            snprintf (hint + at, sizeof hint - at, ", ...");
    }
    rm_error_set (err, RM_ERR_FORMAT,
                  "%s \"%s\" is in none of the %llu documents of %s%s (if that is expected, add "
                  "\"allowMissing\": true to the step)",
                  p->key, p->path.text, (unsigned long long) p->docs, p->ns, hint);
    return false;
}

bool
rm_join_seen_check (const rm_join_seen_t *j, bool allow_missing, bson_error_t *err)
{
    if (j->found || !j->refs || !j->partners || allow_missing)
        return true;
    if (j->lookups)
        rm_error_set (err, RM_ERR_FORMAT,
                      "none of the %llu references in %s (localField \"%s\") is found in %s "
                      "(foreignField \"%s\"): check the fields and their types (if that is "
                      "expected, add \"allowMissing\": true to the step)",
                      (unsigned long long) j->refs, j->refs_ns, j->local, j->partner_ns,
                      j->foreign);
    else
        rm_error_set (err, RM_ERR_FORMAT,
                      "none of the %llu documents of %s matches any of the %llu of %s (localField "
                      "\"%s\" = foreignField \"%s\"): check the fields and their types (if that "
                      "is expected, add \"allowMissing\": true to the step)",
                      (unsigned long long) j->refs, j->refs_ns, (unsigned long long) j->partners,
                      j->partner_ns, j->local, j->foreign);
    return false;
}
