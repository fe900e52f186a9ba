/* A pass's partitions as a run keeps them (online_state.h; issue 37):
 * their bounds in the plan's record, each one's checkpoint in the state
 * database.
 *
 *   plans       {..., partitions: {"<step>" or "<step>/<pass>": [part...]}}:
 *               the bounds (online_partition.c), computed the first time
 *               the plan's run reaches the pass and recorded then, by the
 *               lease's holder; a run that resumes reads them back, so a
 *               partition's checkpoint always means the same range
 *               (--restart and rollback forget them with the checkpoints)
 *   partitions  {_id: "<plan id>:<key>#<k>", plan, step, pass, part, of,
 *               ns, state: "running" or "done", owner, epoch, last, seen,
 *               changed, updated}: partition k's checkpoint, fenced by the
 *               lease's epoch as the pass's own is (online_state.c)
 *
 * A pass of one partition keeps only its own checkpoint, as before
 * partitions: a run begun by an older remodel resumes from it.
 *
 * The recorded bounds are believed only when they tile the _ids' order
 * (parts_tile): a record changed by hand or damaged is refused, naming
 * the plan, the step and the partition, never read past (a gap's _ids
 * left unwritten with every partition done) nor aborted on (issue 50). */
#include <stdio.h>
#include <string.h>

#include "online_state.h"
#include "remodel/cli.h"
#include "remodel/value.h"

/* Without --partitions: about this many documents a partition, none
 * under half as many; with --workers above 1, at least four partitions a
 * worker (so that a fast one takes more), none under PART_DOCS_FLOOR. */
#define PART_DOCS_DEFAULT 1000000
#define PART_DOCS_FLOOR 10000
#define PARTS_PER_WORKER 4

static void
pass_key (const rm_step_t *s, size_t p, char *buf, size_t cap)
{
    if (p == 0)
        snprintf (buf, cap, "%zu", s->index);
    else
        snprintf (buf, cap, "%zu/%zu", s->index, p + 1);
}

void
online_part_key (online_t *on, const rm_step_t *s, size_t p, uint32_t k, char *buf, size_t cap)
{
    char key[64];
    pass_key (s, p, key, sizeof key);
    snprintf (buf, cap, "%s:%s#%u", on->run->names.id, key, k);
}


/* A bound of a recorded partition (key "lo" or "hi"): absent (*b's kind
 * NULL), or a document of one element whose kind is one of the two the
 * key allows (lo: after a value, from a bracket; hi: up to a value, below
 * a bracket), a bracket named by its $type alias. False: none of these. */
typedef struct {
    const char *kind;   /* NULL: absent */
    bson_iter_t v;
    bool value;         /* after or upto: v is the value; else a bracket's alias */
} bound_t;

static bool
bound_read (const bson_t *part, const char *key, bound_t *b)
{
    bson_iter_t it;
    b->kind = NULL;
    if (!bson_iter_init_find (&it, part, key))
        return true;
    if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &b->v) ||
        !bson_iter_next (&b->v))
        return false;
    b->kind = bson_iter_key (&b->v);
    b->value = !strcmp (b->kind, !strcmp (key, "lo") ? "after" : "upto");
    if (!b->value && strcmp (b->kind, !strcmp (key, "lo") ? "from" : "below"))
        return false;
    if (!b->value && (!BSON_ITER_HOLDS_UTF8 (&b->v) ||
                      online_range_bracket_type (bson_iter_utf8 (&b->v, NULL)) == BSON_TYPE_EOD))
        return false;
    {
        bson_iter_t more = b->v;
        return !bson_iter_next (&more);
    }
}

/* Where a bound falls in MongoDB's order: its bracket's rank (a value's
 * type's, or the aliased bracket's). */
static int
bound_rank (const bound_t *b)
{
    return rm_value_canonical_type (b->value ? bson_iter_type (&b->v)
                                             : online_range_bracket_type (bson_iter_utf8 (&b->v,
                                                                                          NULL)));
}

/* lo before hi: a range that holds some of the order. */
static bool
bounds_ordered (const bound_t *lo, const bound_t *hi)
{
    if (!lo->kind || !hi->kind)
        return true;
    if (lo->value && hi->value)
        return rm_value_compare (&lo->v, &hi->v) < 0;
    if (hi->value) /* from a bracket, up to a value: the value in or past it */
        return bound_rank (hi) >= bound_rank (lo);
    return bound_rank (lo) < bound_rank (hi); /* a value or a bracket, below a bracket */
}

/* Partition k+1 begins where partition k ends: up to v, then after v; or
 * below a bracket, then from it. */
static bool
bounds_meet (const bound_t *hi, const bound_t *lo)
{
    if (!hi->kind || !lo->kind || hi->value != lo->value)
        return false;
    if (hi->value)
        return rm_value_compare (&hi->v, &lo->v) == 0;
    return online_range_bracket_type (bson_iter_utf8 (&hi->v, NULL)) ==
           online_range_bracket_type (bson_iter_utf8 (&lo->v, NULL));
}

/* A pass's recorded partitions are believed only when they tile MongoDB's
 * order: each a document with bounds as online_partition.c writes them,
 * the first from the start, the last to the end, each beginning where the
 * one before ends, none empty. A gap would leave its _ids unread with
 * every partition done, an overlap read them twice; and a record written
 * by hand or damaged must not abort the program (bson_iter_document on
 * what is not a document). What is wrong goes into why, naming the
 * partition. */
static bool
parts_tile (const bson_t *parts, char *why, size_t cap)
{
    bson_iter_t it;
    bound_t prev_hi = {NULL};
    uint32_t k = 0, n = bson_count_keys (parts);

    for (bson_iter_init (&it, parts); bson_iter_next (&it); k++) {
        const uint8_t *data;
        uint32_t len;
        bson_t part;
        bound_t lo, hi;
        if (!BSON_ITER_HOLDS_DOCUMENT (&it)) {
            snprintf (why, cap, "partition %u of %u is not a document", k + 1, n);
            return false;
        }
        bson_iter_document (&it, &len, &data);
        if (!bson_init_static (&part, data, len) || !bound_read (&part, "lo", &lo) ||
            !bound_read (&part, "hi", &hi)) {
            snprintf (why, cap, "partition %u of %u has a bound that is not one", k + 1, n);
            return false;
        }
        if (k == 0 && lo.kind) {
            snprintf (why, cap, "partition 1 of %u does not begin at the start of the _ids", n);
            return false;
        }
        if (k > 0 && !bounds_meet (&prev_hi, &lo)) {
            snprintf (why, cap, "partition %u of %u does not begin where partition %u ends (a "
                      "gap or an overlap between them)", k + 1, n, k);
            return false;
        }
        if (!bounds_ordered (&lo, &hi)) {
            snprintf (why, cap, "partition %u of %u ends before it begins", k + 1, n);
            return false;
        }
        if (k + 1 == n && hi.kind) {
            snprintf (why, cap, "partition %u of %u does not reach the end of the _ids", k + 1, n);
            return false;
        }
        /* The iterators point into parts, which outlives the loop. */
        prev_hi = hi;
    }
    return true;
}

/* The state database's record is not what a run wrote: refused, naming
 * the plan, the pass's key and the fault, with the way out. */
static bool
record_refused (online_t *on, const char *key, const char *fault, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_DATA, "%s: plan %s, step %s: its partitions in %s.plans "
                  "(partitions.%s) are not what a run records: %s; the state database was "
                  "changed or is damaged: remodel online run %s --restart starts the plan over "
                  "(what it wrote stays)", on->run->where, on->run->names.name, key, on->run->o->state_db, key,
                  fault, on->run->o->plan_path);
    return false;
}

/* The record's partitions of key into parts: *there false when none; an
 * error when the record holds something else than partitions that tile
 * the order (parts_tile). */
static bool
recorded (online_t *on, const bson_t *record, const char *key, bson_t *parts, bool *there,
          bson_error_t *err)
{
    bson_iter_t it, sub;
    const uint8_t *data;
    uint32_t len;
    bson_t view;
    char why[200];

    *there = false;
    if (!bson_iter_init_find (&it, record, "partitions"))
        return true;
    if (!BSON_ITER_HOLDS_DOCUMENT (&it) || !bson_iter_recurse (&it, &sub))
        return record_refused (on, key, "\"partitions\" is not a document", err);
    if (!bson_iter_find (&sub, key))
        return true;
    if (!BSON_ITER_HOLDS_ARRAY (&sub))
        return record_refused (on, key, "not an array of partitions", err);
    bson_iter_array (&sub, &len, &data);
    if (!bson_init_static (&view, data, len))
        return record_refused (on, key, "not an array of partitions", err);
    if (bson_empty (&view))
        return record_refused (on, key, "no partition", err);
    if (!parts_tile (&view, why, sizeof why))
        return record_refused (on, key, why, err);
    bson_reinit (parts);
    bson_concat (parts, &view);
    *there = true;
    return true;
}

bool
online_parts_get (online_t *on, const online_cp_where_t *at, mongoc_collection_t *c, bool one,
                  bool may_record, bson_t *parts, bson_error_t *err)
{
    const rm_step_t *s = at->s;
    size_t p = at->p;
    char key[64], field[96], no_sample[300] = "";
    bson_t record, sample = BSON_INITIALIZER, *set;
    bool found, ok, there = false;
    int64_t total = -1, want = on->run->o->partitions; /* total: not counted yet */
    online_partition_in_t in;

    pass_key (s, p, key, sizeof key);
    ok = online_state_get (on, "plans", on->run->names.id, &record, &found, "reading the plan's record",
                           err) &&
         recorded (on, &record, key, parts, &there, err);
    if (ok && there) {
        bson_destroy (&record);
        bson_destroy (&sample);
        return true;
    }
    bson_destroy (&record);
    if (!ok || !may_record) {
        bson_reinit (parts);
        bson_destroy (&sample);
        return ok;
    }
    /* Without --partitions, by the count from the server's metadata (no
     * scan). */
    if (one)
        want = 1;
    else if (want <= 0) {
        total = online_estimated_of (on, c, NULL);
        want = total > 0 ? total / PART_DOCS_DEFAULT + 1 : 1;
        if (on->run->o->workers > 1 && want < PARTS_PER_WORKER * on->run->o->workers)
            want = PARTS_PER_WORKER * on->run->o->workers;
    }
    /* The count just read is the sample's too: not asked twice. */
    ok = total >= 0 ? online_partition_sample_of (on, c, (int) want, total, &sample, no_sample,
                                                  sizeof no_sample, err)
                    : online_partition_sample (on, c, (int) want, &sample, &total, no_sample,
                                               sizeof no_sample, err);
    in = (online_partition_in_t) {.sample = &sample, .total = total, .want = (int) want,
                                  /* --partitions asks for that many whatever the size */
                                  .small = on->run->o->partitions > 0 || one ? 0
                                           : on->run->o->workers > 1 ? PART_DOCS_FLOOR
                                                                : PART_DOCS_DEFAULT / 2};
    bson_reinit (parts);
    ok = ok && online_partition_compute (&in, parts, err);
    bson_destroy (&sample);
    if (!ok)
        return false;
    snprintf (field, sizeof field, "partitions.%s", key);
    set = bson_new ();
    {
        bson_t inner;
        BSON_APPEND_DOCUMENT_BEGIN (set, "$set", &inner);
        bson_append_array (&inner, field, -1, parts);
        bson_append_document_end (set, &inner);
    }
    ok = online_plan_update (on, set, err);
    bson_destroy (set);
    return ok;
}

uint32_t
online_parts_count (const bson_t *parts)
{
    return bson_count_keys (parts);
}

bool
online_part_read (online_t *on, const online_cp_where_t *at, bson_t *last, online_cp_tally_t *t,
                  bson_error_t *err)
{
    char id[300];
    bson_t doc;
    bool found, ok;
    online_part_key (on, at->s, at->p, at->k, id, sizeof id);
    ok = online_state_get (on, "partitions", id, &doc, &found, "reading a partition's checkpoint",
                           err);
    online_checkpoint_parse (&doc, last, t);
    bson_destroy (&doc);
    return ok;
}

static bool
part_write (online_t *on, const online_cp_where_t *at, const rm_nsref_t *ns,
            const bson_value_t *last, const online_cp_tally_t *t, bson_error_t *err)
{
    const rm_step_t *s = at->s;
    size_t p = at->p;
    uint32_t k = at->k, n = at->n;
    bool done = t->done;
    char id[300];
    bson_t set = BSON_INITIALIZER, inner;
    bool ok;

    online_part_key (on, s, p, k, id, sizeof id);
    BSON_APPEND_DOCUMENT_BEGIN (&set, "$set", &inner);
    BSON_APPEND_UTF8 (&inner, "plan", on->run->names.id);
    BSON_APPEND_INT64 (&inner, "step", (int64_t) s->index);
    BSON_APPEND_INT64 (&inner, "pass", (int64_t) p + 1);
    BSON_APPEND_INT64 (&inner, "part", (int64_t) k);
    BSON_APPEND_INT64 (&inner, "of", (int64_t) n);
    BSON_APPEND_UTF8 (&inner, "ns", ns->text);
    BSON_APPEND_UTF8 (&inner, "state", done ? "done" : "running");
    BSON_APPEND_UTF8 (&inner, "owner", on->owner);
    BSON_APPEND_INT64 (&inner, "epoch", on->epoch);
    if (last)
        BSON_APPEND_VALUE (&inner, "last", last);
    BSON_APPEND_INT64 (&inner, "seen", t->seen);
    BSON_APPEND_INT64 (&inner, "changed", t->changed);
    BSON_APPEND_BOOL (&inner, "done", done);
    BSON_APPEND_DATE_TIME (&inner, "updated", online_wall_ms ());
    bson_append_document_end (&set, &inner);
    /* Fenced as the pass's checkpoint is: never over what a newer epoch
     * wrote. */
    ok = online_fenced_upsert (on, "partitions", id, &set, "partition's checkpoint", err);
    bson_destroy (&set);
    return ok;
}

bool
online_part_save (online_t *on, const online_cp_where_t *at, const rm_nsref_t *ns,
                  const bson_t *last, const online_cp_tally_t *t, bson_error_t *err)
{
    online_retry_t retry = {0, 0};
    bson_iter_t it;
    const bson_value_t *v = bson_iter_init_find (&it, last, "last") ? bson_iter_value (&it) : NULL;
    while (!part_write (on, at, ns, v, t, err))
        if (!online_retry (on, &retry, err))
            return false;
    return true;
}

/* A bound for people: "(" or "after 5", ")" or "up to 9", a bracket's
 * name. */
static void
bound_text (const bson_t *part, const char *key, char *buf, size_t cap)
{
    bson_iter_t it, b;
    *buf = '\0';
    if (!bson_iter_init_find (&it, part, key) || !BSON_ITER_HOLDS_DOCUMENT (&it) ||
        !bson_iter_recurse (&it, &b) || !bson_iter_next (&b))
        return;
    if (BSON_ITER_HOLDS_UTF8 (&b) && (!strcmp (bson_iter_key (&b), "from") ||
                                      !strcmp (bson_iter_key (&b), "below"))) {
        snprintf (buf, cap, "%s %s", bson_iter_key (&b), bson_iter_utf8 (&b, NULL));
    } else {
        bson_t one = BSON_INITIALIZER;
        char *json;
        bson_append_iter (&one, "v", 1, &b);
        json = bson_as_relaxed_extended_json (&one, NULL);
        /* {"v" : X} -> X */
        if (json && strlen (json) > 9) {
            json[strlen (json) - 2] = '\0';
            snprintf (buf, cap, "%s %s", !strcmp (bson_iter_key (&b), "after") ? "after" : "up to",
                      json + 8);
        }
        bson_free (json);
        bson_destroy (&one);
    }
}

/* A cell of status's table, escaped (rm_cli_put_text) and padded to
 * width columns by what it took on the screen. */
static void
cell (FILE *out, const char *text, int width)
{
    size_t used = rm_cli_put_text (out, text, strlen (text));
    for (; (int) used < width; used++)
        fputc (' ', out);
}

int
online_parts_list (online_t *on, bool running, bson_error_t *err)
{
    bson_t record, parts;
    bson_iter_t it, keys;
    bool found;
    int rows = 0;
    /* status's table: on the reporter's standard output. */
    FILE *out = online_say_out_stream (on);

    if (!online_state_get (on, "plans", on->run->names.id, &record, &found, "reading the plan's record",
                           err)) {
        bson_destroy (&record);
        return -1;
    }
    bson_init (&parts);
    if (bson_iter_init_find (&it, &record, "partitions") && BSON_ITER_HOLDS_DOCUMENT (&it) &&
        bson_iter_recurse (&it, &keys))
        while (bson_iter_next (&keys)) {
            const char *key = bson_iter_key (&keys);
            bson_iter_t pi;
            uint32_t k = 0, n;
            bool listed;
            if (!recorded (on, &record, key, &parts, &listed, err)) {
                bson_destroy (&parts);
                bson_destroy (&record);
                return -1;
            }
            if (!listed || (n = online_parts_count (&parts)) < 2)
                continue;
            if (!rows++)
                online_say_out (on, "%-9s %-9s %-8s %10s %10s  %-34s %s\n", "STEP", "PARTITION",
                                "STATE", "READ", "WRITTEN", "RANGE", "WORKER");
            for (bson_iter_init (&pi, &parts); bson_iter_next (&pi); k++) {
                char id[300], lo[200], hi[200], range[420], owner[160];
                bson_t doc, part;
                const uint8_t *data;
                uint32_t len;
                bool there;
                online_cp_tally_t t = {false, 0, 0};
                const char *st;
                bson_iter_document (&pi, &len, &data);
                if (!bson_init_static (&part, data, len))
                    continue;
                snprintf (id, sizeof id, "%s:%s#%u", on->run->names.id, key, k);
                if (!online_state_get (on, "partitions", id, &doc, &there,
                                       "reading a partition's checkpoint", err)) {
                    bson_destroy (&doc);
                    bson_destroy (&parts);
                    bson_destroy (&record);
                    return -1;
                }
                if (there) {
                    bson_t ignored = BSON_INITIALIZER;
                    online_checkpoint_parse (&doc, &ignored, &t);
                    bson_destroy (&ignored);
                }
                online_field_utf8 (&doc, "owner", owner, sizeof owner);
                st = t.done ? "done" : !there ? "pending" : running ? "running" : "stopped";
                bound_text (&part, "lo", lo, sizeof lo);
                bound_text (&part, "hi", hi, sizeof hi);
                snprintf (range, sizeof range, "%s%s%s", *lo ? lo : "from the start",
                          *hi ? ", " : "", *hi ? hi : "");
                /* The key, the bounds and the owner are as the state
                 * database holds them: escaped, as every message is. */
                cell (out, key, 9);
                online_say_out (on, " %4u of %-2u %-8s %10lld %10lld  ", k + 1, n, st,
                                (long long) t.seen, (long long) t.changed);
                cell (out, range, 34);
                fputc (' ', out);
                cell (out, *owner ? owner : "-", 0);
                fputc ('\n', out);
                bson_destroy (&doc);
            }
        }
    bson_destroy (&parts);
    bson_destroy (&record);
    return rows;
}
