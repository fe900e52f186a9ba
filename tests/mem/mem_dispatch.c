/* One command: the test settings (a command made to fail or wait), then
 * the handlers, one family of commands each, under the store's lock. */
#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <string.h>
#include <unistd.h>

#include "mem.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mem_settings_t settings = {.fail_times = -1};

mem_settings_t *
mem_settings (void)
{
    return &settings;
}

void
mem_error_reply (bson_t *reply, int code, const char *msg)
{
    bson_reinit (reply);
    BSON_APPEND_DOUBLE (reply, "ok", 0);
    BSON_APPEND_UTF8 (reply, "errmsg", msg);
    BSON_APPEND_INT32 (reply, "code", code);
}

/* The command a setting names: its name, or "*" for any but the
 * handshake and the test commands themselves. */
static bool
names (const char *setting, const char *cmd)
{
    if (!*setting)
        return false;
    if (strcmp (setting, "*"))
        return !strcasecmp (setting, cmd);
    return strcasecmp (cmd, "hello") && strcasecmp (cmd, "isMaster") && strncmp (cmd, "mem", 3) &&
           strcmp (cmd, "endSessions");
}

void
mem_command (const mem_call_t *call, bson_t *reply)
{
    static bool (*const handlers[]) (const mem_call_t *, bson_t *, bool *) = {
        mem_cmd_admin, mem_cmd_crud, mem_cmd_write, mem_cmd_ddl, mem_cmd_test,
    };
    bool handled = false;
    int delay = 0;

    pthread_mutex_lock (&lock);
    if (names (settings.delay_cmd, call->name))
        delay = settings.delay_ms;
    if (names (settings.fail_cmd, call->name) && settings.fail_times != 0) {
        char msg[160];
        if (settings.fail_times > 0)
            settings.fail_times--;
        snprintf (msg, sizeof msg, "remodel-memsrv: %s made to fail (test setting)", call->name);
        mem_error_reply (reply, settings.fail_code, msg);
        pthread_mutex_unlock (&lock);
        return;
    }
    pthread_mutex_unlock (&lock);
    /* A delay holds only this connection, as a slow server's answer. */
    if (delay > 0)
        usleep ((useconds_t) delay * 1000);

    pthread_mutex_lock (&lock);
    for (size_t i = 0; !handled && i < sizeof handlers / sizeof *handlers; i++) {
        bson_reinit (reply);
        handlers[i](call, reply, &handled);
    }
    if (!handled) {
        char msg[200];
        snprintf (msg, sizeof msg, "no such command: '%s'", call->name);
        mem_error_reply (reply, MEM_E_CMD_NOT_FOUND, msg);
        BSON_APPEND_UTF8 (reply, "codeName", "CommandNotFound");
    }
    pthread_mutex_unlock (&lock);
}
