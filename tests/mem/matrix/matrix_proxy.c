/* A partition between the online program and the in-memory server
 * (matrix.h): a forwarding proxy in a forked process, the program given
 * its address. Armed, it lets `skip` messages through, then cuts the
 * connection at each of the next `cut` messages (the server never sees
 * them; a reconnect's handshake is one), then lets everything through
 * again: the server unreachable for a stretch, then back. With
 * lose_first, the stretch's first message is sent and applied, its reply
 * lost (the partition came while the server answered). What it counts
 * are whole wire messages, client to server. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "matrix.h"

enum { PAIRS = 64 };

typedef struct {
    int c, s;        /* client's and server's sockets; -1 when free */
    uint8_t *buf;    /* a client message being gathered */
    size_t len, cap;
    bool drop_reply; /* the stretch's first, sent: its reply never forwarded */
} pair_t;

static void
pair_close (pair_t *p)
{
    if (p->c >= 0)
        close (p->c);
    if (p->s >= 0)
        close (p->s);
    free (p->buf);
    memset (p, 0, sizeof *p);
    p->c = p->s = -1;
}

static bool
send_all (int fd, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = write (fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        b += w, n -= (size_t) w;
    }
    return true;
}

static int
dial (int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect (fd, (struct sockaddr *) &a, sizeof a)) {
        close (fd);
        fd = -1;
    }
    return fd;
}

/* The client's whole messages in p's buffer, each let through or cut. */
static bool
client_messages (pair_t *p, mx_cut_t *ctl)
{
    while (p->len >= 4) {
        uint32_t n = (uint32_t) p->buf[0] | (uint32_t) p->buf[1] << 8 |
                     (uint32_t) p->buf[2] << 16 | (uint32_t) p->buf[3] << 24;
        if (n < 16 || p->len < n)
            return n >= 16;
        if (ctl->note_renames && ctl->n_renames < MX_RENAMES &&
            memmem (p->buf, n, "renameCollection", 16))
            ctl->renames[ctl->n_renames++] = ctl->seen;
        ctl->seen++;
        if (ctl->skip > 0) {
            ctl->skip--;
        } else if (ctl->cut > 0) {
            ctl->cut--;
            if (!ctl->lose_first)
                return false;
            ctl->lose_first = 0;
            p->drop_reply = true;
        }
        if (!send_all (p->s, p->buf, n))
            return false;
        memmove (p->buf, p->buf + n, p->len - n);
        p->len -= n;
    }
    return true;
}

static bool
from_client (pair_t *p, mx_cut_t *ctl)
{
    if (p->cap - p->len < 65536) {
        p->cap = p->cap * 2 + 65536;
        p->buf = realloc (p->buf, p->cap);
    }
    ssize_t n = read (p->c, p->buf + p->len, p->cap - p->len);
    if (n <= 0)
        return false;
    p->len += (size_t) n;
    return client_messages (p, ctl);
}

static bool
from_server (pair_t *p)
{
    uint8_t b[65536];
    ssize_t n = read (p->s, b, sizeof b);
    return n > 0 && !p->drop_reply && send_all (p->c, b, (size_t) n);
}

static void
serve (int lfd, int upstream, mx_cut_t *ctl)
{
    pair_t pairs[PAIRS];
    struct pollfd fds[1 + 2 * PAIRS];
    for (int i = 0; i < PAIRS; i++)
        memset (&pairs[i], 0, sizeof pairs[i]), pairs[i].c = pairs[i].s = -1;
    for (;;) {
        int nf = 0;
        fds[nf++] = (struct pollfd) {lfd, POLLIN, 0};
        for (int i = 0; i < PAIRS; i++) {
            fds[nf++] = (struct pollfd) {pairs[i].c, POLLIN, 0};
            fds[nf++] = (struct pollfd) {pairs[i].s, POLLIN, 0};
        }
        if (poll (fds, (nfds_t) nf, -1) < 0 && errno != EINTR)
            _exit (1);
        if (fds[0].revents & POLLIN) {
            int c = accept (lfd, NULL, NULL), i = 0;
            while (i < PAIRS && pairs[i].c >= 0)
                i++;
            if (c >= 0 && i < PAIRS && (pairs[i].s = dial (upstream)) >= 0)
                pairs[i].c = c;
            else if (c >= 0)
                close (c);
        }
        for (int i = 0; i < PAIRS; i++) {
            pair_t *p = &pairs[i];
            bool ok = true;
            if (p->c >= 0 && fds[1 + 2 * i].revents)
                ok = from_client (p, ctl);
            if (ok && p->s >= 0 && fds[2 + 2 * i].revents)
                ok = from_server (p);
            if (!ok)
                pair_close (p);
        }
    }
}

bool
mx_proxy_start (mx_proxy_t *x, const char *upstream_uri, char *why, size_t cap)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    const char *colon = strrchr (upstream_uri, ':');
    int upstream = colon ? atoi (colon + 1) : 0, lfd = socket (AF_INET, SOCK_STREAM, 0);

    memset (x, 0, sizeof *x);
    x->ctl = mmap (NULL, sizeof *x->ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (x->ctl == MAP_FAILED || lfd < 0 || bind (lfd, (struct sockaddr *) &a, sizeof a) ||
        listen (lfd, 64) || getsockname (lfd, (struct sockaddr *) &a, &alen) || upstream <= 0) {
        snprintf (why, cap, "the partition's proxy: %s", strerror (errno));
        return false;
    }
    memset (x->ctl, 0, sizeof *x->ctl);
    if ((x->pid = mx_fork ()) == 0) {
        signal (SIGPIPE, SIG_IGN);
        serve (lfd, upstream, x->ctl);
    }
    close (lfd);
    snprintf (x->uri, sizeof x->uri, "mongodb://127.0.0.1:%d/?directConnection=true",
              ntohs (a.sin_port));
    return x->pid > 0;
}

void
mx_proxy_stop (mx_proxy_t *x)
{
    if (x->pid > 0) {
        kill (x->pid, SIGKILL);
        waitpid (x->pid, NULL, 0);
    }
    if (x->ctl && x->ctl != MAP_FAILED)
        munmap (x->ctl, sizeof *x->ctl);
    memset (x, 0, sizeof *x);
}
