#!/usr/bin/env bash
# Plans with expressions and filters (docs/plans.md, "Expressions and
# filters"), end to end: the seeds' schema-versioning example
# (dumps/plans/version-names.json) over a dump holding versions 1, 2 and
# none: the documents the filter takes get firstName/lastName from name as
# the article's split(' ')/join(' ') make them, lose name, get
# schemaVersion 2 (an int32); every other document is byte for byte as it
# was; offline, then online on FerretDB and mongo-java-server (the result
# read back equals the offline one byte for byte), and compiled (a filtered
# step named as run client-side). Also: a filter that leaves out documents
# lacking its field is said by check --against; an expression failing on a
# document stops run with one line naming the plan, step, namespace, _id,
# field, operator and value, and writes nothing; check --against counts
# every failing document; a summary computed by an expression; an unknown
# operator refused at plan load naming the step.
#   REMODEL=build/remodel bash tests/cli/test_expressions.sh
. "$(dirname "$0")/lib.sh"
S=$ROOT/dumps/sample
PLAN=$ROOT/dumps/plans/version-names.json
mkdir -p "$T/plans"

# Versions 2 (the inactive people), 1 (ssn starting with 1) and none.
cat >"$T/plans/pre.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "filter": {"active": false}, "fields": {"schemaVersion": 2}}},
  {"set": {"in": "crm.people", "filter": {"ssn": {"$regex": "^1"}, "active": true},
           "fields": {"schemaVersion": {"$toInt": "1"}}}}]}
EOF
"$REMODEL" run -q --force "$T/plans/pre.json" --from "$S" --to "$T/pre.archive" ||
    fail "the versioned source dump" "$(cat "$T/err")"
run_rm run -q --force "$PLAN" --from "$T/pre.archive" --to "$T/post.archive"
expect_eq "version-names.json offline: exit 0, nothing said" "$rc:$(cat "$T/err")" "0:"
"$REMODEL" show "$T/pre.archive" --ns crm.people >"$T/before"
"$REMODEL" show "$T/post.archive" --ns crm.people >"$T/after"
"$REMODEL" show --canonical "$T/post.archive" --ns crm.people >"$T/after.canonical" 2>/dev/null ||
    cp "$T/after" "$T/after.canonical"

# The expected documents, computed here as the article's JavaScript does.
cat >"$T/expect.py" <<'EOF'
import json, sys
before = [json.loads(l, object_pairs_hook=dict) for l in open(sys.argv[1])]
after_lines = open(sys.argv[2]).read().splitlines()
before_lines = open(sys.argv[1]).read().splitlines()
taken = kept = bad = 0
for b, bl, al in zip(before, before_lines, after_lines):
    v = b.get("schemaVersion")
    if isinstance(v, int) and v >= 2:
        kept += 1
        if bl != al:
            bad += 1; print("changed though version 2:", bl[:120])
        continue
    taken += 1
    parts = b["name"].split(" ")
    want = {}
    for k, val in b.items():
        if k == "name":
            continue
        want[k] = 2 if k == "schemaVersion" else val
    want["firstName"] = parts[0]
    want["lastName"] = " ".join(parts[1:])
    if "schemaVersion" not in b:
        want["schemaVersion"] = 2
    got = json.loads(al, object_pairs_hook=dict)
    if list(got.items()) != list(want.items()):
        bad += 1; print("want", json.dumps(want)[:200], "\n got", al[:200])
print(f"{len(before)} {len(after_lines)} {taken} {kept} {bad}")
EOF
res=$(python3 "$T/expect.py" "$T/before" "$T/after" | tail -n 1)
expect_eq "offline: 98 people, those below version 2 split and stamped, the rest byte for byte" \
    "$(awk '{print $1, $2, ($3 > 0 && $4 > 0), $5}' <<<"$res")" "98 98 1 0"
read -r _ _ taken kept _ <<<"$res"
run_rm run --force "$PLAN" --from "$T/pre.archive" --to "$T/post-counted.archive"
expect_message "run: under the table, the documents the step changed and those it left" \
    "step 1 (set) crm.people: $taken changed, $kept unchanged"
expect_eq "offline: schemaVersion written as an int32" \
    "$(grep -c '"schemaVersion":{"$numberInt":"2"}' "$T/after.canonical"):$(grep -c '"schemaVersion"' "$T/after")" \
    "98:98"

# check --against: the plan as given is valid; a filter of $lt alone
# leaves out the documents lacking the field, and says how many.
run_rm check "$PLAN" --against "$T/pre.archive"
expect_eq "check --against: valid, no warning" "$rc:$(grep -c warning "$T/err")" "0:0"
lacking=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if "schemaVersion" not in json.loads(l)))' "$T/before")
cat >"$T/plans/lt-only.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "filter": {"schemaVersion": {"$lt": 2}}, "fields": {"schemaVersion": 2}}}]}
EOF
run_rm check "$T/plans/lt-only.json" --against "$T/pre.archive"
expect_message "check --against: a filter leaving out $lacking documents that lack its field says so" \
    "step 1 (set): filter: $lacking document(s) lack \"schemaVersion\", which the filter compares"

# An expression failing on a document: run stops, nothing written, one
# line naming the plan, step, namespace, _id, field, operator and value.
cat >"$T/plans/bad-date.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"born": {"$toDate": "$ssn"}}}}]}
EOF
run_rm run -q "$T/plans/bad-date.json" --from "$S" --to "$T/bad.archive"
first_id=$(head -n 1 <(grep -o '"_id":{"$oid":"[0-9a-f]*"}' "$T/before") | sed 's/.*"\([0-9a-f]\{24\}\)".*/\1/')
expect_eq "an expression failing: exit 1, one line, nothing written" \
    "$rc:$(wc -l <"$T/err" | tr -d ' '):$([ -e "$T/bad.archive" ] && echo written)" "1:1:"
expect_message "... naming the plan, step, namespace, _id, field, operator and value" \
    "bad-date.json: step 1 (set): crm.people: document { \"_id\" : { \"\$oid\" : \"$first_id\" } }: field \"born\": \$toDate:" \
    "'149-95-7185'"
run_rm check "$T/plans/bad-date.json" --against "$S"
expect_eq "check --against: every failing document counted, the first five said" \
    "$rc:$(grep -c 'warning: fails: step 1 (set): crm.people: document' "$T/err")" "1:5"
expect_message "... and how many fail" "98 document(s) fail the plan's expressions or filters"
cat >"$T/plans/on-error.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"born": {"$convert": {"input": "$ssn", "to": "date", "onError": null}}}}}]}
EOF
run_rm run -q --force "$T/plans/on-error.json" --from "$S" --to "$T/on-error.archive"
expect_eq "onError catches the conversion: exit 0, every born null" \
    "$rc:$("$REMODEL" show "$T/on-error.archive" --ns crm.people | grep -c '"born":null')" "0:98"

# Refused at plan load, naming the step.
cat >"$T/plans/typo.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"d": {"$toDatee": "$s"}}}}]}
EOF
run_rm check "$T/plans/typo.json"
expect_eq "an unknown operator: refused at load (exit 2)" "$rc" "2"
expect_message "... naming the step and the operator" \
    'typo.json: plan: step 1 (set): "fields": "d": unknown expression operator $toDatee'
cat >"$T/plans/dollar-key.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "fields": {"d": {"x": {"$bogus": 1}}}}}]}
EOF
run_rm check "$T/plans/dollar-key.json"
expect_eq "a literal document with a \$-key: refused at load (exit 2)" "$rc" "2"

# {"$type": ...} is the query and expression operator in a plan, not the
# legacy binary form libbson's reader takes it for (that one, with its
# "$binary", still reads as binary).
cat >"$T/plans/types.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "crm.people", "filter": {"active": {"$type": "bool"}, "birthdate": {"$type": ["date", 9]}},
           "fields": {"t": {"$type": "$active"}, "ta": {"$type": ["$ssn"]},
                      "old": {"$literal": {"$binary": "AA==", "$type": "00"}}}}}]}
EOF
run_rm run -q --force "$T/plans/types.json" --from "$S" --to "$T/types.archive"
expect_eq "\$type in a filter and an expression: read as the operator, a legacy binary still binary" \
    "$rc:$("$REMODEL" show --canonical "$T/types.archive" --ns crm.people | grep -c '"t":"bool","ta":"string","old":{"$binary":{"base64":"AA==","subType":"00"}}')" \
    "0:$(grep -c '"birthdate":{"$date"' "$T/before")"

# A summary computed by an expression, checked against Python's count.
cat >"$T/plans/open-count.json" <<'EOF'
{"remodel": 1, "steps": [
  {"summarize": {"into": "crm.people", "from": "crm.tasks", "localField": "_id", "foreignField": "owner",
                 "fields": {"open": {"$sum": {"$cond": [{"$eq": ["$done", false]}, 1, 0]}},
                            "late": {"$sum": {"$cond": [{"$lt": ["$due_date", {"$toDate": "2013-06-15"}]}, 1, 0]}}}}}]}
EOF
run_rm run -q --force "$T/plans/open-count.json" --from "$S" --to "$T/open.archive"
"$REMODEL" show "$S" --ns crm.tasks >"$T/tasks"
"$REMODEL" show "$T/open.archive" --ns crm.people >"$T/people-open"
expect_eq "summarize with expressions: each person's open and late tasks, as counted here" "$(python3 -c '
import json, sys, collections
opn = collections.Counter(); late = collections.Counter()
for l in open(sys.argv[1]):
    t = json.loads(l); o = json.dumps(t.get("owner"))
    opn[o] += t.get("done") is False
    # null and missing sort below every date: {$lt: [null, date]} is true
    # (a trap MongoDB keeps); a date before 1970 is an object in relaxed JSON.
    d = (t.get("due_date") or {}).get("$date")
    late[o] += not (isinstance(d, str) and d >= "2013-06-15")
bad = 0
for l in open(sys.argv[2]):
    p = json.loads(l); i = json.dumps(p["_id"])
    bad += (p["open"], p["late"]) != (opn[i], late[i])
print(bad)' "$T/tasks" "$T/people-open")" "0"

# compile: the filter as a $match before the step's stage, and a second
# pass copying the documents it leaves out ({$nor: [filter]}).
run_rm compile "$PLAN" --format pipeline
expect_eq "compile: two passes: the filter's \$match then \$addFields, and its \$nor copied as is" \
    "$rc:$(grep -c '"\$match": {"\$or"' "$T/out"):$(grep -c '"\$match": {"\$nor": \[{"\$or"' "$T/out"):$(grep -c '"\$addFields"' "$T/out")" \
    "0:1:1:1"

# Online, on both servers: the result read back is the offline one.
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
cp "$PLAN" "$T/plans/version-names.json"
for kind in $(online_kinds); do
    online_start "$kind" "$T/$kind" || continue
    "$MONGORESTORE" --uri "$uri" --archive="$T/pre.archive" --nsInclude 'crm.people' \
        --noIndexRestore --quiet 2>"$T/err" || { fail "$kind: restore" "$(cat "$T/err")"; continue; }
    run_rm online run -q "$T/plans/version-names.json" --uri "$uri" --batch-size 13
    expect_eq "$kind: version-names online: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: version-names online: the people as remodel run made them, byte for byte" \
        "$T/post.archive" crm.people=people_remodel_$(plan_id "$T/plans/version-names.json")_1
    run_rm online verify -q "$T/plans/version-names.json" --uri "$uri"
    expect_eq "$kind: verify: every result as the sources make it" "$rc" "0"
    # The compiled pipelines, run by the server ($merge: not on FerretDB 1.x).
    if [ "$kind" != ferretdb ]; then
        cp "$PLAN" "$T/plans/vn-server.json"
        run_rm online run -q "$T/plans/vn-server.json" --uri "$uri" --server-side
        expect_eq "$kind: --server-side: exit 0" "$rc:$(cat "$T/err")" "0:"
        online_same "$kind: --server-side: the server's pipelines give remodel run's people" \
            "$T/post.archive" crm.people=people_remodel_$(plan_id "$T/plans/vn-server.json")_1
    fi
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
