/* Forgetting a plan (rollback): everything its runs left in the state
 * database, its key map and its journal of made _ids first, then its
 * checkpoints, its partitions', what its run found before it wrote (the
 * "before" document and what run --keep-before kept, for
 * --carry-writes) and its record (online_state.c).
 * Above
 * the key map and the journal, which the record's file sits below; the
 * partitions' checkpoints here too, which --restart forgets as well
 * (online_plan_record), below the partitions' own file, which updates
 * the record. */
#include <stdio.h>

#include "online_state.h"

bool
online_parts_forget (online_t *on, bson_error_t *err)
{
    bson_t *del = BCON_NEW ("plan", BCON_UTF8 (on->run->names.id));
    bson_error_t why;
    bool ok = online_ops (on)->state_delete (on, "partitions", del, true, &why) ||
              online_fail (on, err, &why, "forgetting the partitions' checkpoints");
    bson_destroy (del);
    return ok;
}

void
online_kept_name (const online_t *on, char *buf, size_t cap)
{
    snprintf (buf, cap, "kept_%s", on->run->names.id);
}

bool
online_kept_drop (online_t *on, bson_error_t *err)
{
    char name[160];
    mongoc_collection_t *c;
    bson_error_t why;
    bool ok;
    online_kept_name (on, name, sizeof name);
    c = online_collection (on, on->run->o->state_db, name);
    /* NamespaceNotFound: nothing kept, nothing to forget. */
    ok = online_lease_check (on, err) &&
         (online_ops (on)->drop (on, c, &why) || online_drop_gone (&why) ||
          online_fail (on, err, &why, "dropping what the run kept (--keep-before)"));
    mongoc_collection_destroy (c);
    return ok;
}

bool
online_plan_forget (online_t *on, bson_error_t *err)
{
    const online_ops_t *ops = online_ops (on);
    bson_t *q = BCON_NEW ("_id", BCON_UTF8 (on->run->names.id));
    bson_t *del = BCON_NEW ("plan", BCON_UTF8 (on->run->names.id));
    bson_error_t why;
    /* The lease and its fences stay: the next run's epoch is higher. */
    bool ok = online_lease_check (on, err) && online_keys_drop_plan (on, err) &&
              online_made_drop (on, true, err) && online_kept_drop (on, err) &&
              online_parts_forget (on, err) &&
              ((ops->state_delete (on, "checkpoints", del, true, &why) &&
                ops->state_delete (on, "before", q, false, &why) &&
                ops->state_delete (on, "plans", q, false, &why)) ||
               online_fail (on, err, &why, "forgetting the plan's state"));
    bson_destroy (del);
    bson_destroy (q);
    return ok;
}
