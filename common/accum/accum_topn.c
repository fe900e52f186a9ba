/* $topN and $bottomN: the n first or last documents of a group in a sortBy
 * order, as the server's AccumulatorTopBottomN keeps them, in a bounded
 * heap of n entries (never more in memory, however large the group).
 *
 * Each entry is a small BSON document: the sort key values under "0",
 * "1"... then the output under "o". Sort keys are read as the server reads
 * them, as "$field" expressions: an array sorts by its smallest element
 * ascending and its largest descending, an empty array below null (stored
 * as undefined, which rm_value_compare puts there), missing as null. A
 * missing output is null (the manual: "$topN converts missing values to
 * null").
 *
 * Ties: entries are ordered by (sort key, input position). While the heap
 * has room every document enters. Once it is full a document enters only
 * if it sorts strictly inside the boundary entry, which it then replaces,
 * as the server does ("When the sort key produces a tie we keep the first
 * value seen"). For $topN that is exactly the n first by (key, position).
 * For $bottomN it means the earliest of tied documents stay: [5(A), 5(B),
 * 5(C)] gives [A, B] for n 2, and [5(A), 5(B), 7(C)] gives [B, C] (the
 * server evicts the earliest of the tied lowest). Results come in sort
 * order, ties in input order.
 *
 * The output is evaluated when the group finishes, for the entries left,
 * from a copy of their documents (when a document enters, the one it
 * evicts would have been evaluated for nothing: in a group whose documents
 * come in sortBy order every one enters). Documents over RAW_MAX bytes are
 * evaluated as they enter instead, so that n entries never hold n large
 * documents; and once a group's entries hold more than STATE_MAX, every
 * copy is evaluated at once and later entries as they enter, and past
 * STATE_MAX again the group is refused. */
#include <string.h>

#include "remodel/docpath.h"
#include "remodel/error.h"
#include "remodel/value.h"

#include "accum_impl.h"

/* More sort keys than this would be unusual. */
#define TOPN_MAX_KEYS 32
/* The largest document an entry keeps a copy of. */
#define RAW_MAX ((uint32_t) 16 << 10)
/* What one group's entries may hold, their bookkeeping included (a libbson
 * document struct, the entry), before the copies give way to evaluated
 * outputs, and then before the group is refused: its result has to fit in
 * a 16 MiB document anyway, and this keeps n = 10^6 from holding a
 * million documents (the server stops a group's $topN at 100 MB). */
#define STATE_MAX ((size_t) 32 << 20)
#define ENTRY_OVERHEAD (sizeof (entry_t) + 160)

struct rm_acc_topn_spec {
    bool bottom;
    int64_t n;
    size_t nkeys;
    rm_acc_expr_t *keys[TOPN_MAX_KEYS];
    int dirs[TOPN_MAX_KEYS];
    rm_acc_expr_t *output;
};

void
rm_acc_topn_spec_destroy (rm_acc_topn_spec_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nkeys; i++)
        rm_acc_expr_destroy (s->keys[i]);
    rm_acc_expr_destroy (s->output);
    bson_free (s);
}

/* "n" must be a constant positive integer (the server also takes an
 * expression of the group's _id, which this does not support). */
static bool
parse_n (const bson_iter_t *it, int64_t *n, bson_error_t *err)
{
    double d;

    if (BSON_ITER_HOLDS_UTF8 (it) || BSON_ITER_HOLDS_DOCUMENT (it)) {
        rm_error_set (err, RM_ERR_UNSUPPORTED, "\"n\" must be a constant positive integer");
        return false;
    }
    if (BSON_ITER_HOLDS_INT32 (it) || BSON_ITER_HOLDS_INT64 (it)) {
        *n = bson_iter_as_int64 (it);
    } else if (BSON_ITER_HOLDS_DOUBLE (it)) {
        d = bson_iter_double (it);
        if (!(d >= -9.2e18 && d <= 9.2e18 && (double) (int64_t) d == d)) {
            rm_error_set (err, RM_ERR_USAGE, "\"n\" must be an integer, found %g", d);
            return false;
        }
        *n = (int64_t) d;
    } else {
        rm_error_set (err, RM_ERR_USAGE, "\"n\" must be an integer, found a %s",
                      BSON_ITER_HOLDS_DECIMAL128 (it) ? "decimal (write an int)" : "non-number");
        return false;
    }
    if (*n <= 0) {
        rm_error_set (err, RM_ERR_USAGE, "\"n\" must be greater than 0, found %lld",
                      (long long) *n);
        return false;
    }
    return true;
}

static bool
parse_sort_by (rm_acc_topn_spec_t *s, const bson_iter_t *it, bson_error_t *err)
{
    bson_iter_t sub;

    if (!BSON_ITER_HOLDS_DOCUMENT (it) || !bson_iter_recurse (it, &sub)) {
        rm_error_set (err, RM_ERR_USAGE, "\"sortBy\" must be a document like {\"ts\": -1}");
        return false;
    }
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        double dir = BSON_ITER_HOLDS_NUMBER (&sub) ? bson_iter_as_double (&sub) : 0;
        if (dir != 1 && dir != -1) {
            rm_error_set (err, RM_ERR_USAGE, "\"sortBy\": the direction of \"%s\" must be 1 or -1",
                          k);
            return false;
        }
        if (s->nkeys == TOPN_MAX_KEYS) {
            rm_error_set (err, RM_ERR_UNSUPPORTED, "\"sortBy\": more than %d fields",
                          TOPN_MAX_KEYS);
            return false;
        }
        s->keys[s->nkeys] = rm_acc_expr_path (k, err);
        if (!s->keys[s->nkeys]) {
            rm_error_prefix (err, "\"sortBy\"");
            return false;
        }
        s->dirs[s->nkeys++] = (int) dir;
    }
    if (s->nkeys == 0) {
        rm_error_set (err, RM_ERR_USAGE, "\"sortBy\" must name at least one field");
        return false;
    }
    return true;
}

rm_acc_topn_spec_t *
rm_acc_topn_spec_parse (const bson_iter_t *arg, bool bottom, bson_error_t *err)
{
    rm_acc_topn_spec_t *s;
    bson_iter_t sub;
    bool have_n = false, have_sort = false;

    if (!BSON_ITER_HOLDS_DOCUMENT (arg) || !bson_iter_recurse (arg, &sub)) {
        rm_error_set (err, RM_ERR_USAGE,
                      "the argument must be a document like {\"n\": 3, \"sortBy\": {\"ts\": -1}, "
                      "\"output\": \"$text\"}");
        return NULL;
    }
    s = bson_malloc0 (sizeof *s);
    s->bottom = bottom;
    while (bson_iter_next (&sub)) {
        const char *k = bson_iter_key (&sub);
        if (!strcmp (k, "n")) {
            if (!parse_n (&sub, &s->n, err))
                goto fail;
            have_n = true;
        } else if (!strcmp (k, "sortBy") && !have_sort) {
            if (!parse_sort_by (s, &sub, err))
                goto fail;
            have_sort = true;
        } else if (!strcmp (k, "output") && !s->output) {
            s->output = rm_acc_expr_parse (&sub, err);
            if (!s->output) {
                rm_error_prefix (err, "\"output\"");
                goto fail;
            }
        } else {
            rm_error_set (err, RM_ERR_USAGE, "unknown or repeated argument \"%s\"", k);
            goto fail;
        }
    }
    if (!have_n || !have_sort || !s->output) {
        rm_error_set (err, RM_ERR_USAGE, "missing \"%s\"",
                      !have_n ? "n" : !have_sort ? "sortBy" : "output");
        goto fail;
    }
    return s;

fail:
    rm_acc_topn_spec_destroy (s);
    return NULL;
}

/* ---- the heap */

typedef struct {
    bson_t *b;    /* {"0": key0, ...}, then "o": output when raw is empty */
    rm_buf_t raw; /* the document, for its output at finish, or empty */
    uint64_t seq;
} entry_t;

struct rm_acc_topn {
    const rm_acc_topn_spec_t *spec;
    entry_t *e;     /* a heap: the entry to evict first on top */
    size_t size, cap;
    bson_t *cand;   /* the document being considered */
    rm_buf_t cand_raw;
    bson_t *scratch;
    size_t bytes;   /* what the entries hold (entry_cost) */
    bool eager;     /* outputs evaluated as documents enter */
    rm_expr_ctx_t *cx; /* the keys' and output's evaluation */
};

rm_acc_topn_t *
rm_acc_topn_new (const rm_acc_topn_spec_t *s)
{
    rm_acc_topn_t *t = bson_malloc0 (sizeof *t);
    t->spec = s;
    t->cand = bson_new ();
    rm_buf_init (&t->cand_raw);
    t->scratch = bson_new ();
    t->cx = rm_expr_ctx_new (0);
    return t;
}

/* Entries keep their documents' memory for the next group. */
void
rm_acc_topn_reset (rm_acc_topn_t *t)
{
    t->size = 0;
    t->bytes = 0;
    t->eager = false;
}

static size_t
entry_cost (const entry_t *e)
{
    return ENTRY_OVERHEAD + e->b->len + e->raw.len;
}

/* Past STATE_MAX: the copies give way to their outputs, for good in this
 * group; still past it, the group is refused. */
static bool
shrink (rm_acc_topn_t *t, bson_error_t *err)
{
    if (!t->eager) {
        t->eager = true;
        t->bytes = 0;
        for (size_t i = 0; i < t->size; i++) {
            entry_t *e = &t->e[i];
            if (e->raw.len) {
                rm_expr_ctx_reset (t->cx);
                if (rm_acc_expr_append (t->spec->output, t->cx, e->raw.data, (uint32_t) e->raw.len,
                                        e->b, "o", 1, true, err) < 0)
                    return false;
                rm_buf_destroy (&e->raw);
                rm_buf_init (&e->raw);
            }
            t->bytes += entry_cost (e);
        }
    }
    if (t->bytes <= STATE_MAX)
        return true;
    rm_error_set (err, RM_ERR_FORMAT,
                  "%s: the %zu documents kept for one group hold over %zu MiB (n is %lld): "
                  "the result could not fit in a 16 MiB document; lower n or output less",
                  t->spec->bottom ? "$bottomN" : "$topN", t->size, STATE_MAX >> 20,
                  (long long) t->spec->n);
    return false;
}

void
rm_acc_topn_destroy (rm_acc_topn_t *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->e[i].b)
            bson_destroy (t->e[i].b);
        rm_buf_destroy (&t->e[i].raw);
    }
    bson_free (t->e);
    bson_destroy (t->cand);
    rm_buf_destroy (&t->cand_raw);
    bson_destroy (t->scratch);
    rm_expr_ctx_destroy (t->cx);
    bson_free (t);
}

/* The sort keys of two entries, in sortBy order. */
static int
cmp_keys (const rm_acc_topn_spec_t *s, const bson_t *x, const bson_t *y)
{
    bson_iter_t i, j;
    bson_iter_init (&i, x);
    bson_iter_init (&j, y);
    for (size_t k = 0; k < s->nkeys; k++) {
        int c;
        bson_iter_next (&i);
        bson_iter_next (&j);
        c = rm_value_compare (&i, &j);
        if (c)
            return c * s->dirs[k];
    }
    return 0;
}

static int
cmp_entries (const rm_acc_topn_spec_t *s, const entry_t *x, const entry_t *y)
{
    int c = cmp_keys (s, x->b, y->b);
    if (c)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Whether x belongs above y in the heap: the largest on top for $topN
 * (the first to go), the smallest for $bottomN. */
static bool
above (const rm_acc_topn_t *t, size_t x, size_t y)
{
    int c = cmp_entries (t->spec, &t->e[x], &t->e[y]);
    return t->spec->bottom ? c < 0 : c > 0;
}

static void
swap (rm_acc_topn_t *t, size_t x, size_t y)
{
    entry_t tmp = t->e[x];
    t->e[x] = t->e[y];
    t->e[y] = tmp;
}

static void
sift_down (rm_acc_topn_t *t, size_t i, size_t size)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < size && above (t, l, top))
            top = l;
        if (r < size && above (t, r, top))
            top = r;
        if (top == i)
            return;
        swap (t, i, top);
        i = top;
    }
}

static void
sift_up (rm_acc_topn_t *t, size_t i)
{
    while (i > 0 && above (t, i, (i - 1) / 2)) {
        swap (t, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

/* Appends the sort key of one sortBy field to the candidate. */
static void
append_key (rm_acc_topn_t *t, size_t k, const uint8_t *doc, uint32_t len)
{
    const rm_acc_topn_spec_t *s = t->spec;
    char buf[16];
    const char *name;
    int nl = (int) bson_uint32_to_string ((uint32_t) k, &name, buf, sizeof buf);
    bson_iter_t v, e, best;
    bool any = false;

    /* A key is a path: evaluating it cannot fail. */
    if (rm_acc_expr_eval (s->keys[k], t->cx, doc, len, t->scratch, &v, NULL) <= 0 ||
        BSON_ITER_HOLDS_NULL (&v)) {
        bson_append_null (t->cand, name, nl);
        return;
    }
    if (!BSON_ITER_HOLDS_ARRAY (&v) || !bson_iter_recurse (&v, &e)) {
        bson_append_iter (t->cand, name, nl, &v);
        return;
    }
    while (bson_iter_next (&e))
        if (!any || rm_value_compare (&e, &best) * s->dirs[k] < 0) {
            best = e;
            any = true;
        }
    if (any)
        bson_append_iter (t->cand, name, nl, &best);
    else
        bson_append_undefined (t->cand, name, nl);
}

bool
rm_acc_topn_add (rm_acc_topn_t *t, const uint8_t *doc, uint32_t len, uint64_t seq,
                 bson_error_t *err)
{
    const rm_acc_topn_spec_t *s = t->spec;
    bool full = (int64_t) t->size >= s->n;
    size_t at;
    bson_t *spare;

    bson_reinit (t->cand);
    rm_expr_ctx_reset (t->cx);
    for (size_t k = 0; k < s->nkeys; k++)
        append_key (t, k, doc, len);
    if (full) {
        /* Only a document strictly inside the boundary enters. */
        int c = cmp_keys (s, t->e[0].b, t->cand);
        if (s->bottom ? c >= 0 : c <= 0)
            return true;
    }
    /* The output: at finish from a copy, or now for a large document
     * (only ever for documents that enter). */
    rm_buf_reset (&t->cand_raw);
    if (len <= RAW_MAX && !t->eager)
        rm_buf_append (&t->cand_raw, doc, len);
    else if (rm_acc_expr_append (s->output, t->cx, doc, len, t->cand, "o", 1, true, err) < 0)
        return false;

    if (full) {
        at = 0;
        t->bytes -= entry_cost (&t->e[0]);
    } else {
        if (t->size == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 4;
            t->e = bson_realloc (t->e, cap * sizeof *t->e);
            memset (t->e + t->cap, 0, (cap - t->cap) * sizeof *t->e);
            for (size_t i = t->cap; i < cap; i++)
                rm_buf_init (&t->e[i].raw);
            t->cap = cap;
        }
        at = t->size++;
    }
    /* The candidate becomes the entry; the entry's document (or a new one)
     * becomes the next candidate. */
    spare = t->e[at].b;
    t->e[at].b = t->cand;
    t->e[at].seq = seq;
    t->cand = spare ? spare : bson_new ();
    {
        rm_buf_t r = t->e[at].raw;
        t->e[at].raw = t->cand_raw;
        t->cand_raw = r;
    }
    t->bytes += entry_cost (&t->e[at]);
    if (full)
        sift_down (t, 0, t->size);
    else
        sift_up (t, at);
    return t->bytes <= STATE_MAX || shrink (t, err);
}

bool
rm_acc_topn_finish (rm_acc_topn_t *t, bson_t *out, const char *name, bson_error_t *err)
{
    bson_t arr;
    bool ok = true;

    /* Heapsort in place: the top goes to the end each time, so $topN's
     * entries end up ascending and $bottomN's descending. */
    for (size_t end = t->size; end > 1; end--) {
        swap (t, 0, end - 1);
        sift_down (t, 0, end - 1);
    }
    bson_append_array_begin (out, name, -1, &arr);
    for (size_t i = 0; i < t->size; i++) {
        size_t at = t->spec->bottom ? t->size - 1 - i : i;
        char buf[16];
        const char *key;
        size_t kl = bson_uint32_to_string ((uint32_t) i, &key, buf, sizeof buf);
        const bson_t *src = t->e[at].b;
        bson_iter_t o;
        if (t->e[at].raw.len) {
            bson_reinit (t->scratch);
            rm_expr_ctx_reset (t->cx);
            if (rm_acc_expr_append (t->spec->output, t->cx, t->e[at].raw.data,
                                    (uint32_t) t->e[at].raw.len, t->scratch, "o", 1, true, err) < 0)
                ok = false;
            src = t->scratch;
        }
        if (bson_iter_init_find (&o, src, "o"))
            ok = ok && bson_append_iter (&arr, key, (int) kl, &o);
    }
    ok = bson_append_array_end (out, &arr) && ok;
    /* Back to a heap, should more documents come. */
    for (size_t i = t->size / 2; i-- > 0;)
        sift_down (t, i, t->size);
    if (!ok)
        rm_error_set (err, RM_ERR_FORMAT, "\"%s\": the result is too large", name);
    return ok;
}
