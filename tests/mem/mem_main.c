/* remodel-memsrv: listens on 127.0.0.1 (a given port, or one the kernel
 * picks), says "Listening on TCP 127.0.0.1:PORT" on stdout (as the test
 * servers do, for tests/peers/server.sh) and writes the port to
 * --port-file; a thread per connection.
 *
 *   remodel-memsrv [--port N] [--port-file F] [--repl-set NAME]
 *                  [--oplog] [--oplog-bytes N]
 *                  [--fail CMD:CODE[:TIMES]] [--delay CMD:MS]
 *   remodel-memsrv --send PORT JSON     one command, as a client */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mem.h"
#include "mem_wire.h"

static int port;

static void *
serve (void *arg)
{
    int fd = (int) (intptr_t) arg;
    rm_buf_t msg;
    rm_buf_init (&msg);
    while (mem_wire_read (fd, &msg) && mem_wire_answer (fd, &msg, port))
        ;
    rm_buf_destroy (&msg);
    close (fd);
    return NULL;
}

static void
usage (void)
{
    fprintf (stderr, "usage: remodel-memsrv [--port N] [--port-file F] [--repl-set NAME] [--oplog] "
                     "[--oplog-bytes N] [--fail CMD:CODE[:TIMES]] [--delay CMD:MS]\n");
    exit (2);
}

/* "CMD:NUMBER[:NUMBER]" into name, *a, *b. */
static void
pair (const char *s, char *name, size_t cap, int *a, int *b)
{
    const char *c = strchr (s, ':');
    if (!c)
        usage ();
    snprintf (name, cap, "%.*s", (int) (c - s), s);
    *a = atoi (c + 1);
    if (b)
        *b = strchr (c + 1, ':') ? atoi (strchr (c + 1, ':') + 1) : -1;
}

int
main (int argc, char **argv)
{
    const char *port_file = NULL;
    bool oplog = false;
    int64_t oplog_bytes = 64 << 20;
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof a;
    int ls, one = 1;
    mem_settings_t *st = mem_settings ();

    if (argc == 4 && !strcmp (argv[1], "--send"))
        return mem_client_send (atoi (argv[2]), argv[3]);
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp (argv[i], "--oplog")) {
            oplog = true;
            continue;
        }
        if (!v)
            usage ();
        if (!strcmp (argv[i], "--port"))
            port = atoi (v);
        else if (!strcmp (argv[i], "--port-file"))
            port_file = v;
        else if (!strcmp (argv[i], "--repl-set"))
            bson_strncpy (st->repl_set, v, sizeof st->repl_set);
        else if (!strcmp (argv[i], "--oplog-bytes"))
            oplog_bytes = atoll (v);
        else if (!strcmp (argv[i], "--fail"))
            pair (v, st->fail_cmd, sizeof st->fail_cmd, &st->fail_code, &st->fail_times);
        else if (!strcmp (argv[i], "--delay"))
            pair (v, st->delay_cmd, sizeof st->delay_cmd, &st->delay_ms, NULL);
        else
            usage ();
        i++;
    }
    signal (SIGPIPE, SIG_IGN);
    mem_oplog_configure (oplog, oplog_bytes);

    ls = socket (AF_INET, SOCK_STREAM, 0);
    setsockopt (ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    a.sin_port = htons ((uint16_t) port);
    if (ls < 0 || bind (ls, (struct sockaddr *) &a, sizeof a) || listen (ls, 64) ||
        getsockname (ls, (struct sockaddr *) &a, &al)) {
        perror ("remodel-memsrv: listen");
        return 1;
    }
    port = ntohs (a.sin_port);
    if (port_file) {
        FILE *f = fopen (port_file, "w");
        if (!f || fprintf (f, "%d\n", port) < 0 || fclose (f)) {
            perror (port_file);
            return 1;
        }
    }
    printf ("remodel-memsrv: Listening on TCP 127.0.0.1:%d\n", port);
    fflush (stdout);
    for (;;) {
        pthread_t t;
        int fd = accept (ls, NULL, NULL);
        if (fd < 0)
            continue;
        setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (pthread_create (&t, NULL, serve, (void *) (intptr_t) fd)) {
            close (fd);
            continue;
        }
        pthread_detach (t);
    }
}
