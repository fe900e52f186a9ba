/* Resuming after a checkpoint's _id (shell-ext/online_range.c) across
 * BSON types, without a server: the filter for every _id after last in
 * MongoDB's sort order (MinKey < null < numbers < strings < objects <
 * arrays < binData < objectId < bool < date < timestamp < regex < code <
 * MaxKey) is {_id: {$not: {$lte: last}}}, and the brackets before last's
 * left out by their $type aliases; and which _ids read through it the
 * reader still skips. */
#include "online.h"
#include "test.h"

/* The aliases of the brackets, lowest first, as the filter names them. */
static const char *const aliases[] = {"null",     "number", "string", "object", "array", "binData",
                                      "objectId", "bool",   "date",   "timestamp", "regex"};

/* {_id: {$not: {$lte: last}}}, and when before > 0 the first before
 * aliases left out: the filter expected after last. */
static void
expected (const bson_t *holder, size_t before, bson_t *want)
{
    bson_iter_t last;
    bson_t and, clause, id, not, types;
    bson_t after = BSON_INITIALIZER;
    bson_iter_init_find (&last, holder, "v");
    BSON_APPEND_DOCUMENT_BEGIN (&after, "_id", &id);
    BSON_APPEND_DOCUMENT_BEGIN (&id, "$not", &not);
    bson_append_iter (&not, "$lte", 4, &last);
    bson_append_document_end (&id, &not);
    bson_append_document_end (&after, &id);
    if (!before) {
        bson_concat (want, &after);
        bson_destroy (&after);
        return;
    }
    BSON_APPEND_ARRAY_BEGIN (want, "$and", &and);
    BSON_APPEND_DOCUMENT (&and, "0", &after);
    BSON_APPEND_DOCUMENT_BEGIN (&and, "1", &clause);
    BSON_APPEND_DOCUMENT_BEGIN (&clause, "_id", &id);
    BSON_APPEND_DOCUMENT_BEGIN (&id, "$not", &not);
    BSON_APPEND_ARRAY_BEGIN (&not, "$type", &types);
    for (size_t i = 0; i < before; i++) {
        char key[16];
        snprintf (key, sizeof key, "%zu", i);
        BSON_APPEND_UTF8 (&types, key, aliases[i]);
    }
    bson_append_array_end (&not, &types);
    bson_append_document_end (&id, &not);
    bson_append_document_end (&clause, &id);
    bson_append_document_end (&and, &clause);
    bson_append_array_end (want, &and);
    bson_destroy (&after);
}

/* holder {v: last}: the filter after it is the one expected with before
 * brackets left out. */
static void
check_after (bson_t *holder, size_t before)
{
    bson_iter_t last;
    bson_t got = BSON_INITIALIZER, want = BSON_INITIALIZER;
    T_CHECK (bson_iter_init_find (&last, holder, "v"));
    T_CHECK (online_range_after (&last, &got));
    expected (holder, before, &want);
    if (!bson_equal (&got, &want)) {
        char *g = bson_as_relaxed_extended_json (&got, NULL);
        char *w = bson_as_relaxed_extended_json (&want, NULL);
        fprintf (stderr, "  after %s:\n    got  %s\n    want %s\n",
                 bson_iter_type (&last) == BSON_TYPE_MAXKEY ? "MaxKey" : "a value", g, w);
        bson_free (g);
        bson_free (w);
    }
    T_CHECK (bson_equal (&got, &want));
    bson_destroy (&got);
    bson_destroy (&want);
    bson_destroy (holder);
}

static void
test_after_each_type (void)
{
    bson_oid_t oid;
    bson_decimal128_t dec;
    bson_oid_init_from_string (&oid, "5f1d7f3e9c1b2a3d4e5f6071");
    bson_decimal128_from_string ("2.5", &dec);
    check_after (BCON_NEW ("v", BCON_MINKEY), 0);
    check_after (BCON_NEW ("v", BCON_UNDEFINED), 0);  /* sorts before null */
    check_after (BCON_NEW ("v", BCON_INT32 (5)), 1);
    check_after (BCON_NEW ("v", BCON_INT64 (-7)), 1);
    check_after (BCON_NEW ("v", BCON_DOUBLE (2.5)), 1);
    check_after (BCON_NEW ("v", BCON_DECIMAL128 (&dec)), 1);
    check_after (BCON_NEW ("v", BCON_UTF8 ("m")), 2);
    check_after (BCON_NEW ("v", BCON_SYMBOL ("m")), 2); /* a string's bracket */
    check_after (BCON_NEW ("v", "{", "a", BCON_INT32 (1), "}"), 3);
    check_after (BCON_NEW ("v", "[", BCON_INT32 (1), "]"), 4);
    check_after (BCON_NEW ("v", BCON_BIN (BSON_SUBTYPE_BINARY, (const uint8_t *) "ab", 2)), 5);
    check_after (BCON_NEW ("v", BCON_OID (&oid)), 6);
    check_after (BCON_NEW ("v", BCON_BOOL (false)), 7);
    check_after (BCON_NEW ("v", BCON_DATE_TIME (1700000000000)), 8);
    check_after (BCON_NEW ("v", BCON_TIMESTAMP (1700000000, 3)), 9);
    check_after (BCON_NEW ("v", BCON_REGEX ("^a", "i")), 10);
    check_after (BCON_NEW ("v", BCON_CODE ("f()")), 11);
    check_after (BCON_NEW ("v", BCON_MAXKEY), 11);
}

/* After a null: {_id: {$ne: null}} (mongo-java-server's {$lte: null}
 * matches nothing). */
static void
test_after_null (void)
{
    bson_t *holder = BCON_NEW ("v", BCON_NULL);
    bson_t *want = BCON_NEW ("_id", "{", "$ne", BCON_NULL, "}");
    bson_t got = BSON_INITIALIZER;
    bson_iter_t last;
    bson_iter_init_find (&last, holder, "v");
    T_CHECK (online_range_after (&last, &got));
    T_CHECK (bson_equal (&got, want));
    bson_destroy (&got);
    bson_destroy (want);
    bson_destroy (holder);
}

static bool
before (bson_t *id, bson_t *last)
{
    bson_iter_t a, b;
    bool r;
    bson_iter_init_find (&a, id, "v");
    bson_iter_init_find (&b, last, "v");
    r = online_range_before (&a, &b);
    bson_destroy (id);
    bson_destroy (last);
    return r;
}

/* What no alias names and sorts before last comes through the filter:
 * the reader skips it by its bracket; within last's bracket the server
 * decides. */
static void
test_before (void)
{
    bson_oid_t oid;
    bson_oid_init_from_string (&oid, "5f1d7f3e9c1b2a3d4e5f6071");
    T_CHECK (before (BCON_NEW ("v", BCON_MINKEY), BCON_NEW ("v", BCON_UTF8 ("m"))));
    T_CHECK (before (BCON_NEW ("v", BCON_SYMBOL ("z")), BCON_NEW ("v", BCON_OID (&oid))));
    T_CHECK (before (BCON_NEW ("v", BCON_INT32 (99)), BCON_NEW ("v", BCON_UTF8 ("a"))));
    T_CHECK (before (BCON_NEW ("v", BCON_UTF8 ("z")), BCON_NEW ("v", BCON_MAXKEY)));
    T_CHECK (!before (BCON_NEW ("v", BCON_UTF8 ("a")), BCON_NEW ("v", BCON_UTF8 ("m"))));
    T_CHECK (!before (BCON_NEW ("v", BCON_DOUBLE (1.5)), BCON_NEW ("v", BCON_INT64 (9))));
    T_CHECK (!before (BCON_NEW ("v", BCON_OID (&oid)), BCON_NEW ("v", BCON_UTF8 ("m"))));
    T_CHECK (!before (BCON_NEW ("v", BCON_MAXKEY), BCON_NEW ("v", BCON_MINKEY)));
    T_CHECK (!before (BCON_NEW ("v", BCON_CODE ("f()")), BCON_NEW ("v", BCON_REGEX ("a", ""))));
}

int
main (void)
{
    T_RUN (test_after_each_type);
    T_RUN (test_after_null);
    T_RUN (test_before);
    return t_done ();
}
