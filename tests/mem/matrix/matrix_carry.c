/* The carry's matrix (matrix.h): `online rollback --carry-writes` with each
 * of its server calls cut before it is sent, cut after it and the command
 * killed at it, on the in-memory server with its oplog. The plan and the
 * writes are tests/cli/test_online_fault_carry.sh's: shop.orders get
 * their customer's name (denormalize), shop.customers their orders' total
 * and count (summarize); finalized, then the application writes both
 * designs' collections (an order changed, one inserted, one deleted; a
 * customer renamed, one's total rewritten, one inserted).
 * The reference is a carry without a fault, itself checked against the
 * originals as filled with the application's writes carried back by hand.
 * Per point: the carry with the fault; when it failed, the carry again
 * (exit 0); then shop's originals are the reference's, every document
 * byte for byte, and shop holds no collection else but the results.
 * Calls are named by kind and number ("update:3"), as the shell suite
 * names them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "matrix.h"

static const char plan_text[] =
    "{\"remodel\": 1, \"steps\": [\n"
    "  {\"denormalize\": {\"in\": \"shop.orders\", \"from\": \"shop.customers\", \"localField\": "
    "\"cust\", \"fields\": {\"cust_name\": \"name\"}}},\n"
    "  {\"summarize\": {\"into\": \"shop.customers\", \"from\": \"shop.orders\", \"localField\": "
    "\"_id\", \"foreignField\": \"cust\", \"fields\": {\"total\": {\"$sum\": \"$qty\"}, \"n\": "
    "{\"$sum\": 1}}}}]}\n";

static const mx_opts_t *O;
static mx_state_t s_before, s_carry;
static char (*calls)[48];
static long ncalls;

typedef struct {
    long call;
    int act;
} point_t;
static point_t *points;

static void
customer (bson_t *d, int i, const char *name, int tier)
{
    char n[16];
    snprintf (n, sizeof n, "c%d", i);
    bson_init (d);
    BSON_APPEND_INT32 (d, "_id", i);
    BSON_APPEND_UTF8 (d, "name", name ? name : n);
    BSON_APPEND_INT32 (d, "tier", tier);
}

static void
order (bson_t *d, int i, int qty)
{
    char note[16];
    snprintf (note, sizeof note, "o%d", i);
    bson_init (d);
    BSON_APPEND_INT32 (d, "_id", 100 + i);
    BSON_APPEND_INT32 (d, "cust", i % 20);
    BSON_APPEND_INT32 (d, "qty", qty);
    BSON_APPEND_UTF8 (d, "note", note);
}

static bool
insert (const char *coll, const bson_t *d, bson_error_t *err)
{
    mongoc_collection_t *c = mongoc_client_get_collection (mx_srv.client, "shop", coll);
    bool ok = mongoc_collection_insert_one (c, d, NULL, NULL, err);
    mongoc_collection_destroy (c);
    return ok;
}

static bool
seed (bson_error_t *err)
{
    const char *dbs[] = {"remodel", "shop"};
    bool ok = true;
    for (size_t i = 0; i < 2 && ok; i++) {
        mongoc_database_t *db = mongoc_client_get_database (mx_srv.client, dbs[i]);
        ok = mongoc_database_drop (db, err) || err->code == 26;
        mongoc_database_destroy (db);
    }
    for (int i = 0; i < 20 && ok; i++) {
        bson_t d;
        customer (&d, i, NULL, i % 3);
        ok = insert ("customers", &d, err);
        bson_destroy (&d);
    }
    for (int i = 0; i < 120 && ok; i++) {
        bson_t d;
        order (&d, i, i % 7);
        ok = insert ("orders", &d, err);
        bson_destroy (&d);
    }
    return ok;
}

static bool
update (const char *coll, int id, const bson_t *set, bson_error_t *err)
{
    mongoc_collection_t *c = mongoc_client_get_collection (mx_srv.client, "shop", coll);
    bson_t *q = BCON_NEW ("_id", BCON_INT32 (id)), u = BSON_INITIALIZER;
    BSON_APPEND_DOCUMENT (&u, "$set", set);
    bool ok = mongoc_collection_update_one (c, q, &u, NULL, NULL, err);
    bson_destroy (q);
    bson_destroy (&u);
    mongoc_collection_destroy (c);
    return ok;
}

/* The application's writes after the switch, to the new design. */
static bool
app_writes (bson_error_t *err)
{
    mongoc_collection_t *o = mongoc_client_get_collection (mx_srv.client, "shop", "orders");
    bson_t *qty = BCON_NEW ("qty", BCON_INT32 (40)), *name = BCON_NEW ("name", BCON_UTF8 ("renamed"));
    bson_t *total = BCON_NEW ("total", BCON_INT32 (1000)), *gone = BCON_NEW ("_id", BCON_INT32 (110));
    bson_t *o900 = BCON_NEW ("_id", BCON_INT32 (900), "cust", BCON_INT32 (3), "qty", BCON_INT32 (2),
                             "note", BCON_UTF8 ("new"), "cust_name", BCON_UTF8 ("c3"));
    bson_t *c50 = BCON_NEW ("_id", BCON_INT32 (50), "name", BCON_UTF8 ("c50"), "tier",
                            BCON_INT32 (1), "total", BCON_INT32 (0), "n", BCON_INT32 (0));
    bool ok = update ("orders", 105, qty, err) && insert ("orders", o900, err) &&
              mongoc_collection_delete_one (o, gone, NULL, NULL, err) &&
              update ("customers", 4, name, err) && update ("customers", 5, total, err) &&
              insert ("customers", c50, err);
    bson_destroy (qty), bson_destroy (name), bson_destroy (total), bson_destroy (gone);
    bson_destroy (o900), bson_destroy (c50);
    mongoc_collection_destroy (o);
    return ok;
}

/* Seeded, run, finalized, written to: snapshot "carried". */
static bool
carried_setup (char *why, size_t cap)
{
    bson_error_t err = {0};
    mx_run_t r;
    if (!seed (&err) || !(mx_online (&mx_tgt, &r, NULL, NULL, false, "run", "-q", NULL) && !r.rc) ||
        !(mx_online (&mx_tgt, &r, NULL, NULL, false, "finalize", "--writes-stopped", "-q", NULL) &&
          !r.rc) ||
        !app_writes (&err)) {
        snprintf (why, cap, "seeding, run, finalize, writes: %s%s", err.message,
                  *err.message ? "" : r.err);
        return false;
    }
    return mx_server_cmd (&mx_srv, "memSnapshot", "carried", why, cap);
}

/* The originals the carry must leave, made here: as filled, with the
 * application's writes carried back through the plan's inverse (no
 * cust_name on an order, no total or n on a customer). */
static bool
check_reference (void)
{
    mx_coll_t want[2] = {{.name = "customers"}, {.name = "orders"}};
    bson_t d;
    bool ok = true;
    for (int i = 0; i < 20; i++) {
        customer (&d, i, i == 4 ? "renamed" : NULL, i % 3);
        mx_coll_append (&want[0], &d);
        bson_destroy (&d);
    }
    customer (&d, 50, NULL, 1); /* as the application inserted it */
    mx_coll_append (&want[0], &d);
    bson_destroy (&d);
    for (int i = 0; i < 120; i++) {
        if (i == 10)
            continue;
        order (&d, i, i == 5 ? 40 : i % 7);
        mx_coll_append (&want[1], &d);
        bson_destroy (&d);
    }
    d = (bson_t) BSON_INITIALIZER;
    BSON_APPEND_INT32 (&d, "_id", 900);
    BSON_APPEND_INT32 (&d, "cust", 3);
    BSON_APPEND_INT32 (&d, "qty", 2);
    BSON_APPEND_UTF8 (&d, "note", "new");
    mx_coll_append (&want[1], &d);
    bson_destroy (&d);
    for (int i = 0; i < 2; i++) {
        const mx_coll_t *got = mx_state_coll (&s_carry, want[i].name);
        bool same = got && mx_coll_same_docs (got, &want[i]);
        mx_say (same, "in-process: carry without a fault: shop.%s, %zu documents: the originals "
                "with the application's writes carried back, byte for byte", want[i].name,
                got ? got->count : 0);
        ok = ok && same;
        free (want[i].bytes);
    }
    return ok;
}

static bool
carry (mx_run_t *r, const char *fault, const char *log, bool kill)
{
    return mx_online (&mx_tgt, r, fault, log, kill, "rollback", "--carry-writes", "--retry-for",
                      "2s", NULL);
}

/* The calls of a carry without a fault, as KIND:K in the order made, and
 * its state as the reference. */
static bool
count_calls (const char *log)
{
    mx_run_t r;
    char line[512], why[512], name[48];
    long n, k;
    FILE *f;
    int carried = 0;

    remove (log);
    if (!mx_restore ("carried", "in-process: carry") || !carry (&r, "count", log, false) || r.rc) {
        mx_say (false, "in-process: carry under the fault layer, counting: exit %d", r.rc);
        mx_tail (&r);
        return false;
    }
    for (const char *p = r.err; (p = strstr (p, "carried back into shop.")); p++)
        carried++;
    mx_say (carried == 2, "in-process: carry under the fault layer, counting: exit 0, both "
            "originals carried into (%d)", carried);
    if (!(f = fopen (log, "r")))
        return false;
    while (fgets (line, sizeof line, f))
        if (sscanf (line, "%ld %47s %ld", &n, name, &k) == 3) {
            calls = realloc (calls, (size_t) (ncalls + 1) * sizeof *calls);
            snprintf (calls[ncalls++], sizeof *calls, "%s:%ld", name, k);
        }
    fclose (f);
    if (!mx_state_read (mx_srv.client, MX_SCOPE_SHOP_ORIGINALS, &s_carry, why, sizeof why)) {
        mx_say (false, "in-process: carry: %s", why);
        return false;
    }
    return ncalls > 0;
}

static bool
lane_server (int lane, const char *dir)
{
    char why[1024] = "";
    mx_state_t st;
    bool ok;
    mkdir (dir, 0755);
    ok = mx_server_start (&mx_srv, O->memsrv, dir, true, why, sizeof why);
    mx_tgt.uri = mx_srv.uri;
    ok = ok && carried_setup (why, sizeof why) &&
         mx_state_read (mx_srv.client, MX_SCOPE_SHOP_ORIGINALS, &st, why, sizeof why);
    if (ok) {
        ok = mx_state_same (&st, &s_before, why, sizeof why);
        mx_state_free (&st);
    }
    mx_say (ok, "in-process: carry lane %d: its server seeded, run, finalized and written to as "
            "the first: %s", lane, ok ? "the same state" : why);
    return ok;
}

static void
point (long i)
{
    const char *call = calls[points[i].call], *action = O->acts[points[i].act];
    char sp[80], label[400], what[200];
    mx_run_t r, again;

    if (!mx_restore ("carried", "in-process: carry"))
        return;
    mx_spec (sp, sizeof sp, call, action);
    if (!carry (&r, sp, NULL, !strcmp (action, "kill"))) {
        mx_say (false, "in-process: carry, %s: %s", sp, strstr (r.err, "\n(") ?: r.err);
        return;
    }
    mx_label (label, sizeof label, "rollback --carry-writes", call, action, &r);
    if (r.rc == 0) {
        snprintf (what, sizeof what, "exit 0 (a retry took it)");
    } else {
        carry (&again, NULL, NULL, false);
        if (again.rc != 0) {
            mx_say (false, "%s: exit %d; the carry again: exit %d, not 0", label, r.rc, again.rc);
            mx_tail (&r), mx_tail (&again);
            return;
        }
        snprintf (what, sizeof what, "exit %d; the carry again: exit 0", r.rc);
    }
    strncat (what, ": the originals the carry's without a fault, byte for byte, no stage left",
             sizeof what - strlen (what) - 1);
    mx_judge (&s_carry, MX_SCOPE_SHOP_ORIGINALS, label, what);
}

bool
mx_carry_matrix (const mx_opts_t *o)
{
    char why[1024] = "", plan[700], log[700];
    long npoints = 0;
    FILE *f;

    O = o;
    snprintf (plan, sizeof plan, "%s/both.json", o->tmp);
    snprintf (log, sizeof log, "%s/carry-calls.log", o->tmp);
    if (!(f = fopen (plan, "w")) || fputs (plan_text, f) < 0 || fclose (f)) {
        mx_say (false, "in-process: carry: writing %s", plan);
        return false;
    }
    mx_tgt.plan = plan;
    bool ok = mx_server_start (&mx_srv, o->memsrv, o->tmp, true, why, sizeof why);
    mx_tgt.uri = mx_srv.uri;
    ok = ok && carried_setup (why, sizeof why) &&
         mx_state_read (mx_srv.client, MX_SCOPE_SHOP_ORIGINALS, &s_before, why, sizeof why);
    if (!ok)
        mx_say (false, "in-process: carry: %s", why);
    ok = ok && count_calls (log) && check_reference ();
    mx_server_stop (&mx_srv);
    if (!ok)
        return false;
    points = calloc ((size_t) ncalls * 4 + 1, sizeof *points);
    for (int a = 0; a < o->nacts; a++)
        for (long k = 0; k < ncalls; k++)
            if (mx_wanted (o, "carry", calls[k], o->acts[a]))
                points[npoints++] = (point_t) {k, a};
    mx_lanes (o, "carry", npoints, lane_server, point, NULL);
    fprintf (stderr, "# in-process: rollback --carry-writes: %ld points (its %ld calls)\n", npoints,
             ncalls);
    free (points);
    free (calls);
    mx_state_free (&s_before);
    mx_state_free (&s_carry);
    return true;
}
