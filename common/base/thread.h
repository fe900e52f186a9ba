/* Worker threads. Every thread remodel starts blocks all signals but the
 * faults (SIGBUS, SIGSEGV, SIGFPE, SIGILL): SIGINT and SIGTERM must reach
 * the main thread, whose blocking reads they interrupt (the handler only
 * sets rm_interrupted); a fault blocked in its thread kills the process
 * unhandled. */
#ifndef REMODEL_THREAD_H
#define REMODEL_THREAD_H

#include <pthread.h>

/* pthread_create with every signal but the faults blocked in the new
 * thread: 0 or an errno value. */
int rm_thread_start (pthread_t *thread, void *(*fn) (void *), void *arg);

#endif
