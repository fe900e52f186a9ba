/* One writer thread shared by every outstream on a regular file.
 *
 * Each sink owns the one buffer it fills; a full buffer joins a FIFO queue
 * and the sink takes a free one in exchange. Buffers in existence are capped
 * at one per sink plus SPARE, so memory is what the outstreams used before
 * (one buffer each) plus a few MiB in flight, however many files a directory
 * dump has open at once. The thread starts with the first full buffer and is
 * joined when the last sink goes away: no thread outlives the streams, and
 * small files (metadata, the tests' tiny dumps) never start one.
 *
 * The thread blocks every signal, so SIGINT still interrupts the main
 * thread's reads as before. Only regular files come here: a write to a pipe
 * may block for good, and the main thread must stay interruptible.
 *
 * A failed write is kept in its sink (the errno) and reported by the sink's
 * next call; the sink's later buffers are dropped, not written.
 *
 * Every WRITEBACK bytes a sink has written, the thread asks the kernel to
 * start writing them to the disk (sync_file_range, without waiting): the
 * writers fsync their files at the end, and without this the whole file
 * waited in the page cache for that fsync, the disk idle meanwhile (convert
 * of a 161 MB archive: fsync 0.07 s of 0.2 s). Only a hint: the fsync
 * still makes the file durable, and an error here is left to it.
 *
 * A buffer may also point at bytes held elsewhere (rm_wsink_hold: a
 * mapped input's documents, which stay in place until the streams are
 * destroyed): it is then written with writev as pieces, its own bytes
 * between them, and the held bytes are never copied in user space. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "thread.h"
#include "write_thread.h"

/* Buffers in flight beyond the one each sink fills: a stream that produces
 * faster than the disk takes runs this far ahead, then waits. */
#define SPARE 3
/* Bytes written between two requests to start writeback. */
#define WRITEBACK (8u << 20)
/* Pieces in one buffer: held runs and the own bytes between them. */
#define MAX_IOV 64

typedef struct wbuf {
    struct wbuf *next;
    rm_wsink_t *sink;
    size_t len;   /* of data; with pieces, of all of them */
    int n_iov;    /* 0: data[0..len) is the buffer; else the pieces */
    size_t mark;  /* data before this is in the pieces already */
    struct iovec iov[MAX_IOV];
    uint8_t data[];
} wbuf_t;

struct rm_wsink {
    int fd;
    char *name;
    wbuf_t *cur;
    size_t in_flight; /* buffers queued or being written */
    size_t unsynced;  /* by the thread: bytes written since writeback was asked */
    off_t synced_to;  /* the end of the range it was asked for */
    atomic_int error; /* errno of the first failed write; 0: none */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a buffer was queued, or stop was set */
    pthread_cond_t done; /* a buffer was written (or dropped) */
    wbuf_t *head, *tail; /* the queue */
    wbuf_t *free_list;
    size_t n_bufs;       /* buffers in existence */
    size_t n_sinks;
    bool running, stop;
    pthread_t thread;
} wt = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* 0 or the errno of the failure. Signals are blocked in the thread, so
 * EINTR only comes from elsewhere and is simply retried. */
static int
write_bytes (int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write (fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        n -= (size_t) w;
    }
    return 0;
}

/* Writes a buffer, its pieces if it has any; 0 or the errno. */
static int
write_buf (int fd, wbuf_t *b)
{
    struct iovec *v = b->iov;
    int n = b->n_iov;

    if (n == 0)
        return write_bytes (fd, b->data, b->len);
    while (n > 0) {
        ssize_t w = writev (fd, v, n); /* n <= MAX_IOV, under any IOV_MAX */
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        while (n > 0 && (size_t) w >= v->iov_len) {
            w -= (ssize_t) v->iov_len;
            v++;
            n--;
        }
        if (n > 0) {
            v->iov_base = (uint8_t *) v->iov_base + w;
            v->iov_len -= (size_t) w;
        }
    }
    return 0;
}

static void
put_free (wbuf_t *b)
{
    b->next = wt.free_list;
    wt.free_list = b;
}

/* A buffer for a sink, with wt.mu held: a free one, a new one while under
 * the cap, else the next one the thread finishes. */
static wbuf_t *
take_buf (void)
{
    for (;;) {
        wbuf_t *b = wt.free_list;
        if (b) {
            wt.free_list = b->next;
            b->n_iov = 0;
            b->mark = 0;
            return b;
        }
        if (wt.n_bufs < wt.n_sinks + SPARE) {
            wt.n_bufs++;
            b = bson_malloc (sizeof *b + RM_WSINK_BUF);
            b->n_iov = 0;
            b->mark = 0;
            return b;
        }
        pthread_cond_wait (&wt.done, &wt.mu);
    }
}

/* Frees free buffers beyond the cap (all of them once no sink is left). */
static void
trim_free (void)
{
    size_t keep = wt.n_sinks ? wt.n_sinks + SPARE : 0;
    while (wt.free_list && wt.n_bufs > keep) {
        wbuf_t *b = wt.free_list;
        wt.free_list = b->next;
        wt.n_bufs--;
        bson_free (b);
    }
}

/* Counts len more bytes written by the thread and, every WRITEBACK of
 * them, asks for the writeback of what lies between the last request and
 * the file's offset now (the thread alone writes while a buffer is in
 * flight, so the offset is where its write ended). */
static void
start_writeback (rm_wsink_t *k, size_t len)
{
    off_t end;
    k->unsynced += len;
    if (k->unsynced < WRITEBACK)
        return;
    k->unsynced = 0;
    end = lseek (k->fd, 0, SEEK_CUR);
    if (end > k->synced_to)
        sync_file_range (k->fd, k->synced_to, end - k->synced_to, SYNC_FILE_RANGE_WRITE);
    k->synced_to = end;
}

static void *
thread_main (void *arg)
{
    (void) arg;
    pthread_mutex_lock (&wt.mu);
    for (;;) {
        wbuf_t *b;
        int e = 0;
        while (!wt.head && !wt.stop)
            pthread_cond_wait (&wt.work, &wt.mu);
        if (!wt.head)
            break;
        b = wt.head;
        wt.head = b->next;
        if (!wt.head)
            wt.tail = NULL;
        /* The sink cannot go away meanwhile: destroy waits for in_flight. */
        if (atomic_load (&b->sink->error) == 0) {
            pthread_mutex_unlock (&wt.mu);
            e = write_buf (b->sink->fd, b);
            if (e == 0)
                start_writeback (b->sink, b->len);
            pthread_mutex_lock (&wt.mu);
        }
        if (e)
            atomic_store (&b->sink->error, e);
        b->sink->in_flight--;
        put_free (b);
        pthread_cond_broadcast (&wt.done);
    }
    pthread_mutex_unlock (&wt.mu);
    return NULL;
}

/* With wt.mu held. */
static bool
start_thread (void)
{
    wt.running = rm_thread_start (&wt.thread, thread_main, NULL) == 0;
    return wt.running;
}

static bool
report (rm_wsink_t *k, int e, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_IO, "%s: write failed: %s", k->name, strerror (e));
    return false;
}

rm_wsink_t *
rm_wsink_new (int fd, const char *name)
{
    rm_wsink_t *k = bson_malloc0 (sizeof *k);
    k->fd = fd;
    k->name = bson_strdup (name);
    atomic_init (&k->error, 0);
    pthread_mutex_lock (&wt.mu);
    wt.n_sinks++;
    k->cur = take_buf (); /* the cap just grew by one: this never waits */
    pthread_mutex_unlock (&wt.mu);
    return k;
}

uint8_t *
rm_wsink_buf (rm_wsink_t *k)
{
    return k->cur->data;
}

const atomic_int *
rm_wsink_status (const rm_wsink_t *k)
{
    return &k->error;
}

/* Adds a piece to the current buffer, joined to the last one when it
 * follows it in memory. */
static void
add_piece (wbuf_t *b, const uint8_t *p, size_t n)
{
    struct iovec *last = b->n_iov ? &b->iov[b->n_iov - 1] : NULL;
    if (n == 0)
        return;
    if (last && (const uint8_t *) last->iov_base + last->iov_len == p) {
        last->iov_len += n;
    } else {
        b->iov[b->n_iov].iov_base = (void *) p;
        b->iov[b->n_iov].iov_len = n;
        b->n_iov++;
    }
    b->len += n;
}

/* Ends the current buffer's pieces with its own bytes up to len. */
static void
close_pieces (wbuf_t *b, size_t len)
{
    if (b->n_iov == 0) {
        b->len = len;
        return;
    }
    add_piece (b, b->data + b->mark, len - b->mark);
    b->mark = len;
}

bool
rm_wsink_submit (rm_wsink_t *k, size_t len, bson_error_t *err)
{
    int e = atomic_load (&k->error);
    if (e)
        return report (k, e, err);
    close_pieces (k->cur, len);
    if (k->cur->len == 0)
        return true;
    pthread_mutex_lock (&wt.mu);
    if (!wt.running && !start_thread ()) {
        /* No thread to be had: write here, as without one. */
        pthread_mutex_unlock (&wt.mu);
        e = write_buf (k->fd, k->cur);
        k->cur->n_iov = 0;
        k->cur->mark = 0;
        k->cur->len = 0;
        return e ? report (k, e, err) : true;
    }
    k->cur->sink = k;
    k->cur->next = NULL;
    if (wt.tail)
        wt.tail->next = k->cur;
    else
        wt.head = k->cur;
    wt.tail = k->cur;
    k->in_flight++;
    pthread_cond_signal (&wt.work);
    k->cur = take_buf ();
    pthread_mutex_unlock (&wt.mu);
    return true;
}

int
rm_wsink_hold (rm_wsink_t *k, size_t len, const uint8_t *p, size_t n, bson_error_t *err)
{
    wbuf_t *b = k->cur;
    if (b->n_iov == 0)
        b->len = 0; /* counts the pieces from now on */
    add_piece (b, b->data + b->mark, len - b->mark);
    b->mark = len;
    add_piece (b, p, n);
    /* Room left for the own bytes after this piece and one more pair. */
    if (b->n_iov < MAX_IOV - 3 && b->len < RM_WSINK_BUF)
        return 0;
    return rm_wsink_submit (k, len, err) ? 1 : -1;
}

bool
rm_wsink_held (const rm_wsink_t *k)
{
    return k->cur->n_iov > 0;
}

bool
rm_wsink_drain (rm_wsink_t *k, bson_error_t *err)
{
    int e;
    pthread_mutex_lock (&wt.mu);
    while (k->in_flight > 0)
        pthread_cond_wait (&wt.done, &wt.mu);
    pthread_mutex_unlock (&wt.mu);
    e = atomic_load (&k->error);
    return e ? report (k, e, err) : true;
}

/* Takes the sink's buffers the thread has not started out of the queue. */
static void
drop_queued (rm_wsink_t *k)
{
    wbuf_t **pp = &wt.head;
    wt.tail = NULL;
    while (*pp) {
        wbuf_t *b = *pp;
        if (b->sink == k) {
            *pp = b->next;
            k->in_flight--;
            put_free (b);
        } else {
            wt.tail = b;
            pp = &b->next;
        }
    }
}

/* With wt.mu held and no sink left: stops the thread and waits for it.
 * A sink made meanwhile may have queued buffers: the thread runs again. */
static void
stop_thread (void)
{
    pthread_t t = wt.thread;
    wt.stop = true;
    pthread_cond_signal (&wt.work);
    pthread_mutex_unlock (&wt.mu);
    pthread_join (t, NULL);
    pthread_mutex_lock (&wt.mu);
    wt.running = false;
    wt.stop = false;
    if (wt.head)
        start_thread ();
}

void
rm_wsink_destroy (rm_wsink_t *k)
{
    if (!k)
        return;
    pthread_mutex_lock (&wt.mu);
    drop_queued (k);
    while (k->in_flight > 0)
        pthread_cond_wait (&wt.done, &wt.mu);
    put_free (k->cur);
    pthread_cond_broadcast (&wt.done); /* other sinks may wait for a buffer */
    wt.n_sinks--;
    if (wt.n_sinks == 0 && wt.running)
        stop_thread ();
    trim_free ();
    pthread_mutex_unlock (&wt.mu);
    bson_free (k->name);
    bson_free (k);
}
