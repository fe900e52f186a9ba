#!/usr/bin/env bash
# bucketize -> unbucketize gives back the original namespace (issue 11,
# item 2): in one plan and across two runs, to a directory and an archive,
# the readings byte for byte (in bucket order), the metadata (options,
# indexes, uuid) byte for byte; onInvalid's readings come back too; the
# unbucketize takes the bucketize's own keys and checks them against the
# buckets; a step writes only to a new or an empty namespace.
#   REMODEL=build/remodel bash tests/cli/test_roundtrip.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/dumps/sample
KEYS='"timeField": "ts", "metaField": "sensor_id", "granularity": "hours", "maxCount": 200, "stats": {"temperature": ["count", "avg"]}'
BUCK="{\"bucketize\": {\"from\": \"iot.readings\", \"to\": \"iot.buckets\", $KEYS}}"
UNBUCK="{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.readings\", $KEYS, \"keepSource\": false}}"
echo "{\"remodel\": 1, \"steps\": [$BUCK, $UNBUCK]}" >"$T/both.json"
echo "{\"remodel\": 1, \"steps\": [$BUCK]}" >"$T/b.json"
echo "{\"remodel\": 1, \"steps\": [$UNBUCK]}" >"$T/u.json"

# same_readings NAME SRC OUT: OUT's NS documents are SRC's, byte for byte, as
# multisets; its metadata file's bytes are SRC's; the other namespaces are
# the same (remodel diff: only the readings' order and the emptied buckets).
same_readings() {
    local n=$1 src=$2 out=$3 ns=${4:-iot.readings}
    expect_eq "$n: $ns: the same documents, byte for byte" "$(python3 - "$src" "$out" "$ns" <<'EOF'
import os, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests", "transforms"))
import rmlib
def docs(p, ns):
    if os.path.isdir(p):
        return rmlib.read_dir(p)[0].get(ns, [])
    return rmlib.read_archive(p)[0].get(ns, [])
a, b = docs(sys.argv[1], sys.argv[3]), docs(sys.argv[2], sys.argv[3])
print(len(a), len(b), sorted(map(bytes, a)) == sorted(map(bytes, b)))
EOF
)" "$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import rmlib; n = len(rmlib.read_dir(sys.argv[2])[0][sys.argv[3]]); print(n, n, True)' "$ROOT/tests/transforms" "$src" "$ns")"
    local db=${ns%%.*} coll=${ns#*.}
    expect_eq "$n: $ns: the metadata (options, indexes, uuid), byte for byte (SHA-1)" \
        "$(meta_of "$out" "$ns")" "$(sha1sum <"$src/$db/$coll.metadata.json" | cut -d' ' -f1)"
}
# meta_of DUMP NS: "DOCUMENTS SHA1" of NS's metadata, from inspect --json.
meta_of() {
    "$REMODEL" inspect "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
db, coll = sys.argv[1].split(".", 1)
print([n["metadataSha1"] for n in d["namespaces"] if (n["db"], n["collection"]) == (db, coll)][0])' "$2"
}
export ROOT

for out in dir out.archive; do
    run_rm run -q "$T/both.json" --from "$S" --to "$T/one-$out"
    expect_eq "one plan -> $out: exit 0" "$rc:$(cat "$T/err")" "0:"
    same_readings "one plan -> $out" "$S" "$T/one-$out"
    "$REMODEL" diff "$S" "$T/one-$out" >"$T/out" 2>"$T/err"
    expect_eq "one plan -> $out: diff: the rest identical, the readings only reordered, the buckets emptied" \
        "$(awk '$1 != "NAMESPACE" && $2 != "identical" { print $1, $2, $3 }' "$T/out" | tr '\n' '|')" \
        "iot.buckets only in|iot.readings reordered 1600|"
done

for out in dir out.archive; do
    run_rm run -q "$T/b.json" --from "$S" --to "$T/b1-$out"
    expect_eq "two runs, bucketize -> $out: exit 0" "$rc:$(cat "$T/err")" "0:"
    expect_eq "two runs, bucketize -> $out: iot.readings stays, empty, its metadata whole" \
        "$("$REMODEL" inspect "$T/b1-$out" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = [n for n in d["namespaces"] if (n["db"], n["collection"]) == ("iot", "readings")][0]
print(n["documents"], n["metadataSha1"])')" "0 $(sha1sum <"$S/iot/readings.metadata.json" | cut -d' ' -f1)"
    run_rm run -q "$T/u.json" --from "$T/b1-$out" --to "$T/u2-$out"
    expect_eq "two runs, unbucketize <- $out: exit 0" "$rc:$(cat "$T/err")" "0:"
    same_readings "two runs via $out" "$S" "$T/u2-$out"
done

# onInvalid: what bucketize set aside comes back with the rest.
python3 "$ROOT/tests/transforms/mkdump.py" "$T/ts" '{"ts.r": [
  {"_id": 1, "m": "a", "t": {"$date": "2026-01-01T00:00:00Z"}, "v": 1},
  {"_id": 2, "m": "a", "t": "2026-01-01", "v": 2},
  {"_id": 3, "t": {"$date": "2026-01-01T01:00:00Z"}, "v": 3},
  {"_id": 4, "v": 4, "m": "b", "t": {"$date": "2026-01-01T00:30:00Z"}}]}'
printf '{"indexes": [], "uuid": "0123456789abcdef0123456789abcdef", "collectionName": "r"}' >"$T/ts/ts/r.metadata.json"
TK='"timeField": "t", "metaField": "m", "granularity": "hours", "onInvalid": {"to": "ts.bad"}'
echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"ts.r\", \"to\": \"ts.b\", $TK}}, {\"unbucketize\": {\"from\": \"ts.b\", \"to\": \"ts.r\", $TK, \"keepSource\": false}}]}" >"$T/inv.json"
run_rm run -q "$T/inv.json" --from "$T/ts" --to "$T/inv"
expect_eq "with onInvalid: exit 0" "$rc:$(cat "$T/err")" "0:"
same_readings "with onInvalid" "$T/ts" "$T/inv" ts.r
expect_eq "with onInvalid: the set-aside namespace is emptied" "$(wc -c <"$T/inv/ts/bad.bson")" 0

# The bucketize's keys are checked against the buckets, not refused.
"$REMODEL" run -q "$T/b.json" --from "$S" --to "$T/buckets" || fail "bucketize for the checks"
check_keys() {
    local n=$1 keys=$2; shift 2
    echo "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.readings\", $keys}}]}" >"$T/k.json"
    run_rm run -q "$T/k.json" --from "$T/buckets" --to "$T/k-out"
    expect_eq "$n: exit 1, one line, nothing written" "$rc:$(grep -c . "$T/err"):$(test -e "$T/k-out" && echo written)" "1:1:"
    expect_message "$n: names the step, the bucket and the disagreement" "step 1 (unbucketize): iot.buckets: bucket" "$@"
}
check_keys "unbucketize with granularity minutes over hour buckets" \
    '"timeField": "ts", "metaField": "sensor_id", "granularity": "minutes"' \
    "is not the plan's window of 60 s (granularity or spanSeconds)"
check_keys "unbucketize with a smaller maxCount" \
    '"timeField": "ts", "metaField": "sensor_id", "maxCount": 5' "its count is not an int32 of at most maxCount 5"
check_keys "unbucketize with a statistic the buckets lack" \
    '"timeField": "ts", "metaField": "sensor_id", "stats": {"temperature": ["max"]}' \
    'the bucket has no "stats.temperature.max" (the plan'"'"'s stats)'
echo "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.readings\", \"timeField\": \"ts\", \"metaField\": \"sensor_id\", \"spanSeconds\": 3600}}]}" >"$T/k.json"
run_rm run -q "$T/k.json" --from "$T/buckets" --to "$T/k-ok"
expect_eq "unbucketize with spanSeconds 3600 over hour buckets: agrees" "$rc:$(cat "$T/err")" "0:"
expect_eq "unbucketize keeps its buckets by default" \
    "$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import rmlib; print(len(rmlib.read_dir(sys.argv[2])[0]["iot.buckets"]))' "$ROOT/tests/transforms" "$T/k-ok")" 40

# A step writes only to a new or an empty namespace.
echo '{"remodel": 1, "steps": [{"unbucketize": {"from": "iot.buckets", "to": "crm.people", "timeField": "ts", "metaField": "sensor_id"}}]}' >"$T/full.json"
run_rm run -q "$T/full.json" --from "$T/buckets" --to "$T/full-out"
expect_eq "into a namespace that holds documents: refused (exit 2), nothing written" \
    "$rc:$(test -e "$T/full-out" && echo written)" "2:"
expect_message "into a namespace that holds documents: says so" \
    'step 1 (unbucketize): "to": namespace crm.people already exists and holds 98 document(s) (a step writes only to a new or an empty namespace)'
echo '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "crm.a", "style": "parentRef"}}, {"bucketize": {"from": "iot.readings", "to": "crm.a", "timeField": "ts", "metaField": "sensor_id", "granularity": "hours"}}]}' >"$T/twice.json"
run_rm check "$T/twice.json" --against "$S"
expect_eq "a namespace an earlier step made, not emptied: check refuses (exit 2)" "$rc" 2
expect_message "a namespace an earlier step made: says so" \
    'step 2 (bucketize): "to": namespace crm.a already exists (made by an earlier step)'
