/* The write decisions of an online run (shell-ext/batch/online_write_rule.c)
 * without a server, each branch a row: in place, $set/$unset or a
 * replacement and the exact update; the condition it is written on; the
 * backup before it; whether both fit in a document; what a replacement
 * gives back of the application's; and, side by side, what an insert
 * refused with duplicate keys leaves to rewrite. Documents are written
 * and compared as canonical Extended JSON. */
#include <stdlib.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "test.h"
#include "test_bson.h"

static void
test_form (void)
{
    static const struct {
        const char *name, *doc, *want;
        online_write_form_t form;
        const char *update; /* canonical; "{ }" for a replacement */
    } rows[] = {
        {"a value changes", "{\"_id\": 1, \"a\": 1, \"b\": 2}", "{\"_id\": 1, \"a\": 1, \"b\": 3}",
         ONLINE_WRITE_FIELDS, "{ \"$set\" : { \"b\" : { \"$numberInt\" : \"3\" } } }"},
        {"a type changes", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1.0}",
         ONLINE_WRITE_FIELDS, "{ \"$set\" : { \"a\" : { \"$numberDouble\" : \"1.0\" } } }"},
        {"a field goes", "{\"_id\": 1, \"a\": 1, \"b\": 2}", "{\"_id\": 1, \"a\": 1}",
         ONLINE_WRITE_FIELDS, "{ \"$unset\" : { \"b\" : \"\" } }"},
        {"a field comes, last", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1, \"c\": \"x\"}",
         ONLINE_WRITE_FIELDS, "{ \"$set\" : { \"c\" : \"x\" } }"},
        {"new fields in name order", "{\"_id\": 1}", "{\"_id\": 1, \"b\": 1, \"c\": 2}",
         ONLINE_WRITE_FIELDS,
         "{ \"$set\" : { \"b\" : { \"$numberInt\" : \"1\" }, "
         "\"c\" : { \"$numberInt\" : \"2\" } } }"},
        {"set and unset", "{\"_id\": 1, \"a\": 1, \"b\": 2}", "{\"_id\": 1, \"a\": 5, \"z\": 2}",
         ONLINE_WRITE_FIELDS,
         "{ \"$set\" : { \"a\" : { \"$numberInt\" : \"5\" }, \"z\" : { \"$numberInt\" : \"2\" } }, "
         "\"$unset\" : { \"b\" : \"\" } }"},
        {"a field dropped from the middle", "{\"_id\": 1, \"a\": 1, \"b\": 2, \"c\": 3}",
         "{\"_id\": 1, \"c\": 3}", ONLINE_WRITE_FIELDS,
         "{ \"$unset\" : { \"a\" : \"\", \"b\" : \"\" } }"},
        /* What a $set would not place as the step makes it: replaced. */
        {"new fields out of name order", "{\"_id\": 1}", "{\"_id\": 1, \"c\": 1, \"b\": 2}",
         ONLINE_WRITE_REPLACE, "{ }"},
        {"new field twice", "{\"_id\": 1}", "{\"_id\": 1, \"b\": 1, \"b\": 2}",
         ONLINE_WRITE_REPLACE, "{ }"},
        {"old fields swapped", "{\"_id\": 1, \"a\": 1, \"b\": 2}",
         "{\"_id\": 1, \"b\": 2, \"a\": 1}", ONLINE_WRITE_REPLACE, "{ }"},
        {"an old field after a new one", "{\"_id\": 1, \"a\": 1}",
         "{\"_id\": 1, \"n\": 1, \"a\": 1}", ONLINE_WRITE_REPLACE, "{ }"},
        {"an old field twice", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1, \"a\": 2}",
         ONLINE_WRITE_REPLACE, "{ }"},
        {"a new name with a dot", "{\"_id\": 1}", "{\"_id\": 1, \"a.b\": 1}",
         ONLINE_WRITE_REPLACE, "{ }"},
        {"a new name with a $", "{\"_id\": 1}", "{\"_id\": 1, \"$x\": 1}", ONLINE_WRITE_REPLACE,
         "{ }"},
        {"a new empty name", "{\"_id\": 1}", "{\"_id\": 1, \"\": 1}", ONLINE_WRITE_REPLACE, "{ }"},
        {"a changed name with a dot", "{\"_id\": 1, \"a.b\": 1}", "{\"_id\": 1, \"a.b\": 2}",
         ONLINE_WRITE_REPLACE, "{ }"},
        {"a removed name with a $", "{\"_id\": 1, \"$x\": 1}", "{\"_id\": 1}",
         ONLINE_WRITE_REPLACE, "{ }"},
        {"nothing changes", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1}",
         ONLINE_WRITE_REPLACE, "{ }"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *d = doc (rows[i].doc), *w = doc (rows[i].want), u;
        online_write_form_t f = online_write_form (bson_get_data (d), d->len, bson_get_data (w),
                                                   w->len, &u);
        if (f != rows[i].form)
            fprintf (stderr, "  %s: form %d, want %d\n", rows[i].name, f, rows[i].form);
        T_CHECK (f == rows[i].form);
        T_CHECK (is_json (&u, rows[i].update, rows[i].name));
        bson_destroy (&u);
        bson_destroy (d);
        bson_destroy (w);
    }
}

/* A document of n fields f0..f(n-1), with _id first; the last one's value
 * is last. */
static bson_t *
wide (int n, int last)
{
    bson_t *b = bson_new ();
    char key[16];
    BSON_APPEND_INT32 (b, "_id", 1);
    for (int i = 0; i < n - 1; i++) {
        snprintf (key, sizeof key, "f%03d", i);
        BSON_APPEND_INT32 (b, key, i == n - 2 ? last : i);
    }
    return b;
}

static void
test_form_wide (void)
{
    /* 64 fields (_id among them) are compared; one more is not worth it:
     * replaced. */
    bson_t *a = wide (64, 0), *b = wide (64, 1), *c = wide (65, 0), *d = wide (65, 1), u;
    T_CHECK (online_write_form (bson_get_data (a), a->len, bson_get_data (b), b->len, &u) ==
             ONLINE_WRITE_FIELDS);
    T_CHECK (is_json (&u, "{ \"$set\" : { \"f062\" : { \"$numberInt\" : \"1\" } } }", "64"));
    bson_destroy (&u);
    T_CHECK (online_write_form (bson_get_data (c), c->len, bson_get_data (d), d->len, &u) ==
             ONLINE_WRITE_REPLACE);
    T_CHECK (is_json (&u, "{ }", "65"));
    bson_destroy (&u);
    bson_destroy (a);
    bson_destroy (b);
    bson_destroy (c);
    bson_destroy (d);
}

static void
test_filter (void)
{
    static const struct {
        const char *name, *doc, *update, *sel;
    } rows[] = {
        {"the _id and each field written, as read", "{\"_id\": 7, \"a\": 1, \"b\": \"x\"}",
         "{\"$set\": {\"a\": 2}, \"$unset\": {\"b\": \"\"}}",
         "{ \"_id\" : { \"$numberInt\" : \"7\" }, \"a\" : { \"$numberInt\" : \"1\" }, "
         "\"b\" : \"x\" }"},
        {"a field new to the document: absent", "{\"_id\": 7}", "{\"$set\": {\"n\": 1}}",
         "{ \"_id\" : { \"$numberInt\" : \"7\" }, \"n\" : { \"$exists\" : false } }"},
        {"an _id written is the _id's condition only", "{\"_id\": 7}",
         "{\"$set\": {\"_id\": 8}}", "{ \"_id\" : { \"$numberInt\" : \"7\" } }"},
        {"no _id: an _id written adds no condition", "{\"a\": 1}", "{\"$set\": {\"_id\": 8}}",
         "{ }"},
        {"an operand not a document names nothing", "{\"_id\": 7, \"a\": 1}",
         "{\"$set\": 1}", "{ \"_id\" : { \"$numberInt\" : \"7\" } }"},
        {"an _id starting with $ by $eq", "{\"_id\": {\"$x\": 1}, \"a\": 1}",
         "{\"$set\": {\"a\": 2}}",
         "{ \"_id\" : { \"$eq\" : { \"$x\" : { \"$numberInt\" : \"1\" } } }, "
         "\"a\" : { \"$numberInt\" : \"1\" } }"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *d = doc (rows[i].doc), *u = doc (rows[i].update), sel;
        online_write_filter (NULL, "crm.people", bson_get_data (d), d->len, u, &sel);
        T_CHECK (is_json (&sel, rows[i].sel, rows[i].name));
        bson_destroy (&sel);
        bson_destroy (d);
        bson_destroy (u);
    }
}

/* With the fields the step reads: a denormalize reads its localField in
 * crm.people (by its top-level name, once, before the fields written),
 * its partners' fields in crm.hosts (another namespace's). */
static void
test_filter_reads (void)
{
    static const char plan[] =
        "{\"remodel\": 1, \"steps\": [{\"denormalize\": {\"in\": \"crm.people\", "
        "\"from\": \"crm.hosts\", \"localField\": \"meta.host\", "
        "\"fields\": {\"host_ip\": \"ipaddr\"}}}]}";
    rm_plan_t p;
    bson_error_t err;
    rm_fieldcheck_t *reads;
    bson_t *d = doc ("{\"_id\": 1, \"status\": \"a\", \"meta\": {\"host\": 4}}"), *u, sel;

    T_CHECK (rm_plan_parse (&p, plan, strlen (plan), &err));
    reads = rm_fieldcheck_reads (&p.steps[0]);
    u = doc ("{\"$set\": {\"host_ip\": \"10.0.0.1\", \"meta\": 1}}");
    online_write_filter (reads, "crm.people", bson_get_data (d), d->len, u, &sel);
    T_CHECK (is_json (&sel, "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"meta\" : { \"host\" : "
                            "{ \"$numberInt\" : \"4\" } }, \"host_ip\" : { \"$exists\" : false } }",
                      "reads"));
    bson_destroy (&sel);
    online_write_filter (reads, "crm.hosts", bson_get_data (d), d->len, u, &sel);
    T_CHECK (is_json (&sel, "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"ipaddr\" : "
                            "{ \"$exists\" : false }, \"host_ip\" : { \"$exists\" : false }, "
                            "\"meta\" : { \"host\" : { \"$numberInt\" : \"4\" } } }",
                      "another namespace's reads"));
    bson_destroy (&sel);
    rm_fieldcheck_destroy (reads);
    rm_plan_destroy (&p);
    bson_destroy (d);
    bson_destroy (u);
}

/* The canonical text of a checksum as a backup holds it. */
static void
crc_text (const uint8_t *data, uint32_t len, char *buf, size_t cap)
{
    snprintf (buf, cap, "{ \"$numberLong\" : \"%lld\" }",
              (long long) (int64_t) rm_crc64_update (0, data, len));
}

static void
test_backup (void)
{
    bson_t *d = doc ("{\"_id\": 3, \"a\": 1, \"b\": 2}");
    bson_t *w = doc ("{\"_id\": 3, \"a\": 1, \"c\": 4}");
    bson_t *odd = doc ("{\"_id\": 3, \"a\": 1, \"x.y\": 4}"), sel, u;
    bson_iter_t it, in;
    char read[64], wrote[64], *want;

    online_write_backup (bson_get_data (d), d->len, bson_get_data (w), w->len, &sel, &u);
    T_CHECK (is_json (&sel, "{ \"_id\" : { \"$numberInt\" : \"3\" } }", "backup filter"));
    crc_text (bson_get_data (d), d->len, read, sizeof read);
    crc_text (bson_get_data (w), w->len, wrote, sizeof wrote);
    /* The checksums of the fields come from online_undo.c (its own test):
     * here their names, and the document around them. */
    T_CHECK (bson_iter_init_find (&it, &u, "$addToSet"));
    want = bson_strdup_printf (
        "{ \"$setOnInsert\" : { \"doc\" : { \"_id\" : { \"$numberInt\" : \"3\" }, \"a\" : "
        "{ \"$numberInt\" : \"1\" }, \"b\" : { \"$numberInt\" : \"2\" } } }, \"$set\" : "
        "{ \"wrote\" : %s, \"wroteFields\" : { \"$numberLong\" : \"%lld\" } }, \"$addToSet\" : "
        "{ \"read\" : %s, \"wrote_all\" : %s, \"fieldsWrote.c\" : ", wrote,
        (long long) (int64_t) online_fields_digest (bson_get_data (w), w->len), read, wrote);
    {
        char *got = bson_as_canonical_extended_json (&u, NULL);
        T_CHECK (got && !strncmp (got, want, strlen (want)));
        if (got && strncmp (got, want, strlen (want)))
            fprintf (stderr, "  got  %s\n  want %s...\n", got, want);
        /* c set, b removed; nothing more */
        T_CHECK (got && strstr (got, "\"fieldsWrote.b\" : { \"$numberLong\"") &&
                 !strstr (got, "fieldsWrote.a") && !strstr (got, "undoWhole"));
        bson_free (got);
    }
    bson_free (want);
    bson_destroy (&sel);
    bson_destroy (&u);
    /* A name a $set cannot take: the backup is judged whole at rollback. */
    online_write_backup (bson_get_data (d), d->len, bson_get_data (odd), odd->len, &sel, &u);
    T_CHECK (bson_iter_init_find (&it, &u, "$set") && bson_iter_recurse (&it, &in) &&
             bson_iter_find (&in, "undoWhole") && bson_iter_as_bool (&in));
    bson_destroy (&sel);
    bson_destroy (&u);
    bson_destroy (d);
    bson_destroy (w);
    bson_destroy (odd);
}

/* A document {_id: 1, s: <n bytes of string>}. */
static bson_t *
big (uint32_t n)
{
    bson_t *b = bson_new ();
    char *s = malloc (n + 1);
    memset (s, 'x', n);
    s[n] = '\0';
    BSON_APPEND_INT32 (b, "_id", 1);
    bson_append_utf8 (b, "s", 1, s, (int) n);
    free (s);
    return b;
}

static void
test_fits (void)
{
    bson_t *small = doc ("{\"_id\": 1, \"s\": \"a\"}"), *smaller = doc ("{\"_id\": 1}");
    /* 16 MiB less its frame (22 bytes): want at the limit exactly, then
     * one over. */
    bson_t *at = big (ONLINE_DOC_MAX - 22);
    bson_t *over = big (ONLINE_DOC_MAX - 22 + 1);
    bson_t *half = big (ONLINE_DOC_MAX / 2);
    uint64_t size = 0;

    T_CHECK (at->len == ONLINE_DOC_MAX && over->len == ONLINE_DOC_MAX + 1);
    T_CHECK (online_write_fits (bson_get_data (small), small->len, bson_get_data (smaller),
                                smaller->len, &size) == ONLINE_WRITE_FITS);
    /* The backup's frame around the original: _id, doc, five checksums,
     * the room for a dozen more, s noted field by field. */
    T_CHECK (size == 4 + (1 + 4 + 4) + (1 + 4 + small->len) + (1 + 6 + 8) + (1 + 12 + 8) +
                         (1 + 5 + 4 + 11 + 1) + (1 + 10 + 4 + 11 + 1) + 1 + 264 +
                         (1 + 12 + 4 + 1) + (1 + 1 + 1 + 4 + 12 * 11 + 1));
    T_CHECK (online_write_fits (bson_get_data (small), small->len, bson_get_data (at), at->len,
                                &size) == ONLINE_WRITE_FITS);
    T_CHECK (online_write_fits (bson_get_data (small), small->len, bson_get_data (over),
                                over->len, &size) == ONLINE_WRITE_DOC_TOO_LARGE);
    T_CHECK (size == ONLINE_DOC_MAX + 1);
    /* The original at the limit: the step's document fits, its backup not. */
    T_CHECK (online_write_fits (bson_get_data (at), at->len, bson_get_data (small), small->len,
                                &size) == ONLINE_WRITE_BACKUP_TOO_LARGE);
    T_CHECK (size > ONLINE_DOC_MAX);
    T_CHECK (online_write_fits (bson_get_data (half), half->len, bson_get_data (small),
                                small->len, &size) == ONLINE_WRITE_FITS);
    bson_destroy (small);
    bson_destroy (smaller);
    bson_destroy (at);
    bson_destroy (over);
    bson_destroy (half);
}

static void
test_give_back (void)
{
    static const struct {
        const char *name, *doc, *pre, *want;
        bool undid;
        const char *sel, *update;
    } rows[] = {
        {"nothing of the application's", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1}",
         "{\"_id\": 1, \"a\": 2}", false, "{ \"_id\" : { \"$numberInt\" : \"1\" } }", "{ }"},
        {"a field added since: given back on what want left there",
         "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1, \"n\": \"app\"}",
         "{\"_id\": 1, \"a\": 2}", true,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"n\" : { \"$exists\" : false } }",
         "{ \"$set\" : { \"n\" : \"app\" } }"},
        {"a field changed since: given back on want's value", "{\"_id\": 1, \"a\": 1}",
         "{\"_id\": 1, \"a\": 9}", "{\"_id\": 1, \"a\": 2}", true,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"a\" : { \"$numberInt\" : \"2\" } }",
         "{ \"$set\" : { \"a\" : { \"$numberInt\" : \"9\" } } }"},
        {"names a $set cannot take stay", "{\"_id\": 1}",
         "{\"_id\": 1, \"x.y\": 1, \"$z\": 1, \"\": 1}", "{\"_id\": 1, \"a\": 2}", false,
         "{ \"_id\" : { \"$numberInt\" : \"1\" } }", "{ }"},
        {"the _id is never given back", "{\"_id\": 1}", "{\"_id\": 2}", "{\"_id\": 1}", false,
         "{ \"_id\" : { \"$numberInt\" : \"1\" } }", "{ }"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *d = doc (rows[i].doc), *p = doc (rows[i].pre), *w = doc (rows[i].want), sel, u;
        bool undid = online_write_give_back (bson_get_data (d), d->len, bson_get_data (p), p->len,
                                             bson_get_data (w), w->len, &sel, &u);
        if (undid != rows[i].undid)
            fprintf (stderr, "  %s: undid %d\n", rows[i].name, undid);
        T_CHECK (undid == rows[i].undid);
        T_CHECK (is_json (&sel, rows[i].sel, rows[i].name));
        T_CHECK (is_json (&u, rows[i].update, rows[i].name));
        bson_destroy (&sel);
        bson_destroy (&u);
        bson_destroy (d);
        bson_destroy (p);
        bson_destroy (w);
    }
}

static void
test_insert_failed (void)
{
    /* A chunk idx[2..6) of a batch: results 10..15. */
    static const size_t idx[] = {10, 11, 12, 13, 14, 15};
    static const struct {
        const char *name, *reply;
        uint32_t code;
        bool rewrite_dups;
        online_insert_retry_t choice;
        size_t nd, dups[4];
    } rows[] = {
        {"the rest inserted: the duplicates rewritten",
         "{\"nInserted\": 2, \"writeErrors\": [{\"index\": 1, \"code\": 11000}, "
         "{\"index\": 3, \"code\": 11000}]}", 11000, true, ONLINE_INSERT_REWRITE_DUPS, 2,
         {13, 15}},
        {"stopped at the first duplicate: the chunk rewritten",
         "{\"nInserted\": 0, \"writeErrors\": [{\"index\": 0, \"code\": 11000}]}", 11000, true,
         ONLINE_INSERT_REWRITE_ALL, 1, {12}},
        {"no count of inserted: the chunk rewritten",
         "{\"writeErrors\": [{\"index\": 0, \"code\": 11000}]}", 11000, true,
         ONLINE_INSERT_REWRITE_ALL, 1, {12}},
        {"not a duplicate among them", "{\"nInserted\": 2, \"writeErrors\": [{\"index\": 1, "
         "\"code\": 11000}, {\"index\": 2, \"code\": 2}]}", 11000, true, ONLINE_INSERT_FAIL, 1,
         {13}},
        {"an index outside the chunk", "{\"nInserted\": 3, \"writeErrors\": [{\"index\": 4, "
         "\"code\": 11000}]}", 11000, true, ONLINE_INSERT_FAIL, 0, {0}},
        {"a negative index", "{\"nInserted\": 3, \"writeErrors\": [{\"index\": -1, "
         "\"code\": 11000}]}", 11000, true, ONLINE_INSERT_FAIL, 0, {0}},
        {"no index", "{\"nInserted\": 3, \"writeErrors\": [{\"code\": 11000}]}", 11000, true,
         ONLINE_INSERT_FAIL, 0, {0}},
        {"more errors than documents", "{\"nInserted\": 0, \"writeErrors\": ["
         "{\"index\": 0, \"code\": 11000}, {\"index\": 1, \"code\": 11000}, "
         "{\"index\": 2, \"code\": 11000}, {\"index\": 3, \"code\": 11000}, "
         "{\"index\": 3, \"code\": 11000}]}", 11000, true, ONLINE_INSERT_FAIL, 4,
         {12, 13, 14, 15}},
        {"no answer (writeErrors empty)", "{\"nInserted\": 0, \"writeErrors\": []}", 11000,
         true, ONLINE_INSERT_FAIL, 0, {0}},
        {"no writeErrors", "{\"nInserted\": 0}", 11000, true, ONLINE_INSERT_FAIL, 0, {0}},
        {"a write concern error too", "{\"nInserted\": 3, \"writeErrors\": [{\"index\": 0, "
         "\"code\": 11000}], \"writeConcernErrors\": [{\"code\": 64}]}", 11000, true,
         ONLINE_INSERT_FAIL, 0, {0}},
        {"an empty writeConcernErrors is none", "{\"nInserted\": 3, \"writeErrors\": "
         "[{\"index\": 0, \"code\": 11000}], \"writeConcernErrors\": []}", 11000, true,
         ONLINE_INSERT_REWRITE_DUPS, 1, {12}},
        {"the error not a duplicate key", "{\"nInserted\": 3, \"writeErrors\": [{\"index\": 0, "
         "\"code\": 11000}]}", 6, true, ONLINE_INSERT_FAIL, 0, {0}},
        {"not to be rewritten (a rewrite's own insert)", "{\"nInserted\": 3, \"writeErrors\": "
         "[{\"index\": 0, \"code\": 11000}]}", 11000, false, ONLINE_INSERT_FAIL, 0, {0}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *reply = doc (rows[i].reply);
        size_t dups[4] = {0}, nd = 99;
        online_insert_retry_t c = online_insert_failed (reply, rows[i].code, rows[i].rewrite_dups,
                                                        idx, 2, 6, dups, &nd);
        if (c != rows[i].choice || nd != rows[i].nd)
            fprintf (stderr, "  %s: choice %d, %zu duplicates\n", rows[i].name, c, nd);
        T_CHECK (c == rows[i].choice);
        T_CHECK (nd == rows[i].nd);
        for (size_t k = 0; k < rows[i].nd && k < 4; k++)
            T_CHECK (dups[k] == rows[i].dups[k]);
        bson_destroy (reply);
    }
}

int
main (void)
{
    T_RUN (test_form);
    T_RUN (test_form_wide);
    T_RUN (test_filter);
    T_RUN (test_filter_reads);
    T_RUN (test_backup);
    T_RUN (test_fits);
    T_RUN (test_give_back);
    T_RUN (test_insert_failed);
    return t_done ();
}
