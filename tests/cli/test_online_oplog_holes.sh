#!/usr/bin/env bash
# An oplog whose entries become visible out of ts order: FerretDB takes an
# entry's ts, then inserts it, so under load a sync read a later write's
# entry while an earlier one was still on its way, moved its point past
# both, and the earlier write never reached the results (a loaded CI run
# of test_online_oplog_rounds.sh: one result of 420 not its source's).
# On the in-memory server, whose oplog can keep a namespace's next entry
# back (memSet oplogHold, then oplogRelease): a set plan, run; the entry
# of an update of _id 3 kept back, _id 4 updated after it;
#   1. sync: exit 0, _id 4's result the new value doubled, _id 3's not yet
#      (its entry is not in the log);
#   2. the entry let in (its ts below the point): the next sync applies it
#      (a point a sync gave keeps a settle window below it, read again);
#   3. verify exit 0, every result its source's value doubled;
#   4. follow, over several rounds: an entry kept back while a round reads
#      a later one, then let in, is applied by a later round; rounds go on
#      after it;
#   5. --to-uri, a namespace the plan does not write (copied, then kept in
#      step from the source's log): finalize's prepare catches the copy up
#      while an update's entry is kept back; the entry let in below the
#      point it noted, finalize --writes-stopped brings that update over
#      too (the copy's point keeps a settle window as a sync's does).
#   REMODEL=build/remodel bash tests/cli/test_online_oplog_holes.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mem.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "oplog holes: external deployments are not started here (skipped)"; exit 0; }
trap '[ -n "${fpid:-}" ] && kill -9 "$fpid" 2>/dev/null
for d in "$T"/mem*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"set": {"in": "o.items", "fields": {"m": {"$multiply": ["$n", 2]}}}}]}' >"$T/plans/dbl.json"

# result ID: the result of source ID (its m), "-" when there is none.
result() {
    py 't = c.o[[n for n in c.o.list_collection_names() if n.startswith("items_remodel_")][0]]
d = t.find_one({"_id": int(sys.argv[2])})
print(d.get("m", "-") if d else "-")' "$1"
}
# wrong: "SOURCES WRONG", the sources and the results not their value doubled.
wrong() {
    py 't = c.o[[n for n in c.o.list_collection_names() if n.startswith("items_remodel_")][0]]
src = {d["_id"]: d["n"] for d in c.o.items.find()}
res = {d["_id"]: d.get("m") for d in t.find()}
print(len(src), sum(1 for k, v in src.items() if res.get(k) != 2 * v))'
}

online_start mem "$T/mem" 0 changelog || exit 0
py 'c.o.items.insert_many([{"_id": i, "n": i} for i in range(20)])'
online run dbl
expect_eq "mem: run: exit 0, capture oplog" "$rc:$(grep -c 'capture: oplog' "$T/err")" "0:1"

# 1. An entry kept back, a later one in the log.
mem_cmd '{"memSet": {"oplogHold": 1, "oplogHoldNs": "o.items"}}' >/dev/null
py 'c.o.items.update_one({"_id": 3}, {"$set": {"n": 300}})
c.o.items.update_one({"_id": 4}, {"$set": {"n": 400}})'
online sync dbl
expect_eq "sync while _id 3's entry is kept back: exit 0, _id 4's result 800, _id 3's still 6" \
    "$rc:$(result 4):$(result 3)" "0:800:6"

# 2. Let in below the point: the next sync applies it.
mem_cmd '{"memSet": {"oplogRelease": true}}' >/dev/null
online sync dbl
expect_eq "the entry let in below the point: the next sync applies it (_id 3's result 600)" \
    "$rc:$(result 3)" "0:600"

# 3. Nothing missed.
online verify dbl
expect_eq "verify: exit 0" "$rc" 0
expect_eq "20 sources, each result its value doubled" "$(wrong)" "20 0"

# 4. follow: one process, its memory of what it applied across rounds.
: >"$T/follow.err"
REMODEL_ONLINE_TRACE=1 "$REMODEL" online follow "$T/plans/dbl.json" --uri "$uri" --pause 200ms >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
# wait_result ID VALUE: until source ID's result is VALUE (a generous bound).
wait_result() {
    for ((k = 0; k < 1500; k++)); do
        [ "$(result "$1")" == "$2" ] && return 0
        kill -0 $fpid 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}
# Its first round done (it recomputed the window's ids): its second read
# of the log begun.
for ((k = 0; k < 1500; k++)); do
    [ "$(grep -c "trace: .*the change log's entries since the last point" "$T/follow.err")" -ge 2 ] && break
    kill -0 $fpid 2>/dev/null || break
    sleep 0.2
done
mem_cmd '{"memSet": {"oplogHold": 1, "oplogHoldNs": "o.items"}}' >/dev/null
py 'c.o.items.update_one({"_id": 7}, {"$set": {"n": 700}})
c.o.items.update_one({"_id": 8}, {"$set": {"n": 800}})'
wait_result 8 1600
expect_eq "follow: a round applies the later entry (_id 8's result 1600), not the kept one (_id 7's 14)" \
    "$?:$(result 7)" "0:14"
mem_cmd '{"memSet": {"oplogRelease": true}}' >/dev/null
wait_result 7 1400
expect_eq "follow: the entry let in below the point is applied by a later round (_id 7's 1400)" "$?" 0
py 'c.o.items.update_one({"_id": 9}, {"$set": {"n": 900}})'
wait_result 9 1800
expect_eq "follow: rounds go on after it (_id 9's 1800)" "$?" 0
kill -INT $fpid 2>/dev/null
for ((k = 0; k < 600; k++)); do kill -0 $fpid 2>/dev/null || break; sleep 0.1; done
wait $fpid
frc=$?
fpid=
expect_eq "follow: exit 0 on SIGINT" "$frc" 0
online sync dbl
online verify dbl
expect_eq "after follow: sync and verify exit 0, each result its value doubled" "$rc:$(wrong)" "0:20 0"

# 5. --to-uri: the copied namespace's catch-ups.
online_start mem "$T/mem-src" 0 changelog || exit 0
SRC=$uri
py 'c.o.items.insert_many([{"_id": i, "n": i} for i in range(10)])
c.o.other.insert_many([{"_id": i, "n": i} for i in range(10)])'
online_start mem "$T/mem-dst" 0 || exit 0
DST=$uri
two() { run_rm online "$1" "$T/plans/dbl.json" --uri "$SRC" --to-uri "$DST" "${@:2}"; }
# other ID: o.other's n of ID on the destination.
other() { uri=$DST py 'd = c.o.other.find_one({"_id": int(sys.argv[2])}); print(d["n"] if d else "-")' "$1"; }
two run -q
expect_eq "--to-uri: run: exit 0, o.other copied (_id 3's n 3)" "$rc:$(other 3)" "0:3"
uri=$SRC mem_cmd '{"memSet": {"oplogHold": 1, "oplogHoldNs": "o.other"}}' >/dev/null
uri=$SRC py 'c.o.other.update_one({"_id": 3}, {"$set": {"n": 300}})
c.o.other.update_one({"_id": 4}, {"$set": {"n": 400}})'
two finalize
expect_eq "--to-uri: finalize's prepare while _id 3's entry is kept back: exit 0, _id 4 brought over (400), _id 3 not yet (3)" \
    "$rc:$(other 4):$(other 3)" "0:400:3"
uri=$SRC mem_cmd '{"memSet": {"oplogRelease": true}}' >/dev/null
two finalize --writes-stopped --max-window 0
expect_eq "--to-uri: the entry let in below the prepare's point: finalize --writes-stopped brings _id 3 over (300)" \
    "$rc:$(other 3):$(other 4)" "0:300:400"
