/* The regular expression operators: $regexMatch, $regexFind and
 * $regexFindAll. Cases from MongoDB's documentation (the products and
 * feedback examples, the capture groups of "Carol" and "Colleen"), then
 * what the server's code decides: the order of its checks, options from a
 * BSON regex or the options field, null and missing, idx in code points,
 * the walk of $regexFindAll over empty matches, UTF mode without UCP, a
 * constant pattern refused at parse time, a catastrophic one stopped by
 * the match limit, and a pattern read from the document. */
#include <pthread.h>

#include "expr_case.h"
#include "expr_impl.h"

#define RE(p, o) "{\"$regularExpression\": {\"pattern\": \"" p "\", \"options\": \"" o "\"}}"

/* The manual's products. */
#define P1 "{\"description\": \"Single LINE description.\"}"
#define P2 "{\"description\": \"First lines\\nsecond line\"}"
#define P3 "{\"description\": \"Many spaces before     line\"}"
#define P4 "{\"description\": \"Multiple\\nline descriptions\"}"
#define P5 "{\"description\": \"anchors, links and hyperlinks\"}"
#define P6 "{\"description\": \"métier work vocation\"}"

static const x_case_t matches[] = {
    /* docs: /line/ */
    {P1, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "false"},
    {P2, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "true"},
    {P3, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "true"},
    {P4, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "true"},
    {P5, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "false"},
    {P6, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "false"},
    /* docs: i, in the regex or in options */
    {P1, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "i") "}}", "true"},
    {P1, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": \"line\", \"options\": \"i\"}}", "true"},
    {P1, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("line", "") ", \"options\": \"i\"}}",
     "true"},
    /* docs: m lets ^ match after a newline */
    {P2, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("^s", "im") "}}", "true"},
    {P2, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("^s", "i") "}}", "false"},
    {P1, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("^s", "im") "}}", "true"},
    {P3, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": " RE ("^s", "im") "}}", "false"},
    /* docs: x ignores white space and # comments in the pattern */
    {P5,
     "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": \"# Match 'lin' followed by 'e' or 'k'\\n lin(e|k) # end\", "
     "\"options\": \"x\"}}",
     "true"},
    {P2,
     "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": \"# Match 'lin' followed by 'e' or 'k'\\n lin(e|k) # end\", "
     "\"options\": \"x\"}}",
     "true"},
    {P1,
     "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": \"# Match 'lin' followed by 'e' or 'k'\\n lin(e|k) # end\", "
     "\"options\": \"x\"}}",
     "false"},
    /* docs: s lets . match a newline */
    {P4, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": \"m.*line\", \"options\": \"si\"}}", "true"},
    {P4, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": \"m.*line\", \"options\": \"i\"}}", "false"},
    {P3, "{\"$regexMatch\": {\"input\": \"$description\", \"regex\": \"m.*line\", \"options\": \"si\"}}", "true"},
    /* u is taken (UTF mode is always on) */
    {"{}", "{\"$regexMatch\": {\"input\": \"é\", \"regex\": \"^.$\", \"options\": \"u\"}}", "true"},
    {"{}", "{\"$regexMatch\": {\"input\": \"é\", \"regex\": \"^.$\"}}", "true"},
    {"{}", "{\"$regexMatch\": {\"input\": \"寿司\", \"regex\": \"^..$\"}}", "true"},
    /* caseless folds beyond ASCII in UTF mode; \w is ASCII only (no UCP) */
    {"{}", "{\"$regexMatch\": {\"input\": \"É\", \"regex\": \"é\", \"options\": \"i\"}}", "true"},
    {"{}", "{\"$regexMatch\": {\"input\": \"é\", \"regex\": \"^\\\\w$\"}}", "false"},
    {"{}", "{\"$regexMatch\": {\"input\": \"é\", \"regex\": \"^\\\\p{L}$\"}}", "true"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a1\", \"regex\": \"^\\\\w\\\\d$\"}}", "true"},
    /* null and missing: false */
    {"{}", "{\"$regexMatch\": {\"input\": null, \"regex\": \"a\"}}", "false"},
    {"{}", "{\"$regexMatch\": {\"input\": \"$nope\", \"regex\": \"a\"}}", "false"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": null}}", "false"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": \"$nope\"}}", "false"},
    /* the letters are checked before the server looks for a pattern */
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": null, \"options\": \"z\"}}",
     "PARSE:invalid flag in regex options: z"},
    {"{}", "{\"$regexMatch\": {\"input\": \"\", \"regex\": \"\"}}", "true"},
    {"{}", "{\"$regexMatch\": {\"input\": \"\", \"regex\": \"a\"}}", "false"},
    {NULL, NULL, NULL},
};

static const x_case_t finds[] = {
    /* docs: products */
    {P2, "{\"$regexFind\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}",
     "{\"match\": \"line\", \"idx\": 6, \"captures\": []}"},
    {P1, "{\"$regexFind\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "null"},
    {P1, "{\"$regexFind\": {\"input\": \"$description\", \"regex\": " RE ("line", "i") "}}",
     "{\"match\": \"LINE\", \"idx\": 7, \"captures\": []}"},
    {P3, "{\"$regexFind\": {\"input\": \"$description\", \"regex\": \"m.*line\", \"options\": \"si\"}}",
     "{\"match\": \"Many spaces before     line\", \"idx\": 0, \"captures\": []}"},
    {P5, "{\"$regexFind\": {\"input\": \"$description\", \"regex\": \"lin(e|k)\"}}",
     "{\"match\": \"link\", \"idx\": 9, \"captures\": [\"k\"]}"},
    /* idx counts code points: "métier" has é (two bytes) before "tier" */
    {P6, "{\"$regexFind\": {\"input\": \"$description\", \"regex\": \"tier\"}}",
     "{\"match\": \"tier\", \"idx\": 2, \"captures\": []}"},
    {"{}", "{\"$regexFind\": {\"input\": \"寿司 sushi\", \"regex\": \"s(u)\"}}",
     "{\"match\": \"su\", \"idx\": 3, \"captures\": [\"u\"]}"},
    /* docs: feedback, an e-mail address */
    {"{\"comment\": \"Hi, I'm just reading about MongoDB -- aunt.arc.tica@example.com\"}",
     "{\"$regexFind\": {\"input\": \"$comment\", \"regex\": " RE ("[a-z0-9_.+-]+@[a-z0-9_.+-]+\\\\.[a-z0-9_.+-]+", "i") "}}",
     "{\"match\": \"aunt.arc.tica@example.com\", \"idx\": 38, \"captures\": []}"},
    {"{\"comment\": \"It's just me. I'm testing.   fred@MongoDB.com\"}",
     "{\"$regexFind\": {\"input\": \"$comment\", \"regex\": " RE ("([a-z0-9_.+-]+)@[a-z0-9_.+-]+\\\\.[a-z0-9_.+-]+", "i") "}}",
     "{\"match\": \"fred@MongoDB.com\", \"idx\": 29, \"captures\": [\"fred\"]}"},
    /* docs: a group that takes no part is null; one that matched "" is "" */
    {"{\"fname\": \"Carol\"}", "{\"$regexFind\": {\"input\": \"$fname\", \"regex\": " RE ("(C(ar)*)ol", "") "}}",
     "{\"match\": \"Carol\", \"idx\": 0, \"captures\": [\"Car\", \"ar\"]}"},
    {"{\"fname\": \"Colleen\"}", "{\"$regexFind\": {\"input\": \"$fname\", \"regex\": " RE ("(C(ar)*)ol", "") "}}",
     "{\"match\": \"Col\", \"idx\": 0, \"captures\": [\"C\", null]}"},
    {"{}", "{\"$regexFind\": {\"input\": \"ab\", \"regex\": \"a(x?)(y)?b\"}}",
     "{\"match\": \"ab\", \"idx\": 0, \"captures\": [\"\", null]}"},
    {"{}", "{\"$regexFind\": {\"input\": \"2024-01-02\", \"regex\": \"(?<y>\\\\d{4})-(?<m>\\\\d\\\\d)\"}}",
     "{\"match\": \"2024-01\", \"idx\": 0, \"captures\": [\"2024\", \"01\"]}"},
    {"{}", "{\"$regexFind\": {\"input\": \"abc\", \"regex\": \"\"}}", "{\"match\": \"\", \"idx\": 0, \"captures\": []}"},
    /* null and missing: null */
    {"{}", "{\"$regexFind\": {\"input\": null, \"regex\": \"a\"}}", "null"},
    {"{}", "{\"$regexFind\": {\"input\": \"$nope\", \"regex\": \"a\"}}", "null"},
    {"{}", "{\"$regexFind\": {\"input\": \"a\", \"regex\": null}}", "null"},
    {"{}", "{\"$regexFind\": {\"input\": \"a\", \"regex\": \"b\"}}", "null"},
    {NULL, NULL, NULL},
};

static const x_case_t find_alls[] = {
    /* docs: products */
    {P2, "{\"$regexFindAll\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}",
     "[{\"match\": \"line\", \"idx\": 6, \"captures\": []}, {\"match\": \"line\", \"idx\": 19, \"captures\": []}]"},
    {P1, "{\"$regexFindAll\": {\"input\": \"$description\", \"regex\": " RE ("line", "") "}}", "[]"},
    {P1, "{\"$regexFindAll\": {\"input\": \"$description\", \"regex\": " RE ("line", "i") "}}",
     "[{\"match\": \"LINE\", \"idx\": 7, \"captures\": []}]"},
    {P5, "{\"$regexFindAll\": {\"input\": \"$description\", \"regex\": \"lin(e|k)\"}}",
     "[{\"match\": \"link\", \"idx\": 9, \"captures\": [\"k\"]}, {\"match\": \"link\", \"idx\": 24, \"captures\": [\"k\"]}]"},
    /* docs: feedback, every e-mail address */
    {"{\"comment\": \"I wanted to write about a bug: rex@example.com and fred@example.org have the same problem\"}",
     "{\"$regexFindAll\": {\"input\": \"$comment\", \"regex\": " RE ("[a-z0-9_.+-]+@[a-z0-9_.+-]+\\\\.[a-z0-9_.+-]+", "i") "}}",
     "[{\"match\": \"rex@example.com\", \"idx\": 31, \"captures\": []}, "
     "{\"match\": \"fred@example.org\", \"idx\": 51, \"captures\": []}]"},
    /* docs: capture groups across matches */
    {"{}", "{\"$regexFindAll\": {\"input\": \"Carol Colleen\", \"regex\": " RE ("(C(ar)*)ol", "") "}}",
     "[{\"match\": \"Carol\", \"idx\": 0, \"captures\": [\"Car\", \"ar\"]}, "
     "{\"match\": \"Col\", \"idx\": 6, \"captures\": [\"C\", null]}]"},
    /* idx in code points, counted across matches */
    {"{}", "{\"$regexFindAll\": {\"input\": \"寿司寿司\", \"regex\": \"司\"}}",
     "[{\"match\": \"司\", \"idx\": 1, \"captures\": []}, {\"match\": \"司\", \"idx\": 3, \"captures\": []}]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"éaéé\", \"regex\": \"é+\"}}",
     "[{\"match\": \"é\", \"idx\": 0, \"captures\": []}, {\"match\": \"éé\", \"idx\": 2, \"captures\": []}]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"aaa\", \"regex\": \"a\"}}",
     "[{\"match\": \"a\", \"idx\": 0, \"captures\": []}, {\"match\": \"a\", \"idx\": 1, \"captures\": []}, "
     "{\"match\": \"a\", \"idx\": 2, \"captures\": []}]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"aaa\", \"regex\": \"aa\"}}", "[{\"match\": \"aa\", \"idx\": 0, \"captures\": []}]"},
    /* empty matches: one per code point, and none at the very end once
     * the walk has reached it */
    {"{}", "{\"$regexFindAll\": {\"input\": \"abc\", \"regex\": \"\"}}",
     "[{\"match\": \"\", \"idx\": 0, \"captures\": []}, {\"match\": \"\", \"idx\": 1, \"captures\": []}, "
     "{\"match\": \"\", \"idx\": 2, \"captures\": []}]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"\", \"regex\": \"\"}}", "[{\"match\": \"\", \"idx\": 0, \"captures\": []}]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"\", \"regex\": \"a\"}}", "[]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"ab\", \"regex\": \"b*\"}}",
     "[{\"match\": \"\", \"idx\": 0, \"captures\": []}, {\"match\": \"b\", \"idx\": 1, \"captures\": []}]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"éa\", \"regex\": \"a*\"}}",
     "[{\"match\": \"\", \"idx\": 0, \"captures\": []}, {\"match\": \"a\", \"idx\": 1, \"captures\": []}]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"a\\nb\", \"regex\": \"^\", \"options\": \"m\"}}",
     "[{\"match\": \"\", \"idx\": 0, \"captures\": []}, {\"match\": \"\", \"idx\": 2, \"captures\": []}]"},
    /* the search sees the whole input: a lookbehind reaches before the start */
    {"{}", "{\"$regexFindAll\": {\"input\": \"xaxa\", \"regex\": \"(?<=x)a\"}}",
     "[{\"match\": \"a\", \"idx\": 1, \"captures\": []}, {\"match\": \"a\", \"idx\": 3, \"captures\": []}]"},
    /* null and missing: [] */
    {"{}", "{\"$regexFindAll\": {\"input\": null, \"regex\": \"a\"}}", "[]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"$nope\", \"regex\": \"a\"}}", "[]"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"a\", \"regex\": \"$nope\"}}", "[]"},
    {NULL, NULL, NULL},
};

/* The arguments, refused in the server's order: a constant regex at parse
 * time (naming the offset of an invalid one), the input when evaluated. */
static const x_case_t refusals[] = {
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": 5}}",
     "PARSE:$regexMatch: needs 'regex' to be of type string or regex"},
    {"{}", "{\"$regexFind\": {\"input\": \"a\", \"regex\": \"a\", \"options\": 5}}",
     "PARSE:needs 'options' to be of type string"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"a\", \"regex\": " RE ("a", "i") ", \"options\": \"m\"}}",
     "PARSE:specified in both 'regex'"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": " RE ("a", "i") ", \"options\": \"\"}}",
     "PARSE:specified in both 'regex'"},
    {"{}", "{\"$regexMatch\": {\"input\": \"A\", \"regex\": " RE ("a", "i") ", \"options\": null}}", "true"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": \"a\", \"options\": \"iz\"}}",
     "PARSE:invalid flag in regex options: z"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": " RE ("a", "l") "}}", "PARSE:invalid flag in regex options: l"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": \"a\\u0000b\"}}", "PARSE:embedded null byte"},
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"regex\": \"a(b\"}}", "PARSE:at offset 3: missing closing parenthesis"},
    {"{}", "{\"$regexFind\": {\"input\": \"a\", \"regex\": \"*a\"}}", "PARSE:at offset 0: quantifier does not follow"},
    {"{}", "{\"$regexFindAll\": {\"input\": \"a\", \"regex\": \"[z-a]\"}}", "PARSE:invalid regular expression /[z-a]/"},
    /* the regex's checks come before the input's, which comes after */
    {"{}", "{\"$regexMatch\": {\"input\": 5, \"regex\": \"(\"}}", "PARSE:missing closing parenthesis"},
    {"{}", "{\"$regexMatch\": {\"input\": 5, \"regex\": \"a\"}}", "ERROR:needs 'input' to be of type string, not int"},
    {"{}", "{\"$regexFind\": {\"input\": 5, \"regex\": null}}", "ERROR:needs 'input' to be of type string"},
    {"{}", "{\"$regexFindAll\": {\"input\": [[\"a\"]], \"regex\": \"a\"}}", "ERROR:needs 'input' to be of type string, not array"},
    {"{}", "{\"$regexFind\": {\"input\": " RE ("a", "") ", \"regex\": \"a\"}}", "ERROR:needs 'input' to be of type string, not regex"},
    /* the named form only */
    /* input or regex left out is missing (regex_find.js): no match */
    {"{}", "{\"$regexMatch\": {\"input\": \"a\"}}", "false"},
    {"{}", "{\"$regexMatch\": {\"regex\": \"a\"}}", "false"},
    {"{}", "{\"$regexMatch\": {}}", "false"},
    /* the option letters are checked with no regex to compile too */
    {"{}", "{\"$regexMatch\": {\"input\": \"a\", \"options\": \"M\"}}", "PARSE:invalid flag in regex options: M"},
    {"{}", "{\"$regexFindAll\": {\"options\": \"sk\"}}", "PARSE:invalid flag in regex options: k"},
    {"{}", "{\"$regexFind\": {\"input\": \"a\", \"regex\": null, \"options\": \"ms\"}}", "null"},
    {"{}", "{\"$regexFind\": {\"input\": \"a\", \"regex\": \"a\", \"flags\": \"i\"}}", "PARSE:unknown argument 'flags'"},
    {"{}", "{\"$regexFindAll\": [\"a\", \"a\"]}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

/* A pattern (and options) from the document: compiled when evaluated,
 * refused then. */
static const x_case_t dynamic[] = {
    {"{\"s\": \"abc\", \"r\": \"^a\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"$r\"}}", "true"},
    {"{\"s\": \"abc\", \"r\": \"^b\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"$r\"}}", "false"},
    {"{\"s\": \"ABC\", \"r\": \"b\", \"o\": \"i\"}", "{\"$regexFind\": {\"input\": \"$s\", \"regex\": \"$r\", \"options\": \"$o\"}}",
     "{\"match\": \"B\", \"idx\": 1, \"captures\": []}"},
    {"{\"s\": \"ABC\", \"r\": " RE ("(b)", "i") "}", "{\"$regexFindAll\": {\"input\": \"$s\", \"regex\": \"$r\"}}",
     "[{\"match\": \"B\", \"idx\": 1, \"captures\": [\"B\"]}]"},
    {"{\"s\": \"ABC\", \"o\": \"i\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"b\", \"options\": \"$o\"}}", "true"},
    {"{\"s\": \"ABC\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"b\", \"options\": \"$nope\"}}", "false"},
    {"{\"s\": \"abc\", \"r\": {\"$concat\": [\"b\", \"c\"]}}",
     "{\"$regexFind\": {\"input\": \"$s\", \"regex\": {\"$concat\": [\"b\", \"c\"]}}}",
     "{\"match\": \"bc\", \"idx\": 1, \"captures\": []}"},
    {"{\"s\": \"abc\", \"r\": 5}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"$r\"}}",
     "ERROR:needs 'regex' to be of type string or regex, not int"},
    {"{\"s\": \"abc\", \"r\": \"(\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"$r\"}}",
     "ERROR:invalid regular expression /(/ at offset 1"},
    {"{\"s\": \"abc\", \"o\": \"q\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"a\", \"options\": \"$o\"}}",
     "ERROR:invalid flag in regex options: q"},
    {"{\"s\": \"abc\", \"r\": " RE ("a", "i") "}",
     "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"$r\", \"options\": \"m\"}}", "ERROR:specified in both"},
    {"{\"s\": 5, \"r\": \"(\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"$r\"}}", "ERROR:missing closing parenthesis"},
    {"{\"r\": \"a\"}", "{\"$regexFindAll\": {\"input\": \"$s\", \"regex\": \"$r\"}}", "[]"},
    {"{\"s\": \"abc\", \"o\": \"X\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"options\": \"$o\"}}",
     "ERROR:invalid flag in regex options: X"},
    {NULL, NULL, NULL},
};

/* A pattern that backtracks without end stops at the match limit, with an
 * error naming the operator, instead of holding the run. */
static const x_case_t limits[] = {
    {"{\"s\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"}",
     "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"^(a+)+$\"}}", "ERROR:$regexMatch: error while matching"},
    {"{\"s\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"}",
     "{\"$regexFindAll\": {\"input\": \"$s\", \"regex\": \"(a|aa)+$\"}}", "ERROR:limit"},
    /* a limit the pattern sets itself is an error when reached, and only
     * then: two steps find "ïv", one does not */
    {"{\"s\": \"naïveté\"}", "{\"$regexFind\": {\"input\": \"$s\", \"regex\": \"(*LIMIT_MATCH=1)ïv\"}}",
     "ERROR:$regexFind: error while matching"},
    {"{\"s\": \"naïveté\", \"r\": \"(*LIMIT_MATCH=1)ïv\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"$r\"}}",
     "ERROR:match limit"},
    {"{\"s\": \"naïveté\"}", "{\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"(*LIMIT_MATCH=4)ïv\"}}", "true"},
    {NULL, NULL, NULL},
};

/* The server's own expectations (regex_find.js), each as $regexFindAll and
 * as $regexFind (its first match, or null): captures, options x, s and m,
 * PCRE's start options ((*LIMIT_MATCH=n), (*CR), (*UCP), (*UTF)), idx in
 * code points, empty matches, and the refusals (a start option not at the
 * start, options given twice or unknown, a NUL in the pattern or options). */
static const x_case_t server_finds[] = {
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(m(p))\"}}",
     "[{\"match\": \"mp\", \"idx\": 2, \"captures\": [\"mp\", \"p\"]}, {\"match\": \"mp\", \"idx\": 10, \"captures\": [\"mp\", \"p\"]}]"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(m(p))\"}}",
     "{\"match\": \"mp\", \"idx\": 2, \"captures\": [\"mp\", \"p\"]}"},
    {"{\"text\": \"aaaaa aaaa\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(aa)+\", \"options\": \"\"}}}}",
     "[{\"match\": \"aaaa\", \"idx\": 0, \"captures\": [\"aa\"]}, {\"match\": \"aaaa\", \"idx\": 6, \"captures\": [\"aa\"]}]"},
    {"{\"text\": \"aaaaa aaaa\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(aa)+\", \"options\": \"\"}}}}",
     "{\"match\": \"aaaa\", \"idx\": 0, \"captures\": [\"aa\"]}"},
    {"{\"text\": \"aaaaa aaaa\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(a)+\", \"options\": \"\"}}}}",
     "[{\"match\": \"aaaaa\", \"idx\": 0, \"captures\": [\"a\"]}, {\"match\": \"aaaa\", \"idx\": 6, \"captures\": [\"a\"]}]"},
    {"{\"text\": \"aaaaa aaaa\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(a)+\", \"options\": \"\"}}}}",
     "{\"match\": \"aaaaa\", \"idx\": 0, \"captures\": [\"a\"]}"},
    {"{\"text\": \"aaa aa\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(a+?)\", \"options\": \"\"}}}}",
     "[{\"match\": \"a\", \"idx\": 0, \"captures\": [\"a\"]}, {\"match\": \"a\", \"idx\": 1, \"captures\": [\"a\"]}, {\"match\": \"a\", \"idx\": 2, \"captures\": [\"a\"]}, {\"match\": \"a\", \"idx\": 4, \"captures\": [\"a\"]}, {\"match\": \"a\", \"idx\": 5, \"captures\": [\"a\"]}]"},
    {"{\"text\": \"aaa aa\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(a+?)\", \"options\": \"\"}}}}",
     "{\"match\": \"a\", \"idx\": 0, \"captures\": [\"a\"]}"},
    {"{\"text\": \"aaa aa\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(a*?)\", \"options\": \"\"}}}}",
     "[{\"match\": \"\", \"idx\": 0, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 1, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 2, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 3, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 4, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 5, \"captures\": [\"\"]}]"},
    {"{\"text\": \"aaa aa\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(a*?)\", \"options\": \"\"}}}}",
     "{\"match\": \"\", \"idx\": 0, \"captures\": [\"\"]}"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(S)(i)(m)((p)(l)(e))\"}}",
     "[{\"match\": \"Simple\", \"idx\": 0, \"captures\": [\"S\", \"i\", \"m\", \"ple\", \"p\", \"l\", \"e\"]}]"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(S)(i)(m)((p)(l)(e))\"}}",
     "{\"match\": \"Simple\", \"idx\": 0, \"captures\": [\"S\", \"i\", \"m\", \"ple\", \"p\", \"l\", \"e\"]}"},
    {"{\"text\": \"1,2,3,4,5,6,7,8,9,10\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"^(?:1|a)\\\\,([0-9]+)\", \"options\": \"\"}}}}",
     "[{\"match\": \"1,2\", \"idx\": 0, \"captures\": [\"2\"]}]"},
    {"{\"text\": \"1,2,3,4,5,6,7,8,9,10\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"^(?:1|a)\\\\,([0-9]+)\", \"options\": \"\"}}}}",
     "{\"match\": \"1,2\", \"idx\": 0, \"captures\": [\"2\"]}"},
    {"{\"text\": \"This Is Camel Case\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"camel\", \"options\": \"\"}}, \"options\": \"i\"}}",
     "[{\"match\": \"Camel\", \"idx\": 8, \"captures\": []}]"},
    {"{\"text\": \"This Is Camel Case\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"camel\", \"options\": \"\"}}, \"options\": \"i\"}}",
     "{\"match\": \"Camel\", \"idx\": 8, \"captures\": []}"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"^Foo line\\\\d$\", \"options\": \"\"}}}}",
     "[]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"^Foo line\\\\d$\", \"options\": \"\"}}}}",
     "null"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(^Foo line\\\\d$)\", \"options\": \"m\"}}}}",
     "[{\"match\": \"Foo line1\", \"idx\": 0, \"captures\": [\"Foo line1\"]}, {\"match\": \"Foo line2\", \"idx\": 10, \"captures\": [\"Foo line2\"]}, {\"match\": \"Foo line3\", \"idx\": 20, \"captures\": [\"Foo line3\"]}]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(^Foo line\\\\d$)\", \"options\": \"m\"}}}}",
     "{\"match\": \"Foo line1\", \"idx\": 0, \"captures\": [\"Foo line1\"]}"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"Foo.*line\"}}",
     "[{\"match\": \"Foo line\", \"idx\": 0, \"captures\": []}, {\"match\": \"Foo line\", \"idx\": 10, \"captures\": []}, {\"match\": \"Foo line\", \"idx\": 20, \"captures\": []}]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"Foo.*line\"}}",
     "{\"match\": \"Foo line\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"Foo.*line\", \"options\": \"s\"}}",
     "[{\"match\": \"Foo line1\\nFoo line2\\nFoo line\", \"idx\": 0, \"captures\": []}]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"Foo.*line\", \"options\": \"s\"}}",
     "{\"match\": \"Foo line1\\nFoo line2\\nFoo line\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"F o o # a comment\"}}",
     "[]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"F o o # a comment\"}}",
     "null"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"F o o # a comment\", \"options\": \"x\"}}",
     "[{\"match\": \"Foo\", \"idx\": 0, \"captures\": []}, {\"match\": \"Foo\", \"idx\": 10, \"captures\": []}, {\"match\": \"Foo\", \"idx\": 20, \"captures\": []}]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"F o o # a comment\", \"options\": \"x\"}}",
     "{\"match\": \"Foo\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"F o o # a comment \\n\\n# ignored\", \"options\": \"x\"}}",
     "[{\"match\": \"Foo\", \"idx\": 0, \"captures\": []}, {\"match\": \"Foo\", \"idx\": 10, \"captures\": []}, {\"match\": \"Foo\", \"idx\": 20, \"captures\": []}]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"F o o # a comment \\n\\n# ignored\", \"options\": \"x\"}}",
     "{\"match\": \"Foo\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(F o o) # a comment\", \"options\": \"x\"}}",
     "[{\"match\": \"Foo\", \"idx\": 0, \"captures\": [\"Foo\"]}, {\"match\": \"Foo\", \"idx\": 10, \"captures\": [\"Foo\"]}, {\"match\": \"Foo\", \"idx\": 20, \"captures\": [\"Foo\"]}]"},
    {"{\"text\": \"Foo line1\\nFoo line2\\nFoo line3\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(F o o) # a comment\", \"options\": \"x\"}}",
     "{\"match\": \"Foo\", \"idx\": 0, \"captures\": [\"Foo\"]}"},
    {"{\"text\": \"OtherText\", \"pattern\": {\"$regularExpression\": {\"pattern\": \"(T(e))xt$\", \"options\": \"\"}}}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"$pattern\"}}",
     "[{\"match\": \"Text\", \"idx\": 5, \"captures\": [\"Te\", \"e\"]}]"},
    {"{\"text\": \"OtherText\", \"pattern\": {\"$regularExpression\": {\"pattern\": \"(T(e))xt$\", \"options\": \"\"}}}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"$pattern\"}}",
     "{\"match\": \"Text\", \"idx\": 5, \"captures\": [\"Te\", \"e\"]}"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFindAll\": {\"input\": \"\", \"regex\": \"\"}}",
     "[{\"match\": \"\", \"idx\": 0, \"captures\": []}]"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFind\": {\"input\": \"\", \"regex\": \"\"}}",
     "{\"match\": \"\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFindAll\": {\"input\": \"bbbb\", \"regex\": \"()\"}}",
     "[{\"match\": \"\", \"idx\": 0, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 1, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 2, \"captures\": [\"\"]}, {\"match\": \"\", \"idx\": 3, \"captures\": [\"\"]}]"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFind\": {\"input\": \"bbbb\", \"regex\": \"()\"}}",
     "{\"match\": \"\", \"idx\": 0, \"captures\": [\"\"]}"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": null}}",
     "[]"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": null}}",
     "null"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFindAll\": {}}",
     "[]"},
    {"{\"text\": \"Simple Example \"}",
     "{\"$regexFind\": {}}",
     "null"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=1)fé\"}}",
     "ERROR:match limit"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=1)fé\"}}",
     "ERROR:match limit"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=3)(fé)\"}}",
     "[{\"match\": \"fé\", \"idx\": 2, \"captures\": [\"fé\"]}]"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=3)(fé)\"}}",
     "{\"match\": \"fé\", \"idx\": 2, \"captures\": [\"fé\"]}"},
    {"{\"text\": \"ab\\ncd\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*LF)ab.cd\"}}",
     "[]"},
    {"{\"text\": \"ab\\ncd\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*LF)ab.cd\"}}",
     "null"},
    {"{\"text\": \"ab\\ncd\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*CR)ab.cd\"}}",
     "[{\"match\": \"ab\\ncd\", \"idx\": 0, \"captures\": []}]"},
    {"{\"text\": \"ab\\ncd\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*CR)ab.cd\"}}",
     "{\"match\": \"ab\\ncd\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=5)(*UCP)^(\\\\w+)\"}}",
     "[{\"match\": \"cafétéria\", \"idx\": 0, \"captures\": [\"cafétéria\"]}]"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=5)(*UCP)^(\\\\w+)\"}}",
     "{\"match\": \"cafétéria\", \"idx\": 0, \"captures\": [\"cafétéria\"]}"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=1)(*UCP)^(\\\\w+)\"}}",
     "ERROR:match limit"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*LIMIT_MATCH=1)(*UCP)^(\\\\w+)\"}}",
     "ERROR:match limit"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"té\"}}",
     "[{\"match\": \"té\", \"idx\": 4, \"captures\": []}]"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"té\"}}",
     "{\"match\": \"té\", \"idx\": 4, \"captures\": []}"},
    {"{\"text\": \"मा०गो डीबि\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(गो )\", \"options\": \"\"}}}}",
     "[{\"match\": \"गो \", \"idx\": 3, \"captures\": [\"गो \"]}]"},
    {"{\"text\": \"मा०गो डीबि\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(गो )\", \"options\": \"\"}}}}",
     "{\"match\": \"गो \", \"idx\": 3, \"captures\": [\"गो \"]}"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"\\\\p{Hangul}\"}}",
     "[]"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"\\\\p{Hangul}\"}}",
     "null"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"\\\\p{Latin}+$\"}}",
     "[{\"match\": \"cafétéria\", \"idx\": 0, \"captures\": []}]"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"\\\\p{Latin}+$\"}}",
     "{\"match\": \"cafétéria\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*UTF8)༤\"}}",
     "[{\"match\": \"༤\", \"idx\": 2, \"captures\": []}, {\"match\": \"༤\", \"idx\": 3, \"captures\": []}, {\"match\": \"༤\", \"idx\": 4, \"captures\": []}]"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*UTF8)༤\"}}",
     "{\"match\": \"༤\", \"idx\": 2, \"captures\": []}"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*UTF)༤\"}}",
     "[{\"match\": \"༤\", \"idx\": 2, \"captures\": []}, {\"match\": \"༤\", \"idx\": 3, \"captures\": []}, {\"match\": \"༤\", \"idx\": 4, \"captures\": []}]"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*UTF)༤\"}}",
     "{\"match\": \"༤\", \"idx\": 2, \"captures\": []}"},
    {"{\"text\": \"123444\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*UTF8)(44)\"}}",
     "[{\"match\": \"44\", \"idx\": 3, \"captures\": [\"44\"]}]"},
    {"{\"text\": \"123444\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*UTF8)(44)\"}}",
     "{\"match\": \"44\", \"idx\": 3, \"captures\": [\"44\"]}"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*UCP)^(\\\\w+)\"}}",
     "[{\"match\": \"༢༣༤༤༤༥12༥A\", \"idx\": 0, \"captures\": [\"༢༣༤༤༤༥12༥A\"]}]"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*UCP)^(\\\\w+)\"}}",
     "{\"match\": \"༢༣༤༤༤༥12༥A\", \"idx\": 0, \"captures\": [\"༢༣༤༤༤༥12༥A\"]}"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*UCP)^[[:digit:]]+\"}}",
     "[{\"match\": \"༢༣༤༤༤༥12༥\", \"idx\": 0, \"captures\": []}]"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*UCP)^[[:digit:]]+\"}}",
     "{\"match\": \"༢༣༤༤༤༥12༥\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*UCP)[[:digit:]]+$\"}}",
     "[]"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*UCP)[[:digit:]]+$\"}}",
     "null"},
    {"{\"text\": \"박정수AB\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"(*UCP)^[[:alpha:]]+\"}}",
     "[{\"match\": \"박정수AB\", \"idx\": 0, \"captures\": []}]"},
    {"{\"text\": \"박정수AB\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"(*UCP)^[[:alpha:]]+\"}}",
     "{\"match\": \"박정수AB\", \"idx\": 0, \"captures\": []}"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"^(\\\\w+)\"}}",
     "[]"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"^(\\\\w+)\"}}",
     "null"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"^[[:digit:]]\"}}",
     "[]"},
    {"{\"text\": \"༢༣༤༤༤༥12༥A\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"^[[:digit:]]\"}}",
     "null"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"^[[:alpha:]]+$\"}}",
     "[]"},
    {"{\"text\": \"cafétéria\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"^[[:alpha:]]+$\"}}",
     "null"},
    {"{\"a\": {\"b\": \"object\"}}",
     "{\"$regexFindAll\": {\"input\": \"$a\"}}",
     "ERROR:needs 'input' to be of type string"},
    {"{\"a\": {\"b\": \"object\"}}",
     "{\"$regexFind\": {\"input\": \"$a\"}}",
     "ERROR:needs 'input' to be of type string"},
    {"{}",
     "{\"$regexFindAll\": {\"regex\": \"[a-c\"}}",
     "PARSE:invalid regular expression"},
    {"{}",
     "{\"$regexFind\": {\"regex\": \"[a-c\"}}",
     "PARSE:invalid regular expression"},
    {"{\"text\": \"string\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"^(*UCP)[[:alpha:]]+$\"}}",
     "PARSE:(*VERB) not recognized"},
    {"{\"text\": \"string\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"^(*UCP)[[:alpha:]]+$\"}}",
     "PARSE:(*VERB) not recognized"},
    {"{\"text\": \"string\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"((*UCP)[[:alpha:]]+$)\"}}",
     "PARSE:(*VERB) not recognized"},
    {"{\"text\": \"string\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"((*UCP)[[:alpha:]]+$)\"}}",
     "PARSE:(*VERB) not recognized"},
    {"{\"text\": \"string\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"valid\", \"options\": \"I\"}}",
     "PARSE:invalid flag in regex options: I"},
    {"{\"text\": \"string\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"valid\", \"options\": \"I\"}}",
     "PARSE:invalid flag in regex options: I"},
    {"{\"text\": \"string\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(m(p))\", \"options\": \"i\"}}, \"options\": \"x\"}}",
     "PARSE:specified in both"},
    {"{\"text\": \"string\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(m(p))\", \"options\": \"i\"}}, \"options\": \"x\"}}",
     "PARSE:specified in both"},
    {"{\"text\": \"string\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(m(p))\", \"options\": \"m\"}}, \"options\": \"\"}}",
     "PARSE:specified in both"},
    {"{\"text\": \"string\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(m(p))\", \"options\": \"m\"}}, \"options\": \"\"}}",
     "PARSE:specified in both"},
    {"{\"text\": \"string\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": \"sasd\\u0000\", \"options\": \"i\"}}",
     "PARSE:cannot contain an embedded null byte"},
    {"{\"text\": \"string\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": \"sasd\\u0000\", \"options\": \"i\"}}",
     "PARSE:cannot contain an embedded null byte"},
    {"{\"text\": \"string\"}",
     "{\"$regexFindAll\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(m(p))\", \"options\": \"\"}}, \"options\": \"i\\u0000\"}}",
     "PARSE:options cannot contain an embedded null byte"},
    {"{\"text\": \"string\"}",
     "{\"$regexFind\": {\"input\": \"$text\", \"regex\": {\"$regularExpression\": {\"pattern\": \"(m(p))\", \"options\": \"\"}}, \"options\": \"i\\u0000\"}}",
     "PARSE:options cannot contain an embedded null byte"},

    {NULL, NULL, NULL},
};

X_TABLE_TEST (test_expr_regex_match, matches)
X_TABLE_TEST (test_expr_regex_find, finds)
X_TABLE_TEST (test_expr_regex_find_all, find_alls)
X_TABLE_TEST (test_expr_regex_refusals, refusals)
X_TABLE_TEST (test_expr_regex_dynamic, dynamic)
X_TABLE_TEST (test_expr_regex_limits, limits)
X_TABLE_TEST (test_expr_regex_server_finds, server_finds)

static rm_expr_t *
parse_json (const char *json)
{
    bson_error_t err;
    bson_t *ex = bson_new_from_json ((const uint8_t *) json, -1, &err);
    bson_iter_t it;
    rm_expr_t *e;
    if (!ex)
        return NULL;
    bson_iter_init_find (&it, ex, "e");
    e = rm_expr_parse (&it, &err);
    bson_destroy (ex);
    return e;
}

/* The server takes a pattern of up to 2^14 bytes in these operators, and
 * refuses one byte more: both sides of the line, a pattern of one
 * repeated letter. */
static void
test_expr_regex_pattern_length (void)
{
    enum { MAX = 16384 };
    char *json = malloc (MAX + 64);
    rm_expr_t *e;
    for (int extra = 0; extra <= 1; extra++) {
        int n = snprintf (json, 64, "{\"e\": {\"$regexMatch\": {\"input\": \"q\", \"regex\": \"");
        memset (json + n, 'q', MAX + extra);
        strcpy (json + n + MAX + extra, "\"}}}");
        e = parse_json (json);
        T_CHECK ((e != NULL) == (extra == 0));
        rm_expr_destroy (e);
    }
    free (json);
}

/* A pattern from the document changes from one document to the next: the
 * one kept is replaced, never used for another. */
static void
test_expr_regex_dynamic_changes (void)
{
    static const char *docs[][2] = {
        {"{\"s\": \"abc\", \"r\": \"b\"}", "b"},  {"{\"s\": \"abc\", \"r\": \"b\"}", "b"},
        {"{\"s\": \"abc\", \"r\": \"c$\"}", "c"}, {"{\"s\": \"abc\", \"r\": \"B\"}", NULL},
        {"{\"s\": \"aBc\", \"r\": \"B\"}", "B"},  {"{\"s\": \"abc\", \"r\": null}", NULL},
        {"{\"s\": \"abc\", \"r\": \"b\"}", "b"},
    };
    rm_expr_t *e = parse_json ("{\"e\": {\"$regexFind\": {\"input\": \"$s\", \"regex\": \"$r\"}}}");
    rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);

    T_CHECK (e != NULL);
    for (size_t i = 0; e && i < sizeof docs / sizeof docs[0]; i++) {
        bson_error_t err;
        bson_t *doc = bson_new_from_json ((const uint8_t *) docs[i][0], -1, &err);
        bson_value_t out;
        bson_iter_t it;
        rm_expr_ctx_reset (cx);
        T_CHECK (rm_expr_eval (cx, e, bson_get_data (doc), doc->len, &out, &err));
        if (!docs[i][1]) {
            T_CHECK (out.value_type == BSON_TYPE_NULL);
        } else {
            T_CHECK (rm_xval_iter (&out, &it) && bson_iter_find (&it, "match"));
            T_CHECK_STR (bson_iter_utf8 (&it, NULL), docs[i][1]);
        }
        bson_destroy (doc);
    }
    rm_expr_ctx_destroy (cx);
    rm_expr_destroy (e);
}

/* One compiled expression, several threads, each with its own context:
 * the expression's match data is never used by two at once (the others
 * take their own), and every thread gets its own right answers. */
typedef struct {
    const rm_expr_t *e;
    int bad;
} x_thread_t;

static void *
regex_thread (void *arg)
{
    x_thread_t *t = arg;
    rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);
    char json[200];
    for (int i = 0; i < 2000; i++) {
        bson_error_t err;
        bson_t *doc;
        bson_value_t out;
        int n = i % 7;
        snprintf (json, sizeof json, "{\"s\": \"%.*s-%d\"}", n, "xaxaxaxaxa", i);
        doc = bson_new_from_json ((const uint8_t *) json, -1, &err);
        rm_expr_ctx_reset (cx);
        if (!rm_expr_eval (cx, t->e, bson_get_data (doc), doc->len, &out, &err) ||
            out.value_type != BSON_TYPE_ARRAY || rm_xval_count (&out) != (uint32_t) (n / 2))
            t->bad++;
        bson_destroy (doc);
    }
    rm_expr_ctx_destroy (cx);
    return NULL;
}

static void
test_expr_regex_threads (void)
{
    rm_expr_t *e = parse_json ("{\"e\": {\"$regexFindAll\": {\"input\": \"$s\", \"regex\": \"(a)\"}}}");
    pthread_t th[4];
    x_thread_t ts[4];

    T_CHECK (e != NULL);
    if (!e)
        return;
    for (int i = 0; i < 4; i++) {
        ts[i].e = e;
        ts[i].bad = 0;
        pthread_create (&th[i], NULL, regex_thread, &ts[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join (th[i], NULL);
        T_CHECK (ts[i].bad == 0);
    }
    rm_expr_destroy (e);
}

/* Once warmed, a constant pattern's matching allocates nothing through
 * libbson (the results are built in the context's memory). */
static void
test_expr_regex_no_alloc_when_warm (void)
{
    const char *expr = "{\"a\": {\"$regexFindAll\": {\"input\": \"$s\", \"regex\": \"(\\\\w+)@(x)?\"}}, "
                       "\"b\": {\"$regexMatch\": {\"input\": \"$s\", \"regex\": \"^ada\", \"options\": \"i\"}}, "
                       "\"c\": {\"$regexFind\": {\"input\": \"$s\", \"regex\": \"é\"}}, "
                       "\"d\": {\"$regexFind\": {\"input\": \"$s\", \"regex\": \"$r\"}}}";
    const char *doc = "{\"s\": \"Ada@example, bob@x é\", \"r\": \"b.b\"}";

    T_CHECK (x_no_alloc_when_warm (doc, expr, BSON_TYPE_DOCUMENT) == 0);
}

int
main (void)
{
    T_RUN (test_expr_regex_match);
    T_RUN (test_expr_regex_find);
    T_RUN (test_expr_regex_find_all);
    T_RUN (test_expr_regex_refusals);
    T_RUN (test_expr_regex_dynamic);
    T_RUN (test_expr_regex_limits);
    T_RUN (test_expr_regex_server_finds);
    T_RUN (test_expr_regex_pattern_length);
    T_RUN (test_expr_regex_dynamic_changes);
    T_RUN (test_expr_regex_threads);
    T_RUN (test_expr_regex_no_alloc_when_warm);
    return t_done ();
}
