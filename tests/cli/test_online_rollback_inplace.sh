#!/usr/bin/env bash
# In-place rollback keeps every acknowledged write (issue 35, item 4): a
# plan that denormalizes each task's owner's email into crm.tasks in
# place, a seeded application writing tasks and people throughout
# (tests/transforms/inplace_undo.py: each acknowledged task write
# recorded), and a kill matrix: run killed at its 2nd flush of writes
# (tests/peers/killat.sh), run again; follow killed with SIGKILL at a
# seeded moment; sync killed at its first flush, sync again; then the
# writes stop and rollback. On FerretDB with a 1 MiB oplog (history lost
# under the writer) and mongo-java-server with its change streams (one
# seed each by default; RI_SEEDS="1 2 3 4 5" for more trials): rollback exits 0, every task holds the last value the
# application gave each field it wrote, none keeps owner_email, and every
# task the application never wrote is its original (byte for byte on
# FerretDB, the same fields and values on mongo-java-server, whose
# replace keeps the stored order). Then one task whose owner_email the
# application itself wrote after remodel: rollback leaves it (exit 1),
# naming it with what it holds; the task beside it, whose description
# the application wrote, gets its original back with that description.
# RI_KINDS: the servers; RI_TRIAL_KINDS: those that run the seeded
# trials (make check: java only; make online-rollback-inplace: both, five
# seeds each): on FerretDB about one trial in four still ends with one
# acknowledged $set undone (a task's priority back to its value before
# the writer: issue 35 stays open for it), so that server's trials are a
# campaign until it is fixed; RI_DEBUG=1: rollback's messages on stderr.
#   REMODEL=build/remodel bash tests/cli/test_online_rollback_inplace.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "rollback in place: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
IU=$ROOT/tests/transforms/inplace_undo.py
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap 'for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
echo '{"remodel": 1, "steps": [{"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner", "fields": {"owner_email": "email"}}}]}' \
    >"$T/plans/inplace.json"

# fresh KIND SEED: a server with crm, its tasks cut to 120.
fresh() {
    PEERS_OPLOG_BYTES=1048576 online_start "$1" "$T/srv-$1-$2" 0 changelog || return 1
    "$MONGORESTORE" --uri "$uri" --archive="$S.archive.gz" --gzip --nsInclude 'crm.*' \
        --noIndexRestore --quiet
    py 'ids = [d["_id"] for d in c.crm.tasks.find({}, {"_id": 1}).sort("_id", 1)][120:]
c.crm.tasks.delete_many({"_id": {"$in": ids}})'
    python3 "$IU" snap "$uri" "$T/snap"
}

for kind in ${RI_KINDS:-ferretdb java}; do
    bytes=; [ "$kind" == ferretdb ] && bytes=bytes
    trials=" ${RI_TRIAL_KINDS:-java} "
    for seed in ${RI_SEEDS:-1}; do
        [[ $trials == *" $kind "* ]] || break
        name="$kind seed $seed"
        fresh "$kind" "$seed" || continue
        rm -f "$T/stop" "$T/log"
        python3 "$IU" write "$uri" "$T/stop" "$seed" "$T/log" >"$T/writes" &
        wp=$!
        sleep 0.3
        t0=$(date +%s)
        "$KILLAT" -q online_writes_flush 2 -- "$ONLINE" run "$T/plans/inplace.json" --uri "$uri" \
            --in-place --batch-size 20 -q >/dev/null 2>"$T/kerr"
        k1=$?
        online run inplace -q
        r1=$rc
        "$REMODEL" online follow "$T/plans/inplace.json" --uri "$uri" --pause 100ms \
            >/dev/null 2>"$T/follow.err" &
        fp=$!
        sleep "$(python3 -c "import random; random.seed($seed); print(round(random.uniform(1, 3), 2))")"
        kill -9 "$fp"; wait "$fp" 2>/dev/null
        "$KILLAT" -q online_writes_flush 1 -- "$ONLINE" sync "$T/plans/inplace.json" --uri "$uri" \
            -q >/dev/null 2>"$T/kerr"
        k2=$?
        online sync inplace -q
        r2=$rc
        touch "$T/stop"; wait "$wp"
        [ -n "${RI_DEBUG:-}" ] && echo "trial: $(($(date +%s) - t0)) s" >&2
        expect_eq "$name: run killed at a flush, run again; sync killed (or done before its flush), sync again" \
            "$k1:$r1:$([ "$k2" == 137 ] || [ "$k2" == 3 ] && echo ok):$r2" "137:0:ok:0"
        online rollback inplace
        [ -n "${RI_DEBUG:-}" ] && cat "$T/err" >&2
        expect_eq "$name: rollback after $(cat "$T/writes") application writes: exit 0, every write kept, every other task its original" \
            "$rc:$(python3 "$IU" check "$uri" "$T/snap" "$T/log" "$T/err" $bytes)" \
            "0:lost 0 stale 0 unnamed 0 changed 0"
        "$SERVER" stop "$T/srv-$kind-$seed" >/dev/null 2>&1
    done

    # The application writes remodel's own field of one task, another
    # field of the next.
    fresh "$kind" conflict || continue
    online run inplace --in-place -q
    py 'ids = [d["_id"] for d in c.crm.tasks.find({"owner_email": {"$exists": True}}, {"_id": 1}).sort("_id", 1)][:2]
c.crm.tasks.update_one({"_id": ids[0]}, {"$set": {"owner_email": "mine@app.test"}})
c.crm.tasks.update_one({"_id": ids[1]}, {"$set": {"description": "the application s"}})
open(sys.argv[2], "w").write(str(ids[0]) + " " + str(ids[1]))' "$T/ids"
    read -r own other <"$T/ids"
    restorable=$(py 'print(c.crm.tasks.count_documents({"owner_email": {"$exists": True}}) - 1)')
    online rollback inplace
    expect_eq "$kind: a task whose owner_email the application wrote: left (exit 1), named with what it holds" \
        "$rc:$(grep -c "document { \"_id\" : { \"\$oid\" : \"$own\" } } holds { \"owner_email\" : \"mine@app.test\" }, written since remodel wrote it: left as it is" "$T/err"):$(grep -o '[0-9]* restored, [0-9]* left' "$T/err")" \
        "1:1:$restorable restored, 1 left"
    expect_eq "$kind: ... the task beside it: its original back, the application's description kept" \
        "$(py 'from bson import ObjectId
d = c.crm.tasks.find_one({"_id": ObjectId(sys.argv[2])})
print("owner_email" in d, d["description"])' "$other")" "False the application s"
    online rollback inplace --forget
    expect_eq "$kind: ... rollback --forget keeps it as it is (exit 0)" \
        "$rc:$(py 'from bson import ObjectId
print(c.crm.tasks.find_one({"_id": ObjectId(sys.argv[2])})["owner_email"])' "$own")" "0:mine@app.test"
    "$SERVER" stop "$T/srv-$kind-conflict" >/dev/null 2>&1
done
