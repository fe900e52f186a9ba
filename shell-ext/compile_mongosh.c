/* remodel compile --format mongosh: placeholder until the script lands. */
#include "compile.h"

char *
compile_print_mongosh (online_t *on, const compile_plan_t *c, bson_error_t *err)
{
    (void) on;
    (void) c;
    rm_error_set (err, RM_ERR_UNSUPPORTED, "--format mongosh is not written yet");
    return NULL;
}
