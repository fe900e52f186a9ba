/* Parallel gzip members (see gzip_parallel.h). Up to `threads` + 1 blocks
 * are in flight, each on a thread of its own; the oldest is joined and
 * written before a new one starts, so output order is input order and
 * memory is bounded by (threads + 1) x (block + its compressed bound). The
 * one slot more than threads is the block being filled: while the caller
 * fills it, `threads` members still compress, and no core waits for it. */
#include <pthread.h>
#include <string.h>

#include <zlib.h>

#include "gzip_parallel.h"
#include "thread.h"

#define BLOCK (1u << 20)

typedef struct {
    uint8_t *in, *out;
    size_t in_len, out_len, out_cap;
    int level;
    bool running, failed;
    pthread_t thread;
} job_t;

struct rm_pgzip {
    job_t *jobs;
    int n;            /* slots (threads + 1) */
    int head, busy;   /* oldest job in flight, how many are */
    int level;
    uint64_t members;
    rm_pgzip_emit_fn emit;
    void *ctx;
};

static void *
compress_job (void *arg)
{
    job_t *j = arg;
    z_stream z;
    memset (&z, 0, sizeof z);
    if (deflateInit2 (&z, j->level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        j->failed = true;
        return NULL;
    }
    z.next_in = j->in;
    z.avail_in = (uInt) j->in_len;
    z.next_out = j->out;
    z.avail_out = (uInt) j->out_cap;
    /* The output buffer holds deflateBound: one call finishes the member. */
    j->failed = deflate (&z, Z_FINISH) != Z_STREAM_END;
    j->out_len = j->out_cap - z.avail_out;
    deflateEnd (&z);
    return NULL;
}

rm_pgzip_t *
rm_pgzip_new (int level, int threads, rm_pgzip_emit_fn emit, void *ctx)
{
    rm_pgzip_t *z = bson_malloc0 (sizeof *z);
    z_stream probe;
    uLong bound;

    z->n = (threads < 1 ? 1 : threads) + 1;
    z->level = level;
    z->emit = emit;
    z->ctx = ctx;
    memset (&probe, 0, sizeof probe);
    deflateInit2 (&probe, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    bound = deflateBound (&probe, BLOCK);
    deflateEnd (&probe);
    z->jobs = bson_malloc0 ((size_t) z->n * sizeof *z->jobs);
    for (int i = 0; i < z->n; i++) {
        z->jobs[i].in = bson_malloc (BLOCK);
        z->jobs[i].out_cap = bound + 64;
        z->jobs[i].out = bson_malloc (z->jobs[i].out_cap);
        z->jobs[i].level = level;
    }
    return z;
}

/* Joins the oldest job in flight and writes its member. */
static bool
retire (rm_pgzip_t *z, bson_error_t *err)
{
    job_t *j = &z->jobs[z->head];
    pthread_join (j->thread, NULL);
    j->running = false;
    z->head = (z->head + 1) % z->n;
    z->busy--;
    if (j->failed) {
        rm_error_set (err, RM_ERR_IO, "gzip compression failed");
        return false;
    }
    j->in_len = 0;
    return z->emit (z->ctx, j->out, j->out_len, err);
}

/* The slot being filled: the one after the jobs in flight. */
static job_t *
filling (rm_pgzip_t *z)
{
    return &z->jobs[(z->head + z->busy) % z->n];
}

static bool
launch (rm_pgzip_t *z, bson_error_t *err)
{
    job_t *j = filling (z);
    j->running = true;
    if (rm_thread_start (&j->thread, compress_job, j) != 0) {
        /* No thread to be had: compress here instead. */
        compress_job (j);
        j->running = false;
        if (j->failed) {
            rm_error_set (err, RM_ERR_IO, "gzip compression failed");
            return false;
        }
        z->members++;
        j->in_len = 0;
        /* Members already in flight must go out first. */
        while (z->busy > 0)
            if (!retire (z, err))
                return false;
        return z->emit (z->ctx, j->out, j->out_len, err);
    }
    z->busy++;
    z->members++;
    return true;
}

bool
rm_pgzip_write (rm_pgzip_t *z, const void *data, size_t len, bson_error_t *err)
{
    const uint8_t *p = data;
    while (len > 0) {
        job_t *j;
        size_t n;
        if (z->busy == z->n && !retire (z, err))
            return false;
        j = filling (z);
        n = BLOCK - j->in_len < len ? BLOCK - j->in_len : len;
        memcpy (j->in + j->in_len, p, n);
        j->in_len += n;
        p += n;
        len -= n;
        if (j->in_len == BLOCK && !launch (z, err))
            return false;
    }
    return true;
}

bool
rm_pgzip_finish (rm_pgzip_t *z, bson_error_t *err)
{
    job_t *j;
    if (z->busy == z->n && !retire (z, err))
        return false;
    j = filling (z);
    /* The last partial block; an empty stream still gets one member, as a
     * gzip file with none is not one. */
    if ((j->in_len > 0 || z->members == 0) && !launch (z, err))
        return false;
    while (z->busy > 0)
        if (!retire (z, err))
            return false;
    return true;
}

void
rm_pgzip_destroy (rm_pgzip_t *z)
{
    if (!z)
        return;
    while (z->busy > 0) {
        job_t *j = &z->jobs[z->head];
        pthread_join (j->thread, NULL);
        z->head = (z->head + 1) % z->n;
        z->busy--;
    }
    for (int i = 0; i < z->n; i++) {
        bson_free (z->jobs[i].in);
        bson_free (z->jobs[i].out);
    }
    bson_free (z->jobs);
    bson_free (z);
}
