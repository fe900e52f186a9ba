/* follow --to-uri's matrix (matrix.h), after test_online_to_uri_kill.sh's
 * follow points: the pair run, then an application's writes on the source
 * (inserts, updates and deletes of parents and of kids, from a fixed seed:
 * the same writes each time, so that follow's calls are numbered the same);
 * follow --to-uri interrupted at each call of its first round and of that
 * round's sample: killed there, or its connection cut before the call is
 * sent or after it was applied (with --retry-for 1s: it retries, goes on
 * to its sample and stops at SIGINT, exit 0). Then more writes, follow
 * again (its rounds, stopped by SIGINT, exit 0), finalize --writes-stopped
 * (exit 0), and the end state judged: the destination's shop the clean
 * path's, byte for byte with its indexes, which is remodel run's offline
 * output over the source's documents as the writes left them; the source
 * as the writes left it, with no state database; one pair, committed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "matrix.h"

static const mx_opts_t *O;
static mx_state_t s_src, s_dst, s_mid; /* s_mid: the destination after follow again */
static long round_calls;

typedef struct {
    long k;
    int act;
} point_t;
static point_t *points;

/* The application's writes: m of them from seed, on the source. */
static bool
writes (unsigned seed, int m, char *why, size_t cap)
{
    mongoc_collection_t *parents = mongoc_client_get_collection (mx_srv.client, "shop", "parents"),
                        *kids = mongoc_client_get_collection (mx_srv.client, "shop", "kids");
    bson_error_t err = {0};
    bool ok = true;
    unsigned x = seed * 2654435761u + 1;
    for (int n = 0; n < m && ok; n++) {
        int r[4], i = (int) seed * 100000 + n;
        for (int j = 0; j < 4; j++)
            x = x * 1103515245u + 12345u, r[j] = (int) ((x >> 8) % 100000u);
        int p = r[1] % 44, kid = 1000 + r[2] % 130;
        bson_t *q, *u = NULL, *d = NULL, *opts = NULL;
        switch (r[0] % 6) {
        case 0: /* a parent renamed (or made) */
            q = BCON_NEW ("_id", BCON_INT32 (p));
            u = BCON_NEW ("$set", "{", "name", BCON_UTF8 ("w"), "n", BCON_INT32 (i), "}");
            opts = BCON_NEW ("upsert", BCON_BOOL (true));
            ok = mongoc_collection_update_one (parents, q, u, opts, NULL, &err);
            break;
        case 1:
            q = BCON_NEW ("_id", BCON_INT32 (p));
            ok = mongoc_collection_delete_one (parents, q, NULL, NULL, &err);
            break;
        case 2: /* a kid changed, or moved to another parent */
        case 3:
            q = BCON_NEW ("_id", BCON_INT32 (kid));
            u = r[0] % 6 == 2 ? BCON_NEW ("$set", "{", "x", BCON_INT32 (-i), "}")
                              : BCON_NEW ("$set", "{", "owner", BCON_INT32 (r[3] % 44), "}");
            ok = mongoc_collection_update_one (kids, q, u, NULL, NULL, &err);
            break;
        case 4:
            q = BCON_NEW ("_id", BCON_INT32 (kid));
            ok = mongoc_collection_delete_one (kids, q, NULL, NULL, &err);
            break;
        default:
            q = NULL;
            d = BCON_NEW ("_id", BCON_INT32 (i), "owner", BCON_INT32 (r[3] % 44), "x",
                          BCON_INT32 (n));
            ok = mongoc_collection_insert_one (kids, d, NULL, NULL, &err);
        }
        if (q)
            bson_destroy (q);
        if (u)
            bson_destroy (u);
        if (d)
            bson_destroy (d);
        if (opts)
            bson_destroy (opts);
    }
    if (!ok)
        snprintf (why, cap, "the application's writes: %s", err.message);
    mongoc_collection_destroy (parents);
    mongoc_collection_destroy (kids);
    return ok;
}

/* follow --to-uri, stopped by SIGINT once its round's sample is verified. */
static bool
follow (mx_run_t *r, const char *fault, const char *log, bool kill)
{
    mx_online_interrupt_at = kill ? NULL : "documents verified";
    bool ran = mx_online (&mx_tgt, r, fault, log, kill, "follow", "--to-uri", mx_dst_uri,
                          "--pause", "200ms", "--sample", "50", "--retry-for", "1s", NULL);
    mx_online_interrupt_at = NULL;
    return ran;
}

static bool
stopped (const mx_run_t *r)
{
    return r->rc == 0 && strstr (r->err, "documents verified") &&
           strstr (r->err, "rounds (interrupted)");
}

/* The destination's results (parents, kids) as the clean path's follow
 * left them, document for document; a FAIL line when not. */
static bool
caught_up (const char *label)
{
    mx_state_t got;
    char why[512] = "";
    bool ok = mx_state_read (mx_dst.client, MX_SCOPE_SHOP, &got, why, sizeof why);
    for (int i = 0; ok && i < 2; i++) {
        const char *name = i ? "kids" : "parents";
        const mx_coll_t *a = mx_state_coll (&got, name), *b = mx_state_coll (&s_mid, name);
        if (!a || !b || !mx_coll_same_docs (a, b)) {
            snprintf (why, sizeof why, "after follow again, the destination's shop.%s: %zu "
                      "documents, not the clean follow's %zu, or not byte for byte", name,
                      a ? a->count : 0, b ? b->count : 0);
            ok = false;
        }
    }
    mx_state_free (&got);
    if (!ok)
        mx_say (false, "%s: %s", label, why);
    return ok;
}

/* After a follow point: more writes, follow again (its results the clean
 * follow's), finalize (false: a FAIL line said why). */
static bool
complete (const char *label, const mx_run_t *first)
{
    char why[512] = "";
    mx_run_t r;
    if (!writes (2, 40, why, sizeof why)) {
        mx_say (false, "%s: %s", label, why);
        return false;
    }
    if (!follow (&r, NULL, NULL, false) || !stopped (&r)) {
        mx_say (false, "%s: exit %d; follow again, the application written: exit %d, not "
                "stopped by SIGINT after its rounds", label, first->rc, r.rc);
        mx_tail (&r);
        return false;
    }
    /* Caught up before finalize: the results follow made are the clean
     * path's (finalize's full verify would mend what a round lost). */
    if (s_mid.ncoll && !caught_up (label)) {
        return false;
    }
    if (!s_mid.ncoll && !mx_state_read (mx_dst.client, MX_SCOPE_SHOP, &s_mid, why, sizeof why)) {
        mx_say (false, "%s: %s", label, why);
        return false;
    }
    if (!mx_pair_two (&r, "finalize") || r.rc) {
        mx_say (false, "%s: exit %d; follow again; finalize: exit %d, not 0", label, first->rc,
                r.rc);
        mx_tail (&r);
        return false;
    }
    return true;
}

static void
point (long i)
{
    const char *action = O->acts[points[i].act];
    char call[32], sp[64], label[400], why[512];
    bool kill = !strcmp (action, "kill");
    mx_run_t r;

    snprintf (call, sizeof call, "any:%ld", points[i].k);
    mx_spec (sp, sizeof sp, call, action);
    if (!mx_pair_both ("memRestore", "written", why, sizeof why)) {
        mx_say (false, "in-process: follow --to-uri: %s", why);
        return;
    }
    bool ran = follow (&r, sp, NULL, kill);
    mx_label (label, sizeof label, "follow --to-uri", call, action, &r);
    if (!ran) {
        mx_say (false, "%s: %s", label, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    if (!kill && !stopped (&r)) {
        /* Every call of follow is retried (--retry-for): it goes on. */
        mx_say (false, "%s: exit %d, not retried on to its sample and stopped by SIGINT", label,
                r.rc);
        mx_tail (&r);
        return;
    }
    if (complete (label, &r)) {
        char what[300];
        snprintf (what, sizeof what, "exit %d; more writes, follow again (stopped by SIGINT, "
                  "exit 0), finalize: exit 0", r.rc);
        mx_pair_judge (label, what, &s_dst, &s_src);
    }
}

/* The documents of a state as a mongodump directory (an _id index each). */
static bool
dump (const mx_state_t *st, const char *dir, char *why, size_t cap)
{
    char path[700];
    FILE *f;
    mkdir (dir, 0755);
    snprintf (path, sizeof path, "%s/shop", dir);
    mkdir (path, 0755);
    for (size_t i = 0; i < st->ncoll; i++) {
        const mx_coll_t *c = &st->coll[i];
        snprintf (path, sizeof path, "%s/shop/%s.bson", dir, c->name);
        if (!(f = fopen (path, "wb")) || fwrite (c->bytes, 1, c->len, f) != c->len || fclose (f))
            return snprintf (why, cap, "%s: cannot write", path), false;
        snprintf (path, sizeof path, "%s/shop/%s.metadata.json", dir, c->name);
        if (!(f = fopen (path, "w")))
            return snprintf (why, cap, "%s: cannot write", path), false;
        fprintf (f, "{\"indexes\":[{\"v\":{\"$numberInt\":\"2\"},\"key\":{\"_id\":{\"$numberInt\":"
                    "\"1\"}},\"name\":\"_id_\"}],\"collectionName\":\"%s\"}", c->name);
        fclose (f);
    }
    return true;
}

/* A lane's pair: run, the application's writes (snapshot "written"). */
static bool
lane_setup (const char *dir, char *why, size_t cap)
{
    return mx_pair_setup (dir, why, cap) && writes (1, 60, why, cap) &&
           mx_pair_both ("memSnapshot", "written", why, cap);
}

static bool
lane_server (int lane, const char *dir)
{
    char why[1024] = "";
    bool ok = lane_setup (dir, why, sizeof why);
    mx_say (ok, "in-process: follow --to-uri lane %d: its pair run and written%s%s", lane,
            ok ? "" : ": ", why);
    return ok;
}

static void
stop_dst (void)
{
    mx_server_stop (&mx_dst);
}

/* Counted: follow's calls to its round's sample recorded; the clean path's
 * end state (the references), checked against remodel run offline. */
static bool
references (const char *dir, char *why, size_t cap)
{
    char log[700], line[512], from[700], to[700], path[700];
    long n = 0, last_note = 0;
    mx_run_t r;
    FILE *f;

    snprintf (log, sizeof log, "%s/follow.log", O->tmp);
    remove (log);
    if (!lane_setup (dir, why, cap))
        return false;
    if (!follow (&r, "count", log, false) || !stopped (&r))
        return snprintf (why, cap, "follow under the layer, counting: exit %d: %.300s", r.rc,
                         r.err), false;
    /* Its first round to the sample recorded: the second write of the
     * plan's record (the round's note, then the sample's). */
    if ((f = fopen (log, "r"))) {
        while (fgets (line, sizeof line, f) && last_note < 2)
            if (line[0] >= '0' && line[0] <= '9') {
                n++;
                if (strstr (line, " update ") && strstr (line, " plans "))
                    last_note++, round_calls = n;
            }
        fclose (f);
    }
    mx_say (round_calls > 0, "in-process: follow --to-uri under the layer, counting: stopped by "
            "SIGINT, exit 0; %ld calls to its round's sample recorded", round_calls);
    if (!mx_pair_both ("memRestore", "written", why, cap))
        return false;
    if (!complete ("in-process: follow --to-uri, clean", &r))
        return snprintf (why, cap, "the clean path failed"), false;
    if (!mx_state_read (mx_srv.client, MX_SCOPE_SHOP, &s_src, why, cap) ||
        !mx_state_read (mx_dst.client, MX_SCOPE_SHOP, &s_dst, why, cap))
        return false;
    snprintf (from, sizeof from, "%s/follow-orig", O->tmp);
    snprintf (to, sizeof to, "%s/follow-off", O->tmp);
    if (!dump (&s_src, from, why, cap) || !mx_run_offline (O->remodel, mx_tgt.plan, from, to, why, cap))
        return false;
    for (size_t i = 0; i < s_src.ncoll; i++) {
        mx_coll_t off;
        const char *name = s_src.coll[i].name;
        const mx_coll_t *got = mx_state_coll (&s_dst, name);
        snprintf (path, sizeof path, "%s/shop/%s.bson", to, name);
        bool same = mx_coll_from_file (&off, name, path) && got && mx_coll_same_docs (got, &off);
        mx_say (same, "in-process: follow --to-uri, clean: the destination's shop.%s, %zu "
                "documents: remodel run's output over the source as written, byte for byte",
                name, got ? got->count : 0);
        free (off.bytes);
    }
    mx_pair_judge ("in-process: follow --to-uri, clean", "the writes, follow, more writes, follow, "
                   "finalize", &s_dst, &s_src);
    /* What follow made, before finalize, is what finalize commits. */
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "kids" : "parents";
        const mx_coll_t *a = mx_state_coll (&s_mid, name), *b = mx_state_coll (&s_dst, name);
        mx_say (a && b && mx_coll_same_docs (a, b), "in-process: follow --to-uri, clean: after "
                "follow, before finalize, the destination's shop.%s is finalize's, byte for byte",
                name);
    }
    return round_calls > 0;
}

bool
mx_follow_matrix (const mx_opts_t *o)
{
    static char plan[700];
    char why[1024] = "", dir[700];
    long npoints = 0;

    O = o;
    if (!mx_pair_plan (o, plan, sizeof plan))
        return false;
    snprintf (dir, sizeof dir, "%s/follow", o->tmp);
    bool ok = references (dir, why, sizeof why);
    mx_server_stop (&mx_srv), mx_server_stop (&mx_dst);
    if (!ok) {
        mx_say (false, "in-process: follow --to-uri: %s", why);
        return false;
    }
    points = calloc ((size_t) round_calls * 4 + 1, sizeof *points);
    for (int a = 0; a < o->nacts; a++)
        for (long k = 1; k <= round_calls; k++) {
            char call[32];
            snprintf (call, sizeof call, "any:%ld", k);
            if (mx_wanted (o, "follow", call, o->acts[a]))
                points[npoints++] = (point_t) {k, a};
        }
    mx_lanes (o, "follow", npoints, lane_server, point, stop_dst);
    fprintf (stderr, "# in-process: follow --to-uri: %ld points (its round's %ld calls)\n",
             npoints, round_calls);
    free (points);
    mx_state_free (&s_src), mx_state_free (&s_dst), mx_state_free (&s_mid);
    return true;
}
