/* $jsonSchema in the query layer: the cases of MongoDB's documentation
 * ($jsonSchema's query page, "Schema Validation" and its guides), then
 * each keyword's rule as the server applies it, then the refusals. */
#include "query_case.h"

/* The query page's inventory, as mongosh writes it (its numbers are
 * doubles, qty is NumberInt): the schema matches journal, notebook,
 * postcard, apple and pears; paper and planner have instock: 1. */
#define INVENTORY_SCHEMA                                                                        \
    "{'required': ['item', 'qty', 'instock'], 'properties': {'item': {'bsonType': 'string'}, "   \
    "'qty': {'bsonType': 'int'}, 'size': {'bsonType': 'object', 'required': ['uom'], "          \
    "'properties': {'uom': {'bsonType': 'string'}, 'h': {'bsonType': 'double'}, 'w': "          \
    "{'bsonType': 'double'}}}, 'instock': {'bsonType': 'bool'}}}"

static const q_case_t documented[] = {
    {"{'item': 'journal', 'qty': 25, 'size': {'h': 14.0, 'w': 21.0, 'uom': 'cm'}, 'instock': true}", "{'$jsonSchema': " INVENTORY_SCHEMA "}", "1"},
    {"{'item': 'notebook', 'qty': 50, 'size': {'h': 8.5, 'w': 11.0, 'uom': 'in'}, 'instock': true}", "{'$jsonSchema': " INVENTORY_SCHEMA "}", "1"},
    {"{'item': 'paper', 'qty': 100, 'size': {'h': 8.5, 'w': 11.0, 'uom': 'in'}, 'instock': 1.0}", "{'$jsonSchema': " INVENTORY_SCHEMA "}", "0"},
    {"{'item': 'planner', 'qty': 75, 'size': {'h': 22.85, 'w': 30.0, 'uom': 'cm'}, 'instock': 1.0}", "{'$jsonSchema': " INVENTORY_SCHEMA "}", "0"},
    {"{'item': 'postcard', 'qty': 45, 'size': {'h': 10.0, 'w': 15.25, 'uom': 'cm'}, 'instock': true}", "{'$jsonSchema': " INVENTORY_SCHEMA "}", "1"},
    {"{'item': 'apple', 'qty': 45, 'status': 'A', 'instock': true}", "{'$jsonSchema': " INVENTORY_SCHEMA "}", "1"},
    {"{'item': 'pears', 'qty': 50, 'status': 'A', 'instock': true}", "{'$jsonSchema': " INVENTORY_SCHEMA "}", "1"},
    /* ... and $nor gives the other two */
    {"{'item': 'paper', 'qty': 100, 'size': {'h': 8.5, 'w': 11.0, 'uom': 'in'}, 'instock': 1.0}", "{'$nor': [{'$jsonSchema': " INVENTORY_SCHEMA "}]}", "1"},
    {"{'item': 'pears', 'qty': 50, 'status': 'A', 'instock': true}", "{'$nor': [{'$jsonSchema': " INVENTORY_SCHEMA "}]}", "0"},
    /* "Specify JSON Schema Validation": a gpa of Int32(3) fails bsonType
     * ['double'], Double(3) passes; year is an int within its bounds */
    {"{'name': 'Alice', 'year': 2019, 'major': 'History', 'gpa': 3, 'address': {'city': 'NYC', 'street': '33rd Street'}}",
     "{'$jsonSchema': {'bsonType': 'object', 'title': 'Student Object Validation', 'required': ['address', 'major', 'name', 'year'], 'properties': {'name': {'bsonType': 'string', 'description': 'must be a string'}, 'year': {'bsonType': 'int', 'minimum': 2017, 'maximum': 3017}, 'gpa': {'bsonType': ['double']}}}}", "0"},
    {"{'name': 'Alice', 'year': 2019, 'major': 'History', 'gpa': 3.0, 'address': {'city': 'NYC', 'street': '33rd Street'}}",
     "{'$jsonSchema': {'bsonType': 'object', 'title': 'Student Object Validation', 'required': ['address', 'major', 'name', 'year'], 'properties': {'name': {'bsonType': 'string', 'description': 'must be a string'}, 'year': {'bsonType': 'int', 'minimum': 2017, 'maximum': 3017}, 'gpa': {'bsonType': ['double']}}}}", "1"},
    {"{'name': 'Alice', 'year': 3018, 'major': 'History', 'address': {}}",
     "{'$jsonSchema': {'required': ['address', 'major', 'name', 'year'], 'properties': {'year': {'bsonType': 'int', 'minimum': 2017, 'maximum': 3017}}}}", "0"},
    /* the query page's students: an address without its zipcode fails */
    {"{'name': 'Alice', 'major': 'History', 'gpa': 3.0, 'address': {'city': 'NYC', 'street': '33rd Street'}}",
     "{'$jsonSchema': {'required': ['name', 'major', 'gpa', 'address'], 'properties': {'name': {'bsonType': 'string'}, 'address': {'bsonType': 'object', 'required': ['zipcode'], 'properties': {'street': {'bsonType': 'string'}, 'zipcode': {'bsonType': 'string'}}}}}}", "0"},
    {"{'name': 'Alice', 'major': 'History', 'gpa': 3.0, 'address': {'zipcode': '10001'}}",
     "{'$jsonSchema': {'required': ['name', 'major', 'gpa', 'address'], 'properties': {'name': {'bsonType': 'string'}, 'address': {'bsonType': 'object', 'required': ['zipcode'], 'properties': {'street': {'bsonType': 'string'}, 'zipcode': {'bsonType': 'string'}}}}}}", "1"},
    /* "Specify Allowed Field Values": enum */
    {"{'name': 'x', 'shipping': {'country': 'Germany'}}", "{'$jsonSchema': {'properties': {'shipping': {'properties': {'country': {'enum': ['USA', 'Canada', 'Mexico']}}}}}}", "0"},
    {"{'name': 'x', 'shipping': {'country': 'Canada'}}", "{'$jsonSchema': {'properties': {'shipping': {'properties': {'country': {'enum': ['USA', 'Canada', 'Mexico']}}}}}}", "1"},
    /* "Validate Against Null Field Values": null is not a string */
    {"{'name': null}", "{'$jsonSchema': {'properties': {'name': {'bsonType': 'string'}}}}", "0"},
    {"{'name': null}", "{'$jsonSchema': {'properties': {'name': {'bsonType': ['string', 'null']}}}}", "1"},
    {"{}", "{'$jsonSchema': {'properties': {'name': {'bsonType': 'string'}}}}", "1"},
    /* "Specify Validation With Additional Properties": _id must be listed */
    {"{'_id': {'$oid': '65a000000000000000000001'}, 'name': 'x', 'year': 2020}", "{'$jsonSchema': {'additionalProperties': false, 'properties': {'name': {'bsonType': 'string'}, 'year': {'bsonType': 'int'}}}}", "0"},
    {"{'_id': {'$oid': '65a000000000000000000001'}, 'name': 'x', 'year': 2020}", "{'$jsonSchema': {'additionalProperties': false, 'properties': {'_id': {'bsonType': 'objectId'}, 'name': {'bsonType': 'string'}, 'year': {'bsonType': 'int'}}}}", "1"},
    {"{'_id': {'$oid': '65a000000000000000000001'}, 'name': 'x', 'year': 2020, 'extra': 1}", "{'$jsonSchema': {'additionalProperties': false, 'properties': {'_id': {'bsonType': 'objectId'}, 'name': {'bsonType': 'string'}, 'year': {'bsonType': 'int'}}}}", "0"},
    /* "Tips for JSON Schema Validation": without _id in properties,
     * additionalProperties: false rejects every document */
    {"{'_id': {'$oid': '65a000000000000000000002'}, 'storeLocation': 'Denver'}", "{'$jsonSchema': {'required': ['_id', 'storeLocation'], 'properties': {'storeLocation': {'bsonType': 'string'}}, 'additionalProperties': false}}", "0"},
    {"{'_id': {'$oid': '65a000000000000000000002'}, 'storeLocation': 'Denver'}", "{'$jsonSchema': {'required': ['_id', 'storeLocation'], 'properties': {'_id': {'bsonType': 'objectId'}, 'storeLocation': {'bsonType': 'string'}}, 'additionalProperties': false}}", "1"},
    {"{'storeLocation': null}", "{'$jsonSchema': {'properties': {'storeLocation': {'bsonType': 'string'}}}}", "0"},
    {"{'storeLocation': null}", "{'$jsonSchema': {'properties': {'storeLocation': {'bsonType': ['null', 'string']}}}}", "1"},
    /* the operator's introduction (SERVER-30191): stringsOnly */
    {"{'str': 'foo'}", "{'$jsonSchema': {'properties': {'str': {'type': 'string'}}}}", "1"},
    {"{'str': 1}", "{'$jsonSchema': {'properties': {'str': {'type': 'string'}}}}", "0"},
    /* a property's name is a field's name, never a path */
    {"{'address': {'city': 5}}", "{'$jsonSchema': {'properties': {'address.city': {'bsonType': 'string'}}}}", "1"},
    {"{'address.city': 5}", "{'$jsonSchema': {'properties': {'address.city': {'bsonType': 'string'}}}}", "0"},
    {NULL, NULL, NULL},
};

static const q_case_t types[] = {
    /* "number" is every numeric type, in type and in bsonType */
    {"{'a': 1}", "{'$jsonSchema': {'properties': {'a': {'type': 'number'}}}}", "1"},
    {"{'a': {'$numberLong': '1'}}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'number'}}}}", "1"},
    {"{'a': {'$numberDecimal': '1.5'}}", "{'$jsonSchema': {'properties': {'a': {'type': 'number'}}}}", "1"},
    {"{'a': '1'}", "{'$jsonSchema': {'properties': {'a': {'type': 'number'}}}}", "0"},
    {"{'a': 1.5}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'int'}}}}", "0"},
    {"{'a': {'$numberLong': '1'}}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'long'}}}}", "1"},
    {"{'a': true}", "{'$jsonSchema': {'properties': {'a': {'type': 'boolean'}}}}", "1"},
    {"{'a': true}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'bool'}}}}", "1"},
    {"{'a': {'$date': '2024-01-02T03:04:05Z'}}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'date'}}}}", "1"},
    {"{'a': {'$date': '2024-01-02T03:04:05Z'}}", "{'$jsonSchema': {'properties': {'a': {'type': 'string'}}}}", "0"},
    {"{'a': null}", "{'$jsonSchema': {'properties': {'a': {'type': ['string', 'null']}}}}", "1"},
    {"{'a': {'$minKey': 1}}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'minKey'}}}}", "1"},
    /* no walk into arrays: the array itself is tested */
    {"{'a': [1, 2]}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'int'}}}}", "0"},
    {"{'a': [1, 2]}", "{'$jsonSchema': {'properties': {'a': {'bsonType': 'array'}}}}", "1"},
    {"{'a': [{'b': 1}]}", "{'$jsonSchema': {'properties': {'a': {'properties': {'b': {'bsonType': 'string'}}}}}}", "1"},
    /* a document is an object: a top-level type without it matches nothing */
    {"{'a': 1}", "{'$jsonSchema': {'type': 'object'}}", "1"},
    {"{'a': 1}", "{'$jsonSchema': {'type': 'array'}}", "0"},
    {"{'a': 1}", "{'$jsonSchema': {}}", "1"},
    {NULL, NULL, NULL},
};

static const q_case_t objects[] = {
    {"{'a': 1, 'b': 2}", "{'$jsonSchema': {'minProperties': 2, 'maxProperties': 2}}", "1"},
    {"{'a': 1, 'b': 2}", "{'$jsonSchema': {'minProperties': 3}}", "0"},
    {"{'a': 1, 'b': 2}", "{'$jsonSchema': {'maxProperties': 1.0}}", "0"},
    {"{'s': {'x_1': 1, 'x_2': 'two'}}", "{'$jsonSchema': {'properties': {'s': {'patternProperties': {'^x_': {'bsonType': 'int'}}}}}}", "0"},
    {"{'s': {'x_1': 1, 'y': 'two'}}", "{'$jsonSchema': {'properties': {'s': {'patternProperties': {'^x_': {'bsonType': 'int'}}}}}}", "1"},
    /* a property named or matched by a pattern is not additional */
    {"{'s': {'x_1': 1, 'n': 2}}", "{'$jsonSchema': {'properties': {'s': {'properties': {'n': {}}, 'patternProperties': {'^x_': {}}, 'additionalProperties': false}}}}", "1"},
    {"{'s': {'x_1': 1, 'n': 2, 'o': 3}}", "{'$jsonSchema': {'properties': {'s': {'properties': {'n': {}}, 'patternProperties': {'^x_': {}}, 'additionalProperties': false}}}}", "0"},
    {"{'s': {'n': 2, 'o': 'three'}}", "{'$jsonSchema': {'properties': {'s': {'properties': {'n': {}}, 'additionalProperties': {'bsonType': 'int'}}}}}", "0"},
    {"{'s': {'n': 'two', 'o': 3}}", "{'$jsonSchema': {'properties': {'s': {'properties': {'n': {}}, 'additionalProperties': {'bsonType': 'int'}}}}}", "1"},
    /* object keywords hold for a value that is no object */
    {"{'s': 5}", "{'$jsonSchema': {'properties': {'s': {'required': ['x'], 'minProperties': 3}}}}", "1"},
    /* dependencies: a list of fields, or a schema */
    {"{'card': 1}", "{'$jsonSchema': {'dependencies': {'card': ['billing']}}}", "0"},
    {"{'card': 1, 'billing': 'x'}", "{'$jsonSchema': {'dependencies': {'card': ['billing']}}}", "1"},
    {"{'other': 1}", "{'$jsonSchema': {'dependencies': {'card': ['billing']}}}", "1"},
    {"{'card': 1}", "{'$jsonSchema': {'dependencies': {'card': {'required': ['billing']}}}}", "0"},
    {"{'card': 1, 'billing': 2}", "{'$jsonSchema': {'dependencies': {'card': {'properties': {'billing': {'bsonType': 'string'}}}}}}", "0"},
    {NULL, NULL, NULL},
};

static const q_case_t arrays[] = {
    {"{'a': [1, 2, 3]}", "{'$jsonSchema': {'properties': {'a': {'items': {'bsonType': 'int'}}}}}", "1"},
    {"{'a': [1, 'x']}", "{'$jsonSchema': {'properties': {'a': {'items': {'bsonType': 'int'}}}}}", "0"},
    {"{'a': [1, 'x']}", "{'$jsonSchema': {'properties': {'a': {'items': [{'bsonType': 'int'}, {'bsonType': 'string'}]}}}}", "1"},
    {"{'a': [1, 'x', 3]}", "{'$jsonSchema': {'properties': {'a': {'items': [{'bsonType': 'int'}, {'bsonType': 'string'}]}}}}", "1"},
    {"{'a': [1, 'x', 3]}", "{'$jsonSchema': {'properties': {'a': {'items': [{'bsonType': 'int'}, {'bsonType': 'string'}], 'additionalItems': false}}}}", "0"},
    {"{'a': [1, 'x', 3]}", "{'$jsonSchema': {'properties': {'a': {'items': [{'bsonType': 'int'}, {'bsonType': 'string'}], 'additionalItems': {'bsonType': 'int'}}}}}", "1"},
    {"{'a': [1, 'x', 'y']}", "{'$jsonSchema': {'properties': {'a': {'items': [{'bsonType': 'int'}, {'bsonType': 'string'}], 'additionalItems': {'bsonType': 'int'}}}}}", "0"},
    /* additionalItems alone, or beside items' object form, means nothing */
    {"{'a': [1, 2]}", "{'$jsonSchema': {'properties': {'a': {'additionalItems': false}}}}", "1"},
    {"{'a': [1, 2]}", "{'$jsonSchema': {'properties': {'a': {'items': {}, 'additionalItems': false}}}}", "1"},
    {"{'a': [1]}", "{'$jsonSchema': {'properties': {'a': {'minItems': 2}}}}", "0"},
    {"{'a': [1, 2, 3]}", "{'$jsonSchema': {'properties': {'a': {'maxItems': 2}}}}", "0"},
    {"{'a': [1, 2]}", "{'$jsonSchema': {'properties': {'a': {'minItems': 2, 'maxItems': 2}}}}", "1"},
    /* uniqueItems: numbers by value, documents in any field order */
    {"{'a': [1, 2]}", "{'$jsonSchema': {'properties': {'a': {'uniqueItems': true}}}}", "1"},
    {"{'a': [1, 1.0]}", "{'$jsonSchema': {'properties': {'a': {'uniqueItems': true}}}}", "0"},
    {"{'a': [1, '1']}", "{'$jsonSchema': {'properties': {'a': {'uniqueItems': true}}}}", "1"},
    {"{'a': [{'x': 1, 'y': 2}, {'y': 2, 'x': 1}]}", "{'$jsonSchema': {'properties': {'a': {'uniqueItems': true}}}}", "0"},
    {"{'a': [1, 1]}", "{'$jsonSchema': {'properties': {'a': {'uniqueItems': false}}}}", "1"},
    {NULL, NULL, NULL},
};

static const q_case_t scalars[] = {
    /* enum: numbers by value, documents in any field order */
    {"{'a': 2.0}", "{'$jsonSchema': {'properties': {'a': {'enum': [1, 2]}}}}", "1"},
    {"{'a': {'x': 1, 'y': 2}}", "{'$jsonSchema': {'properties': {'a': {'enum': [{'y': 2, 'x': 1}]}}}}", "1"},
    {"{'a': [1, 2]}", "{'$jsonSchema': {'properties': {'a': {'enum': [[2, 1]]}}}}", "0"},
    {"{'a': 1}", "{'$jsonSchema': {'enum': [{'a': 1}]}}", "1"},
    /* bounds, exclusive by a boolean (draft 4) */
    {"{'a': 5}", "{'$jsonSchema': {'properties': {'a': {'minimum': 5}}}}", "1"},
    {"{'a': 5}", "{'$jsonSchema': {'properties': {'a': {'minimum': 5, 'exclusiveMinimum': true}}}}", "0"},
    {"{'a': 5.5}", "{'$jsonSchema': {'properties': {'a': {'minimum': 5, 'exclusiveMinimum': true}}}}", "1"},
    {"{'a': {'$numberLong': '10'}}", "{'$jsonSchema': {'properties': {'a': {'maximum': 10.0, 'exclusiveMaximum': true}}}}", "0"},
    {"{'a': {'$numberDecimal': '9.99'}}", "{'$jsonSchema': {'properties': {'a': {'maximum': 10, 'exclusiveMaximum': true}}}}", "1"},
    {"{'a': {'$numberDouble': 'NaN'}}", "{'$jsonSchema': {'properties': {'a': {'minimum': 0}}}}", "0"},
    /* a number's keywords hold for a string */
    {"{'a': 'abc'}", "{'$jsonSchema': {'properties': {'a': {'minimum': 5, 'multipleOf': 2}}}}", "1"},
    /* multipleOf divides exactly, in decimal */
    {"{'a': 6}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': 3}}}}", "1"},
    {"{'a': 7}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': 3}}}}", "0"},
    {"{'a': 0.3}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': 0.1}}}}", "1"},
    {"{'a': 0.35}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': 0.1}}}}", "0"},
    {"{'a': {'$numberDecimal': '1.25'}}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': {'$numberDecimal': '0.25'}}}}}", "1"},
    {"{'a': 300}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': 1.5}}}}", "1"},
    {"{'a': 2}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': 300}}}}", "0"},
    {"{'a': {'$numberDouble': 'Infinity'}}", "{'$jsonSchema': {'properties': {'a': {'multipleOf': 1}}}}", "0"},
    /* lengths in code points; pattern unanchored */
    {"{'a': '\u00e9\u20ac'}", "{'$jsonSchema': {'properties': {'a': {'maxLength': 2}}}}", "1"},
    {"{'a': '\u00e9\u20ac'}", "{'$jsonSchema': {'properties': {'a': {'minLength': 3}}}}", "0"},
    {"{'a': 'abc'}", "{'$jsonSchema': {'properties': {'a': {'pattern': 'b'}}}}", "1"},
    {"{'a': 'abc'}", "{'$jsonSchema': {'properties': {'a': {'pattern': '^b'}}}}", "0"},
    {"{'a': 5}", "{'$jsonSchema': {'properties': {'a': {'pattern': '^b', 'minLength': 9}}}}", "1"},
    {NULL, NULL, NULL},
};

static const q_case_t logic[] = {
    {"{'a': 5}", "{'$jsonSchema': {'properties': {'a': {'allOf': [{'minimum': 1}, {'maximum': 9}]}}}}", "1"},
    {"{'a': 10}", "{'$jsonSchema': {'properties': {'a': {'allOf': [{'minimum': 1}, {'maximum': 9}]}}}}", "0"},
    {"{'a': 'x'}", "{'$jsonSchema': {'properties': {'a': {'anyOf': [{'bsonType': 'int'}, {'bsonType': 'string'}]}}}}", "1"},
    {"{'a': true}", "{'$jsonSchema': {'properties': {'a': {'anyOf': [{'bsonType': 'int'}, {'bsonType': 'string'}]}}}}", "0"},
    /* oneOf: exactly one */
    {"{'a': 5}", "{'$jsonSchema': {'properties': {'a': {'oneOf': [{'minimum': 1}, {'maximum': 9}]}}}}", "0"},
    {"{'a': 10}", "{'$jsonSchema': {'properties': {'a': {'oneOf': [{'minimum': 1}, {'maximum': 9}]}}}}", "1"},
    {"{'a': 5}", "{'$jsonSchema': {'properties': {'a': {'not': {'bsonType': 'int'}}}}}", "0"},
    {"{'a': '5'}", "{'$jsonSchema': {'properties': {'a': {'not': {'bsonType': 'int'}}}}}", "1"},
    /* beside other conditions, and in $or */
    {"{'a': 5, 'b': 1}", "{'b': 1, '$jsonSchema': {'required': ['a']}}", "1"},
    {"{'a': 5, 'b': 2}", "{'b': 1, '$jsonSchema': {'required': ['a']}}", "0"},
    {"{'b': 1}", "{'$or': [{'$jsonSchema': {'required': ['a']}}, {'b': 1}]}", "1"},
    {NULL, NULL, NULL},
};

static const q_case_t refused[] = {
    {"{}", "{'$jsonSchema': {'type': 'integer'}}", "PARSE:$jsonSchema type 'integer' is not currently supported"},
    {"{}", "{'$jsonSchema': {'properties': {'a': {'type': 'integer'}}}}", "PARSE:'integer' is not currently supported"},
    {"{}", "{'$jsonSchema': {'type': 'int'}}", "PARSE:Unknown JSON Schema alias: int"},
    {"{}", "{'$jsonSchema': {'bsonType': 'integer'}}", "PARSE:Unknown type name alias: integer"},
    {"{}", "{'$jsonSchema': {'type': 'object', 'bsonType': 'object'}}", "PARSE:Cannot specify both $jsonSchema keywords 'type' and 'bsonType'"},
    {"{}", "{'$jsonSchema': {'type': ['string', 'string']}}", "PARSE:has duplicate value: string"},
    {"{}", "{'$jsonSchema': {'bsonType': []}}", "PARSE:must name at least one type"},
    {"{}", "{'$jsonSchema': {'bsonType': 2}}", "PARSE:must be either a string or an array of strings"},
    {"{}", "{'$jsonSchema': {'$schema': 'http://json-schema.org/draft-04/schema#'}}", "PARSE:$jsonSchema keyword '$schema' is not currently supported"},
    {"{}", "{'$jsonSchema': {'properties': {'a': {'format': 'email'}}}}", "PARSE:$jsonSchema keyword 'format' is not currently supported"},
    {"{}", "{'$jsonSchema': {'default': 1}}", "PARSE:$jsonSchema keyword 'default' is not currently supported"},
    {"{}", "{'$jsonSchema': {'definitions': {}}}", "PARSE:$jsonSchema keyword 'definitions' is not currently supported"},
    {"{}", "{'$jsonSchema': {'id': 'x'}}", "PARSE:$jsonSchema keyword 'id' is not currently supported"},
    {"{}", "{'$jsonSchema': {'const': 1}}", "PARSE:Unknown $jsonSchema keyword: const"},
    {"{}", "{'$jsonSchema': {'exclusiveMinimum': true}}", "PARSE:'minimum' must be a present if exclusiveMinimum is present"},
    {"{}", "{'$jsonSchema': {'maximum': 1, 'exclusiveMaximum': 1}}", "PARSE:'exclusiveMaximum' must be a boolean"},
    {"{}", "{'$jsonSchema': {'required': []}}", "PARSE:'required' cannot be an empty array"},
    {"{}", "{'$jsonSchema': {'required': ['a', 'a']}}", "PARSE:cannot contain duplicate values"},
    {"{}", "{'$jsonSchema': {'required': [1]}}", "PARSE:must contain only strings"},
    {"{}", "{'$jsonSchema': {'enum': []}}", "PARSE:'enum' cannot be an empty array"},
    {"{}", "{'$jsonSchema': {'minItems': -1}}", "PARSE:must be a non-negative integer"},
    {"{}", "{'$jsonSchema': {'minLength': 1.5}}", "PARSE:must be representable as a long integer"},
    {"{}", "{'$jsonSchema': {'multipleOf': 0}}", "PARSE:'multipleOf' must have a positive value"},
    {"{}", "{'$jsonSchema': {'multipleOf': {'$numberDouble': 'NaN'}}}", "PARSE:'multipleOf' must have a positive value"},
    {"{}", "{'$jsonSchema': {'minimum': '1'}}", "PARSE:'minimum' must be a number"},
    {"{}", "{'$jsonSchema': {'pattern': '('}}", "PARSE:Regular expression is invalid"},
    {"{}", "{'$jsonSchema': {'properties': {'a': 1}}}", "PARSE:Nested schema for $jsonSchema property 'a' must be an object"},
    {"{}", "{'$jsonSchema': {'allOf': []}}", "PARSE:'allOf' must be a non-empty array"},
    {"{}", "{'$jsonSchema': {'items': 1}}", "PARSE:'items' must be an array or an object"},
    {"{}", "{'$jsonSchema': {'additionalProperties': 1}}", "PARSE:must be either an object or a boolean"},
    {"{}", "{'$jsonSchema': {'dependencies': {'a': 1}}}", "PARSE:must be either an object or an array"},
    {"{}", "{'$jsonSchema': {'title': 1}}", "PARSE:'title' must be of type string"},
    {"{}", "{'$jsonSchema': 1}", "PARSE:$jsonSchema must be an object"},
    {"{}", "{'a': {'$elemMatch': {'$jsonSchema': {}}}}", "PARSE:$jsonSchema can only be applied to the top-level document"},
    {NULL, NULL, NULL},
};

static void test_documented (void) { Q_TABLE (documented); }
static void test_types (void) { Q_TABLE (types); }
static void test_objects (void) { Q_TABLE (objects); }
static void test_arrays (void) { Q_TABLE (arrays); }
static void test_scalars (void) { Q_TABLE (scalars); }
static void test_logic (void) { Q_TABLE (logic); }
static void test_refused (void) { Q_TABLE (refused); }

/* The schema reads fields no path names: rm_query_paths says "whole". */
static void
test_reads_whole (void)
{
    bson_t *qd = q_json ("{'$jsonSchema': {'required': ['a']}}"), holder = BSON_INITIALIZER;
    bson_iter_t it;
    bson_error_t err;
    rm_query_t *q;
    bool whole = false;
    bson_append_document (&holder, "q", 1, qd);
    bson_iter_init_find (&it, &holder, "q");
    q = rm_query_parse (&it, &err);
    T_CHECK (q != NULL);
    if (q) {
        rm_query_paths (q, NULL, NULL, &whole);
        T_CHECK (whole);
        rm_query_destroy (q);
    }
    bson_destroy (&holder);
    bson_destroy (qd);
}

int
main (void)
{
    (void) q_matrix; /* the shared header's, for the query tables */
    T_RUN (test_documented);
    T_RUN (test_types);
    T_RUN (test_objects);
    T_RUN (test_arrays);
    T_RUN (test_scalars);
    T_RUN (test_logic);
    T_RUN (test_refused);
    T_RUN (test_reads_whole);
    return t_done ();
}
