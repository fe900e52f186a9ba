/* --state-db, checked (issue 62): the database remodel keeps its records
 * in must be remodel's alone. Named like an application's database, its
 * records would go into the application's own plans, leases or
 * checkpoints collections; with --to-uri, the copy of the source's other
 * databases leaves the state database's name out, so an application
 * database of that name would be left behind while finalize says
 * "committed". So a state database is refused when MongoDB would refuse
 * its name, when the plan reads or writes a namespace of it, or when it
 * holds a collection remodel does not make (on the destination, and with
 * --to-uri on the source as well). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "online.h"

bool
online_state_db_name_check (const char *db, bson_error_t *err)
{
    static const char *const reserved[] = {"admin", "local", "config"};
    const char *why = NULL;

    if (!*db)
        why = "an empty name";
    else if (strlen (db) >= 64)
        why = "a name of 64 bytes or more (MongoDB's limit is 63)";
    for (const unsigned char *p = (const unsigned char *) db; !why && *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            why = "a control character";
        else if (strchr ("/\\. \"$*<>:|?", *p))
            why = "a character MongoDB refuses in a database's name (one of /\\. \"$*<>:|?)";
    }
    for (size_t k = 0; !why && k < 3; k++)
        if (!strcasecmp (db, reserved[k]))
            why = "a database of the server's own";
    if (why)
        rm_error_set (err, RM_ERR_USAGE, "--state-db: %s, for remodel's records, is %s: give "
                      "a database of remodel's own (by default remodel)", *db ? db : "\"\"", why);
    return why == NULL;
}

const rm_nsref_t *
online_plan_ns_in_db (const online_t *on, const char *db, size_t *step)
{
    const rm_plan_t *p = &on->run->plan;

    for (size_t s = 0; s < p->n; s++) {
        const rm_nsref_t *refs[8];
        size_t n = rm_step_inputs (&p->steps[s], refs, 4);
        n += rm_step_outputs (&p->steps[s], refs + n, 4);
        for (size_t k = 0; k < n; k++)
            if (!strcmp (refs[k]->db, db)) {
                if (step)
                    *step = s;
                return refs[k];
            }
    }
    return NULL;
}

bool
online_state_db_plan_check (const online_t *on, bson_error_t *err)
{
    const char *db = on->run->o->state_db;
    size_t s;
    const rm_nsref_t *ref = online_plan_ns_in_db (on, db, &s);

    if (ref)
        rm_error_set (err, RM_ERR_USAGE, "--state-db %s: step %zu (%s) of the plan names %s, a "
                      "namespace of that database: remodel's records would mix with the plan's "
                      "data; give --state-db another database", db, s + 1,
                      rm_step_kind_name (on->run->plan.steps[s].kind), ref->text);
    return ref == NULL;
}

/* Whether a collection of the state database is one remodel makes there:
 * its records (the fixed names), a plan's key map, journal and in-place
 * backups, the capabilities probe's scratch, the switch's rename probes,
 * the server-side probe. A collection added to the state database must
 * be named here, or every run refuses its own state database. */
bool
online_state_db_ours (const char *coll)
{
    static const char *const fixed[] = {"plans",   "leases",       "fences",  "checkpoints",
                                        "capture", "capabilities", "pairs",   "partitions",
                                        "before",  "probe",        "probe_merge", "markers"};
    static const char *const prefixes[] = {"keys_", "made_", "kept_", "backup.", "capabilitiesProbe_",
                                           "system."};
    for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++)
        if (!strcmp (coll, fixed[k]))
            return true;
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++)
        if (!strncmp (coll, prefixes[k], strlen (prefixes[k])))
            return true;
    return strstr (coll, "_remodel_") != NULL;
}

/* The names of a listCollections array (online_pair_list's) not ours,
 * into list ("a, b, ..."); how many. */
static int
foreign_of_list (const bson_t *colls, bson_string_t *list)
{
    bson_iter_t it, name;
    int n = 0;
    bson_iter_init (&it, colls);
    while (bson_iter_next (&it)) {
        bson_iter_t sub;
        const char *s;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &sub) ||
            !bson_iter_find_descendant (&sub, "name", &name) || !BSON_ITER_HOLDS_UTF8 (&name))
            continue;
        s = bson_iter_utf8 (&name, NULL);
        if (online_state_db_ours (s))
            continue;
        if (n < 5)
            bson_string_append_printf (list, "%s%s", n ? ", " : "", s);
        else if (n == 5)
            bson_string_append (list, ", ...");
        n++;
    }
    return n;
}

bool
online_state_db_holdings_check (online_t *on, bson_error_t *err)
{
    const char *db = on->run->o->state_db;
    bool ok = true;

    for (int side = 0; ok && side < (on->run->pair ? 2 : 1); side++) {
        bson_string_t *list = bson_string_new ("");
        bson_t colls = BSON_INITIALIZER;
        online_side_t at = side ? ONLINE_SOURCE : ONLINE_DEST;
        char **dbs = online_pair_databases (on, at, err);
        bool there = false;
        int n = 0, foreign = 0;
        /* Listed first: a server may make a database a listing names
         * (mongo-java-server, FerretDB), and none is to be left behind. */
        for (size_t i = 0; dbs && dbs[i]; i++)
            there |= !strcmp (dbs[i], db);
        ok = dbs != NULL && (!there || online_pair_list (on, at, db, &colls, &n, err));
        foreign = ok && there ? foreign_of_list (&colls, list) : 0;
        if (dbs)
            bson_strfreev (dbs);
        if (foreign) {
            rm_error_set (err, RM_ERR_USAGE, "--state-db %s: the %s %s holds %d collection(s) "
                          "remodel does not make (%s): it is an application's database, not "
                          "remodel's%s; nothing was written (give --state-db a database of "
                          "remodel's own)", db, side ? "source" : on->run->pair ? "destination" :
                          "server", side ? on->run->pair->where : on->run->where, foreign,
                          list->str, side ? ", and a copy to another deployment would leave it "
                          "behind" : "");
            ok = false;
        }
        bson_string_free (list, true);
        bson_destroy (&colls);
    }
    return ok;
}
