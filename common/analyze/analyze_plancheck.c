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
 * - No embed closes a ring (a collection's documents embedded, through
 *   the steps before, into documents they already hold), and no step
 *   nests documents deeper than the 100 levels MongoDB stores: look-alike
 *   collections referencing each other round a ring would otherwise get
 *   a chain of thousands of embeds, one inside the other.
 *
 * When a check fails, the step to leave out is the one that takes
 * documents (the later reader then sees them all): the safer of the two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"

#define MAX_TAKEN 256
/* The levels of nesting MongoDB stores in a document, each object and
 * array one, the document itself the first. */
#define MAX_LEVELS 100
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

/* What the steps so far made of each namespace's documents: the levels
 * they nest to, and what was embedded into them (for rings). A hash of
 * the namespaces: thousands of collections, thousands of steps. */
typedef struct {
    const char *ns;    /* NULL: a free slot */
    int levels;        /* of its deepest document, at most (the document itself 1) */
    uint32_t chain;    /* embeds one inside the other in its deepest */
    size_t embedded;   /* the last edge of what was embedded into it, + 1 (0: none) */
    size_t seen;       /* the ring search's mark */
} nest_slot_t;

typedef struct {
    size_t from, next; /* the slot embedded; the holder's edge before, + 1 */
} nest_edge_t;

typedef struct {
    nest_slot_t *slots;
    size_t cap, mark;
    nest_edge_t *edges;
    size_t n_edges, cap_edges;
    size_t *stack;
} nest_t;

/* The steps left out for their nesting in one pass of the check (its
 * caller's ord given): each is independent of those after it, so the
 * pass goes on without it rather than starting again per step, which on
 * a ring of thousands of collections would be thousands of passes. */
typedef struct {
    size_t *at;        /* their numbers among the steps checked */
    char **why;
    size_t n;
} nest_left_t;

static void
left_add (nest_left_t *left, size_t i, const char *why)
{
    left->at = bson_realloc (left->at, (left->n + 1) * sizeof *left->at);
    left->why = bson_realloc (left->why, (left->n + 1) * sizeof *left->why);
    left->at[left->n] = i;
    left->why[left->n++] = bson_strdup (why);
}

static size_t
nest_slot (nest_t *t, const char *ns)
{
    uint32_t h = 2166136261u;
    size_t i;
    for (const char *p = ns; *p; p++)
        h = (h ^ (uint8_t) *p) * 16777619u;
    for (i = h & (t->cap - 1); t->slots[i].ns; i = (i + 1) & (t->cap - 1))
        if (!strcmp (t->slots[i].ns, ns))
            return i;
    t->slots[i].ns = ns;
    t->slots[i].levels = 1; /* a namespace a step makes: filled by its step */
    return i;
}

/* The levels a field's documents reach, at most: a path's every parent an
 * object or, through an array, two levels; an array itself one more. */
static int
field_levels (const rm_field_t *f)
{
    int parents = 0;
    bool quoted = false;
    /* A name no path spells (["a.b"]) is one name, its dots inside. */
    for (const char *p = f->path; *p; p++)
        if (*p == '"')
            quoted = !quoted;
        else if (*p == '.' && !quoted)
            parents++;
    return 1 + (f->in_array ? 2 : 1) * parents + (f->arrays ? 1 : 0);
}

static void
nest_init (nest_t *t, const rm_analysis_t *a, const bson_t *steps)
{
    size_t want = 2 * (a->n_cols + 2 * (size_t) bson_count_keys (steps)) + 16;
    memset (t, 0, sizeof *t);
    for (t->cap = 16; t->cap < want; t->cap *= 2)
        ;
    t->slots = bson_malloc0 (t->cap * sizeof *t->slots);
    t->cap_edges = bson_count_keys (steps) + 1;
    t->edges = bson_malloc (t->cap_edges * sizeof *t->edges);
    t->stack = bson_malloc (t->cap_edges * sizeof *t->stack);
    for (size_t c = 0; c < a->n_cols; c++) {
        nest_slot_t *s = &t->slots[nest_slot (t, a->cols[c].ns)];
        for (size_t k = 0; k < a->cols[c].n_fields; k++) {
            int l = field_levels (&a->cols[c].fields[k]);
            if (l > s->levels)
                s->levels = l;
        }
    }
}

static void
nest_destroy (nest_t *t)
{
    bson_free (t->slots);
    bson_free (t->edges);
    bson_free (t->stack);
}

/* Whether the documents of holder already hold, embedded by the steps
 * before, those of ns (a ring if ns is the embed's parent). */
static bool
nest_holds (nest_t *t, size_t holder, size_t ns)
{
    size_t n = 0;
    t->mark++;
    t->stack[n++] = holder;
    t->slots[holder].seen = t->mark;
    while (n) {
        size_t s = t->stack[--n];
        for (size_t e = t->slots[s].embedded; e; e = t->edges[e - 1].next) {
            size_t f = t->edges[e - 1].from;
            if (f == ns)
                return true;
            if (t->slots[f].seen != t->mark && n < t->cap_edges) {
                t->slots[f].seen = t->mark;
                t->stack[n++] = f;
            }
        }
    }
    return false;
}

static size_t
dots (const char *path)
{
    size_t n = 0;
    for (; path && *path; path++)
        n += *path == '.';
    return n;
}

/* Step name's nesting (why filled when it would close a ring or pass
 * MAX_LEVELS), then what it made recorded. Embed, summarize and
 * denormalize put the documents (or values) of from into those of into
 * (in): an array and its element over from's levels, at most, and an
 * embed's as under its parents; bucketize puts them in the buckets of to,
 * extract some of them in to. */
static bool
nest_ok (nest_t *t, const char *name, const bson_t *b, const char *ref, char *why, size_t len)
{
    const char *from = get_s (b, "from"), *into = get_s (b, "into"), *to = get_s (b, "to");
    bool embed = !strcmp (name, "embed");
    size_t f, i;
    int levels;

    if (!strcmp (name, "denormalize"))
        into = get_s (b, "in");
    if (!from)
        return true;
    f = nest_slot (t, from);
    if (to && (!strcmp (name, "bucketize") || !strcmp (name, "extract"))) {
        nest_slot_t *s = &t->slots[nest_slot (t, to)];
        int l = t->slots[f].levels + (!strcmp (name, "bucketize") ? 2 : 0);
        if (l > s->levels)
            s->levels = l;
        return true;
    }
    if (!into || (!embed && strcmp (name, "summarize") && strcmp (name, "denormalize")))
        return true;
    i = nest_slot (t, into);
    if (embed && (f == i || nest_holds (t, f, i))) {
        snprintf (why, len, "%s (embed %s into %s) would close a ring: %s's documents already "
                  "hold %s's, embedded by the steps before, so %s's would be embedded into "
                  "themselves", ref, from, into, from, into, into);
        return false;
    }
    levels = t->slots[f].levels + 2 + (embed ? 2 * (int) dots (get_s (b, "as")) : 0);
    if (levels > MAX_LEVELS) {
        if (embed)
            snprintf (why, len, "%s (embed %s into %s) would nest %s's documents %d levels deep, "
                      "past the %d MongoDB stores: %s's already hold a chain of %u embeds, one "
                      "inside the other", ref, from, into, into, levels, MAX_LEVELS, from,
                      t->slots[f].chain);
        else
            snprintf (why, len, "%s (%s from %s into %s) could nest %s's documents %d levels deep, "
                      "past the %d MongoDB stores", ref, name, from, into, into, levels, MAX_LEVELS);
        return false;
    }
    if (levels > t->slots[i].levels)
        t->slots[i].levels = levels;
    if (embed) {
        if (t->slots[f].chain + 1 > t->slots[i].chain)
            t->slots[i].chain = t->slots[f].chain + 1;
        if (t->n_edges < t->cap_edges) {
            t->edges[t->n_edges].from = f;
            t->edges[t->n_edges].next = t->slots[i].embedded;
            t->slots[i].embedded = ++t->n_edges;
        }
    }
    return true;
}

/* The checks of the header, step by step. */
static bool
check_steps (const rm_analysis_t *a, const bson_t *steps, const size_t *ord, nest_t *nest,
             nest_left_t *left, size_t *bad, char *why, size_t len)
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
        /* A ring first: its last embed also reads what its first took,
         * but the ring is what the note should say. */
        if (!strcmp (name, "embed") && !nest_ok (nest, name, &body, ref, why, len)) {
            if (!left)
                return false;
            left_add (left, i, why);
            continue;
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
        if (strcmp (name, "embed") && !nest_ok (nest, name, &body, ref, why, len)) {
            if (!left)
                return false;
            left_add (left, i, why);
            continue;
        }
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

static bool
check (const rm_analysis_t *a, const bson_t *steps, const size_t *ord, nest_left_t *left, size_t *bad,
       char *why, size_t len)
{
    nest_t nest;
    bool ok;
    nest_init (&nest, a, steps);
    ok = check_steps (a, steps, ord, &nest, left, bad, why, len);
    nest_destroy (&nest);
    return ok;
}

bool
rm_plan_check (const rm_analysis_t *a, const bson_t *steps, size_t *bad, char *why, size_t len)
{
    return check (a, steps, NULL, NULL, bad, why, len);
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

/* Step bad of the steps checked left out of the plan, and a note saying
 * so: one plain sentence, which recommendation, what its step would have
 * done, and why it may not (the why without its subject). */
static void
leave_out (rm_analysis_t *a, const bson_t *steps, const size_t *ord, size_t bad, const char *why,
           char **ops)
{
    bson_iter_t it, op, w;
    const char *what = "";
    char *note;
    a->plan_skip[ord[bad]] = true;
    bson_iter_init (&it, steps);
    for (size_t k = 0; k <= bad && bson_iter_next (&it); k++)
        if (k == bad && bson_iter_recurse (&it, &op) && bson_iter_next (&op) &&
            bson_iter_recurse (&op, &w) && bson_iter_find (&w, "why") && BSON_ITER_HOLDS_UTF8 (&w))
            what = bson_iter_utf8 (&w, NULL);
    note = bson_strdup_printf ("left out of the plan: %s, recommended for %.*s: it %s; the "
                               "recommendation stays in the report", ops[ord[bad]],
                               (int) strcspn (what, ":"), what, reason_of (why, ord[bad]));
    a->plan_notes = bson_realloc (a->plan_notes, (a->n_plan_notes + 1) * sizeof *a->plan_notes);
    a->plan_notes[a->n_plan_notes++] = note;
}

void
rm_analyze_plan_resolve (rm_analysis_t *a)
{
    bson_t recs, steps;
    bson_iter_t it;
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
        char why[700];
        nest_left_t left = {0};
        bool ok;

        /* The steps checked, by their number among all the recommended. */
        for (size_t k = 0; k < a->n_plan_steps; k++)
            if (!a->plan_skip[k])
                ord[n++] = k;
        ok = check (a, &steps, ord, &left, &bad, why, sizeof why);
        for (size_t k = 0; k < left.n; k++) {
            leave_out (a, &steps, ord, left.at[k], left.why[k], ops);
            bson_free (left.why[k]);
        }
        bson_free (left.at);
        bson_free (left.why);
        if (!ok && bad < n)
            leave_out (a, &steps, ord, bad, why, ops);
        else if (!left.n)
            break;
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
