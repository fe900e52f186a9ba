#!/usr/bin/env bash
# bucketize and unbucketize without metaField (issue 64 follow-up): one
# city's temperatures, a single series with no field naming it. A Python
# oracle groups the readings by window itself (floor of the hour; the
# calendar day in Europe/Paris through zoneinfo, across the spring DST
# change), orders each window by time, then _id, then input order, cuts
# it at maxCount and computes the statistics: every bucket, in order, must
# be the oracle's (window, count, measurements byte for byte, stats, an
# empty metaPositions, an _id starting with the window's seconds, no other
# field). The default run, --batch and --memory 1K give the same bytes;
# bucketize -> unbucketize gives the readings back byte for byte, in one
# plan and in a second run (one pass with keepSource, store to store
# without); an unbucketize without metaField refuses a bucket holding
# meta positions, naming its _id; "metaField": [] is refused. Online
# (mongo-java-server): bucketize without metaField is refused, exit 2,
# nothing written; unbucketize without it gives remodel run's readings.
#   REMODEL=build/remodel bash tests/cli/test_bucket_nometa.sh
. "$(dirname "$0")/lib.sh"
export PYTHONPATH=$ROOT/tests/transforms

# ---- the series: a reading about every 10 minutes, 2024-03-26 to 04-04
# (Paris moves to summer time on 03-31), in shuffled input order; time
# ties between _ids in reverse order; a few int32 and string values; one
# reading whose last field is _metaPositions (its measurement gets an
# empty one after it, removed again by unbucketize); a second dump with a
# "city" field first, for buckets that do carry meta positions; a third
# without the _metaPositions reading, for the online part. ----
python3 - "$T/src" "$T/src-city" "$T/src-plain" <<'EOF'
import sys, random, datetime as dt
from bson.son import SON
from bson.int64 import Int64
import rmlib
utc = dt.timezone.utc
rnd = random.Random(64)
start = dt.datetime(2024, 3, 26, tzinfo=utc)
docs = []
for k in range(10 * 144):
    t = start + dt.timedelta(minutes=10 * k, milliseconds=rnd.randrange(0, 540000))
    v = rnd.randrange(-20, 120) / 4 + 0.25 if k % 7 else (k % 50 if k % 2 else "n/a")
    docs.append(SON([("_id", 1000 + k), ("ts", t), ("temp", v)]))
# ties: one time, _ids given in reverse order
tie = dt.datetime(2024, 3, 31, 0, 59, 59, tzinfo=utc)
for i in (9, 8, 7):
    docs.append(SON([("_id", i), ("ts", tie), ("temp", 12.5)]))
docs.append(SON([("_id", 5), ("ts", tie), ("temp", 3.75), ("_metaPositions", [0])]))
docs.append(SON([("_id", Int64(6)), ("temp", 1.5), ("ts", tie)]))
rnd.shuffle(docs)
rmlib.write_dump(sys.argv[1], {"w.readings": docs})
rmlib.write_dump(sys.argv[2], {"w.readings": [SON([("city", "Paris")] + list(d.items())) for d in docs]})
# for the servers: no measurement with two fields _metaPositions (which
# mongo-java-server takes as a broken document)
rmlib.write_dump(sys.argv[3], {"w.readings": [d for d in docs if d["_id"] != 5]})
EOF
N=$(python3 -c 'import sys, rmlib; print(len(rmlib.read_dir(sys.argv[1])[0]["w.readings"]))' "$T/src")

# plan NAME KEYS [UNBUCKETIZE-KEYS]: bucketize alone, and bucketize then
# unbucketize (keepSource false) in one plan.
plan() {
    local k="\"timeField\": \"ts\", $2"
    echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"w.readings\", \"to\": \"w.buckets\", $k}}]}" >"$T/$1.json"
    echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"w.readings\", \"to\": \"w.buckets\", $k}},
      {\"unbucketize\": {\"from\": \"w.buckets\", \"to\": \"w.readings\", $k, \"keepSource\": false}}]}" >"$T/$1-both.json"
}
STATS='"stats": {"temp": ["count", "min", "max", "sum", "avg"]}'
plan hourly "\"granularity\": \"hours\", \"maxCount\": 4, $STATS"
plan daily "\"unit\": \"day\", \"timezone\": \"Europe/Paris\", \"maxCount\": 100, $STATS"

# oracle NAME SPAN|TZ MAXCOUNT: "OK <buckets> <cut windows>", or what differs.
oracle() {
    python3 - "$T/src" "$T/out-$1" "$2" "$3" <<'EOF'
import sys, datetime as dt, struct
from zoneinfo import ZoneInfo
from bson import decode, CodecOptions
from bson.raw_bson import RawBSONDocument
from bson.int64 import Int64
from bson.son import SON
import rmlib
src, out, win, maxcount = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
utc = dt.timezone.utc
raw = CodecOptions(document_class=RawBSONDocument)
def ms(t):
    return (t.replace(tzinfo=utc) - dt.datetime(1970, 1, 1, tzinfo=utc)) // dt.timedelta(milliseconds=1)
def window(t):
    if win.isdigit():
        s = int(win) * 1000
        return ms(t) // s * s, ms(t) // s * s + s
    tz = ZoneInfo(win)
    d = t.replace(tzinfo=utc).astimezone(tz).date()
    a = dt.datetime(d.year, d.month, d.day, tzinfo=tz)
    n = d + dt.timedelta(days=1)
    return ms(a.astimezone(utc)), ms(dt.datetime(n.year, n.month, n.day, tzinfo=tz).astimezone(utc))
groups = {}
for i, r in enumerate(rmlib.read_dir(src)[0]["w.readings"]):
    d = decode(bytes(r))
    groups.setdefault(window(d["ts"]), []).append((ms(d["ts"]), d["_id"], i, bytes(r), d))
want, cut = [], 0
for w in sorted(groups):
    rs = sorted(groups[w], key=lambda x: x[:3])
    cut += len(rs) > maxcount
    for at in range(0, len(rs), maxcount):
        part = rs[at:at + maxcount]
        meas = []
        for _, _, _, b, d in part:
            if list(d)[-1] == "_metaPositions":  # ours after its own
                e = b[4:-1] + b"\x04_metaPositions\x00\x05\x00\x00\x00\x00"
                b = struct.pack("<i", len(e) + 5) + e + b"\x00"
            meas.append(b)
        nums = [d["temp"] for *_, d in part if type(d["temp"]) in (int, float, Int64)]
        st = SON([("count", len(nums))])
        if nums:
            s = sum(nums)
            st["min"], st["max"], st["sum"] = min(nums), max(nums), s
            st["avg"] = s / len(nums)
        else:
            st["min"] = st["max"] = st["sum"] = st["avg"] = None
        want.append((w, len(part), meas, st))
got, bad = rmlib.read_dir(out)[0]["w.buckets"], []
if len(got) != len(want):
    bad.append(f"{len(got)} buckets, want {len(want)}")
for g, (w, n, meas, st) in zip(got, want):
    b = decode(bytes(g), raw)
    keys = list(b.keys())
    if keys != ["_id", "start", "end", "count", "metaPositions", "measurements", "stats"]:
        bad.append(f"fields {keys}")
        continue
    s, e = ms(b["start"]), ms(b["end"])
    if (s, e) != w or b["count"] != n or list(b["metaPositions"]) != []:
        bad.append(f"bucket [{s}, {e}) count {b['count']} positions {list(b['metaPositions'])}: want {w} {n} []")
    if b["_id"].binary[:4] != struct.pack(">I", max(s, 0) // 1000):
        bad.append(f"_id {b['_id']} for start {s}")
    if [m.raw for m in b["measurements"]] != meas:
        bad.append(f"bucket at {s}: measurements differ from the readings")
    gst = decode(b["stats"].raw)["temp"]
    for k in ("count", "min", "max", "sum", "avg"):
        if gst.get(k) != st[k] or type(gst.get(k)) is not type(st[k]):
            bad.append(f"bucket at {s}: {k} {gst.get(k)!r}, want {st[k]!r}")
print(f"OK {len(got)} {cut}" if not bad else "; ".join(bad[:5]))
EOF
}
# 10 days of hours, every one cut (6 readings past maxCount 4; the hour of
# the ties 11, in 3 buckets); 11 Paris days begun (the first starts at 01:00 UTC on
# the 25th), the full ones cut past 100, the 23-hour 31 March included.
declare -A WANT=([hourly]="OK 481 240" [daily]="OK 21 10")
declare -A WIN=([hourly]="3600 4" [daily]="Europe/Paris 100")
for name in hourly daily; do
    run_rm run -q "$T/$name.json" --from "$T/src" --to "$T/out-$name"
    expect_eq "$name: bucketize without metaField exits 0" "$rc:$(cat "$T/err")" "0:"
    expect_eq "$name: every bucket is the oracle's: window, count, maxCount cut, measurements byte for byte, stats, metaPositions []" \
        "$(oracle "$name" ${WIN[$name]})" "${WANT[$name]}"
    for mode in --batch "--memory 1K"; do
        run_rm run -q $mode "$T/$name.json" --from "$T/src" --to "$T/out-$name-${mode%% *}"
        check "$name: $mode gives the same bytes (buckets, emptied readings, metadata)" \
            diff -r "$T/out-$name" "$T/out-$name-${mode%% *}"
    done
done
expect_eq "hourly: the buckets' index is {start: 1} alone" \
    "$(python3 -c 'import json, sys; print([i["key"] for i in json.load(open(sys.argv[1]))["indexes"]])' "$T/out-hourly/w/buckets.metadata.json")" \
    "[{'_id': {'\$numberInt': '1'}}, {'start': {'\$numberInt': '1'}}]"

# ---- the round trip: the readings back byte for byte, in bucket order ----
# in_order OUT: the readings of OUT against the source's, ordered as the
# buckets hold them (window, time, _id, input order).
in_order() {
    python3 - "$T/src" "$1" "$2" <<'EOF'
import sys, datetime as dt, rmlib
from bson import decode
a = rmlib.read_dir(sys.argv[1])[0]["w.readings"]
b = rmlib.read_dir(sys.argv[2])[0]
back = list(map(bytes, b.get("w.readings", [])))
span = int(sys.argv[3])
def key(x):
    i, r = x
    t = decode(bytes(r))["ts"]
    t = (t.replace(tzinfo=dt.timezone.utc) - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)
    return (t // span, t, decode(bytes(r))["_id"], i)
want = [bytes(r) for _, r in sorted(enumerate(a), key=key)]
print(len(a), len(back), back == want, len(b.get("w.buckets", [])))
EOF
}
run_rm run -q "$T/hourly-both.json" --from "$T/src" --to "$T/both-hourly"
expect_eq "hourly: bucketize -> unbucketize in one plan: every reading back byte for byte, in bucket order; the buckets emptied" \
    "$rc:$(in_order "$T/both-hourly" 3600000)" "0:$N $N True 0"
run_rm run -q "$T/daily-both.json" --from "$T/src" --to "$T/both-daily"
expect_eq "daily: bucketize -> unbucketize in one plan: every reading back byte for byte" \
    "$rc:$(python3 -c 'import sys, rmlib
a = rmlib.read_dir(sys.argv[1])[0]["w.readings"]; b = rmlib.read_dir(sys.argv[2])[0]["w.readings"]
print(len(b), sorted(map(bytes, a)) == sorted(map(bytes, b)))' "$T/src" "$T/both-daily")" "0:$N True"
# A second run on the first's output: with keepSource (one pass, the
# buckets stay), without (store to store), and --batch: the same readings.
UN='"from": "w.buckets", "to": "w.readings", "timeField": "ts", "granularity": "hours", "maxCount": 4'
echo "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {$UN}}]}" >"$T/un-keep.json"
echo "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {$UN, \"keepSource\": false}}]}" >"$T/un-drop.json"
run_rm run -q "$T/un-keep.json" --from "$T/out-hourly" --to "$T/back-keep"
expect_eq "hourly: unbucketize without metaField in a second run, one pass: the readings byte for byte, the buckets kept" \
    "$rc:$(in_order "$T/back-keep" 3600000)" "0:$N $N True 481"
run_rm run -q --batch "$T/un-keep.json" --from "$T/out-hourly" --to "$T/back-keep-batch"
check "hourly: unbucketize one pass and --batch: the same bytes" diff -r "$T/back-keep" "$T/back-keep-batch"
run_rm run -q "$T/un-drop.json" --from "$T/out-hourly" --to "$T/back-drop"
expect_eq "hourly: unbucketize without keepSource (store to store): the same readings, the buckets emptied" \
    "$rc:$(in_order "$T/back-drop" 3600000):$(cmp -s "$T/back-drop/w/readings.bson" "$T/back-keep/w/readings.bson" && echo same)" \
    "0:$N $N True 0:same"

# ---- a bucket with meta positions: refused, naming it ----
plan city '"metaField": "city", "granularity": "hours"'
run_rm run -q "$T/city.json" --from "$T/src-city" --to "$T/out-city"
first=$(python3 -c 'import sys, rmlib
from bson import decode
print(decode(bytes(rmlib.read_dir(sys.argv[1])[0]["w.buckets"][0]))["_id"])' "$T/out-city")
echo "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {\"from\": \"w.buckets\", \"to\": \"w.readings\", \"timeField\": \"ts\"}}]}" >"$T/un-none.json"
run_rm run -q "$T/un-none.json" --from "$T/out-city" --to "$T/out-none"
expect_eq "unbucketize without metaField of buckets by city: refused (exit 1, one line, nothing written)" \
    "$rc:$(grep -c . "$T/err"):$(test -e "$T/out-none" && echo written)" "1:1:"
expect_message "unbucketize without metaField of buckets by city: the message names the first bucket's _id and why" \
    "step 1 (unbucketize): w.buckets: bucket" "$first" "it has meta positions (\"metaPositions\" is not []), but the plan gives no metaField to put them back"

# ---- the plan ----
echo '{"remodel": 1, "steps": [{"bucketize": {"from": "w.readings", "to": "w.buckets", "timeField": "ts", "metaField": [], "granularity": "hours"}}]}' >"$T/empty.json"
run_rm check "$T/empty.json"
expect_eq "\"metaField\": [] refused (exit 2), saying to leave it out" "$rc:$(cat "$T/err")" \
    "2:remodel: error: $T/empty.json: plan: step 1 (bucketize): \"metaField\": names no field (leave it out for readings of one series)"
run_rm check "$T/un-none.json"
expect_eq "unbucketize without metaField: a valid plan" "$rc:$(cat "$T/out")" "0:$T/un-none.json: 1 step(s), valid"

# ---- online: bucketize without metaField refused before any write (one
# series is the whole collection, read again for each change); unbucketize
# without it runs, the readings remodel run gives ----
use_peers "online: the peer tools" || exit 0
if [ ! -x "$(dirname "$REMODEL")/remodel-online" ]; then
    echo "SKIP online: no remodel-online beside $REMODEL (libmongoc missing when it was built)"
    exit 0
fi
trap '[ "$BASHPID" != "$$" ] || { for k in ferretdb java; do "$SERVER" stop "$T/srv-$k" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
run_rm run -q "$T/hourly.json" --from "$T/src-plain" --to "$T/out-plain"
run_rm run -q "$T/un-keep.json" --from "$T/out-plain" --to "$T/back-plain.archive"
P=$(plan_id "$T/un-keep.json")
for kind in $(online_kind java); do
    online_start "$kind" "$T/srv-$kind" || continue
    "$MONGORESTORE" --uri "$uri" --dir "$T/src-plain" --noIndexRestore --quiet 2>"$T/err" ||
        { fail "$kind: restore the series" "$(cat "$T/err")"; continue; }
    run_rm online run -q "$T/hourly.json" --uri "$uri"
    expect_eq "$kind: online bucketize without metaField: refused (exit 2, one line), saying why" \
        "$rc:$(grep -c . "$T/err"):$(grep -c 'step 1 (bucketize): bucketize without metaField runs offline only (the online mode reads and recomputes the readings series by series: here one series, the whole collection, read again for each change)' "$T/err")" "2:1:1"
    expect_eq "$kind: nothing written: the readings are the only collection, as restored" \
        "$(py 'print([(d, n, c[d][n].count_documents({})) for d in sorted(c.list_database_names()) if d not in ("admin", "config", "local") for n in sorted(c[d].list_collection_names())])')" \
        "[('w', 'readings', $((N - 1)))]"
    # the offline run's output in place of the readings: its buckets, an
    # emptied w.readings
    py 'c.w.readings.drop()'
    "$MONGORESTORE" --uri "$uri" --dir "$T/out-plain" --noIndexRestore --quiet 2>"$T/err" ||
        { fail "$kind: restore the buckets" "$(tail -5 "$T/err")"; continue; }
    run_rm online run -q "$T/un-keep.json" --uri "$uri"
    expect_eq "$kind: online unbucketize without metaField: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: online unbucketize without metaField: remodel run's readings, byte for byte" \
        "$T/back-plain.archive" w.readings=readings_remodel_${P}_1
done
exit 0
