#!/usr/bin/env bash
# remodel compile and remodel online run --server-side (issue 13):
# - compile's output: the pipelines of each step ending in $merge into the
#   step's side-by-side target, the steps no pipeline expresses named with
#   the reason, --server-version choosing $topN or its 4.0 equivalent;
# - on mongo-java-server (wire version 7, with $lookup and $merge, without
#   $topN): `online run --server-side --server-version 4.0` of each plan
#   leaves documents equal, byte for byte, to `remodel run`'s on the same
#   dump (tests/transforms/online_same.py), and `online verify` (the
#   client-side engine recomputing every range) agrees; a step that is not
#   a pipeline, or data a pipeline is not exact for, runs client-side;
# - the generated mongosh script, run by the real mongosh 1.10.6, killed
#   with SIGKILL mid-run and run again, gives the same documents and leaves
#   the same checkpoints `online status` reads;
# - FerretDB, without $lookup and $merge: --server-side is refused naming
#   the missing stage, before anything is written.
#   REMODEL=build/remodel bash tests/cli/test_compile.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
export PYTHONPATH=$ROOT/tests/transforms
MONGOSH1=${MONGOSH1:-}

mkdir -p "$T/plans"
cp "$ROOT"/dumps/plans/*.json "$ROOT"/tests/transforms/cases/compile/*.json "$T/plans/"

# compile NAME PLAN ARGS...: the output in $T/c.json, stderr in $T/err.
compile() { local n=$1; shift; "$REMODEL" compile "$@" >"$T/c.json" 2>"$T/err"; rc=$?; }
# jq-like reads of the compile output.
pid() { plan_id "$T/plans/$1.json"; }
cj() { python3 -c "import json,sys; c=json.load(open('$T/c.json')); print($1)"; }

# ---- compile's output, no server ----
compile c1 "$T/plans/embed-tasks.json" --canonical
expect_eq "compile: embed exits 0" "$rc" 0
expect_eq "compile: embed is two pipelines (parents, then the orphans)" \
    "$(cj "[ (p['aggregate']['coll'], len(p['pipeline'])) for p in c['steps'][0]['passes'] ]")" \
    "[('people', 9), ('tasks', 4)]"
expect_eq "compile: each pipeline ends in \$merge into the step's target, replacing by _id" \
    "$(cj "[ p['pipeline'][-1]['\$merge'] for p in c['steps'][0]['passes'] ]")" \
    "[{'into': {'db': 'crm', 'coll': 'people_remodel_$(pid embed-tasks)_1'}, 'on': '_id', 'whenMatched': 'replace', 'whenNotMatched': 'insert'}, {'into': {'db': 'crm', 'coll': 'tasks_remodel_$(pid embed-tasks)_1'}, 'on': '_id', 'whenMatched': 'replace', 'whenNotMatched': 'insert'}]"
expect_eq "compile: the results map" "$(cj "c['results']['crm.people']['coll'], c['serverVersion']")" \
    "people_remodel_$(pid embed-tasks)_1 5.0"

compile c2 "$T/plans/evolve-people.json" --canonical
expect_eq "compile: a plan with a step no pipeline expresses exits 0" "$rc" 0
expect_message "compile: extract named with the reason" \
    "remodel: compile: step 1 (extract) runs client-side: an element without an _id of its own gets a deterministic ObjectId"
expect_eq "compile: extract client-side, the field steps server-side, reading extract's result" \
    "$(cj "[ (s['op'], s['serverSide'], s['passes'][0]['aggregate']['coll'] if s['serverSide'] else '') for s in c['steps'] ]")" \
    "[('extract', False, ''), ('rename', True, 'people_remodel_$(pid evolve-people)_1'), ('version', True, 'people_remodel_$(pid evolve-people)_2')]"

compile c3 "$T/plans/summary.json" --server-version 4.0
expect_eq "compile --server-version 4.0: \$topN becomes \$sort + \$push + \$slice" \
    "$(grep -c '"\$topN"' "$T/c.json"):$(grep -c '"\$push"' "$T/c.json"):$(grep -c '"\$slice"' "$T/c.json")" "0:1:1"
compile c4 "$T/plans/summary.json" --server-version 5.2
expect_eq "compile --server-version 5.2: \$topN itself" "$(grep -c '"\$topN"' "$T/c.json")" 1
compile c5 "$T/plans/ordered.json" --server-version 4.0
expect_message "compile 4.0: \$topN beside \$first/\$last named, with the version that has it" \
    "step 1 (summarize) runs client-side: \$topN and \$bottomN need MongoDB 5.2"
compile c6 "$T/plans/ordered.json" --server-version 5.2.1 --canonical
expect_eq "compile 5.2.1: the same plan compiles" "$(cj "c['steps'][0]['serverSide']")" True
compile c7 "$T/plans/embed-tasks.json" --server-version five
expect_eq "compile: a bad --server-version exits 2" "$rc" 2
expect_message "compile: a bad --server-version named" "--server-version: \"five\" is not a MongoDB version"
compile c8 "$T/plans/embed-tasks.json" --format yaml
expect_eq "compile: an unknown --format exits 2" "$rc" 2

# ---- mongo-java-server: --server-side equals remodel run ----
online_start java "$T/java" || exit 0
"$MONGORESTORE" --uri "$uri" --dir "$S" >"$T/restore" 2>&1 ||
    { fail "java: restore the sample" "$(tail -3 "$T/restore")"; exit 0; }

# The default --format pipeline pasted into mongosh 1.10.6 (the one that
# talks to this server) runs, $merge and all, and its results are
# the same documents (byte for byte: every type kept) as the --canonical
# output's run by pymongo. The typed plan sets an int64, a decimal, a whole double, a
# fraction, a date and an ObjectId.
cat >"$T/plans/typed.json" <<'EOF2'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"l": {"$numberLong": "7"}, "d": {"$numberDecimal": "1.10"},
    "f": {"$numberDouble": "2.0"}, "g": 0.1, "n": {"$numberDouble": "-0.0"}, "t": {"$date": "2024-01-31T00:00:00Z"},
    "o": {"$oid": "5256cfd975586ac5db1685a1"}, "i": 3}}}]}
EOF2
if [ -n "$MONGOSH1" ]; then
    for p in embed-tasks summary typed; do
        "$REMODEL" compile "$T/plans/$p.json" --server-version 4.0 >"$T/paste.js" 2>/dev/null
        "$REMODEL" compile "$T/plans/$p.json" --server-version 4.0 --canonical >"$T/canon.json" 2>/dev/null
        { printf 'const c = '; cat "$T/paste.js"; cat <<'JS'
;
// runCommand, not aggregate().toArray(): mongosh 1.10.6 reports a $merge's
// empty cursor from mongo-java-server as "Cursor is exhausted".
for (const s of c.steps) for (const p of (s.passes || [])) {
  const r = db.getSiblingDB(p.aggregate.db).runCommand({aggregate: p.aggregate.coll, pipeline: p.pipeline, cursor: {}});
  if (!r.ok) { print(JSON.stringify(r)); quit(1); }
}
print("ran");
JS
        } >"$T/paste-run.js"
        "$MONGOSH1" "$(shell_uri "$uri")" --quiet --norc "$T/paste-run.js" >"$T/paste.out" 2>"$T/err" ||
            fail "java $p: mongosh 1.10.6 runs the pasted pipelines" "$(head -c 400 "$T/err")"
        got=$(pyrun -c 'import sys, pymongo
from bson import json_util
from bson.raw_bson import RawBSONDocument
from bson.codec_options import CodecOptions
c = json_util.loads(open(sys.argv[2]).read(), json_options=json_util.CANONICAL_JSON_OPTIONS)
cl = pymongo.MongoClient(sys.argv[3])
raw = CodecOptions(document_class=RawBSONDocument)
def results():
    return {ns: sorted(d.raw for d in cl.get_database(r["db"], codec_options=raw)[r["coll"]].find())
            for ns, r in c["results"].items()}
def drop():
    for r in c["results"].values():
        cl[r["db"]].drop_collection(r["coll"])
got = results()
drop()
for s in c["steps"]:
    for p in s.get("passes", []):
        list(cl[p["aggregate"]["db"]][p["aggregate"]["coll"]].aggregate(p["pipeline"]))
want = results()
drop()
n = sum(map(len, got.values()))
print("same %d" % n if got == want and n else "differ: %s" % {k: (len(got[k]), len(want[k])) for k in got})' \
            - "$T/canon.json" "$uri" 2>&1)
        case $got in
        same*) pass "java $p: compile's default output pasted into mongosh 1.10.6 runs, the same documents and types as --canonical's ($got)" ;;
        *) fail "java $p: compile's default output pasted into mongosh 1.10.6 runs, the same documents and types as --canonical's" "$got $(head -c 400 "$T/err")" ;;
        esac
    done
    expect_eq "typed: whole doubles, int64, decimal, dates printed to keep their types" \
        "$(grep -o 'NumberLong("7")\|NumberDecimal("1.10")\|Double(2)\|Double(-0)\|ISODate("2024-01-31T00:00:00.000Z")\|ObjectId("5256cfd975586ac5db1685a1")' "$T/paste.js" | sort | tr '\n' ' ')" \
        'Double(-0) Double(2) ISODate("2024-01-31T00:00:00.000Z") NumberDecimal("1.10") NumberLong("7") ObjectId("5256cfd975586ac5db1685a1") '
else
    fail "mongosh 1.10.6: paste compile's output" "MONGOSH1 not installed (tests/peers/install.sh)"
fi

# pairs PLAN: "ns=coll" for each namespace the plan changes (compile's results).
pairs() {
    "$REMODEL" compile "$1" --server-version 4.0 --canonical 2>/dev/null |
        python3 -c "import json,sys; c=json.load(sys.stdin); print(' '.join(k + '=' + v['coll'] for k, v in c['results'].items()))"
}

for p in embed-tasks embed-parts students subset backfill-logging summary fields evolve-people guard; do
    plan=$T/plans/$p.json
    "$REMODEL" run "$plan" --from "$S" --to "$T/off-$p.archive" -q -f 2>"$T/err" ||
        { fail "java $p: remodel run" "$(cat "$T/err")"; continue; }
    run_rm online run "$plan" --uri "$uri" --server-side --server-version 4.0 --create-indexes
    expect_eq "java $p: online run --server-side exits 0" "$rc" 0
    case $p in
    evolve-people)
        expect_message "java $p: extract runs client-side, the rest server-side" \
            "step 1 (extract) runs client-side" "step 2 (rename) crm.people: 98 read, 98 written (server-side)" ;;
    guard)
        expect_message "java $p: an array reference seen, the step runs client-side" \
            "school.students has a document whose \"courses\" holds an array" \
            "step 1 (denormalize) school.students: 300 read, 300 written" ;;
    *)
        expect_message "java $p: every step server-side" "(server-side)"
        if grep -q "runs client-side" "$T/err"; then fail "java $p: nothing client-side" "$(cat "$T/err")"; else pass "java $p: nothing client-side"; fi ;;
    esac
    # shellcheck disable=SC2046
    online_same "java $p: the server's results are remodel run's, byte for byte" "$T/off-$p.archive" $(pairs "$plan")
    run_rm online verify "$plan" --uri "$uri"
    expect_eq "java $p: online verify (the engine recomputing) agrees" "$rc" 0
done

# Edge data (tests/transforms/cases/compile/data/edge.json): _ids of int32,
# int64, double and string in one collection (a range spans types: {$gt,
# $lte} on _id would keep to one type, so ranges name their _ids), numbers
# of other types as references, null and missing ones.
pyrun "$ROOT/tests/transforms/mkdump.py" "$T/edge" "$(cat "$ROOT/tests/transforms/cases/compile/data/edge.json")"
"$MONGORESTORE" --uri "$uri" --dir "$T/edge" --quiet 2>"$T/err" || fail "java: restore the edge data" "$(cat "$T/err")"
for p in mingo-edge-embed mingo-edge-denorm; do
    plan=$ROOT/tests/transforms/cases/compile/$p.json
    "$REMODEL" run "$plan" --from "$T/edge" --to "$T/off-$p.archive" -q -f 2>"$T/err" ||
        { fail "java $p: remodel run" "$(cat "$T/err")"; continue; }
    run_rm online run "$plan" --uri "$uri" --server-side --server-version 4.0 --create-indexes --batch-size 2
    expect_eq "java $p: --server-side in ranges of 2 _ids of mixed types exits 0" "$rc" 0
    # shellcheck disable=SC2046
    online_same "java $p: the server's results are remodel run's, byte for byte" "$T/off-$p.archive" $(pairs "$plan")
done

# Children tied on "sort" (issue 25, item 4): the Atlas sample's accounts
# sorted on limit, 10000 for most, so most of a customer's accounts tie.
# mongo-java-server's $lookup hands them in the customer's array's order;
# the engine, server-side and client-side, and remodel run put them in the
# same order (the references' order, then _id): verify finds 0 differ (236
# did when the engine kept from's order on ties).
ATLAS=$(atlas_sample)
if [ -d "$ATLAS/sample_analytics" ]; then
    "$MONGORESTORE" --uri "$uri" --dir "$ATLAS" --nsInclude 'sample_analytics.*' --quiet 2>"$T/err" ||
        fail "java ties: restore sample_analytics" "$(cat "$T/err")"
    "$REMODEL" run "$T/plans/mingo-atlas-ties.json" --from "$ATLAS" --nsInclude 'sample_analytics.*' \
        --to "$T/off-ties.archive" -q -f 2>"$T/err" || fail "java ties: remodel run" "$(cat "$T/err")"
    cp "$T/plans/mingo-atlas-ties.json" "$T/plans/ties-client.json"
    for p in mingo-atlas-ties ties-client; do
        side=(--server-side --server-version 4.0) how=server-side
        [ $p == ties-client ] && side=() how=client-side
        run_rm online run "$T/plans/$p.json" --uri "$uri" --create-indexes "${side[@]}"
        expect_eq "java ties: online run $how exits 0" "$rc" 0
        [ $how == server-side ] && expect_message "java ties: the embed ran server-side" \
            "sample_analytics.customers: 500 read, 500 written (server-side)"
        # shellcheck disable=SC2046
        online_same "java ties: $how, the accounts in remodel run's order, byte for byte" \
            "$T/off-ties.archive" $(pairs "$T/plans/$p.json")
        run_rm online verify "$T/plans/$p.json" --uri "$uri"
        expect_eq "java ties: verify after the $how run: exit 0, nothing differs" \
            "$rc:$(grep -c 'differ' "$T/err")" "0:0"
        expect_message "java ties: verify after the $how run says so" "every result as the sources make it"
    done
else
    fail "java ties: the Atlas sample" "not found: $ATLAS/sample_analytics"
fi

# $lookup's rules by the server's version (issue 25, item 10): MongoDB's
# "null in local, missing on foreign path" case, a local null against
# foreign documents whose "a.x" crosses arrays. Client-side, the engine
# joins by the rules of --server-version, else of the server's own version
# (mongo-java-server says 3.x/4.0: those of 5.0-8.x): 9 children; with
# --server-version 9.0, SERVER-36681's: 13. Each as remodel run's with the
# same --server-version, and verify (with it) finds nothing differs; the
# run records its rules in the plan's record for the commands after.
pyrun "$ROOT/tests/transforms/mkdump.py" "$T/lk" '{
  "lk.local": [{"_id": 0, "b": null}],
  "lk.foreign": [{"_id": 0, "a": {"no_x": 1}}, {"_id": 1, "a": {"no_x": [1, 2]}},
    {"_id": 2, "a": [{"no_x": 1}, {"no_x": 2}]}, {"_id": 3, "a": [{"no_x": 2}, {"x": 1}]},
    {"_id": 4, "a": [{"no_x": [1, 2]}, {"x": 1}]}, {"_id": 5, "a": {"x": null}},
    {"_id": 6, "a": [{"x": null}, {"x": 1}]}, {"_id": 7, "a": [{"x": null}, {"x": [1]}]},
    {"_id": 8, "no_a": 1}, {"_id": 9, "a": [1]}, {"_id": 10, "a": []}, {"_id": 11, "a": [[1]]},
    {"_id": 12, "a": [[]]}, {"_id": 20, "a": {"x": 2, "y": 1}}, {"_id": 21, "a": [{"x": 2}, {"x": 3}]}]}'
"$MONGORESTORE" --uri "$uri" --dir "$T/lk" --quiet 2>"$T/err" || fail "java lookup rules: restore" "$(cat "$T/err")"
for v in default 9.0; do
    plan=$T/plans/lookup-$v.json
    echo '{"remodel": 1, "steps": [{"embed": {"from": "lk.foreign", "into": "lk.local", "localField": "b",
      "foreignField": "a.x", "as": "m", "countAs": "n", "keepSource": true}}]}' >"$plan"
    vargs=() want=9
    [ $v == 9.0 ] && vargs=(--server-version 9.0) want=13
    "$REMODEL" run "$plan" --from "$T/lk" --to "$T/off-lk-$v.archive" -q -f "${vargs[@]}" 2>"$T/err" ||
        fail "java lookup rules $v: remodel run" "$(cat "$T/err")"
    run_rm online run "$plan" --uri "$uri" --create-indexes "${vargs[@]}"
    expect_eq "java lookup rules ($v): online run exits 0" "$rc" 0
    # shellcheck disable=SC2046
    set -- $(pairs "$plan")
    expect_eq "java lookup rules ($v): the local null embeds $want of 15 foreign documents" \
        "$(pyrun -c 'import pymongo, sys; c = pymongo.MongoClient(sys.argv[1]); print(c.lk[sys.argv[2]].find_one()["n"])' \
            "$uri" "${1#*=}")" "$want"
    online_same "java lookup rules ($v): remodel run's result with the same --server-version, byte for byte" \
        "$T/off-lk-$v.archive" "$@"
    run_rm online verify "$plan" --uri "$uri" "${vargs[@]}"
    expect_eq "java lookup rules ($v): verify by the same rules finds nothing differs" "$rc" 0
done
# The rules a run joined by are the plan's: status says them, and verify
# without --server-version takes them from there; given another version,
# verify joins by that one's and finds the result different.
run_rm online status "$T/plans/lookup-9.0.json" --uri "$uri"
expect_eq "java lookup rules: status says the rules the 9.0 run joined by" \
    "$(grep -c '^joins: \$lookup by MongoDB 9.0.s rules' "$T/out")" 1
run_rm online verify "$T/plans/lookup-9.0.json" --uri "$uri"
expect_eq "java lookup rules: verify of the 9.0 run without --server-version: by its recorded rules, nothing differs" "$rc" 0
run_rm online verify "$T/plans/lookup-9.0.json" --uri "$uri" --server-version 8.0
expect_eq "java lookup rules: verify of the 9.0 run by 8.0's rules: exit 1" "$rc" 1
expect_message "java lookup rules: ...and the result it finds different" "1 result(s) differ"

# A second run goes on from the checkpoints: every pass done before.
run_rm online run "$T/plans/embed-tasks.json" --uri "$uri" --server-side --server-version 4.0
expect_message "java: a second run finds every pass done" \
    "step 1 (embed) crm.people: done before" "step 1 (embed) crm.tasks: done before"
run_rm online status "$T/plans/backfill-logging.json" --uri "$uri"
expect_eq "java: status reads the server-side checkpoints" \
    "$(awk '$1 ~ /^[0-9]/ {print $1, $2, $4, $5, $6}' "$T/out" | tr '\n' ';')" \
    "1 denormalize done 1200 1200;2 summarize done 20 20;"

# kill -9 at random moments during --server-side runs, then a rerun: the
# same documents (make online-crashes CRASHES=N runs more).
CRASHES=${REMODEL_ONLINE_CRASHES:-3}
for ((i = 1; i <= CRASHES; i++)); do
    case $((i % 3)) in
    1) p=embed-tasks ;;
    2) p=backfill-logging ;;
    0) p=students ;;
    esac
    cp "$T/plans/$p.json" "$T/plans/crash$i.json"
    "$REMODEL" online run -q "$T/plans/crash$i.json" --uri "$uri" --server-side --server-version 4.0 \
        --batch-size 3 --pause-ms 20 >/dev/null 2>&1 &
    pid=$!
    sleep "$((RANDOM % 2)).$(printf '%02d' $((RANDOM % 90 + 5)))"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    pyrun -c 'import pymongo, sys, datetime
c = pymongo.MongoClient(sys.argv[1])
c.remodel.leases.update_many({}, {"$set": {"expires": datetime.datetime(2000, 1, 1)}})' "$uri"
    run_rm online run "$T/plans/crash$i.json" --uri "$uri" --server-side --server-version 4.0
    expect_eq "java: $p --server-side killed (-9) at a random moment ($i), then run again: exit 0" "$rc" 0
    # shellcheck disable=SC2046
    online_same "java: $p killed ($i), then run again: remodel run's documents" "$T/off-$p.archive" \
        $(pairs "$T/plans/crash$i.json")
done

# The server lacks an operator the version asked for: the range's error says so.
run_rm online run "$T/plans/ordered.json" --uri "$uri" --server-side --server-version 5.2
expect_eq "java: \$topN compiled for 5.2 on a server without it: exit 1" "$rc" 1
expect_message "java: the operator the server lacks is named" "\$topN"

# ---- the mongosh script, killed and run again ----
if [ -n "$MONGOSH1" ] && [ -x "$MONGOSH1" ]; then
    plan=$T/plans/backfill-logging.json
    "$REMODEL" compile "$plan" --format mongosh --server-version 4.0 >"$T/script.js" 2>"$T/err"
    expect_eq "script: compiled" "$?" 0
    "$REMODEL" online rollback "$plan" --uri "$uri" -q >/dev/null 2>&1 # the results dropped
    pyrun -c 'import pymongo, sys; c = pymongo.MongoClient(sys.argv[1]); c.remodel.plans.delete_many({}); c.remodel.checkpoints.delete_many({}); c.remodel.leases.delete_many({})' "$uri"
    "$MONGOSH1" --quiet "$(shell_uri "$uri")" --eval 'var batchSize = 25, pauseMs = 150, owner = "script-test"' \
        "$T/script.js" >"$T/s1" 2>&1 &
    pid=$!
    # Killed once its checkpoint is part way (mongosh may take seconds to
    # start on a loaded machine: a fixed sleep killed it before any batch).
    pyrun -c 'import pymongo, sys, time
c = pymongo.MongoClient(sys.argv[1])
for _ in range(1200):
    d = c.remodel.checkpoints.find_one({"_id": sys.argv[2] + ":1"}) or {}
    if d.get("seen", 0) > 0 and not d.get("done"):
        break
    time.sleep(0.05)' "$uri" "$(pid backfill-logging)"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    done_before=$(pyrun -c 'import pymongo, sys; c = pymongo.MongoClient(sys.argv[1]); d = c.remodel.checkpoints.find_one({"_id": "'"$(pid backfill-logging)"':1"}) or {}; print(d.get("done"), d.get("seen", 0) > 0)' "$uri")
    expect_eq "script: killed mid-run, with a checkpoint part way" "$done_before" "False True"
    "$MONGOSH1" --quiet "$(shell_uri "$uri")" --eval 'var batchSize = 100, owner = "script-test"' "$T/script.js" >"$T/s2" 2>&1
    expect_eq "script: run again, it finishes" "$?" 0
    if grep -q "step 1 (denormalize) logging.logmsg: 1200 read, 1200 written (done)" "$T/s2" &&
        ! grep -q "logging.logmsg: 25 read" "$T/s2"; then
        pass "script: the second run went on from the checkpoint"
    else fail "script: the second run went on from the checkpoint" "$(head -5 "$T/s2")"; fi
    # shellcheck disable=SC2046
    online_same "script: the results are remodel run's, byte for byte" "$T/off-backfill-logging.archive" $(pairs "$plan")
    run_rm online status "$plan" --uri "$uri"
    expect_eq "script: online status reads its checkpoints" \
        "$(awk '$1 ~ /^[0-9]/ {print $1, $2, $4, $5}' "$T/out" | tr '\n' ';')" "1 denormalize done 1200;2 summarize done 20;"
    run_rm online verify "$plan" --uri "$uri"
    expect_eq "script: online verify agrees" "$rc" 0
    # The script needs no join index; verify and finalize do (issue 25,
    # item 7): without one they say why and how, and with --create-indexes
    # they go through.
    eplan=$T/plans/embed-tasks.json
    "$REMODEL" online rollback "$eplan" --uri "$uri" -q >/dev/null 2>&1
    pyrun -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1])
c.remodel.plans.delete_many({}); c.remodel.checkpoints.delete_many({}); c.remodel.leases.delete_many({})
for name, spec in c.crm.tasks.index_information().items():
    if spec["key"][0][0] == "owner": c.crm.tasks.drop_index(name)' "$uri"
    "$REMODEL" compile "$eplan" --format mongosh >"$T/script3.js" 2>/dev/null
    "$MONGOSH1" --quiet "$(shell_uri "$uri")" "$T/script3.js" >"$T/s4" 2>&1
    expect_eq "script: embed-tasks without the owner index: the script runs it (exit 0)" "$?" 0
    run_rm online verify "$eplan" --uri "$uri"
    expect_eq "script: ... then verify without the index: refused (exit 2)" "$rc" 2
    expect_message "script: ... saying why verify needs it, and how to give it" \
        'crm.tasks has no index on "owner"' \
        'verify computes client-side, batch by batch, even after a run by the compiled pipelines or the mongosh script' \
        'or give verify --create-indexes'
    run_rm online finalize "$eplan" --uri "$uri" --writes-stopped --create-indexes
    expect_eq "script: ... finalize --create-indexes: exit 0" "$rc" 0
    run_rm online rollback "$eplan" --uri "$uri"
    run_rm online rollback "$eplan" --uri "$uri"
    "$REMODEL" compile "$T/plans/evolve-people.json" --format mongosh >"$T/script2.js" 2>/dev/null
    "$MONGOSH1" --quiet "$(shell_uri "$uri")" "$T/script2.js" >"$T/s3" 2>&1
    expect_eq "script: a plan with a client-side step is refused (exit 2)" "$?" 2
    if grep -q "step 1 (extract) runs client-side" "$T/s3" && grep -q "remodel online run --server-side" "$T/s3"; then
        pass "script: the refusal names the step and what runs it"
    else fail "script: the refusal names the step and what runs it" "$(cat "$T/s3")"; fi
    # Children tied on "sort", by the script (issue 25, item 4): the arrays
    # are remodel run's, and verify finds nothing differs.
    if [ -f "$T/off-ties.archive" ]; then
        cp "$T/plans/mingo-atlas-ties.json" "$T/plans/ties-script.json"
        "$REMODEL" compile "$T/plans/ties-script.json" --format mongosh --server-version 4.0 \
            >"$T/script4.js" 2>/dev/null
        "$MONGOSH1" --quiet "$(shell_uri "$uri")" "$T/script4.js" >"$T/s5" 2>&1
        expect_eq "script: the ties plan runs (exit 0)" "$?" 0
        # shellcheck disable=SC2046
        online_same "script: children tied on sort in remodel run's order, byte for byte" \
            "$T/off-ties.archive" $(pairs "$T/plans/ties-script.json")
        run_rm online verify "$T/plans/ties-script.json" --uri "$uri"
        expect_eq "script: verify of the ties plan: exit 0, nothing differs" \
            "$rc:$(grep -c 'differ' "$T/err")" "0:0"
    fi
else
    fail "script: mongosh 1.10.6 is not installed (tests/peers/install.sh)"
fi
"$SERVER" stop "$T/java" >/dev/null 2>&1

# ---- FerretDB: no $lookup, no $merge ----
online_start ferretdb "$T/ferretdb" || exit 0
"$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --noIndexRestore >"$T/restore" 2>&1 ||
    { fail "ferretdb: restore crm" "$(tail -3 "$T/restore")"; exit 0; }
run_rm online run "$T/plans/embed-tasks.json" --uri "$uri" --server-side --create-indexes
expect_eq "ferretdb: --server-side refused (exit 2)" "$rc" 2
expect_message "ferretdb: the missing stage named, and the way out" \
    "the server has no aggregation stage \$lookup" "run without --server-side"
run_rm online run "$T/plans/fields.json" --uri "$uri" --server-side
expect_message "ferretdb: a plan of field steps needs \$merge: named" "the server has no aggregation stage \$merge"
expect_eq "ferretdb: nothing written" \
    "$(pyrun -c 'import pymongo, sys; print(sorted(pymongo.MongoClient(sys.argv[1]).crm.list_collection_names()))' "$uri")" \
    "['people', 'tasks']"
run_rm online run "$T/plans/fields.json" --uri "$uri"
expect_eq "ferretdb: the same plan client-side runs" "$rc" 0
