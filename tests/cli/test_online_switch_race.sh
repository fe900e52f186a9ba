#!/usr/bin/env bash
# A switch that the application's writes race (issue 35, item 5):
# `finalize --writes-stopped` of dumps/plans/embed-tasks.json while writes
# in fact go on: at the K-th rename (tests/peers/killat.sh --exec, the
# process stopped there) the application inserts into the namespace
# between its two renames (K=2: crm.tasks, renamed away, its result not
# yet in place; K=4: crm.people), which makes that collection again. On
# FerretDB (K=2) and mongo-java-server (K=4; RACE_KS="2 4" runs both on
# both), with the sample's crm (its tasks cut to 300):
#   - finalize completes the switch, the new collection renamed aside
#     (COLL_remodel_ID_raced_1), and fails (exit 1) naming it and how many
#     documents it holds: the results lack them;
#   - following its advice loses nothing: rollback (exit 0) puts the
#     originals back and carries the raced documents into them (the
#     raced collection dropped); sync, then finalize with the writes
#     stopped (exit 0): the inserted task is in its owner's tasks, the
#     inserted person in crm.people;
# and rollback raced the same way (an insert into crm.tasks at its 4th
# rename, crm.tasks renamed away and the original not yet back): exit 0,
# the originals back with the inserted task, no collection left beside
# them but the results. On today's code finalize stopped half-way (exit
# 1), and status's "rollback undoes it" was refused by rollback.
#
# A write to a namespace the switch has already put in place: a person of
# the new design (with a task) inserted into crm.people once its renames
# are done, before the switch is noted done (online_switch_note's 6th
# call), on FerretDB with its oplog, mongo-java-server with its change
# streams and mongo-java-server without a log:
#   - with a log finalize fails (exit 1: the log shows a write to a
#     source), and rollback, as it advises, refuses (exit 2) naming the
#     write (1 document by the log; without a log, crm.people changed by
#     the checksums), nothing renamed; without a log finalize succeeds and
#     rollback refuses the same way;
#   - rollback --carry-writes (exit 0) carries the person and its task
#     back into the originals; sync and finalize again (exit 0): the
#     person is in crm.people with its task.
# Before the switch's mark was taken ahead of its first rename, the
# write counted as what the switch put in place: rollback exited 0, and
# the next one dropped it with the results.
# RACE_AFTER_ONLY=1: only this part.
#   REMODEL=build/remodel bash tests/cli/test_online_switch_race.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "switch race: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
cat >"$T/insert.py" <<'PYEOF'
import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True).crm
if sys.argv[2] == "tasks":
    owner = sorted(d["_id"] for d in c[sys.argv[3]].find({}, {"_id": 1}))[0]
    c.tasks.insert_one({"_id": "raced-task", "owner": owner, "description": "inserted during the switch"})
elif sys.argv[2] == "after":
    c.people.insert_one({"_id": "after-switch", "name": "written after the switch",
                         "tasks": [{"_id": "after-task", "description": "written after the switch"}]})
else:
    c.people.insert_one({"_id": "raced-person", "name": "inserted during the switch"})
PYEOF
# fresh KIND DIR: a server there with crm, its tasks cut to 300.
fresh() {
    online_start "$1" "$2" || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    py 'ids = [d["_id"] for d in c.crm.tasks.find({}, {"_id": 1}).sort("_id", 1)][300:]
c.crm.tasks.delete_many({"_id": {"$in": ids}})'
}
# colls: the collections of crm, sorted, with the plan's id as ID.
colls() { py 'print(" ".join(sorted(n.replace(sys.argv[2], "ID") for n in c.crm.list_collection_names())))' "$(pid embed)"; }

# ---- a write to a namespace already switched in ----
for v in ${RACE_AFTER:-ferretdb:changelog java:changelog java:}; do
    kind=${v%%:*} log=${v#*:}
    name="$kind${log:+ $log}: a person inserted into crm.people once it is switched in"
    online_start "$kind" "$T/srv-after" 0 "$log" || continue
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    py 'ids = [d["_id"] for d in c.crm.tasks.find({}, {"_id": 1}).sort("_id", 1)][300:]
c.crm.tasks.delete_many({"_id": {"$in": ids}})'
    online run embed --create-indexes -q
    "$KILLAT" -q --exec "python3 '$T/insert.py' '$uri' after" \
        online_switch_note 6 -- "$ONLINE" finalize "$T/plans/embed.json" --uri "$uri" \
        --writes-stopped --max-window 0 >/dev/null 2>"$T/err"
    frc=$?
    [ -n "${RACE_DEBUG:-}" ] && cat "$T/err" >&2
    if [ -n "$log" ]; then
        said=$(grep -c 'the change log shows 1 document(s) of the sources written between the last sync and the switch' "$T/err")
        want="1:1" how="the change log: crm.people: 1 document(s)"
    else
        said=0 want="0:0" how="the checksums recorded at the switch: crm.people: changed"
    fi
    online rollback embed
    [ -n "${RACE_DEBUG:-}" ] && cat "$T/err" >&2
    expect_eq "$name: finalize ${log:+fails naming it, }rollback refuses (exit 2) naming the write, nothing renamed" \
        "$frc:$said:$rc:$(grep -c "written since the switch, by $how; a rollback would lose those writes" "$T/err"):$(colls)" \
        "$want:2:1:people people_remodel_ID_backup tasks tasks_remodel_ID_backup"
    online rollback embed --carry-writes
    expect_eq "$name: rollback --carry-writes (exit 0): the person and its task carried into the originals" \
        "$rc:$(py 'print(c.crm.people.find_one({"_id": "after-switch"}), c.crm.tasks.find_one({"_id": "after-task"}, {"_id": 0, "owner": 1}))'):$(colls)" \
        "0:{'_id': 'after-switch', 'name': 'written after the switch'} {'owner': 'after-switch'}:people people_remodel_ID_1 tasks tasks_remodel_ID_1"
    online sync embed -q
    s=$rc
    online finalize embed --writes-stopped -q
    expect_eq "$name: ... then sync and finalize again (exit 0): the person in the new design, its task embedded" \
        "$s:$rc:$(py 'print(c.crm.people.count_documents({"_id": "after-switch", "tasks._id": "after-task"}))')" \
        "0:0:1"
    "$SERVER" stop "$T/srv-after" >/dev/null 2>&1
done
[ -n "${RACE_AFTER_ONLY:-}" ] && exit 0

for kind in ferretdb java; do
    ks=${RACE_KS:-}
    [ -z "$ks" ] && { [ "$kind" == ferretdb ] && ks=2 || ks=4; }
    for K in $ks; do
        name="$kind: an insert at finalize's rename $K"
        fresh "$kind" "$T/srv-$kind-$K" || continue
        e=$(pid embed)
        online run embed --create-indexes -q
        if [ "$K" == 2 ]; then
            what=tasks want="people people_remodel_ID_backup tasks tasks_remodel_ID_backup tasks_remodel_ID_raced_1"
        else
            what=people want="people people_remodel_ID_backup people_remodel_ID_raced_1 tasks tasks_remodel_ID_backup"
        fi
        raced="crm.${what}_remodel_${e}_raced_1"
        "$KILLAT" -q --exec "python3 '$T/insert.py' '$uri' $what people_remodel_${e}_1" \
            online_switch_rename "$K" -- "$ONLINE" finalize "$T/plans/embed.json" --uri "$uri" \
            --writes-stopped --max-window 0 >/dev/null 2>"$T/err"
        rc=$?
        expect_eq "$name: the switch completed, the raced collection aside, finalize fails (exit 1) naming it" \
            "$rc:$(grep -c "1 document(s) the application wrote to crm.$what during the switch are in $raced" "$T/err"):$(grep -c 'remodel online rollback puts the originals back and carries those documents into them; then sync and finalize again, with the writes stopped' "$T/err"):$(colls)" \
            "1:1:1:$want"
        online rollback embed
        expect_eq "$name: rollback (exit 0): the originals back, the raced document carried into crm.$what" \
            "$rc:$(grep -c "1 document(s) written to crm.$what during the switch carried back into it" "$T/err"):$(py 'print(c.crm.tasks.count_documents({"_id": "raced-task"}) + c.crm.people.count_documents({"_id": "raced-person"}))'):$(colls)" \
            "0:1:1:people people_remodel_ID_1 tasks tasks_remodel_ID_1"
        online sync embed -q
        s=$rc
        online finalize embed --writes-stopped -q
        expect_eq "$name: ... then sync and finalize with the writes stopped (exit 0): the write in the new design" \
            "$s:$rc:$(py 'print(c.crm.people.count_documents({"tasks._id": "raced-task"}) + c.crm.people.count_documents({"_id": "raced-person"}))')" \
            "0:0:1"
        "$SERVER" stop "$T/srv-$kind-$K" >/dev/null 2>&1
    done

    # rollback raced: crm.tasks made again between its two renames back.
    fresh "$kind" "$T/srv-$kind-back" || continue
    e=$(pid embed)
    online run embed --create-indexes -q
    online finalize embed --writes-stopped -q
    "$KILLAT" -q --exec "python3 '$T/insert.py' '$uri' tasks people" \
        online_switch_rename 4 -- "$ONLINE" rollback "$T/plans/embed.json" --uri "$uri" \
        >/dev/null 2>"$T/err"
    rc=$?
    expect_eq "$kind: an insert at rollback's rename 4: exit 0, the raced task carried into the original crm.tasks" \
        "$rc:$(grep -c 'crm.tasks was made again by the application' "$T/err"):$(py 'print(c.crm.tasks.count_documents({"_id": "raced-task"}), c.crm.tasks.count_documents({}))'):$(colls)" \
        "0:1:1 301:people people_remodel_ID_1 tasks tasks_remodel_ID_1"
    "$SERVER" stop "$T/srv-$kind-back" >/dev/null 2>&1
done
