#!/usr/bin/env bash
# Following the change log for bucketize and unbucketize (issue 23; docs/
# online.md, "Following the log"): on mongo-java-server (change streams)
# alone, started with its change log (online_kind: the logic is remodel's
# own; test_online_changelog follows both servers' logs;
# REMODEL_TEST_BOTH=1 runs this suite on FerretDB with its oplog too):
#   - bucketize (stats, maxCount, onInvalid): readings inserted into a
#     series and into a new one, moved to another series, moved to another
#     window, deleted, replaced, made invalid and valid again; sync
#     recomputes the affected series only (its "change log:" line: far
#     fewer documents read than the readings), nothing rescanned in full,
#     and the buckets and the readings set aside are then remodel run's on
#     a dump taken then, byte for byte; a second sync writes nothing;
#   - unbucketize (onInvalid): buckets given a measurement, losing one,
#     with one changed, one deleted, one new, a measurement moved between
#     buckets, a reading set aside added and removed; the same checks;
#   - bucketize then unbucketize of its buckets in one plan: step 2
#     follows step 1's rewrites;
#   - a kill matrix: sync killed (kill -9) at each of its first result
#     rewrites, then sync again: every result remodel run's; and killed
#     between a rewrite's deletes and inserts (the bucket that held a
#     deleted reading gone: its series comes from the journal);
#   - finalize --writes-stopped after writes: the live collections are
#     remodel run's;
#   - an extract with childRefs of a followed bucketize's buckets (each
#     bucket's measurements, listed by it): both steps followed, the
#     results remodel run's.
#   REMODEL=build/remodel bash tests/cli/test_online_changelog_buckets.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "changelog buckets: external deployments are not started here (skipped)"; exit 0; }
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap '[ "$BASHPID" != "$$" ] || { kill $(jobs -p) 2>/dev/null; for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/bk.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets", "timeField": "ts",
                 "metaField": "sensor", "spanSeconds": 3600, "maxCount": 12,
                 "stats": {"temp": ["count", "min", "max", "avg"]},
                 "keepSource": true, "onInvalid": {"to": "iot.bad"}}}]}
EOF
cat >"$T/plans/ub.json" <<'EOF'
{"remodel": 1, "steps": [
  {"unbucketize": {"from": "ub.buckets", "to": "ub.readings", "timeField": "ts",
                   "metaField": "sensor", "spanSeconds": 3600, "onInvalid": {"to": "ub.bad"}}}]}
EOF
# Step 2 reads both of step 1's targets: the buckets, and the readings
# set aside (its second pass).
cat >"$T/plans/chain.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "ch.readings", "to": "ch.buckets", "timeField": "ts",
                 "metaField": "sensor", "spanSeconds": 3600, "keepSource": true,
                 "onInvalid": {"to": "ch.bad"}}},
  {"unbucketize": {"from": "ch.buckets", "to": "ch.back", "timeField": "ts",
                   "metaField": "sensor", "spanSeconds": 3600, "onInvalid": {"to": "ch.bad"}}}]}
EOF
# A step after a followed bucketize that reads its buckets: the
# measurements extracted with childRefs (listed by their bucket).
cat >"$T/plans/mixed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.mbuckets", "timeField": "ts",
                 "metaField": "sensor", "spanSeconds": 3600, "keepSource": true,
                 "onInvalid": {"to": "iot.mbad"}}},
  {"extract": {"from": "iot.mbuckets", "path": "measurements", "to": "iot.mmeas",
               "style": "childRefs"}}]}
EOF
# The bucketize plan offline, for the unbucketize's sources.
cat >"$T/plans/gen.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "gen.readings", "to": "gen.buckets", "timeField": "ts",
                 "metaField": "sensor", "spanSeconds": 3600, "maxCount": 12,
                 "keepSource": true, "onInvalid": {"to": "gen.bad"}}}]}
EOF

# py: lib.sh's, with datetime and at(minutes) for the readings' times.
py() {
    local code=$1; shift
    python3 -c "import sys, random, datetime, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
T0 = datetime.datetime(2024, 3, 1)
def at(m): return T0 + datetime.timedelta(minutes=m)
$code" "$uri" "$@"
}
rescans() { grep -c 'rescanned in full' "$T/err"; }

# make_readings DB: 1200 readings of 60 sensors over 10 hours (a few
# without a sensor, one without a time: set aside), in DB.readings.
make_readings() {
    py '
random.seed(3)
r = c[sys.argv[2]].readings
docs = []
for i in range(1200):
    d = {"_id": i, "ts": at(random.randrange(600)), "temp": random.randrange(100) / 4}
    if i % 97:
        d["sensor"] = "s%02d" % (i % 60)
    d["loc"] = {"site": "site%d" % (i % 7)}
    docs.append(d)
del docs[500]["ts"]
r.insert_many(docs)
r.create_index("sensor")' "$1"
}

# bk_writes DB SEED: each kind of change to readings.
bk_writes() {
    py '
db, n = c[sys.argv[2]], int(sys.argv[3])
random.seed(n)
r = db.readings
ids = sorted(d["_id"] for d in r.find({"ts": {"$exists": True}}, {"_id": 1}))
a, b, d, e, f, g = random.sample(ids, 6)
r.insert_one({"_id": 100000 + n, "sensor": "s%02d" % (n % 60), "ts": at(n % 600), "temp": 1.5})  # existing series
r.insert_one({"_id": 200000 + n, "sensor": "new%d" % n, "ts": at(5), "temp": 2.5})              # new series
r.update_one({"_id": a}, {"$set": {"sensor": "s%02d" % ((n + 7) % 60)}})                          # moved series
r.update_one({"_id": b}, {"$set": {"ts": r.find_one({"_id": b})["ts"] + datetime.timedelta(hours=3)}})  # window
r.delete_one({"_id": d})                                                                        # deleted
doc = r.find_one({"_id": e}); doc["temp"] = 99.0; r.replace_one({"_id": e}, doc)                # replaced
r.update_one({"_id": f}, {"$unset": {"ts": ""}})                                                # made invalid
r.update_one({"_id": 300000 + n - 1}, {"$set": {"ts": at(7)}})                                  # valid again
r.insert_one({"_id": 300000 + n, "sensor": "s%02d" % (n % 60), "temp": 0.5})                    # invalid, to be fixed next round
' "$1" "$2"
}

# ub_writes SEED: each kind of change to buckets and to the readings set aside.
ub_writes() {
    py '
n = int(sys.argv[2])
random.seed(n)
b, bad = c.ub.buckets, c.ub.bad
ids = sorted((d["_id"] for d in b.find({"count": {"$gte": 3}}, {"_id": 1})), key=str)
p, q, r, s, t, u, v = random.sample(ids, 7)
def setm(i, m): b.update_one({"_id": i}, {"$set": {"measurements": m, "count": len(m)}})
m = b.find_one({"_id": p})["measurements"]
x = dict(m[0]); x["_id"] = 500000 + n; x["temp"] = 7.25; setm(p, m + [x])      # measurement added
setm(q, b.find_one({"_id": q})["measurements"][1:])                             # one removed
m = b.find_one({"_id": r})["measurements"]; m[1]["temp"] = -1.0; setm(r, m)    # one changed
b.delete_one({"_id": s})                                                        # bucket deleted
nb = b.find_one({"_id": t}); nb["_id"] = "new-%d" % n
for k, x in enumerate(nb["measurements"]): x["_id"] = 600000 + 100 * n + k
b.insert_one(nb)                                                                # new bucket
mu, mv = b.find_one({"_id": u})["measurements"], b.find_one({"_id": v})["measurements"]
setm(v, mv + [mu[-1]]); setm(u, mu[:-1])                                        # moved
bad.insert_one({"_id": 700000 + n, "sensor": "s01", "temp": 3.0})
one = bad.find_one({"_id": {"$lt": 700000}, "ts": {"$exists": False}})
if one: bad.delete_one({"_id": one["_id"]})
' "$1"
}

# reference NAME PLAN DB OUT: DB dumped now, remodel run's result of PLAN into OUT.
reference() {
    rm -f "$T/$4-src.archive" "$T/$4.archive"
    "$MONGODUMP" --uri "$uri" --db "$3" --archive="$T/$4-src.archive" --quiet &&
        "$REMODEL" run -q "$T/plans/$2.json" --from "$T/$4-src.archive" --to "$T/$4.archive" ||
        fail "$1: offline reference"
}
bk_same() {
    local p; p=$(pid bk)
    reference "$1" bk iot bk-ref
    online_same "$1" "$T/bk-ref.archive" iot.buckets=buckets_remodel_${p}_1 iot.bad=bad_remodel_${p}_1
}
ub_same() {
    local p; p=$(pid ub)
    reference "$1" ub ub ub-ref
    online_same "$1" "$T/ub-ref.archive" ub.readings=readings_remodel_${p}_1
}
mixed_same() {
    local p; p=$(pid mixed)
    reference "$1" mixed iot mixed-ref
    online_same "$1" "$T/mixed-ref.archive" iot.mbuckets=mbuckets_remodel_${p}_2 \
        iot.mbad=mbad_remodel_${p}_1 iot.mmeas=mmeas_remodel_${p}_2
}
chain_same() {
    local p; p=$(pid chain)
    reference "$1" chain ch ch-ref
    online_same "$1" "$T/ch-ref.archive" ch.buckets=buckets_remodel_${p}_1 ch.bad=bad_remodel_${p}_1 \
        ch.back=back_remodel_${p}_2
}
verified() {
    online verify "$2"
    expect_eq "$1" "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
}
# few NAME MAX: sync's documents read (its "change log:" line) under MAX,
# nothing left to a rescan.
few() {
    local rd; rd=$(figure read)
    if [ -n "$rd" ] && [ "$rd" -lt "$2" ] && ! grep -q 'the rest rescanned' "$T/err"; then pass "$1: sync read $rd documents (under $2)"
    else fail "$1: sync read few documents (under $2)" "$(cat "$T/err")"; fi
}
# matrix PLAN WRITER SAME K...: writes, sync killed at its K-th rewrite of
# results, sync again, compared (SAME); prints the kills.
matrix() {
    local plan=$1 writer=$2 same=$3 k krc kills=0; shift 3
    for k in "$@"; do
        $writer $((40 + k))
        "$KILLAT" -q online_side_rewrite "$k" -- "$ONLINE" sync "$T/plans/$plan.json" --uri "$uri" \
            >/dev/null 2>"$T/kerr"
        krc=$?
        [ $krc == 137 ] && kills=$((kills + 1))
        [ $krc == 137 ] || [ $krc == 3 ] || fail "$kind: $plan: sync killed at rewrite #$k" "killat exit $krc: $(tail -n 3 "$T/kerr")"
        online sync "$plan"
        expect_eq "$kind: $plan: sync killed at rewrite #$k ($krc), then again: from the log (exit 0, nothing rescanned)" \
            "$rc:$(rescans)" "0:0"
        $same "$kind: $plan: ... and every result is remodel run's"
    done
    echo "$kills"
}

for kind in $(online_kind java); do
    # Each plan on a server of its own (bk and mixed share iot's readings):
    # FerretDB reads its oplog by scanning all of it, for each sync, so a
    # log that holds only its own plan's writes keeps each sync quick.
    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind-iot" 0 changelog && {
        make_readings iot
        online run bk --batch-size 100 -q
        expect_eq "$kind: bk runs" "$rc:$(cat "$T/err")" "0:"
        online run mixed --batch-size 100 -q
        expect_eq "$kind: mixed runs" "$rc:$(cat "$T/err")" "0:"

        # ---- bucketize ----
        bk_writes iot 1
        online sync bk
        expect_eq "$kind: bk: sync follows the log, nothing rescanned (exit 0)" "$rc:$(rescans)" "0:0"
        # 1200 readings in 60 series, ~500 buckets: the 9 or so series changed.
        few "$kind: bk" 500
        bk_same "$kind: bk: the buckets and the readings set aside are remodel run's"
        online sync bk
        expect_eq "$kind: bk: a second sync writes nothing" "$rc:$(figure results):$(figure removed)" "0:0:0"
        bk_writes iot 2
        online sync bk
        expect_eq "$kind: bk: a second round (a reading valid again): followed" "$rc:$(rescans)" "0:0"
        bk_same "$kind: bk: ... remodel run's"
        verified "$kind: bk: verify finds every result right" bk
        matrix bk "bk_writes iot" bk_same 1 2 3 >"$T/kills"
        grep -v '^[0-9]*$' "$T/kills"
        expect_eq "$kind: bk: the sync matrix killed at least 3 rewrites" \
            "$(tail -n 1 "$T/kills" | awk '{print ($1 >= 3)}')" "1"
        # Killed between a rewrite's deletes and its inserts: the bucket that
        # held a deleted reading is gone from the result, which then says
        # nothing of the series the reading was in; the journal does.
        py 'b = c.iot["buckets_remodel_%s_1" % sys.argv[2]].find_one({"sensor": "s05", "count": {"$gte": 2}})
c.iot.readings.delete_one({"_id": b["measurements"][0]["_id"]})' "$(pid bk)"
        "$KILLAT" -q insert_chunk 1 -- "$ONLINE" sync "$T/plans/bk.json" --uri "$uri" >/dev/null 2>"$T/kerr"
        krc=$?
        online sync bk
        expect_eq "$kind: bk: sync killed between a rewrite's deletes and inserts, then again (exit 0)" \
            "$krc:$rc:$(rescans)" "137:0:0"
        bk_same "$kind: bk: ... the series recomputed from the journal: remodel run's"

        # ---- an extract with childRefs of the buckets: followed too ----
        online sync mixed
        expect_eq "$kind: mixed: the bucketize and the extract with childRefs of its buckets both followed" \
            "$rc:$(rescans)" "0:0"
        mixed_same "$kind: mixed: ... the buckets, the set-aside readings and the measurements remodel run's"

        # ---- finalize after writes ----
        bk_writes iot 9
        reference "$kind: bk: finalize" bk iot bk-fin
        online finalize bk --writes-stopped
        expect_eq "$kind: bk: finalize drains the log and switches" \
            "$rc:$(grep -c 'drained the change log and verified' "$T/err")" "0:1"
        online_same "$kind: bk finalized: the live buckets and readings set aside are remodel run's" \
            "$T/bk-fin.archive" iot.buckets=buckets iot.bad=bad
        "$SERVER" stop "$T/srv-$kind-iot" >/dev/null 2>&1
    }

    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind-ub" 0 changelog && {
        make_readings gen
        # The unbucketize's sources: the offline bucketize of gen's readings.
        "$MONGODUMP" --uri "$uri" --db gen --archive="$T/$kind-gen-src.archive" --quiet &&
            "$REMODEL" run -q "$T/plans/gen.json" --from "$T/$kind-gen-src.archive" --to "$T/$kind-gen.archive" &&
            "$MONGORESTORE" --uri "$uri" --archive="$T/$kind-gen.archive" --nsInclude 'gen.buckets' \
                --nsInclude 'gen.bad' --nsFrom 'gen.*' --nsTo 'ub.*' --noIndexRestore --quiet ||
            fail "$kind: the unbucketize's buckets"
        online run ub --batch-size 100 -q
        expect_eq "$kind: ub runs" "$rc:$(cat "$T/err")" "0:"

        # ---- unbucketize ----
        ub_writes 1
        online sync ub
        expect_eq "$kind: ub: sync follows the log, nothing rescanned (exit 0)" "$rc:$(rescans)" "0:0"
        # ~110 buckets holding 1200 readings: the 7 buckets changed, the
        # readings set aside changed, and those checked before removal.
        few "$kind: ub" 100
        ub_same "$kind: ub: the readings are remodel run's"
        online sync ub
        expect_eq "$kind: ub: a second sync writes nothing" "$rc:$(figure results):$(figure removed)" "0:0:0"
        ub_writes 2
        online sync ub
        ub_same "$kind: ub: a second round: remodel run's"
        matrix ub ub_writes ub_same 1 2 >"$T/kills"
        grep -v '^[0-9]*$' "$T/kills"
        expect_eq "$kind: ub: the sync matrix killed at least 2 rewrites" \
            "$(tail -n 1 "$T/kills" | awk '{print ($1 >= 2)}')" "1"

        # ---- finalize after writes ----
        ub_writes 9
        reference "$kind: ub: finalize" ub ub ub-fin
        online finalize ub --writes-stopped
        expect_eq "$kind: ub: finalize drains the log and switches" \
            "$rc:$(grep -c 'drained the change log and verified' "$T/err")" "0:1"
        online_same "$kind: ub finalized: the live readings are remodel run's" "$T/ub-fin.archive" \
            ub.readings=readings
        "$SERVER" stop "$T/srv-$kind-ub" >/dev/null 2>&1
    }

    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind-ch" 0 changelog && {
        make_readings ch
        online run chain --batch-size 100 -q
        expect_eq "$kind: chain runs" "$rc:$(cat "$T/err")" "0:"

        # ---- bucketize, then unbucketize of its buckets ----
        bk_writes ch 1
        online sync chain
        expect_eq "$kind: chain: both steps follow the log (exit 0, nothing rescanned)" "$rc:$(rescans)" "0:0"
        few "$kind: chain" 700
        chain_same "$kind: chain: the buckets and the readings back are remodel run's"
        matrix chain "bk_writes ch" chain_same 1 2 3 >"$T/kills"
        grep -v '^[0-9]*$' "$T/kills"
        expect_eq "$kind: chain: the sync matrix killed at least 3 rewrites" \
            "$(tail -n 1 "$T/kills" | awk '{print ($1 >= 3)}')" "1"

        "$SERVER" stop "$T/srv-$kind-ch" >/dev/null 2>&1
    }
done
