/* The views of the old shape (remodel compile --format views): what each
 * namespace held before a step, as a pipeline over the collections the
 * plan leaves. The plan is undone from its last step back: a namespace's
 * definition starts as its own collection at the end of the plan, and each
 * step's inverse (view_steps.c, through the table in view_table.c)
 * rewrites the definitions of the namespaces it read from those of the
 * namespaces it wrote. */
#ifndef REMODEL_VIEW_DEF_H
#define REMODEL_VIEW_DEF_H

#include <stdarg.h>

#include "compile_impl.h"

typedef struct {
    char *ns;         /* "db.coll", as the plan names it */
    char *db, *coll;  /* the collection the view reads; coll NULL: nothing
                       * (a namespace a step created, or empty then) */
    bson_t pipeline;  /* its stages, an array; the $unionWith stages last */
    bool changed;     /* a step wrote it: the old shape differs */
    char *why;        /* set: no exact view (the step and the reason) */
} rm_view_def_t;

typedef struct {
    rm_view_def_t *defs;
    size_t n, cap;
    rm_compile_version_t version;
    const rm_step_t *s; /* the step being undone, for refusals */
} rm_views_t;

/* A step kind's inverse (view_table.c): rewrites the definitions of the
 * namespaces s read (rm_views_get) from those it wrote. */
typedef void (*rm_view_fn) (rm_views_t *vs, const rm_step_t *s);
typedef struct {
    rm_view_fn view;
    const char *refusal; /* view NULL: why no view undoes the kind */
} rm_view_kind_t;
extern const rm_view_kind_t rm_view_kinds[];

void rm_view_embed (rm_views_t *vs, const rm_step_t *s);
void rm_view_extract (rm_views_t *vs, const rm_step_t *s);
void rm_view_rename (rm_views_t *vs, const rm_step_t *s);
void rm_view_denormalize (rm_views_t *vs, const rm_step_t *s);
void rm_view_summarize (rm_views_t *vs, const rm_step_t *s);
void rm_view_bucketize (rm_views_t *vs, const rm_step_t *s);
void rm_view_unbucketize (rm_views_t *vs, const rm_step_t *s);
void rm_view_copy (rm_views_t *vs, const rm_step_t *s);

/* The definition of ns (its own collection, unchanged, the first time). */
rm_view_def_t *rm_views_get (rm_views_t *vs, const rm_nsref_t *ns);
void rm_views_destroy (rm_views_t *vs);
/* dst becomes a copy of src's reading (collection, pipeline, refusal),
 * changed. */
void rm_views_copy (rm_view_def_t *dst, const rm_view_def_t *src);
/* Appends a stage (BCON_NEW'd; freed): before the $unionWith stages and
 * at the end of each of their pipelines, so it applies to every document
 * the definition gives. */
void rm_views_append (rm_view_def_t *d, bson_t *stage);
/* d's documents followed by other's ({$unionWith}); other reading nothing
 * adds nothing. */
void rm_views_union (rm_views_t *vs, rm_view_def_t *d, const rm_view_def_t *other);
/* No exact view of d: names the step being undone and the reason (the
 * first reason stays). */
void rm_views_refuse (rm_views_t *vs, rm_view_def_t *d, const char *fmt, ...)
    BSON_GNUC_PRINTF (3, 4);
/* Frees what d holds (a definition of the caller's own). */
void rm_views_def_clear (rm_view_def_t *d);
/* d holds nothing before the step (it created the namespace). */
void rm_views_absent (rm_view_def_t *d);

#endif
