/* Errors, the libbson way: the callee fills a bson_error_t and returns a
 * failure value; the command at the top prints it once. */
#ifndef REMODEL_ERROR_H
#define REMODEL_ERROR_H

#include <bson/bson.h>
#include <stdint.h>

#define RM_ERROR_DOMAIN 0x726d /* "rm" */

typedef enum {
    RM_ERR_IO = 1,      /* the operating system refused a read, write, rename... */
    RM_ERR_FORMAT,      /* the input is not what it claims to be (bad bytes) */
    RM_ERR_CRC,         /* an archive namespace's CRC-64 does not match */
    RM_ERR_USAGE,       /* a bad option, flag or argument */
    RM_ERR_EXISTS,      /* the destination exists and --force was not given */
    RM_ERR_NOMEM,
    RM_ERR_INTERRUPTED, /* SIGINT or SIGTERM arrived */
    RM_ERR_UNSUPPORTED, /* valid input this build cannot handle */
    RM_ERR_DATA,        /* a valid document the plan cannot apply to (a field
                           in the way, an array where a path goes through):
                           exit status 1, unlike a usage error's 2 */
    RM_ERR_WINDOW,      /* online finalize: the cut-over would pass --max-window;
                           nothing switched, retry later: exit status 3 */
} rm_errcode_t;

/* Fills err (which may be NULL) with the RM_ERROR_DOMAIN domain. */
void rm_error_set (bson_error_t *err, rm_errcode_t code, const char *fmt, ...)
    BSON_GNUC_PRINTF (3, 4);

/* The error for one bad document, in the one format every reader uses:
 * "FILE: NS: document N at byte OFFSET: REASON". ns may be NULL or "". */
void rm_error_doc (bson_error_t *err, rm_errcode_t code, const char *file,
                   const char *ns, uint64_t ordinal, uint64_t offset,
                   const char *fmt, ...) BSON_GNUC_PRINTF (7, 8);

/* Puts "PREFIX: " in front of an error message already set. */
void rm_error_prefix (bson_error_t *err, const char *fmt, ...)
    BSON_GNUC_PRINTF (2, 3);

/* Set by the SIGINT/SIGTERM handler; long loops check it and fail with
 * RM_ERR_INTERRUPTED so the normal error path removes temporary output. */
extern volatile int rm_interrupted;
void rm_signals_install (void);

/* The input file mapped now (read_ahead.c), named by the SIGBUS handler
 * when it is cut short under the mapping; NULL when none is. */
extern const char *volatile rm_mapped_file;

#endif
