/* Atomic output: temporary files and directories beside the destination,
 * renamed into place on success and removed on failure or on a signal. */
#ifndef REMODEL_TMPPATH_H
#define REMODEL_TMPPATH_H

#include <stdbool.h>
#include "remodel/error.h"

/* A new unique temporary name beside dst ("DIR/.NAME.remodel-PID-N"),
 * registered for removal at exit. bson_free the result. */
char *rm_tmppath_new (const char *dst);

/* True for a name rm_tmppath_new makes (".NAME.remodel-PID-N"), so that
 * readers of a directory pass over remodel's own temporary files. */
bool rm_tmppath_is_temporary (const char *base);

/* Removes from dir the temporary files and directories of remodel
 * processes that are gone (killed with SIGKILL, or a machine that
 * stopped): names rm_tmppath_new made whose PID no process has now.
 * Returns how many it removed. A PID that a live process has (even another
 * program, after reuse) keeps its files: never a live run's. */
size_t rm_tmppath_sweep (const char *dir);

/* Refuses an existing dst unless force (then it is replaced on commit). */
bool rm_tmppath_check_dst (const char *dst, bool force, bson_error_t *err);

/* Renames tmp onto dst (replacing a file or a directory when force) and
 * forgets tmp. */
bool rm_tmppath_commit (const char *tmp, const char *dst, bool force,
                        bson_error_t *err);

/* Removes tmp (a file or a whole directory) and forgets it. */
void rm_tmppath_remove (const char *tmp);

/* Removes every registered path still there: at exit and after a signal. */
void rm_tmppath_remove_all (void);

/* Recursively removes a directory tree. */
bool rm_rmtree (const char *path);

#endif
