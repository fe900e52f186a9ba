/* A string field of a record remodel stored on the server (the switch's
 * journal, the record of the writes after the switch, the throttle's),
 * copied into a fixed buffer: "" when it is missing or not a string; a
 * dotted key reaches into sub-documents ("throttle.reason"). Calls
 * nothing of the program. */
#include <stdio.h>

#include "online.h"

void
online_field_utf8 (const bson_t *doc, const char *key, char *buf, size_t cap)
{
    bson_iter_t it, f;
    *buf = '\0';
    if (bson_iter_init (&it, doc) && bson_iter_find_descendant (&it, key, &f) &&
        BSON_ITER_HOLDS_UTF8 (&f))
        snprintf (buf, cap, "%s", bson_iter_utf8 (&f, NULL));
}
