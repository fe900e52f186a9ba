#!/usr/bin/env bash
# remodel online: the mode a plan's run recorded is used (issue 25, item
# 6), on mongo-java-server (online_kind: test_online_smoke.sh runs each
# command on both servers; REMODEL_TEST_BOTH=1 runs this suite on both).
#  - A plan run with --in-place: status says "mode: in place"; verify, sync,
#    run again and rollback without --in-place work in place (exit 0, their
#    usual lines; rollback restores every document byte for byte);
#    finalize without it says there is nothing to finalize in place.
#  - A plan run side by side: --in-place given to verify, sync or rollback
#    contradicts it, as --force or --forget given to rollback: refused
#    (exit 2, saying so), nothing written.
# And issue 25, items 12 and 8:
#  - rollback of the side-by-side plan drops the index its run's
#    --create-indexes made (crm.tasks' owner_1), saying so; one there
#    before the run stays;
#  - an embed with overflow pages: its line says how many went where
#    ("243 written (98 to crm.people, 145 to crm.task_pages \"overflowTo\")", the
#    namespace a step makes named, then its plan key),
#    and the pages' collection has parent_id_1, as `remodel run`'s output;
#  - status while a run holds the lease before its first batch (the run
#    stopped there under gdb): "starting", by whom, not "has not run";
#    while paused: ETA "paused"; after a run paused 4 s: a rate that
#    leaves the pause out ("-" or above what the pause would allow);
#  - in place: the $set of a denormalize is conditional on _id, the field
#    read (owner) and the field written (owner_email: absent), not the
#    whole document (REMODEL_ONLINE_TRACE's command); the application
#    changes one task's owner and another's description between the read
#    and the write (under gdb): the first is redone with its new owner's
#    email, the second keeps the application's description; verify passes.
#   REMODEL=build/remodel bash tests/cli/test_online_mode.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
export LC_ALL=C

cat >"$T/backfill.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"tier": "basic"}}}
]}
EOF
cat >"$T/embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "tasks"}}
]}
EOF
cat >"$T/pages.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "tasks",
             "maxItems": 5, "onOverflow": "outlier", "overflowTo": "crm.task_pages"}}
]}
EOF
cat >"$T/tier.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.tasks", "fields": {"tier": "basic"}}}
]}
EOF
cat >"$T/email.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner", "fields": {"owner_email": "email"}}}
]}
EOF
# Between a batch's read and its write (under gdb, at the second bulk
# write: the backups, then the documents), the application changes the
# first task's owner and the second task's description.
cat >"$T/change.py" <<'EOF'
import sys, pymongo
db = pymongo.MongoClient(sys.argv[1]).crm
t = list(db.tasks.find().sort("_id", 1).limit(2))
other = db.people.find_one({"_id": {"$ne": t[0]["owner"]}}, sort=[("_id", 1)])
db.tasks.update_one({"_id": t[0]["_id"]}, {"$set": {"owner": other["_id"]}})
db.tasks.update_one({"_id": t[1]["_id"]}, {"$set": {"description": "changed by the application"}})
EOF
KILLAT=$ROOT/tests/peers/killat.sh
ONLINE=$(dirname "$REMODEL")/remodel-online
export MONGOC_DISABLE_SHM=1
# indexes COLL: crm.COLL's index names, sorted.
indexes() { pyrun -c 'import sys, pymongo
print(" ".join(sorted(pymongo.MongoClient(sys.argv[1]).crm[sys.argv[2]].index_information())))' "$uri" "$1"; }
# rate_ok PLAN PAUSED_MS: status's RATE/S of the plan's one row is "-" or
# more than its documents read over PAUSED_MS (what a rate counting the
# pauses could not be).
rate_ok() {
    run_rm online status "$T/$1.json" --uri "$uri"
    awk -v p="$2" '$1 == "1" { print ($7 == "-" || $7 + 0 > $5 * 1000 / p) ? "ok" : "rate " $7 " for " $5 " read" }' "$T/out"
}

restore() {
    [ "$1" == external ] || { "$SERVER" stop "$T/$1" >/dev/null 2>&1; rm -rf "$T/$1"; }
    online_start "$1" "$T/$1" || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
}
# snap FILE: crm.people's and crm.tasks' documents, their bytes by _id.
snap() { pyrun -c 'import json, sys, bson, pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
c = pymongo.MongoClient(sys.argv[1]).get_database("crm", codec_options=CodecOptions(document_class=RawBSONDocument))
json.dump({n: sorted(d.raw.hex() for d in c[n].find()) for n in ("people", "tasks")}, open(sys.argv[2], "w"))' "$uri" "$1"; }

for kind in $(online_kind java); do
    restore $kind || { fail "$kind: restore"; continue; }
    snap "$T/before.json"
    run_rm online run -q --in-place "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: run --in-place" "$rc:$(cat "$T/err")" "0:"
    run_rm online status "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: status: mode: in place" "$(grep -c '^mode: in place' "$T/out")" 1
    run_rm online verify "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: verify without --in-place: the recorded mode, exit 0" "$rc" 0
    expect_message "$kind: ... every result as the sources make it" \
        "remodel: verify: plan backfill.json: every result as the sources make it"
    run_rm online sync "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: sync without --in-place: the recorded mode, exit 0" \
        "$rc:$(grep -c '^remodel: sync: plan backfill.json: every result as the sources make it$' "$T/err")" "0:1"
    run_rm online run "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: run again without --in-place: resumes in place (every step done before)" \
        "$rc:$(grep -c 'done before' "$T/err")" "0:1"
    run_rm online finalize "$T/backfill.json" --uri "$uri" --writes-stopped
    expect_eq "$kind: finalize without --in-place: nothing to finalize in place (exit 2)" \
        "$rc:$(grep -c 'ran in place: its documents are already the new design' "$T/err")" "2:1"
    run_rm online rollback "$T/backfill.json" --uri "$uri"
    expect_eq "$kind: rollback without --in-place: restores in place" \
        "$rc:$(grep -c '^remodel: rollback: step 1 (set) crm.people: 98 restored, 0 left$' "$T/err")" "0:1"
    snap "$T/after.json"
    expect_eq "$kind: ... every document as it was, byte for byte" \
        "$(cmp -s "$T/before.json" "$T/after.json" && echo same)" same

    # Side by side: --in-place contradicts the record.
    run_rm online run -q "$T/embed.json" --uri "$uri" --create-indexes
    expect_eq "$kind: run side by side" "$rc:$(cat "$T/err")" "0:"
    snap "$T/sbs.json"
    for cmd in verify sync rollback; do
        run_rm online $cmd --in-place "$T/embed.json" --uri "$uri"
        expect_eq "$kind: $cmd --in-place of a side-by-side plan: refused (exit 2)" "$rc" 2
        expect_message "$kind: ... saying so" \
            "remodel: error: plan embed.json ran side by side: --in-place contradicts it (leave it out: the mode its run recorded is used)"
    done
    for flag in force forget; do
        run_rm online rollback --$flag "$T/embed.json" --uri "$uri"
        expect_eq "$kind: rollback --$flag of a side-by-side plan: refused (exit 2)" "$rc" 2
        expect_message "$kind: ... saying so" \
            "plan embed.json ran side by side: --$flag is for an in-place rollback"
    done
    snap "$T/sbs2.json"
    expect_eq "$kind: ... nothing written" "$(cmp -s "$T/sbs.json" "$T/sbs2.json" && echo same)" same
    run_rm online verify "$T/embed.json" --uri "$uri"
    expect_eq "$kind: verify without it: exit 0" "$rc" 0

    # Indexes --create-indexes made go with the plan; others stay.
    run_rm online rollback "$T/embed.json" --uri "$uri"
    expect_eq "$kind: rollback of the side-by-side plan: exit 0" "$rc" 0
    expect_message "$kind: ... dropping the index its run made, saying so" \
        "remodel: rollback: dropped index owner_1 of crm.tasks (made by --create-indexes)"
    expect_eq "$kind: ... crm.tasks' indexes as before the run" "$(indexes tasks)" "_id_"

    # Overflow pages: said, and indexed by parent_id as remodel run's are.
    pyrun -c 'import sys, pymongo; pymongo.MongoClient(sys.argv[1]).crm.tasks.create_index("owner")' "$uri"
    run_rm online run "$T/pages.json" --uri "$uri" --create-indexes
    expect_eq "$kind: an embed with overflow pages: exit 0, the pages said" \
        "$rc:$(grep -c '^remodel: step 1 (embed) crm.people: 98 read, 243 written (98 to crm.people, 145 to crm.task_pages "overflowTo")$' "$T/err")" "0:1"
    expect_eq "$kind: ... the pages' collection indexed by parent_id (as remodel run's metadata)" \
        "$(indexes "task_pages_remodel_$(plan_id "$T/pages.json")_1")" "_id_ parent_id_1"
    run_rm online rollback "$T/pages.json" --uri "$uri"
    expect_eq "$kind: ... rollback leaves the index made before the run: no index dropped" \
        "$rc:$(grep -c 'dropped index' "$T/err"):$(indexes tasks)" "0:0:_id_ owner_1"

    # status while a run holds the lease before its first batch.
    "$KILLAT" --timeout 600 -q --exec "'$REMODEL' online status '$T/tier.json' --uri '$uri' >'$T/st0' 2>&1" \
        online_checkpoint_write 1 -- "$ONLINE" run -q "$T/tier.json" --uri "$uri" >"$T/kout" 2>"$T/kerr"
    expect_eq "$kind: status before the first batch: starting, by whom; not 'has not run'" \
        "$(grep -c "^(plan tier.json: starting on .*: run by $(hostname):[0-9]*:[0-9]*, no batch done yet)$" "$T/st0"):$(grep -c 'has not run' "$T/st0")" "1:0"
    run_rm online rollback "$T/tier.json" --uri "$uri"
    # Paused 4 s: ETA "paused", and a rate that leaves the pause out.
    "$REMODEL" online run -q "$T/tier.json" --uri "$uri" --batch-size 50 --pause 100ms 2>"$T/bgerr" &
    bg=$!
    for _ in $(seq 100); do
        run_rm online status "$T/tier.json" --uri "$uri"
        grep -q '^1 ' "$T/out" && break
        sleep 0.1
    done
    run_rm online pause "$T/tier.json" --uri "$uri"
    sleep 1
    run_rm online status "$T/tier.json" --uri "$uri"
    expect_eq "$kind: status while paused: ETA paused" "$(awk '$1 == "1" { print $4, $8 }' "$T/out")" "paused paused"
    sleep 3
    run_rm online resume "$T/tier.json" --uri "$uri"
    wait $bg
    expect_eq "$kind: ... resumed, the run finishes: exit 0" "$?:$(cat "$T/bgerr")" "0:"
    # Paused 4 s, and 100 ms after each of the 20 batches: a rate over the
    # wall time since the first checkpoint would be under 1000 / 5.9 s.
    expect_eq "$kind: ... status's rate leaves the pause out" "$(rate_ok tier 5900)" ok
    run_rm online rollback "$T/tier.json" --uri "$uri"

    # In place: conditional on what the step reads and writes.
    REMODEL_ONLINE_TRACE=1 "$KILLAT" --timeout 600 -q --exec "python3 '$T/change.py' '$uri'" \
        mongoc_bulk_operation_execute 2 -- "$ONLINE" run -q "$T/email.json" --uri "$uri" --in-place \
        --batch-size 5 >"$T/kout" 2>"$T/kerr"
    expect_eq "$kind: in place with the application's changes in between: exit 0" "$?" 0
    expect_eq "$kind: ... each \$set conditional on _id, owner and owner_email (absent), not the whole task" \
        "$(grep '"update" : "tasks"' "$T/kerr" | head -n 1 | grep -cE '"updates" : \[ \{ "q" : \{ "_id" : \{ "\$oid" : "[0-9a-f]{24}" \}, "owner" : \{ "\$oid" : "[0-9a-f]{24}" \}, "owner_email" : \{ "\$exists" : false \} \}, "u" : \{ "\$set" : \{ "owner_email" : ')" 1
    expect_eq "$kind: ... the task whose owner changed got its new owner's email; the other kept the application's description" \
        "$(pyrun -c 'import sys, pymongo
db = pymongo.MongoClient(sys.argv[1]).crm
t = list(db.tasks.find().sort("_id", 1).limit(2))
print([x["owner_email"] == db.people.find_one({"_id": x["owner"]})["email"] for x in t], t[1]["description"])' "$uri")" \
        "[True, True] changed by the application"
    run_rm online verify "$T/email.json" --uri "$uri"
    expect_eq "$kind: ... verify: exit 0" "$rc" 0
done
