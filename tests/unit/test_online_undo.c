/* The rollback decisions of an in-place run (shell-ext/batch/online_undo.c)
 * without a server: what a backup notes of each write, field by field
 * (the checksum of each value remodel gave a field, of nothing for a
 * removal), the room that takes, and what rollback makes of a document
 * now given its backup and original: replaced whole, remodel's fields
 * given back on a condition (the exact filter and update), nothing to do,
 * kept and named (the exact text), or judged whole (an earlier remodel's
 * backup). Each row a case; documents compared as canonical Extended
 * JSON. */
#include <stdlib.h>

#include "online_batch.h"
#include "remodel/crc64.h"
#include "test.h"
#include "test_bson.h"

/* The checksum a backup holds of an int32 value v (its type byte, then its
 * four bytes), or of nothing (none): computed here, apart from the code. */
static int64_t
crc_int32 (int32_t v)
{
    uint8_t type = 0x10, le[4] = {(uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16),
                                  (uint8_t) (v >> 24)};
    return (int64_t) rm_crc64_update (rm_crc64_update (0, &type, 1), le, 4);
}

static int64_t
crc_none (void)
{
    uint8_t none = 0;
    return (int64_t) rm_crc64_update (0, &none, 1);
}

static void
test_note (void)
{
    bson_t *orig = doc ("{\"_id\": 1, \"a\": 1, \"b\": 2, \"c\": 3}");
    bson_t *want = doc ("{\"_id\": 2, \"a\": 1, \"b\": 5, \"d\": 4}");
    bson_t add = BSON_INITIALIZER;
    char *text;

    /* b and d set (want's order), c removed (the original's); _id and
     * the unchanged a not noted. */
    T_CHECK (online_undo_note (bson_get_data (orig), orig->len, bson_get_data (want), want->len,
                               &add));
    text = bson_strdup_printf ("{ \"fieldsWrote.b\" : { \"$numberLong\" : \"%lld\" }, "
                               "\"fieldsWrote.d\" : { \"$numberLong\" : \"%lld\" }, "
                               "\"fieldsWrote.c\" : { \"$numberLong\" : \"%lld\" } }",
                               (long long) crc_int32 (5), (long long) crc_int32 (4),
                               (long long) crc_none ());
    T_CHECK (is_json (&add, text, "noted"));
    bson_free (text);
    bson_destroy (&add);
    bson_destroy (orig);
    bson_destroy (want);
}

/* Names a $set cannot take, and too long a name: not noted (the backup is
 * then marked undoWhole by online_write_backup). */
static void
test_note_refused (void)
{
    char long_name[300], json[400];
    static const struct {
        const char *name, *orig, *want;
        bool ok;
    } rows[] = {
        {"a set name with a dot", "{\"_id\": 1}", "{\"_id\": 1, \"x.y\": 1}", false},
        {"a removed name with a $", "{\"_id\": 1, \"$x\": 1}", "{\"_id\": 1}", false},
        {"a changed empty name", "{\"_id\": 1, \"\": 1}", "{\"_id\": 1, \"\": 2}", false},
        {"no change", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1}", true},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *o = doc (rows[i].orig), *w = doc (rows[i].want), add = BSON_INITIALIZER;
        bool ok = online_undo_note (bson_get_data (o), o->len, bson_get_data (w), w->len, &add);
        if (ok != rows[i].ok)
            fprintf (stderr, "  %s: %d\n", rows[i].name, ok);
        T_CHECK (ok == rows[i].ok);
        bson_destroy (&add);
        bson_destroy (o);
        bson_destroy (w);
    }
    /* 250 bytes a name at most. */
    for (int n = 250; n <= 251; n++) {
        bson_t *o = doc ("{\"_id\": 1}"), *w, add = BSON_INITIALIZER;
        memset (long_name, 'k', (size_t) n);
        long_name[n] = '\0';
        snprintf (json, sizeof json, "{\"_id\": 1, \"%s\": 1}", long_name);
        w = doc (json);
        T_CHECK (online_undo_note (bson_get_data (o), o->len, bson_get_data (w), w->len, &add) ==
                 (n == 250));
        bson_destroy (&add);
        bson_destroy (o);
        bson_destroy (w);
    }
}

static void
test_room (void)
{
    bson_t *orig = doc ("{\"_id\": 1, \"a\": 1, \"gone\": 0}");
    bson_t *want = doc ("{\"_id\": 1, \"a\": 2, \"bb\": 3}");
    /* The fieldsWrote document's frame, and for each field noted its name
     * and an array of a dozen checksums. */
    T_CHECK (online_undo_room (bson_get_data (orig), orig->len, bson_get_data (want), want->len) ==
             18 + (1 + 1 + 1 + 4 + 132 + 1) + (1 + 2 + 1 + 4 + 132 + 1) +
                 (1 + 4 + 1 + 4 + 132 + 1));
    T_CHECK (online_undo_room (bson_get_data (orig), orig->len, bson_get_data (orig), orig->len) ==
             18);
    bson_destroy (orig);
    bson_destroy (want);
}

/* The backup of orig after remodel wrote each of versions (NULL-ended) in
 * turn: {_id, doc: orig, fieldsWrote: {<field>: [<checksum>...]}}, as the
 * server makes it of online_undo_note's $addToSet. */
static bson_t *
backup_of (const bson_t *orig, const char *const *versions)
{
    bson_t *b = bson_new (), fw, notes = BSON_INITIALIZER;
    bson_iter_t it, k;

    for (size_t v = 0; versions[v]; v++) {
        bson_t *w = doc (versions[v]), add = BSON_INITIALIZER;
        online_undo_note (bson_get_data (orig), orig->len, bson_get_data (w), w->len, &add);
        bson_iter_init (&it, &add);
        while (bson_iter_next (&it)) {
            /* notes: {"fieldsWrote.k": crc, ...} in order, repeats kept */
            bson_append_iter (&notes, bson_iter_key (&it), -1, &it);
        }
        bson_destroy (&add);
        bson_destroy (w);
    }
    bson_iter_init_find (&it, orig, "_id");
    bson_append_iter (b, "_id", 3, &it);
    BSON_APPEND_DOCUMENT (b, "doc", orig);
    BSON_APPEND_DOCUMENT_BEGIN (b, "fieldsWrote", &fw);
    bson_iter_init (&it, &notes);
    while (bson_iter_next (&it)) {
        const char *name = bson_iter_key (&it) + strlen ("fieldsWrote.");
        bson_t arr;
        int n = 0;
        char key[16];
        bool first = true;
        /* each field once, at its first note, with all its checksums */
        bson_iter_init (&k, &notes);
        while (bson_iter_next (&k) && bson_iter_key (&k) != bson_iter_key (&it))
            if (!strcmp (bson_iter_key (&k), bson_iter_key (&it)))
                first = false;
        if (!first)
            continue;
        BSON_APPEND_ARRAY_BEGIN (&fw, name, &arr);
        bson_iter_init (&k, &notes);
        while (bson_iter_next (&k))
            if (!strcmp (bson_iter_key (&k), bson_iter_key (&it)))
                BSON_APPEND_INT64 (&arr, t_key_next (key, sizeof key, &n), bson_iter_int64 (&k));
        bson_append_array_end (&fw, &arr);
    }
    bson_append_document_end (b, &fw);
    bson_destroy (&notes);
    return b;
}

static void
test_plan (void)
{
    static const struct {
        const char *name, *orig, *versions[3], *now;
        online_undo_t undo;
        const char *sel, *update, *held;
    } rows[] = {
        {"remodel's value still there: the original back whole", "{\"_id\": 1, \"a\": 1}",
         {"{\"_id\": 1, \"a\": 2}"}, "{\"_id\": 1, \"a\": 2}", ONLINE_UNDO_WHOLE, "{ }", "{ }",
         ""},
        {"a field remodel added, still there: whole", "{\"_id\": 1}",
         {"{\"_id\": 1, \"n\": 1}"}, "{\"_id\": 1, \"n\": 1}", ONLINE_UNDO_WHOLE, "{ }", "{ }", ""},
        {"an earlier version of remodel's: whole", "{\"_id\": 1, \"a\": 1}",
         {"{\"_id\": 1, \"a\": 2}", "{\"_id\": 1, \"a\": 3}"}, "{\"_id\": 1, \"a\": 2}",
         ONLINE_UNDO_WHOLE, "{ }", "{ }", ""},
        {"the original already: whole", "{\"_id\": 1, \"a\": 1}", {"{\"_id\": 1, \"a\": 2}"},
         "{\"_id\": 1, \"a\": 1}", ONLINE_UNDO_WHOLE, "{ }", "{ }", ""},
        {"the application added a field: remodel's set back on condition",
         "{\"_id\": 1, \"a\": 1}", {"{\"_id\": 1, \"a\": 2}"},
         "{\"_id\": 1, \"a\": 2, \"app\": 9}", ONLINE_UNDO_FIELDS,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"a\" : { \"$numberInt\" : \"2\" } }",
         "{ \"$set\" : { \"a\" : { \"$numberInt\" : \"1\" } } }", ""},
        {"a field remodel added goes, the application's change stays",
         "{\"_id\": 1, \"b\": 1}", {"{\"_id\": 1, \"b\": 1, \"n\": 1}"},
         "{\"_id\": 1, \"b\": 5, \"n\": 1}", ONLINE_UNDO_FIELDS,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"n\" : { \"$numberInt\" : \"1\" } }",
         "{ \"$unset\" : { \"n\" : \"\" } }", ""},
        {"a field remodel removed comes back, on its absence",
         "{\"_id\": 1, \"a\": 1, \"z\": 0}", {"{\"_id\": 1, \"z\": 0}"},
         "{\"_id\": 1, \"z\": 7}", ONLINE_UNDO_FIELDS,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"a\" : { \"$exists\" : false } }",
         "{ \"$set\" : { \"a\" : { \"$numberInt\" : \"1\" } } }", ""},
        {"set and unset together", "{\"_id\": 1, \"a\": 1}",
         {"{\"_id\": 1, \"a\": 2, \"n\": 3}"}, "{\"_id\": 1, \"a\": 2, \"n\": 3, \"app\": 1}",
         ONLINE_UNDO_FIELDS,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"a\" : { \"$numberInt\" : \"2\" }, "
         "\"n\" : { \"$numberInt\" : \"3\" } }",
         "{ \"$set\" : { \"a\" : { \"$numberInt\" : \"1\" } }, \"$unset\" : { \"n\" : \"\" } }",
         ""},
        {"remodel's fields original again, the application's change stands: done",
         "{\"_id\": 1, \"a\": 1, \"b\": 1}", {"{\"_id\": 1, \"a\": 2, \"b\": 1}"},
         "{\"_id\": 1, \"a\": 1, \"b\": 9}", ONLINE_UNDO_DONE,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"a\" : { \"$numberInt\" : \"1\" } }", "{ }",
         ""},
        {"the application wrote a field remodel wrote: kept, named", "{\"_id\": 1, \"a\": 1}",
         {"{\"_id\": 1, \"a\": 2}"}, "{\"_id\": 1, \"a\": 3}", ONLINE_UNDO_KEEP, "{ }", "{ }",
         "{ \"a\" : 3 }"},
        {"the application removed a field remodel wrote", "{\"_id\": 1, \"a\": 1}",
         {"{\"_id\": 1, \"a\": 2}"}, "{\"_id\": 1}", ONLINE_UNDO_KEEP, "{ }", "{ }",
         "{ \"a\" : (removed) }"},
        {"the application wrote a field remodel removed", "{\"_id\": 1, \"a\": 1}",
         {"{\"_id\": 1}"}, "{\"_id\": 1, \"a\": \"s\"}", ONLINE_UNDO_KEEP, "{ }", "{ }",
         "{ \"a\" : \"s\" }"},
        {"two held, both named", "{\"_id\": 1, \"a\": 1, \"b\": 1}",
         {"{\"_id\": 1, \"a\": 2, \"b\": 2}"}, "{\"_id\": 1, \"a\": 3}", ONLINE_UNDO_KEEP, "{ }",
         "{ }", "{ \"a\" : 3 }, { \"b\" : (removed) }"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *orig = doc (rows[i].orig), *now = doc (rows[i].now), *b;
        bson_t sel = BSON_INITIALIZER, update = BSON_INITIALIZER;
        char held[200];
        online_undo_t u;
        b = backup_of (orig, rows[i].versions);
        u = online_undo_plan (b, bson_get_data (orig), orig->len, now, &sel, &update, held,
                              sizeof held);
        if (u != rows[i].undo)
            fprintf (stderr, "  %s: %d, want %d\n", rows[i].name, u, rows[i].undo);
        T_CHECK (u == rows[i].undo);
        T_CHECK (is_json (&sel, rows[i].sel, rows[i].name));
        T_CHECK (is_json (&update, rows[i].update, rows[i].name));
        T_CHECK_STR (held, rows[i].held);
        bson_destroy (&sel);
        bson_destroy (&update);
        bson_destroy (b);
        bson_destroy (orig);
        bson_destroy (now);
    }
}

/* Backups that note nothing rollback can go by: judged whole, by the
 * document's checksums (online_finalize.c); and a note not an array
 * vouches for no value. */
static void
test_plan_unknown (void)
{
    char *noted = bson_strdup_printf ("{\"_id\": 1, \"fieldsWrote\": {\"a\": {\"$numberLong\": "
                                      "\"%lld\"}}}", (long long) crc_int32 (2));
    char *whole = bson_strdup_printf ("{\"_id\": 1, \"undoWhole\": true, \"fieldsWrote\": "
                                      "{\"a\": [{\"$numberLong\": \"%lld\"}]}}",
                                      (long long) crc_int32 (2));
    static const char *unknown[] = {
        "{\"_id\": 1}",                         /* an earlier remodel's */
        "{\"_id\": 1, \"fieldsWrote\": 5}",     /* not a document */
        "{\"_id\": 1, \"fieldsWrote\": [1]}",   /* an array */
    };
    bson_t *orig = doc ("{\"_id\": 1, \"a\": 1}"), *now = doc ("{\"_id\": 1, \"a\": 2}"), *b;
    bson_t sel = BSON_INITIALIZER, update = BSON_INITIALIZER;
    char held[100] = "x";

    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        b = doc (unknown[i]);
        T_CHECK (online_undo_plan (b, bson_get_data (orig), orig->len, now, &sel, &update, held,
                                   sizeof held) == ONLINE_UNDO_UNKNOWN);
        T_CHECK_STR (held, "");
        bson_destroy (b);
    }
    b = doc (whole);
    T_CHECK (online_undo_plan (b, bson_get_data (orig), orig->len, now, &sel, &update, held,
                               sizeof held) == ONLINE_UNDO_UNKNOWN);
    bson_destroy (b);
    /* The same noted as a bare number, not an array: the application's. */
    b = doc (noted);
    T_CHECK (online_undo_plan (b, bson_get_data (orig), orig->len, now, &sel, &update, held,
                               sizeof held) == ONLINE_UNDO_KEEP);
    T_CHECK_STR (held, "{ \"a\" : 2 }");
    bson_destroy (b);
    T_CHECK (is_json (&sel, "{ }", "untouched") && is_json (&update, "{ }", "untouched"));
    bson_destroy (&sel);
    bson_destroy (&update);
    bson_destroy (orig);
    bson_destroy (now);
    bson_free (noted);
    bson_free (whole);
}

/* What the held text takes is bounded by its buffer: cut, never over. */
static void
test_plan_held_cap (void)
{
    static const char *const versions[] = {"{\"_id\": 1, \"a\": 2, \"b\": 2}", NULL};
    bson_t *orig = doc ("{\"_id\": 1, \"a\": 1, \"b\": 1}");
    bson_t *now = doc ("{\"_id\": 1, \"a\": 3, \"b\": 4}"), *b = backup_of (orig, versions);
    bson_t sel = BSON_INITIALIZER, update = BSON_INITIALIZER;
    char held[16];

    memset (held, '#', sizeof held);
    T_CHECK (online_undo_plan (b, bson_get_data (orig), orig->len, now, &sel, &update, held, 10) ==
             ONLINE_UNDO_KEEP);
    T_CHECK_STR (held, "{ \"a\" : 3");
    T_CHECK (held[10] == '#');
    T_CHECK (online_undo_plan (b, bson_get_data (orig), orig->len, now, &sel, &update, held,
                               sizeof held) == ONLINE_UNDO_KEEP);
    T_CHECK_STR (held, "{ \"a\" : 3 }, { ");
    bson_destroy (&sel);
    bson_destroy (&update);
    bson_destroy (b);
    bson_destroy (orig);
    bson_destroy (now);
}

int
main (void)
{
    T_RUN (test_note);
    T_RUN (test_note_refused);
    T_RUN (test_room);
    T_RUN (test_plan);
    T_RUN (test_plan_unknown);
    T_RUN (test_plan_held_cap);
    return t_done ();
}
