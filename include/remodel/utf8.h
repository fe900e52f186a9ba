/* One UTF-8 sequence, checked: for the places that print text from the
 * input (messages, Extended JSON) and must tell valid characters apart. */
#ifndef REMODEL_UTF8_H
#define REMODEL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (2 to 4) of the valid multi-byte sequence at s, with at most n
 * bytes left, and its code point in *cp; 0 when it is not one (a stray or
 * overlong byte, a surrogate, past U+10FFFF). */
static inline size_t
rm_utf8_decode (const uint8_t *s, size_t n, uint32_t *cp)
{
    size_t len;
    uint32_t c, min;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2; c = s[0] & 0x1F; min = 0x80;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3; c = s[0] & 0x0F; min = 0x800;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4; c = s[0] & 0x07; min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

#endif
