/* remodel: moves MongoDB dumps between schema designs. This file only
 * dispatches to the commands. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remodel/tmppath.h"
#include "tool.h"

static const char usage[] =
    "usage: remodel COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  inspect SRC        namespaces, counts, indexes and integrity of a dump\n"
    "  convert SRC DST    copy a dump into another format or compression\n"
    "  cat SRC            a dump as a plain archive on standard output\n"
    "  run PLAN --from SRC --to DST   apply a plan's schema steps to a dump\n"
    "  check PLAN [--against SRC]     validate a plan without running it\n"
    "  show SRC [--ns NS]             documents as Extended JSON, one per line\n"
    "  diff A B                       compare two dumps, document by document\n"
    "  analyze SRC                    relationships, cardinalities and sizes\n"
    "  online run|status PLAN --uri URI   apply a plan to a live server (the\n"
    "                     companion remodel-online, installed beside remodel)\n"
    "  compile PLAN [--format pipeline|mongosh|views]   the plan as aggregation\n"
    "                     pipelines, a mongosh script running them, or views\n"
    "                     of the old shape over the new collections\n"
    "\n"
    "remodel COMMAND --help tells more; options are named in full, never\n"
    "abbreviated. SRC and DST: mongodump archives (plain, gzip, zstd), dump\n"
    "directories, tars of them, .bson files, - for stdin/stdout.\n";

/* `remodel online ...` is the companion remodel-online found beside this
 * program (as git finds its subcommands): the offline commands never link
 * nor load libmongoc. */
static int
run_online (char **argv)
{
    char self[PATH_MAX], *slash;
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 32);
    if (n <= 0) {
        fprintf (stderr, "remodel: error: online: cannot find this program's directory: %s\n",
                 strerror (errno));
        return 1;
    }
    self[n] = '\0';
    slash = strrchr (self, '/');
    strcpy (slash ? slash + 1 : self, "remodel-online");
    argv[0] = self;
    /* Debian's libmongoc keeps its counters in /dev/shm/mongoc-PID, made
     * before main and left behind by a process that is killed; a later
     * process given that PID warns about it. The counters are of no use
     * to remodel: kept in memory instead. */
    setenv ("MONGOC_DISABLE_SHM", "1", 0);
    execv (self, argv);
    fprintf (stderr, "remodel: error: online: cannot run %s: %s (it is built and installed "
             "beside remodel: make, make install)\n", self, strerror (errno));
    return 1;
}

int
main (int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn) (int, char **);
    } commands[] = {{"inspect", cmd_inspect}, {"convert", cmd_convert}, {"cat", cmd_cat},
                    {"run", cmd_run}, {"check", cmd_check}, {"show", cmd_show},
                    {"diff", cmd_diff}, {"analyze", cmd_analyze}, {"compile", cmd_compile}};
    int rc;

    if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 ||
        strcmp (argv[1], "help") == 0) {
        fputs (usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp (argv[1], "--version") == 0) {
        printf ("remodel 0.1.0\n");
        return 0;
    }
    if (strcmp (argv[1], "online") == 0)
        return run_online (argv + 1);
    rm_signals_install ();
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp (argv[1], commands[i].name) == 0) {
            rc = tool_stdout_close (commands[i].fn (argc - 1, argv + 1));
            rm_tmppath_remove_all ();
            return rc;
        }
    fprintf (stderr, "remodel: error: unknown command \"%s\"\n%s", argv[1], usage);
    return 2;
}
