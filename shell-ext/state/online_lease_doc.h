/* A lease document checked before it is believed (online_lease_rule.c;
 * online_lease.c refuses one that fails, or sets it back when the command
 * was asked to: run --restart, rollback --forget). Beside online_state.h,
 * which declares the lease's other decisions. */
#ifndef REMODEL_ONLINE_LEASE_DOC_H
#define REMODEL_ONLINE_LEASE_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include <bson/bson.h>

/* Whether doc's fields have the types a run writes: owner a string, epoch
 * a whole number (a double only where it holds one exactly), expires a
 * date; a field missing passes (a lease older runs wrote lacks some).
 * False: *field names the first that fails, why (cap bytes) says what it
 * holds. Whether an epoch is in range is online_lease.c's to say. */
bool online_lease_doc_check (const bson_t *doc, const char **field, char *why, size_t cap);

#endif
