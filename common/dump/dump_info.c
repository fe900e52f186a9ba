/* The namespace list of a dump, shared by every reader and writer. */
#include <stdio.h>
#include <string.h>

#include "remodel/dump.h"

static const char *format_names[] = {"auto", "archive", "dir", "tar", "bson"};

const char *
rm_format_name (rm_format_t f)
{
    return (unsigned) f < sizeof format_names / sizeof *format_names ? format_names[f] : "?";
}

bool
rm_format_parse (const char *text, rm_format_t *out)
{
    for (size_t i = 0; i < sizeof format_names / sizeof *format_names; i++)
        if (strcmp (text, format_names[i]) == 0) {
            *out = (rm_format_t) i;
            return true;
        }
    if (strcmp (text, "directory") == 0) {
        *out = RM_FORMAT_DIR;
        return true;
    }
    return false;
}

void
rm_dump_info_init (rm_dump_info_t *info)
{
    memset (info, 0, sizeof *info);
}

static void
ns_free (rm_ns_t *ns)
{
    bson_free (ns->db);
    bson_free (ns->coll);
    bson_free (ns->data_coll);
    bson_free (ns->type);
    bson_free (ns->metadata);
    bson_free (ns);
}

void
rm_dump_info_destroy (rm_dump_info_t *info)
{
    for (size_t i = 0; i < info->n_ns; i++)
        ns_free (info->ns[i]);
    bson_free (info->ns);
    bson_free (info->server_version);
    bson_free (info->tool_version);
    memset (info, 0, sizeof *info);
}

rm_ns_t *
rm_dump_info_add (rm_dump_info_t *info, const char *db, const char *coll)
{
    rm_ns_t *ns = bson_malloc0 (sizeof *ns);
    ns->db = bson_strdup (db);
    ns->coll = bson_strdup (coll);
    ns->data_coll = bson_strdup (coll);
    ns->type = bson_strdup ("");
    ns->is_oplog = db[0] == '\0' && strcmp (coll, "oplog") == 0;
    ns->index = info->n_ns;
    info->ns = bson_realloc (info->ns, (info->n_ns + 1) * sizeof *info->ns);
    info->ns[info->n_ns++] = ns;
    return ns;
}

rm_ns_t *
rm_dump_info_find (const rm_dump_info_t *info, const char *db, const char *coll)
{
    for (size_t i = 0; i < info->n_ns; i++)
        if (strcmp (info->ns[i]->db, db) == 0 && strcmp (info->ns[i]->coll, coll) == 0)
            return info->ns[i];
    return NULL;
}

rm_ns_t *
rm_dump_info_find_data (const rm_dump_info_t *info, const char *db, const char *data_coll)
{
    for (size_t i = 0; i < info->n_ns; i++)
        if (strcmp (info->ns[i]->db, db) == 0 && strcmp (info->ns[i]->data_coll, data_coll) == 0)
            return info->ns[i];
    return rm_dump_info_find (info, db, data_coll);
}

void
rm_ns_set_metadata (rm_ns_t *ns, const char *json, size_t len)
{
    bson_free (ns->metadata);
    ns->metadata = NULL;
    ns->metadata_len = 0;
    if (json) {
        ns->metadata = bson_malloc (len + 1);
        memcpy (ns->metadata, json, len);
        ns->metadata[len] = '\0';
        ns->metadata_len = len;
    }
}

void
rm_dump_info_copy (rm_dump_info_t *dst, const rm_dump_info_t *src)
{
    rm_dump_info_init (dst);
    dst->format = src->format;
    dst->codec = src->codec;
    dst->gzip_files = src->gzip_files;
    dst->server_version = src->server_version ? bson_strdup (src->server_version) : NULL;
    dst->tool_version = src->tool_version ? bson_strdup (src->tool_version) : NULL;
    dst->concurrent_collections = src->concurrent_collections;
    for (size_t i = 0; i < src->n_ns; i++) {
        const rm_ns_t *s = src->ns[i];
        rm_ns_t *d = rm_dump_info_add (dst, s->db, s->coll);
        bson_free (d->data_coll);
        d->data_coll = bson_strdup (s->data_coll);
        rm_ns_copy_kind (d, s);
    }
}

void
rm_ns_copy_kind (rm_ns_t *d, const rm_ns_t *s)
{
    bson_free (d->type);
    d->type = bson_strdup (s->type);
    d->has_type = s->has_type;
    d->is_oplog = s->is_oplog;
    d->is_view = s->is_view;
    rm_ns_set_metadata (d, s->metadata, s->metadata_len);
}

const char *
rm_ns_name (const rm_ns_t *ns, char *buf, size_t len)
{
    if (ns->is_oplog)
        snprintf (buf, len, "oplog");
    else
        snprintf (buf, len, "%s.%s", ns->db, ns->data_coll);
    return buf;
}
