/* A field step's documents computed ahead on threads (fields_scratch.h).
 *
 * In one pass the reading thread reads, feeds and writes every document
 * in order; a field step's expressions were its work too, one core of
 * several idle. engine_stream.c now gives a namespace's documents in
 * batches, into two slots in turn: while threads compute one slot's, the
 * reading thread feeds the other's results on and reads the next batch.
 * A batch is cut into jobs of JOB documents that the threads (and the
 * reading thread, when it waits for a slot) take in turn, the older
 * batch's first, so that no thread idles while another has work.
 *
 * Each thread has a scratch of its own: an expression context and a run
 * (field_run.h), the expressions themselves shared, only read
 * (remodel/expr.h). What a thread computes must be what apply would make:
 * it counts nothing and keeps no error (its scratch has no engine); a
 * document that fails is left to apply, which computes it again as
 * without threads and names it. The counts, the depth check and a
 * filter's warning stay the reading thread's, taken in order. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "fields_scratch.h"
#include "thread.h"

#define JOB 64
#define MAX_THREADS 8

/* A document's result. */
typedef struct {
    const uint8_t *doc;         /* the document it is for */
    bool ready;                 /* false: apply computes it */
    bool shallow;               /* rm_expr_set_shallow of its set */
    bool left;                  /* the step's filter left it out ... */
    const rm_path_t *lacking;   /* ... lacking this field it compares */
    size_t off;                 /* in its job's out; SIZE_MAX: doc itself */
    const uint8_t *out;         /* then, once the slot is used */
    size_t out_len;
    const bool *changed;        /* a run's, per step */
} res_t;

/* A slot: one batch given, its jobs taken and done. */
typedef struct {
    const uint8_t *const *docs;
    const uint32_t *lens;
    size_t n, cap;
    res_t *res;
    size_t n_jobs, next, done, cap_jobs;
    rm_buf_t *outs;             /* per job: its results, one after another */
    bool **changed;             /* per job: a run's flags, JOB x steps */
    uint64_t seq;               /* when given; 0: nothing to take */
    size_t out_bytes, out_max;  /* the results' bytes so far, and their bound */
} slot_t;

typedef struct rm_fields_ahead rm_fields_ahead_t;

/* A thread's own: its scratch. */
typedef struct {
    rm_fields_ahead_t *a;
    rm_fields_scratch_t *sc;
} worker_t;

struct rm_fields_ahead {
    pthread_mutex_t mu;
    pthread_cond_t work, finished;
    slot_t slot[2];
    uint64_t seq;
    bool stop;
    const rm_step_t *s;
    const char *ns_name;
    size_t nst;                 /* a run's steps (0: no run) */
    /* [0]: the reading thread's, while it waits for a slot */
    worker_t w[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int n_workers, n_started;
    /* apply's: the slot in use, the next result */
    const res_t *use;
    size_t n_use, at;
};

/* Job j of slot g, by w's scratch. */
static void
job_run (rm_fields_ahead_t *a, rm_fields_scratch_t *sc, slot_t *g, size_t j)
{
    size_t from = j * JOB, to = from + JOB < g->n ? from + JOB : g->n;
    rm_buf_t *buf = &g->outs[j];

    rm_buf_reset (buf);
    for (size_t i = from; i < to; i++) {
        res_t *r = &g->res[i];
        const uint8_t *doc = g->docs[i], *out;
        size_t out_len;
        bson_error_t err;

        r->doc = doc;
        r->ready = false;
        /* Past the slot's bound (a few small documents can make huge
         * results: a set of 40,000 fields), the rest is apply's to
         * compute as it comes: what is held stays bounded. */
        if (__atomic_load_n (&g->out_bytes, __ATOMIC_RELAXED) > g->out_max)
            continue;
        size_t at = buf->len;
        sc->into = buf; /* a set's result goes straight into the job's */
        r->ready = sc->run ? rm_field_run_apply (sc->run, doc, g->lens[i], &out, &out_len,
                                                 g->changed[j] + (i - from) * a->nst)
                           : rm_fields_rewrite (sc, a->s, a->ns_name, doc, g->lens[i], &out,
                                                &out_len, &err);
        sc->into = NULL;
        if (!r->ready)
            continue;
        /* Only a filter gives a step's document back as it came. */
        r->left = !sc->run && out == doc;
        r->lacking = r->left ? rm_engine_filter_lacking (a->s, sc->cx, doc, g->lens[i]) : NULL;
        r->shallow = !sc->run && a->s->kind == RM_STEP_SET && rm_expr_set_shallow (sc->cx);
        r->out_len = out_len;
        r->off = SIZE_MAX;
        if (out != doc) {
            /* Written into buf already, or copied there. */
            if (buf->len == at) {
                rm_buf_append (buf, out, out_len);
            }
            r->off = at;
            __atomic_add_fetch (&g->out_bytes, out_len, __ATOMIC_RELAXED);
        }
    }
}

/* The slot with a job left, the older first (NULL: none); under mu. */
static slot_t *
slot_next (rm_fields_ahead_t *a)
{
    slot_t *g = NULL;
    for (int k = 0; k < 2; k++) {
        slot_t *s = &a->slot[k];
        if (s->seq && s->next < s->n_jobs && (!g || s->seq < g->seq))
            g = s;
    }
    return g;
}

/* Job j of g done; under mu. */
static void
job_done (rm_fields_ahead_t *a, slot_t *g)
{
    if (++g->done == g->n_jobs)
        pthread_cond_broadcast (&a->finished);
}

static void *
worker_main (void *arg)
{
    worker_t *w = arg;
    rm_fields_ahead_t *a = w->a;

    pthread_mutex_lock (&a->mu);
    while (!a->stop) {
        slot_t *g = slot_next (a);
        size_t j;
        if (!g) {
            pthread_cond_wait (&a->work, &a->mu);
            continue;
        }
        j = g->next++;
        pthread_mutex_unlock (&a->mu);
        job_run (a, w->sc, g, j);
        pthread_mutex_lock (&a->mu);
        job_done (a, g);
    }
    pthread_mutex_unlock (&a->mu);
    return NULL;
}

/* The threads, at the first batch: threads in all, the reading thread
 * one of them. */
static rm_fields_ahead_t *
ahead_new (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name, int threads)
{
    rm_fields_ahead_t *a = bson_malloc0 (sizeof *a);
    pthread_mutex_init (&a->mu, NULL);
    pthread_cond_init (&a->work, NULL);
    pthread_cond_init (&a->finished, NULL);
    a->s = s;
    a->ns_name = ns_name;
    a->nst = sc->run ? rm_field_run_steps (sc->run) : 0;
    a->n_workers = threads < MAX_THREADS ? threads : MAX_THREADS;
    for (int t = 0; t < a->n_workers; t++) {
        rm_fields_scratch_t *wsc = bson_malloc (sizeof *wsc);
        rm_fields_scratch_init (wsc, NULL, rm_engine_now (sc->e));
        if (sc->run)
            wsc->run = rm_field_run_new (sc->run_steps, sc->run_max, wsc->cx);
        a->w[t] = (worker_t){a, wsc};
    }
    for (int t = 1; t < a->n_workers; t++)
        if (rm_thread_start (&a->tid[a->n_started + 1], worker_main, &a->w[t]) == 0)
            a->n_started++;
    return a;
}

void
rm_fields_ahead_give (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name, int slot,
                      const uint8_t *const *docs, const uint32_t *lens, size_t n, int threads)
{
    rm_fields_ahead_t *a;
    slot_t *g;
    size_t jobs = (n + JOB - 1) / JOB;

    if (!sc->ahead)
        sc->ahead = ahead_new (sc, s, ns_name, threads);
    a = sc->ahead;
    g = &a->slot[slot];
    if (n > g->cap) {
        g->cap = n;
        g->res = bson_realloc (g->res, n * sizeof *g->res);
    }
    if (jobs > g->cap_jobs) {
        g->outs = bson_realloc (g->outs, jobs * sizeof *g->outs);
        g->changed = bson_realloc (g->changed, jobs * sizeof *g->changed);
        for (size_t j = g->cap_jobs; j < jobs; j++) {
            rm_buf_init (&g->outs[j]);
            g->changed[j] = bson_malloc ((a->nst ? a->nst : 1) * JOB * sizeof **g->changed);
        }
        g->cap_jobs = jobs;
    }
    /* The results held: four times the batch's bytes, 1 to 16 MiB. */
    size_t in = 0;
    for (size_t i = 0; i < n; i++)
        in += lens[i];
    pthread_mutex_lock (&a->mu);
    g->out_bytes = 0;
    g->out_max = in * 4 < (1u << 20) ? (1u << 20) : in * 4 > (16u << 20) ? (16u << 20) : in * 4;
    g->docs = docs;
    g->lens = lens;
    g->n = n;
    g->n_jobs = jobs;
    g->next = g->done = 0;
    g->seq = ++a->seq;
    pthread_cond_broadcast (&a->work);
    pthread_mutex_unlock (&a->mu);
}

void
rm_fields_ahead_use (rm_fields_scratch_t *sc, int slot)
{
    rm_fields_ahead_t *a = sc->ahead;
    slot_t *g;

    if (!a)
        return;
    a->use = NULL;
    a->n_use = a->at = 0;
    if (slot < 0)
        return;
    g = &a->slot[slot];
    pthread_mutex_lock (&a->mu);
    /* What no thread has taken, done here rather than waited for. */
    while (g->next < g->n_jobs) {
        size_t j = g->next++;
        pthread_mutex_unlock (&a->mu);
        job_run (a, a->w[0].sc, g, j);
        pthread_mutex_lock (&a->mu);
        job_done (a, g);
    }
    while (g->done < g->n_jobs)
        pthread_cond_wait (&a->finished, &a->mu);
    g->seq = 0;
    pthread_mutex_unlock (&a->mu);
    for (size_t i = 0; i < g->n; i++) {
        res_t *r = &g->res[i];
        size_t j = i / JOB;
        if (!r->ready)
            continue; /* its off was never set */
        r->out = r->off == SIZE_MAX ? r->doc : g->outs[j].data + r->off;
        r->changed = a->nst ? g->changed[j] + (i - j * JOB) * a->nst : NULL;
    }
    a->use = g->res;
    a->n_use = g->n;
}

bool
rm_fields_ahead_take (rm_fields_scratch_t *sc, const rm_step_t *s, const char *ns_name,
                      const uint8_t *doc, uint32_t len, const uint8_t **out, size_t *out_len,
                      bool *failed, bson_error_t *err)
{
    rm_fields_ahead_t *a = sc->ahead;
    const res_t *r;

    *failed = false;
    if (!a || a->at >= a->n_use || a->use[a->at].doc != doc)
        return false;
    r = &a->use[a->at++];
    if (!r->ready)
        return false;
    if (sc->run) {
        /* Too deep: the steps one at a time name the one that made it so. */
        if (!rm_engine_depth_ok (ns_name, "document", doc, len, r->out, r->out_len, err))
            return false;
        for (size_t k = 0; k < a->nst; k++)
            rm_fields_count_step (sc->e, &s[k], r->changed[k]);
        *out = sc->last_out = r->out;
        *out_len = sc->last_len = r->out_len;
        return true;
    }
    if (r->left)
        rm_engine_filter_left (sc->e, s, r->lacking);
    *out = r->out;
    *out_len = r->out_len;
    *failed = !rm_fields_done (sc, s, ns_name, doc, len, r->shallow, out, out_len, err);
    return true;
}

void
rm_fields_ahead_destroy (rm_fields_ahead_t *a)
{
    if (!a)
        return;
    pthread_mutex_lock (&a->mu);
    a->stop = true;
    pthread_cond_broadcast (&a->work);
    pthread_mutex_unlock (&a->mu);
    for (int t = 1; t <= a->n_started; t++)
        pthread_join (a->tid[t], NULL);
    for (int t = 0; t < a->n_workers; t++) {
        rm_fields_scratch_destroy (a->w[t].sc);
        bson_free (a->w[t].sc);
    }
    for (int k = 0; k < 2; k++) {
        slot_t *g = &a->slot[k];
        for (size_t j = 0; j < g->cap_jobs; j++) {
            rm_buf_destroy (&g->outs[j]);
            bson_free (g->changed[j]);
        }
        bson_free (g->outs);
        bson_free (g->changed);
        bson_free (g->res);
    }
    pthread_cond_destroy (&a->work);
    pthread_cond_destroy (&a->finished);
    pthread_mutex_destroy (&a->mu);
    bson_free (a);
}
