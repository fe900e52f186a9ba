#!/usr/bin/env bash
# remodel online verify, sync, finalize, rollback, pause/resume, JSON logs,
# --batch-time, on mongo-java-server (online_kind: test_online_smoke.sh
# runs each command on both servers; REMODEL_TEST_BOTH=1 runs this suite on
# both), and retries across a server restart, on FerretDB:
# - an application writer updates, inserts and deletes sources during a
#   side-by-side run: after it stops, verify finds the stale results, sync
#   rewrites them, verify passes, and the results equal `remodel run` on a
#   dump taken after the writer stopped;
# - a tampered target and a stray document: verify exit 1, sync fixes;
# - finalize refused without the writes stopped; with them, the results
#   replace the sources, which stay as backups; rollback swaps them back
#   byte for byte, a second rollback drops the results and the state;
# - --in-place backfill then rollback: the originals back byte for byte,
#   except a document whose copied field the application wrote since,
#   which is listed with what it holds and left (one whose other field it
#   wrote gets remodel's field removed, the application's kept); stale denormalized copies found by verify, refreshed by sync;
# - pause from another process holds a run, resume lets it finish;
# - --log-format json: one JSON line per batch; --batch-time grows batches;
# - FerretDB stopped mid-run and started again: the run retries, finishes,
#   and equals remodel run (mongo-java-server keeps no data across a
#   restart, so only FerretDB).
#   REMODEL=build/remodel bash tests/cli/test_online_ops.sh
. "$(dirname "$0")/lib.sh"
# REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS is a hook of the tests' build only.
use_faulty || exit 1
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java restart; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms

mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
cp "$ROOT/dumps/plans/backfill-logging.json" "$T/plans/backfill.json"
cat >"$T/plans/twostep.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "logging.logmsg", "fields": {"checked": true}}},
  {"unset": {"in": "logging.logmsg", "fields": ["message"]}}]}
EOF

same() { online_same "$@"; }
online() { run_rm online "$1" -q "$T/plans/$2.json" --uri "$uri" "${@:3}"; }
pid() { plan_id "$T/plans/$1.json"; }
pyq() { pyrun -c "import pymongo, sys
db = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
$1" "$uri"; }
# as_before OLD NEW: two archives of logging, by fields and values (any
# order): "<as many messages> <messages that differ> <hosts the same>".
as_before() {
    pyin "$1" "$2" <<'PYEOF'
import sys, bson, rmlib
a, b = rmlib.read_archive(sys.argv[1])[0], rmlib.read_archive(sys.argv[2])[0]
def by_id(docs): return {repr(bson.decode(bytes(d))["_id"]): bson.decode(bytes(d)) for d in docs}
x, y = by_id(a["logging.logmsg"]), by_id(b["logging.logmsg"])
print(len(x) == len(y), sum(x[k] != y.get(k) for k in x), by_id(a["logging.hosts"]) == by_id(b["logging.hosts"]))
PYEOF
}
# start KIND [PORT [DIR]]: a server of that kind in $T/DIR (default KIND).
start() { online_start "$1" "$T/${3:-$1}" "${2:-0}"; }

for kind in $(online_kind java); do
    start $kind || continue
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --nsInclude 'logging.*' \
        --noIndexRestore --quiet
    # FerretDB's SQLite handler scans the whole collection for each
    # conditional update an in-place step sends, so the in-place checks
    # below cost the square of logging.logmsg's size there (about 50 s of
    # its CPU per pass over the 1,200 messages, and the checks below make
    # about eight passes): it keeps the first 200 by _id (all 20 hosts
    # still among them; mongo-java-server keeps all).
    [ $kind == ferretdb ] && pyq 'ids = [d["_id"] for d in db.logging.logmsg.find({}, {"_id": 1}).sort("_id", 1)]
db.logging.logmsg.delete_many({"_id": {"$in": ids[200:]}})'
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$kind-crm0.archive" --quiet

    # An application writes while the plan runs.
    rm -f "$T/stop"
    python3 "$ROOT/tests/transforms/online_writer.py" "$uri" "$T/stop" 7 >"$T/writer" 2>&1 &
    writer=$!
    sleep 0.5
    online run embed --create-indexes --batch-size 5 --pause-ms 20
    expect_eq "$kind: a run while the application writes: exit 0" "$rc:$(cat "$T/err")" "0:"
    touch "$T/stop"
    wait $writer
    expect_eq "$kind: the writer updated, inserted and deleted during the run" \
        "$(awk '{ print ($2 > 0 && $4 > 0 && $6 > 0) }' "$T/writer")" 1
    online verify embed
    expect_eq "$kind: verify after the writes: exit 1" "$rc" 1
    expect_message "$kind: ... naming the ranges that differ" "verify: step 1 (embed) crm.people: the range after"
    online sync embed
    expect_eq "$kind: sync: exit 0" "$rc:$(cat "$T/err")" "0:"
    online verify embed
    expect_eq "$kind: verify after sync: exit 0, nothing said" "$rc:$(cat "$T/err")" "0:"
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/$kind-crm1.archive" --quiet
    "$REMODEL" run -q "$T/plans/embed.json" --from "$T/$kind-crm1.archive" --to "$T/$kind-embed1.archive"
    same "$kind: after sync, the results are remodel run's on a dump taken after the writer stopped" \
        "$T/$kind-embed1.archive" crm.people=people_remodel_$(pid embed)_1 crm.tasks=tasks_remodel_$(pid embed)_1

    # A tampered result and a stray document.
    pyq 'db.crm["people_remodel_'"$(pid embed)"'_1"].update_one({}, {"$set": {"tasks": []}})
db.crm["tasks_remodel_'"$(pid embed)"'_1"].insert_one({"stray": True})'
    online verify embed
    expect_eq "$kind: a tampered result and a stray document: verify exit 1" "$rc" 1
    expect_message "$kind: ... the stray named as made by no range" "1 documents in crm.tasks_remodel_$(pid embed)_1 that no range makes"
    online sync embed
    online verify embed
    expect_eq "$kind: ... sync puts them right" "$rc:$(cat "$T/err")" "0:"
    same "$kind: ... the results are remodel run's again" \
        "$T/$kind-embed1.archive" crm.people=people_remodel_$(pid embed)_1 crm.tasks=tasks_remodel_$(pid embed)_1

    # finalize, rollback.
    # Without --writes-stopped or --block-writes it only prepares (issue
    # 49): nothing switched (test_online_cutover checks what it says).
    online finalize embed
    expect_eq "$kind: finalize without the writes stopped: prepares only (exit 0), nothing switched" \
        "$rc:$(py 'print(sorted(n for n in c.crm.list_collection_names() if n.endswith("_backup")))')" "0:[]"
    if [ $kind != external ]; then
        online finalize embed --block-writes
        expect_eq "$kind: finalize --block-writes on a server without setUserWriteBlockMode: refused (exit 2)" "$rc" 2
        expect_message "$kind: ... saying so" "the server refuses setUserWriteBlockMode"
    fi
    run_rm online finalize "$T/plans/embed.json" --uri "$uri" --writes-stopped
    expect_eq "$kind: finalize --writes-stopped: exit 0" "$rc" 0
    expect_message "$kind: ... the originals checked after the switch" \
        "remodel: finalize: the originals did not change from the last sync to the switch (2 checked)"
    same "$kind: after finalize, crm.people and crm.tasks are the new design" \
        "$T/$kind-embed1.archive" crm.people=people crm.tasks=tasks
    same "$kind: ... the originals kept beside them" \
        "$T/$kind-crm1.archive" crm.people=people_remodel_$(pid embed)_backup crm.tasks=tasks_remodel_$(pid embed)_backup
    online run embed
    expect_eq "$kind: a finalized plan is not run again: exit 2" "$rc" 2
    for c in sync verify; do
        online $c embed
        expect_eq "$kind: $c after finalize: refused (exit 2), saying it is finalized, no result recreated" \
            "$rc:$(grep -c 'plan embed.json is finalized' "$T/err"):$(pyq 'print(sorted(n for n in db.crm.list_collection_names() if n.endswith("_1")))')" \
            "2:1:[]"
    done
    online rollback embed
    expect_eq "$kind: rollback after finalize: exit 0" "$rc" 0
    same "$kind: ... the original collections back, byte for byte" \
        "$T/$kind-crm1.archive" crm.people=people crm.tasks=tasks
    online rollback embed
    expect_eq "$kind: rollback again: the results dropped, the state forgotten" \
        "$rc:$(pyq 'print(sorted(db.crm.list_collection_names()), db.remodel.plans.count_documents({}), db.remodel.checkpoints.count_documents({}))')" \
        "0:['people', 'tasks'] 0 0"

    # A write that slips in after finalize's last sync, before the switch:
    # reported after the renames (exit 1), and rollback swaps back. (The
    # rollback above dropped the owner index the first run made.)
    online run embed --create-indexes
    # The pause outlasts the three commands below on any machine;
    # finalize's sync and verify before it may take a while when loaded.
    # SIGUSR1 ends it once they are done.
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/fin.err"
    REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=600000 "$REMODEL" online finalize -q "$T/plans/embed.json" \
        --uri "$uri" --writes-stopped --max-window 0 >/dev/null 2>"$T/fin.err" &
    pid=$!
    # Its sync and verify took over 180 s at a load of 30: a deadline of
    # 600 s, or until finalize has ended without pausing.
    for ((wend = SECONDS + 600; SECONDS < wend; )); do
        grep -q "pausing" "$T/fin.err" && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    expect_eq "$kind: finalize reached its pause before the switch" "$(grep -c pausing "$T/fin.err")" 1
    # finalize holds the plan's lease from its sync to its end: a rollback
    # (or a sync) in its window is refused and changes nothing.
    online rollback embed
    expect_eq "$kind: rollback while finalize is between its sync and its switch: refused (exit 2), naming the holder" \
        "$rc:$(grep -c 'is being run by' "$T/err")" "2:1"
    online sync embed
    expect_eq "$kind: ... sync too" "$rc:$(grep -c 'is being run by' "$T/err")" "2:1"
    pyq 'db.crm.tasks.insert_one({"_id": "slipped in", "owner": db.crm.people.find_one()["_id"]})'
    grep -q pausing "$T/fin.err" && kill -USR1 $pid 2>/dev/null
    wait $pid
    expect_eq "$kind: a write after finalize's last sync: exit 1, reported" \
        "$?:$(grep -c 'crm.tasks changed after the last sync' "$T/fin.err"):$(grep -c 'changed between the last sync and the switch' "$T/fin.err")" "1:1:1"
    online rollback embed
    expect_eq "$kind: ... rollback swaps the originals back" "$rc:$(pyq 'print(db.crm.tasks.count_documents({"_id": "slipped in"}))')" "0:1"
    pyq 'db.crm.tasks.delete_one({"_id": "slipped in"})'
    online rollback embed
    # The plans below join by owner too: its index made by hand this time,
    # which no rollback drops.
    pyq 'db.crm.tasks.create_index("owner")'

    # In place: a backfill, stale copies, rollback.
    "$MONGODUMP" --uri "$uri" --db logging --archive="$T/$kind-log0.archive" --quiet
    "$REMODEL" run -q "$T/plans/backfill.json" --from "$T/$kind-log0.archive" --to "$T/$kind-backfill.archive"
    online run backfill --in-place --create-indexes --batch-size 64
    same "$kind: --in-place backfill: as remodel run" "$T/$kind-backfill.archive" \
        logging.logmsg=logmsg logging.hosts=hosts
    # The recorded mode serves (issue 25, item 6): no --in-place needed.
    online verify backfill
    expect_eq "$kind: verify of an in-place plan without --in-place: in place, nothing differs (exit 0)" \
        "$rc" 0
    pyq 'db.logging.hosts.update_one({"name": "goofy.example.com"}, {"$set": {"ipaddr": "10.9.9.9"}})'
    online verify backfill --in-place
    expect_eq "$kind: a host's address changed: verify --in-place finds the stale copies (exit 1)" "$rc" 1
    online sync backfill --in-place
    online verify backfill --in-place
    expect_eq "$kind: ... sync --in-place refreshes them: verify exit 0" "$rc:$(cat "$T/err")" "0:"
    "$MONGODUMP" --uri "$uri" --db logging --archive="$T/$kind-log1.archive" --quiet
    "$REMODEL" run -q "$T/plans/backfill.json" --from "$T/$kind-log1.archive" --to "$T/$kind-backfill1.archive"
    same "$kind: ... the copies are remodel run's on the changed data" "$T/$kind-backfill1.archive" \
        logging.logmsg=logmsg logging.hosts=hosts
    pyq 'db.logging.hosts.update_one({"name": "goofy.example.com"}, {"$set": {"ipaddr": "10.0.0.1"}})
m = db.logging.logmsg.find_one(sort=[("_id", 1)])
db.logging.logmsg.update_one({"_id": m["_id"]}, {"$set": {"host_ip": "10.7.7.7"}})
n = db.logging.logmsg.find_one({"_id": {"$gt": m["_id"]}}, sort=[("_id", 1)])
db.logging.logmsg.update_one({"_id": n["_id"]}, {"$set": {"severity": "edited"}})
print(m["_id"])' >"$T/edited"
    online rollback backfill --in-place
    expect_eq "$kind: rollback --in-place with one document whose copied field the application wrote: exit 1" "$rc" 1
    expect_message "$kind: ... that document listed with what it holds, left as it is" \
        "document { \"_id\" : { \"\$oid\" : \"$(cat "$T/edited")\" } } holds { \"host_ip\" : \"10.7.7.7\" }, written since remodel wrote it: left as it is"
    "$MONGODUMP" --uri "$uri" --db logging --archive="$T/$kind-log2.archive" --quiet
    expect_eq "$kind: ... every other document back byte for byte, but the next one, whose severity the application wrote: that kept, the copy gone" "$(pyin "$T/$kind-log0.archive" "$T/$kind-log2.archive" <<'PYEOF'
import sys, bson, rmlib
a, b = rmlib.read_archive(sys.argv[1])[0], rmlib.read_archive(sys.argv[2])[0]
def by_id(docs): return {repr(bson.decode(bytes(d))["_id"]): bytes(d) for d in docs}
hosts = by_id(a["logging.hosts"]) == by_id(b["logging.hosts"])
x, y = by_id(a["logging.logmsg"]), by_id(b["logging.logmsg"])
ks = sorted(x)
print(hosts, len(x) == len(y), sum(x[k] != y.get(k) for k in x),
      bson.decode(y[ks[1]]).get("severity"), "host_ip" in bson.decode(y[ks[1]]))
PYEOF
)" "True True 2 edited False"
    # The second back as it was, for what follows.
    pyin "$uri" "$T/$kind-log0.archive" <<'PYEOF'
import sys, bson, pymongo, rmlib
orig = sorted((bson.decode(bytes(d)) for d in rmlib.read_archive(sys.argv[2])[0]["logging.logmsg"]),
              key=lambda d: d["_id"])[1]
pymongo.MongoClient(sys.argv[1]).logging.logmsg.replace_one({"_id": orig["_id"]}, orig)
PYEOF
    # The one left: status says so and what to do; --force and --forget
    # together are refused; --force restores it.
    "$REMODEL" online status "$T/plans/backfill.json" --uri "$uri" >"$T/status" 2>&1
    expect_eq "$kind: status after it: the document left, and the way out" \
        "$(grep -c '^rollback: 1 document(s) changed since remodel wrote them were left as they are; remodel online rollback .*backfill.json --force restores their originals' "$T/status")" 1
    online rollback backfill --force --forget
    expect_eq "$kind: rollback --force --forget: refused (exit 2)" "$rc:$(grep -c 'one or the other' "$T/err")" "2:1"
    run_rm online rollback "$T/plans/backfill.json" --uri "$uri" --force
    expect_eq "$kind: rollback --force: exit 0" "$rc" 0
    expect_message "$kind: ... says it restored the one changed since" \
        'step 1 (denormalize) logging.logmsg: 1 restored, 0 left (1 of them changed since remodel wrote them: --force)'
    "$MONGODUMP" --uri "$uri" --db logging --archive="$T/$kind-log3.archive" --quiet
    expect_eq "$kind: ... every document its original (fields and values), the plan forgotten" \
        "$(as_before "$T/$kind-log0.archive" "$T/$kind-log3.archive"):$(pyq 'print(db.remodel.plans.count_documents({"_id": "'"$(pid backfill)"'"}))')" "True 0 True:0"
    # --forget: the changed document kept as the application left it.
    online run backfill --create-indexes --in-place
    pyq 'm = db.logging.logmsg.find_one(sort=[("_id", 1)])
db.logging.logmsg.update_one({"_id": m["_id"]}, {"$set": {"severity": "edited again", "host_ip": "10.7.7.8"}})'
    run_rm online rollback "$T/plans/backfill.json" --uri "$uri" --forget
    expect_eq "$kind: rollback --forget: exit 0, the changed one kept as it is, no backup left, the plan forgotten" \
        "$rc:$(grep -c 'logging.logmsg: [0-9]* restored, 0 left; 1 kept as they are: --forget' "$T/err"):$(pyq 'print(db.logging.logmsg.find_one(sort=[("_id", 1)])["severity"], sum(db.remodel[c].count_documents({}) for c in db.remodel.list_collection_names() if c.startswith("backup.")), db.remodel.plans.count_documents({"_id": "'"$(pid backfill)"'"}))')" \
        "0:1:edited again 0 0"
    # That document back as it was, for what follows.
    pyin "$uri" "$T/$kind-log0.archive" <<'PYEOF'
import sys, bson, pymongo, rmlib
orig = min((bson.decode(bytes(d)) for d in rmlib.read_archive(sys.argv[2])[0]["logging.logmsg"]),
           key=lambda d: d["_id"])
pymongo.MongoClient(sys.argv[1]).logging.logmsg.replace_one({"_id": orig["_id"]}, orig)
PYEOF
    # Two in-place steps on one collection, the second removing a field
    # from the middle (mongo-java-server keeps a replaced document's field
    # order, so the version the second step's rollback restores need not be
    # the first step's bytes): rollback restores both, exit 0.
    online run twostep --in-place
    online rollback twostep
    "$MONGODUMP" --uri "$uri" --db logging --archive="$T/$kind-log4.archive" --quiet
    expect_eq "$kind: two in-place steps on one collection: rollback restores every document (exit 0)" \
        "$rc:$(as_before "$T/$kind-log0.archive" "$T/$kind-log4.archive")" "0:True 0 True"

    # pause from another process, then resume.
    pyq 'db.crm.drop_collection("people_remodel_'"$(pid embed)"'_1"); db.crm.drop_collection("tasks_remodel_'"$(pid embed)"'_1")'
    cp "$T/plans/embed.json" "$T/plans/paused.json"
    "$REMODEL" online run -q "$T/plans/paused.json" --uri "$uri" --batch-size 4 --pause-ms 30 >"$T/run.out" 2>"$T/run.err" &
    pid=$!
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do [ "$(pyq 'print(db.remodel.checkpoints.count_documents({"_id": {"$regex": "^paused"}}))')" != 0 ] && break; sleep 0.1; done
    online pause paused
    expect_eq "$kind: pause: exit 0" "$rc" 0
    sleep 1
    a=$(pyq 'print(db.remodel.checkpoints.find_one({"_id": "'"$(pid paused)"':1"})["seen"])')
    sleep 1.5
    b=$(pyq 'print(db.remodel.checkpoints.find_one({"_id": "'"$(pid paused)"':1"})["seen"])')
    expect_eq "$kind: a paused run reads nothing more" "$a" "$b"
    online resume paused
    wait $pid
    expect_eq "$kind: resumed, the run finishes: exit 0" "$?" 0
    same "$kind: ... with remodel run's result" "$T/$kind-embed1.archive" \
        crm.people=people_remodel_$(pid paused)_1 crm.tasks=tasks_remodel_$(pid paused)_1

    # --log-format json and --batch-time.
    cp "$T/plans/embed.json" "$T/plans/logged.json"
    run_rm online run "$T/plans/logged.json" --uri "$uri" --log-format json --batch-size 4 --batch-time 2000
    expect_eq "$kind: --log-format json --batch-time: every batch a JSON line; batches grow from 4" \
        "$rc:$(python3 -c 'import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(all({"step", "op", "pass", "ns", "batch", "ms", "read", "written", "rate"} <= set(l) for l in lines),
      max(l["batch"] for l in lines) > 4, lines[-1]["read"] == 1000 - 0 or lines[-1]["ns"])' "$T/err")" \
        "0:True True crm.tasks"
    same "$kind: ... with remodel run's result" "$T/$kind-embed1.archive" \
        crm.people=people_remodel_$(pid logged)_1 crm.tasks=tasks_remodel_$(pid logged)_1
    # --write-concern reaches the writes; a bad one is refused.
    cp "$T/plans/embed.json" "$T/plans/wc.json"
    online run wc --write-concern majority
    expect_eq "$kind: --write-concern majority: exit 0" "$rc:$(cat "$T/err")" "0:"
    same "$kind: ... with remodel run's result" "$T/$kind-embed1.archive" \
        crm.people=people_remodel_$(pid wc)_1 crm.tasks=tasks_remodel_$(pid wc)_1
    online run wc --write-concern most
    expect_eq "$kind: --write-concern most: refused (exit 2), one line" "$rc:$(grep -c . "$T/err")" "2:1"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done

# A server restart in the middle of a run (FerretDB keeps its data).
[ -z "${REMODEL_TEST_URI:-}" ] && start ferretdb 0 restart && {
    port=${uri##*:}; port=${port%/}
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --noIndexRestore --quiet
    "$REMODEL" run -q "$T/plans/embed.json" --from "$S" --to "$T/embed0.archive"
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/run.err"
    "$REMODEL" online run "$T/plans/embed.json" --uri "$uri" --create-indexes --batch-size 3 \
        --pause-ms 10 --retry-for 60 >"$T/run.out" 2>"$T/run.err" &
    pid=$!
    sleep 1
    "$SERVER" stop "$T/restart" >/dev/null 2>&1
    sleep 3
    start ferretdb "$port" restart
    wait $pid
    rrc=$?
    expect_eq "ferretdb stopped for 3 s and started again mid-run: the run retries and finishes (exit 0)" \
        "$rrc:$(grep -c 'retrying in' "$T/run.err" | awk '{ print ($1 > 0) }')" "0:1"
    [ $rrc == 0 ] || tail -n 3 "$T/run.err" >&2
    same "ferretdb restarted mid-run: remodel run's result" "$T/embed0.archive" \
        crm.people=people_remodel_$(pid embed)_1 crm.tasks=tasks_remodel_$(pid embed)_1
    "$SERVER" stop "$T/restart" >/dev/null 2>&1
    run_rm online run "$T/plans/embed.json" --uri "$uri" --retry-for 2
    expect_eq "a server that stays down: the run gives up after --retry-for, exit 1" "$rc" 1
}
