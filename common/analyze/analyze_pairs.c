/* The candidates of the relationships (analyze_int.h): which field could
 * hold references to which, found without comparing every field with
 * every field of every other collection (that was quadratic in the
 * collections: 800 collections took seconds and gigabytes).
 *
 * A candidate measures like a relationship only when most of its field's
 * occurrences (RM_ANALYZE_MIN_MATCH of them) are keys of the target. So
 * take the field's most frequent keys until they cover more than the rest
 * (1 - RM_ANALYZE_MIN_MATCH) of its occurrences: a target holding none of
 * them finds too few to measure. Those keys go into one hash table; each
 * target field's keys are looked up in it once (or, for a target with
 * more keys than the table, the table's in the target's), and a hit names
 * a field that may hold references to it. The work is the keys, once
 * each (at most), plus
 * the candidates found: linear, but where the values themselves say
 * little (small integers that every collection holds), when it is the
 * answer that is large. There each field keeps its RM_ANALYZE_TARGETS_KEPT
 * likeliest targets (a name that ties them first, then the keys found),
 * and counts the rest (targetsLeftOut in the report). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"

typedef struct {
    uint32_t to;        /* the target's RM_FIELD_GID */
    bool tie;           /* a name ties them */
    bool id;            /* the target is _id */
    uint64_t found;     /* the field's occurrences among the keys looked at */
} cand_t;

struct rm_pairpick {
    rm_analysis_t *a;
    size_t *base;       /* per collection: its first field's dense number */
    size_t n_fields;
    uint8_t *role;      /* per dense field: RM_PICK_REFS | RM_PICK_TARGET */
    uint32_t *stem;     /* per dense field: its name's stem (hashed) */
    uint32_t *coll_stem; /* per collection: its name's stem */
    uint32_t *db;       /* per collection: its database's number */
    cand_t *top;        /* RM_ANALYZE_TARGETS_KEPT per dense field */
    uint8_t *n_top;
    bool *hinted;       /* per dense field: the hints name its target */
};

/* A name's stem, hashed: its letters and digits in lower case, less a
 * trailing id, ids, ref, refs or key and a plural s ("customer_id",
 * "customerId" and "customers" are one stem). Only ranks the targets
 * kept; the evidence judges the names properly (analyze_score.c). */
static uint32_t
stem_hash (const char *name, bool suffix)
{
    static const char *const tails[] = {"ids", "id", "refs", "ref", "key", NULL};
    char s[128];
    size_t n = 0;
    uint32_t h = 2166136261u;
    for (const char *p = name; *p && n + 1 < sizeof s; p++)
        if (isalnum ((unsigned char) *p))
            s[n++] = (char) tolower ((unsigned char) *p);
    for (size_t i = 0; suffix && tails[i]; i++) {
        size_t t = strlen (tails[i]);
        if (n > t && !memcmp (s + n - t, tails[i], t)) {
            n -= t;
            break;
        }
    }
    if (n > 3 && s[n - 1] == 's')
        n--;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t) s[i]) * 16777619u;
    return n ? h | 1 : 0;
}

static int
cmp_db (const void *x, const void *y, void *ctx)
{
    const rm_analysis_t *a = ctx;
    return strcmp (a->cols[*(const size_t *) x].db, a->cols[*(const size_t *) y].db);
}

rm_pairpick_t *
rm_pairpick_new (rm_analysis_t *a, rm_field_pred_t is_refs, rm_field_pred_t is_target)
{
    rm_pairpick_t *p = bson_malloc0 (sizeof *p);
    size_t n = a->n_cols ? a->n_cols : 1, *order = bson_malloc (n * sizeof *order);
    p->a = a;
    p->base = bson_malloc0 (n * sizeof *p->base);
    p->coll_stem = bson_malloc0 (n * sizeof *p->coll_stem);
    p->db = bson_malloc0 (n * sizeof *p->db);
    for (size_t ci = 0; ci < a->n_cols; ci++) {
        p->base[ci] = p->n_fields;
        p->n_fields += a->cols[ci].n_fields;
        p->coll_stem[ci] = stem_hash (a->cols[ci].coll, false);
        order[ci] = ci;
    }
    /* Databases numbered by sorting their names: no strcmp per hit. */
    qsort_r (order, a->n_cols, sizeof *order, cmp_db, a);
    for (size_t i = 0; i < a->n_cols; i++)
        p->db[order[i]] = i && !strcmp (a->cols[order[i]].db, a->cols[order[i - 1]].db)
                              ? p->db[order[i - 1]] : (uint32_t) i;
    bson_free (order);
    n = p->n_fields ? p->n_fields : 1;
    p->role = bson_malloc0 (n);
    p->stem = bson_malloc0 (n * sizeof *p->stem);
    p->top = bson_malloc0 (n * RM_ANALYZE_TARGETS_KEPT * sizeof *p->top);
    p->n_top = bson_malloc0 (n);
    p->hinted = bson_malloc0 (n * sizeof *p->hinted);
    for (size_t ci = 0; ci < a->n_cols; ci++) {
        rm_collection_t *c = &a->cols[ci];
        for (size_t fi = 0; fi < c->n_fields; fi++) {
            size_t d = p->base[ci] + fi;
            const char *dot = strrchr (c->fields[fi].path, '.');
            bool to = false;
            c->fields[fi].targets_left = 0;
            p->role[d] = (is_refs (c, &c->fields[fi]) ? RM_PICK_REFS : 0) |
                         (is_target (c, &c->fields[fi]) ? RM_PICK_TARGET : 0);
            p->stem[d] = stem_hash (dot ? dot + 1 : c->fields[fi].path, true);
            /* A field the hints send somewhere: every target of its
             * database is its candidate, as before (hints are few). */
            p->hinted[d] = (p->role[d] & RM_PICK_REFS) &&
                           rm_hints_reference (a->hints, c->ns, c->fields[fi].path, "", "", &to) > 0;
        }
    }
    return p;
}

uint8_t
rm_pairpick_role (const rm_pairpick_t *p, uint32_t gid)
{
    size_t ci = gid / RM_ANALYZE_MAX_PATHS, fi = gid % RM_ANALYZE_MAX_PATHS;
    return ci < p->a->n_cols && fi < p->a->cols[ci].n_fields ? p->role[p->base[ci] + fi] : 0;
}

bool
rm_pairpick_may_join (const rm_pairpick_t *p, uint32_t from, uint32_t to)
{
    /* $lookup joins collections of one database; a field against its
     * own collection's key is a hierarchy (analyze_relate.c), never a
     * field against itself. */
    return from != to && p->db[from / RM_ANALYZE_MAX_PATHS] == p->db[to / RM_ANALYZE_MAX_PATHS];
}

/* Whether x is likelier than y: a name ties them, more found, _id, then
 * the first target (so that the choice never depends on the order of
 * the offers). */
static bool
better (const cand_t *x, const cand_t *y)
{
    if (x->tie != y->tie)
        return x->tie;
    if (x->found != y->found)
        return x->found > y->found;
    if (x->id != y->id)
        return x->id;
    return x->to < y->to;
}

void
rm_pairpick_offer (rm_pairpick_t *p, uint32_t from, uint32_t to, uint64_t found)
{
    rm_analysis_t *a = p->a;
    size_t fc = from / RM_ANALYZE_MAX_PATHS, tc = to / RM_ANALYZE_MAX_PATHS;
    size_t d = p->base[fc] + from % RM_ANALYZE_MAX_PATHS, t = p->base[tc] + to % RM_ANALYZE_MAX_PATHS;
    cand_t c = {to, false, false, found}, *top = &p->top[d * RM_ANALYZE_TARGETS_KEPT];
    rm_field_t *f = &a->cols[fc].fields[from % RM_ANALYZE_MAX_PATHS];
    size_t worst = 0;
    if (p->hinted[d])
        return;
    c.tie = p->stem[d] && (p->stem[d] == p->coll_stem[tc] || p->stem[d] == p->stem[t]);
    c.id = !strcmp (a->cols[tc].fields[to % RM_ANALYZE_MAX_PATHS].path, "_id");
    if (p->n_top[d] < RM_ANALYZE_TARGETS_KEPT) {
        top[p->n_top[d]++] = c;
        return;
    }
    for (size_t i = 1; i < RM_ANALYZE_TARGETS_KEPT; i++)
        if (better (&top[worst], &top[i]))
            worst = i;
    f->targets_left++;
    if (better (&c, &top[worst]))
        top[worst] = c;
}

static int
cmp_pair (const void *x, const void *y)
{
    const rm_pair_t *p = x, *q = y;
    uint32_t a = RM_FIELD_GID (p->from, p->field), b = RM_FIELD_GID (q->from, q->field);
    if (a != b)
        return a < b ? -1 : 1;
    a = RM_FIELD_GID (p->to, p->key);
    b = RM_FIELD_GID (q->to, q->key);
    return a < b ? -1 : a > b;
}

static void
push (rm_pair_t **v, size_t *n, size_t *cap, size_t from, size_t field, uint32_t to)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = bson_realloc (*v, *cap * sizeof **v);
    }
    memset (&(*v)[*n], 0, sizeof **v);
    (*v)[*n].from = from;
    (*v)[*n].field = field;
    (*v)[*n].to = to / RM_ANALYZE_MAX_PATHS;
    (*v)[*n].key = to % RM_ANALYZE_MAX_PATHS;
    (*n)++;
}

rm_pair_t *
rm_pairpick_finish (rm_pairpick_t *p, size_t *n)
{
    rm_analysis_t *a = p->a;
    rm_pair_t *v = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t ci = 0; ci < a->n_cols; ci++)
        for (size_t fi = 0; fi < a->cols[ci].n_fields; fi++) {
            size_t d = p->base[ci] + fi;
            if (p->hinted[d]) {
                for (size_t ti = 0; ti < a->n_cols; ti++)
                    for (size_t ki = 0; ki < a->cols[ti].n_fields; ki++)
                        if ((p->role[p->base[ti] + ki] & RM_PICK_TARGET) &&
                            rm_pairpick_may_join (p, RM_FIELD_GID (ci, fi), RM_FIELD_GID (ti, ki)))
                            push (&v, n, &cap, ci, fi, RM_FIELD_GID (ti, ki));
                continue;
            }
            for (size_t i = 0; i < p->n_top[d]; i++)
                push (&v, n, &cap, ci, fi, p->top[d * RM_ANALYZE_TARGETS_KEPT + i].to);
        }
    /* In field-number order, as rm_analyze_spill_pairs and the judging
     * (a field's candidates side by side) want them. */
    if (*n)
        qsort (v, *n, sizeof *v, cmp_pair);
    bson_free (p->base);
    bson_free (p->role);
    bson_free (p->stem);
    bson_free (p->coll_stem);
    bson_free (p->db);
    bson_free (p->top);
    bson_free (p->n_top);
    bson_free (p->hinted);
    bson_free (p);
    return v;
}

/* The in-memory search: the keys that any target must hold, one table. */
typedef struct {
    uint64_t key;
    uint32_t from;      /* RM_FIELD_GID */
    uint32_t next;      /* the next entry of the same key + 1 (0: none) */
} sentry_t;

typedef struct {
    uint64_t count, key;
} kc_t;

/* Of a field's keys: their occurrences in all, and the most of one key. */
typedef struct {
    uint64_t total, most;
} held_t;

static inline void
kc_swap (kc_t *x, kc_t *y)
{
    kc_t t = *x;
    *x = *y;
    *y = t;
}

/* Appends to *e the keys of f that any target must hold for f to
 * measure: the most frequent until they cover more than the share of
 * occurrences that may go unfound. Any keys covering that much will do
 * (a target holding none of them finds too few), so the fewest are found
 * by selection, not by sorting all of a field's keys (a field of a
 * million keys sorted was a tenth of an analysis): each round splits the
 * keys left around one count, takes the larger ones whole when they do
 * not cover enough, and goes on among the rest. */
static void
must_hold (const rm_field_t *f, uint32_t gid, sentry_t **e, size_t *n, size_t *cap, kc_t **kc,
           size_t *kc_cap, held_t *held)
{
    size_t m = 0, lo = 0, hi;
    uint64_t covered = 0, total = 0;
    /* Unfound, the rest would keep the match rate below the least:
     * covered > (1 - min) * values, in whole numbers. */
    double enough = (1.0 - RM_ANALYZE_MIN_MATCH) * (double) f->values + 1e-9 * (double) f->values;
    if (*kc_cap < f->keys.n) {
        *kc_cap = f->keys.n;
        *kc = bson_realloc (*kc, *kc_cap * sizeof **kc);
    }
    for (size_t i = 0; i < f->keys.cap; i++)
        if (f->keys.slots[i].key) {
            (*kc)[m].key = f->keys.slots[i].key;
            total += (*kc)[m++].count = f->keys.slots[i].count;
            if (f->keys.slots[i].count > held->most)
                held->most = f->keys.slots[i].count;
        }
    held->total = total;
    /* kc[0, lo) taken, kc[lo, hi) to choose from, each of them as
     * frequent as any past hi and no more than any taken. */
    hi = (double) total > enough ? m : 0;
    lo = hi ? 0 : m;
    while (lo < hi) {
        uint64_t pivot = (*kc)[lo + (hi - lo) / 2].count, more = 0;
        size_t gt = lo, i = lo, lt = hi;
        /* [lo, gt) more frequent than pivot, [gt, lt) as frequent,
         * [lt, hi) less. */
        while (i < lt) {
            if ((*kc)[i].count > pivot) {
                more += (*kc)[i].count;
                kc_swap (&(*kc)[gt++], &(*kc)[i++]);
            } else if ((*kc)[i].count < pivot) {
                kc_swap (&(*kc)[i], &(*kc)[--lt]);
            } else {
                i++;
            }
        }
        if ((double) (covered + more) > enough) {
            hi = gt;
            continue;
        }
        covered += more;
        for (lo = gt; lo < lt && (double) covered <= enough;)
            covered += (*kc)[lo++].count;
        if ((double) covered > enough)
            break;
    }
    if (*n + lo > *cap) {
        while (*n + lo > *cap)
            *cap = *cap ? *cap * 2 : 1024;
        *e = bson_realloc (*e, *cap * sizeof **e);
    }
    for (size_t i = 0; i < lo; i++) {
        (*e)[*n].key = (*kc)[i].key;
        (*e)[*n].from = gid;
        (*n)++;
    }
}

/* The occurrences of f's keys that k holds too, from the smaller table;
 * 0 as soon as they cannot reach least (most candidates share a few keys
 * by chance: two columns of unrelated numbers, which need not be read to
 * the end). From f's side, what k lacks so far bounds them; from k's,
 * what is found plus k's keys still to read at f's most per key. */
static uint64_t
shared (const rm_keymap_t *f, const rm_keymap_t *k, const held_t *held, double least)
{
    /* f's side also when k's has more keys than f's side reads before a
     * miss stops it (the share of f's occurrences that may go unfound):
     * k's side stops late, when what is left at f's most per key cannot
     * make it up. */
    bool from_f = f->n <= k->n ||
                  (held->total && (double) f->n * ((double) held->total - least) < (double) k->n * (double) held->total);
    const rm_keymap_t *fewer = from_f ? f : k, *other = from_f ? k : f;
    uint64_t sum = 0, lacking = 0;
    size_t left = fewer->n;
    for (size_t i = 0; i < fewer->cap; i++) {
        uint64_t key = fewer->slots[i].key, in_other;
        if (!key)
            continue;
        left--;
        if ((in_other = rm_keymap_get (other, key)))
            sum += from_f ? fewer->slots[i].count : in_other;
        else if (from_f)
            lacking += fewer->slots[i].count;
        if ((from_f ? (double) (held->total - lacking) : (double) sum + (double) left * (double) held->most) <
            least)
            return 0;
    }
    return sum;
}

/* The home of key in a table of 1 << bits slots: the product's high
 * bits. Not its low bits, the home in the fields' own tables
 * (RM_KEYMAP_HOME): the keys taken from one are read in that order, so
 * that a prefix of them shares low bits, and would pile up here. */
static inline size_t
home (uint64_t key, unsigned bits)
{
    return (size_t) ((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

/* How many lookups ahead a target's slot is asked for. */
#define UNIQ_AHEAD 16

/* The entries of key's chain in the table (e[x - 1] for each x). */
static inline uint32_t
chain_of (const uint32_t *head, size_t hcap, unsigned bits, const sentry_t *e, uint64_t key)
{
    size_t h = home (key, bits);
    while (head[h] && e[head[h] - 1].key != key)
        h = (h + 1) & (hcap - 1);
    return head[h];
}

/* The fields whose chain (e[x - 1]...) may reach target to: each once in
 * touched, stamped in mark. */
static inline void
touch (const rm_pairpick_t *p, const sentry_t *e, uint32_t x, uint32_t to, uint32_t stamp, uint32_t *mark,
       uint32_t *touched, size_t *n_touched)
{
    for (; x; x = e[x - 1].next) {
        uint32_t from = e[x - 1].from;
        size_t d = p->base[from / RM_ANALYZE_MAX_PATHS] + from % RM_ANALYZE_MAX_PATHS;
        if (mark[d] != stamp && rm_pairpick_may_join (p, from, to)) {
            mark[d] = stamp;
            touched[(*n_touched)++] = from;
        }
    }
}

void
rm_analyze_pick_in_memory (rm_analysis_t *a, rm_pairpick_t *p)
{
    sentry_t *e = NULL;
    size_t n = 0, cap = 0, kc_cap = 0, hcap = 16, n_uniq = 0;
    unsigned bits = 4;
    kc_t *kc = NULL;
    uint32_t *head, *mark, *touched, *uniq;
    uint64_t *ukey;
    size_t n_touched;
    held_t *held = bson_malloc0 ((p->n_fields ? p->n_fields : 1) * sizeof *held);

    for (size_t ci = 0; ci < a->n_cols; ci++)
        for (size_t fi = 0; fi < a->cols[ci].n_fields; fi++) {
            size_t d = p->base[ci] + fi;
            if ((p->role[d] & RM_PICK_REFS) && !p->hinted[d])
                must_hold (&a->cols[ci].fields[fi], RM_FIELD_GID (ci, fi), &e, &n, &cap, &kc, &kc_cap, &held[d]);
        }
    bson_free (kc);
    while (hcap < n * 2)
        hcap *= 2, bits++;
    /* Open addressing by key: the first entry of each key + 1; uniq, the
     * slot of each key once (then its chain). */
    head = bson_malloc0 (hcap * sizeof *head);
    uniq = bson_malloc ((n ? n : 1) * sizeof *uniq);
    for (size_t i = 0; i < n; i++) {
        size_t h = home (e[i].key, bits);
        while (head[h] && e[head[h] - 1].key != e[i].key)
            h = (h + 1) & (hcap - 1);
        if (!head[h])
            uniq[n_uniq++] = (uint32_t) h;
        e[i].next = head[h];
        head[h] = (uint32_t) (i + 1);
    }
    /* Each key once, and its chain: what a target with more keys is
     * asked, its slots asked for into the cache ahead of the lookups. */
    ukey = bson_malloc ((n_uniq ? n_uniq : 1) * sizeof *ukey);
    for (size_t u = 0; u < n_uniq; u++) {
        uniq[u] = head[uniq[u]];
        ukey[u] = e[uniq[u] - 1].key;
    }
    mark = bson_malloc0 ((p->n_fields ? p->n_fields : 1) * sizeof *mark);
    touched = bson_malloc ((p->n_fields ? p->n_fields : 1) * sizeof *touched);
    for (size_t ti = 0; ti < a->n_cols; ti++)
        for (size_t ki = 0; ki < a->cols[ti].n_fields; ki++) {
            const rm_keymap_t *m = &a->cols[ti].fields[ki].keys;
            uint32_t to = RM_FIELD_GID (ti, ki), stamp = (uint32_t) (p->base[ti] + ki + 1);
            if (!n || !(p->role[p->base[ti] + ki] & RM_PICK_TARGET))
                continue;
            n_touched = 0;
            /* The keys in common, from the side with fewer: a target of
             * a million keys is asked for the table's few thousand. */
            if (n_uniq < m->n) {
                for (size_t u = 0; u < n_uniq; u++) {
                    if (u + UNIQ_AHEAD < n_uniq)
                        rm_keymap_prefetch (m, ukey[u + UNIQ_AHEAD]);
                    if (rm_keymap_get (m, ukey[u]))
                        touch (p, e, uniq[u], to, stamp, mark, touched, &n_touched);
                }
            } else {
                for (size_t s = 0; s < m->cap; s++)
                    if (m->slots[s].key)
                        touch (p, e, chain_of (head, hcap, bits, e, m->slots[s].key), to, stamp, mark, touched,
                               &n_touched);
            }
            /* The fields that may reach this target: what they share,
             * counted as the spilled search counts it (all of it), so
             * that both offer the same pairs. */
            for (size_t i = 0; i < n_touched; i++) {
                uint32_t from = touched[i];
                const rm_field_t *f = &a->cols[from / RM_ANALYZE_MAX_PATHS].fields[from % RM_ANALYZE_MAX_PATHS];
                size_t d = p->base[from / RM_ANALYZE_MAX_PATHS] + from % RM_ANALYZE_MAX_PATHS;
                double least = RM_ANALYZE_MIN_MATCH * (double) f->values * (1 - 1e-9);
                uint64_t all = shared (&f->keys, m, &held[d], least);
                if ((double) all >= least)
                    rm_pairpick_offer (p, from, to, all);
            }
        }
    bson_free (head);
    bson_free (uniq);
    bson_free (ukey);
    bson_free (mark);
    bson_free (touched);
    bson_free (held);
    bson_free (e);
}
