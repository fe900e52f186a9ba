/* Scanning JSON text without parsing it: where a string or a value ends.
 * For the places that must point into the text (the plan's bad step and
 * its line, the metadata's collectionName) where a parser keeps no
 * positions. Bounded by len: the text need not end with a NUL. */
#ifndef REMODEL_JSONSCAN_H
#define REMODEL_JSONSCAN_H

#include <stddef.h>

/* The index just after the string that starts at s[i] (a '"'), or len. */
static inline size_t
rm_json_string_end (const char *s, size_t i, size_t len)
{
    for (i++; i < len; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return len;
}

/* The index just after the value that starts at s[i]: a string, an object
 * or array (brackets matched, strings skipped), or one other character
 * (enough for the callers, which only need objects and arrays). */
static inline size_t
rm_json_value_end (const char *s, size_t i, size_t len)
{
    size_t depth = 0;
    do {
        if (i >= len)
            return len;
        if (s[i] == '"') {
            i = rm_json_string_end (s, i, len);
            continue;
        }
        if (s[i] == '{' || s[i] == '[')
            depth++;
        else if (s[i] == '}' || s[i] == ']')
            depth--;
        i++;
    } while (depth > 0);
    return i;
}

#endif
