/* The lease's decisions (shell-ext/online_lease_rule.c) without a server:
 * take (a lease free, released, expired, held), take over a dead holder
 * (real processes: one reaped, one a zombie, this one), the fence of a
 * run taking it right now, the next epoch, renew and stop writing (the
 * margin before expiry), what a lease document says, and which lease
 * documents are refused before they are believed (issue 50: a field of
 * a type no run writes, naming the field). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "online_lease_doc.h"
#include "online_state.h"
#include "test.h"

#define LEASE 30000
#define MARGIN (LEASE / 3)

/* The owner string of process pid on this host, as online_state.c makes
 * it ("host:pid:ms"). */
static void
owner_of (long pid, char *buf, size_t cap)
{
    char host[256] = "";
    gethostname (host, sizeof host - 1);
    snprintf (buf, cap, "%s:%ld:1700000000000", host, pid);
}

static void
test_take (void)
{
    char me[300], other[300];
    owner_of ((long) getpid (), me, sizeof me);
    /* Another host's run: never judged dead, held until it expires. */
    snprintf (other, sizeof other, "elsewhere.example:%ld:1", (long) getpid ());
    T_CHECK (!online_lease_blocks (false, "", me, 0, 1000));          /* no lease yet */
    T_CHECK (!online_lease_blocks (true, "", me, 0, 1000));           /* released */
    T_CHECK (online_lease_blocks (true, other, me, 5000, 1000));      /* held */
    T_CHECK (!online_lease_blocks (true, other, me, 1000, 1000));     /* expires now */
    T_CHECK (!online_lease_blocks (true, other, me, 999, 1000));      /* expired */
    T_CHECK (!online_lease_blocks (true, me, me, 5000, 1000));        /* ours */
    /* This process is alive: its lease, seen by another run, holds. */
    T_CHECK (!online_lease_holder_dead (me));
    T_CHECK (online_lease_blocks (true, me, other, 5000, 1000));
}

static void
test_take_over_dead (void)
{
    char owner[300], me[300];
    pid_t child;
    int status;

    snprintf (me, sizeof me, "elsewhere.example:1:1");
    /* A process that ended and was waited for: gone. */
    child = fork ();
    if (child == 0)
        _exit (0);
    T_CHECK (child > 0);
    waitpid (child, &status, 0);
    owner_of ((long) child, owner, sizeof owner);
    T_CHECK (online_lease_holder_dead (owner));
    T_CHECK (!online_lease_blocks (true, owner, me, INT64_MAX, 0));
    /* One that ended and was not waited for yet (a zombie): gone too. */
    child = fork ();
    if (child == 0)
        _exit (0);
    T_CHECK (child > 0);
    {
        /* until /proc says it is one */
        char path[64], line[512];
        snprintf (path, sizeof path, "/proc/%ld/stat", (long) child);
        for (int i = 0; i < 200; i++) {
            FILE *f = fopen (path, "r");
            bool z = f && fgets (line, sizeof line, f) && strstr (line, ") Z");
            if (f)
                fclose (f);
            if (z)
                break;
            usleep (10000);
        }
    }
    owner_of ((long) child, owner, sizeof owner);
    T_CHECK (online_lease_holder_dead (owner));
    T_CHECK (!online_lease_claim_blocks (5, 4, 1000, LEASE, 2000, owner, me));
    waitpid (child, &status, 0);
    /* A live process of this host: not gone. */
    owner_of ((long) getppid (), owner, sizeof owner);
    T_CHECK (!online_lease_holder_dead (owner));
    /* Not of this host's shape: never judged. */
    T_CHECK (!online_lease_holder_dead (""));
    T_CHECK (!online_lease_holder_dead ("nohost"));
    owner_of (0, owner, sizeof owner);
    T_CHECK (!online_lease_holder_dead (owner));
    {
        char host[256] = "", bad[300];
        gethostname (host, sizeof host - 1);
        snprintf (bad, sizeof bad, "%s:x:1", host);
        T_CHECK (!online_lease_holder_dead (bad));
        snprintf (bad, sizeof bad, "%s:999999999", host); /* no ":ms" */
        T_CHECK (!online_lease_holder_dead (bad));
        snprintf (bad, sizeof bad, "%sx:%ld:1", host, (long) child);
        T_CHECK (!online_lease_holder_dead (bad));
    }
}

/* A fence newer than the lease's epoch: a run taking it right now keeps
 * others out for a lease's time from its fence, unless it is this run. */
static void
test_claim (void)
{
    const char *claimer = "elsewhere.example:7:1", *me = "elsewhere.example:8:1";
    T_CHECK (online_lease_claim_blocks (5, 4, 1000, LEASE, 1000 + LEASE - 1, claimer, me));
    T_CHECK (!online_lease_claim_blocks (5, 4, 1000, LEASE, 1000 + LEASE, claimer, me));
    T_CHECK (!online_lease_claim_blocks (5, 5, 1000, LEASE, 1001, claimer, me)); /* the lease's own */
    T_CHECK (!online_lease_claim_blocks (0, 0, 0, LEASE, 1, "", me));            /* no fence */
    T_CHECK (!online_lease_claim_blocks (5, 4, 1000, LEASE, 1001, me, me));      /* ours */
}

static void
test_next_epoch (void)
{
    T_CHECK (online_lease_next_epoch (0, 0) == 1);
    T_CHECK (online_lease_next_epoch (7, 3) == 8);  /* past a claim that died */
    T_CHECK (online_lease_next_epoch (3, 7) == 8);  /* fences dropped: the lease's */
    T_CHECK (online_lease_next_epoch (9, 9) == 10);
}

/* Renewed at r, a holder writes until r + LEASE - MARGIN by its own
 * clock, and not after; a lost lease stops it at once; a fence past its
 * epoch is a run taking over. */
static void
test_renew_fence (void)
{
    int64_t r = 50000;
    T_CHECK (online_lease_verdict (false, r, r, LEASE, MARGIN) == ONLINE_LEASE_OK);
    T_CHECK (online_lease_verdict (false, r + LEASE - MARGIN - 1, r, LEASE, MARGIN) == ONLINE_LEASE_OK);
    T_CHECK (online_lease_verdict (false, r + LEASE - MARGIN, r, LEASE, MARGIN) == ONLINE_LEASE_STALE);
    T_CHECK (online_lease_verdict (false, r + LEASE, r, LEASE, MARGIN) == ONLINE_LEASE_STALE);
    /* a renewal moves the deadline on */
    T_CHECK (online_lease_verdict (false, r + LEASE - MARGIN, r + 5000, LEASE, MARGIN) == ONLINE_LEASE_OK);
    T_CHECK (online_lease_verdict (true, r, r, LEASE, MARGIN) == ONLINE_LEASE_LOST);
    T_CHECK (online_lease_verdict (true, r + LEASE, r, LEASE, MARGIN) == ONLINE_LEASE_LOST);
    T_CHECK (online_lease_fenced (8, 7));
    T_CHECK (!online_lease_fenced (7, 7));
    T_CHECK (!online_lease_fenced (0, 7));
    /* The holder stops MARGIN before another may take it over: a taker
     * judges by the server's clock against expires = renewal + LEASE. */
    {
        int64_t expires = r + LEASE, stop = r + LEASE - MARGIN;
        T_CHECK (online_lease_verdict (false, stop, r, LEASE, MARGIN) == ONLINE_LEASE_STALE);
        T_CHECK (online_lease_blocks (true, "elsewhere.example:1:1", "me", expires, stop));
        T_CHECK (!online_lease_blocks (true, "elsewhere.example:1:1", "me", expires, expires));
    }
}

static void
test_parse (void)
{
    char owner[16];
    int64_t epoch = -1, expires = -1;
    bson_t *doc = BCON_NEW ("_id", "p", "owner", "h:12:34", "epoch", BCON_INT32 (7), "expires",
                            BCON_DATE_TIME (1700000000123));
    online_lease_parse (doc, owner, sizeof owner, &epoch, &expires);
    T_CHECK_STR (owner, "h:12:34");
    T_CHECK (epoch == 7 && expires == 1700000000123);
    bson_destroy (doc);
    /* Wrong types are none; a long owner is cut to the buffer. */
    doc = BCON_NEW ("owner", BCON_INT32 (3), "epoch", "x", "expires", BCON_INT64 (5));
    online_lease_parse (doc, owner, sizeof owner, &epoch, &expires);
    T_CHECK_STR (owner, "");
    T_CHECK (epoch == 0 && expires == 0);
    bson_destroy (doc);
    doc = BCON_NEW ("owner", "a-very-long-host-name:1:2", "epoch", BCON_DOUBLE (9.0));
    online_lease_parse (doc, owner, sizeof owner, &epoch, &expires);
    T_CHECK_STR (owner, "a-very-long-hos");
    T_CHECK (epoch == 9 && expires == 0);
    bson_destroy (doc);
}

/* doc_check of doc: "" when it passes, else the field and what it holds. */
static const char *
checked (bson_t *doc)
{
    static char out[300];
    const char *field;
    char why[200];
    if (online_lease_doc_check (doc, &field, why, sizeof why))
        out[0] = '\0';
    else
        snprintf (out, sizeof out, "%s %s", field, why);
    bson_destroy (doc);
    return out;
}

static void
test_doc_check (void)
{
    /* What runs write, and what a release leaves: believed. */
    T_CHECK_STR (checked (BCON_NEW ("_id", "p", "owner", "h:1:2", "epoch", BCON_INT64 (7),
                                    "expires", BCON_DATE_TIME (1))), "");
    T_CHECK_STR (checked (BCON_NEW ("owner", "", "epoch", BCON_INT32 (3), "expires",
                                    BCON_DATE_TIME (0))), "");
    T_CHECK_STR (checked (BCON_NEW ("_id", "p")), "");
    /* A tool that turned the epoch into a double: a whole one passes
     * (its range is online_lease.c's to judge). */
    T_CHECK_STR (checked (BCON_NEW ("epoch", BCON_DOUBLE (12.0))), "");
    T_CHECK_STR (checked (BCON_NEW ("epoch", BCON_DOUBLE (-5.0))), "");
    /* The red team's: a holder that is no string, an expiry that is no
     * date, an epoch that is no number: each named. */
    T_CHECK_STR (checked (BCON_NEW ("owner", BCON_INT32 (5), "epoch", BCON_INT64 (1))),
                 "owner is a 32-bit integer, not a string naming the holder");
    T_CHECK_STR (checked (BCON_NEW ("owner", "[", "]", "epoch", BCON_INT64 (1))),
                 "owner is an array, not a string naming the holder");
    T_CHECK_STR (checked (BCON_NEW ("owner", "h:1:2", "expires", "tomorrow")),
                 "expires is a string, not a date");
    T_CHECK_STR (checked (BCON_NEW ("expires", BCON_INT64 (1700000000000))),
                 "expires is a 64-bit integer, not a date");
    T_CHECK_STR (checked (BCON_NEW ("epoch", "x")), "epoch is a string, not a number");
    T_CHECK_STR (checked (BCON_NEW ("epoch", BCON_NULL)), "epoch is null, not a number");
    T_CHECK_STR (checked (BCON_NEW ("epoch", BCON_DOUBLE (1.5))),
                 "epoch is the double 1.5, not a whole number a run could write");
    T_CHECK_STR (checked (BCON_NEW ("epoch", BCON_DOUBLE (1e300))),
                 "epoch is the double 1.0000000000000001e+300, not a whole number a run could write");
    /* The first that fails, in the order owner, epoch, expires. */
    T_CHECK_STR (checked (BCON_NEW ("expires", "x", "epoch", "y", "owner", BCON_BOOL (true))),
                 "owner is a boolean, not a string naming the holder");
    {
        /* NaN is no number of takes; a double past int64 reads as the
         * largest epoch (refused by range), not as undefined behaviour. */
        char owner[8];
        int64_t epoch, expires;
        bson_t *doc = BCON_NEW ("epoch", BCON_DOUBLE (1e300));
        online_lease_parse (doc, owner, sizeof owner, &epoch, &expires);
        T_CHECK (epoch == INT64_MAX);
        bson_destroy (doc);
        T_CHECK_STR (checked (BCON_NEW ("epoch", BCON_DOUBLE (NAN))),
                     "epoch is the double nan, not a whole number a run could write");
    }
}

int
main (void)
{
    T_RUN (test_take);
    T_RUN (test_take_over_dead);
    T_RUN (test_claim);
    T_RUN (test_next_epoch);
    T_RUN (test_renew_fence);
    T_RUN (test_parse);
    T_RUN (test_doc_check);
    return t_done ();
}
