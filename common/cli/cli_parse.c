/* The one option parser, over rm_cli_options (cli_table.c). Unlike
 * getopt_long it takes no abbreviation: "--form" was read as "--format"
 * and "--create-index" as "--create-indexes", so a typo or a flag of
 * another version could silently mean something else. A name is exact;
 * a wrong one is refused naming the nearest the command takes. */
#include <stdlib.h>
#include <string.h>

#include "remodel/cli.h"

static bool
takes (const rm_opt_t *o, rm_cmd_t cmd)
{
    return (o->cmds >> cmd) & 1u;
}

static bool
named (const rm_opt_t *o, const char *name, size_t len)
{
    return (strlen (o->name) == len && memcmp (o->name, name, len) == 0) ||
           (o->alias && strlen (o->alias) == len && memcmp (o->alias, name, len) == 0);
}

/* The row for --name (len bytes) the command takes, else NULL with *other
 * set when another command takes one so named. */
static const rm_opt_t *
find_long (rm_cmd_t cmd, const char *name, size_t len, bool *other)
{
    *other = false;
    for (size_t i = 0; i < rm_cli_n_options; i++)
        if (named (&rm_cli_options[i], name, len)) {
            if (takes (&rm_cli_options[i], cmd))
                return &rm_cli_options[i];
            *other = true;
        }
    return NULL;
}

static const rm_opt_t *
find_letter (rm_cmd_t cmd, char c, bool *other)
{
    *other = false;
    for (size_t i = 0; i < rm_cli_n_options; i++)
        if (rm_cli_options[i].letter == c) {
            if (takes (&rm_cli_options[i], cmd))
                return &rm_cli_options[i];
            *other = true;
        }
    return NULL;
}

/* How near name is to the one given, for ranking (0: not near): one
 * abbreviates the other ("--plan" and "--plan-output" for "--plan-out"),
 * nearer than any other way, or they are at most two edits apart (for
 * short words, fewer than half the letters: "zip" is not "dir"); then the
 * fewer edits the nearer. */
static size_t
near_name (const char *given, const char *name, bool word)
{
    size_t len = strlen (given), nlen = strlen (name), d = rm_cli_distance (given, name);
    if ((len && strncmp (name, given, len) == 0) || (nlen >= 2 && strncmp (given, name, nlen) == 0))
        return 1000 - d;
    return d <= 2 && d < len && (!word || d * 2 < len) ? 100 - d : 0;
}

/* The nearest name the command takes to the one given; NULL when none is
 * near. */
static const char *
nearest (rm_cmd_t cmd, const char *given)
{
    const char *best = NULL;
    size_t best_r = 0;
    for (size_t i = 0; i < rm_cli_n_options; i++) {
        const rm_opt_t *o = &rm_cli_options[i];
        const char *names[2] = {o->name, o->alias};
        if (!takes (o, cmd))
            continue;
        for (int k = 0; k < 2; k++) {
            size_t r = names[k] ? near_name (given, names[k], false) : 0;
            if (r > best_r)
                best = names[k], best_r = r;
        }
    }
    return best;
}

/* The nearest of an enumeration's words (their first spellings); NULL
 * when none is near. */
static const char *
nearest_word (const char *const *w, const char *given, char *buf, size_t cap)
{
    size_t best_r = 0;
    const char *best = NULL;
    for (size_t i = 0; w[i]; i++) {
        const char *bar = strchr (w[i], '|');
        size_t r;
        snprintf (buf, cap, "%.*s", bar ? (int) (bar - w[i]) : (int) strlen (w[i]), w[i]);
        if ((r = near_name (given, buf, true)) > best_r)
            best = w[i], best_r = r;
    }
    if (!best)
        return NULL;
    snprintf (buf, cap, "%.*s", strchr (best, '|') ? (int) (strchr (best, '|') - best)
                                                   : (int) strlen (best), best);
    return buf;
}

static void
usage_error (rm_cmd_t cmd, bson_error_t *err, const char *what, const char *opt)
{
    rm_error_set (err, RM_ERR_USAGE, "%s \"%s\" (see remodel %s --help)", what, opt,
                  rm_cli_command_name (cmd));
}

static void
unknown (rm_cmd_t cmd, const char *opt, size_t len, bson_error_t *err)
{
    char given[128];
    const char *near;
    snprintf (given, sizeof given, "%.*s", (int) (len < 100 ? len : 100), opt);
    near = given[1] == '-' ? nearest (cmd, given + 2) : NULL;
    if (near)
        rm_error_set (err, RM_ERR_USAGE, "unknown option \"%s\" (did you mean \"--%s\"?)", given,
                      near);
    else
        usage_error (cmd, err, "unknown option", given);
}

static void
not_taken (rm_cmd_t cmd, const char *opt, size_t len, bson_error_t *err)
{
    rm_error_set (err, RM_ERR_USAGE,
                  "option \"%.*s\" is not one of remodel %s's (see remodel %s --help)",
                  (int) (len < 100 ? len : 100), opt, rm_cli_command_name (cmd),
                  rm_cli_command_name (cmd));
}

/* "a, b or c": an enumeration's values as they are shown (the first
 * spelling of each). */
static void
words_shown (const char *const *w, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; w[i] && used < cap; i++) {
        const char *bar = strchr (w[i], '|');
        int n = bar ? (int) (bar - w[i]) : (int) strlen (w[i]);
        used += (size_t) snprintf (buf + used, cap - used, "%s%.*s",
                                   i == 0 ? "" : w[i + 1] ? ", " : " or ", n, w[i]);
    }
}

/* What a value of the row should be, for "--x: expected WHAT, got ...". */
static void
expected (const rm_opt_t *o, char *buf, size_t cap)
{
    const char *what = o->what ? o->what : "a number";
    switch (o->kind) {
    case RM_VAL_COUNT:
        if (o->min && o->max && o->max < 1000000)
            snprintf (buf, cap, "%s from %llu to %llu", what, (unsigned long long) o->min,
                      (unsigned long long) o->max);
        else if (o->min)
            snprintf (buf, cap, "%s (%llu or more)", what, (unsigned long long) o->min);
        else
            snprintf (buf, cap, "%s", what);
        break;
    case RM_VAL_SIZE:
        if (o->min >= 1024 && o->min % 1024 == 0)
            snprintf (buf, cap, "a size of at least %lluK, like 64M or 2G",
                      (unsigned long long) (o->min / 1024));
        else
            snprintf (buf, cap, "a size like 64M or 2G");
        break;
    case RM_VAL_DURATION:
        snprintf (buf, cap, "a duration%s like 50ms, 2s, 10m or 1h (a bare number: %s)",
                  o->min ? " of 1ms or more" : "", o->unit_ms == 1000 ? "seconds" : "milliseconds");
        break;
    case RM_VAL_ENUM:
        words_shown (o->words, buf, cap);
        break;
    default:
        snprintf (buf, cap, "a value");
        break;
    }
}

static bool
enum_index (const char *const *w, const char *text, uint64_t *out)
{
    size_t n = strlen (text);
    for (size_t i = 0; w[i]; i++)
        for (const char *p = w[i]; p;) {
            const char *bar = strchr (p, '|');
            size_t len = bar ? (size_t) (bar - p) : strlen (p);
            if (len == n && memcmp (p, text, n) == 0) {
                *out = i;
                return true;
            }
            p = bar ? bar + 1 : NULL;
        }
    return false;
}

/* Reads text as the row's kind into v. */
static bool
take_value (const rm_opt_t *o, const char *spelled, size_t len, const char *text,
            rm_cli_value_t *v, bson_error_t *err)
{
    uint64_t n = 0;
    bool ok = true;
    switch (o->kind) {
    case RM_VAL_COUNT:
        ok = rm_cli_parse_count (text, &n);
        break;
    case RM_VAL_SIZE:
        ok = rm_cli_parse_size (text, &n);
        break;
    case RM_VAL_DURATION:
        ok = rm_cli_parse_duration (text, o->unit_ms, &n);
        break;
    case RM_VAL_ENUM:
        ok = enum_index (o->words, text, &n);
        break;
    default:
        break;
    }
    if (ok && (o->kind == RM_VAL_COUNT || o->kind == RM_VAL_SIZE || o->kind == RM_VAL_DURATION))
        ok = n >= o->min && (!o->max || n <= o->max);
    if (!ok) {
        char want[200], word[64];
        const char *near = o->kind == RM_VAL_ENUM ? nearest_word (o->words, text, word, sizeof word)
                                                  : NULL;
        expected (o, want, sizeof want);
        rm_error_set (err, RM_ERR_USAGE, "%.*s: expected %s, got \"%s\"%s%s%s", (int) len, spelled,
                      want, text, near ? " (did you mean \"" : "", near ? near : "",
                      near ? "\"?)" : "");
        return false;
    }
    v->given = true;
    v->text = text;
    v->n = n;
    if (o->repeat) {
        const char **all = realloc (v->all, (v->n_all + 1) * sizeof *all);
        if (!all) {
            rm_error_set (err, RM_ERR_NOMEM, "out of memory");
            return false;
        }
        v->all = all;
        v->all[v->n_all++] = text;
    }
    return true;
}

static bool
push_pos (rm_cli_args_t *a, char *arg, bson_error_t *err)
{
    char **pos = realloc (a->pos, (a->n_pos + 1) * sizeof *pos);
    if (!pos) {
        rm_error_set (err, RM_ERR_NOMEM, "out of memory");
        return false;
    }
    a->pos = pos;
    a->pos[a->n_pos++] = arg;
    return true;
}

/* One "--name", "--name=value" or "--name value" at argv[*i]. */
static bool
long_option (rm_cmd_t cmd, int argc, char **argv, int *i, rm_cli_args_t *a, bson_error_t *err)
{
    const char *arg = argv[*i], *eq = strchr (arg, '='), *value = NULL;
    size_t len = eq ? (size_t) (eq - arg) : strlen (arg);
    bool other;
    const rm_opt_t *o = find_long (cmd, arg + 2, len - 2, &other);

    if (!o) {
        if (other)
            not_taken (cmd, arg, len, err);
        else
            unknown (cmd, arg, len, err);
        return false;
    }
    if (o->kind == RM_VAL_NONE && eq) {
        rm_error_set (err, RM_ERR_USAGE, "option \"%.*s\" takes no value (see remodel %s --help)",
                      (int) len, arg, rm_cli_command_name (cmd));
        return false;
    }
    if (o->kind == RM_VAL_NONE || (o->kind == RM_VAL_OPTIONAL && !eq)) {
        a->v[o->id].given = true;
        return true;
    }
    if (eq)
        value = eq + 1;
    else if (*i + 1 < argc)
        value = argv[++*i];
    else {
        rm_error_set (err, RM_ERR_USAGE, "option \"%s\" needs a value (see remodel %s --help)", arg,
                      rm_cli_command_name (cmd));
        return false;
    }
    return take_value (o, arg, len, value, &a->v[o->id], err);
}

/* "-q", or letters grouped ("-qf"): flags only. */
static bool
letters (rm_cmd_t cmd, const char *arg, rm_cli_args_t *a, bson_error_t *err)
{
    for (const char *c = arg + 1; *c; c++) {
        char opt[3] = {'-', *c, '\0'};
        bool other;
        const rm_opt_t *o = find_letter (cmd, *c, &other);
        const char *near;
        if (!o && arg[2] && (near = nearest (cmd, arg + 1)) != NULL) {
            /* A long option with one dash ("-plan-out"). */
            rm_error_set (err, RM_ERR_USAGE, "unknown option \"%.100s\" (did you mean \"--%s\"?)",
                          arg, near);
            return false;
        }
        if (!o) {
            if (other)
                not_taken (cmd, opt, 2, err);
            else
                usage_error (cmd, err, "unknown option", opt);
            return false;
        }
        a->v[o->id].given = true;
    }
    return true;
}

bool
rm_cli_parse (rm_cmd_t cmd, int argc, char **argv, int first, rm_cli_args_t *a, bson_error_t *err)
{
    bool options = true;

    memset (a, 0, sizeof *a);
    a->cmd = cmd;
    for (int i = first; i < argc; i++) {
        char *arg = argv[i];
        bool ok;
        if (options && strcmp (arg, "--") == 0) {
            options = false;
            continue;
        }
        if (!options || arg[0] != '-' || arg[1] == '\0') /* "-": standard input or output */
            ok = push_pos (a, arg, err);
        else if (arg[1] == '-')
            ok = long_option (cmd, argc, argv, &i, a, err);
        else
            ok = letters (cmd, arg, a, err);
        if (!ok)
            return false;
    }
    return true;
}

void
rm_cli_args_destroy (rm_cli_args_t *a)
{
    for (int i = 0; i < RM_OPT_N; i++)
        free (a->v[i].all);
    free (a->pos);
    memset (a, 0, sizeof *a);
}
