#!/usr/bin/env bash
# copy, move and delete online --in-place (issue 64, item 1; docs/online.md,
# "Side by side and in place"), on FerretDB and mongo-java-server, each
# with its change log. The oracle is `remodel run` offline over a mongodump
# of a shadow of the data (sair), which the run does not touch and the
# application's writes are made to as well:
#  - run --in-place of test_copy_steps.sh's plan (a copy of the JFK
#    flights, a move of the late ones through fields and project, a delete
#    of the cancelled): oair.jfk, oair.delayed and oair.flights are remodel
#    run's over the shadow, byte for byte; verify is clean; status says the
#    mode;
#  - follow running while the application writes (a flight made late, a
#    JFK one flown from LAX now, a late JFK one inserted, one deleted, one
#    cancelled, one's notes changed), then sync: the same, against the
#    shadow with the same writes;
#  - rollback: every original back, byte for byte (oair.flights is the
#    shadow again, the application's writes kept), the collections the run
#    made dropped;
#  - "to" made with the indexes the plan carries to it (as side by side);
#  - verify, before that sync, names a copy whose source the application
#    deleted; without a change log, sync rescans and takes it out;
#  - a "to" holding documents refused (exit 2, before anything is written);
#    a moved document the application changed in "to" left and named by
#    rollback (exit 1), then restored by rollback --force;
#  - mongo-java-server: a moved document the application changes between
#    its read and its removal (the removal held by the fault layer): read
#    again, moved as changed (rollback gives that version back), or, out
#    of the filter now, left where it is, its copy in "to" taken out;
#  - mongo-java-server: run --in-place of a move killed (kill -9) at each of
#    its calls (the fault layer, shell-ext/conn/online_fault.c, holds the
#    call; the suite kills it), then the same run again (even calls) or a
#    rollback (odd calls) completes (exit 0; or, killed before the plan's
#    record was written, says it has not run): remodel run's result over
#    the data, or the data as it was, byte for byte, and nothing else.
#   REMODEL=build/remodel bash tests/cli/test_online_copy_inplace.sh
. "$(dirname "$0")/lib.sh"
export REMODEL PYTHONDONTWRITEBYTECODE=1
use_peers "copy in place: peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "copy in place: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { kill $(jobs -p) 2>/dev/null; for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"

cat >"$T/plans/late.json" <<'EOF2'
{"remodel": 1, "steps": [
  {"copy": {"from": "oair.flights", "to": "oair.jfk", "filter": {"origin": "JFK"},
            "project": {"origin": 1, "dest": 1}}},
  {"move": {"from": "oair.flights", "to": "oair.delayed", "filter": {"delay": {"$gt": 15}},
            "fields": {"late_by": {"$subtract": ["$delay", 15]}}, "project": {"notes": 0}}},
  {"delete": {"from": "oair.flights", "filter": {"cancelled": true}}}]}
EOF2
sed 's/"oair\./"sair./g' "$T/plans/late.json" >"$T/plans/shadow.json"
# seed: oair.flights and its shadow sair.flights, the same 300 flights.
seed() {
    py 'random.seed(64)
docs = [{"_id": i, "origin": random.choice(["JFK", "LAX", "ORD"]),
         "dest": random.choice(["ATL", "SFO"]), "delay": random.randrange(-5, 60),
         "notes": "n%d" % i, "cancelled": i % 11 == 0} for i in range(300)]
for db in ("oair", "sair", "remodel"): c.drop_database(db)
c.oair.flights.insert_many(docs); c.sair.flights.insert_many(docs)'
}
# writes SEED: the application's, to oair.flights and the same to the
# shadow, each on a flight still in oair.flights.
writes() {
    py 'n = int(sys.argv[2]); random.seed(n); f, s = c.oair.flights, c.sair.flights
def some(q): return random.choice(sorted(x["_id"] for x in f.find(q, {"_id": 1})))
def both(op, *a):
    getattr(f, op)(*a); getattr(s, op)(*a)
both("update_one", {"_id": some({"delay": {"$lte": 15}, "cancelled": False})}, {"$set": {"delay": 40 + n}})
both("update_one", {"_id": some({"origin": "JFK", "cancelled": False})}, {"$set": {"origin": "LAX"}})
both("insert_one", {"_id": 1000 + n, "origin": "JFK", "dest": "SFO", "delay": 90, "notes": "new", "cancelled": False})
both("delete_one", {"_id": some({"origin": "JFK"})})
both("update_one", {"_id": some({"cancelled": False})}, {"$set": {"cancelled": True}})
both("update_one", {"_id": some({})}, {"$set": {"notes": "changed %d" % n}})' "$1"
}
# same KIND WHAT: oair's collections are remodel run's over the shadow.
same() {
    rm -f "$T/shadow.archive"
    offline_run shadow sair || fail "$1: $2: the offline reference"
    online_same "$1: $2: oair.jfk, oair.delayed and oair.flights are remodel run's over the shadow" \
        "$T/shadow.archive" --db=oair sair.jfk=jfk sair.delayed=delayed sair.flights=flights
}
# original KIND WHAT: oair.flights is the shadow, byte for byte, and the
# run's collections are gone.
original() {
    expect_eq "$1: $2" "$(py 'from bson.raw_bson import RawBSONDocument as R
from bson.codec_options import CodecOptions as O
def docs(db): return {repr(d["_id"]): d.raw for d in c[db].get_collection("flights", codec_options=O(document_class=R)).find()}
a, b = docs("oair"), docs("sair")
print(len(a), "same" if a == b else "differ: %s" % [k for k in set(a) | set(b) if a.get(k) != b.get(k)][:3],
      sorted(c.oair.list_collection_names()))')" "$3 same ['flights']"
}

for kind in $(online_kinds); do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    seed
    online run late --in-place --batch-size 13 -q
    expect_eq "$kind: run --in-place (exit 0, nothing said)" "$rc:$(cat "$T/err")" "0:"
    same "$kind" "after the run"
    online verify late
    expect_eq "$kind: verify finds every document as the steps make it" \
        "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
    online status late
    expect_eq "$kind: status says the mode and each step's counts" \
        "$rc:$(grep -c -e '^mode: in place' -e '^step 2 (move) oair.flights: [1-9][0-9]* changed' "$T/out")" "0:2"

    # follow while the application writes, then a sync.
    : >"$T/follow.err"
    "$REMODEL" online follow "$T/plans/late.json" --uri "$uri" --pause 200ms 2>"$T/follow.err" &
    fp=$!
    # Its first round done (the sample it verifies after it, one line a
    # step: a random one, or on FerretDB, which has no $sample, the first
    # in _id order), the writes; then a round that applies them.
    for ((iend = SECONDS + 120; SECONDS < iend; )); do
        [ "$(grep -c 'documents verified (' "$T/follow.err")" -ge 3 ] && break; sleep 0.2
    done
    expect_eq "$kind: follow verifies a sample after its first round, each step's" \
        "$(grep -o 'step [0-9] ([a-z]*): [0-9]* documents verified (' "$T/follow.err" | cut -d: -f1 | sort -u)" \
        "$(printf 'step %s\n' '1 (copy)' '2 (move)' '3 (delete)')"
    n0=$(grep -c 'change log: [1-9]' "$T/follow.err")
    writes 1
    for ((iend = SECONDS + 120; SECONDS < iend; )); do [ "$(grep -c 'change log: [1-9]' "$T/follow.err")" -gt "$n0" ] && break; sleep 0.2; done
    kill -TERM "$fp"; wait "$fp"; frc=$?
    expect_eq "$kind: follow: a round from the log applies the application's writes (none rescanned), TERM stops it (exit 0)" \
        "$frc:$(grep -c 'change log: [1-9]' "$T/follow.err" | awk -v n="$n0" '{print ($1 > n)}'):$(grep -c 'rescanned in full' "$T/follow.err")" "0:1:0"
    writes 2
    online verify late
    expect_eq "$kind: verify before the sync: exit 1, a copy whose source the application deleted named" \
        "$rc:$(grep -c -E 'step 1 \(copy\) oair.flights: [1-9][0-9]* documents in oair.jfk whose sources are gone' "$T/err")" "1:1"
    online sync late
    expect_eq "$kind: sync follows the log (exit 0, no step rescanned)" \
        "$rc:$(grep -c 'rescanned in full' "$T/err")" "0:0"
    same "$kind" "after the application's writes, follow and sync"

    online rollback late
    expect_eq "$kind: rollback (exit 0), each step's documents restored, the made collections dropped" \
        "$rc:$(grep -c -e 'restored, 0 left' -e 'which the run made' "$T/err")" "0:5"
    original "$kind" "after rollback, oair.flights is the shadow (every original back, the application's writes kept)" 300

    # A "to" holding documents is refused; a moved document changed in
    # "to" is left by rollback, then restored by --force.
    seed
    py 'c.oair.delayed.insert_one({"_id": "theirs"})'
    online run late --in-place -q
    expect_eq "$kind: a \"to\" holding documents refused before any step writes (exit 2, naming it)" \
        "$rc:$(grep -c -F 'step 2 (move): --in-place writes into oair.delayed itself, which holds 1 document(s)' "$T/err"):$(py 'print(c.oair.flights.count_documents({}), "jfk" in c.oair.list_collection_names())')" \
        "2:1:300 False"
    py 'c.oair.delayed.drop(); c.oair.jfk.drop(); c.drop_database("remodel")'
    online run late --in-place -q
    py 'c.oair.delayed.update_one({}, {"$set": {"seen": True}})'
    online rollback late
    expect_eq "$kind: rollback leaves a moved document changed in \"to\" and names it (exit 1)" \
        "$rc:$(grep -c 'changed in "to" since remodel wrote it there: left as it is' "$T/err")" "1:1"
    online rollback late --force
    expect_eq "$kind: rollback --force restores it (exit 0)" "$rc" 0
    original "$kind" "after rollback --force, oair.flights is the data as it was" 300
    [ "$kind" == java ] || "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done

# --- a move in place killed at each call (mongo-java-server) ------------------
use_faulty || exit 0
if ! online_start java "$T/srv-kill" 0; then exit 0; fi
# Without a change log first: sync rescans, and takes out a copy whose
# source the application deleted.
echo '{"remodel": 1, "steps": [{"copy": {"from": "kcp.flights", "to": "kcp.even", "filter": {"n": {"$mod": [2, 0]}}}}]}' >"$T/plans/kcp.json"
py 'c.kcp.flights.insert_many([{"_id": i, "n": i} for i in range(20)]); c.kcp.flights.create_index("n")'
online run kcp --in-place -q
expect_eq "java: run --in-place of a copy: \"to\" made with the index the plan carries to it (exit 0)" \
    "$rc:$(py 'print(sorted(i["name"] for i in c.kcp.even.list_indexes()))')" "0:['_id_', 'n_1']"
py 'c.kcp.flights.delete_one({"_id": 4}); c.kcp.flights.insert_one({"_id": 30, "n": 30})'
online sync kcp
expect_eq "java, no change log: sync rescans, copies the new document and takes out the one whose source went (exit 0)" \
    "$rc:$(grep -c 'step 1 (copy) kcp.flights: 1 documents in kcp.even whose sources are gone: removed' "$T/err"):$(py 'print(sorted(d["_id"] for d in c.kcp.even.find()))')" \
    "0:1:[0, 2, 6, 8, 10, 12, 14, 16, 18, 30]"
echo '{"remodel": 1, "steps": [{"move": {"from": "kmv.flights", "to": "kmv.delayed", "filter": {"delay": {"$gt": 15}}, "fields": {"late_by": {"$subtract": ["$delay", 15]}}}}]}' >"$T/plans/kmv.json"
kseed() {
    py 'c.drop_database("kmv"); c.drop_database("remodel")
c.kmv.flights.insert_many([{"_id": i, "delay": (i * 37) % 50, "n": "x" * (i % 5)} for i in range(14)])'
}
kseed
"$MONGODUMP" --uri "$uri" --db kmv --archive="$T/kmv-src.archive" --quiet
"$REMODEL" run -q --force "$T/plans/kmv.json" --from "$T/kmv-src.archive" --to "$T/kmv.archive"
kstate() {
    py 'from bson.raw_bson import RawBSONDocument as R
from bson.codec_options import CodecOptions as O
import hashlib
h = hashlib.sha1()
for n in sorted(c.kmv.list_collection_names()):
    for d in sorted((x.raw for x in c.kmv.get_collection(n, codec_options=O(document_class=R)).find()), key=lambda r: r):
        h.update(n.encode() + d)
print(sorted(c.kmv.list_collection_names()), h.hexdigest())'
}
KORIG=$(kstate)
# raced SET: run --in-place with its first removal held 3 s (the fault
# layer), in which the application gives flight 1 (the first selected) SET.
raced() {
    kseed
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/ferr"
    REMODEL_ONLINE_FAULT=findAndModify:1:delay=3000 "$REMODEL" online run "$T/plans/kmv.json" \
        --uri "$uri" --in-place --batch-size 5 -q >/dev/null 2>"$T/ferr" &
    local p=$!
    for ((wend = SECONDS + 120; SECONDS < wend; )); do
        grep -q '^remodel-online: fault layer: call' "$T/ferr" 2>/dev/null && break
        kill -0 $p 2>/dev/null || break
        sleep 0.05
    done
    py 'c.kmv.flights.update_one({"_id": 1}, {"$set": json.loads(sys.argv[2])})' "$1"
    wait $p
    frc=$?
}
raced '{"n": "changed"}'
k1=$(py 'print(c.kmv.flights.count_documents({"_id": 1}), c.kmv.delayed.find_one({"_id": 1}))')
online rollback kmv -q
expect_eq "java: a document changed between its read and its removal, still selected: moved as changed; rollback gives that version back" \
    "$frc:$k1:$rc:$(py 'print(c.kmv.flights.find_one({"_id": 1}), c.kmv.flights.count_documents({}), c.kmv.list_collection_names())')" \
    "0:0 {'_id': 1, 'delay': 37, 'n': 'changed', 'late_by': 22}:0:{'_id': 1, 'delay': 37, 'n': 'changed'} 14 ['flights']"
raced '{"delay": 0}'
k1=$(py 'print(c.kmv.flights.find_one({"_id": 1}), c.kmv.delayed.count_documents({"_id": 1}), c.remodel["backup." + sys.argv[2] + ".1"].count_documents({"_id": 1, "gone": True}))' "$(pid kmv)")
expect_eq "java: a document changed between its read and its removal out of the filter: stays, its copy in \"to\" taken out, not journaled as removed" \
    "$frc:$k1" "0:{'_id': 1, 'delay': 0, 'n': 'x'} 0 0"
kseed
rm -f "$T/flog"
REMODEL_ONLINE_FAULT=count REMODEL_ONLINE_FAULT_LOG=$T/flog "$REMODEL" online run "$T/plans/kmv.json" \
    --uri "$uri" --in-place --batch-size 5 -q 2>"$T/err"
calls=$(wc -l <"$T/flog")
online_same "java: kill: the counted run is remodel run's" "$T/kmv.archive" kmv.flights=flights kmv.delayed=delayed
KDONE=$(kstate)
kseed
bad=0 points=0
for ((n = 1; n <= calls; n++)); do
    kseed
    rm -f "$T/flog"
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/ferr"
    REMODEL_ONLINE_FAULT=any:$n:delay=60000 REMODEL_ONLINE_FAULT_LOG=$T/flog "$REMODEL" online run \
        "$T/plans/kmv.json" --uri "$uri" --in-place --batch-size 5 -q >/dev/null 2>"$T/ferr" &
    p=$!
    for ((wend = SECONDS + 120; SECONDS < wend; )); do
        grep -q "^remodel-online: fault layer: call $n " "$T/ferr" 2>/dev/null && break
        kill -0 $p 2>/dev/null || break
        sleep 0.05
    done
    kill -9 $p 2>/dev/null
    wait $p 2>/dev/null
    points=$((points + 1))
    if ((n % 2 == 0)); then
        online run kmv --in-place --batch-size 5 -q
        got=$rc:$(kstate) want=0:$KDONE what="run again"
    else
        online rollback kmv -q
        # Killed before its record was written: nothing to roll back.
        grep -q -F 'plan kmv.json has not run here' "$T/err" && [ $rc == 2 ] && rc=0
        got=$rc:$(kstate) want=0:$KORIG what="rollback"
    fi
    if [ "$got" != "$want" ]; then
        bad=$((bad + 1))
        [ $bad -le 3 ] && echo "# kill at call $n ($(awk -v n=$n '$1 == n {print $2 " " $4}' "$T/flog")), then $what: $got, want $want; $(tail -2 "$T/err")" >&2
    fi
done
expect_eq "java: a move in place killed at each of its $calls calls, then run again or rolled back: exact each time" \
    "$points:$bad" "$calls:0"
