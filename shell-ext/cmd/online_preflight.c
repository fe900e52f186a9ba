/* Before a run writes anything, indexes included: the checks `remodel run`
 * makes of a dump, made of the server. Every namespace the plan reads is
 * there (or made by an earlier step), and every field a step names is in
 * some document of its namespace. A misspelling ("acounts", "acount_id")
 * would otherwise run through: every customer embedded with no accounts,
 * a verify that agrees, a finalize that switches it in. Refused with the
 * offline tool's words and its "did you mean"; "allowMissing": true on
 * the step, or --allow-missing, lets a field through. */
#include <string.h>

#include "online_cmd.h"
#include "remodel/cli.h"
#include "remodel/dump.h"
#include "remodel/fieldcheck.h"

/* Documents read for the names near a missing field. */
#define NAMES_SAMPLE 200

/* Whether list (n names) holds name. */
static bool
listed (char **list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp (list[i], name))
            return true;
    return false;
}

/* Adds db's collections to info. */
static bool
add_collections (online_t *on, const char *db, rm_dump_info_t *info, bson_error_t *err)
{
    mongoc_database_t *d = mongoc_client_get_database (on->client, db);
    bson_error_t why;
    char **names = mongoc_database_get_collection_names_with_opts (d, NULL, &why);
    mongoc_database_destroy (d);
    if (!names)
        return online_fail (on, err, &why, "listing the collections");
    for (size_t i = 0; names[i]; i++)
        rm_dump_info_add (info, db, names[i]);
    bson_strfreev (names);
    return true;
}

/* Whether the server is FerretDB (its buildInfo says ferretdbVersion). */
static bool
is_ferretdb (online_t *on)
{
    bson_t *cmd = BCON_NEW ("buildInfo", BCON_INT32 (1));
    bson_t reply;
    bool yes = mongoc_client_command_simple (on->client, "admin", cmd, NULL, &reply, NULL) &&
               bson_has_field (&reply, "ferretdbVersion");
    bson_destroy (&reply);
    bson_destroy (cmd);
    return yes;
}

/* The server's namespaces in the databases the plan reads, and in those
 * whose names are a few edits from one it lacks (for the "did you mean":
 * a third of the name, one to three edits, as probe.c measures). Only
 * databases listDatabases names are asked for their collections, because
 * mongo-java-server makes a database of any name a command reads; but
 * FerretDB 1.x leaves out of listDatabases a database whose collection
 * names it finds odd (a tab, a backslash), and makes none by a read:
 * there a database not listed is asked too. */
static bool
server_namespaces (online_t *on, rm_dump_info_t *info, bson_error_t *err)
{
    bson_error_t why;
    char **dbs = mongoc_client_get_database_names_with_opts (on->client, NULL, &why);
    char **done = NULL;
    size_t n_dbs = 0, n_done = 0;
    int ferret = -1;
    bool ok = true;

    if (!dbs)
        return online_fail (on, err, &why, "listing the databases");
    while (dbs[n_dbs])
        n_dbs++;
    for (size_t i = 0; ok && i < on->plan.n; i++) {
        const rm_nsref_t *in[4];
        size_t n = rm_step_inputs (&on->plan.steps[i], in, 4);
        for (size_t j = 0; ok && j < n; j++) {
            const char *db = in[j]->db;
            size_t len = strlen (db), most = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
            bool there = listed (dbs, n_dbs, db);
            if (listed (done, n_done, db))
                continue;
            if (!there && ferret < 0)
                ferret = is_ferretdb (on);
            if (there || ferret == 1) {
                size_t before = info->n_ns;
                done = bson_realloc (done, (n_done + 1) * sizeof *done);
                done[n_done++] = (char *) db;
                ok = add_collections (on, db, info, err);
                if (!ok || info->n_ns > before || there)
                    continue;
            }
            for (size_t d = 0; ok && d < n_dbs; d++)
                if (!listed (done, n_done, dbs[d]) && rm_cli_distance (dbs[d], db) <= most) {
                    done = bson_realloc (done, (n_done + 1) * sizeof *done);
                    done[n_done++] = dbs[d];
                    ok = add_collections (on, dbs[d], info, err);
                }
        }
    }
    bson_free (done);
    bson_strfreev (dbs);
    return ok;
}

/* Whether an earlier step than i writes ns (its documents there are not
 * yet what step i will read). */
static bool
written_before (const rm_plan_t *plan, size_t i, const char *ns)
{
    for (size_t k = 0; k < i; k++) {
        const rm_nsref_t *out[8];
        size_t n = rm_step_outputs (&plan->steps[k], out, 8);
        for (size_t j = 0; j < n; j++)
            if (!strcmp (out[j]->text, ns))
                return true;
    }
    return false;
}

/* The fields step s's inverse removes (rm_step_inverse's plan, an unset
 * of `in`: denormalize's copies, summarize's results), into fields; NULL
 * when it removes none. Freed by the caller (bson_destroy). */
static bson_t *
inverse_removes (const rm_step_t *s, bson_iter_t *in, bson_iter_t *fields)
{
    rm_step_inverse_t iv;
    bson_iter_t it;
    rm_step_inverse (s, &iv);
    if (!iv.plan)
        return NULL;
    if (bson_iter_init (&it, iv.plan) && bson_iter_find_descendant (&it, "steps.0.unset.in", in) &&
        BSON_ITER_HOLDS_UTF8 (in) && bson_iter_init (&it, iv.plan) &&
        bson_iter_find_descendant (&it, "steps.0.unset.fields", &it) &&
        BSON_ITER_HOLDS_ARRAY (&it) && bson_iter_recurse (&it, fields))
        return iv.plan;
    bson_destroy (iv.plan);
    return NULL;
}

/* Whether some document of db.coll has field (one read, by the server). */
static bool
some_have (online_t *on, const char *db, const char *coll, const char *field, bool *yes,
           bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, db, coll);
    bson_t *q = BCON_NEW (field, "{", "$exists", BCON_BOOL (true), "}");
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "limit", BCON_INT64 (1));
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts (c, q, opts, NULL);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    *yes = mongoc_cursor_next (cur, &doc);
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, "looking for the fields an inverse removes");
    mongoc_cursor_destroy (cur);
    bson_destroy (opts);
    bson_destroy (q);
    mongoc_collection_destroy (c);
    return ok;
}

/* What rollback --carry-writes needs to know of the sources as the plan's
 * run begins, and can know no later (an in-place run, or the
 * application's writes, change them): for each step whose inverse
 * removes the fields it wrote (denormalize, summarize), which of them some
 * document of its namespace already had, which the removal would lose
 * (<state-db>.before {_id: plan id, digest, steps: [{step, ns, present:
 * [field, ...]} or {step, ns, unknown: why}]}, online_carry.c reads it).
 * Written by the run that begins the plan (or --restart), kept by a
 * resume. */
static bool
record_before (online_t *on, bson_error_t *err)
{
    online_record_t r;
    bson_t doc = BSON_INITIALIZER, steps, *q;
    mongoc_collection_t *c;
    bson_t opts = BSON_INITIALIZER;
    bson_error_t why;
    size_t n = 0;
    bool ok = online_plan_read (on, &r, err);

    if (!ok || on->o->dry_run || (r.found && !on->o->restart))
        return ok;
    BSON_APPEND_UTF8 (&doc, "_id", on->names.id);
    BSON_APPEND_UTF8 (&doc, "digest", on->names.digest);
    BSON_APPEND_ARRAY_BEGIN (&doc, "steps", &steps);
    for (size_t i = 0; ok && i < on->plan.n; i++) {
        const rm_step_t *s = &on->plan.steps[i];
        bson_iter_t in, f;
        bson_t *plan = inverse_removes (s, &in, &f), one, present;
        const char *ns, *dot;
        char key[16];
        const char *k;
        if (!plan)
            continue;
        ns = bson_iter_utf8 (&in, NULL);
        dot = strchr (ns, '.');
        bson_uint32_to_string ((uint32_t) n++, &k, key, sizeof key);
        BSON_APPEND_DOCUMENT_BEGIN (&steps, k, &one);
        BSON_APPEND_INT64 (&one, "step", (int64_t) s->index);
        BSON_APPEND_UTF8 (&one, "ns", ns);
        if (written_before (&on->plan, i, ns)) {
            /* What the step will read there is an earlier step's. */
            char *w = bson_strdup_printf ("an earlier step of the plan writes %s", ns);
            BSON_APPEND_UTF8 (&one, "unknown", w);
            bson_free (w);
        } else {
            char db[128];
            snprintf (db, sizeof db, "%.*s", dot ? (int) (dot - ns) : 0, ns);
            BSON_APPEND_ARRAY_BEGIN (&one, "present", &present);
            for (size_t j = 0; ok && bson_iter_next (&f);) {
                bool yes = false;
                ok = dot && some_have (on, db, dot + 1, bson_iter_utf8 (&f, NULL), &yes, err);
                if (ok && yes) {
                    bson_uint32_to_string ((uint32_t) j++, &k, key, sizeof key);
                    BSON_APPEND_UTF8 (&present, k, bson_iter_utf8 (&f, NULL));
                }
            }
            bson_append_array_end (&one, &present);
        }
        bson_append_document_end (&steps, &one);
        bson_destroy (plan);
    }
    bson_append_array_end (&doc, &steps);
    q = BCON_NEW ("_id", BCON_UTF8 (on->names.id));
    c = online_collection (on, on->o->state_db, "before");
    BSON_APPEND_BOOL (&opts, "upsert", true);
    if (ok && n)
        ok = mongoc_collection_replace_one (c, q, &doc, &opts, NULL, &why) ||
             online_fail (on, err, &why, "recording the fields there before the run");
    else if (ok)
        ok = mongoc_collection_delete_one (c, q, NULL, NULL, &why) ||
             online_fail (on, err, &why, "recording the fields there before the run");
    mongoc_collection_destroy (c);
    bson_destroy (&opts);
    bson_destroy (q);
    bson_destroy (&doc);
    return ok;
}

/* Field f of c: asked of the server; when no document has it, the
 * namespace's count and a sample's names for the error. */
static bool
probe_field (online_t *on, rm_fieldcheck_t *c, size_t f, bson_error_t *err)
{
    const char *ns = rm_fieldcheck_ns (c, f), *dot = strchr (ns, '.');
    char db[128];
    mongoc_collection_t *coll;
    mongoc_cursor_t *cur;
    const bson_t *doc;
    bson_t q = BSON_INITIALIZER, cond;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "limit", BCON_INT64 (1));
    bson_t *sample = BCON_NEW ("limit", BCON_INT64 (NAMES_SAMPLE));
    bson_t empty = BSON_INITIALIZER;
    bson_error_t why;
    int64_t count;
    bool ok = true, found;

    if (!dot || (size_t) (dot - ns) >= sizeof db)
        return true;
    memcpy (db, ns, (size_t) (dot - ns));
    db[dot - ns] = '\0';
    coll = online_collection (on, db, dot + 1);
    BSON_APPEND_DOCUMENT_BEGIN (&q, rm_fieldcheck_path (c, f), &cond);
    BSON_APPEND_BOOL (&cond, "$exists", true);
    bson_append_document_end (&q, &cond);
    cur = mongoc_collection_find_with_opts (coll, &q, opts, NULL);
    found = mongoc_cursor_next (cur, &doc);
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, "looking for the plan's fields");
    mongoc_cursor_destroy (cur);
    if (ok && found)
        rm_fieldcheck_seen (c, f);
    if (ok && !found) {
        cur = mongoc_collection_find_with_opts (coll, &empty, sample, NULL);
        while (mongoc_cursor_next (cur, &doc))
            rm_fieldcheck_doc (c, f, bson_get_data (doc), doc->len);
        if (mongoc_cursor_error (cur, &why))
            ok = online_fail (on, err, &why, "looking for the plan's fields");
        mongoc_cursor_destroy (cur);
        count = ok ? mongoc_collection_estimated_document_count (coll, NULL, NULL, NULL, &why) : 0;
        if (ok && count >= 0)
            rm_fieldcheck_docs (c, f, (uint64_t) count);
    }
    bson_destroy (opts);
    bson_destroy (sample);
    bson_destroy (&q);
    mongoc_collection_destroy (coll);
    return ok;
}

bool
online_preflight (online_t *on, bson_error_t *err)
{
    rm_dump_info_t info;
    bool ok;

    rm_dump_info_init (&info);
    ok = server_namespaces (on, &info, err);
    if (ok && !rm_plan_check_against (&on->plan, &info, err)) {
        rm_error_prefix (err, "%s: %s", on->where, on->o->plan_path);
        ok = false;
    }
    for (size_t i = 0; ok && i < on->plan.n; i++) {
        const rm_step_t *s = &on->plan.steps[i];
        rm_fieldcheck_t *c = rm_fieldcheck_new (s, on->o->allow_missing);
        for (size_t f = 0; ok && f < rm_fieldcheck_count (c); f++) {
            const char *ns = rm_fieldcheck_ns (c, f), *dot = strchr (ns, '.');
            char db[128];
            /* Made or changed by an earlier step: seen as the step will
             * see it only once that step has run. */
            if (!dot || written_before (&on->plan, i, ns) || (size_t) (dot - ns) >= sizeof db)
                continue;
            memcpy (db, ns, (size_t) (dot - ns));
            db[dot - ns] = '\0';
            if (rm_dump_info_find (&info, db, dot + 1))
                ok = probe_field (on, c, f, err);
        }
        if (ok && !rm_fieldcheck_result (c, err)) {
            rm_error_prefix (err, "%s: %s", on->where, on->o->plan_path);
            ok = false;
        }
        rm_fieldcheck_destroy (c);
    }
    rm_dump_info_destroy (&info);
    return ok && record_before (on, err);
}
