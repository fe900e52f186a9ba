/* The fault layer as the installed program has it: none. The tests' layer
 * (online_fault.c: calls cut, failed or delayed as REMODEL_ONLINE_FAULT
 * asks, and the hooks: a short lease, a pause before finalize's switch, a
 * slow call, a wait at the end) is linked into test programs only
 * (build/tests/fault/, the in-process matrix), in this file's place, so no
 * variable a user sets can make remodel-online drop a call, or shorten its
 * lease, on purpose. */
#include "online.h"

bool
online_fault_install (mongoc_client_t *client, bson_error_t *err)
{
    (void) client;
    (void) err;
    return true;
}

void
online_fault_thread (const char *kind)
{
    (void) kind;
}

int64_t
online_hook_ms (online_hook_t hook)
{
    (void) hook;
    return 0;
}
