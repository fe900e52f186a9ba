#!/usr/bin/env bash
# remodel online run refuses a misspelt plan before it writes anything
# (issue 25, item 1), on FerretDB and on mongo-java-server, with the Atlas
# sample's customers and accounts:
#  - foreignField "acount_id" (no account has it), with --create-indexes:
#    exit 1, `remodel run`'s words ("is in none of the 1746 documents of
#    sample_analytics.accounts; did you mean "account_id"?"); no index
#    acount_id_1, no results collection, no plan record;
#  - from: sample_analytics.acounts, and into: sample_analytic.customers:
#    exit 2, naming the namespace and the one meant; no collection acounts,
#    no database sample_analytic;
#  - --allow-missing, or "allowMissing": true, lets the field through;
#  - a field that only the last document has, and a field a step reads
#    that an earlier step of the plan writes, are not refused;
#  - the plan spelt right runs (exit 0) and equals remodel run's result.
#   REMODEL=build/remodel bash tests/cli/test_online_typos.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
ATLAS=$(atlas_sample)
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT

# plan NAME FROM INTO FOREIGN [EXTRA]: an embed of accounts into customers.
plan() {
    cat >"$T/$1.json" <<EOF
{"remodel": 1, "steps": [
  {"embed": {"from": "$2", "into": "$3", "localField": "accounts", "foreignField": "$4",
             "as": "accounts"${5:-}}}]}
EOF
}
plan good sample_analytics.accounts sample_analytics.customers account_id
plan field sample_analytics.accounts sample_analytics.customers acount_id
plan field_allowed sample_analytics.accounts sample_analytics.customers acount_id ', "allowMissing": true'
plan from sample_analytics.acounts sample_analytics.customers account_id
plan into sample_analytics.accounts sample_analytic.customers account_id
# A field only the last-inserted document has; a field step 1 writes.
cat >"$T/late.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "t.kids", "into": "t.parents", "localField": "_id", "foreignField": "rare",
             "as": "kids"}}]}
EOF
cat >"$T/chain.json" <<'EOF'
{"remodel": 1, "steps": [
  {"rename": {"in": "t.kids", "fields": {"rare": "parent"}}},
  {"embed": {"from": "t.kids", "into": "t.parents", "localField": "_id", "foreignField": "parent",
             "as": "kids"}}]}
EOF
"$REMODEL" run -q "$T/good.json" --from "$ATLAS" --nsInclude 'sample_analytics.*' --to "$T/good.archive" ||
    fail "offline reference"

online() { run_rm online run "$T/$1.json" --uri "$uri" "${@:2}"; }
# made: what the refused runs must not have made, a word each ("-": none).
made() {
    python3 - "$uri" <<'PY'
import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
a = c.sample_analytics
idx = [i for i in a.accounts.index_information() if "acount" in i]
remodel = [n for n in a.list_collection_names() if "_remodel_" in n]
plans = c.remodel.plans.count_documents({}) if "remodel" in c.list_database_names() else 0
print("index" if idx else "-", "acounts" if "acounts" in a.list_collection_names() else "-",
      "sample_analytic" if "sample_analytic" in c.list_database_names() else "-",
      "results" if remodel else "-", "plans" if plans else "-")
PY
}

for kind in $(online_kinds); do
    online_start "$kind" "$T/$kind" || continue
    "$MONGORESTORE" --uri "$uri" --dir "$ATLAS" --nsInclude 'sample_analytics.*' --noIndexRestore --quiet
    python3 - "$uri" <<'PY'
import sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True)
c.t.parents.insert_many([{"_id": i} for i in range(5)])
c.t.kids.insert_many([{"_id": 100 + i} for i in range(300)] + [{"_id": 999, "rare": 3}])
PY

    online field --create-indexes
    expect_eq "$kind: foreignField \"acount_id\": refused (exit 1)" "$rc" "1"
    expect_message "$kind: ... in remodel run's words, with the field meant" \
        'step 1 (embed): foreignField "acount_id" is in none of the 1746 documents of sample_analytics.accounts; did you mean "account_id"?'
    expect_eq "$kind: ... nothing made: no index, no results, no plan record" "$(made)" "- - - - -"

    online from --create-indexes
    expect_eq "$kind: from: sample_analytics.acounts: refused (exit 2)" "$rc" "2"
    expect_message "$kind: ... naming the namespace meant" \
        'namespace sample_analytics.acounts is not in the input' 'did you mean "sample_analytics.accounts"?'
    online into --create-indexes
    expect_eq "$kind: into: sample_analytic.customers: refused (exit 2)" "$rc" "2"
    expect_message "$kind: ... naming the database meant" \
        'namespace sample_analytic.customers is not in the input' 'did you mean "sample_analytics.customers"?'
    expect_eq "$kind: ... nothing made: no collection acounts, no database sample_analytic" \
        "$(made)" "- - - - -"

    online late --create-indexes -q
    expect_eq "$kind: a field only the last document has: not refused" "$rc:$(cat "$T/err")" "0:"
    online chain --create-indexes -q
    expect_eq "$kind: a field an earlier step writes: not refused" "$rc:$(cat "$T/err")" "0:"

    online field_allowed --create-indexes -q
    expect_eq "$kind: \"allowMissing\": true lets it through (exit 0)" "$rc:$(cat "$T/err")" "0:"
    run_rm online rollback "$T/field_allowed.json" --uri "$uri" -q
    online field --create-indexes -q --allow-missing
    expect_eq "$kind: --allow-missing lets it through (exit 0)" "$rc:$(cat "$T/err")" "0:"
    run_rm online rollback "$T/field.json" --uri "$uri" -q

    online good --create-indexes -q
    expect_eq "$kind: the plan spelt right runs (exit 0)" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: ... and its results are remodel run's" "$T/good.archive" \
        sample_analytics.customers=customers_remodel_$(plan_id "$T/good.json")_1
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
