#!/usr/bin/env bash
# Issue 61, item 6: every operator of docs/plans.md's expression catalogue
# against a `set` of one constant field, on the same documents. Each row is
# `remodel run` of one `set` of one field computed by that operator, over
# crm.tasks of remodel-gen --scale N --seed 1 (20,000 documents at the
# default scale 20) with a few fields added beforehand, once: x a double
# (due_date in ms / 7), i an int, a an array of numbers, o a document.
# The cost is instructions (valgrind's callgrind, "Ir"), the same on a
# loaded machine as on an idle one, of the whole run (reading and writing
# included, as the constant set's): "x const" is a row's over the
# constant set's, the issue's bound being 2.5. A benchmark, never a test:
# it reports, it never fails. Prints a Markdown table; BENCH_OUT=FILE also
# writes it into FILE between the "operators" markers
# (scripts/bench/section.py; make bench-operators writes
# docs/performance.md).
#   scripts/bench_operators.sh [BUILD]   OPS_SCALE=N (default 20)
#   ONLY=REGEX: only the rows whose operator matches
#   BENCH_IR="FILE...": no runs, the table of counts saved before
#   (BUILD/bench/operators.tsv, written by every run)
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
R=$BUILD/remodel GEN=$BUILD/remodel-gen
SCALE=${OPS_SCALE:-20}
CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/remodel-bench}/ops-$SCALE
log() { printf 'bench-operators: %s\n' "$*" >&2; }

[ -x "$R" ] && [ -x "$GEN" ] || { log "build $R and $GEN first (make all)"; exit 0; }
command -v valgrind >/dev/null || { log "valgrind is needed: apt-get install valgrind"; exit 0; }
mkdir -p "$CACHE"
IN=$CACHE/tasks-ops.archive
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-ops.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
plan() { # plan FILE FIELDS-JSON
    printf '{"remodel": 1, "steps": [{"set": {"in": "crm.tasks", "fields": %s}}]}\n' "$2" >"$1"
}
if [ ! -f "$IN" ]; then
    log "generating scale $SCALE (crm.tasks only)"
    plan "$WORK/prep.json" '{"x": {"$divide": [{"$toLong": "$due_date"}, 7]},
        "i": {"$ifNull": ["$priority", 2]},
        "a": [{"$ifNull": ["$priority", 2]}, 7, 3, {"$strLenCP": "$description"}],
        "o": {"k": "$description", "v": {"$ifNull": ["$priority", 2]}}}'
    "$GEN" --out "$WORK/gen" --scale "$SCALE" --seed 1 --force &&
        "$R" convert -q "$WORK/gen" "$WORK/tasks.archive" --nsInclude 'crm.tasks' &&
        "$R" run -q "$WORK/prep.json" --from "$WORK/tasks.archive" --to "$IN" ||
        { log "preparing $IN failed"; rm -f "$IN"; exit 0; }
    rm -rf "$WORK/gen" "$WORK/tasks.archive"
fi

# The rows: OPERATOR<TAB>EXPRESSION (the value of the set's field "r"). The
# fields: description a string, due_date a date, x a double, i an int, a an
# array of numbers, o a document, _id an ObjectId.
cat >"$WORK/rows" <<'ROWS'
(constant)	"constant"
$literal	{"$literal": "$x"}
$const	{"$const": 5}
$let	{"$let": {"vars": {"v": "$i"}, "in": {"$add": ["$$v", 1]}}}
$$ROOT	{"$bsonSize": "$$ROOT"}
$$CURRENT	"$$CURRENT.i"
$$REMOVE	{"$cond": [true, "$$REMOVE", 1]}
$$NOW	"$$NOW"
$cond	{"$cond": [{"$gte": ["$i", 3]}, "high", "normal"]}
$ifNull	{"$ifNull": ["$priority", 0]}
$switch	{"$switch": {"branches": [{"case": {"$eq": ["$i", 1]}, "then": "one"}], "default": "other"}}
$and	{"$and": ["$done", {"$gt": ["$i", 1]}]}
$or	{"$or": ["$done", {"$gt": ["$i", 1]}]}
$not	{"$not": ["$done"]}
$eq	{"$eq": ["$i", 2]}
$ne	{"$ne": ["$i", 2]}
$gt	{"$gt": ["$x", 1e11]}
$gte	{"$gte": ["$x", 1e11]}
$lt	{"$lt": ["$x", 1e11]}
$lte	{"$lte": ["$x", 1e11]}
$cmp	{"$cmp": ["$description", "M"]}
$add	{"$add": ["$i", 1]}
$subtract	{"$subtract": ["$x", 1]}
$multiply	{"$multiply": ["$x", 1.5]}
$divide	{"$divide": ["$x", 3]}
$mod	{"$mod": ["$i", 2]}
$abs	{"$abs": "$x"}
$ceil	{"$ceil": "$x"}
$floor	{"$floor": "$x"}
$round	{"$round": ["$x", 2]}
$trunc	{"$trunc": ["$x", 1]}
$exp	{"$exp": "$i"}
$ln	{"$ln": "$x"}
$log10	{"$log10": "$x"}
$log	{"$log": ["$x", 2]}
$pow	{"$pow": ["$i", 3]}
$sqrt	{"$sqrt": "$x"}
$sum	{"$sum": "$a"}
$avg	{"$avg": "$a"}
$min	{"$min": "$a"}
$max	{"$max": "$a"}
$stdDevPop	{"$stdDevPop": "$a"}
$stdDevSamp	{"$stdDevSamp": "$a"}
$sin	{"$sin": "$i"}
$cos	{"$cos": "$i"}
$tan	{"$tan": "$i"}
$asin	{"$asin": {"$divide": ["$i", 10]}}
$acos	{"$acos": {"$divide": ["$i", 10]}}
$atan	{"$atan": "$i"}
$atan2	{"$atan2": ["$i", 2]}
$sinh	{"$sinh": "$i"}
$cosh	{"$cosh": "$i"}
$tanh	{"$tanh": "$i"}
$asinh	{"$asinh": "$i"}
$acosh	{"$acosh": {"$add": ["$i", 1]}}
$atanh	{"$atanh": {"$divide": ["$i", 10]}}
$degreesToRadians	{"$degreesToRadians": "$x"}
$radiansToDegrees	{"$radiansToDegrees": "$x"}
$bitAnd	{"$bitAnd": ["$i", 6]}
$bitOr	{"$bitOr": ["$i", 6]}
$bitXor	{"$bitXor": ["$i", 6]}
$bitNot	{"$bitNot": "$i"}
$type	{"$type": "$x"}
$isNumber	{"$isNumber": "$x"}
$isArray	{"$isArray": "$a"}
$convert	{"$convert": {"input": "$i", "to": "string"}}
$toString (double)	{"$toString": "$x"}
$toString (date)	{"$toString": "$due_date"}
$toInt	{"$toInt": "$i"}
$toLong	{"$toLong": "$due_date"}
$toDouble	{"$toDouble": "$i"}
$toDecimal	{"$toDecimal": "$x"}
$toBool	{"$toBool": "$i"}
$toDate	{"$toDate": "$due_s"}
$toObjectId	{"$toObjectId": "5f0c2c1a9b1e8a3d4c2b1a09"}
$toUUID	{"$toUUID": "8f7e6d5c-4b3a-4291-8a7b-6c5d4e3f2a10"}
$tsSecond	{"$tsSecond": {"$literal": {"$timestamp": {"t": 1700000000, "i": 3}}}}
$tsIncrement	{"$tsIncrement": {"$literal": {"$timestamp": {"t": 1700000000, "i": 3}}}}
$concat	{"$concat": ["task: ", "$description"]}
$split	{"$split": ["$description", " "]}
$strLenBytes	{"$strLenBytes": "$description"}
$strLenCP	{"$strLenCP": "$description"}
$substr	{"$substr": ["$description", 0, 5]}
$substrBytes	{"$substrBytes": ["$description", 0, 5]}
$substrCP	{"$substrCP": ["$description", 2, 8]}
$indexOfBytes	{"$indexOfBytes": ["$description", "a"]}
$indexOfCP	{"$indexOfCP": ["$description", "a"]}
$toLower	{"$toLower": "$description"}
$toUpper	{"$toUpper": "$description"}
$strcasecmp	{"$strcasecmp": ["$description", "fix"]}
$trim	{"$trim": {"input": "$description"}}
$ltrim	{"$ltrim": {"input": "$description", "chars": "F"}}
$rtrim	{"$rtrim": {"input": "$description", "chars": "0123456789"}}
$replaceOne	{"$replaceOne": {"input": "$description", "find": "a", "replacement": "A"}}
$replaceAll	{"$replaceAll": {"input": "$description", "find": "a", "replacement": "A"}}
$regexMatch	{"$regexMatch": {"input": "$description", "regex": "^Fix"}}
$regexFind	{"$regexFind": {"input": "$description", "regex": "[0-9]+"}}
$regexFindAll	{"$regexFindAll": {"input": "$description", "regex": "[a-z]+"}}
$year	{"$year": "$due_date"}
$month	{"$month": "$due_date"}
$dayOfMonth	{"$dayOfMonth": "$due_date"}
$dayOfWeek	{"$dayOfWeek": "$due_date"}
$dayOfYear	{"$dayOfYear": "$due_date"}
$week	{"$week": "$due_date"}
$isoWeek	{"$isoWeek": "$due_date"}
$isoWeekYear	{"$isoWeekYear": "$due_date"}
$isoDayOfWeek	{"$isoDayOfWeek": "$due_date"}
$hour	{"$hour": "$due_date"}
$minute	{"$minute": "$due_date"}
$second	{"$second": "$due_date"}
$millisecond	{"$millisecond": "$due_date"}
$dateToParts	{"$dateToParts": {"date": "$due_date"}}
$dateFromParts	{"$dateFromParts": {"year": 2020, "month": "$i", "day": 3}}
$dateToString	{"$dateToString": {"date": "$due_date", "format": "%Y-%m-%d"}}
$dateFromString	{"$dateFromString": {"dateString": "$due_s"}}
$dateAdd	{"$dateAdd": {"startDate": "$due_date", "unit": "day", "amount": 3}}
$dateSubtract	{"$dateSubtract": {"startDate": "$due_date", "unit": "month", "amount": 1}}
$dateDiff	{"$dateDiff": {"startDate": "$due_date", "endDate": "$$NOW", "unit": "day"}}
$dateTrunc	{"$dateTrunc": {"date": "$due_date", "unit": "week"}}
$arrayElemAt	{"$arrayElemAt": ["$a", 1]}
$first	{"$first": "$a"}
$last	{"$last": "$a"}
$slice	{"$slice": ["$a", 2]}
$size	{"$size": "$a"}
$in	{"$in": ["$i", "$a"]}
$indexOfArray	{"$indexOfArray": ["$a", 3]}
$concatArrays	{"$concatArrays": ["$a", [1, 2]]}
$reverseArray	{"$reverseArray": "$a"}
$range	{"$range": [0, "$i"]}
$zip	{"$zip": {"inputs": ["$a", "$a"]}}
$map	{"$map": {"input": "$a", "as": "v", "in": {"$add": ["$$v", 1]}}}
$filter	{"$filter": {"input": "$a", "cond": {"$gt": ["$$this", 2]}}}
$reduce	{"$reduce": {"input": "$a", "initialValue": 0, "in": {"$add": ["$$value", "$$this"]}}}
$sortArray	{"$sortArray": {"input": "$a", "sortBy": 1}}
$firstN	{"$firstN": {"input": "$a", "n": 2}}
$lastN	{"$lastN": {"input": "$a", "n": 2}}
$maxN	{"$maxN": {"input": "$a", "n": 2}}
$minN	{"$minN": {"input": "$a", "n": 2}}
$objectToArray	{"$objectToArray": "$o"}
$arrayToObject	{"$arrayToObject": [[["k", "$i"]]]}
$mergeObjects	{"$mergeObjects": ["$o", {"w": 1}]}
$getField	{"$getField": {"field": "k", "input": "$o"}}
$setField	{"$setField": {"field": "w", "input": "$o", "value": 1}}
$unsetField	{"$unsetField": {"field": "k", "input": "$o"}}
$bsonSize	{"$bsonSize": "$o"}
$binarySize	{"$binarySize": "$description"}
$setUnion	{"$setUnion": ["$a", [1, 2]]}
$setIntersection	{"$setIntersection": ["$a", [1, 2, 3]]}
$setDifference	{"$setDifference": ["$a", [3]]}
$setEquals	{"$setEquals": ["$a", [3, 7]]}
$setIsSubset	{"$setIsSubset": [[3], "$a"]}
$allElementsTrue	{"$allElementsTrue": ["$a"]}
$anyElementTrue	{"$anyElementTrue": ["$a"]}
ROWS

# ir COMMAND...: the instructions the run executed, or FAIL
ir() {
    local out=$WORK/cg.out
    rm -f "$WORK/out.archive" "$out"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$@" </dev/null >/dev/null 2>"$WORK/err" ||
        { echo FAIL; return; }
    awk '/^summary:/ {print $2}' "$out"
}
if [ -n "${BENCH_IR:-}" ]; then
    cat $BENCH_IR >"$WORK/ir" # counts saved by earlier runs: the table again
else {
    printf 'convert\t-\t%s\n' "$(ir "$R" convert -q "$IN" "$WORK/out.archive")"
    n=0
    while IFS=$'\t' read -r op expr; do
        n=$((n + 1))
        if [ -n "${ONLY:-}" ] && [ "$op" != "(constant)" ] && ! [[ $op =~ $ONLY ]]; then
            continue
        fi
        plan "$WORK/p.json" "{\"r\": $expr}"
        got=$(ir "$R" run -q "$WORK/p.json" --from "$IN" --to "$WORK/out.archive")
        [ "$got" = FAIL ] && log "$op failed: $(tail -n1 "$WORK/err")"
        printf '%s\t%s\t%s\n' "$op" "$expr" "$got"
    done <"$WORK/rows"
} >"$WORK/ir"
fi
mkdir -p "$BUILD/bench" && cp "$WORK/ir" "$BUILD/bench/operators.tsv"
docs=$("$R" inspect "$IN" 2>/dev/null | awk '$1 == "crm.tasks" {print $3}')
table=$(python3 - "$WORK/ir" "${docs:-0}" "$SCALE" <<'PY'
import sys
rows, seen = [], set()
for l in open(sys.argv[1]):
    r = l.rstrip("\n").split("\t")
    if r[0] not in seen:  # BENCH_IR's files may repeat a row: the first counts
        seen.add(r[0])
        rows.append(r)
docs, scale = int(sys.argv[2]), sys.argv[3]
ir = dict((r[0], r[2]) for r in rows)
conv = float(ir["convert"])
const = float(ir["(constant)"])
over = [r[0] for r in rows if r[0] not in ("convert", "(constant)") and r[2] != "FAIL"
        and float(r[2]) / const > 2.5]
failed = [r[0] for r in rows if r[2] == "FAIL"]
print("(remodel-gen --scale %s --seed 1, crm.tasks only, %d documents with x, i, a, o added; "
      "instructions of the whole run, valgrind --tool=callgrind; `make bench-operators`)\n"
      % (scale, docs))
print("identity `remodel convert`: %.1f M instructions; `set` of a constant: %.1f M (%.2fx convert, "
      "%.0f a document over it).\n" % (conv / 1e6, const / 1e6, const / conv, (const - conv) / docs))
print("Over 2.5x the constant set: %s.\n" % (", ".join("`%s`" % o for o in over) if over else "none"))
if failed:
    print("Failed to run: %s.\n" % ", ".join("`%s`" % o for o in failed))
print("| operator | expression | M instructions | x const | a document over const |")
print("|---|---|---:|---:|---:|")
for op, expr, got in rows:
    if op in ("convert", "(constant)"):
        continue
    if got == "FAIL":
        print("| `%s` | `%s` | failed | | |" % (op, expr))
        continue
    g = float(got)
    mark = "**%.2f**" % (g / const) if g / const > 2.5 else "%.2f" % (g / const)
    print("| `%s` | `%s` | %.1f | %s | %.0f |" % (op, expr.replace("|", "\\|"), g / 1e6, mark,
                                                 (g - const) / docs))
PY
)
echo "$table"
if [ -n "${BENCH_OUT:-}" ]; then
    printf '%s\n' "$table" >"$WORK/section"
    python3 "$ROOT/scripts/bench/section.py" operators "$WORK/section" "$BENCH_OUT" "$BUILD"
fi
exit 0
