/* The analysis in bounded memory (remodel/analyze.h, --memory): the join
 * keys are what grows with the data, so past a sixth of the budget every key
 * table goes to an external sorter as (key, field, count) records and is
 * freed. After pass 1 the records are merged in key order into one file of
 * (key, field, total) entries: the keys of all fields side by side, a group
 * per key. Every question the relationships ask of the key tables (how many
 * distinct keys, which are found in another field, how often) is then
 * answered by reading the groups in order, and children per parent of
 * child references by sorting pass 2's references by key, joining them
 * with the groups and sorting the matches by document. The answers are the
 * in-memory ones exactly: the same 64-bit keys, counted the same way. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "remodel/sorter.h"
#include "remodel/tmppath.h"
#include "sortkey.h"

/* One entry of the merged file: a field's key and how often it occurred. */
typedef struct {
    uint64_t key, count;
    uint32_t gid; /* RM_FIELD_GID */
    uint32_t pad;
} entry_t;

/* Entries read or written a block at a time: a call into stdio per entry
 * (its lock and copy) was a tenth of a spilled analysis's main thread. */
#define BLOCK 512

/* The entries of one key, read from the merged file in order. */
typedef struct {
    FILE *f;
    entry_t blk[BLOCK]; /* read ahead: blk[at..got) are next */
    size_t at, got;
    entry_t next;  /* the first entry of the group after this one */
    bool has_next, eof;
    uint64_t key;
    entry_t *e;
    size_t n, cap;
} groups_t;

static rm_field_t *
field_of (rm_analysis_t *a, uint32_t gid)
{
    return &a->cols[gid / RM_ANALYZE_MAX_PATHS].fields[gid % RM_ANALYZE_MAX_PATHS];
}

static void
io_error (rm_analysis_t *a, const char *what, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_IO, "analyze: %s the spilled join keys (%s): %s", what,
                  a->merged_path ? a->merged_path : rm_tmpdir (a->tmpdir), strerror (errno));
}

bool
rm_analyze_spill_keys (rm_analysis_t *a, bson_error_t *err)
{
    uint8_t k[12], v[8];
    if (!a->spill && !(a->spill = rm_sorter_new (a->memory / 2, a->tmpdir, NULL, NULL))) {
        rm_error_set (err, RM_ERR_IO, "analyze: cannot start a sort under %s", rm_tmpdir (a->tmpdir));
        return false;
    }
    for (size_t ci = 0; ci < a->n_cols; ci++) {
        rm_collection_t *c = &a->cols[ci];
        /* In the first pass, the adds' worker's tables, while the walk
         * adds fields (n_fields is the walk's): all of them, those past
         * the fields empty. */
        size_t n = c->pass_keys ? RM_ANALYZE_MAX_PATHS : c->n_fields;
        for (size_t fi = 0; fi < n; fi++) {
            rm_keymap_t *m = c->pass_keys ? &c->pass_keys[fi] : &c->fields[fi].keys;
            for (size_t i = 0; i < m->cap; i++) {
                if (!m->slots[i].key)
                    continue;
                rm_put_be64 (k, m->slots[i].key);
                rm_put_be32 (k + 8, RM_FIELD_GID (ci, fi));
                rm_put_be64 (v, m->slots[i].count);
                if (!rm_sorter_add (a->spill, k, sizeof k, v, sizeof v, err))
                    return false;
            }
            rm_keymap_destroy (m);
        }
        c->key_bytes = 0;
    }
    a->key_bytes = 0;
    return true;
}

/* The entries of out (n of them) into the merged file. */
static bool
put_block (rm_analysis_t *a, const entry_t *out, size_t *n, bson_error_t *err)
{
    if (*n && fwrite (out, sizeof *out, *n, a->merged) != *n) {
        io_error (a, "writing", err);
        return false;
    }
    *n = 0;
    return true;
}

static bool
put_entry (rm_analysis_t *a, entry_t *out, size_t *n, const entry_t *e, bson_error_t *err)
{
    rm_field_t *f = field_of (a, e->gid);
    /* A field found to hold text or dates after some of its keys spilled:
     * in memory its table was dropped then, so here too. */
    if (f->not_key)
        return true;
    f->distinct++;
    out[(*n)++] = *e;
    return *n < BLOCK || put_block (a, out, n, err);
}

bool
rm_analyze_spill_merge (rm_analysis_t *a, bson_error_t *err)
{
    const uint8_t *k, *v;
    size_t kl, vl;
    entry_t cur = {0};
    bool have = false, ok;
    int rc;
    char *tmpl;
    entry_t *out;
    size_t n_out = 0;

    if (!rm_analyze_spill_keys (a, err) || !rm_sorter_finish (a->spill, err))
        return false;
    tmpl = bson_strdup_printf ("%s/remodel-analyze-keys", rm_tmpdir (a->tmpdir));
    a->merged_path = rm_tmppath_new (tmpl);
    bson_free (tmpl);
    if (!(a->merged = fopen (a->merged_path, "w+b"))) {
        io_error (a, "creating a file for", err);
        return false;
    }
    out = bson_malloc (BLOCK * sizeof *out);
    ok = true;
    while (ok && (rc = rm_sorter_next (a->spill, &k, &kl, &v, &vl, err)) == 1) {
        uint64_t key = rm_get_be64 (k);
        uint32_t gid = rm_get_be32 (k + 8);
        if (have && cur.key == key && cur.gid == gid) {
            cur.count += rm_get_be64 (v);
            continue;
        }
        if (have && !put_entry (a, out, &n_out, &cur, err))
            ok = false;
        cur.key = key;
        cur.gid = gid;
        cur.count = rm_get_be64 (v);
        have = true;
    }
    ok = ok && rc == 0 && (!have || put_entry (a, out, &n_out, &cur, err)) &&
         put_block (a, out, &n_out, err);
    bson_free (out);
    if (!ok)
        return false;
    a->spilled_runs = rm_sorter_spilled_runs (a->spill);
    a->spilled_bytes = rm_sorter_spilled_bytes (a->spill) + (uint64_t) ftell (a->merged);
    rm_sorter_destroy (a->spill);
    a->spill = NULL;
    if (fflush (a->merged) != 0) {
        io_error (a, "writing", err);
        return false;
    }
    return true;
}

static void
groups_open (rm_analysis_t *a, groups_t *g)
{
    memset (g, 0, sizeof *g);
    g->f = a->merged;
    rewind (g->f);
}

/* The merged file's next entry into *e; false at its end or an error. */
static bool
read_entry (groups_t *g, entry_t *e)
{
    if (g->at == g->got) {
        g->at = 0;
        g->got = fread (g->blk, sizeof *g->blk, BLOCK, g->f);
        if (!g->got)
            return false;
    }
    *e = g->blk[g->at++];
    return true;
}

/* The next group: 1, 0 at the end, -1 on an error. */
static int
groups_next (rm_analysis_t *a, groups_t *g, bson_error_t *err)
{
    g->n = 0;
    if (!g->has_next) {
        if (g->eof || !read_entry (g, &g->next))
            goto end;
        g->has_next = true;
    }
    g->key = g->next.key;
    for (;;) {
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 16;
            g->e = bson_realloc (g->e, g->cap * sizeof *g->e);
        }
        g->e[g->n++] = g->next;
        if (!read_entry (g, &g->next)) {
            g->has_next = false;
            g->eof = true;
            break;
        }
        if (g->next.key != g->key)
            break;
    }
    return 1;
end:
    g->eof = true;
    if (ferror (g->f)) {
        io_error (a, "reading", err);
        return -1;
    }
    return 0;
}

/* The count of field gid in the group (0: the key is not among its keys). */
static uint64_t
group_count (const groups_t *g, uint32_t gid)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->e[i].gid == gid)
            return g->e[i].count;
    return 0;
}

static int
pair_cmp (const void *key, const void *elem)
{
    const uint32_t *want = key;
    const rm_pair_t *p = elem;
    uint32_t f = RM_FIELD_GID (p->from, p->field), t = RM_FIELD_GID (p->to, p->key);
    if (want[0] != f)
        return want[0] < f ? -1 : 1;
    return want[1] < t ? -1 : want[1] > t;
}

bool
rm_analyze_spill_pairs (rm_analysis_t *a, rm_pair_t *pairs, size_t n, bson_error_t *err)
{
    groups_t g;
    int rc;
    groups_open (a, &g);
    while ((rc = groups_next (a, &g, err)) == 1) {
        /* Few fields share a key: each against each. */
        for (size_t i = 0; i < g.n && n; i++)
            for (size_t j = 0; j < g.n; j++) {
                uint32_t want[2] = {g.e[i].gid, g.e[j].gid};
                rm_pair_t *p = bsearch (want, pairs, n, sizeof *pairs, pair_cmp);
                if (!p)
                    continue;
                p->matched += g.e[i].count;
                p->distinct++;
                p->repeated += g.e[i].count > 1;
            }
    }
    bson_free (g.e);
    return rc == 0;
}

/* The candidates from the merged keys: for each key, each field that may
 * hold references against each target holding it, what they share summed
 * in a table of pairs (those sharing nothing never meet); a pair that
 * could measure is offered to the picker. The table holds the pairs that
 * share a key, not every pair. */
typedef struct {
    uint64_t pair;      /* from << 32 | to, + 1 (0: empty) */
    uint64_t found;
} pairslot_t;

static void
pairs_add (pairslot_t **t, size_t *cap, size_t *n, uint64_t pair, uint64_t found)
{
    size_t i;
    if ((*n + 1) * 4 > *cap * 3) {
        size_t old = *cap;
        pairslot_t *o = *t;
        *cap = old ? old * 2 : 1024;
        *t = bson_malloc0 (*cap * sizeof **t);
        *n = 0;
        for (size_t k = 0; k < old; k++)
            if (o[k].pair)
                pairs_add (t, cap, n, o[k].pair - 1, o[k].found);
        bson_free (o);
    }
    /* The product's high bits: its low ones depend only on the pair's
     * low bits (the target's number), and would pile one field's pairs
     * up in one run. */
    i = (size_t) ((pair * 0x9E3779B97F4A7C15ULL) >> (64 - __builtin_ctzll (*cap)));
    while ((*t)[i].pair && (*t)[i].pair != pair + 1)
        i = (i + 1) & (*cap - 1);
    if (!(*t)[i].pair) {
        (*t)[i].pair = pair + 1;
        (*n)++;
    }
    (*t)[i].found += found;
}

bool
rm_analyze_spill_pick (rm_analysis_t *a, rm_pairpick_t *p, bson_error_t *err)
{
    groups_t g;
    int rc;
    pairslot_t *t = NULL;
    size_t cap = 0, n = 0;
    groups_open (a, &g);
    while ((rc = groups_next (a, &g, err)) == 1)
        for (size_t i = 0; i < g.n; i++) {
            if (!(rm_pairpick_role (p, g.e[i].gid) & RM_PICK_REFS))
                continue;
            for (size_t j = 0; j < g.n; j++)
                if ((rm_pairpick_role (p, g.e[j].gid) & RM_PICK_TARGET) &&
                    rm_pairpick_may_join (p, g.e[i].gid, g.e[j].gid))
                    pairs_add (&t, &cap, &n, (uint64_t) g.e[i].gid << 32 | g.e[j].gid, g.e[i].count);
        }
    bson_free (g.e);
    for (size_t i = 0; rc == 0 && i < cap; i++) {
        uint32_t from, to;
        const rm_field_t *f;
        if (!t[i].pair)
            continue;
        from = (uint32_t) ((t[i].pair - 1) >> 32);
        to = (uint32_t) (t[i].pair - 1);
        f = field_of (a, from);
        /* What is found here is all that will be: a pair that cannot
         * measure needs no more. */
        if ((double) t[i].found >= RM_ANALYZE_MIN_MATCH * (double) f->values * (1 - 1e-9))
            rm_pairpick_offer (p, from, to, t[i].found);
    }
    bson_free (t);
    return rc == 0;
}

/* The relationships by their target's field (RM_FIELD_GID): sorted
 * (gid, relationship) pairs, so that a group asks only the relationships
 * whose target holds its key, not every relationship. */
typedef struct {
    uint32_t gid, rel;
} byto_t;

static int
cmp_byto (const void *x, const void *y)
{
    const byto_t *p = x, *q = y;
    if (p->gid != q->gid)
        return p->gid < q->gid ? -1 : 1;
    return p->rel < q->rel ? -1 : p->rel > q->rel;
}

static byto_t *
rels_by_target (const rm_analysis_t *a, bool parent_refs_only, size_t *n)
{
    byto_t *v = bson_malloc ((a->n_rels ? a->n_rels : 1) * sizeof *v);
    *n = 0;
    for (size_t i = 0; i < a->n_rels; i++)
        if (!parent_refs_only || !a->rels[i].child_refs) {
            v[*n].gid = RM_FIELD_GID (a->rels[i].to, a->rels[i].key);
            v[(*n)++].rel = (uint32_t) i;
        }
    qsort (v, *n, sizeof *v, cmp_byto);
    return v;
}

/* The first of v (n of them) for gid, or n. */
static size_t
first_of (const byto_t *v, size_t n, uint32_t gid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].gid < gid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool
rm_analyze_spill_parents (rm_analysis_t *a, bson_error_t *err)
{
    groups_t g;
    int rc;
    size_t nb;
    byto_t *by = rels_by_target (a, true, &nb);
    groups_open (a, &g);
    while ((rc = groups_next (a, &g, err)) == 1)
        for (size_t e = 0; e < g.n; e++)
            for (size_t k = first_of (by, nb, g.e[e].gid); k < nb && by[k].gid == g.e[e].gid; k++) {
                rm_relation_t *r = &a->rels[by[k].rel];
                uint64_t n = group_count (&g, RM_FIELD_GID (r->from, r->field));
                rm_dist_add (&r->children, n);
                r->parents_none += n == 0;
            }
    bson_free (g.e);
    bson_free (by);
    return rc == 0;
}

typedef struct {
    rm_sorter_t *refs;
    uint32_t rel;
    uint64_t seq;
    rm_buf_t scratch;
    bson_error_t *err;
    bool failed;
} emit_t;

/* Each reference of a parent: [key][relationship][document], sorted. */
static bool
emit_ref (const bson_iter_t *v, void *ctx)
{
    emit_t *e = ctx;
    uint8_t k[20];
    if (!v || BSON_ITER_HOLDS_NULL (v) || BSON_ITER_HOLDS_ARRAY (v))
        return true;
    rm_put_be64 (k, rm_analyze_key (v, &e->scratch));
    rm_put_be32 (k + 8, e->rel);
    rm_put_be64 (k + 12, e->seq);
    if (!rm_sorter_add (e->refs, k, sizeof k, NULL, 0, e->err)) {
        e->failed = true;
        return false;
    }
    return true;
}

static bool
emit_parent (void *ctx, size_t rel, const uint8_t *doc, uint32_t len, const rm_path_t *path,
             uint64_t seq, bson_error_t *err)
{
    emit_t *e = ctx;
    e->rel = (uint32_t) rel;
    e->seq = seq;
    e->err = err;
    rm_path_visit (doc, len, path, true, false, emit_ref, e);
    return !e->failed;
}

/* Pass 2: the references of every parent document into refs. */
static bool
read_refs (rm_analysis_t *a, const rm_read_opts_t *ro, rm_sorter_t *refs, bson_error_t *err)
{
    emit_t e = {refs, 0, 0, {0}, err, false};
    bool ok;
    rm_buf_init (&e.scratch);
    ok = rm_analyze_each_parent (a, ro, emit_parent, &e, err);
    rm_buf_destroy (&e.scratch);
    return ok;
}

/* The references found among their children's keys, as [relationship]
 * [document] records into found, each with the documents it brings. */
static bool
join_refs (rm_analysis_t *a, rm_sorter_t *refs, rm_sorter_t *found, bson_error_t *err)
{
    groups_t g;
    const uint8_t *k, *v;
    size_t kl, vl;
    int rc = 0, grc = 1;
    bool ok = true;

    groups_open (a, &g);
    grc = groups_next (a, &g, err);
    while (ok && grc >= 0 && (rc = rm_sorter_next (refs, &k, &kl, &v, &vl, err)) == 1) {
        uint64_t key = rm_get_be64 (k);
        uint32_t rel = rm_get_be32 (k + 8);
        const rm_relation_t *r = &a->rels[rel];
        uint64_t docs;
        uint8_t count[8];
        while (grc == 1 && g.key < key)
            grc = groups_next (a, &g, err);
        /* With how many documents hold the key: the join brings each. */
        if (grc == 1 && g.key == key && (docs = group_count (&g, RM_FIELD_GID (r->to, r->key)))) {
            rm_put_be64 (count, docs);
            ok = rm_sorter_add (found, k + 8, 12, count, sizeof count, err);
        }
    }
    bson_free (g.e);
    return ok && grc >= 0 && rc == 0;
}

bool
rm_analyze_spill_child_refs (rm_analysis_t *a, const rm_read_opts_t *ro, bson_error_t *err)
{
    rm_sorter_t *refs = rm_sorter_new (a->memory / 2, a->tmpdir, NULL, NULL);
    rm_sorter_t *found = rm_sorter_new (a->memory / 2, a->tmpdir, NULL, NULL);
    uint64_t *with = bson_malloc0 ((a->n_rels ? a->n_rels : 1) * sizeof *with);
    const uint8_t *k, *v;
    size_t kl, vl;
    uint32_t rel = 0;
    uint64_t seq = 0, n = 0;
    int rc = -1;
    bool ok = refs && found && read_refs (a, ro, refs, err) && rm_sorter_finish (refs, err) &&
              join_refs (a, refs, found, err) && rm_sorter_finish (found, err);

    /* Runs of one (relationship, document): that parent's children found. */
    while (ok && (rc = rm_sorter_next (found, &k, &kl, &v, &vl, err)) == 1) {
        uint32_t r = rm_get_be32 (k);
        uint64_t s = rm_get_be64 (k + 4);
        if (n && (r != rel || s != seq)) {
            rm_dist_add (&a->rels[rel].children, n);
            with[rel]++;
            n = 0;
        }
        rel = r;
        seq = s;
        n += vl == 8 ? rm_get_be64 (v) : 1;
    }
    if (ok && rc == 0 && n) {
        rm_dist_add (&a->rels[rel].children, n);
        with[rel]++;
    }
    ok = ok && rc == 0;
    /* Every other parent document: none found. */
    for (size_t i = 0; ok && i < a->n_rels; i++) {
        rm_relation_t *r = &a->rels[i];
        if (!r->child_refs)
            continue;
        r->parents_none = a->cols[r->from].docs - with[i];
        rm_dist_add_n (&r->children, 0, r->parents_none);
    }
    if (refs) {
        a->spilled_runs += rm_sorter_spilled_runs (refs);
        a->spilled_bytes += rm_sorter_spilled_bytes (refs);
    }
    if (found) {
        a->spilled_runs += rm_sorter_spilled_runs (found);
        a->spilled_bytes += rm_sorter_spilled_bytes (found);
    }
    if (!refs || !found)
        rm_error_set (err, RM_ERR_IO, "analyze: cannot start a sort under %s", rm_tmpdir (a->tmpdir));
    rm_sorter_destroy (refs);
    rm_sorter_destroy (found);
    bson_free (with);
    return ok;
}

bool
rm_analyze_spill_dups (rm_analysis_t *a, bson_error_t *err)
{
    groups_t g;
    int rc;
    size_t nb;
    byto_t *by = rels_by_target (a, false, &nb);
    groups_open (a, &g);
    while ((rc = groups_next (a, &g, err)) == 1)
        for (size_t e = 0; e < g.n; e++) {
            if (g.e[e].count < 2)
                continue;
            for (size_t k = first_of (by, nb, g.e[e].gid); k < nb && by[k].gid == g.e[e].gid; k++)
                rm_relation_dup (&a->rels[by[k].rel], g.key, g.e[e].count);
        }
    bson_free (g.e);
    bson_free (by);
    return rc == 0;
}

void
rm_analyze_spill_destroy (rm_analysis_t *a)
{
    rm_sorter_destroy (a->spill);
    a->spill = NULL;
    if (a->merged)
        fclose (a->merged);
    a->merged = NULL;
    if (a->merged_path)
        rm_tmppath_remove (a->merged_path);
    bson_free (a->merged_path);
    a->merged_path = NULL;
}
