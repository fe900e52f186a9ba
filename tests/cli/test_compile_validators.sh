#!/usr/bin/env bash
# The validators compile writes, judged (issue 63, "Done when"): every
# document remodel writes satisfies the validator compiled for its
# namespace, and a document with a wrong type in an embedded field does
# not.
# - the judge is remodel's own filter language ($jsonSchema, common/query):
#   each validator becomes a `set` step whose filter is {$nor: [{$jsonSchema:
#   ...}]}, run over the output, and run's "N changed" counts the invalid
#   documents; every plan of dumps/plans over the sample dump, with the
#   validators from the steps and from the data (--against);
# - one task's done made a string inside a person's array, one part's
#   price made a double: exactly that document fails;
# - a server that validates (REMODEL_TEST_URI: a real MongoDB) judges too:
#   a collection created with the validator in error mode takes every
#   output document and refuses the wrong one with code 121;
#   mongo-java-server drops a create's validator and refuses $jsonSchema
#   in a find (it has no JSON Schema), which is checked and said; a server
#   whose find takes $jsonSchema must agree with remodel's (0 invalid, 1
#   with the wrong one).
#   REMODEL=build/remodel bash tests/cli/test_compile_validators.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT

# judge_plan VALIDATORS PLAN: a plan whose steps mark (with _invalid) the
# documents of each validator's namespace that fail its $jsonSchema.
judge_plan() {
    python3 - "$1" >"$2" <<'PY'
import json, sys
steps = []
for line in open(sys.argv[1]):
    c = json.loads(line)
    steps.append({"set": {"in": c["db"] + "." + c["command"]["collMod"],
                          "filter": {"$nor": [{"$jsonSchema": c["command"]["validator"]["$jsonSchema"]}]},
                          "fields": {"_invalid": True}}})
print(json.dumps({"remodel": 1, "steps": steps}))
PY
}
# judge NAME DUMP VALIDATORS: the judging plan run over DUMP; its "step N
# (set) NS: C changed, U unchanged" lines, as "NS C/U", in $T/judged.
judge() {
    judge_plan "$3" "$T/$1.judge.json"
    rm -rf "$T/judged-out"
    "$REMODEL" run "$T/$1.judge.json" --from "$2" --to "$T/judged-out" --format dir >"$T/run" 2>&1 ||
        { fail "$1: the judging plan runs" "$(tail -3 "$T/run")"; return 1; }
    sed -n 's/^step [0-9]* (set) \([^:]*\): \([0-9]*\) changed, \([0-9]*\) unchanged$/\1 \2\/\3/p' \
        "$T/run" >"$T/judged"
}
# The namespaces judged, and whether every one of them is valid: "0/N"
# with N > 0 each.
all_valid() { awk '{ split($2, a, "/"); if (a[1] != 0 || a[2] == 0) bad = 1 } END { exit bad || NR == 0 }' "$T/judged"; }

for p in "$ROOT"/dumps/plans/*.json; do
    n=$(basename "$p" .json)
    "$REMODEL" run "$p" --from "$S" --to "$T/out-$n" --format dir -q >"$T/run" 2>&1 ||
        { fail "$n: remodel run" "$(tail -3 "$T/run")"; continue; }
    for how in steps against; do
        args=()
        [ $how == against ] && args=(--against "$T/out-$n")
        "$REMODEL" compile "$p" --format validators --canonical "${args[@]}" >"$T/$n.$how.val" 2>"$T/err" ||
            { fail "$n: compile --format validators ($how)" "$(cat "$T/err")"; continue; }
        judge "$n-$how" "$T/out-$n" "$T/$n.$how.val" || continue
        cp "$T/judged" "$T/$n.$how.judged"
        if all_valid; then
            pass "$n ($how): every output document satisfies its validator ($(tr '\n' ';' <"$T/judged"))"
        else
            fail "$n ($how): every output document satisfies its validator" "$(cat "$T/judged")"
        fi
    done
done

# A wrong type in an embedded field: the first element of one document's
# array given another type, by a plan of remodel's own (filter on _id).
# break_one NAME NS ARRAY FIELD EXPR: $T/bad-NAME, from $T/out-NAME.
break_one() {
    local n=$1 ns=$2 arr=$3 f=$4 expr=$5 id
    id=$("$REMODEL" show "$T/out-$n" --ns "$ns" --canonical -q | python3 -c "import sys, json
for l in sys.stdin:
    d = json.loads(l)
    if d.get('$arr'):
        print(json.dumps(d['_id'])); break")
    cat >"$T/break-$n.json" <<JSON
{"remodel": 1, "steps": [{"set": {"in": "$ns", "filter": {"_id": $id}, "fields": {"$arr":
  {"\$concatArrays": [[{"\$mergeObjects": [{"\$first": "\$$arr"}, {"$f": $expr}]}],
                      {"\$slice": ["\$$arr", 1, 1000000]}]}}}}]}
JSON
    rm -rf "$T/bad-$n"
    "$REMODEL" run "$T/break-$n.json" --from "$T/out-$n" --to "$T/bad-$n" --format dir >"$T/run" 2>&1 ||
        fail "$n: the breaking plan runs" "$(tail -3 "$T/run")"
    grep -q "^step 1 (set) $ns: 1 changed" "$T/run" || fail "$n: the breaking plan changes one document" "$(cat "$T/run")"
}
break_one embed-tasks crm.people tasks done '{"$toString": {"$first": "$tasks.done"}}'
break_one embed-parts catalog.products parts price '{"$toDouble": {"$first": "$parts.price"}}'
# what judge gives over the broken dump: the valid output's lines, NS's
# with one document moved from unchanged to changed
one_bad() { awk -v ns="$2" '{ split($2, a, "/"); if ($1 == ns) print $1, (a[1] + 1) "/" (a[2] - 1); else print }' "$T/$1.against.judged"; }
for x in embed-tasks:crm.people embed-parts:catalog.products; do
    n=${x%%:*}
    judge "$n-bad" "$T/bad-$n" "$T/$n.against.val" &&
        expect_eq "$n: the document with a wrong type in an embedded field fails, alone" \
            "$(cat "$T/judged")" "$(one_bad "$n" "${x#*:}")"
done

# ---- a server: the same validators in error mode ----
online_start "$(online_kind java)" "$T/java" || exit 0
"$MONGORESTORE" --uri "$uri" --dir "$T/out-embed-tasks" --nsInclude 'crm.*' --drop >"$T/restore" 2>&1 ||
    fail "server: restore" "$(tail -3 "$T/restore")"
"$REMODEL" show "$T/bad-embed-tasks" --ns crm.people --canonical -q >"$T/bad-people.json"
python3 - "$uri" "$T/embed-tasks.against.val" "$T/bad-people.json" >"$T/server" 2>&1 <<'PY'
import sys, pymongo
from bson import json_util
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
cmd = json_util.loads(open(sys.argv[2]).readline())
db = c[cmd["db"]]
coll = cmd["command"]["collMod"]
db.drop_collection(coll + "_validated")
db.command({"create": coll + "_validated", "validator": cmd["command"]["validator"],
            "validationLevel": "strict", "validationAction": "error"})
info = db.command({"listCollections": 1, "filter": {"name": coll + "_validated"}})["cursor"]["firstBatch"][0]
if "validator" not in info.get("options", {}):
    # No validation there; its find may still judge, a second opinion.
    schema = cmd["command"]["validator"]["$jsonSchema"]
    db.drop_collection("bad_people")
    db.bad_people.insert_many([json_util.loads(l) for l in open(sys.argv[3])])
    try:
        n = [db[x].count_documents({"$nor": [{"$jsonSchema": schema}]}) for x in (coll, "bad_people")]
        print("dropped; find: %d invalid, %d with the wrong one" % tuple(n))
    except pymongo.errors.OperationFailure as e:
        print("dropped; find refuses $jsonSchema (%d)" % e.code)
    sys.exit(0)
good = list(db[coll].find())
db[coll + "_validated"].insert_many(good)
bad = [d for d in (json_util.loads(l) for l in open(sys.argv[3]))
       if isinstance(d["tasks"], list) and d["tasks"] and isinstance(d["tasks"][0].get("done"), str)]
try:
    db[coll + "_validated"].insert_one(dict(bad[0], _id="wrong"))
    print("kept; %d valid taken; the wrong one taken too" % len(good))
except pymongo.errors.WriteError as e:
    print("kept; %d valid taken; the wrong one refused with %d" % (len(good), e.code))
PY
case $(cat "$T/server") in
"dropped; find refuses \$jsonSchema (2)")
    pass "server: mongo-java-server takes the create but drops its validator, and refuses \$jsonSchema in a find: no judge there" ;;
"dropped; find: 0 invalid, 1 with the wrong one")
    pass "server: no validator kept, but its find with \$jsonSchema agrees: 0 invalid, 1 with the wrong one" ;;
"kept; 98 valid taken; the wrong one refused with 121")
    pass "server: every output document valid there, the wrong one refused with 121" ;;
*) fail "server: the validator judges as the filter does" "$(cat "$T/server")" ;;
esac
