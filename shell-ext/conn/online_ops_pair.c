/* From one deployment to another (online.h, "online_ops_pair.c"): the
 * second connection, which of the two each collection is on, and what a
 * result is named there.
 *
 * With --to-uri each thread holds two connections (a driver client
 * serves one thread: a worker opens its own, online_connect_worker).
 * on->client is the destination's, so that everything that lasts between
 * two commands (the plan's record, its lease, its checkpoints) is written
 * there, by the code that writes it within one deployment, unchanged; the
 * source is reached only through the collections routed to it here
 * (on->source), which the layers above read and never write. They name a
 * step's results side by side (names no source holds), so a name of a
 * plan's namespace as it is is the source's; here a namespace's final
 * result is given the namespace's own name on the destination (the
 * pair's names), so that finalize renames nothing. Like online_ops.c,
 * the one place of this pair's calls of the driver. */
#include <string.h>

#include "online.h"

/* Each namespace's final result (its last move once every step ran,
 * rm_names_last, as finalize's: online_after_plan.c), from the plan alone: a
 * scratch copy of the run's names (its identity and fusing, so the
 * results' names are the run's), its moves its own. */
static bool
pair_names (online_t *on, bson_error_t *err)
{
    rm_names_t nm = on->run->names;
    online_pair_t *p = on->run->pair;
    bool ok;

    nm.moved = NULL;
    nm.n_moved = 0;
    ok = rm_names_of_plan (&nm, &on->run->plan, err);
    p->names = bson_malloc0 ((nm.n_moved ? nm.n_moved : 1) * sizeof *p->names);
    for (size_t i = nm.n_moved; ok && i-- > 0;) {
        const char *dot = strchr (nm.moved[i].ns, '.');
        online_pair_name_t *n = &p->names[p->n_names];
        if (!rm_names_last (&nm, i) || !dot)
            continue;
        snprintf (n->db, sizeof n->db, "%.*s", (int) (dot - nm.moved[i].ns), nm.moved[i].ns);
        bson_strncpy (n->result, nm.moved[i].coll, sizeof n->result);
        bson_strncpy (n->coll, dot + 1, sizeof n->coll);
        p->n_names++;
    }
    rm_names_clear (&nm);
    return ok;
}


/* The source's connection: online_connect on a scratch record, its client,
 * where and capabilities kept. A copy of the options that neither starts
 * nor writes, so that capabilities' probe (online_caps.c) never writes
 * the source's state database. */
static bool
connect_source (online_t *on, const online_opts_t *o, bson_error_t *err)
{
    online_opts_t so = *o;
    online_t src;
    online_run_t src_run;

    online_init (&src, &src_run);
    so.starts = false;
    so.dry_run = true;
    if (!online_connect (&src, &so, err)) {
        char m[sizeof err->message];
        bson_strncpy (m, err->message, sizeof m);
        rm_error_set (err, err->code, "the source (--uri): %s", m);
        on->transient = src.transient; /* follow retries a cut as it connects */
        if (src.client)
            mongoc_client_destroy (src.client);
        return false;
    }
    on->own_run->pair = bson_malloc0 (sizeof *on->run->pair);
    on->source = src.client; /* closed by online_close */
    bson_strncpy (on->run->pair->where, src_run.where, sizeof on->run->pair->where);
    on->run->pair->caps = src_run.caps;
    return true;
}

bool
online_pair_connect (online_t *on, const online_opts_t *o, bson_error_t *err)
{
    online_opts_t dest = *o;

    if (!strcmp (o->uri, o->to_uri)) {
        rm_error_set (err, RM_ERR_USAGE, "--to-uri: the same connection string as --uri (one "
                      "deployment: leave --to-uri out)");
        return false;
    }
    if (!connect_source (on, o, err))
        return false;
    dest.uri = o->to_uri;
    if (!online_connect (on, &dest, err)) {
        char m[sizeof err->message];
        /* online_connect's refusals of the string name --uri: here it
         * is --to-uri's, which the prefix names. */
        const char *tail = !strncmp (err->message, "--uri: ", 7) ? err->message + 7 : err->message;
        bson_strncpy (m, tail, sizeof m);
        /* The state database's refusal names the side it looked at. */
        if (strncmp (m, "--state-db ", 11))
            rm_error_set (err, err->code, "the destination (--to-uri): %s", m);
        on->own_run->o = o;
        return false;
    }
    on->own_run->o = o; /* dest was a copy for the connection only */
    return pair_names (on, err);
}

void
online_pair_close (online_t *on)
{
    if (!on->run->pair)
        return;
    bson_free (on->run->pair->names);
    bson_free (on->run->pair);
    on->own_run->pair = NULL;
}

mongoc_collection_t *
online_pair_side (online_t *on, online_side_t side, const char *db, const char *coll)
{
    mongoc_client_t *client = side == ONLINE_SOURCE ? on->source : on->client;
    return mongoc_client_get_collection (client, db, coll);
}

mongoc_collection_t *
online_pair_side_primary (online_t *on, online_side_t side, const char *db, const char *coll)
{
    mongoc_collection_t *c = online_pair_side (on, side, db, coll);
    mongoc_read_prefs_t *primary = mongoc_read_prefs_new (MONGOC_READ_PRIMARY);
    mongoc_collection_set_read_prefs (c, primary);
    mongoc_read_prefs_destroy (primary);
    return c;
}

bool
online_pair_list (online_t *on, online_side_t side, const char *db, bson_t *out, int *n,
                  bson_error_t *err)
{
    mongoc_client_t *client = side == ONLINE_SOURCE ? on->source : on->client;
    mongoc_database_t *d = mongoc_client_get_database (client, db);
    mongoc_cursor_t *cur = mongoc_database_find_collections_with_opts (d, NULL);
    const bson_t *doc;
    bson_error_t why;
    char key[16];
    bool ok = true;

    while (mongoc_cursor_next (cur, &doc)) {
        snprintf (key, sizeof key, "%d", (*n)++);
        bson_append_document (out, key, -1, doc);
    }
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, side == ONLINE_SOURCE ? "listing the source's collections"
                                                                : "listing the destination's "
                                                                  "collections");
    mongoc_cursor_destroy (cur);
    mongoc_database_destroy (d);
    return ok;
}

bool
online_pair_create (online_t *on, const char *db, const char *coll, const bson_t *options,
                    bson_error_t *err)
{
    mongoc_database_t *d = mongoc_client_get_database (on->client, db);
    mongoc_collection_t *c;
    bson_error_t why;

    c = mongoc_database_create_collection (d, coll, options, &why);
    mongoc_database_destroy (d);
    if (!c && why.code == 48)
        return true; /* NamespaceExists: a resumed copy made it before */
    if (!c)
        return online_fail (on, err, &why, "creating a collection on the destination");
    mongoc_collection_destroy (c);
    return true;
}

char **
online_pair_databases (online_t *on, online_side_t side, bson_error_t *err)
{
    mongoc_client_t *client = side == ONLINE_SOURCE ? on->source : on->client;
    bson_error_t why;
    char **names = mongoc_client_get_database_names_with_opts (client, NULL, &why);
    if (!names)
        online_fail (on, err, &why, side == ONLINE_SOURCE ? "listing the source's databases"
                                                          : "listing the databases");
    return names;
}

mongoc_client_t *
online_source_client (online_t *on)
{
    return on->run->pair ? on->source : on->client;
}

bool
online_pair_oplog_last (online_t *on, uint32_t *t, uint32_t *i, bool *found, bson_error_t *err)
{
    mongoc_collection_t *c = mongoc_client_get_collection (on->source, "local", "oplog.rs");
    bson_t filter = BSON_INITIALIZER;
    bson_t *opts = BCON_NEW ("sort", "{", "$natural", BCON_INT32 (-1), "}", "limit",
                             BCON_INT64 (1), "projection", "{", "ts", BCON_INT32 (1), "}");
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts (c, &filter, opts, NULL);
    const bson_t *doc;
    bson_iter_t it;
    bson_error_t why;
    bool ok = true;

    *found = false;
    if (mongoc_cursor_next (cur, &doc) && bson_iter_init_find (&it, doc, "ts") &&
        BSON_ITER_HOLDS_TIMESTAMP (&it)) {
        bson_iter_timestamp (&it, t, i);
        *found = true;
    }
    if (mongoc_cursor_error (cur, &why))
        ok = online_fail (on, err, &why, "reading the source's oplog's last entry");
    mongoc_cursor_destroy (cur);
    mongoc_collection_destroy (c);
    bson_destroy (opts);
    bson_destroy (&filter);
    return ok;
}

/* A shallow copy: the plan, its names and options are on's, read only;
 * nothing the copy is handed to writes (the capture's writes, its
 * sentinel and its point in the plan's record, go through on). */
online_t *
online_pair_log (online_t *on, online_t *view, online_run_t *view_run)
{
    if (!on->run->pair)
        return on;
    online_view (on, view, view_run);
    view->client = on->source;
    view->source = NULL;
    bson_strncpy (view_run->where, on->run->pair->where, sizeof view_run->where);
    view_run->caps = on->run->pair->caps;
    view_run->pair = NULL;
    view->lease = NULL;
    view->transient = false;
    return view;
}

void
online_pair_log_end (online_t *on, const online_t *view)
{
    if (view != on)
        on->transient = view->transient;
}
