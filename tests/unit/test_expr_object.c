/* The object and set operators (common/expr/expr_object.c):
 * $objectToArray, $arrayToObject, $mergeObjects, $getField, $setField,
 * $unsetField, $bsonSize, $binarySize, $setUnion, $setIntersection,
 * $setDifference, $setEquals, $setIsSubset, $allElementsTrue,
 * $anyElementTrue. Cases from MongoDB's documentation of each operator
 * (its stated inputs and outputs), then null, missing, wrong types and
 * edge cases as the server's evaluators have them. Where the server's
 * order of a set is not documented, the case compares with $setEquals. */
#include <stdlib.h>

#include "expr_case.h"

static const x_case_t object_to_array[] = {
    /* MongoDB's documentation of $objectToArray */
    {"{\"item\": \"ABC1\", \"dimensions\": {\"l\": 25, \"w\": 10, \"uom\": \"cm\"}}",
     "{\"$objectToArray\": \"$dimensions\"}",
     "[{\"k\": \"l\", \"v\": 25}, {\"k\": \"w\", \"v\": 10}, {\"k\": \"uom\", \"v\": \"cm\"}]"},
    {"{\"item\": \"ABC2\", \"dimensions\": {\"l\": 50, \"w\": 25, \"uom\": \"cm\"}}",
     "{\"$objectToArray\": \"$dimensions\"}",
     "[{\"k\": \"l\", \"v\": 50}, {\"k\": \"w\", \"v\": 25}, {\"k\": \"uom\", \"v\": \"cm\"}]"},
    {"{\"item\": \"XYZ1\", \"dimensions\": {\"l\": 70, \"w\": 75, \"uom\": \"cm\"}}",
     "{\"$objectToArray\": \"$dimensions\"}",
     "[{\"k\": \"l\", \"v\": 70}, {\"k\": \"w\", \"v\": 75}, {\"k\": \"uom\", \"v\": \"cm\"}]"},
    {"{\"instock\": {\"warehouse1\": 2500, \"warehouse2\": 500}}",
     "{\"$objectToArray\": \"$instock\"}",
     "[{\"k\": \"warehouse1\", \"v\": 2500}, {\"k\": \"warehouse2\", \"v\": 500}]"},
    {"{\"a\": 1, \"b\": \"x\"}",
     "{\"$objectToArray\": \"$$ROOT\"}",
     "[{\"k\": \"a\", \"v\": 1}, {\"k\": \"b\", \"v\": \"x\"}]"},
    /* values stay as they are, nested documents and arrays too */
    {"{}",
     "{\"$objectToArray\": {\"$literal\": {\"a\": {\"b\": [1, {\"c\": null}]}, \"a.b\": 2}}}",
     "[{\"k\": \"a\", \"v\": {\"b\": [1, {\"c\": null}]}}, {\"k\": \"a.b\", \"v\": 2}]"},
    {"{}", "{\"$objectToArray\": {\"$literal\": {}}}", "[]"},
    {"{}", "{\"$objectToArray\": null}", "null"},
    {"{}", "{\"$objectToArray\": \"$nope\"}", "null"},
    {"{}",
     "{\"$objectToArray\": [[1]]}",
     "ERROR:$objectToArray: its argument must be a document, not the array [1]"},
    {"{}", "{\"$objectToArray\": \"abc\"}", "ERROR:must be a document, not the string"},
    {"{}", "{\"$objectToArray\": [1, 2]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

static const x_case_t array_to_object[] = {
    /* MongoDB's documentation of $arrayToObject */
    {"{\"qty\": 25}",
     "{\"$arrayToObject\": [[{\"k\": \"item\", \"v\": \"abc123\"}, {\"k\": \"qty\", \"v\": \"$qty\"}]]}",
     "{\"item\": \"abc123\", \"qty\": 25}"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [[\"item\", \"abc123\"], [\"qty\", 25]]}}",
     "{\"item\": \"abc123\", \"qty\": 25}"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [{\"k\": \"item\", \"v\": \"123abc\"}, {\"k\": \"item\", \"v\": \"abc123\"}]}}",
     "{\"item\": \"abc123\"}"},
    {"{\"dimensions\": [{\"k\": \"l\", \"v\": 25}, {\"k\": \"w\", \"v\": 10}, {\"k\": \"uom\", \"v\": \"cm\"}]}",
     "{\"$arrayToObject\": \"$dimensions\"}",
     "{\"l\": 25, \"w\": 10, \"uom\": \"cm\"}"},
    {"{\"dimensions\": [[\"l\", 50], [\"w\", 25], [\"uom\", \"cm\"]]}",
     "{\"$arrayToObject\": \"$dimensions\"}",
     "{\"l\": 50, \"w\": 25, \"uom\": \"cm\"}"},
    {"{\"dimensions\": [[\"l\", 25], [\"l\", \"cm\"], [\"l\", 50]]}",
     "{\"$arrayToObject\": \"$dimensions\"}",
     "{\"l\": 50}"},
    /* a repeated key keeps its first place and takes its last value */
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [[\"a\", 1], [\"b\", 2], [\"a\", 3]]}}",
     "{\"a\": 3, \"b\": 2}"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [{\"v\": 1, \"k\": \"b\"}, {\"k\": \"a\", \"v\": null}, {\"k\": \"b\", \"v\": [2]}]}}",
     "{\"b\": [2], \"a\": null}"},
    /* keys may hold dots or start with a dollar */
    {"{}", "{\"$arrayToObject\": {\"$literal\": [[\"a.b\", 1], [\"$c\", 2]]}}", "{\"a.b\": 1, \"$c\": 2}"},
    /* round trip with $objectToArray */
    {"{\"d\": {\"x\": 1, \"y\": {\"z\": 2}}}",
     "{\"$arrayToObject\": {\"$objectToArray\": \"$d\"}}",
     "{\"x\": 1, \"y\": {\"z\": 2}}"},
    {"{}", "{\"$arrayToObject\": {\"$literal\": []}}", "{}"},
    {"{}", "{\"$arrayToObject\": null}", "null"},
    {"{}", "{\"$arrayToObject\": \"$nope\"}", "null"},
    /* the first element says which form; mixing them is an error */
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [[\"a\", 1], {\"k\": \"b\", \"v\": 2}]}}",
     "ERROR:$arrayToObject: its elements must be all [key, value] arrays or all {k, v} documents"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [{\"k\": \"b\", \"v\": 2}, [\"a\", 1]]}}",
     "ERROR:the first is a document, then comes the array"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [1]}}",
     "ERROR:each element must be a [key, value] array or a {k, v} document, not the int 1"},
    {"{}", "{\"$arrayToObject\": {\"$literal\": [[\"a\"]]}}", "ERROR:must have 2 elements, not 1"},
    {"{}", "{\"$arrayToObject\": {\"$literal\": [[\"a\", 1, 2]]}}", "ERROR:must have 2 elements, not 3"},
    {"{}", "{\"$arrayToObject\": {\"$literal\": [[1, 2]]}}", "ERROR:a key must be a string, not the int 1"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [{\"k\": \"a\"}]}}",
     "ERROR:exactly the fields k and v, not 1 field"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [{\"k\": \"a\", \"v\": 1, \"x\": 2}]}}",
     "ERROR:not 3 fields"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [{\"k\": \"a\", \"x\": 1}]}}",
     "ERROR:must have the fields k and v"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": [{\"k\": null, \"v\": 1}]}}",
     "ERROR:a key must be a string, not null"},
    {"{}", "{\"$arrayToObject\": \"abc\"}", "ERROR:its argument must be an array, not the string"},
    {"{}",
     "{\"$arrayToObject\": {\"$literal\": {\"a\": 1}}}",
     "ERROR:its argument must be an array, not the object"},
    {NULL, NULL, NULL},
};

static const x_case_t merges[] = {
    /* MongoDB's documentation of $mergeObjects */
    {"{}", "{\"$mergeObjects\": [{\"a\": 1}, null]}", "{\"a\": 1}"},
    {"{}", "{\"$mergeObjects\": [null, null]}", "{}"},
    {"{}",
     "{\"$mergeObjects\": [{\"a\": 1}, {\"a\": 2, \"b\": 2}, {\"a\": 3, \"c\": 3}]}",
     "{\"a\": 3, \"b\": 2, \"c\": 3}"},
    {"{}",
     "{\"$mergeObjects\": [{\"a\": 1}, {\"a\": 2, \"b\": 2}, {\"a\": 3, \"b\": null, \"c\": 3}]}",
     "{\"a\": 3, \"b\": null, \"c\": 3}"},
    {"{\"item\": \"almonds\", \"price\": 12, \"ordered\": 2, \"fromItems\": [{\"item\": \"almonds\", \"description\": \"almond clusters\", \"instock\": 120}]}",
     "{\"$mergeObjects\": [{\"$arrayElemAt\": [\"$fromItems\", 0]}, \"$$ROOT\"]}",
     "{\"item\": \"almonds\", \"description\": \"almond clusters\", \"instock\": 120, \"price\": 12, \"ordered\": 2, \"fromItems\": [{\"item\": \"almonds\", \"description\": \"almond clusters\", \"instock\": 120}]}"},
    /* one argument that is an array: its documents are merged */
    {"{\"quantity\": [{\"2017Q1\": 500, \"2017Q2\": 500}, {\"2016Q1\": 400}, {\"2017Q1\": 300}, null]}",
     "{\"$mergeObjects\": \"$quantity\"}",
     "{\"2017Q1\": 300, \"2017Q2\": 500, \"2016Q1\": 400}"},
    {"{}", "{\"$mergeObjects\": [[{\"a\": 1}, {\"b\": 2}]]}", "{\"a\": 1, \"b\": 2}"},
    {"{}", "{\"$mergeObjects\": {\"$literal\": []}}", "{}"},
    /* null and missing are skipped; no argument makes {} */
    {"{}", "{\"$mergeObjects\": []}", "{}"},
    {"{}", "{\"$mergeObjects\": \"$nope\"}", "{}"},
    {"{}",
     "{\"$mergeObjects\": [{\"a\": 1}, \"$nope\", {\"$literal\": {\"b\": {\"$x\": 1}}}]}",
     "{\"a\": 1, \"b\": {\"$x\": 1}}"},
    {"{}", "{\"$mergeObjects\": [{\"a\": {\"x\": 1}}, {\"a\": {\"y\": 2}}]}", "{\"a\": {\"y\": 2}}"},
    /* anything else not a document is an error */
    {"{}",
     "{\"$mergeObjects\": [{\"a\": 1}, \"x\"]}",
     "ERROR:$mergeObjects: each input must be a document, not the string \"x\""},
    {"{}", "{\"$mergeObjects\": [[], []]}", "ERROR:each input must be a document, not the array []"},
    {"{}", "{\"$mergeObjects\": [[{\"a\": 1}, 5]]}", "ERROR:not the int 5"},
    {"{}", "{\"$mergeObjects\": \"x\"}", "ERROR:not the string"},
    {NULL, NULL, NULL},
};

static const x_case_t get_fields[] = {
    /* MongoDB's documentation of $getField */
    {"{\"item\": \"sweatshirt\", \"price.usd\": 45.99, \"qty\": 300}",
     "{\"$getField\": \"price.usd\"}",
     "45.99"},
    {"{\"item\": \"sweatshirt\", \"price.usd\": 45.99, \"qty\": 300}",
     "{\"$getField\": {\"field\": \"price.usd\", \"input\": \"$$CURRENT\"}}",
     "45.99"},
    {"{\"item\": \"winter coat\", \"price.usd\": 499.99, \"qty\": 200}",
     "{\"$gt\": [{\"$getField\": \"price.usd\"}, 200]}",
     "true"},
    {"{\"item\": \"sweatshirt\", \"$price\": 45.99, \"qty\": 300}",
     "{\"$getField\": {\"$literal\": \"$price\"}}",
     "45.99"},
    {"{\"item\": \"sweatshirt\", \"quantity\": {\"$large\": 50, \"$medium\": 50, \"$small\": 25}}",
     "{\"$getField\": {\"field\": {\"$literal\": \"$small\"}, \"input\": \"$quantity\"}}",
     "25"},
    /* a missing field is missing; the input: missing gives missing, null null, a non-document missing */
    {"{\"a\": 1}", "{\"$getField\": \"b\"}", "MISSING"},
    {"{}", "{\"$getField\": {\"field\": \"a\", \"input\": \"$nope\"}}", "MISSING"},
    {"{}", "{\"$getField\": {\"field\": \"a\", \"input\": null}}", "null"},
    {"{}", "{\"$getField\": {\"field\": \"a\", \"input\": 5}}", "MISSING"},
    {"{}", "{\"$getField\": {\"field\": \"a\", \"input\": [{\"a\": 1}]}}", "MISSING"},
    {"{}", "{\"$getField\": {\"field\": \"a\", \"input\": {\"a\": {\"b\": 2}}}}", "{\"b\": 2}"},
    {"{}",
     "{\"$getField\": {\"field\": \"a.b\", \"input\": {\"$literal\": {\"a\": {\"b\": 2}}}}}",
     "MISSING"},
    /* the field may be an expression that gives a string (MongoDB 7.2 on) */
    {"{\"names\": [\"x\"], \"x\": 7}",
     "{\"$getField\": {\"field\": {\"$arrayElemAt\": [\"$names\", 0]}, \"input\": \"$$ROOT\"}}",
     "7"},
    {"{}",
     "{\"$getField\": {\"field\": {\"$arrayElemAt\": [[1], 0]}, \"input\": {}}}",
     "ERROR:$getField: 'field' must be a string, not the int 1"},
    {"{}",
     "{\"$getField\": {\"field\": {\"$arrayElemAt\": [[], 0]}, \"input\": {}}}",
     "ERROR:'field' must be a string, but it is missing"},
    /* a field path or a variable is refused: write $literal */
    {"{}", "{\"$getField\": \"$a\"}", "PARSE:$getField: 'field' is a field path or variable"},
    {"{}",
     "{\"$getField\": {\"field\": \"$a\", \"input\": {}}}",
     "PARSE:'field' is a field path or variable"},
    {"{}",
     "{\"$getField\": {\"field\": \"$$ROOT\", \"input\": {}}}",
     "PARSE:'field' is a field path or variable"},
    {"{}", "{\"$getField\": 5}", "PARSE:'field' must be a string, not int"},
    {"{}", "{\"$getField\": {\"field\": null, \"input\": {}}}", "PARSE:'field' must be a string, not null"},
    {"{}", "{\"$getField\": {\"input\": {}}}", "PARSE:missing the required argument 'field'"},
    {"{}", "{\"$getField\": {\"field\": \"a\", \"x\": 1}}", "PARSE:unknown argument 'x'"},
    {NULL, NULL, NULL},
};

static const x_case_t set_fields[] = {
    /* MongoDB's documentation of $setField */
    {"{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price\": 45.99}",
     "{\"$setField\": {\"field\": \"price.usd\", \"input\": \"$$ROOT\", \"value\": \"$price\"}}",
     "{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price\": 45.99, \"price.usd\": 45.99}"},
    {"{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price\": 45.99}",
     "{\"$setField\": {\"field\": {\"$literal\": \"$price\"}, \"input\": \"$$ROOT\", \"value\": \"$price\"}}",
     "{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price\": 45.99, \"$price\": 45.99}"},
    {"{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price.usd\": 45.99}",
     "{\"$setField\": {\"field\": \"price.usd\", \"input\": \"$$ROOT\", \"value\": 49.99}}",
     "{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price.usd\": 49.99}"},
    {"{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price.usd\": 45.99}",
     "{\"$setField\": {\"field\": \"price.usd\", \"input\": \"$$ROOT\", \"value\": \"$$REMOVE\"}}",
     "{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300}"},
    {"{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"$price\": 45.99}",
     "{\"$setField\": {\"field\": {\"$literal\": \"$price\"}, \"input\": \"$$ROOT\", \"value\": \"$$REMOVE\"}}",
     "{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300}"},
    /* in place, appended, or removed; a missing value removes */
    {"{}",
     "{\"$setField\": {\"field\": \"a\", \"input\": {\"a\": 1, \"b\": 2}, \"value\": 5}}",
     "{\"a\": 5, \"b\": 2}"},
    {"{}",
     "{\"$setField\": {\"field\": \"c\", \"input\": {\"a\": 1, \"b\": 2}, \"value\": [1]}}",
     "{\"a\": 1, \"b\": 2, \"c\": [1]}"},
    {"{}",
     "{\"$setField\": {\"field\": \"a\", \"input\": {\"a\": 1, \"b\": 2}, \"value\": \"$nope\"}}",
     "{\"b\": 2}"},
    {"{}",
     "{\"$setField\": {\"field\": \"z\", \"input\": {\"a\": 1}, \"value\": \"$$REMOVE\"}}",
     "{\"a\": 1}"},
    {"{}", "{\"$setField\": {\"field\": \"a\", \"input\": {\"a\": 1}, \"value\": null}}", "{\"a\": null}"},
    {"{}", "{\"$setField\": {\"field\": \"\", \"input\": {}, \"value\": 1}}", "{\"\": 1}"},
    /* the input: null or missing gives null, another non-document an error */
    {"{}", "{\"$setField\": {\"field\": \"a\", \"input\": null, \"value\": 1}}", "null"},
    {"{}", "{\"$setField\": {\"field\": \"a\", \"input\": \"$nope\", \"value\": 1}}", "null"},
    {"{}",
     "{\"$setField\": {\"field\": \"a\", \"input\": 5, \"value\": 1}}",
     "ERROR:$setField: 'input' must be a document, not the int 5"},
    /* the field: a constant string only */
    {"{}",
     "{\"$setField\": {\"field\": \"$a\", \"input\": {}, \"value\": 1}}",
     "PARSE:'field' is a field path or variable"},
    {"{}",
     "{\"$setField\": {\"field\": 1, \"input\": {}, \"value\": 1}}",
     "PARSE:'field' must be a string, not int"},
    {"{}",
     "{\"$setField\": {\"field\": {\"$arrayElemAt\": [[\"a\"], 0]}, \"input\": {}, \"value\": 1}}",
     "PARSE:'field' must be a constant string"},
    {"{}",
     "{\"$setField\": {\"field\": \"a\", \"input\": {}}}",
     "PARSE:missing the required argument 'value'"},
    {"{}",
     "{\"$setField\": {\"field\": \"a\", \"value\": 1}}",
     "PARSE:missing the required argument 'input'"},
    {"{}", "{\"$setField\": {\"input\": {}, \"value\": 1}}", "PARSE:missing the required argument 'field'"},
    {"{}",
     "{\"$setField\": {\"field\": \"a\", \"input\": {}, \"value\": 1, \"x\": 1}}",
     "PARSE:unknown argument 'x'"},
    {"{}", "{\"$setField\": \"a\"}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

static const x_case_t unset_fields[] = {
    /* MongoDB's documentation of $unsetField */
    {"{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"price.usd\": 45.99}",
     "{\"$unsetField\": {\"field\": \"price.usd\", \"input\": \"$$ROOT\"}}",
     "{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300}"},
    {"{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300, \"$price\": 45.99}",
     "{\"$unsetField\": {\"field\": {\"$literal\": \"$price\"}, \"input\": \"$$ROOT\"}}",
     "{\"_id\": 1, \"item\": \"sweatshirt\", \"qty\": 300}"},
    {"{\"_id\": 3, \"item\": \"sweatshirt\", \"qty\": 300, \"price\": {\"usd\": 45.99, \"euro\": 38.77}}",
     "{\"$setField\": {\"field\": \"price\", \"input\": \"$$ROOT\", \"value\": {\"$unsetField\": {\"field\": \"euro\", \"input\": {\"$getField\": \"price\"}}}}}",
     "{\"_id\": 3, \"item\": \"sweatshirt\", \"qty\": 300, \"price\": {\"usd\": 45.99}}"},
    {"{}", "{\"$unsetField\": {\"field\": \"z\", \"input\": {\"a\": 1}}}", "{\"a\": 1}"},
    {"{}", "{\"$unsetField\": {\"field\": \"a\", \"input\": null}}", "null"},
    {"{}",
     "{\"$unsetField\": {\"field\": \"a\", \"input\": [1]}}",
     "ERROR:$unsetField: 'input' must be a document, not the array"},
    {"{}",
     "{\"$unsetField\": {\"field\": \"a\", \"input\": {}, \"value\": 1}}",
     "PARSE:unknown argument 'value'"},
    {"{}", "{\"$unsetField\": {\"field\": \"a\"}}", "PARSE:missing the required argument 'input'"},
    {"{}",
     "{\"$unsetField\": {\"field\": \"$$ROOT\", \"input\": {}}}",
     "PARSE:'field' is a field path or variable"},
    {NULL, NULL, NULL},
};

static const x_case_t sizes[] = {
    /* MongoDB's documentation of $bsonSize and $binarySize */
    {"{\"a\": 1}", "{\"$bsonSize\": \"$$ROOT\"}", "12"},
    {"{}", "{\"$bsonSize\": {\"$literal\": {}}}", "5"},
    {"{}", "{\"$bsonSize\": {\"$literal\": {\"a\": \"b\"}}}", "14"},
    {"{\"d\": {\"x\": [1, 2]}}", "{\"$bsonSize\": \"$d\"}", "27"},
    {"{}", "{\"$bsonSize\": null}", "null"},
    {"{}", "{\"$bsonSize\": \"$nope\"}", "null"},
    {"{}", "{\"$bsonSize\": [[1]]}", "ERROR:$bsonSize: its argument must be a document, not the array"},
    {"{}", "{\"$bsonSize\": \"abc\"}", "ERROR:must be a document, not the string"},
    {"{}", "{\"$binarySize\": \"Hello World!\"}", "12"},
    {"{}", "{\"$binarySize\": \"café\"}", "5"},
    {"{}", "{\"$binarySize\": \"\"}", "0"},
    {"{}", "{\"$binarySize\": {\"$binary\": {\"base64\": \"AAEC\", \"subType\": \"00\"}}}", "3"},
    {"{}", "{\"$binarySize\": null}", "null"},
    {"{}", "{\"$binarySize\": \"$nope\"}", "null"},
    {"{}",
     "{\"$binarySize\": 5}",
     "ERROR:$binarySize: its argument must be a string or binary data, not the int 5"},
    {NULL, NULL, NULL},
};

static const x_case_t unions[] = {
    /* MongoDB's documentation of $setUnion (its results come out in MongoDB's order) */
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\"]}",
     "{\"$setUnion\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"blue\", \"red\", \"blue\"]}",
     "{\"$setUnion\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\", \"green\"]}",
     "{\"$setUnion\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"green\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"green\", \"red\"]}",
     "{\"$setUnion\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"green\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": []}", "{\"$setUnion\": [\"$A\", \"$B\"]}", "[\"blue\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\"], [\"blue\"]]}",
     "{\"$setUnion\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"red\", [\"blue\"], [\"red\"]]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\", \"blue\"]]}",
     "{\"$setUnion\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"red\", [\"red\", \"blue\"]]"},
    {"{\"A\": [], \"B\": []}", "{\"$setUnion\": [\"$A\", \"$B\"]}", "[]"},
    {"{\"A\": [], \"B\": [\"red\"]}", "{\"$setUnion\": [\"$A\", \"$B\"]}", "[\"red\"]"},
    /* equal values are one element: the first met */
    {"{}", "{\"$setUnion\": [[2, 1.0, {\"$numberLong\": \"1\"}], [1, 2.0, 3]]}", "[1.0, 2, 3]"},
    {"{}", "{\"$setUnion\": [[{\"a\": 1}, {\"a\": 1.0}]]}", "[{\"a\": 1}]"},
    {"{}", "{\"$setUnion\": []}", "[]"},
    {"{}", "{\"$setUnion\": [[3, \"a\", null, 1]]}", "[null, 1, 3, \"a\"]"},
    {"{}", "{\"$setUnion\": [[1], null]}", "null"},
    {"{}", "{\"$setUnion\": [[1], \"$nope\"]}", "null"},
    {"{}", "{\"$setUnion\": [null, \"a\"]}", "null"},
    {"{}",
     "{\"$setUnion\": [[1], \"a\"]}",
     "ERROR:$setUnion: its second argument must be an array, not the string"},
    {"{}", "{\"$setUnion\": [[1], [2], 3]}", "ERROR:each argument must be an array, not the int 3"},
    {NULL, NULL, NULL},
};

static const x_case_t intersections[] = {
    /* MongoDB's documentation of $setIntersection */
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\"]}",
     "{\"$setIntersection\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"blue\", \"red\", \"blue\"]}",
     "{\"$setIntersection\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\", \"green\"]}",
     "{\"$setIntersection\": [\"$A\", \"$B\"]}",
     "[\"blue\", \"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"green\", \"red\"]}",
     "{\"$setIntersection\": [\"$A\", \"$B\"]}",
     "[\"red\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": []}", "{\"$setIntersection\": [\"$A\", \"$B\"]}", "[]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\"], [\"blue\"]]}",
     "{\"$setIntersection\": [\"$A\", \"$B\"]}",
     "[]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\", \"blue\"]]}",
     "{\"$setIntersection\": [\"$A\", \"$B\"]}",
     "[]"},
    {"{\"A\": [], \"B\": []}", "{\"$setIntersection\": [\"$A\", \"$B\"]}", "[]"},
    {"{\"A\": [], \"B\": [\"red\"]}", "{\"$setIntersection\": [\"$A\", \"$B\"]}", "[]"},
    {"{}",
     "{\"$setEquals\": [{\"$setIntersection\": [[\"a\", \"b\", \"a\"], [\"b\", \"a\"]]}, [\"b\", \"a\"]]}",
     "true"},
    {"{}", "{\"$setIntersection\": [[\"a\", \"b\"], [[\"a\", \"b\"]]]}", "[]"},
    /* numbers equal by value are one element; each step keeps the smaller set's own */
    {"{}", "{\"$setIntersection\": [[1, 2, 3], [3, 2.0], [2, 5]]}", "[2.0]"},
    {"{}", "{\"$setIntersection\": [[1, 1, 2]]}", "[1, 2]"},
    {"{}", "{\"$setIntersection\": []}", "[]"},
    /* null stops it, even once the intersection is empty */
    {"{}", "{\"$setIntersection\": [[1], [2], null]}", "null"},
    {"{}",
     "{\"$setIntersection\": [[1], [2], \"a\"]}",
     "ERROR:$setIntersection: each argument must be an array, not the string"},
    {"{}", "{\"$setIntersection\": [\"a\", [1]]}", "ERROR:its first argument must be an array"},
    {NULL, NULL, NULL},
};

static const x_case_t differences[] = {
    /* MongoDB's documentation of $setDifference: B minus A */
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\"]}",
     "{\"$setDifference\": [\"$B\", \"$A\"]}",
     "[]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"blue\", \"red\", \"blue\"]}",
     "{\"$setDifference\": [\"$B\", \"$A\"]}",
     "[]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\", \"green\"]}",
     "{\"$setDifference\": [\"$B\", \"$A\"]}",
     "[\"green\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"green\", \"red\"]}",
     "{\"$setDifference\": [\"$B\", \"$A\"]}",
     "[\"green\"]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": []}", "{\"$setDifference\": [\"$B\", \"$A\"]}", "[]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\"], [\"blue\"]]}",
     "{\"$setDifference\": [\"$B\", \"$A\"]}",
     "[[\"red\"], [\"blue\"]]"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\", \"blue\"]]}",
     "{\"$setDifference\": [\"$B\", \"$A\"]}",
     "[[\"red\", \"blue\"]]"},
    {"{\"A\": [], \"B\": []}", "{\"$setDifference\": [\"$B\", \"$A\"]}", "[]"},
    {"{\"A\": [], \"B\": [\"red\"]}", "{\"$setDifference\": [\"$B\", \"$A\"]}", "[\"red\"]"},
    /* the first array's order, each element once */
    {"{}", "{\"$setDifference\": [[3, 1, 2, 1.0, 3], [2]]}", "[3, 1]"},
    {"{}", "{\"$setDifference\": [[\"b\", \"a\", \"b\"], []]}", "[\"b\", \"a\"]"},
    {"{}", "{\"$setDifference\": [[1, 2], [2.0, {\"$numberDecimal\": \"1\"}]]}", "[]"},
    {"{}", "{\"$setDifference\": [null, [1]]}", "null"},
    {"{}", "{\"$setDifference\": [[1], \"$nope\"]}", "null"},
    {"{}", "{\"$setDifference\": [\"a\", null]}", "null"},
    {"{}",
     "{\"$setDifference\": [\"a\", [1]]}",
     "ERROR:$setDifference: its first argument must be an array, not the string"},
    {"{}", "{\"$setDifference\": [[1], 5]}", "ERROR:its second argument must be an array, not the int 5"},
    {"{}", "{\"$setDifference\": [[1]]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t equals[] = {
    /* MongoDB's documentation of $setEquals */
    {"{}", "{\"$setEquals\": [[\"a\", \"b\", \"a\"], [\"b\", \"a\"]]}", "true"},
    {"{}", "{\"$setEquals\": [[\"a\", \"b\"], [[\"a\", \"b\"]]]}", "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\"]}",
     "{\"$setEquals\": [\"$A\", \"$B\"]}",
     "true"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"blue\", \"red\", \"blue\"]}",
     "{\"$setEquals\": [\"$A\", \"$B\"]}",
     "true"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\", \"green\"]}",
     "{\"$setEquals\": [\"$A\", \"$B\"]}",
     "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"green\", \"red\"]}",
     "{\"$setEquals\": [\"$A\", \"$B\"]}",
     "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": []}", "{\"$setEquals\": [\"$A\", \"$B\"]}", "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\"], [\"blue\"]]}",
     "{\"$setEquals\": [\"$A\", \"$B\"]}",
     "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\", \"blue\"]]}",
     "{\"$setEquals\": [\"$A\", \"$B\"]}",
     "false"},
    {"{\"A\": [], \"B\": []}", "{\"$setEquals\": [\"$A\", \"$B\"]}", "true"},
    {"{\"A\": [], \"B\": [\"red\"]}", "{\"$setEquals\": [\"$A\", \"$B\"]}", "false"},
    {"{}", "{\"$setEquals\": [[1, 2], [2.0, 1], [{\"$numberLong\": \"1\"}, 2, 2]]}", "true"},
    {"{}", "{\"$setEquals\": [[1, 2], [1], \"a\"]}", "false"},
    {"{}", "{\"$setEquals\": [[], []]}", "true"},
    /* every argument must be an array: null is an error */
    {"{}", "{\"$setEquals\": [[1], null]}", "ERROR:$setEquals: argument 2 must be an array, not null"},
    {"{}", "{\"$setEquals\": [\"$nope\", [1]]}", "ERROR:argument 1 must be an array, but it is missing"},
    {"{}", "{\"$setEquals\": [[1]]}", "PARSE:at least 2"},
    {NULL, NULL, NULL},
};

static const x_case_t subsets[] = {
    /* MongoDB's documentation of $setIsSubset */
    {"{}", "{\"$setIsSubset\": [[\"a\", \"b\", \"a\"], [\"b\", \"a\"]]}", "true"},
    {"{}", "{\"$setIsSubset\": [[\"a\", \"b\"], [[\"a\", \"b\"]]]}", "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\"]}",
     "{\"$setIsSubset\": [\"$A\", \"$B\"]}",
     "true"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"blue\", \"red\", \"blue\"]}",
     "{\"$setIsSubset\": [\"$A\", \"$B\"]}",
     "true"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"red\", \"blue\", \"green\"]}",
     "{\"$setIsSubset\": [\"$A\", \"$B\"]}",
     "true"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [\"green\", \"red\"]}",
     "{\"$setIsSubset\": [\"$A\", \"$B\"]}",
     "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": []}", "{\"$setIsSubset\": [\"$A\", \"$B\"]}", "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\"], [\"blue\"]]}",
     "{\"$setIsSubset\": [\"$A\", \"$B\"]}",
     "false"},
    {"{\"A\": [\"red\", \"blue\"], \"B\": [[\"red\", \"blue\"]]}",
     "{\"$setIsSubset\": [\"$A\", \"$B\"]}",
     "false"},
    {"{\"A\": [], \"B\": []}", "{\"$setIsSubset\": [\"$A\", \"$B\"]}", "true"},
    {"{\"A\": [], \"B\": [\"red\"]}", "{\"$setIsSubset\": [\"$A\", \"$B\"]}", "true"},
    {"{}", "{\"$setIsSubset\": [[1, 1.0], [{\"$numberDecimal\": \"1\"}]]}", "true"},
    {"{}", "{\"$setIsSubset\": [[null], []]}", "false"},
    /* both must be arrays: null is an error */
    {"{}",
     "{\"$setIsSubset\": [null, [1]]}",
     "ERROR:$setIsSubset: its first argument must be an array, not null"},
    {"{}",
     "{\"$setIsSubset\": [[1], \"$nope\"]}",
     "ERROR:its second argument must be an array, but it is missing"},
    {"{}", "{\"$setIsSubset\": [[1], [1], [1]]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t all_any[] = {
    /* MongoDB's documentation of $allElementsTrue and $anyElementTrue */
    {"{}", "{\"$allElementsTrue\": [[true, 1, \"someString\"]]}", "true"},
    {"{}", "{\"$allElementsTrue\": [[[false]]]}", "true"},
    {"{}", "{\"$allElementsTrue\": [[]]}", "true"},
    {"{}", "{\"$allElementsTrue\": [[null, false, 0]]}", "false"},
    {"{\"responses\": [true]}", "{\"$allElementsTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [true, false]}", "{\"$allElementsTrue\": [\"$responses\"]}", "false"},
    {"{\"responses\": []}", "{\"$allElementsTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [1, true, \"seven\"]}", "{\"$allElementsTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [0]}", "{\"$allElementsTrue\": [\"$responses\"]}", "false"},
    {"{\"responses\": [[]]}", "{\"$allElementsTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [[0]]}", "{\"$allElementsTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [[false]]}", "{\"$allElementsTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [null]}", "{\"$allElementsTrue\": [\"$responses\"]}", "false"},
    {"{\"responses\": [{\"$undefined\": true}]}", "{\"$allElementsTrue\": [\"$responses\"]}", "false"},
    {"{}", "{\"$anyElementTrue\": [[true, false]]}", "true"},
    {"{}", "{\"$anyElementTrue\": [[[false]]]}", "true"},
    {"{}", "{\"$anyElementTrue\": [[null, false, 0]]}", "false"},
    {"{}", "{\"$anyElementTrue\": [[]]}", "false"},
    {"{\"responses\": [true]}", "{\"$anyElementTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [true, false]}", "{\"$anyElementTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": []}", "{\"$anyElementTrue\": [\"$responses\"]}", "false"},
    {"{\"responses\": [1, true, \"seven\"]}", "{\"$anyElementTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [0]}", "{\"$anyElementTrue\": [\"$responses\"]}", "false"},
    {"{\"responses\": [[]]}", "{\"$anyElementTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [[0]]}", "{\"$anyElementTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [[false]]}", "{\"$anyElementTrue\": [\"$responses\"]}", "true"},
    {"{\"responses\": [null]}", "{\"$anyElementTrue\": [\"$responses\"]}", "false"},
    {"{\"responses\": [{\"$undefined\": true}]}", "{\"$anyElementTrue\": [\"$responses\"]}", "false"},
    /* the argument must be an array: null is an error */
    {"{}",
     "{\"$allElementsTrue\": [null]}",
     "ERROR:$allElementsTrue: its argument must be an array, not null"},
    {"{}",
     "{\"$anyElementTrue\": \"$nope\"}",
     "ERROR:$anyElementTrue: its argument must be an array, but it is missing"},
    {"{}", "{\"$allElementsTrue\": [true, 1]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

/* The server's expectations (expression_get_field.js): a field name with
 * dots or dollars is a key, never a path; the full form needs both field
 * and input; null input null, a missing field or a non-object input
 * missing. A computed field is 8.0's (the manual: any expression that
 * resolves to a string since 7.2), where that test, older, refuses it. */
#define GF_DOC "{\"_id\": 0, \"x\": 0, \"y\": \"c\", \"a$b\": \"foo\", \"a.b\": \"bar\", \"a.$b\": 5, \".xy\": 0, \".$xz\": 0, \"..zz\": 0, \"$a\": 10, \"$x.$y\": 20, \"$x..$y\": {\"$a\": 1, \"$b..$c\": 2}, \"c\": {\"d\": \"x\"}, \"e\": {\"$f\": 30}, \"f\": [{\"$a\": 41}, {\"$b..\": 42}], \"$v..\": null}"
static const x_case_t get_fields_server[] = {
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": {\"a\": \"b\"}}}",
     "\"b\""},
    {GF_DOC,
     "{\"$getField\": \"a\"}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": \"a$b\"}",
     "\"foo\""},
    {GF_DOC,
     "{\"$getField\": \"a.b\"}",
     "\"bar\""},
    {GF_DOC,
     "{\"$getField\": \"x\"}",
     "0"},
    {GF_DOC,
     "{\"$getField\": \"a.$b\"}",
     "5"},
    {GF_DOC,
     "{\"$getField\": \".xy\"}",
     "0"},
    {GF_DOC,
     "{\"$getField\": \".$xz\"}",
     "0"},
    {GF_DOC,
     "{\"$getField\": \"..zz\"}",
     "0"},
    {GF_DOC,
     "{\"$getField\": {\"$const\": \"$a\"}}",
     "10"},
    {GF_DOC,
     "{\"$getField\": {\"$const\": \"$x.$y\"}}",
     "20"},
    {GF_DOC,
     "{\"$getField\": {\"$const\": \"$x..$y\"}}",
     "{\"$a\": 1, \"$b..$c\": 2}"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$f\"}, \"input\": \"$e\"}}",
     "30"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a.b\", \"input\": {\"$const\": {\"a.b\": \"b\"}}}}",
     "\"b\""},
    {GF_DOC,
     "{\"$getField\": {\"field\": \".ab\", \"input\": {\"$const\": {\".ab\": \"b\"}}}}",
     "\"b\""},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"ab.\", \"input\": {\"$const\": {\"ab.\": \"b\"}}}}",
     "\"b\""},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a.b.c\", \"input\": {\"$const\": {\"a.b.c\": 5}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a.b.c\", \"input\": {\"a\": {\"b\": {\"c\": 5}}}}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"d\", \"input\": {\"$getField\": \"c\"}}}",
     "\"x\""},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a$b\", \"input\": {\"$const\": {\"a$b\": \"b\"}}}}",
     "\"b\""},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a$b.b\", \"input\": {\"$const\": {\"a$b.b\": 5}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"a$b.b\"}, \"input\": {\"$const\": {\"a$b.b\": 5}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$b.b\"}, \"input\": {\"$const\": {\"$b.b\": 5}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$b\"}, \"input\": {\"$const\": {\"$b\": 5}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$.ab\"}, \"input\": {\"$const\": {\"$.ab\": 5}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$$xz\"}, \"input\": {\"$const\": {\"$$xz\": 5}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": null}}",
     "null"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": {\"b\": 2, \"c\": 3}}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": {\"a\": null, \"b\": 2, \"c\": 3}}}",
     "null"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$a\"}, \"input\": {\"$const\": {\"$a\": null, \"b\": 2, \"c\": 3}}}}",
     "null"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": {}}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"$const\": \"$v..\"}}",
     "null"},
    {GF_DOC,
     "{\"$getField\": {\"$const\": \"$u..\"}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"doesNotExist2\", \"input\": {\"$getField\": \"doesNotExist1\"}}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"x\", \"input\": {\"$getField\": \"doesNotExist\"}}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": true}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": {\"$getField\": {\"field\": \"b.c\", \"input\": {\"$const\": {\"b.c\": {\"a\": 5}}}}}}}",
     "5"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"x\", \"input\": {\"$getField\": {\"field\": \"b.c\", \"input\": {\"$const\": {\"b.c\": {\"a\": 5}}}}}}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": \"a\", \"input\": {\"$getField\": {\"field\": \"b.d\", \"input\": {\"$const\": {\"b.c\": {\"a\": 5}}}}}}}",
     "MISSING"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$a\"}, \"input\": {\"$getField\": {\"$const\": \"$x..$y\"}}}}",
     "1"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$b..$c\"}, \"input\": {\"$getField\": {\"$const\": \"$x..$y\"}}}}",
     "2"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"a$b\"}, \"input\": {\"$arrayElemAt\": [[{\"$const\": {\"a$b\": 1}}, {\"$const\": {\"a$b\": 2}}], 0]}}}",
     "1"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"a..\"}, \"input\": {\"$arrayElemAt\": [[{\"$const\": {\"a..\": 1}}, {\"$const\": {\"a..\": 2}}], 1]}}}",
     "2"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$a\"}, \"input\": {\"$arrayElemAt\": [\"$f\", 0]}}}",
     "41"},
    {GF_DOC,
     "{\"$getField\": {\"field\": {\"$const\": \"$b..\"}, \"input\": {\"$arrayElemAt\": [\"$f\", 1]}}}",
     "42"},
    {GF_DOC, "{\"$getField\": {\"input\": {\"a\": \"b\"}}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": \"a\"}}", "PARSE:missing the required argument 'input'"},
    {GF_DOC, "{\"$getField\": {\"field\": true, \"input\": {\"a\": \"b\"}}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": {\"a\": 1}, \"input\": {\"a\": 1}}}", "ERROR:'field' must be a string"},
    {GF_DOC, "{\"$getField\": 5}", "PARSE:"},
    {GF_DOC, "{\"$getField\": true}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": null, \"input\": {\"a\": 1}}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": \"a\", \"input\": {\"a\": \"b\"}, \"unknown\": true}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": \"$a\", \"input\": {\"a\": \"b\"}}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": \"$a.b\", \"input\": {\"a\": \"b\"}}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": \"$$CURRENT.a\", \"input\": {\"a\": \"b\"}}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"$add\": [2, 3]}}", "ERROR:'field' must be a string"},
    {GF_DOC, "{\"$getField\": {\"field\": {\"$concat\": [\"a\", \"b\"]}, \"input\": {\"a\": 1}}}", "MISSING"},
    {GF_DOC, "{\"$getField\": {\"field\": {\"$cond\": [false, null, \"x\"]}, \"input\": {\"x\": 1}}}", "1"},
    {GF_DOC, "{\"$getField\": {\"$const\": true}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"$const\": {\"a\": 1}}}", "PARSE:"},
    {GF_DOC, "{\"$getField\": {\"field\": {\"$const\": []}, \"input\": {\"a\": 1}}}", "PARSE:"},
    {NULL, NULL, NULL},
};

X_TABLE_TEST (test_object_object_to_array, object_to_array)
X_TABLE_TEST (test_object_array_to_object, array_to_object)
X_TABLE_TEST (test_object_merges, merges)
X_TABLE_TEST (test_object_get_fields, get_fields)
X_TABLE_TEST (test_object_get_fields_server, get_fields_server)
X_TABLE_TEST (test_object_set_fields, set_fields)
X_TABLE_TEST (test_object_unset_fields, unset_fields)
X_TABLE_TEST (test_object_sizes, sizes)
X_TABLE_TEST (test_object_unions, unions)
X_TABLE_TEST (test_object_intersections, intersections)
X_TABLE_TEST (test_object_differences, differences)
X_TABLE_TEST (test_object_equals, equals)
X_TABLE_TEST (test_object_subsets, subsets)
X_TABLE_TEST (test_object_all_any, all_any)

/* $getField without input reads $$CURRENT as a whole: the paths a step
 * reads must say so. */
static void
note_path (const rm_path_t *path, void *arg)
{
    (*(int *) arg)++;
}

static void
test_object_get_field_reads_current (void)
{
    bson_error_t err;
    bson_t *ex = bson_new_from_json ((const uint8_t *) "{\"e\": {\"$getField\": \"a.b\"}}", -1, &err);
    bson_iter_t it;
    rm_expr_t *e;
    bool whole = false;
    int n = 0;

    T_CHECK (ex != NULL);
    bson_iter_init_find (&it, ex, "e");
    e = rm_expr_parse (&it, &err);
    T_CHECK (e != NULL);
    rm_expr_paths (e, note_path, &n, &whole);
    T_CHECK (whole);
    T_CHECK (n == 0);
    rm_expr_destroy (e);
    bson_destroy (ex);
}

/* Once warmed, evaluating allocates nothing. */
static void
test_object_no_alloc_when_warm (void)
{
    const char *expr = "[{\"$arrayToObject\": {\"$objectToArray\": \"$d\"}}, {\"$mergeObjects\": [\"$d\", "
                       "{\"x\": 2}]}, {\"$setField\": {\"field\": \"a.b\", \"input\": \"$d\", \"value\": 1}}, "
                       "{\"$setUnion\": [\"$s\", [4, 1]]}, {\"$setIntersection\": [\"$s\", [3, 2]]}, "
                       "{\"$setDifference\": [\"$s\", [3]]}, {\"$setEquals\": [\"$s\", [3, 2, 1]]}, "
                       "{\"$setIsSubset\": [[1], \"$s\"]}, {\"$getField\": {\"field\": \"x\", \"input\": \"$d\"}}, "
                       "{\"$bsonSize\": \"$d\"}]";
    const char *doc = "{\"d\": {\"x\": 1, \"y\": [1, 2]}, \"s\": [3, 1, 2, 1]}";

    T_CHECK (x_no_alloc_when_warm (doc, expr, BSON_TYPE_ARRAY) == 0);
}

int
main (void)
{
    T_RUN (test_object_object_to_array);
    T_RUN (test_object_array_to_object);
    T_RUN (test_object_merges);
    T_RUN (test_object_get_fields);
    T_RUN (test_object_get_fields_server);
    T_RUN (test_object_set_fields);
    T_RUN (test_object_unset_fields);
    T_RUN (test_object_sizes);
    T_RUN (test_object_unions);
    T_RUN (test_object_intersections);
    T_RUN (test_object_differences);
    T_RUN (test_object_equals);
    T_RUN (test_object_subsets);
    T_RUN (test_object_all_any);
    T_RUN (test_object_get_field_reads_current);
    T_RUN (test_object_no_alloc_when_warm);
    return t_done ();
}
