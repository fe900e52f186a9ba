/* Worker threads (thread.h). */
#include <signal.h>

#include "thread.h"

int
rm_thread_start (pthread_t *thread, void *(*fn) (void *), void *arg)
{
    sigset_t all, old;
    int rc;

    /* The new thread inherits the mask in force when it is created. */
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    rc = pthread_create (thread, NULL, fn, arg);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    return rc;
}
