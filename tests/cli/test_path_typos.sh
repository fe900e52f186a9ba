#!/usr/bin/env bash
# Every path a plan reads gets the guard localField and foreignField have
# (issue 52, trip 1): a misspelt path in an accumulator ({"$sum": "$totl"}
# summed to 0 for every parent, and check --against said "valid"), a sort,
# a match or a filter that no document has is refused with
# "is in none of the N documents; did you mean ...", by run and by check;
# "allowMissing": true lets it through; a path some documents have, and a
# filter's {"f": {"$exists": false}}, pass as before.
#   REMODEL=build/remodel bash tests/cli/test_path_typos.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/dumps/sample
# plan FILE STEP: a plan of one step.
plan() { printf '{"remodel": 1, "steps": [%s]}\n' "$2" >"$T/$1"; }
summ='"summarize": {"into": "crm.people", "from": "crm.tasks", "localField": "_id", "foreignField": "owner"'
emb='"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "tasks"'

# refused NAME PLAN KEY PATH MEANT: run and check both refuse PLAN, naming
# KEY "PATH", crm.tasks or crm.people, and "did you mean" MEANT.
refused() {
    local name=$1 p=$2 key=$3 path=$4 meant=$5
    run_rm run "$T/$p" --from "$S" --to "$T/out-$p.archive"
    expect_eq "$name: run refuses it" "$rc" 1
    expect_message "$name: run names it" "$key \"$path\" is in none of the" "did you mean \"$meant\"?"
    [ ! -e "$T/out-$p.archive" ] && pass "$name: nothing written" || fail "$name: nothing written"
    run_rm check "$T/$p" --against "$S"
    expect_eq "$name: check --against says it is not valid" "$rc" 1
    expect_message "$name: check names it" "$key \"$path\" is in none of the"
}

plan sum.json "{$summ, \"fields\": {\"done_count\": {\"\$sum\": \"\$dne\"}}}}"
refused "summarize {\$sum: \$dne}" sum.json fields dne done
plan max.json "{$summ, \"fields\": {\"last_due\": {\"\$max\": \"\$due_dat\"}}}}"
refused "summarize {\$max: \$due_dat}" max.json fields due_dat due_date
plan expr.json "{$summ, \"fields\": {\"n\": {\"\$sum\": {\"\$cond\": [\"\$don\", 1, 0]}}}}}"
refused "summarize, a path inside an expression" expr.json fields don done
plan top.json "{$summ, \"fields\": {\"next\": {\"\$topN\": {\"n\": 2, \"sortBy\": {\"due_dte\": 1}, \"output\": \"\$description\"}}}}}"
refused "summarize \$topN's sortBy" top.json sortBy due_dte due_date
plan ssort.json "{$summ, \"sort\": {\"due_dtae\": 1}, \"fields\": {\"first\": {\"\$first\": \"\$description\"}}}}"
refused "summarize sort" ssort.json sort due_dtae due_date
plan esort.json "{$emb, \"sort\": {\"due_dat\": 1}}}"
refused "embed sort" esort.json sort due_dat due_date
plan ematch.json "{$emb, \"match\": {\"don\": true}}}"
refused "embed match" ematch.json match don done
plan efilter.json "{$emb, \"filter\": {\"actve\": true}}}"
refused "embed filter (on the parents)" efilter.json filter actve active

# The same plans, spelt right, run; allowMissing lets a typo through; a
# filter asking for documents lacking a field no document has yet runs.
plan ok.json "{$summ, \"sort\": {\"due_date\": 1}, \"fields\": {\"done_count\": {\"\$sum\": {\"\$cond\": [\"\$done\", 1, 0]}}, \"last_due\": {\"\$max\": \"\$due_date\"}, \"first\": {\"\$first\": \"\$\$ROOT\"}}}}"
run_rm run "$T/ok.json" --from "$S" --to "$T/ok.archive" -q
expect_eq "summarize spelt right: runs" "$rc:$(cat "$T/err")" "0:"
plan eok.json "{$emb, \"sort\": {\"due_date\": 1}, \"project\": {\"description\": 1, \"done\": 1}, \"match\": {\"done\": true}, \"filter\": {\"migrated\": {\"\$exists\": false}}}}"
run_rm run "$T/eok.json" --from "$S" --to "$T/eok.archive" -q
expect_eq "embed spelt right, a filter on a field none has yet: runs" "$rc:$(cat "$T/err")" "0:"
plan allow.json "{$summ, \"allowMissing\": true, \"fields\": {\"done_count\": {\"\$sum\": \"\$dne\"}}}}"
run_rm run "$T/allow.json" --from "$S" --to "$T/allow.archive" -q
expect_eq "allowMissing: the typo runs" "$rc" 0
run_rm run "$T/sum.json" --from "$S" --to "$T/allow2.archive" -q --allow-missing
expect_eq "--allow-missing: the typo runs" "$rc" 0

# A field named with a dot (legal since MongoDB 5.0) is no path: the guard
# says so rather than suggest "_id.id"; a near path through a document
# is still suggested, and names whose value is a scalar are not.
mkdir -p "$T/dots/shop"
python3 -c 'import bson, sys
d = sys.argv[1]
items = [{"_id": i, "owner.id": i % 3, "owner": {"name": "x"} if i % 2 else "s", "n": 1} for i in range(6)]
open(d + "/items.bson", "wb").write(b"".join(bson.encode(x) for x in items))
open(d + "/owners.bson", "wb").write(b"".join(bson.encode({"_id": i}) for i in range(3)))' "$T/dots/shop"
dotemb='"embed": {"from": "shop.items", "into": "shop.owners", "localField": "_id", "as": "items"'
plan dot.json "{$dotemb, \"foreignField\": \"owner.id\"}}"
run_rm check "$T/dot.json" --against "$T/dots"
expect_eq "a field named \"owner.id\": refused (exit 1)" "$rc" 1
expect_message "... saying a field has that name and no path names it" \
    'foreignField "owner.id" is in none of the 6 documents of shop.items; a field is named "owner.id" itself'
expect_eq "... suggesting no \"_id.id\" nor \"n.id\"" "$(grep -c '"_id.id"\|"n.id"' "$T/err")" 0
plan dot2.json "{$dotemb, \"foreignField\": \"ownr.name\"}}"
run_rm check "$T/dot2.json" --against "$T/dots"
expect_message "a near path through a document: suggested" 'did you mean "owner.name"?'
exit 0
