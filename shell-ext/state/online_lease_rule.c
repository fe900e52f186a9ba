/* The lease's decisions apart from the server (online_state.h): whether a
 * holder keeps another run out, whether a claim in progress does, the
 * next epoch, whether a holder may still write, and what a lease
 * document says. online_lease.c reads and writes the server; these
 * decide. Calls nothing of the program. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "online_lease_doc.h"
#include "online_state.h"

/* A process that ended and that its parent has not waited for yet (a
 * script's `kill -9 $pid` before its `wait`) still answers kill(pid, 0):
 * /proc says it is a zombie, which writes nothing more. */
static bool
zombie (pid_t pid)
{
    char path[64], line[512], *paren;
    FILE *f;
    bool z = false;
    snprintf (path, sizeof path, "/proc/%ld/stat", (long) pid);
    if (!(f = fopen (path, "r")))
        return false;
    /* "PID (COMM) STATE ...": COMM may hold spaces and parentheses. */
    if (fgets (line, sizeof line, f) && (paren = strrchr (line, ')')) && paren[1] == ' ')
        z = paren[2] == 'Z' || paren[2] == 'X';
    fclose (f);
    return z;
}

bool
online_lease_holder_dead (const char *owner)
{
    char host[256] = "";
    const char *colon = strchr (owner, ':');
    char *end;
    long pid;
    gethostname (host, sizeof host - 1);
    if (!colon || (size_t) (colon - owner) != strlen (host) || strncmp (owner, host, strlen (host)))
        return false;
    pid = strtol (colon + 1, &end, 10);
    if (end == colon + 1 || *end != ':' || pid <= 0)
        return false;
    if (kill ((pid_t) pid, 0) != 0)
        return errno == ESRCH;
    return zombie ((pid_t) pid);
}

bool
online_lease_blocks (bool found, const char *owner, const char *me, int64_t expires, int64_t now)
{
    return found && *owner && strcmp (owner, me) && expires > now && !online_lease_holder_dead (owner);
}

bool
online_lease_claim_blocks (int64_t newest, int64_t epoch, int64_t newest_at, int64_t lease_ms,
                           int64_t now, const char *claimer, const char *me)
{
    return newest > epoch && newest_at + lease_ms > now && strcmp (claimer, me) &&
           !online_lease_holder_dead (claimer);
}

int64_t
online_lease_next_epoch (int64_t newest, int64_t epoch)
{
    return (newest > epoch ? newest : epoch) + 1;
}

online_lease_verdict_t
online_lease_verdict (bool lost, int64_t mono, int64_t renewed, int64_t lease_ms, int64_t margin_ms)
{
    if (lost)
        return ONLINE_LEASE_LOST;
    if (mono >= renewed + lease_ms - margin_ms)
        return ONLINE_LEASE_STALE;
    return ONLINE_LEASE_OK;
}

bool
online_lease_fenced (int64_t newest, int64_t epoch)
{
    return newest > epoch;
}

void
online_lease_parse (const bson_t *doc, char *owner, size_t cap, int64_t *epoch, int64_t *expires)
{
    bson_iter_t it;
    *owner = '\0';
    *epoch = *expires = 0;
    if (bson_iter_init_find (&it, doc, "owner") && BSON_ITER_HOLDS_UTF8 (&it))
        snprintf (owner, cap, "%s", bson_iter_utf8 (&it, NULL));
    /* A double past int64's range converts to nothing defined: read as
     * the largest, which no run writes (online_lease_doc_check says so). */
    if (bson_iter_init_find (&it, doc, "epoch") && BSON_ITER_HOLDS_DOUBLE (&it) &&
        !(bson_iter_double (&it) > -9.2e18 && bson_iter_double (&it) < 9.2e18))
        *epoch = INT64_MAX;
    else if (bson_iter_init_find (&it, doc, "epoch") && BSON_ITER_HOLDS_NUMBER (&it))
        *epoch = bson_iter_as_int64 (&it);
    if (bson_iter_init_find (&it, doc, "expires") && BSON_ITER_HOLDS_DATE_TIME (&it))
        *expires = bson_iter_date_time (&it);
}

/* A type as the refusals name it, with its article. */
static const char *
type_name (bson_type_t t)
{
    switch (t) {
    case BSON_TYPE_UTF8: return "a string";
    case BSON_TYPE_DOUBLE: return "a double";
    case BSON_TYPE_INT32: return "a 32-bit integer";
    case BSON_TYPE_INT64: return "a 64-bit integer";
    case BSON_TYPE_DECIMAL128: return "a decimal";
    case BSON_TYPE_DATE_TIME: return "a date";
    case BSON_TYPE_TIMESTAMP: return "a timestamp";
    case BSON_TYPE_BOOL: return "a boolean";
    case BSON_TYPE_NULL: return "null";
    case BSON_TYPE_DOCUMENT: return "a document";
    case BSON_TYPE_ARRAY: return "an array";
    case BSON_TYPE_OID: return "an ObjectId";
    default: return "a value of another type";
    }
}

bool
online_lease_doc_check (const bson_t *doc, const char **field, char *why, size_t cap)
{
    bson_iter_t it;
    *field = NULL;
    if (bson_iter_init_find (&it, doc, "owner") && !BSON_ITER_HOLDS_UTF8 (&it)) {
        *field = "owner";
        snprintf (why, cap, "is %s, not a string naming the holder", type_name (bson_iter_type (&it)));
    } else if (bson_iter_init_find (&it, doc, "epoch") && !BSON_ITER_HOLDS_INT32 (&it) &&
               !BSON_ITER_HOLDS_INT64 (&it)) {
        /* A double where a tool turned the number into one: believed only
         * while it holds a whole number exactly (2^53 is the largest epoch
         * a run writes); NaN fails the comparisons. */
        double d = BSON_ITER_HOLDS_DOUBLE (&it) ? bson_iter_double (&it) : 0.5;
        if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != (double) (int64_t) d) {
            *field = "epoch";
            if (BSON_ITER_HOLDS_DOUBLE (&it))
                snprintf (why, cap, "is the double %.17g, not a whole number a run could write",
                          d != d ? NAN : d); /* one way to say NaN, whatever its sign */
            else
                snprintf (why, cap, "is %s, not a number", type_name (bson_iter_type (&it)));
        }
    }
    if (!*field && bson_iter_init_find (&it, doc, "expires") && !BSON_ITER_HOLDS_DATE_TIME (&it)) {
        *field = "expires";
        snprintf (why, cap, "is %s, not a date", type_name (bson_iter_type (&it)));
    }
    return *field == NULL;
}

void
online_lease_worker (const char *process, int worker, char *buf, size_t cap)
{
    /* The process's name cut, never the worker's number: two workers are
     * two holders, and host:pid stays first for holder_dead. */
    snprintf (buf, cap, "%.*s:w%d", cap > 16 ? (int) (cap - 16) : 0, process, worker);
}
