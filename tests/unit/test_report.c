/* The report layer's text (common/report/): names made safe for HTML,
 * for a dot quoted string and for Mermaid, whatever bytes they hold;
 * sizes, counts and type mixes as the page writes them; the diagram of a
 * small report, in dot and in Mermaid, with --report's namespace filter. */
#include <stdio.h>
#include <string.h>

#include "report_int.h"
#include "test.h"

/* What f appended to a fresh buffer, as a string (in a static buffer). */
static const char *
text (rm_buf_t *b)
{
    static char out[8192];
    snprintf (out, sizeof out, "%.*s", (int) b->len, (const char *) b->data);
    rm_buf_reset (b);
    return out;
}

static void
test_escapes (void)
{
    rm_buf_t b;
    rm_buf_init (&b);
    rm_rp_html (&b, "a<b>&\"c'\\d\n\xff\xc3\xa9");
    T_CHECK_STR (text (&b), "a&lt;b&gt;&amp;&quot;c&#39;&#92;d\\x0A\\xFF\xc3\xa9");
    /* A trailing backslash cannot end the quoted string early. */
    rm_rp_dot (&b, "x\"y\\");
    T_CHECK_STR (text (&b), "x\\\"y\\\\");
    rm_rp_dot (&b, "bad\xff");
    T_CHECK_STR (text (&b), "bad\\xFF");
    rm_rp_mermaid (&b, "a.b[0] \"q\"", true);
    T_CHECK_STR (text (&b), "a_b_0___q_");
    rm_rp_mermaid (&b, "a {b} \"q\" #1", false);
    T_CHECK_STR (text (&b), "a _b_ 'q' _1");
    rm_buf_destroy (&b);
}

static void
test_numbers (void)
{
    rm_buf_t b;
    bson_t f;
    rm_buf_init (&b);
    rm_rp_bytes (&b, 1023);
    T_CHECK_STR (text (&b), "1023 B");
    rm_rp_bytes (&b, 1536);
    T_CHECK_STR (text (&b), "1.5 KB");
    rm_rp_bytes (&b, 16.0 * 1024 * 1024);
    T_CHECK_STR (text (&b), "16 MB");
    rm_rp_count (&b, 29470);
    T_CHECK_STR (text (&b), "29,470");
    rm_rp_count (&b, 100);
    T_CHECK_STR (text (&b), "100");
    rm_rp_count (&b, -1234567);
    T_CHECK_STR (text (&b), "-1,234,567");
    /* Most frequent first; a few of many are <1%, not 0%. */
    bson_init (&f);
    BCON_APPEND (&f, "types", "{", "null", BCON_INT64 (1), "string", BCON_INT64 (500), "int", BCON_INT64 (100), "}");
    rm_rp_types (&b, &f, true);
    T_CHECK_STR (text (&b), "string 83% · int 17% · null &lt;1%");
    rm_rp_types (&b, &f, false);
    T_CHECK_STR (text (&b), "string 83% · int 17% · null <1%");
    bson_destroy (&f);
    rm_buf_destroy (&b);
}

/* A report of two collections and one relationship, as analyze makes. */
static void
small_report (bson_t *r)
{
    bson_init (r);
    BCON_APPEND (r, "collections", "[",
                 "{", "ns", "s.orders", "documents", BCON_INT64 (300), "bytes", BCON_INT64 (17000),
                 "avgSize", BCON_INT64 (57), "maxSize", BCON_INT64 (57), "fields", "[",
                 "{", "path", "_id", "presence", BCON_DOUBLE (1), "types", "{", "objectId", BCON_INT64 (300), "}", "}",
                 "{", "path", "cust", "presence", BCON_DOUBLE (0.5), "types", "{", "int", BCON_INT64 (150), "}", "}",
                 "]", "}",
                 "{", "ns", "s.customers", "documents", BCON_INT64 (1), "bytes", BCON_INT64 (27),
                 "avgSize", BCON_INT64 (27), "maxSize", BCON_INT64 (27), "fields", "[",
                 "{", "path", "_id", "presence", BCON_DOUBLE (1), "types", "{", "int", BCON_INT64 (1), "}", "}",
                 "]", "}",
                 "]");
    BCON_APPEND (r, "relationships", "[",
                 "{", "from", "s.orders", "field", "cust", "to", "s.customers", "key", "_id",
                 "parent", "s.customers", "child", "s.orders", "class", "one-to-many",
                 "manyToMany", BCON_BOOL (false), "level", "confident", "indexed", BCON_BOOL (false),
                 "indexNs", "s.orders", "indexField", "cust", "}",
                 "]");
}

static void
test_diagram (void)
{
    rm_buf_t b;
    bson_t r;
    const char *only[] = {"s.orders"};
    const char *t;
    rm_buf_init (&b);
    small_report (&r);
    rm_report_diagram (&r, RM_DIAGRAM_DOT, NULL, 0, &b);
    t = text (&b);
    T_CHECK (strstr (t, "digraph design {\n") == t);
    T_CHECK (strstr (t, "1 doc · 27 B · avg 27 B · max 27 B"));
    T_CHECK (strstr (t, "300 docs · 17 KB · avg 57 B · max 57 B"));
    T_CHECK (strstr (t, "(in 50%)"));
    /* The arrow leaves from the field's row (port f1, its second row). */
    T_CHECK (strstr (t, "\"s.orders\":f1:e -> \"rel: s.orders.cust\""));
    T_CHECK (strstr (t, "\"rel: s.orders.cust\" -> \"s.customers\""));
    T_CHECK (strstr (t, "no index on s.orders.cust"));
    rm_report_diagram (&r, RM_DIAGRAM_MERMAID, NULL, 0, &b);
    T_CHECK_STR (text (&b), "erDiagram\n"
                            "    c1[\"s.orders\"] {\n"
                            "        objectId _id \"_id: objectId\"\n"
                            "        int cust \"cust: int, in 50%\"\n"
                            "    }\n"
                            "    c2[\"s.customers\"] {\n"
                            "        int _id \"_id: int\"\n"
                            "    }\n"
                            "    c2 ||--o{ c1 : \"cust: one-to-many, confident, no index on cust\"\n");
    /* Only the step's namespaces: the other box and the arrow to it go. */
    rm_report_diagram (&r, RM_DIAGRAM_DOT, only, 1, &b);
    t = text (&b);
    T_CHECK (strstr (t, "s.orders"));
    T_CHECK (!strstr (t, "s.customers"));
    bson_destroy (&r);
    rm_buf_destroy (&b);
}

int
main (void)
{
    T_RUN (test_escapes);
    T_RUN (test_numbers);
    T_RUN (test_diagram);
    return t_done ();
}
