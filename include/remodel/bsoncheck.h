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

/* The byte scans rm_bson_check may use: it takes the best the CPU has. */
typedef enum {
    RM_BSON_ISA_SCALAR, /* portable, 8 bytes at a time */
    RM_BSON_ISA_SSE2,   /* x86-64: 16- and 32-byte windows */
    RM_BSON_ISA_AVX2,   /* and AVX2 and BMI2 for long text */
    RM_BSON_ISA_BEST = RM_BSON_ISA_AVX2
} rm_bson_isa_t;

/* rm_bson_check limited to isa (or the best below it the build and CPU
 * have), for tests and benchmarks: every path must give the same verdict,
 * reason and offset. */
bool rm_bson_check_isa (const uint8_t *doc, size_t len, rm_bson_fault_t *fault,
                        rm_bson_isa_t isa);

#endif
