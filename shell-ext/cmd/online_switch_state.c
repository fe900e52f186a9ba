/* The switch's state machine apart from the server (online_cmd.h): what the
 * three collections of one move say about where it stands, which rename
 * moves it on, and how many renames of the switch are then in place.
 * online_switch.c observes the server and renames; these decide. Calls
 * nothing of the program. */
#include "online_cmd.h"

online_switch_at_t
online_switch_state (bool original, bool coll, bool result, bool backup)
{
    if (result && !backup && coll == original)
        return ONLINE_AT_BEFORE;
    if (original && result && backup && !coll)
        return ONLINE_AT_HALF;
    if (!result && coll && backup == original)
        return ONLINE_AT_AFTER;
    if (original && result && backup && coll)
        return ONLINE_AT_RACED;
    return ONLINE_AT_NONE;
}

int64_t
online_switch_done (bool original, online_switch_at_t at)
{
    return at == ONLINE_AT_BEFORE ? 0 : at == ONLINE_AT_HALF || at == ONLINE_AT_RACED ? 1 : original ? 2 : 1;
}

online_switch_step_t
online_switch_next (bool original, bool back, online_switch_at_t *at)
{
    if (*at == ONLINE_AT_RACED)
        return *at = ONLINE_AT_HALF, ONLINE_RENAME_RACED_ASIDE;
    if (!back && *at == ONLINE_AT_BEFORE && original)
        return *at = ONLINE_AT_HALF, ONLINE_RENAME_COLL_TO_BACKUP;
    if (!back && *at != ONLINE_AT_AFTER)
        return *at = ONLINE_AT_AFTER, ONLINE_RENAME_RESULT_TO_COLL;
    if (back && *at == ONLINE_AT_AFTER)
        return *at = original ? ONLINE_AT_HALF : ONLINE_AT_BEFORE, ONLINE_RENAME_COLL_TO_RESULT;
    if (back && *at == ONLINE_AT_HALF)
        return *at = ONLINE_AT_BEFORE, ONLINE_RENAME_BACKUP_TO_COLL;
    return ONLINE_RENAME_NONE;
}
