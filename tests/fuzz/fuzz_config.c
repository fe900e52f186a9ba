/* Fuzzes --config FILE's reader (shell-ext/cmd/online_config.c): the input
 * is the file's text. Whatever it holds, the reader takes its uri and
 * toUri or refuses it naming a line, never crashes, and a refusal leaves
 * neither connection string set. A crash or a sanitizer report is a
 * finding. */
#include <stdlib.h>

#include "fuzz.h"
#include "online_cmd.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    online_opts_t o = {.state_db = "remodel"};
    bson_error_t err = {0};
    bool ok = online_config_parse ("fuzz.yaml", (const char *) data, size, &o, &err);

    if (!ok && (o.uri || o.to_uri || !*err.message))
        abort (); /* a refusal sets nothing, and says why */
    if (ok && ((o.config_uri && o.uri != o.config_uri) ||
               (o.config_to_uri && o.to_uri != o.config_to_uri)))
        abort ();
    bson_free (o.config_uri);
    bson_free (o.config_to_uri);
    return 0;
}
