/* The in-memory server for the matrix (matrix.h): one child process,
 * started once, reset between points by its memSnapshot/memRestore; the
 * crm data filled; the offline engine's reference over the same data. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "matrix.h"

bool
mx_server_start (mx_server_t *s, const char *memsrv, const char *dir, bool changelog, char *why,
                 size_t cap)
{
    char port_file[600], buf[32] = "";
    struct timespec tick = {0, 10000000};
    int port = 0;

    memset (s, 0, sizeof *s);
    snprintf (port_file, sizeof port_file, "%s/memsrv.port", dir);
    unlink (port_file);
    if ((s->pid = mx_fork ()) < 0) {
        snprintf (why, cap, "fork: %s", strerror (errno));
        return false;
    }
    if (s->pid == 0) {
        int null = open ("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2 (null, 1);
        if (changelog)
            execl (memsrv, memsrv, "--port-file", port_file, "--repl-set", "rs0", "--oplog",
                   (char *) NULL);
        else
            execl (memsrv, memsrv, "--port-file", port_file, (char *) NULL);
        fprintf (stderr, "%s: %s\n", memsrv, strerror (errno));
        _exit (127);
    }
    /* Its port, once written whole (a line): for up to 120 s. */
    for (int i = 0; i < 12000 && !strchr (buf, '\n'); i++) {
        FILE *f = fopen (port_file, "r");
        int status;
        if (f) {
            size_t n = fread (buf, 1, sizeof buf - 1, f);
            buf[n] = '\0';
            fclose (f);
        }
        if (!strchr (buf, '\n')) {
            if (waitpid (s->pid, &status, WNOHANG) == s->pid) {
                snprintf (why, cap, "%s exited (status %d) before listening", memsrv, status);
                s->pid = 0;
                return false;
            }
            nanosleep (&tick, NULL);
        }
    }
    port = atoi (buf);
    if (port <= 0) {
        snprintf (why, cap, "%s wrote no port to %s in 120 s", memsrv, port_file);
        mx_server_stop (s);
        return false;
    }
    snprintf (s->uri, sizeof s->uri, "mongodb://127.0.0.1:%d/?directConnection=true", port);
    if (!(s->client = mongoc_client_new (s->uri))) {
        snprintf (why, cap, "mongoc_client_new (%s) failed", s->uri);
        mx_server_stop (s);
        return false;
    }
    return true;
}

void
mx_server_stop (mx_server_t *s)
{
    int status;
    if (s->client)
        mongoc_client_destroy (s->client);
    s->client = NULL;
    if (s->pid > 0) {
        kill (s->pid, SIGKILL);
        waitpid (s->pid, &status, 0);
    }
    s->pid = 0;
}

bool
mx_server_cmd (mx_server_t *s, const char *cmd, const char *name, char *why, size_t cap)
{
    bson_t c = BSON_INITIALIZER, reply;
    bson_error_t err;
    bool ok;
    BSON_APPEND_UTF8 (&c, cmd, name);
    ok = mongoc_client_command_simple (s->client, "admin", &c, NULL, &reply, &err);
    if (!ok)
        snprintf (why, cap, "%s %s: %s", cmd, name, err.message);
    bson_destroy (&c);
    bson_destroy (&reply);
    return ok;
}

/* 2026-01-01T00:00:00Z, in milliseconds since the epoch. */
#define JAN_1_2026 1767225600000LL

/* The test's data (as the shell suite's fill): person i of 1..8; task t of
 * 0..23, owned by 1 + t % 9 (owner 9 missing: an orphan). */
static void
person (bson_t *d, int i)
{
    char name[16], phone[16];
    snprintf (name, sizeof name, "p%d", i);
    snprintf (phone, sizeof phone, "555-%04d", i);
    bson_init (d);
    BSON_APPEND_INT32 (d, "_id", i);
    BSON_APPEND_UTF8 (d, "name", name);
    BSON_APPEND_UTF8 (d, "phone", phone);
}

static void
task (bson_t *d, int t)
{
    char title[16];
    snprintf (title, sizeof title, "t%d", t);
    bson_init (d);
    BSON_APPEND_INT32 (d, "_id", 100 + t);
    BSON_APPEND_INT32 (d, "owner", 1 + t % 9);
    BSON_APPEND_UTF8 (d, "title", title);
    BSON_APPEND_DATE_TIME (d, "due_date", JAN_1_2026 + (int64_t) ((t * 7) % 28) * 86400000LL);
    BSON_APPEND_BOOL (d, "done", t % 2 == 0);
}

typedef void (*make_doc_t) (bson_t *, int);
static const struct {
    const char *name;
    make_doc_t make;
    int from, to;
} data[] = {{"people", person, 1, 8}, {"tasks", task, 0, 23}};

bool
mx_fill (mx_server_t *s, char *why, size_t cap)
{
    bson_error_t err;
    bool ok = true;
    const char *dbs[] = {"crm", "remodel"};

    for (size_t i = 0; i < 2 && ok; i++) {
        mongoc_database_t *db = mongoc_client_get_database (s->client, dbs[i]);
        ok = mongoc_database_drop (db, &err) || err.code == 26;
        mongoc_database_destroy (db);
    }
    for (size_t i = 0; i < 2 && ok; i++) {
        mongoc_collection_t *c = mongoc_client_get_collection (s->client, "crm", data[i].name);
        for (int k = data[i].from; k <= data[i].to && ok; k++) {
            bson_t d;
            data[i].make (&d, k);
            ok = mongoc_collection_insert_one (c, &d, NULL, NULL, &err);
            bson_destroy (&d);
        }
        mongoc_collection_destroy (c);
    }
    if (!ok)
        snprintf (why, cap, "filling crm: %s", err.message);
    return ok;
}

static bool
write_file (const char *path, const void *bytes, size_t len)
{
    FILE *f = fopen (path, "wb");
    bool ok = f && fwrite (bytes, 1, len, f) == len;
    return f ? fclose (f) == 0 && ok : false;
}

/* The filled documents as mongodump writes them: DIR/crm/NAME.bson and its
 * metadata (the _id index). */
static bool
write_dump (const char *dir, char *why, size_t cap)
{
    char path[700];
    snprintf (path, sizeof path, "%s/orig", dir);
    mkdir (path, 0755);
    snprintf (path, sizeof path, "%s/orig/crm", dir);
    mkdir (path, 0755);
    for (size_t i = 0; i < 2; i++) {
        char meta[300];
        FILE *f;
        snprintf (path, sizeof path, "%s/orig/crm/%s.bson", dir, data[i].name);
        if (!(f = fopen (path, "wb"))) {
            snprintf (why, cap, "%s: %s", path, strerror (errno));
            return false;
        }
        for (int k = data[i].from; k <= data[i].to; k++) {
            bson_t d;
            data[i].make (&d, k);
            fwrite (bson_get_data (&d), 1, d.len, f);
            bson_destroy (&d);
        }
        fclose (f);
        snprintf (meta, sizeof meta,
                  "{\"indexes\":[{\"v\":{\"$numberInt\":\"2\"},\"key\":{\"_id\":{\"$numberInt\":"
                  "\"1\"}},\"name\":\"_id_\"}],\"collectionName\":\"%s\"}",
                  data[i].name);
        snprintf (path, sizeof path, "%s/orig/crm/%s.metadata.json", dir, data[i].name);
        if (!write_file (path, meta, strlen (meta))) {
            snprintf (why, cap, "%s: %s", path, strerror (errno));
            return false;
        }
    }
    return true;
}

bool
mx_run_offline (const char *remodel, const char *plan, const char *from, const char *to,
                char *why, size_t cap)
{
    int status;
    pid_t pid;
    fflush (stdout);
    if ((pid = mx_fork ()) == 0) {
        int null = open ("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2 (null, 1);
        execl (remodel, remodel, "run", "-q", "--force", plan, "--from", from, "--to", to,
               (char *) NULL);
        _exit (127);
    }
    if (pid < 0 || waitpid (pid, &status, 0) != pid || !WIFEXITED (status) ||
        WEXITSTATUS (status)) {
        snprintf (why, cap, "%s run %s --from %s --to %s failed", remodel, plan, from, to);
        return false;
    }
    return true;
}

bool
mx_offline (const char *remodel, const char *plan, const char *dir, char *why, size_t cap)
{
    char from[600], to[600];
    if (!write_dump (dir, why, cap))
        return false;
    snprintf (from, sizeof from, "%s/orig", dir);
    snprintf (to, sizeof to, "%s/off", dir);
    return mx_run_offline (remodel, plan, from, to, why, cap);
}
