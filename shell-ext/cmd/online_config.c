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

/* One "key: value" line (NUL-terminated, no newline) of name, the nth. */
static bool
config_line (const char *name, int n, char *line, online_opts_t *o, bson_error_t *err)
{
    char *key, *value, *at = line + strspn (line, " \t");
    char **slot;
    const char *given;
    bool to;

    if (*at == '#' || strspn (at, " \t\r") == strlen (at))
        return true;
    if (!split (line, &key, &value)) {
        rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: not \"key: value\" (the keys are uri "
                      "and toUri)", name, n);
        return false;
    }
    if (strcmp (key, "uri") && strcmp (key, "toUri")) {
        /* The key is the file's, not a secret: named, escaped by the
         * printer at the top. */
        rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: unknown key \"%s\" (the keys are uri "
                      "and toUri)", name, n, key);
        return false;
    }
    to = !strcmp (key, "toUri");
    slot = to ? &o->config_to_uri : &o->config_uri;
    given = to ? o->to_uri : o->uri;
    if (given || *slot) {
        rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: %s is given %s; give it once", name, n,
                      key, *slot ? "twice in the file" : "on the command line too");
        return false;
    }
    if (!*value) {
        rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: %s is empty", name, n, key);
        return false;
    }
    *slot = bson_strdup (value);
    return true;
}

bool
online_config_parse (const char *name, const char *text, size_t len, online_opts_t *o,
                     bson_error_t *err)
{
    char line[4096];
    int n = 0;
    bool ok = true;

    for (size_t at = 0; ok && at < len;) {
        const char *nl = memchr (text + at, '\n', len - at);
        size_t l = (nl ? (size_t) (nl - text) : len) - at;
        n++;
        if (l >= sizeof line) {
            rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: a line over %zu bytes", name, n,
                          sizeof line - 1);
            ok = false;
        } else if (memchr (text + at, '\0', l)) {
            /* A value cut at a NUL would name another server. */
            rm_error_set (err, RM_ERR_USAGE, "--config %s:%d: a NUL byte", name, n);
            ok = false;
        } else {
            memcpy (line, text + at, l);
            line[l] = '\0';
            ok = config_line (name, n, line, o, err);
        }
        at += l + 1;
    }
    if (ok && o->config_uri)
        o->uri = o->config_uri;
    if (ok && o->config_to_uri)
        o->to_uri = o->config_to_uri;
    return ok;
}

bool
online_config_read (const char *path, online_opts_t *o, bson_error_t *err)
{
    FILE *f = fopen (path, "r");
    char buf[1 << 16];
    size_t len;
    bool ok;

    if (!f) {
        rm_error_set (err, RM_ERR_USAGE, "--config %s: %s", path, strerror (errno));
        return false;
    }
    len = fread (buf, 1, sizeof buf, f);
    ok = !ferror (f);
    if (!ok)
        rm_error_set (err, RM_ERR_USAGE, "--config %s: %s", path, strerror (errno));
    else if (len == sizeof buf) {
        rm_error_set (err, RM_ERR_USAGE, "--config %s: over %zu bytes: not a file of connection "
                      "strings", path, sizeof buf - 1);
        ok = false;
    }
    fclose (f);
    return ok && online_config_parse (path, buf, len, o, err);
}
