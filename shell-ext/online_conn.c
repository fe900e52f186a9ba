/* Connecting, and driver errors in remodel's words (online.h). */
#include <stdio.h>
#include <string.h>

#include "online.h"

/* Errors that pass: the network, a server that is not (yet) primary or
 * is shutting down, a failover. The server's codes (error_codes.yml):
 * HostUnreachable 6, HostNotFound 7, NetworkTimeout 89, ShutdownInProgress
 * 91, PrimarySteppedDown 189, SocketException 9001, NotWritablePrimary
 * 10107, InterruptedAtShutdown 11600, InterruptedDueToReplStateChange
 * 11602, NotPrimaryNoSecondaryOk 13435, NotPrimaryOrSecondary 13436; and
 * MaxTimeMSExpired 50 and ExceededTimeLimit 262, which remodel never asks
 * for (it sets no maxTimeMS): FerretDB answers an operation cut short by
 * its shutdown with 50; CursorNotFound 43, a pass's cursor that timed
 * out while the run was paused (it is opened again). */
static bool
is_transient (const bson_error_t *why)
{
    static const uint32_t codes[] = {6,    7,     43,    50,    89,    91,    189,
                                     262, 9001, 10107, 11600, 11602, 13435, 13436};
    if (why->domain == MONGOC_ERROR_STREAM || why->domain == MONGOC_ERROR_SERVER_SELECTION)
        return true;
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (why->code == codes[i])
            return true;
    return false;
}

bool
online_fail (online_t *on, bson_error_t *err, const bson_error_t *why, const char *what)
{
    on->transient = is_transient (why);
    rm_error_set (err, RM_ERR_IO, "%s: %s: %s", on->where, what, why->message);
    return false;
}

bool
online_connect (online_t *on, const online_opts_t *o, bson_error_t *err)
{
    bson_error_t why;
    mongoc_uri_t *uri = mongoc_uri_new_with_error (o->uri, &why);
    const mongoc_host_list_t *h;
    bson_t ping = BSON_INITIALIZER;
    size_t at = 0;
    bool ok;

    on->o = o;
    if (!uri) {
        /* The driver's message can quote the URI: not ours to print. */
        rm_error_set (err, RM_ERR_USAGE, "--uri: not a MongoDB connection string");
        return false;
    }
    for (h = mongoc_uri_get_hosts (uri); h && at < sizeof on->where - 1; h = h->next)
        at += (size_t) snprintf (on->where + at, sizeof on->where - at, "%s%s", at ? "," : "",
                                 h->host_and_port);
    if (!at)
        snprintf (on->where, sizeof on->where, "(the server)");
    /* Fail fast when nothing answers: the retry policy is the run's. */
    if (!mongoc_uri_has_option (uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
        mongoc_uri_set_option_as_int32 (uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
    on->client = mongoc_client_new_from_uri_with_error (uri, &why);
    mongoc_uri_destroy (uri);
    if (!on->client) {
        rm_error_set (err, RM_ERR_USAGE, "--uri: %s", why.message);
        return false;
    }
    mongoc_client_set_appname (on->client, "remodel-online");
    BSON_APPEND_INT32 (&ping, "ping", 1);
    ok = mongoc_client_command_simple (on->client, "admin", &ping, NULL, NULL, &why);
    bson_destroy (&ping);
    return ok || online_fail (on, err, &why, "cannot reach the server");
}

void
online_close (online_t *on)
{
    if (on->client)
        mongoc_client_destroy (on->client);
    on->client = NULL;
    rm_plan_destroy (&on->plan);
}

mongoc_collection_t *
online_collection (online_t *on, const char *db, const char *coll)
{
    return mongoc_client_get_collection (on->client, db, coll);
}
