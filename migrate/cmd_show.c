/* remodel show SRC: documents as Extended JSON, one per line, from any dump
 * remodel reads; canonical output is bsondump's, byte for byte. */
#include <stdio.h>
#include <string.h>

#include "remodel/extjson.h"
#include "remodel/nsselect.h"
#include "tool.h"

static const char usage[] =
    "usage: remodel show SRC [--ns PATTERN]... [--limit N] [--skip N] [--id VALUE]\n"
    "                        [--canonical] [--pretty]\n"
    "\n"
    "Prints documents of SRC (any dump remodel reads) as MongoDB Extended JSON,\n"
    "one per line: relaxed by default (as mongoexport prints), canonical with\n"
    "--canonical (as bsondump prints). With more than one namespace shown, each\n"
    "one's documents follow a line \"==> db.coll <==\".\n"
    "\n"
    "  --ns PATTERN     only the namespaces it matches (db.collection, or with\n"
    "                   * as --nsInclude: crm.*); repeatable\n"
    "  --skip N         leave out the first N documents of each namespace\n"
    "  --limit N        print at most N documents of each namespace\n"
    "  --id VALUE       only documents whose _id equals VALUE (Extended JSON:\n"
    "                   5, '\"abc\"', '{\"$oid\": \"...\"}'; numbers match by value)\n"
    "  --canonical      canonical Extended JSON ($numberInt, $date as $numberLong)\n"
    "  --pretty         indented with tabs, as bsondump --pretty\n"
    "  --skip-invalid[=FILE]  set bad documents aside instead of failing\n"
    "  --quiet, -q      no progress meter\n"
    "  --help, -h       this text\n"
    "\n"
    "example: remodel show dumps/sample --ns crm.people --limit 2 --pretty\n";

/* What one namespace has shown so far. */
typedef struct {
    bool selected;
    uint64_t seen, shown;
} ns_state_t;

/* The key of _id's value, as $lookup and find compare: 1 == 1.0. */
static bool
id_key_of_doc (rm_buf_t *key, const uint8_t *doc, uint32_t len)
{
    bson_t b;
    bson_iter_t it;
    rm_buf_reset (key);
    if (!bson_init_static (&b, doc, len) || !bson_iter_init_find (&it, &b, "_id"))
        return false;
    rm_key_append (key, &it);
    return true;
}

static bool
parse_id (const char *text, rm_buf_t *key, bson_error_t *err)
{
    char *json = bson_strdup_printf ("{\"v\": %s}", text);
    bson_t b;
    bson_iter_t it;
    bool ok = bson_init_from_json (&b, json, -1, err);
    bson_free (json);
    if (!ok) {
        rm_error_set (err, RM_ERR_USAGE, "--id: not an Extended JSON value: %s", text);
        return false;
    }
    bson_iter_init_find (&it, &b, "v");
    rm_key_append (key, &it);
    bson_destroy (&b);
    return true;
}

/* --ns: patterns, as --nsInclude's and analyze's (a name without a star
 * is itself); each must match a namespace of the dump, so a misspelled
 * one is not silently nothing. */
static bool
select_namespaces (const rm_dump_info_t *info, const tool_opts_t *o, ns_state_t *st,
                   size_t *n_selected, bson_error_t *err)
{
    char name[512];
    *n_selected = 0;
    for (size_t i = 0; i < info->n_ns; i++)
        st[i].selected = o->n_ns == 0;
    for (size_t j = 0; j < o->n_ns; j++) {
        bool found = false;
        rm_nsselect_t *one = rm_nsselect_new ();
        if (!rm_nsselect_include (one, o->ns[j], err)) {
            rm_nsselect_destroy (one);
            return false;
        }
        for (size_t i = 0; i < info->n_ns; i++)
            if (rm_nsselect_wants (one, rm_ns_name (info->ns[i], name, sizeof name)))
                st[i].selected = found = true;
        rm_nsselect_destroy (one);
        if (!found) {
            rm_error_set (err, RM_ERR_USAGE, "--ns %s: no such namespace in the dump (%zu namespace(s): "
                          "remodel inspect lists them)", o->ns[j], info->n_ns);
            return false;
        }
    }
    for (size_t i = 0; i < info->n_ns; i++)
        *n_selected += st[i].selected;
    return true;
}

int
cmd_show (int argc, char **argv)
{
    static const tool_cmd_t cmd = {.usage = usage, .cmd = RM_CMD_SHOW, .min_pos = 1, .max_pos = 1};
    tool_opts_t o;
    char *pos[1], name[512];
    int n, rc = 0, status;
    bool help, headers;
    bson_error_t err;
    rm_reader_t *r;
    rm_item_t item;
    const rm_dump_info_t *info;
    ns_state_t *st = NULL;
    size_t n_selected, n_done = 0;
    rm_buf_t json, want_id, id;
    const rm_ns_t *last = NULL;

    if (!tool_getparam (&cmd, argc, argv, &o, pos, &n, &help))
        return help ? 0 : 2;
    rm_buf_init (&json);
    rm_buf_init (&want_id);
    rm_buf_init (&id);
    if (o.show_id && !parse_id (o.show_id, &want_id, &err)) {
        tool_error (&err);
        rm_buf_destroy (&want_id);
        return rm_cli_exit_status (&err);
    }
    if (!(r = tool_open_source (pos[0], &o, &status)))
        return status;
    info = rm_reader_info (r);
    st = bson_malloc0 ((info->n_ns + 1) * sizeof *st);
    if (!select_namespaces (info, &o, st, &n_selected, &err)) {
        tool_error (&err);
        rc = rm_cli_exit_status (&err);
        goto done;
    }
    headers = n_selected > 1;
    while (n_done < n_selected && (rc = rm_reader_next (r, &item, &err)) > 0) {
        ns_state_t *s = &st[item.ns->index];
        if (item.kind != RM_ITEM_DOC || !s->selected)
            continue;
        if (s->shown >= o.show_limit)
            continue;
        if (o.show_id && (!id_key_of_doc (&id, item.doc, item.len) || id.len != want_id.len ||
                          memcmp (id.data, want_id.data, id.len) != 0))
            continue;
        if (s->seen++ < o.show_skip)
            continue;
        if (headers && item.ns != last) {
            fputs (last ? "\n==> " : "==> ", stdout);
            rm_cli_put_text (stdout, rm_ns_name (item.ns, name, sizeof name),
                           strlen (rm_ns_name (item.ns, name, sizeof name)));
            fputs (" <==\n", stdout);
            last = item.ns;
        }
        rm_buf_reset (&json);
        rm_extjson_doc (&json, item.doc, item.len, o.show_canonical ? RM_EXTJSON_CANONICAL
                                                                   : RM_EXTJSON_RELAXED,
                        o.show_pretty);
        rm_buf_append (&json, "\n", 1);
        fwrite (json.data, 1, json.len, stdout);
        if (ferror (stdout)) /* reported once by tool_stdout_close */
            break;
        if (++s->shown == o.show_limit)
            n_done++; /* once every namespace shown has its N, stop reading */
    }
    if (rc < 0) {
        tool_error (&err);
        rc = rm_cli_exit_status (&err);
    } else {
        rc = 0;
    }
done:
    bson_free (st);
    rm_buf_destroy (&json);
    rm_buf_destroy (&want_id);
    rm_buf_destroy (&id);
    rm_reader_close (r);
    return rc;
}
