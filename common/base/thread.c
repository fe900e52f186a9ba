/* Worker threads (thread.h). */
#include <signal.h>

#include "thread.h"

int
rm_thread_start (pthread_t *thread, void *(*fn) (void *), void *arg)
{
    sigset_t all, old;
    int rc;

    /* The new thread inherits the mask in force when it is created: the
     * signals an operator sends go to the main thread, which unwinds. A
     * fault is the thread's own and cannot wait: the kernel kills the
     * process at once, handler or not, for a fault signal the faulting
     * thread blocks. So SIGBUS stays open: a mapped input cut short under
     * the read-ahead thread's check of its bytes is named, as under the
     * main thread's reads (rm_signals_install). */
    sigfillset (&all);
    sigdelset (&all, SIGBUS);
    sigdelset (&all, SIGSEGV);
    sigdelset (&all, SIGFPE);
    sigdelset (&all, SIGILL);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    rc = pthread_create (thread, NULL, fn, arg);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    return rc;
}
