/* Names in --log-format json lines (online.h): a plan's file name
 * or a namespace may hold quotes, backslashes, control bytes or bytes that
 * are not UTF-8. The escaping is extjson.c's, so a line is JSON whatever
 * the names (valid UTF-8 passes through, a stray byte becomes U+FFFD). */
#include <stdio.h>
#include <string.h>

#include "online.h"
#include "remodel/extjson.h"

void
online_json_string (rm_buf_t *out, const char *s)
{
    bson_t b = BSON_INITIALIZER;
    bson_iter_t it;

    /* bson_append_utf8 copies the bytes as they are (no validation), so
     * the escaping sees exactly the name. */
    bson_append_utf8 (&b, "s", 1, s, (int) strlen (s));
    if (bson_iter_init_find (&it, &b, "s"))
        rm_extjson_value (out, &it, RM_EXTJSON_RELAXED);
    bson_destroy (&b);
}

void
online_json_batch (const online_t *on, const online_batch_line_t *b)
{
    rm_buf_t line;
    char nums[200];

    rm_buf_init (&line);
    rm_buf_append (&line, "{\"plan\":", 8);
    online_json_string (&line, on->run->names.name);
    snprintf (nums, sizeof nums, ",\"step\":%zu,\"op\":", b->s->index);
    rm_buf_append (&line, nums, strlen (nums));
    online_json_string (&line, b->s->op);
    snprintf (nums, sizeof nums, ",\"pass\":%zu,\"ns\":", b->pass + 1);
    rm_buf_append (&line, nums, strlen (nums));
    online_json_string (&line, b->ns);
    snprintf (nums, sizeof nums,
              "%s,\"batch\":%lld,\"ms\":%lld,\"read\":%lld,\"written\":%lld,\"rate\":%lld}\n",
              b->server_side ? ",\"serverSide\":true" : "", (long long) b->n, (long long) b->ms,
              (long long) b->seen, (long long) b->written, (long long) b->rate);
    rm_buf_append (&line, nums, strlen (nums));
    online_say_json (on, &line);
    rm_buf_destroy (&line);
}
