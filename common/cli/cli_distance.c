/* How far a mistyped option is from each real one: the suggestion in
 * "unknown option "--form" (did you mean "--format"?)". */
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"

/* Levenshtein's, one row at a time; option names are short, so a row on
 * the stack does (longer texts are cut: they are no option's anyway). */
size_t
rm_cli_distance (const char *a, const char *b)
{
    size_t row[65], la = strlen (a), lb = strlen (b);
    if (la > 64)
        la = 64;
    if (lb > 64)
        lb = 64;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}
