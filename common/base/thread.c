/* Worker threads (thread.h). */
#include <signal.h>

#include "thread.h"

/* The calling thread's kept buffers, destroyed by kept_free when it ends
 * (a key's destructor runs while the thread's own variables still are). */
#define KEPT_MAX 8
static __thread rm_buf_t *kept[KEPT_MAX];
static __thread int n_kept;
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void
kept_free (void *unused)
{
    (void) unused;
    for (int i = 0; i < n_kept; i++)
        rm_buf_destroy (kept[i]);
    n_kept = 0;
}

static void
kept_key_make (void)
{
    (void) pthread_key_create (&kept_key, kept_free);
}

void
rm_thread_keep_buf (rm_buf_t *b)
{
    pthread_once (&kept_once, kept_key_make);
    if (n_kept < KEPT_MAX)
        kept[n_kept++] = b;
    /* Any value but NULL: the destructor runs for this thread. */
    (void) pthread_setspecific (kept_key, kept);
}

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
