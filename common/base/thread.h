/* Worker threads. Every thread remodel starts blocks all signals but the
 * faults (SIGBUS, SIGSEGV, SIGFPE, SIGILL): SIGINT and SIGTERM must reach
 * the main thread, whose blocking reads they interrupt (the handler only
 * sets rm_interrupted); a fault blocked in its thread kills the process
 * unhandled. */
#ifndef REMODEL_THREAD_H
#define REMODEL_THREAD_H

#include <pthread.h>

#include "remodel/buf.h"

/* pthread_create with every signal but the faults blocked in the new
 * thread: 0 or an errno value. */
int rm_thread_start (pthread_t *thread, void *(*fn) (void *), void *arg);

/* b, a buffer of the calling thread's own (__thread) kept from call to
 * call so that a document's scratch costs no allocation, is destroyed
 * when that thread ends; register it once per thread. Unregistered, a
 * worker's buffer is lost when the worker ends (up to 1 MiB each); the
 * main thread's stay until the process exits. */
void rm_thread_keep_buf (rm_buf_t *b);

#endif
