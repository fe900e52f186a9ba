/* Namespace selection and renaming with mongorestore's patterns:
 * --nsInclude/--nsExclude ("db.*", "*.users", "\*" for a literal star) and
 * --nsFrom/--nsTo pairs, with "*" wildcards matched by position or named
 * "$var$" variables ("$db$.legacy_$coll$" -> "$db$.$coll$"). A pattern
 * matches the whole "db.collection"; "*" and a variable match any text,
 * the shortest first, as mongorestore's matcher does. */
#ifndef REMODEL_NSSELECT_H
#define REMODEL_NSSELECT_H

#include <stdbool.h>

#include "remodel/error.h"

typedef struct rm_nsselect rm_nsselect_t;

rm_nsselect_t *rm_nsselect_new (void);
void rm_nsselect_destroy (rm_nsselect_t *s);

/* Adds a pattern; RM_ERR_USAGE for a malformed one (a '$' in it). */
bool rm_nsselect_include (rm_nsselect_t *s, const char *pattern, bson_error_t *err);
bool rm_nsselect_exclude (rm_nsselect_t *s, const char *pattern, bson_error_t *err);
/* Adds a renaming; RM_ERR_USAGE when from and to do not pair up (another
 * number of wildcards, an unknown or repeated variable). A later pair is
 * tried before an earlier one, as in mongorestore. */
bool rm_nsselect_rename (rm_nsselect_t *s, const char *from, const char *to, bson_error_t *err);

/* Nothing asked: every namespace, under its own name. */
bool rm_nsselect_empty (const rm_nsselect_t *s);
/* The namespace is included (any include pattern matches, or there is none)
 * and not excluded. */
bool rm_nsselect_wants (const rm_nsselect_t *s, const char *ns);
/* Its new name (bson_free it), or NULL when no renaming applies. */
char *rm_nsselect_new_name (const rm_nsselect_t *s, const char *ns);

#endif
