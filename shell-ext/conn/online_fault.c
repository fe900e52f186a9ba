/* The fault layer, for the tests only (issue 53): as SQLite's crash-test
 * VFS wraps the real one, a stream of our own wraps each connection the
 * driver opens, names every call by its command (the first key of the
 * message's body) and, on the Nth call of the kind REMODEL_ONLINE_FAULT
 * names, cuts the connection before sending it (the server never sees it),
 * cuts it after sending (the server applied it, the reply is lost: the
 * hardest case for exactly-once), answers it with a failure, or delays it.
 * REMODEL_ONLINE_FAULT=count injects nothing and says the calls at exit;
 * REMODEL_ONLINE_FAULT_LOG=FILE gets a line per call either way, so that a
 * test can enumerate every call of a command and replay a fault at each
 * (its number in "any", its command, its number in its kind, the
 * collection or database it names, where the command names one first, and
 * the server's port: with --to-uri, which of the two deployments it went
 * to, where a result and its source have one name).
 * With REMODEL_ONLINE_FAULT unset nothing is wrapped.
 *
 * The tests' other hooks are answered here too (online_hook_ms), from
 * REMODEL_ONLINE_LEASE_MS, REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS and
 * REMODEL_ONLINE_SLOW_CALL_MS.
 *
 * A thread whose calls come when a timer says (the lease's renewals)
 * names its own kind (online_fault_thread): its calls are counted as
 * "KIND.command", never in "any", since how many of them fall between
 * two calls of a command varies from run to run, and a numbering that
 * moved would replay a fault at another call each time. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "online.h"

/* libmongoc exports its own initiator (plain or TLS, by the URI) without
 * declaring it in a public header; user_data is the client. */
mongoc_stream_t *mongoc_client_default_stream_initiator (const mongoc_uri_t *uri,
                                                         const mongoc_host_list_t *host,
                                                         void *user_data, bson_error_t *error);

enum { OP_QUERY = 2004, OP_COMPRESSED = 2012, OP_MSG = 2013, OP_REPLY = 1 };
/* Not one of the driver's stream types (socket 1 to GridFS 7): nothing in
 * it looks under this stream by its type. */
#define FAULT_STREAM_TYPE 0x72

typedef enum { ACT_NONE, ACT_CUT, ACT_CUT_AFTER, ACT_FAIL, ACT_DELAY } fault_act_t;

typedef struct {
    char name[48];
    long calls;
} fault_kind_t;

static struct {
    pthread_mutex_t mu;
    bool wrap;           /* REMODEL_ONLINE_FAULT set */
    bool count_only;     /* =count: nothing injected, the calls said at exit */
    char kind[48];       /* the kind whose Nth call faults, or "any" */
    long nth;
    fault_act_t act;
    long arg;            /* delay=MS, fail=CODE */
    bool fired;
    long seq;            /* the calls counted in "any" */
    fault_kind_t kinds[64];
    size_t nkinds;
    FILE *log;
} F = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The kind this thread's calls are counted under ("": the command's own). */
static _Thread_local char thread_kind[16];

void
online_fault_thread (const char *kind)
{
    bson_strncpy (thread_kind, kind, sizeof thread_kind);
}

/* The driver's own calls on a new connection (the handshake, the
 * authentication) and at its end: counted under their names, never in
 * "any", so that a command's numbering does not move with the number of
 * connections the driver opened. */
static bool
housekeeping (const char *name)
{
    static const char *const names[] = {"hello",     "isMaster",     "ismaster",
                                        "saslStart", "saslContinue", "endSessions"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp (name, names[i]))
            return true;
    return false;
}

static const char *const act_names[] = {"", "cut before sending", "cut after sending",
                                        "failed", "delayed"};

/* Notes a call of kind command (naming target, sent to port), and says
 * what to do with it. */
static fault_act_t
fault_note (const char *command, const char *target, unsigned port)
{
    fault_act_t act = ACT_NONE;
    fault_kind_t *k = NULL;
    char name[48];
    bool counted = !*thread_kind && !housekeeping (command);

    if (*thread_kind)
        bson_snprintf (name, sizeof name, "%s.%s", thread_kind, command);
    else
        bson_strncpy (name, command, sizeof name);

    pthread_mutex_lock (&F.mu);
    for (size_t i = 0; i < F.nkinds && !k; i++)
        if (!strcmp (F.kinds[i].name, name))
            k = &F.kinds[i];
    if (!k && F.nkinds < sizeof F.kinds / sizeof *F.kinds) {
        k = &F.kinds[F.nkinds++];
        bson_strncpy (k->name, name, sizeof k->name);
    }
    if (k)
        k->calls++;
    if (counted)
        F.seq++;
    if (!F.fired && !F.count_only &&
        ((!strcmp (F.kind, "any") && counted && F.seq == F.nth) ||
         (k && !strcmp (F.kind, name) && k->calls == F.nth))) {
        F.fired = true;
        act = F.act;
        fprintf (stderr, "remodel-online: fault layer: call %ld (%s #%ld) %s\n", F.seq, name,
                 k ? k->calls : 0, act_names[act]);
    }
    if (F.log) {
        if (counted)
            fprintf (F.log, "%ld %s %ld %s %u\n", F.seq, name, k ? k->calls : 0, target, port);
        else
            fprintf (F.log, "- %s %ld %s %u\n", name, k ? k->calls : 0, target, port);
        fflush (F.log);
    }
    pthread_mutex_unlock (&F.mu);
    return act;
}

static void
fault_say_counts (void)
{
    pthread_mutex_lock (&F.mu);
    fprintf (stderr, "remodel-online: fault layer: %ld calls", F.seq);
    for (size_t i = 0; i < F.nkinds; i++)
        fprintf (stderr, "%s %s %ld", i ? "," : ":", F.kinds[i].name, F.kinds[i].calls);
    fprintf (stderr, "\n");
    pthread_mutex_unlock (&F.mu);
}

/* REMODEL_ONLINE_FAULT: "count", or KIND:N:ACTION with ACTION one of cut,
 * cut-after, fail[=CODE], delay=MS. */
static bool
fault_parse (const char *s, bson_error_t *err)
{
    const char *c1 = strchr (s, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL, *a;
    char *end;

    if (!strcmp (s, "count")) {
        F.count_only = true;
        return true;
    }
    if (!c1 || !c2 || c1 == s || (size_t) (c1 - s) >= sizeof F.kind)
        goto bad;
    memcpy (F.kind, s, (size_t) (c1 - s));
    F.kind[c1 - s] = '\0';
    F.nth = strtol (c1 + 1, &end, 10);
    if (end != c2 || F.nth < 1)
        goto bad;
    a = c2 + 1;
    if (!strcmp (a, "cut"))
        F.act = ACT_CUT;
    else if (!strcmp (a, "cut-after"))
        F.act = ACT_CUT_AFTER;
    else if (!strcmp (a, "fail"))
        F.act = ACT_FAIL, F.arg = 1; /* InternalError: not one that passes */
    else if (!strncmp (a, "fail=", 5) && (F.arg = strtol (a + 5, &end, 10)) > 0 && !*end)
        F.act = ACT_FAIL;
    else if (!strncmp (a, "delay=", 6) && (F.arg = strtol (a + 6, &end, 10)) >= 0 && !*end)
        F.act = ACT_DELAY;
    else
        goto bad;
    return true;
bad:
    rm_error_set (err, RM_ERR_USAGE, "REMODEL_ONLINE_FAULT: expected \"count\" or KIND:N:ACTION "
                  "(ACTION cut, cut-after, fail, fail=CODE or delay=MS), got \"%s\"", s);
    return false;
}

typedef struct {
    mongoc_stream_t vt; /* first: the driver sees a mongoc_stream_t */
    mongoc_stream_t *base;
    size_t left;        /* bytes of the message being sent still to come */
    bool swallow;       /* ... not to be sent (a failure answered here) */
    bool lose_reply;    /* cut after sending: the reply's read fails */
    bool dead;
    uint8_t reply[128]; /* a failure's reply, read from here */
    size_t reply_len, reply_at;
    unsigned port;      /* the server's, for the log */
} fault_stream_t;

/* n bytes at offset off of the message in iov into out: false past its end. */
static bool
iov_get (const mongoc_iovec_t *iov, size_t iovcnt, size_t off, void *out, size_t n)
{
    uint8_t *o = out;
    for (size_t i = 0; i < iovcnt && n; i++) {
        size_t len = iov[i].iov_len;
        if (off >= len) {
            off -= len;
            continue;
        }
        size_t take = len - off < n ? len - off : n;
        memcpy (o, (const uint8_t *) iov[i].iov_base + off, take);
        o += take, n -= take, off = 0;
    }
    return n == 0;
}

static int32_t
le32 (const uint8_t *b)
{
    return (int32_t) ((uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 |
                      (uint32_t) b[3] << 24);
}

/* The first key of the document at off into name, and its value into
 * target where it is a string ("-" else): false when there is none. */
static bool
first_key (const mongoc_iovec_t *iov, size_t iovcnt, size_t off, char *name, size_t cap,
           char *target, size_t tcap)
{
    size_t i = 0, t = 0;
    uint8_t type = 0;
    char ch = 1;
    iov_get (iov, iovcnt, off + 4, &type, 1);
    off += 5; /* its length, its first element's type */
    while (i + 1 < cap && iov_get (iov, iovcnt, off + i, &ch, 1) && ch)
        name[i++] = ch;
    name[i] = '\0';
    /* A string's value follows its key's end and its length. */
    if (type == BSON_TYPE_UTF8 && ch == '\0')
        for (off += i + 1 + 4; t + 1 < tcap && iov_get (iov, iovcnt, off + t, &ch, 1) && ch > ' ';)
            target[t++] = ch;
    target[t] = '\0';
    if (!t)
        bson_strncpy (target, "-", tcap);
    return i > 0 && ch == '\0';
}

/* The command a message carries (and what it names), its request id and opcode. */
static void
message_name (const mongoc_iovec_t *iov, size_t iovcnt, char *name, size_t cap, char *target,
              size_t tcap, int32_t *len, int32_t *request, int32_t *opcode)
{
    uint8_t h[16], b[4];
    size_t off = 20;
    char ch = 1;

    bson_strncpy (name, "?", cap);
    bson_strncpy (target, "-", tcap);
    *len = *request = *opcode = 0;
    if (!iov_get (iov, iovcnt, 0, h, 16))
        return;
    *len = le32 (h), *request = le32 (h + 4), *opcode = le32 (h + 12);
    if (*opcode == OP_MSG) {
        /* Sections after the flags: a body (kind 0) or a sequence (kind 1, sized). */
        uint8_t kind;
        while (iov_get (iov, iovcnt, off, &kind, 1) && kind == 1 &&
               iov_get (iov, iovcnt, off + 1, b, 4))
            off += 1 + (size_t) le32 (b);
        if (kind == 0)
            first_key (iov, iovcnt, off + 1, name, cap, target, tcap);
    } else if (*opcode == OP_QUERY) {
        /* The flags, the namespace (a C string), skip and return, the query. */
        while (iov_get (iov, iovcnt, off, &ch, 1) && ch)
            off++;
        off += 9;
        if (first_key (iov, iovcnt, off, name, cap, target, tcap) && !strcmp (name, "$query"))
            first_key (iov, iovcnt, off + 5 + strlen ("$query") + 1, name, cap, target, tcap);
    } else if (*opcode == OP_COMPRESSED) {
        bson_strncpy (name, "compressed", cap);
    }
}

/* A failure's reply to request: OP_MSG {ok: 0, errmsg, code}. */
static void
fault_reply (fault_stream_t *s, int32_t request, int32_t code)
{
    bson_t doc;
    bson_init (&doc);
    BSON_APPEND_DOUBLE (&doc, "ok", 0);
    BSON_APPEND_UTF8 (&doc, "errmsg", "remodel-online fault layer: injected failure");
    BSON_APPEND_INT32 (&doc, "code", code);
    uint32_t n = 16 + 4 + 1 + doc.len;
    int32_t h[5] = {(int32_t) n, 0x7f000001, request, OP_MSG, 0};
    BSON_ASSERT (n <= sizeof s->reply);
    for (int i = 0; i < 5; i++)
        h[i] = BSON_UINT32_TO_LE (h[i]);
    memcpy (s->reply, h, 20);
    s->reply[20] = 0;
    memcpy (s->reply + 21, bson_get_data (&doc), doc.len);
    s->reply_len = n, s->reply_at = 0;
    bson_destroy (&doc);
}

static void
fault_kill (fault_stream_t *s)
{
    if (!s->dead)
        mongoc_stream_close (s->base);
    s->dead = true;
}

static ssize_t
fault_writev (mongoc_stream_t *stream, mongoc_iovec_t *iov, size_t iovcnt, int32_t timeout_msec)
{
    fault_stream_t *s = (fault_stream_t *) stream;
    size_t total = 0;
    ssize_t ret;

    for (size_t i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (s->dead) {
        errno = ECONNRESET;
        return -1;
    }
    if (!s->left) { /* a message starts */
        char name[48], target[128];
        int32_t len, request, opcode;
        message_name (iov, iovcnt, name, sizeof name, target, sizeof target, &len, &request,
                      &opcode);
        s->left = len > 0 ? (size_t) len : total;
        s->swallow = false;
        switch (fault_note (name, target, s->port)) {
        case ACT_CUT:
            fault_kill (s);
            errno = ECONNRESET;
            return -1;
        case ACT_CUT_AFTER:
            s->lose_reply = true;
            break;
        case ACT_FAIL:
            if (opcode == OP_MSG) {
                fault_reply (s, request, (int32_t) F.arg);
                s->swallow = true;
            } else { /* no OP_REPLY made here: the handshake is cut instead */
                fault_kill (s);
                errno = ECONNRESET;
                return -1;
            }
            break;
        case ACT_DELAY: {
            struct timespec ts = {F.arg / 1000, (F.arg % 1000) * 1000000};
            while (nanosleep (&ts, &ts) && errno == EINTR)
                ;
            break;
        }
        case ACT_NONE:
            break;
        }
    }
    if (s->swallow)
        ret = (ssize_t) (total < s->left ? total : s->left);
    else
        ret = mongoc_stream_writev (s->base, iov, iovcnt, timeout_msec);
    if (ret > 0)
        s->left = (size_t) ret >= s->left ? 0 : s->left - (size_t) ret;
    return ret;
}

static ssize_t
fault_readv (mongoc_stream_t *stream, mongoc_iovec_t *iov, size_t iovcnt, size_t min_bytes,
             int32_t timeout_msec)
{
    fault_stream_t *s = (fault_stream_t *) stream;
    size_t got = 0;

    if (s->reply_at < s->reply_len) {
        for (size_t i = 0; i < iovcnt && s->reply_at < s->reply_len; i++) {
            size_t take = s->reply_len - s->reply_at;
            if (take > iov[i].iov_len)
                take = iov[i].iov_len;
            memcpy (iov[i].iov_base, s->reply + s->reply_at, take);
            s->reply_at += take, got += take;
        }
        return (ssize_t) got;
    }
    if (s->lose_reply && !s->left) {
        s->lose_reply = false;
        fault_kill (s);
    }
    if (s->dead) {
        errno = ECONNRESET;
        return -1;
    }
    return mongoc_stream_readv (s->base, iov, iovcnt, min_bytes, timeout_msec);
}

static void
fault_destroy (mongoc_stream_t *stream)
{
    fault_stream_t *s = (fault_stream_t *) stream;
    mongoc_stream_destroy (s->base);
    bson_free (s);
}

static void
fault_failed (mongoc_stream_t *stream)
{
    fault_stream_t *s = (fault_stream_t *) stream;
    mongoc_stream_failed (s->base);
    bson_free (s);
}

static int
fault_close (mongoc_stream_t *stream)
{
    fault_stream_t *s = (fault_stream_t *) stream;
    s->dead = true;
    return mongoc_stream_close (s->base);
}

static int
fault_flush (mongoc_stream_t *stream)
{
    return mongoc_stream_flush (((fault_stream_t *) stream)->base);
}

static int
fault_setsockopt (mongoc_stream_t *stream, int level, int optname, void *optval,
                  mongoc_socklen_t optlen)
{
    return mongoc_stream_setsockopt (((fault_stream_t *) stream)->base, level, optname, optval,
                                     optlen);
}

static mongoc_stream_t *
fault_base (mongoc_stream_t *stream)
{
    return ((fault_stream_t *) stream)->base;
}

static bool
fault_check_closed (mongoc_stream_t *stream)
{
    fault_stream_t *s = (fault_stream_t *) stream;
    return s->dead || mongoc_stream_check_closed (s->base);
}

static bool
fault_timed_out (mongoc_stream_t *stream)
{
    return mongoc_stream_timed_out (((fault_stream_t *) stream)->base);
}

static bool
fault_should_retry (mongoc_stream_t *stream)
{
    return mongoc_stream_should_retry (((fault_stream_t *) stream)->base);
}

/* The driver polls its streams together (a new connection's handshake):
 * the wrapped ones' bases are polled in their place. */
static ssize_t
fault_poll (mongoc_stream_poll_t *streams, size_t n, int32_t timeout)
{
    mongoc_stream_poll_t *base = bson_malloc (n * sizeof *base);
    ssize_t ret;
    for (size_t i = 0; i < n; i++) {
        base[i] = streams[i];
        if (streams[i].stream->type == FAULT_STREAM_TYPE)
            base[i].stream = ((fault_stream_t *) streams[i].stream)->base;
    }
    ret = mongoc_stream_poll (base, n, timeout);
    for (size_t i = 0; i < n; i++)
        streams[i].revents = base[i].revents;
    bson_free (base);
    return ret;
}

static mongoc_stream_t *
fault_initiator (const mongoc_uri_t *uri, const mongoc_host_list_t *host, void *client,
                 bson_error_t *error)
{
    mongoc_stream_t *base = mongoc_client_default_stream_initiator (uri, host, client, error);
    fault_stream_t *s;
    if (!base)
        return NULL;
    s = bson_malloc0 (sizeof *s);
    s->base = base;
    s->port = host->port;
    s->vt.type = FAULT_STREAM_TYPE;
    s->vt.destroy = fault_destroy;
    s->vt.failed = fault_failed;
    s->vt.close = fault_close;
    s->vt.flush = fault_flush;
    s->vt.writev = fault_writev;
    s->vt.readv = fault_readv;
    s->vt.setsockopt = fault_setsockopt;
    s->vt.get_base_stream = fault_base;
    s->vt.check_closed = fault_check_closed;
    s->vt.timed_out = fault_timed_out;
    s->vt.should_retry = fault_should_retry;
    s->vt.poll = fault_poll;
    return &s->vt;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bson_error_t parse_err;
static bool parse_ok = true;

static void
fault_read_env (void)
{
    const char *spec = getenv ("REMODEL_ONLINE_FAULT");
    const char *log = getenv ("REMODEL_ONLINE_FAULT_LOG");
    if (!spec || !*spec)
        return;
    parse_ok = fault_parse (spec, &parse_err);
    if (!parse_ok)
        return;
    F.wrap = true;
    if (log && *log && !(F.log = fopen (log, "a")))
        fprintf (stderr, "remodel-online: fault layer: cannot open %s: %s\n", log,
                 strerror (errno));
    if (F.count_only)
        atexit (fault_say_counts);
}

bool
online_fault_install (mongoc_client_t *client, bson_error_t *err)
{
    pthread_once (&once, fault_read_env);
    if (!parse_ok) {
        *err = parse_err;
        return false;
    }
    if (F.wrap)
        mongoc_client_set_stream_initiator (client, fault_initiator, client);
    return true;
}

int64_t
online_hook_ms (online_hook_t hook)
{
    static const char *const names[] = {
        [ONLINE_HOOK_LEASE_MS] = "REMODEL_ONLINE_LEASE_MS",
        [ONLINE_HOOK_PAUSE_BEFORE_SWITCH_MS] = "REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS",
        [ONLINE_HOOK_SLOW_CALL_MS] = "REMODEL_ONLINE_SLOW_CALL_MS",
        [ONLINE_HOOK_EXIT_WAIT_MS] = "REMODEL_ONLINE_EXIT_WAIT_MS",
    };
    const char *v = (size_t) hook < sizeof names / sizeof *names ? getenv (names[hook]) : NULL;
    return v && *v ? strtoll (v, NULL, 10) : 0;
}
