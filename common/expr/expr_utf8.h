/* UTF-8 as the string and regex operators count it (expr_string.c,
 * expr_regex.c): code points by their lead bytes, as the server's
 * str::lengthInUTF8CodePoints does, without validating (a string read
 * from BSON is valid UTF-8 unless the dump says otherwise). Private to
 * common/expr/ and the layers above. */
#ifndef REMODEL_EXPR_UTF8_H
#define REMODEL_EXPR_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* A continuation byte, 10xxxxxx. */
static inline bool
rm_xutf8_is_cont (unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* The length a lead byte announces: its count of leading one bits (1 for
 * ASCII and, as on the server, for a stray continuation byte; up to 8 for
 * bytes no valid UTF-8 holds). */
static inline size_t
rm_xutf8_len (unsigned char c)
{
    size_t n = 0;
    if (c < 0x80)
        return 1;
    while (n < 8 && (c & (0x80u >> n)))
        n++;
    return n;
}

/* The code points in s[0..len): the bytes that are not continuations. */
static inline size_t
rm_xutf8_count (const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (!rm_xutf8_is_cont ((unsigned char) s[i]))
            n++;
    return n;
}

#endif
