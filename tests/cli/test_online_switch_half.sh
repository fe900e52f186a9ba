#!/usr/bin/env bash
# A finalize stopped part way through the switch, then rolled back (issue
# 35's last gap): `finalize --writes-stopped` of dumps/plans/embed-tasks.json
# killed at its 3rd rename (tests/peers/killat.sh), crm.tasks switched in
# (its two renames done), crm.people not yet; the application (its writes
# said stopped, in fact not) inserts an orphan task into crm.tasks and
# changes one already there. On FerretDB with its oplog,
# mongo-java-server with its change streams and mongo-java-server without
# a log (the digests recorded at the switch), with the sample's crm (its
# tasks cut to 300):
#   - rollback refuses (exit 2) naming the writes (2 documents by the log;
#     without one, crm.tasks changed by the checksums) and that crm.tasks
#     was switched in, crm.people not; nothing renamed;
#   - rollback --carry-writes killed at its first rename, then rollback
#     without the flag (exit 0, the choice kept): both writes in the
#     restored crm.tasks (301 tasks); sync and finalize again (exit 0):
#     they are in the new design;
#   - rollback of that (nothing written, exit 0), sync, finalize killed
#     the same way and a task inserted: rollback
#     --discard-writes-after-switch (exit 0), naming it: the original
#     crm.tasks without it, the result beside it holding it; rollback
#     again refuses to drop it (exit 2) naming crm.tasks; with the flag
#     again, dropped, said (exit 0);
#   - run again, finalize killed the same way, a person changed in the
#     original crm.people (not switched in) and a task inserted into
#     crm.tasks: rollback --carry-writes carries the task but refuses
#     (exit 1) to overwrite the person with what the inverse makes,
#     naming crm.people, the person kept; --discard-writes-after-switch
#     then drops the results (exit 0).
# On today's code the half-done switch was undone with its mark forgotten:
# the first rollback exited 0 and the writes were dropped with the results.
# HALF_DEBUG=1: each command's stderr.
#   REMODEL=build/remodel bash tests/cli/test_online_switch_half.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "switch half: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"

# colls: the collections of crm, sorted, with the plan's id as ID.
colls() { py 'print(" ".join(sorted(n.replace(sys.argv[2], "ID") for n in c.crm.list_collection_names())))' "$(pid embed)"; }
# killed FUNCTION K CMD ARGS...: remodel-online CMD killed at FUNCTION's
# K-th call; its status in $krc.
killed() {
    "$KILLAT" --timeout 600 -q --log "$T/klog" "$1" "$2" -- "$ONLINE" "$3" "$T/plans/embed.json" \
        --uri "$uri" "${@:4}" >/dev/null 2>"$T/kerr"
    krc=$?
    [ -n "${HALF_DEBUG:-}" ] && cat "$T/kerr" >&2
}
debug() { [ -n "${HALF_DEBUG:-}" ] && cat "$T/err" >&2; }
half="people people_remodel_ID_1 tasks tasks_remodel_ID_backup"
back="people people_remodel_ID_1 tasks tasks_remodel_ID_1"

for v in ${HALF_KINDS:-ferretdb:changelog java:changelog java:}; do
    kind=${v%%:*} log=${v#*:}
    name="$kind${log:+ $log}"
    online_start "$kind" "$T/srv-half" 0 "$log" || continue
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    py 'ids = [d["_id"] for d in c.crm.tasks.find({}, {"_id": 1}).sort("_id", 1)][300:]
c.crm.tasks.delete_many({"_id": {"$in": ids}})'
    online run embed --create-indexes -q
    killed online_switch_rename 3 finalize --writes-stopped
    # The orphan tasks stay in crm.tasks in the new design: one changed.
    changed=$(py 'people = set(d["_id"] for d in c.crm.people.find({}, {"_id": 1}))
orphan = sorted((d["_id"] for d in c.crm.tasks.find() if d.get("owner") not in people), key=str)[0]
c.crm.tasks.update_one({"_id": orphan}, {"$set": {"description": "changed after the switch"}})
c.crm.tasks.insert_one({"_id": "half-task", "owner": "nobody", "description": "written after the switch"})
print(str(orphan))')
    if [ -n "$log" ]; then
        how="the change log: crm.tasks: 2 document(s)" how1="the change log: crm.tasks: 1 document(s)" one="1 document(s)"
    else
        how="the checksums recorded at the switch: crm.tasks: changed" how1=$how one=changed
    fi
    online rollback embed
    debug
    expect_eq "$name: finalize killed after crm.tasks switched in, written there: rollback refuses (exit 2) naming the writes, nothing renamed" \
        "$krc:$rc:$(grep -c "written since the switch, by $how; a rollback would lose those writes; nothing renamed" "$T/err"):$(grep -c 'finalize stopped part way through the switch: crm.tasks switched in (checked for writes since the switch), crm.people not yet' "$T/err"):$(colls)" \
        "137:2:1:1:$half"

    # --carry-writes, killed at its first rename: the choice kept.
    killed online_switch_rename 1 rollback --carry-writes
    k1=$krc
    online rollback embed
    debug
    expect_eq "$name: rollback --carry-writes killed at its first rename, run again without the flag (exit 0): both writes carried into the original crm.tasks" \
        "$k1:$rc:$(grep -c 'carried back into crm.tasks: 1 inserted, 1 replaced, 0 deleted' "$T/err"):$(py 'print(c.crm.tasks.count_documents({}), c.crm.tasks.count_documents({"_id": "half-task"}), [str(d["_id"]) for d in c.crm.tasks.find({"description": "changed after the switch"})] == [sys.argv[2]])' "$changed"):$(colls)" \
        "137:0:1:301 1 True:$back"
    online sync embed -q
    s=$rc
    online finalize embed --writes-stopped -q
    expect_eq "$name: ... then sync and finalize (exit 0): both writes in the new design's crm.tasks" \
        "$s:$rc:$(py 'print(c.crm.tasks.count_documents({"_id": "half-task"}), c.crm.tasks.count_documents({"description": "changed after the switch"}), c.crm.people.count_documents({"tasks._id": "half-task"}))')" \
        "0:0:1 1 0"

    # --discard-writes-after-switch: kept beside the originals, guarded.
    online rollback embed -q
    s=$rc
    online sync embed -q
    s=$s:$rc
    killed online_switch_rename 3 finalize --writes-stopped
    py 'c.crm.tasks.insert_one({"_id": "discarded-task", "owner": "nobody", "description": "written after the switch"})'
    online rollback embed --discard-writes-after-switch
    debug
    expect_eq "$name: killed again, written again: rollback --discard-writes-after-switch (exit 0), naming the write: the original without it, the result beside it holding it" \
        "$s:$krc:$rc:$(grep -c "written since the switch, by $how1: left in the results beside the originals (--discard-writes-after-switch)" "$T/err"):$(py 'print(c.crm.tasks.count_documents({"_id": "discarded-task"}), c.crm[sys.argv[2]].count_documents({"_id": "discarded-task"}))' "tasks_remodel_$(pid embed)_1"):$(colls)" \
        "0:0:137:0:1:0 1:$back"
    online rollback embed
    expect_eq "$name: ... rollback again refuses to drop it (exit 2), naming crm.tasks" \
        "$rc:$(grep -c "the results hold writes made after the switch (crm.tasks: $one): nothing dropped" "$T/err"):$(colls)" "2:1:$back"
    online rollback embed --discard-writes-after-switch
    expect_eq "$name: ... with the flag again the results go, said (exit 0)" \
        "$rc:$(grep -c "the writes made after the switch (crm.tasks: $one) are dropped with the results" "$T/err"):$(colls)" "0:1:people tasks"

    # A person changed in crm.people, not switched in yet, its original
    # where the application writes: a carry keeps it, refusing.
    online run embed --create-indexes -q
    s=$rc
    killed online_switch_rename 3 finalize --writes-stopped
    py 'p = sorted(d["_id"] for d in c.crm.people.find({}, {"_id": 1}))[0]
c.crm.people.update_one({"_id": p}, {"$set": {"name": "changed in the original"}})
c.crm.tasks.insert_one({"_id": "carried-task", "owner": "nobody", "description": "written after the switch"})'
    online rollback embed --carry-writes
    debug
    expect_eq "$name: a person changed in crm.people before its switch: rollback --carry-writes carries the task, keeps the person, refuses (exit 1) naming crm.people" \
        "$s:$krc:$rc:$(grep -c 'what the inverse makes differs from the originals of those it had not (crm.people: 1 document(s))' "$T/err"):$(py 'print(c.crm.people.count_documents({"name": "changed in the original"}), c.crm.tasks.count_documents({"_id": "carried-task"}))'):$(colls)" \
        "0:137:1:1:1 1:$back"
    online rollback embed --discard-writes-after-switch -q
    expect_eq "$name: ... --discard-writes-after-switch then drops the results (exit 0), the person kept" \
        "$rc:$(py 'print(c.crm.people.count_documents({"name": "changed in the original"}))'):$(colls)" "0:1:people tasks"
    "$SERVER" stop "$T/srv-half" >/dev/null 2>&1
done
