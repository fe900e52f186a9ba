/* The --to-uri matrix (matrix.h), after tests/cli/test_online_to_uri_kill.sh:
 * `online run --to-uri` and `online finalize --to-uri --writes-stopped`
 * with each of their server calls cut before it is sent, cut after it and
 * the command killed at it, between two in-memory servers (the source with
 * its oplog). The plan embeds shop.kids into shop.parents; shop.other,
 * which it does not touch, is copied as it is with its index.
 * After a run point: the run again (exit 0), then finalize (exit 0).
 * make check cuts and kills the run at each call; --full adds a failure reply.
 * After a finalize point: when it failed, finalize again (exit 0, or it
 * says the pair was committed already); a run in between is refused while
 * the intermediate results are being dropped.
 * Then: the destination's shop is a clean pair's, every document byte for
 * byte and every index by name, only the final names; the clean pair's is
 * remodel run's offline output over the same documents; the source as it
 * was, with no state database; the destination records one pair,
 * committed, shop.other copied. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "matrix.h"

static const char plan_text[] =
    "{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"shop.kids\", \"into\": "
    "\"shop.parents\", \"localField\": \"_id\", \"foreignField\": \"owner\", \"as\": \"kids\", "
    "\"project\": {\"owner\": 0}}}]}\n";

enum { PARENTS = 40, KIDS = 120, OTHER = 30 };

static const mx_opts_t *O;
mx_server_t mx_dst;
char mx_dst_uri[160];
static mx_state_t s_src, s_dst;
static long run_calls, fin_calls;

typedef struct {
    bool finalize;
    long k;
    int act;
} point_t;
static point_t *points;

static void
parent (bson_t *d, int i)
{
    char n[16];
    snprintf (n, sizeof n, "p%d", i);
    bson_init (d);
    BSON_APPEND_INT32 (d, "_id", i);
    BSON_APPEND_UTF8 (d, "name", n);
}

static void
kid (bson_t *d, int i)
{
    bson_init (d);
    BSON_APPEND_INT32 (d, "_id", 1000 + i);
    BSON_APPEND_INT32 (d, "owner", i % PARENTS);
    BSON_APPEND_INT32 (d, "x", i);
}

static void
other (bson_t *d, int i)
{
    bson_init (d);
    BSON_APPEND_INT32 (d, "_id", i);
    BSON_APPEND_INT32 (d, "v", i * 2);
}

static const struct {
    const char *name, *index; /* its index beside _id's: field, name */
    void (*make) (bson_t *, int);
    int n;
} data[] = {{"parents", NULL, parent, PARENTS}, {"kids", "owner", kid, KIDS}, {"other", "v", other, OTHER}};

static bool
seed (mx_server_t *s, bson_error_t *err)
{
    bool ok = true;
    for (size_t i = 0; i < 3 && ok; i++) {
        mongoc_collection_t *c = mongoc_client_get_collection (s->client, "shop", data[i].name);
        for (int k = 0; k < data[i].n && ok; k++) {
            bson_t d;
            data[i].make (&d, k);
            ok = mongoc_collection_insert_one (c, &d, NULL, NULL, err);
            bson_destroy (&d);
        }
        if (ok && data[i].index) {
            char name[32];
            bson_t *cmd;
            snprintf (name, sizeof name, "%s_1", data[i].index);
            cmd = BCON_NEW ("createIndexes", BCON_UTF8 (data[i].name), "indexes", "[", "{", "key",
                            "{", data[i].index, BCON_INT32 (1), "}", "name", BCON_UTF8 (name), "}",
                            "]");
            ok = mongoc_collection_command_simple (c, cmd, NULL, NULL, err);
            bson_destroy (cmd);
        }
        mongoc_collection_destroy (c);
    }
    return ok;
}

/* The seeded documents as a dump, and remodel run's output over it. */
static bool
offline (const char *plan, char *why, size_t cap)
{
    char path[700], from[700], to[700];
    snprintf (from, sizeof from, "%s/to-uri-orig", O->tmp);
    snprintf (to, sizeof to, "%s/to-uri-off", O->tmp);
    mkdir (from, 0755);
    snprintf (path, sizeof path, "%s/shop", from);
    mkdir (path, 0755);
    for (size_t i = 0; i < 3; i++) {
        FILE *f;
        snprintf (path, sizeof path, "%s/shop/%s.bson", from, data[i].name);
        if (!(f = fopen (path, "wb")))
            return snprintf (why, cap, "%s: cannot write", path), false;
        for (int k = 0; k < data[i].n; k++) {
            bson_t d;
            data[i].make (&d, k);
            fwrite (bson_get_data (&d), 1, d.len, f);
            bson_destroy (&d);
        }
        fclose (f);
        snprintf (path, sizeof path, "%s/shop/%s.metadata.json", from, data[i].name);
        if (!(f = fopen (path, "w")))
            return snprintf (why, cap, "%s: cannot write", path), false;
        fprintf (f, "{\"indexes\":[{\"v\":{\"$numberInt\":\"2\"},\"key\":{\"_id\":{\"$numberInt\":"
                    "\"1\"}},\"name\":\"_id_\"}],\"collectionName\":\"%s\"}", data[i].name);
        fclose (f);
    }
    return mx_run_offline (O->remodel, plan, from, to, why, cap);
}

bool
mx_pair_both (const char *cmd, const char *snap, char *why, size_t cap)
{
    return mx_server_cmd (&mx_srv, cmd, snap, why, cap) && mx_server_cmd (&mx_dst, cmd, snap, why, cap);
}

/* CMD --to-uri, clean: run with small batches, finalize with the writes
 * stopped. */
bool
mx_pair_two (mx_run_t *r, const char *cmd)
{
    return mx_online (&mx_tgt, r, NULL, NULL, false, cmd, "--to-uri", mx_dst_uri, "-q",
                      strcmp (cmd, "run") ? "--writes-stopped" : "--batch-size",
                      strcmp (cmd, "run") ? NULL : "10", NULL);
}

/* The pair's servers: the source seeded (snapshot "seeded" on both, the
 * destination empty), the run made (snapshot "ran"). */
bool
mx_pair_setup (const char *dir, char *why, size_t cap)
{
    bson_error_t err = {0};
    mx_run_t r;
    char d2[700];
    snprintf (d2, sizeof d2, "%s/dst", dir);
    mkdir (dir, 0755);
    mkdir (d2, 0755);
    if (!mx_server_start (&mx_srv, O->memsrv, dir, true, why, cap) ||
        !mx_server_start (&mx_dst, O->memsrv, d2, false, why, cap))
        return false;
    mx_tgt.uri = mx_srv.uri;
    snprintf (mx_dst_uri, sizeof mx_dst_uri, "%s", mx_dst.uri);
    if (!seed (&mx_srv, &err)) {
        snprintf (why, cap, "seeding: %s", err.message);
        return false;
    }
    if (!mx_pair_both ("memSnapshot", "seeded", why, cap))
        return false;
    if (!mx_pair_two (&r, "run") || r.rc) {
        snprintf (why, cap, "run --to-uri: exit %d: %.300s", r.rc, r.err);
        return false;
    }
    return mx_pair_both ("memSnapshot", "ran", why, cap);
}

/* The pairs record on the destination: one, committed, shop.other copied. */
static bool
pair_record (char *why, size_t cap)
{
    mongoc_collection_t *c = mongoc_client_get_collection (mx_dst.client, "remodel", "pairs");
    bson_t q = BSON_INITIALIZER;
    mongoc_cursor_t *cur = mongoc_collection_find_with_opts (c, &q, NULL, NULL);
    const bson_t *d;
    int n = 0;
    bool committed = false, copied = false;
    bson_iter_t it, a;
    while (mongoc_cursor_next (cur, &d)) {
        n++;
        committed = bson_iter_init_find (&it, d, "committed") && bson_iter_as_bool (&it);
        copied = bson_iter_init_find (&it, d, "copied") && BSON_ITER_HOLDS_ARRAY (&it) &&
                 bson_iter_recurse (&it, &a) && bson_iter_next (&a) && BSON_ITER_HOLDS_UTF8 (&a) &&
                 !strcmp (bson_iter_utf8 (&a, NULL), "shop.other") && !bson_iter_next (&a);
    }
    mongoc_cursor_destroy (cur);
    mongoc_collection_destroy (c);
    bson_destroy (&q);
    snprintf (why, cap, "%d pair records, committed %d, shop.other alone copied %d", n, committed,
              copied);
    return n == 1 && committed && copied;
}

/* Whether a database by that name is on the source. */
static bool
has_db (mx_server_t *s, const char *name)
{
    bson_error_t err;
    char **dbs = mongoc_client_get_database_names_with_opts (s->client, NULL, &err);
    bool has = false;
    for (size_t i = 0; dbs && dbs[i]; i++)
        has = has || !strcmp (dbs[i], name);
    bson_strfreev (dbs);
    return has;
}

/* The end state, as a PASS or FAIL line. */
static void
judge (const char *label, const char *what)
{
    mx_pair_judge (label, what, &s_dst, &s_src);
}

void
mx_pair_judge (const char *label, const char *what, const mx_state_t *want_dst,
               const mx_state_t *want_src)
{
    mx_state_t got;
    char why[2048] = "", w2[300];
    bool ok = mx_state_read (mx_dst.client, MX_SCOPE_SHOP, &got, why, sizeof why) &&
              mx_state_same (&got, want_dst, why, sizeof why);
    mx_state_free (&got);
    if (ok) {
        ok = mx_state_read (mx_srv.client, MX_SCOPE_SHOP, &got, why, sizeof why) &&
             mx_state_same (&got, want_src, why, sizeof why);
        mx_state_free (&got);
        if (!ok)
            snprintf (w2, sizeof w2, "the source: %.280s", why), snprintf (why, sizeof why, "%s", w2);
    }
    if (ok && has_db (&mx_srv, "remodel")) {
        snprintf (why, sizeof why, "the source has a state database");
        ok = false;
    }
    ok = ok && pair_record (why, sizeof why);
    mx_say (ok, "%s: %s: the destination the clean pair's, byte for byte, its indexes; the source "
            "as it was; one pair, committed%s%s", label, what, ok ? "" : ": ", ok ? "" : why);
}

static long
count (const char *cmd, const char *snap, char *why, size_t cap)
{
    char log[700], line[512];
    mx_run_t r;
    long n = 0;
    FILE *f;
    snprintf (log, sizeof log, "%s/to-uri-%s.log", O->tmp, cmd);
    remove (log);
    if (!mx_pair_both ("memRestore", snap, why, cap))
        return 0;
    bool ran = !strcmp (cmd, "run")
                   ? mx_online (&mx_tgt, &r, "count", log, false, "run", "--to-uri", mx_dst_uri, "-q",
                                "--batch-size", "10", NULL)
                   : mx_online (&mx_tgt, &r, "count", log, false, "finalize", "--to-uri", mx_dst_uri,
                                "-q", "--writes-stopped", NULL);
    if (!ran || r.rc) {
        snprintf (why, cap, "%s --to-uri under the fault layer, counting: exit %d: %.300s", cmd,
                  r.rc, r.err);
        return 0;
    }
    if ((f = fopen (log, "r"))) {
        while (fgets (line, sizeof line, f))
            n += line[0] >= '0' && line[0] <= '9';
        fclose (f);
    }
    return n;
}

static void
point (long i)
{
    const char *action = O->acts[points[i].act];
    char call[32], sp[64], label[400], what[300], why[512];
    mx_run_t r, again;
    bool kill = !strcmp (action, "kill");
    const char *cmd = points[i].finalize ? "finalize" : "run";

    snprintf (call, sizeof call, "any:%ld", points[i].k);
    mx_spec (sp, sizeof sp, call, action);
    if (!mx_pair_both ("memRestore", points[i].finalize ? "ran" : "seeded", why, sizeof why)) {
        mx_say (false, "in-process: --to-uri: %s", why);
        return;
    }
    bool ran = points[i].finalize
                   ? mx_online (&mx_tgt, &r, sp, NULL, kill, "finalize", "--to-uri", mx_dst_uri, "-q",
                                "--writes-stopped", "--max-window", "0", "--retry-for", "1s", NULL)
                   : mx_online (&mx_tgt, &r, sp, NULL, kill, "run", "--to-uri", mx_dst_uri, "-q",
                                "--batch-size", "10", "--retry-for", "1s", NULL);
    snprintf (label, sizeof label, "in-process: %s --to-uri, %s:%s", cmd, call, action);
    if (!ran) {
        mx_say (false, "%s: %s", label, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    mx_label (label, sizeof label, points[i].finalize ? "finalize --to-uri" : "run --to-uri", call,
              action, &r);
    if (!points[i].finalize) {
        mx_pair_two (&again, "run");
        if (again.rc) {
            mx_say (false, "%s: exit %d; the run again: exit %d, not 0", label, r.rc, again.rc);
            mx_tail (&again);
            return;
        }
        mx_pair_two (&again, "finalize");
        if (again.rc) {
            mx_say (false, "%s: exit %d; the run again, then finalize: exit %d, not 0", label, r.rc,
                    again.rc);
            mx_tail (&again);
            return;
        }
        snprintf (what, sizeof what, "exit %d; the run again, finalize: exit 0", r.rc);
    } else if (r.rc == 0) {
        snprintf (what, sizeof what, "exit 0 (a retry took it)");
    } else {
        mx_pair_two (&again, "finalize");
        if (again.rc) {
            mx_say (false, "%s: exit %d; finalize again: exit %d, not 0", label, r.rc, again.rc);
            mx_tail (&r), mx_tail (&again);
            return;
        }
        snprintf (what, sizeof what, "exit %d; finalize again: exit 0%s", r.rc,
                  strstr (again.err, "already") ? " (committed already)" : "");
    }
    judge (label, what);
}

static void
stop_dst (void)
{
    mx_server_stop (&mx_dst);
}

static bool
lane_server (int lane, const char *dir)
{
    char why[1024] = "";
    mx_run_t r;
    bool ok = mx_pair_setup (dir, why, sizeof why);
    /* The same end as the first pair's, clean. */
    if (ok) {
        ok = mx_pair_two (&r, "finalize") && !r.rc;
        if (!ok)
            snprintf (why, sizeof why, "finalize: exit %d", r.rc);
    }
    mx_say (ok, "in-process: --to-uri lane %d: its pair seeded, run and finalized: %s", lane,
            ok ? "ok" : why);
    if (ok)
        judge ("in-process: --to-uri lane", "clean");
    return ok;
}

bool
mx_pair_plan (const mx_opts_t *o, char *plan, size_t cap)
{
    FILE *f;
    O = o;
    snprintf (plan, cap, "%s/emb.json", o->tmp);
    if (!(f = fopen (plan, "w")) || fputs (plan_text, f) < 0 || fclose (f)) {
        mx_say (false, "in-process: --to-uri: writing %s", plan);
        return false;
    }
    mx_tgt.plan = plan;
    return true;
}

bool
mx_to_uri_matrix (const mx_opts_t *o)
{
    static char plan[700];
    char why[1024] = "", dir[700], path[700], call[32];
    long npoints = 0;
    bool ok;

    if (!mx_pair_plan (o, plan, sizeof plan))
        return false;
    snprintf (dir, sizeof dir, "%s/to-uri", o->tmp);
    ok = offline (plan, why, sizeof why) && mx_pair_setup (dir, why, sizeof why) &&
         mx_state_read (mx_srv.client, MX_SCOPE_SHOP, &s_src, why, sizeof why) &&
         (run_calls = count ("run", "seeded", why, sizeof why)) > 0 &&
         (fin_calls = count ("finalize", "ran", why, sizeof why)) > 0 &&
         mx_state_read (mx_dst.client, MX_SCOPE_SHOP, &s_dst, why, sizeof why);
    if (!ok) {
        mx_say (false, "in-process: --to-uri: %s", why);
        mx_server_stop (&mx_srv), mx_server_stop (&mx_dst);
        return false;
    }
    mx_say (true, "in-process: --to-uri, counted: run %ld calls, finalize %ld", run_calls,
            fin_calls);
    /* The clean pair's destination: remodel run's output, byte for byte. */
    for (size_t i = 0; i < 3; i++) {
        mx_coll_t off;
        const mx_coll_t *got = mx_state_coll (&s_dst, data[i].name);
        snprintf (path, sizeof path, "%s/to-uri-off/shop/%s.bson", o->tmp, data[i].name);
        bool same = mx_coll_from_file (&off, data[i].name, path) && got &&
                    mx_coll_same_docs (got, &off);
        mx_say (same, "in-process: --to-uri, clean: the destination's shop.%s, %zu documents: "
                "remodel run's output, byte for byte", data[i].name, got ? got->count : 0);
        free (off.bytes);
    }
    mx_say (s_dst.ncoll == 3 && !strcmp (mx_state_coll (&s_dst, "other") ?
                                             mx_state_coll (&s_dst, "other")->indexes : "", "_id_ v_1"),
            "in-process: --to-uri, clean: the destination holds only the final names, "
            "shop.other with its index v_1");
    judge ("in-process: --to-uri, clean", "run, finalize");
    mx_server_stop (&mx_srv), mx_server_stop (&mx_dst);

    points = calloc ((size_t) (run_calls + fin_calls) * 4 + 1, sizeof *points);
    /* The run cut and killed at each call (a buildInfo unanswered as it
     * connects once left the pair recorded without the server's version,
     * and the run again refused: now it connects again, or fails). */
    for (int a = 0; a < o->nacts; a++)
        for (long k = 1; k <= run_calls; k++) {
            snprintf (call, sizeof call, "any:%ld", k);
            if (mx_wanted (o, "run", call, o->acts[a]))
                points[npoints++] = (point_t) {false, k, a};
        }
    for (int a = 0; a < o->nacts; a++)
        for (long k = 1; k <= fin_calls; k++) {
            snprintf (call, sizeof call, "any:%ld", k);
            if (mx_wanted (o, "finalize", call, o->acts[a]))
                points[npoints++] = (point_t) {true, k, a};
        }
    mx_lanes (o, "to-uri", npoints, lane_server, point, stop_dst);
    fprintf (stderr, "# in-process: --to-uri: %ld points (run's %ld calls, finalize's %ld)\n",
             npoints, run_calls, fin_calls);
    free (points);
    mx_state_free (&s_src), mx_state_free (&s_dst);
    return true;
}
