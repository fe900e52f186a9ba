/* Collection names as mongodump writes them in file names. */
#ifndef REMODEL_NSNAME_H
#define REMODEL_NSNAME_H

#include <stdbool.h>
#include <stddef.h>

/* The longest escaped name mongodump keeps before it hashes. */
#define RM_NSNAME_MAX_ESCAPED 238

/* Escapes a collection name the way mongodump names its files: Go's query
 * escaping (A-Z a-z 0-9 - _ . ~ kept, space to '+', others %XX uppercase),
 * and past 238 bytes the first 208 bytes + "%24" + base64url(SHA-1(name)).
 * Returns a new string (bson_free it). */
char *rm_nsname_escape (const char *coll);

/* Reverses the query escaping of a file stem. Returns a new string, or NULL
 * when the stem holds a bad %XX sequence. A hashed long name cannot be
 * reversed: its real name comes from the metadata's collectionName. */
char *rm_nsname_unescape (const char *stem);

/* True when the stem has the hashed long-name form (ends in %24 + 27 chars
 * of base64url). */
bool rm_nsname_is_hashed (const char *stem);

/* SHA-1 of len bytes, used by the long-name form. */
void rm_sha1 (const void *data, size_t len, unsigned char out[20]);

#endif
