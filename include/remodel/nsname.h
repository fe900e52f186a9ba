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
 * when the stem holds a bad %XX sequence or %00. A hashed long name cannot be
 * reversed: its real name comes from the metadata's collectionName. */
char *rm_nsname_unescape (const char *stem);

/* The same, keeping a %00 as a NUL byte in the result (of *len bytes), so
 * that a reader can refuse the name and show it. */
char *rm_nsname_unescape_len (const char *stem, size_t *len);

/* True when the stem has the hashed long-name form (ends in %24 + 27 chars
 * of base64url). */
bool rm_nsname_is_hashed (const char *stem);

/* MongoDB's rules for names, as the server enforces them: a database name
 * is not empty, under 64 bytes, and has none of / \ . space " $ (nor NUL);
 * a collection name is not empty. Checked on every namespace read from a
 * dump and named in a plan; a name that breaks them is an error, never a
 * path. why gets the reason. The oplog (db "") is not checked. */
bool rm_nsname_check (const char *db, const char *coll, char *why, size_t why_len);

/* The path of a namespace's file inside a directory dump: root/db/ESCAPED
 * suffix, where ESCAPED is rm_nsname_escape (coll). Every file a dump is
 * written to is named here, and only here: db is checked again (a name
 * that breaks the rules could climb out of root with "..", "/"), and the
 * escaped collection name holds no '/', so the path is always inside
 * root. NULL (and why) for a name that cannot be written. */
char *rm_nsname_file (const char *root, const char *db, const char *coll, const char *suffix,
                      char *why, size_t why_len);

/* The directory root/db that holds a database's files, under the same
 * check: the only other path a dump writer builds from a name. */
char *rm_nsname_dir (const char *root, const char *db, char *why, size_t why_len);

/* A name of len bytes (it may hold NUL bytes, which a C string cannot
 * carry) as text for a message: each NUL becomes the four characters \x00,
 * as the message printer shows other control bytes. bson_free it. */
char *rm_nsname_show (const char *name, size_t len);

#endif
