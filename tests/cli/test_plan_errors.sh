#!/usr/bin/env bash
# Malformed and wrong plans: each is refused by `check` and by `run`
# (exit 2) with one error line naming the step and key, before anything is
# read or written. Run under the sanitizer build too (REMODEL_SANITIZE=1):
# a sanitizer report would add lines and fail the one-line checks.
#   REMODEL=build/remodel bash tests/cli/test_plan_errors.sh
. "$(dirname "$0")/lib.sh"

S=$ROOT/dumps/sample
GOOD='{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"x": 1}}}]}'

# refused NAME PLAN-TEXT STRING...: check and run --dry-run both exit 2 with
# one line holding every STRING.
refused() {
    local n=$1 text=$2 cmd; shift 2
    printf '%s' "$text" >"$T/plan.json"
    for cmd in check run; do
        if [ $cmd == check ]; then run_rm check "$T/plan.json"
        else run_rm run "$T/plan.json" --from "$S" --to "$T/out.archive"; fi
        expect_eq "$n ($cmd): exit 2" "$rc" 2
        expect_one_line "$n ($cmd)" "$@"
    done
    expect_eq "$n: nothing written" "$(ls "$T" | grep -c out.archive)" 0
}
expect_one_line() {
    local n=$1 s missing=""; shift
    for s in "$@"; do grep -qF -- "$s" "$T/err" || missing="$missing [$s]"; done
    if [ "$(wc -l <"$T/err")" -eq 1 ] && [ -z "$missing" ]; then pass "$n: one line naming it"
    else fail "$n: one line naming it" "missing$missing in: $(head -c 400 "$T/err")"; fi
}

# --- text that is not a plan --------------------------------------------------
refused "empty file" "" "not valid JSON"
refused "blank file" "   
" "not valid JSON"
refused "cut after the steps' bracket" '{"remodel": 1, "steps": [' "not valid JSON"
for cut in 1 10 25 40 60 75; do
    refused "cut at byte $cut" "${GOOD:0:$cut}" "plan"
done
refused "a second object after the plan" "$GOOD{\"remodel\": 1}" "something follows the plan's closing brace"
refused "text after the plan" "$GOOD x" "something follows the plan's closing brace"
refused "bad UTF-8 in a string" "$(printf '{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"x": "\xff\xfe"}}}]}')" "plan"
refused "deep nesting" "{\"remodel\": 1, \"steps\": [{\"set\": {\"in\": \"crm.people\", \"fields\": {\"x\": $(printf '[%.0s' $(seq 1 2000))$(printf ']%.0s' $(seq 1 2000))}}}]}" "plan"
refused "a bad literal in step 2" '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}, {"set": {"in": "a.b", "fields": {"y": {"$oid": "zz"}}}}]}' \
    "step 2 (set)" "not valid Extended JSON"

# --- a step writing _id (issue 50): refused at load, naming the key --------------
WID="a step may not write _id"
refused "denormalize fields {_id: name}" '{"remodel": 1, "steps": [{"denormalize": {"in": "crm.tasks", "from": "crm.people", "localField": "owner", "fields": {"_id": "name"}}}]}' \
    'step 1 (denormalize): "fields": "_id": '"$WID"
refused "embed countAs _id" '{"remodel": 1, "steps": [{"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "t", "countAs": "_id"}}]}' \
    'step 1 (embed): "countAs": "_id": '"$WID"
refused "embed as _id" '{"remodel": 1, "steps": [{"embed": {"from": "crm.tasks", "into": "crm.people", "localField": "_id", "foreignField": "owner", "as": "_id"}}]}' \
    'step 1 (embed): "as": "_id": '"$WID"
refused "summarize fields {_id: ...}" '{"remodel": 1, "steps": [{"summarize": {"into": "crm.people", "from": "crm.tasks", "localField": "_id", "foreignField": "owner", "fields": {"_id": {"$sum": 1}}}}]}' \
    'step 1 (summarize): "fields": "_id": '"$WID"
refused "extract parentField _id" '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "crm.a", "style": "parentRef", "parentField": "_id"}}]}' \
    'step 1 (extract): "parentField": "_id": '"$WID"
refused "extract ordinalField _id" '{"remodel": 1, "steps": [{"extract": {"from": "crm.people", "path": "addresses", "to": "crm.a", "style": "parentRef", "parentField": "p", "ordinalField": "_id"}}]}' \
    'step 1 (extract): "ordinalField": "_id": '"$WID"
refused "set _id.x" '{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"_id.x": 1}}}]}' \
    'step 1 (set)' '_id'

# --- namespaces past MongoDB's limits; a byte order mark ----------------------------
LONG=$(printf 'x%.0s' $(seq 300))
refused "a namespace of 304 bytes" '{"remodel": 1, "steps": [{"set": {"in": "crm.'"$LONG"'", "fields": {"a": 1}}}]}' \
    '"in": "crm.xxx' '(304 bytes): a namespace is at most 255 bytes'
printf '%s' '{"remodel": 1, "steps": [{"set": {"in": "crm.'"$LONG"'", "fields": {"a": 1}}}]}' >"$T/long.json"
run_rm compile "$T/long.json"
expect_eq "compile refuses it too (exit 2)" "$rc:$(grep -c 'at most 255 bytes' "$T/err")" "2:1"
printf '\xef\xbb\xbf%s' "$GOOD" >"$T/bom.json"
run_rm check "$T/bom.json"
expect_eq "a plan after a UTF-8 byte order mark: read" "$rc" 0
# UTF-16 and UTF-32 (with a byte order mark or without): said, not "something
# follows the plan's closing brace" at its first zero byte.
for enc in "UTF-16 UTF-16 (little-endian, with a byte order mark)" "UTF-16LE UTF-16 (little-endian)" \
    "UTF-16BE UTF-16 (big-endian)" "UTF-32 UTF-32 (little-endian, with a byte order mark)" \
    "UTF-32BE UTF-32 (big-endian)"; do
    printf '%s' "$GOOD" | iconv -f UTF-8 -t "${enc%% *}" >"$T/wide.json"
    run_rm check "$T/wide.json"
    expect_eq "a plan in ${enc%% *}: exit 2, said" "$rc:$(cat "$T/err")" \
        "2:remodel: error: $T/wide.json: plan: the file is ${enc#* }: save it as UTF-8"
done

# --- plans that parse but are wrong ----------------------------------------------
refused "remodel 1.5" '{"remodel": 1.5, "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}]}' '"remodel" must be 1'
refused "remodel \"1\"" '{"remodel": "1", "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}]}' '"remodel" must be 1'
refused "a top-level key twice" '{"remodel": 1, "remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}]}' '"remodel": given twice'
refused "a step's key twice" '{"remodel": 1, "steps": [{"set": {"in": "a.b", "in": "c.d", "fields": {"x": 1}}}]}' 'step 1 (set): "in": given twice'
refused "a field twice" '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"x": 1, "x": 2}}}]}' 'step 1 (set): "fields.x": given twice'
refused "a key twice deep in step 2" '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}, {"summarize": {"into": "a.b", "from": "a.c", "localField": "_id", "foreignField": "p", "fields": {"n": {"$topN": {"n": 1, "n": 2, "sortBy": {"t": 1}, "output": "$t"}}}}}]}' \
    'step 2 (summarize): "fields.n.$topN.n": given twice'
refused "a NUL in a namespace" '{"remodel": 1, "steps": [{"set": {"in": "crm\u0000x.people", "fields": {"x": 1}}}]}' 'step 1 (set): "in": must not hold a NUL byte'
refused "a NUL in a rename target" '{"remodel": 1, "steps": [{"rename": {"in": "a.b", "fields": {"x": "y\u0000z"}}}]}' 'step 1 (rename): "fields"' "NUL"
refused "set _id" '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"_id": 1}}}]}' 'step 1 (set): "fields": "_id": _id cannot be changed'
refused "set _id.x" '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"_id.x": 1}}}]}' '"_id.x": _id cannot be changed'
refused "unset _id" '{"remodel": 1, "steps": [{"unset": {"in": "a.b", "fields": ["_id"]}}]}' 'step 1 (unset)' "_id cannot be changed"
refused "rename _id" '{"remodel": 1, "steps": [{"rename": {"in": "a.b", "fields": {"_id": "id"}}}]}' 'step 1 (rename)' "_id cannot be changed"
refused "rename to _id" '{"remodel": 1, "steps": [{"rename": {"in": "a.b", "fields": {"id": "_id"}}}]}' 'step 1 (rename)' "_id cannot be changed"
refused "version into _id" '{"remodel": 1, "steps": [{"version": {"in": "a.b", "field": "_id", "value": 2}}]}' 'step 1 (version): "field"' "_id cannot be changed"
refused "rename swap" '{"remodel": 1, "steps": [{"rename": {"in": "crm.people", "fields": {"name": "email", "email": "name"}}}]}' 'step 1 (rename): "fields": "email" and "email" overlap'
refused "rename two into one" '{"remodel": 1, "steps": [{"rename": {"in": "a.b", "fields": {"x": "z", "y": "z"}}}]}' '"z" and "z" overlap'
refused "rename into a field being renamed" '{"remodel": 1, "steps": [{"rename": {"in": "a.b", "fields": {"x": "y.z", "y": "w"}}}]}' '"y" and "y.z" overlap'
refused "set overlapping" '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"a.b": 1, "a": 2}}}]}' '"a" and "a.b" overlap'

# The swap the user meant, through a third name in separate steps: it runs.
cat >"$T/swap.json" <<'PLAN'
{"remodel": 1, "steps": [{"rename": {"in": "crm.people", "fields": {"name": "tmp_name"}}},
                         {"rename": {"in": "crm.people", "fields": {"email": "name"}}},
                         {"rename": {"in": "crm.people", "fields": {"tmp_name": "email"}}}]}
PLAN
run_rm run "$T/swap.json" --from "$S" --to "$T/swap.archive" -q
expect_eq "a swap in three steps runs" "$rc" 0
expect_eq "a swap in three steps: the values swapped" \
    "$("$REMODEL" show "$T/swap.archive" --ns crm.people --limit 1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["email"], "/", d["name"])')" \
    "$("$REMODEL" show "$S" --ns crm.people --limit 1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["name"], "/", d["email"])')"

# 200,000 set fields check (in n log n: this suite would time out at n^2), and
# one overlap among them is found.
python3 - "$T" <<'PY'
import json, sys
f = {"f%d" % i: i for i in range(200000)}
json.dump({"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": f}}]}, open(sys.argv[1] + "/big.json", "w"))
f["f123456.x"] = 1
json.dump({"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": f}}]}, open(sys.argv[1] + "/bigbad.json", "w"))
PY
run_rm check "$T/big.json"
expect_eq "200,000 set fields: valid" "$rc:$(cat "$T/out")" "0:$T/big.json: 1 step(s), valid"
run_rm check "$T/bigbad.json"
expect_eq "200,000 set fields, one overlapping: refused" "$rc" 2
expect_one_line "200,000 set fields, one overlapping" '"f123456" and "f123456.x" overlap'

# Where: the line and column in the plan file, as an editor counts them.
printf '{"remodel": 1,\n  "steps": [\n    {"set": {"in": "a.b", "fields": {"x": 1,}}}\n  ]}\n' >"$T/lc.json"
run_rm check "$T/lc.json"
expect_one_line "a trailing comma: its line and column" 'step 1 (set), line 3 column 45: not valid Extended JSON'
printf '{"remodel": 1,\n  "steps": [\n    {"set": {"in": "a.b" "fields": {"x": 1}}}\n  ]}\n' >"$T/lc.json"
run_rm check "$T/lc.json"
expect_one_line "a missing comma: its line and column" 'step 1 (set), line 3 column 26'
printf '{"remodel": 1,\n "stéps": [\n' >"$T/lc.json"
run_rm check "$T/lc.json"
expect_one_line "cut short: where it ends" 'plan: line 3 column 1: not valid JSON'
printf '{"remodel": 1, "steps": [{"set": {"in": "a.b", "fields": {"x": 1}}}]}\n\n  x\n' >"$T/lc.json"
run_rm check "$T/lc.json"
expect_one_line "text after the plan: where" 'plan: line 3 column 3: something follows'

# Did you mean, for every step's keys and the plan's own (issue 34), and the
# file's name first, from each program that reads plans (remodel check, run,
# compile, remodel online).
ONLINE=$(dirname "$REMODEL")/remodel-online
typo() {
    local n=$1 text=$2 want=$3 cmd
    printf '%s' "$text" >"$T/typo.json"
    for cmd in check run compile online; do
        case $cmd in
            check) run_rm check "$T/typo.json" ;;
            run) run_rm run "$T/typo.json" --from "$S" --to "$T/out.archive" ;;
            compile) run_rm compile "$T/typo.json" ;;
            online) [ -x "$ONLINE" ] || continue
                    run_rm online run "$T/typo.json" --uri mongodb://127.0.0.1:1/ ;;
        esac
        expect_eq "$n ($cmd): exit 2, the file's name, the nearest" "$rc:$(cat "$T/err")" \
            "2:remodel: error: $T/typo.json: plan: $want"
    done
}
KEYS='(embed takes from, into, localField, foreignField, as, project, sort, limit, countAs, keepSource, maxItems, onOverflow, overflowTo, match, filter, allowMissing, why)'
typo "embed foriegnField" '{"remodel": 1, "steps": [{"embed": {"from": "a.c", "into": "a.p", "localField": "_id", "foriegnField": "p", "as": "c"}}]}' \
    "step 1 (embed): \"foriegnField\": unknown key $KEYS: did you mean \"foreignField\"?"
typo "embed keepsource" '{"remodel": 1, "steps": [{"embed": {"from": "a.c", "into": "a.p", "localField": "_id", "foreignField": "p", "as": "c", "keepsource": true}}]}' \
    "step 1 (embed): \"keepsource\": unknown key $KEYS: did you mean \"keepSource\"?"
typo "extract parentFeild" '{"remodel": 1, "steps": [{"extract": {"from": "a.p", "path": "c", "to": "a.c", "style": "both", "parentFeild": "p"}}]}' \
    'step 1 (extract): "parentFeild": unknown key (extract takes from, path, to, style, parentField, ordinalField, filter, allowMissing, why): did you mean "parentField"?'
typo "summarize in step 2, locaField" '{"remodel": 1, "steps": [{"set": {"in": "a.p", "fields": {"x": 1}}}, {"summarize": {"into": "a.p", "from": "a.c", "locaField": "_id", "foreignField": "p", "fields": {"n": {"$count": {}}}}}]}' \
    'step 2 (summarize): "locaField": unknown key (summarize takes into, from, localField, foreignField, as, sort, fields, match, filter, allowMissing, why): did you mean "localField"?'
typo "set feilds" '{"remodel": 1, "steps": [{"set": {"in": "a.p", "feilds": {"x": 1}}}]}' \
    'step 1 (set): "feilds": unknown key (set takes in, fields, filter, allowMissing, why): did you mean "fields"?'
typo "bucketize timefield" '{"remodel": 1, "steps": [{"bucketize": {"from": "a.r", "to": "a.b", "timefield": "t", "metaField": "m"}}]}' \
    'step 1 (bucketize): "timefield": unknown key (bucketize takes from, to, timeField, metaField, granularity, spanSeconds, unit, binSize, timezone, startOfWeek, maxCount, as, stats, keepSource, onInvalid, filter, allowMissing, why): did you mean "timeField"?'
typo "bucketize statistic cuont" '{"remodel": 1, "steps": [{"bucketize": {"from": "a.r", "to": "a.b", "timeField": "t", "metaField": "m", "stats": {"v": ["cuont"]}}}]}' \
    'step 1 (bucketize): "stats": "v": unknown statistic "cuont" (count, min, max, sum, avg): did you mean "count"?'
typo "top-level stesp" '{"remodel": 1, "stesp": []}' \
    'unknown top-level key "stesp" (a plan has "remodel" and "steps"): did you mean "steps"?'
typo "nothing near: no guess" '{"remodel": 1, "steps": [{"set": {"in": "a.p", "fields": {"x": 1}, "zzz": 1}}]}' \
    'step 1 (set): "zzz": unknown key (set takes in, fields, filter, allowMissing, why)'
