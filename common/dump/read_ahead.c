/* Reading ahead: a thread per big input stream reads (and decompresses)
 * into a few chunks while the main thread parses the one before.
 *
 * The window moves into the chunks without a copy. Each chunk keeps HEAD
 * bytes of room in front of its data: when the window runs out, the bytes
 * left in it (the start of a document) are copied there, just before the
 * next chunk's data, and the window becomes that chunk. Only when the bytes
 * left exceed that room, or a document spans more than one chunk, is the
 * document gathered into the stream's own buffer (buf) as without a thread;
 * the rest of the chunk it ends in is "behind" and is taken up afterwards.
 *
 * The thread owns the source and codec from its start to its join. A read
 * or codec error ends its chunks: the main thread reports it when the bytes
 * before it are used up, as a stream without a thread would.
 *
 * On a stream of documents (rm_instream_expect_frames), when the thread
 * starts at a document boundary, it also checks each chunk's documents
 * (rm_bson_check) before handing the chunk over, walking the same lengths
 * the main thread's framing will walk from the same place: each chunk
 * carries how far the documents are known good, and rm_frame_next skips
 * the check below that. At the first document that fails (or a length the
 * main thread would refuse) the checking stops for good, so the main
 * thread checks that document itself and reports it as it always has.
 *
 * A plain (uncompressed) regular file is mapped instead of read: the
 * window is the mapping itself, the thread walks it ahead of the main
 * thread (populating its pages, then checking its documents as above) and
 * says how far it has got, and the main thread takes the bytes up to there
 * without a copy (the read's copy was 11% of convert's CPU). The thread
 * keeps at most LEAD bytes ahead, and the pages the main thread has left
 * behind are given back as it goes, so the resident memory stays what the
 * chunks took. A file cut short while it is read is seen when the thread
 * populates its next step (madvise fails with EFAULT past the end) and
 * reported as an error naming it, where touching the pages would raise
 * SIGBUS; only a cut between that call and the main thread's reads can
 * still raise it (the handler in rm_signals_install names the cause). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instream_impl.h"
#include "thread.h"
#include "remodel/bsoncheck.h"
#include "remodel/value.h"

#define CHUNK (1u << 20)
#define HEAD (64u << 10)
#define N_CHUNKS 4
/* A mapped file: the thread walks it a STEP at a time, at most LEAD
 * ahead of where the main thread last asked for bytes, and the main thread
 * takes at most a STEP past what it asks for: so it asks again (and lets
 * the thread on) while the thread still has LEAD - STEP to walk. (With the
 * step, the lead and the take all 1 MiB, the two threads took turns: the
 * thread waited for the main thread to ask, which it did only once it had
 * framed all it had, and the main thread then waited for the thread's
 * whole next step.) The pages are given back KEEP behind the window (past
 * what the write thread's queue can still point at:
 * rm_outstream_write_held), a DROP_STEP at a time. */
#define LEAD ((uint64_t) 1u << 20)
#define STEP ((uint64_t) 256u << 10)
#define KEEP ((uint64_t) 16u << 20)
#define DROP_STEP ((uint64_t) 2u << 20)

typedef struct chunk {
    struct chunk *next;
    size_t len;       /* bytes at mem + HEAD */
    uint64_t raw_pos; /* the source's position after them */
    bool last;        /* nothing follows: the end, or failed */
    bool failed;
    uint64_t checked_end; /* documents up to this stream offset are good */
    bson_error_t err;
    uint8_t mem[];    /* HEAD bytes of room, then CHUNK bytes */
} chunk_t;

struct rm_readahead {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond; /* a chunk got ready or free, or stop */
    chunk_t *all[N_CHUNKS];
    chunk_t *ready, *ready_tail;
    chunk_t *free_list;
    bool stop;
    char *name; /* the thread's copy, for its messages */

    /* The checker (thread side). */
    bool chk_on;         /* in step with the documents */
    uint64_t chk_base;   /* stream offset of the next chunk's first byte */
    uint64_t chk_end;    /* the documents before this offset are good */
    rm_buf_t chk_carry;  /* a document begun in an earlier chunk */
    rm_bson_like_t chk_like; /* the layout of the documents before */

    /* A mapped file (map != NULL): stream offset x is at zero + x. */
    uint8_t *map;
    size_t map_len;
    const uint8_t *zero;
    uint64_t m_end;      /* the stream offset where the mapping ends */
    uint64_t m_from;     /* where the thread starts: the window's end then */
    uint64_t m_raw;      /* the source's raw position at m_from */
    uint64_t m_ready;    /* (mu) the thread has walked the bytes before this */
    uint64_t m_checked;  /* (mu) its chk_end then */
    uint64_t m_main;     /* (mu) where the main thread stands */
    uint64_t m_want;     /* (mu) the end of the bytes it waits for */
    bool m_done;         /* (mu) the thread has walked to m_end */
    uint64_t m_dropped;  /* (thread) pages before this were given back */

    /* The main thread's side. */
    chunk_t *cur;      /* the chunk the window is in, or NULL (in buf) */
    chunk_t *behind;   /* a chunk partly gathered into buf */
    size_t behind_pos; /* where its untaken bytes start in mem */
    bool done;         /* the last chunk has been taken */
    bool failed;
    bson_error_t err;
    uint64_t raw_pos;  /* of the chunks taken */
};

/* Fills one chunk: as many bytes as fit, unless the stream ends first. */
static void
produce_chunk (rm_instream_t *s, chunk_t *c)
{
    size_t end = HEAD;
    bool eof = false;
    c->failed = false;
    while (end < HEAD + CHUNK && !eof) {
        size_t before = end;
        if (!rm_instream_produce (s, c->mem, &end, HEAD + CHUNK, &eof, &c->err)) {
            c->failed = true;
            end = before; /* what the failing call gave is not to be used */
            break;
        }
    }
    c->len = end - HEAD;
    c->raw_pos = s->raw_pos;
    c->last = eof || c->failed;
}

/* How many bytes the frame begun in carry takes in all: 4 while its
 * length is not known (or for a terminator), else the document's length;
 * 0 for a length the main thread refuses. */
static size_t
carry_need (const rm_buf_t *carry)
{
    uint32_t len;

    if (carry->len < 4)
        return 4;
    memcpy (&len, carry->data, 4);
    len = BSON_UINT32_FROM_LE (len);
    if (len == 0xFFFFFFFFu)
        return 4;
    if (len < 5 || len > RM_BSON_MAX_OPLOG_SIZE)
        return 0;
    return len;
}

/* One whole frame (a terminator or a document): false if it is not good. */
static bool
frame_good (rm_readahead_t *ra, const uint8_t *p, size_t len)
{
    rm_bson_fault_t fault;
    return len == 4 || rm_bson_check_like (&ra->chk_like, p, len, &fault);
}

/* Checks the frames in p[0..n), the stream's next bytes, continuing the
 * frame carried over from the bytes before; ra->chk_end moves past each
 * good one. */
static void
check_bytes (rm_readahead_t *ra, const uint8_t *p, size_t n)
{
    uint64_t base = ra->chk_base;
    size_t i = 0;

    ra->chk_base += n;
    while (ra->chk_on && ra->chk_carry.len > 0 && i < n) {
        size_t need = carry_need (&ra->chk_carry), take;
        if (need == 0) {
            ra->chk_on = false;
            break;
        }
        take = need - ra->chk_carry.len < n - i ? need - ra->chk_carry.len : n - i;
        rm_buf_append (&ra->chk_carry, p + i, take);
        i += take;
        if (ra->chk_carry.len < need || carry_need (&ra->chk_carry) != need)
            continue; /* more to come, or only the length is known now */
        if (!frame_good (ra, ra->chk_carry.data, need)) {
            ra->chk_on = false;
            break;
        }
        ra->chk_end = base + i;
        rm_buf_reset (&ra->chk_carry);
    }
    while (ra->chk_on && i < n) {
        uint32_t len;
        if (n - i < 4) {
            rm_buf_append (&ra->chk_carry, p + i, n - i);
            break;
        }
        rm_instream_prefetch (p + i, n - i);
        memcpy (&len, p + i, 4);
        len = BSON_UINT32_FROM_LE (len);
        if (len == 0xFFFFFFFFu) {
            len = 4;
        } else if (len < 5 || len > RM_BSON_MAX_OPLOG_SIZE) {
            ra->chk_on = false;
            break;
        } else if (len > n - i) {
            rm_buf_append (&ra->chk_carry, p + i, n - i);
            break;
        } else if (!frame_good (ra, p + i, len)) {
            ra->chk_on = false;
            break;
        }
        i += len;
        ra->chk_end = base + i;
    }
}

static void *
thread_main (void *arg)
{
    rm_instream_t *s = arg;
    rm_readahead_t *ra = s->ra;
    bool last = false;

    while (!last) {
        chunk_t *c;
        pthread_mutex_lock (&ra->mu);
        while (!ra->free_list && !ra->stop)
            pthread_cond_wait (&ra->cond, &ra->mu);
        if (ra->stop) {
            pthread_mutex_unlock (&ra->mu);
            break;
        }
        c = ra->free_list;
        ra->free_list = c->next;
        pthread_mutex_unlock (&ra->mu);

        produce_chunk (s, c);
        check_bytes (ra, c->mem + HEAD, c->len);
        c->checked_end = ra->chk_end;
        last = c->last;

        pthread_mutex_lock (&ra->mu);
        c->next = NULL;
        if (ra->ready_tail)
            ra->ready_tail->next = c;
        else
            ra->ready = c;
        ra->ready_tail = c;
        pthread_cond_broadcast (&ra->cond);
        pthread_mutex_unlock (&ra->mu);
    }
    return NULL;
}

/* Gives back the pages of a mapped file that lie KEEP or more behind
 * where the main thread last asked for bytes: no document there is in use
 * any more (as a chunk is reused once the window has left it, and the
 * write thread is never that far behind), and an access after this would
 * only read the file again. A page touched again after this would stay
 * until the end: KEEP is what makes that never happen. The thread does it,
 * not the main thread: the call waits for every other core to flush the
 * pages from its TLB (4.5% of a threaded `set`'s CPU, all of it on the
 * main thread, when the main thread made it). */
static void
drop_behind (rm_readahead_t *ra, uint64_t main_at, long page)
{
    uint64_t to;
    uintptr_t a, b;

    if (main_at < ra->m_dropped + KEEP + DROP_STEP)
        return;
    to = main_at - KEEP;
    a = (uintptr_t) (ra->zero + ra->m_dropped) & ~(uintptr_t) (page - 1);
    b = (uintptr_t) (ra->zero + to) & ~(uintptr_t) (page - 1);
    if (a < (uintptr_t) ra->map)
        a = (uintptr_t) ra->map;
    if (b > a)
        madvise ((void *) a, b - a, MADV_DONTNEED);
    ra->m_dropped = to;
}

/* The thread of a mapped file: walks it a STEP at a time, at most LEAD
 * ahead of the main thread (or to the end of what it waits for). */
static void *
mapped_main (void *arg)
{
    rm_instream_t *s = arg;
    rm_readahead_t *ra = s->ra;
    uint64_t pos = ra->m_from;
    long page = sysconf (_SC_PAGESIZE);

    while (pos < ra->m_end) {
        uint64_t step = ra->m_end - pos < STEP ? ra->m_end - pos : STEP;
        uintptr_t a, b;
        uint64_t main_at;
        bool stop;
        pthread_mutex_lock (&ra->mu);
        while (!ra->stop && pos >= ra->m_main + LEAD && pos >= ra->m_want)
            pthread_cond_wait (&ra->cond, &ra->mu);
        stop = ra->stop;
        main_at = ra->m_main;
        pthread_mutex_unlock (&ra->mu);
        if (stop)
            return NULL;
        drop_behind (ra, main_at, page);
        /* One call maps the step's pages, where touching them would fault
         * every 64 KiB; only a hint (older kernels refuse it). */
        a = (uintptr_t) (ra->zero + pos) & ~(uintptr_t) (page - 1);
        b = (uintptr_t) (ra->zero + pos + step);
        if (madvise ((void *) a, b - a, MADV_POPULATE_READ) != 0 && errno == EFAULT) {
            /* Pages past the file's end: it was cut short after it was
             * mapped. Touching them would raise SIGBUS; say it instead. */
            struct stat st;
            pthread_mutex_lock (&ra->mu);
            ra->failed = true;
            rm_error_set (&ra->err, RM_ERR_IO,
                          "%s: the file was cut short while it was read (now %lld bytes, "
                          "%llu when it was opened)",
                          ra->name, fstat (s->fd, &st) == 0 ? (long long) st.st_size : -1LL,
                          (unsigned long long) ra->map_len);
            ra->m_done = true;
            pthread_cond_broadcast (&ra->cond);
            pthread_mutex_unlock (&ra->mu);
            return NULL;
        }
        check_bytes (ra, ra->zero + pos, (size_t) step);
        pos += step;
        pthread_mutex_lock (&ra->mu);
        ra->m_ready = pos;
        ra->m_checked = ra->chk_end;
        pthread_cond_broadcast (&ra->cond);
        pthread_mutex_unlock (&ra->mu);
    }
    pthread_mutex_lock (&ra->mu);
    ra->m_done = true;
    pthread_cond_broadcast (&ra->cond);
    pthread_mutex_unlock (&ra->mu);
    return NULL;
}

/* Maps a plain regular file read so far through fd; false if it is not
 * one or the mapping fails (the chunks are used then). */
static bool
map_file (rm_instream_t *s, rm_readahead_t *ra)
{
    struct stat st;
    off_t at;
    uint64_t win_end = s->offset + (s->end - s->start); /* the stream offset read to */
    void *m;

    if (s->codec != RM_CODEC_NONE || s->fd < 0 || !s->regular)
        return false;
    at = lseek (s->fd, 0, SEEK_CUR); /* the file offset of win_end */
    if (at < 0 || (uint64_t) at < win_end || fstat (s->fd, &st) != 0 || st.st_size <= at)
        return false;
    m = mmap (NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, s->fd, 0);
    if (m == MAP_FAILED)
        return false;
    ra->map = m;
    ra->map_len = (size_t) st.st_size;
    ra->zero = ra->map + ((uint64_t) at - win_end);
    ra->m_end = (uint64_t) st.st_size - ((uint64_t) at - win_end);
    ra->m_from = ra->m_ready = win_end;
    ra->m_raw = s->raw_pos;
    ra->m_main = ra->m_want = s->offset;
    ra->m_dropped = s->offset;
    return true;
}

/* Frees what rm_readahead_start made, once no thread uses it. */
static void
ra_free (rm_readahead_t *ra)
{
    for (int i = 0; i < N_CHUNKS; i++)
        bson_free (ra->all[i]);
    if (ra->map) {
        rm_mapped_file = NULL;
        munmap (ra->map, ra->map_len);
    }
    rm_buf_destroy (&ra->chk_carry);
    bson_free (ra->name);
    pthread_cond_destroy (&ra->cond);
    pthread_mutex_destroy (&ra->mu);
    bson_free (ra);
}

bool
rm_readahead_start (rm_instream_t *s)
{
    rm_readahead_t *ra = bson_malloc0 (sizeof *ra);
    bool mapped;

    rm_bson_like_init (&ra->chk_like);
    pthread_mutex_init (&ra->mu, NULL);
    pthread_cond_init (&ra->cond, NULL);
    mapped = map_file (s, ra);
    for (int i = 0; !mapped && i < N_CHUNKS; i++) {
        ra->all[i] = bson_malloc (sizeof (chunk_t) + HEAD + CHUNK);
        ra->all[i]->next = ra->free_list;
        ra->free_list = ra->all[i];
    }
    ra->name = bson_strdup (s->name);
    if (mapped)
        rm_mapped_file = ra->name;
    ra->raw_pos = s->raw_pos;
    /* The checker can start only where the main thread stands at a
     * document boundary. The window holds the bytes produced before the
     * thread (less than the document asked for): the checker takes them
     * first, and the chunks start after them. */
    ra->chk_base = s->offset;
    if (s->frames && s->frame_at == s->offset) {
        ra->chk_on = true;
        ra->chk_end = s->offset;
        s->checked_from = s->offset;
    }
    check_bytes (ra, s->win + s->start, s->end - s->start);
    ra->m_checked = ra->chk_end;
    s->ra = ra;
    s->msg_name = ra->name;
    if (rm_thread_start (&ra->thread, mapped ? mapped_main : thread_main, s) != 0) {
        s->ra = NULL;
        s->msg_name = s->name;
        ra_free (ra);
        return false;
    }
    if (mapped) {
        /* The window moves into the mapping, onto the same bytes: stream
         * offsets are its indexes from now on. */
        s->end = s->offset + (s->end - s->start);
        s->start = s->offset;
        s->win = (uint8_t *) ra->zero;
    }
    return true;
}

/* Gives a chunk back to the thread. */
static void
release (rm_readahead_t *ra, chunk_t *c)
{
    pthread_mutex_lock (&ra->mu);
    c->next = ra->free_list;
    ra->free_list = c;
    pthread_cond_broadcast (&ra->cond);
    pthread_mutex_unlock (&ra->mu);
}

/* The next bytes of the stream: the rest of the chunk behind, or the next
 * ready chunk (waiting for it). NULL once the last chunk has been taken. */
static chunk_t *
next_chunk (rm_instream_t *s, rm_readahead_t *ra, size_t *pos)
{
    chunk_t *c;
    if (ra->behind) {
        c = ra->behind;
        ra->behind = NULL;
        *pos = ra->behind_pos;
        return c;
    }
    if (ra->done)
        return NULL;
    pthread_mutex_lock (&ra->mu);
    while (!ra->ready)
        pthread_cond_wait (&ra->cond, &ra->mu);
    c = ra->ready;
    ra->ready = c->next;
    if (!ra->ready)
        ra->ready_tail = NULL;
    pthread_mutex_unlock (&ra->mu);
    *pos = HEAD;
    ra->raw_pos = c->raw_pos;
    s->checked_end = c->checked_end;
    if (c->last) {
        ra->done = true;
        ra->failed = c->failed;
        if (c->failed)
            ra->err = c->err;
    }
    return c;
}

/* Moves the window into buf (if it is in a chunk) with room for need. */
static void
window_to_buf (rm_instream_t *s, size_t need)
{
    rm_readahead_t *ra = s->ra;
    size_t avail = s->end - s->start;
    if (ra->cur) {
        if (s->cap < need) {
            s->cap = need + (need >> 3);
            s->buf = bson_realloc (s->buf, s->cap);
        }
        memcpy (s->buf, s->win + s->start, avail);
        release (ra, ra->cur);
        ra->cur = NULL;
        s->win = s->buf;
        s->start = 0;
        s->end = avail;
        return;
    }
    rm_instream_make_room (s, need);
}

/* rm_readahead_fill on a mapped file: waits until the thread has walked
 * need bytes past the window's start, and takes up to a STEP more. */
static ssize_t
mapped_fill (rm_instream_t *s, rm_readahead_t *ra, size_t need, bson_error_t *err)
{
    uint64_t want = s->offset + need, ready, take;

    if (rm_interrupted) {
        rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
        return -1;
    }
    pthread_mutex_lock (&ra->mu);
    ra->m_main = s->offset;
    ra->m_want = want;
    pthread_cond_broadcast (&ra->cond);
    while (ra->m_ready < want && !ra->m_done)
        pthread_cond_wait (&ra->cond, &ra->mu);
    if (ra->failed && ra->m_ready < want) {
        pthread_mutex_unlock (&ra->mu);
        if (err)
            *err = ra->err;
        return -1;
    }
    ready = ra->m_ready;
    s->checked_end = ra->m_checked;
    pthread_mutex_unlock (&ra->mu);
    take = want + STEP < ready ? want + STEP : ready;
    if (take > s->end)
        s->end = (size_t) take;
    if (s->end < want)
        s->eof = true; /* the thread has walked to the end */
    ra->raw_pos = ra->m_raw + (s->end - ra->m_from);
    return (ssize_t) (s->end - s->start);
}

ssize_t
rm_readahead_fill (rm_instream_t *s, size_t need, bson_error_t *err)
{
    rm_readahead_t *ra = s->ra;

    if (ra->map)
        return mapped_fill (s, ra, need, err);

    while (s->end - s->start < need) {
        size_t avail = s->end - s->start, pos, len, take;
        chunk_t *c;

        if (rm_interrupted) {
            rm_error_set (err, RM_ERR_INTERRUPTED, "interrupted");
            return -1;
        }
        c = next_chunk (s, ra, &pos);
        if (!c) {
            if (ra->failed) {
                if (err)
                    *err = ra->err;
                return -1;
            }
            s->eof = true;
            break;
        }
        len = HEAD + c->len - pos;
        if (len == 0) {
            release (ra, c);
            continue;
        }
        if (avail <= pos && avail + len >= need) {
            /* The common case: the window moves into the chunk, the bytes
             * left in it copied into the room in front. */
            memcpy (c->mem + pos - avail, s->win + s->start, avail);
            if (ra->cur)
                release (ra, ra->cur);
            ra->cur = c;
            s->win = c->mem;
            s->start = pos - avail;
            s->end = pos + len;
            continue;
        }
        /* A document too big for the room or the chunk: gather it in buf. */
        window_to_buf (s, need);
        take = need - avail < len ? need - avail : len;
        memcpy (s->buf + s->end, c->mem + pos, take);
        s->end += take;
        if (take < len) {
            ra->behind = c;
            ra->behind_pos = pos + take;
        } else {
            release (ra, c);
        }
    }
    return (ssize_t) (s->end - s->start);
}

bool
rm_readahead_mapped (const rm_instream_t *s)
{
    return s->ra->map != NULL;
}

uint64_t
rm_readahead_raw_pos (const rm_instream_t *s)
{
    return s->ra->raw_pos;
}

void
rm_readahead_stop (rm_instream_t *s)
{
    rm_readahead_t *ra = s->ra;
    if (!ra)
        return;
    pthread_mutex_lock (&ra->mu);
    ra->stop = true;
    pthread_cond_broadcast (&ra->cond);
    pthread_mutex_unlock (&ra->mu);
    pthread_join (ra->thread, NULL);
    ra_free (ra);
    s->ra = NULL;
    s->msg_name = s->name;
    s->checked_end = 0;
    s->win = s->buf; /* the chunks are gone: nothing is in the window */
    s->start = s->end = 0;
}
