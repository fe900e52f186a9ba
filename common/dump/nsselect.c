/* mongorestore's namespace patterns, compiled to a list of parts: literal
 * text and captures. A capture matches any text, the shortest that lets
 * the rest match (what mongorestore's "(.*?)" regular expressions do), so
 * "$a$.$b$" splits "x.y.z" into "x" and "y.z". */
#include <string.h>

#include "remodel/nsselect.h"

#define MAX_PARTS 32

typedef struct {
    char *lit;   /* literal text, or NULL for a capture */
    int var;     /* a capture's number, from 1 */
} part_t;

typedef struct {
    part_t parts[MAX_PARTS];
    int n_parts;
} pattern_t;

typedef struct {
    pattern_t from;
    /* The replacement: literal text and references to from's captures. */
    pattern_t to;
} rename_t;

struct rm_nsselect {
    pattern_t *include, *exclude;
    size_t n_include, n_exclude;
    rename_t *rename;
    size_t n_rename;
};

static void
pattern_clear (pattern_t *p)
{
    for (int i = 0; i < p->n_parts; i++)
        bson_free (p->parts[i].lit);
    p->n_parts = 0;
}

static bool
add_part (pattern_t *p, char *lit, int var, const char *text, bson_error_t *err)
{
    if (p->n_parts == MAX_PARTS) {
        bson_free (lit);
        rm_error_set (err, RM_ERR_USAGE, "namespace pattern \"%s\": too many parts", text);
        return false;
    }
    p->parts[p->n_parts].lit = lit;
    p->parts[p->n_parts].var = var;
    p->n_parts++;
    return true;
}

/* The number mongorestore gives each unescaped '*' of a pattern, in the
 * order the stars stand. It rewrites them one at a time with a regular
 * expression whose first alternative is the empty prefix: a star at the
 * very start goes first, then, each time, the last one left. So "*.*"
 * numbers its stars 1, 2 but "a*.b*" numbers them 2, 1, and pairs of
 * --nsFrom/--nsTo follow those numbers, not the stars' order. */
static void
number_stars (const char *text, int *number)
{
    size_t n = strlen (text);
    int pos[MAX_PARTS * 4], count = 0, next = 1;
    bool done[MAX_PARTS * 4] = {false};

    for (size_t i = 0; i < n && count < MAX_PARTS * 4; i++) {
        if (text[i] == '\\' && i + 1 < n && (text[i + 1] == '*' || text[i + 1] == '\\')) {
            i++;
            continue;
        }
        if (text[i] == '*')
            pos[count++] = (int) i;
    }
    if (count > 0 && pos[0] == 0) {
        number[0] = next++;
        done[0] = true;
    }
    for (int k = count - 1; k >= 0; k--)
        if (!done[k])
            number[k] = next++;
}

/* Splits text into literals and captures. With dollars, "$name$" are the
 * captures (names[] gets them, in order); else each unescaped "*" is one,
 * numbered from 1. "\*" is a literal star and "\\" a backslash. */
static bool
compile (const char *text, bool dollars, char names[][64], int *n_names, bool define,
         pattern_t *p, bson_error_t *err)
{
    size_t n = strlen (text);
    char *lit = bson_malloc (n + 1);
    size_t len = 0;
    int stars = 0, star_number[MAX_PARTS * 4];

    p->n_parts = 0;
    if (!dollars)
        number_stars (text, star_number);
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        int var = 0;
        if (!dollars && c == '\\' && i + 1 < n && (text[i + 1] == '*' || text[i + 1] == '\\')) {
            lit[len++] = text[++i];
            continue;
        }
        if (!dollars && c == '\\')
            continue; /* a lone backslash escapes nothing: dropped, as mongorestore does */
        if (!dollars && c == '*') {
            var = star_number[stars++];
        } else if (dollars && c == '$') {
            const char *end = strchr (text + i + 1, '$');
            size_t nlen;
            int k;
            if (!end) {
                rm_error_set (err, RM_ERR_USAGE, "namespace pattern \"%s\": a '$' without its closing '$'",
                              text);
                goto fail;
            }
            nlen = (size_t) (end - (text + i + 1));
            if (nlen >= 64) {
                rm_error_set (err, RM_ERR_USAGE, "namespace pattern \"%s\": variable name too long", text);
                goto fail;
            }
            for (k = 0; k < *n_names; k++)
                if (strlen (names[k]) == nlen && memcmp (names[k], text + i + 1, nlen) == 0)
                    break;
            if (define) {
                if (k < *n_names) {
                    rm_error_set (err, RM_ERR_USAGE,
                                  "namespace pattern \"%s\": variable \"%.*s\" used more than once", text,
                                  (int) nlen, text + i + 1);
                    goto fail;
                }
                if (*n_names == MAX_PARTS) {
                    rm_error_set (err, RM_ERR_USAGE, "namespace pattern \"%s\": too many variables", text);
                    goto fail;
                }
                memcpy (names[k], text + i + 1, nlen);
                names[k][nlen] = '\0';
                (*n_names)++;
            } else if (k == *n_names) {
                rm_error_set (err, RM_ERR_USAGE, "namespace pattern \"%s\": unknown variable \"%.*s\"",
                              text, (int) nlen, text + i + 1);
                goto fail;
            }
            var = k + 1;
            i += nlen + 1;
        } else {
            lit[len++] = c;
            continue;
        }
        if (len > 0) {
            if (!add_part (p, bson_strndup (lit, len), 0, text, err))
                goto fail;
            len = 0;
        }
        if (!add_part (p, NULL, var, text, err))
            goto fail;
    }
    if (len > 0 && !add_part (p, bson_strndup (lit, len), 0, text, err))
        goto fail;
    bson_free (lit);
    if (!dollars)
        *n_names = stars;
    return true;
fail:
    bson_free (lit);
    pattern_clear (p);
    return false;
}

/* Matches s[0..n) against parts[i..], recording capture spans. */
static bool
match_from (const pattern_t *p, int i, const char *s, size_t n, size_t *cap_at, size_t *cap_len,
            size_t at)
{
    if (i == p->n_parts)
        return at == n;
    if (p->parts[i].lit) {
        size_t l = strlen (p->parts[i].lit);
        return l <= n - at && memcmp (s + at, p->parts[i].lit, l) == 0 &&
               match_from (p, i + 1, s, n, cap_at, cap_len, at + l);
    }
    for (size_t l = 0; at + l <= n; l++) { /* the shortest capture first */
        cap_at[p->parts[i].var] = at;
        cap_len[p->parts[i].var] = l;
        if (match_from (p, i + 1, s, n, cap_at, cap_len, at + l))
            return true;
    }
    return false;
}

static bool
matches (const pattern_t *p, const char *ns, size_t *cap_at, size_t *cap_len)
{
    size_t at[MAX_PARTS + 1], len[MAX_PARTS + 1];
    return match_from (p, 0, ns, strlen (ns), cap_at ? cap_at : at, cap_len ? cap_len : len, 0);
}

rm_nsselect_t *
rm_nsselect_new (void)
{
    return bson_malloc0 (sizeof (rm_nsselect_t));
}

void
rm_nsselect_destroy (rm_nsselect_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_include; i++)
        pattern_clear (&s->include[i]);
    for (size_t i = 0; i < s->n_exclude; i++)
        pattern_clear (&s->exclude[i]);
    for (size_t i = 0; i < s->n_rename; i++) {
        pattern_clear (&s->rename[i].from);
        pattern_clear (&s->rename[i].to);
    }
    bson_free (s->include);
    bson_free (s->exclude);
    bson_free (s->rename);
    bson_free (s);
}

static bool
add_matcher (pattern_t **list, size_t *n, const char *pattern, bson_error_t *err)
{
    char names[MAX_PARTS][64];
    int n_names = 0;
    pattern_t p;
    if (strchr (pattern, '$')) {
        rm_error_set (err, RM_ERR_USAGE, "namespace pattern \"%s\": '$' is not allowed in "
                      "--nsInclude or --nsExclude", pattern);
        return false;
    }
    if (!compile (pattern, false, names, &n_names, true, &p, err))
        return false;
    *list = bson_realloc (*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = p;
    return true;
}

bool
rm_nsselect_include (rm_nsselect_t *s, const char *pattern, bson_error_t *err)
{
    return add_matcher (&s->include, &s->n_include, pattern, err);
}

bool
rm_nsselect_exclude (rm_nsselect_t *s, const char *pattern, bson_error_t *err)
{
    return add_matcher (&s->exclude, &s->n_exclude, pattern, err);
}

bool
rm_nsselect_rename (rm_nsselect_t *s, const char *from, const char *to, bson_error_t *err)
{
    char names[MAX_PARTS][64];
    int n_from = 0, n_to = 0;
    bool dollars = strchr (from, '$') != NULL;
    rename_t r;

    if (!compile (from, dollars, names, &n_from, true, &r.from, err))
        return false;
    n_to = n_from; /* with variables, to may use the names from defined */
    if (!compile (to, dollars, names, &n_to, false, &r.to, err)) {
        pattern_clear (&r.from);
        return false;
    }
    if (!dollars && n_to != n_from) {
        rm_error_set (err, RM_ERR_USAGE, "--nsFrom \"%s\" and --nsTo \"%s\": another number of '*'",
                      from, to);
        pattern_clear (&r.from);
        pattern_clear (&r.to);
        return false;
    }
    s->rename = bson_realloc (s->rename, (s->n_rename + 1) * sizeof *s->rename);
    s->rename[s->n_rename++] = r;
    return true;
}

bool
rm_nsselect_empty (const rm_nsselect_t *s)
{
    return !s || (s->n_include == 0 && s->n_exclude == 0 && s->n_rename == 0);
}

bool
rm_nsselect_wants (const rm_nsselect_t *s, const char *ns)
{
    bool in = s->n_include == 0;
    for (size_t i = 0; i < s->n_include && !in; i++)
        in = matches (&s->include[i], ns, NULL, NULL);
    for (size_t i = 0; i < s->n_exclude && in; i++)
        in = !matches (&s->exclude[i], ns, NULL, NULL);
    return in;
}

char *
rm_nsselect_new_name (const rm_nsselect_t *s, const char *ns)
{
    size_t at[MAX_PARTS + 1], len[MAX_PARTS + 1];
    /* The last pair given is tried first, as in mongorestore. */
    for (size_t i = s->n_rename; i-- > 0;) {
        const rename_t *r = &s->rename[i];
        char *out;
        size_t n = 0;
        if (!matches (&r->from, ns, at, len))
            continue;
        for (int j = 0; j < r->to.n_parts; j++)
            n += r->to.parts[j].lit ? strlen (r->to.parts[j].lit) : len[r->to.parts[j].var];
        out = bson_malloc (n + 1);
        n = 0;
        for (int j = 0; j < r->to.n_parts; j++) {
            const part_t *p = &r->to.parts[j];
            size_t l = p->lit ? strlen (p->lit) : len[p->var];
            memcpy (out + n, p->lit ? p->lit : ns + at[p->var], l);
            n += l;
        }
        out[n] = '\0';
        return out;
    }
    return NULL;
}
