#!/usr/bin/env bash
# Each online command once on FerretDB and once on mongo-java-server, the
# results read back from the server and compared with `remodel run` on the
# same documents, byte for byte (tests/transforms/online_same.py). The
# suites that check a command's logic in depth run on one server each
# (online_kind in lib.sh; REMODEL_TEST_BOTH=1 runs them on both); this
# one keeps every command proven on both:
#  - run side by side (an embed with --create-indexes), status, verify,
#    sync after a tampered result, finalize --writes-stopped, rollback
#    after finalize (the originals back), rollback again (state forgotten);
#  - run --in-place (a denormalize and a summarize backfill), status,
#    verify, rollback (every document back byte for byte).
#   REMODEL=build/remodel bash tests/cli/test_online_smoke.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms

mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
cp "$ROOT/dumps/plans/backfill-logging.json" "$T/plans/backfill.json"
online() { run_rm online "$1" -q "$T/plans/$2.json" --uri "$uri" "${@:3}"; }

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue
    # logging.logmsg cut to 200 messages: FerretDB scans a collection per
    # conditional update (test_online_ops.sh says the cost).
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --nsInclude 'logging.*' \
        --noIndexRestore --quiet
    py 'ids = [d["_id"] for d in c.logging.logmsg.find({}, {"_id": 1}).sort("_id", 1)]
c.logging.logmsg.delete_many({"_id": {"$in": ids[200:]}})'

    # Side by side.
    offline_run embed crm
    online run embed --create-indexes --batch-size 20
    expect_eq "$kind: run: exit 0, silent" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: ... the results are remodel run's, byte for byte" "$T/embed.archive" \
        crm.people="$(target crm people)" crm.tasks="$(target crm tasks)"
    run_rm online status "$T/plans/embed.json" --uri "$uri"
    expect_eq "$kind: status: exit 0, both namespaces of the step done" \
        "$rc:$(awk '/^1 / { print $1, $2, $3, $4 }' "$T/out" | tr '\n' '|')" "0:1 embed crm.people done|1 embed/2 crm.tasks done|"
    online verify embed
    expect_eq "$kind: verify: exit 0, silent" "$rc:$(cat "$T/err")" "0:"
    py 'c.crm[sys.argv[2]].update_one({}, {"$set": {"tasks": []}})' "$(target crm people)"
    online verify embed
    expect_eq "$kind: a tampered result: verify exit 1" "$rc" 1
    online sync embed
    online verify embed
    expect_eq "$kind: ... sync puts it right: verify exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: ... the results remodel run's again" "$T/embed.archive" \
        crm.people="$(target crm people)" crm.tasks="$(target crm tasks)"
    online finalize embed --writes-stopped
    expect_eq "$kind: finalize --writes-stopped: exit 0" "$rc" 0
    online_same "$kind: ... crm.people and crm.tasks are the new design" "$T/embed.archive" \
        crm.people=people crm.tasks=tasks
    online_same "$kind: ... the originals kept as backups" "$T/crm-src.archive" \
        crm.people="people_remodel_$(pid embed)_backup" crm.tasks="tasks_remodel_$(pid embed)_backup"
    online rollback embed
    expect_eq "$kind: rollback after finalize: exit 0" "$rc" 0
    online_same "$kind: ... the originals back, byte for byte" "$T/crm-src.archive" \
        crm.people=people crm.tasks=tasks
    online rollback embed
    expect_eq "$kind: rollback again: the results dropped, the plan forgotten" \
        "$rc:$(py 'print(sorted(c.crm.list_collection_names()), c.remodel.plans.count_documents({}))')" \
        "0:['people', 'tasks'] 0"

    # In place.
    offline_run backfill logging
    online run backfill --in-place --create-indexes --batch-size 64
    expect_eq "$kind: run --in-place: exit 0, silent" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: ... the documents are remodel run's, byte for byte" "$T/backfill.archive" \
        logging.logmsg=logmsg logging.hosts=hosts
    run_rm online status "$T/plans/backfill.json" --uri "$uri"
    expect_eq "$kind: status: in place" "$rc:$(grep -c '^mode: in place' "$T/out")" "0:1"
    online verify backfill
    expect_eq "$kind: verify in place: exit 0, silent" "$rc:$(cat "$T/err")" "0:"
    online rollback backfill
    expect_eq "$kind: rollback in place: exit 0" "$rc" 0
    online_same "$kind: ... every document back, byte for byte" "$T/logging-src.archive" \
        logging.logmsg=logmsg logging.hosts=hosts
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
