/* Before a run writes anything, indexes included: the checks `remodel run`
 * makes of a dump, made of the server. Every namespace the plan reads is
 * there (or made by an earlier step), and every field a step names is in
 * some document of its namespace. A misspelling ("acounts", "acount_id")
 * would otherwise run through: every customer embedded with no accounts,
 * a verify that agrees, a finalize that switches it in. Refused with the
 * offline tool's words and its "did you mean"; "allowMissing": true on
 * the step, or --allow-missing, lets a field through. A join none of
 * whose references finds a partner (keys of two types, the wrong field)
 * is refused too, as `remodel run` refuses it, and let through the same
 * way (join_check). */
#include <string.h>

#include "online_cmd.h"
#include "remodel/batchstep.h"
#include "remodel/cli.h"
#include "remodel/dump.h"
#include "remodel/expr.h"
#include "remodel/fieldcheck.h"
#include "remodel/query.h"

/* Documents read for the names near a missing field. */
#define NAMES_SAMPLE 200
/* References asked about in one query ($in), and at most this many bytes
 * of them. */
#define JOIN_KEYS 1000
#define JOIN_KEY_BYTES (1024 * 1024)
/* Documents of each namespace the steps are run over before the first
 * write, to see the fields a step reads where an earlier one wrote. */
#define CHAIN_SAMPLE 1000
/* and at most this many bytes of them (a collection of large documents). */
#define CHAIN_BYTES (16 * 1024 * 1024)

/* A namespace's sample as the plan's steps so far leave it. */
typedef struct {
    char ns[300];
    bson_t **docs;
    size_t n, cap;
} sample_t;

/* The samples of every namespace the plan reads or makes; known false
 * from the first step the sample could not follow (nothing is said of
 * what that step writes then, as before: the run's own probes see it). */
typedef struct {
    sample_t *s;
    size_t n;
    bool *known;
} chain_t;

/* Whether list (n names) holds name. */
static bool
listed (char **list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp (list[i], name))
            return true;
    return false;
}

/* A command of database db on the server the sources are read from (the
 * source's with --to-uri: online_source_client's), by the table's row. */
static bool
source_command (online_t *on, const char *db, const bson_t *cmd, bson_t *reply, bson_error_t *why)
{
    mongoc_collection_t *c = on->run->pair ? online_pair_side (on, ONLINE_SOURCE, db, "$cmd") : NULL;
    bool ok = online_ops (on)->command (on, c, db, cmd, reply, why);
    if (c)
        mongoc_collection_destroy (c);
    return ok;
}

/* Each name in the array at path of reply (listDatabases' "databases")
 * added to the NULL-ended list *names (n so far). */
static void
names_of (const bson_t *reply, const char *path, char ***names, size_t *n)
{
    bson_iter_t it, a, f;
    if (!bson_iter_init (&it, reply) || !bson_iter_find_descendant (&it, path, &a) ||
        !BSON_ITER_HOLDS_ARRAY (&a) || !bson_iter_recurse (&a, &a))
        return;
    while (bson_iter_next (&a)) {
        if (!BSON_ITER_HOLDS_DOCUMENT (&a) || !bson_iter_recurse (&a, &f) ||
            !bson_iter_find (&f, "name") || !BSON_ITER_HOLDS_UTF8 (&f))
            continue;
        *names = bson_realloc (*names, (*n + 2) * sizeof **names);
        (*names)[(*n)++] = bson_strdup (bson_iter_utf8 (&f, NULL));
        (*names)[*n] = NULL;
    }
}

typedef struct {
    const char *db;
    rm_dump_info_t *info;
} listing_t;

static void
listed_collection (const bson_t *doc, void *arg)
{
    listing_t *l = arg;
    bson_iter_t it;
    if (bson_iter_init_find (&it, doc, "name") && BSON_ITER_HOLDS_UTF8 (&it))
        rm_dump_info_add (l->info, l->db, bson_iter_utf8 (&it, NULL));
}

/* Adds db's collections to info (listCollections, its names only), on
 * the server the sources are read from (source_command's). */
static bool
add_collections (online_t *on, const char *db, rm_dump_info_t *info, bson_error_t *err)
{
    bson_t *cmd = BCON_NEW ("listCollections", BCON_INT32 (1), "nameOnly", BCON_BOOL (true));
    mongoc_collection_t *c = on->run->pair ? online_pair_side (on, ONLINE_SOURCE, db, "$cmd") : NULL;
    listing_t l = {db, info};
    bson_error_t why;
    bool ok = online_command_each (on, c, db, cmd, listed_collection, &l, &why);
    if (!ok)
        online_fail (on, err, &why, "listing the collections");
    if (c)
        mongoc_collection_destroy (c);
    bson_destroy (cmd);
    return ok;
}

/* Whether the server is FerretDB (its buildInfo says ferretdbVersion). */
static bool
is_ferretdb (online_t *on)
{
    bson_t *cmd = BCON_NEW ("buildInfo", BCON_INT32 (1));
    bson_t reply;
    bool yes = source_command (on, "admin", cmd, &reply, NULL) &&
               bson_has_field (&reply, "ferretdbVersion");
    bson_destroy (&reply);
    bson_destroy (cmd);
    return yes;
}

/* The databases of the server the sources are read from (listDatabases,
 * names only), NULL-ended (bson_strfreev them); NULL on error, in why. */
static char **
source_databases (online_t *on, bson_error_t *why)
{
    bson_t *cmd = BCON_NEW ("listDatabases", BCON_INT32 (1), "nameOnly", BCON_BOOL (true));
    bson_t reply;
    char **names = NULL;
    size_t n = 0;
    if (source_command (on, "admin", cmd, &reply, why)) {
        names_of (&reply, "databases", &names, &n);
        if (!names)
            names = bson_malloc0 (sizeof *names);
    }
    bson_destroy (&reply);
    bson_destroy (cmd);
    return names;
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
    char **dbs = source_databases (on, &why);
    char **done = NULL;
    size_t n_dbs = 0, n_done = 0;
    int ferret = -1;
    bool ok = true;

    if (!dbs)
        return online_fail (on, err, &why, "listing the databases");
    while (dbs[n_dbs])
        n_dbs++;
    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_nsref_t *in[4];
        size_t n = rm_step_inputs (&on->run->plan.steps[i], in, 4);
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
    const online_ops_t *ops = online_ops (on);
    online_cursor_t *cur = ops->find (on, c, q, opts);
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;
    *yes = ops->next (cur, &doc);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "looking for the fields an inverse removes");
    bson_destroy (opts);
    bson_destroy (q);
    mongoc_collection_destroy (c);
    return ok;
}

/* The choices that shape a run, as the run that began the plan made
 * them, for a resume: --allow-missing (its record of the sources, below)
 * checks as it did; the $lookup rules it joined by (the plan's record)
 * join the rest, and a --server-version whose rules differ is refused,
 * naming them (results of two rules would be mixed). *fresh: no run of
 * this plan began (or --restart starts it over), so this run records. */
static bool
resumed_choices (online_t *on, bool *allow, bool *fresh, bson_error_t *err)
{
    online_record_t r;
    bson_t doc;
    bson_iter_t it;
    bool found, ok = online_plan_read (on, &r, err);

    *allow = false;
    /* A --restart of a plan switched in (or part way) is refused by the
     * run: what it began with stays recorded for its rollback. */
    *fresh = ok && (!r.found ||
                    (on->run->o->restart && !r.switching && !r.finalized && !r.after_pending));
    if (!ok || *fresh || on->run->o->restart || strcmp (r.digest, on->run->names.digest) != 0)
        return ok;
    if (r.lookup_rules && on->run->o->server_version_given &&
        (rm_compile_lookup_since_36681 (on->run->o->server_version) ? 2 : 1) != r.lookup_rules) {
        rm_error_set (err, RM_ERR_USAGE, "plan %s: its run began joining by $lookup's rules of "
                      "MongoDB %s (recorded): --server-version contradicts them; leave it out "
                      "(the recorded rules are used), or --restart", on->run->names.name,
                      r.lookup_rules == 2 ? "9.0" : "5.0-8.x");
        return false;
    }
    if (r.lookup_rules)
        on->own_run->lookup_rules = r.lookup_rules;
    ok = online_state_get (on, "before", on->run->names.id, &doc, &found,
                           "reading the run's record of the sources", err);
    *allow = ok && found && bson_iter_init_find (&it, &doc, "digest") &&
             BSON_ITER_HOLDS_UTF8 (&it) && !strcmp (bson_iter_utf8 (&it, NULL), on->run->names.digest) &&
             bson_iter_init_find (&it, &doc, "allowMissing") && bson_iter_as_bool (&it);
    bson_destroy (&doc);
    return ok;
}

/* What a resume and rollback --carry-writes need to know of the sources
 * as the plan's run begins, and can know no later (an in-place run, or
 * the application's writes, change them): whether the run was given
 * --allow-missing, and for each step whose inverse removes the fields it
 * wrote (denormalize, summarize), which of them some document of its
 * namespace already had, which the removal would lose
 * (<state-db>.before {_id: plan id, digest, allowMissing, steps: [{step,
 * ns, present: [field, ...]} or {step, ns, unknown: why}]}; online_carry.c
 * reads the steps). Written by the run that begins the plan (or
 * --restart), kept by a resume. */
static bool
record_before (online_t *on, bson_error_t *err)
{
    bson_t doc = BSON_INITIALIZER, steps, *q;
    mongoc_collection_t *c;
    bson_error_t why;
    size_t n = 0;
    bool ok = true;

    BSON_APPEND_UTF8 (&doc, "_id", on->run->names.id);
    BSON_APPEND_UTF8 (&doc, "digest", on->run->names.digest);
    BSON_APPEND_BOOL (&doc, "allowMissing", on->run->o->allow_missing);
    BSON_APPEND_ARRAY_BEGIN (&doc, "steps", &steps);
    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
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
        if (written_before (&on->run->plan, i, ns)) {
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
    q = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    c = online_collection (on, on->run->o->state_db, "before");
    if (ok)
        ok = online_ops (on)->write (on, c, ONLINE_W_REPLACE, q, &doc, true, false, NULL, &why) ||
             online_fail (on, err, &why, "recording the fields there before the run");
    mongoc_collection_destroy (c);
    bson_destroy (q);
    bson_destroy (&doc);
    return ok;
}

/* The documents of coll (named name) as the server estimates them
 * ({count: name}, the command estimatedDocumentCount sends), into f of c;
 * nothing when it cannot say. */
static void
estimated_count (online_t *on, mongoc_collection_t *coll, const char *name, rm_fieldcheck_t *c,
                 size_t f)
{
    bson_t *cmd = BCON_NEW ("count", BCON_UTF8 (name));
    bson_t reply;
    bson_iter_t it;
    int64_t count = -1;
    if (online_ops (on)->command (on, coll, NULL, cmd, &reply, NULL) &&
        bson_iter_init_find (&it, &reply, "n"))
        count = bson_iter_as_int64 (&it);
    if (count >= 0)
        rm_fieldcheck_docs (c, f, (uint64_t) count);
    bson_destroy (&reply);
    bson_destroy (cmd);
}

/* Field f of c: asked of the server; when no document has it, the
 * namespace's count and a sample's names for the error. */
static bool
probe_field (online_t *on, rm_fieldcheck_t *c, size_t f, bson_error_t *err)
{
    const char *ns = rm_fieldcheck_ns (c, f), *dot = strchr (ns, '.');
    char db[128];
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *coll;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_t q = BSON_INITIALIZER, cond;
    bson_t *opts = BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "limit", BCON_INT64 (1));
    bson_t *sample = BCON_NEW ("limit", BCON_INT64 (NAMES_SAMPLE));
    bson_t empty = BSON_INITIALIZER;
    bson_error_t why;
    bool ok = true, found;

    if (!dot || (size_t) (dot - ns) >= sizeof db)
        return true;
    memcpy (db, ns, (size_t) (dot - ns));
    db[dot - ns] = '\0';
    coll = online_collection (on, db, dot + 1);
    BSON_APPEND_DOCUMENT_BEGIN (&q, rm_fieldcheck_path (c, f), &cond);
    BSON_APPEND_BOOL (&cond, "$exists", true);
    bson_append_document_end (&q, &cond);
    cur = ops->find (on, coll, &q, opts);
    found = ops->next (cur, &doc);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "looking for the plan's fields");
    if (ok && found)
        rm_fieldcheck_seen (c, f);
    if (ok && !found) {
        cur = ops->find (on, coll, &empty, sample);
        while (ops->next (cur, &doc))
            rm_fieldcheck_doc (c, f, bson_get_data (doc), doc->len);
        if (!ops->end (cur, &why))
            ok = online_fail (on, err, &why, "looking for the plan's fields");
        if (ok)
            estimated_count (on, coll, dot + 1, c, f);
    }
    bson_destroy (opts);
    bson_destroy (sample);
    bson_destroy (&q);
    mongoc_collection_destroy (coll);
    return ok;
}

/* A join's references read from the server, asked about in batches. */
typedef struct {
    bson_t vals; /* the $in array being filled */
    uint32_t n;
    bool found;     /* some reference found a partner */
    bool uncertain; /* a value $in compares otherwise than $lookup (a regex) */
} join_keys_t;

static bool
join_key (const bson_iter_t *value, void *ctx)
{
    join_keys_t *k = ctx;
    char key[16];
    const char *name;
    bson_iter_t sub;
    bson_uint32_to_string (k->n, &name, key, sizeof key);
    if (!value) {
        BSON_APPEND_NULL (&k->vals, name);
    } else if (BSON_ITER_HOLDS_REGEX (value) ||
               (BSON_ITER_HOLDS_DOCUMENT (value) && bson_iter_recurse (value, &sub) &&
                bson_iter_next (&sub) && bson_iter_key (&sub)[0] == '$')) {
        /* $in matches a regex as a pattern, and refuses an operator */
        k->uncertain = true;
        return true;
    } else {
        bson_append_iter (&k->vals, name, -1, value);
    }
    k->n++;
    return true;
}

/* Whether doc is one the step takes (q NULL: every one). The query is
 * the engine's, not the server's: FerretDB lacks operators a plan may
 * use. One that fails on the document takes it not, as the run leaves it. */
static bool
takes (const rm_query_t *q, rm_expr_ctx_t *cx, const bson_t *doc)
{
    bson_error_t why;
    bool take = true;
    if (!q)
        return true;
    rm_expr_ctx_reset (cx);
    return rm_query_match (q, cx, bson_get_data (doc), doc->len, &take, &why) && take;
}

/* Whether any of the references gathered finds a document of the
 * foreign side the step takes (by the foreign field's index: one _id
 * read, or with a match the documents the keys find until one passes);
 * the batch emptied. */
static bool
join_ask (online_t *on, mongoc_collection_t *c, const rm_fieldjoin_side_t *foreign,
          rm_expr_ctx_t *cx, join_keys_t *k, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    bson_t *opts;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    bool ok = true;

    if (!k->n)
        return true;
    opts = foreign->query ? bson_new ()
                          : BCON_NEW ("projection", "{", "_id", BCON_INT32 (1), "}", "limit",
                                      BCON_INT64 (1));
    cur = ops->keys (on, c, foreign->path, &k->vals, opts);
    while (!k->found && ops->next (cur, &doc))
        k->found = takes (foreign->query, cx, doc);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "looking for the plan's references");
    bson_destroy (opts);
    bson_reinit (&k->vals);
    k->n = 0;
    return ok;
}

/* The documents of the foreign side the step takes, for the refusal's
 * words: the server's count, or with a match each document read (a
 * refusal's cost only). -1: an error, said in err. */
static int64_t
join_partners (online_t *on, mongoc_collection_t *c, const rm_fieldjoin_side_t *foreign,
               rm_expr_ctx_t *cx, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    bson_t empty = BSON_INITIALIZER;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_error_t why;
    int64_t n = 0;
    if (!foreign->query) {
        n = ops->count (on, c, &empty, &why);
        if (n < 0)
            online_fail (on, err, &why, "counting the plan's partners");
        return n;
    }
    cur = ops->find (on, c, &empty, NULL);
    while (ops->next (cur, &doc))
        n += takes (foreign->query, cx, doc);
    if (!ops->end (cur, &why))
        n = online_fail (on, err, &why, "counting the plan's partners") ? n : -1;
    return n;
}

/* The collection of ns on the server, or NULL where it is not there
 * (one an earlier step makes: seen only as it runs). */
static mongoc_collection_t *
join_collection (online_t *on, const rm_dump_info_t *info, const char *ns)
{
    const char *dot = strchr (ns, '.');
    char db[128];
    if (!dot || (size_t) (dot - ns) >= sizeof db)
        return NULL;
    snprintf (db, sizeof db, "%.*s", (int) (dot - ns), ns);
    return rm_dump_info_find (info, db, dot + 1) ? online_collection (on, db, dot + 1) : NULL;
}

/* A join none of whose references finds a partner, refused as `remodel
 * run` refuses it (remodel/fieldcheck.h decides and words it): the
 * references of the local side read in batches, each asked about by key
 * on the foreign side, until one finds a document there. Only where both
 * sides are on the server as the step will read them (no earlier step
 * writes either). The whole local side is read only when nothing matches:
 * the refusal then counts what `remodel run` counts. */
static bool
join_check (online_t *on, const rm_dump_info_t *info, size_t i, bool allow, bson_error_t *err)
{
    const rm_step_t *s = &on->run->plan.steps[i];
    rm_fieldjoin_side_t local, foreign;
    rm_fieldjoin_count_t n = {0};
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *lc, *fc;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_t empty = BSON_INITIALIZER, *opts;
    bson_error_t why;
    rm_path_t path;
    rm_expr_ctx_t *cx;
    join_keys_t k = {.n = 0};
    char top[256];
    int64_t count;
    bool ok = true, denorm = s->kind == RM_STEP_DENORMALIZE;

    if (allow || s->allow_missing || !rm_fieldjoin_sides (s, &local, &foreign) ||
        written_before (&on->run->plan, i, local.ns) || written_before (&on->run->plan, i, foreign.ns) ||
        !rm_path_parse (&path, local.path, NULL))
        return true;
    lc = join_collection (on, info, local.ns);
    fc = join_collection (on, info, foreign.ns);
    cx = rm_expr_ctx_new (0);
    bson_init (&k.vals);
    /* The top-level field only (a path's numeric part indexes an array,
     * which a projection would not), unless the filter reads others. */
    snprintf (top, sizeof top, "%.*s", (int) strcspn (local.path, "."), local.path);
    opts = local.query ? bson_new () : BCON_NEW ("projection", "{", top, BCON_INT32 (1), "}");
    cur = lc && fc ? ops->find (on, lc, &empty, opts) : NULL;
    while (cur && ok && !k.found && ops->next (cur, &doc)) {
        uint32_t before = k.n;
        if (!takes (local.query, cx, doc))
            continue;
        n.docs++;
        /* A missing localField joins as null ($lookup); denormalize looks
         * nothing up for it. */
        if (!rm_path_visit (bson_get_data (doc), doc->len, &path, true, false, join_key, &k) &&
            !denorm)
            join_key (NULL, &k);
        n.refs += k.n - before;
        if (k.n >= JOIN_KEYS || k.vals.len >= JOIN_KEY_BYTES)
            ok = join_ask (on, fc, &foreign, cx, &k, err);
    }
    if (cur && !ops->end (cur, &why) && ok)
        ok = online_fail (on, err, &why, "reading the plan's references");
    if (cur && ok && !k.found)
        ok = join_ask (on, fc, &foreign, cx, &k, err);
    if (cur && ok && !k.found && !k.uncertain) {
        count = join_partners (on, fc, &foreign, cx, err);
        ok = count >= 0;
        n.partners = ok ? (uint64_t) count : 0;
        if (ok && !rm_fieldjoin_result (s, allow, &n, err)) {
            rm_error_prefix (err, "%s: %s", on->run->where, on->run->o->plan_path);
            ok = false;
        }
    }
    if (lc)
        mongoc_collection_destroy (lc);
    if (fc)
        mongoc_collection_destroy (fc);
    rm_expr_ctx_destroy (cx);
    bson_destroy (opts);
    bson_destroy (&k.vals);
    rm_path_destroy (&path);
    return ok;
}

static sample_t *
chain_find (chain_t *c, const char *ns, bool add)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp (c->s[i].ns, ns))
            return &c->s[i];
    if (!add)
        return NULL;
    c->s = bson_realloc (c->s, (c->n + 1) * sizeof *c->s);
    memset (&c->s[c->n], 0, sizeof c->s[0]);
    snprintf (c->s[c->n].ns, sizeof c->s[0].ns, "%s", ns);
    return &c->s[c->n++];
}

static void
sample_clear (sample_t *sm)
{
    for (size_t i = 0; i < sm->n; i++)
        bson_destroy (sm->docs[i]);
    sm->n = 0;
}

static void
sample_add (sample_t *sm, const uint8_t *doc, uint32_t len)
{
    if (sm->n == sm->cap) {
        sm->cap = sm->cap ? sm->cap * 2 : 64;
        sm->docs = bson_realloc (sm->docs, sm->cap * sizeof *sm->docs);
    }
    sm->docs[sm->n++] = bson_new_from_data (doc, len);
}

static void
chain_destroy (chain_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        sample_clear (&c->s[i]);
        bson_free (c->s[i].docs);
    }
    bson_free (c->s);
    bson_free (c->known);
}

/* The first documents of a namespace on the server (none where it is
 * not there: one an earlier step makes). */
static bool
chain_read (online_t *on, const rm_dump_info_t *info, sample_t *sm, bson_error_t *err)
{
    const char *dot = strchr (sm->ns, '.');
    char db[128];
    const online_ops_t *ops = online_ops (on);
    mongoc_collection_t *coll;
    online_cursor_t *cur;
    const bson_t *doc;
    bson_t empty = BSON_INITIALIZER, *opts;
    bson_error_t why;
    bool ok = true;

    if (!dot || (size_t) (dot - sm->ns) >= sizeof db)
        return true;
    snprintf (db, sizeof db, "%.*s", (int) (dot - sm->ns), sm->ns);
    if (!rm_dump_info_find (info, db, dot + 1))
        return true;
    coll = online_collection (on, db, dot + 1);
    opts = BCON_NEW ("limit", BCON_INT64 (CHAIN_SAMPLE));
    cur = ops->find (on, coll, &empty, opts);
    for (size_t bytes = 0; bytes < CHAIN_BYTES && ops->next (cur, &doc); bytes += doc->len)
        sample_add (sm, bson_get_data (doc), doc->len);
    if (!ops->end (cur, &why))
        ok = online_fail (on, err, &why, "reading a sample of the plan's sources");
    bson_destroy (opts);
    mongoc_collection_destroy (coll);
    return ok;
}

typedef struct {
    chain_t *c;
    sample_t *out;
    size_t n_out;
    const char **names;
} collect_t;

static bool
collect (void *ctx, const char *ns, const uint8_t *doc, uint32_t len, bson_error_t *err)
{
    collect_t *k = ctx;
    for (size_t i = 0; i < k->n_out; i++)
        if (!strcmp (k->names[i], ns)) {
            sample_add (&k->out[i], doc, len);
            break;
        }
    return true;
}

static void
doc_fails (void *ctx, const bson_error_t *why)
{
    (void) ctx;
    (void) why; /* said by the run, on the whole namespace */
}

/* Step i run over the samples of its inputs, as the core's engine runs it
 * over a batch (remodel/batchstep.h): the samples of the namespaces it
 * writes become what it makes of them. A partner sample holds only some
 * partners: a join finds fewer matches there than in the data, which is
 * why a field is also taken as there when some source document has it or
 * the step is one whose inverse removes it (online_preflight). */
static void
chain_step (online_t *on, chain_t *c, size_t i)
{
    const rm_step_t *s = &on->run->plan.steps[i];
    const rm_nsref_t *in[4], *out[8];
    size_t n_in = rm_step_inputs (s, in, 4), n_out = rm_step_outputs (s, out, 8);
    rm_batchstep_t *b = rm_batchstep_new (s, NULL);
    sample_t made[8];
    const char *names[8];
    collect_t k = {c, made, n_out, names};
    bson_error_t why;

    memset (made, 0, sizeof made);
    rm_batchstep_lookup (b, online_lookup_rules (on) == 2);
    rm_batchstep_doc_error (b, doc_fails, NULL);
    for (size_t j = 0; j < n_in; j++) {
        sample_t *sm = chain_find (c, in[j]->text, false);
        for (size_t d = 0; sm && d < sm->n; d++)
            rm_batchstep_add (b, j, bson_get_data (sm->docs[d]), sm->docs[d]->len);
    }
    for (size_t j = 0; j < n_out; j++)
        names[j] = out[j]->text;
    c->known[i] = rm_batchstep_run (b, collect, &k, &why);
    for (size_t j = 0; j < n_out; j++) {
        sample_t *sm = chain_find (c, out[j]->text, true);
        if (c->known[i]) {
            sample_clear (sm);
            bson_free (sm->docs);
            sm->docs = made[j].docs;
            sm->n = made[j].n;
            sm->cap = made[j].cap;
        } else {
            sample_clear (&made[j]);
            bson_free (made[j].docs);
        }
    }
    rm_batchstep_destroy (b);
}

/* Whether the top-level name of path is name (len bytes). */
static bool
same_top (const char *path, const char *name, size_t len)
{
    return strcspn (path, ".") == len && !strncmp (path, name, len);
}

/* Whether step i's field path (in ns) is one an earlier step that writes
 * ns writes into every document, as its inverse shows: the fields an
 * unset removes (denormalize's, summarize's), the array an extract takes
 * apart (embed's `as`). Those a sample can miss: a join there finds only
 * the partners the sample holds. */
static bool
written_by_earlier (const rm_plan_t *plan, size_t i, const char *ns, const char *path)
{
    for (size_t k = 0; k < i; k++) {
        bson_iter_t in, f, it;
        rm_step_inverse_t iv;
        bson_t *inv = inverse_removes (&plan->steps[k], &in, &f);
        bool yes = false;
        if (inv && !strcmp (bson_iter_utf8 (&in, NULL), ns))
            while (!yes && bson_iter_next (&f))
                yes = BSON_ITER_HOLDS_UTF8 (&f) &&
                      same_top (path, bson_iter_utf8 (&f, NULL), strlen (bson_iter_utf8 (&f, NULL)));
        if (inv)
            bson_destroy (inv);
        rm_step_inverse (&plan->steps[k], &iv);
        if (!yes && iv.plan && bson_iter_init (&it, iv.plan) &&
            bson_iter_find_descendant (&it, "steps.0.extract.from", &in) &&
            BSON_ITER_HOLDS_UTF8 (&in) && !strcmp (bson_iter_utf8 (&in, NULL), ns) &&
            bson_iter_init (&it, iv.plan) &&
            bson_iter_find_descendant (&it, "steps.0.extract.path", &f) && BSON_ITER_HOLDS_UTF8 (&f))
            yes = same_top (path, bson_iter_utf8 (&f, NULL), strlen (bson_iter_utf8 (&f, NULL)));
        if (iv.plan)
            bson_destroy (iv.plan);
        if (yes)
            return true;
    }
    return false;
}

/* Whether every earlier step that writes ns was followed on the samples. */
static bool
chain_known (const chain_t *c, const rm_plan_t *plan, size_t i, const char *ns)
{
    for (size_t k = 0; k < i; k++) {
        const rm_nsref_t *out[8];
        size_t n = rm_step_outputs (&plan->steps[k], out, 8);
        for (size_t j = 0; j < n; j++)
            if (!strcmp (out[j]->text, ns) && !c->known[k])
                return false;
    }
    return true;
}

bool
online_preflight (online_t *on, bson_error_t *err)
{
    rm_dump_info_t info;
    chain_t chain = {0};
    bool ok, follow = false, allow, fresh;

    if (!resumed_choices (on, &allow, &fresh, err))
        return false;
    allow |= on->run->o->allow_missing;
    rm_dump_info_init (&info);
    ok = server_namespaces (on, &info, err);
    if (ok && !rm_plan_check_against (&on->run->plan, &info, err)) {
        rm_error_prefix (err, "%s: %s", on->run->where, on->run->o->plan_path);
        ok = false;
    }
    /* The steps followed on samples only where one reads what an earlier
     * one wrote. */
    for (size_t i = 0; i < on->run->plan.n && !follow; i++) {
        const rm_nsref_t *in[4];
        size_t n = rm_step_inputs (&on->run->plan.steps[i], in, 4);
        for (size_t j = 0; j < n; j++)
            follow |= written_before (&on->run->plan, i, in[j]->text);
    }
    chain.known = bson_malloc0 ((on->run->plan.n + 1) * sizeof *chain.known);
    for (size_t i = 0; ok && i < on->run->plan.n; i++) {
        const rm_step_t *s = &on->run->plan.steps[i];
        rm_fieldcheck_t *c = rm_fieldcheck_new (s, allow);
        const rm_nsref_t *in[4];
        size_t n_in = follow ? rm_step_inputs (s, in, 4) : 0;
        for (size_t j = 0; ok && j < n_in; j++)
            if (!chain_find (&chain, in[j]->text, false))
                ok = chain_read (on, &info, chain_find (&chain, in[j]->text, true), err);
        for (size_t f = 0; ok && f < rm_fieldcheck_count (c); f++) {
            const char *ns = rm_fieldcheck_ns (c, f), *dot = strchr (ns, '.');
            char db[128];
            sample_t *sm;
            if (!dot || (size_t) (dot - ns) >= sizeof db)
                continue;
            memcpy (db, ns, (size_t) (dot - ns));
            db[dot - ns] = '\0';
            /* One an earlier step makes is seen only as it runs. */
            if (!rm_dump_info_find (&info, db, dot + 1))
                continue;
            if (written_before (&on->run->plan, i, ns)) {
                /* Changed by an earlier step: seen as the steps before it
                 * leave a sample of it, in its source, or written by one
                 * of them. */
                if (!chain_known (&chain, &on->run->plan, i, ns))
                    continue;
                if (written_by_earlier (&on->run->plan, i, ns, rm_fieldcheck_path (c, f)))
                    rm_fieldcheck_seen (c, f);
                sm = chain_find (&chain, ns, false);
                for (size_t d = 0; sm && d < sm->n; d++)
                    rm_fieldcheck_doc (c, f, bson_get_data (sm->docs[d]), sm->docs[d]->len);
            }
            ok = probe_field (on, c, f, err);
        }
        if (ok && !rm_fieldcheck_result (c, err)) {
            rm_error_prefix (err, "%s: %s", on->run->where, on->run->o->plan_path);
            ok = false;
        }
        ok = ok && join_check (on, &info, i, allow, err);
        rm_fieldcheck_destroy (c);
        if (ok && follow)
            chain_step (on, &chain, i);
    }
    chain_destroy (&chain);
    rm_dump_info_destroy (&info);
    return ok && (!fresh || on->run->o->dry_run || record_before (on, err));
}
