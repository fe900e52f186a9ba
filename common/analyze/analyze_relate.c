/* The relationships a dump's values show (remodel/analyze.h): a field
 * whose values are mostly found among another collection's _id, or among
 * the values of a field unique there. Keys match as $lookup matches them
 * (rm_analyze_key), so 1, NumberLong(1) and 1.0 are one key.
 *
 * A field whose values sit in arrays holds child references (its
 * collection is the one side: the parent); a plain field is a parent
 * reference from the many side. Children per parent come from the key
 * counts for parent references, and from a second pass, document by
 * document, for child references. */
#include <math.h>
#include <string.h>

#include "analyze_int.h"

/* How much of a field's values must be found for a relationship: chance
 * matches (small numbers, common codes) rarely reach it, and a real
 * reference with a few dangling values does. */
#define MIN_MATCH_RATE RM_ANALYZE_MIN_MATCH
#define MIN_DISTINCT 2

/* A field another's values could be references to, but for the count of
 * its distinct values, known only once the keys are merged: _id, or a
 * top-level field, never an array, in (almost) every document. */
static bool
target_shaped (const rm_collection_t *c, const rm_field_t *f)
{
    if (f->not_key)
        return false;
    if (!strcmp (f->path, "_id"))
        return f->values > 0;
    return !strchr (f->path, '.') && !f->in_array && !f->arrays && c->docs > 1 &&
           f->values * 100 >= c->docs * 99;
}

/* And with (almost) no value twice: real data has the odd duplicate (the
 * Atlas sample's accounts.account_id has one), which a $lookup then
 * matches twice; the report counts them (keyDuplicates). */
static bool
is_target (const rm_collection_t *c, const rm_field_t *f)
{
    if (!strcmp (f->path, "_id"))
        return f->distinct > 0;
    return target_shaped (c, f) && f->distinct * 100 >= f->values * 99;
}

static bool
holds_refs (const rm_field_t *f)
{
    return !f->not_key && f->values > 0 && strcmp (f->path, "_id") != 0;
}

bool
rm_analyze_indexed (const rm_collection_t *c, const char *path)
{
    char *needle;
    bool found;
    if (!strcmp (path, "_id"))
        return true;
    if (!c->metadata)
        return false;
    needle = bson_strdup_printf ("\"key\":{\"%s\":", path);
    found = strstr (c->metadata, needle) != NULL;
    bson_free (needle);
    if (!found) {
        needle = bson_strdup_printf ("\"key\" : { \"%s\" :", path);
        found = strstr (c->metadata, needle) != NULL;
        bson_free (needle);
    }
    return found;
}

/* Children per parent of a parent reference: for each of the parent's
 * keys, how often the children's field holds it. */
static void
count_parents (rm_analysis_t *a, rm_relation_t *r)
{
    rm_field_t *f = &a->cols[r->from].fields[r->field];
    rm_field_t *k = &a->cols[r->to].fields[r->key];
    for (size_t i = 0; i < k->keys.cap; i++) {
        uint64_t n;
        if (!k->keys.slots[i].key)
            continue;
        n = rm_keymap_get (&f->keys, k->keys.slots[i].key);
        rm_dist_add (&r->children, n);
        r->parents_none += n == 0;
    }
}

typedef struct {
    rm_analysis_t *a;
    const rm_keymap_t *target;
    uint64_t n;
    rm_buf_t scratch;
} countctx_t;

/* A reference brings every document holding its key, as $lookup does: a
 * key the target holds twice gives its parents one child more than their
 * references (keyDuplicates). */
static bool
count_found (const bson_iter_t *v, void *ctx)
{
    countctx_t *c = ctx;
    if (v && !BSON_ITER_HOLDS_NULL (v) && !BSON_ITER_HOLDS_ARRAY (v))
        c->n += rm_keymap_get (c->target, rm_analyze_key (v, &c->scratch));
    return true;
}

/* One parent document's references found among its children's keys. */
static bool
count_parent (void *ctx, size_t rel, const uint8_t *doc, uint32_t len, const rm_path_t *path,
              uint64_t seq, bson_error_t *err)
{
    countctx_t *c = ctx;
    rm_relation_t *r = &c->a->rels[rel];
    c->target = &c->a->cols[r->to].fields[r->key].keys;
    c->n = 0;
    rm_path_visit (doc, len, path, true, false, count_found, c);
    rm_dist_add (&r->children, c->n);
    r->parents_none += c->n == 0;
    return true;
}

/* Children per parent of the child-reference relationships, the key
 * tables in memory. */
static bool
count_child_refs (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err)
{
    countctx_t c = {a, NULL, 0, {0}};
    bool ok;
    rm_buf_init (&c.scratch);
    ok = rm_analyze_each_parent (a, ro, count_parent, &c, err);
    rm_buf_destroy (&c.scratch);
    return ok;
}

static bool
refs_shaped (const rm_collection_t *c, const rm_field_t *f)
{
    (void) c;
    return holds_refs (f);
}

/* A field against its own collection's keys is kept only when its name
 * says it holds a parent (manager, reportsTo, parent): a hierarchy; other
 * fields of a collection keyed by small integers fall among its own keys
 * by the ranges alone. */
static rm_pair_t *
hierarchies_named (const rm_analysis_t *a, rm_pair_t *p, size_t *n)
{
    size_t kept = 0;
    for (size_t i = 0; p && i < *n; i++)
        if (p[i].from != p[i].to || rm_hierarchy_named (a->cols[p[i].from].fields[p[i].field].path))
            p[kept++] = p[i];
    *n = kept;
    return p;
}

/* Every field that holds key-like values against the target-shaped fields
 * of its database that could hold them (analyze_pairs.c: found from the
 * keys, not by comparing every pair), in field-number order
 * (rm_analyze_spill_pairs looks them up by it). NULL: err says why. */
static rm_pair_t *
candidates (rm_analysis_t *a, size_t *n, bson_error_t *err)
{
    rm_pairpick_t *pick = rm_pairpick_new (a, refs_shaped, target_shaped);
    if (a->merged) {
        if (!rm_analyze_spill_pick (a, pick, err)) {
            bson_free (rm_pairpick_finish (pick, n));
            *n = SIZE_MAX;
            return NULL;
        }
    } else {
        rm_analyze_pick_in_memory (a, pick);
    }
    return hierarchies_named (a, rm_pairpick_finish (pick, n), n);
}

/* Whether a candidate's two fields have a kind of key in common: if not
 * (strings against ids, say: most candidates), they share nothing, and
 * no key need be looked up to say so. Both ways of counting (in memory,
 * spilled) leave such a pair at zero, so they agree even were two keys
 * of different kinds to have one hash. */
static bool
kinds_meet (const rm_analysis_t *a, const rm_pair_t *p)
{
    return (a->cols[p->from].fields[p->field].key_kinds & a->cols[p->to].fields[p->key].key_kinds) != 0;
}

/* What a candidate's keys share, from the key tables in memory. */
static void
share_in_memory (rm_analysis_t *a, rm_pair_t *p)
{
    const rm_keymap_t *f = &a->cols[p->from].fields[p->field].keys;
    const rm_keymap_t *k = &a->cols[p->to].fields[p->key].keys;
    if (!kinds_meet (a, p))
        return;
    /* The keys both hold, from whichever table is smaller (each is
     * looked up in the other: a cache miss each, and a field with a
     * million keys is often matched against a target of a hundred
     * thousand); the sums are the same either way. Lookups a few ahead
     * are asked for first. */
    bool from_f = f->n <= k->n;
    const rm_keymap_t *fewer = from_f ? f : k, *other = from_f ? k : f;
    for (size_t i = 0; i < fewer->cap; i++) {
        uint64_t key = fewer->slots[i].key, fc, kc;
        if (i + 8 < fewer->cap && fewer->slots[i + 8].key)
            rm_keymap_prefetch (other, fewer->slots[i + 8].key);
        if (!key)
            continue;
        kc = from_f ? rm_keymap_get (k, key) : fewer->slots[i].count;
        fc = from_f ? fewer->slots[i].count : rm_keymap_get (f, key);
        if (kc && fc) {
            p->matched += fc;
            p->distinct++;
            p->repeated += fc > 1;
        }
    }
}

typedef struct {
    rm_analysis_t *a;
    rm_pair_t *pairs;   /* for share_piece */
    size_t *rels;       /* for parents_piece: the relationships to count */
} pieces_t;

static void
share_piece (void *ctx, size_t i)
{
    pieces_t *p = ctx;
    share_in_memory (p->a, &p->pairs[i]);
}

static void
parents_piece (void *ctx, size_t i)
{
    pieces_t *p = ctx;
    count_parents (p->a, &p->a->rels[p->rels[i]]);
}

/* Whether a candidate measured like a relationship: a key unique in its
 * collection, most of the field's values found, more than one of them.
 * Whether it is one is the evidence's to say (analyze_score.c). */
static bool
measured (const rm_analysis_t *a, const rm_pair_t *p, double *rate)
{
    const rm_field_t *f = &a->cols[p->from].fields[p->field];
    const rm_collection_t *t = &a->cols[p->to];
    *rate = (double) p->matched / (double) f->values;
    return is_target (t, &t->fields[p->key]) && *rate >= MIN_MATCH_RATE && p->distinct >= MIN_DISTINCT;
}

/* Whether candidate x ranks before y for the same field: the surer level,
 * then the higher score, then the higher match rate (then the first). */
static bool
ranks_before (const rm_evidence_t *x, double xrate, const rm_evidence_t *y, double yrate)
{
    if (x->level != y->level)
        return x->level < y->level;
    if (x->score != y->score)
        return x->score > y->score;
    return xrate > yrate;
}

/* Scores this close are a tie: the evidence cannot tell the targets apart
 * (a point is one piece of evidence; half of one is noise in the chance). */
#define TIE_MARGIN 0.5

/* Whether a name ties the field to its target (2 points for a name). */
static bool
names_tie (const rm_evidence_t *ev)
{
    for (uint8_t i = 1; i < ev->n; i++)
        if (ev->item[i].points >= 2)
            return true;
    return false;
}

static void
reject (rm_analysis_t *a, const rm_pair_t *p, const rm_evidence_t *ev)
{
    rm_rejected_t *x;
    a->rejected = bson_realloc (a->rejected, (a->n_rejected + 1) * sizeof *a->rejected);
    x = &a->rejected[a->n_rejected++];
    x->pair = *p;
    x->refs = a->cols[p->from].fields[p->field].values;
    x->ev = *ev;
    x->ev.level = RM_LEVEL_REJECTED;
}

static void
relation_of (rm_analysis_t *a, const rm_pair_t *p, const rm_evidence_t *ev)
{
    const rm_field_t *f = &a->cols[p->from].fields[p->field];
    rm_relation_t *r;
    a->rels = bson_realloc (a->rels, (a->n_rels + 1) * sizeof *a->rels);
    r = &a->rels[a->n_rels++];
    memset (r, 0, sizeof *r);
    r->from = p->from;
    r->field = p->field;
    r->to = p->to;
    r->key = p->key;
    r->refs = f->values;
    r->matched = p->matched;
    r->distinct_matched = p->distinct;
    r->child_refs = f->arrays > 0 || f->in_array;
    r->shared = r->child_refs ? p->repeated : 0;
    r->orphans = r->refs - r->matched;
    /* The field the join looks documents up by: the children's key for
     * child references, the children's reference for a parent reference. */
    r->indexed = r->child_refs ? rm_analyze_indexed (&a->cols[r->to], a->cols[r->to].fields[r->key].path)
                               : rm_analyze_indexed (&a->cols[r->from], f->path);
    r->ev = *ev;
}

/* One field's candidates (pairs[i..end)): the best that the evidence does
 * not reject is its relationship; every other that measured like one is
 * listed as rejected, with why. */
static void
judge_field (rm_analysis_t *a, rm_pair_t *pairs, size_t i, size_t end)
{
    rm_evidence_t *ev = bson_malloc0 ((end - i) * sizeof *ev);
    double *rates = bson_malloc0 ((end - i) * sizeof *rates);
    bool *in = bson_malloc0 ((end - i) * sizeof *in);
    size_t best = end;

    for (size_t k = i; k < end; k++) {
        const rm_pair_t *p = &pairs[k];
        const rm_collection_t *fc = &a->cols[p->from], *tc = &a->cols[p->to];
        bool target = false;
        in[k - i] = measured (a, p, &rates[k - i]) ||
                    (rm_hints_reference (a->hints, fc->ns, fc->fields[p->field].path, tc->ns,
                                         tc->fields[p->key].path, &target) > 0 &&
                     target && p->matched > 0);
        if (!in[k - i])
            continue;
        rm_analyze_score (a, p, &ev[k - i]);
        if (best == end || ranks_before (&ev[k - i], rates[k - i], &ev[best - i], rates[best - i]))
            best = k;
    }
    /* Two targets the values fit as well (the same level, scores within
     * TIE_MARGIN, neither named by the field or the hints): say so and
     * ask, never pick one silently. */
    if (best < end && ev[best - i].level != RM_LEVEL_REJECTED && !ev[best - i].hinted) {
        size_t second = end;
        for (size_t k = i; k < end; k++)
            if (in[k - i] && k != best && ev[k - i].level == ev[best - i].level &&
                !ev[k - i].same_values && fabs (ev[k - i].score - ev[best - i].score) < TIE_MARGIN &&
                !names_tie (&ev[best - i]) && !names_tie (&ev[k - i]))
                second = k;
        if (second < end) {
            /* Every target as good, named: the hints pick one. */
            size_t tl = 0;
            rm_evidence_t *b0 = &ev[best - i];
            for (size_t k = i; k < end; k++)
                if (in[k - i] && k != best && ev[k - i].level == b0->level && !ev[k - i].same_values &&
                    fabs (ev[k - i].score - b0->score) < TIE_MARGIN && !names_tie (&ev[k - i]) &&
                    tl < sizeof b0->tie)
                    tl += (size_t) snprintf (b0->tie + tl, sizeof b0->tie - tl, "%s%s.%s", tl ? ", " : "",
                                             a->cols[pairs[k].to].ns,
                                             a->cols[pairs[k].to].fields[pairs[k].key].path);
            const rm_collection_t *fc = &a->cols[pairs[best].from];
            const rm_collection_t *t1 = &a->cols[pairs[best].to], *t2 = &a->cols[pairs[second].to];
            rm_evidence_t *b = &ev[best - i];
            (void) t2;
            snprintf (ev[second - i].tie, sizeof ev[second - i].tie, "%s.%s", t1->ns,
                      t1->fields[pairs[best].key].path);
            b->level = RM_LEVEL_POSSIBLE;
            if (b->n < RM_EVIDENCE_MAX) {
                snprintf (b->item[b->n].what, sizeof b->item[0].what, "tied with %s (score %.1f): "
                          "the values fit each as well; settle it with --hints {\"references\": "
                          "{\"%s.%s\": \"%s.%s\"}} or the one meant", b->tie,
                          ev[second - i].score, fc->ns, fc->fields[pairs[best].field].path, t1->ns,
                          t1->fields[pairs[best].key].path);
                b->item[b->n++].points = 0;
            }
        }
    }
    if (best < end && ev[best - i].level != RM_LEVEL_REJECTED)
        relation_of (a, &pairs[best], &ev[best - i]);
    else
        best = end;
    for (size_t k = i; k < end; k++) {
        if (!in[k - i] || k == best)
            continue;
        if (best < end && ev[k - i].level != RM_LEVEL_REJECTED) {
            const rm_collection_t *tc = &a->cols[pairs[best].to];
            if (ev[k - i].tie[0] && ev[k - i].n < RM_EVIDENCE_MAX) {
                snprintf (ev[k - i].item[ev[k - i].n].what, sizeof ev[k - i].item[0].what,
                          "tied with %s.%s: the values fit both, and the hints say which",
                          tc->ns, tc->fields[pairs[best].key].path);
                ev[k - i].item[ev[k - i].n++].points = 0;
            } else if (ev[k - i].n < RM_EVIDENCE_MAX) {
                snprintf (ev[k - i].item[ev[k - i].n].what, sizeof ev[k - i].item[0].what,
                          "the same values are better explained by %s.%s",
                          tc->ns, tc->fields[pairs[best].key].path);
                ev[k - i].item[ev[k - i].n++].points = 0;
            }
        }
        reject (a, &pairs[k], &ev[k - i]);
    }
    bson_free (ev);
    bson_free (rates);
    bson_free (in);
}

/* Strings no name ties found among a unique field's (natural_shape) are a
 * copy of the same value, not a reference, where the collection already
 * references the target's collection by another field that a name or _id
 * ties: an order's billing address beside its customerId. */
static void
judge_copies (rm_analysis_t *a)
{
    size_t kept = 0;
    for (size_t i = 0; i < a->n_rels; i++) {
        rm_relation_t *r = &a->rels[i];
        bool copy = false;
        for (size_t k = 0; k < a->n_rels && r->ev.natural_shape && !r->ev.hinted; k++)
            copy |= k != i && a->rels[k].from == r->from && a->rels[k].to == r->to &&
                    !a->rels[k].ev.natural_shape;
        if (copy) {
            rm_pair_t p = {r->from, r->field, r->to, r->key, r->matched, r->distinct_matched,
                           r->shared};
            const rm_collection_t *tc = &a->cols[r->to];
            r->ev.same_values = true;
            if (r->ev.n < RM_EVIDENCE_MAX) {
                snprintf (r->ev.item[r->ev.n].what, sizeof r->ev.item[0].what,
                          "same values: %s references %s by a key already, so equal strings "
                          "are a copy of the same value, not a reference",
                          a->cols[r->from].coll, tc->coll);
                r->ev.item[r->ev.n++].points = 0;
            }
            reject (a, &p, &r->ev);
            continue;
        }
        if (kept != i)
            a->rels[kept] = *r;
        kept++;
    }
    a->n_rels = kept;
}

/* The shape's evidence, now that children per parent are counted: a
 * relationship it rejects joins the rejected, and two-way is judged
 * again. (Only each field's best candidate is counted, so the shape
 * cannot promote another in its place: counting every candidate would
 * cost a pass each.) */
static void
judge_shapes (rm_analysis_t *a)
{
    size_t kept = 0;
    for (size_t i = 0; i < a->n_rels; i++) {
        rm_relation_t *r = &a->rels[i];
        rm_analyze_shape (a, r);
        if (r->ev.level == RM_LEVEL_REJECTED) {
            rm_pair_t p = {r->from, r->field, r->to, r->key, r->matched, r->distinct_matched,
                           r->shared};
            reject (a, &p, &r->ev);
            continue;
        }
        if (kept != i)
            a->rels[kept] = *r;
        kept++;
    }
    a->n_rels = kept;
    for (size_t i = 0; i < a->n_rels; i++) {
        rm_relation_t *r = &a->rels[i];
        r->two_way = false;
        for (size_t k = 0; k < a->n_rels; k++)
            if (k != i && a->rels[k].from == r->to && a->rels[k].to == r->from &&
                RM_REL_ACTS (&a->rels[k]) && RM_REL_ACTS (r))
                r->two_way = true;
    }
}

bool
rm_analyze_relate (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err)
{
    size_t n, n_counted = 0;
    rm_pair_t *pairs = candidates (a, &n, err);
    bool spilled = a->merged != NULL, any_child_refs = false;
    pieces_t pieces = {a, pairs, NULL};

    if (!pairs && n == SIZE_MAX)
        return false;

    if (spilled && !rm_analyze_spill_pairs (a, pairs, n, err)) {
        bson_free (pairs);
        return false;
    }
    /* What every candidate shares, on both cores; then each field's
     * candidates, judged together. */
    if (!spilled)
        rm_analyze_split (n, share_piece, &pieces);
    for (size_t i = 0; i < n; i++)
        if (!kinds_meet (a, &pairs[i]))
            pairs[i].matched = pairs[i].distinct = pairs[i].repeated = 0;
    for (size_t i = 0; i < n;) {
        size_t end = i;
        while (end < n && pairs[end].from == pairs[i].from && pairs[end].field == pairs[i].field)
            end++;
        judge_field (a, pairs, i, end);
        i = end;
    }
    bson_free (pairs);
    judge_copies (a);
    pieces.rels = bson_malloc ((a->n_rels ? a->n_rels : 1) * sizeof *pieces.rels);
    for (size_t i = 0; i < a->n_rels; i++) {
        rm_relation_t *r = &a->rels[i];
        any_child_refs |= r->child_refs;
        for (size_t k = 0; k < a->n_rels; k++)
            if (k != i && a->rels[k].from == r->to && a->rels[k].to == r->from &&
                RM_REL_ACTS (&a->rels[k]) && RM_REL_ACTS (r))
                r->two_way = true;
        if (!spilled && !r->child_refs)
            pieces.rels[n_counted++] = i;
    }
    rm_analyze_split (n_counted, parents_piece, &pieces);
    bson_free (pieces.rels);
    if (spilled && !rm_analyze_spill_parents (a, err))
        return false;
    if (any_child_refs &&
        !(spilled ? rm_analyze_spill_child_refs (a, ro, err) : count_child_refs (a, ro, err)))
        return false;
    judge_shapes (a);
    return rm_analyze_dups (a, ro, err) && rm_analyze_import (a, ro, err);
}
