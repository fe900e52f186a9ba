/* The switch's state machine (shell-ext/online_switch_state.c) without a
 * server: each move's state by which of its three collections exist, the
 * rename that moves it on, and the journal's count of renames in place.
 * A world of collections stands in for the server, renaming as
 * renameCollection without dropTarget does (refused when the source is
 * missing or the target exists); a switch is driven through it as
 * online_switch.c's run_moves does, killed after every rename (before its
 * note, and after), and resumed from there both ways. */
#include <stdbool.h>
#include <stdint.h>

#include "online_cmd.h"
#include "test.h"

/* ---- each state, each rename ---- */

static void
test_state_table (void)
{
    /* original: the namespace had a collection; c, r, b: COLL, RESULT,
     * BACKUP exist; all three with an original: half-way, COLL made
     * again by a write (raced). Every other combination is no state of
     * the switch. */
    for (int original = 0; original < 2; original++)
        for (int bits = 0; bits < 8; bits++) {
            bool c = bits & 4, r = bits & 2, b = bits & 1;
            online_switch_at_t want = ONLINE_AT_NONE;
            if (original && c && r && !b)
                want = ONLINE_AT_BEFORE;
            else if (original && !c && r && b)
                want = ONLINE_AT_HALF;
            else if (original && c && !r && b)
                want = ONLINE_AT_AFTER;
            else if (original && c && r && b)
                want = ONLINE_AT_RACED;
            else if (!original && !c && r && !b)
                want = ONLINE_AT_BEFORE;
            else if (!original && c && !r && !b)
                want = ONLINE_AT_AFTER;
            if (online_switch_state (original, c, r, b) != want)
                fprintf (stderr, "  original %d coll %d result %d backup %d: got %d, want %d\n",
                         original, c, r, b, (int) online_switch_state (original, c, r, b),
                         (int) want);
            T_CHECK (online_switch_state (original, c, r, b) == want);
        }
}

static void
test_done_counts (void)
{
    T_CHECK (online_switch_done (true, ONLINE_AT_BEFORE) == 0);
    T_CHECK (online_switch_done (true, ONLINE_AT_HALF) == 1);
    T_CHECK (online_switch_done (true, ONLINE_AT_AFTER) == 2);
    T_CHECK (online_switch_done (false, ONLINE_AT_BEFORE) == 0);
    T_CHECK (online_switch_done (false, ONLINE_AT_AFTER) == 1);
    T_CHECK (online_switch_done (true, ONLINE_AT_RACED) == 1);
}

static void
check_next (bool original, bool back, online_switch_at_t from, online_switch_step_t step,
            online_switch_at_t to)
{
    online_switch_at_t at = from;
    T_CHECK (online_switch_next (original, back, &at) == step);
    T_CHECK (at == to);
}

static void
test_next_table (void)
{
    check_next (true, false, ONLINE_AT_BEFORE, ONLINE_RENAME_COLL_TO_BACKUP, ONLINE_AT_HALF);
    check_next (true, false, ONLINE_AT_HALF, ONLINE_RENAME_RESULT_TO_COLL, ONLINE_AT_AFTER);
    check_next (true, false, ONLINE_AT_AFTER, ONLINE_RENAME_NONE, ONLINE_AT_AFTER);
    check_next (false, false, ONLINE_AT_BEFORE, ONLINE_RENAME_RESULT_TO_COLL, ONLINE_AT_AFTER);
    check_next (false, false, ONLINE_AT_AFTER, ONLINE_RENAME_NONE, ONLINE_AT_AFTER);
    check_next (true, true, ONLINE_AT_AFTER, ONLINE_RENAME_COLL_TO_RESULT, ONLINE_AT_HALF);
    check_next (true, true, ONLINE_AT_HALF, ONLINE_RENAME_BACKUP_TO_COLL, ONLINE_AT_BEFORE);
    check_next (true, true, ONLINE_AT_BEFORE, ONLINE_RENAME_NONE, ONLINE_AT_BEFORE);
    check_next (false, true, ONLINE_AT_AFTER, ONLINE_RENAME_COLL_TO_RESULT, ONLINE_AT_BEFORE);
    check_next (false, true, ONLINE_AT_BEFORE, ONLINE_RENAME_NONE, ONLINE_AT_BEFORE);
    /* Raced, either way: the made-again collection aside, then half-way. */
    check_next (true, false, ONLINE_AT_RACED, ONLINE_RENAME_RACED_ASIDE, ONLINE_AT_HALF);
    check_next (true, true, ONLINE_AT_RACED, ONLINE_RENAME_RACED_ASIDE, ONLINE_AT_HALF);
}

/* ---- a switch of several moves through a world of collections ---- */

#define NMOVES 4
enum { COLL, RESULT, BACKUP };

typedef struct {
    bool original[NMOVES];
    bool exists[NMOVES][3];
    int renames;            /* renames the world made */
    int refused;            /* renames it refused */
    int64_t note;           /* the journal's renamed */
    int64_t notes[64];      /* every note written, in order */
    int n_notes;
} world_t;

static void
world_init (world_t *w)
{
    static const bool originals[NMOVES] = {true, false, true, true};
    memset (w, 0, sizeof *w);
    for (int i = 0; i < NMOVES; i++) {
        w->original[i] = originals[i];
        w->exists[i][COLL] = originals[i];
        w->exists[i][RESULT] = true;
    }
}

static void
world_rename (world_t *w, int m, int from, int to)
{
    if (!w->exists[m][from] || w->exists[m][to]) {
        w->refused++;
        return;
    }
    w->exists[m][from] = false;
    w->exists[m][to] = true;
    w->renames++;
}

static online_switch_at_t
observe (const world_t *w, int m)
{
    return online_switch_state (w->original[m], w->exists[m][COLL], w->exists[m][RESULT],
                                w->exists[m][BACKUP]);
}

static void
note (world_t *w, int64_t renamed)
{
    w->note = renamed;
    if (w->n_notes < 64)
        w->notes[w->n_notes++] = renamed;
}

/* The renames in place as the world shows them (journal_resume). */
static int64_t
observed (const world_t *w)
{
    int64_t n = 0;
    for (int m = 0; m < NMOVES; m++)
        n += online_switch_done (w->original[m], observe (w, m));
    return n;
}

/* run_moves: every move to its end, one rename at a time, each noted;
 * stops (a kill) once the world made stop_after renames, before the note
 * of the last (noted: after it). Returns false when killed. */
static bool
run (world_t *w, bool back, int stop_after, bool noted)
{
    for (int k = 0; k < NMOVES; k++) {
        int idx = back ? NMOVES - 1 - k : k;
        online_switch_at_t goal = back ? ONLINE_AT_BEFORE : ONLINE_AT_AFTER, at;
        int64_t before = 0;
        for (int i = 0; i < idx; i++)
            before += w->original[i] ? 2 : 1;
        for (int guard = 0; guard < 8; guard++) {
            online_switch_at_t to;
            at = observe (w, idx);
            T_CHECK (at != ONLINE_AT_NONE);
            if (at == goal || at == ONLINE_AT_NONE)
                break;
            to = at;
            switch (online_switch_next (w->original[idx], back, &to)) {
            case ONLINE_RENAME_COLL_TO_BACKUP: world_rename (w, idx, COLL, BACKUP); break;
            case ONLINE_RENAME_RESULT_TO_COLL: world_rename (w, idx, RESULT, COLL); break;
            case ONLINE_RENAME_COLL_TO_RESULT: world_rename (w, idx, COLL, RESULT); break;
            case ONLINE_RENAME_BACKUP_TO_COLL: world_rename (w, idx, BACKUP, COLL); break;
            case ONLINE_RENAME_NONE: T_CHECK (!"a move short of its goal has a next rename"); return true;
            /* No writer re-creates a source in this world. */
            case ONLINE_RENAME_RACED_ASIDE: T_CHECK (!"no race without a writer"); return true;
            }
            if (stop_after >= 0 && w->renames == stop_after && !noted)
                return false;
            note (w, before + online_switch_done (w->original[idx], to));
            if (stop_after >= 0 && w->renames == stop_after)
                return false;
        }
    }
    return true;
}

static int
total_renames (const world_t *w)
{
    int n = 0;
    for (int m = 0; m < NMOVES; m++)
        n += w->original[m] ? 2 : 1;
    return n;
}

static bool
world_is (const world_t *w, online_switch_at_t at)
{
    for (int m = 0; m < NMOVES; m++)
        if (observe (w, m) != at)
            return false;
    return true;
}

static void
test_switch_uninterrupted (void)
{
    world_t w;
    world_init (&w);
    T_CHECK (world_is (&w, ONLINE_AT_BEFORE));
    T_CHECK (run (&w, false, -1, false));
    T_CHECK (world_is (&w, ONLINE_AT_AFTER));
    T_CHECK (w.renames == 7 && w.renames == total_renames (&w));
    T_CHECK (w.refused == 0);
    /* A note after every rename, counting up by one to all of them. */
    T_CHECK (w.n_notes == 7);
    for (int i = 0; i < w.n_notes; i++)
        T_CHECK (w.notes[i] == i + 1);
    /* The original of a namespace that had one is kept, the others have
     * none. */
    for (int m = 0; m < NMOVES; m++)
        T_CHECK (w.exists[m][BACKUP] == w.original[m] && w.exists[m][COLL] && !w.exists[m][RESULT]);
    /* And back, notes counting down to 0. */
    w.n_notes = 0;
    w.renames = 0;
    T_CHECK (run (&w, true, -1, false));
    T_CHECK (world_is (&w, ONLINE_AT_BEFORE));
    T_CHECK (w.renames == 7 && w.refused == 0);
    T_CHECK (w.n_notes == 7 && w.notes[6] == 0);
    for (int i = 0; i < w.n_notes; i++)
        T_CHECK (w.notes[i] == 6 - i);
}

/* Killed after each rename of finalize (before its note and after), then
 * finalize again or rollback: each completes, each rename made once, and
 * the journal's count taken from what the world shows is the renames
 * made, whatever the note said. */
static void
test_switch_resumed_from_each (void)
{
    int total;
    world_t w;
    world_init (&w);
    total = total_renames (&w);
    for (int back_first = 0; back_first < 2; back_first++)
        for (int k = 1; k <= total; k++)
            for (int noted = 0; noted < 2; noted++) {
                for (int then_back = 0; then_back < 2; then_back++) {
                    int made, want_back = back_first ? !then_back : then_back;
                    world_init (&w);
                    if (back_first) { /* a finished finalize, its rollback killed */
                        T_CHECK (run (&w, false, -1, false));
                        w.renames = 0;
                    }
                    T_CHECK (!run (&w, back_first, k, noted));
                    T_CHECK (w.renames == k);
                    /* The note lags by one rename at most. */
                    T_CHECK (w.note == (back_first ? total - k : k) ||
                             (!noted && w.note == (back_first ? total - k + 1 : k - 1)));
                    T_CHECK (observed (&w) == (back_first ? total - k : k));
                    note (&w, observed (&w));
                    made = w.renames;
                    T_CHECK (run (&w, want_back, -1, false));
                    T_CHECK (world_is (&w, want_back ? ONLINE_AT_BEFORE : ONLINE_AT_AFTER));
                    T_CHECK (w.refused == 0);
                    /* Each rename once: finishing the direction killed
                     * makes the rest, turning back undoes what was made. */
                    T_CHECK (w.renames - made == (then_back ? k : total - k));
                    T_CHECK (w.note == (want_back ? 0 : total));
                }
            }
}

/* A state no switch leaves (a collection dropped or made by someone
 * else) is seen as none, so the switch stops rather than renames. */
static void
test_foreign_states (void)
{
    world_t w;
    world_init (&w);
    w.exists[1][COLL] = true; /* made by someone under the new name */
    T_CHECK (observe (&w, 1) == ONLINE_AT_NONE);
    world_init (&w);
    T_CHECK (run (&w, false, 1, true) == false); /* move 0 half-way */
    w.exists[0][BACKUP] = false;                 /* its original dropped */
    T_CHECK (observe (&w, 0) == ONLINE_AT_NONE);
    world_init (&w);
    w.exists[2][RESULT] = false; /* the result gone before the switch */
    T_CHECK (observe (&w, 2) == ONLINE_AT_NONE);
}

int
main (void)
{
    T_RUN (test_state_table);
    T_RUN (test_done_counts);
    T_RUN (test_next_table);
    T_RUN (test_switch_uninterrupted);
    T_RUN (test_switch_resumed_from_each);
    T_RUN (test_foreign_states);
    return t_done ();
}
