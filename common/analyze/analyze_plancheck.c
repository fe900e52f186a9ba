/* The check every plan analyze writes passes first (analyze_int.h,
 * docs/analyze.md "Plans that lose nothing"): run in order, the steps lose
 * no document.
 *
 * - They compose: no step reads (as from, into or in) a namespace that
 *   an earlier step took documents out of (an embed without keepSource,
 *   a bucketize without it): it would join against what is left, and
 *   what was taken would not be where the later step expects it.
 * - An embed without keepSource takes only children that have exactly one
 *   parent (no child referenced twice, no parent key seen twice), that the
 *   hints do not say are read or updated alone, and that a relationship
 *   analyze is confident of vouches for.
 * - No embed writes its array or its count over a field its parents
 *   already have (but the array of references it replaces in place), and
 *   no denormalize or summarize its fields over fields already there.
 *
 * When a check fails, the step to leave out is the one that takes
 * documents (the later reader then sees them all): the safer of the two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"

#define MAX_TAKEN 256
/* A step's number in a note made while resolving: its number among all
 * the recommended steps between these marks, rendered once the plan is
 * settled (rm_analyze_plan_resolve), so that a note names the step as the
 * written plan numbers it, or as left out. */
#define REF_MARK '\x1f'

/* How a note names step i of the steps checked: "step N", or, with ord
 * (each checked step's number among all the recommended ones), a mark. */
static void
step_ref (const size_t *ord, size_t i, char *out, size_t len)
{
    if (ord)
        snprintf (out, len, "%c%zu%c", REF_MARK, ord[i], REF_MARK);
    else
        snprintf (out, len, "step %zu", i + 1);
}

static const char *
get_s (const bson_t *b, const char *key)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, b, key) && BSON_ITER_HOLDS_UTF8 (&it) ? bson_iter_utf8 (&it, NULL)
                                                                          : NULL;
}

static bool
get_b (const bson_t *b, const char *key, bool dflt)
{
    bson_iter_t it;
    return bson_iter_init_find (&it, b, key) ? bson_iter_as_bool (&it) : dflt;
}

static const rm_collection_t *
coll_of (const rm_analysis_t *a, const char *ns)
{
    for (size_t i = 0; ns && i < a->n_cols; i++)
        if (!strcmp (a->cols[i].ns, ns))
            return &a->cols[i];
    return NULL;
}

/* The confident relationship an embed of from into into by the two fields
 * carries out (NULL: none). */
static const rm_relation_t *
vouching (const rm_analysis_t *a, const char *from, const char *into, const char *local,
          const char *foreign)
{
    for (size_t i = 0; i < a->n_rels; i++) {
        const rm_relation_t *r = &a->rels[i];
        const rm_collection_t *f = &a->cols[r->from], *t = &a->cols[r->to];
        const char *fp = f->fields[r->field].path, *kp = t->fields[r->key].path;
        if (!RM_REL_ACTS (r))
            continue;
        if (r->child_refs ? !strcmp (from, t->ns) && !strcmp (into, f->ns) && !strcmp (local, fp) &&
                                !strcmp (foreign, kp)
                          : !strcmp (from, f->ns) && !strcmp (into, t->ns) && !strcmp (local, kp) &&
                                !strcmp (foreign, fp))
            return r;
    }
    return NULL;
}

/* Whether the documents of ns already have the top-level field name. */
static bool
has_field (const rm_analysis_t *a, const char *ns, const char *name)
{
    const rm_collection_t *c = coll_of (a, ns);
    for (size_t k = 0; c && name && k < c->n_fields; k++)
        if (!strcmp (c->fields[k].path, name))
            return true;
    return false;
}

/* A denormalize or summarize writing a field its documents already have
 * (a copy beside a plain reference, a computed field of the parent): the
 * old values would be lost. Copies into the elements of an array of
 * references replace the references by documents that hold them. */
static bool
fields_ok (const rm_analysis_t *a, const char *op, const bson_t *b, const char *ref, char *why,
           size_t len)
{
    const char *ns = get_s (b, !strcmp (op, "denormalize") ? "in" : "into");
    const char *local = get_s (b, "localField");
    bson_iter_t it, f;
    if (!strcmp (op, "denormalize") && (!local || strchr (local, '.') || !has_field (a, ns, local) ||
                                        coll_of (a, ns) == NULL))
        return true;
    if (!strcmp (op, "denormalize")) {
        const rm_collection_t *c = coll_of (a, ns);
        for (size_t k = 0; k < c->n_fields; k++)
            if (!strcmp (c->fields[k].path, local) && c->fields[k].arrays)
                return true;
    }
    if (!bson_iter_init_find (&it, b, "fields") || !BSON_ITER_HOLDS_DOCUMENT (&it) ||
        !bson_iter_recurse (&it, &f))
        return true;
    while (bson_iter_next (&f))
        if (has_field (a, ns, bson_iter_key (&f))) {
            snprintf (why, len, "%s (%s into %s) would write over the field \"%s\" that its "
                      "documents already have", ref, op, ns, bson_iter_key (&f));
            return false;
        }
    return true;
}

/* An embed's own checks (why filled when one fails). */
static bool
embed_ok (const rm_analysis_t *a, const bson_t *b, const char *ref, char *why, size_t len)
{
    const char *from = get_s (b, "from"), *into = get_s (b, "into"), *as = get_s (b, "as");
    const char *local = get_s (b, "localField"), *foreign = get_s (b, "foreignField");
    const rm_collection_t *parent = coll_of (a, into);
    const rm_relation_t *r;

    if (!from || !into || !as || !local || !foreign) {
        snprintf (why, len, "%s (embed) lacks from, into, as, localField or foreignField", ref);
        return false;
    }
    for (size_t k = 0; parent && k < parent->n_fields; k++)
        if (!strcmp (parent->fields[k].path, as) && strcmp (as, local) != 0) {
            snprintf (why, len, "%s (embed %s into %s as \"%s\") would write over the field "
                      "\"%s\" that %s's documents already have", ref, from, into, as, as, into);
            return false;
        }
    if (has_field (a, into, get_s (b, "countAs"))) {
        snprintf (why, len, "%s (embed %s into %s) would write its count over the field \"%s\" "
                  "that %s's documents already have", ref, from, into, get_s (b, "countAs"), into);
        return false;
    }
    if (get_b (b, "keepSource", false))
        return true;
    r = vouching (a, from, into, local, foreign);
    if (!r) {
        snprintf (why, len, "%s (embed %s into %s without keepSource): no relationship analyze "
                  "is confident of vouches for taking %s's documents", ref, from, into, from);
        return false;
    }
    if (r->shared || a->cols[r->to].fields[r->key].values != a->cols[r->to].fields[r->key].distinct) {
        snprintf (why, len, "%s (embed %s into %s without keepSource): some children have more "
                  "than one parent", ref, from, into);
        return false;
    }
    if (rm_hints_lists (a->hints, "readAlone", from) || rm_hints_lists (a->hints, "updatedAlone", from)) {
        snprintf (why, len, "%s (embed %s into %s without keepSource): the hints say %s is read "
                  "or updated alone", ref, from, into, from);
        return false;
    }
    return true;
}

static bool
check (const rm_analysis_t *a, const bson_t *steps, const size_t *ord, size_t *bad, char *why,
       size_t len)
{
    const char *taken[MAX_TAKEN];   /* namespaces documents were taken out of */
    size_t taken_by[MAX_TAKEN], n_taken = 0, i = 0;
    bson_iter_t it, op;

    bson_iter_init (&it, steps);
    for (; bson_iter_next (&it); i++) {
        static const char *const reads[] = {"from", "into", "in"};
        uint32_t l;
        const uint8_t *d;
        const char *name, *from;
        bson_t body;

        char ref[32], ref2[32];
        *bad = i;
        step_ref (ord, i, ref, sizeof ref);
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &op) || !bson_iter_next (&op) ||
            !BSON_ITER_HOLDS_DOCUMENT (&op)) {
            snprintf (why, len, "%s is not {op: {...}}", ref);
            return false;
        }
        name = bson_iter_key (&op);
        bson_iter_document (&op, &l, &d);
        if (!bson_init_static (&body, d, l)) {
            snprintf (why, len, "%s is not {op: {...}}", ref);
            return false;
        }
        for (size_t r = 0; r < 3; r++) {
            const char *ns = get_s (&body, reads[r]);
            for (size_t t = 0; ns && t < n_taken; t++)
                if (!strcmp (taken[t], ns)) {
                    *bad = taken_by[t];
                    step_ref (ord, taken_by[t], ref2, sizeof ref2);
                    snprintf (why, len, "%s takes documents out of %s, which %s (%s) then reads "
                              "as \"%s\": it would join against what is left", ref2, ns, ref, name,
                              reads[r]);
                    return false;
                }
        }
        if (!strcmp (name, "embed") && !embed_ok (a, &body, ref, why, len))
            return false;
        if ((!strcmp (name, "denormalize") || !strcmp (name, "summarize")) &&
            !fields_ok (a, name, &body, ref, why, len))
            return false;
        from = get_s (&body, "from");
        if (from && n_taken < MAX_TAKEN &&
            ((!strcmp (name, "embed") && !get_b (&body, "keepSource", false)) ||
             (!strcmp (name, "bucketize") && !get_b (&body, "keepSource", false)))) {
            taken[n_taken] = from;
            taken_by[n_taken++] = i;
        }
    }
    return true;
}

bool
rm_plan_check (const rm_analysis_t *a, const bson_t *steps, size_t *bad, char *why, size_t len)
{
    return check (a, steps, NULL, bad, why, len);
}

/* What a step does, in a few words ("the embed of lib.reviews into
 * lib.books"), for the notes: a step left out is named by what it does,
 * never by a number the plan does not have. */
static char *
describe (const bson_iter_t *step)
{
    bson_iter_t op;
    const char *name = "?", *from = NULL, *into = NULL;
    uint32_t l;
    const uint8_t *d;
    bson_t body;
    if (bson_iter_recurse (step, &op) && bson_iter_next (&op) && BSON_ITER_HOLDS_DOCUMENT (&op)) {
        name = bson_iter_key (&op);
        bson_iter_document (&op, &l, &d);
        if (bson_init_static (&body, d, l)) {
            from = get_s (&body, "from");
            into = get_s (&body, "into");
            if (!into)
                into = get_s (&body, "in");
        }
    }
    if (from && into)
        return bson_strdup_printf ("the %s of %s into %s", name, from, into);
    return bson_strdup_printf ("the %s step of %s", name, into ? into : from ? from : "?");
}

/* The notes' marks (step_ref) as the written plan numbers its steps:
 * "step N (what it does)" for a step it holds, "what it does (itself left
 * out)" for one it does not (descs: each recommended step's words). */
static char *
render (const rm_analysis_t *a, const char *note, char **descs)
{
    rm_buf_t out;
    char *s;
    rm_buf_init (&out);
    for (const char *p = note; *p;) {
        const char *end;
        size_t ord, written = 0;
        char ref[700];
        if (*p != REF_MARK || !(end = strchr (p + 1, REF_MARK))) {
            rm_buf_append (&out, p, 1);
            p++;
            continue;
        }
        ord = (size_t) strtoull (p + 1, NULL, 10);
        for (size_t k = 0; k < ord && k < a->n_plan_steps; k++)
            written += !a->plan_skip[k];
        if (ord < a->n_plan_steps && a->plan_skip[ord])
            snprintf (ref, sizeof ref, "%s (itself left out)", descs[ord]);
        else
            snprintf (ref, sizeof ref, "step %zu (%s)", written + 1,
                      ord < a->n_plan_steps ? descs[ord] : "?");
        rm_buf_append (&out, ref, strlen (ref));
        p = end + 1;
        /* The check's own "(op)" after a step: the words above say more. */
        if (p[0] == ' ' && p[1] == '(' && strchr (p, ')') && !memchr (p + 2, ' ', (size_t) (strchr (p, ')') - p - 2)))
            p = strchr (p, ')') + 1;
    }
    s = bson_strndup ((const char *) out.data, out.len);
    rm_buf_destroy (&out);
    return s;
}

/* A check's why less its subject (the step left out: its mark, then its
 * words in parentheses), so that the note names it once: "would write
 * over the field ...", "takes documents out of X, which step 5 (...) then
 * reads". */
static const char *
reason_of (const char *why, size_t ord)
{
    char mark[32];
    const char *p = why;
    snprintf (mark, sizeof mark, "%c%zu%c", REF_MARK, ord, REF_MARK);
    if (!strncmp (p, mark, strlen (mark)))
        p += strlen (mark);
    while (*p == ' ')
        p++;
    if (*p == '(') {
        const char *close = strstr (p, ") ");
        if (close)
            p = close + 2;
    }
    return p;
}

void
rm_analyze_plan_resolve (rm_analysis_t *a)
{
    bson_t recs, steps;
    bson_iter_t it, op;
    size_t tries, *ord;
    char **ops;

    /* How many steps the recommendations make, none left out, and what
     * each does. */
    bson_init (&recs);
    bson_init (&steps);
    rm_analysis_recommend (a, &recs, &steps);
    a->n_plan_steps = bson_count_keys (&steps);
    a->plan_skip = bson_malloc0 ((a->n_plan_steps ? a->n_plan_steps : 1) * sizeof *a->plan_skip);
    ord = bson_malloc0 ((a->n_plan_steps ? a->n_plan_steps : 1) * sizeof *ord);
    ops = bson_malloc0 ((a->n_plan_steps ? a->n_plan_steps : 1) * sizeof *ops);
    bson_iter_init (&it, &steps);
    for (size_t k = 0; k < a->n_plan_steps && bson_iter_next (&it); k++)
        ops[k] = describe (&it);
    for (tries = 0; tries <= a->n_plan_steps; tries++) {
        size_t bad = 0, n = 0;
        char why[700], *note;
        bson_iter_t w;
        const char *what = "";

        /* The steps checked, by their number among all the recommended. */
        for (size_t k = 0; k < a->n_plan_steps; k++)
            if (!a->plan_skip[k])
                ord[n++] = k;
        if (check (a, &steps, ord, &bad, why, sizeof why) || bad >= n)
            break;
        a->plan_skip[ord[bad]] = true;
        bson_iter_init (&it, &steps);
        for (size_t k = 0; bson_iter_next (&it); k++)
            if (k == bad && bson_iter_recurse (&it, &op) && bson_iter_next (&op) &&
                bson_iter_recurse (&op, &w) && bson_iter_find (&w, "why") && BSON_ITER_HOLDS_UTF8 (&w))
                what = bson_iter_utf8 (&w, NULL);
        /* One plain sentence: which recommendation, what its step would
         * have done, and why it may not (the why without its subject). */
        note = bson_strdup_printf ("left out of the plan: %s, recommended for %.*s: it %s; the "
                                   "recommendation stays in the report", ops[ord[bad]],
                                   (int) strcspn (what, ":"), what, reason_of (why, ord[bad]));
        a->plan_notes = bson_realloc (a->plan_notes, (a->n_plan_notes + 1) * sizeof *a->plan_notes);
        a->plan_notes[a->n_plan_notes++] = note;
        bson_reinit (&recs);
        bson_reinit (&steps);
        rm_analysis_recommend (a, &recs, &steps);
    }
    /* Numbered as written: a later conflict may leave out a step an
     * earlier note counted. */
    for (size_t i = 0; i < a->n_plan_notes; i++) {
        char *r = render (a, a->plan_notes[i], ops);
        bson_free (a->plan_notes[i]);
        a->plan_notes[i] = r;
    }
    for (size_t k = 0; k < a->n_plan_steps; k++)
        bson_free (ops[k]);
    bson_free (ops);
    bson_free (ord);
    bson_destroy (&recs);
    bson_destroy (&steps);
}

bool
rm_analysis_plan (const rm_analysis_t *a, bson_t *steps, bson_error_t *err)
{
    bson_t recs = BSON_INITIALIZER;
    size_t bad;
    char why[700];
    rm_analysis_recommend (a, &recs, steps);
    bson_destroy (&recs);
    if (rm_plan_check (a, steps, &bad, why, sizeof why))
        return true;
    rm_error_set (err, RM_ERR_DATA, "the plan fails its own check, so it is not written: %s", why);
    return false;
}
