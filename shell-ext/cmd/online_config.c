/* --config FILE (issue 62): the connection strings from a file, as
 * mongo-tools' --config reads its YAML file, so that neither deployment's
 * password stands on the command line, in /proc/PID/cmdline, for as long
 * as a follow runs. The file holds "key: value" lines: uri and toUri
 * (values plain or in single or double quotes), blank lines and
 * "#" comments. Anything else is refused naming the file and the line:
 * a connection string silently not read would reach another server. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_cmd.h"

/* line, its key and value split (trimmed, unquoted) in place; false for
 * a line that is no "key: value". */
static bool
split (char *line, char **key, char **value)
{
    char *colon = strchr (line, ':'), *end;

    if (!colon)
        return false;
    *colon = '\0';
    *key = line + strspn (line, " \t");
    for (end = colon; end > *key && strchr (" \t", end[-1]); end--)
        ;
    *end = '\0';
    *value = colon + 1 + strspn (colon + 1, " \t");
    end = *value + strlen (*value);
    while (end > *value && strchr (" \t\r\n", end[-1]))
        end--;
    *end = '\0';
    if (end - *value >= 2 && (**value == '"' || **value == '\'') && end[-1] == **value) {
        end[-1] = '\0';
        (*value)++;
    }
    return **key != '\0';
}

bool
online_config_read (const char *path, online_opts_t *o, bson_error_t *err)
{
    FILE *f = fopen (path, "r");
    char line[4096];
    int n = 0;
    bool ok = true;

    if (!f) {
        rm_error_set (err, RM_ERR_USAGE, "--config %s: %s", path, strerror (errno));
        return false;
    }
    while (ok && fgets (line, sizeof line, f)) {
        char *key, *value, *at = line + strspn (line, " \t");
        char **slot;
        const char *given;
        n++;
        if (!strchr (line, '\n') && !feof (f)) {
            rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: a line over %zu bytes", path, n,
                          sizeof line - 2);
            ok = false;
        } else if (*at == '#' || strspn (at, " \t\r\n") == strlen (at)) {
            continue;
        } else if (!split (line, &key, &value)) {
            rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: not \"key: value\" (the keys are "
                          "uri and toUri)", path, n);
            ok = false;
        } else if (strcmp (key, "uri") && strcmp (key, "toUri")) {
            /* The key is the file's, not a secret: named, escaped by the
             * printer at the top. */
            rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: unknown key \"%s\" (the keys are "
                          "uri and toUri)", path, n, key);
            ok = false;
        } else {
            bool to = !strcmp (key, "toUri");
            slot = to ? &o->config_to_uri : &o->config_uri;
            given = to ? o->to_uri : o->uri;
            if (given || *slot) {
                rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: %s is given %s; give it once",
                              path, n, key, *slot ? "twice in the file" : "on the command line too");
                ok = false;
            } else if (!*value) {
                rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: %s is empty", path, n, key);
                ok = false;
            } else {
                *slot = bson_strdup (value);
            }
        }
    }
    if (ok && ferror (f)) {
        rm_error_set (err, RM_ERR_USAGE, "--config %s: %s", path, strerror (errno));
        ok = false;
    }
    fclose (f);
    if (ok && o->config_uri)
        o->uri = o->config_uri;
    if (ok && o->config_to_uri)
        o->to_uri = o->config_to_uri;
    return ok;
}
