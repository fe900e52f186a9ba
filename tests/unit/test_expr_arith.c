/* The arithmetic operators (common/expr/expr_arith.c) and their decimal128
 * arithmetic (expr_decimal.c): cases from MongoDB's documentation of each
 * operator, the server's types (int32 overflowing to int64, then double;
 * a double or decimal operand making the result one), nulls, missing
 * values, wrong types and domain errors. The decimal operations are also
 * checked against GCC's _Decimal128, which is Intel's BID library in
 * libgcc, the library the server uses, over random operands. */
#include <math.h>
#include <stdlib.h>

#include "expr_case.h"
#include "expr_decimal.h"

static const x_case_t adds[] = {
    {"{\"price\": 10, \"fee\": 2}", "{\"$add\": [\"$price\", \"$fee\"]}", "12"},
    {"{\"date\": {\"$date\": {\"$numberLong\": \"1388570400000\"}}}", "{\"$add\": [\"$date\", 259200000]}", "{\"$date\": {\"$numberLong\": \"1388829600000\"}}"},
    {"{}", "{\"$add\": []}", "0"},
    {"{}", "{\"$add\": [1]}", "1"},
    {"{}", "{\"$add\": [2147483647, 1]}", "{\"$numberLong\": \"2147483648\"}"},
    {"{}", "{\"$add\": [2147483647, 1, -1]}", "2147483647"},
    {"{}", "{\"$add\": [{\"$numberLong\": \"9223372036854775807\"}, 1]}", "9.2233720368547758e+18"},
    {"{}", "{\"$add\": [{\"$numberLong\": \"1\"}, 1]}", "{\"$numberLong\": \"2\"}"},
    {"{}", "{\"$add\": [1, 2.5]}", "3.5"},
    {"{}", "{\"$add\": [0.1, 0.2]}", "0.30000000000000004"},
    {"{}", "{\"$add\": [1, {\"$numberDecimal\": \"1.5\"}]}", "{\"$numberDecimal\": \"2.5\"}"},
    {"{}", "{\"$add\": [{\"$numberDecimal\": \"1.50\"}]}", "{\"$numberDecimal\": \"1.50\"}"},
    {"{}", "{\"$add\": [{\"$numberDecimal\": \"1E+2\"}]}", "{\"$numberDecimal\": \"100\"}"},
    {"{}", "{\"$add\": [0.1, {\"$numberDecimal\": \"1\"}]}", "{\"$numberDecimal\": \"1.100000000000000\"}"},
    {"{}", "{\"$add\": [{\"$numberDecimal\": \"1\"}, 0.5]}", "{\"$numberDecimal\": \"1.500000000000000\"}"},
    {"{}", "{\"$add\": [{\"$numberDecimal\": \"1E+6144\"}, {\"$numberDecimal\": \"1E+6144\"}]}", "{\"$numberDecimal\": \"2E+6144\"}"},
    {"{}", "{\"$add\": [{\"$numberDecimal\": \"9.999999999999999999999999999999999E+6144\"}, {\"$numberDecimal\": \"1E+6144\"}]}", "{\"$numberDecimal\": \"Infinity\"}"},
    {"{}", "{\"$add\": [{\"$numberDecimal\": \"1\"}, {\"$numberDecimal\": \"1E-40\"}]}", "{\"$numberDecimal\": \"1.000000000000000000000000000000000\"}"},
    {"{}", "{\"$add\": [{\"$numberDecimal\": \"Infinity\"}, {\"$numberDecimal\": \"-Infinity\"}]}", "{\"$numberDecimal\": \"NaN\"}"},
    {"{}", "{\"$add\": [1, null]}", "null"},
    {"{}", "{\"$add\": [1, \"$nope\"]}", "null"},
    {"{}", "{\"$add\": [null, \"a\"]}", "null"},
    {"{}", "{\"$add\": [\"a\", null]}", "ERROR:only supports numeric or date types, not string"},
    {"{}", "{\"$add\": [1, \"2\"]}", "ERROR:not string \"2\""},
    {"{}", "{\"$add\": [1, true]}", "ERROR:not bool"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"0\"}}, 1000]}", "{\"$date\": {\"$numberLong\": \"1000\"}}"},
    {"{}", "{\"$add\": [1000, {\"$date\": {\"$numberLong\": \"0\"}}]}", "{\"$date\": {\"$numberLong\": \"1000\"}}"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"0\"}}, 1.5]}", "{\"$date\": {\"$numberLong\": \"2\"}}"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"0\"}}, -1.5]}", "{\"$date\": {\"$numberLong\": \"-2\"}}"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"0\"}}, {\"$numberDecimal\": \"2.5\"}]}", "{\"$date\": {\"$numberLong\": \"2\"}}"},
    {"{}", "{\"$add\": [0.5, 0.5, {\"$date\": {\"$numberLong\": \"0\"}}]}", "{\"$date\": {\"$numberLong\": \"1\"}}"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"0\"}}, {\"$date\": {\"$numberLong\": \"0\"}}]}", "ERROR:only one date allowed"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"1\"}}, {\"$numberLong\": \"9223372036854775807\"}]}", "ERROR:date overflow"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"0\"}}, 1e19]}", "ERROR:date overflow"},
    {"{}", "{\"$add\": [{\"$date\": {\"$numberLong\": \"0\"}}, null]}", "null"},
    {NULL, NULL, NULL},
};

static const x_case_t subtracts[] = {
    {"{\"price\": 10, \"fee\": 2, \"discount\": 5}", "{\"$subtract\": [{\"$add\": [\"$price\", \"$fee\"]}, \"$discount\"]}", "7"},
    {"{\"date\": {\"$date\": {\"$numberLong\": \"1393660800000\"}}}", "{\"$subtract\": [\"$$NOW\", \"$date\"]}", "{\"$numberLong\": \"310503845678\"}"},
    {"{\"date\": {\"$date\": {\"$numberLong\": \"1393660800000\"}}}", "{\"$subtract\": [\"$date\", 300000]}", "{\"$date\": {\"$numberLong\": \"1393660500000\"}}"},
    {"{}", "{\"$subtract\": [5, 7]}", "-2"},
    {"{}", "{\"$subtract\": [-2147483648, 1]}", "{\"$numberLong\": \"-2147483649\"}"},
    {"{}", "{\"$subtract\": [{\"$numberLong\": \"5\"}, 1]}", "{\"$numberLong\": \"4\"}"},
    {"{}", "{\"$subtract\": [{\"$numberLong\": \"-9223372036854775808\"}, 1]}", "-9.2233720368547758e+18"},
    {"{}", "{\"$subtract\": [5, 2.5]}", "2.5"},
    {"{}", "{\"$subtract\": [{\"$numberDecimal\": \"1\"}, 0.1]}", "{\"$numberDecimal\": \"0.900000000000000\"}"},
    {"{}", "{\"$subtract\": [{\"$numberDecimal\": \"1.0\"}, {\"$numberDecimal\": \"1\"}]}", "{\"$numberDecimal\": \"0.0\"}"},
    {"{}", "{\"$subtract\": [{\"$numberDecimal\": \"-1\"}, {\"$numberDecimal\": \"-1\"}]}", "{\"$numberDecimal\": \"0\"}"},
    {"{}", "{\"$subtract\": [{\"$date\": {\"$numberLong\": \"10\"}}, 1.5]}", "{\"$date\": {\"$numberLong\": \"8\"}}"},
    {"{}", "{\"$subtract\": [{\"$date\": {\"$numberLong\": \"10\"}}, {\"$numberDecimal\": \"2.5\"}]}", "{\"$date\": {\"$numberLong\": \"8\"}}"},
    {"{}", "{\"$subtract\": [{\"$date\": {\"$numberLong\": \"0\"}}, {\"$date\": {\"$numberLong\": \"10\"}}]}", "{\"$numberLong\": \"-10\"}"},
    {"{}", "{\"$subtract\": [{\"$date\": {\"$numberLong\": \"-9223372036854775808\"}}, 1]}", "ERROR:date overflow"},
    {"{}", "{\"$subtract\": [5, {\"$date\": {\"$numberLong\": \"0\"}}]}", "ERROR:can't subtract date"},
    {"{}", "{\"$subtract\": [{\"$date\": {\"$numberLong\": \"0\"}}, \"a\"]}", "ERROR:can't subtract string \"a\" from a date"},
    {"{}", "{\"$subtract\": [\"a\", 1]}", "ERROR:can't subtract int 1 from string"},
    {"{}", "{\"$subtract\": [\"a\", null]}", "null"},
    {"{}", "{\"$subtract\": [null, 1]}", "null"},
    {"{}", "{\"$subtract\": [1, \"$nope\"]}", "null"},
    {"{}", "{\"$subtract\": [1]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t multiplies[] = {
    {"{\"price\": 10, \"quantity\": 2}", "{\"$multiply\": [\"$price\", \"$quantity\"]}", "20"},
    {"{}", "{\"$multiply\": []}", "1"},
    {"{}", "{\"$multiply\": [65536, 65536]}", "{\"$numberLong\": \"4294967296\"}"},
    {"{}", "{\"$multiply\": [{\"$numberLong\": \"3\"}, 2]}", "{\"$numberLong\": \"6\"}"},
    {"{}", "{\"$multiply\": [{\"$numberLong\": \"9223372036854775807\"}, 2]}", "1.8446744073709552e+19"},
    {"{}", "{\"$multiply\": [2, 2.5]}", "5.0"},
    {"{}", "{\"$multiply\": [{\"$numberDecimal\": \"1.5\"}, 2]}", "{\"$numberDecimal\": \"3.0\"}"},
    {"{}", "{\"$multiply\": [{\"$numberDecimal\": \"1.10\"}, {\"$numberDecimal\": \"2.0\"}]}", "{\"$numberDecimal\": \"2.200\"}"},
    {"{}", "{\"$multiply\": [0.5, {\"$numberDecimal\": \"2\"}]}", "{\"$numberDecimal\": \"1.000000000000000\"}"},
    {"{}", "{\"$multiply\": [{\"$numberDecimal\": \"1E-6176\"}, {\"$numberDecimal\": \"0.1\"}]}", "{\"$numberDecimal\": \"0E-6176\"}"},
    {"{}", "{\"$multiply\": [{\"$numberDecimal\": \"1E+6000\"}, {\"$numberDecimal\": \"1E+6000\"}]}", "{\"$numberDecimal\": \"Infinity\"}"},
    {"{}", "{\"$multiply\": [{\"$numberDecimal\": \"Infinity\"}, 0]}", "{\"$numberDecimal\": \"NaN\"}"},
    {"{}", "{\"$multiply\": [{\"$numberDecimal\": \"1234567890123456789012345678901234\"}, {\"$numberDecimal\": \"10.1\"}]}", "{\"$numberDecimal\": \"1.246913569024691356902469135690246E+34\"}"},
    {"{}", "{\"$multiply\": [2, null]}", "null"},
    {"{}", "{\"$multiply\": [null, \"x\"]}", "null"},
    {"{}", "{\"$multiply\": [\"x\", null]}", "ERROR:only supports numeric types, not string"},
    {"{}", "{\"$multiply\": [2, [3]]}", "ERROR:not array"},
    {NULL, NULL, NULL},
};

static const x_case_t divides[] = {
    {"{\"hours\": 40, \"workdays\": 5}", "{\"$divide\": [\"$hours\", 8]}", "5.0"},
    {"{}", "{\"$divide\": [1, 3]}", "0.33333333333333331"},
    {"{}", "{\"$divide\": [{\"$numberLong\": \"7\"}, 2]}", "3.5"},
    {"{}", "{\"$divide\": [{\"$numberDecimal\": \"1\"}, 4]}", "{\"$numberDecimal\": \"0.25\"}"},
    {"{}", "{\"$divide\": [{\"$numberDecimal\": \"1\"}, 3]}", "{\"$numberDecimal\": \"0.3333333333333333333333333333333333\"}"},
    {"{}", "{\"$divide\": [{\"$numberDecimal\": \"2\"}, 3]}", "{\"$numberDecimal\": \"0.6666666666666666666666666666666667\"}"},
    {"{}", "{\"$divide\": [{\"$numberDecimal\": \"6.00\"}, {\"$numberDecimal\": \"2\"}]}", "{\"$numberDecimal\": \"3.00\"}"},
    {"{}", "{\"$divide\": [{\"$numberDecimal\": \"6\"}, {\"$numberDecimal\": \"2.0\"}]}", "{\"$numberDecimal\": \"3\"}"},
    {"{}", "{\"$divide\": [{\"$numberDecimal\": \"1E+5\"}, {\"$numberDecimal\": \"1E+2\"}]}", "{\"$numberDecimal\": \"1E+3\"}"},
    {"{}", "{\"$divide\": [{\"$numberDecimal\": \"1\"}, 0.5]}", "{\"$numberDecimal\": \"2\"}"},
    {"{}", "{\"$divide\": [1, 0]}", "ERROR:can't divide by zero"},
    {"{}", "{\"$divide\": [1, -0.0]}", "ERROR:can't divide by zero"},
    {"{}", "{\"$divide\": [1, {\"$numberDecimal\": \"0E+3\"}]}", "ERROR:can't divide by zero"},
    {"{}", "{\"$divide\": [null, 0]}", "null"},
    {"{}", "{\"$divide\": [\"a\", null]}", "null"},
    {"{}", "{\"$divide\": [\"a\", 1]}", "ERROR:only supports numeric types, not string \"a\" and int 1"},
    {"{}", "{\"$divide\": [1, 2, 3]}", "PARSE:exactly 2"},
    {NULL, NULL, NULL},
};

static const x_case_t mods[] = {
    {"{\"hours\": 80, \"tasks\": 7}", "{\"$mod\": [\"$hours\", \"$tasks\"]}", "3"},
    {"{}", "{\"$mod\": [-5, 3]}", "-2"},
    {"{}", "{\"$mod\": [5, -3]}", "2"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"10\"}, 3]}", "{\"$numberLong\": \"1\"}"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"-9223372036854775808\"}, -1]}", "{\"$numberLong\": \"0\"}"},
    {"{}", "{\"$mod\": [-2147483648, -1]}", "0"},
    {"{}", "{\"$mod\": [5.5, 2]}", "1.5"},
    {"{}", "{\"$mod\": [-5.5, 2]}", "-1.5"},
    {"{}", "{\"$mod\": [{\"$numberDecimal\": \"5.5\"}, 2]}", "{\"$numberDecimal\": \"1.5\"}"},
    {"{}", "{\"$mod\": [{\"$numberDecimal\": \"10\"}, {\"$numberDecimal\": \"0.3\"}]}", "{\"$numberDecimal\": \"0.1\"}"},
    {"{}", "{\"$mod\": [{\"$numberDecimal\": \"-7.50\"}, {\"$numberDecimal\": \"2\"}]}", "{\"$numberDecimal\": \"-1.50\"}"},
    {"{}", "{\"$mod\": [{\"$numberDecimal\": \"1E+6000\"}, 7]}", "{\"$numberDecimal\": \"1\"}"},
    {"{}", "{\"$mod\": [{\"$numberDecimal\": \"7\"}, {\"$numberDecimal\": \"1E+40\"}]}", "{\"$numberDecimal\": \"7\"}"},
    {"{}", "{\"$mod\": [5, 0]}", "ERROR:can't mod by zero"},
    {"{}", "{\"$mod\": [5, 0.0]}", "ERROR:can't mod by zero"},
    {"{}", "{\"$mod\": [{\"$numberDecimal\": \"5\"}, 0]}", "ERROR:can't mod by zero"},
    {"{}", "{\"$mod\": [null, 0]}", "null"},
    {"{}", "{\"$mod\": [\"a\", null]}", "null"},
    {"{}", "{\"$mod\": [\"a\", 2]}", "ERROR:only supports numeric types"},
    {NULL, NULL, NULL},
};

/* The server's expectations (expression_mod.js): the type of each pair,
 * a double divisor that is integral keeping an integral dividend's type,
 * zero refused, NaN and infinities; the result has the dividend's sign. */
static const x_case_t mods_server[] = {
    {"{}", "{\"$mod\": [138.5, 3.0]}", "0.5"},
    {"{}", "{\"$mod\": [138.5, {\"$numberLong\": \"3\"}]}", "0.5"},
    {"{}", "{\"$mod\": [138.5, 3]}", "0.5"},
    {"{}", "{\"$mod\": [8, 3.25]}", "1.5"},
    {"{}", "{\"$mod\": [8, 3.0]}", "2"},
    {"{}", "{\"$mod\": [8, 3]}", "2"},
    {"{}", "{\"$mod\": [8, {\"$numberLong\": \"3\"}]}", "{\"$numberLong\": \"2\"}"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"8\"}, 3.25]}", "1.5"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"8\"}, 3.0]}", "{\"$numberLong\": \"2\"}"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"500000000000\"}, 450000000000.0]}", "50000000000.0"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"8\"}, 3]}", "{\"$numberLong\": \"2\"}"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"8\"}, {\"$numberLong\": \"3\"}]}", "{\"$numberLong\": \"2\"}"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"800000000000\"}, {\"$numberLong\": \"300000000000\"}]}", "{\"$numberLong\": \"200000000000\"}"},
    {"{}", "{\"$mod\": [10.0, 0.0]}", "ERROR:can't mod by zero"},
    {"{}", "{\"$mod\": [10, 0]}", "ERROR:can't mod by zero"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"10\"}, {\"$numberLong\": \"0\"}]}", "ERROR:can't mod by zero"},
    {"{}", "{\"$mod\": [10.0, {\"$numberDouble\": \"NaN\"}]}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$mod\": [10.0, {\"$numberDouble\": \"Infinity\"}]}", "10.0"},
    {"{}", "{\"$mod\": [10.0, {\"$numberDouble\": \"-Infinity\"}]}", "10.0"},
    {"{}", "{\"$mod\": [{\"$numberDouble\": \"NaN\"}, 10.0]}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$mod\": [-8, 3]}", "-2"},
    {"{}", "{\"$mod\": [-8, -3]}", "-2"},
    {"{}", "{\"$mod\": [8, -3]}", "2"},
    {"{}", "{\"$mod\": [{\"$numberLong\": \"-8\"}, 3]}", "{\"$numberLong\": \"-2\"}"},
    {"{}", "{\"$mod\": [-8.5, -3]}", "-2.5"},
    {"{}", "{\"$mod\": [8.5, -3.0]}", "2.5"},
    {NULL, NULL, NULL},
};

static const x_case_t absolutes[] = {
    {"{\"startTemp\": 50, \"endTemp\": 80}", "{\"$abs\": {\"$subtract\": [\"$startTemp\", \"$endTemp\"]}}", "30"},
    {"{}", "{\"$abs\": -1}", "1"},
    {"{}", "{\"$abs\": [-2147483648]}", "{\"$numberLong\": \"2147483648\"}"},
    {"{}", "{\"$abs\": {\"$numberLong\": \"-5\"}}", "{\"$numberLong\": \"5\"}"},
    {"{}", "{\"$abs\": {\"$numberLong\": \"-9223372036854775808\"}}", "ERROR:smallest long"},
    {"{}", "{\"$abs\": -2.5}", "2.5"},
    {"{}", "{\"$abs\": -0.0}", "0.0"},
    {"{}", "{\"$abs\": {\"$numberDecimal\": \"-1.50\"}}", "{\"$numberDecimal\": \"1.50\"}"},
    {"{}", "{\"$abs\": {\"$numberDecimal\": \"-Infinity\"}}", "{\"$numberDecimal\": \"Infinity\"}"},
    {"{}", "{\"$abs\": null}", "null"},
    {"{}", "{\"$abs\": \"$nope\"}", "null"},
    {"{}", "{\"$abs\": \"x\"}", "ERROR:only supports numeric types, not string \"x\""},
    {"{}", "{\"$abs\": [1, 2]}", "PARSE:exactly 1"},
    {NULL, NULL, NULL},
};

static const x_case_t ceilfloor[] = {
    {"{}", "{\"$ceil\": 1}", "1"},
    {"{}", "{\"$ceil\": 7.80}", "8.0"},
    {"{}", "{\"$ceil\": -2.8}", "-2.0"},
    {"{}", "{\"$ceil\": -0.5}", "-0.0"},
    {"{}", "{\"$ceil\": {\"$numberLong\": \"3\"}}", "{\"$numberLong\": \"3\"}"},
    {"{}", "{\"$ceil\": {\"$numberDecimal\": \"1.01\"}}", "{\"$numberDecimal\": \"2\"}"},
    {"{}", "{\"$ceil\": {\"$numberDecimal\": \"-1.99\"}}", "{\"$numberDecimal\": \"-1\"}"},
    {"{}", "{\"$ceil\": {\"$numberDecimal\": \"12E+2\"}}", "{\"$numberDecimal\": \"1200\"}"},
    {"{}", "{\"$floor\": 7.80}", "7.0"},
    {"{}", "{\"$floor\": -2.8}", "-3.0"},
    {"{}", "{\"$floor\": {\"$numberDecimal\": \"-1.01\"}}", "{\"$numberDecimal\": \"-2\"}"},
    {"{}", "{\"$floor\": {\"$numberDecimal\": \"0.5\"}}", "{\"$numberDecimal\": \"0\"}"},
    {"{}", "{\"$floor\": {\"$numberDecimal\": \"NaN\"}}", "{\"$numberDecimal\": \"NaN\"}"},
    {"{}", "{\"$floor\": null}", "null"},
    {"{}", "{\"$floor\": \"$nope\"}", "null"},
    {"{}", "{\"$floor\": \"1\"}", "ERROR:only supports numeric types"},
    {NULL, NULL, NULL},
};

static const x_case_t rounds[] = {
    {"{}", "{\"$round\": [19.25, 1]}", "19.199999999999999"},
    {"{}", "{\"$round\": [28.73, 1]}", "28.699999999999999"},
    {"{}", "{\"$round\": [34.32, 1]}", "34.299999999999997"},
    {"{}", "{\"$round\": [-45.39, 1]}", "-45.399999999999999"},
    {"{}", "{\"$round\": [19.25, 0]}", "19.0"},
    {"{}", "{\"$round\": [28.73, -1]}", "30.0"},
    {"{}", "{\"$round\": [34.32, -1]}", "30.0"},
    {"{}", "{\"$round\": [-45.39, -1]}", "-50.0"},
    {"{}", "{\"$round\": [1234.5678, -2]}", "1200.0"},
    {"{}", "{\"$round\": 2.5}", "2.0"},
    {"{}", "{\"$round\": 3.5}", "4.0"},
    {"{}", "{\"$round\": -2.5}", "-2.0"},
    {"{}", "{\"$round\": -0.4}", "-0.0"},
    {"{}", "{\"$round\": [2.675, 2]}", "2.6699999999999999"},
    {"{}", "{\"$round\": [1.005, 2]}", "1.0"},
    {"{}", "{\"$round\": [0.125, 2]}", "0.12"},
    {"{}", "{\"$round\": [25, -1]}", "20"},
    {"{}", "{\"$round\": [35, -1]}", "40"},
    {"{}", "{\"$round\": [1234, 2]}", "1234"},
    {"{}", "{\"$round\": [{\"$numberLong\": \"15\"}, -1]}", "{\"$numberLong\": \"20\"}"},
    {"{}", "{\"$round\": [2147483647, -1]}", "{\"$numberLong\": \"2147483650\"}"},
    {"{}", "{\"$round\": [{\"$numberLong\": \"9223372036854775807\"}, -1]}", "ERROR:does not fit a long"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1.25\"}, 1]}", "{\"$numberDecimal\": \"1.2\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1.35\"}, 1]}", "{\"$numberDecimal\": \"1.4\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"5\"}, 2]}", "{\"$numberDecimal\": \"5.00\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1250\"}, -2]}", "{\"$numberDecimal\": \"1.2E+3\"}"},
    {"{}", "{\"$round\": {\"$numberDecimal\": \"-0.5\"}}", "{\"$numberDecimal\": \"-0\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1E+40\"}, 0]}", "{\"$numberDecimal\": \"1.000000000000000000000000000000000E+40\"}"},
    {"{}", "{\"$round\": {\"$numberDecimal\": \"Infinity\"}}", "{\"$numberDecimal\": \"Infinity\"}"},
    {"{}", "{\"$round\": {\"$numberDouble\": \"Infinity\"}}", "{\"$numberDouble\": \"Infinity\"}"},
    {"{}", "{\"$round\": [5.5, 2.0]}", "5.5"},
    {"{}", "{\"$round\": [5.5, {\"$numberLong\": \"0\"}]}", "6.0"},
    {"{}", "{\"$round\": [5.5, 1.5]}", "ERROR:integral"},
    {"{}", "{\"$round\": [5.5, \"1\"]}", "ERROR:integral"},
    {"{}", "{\"$round\": [5.5, 101]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [5.5, -21]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [5.5, 100]}", "5.5"},
    {"{}", "{\"$round\": [5.5, 32]}", "5.5"},
    {"{}", "{\"$round\": [null, 1]}", "null"},
    {"{}", "{\"$round\": [1.5, null]}", "null"},
    {"{}", "{\"$round\": [1.5, \"$nope\"]}", "null"},
    {"{}", "{\"$round\": [\"a\", 1]}", "ERROR:only supports numeric types, not string"},
    {"{}", "{\"$round\": [1, 2, 3]}", "PARSE:takes 1 to 2 arguments"},
    {"{}", "{\"$trunc\": [19.25, 1]}", "19.199999999999999"},
    {"{}", "{\"$trunc\": [-45.39, 1]}", "-45.299999999999997"},
    {"{}", "{\"$trunc\": [28.73, -1]}", "20.0"},
    {"{}", "{\"$trunc\": 2.9}", "2.0"},
    {"{}", "{\"$trunc\": -2.9}", "-2.0"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"1.239\"}, 2]}", "{\"$numberDecimal\": \"1.23\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"-19\"}, -1]}", "{\"$numberDecimal\": \"-1E+1\"}"},
    {"{}", "{\"$trunc\": [99, -1]}", "90"},
    {"{}", "{\"$trunc\": [-99, -1]}", "-90"},
    {"{}", "{\"$trunc\": [7, 1]}", "7"},
    {"{}", "{\"$trunc\": \"x\"}", "ERROR:only supports numeric types"},
    {NULL, NULL, NULL},
};

/* The server's expectations (round_trunc.js) and every numeric type at a
 * place: NaN and infinities pass through, a place past 34 digits pads to
 * 34 (1.298 at 100 places), int and long keep their type. */
static const x_case_t round_trunc_server[] = {
    {"{}", "{\"$trunc\": {\"$numberLong\": \"4\"}}", "{\"$numberLong\": \"4\"}"},
    {"{}", "{\"$trunc\": {\"$numberDouble\": \"NaN\"}}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$trunc\": {\"$numberDouble\": \"Infinity\"}}", "{\"$numberDouble\": \"Infinity\"}"},
    {"{}", "{\"$trunc\": {\"$numberDouble\": \"-Infinity\"}}", "{\"$numberDouble\": \"-Infinity\"}"},
    {"{}", "{\"$trunc\": null}", "null"},
    {"{}", "{\"$trunc\": -2.0}", "-2.0"},
    {"{}", "{\"$trunc\": 0.9}", "0.0"},
    {"{}", "{\"$trunc\": -1.2}", "-1.0"},
    {"{}", "{\"$trunc\": {\"$numberDecimal\": \"-1.6\"}}", "{\"$numberDecimal\": \"-1\"}"},
    {"{}", "{\"$round\": {\"$numberLong\": \"4\"}}", "{\"$numberLong\": \"4\"}"},
    {"{}", "{\"$round\": {\"$numberDouble\": \"NaN\"}}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$round\": {\"$numberDouble\": \"Infinity\"}}", "{\"$numberDouble\": \"Infinity\"}"},
    {"{}", "{\"$round\": {\"$numberDouble\": \"-Infinity\"}}", "{\"$numberDouble\": \"-Infinity\"}"},
    {"{}", "{\"$round\": null}", "null"},
    {"{}", "{\"$round\": -2.0}", "-2.0"},
    {"{}", "{\"$round\": 0.9}", "1.0"},
    {"{}", "{\"$round\": -1.2}", "-1.0"},
    {"{}", "{\"$round\": {\"$numberDecimal\": \"-1.6\"}}", "{\"$numberDecimal\": \"-2\"}"},
    {"{}", "{\"$trunc\": [1.298, 0]}", "1.0"},
    {"{}", "{\"$trunc\": [1.298, 1]}", "1.2"},
    {"{}", "{\"$trunc\": [23.298, -1]}", "20.0"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"1.298\"}, 0]}", "{\"$numberDecimal\": \"1\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"1.298\"}, 1]}", "{\"$numberDecimal\": \"1.2\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"23.298\"}, -1]}", "{\"$numberDecimal\": \"2E+1\"}"},
    {"{}", "{\"$trunc\": [1.298, 100]}", "1.298"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"1.298912343250054252245154325\"}, {\"$numberLong\": \"20\"}]}", "{\"$numberDecimal\": \"1.29891234325005425224\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"1.298\"}, {\"$numberDecimal\": \"100\"}]}", "{\"$numberDecimal\": \"1.298000000000000000000000000000000\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDouble\": \"Infinity\"}, 0]}", "{\"$numberDouble\": \"Infinity\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDouble\": \"-Infinity\"}, 0]}", "{\"$numberDouble\": \"-Infinity\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDouble\": \"NaN\"}, 0]}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"Infinity\"}, 0]}", "{\"$numberDecimal\": \"Infinity\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"-Infinity\"}, 0]}", "{\"$numberDecimal\": \"-Infinity\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"NaN\"}, 0]}", "{\"$numberDecimal\": \"NaN\"}"},
    {"{}", "{\"$trunc\": [1, {\"$numberLong\": \"101\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$trunc\": [1, {\"$numberLong\": \"-21\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$trunc\": [1, {\"$numberDecimal\": \"101\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$trunc\": [1, {\"$numberDecimal\": \"-21\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$trunc\": [1, 101]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$trunc\": [1, -21]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [1.298, 0]}", "1.0"},
    {"{}", "{\"$round\": [1.298, 1]}", "1.3"},
    {"{}", "{\"$round\": [23.298, -1]}", "20.0"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1.298\"}, 0]}", "{\"$numberDecimal\": \"1\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1.298\"}, 1]}", "{\"$numberDecimal\": \"1.3\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"23.298\"}, -1]}", "{\"$numberDecimal\": \"2E+1\"}"},
    {"{}", "{\"$round\": [1.298, 100]}", "1.298"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1.298912343250054252245154325\"}, {\"$numberLong\": \"20\"}]}", "{\"$numberDecimal\": \"1.29891234325005425225\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1.298\"}, {\"$numberDecimal\": \"100\"}]}", "{\"$numberDecimal\": \"1.298000000000000000000000000000000\"}"},
    {"{}", "{\"$round\": [{\"$numberDouble\": \"Infinity\"}, 0]}", "{\"$numberDouble\": \"Infinity\"}"},
    {"{}", "{\"$round\": [{\"$numberDouble\": \"-Infinity\"}, 0]}", "{\"$numberDouble\": \"-Infinity\"}"},
    {"{}", "{\"$round\": [{\"$numberDouble\": \"NaN\"}, 0]}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"Infinity\"}, 0]}", "{\"$numberDecimal\": \"Infinity\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"-Infinity\"}, 0]}", "{\"$numberDecimal\": \"-Infinity\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"NaN\"}, 0]}", "{\"$numberDecimal\": \"NaN\"}"},
    {"{}", "{\"$round\": [1, {\"$numberLong\": \"101\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [1, {\"$numberLong\": \"-21\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [1, {\"$numberDecimal\": \"101\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [1, {\"$numberDecimal\": \"-21\"}]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [1, 101]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [1, -21]}", "ERROR:outside [-20, 100]"},
    {"{}", "{\"$round\": [2147483647, -1]}", "{\"$numberLong\": \"2147483650\"}"},
    {"{}", "{\"$round\": [{\"$numberLong\": \"9223372036854775806\"}, -1]}", "ERROR:does not fit a long"},
    {"{}", "{\"$round\": [1, {\"$numberDecimal\": \"1.4\"}]}", "ERROR:integral"},
    {"{}", "{\"$trunc\": [1, 10.5]}", "ERROR:integral"},
    {"{}", "{\"$trunc\": \"string\"}", "ERROR:only supports numeric types"},
    {"{}", "{\"$trunc\": [1, 2, 3]}", "PARSE:takes 1 to 2 arguments"},
    {"{}", "{\"$round\": [1234, 2]}", "1234"},
    {"{}", "{\"$round\": [1250, -2]}", "1200"},
    {"{}", "{\"$round\": [1350, -2]}", "1400"},
    {"{}", "{\"$trunc\": [1299, -2]}", "1200"},
    {"{}", "{\"$trunc\": [-1299, -2]}", "-1200"},
    {"{}", "{\"$round\": [{\"$numberLong\": \"1250\"}, -2]}", "{\"$numberLong\": \"1200\"}"},
    {"{}", "{\"$trunc\": [{\"$numberLong\": \"-1299\"}, -2]}", "{\"$numberLong\": \"-1200\"}"},
    {"{}", "{\"$round\": [{\"$numberLong\": \"7\"}, 1]}", "{\"$numberLong\": \"7\"}"},
    {"{}", "{\"$round\": [1.25, 1]}", "1.2"},
    {"{}", "{\"$round\": [-1.35, 1]}", "-1.4"},
    {"{}", "{\"$trunc\": [-1.29, 1]}", "-1.2"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1.25\"}, -1]}", "{\"$numberDecimal\": \"0E+1\"}"},
    {"{}", "{\"$trunc\": [{\"$numberDecimal\": \"-19.9\"}, 0]}", "{\"$numberDecimal\": \"-19\"}"},
    {"{}", "{\"$round\": [{\"$numberDecimal\": \"1E+40\"}, -20]}", "{\"$numberDecimal\": \"1.00000000000000000000E+40\"}"},
    {NULL, NULL, NULL},
};

static const x_case_t logs[] = {
    {"{}", "{\"$exp\": 0}", "1.0"},
    {"{}", "{\"$exp\": 1}", "2.7182818284590451"},
    {"{}", "{\"$exp\": {\"$numberDecimal\": \"0\"}}", "{\"$numberDecimal\": \"1\"}"},
    {"{}", "{\"$exp\": {\"$numberDecimal\": \"1\"}}", "{\"$numberDecimal\": \"2.71828182845904524\"}"},
    {"{}", "{\"$exp\": null}", "null"},
    {"{}", "{\"$exp\": \"x\"}", "ERROR:only supports numeric types"},
    {"{}", "{\"$ln\": 1}", "0.0"},
    {"{}", "{\"$ln\": 10}", "2.3025850929940459"},
    {"{}", "{\"$ln\": {\"$numberLong\": \"1\"}}", "0.0"},
    {"{}", "{\"$ln\": {\"$numberDecimal\": \"1\"}}", "{\"$numberDecimal\": \"0\"}"},
    {"{}", "{\"$ln\": {\"$numberDecimal\": \"10\"}}", "{\"$numberDecimal\": \"2.30258509299404568\"}"},
    {"{}", "{\"$ln\": 0}", "ERROR:must be a positive number"},
    {"{}", "{\"$ln\": -1}", "ERROR:must be a positive number, not -1"},
    {"{}", "{\"$ln\": {\"$numberDecimal\": \"-1\"}}", "ERROR:must be a positive number"},
    {"{}", "{\"$ln\": {\"$numberDouble\": \"NaN\"}}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$ln\": {\"$numberDecimal\": \"NaN\"}}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$ln\": null}", "null"},
    {"{}", "{\"$ln\": \"x\"}", "ERROR:only supports numeric types"},
    {"{}", "{\"$log10\": 1}", "0.0"},
    {"{}", "{\"$log10\": 10}", "1.0"},
    {"{}", "{\"$log10\": 1000}", "3.0"},
    {"{}", "{\"$log10\": {\"$numberDecimal\": \"1000\"}}", "{\"$numberDecimal\": \"3\"}"},
    {"{}", "{\"$log10\": 0}", "ERROR:must be a positive number"},
    {"{}", "{\"$log10\": -0.5}", "ERROR:must be a positive number"},
    {"{}", "{\"$log10\": null}", "null"},
    {"{}", "{\"$log\": [100, 10]}", "2.0"},
    {"{}", "{\"$log\": [8, 2]}", "3.0"},
    {"{}", "{\"$log\": [{\"$numberDecimal\": \"8\"}, 2]}", "{\"$numberDecimal\": \"3\"}"},
    {"{}", "{\"$log\": [100, null]}", "null"},
    {"{}", "{\"$log\": [\"$nope\", 10]}", "null"},
    {"{}", "{\"$log\": [0, 10]}", "ERROR:the argument must be a positive number"},
    {"{}", "{\"$log\": [10, 1]}", "ERROR:the base must be a positive number not equal to 1"},
    {"{}", "{\"$log\": [10, -2]}", "ERROR:the base must be a positive number"},
    {"{}", "{\"$log\": [\"a\", 2]}", "ERROR:the argument must be numeric, not string"},
    {"{}", "{\"$log\": [2, \"a\"]}", "ERROR:the base must be numeric, not string"},
    {"{}", "{\"$log\": [2]}", "PARSE:exactly 2"},
    {"{}", "{\"$sqrt\": 25}", "5.0"},
    {"{}", "{\"$sqrt\": 2}", "1.4142135623730951"},
    {"{}", "{\"$sqrt\": 0}", "0.0"},
    {"{}", "{\"$sqrt\": -0.0}", "-0.0"},
    {"{}", "{\"$sqrt\": {\"$numberDecimal\": \"25\"}}", "{\"$numberDecimal\": \"5\"}"},
    {"{}", "{\"$sqrt\": {\"$numberDecimal\": \"2\"}}", "{\"$numberDecimal\": \"1.414213562373095048801688724209698\"}"},
    {"{}", "{\"$sqrt\": {\"$numberDecimal\": \"0.0100\"}}", "{\"$numberDecimal\": \"0.10\"}"},
    {"{}", "{\"$sqrt\": {\"$numberDecimal\": \"1E+3\"}}", "{\"$numberDecimal\": \"31.62277660168379331998893544432719\"}"},
    {"{}", "{\"$sqrt\": {\"$numberDecimal\": \"-0\"}}", "{\"$numberDecimal\": \"-0\"}"},
    {"{}", "{\"$sqrt\": -1}", "ERROR:greater than or equal to 0"},
    {"{}", "{\"$sqrt\": {\"$numberDecimal\": \"-1E-10\"}}", "ERROR:greater than or equal to 0"},
    {"{}", "{\"$sqrt\": {\"$numberDouble\": \"NaN\"}}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$sqrt\": null}", "null"},
    {"{}", "{\"$sqrt\": \"4\"}", "ERROR:only supports numeric types"},
    {NULL, NULL, NULL},
};

static const x_case_t pows[] = {
    {"{}", "{\"$pow\": [5, 0]}", "1"},
    {"{}", "{\"$pow\": [5, 2]}", "25"},
    {"{}", "{\"$pow\": [-5, 3]}", "-125"},
    {"{}", "{\"$pow\": [2, 31]}", "{\"$numberLong\": \"2147483648\"}"},
    {"{}", "{\"$pow\": [2, 62]}", "{\"$numberLong\": \"4611686018427387904\"}"},
    {"{}", "{\"$pow\": [2, 63]}", "9.2233720368547758e+18"},
    {"{}", "{\"$pow\": [-2, 63]}", "{\"$numberLong\": \"-9223372036854775808\"}"},
    {"{}", "{\"$pow\": [2, 64]}", "1.8446744073709552e+19"},
    {"{}", "{\"$pow\": [{\"$numberLong\": \"3\"}, 2]}", "{\"$numberLong\": \"9\"}"},
    {"{}", "{\"$pow\": [3, {\"$numberLong\": \"2\"}]}", "{\"$numberLong\": \"9\"}"},
    {"{}", "{\"$pow\": [2, -1]}", "0.5"},
    {"{}", "{\"$pow\": [1, -5]}", "1"},
    {"{}", "{\"$pow\": [-1, -5]}", "-1"},
    {"{}", "{\"$pow\": [-1, 4]}", "1"},
    {"{}", "{\"$pow\": [0, 0]}", "1"},
    {"{}", "{\"$pow\": [0, 5]}", "0"},
    {"{}", "{\"$pow\": [2, 0.5]}", "1.4142135623730951"},
    {"{}", "{\"$pow\": [4.0, 2]}", "16.0"},
    {"{}", "{\"$pow\": [{\"$numberDecimal\": \"2\"}, 10]}", "{\"$numberDecimal\": \"1024\"}"},
    {"{}", "{\"$pow\": [{\"$numberDecimal\": \"1.5\"}, 2]}", "{\"$numberDecimal\": \"2.25\"}"},
    {"{}", "{\"$pow\": [0, -1]}", "ERROR:base of 0 and a negative exponent"},
    {"{}", "{\"$pow\": [0.0, -0.5]}", "ERROR:base of 0 and a negative exponent"},
    {"{}", "{\"$pow\": [{\"$numberDecimal\": \"0\"}, -1]}", "ERROR:base of 0 and a negative exponent"},
    {"{}", "{\"$pow\": [null, 2]}", "null"},
    {"{}", "{\"$pow\": [2, \"$nope\"]}", "null"},
    {"{}", "{\"$pow\": [\"2\", 2]}", "ERROR:the base must be numeric, not string"},
    {"{}", "{\"$pow\": [2, \"2\"]}", "ERROR:the exponent must be numeric, not string"},
    {NULL, NULL, NULL},
};

static const x_case_t trigs[] = {
    {"{}", "{\"$sin\": 0}", "0.0"},
    {"{}", "{\"$sin\": 1}", "0.8414709848078965"},
    {"{}", "{\"$cos\": 0}", "1.0"},
    {"{}", "{\"$cos\": {\"$numberLong\": \"0\"}}", "1.0"},
    {"{}", "{\"$tan\": 0.5}", "0.54630248984379048"},
    {"{}", "{\"$sin\": {\"$numberDouble\": \"Infinity\"}}", "ERROR:cannot apply it to {\"$numberDouble\":\"Infinity\"}, the value must be in (-Infinity,Infinity)"},
    {"{}", "{\"$cos\": {\"$numberDecimal\": \"-Infinity\"}}", "ERROR:(-Infinity,Infinity)"},
    {"{}", "{\"$sin\": {\"$numberDouble\": \"NaN\"}}", "{\"$numberDouble\": \"NaN\"}"},
    {"{}", "{\"$sin\": {\"$numberDecimal\": \"NaN\"}}", "{\"$numberDecimal\": \"NaN\"}"},
    {"{}", "{\"$sin\": {\"$numberDecimal\": \"0\"}}", "{\"$numberDecimal\": \"0\"}"},
    {"{}", "{\"$asin\": 1}", "1.5707963267948966"},
    {"{}", "{\"$asin\": 1.5}", "ERROR:the value must be in [-1,1]"},
    {"{}", "{\"$acos\": 1}", "0.0"},
    {"{}", "{\"$acos\": -1.0001}", "ERROR:[-1,1]"},
    {"{}", "{\"$acos\": {\"$numberDecimal\": \"1.000000000000000000000000000000001\"}}", "ERROR:[-1,1]"},
    {"{}", "{\"$acos\": {\"$numberDecimal\": \"1\"}}", "{\"$numberDecimal\": \"0\"}"},
    {"{}", "{\"$atan\": 1}", "0.78539816339744828"},
    {"{}", "{\"$atan\": {\"$numberDouble\": \"Infinity\"}}", "1.5707963267948966"},
    {"{}", "{\"$atan2\": [1, 1]}", "0.78539816339744828"},
    {"{}", "{\"$atan2\": [0, -1]}", "3.1415926535897931"},
    {"{}", "{\"$atan2\": [null, \"x\"]}", "null"},
    {"{}", "{\"$atan2\": [\"x\", null]}", "ERROR:only supports numeric types, not string"},
    {"{}", "{\"$atan2\": [1, \"$nope\"]}", "null"},
    {"{}", "{\"$atan2\": [1]}", "PARSE:exactly 2"},
    {"{}", "{\"$sinh\": 0}", "0.0"},
    {"{}", "{\"$cosh\": 0}", "1.0"},
    {"{}", "{\"$tanh\": 0}", "0.0"},
    {"{}", "{\"$asinh\": 0}", "0.0"},
    {"{}", "{\"$acosh\": 1}", "0.0"},
    {"{}", "{\"$acosh\": 0.5}", "ERROR:the value must be in [1,Infinity)"},
    {"{}", "{\"$acosh\": {\"$numberDouble\": \"Infinity\"}}", "{\"$numberDouble\": \"Infinity\"}"},
    {"{}", "{\"$atanh\": 0}", "0.0"},
    {"{}", "{\"$atanh\": 1}", "{\"$numberDouble\": \"Infinity\"}"},
    {"{}", "{\"$atanh\": -1}", "{\"$numberDouble\": \"-Infinity\"}"},
    {"{}", "{\"$atanh\": 2}", "ERROR:[-1,1]"},
    {"{}", "{\"$sin\": null}", "null"},
    {"{}", "{\"$sin\": \"$nope\"}", "null"},
    {"{}", "{\"$sin\": \"0\"}", "ERROR:only supports numeric types"},
    {"{}", "{\"$degreesToRadians\": 180}", "3.1415926535897931"},
    {"{}", "{\"$degreesToRadians\": 90}", "1.5707963267948966"},
    {"{}", "{\"$radiansToDegrees\": 3.141592653589793}", "180.0"},
    {"{}", "{\"$degreesToRadians\": {\"$numberDecimal\": \"180\"}}", "{\"$numberDecimal\": \"3.141592653589793238462643383279503\"}"},
    {"{}", "{\"$degreesToRadians\": {\"$numberDecimal\": \"1\"}}", "{\"$numberDecimal\": \"0.01745329251994329576923690768488613\"}"},
    {"{}", "{\"$radiansToDegrees\": {\"$numberDecimal\": \"1\"}}", "{\"$numberDecimal\": \"57.29577951308232087679815481410517\"}"},
    {"{}", "{\"$degreesToRadians\": null}", "null"},
    {"{}", "{\"$radiansToDegrees\": \"x\"}", "ERROR:only supports numeric types"},
    {NULL, NULL, NULL},
};

static const x_case_t bitwise[] = {
    {"{\"a\": 0, \"b\": 127}", "{\"$bitAnd\": [\"$a\", \"$b\"]}", "0"},
    {"{}", "{\"$bitAnd\": [2, 3]}", "2"},
    {"{}", "{\"$bitOr\": [2, 3]}", "3"},
    {"{}", "{\"$bitXor\": [2, 3]}", "1"},
    {"{}", "{\"$bitAnd\": [2, {\"$numberLong\": \"3\"}]}", "{\"$numberLong\": \"2\"}"},
    {"{}", "{\"$bitOr\": [1, 2, 4]}", "7"},
    {"{}", "{\"$bitAnd\": []}", "-1"},
    {"{}", "{\"$bitOr\": []}", "0"},
    {"{}", "{\"$bitXor\": []}", "0"},
    {"{}", "{\"$bitNot\": 3}", "-4"},
    {"{}", "{\"$bitNot\": {\"$numberLong\": \"3\"}}", "{\"$numberLong\": \"-4\"}"},
    {"{}", "{\"$bitNot\": -1}", "0"},
    {"{}", "{\"$bitAnd\": [1, null]}", "null"},
    {"{}", "{\"$bitAnd\": [1, \"$nope\"]}", "null"},
    {"{}", "{\"$bitOr\": [1, 2.0]}", "ERROR:only supports int and long operands, not double"},
    {"{}", "{\"$bitXor\": [1, {\"$numberDecimal\": \"1\"}]}", "ERROR:only supports int and long"},
    {"{}", "{\"$bitNot\": 1.5}", "ERROR:only supports int and long, not double"},
    {"{}", "{\"$bitNot\": \"1\"}", "ERROR:only supports numeric types"},
    {"{}", "{\"$bitNot\": null}", "null"},
    {NULL, NULL, NULL},
};

static const x_case_t accums[] = {
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$sum\": \"$quizzes\"}", "23"},
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$sum\": [\"$final\", \"$midterm\"]}", "155"},
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$avg\": \"$quizzes\"}", "7.666666666666667"},
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$avg\": [\"$final\", \"$midterm\"]}", "77.5"},
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$max\": \"$quizzes\"}", "10"},
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$min\": [\"$final\", \"$midterm\"]}", "75"},
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$stdDevPop\": \"$quizzes\"}", "1.699673171197595"},
    {"{\"quizzes\": [10, 6, 7], \"labs\": [5, 8], \"final\": 80, \"midterm\": 75}", "{\"$stdDevSamp\": \"$quizzes\"}", "2.081665999466133"},
    {"{}", "{\"$sum\": []}", "0"},
    {"{}", "{\"$sum\": 5}", "5"},
    {"{}", "{\"$sum\": \"x\"}", "0"},
    {"{}", "{\"$sum\": \"$nope\"}", "0"},
    {"{}", "{\"$sum\": [1, \"a\", null, true]}", "1"},
    {"{}", "{\"$sum\": [[1, 2], 3]}", "3"},
    {"{}", "{\"$sum\": [[1, 2]]}", "3"},
    {"{}", "{\"$sum\": [2147483647, 1]}", "{\"$numberLong\": \"2147483648\"}"},
    {"{}", "{\"$sum\": [2147483647, 1, -1]}", "2147483647"},
    {"{}", "{\"$sum\": [{\"$numberLong\": \"1\"}, 1]}", "{\"$numberLong\": \"2\"}"},
    {"{}", "{\"$sum\": [{\"$numberLong\": \"9223372036854775807\"}, 1]}", "9.2233720368547758e+18"},
    {"{}", "{\"$sum\": [{\"$numberLong\": \"9223372036854775807\"}, 1, -1]}", "{\"$numberLong\": \"9223372036854775807\"}"},
    {"{}", "{\"$sum\": [1e16, 1, 1]}", "10000000000000002.0"},
    {"{}", "{\"$sum\": [0.1, 0.2]}", "0.30000000000000004"},
    {"{}", "{\"$sum\": [1, 2.5]}", "3.5"},
    {"{}", "{\"$sum\": [{\"$numberDecimal\": \"1.50\"}, 1]}", "{\"$numberDecimal\": \"2.50\"}"},
    {"{}", "{\"$sum\": [{\"$numberDecimal\": \"1\"}, 0.1]}", "{\"$numberDecimal\": \"1.100000000000000005551115123125783\"}"},
    {"{}", "{\"$avg\": []}", "null"},
    {"{}", "{\"$avg\": [\"a\", null]}", "null"},
    {"{}", "{\"$avg\": [1, 2]}", "1.5"},
    {"{}", "{\"$avg\": [1, \"a\", 3]}", "2.0"},
    {"{}", "{\"$avg\": [{\"$numberDecimal\": \"1\"}, 2]}", "{\"$numberDecimal\": \"1.5\"}"},
    {"{}", "{\"$avg\": [{\"$numberDecimal\": \"1\"}, {\"$numberDecimal\": \"1\"}, {\"$numberDecimal\": \"2\"}]}", "{\"$numberDecimal\": \"1.333333333333333333333333333333333\"}"},
    {"{}", "{\"$min\": [3, 1, 2]}", "1"},
    {"{}", "{\"$min\": [null, 3, \"$nope\"]}", "3"},
    {"{}", "{\"$min\": [null, \"$nope\"]}", "null"},
    {"{}", "{\"$min\": []}", "null"},
    {"{}", "{\"$min\": [1, 1.0]}", "1"},
    {"{}", "{\"$max\": [1, 1.0]}", "1"},
    {"{}", "{\"$min\": [\"a\", 5]}", "5"},
    {"{}", "{\"$max\": [\"a\", 5]}", "\"a\""},
    {"{}", "{\"$max\": [[1, 2], 3]}", "[1, 2]"},
    {"{}", "{\"$max\": [[1, 2]]}", "2"},
    {"{}", "{\"$max\": [{\"$date\": {\"$numberLong\": \"0\"}}, 10]}", "{\"$date\": {\"$numberLong\": \"0\"}}"},
    {"{}", "{\"$max\": \"$nope\"}", "null"},
    {"{}", "{\"$max\": 4}", "4"},
    {"{}", "{\"$stdDevPop\": [1, 2, 3, 4]}", "1.1180339887498949"},
    {"{}", "{\"$stdDevSamp\": [1, 2, 3, 4]}", "1.2909944487358056"},
    {"{}", "{\"$stdDevPop\": [5]}", "0.0"},
    {"{}", "{\"$stdDevSamp\": [5]}", "null"},
    {"{}", "{\"$stdDevPop\": []}", "null"},
    {"{}", "{\"$stdDevPop\": [\"a\", null]}", "null"},
    {"{}", "{\"$stdDevPop\": [{\"$numberDecimal\": \"1\"}, 3]}", "1.0"},
    {NULL, NULL, NULL},
};
#define TABLE_TEST(name)                                                     \
    static void test_expr_##name (void)                                      \
    {                                                                        \
        X_TABLE (name);                                                      \
    }
TABLE_TEST (adds)
TABLE_TEST (subtracts)
TABLE_TEST (multiplies)
TABLE_TEST (divides)
TABLE_TEST (mods)
TABLE_TEST (mods_server)
TABLE_TEST (absolutes)
TABLE_TEST (ceilfloor)
TABLE_TEST (rounds)
TABLE_TEST (round_trunc_server)
TABLE_TEST (logs)
TABLE_TEST (pows)
TABLE_TEST (trigs)
TABLE_TEST (bitwise)
TABLE_TEST (accums)

#ifdef __DEC128_MANT_DIG__
/* Random decimals of every shape: short and 34-digit coefficients,
 * exponents near zero and at both ends of the range, zeros. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t
next_rand (void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void
rand_dec (bson_decimal128_t *d)
{
    char s[80];
    int nd = (int) (next_rand () % 4 == 0 ? 34 : 1 + next_rand () % 20), exp;
    int k = 0;
    if (next_rand () % 2)
        s[k++] = '-';
    for (int i = 0; i < nd; i++)
        s[k++] = (char) ('0' + (i == 0 && next_rand () % 16 ? 1 + next_rand () % 9 : next_rand () % 10));
    switch (next_rand () % 4) {
    case 0:
        exp = (int) (next_rand () % 6111) - 3000;
        break;
    case 1:
        exp = 6111 - 33 - (int) (next_rand () % 40);
        break;
    case 2:
        exp = -6176 + (int) (next_rand () % 40);
        break;
    default:
        exp = (int) (next_rand () % 41) - 20;
        break;
    }
    snprintf (s + k, sizeof s - (size_t) k, "E%d", exp);
    T_CHECK (bson_decimal128_from_string (s, d));
}

static _Decimal128
to_gcc (const bson_decimal128_t *d)
{
    _Decimal128 g;
    uint64_t w[2] = {d->low, d->high};
    memcpy (&g, w, 16);
    return g;
}

static bool
same (const bson_decimal128_t *mine, _Decimal128 g, const char *op, const bson_decimal128_t *a,
      const bson_decimal128_t *b)
{
    uint64_t w[2];
    memcpy (w, &g, 16);
    if (w[0] == mine->low && w[1] == mine->high)
        return true;
    char sa[BSON_DECIMAL128_STRING], sb[BSON_DECIMAL128_STRING], sm[BSON_DECIMAL128_STRING],
        sg[BSON_DECIMAL128_STRING];
    bson_decimal128_t gd = {w[0], w[1]};
    bson_decimal128_to_string (a, sa);
    bson_decimal128_to_string (b, sb);
    bson_decimal128_to_string (mine, sm);
    bson_decimal128_to_string (&gd, sg);
    fprintf (stderr, "  %s %s %s: got %s, BID gives %s\n", sa, op, sb, sm, sg);
    return false;
}

static void
test_expr_decimal_against_bid (void)
{
    int bad = 0;
    for (int i = 0; i < 20000 && bad < 10; i++) {
        bson_decimal128_t a, b, r;
        rand_dec (&a);
        rand_dec (&b);
        if (i % 3 == 0) /* operands close in exponent, so digits meet */
            b.high = (b.high & ~(UINT64_C (0x3fff) << 49)) | (a.high & (UINT64_C (0x3fff) << 49));
        rm_xdec_add (&r, &a, &b);
        bad += !same (&r, to_gcc (&a) + to_gcc (&b), "+", &a, &b);
        rm_xdec_sub (&r, &a, &b);
        bad += !same (&r, to_gcc (&a) - to_gcc (&b), "-", &a, &b);
        rm_xdec_mul (&r, &a, &b);
        bad += !same (&r, to_gcc (&a) * to_gcc (&b), "*", &a, &b);
        if (!rm_xdec_is_zero (&b)) {
            rm_xdec_div (&r, &a, &b);
            bad += !same (&r, to_gcc (&a) / to_gcc (&b), "/", &a, &b);
        }
    }
    /* Conversions: int64 and double to decimal (GCC converts a double
     * exactly, rounded to 34 digits, as the server's 34-digit mode). */
    for (int i = 0; i < 20000 && bad < 10; i++) {
        bson_decimal128_t r, z = {0, 0};
        int64_t v = (int64_t) next_rand () >> (next_rand () % 64);
        double d;
        uint64_t bits = next_rand ();
        memcpy (&d, &bits, 8);
        rm_xdec_from_int64 (&r, v);
        bad += !same (&r, (_Decimal128) v, "from int64", &z, &z);
        if (isfinite (d)) {
            rm_xdec_from_double (&r, d, false);
            bad += !same (&r, (_Decimal128) d, "from double", &z, &z);
        }
    }
    T_CHECK (bad == 0);
}
#endif

/* Decimal operations without an oracle here: quantize, mod, conversions
 * to int64 and from doubles to 15 digits. */
static void
test_expr_decimal_ops (void)
{
    struct {
        const char *a;
        int32_t exp;
        rm_xdec_round_t mode;
        const char *want;
    } q[] = {
        {"2.5", 0, RM_XDEC_HALF_EVEN, "2"},        {"3.5", 0, RM_XDEC_HALF_EVEN, "4"},
        {"-2.5", 0, RM_XDEC_HALF_EVEN, "-2"},      {"2.51", 0, RM_XDEC_HALF_EVEN, "3"},
        {"1.99", -1, RM_XDEC_DOWN, "1.9"},         {"-1.01", 0, RM_XDEC_FLOOR, "-2"},
        {"-1.99", 0, RM_XDEC_CEIL, "-1"},          {"0.001", 0, RM_XDEC_CEIL, "1"},
        {"0.001", 0, RM_XDEC_FLOOR, "0"},          {"-0.001", 0, RM_XDEC_CEIL, "-0"},
        {"9.5", 0, RM_XDEC_HALF_EVEN, "10"},     {"1", -33, RM_XDEC_HALF_EVEN, "1.000000000000000000000000000000000"},
        {"1", -34, RM_XDEC_HALF_EVEN, "NaN"},      {"Infinity", 0, RM_XDEC_HALF_EVEN, "NaN"},
        {"1E-100", 0, RM_XDEC_HALF_EVEN, "0"},     {"5E-100", 99, RM_XDEC_CEIL, "1E+99"},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        bson_decimal128_t a, r;
        char s[BSON_DECIMAL128_STRING];
        bson_decimal128_from_string (q[i].a, &a);
        rm_xdec_quantize (&r, &a, q[i].exp, q[i].mode);
        bson_decimal128_to_string (&r, s);
        if (strcmp (s, q[i].want))
            fprintf (stderr, "  quantize %s to %d: %s, want %s\n", q[i].a, q[i].exp, s, q[i].want);
        T_CHECK (!strcmp (s, q[i].want));
    }
    struct {
        double d;
        const char *want;
    } f[] = {
        {0.1, "0.100000000000000"},
        {2.0, "2.00000000000000"},
        {100000.0, "100000.000000000"},
        {0.9999999999999994, "0.999999999999999"},
        {1e300, "1.00000000000000E+300"},
        {-1.5, "-1.50000000000000"},
        {123456789012345678.0, "1.23456789012346E+17"},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        bson_decimal128_t r;
        char s[BSON_DECIMAL128_STRING];
        rm_xdec_from_double (&r, f[i].d, true);
        bson_decimal128_to_string (&r, s);
        if (strcmp (s, f[i].want))
            fprintf (stderr, "  from double %.17g: %s, want %s\n", f[i].d, s, f[i].want);
        T_CHECK (!strcmp (s, f[i].want));
    }
    struct {
        const char *a;
        bool ok;
        int64_t v;
    } l[] = {
        {"2.5", true, 2},
        {"3.5", true, 4},
        {"-2.5", true, -2},
        {"9223372036854775807", true, INT64_MAX},
        {"9223372036854775807.5", false, 0},
        {"-9223372036854775808", true, INT64_MIN},
        {"-9223372036854775809", false, 0},
        {"1E+19", false, 0},
        {"1E+18", true, INT64_C (1000000000000000000)},
        {"NaN", false, 0},
        {"-Infinity", false, 0},
    };
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) {
        bson_decimal128_t a;
        int64_t v = 0;
        bson_decimal128_from_string (l[i].a, &a);
        T_CHECK (rm_xdec_to_int64 (&a, &v) == l[i].ok);
        T_CHECK (!l[i].ok || v == l[i].v);
    }
}

/* Once warmed, evaluating does not allocate, decimal arithmetic included. */
static void
test_expr_arith_no_alloc_when_warm (void)
{
    const char *expr = "[{\"$add\": [\"$a\", \"$d\", 0.5]}, {\"$divide\": [\"$d\", 3]}, {\"$round\": [\"$x\", 2]},"
                       " {\"$sum\": \"$arr\"}, {\"$avg\": \"$arr\"}, {\"$sqrt\": \"$d\"}, {\"$ln\": \"$d\"},"
                       " {\"$mod\": [\"$d\", 7]}, {\"$multiply\": [\"$a\", \"$a\"]}]";
    const char *doc = "{\"a\": 2147483647, \"d\": {\"$numberDecimal\": \"10.25\"}, \"x\": 2.675,"
                      " \"arr\": [1, 2.5, {\"$numberDecimal\": \"1.1\"}]}";

    T_CHECK (x_no_alloc_when_warm (doc, expr, BSON_TYPE_ARRAY) == 0);
}

int
main (void)
{
    T_RUN (test_expr_adds);
    T_RUN (test_expr_subtracts);
    T_RUN (test_expr_multiplies);
    T_RUN (test_expr_divides);
    T_RUN (test_expr_mods);
    T_RUN (test_expr_mods_server);
    T_RUN (test_expr_absolutes);
    T_RUN (test_expr_ceilfloor);
    T_RUN (test_expr_rounds);
    T_RUN (test_expr_round_trunc_server);
    T_RUN (test_expr_logs);
    T_RUN (test_expr_pows);
    T_RUN (test_expr_trigs);
    T_RUN (test_expr_bitwise);
    T_RUN (test_expr_accums);
#ifdef __DEC128_MANT_DIG__
    T_RUN (test_expr_decimal_against_bid);
#endif
    T_RUN (test_expr_decimal_ops);
    T_RUN (test_expr_arith_no_alloc_when_warm);
    return t_done ();
}
