/* A dump's namespaces by name (common/dump/nsindex.c) and the directory
 * layout's matching of files to them (layout.c): on 20,000 names, every
 * one found as the search from the start found it (the first of two of a
 * name), none that is not there, namespaces added behind the index's back
 * found too, and the namespaces left in the order they were listed; a
 * directory's metadata and .bson stems (escaped names, unknown stems,
 * time-series buckets) matched to the same namespaces as before. */
#include <bson/bson.h>
#include <stdio.h>
#include <string.h>

#include "nsindex.h"
#include "reader_impl.h"
#include "remodel/nsname.h"
#include "test.h"

#define N_NAMES 20000

/* Names alike on purpose: the same stem in three databases, one digit
 * apart, a prefix of another, spaces and slashes that are escaped. */
static void
name_of (size_t i, char *db, size_t db_len, char *coll, size_t coll_len)
{
    static const char *const dbs[] = {"shop", "shop2", "s"};
    snprintf (db, db_len, "%s", dbs[i % 3]);
    switch (i % 4) {
    case 0: snprintf (coll, coll_len, "c%zu", i); break;
    case 1: snprintf (coll, coll_len, "c%zu.x", i); break;
    case 2: snprintf (coll, coll_len, "tenant %zu/orders", i); break;
    default: snprintf (coll, coll_len, "c%zux", i / 10); break;
    }
}

static void
test_find_many (void)
{
    rm_dump_info_t info;
    rm_nsindex_t x;
    char db[32], coll[64];
    size_t wrong = 0, missing_found = 0;

    rm_dump_info_init (&info);
    rm_nsindex_init (&x);
    for (size_t i = 0; i < N_NAMES; i++) {
        name_of (i, db, sizeof db, coll, sizeof coll);
        rm_dump_info_add (&info, db, coll);
        /* Looked up as they come, as a scan does: the index catches up. */
        if (i % 7 == 0 && rm_nsindex_find (&x, &info, db, coll) != rm_dump_info_find (&info, db, coll))
            wrong++;
    }
    /* The oplog's empty database, and a second namespace of a name
     * already listed: the first is the one found. */
    rm_dump_info_add (&info, "", "oplog");
    rm_dump_info_add (&info, "shop", "c0");
    for (size_t i = 0; i < info.n_ns; i++) {
        rm_ns_t *want = rm_dump_info_find (&info, info.ns[i]->db, info.ns[i]->coll);
        if (rm_nsindex_find (&x, &info, info.ns[i]->db, info.ns[i]->coll) != want)
            wrong++;
        if (info.ns[i]->index != i)
            wrong++;
    }
    T_CHECK (wrong == 0);
    T_CHECK (rm_nsindex_find (&x, &info, "shop", "c0") == info.ns[0]);
    T_CHECK (rm_nsindex_find (&x, &info, "", "oplog") == info.ns[N_NAMES]);
    /* Names that are not there: other databases, a prefix, the name and
     * database swapped, the separator moved. */
    for (size_t i = 0; i < N_NAMES; i += 3) {
        char other[96];
        name_of (i, db, sizeof db, coll, sizeof coll);
        snprintf (other, sizeof other, "%s!", coll);
        missing_found += rm_nsindex_find (&x, &info, db, other) != NULL;
        missing_found += rm_nsindex_find (&x, &info, "nodb", coll) != NULL;
        missing_found += rm_nsindex_find (&x, &info, coll, db) != NULL;
    }
    missing_found += rm_nsindex_find (&x, &info, "sho", "pc0") != NULL;
    missing_found += rm_nsindex_find (&x, &info, "", "") != NULL;
    T_CHECK (missing_found == 0);
    rm_nsindex_destroy (&x);
    rm_dump_info_destroy (&info);
}

static void
test_find_rebuilt_list (void)
{
    rm_dump_info_t info;
    rm_nsindex_t x;
    rm_dump_info_init (&info);
    rm_nsindex_init (&x);
    rm_dump_info_add (&info, "a", "one");
    rm_dump_info_add (&info, "a", "two");
    T_CHECK (rm_nsindex_find (&x, &info, "a", "two") == info.ns[1]);
    /* The list emptied and filled again: nothing stale is found. */
    rm_dump_info_destroy (&info);
    rm_dump_info_add (&info, "b", "three");
    T_CHECK (rm_nsindex_find (&x, &info, "a", "two") == NULL);
    T_CHECK (rm_nsindex_find (&x, &info, "b", "three") == info.ns[0]);
    rm_nsindex_destroy (&x);
    rm_dump_info_destroy (&info);
}

/* A directory of many collections as dir_read.c's scan sees it: metadata
 * first (some with a collectionName), then the .bson stems, escaped. */
static void
test_layout_many (void)
{
    rm_dump_info_t info;
    rm_nsindex_t x;
    bson_error_t err = {0};
    char db[32], coll[64];
    size_t wrong = 0, n_meta = N_NAMES / 2;
    rm_ns_t *ns;

    rm_dump_info_init (&info);
    rm_nsindex_init (&x);
    for (size_t i = 0; i < n_meta; i++) {
        char *stem, *json;
        name_of (i, db, sizeof db, coll, sizeof coll);
        stem = rm_nsname_escape (coll);
        json = i % 2 ? bson_strdup_printf ("{\"collectionName\": \"%s\", \"indexes\": []}", coll)
                     : bson_strdup ("{\"indexes\": []}");
        ns = rm_layout_add_metadata (&info, &x, "dump", db, stem, json, strlen (json), &err);
        wrong += !ns || strcmp (ns->coll, coll) != 0 || ns->index != i;
        bson_free (json);
        bson_free (stem);
    }
    T_CHECK (info.n_ns == n_meta);
    /* Every name's .bson: those with metadata matched to it, the others
     * added after, in the order their files come. */
    for (size_t i = 0; i < N_NAMES; i++) {
        char *stem;
        name_of (i, db, sizeof db, coll, sizeof coll);
        stem = rm_nsname_escape (coll);
        ns = rm_layout_ns_for_bson (&info, &x, "dump", db, stem, &err);
        wrong += !ns || strcmp (ns->db, db) != 0 || strcmp (ns->coll, coll) != 0 ||
                 ns->index != i;
        bson_free (stem);
    }
    T_CHECK (wrong == 0);
    T_CHECK (info.n_ns == N_NAMES);
    /* A stem escaped otherwise than the writer would (%41 for A) finds
     * the same namespace; a bad escape is refused. */
    rm_dump_info_add (&info, "shop", "A");
    T_CHECK (rm_layout_ns_for_bson (&info, &x, "dump", "shop", "%41", &err) == info.ns[N_NAMES]);
    T_CHECK (rm_layout_ns_for_bson (&info, &x, "dump", "shop", "bad%zz", &err) == NULL);
    T_CHECK (info.n_ns == N_NAMES + 1);
    rm_nsindex_destroy (&x);
    rm_dump_info_destroy (&info);
}

/* A time series' buckets file pairs with the series its metadata named. */
static void
test_layout_buckets (void)
{
    rm_dump_info_t info;
    rm_nsindex_t x;
    bson_error_t err = {0};
    const char *json = "{\"type\": \"timeseries\", \"options\": {\"timeseries\": {\"timeField\": \"t\"}}}";
    rm_ns_t *series, *ns;

    rm_dump_info_init (&info);
    rm_nsindex_init (&x);
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf (name, sizeof name, "other%d", i);
        rm_dump_info_add (&info, "iot", name);
    }
    series = rm_layout_add_metadata (&info, &x, "dump", "iot", "readings", json, strlen (json), &err);
    T_CHECK (series && !strcmp (series->type, "timeseries"));
    ns = rm_layout_ns_for_bson (&info, &x, "dump", "iot", "system.buckets.readings", &err);
    T_CHECK (ns == series);
    T_CHECK_STR (series ? series->data_coll : NULL, "system.buckets.readings");
    T_CHECK (info.n_ns == 101);
    rm_nsindex_destroy (&x);
    rm_dump_info_destroy (&info);
}

int
main (void)
{
    T_RUN (test_find_many);
    T_RUN (test_find_rebuilt_list);
    T_RUN (test_layout_many);
    T_RUN (test_layout_buckets);
    return t_done ();
}
