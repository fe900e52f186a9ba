/* The date operators: cases from MongoDB's documentation of each ($year
 * ... $millisecond, $dateToParts, $dateFromParts, $dateToString,
 * $dateFromString, $dateAdd, $dateSubtract, $dateDiff, $dateTrunc), the
 * server's null and error rules, time zones (offsets, Olson names, daylight
 * saving time in America/New_York across its changes, the southern
 * hemisphere, times past the TZif table), dates before 1970 and the
 * strings the lenient parser takes and refuses. */
#include "expr_case.h"
#include "expr_tz.h"

#define D(iso) "{\"$date\": \"" iso "\"}"
#define L(n) "{\"$numberLong\": \"" n "\"}"

/* 2014-01-01T08:15:39.736Z, a Wednesday: the documentation's example. */
#define DOC "{\"d\": " D ("2014-01-01T08:15:39.736Z") "}"

static const x_case_t parts[] = {
    {DOC, "{\"$year\": \"$d\"}", "2014"},
    {DOC, "{\"$month\": \"$d\"}", "1"},
    {DOC, "{\"$dayOfMonth\": \"$d\"}", "1"},
    {DOC, "{\"$hour\": \"$d\"}", "8"},
    {DOC, "{\"$minute\": \"$d\"}", "15"},
    {DOC, "{\"$second\": \"$d\"}", "39"},
    {DOC, "{\"$millisecond\": \"$d\"}", "736"},
    {DOC, "{\"$dayOfYear\": \"$d\"}", "1"},
    {DOC, "{\"$dayOfWeek\": \"$d\"}", "4"},
    {DOC, "{\"$week\": \"$d\"}", "0"},
    {DOC, "{\"$isoWeek\": \"$d\"}", "1"},
    {DOC, "{\"$isoDayOfWeek\": \"$d\"}", "3"},
    {DOC, "{\"$isoWeekYear\": \"$d\"}", L ("2014")},
    /* the forms of the argument */
    {DOC, "{\"$year\": [\"$d\"]}", "2014"},
    {DOC, "{\"$year\": {\"date\": \"$d\"}}", "2014"},
    {DOC, "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "3"},
    {DOC, "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"+04:30\"}}", "12"},
    {DOC, "{\"$minute\": {\"date\": \"$d\", \"timezone\": \"+04:30\"}}", "45"},
    {DOC, "{\"$minute\": {\"date\": \"$d\", \"timezone\": \"-0530\"}}", "45"},
    {DOC, "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"-0530\"}}", "2"},
    {DOC, "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"+03\"}}", "11"},
    {DOC, "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"UTC\"}}", "8"},
    {DOC, "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"Asia/Kolkata\"}}", "13"},
    {DOC, "{\"$year\": {\"date\": \"$d\", \"timezone\": \"-09:00\"}}", "2013"},
    {DOC, "{\"$dayOfYear\": {\"date\": \"$d\", \"timezone\": \"-09:00\"}}", "365"},
    {DOC, "{\"$isoWeekYear\": {\"date\": \"$d\", \"timezone\": \"-09:00\"}}", L ("2014")},
    {"{\"d\": " D ("2014-01-01T08:15:39.736Z") ", \"tz\": \"Europe/London\"}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"$tz\"}}", "8"},
    {"{\"d\": " D ("2014-07-01T08:15:39.736Z") ", \"tz\": \"Europe/London\"}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"$tz\"}}", "9"},
    {"{\"d\": " D ("2014-07-01T08:15:39.736Z") "}", "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"$tz\"}}",
     "null"},
    {"{\"d\": " D ("2014-07-01T08:15:39.736Z") ", \"tz\": 5}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"$tz\"}}", "ERROR:timezone must evaluate to a string"},
    {"{\"d\": " D ("2014-07-01T08:15:39.736Z") ", \"tz\": \"Mars/Olympus\"}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"$tz\"}}", "ERROR:unrecognized time zone identifier"},
    {"{}", "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"Mars/Olympus\"}}", "PARSE:unrecognized time zone"},
    {"{}", "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"+5\"}}", "PARSE:unrecognized time zone"},
    {"{}", "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"+05:3\"}}", "PARSE:unrecognized time zone"},
    {"{}", "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"../../etc/passwd\"}}", "PARSE:unrecognized time zone"},
    {"{}", "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"posix/Europe/Paris\"}}", "PARSE:unrecognized time zone"},
    {"{}", "{\"$hour\": {\"date\": \"$d\", \"timezone\": 1}}", "PARSE:timezone must evaluate to a string"},
    {"{}", "{\"$hour\": {\"date\": \"$d\", \"zone\": \"UTC\"}}", "PARSE:unrecognized option to $hour"},
    {"{}", "{\"$hour\": {\"timezone\": \"UTC\"}}", "PARSE:missing 'date'"},
    {"{}", "{\"$hour\": [1, 2]}", "PARSE:exactly 1"},
    {"{}", "{\"$hour\": {}}", "PARSE:missing 'date'"},
    {DOC, "{\"$hour\": {\"$ifNull\": [\"$nope\", \"$d\"]}}", "8"},
    /* null and missing give null; a non-date is an error */
    {"{}", "{\"$year\": \"$nope\"}", "null"},
    {"{\"d\": null}", "{\"$month\": \"$d\"}", "null"},
    {"{}", "{\"$year\": {\"date\": null, \"timezone\": \"Bad/Zone\"}}", "PARSE:unrecognized time zone"},
    {"{\"d\": \"2017-01-01\"}", "{\"$year\": \"$d\"}", "ERROR:can't convert from BSON type string to Date"},
    {"{\"d\": 5}", "{\"$year\": \"$d\"}", "ERROR:can't convert from BSON type int to Date"},
    {"{\"d\": [1]}", "{\"$year\": \"$d\"}", "ERROR:can't convert from BSON type array to Date"},
    /* a Timestamp's seconds and an ObjectId's time are dates */
    {"{\"t\": {\"$timestamp\": {\"t\": 1500000000, \"i\": 1}}}", "{\"$year\": \"$t\"}", "2017"},
    {"{\"t\": {\"$timestamp\": {\"t\": 1500000000, \"i\": 1}}}", "{\"$hour\": \"$t\"}", "2"},
    {"{\"o\": {\"$oid\": \"5a0000000000000000000000\"}}", "{\"$year\": \"$o\"}", "2017"},
    {"{\"o\": {\"$oid\": \"5a0000000000000000000000\"}}", "{\"$dayOfMonth\": \"$o\"}", "6"},
    {"{\"o\": {\"$oid\": \"5a0000000000000000000000\"}}", "{\"$millisecond\": \"$o\"}", "0"},
    /* ISO weeks at the turn of a year */
    {"{\"d\": " D ("2016-01-01T00:00:00Z") "}", "{\"$isoWeek\": \"$d\"}", "53"},
    {"{\"d\": " D ("2016-01-01T00:00:00Z") "}", "{\"$isoWeekYear\": \"$d\"}", L ("2015")},
    {"{\"d\": " D ("2016-01-01T00:00:00Z") "}", "{\"$isoDayOfWeek\": \"$d\"}", "5"},
    {"{\"d\": " D ("2016-01-01T00:00:00Z") "}", "{\"$week\": \"$d\"}", "0"},
    {"{\"d\": " D ("2016-01-03T00:00:00Z") "}", "{\"$week\": \"$d\"}", "1"},
    {"{\"d\": " D ("2016-01-03T00:00:00Z") "}", "{\"$dayOfWeek\": \"$d\"}", "1"},
    {"{\"d\": " D ("2016-12-31T00:00:00Z") "}", "{\"$dayOfYear\": \"$d\"}", "366"},
    {"{\"d\": " D ("2016-12-31T00:00:00Z") "}", "{\"$week\": \"$d\"}", "52"},
    {"{\"d\": " D ("2019-12-30T00:00:00Z") "}", "{\"$isoWeekYear\": \"$d\"}", L ("2020")},
    {"{\"d\": " D ("2019-12-30T00:00:00Z") "}", "{\"$isoWeek\": \"$d\"}", "1"},
    {"{\"d\": " D ("2020-12-31T00:00:00Z") "}", "{\"$isoWeek\": \"$d\"}", "53"},
    /* before 1970 */
    {"{\"d\": " D ("1969-12-31T23:59:59.999Z") "}", "{\"$millisecond\": \"$d\"}", "999"},
    {"{\"d\": " D ("1969-12-31T23:59:59.999Z") "}", "{\"$second\": \"$d\"}", "59"},
    {"{\"d\": " D ("1969-12-31T23:59:59.999Z") "}", "{\"$year\": \"$d\"}", "1969"},
    {"{\"d\": " D ("1900-03-01T00:00:00Z") "}", "{\"$dayOfWeek\": \"$d\"}", "5"},
    {"{\"d\": " D ("1600-02-29T00:00:00Z") "}", "{\"$dayOfYear\": \"$d\"}", "60"},
    {"{\"d\": {\"$date\": {\"$numberLong\": \"-62135596800000\"}}}", "{\"$year\": \"$d\"}", "1"},
    {"{\"d\": {\"$date\": {\"$numberLong\": \"-62135596800001\"}}}", "{\"$year\": \"$d\"}", "0"},
    {"{\"d\": {\"$date\": {\"$numberLong\": \"253402300800000\"}}}", "{\"$year\": \"$d\"}", "10000"},
    {NULL, NULL, NULL},
};

/* America/New_York's changes: 2021-03-14 07:00Z (to EDT) and
 * 2021-11-07 06:00Z (to EST). */
static const x_case_t dst[] = {
    {"{\"d\": " D ("2021-03-14T06:59:59Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "1"},
    {"{\"d\": " D ("2021-03-14T07:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "3"},
    {"{\"d\": " D ("2021-11-07T05:30:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "1"},
    {"{\"d\": " D ("2021-11-07T06:30:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "1"},
    {"{\"d\": " D ("2021-03-14T07:00:00Z") "}",
     "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%H:%M %z %Z\", \"timezone\": \"America/New_York\"}}",
     "\"03:00 -0400 -240\""},
    {"{\"d\": " D ("2021-03-14T06:00:00Z") "}",
     "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%H:%M %z %Z\", \"timezone\": \"America/New_York\"}}",
     "\"01:00 -0500 -300\""},
    /* past the files' tables, by the footer's rule */
    {"{\"d\": " D ("2090-07-01T12:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "8"},
    {"{\"d\": " D ("2090-12-01T12:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "7"},
    {"{\"d\": " D ("2090-03-12T06:59:59Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "1"},
    {"{\"d\": " D ("2090-03-12T07:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "3"},
    /* the southern hemisphere: Sydney is on daylight time in January */
    {"{\"d\": " D ("2021-01-15T00:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"Australia/Sydney\"}}", "11"},
    {"{\"d\": " D ("2021-07-15T00:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"Australia/Sydney\"}}", "10"},
    {"{\"d\": " D ("2095-01-15T00:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"Australia/Sydney\"}}", "11"},
    {"{\"d\": " D ("2095-07-15T00:00:00Z") "}",
     "{\"$hour\": {\"date\": \"$d\", \"timezone\": \"Australia/Sydney\"}}", "10"},
    /* a zone of 45 minutes */
    {"{\"d\": " D ("2021-07-15T00:00:00Z") "}",
     "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%H:%M %z\", \"timezone\": \"Asia/Kathmandu\"}}",
     "\"05:45 +0545\""},
    {"{\"d\": " D ("2021-07-15T00:00:00Z") "}",
     "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%H:%M %z\", \"timezone\": \"+04:45\"}}",
     "\"04:45 +0445\""},
    /* New York's hour of local mean time before its first transition */
    {"{\"d\": " D ("1850-01-01T12:00:00Z") "}",
     "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%H:%M:%S\", \"timezone\": \"America/New_York\"}}",
     "\"07:03:58\""},
    {NULL, NULL, NULL},
};

#define DP "{\"d\": " D ("2017-01-01T01:29:09.123Z") "}"
static const x_case_t to_parts[] = {
    {DP, "{\"$dateToParts\": {\"date\": \"$d\"}}",
     "{\"year\": 2017, \"month\": 1, \"day\": 1, \"hour\": 1, \"minute\": 29, \"second\": 9, \"millisecond\": 123}"},
    {DP, "{\"$dateToParts\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}",
     "{\"year\": 2016, \"month\": 12, \"day\": 31, \"hour\": 20, \"minute\": 29, \"second\": 9, \"millisecond\": 123}"},
    {DP, "{\"$dateToParts\": {\"date\": \"$d\", \"iso8601\": true}}",
     "{\"isoWeekYear\": 2016, \"isoWeek\": 52, \"isoDayOfWeek\": 7, \"hour\": 1, \"minute\": 29, \"second\": 9, \"millisecond\": 123}"},
    {DP, "{\"$dateToParts\": {\"date\": \"$d\", \"iso8601\": false}}",
     "{\"year\": 2017, \"month\": 1, \"day\": 1, \"hour\": 1, \"minute\": 29, \"second\": 9, \"millisecond\": 123}"},
    {DP, "{\"$dateToParts\": {\"date\": \"$d\", \"iso8601\": null}}", "null"},
    {DP, "{\"$dateToParts\": {\"date\": \"$d\", \"iso8601\": 1}}", "ERROR:iso8601 must evaluate to a bool, found int"},
    {DP, "{\"$dateToParts\": {\"date\": \"$d\", \"timezone\": \"$nope\"}}", "null"},
    {DP, "{\"$dateToParts\": {\"date\": \"$nope\"}}", "null"},
    {DP, "{\"$dateToParts\": {\"date\": \"x\"}}", "ERROR:can't convert from BSON type string to Date"},
    {DP, "{\"$dateToParts\": {\"timezone\": \"UTC\"}}", "PARSE:missing the required argument 'date'"},
    {DP, "{\"$dateToParts\": {\"date\": \"$d\", \"x\": 1}}", "PARSE:unknown argument 'x'"},
    {"{\"d\": " D ("1969-12-31T23:59:59.999Z") "}", "{\"$dateToParts\": {\"date\": \"$d\"}}",
     "{\"year\": 1969, \"month\": 12, \"day\": 31, \"hour\": 23, \"minute\": 59, \"second\": 59, \"millisecond\": 999}"},
    {NULL, NULL, NULL},
};

static const x_case_t from_parts[] = {
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 2, \"day\": 8, \"hour\": 12}}", D ("2017-02-08T12:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 2, \"day\": 8, \"hour\": 12, \"minute\": 1, \"second\": 2, \"millisecond\": 3}}",
     D ("2017-02-08T12:01:02.003Z")},
    {"{}", "{\"$dateFromParts\": {\"isoWeekYear\": 2017, \"isoWeek\": 6, \"isoDayOfWeek\": 3, \"hour\": 12}}",
     D ("2017-02-08T12:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2016, \"month\": 12, \"day\": 31, \"hour\": 23, \"minute\": 46, \"second\": 12, \"timezone\": \"America/New_York\"}}",
     D ("2017-01-01T04:46:12Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017}}", D ("2017-01-01T00:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"isoWeekYear\": 2017}}", D ("2017-01-02T00:00:00Z")},
    /* values out of range carry, as the documentation shows */
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 14, \"day\": 1, \"hour\": 12}}", D ("2018-02-01T12:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 0, \"day\": 1, \"hour\": 12}}", D ("2016-12-01T12:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": -12, \"day\": 1}}", D ("2015-12-01T00:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 3, \"day\": 0}}", D ("2017-02-28T00:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2016, \"month\": 2, \"day\": 30}}", D ("2016-03-01T00:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 1, \"day\": 1, \"hour\": -1}}", D ("2016-12-31T23:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 1, \"day\": 1, \"hour\": 25, \"minute\": 61}}",
     D ("2017-01-02T02:01:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"millisecond\": 1500}}", D ("2017-01-01T00:00:01.500Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"millisecond\": -1}}", D ("2016-12-31T23:59:59.999Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"second\": 100000}}", D ("2017-01-02T03:46:40Z")},
    {"{}", "{\"$dateFromParts\": {\"isoWeekYear\": 2017, \"isoWeek\": 0, \"isoDayOfWeek\": 1}}", D ("2016-12-26T00:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"isoWeekYear\": 2017, \"isoWeek\": 1, \"isoDayOfWeek\": 8}}", D ("2017-01-09T00:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 1, \"month\": 1, \"day\": 1}}", "{\"$date\": {\"$numberLong\": \"-62135596800000\"}}"},
    {"{}", "{\"$dateFromParts\": {\"year\": 1960, \"month\": 6, \"day\": 15}}", D ("1960-06-15T00:00:00Z")},
    /* numbers that are integers of any type */
    {"{}", "{\"$dateFromParts\": {\"year\": 2017.0, \"month\": " L ("2") ", \"day\": {\"$numberDecimal\": \"8\"}}}",
     D ("2017-02-08T00:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 2.5}}", "ERROR:'month' must evaluate to an integer, found double"},
    {"{}", "{\"$dateFromParts\": {\"year\": \"2017\"}}", "ERROR:'year' must evaluate to an integer, found string"},
    {"{}", "{\"$dateFromParts\": {\"year\": 10000}}", "ERROR:'year' must evaluate to an integer in the range 1 to 9999"},
    {"{}", "{\"$dateFromParts\": {\"year\": 0}}", "ERROR:'year' must evaluate to an integer in the range 1 to 9999"},
    {"{}", "{\"$dateFromParts\": {\"isoWeekYear\": 0}}", "ERROR:'isoWeekYear' must evaluate to an integer in the range 1 to 9999"},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"month\": 32768}}", "ERROR:'month' must evaluate to a value in the range [-32768, 32767]"},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"hour\": -32769}}", "ERROR:'hour' must evaluate to a value in the range"},
    /* null and missing parts */
    {"{}", "{\"$dateFromParts\": {\"year\": \"$nope\"}}", "null"},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"day\": null}}", "null"},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"timezone\": \"$nope\"}}", "null"},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"timezone\": \"+05:30\"}}", D ("2016-12-31T18:30:00Z")},
    /* daylight time: a local time in the spring gap moves forward */
    {"{}", "{\"$dateFromParts\": {\"year\": 2021, \"month\": 3, \"day\": 14, \"hour\": 1, \"minute\": 30, \"timezone\": \"America/New_York\"}}",
     D ("2021-03-14T06:30:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2021, \"month\": 3, \"day\": 14, \"hour\": 3, \"timezone\": \"America/New_York\"}}",
     D ("2021-03-14T07:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"year\": 2021, \"month\": 7, \"day\": 1, \"timezone\": \"America/New_York\"}}",
     D ("2021-07-01T04:00:00Z")},
    {"{}", "{\"$dateFromParts\": {\"month\": 1}}", "PARSE:requires either 'year' or 'isoWeekYear'"},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"isoWeek\": 1}}", "PARSE:does not allow mixing natural dates with ISO dates"},
    {"{}", "{\"$dateFromParts\": {\"year\": 2017, \"years\": 1}}", "PARSE:Unrecognized argument to $dateFromParts: years"},
    {"{}", "{\"$dateFromParts\": 2017}", "PARSE:expects a document"},
    {NULL, NULL, NULL},
};

static const x_case_t to_string[] = {
    {DOC, "{\"$dateToString\": {\"format\": \"%Y-%m-%d\", \"date\": \"$d\"}}", "\"2014-01-01\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%H:%M:%S:%L%z\", \"date\": \"$d\", \"timezone\": \"America/New_York\"}}",
     "\"03:15:39:736-0500\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%H:%M:%S:%L%z\", \"date\": \"$d\", \"timezone\": \"+04:30\"}}",
     "\"12:45:39:736+0430\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%Z\", \"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "\"-300\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%Z\", \"date\": \"$d\", \"timezone\": \"+04:30\"}}", "\"270\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%Z %z\", \"date\": \"$d\"}}", "\"0 +0000\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%z\", \"date\": \"$d\", \"timezone\": \"-00:30\"}}", "\"-0030\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%b\", \"date\": \"$d\", \"timezone\": \"+04:30\"}}", "\"Jan\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%B\", \"date\": \"$d\", \"timezone\": \"+04:30\"}}", "\"January\""},
    {DOC, "{\"$dateToString\": {\"format\": \"%j %w %u %U %V %G\", \"date\": \"$d\"}}", "\"001 4 3 00 01 2014\""},
    {DOC, "{\"$dateToString\": {\"format\": \"100%% at %H%%\", \"date\": \"$d\"}}", "\"100% at 08%\""},
    {DOC, "{\"$dateToString\": {\"format\": \"\", \"date\": \"$d\"}}", "\"\""},
    {"{\"d\": " D ("2016-01-01T00:00:00Z") "}", "{\"$dateToString\": {\"format\": \"%G-W%V-%u\", \"date\": \"$d\"}}", "\"2015-W53-5\""},
    {"{\"d\": " D ("2017-09-03T00:00:00Z") "}", "{\"$dateToString\": {\"format\": \"%b %B %U %w\", \"date\": \"$d\"}}", "\"Sep September 36 1\""},
    /* no format: ISO, with a Z only in UTC */
    {DOC, "{\"$dateToString\": {\"date\": \"$d\"}}", "\"2014-01-01T08:15:39.736Z\""},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"timezone\": \"UTC\"}}", "\"2014-01-01T08:15:39.736Z\""},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"timezone\": \"+00:00\"}}", "\"2014-01-01T08:15:39.736Z\""},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"timezone\": \"Etc/UTC\"}}", "\"2014-01-01T08:15:39.736\""},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"timezone\": \"America/New_York\"}}", "\"2014-01-01T03:15:39.736\""},
    {"{\"d\": " D ("1969-07-20T20:17:40Z") "}", "{\"$dateToString\": {\"date\": \"$d\"}}", "\"1969-07-20T20:17:40.000Z\""},
    {"{\"d\": {\"$date\": {\"$numberLong\": \"-62135596800001\"}}}", "{\"$dateToString\": {\"date\": \"$d\"}}",
     "\"0000-12-31T23:59:59.999Z\""},
    {"{\"d\": {\"$date\": {\"$numberLong\": \"253402300800000\"}}}", "{\"$dateToString\": {\"date\": \"$d\"}}",
     "ERROR:outside the supported range of 0-9999: 10000"},
    {"{\"d\": {\"$date\": {\"$numberLong\": \"253402300800000\"}}}", "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%H\"}}",
     "\"00\""},
    /* Timestamps and ObjectIds */
    {"{\"t\": {\"$timestamp\": {\"t\": 1500000000, \"i\": 1}}}", "{\"$dateToString\": {\"date\": \"$t\"}}", "\"2017-07-14T02:40:00.000Z\""},
    /* null, missing, onNull */
    {"{}", "{\"$dateToString\": {\"date\": \"$nope\"}}", "null"},
    {"{}", "{\"$dateToString\": {\"date\": \"$nope\", \"onNull\": \"none\"}}", "\"none\""},
    {"{\"d\": null}", "{\"$dateToString\": {\"date\": \"$d\", \"onNull\": \"$nope\"}}", "MISSING"},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"onNull\": \"none\"}}", "\"2014-01-01T08:15:39.736Z\""},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"$nope\"}}", "null"},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"timezone\": \"$nope\"}}", "null"},
    {"{}", "{\"$dateToString\": {\"date\": \"$nope\", \"timezone\": \"$nope\", \"onNull\": 1}}", "1"},
    /* errors */
    {"{\"d\": \"2014\"}", "{\"$dateToString\": {\"date\": \"$d\"}}", "ERROR:can't convert from BSON type string to Date"},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%Q\"}}", "PARSE:Invalid format character '%Q' in format string"},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%e\"}}", "PARSE:Invalid format character '%e'"},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"abc%\"}}", "PARSE:Unmatched '%' at end of format string"},
    {DOC, "{\"$dateToString\": {\"date\": \"$d\", \"format\": 5}}", "PARSE:requires that 'format' be a string"},
    {"{\"d\": " D ("2014-01-01T08:15:39.736Z") ", \"f\": \"%Y%\"}", "{\"$dateToString\": {\"date\": \"$d\", \"format\": \"$f\"}}",
     "ERROR:Unmatched '%' at end of format string"},
    {"{\"f\": 5}", "{\"$dateToString\": {\"date\": \"$nope\", \"format\": \"$f\"}}", "ERROR:requires that 'format' be a string"},
    {"{}", "{\"$dateToString\": {\"format\": \"%Y\"}}", "PARSE:missing the required argument 'date'"},
    {NULL, NULL, NULL},
};

static const x_case_t from_string[] = {
    /* the documentation's examples */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-02-08T12:10:40.787\", \"timezone\": \"America/New_York\"}}",
     D ("2017-02-08T17:10:40.787Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-02-08\"}}", D ("2017-02-08T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"06-15-2018\", \"format\": \"%m-%d-%Y\"}}", D ("2018-06-15T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"15-06-2018\", \"format\": \"%d-%m-%Y\"}}", D ("2018-06-15T00:00:00Z")},
    {"{\"date\": \"2017-02-08\", \"timezone\": \"-05:00\"}",
     "{\"$dateFromString\": {\"dateString\": \"$date\", \"timezone\": \"$timezone\"}}", D ("2017-02-08T05:00:00Z")},
    {"{\"date\": \"2017-02-09\", \"timezone\": \"Europe/London\"}",
     "{\"$dateFromString\": {\"dateString\": \"$date\", \"timezone\": \"$timezone\"}}", D ("2017-02-09T00:00:00Z")},
    {"{\"date\": \"2017-02-09T03:35:02.055\", \"timezone\": \"+0530\"}",
     "{\"$dateFromString\": {\"dateString\": \"$date\", \"timezone\": \"$timezone\"}}", D ("2017-02-08T22:05:02.055Z")},
    {"{\"timezone\": \"+0530\"}", "{\"$dateFromString\": {\"dateString\": \"$date\", \"timezone\": \"$timezone\"}}", "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"$date\", \"onNull\": " D ("1970-01-01T00:00:00Z") "}}",
     D ("1970-01-01T00:00:00Z")},
    {"{\"date\": \"20177-02-09T03:35:02.055\"}", "{\"$dateFromString\": {\"dateString\": \"$date\", \"onError\": \"bad\"}}",
     "\"bad\""},
    /* the lenient forms */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00Z\"}}", D ("2017-07-04T12:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00.123+02:00\"}}", D ("2017-07-04T10:00:00.123Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00:00 +02:00\"}}", D ("2017-07-04T10:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00:00 -0530\"}}", D ("2017-07-04T17:30:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00+03\"}}", D ("2017-07-04T09:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00\"}}", D ("2017-07-04T12:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00.1234567Z\"}}", D ("2017-07-04T12:00:00.123Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00.5Z\"}}", D ("2017-07-04T12:00:00.500Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4th, 2017 12pm\"}}", D ("2017-07-04T12:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4th, 2017 12am\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Jul 4 2017 7:30 pm\"}}", D ("2017-07-04T19:30:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"4 July 2017\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"04-Jul-2017 10:00:00\"}}", D ("2017-07-04T10:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Tue, 04 Jul 2017 12:00:00 GMT\"}}", D ("2017-07-04T12:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Tuesday, July 4, 2017\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017/07/04\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"07/04/2017\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"7/4/17\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"04.07.2017 08:00\"}}", D ("2017-07-04T08:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"20170704\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07\"}}", D ("2017-07-01T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 2017\"}}", D ("2017-07-01T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00 EST\"}}", D ("2017-07-04T17:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00 PDT\"}}", D ("2017-07-04T19:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00 GMT+0200\"}}", D ("2017-07-04T10:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"  2017-07-04  \"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"1969-07-20T20:17:40Z\"}}", D ("1969-07-20T20:17:40Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"0001-01-01\"}}", "{\"$date\": {\"$numberLong\": \"-62135596800000\"}}"},
    /* in a named zone, across daylight time */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-07-01 12:00\", \"timezone\": \"America/New_York\"}}",
     D ("2021-07-01T16:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-12-01 12:00\", \"timezone\": \"America/New_York\"}}",
     D ("2021-12-01T17:00:00Z")},
    /* a zone in the string and a timezone: UTC is no conflict */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00Z\", \"timezone\": \"UTC\"}}", D ("2017-07-04T12:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00Z\", \"timezone\": \"America/New_York\"}}",
     "ERROR:you cannot pass in a date/time string with time zone information ('Z') together with a timezone argument"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00+02:00\", \"timezone\": \"+01:00\"}}",
     "ERROR:you cannot pass in a date/time string with GMT offset together with a timezone argument"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00+02:00\", \"timezone\": \"+01:00\", \"onError\": 0}}", "0"},
    /* refused */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4, 2017 America/New_York\"}}",
     "ERROR:passing a time zone identifier as part of the string is not allowed"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00 Europe/London\"}}",
     "ERROR:passing a time zone identifier as part of the string is not allowed"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T12:00:00 Europe/London\", \"onError\": \"x\"}}", "\"x\""},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"n/a\"}}", "ERROR:Error parsing date string 'n/a'"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"\"}}", "ERROR:an incomplete date/time string has been found"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"12:00:00\"}}", "ERROR:an incomplete date/time string has been found"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4\"}}", "ERROR:an incomplete date/time string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Jul 4th 12:00\"}}", "ERROR:an incomplete date/time string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"07/04 5pm\"}}", "ERROR:an incomplete date/time string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Jul 4th 12:00\", \"onError\": 0}}", "0"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-02-30\"}}", "ERROR:The parsed date was invalid"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-13-01\"}}", "ERROR:The parsed date was invalid"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T25:00:00\"}}", "ERROR:The parsed time was invalid"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 2017-07-05\"}}", "ERROR:Double date specification"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"now\"}}", "ERROR:Error parsing date string 'now'"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Monday, July 4, 2017\"}}", "ERROR:names a day of the week"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 13pm\"}}", "ERROR:an hour of 1 to 12"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4, 2017 10:00 Tuesday\"}}", "ERROR:a day of the week after the time"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017\"}}", "ERROR:Error parsing date string '2017'"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"04-07-2017\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04t08:00:00z\"}}", D ("2017-07-04T08:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"n/a\", \"onError\": null}}", "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": 5}}", "ERROR:requires that 'dateString' be a string, found: int"},
    {"{}", "{\"$dateFromString\": {\"dateString\": 5, \"onError\": \"e\"}}", "\"e\""},
    /* null and missing */
    {"{}", "{\"$dateFromString\": {\"dateString\": null}}", "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"$nope\", \"onNull\": \"n\", \"onError\": \"e\"}}", "\"n\""},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"timezone\": \"$nope\"}}", "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"format\": \"$nope\"}}", "null"},
    /* by format */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:30:15.250\", \"format\": \"%Y-%m-%d %H:%M:%S.%L\"}}",
     D ("2017-07-04T12:30:15.250Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12\", \"format\": \"%Y-%m-%d %H\"}}", D ("2017-07-04T12:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-7-4\", \"format\": \"%Y-%m-%d\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"04 Jul 2017\", \"format\": \"%d %b %Y\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"04 July 2017\", \"format\": \"%d %B %Y\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00 +0200\", \"format\": \"%Y-%m-%d %H:%M %z\"}}",
     D ("2017-07-04T10:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00 +02:00\", \"format\": \"%Y-%m-%d %H:%M %z\"}}",
     D ("2017-07-04T10:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00 +120\", \"format\": \"%Y-%m-%d %H:%M %Z\"}}",
     D ("2017-07-04T10:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-2\", \"format\": \"%G-W%V-%u\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"100% 2017-07-04\", \"format\": \"100%% %Y-%m-%d\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:00\", \"format\": \"%Y-%m-%d %H:%M\", \"timezone\": \"America/New_York\"}}",
     D ("2017-07-04T16:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"format\": \"%Y/%m/%d\"}}", "ERROR:Format literal not found"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"format\": \"%Y/%m/%d\", \"onError\": 1}}", "1"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04x\", \"format\": \"%Y-%m-%d\"}}", "ERROR:Trailing data"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07\", \"format\": \"%Y-%m-%d\"}}", "ERROR:Data missing"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"07-04\", \"format\": \"%m-%d\"}}", "ERROR:an incomplete date/time string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-02-29\", \"format\": \"%Y-%m-%d\"}}", "ERROR:The parsed date was invalid"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"format\": \"%Y-%m-%d %Q\"}}", "PARSE:Invalid format character '%Q'"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"format\": \"%Y-%m-%d %U\"}}", "PARSE:Invalid format character '%U'"},
    /* timelib's %j counts from 0 */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017 184\", \"format\": \"%Y %j\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017 000\", \"format\": \"%Y %j\"}}", D ("2017-01-01T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"185 2017\", \"format\": \"%j %Y\"}}", "ERROR:can only come after a year"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017 W27\", \"format\": \"%G W%V\"}}", D ("2017-07-03T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07 W27\", \"format\": \"%G-%m W%V\"}}", "ERROR:Mixing of ISO dates with natural dates"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"W27-2\", \"format\": \"W%V-%u\"}}", "ERROR:The parsed date was invalid"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W54-2\", \"format\": \"%G-W%V-%u\"}}", "ERROR:ISO Week must be between 1 and 53"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:5\", \"format\": \"%Y-%m-%d %H:%M\"}}", "ERROR:A two digit minute"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:05:01.5\", \"format\": \"%Y-%m-%d %H:%M:%S.%L\"}}",
     D ("2017-07-04T12:05:01.500Z")},
    {"{\"f\": \"%Y-%m-%d %Q\"}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"format\": \"$f\", \"onError\": 1}}",
     "ERROR:Invalid format character '%Q'"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"format\": 1}}", "PARSE:requires that 'format' be a string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04\", \"timezone\": \"Nowhere/Land\"}}", "PARSE:unrecognized time zone"},
    {"{}", "{\"$dateFromString\": {\"format\": \"%Y\"}}", "PARSE:missing the required argument 'dateString'"},
    {NULL, NULL, NULL},
};

/* The server's own expectations of format specifiers (date_from_string.js):
 * %z after a space and with a zone name, %Z in minutes, ISO week dates
 * (%G, %V, %u) and their errors. */
static const x_case_t from_string_formats[] = {
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T11:56:02Z\", \"format\": \"%Y-%m-%dT%H:%M:%SZ\"}}", D ("2017-07-04T11:56:02Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T11:56:02.81Z\", \"format\": \"%Y-%m-%dT%H:%M:%S.%LZ\"}}", D ("2017-07-04T11:56:02.810Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04T11:56.02.8\", \"format\": \"%Y-%m-%dT%H:%M.%S.%L\"}}", D ("2017-07-04T11:56:02.800Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"05 12 1988\", \"format\": \"%d %m %Y\"}}", D ("1988-12-05T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"05*12*1988\", \"format\": \"%d*%m*%Y\"}}", D ("1988-12-05T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"1992 % 04 % 26\", \"format\": \"%Y %% %m %% %d\"}}", D ("1992-04-26T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Day: 05 Month: 12 Year: 1988\", \"format\": \"Day: %d Month: %m Year: %Y\"}}", D ("1988-12-05T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"4/26/1992:+0445\", \"format\": \"%m/%d/%Y:%z\"}}", D ("1992-04-25T19:15:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"4/26/1992:+285\", \"format\": \"%m/%d/%Y:%Z\"}}", D ("1992-04-25T19:15:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017\", \"format\": \"%G\"}}", D ("2017-01-02T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017, Week 53\", \"format\": \"%G, Week %V\"}}", D ("2018-01-01T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017, Day 5\", \"format\": \"%G, Day %u\"}}", D ("2017-01-06T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"53.7.2017\", \"format\": \"%V.%u.%G\"}}", D ("2018-01-07T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"1.1.1\", \"format\": \"%V.%u.%G\"}}", D ("0001-01-01T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+00\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+00\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+00:00\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+00:00\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+02\"}}", D ("2017-07-14T10:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+02\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T10:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+02:00\"}}", D ("2017-07-14T10:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 GMT+02:00\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T10:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771+03\"}}", D ("2017-07-14T09:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771+03\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T09:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771+0330\"}}", D ("2017-07-14T08:32:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771+0330\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T08:32:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771+03:30\"}}", D ("2017-07-14T08:32:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771+03:30\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T08:32:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 UTC\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 UTC\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 CEST\"}}", D ("2017-07-14T10:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 CEST\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T10:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 EST\"}}", D ("2017-07-14T17:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 EST\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T17:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 PDT\"}}", D ("2017-07-14T19:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 PDT\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T19:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 A\"}}", D ("2017-07-14T11:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 A\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T11:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 L\"}}", D ("2017-07-14T01:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 L\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T01:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 P\"}}", D ("2017-07-14T15:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 P\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T15:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 Z\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44.771 Z\", \"format\": \"%Y-%m-%dT%H:%M:%S.%L%z\"}}", D ("2017-07-14T12:02:44.771Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-01\", \"format\": \"%Y-%m-%d\"}}", "ERROR:Data missing"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-01\", \"format\": \"%Y\"}}", "ERROR:Trailing data"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"1992-26-04\", \"format\": \"Y-d-m\"}}", "ERROR:Format literal not found"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"ISO Day 6\", \"format\": \"ISO Day %u\"}}", "ERROR:The parsed date was invalid"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"ISO Week 52\", \"format\": \"ISO Week %V\"}}", "ERROR:The parsed date was invalid"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"ISO Week 1, 2018\", \"format\": \"ISO Week %V, %Y\"}}", "ERROR:Mixing of ISO dates with natural dates is not allowed"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"12/31/2018\", \"format\": \"%m/%d/%G\"}}", "ERROR:Mixing of ISO dates with natural dates is not allowed"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"4/26/1992:+0445\", \"format\": \"%m/%d/%Y:%z\", \"timezone\": \"+0500\"}}", "ERROR:you cannot pass in a date/time string with GMT offset together with a timezone argument"},
    /* a NUL ends the string, or the format, as in C */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"12/31\\u0000/2018\", \"format\": \"%m/%d/%Y\"}}", "ERROR:Data missing"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"12/31/2018\", \"format\": \"%m/%d\\u0000/%Y\"}}", "ERROR:Trailing data"},
    /* the zone in parentheses, and British summer time without a format */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14 12:02 (CEST)\", \"format\": \"%Y-%m-%d %H:%M%z\"}}",
     D ("2017-07-14T10:02:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4th, 2017 12:39:30 BST\"}}", D ("2017-07-04T11:39:30Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:48:07 GMT+0545\"}}", D ("2017-07-04T07:03:07Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-04 12:48:07 GMT-0200\"}}", D ("2017-07-04T14:48:07Z")},
    /* J is local time, not a zone */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-07-14T12:02:44 J\"}}", "ERROR:The timezone could not be found"},
    /* ISO week dates without a format (timelib's isoweekday and isoweek) */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-2\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017W272\"}}", D ("2017-07-04T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27\"}}", D ("2017-07-03T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W01-1\"}}", D ("2017-01-02T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2009-W01-1\"}}", D ("2008-12-29T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2020-W53-7\"}}", D ("2021-01-03T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-0\"}}", D ("2017-07-02T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-7\"}}", D ("2017-07-09T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-2T10:30:00Z\"}}", D ("2017-07-04T10:30:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-2 10:30 +02:00\"}}", D ("2017-07-04T08:30:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W54-1\"}}", "ERROR:Error parsing date string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-8\"}}", "ERROR:Error parsing date string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017-W27-2\", \"onError\": 0}}", D ("2017-07-04T00:00:00Z")},
    /* timelib's times take '.' between the minute and the second too
     * (hour24[:.]minute[:.]second), with or without a format, in a zone */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09T08:15.45\"}}", D ("2021-03-09T08:15:45Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09T08:15.45.5\"}}", D ("2021-03-09T08:15:45.500Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09T08:15.45.06\"}}", D ("2021-03-09T08:15:45.060Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09 08:15.45.123\"}}", D ("2021-03-09T08:15:45.123Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09T08:15.45\", \"timezone\": \"Europe/Paris\"}}",
     D ("2021-03-09T07:15:45Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09T08:15.45.25\", \"timezone\": \"-02:00\"}}",
     D ("2021-03-09T10:15:45.250Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09T08:15.45\", \"timezone\": \"-02:00\", "
           "\"format\": \"%Y-%m-%dT%H:%M.%S\"}}", D ("2021-03-09T10:15:45Z")},
    /* a year, a month's abbreviation and a day (timelib's pgtextreverse),
     * and the words that set the time: noon, midnight, today */
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-Mar-09\"}}", D ("2021-03-09T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-mar-9 noon\"}}", D ("2021-03-09T12:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"9 March 2021 midnight\"}}", D ("2021-03-09T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09 Noon\", \"timezone\": \"+01:00\"}}", D ("2021-03-09T11:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-03-09 today\"}}", D ("2021-03-09T00:00:00Z")},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"noon\"}}", "ERROR:an incomplete date/time string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2021-Mar\"}}", "ERROR:$dateFromString"},
    {NULL, NULL, NULL},
};

static const x_case_t add[] = {
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-10-31T12:10:05Z") ", \"unit\": \"month\", \"amount\": 1}}",
     D ("2020-11-30T12:10:05Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-12-31T12:10:05Z") ", \"unit\": \"month\", \"amount\": 2}}",
     D ("2021-02-28T12:10:05Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-02-29T00:00:00Z") ", \"unit\": \"year\", \"amount\": 1}}",
     D ("2021-02-28T00:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-02-29T00:00:00Z") ", \"unit\": \"year\", \"amount\": 4}}",
     D ("2024-02-29T00:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-31T00:00:00Z") ", \"unit\": \"quarter\", \"amount\": 1}}",
     D ("2020-04-30T00:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-15T00:00:00Z") ", \"unit\": \"month\", \"amount\": -13}}",
     D ("2018-12-15T00:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-15T00:00:00Z") ", \"unit\": \"week\", \"amount\": 2}}",
     D ("2020-01-29T00:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-15T00:00:00Z") ", \"unit\": \"day\", \"amount\": " L ("-15") "}}",
     D ("2019-12-31T00:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-15T00:00:00Z") ", \"unit\": \"hour\", \"amount\": 36}}",
     D ("2020-01-16T12:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-15T00:00:00Z") ", \"unit\": \"minute\", \"amount\": 90.0}}",
     D ("2020-01-15T01:30:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-15T00:00:00Z") ", \"unit\": \"second\", \"amount\": -1}}",
     D ("2020-01-14T23:59:59Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-01-15T00:00:00Z") ", \"unit\": \"millisecond\", \"amount\": 1500}}",
     D ("2020-01-15T00:00:01.500Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("1969-12-31T00:00:00Z") ", \"unit\": \"day\", \"amount\": 2}}",
     D ("1970-01-02T00:00:00Z")},
    /* daylight time: days keep the local time, hours do not */
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-13T12:00:00Z") ", \"unit\": \"day\", \"amount\": 1, \"timezone\": \"America/New_York\"}}",
     D ("2021-03-14T11:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-13T12:00:00Z") ", \"unit\": \"hour\", \"amount\": 24, \"timezone\": \"America/New_York\"}}",
     D ("2021-03-14T12:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2020-11-01T05:50:02Z") ", \"unit\": \"hour\", \"amount\": 1, \"timezone\": \"America/New_York\"}}",
     D ("2020-11-01T06:50:02Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-01-31T05:00:00Z") ", \"unit\": \"month\", \"amount\": 1, \"timezone\": \"America/New_York\"}}",
     D ("2021-02-28T05:00:00Z")},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-02-28T05:00:00Z") ", \"unit\": \"month\", \"amount\": 4, \"timezone\": \"America/New_York\"}}",
     D ("2021-06-28T04:00:00Z")},
    /* the end of a month in the zone, not in UTC: Jan 31 22:00 EST + 1 month */
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-02-01T03:00:00Z") ", \"unit\": \"month\", \"amount\": 1, \"timezone\": \"America/New_York\"}}",
     D ("2021-03-01T03:00:00Z")},
    {"{}", "{\"$dateSubtract\": {\"startDate\": " D ("2021-03-31T12:00:00Z") ", \"unit\": \"month\", \"amount\": 1}}",
     D ("2021-02-28T12:00:00Z")},
    {"{}", "{\"$dateSubtract\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"day\", \"amount\": 1, \"timezone\": \"America/New_York\"}}",
     D ("2021-03-13T12:00:00Z")},
    {"{}", "{\"$dateSubtract\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"hour\", \"amount\": 3}}",
     D ("2021-03-14T08:00:00Z")},
    {"{\"t\": {\"$timestamp\": {\"t\": 1500000000, \"i\": 1}}}", "{\"$dateAdd\": {\"startDate\": \"$t\", \"unit\": \"second\", \"amount\": 1}}",
     D ("2017-07-14T02:40:01Z")},
    /* null, missing and errors */
    {"{}", "{\"$dateAdd\": {\"startDate\": \"$nope\", \"unit\": \"day\", \"amount\": 1}}", "null"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"$nope\", \"amount\": 1}}", "null"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"day\", \"amount\": null}}", "null"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"day\", \"amount\": 1, \"timezone\": \"$nope\"}}", "null"},
    {"{}", "{\"$dateAdd\": {\"startDate\": \"2021-03-14\", \"unit\": \"day\", \"amount\": 1}}",
     "ERROR:requires startDate to be convertible to a date"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"day\", \"amount\": 1.5}}",
     "ERROR:expects integer amount of time units"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"days\", \"amount\": 1}}",
     "PARSE:unknown time unit value: days"},
    {"{\"u\": \"fortnight\"}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"$u\", \"amount\": 1}}",
     "ERROR:unknown time unit value"},
    {"{\"u\": 1}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"$u\", \"amount\": 1}}",
     "ERROR:requires 'unit' to be a string, but got int"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"year\", \"amount\": " L ("1000000000") "}}",
     "ERROR:invalid dateAdd 'amount' parameter value: 1000000000 year"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"year\", \"amount\": 500000000}}",
     "ERROR:dateAdd overflowed"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"millisecond\", \"amount\": " L ("9223372036854775807") "}}",
     "ERROR:dateAdd overflowed"},
    {"{}", "{\"$dateSubtract\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"day\", \"amount\": " L ("-9223372036854775808") "}}",
     "ERROR:invalid $dateSubtract 'amount' parameter value"},
    {"{}", "{\"$dateAdd\": {\"startDate\": " D ("2021-03-14T11:00:00Z") ", \"unit\": \"day\"}}", "PARSE:missing the required argument 'amount'"},
    {NULL, NULL, NULL},
};

static const x_case_t diff[] = {
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T00:00:00Z") ", \"endDate\": " D ("2021-01-31T00:00:00Z") ", \"unit\": \"day\"}}",
     L ("30")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2020-12-31T23:59:59Z") ", \"endDate\": " D ("2021-01-01T00:00:00Z") ", \"unit\": \"year\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T00:00:00Z") ", \"endDate\": " D ("2021-12-31T23:59:59Z") ", \"unit\": \"year\"}}",
     L ("0")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-03-31T00:00:00Z") ", \"endDate\": " D ("2021-04-01T00:00:00Z") ", \"unit\": \"quarter\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-31T00:00:00Z") ", \"endDate\": " D ("2021-02-01T00:00:00Z") ", \"unit\": \"month\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-02-01T00:00:00Z") ", \"endDate\": " D ("2020-01-31T00:00:00Z") ", \"unit\": \"month\"}}",
     L ("-13")},
    /* the documentation's weeks: Saturday 2022-01-01 to Monday 2022-01-31 */
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2022-01-01T00:00:00Z") ", \"endDate\": " D ("2022-01-31T00:00:00Z") ", \"unit\": \"week\"}}",
     L ("5")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2022-01-01T00:00:00Z") ", \"endDate\": " D ("2022-01-31T00:00:00Z") ", \"unit\": \"week\", \"startOfWeek\": \"Monday\"}}",
     L ("5")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2022-01-01T00:00:00Z") ", \"endDate\": " D ("2022-01-31T00:00:00Z") ", \"unit\": \"week\", \"startOfWeek\": \"fri\"}}",
     L ("4")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2022-01-31T00:00:00Z") ", \"endDate\": " D ("2022-01-01T00:00:00Z") ", \"unit\": \"week\"}}",
     L ("-5")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2022-01-01T00:00:00Z") ", \"endDate\": " D ("2022-01-31T00:00:00Z") ", \"unit\": \"day\", \"startOfWeek\": \"someday\"}}",
     L ("30")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2022-01-01T00:00:00Z") ", \"endDate\": " D ("2022-01-31T00:00:00Z") ", \"unit\": \"week\", \"startOfWeek\": \"someday\"}}",
     "ERROR:cannot be recognized as a day of a week"},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2022-01-01T00:00:00Z") ", \"endDate\": " D ("2022-01-31T00:00:00Z") ", \"unit\": \"week\", \"startOfWeek\": \"$nope\"}}",
     "null"},
    /* boundaries crossed, not whole units */
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T10:59:59Z") ", \"endDate\": " D ("2021-01-01T11:00:00Z") ", \"unit\": \"hour\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T10:00:00Z") ", \"endDate\": " D ("2021-01-01T10:59:59Z") ", \"unit\": \"hour\"}}",
     L ("0")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T10:00:00.999Z") ", \"endDate\": " D ("2021-01-01T10:00:01Z") ", \"unit\": \"second\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T10:00:00.999Z") ", \"endDate\": " D ("2021-01-01T10:00:01Z") ", \"unit\": \"millisecond\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T10:00:30Z") ", \"endDate\": " D ("2021-01-01T09:59:00Z") ", \"unit\": \"minute\"}}",
     L ("-1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("1969-12-31T23:59:59.999Z") ", \"endDate\": " D ("1970-01-01T00:00:00Z") ", \"unit\": \"second\"}}",
     L ("1")},
    /* in a zone: the day boundaries are local ones, daylight time counted */
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-03-14T04:00:00Z") ", \"endDate\": " D ("2021-03-14T06:00:00Z") ", \"unit\": \"day\"}}",
     L ("0")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-03-14T04:00:00Z") ", \"endDate\": " D ("2021-03-14T06:00:00Z") ", \"unit\": \"day\", \"timezone\": \"America/New_York\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-03-13T12:00:00Z") ", \"endDate\": " D ("2021-03-14T12:00:00Z") ", \"unit\": \"hour\", \"timezone\": \"America/New_York\"}}",
     L ("24")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-03-13T12:00:00Z") ", \"endDate\": " D ("2021-03-14T12:00:00Z") ", \"unit\": \"minute\", \"timezone\": \"America/New_York\"}}",
     L ("1440")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-03-13T12:00:00Z") ", \"endDate\": " D ("2021-03-14T12:00:00Z") ", \"unit\": \"second\", \"timezone\": \"America/New_York\"}}",
     L ("86400")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-01T00:00:00Z") ", \"endDate\": " D ("2021-01-01T00:30:00Z") ", \"unit\": \"hour\", \"timezone\": \"+05:30\"}}",
     L ("1")},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-01-31T23:00:00Z") ", \"endDate\": " D ("2021-02-01T01:00:00Z") ", \"unit\": \"month\", \"timezone\": \"-05:00\"}}",
     L ("0")},
    /* null, missing, errors */
    {"{}", "{\"$dateDiff\": {\"startDate\": \"$nope\", \"endDate\": " D ("2021-02-01T01:00:00Z") ", \"unit\": \"day\"}}", "null"},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-02-01T01:00:00Z") ", \"endDate\": null, \"unit\": \"day\"}}", "null"},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-02-01T01:00:00Z") ", \"endDate\": " D ("2021-02-01T01:00:00Z") ", \"unit\": \"$nope\"}}", "null"},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-02-01T01:00:00Z") ", \"endDate\": " D ("2021-02-01T01:00:00Z") ", \"unit\": \"day\", \"timezone\": null}}", "null"},
    {"{}", "{\"$dateDiff\": {\"startDate\": 1, \"endDate\": " D ("2021-02-01T01:00:00Z") ", \"unit\": \"day\"}}",
     "ERROR:$dateDiff requires 'startDate' to be a date, but got int"},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-02-01T01:00:00Z") ", \"endDate\": \"x\", \"unit\": \"day\"}}",
     "ERROR:$dateDiff requires 'endDate' to be a date, but got string"},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-02-01T01:00:00Z") ", \"endDate\": " D ("2021-02-01T01:00:00Z") ", \"unit\": 5}}",
     "PARSE:requires 'unit' to be a string"},
    {"{}", "{\"$dateDiff\": {\"startDate\": " D ("2021-02-01T01:00:00Z") ", \"unit\": \"day\"}}", "PARSE:missing the required argument 'endDate'"},
    {NULL, NULL, NULL},
};

#define TD(iso) "{\"d\": " D (iso) "}"
static const x_case_t trunc_[] = {
    /* the documentation's example */
    {TD ("2020-05-18T14:10:30Z"),
     "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"week\", \"binSize\": 2, \"timezone\": \"America/Los_Angeles\", \"startOfWeek\": \"Monday\"}}",
     D ("2020-05-11T07:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"week\"}}", D ("2020-05-17T00:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"week\", \"startOfWeek\": \"MON\"}}", D ("2020-05-18T00:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"year\"}}", D ("2020-01-01T00:00:00Z")},
    {TD ("2021-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"year\", \"binSize\": 5}}", D ("2020-01-01T00:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"quarter\"}}", D ("2020-04-01T00:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"month\"}}", D ("2020-05-01T00:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"month\", \"binSize\": 6}}", D ("2020-01-01T00:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\"}}", D ("2020-05-18T00:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"hour\"}}", D ("2020-05-18T14:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"hour\", \"binSize\": 6}}", D ("2020-05-18T12:00:00Z")},
    {TD ("2020-05-18T14:10:30Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"minute\", \"binSize\": 15}}", D ("2020-05-18T14:00:00Z")},
    {TD ("2020-05-18T14:10:30.5Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"second\"}}", D ("2020-05-18T14:10:30Z")},
    {TD ("2020-05-18T14:10:30.567Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"millisecond\", \"binSize\": 100}}",
     D ("2020-05-18T14:10:30.500Z")},
    {TD ("1969-12-31T23:59:59.500Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"second\"}}", D ("1969-12-31T23:59:59Z")},
    {TD ("1969-07-20T20:17:40Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"month\", \"binSize\": 5}}", D ("1969-03-01T00:00:00Z")},
    {TD ("1969-07-20T20:17:40Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"binSize\": 7}}", D ("1969-07-19T00:00:00Z")},
    /* in a zone: local midnights; half-hour zones shift the hours */
    {TD ("2021-03-14T12:00:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"timezone\": \"America/New_York\"}}",
     D ("2021-03-14T05:00:00Z")},
    {TD ("2021-03-15T12:00:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"timezone\": \"America/New_York\"}}",
     D ("2021-03-15T04:00:00Z")},
    {TD ("2021-07-15T12:00:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"month\", \"timezone\": \"America/New_York\"}}",
     D ("2021-07-01T04:00:00Z")},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"hour\", \"timezone\": \"+05:30\"}}",
     D ("2021-07-15T11:30:00Z")},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"hour\", \"timezone\": \"America/New_York\"}}",
     D ("2021-07-15T12:00:00Z")},
    /* null, missing, errors */
    {"{}", "{\"$dateTrunc\": {\"date\": \"$nope\", \"unit\": \"day\"}}", "null"},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"binSize\": null}}", "null"},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": null}}", "null"},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"timezone\": \"$nope\"}}", "null"},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"binSize\": 0}}",
     "ERROR:requires 'binSize' to be greater than 0"},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"binSize\": 1.5}}",
     "ERROR:requires 'binSize' to be a 64-bit integer"},
    {TD ("2021-07-15T12:10:00Z"), "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\", \"binSize\": " L ("100000000001") "}}",
     "ERROR:dateTrunc unsupported binSize value"},
    {"{\"d\": \"2021-07-15\"}", "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"day\"}}", "ERROR:$dateTrunc requires 'date' to be a date, but got string"},
    {"{}", "{\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"decade\"}}", "PARSE:unknown time unit value: decade"},
    {"{}", "{\"$dateTrunc\": {\"unit\": \"day\"}}", "PARSE:missing the required argument 'date'"},
    {NULL, NULL, NULL},
};

/* The server's expectations (date_trunc.js): every argument from the
 * document, a missing one (binSize, timezone, startOfWeek with unit week)
 * makes null before any other is checked, startOfWeek is only read for
 * weeks, binSize may be any integral number. */
static const x_case_t trunc_server[] = {
    {"{}",
     "{\"$dateTrunc\": {\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": 2}}",
     "{\"$date\": \"2020-11-01T18:00:00Z\"}"},
    {"{\"date\": {\"$date\": \"2021-12-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": 4, \"timeZone\": \"America/New_York\", \"startOfWeek\": \"IGNORED\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "{\"$date\": \"2021-12-01T17:00:00Z\"}"},
    {"{\"date\": {\"$date\": \"2021-02-15T18:23:36Z\"}}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"week\"}}",
     "{\"$date\": \"2021-02-14T00:00:00Z\"}"},
    {"{\"date\": {\"$date\": \"2000-01-30T18:00:00Z\"}, \"unit\": \"week\", \"binSize\": 2, \"timeZone\": \"America/New_York\", \"startOfWeek\": \"mon\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "{\"$date\": \"2000-01-17T05:00:00Z\"}"},
    {"{\"_id\": {\"$oid\": \"507c7f79bcf86cd7994f6c0e\"}}",
     "{\"$dateTrunc\": {\"date\": \"$_id\", \"unit\": \"minute\", \"binSize\": 10}}",
     "{\"$date\": \"2012-10-15T21:20:00Z\"}"},
    {"{\"ts\": {\"$timestamp\": {\"t\": 1350336377, \"i\": 0}}}",
     "{\"$dateTrunc\": {\"date\": \"$ts\", \"unit\": \"second\", \"binSize\": 10}}",
     "{\"$date\": \"2012-10-15T21:26:10Z\"}"},
    {"{\"date\": \"string\", \"unit\": \"hour\", \"binSize\": 1, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"unit\": \"H\", \"binSize\": \"string\", \"timeZone\": 1}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": null, \"unit\": \"hour\", \"binSize\": 1, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": null, \"binSize\": 1, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": \"Invalid\", \"binSize\": \"Invalid\", \"timeZone\": \"Invalid\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": 1, \"binSize\": 1, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"century\", \"binSize\": 1, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": null, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": \"Invalid\", \"unit\": \"invalid\", \"timeZone\": \"Invalid\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": \"Number\", \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": 0, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": 2.5, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-01-30T18:59:00Z\"}, \"unit\": \"minute\", \"binSize\": {\"$numberDecimal\": \"15\"}, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "{\"$date\": \"2020-01-30T18:45:00Z\"}"},
    {"{\"date\": {\"$date\": \"2020-01-30T18:59:00Z\"}, \"unit\": \"day\", \"binSize\": {\"$numberLong\": \"1\"}, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "{\"$date\": \"2020-01-30T00:00:00Z\"}"},
    {"{\"date\": {\"$date\": \"2020-01-30T18:59:00.003Z\"}, \"unit\": \"millisecond\", \"binSize\": 1000, \"timeZone\": \"UTC\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "{\"$date\": \"2020-01-30T18:59:00.000Z\"}"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": 1, \"timeZone\": null}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": 1, \"unit\": \"century\", \"binSize\": \"1\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": 1, \"timeZone\": 1}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"binSize\": 1, \"timeZone\": \"America/Invalid\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"week\", \"startOfWeek\": null}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "null"},
    {"{\"date\": 1, \"unit\": \"week\", \"binSize\": \"\", \"timeZone\": 1}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"week\", \"binSize\": 1, \"timeZone\": \"GMT\", \"startOfWeek\": 1}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "ERROR:"},
    {"{\"date\": {\"$date\": \"2020-01-30T18:59:00.000Z\"}, \"binSize\": 1, \"unit\": \"year\", \"timeZone\": \"GMT\", \"startOfWeek\": 1}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "{\"$date\": \"2020-01-01T00:00:00.000Z\"}"},
    {"{\"date\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"week\", \"binSize\": 1, \"timeZone\": \"GMT\", \"startOfWeek\": \"FRIDIE\"}",
     "{\"$dateTrunc\": {\"date\": \"$date\", \"unit\": \"$unit\", \"binSize\": \"$binSize\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "ERROR:"},

    {NULL, NULL, NULL},
};

/* The server's expectations (date_to_string.js): %z and %Z in zones with
 * odd and historical offsets, natural and ISO weeks, month names, null
 * and missing arguments, the default format, the refusals. */
static const x_case_t to_string_server[] = {
    {"{\"date\": {\"$date\": \"2017-07-04T14:56:42.911Z\"}, \"tz\": \"UTC\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"2017-07-04 14:56:42 +0000 (0 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-07-04T14:56:42.911Z\"}, \"tz\": \"Europe/London\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"2017-07-04 15:56:42 +0100 (60 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-07-04T14:56:42.911Z\"}, \"tz\": \"America/New_York\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"2017-07-04 10:56:42 -0400 (-240 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-07-04T14:56:42.911Z\"}, \"tz\": \"Australia/Eucla\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"2017-07-04 23:41:42 +0845 (525 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-07-04T14:56:42.911Z\"}, \"tz\": \"Asia/Kathmandu\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"2017-07-04 20:41:42 +0545 (345 minutes)\""},
    {"{\"date\": {\"$date\": \"1935-07-10T11:36:37.133Z\"}, \"tz\": \"Europe/Amsterdam\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"1935-07-10 12:56:09 +0119 (79 minutes)\""},
    {"{\"date\": {\"$date\": \"1900-07-10T11:41:22.418Z\"}, \"tz\": \"America/Caracas\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"1900-07-10 07:13:42 -0427 (-267 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"tz\": \"America/New_York\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"2017-01-04 10:08:51 -0500 (-300 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-12-04T15:09:14.911Z\"}, \"tz\": \"America/New_York\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$tz\"}}",
     "\"2017-12-04 10:09:14 -0500 (-300 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\"}}",
     "\"2017-01-04 15:08:51 +0000 (0 minutes)\""},
    {"{\"date\": {\"$date\": \"2017-01-01T15:08:51.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"Natural: %Y-W%w-%U, ISO: %G-W%u-%V\", \"date\": \"$date\"}}",
     "\"Natural: 2017-W1-01, ISO: 2016-W7-52\""},
    {"{\"date\": {\"$date\": \"2017-07-04T15:09:12.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"Natural: %Y-W%w-%U, ISO: %G-W%u-%V\", \"date\": \"$date\"}}",
     "\"Natural: 2017-W3-27, ISO: 2017-W2-27\""},
    {"{\"date\": {\"$date\": \"2017-12-04T15:09:14.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"Natural: %Y-W%w-%U, ISO: %G-W%u-%V\", \"date\": \"$date\"}}",
     "\"Natural: 2017-W2-49, ISO: 2017-W1-49\""},
    {"{\"date\": {\"$date\": \"2017-01-01T15:08:51.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"%b (%B) %d, %Y\", \"date\": \"$date\"}}",
     "\"Jan (January) 01, 2017\""},
    {"{\"date\": {\"$date\": \"2017-07-04T15:09:12.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"%b (%B) %d, %Y\", \"date\": \"$date\"}}",
     "\"Jul (July) 04, 2017\""},
    {"{\"date\": {\"$date\": \"2017-12-04T15:09:14.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"%b (%B) %d, %Y\", \"date\": \"$date\"}}",
     "\"Dec (December) 04, 2017\""},
    {"{\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$timezone\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"timezone\": null}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$timezone\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"timezone\": {\"$undefined\": true}}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$timezone\"}}",
     "null"},
    {"{\"timezone\": \"Europe/Oslo\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$timezone\"}}",
     "null"},
    {"{\"date\": null, \"timezone\": \"Europe/Oslo\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$timezone\"}}",
     "null"},
    {"{\"date\": {\"$undefined\": true}, \"timezone\": \"Europe/Oslo\"}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S %z (%Z minutes)\", \"date\": \"$date\", \"timezone\": \"$timezone\"}}",
     "null"},
    {"{\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}}",
     "{\"$dateToString\": {\"date\": \"$date\", \"timezone\": \"America/New_York\"}}",
     "\"2017-01-04T10:08:51.911\""},
    {"{\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}}",
     "{\"$dateToString\": {\"date\": \"$date\", \"timezone\": \"UTC\"}}",
     "\"2017-01-04T15:08:51.911Z\""},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": null}}",
     "null"},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": {\"$undefined\": true}}}",
     "null"},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": \"$missing\"}}",
     "null"},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": 5}}",
     "PARSE:"},
    {"{}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S\", \"timezone\": \"$tz\"}}",
     "PARSE:"},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": \"%Y-%m-%d %H:%M:%S\", \"timezone\": 5}}",
     "PARSE:"},
    {"{}",
     "{\"$dateToString\": {\"format\": \"%Y-%m-%d %H:%M:%S\", \"date\": 42}}",
     "ERROR:"},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": \"%Y-%m-%d %H:%M:%S\", \"timezone\": \"DoesNotExist\"}}",
     "PARSE:"},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": \"%\"}}",
     "PARSE:Unmatched '%' at end of format string"},
    {"{}",
     "{\"$dateToString\": {\"date\": {\"$date\": \"2017-01-04T15:08:51.911Z\"}, \"format\": \"%n\"}}",
     "PARSE:Invalid format character '%n' in format string"},

    {NULL, NULL, NULL},
};

/* The server's expectations (date_diff.js): arguments from the document,
 * a missing or null one makes null before the others are checked, dates
 * from ObjectIds and timestamps, startOfWeek only read for weeks. */
static const x_case_t diff_server[] = {
    {"{}",
     "{\"$dateDiff\": {\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-02T00:00:00Z\"}, \"unit\": \"hour\"}}",
     "{\"$numberLong\": \"6\"}"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-02T00:00:00Z\"}, \"unit\": \"hour\", \"timeZone\": \"America/New_York\", \"startOfWeek\": \"IGNORED\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "{\"$numberLong\": \"6\"}"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-02T00:00:00Z\"}, \"unit\": \"hour\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\"}}",
     "{\"$numberLong\": \"6\"}"},
    {"{\"_id\": {\"$oid\": \"507c7f79bcf86cd7994f6c0e\"}}",
     "{\"$dateDiff\": {\"startDate\": \"$_id\", \"endDate\": \"$_id\", \"unit\": \"millisecond\", \"timezone\": \"America/New_York\"}}",
     "{\"$numberLong\": \"0\"}"},
    {"{\"ts\": {\"$timestamp\": {\"t\": 1350336377, \"i\": 3}}}",
     "{\"$dateDiff\": {\"startDate\": \"$ts\", \"endDate\": \"$ts\", \"unit\": \"millisecond\"}}",
     "{\"$numberLong\": \"0\"}"},
    {"{\"startDate\": \"string\", \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"timeZone\": \"UTC\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"endDate\": 1, \"unit\": \"century\", \"timeZone\": \"INVALID\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"startDate\": null, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"timeZone\": \"UTC\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": 1, \"unit\": \"hour\", \"timeZone\": \"UTC\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"startDate\": \"\", \"unit\": \"epoch\", \"timeZone\": \"INVALID\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": null, \"timeZone\": \"UTC\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"startDate\": 1, \"endDate\": 2, \"timeZone\": \"INVALID\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": 5, \"timeZone\": \"UTC\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"decade\", \"timeZone\": \"UTC\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"timeZone\": null}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"startDate\": 1, \"endDate\": 2, \"unit\": \"century\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "null"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"timeZone\": 1}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"timeZone\": \"America/Invalid\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\"}}",
     "ERROR:"},
    {"{\"startDate\": {\"$date\": \"2021-01-24T18:23:36Z\"}, \"endDate\": {\"$date\": \"2021-01-25T02:23:36Z\"}, \"unit\": \"week\", \"timeZone\": \"GMT\", \"startOfWeek\": \"MONDAY\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "{\"$numberLong\": \"1\"}"},
    {"{\"startDate\": {\"$date\": \"2021-01-17T05:00:00Z\"}, \"endDate\": {\"$date\": \"2021-01-17T04:59:00Z\"}, \"unit\": \"week\", \"timeZone\": \"America/New_York\", \"startOfWeek\": \"sunday\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "{\"$numberLong\": \"-1\"}"},
    {"{\"startDate\": {\"$date\": \"2021-01-24T18:23:36Z\"}, \"endDate\": {\"$date\": \"2021-01-25T02:23:36Z\"}}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"week\"}}",
     "{\"$numberLong\": \"0\"}"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"week\", \"startOfWeek\": null}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "null"},
    {"{\"startDate\": 1, \"endDate\": 2, \"unit\": \"week\", \"timeZone\": 1}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "null"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"week\", \"timeZone\": \"GMT\", \"startOfWeek\": 1}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "ERROR:"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"hour\", \"timeZone\": \"GMT\", \"startOfWeek\": 1}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "{\"$numberLong\": \"0\"}"},
    {"{\"startDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"endDate\": {\"$date\": \"2020-11-01T18:23:36Z\"}, \"unit\": \"week\", \"timeZone\": \"GMT\", \"startOfWeek\": \"FRIDIE\"}",
     "{\"$dateDiff\": {\"startDate\": \"$startDate\", \"endDate\": \"$endDate\", \"unit\": \"$unit\", \"timezone\": \"$timeZone\", \"startOfWeek\": \"$startOfWeek\"}}",
     "ERROR:"},

    /* a constant null timezone too, the unit from the document */
    {"{\"u\": \"century\"}", "{\"$dateDiff\": {\"startDate\": 1, \"endDate\": 2, \"unit\": \"$u\", \"timezone\": null}}", "null"},
    {"{\"u\": \"century\"}", "{\"$dateTrunc\": {\"date\": 1, \"unit\": \"$u\", \"timezone\": null}}", "null"},
    {NULL, NULL, NULL},
};

/* The server's expectations of onError (date_from_string_on_error.js): it
 * catches unparsable and non-string input, never a null format or
 * timezone (null wins), nor an invalid format. */
static const x_case_t from_string_on_error[] = {
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4th\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"12:50:53\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2017\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"60.Monday1770/06:59\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Not even close\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"July 4th, 10000\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": 5, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": {\"$literal\": {\"year\": 2018, \"month\": 2, \"day\": 5}}, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": {\"$literal\": [\"2018-02-05\"]}, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": null, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": {\"$undefined\": true}, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"$missing\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06\", \"format\": \"%Y\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06\", \"format\": \"%Y-%m-%dT%H\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06\", \"format\": \"Y-m-d\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06T11:56:02Z\", \"format\": null, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06T11:56:02Z\", \"timezone\": null, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06T11:56:02Z\", \"format\": {\"$undefined\": true}, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06T11:56:02Z\", \"timezone\": {\"$undefined\": true}, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06T11:56:02Z\", \"format\": \"$missing\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"2018-02-06T11:56:02Z\", \"timezone\": \"$missing\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": 5, \"format\": null, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": 5, \"timezone\": \"$missing\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "{\"$date\": \"2017-07-04T11:56:02Z\"}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Invalid date string\", \"format\": null, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"Invalid date string\", \"timezone\": \"$missing\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"invalid\", \"onError\": {\"$literal\": {}}}}",
     "{}"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"invalid\", \"onError\": 5}}",
     "5"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"invalid\", \"onError\": \"Not a date\"}}",
     "\"Not a date\""},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"invalid\", \"onError\": null}}",
     "null"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"invalid\", \"onError\": \"$missing\"}}",
     "MISSING"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"4/26/1992\", \"format\": 5, \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "PARSE:requires that 'format' be a string"},
    {"{}", "{\"$dateFromString\": {\"dateString\": \"4/26/1992\", \"format\": \"%n\", \"onError\": {\"$date\": \"2017-07-04T11:56:02Z\"}}}",
     "PARSE:Invalid format character '%n' in format string"},

    {NULL, NULL, NULL},
};

X_TABLE_TEST (test_expr_date_parts, parts)

X_TABLE_TEST (test_expr_date_dst, dst)

X_TABLE_TEST (test_expr_date_to_parts, to_parts)

X_TABLE_TEST (test_expr_date_from_parts, from_parts)

X_TABLE_TEST (test_expr_date_to_string, to_string)
X_TABLE_TEST (test_expr_date_to_string_server, to_string_server)

X_TABLE_TEST (test_expr_date_from_string, from_string)
X_TABLE_TEST (test_expr_date_from_string_formats, from_string_formats)
X_TABLE_TEST (test_expr_date_from_string_on_error, from_string_on_error)

X_TABLE_TEST (test_expr_date_add, add)

X_TABLE_TEST (test_expr_date_diff, diff)
X_TABLE_TEST (test_expr_date_diff_server, diff_server)

X_TABLE_TEST (test_expr_date_trunc, trunc_)
X_TABLE_TEST (test_expr_date_trunc_server, trunc_server)

/* The shared helpers other families call: the lenient parser ($toDate)
 * and the ISO form ($toString). */
static void
test_expr_date_shared (void)
{
    char buf[32];
    bson_error_t err;
    int64_t ms = 0;
    rm_expr_ctx_t *cx = rm_expr_ctx_new (X_NOW);

    T_CHECK (rm_xdate_iso (INT64_C (1499169600000), buf) == 24);
    T_CHECK_STR (buf, "2017-07-04T12:00:00.000Z");
    T_CHECK (rm_xdate_iso (INT64_C (-1), buf) == 24);
    T_CHECK_STR (buf, "1969-12-31T23:59:59.999Z");
    T_CHECK (rm_xdate_iso (INT64_C (-62167219200000), buf) == 24);
    T_CHECK_STR (buf, "0000-01-01T00:00:00.000Z");
    T_CHECK (rm_xdate_iso (INT64_C (-62167219200001), buf) == 0);
    T_CHECK (rm_xdate_iso (INT64_C (253402300800000), buf) == 0);
    T_CHECK (rm_xdate_parse (cx, NULL, "2017-07-04T12:00:00Z", 20, NULL, &ms, &err));
    T_CHECK (ms == INT64_C (1499169600000));
    T_CHECK (rm_xdate_parse (cx, NULL, "2017-07-04 08:00", 16, "America/New_York", &ms, &err));
    T_CHECK (ms == INT64_C (1499169600000));
    T_CHECK (!rm_xdate_parse (cx, NULL, "n/a", 3, NULL, &ms, &err));
    T_CHECK (strstr (err.message, "'n/a'") != NULL);
    T_CHECK (!rm_xdate_parse (cx, NULL, "2017-07-04", 10, "No/Such", &ms, &err));
    T_CHECK (strstr (err.message, "unrecognized time zone identifier") != NULL);
    rm_expr_ctx_destroy (cx);
}

/* The zones themselves: offsets at the changes, local times in the gap
 * and the overlap, and the same zone found twice is one load. */
static void
test_expr_date_zones (void)
{
    rm_tz_t a, b;
    T_CHECK (rm_tz_find ("America/New_York", 16, &a));
    T_CHECK (rm_tz_find ("America/New_York", 16, &b));
    T_CHECK (a.zone == b.zone && !a.utc);
    T_CHECK (rm_tz_offset (&a, INT64_C (1615705199)) == -5 * 3600);
    T_CHECK (rm_tz_offset (&a, INT64_C (1615705200)) == -4 * 3600);
    /* 2021-03-14 02:30 local does not exist: 03:30 EDT */
    T_CHECK (rm_tz_to_utc (&a, rm_cal_days (2021, 3, 14) * 86400 + 9000) == INT64_C (1615707000));
    /* 2021-11-07 01:30 local happens twice: the first, EDT */
    T_CHECK (rm_tz_to_utc (&a, rm_cal_days (2021, 11, 7) * 86400 + 5400) == INT64_C (1636263000));
    T_CHECK (rm_tz_find ("-05:30", 6, &a) && a.offset == -19800 && !a.zone);
    T_CHECK (rm_tz_find ("+0000", 5, &a) && a.utc);
    T_CHECK (rm_tz_find ("UTC", 3, &a) && a.utc);
    T_CHECK (rm_tz_find ("Etc/UTC", 7, &a) && !a.utc);
    T_CHECK (!rm_tz_find ("+5:30", 5, &a));
    T_CHECK (!rm_tz_find ("America/", 8, &a));
    T_CHECK (!rm_tz_find ("zone.tab", 8, &a));
    T_CHECK (!rm_tz_find ("", 0, &a));
    /* the calendar both ways, far from 1970 */
    for (int64_t day = -800000; day < 800000; day += 997) {
        int64_t y;
        int m, d;
        rm_cal_civil (day, &y, &m, &d);
        T_CHECK (rm_cal_days (y, m, d) == day);
    }
}

/* Evaluating allocates nothing once warm, a computed zone included (it
 * is loaded once, then found in the table). */
static void
test_expr_date_no_alloc_when_warm (void)
{
    const char *expr = "[{\"$dateToString\": {\"date\": \"$d\", \"format\": \"%Y-%m-%d %H:%M %z\", \"timezone\": \"$tz\"}},"
                       " {\"$dateFromString\": {\"dateString\": \"$s\", \"timezone\": \"Europe/Paris\"}},"
                       " {\"$dateTrunc\": {\"date\": \"$d\", \"unit\": \"week\", \"timezone\": \"$tz\"}},"
                       " {\"$dateToParts\": {\"date\": \"$d\", \"iso8601\": true}},"
                       " {\"$dateAdd\": {\"startDate\": \"$d\", \"unit\": \"month\", \"amount\": 1, \"timezone\": \"$tz\"}}]";
    const char *doc = "{\"d\": {\"$date\": \"2021-03-14T12:00:00Z\"}, \"tz\": \"America/Chicago\", "
                      "\"s\": \"2021-03-28 02:30:00\"}";

    T_CHECK (x_no_alloc_when_warm (doc, expr, BSON_TYPE_ARRAY) == 0);
}

int
main (void)
{
    T_RUN (test_expr_date_parts);
    T_RUN (test_expr_date_dst);
    T_RUN (test_expr_date_to_parts);
    T_RUN (test_expr_date_from_parts);
    T_RUN (test_expr_date_to_string);
    T_RUN (test_expr_date_to_string_server);
    T_RUN (test_expr_date_from_string);
    T_RUN (test_expr_date_from_string_formats);
    T_RUN (test_expr_date_from_string_on_error);
    T_RUN (test_expr_date_add);
    T_RUN (test_expr_date_diff);
    T_RUN (test_expr_date_diff_server);
    T_RUN (test_expr_date_trunc);
    T_RUN (test_expr_date_trunc_server);
    T_RUN (test_expr_date_shared);
    T_RUN (test_expr_date_zones);
    T_RUN (test_expr_date_no_alloc_when_warm);
    return t_done ();
}
