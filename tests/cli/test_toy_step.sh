#!/usr/bin/env bash
# A step is one file and one row: the test build (make toy) adds a toy step
# kind, {"toy": {"in": NS, "field": NAME}} (tests/toy/step_toy.c and its
# rows under REMODEL_TOY_STEP), and nothing else. The plan parser, check,
# run (its batch path, since its row has no stage), the online mode (the
# passes in its row) and compile (its row has no pipeline: refused with the
# table's reason) pick it up from the tables alone; the ordinary build
# knows no such operation.
#   REMODEL=build/remodel bash tests/cli/test_toy_step.sh
. "$(dirname "$0")/lib.sh"
S=$ROOT/dumps/sample
TOY=$ROOT/build/toy/remodel

make -C "$ROOT" --no-print-directory toy >"$T/make" 2>&1 ||
    { fail "make toy" "$(tail -20 "$T/make")"; exit 0; }
pass "make toy: builds the test build with the toy step"

cat >"$T/toy.json" <<'JSON'
{"remodel": 1, "steps": [{"toy": {"in": "crm.people", "field": "kind"}}]}
JSON
cat >"$T/toy2.json" <<'JSON'
{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"a": 1}}},
                         {"toy": {"in": "crm.people", "field": "a"}}]}
JSON

# The ordinary build: no such operation, and its list has none.
run_rm check "$T/toy.json"
expect_eq "ordinary build: toy is an unknown operation (exit 2)" "$rc" 2
expect_message "ordinary build: ... listing the table's operations, without toy" \
    "step 1 (toy): unknown operation (embed, extract, set, unset, rename, version, denormalize, summarize, bucketize, unbucketize, copy, move, delete, rekey)"

# The parser: its keys from its row.
REMODEL=$TOY
run_rm check "$T/toy.json"
expect_eq "toy build: check takes the toy step (exit 0)" "$rc:$(cat "$T/err")" "0:"
echo '{"remodel": 1, "steps": [{"toi": {"in": "crm.people", "field": "kind"}}]}' >"$T/slip.json"
run_rm check "$T/slip.json"
expect_message "toy build: the operations listed include toy, and the closest is suggested" \
    "unknown operation (embed, extract, set, unset, rename, version, denormalize, summarize, bucketize, unbucketize, copy, move, delete, rekey, toy): did you mean \"toy\"?"
echo '{"remodel": 1, "steps": [{"toy": {"in": "crm.people"}}]}' >"$T/nofield.json"
run_rm check "$T/nofield.json"
expect_eq "toy build: a required key missing: exit 2" "$rc" 2
expect_message "toy build: ... named" 'step 1 (toy): "field": missing (required)'
echo '{"remodel": 1, "steps": [{"toy": {"in": "crm.people", "field": "k", "as": "x"}}]}' >"$T/extra.json"
run_rm check "$T/extra.json"
expect_message "toy build: a key not in its row refused" 'step 1 (toy): "as"'
echo '{"remodel": 1, "steps": [{"toy": {"in": "crm.nobody", "field": "k"}}]}' >"$T/absent.json"
run_rm check "$T/absent.json" --against "$S"
expect_message "toy build: check --against finds the namespace its row reads absent" "crm.nobody"

# run --help and check --help list the table's operations.
expect_eq "toy build: run --help and check --help list toy last" \
    "$("$REMODEL" run --help | grep -c ' rekey, toy$'):$("$REMODEL" check --help | grep -c ' rekey, toy$')" "1:1"
expect_eq "ordinary build: run --help lists no toy" "$("$ROOT/build/remodel" run --help | grep -c 'toy')" 0

# run: every person has kind "toy"; every other namespace is as convert
# writes it.
run_rm run -q "$T/toy.json" --from "$S" --to "$T/toy.archive"
expect_eq "toy build: run: exit 0" "$rc:$(cat "$T/err")" "0:"
"$REMODEL" show "$T/toy.archive" --ns crm.people >"$T/people.json"
expect_eq "toy build: run: every person, each with kind \"toy\" last" \
    "$(python3 -c 'import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
print(len(docs), sum(list(d)[-1] == "kind" and d["kind"] == "toy" for d in docs))' "$T/people.json")" "98 98"
"$REMODEL" convert -q "$S" "$T/sample.archive"
"$REMODEL" diff "$T/sample.archive" "$T/toy.archive" >"$T/diff" 2>&1
expect_eq "toy build: run changed crm.people's 98 documents and no other namespace" \
    "$(awk '$2 == "differs" {print $1, $7}' "$T/diff") $(awk '$2 == "identical"' "$T/diff" | grep -c .)" \
    "crm.people 98 10"
# With a field step before it: no stage in its row, so the plan runs
# store to store, and that is the same as --batch.
run_rm run -q "$T/toy2.json" --from "$S" --to "$T/toy2.archive"
"$REMODEL" run -q "$T/toy2.json" --from "$S" --to "$T/toy2b.archive" --batch
check "toy build: set then toy: as --batch, byte for byte" cmp -s "$T/toy2.archive" "$T/toy2b.archive"
expect_eq "toy build: set then toy: the toy's value wins" \
    "$("$REMODEL" show "$T/toy2.archive" --ns crm.people --limit 1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["a"])')" toy

# compile: the toy's row in the compiler's table has no pipeline, and says
# why; the plan's document names it as client-side.
run_rm compile "$T/toy.json"
expect_eq "toy build: compile: exit 0 (a step without a pipeline runs client-side)" "$rc" 0
expect_message "toy build: compile: ... with its row's reason" \
    "step 1 (toy) runs client-side: the test build's toy step has no pipeline"
expect_eq "toy build: compile: the document says so" \
    "$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["steps"][0]
print(s["op"], s["serverSide"])' "$T/out")" "toy False"

# online: the toy's passes (one pass over `in`, in place too) are all the
# runner needs; the server's result is the offline one. Each server runs
# with its change log, and a sync after three writes follows it by the
# trace the toy's passes declare (each result its driver's own, by _id):
# it reads a handful of documents, not the collection.
use_peers "toy build: online" || exit 0
export PYTHONPATH=$ROOT/tests/transforms
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
cp "$T/toy.json" "$T/toyin.json"
echo '{"remodel": 1, "steps": [{"toy": {"in": "crm.tasks", "field": "seen"}}]}' >"$T/toyf.json"
for kind in $(online_kinds); do
    online_start "$kind" "$T/$kind" 0 changelog || continue
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude crm.people --noIndexRestore --quiet
    run_rm online run -q "$T/toy.json" --uri "$uri" --batch-size 9
    expect_eq "toy build: $kind: online run, side by side: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "toy build: $kind: side by side: the documents remodel run makes" "$T/toy.archive" \
        crm.people=people_remodel_$(plan_id "$T/toy.json")_1
    run_rm online run -q "$T/toyin.json" --uri "$uri" --in-place --batch-size 9
    expect_eq "toy build: $kind: online run --in-place: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "toy build: $kind: in place: the documents remodel run makes" "$T/toy.archive" \
        crm.people=people
    # Followed from the change log: the toy's passes say each result is
    # its driver's own, by _id, and that row of the followers is all a
    # sync needs to recompute the three tasks changed, not the 1000.
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude crm.tasks --noIndexRestore --quiet
    run_rm online run -q "$T/toyf.json" --uri "$uri" --batch-size 50
    expect_eq "toy build: $kind: online run over crm.tasks with the change log: exit 0" \
        "$rc:$(cat "$T/err")" "0:"
    py 'ids = [d["_id"] for d in c.crm.tasks.find({}, {"_id": 1}).sort("_id", 1).limit(3)]
c.crm.tasks.update_one({"_id": ids[0]}, {"$set": {"note": "a"}})
c.crm.tasks.update_one({"_id": ids[1]}, {"$set": {"note": "b"}})
c.crm.tasks.delete_one({"_id": ids[2]})'
    run_rm online sync "$T/toyf.json" --uri "$uri"
    rd=$(figure read)
    expect_eq "toy build: $kind: sync follows the log: exit 0, 3 events, nothing rescanned in full" \
        "$rc:$(events):$(grep -c 'rescanned in full' "$T/err")" "0:3:0"
    if [ -n "$rd" ] && [ "$rd" -ge 1 ] && [ "$rd" -le 10 ]; then
        pass "toy build: $kind: sync read $rd documents, not the 1000"
    else fail "toy build: $kind: sync read a handful of documents" "$(cat "$T/err")"; fi
    expect_eq "toy build: $kind: the changed tasks' results rewritten, the deleted one's removed" \
        "$(py 'r = c.crm[sys.argv[2]]
ids = sorted(d["_id"] for d in c.crm.tasks.find({}, {"_id": 1}).sort("_id", 1).limit(2))
print(r.count_documents({}), [(d.get("note"), d.get("seen")) for d in r.find({"_id": {"$in": ids}}).sort("_id", 1)])' \
            "tasks_remodel_$(plan_id "$T/toyf.json")_1")" "999 [('a', 'toy'), ('b', 'toy')]"
    run_rm online verify "$T/toyf.json" --uri "$uri"
    expect_eq "toy build: $kind: verify after the sync: every result right" \
        "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
