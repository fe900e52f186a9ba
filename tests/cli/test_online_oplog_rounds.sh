#!/usr/bin/env bash
# The oplog mode's rounds (issue 65, item 3), on FerretDB with its change
# log (a capped local.oplog.rs, which FerretDB reads whole for any range of
# ts): before the run, 2000 entries of another database go into the
# oplog; a set plan runs side by side on 300 documents, then
#   1. sync: one read of the oplog (REMODEL_ONLINE_TRACE: one read of the
#      entries since the last point, no read of the last entry alone, which
#      FerretDB answers with a whole read too), its note counting the
#      entries it returned: fewer than the 2000 written before the run;
#   2. follow while a writer updates and inserts (two rounds at least
#      with events, each a single read): each round's read returns fewer
#      entries than the 2000 before the run, and all rounds together no
#      more than the oplog holds after the run's point: no round reads the
#      log from its start again;
#   3. nothing missed across the rounds: the writer stopped, a last sync,
#      then verify exit 0 and every result the writer's last value, doubled;
#   4. status shows the change log the server offers, probed: FerretDB's
#      capped, tailable oplog, no change streams; mongo-java-server's
#      change streams (status --json: server.changeLog too).
#   REMODEL=build/remodel bash tests/cli/test_online_oplog_rounds.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "oplog rounds: external deployments are not started here (skipped)"; exit 0; }
trap 'for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done
      [ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"set": {"in": "o.items", "fields": {"m": {"$multiply": ["$n", 2]}}}}]}' >"$T/plans/dbl.json"

# entries: the counts the notes of $T/err (or FILE) give, one a line.
entries() { sed -n 's/.*local\.oplog\.rs read once from the last point: \([0-9][0-9]*\) entries.*/\1/p' "${1:-$T/err}"; }
# point: the plan's recorded point, as "t i".
point() {
    py 'r = c["remodel"]["plans"].find_one({"capture.ts": {"$exists": True}})
print(r["capture"]["ts"].time, r["capture"]["ts"].inc)'
}

online_start ferretdb "$T/ferretdb" 0 changelog || exit 0
py 'c.noise.c.insert_many([{"_id": i} for i in range(2000)])
c.o.items.insert_many([{"_id": i, "n": i} for i in range(300)])'
online run dbl
expect_eq "ferretdb: run: exit 0, capture oplog" "$rc:$(grep -c 'capture: oplog' "$T/err")" "0:1"
read -r t0 i0 < <(point)

# 1. sync: one read.
py 'for i in range(40): c.o.items.update_one({"_id": i}, {"$set": {"n": 1000 + i}})'
REMODEL_ONLINE_TRACE=1 run_rm online sync "$T/plans/dbl.json" --uri "$uri"
reads=$(grep -c "trace: .*the change log's entries since the last point" "$T/err")
natural=$(grep -c 'trace: .*"find" : "oplog.rs".*"\$natural" : -1' "$T/err")
n=$(entries)
expect_eq "ferretdb: sync: exit 0, one read of the oplog, none of its last entry alone" \
    "$rc:$reads:$natural" "0:1:0"
expect_eq "ferretdb: ... its note: 40 events, the read's entries counted, fewer than the 2000 before the run" \
    "$(events):$([ -n "$n" ] && [ "$n" -ge 40 ] && [ "$n" -lt 2000 ] && echo fewer)" "40:fewer"

# 2. follow while a writer writes: 6 batches of updates and inserts, a
# second apart, so that they fall into several rounds.
{ python3 -c 'import sys, time, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
for b in range(6):
    for i in range(20):
        k = b * 20 + i
        c.o.items.update_one({"_id": k}, {"$set": {"n": 5000 + k}})
        c.o.items.insert_one({"_id": 1000 + k, "n": k})
    time.sleep(1)' "$uri" >"$T/w.out" 2>&1; echo $? >"$T/w.done"; } &
wpid=$!
: >"$T/follow.err"
REMODEL_ONLINE_TRACE=1 "$REMODEL" online follow "$T/plans/dbl.json" --uri "$uri" --pause 500ms \
    >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
wait $wpid
wpid=
# Rounds go on until one has read the writer's last insert (its result is
# there), within a generous bound; then SIGINT.
for ((i = 0; i < 1200; i++)); do
    [ "$(py 'print(c.o[[n for n in c.o.list_collection_names() if n.startswith("items_remodel_")][0]].count_documents({"_id": 1119}))')" == 1 ] && break
    kill -0 $fpid 2>/dev/null || break
    sleep 0.2
done
kill -INT $fpid 2>/dev/null
for ((i = 0; i < 1200; i++)); do kill -0 $fpid 2>/dev/null || break; sleep 0.1; done
kill -KILL $fpid 2>/dev/null
wait $fpid
frc=$?
mapfile -t rounds < <(entries "$T/follow.err")
reads=$(grep -c "trace: .*the change log's entries since the last point" "$T/follow.err")
natural=$(grep -c 'trace: .*"find" : "oplog.rs".*"\$natural" : -1' "$T/follow.err")
expect_eq "ferretdb: follow with the writer: exit 0 (SIGINT), writer exit 0" "$frc:$(cat "$T/w.done")" "0:0"
expect_eq "ferretdb: ... two rounds with events at least, one read of the oplog a round, none of its last entry alone" \
    "$([ "${#rounds[@]}" -ge 2 ] && echo 2+):$([ "$reads" -ge "${#rounds[@]}" ] && echo ok):$natural" "2+:ok:0"
big=0 sum=0
for r in "${rounds[@]}"; do
    [ "$r" -ge 2000 ] && big=$((big + 1))
    sum=$((sum + r))
done
read -r t1 i1 < <(point)
after=$(py 'from bson.timestamp import Timestamp
import sys
print(c.local["oplog.rs"].count_documents({"ts": {"$gt": Timestamp(int(sys.argv[2]), int(sys.argv[3])), "$lte": Timestamp(int(sys.argv[4]), int(sys.argv[5]))}}))' "$t0" "$i0" "$t1" "$i1")
expect_eq "ferretdb: ... no round returned as many entries as were written before the run; all of them together ($sum) no more than the oplog holds since the run's point ($after)" \
    "$big:$([ "$sum" -le "$after" ] && echo within)" "0:within"
[ "$big" == 0 ] || echo "  rounds: ${rounds[*]}" >&2

# 3. nothing missed: a last sync, then verify; every result the source's
# value doubled.
online sync dbl
expect_eq "ferretdb: the writer stopped: sync exit 0" "$rc" 0
online verify dbl
expect_eq "ferretdb: ... verify: exit 0" "$rc" 0
wrong=$(py 't = c.o[[n for n in c.o.list_collection_names() if n.startswith("items_remodel_")][0]]
src = {d["_id"]: d["n"] for d in c.o.items.find()}
res = {d["_id"]: d.get("m") for d in t.find()}
print(len(src), sum(1 for k, v in src.items() if res.get(k) != 2 * v))')
expect_eq "ferretdb: ... 420 sources, each result its value doubled" "$wrong" "420 0"

# 4. the change log the server offers, probed.
online status dbl
expect_eq "ferretdb: status: the change log probed: an oplog, capped and tailable, no change streams" \
    "$rc:$(grep -c '^  change log (probed): change streams no; local.oplog.rs capped, tailable$' "$T/out")" "0:1"
"$SERVER" stop "$T/ferretdb" >/dev/null 2>&1

online_start java "$T/java" 0 changelog || exit 0
py 'c.o.items.insert_many([{"_id": i, "n": i} for i in range(10)])'
online run dbl
online status dbl
expect_eq "java: status: the change log probed: change streams" \
    "$rc:$(grep -c '^  change log (probed): change streams yes; ' "$T/out")" "0:1"
online status dbl --json
expect_eq "java: status --json: server.changeLog.changeStreams" \
    "$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).read())["server"]["changeLog"]["changeStreams"])' "$T/out")" "True"
