/* From one deployment to another (--to-uri, issue 54): run's part.
 *
 * The steps run as within one deployment (online_apply), the connection
 * routing each collection (online_ops_pair.c): drivers and partners read
 * where they are (the source, or the destination for an earlier step's
 * results), results and state written to the destination. What this file
 * adds: the refusal of a destination that already holds a namespace the
 * run would write (before anything is written; --drop drops it), the
 * record of the pair, and the namespaces the plan does not write, copied
 * as they are with their options and indexes (--nsInclude/--nsExclude
 * choose them), each noted once done so that a resumed run skips it. */
#include <stdio.h>
#include <string.h>

#include "remodel/cli.h"
#include "online_cmd.h"

bool
online_dest_opts (const rm_cli_value_t *v, online_opts_t *o, bson_error_t *err)
{
    const rm_cli_value_t *inc = &v[RM_OPT_NS_INCLUDE], *exc = &v[RM_OPT_NS_EXCLUDE];

    if (!o->to_uri && (o->drop || inc->given || exc->given)) {
        rm_error_set (err, RM_ERR_USAGE, "--drop, --nsInclude and --nsExclude choose what a run "
                      "writes to another deployment: they need --to-uri");
        return false;
    }
    if (o->to_uri && v[RM_OPT_CREATE_INDEXES].given) {
        rm_error_set (err, RM_ERR_USAGE, "--to-uri: --create-indexes would write the source, "
                      "which a run to another deployment only reads: create the join's index "
                      "there yourself");
        return false;
    }
    if (o->to_uri && (v[RM_OPT_IN_PLACE].given || v[RM_OPT_SERVER_SIDE].given)) {
        rm_error_set (err, RM_ERR_USAGE, "--to-uri: --in-place and --server-side write on one "
                      "server; between two the results are written on the destination");
        return false;
    }
    o->ns_included = inc->given;
    if (!inc->given && !exc->given)
        return true;
    o->ns_select = rm_nsselect_new ();
    for (size_t i = 0; i < inc->n_all; i++)
        if (!rm_nsselect_include (o->ns_select, inc->all[i], err))
            return false;
    for (size_t i = 0; i < exc->n_all; i++)
        if (!rm_nsselect_exclude (o->ns_select, exc->all[i], err))
            return false;
    return true;
}

/* The namespaces copied as they are: the source's collections that are
 * not system ones, not a plan's results, not written by this plan
 * (finals), chosen by --nsInclude/--nsExclude. Each listCollections
 * document with its database under "db", appended to out. */
static bool
untouched (online_t *on, const online_after_t *finals, bson_t *out, int *n, bson_error_t *err)
{
    char **dbs = online_pair_databases (on, ONLINE_SOURCE, err);
    bool ok = dbs != NULL;

    for (size_t i = 0; ok && dbs[i]; i++) {
        const char *db = dbs[i];
        bson_t list = BSON_INITIALIZER;
        bson_iter_t it;
        int m = 0;
        if (!strcmp (db, "admin") || !strcmp (db, "local") || !strcmp (db, "config") ||
            !strcmp (db, on->run->o->state_db))
            continue;
        ok = online_pair_list (on, ONLINE_SOURCE, db, &list, &m, err);
        bson_iter_init (&it, &list);
        while (ok && bson_iter_next (&it)) {
            uint32_t len;
            const uint8_t *data;
            bson_t one, with;
            char name[256], type[32], ns[400];
            bool written = false;
            char key[16];
            bson_iter_document (&it, &len, &data);
            bson_init_static (&one, data, len);
            online_field_utf8 (&one, "name", name, sizeof name);
            online_field_utf8 (&one, "type", type, sizeof type);
            snprintf (ns, sizeof ns, "%s.%s", db, name);
            for (size_t k = 0; k < finals->n; k++)
                written |= !strcmp (finals->c[k].ns, ns);
            if (written || (*type && strcmp (type, "collection")) ||
                !strncmp (name, "system.", 7) || strstr (name, "_remodel_") ||
                (on->run->o->ns_select && !rm_nsselect_wants (on->run->o->ns_select, ns)))
                continue;
            bson_init (&with);
            bson_concat (&with, &one);
            BSON_APPEND_UTF8 (&with, "db", db);
            snprintf (key, sizeof key, "%d", (*n)++);
            BSON_APPEND_DOCUMENT (out, key, &with);
            bson_destroy (&with);
        }
        bson_destroy (&list);
    }
    if (dbs)
        bson_strfreev (dbs);
    return ok;
}

/* Whether the destination holds db.coll. */
static bool
dest_has (online_t *on, const char *db, const char *coll, bool *has, bson_error_t *err)
{
    bson_t list = BSON_INITIALIZER;
    bson_iter_t it;
    int n = 0;
    bool ok = online_pair_list (on, ONLINE_DEST, db, &list, &n, err);

    *has = false;
    bson_iter_init (&it, &list);
    while (ok && bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t one;
        char name[256];
        bson_iter_document (&it, &len, &data);
        bson_init_static (&one, data, len);
        online_field_utf8 (&one, "name", name, sizeof name);
        *has |= !strcmp (name, coll);
    }
    bson_destroy (&list);
    return ok;
}

/* The namespaces the destination already holds of those the run would
 * write, as one list for the message: held, every one; foreign, those
 * --drop may not drop, of a database the plan does not name that
 * --nsInclude did not choose (a destination's other databases are the
 * operator's: dropped only where they were named). */
typedef struct {
    bson_t names;           /* "db.coll" strings, in order: held */
    bson_string_t *held, *foreign;
    int n_held, n_foreign;
} claims_t;

static void
claims_add (bson_string_t *list, int *n, const char *ns)
{
    if (*n < 10)
        bson_string_append_printf (list, "%s%s", *n ? ", " : "", ns);
    else if (*n == 10)
        bson_string_append (list, ", ...");
    (*n)++;
}

static bool
claim (online_t *on, claims_t *cl, const char *db, const char *coll, bson_error_t *err)
{
    char ns[400], key[16];
    bool has;

    if (!dest_has (on, db, coll, &has, err))
        return false;
    if (!has)
        return true;
    snprintf (ns, sizeof ns, "%s.%s", db, coll);
    snprintf (key, sizeof key, "%d", cl->n_held);
    BSON_APPEND_UTF8 (&cl->names, key, ns);
    claims_add (cl->held, &cl->n_held, ns);
    if (!online_plan_ns_in_db (on, db, NULL) && !(on->run->o->ns_included &&
                                     rm_nsselect_wants (on->run->o->ns_select, ns)))
        claims_add (cl->foreign, &cl->n_foreign, ns);
    return true;
}

/* Every namespace the run would write, checked before anything is: none
 * held, or (--drop) each dropped once none is refused. */
static bool
claim_all (online_t *on, const online_after_t *finals, const bson_t *copies, bson_error_t *err)
{
    claims_t cl = {.held = bson_string_new (""), .foreign = bson_string_new ("")};
    bson_iter_t it;
    bool ok = true;

    bson_init (&cl.names);
    for (size_t k = 0; ok && k < finals->n; k++)
        ok = claim (on, &cl, finals->c[k].db, finals->c[k].coll, err);
    bson_iter_init (&it, copies);
    while (ok && bson_iter_next (&it)) {
        uint32_t len;
        const uint8_t *data;
        bson_t one;
        char db[128], name[256];
        bson_iter_document (&it, &len, &data);
        bson_init_static (&one, data, len);
        online_field_utf8 (&one, "db", db, sizeof db);
        online_field_utf8 (&one, "name", name, sizeof name);
        ok = claim (on, &cl, db, name, err);
    }
    if (ok && cl.n_held && !on->run->o->drop) {
        rm_error_set (err, RM_ERR_EXISTS, "run: the destination %s already holds %s, which "
                      "this run would write: nothing was written (--drop drops %s first%s)",
                      on->run->where, cl.held->str, cl.n_held > 1 ? "them" : "it",
                      cl.n_foreign ? ", but not those of a database the plan does not name "
                                     "unless --nsInclude names them" : "");
        ok = false;
    } else if (ok && cl.n_foreign) {
        rm_error_set (err, RM_ERR_EXISTS, "run: --drop would drop %s on the destination %s, "
                      "of a database the plan does not name: nothing was written or dropped "
                      "(name them with --nsInclude for --drop to drop them, or drop them "
                      "yourself)", cl.foreign->str, on->run->where);
        ok = false;
    }
    /* Nothing refused: the drops, each said. */
    bson_iter_init (&it, &cl.names);
    while (ok && bson_iter_next (&it)) {
        const char *ns = bson_iter_utf8 (&it, NULL), *dot = strchr (ns, '.');
        char db[128];
        mongoc_collection_t *c;
        bson_error_t why;
        snprintf (db, sizeof db, "%.*s", (int) (dot - ns), ns);
        c = online_pair_side (on, ONLINE_DEST, db, dot + 1);
        ok = online_ops (on)->drop (on, c, &why) ||
             online_fail (on, err, &why, "dropping a namespace on the destination (--drop)");
        mongoc_collection_destroy (c);
        if (ok)
            online_say_note (on, "run: --drop: %s dropped on the destination", ns);
    }
    bson_destroy (&cl.names);
    bson_string_free (cl.held, true);
    bson_string_free (cl.foreign, true);
    return ok;
}

bool
online_dest_finals (online_t *on, online_after_t *finals, bson_t *copies, int *n,
                    bson_error_t *err)
{
    bool ok = online_after_plan (on, finals, err);
    online_capture_init (&finals->point); /* after_destroy's to free */
    bson_init (copies);
    *n = 0;
    return ok && untouched (on, finals, copies, n, err);
}

/* When the pair's record rec says the plan was committed (into at; ""
 * when not). */
static void
committed_at (const bson_t *rec, char *at, size_t cap)
{
    bson_iter_t it;
    *at = '\0';
    if (bson_iter_init_find (&it, rec, "committed") && bson_iter_as_bool (&it))
        online_field_utf8 (rec, "committedAt", at, cap);
}

/* When the plan was committed on the destination (into at; "" when not). */
bool
online_dest_committed (online_t *on, char *at, size_t cap, bson_error_t *err)
{
    bson_t rec;
    bool found, ok = online_pair_read (on, &rec, &found, err);

    *at = '\0';
    if (ok && found)
        committed_at (&rec, at, cap);
    bson_destroy (&rec);
    return ok;
}

bool
online_dest_check (online_t *on, online_do_t what, bool starts, bson_error_t *err)
{
    online_after_t finals;
    bson_t copies, rec;
    bson_iter_t it;
    char at[40];
    bool begun, found, finishing, ok;
    online_life_t s;
    int n;

    if (!online_pair_record (on, false, err) || !online_pair_read (on, &rec, &found, err))
        return false;
    *at = '\0';
    if (found)
        committed_at (&rec, at, sizeof at);
    finishing = found && bson_iter_init_find (&it, &rec, "finishing") && bson_iter_as_bool (&it);
    bson_destroy (&rec);
    /* The pair's states are rows of the plan's life (online_life.c):
     * committed, the application may write the results on the
     * destination now, where a run, sync or verify would write them
     * again, and rollback goes back to the source (online_dest_rollback.c);
     * finishing, a finalize was interrupted dropping the intermediate
     * results, which a sync would read: only finalize completes it. */
    s = online_life_pair_state (ONLINE_LIFE_COMPLETE, *at != '\0', finishing);
    switch (online_life_allows (s, what)) {
    case ONLINE_LIFE_COMMITTED_THERE:
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s was committed on %s at %s: its results "
                      "have their final names there, and the source is as it was (rollback "
                      "--carry-writes goes back to it)", on->run->o->command, on->run->names.name,
                      on->run->where, at);
        return false;
    case ONLINE_LIFE_FINISH_FIRST:
        rm_error_set (err, RM_ERR_USAGE, "%s: plan %s: a finalize was interrupted on %s "
                      "while dropping the intermediate results: finalize --writes-stopped "
                      "again completes it", on->run->o->command, on->run->names.name,
                      on->run->where);
        return false;
    default:
        break;
    }
    if (!starts || on->run->o->dry_run)
        return true;
    /* Begun: the run's record is written (online_plan_record); before it
     * nothing of the run's is on the destination, so a run refused before
     * (a missing index) claims the names again. */
    ok = online_state_get (on, "plans", on->run->names.id, &rec, &begun, "reading the plan's record",
                           err);
    bson_destroy (&rec);
    if (!ok || begun)
        return ok;
    ok = online_dest_finals (on, &finals, &copies, &n, err) &&
         claim_all (on, &finals, &copies, err) && online_pair_record (on, true, err);
    online_after_destroy (&finals);
    bson_destroy (&copies);
    return ok;
}

int
online_dest_run (online_t *on, bson_error_t *err)
{
    online_after_t finals;
    bson_t copies;
    int n = 0, copied = 0;
    int64_t docs = 0;
    bool ok;

    if (online_apply (on, ONLINE_RUN, err) < 0)
        return 1;
    if (on->run->o->dry_run)
        return 0;
    /* A run that joined another leaves the copies to it: two processes
     * upserting one _id at once may both insert it, and one fails on the
     * duplicate key (FerretDB, and MongoDB outside the cases it retries).
     * Finalize copies every such namespace again, so none is missed
     * should the run joined stop first. */
    if (on->run->o->join) {
        online_say_note (on, "run: plan %s: the namespaces the plan does not write are copied "
                         "by the run it joined", on->run->names.name);
        return 0;
    }
    /* The point first: what is written while they are copied, and after,
     * is what follow and finalize bring over (online_dest_copy_step.c). */
    ok = online_dest_finals (on, &finals, &copies, &n, err) && online_dest_copy_mark (on, err) &&
         online_dest_copy_all (on, &copies, false, &copied, &docs, err);
    if (ok)
        online_say_note (on, "run: plan %s: %d namespace(s) the plan does not write copied as "
                         "they are to %s (%lld document(s))", on->run->names.name, copied, on->run->where,
                         (long long) docs);
    online_after_destroy (&finals);
    bson_destroy (&copies);
    return ok ? 0 : 1;
}

bool
online_dest_forget (online_t *on, bson_error_t *err)
{
    online_after_t finals;
    bson_t copies, *sel;
    bson_iter_t it;
    bson_error_t why;
    int n = 0;
    bool ok = online_dest_finals (on, &finals, &copies, &n, err);

    for (bson_iter_init (&it, &copies); ok && bson_iter_next (&it);) {
        const uint8_t *data;
        uint32_t len;
        bson_t one;
        char db[128], name[256];
        bson_iter_document (&it, &len, &data);
        bson_init_static (&one, data, len);
        online_field_utf8 (&one, "db", db, sizeof db);
        online_field_utf8 (&one, "name", name, sizeof name);
        ok = online_lease_check (on, err) &&
             online_dest_drop (on, db, name, "dropping a namespace copied as it is", err);
        if (ok)
            online_say_note (on, "rollback: dropped %s.%s on the destination (copied as it is)",
                             db, name);
    }
    online_after_destroy (&finals);
    bson_destroy (&copies);
    sel = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    ok = ok && online_lease_check (on, err) &&
         (online_ops (on)->state_delete (on, "pairs", sel, false, &why) ||
          online_fail (on, err, &why, "forgetting the plan's pair of deployments"));
    bson_destroy (sel);
    return ok;
}
