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
# seed each by default; RI_SEEDS="1 2 3 4 5" for more trials): rollback
# exits 0, every task holds the last value the application gave each
# field it wrote, none keeps owner_email, and every task the application
# never wrote is its original (byte for byte on FerretDB, the same fields
# and values on mongo-java-server, whose replace keeps the stored order).
# FerretDB 1.x's own update race (an update reads the document, then
# writes the whole of it: one whose read came before the application's
# $set puts the field back; docs/online-servers.md) can undo an application
# write before rollback; the judge (which tails the oplog throughout, so
# it keeps what the 1 MiB drops) lets such a loss pass only where the
# oplog shows that race, each named on stderr (RI_DEBUG=1, and on a
# failure); any other loss, and every one on mongo-java-server, fails. Then the same race
# made certain for remodel's side: run stopped (killat --exec) between
# reading a batch and writing it while the application $sets a new field
# and remodel's own input (owner) of two tasks, and a new field of a task
# remodel replaces whole, the run goes on: every write kept, the moved
# task's owner_email its new owner's. Then rollback stopped (killat
# --exec) after reading a task and before restoring it whole while the
# application adds a field to it (and the other tasks): the field kept,
# everything else of every task its original. Then one
# task whose owner_email the application itself wrote after remodel:
# rollback leaves it (exit 1), naming it with what it holds; the task
# beside it, whose description the application wrote, gets its original
# back with that description. RI_KINDS: the servers; RI_TRIAL_KINDS:
# those that run the seeded trials (default both; make
# online-rollback-inplace: five seeds each); RI_DEBUG=1: rollback's and
# the judge's messages on stderr.
#   REMODEL=build/remodel bash tests/cli/test_online_rollback_inplace.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "rollback in place: external deployments are not started here (skipped)"; exit 0; }
S=$ROOT/dumps/sample
IU=$ROOT/tests/transforms/inplace_undo.py
ONLINE=$(dirname "$REMODEL")/remodel-online
KILLAT=$ROOT/tests/peers/killat.sh
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
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
    pyrun "$IU" snap "$uri" "$T/snap"
}

for kind in ${RI_KINDS:-ferretdb java}; do
    bytes=; [ "$kind" == ferretdb ] && bytes=bytes
    trials=" ${RI_TRIAL_KINDS:-ferretdb java} "
    for seed in ${RI_SEEDS:-1}; do
        [[ $trials == *" $kind "* ]] || break
        name="$kind seed $seed"
        fresh "$kind" "$seed" || continue
        rm -f "$T/stop" "$T/log"
        python3 "$IU" tail "$uri" "$T/stop" "$T/oplog" &
        tp=$!
        python3 "$IU" write "$uri" "$T/stop" "$seed" "$T/log" >"$T/writes" &
        wp=$!
        sleep 0.3
        t0=$(date +%s)
        "$KILLAT" -q online_writes_flush 2 -- "$ONLINE" run "$T/plans/inplace.json" --uri "$uri" \
            --in-place --batch-size 20 -q >/dev/null 2>"$T/kerr"
        k1=$?
        online run inplace -q
        r1=$rc
        : >"$T/follow.err"
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
        touch "$T/stop"; wait "$wp" "$tp"
        [ -n "${RI_DEBUG:-}" ] && echo "trial: $(($(date +%s) - t0)) s" >&2
        expect_eq "$name: run killed at a flush, run again; sync killed (or done before its flush), sync again" \
            "$k1:$r1:$([ "$k2" == 137 ] || [ "$k2" == 3 ] && echo ok):$r2" "137:0:ok:0"
        pyrun "$IU" before "$uri" "$T/before"
        online rollback inplace
        [ -n "${RI_DEBUG:-}" ] && cat "$T/err" >&2
        got=$(pyrun "$IU" check "$uri" "$T/snap" "$T/log" "$T/err" "$T/before" "$T/oplog" \
            $bytes 2>"$T/judge")
        { [ -n "${RI_DEBUG:-}" ] || [ "$got" != "lost 0 stale 0 unnamed 0 changed 0" ]; } &&
            cat "$T/judge" >&2
        raced=; [ "$kind" == ferretdb ] &&
            raced=" ($(sed -n 's/^raced //p' "$T/judge") undone before it by FerretDB's update race)"
        expect_eq "$name: rollback after $(cat "$T/writes") application writes$raced: exit 0, every write kept, every other task its original" \
            "$rc:$got" "0:lost 0 stale 0 unnamed 0 changed 0"
        "$SERVER" stop "$T/srv-$kind-$seed" >/dev/null 2>&1
    done

    # Between run's read of the first batch and its writes (killat --exec
    # at its first flush, the backups'), the application adds priority to
    # a task that has none, gives another a new owner, and adds a field to
    # a third of 70 fields (more than a $set is built for: replaced whole,
    # on condition of every field as read, which a field added since still
    # matches): the first write keeps priority, the second misses and is
    # redone from the new owner, the third gives the new field back. The
    # application's writes are done before remodel's reach the server, so
    # FerretDB's race (above) has no part here: nothing may be lost.
    fresh "$kind" between || continue
    py 'first = [d for d in c.crm.tasks.find().sort("_id", 1).limit(20)]
t1 = next(d for d in first if "priority" not in d)
t2, t3 = [d for d in first if d["_id"] != t1["_id"]][:2]
p = c.crm.people.find_one({"_id": {"$ne": t2["owner"]}, "email": {"$exists": True}})
c.crm.tasks.update_one({"_id": t3["_id"]}, {"$set": {"x%02d" % i: i for i in range(70)}})
n3 = len(c.crm.tasks.find_one({"_id": t3["_id"]}))
open(sys.argv[2], "w").write("%s %s %s %s %s %d" % (t1["_id"], t2["_id"], p["_id"], p["email"], t3["_id"], n3))' "$T/ids"
    read -r t1 t2 p2 mail t3 n3 <"$T/ids"
    cat >"$T/appwrite.py" <<'PYEOF'
import sys, pymongo
from bson import ObjectId
t = pymongo.MongoClient(sys.argv[1], directConnection=True).crm.tasks
t.update_one({"_id": ObjectId(sys.argv[2])}, {"$set": {"priority": 9}})
t.update_one({"_id": ObjectId(sys.argv[3])}, {"$set": {"owner": ObjectId(sys.argv[4])}})
t.update_one({"_id": ObjectId(sys.argv[5])}, {"$set": {"tag": "app"}})
PYEOF
    "$KILLAT" -q --exec "python3 '$T/appwrite.py' '$uri' $t1 $t2 $p2 $t3" online_writes_flush 1 -- \
        "$ONLINE" run "$T/plans/inplace.json" --uri "$uri" --in-place --batch-size 20 -q \
        >/dev/null 2>"$T/kerr"
    krc=$?
    tasks() { py 'from bson import ObjectId
for i in sys.argv[2:4]:
    d = c.crm.tasks.find_one({"_id": ObjectId(i)})
    print(d.get("priority"), d["owner"], d.get("owner_email"), end=" ")
d = c.crm.tasks.find_one({"_id": ObjectId(sys.argv[4])})
print(d.get("tag"), len(d), "owner_email" in d and d["owner_email"] == c.crm.people.find_one({"_id": d["owner"]})["email"])' "$t1" "$t2" "$t3"; }
    t1_owner=$(py 'from bson import ObjectId
print(c.crm.tasks.find_one({"_id": ObjectId(sys.argv[2])})["owner"])' "$t1")
    t1_mail=$(py 'from bson import ObjectId
print(c.crm.people.find_one({"_id": ObjectId(sys.argv[2])})["email"])' "$t1_owner")
    t2_prio=$(python3 -c 'import sys
from bson import decode_file_iter, ObjectId
print(next(d for d in decode_file_iter(open(sys.argv[1], "rb")) if d["_id"] == ObjectId(sys.argv[2])).get("priority"))' "$T/snap" "$t2")
    expect_eq "$kind: the application adds a field to a task, moves another, adds one to a task remodel replaces, between run's read and write: all kept, the moved one's owner_email its new owner's" \
        "$krc:$(tasks)" "0:9 $t1_owner $t1_mail $t2_prio $p2 $mail app $((n3 + 2)) True"
    online rollback inplace
    expect_eq "$kind: ... rollback: every write of the application kept, owner_email gone" \
        "$rc:$(tasks)" "0:9 $t1_owner None $t2_prio $p2 None app $((n3 + 1)) False"
    "$SERVER" stop "$T/srv-$kind-between" >/dev/null 2>&1

    # Between rollback's read of a task and its restore (killat --exec at
    # its first online_undo_plan: the document just read), the
    # application adds a field to every task remodel wrote: the first,
    # restored whole on condition of its fields as read (which a field
    # added since still matches), gets it given back; the rest, read
    # after it, keep it too. Every task its original and that field.
    fresh "$kind" undo-between || continue
    online run inplace --in-place -q
    n=$(py 'print(c.crm.tasks.count_documents({"owner_email": {"$exists": True}}))')
    cat >"$T/late.py" <<'PYEOF'
import sys, pymongo
t = pymongo.MongoClient(sys.argv[1], directConnection=True).crm.tasks
t.update_many({"owner_email": {"$exists": True}}, {"$set": {"late": 1}})
PYEOF
    "$KILLAT" -q --exec "python3 '$T/late.py' '$uri'" \
        online_undo_plan 1 -- "$ONLINE" rollback "$T/plans/inplace.json" --uri "$uri" \
        >/dev/null 2>"$T/err"
    rc=$?
    expect_eq "$kind: the application adds a field to the task rollback just read (and the rest): rollback keeps it, restores the rest (exit 0)" \
        "$rc:$(py 'from bson import decode_file_iter
orig = {d["_id"]: d for d in decode_file_iter(open(sys.argv[2], "rb"))}
now = list(c.crm.tasks.find())
late = sum(d.pop("late", None) == 1 for d in now)
print(late, sum(d != orig.get(d["_id"]) for d in now), len(now) - len(orig))' "$T/snap"):$(grep -o '[0-9]* restored, [0-9]* left' "$T/err")" \
        "0:$n 0 0:$n restored, 0 left"
    [ "$rc" == 0 ] || cat "$T/err" >&2
    "$SERVER" stop "$T/srv-$kind-undo-between" >/dev/null 2>&1

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
