/* A plan's life (shell-ext/state/online_life.c) without a server: the
 * state each record reads as, every command allowed or refused (and why)
 * in every state, where each allowed one leads, and the states the
 * command table's rows begin in. */
#include <string.h>

#include "online_state.h"
#include "test.h"

#define S(x) ONLINE_LIFE_##x
#define D(x) ONLINE_DO_##x

/* The state a record reads as, in the order online_plan_unswitched
 * refuses: a journal before finalized, finalized before the writes kept. */
static void
test_state (void)
{
    online_record_t r;
    memset (&r, 0, sizeof r);
    T_CHECK (online_life_state (&r, true, true) == S (NOT_RUN));
    r.found = true;
    T_CHECK (online_life_state (&r, false, false) == S (RUNNING));
    T_CHECK (online_life_state (&r, false, true) == S (RUNNING));
    T_CHECK (online_life_state (&r, true, false) == S (COMPLETE));
    T_CHECK (online_life_state (&r, true, true) == S (FOLLOWING));
    r.after_pending = true;
    T_CHECK (online_life_state (&r, true, false) == S (ROLLING_BACK));
    r.finalized = true;
    T_CHECK (online_life_state (&r, true, false) == S (FINALIZED));
    r.switching = true;
    snprintf (r.direction, sizeof r.direction, "finalize");
    T_CHECK (online_life_state (&r, true, false) == S (SWITCHING));
    snprintf (r.direction, sizeof r.direction, "rollback");
    r.finalized = r.after_pending = false;
    T_CHECK (online_life_state (&r, true, true) == S (SWITCHING));
    /* A rollback that left documents in place is still the plan it was. */
    memset (&r, 0, sizeof r);
    r.found = true;
    r.rollback_left = 3;
    T_CHECK (online_life_state (&r, true, false) == S (COMPLETE));
}

/* Every pair: the verdict as the commands gave it before the machine. */
static void
test_allows (void)
{
    static const struct {
        online_life_t s;
        online_life_why_t why[ONLINE_DO_N]; /* run verify sync follow prepare finalize
                                             * rollback status control */
    } want[] = {
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
        {S (NOT_RUN), {OK, NR, NR, NR, NR, NR, NR, OK, OK}},
        {S (RUNNING), {OK, OK, UF, UF, UF, UF, OK, OK, OK}},
        {S (COMPLETE), {OK, OK, OK, OK, OK, OK, OK, OK, OK}},
        {S (FOLLOWING), {OK, OK, OK, OK, OK, OK, OK, OK, OK}},
        {S (SWITCHING), {IN, IN, IN, IN, UW, OK, OK, OK, OK}},
        {S (FINALIZED), {FI, FI, FI, FI, FA, FA, OK, OK, OK}},
        {S (ROLLING_BACK), {WA, WA, WA, WA, WA, WA, OK, OK, OK}},
        {S (FORGOTTEN), {OK, NR, NR, NR, NR, NR, NR, OK, OK}},
        /* --to-uri's: what online_dest.c refused by the command's name */
        {S (COMMITTED), {CT, CT, CT, CT, OK, OK, OK, OK, CT}},
        {S (FINISHING), {FF, FF, FF, FF, OK, OK, FF, OK, FF}},
    };
    T_CHECK (sizeof want / sizeof *want == ONLINE_LIFE_N);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        for (int d = 0; d < ONLINE_DO_N; d++)
            if (online_life_allows (want[i].s, (online_do_t) d) != want[i].why[d]) {
                printf ("  %s, command %d: %d, not %d\n", online_life_name (want[i].s), d,
                        (int) online_life_allows (want[i].s, (online_do_t) d),
                        (int) want[i].why[d]);
                T_CHECK (0);
            }
    /* Out of range: refused, never read past the table. */
    T_CHECK (online_life_allows (ONLINE_LIFE_N, D (RUN)) != OK);
    T_CHECK (online_life_allows (S (COMPLETE), ONLINE_DO_N) != OK);
}

/* Where each allowed command leads; a refused one leaves the state. */
static void
test_after (void)
{
    T_CHECK (online_life_after (S (NOT_RUN), D (RUN)) == S (COMPLETE));
    T_CHECK (online_life_after (S (FORGOTTEN), D (RUN)) == S (COMPLETE));
    T_CHECK (online_life_after (S (RUNNING), D (RUN)) == S (COMPLETE));
    T_CHECK (online_life_after (S (COMPLETE), D (FOLLOW)) == S (FOLLOWING));
    T_CHECK (online_life_after (S (COMPLETE), D (FINALIZE)) == S (FINALIZED));
    T_CHECK (online_life_after (S (FOLLOWING), D (FINALIZE)) == S (FINALIZED));
    T_CHECK (online_life_after (S (SWITCHING), D (FINALIZE)) == S (FINALIZED));
    T_CHECK (online_life_after (S (COMPLETE), D (PREPARE)) == S (COMPLETE));
    T_CHECK (online_life_after (S (COMPLETE), D (SYNC)) == S (COMPLETE));
    T_CHECK (online_life_after (S (RUNNING), D (VERIFY)) == S (RUNNING));
    T_CHECK (online_life_after (S (FINALIZED), D (STATUS)) == S (FINALIZED));
    T_CHECK (online_life_after (S (SWITCHING), D (CONTROL)) == S (SWITCHING));
    /* rollback: a switch undone keeps the results (complete again);
     * without one, the plan is forgotten. */
    T_CHECK (online_life_after (S (FINALIZED), D (ROLLBACK)) == S (COMPLETE));
    T_CHECK (online_life_after (S (SWITCHING), D (ROLLBACK)) == S (COMPLETE));
    T_CHECK (online_life_after (S (ROLLING_BACK), D (ROLLBACK)) == S (COMPLETE));
    T_CHECK (online_life_after (S (COMPLETE), D (ROLLBACK)) == S (FORGOTTEN));
    T_CHECK (online_life_after (S (RUNNING), D (ROLLBACK)) == S (FORGOTTEN));
    T_CHECK (online_life_after (S (FOLLOWING), D (ROLLBACK)) == S (FORGOTTEN));
    /* Refused: where it was. */
    T_CHECK (online_life_after (S (NOT_RUN), D (FINALIZE)) == S (NOT_RUN));
    T_CHECK (online_life_after (S (FINALIZED), D (RUN)) == S (FINALIZED));
    T_CHECK (online_life_after (S (SWITCHING), D (PREPARE)) == S (SWITCHING));
    T_CHECK (online_life_after (S (ROLLING_BACK), D (SYNC)) == S (ROLLING_BACK));
    /* --to-uri: finalize commits (again: committed already); rollback
     * after the commit goes back and forgets the pair. */
    T_CHECK (online_life_after (S (FINISHING), D (FINALIZE)) == S (COMMITTED));
    T_CHECK (online_life_after (S (COMMITTED), D (FINALIZE)) == S (COMMITTED));
    T_CHECK (online_life_after (S (COMMITTED), D (ROLLBACK)) == S (FORGOTTEN));
    T_CHECK (online_life_after (S (FINISHING), D (SYNC)) == S (FINISHING));
    T_CHECK (online_life_after (S (COMMITTED), D (RUN)) == S (COMMITTED));
    /* Every state and command: allowed leads somewhere allowed to be
     * rolled back from, except where nothing is recorded, and finishing,
     * whose way out is finalize. */
    for (int s = 0; s < ONLINE_LIFE_N; s++)
        for (int d = 0; d < ONLINE_DO_N; d++) {
            online_life_t to = online_life_after ((online_life_t) s, (online_do_t) d);
            T_CHECK (to < ONLINE_LIFE_N);
            if (to == S (FINISHING))
                T_CHECK (online_life_allows (to, D (FINALIZE)) == OK);
            else if (to != S (NOT_RUN) && to != S (FORGOTTEN))
                T_CHECK (online_life_allows (to, D (ROLLBACK)) == OK);
        }
}

/* The states a row of the command table begins in, and the names. */
static void
test_states (void)
{
    unsigned all = (1u << ONLINE_LIFE_N) - 1, unrecorded = ONLINE_LIFE_BIT (S (NOT_RUN)) |
                                                          ONLINE_LIFE_BIT (S (FORGOTTEN));
    unsigned done = ONLINE_LIFE_BIT (S (COMPLETE)) | ONLINE_LIFE_BIT (S (FOLLOWING));
    unsigned pair = ONLINE_LIFE_BIT (S (COMMITTED)) | ONLINE_LIFE_BIT (S (FINISHING));
    T_CHECK (online_life_states (D (STATUS)) == all);
    T_CHECK (online_life_states (D (CONTROL)) == (all & ~pair));
    T_CHECK (online_life_states (D (ROLLBACK)) ==
             (all & ~unrecorded & ~ONLINE_LIFE_BIT (S (FINISHING))));
    T_CHECK (online_life_states (D (RUN)) == (unrecorded | done | ONLINE_LIFE_BIT (S (RUNNING))));
    T_CHECK (online_life_states (D (VERIFY)) == (done | ONLINE_LIFE_BIT (S (RUNNING))));
    T_CHECK (online_life_states (D (SYNC)) == done);
    T_CHECK (online_life_states (D (FOLLOW)) == done);
    T_CHECK (online_life_states (D (PREPARE)) == (done | pair));
    T_CHECK (online_life_states (D (FINALIZE)) == (done | pair | ONLINE_LIFE_BIT (S (SWITCHING))));
    T_CHECK_STR (online_life_name (S (NOT_RUN)), "not run");
    T_CHECK_STR (online_life_name (S (ROLLING_BACK)), "rolling back");
    T_CHECK_STR (online_life_name (S (FORGOTTEN)), "forgotten");
    T_CHECK_STR (online_life_name (S (COMMITTED)), "committed on the destination");
    T_CHECK_STR (online_life_name (ONLINE_LIFE_N), "?");
}

int
main (void)
{
    T_RUN (test_state);
    T_RUN (test_allows);
    T_RUN (test_after);
    T_RUN (test_states);
    return t_done ();
}
