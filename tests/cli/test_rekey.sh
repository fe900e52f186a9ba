#!/usr/bin/env bash
# rekey (issue 64, item 3; docs/plans.md, "rekey"):
#  - offline, against the oracle of tests/transforms/rekey.py (not
#    remodel): airports re-keyed by their IATA code, the flights' and the
#    airports' own references rewritten, byte for byte, with and without
#    --batch, to an archive, spilling at --memory 64K, and after a set
#    keeping the old _id; a key no airport has refused naming the flight,
#    or kept and counted; two airports given one code refused naming both,
#    nothing written; remodel-gen's sample:
#    parts re-keyed by partno and hosts by name, their references with
#    them; keepSource leaving the airports as they were;
#  - the plan's mistakes refused before any data is read, naming the step
#    and the key;
#  - compile says why no pipeline runs it, and writes no view for it;
#  - the output restored by the real mongorestore into mongo-java-server:
#    the re-keyed documents found there by their new _id, every namespace
#    the output's; online run refuses the plan, naming the step, and
#    writes nothing.
#   REMODEL=build/remodel bash tests/cli/test_rekey.sh
. "$(dirname "$0")/lib.sh"
export REMODEL PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/w" "$T/plans"
GEN=$(dirname "$REMODEL")/remodel-gen

# --- offline, against the oracle ---------------------------------------------
python3 "$ROOT/tests/transforms/rekey.py" airports "$T/w" 7 ||
    fail "rekey.py airports: every check of the oracle" "it exited with status $?"
"$GEN" --out "$T/gen" --scale 2 --seed 11 >/dev/null 2>&1 ||
    fail "remodel-gen: the sample at scale 2" "it exited with status $?"
python3 "$ROOT/tests/transforms/rekey.py" gen "$T/w" "$T/gen" ||
    fail "rekey.py gen: every check of the oracle" "it exited with status $?"

# keepSource: the airports stay as they were; the re-keyed ones are the same.
SRC=$T/w/src
sed 's/"id": "[$]iata"/"id": "$iata", "keepSource": true/' "$T/w/plan.json" >"$T/keep.json"
run_rm run "$T/keep.json" --from "$SRC" --to "$T/keep-out"
expect_eq "keepSource: air.airports as in the source, byte for byte; the re-keyed airports as without it" \
    "$rc:$(cmp -s "$SRC/air/airports.bson" "$T/keep-out/air/airports.bson" && echo same):$(cmp -s \
      "$T/w/out-by-default/air/airports_by_code.bson" "$T/keep-out/air/airports_by_code.bson" && echo same)" \
    "0:same:same"

# --- the plan's mistakes -----------------------------------------------------
bad() {
    local name=$1 step=$2 want=$3
    echo "{\"remodel\": 1, \"steps\": [$step]}" >"$T/bad.json"
    run_rm check "$T/bad.json" --against "$SRC"
    expect_eq "refused: $name (exit 2, the step and key named)" \
        "$rc:$(grep -c -F -- "$want" "$T/err")" "2:1"
}
A='"from": "air.airports", "to": "air.byc", "id": "$iata"'
bad "no id" '{"rekey": {"from": "air.airports", "to": "air.byc"}}' \
    'bad.json: plan: step 1 (rekey): "id": missing (required)'
bad "a rekey into its own source" '{"rekey": {"from": "air.airports", "to": "air.airports", "id": "$iata"}}' \
    'step 1 (rekey): "to": must differ from "from" (air.airports): a document'"'"'s _id never changes where it is'
bad "a filter" "{\"rekey\": {$A, \"filter\": {}}}" \
    'step 1 (rekey): "filter": rekey does not take a filter'
bad "an unknown operator in id" '{"rekey": {"from": "air.airports", "to": "air.byc", "id": {"$upper": "$iata"}}}' \
    'step 1 (rekey): "id": '
bad "references not an array" "{\"rekey\": {$A, \"references\": {\"in\": \"air.flights\"}}}" \
    'step 1 (rekey): "references": must be an array of {"in": "db.coll", "field": "path"}'
bad "a reference without its field" "{\"rekey\": {$A, \"references\": [{\"in\": \"air.flights\"}]}}" \
    'step 1 (rekey): "references": reference 1 lacks "field"'
bad "a reference under _id" "{\"rekey\": {$A, \"references\": [{\"in\": \"air.flights\", \"field\": \"_id.a\"}]}}" \
    'step 1 (rekey): "references": air.flights._id.a: a reference is a field outside _id'
bad "a reference in from" "{\"rekey\": {$A, \"references\": [{\"in\": \"air.airports\", \"field\": \"hub\"}]}}" \
    'step 1 (rekey): "references": air.airports: its documents go to air.byc; name air.byc to rewrite references among them'
bad "one reference twice" "{\"rekey\": {$A, \"references\": [{\"in\": \"air.flights\", \"field\": \"origin\"}, {\"in\": \"air.flights\", \"field\": \"origin\"}]}}" \
    'step 1 (rekey): "references": air.flights.origin is named twice'
bad "three namespaces of references" "{\"rekey\": {$A, \"references\": [{\"in\": \"a.b\", \"field\": \"x\"}, {\"in\": \"a.c\", \"field\": \"x\"}, {\"in\": \"a.d\", \"field\": \"x\"}]}}" \
    'step 1 (rekey): "references": a rekey rewrites references in at most 2 namespaces besides "to"'
bad "onMissing null" "{\"rekey\": {$A, \"onMissing\": \"null\"}}" \
    'step 1 (rekey): "onMissing": "null": must be "error" (a reference no document of "from" had stops the run) or "keep"'
bad "a namespace of references that does not exist" "{\"rekey\": {$A, \"references\": [{\"in\": \"air.nope\", \"field\": \"x\"}]}}" \
    'air.nope'
bad "a target holding documents" '{"rekey": {"from": "air.airports", "to": "air.flights", "id": "$iata"}}' \
    'step 1 (rekey): "to": namespace air.flights already exists and holds 3000 document(s)'

# A reference's field in no document: a misspelling, refused as every
# step's are (exit 1), unless allowMissing.
echo "{\"remodel\": 1, \"steps\": [{\"rekey\": {$A, \"references\": [{\"in\": \"air.byc\", \"field\": \"hubb\"}]}}]}" >"$T/typo.json"
run_rm check "$T/typo.json" --against "$SRC"
expect_eq "a reference's field in no document: refused, the closest name said (exit 1)" \
    "$rc:$(grep -c -F 'step 1 (rekey): references "hubb" is in none of the 300 documents of air.airports; did you mean "hub"?' "$T/err")" "1:1"
sed 's/"id": "[$]iata"/"id": "$iata", "allowMissing": true/' "$T/typo.json" >"$T/typo-ok.json"
run_rm check "$T/typo-ok.json" --against "$SRC"
expect_eq "the same with allowMissing: valid, no reference rewritten (exit 0)" \
    "$rc:$(grep -c -F 'step 1 (rekey) air.airports: 300 document(s) re-keyed into air.byc; 0 reference(s) rewritten' "$T/err")" "0:1"

# What id gives, per document: refused naming the document, exit 1.
for c in 'nothing (a missing value)|"$nope", "allowMissing": true' 'an array|["$iata"]'; do
    echo "{\"remodel\": 1, \"steps\": [{\"rekey\": {\"from\": \"air.airports\", \"to\": \"air.byc\", \"id\": ${c#*|}}}]}" >"$T/id.json"
    run_rm run "$T/id.json" --from "$SRC" --to "$T/id-out"
    expect_eq "id giving ${c%%|*}: refused naming the first airport (exit 1), nothing written" \
        "$rc:$(grep -c -F "step 1 (rekey): air.airports: document { \"_id\" : 0 }: \"id\" gives ${c%%|*}, which no _id can be" "$T/err"):$([ -e "$T/id-out" ] && echo written)" "1:1:"
done

# --- compile ----------------------------------------------------------------
PLAN=$T/w/plan.json
run_rm compile "$PLAN"
expect_eq "compile: the step client-side, its reason that it runs offline only (exit 0)" \
    "$rc:$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["steps"][0]
print(s["op"], s["serverSide"], "runs offline only" in s["reason"])' "$T/out")" "0:rekey False True"
run_rm compile "$PLAN" --format views
expect_message "compile --format views: no view gives the old _ids back" \
    'no view of air.airports: step 1 (rekey): rekey dropped the old _ids: no view gives them back'

# --- restored by mongorestore; online refused --------------------------------
use_peers "rekey: peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "rekey: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { kill $(jobs -p) 2>/dev/null; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
online_start java "$T/java" 0 || exit 0
run_rm run "$T/w/gen.json" --from "$T/gen" --to "$T/gen.archive"
expect_eq "remodel-gen's sample re-keyed to an archive (exit 0)" "$rc" 0
"$MONGORESTORE" --uri "$uri" --archive="$T/gen.archive" --quiet 2>"$T/err" ||
    fail "java: mongorestore takes the output" "$(tail -3 "$T/err")"
online_same "java: the restored namespaces are the output's, document for document" \
    "$T/gen.archive" catalog.parts_by_no=parts_by_no catalog.products=products \
    logging.hosts_by_name=hosts_by_name logging.logmsg=logmsg
# A part found by its number, and each product's parts found by theirs.
expect_eq "java: every product's parts found among the parts by their numbers" \
    "$(py 'db = c.catalog
n = m = 0
for p in db.products.find():
    for k in p.get("parts", []):
        n += 1
        m += db.parts_by_no.count_documents({"_id": k})
print(n > 0 and n == m, db.parts.count_documents({}))')" "True 0"

py 'c.drop_database("air")'
"$MONGORESTORE" --uri "$uri" --dir "$SRC" --quiet 2>"$T/err" ||
    fail "java: the airports restored" "$(tail -3 "$T/err")"
run_rm online run "$PLAN" --uri "$uri"
expect_eq "online run: refused naming the step and why (exit 2), nothing written" \
    "$rc:$(grep -c -F 'step 1 (rekey): rekey runs offline only (remodel run over a dump)' "$T/err"):$(py 'print(sorted(c.air.list_collection_names()))')" \
    "2:1:['airports', 'flights']"
