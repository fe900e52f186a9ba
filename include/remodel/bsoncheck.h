/* Validation of one BSON document from an untrusted file. */
#ifndef REMODEL_BSONCHECK_H
#define REMODEL_BSONCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RM_BSON_MAX_SIZE (16 * 1024 * 1024)           /* server and mongorestore */
#define RM_BSON_MAX_OPLOG_SIZE (RM_BSON_MAX_SIZE + 16 * 1024) /* oplog, bsondump */

typedef struct {
    size_t offset;     /* byte offset of the fault inside the document */
    char reason[160];
} rm_bson_fault_t;

/* Checks the length, terminator, every element's type and length, nested
 * documents and UTF-8 of strings and keys. doc holds exactly len bytes. */
bool rm_bson_check (const uint8_t *doc, size_t len, rm_bson_fault_t *fault);

#endif
