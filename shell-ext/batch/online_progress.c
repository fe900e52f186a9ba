/* The progress line of a pass on a terminal (online_batch.h): documents read of
 * the driving collection's count, the percentage, this process's rate and
 * the time left, redrawn after each batch, as the offline meter
 * (migrate/tool_progress.c) shows bytes. Nothing when standard error is
 * no terminal, with --quiet, or with --log-format json (a line a batch
 * instead). The count is the server's estimate from its metadata
 * (estimatedDocumentCount, no scan), taken once when the pass starts:
 * a pass that reads past it (the application inserting meanwhile) shows
 * no percentage and no ETA rather than a wrong one. */
#include <stdio.h>

#include "online_batch.h"

struct online_progress {
    const online_t *on; /* whose reporter draws it (online_say_progress) */
    int64_t total;  /* -1: not known */
    int64_t seen0;  /* read before this process began the pass */
    int64_t t0;     /* when it began (online_mono_ms) */
    bool drawn;
};

online_progress_t *
online_progress_new (online_t *on, const char *db, const char *coll, int64_t seen0)
{
    online_progress_t *p;
    if (!online_say_how (on).meter)
        return NULL;
    p = bson_malloc0 (sizeof *p);
    p->on = on;
    p->total = online_estimated (on, db, coll);
    p->seen0 = seen0;
    p->t0 = online_mono_ms ();
    return p;
}

void
online_progress_draw (online_progress_t *p, size_t step, const char *op, const char *ns,
                      int64_t seen, int64_t written)
{
    int64_t ms, rate;
    char of[64] = " read", eta[40] = "";
    if (!p)
        return;
    ms = online_mono_ms () - p->t0;
    rate = ms > 0 ? (seen - p->seen0) * 1000 / ms : 0;
    if (p->total > 0 && seen <= p->total) {
        snprintf (of, sizeof of, " of %lld read (%lld%%)", (long long) p->total,
                  (long long) (seen * 100 / p->total));
        if (rate > 0) {
            int64_t left = (p->total - seen + rate - 1) / rate;
            snprintf (eta, sizeof eta, ", ETA %lld:%02lld", (long long) (left / 60),
                      (long long) (left % 60));
        }
    }
    if (online_say_progress (p->on, "step %zu (%s) %s: %lld%s, %lld written, %lld/s%s", step, op,
                             ns, (long long) seen, of, (long long) written, (long long) rate, eta))
        p->drawn = true;
}

bool
online_progress_end (online_progress_t *p)
{
    bool drawn = p && p->drawn;
    bson_free (p);
    return drawn;
}
