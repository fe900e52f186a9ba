/* The decisions of rollback --carry-writes (shell-ext/cmd/online_carry_rule.c)
 * without a server: the plan's inverse composed, the last step's first, or
 * the first step without one named with its reason; whether an earlier
 * step rewrote a namespace; what the run recorded of the fields an inverse
 * removes (absent, or refused with the exact reason); what each document
 * the inverse makes does to its original; and the namespaces whose
 * originals differ, named; a kept delete's place in the inverse, and a
 * kept set's document restored. Each row a case. */
#include <stdlib.h>
#include <string.h>

#include "online_carry_rule.h"
#include "test.h"
#include "test_bson.h"

#define RENAME_PEOPLE "{\"rename\": {\"in\": \"crm.people\", \"fields\": {\"name\": \"fullName\"}}}"
#define RENAME_TASKS "{\"rename\": {\"in\": \"crm.tasks\", \"fields\": {\"t\": \"title\"}}}"
#define SET_TASKS "{\"set\": {\"in\": \"crm.tasks\", \"fields\": {\"status\": \"open\"}}}"
#define RENAME_FILTERED                                                                        \
    "{\"rename\": {\"in\": \"crm.people\", \"filter\": {\"v\": 1}, \"fields\": {\"a\": \"b\"}}}"
#define RENAME_NESTED "{\"rename\": {\"in\": \"crm.people\", \"fields\": {\"a.b\": \"c\"}}}"
#define VERSION_PEOPLE "{\"version\": {\"in\": \"crm.people\", \"value\": 2}}"
#define SET_NESTED "{\"set\": {\"in\": \"crm.tasks\", \"fields\": {\"a.b\": 1}}}"

static void
test_inverse (void)
{
    static const struct {
        const char *name, *steps;
        bool ok;
        const char *inv; /* canonical */
        size_t refused;
        const char *why;
    } rows[] = {
        {"one step: its inverse", RENAME_PEOPLE, true,
         "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"rename\" : { \"in\" : "
         "\"crm.people\", \"fields\" : { \"fullName\" : \"name\" } } } ] }", 0, NULL},
        {"two steps: the last step's inverse first", RENAME_PEOPLE "," RENAME_TASKS, true,
         "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"rename\" : { \"in\" : "
         "\"crm.tasks\", \"fields\" : { \"title\" : \"t\" } } }, { \"rename\" : { \"in\" : "
         "\"crm.people\", \"fields\" : { \"fullName\" : \"name\" } } } ] }", 0, NULL},
        /* A set's: the fields it writes removed (exact where none was
         * there before the run: online_carry.c checks the run's record). */
        {"a set: its fields removed", RENAME_PEOPLE "," SET_TASKS, true,
         "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"unset\" : { \"in\" : "
         "\"crm.tasks\", \"fields\" : [ \"status\" ] } }, { \"rename\" : { \"in\" : "
         "\"crm.people\", \"fields\" : { \"fullName\" : \"name\" } } } ] }", 0, NULL},
        {"a nested set has none", SET_NESTED, false, "{ }", 0,
         "it sets a field inside another: its inverse removes top-level fields only"},
        {"a version has none", VERSION_PEOPLE, false, "{ }", 0,
         "the version it overwrites is not in its results"},
        {"a filtered rename has none", RENAME_TASKS "," RENAME_FILTERED, false, "{ }", 1,
         "it has a filter: which documents it renamed is not in its results"},
        {"a nested rename has none", RENAME_NESTED, false, "{ }", 0,
         "its inverse renames top-level fields only"},
        /* Found last-first, named first-first: the plan's first without. */
        {"two without: the plan's first named", RENAME_PEOPLE "," VERSION_PEOPLE "," RENAME_TASKS
         "," RENAME_FILTERED, false, "{ }", 1, "the version it overwrites is not in its results"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *text = bson_strdup_printf ("{\"remodel\": 1, \"steps\": [%s]}", rows[i].steps);
        rm_plan_t plan;
        bson_error_t err;
        bson_t inv;
        size_t refused = 99;
        const char *why = "unset";
        bool ok;
        T_CHECK (rm_plan_parse (&plan, text, strlen (text), &err));
        ok = online_carry_inverse (&plan, NULL, &inv, &refused, &why);
        if (ok != rows[i].ok)
            fprintf (stderr, "  %s: %d\n", rows[i].name, ok);
        T_CHECK (ok == rows[i].ok);
        T_CHECK (is_json (&inv, rows[i].inv, rows[i].name));
        if (ok) {
            /* an array's keys in order, as a plan's parser reads them */
            bson_iter_t it, st;
            char key[16];
            int n = 0;
            T_CHECK (bson_iter_init_find (&it, &inv, "steps") && bson_iter_recurse (&it, &st));
            while (bson_iter_next (&st))
                T_CHECK_STR (bson_iter_key (&st), t_key_next (key, sizeof key, &n));
        }
        if (rows[i].why) {
            T_CHECK (refused == rows[i].refused);
            T_CHECK_STR (why, rows[i].why);
        } else {
            T_CHECK (why == NULL);
        }
        bson_destroy (&inv);
        rm_plan_destroy (&plan);
        bson_free (text);
    }
}

/* A delete has no inverse, but where the run kept what it dropped
 * (--keep-before): its place holds an unset of a field no document has,
 * which the carry never runs (online_carry_kept.c gives the documents). */
static void
test_inverse_kept (void)
{
    static const char text[] = "{\"remodel\": 1, \"steps\": [" RENAME_PEOPLE ", {\"delete\": "
                               "{\"from\": \"crm.tasks\", \"filter\": {\"done\": true}}}]}";
    rm_plan_t plan;
    bson_error_t err;
    bson_t inv;
    size_t refused = 99;
    const char *why = "unset";
    bool none[2] = {false, false}, kept[2] = {false, true};
    T_CHECK (rm_plan_parse (&plan, text, strlen (text), &err));
    T_CHECK (!online_carry_inverse (&plan, none, &inv, &refused, &why));
    T_CHECK (refused == 1);
    T_CHECK (why && !strncmp (why, "a delete drops its documents", 28));
    bson_destroy (&inv);
    T_CHECK (online_carry_inverse (&plan, kept, &inv, &refused, &why));
    T_CHECK (why == NULL);
    T_CHECK (is_json (&inv,
                      "{ \"remodel\" : { \"$numberInt\" : \"1\" }, \"steps\" : [ { \"unset\" : { "
                      "\"in\" : \"crm.tasks\", \"fields\" : [ \"_remodel_kept\" ] } }, { \"rename\" "
                      ": { \"in\" : \"crm.people\", \"fields\" : { \"fullName\" : \"name\" } } } ] }",
                      "kept delete"));
    bson_destroy (&inv);
    rm_plan_destroy (&plan);
}

/* A kept set's document restored (online_carry_restore): each row a
 * document as the application left it, what the run kept of it, whether
 * it was inserted since (stay: status, which some document had before
 * the run; not flag), and what the carry gives back. */
static void
test_restore (void)
{
    static const struct {
        const char *name, *doc, *entry;
        bool inserted;
        const char *want;
    } rows[] = {
        {"unchanged since: the old value back, in its place",
         "{\"_id\": 1, \"status\": \"S-1\", \"x\": 1, \"flag\": true}",
         "{\"old\": {\"status\": \"s1\"}, \"new\": {\"status\": \"S-1\"}}", false,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"status\" : \"s1\", \"x\" : { \"$numberInt\" : \"1\" } }"},
        {"changed by the application: its value stays",
         "{\"_id\": 1, \"status\": \"app\", \"flag\": true}",
         "{\"old\": {\"status\": \"s1\"}, \"new\": {\"status\": \"S-1\"}}", false,
         "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"status\" : \"app\" }"},
        {"its type changed (1 for 1.0): the application's",
         "{\"_id\": 1, \"status\": {\"$numberInt\": \"1\"}}",
         "{\"old\": {\"status\": \"s1\"}, \"new\": {\"status\": {\"$numberDouble\": "
         "\"1.0\"}}}", false, "{ \"_id\" : { \"$numberInt\" : \"1\" }, \"status\" : { \"$numberInt\" : \"1\" } }"},
        {"removed by the application: stays removed", "{\"_id\": 1, \"flag\": true}",
         "{\"old\": {\"status\": \"s1\"}, \"new\": {\"status\": \"S-1\"}}", false,
         "{ \"_id\" : { \"$numberInt\" : \"1\" } }"},
        {"none of them before: the set added them, removed", "{\"_id\": 2, \"status\": \"S-2\", \"flag\": true}",
         "{\"old\": {}, \"new\": {}}", false, "{ \"_id\" : { \"$numberInt\" : \"2\" } }"},
        {"inserted since: a field the old design had stays, an added one goes",
         "{\"_id\": 3, \"status\": \"new\", \"flag\": true}", NULL, true,
         "{ \"_id\" : { \"$numberInt\" : \"3\" }, \"status\" : \"new\" }"},
    };
    rm_plan_t plan;
    bson_error_t err;
    static const char text[] = "{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"shop.o\", "
                               "\"fields\": {\"status\": \"x\", \"flag\": true}}}]}";
    bson_t before;
    bool had[2];
    T_CHECK (rm_plan_parse (&plan, text, strlen (text), &err));
    /* before's present list: status only, for step 1 */
    T_CHECK (bson_init_from_json (&before, "{\"steps\": [{\"step\": 2, \"present\": [\"flag\"]}, "
                                  "{\"step\": 1, \"present\": [\"status\"]}]}", -1, &err));
    online_carry_present (&before, 1, plan.steps[0].u.fields.paths, plan.steps[0].u.fields.n, had);
    T_CHECK (had[0] && !had[1]);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t doc, entry, out = BSON_INITIALIZER;
        T_CHECK (bson_init_from_json (&doc, rows[i].doc, -1, &err));
        if (rows[i].entry)
            T_CHECK (bson_init_from_json (&entry, rows[i].entry, -1, &err));
        online_carry_restore (bson_get_data (&doc), doc.len, plan.steps[0].u.fields.paths,
                              plan.steps[0].u.fields.n, rows[i].entry ? &entry : NULL,
                              rows[i].inserted ? had : NULL, &out);
        T_CHECK (is_json (&out, rows[i].want, rows[i].name));
        if (rows[i].entry)
            bson_destroy (&entry);
        bson_destroy (&doc);
        bson_destroy (&out);
    }
    bson_destroy (&before);
    rm_plan_destroy (&plan);
}

static void
test_written_before (void)
{
    static const char text[] =
        "{\"remodel\": 1, \"steps\": [" RENAME_PEOPLE ","
        "{\"embed\": {\"from\": \"crm.tasks\", \"into\": \"crm.people\", \"localField\": "
        "\"_id\", \"foreignField\": \"owner\", \"as\": \"tasks\"}}," RENAME_TASKS "]}";
    static const struct {
        size_t i;
        const char *ns;
        bool written;
    } rows[] = {
        {0, "crm.people", false}, /* nothing before the first */
        {1, "crm.people", true},  /* the rename's input */
        {1, "crm.tasks", false},
        {2, "crm.tasks", true},   /* the embed's input */
        {2, "crm.orders", false},
        {3, "crm.people", true},
    };
    online_run_t run;
    online_t on;
    bson_error_t err;
    online_init (&on, &run);
    T_CHECK (rm_plan_parse (&run.plan, text, strlen (text), &err));
    online_steps_resolve (&run);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        bool w = online_carry_written_before (&on, rows[r].i, rows[r].ns);
        if (w != rows[r].written)
            fprintf (stderr, "  before step %zu, %s: %d\n", rows[r].i, rows[r].ns, w);
        T_CHECK (w == rows[r].written);
    }
    online_run_destroy (&run);
}

#define UNRECORDED_SAID                                                                        \
    "the run recorded nothing of whether any was (it began before remodel recorded it)"

static void
test_before (void)
{
    static const struct {
        const char *name, *before; /* NULL: no record */
        online_carry_before_t choice;
        const char *field, *said;
    } rows[] = {
        {"no record", NULL, ONLINE_CARRY_UNRECORDED, NULL, UNRECORDED_SAID},
        {"another plan's record", "{\"digest\": \"other\", \"steps\": [{\"step\": 2}]}",
         ONLINE_CARRY_UNRECORDED, NULL, UNRECORDED_SAID},
        {"a digest not a string", "{\"digest\": 5, \"steps\": [{\"step\": 2}]}",
         ONLINE_CARRY_UNRECORDED, NULL, UNRECORDED_SAID},
        {"no steps", "{\"digest\": \"d1\"}", ONLINE_CARRY_UNRECORDED, NULL, UNRECORDED_SAID},
        {"another step's entry only", "{\"digest\": \"d1\", \"steps\": [{\"step\": 1}]}",
         ONLINE_CARRY_UNRECORDED, NULL, UNRECORDED_SAID},
        {"none there", "{\"digest\": \"d1\", \"steps\": [5, {\"step\": 1, \"present\": [\"x\"]}, "
         "{\"step\": 2}]}", ONLINE_CARRY_ABSENT, NULL, ""},
        {"the step as a double", "{\"digest\": \"d1\", \"steps\": [{\"step\": 2.0}]}",
         ONLINE_CARRY_ABSENT, NULL, ""},
        {"an empty present", "{\"digest\": \"d1\", \"steps\": [{\"step\": 2, \"present\": []}]}",
         ONLINE_CARRY_ABSENT, NULL, ""},
        {"a present not named", "{\"digest\": \"d1\", \"steps\": [{\"step\": 2, \"present\": "
         "[5, \"x\"]}]}", ONLINE_CARRY_ABSENT, NULL, ""},
        {"some were there", "{\"digest\": \"d1\", \"steps\": [{\"step\": 2, \"present\": "
         "[\"host_ip\", \"x\"]}]}", ONLINE_CARRY_PRESENT, "host_ip",
         "some had it when the run began"},
        {"could not tell", "{\"digest\": \"d1\", \"steps\": [{\"step\": 2, \"unknown\": "
         "\"the sample timed out\", \"present\": [\"x\"]}]}", ONLINE_CARRY_UNKNOWN, NULL,
         "the run could not tell whether any was: the sample timed out"},
        {"an unknown not a string", "{\"digest\": \"d1\", \"steps\": [{\"step\": 2, \"unknown\": "
         "true, \"present\": [\"x\"]}]}", ONLINE_CARRY_PRESENT, "x",
         "some had it when the run began"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *b = rows[i].before ? doc (rows[i].before) : NULL;
        const char *field = "unset";
        char said[200];
        online_carry_before_t c = online_carry_before (b, "d1", 2, &field, said, sizeof said);
        if (c != rows[i].choice)
            fprintf (stderr, "  %s: %d\n", rows[i].name, c);
        T_CHECK (c == rows[i].choice);
        if (rows[i].field)
            T_CHECK_STR (field, rows[i].field);
        else
            T_CHECK (field == NULL);
        T_CHECK_STR (said, rows[i].said);
        if (b)
            bson_destroy (b);
    }
}

static void
test_write (void)
{
    static const struct {
        const char *name, *orig, *doc; /* orig NULL: none */
        online_carry_write_t choice;
    } rows[] = {
        {"no original: inserted", NULL, "{\"_id\": 1, \"a\": 1}", ONLINE_CARRY_INSERT},
        {"the same bytes: kept", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1, \"a\": 1}",
         ONLINE_CARRY_KEEP},
        {"the same fields in another order: kept", "{\"_id\": 1, \"a\": 1, \"b\": \"x\"}",
         "{\"b\": \"x\", \"_id\": 1, \"a\": 1}", ONLINE_CARRY_KEEP},
        {"a value changed, same length: replaced", "{\"_id\": 1, \"a\": 1}",
         "{\"_id\": 1, \"a\": 2}", ONLINE_CARRY_REPLACE},
        {"a type changed: replaced", "{\"_id\": 1, \"a\": 1}",
         "{\"_id\": 1, \"a\": {\"$date\": {\"$numberLong\": \"1\"}}}", ONLINE_CARRY_REPLACE},
        {"a name changed, same length: replaced", "{\"_id\": 1, \"a\": 1}",
         "{\"_id\": 1, \"b\": 1}", ONLINE_CARRY_REPLACE},
        {"a field added: replaced", "{\"_id\": 1}", "{\"_id\": 1, \"a\": 1}",
         ONLINE_CARRY_REPLACE},
        {"a field gone: replaced", "{\"_id\": 1, \"a\": 1}", "{\"_id\": 1}", ONLINE_CARRY_REPLACE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bson_t *o = rows[i].orig ? doc (rows[i].orig) : NULL, *d = doc (rows[i].doc);
        online_carry_write_t c = online_carry_write (o ? bson_get_data (o) : NULL, o ? o->len : 0,
                                                     bson_get_data (d), d->len);
        if (c != rows[i].choice)
            fprintf (stderr, "  %s: %d\n", rows[i].name, c);
        T_CHECK (c == rows[i].choice);
        if (o)
            bson_destroy (o);
        bson_destroy (d);
    }
}

static void
test_held (void)
{
    static online_after_t a;
    int64_t none[3] = {0, 0, 0}, some[3] = {0, 2, 5};
    char said[100];

    a.n = 3;
    snprintf (a.c[0].ns, sizeof a.c[0].ns, "crm.a");
    snprintf (a.c[1].ns, sizeof a.c[1].ns, "crm.b");
    snprintf (a.c[2].ns, sizeof a.c[2].ns, "crm.c");
    T_CHECK (online_carry_held (&a, none, said, sizeof said) == 0);
    T_CHECK_STR (said, "");
    T_CHECK (online_carry_held (&a, some, said, sizeof said) == 42);
    T_CHECK_STR (said, "crm.b: 2 document(s), crm.c: 5 document(s)");
    /* Cut at the buffer, still saying some differ. */
    T_CHECK (online_carry_held (&a, some, said, 10) == 20);
    T_CHECK_STR (said, "crm.b: 2 ");
}

int
main (void)
{
    T_RUN (test_inverse);
    T_RUN (test_inverse_kept);
    T_RUN (test_restore);
    T_RUN (test_written_before);
    T_RUN (test_before);
    T_RUN (test_write);
    T_RUN (test_held);
    return t_done ();
}
