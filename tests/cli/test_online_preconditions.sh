#!/usr/bin/env bash
# Every precondition of every step before the first write (issue 49, item
# 3), on FerretDB and mongo-java-server: a plan of five steps whose later
# steps read what earlier ones wrote (a set on crm.people, a rename and a
# set on crm.tasks, a denormalize into crm.tasks, a summarize of crm.tasks
# into crm.people). The fields a step reads where an earlier step wrote
# are checked as `remodel run` checks them, on a sample the earlier steps
# are run over (the core's engine, as the run does), before anything is
# written: a misspelt accumulator path at step 5 ({"$sum": "$totl"}), a
# misspelt denormalize source at step 4 (crm.people set by step 1), each
# refused with the offline tool's words, nothing written (no result, no
# record of the plan). The plan spelt right runs (its step 5 reading the
# renamed field and the copied one, its step 6 the computed one). A
# partner collection that is not there is refused before anything too.
# --allow-missing is recorded with the run: its resume without the flag
# checks as the run began; a resume with a --server-version whose $lookup
# rules differ from those the run began with is refused, naming them.
# A join none of whose references finds a partner (a denormalize by
# "title" into people's _id, an embed by people's "name" = tasks' "owner")
# is refused before anything too, with `remodel run`'s words and exit
# status on a dump of the same server (the same code words both:
# remodel/fieldcheck.h); --allow-missing lets it run, as offline, and a
# match that takes no task leaves nothing to refuse.
# CP_KINDS: the servers (default "ferretdb java").
#   REMODEL=build/remodel bash tests/cli/test_online_preconditions.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "preconditions: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
# plan NAME DENORM_SOURCE SUMMARY_FIELDS [FROM]: the five steps (and a
# sixth reading step 5's result).
plan() {
    cat >"$T/plans/$1.json" <<EOF
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"v": 2}}},
  {"rename": {"in": "crm.tasks", "fields": {"title": "label"}}},
  {"set": {"in": "crm.tasks", "fields": {"w": 1}}},
  {"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner",
                   "fields": {"owner_name": "$2"}}},
  {"summarize": {"into": "crm.people", "from": "${4:-crm.tasks}", "localField": "_id",
                 "foreignField": "owner", "fields": $3}},
  {"set": {"in": "crm.people", "fields": {"t2": "\$total"}, "filter": {"total": {"\$gt": 0}}}}]}
EOF
}
plan good name '{"total": {"$sum": "$amount"}, "last": {"$max": "$label"}, "who": {"$max": "$owner_name"}}'
plan acc name '{"total": {"$sum": "$totl"}}'
plan src nme '{"total": {"$sum": "$amount"}}'
plan partner name '{"total": {"$sum": "$amount"}}' crm.taks
# A field no document has yet, meant: run with --allow-missing.
cat >"$T/plans/bonus.json" <<'EOF'
{"remodel": 1, "steps": [
  {"summarize": {"into": "crm.people", "from": "crm.tasks", "localField": "_id",
                 "foreignField": "owner", "fields": {"bonus": {"$sum": "$bonus"}}}}]}
EOF
cat >"$T/plans/nomatch-denorm.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "title",
                   "foreignField": "_id", "fields": {"owner_name": "name"}}}]}
EOF
cat >"$T/plans/nomatch-embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "name",
             "foreignField": "owner", "as": "tasks"}}]}
EOF
cat >"$T/plans/nomatch-none.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "name",
             "foreignField": "owner", "as": "tasks", "match": {"owner": {"$gt": 100}}}}]}
EOF
cat >"$T/plans/late.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "crm.refs", "from": "crm.people", "localField": "p",
                   "foreignField": "_id", "fields": {"who": "name"}}}]}
EOF
# What is on the server besides the sources: crm's collections, the
# plans recorded.
checkpoints() { py 'print(c.remodel.checkpoints.count_documents({}))'; }
written() { py 'print(sorted(c.crm.list_collection_names()), c.remodel.plans.count_documents({}) if "remodel" in c.list_database_names() else 0)'; }

for kind in ${CP_KINDS:-ferretdb java}; do
    online_start "$kind" "$T/srv-$kind" || continue
    py 'c.crm.people.insert_many([{"_id": i, "name": "p%d" % i, "city": "x"} for i in range(50)])
c.crm.tasks.insert_many([{"_id": 1000 + i, "owner": i % 50, "amount": i, "title": "t%d" % i} for i in range(300)])'
    online run acc -q
    expect_eq "$kind: step 5's misspelt accumulator path, read where steps 2-4 wrote: refused (exit 1) before anything is written" \
        "$rc:$(grep -c -F 'step 5 (summarize): fields "totl" is in none of the 300 documents of crm.tasks' "$T/err"):$(written)" \
        "1:1:['people', 'tasks'] 0"
    online run src -q
    expect_eq "$kind: step 4's misspelt denormalize source, read where step 1 wrote: refused (exit 1) with the offline words, nothing written" \
        "$rc:$(grep -c -F 'step 4 (denormalize): fields "nme" is in none of the 50 documents of crm.people; did you mean "name"?' "$T/err"):$(written)" \
        "1:1:['people', 'tasks'] 0"
    online run partner -q
    expect_eq "$kind: step 5's partner collection not there: refused (exit 2) before anything is written" \
        "$rc:$(grep -c "crm.taks" "$T/err"):$(written)" "2:1:['people', 'tasks'] 0"
    "$MONGODUMP" --uri "$uri" --db crm --archive="$T/crm-src.archive" --quiet
    for p in nomatch-denorm nomatch-embed; do
        "$REMODEL" run -q "$T/plans/$p.json" --from "$T/crm-src.archive" --to "$T/$p.archive" 2>"$T/off-err"
        off="$?:$(sed "s|^remodel: error: $T/plans/$p.json: ||" "$T/off-err")"
        online run "$p" -q --create-indexes
        expect_eq "$kind: $p: a join whose references find nothing: refused before anything is written, as remodel run refuses it" \
            "$rc:$(sed "s|^remodel: error: [^ ]*: $T/plans/$p.json: ||" "$T/err"):$(written):$(checkpoints)" \
            "$off:['people', 'tasks'] 0:0"
        cp "$T/off-err" "$T/off-err-$p"
    done
    expect_eq "$kind: ... in the offline words" \
        "$(cat "$T/off-err-nomatch-denorm" "$T/off-err-nomatch-embed" | grep -c -F -e 'step 1 (denormalize): none of the 300 references in crm.tasks (localField "title") is found in crm.people (foreignField "_id")' -e 'step 1 (embed): none of the 300 documents of crm.tasks matches any of the 50 of crm.people (localField "name" = foreignField "owner")')" 2
    for p in nomatch-denorm nomatch-embed; do
        online run "$p" -q --create-indexes --allow-missing
        expect_eq "$kind: $p: ... run with --allow-missing (exit 0)" "$rc:$(cat "$T/err")" "0:"
    done
    online run nomatch-none -q --create-indexes
    expect_eq "$kind: ... a match that takes no task: nothing to refuse (exit 0)" "$rc:$(cat "$T/err")" "0:"
    # references asked about a batch at a time: the one that finds is in the third
    py 'c.crm.refs.insert_many([{"_id": i, "p": "x%d" % i} for i in range(2499)] + [{"_id": 2499, "p": 7}])'
    online run late -q --create-indexes
    expect_eq "$kind: ... the only reference that finds a partner is the 2,500th: not refused (exit 0)" \
        "$rc:$(cat "$T/err")" "0:"
    online run good -q --create-indexes
    expect_eq "$kind: the plan spelt right runs (exit 0): step 5 reads the renamed and the copied fields" \
        "$rc:$(cat "$T/err"):$(py 'p = c.crm[[n for n in c.crm.list_collection_names() if n.endswith("_6")][0]].find_one({"_id": 3})
print(p["total"], p["last"], p["who"], p["t2"])')" \
        "0::768 t53 p3 768"
    # --allow-missing is remembered with the run: a resume without it checks as the run did
    online run bonus -q --allow-missing --create-indexes
    first=$rc
    online run bonus -q
    expect_eq "$kind: a run given --allow-missing, resumed without it: goes on as it began (exit 0, 0)" \
        "$first:$rc:$(cat "$T/err")" "0:0:"
    # the $lookup rules the run began with: a --server-version of other rules is refused, naming them
    rules() { py 'print(c.remodel.plans.find_one({"_id": sys.argv[2]}).get("lookupRules"))' "$(pid bonus)"; }
    before=$(rules)
    online run bonus -q --allow-missing --server-version "$([ "$before" = 9.0 ] && echo 8.0 || echo 9.0)"
    expect_eq "$kind: ... resumed with a --server-version of other \$lookup rules: refused (exit 2), naming the recorded ones, the record kept" \
        "$rc:$(grep -c -F "its run began joining by \$lookup's rules of MongoDB $before (recorded): --server-version contradicts them" "$T/err"):$(rules)" \
        "2:1:$before"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
