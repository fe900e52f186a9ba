/* SHA-1 (common/base/sha1.c): mongodump's long-name digests and the online
 * mode's plan ids; not for anything security-related. */
#ifndef REMODEL_SHA1_H
#define REMODEL_SHA1_H

#include <stddef.h>

/* SHA-1 of len bytes into out. */
void rm_sha1 (const void *data, size_t len, unsigned char out[20]);

#endif
