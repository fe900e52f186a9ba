/* The array operators (common/expr/expr_array.c): $arrayElemAt, $first,
 * $last, $size, $slice, $concatArrays, $map, $filter, $reduce,
 * $indexOfArray, $reverseArray, $range, $zip, $in, $sortArray, $firstN,
 * $lastN, $maxN, $minN. Cases from MongoDB's documentation of each
 * operator (its stated inputs and outputs), then null, missing, wrong
 * types and edge cases as the server's evaluators have them. Only the
 * core operators and this family's appear, so that the table runs
 * whatever other family is built. */
#include <stdlib.h>

#include "expr_case.h"

static const x_case_t elem_at[] = {
    /* MongoDB's documentation of $arrayElemAt */
    {"{\"favorites\": [\"chocolate\", \"cake\", \"butter\", \"apples\"]}",
     "{\"$arrayElemAt\": [\"$favorites\", 0]}",
     "\"chocolate\""},
    {"{\"favorites\": [\"chocolate\", \"cake\", \"butter\", \"apples\"]}",
     "{\"$arrayElemAt\": [\"$favorites\", -1]}",
     "\"apples\""},
    {"{\"favorites\": []}", "{\"$arrayElemAt\": [\"$favorites\", 0]}", "MISSING"},
    {"{\"favorites\": []}", "{\"$arrayElemAt\": [\"$favorites\", -1]}", "MISSING"},
    {"{}", "{\"$arrayElemAt\": [[1, 2, 3], 0]}", "1"},
    {"{}", "{\"$arrayElemAt\": [[1, 2, 3], -2]}", "2"},
    {"{}", "{\"$arrayElemAt\": [[1, 2, 3], 15]}", "MISSING"},
    /* negative past the start is missing too, not an error */
    {"{}", "{\"$arrayElemAt\": [[1, 2, 3], -4]}", "MISSING"},
    {"{}", "{\"$arrayElemAt\": [[1, 2, 3], 2.0]}", "3"},
    {"{}", "{\"$arrayElemAt\": [[1, 2, 3], {\"$numberLong\": \"1\"}]}", "2"},
    {"{}", "{\"$arrayElemAt\": [[1, 2, 3], {\"$numberDecimal\": \"1\"}]}", "2"},
    {"{}", "{\"$arrayElemAt\": [[{\"a\": 1}], 0]}", "{\"a\": 1}"},
    /* null or missing, either argument: null */
    {"{}", "{\"$arrayElemAt\": [\"$nope\", 0]}", "null"},
    {"{}", "{\"$arrayElemAt\": [null, 0]}", "null"},
    {"{}", "{\"$arrayElemAt\": [[1], null]}", "null"},
    {"{}", "{\"$arrayElemAt\": [[1], \"$nope\"]}", "null"},
    {"{}", "{\"$arrayElemAt\": [\"abc\", null]}", "null"},
    /* wrong types and indexes */
    {"{}",
     "{\"$arrayElemAt\": [\"abc\", 0]}",
     "ERROR:$arrayElemAt: its first argument must be an array, not the string \"abc\""},
    {"{\"a\": {\"b\": 1}}", "{\"$arrayElemAt\": [\"$a\", 0]}", "ERROR:must be an array, not the object"},
    {"{}", "{\"$arrayElemAt\": [[1, 2], 1.5]}", "ERROR:must be an integer that fits 32 bits"},
    {"{}", "{\"$arrayElemAt\": [[1, 2], {\"$numberLong\": \"4294967296\"}]}", "ERROR:fits 32 bits"},
    {"{}", "{\"$arrayElemAt\": [[1, 2], \"1\"]}", "ERROR:its index must be a number, not the string"},
    {"{}", "{\"$arrayElemAt\": [[1, 2], true]}", "ERROR:must be a number"},
    {"{}", "{\"$arrayElemAt\": [[1, 2]]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t first_last[] = {
    /* MongoDB's documentation of $first and $last (expressions) */
    {"{}", "{\"$first\": [[1, 2, 3]]}", "1"},
    {"{}", "{\"$first\": [[[]]]}", "[]"},
    {"{}", "{\"$first\": [null]}", "null"},
    {"{}", "{\"$first\": [[]]}", "MISSING"},
    {"{}", "{\"$first\": \"$nope\"}", "null"},
    {"{}", "{\"$last\": [[1, 2, 3]]}", "3"},
    {"{}", "{\"$last\": [[[1, 2], [3, 4]]]}", "[3, 4]"},
    {"{}", "{\"$last\": [[]]}", "MISSING"},
    {"{}", "{\"$last\": [null]}", "null"},
    {"{\"items\": [{\"n\": \"a\"}, {\"n\": \"b\"}]}", "{\"$first\": \"$items\"}", "{\"n\": \"a\"}"},
    {"{\"items\": [{\"n\": \"a\"}, {\"n\": \"b\"}]}", "{\"$last\": \"$items.n\"}", "\"b\""},
    {"{}", "{\"$first\": \"abc\"}", "ERROR:$first: its argument must be an array, not the string"},
    {"{}", "{\"$last\": {\"a\": 1}}", "ERROR:$last: its argument must be an array, not the object"},
    {"{}", "{\"$first\": [1, 2]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

static const x_case_t sizes[] = {
    /* MongoDB's documentation of $size */
    {"{\"colors\": [\"blue\", \"black\", \"red\"]}", "{\"$size\": \"$colors\"}", "3"},
    {"{\"colors\": [\"purple\"]}", "{\"$size\": \"$colors\"}", "1"},
    {"{\"colors\": []}", "{\"$size\": \"$colors\"}", "0"},
    {"{\"colors\": []}",
     "{\"$cond\": {\"if\": {\"$eq\": [{\"$size\": \"$colors\"}, 0]}, \"then\": \"none\", \"else\": \"some\"}}",
     "\"none\""},
    {"{}", "{\"$size\": [[1, [2, 3]]]}", "2"},
    /* anything but an array is an error, missing and null included */
    {"{}", "{\"$size\": \"$nope\"}", "ERROR:$size: its argument must be an array, but it is missing"},
    {"{}", "{\"$size\": null}", "ERROR:must be an array, not null"},
    {"{\"a\": \"xyz\"}", "{\"$size\": \"$a\"}", "ERROR:not the string \"xyz\""},
    {"{\"a\": {\"b\": [1]}}", "{\"$size\": \"$a\"}", "ERROR:not the object"},
    {"{}", "{\"$size\": [1, 2]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

static const x_case_t slices[] = {
    /* MongoDB's documentation of $slice */
    {"{}", "{\"$slice\": [[1, 2, 3], 1, 1]}", "[2]"},
    {"{}", "{\"$slice\": [[1, 2, 3], -2]}", "[2, 3]"},
    {"{}", "{\"$slice\": [[1, 2, 3], 15, 2]}", "[]"},
    {"{}", "{\"$slice\": [[1, 2, 3], -15, 2]}", "[1, 2]"},
    {"{\"favorites\": [\"chocolate\", \"cake\", \"butter\", \"apples\"]}",
     "{\"$slice\": [\"$favorites\", 3]}",
     "[\"chocolate\", \"cake\", \"butter\"]"},
    {"{\"favorites\": [\"apples\", \"pudding\", \"pie\"]}",
     "{\"$slice\": [\"$favorites\", 3]}",
     "[\"apples\", \"pudding\", \"pie\"]"},
    {"{\"favorites\": [\"pears\", \"pecans\"]}",
     "{\"$slice\": [\"$favorites\", 3]}",
     "[\"pears\", \"pecans\"]"},
    {"{\"favorites\": [\"cherries\"]}", "{\"$slice\": [\"$favorites\", 3]}", "[\"cherries\"]"},
    /* two arguments: a count from the start, or from the end */
    {"{}", "{\"$slice\": [[1, 2, 3], 2]}", "[1, 2]"},
    {"{}", "{\"$slice\": [[1, 2, 3], 0]}", "[]"},
    {"{}", "{\"$slice\": [[1, 2, 3], -1]}", "[3]"},
    {"{}", "{\"$slice\": [[1, 2, 3], -5]}", "[1, 2, 3]"},
    {"{}", "{\"$slice\": [[1, 2, 3], 5]}", "[1, 2, 3]"},
    /* three: a position (negative from the end) and a positive count */
    {"{}", "{\"$slice\": [[1, 2, 3], -1, 2]}", "[3]"},
    {"{}", "{\"$slice\": [[1, 2, 3], 1, 10]}", "[2, 3]"},
    {"{}", "{\"$slice\": [[1, 2, 3], 3, 1]}", "[]"},
    {"{}", "{\"$slice\": [[1, 2, 3], {\"$numberLong\": \"1\"}, 2.0]}", "[2, 3]"},
    {"{}", "{\"$slice\": [[1, 2, 3], 0, 0]}", "ERROR:must be positive"},
    {"{}", "{\"$slice\": [[1, 2, 3], 0, -1]}", "ERROR:must be positive"},
    /* null and missing */
    {"{}", "{\"$slice\": [null, 1]}", "null"},
    {"{}", "{\"$slice\": [\"$nope\", 1]}", "null"},
    {"{}", "{\"$slice\": [[1, 2, 3], null]}", "null"},
    {"{}", "{\"$slice\": [[1, 2, 3], 1, null]}", "null"},
    {"{}", "{\"$slice\": [[1, 2, 3], 1, \"$nope\"]}", "null"},
    /* wrong types */
    {"{}", "{\"$slice\": [\"abc\", 1]}", "ERROR:its first argument must be an array, not the string"},
    {"{}", "{\"$slice\": [[1, 2, 3], \"1\"]}", "ERROR:its second argument must be a number"},
    {"{}", "{\"$slice\": [[1, 2, 3], 1.5]}", "ERROR:fits 32 bits"},
    {"{}", "{\"$slice\": [[1, 2, 3], 0, \"a\"]}", "ERROR:its third argument must be a number"},
    {"{}", "{\"$slice\": [[1, 2, 3], 0, 2.5]}", "ERROR:fits 32 bits"},
    {"{}", "{\"$slice\": [[1, 2, 3]]}", "PARSE:2 to 3 arguments"},
    {"{}", "{\"$slice\": [[1], 1, 1, 1]}", "PARSE:2 to 3 arguments"},
    {NULL, NULL, NULL},
};

static const x_case_t concats[] = {
    /* MongoDB's documentation of $concatArrays */
    {"{}", "{\"$concatArrays\": [[\"hello\", \" \"], [\"world\"]]}", "[\"hello\", \" \", \"world\"]"},
    {"{}",
     "{\"$concatArrays\": [[\"hello\", \" \"], [[\"world\"], \"again\"]]}",
     "[\"hello\", \" \", [\"world\"], \"again\"]"},
    {"{\"instock\": [\"chocolate\"], \"ordered\": [\"butter\", \"apples\"]}",
     "{\"$concatArrays\": [\"$instock\", \"$ordered\"]}",
     "[\"chocolate\", \"butter\", \"apples\"]"},
    {"{\"instock\": [\"apples\", \"pudding\", \"pie\"]}",
     "{\"$concatArrays\": [\"$instock\", \"$ordered\"]}",
     "null"},
    {"{}", "{\"$concatArrays\": []}", "[]"},
    {"{}", "{\"$concatArrays\": [[], [1], []]}", "[1]"},
    /* a null or missing argument makes null, and later ones are not judged */
    {"{}", "{\"$concatArrays\": [[1], null]}", "null"},
    {"{}", "{\"$concatArrays\": [null, \"abc\"]}", "null"},
    {"{}",
     "{\"$concatArrays\": [[1], \"abc\"]}",
     "ERROR:$concatArrays: each argument must be an array, not the string"},
    {"{}", "{\"$concatArrays\": [\"abc\", null]}", "ERROR:must be an array"},
    {NULL, NULL, NULL},
};

static const x_case_t maps[] = {
    /* MongoDB's documentation of $map, with operators of this family */
    {"{\"items\": [{\"name\": \"a\", \"q\": 1}, {\"name\": \"b\"}]}",
     "{\"$map\": {\"input\": \"$items\", \"as\": \"item\", \"in\": \"$$item.name\"}}",
     "[\"a\", \"b\"]"},
    /* a missing result is pushed as null */
    {"{\"items\": [{\"name\": \"a\", \"q\": 1}, {\"name\": \"b\"}]}",
     "{\"$map\": {\"input\": \"$items\", \"as\": \"item\", \"in\": \"$$item.q\"}}",
     "[1, null]"},
    {"{}", "{\"$map\": {\"input\": [1, 2], \"in\": \"$$REMOVE\"}}", "[null, null]"},
    /* $$this without 'as' */
    {"{}", "{\"$map\": {\"input\": [1, 2, 3], \"in\": {\"$gt\": [\"$$this\", 1]}}}", "[false, true, true]"},
    {"{\"quizzes\": [5, 6, 7]}",
     "{\"$map\": {\"input\": \"$quizzes\", \"as\": \"grade\", \"in\": [\"$$grade\"]}}",
     "[[5], [6], [7]]"},
    {"{}", "{\"$map\": {\"input\": [], \"in\": 1}}", "[]"},
    /* nesting: the inner $$this hides the outer, a named variable does not */
    {"{}",
     "{\"$map\": {\"input\": [[1, 2], [3]], \"in\": {\"$map\": {\"input\": \"$$this\", \"in\": {\"$gt\": [\"$$this\", 1]}}}}}",
     "[[false, true], [true]]"},
    {"{}",
     "{\"$map\": {\"input\": [1, 2], \"as\": \"x\", \"in\": {\"$map\": {\"input\": [10], \"in\": [\"$$x\", \"$$this\"]}}}}",
     "[[[1, 10]], [[2, 10]]]"},
    {"{\"a\": 7}",
     "{\"$map\": {\"input\": [1], \"in\": [\"$a\", \"$$ROOT.a\", \"$$CURRENT.a\"]}}",
     "[[7, 7, 7]]"},
    {"{\"a\": 7}",
     "{\"$let\": {\"vars\": {\"k\": 3}, \"in\": {\"$map\": {\"input\": [1], \"in\": [\"$$k\", \"$$this\"]}}}}",
     "[[3, 1]]"},
    /* null and wrong types */
    {"{}", "{\"$map\": {\"input\": null, \"in\": 1}}", "null"},
    {"{}", "{\"$map\": {\"input\": \"$nope\", \"in\": 1}}", "null"},
    {"{}",
     "{\"$map\": {\"input\": \"abc\", \"in\": 1}}",
     "ERROR:$map: its input must be an array, not the string"},
    {"{}", "{\"$map\": {\"input\": [1, \"a\"], \"in\": {\"$size\": \"$$this\"}}}", "ERROR:$size"},
    /* parsing */
    {"{}", "{\"$map\": {\"input\": [1]}}", "PARSE:$map: missing the required argument 'in'"},
    {"{}", "{\"$map\": {\"in\": 1}}", "PARSE:missing the required argument 'input'"},
    {"{}", "{\"$map\": {\"input\": [1], \"in\": 1, \"x\": 2}}", "PARSE:unknown argument 'x'"},
    {"{}", "{\"$map\": {\"input\": [1], \"as\": \"Bad\", \"in\": 1}}", "PARSE:not a valid variable name"},
    {"{}", "{\"$map\": {\"input\": [1], \"as\": 1, \"in\": 1}}", "PARSE:'as' must be a variable name"},
    {"{}", "{\"$map\": {\"input\": \"$$this\", \"in\": 1}}", "PARSE:undefined variable: this"},
    {"{}",
     "{\"$map\": {\"input\": [1], \"as\": \"x\", \"in\": \"$$this\"}}",
     "PARSE:undefined variable: this"},
    {"{}", "{\"$map\": [1]}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

static const x_case_t filters[] = {
    /* MongoDB's documentation of $filter */
    {"{\"items\": [{\"item_id\": 43, \"quantity\": 2, \"price\": 10}, {\"item_id\": 2, \"quantity\": 1, \"price\": 240}]}",
     "{\"$filter\": {\"input\": \"$items\", \"as\": \"item\", \"cond\": {\"$gte\": [\"$$item.price\", 100]}}}",
     "[{\"item_id\": 2, \"quantity\": 1, \"price\": 240}]"},
    {"{\"items\": [{\"item_id\": 23, \"quantity\": 3, \"price\": 110}, {\"item_id\": 103, \"quantity\": 4, \"price\": 5}, {\"item_id\": 38, \"quantity\": 1, \"price\": 300}]}",
     "{\"$filter\": {\"input\": \"$items\", \"as\": \"item\", \"cond\": {\"$gte\": [\"$$item.price\", 100]}, \"limit\": 1}}",
     "[{\"item_id\": 23, \"quantity\": 3, \"price\": 110}]"},
    {"{\"items\": [{\"item_id\": 4, \"quantity\": 1, \"price\": 23}]}",
     "{\"$filter\": {\"input\": \"$items\", \"as\": \"item\", \"cond\": {\"$gte\": [\"$$item.price\", 100]}}}",
     "[]"},
    {"{}",
     "{\"$filter\": {\"input\": [1, \"a\", 2, null, 3.1, {\"$numberLong\": \"5\"}, \"5\"], \"as\": \"num\", \"cond\": {\"$and\": [{\"$gte\": [\"$$num\", {\"$numberLong\": \"-9223372036854775807\"}]}, {\"$lte\": [\"$$num\", {\"$numberLong\": \"9223372036854775807\"}]}]}}}",
     "[1, 2, 3.1, {\"$numberLong\": \"5\"}]"},
    /* truthiness decides; $$this without 'as' */
    {"{}",
     "{\"$filter\": {\"input\": [0, 1, \"\", null, [], false, {}], \"cond\": \"$$this\"}}",
     "[1, \"\", [], {}]"},
    /* limit: null means none; it must be a positive integer */
    {"{}", "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": 2}}", "[1, 2]"},
    {"{}", "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": 2.0}}", "[1, 2]"},
    {"{}", "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": 10}}", "[1, 2, 3]"},
    {"{}", "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": null}}", "[1, 2, 3]"},
    {"{}", "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": \"$nope\"}}", "[1, 2, 3]"},
    {"{}",
     "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": 0}}",
     "ERROR:limit must be greater than 0"},
    {"{}",
     "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": -1}}",
     "ERROR:limit must be greater than 0"},
    {"{}",
     "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": 1.5}}",
     "ERROR:limit must be an integer"},
    {"{}",
     "{\"$filter\": {\"input\": [1, 2, 3], \"cond\": true, \"limit\": \"a\"}}",
     "ERROR:limit must be an integer"},
    /* an empty input is returned before the limit is looked at */
    {"{}", "{\"$filter\": {\"input\": [], \"cond\": true, \"limit\": 0}}", "[]"},
    /* the limit is read in the outer scope */
    {"{}",
     "{\"$filter\": {\"input\": [1], \"cond\": true, \"limit\": \"$$this\"}}",
     "PARSE:undefined variable: this"},
    /* null and wrong types */
    {"{}", "{\"$filter\": {\"input\": null, \"cond\": true}}", "null"},
    {"{}", "{\"$filter\": {\"input\": \"$nope\", \"cond\": true}}", "null"},
    {"{}",
     "{\"$filter\": {\"input\": {\"a\": 1}, \"cond\": true}}",
     "ERROR:$filter: its input must be an array, not the object"},
    {"{}", "{\"$filter\": {\"input\": [1]}}", "PARSE:missing the required argument 'cond'"},
    {"{}", "{\"$filter\": {\"cond\": true}}", "PARSE:missing the required argument 'input'"},
    {"{}", "{\"$filter\": {\"input\": [1], \"cond\": true, \"in\": 1}}", "PARSE:unknown argument 'in'"},
    {"{}",
     "{\"$filter\": {\"input\": [1], \"as\": \"x\", \"cond\": \"$$this\"}}",
     "PARSE:undefined variable: this"},
    {NULL, NULL, NULL},
};

static const x_case_t reduces[] = {
    /* MongoDB's documentation of $reduce */
    {"{}",
     "{\"$reduce\": {\"input\": [[3, 4], [5, 6]], \"initialValue\": [1, 2], \"in\": {\"$concatArrays\": [\"$$value\", \"$$this\"]}}}",
     "[1, 2, 3, 4, 5, 6]"},
    {"{\"experience\": [{\"a\": 1}, {\"b\": 2}, {\"a\": 3}]}",
     "{\"$reduce\": {\"input\": \"$experience\", \"initialValue\": {}, \"in\": {\"$mergeObjects\": [\"$$value\", \"$$this\"]}}}",
     "{\"a\": 3, \"b\": 2}"},
    /* $$value and $$this */
    {"{}",
     "{\"$reduce\": {\"input\": [1, 5, 3], \"initialValue\": 0, \"in\": {\"$cond\": [{\"$gt\": [\"$$this\", \"$$value\"]}, \"$$this\", \"$$value\"]}}}",
     "5"},
    {"{}",
     "{\"$reduce\": {\"input\": [\"a\", \"b\"], \"initialValue\": [], \"in\": [[\"$$value\"], \"$$this\"]}}",
     "[[[[[]], \"a\"]], \"b\"]"},
    /* each iteration's scratch is given back (expr_array.c): the
     * accumulator kept aside, in the previous one's buffer or not, or
     * pointing into it ($$value unchanged, a part of it) */
    {"{}",
     "{\"$reduce\": {\"input\": [\"a\", \"b\", \"c\"], \"initialValue\": \"\", \"in\": {\"$concat\": [\"$$value\", \"$$this\"]}}}",
     "\"abc\""},
    {"{}",
     "{\"$reduce\": {\"input\": [1, 2, 3, 4], \"initialValue\": \"\", \"in\": {\"$cond\": [{\"$eq\": [{\"$mod\": [\"$$this\", 2]}, 0]}, {\"$concat\": [\"$$value\", {\"$substrBytes\": [\"0123456789\", \"$$this\", 1]}]}, \"$$value\"]}}}",
     "\"24\""},
    {"{}",
     "{\"$reduce\": {\"input\": [1, 2, 3], \"initialValue\": {\"a\": {\"b\": \"x\"}}, \"in\": {\"$cond\": [{\"$eq\": [\"$$this\", 2]}, \"$$value.a\", {\"$mergeObjects\": [\"$$value\", {\"c\": \"$$this\"}]}]}}}",
     "{\"b\": \"x\", \"c\": 3}"},
    {"{}",
     "{\"$reduce\": {\"input\": [[1, 2], [3]], \"initialValue\": \"\", \"in\": {\"$concat\": [\"$$value\", {\"$reduce\": {\"input\": \"$$this\", \"initialValue\": \"-\", \"in\": {\"$concat\": [\"$$value\", {\"$substrBytes\": [\"0123456789\", \"$$this\", 1]}]}}}]}}}",
     "\"-12-3\""},
    {"{}",
     "{\"$reduce\": {\"input\": [\"a\", \"b\"], \"initialValue\": [], \"in\": {\"$concatArrays\": [\"$$value\", {\"$map\": {\"input\": [\"$$this\"], \"in\": {\"$concat\": [\"$$this\", \"!\"]}}}]}}}",
     "[\"a!\", \"b!\"]"},
    {"{}",
     "{\"$map\": {\"input\": [\"a\", \"b\"], \"as\": \"s\", \"in\": {\"$concat\": [\"$$s\", {\"$toUpper\": \"$$s\"}]}}}",
     "[\"aA\", \"bB\"]"},
    {"{}",
     "{\"$filter\": {\"input\": [\"ab\", \"c\", \"de\"], \"cond\": {\"$eq\": [{\"$strLenBytes\": {\"$concat\": [\"$$this\", \"$$this\"]}}, 4]}}}",
     "[\"ab\", \"de\"]"},
    /* an empty input gives the initial value, even missing */
    {"{}", "{\"$reduce\": {\"input\": [], \"initialValue\": 7, \"in\": 1}}", "7"},
    {"{}", "{\"$reduce\": {\"input\": [], \"initialValue\": \"$nope\", \"in\": 1}}", "MISSING"},
    {"{}", "{\"$reduce\": {\"input\": [1], \"initialValue\": 0, \"in\": \"$$REMOVE\"}}", "MISSING"},
    /* null and wrong types */
    {"{}", "{\"$reduce\": {\"input\": null, \"initialValue\": 0, \"in\": 1}}", "null"},
    {"{}", "{\"$reduce\": {\"input\": \"$nope\", \"initialValue\": 0, \"in\": 1}}", "null"},
    {"{}",
     "{\"$reduce\": {\"input\": 5, \"initialValue\": 0, \"in\": 1}}",
     "ERROR:$reduce: its input must be an array, not the int 5"},
    {"{}",
     "{\"$reduce\": {\"input\": [1], \"initialValue\": 0}}",
     "PARSE:missing the required argument 'in'"},
    {"{}",
     "{\"$reduce\": {\"input\": [1], \"in\": 0}}",
     "PARSE:missing the required argument 'initialValue'"},
    {"{}", "{\"$reduce\": {\"initialValue\": 0, \"in\": 0}}", "PARSE:missing the required argument 'input'"},
    {"{}",
     "{\"$reduce\": {\"input\": [1], \"initialValue\": 0, \"in\": 0, \"as\": \"x\"}}",
     "PARSE:unknown argument 'as'"},
    {"{}",
     "{\"$reduce\": {\"input\": [1], \"initialValue\": \"$$value\", \"in\": 0}}",
     "PARSE:undefined variable: value"},
    {NULL, NULL, NULL},
};

static const x_case_t indexes[] = {
    /* MongoDB's documentation of $indexOfArray */
    {"{}", "{\"$indexOfArray\": [[\"a\", \"abc\"], \"a\"]}", "0"},
    {"{}", "{\"$indexOfArray\": [[\"a\", \"abc\", \"de\", [\"de\"]], [\"de\"]]}", "3"},
    {"{}", "{\"$indexOfArray\": [[1, 2], 5]}", "-1"},
    {"{}", "{\"$indexOfArray\": [[1, 2, 3], [1, 2]]}", "-1"},
    {"{}", "{\"$indexOfArray\": [[10, 9, 9, 8, 9], 9, 3]}", "4"},
    {"{}", "{\"$indexOfArray\": [[\"a\", \"abc\", \"b\"], \"b\", 0, 1]}", "-1"},
    {"{}", "{\"$indexOfArray\": [[\"a\", \"abc\", \"b\"], \"b\", 1, 0]}", "-1"},
    {"{}", "{\"$indexOfArray\": [[\"a\", \"abc\", \"b\"], \"b\", 20]}", "-1"},
    {"{}", "{\"$indexOfArray\": [[null, null, null], null]}", "0"},
    {"{}", "{\"$indexOfArray\": [null, \"foo\"]}", "null"},
    {"{}",
     "{\"$indexOfArray\": [\"foo\", \"foo\"]}",
     "ERROR:$indexOfArray: its first argument must be an array, not the string"},
    {"{\"items\": [\"one\", \"two\", \"three\"]}", "{\"$indexOfArray\": [\"$items\", \"two\"]}", "1"},
    /* equality is MongoDB's: numbers by value */
    {"{}", "{\"$indexOfArray\": [[1, 2], 2.0]}", "1"},
    {"{}", "{\"$indexOfArray\": [[1, {\"$numberLong\": \"2\"}], {\"$numberDecimal\": \"2.0\"}]}", "1"},
    {"{}", "{\"$indexOfArray\": [[1, 2, 1], 1, 1, 3]}", "2"},
    {"{}", "{\"$indexOfArray\": [[1, 2, 1], 1, 1, 2.0]}", "-1"},
    {"{}", "{\"$indexOfArray\": [\"$nope\", 1]}", "null"},
    /* start and end: non-negative integers (null is not one) */
    {"{}", "{\"$indexOfArray\": [[1, 2], 1, -1]}", "ERROR:its start must not be negative"},
    {"{}", "{\"$indexOfArray\": [[1, 2], 1, 0, -1]}", "ERROR:its end must not be negative"},
    {"{}", "{\"$indexOfArray\": [[1, 2], 1, 1.5]}", "ERROR:its start must be an integer"},
    {"{}", "{\"$indexOfArray\": [[1, 2], 1, null]}", "ERROR:its start must be an integer"},
    {"{}", "{\"$indexOfArray\": [[1, 2], 1, 0, \"x\"]}", "ERROR:its end must be an integer"},
    {"{}", "{\"$indexOfArray\": [[1, 2]]}", "PARSE:2 to 4 arguments"},
    {NULL, NULL, NULL},
};

static const x_case_t reverses[] = {
    /* MongoDB's documentation of $reverseArray */
    {"{}", "{\"$reverseArray\": {\"$literal\": [1, 2, 3]}}", "[3, 2, 1]"},
    {"{}", "{\"$reverseArray\": {\"$slice\": [[1, 2, 3, 4, 5], 1, 4]}}", "[5, 4, 3, 2]"},
    {"{}", "{\"$reverseArray\": null}", "null"},
    {"{}", "{\"$reverseArray\": {\"$literal\": []}}", "[]"},
    {"{}", "{\"$reverseArray\": {\"$literal\": [[1, 2, 3], [4, 5, 6]]}}", "[[4, 5, 6], [1, 2, 3]]"},
    {"{\"favorites\": [\"chocolate\", \"cake\", \"butter\", \"apples\"]}",
     "{\"$reverseArray\": \"$favorites\"}",
     "[\"apples\", \"butter\", \"cake\", \"chocolate\"]"},
    {"{\"favorites\": []}", "{\"$reverseArray\": \"$favorites\"}", "[]"},
    {"{}", "{\"$reverseArray\": \"$nope\"}", "null"},
    {"{}", "{\"$reverseArray\": [[{\"a\": 1}, \"x\"]]}", "[\"x\", {\"a\": 1}]"},
    {"{}",
     "{\"$reverseArray\": \"abc\"}",
     "ERROR:$reverseArray: its argument must be an array, not the string"},
    {"{}", "{\"$reverseArray\": [1, 2]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

static const x_case_t ranges[] = {
    /* MongoDB's documentation of $range */
    {"{}", "{\"$range\": [0, 10, 2]}", "[0, 2, 4, 6, 8]"},
    {"{}", "{\"$range\": [10, 0, -2]}", "[10, 8, 6, 4, 2]"},
    {"{}", "{\"$range\": [0, 10, -2]}", "[]"},
    {"{}", "{\"$range\": [0, 5]}", "[0, 1, 2, 3, 4]"},
    {"{\"distance\": 880}", "{\"$range\": [0, \"$distance\", 250]}", "[0, 250, 500, 750]"},
    {"{\"distance\": 24}", "{\"$range\": [0, \"$distance\", 25]}", "[0]"},
    {"{}", "{\"$range\": [5, 5]}", "[]"},
    {"{}", "{\"$range\": [-2, 2]}", "[-2, -1, 0, 1]"},
    {"{}", "{\"$range\": [{\"$numberLong\": \"1\"}, 3.0, {\"$numberDecimal\": \"1\"}]}", "[1, 2]"},
    /* no overflow at the ends of the int32 range */
    {"{}",
     "{\"$range\": [-2147483648, 2147483647, 1073741824]}",
     "[-2147483648, -1073741824, 0, 1073741824]"},
    {"{}", "{\"$range\": [2147483647, -2147483648, -2147483648]}", "[2147483647, -1]"},
    /* errors: a zero step, non-integers, null, and too many elements */
    {"{}", "{\"$range\": [0, 10, 0]}", "ERROR:$range: its step must not be 0"},
    {"{}", "{\"$range\": [0.5, 10]}", "ERROR:its start must be an integer that fits 32 bits"},
    {"{}", "{\"$range\": [0, 3000000000]}", "ERROR:its end must be an integer that fits 32 bits"},
    {"{}", "{\"$range\": [null, 10]}", "ERROR:its start must be a number, not null"},
    {"{}", "{\"$range\": [0, \"$nope\"]}", "ERROR:its end must be a number, but it is missing"},
    {"{}", "{\"$range\": [0, 10, \"a\"]}", "ERROR:its step must be a number"},
    {"{}", "{\"$range\": [0, 6553598]}", "ERROR:would use too much memory"},
    {"{}", "{\"$range\": [0, 2147483647]}", "ERROR:would use too much memory"},
    {"{}", "{\"$range\": [2147483647, -2147483648, -1]}", "ERROR:would use too much memory"},
    {"{}", "{\"$range\": [0]}", "PARSE:2 to 3 arguments"},
    {NULL, NULL, NULL},
};

static const x_case_t zips[] = {
    /* MongoDB's documentation of $zip */
    {"{}", "{\"$zip\": {\"inputs\": [[\"a\"], [\"b\"], [\"c\"]]}}", "[[\"a\", \"b\", \"c\"]]"},
    {"{}", "{\"$zip\": {\"inputs\": [[\"a\"], [\"b\", \"c\"]]}}", "[[\"a\", \"b\"]]"},
    {"{}", "{\"$zip\": {\"inputs\": [[1], [2, 3]], \"useLongestLength\": true}}", "[[1, 2], [null, 3]]"},
    {"{}",
     "{\"$zip\": {\"inputs\": [[1], [2, 3], [4]], \"useLongestLength\": true, \"defaults\": [\"a\", \"b\", \"c\"]}}",
     "[[1, 2, 4], [\"a\", 3, \"c\"]]"},
    {"{\"matrix\": [[1, 2], [2, 3], [3, 4]]}",
     "{\"$zip\": {\"inputs\": [{\"$arrayElemAt\": [\"$matrix\", 0]}, {\"$arrayElemAt\": [\"$matrix\", 1]}, {\"$arrayElemAt\": [\"$matrix\", 2]}]}}",
     "[[1, 2, 3], [2, 3, 4]]"},
    {"{\"xs\": [1, 2], \"ys\": [\"a\", \"b\", \"c\"]}",
     "{\"$zip\": {\"inputs\": [\"$xs\", \"$ys\"], \"useLongestLength\": false}}",
     "[[1, \"a\"], [2, \"b\"]]"},
    {"{}", "{\"$zip\": {\"inputs\": [[], [1]]}}", "[]"},
    {"{}",
     "{\"$zip\": {\"inputs\": [[], [1]], \"useLongestLength\": true, \"defaults\": [\"$nope\", 0]}}",
     "[[null, 1]]"},
    /* null or missing input: null; not an array: an error */
    {"{}", "{\"$zip\": {\"inputs\": [[1], null]}}", "null"},
    {"{}", "{\"$zip\": {\"inputs\": [[1], \"$nope\"]}}", "null"},
    {"{}",
     "{\"$zip\": {\"inputs\": [[1], \"a\"]}}",
     "ERROR:$zip: each input must be an array, not the string"},
    /* parsing */
    {"{}", "{\"$zip\": {}}", "PARSE:needs at least one input"},
    {"{}", "{\"$zip\": {\"inputs\": []}}", "PARSE:needs at least one input"},
    {"{}", "{\"$zip\": {\"inputs\": \"$a\"}}", "PARSE:'inputs' must be an array of expressions"},
    {"{}", "{\"$zip\": {\"inputs\": [[1]], \"defaults\": [0]}}", "PARSE:needs 'useLongestLength': true"},
    {"{}",
     "{\"$zip\": {\"inputs\": [[1], [2]], \"useLongestLength\": true, \"defaults\": [0]}}",
     "PARSE:the same length"},
    {"{}",
     "{\"$zip\": {\"inputs\": [[1]], \"useLongestLength\": 1}}",
     "PARSE:'useLongestLength' must be a bool"},
    {"{}", "{\"$zip\": {\"inputs\": [[1]], \"x\": 1}}", "PARSE:unknown argument 'x'"},
    {"{}", "{\"$zip\": [[1]]}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

static const x_case_t ins[] = {
    /* MongoDB's documentation of $in (the expression) */
    {"{}", "{\"$in\": [2, [1, 2, 3]]}", "true"},
    {"{}", "{\"$in\": [\"abc\", [\"xyz\", \"abc\"]]}", "true"},
    {"{}", "{\"$in\": [\"xy\", [\"xyz\", \"abc\"]]}", "false"},
    {"{}", "{\"$in\": [[\"a\"], [\"a\"]]}", "false"},
    {"{}", "{\"$in\": [[\"a\"], [[\"a\"]]]}", "true"},
    {"{}",
     "{\"$in\": [{\"$regularExpression\": {\"pattern\": \"^a\", \"options\": \"\"}}, [\"a\"]]}",
     "false"},
    {"{}",
     "{\"$in\": [{\"$regularExpression\": {\"pattern\": \"^a\", \"options\": \"\"}}, [{\"$regularExpression\": {\"pattern\": \"^a\", \"options\": \"\"}}]]}",
     "true"},
    {"{\"in_stock\": [\"apples\", \"oranges\"]}", "{\"$in\": [\"bananas\", \"$in_stock\"]}", "false"},
    {"{\"in_stock\": [\"apples\", \"bananas\"]}", "{\"$in\": [\"bananas\", \"$in_stock\"]}", "true"},
    /* numbers by value; null is a value to look for */
    {"{}", "{\"$in\": [2, [1, 2.0]]}", "true"},
    {"{}", "{\"$in\": [{\"$numberDecimal\": \"1.0\"}, [{\"$numberLong\": \"1\"}]]}", "true"},
    {"{}", "{\"$in\": [null, [1, null]]}", "true"},
    {"{}", "{\"$in\": [\"$nope\", [1, null]]}", "false"},
    {"{}", "{\"$in\": [{\"a\": 1}, [{\"a\": 1.0}]]}", "true"},
    {"{}", "{\"$in\": [1, []]}", "false"},
    /* the second argument must be an array, even null is an error */
    {"{}", "{\"$in\": [1, null]}", "ERROR:$in: its second argument must be an array, not null"},
    {"{}", "{\"$in\": [1, \"$nope\"]}", "ERROR:its second argument must be an array, but it is missing"},
    {"{}", "{\"$in\": [1, \"abc\"]}", "ERROR:not the string"},
    {"{}", "{\"$in\": [1]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t sorts[] = {
    /* MongoDB's documentation of $sortArray */
    {"{\"team\": [{\"name\": \"pat\", \"age\": 30, \"address\": {\"street\": \"12 Baker St\", \"city\": \"London\"}}, {\"name\": \"dallas\", \"age\": 36, \"address\": {\"street\": \"12 Cowper St\", \"city\": \"Palo Alto\"}}, {\"name\": \"charlie\", \"age\": 42, \"address\": {\"street\": \"12 French St\", \"city\": \"New Brunswick\"}}]}",
     "{\"$sortArray\": {\"input\": \"$team\", \"sortBy\": {\"name\": 1}}}",
     "[{\"name\": \"charlie\", \"age\": 42, \"address\": {\"street\": \"12 French St\", \"city\": \"New Brunswick\"}}, {\"name\": \"dallas\", \"age\": 36, \"address\": {\"street\": \"12 Cowper St\", \"city\": \"Palo Alto\"}}, {\"name\": \"pat\", \"age\": 30, \"address\": {\"street\": \"12 Baker St\", \"city\": \"London\"}}]"},
    {"{\"team\": [{\"name\": \"pat\", \"age\": 30, \"address\": {\"street\": \"12 Baker St\", \"city\": \"London\"}}, {\"name\": \"dallas\", \"age\": 36, \"address\": {\"street\": \"12 Cowper St\", \"city\": \"Palo Alto\"}}, {\"name\": \"charlie\", \"age\": 42, \"address\": {\"street\": \"12 French St\", \"city\": \"New Brunswick\"}}]}",
     "{\"$sortArray\": {\"input\": \"$team\", \"sortBy\": {\"address.city\": -1}}}",
     "[{\"name\": \"dallas\", \"age\": 36, \"address\": {\"street\": \"12 Cowper St\", \"city\": \"Palo Alto\"}}, {\"name\": \"charlie\", \"age\": 42, \"address\": {\"street\": \"12 French St\", \"city\": \"New Brunswick\"}}, {\"name\": \"pat\", \"age\": 30, \"address\": {\"street\": \"12 Baker St\", \"city\": \"London\"}}]"},
    {"{\"team\": [{\"name\": \"pat\", \"age\": 30, \"address\": {\"street\": \"12 Baker St\", \"city\": \"London\"}}, {\"name\": \"dallas\", \"age\": 36, \"address\": {\"street\": \"12 Cowper St\", \"city\": \"Palo Alto\"}}, {\"name\": \"charlie\", \"age\": 42, \"address\": {\"street\": \"12 French St\", \"city\": \"New Brunswick\"}}]}",
     "{\"$sortArray\": {\"input\": \"$team\", \"sortBy\": {\"age\": -1, \"name\": 1}}}",
     "[{\"name\": \"charlie\", \"age\": 42, \"address\": {\"street\": \"12 French St\", \"city\": \"New Brunswick\"}}, {\"name\": \"dallas\", \"age\": 36, \"address\": {\"street\": \"12 Cowper St\", \"city\": \"Palo Alto\"}}, {\"name\": \"pat\", \"age\": 30, \"address\": {\"street\": \"12 Baker St\", \"city\": \"London\"}}]"},
    {"{}", "{\"$sortArray\": {\"input\": [1, 4, 1, 6, 12, 5], \"sortBy\": 1}}", "[1, 1, 4, 5, 6, 12]"},
    {"{}", "{\"$sortArray\": {\"input\": [1, 4, 1, 6, 12, 5], \"sortBy\": -1}}", "[12, 6, 5, 4, 1, 1]"},
    {"{}",
     "{\"$sortArray\": {\"input\": [20, 4, {\"a\": \"Free\"}, 6, 21, 5, \"Gratis\", {\"a\": null}, {\"a\": {\"sale\": true, \"price\": 19}}, {\"$numberDecimal\": \"10.23\"}, {\"a\": \"On sale\"}], \"sortBy\": 1}}",
     "[4, 5, 6, {\"$numberDecimal\": \"10.23\"}, 20, 21, \"Gratis\", {\"a\": null}, {\"a\": \"Free\"}, {\"a\": \"On sale\"}, {\"a\": {\"sale\": true, \"price\": 19}}]"},
    /* stable: equal keys keep their order, either direction */
    {"{}",
     "{\"$sortArray\": {\"input\": [{\"a\": 1, \"i\": 0}, {\"a\": 0, \"i\": 1}, {\"a\": 1, \"i\": 2}, {\"a\": 0, \"i\": 3}], \"sortBy\": {\"a\": 1}}}",
     "[{\"a\": 0, \"i\": 1}, {\"a\": 0, \"i\": 3}, {\"a\": 1, \"i\": 0}, {\"a\": 1, \"i\": 2}]"},
    {"{}",
     "{\"$sortArray\": {\"input\": [{\"a\": 1, \"i\": 0}, {\"a\": 0, \"i\": 1}, {\"a\": 1, \"i\": 2}, {\"a\": 0, \"i\": 3}], \"sortBy\": {\"a\": -1}}}",
     "[{\"a\": 1, \"i\": 0}, {\"a\": 1, \"i\": 2}, {\"a\": 0, \"i\": 1}, {\"a\": 0, \"i\": 3}]"},
    {"{}",
     "{\"$sortArray\": {\"input\": [2, 1.0, {\"$numberLong\": \"1\"}, 1], \"sortBy\": 1}}",
     "[1.0, {\"$numberLong\": \"1\"}, 1, 2]"},
    /* by fields, a missing field and a non-document element sort as null */
    {"{}",
     "{\"$sortArray\": {\"input\": [3, {\"a\": 1}, {\"b\": 2}, {\"a\": null}], \"sortBy\": {\"a\": 1}}}",
     "[3, {\"b\": 2}, {\"a\": null}, {\"a\": 1}]"},
    {"{}",
     "{\"$sortArray\": {\"input\": [{\"a\": {\"b\": 2}}, {\"a\": {\"b\": 1}}], \"sortBy\": {\"a.b\": 1}}}",
     "[{\"a\": {\"b\": 1}}, {\"a\": {\"b\": 2}}]"},
    {"{}", "{\"$sortArray\": {\"input\": [], \"sortBy\": 1}}", "[]"},
    /* null and wrong types */
    {"{}", "{\"$sortArray\": {\"input\": null, \"sortBy\": 1}}", "null"},
    {"{}", "{\"$sortArray\": {\"input\": \"$nope\", \"sortBy\": 1}}", "null"},
    {"{}",
     "{\"$sortArray\": {\"input\": \"abc\", \"sortBy\": 1}}",
     "ERROR:$sortArray: its input must be an array, not the string"},
    {"{}", "{\"$sortArray\": {\"input\": [1], \"sortBy\": 0}}", "PARSE:'sortBy' must be 1, -1"},
    {"{}", "{\"$sortArray\": {\"input\": [1], \"sortBy\": \"a\"}}", "PARSE:'sortBy' must be 1, -1"},
    {"{}", "{\"$sortArray\": {\"input\": [1], \"sortBy\": {}}}", "PARSE:needs at least one field"},
    {"{}", "{\"$sortArray\": {\"input\": [1], \"sortBy\": {\"a\": 2}}}", "PARSE:must be 1 or -1"},
    {"{}", "{\"$sortArray\": {\"input\": [1], \"sortBy\": {\"a..b\": 1}}}", "PARSE:not a valid field path"},
    {"{}", "{\"$sortArray\": {\"input\": [1]}}", "PARSE:missing the required argument 'sortBy'"},
    {"{}", "{\"$sortArray\": {\"sortBy\": 1}}", "PARSE:missing the required argument 'input'"},
    {"{}", "{\"$sortArray\": {\"input\": [1], \"sortBy\": 1, \"x\": 1}}", "PARSE:unknown argument 'x'"},
    {"{}", "{\"$sortArray\": [1]}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

static const x_case_t ns[] = {
    /* MongoDB's documentation of $firstN, $lastN, $maxN, $minN (array operators) */
    {"{\"score\": [1, 2, 3]}", "{\"$firstN\": {\"n\": 3, \"input\": \"$score\"}}", "[1, 2, 3]"},
    {"{\"score\": [12, 90, 7, 89, 8]}", "{\"$firstN\": {\"n\": 3, \"input\": \"$score\"}}", "[12, 90, 7]"},
    {"{\"score\": [null]}", "{\"$firstN\": {\"n\": 3, \"input\": \"$score\"}}", "[null]"},
    {"{\"score\": []}", "{\"$firstN\": {\"n\": 3, \"input\": \"$score\"}}", "[]"},
    {"{\"score\": [1293, null, 3489, 9]}",
     "{\"$firstN\": {\"n\": 3, \"input\": \"$score\"}}",
     "[1293, null, 3489]"},
    {"{\"score\": [\"12.1\", 2, {\"$numberLong\": \"2090845886852\"}, 23]}",
     "{\"$firstN\": {\"n\": 3, \"input\": \"$score\"}}",
     "[\"12.1\", 2, {\"$numberLong\": \"2090845886852\"}]"},
    {"{\"score\": [1, 2, 3]}", "{\"$lastN\": {\"n\": 3, \"input\": \"$score\"}}", "[1, 2, 3]"},
    {"{\"score\": [12, 90, 7, 89, 8]}", "{\"$lastN\": {\"n\": 3, \"input\": \"$score\"}}", "[7, 89, 8]"},
    {"{\"score\": [null]}", "{\"$lastN\": {\"n\": 3, \"input\": \"$score\"}}", "[null]"},
    {"{\"score\": []}", "{\"$lastN\": {\"n\": 3, \"input\": \"$score\"}}", "[]"},
    {"{\"score\": [1293, null, 3489, 9]}",
     "{\"$lastN\": {\"n\": 3, \"input\": \"$score\"}}",
     "[null, 3489, 9]"},
    {"{\"score\": [\"12.1\", 2, {\"$numberLong\": \"2090845886852\"}, 23]}",
     "{\"$lastN\": {\"n\": 3, \"input\": \"$score\"}}",
     "[2, {\"$numberLong\": \"2090845886852\"}, 23]"},
    {"{\"score\": [1, 2, 3]}", "{\"$maxN\": {\"n\": 2, \"input\": \"$score\"}}", "[3, 2]"},
    {"{\"score\": [12, 90, 7, 89, 8]}", "{\"$maxN\": {\"n\": 2, \"input\": \"$score\"}}", "[90, 89]"},
    {"{\"score\": [null]}", "{\"$maxN\": {\"n\": 2, \"input\": \"$score\"}}", "[]"},
    {"{\"score\": []}", "{\"$maxN\": {\"n\": 2, \"input\": \"$score\"}}", "[]"},
    {"{\"score\": [1293, null, 3489, 9]}", "{\"$maxN\": {\"n\": 2, \"input\": \"$score\"}}", "[3489, 1293]"},
    {"{\"score\": [\"12.1\", 2, {\"$numberLong\": \"2090845886852\"}, 23]}",
     "{\"$maxN\": {\"n\": 2, \"input\": \"$score\"}}",
     "[\"12.1\", {\"$numberLong\": \"2090845886852\"}]"},
    {"{\"score\": [1, 2, 3]}", "{\"$minN\": {\"n\": 2, \"input\": \"$score\"}}", "[1, 2]"},
    {"{\"score\": [12, 90, 7, 89, 8]}", "{\"$minN\": {\"n\": 2, \"input\": \"$score\"}}", "[7, 8]"},
    {"{\"score\": [null]}", "{\"$minN\": {\"n\": 2, \"input\": \"$score\"}}", "[]"},
    {"{\"score\": []}", "{\"$minN\": {\"n\": 2, \"input\": \"$score\"}}", "[]"},
    {"{\"score\": [1293, null, 3489, 9]}", "{\"$minN\": {\"n\": 2, \"input\": \"$score\"}}", "[9, 1293]"},
    {"{\"score\": [\"12.1\", 2, {\"$numberLong\": \"2090845886852\"}, 23]}",
     "{\"$minN\": {\"n\": 2, \"input\": \"$score\"}}",
     "[2, 23]"},
    /* n: an integral number (of any numeric type), at least 1 */
    {"{}", "{\"$firstN\": {\"n\": 2.0, \"input\": [1, 2, 3]}}", "[1, 2]"},
    {"{}", "{\"$lastN\": {\"n\": {\"$numberLong\": \"5\"}, \"input\": [1, 2, 3]}}", "[1, 2, 3]"},
    {"{}", "{\"$maxN\": {\"n\": 1, \"input\": [{\"$undefined\": true}, null, \"a\", 1]}}", "[\"a\"]"},
    {"{}", "{\"$minN\": {\"n\": 5, \"input\": [[2], {\"a\": 1}, 1, \"a\"]}}", "[1, \"a\", {\"a\": 1}, [2]]"},
    {"{}", "{\"$firstN\": {\"n\": 0, \"input\": [1]}}", "ERROR:$firstN: 'n' must be greater than 0"},
    {"{}", "{\"$lastN\": {\"n\": -2, \"input\": [1]}}", "ERROR:'n' must be greater than 0"},
    {"{}", "{\"$maxN\": {\"n\": 1.5, \"input\": [1]}}", "ERROR:'n' must be an integer, not the double 1.5"},
    {"{}", "{\"$minN\": {\"n\": \"a\", \"input\": [1]}}", "ERROR:'n' must be an integer"},
    {"{}", "{\"$firstN\": {\"n\": null, \"input\": [1]}}", "ERROR:'n' must be an integer, not null"},
    {"{}", "{\"$firstN\": {\"n\": \"$nope\", \"input\": [1]}}", "ERROR:'n' must be an integer"},
    /* the input must be an array: null and missing are errors here */
    {"{}",
     "{\"$firstN\": {\"n\": 1, \"input\": null}}",
     "ERROR:$firstN: its input must be an array, not null"},
    {"{}",
     "{\"$lastN\": {\"n\": 1, \"input\": \"$nope\"}}",
     "ERROR:its input must be an array, but it is missing"},
    {"{}", "{\"$maxN\": {\"n\": 1, \"input\": 5}}", "ERROR:its input must be an array"},
    {"{}", "{\"$firstN\": {\"n\": 0, \"input\": 5}}", "ERROR:'n' must be greater than 0"},
    {"{}", "{\"$firstN\": {\"n\": 1}}", "PARSE:missing the required argument 'input'"},
    {"{}", "{\"$minN\": {\"input\": [1]}}", "PARSE:missing the required argument 'n'"},
    {"{}", "{\"$lastN\": {\"n\": 1, \"input\": [1], \"x\": 1}}", "PARSE:unknown argument 'x'"},
    {"{}", "{\"$maxN\": [1, 2]}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

/* The server's expectations (map.js): a missing result is null in the
 * array, "as" may rebind CURRENT but not ROOT, a null input is null. */
#define MAP_DOC "{\"simple\": [1, 2, 3, 4], \"nested\": [{\"a\": 1}, {\"a\": 2}], \"mixed\": [{\"a\": 1}, {}, {\"a\": 2}, {\"a\": null}], \"notArray\": 1, \"null\": null}"
static const x_case_t maps_server[] = {
    {MAP_DOC, "{\"$map\": {\"input\": \"$simple\", \"as\": \"var\", \"in\": \"$$var\"}}",
     "[1, 2, 3, 4]"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$simple\", \"as\": \"var\", \"in\": {\"$add\": [10, \"$$var\"]}}}",
     "[11, 12, 13, 14]"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$simple\", \"in\": \"$$this\"}}",
     "[1, 2, 3, 4]"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$nested\", \"as\": \"var\", \"in\": \"$$var.a\"}}",
     "[1, 2]"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$nested\", \"as\": \"CURRENT\", \"in\": \"$a\"}}",
     "[1, 2]"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$mixed\", \"as\": \"var\", \"in\": \"$$var.a\"}}",
     "[1, null, 2, null]"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$null\", \"as\": \"var\", \"in\": \"$$var\"}}",
     "null"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$mixed\", \"in\": \"$$this.b\"}}",
     "[null, null, null, null]"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$nope\", \"in\": \"$$this\"}}",
     "null"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$simple\", \"as\": \"ROOT\", \"in\": \"$$ROOT\"}}", "PARSE:"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$notArray\", \"as\": \"var\", \"in\": \"$$var\"}}", "ERROR:"},
    {MAP_DOC, "{\"$map\": {\"x\": 1, \"input\": \"$simple\", \"as\": \"var\", \"in\": \"$$var\"}}", "PARSE:"},
    {MAP_DOC, "{\"$map\": {\"as\": \"var\", \"in\": \"$$var\"}}", "PARSE:"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$simple\", \"as\": \"var\"}}", "PARSE:"},
    {MAP_DOC, "{\"$map\": {\"input\": \"$simple\", \"in\": \"$$var\"}}", "PARSE:"},
    /* CURRENT is the document's again after the loop; $filter's "as" too */
    {MAP_DOC, "[{\"$map\": {\"input\": \"$nested\", \"as\": \"CURRENT\", \"in\": \"$a\"}}, \"$notArray\"]", "[[1, 2], 1]"},
    {MAP_DOC, "{\"$filter\": {\"input\": \"$mixed\", \"as\": \"CURRENT\", \"cond\": \"$a\"}}", "[{\"a\": 1}, {\"a\": 2}]"},
    {NULL, NULL, NULL},
};

X_TABLE_TEST (test_array_elem_at, elem_at)
X_TABLE_TEST (test_array_first_last, first_last)
X_TABLE_TEST (test_array_sizes, sizes)
X_TABLE_TEST (test_array_slices, slices)
X_TABLE_TEST (test_array_concats, concats)
X_TABLE_TEST (test_array_maps, maps)
X_TABLE_TEST (test_array_maps_server, maps_server)
X_TABLE_TEST (test_array_filters, filters)
X_TABLE_TEST (test_array_reduces, reduces)
X_TABLE_TEST (test_array_indexes, indexes)
X_TABLE_TEST (test_array_reverses, reverses)
X_TABLE_TEST (test_array_ranges, ranges)
X_TABLE_TEST (test_array_zips, zips)
X_TABLE_TEST (test_array_ins, ins)
X_TABLE_TEST (test_array_sorts, sorts)
X_TABLE_TEST (test_array_ns, ns)

/* Once warmed, evaluating allocates nothing: the operators that build,
 * sort and bind variables over the same document after a reset. */
/* One document's values are bounded as a whole (rm_expr_ctx_set_memory):
 * a reduce appending 32 KiB 64 times holds 2 MiB at its end, refused
 * under a bound of 1 MiB with the operator named, the next document
 * evaluated afresh after the reset; under 8 MiB it is computed, each
 * iteration's scratch given back. */
static void
test_array_memory_bound (void)
{
    size_t n = 32 * 1024;
    char *lit = bson_malloc (n + 1), *json = bson_malloc (n + 400);
    bson_error_t err;
    bson_value_t out;
    bson_iter_t it;
    bson_t *ex;
    rm_expr_t *e;
    rm_expr_ctx_t *cx;
    static const uint8_t empty[5] = {5, 0, 0, 0, 0};

    memset (lit, 'x', n);
    lit[n] = '\0';
    snprintf (json, n + 400,
              "{\"e\": {\"$strLenBytes\": {\"$reduce\": {\"input\": {\"$range\": [0, 64]}, "
              "\"initialValue\": \"\", \"in\": {\"$concat\": [\"$$value\", \"%s\"]}}}}}",
              lit);
    ex = bson_new_from_json ((const uint8_t *) json, -1, &err);
    T_CHECK (ex != NULL);
    bson_iter_init_find (&it, ex, "e");
    e = rm_expr_parse (&it, &err);
    T_CHECK (e != NULL);
    cx = rm_expr_ctx_new (X_NOW);
    rm_expr_ctx_set_memory (cx, (size_t) 1 << 20);
    T_CHECK (!rm_expr_eval (cx, e, empty, 5, &out, &err));
    T_CHECK (err.code == RM_ERR_DATA);
    T_CHECK (strstr (err.message, "pass 1 MiB of memory") != NULL);
    T_CHECK (strstr (err.message, "$reduce: ") != NULL || strstr (err.message, "$concat: ") != NULL);
    rm_expr_ctx_reset (cx);
    rm_expr_ctx_set_memory (cx, (size_t) 8 << 20);
    T_CHECK (rm_expr_eval (cx, e, empty, 5, &out, &err));
    T_CHECK (out.value_type == BSON_TYPE_INT32 && out.value.v_int32 == 64 * 32 * 1024);
    rm_expr_ctx_destroy (cx);
    rm_expr_destroy (e);
    bson_destroy (ex);
    bson_free (lit);
    bson_free (json);
}

static void
test_array_no_alloc_when_warm (void)
{
    const char *expr = "[{\"$map\": {\"input\": \"$a\", \"as\": \"x\", \"in\": {\"$filter\": {\"input\": "
                       "\"$$x.v\", \"cond\": {\"$gt\": [\"$$this\", 1]}}}}}, {\"$sortArray\": {\"input\": \"$a\", "
                       "\"sortBy\": {\"k\": -1}}}, {\"$reduce\": {\"input\": \"$a.v\", \"initialValue\": [], \"in\": "
                       "{\"$concatArrays\": [\"$$value\", \"$$this\"]}}}, {\"$zip\": {\"inputs\": [\"$a\", {\"$range\": "
                       "[0, 5]}], \"useLongestLength\": true}}, {\"$maxN\": {\"n\": 2, \"input\": \"$a.k\"}}, "
                       "{\"$indexOfArray\": [\"$a.k\", 2]}, {\"$in\": [3, \"$a.k\"]}, {\"$slice\": [\"$a\", -2, 1]}]";
    const char *doc = "{\"a\": [{\"k\": 1, \"v\": [1, 2, 3]}, {\"k\": 3, \"v\": [4]}, {\"k\": 2, "
                      "\"v\": []}]}";

    T_CHECK (x_no_alloc_when_warm (doc, expr, BSON_TYPE_ARRAY) == 0);
}

int
main (void)
{
    T_RUN (test_array_elem_at);
    T_RUN (test_array_first_last);
    T_RUN (test_array_sizes);
    T_RUN (test_array_slices);
    T_RUN (test_array_concats);
    T_RUN (test_array_maps);
    T_RUN (test_array_maps_server);
    T_RUN (test_array_filters);
    T_RUN (test_array_reduces);
    T_RUN (test_array_indexes);
    T_RUN (test_array_reverses);
    T_RUN (test_array_ranges);
    T_RUN (test_array_zips);
    T_RUN (test_array_ins);
    T_RUN (test_array_sorts);
    T_RUN (test_array_ns);
    T_RUN (test_array_memory_bound);
    T_RUN (test_array_no_alloc_when_warm);
    return t_done ();
}
