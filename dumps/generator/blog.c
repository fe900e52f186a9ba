/*
 * blog.c: database "blog", the posts-and-comments example of "Embed vs
 * Reference" (one-to-many with a parent reference on the comment). A later
 * transform can embed comments, or keep the hybrid "recent comments" subset.
 *
 *   posts    {_id, title, author, body, ts, tags, views (int64), published,
 *             updated?}
 *   comments {_id, post_id, author|null, text, ts, votes, edited?}
 *
 * A tenth of the posts go viral and draw most comments; about a third get
 * none. Comments are written in draw order: each _id carries its comment's
 * time, but the file is not sorted by time.
 */
#include "gen.h"

#define POSTS_PER_SCALE 50
#define COMMENTS_PER_SCALE 500 /* ~10 per post */

#define POSTS_FROM INT64_C (1609459200) /* 2021-01-01 */
#define POSTS_SPAN INT64_C (94608000)   /* three years */

/* A post's time comes from its index and a hash, so comments can follow
 * their post without a table of post times. */
static int64_t
post_ms (uint64_t i, uint64_t n, uint64_t salt)
{
    const uint64_t slot = (uint64_t) POSTS_SPAN / n;
    const uint64_t h = gen_mix64 (salt + i);

    return (POSTS_FROM + (int64_t) (i * slot + h % (slot ? slot : 1))) * 1000 +
           (int64_t) (h >> 40) % 1000;
}

static bool
write_posts (gen_ctx_t *ctx, uint64_t n, uint64_t salt, bson_error_t *error)
{
    char title_s[160], name_s[128];
    static char body_s[8192];
    gen_buf_t title, name, body;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok = gen_coll_open (&coll, ctx, "blog", "posts", error);

    gen_buf_init (&title, title_s, sizeof title_s);
    gen_buf_init (&name, name_s, sizeof name_s);
    gen_buf_init (&body, body_s, sizeof body_s);
    for (uint64_t i = 0; i < n && ok; i++) {
        const int64_t ts = post_ms (i, n, salt);
        bson_t *doc = gen_coll_doc (&coll, i, ts / 1000);
        uint32_t n_tags;

        gen_buf_reset (&title);
        gen_text_title (&title, rng);
        gen_append_buf (doc, "title", &title);

        gen_buf_reset (&name);
        gen_person_name (rng, &name, NULL);
        gen_append_buf (doc, "author", &name);

        gen_buf_reset (&body);
        gen_text_paragraphs (&body, rng, 2, 4);
        gen_append_buf (doc, "body", &body);

        BSON_APPEND_DATE_TIME (doc, "ts", ts);
        n_tags = (uint32_t) gen_rng_between (rng, 1, 4);
        gen_append_picks (doc, "tags", &gen_list_tags, n_tags, rng);
        /* Page views are a big counter: int64 even while small. */
        BSON_APPEND_INT64 (doc, "views",
                           gen_rng_percent (rng, 10) ? (int64_t) gen_rng_below (rng, 4000000000u)
                                                     : (int64_t) gen_rng_below (rng, 20000));
        BSON_APPEND_BOOL (doc, "published", gen_rng_percent (rng, 90));
        if (gen_rng_percent (rng, 15)) {
            const int64_t days = gen_rng_between (rng, 1, 60);

            BSON_APPEND_DATE_TIME (doc, "updated", ts + days * GEN_DAY_MS);
        }
        ok = gen_coll_write (&coll, error);
    }
    return gen_coll_close (&coll, ctx, ok, NULL, 0, error);
}

/* A tenth of the posts go viral, about a third draw no comment. */
static uint64_t
post_weight (uint32_t i, uint64_t salt)
{
    const uint64_t h = gen_mix64 (salt + i) % 10;
    const uint64_t w = h == 0 ? 40 : h < 7 ? 3 : 0;

    /* Every scale keeps at least one commentable post. */
    return i == 0 && w == 0 ? 3 : w;
}

static bool
write_comments (gen_ctx_t *ctx, uint64_t n_posts, uint64_t salt, bson_error_t *error)
{
    static const gen_index_t indexes[] = {{{"post_id", "ts"}, {1, -1}, false}};
    const uint64_t n = COMMENTS_PER_SCALE * ctx->scale;
    const uint64_t pop_salt = gen_hash_str (ctx->seed, "blog.posts.popularity");
    char name_s[128], text_s[1024];
    gen_buf_t name, text;
    gen_picker_t posts;
    gen_idgen_t post_ids;
    gen_coll_t coll;
    gen_rng_t *rng = &coll.rng;
    bool ok;

    if (!gen_picker_init (&posts, (uint32_t) n_posts, post_weight, pop_salt, error)) {
        return false;
    }

    gen_idgen_init (&post_ids, ctx->seed, "blog.posts");
    gen_buf_init (&name, name_s, sizeof name_s);
    gen_buf_init (&text, text_s, sizeof text_s);
    ok = gen_coll_open (&coll, ctx, "blog", "comments", error);
    for (uint64_t i = 0; i < n && ok; i++) {
        const uint32_t post = gen_picker_pick (&posts, rng);
        /* Most comments come within an hour, a long tail within weeks. One
         * draw per declaration: C leaves the order of operands open. */
        const int64_t delay_s = gen_rng_between (rng, 60, 3600);
        const int64_t stretch = gen_rng_percent (rng, 70) ? 1 : gen_rng_between (rng, 2, 400);
        const int64_t post_time = post_ms (post, n_posts, salt);
        const int64_t ts = post_time + delay_s * stretch * 1000;
        const int sentences = gen_rng_between (rng, 1, 3);
        bson_t *doc = gen_coll_doc (&coll, i, ts / 1000);
        bson_oid_t oid;

        gen_idgen_oid (&post_ids, post, post_time / 1000, &oid);
        BSON_APPEND_OID (doc, "post_id", &oid);

        /* Comments of deleted accounts keep their text but lose the author. */
        if (gen_rng_percent (rng, 3)) {
            BSON_APPEND_NULL (doc, "author");
        } else {
            gen_buf_reset (&name);
            gen_person_name (rng, &name, NULL);
            gen_append_buf (doc, "author", &name);
        }

        gen_buf_reset (&text);
        for (int s = 0; s < sentences; s++) {
            if (s > 0) {
                gen_buf_putc (&text, ' ');
            }
            gen_text_sentence (&text, rng, 3, 14);
        }
        gen_append_buf (doc, "text", &text);
        BSON_APPEND_DATE_TIME (doc, "ts", ts);
        BSON_APPEND_INT32 (doc, "votes",
                           gen_rng_percent (rng, 90) ? gen_rng_between (rng, -3, 12)
                                                     : gen_rng_between (rng, 13, 900));
        if (gen_rng_percent (rng, 5)) {
            BSON_APPEND_BOOL (doc, "edited", true);
        }
        ok = gen_coll_write (&coll, error);
    }
    ok = gen_coll_close (&coll, ctx, ok, indexes, GEN_COUNT (indexes), error);
    gen_picker_destroy (&posts);
    return ok;
}

bool
gen_blog (gen_ctx_t *ctx, bson_error_t *error)
{
    const uint64_t n_posts = POSTS_PER_SCALE * ctx->scale;
    const uint64_t salt = gen_hash_str (ctx->seed, "blog.posts.time");

    return write_posts (ctx, n_posts, salt, error) && write_comments (ctx, n_posts, salt, error);
}
