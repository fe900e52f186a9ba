/*
 * oid.c: ObjectIds that look like a driver made them (4-byte creation time,
 * 5-byte process value, 3-byte counter) but are a pure function of
 * (seed, namespace, index, time). That lets one collection compute the _id of
 * a document in another (tasks.owner -> people._id) from its index alone,
 * without keeping every _id in memory.
 */
#include "gen.h"

void
gen_idgen_init (gen_idgen_t *idgen, uint64_t seed, const char *ns)
{
    const uint64_t h = gen_hash_str (seed, ns);

    idgen->process = h & UINT64_C (0xffffffffff);
    idgen->counter = (uint32_t) (h >> 40) & 0xffffffu;
}

/* The counter is (start + index); when it passes 24 bits the carry goes into
 * the process value, as if the driver had restarted. So ids stay unique for
 * up to 2^40 documents whatever the timestamps are. */
void
gen_idgen_oid (const gen_idgen_t *idgen, uint64_t index, int64_t unix_secs, bson_oid_t *oid)
{
    const uint64_t count = idgen->counter + index;
    const uint64_t process = (idgen->process + (count >> 24)) & UINT64_C (0xffffffffff);
    const uint32_t secs = (uint32_t) unix_secs;
    uint8_t bytes[12];

    bytes[0] = (uint8_t) (secs >> 24);
    bytes[1] = (uint8_t) (secs >> 16);
    bytes[2] = (uint8_t) (secs >> 8);
    bytes[3] = (uint8_t) secs;
    for (int i = 0; i < 5; i++) {
        bytes[4 + i] = (uint8_t) (process >> (8 * (4 - i)));
    }
    bytes[9] = (uint8_t) (count >> 16);
    bytes[10] = (uint8_t) (count >> 8);
    bytes[11] = (uint8_t) count;
    bson_oid_init_from_data (oid, bytes);
}
