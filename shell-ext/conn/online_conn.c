/* Connecting, and driver errors in remodel's words (online.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "online.h"

/* The password, so that no driver message can echo it (online_fail). */
static char secret[256];

/* A driver message with the password, should it quote it, masked. */
static void
masked (const char *message, char *buf, size_t cap)
{
    size_t n = strlen (secret);
    const char *at;
    bson_strncpy (buf, message, cap);
    if (n < 3) /* a shorter one is in every message: not worth masking */
        return;
    while ((at = strstr (buf, secret)) != NULL) {
        memset ((char *) at, '*', 3);
        memmove ((char *) at + 3, at + n, strlen (at + n) + 1);
    }
}

bool
online_fail (online_t *on, bson_error_t *err, const bson_error_t *why, const char *what)
{
    char message[sizeof why->message];
    on->transient = online_transient (why);
    masked (why->message, message, sizeof message);
    rm_error_set (err, RM_ERR_IO, "%s: %s: %s", on->run->where, what, message);
    return false;
}

/* Whether s[0..n) holds one of the characters a user name or password
 * must percent-encode, or a '%' that starts no escape. */
static bool
needs_escape (const char *s, size_t n, bool colon_ok)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ':' && colon_ok) {
            colon_ok = false; /* the one between user name and password */
            continue;
        }
        if (strchr (":/?#[]@", s[i]))
            return true;
        if (s[i] == '%' && !(i + 2 < n && isxdigit ((unsigned char) s[i + 1]) &&
                             isxdigit ((unsigned char) s[i + 2])))
            return true;
    }
    return false;
}

/* Whether the option at k ("name=value", up to '&') may hold an '@': in
 * its value, and only for the options whose values can (an application
 * name, a file, a replica set...). Anywhere else it is the sign of a
 * password whose '/' ended the host list early, its remainder and the
 * real hosts left among the options. */
static bool
option_may_hold_at (const char *k)
{
    static const char *const may[] = {"appname", "replicaset", "authsource",
                                      "authmechanismproperties", "tlscafile",
                                      "tlscertificatekeyfile", "tlscertificatekeyfilepassword",
                                      "sslcertificateauthorityfile", "sslclientcertificatekeyfile",
                                      "sslclientcertificatekeypassword"};
    size_t kl = strcspn (k, "=&"), vl = strcspn (k, "&");
    if (!memchr (k, '@', vl))
        return true;
    if (k[kl] != '=' || memchr (k, '@', kl))
        return false;
    for (size_t i = 0; i < sizeof may / sizeof *may; i++)
        if (strlen (may[i]) == kl && strncasecmp (k, may[i], kl) == 0)
            return true;
    return false;
}

/* Before the driver parses the URI: a user name or password with an
 * unescaped '@', ':', '/' or '%' makes it cut the credentials in the
 * wrong place (the driver splits at the first '@' and ends the host list
 * at the first '/'), and the rest of the password would become a host
 * name, a port or a database, and be printed as where the error was.
 * Refused whole, quoting none of it. */
static bool
credentials_escaped (const char *uri)
{
    const char *rest = strstr (uri, "://"), *slash, *at, *q;
    size_t auth;

    if (!rest)
        return true; /* not a connection string: the driver says so */
    rest += 3;
    slash = strchr (rest, '/');
    auth = slash ? (size_t) (slash - rest) : strlen (rest);
    at = memchr (rest, '@', auth);
    /* user:password@hosts: one '@', the credentials escaped */
    if (at && (memchr (at + 1, '@', auth - (size_t) (at - rest) - 1) ||
               needs_escape (rest, (size_t) (at - rest), true)))
        return false;
    /* A '/' in the password ends the host list early: the password's
     * remainder and the hosts then follow in the database name (which
     * holds no '@') or among the options. */
    if (slash) {
        q = strchr (slash, '?');
        at = strchr (slash, '@');
        if (at && (!q || at < q))
            return false;
        for (const char *k = q; k && *k; k = strchr (k + 1, '&'))
            if (!option_may_hold_at (k + 1))
                return false;
    }
    return true;
}

/* REMODEL_ONLINE_TRACE=1: each command the server answers, one line
 * through the reporter (when since the start, how long the call took,
 * database, the command cut short), to see where a slow run spends its
 * time: a gap between two lines is time spent off the server. No secret:
 * the driver hands its monitoring the authentication commands emptied
 * (the APM specification's redaction). */
static __thread char trace_last[512]; /* a worker's own: its commands run on its thread */

static void
trace_started (const mongoc_apm_command_started_t *e)
{
    char *json = bson_as_relaxed_extended_json (mongoc_apm_command_started_get_command (e), NULL);

    snprintf (trace_last, sizeof trace_last, "%s: %.400s",
              mongoc_apm_command_started_get_database_name (e), json ? json : "");
    bson_free (json);
}

static void
trace_done (int64_t usec, const char *how)
{
    online_say_trace (usec, trace_last, how);
}

/* A read's line says how many documents its reply carried (a find's
 * first batch, a getMore's next), so that a test counts what a command
 * read of each collection. */
static void
trace_succeeded (const mongoc_apm_command_succeeded_t *e)
{
    const bson_t *reply = mongoc_apm_command_succeeded_get_reply (e);
    bson_iter_t it, docs;
    char how[64] = "";
    if (bson_iter_init (&it, reply) &&
        (bson_iter_find_descendant (&it, "cursor.firstBatch", &docs) ||
         (bson_iter_init (&it, reply) && bson_iter_find_descendant (&it, "cursor.nextBatch", &docs))) &&
        BSON_ITER_HOLDS_ARRAY (&docs) && bson_iter_recurse (&docs, &it)) {
        uint32_t n = 0;
        while (bson_iter_next (&it))
            n++;
        snprintf (how, sizeof how, " (%u documents)", n);
    }
    trace_done (mongoc_apm_command_succeeded_get_duration (e), how);
}

static void
trace_failed (const mongoc_apm_command_failed_t *e)
{
    bson_error_t why;
    char how[300];
    mongoc_apm_command_failed_get_error (e, &why);
    snprintf (how, sizeof how, " (failed: %.250s)", why.message);
    trace_done (mongoc_apm_command_failed_get_duration (e), how);
}

static void
trace_commands (mongoc_client_t *client)
{
    mongoc_apm_callbacks_t *cb;
    const char *t = getenv ("REMODEL_ONLINE_TRACE");

    if (!t || !*t || !strcmp (t, "0"))
        return;
    cb = mongoc_apm_callbacks_new ();
    mongoc_apm_set_command_started_cb (cb, trace_started);
    mongoc_apm_set_command_succeeded_cb (cb, trace_succeeded);
    mongoc_apm_set_command_failed_cb (cb, trace_failed);
    mongoc_client_set_apm_callbacks (client, cb, NULL);
    mongoc_apm_callbacks_destroy (cb);
}

/* The URI with its host list replaced by host alone, directConnection
 * and without replicaSet, its credentials and every other option (TLS
 * too) kept: into buf; false when it does not fit or has no host list to
 * replace (mongodb+srv: the hosts come from DNS). */
static bool
direct_uri (const char *uri, const char *host, char *buf, size_t cap)
{
    const char *rest = strstr (uri, "://"), *end, *at, *q;
    size_t len = 0;
    if (!rest || strncmp (uri, "mongodb://", 10))
        return false;
    rest += 3;
    end = rest + strcspn (rest, "/?");
    at = rest;
    for (const char *p = rest; p < end; p++)
        if (*p == '@')
            at = p + 1;
    q = strchr (end, '?');
    len = (size_t) snprintf (buf, cap, "mongodb://%.*s%s/%.*s?directConnection=true",
                             (int) (at - rest), rest, host,
                             (int) (q ? (size_t) (q - end) : strlen (end)) - (*end == '/'),
                             end + (*end == '/'));
    for (const char *k = q; k && *k && len < cap; k = strchr (k + 1, '&')) {
        size_t kl = strcspn (k + 1, "&");
        if (kl == 0 || !strncasecmp (k + 1, "replicaset=", 11) ||
            !strncasecmp (k + 1, "directconnection=", 17))
            continue;
        len += (size_t) snprintf (buf + len, cap - len, "&%.*s", (int) kl, k + 1);
    }
    return len < cap;
}

/* Seed host's hello (isMaster where refused) over a connection to it
 * alone, with the URI's credentials and options: false when it did not
 * answer (reply then untouched). Traced as every command is. */
static bool
seed_hello (const char *text, const char *host, bson_t *reply)
{
    char direct[4096];
    bson_error_t why;
    bson_t *cmd = BCON_NEW ("hello", BCON_INT32 (1));
    mongoc_uri_t *one;
    mongoc_client_t *client;
    /* The seed's own connection as a record of its own, so that its
     * hello goes through the table as every other call does: a run of
     * its own too, empty (libmongoc's table, no plan). */
    online_run_t seed_run = {0};
    online_t seed = {.run = &seed_run};
    bool asked;

    if (!direct_uri (text, host, direct, sizeof direct) ||
        !(one = mongoc_uri_new_with_error (direct, &why))) {
        bson_destroy (cmd);
        return false;
    }
    if (!mongoc_uri_has_option (one, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
        mongoc_uri_set_option_as_int32 (one, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
    client = mongoc_client_new_from_uri (one);
    mongoc_uri_destroy (one);
    seed.client = client;
    if (client)
        trace_commands (client);
    asked = client && online_ops (&seed)->command (&seed, NULL, "admin", cmd, reply, &why);
    if (client && !asked) {
        bson_destroy (reply);
        bson_destroy (cmd);
        cmd = BCON_NEW ("isMaster", BCON_INT32 (1));
        asked = online_ops (&seed)->command (&seed, NULL, "admin", cmd, reply, &why);
    }
    if (client && !asked)
        bson_destroy (reply);
    if (client)
        mongoc_client_destroy (client);
    bson_destroy (cmd);
    return asked;
}

/* Issue 50: a replica set's seed whose hello lists a host the driver
 * cannot parse makes libmongoc 1.23.1 crash as it adds the hosts to its
 * view of the set, before anything can be said. So the seeds are asked
 * first, each alone (directConnection), until one answers (the members
 * share one configuration), and such a host is refused here. Seeds that
 * do not answer are left to the driver, which says so as before. */
static bool
seeds_parse (const mongoc_uri_t *uri, const char *text, const char *where, bson_error_t *err)
{
    for (const mongoc_host_list_t *h = mongoc_uri_get_hosts (uri); h; h = h->next) {
        char bad[300];
        bson_t reply;
        bool ok;
        if (!seed_hello (text, h->host_and_port, &reply))
            continue;
        ok = online_caps_hosts_ok (&reply, bad, sizeof bad);
        bson_destroy (&reply);
        if (!ok)
            rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: the replica set's hello lists a "
                          "member that is not host:port (\"%s\"), which the driver cannot "
                          "connect to: fix the set's configuration, or connect to one member "
                          "without replicaSet=", where, bad);
        return ok;
    }
    return true;
}

/* A client for the connection string text into on->client, pinged. where:
 * the command's, filled with the URI's hosts (and the password noted, to
 * be masked); NULL for a worker's, whose run has them already. */
static bool
open_client (online_t *on, const char *text, char *where, size_t cap, bson_error_t *err)
{
    bson_error_t why;
    mongoc_uri_t *uri;
    bson_t ping = BSON_INITIALIZER;
    size_t at = 0;
    bool ok;

    if (!credentials_escaped (text)) {
        rm_error_set (err, RM_ERR_USAGE, "--uri: not a MongoDB connection string: a user name "
                      "or password must percent-encode '@', ':', '/', '?', '#', '[', ']' and '%%' "
                      "(an '@' is %%40, a '/' %%2F)");
        return false;
    }
    uri = mongoc_uri_new_with_error (text, &why);
    if (!uri) {
        /* The driver's message can quote the URI: not ours to print. */
        rm_error_set (err, RM_ERR_USAGE, "--uri: not a MongoDB connection string");
        return false;
    }
    if (where && mongoc_uri_get_password (uri))
        bson_strncpy (secret, mongoc_uri_get_password (uri), sizeof secret);
    for (const mongoc_host_list_t *h = mongoc_uri_get_hosts (uri); where && h && at < cap - 1;
         h = h->next)
        at += (size_t) snprintf (where + at, cap - at, "%s%s", at ? "," : "", h->host_and_port);
    if (where && !at)
        snprintf (where, cap, "(the server)");
    /* Fail fast when nothing answers: the retry policy is the run's. */
    if (!mongoc_uri_has_option (uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
        mongoc_uri_set_option_as_int32 (uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
    /* The URI's own appName stands (setting a second one is an error). */
    if (!mongoc_uri_get_appname (uri))
        mongoc_uri_set_appname (uri, "remodel-online");
    if (mongoc_uri_get_replica_set (uri) && !seeds_parse (uri, text, on->run->where, err)) {
        mongoc_uri_destroy (uri);
        return false;
    }
    on->client = mongoc_client_new_from_uri_with_error (uri, &why);
    mongoc_uri_destroy (uri);
    if (!on->client) {
        char message[sizeof why.message];
        masked (why.message, message, sizeof message);
        rm_error_set (err, RM_ERR_USAGE, "--uri: %s", message);
        return false;
    }
    /* The tests' fault layer, before the first connection (online_fault.c). */
    if (!online_fault_install (on->client, err))
        return false;
    trace_commands (on->client);
    /* The one table of the server's operations (online_ops.c): the
     * driver's, unless a caller put another in place before connecting. */
    if (!on->run->ops)
        on->own_run->ops = &online_ops_mongoc;
    BSON_APPEND_INT32 (&ping, "ping", 1);
    on->answered = false; /* a view's copy speaks for another client */
    ok = on->run->ops->command (on, NULL, "admin", &ping, NULL, &why);
    bson_destroy (&ping);
    /* From here a call the driver finds no server for is a cut, sent
     * again (online_ops.c); before, a wrong address, failed at once. */
    on->answered = ok;
    return ok || online_fail (on, err, &why, "cannot reach the server");
}

bool
online_connect (online_t *on, const online_opts_t *o, bson_error_t *err)
{
    on->own_run->o = o;
    if (!open_client (on, o->uri, on->own_run->where, sizeof on->own_run->where, err))
        return false;
    /* What the server is and can do, once (online_caps.c). */
    online_caps_fill (on);
    return true;
}

/* --to-uri: a worker's source, opened as the command's was: through a
 * view whose where is the source's, so that its errors name the source's
 * hosts, and its transient error carried back to the worker. */
static bool
connect_worker_source (online_t *on, bson_error_t *err)
{
    online_t view;
    online_run_t view_run;
    bool ok;

    online_view (on, &view, &view_run);
    view.client = view.source = NULL;
    view_run.pair = NULL;
    bson_strncpy (view_run.where, on->run->pair->where, sizeof view_run.where);
    ok = open_client (&view, on->run->o->uri, NULL, 0, err);
    on->source = view.client; /* closed by online_close, even after a failed ping */
    on->transient = view.transient;
    if (!ok) {
        char m[sizeof err->message];
        bson_strncpy (m, err->message, sizeof m);
        rm_error_set (err, err->code, "the source (--uri): %s", m);
    }
    return ok;
}

bool
online_connect_worker (online_t *on, bson_error_t *err)
{
    /* The same servers as the command's connections: their hosts,
     * password and capabilities are the run's already. With --to-uri
     * the worker's client is the destination's, where its state, leases
     * and results are written, as the command's is. */
    if (!on->run->pair)
        return open_client (on, on->run->o->uri, NULL, 0, err);
    return open_client (on, on->run->o->to_uri, NULL, 0, err) && connect_worker_source (on, err);
}

void
online_close (online_t *on)
{
    if (on->client)
        mongoc_client_destroy (on->client);
    if (on->source)
        mongoc_client_destroy (on->source);
    on->client = on->source = NULL;
}

void
online_run_destroy (online_run_t *run)
{
    rm_plan_destroy (&run->plan);
    rm_names_clear (&run->names);
    bson_free (run->steps[0]);
    bson_free (run->steps[1]);
}

bool
online_state_get (online_t *on, const char *coll, const char *id, bson_t *doc, bool *found,
                  const char *what, bson_error_t *err)
{
    bson_t *q = BCON_NEW ("_id", BCON_UTF8 (id));
    bson_error_t why;
    bool ok = online_ops (on)->state_read (on, coll, q, doc, found, &why) ||
              online_fail (on, err, &why, what);
    bson_destroy (q);
    return ok;
}

bool
online_server_version (online_t *on, rm_compile_version_t *v, bson_error_t *err)
{
    bson_t *cmd;
    bson_t reply;
    bson_iter_t it;
    bson_error_t why;
    bool ok;

    /* Asked at connect already (online_caps_fill). */
    if (on->run->caps.known && *on->run->caps.version && rm_compile_version_parse (on->run->caps.version, v))
        return true;
    cmd = BCON_NEW ("buildInfo", BCON_INT32 (1));
    ok = online_ops (on)->command (on, NULL, "admin", cmd, &reply, &why);
    bson_destroy (cmd);
    if (!ok) {
        bson_destroy (&reply);
        return online_fail (on, err, &why, "asking the server's version (buildInfo)");
    }
    ok = bson_iter_init_find (&it, &reply, "version") && BSON_ITER_HOLDS_UTF8 (&it) &&
         rm_compile_version_parse (bson_iter_utf8 (&it, NULL), v);
    if (!ok)
        rm_error_set (err, RM_ERR_UNSUPPORTED, "%s: the server's buildInfo names no version "
                      "remodel reads: give --server-version", on->run->where);
    bson_destroy (&reply);
    return ok;
}

int
online_lookup_rules (online_t *on)
{
    rm_compile_version_t v;
    bson_error_t ignored;
    int rules;

    if (on->run->lookup_rules)
        return on->run->lookup_rules;
    v = on->run->o->server_version;
    if (!on->run->o->server_version_given && !online_server_version (on, &v, &ignored))
        rm_compile_version_parse (RM_LOOKUP_DEFAULT_VERSION, &v);
    rules = rm_compile_lookup_since_36681 (v) ? 2 : 1;
    /* Kept by the command's thread; a worker, which cannot change the
     * run, finds them settled before its pass (lookup_rules_settle). */
    if (on->own_run)
        on->own_run->lookup_rules = rules;
    return rules;
}
