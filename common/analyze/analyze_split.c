/* Independent pieces of work after the first pass, on both cores
 * (analyze_int.h). Measuring the candidates against the key tables in
 * memory, and counting children per parent, is a cache miss per key
 * looked up and ran on the main thread alone while the second core, its
 * worker done, stayed idle. Each piece writes only its own results, so
 * which thread takes it changes nothing. */
#include <pthread.h>
#include <stdatomic.h>

#include "analyze_int.h"
#include "thread.h"

typedef struct {
    void (*fn) (void *ctx, size_t i);
    void *ctx;
    size_t n;
    atomic_size_t next; /* the next piece not taken */
} split_t;

/* Pieces differ in size by thousands (a field of ten keys, one of a
 * million): each thread takes the next one left. */
static void *
take (void *arg)
{
    split_t *s = arg;
    size_t i;
    while ((i = atomic_fetch_add (&s->next, 1)) < s->n)
        s->fn (s->ctx, i);
    return NULL;
}

void
rm_analyze_split (size_t n, void (*fn) (void *ctx, size_t i), void *ctx)
{
    split_t s = {fn, ctx, n, 0};
    pthread_t t;
    /* No thread (or one piece): all of it here. */
    bool threaded = n > 1 && rm_thread_start (&t, take, &s) == 0;
    take (&s);
    if (threaded)
        pthread_join (t, NULL);
}
