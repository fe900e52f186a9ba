/* One map from an error to the exit status, for every program: the
 * scripts around remodel tell a refusal (fix the command or the plan)
 * from a failure (the data, the system, the server) by it. */
#include "remodel/cli.h"

int
rm_cli_exit_status (const bson_error_t *err)
{
    if (err->domain != RM_ERROR_DOMAIN)
        return 1;
    switch (err->code) {
    case RM_ERR_USAGE:
    case RM_ERR_UNSUPPORTED:
        return 2;
    case RM_ERR_WINDOW:
        return 3; /* nothing done: let the writes resume, try again */
    case RM_ERR_INTERRUPTED:
        return 130; /* 128 + SIGINT, as a shell reports it */
    default:
        return 1;
    }
}
