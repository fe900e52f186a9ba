/* Atomic output: temporary files and directories beside the destination,
 * renamed into place on success and removed on failure or on a signal. */
#ifndef REMODEL_TMPPATH_H
#define REMODEL_TMPPATH_H

#include <stdbool.h>
#include <time.h>
#include "remodel/error.h"

/* A new unique temporary name beside dst ("DIR/.NAME.remodel-PID-N"),
 * registered for removal at exit. bson_free the result. */
char *rm_tmppath_new (const char *dst);

/* True for a name rm_tmppath_new makes (".NAME.remodel-PID-N"), so that
 * readers of a directory pass over remodel's own temporary files. */
bool rm_tmppath_is_temporary (const char *base);

/* The temporary directory: tmpdir (--tmp) if given, else $TMPDIR, else
 * /tmp (an empty value counts as none). */
const char *rm_tmpdir (const char *tmpdir);

/* Whether the process that made a temporary name with this PID, whose file
 * last changed at `changed`, is gone: never for our own PID; yes when no
 * process has the PID (kill (pid, 0) fails with ESRCH); and yes when the
 * process that has it now started more than a minute after the file last
 * changed (/proc/PID/stat), since it cannot have made the file: the PID
 * was reused. A PID in another PID namespace (a directory shared between
 * containers or machines) is not told apart: don't share --tmp so. */
bool rm_tmppath_owner_gone (long pid, time_t changed);

/* Removes from dir the temporary files and directories of remodel
 * processes that are gone (killed with SIGKILL, or a machine that
 * stopped): names rm_tmppath_new made (rm_tmppath_is_temporary) whose
 * maker rm_tmppath_owner_gone says is gone. Returns how many it removed. */
size_t rm_tmppath_sweep (const char *dir);

/* rm_tmppath_sweep over the directory dst lands in (none for NULL or "-")
 * and the temporary directory (rm_tmpdir (tmpdir)), once if they are the
 * same. Returns how many names it removed in all; where (where_len bytes)
 * gets the directories they were in, "DIR" or "DIR and DIR". */
size_t rm_tmppath_sweep_for (const char *dst, const char *tmpdir, char *where,
                             size_t where_len);

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
