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

/* rm_bson_check over documents one after another, keeping the layout of
 * one it found good (the type bytes, keys and value lengths of its first
 * fields of the types whose check is their bytes: numbers, dates,
 * ObjectIds, booleans, strings): a later document whose bytes agree with
 * it there has only its booleans' and strings' values checked in those
 * fields, and the rest walked. The same verdict, reason and offset as
 * rm_bson_check, whatever came before. The fields are its own. */
#define RM_BSON_LIKE_MAX 1024
#define RM_BSON_LIKE_FIELDS 64
typedef struct {
    uint8_t bytes[RM_BSON_LIKE_MAX], mask[RM_BSON_LIKE_MAX];
    uint32_t len;                        /* the bytes it covers, from 0 */
    uint32_t end[RM_BSON_LIKE_FIELDS]; /* each field's end */
    /* The values to check in them, in order: where each starts, and
     * whether it is a bool (else a string). */
    uint32_t check_at[RM_BSON_LIKE_FIELDS];
    uint8_t check_bool[RM_BSON_LIKE_FIELDS];
    uint32_t n, n_check; /* its fields (0: none yet), and values to check */
    uint32_t wait;    /* good documents to let go by before another */
    uint32_t backoff; /* the next wait, should that one serve no better */
    uint32_t served;  /* documents it placed half its fields of, or more */
} rm_bson_like_t;

void rm_bson_like_init (rm_bson_like_t *like);
bool rm_bson_check_like (rm_bson_like_t *like, const uint8_t *doc, size_t len,
                         rm_bson_fault_t *fault);

#endif
