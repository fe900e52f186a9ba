/* Worker threads. Every thread remodel starts blocks all signals: SIGINT
 * and SIGTERM must reach the main thread, whose blocking reads they
 * interrupt (the handler only sets rm_interrupted). */
#ifndef REMODEL_THREAD_H
#define REMODEL_THREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread: 0 or an
 * errno value. */
int rm_thread_start (pthread_t *thread, void *(*fn) (void *), void *arg);

#endif
