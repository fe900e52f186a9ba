/* Forgetting a plan (rollback): everything its runs left in the state
 * database, its key map and its journal of made _ids first, then its
 * checkpoints, its partitions', what its run found before it wrote (the
 * "before" document, for --carry-writes) and its record (online_state.c).
 * Above
 * the key map and the journal, which the record's file sits below; the
 * partitions' checkpoints here too, which --restart forgets as well
 * (online_plan_record), below the partitions' own file, which updates
 * the record. */
#include "online_state.h"

bool
online_parts_forget (online_t *on, bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, on->o->state_db, "partitions");
    bson_t *del = BCON_NEW ("plan", BCON_UTF8 (on->names.id));
    bson_error_t why;
    bool ok = mongoc_collection_delete_many (c, del, NULL, NULL, &why) ||
              online_fail (on, err, &why, "forgetting the partitions' checkpoints");
    bson_destroy (del);
    mongoc_collection_destroy (c);
    return ok;
}

bool
online_plan_forget (online_t *on, bson_error_t *err)
{
    mongoc_collection_t *c = online_collection (on, on->o->state_db, "plans");
    mongoc_collection_t *cp = online_collection (on, on->o->state_db, "checkpoints");
    mongoc_collection_t *bf = online_collection (on, on->o->state_db, "before");
    bson_t *q = BCON_NEW ("_id", BCON_UTF8 (on->names.id));
    bson_t *del = BCON_NEW ("plan", BCON_UTF8 (on->names.id));
    bson_error_t why;
    /* The lease and its fences stay: the next run's epoch is higher. */
    bool ok = online_lease_check (on, err) && online_keys_drop_plan (on, err) &&
              online_made_drop (on, true, err) &&
              online_parts_forget (on, err) &&
              ((mongoc_collection_delete_many (cp, del, NULL, NULL, &why) &&
                mongoc_collection_delete_one (bf, q, NULL, NULL, &why) &&
                mongoc_collection_delete_one (c, q, NULL, NULL, &why)) ||
               online_fail (on, err, &why, "forgetting the plan's state"));
    bson_destroy (del);
    bson_destroy (q);
    mongoc_collection_destroy (bf);
    mongoc_collection_destroy (cp);
    mongoc_collection_destroy (c);
    return ok;
}
