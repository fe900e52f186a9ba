/* remodel-fault-matrix: the fault layer's matrix of `online finalize` and
 * `rollback` run in-process against the in-memory server (tests/mem/),
 * for make check (tests/cli/test_online_fault_matrix.sh calls it). A test
 * program only, never linked into the product. Its parts:
 *   matrix_child.c  one online command in a forked child, through the
 *                   online program's own main (no exec), a fault spec in
 *                   its environment, killed at its call when asked;
 *   matrix_server.c the in-memory server (one child), its snapshots, the
 *                   crm data filled, the offline engine's reference;
 *   matrix_state.c  the server's state read (every document of a
 *                   database, the state database's collections, the
 *                   plan's record) and compared with a reference;
 *   matrix_common.c the PASS/FAIL lines, a judgement, the lanes;
 *   matrix_switch.c finalize's and rollback's matrix;
 *   matrix_carry.c  rollback --carry-writes' matrix;
 *   matrix_to_uri.c run --to-uri's and finalize --to-uri's matrix;
 *   matrix_main.c   the options, then each matrix. */
#ifndef MATRIX_H
#define MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mongoc/mongoc.h>

/* --- matrix_child.c --- */
typedef struct {
    int rc;          /* exit status; 128+N when killed by signal N */
    bool killed;     /* killed by us at its faulted call */
    char err[32768]; /* its standard error (the start when longer) */
} mx_run_t;

typedef struct {
    const char *uri;
    const char *plan;
} mx_target_t;

/* The online program's main, its symbol renamed in a copy of its object
 * (the Makefile's rule for this program). */
int remodel_online_main (int argc, char **argv);
/* `remodel online CMD PLAN --uri URI ARGS...` (ARGS ends with NULL) in a
 * forked child: fault (NULL: none) as REMODEL_ONLINE_FAULT, log (NULL:
 * none) as REMODEL_ONLINE_FAULT_LOG; kill: the child SIGKILLed once the
 * fault layer says the faulted call came (the spec holds it by a delay).
 * False when it could not run, or a kill's call never came (said in err). */
bool mx_online (const mx_target_t *t, mx_run_t *r, const char *fault, const char *log, bool kill_at,
                const char *cmd, ...);
/* Set: the child's standard output goes into err as well (status's lines). */
extern bool mx_online_stdout;
/* Set: the child gets SIGINT once its standard error holds this (follow
 * stopped after a round). */
extern const char *mx_online_interrupt_at;
/* Set: called once the fault layer says the faulted call came (the child
 * held there by a delay), before a kill_at's kill. */
extern void (*mx_online_at_fault) (pid_t pid);
/* The fault layer's line about the faulted call ("call N (KIND #K) ..."),
 * or "no fault fired". */
const char *mx_fired (const mx_run_t *r, char *buf, size_t cap);

/* --- matrix_server.c --- */
typedef struct {
    pid_t pid;
    char uri[128];
    mongoc_client_t *client;
} mx_server_t;

/* changelog: a primary with its oplog (--repl-set rs0 --oplog). */
bool mx_server_start (mx_server_t *s, const char *memsrv, const char *dir, bool changelog,
                      char *why, size_t cap);
void mx_server_stop (mx_server_t *s);
/* {CMD: NAME} on the admin database (memSnapshot, memRestore). */
bool mx_server_cmd (mx_server_t *s, const char *cmd, const char *name, char *why, size_t cap);
/* crm and the state database dropped, then 8 people and 24 tasks. */
bool mx_fill (mx_server_t *s, char *why, size_t cap);
/* The filled documents as a mongodump directory under dir/orig, and
 * `remodel run PLAN` over it into dir/off (the offline engine's output). */
bool mx_offline (const char *remodel, const char *plan, const char *dir, char *why, size_t cap);
/* remodel run -q --force PLAN --from FROM --to TO. */
bool mx_run_offline (const char *remodel, const char *plan, const char *from, const char *to,
                     char *why, size_t cap);

/* --- matrix_state.c --- */
typedef struct {
    char name[128];
    char indexes[256]; /* its indexes' names, sorted, space-separated */
    uint8_t *bytes;    /* every document, in _id order, back to back */
    size_t len, count;
} mx_coll_t;

typedef struct {
    mx_coll_t coll[32];     /* crm's collections, by name */
    size_t ncoll;
    char state_names[1024]; /* the state database's collections, sorted, space-separated */
    bool record, finalized, journal, after_switch;
    /* The switch's journal, when there is one: its direction, its
     * renames in all and in place, its moves' collections in order. */
    char direction[16], moves[256];
    long long renames, renamed;
} mx_state_t;

/* What a state holds: crm, the state database's collections and the
 * plan's record; or shop's collections but the results (a carry's
 * originals, any stage left); or all of shop's. Each collection's
 * indexes by name too. */
enum { MX_SCOPE_CRM, MX_SCOPE_SHOP_ORIGINALS, MX_SCOPE_SHOP };
bool mx_state_read (mongoc_client_t *c, unsigned scope, mx_state_t *st, char *why, size_t cap);
void mx_state_free (mx_state_t *st);
/* Whether got is want, document for document, byte for byte, and no
 * collection else; what differs first into why. */
bool mx_state_same (const mx_state_t *got, const mx_state_t *want, char *why, size_t cap);
const mx_coll_t *mx_state_coll (const mx_state_t *st, const char *name);
/* The documents of a mongodump .bson file, in _id order (as a collection
 * read back): false when unreadable. */
bool mx_coll_from_file (mx_coll_t *c, const char *name, const char *path);
void mx_coll_append (mx_coll_t *c, const bson_t *d);
/* Whether a and b hold the same documents, byte for byte (any order). */
bool mx_coll_same_docs (const mx_coll_t *a, const mx_coll_t *b);

/* --- matrix_common.c --- */
typedef struct {
    const char *memsrv, *remodel, *plan, *tmp;
    const char *only; /* "CMD CALL:ACTION": that point alone ("PREFIX*": those so named) */
    char acts[4][16]; /* cut, cut-after, kill, fail (the layer's failure reply) */
    int nacts, lanes;
    bool full; /* the campaign's: every action everywhere */
} mx_opts_t;

extern int mx_passes, mx_failures;
extern mx_server_t mx_srv; /* this process's (a lane's) server */
extern mx_target_t mx_tgt;

void mx_say (bool ok, const char *fmt, ...) BSON_GNUC_PRINTF (2, 3);
/* The last lines of a command's standard error, to ours. */
void mx_tail (const mx_run_t *r);
/* memRestore snap; a FAIL line named label when it fails. */
bool mx_restore (const char *snap, const char *label);
/* The state now against want: a PASS or FAIL line "label: what". */
bool mx_judge (const mx_state_t *want, unsigned scope, const char *label, const char *what);
/* The fault layer's spec for action at call ("any:12", "update:3"). */
void mx_spec (char *out, size_t cap, const char *call, const char *action);
void mx_label (char *out, size_t cap, const char *cmd, const char *call, const char *action,
               const mx_run_t *r);
bool mx_wanted (const mx_opts_t *o, const char *cmd, const char *call, const char *action);
/* fork (), the child set to end (SIGKILL) when its parent does, so that
 * no lane, server, proxy or command outlives a matrix killed at its
 * deadline. */
pid_t mx_fork (void);
/* Points 0..npoints-1 dealt to o->lanes forked processes, each with a
 * server of its own made by setup (lane, its directory); their lines
 * printed lane by lane and counted; teardown (or NULL) at a lane's end
 * stops what else it started. A point's time is mostly waiting (a
 * round trip's wake-ups, a fork), so lanes overlap it. */
void mx_lanes (const mx_opts_t *o, const char *name, long npoints, bool (*setup) (int, const char *),
               void (*point) (long), void (*teardown) (void));

/* --- matrix_switch.c: the switch's references, from clean runs of the
 * plan (dumps/plans/embed-tasks.json: crm.people and crm.tasks, one step
 * each): after the run, finalize, rollback, a second rollback. --- */
typedef struct {
    mx_state_t run, fin, rb, gone;
    char id[64];    /* the plan's id on the server */
    char flog[700]; /* finalize's calls, as the fault layer's log numbers them */
} mx_switch_refs_t;
extern mx_switch_refs_t mx_sw;
/* After finalize (from the run) or rollback (from a finalize) was
 * interrupted, r its end: the same command again where it failed, then
 * the state judged against the clean one's, and the way back (PASS or
 * FAIL lines named label). */
void mx_finalize_then (const char *label, const mx_run_t *r);
void mx_rollback_then (const char *label, const mx_run_t *r);

/* --- matrix_killed.c: the switch killed (test_online_switch.sh's kill
 * points): the state a kill leaves judged, then completed each way. --- */
/* The state now, after a kill: every namespace before, half-way through
 * or after its move, in the journal's order, its count agreeing, every
 * document the original's or the result's byte for byte; a PASS or FAIL
 * line. */
bool mx_killed_judge (const char *label);
/* finalize killed at call k, then rollback at once; killed at k and again
 * at its second run's first rename, then finalize; rollback (after a finalize)
 * killed at k, then finalize forward, then rollback. */
void mx_kill_undo_point (long k);
void mx_kill_twice_point (long k);
void mx_kill_forward_point (long k);

/* --- matrix_lease.c: the lease, at finalize's calls (from mx_sw.flog). --- */
/* The calls at which a point is: "ask", each call while finalize holds
 * its lease; "stall", reads spread over that span. Their numbers into ks
 * (at most cap); how many. */
long mx_lease_calls (const char *kind, long *ks, long cap);
/* finalize held at call k, another command asks: refused, nothing
 * written. */
void mx_lease_ask_point (long k);
/* finalize stopped (SIGSTOP) at call k past its lease's expiry, rollback
 * takes over; then SIGCONT: finalize writes nothing more, says so. */
void mx_lease_stall_point (long k);

/* --- matrix_proxy.c: a partition, between the program and the server --- */
typedef struct {
    volatile long skip, cut, seen; /* messages to let through, then to cut; seen in all */
    volatile int lose_first;       /* the stretch's first sent, its reply lost */
    /* While note_renames: the count of messages before each that names
     * renameCollection (the switch's), the first MX_RENAMES of them. */
    volatile int note_renames, n_renames;
    volatile long renames[8];
} mx_cut_t;
#define MX_RENAMES 8
typedef struct {
    pid_t pid;
    char uri[128];
    mx_cut_t *ctl; /* shared with the proxy's process */
} mx_proxy_t;
bool mx_proxy_start (mx_proxy_t *x, const char *upstream_uri, char *why, size_t cap);
void mx_proxy_stop (mx_proxy_t *x);

/* --- matrix_partition.c: finalize and rollback through a partition --- */
extern mx_proxy_t mx_px; /* this lane's, to its server */
/* The messages a clean finalize (from "run") and rollback (from "fin")
 * send through the proxy; false (said) when they could not run. */
bool mx_partition_count (long *fin, long *rb);
/* finalize's renames as the count saw them: each the skip that puts a
 * stretch's first message on it (mx_cut_t.renames); their number. */
int mx_partition_renames (long *ks, int cap);
/* The server unreachable for a stretch after skip messages: finalize (or
 * rollback) rides it out or fails, then completes; judged as a cut. */
void mx_partition_point (bool rollback, long skip, bool lose_first);

/* --- matrix_to_uri.c: the pair of servers, for matrix_follow.c: the
 * source (mx_srv, with its oplog) and the destination. --- */
extern mx_server_t mx_dst;
extern char mx_dst_uri[160];
/* The pair's plan (shop.kids embedded into shop.parents) written under
 * o->tmp, as mx_tgt's. */
bool mx_pair_plan (const mx_opts_t *o, char *plan, size_t cap);
/* Both servers started under dir, the source seeded (snapshot "seeded"),
 * run --to-uri made (snapshot "ran"). */
bool mx_pair_setup (const char *dir, char *why, size_t cap);
/* memSnapshot or memRestore snap on both. */
bool mx_pair_both (const char *cmd, const char *snap, char *why, size_t cap);
/* run --to-uri (small batches) or finalize --to-uri --writes-stopped, clean. */
bool mx_pair_two (mx_run_t *r, const char *cmd);
/* The destination's shop and the source's against the references, one
 * pair record, committed: a PASS or FAIL line. */
void mx_pair_judge (const char *label, const char *what, const mx_state_t *want_dst,
                    const mx_state_t *want_src);

/* --- matrix_switch.c, matrix_carry.c: each matrix, its PASS/FAIL lines;
 * false when its references could not be made. --- */
bool mx_switch_matrix (const mx_opts_t *o);
bool mx_carry_matrix (const mx_opts_t *o);
bool mx_to_uri_matrix (const mx_opts_t *o);
bool mx_follow_matrix (const mx_opts_t *o);

#endif
