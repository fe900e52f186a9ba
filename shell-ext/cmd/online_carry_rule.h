/* The decisions of rollback --carry-writes (online_carry.c) that need no
 * server (online_carry_rule.c; tests/unit/test_online_carry_rule.c). */
#ifndef REMODEL_ONLINE_CARRY_RULE_H
#define REMODEL_ONLINE_CARRY_RULE_H

#include "online_cmd.h"

/* The plan's inverse into inv (a plan's document, {remodel: 1, steps:
 * [...]}, initialised here): each step's inverse, the last step's first
 * (composed: each runs over what the one before it gave back). kept[i]
 * (kept NULL: none) says that step i kept what it overwrites or drops
 * (run --keep-before): a kept delete's inverse is the documents it kept,
 * given back (online_carry_kept.c runs it; its place in inv holds an
 * unset of a field no document has, never run). false: *refused is the
 * first step of the plan without one, *why its reason (the step table's
 * words), inv left empty. */
bool online_carry_inverse (const rm_plan_t *plan, const bool *kept, bson_t *inv, size_t *refused,
                           const char **why);

/* A document of a kept set's namespace as it is now (doc), into out, as
 * the run before the set had it where the application did not change it
 * since: each field f the set writes (fields, n, top-level) that the run
 * kept of this document (entry's old: it had f) gets its old value back
 * where it still holds what the set made of it (entry's new, the same
 * type and bytes), and keeps the application's where not (a value, or
 * its removal); one the document did not have is removed. Without an
 * entry (entry NULL: a document the application inserted after the
 * switch), f stays as the document has it where stay[i] says so (some
 * document had f before the run; stay NULL: none), and is removed
 * otherwise, as the set's inverse does. The other fields stay, in their
 * order. */
void online_carry_restore (const uint8_t *doc, uint32_t len, const rm_path_t *fields, size_t n,
                           const bson_t *entry, const bool *stay, bson_t *out);
/* Which of fields (n) the run found in some document of step's namespace
 * as it began (before's present list for step: online_carry_before's
 * record), into had; none where it recorded nothing. */
void online_carry_present (const bson_t *before, size_t step, const rm_path_t *fields, size_t n,
                           bool *had);

/* Whether a step of on's plan before step i writes ns (its input or its
 * target side by side): an inverse exact only by the data's own _ids is
 * then refused. */
bool online_carry_written_before (const online_t *on, size_t i, const char *ns);

/* What the run recorded at its start (<state-db>.before, before: NULL
 * when there is none) says of step's fields, which its inverse removes:
 * ABSENT (none was there: the originals are checked next), or a refusal
 * with its reason in said: UNRECORDED (no entry for this plan's digest and
 * step), UNKNOWN (the run could not tell), PRESENT (*field: the first
 * that was there, pointing into before). */
typedef enum {
    ONLINE_CARRY_ABSENT,
    ONLINE_CARRY_UNRECORDED,
    ONLINE_CARRY_UNKNOWN,
    ONLINE_CARRY_PRESENT,
} online_carry_before_t;
online_carry_before_t online_carry_before (const bson_t *before, const char *digest, size_t step,
                                           const char **field, char *said, size_t cap);

/* What a document the inverse made (doc) does to the original of its _id
 * (orig; NULL: none): KEEP (the same fields and values, in any order),
 * INSERT, REPLACE. Where a namespace was not switched in, any but KEEP is
 * a difference, counted, not written. */
typedef enum {
    ONLINE_CARRY_KEEP,
    ONLINE_CARRY_INSERT,
    ONLINE_CARRY_REPLACE,
} online_carry_write_t;
online_carry_write_t online_carry_write (const uint8_t *orig, uint32_t olen, const uint8_t *doc,
                                         uint32_t len);

/* The namespaces of a (differ[k] of their originals differing from what
 * the inverse makes) named in said, "ns: N document(s)", comma-separated;
 * its length (0: none differs). */
size_t online_carry_held (const online_after_t *a, const int64_t *differ, char *said, size_t cap);

#endif
