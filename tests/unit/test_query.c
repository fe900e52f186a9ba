/* The query layer (remodel/query.h): every operator, with the examples of
 * MongoDB's documentation of each (their documents and what they match),
 * the server's own jstests where they state results
 * (jstests/core/query/elemmatch/elemmatch_value.js, the array-free part
 * of null_query_semantics.js), and the traps of
 * the query language's known traps: null against missing
 * and undefined (8.0: null no longer matches undefined), dotted paths
 * through arrays, comparisons bracketed by type. JSON is written with
 * single quotes (query_case.h). */
#include <stdlib.h>

#include "query_case.h"

static const q_case_t equality[] = {
    /* $eq documentation: inventory */
    {"{'item': {'name': 'ab', 'code': '123'}, 'qty': 15, 'tags': ['A', 'B', 'C']}", "{'qty': {'$eq': 20}}", "0"},
    {"{'item': {'name': 'cd', 'code': '123'}, 'qty': 20, 'tags': ['B']}", "{'qty': {'$eq': 20}}", "1"},
    {"{'item': {'name': 'cd', 'code': '123'}, 'qty': 20, 'tags': ['B']}", "{'qty': 20}", "1"},
    {"{'item': {'name': 'ab', 'code': '123'}, 'qty': 15}", "{'item.name': {'$eq': 'ab'}}", "1"},
    {"{'item': {'name': 'cd', 'code': '123'}, 'qty': 15}", "{'item.name': 'ab'}", "0"},
    {"{'tags': ['A', 'B', 'C']}", "{'tags': {'$eq': 'B'}}", "1"},
    {"{'tags': ['A', 'C']}", "{'tags': {'$eq': 'B'}}", "0"},
    {"{'tags': ['A', 'B']}", "{'tags': {'$eq': ['A', 'B']}}", "1"},
    {"{'tags': [['A', 'B'], 'C']}", "{'tags': {'$eq': ['A', 'B']}}", "1"},
    {"{'tags': ['B', 'A']}", "{'tags': ['A', 'B']}", "0"},
    {"{'tags': ['A', 'B', 'C']}", "{'tags': ['A', 'B']}", "0"},
    /* $eq with a regex matches only a stored regex (documentation: "Regex Match Behavior") */
    {"{'company': 'MongoDB'}", "{'company': {'$eq': {'$regularExpression': {'pattern': 'MongoDB', 'options': ''}}}}", "0"},
    {"{'company': 'MongoDB'}", "{'company': {'$regularExpression': {'pattern': 'MongoDB', 'options': ''}}}", "1"},
    {"{'company': 'MongoDB2'}", "{'company': {'$in': [{'$regularExpression': {'pattern': 'MongoDB', 'options': ''}}]}}", "1"},
    {"{'company': {'$regularExpression': {'pattern': 'MongoDB', 'options': ''}}}", "{'company': {'$eq': {'$regularExpression': {'pattern': 'MongoDB', 'options': ''}}}}", "1"},
    /* numbers by value across types */
    {"{'a': 1}", "{'a': 1.0}", "1"},
    {"{'a': {'$numberLong': '1'}}", "{'a': 1}", "1"},
    {"{'a': {'$numberDecimal': '1.00'}}", "{'a': 1}", "1"},
    {"{'a': 0.5}", "{'a': {'$numberDecimal': '0.5'}}", "1"},
    {"{'a': -0.0}", "{'a': 0}", "1"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$numberDouble': 'NaN'}}", "1"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$numberDecimal': 'NaN'}}", "1"},
    {"{'a': {'$numberLong': '9007199254740993'}}", "{'a': 9007199254740992.0}", "0"},
    /* strings by bytes, string and symbol alike */
    {"{'a': 'abc'}", "{'a': 'abc'}", "1"},
    {"{'a': 'abc'}", "{'a': 'ABC'}", "0"},
    {"{'a': {'$symbol': 'abc'}}", "{'a': 'abc'}", "1"},
    {"{'a': '1'}", "{'a': 1}", "0"},
    {"{'a': true}", "{'a': 1}", "0"},
    /* documents whole: field order counts */
    {"{'a': {'x': 1, 'y': 2}}", "{'a': {'x': 1, 'y': 2}}", "1"},
    {"{'a': {'y': 2, 'x': 1}}", "{'a': {'x': 1, 'y': 2}}", "0"},
    {"{'a': {'x': 1, 'y': 2}}", "{'a': {'x': 1}}", "0"},
    {"{'a': {'x': 1.0}}", "{'a': {'x': 1}}", "1"},
    {"{'a': {}}", "{'a': {}}", "1"},
    {"{'a': [{}]}", "{'a': {}}", "1"},
    /* a document whose first key is not an operator is a value to equal */
    {"{'a': {'b': 1, '$gt': 2}}", "{'a': {'b': 1, '$gt': 2}}", "1"},
    {"{'a': {'$ref': 'c', '$id': 1}}", "{'a': {'$ref': 'c', '$id': 1}}", "1"},
    {"{'a': {'$ref': 'c', '$id': 2}}", "{'a': {'$ref': 'c', '$id': 1}}", "0"},
    /* other types */
    {"{'a': {'$oid': '0123456789abcdef01234567'}}", "{'a': {'$oid': '0123456789abcdef01234567'}}", "1"},
    {"{'a': {'$date': '2024-01-01T00:00:00Z'}}", "{'a': {'$date': '2024-01-01T00:00:00Z'}}", "1"},
    {"{'a': {'$date': '2024-01-01T00:00:00Z'}}", "{'a': {'$date': '2024-01-01T00:00:00.001Z'}}", "0"},
    {"{'a': {'$minKey': 1}}", "{'a': {'$minKey': 1}}", "1"},
    {"{'a': {'$maxKey': 1}}", "{'a': {'$maxKey': 1}}", "1"},
    {"{'a': {'$binary': {'base64': 'AQI=', 'subType': '00'}}}", "{'a': {'$binary': {'base64': 'AQI=', 'subType': '00'}}}", "1"},
    {"{'a': {'$binary': {'base64': 'AQI=', 'subType': '04'}}}", "{'a': {'$binary': {'base64': 'AQI=', 'subType': '00'}}}", "0"},
    {"{'a': {'$timestamp': {'t': 1, 'i': 2}}}", "{'a': {'$timestamp': {'t': 1, 'i': 2}}}", "1"},
    /* several fields: all must hold */
    {"{'a': 1, 'b': 2}", "{'a': 1, 'b': 2}", "1"},
    {"{'a': 1, 'b': 3}", "{'a': 1, 'b': 2}", "0"},
    {"{'a': 1}", "{}", "1"},
    {"{}", "{}", "1"},
    {"{'a': 1}", "{'a': {'$eq': 1, '$gte': 1}}", "1"},
    /* undefined can never be compared to */
    {"{}", "{'a': {'$undefined': true}}", "PARSE:cannot compare to undefined"},
    {"{}", "{'a': {'$eq': {'$undefined': true}}}", "PARSE:cannot compare to undefined"},
    {"{}", "{'a': {'$gt': {'$undefined': true}}}", "PARSE:cannot compare to undefined"},
    {NULL, NULL, NULL},
};

/* jstests null_query_semantics.js, its array-free documents. */
static const char *const null_docs[] = {
    "{'_id': 'a_empty_subobject', 'a': {}}",
    "{'_id': 'a_null', 'a': null}",
    "{'_id': 'a_number', 'a': 4}",
    "{'_id': 'a_subobject_b_not_null', 'a': {'b': 'hi'}}",
    "{'_id': 'a_subobject_b_null', 'a': {'b': null}}",
    "{'_id': 'a_subobject_b_undefined', 'a': {'b': {'$undefined': true}}}",
    "{'_id': 'a_undefined', 'a': {'$undefined': true}}",
    "{'_id': 'no_a'}",
};

/* ... and those with arrays (queries on a itself, where 8.0 and later
 * agree). */
static const char *const null_array_docs[] = {
    "{'_id': 'a_double_array', 'a': [[]]}",
    "{'_id': 'a_empty_array', 'a': []}",
    "{'_id': 'a_value_array_all_nulls', 'a': [null, null]}",
    "{'_id': 'a_value_array_no_nulls', 'a': [1, 'string', 4]}",
    "{'_id': 'a_value_array_with_null', 'a': [1, 'string', null, 4]}",
    "{'_id': 'a_value_array_with_undefined', 'a': [1, 'string', {'$undefined': true}, 4]}",
    "{'_id': 'a_null', 'a': null}",
    "{'_id': 'no_a'}",
};

static void
test_null_semantics (void)
{
    Q_MATRIX (null_docs, "{'a': {'$eq': null}}", 1, 7);
    Q_MATRIX (null_docs, "{'a': null}", 1, 7);
    Q_MATRIX (null_docs, "{'a': {'$ne': null}}", 0, 2, 3, 4, 5, 6);
    Q_MATRIX (null_docs, "{'a': {'$in': [null, 4]}}", 1, 2, 7);
    Q_MATRIX (null_docs, "{'$or': [{'a': null}, {'a': 4}]}", 1, 2, 7);
    Q_MATRIX (null_docs, "{'a': {'$nin': [null, 4]}}", 0, 3, 4, 5, 6);
    Q_MATRIX (null_docs, "{'a': {'$nin': [null, {'$regularExpression': {'pattern': '^hi.*', 'options': ''}}]}}",
              0, 2, 3, 4, 5, 6);
    Q_MATRIX (null_docs, "{'a': {'$exists': false}}", 7);
    Q_MATRIX (null_docs, "{'a.b': {'$eq': null}}", 0, 1, 2, 4, 6, 7);
    Q_MATRIX (null_docs, "{'a.b': {'$ne': null}}", 3, 5);
    Q_MATRIX (null_docs, "{'a.b': {'$exists': false}}", 0, 1, 2, 6, 7);
    Q_MATRIX (null_docs, "{'a': {'$elemMatch': {'$eq': null}}}", -1);
    Q_MATRIX (null_docs, "{'a': {'$elemMatch': {'$ne': null}}}", -1);
    Q_MATRIX (null_docs, "{'a.b': {'$elemMatch': {'$eq': null}}}", -1);
    Q_MATRIX (null_docs, "{'a': {'$elemMatch': {'b': {'$eq': null}}}}", -1);
    Q_MATRIX (null_docs, "{'a': {'$elemMatch': {'b': {'$ne': null}}}}", -1);
    /* $lte/$gte null hold for null and missing, $lt/$gt null for nothing */
    Q_MATRIX (null_docs, "{'a': {'$gte': null}}", 1, 7);
    Q_MATRIX (null_docs, "{'a': {'$lte': null}}", 1, 7);
    Q_MATRIX (null_docs, "{'a': {'$lt': null}}", -1);
    Q_MATRIX (null_docs, "{'a': {'$gt': null}}", -1);
    Q_MATRIX (null_docs, "{'a': {'$type': 'null'}}", 1);
    Q_MATRIX (null_docs, "{'a': {'$type': 'undefined'}}", 6);

    Q_MATRIX (null_array_docs, "{'a': {'$eq': null}}", 2, 4, 6, 7);
    Q_MATRIX (null_array_docs, "{'a': {'$ne': null}}", 0, 1, 3, 5);
    Q_MATRIX (null_array_docs, "{'a': {'$not': {'$gte': null}}}", 0, 1, 3, 5);
    Q_MATRIX (null_array_docs, "{'a': {'$in': [null, 75]}}", 2, 4, 6, 7);
    Q_MATRIX (null_array_docs, "{'a': {'$exists': true}}", 0, 1, 2, 3, 4, 5, 6);
    Q_MATRIX (null_array_docs, "{'a': {'$size': 0}}", 1);
    Q_MATRIX (null_array_docs, "{'a': []}", 0, 1);
    Q_MATRIX (null_array_docs, "{'a': {'$elemMatch': {'$eq': null}}}", 2, 4);
    Q_MATRIX (null_array_docs, "{'a': {'$elemMatch': {'$exists': true}}}", 0, 2, 3, 4, 5);
}

/* jstests elemmatch_value.js: every query over every document. */
static const char *const em_docs[] = {
    "{'a': 5}",
    "{'a': [5]}",
    "{'a': [3, 7]}",
    "{'a': [[5]]}",
    "{'a': [[3, 7]]}",
    "{'a': [[[5]]]}",
    "{'a': [[[3, 7]]]}",
    "{'a': {'b': 5}}",
    "{'a': {'b': [5]}}",
    "{'a': {'b': [3, 7]}}",
    "{'a': [{'b': 5}]}",
    "{'a': [{'b': 3}, {'b': 7}]}",
    "{'a': [{'b': [5]}]}",
    "{'a': [{'b': [3, 7]}]}",
    "{'a': [[{'b': 5}]]}",
    "{'a': [[{'b': 3}, {'b': 7}]]}",
    "{'a': [[{'b': [5]}]]}",
    "{'a': [[{'b': [3, 7]}]]}",
};

static void
test_elem_match_value (void)
{
    Q_MATRIX (em_docs, "{'a': {'$elemMatch': {'$lt': 6, '$gt': 4}}}", 1);
    Q_MATRIX (em_docs, "{'a.b': {'$elemMatch': {'$lt': 6, '$gt': 4}}}", 8, 12);
    Q_MATRIX (em_docs, "{'a': {'$elemMatch': {'$elemMatch': {'$lt': 6, '$gt': 4}}}}", 3);
    Q_MATRIX (em_docs, "{'a': {'$elemMatch': {'$type': 'number'}}}", 1, 2);
    Q_MATRIX (em_docs, "{'a': {'$elemMatch': {'$type': 'array'}}}", 3, 4, 5, 6, 14, 15, 16, 17);
    Q_MATRIX (em_docs, "{'a': {'$elemMatch': {'b': {'$lt': 6, '$gt': 4}}}}", 10, 12, 13);
    Q_MATRIX (em_docs, "{'a': {'$elemMatch': {'b': {'$elemMatch': {'$lt': 6, '$gt': 4}}}}}", 12);
    Q_MATRIX (em_docs, "{'a': {'$elemMatch': {'$elemMatch': {'b': {'$lt': 6, '$gt': 4}}}}}", 14, 16, 17);
    /* the same documents under plain conditions: arrays of arrays are
     * not entered, a leaf array gives its elements and itself */
    Q_MATRIX (em_docs, "{'a': 5}", 0, 1);
    Q_MATRIX (em_docs, "{'a': [5]}", 1, 3);
    Q_MATRIX (em_docs, "{'a.b': 5}", 7, 8, 10, 12);
    Q_MATRIX (em_docs, "{'a': {'$gt': 4, '$lt': 6}}", 0, 1, 2);
    Q_MATRIX (em_docs, "{'a.b': {'$gt': 4, '$lt': 6}}", 7, 8, 9, 10, 11, 12, 13);
    Q_MATRIX (em_docs, "{'a': {'$size': 1}}", 1, 3, 4, 5, 6, 10, 12, 13, 14, 15, 16, 17);
    Q_MATRIX (em_docs, "{'a.b': {'$size': 2}}", 9, 13);
    Q_MATRIX (em_docs, "{'a': {'$type': 'array'}}", 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 16, 17);
    Q_MATRIX (em_docs, "{'a.0': 5}", 1);
    Q_MATRIX (em_docs, "{'a.0': [5]}", 3);
    Q_MATRIX (em_docs, "{'a.0.b': 5}", 10, 12, 14, 16);
    Q_MATRIX (em_docs, "{'a.1.b': 7}", 11);
}

static const q_case_t paths[] = {
    /* {"a.b": null} through arrays, by 8.0's rules (before SERVER-36681) */
    {"{}", "{'a.b': null}", "1"},
    {"{'a': {}}", "{'a.b': null}", "1"},
    {"{'a': [{}]}", "{'a.b': null}", "1"},
    {"{'a': []}", "{'a.b': null}", "0"},
    {"{'a': [1]}", "{'a.b': null}", "0"},
    {"{'a': [5, {'b': 5}]}", "{'a.b': null}", "0"},
    {"{'a': [{'b': 1}, {'c': 2}]}", "{'a.b': null}", "1"},
    {"{'a': [{'b': null}]}", "{'a.b': null}", "1"},
    {"{'a': [[{}]]}", "{'a.b': null}", "0"},
    {"{'a': 5}", "{'a.b': null}", "1"},
    {"{'a': []}", "{'a.b': {'$ne': null}}", "1"},
    {"{'a': []}", "{'a.b': {'$exists': false}}", "1"},
    {"{'a': [{'c': 1}]}", "{'a.b': {'$exists': false}}", "1"},
    {"{'a': [{'c': 1}, {'b': 1}]}", "{'a.b': {'$exists': false}}", "0"},
    {"{'a': [{'c': 1}, {'b': 1}]}", "{'a.b': {'$exists': true}}", "1"},
    {"{'a': [1, 2]}", "{'a.b': {'$exists': true}}", "0"},
    /* dotted paths through arrays of documents */
    {"{'a': [{'b': 1}, {'b': 2}]}", "{'a.b': 2}", "1"},
    {"{'a': [{'b': 1}, {'b': 2}]}", "{'a.b': 3}", "0"},
    {"{'a': [{'b': [1, 2]}, {'b': 3}]}", "{'a.b': 2}", "1"},
    {"{'a': [{'b': [1, 2]}, {'b': 3}]}", "{'a.b': [1, 2]}", "1"},
    {"{'a': {'b': [{'c': 1}, {'c': 2}]}}", "{'a.b.c': 2}", "1"},
    {"{'a': [{'b': [{'c': 1}]}, {'b': [{'c': 2}]}]}", "{'a.b.c': 2}", "1"},
    {"{'a': [{'b': [{'c': 1}]}, {'b': [{'c': 2}]}]}", "{'a.b.c': 3}", "0"},
    {"{'a': [[{'b': 1}]]}", "{'a.b': 1}", "0"},
    {"{'a': [[1]]}", "{'a': 1}", "0"},
    {"{'a': [[1]]}", "{'a': [1]}", "1"},
    {"{'a': [[1]]}", "{'a': [[1]]}", "1"},
    /* a numeric component indexes an array and also names a field */
    {"{'a': [5, 6]}", "{'a.0': 5}", "1"},
    {"{'a': [6, 5]}", "{'a.0': 5}", "0"},
    {"{'a': [6, 5]}", "{'a.1': 5}", "1"},
    {"{'a': [6, 5]}", "{'a.2': 5}", "0"},
    {"{'a': {'0': 5}}", "{'a.0': 5}", "1"},
    {"{'a': [{'0': 5}]}", "{'a.0': 5}", "1"},
    {"{'a': [{'0': 5}]}", "{'a.0': {'0': 5}}", "1"},
    {"{'a': [6, 5]}", "{'a.01': 5}", "0"},
    {"{'a': [{'b': 1}, {'b': 2}]}", "{'a.1.b': 2}", "1"},
    {"{'a': [{'b': 2}, {'b': 1}]}", "{'a.1.b': 2}", "0"},
    {"{'a': [[1, 2]]}", "{'a.0': [1, 2]}", "1"},
    {"{'a': [[1, 2]]}", "{'a.0': 1}", "0"},
    {"{'a': [[1, 2]]}", "{'a.0.1': 2}", "1"},
    {"{'a': [[{'b': 1}]]}", "{'a.0.b': 1}", "1"},
    {"{'a': [{'b': [7, 8]}]}", "{'a.0.b.1': 8}", "1"},
    {"{'a': [1, 2]}", "{'a.0': {'$exists': true}}", "1"},
    {"{'a': [1, 2]}", "{'a.5': {'$exists': true}}", "0"},
    {"{'a': [1, 2]}", "{'a.5': {'$exists': false}}", "1"},
    {"{'a': [1, 2]}", "{'a.5': null}", "0"},
    /* a scalar on the way gives a missing value */
    {"{'a': 1}", "{'a.b': {'$exists': true}}", "0"},
    {"{'a': 'xyz'}", "{'a.length': {'$exists': true}}", "0"},
    /* the first field of a name, as the server's getField */
    {"{'a': 1, 'a': 2}", "{'a': 2}", "0"},
    /* paths the layer refuses */
    {"{}", "{'a..b': 1}", "PARSE:field \"a..b\""},
    {"{}", "{'.a': 1}", "PARSE:field \".a\""},
    {NULL, NULL, NULL},
};

static const q_case_t comparisons[] = {
    /* $gt/$gte/$lt/$lte documentation: inventory quantities */
    {"{'item': 'nuts', 'quantity': 30}", "{'quantity': {'$gt': 20}}", "1"},
    {"{'item': 'bolts', 'quantity': 50}", "{'quantity': {'$gt': 20}}", "1"},
    {"{'item': 'washers', 'quantity': 10}", "{'quantity': {'$gt': 20}}", "0"},
    {"{'item': 'washers', 'quantity': 20}", "{'quantity': {'$gte': 20}}", "1"},
    {"{'item': 'washers', 'quantity': 20}", "{'quantity': {'$lt': 20}}", "0"},
    {"{'item': 'washers', 'quantity': 10}", "{'quantity': {'$lt': 20}}", "1"},
    {"{'item': 'washers', 'quantity': 20}", "{'quantity': {'$lte': 20}}", "1"},
    {"{'item': 'nuts'}", "{'quantity': {'$lt': 20}}", "0"},
    {"{'item': 'nuts'}", "{'quantity': {'$gt': 20}}", "0"},
    {"{'carrier': {'fee': 3}}", "{'carrier.fee': {'$gt': 2}}", "1"},
    /* type bracketing: a number never compares to a string, nor a string to a number */
    {"{'a': 'abc'}", "{'a': {'$lt': 5}}", "0"},
    {"{'a': 'abc'}", "{'a': {'$gt': 5}}", "0"},
    {"{'a': 10}", "{'a': {'$gt': 'abc'}}", "0"},
    {"{'a': 'b'}", "{'a': {'$gt': 'a'}}", "1"},
    {"{'a': 'B'}", "{'a': {'$gt': 'a'}}", "0"},
    {"{'a': true}", "{'a': {'$gt': 0}}", "0"},
    {"{'a': {'$date': '2024-01-02T00:00:00Z'}}", "{'a': {'$gt': {'$date': '2024-01-01T00:00:00Z'}}}", "1"},
    {"{'a': {'$date': '2024-01-02T00:00:00Z'}}", "{'a': {'$gt': 1}}", "0"},
    {"{'a': {'$date': '1960-01-01T00:00:00Z'}}", "{'a': {'$lt': {'$date': '1970-01-01T00:00:00Z'}}}", "1"},
    /* schemaVersion: a missing field matches no comparison */
    {"{'schemaVersion': 1}", "{'schemaVersion': {'$lt': 2}}", "1"},
    {"{'schemaVersion': 2}", "{'schemaVersion': {'$lt': 2}}", "0"},
    {"{'name': 'x'}", "{'schemaVersion': {'$lt': 2}}", "0"},
    {"{'name': 'x'}", "{'$or': [{'schemaVersion': {'$exists': false}}, {'schemaVersion': {'$lt': 2}}]}", "1"},
    {"{'schemaVersion': null}", "{'schemaVersion': {'$lt': 2}}", "0"},
    /* numbers across types */
    {"{'a': {'$numberLong': '3'}}", "{'a': {'$gt': 2.5}}", "1"},
    {"{'a': {'$numberDecimal': '2.50'}}", "{'a': {'$gte': 2.5}}", "1"},
    {"{'a': {'$numberDecimal': '2.49'}}", "{'a': {'$gte': 2.5}}", "0"},
    {"{'a': {'$numberDouble': 'Infinity'}}", "{'a': {'$gt': {'$numberLong': '9223372036854775807'}}}", "1"},
    {"{'a': {'$numberDouble': '-Infinity'}}", "{'a': {'$lt': -1e300}}", "1"},
    /* NaN: equal to NaN, neither above nor below anything */
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$lt': 0}}", "0"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$gt': 0}}", "0"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$lte': {'$numberDouble': 'NaN'}}}", "1"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$gte': {'$numberDouble': 'NaN'}}}", "1"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$lt': {'$numberDouble': 'NaN'}}}", "0"},
    {"{'a': 5}", "{'a': {'$gt': {'$numberDouble': 'NaN'}}}", "0"},
    {"{'a': 5}", "{'a': {'$lte': {'$numberDouble': 'NaN'}}}", "0"},
    {"{'a': {'$numberDecimal': 'NaN'}}", "{'a': {'$gte': {'$numberDouble': 'NaN'}}}", "1"},
    /* MinKey and MaxKey bound every type, missing included */
    {"{'a': 'x'}", "{'a': {'$lt': {'$maxKey': 1}}}", "1"},
    {"{'a': {'$oid': '0123456789abcdef01234567'}}", "{'a': {'$lte': {'$maxKey': 1}}}", "1"},
    {"{'a': 'x'}", "{'a': {'$gt': {'$minKey': 1}}}", "1"},
    {"{'a': 'x'}", "{'a': {'$gt': {'$maxKey': 1}}}", "0"},
    {"{'a': 'x'}", "{'a': {'$lt': {'$minKey': 1}}}", "0"},
    {"{'a': {'$maxKey': 1}}", "{'a': {'$gte': {'$maxKey': 1}}}", "1"},
    {"{'a': {'$maxKey': 1}}", "{'a': {'$lt': {'$maxKey': 1}}}", "0"},
    {"{}", "{'a': {'$lt': {'$maxKey': 1}}}", "1"},
    {"{}", "{'a': {'$gt': {'$minKey': 1}}}", "1"},
    {"{'a': 'x'}", "{'a': {'$maxKey': 1}}", "0"},
    /* arrays: any element, or the whole array, within its own type */
    {"{'a': [1, 10]}", "{'a': {'$gt': 5}}", "1"},
    {"{'a': [1, 2]}", "{'a': {'$gt': 5}}", "0"},
    {"{'a': [1, 10]}", "{'a': {'$gt': 5, '$lt': 8}}", "1"},
    {"{'a': [1, 10]}", "{'a': {'$elemMatch': {'$gt': 5, '$lt': 8}}}", "0"},
    {"{'a': [2]}", "{'a': {'$gt': [1]}}", "1"},
    {"{'a': [1, 2]}", "{'a': {'$gt': [1]}}", "1"},
    {"{'a': [0]}", "{'a': {'$gt': [1]}}", "0"},
    {"{'a': []}", "{'a': {'$lt': [1]}}", "1"},
    {"{'a': {'b': 2}}", "{'a': {'$gt': {'b': 1}}}", "1"},
    {"{'a': {'c': 0}}", "{'a': {'$gt': {'b': 1}}}", "1"},
    {"{'a': {'b': 2}}", "{'a': {'$gt': 1}}", "0"},
    /* regexes are refused by the ordering comparisons */
    {"{}", "{'a': {'$gt': {'$regularExpression': {'pattern': 'x', 'options': ''}}}}", "PARSE:Can't have RegEx"},
    {"{}", "{'a': {'$lte': {'$regularExpression': {'pattern': 'x', 'options': ''}}}}", "PARSE:Can't have RegEx"},
    {NULL, NULL, NULL},
};

static const q_case_t negations[] = {
    /* $ne documentation */
    {"{'item': 'nuts', 'quantity': 30}", "{'quantity': {'$ne': 20}}", "1"},
    {"{'item': 'nuts', 'quantity': 20}", "{'quantity': {'$ne': 20}}", "0"},
    {"{'item': 'nuts'}", "{'quantity': {'$ne': 20}}", "1"},
    {"{'a': [1, 20]}", "{'a': {'$ne': 20}}", "0"},
    {"{'a': [1, 2]}", "{'a': {'$ne': 20}}", "1"},
    {"{'carrier': {'state': 'NY'}}", "{'carrier.state': {'$ne': 'NY'}}", "0"},
    {"{'carrier': {'fee': 3}}", "{'carrier.state': {'$ne': 'NY'}}", "1"},
    {"{}", "{'a': {'$ne': {'$regularExpression': {'pattern': 'x', 'options': ''}}}}", "PARSE:Can't have regex as arg to $ne"},
    /* $nin documentation */
    {"{'quantity': 5}", "{'quantity': {'$nin': [5, 15]}}", "0"},
    {"{'quantity': 10}", "{'quantity': {'$nin': [5, 15]}}", "1"},
    {"{'item': 'x'}", "{'quantity': {'$nin': [5, 15]}}", "1"},
    {"{'tags': ['school', 'home']}", "{'tags': {'$nin': ['school']}}", "0"},
    {"{'tags': ['home']}", "{'tags': {'$nin': ['school']}}", "1"},
    {"{'a': 1}", "{'a': {'$nin': []}}", "1"},
    {"{}", "{'a': {'$nin': 5}}", "PARSE:$nin needs an array"},
    /* $not documentation */
    {"{'price': 1.99}", "{'price': {'$not': {'$gt': 1.99}}}", "1"},
    {"{'price': 2.5}", "{'price': {'$not': {'$gt': 1.99}}}", "0"},
    {"{'item': 'x'}", "{'price': {'$not': {'$gt': 1.99}}}", "1"},
    {"{'price': 'cheap'}", "{'price': {'$not': {'$gt': 1.99}}}", "1"},
    {"{'price': 'cheap'}", "{'price': {'$lte': 1.99}}", "0"},
    {"{'item': 'pencil'}", "{'item': {'$not': {'$regularExpression': {'pattern': '^p.*', 'options': ''}}}}", "0"},
    {"{'item': 'eraser'}", "{'item': {'$not': {'$regularExpression': {'pattern': '^p.*', 'options': ''}}}}", "1"},
    {"{'item': 'Pencil'}", "{'item': {'$not': {'$regex': '^p.*', '$options': 'i'}}}", "0"},
    {"{'item': 'eraser'}", "{'item': {'$not': {'$regex': '^p.*'}}}", "1"},
    {"{'a': 3}", "{'a': {'$not': {'$gt': 1, '$lt': 5}}}", "0"},
    {"{'a': 7}", "{'a': {'$not': {'$gt': 1, '$lt': 5}}}", "1"},
    {"{'a': [1, 7]}", "{'a': {'$not': {'$gt': 1, '$lt': 5}}}", "0"},
    {"{'a': 1}", "{'a': {'$not': {'$not': {'$eq': 1}}}}", "1"},
    {"{}", "{'a': {'$not': {}}}", "PARSE:$not cannot be empty"},
    {"{}", "{'a': {'$not': 5}}", "PARSE:$not needs a regex or a document"},
    {"{}", "{'a': {'$not': {'b': 1}}}", "PARSE:unknown operator: b"},
    {"{}", "{'$not': {'a': 1}}", "PARSE:use $nor"},
    /* $exists documentation */
    {"{'qty': 10}", "{'qty': {'$exists': true, '$nin': [5, 15]}}", "1"},
    {"{'qty': 5}", "{'qty': {'$exists': true, '$nin': [5, 15]}}", "0"},
    {"{'item': 'x'}", "{'qty': {'$exists': true, '$nin': [5, 15]}}", "0"},
    {"{'qty': null}", "{'qty': {'$exists': true}}", "1"},
    {"{'qty': null}", "{'qty': {'$exists': false}}", "0"},
    {"{'item': 'x'}", "{'qty': {'$exists': false}}", "1"},
    {"{'qty': 0}", "{'qty': {'$exists': 1}}", "1"},
    {"{'qty': 0}", "{'qty': {'$exists': 0}}", "0"},
    {"{}", "{'qty': {'$exists': 0}}", "1"},
    {"{}", "{'qty': {'$exists': null}}", "1"},
    {"{}", "{'qty': {'$exists': 'yes'}}", "0"},
    {"{'a': []}", "{'a': {'$exists': true}}", "1"},
    {NULL, NULL, NULL},
};

static const q_case_t ins[] = {
    /* $in documentation */
    {"{'item': 'Pens', 'quantity': 350, 'tags': ['school', 'office']}", "{'quantity': {'$in': [5, 15]}}", "0"},
    {"{'item': 'Erasers', 'quantity': 15, 'tags': ['school', 'home']}", "{'quantity': {'$in': [5, 15]}}", "1"},
    {"{'item': 'Maps', 'tags': ['office', 'storage']}", "{'quantity': {'$in': [5, 15]}}", "0"},
    {"{'item': 'Books', 'quantity': 5, 'tags': ['school', 'storage', 'home']}", "{'quantity': {'$in': [5, 15]}}", "1"},
    {"{'tags': ['school', 'office']}", "{'tags': {'$in': [{'$regularExpression': {'pattern': '^be', 'options': ''}}, {'$regularExpression': {'pattern': '^st', 'options': ''}}]}}", "0"},
    {"{'tags': ['office', 'storage']}", "{'tags': {'$in': [{'$regularExpression': {'pattern': '^be', 'options': ''}}, {'$regularExpression': {'pattern': '^st', 'options': ''}}]}}", "1"},
    {"{'tags': 'beta'}", "{'tags': {'$in': ['x', {'$regularExpression': {'pattern': '^BE', 'options': 'i'}}]}}", "1"},
    {"{'a': 2.0}", "{'a': {'$in': [1, {'$numberLong': '2'}, 3]}}", "1"},
    {"{'a': [1, 2]}", "{'a': {'$in': [[1, 2]]}}", "1"},
    {"{'a': [1, 2]}", "{'a': {'$in': [[2, 1]]}}", "0"},
    {"{'a': [3, 2]}", "{'a': {'$in': [9, 8, 2]}}", "1"},
    {"{'a': {'b': 1}}", "{'a': {'$in': [{'b': 1}]}}", "1"},
    {"{'a': {'$ref': 'c', '$id': 1}}", "{'a': {'$in': [{'$ref': 'c', '$id': 1}]}}", "1"},
    {"{'a': 1}", "{'a': {'$in': []}}", "0"},
    {"{}", "{'a': {'$in': []}}", "0"},
    {"{}", "{'a': {'$in': [null]}}", "1"},
    {"{'a': {'$undefined': true}}", "{'a': {'$in': [null]}}", "0"},
    {"{'a': null}", "{'a': {'$in': [null]}}", "1"},
    {"{'a': 'z'}", "{'a': {'$in': ['c', 'a', 'z', 'b', 'a']}}", "1"},
    {"{'a': 'y'}", "{'a': {'$in': ['c', 'a', 'z', 'b', 'a']}}", "0"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$in': [1, {'$numberDouble': 'NaN'}]}}", "1"},
    {"{'a': {'$symbol': 'q'}}", "{'a': {'$in': ['q']}}", "1"},
    {"{'a': {'$regularExpression': {'pattern': 'x', 'options': ''}}}", "{'a': {'$in': [{'$regularExpression': {'pattern': 'x', 'options': ''}}]}}", "1"},
    {"{}", "{'a': {'$in': 5}}", "PARSE:$in needs an array"},
    {"{}", "{'a': {'$in': [{'$gt': 1}]}}", "PARSE:cannot nest $ under $in"},
    {"{}", "{'a': {'$in': [{'$undefined': true}]}}", "PARSE:cannot be undefined"},
    {NULL, NULL, NULL},
};

static const q_case_t types[] = {
    /* $type documentation: addressBook */
    {"{'zipCode': '43603'}", "{'zipCode': {'$type': 2}}", "1"},
    {"{'zipCode': '43603'}", "{'zipCode': {'$type': 'string'}}", "1"},
    {"{'zipCode': ['10012', 'a']}", "{'zipCode': {'$type': 'string'}}", "1"},
    {"{'zipCode': 43603.0}", "{'zipCode': {'$type': 'string'}}", "0"},
    {"{'zipCode': 43603.0}", "{'zipCode': {'$type': 1}}", "1"},
    {"{'zipCode': 43603.0}", "{'zipCode': {'$type': 'double'}}", "1"},
    {"{'zipCode': {'$numberLong': '43603'}}", "{'zipCode': {'$type': 'number'}}", "1"},
    {"{'zipCode': {'$numberDecimal': '43603'}}", "{'zipCode': {'$type': 'number'}}", "1"},
    {"{'zipCode': 43603}", "{'zipCode': {'$type': 'number'}}", "1"},
    {"{'zipCode': 43603}", "{'zipCode': {'$type': 'int'}}", "1"},
    {"{'zipCode': 43603}", "{'zipCode': {'$type': 'long'}}", "0"},
    {"{'zipCode': '43603'}", "{'zipCode': {'$type': 'number'}}", "0"},
    {"{'zipCode': ['43603', 1]}", "{'zipCode': {'$type': 'number'}}", "1"},
    {"{'zipCode': '43603'}", "{'zipCode': {'$type': ['string', 'double']}}", "1"},
    {"{'zipCode': true}", "{'zipCode': {'$type': ['string', 'double']}}", "0"},
    {"{'zipCode': true}", "{'zipCode': {'$type': [2, 8]}}", "1"},
    {"{'zipCode': true}", "{'zipCode': {'$type': 'bool'}}", "1"},
    /* arrays: type array matches the array itself (also empty) */
    {"{'a': []}", "{'a': {'$type': 'array'}}", "1"},
    {"{'a': [1]}", "{'a': {'$type': 4}}", "1"},
    {"{'a': 1}", "{'a': {'$type': 'array'}}", "0"},
    {"{'a': {}}", "{'a': {'$type': 'object'}}", "1"},
    {"{'a': [{}]}", "{'a': {'$type': 'object'}}", "1"},
    {"{}", "{'a': {'$type': 'null'}}", "0"},
    {"{'a': null}", "{'a': {'$type': 10}}", "1"},
    {"{'a': {'$minKey': 1}}", "{'a': {'$type': -1}}", "1"},
    {"{'a': {'$minKey': 1}}", "{'a': {'$type': 'minKey'}}", "1"},
    {"{'a': {'$maxKey': 1}}", "{'a': {'$type': 127}}", "1"},
    {"{'a': {'$maxKey': 1}}", "{'a': {'$type': 'maxKey'}}", "1"},
    {"{'a': {'$oid': '0123456789abcdef01234567'}}", "{'a': {'$type': 'objectId'}}", "1"},
    {"{'a': {'$date': '2024-01-01T00:00:00Z'}}", "{'a': {'$type': 'date'}}", "1"},
    {"{'a': {'$date': '2024-01-01T00:00:00Z'}}", "{'a': {'$type': 9.0}}", "1"},
    {"{'a': {'$timestamp': {'t': 1, 'i': 2}}}", "{'a': {'$type': 'timestamp'}}", "1"},
    {"{'a': {'$regularExpression': {'pattern': 'x', 'options': ''}}}", "{'a': {'$type': 'regex'}}", "1"},
    {"{'a': {'$binary': {'base64': 'AQI=', 'subType': '00'}}}", "{'a': {'$type': 'binData'}}", "1"},
    {"{'a': {'$symbol': 's'}}", "{'a': {'$type': 'symbol'}}", "1"},
    {"{'a': {'$symbol': 's'}}", "{'a': {'$type': 'string'}}", "0"},
    {"{'a': {'$code': 'f()'}}", "{'a': {'$type': 'javascript'}}", "1"},
    {"{'a': {'$numberDecimal': '1'}}", "{'a': {'$type': 'decimal'}}", "1"},
    {"{'a': {'$numberDecimal': '1'}}", "{'a': {'$type': 19}}", "1"},
    {"{}", "{'a': {'$type': 'nosuch'}}", "PARSE:Unknown type name alias: nosuch"},
    {"{}", "{'a': {'$type': 'missing'}}", "PARSE:Unknown type name alias: missing"},
    {"{}", "{'a': {'$type': 20}}", "PARSE:Invalid numerical type code"},
    {"{}", "{'a': {'$type': 2.5}}", "PARSE:Invalid numerical type code"},
    {"{}", "{'a': {'$type': []}}", "PARSE:a must match at least one type"},
    {"{}", "{'a': {'$type': true}}", "PARSE:type must be represented as a number or a string"},
    {"{}", "{'a': {'$type': [2, {}]}}", "PARSE:type must be represented as a number or a string"},
    {NULL, NULL, NULL},
};

static const q_case_t regexes[] = {
    /* $regex documentation: products */
    {"{'sku': 'abc123'}", "{'sku': {'$regex': '789$'}}", "0"},
    {"{'sku': 'abc789'}", "{'sku': {'$regex': '789$'}}", "1"},
    {"{'sku': 'abc789'}", "{'sku': {'$regularExpression': {'pattern': '789$', 'options': ''}}}", "1"},
    {"{'sku': 'abc789'}", "{'sku': {'$regex': {'$regularExpression': {'pattern': '789$', 'options': ''}}}}", "1"},
    {"{'sku': 'abc123'}", "{'sku': {'$regex': '^ABC', '$options': 'i'}}", "1"},
    {"{'sku': 'xyz456'}", "{'sku': {'$regex': '^ABC', '$options': 'i'}}", "0"},
    {"{'sku': 'abc123'}", "{'sku': {'$options': 'i', '$regex': '^ABC'}}", "1"},
    {"{'sku': 'abc123'}", "{'sku': {'$regex': {'$regularExpression': {'pattern': '^ABC', 'options': 'i'}}}}", "1"},
    {"{'sku': 'abc123'}", "{'sku': {'$regularExpression': {'pattern': '^ABC', 'options': 'i'}}}", "1"},
    {"{'sku': 'abc123'}", "{'sku': {'$regex': '^ABC'}}", "0"},
    /* multiline: ^ at each line with m */
    {"{'description': 'First line\\nSecond line'}", "{'description': {'$regex': '^S', '$options': 'm'}}", "1"},
    {"{'description': 'First line\\nSecond line'}", "{'description': {'$regex': '^S'}}", "0"},
    {"{'description': 'Single line description.'}", "{'description': {'$regex': '^S'}}", "1"},
    /* x: whitespace and comments ignored */
    {"{'sku': 'abc123'}", "{'sku': {'$regex': 'abc #category code\\n123 #item number', '$options': 'x'}}", "1"},
    {"{'sku': 'abc123'}", "{'sku': {'$regex': 'abc #category code\\n123 #item number'}}", "0"},
    /* s: the dot matches a newline */
    {"{'description': 'Many spaces before     line\\nMulti\\nline'}", "{'description': {'$regex': 'm.*line', '$options': 'si'}}", "1"},
    {"{'description': 'First line\\nSecond line'}", "{'description': {'$regex': 'First.*Second'}}", "0"},
    {"{'description': 'First line\\nSecond line'}", "{'description': {'$regex': 'First.*Second', '$options': 's'}}", "1"},
    {"{'a': 'x'}", "{'a': {'$regex': 'x', '$options': 'u'}}", "1"},
    /* UTF-8: a code point is one character */
    {"{'a': '\\u00e9t\\u00e9'}", "{'a': {'$regex': '^.t.$'}}", "1"},
    {"{'a': '\\u00c9T\\u00c9'}", "{'a': {'$regex': '^\\u00e9t\\u00e9$', '$options': 'i'}}", "1"},
    /* values that are not strings */
    {"{'a': 123}", "{'a': {'$regex': '123'}}", "0"},
    {"{}", "{'a': {'$regex': '.*'}}", "0"},
    {"{'a': null}", "{'a': {'$regex': '.*'}}", "0"},
    {"{'a': {'$symbol': 'abc'}}", "{'a': {'$regex': '^a'}}", "1"},
    {"{'a': ['x', 'abc']}", "{'a': {'$regex': '^a'}}", "1"},
    {"{'a': [{'b': 'abc'}]}", "{'a.b': {'$regex': 'c$'}}", "1"},
    /* a stored regex equals the same pattern and flags only */
    {"{'a': {'$regularExpression': {'pattern': '^a', 'options': ''}}}", "{'a': {'$regex': '^a'}}", "1"},
    {"{'a': {'$regularExpression': {'pattern': '^a', 'options': 'i'}}}", "{'a': {'$regex': '^a'}}", "0"},
    {"{'a': {'$regularExpression': {'pattern': '^a', 'options': 'i'}}}", "{'a': {'$regex': '^a', '$options': 'i'}}", "1"},
    {"{'a': 'b'}", "{'a': {'$regex': 'a', '$gt': 'a'}}", "0"},
    {"{'a': 'ba'}", "{'a': {'$regex': 'a', '$gt': 'a'}}", "1"},
    /* refusals */
    {"{}", "{'a': {'$options': 'i'}}", "PARSE:$options needs a $regex"},
    {"{}", "{'a': {'$regex': 5}}", "PARSE:$regex has to be a string"},
    {"{}", "{'a': {'$regex': 'x', '$options': 5}}", "PARSE:$options has to be a string"},
    {"{}", "{'a': {'$regex': {'$regularExpression': {'pattern': 'x', 'options': 'i'}}, '$options': 'm'}}", "PARSE:options set in both $regex and $options"},
    {"{}", "{'a': {'$regex': 'x', '$options': 'q'}}", "PARSE:invalid flag in regex options: q"},
    {"{}", "{'a': {'$regex': '(unclosed'}}", "PARSE:Regular expression is invalid"},
    /* a pattern that backtracks catastrophically fails, named */
    {"{'a': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'}", "{'a': {'$regex': '^(a+)+$'}}", "ERROR:backtracks too much"},
    {"{'a': 'short'}", "{'a': {'$regex': '^(a+)+$'}}", "0"},
    {NULL, NULL, NULL},
};

static const q_case_t sizes[] = {
    /* $size documentation */
    {"{'field': ['red', 'green']}", "{'field': {'$size': 2}}", "1"},
    {"{'field': 'apple'}", "{'field': {'$size': 1}}", "0"},
    {"{'field': []}", "{'field': {'$size': 1}}", "0"},
    {"{'field': []}", "{'field': {'$size': 0}}", "1"},
    {"{'field': ['red', 'green']}", "{'field': {'$size': 2.0}}", "1"},
    {"{'field': ['red', 'green']}", "{'field': {'$size': {'$numberLong': '2'}}}", "1"},
    {"{'field': ['red', 'green']}", "{'field': {'$size': {'$numberDecimal': '2'}}}", "1"},
    {"{}", "{'field': {'$size': 0}}", "0"},
    {"{'field': {'0': 1}}", "{'field': {'$size': 1}}", "0"},
    {"{'field': ['a', 'b']}", "{'field': {'$not': {'$size': 2}}}", "0"},
    {"{}", "{'field': {'$not': {'$size': 2}}}", "1"},
    {"{}", "{'field': {'$size': -1}}", "PARSE:Failed to parse $size. Expected a non-negative number"},
    {"{}", "{'field': {'$size': 1.5}}", "PARSE:Failed to parse $size. Expected an integer"},
    {"{}", "{'field': {'$size': '2'}}", "PARSE:Failed to parse $size. Expected a number"},
    {"{}", "{'field': {'$size': {'$gte': 3}}}", "PARSE:Failed to parse $size"},
    {"{}", "{'field': {'$size': {'$numberDouble': 'NaN'}}}", "PARSE:found NaN"},
    {"{}", "{'field': {'$size': {'$numberLong': '4294967296'}}}", "PARSE:32-bit integer"},
    {NULL, NULL, NULL},
};

static const q_case_t alls[] = {
    /* $all documentation: inventory */
    {"{'tags': ['appliance', 'school', 'electronics', 'book']}", "{'tags': {'$all': ['appliance', 'school', 'book']}}", "1"},
    {"{'tags': ['school', 'book', 'bag']}", "{'tags': {'$all': ['appliance', 'school', 'book']}}", "0"},
    {"{'tags': ['appliance', 'school', 'book']}", "{'tags': {'$all': ['appliance', 'school', 'book']}}", "1"},
    {"{'tags': 'ssl'}", "{'tags': {'$all': ['ssl']}}", "1"},
    {"{'tags': ['ssl', 'security']}", "{'tags': {'$all': [['ssl', 'security']]}}", "1"},
    {"{'tags': [['ssl', 'security'], 'x']}", "{'tags': {'$all': [['ssl', 'security']]}}", "1"},
    {"{'tags': ['security', 'ssl']}", "{'tags': {'$all': [['ssl', 'security']]}}", "0"},
    {"{'tags': ['ssl']}", "{'tags': {'$all': []}}", "0"},
    {"{}", "{'tags': {'$all': []}}", "0"},
    {"{'tags': ['Beta', 'x']}", "{'tags': {'$all': [{'$regularExpression': {'pattern': '^b', 'options': 'i'}}, 'x']}}", "1"},
    {"{'a': null}", "{'a': {'$all': [null]}}", "1"},
    {"{}", "{'a': {'$all': [null]}}", "1"},
    /* $all with $elemMatch (documentation) */
    {"{'qty': [{'size': 'S', 'num': 10, 'color': 'blue'}, {'size': 'M', 'num': 45, 'color': 'blue'}, {'size': 'L', 'num': 100, 'color': 'green'}]}",
     "{'qty': {'$all': [{'$elemMatch': {'size': 'M', 'num': {'$gt': 50}}}, {'$elemMatch': {'num': 100, 'color': 'green'}}]}}", "0"},
    {"{'qty': [{'size': 'S', 'num': 10, 'color': 'blue'}, {'size': 'M', 'num': 100, 'color': 'blue'}, {'size': 'L', 'num': 100, 'color': 'green'}]}",
     "{'qty': {'$all': [{'$elemMatch': {'size': 'M', 'num': {'$gt': 50}}}, {'$elemMatch': {'num': 100, 'color': 'green'}}]}}", "1"},
    {"{'qty': [{'size': 'M', 'num': 100, 'color': 'green'}]}",
     "{'qty': {'$all': [{'$elemMatch': {'size': 'M', 'num': {'$gt': 50}}}, {'$elemMatch': {'num': 100, 'color': 'green'}}]}}", "1"},
    {"{'a': [3, 9]}", "{'a': {'$all': [{'$elemMatch': {'$gt': 8}}, {'$elemMatch': {'$lt': 4}}]}}", "1"},
    {"{'a': [5]}", "{'a': {'$all': [{'$elemMatch': {'$gt': 8}}, {'$elemMatch': {'$lt': 4}}]}}", "0"},
    {"{}", "{'a': {'$all': [{'$elemMatch': {'$gt': 8}}, 5]}}", "PARSE:$all/$elemMatch has to be consistent"},
    {"{}", "{'a': {'$all': [{'$elemMatch': {'$gt': 8}}, {'x': 5}]}}", "PARSE:$all/$elemMatch has to be consistent"},
    {"{}", "{'a': {'$all': [5, {'$elemMatch': {'$gt': 8}}]}}", "PARSE:no $ expressions in $all"},
    {"{}", "{'a': {'$all': [{'$gt': 8}]}}", "PARSE:no $ expressions in $all"},
    {"{'a': [{'$foo': 1}]}", "{'a': {'$all': [{'$foo': 1}]}}", "1"},
    {"{}", "{'a': {'$all': 5}}", "PARSE:$all needs an array"},
    {NULL, NULL, NULL},
};

static const q_case_t elem_matches[] = {
    /* $elemMatch documentation: scores, survey */
    {"{'results': [82, 85, 88]}", "{'results': {'$elemMatch': {'$gte': 80, '$lt': 85}}}", "1"},
    {"{'results': [75, 88, 89]}", "{'results': {'$elemMatch': {'$gte': 80, '$lt': 85}}}", "0"},
    {"{'results': [{'product': 'abc', 'score': 10}, {'product': 'xyz', 'score': 5}]}", "{'results': {'$elemMatch': {'product': 'xyz', 'score': {'$gte': 8}}}}", "0"},
    {"{'results': [{'product': 'abc', 'score': 8}, {'product': 'xyz', 'score': 7}]}", "{'results': {'$elemMatch': {'product': 'xyz', 'score': {'$gte': 8}}}}", "0"},
    {"{'results': [{'product': 'abc', 'score': 7}, {'product': 'xyz', 'score': 8}]}", "{'results': {'$elemMatch': {'product': 'xyz', 'score': {'$gte': 8}}}}", "1"},
    {"{'results': [{'product': 'abc', 'score': 7}, {'product': 'xyz', 'score': 8}]}", "{'results': {'$elemMatch': {'product': 'xyz'}}}", "1"},
    {"{'results': [{'product': 'abc', 'score': 7}]}", "{'results': {'$elemMatch': {'product': {'$ne': 'xyz'}}}}", "1"},
    {"{'results': [{'product': 'xyz', 'score': 7}]}", "{'results': {'$elemMatch': {'product': {'$ne': 'xyz'}}}}", "0"},
    {"{'results': [{'product': 'xyz', 'score': 7}, {'product': 'abc', 'score': 9}]}", "{'results.product': {'$ne': 'xyz'}}", "0"},
    /* the document form: $and, $or, $nor inside, empty */
    {"{'a': [{'x': 1}, {'x': 2, 'y': 3}]}", "{'a': {'$elemMatch': {'$or': [{'x': 5}, {'y': 3}]}}}", "1"},
    {"{'a': [{'x': 1}, {'x': 2, 'y': 3}]}", "{'a': {'$elemMatch': {'$and': [{'x': 2}, {'y': 3}]}}}", "1"},
    {"{'a': [{'x': 1}, {'x': 2, 'y': 3}]}", "{'a': {'$elemMatch': {'$and': [{'x': 1}, {'y': 3}]}}}", "0"},
    {"{'a': [{'x': 1}]}", "{'a': {'$elemMatch': {}}}", "1"},
    {"{'a': [1, 2]}", "{'a': {'$elemMatch': {}}}", "0"},
    {"{'a': [[1]]}", "{'a': {'$elemMatch': {}}}", "1"},
    {"{'a': [[5, 6]]}", "{'a': {'$elemMatch': {'1': 6}}}", "1"},
    {"{'a': {'x': 1}}", "{'a': {'$elemMatch': {'x': 1}}}", "0"},
    {"{'a': []}", "{'a': {'$elemMatch': {'$exists': true}}}", "0"},
    {"{'a': [{'x': null}]}", "{'a': {'$elemMatch': {'x': null}}}", "1"},
    {"{'a': [{}]}", "{'a': {'$elemMatch': {'x': null}}}", "1"},
    {"{'a': [{'b': [{'c': 1}]}]}", "{'a': {'$elemMatch': {'b.c': 1}}}", "1"},
    /* a DBRef's own fields are '$' names: a path this layer cannot follow */
    {"{'a': [{'$ref': 'c', '$id': 1}]}", "{'a': {'$elemMatch': {'$ref': 'c', '$id': 1}}}", "PARSE:DBRef's own field is not supported"},
    /* the value form: conditions each element must meet together */
    {"{'a': [1, 10]}", "{'a': {'$elemMatch': {'$gt': 5, '$lt': 8}}}", "0"},
    {"{'a': [1, 6]}", "{'a': {'$elemMatch': {'$gt': 5, '$lt': 8}}}", "1"},
    {"{'a': [1, 6]}", "{'a': {'$elemMatch': {'$not': {'$gt': 5}}}}", "1"},
    {"{'a': [6, 7]}", "{'a': {'$elemMatch': {'$not': {'$gt': 5}}}}", "0"},
    {"{'a': [6, 7]}", "{'a': {'$elemMatch': {'$ne': 6}}}", "1"},
    {"{'a': [6, 6]}", "{'a': {'$elemMatch': {'$ne': 6}}}", "0"},
    {"{'a': ['ab', 'cd']}", "{'a': {'$elemMatch': {'$regex': '^c'}}}", "1"},
    {"{'a': ['ab', 'cd']}", "{'a': {'$elemMatch': {'$in': ['x', 'cd']}}}", "1"},
    {"{'a': ['ab', 'cd']}", "{'a': {'$elemMatch': {'$nin': ['ab', 'cd']}}}", "0"},
    {"{'a': [[1, 2], [3]]}", "{'a': {'$elemMatch': {'$size': 1}}}", "1"},
    {"{'a': [[1, 2], [3]]}", "{'a': {'$elemMatch': {'$all': [1, 2]}}}", "0"},
    {"{'a': [[1, 2], [3]]}", "{'a': {'$elemMatch': {'$eq': [1, 2]}}}", "1"},
    {"{'a': [[1, 2], [3]]}", "{'a': {'$elemMatch': {'$eq': 1}}}", "0"},
    {"{'a': [7, 4]}", "{'a': {'$elemMatch': {'$mod': [2, 0]}}}", "1"},
    {"{'a': [null]}", "{'a': {'$elemMatch': {'$exists': false}}}", "0"},
    {"{'a': [null]}", "{'a': {'$elemMatch': {'$eq': null}}}", "1"},
    /* refusals */
    {"{}", "{'a': {'$elemMatch': 5}}", "PARSE:$elemMatch needs an Object"},
    {"{}", "{'a': {'$elemMatch': {'$gt': 1, 'b': 2}}}", "PARSE:unknown operator: b"},
    {"{}", "{'a': {'$elemMatch': {'$expr': {'$eq': [1, 1]}}}}", "PARSE:$expr can only be applied to the top-level document"},
    {"{}", "{'a': {'$elemMatch': {'$where': 'true'}}}", "PARSE:needs the server"},
    {NULL, NULL, NULL},
};

static const q_case_t mods[] = {
    /* $mod documentation: inventory quantities 0, 5, 12 */
    {"{'qty': 0}", "{'qty': {'$mod': [4, 0]}}", "1"},
    {"{'qty': 5}", "{'qty': {'$mod': [4, 0]}}", "0"},
    {"{'qty': 12}", "{'qty': {'$mod': [4, 0]}}", "1"},
    /* floating-point arguments truncate toward zero */
    {"{'qty': 12}", "{'qty': {'$mod': [4.0, 0]}}", "1"},
    {"{'qty': 12}", "{'qty': {'$mod': [4.5, 0]}}", "1"},
    {"{'qty': 12}", "{'qty': {'$mod': [4.99, 0]}}", "1"},
    {"{'qty': 12}", "{'qty': {'$mod': [{'$numberDecimal': '4.99'}, 0.9]}}", "1"},
    /* a negative dividend: the remainder takes its sign */
    {"{'qty': -5}", "{'qty': {'$mod': [4, -1]}}", "1"},
    {"{'qty': -5}", "{'qty': {'$mod': [4, 3]}}", "0"},
    {"{'qty': 5}", "{'qty': {'$mod': [-4, 1]}}", "1"},
    /* dividends of every numeric type; fractions dropped */
    {"{'qty': 12.9}", "{'qty': {'$mod': [4, 0]}}", "1"},
    {"{'qty': -12.9}", "{'qty': {'$mod': [4, 0]}}", "1"},
    {"{'qty': {'$numberLong': '9000000000000000001'}}", "{'qty': {'$mod': [10, 1]}}", "1"},
    {"{'qty': {'$numberDecimal': '13.7'}}", "{'qty': {'$mod': [4, 1]}}", "1"},
    {"{'qty': {'$numberDecimal': '1.3E+2'}}", "{'qty': {'$mod': [4, 2]}}", "1"},
    {"{'qty': {'$numberDouble': 'NaN'}}", "{'qty': {'$mod': [4, 0]}}", "0"},
    {"{'qty': {'$numberDouble': 'Infinity'}}", "{'qty': {'$mod': [4, 0]}}", "0"},
    {"{'qty': 1e30}", "{'qty': {'$mod': [4, 0]}}", "0"},
    {"{'qty': '12'}", "{'qty': {'$mod': [4, 0]}}", "0"},
    {"{}", "{'qty': {'$mod': [4, 0]}}", "0"},
    {"{'qty': [1, 8]}", "{'qty': {'$mod': [4, 0]}}", "1"},
    {"{'qty': {'$numberLong': '-9223372036854775808'}}", "{'qty': {'$mod': [-1, 0]}}", "1"},
    /* refusals */
    {"{}", "{'qty': {'$mod': [4]}}", "PARSE:malformed mod, not enough elements"},
    {"{}", "{'qty': {'$mod': []}}", "PARSE:malformed mod, not enough elements"},
    {"{}", "{'qty': {'$mod': [4, 1, 2]}}", "PARSE:malformed mod, too many elements"},
    {"{}", "{'qty': {'$mod': 4}}", "PARSE:malformed mod, needs to be an array"},
    {"{}", "{'qty': {'$mod': ['a', 1]}}", "PARSE:malformed mod, divisor not a number"},
    {"{}", "{'qty': {'$mod': [4, 'b']}}", "PARSE:malformed mod, remainder not a number"},
    {"{}", "{'qty': {'$mod': [0, 1]}}", "PARSE:divisor cannot be 0"},
    {"{}", "{'qty': {'$mod': [0.5, 1]}}", "PARSE:divisor cannot be 0"},
    {"{}", "{'qty': {'$mod': [{'$numberDouble': 'NaN'}, 1]}}", "PARSE:divisor value is invalid"},
    {"{}", "{'qty': {'$mod': [4, {'$numberDouble': 'Infinity'}]}}", "PARSE:remainder value is invalid"},
    {NULL, NULL, NULL},
};

static const q_case_t bits[] = {
    /* $bitsAllSet etc. documentation: a = 54 (00110110), 20 (00010100),
     * 20.0, BinData "Zg==" (01100110) */
    {"{'a': 54}", "{'a': {'$bitsAllSet': [1, 5]}}", "1"},
    {"{'a': 20}", "{'a': {'$bitsAllSet': [1, 5]}}", "0"},
    {"{'a': 20.0}", "{'a': {'$bitsAllSet': [1, 5]}}", "0"},
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAllSet': [1, 5]}}", "1"},
    {"{'a': 54}", "{'a': {'$bitsAllSet': 50}}", "1"},
    {"{'a': 20}", "{'a': {'$bitsAllSet': 50}}", "0"},
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAllSet': 50}}", "0"},
    {"{'a': 54}", "{'a': {'$bitsAllSet': {'$binary': {'base64': 'MA==', 'subType': '00'}}}}", "1"},
    {"{'a': 20}", "{'a': {'$bitsAllSet': {'$binary': {'base64': 'MA==', 'subType': '00'}}}}", "0"},
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAllSet': {'$binary': {'base64': 'MA==', 'subType': '00'}}}}", "0"},
    {"{'a': 54}", "{'a': {'$bitsAllClear': [1, 5]}}", "0"},
    {"{'a': 20}", "{'a': {'$bitsAllClear': [1, 5]}}", "1"},
    {"{'a': 20.0}", "{'a': {'$bitsAllClear': [1, 5]}}", "1"},
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAllClear': [1, 5]}}", "0"},
    {"{'a': 20}", "{'a': {'$bitsAllClear': 35}}", "1"},
    {"{'a': 54}", "{'a': {'$bitsAllClear': 35}}", "0"},
    {"{'a': 54}", "{'a': {'$bitsAnySet': [1, 5]}}", "1"},
    {"{'a': 20}", "{'a': {'$bitsAnySet': [1, 5]}}", "0"},
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAnySet': [1, 5]}}", "1"},
    {"{'a': 20}", "{'a': {'$bitsAnySet': 35}}", "0"},
    {"{'a': 54}", "{'a': {'$bitsAnySet': 35}}", "1"},
    {"{'a': 54}", "{'a': {'$bitsAnyClear': [1, 5]}}", "0"},
    {"{'a': 20}", "{'a': {'$bitsAnyClear': [1, 5]}}", "1"},
    {"{'a': 20.0}", "{'a': {'$bitsAnyClear': [1, 5]}}", "1"},
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAnyClear': [1, 5]}}", "0"},
    {"{'a': 54}", "{'a': {'$bitsAnyClear': 35}}", "1"},
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAnyClear': 35}}", "1"},
    /* negative numbers are sign-extended: bits past 63 are the sign */
    {"{'a': -1}", "{'a': {'$bitsAllSet': [0, 31, 63, 100]}}", "1"},
    {"{'a': 1}", "{'a': {'$bitsAllClear': [100, 200]}}", "1"},
    {"{'a': -2}", "{'a': {'$bitsAnyClear': [0]}}", "1"},
    {"{'a': {'$numberLong': '-9223372036854775808'}}", "{'a': {'$bitsAllSet': [63]}}", "1"},
    /* BinData values are zero-extended */
    {"{'a': {'$binary': {'base64': 'Zg==', 'subType': '00'}}}", "{'a': {'$bitsAllClear': [8, 100]}}", "1"},
    {"{'a': {'$binary': {'base64': 'AAE=', 'subType': '00'}}}", "{'a': {'$bitsAllSet': [8]}}", "1"},
    /* only integral numbers an int64 holds */
    {"{'a': 54.5}", "{'a': {'$bitsAnySet': [1]}}", "0"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'a': {'$bitsAllClear': [1]}}", "0"},
    {"{'a': 1e19}", "{'a': {'$bitsAllClear': [1]}}", "0"},
    {"{'a': {'$numberDecimal': '54'}}", "{'a': {'$bitsAllSet': [1, 5]}}", "1"},
    {"{'a': {'$numberDecimal': '54.5'}}", "{'a': {'$bitsAllSet': [1, 5]}}", "0"},
    {"{'a': {'$numberLong': '54'}}", "{'a': {'$bitsAllSet': [1, 5]}}", "1"},
    {"{'a': '54'}", "{'a': {'$bitsAllSet': [1, 5]}}", "0"},
    {"{}", "{'a': {'$bitsAllClear': [1]}}", "0"},
    {"{'a': [1, 54]}", "{'a': {'$bitsAllSet': [1, 5]}}", "1"},
    {"{'a': 54}", "{'a': {'$bitsAllSet': []}}", "1"},
    {"{'a': 54}", "{'a': {'$bitsAnySet': []}}", "0"},
    /* refusals */
    {"{}", "{'a': {'$bitsAllSet': -1}}", "PARSE:Expected a non-negative number"},
    {"{}", "{'a': {'$bitsAllSet': 1.5}}", "PARSE:Expected an integer"},
    {"{}", "{'a': {'$bitsAllSet': [-1]}}", "PARSE:Failed to parse bit position"},
    {"{}", "{'a': {'$bitsAllSet': ['x']}}", "PARSE:Failed to parse bit position"},
    {"{}", "{'a': {'$bitsAnySet': 'x'}}", "PARSE:$bitsAnySet takes an Array, a number, or a BinData"},
    {NULL, NULL, NULL},
};

static const q_case_t logic[] = {
    /* $and documentation */
    {"{'price': 1.99, 'sale': true}", "{'$and': [{'price': {'$ne': 1.99}}, {'price': {'$exists': true}}]}", "0"},
    {"{'price': 2.5}", "{'$and': [{'price': {'$ne': 1.99}}, {'price': {'$exists': true}}]}", "1"},
    {"{'qty': 5}", "{'$and': [{'$or': [{'qty': {'$lt': 10}}, {'qty': {'$gt': 50}}]}, {'$or': [{'sale': true}, {'price': {'$lt': 5}}]}]}", "0"},
    {"{'qty': 5, 'price': 1}", "{'$and': [{'$or': [{'qty': {'$lt': 10}}, {'qty': {'$gt': 50}}]}, {'$or': [{'sale': true}, {'price': {'$lt': 5}}]}]}", "1"},
    /* $or documentation */
    {"{'quantity': 15, 'price': 20}", "{'$or': [{'quantity': {'$lt': 20}}, {'price': 10}]}", "1"},
    {"{'quantity': 25, 'price': 10}", "{'$or': [{'quantity': {'$lt': 20}}, {'price': 10}]}", "1"},
    {"{'quantity': 25, 'price': 20}", "{'$or': [{'quantity': {'$lt': 20}}, {'price': 10}]}", "0"},
    {"{}", "{'$or': [{'quantity': {'$lt': 20}}, {'price': 10}]}", "0"},
    /* $nor documentation: missing fields satisfy it */
    {"{'price': 1.99, 'sale': true}", "{'$nor': [{'price': 1.99}, {'sale': true}]}", "0"},
    {"{'price': 1.99, 'sale': false}", "{'$nor': [{'price': 1.99}, {'sale': true}]}", "0"},
    {"{'price': 2, 'sale': false}", "{'$nor': [{'price': 1.99}, {'sale': true}]}", "1"},
    {"{'sale': false}", "{'$nor': [{'price': 1.99}, {'sale': true}]}", "1"},
    {"{}", "{'$nor': [{'price': 1.99}, {'sale': true}]}", "1"},
    {"{'price': 1.99}", "{'$nor': [{'price': 1.99}, {'price': {'$exists': false}}, {'sale': true}, {'sale': {'$exists': false}}]}", "0"},
    {"{'price': 2, 'sale': false}", "{'$nor': [{'price': 1.99}, {'price': {'$exists': false}}, {'sale': true}, {'sale': {'$exists': false}}]}", "1"},
    /* nesting, and a field beside an operator */
    {"{'a': 1, 'b': 2}", "{'a': 1, '$or': [{'b': 2}, {'b': 3}]}", "1"},
    {"{'a': 2, 'b': 2}", "{'a': 1, '$or': [{'b': 2}, {'b': 3}]}", "0"},
    {"{'a': 1}", "{'$and': [{'$and': [{'$and': [{'a': 1}]}]}]}", "1"},
    {"{'a': 1}", "{'$comment': 'why this filter', 'a': 1}", "1"},
    {"{'a': 2}", "{'$comment': 'why this filter', 'a': 1}", "0"},
    {"{'a': 1}", "{'$alwaysTrue': 1}", "1"},
    {"{'a': 1}", "{'$alwaysFalse': 1}", "0"},
    /* refusals */
    {"{}", "{'$or': []}", "PARSE:$and/$or/$nor must be a nonempty array"},
    {"{}", "{'$and': {'a': 1}}", "PARSE:$and must be an array"},
    {"{}", "{'$or': [1]}", "PARSE:$or/$and/$nor entries need to be full objects"},
    {"{}", "{'$nosuch': 1}", "PARSE:unknown top level operator: $nosuch"},
    {"{}", "{'a': {'$nosuch': 1}}", "PARSE:unknown operator: $nosuch"},
    {"{}", "{'a': {'$gt': 1, 'b': 1}}", "PARSE:unknown operator: b"},
    {"{}", "{'$alwaysTrue': 2}", "PARSE:must be an integer value of 1"},
    {NULL, NULL, NULL},
};

static const q_case_t exprs[] = {
    /* $expr documentation: monthlyBudget */
    {"{'category': 'food', 'budget': 400, 'spent': 450}", "{'$expr': {'$gt': ['$spent', '$budget']}}", "1"},
    {"{'category': 'drinks', 'budget': 100, 'spent': 150}", "{'$expr': {'$gt': ['$spent', '$budget']}}", "1"},
    {"{'category': 'clothes', 'budget': 100, 'spent': 50}", "{'$expr': {'$gt': ['$spent', '$budget']}}", "0"},
    {"{'category': 'misc', 'budget': 500, 'spent': 300}", "{'$expr': {'$gt': ['$spent', '$budget']}}", "0"},
    /* in an expression missing is not null */
    {"{}", "{'$expr': {'$eq': ['$nope', null]}}", "0"},
    {"{'a': 1}", "{'$expr': {'$and': [{'$eq': ['$a', 1]}, {'$lt': ['$a', 2]}]}, 'a': 1}", "1"},
    /* truthiness of the result */
    {"{'a': 1}", "{'$expr': '$a'}", "1"},
    {"{'a': 0}", "{'$expr': '$a'}", "0"},
    {"{'a': {'$numberDecimal': '0.0'}}", "{'$expr': '$a'}", "0"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'$expr': '$a'}", "1"},
    {"{'a': null}", "{'$expr': '$a'}", "0"},
    {"{'a': {'$undefined': true}}", "{'$expr': '$a'}", "0"},
    {"{}", "{'$expr': '$a'}", "0"},
    {"{'a': ''}", "{'$expr': '$a'}", "1"},
    {"{'a': []}", "{'$expr': '$a'}", "1"},
    {"{'a': {}}", "{'$expr': '$a'}", "1"},
    {"{'a': false}", "{'$expr': '$a'}", "0"},
    {"{}", "{'$expr': true}", "1"},
    {"{}", "{'$expr': false}", "0"},
    {"{'a': 5}", "{'$or': [{'$expr': {'$lt': ['$a', 3]}}, {'$expr': {'$gt': ['$a', 4]}}]}", "1"},
    {"{'a': 5}", "{'$nor': [{'$expr': {'$gt': ['$a', 4]}}]}", "0"},
    /* the expression's own refusals */
    {"{}", "{'$expr': {'$nosuch': 1}}", "PARSE:$nosuch"},
    {"{}", "{'$expr': {'$rand': {}}}", "PARSE:$rand"},
    {NULL, NULL, NULL},
};

static const q_case_t refused[] = {
    {"{}", "{'$where': 'this.a > 1'}", "PARSE:$where is not supported: it needs the server"},
    {"{}", "{'a': {'$where': 'this.a > 1'}}", "PARSE:$where is not supported: it needs the server"},
    {"{}", "{'$text': {'$search': 'coffee'}}", "PARSE:$text is not supported: it needs the server"},
    {"{}", "{'loc': {'$near': [0, 0]}}", "PARSE:$near is not supported: it needs the server"},
    {"{}", "{'loc': {'$nearSphere': [0, 0]}}", "PARSE:$nearSphere is not supported: it needs the server"},
    {"{}", "{'loc': {'$geoWithin': {'$box': [[0, 0], [1, 1]]}}}", "PARSE:$geoWithin is not supported: it needs the server"},
    {"{}", "{'loc': {'$geoIntersects': {'$geometry': {'type': 'Point', 'coordinates': [0, 0]}}}}", "PARSE:$geoIntersects is not supported: it needs the server"},
    {"{}", "{'loc': {'$within': {'$box': [[0, 0], [1, 1]]}}}", "PARSE:$within is not supported: it needs the server"},
    {"{}", "{'$sampleRate': 0.5}", "PARSE:$sampleRate is not supported: it needs the server"},
    {"{}", "{'$rand': {}}", "PARSE:$rand is not supported: it needs the server"},
    {"{}", "{'$or': [{'$where': 'true'}]}", "PARSE:$where is not supported"},
    {NULL, NULL, NULL},
};

static void test_equality (void) { Q_TABLE (equality); }
static void test_paths (void) { Q_TABLE (paths); }
static void test_comparisons (void) { Q_TABLE (comparisons); }
static void test_negations (void) { Q_TABLE (negations); }
static void test_in (void) { Q_TABLE (ins); }
static void test_type (void) { Q_TABLE (types); }
static void test_regex (void) { Q_TABLE (regexes); }
static void test_size (void) { Q_TABLE (sizes); }
static void test_all (void) { Q_TABLE (alls); }
static void test_elem_match (void) { Q_TABLE (elem_matches); }
static void test_mod (void) { Q_TABLE (mods); }
static void test_bits (void) { Q_TABLE (bits); }
static void test_logic (void) { Q_TABLE (logic); }
static void test_expr (void) { Q_TABLE (exprs); }
static void test_refused (void) { Q_TABLE (refused); }

/* ---- The rest of the face ----------------------------------------------- */

static rm_query_t *
parse_text (const char *json)
{
    bson_t *qd = q_json (json), holder = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t err;
    rm_query_t *q;
    bson_append_document (&holder, "q", 1, qd);
    bson_iter_init_find (&it, &holder, "q");
    q = rm_query_parse (&it, &err);
    if (!q)
        fprintf (stderr, "  parse of %s failed: %s\n", json, err.message);
    bson_destroy (&holder);
    bson_destroy (qd);
    return q;
}

static void
collect (const rm_path_t *p, void *arg)
{
    char *out = arg;
    if (*out)
        strcat (out, ",");
    strcat (out, p->text);
}

static void
test_needs_fields (void)
{
    static const struct {
        const char *query, *want;
    } cases[] = {
        {"{'schemaVersion': {'$lt': 2}}", "schemaVersion"},
        {"{'schemaVersion': null}", ""},
        {"{'schemaVersion': {'$exists': false}}", ""},
        {"{'schemaVersion': {'$ne': 2}}", ""},
        {"{'schemaVersion': {'$nin': [2]}}", ""},
        {"{'schemaVersion': {'$in': [1, null]}}", ""},
        {"{'schemaVersion': {'$in': [1, 2]}}", "schemaVersion"},
        {"{'a': 1, 'b.c': {'$gt': 1, '$lt': 5}, 'd': {'$lte': null}}", "a,b.c"},
        {"{'a': {'$not': {'$gt': 1}}, 'b': {'$type': 'string'}, 'c': {'$regex': 'x'}}", "b,c"},
        {"{'a': {'$size': 0}, 'b': {'$all': []}, 'c': {'$elemMatch': {}}}", "a,b,c"},
        {"{'a': {'$lt': {'$maxKey': 1}}}", ""},
        {"{'$or': [{'a': 1}, {'b': 1}], '$expr': {'$eq': ['$a', 1]}}", ""},
        {"{'a': {'$exists': true}, 'b': {'$mod': [2, 0]}, 'c': {'$bitsAllClear': [1]}}", "a,b,c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[256] = "";
        rm_query_t *q = parse_text (cases[i].query);
        T_CHECK (q != NULL);
        if (!q)
            continue;
        rm_query_needs_fields (q, collect, got);
        T_CHECK_STR (got, cases[i].want);
        rm_query_destroy (q);
    }
}

static void
test_paths_listed (void)
{
    char got[256] = "";
    bool whole = true;
    rm_query_t *q = parse_text ("{'a.b': 1, '$or': [{'c': {'$ne': 1}}, {'d': {'$elemMatch': {'e': 1}}}], "
                                "'$expr': {'$gt': ['$f', '$g.h']}, 'i': {'$in': [{'$regularExpression': {'pattern': 'x', 'options': ''}}]}}");
    T_CHECK (q != NULL);
    if (!q)
        return;
    rm_query_paths (q, collect, got, &whole);
    T_CHECK_STR (got, "a.b,c,d,f,g.h,i");
    T_CHECK (!whole);
    rm_query_destroy (q);

    got[0] = '\0';
    q = parse_text ("{'$expr': {'$eq': ['$$ROOT', {}]}}");
    T_CHECK (q != NULL);
    if (!q)
        return;
    rm_query_paths (q, collect, got, &whole);
    T_CHECK (whole);
    rm_query_destroy (q);
}

static void
test_not_a_document (void)
{
    bson_t holder = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t err;
    BSON_APPEND_INT32 (&holder, "q", 1);
    bson_iter_init_find (&it, &holder, "q");
    T_CHECK (rm_query_parse (&it, &err) == NULL);
    T_CHECK (strstr (err.message, "must be a document") != NULL);
    bson_destroy (&holder);
}

/* The same compiled query over many documents, one context reset between
 * them, and a regex matched over and over in the call's own arena. */
static void
test_reuse (void)
{
    rm_query_t *q = parse_text ("{'tags': {'$regex': '^s'}, 'n': {'$gte': 10}, '$expr': {'$lt': ['$n', 1000]}}");
    rm_expr_ctx_t *cx = rm_expr_ctx_new (Q_NOW);
    int hits = 0;
    T_CHECK (q != NULL);
    if (!q)
        return;
    for (int i = 0; i < 2000; i++) {
        bson_t d = BSON_INITIALIZER, arr;
        bson_error_t err;
        bool m;
        char key[16];
        int k = 0;
        BSON_APPEND_ARRAY_BEGIN (&d, "tags", &arr);
        BSON_APPEND_UTF8 (&arr, t_key_next (key, sizeof key, &k), "alpha");
        BSON_APPEND_UTF8 (&arr, t_key_next (key, sizeof key, &k), i % 3 ? "beta" : "school");
        bson_append_array_end (&d, &arr);
        BSON_APPEND_INT32 (&d, "n", i);
        rm_expr_ctx_reset (cx);
        T_CHECK (rm_query_match (q, cx, bson_get_data (&d), d.len, &m, &err));
        hits += m;
        bson_destroy (&d);
    }
    /* i in [10, 999] with i % 3 == 0: 12, 15, ..., 999 */
    T_CHECK (hits == (999 - 12) / 3 + 1);
    rm_expr_ctx_destroy (cx);
    rm_query_destroy (q);
}

int
main (void)
{
    T_RUN (test_equality);
    T_RUN (test_null_semantics);
    T_RUN (test_elem_match_value);
    T_RUN (test_paths);
    T_RUN (test_comparisons);
    T_RUN (test_negations);
    T_RUN (test_in);
    T_RUN (test_type);
    T_RUN (test_regex);
    T_RUN (test_size);
    T_RUN (test_all);
    T_RUN (test_elem_match);
    T_RUN (test_mod);
    T_RUN (test_bits);
    T_RUN (test_logic);
    T_RUN (test_expr);
    T_RUN (test_refused);
    T_RUN (test_needs_fields);
    T_RUN (test_paths_listed);
    T_RUN (test_not_a_document);
    T_RUN (test_reuse);
    return t_done ();
}
