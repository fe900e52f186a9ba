/* A plan's life as one state machine (online_state.h; the picture is in
 * docs/HACKING.md). Every command asks it once, at its top, whether it
 * may begin: the answer is a function of the plan's record alone (and of
 * its checkpoints, for whether the run finished), so the tests check
 * every pair of state and command without a server.
 *
 * The refusals keep the words they had before there was a machine: the
 * ones the state layer already said (online_plan_check,
 * online_run_complete, online_plan_unswitched) are said by those, so a
 * command refused here and one refused further down read the same. */
#include <string.h>

#include "online_state.h"
#include "remodel/cli.h"

#define OK ONLINE_LIFE_OK
#define NR ONLINE_LIFE_NOT_RUN_HERE
#define UF ONLINE_LIFE_UNFINISHED
#define IN ONLINE_LIFE_INTERRUPTED
#define FI ONLINE_LIFE_IS_FINALIZED
#define WA ONLINE_LIFE_WRITES_AFTER
#define FA ONLINE_LIFE_FINALIZED_ALREADY
#define UW ONLINE_LIFE_UNDER_WAY
#define CT ONLINE_LIFE_COMMITTED_THERE
#define FF ONLINE_LIFE_FINISH_FIRST

/* Rows: the states; columns: run, verify, sync, follow, prepare,
 * finalize, rollback, status, control. A follow holding the lease
 * changes nothing here: the lease refuses the others (finalize asks it
 * to hand over). pause and the controls of a plan with no record are
 * refused by the record's update (there is nothing to set). */
static const online_life_why_t allows[ONLINE_LIFE_N][ONLINE_DO_N] = {
    [ONLINE_LIFE_NOT_RUN] = {OK, NR, NR, NR, NR, NR, NR, OK, OK},
    [ONLINE_LIFE_RUNNING] = {OK, OK, UF, UF, UF, UF, OK, OK, OK},
    [ONLINE_LIFE_COMPLETE] = {OK, OK, OK, OK, OK, OK, OK, OK, OK},
    [ONLINE_LIFE_FOLLOWING] = {OK, OK, OK, OK, OK, OK, OK, OK, OK},
    [ONLINE_LIFE_SWITCHING] = {IN, IN, IN, IN, UW, OK, OK, OK, OK},
    [ONLINE_LIFE_FINALIZED] = {FI, FI, FI, FI, FA, FA, OK, OK, OK},
    [ONLINE_LIFE_ROLLING_BACK] = {WA, WA, WA, WA, WA, WA, OK, OK, OK},
    [ONLINE_LIFE_FORGOTTEN] = {OK, NR, NR, NR, NR, NR, NR, OK, OK},
    /* --to-uri: committed, finalize says so and rollback goes back; a
     * run, sync or verify would write the results the application now
     * writes. Finishing: a sync would read an intermediate dropped. */
    [ONLINE_LIFE_COMMITTED] = {CT, CT, CT, CT, OK, OK, OK, OK, CT},
    [ONLINE_LIFE_FINISHING] = {FF, FF, FF, FF, OK, OK, FF, OK, FF},
};

online_life_t
online_life_state (const online_record_t *r, bool complete, bool following)
{
    /* In the order online_plan_unswitched refuses them: a journal first
     * (whichever way it goes), then finalized, then the writes kept. */
    if (!r->found)
        return ONLINE_LIFE_NOT_RUN;
    if (r->switching)
        return ONLINE_LIFE_SWITCHING;
    if (r->finalized)
        return ONLINE_LIFE_FINALIZED;
    if (r->after_pending)
        return ONLINE_LIFE_ROLLING_BACK;
    if (!complete)
        return ONLINE_LIFE_RUNNING;
    return following ? ONLINE_LIFE_FOLLOWING : ONLINE_LIFE_COMPLETE;
}

online_life_t
online_life_pair_state (online_life_t s, bool committed, bool finishing)
{
    return committed ? ONLINE_LIFE_COMMITTED : finishing ? ONLINE_LIFE_FINISHING : s;
}

online_life_why_t
online_life_allows (online_life_t s, online_do_t what)
{
    if ((unsigned) s >= ONLINE_LIFE_N || (unsigned) what >= ONLINE_DO_N)
        return NR;
    return allows[s][what];
}

online_life_t
online_life_after (online_life_t s, online_do_t what)
{
    if (online_life_allows (s, what) != OK)
        return s;
    switch (what) {
    case ONLINE_DO_RUN:
        return ONLINE_LIFE_COMPLETE;
    case ONLINE_DO_FOLLOW:
        return ONLINE_LIFE_FOLLOWING; /* until stopped: complete again */
    case ONLINE_DO_FINALIZE:
        return s == ONLINE_LIFE_FINISHING || s == ONLINE_LIFE_COMMITTED ? ONLINE_LIFE_COMMITTED
                                                                         : ONLINE_LIFE_FINALIZED;
    case ONLINE_DO_ROLLBACK:
        /* A switch (done, begun, or undone with writes kept) is undone
         * and the results stay beside the originals; with none, the
         * results go and the plan is forgotten. */
        /* --to-uri's, committed: back to the source, the pair forgotten. */
        if (s == ONLINE_LIFE_COMMITTED)
            return ONLINE_LIFE_FORGOTTEN;
        return s == ONLINE_LIFE_SWITCHING || s == ONLINE_LIFE_FINALIZED ||
                       s == ONLINE_LIFE_ROLLING_BACK
                   ? ONLINE_LIFE_COMPLETE
                   : ONLINE_LIFE_FORGOTTEN;
    default:
        return s; /* verify, sync, prepare, status, control */
    }
}

unsigned
online_life_states (online_do_t what)
{
    unsigned bits = 0;
    for (int s = 0; s < ONLINE_LIFE_N; s++)
        if (online_life_allows ((online_life_t) s, what) == OK)
            bits |= ONLINE_LIFE_BIT (s);
    return bits;
}

const char *
online_life_name (online_life_t s)
{
    static const char *const names[ONLINE_LIFE_N] = {
        "not run", "running", "complete", "following",
        "switching", "finalized", "rolling back", "forgotten",
        "committed on the destination", "finishing on the destination",
    };
    return (unsigned) s < ONLINE_LIFE_N ? names[s] : "?";
}

/* why, in the words each refusal always had. */
static bool
refuse (online_t *on, online_life_why_t why, const online_record_t *r, bson_error_t *err)
{
    switch (why) {
    case ONLINE_LIFE_NOT_RUN_HERE:
        return online_plan_check (on, err);
    case ONLINE_LIFE_UNFINISHED:
        return online_run_complete (on, err);
    case ONLINE_LIFE_INTERRUPTED:
    case ONLINE_LIFE_IS_FINALIZED:
    case ONLINE_LIFE_WRITES_AFTER:
        return online_plan_unswitched (on, r, err);
    case ONLINE_LIFE_FINALIZED_ALREADY:
        rm_error_set (err, RM_ERR_USAGE, "plan %s is finalized already", on->run->names.name);
        return false;
    case ONLINE_LIFE_UNDER_WAY:
        rm_error_set (err, RM_ERR_USAGE, "plan %s: a switch is under way (an earlier finalize "
                      "was stopped in it): finalize --writes-stopped completes it",
                      on->run->names.name);
        return false;
    default:
        return true;
    }
}

bool
online_life_check (online_t *on, online_do_t what, bson_error_t *err)
{
    online_record_t r;
    online_life_t s;

    /* Not run, changed since, or in the other mode: refused first, as
     * every command but run always did. */
    if (online_life_allows (ONLINE_LIFE_NOT_RUN, what) != OK && !online_plan_check (on, err))
        return false;
    if (!online_plan_read (on, &r, err))
        return false;
    /* The checkpoints are read only where they decide: a command that
     * needs a finished run, in a state that could be one. */
    s = online_life_state (&r, true, false);
    if (s == ONLINE_LIFE_COMPLETE && online_life_allows (ONLINE_LIFE_RUNNING, what) != OK)
        return online_run_complete (on, err);
    return refuse (on, online_life_allows (s, what), &r, err);
}
