#!/usr/bin/env bash
# bucketize's calendar windows (issue 64, item 2): unit, binSize, timezone
# and startOfWeek as $dateTrunc takes them. A generated series (two
# sensors, a reading about every 6 hours over 2023-2025, times spread over
# every hour, plus readings on both sides of month boundaries in New York)
# is bucketized monthly in America/New_York, yearly and by 2 quarters in
# UTC, weekly from Monday in +05:30; each bucket's series, start, end and
# count must be what an independent oracle gives (Python's zoneinfo
# computing the truncation: the local month's, year's, ... first instant),
# every measurement in its bucket's window; bucketize -> unbucketize gives
# the readings back byte for byte; unbucketize refuses buckets that are
# not bins of its unit; check refuses bad units and zones naming the plan
# file and the step; online run on FerretDB and mongo-java-server makes
# the monthly buckets remodel run makes, byte for byte, verify agrees, and
# sync following the change log (readings added on both sides of a month
# start, moved across one, deleted, a new series) leaves remodel run's
# buckets of the readings then.
#
# The server side: remodel compile leaves bucketize client-side (a
# bucket's _id is a hash no expression computes), so no compiled pipeline
# exists to run; mongo-java-server 1.46 has no $dateTrunc (its expression
# table has $dateToString only). The windows are instead judged by mingo
# (an independent implementation of the aggregation language): a $group by
# {$dateTrunc: {date, unit, binSize}} with the plan's own arguments must
# give the buckets' (series, start, count). Only for UTC: mingo 7.2.7's
# $dateTrunc misapplies a timezone (2024-03-01T03:00Z truncated to the day
# in "-05:00" gives 2024-03-01T05:00Z, after the date itself), so the
# zoned windows are judged by the zoneinfo oracle alone.
#   REMODEL=build/remodel bash tests/cli/test_bucket_calendar.sh
. "$(dirname "$0")/lib.sh"
export PYTHONPATH=$ROOT/tests/transforms

# ---- the series ----
python3 - "$T/src" <<'EOF'
import sys, datetime as dt
from bson.son import SON
import rmlib
utc = dt.timezone.utc
start = dt.datetime(2023, 1, 1, tzinfo=utc)
docs, i = [], 0
for k in range(3 * 365 * 4 + 4):
    for s in ("a", "b"):
        # every 6 hours, moved by up to 6 hours so that times cover the day
        jitter = dt.timedelta(milliseconds=(k * 7919 + (s == "b") * 104729) * 977 % 21600000)
        i += 1
        docs.append(SON([("_id", i), ("sensor", s), ("ts", start + k * dt.timedelta(hours=6) + jitter),
                         ("value", float(k % 97) + (0.5 if s == "b" else 0.0))]))
# both sides of New York's month starts, in EST and in EDT, and of a year's
for edge in ("2024-03-01T05:00:00", "2024-04-01T04:00:00", "2024-11-01T04:00:00",
             "2024-12-01T05:00:00", "2025-01-01T05:00:00", "2025-01-01T00:00:00"):
    t = dt.datetime.fromisoformat(edge).replace(tzinfo=utc)
    for d in (t - dt.timedelta(milliseconds=1), t):
        i += 1
        # meta field placed last: its reading keeps its own positions
        docs.append(SON([("_id", i), ("ts", d), ("value", -1.0), ("sensor", "a")]))
rmlib.write_dump(sys.argv[1], {"iot.readings": docs})

EOF
N=$(python3 -c 'import sys, rmlib; print(len(rmlib.read_dir(sys.argv[1])[0]["iot.readings"]))' "$T/src")

# plan NAME KEYS: a bucketize plan, and one that unbucketizes after it.
plan() {
    local k="\"timeField\": \"ts\", \"metaField\": \"sensor\", $2"
    echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"iot.readings\", \"to\": \"iot.buckets\", $k}}]}" >"$T/$1.json"
    echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"iot.readings\", \"to\": \"iot.buckets\", $k}},
      {\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.readings\", $k, \"keepSource\": false}}]}" >"$T/$1-both.json"
}
plan monthly '"unit": "month", "timezone": "America/New_York", "stats": {"value": ["count", "min"]}'
plan yearly '"unit": "year"'
plan halves '"unit": "quarter", "binSize": 2'
plan weeks '"unit": "week", "startOfWeek": "Mon", "timezone": "+05:30"'

# oracle NAME UNIT BIN TZ SOW: each bucket's (series, start, end, count) is
# the zoneinfo truncation's, the buckets cover every reading once, each
# measurement is in its window: "OK <buckets>" or what differs.
oracle() {
    python3 - "$T/src" "$T/out-$1" "$2" "$3" "$4" "$5" <<'EOF'
import sys, collections, datetime as dt
from zoneinfo import ZoneInfo
from bson import decode
import rmlib
src, out, unit, binsize, tzname, sow = sys.argv[1:7]
binsize = int(binsize)
utc = dt.timezone.utc
if tzname == "UTC":
    tz = utc
elif tzname[0] in "+-":
    sign = -1 if tzname[0] == "-" else 1
    tz = dt.timezone(sign * dt.timedelta(hours=int(tzname[1:3]), minutes=int(tzname[4:6])))
else:
    tz = ZoneInfo(tzname)
days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
def local_start(y, m, d):
    return dt.datetime(y, m, d, tzinfo=tz).astimezone(utc)
def shift_months(y, m, n):
    k = y * 12 + m - 1 + n
    return k // 12, k % 12 + 1
def window(t):
    """The manual's rule: bins of binsize units counted from 2000-01-01 local
    (weeks from the first startOfWeek day on or after it)."""
    lt = t.astimezone(tz)
    if unit in ("year", "quarter", "month"):
        per = {"year": 12, "quarter": 3, "month": 1}[unit]
        n = ((lt.year - 2000) * 12 + lt.month - 1) // per
        n -= n % binsize
        y, m = shift_months(2000, 1, n * per)
        y2, m2 = shift_months(2000, 1, (n + binsize) * per)
        return local_start(y, m, 1), local_start(y2, m2, 1)
    if unit == "week":
        ref = dt.date(2000, 1, 1)
        ref += dt.timedelta(days=(days.index(sow) - ref.weekday()) % 7)
        n = (lt.date() - ref).days // 7
        n -= n % binsize
        a, b = ref + dt.timedelta(weeks=n), ref + dt.timedelta(weeks=n + binsize)
        return local_start(a.year, a.month, a.day), local_start(b.year, b.month, b.day)
    raise SystemExit("unit " + unit)
want = collections.Counter()
for d in rmlib.read_dir(src)[0]["iot.readings"]:
    d = decode(bytes(d))
    want[(d["sensor"],) + window(d["ts"].replace(tzinfo=utc))] += 1
got, bad = collections.Counter(), []
for b in rmlib.read_dir(out)[0]["iot.buckets"]:
    b = decode(bytes(b))
    s, e = b["start"].replace(tzinfo=utc), b["end"].replace(tzinfo=utc)
    got[(b["sensor"], s, e)] += b["count"]
    if b["count"] != len(b["measurements"]):
        bad.append(f"count {b['count']} != {len(b['measurements'])}")
    for m in b["measurements"]:
        if not s <= m["ts"].replace(tzinfo=utc) < e:
            bad.append(f"{m['_id']} at {m['ts']} outside [{s}, {e})")
for k in set(want) | set(got):
    if want[k] != got[k]:
        bad.append(f"{k[0]} [{k[1]}, {k[2]}): {got[k]} readings, want {want[k]}")
print("OK %d" % len(got) if not bad else "; ".join(bad[:5]))
EOF
}
# The buckets of the two series: 37 months each (the series starts at
# 2023-01-01 00:00 UTC, still December 2022 in New York), 3 years, 6
# half-years.
declare -A WANT=([monthly]="OK 74" [yearly]="OK 6" [halves]="OK 12")
for p in "monthly|month|1|America/New_York|sun" "yearly|year|1|UTC|sun" "halves|quarter|2|UTC|sun" \
    "weeks|week|1|+05:30|mon"; do
    IFS='|' read -r name unit bin tz sow <<<"$p"
    run_rm run -q "$T/$name.json" --from "$T/src" --to "$T/out-$name"
    expect_eq "$name: bucketize exits 0" "$rc:$(cat "$T/err")" "0:"
    got=$(oracle "$name" "$unit" "$bin" "$tz" "$sow")
    case $name in
    weeks) case $got in OK*) pass "$name: every bucket is zoneinfo's week from Monday in +05:30 ($got buckets)" ;;
           *) fail "$name: buckets agree with the zoneinfo oracle" "$got" ;; esac ;;
    *) expect_eq "$name: each bucket's series, start, end and count are zoneinfo's $unit (binSize $bin, $tz)" \
        "$got" "${WANT[$name]}" ;;
    esac
done

# The monthly buckets are not 30-day spans: March 2024 in New York starts
# in EST and ends in EDT (one hour short of 31 days), February 2024 has 29.
expect_eq "monthly: February and March 2024 in New York, by their start and end" \
    "$(python3 - "$T/out-monthly" <<'EOF'
import sys
from bson import decode
import rmlib
for b in rmlib.read_dir(sys.argv[1])[0]["iot.buckets"]:
    b = decode(bytes(b))
    if b["sensor"] == "a" and b["start"].year == 2024 and b["start"].month in (2, 3):
        print(b["start"].isoformat(), b["end"].isoformat(), (b["end"] - b["start"]).total_seconds() / 3600)
EOF
)" "2024-02-01T05:00:00 2024-03-01T05:00:00 696.0
2024-03-01T05:00:00 2024-04-01T04:00:00 743.0"

# ---- the round trip: the readings back, byte for byte ----
same_readings() {
    python3 - "$T/src" "$1" <<'EOF'
import sys, rmlib
a = rmlib.read_dir(sys.argv[1])[0]["iot.readings"]
b = rmlib.read_dir(sys.argv[2])[0]
print(len(a), len(b.get("iot.readings", [])), sorted(map(bytes, a)) == sorted(map(bytes, b.get("iot.readings", []))),
      len(b.get("iot.buckets", [])))
EOF
}
for name in monthly yearly halves weeks; do
    run_rm run -q "$T/$name-both.json" --from "$T/src" --to "$T/both-$name"
    expect_eq "$name: bucketize -> unbucketize in one plan: the readings byte for byte, the buckets emptied" \
        "$rc:$(same_readings "$T/both-$name")" "0:$N $N True 0"
done
# across two runs: the second unbucketizes the first's output
echo '{"remodel": 1, "steps": [{"unbucketize": {"from": "iot.buckets", "to": "iot.readings", "timeField": "ts", "metaField": "sensor", "unit": "month", "timezone": "America/New_York", "keepSource": false}}]}' >"$T/un-monthly.json"
run_rm run -q "$T/un-monthly.json" --from "$T/out-monthly" --to "$T/back-monthly"
expect_eq "monthly: unbucketize in a second run: the readings byte for byte" \
    "$rc:$(same_readings "$T/back-monthly")" "0:$N $N True 0"

# ---- unbucketize checks each bucket against its unit ----
for k in '"unit": "month"' '"unit": "month", "timezone": "America/Chicago"' '"unit": "month", "binSize": 2, "timezone": "America/New_York"' '"granularity": "days"'; do
    echo "{\"remodel\": 1, \"steps\": [{\"unbucketize\": {\"from\": \"iot.buckets\", \"to\": \"iot.readings\", \"timeField\": \"ts\", \"metaField\": \"sensor\", $k}}]}" >"$T/wrong.json"
    run_rm run -q "$T/wrong.json" --from "$T/out-monthly" --to "$T/wrong-out"
    case $rc:$(grep -c . "$T/err"):$(test -e "$T/wrong-out" && echo written):$(cat "$T/err") in
    "1:1::remodel: error: $T/wrong.json: step 1 (unbucketize): iot.buckets: bucket "*"is not a bin of the plan's unit"*|\
    "1:1::remodel: error: $T/wrong.json: step 1 (unbucketize): iot.buckets: bucket "*"is not the plan's window"*)
        pass "unbucketize {$k} of New York's monthly buckets: refused (exit 1), naming the bucket and its window" ;;
    *) fail "unbucketize {$k} of New York's monthly buckets: refused (exit 1), naming the bucket and its window" "$rc $(cat "$T/err")" ;;
    esac
done

# ---- check: bad keys named with the file and the step ----
bad() {
    echo "{\"remodel\": 1, \"steps\": [{\"bucketize\": {\"from\": \"iot.readings\", \"to\": \"iot.buckets\", \"timeField\": \"ts\", \"metaField\": \"sensor\", $2}}]}" >"$T/bad.json"
    run_rm check "$T/bad.json"
    expect_eq "check refuses $1" "$rc:$(cat "$T/err")" "2:remodel: error: $T/bad.json: plan: step 1 (bucketize): $3"
}
bad 'an unknown unit' '"unit": "months"' '"unit": unknown unit "months" (year, quarter, month, week, day, hour, minute, second, millisecond): did you mean "month"?'
bad 'an unknown zone' '"unit": "month", "timezone": "America/Gotham"' '"timezone": unrecognized time zone "America/Gotham" (an Olson name such as "America/New_York", or an offset such as "+05:30")'
bad 'granularity "months", pointing to unit' '"granularity": "months"' '"granularity": must be "seconds", "minutes", "hours" or "days", not "months" (for calendar windows, months or years in a time zone, give "unit" as $dateTrunc takes it: "unit": "month")'
bad 'startOfWeek with the unit month' '"unit": "month", "startOfWeek": "monday"' '"startOfWeek": applies to the unit "week" only, not "month"'
bad 'a bad startOfWeek' '"unit": "week", "startOfWeek": "someday"' '"startOfWeek": "someday" is not a day of the week ("monday" or "mon", ..., in any case)'
bad 'timezone without unit' '"granularity": "days", "timezone": "UTC"' '"timezone": is one of $dateTrunc'"'"'s keys: give "unit" with it'
bad 'unit with spanSeconds' '"unit": "year", "spanSeconds": 31536000' '"unit": give one of "granularity", "spanSeconds" and "unit"'
bad 'binSize 0' '"unit": "year", "binSize": 0' '"binSize": must be at least 1'
bad 'binSize past the server'"'"'s bound' '"unit": "year", "binSize": 100000000001' '"binSize": is too large for the unit "year" (at most 100000000000)'

# ---- compile: bucketize stays client-side, named with its reason ----
run_rm compile "$T/monthly.json"
expect_eq "compile: exit 0, bucketize named client-side with the reason" \
    "$rc:$(grep -c "^remodel: compile: step 1 (bucketize) runs client-side: a bucket's _id is a deterministic ObjectId" "$T/err")" "0:1"

# ---- online: the step's windows are the engine's, run series by series ----
use_peers "online: the peer tools" || exit 0
if [ ! -x "$(dirname "$REMODEL")/remodel-online" ]; then
    echo "SKIP online: no remodel-online beside $REMODEL (libmongoc missing when it was built)"
else
trap '[ "$BASHPID" != "$$" ] || { for k in ferretdb java; do "$SERVER" stop "$T/srv-$k" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
"$REMODEL" run -q "$T/monthly.json" --from "$T/src" --to "$T/monthly.archive"
P=$(plan_id "$T/monthly.json")
sed 's/"stats"/"keepSource": true, "stats"/' "$T/monthly.json" >"$T/follow.json"
F=$(plan_id "$T/follow.json")
for kind in $(online_kinds); do
    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    "$MONGORESTORE" --uri "$uri" --dir "$T/src" --noIndexRestore --quiet 2>"$T/err" ||
        { fail "$kind: restore the series" "$(cat "$T/err")"; continue; }
    run_rm online run -q "$T/monthly.json" --uri "$uri" --batch-size 300
    expect_eq "$kind: online run of the monthly plan: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: the monthly buckets in New York, side by side: remodel run's, byte for byte" \
        "$T/monthly.archive" iot.buckets=buckets_remodel_${P}_1 iot.readings=readings_remodel_${P}_1
    run_rm online verify "$T/monthly.json" --uri "$uri"
    expect_eq "$kind: online verify: every bucket as the readings make it" \
        "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
    # Following the change log (keepSource, so the readings stay to be
    # written to): readings put on both sides of New York's month starts,
    # one moved across a month start, one deleted, a new series; sync
    # recomputes those series' buckets, and they are remodel run's on a
    # dump taken then.
    run_rm online run -q "$T/follow.json" --uri "$uri" --batch-size 300
    expect_eq "$kind: online run of the followed monthly plan: exit 0" "$rc:$(cat "$T/err")" "0:"
    python3 -c 'import sys, datetime as dt, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True).iot.readings
u = dt.timezone.utc
edge = dt.datetime(2025, 3, 1, 5, tzinfo=u)
c.insert_many([{"_id": 90001, "sensor": "a", "ts": edge - dt.timedelta(milliseconds=1), "value": 7.0},
               {"_id": 90002, "sensor": "a", "ts": edge, "value": 8.0},
               {"_id": 90003, "sensor": "c", "ts": dt.datetime(2024, 11, 1, 3, 59, tzinfo=u), "value": 9.0}])
c.update_one({"_id": 11}, {"$set": {"ts": dt.datetime(2024, 4, 1, 4, tzinfo=u)}})
c.delete_one({"_id": 12})' "$uri"
    run_rm online sync "$T/follow.json" --uri "$uri"
    expect_eq "$kind: sync follows the log (exit 0, nothing rescanned)" \
        "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
    rm -f "$T/now.archive" "$T/follow.archive"
    "$MONGODUMP" --uri "$uri" --db iot --collection readings --archive="$T/now.archive" --quiet &&
        "$REMODEL" run -q "$T/follow.json" --from "$T/now.archive" --to "$T/follow.archive" ||
        fail "$kind: the offline reference after the writes"
    online_same "$kind: after sync, the monthly buckets are remodel run's on the readings then" \
        "$T/follow.archive" iot.buckets=buckets_remodel_${F}_1
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
fi

# ---- mingo: $dateTrunc with the plan's arguments, grouped ----
. "$ROOT/tests/peers/env.sh"
if [ -z "${MINGO_DIR:-}" ] || ! command -v node >/dev/null; then
    echo "SKIP mingo: not installed (tests/peers/install.sh)"
    exit 0
fi
for p in yearly:year:1 halves:quarter:2; do
    IFS=: read -r name unit bin <<<"$p"
    got=$(python3 - "$T/src" "$T/out-$name" "$unit" "$bin" "$MINGO_DIR" <<'EOF'
import sys, json, subprocess
from bson import decode, json_util
import rmlib
src, out, unit, binsize, mingo = sys.argv[1:6]
readings = [decode(bytes(d)) for d in rmlib.read_dir(src)[0]["iot.readings"]]
pipeline = [{"$group": {"_id": {"s": "$sensor", "start": {"$dateTrunc": {"date": "$ts", "unit": unit, "binSize": int(binsize)}}},
                        "count": {"$sum": 1}}}]
js = """
const mingo = require("mingo"); const { EJSON } = require("bson");
const inp = EJSON.parse(require("fs").readFileSync(0, "utf8"), { relaxed: true });
const r = mingo.aggregate(inp.docs, inp.pipeline);
process.stdout.write(JSON.stringify(r.map((g) => [g._id.s, g._id.start.getTime(), g.count])));
"""
text = json_util.dumps({"docs": readings, "pipeline": pipeline})
r = subprocess.run(["node", "-e", js], input=text, capture_output=True, text=True,
                   env={"NODE_PATH": mingo + "/node_modules", "PATH": "/usr/bin:/bin"})
if r.returncode:
    print("mingo failed: " + r.stderr[:300]); sys.exit()
m = sorted(tuple(x) for x in json.loads(r.stdout))
# a window of more than maxCount readings is cut into several buckets
counts = {}
for d in rmlib.read_dir(out)[0]["iot.buckets"]:
    d = decode(bytes(d))
    k = (d["sensor"], int(d["start"].replace(tzinfo=__import__("datetime").timezone.utc).timestamp() * 1000))
    counts[k] = counts.get(k, 0) + d["count"]
b = sorted(k + (c,) for k, c in counts.items())
print("same %d" % len(m) if m == b else "differ: mingo %s remodel %s" % (m[:4], b[:4]))
EOF
)
    expect_eq "mingo: \$group by {\$dateTrunc: {unit: $unit, binSize: $bin}} gives the buckets' series, start and count" \
        "$got" "same ${WANT[$name]#OK }"
done
