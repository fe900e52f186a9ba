/* Documents in the unit tests: made from the test's own Extended JSON, and
 * compared as canonical Extended JSON (exact types: 1, 1.0 and
 * {"$numberLong": "1"} differ). Include after test.h and bson.h. */
#ifndef REMODEL_TEST_BSON_H
#define REMODEL_TEST_BSON_H

#include <bson/bson.h>
#include <stdio.h>
#include <string.h>

/* A document from json (the test's own text: said when it is not valid,
 * which fails the test at its first use). */
static bson_t *
doc (const char *json)
{
    bson_error_t err;
    bson_t *b = bson_new_from_json ((const uint8_t *) json, -1, &err);
    if (!b)
        fprintf (stderr, "  bad test JSON %s: %s\n", json, err.message);
    return b;
}

/* Whether b, as canonical Extended JSON, is want (named what on failure). */
static bool
is_json (const bson_t *b, const char *want, const char *what)
{
    char *got = b ? bson_as_canonical_extended_json (b, NULL) : NULL;
    bool same = got && !strcmp (got, want);
    if (!same)
        fprintf (stderr, "  %s: got %s\n  %*s  want %s\n", what, got ? got : "(null)",
                 (int) strlen (what), "", want);
    bson_free (got);
    return same;
}

#endif
