/* Collection names in mongodump file names.
 *
 * mongodump (mongodump/prepare.go, outputPath) names a collection's files
 * url.QueryEscape(name), and when that is longer than 238 bytes it keeps the
 * first 208 bytes of the escaped form, cut blindly (the cut may fall inside
 * a %XX sequence, leaving "%" or "%C" before the delimiter), then "%24" and
 * the unpadded base64url SHA-1 of the raw name: 208 + 3 + 27 = 238 bytes.
 * mongorestore reverses the escaping with url.QueryUnescape ('+' is a space)
 * and takes hashed names from the metadata's collectionName. */
#include <bson/bson.h>
#include <stdio.h>
#include <string.h>

#include "remodel/nsname.h"
#include "remodel/sha1.h"

#define HASHED_PREFIX 208
#define HASH_CHARS 27 /* base64 of 20 bytes, no padding */

static bool
is_kept (unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

static bool
is_base64url (unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
}

static int
hex_value (unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Unpadded base64url of 20 bytes: 27 characters and a NUL into out. */
static void
base64url_sha1 (const unsigned char in[20], char out[HASH_CHARS + 1])
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    int i;

    for (i = 0; i + 3 <= 20; i += 3) {
        uint32_t v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8 | in[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = alphabet[(v >> 6) & 63];
        out[o++] = alphabet[v & 63];
    }
    /* two bytes left: 16 bits in three characters, the last 2 bits zero */
    {
        uint32_t v = (uint32_t) in[18] << 16 | (uint32_t) in[19] << 8;
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = alphabet[(v >> 6) & 63];
    }
    out[o] = '\0';
}

char *
rm_nsname_escape (const char *coll)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *) coll;
    size_t raw_len = strlen (coll), len = 0, o = 0;
    char *out;

    for (size_t i = 0; i < raw_len; i++)
        len += (is_kept (s[i]) || s[i] == ' ') ? 1 : 3;

    out = bson_malloc (len + 1);
    for (size_t i = 0; i < raw_len; i++) {
        if (is_kept (s[i])) {
            out[o++] = (char) s[i];
        } else if (s[i] == ' ') {
            out[o++] = '+';
        } else {
            out[o++] = '%';
            out[o++] = hex[s[i] >> 4];
            out[o++] = hex[s[i] & 15];
        }
    }
    out[o] = '\0';

    if (len > RM_NSNAME_MAX_ESCAPED) {
        unsigned char digest[20];
        rm_sha1 (coll, raw_len, digest);
        /* out has more than 238 bytes: room for 208 + 3 + 27 + NUL */
        memcpy (out + HASHED_PREFIX, "%24", 3);
        base64url_sha1 (digest, out + HASHED_PREFIX + 3);
    }
    return out;
}

char *
rm_nsname_unescape_len (const char *stem, size_t *out_len)
{
    const unsigned char *s = (const unsigned char *) stem;
    size_t len = strlen (stem), o = 0;
    char *out = bson_malloc (len + 1);

    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < len ? hex_value (s[i + 1]) : -1;
            int lo = i + 2 < len ? hex_value (s[i + 2]) : -1;
            if (hi < 0 || lo < 0) { /* truncated or not hex */
                bson_free (out);
                return NULL;
            }
            out[o++] = (char) (hi << 4 | lo);
            i += 2;
        } else if (s[i] == '+') {
            out[o++] = ' ';
        } else {
            out[o++] = (char) s[i];
        }
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

char *
rm_nsname_unescape (const char *stem)
{
    size_t len;
    char *out = rm_nsname_unescape_len (stem, &len);
    if (out && strlen (out) != len) { /* %00: collection names never hold NUL */
        bson_free (out);
        return NULL;
    }
    return out;
}

bool
rm_nsname_is_hashed (const char *stem)
{
    const unsigned char *s = (const unsigned char *) stem;

    if (strlen (stem) != HASHED_PREFIX + 3 + HASH_CHARS)
        return false;
    if (memcmp (s + HASHED_PREFIX, "%24", 3) != 0)
        return false;
    for (size_t i = HASHED_PREFIX + 3; i < HASHED_PREFIX + 3 + HASH_CHARS; i++)
        if (!is_base64url (s[i]))
            return false;
    return true;
}

bool
rm_nsname_check (const char *db, const char *coll, char *why, size_t why_len)
{
    size_t n = strlen (db);
    if (n == 0) {
        snprintf (why, why_len, "an empty database name");
        return false;
    }
    if (n >= 64) {
        snprintf (why, why_len, "a database name of %zu bytes (MongoDB allows 63)", n);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (strchr ("/\\. \"$", db[i])) {
            snprintf (why, why_len, "a database name holding '%c' (MongoDB refuses / \\ . space \" $)",
                      db[i]);
            return false;
        }
    if (!coll || !*coll) {
        snprintf (why, why_len, "an empty collection name");
        return false;
    }
    return true;
}

char *
rm_nsname_file (const char *root, const char *db, const char *coll, const char *suffix, char *why,
                size_t why_len)
{
    char *esc, *path;
    if (!rm_nsname_check (db, coll, why, why_len))
        return NULL;
    /* Escaping keeps only A-Z a-z 0-9 - _ . ~ and %XX: no '/'. A name of
     * dots alone stays a file name only with a suffix after it ("...bson"):
     * without one, "." and ".." would name directories. */
    if (!suffix || !*suffix) {
        snprintf (why, why_len, "no file suffix (a dump file is .bson or .metadata.json)");
        return NULL;
    }
    esc = rm_nsname_escape (coll);
    path = bson_strdup_printf ("%s/%s/%s%s", root, db, esc, suffix);
    bson_free (esc);
    return path;
}

char *
rm_nsname_dir (const char *root, const char *db, char *why, size_t why_len)
{
    /* A checked database name holds no '/' and no '.': one component,
     * never "." or "..". The collection is only there to pass the check. */
    if (!rm_nsname_check (db, "-", why, why_len))
        return NULL;
    return bson_strdup_printf ("%s/%s", root, db);
}

char *
rm_nsname_show (const char *name, size_t len)
{
    size_t nuls = 0, o = 0;
    char *out;
    for (size_t i = 0; i < len; i++)
        nuls += name[i] == '\0';
    out = bson_malloc (len + 3 * nuls + 1);
    for (size_t i = 0; i < len; i++) {
        if (name[i] == '\0') {
            memcpy (out + o, "\\x00", 4);
            o += 4;
        } else {
            out[o++] = name[i];
        }
    }
    out[o] = '\0';
    return out;
}
