/* The string operators: $concat, $split, $substr/$substrBytes/$substrCP,
 * $strLenBytes/$strLenCP, $indexOfBytes/$indexOfCP, $toLower/$toUpper,
 * $strcasecmp, $trim/$ltrim/$rtrim, $replaceOne/$replaceAll. Cases from
 * MongoDB's documentation of each operator (its examples' inputs and
 * outputs), then nulls, missing, wrong types and the edges where the
 * server's code decides (bytes against code points, coerceToString, the
 * order of its checks). "cafétéria" is 9 code points in 11 bytes (é is
 * two), "寿司" 2 in 6. */
#include "expr_case.h"

static const x_case_t concats[] = {
    /* docs: inventory */
    {"{\"item\": \"ABC1\", \"description\": \"product 1\"}",
     "{\"$concat\": [\"$item\", \" - \", \"$description\"]}", "\"ABC1 - product 1\""},
    {"{\"item\": \"XYZ1\", \"description\": null}", "{\"$concat\": [\"$item\", \" - \", \"$description\"]}",
     "null"},
    {"{\"item\": \"XYZ1\"}", "{\"$concat\": [\"$item\", \" - \", \"$description\"]}", "null"},
    {"{}", "{\"$concat\": []}", "\"\""},
    {"{}", "{\"$concat\": \"abc\"}", "\"abc\""},
    {"{}", "{\"$concat\": [\"caf\", \"é\", \"\"]}", "\"café\""},
    {"{}", "{\"$concat\": [\"a\", 1]}", "ERROR:only supports strings, not int"},
    {"{}", "{\"$concat\": [\"a\", {\"$date\": \"2020-01-01T00:00:00Z\"}]}", "ERROR:not date"},
    /* null stops it before a later wrong type is seen; not before an
     * earlier one */
    {"{}", "{\"$concat\": [null, 1]}", "null"},
    {"{}", "{\"$concat\": [1, null]}", "ERROR:not int"},
    {"{}", "{\"$concat\": [\"a\", {\"$literal\": null}, {\"$concat\": [1]}]}", "null"},
    {"{\"u\": {\"$undefined\": true}}", "{\"$concat\": [\"a\", \"$u\"]}", "null"},
    {"{\"f\": \"Ada\", \"l\": \"Lovelace\"}", "{\"$concat\": [\"$f\", \" \", \"$l\"]}", "\"Ada Lovelace\""},
    {NULL, NULL, NULL},
};

static const x_case_t splits[] = {
    /* docs */
    {"{\"city\": \"Berkeley, CA\"}", "{\"$split\": [\"$city\", \", \"]}", "[\"Berkeley\", \"CA\"]"},
    {"{}", "{\"$split\": [\"June-15-2013\", \"-\"]}", "[\"June\", \"15\", \"2013\"]"},
    {"{}", "{\"$split\": [\"banana split\", \"a\"]}", "[\"b\", \"n\", \"n\", \" split\"]"},
    {"{}", "{\"$split\": [\"Hello World\", \" \"]}", "[\"Hello\", \"World\"]"},
    {"{}", "{\"$split\": [\"astronomical\", \"astro\"]}", "[\"\", \"nomical\"]"},
    {"{}", "{\"$split\": [\"pea green boat\", \"owl\"]}", "[\"pea green boat\"]"},
    {"{}", "{\"$split\": [\"headphone jack\", 7]}", "ERROR:as a second argument, found: int"},
    {"{}", "{\"$split\": [\"headphone jack\", {\"$regularExpression\": {\"pattern\": \"jack\", \"options\": \"\"}}]}",
     "ERROR:as a second argument, found: regex"},
    /* the traps */
    {"{}", "{\"$split\": [\"\", \"a\"]}", "[\"\"]"},
    {"{}", "{\"$split\": [\"a\", \"a\"]}", "[\"\", \"\"]"},
    {"{}", "{\"$split\": [\"aaa\", \"aa\"]}", "[\"\", \"a\"]"},
    {"{}", "{\"$split\": [\"a,,b,\", \",\"]}", "[\"a\", \"\", \"b\", \"\"]"},
    {"{}", "{\"$split\": [\"abc\", \"\"]}", "ERROR:non-empty separator"},
    {"{}", "{\"$split\": [\"aébéc\", \"é\"]}", "[\"a\", \"b\", \"c\"]"},
    {"{}", "{\"$split\": [\"寿司寿司\", \"司\"]}", "[\"寿\", \"寿\", \"\"]"},
    /* null or missing in either place is null, before any type check */
    {"{}", "{\"$split\": [null, \",\"]}", "null"},
    {"{}", "{\"$split\": [\"a,b\", null]}", "null"},
    {"{}", "{\"$split\": [\"$nope\", \",\"]}", "null"},
    {"{}", "{\"$split\": [5, null]}", "null"},
    {"{}", "{\"$split\": [\"\", null]}", "null"},
    {"{}", "{\"$split\": [5, \",\"]}", "ERROR:as a first argument, found: int"},
    {"{}", "{\"$split\": [[\"a\"], \",\"]}", "ERROR:found: array"},
    {"{}", "{\"$split\": [\"a\"]}", "PARSE:exactly 2"},
    {"{}", "{\"$split\": [\"a\", \"b\", \"c\"]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t strlens[] = {
    /* docs */
    {"{}", "{\"$strLenBytes\": \"abcde\"}", "5"},
    {"{}", "{\"$strLenBytes\": \"Hello World!\"}", "12"},
    {"{}", "{\"$strLenBytes\": \"cafétéria\"}", "11"},
    {"{}", "{\"$strLenBytes\": \"\"}", "0"},
    {"{}", "{\"$strLenBytes\": {\"$literal\": \"$€λG\"}}", "7"},
    {"{}", "{\"$strLenBytes\": \"寿司\"}", "6"},
    {"{}", "{\"$strLenCP\": \"abcde\"}", "5"},
    {"{}", "{\"$strLenCP\": \"Hello World!\"}", "12"},
    {"{}", "{\"$strLenCP\": \"cafétéria\"}", "9"},
    {"{}", "{\"$strLenCP\": \"\"}", "0"},
    {"{}", "{\"$strLenCP\": {\"$literal\": \"$€λG\"}}", "4"},
    {"{}", "{\"$strLenCP\": \"寿司\"}", "2"},
    {"{\"name\": \"Éclair\"}", "{\"$strLenCP\": \"$name\"}", "6"},
    {"{\"name\": \"Éclair\"}", "{\"$strLenBytes\": \"$name\"}", "7"},
    {"{}", "{\"$strLenCP\": \"😀x\"}", "2"},
    {"{}", "{\"$strLenBytes\": \"😀x\"}", "5"},
    /* not a string: an error, null and missing too */
    {"{}", "{\"$strLenBytes\": null}", "ERROR:requires a string argument, found: null"},
    {"{}", "{\"$strLenBytes\": \"$nope\"}", "ERROR:found: missing"},
    {"{}", "{\"$strLenCP\": null}", "ERROR:requires a string argument, found: null"},
    {"{}", "{\"$strLenCP\": \"$nope\"}", "ERROR:found: missing"},
    {"{}", "{\"$strLenCP\": 5}", "ERROR:found: int"},
    {"{}", "{\"$strLenBytes\": [[\"ab\"]]}", "ERROR:found: array"},
    {"{}", "{\"$strLenCP\": [\"a\", \"b\"]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

static const x_case_t substrs[] = {
    /* docs: $substrBytes */
    {"{}", "{\"$substrBytes\": [\"abcde\", 1, 2]}", "\"bc\""},
    {"{}", "{\"$substrBytes\": [\"Hello World!\", 6, 5]}", "\"World\""},
    {"{}", "{\"$substrBytes\": [\"cafétéria\", 0, 5]}", "\"café\""},
    {"{}", "{\"$substrBytes\": [\"cafétéria\", 5, 4]}", "\"tér\""},
    {"{}", "{\"$substrBytes\": [\"cafétéria\", 7, 3]}", "ERROR:starting index is a UTF-8 continuation byte"},
    {"{}", "{\"$substrBytes\": [\"cafétéria\", 3, 1]}",
     "ERROR:ending index is in the middle of a UTF-8 character"},
    {"{\"quarter\": \"13Q1\"}", "{\"$substrBytes\": [\"$quarter\", 0, 2]}", "\"13\""},
    {"{\"quarter\": \"13Q1\"}",
     "{\"$substrBytes\": [\"$quarter\", 2, {\"$subtract\": [{\"$strLenBytes\": \"$quarter\"}, 2]}]}",
     "\"Q1\""},
    {"{\"name\": \"éclair\"}", "{\"$substrBytes\": [\"$name\", 0, 3]}", "\"éc\""},
    /* $substr: the old name */
    {"{}", "{\"$substr\": [\"abcde\", 1, 2]}", "\"bc\""},
    {"{}", "{\"$substr\": [\"寿司\", 0, 3]}", "\"寿\""},
    {"{}", "{\"$substr\": [\"寿司\", 0, 4]}", "ERROR:in the middle of a UTF-8 character"},
    /* negative length: to the end; start past the end: "" */
    {"{}", "{\"$substrBytes\": [\"abcde\", 1, -1]}", "\"bcde\""},
    {"{}", "{\"$substrBytes\": [\"abcde\", 2, {\"$numberLong\": \"-5\"}]}", "\"cde\""},
    {"{}", "{\"$substrBytes\": [\"abc\", 1, 100]}", "\"bc\""},
    {"{}", "{\"$substrBytes\": [\"abc\", 1, {\"$numberLong\": \"9223372036854775807\"}]}", "\"bc\""},
    {"{}", "{\"$substrBytes\": [\"abc\", 3, 1]}", "\"\""},
    {"{}", "{\"$substrBytes\": [\"abc\", 50, 2]}", "\"\""},
    {"{}", "{\"$substrBytes\": [\"abc\", 0, 0]}", "\"\""},
    {"{}", "{\"$substrBytes\": [\"abc\", -1, 2]}", "ERROR:starting index must be non-negative (got: -1)"},
    /* numbers: doubles truncated (coerceToLong) */
    {"{}", "{\"$substrBytes\": [\"abcde\", 1.9, 1.9]}", "\"b\""},
    {"{}", "{\"$substrBytes\": [\"abcde\", {\"$numberLong\": \"1\"}, {\"$numberDecimal\": \"2\"}]}", "\"bc\""},
    {"{}", "{\"$substrBytes\": [\"abc\", {\"$numberDouble\": \"NaN\"}, 1]}", "ERROR:out of range"},
    {"{}", "{\"$substrBytes\": [\"abc\", 1e300, 1]}", "ERROR:out of range"},
    {"{}", "{\"$substrBytes\": [\"abc\", \"1\", 1]}", "ERROR:starting index must be a numeric type (is BSON type string)"},
    {"{}", "{\"$substrBytes\": [\"abc\", null, 1]}", "ERROR:starting index must be a numeric type (is BSON type null)"},
    {"{}", "{\"$substrBytes\": [\"abc\", 0, \"$nope\"]}", "ERROR:length must be a numeric type (is BSON type missing)"},
    /* the input through coerceToString */
    {"{}", "{\"$substrBytes\": [null, 0, 2]}", "\"\""},
    {"{}", "{\"$substrBytes\": [\"$nope\", 0, 2]}", "\"\""},
    {"{}", "{\"$substrBytes\": [12345, 1, 3]}", "\"234\""},
    {"{}", "{\"$substrBytes\": [2.5, 0, 10]}", "\"2.5\""},
    {"{}", "{\"$substrBytes\": [{\"$numberLong\": \"-42\"}, 0, 10]}", "\"-42\""},
    {"{}", "{\"$substrBytes\": [true, 0, 1]}", "ERROR:can't convert from BSON type bool to String"},
    {"{}", "{\"$substrBytes\": [[[1]], 0, 1]}", "ERROR:can't convert from BSON type array to String"},
    {"{}", "{\"$substrBytes\": [\"abc\", 1]}", "PARSE:exactly 3"},
    /* docs: $substrCP */
    {"{}", "{\"$substrCP\": [\"abcde\", 1, 2]}", "\"bc\""},
    {"{}", "{\"$substrCP\": [\"Hello World!\", 6, 5]}", "\"World\""},
    {"{}", "{\"$substrCP\": [\"cafétéria\", 0, 5]}", "\"cafét\""},
    {"{}", "{\"$substrCP\": [\"cafétéria\", 5, 4]}", "\"éria\""},
    {"{}", "{\"$substrCP\": [\"cafétéria\", 7, 3]}", "\"ia\""},
    {"{}", "{\"$substrCP\": [\"cafétéria\", 3, 1]}", "\"é\""},
    {"{\"name\": \"寿司sushi\"}", "{\"$substrCP\": [\"$name\", 0, 3]}", "\"寿司s\""},
    {"{\"quarter\": \"13Q1\"}",
     "{\"$substrCP\": [\"$quarter\", 2, {\"$subtract\": [{\"$strLenCP\": \"$quarter\"}, 2]}]}", "\"Q1\""},
    {"{}", "{\"$substrCP\": [\"寿司\", 1, 1]}", "\"司\""},
    {"{}", "{\"$substrCP\": [\"😀😁\", 1, 5]}", "\"😁\""},
    {"{}", "{\"$substrCP\": [\"abc\", 5, 1]}", "\"\""},
    {"{}", "{\"$substrCP\": [\"abc\", 1, 100]}", "\"bc\""},
    {"{}", "{\"$substrCP\": [\"abc\", 2.0, 1]}", "\"c\""},
    {"{}", "{\"$substrCP\": [\"abc\", {\"$numberDecimal\": \"1\"}, {\"$numberLong\": \"1\"}]}", "\"b\""},
    {"{}", "{\"$substrCP\": [null, 0, 1]}", "\"\""},
    {"{}", "{\"$substrCP\": [123, 1, 1]}", "\"2\""},
    /* int32 values only, neither negative (length is checked first) */
    {"{}", "{\"$substrCP\": [\"abc\", 1.5, 1]}", "ERROR:starting index cannot be represented as a 32-bit integral value"},
    {"{}", "{\"$substrCP\": [\"abc\", 0, 1.5]}", "ERROR:length cannot be represented as a 32-bit integral value"},
    {"{}", "{\"$substrCP\": [\"abc\", {\"$numberLong\": \"3000000000\"}, 1]}",
     "ERROR:starting index cannot be represented as a 32-bit integral value"},
    {"{}", "{\"$substrCP\": [\"abc\", -1, 1]}", "ERROR:starting index must be nonnegative"},
    {"{}", "{\"$substrCP\": [\"abc\", 0, -1]}", "ERROR:length must be a nonnegative integer"},
    {"{}", "{\"$substrCP\": [\"abc\", -1, -1]}", "ERROR:length must be a nonnegative integer"},
    {"{}", "{\"$substrCP\": [\"abc\", \"0\", 1]}", "ERROR:starting index must be a numeric type (is BSON type string)"},
    {"{}", "{\"$substrCP\": [\"abc\", 0, null]}", "ERROR:length must be a numeric type (is BSON type null)"},
    {"{}", "{\"$substrCP\": [{\"a\": 1}, 0, 1]}", "ERROR:can't convert from BSON type object to String"},
    {NULL, NULL, NULL},
};

static const x_case_t indexofs[] = {
    /* docs: $indexOfBytes */
    {"{}", "{\"$indexOfBytes\": [\"cafeteria\", \"e\"]}", "3"},
    {"{}", "{\"$indexOfBytes\": [\"cafétéria\", \"é\"]}", "3"},
    {"{}", "{\"$indexOfBytes\": [\"cafétéria\", \"e\"]}", "-1"},
    {"{}", "{\"$indexOfBytes\": [\"cafétéria\", \"t\"]}", "5"},
    {"{}", "{\"$indexOfBytes\": [\"foo.bar.fi\", \".\", 5]}", "7"},
    {"{}", "{\"$indexOfBytes\": [\"vanilla\", \"ll\", 0, 2]}", "-1"},
    {"{}", "{\"$indexOfBytes\": [\"vanilla\", \"ll\", -1]}", "ERROR:requires a nonnegative starting index, found: -1"},
    {"{}", "{\"$indexOfBytes\": [\"vanilla\", \"ll\", 12]}", "-1"},
    {"{}", "{\"$indexOfBytes\": [\"vanilla\", \"ll\", 5, 2]}", "-1"},
    {"{}", "{\"$indexOfBytes\": [\"vanilla\", \"nilla\", 3]}", "-1"},
    {"{}", "{\"$indexOfBytes\": [null, \"foo\"]}", "null"},
    {"{\"item\": \"foo\"}", "{\"$indexOfBytes\": [\"$item\", \"foo\"]}", "0"},
    {"{\"item\": \"movable barrier\"}", "{\"$indexOfBytes\": [\"$item\", \"foo\"]}", "-1"},
    /* the edges */
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"\"]}", "0"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"\", 3]}", "3"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"\", 4]}", "-1"},
    {"{}", "{\"$indexOfBytes\": [\"\", \"\"]}", "0"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"c\", 0, 2]}", "-1"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"c\", 0, 3]}", "2"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"c\", 0, 300]}", "2"},
    {"{}", "{\"$indexOfBytes\": [\"abcabc\", \"b\", 2]}", "4"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"b\", 1.0, {\"$numberLong\": \"3\"}]}", "1"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"b\", 1.5]}", "ERROR:requires an integral starting index"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"b\", null]}", "ERROR:requires an integral starting index"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"b\", 0, -1]}", "ERROR:requires a nonnegative ending index"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"b\", 0, \"2\"]}", "ERROR:requires an integral ending index"},
    {"{}", "{\"$indexOfBytes\": [\"$nope\", 5]}", "null"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", null]}", "ERROR:requires a string as the second argument, found: null"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"$nope\"]}", "ERROR:found: missing"},
    {"{}", "{\"$indexOfBytes\": [5, \"5\"]}", "ERROR:requires a string as the first argument, found: int"},
    {"{}", "{\"$indexOfBytes\": [\"abc\"]}", "PARSE:takes 2 to 4 arguments"},
    {"{}", "{\"$indexOfBytes\": [\"a\", \"b\", 1, 2, 3]}", "PARSE:takes 2 to 4 arguments"},
    /* docs: $indexOfCP */
    {"{}", "{\"$indexOfCP\": [\"cafeteria\", \"e\"]}", "3"},
    {"{}", "{\"$indexOfCP\": [\"cafétéria\", \"é\"]}", "3"},
    {"{}", "{\"$indexOfCP\": [\"cafétéria\", \"e\"]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"cafétéria\", \"t\"]}", "4"},
    {"{}", "{\"$indexOfCP\": [\"foo.bar.fi\", \".\", 5]}", "7"},
    {"{}", "{\"$indexOfCP\": [\"vanilla\", \"ll\", 0, 2]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"vanilla\", \"ll\", -1]}", "ERROR:requires a nonnegative starting index"},
    {"{}", "{\"$indexOfCP\": [\"vanilla\", \"ll\", 12]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"vanilla\", \"ll\", 5, 2]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"vanilla\", \"nilla\", 3]}", "-1"},
    {"{}", "{\"$indexOfCP\": [null, \"foo\"]}", "null"},
    /* the edges: the token may run past the ending index (only its
     * start must be before it); past the end even "" is not found */
    {"{}", "{\"$indexOfCP\": [\"abc\", \"bc\", 0, 2]}", "1"},
    {"{}", "{\"$indexOfBytes\": [\"abc\", \"bc\", 0, 2]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"abc\", \"\"]}", "0"},
    {"{}", "{\"$indexOfCP\": [\"abc\", \"\", 2]}", "2"},
    {"{}", "{\"$indexOfCP\": [\"abc\", \"\", 3]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"\", \"\"]}", "0"},
    {"{}", "{\"$indexOfCP\": [\"\", \"a\"]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"寿司寿司\", \"司\", 2]}", "3"},
    {"{}", "{\"$indexOfCP\": [\"寿司寿司\", \"司\", 0, 1]}", "-1"},
    {"{}", "{\"$indexOfCP\": [\"寿司寿司\", \"司\", 0, 2]}", "1"},
    {"{}", "{\"$indexOfBytes\": [\"寿司寿司\", \"司\", 4]}", "9"},
    {"{}", "{\"$indexOfCP\": [\"😀a😀a\", \"a\", 2]}", "3"},
    {"{}", "{\"$indexOfCP\": [\"abc\", \"b\", 2.5]}", "ERROR:requires an integral starting index"},
    {"{}", "{\"$indexOfCP\": [\"abc\", \"b\", {\"$numberLong\": \"4294967296\"}]}", "ERROR:requires an integral starting index"},
    {"{}", "{\"$indexOfCP\": [\"abc\", 1]}", "ERROR:requires a string as the second argument, found: int"},
    {"{}", "{\"$indexOfCP\": [[\"abc\"], \"a\"]}", "ERROR:requires a string as the first argument, found: array"},
    {"{}", "{\"$indexOfCP\": [\"$nope\", \"a\"]}", "null"},
    {NULL, NULL, NULL},
};

static const x_case_t cases_[] = {
    /* docs: inventory */
    {"{\"item\": \"ABC1\", \"description\": \"PRODUCT 1\"}", "{\"$toLower\": \"$item\"}", "\"abc1\""},
    {"{\"item\": \"ABC1\", \"description\": \"PRODUCT 1\"}", "{\"$toLower\": \"$description\"}", "\"product 1\""},
    {"{\"item\": \"abc2\", \"description\": \"Product 2\"}", "{\"$toUpper\": \"$item\"}", "\"ABC2\""},
    {"{\"item\": \"abc2\", \"description\": \"Product 2\"}", "{\"$toUpper\": \"$description\"}", "\"PRODUCT 2\""},
    {"{\"item\": \"xyz1\", \"description\": null}", "{\"$toUpper\": \"$description\"}", "\"\""},
    {"{\"item\": \"xyz1\", \"description\": null}", "{\"$toLower\": \"$description\"}", "\"\""},
    {"{}", "{\"$toUpper\": \"$nope\"}", "\"\""},
    {"{}", "{\"$toLower\": [null]}", "\"\""},
    /* ASCII letters only */
    {"{}", "{\"$toUpper\": \"café\"}", "\"CAFé\""},
    {"{}", "{\"$toLower\": \"ÀÉB\"}", "\"ÀÉb\""},
    {"{}", "{\"$toUpper\": \"straße\"}", "\"STRAßE\""},
    {"{}", "{\"$toLower\": \"[AZ@]\"}", "\"[az@]\""},
    /* other scalars through coerceToString */
    {"{}", "{\"$toUpper\": 12}", "\"12\""},
    {"{}", "{\"$toUpper\": 1.5}", "\"1.5\""},
    {"{}", "{\"$toUpper\": 1e20}", "\"1E+20\""},
    {"{}", "{\"$toLower\": 1e20}", "\"1e+20\""},
    {"{}", "{\"$toLower\": 0.1}", "\"0.1\""},
    {"{}", "{\"$toLower\": 3.14159265358979}", "\"3.14159\""},
    {"{}", "{\"$toLower\": 1234567.0}", "\"1.23457e+06\""},
    {"{}", "{\"$toLower\": -0.0}", "\"-0\""},
    {"{}", "{\"$toLower\": {\"$numberDouble\": \"Infinity\"}}", "\"inf\""},
    {"{}", "{\"$toLower\": {\"$numberLong\": \"-9007199254740993\"}}", "\"-9007199254740993\""},
    {"{}", "{\"$toLower\": {\"$numberDecimal\": \"1.50\"}}", "\"1.50\""},
    {"{}", "{\"$toUpper\": {\"$symbol\": \"abc\"}}", "\"ABC\""},
    {"{}", "{\"$toUpper\": {\"$timestamp\": {\"t\": 0, \"i\": 7}}}", "\"JAN  1 00:00:00:7\""},
    {"{}", "{\"$toLower\": {\"$date\": \"2020-01-02T03:04:05.678Z\"}}", "\"2020-01-02t03:04:05.678z\""},
    {"{\"d\": {\"$date\": \"2017-07-04T12:00:00Z\"}}", "{\"$substrBytes\": [\"$d\", 0, 10]}", "\"2017-07-04\""},
    {"{}", "{\"$toUpper\": {\"$date\": {\"$numberLong\": \"-62198755200001\"}}}", "ERROR:failed while coercing date"},
    {"{}", "{\"$toUpper\": true}", "ERROR:can't convert from BSON type bool to String"},
    {"{}", "{\"$toUpper\": {\"a\": \"b\"}}", "ERROR:can't convert from BSON type object to String"},
    {"{}", "{\"$toLower\": [[\"a\"]]}", "ERROR:can't convert from BSON type array to String"},
    {"{}", "{\"$toLower\": {\"$oid\": \"5f0c6c0b8e1c2a3b4c5d6e7f\"}}", "ERROR:can't convert from BSON type objectId"},
    {"{}", "{\"$toLower\": [\"a\", \"b\"]}", "PARSE:exactly 1"},
    /* docs: $strcasecmp */
    {"{\"quarter\": \"13Q1\"}", "{\"$strcasecmp\": [\"$quarter\", \"13q4\"]}", "-1"},
    {"{\"quarter\": \"13Q4\"}", "{\"$strcasecmp\": [\"$quarter\", \"13q4\"]}", "0"},
    {"{\"quarter\": \"14Q2\"}", "{\"$strcasecmp\": [\"$quarter\", \"13q4\"]}", "1"},
    {"{}", "{\"$strcasecmp\": [\"Hello\", \"hELLO\"]}", "0"},
    {"{}", "{\"$strcasecmp\": [\"ab\", \"a\"]}", "1"},
    {"{}", "{\"$strcasecmp\": [\"\", \"a\"]}", "-1"},
    /* upper-cased, then compared: 'a' -> 'A' (0x41) is below '_' (0x5F) */
    {"{}", "{\"$strcasecmp\": [\"a\", \"_\"]}", "-1"},
    {"{}", "{\"$strcasecmp\": [\"é\", \"É\"]}", "1"},
    {"{}", "{\"$strcasecmp\": [null, \"\"]}", "0"},
    {"{}", "{\"$strcasecmp\": [\"$nope\", null]}", "0"},
    {"{}", "{\"$strcasecmp\": [1, \"1\"]}", "0"},
    {"{}", "{\"$strcasecmp\": [\"a\", [[\"a\"]]]}", "ERROR:can't convert from BSON type array"},
    {"{}", "{\"$strcasecmp\": [\"a\"]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t trims[] = {
    /* docs */
    {"{}", "{\"$trim\": {\"input\": \" \\n good  bye \\t  \"}}", "\"good  bye\""},
    {"{}", "{\"$trim\": {\"input\": \" ggggoodbyeeeee\", \"chars\": \"ge\"}}", "\" ggggoodby\""},
    {"{}", "{\"$trim\": {\"input\": \"    ggggoodbyeeeee\", \"chars\": \" gd\"}}", "\"oodbyeeeee\""},
    {"{}", "{\"$ltrim\": {\"input\": \" \\n good  bye \\t  \"}}", "\"good  bye \\t  \""},
    {"{}", "{\"$ltrim\": {\"input\": \" ggggoodbyeeeee\", \"chars\": \"ge\"}}", "\" ggggoodbyeeeee\""},
    {"{}", "{\"$ltrim\": {\"input\": \"    ggggoodbyeeeee\", \"chars\": \" gd\"}}", "\"oodbyeeeee\""},
    {"{}", "{\"$rtrim\": {\"input\": \" \\n good  bye \\t  \"}}", "\" \\n good  bye\""},
    {"{}", "{\"$rtrim\": {\"input\": \" ggggoodbyeeeee\", \"chars\": \"ge\"}}", "\" ggggoodby\""},
    {"{}", "{\"$rtrim\": {\"input\": \"    ggggoodbyeeeee\", \"chars\": \" gd\"}}", "\"    ggggoodbyeeeee\""},
    {"{\"description\": \" product 1 \"}", "{\"$trim\": {\"input\": \"$description\"}}", "\"product 1\""},
    {"{\"description\": null}", "{\"$trim\": {\"input\": \"$description\"}}", "null"},
    /* whitespace: NUL, \v \f \r, no-break space, Ogham space, U+2000-U+200A */
    {"{}", "{\"$trim\": {\"input\": \"\\u0000\\u000b\\f\\r a\\u0000\"}}", "\"a\""},
    {"{}", "{\"$trim\": {\"input\": \"\\u00a0\\u1680\\u2000x y\\u2003\\u200a\"}}", "\"x y\""},
    /* ... but not the others Unicode has */
    {"{}", "{\"$trim\": {\"input\": \"\\u3000x\\u2028\"}}", "\"\\u3000x\\u2028\""},
    {"{}", "{\"$trim\": {\"input\": \"\\u200bx\\u202f\"}}", "\"\\u200bx\\u202f\""},
    {"{}", "{\"$trim\": {\"input\": \"   \"}}", "\"\""},
    {"{}", "{\"$trim\": {\"input\": \"\"}}", "\"\""},
    {"{}", "{\"$rtrim\": {\"input\": \"ab \\u0000\"}}", "\"ab\""},
    /* chars: code points, not bytes */
    {"{}", "{\"$trim\": {\"input\": \"ééaé\", \"chars\": \"é\"}}", "\"a\""},
    {"{}", "{\"$trim\": {\"input\": \"寿a司\", \"chars\": \"司寿\"}}", "\"a\""},
    {"{}", "{\"$trim\": {\"input\": \"é\", \"chars\": \"è\"}}", "\"é\""},
    {"{}", "{\"$trim\": {\"input\": \" a \", \"chars\": \"\"}}", "\" a \""},
    {"{}", "{\"$ltrim\": {\"input\": \"xxyx\", \"chars\": \"x\"}}", "\"yx\""},
    {"{}", "{\"$rtrim\": {\"input\": \"xxyx\", \"chars\": \"x\"}}", "\"xxy\""},
    {"{}", "{\"$trim\": {\"input\": \"aaaa\", \"chars\": \"a\"}}", "\"\""},
    /* nulls, types, order */
    {"{}", "{\"$trim\": {\"input\": null}}", "null"},
    {"{}", "{\"$trim\": {\"input\": \"$nope\"}}", "null"},
    {"{}", "{\"$trim\": {\"input\": \" a \", \"chars\": null}}", "null"},
    {"{}", "{\"$ltrim\": {\"input\": \" a \", \"chars\": \"$nope\"}}", "null"},
    {"{}", "{\"$trim\": {\"input\": null, \"chars\": 5}}", "null"},
    {"{}", "{\"$trim\": {\"input\": 5}}", "ERROR:requires its input to be a string, got 5 (of type int)"},
    {"{}", "{\"$rtrim\": {\"input\": \"a\", \"chars\": 5}}", "ERROR:requires 'chars' to be a string, got 5 (of type int)"},
    {"{}", "{\"$trim\": {\"chars\": \"a\"}}", "PARSE:missing the required argument 'input'"},
    {"{}", "{\"$trim\": {\"input\": \"a\", \"char\": \"a\"}}", "PARSE:unknown argument 'char'"},
    {"{}", "{\"$trim\": \" a \"}", "PARSE:expects a document"},
    {"{}", "{\"$ltrim\": [\" a \"]}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

static const x_case_t replaces[] = {
    /* docs: inventory */
    {"{\"item\": \"blue paint\"}",
     "{\"$replaceOne\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"red paint\""},
    {"{\"item\": \"blue and green paint\"}",
     "{\"$replaceOne\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"blue and green paint\""},
    {"{\"item\": \"blue paint with blue paintbrush\"}",
     "{\"$replaceOne\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"red paint with blue paintbrush\""},
    {"{\"item\": \"blue paint with green paintbrush\"}",
     "{\"$replaceOne\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"red paint with green paintbrush\""},
    {"{\"item\": \"blue paint\"}",
     "{\"$replaceAll\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"red paint\""},
    {"{\"item\": \"blue and green paint\"}",
     "{\"$replaceAll\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"blue and green paint\""},
    {"{\"item\": \"blue paint with blue paintbrush\"}",
     "{\"$replaceAll\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"red paint with red paintbrush\""},
    {"{\"item\": \"blue paint with green paintbrush\"}",
     "{\"$replaceAll\": {\"input\": \"$item\", \"find\": \"blue paint\", \"replacement\": \"red paint\"}}",
     "\"red paint with green paintbrush\""},
    /* case and Unicode form matter: a precomposed é is not e + U+0301 */
    {"{}", "{\"$replaceOne\": {\"input\": \"Blue Paint\", \"find\": \"blue paint\", \"replacement\": \"x\"}}",
     "\"Blue Paint\""},
    {"{}", "{\"$replaceAll\": {\"input\": \"cafe\\u0301\", \"find\": \"café\", \"replacement\": \"CAFE\"}}",
     "\"cafe\\u0301\""},
    {"{}", "{\"$replaceAll\": {\"input\": \"café café\", \"find\": \"café\", \"replacement\": \"CAFE\"}}",
     "\"CAFE CAFE\""},
    /* no overlap; replacing with "" */
    {"{}", "{\"$replaceAll\": {\"input\": \"aaa\", \"find\": \"aa\", \"replacement\": \"b\"}}", "\"ba\""},
    {"{}", "{\"$replaceOne\": {\"input\": \"abcabc\", \"find\": \"bc\", \"replacement\": \"\"}}", "\"aabc\""},
    {"{}", "{\"$replaceAll\": {\"input\": \"abcabc\", \"find\": \"bc\", \"replacement\": \"\"}}", "\"aa\""},
    {"{}", "{\"$replaceAll\": {\"input\": \"a.b.c\", \"find\": \".\", \"replacement\": \"..\"}}", "\"a..b..c\""},
    /* an empty find: before the input, or around every byte */
    {"{}", "{\"$replaceOne\": {\"input\": \"abc\", \"find\": \"\", \"replacement\": \"x\"}}", "\"xabc\""},
    {"{}", "{\"$replaceAll\": {\"input\": \"abc\", \"find\": \"\", \"replacement\": \"x\"}}", "\"xaxbxcx\""},
    {"{}", "{\"$replaceOne\": {\"input\": \"\", \"find\": \"\", \"replacement\": \"x\"}}", "\"x\""},
    {"{}", "{\"$replaceAll\": {\"input\": \"\", \"find\": \"\", \"replacement\": \"x\"}}", "\"x\""},
    {"{}", "{\"$replaceAll\": {\"input\": \"\", \"find\": \"a\", \"replacement\": \"x\"}}", "\"\""},
    /* null anywhere is null, but a wrong type anywhere is an error first */
    {"{}", "{\"$replaceOne\": {\"input\": null, \"find\": \"a\", \"replacement\": \"b\"}}", "null"},
    {"{}", "{\"$replaceOne\": {\"input\": \"a\", \"find\": \"$nope\", \"replacement\": \"b\"}}", "null"},
    {"{}", "{\"$replaceAll\": {\"input\": \"a\", \"find\": \"a\", \"replacement\": null}}", "null"},
    {"{}", "{\"$replaceAll\": {\"input\": \"$nope\", \"find\": \"a\", \"replacement\": \"b\"}}", "null"},
    {"{}", "{\"$replaceOne\": {\"input\": null, \"find\": 5, \"replacement\": \"b\"}}",
     "ERROR:requires that 'find' be a string, found: int"},
    {"{}", "{\"$replaceAll\": {\"input\": 5, \"find\": \"a\", \"replacement\": null}}",
     "ERROR:requires that 'input' be a string, found: int"},
    {"{}", "{\"$replaceAll\": {\"input\": \"a\", \"find\": \"a\", \"replacement\": [[\"b\"]]}}",
     "ERROR:requires that 'replacement' be a string, found: array"},
    {"{}", "{\"$replaceAll\": {\"input\": \"a\", \"find\": {\"$regularExpression\": {\"pattern\": \"a\", \"options\": \"\"}}, \"replacement\": \"b\"}}",
     "ERROR:requires that 'find' be a string, found: regex"},
    {"{}", "{\"$replaceOne\": {\"input\": \"a\", \"find\": \"a\"}}", "PARSE:missing the required argument 'replacement'"},
    {"{}", "{\"$replaceAll\": {\"find\": \"a\", \"replacement\": \"b\"}}", "PARSE:missing the required argument 'input'"},
    {"{}", "{\"$replaceAll\": {\"input\": \"a\", \"find\": \"a\", \"replacement\": \"b\", \"x\": 1}}",
     "PARSE:unknown argument 'x'"},
    {"{}", "{\"$replaceOne\": [\"a\", \"a\", \"b\"]}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

/* Operators together, as a plan writes them. */
static const x_case_t together[] = {
    {"{\"name\": \"  ada LOVELACE \"}",
     "{\"$let\": {\"vars\": {\"t\": {\"$trim\": {\"input\": \"$name\"}}}, \"in\": {\"$let\": {\"vars\": "
     "{\"sp\": {\"$indexOfCP\": [\"$$t\", \" \"]}}, \"in\": {\"$concat\": [{\"$toUpper\": {\"$substrCP\": "
     "[\"$$t\", 0, 1]}}, {\"$toLower\": {\"$substrCP\": [\"$$t\", 1, {\"$subtract\": [\"$$sp\", 1]}]}}]}}}}}",
     "\"Ada\""},
    {"{\"name\": \"ada lovelace\"}", "{\"$split\": [{\"$toUpper\": \"$name\"}, \" \"]}",
     "[\"ADA\", \"LOVELACE\"]"},
    {"{\"code\": \"ab-12\"}",
     "{\"$toUpper\": {\"$replaceAll\": {\"input\": \"$code\", \"find\": \"-\", \"replacement\": \"\"}}}",
     "\"AB12\""},
    {"{\"email\": \"Ada@Example.COM\"}",
     "{\"$toLower\": {\"$substrBytes\": [\"$email\", {\"$add\": [{\"$indexOfBytes\": [\"$email\", \"@\"]}, 1]}, -1]}}",
     "\"example.com\""},
    {NULL, NULL, NULL},
};

X_TABLE_TEST (test_expr_concat, concats)
X_TABLE_TEST (test_expr_split, splits)
X_TABLE_TEST (test_expr_strlen, strlens)
X_TABLE_TEST (test_expr_substr, substrs)
X_TABLE_TEST (test_expr_indexof, indexofs)
X_TABLE_TEST (test_expr_case, cases_)
X_TABLE_TEST (test_expr_trim, trims)
X_TABLE_TEST (test_expr_replace, replaces)
X_TABLE_TEST (test_expr_string_together, together)

/* Once warmed, the string operators allocate nothing per document
 * (libbson's allocator counted, as in test_expr_core.c). */
static void
test_expr_string_no_alloc_when_warm (void)
{
    const char *expr = "{\"a\": {\"$concat\": [\"$f\", \" \", {\"$toUpper\": \"$l\"}]}, "
                       "\"b\": {\"$split\": [\"$l\", \"a\"]}, \"c\": {\"$substrCP\": [\"$f\", 1, 2]}, "
                       "\"d\": {\"$trim\": {\"input\": \"$p\", \"chars\": \" é\"}}, "
                       "\"g\": {\"$replaceAll\": {\"input\": \"$l\", \"find\": \"a\", \"replacement\": \"4\"}}, "
                       "\"h\": {\"$indexOfCP\": [\"$p\", \"x\"]}, \"i\": {\"$toLower\": 2.5}}";
    const char *doc = "{\"f\": \"Ada\", \"l\": \"Lovelace\", \"p\": \" éxé \"}";

    T_CHECK (x_no_alloc_when_warm (doc, expr, BSON_TYPE_DOCUMENT) == 0);
}

int
main (void)
{
    T_RUN (test_expr_concat);
    T_RUN (test_expr_split);
    T_RUN (test_expr_strlen);
    T_RUN (test_expr_substr);
    T_RUN (test_expr_indexof);
    T_RUN (test_expr_case);
    T_RUN (test_expr_trim);
    T_RUN (test_expr_replace);
    T_RUN (test_expr_string_together);
    T_RUN (test_expr_string_no_alloc_when_warm);
    return t_done ();
}
