#!/usr/bin/env bash
# Consecutive steps the offline engine runs in one pass over a collection
# run in one online pass with one result collection (issue 49, item 4), on
# mongo-java-server with its change streams (online_kind: the fusing is
# remodel's own; test_online_changelog follows both servers' logs,
# REMODEL_TEST_BOTH=1 runs this suite on FerretDB with its oplog too).
# A plan of four field steps on fz.items (set, unset, rename, version),
# then a denormalize of fz.items from fz.owners, which ends the run:
#   - run makes two result collections (the run's, the join's), not five;
#   - the results are, byte for byte, what `remodel run` makes offline;
#   - the run is said, and shown by status (text and --json), as one;
#   - killed (-9) part way, then run again: resumed under its first step,
#     the same results;
#   - a write after the run reaches the results through the fused steps
#     and the join by a sync from the change log; verify agrees;
#   - finalize switches the result in; rollback brings the originals back,
#     and rollback again leaves only them;
#   - in place nothing is fused, even in a command not given --in-place;
#   - --server-side (mongo-java-server) fuses nothing: each step on the server.
# CI_KINDS: the servers (default: online_kind java); CI_DEBUG=1: messages.
#   REMODEL=build/remodel bash tests/cli/test_online_fused.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "fused: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/fused.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "fz.items", "fields": {"flag": true, "twice": {"$multiply": ["$qty", 2]}}}},
  {"unset": {"in": "fz.items", "fields": ["old"]}},
  {"rename": {"in": "fz.items", "fields": {"name": "title"}}},
  {"version": {"in": "fz.items", "value": 3}},
  {"denormalize": {"in": "fz.items", "from": "fz.owners", "localField": "owner",
                   "fields": {"owner_name": "name"}}}]}
EOF

# seed N: N items, 10 owners.
seed() {
    py 'c.fz.drop_collection("items"); c.fz.drop_collection("owners")
c.fz.owners.insert_many([{"_id": i, "name": "o%d" % i} for i in range(10)])
c.fz.items.insert_many([{"_id": i, "name": "n%d" % i, "qty": i % 13, "owner": i % 10, "old": i}
                        for i in range(int(sys.argv[2]))])' "$1"
}
colls() { py 'print(sorted(c.fz.list_collection_names()))'; }
state_clear() { py 'c.drop_database("remodel")'; }
# same NAME: the results are remodel run's of the sources as they are now.
same() {
    offline_run fused fz
    online_same "$1" "$T/fused.archive" "fz.items=items_remodel_${ID}_5" "fz.owners=owners"
}
debug() { [ -n "${CI_DEBUG:-}" ] && cat "$T/err" >&2; return 0; }

ID=$(pid fused)
for kind in ${CI_KINDS:-$(online_kind java)}; do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    seed 300
    online run fused --create-indexes
    debug
    expect_eq "$kind: run (exit 0), the four field steps said as one pass" \
        "$rc:$(grep -c 'remodel: steps 1-4 (set, unset, rename, version) fz.items: 300 read, 300 written' "$T/err"):$(grep -c 'remodel: step 5 (denormalize) fz.items: 300 read, 300 written' "$T/err")" \
        "0:1:1"
    expect_eq "$kind: ... one result collection for the run, one for the join (not one per step)" \
        "$(colls)" "['items', 'items_remodel_${ID}_4', 'items_remodel_${ID}_5', 'owners']"
    same "$kind: ... the results are remodel run's, byte for byte"
    online status fused
    expect_eq "$kind: status shows the run as one row (steps 1-4), and says it is fused" \
        "$(grep -c '^1-4 *set *fz.items *done *300 *300 ' "$T/out"):$(grep -c '^[234] ' "$T/out"):$(grep -c "^steps 1-4 (set, unset, rename, version) fz.items: fused: one pass, one result (fz.items_remodel_${ID}_4)" "$T/out")" \
        "1:0:1"
    online status fused --json
    expect_eq "$kind: status --json: the run's steps in one partition, then the join's" \
        "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([(p["step"], p.get("steps"), p.get("ops"), p["state"]) for p in d["partitions"]])' "$T/out" 2>&1)" \
        "[(1, [1, 2, 3, 4], ['set', 'unset', 'rename', 'version'], 'done'), (5, None, None, 'done')]"

    # a write after the run, through the fused steps and the join
    py 'i = c.fz.items
i.update_one({"_id": 7}, {"$set": {"name": "changed", "qty": 50}})
i.insert_one({"_id": 1000, "name": "new", "qty": 3, "owner": 4, "old": 1})
i.delete_one({"_id": 9})
c.fz.owners.update_one({"_id": 4}, {"$set": {"name": "renamed"}})'
    online sync fused
    debug
    expect_eq "$kind: sync (exit 0) from the change log, not a rescan" \
        "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
    same "$kind: ... the writes reached the results through every step"
    online verify fused
    debug
    expect_eq "$kind: verify (exit 0) finds every result right, naming no step inside the run" \
        "$rc:$(grep -c 'every result .*as the sources make it' "$T/err"):$(grep -c 'step [234] (' "$T/err")" "0:1:0"
    expect_eq "$kind: ... still two result collections" \
        "$(colls)" "['items', 'items_remodel_${ID}_4', 'items_remodel_${ID}_5', 'owners']"

    "$MONGODUMP" --uri "$uri" --db fz --archive="$T/before.archive" --quiet
    online finalize fused --writes-stopped
    debug
    expect_eq "$kind: finalize (exit 0): the result switched in, no intermediate left" \
        "$rc:$(colls)" "0:['items', 'items_remodel_${ID}_backup', 'owners']"
    online rollback fused
    debug
    expect_eq "$kind: rollback (exit 0): the originals back" "$rc" "0"
    online rollback fused
    debug
    expect_eq "$kind: rollback again (exit 0): only the originals" "$rc:$(colls)" "0:['items', 'owners']"
    online_same "$kind: ... the originals byte for byte as before finalize" "$T/before.archive" \
        fz.items=items fz.owners=owners

    # killed part way through the fused pass, then run again
    state_clear
    seed 3000
    "$REMODEL" online run -q "$T/plans/fused.json" --uri "$uri" --batch-size 50 --pause-ms 50 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 300); do
        [ "$(py 'print(c.remodel.checkpoints.count_documents({"seen": {"$gt": 0}}))')" -gt 0 ] && break
        sleep 0.1
    done
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    expect_eq "$kind: killed (-9) part way: the run's checkpoint is its first step's, not done" \
        "$(py 'print(sorted((d["step"], d.get("done")) for d in c.remodel.checkpoints.find({})))')" \
        "[(1, False)]"
    py 'c.remodel.leases.update_many({}, {"$set": {"expires": datetime.datetime(2000, 1, 1)}})'
    online run fused --create-indexes
    debug
    expect_eq "$kind: ... run again (exit 0): it goes on from its checkpoint" \
        "$rc:$(grep -c 'remodel: steps 1-4 (set, unset, rename, version) fz.items: 3000 read' "$T/err")" "0:1"
    same "$kind: ... the results are remodel run's"
    expect_eq "$kind: ... two result collections" \
        "$(colls)" "['items', 'items_remodel_${ID}_4', 'items_remodel_${ID}_5', 'owners']"
    online rollback fused -q
    expect_eq "$kind: rollback of the run (exit 0): only the originals" "$rc:$(colls)" "0:['items', 'owners']"

    # in place nothing is fused (each step keeps its own backups), also in
    # a later command given no --in-place (the mode its run recorded)
    state_clear
    seed 300
    online run fused --in-place --create-indexes
    debug
    py 'c.fz.items.update_one({"_id": 3}, {"$set": {"qty": 99}})'
    online sync fused
    debug
    expect_eq "$kind: in place: run and a sync without --in-place (exit 0), step by step" \
        "$rc:$(grep -c 'steps 1-4' "$T/err"):$(py 'print(sorted(d["step"] for d in c.remodel.checkpoints.find({})))')" \
        "0:0:[1, 2, 3, 4, 5]"
    online rollback fused -q
    expect_eq "$kind: ... rollback (exit 0) restores every step's backups" \
        "$rc:$(py 'print(c.fz.items.count_documents({"$or": [{"flag": {"$exists": True}}, {"title": {"$exists": True}}]}), c.fz.items.count_documents({"old": {"$exists": True}}))')" \
        "0:0 300"

    # --server-side: the compiler's pipelines are a step's each, run on
    # the server, so the run fuses nothing (recorded: a resume without the
    # flag keeps its names), each step server-side, one result each.
    if [ "$kind" = java ]; then
        state_clear
        seed 300
        online run fused --server-side --create-indexes
        debug
        expect_eq "$kind: --server-side (exit 0): no step fused, none client-side" \
            "$rc:$(grep -c 'steps 1-4' "$T/err"):$(grep -c 'runs client-side' "$T/err")" "0:0:0"
        same "$kind: ... the results are remodel run's"
        expect_eq "$kind: ... a result collection per step" \
            "$(colls)" "['items', 'items_remodel_${ID}_1', 'items_remodel_${ID}_2', 'items_remodel_${ID}_3', 'items_remodel_${ID}_4', 'items_remodel_${ID}_5', 'owners']"
        online verify fused
        expect_eq "$kind: ... verify without the flag takes the run's names (exit 0)" \
            "$rc:$(grep -c 'steps 1-4' "$T/err")" "0:0"
    fi
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
