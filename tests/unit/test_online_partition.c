/* A driving collection's partitions (shell-ext/state/online_partition.c)
 * without a server: from sampled _ids of seven BSON types, ranges that
 * hold every _id exactly once, by rm_value_compare (the server's
 * comparison, common/bson/value.c), numbers of three types compared as
 * numbers; _ids the sample missed in one partition all the same; and
 * each partition's filter, read here as MongoDB matches it ($lte and $gt
 * within the operand's type bracket, $type by alias), holding what the
 * partition holds. */
#include "online_state.h"
#include "remodel/value.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* ---- the filter as MongoDB matches it, for the operators it uses ---- */

static bool match_doc (const bson_iter_t *filter_doc, const bson_iter_t *id);

static bool
type_alias_matches (const char *alias, const bson_iter_t *id)
{
    bson_type_t t = bson_iter_type (id);
    if (!strcmp (alias, "number"))
        return t == BSON_TYPE_INT32 || t == BSON_TYPE_INT64 || t == BSON_TYPE_DOUBLE ||
               t == BSON_TYPE_DECIMAL128;
    return !strcmp (alias, rm_value_type_name (t));
}

/* A comparison operator's operand against id: only within its bracket. */
static int
bracket_cmp (const bson_iter_t *id, const bson_iter_t *v, bool *same)
{
    *same = rm_value_canonical_type (bson_iter_type (id)) ==
            rm_value_canonical_type (bson_iter_type (v));
    return rm_value_compare (id, v);
}

/* {op: operand, ...} on _id: every operator holds. */
static bool
match_ops (const bson_iter_t *ops, const bson_iter_t *id)
{
    bson_iter_t op;
    bson_iter_recurse (ops, &op);
    while (bson_iter_next (&op)) {
        const char *k = bson_iter_key (&op);
        bool same, r;
        if (!strcmp (k, "$not"))
            r = !match_ops (&op, id);
        else if (!strcmp (k, "$lte"))
            r = bracket_cmp (id, &op, &same) <= 0 && same;
        else if (!strcmp (k, "$gt"))
            r = bracket_cmp (id, &op, &same) > 0 && same;
        else if (!strcmp (k, "$ne") && BSON_ITER_HOLDS_NULL (&op))
            r = !BSON_ITER_HOLDS_NULL (id);
        else if (!strcmp (k, "$type")) {
            bson_iter_t a;
            bson_iter_recurse (&op, &a);
            r = false;
            while (bson_iter_next (&a))
                r = r || type_alias_matches (bson_iter_utf8 (&a, NULL), id);
        } else {
            fprintf (stderr, "  an operator the test does not read: %s\n", k);
            T_CHECK (false);
            r = false;
        }
        if (!r)
            return false;
    }
    return true;
}

static bool
match_doc (const bson_iter_t *filter_doc, const bson_iter_t *id)
{
    bson_iter_t f;
    bson_iter_recurse (filter_doc, &f);
    while (bson_iter_next (&f)) {
        if (!strcmp (bson_iter_key (&f), "$and")) {
            bson_iter_t c;
            bson_iter_recurse (&f, &c);
            while (bson_iter_next (&c))
                if (!match_doc (&c, id))
                    return false;
        } else if (!strcmp (bson_iter_key (&f), "$or")) {
            bson_iter_t c;
            bool any = false;
            bson_iter_recurse (&f, &c);
            while (bson_iter_next (&c))
                any = any || match_doc (&c, id);
            if (!any)
                return false;
        } else if (!strcmp (bson_iter_key (&f), "_id") && !BSON_ITER_HOLDS_DOCUMENT (&f)) {
            bool same; /* equality, NaN equal to NaN */
            if (bracket_cmp (id, &f, &same) != 0 || !same)
                return false;
        } else if (!strcmp (bson_iter_key (&f), "_id")) {
            if (!match_ops (&f, id))
                return false;
        } else {
            T_CHECK (false);
            return false;
        }
    }
    return true;
}

static bool
matches (const bson_t *filter, const bson_iter_t *id)
{
    bson_t *holder = BCON_NEW ("f", BCON_DOCUMENT (filter));
    bson_iter_t f;
    bool r;
    bson_iter_init_find (&f, holder, "f");
    r = match_doc (&f, id);
    bson_destroy (holder);
    return r;
}

/* ---- partitions ---- */

#define MAXP 64

typedef struct {
    bson_t part[MAXP];
    bson_t filter[MAXP];
    int n;
} parts_t;

static void
compute (const bson_t *sample, const bson_t *counts, int64_t total, int64_t small, int want,
         parts_t *p)
{
    online_partition_in_t in = {sample, counts, total, small, want};
    bson_t arr = BSON_INITIALIZER;
    bson_error_t err;
    bson_iter_t it;
    p->n = 0;
    T_CHECK (online_partition_compute (&in, &arr, &err));
    bson_iter_init (&it, &arr);
    while (bson_iter_next (&it) && p->n < MAXP) {
        uint32_t len;
        const uint8_t *data;
        bson_t view;
        bson_iter_document (&it, &len, &data);
        bson_init_static (&view, data, len);
        bson_copy_to (&view, &p->part[p->n]); /* its own, past arr */
        bson_init (&p->filter[p->n]);
        T_CHECK (online_partition_filter (&p->part[p->n], &p->filter[p->n], &err));
        p->n++;
    }
    bson_destroy (&arr);
}

static void
parts_destroy (parts_t *p)
{
    for (int i = 0; i < p->n; i++) {
        bson_destroy (&p->part[i]);
        bson_destroy (&p->filter[i]);
    }
}

/* The one partition holding id (-1: none, -2: more than one), checking
 * that each filter lets through what its partition holds, and, for the
 * types a $type alias names, nothing else. */
static int
where (const parts_t *p, const bson_iter_t *id)
{
    int at = -1;
    bool aliased = bson_iter_type (id) != BSON_TYPE_MINKEY && bson_iter_type (id) != BSON_TYPE_MAXKEY &&
                   bson_iter_type (id) != BSON_TYPE_SYMBOL && bson_iter_type (id) != BSON_TYPE_CODE;
    for (int i = 0; i < p->n; i++) {
        bool holds = online_partition_holds (&p->part[i], id);
        bool m = matches (&p->filter[i], id);
        if (holds && !m) {
            char *j = bson_as_relaxed_extended_json (&p->part[i], NULL);
            fprintf (stderr, "  partition %d %s: its filter misses an _id of type %d\n", i, j,
                     (int) bson_iter_type (id));
            bson_free (j);
        }
        T_CHECK (!holds || m);
        T_CHECK (!aliased || holds == m);
        if (holds)
            at = at == -1 ? i : -2;
    }
    return at;
}

/* The sample of seven types: ints, longs and doubles (5, 5L and 5.0
 * among them), strings, ObjectIds, dates and binaries. */
static bson_t *
seven_types (void)
{
    bson_t *s = bson_new ();
    int k = 0;
    char key[16], str[32];
    uint8_t bin[4];
    bson_oid_t oid;
#define KEY() t_key_next (key, sizeof key, &k)
    for (int i = -30; i < 30; i++) {
        bson_append_int32 (s, KEY (), -1, i * 3);
        bson_append_int64 (s, KEY (), -1, (int64_t) i * 5 + 1);
        bson_append_double (s, KEY (), -1, i * 2.5);
    }
    bson_append_int32 (s, KEY (), -1, 5);
    bson_append_int64 (s, KEY (), -1, 5);
    bson_append_double (s, KEY (), -1, 5.0);
    for (int i = 0; i < 40; i++) {
        snprintf (str, sizeof str, "user-%03d", (i * 37) % 100);
        bson_append_utf8 (s, KEY (), -1, str, -1);
        snprintf (str, sizeof str, "65%06x0000000000000000", (unsigned) i * 977);
        bson_oid_init_from_string (&oid, str);
        bson_append_oid (s, KEY (), -1, &oid);
        bson_append_date_time (s, KEY (), -1, -86400000LL * 400 + (int64_t) i * 86400000LL * 20);
        bin[0] = (uint8_t) i;
        bin[1] = (uint8_t) (255 - i);
        bin[2] = bin[3] = 7;
        bson_append_binary (s, KEY (), -1, BSON_SUBTYPE_BINARY, bin, (uint32_t) (1 + i % 4));
    }
#undef KEY
    return s;
}

static void
test_seven_types_eight_partitions (void)
{
    bson_t *sample = seven_types ();
    parts_t p;
    bson_iter_t it;
    int n = 0, groups = 0;
    int first_rank[MAXP], last_rank[MAXP];
    /* each partition's least and greatest, by their keys in the sample
     * (an array of bson_iter_t would break their alignment) */
    const char *first[MAXP], *last[MAXP];
    bson_iter_t lo, hi;
    bool seen[MAXP] = {false};

    compute (sample, NULL, 100000, 0, 8, &p);
    T_CHECK (p.n == 8);
    bson_iter_init (&it, sample);
    while (bson_iter_next (&it)) {
        int at = where (&p, &it);
        int rank = rm_value_canonical_type (bson_iter_type (&it));
        T_CHECK (at >= 0);
        if (at < 0)
            continue;
        n++;
        /* one bracket a partition, and the partitions in _id order */
        if (!seen[at]) {
            seen[at] = true;
            first_rank[at] = last_rank[at] = rank;
            first[at] = last[at] = bson_iter_key (&it);
        }
        T_CHECK (rank == first_rank[at]);
        bson_iter_init_find (&lo, sample, first[at]);
        bson_iter_init_find (&hi, sample, last[at]);
        if (rm_value_compare (&it, &lo) < 0)
            first[at] = bson_iter_key (&it);
        if (rm_value_compare (&it, &hi) > 0)
            last[at] = bson_iter_key (&it);
    }
    T_CHECK (n == 60 * 3 + 3 + 40 * 4);
    for (int i = 0; i < p.n; i++) {
        T_CHECK (seen[i]); /* no partition empty of the sample */
        if (i && seen[i] && seen[i - 1]) {
            bson_iter_init_find (&hi, sample, last[i - 1]);
            bson_iter_init_find (&lo, sample, first[i]);
            T_CHECK (rm_value_compare (&hi, &lo) < 0);
            groups += first_rank[i] != last_rank[i - 1];
        }
    }
    T_CHECK (groups == 4); /* five brackets: numbers, strings, binData, objectId, date */
    parts_destroy (&p);
    bson_destroy (sample);
}

/* int 5, long 5 and double 5.0 are one value: never split apart, and a
 * sample of only them is one partition whatever is asked. */
static void
test_equal_numbers (void)
{
    bson_t *sample = seven_types ();
    bson_t *fives = BCON_NEW ("a", BCON_INT32 (5), "b", BCON_INT64 (5), "c", BCON_DOUBLE (5.0));
    parts_t p;
    bson_iter_t it;
    int at = -1;

    for (int want = 2; want <= 40; want++) {
        compute (sample, NULL, 100000, 0, want, &p);
        bson_iter_init (&it, fives);
        at = -1;
        while (bson_iter_next (&it)) {
            int w = where (&p, &it);
            T_CHECK (w >= 0);
            T_CHECK (at == -1 || w == at);
            at = w;
        }
        parts_destroy (&p);
    }
    compute (fives, NULL, 100000, 0, 4, &p);
    T_CHECK (p.n == 1);
    parts_destroy (&p);
    bson_destroy (fives);
    bson_destroy (sample);
}

/* _ids of types and values the sample never saw (a rare type, a MinKey,
 * a symbol, code, NaN, a null) are each in exactly one partition. */
static void
test_unsampled (void)
{
    bson_t *sample = bson_new ();
    bson_oid_t oid;
    bson_decimal128_t dec;
    parts_t p;
    bson_iter_t it;
    char key[16];

    for (int i = 0; i < 50; i++) {
        snprintf (key, sizeof key, "i%d", i);
        BSON_APPEND_INT32 (sample, key, i * 10);
        snprintf (key, sizeof key, "o%d", i);
        bson_oid_init (&oid, NULL);
        BSON_APPEND_OID (sample, key, &oid);
    }
    bson_decimal128_from_string ("12.5", &dec);
    bson_t *odd = BCON_NEW ("a", BCON_MINKEY, "b", BCON_NULL, "c", BCON_DOUBLE (NAN),
                            "d", BCON_DOUBLE (-1e300), "e", BCON_DECIMAL128 (&dec), "f",
                            BCON_UTF8 ("never sampled"), "g", BCON_SYMBOL ("sym"), "h",
                            "{", "x", BCON_INT32 (1), "}", "i", BCON_BOOL (true), "j",
                            BCON_DATE_TIME (0), "k", BCON_TIMESTAMP (5, 1), "l",
                            BCON_REGEX ("a", ""), "m", BCON_CODE ("f()"), "n", BCON_MAXKEY,
                            "o", BCON_BIN (BSON_SUBTYPE_BINARY, (const uint8_t *) "z", 1),
                            "p", BCON_INT64 (INT64_MAX), "q", BCON_INT32 (250));
    compute (sample, NULL, 100000, 0, 6, &p);
    T_CHECK (p.n == 6);
    bson_iter_init (&it, odd);
    while (bson_iter_next (&it)) {
        int w = where (&p, &it);
        if (w < 0)
            fprintf (stderr, "  _id \"%s\" in %s partitions\n", bson_iter_key (&it),
                     w == -1 ? "no" : "several");
        T_CHECK (w >= 0);
    }
    parts_destroy (&p);
    bson_destroy (odd);
    bson_destroy (sample);
}

/* A small collection, or --partitions 1: one partition, its filter
 * empty; with more brackets than asked, one per bracket; counts per type
 * share the partitions out by documents, none under small documents. */
static void
test_counts (void)
{
    bson_t *sample = seven_types ();
    bson_t *counts = BCON_NEW ("int", BCON_INT64 (900000), "long", BCON_INT64 (50000),
                               "string", BCON_INT32 (50000), "objectId", BCON_INT64 (10));
    parts_t p;
    int strings = 0, numbers = 0;

    compute (sample, NULL, 500, 1000, 8, &p);
    T_CHECK (p.n == 1 && bson_empty (&p.filter[0]));
    parts_destroy (&p);
    compute (sample, NULL, 100000, 0, 1, &p);
    T_CHECK (p.n == 1 && bson_empty (&p.filter[0]));
    parts_destroy (&p);
    compute (sample, NULL, 100000, 0, 3, &p);
    T_CHECK (p.n == 5);
    parts_destroy (&p);
    /* 1,000,010 documents, 10 partitions of 50,000 at least: the numbers'
     * 950,000 take the most; the ObjectIds and binaries, dates the sample
     * shows, one each. */
    compute (sample, counts, 1000010, 50000, 10, &p);
    T_CHECK (p.n == 10);
    for (int i = 0; i < p.n; i++) {
        bson_iter_t g;
        bson_iter_init_find (&g, &p.part[i], "group");
        numbers += !strcmp (bson_iter_utf8 (&g, NULL), "number");
        strings += !strcmp (bson_iter_utf8 (&g, NULL), "string");
    }
    T_CHECK (numbers == 6);
    T_CHECK (strings == 1);
    parts_destroy (&p);
    bson_destroy (counts);
    bson_destroy (sample);
}

/* ---- on a server (tests/cli/test_online_partition.sh gives its URI) ---- */

static const char *server_uri;

/* _ids of the seven types, and the rarer ones a server may refuse
 * (FerretDB 1.24 stores no MinKey, MaxKey, decimal or symbol): those it
 * took into *stored. */
static void
store_ids (mongoc_collection_t *c, bson_t *stored)
{
    bson_t *sample = seven_types ();
    bson_decimal128_t dec;
    bson_t *odd;
    bson_iter_t it;
    int k = 0;
    char key[16];

    bson_decimal128_from_string ("12.5", &dec);
    odd = BCON_NEW ("a", BCON_NULL, "b", BCON_DOUBLE (NAN), "c", "{", "x", BCON_INT32 (1), "}",
                    "d", BCON_BOOL (true), "e", BCON_TIMESTAMP (5, 1), "f", BCON_INT64 (INT64_MAX),
                    "g", BCON_DECIMAL128 (&dec), "h", BCON_MINKEY, "i", BCON_MAXKEY, "j",
                    BCON_SYMBOL ("sym"));
    for (int round = 0; round < 2; round++) {
        bson_iter_init (&it, round ? odd : sample);
        while (bson_iter_next (&it)) {
            bson_t doc = BSON_INITIALIZER;
            bson_append_iter (&doc, "_id", 3, &it);
            /* equal numbers (5, 5L, 5.0) are one _id: the first stays */
            if (mongoc_collection_insert_one (c, &doc, NULL, NULL, NULL))
                bson_append_iter (stored, t_key_next (key, sizeof key, &k), -1, &it);
            bson_destroy (&doc);
        }
    }
    bson_destroy (odd);
    bson_destroy (sample);
}

/* Each partition's filter run by the server, its reader keeping what the
 * partition holds: each of the n stored _ids (keys "0".."n-1") once. */
static void
each_once (mongoc_collection_t *c, const bson_t *stored, int n, const parts_t *p)
{
    int total = 0, *held = bson_malloc0 ((size_t) n * sizeof *held);
    bson_iter_t it;
    for (int i = 0; i < p->n; i++) {
        mongoc_cursor_t *cur = mongoc_collection_find_with_opts (c, &p->filter[i], NULL, NULL);
        const bson_t *doc;
        bson_error_t err;
        while (mongoc_cursor_next (cur, &doc)) {
            bson_iter_t id, s;
            bson_iter_init_find (&id, doc, "_id");
            if (!online_partition_holds (&p->part[i], &id))
                continue;
            total++;
            bson_iter_init (&s, stored);
            while (bson_iter_next (&s))
                if (bson_iter_type (&s) == bson_iter_type (&id) && rm_value_compare (&s, &id) == 0)
                    held[atoi (bson_iter_key (&s))]++;
        }
        if (mongoc_cursor_error (cur, &err))
            fprintf (stderr, "  partition %d: %s\n", i, err.message);
        T_CHECK (!mongoc_cursor_error (cur, &err));
        mongoc_cursor_destroy (cur);
    }
    T_CHECK (total == n);
    bson_iter_init (&it, stored);
    while (bson_iter_next (&it)) {
        int i = atoi (bson_iter_key (&it));
        if (held[i] != 1)
            fprintf (stderr, "  _id #%d of type %d in %d partitions\n", i, (int) bson_iter_type (&it),
                     held[i]);
        T_CHECK (held[i] == 1);
    }
    bson_free (held);
}

/* The server's own filters: every stored _id comes back from exactly one
 * partition's filter once its reader keeps what its partition holds. */
static void
test_server (void)
{
    mongoc_client_t *client = mongoc_client_new (server_uri);
    mongoc_collection_t *c;
    bson_t stored = BSON_INITIALIZER, sample = BSON_INITIALIZER;
    bson_iter_t it;
    parts_t p;
    int n = 0;

    T_CHECK (client != NULL);
    if (!client)
        return;
    c = mongoc_client_get_collection (client, "remodel_test", "partition");
    mongoc_collection_drop (c, NULL);
    store_ids (c, &stored);
    /* the sample: every other stored _id */
    bson_iter_init (&it, &stored);
    while (bson_iter_next (&it))
        if (n++ % 2 == 0)
            bson_append_iter (&sample, bson_iter_key (&it), -1, &it);
    T_CHECK (n >= 60 * 3 + 40 * 4 - 40); /* the seven types, less equal numbers */
    compute (&sample, NULL, 100000, 0, 8, &p);
    T_CHECK (p.n == 8);
    each_once (c, &stored, n, &p);
    mongoc_collection_drop (c, NULL);
    parts_destroy (&p);
    bson_destroy (&sample);
    bson_destroy (&stored);
    mongoc_collection_destroy (c);
    mongoc_client_destroy (client);
}

/* The sample read from the server (online_partition_sample.c): 2,000
 * documents, a thousand ints and a thousand strings, into four
 * partitions: 80 _ids (one in 25), by $sample or, where the server has
 * none (FerretDB 1.x), one in 25 of every _id, saying why; each sampled
 * _id a stored one; the partitions from it hold each _id once, the
 * numbers' and the strings' apart. */
static void
test_server_sample (void)
{
    online_opts_t o = {.uri = server_uri};
    online_t on;
    online_run_t on_run;

    online_init (&on, &on_run);
    bson_error_t err;
    mongoc_collection_t *c;
    mongoc_bulk_operation_t *bulk;
    bson_t stored = BSON_INITIALIZER, sample = BSON_INITIALIZER;
    char key[16], str[16], why[200] = "";
    int k = 0, n = 0;
    int64_t total = 0;
    bson_iter_t it;
    parts_t p;

    T_CHECK (online_connect (&on, &o, &err));
    if (!on.client)
        return;
    c = mongoc_client_get_collection (on.client, "remodel_test", "partition");
    mongoc_collection_drop (c, NULL);
    bulk = mongoc_collection_create_bulk_operation_with_opts (c, NULL);
    for (int i = 0; i < 1000; i++) {
        bson_t *a = BCON_NEW ("_id", BCON_INT32 (i * 7));
        snprintf (str, sizeof str, "s%05d", i);
        bson_t *b = BCON_NEW ("_id", BCON_UTF8 (str));
        mongoc_bulk_operation_insert (bulk, a);
        mongoc_bulk_operation_insert (bulk, b);
        bson_append_int32 (&stored, t_key_next (key, sizeof key, &k), -1, i * 7);
        bson_append_utf8 (&stored, t_key_next (key, sizeof key, &k), -1, str, -1);
        bson_destroy (a);
        bson_destroy (b);
    }
    T_CHECK (mongoc_bulk_operation_execute (bulk, NULL, &err));
    mongoc_bulk_operation_destroy (bulk);

    T_CHECK (online_partition_sample (&on, c, 4, &sample, &total, why, sizeof why, &err));
    T_CHECK (total == 2000);
    bson_iter_init (&it, &sample);
    while (bson_iter_next (&it)) {
        bson_iter_t s;
        bool found = false;
        n++;
        bson_iter_init (&s, &stored);
        while (!found && bson_iter_next (&s))
            found = bson_iter_type (&s) == bson_iter_type (&it) && rm_value_compare (&s, &it) == 0;
        T_CHECK (found);
    }
    fprintf (stderr, "  %d sampled%s%s\n", n, *why ? ", no $sample: " : " by $sample", why);
    T_CHECK (*why ? n == 80 : n > 0 && n <= 80);
    compute (&sample, NULL, total, 0, 4, &p);
    T_CHECK (p.n == 4);
    each_once (c, &stored, k, &p);
    parts_destroy (&p);
    /* one partition asked for: nothing read */
    T_CHECK (online_partition_sample (&on, c, 1, &sample, &total, why, sizeof why, &err));
    T_CHECK (bson_empty (&sample));
    mongoc_collection_drop (c, NULL);
    mongoc_collection_destroy (c);
    bson_destroy (&sample);
    bson_destroy (&stored);
    online_close (&on);
}

/* ObjectIds alone, four partitions: the two between sampled values are
 * {_id: {$gt: a, $lte: b}} (one_type_range: the bracket holds no other
 * type), the first and the last the general form, which reaches the
 * other brackets; every _id, of any type, still in exactly one. */
static void
test_one_type_ranges (void)
{
    bson_t *sample = bson_new (), *probe = seven_types ();
    int k = 0, simple = 0;
    char key[16], str[32];
    bson_oid_t oid;
    bson_iter_t it, f, op;
    parts_t p;

    for (int i = 0; i < 100; i++) {
        snprintf (str, sizeof str, "66%06x0000000000000000", (unsigned) i * 4099);
        bson_oid_init_from_string (&oid, str);
        bson_append_oid (sample, t_key_next (key, sizeof key, &k), -1, &oid);
    }
    compute (sample, NULL, 100000, 0, 4, &p);
    T_CHECK (p.n == 4);
    for (int i = 0; i < p.n; i++) {
        bool one = bson_iter_init_find (&f, &p.filter[i], "_id") && BSON_ITER_HOLDS_DOCUMENT (&f) &&
                   bson_iter_recurse (&f, &op) && bson_iter_next (&op) &&
                   !strcmp (bson_iter_key (&op), "$gt") && BSON_ITER_HOLDS_OID (&op) &&
                   bson_iter_next (&op) && !strcmp (bson_iter_key (&op), "$lte") &&
                   BSON_ITER_HOLDS_OID (&op) && !bson_iter_next (&op) &&
                   bson_count_keys (&p.filter[i]) == 1;
        T_CHECK (one == (i == 1 || i == 2));
        simple += one;
    }
    T_CHECK (simple == 2);
    /* the sample's ObjectIds and every type of the seven */
    bson_iter_init (&it, sample);
    while (bson_iter_next (&it))
        T_CHECK (where (&p, &it) >= 0);
    bson_iter_init (&it, probe);
    while (bson_iter_next (&it))
        T_CHECK (where (&p, &it) >= 0);
    parts_destroy (&p);
    bson_destroy (probe);
    bson_destroy (sample);
}

/* test_online_partition [URI]: with a server's URI, only the test on it. */
int
main (int argc, char **argv)
{
    if (argc > 1) {
        server_uri = argv[1];
        mongoc_init ();
        mongoc_log_set_handler (NULL, NULL); /* mongo-java-server has no endSessions */
        T_RUN (test_server);
        T_RUN (test_server_sample);
        mongoc_cleanup ();
        return t_done ();
    }
    T_RUN (test_seven_types_eight_partitions);
    T_RUN (test_equal_numbers);
    T_RUN (test_unsampled);
    T_RUN (test_counts);
    T_RUN (test_one_type_ranges);
    return t_done ();
}
