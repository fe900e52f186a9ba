/* The progress meter: bytes of the source, documents, rates and an ETA when
 * the source's size is known, redrawn on one terminal line. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

struct tool_progress {
    bool on;
    const char *label;
    double start, last;
    bool drawn;
};

static double
now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void
human (char *buf, size_t len, double bytes)
{
    const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) {
        bytes /= 1000;
        u++;
    }
    snprintf (buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

tool_progress_t *
tool_progress_new (bool quiet, const char *label)
{
    tool_progress_t *p = bson_malloc0 (sizeof *p);
    p->on = !quiet && isatty (STDERR_FILENO);
    p->label = label;
    p->start = p->last = now ();
    return p;
}

void
tool_progress_draw (tool_progress_t *p, rm_reader_t *r, uint64_t docs)
{
    uint64_t done, total;
    double t, el;
    char a[32], b[32], rate[32], eta[32] = "";

    if (!p->on)
        return;
    t = now ();
    if (t - p->last < 0.25)
        return;
    p->last = t;
    el = t - p->start;
    rm_reader_progress (r, &done, &total);
    human (a, sizeof a, (double) done);
    human (rate, sizeof rate, el > 0 ? (double) done / el : 0);
    if (total > 0 && done > 0 && done <= total) {
        double left = el * (double) (total - done) / (double) done;
        human (b, sizeof b, (double) total);
        snprintf (eta, sizeof eta, "  ETA %d:%02d", (int) left / 60, (int) left % 60);
        fprintf (stderr, "\r%s: %s / %s (%.0f%%)  %llu docs  %.0f docs/s  %s/s%s   ", p->label, a,
                 b, 100.0 * (double) done / (double) total, (unsigned long long) docs,
                 el > 0 ? (double) docs / el : 0, rate, eta);
    } else {
        fprintf (stderr, "\r%s: %s  %llu docs  %.0f docs/s  %s/s   ", p->label, a,
                 (unsigned long long) docs, el > 0 ? (double) docs / el : 0, rate);
    }
    p->drawn = true;
}

void
tool_progress_done (tool_progress_t *p)
{
    if (p->drawn)
        fputs ("\r\033[K", stderr);
    bson_free (p);
}
