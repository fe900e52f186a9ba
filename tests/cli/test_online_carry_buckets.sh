#!/usr/bin/env bash
# rollback --carry-writes through bucketize's inverse (issue 34's
# leftovers), on
# mongo-java-server (change streams) alone (online_kind: the logic is
# remodel's own; test_online_changelog follows both servers' logs;
# REMODEL_TEST_BOTH=1 runs this suite on FerretDB too): iot.readings bucketized into iot.buckets (stats,
# maxCount), finalized, then the application writes the buckets: a
# measurement pushed into a bucket, one changed in place, one popped, a
# whole bucket deleted, a bucket of a new sensor inserted. rollback
# refuses (exit 2, the log's count); --carry-writes carries them back
# through unbucketize: every written reading as expected, every other
# byte for byte (exit 0); rollback again drops the results. A rename then
# a bucketize carried back through both inverses composed (the stage
# collections dropped after). Refused with --carry-writes, naming the
# step, nothing renamed: an unbucketize (its inverse gives back only
# buckets remodel made), and a plan whose second step has no inverse.
# CB_KINDS: the servers (default: online_kind java); CB_DEBUG=1: the
# rollback's messages and what differs, on stderr.
#   REMODEL=build/remodel bash tests/cli/test_online_carry_buckets.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "carry buckets: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/bk.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets", "timeField": "ts",
                 "metaField": "sensor", "spanSeconds": 3600, "maxCount": 12,
                 "stats": {"temp": ["count", "min", "max"]}}}]}
EOF
cat >"$T/plans/ub.json" <<'EOF'
{"remodel": 1, "steps": [
  {"unbucketize": {"from": "iot.buckets", "to": "iot.back", "timeField": "ts",
                   "metaField": "sensor", "keepSource": false}}]}
EOF
cat >"$T/plans/two.json" <<'EOF'
{"remodel": 1, "steps": [
  {"rename": {"in": "iot.readings", "fields": {"temp": "celsius"}}},
  {"set": {"in": "iot.readings", "fields": {"v": 2}}}]}
EOF
cat >"$T/plans/both.json" <<'EOF'
{"remodel": 1, "steps": [
  {"rename": {"in": "iot.readings", "fields": {"temp": "celsius"}}},
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets", "timeField": "ts",
                 "metaField": "sensor", "spanSeconds": 3600}}]}
EOF

pyd() {
    local code=$1; shift
    python3 -c "import sys, datetime, bson, pymongo
from bson.raw_bson import RawBSONDocument
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
T0 = datetime.datetime(2024, 3, 1)
def at(m): return T0 + datetime.timedelta(minutes=m)
$code" "$uri" "$@"
}
exists() { pyd 'print(sys.argv[2] in c.iot.list_collection_names())' "$1"; }

for kind in ${CB_KINDS:-$(online_kind java)}; do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    pyd 'c.iot.readings.insert_many([{"_id": i, "sensor": "s%d" % (i % 4), "ts": at(7 * i), "temp": i / 4}
                                     for i in range(120)])'
    pyd 'raw = pymongo.MongoClient(sys.argv[1], directConnection=True, document_class=RawBSONDocument)
print(repr({bson.decode(d.raw)["_id"]: d.raw.hex() for d in raw.iot.readings.find()}))' >"$T/orig"
    online run bk -q
    online finalize bk --writes-stopped -q
    expect_eq "$kind: bucketize finalized (exit 0)" "$rc:$(cat "$T/err")" "0:"
    # the application's writes to the buckets, after the switch
    pyd 'b = c.iot.buckets
s0 = b.find_one({"sensor": "s0"}, sort=[("start", 1)])
b.update_one({"_id": s0["_id"]}, {"$push": {"measurements": {"_id": 1000, "ts": s0["measurements"][0]["ts"] + datetime.timedelta(seconds=30), "temp": -1.0}}})
s1 = b.find_one({"sensor": "s1"}, sort=[("start", 1)])
b.update_one({"_id": s1["_id"]}, {"$set": {"measurements.0.temp": 99.5}})
s2 = b.find_one({"sensor": "s2"}, sort=[("start", 1)])
b.update_one({"_id": s2["_id"]}, {"$pop": {"measurements": -1}})
s3 = b.find_one({"sensor": "s3"}, sort=[("start", -1)])
b.delete_one({"_id": s3["_id"]})
b.insert_one({"sensor": "s9", "start": at(0), "end": at(60), "count": 1, "metaPositions": [1],
              "measurements": [{"_id": 2000, "ts": at(1), "temp": 5.0}]})
print(s1["measurements"][0]["_id"], s2["measurements"][0]["_id"], sorted(m["_id"] for m in s3["measurements"]))' >"$T/written"
    online rollback bk
    [ -n "${CB_DEBUG:-}" ] && cat "$T/written" "$T/err" >&2
    expect_eq "$kind: rollback refused (exit 2), the log naming the buckets written" \
        "$rc:$(grep -c 'written since the switch, by the change log: iot.buckets: 5 document(s)' "$T/err"):$(exists "readings_remodel_$(pid bk)_backup")" \
        "2:1:True"
    online rollback bk --carry-writes
    expect_eq "$kind: --carry-writes through unbucketize (exit 0)" \
        "$rc:$(grep -o 'carried back into iot.readings: .*' "$T/err")" \
        "0:carried back into iot.readings: 2 inserted, 1 replaced, $(($(sed 's/.*\[//; s/\]//' "$T/written" | tr ',' '\n' | wc -l) + 1)) deleted"
    expect_eq "$kind: ... every written reading as expected, every other byte for byte" \
        "$(pyd 'orig = {k: bytes.fromhex(v) for k, v in eval(open(sys.argv[2]).read()).items()}
w = open(sys.argv[3]).read().split(" ", 2)
changed, pulled, gone = int(w[0]), int(w[1]), eval(w[2])
raw = pymongo.MongoClient(sys.argv[1], directConnection=True, document_class=RawBSONDocument)
now = {bson.decode(d.raw)["_id"]: d.raw for d in raw.iot.readings.find()}
want = {k: bson.decode(v) for k, v in orig.items() if k != pulled and k not in gone}
want[changed]["temp"] = 99.5
want[1000] = {"_id": 1000, "sensor": "s0", "ts": bson.decode(orig[0])["ts"] + datetime.timedelta(seconds=30), "temp": -1.0}
want[2000] = {"_id": 2000, "sensor": "s9", "ts": at(1), "temp": 5.0}
same = all(now[k] == orig[k] for k in want if k in orig and k != changed)
got = {k: bson.decode(v) for k, v in now.items()}
if got != want and len(sys.argv) > 4:
    print(sorted(set(got) ^ set(want), key=str), [(k, got[k], want[k]) for k in got if k in want and got[k] != want[k]], file=sys.stderr)
print(got == want, same)' "$T/orig" "$T/written" ${CB_DEBUG:+debug})" "True True"
    online rollback bk
    expect_eq "$kind: ... rollback again drops the results (exit 0)" \
        "$rc:$(pyd 'print(sorted(c.iot.list_collection_names()))')" "0:['readings']"

    # ---- refused, naming the step ----
    pyd 'c.iot.readings.drop()
c.iot.readings.insert_many([{"_id": i, "sensor": "s%d" % (i % 4), "ts": at(7 * i), "temp": i / 4} for i in range(40)])'
    # A set after a rename of its namespace: the run cannot tell whether a
    # reading had the field before (issue 65: a set's inverse removes it).
    for p in 'two:step 2 (set): its inverse removes "v" from iot.readings, which is exact only where no document had it before the run, and the run could not tell whether any was: an earlier step of the plan writes iot.readings'; do
        online run "${p%%:*}" -q && online finalize "${p%%:*}" --writes-stopped -q
        pyd 'c.iot.readings.insert_one({"_id": "late", "sensor": "s0", "ts": at(1)})'
        online rollback "${p%%:*}" --carry-writes
        expect_eq "$kind: ${p%%:*}: --carry-writes refused (exit 2), naming the step, nothing renamed" \
            "$rc:$(grep -c -F "${p#*:}" "$T/err"):$(exists "readings_remodel_$(pid "${p%%:*}")_backup")" "2:1:True"
        online rollback "${p%%:*}" --discard-writes-after-switch -q &&
            online rollback "${p%%:*}" --discard-writes-after-switch -q
        expect_eq "$kind: ${p%%:*}: ... then discarded (exit 0)" "$rc" 0
    done
    # ---- two steps composed: the rename's inverse after unbucketize's ----
    online run both -q && online finalize both --writes-stopped -q
    [ -n "${CB_DEBUG:-}" ] && cat "$T/err" >&2
    pyd 'b = c.iot.buckets.find_one({"sensor": "s1"}, sort=[("start", 1)])
c.iot.buckets.update_one({"_id": b["_id"]}, {"$set": {"measurements.0.celsius": 42.25}})
print(b["measurements"][0]["_id"])' >"$T/written"
    online rollback both --carry-writes
    expect_eq "$kind: rename then bucketize: --carry-writes through both inverses (exit 0), one reading replaced" \
        "$rc:$(grep -o 'carried back into iot.readings: .*' "$T/err")" \
        "0:carried back into iot.readings: 0 inserted, 1 replaced, 0 deleted"
    expect_eq "$kind: ... the reading's temp as written, its fields as before, no stage collection left" \
        "$(pyd 'd = c.iot.readings.find_one({"_id": int(open(sys.argv[2]).read())})
print(d["temp"], sorted(d), c.iot.readings.count_documents({"celsius": {"$exists": True}}), sorted(c.iot.list_collection_names()))' "$T/written")" \
        "42.25 ['_id', 'sensor', 'temp', 'ts'] 0 ['buckets_remodel_$(pid both)_2', 'readings', 'readings_remodel_$(pid both)_2']"
    online rollback both
    expect_eq "$kind: ... rollback again drops the results (exit 0)" \
        "$rc:$(pyd 'print(sorted(c.iot.list_collection_names()))')" "0:['readings']"

    pyd 'c.iot.readings.drop()
c.iot.buckets.insert_one({"_id": 1, "sensor": "s0", "start": at(0), "end": at(60), "count": 1, "metaPositions": [1],
                          "measurements": [{"_id": 1, "ts": at(1), "temp": 5.0}]})'
    online run ub -q && online finalize ub --writes-stopped -q
    pyd 'c.iot.back.insert_one({"_id": 2, "sensor": "s0", "ts": at(2)})'
    online rollback ub --carry-writes
    expect_eq "$kind: unbucketize: --carry-writes refused (exit 2), naming the step, nothing renamed" \
        "$rc:$(grep -c 'step 1 (unbucketize): its inverse (bucketize) gives back only buckets remodel made' "$T/err"):$(exists "buckets_remodel_$(pid ub)_backup")" \
        "2:1:True"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
