/* Validation of one untrusted BSON document.
 *
 * The frame (length prefix, terminator) is checked here so the reason can be
 * precise; the element walk (types, lengths, nesting, UTF-8) is libbson's
 * bson_validate, which also reports the offset where it stopped. */
#include <stdio.h>
#include <string.h>

#include <bson/bson.h>

#include "remodel/bsoncheck.h"

static bool
fault (rm_bson_fault_t *f, size_t offset, const char *reason)
{
    if (f) {
        f->offset = offset;
        snprintf (f->reason, sizeof f->reason, "%s", reason);
    }
    return false;
}

bool
rm_bson_check (const uint8_t *doc, size_t len, rm_bson_fault_t *f)
{
    bson_t b;
    bson_error_t err;
    size_t offset = 0;
    int32_t declared;

    if (len < 5)
        return fault (f, 0, "document shorter than 5 bytes");
    memcpy (&declared, doc, 4);
    declared = BSON_UINT32_FROM_LE (declared);
    if (declared < 5 || (size_t) declared != len)
        return fault (f, 0, "bad document length");
    if (doc[len - 1] != 0)
        return fault (f, len - 1, "document does not end with 0x00");
    if (!bson_init_static (&b, doc, len))
        return fault (f, 0, "bad document length");
    /* Strings may hold NUL bytes (they are length-prefixed); keys may not,
     * and the walk rejects those as corrupt. */
    if (bson_validate (&b, BSON_VALIDATE_UTF8 | BSON_VALIDATE_UTF8_ALLOW_NULL, &offset))
        return true;
    if (!bson_validate_with_error (&b, BSON_VALIDATE_UTF8 | BSON_VALIDATE_UTF8_ALLOW_NULL,
                                   &err))
        return fault (f, offset, err.message);
    return fault (f, offset, "invalid BSON");
}
