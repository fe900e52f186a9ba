#!/usr/bin/env bash
# Issue 64's new features on real public data no one here chose: the CSVs
# of vega_datasets 0.9.0 (airports, monthly stock prices, Seattle's hourly
# temperatures of 2010 and daily weather; its wheel fetched by
# tests/peers/install.sh), imported without a server by
# tests/transforms/csv_import.py (typed as mongoimport --type csv types
# them), run through the offline remodel and judged by
# tests/transforms/public_csv_oracle.py, which reads the CSV text itself
# (csv, strptime, zoneinfo), never remodel's output, as truth:
#  - the import: every document its CSV row;
#  - analyze: each field's types as the oracle types the CSV; the dates
#    held as strings ("Jan 1 2000", "2010/01/01 00:00", "2012/01/01") with
#    their formats, its plan's set steps giving the dates strptime gives,
#    every row; once converted, nothing to recommend (no bucket);
#  - bucketize the stock prices by symbol, yearly in UTC and quarterly in
#    New York (a price of the 1st at midnight UTC is the month before
#    there): each bucket's window, count, min, max and readings the
#    oracle's grouping; unbucketize gives the prices back byte for byte;
#    the temperatures, read as Los Angeles wall time, in monthly buckets
#    there (March and November change offset): the same;
#  - rekey the airports by their IATA code: as imported, refused naming
#    the two airports whose codes "0E0" and "0E8" are both the double 0.0
#    (the oracle finds them), nothing written; the codes imported as text
#    (unique, the oracle counts them), a made-up flights collection's
#    ObjectId references rewritten to them, byte for byte; by state
#    refused naming two airports of one state;
#  - copy, move and delete by a filter (AAPL copied, the prices before
#    2005 archived, IBM's deleted, the airports west of 150 W copied): the
#    oracle's selection, in order, byte for byte, and the counts remodel
#    prints;
#  - the importer itself against the real mongoimport (into
#    mongo-java-server, dumped by mongodump): the same documents but for
#    their _ids, type for type.
#   REMODEL=build/remodel bash tests/cli/test_public_csv.sh
. "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1
TX=$ROOT/tests/transforms
export PYTHONPATH=$TX
O=$TX/public_csv_oracle.py
WHEEL=${REMODEL_PEERS:-$HOME/.cache/remodel-peers}/data/vega_datasets-0.9.0-py3-none-any.whl
if [ ! -f "$WHEEL" ]; then
    fail "public CSVs: vega_datasets 0.9.0" "not installed: $WHEEL (run tests/peers/install.sh)"
    exit 0
fi
mkdir -p "$T/csv"
pyin "$WHEEL" "$T/csv" <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for name in ("airports", "stocks", "seattle-temps", "seattle-weather"):
    open("%s/%s.csv" % (sys.argv[2], name), "wb").write(z.read("vega_datasets/_data/%s.csv" % name))
EOF
C=$T/csv
pyrun "$TX/csv_import.py" "$T/src" vega.airports="$C/airports.csv" vega.stocks="$C/stocks.csv" \
    vega.seattle_temps="$C/seattle-temps.csv" vega.seattle_weather="$C/seattle-weather.csv" >/dev/null
expect_eq "import: every document is its CSV row (airports, stocks, temperatures, weather)" \
    "$(pyrun "$O" import "$C" "$T/src")" "14156 documents, each its row"

# --- analyze: dates held as strings --------------------------------------------
run_rm analyze "$T/src" --json --plan-out "$T/plan.json"
expect_eq "analyze: the three dates held as strings, with their formats (exit 0)" \
    "$rc:$(pyrun -c 'import json, sys
print(sorted((t["ns"], t["field"], t["format"]) for t in json.load(open(sys.argv[1]))["types"] if "format" in t))' "$T/out")" \
    "0:[('vega.seattle_temps', 'date', '%Y/%m/%d %H:%M'), ('vega.seattle_weather', 'date', '%Y/%m/%d'), ('vega.stocks', 'date', '%b %d %Y')]"
# The codes "0E0" and "0E8" among the IATA strings show as two doubles,
# and analyze says what an import's typing did there.
expect_eq "analyze: the few numbers among a field's strings, with what to do (the oracle's fields)" \
    "$(pyrun -c 'import json, sys
for t in sorted(json.load(open(sys.argv[1]))["types"], key=lambda t: (t["ns"], t["field"])):
    if t["what"] == "numbers among strings":
        print(t["ns"], t["field"], t["matching"], "of", t["of"], "import the column again as text" in t["advice"])' "$T/out")" \
    "$(pyrun "$O" amid "$C" | sed 's/$/ True/')"
expect_eq "analyze: each field's types and their counts, the oracle's typing of the CSV" \
    "$(pyrun -c 'import json, sys
for c in sorted(json.load(open(sys.argv[1]))["collections"], key=lambda c: c["ns"]):
    for f in c["fields"]:
        print(c["ns"], f["path"], " ".join("%s:%d" % kv for kv in sorted(f["types"].items())))' "$T/out")" \
    "$(pyrun "$O" types "$C")"
pyrun -c 'import json, sys
p = json.load(open(sys.argv[1])); p["steps"] = [s for s in p["steps"] if "set" in s]
print(sorted((s["set"]["in"], k, v["$dateFromString"]["format"]) for s in p["steps"] for k, v in s["set"]["fields"].items()))
json.dump(p, open(sys.argv[2], "w"))' "$T/plan.json" "$T/sets.json" >"$T/sets.txt"
expect_eq "analyze: its plan converts each with \$dateFromString and that format" \
    "$(cat "$T/sets.txt")" "[('vega.seattle_temps', 'date', '%Y/%m/%d %H:%M'), ('vega.seattle_weather', 'date', '%Y/%m/%d'), ('vega.stocks', 'date', '%b %d %Y')]"
run_rm run -q "$T/sets.json" --from "$T/src" --to "$T/conv"
expect_eq "analyze: its set steps run (exit 0)" "$rc:$(cat "$T/err")" "0:"
expect_eq "stocks: every converted date is strptime's (%b %d %Y, UTC)" \
    "$(pyrun "$O" dates "$C" "$T/src" "$T/conv" vega.stocks date '%b %d %Y' UTC)" "560 converted, 0 wrong"
expect_eq "temperatures: every converted date is strptime's (%Y/%m/%d %H:%M, UTC)" \
    "$(pyrun "$O" dates "$C" "$T/src" "$T/conv" vega.seattle_temps date '%Y/%m/%d %H:%M' UTC)" \
    "8759 converted, 0 wrong"
expect_eq "weather: every converted date is strptime's (%Y/%m/%d, UTC)" \
    "$(pyrun "$O" dates "$C" "$T/src" "$T/conv" vega.seattle_weather date '%Y/%m/%d' UTC)" \
    "1461 converted, 0 wrong"
# Converted, the monthly prices are no bucket candidate (a handful of
# readings a series and day at least: they have one a month), nor is the
# weather (a day's text besides its numbers); the hourly temperatures,
# one series with nothing but a date and a number, are: a bucket a day
# without metaField, which runs and gives the oracle's days.
run_rm analyze "$T/conv" --plan-out "$T/conv-plan.json"
expect_eq "analyze of the converted data: one bucketize, the temperatures by day, one series (exit 0)" \
    "$rc:$(pyrun -c 'import json, sys
for s in json.load(open(sys.argv[1]))["steps"]:
    b = s.get("bucketize", {})
    print(list(s), b.get("from"), b.get("granularity"), "metaField" in b, b.get("stats"))' "$T/conv-plan.json")" \
    "0:['bucketize'] vega.seattle_temps days False {'temp': ['min', 'max', 'avg']}"
pyrun -c 'import json, sys
p = json.load(open(sys.argv[1])); p["steps"][0]["bucketize"]["to"] = "vega.buckets"
json.dump(p, open(sys.argv[2], "w"))' "$T/conv-plan.json" "$T/days.json"
run_rm run -q "$T/days.json" --from "$T/conv" --to "$T/out-days"
expect_eq "temperatures, analyze's plan: a bucket a day, each window, count, min and max the oracle's" \
    "$rc:$(pyrun "$O" buckets "$C" "$T/out-days" vega.seattle_temps - date temp day UTC \
        '%Y/%m/%d %H:%M' UTC)" "0:OK 365 buckets"

# --- bucketize by the calendar, and back ------------------------------------------
# stocks NAME KEYS: bucketize of the converted prices, and with the
# unbucketize that reverses it.
stocks() {
    local k="\"timeField\": \"date\", \"metaField\": \"symbol\", $2"
    echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"vega.stocks\", \"to\": \"vega.buckets\", $k,
      \"stats\": {\"price\": [\"count\", \"min\", \"max\"]}}}]}" >"$T/$1.json"
    echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"vega.stocks\", \"to\": \"vega.buckets\", $k}},
      {\"unbucketize\": {\"from\": \"vega.buckets\", \"to\": \"vega.stocks\", $k, \"keepSource\": false}}]}" >"$T/$1-both.json"
}
stocks yearly '"unit": "year"'
stocks quarterly '"unit": "quarter", "timezone": "America/New_York"'
for p in "yearly|year|UTC|51" "quarterly|quarter|America/New_York|191"; do
    IFS='|' read -r name unit tz n <<<"$p"
    run_rm run -q "$T/$name.json" --from "$T/conv" --to "$T/out-$name"
    expect_eq "stocks by symbol, $unit in $tz: each bucket's window, count, min, max and prices the oracle's" \
        "$rc:$(pyrun "$O" buckets "$C" "$T/out-$name" vega.stocks symbol date price "$unit" "$tz" '%b %d %Y' UTC)" \
        "0:OK $n buckets"
    run_rm run -q "$T/$name-both.json" --from "$T/conv" --to "$T/both-$name"
    expect_eq "stocks by symbol, $unit in $tz: unbucketize gives the 560 prices back byte for byte, no bucket left" \
        "$rc:$(pyin "$T/conv" "$T/both-$name" <<'EOF'
import sys, rmlib
a = rmlib.read_dir(sys.argv[1])[0]["vega.stocks"]
b = rmlib.read_dir(sys.argv[2])[0]
print(len(a), sorted(a) == sorted(b["vega.stocks"]), len(b["vega.buckets"]))
EOF
)" "0:560 True 0"
done

# The temperatures are wall time in Seattle: read in Los Angeles (2010-03-14
# 02:00 never was; it reads as 03:00 PDT, as zoneinfo's fold 0 does), one
# series (no metaField), bucketized by the month there.
LA='"format": "%Y/%m/%d %H:%M", "timezone": "America/Los_Angeles"'
SET="{\"set\": {\"in\": \"vega.seattle_temps\", \"fields\": {
  \"date\": {\"\$dateFromString\": {\"dateString\": \"\$date\", $LA}}}}}"
echo "{\"remodel\": 1, \"steps\": [$SET]}" >"$T/la-set.json"
echo "{\"remodel\": 1, \"steps\": [$SET, {\"bucketize\": {\"from\": \"vega.seattle_temps\", \"to\": \"vega.buckets\",
  \"timeField\": \"date\", \"unit\": \"month\", \"timezone\": \"America/Los_Angeles\",
  \"stats\": {\"temp\": [\"count\", \"min\", \"max\"]}}}]}" >"$T/la.json"
run_rm run -q "$T/la-set.json" --from "$T/src" --to "$T/la-conv"
expect_eq "temperatures read in Los Angeles: every date is zoneinfo's (the skipped and the repeated hour as fold 0)" \
    "$rc:$(pyrun "$O" dates "$C" "$T/src" "$T/la-conv" vega.seattle_temps date '%Y/%m/%d %H:%M' America/Los_Angeles)" \
    "0:8759 converted, 0 wrong"
run_rm run -q "$T/la.json" --from "$T/src" --to "$T/out-la"
expect_eq "temperatures, monthly in Los Angeles: each bucket's window, count, min and max the oracle's" \
    "$rc:$(pyrun "$O" buckets "$C" "$T/out-la" vega.seattle_temps - date temp month America/Los_Angeles \
        '%Y/%m/%d %H:%M' America/Los_Angeles)" "0:OK 12 buckets"
expect_eq "temperatures: March and November, the months that change offset, by start, end and count" \
    "$(pyin "$T/out-la" <<'EOF'
import sys, bson, rmlib
for b in rmlib.read_dir(sys.argv[1])[0]["vega.buckets"]:
    b = bson.decode(b)
    if b["start"].month in (3, 11):
        print(b["start"].isoformat(), b["end"].isoformat(), b["count"])
EOF
)" "2010-03-01T08:00:00 2010-04-01T07:00:00 743
2010-11-01T07:00:00 2010-12-01T08:00:00 720"

# --- rekey: the airports by their IATA code ------------------------------------
# Typed as mongoimport types them, the codes "0E0" and "0E8" are the
# double 0.0 (a number in exponent form): two airports, one key.
expect_eq "airports: the IATA codes as imported, not unique: 0E0 and 0E8 are both 0.0 (oracle)" \
    "$(pyrun "$O" unique "$C" iata)" "3376 airports, 3375 distinct iata: rows 47 and 48 (0E0, 0E8) all 0.0"
cat >"$T/rekey.json" <<'EOF'
{"remodel": 1, "steps": [{"rekey": {"from": "vega.airports", "to": "vega.airports_by_code", "id": "$iata",
  "references": [{"in": "vega.flights", "field": "origin"}, {"in": "vega.flights", "field": "destination"}]}}]}
EOF
pyrun "$O" flights "$T/src" "$T/air-auto" >/dev/null
run_rm run "$T/rekey.json" --from "$T/air-auto" --to "$T/rk-auto"
expect_eq "rekey by \$iata as imported: refused (exit 1), nothing written" \
    "$rc:$(test -e "$T/rk-auto" && echo written):$(grep -c 'give "id" an expression unique to each document' "$T/err")" "1::1"
expect_eq "rekey by \$iata as imported: the refusal names both airports and their one key (oracle)" \
    "$(pyrun "$O" samekey "$T/air-auto" iata "$T/err")" "rows 47 and 48, both iata 0.0"
# The codes imported as text (mongoimport's iata.string()): unique.
pyrun "$TX/csv_import.py" "$T/src-text" vega.airports="$C/airports.csv" vega.stocks="$C/stocks.csv" \
    vega.seattle_temps="$C/seattle-temps.csv" vega.seattle_weather="$C/seattle-weather.csv" --text iata >/dev/null
expect_eq "import --text iata: every document is its CSV row, the codes strings" \
    "$(pyrun "$O" import "$C" "$T/src-text" iata)" "14156 documents, each its row"
expect_eq "airports: the IATA codes as text are unique (oracle)" \
    "$(pyrun "$O" unique "$C" iata text)" "3376 airports, 3376 distinct iata"
pyrun "$O" flights "$T/src-text" "$T/air" >/dev/null
run_rm run "$T/rekey.json" --from "$T/air" --to "$T/rk"
expect_eq "rekey by \$iata: its count line (exit 0)" \
    "$rc:$(grep '^step ' "$T/err")" \
    "0:step 1 (rekey) vega.airports: 3376 document(s) re-keyed into vega.airports_by_code; 1194 reference(s) rewritten"
expect_eq "rekey by \$iata: the airports under their codes and the flights' references the oracle's, byte for byte" \
    "$(pyrun "$O" rekey "$T/air" "$T/rk")" "3376 airports re-keyed, 600 flights' references, byte for byte"
sed 's/"id": "[$]iata"/"id": "$state"/' "$T/rekey.json" >"$T/by-state.json"
run_rm run "$T/by-state.json" --from "$T/air" --to "$T/rk-state"
expect_eq "rekey by \$state: refused (exit 1), nothing written" \
    "$rc:$(test -e "$T/rk-state" && echo written):$(grep -c 'give "id" an expression unique to each document' "$T/err")" "1::1"
got=$(pyrun "$O" samekey "$T/air" state "$T/err")
case $got in
"rows "*" and "*", both state '"*"'") pass "rekey by \$state: the two airports it names share the state it names (oracle: $got)" ;;
*) fail "rekey by \$state: the two airports it names share the state it names (oracle)" "$got" ;;
esac

# --- copy, move and delete by a filter ------------------------------------------
cat >"$T/filters.json" <<'EOF'
{"remodel": 1, "steps": [
  {"copy": {"from": "vega.stocks", "to": "vega.aapl", "filter": {"symbol": "AAPL"}, "project": {"date": 1, "price": 1}}},
  {"move": {"from": "vega.stocks", "to": "vega.stocks_archive", "filter": {"date": {"$lt": {"$date": "2005-01-01T00:00:00Z"}}}}},
  {"delete": {"from": "vega.stocks", "filter": {"symbol": "IBM"}}},
  {"copy": {"from": "vega.airports", "to": "vega.far_west", "filter": {"longitude": {"$lt": -150}}}}]}
EOF
run_rm run "$T/filters.json" --from "$T/conv" --to "$T/flt"
pyrun "$O" filters "$C" "$T/conv" "$T/flt" >"$T/want"
case $rc:$(head -n 1 "$T/want") in
"0:aapl "*"byte for byte") pass "copy, move, delete: each namespace the oracle's selection, in order, byte for byte ($(head -n 1 "$T/want"))" ;;
*) fail "copy, move, delete: each namespace the oracle's selection, in order, byte for byte" "$rc $(head -n 1 "$T/want")" ;;
esac
expect_eq "copy, move, delete: the counts remodel prints are the oracle's" \
    "$(grep '^step ' "$T/err")" "$(tail -n +2 "$T/want")"

# --- the importer against the real mongoimport ------------------------------------
# The same three files through mongoimport --type csv --headerline into
# mongo-java-server, dumped by mongodump: every document the importer's
# but for its _id (the driver's ObjectId), field for field, type for type
# ("0E0" the double 0.0 there too).
use_peers "public CSVs: peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "public CSVs: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
online_start java "$T/java" 0 || exit 0
for f in airports stocks seattle-temps; do
    "$REMODEL_PEERS/bin/mongoimport" --uri "$uri" --db vega --collection "${f/-/_}" --type csv --headerline --maintainInsertionOrder \
        --file "$C/$f.csv" --quiet 2>>"$T/mi.err" || fail "mongoimport $f.csv" "$(tail -3 "$T/mi.err")"
done
"$MONGODUMP" --uri "$uri" --db vega --out "$T/mi" --quiet 2>"$T/err" || fail "mongodump of the import" "$(cat "$T/err")"
expect_eq "csv_import.py types every value as mongoimport does (its documents but for _id, in order)" \
    "$(pyin "$T/mi" "$T/src" <<'EOF'
import sys, bson, rmlib
a, b = rmlib.read_dir(sys.argv[1])[0], rmlib.read_dir(sys.argv[2])[0]
def strip(d):
    # RawBSON: the document's bytes without its first field, the _id
    d = bson.decode(d, bson.codec_options.CodecOptions(document_class=bson.son.SON))
    assert list(d)[0] == "_id"
    del d["_id"]
    return bson.encode(d)
for ns in ("vega.airports", "vega.stocks", "vega.seattle_temps"):
    x, y = [strip(d) for d in a.get(ns, [])], [strip(d) for d in b[ns]]
    print(ns, len(x), x == y)
EOF
)" "vega.airports 3376 True
vega.stocks 560 True
vega.seattle_temps 8759 True"
