/* Filling bson_error_t values, and the interrupt flag long loops check. */
#include <signal.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "remodel/error.h"

volatile int rm_interrupted;
const char *volatile rm_mapped_file;

static void
fill (bson_error_t *err, rm_errcode_t code, const char *fmt, va_list ap)
{
    if (!err)
        return;
    err->domain = RM_ERROR_DOMAIN;
    err->code = code;
    vsnprintf (err->message, sizeof err->message, fmt, ap);
}

void
rm_error_set (bson_error_t *err, rm_errcode_t code, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fill (err, code, fmt, ap);
    va_end (ap);
}

void
rm_error_doc (bson_error_t *err, rm_errcode_t code, const char *file, const char *ns,
              uint64_t ordinal, uint64_t offset, const char *fmt, ...)
{
    char reason[sizeof err->message];
    va_list ap;

    if (!err)
        return;
    va_start (ap, fmt);
    vsnprintf (reason, sizeof reason, fmt, ap);
    va_end (ap);
    if (ns && *ns)
        rm_error_set (err, code, "%s: %s: document %llu at byte %llu: %s", file, ns,
                      (unsigned long long) ordinal, (unsigned long long) offset, reason);
    else
        rm_error_set (err, code, "%s: document %llu at byte %llu: %s", file,
                      (unsigned long long) ordinal, (unsigned long long) offset, reason);
}

void
rm_error_prefix (bson_error_t *err, const char *fmt, ...)
{
    char prefix[256], old[sizeof err->message];
    va_list ap;

    if (!err)
        return;
    va_start (ap, fmt);
    vsnprintf (prefix, sizeof prefix, fmt, ap);
    va_end (ap);
    memcpy (old, err->message, sizeof old);
    snprintf (err->message, sizeof err->message, "%s: %s", prefix, old);
}

static void
on_signal (int sig)
{
    rm_interrupted = sig;
}

/* A mapped input file cut short between the read-ahead's check and a read
 * of its bytes (common/dump/read_ahead.c reports every other cut as an
 * error): no unwinding is possible from a fault, so one line and exit 1,
 * the status of a read error; temporary outputs stay behind as after a
 * kill, and the next run sweeps them (rm_tmppath_sweep). */
static void
on_sigbus (int sig)
{
    static const char head[] = "remodel: error: ",
                      named[] = ": the file was cut short while it was read (SIGBUS)\n",
                      unnamed[] = "an input file was cut short while it was read (SIGBUS)\n";
    const char *name = rm_mapped_file;
    ssize_t n = write (2, head, sizeof head - 1);
    if (name) {
        /* A directory dump's file names are the dump's: no control byte
         * reaches the terminal: \xNN, as cli_text.c writes them. */
        static const char hex[] = "0123456789abcdef";
        char buf[256];
        size_t k = 0;
        for (const char *p = name; *p; p++) {
            unsigned char c = (unsigned char) *p;
            if (c < 0x20 || c == 0x7f) {
                buf[k++] = '\\';
                buf[k++] = 'x';
                buf[k++] = hex[c >> 4];
                buf[k++] = hex[c & 15];
            } else {
                buf[k++] = (char) c;
            }
            if (k > sizeof buf - 4 || !p[1]) {
                n = write (2, buf, k);
                k = 0;
            }
        }
        n = write (2, named, sizeof named - 1);
    } else {
        n = write (2, unnamed, sizeof unnamed - 1);
    }
    (void) n;
    (void) sig;
    _exit (1);
}

/* No SA_RESTART: a blocking read or write returns EINTR, so the loop around
 * it sees the flag and unwinds through the normal error path. */
void
rm_signals_install (void)
{
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGHUP, &sa, NULL);
    sa.sa_handler = on_sigbus;
    sigaction (SIGBUS, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
}
