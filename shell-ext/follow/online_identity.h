/* A source collection's identity (online_identity.c): what says, where
 * the change log is silent (FerretDB's oplog logs no drop, rename or
 * collMod; mongo-java-server's streams no rename), that the collection
 * under a source's name is no longer the one remodel read. */
#ifndef REMODEL_ONLINE_IDENTITY_H
#define REMODEL_ONLINE_IDENTITY_H

#include "online_state.h"

/* The identity of each of nss ("db.coll") now, appended to out (an
 * array, emptied first) as {ns, exists, uuid (where listCollections'
 * info.uuid gives one), options}. why: the server's error, unwrapped. */
bool online_identity_read (online_t *on, const char **nss, size_t n, bson_t *out,
                           bson_error_t *why);

/* was (recorded with a point) against now: *gone the first source of
 * was that now does not exist (NULL: none); changed, when not "", says
 * which source is another collection than at the point, or has other
 * options. A namespace was does not name is not compared (a point
 * recorded before remodel recorded identities). */
void online_identity_compare (const bson_t *was, const bson_t *now, const char **gone,
                              char *changed, size_t cap);

/* Whether every source of now has a UUID, the same as in was: the
 * collections are those of the point, not others under their names. */
bool online_identity_proven (const bson_t *was, const bson_t *now);

/* The identities of nss now into out, errors said as the plan's. */
bool online_identity_now (online_t *on, const char **nss, size_t n, bson_t *out,
                          bson_error_t *err);
/* The point from (its sources, and the rescan an earlier round left)
 * against the identities now: a source changed, or one that was gone at
 * an earlier round, sets rescan (when "", cap its size); a source gone
 * refuses (false, err naming it and what goes on: follow retries it as a
 * transient error, for --retry-for; later, of size
 * ONLINE_IDENTITY_NOTE, what the caller records for the round that finds
 * it back: capture.rescan). */
#define ONLINE_IDENTITY_NOTE 300
bool online_identity_check (online_t *on, const online_capture_t *from, const bson_t *now,
                            char *rescan, size_t cap, char *later, bson_error_t *err);

#endif
