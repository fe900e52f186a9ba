#!/usr/bin/env bash
# Large plans (issue 62, item 6): one set of 40,000 fields (and 40,000
# dotted ones under one name) is read and applied, each field with its
# value, and its collisions still refused; 3,000 sets of expressions in a
# row run fused (common/engine/field_run.c) and give, byte for byte and
# count for count, what the steps one by one give ("filter": {} on every
# step, which never fuses), whether later steps read what earlier ones
# wrote or not; a document an expression fails on fails the same way
# fused or not. How long they take is for `make bench`, not here.
#   REMODEL=build/remodel bash tests/cli/test_large_plans.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/plans"

python3 - "$T" <<'EOF'
import json, sys
t = sys.argv[1]
json.dump({"t.c": [{"_id": i, "a": i, "s": "v%d" % i} for i in range(20)] +
                  [{"_id": 20, "a": "text", "s": "v20"}]}, open(t + "/spec.json", "w"))
def dump(name, steps):
    json.dump({"remodel": 1, "steps": steps}, open("%s/plans/%s.json" % (t, name), "w"))
wide = {"f%d" % i: {"$add": [{"$ifNull": [{"$toInt": "$_id"}, 0]}, i]} for i in range(40000)}
dump("wide", [{"set": {"in": "t.c", "fields": wide}}])
dump("dotted", [{"set": {"in": "t.c", "fields": {"o.f%d" % i: i for i in range(40000)}}}])
dump("collide", [{"set": {"in": "t.c", "fields": dict(wide, **{"f39999.x": 1})}}])
# 3,000 sets: new fields from the document as it came, then fields read
# back by later steps (each g<i> from the one before), $$ROOT as a whole,
# a field removed ($$REMOVE) and set again
steps = []
for i in range(3000):
    if i % 3 == 0:
        f = {"n%d" % i: {"$concat": ["$s", "-%d" % i]}}
    elif i % 3 == 1:
        f = {"g%d" % i: {"$ifNull": ["$g%d" % (i - 3), "$s"]}, "h": {"$type": "$n%d" % (i - 1)}}
    else:
        f = {"k": {"$size": {"$objectToArray": "$$ROOT"}},
             "s": {"$cond": [{"$eq": [i % 300, 2]}, "$$REMOVE", {"$ifNull": ["$s", "back"]}]}}
    steps.append({"set": {"in": "t.c", "fields": f}})
dump("long", steps)
# a value of one document fails (the _id 20's "a" is a string)
dump("fails", steps[:40] + [{"set": {"in": "t.c", "fields": {"m": {"$multiply": ["$a", 2]}}}}] + steps[40:80])
EOF
python3 "$ROOT/tests/transforms/mkdump.py" "$T/in" "@$T/spec.json" ||
    { fail "the source dump" "mkdump failed"; exit 0; }

unfused() {
    python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
for s in p["steps"]:
    list(s.values())[0].setdefault("filter", {})
json.dump(p, open(sys.argv[2], "w"))' "$1" "$2"
}

run_rm check "$T/plans/wide.json"
expect_eq "40,000 fields: check" "$rc:$(cat "$T/out")" "0:$T/plans/wide.json: 1 step(s), valid"
run_rm run --force "$T/plans/wide.json" --from "$T/in" --to "$T/wide.archive"
expect_eq "40,000 fields: run" "$rc" 0
"$REMODEL" show "$T/wide.archive" --ns t.c | python3 -c 'import json, sys
bad = 0
for line in sys.stdin:
    d = json.loads(line)
    i = d["_id"]
    base = i if isinstance(i, int) and i < 20 else 20
    want = ["_id", "a", "s"] + ["f%d" % k for k in range(40000)]
    if list(d) != want or any(d["f%d" % k] != base + k for k in range(40000)):
        bad += 1
print(bad)' >"$T/bad" 2>&1
expect_eq "40,000 fields: every document holds each field, in order, with its value" "$(cat "$T/bad")" 0
run_rm run --force "$T/plans/dotted.json" --from "$T/in" --to "$T/dotted.archive"
"$REMODEL" show "$T/dotted.archive" --ns t.c | python3 -c 'import json, sys
print(sum(list(json.loads(l)["o"].items()) != [("f%d" % k, k) for k in range(40000)] for l in sys.stdin))' >"$T/bad" 2>&1
expect_eq "40,000 dotted fields under one name: each in its place" "$rc:$(cat "$T/bad")" "0:0"
run_rm check "$T/plans/collide.json"
expect_eq "40,000 fields and one under one of them: refused" "$rc" 2
expect_message "40,000 fields: the collision named" '"f39999" and "f39999.x" overlap'

# fused and step by step: the same bytes, the same counts
unfused "$T/plans/long.json" "$T/plans/long-one.json"
run_rm run --force "$T/plans/long.json" --from "$T/in" --to "$T/a.archive"
a=$rc; sed 's/\/a.archive$//' "$T/err" >"$T/a.err"
run_rm run --force "$T/plans/long-one.json" --from "$T/in" --to "$T/b.archive"
b=$rc; sed 's/\/b.archive$//' "$T/err" >"$T/b.err"
expect_eq "3,000 sets of expressions: exit 0 fused and not" "$a:$b" "0:0"
expect_eq "3,000 sets: a count line per step" "$(grep -c '^step [0-9]* (set) t.c: ' "$T/a.err")" 3000
if cmp -s "$T/a.err" "$T/b.err"; then pass "3,000 sets: each step's counts the same fused and not"
else fail "3,000 sets: each step's counts the same fused and not" "$(diff "$T/a.err" "$T/b.err" | head -5)"; fi
if [ "$("$REMODEL" show --canonical "$T/a.archive")" == "$("$REMODEL" show --canonical "$T/b.archive")" ]; then
    pass "3,000 sets: the same documents, byte for byte, fused and not"
else
    fail "3,000 sets: the same documents, byte for byte, fused and not"
fi
# what a later step read from an earlier one
"$REMODEL" show "$T/a.archive" --ns t.c | python3 -c 'import json, sys
d = json.loads(sys.stdin.readline())
print(d["n2997"], d["g2998"], d["h"], d["k"], d["s"])' >"$T/got" 2>&1
expect_eq "3,000 sets: later steps saw what earlier ones set" "$(cat "$T/got")" "back-2997 v0 string 2005 back"

unfused "$T/plans/fails.json" "$T/plans/fails-one.json"
run_rm run --force "$T/plans/fails.json" --from "$T/in" --to "$T/c.archive"
a="$rc:$(cat "$T/err")"
run_rm run --force "$T/plans/fails-one.json" --from "$T/in" --to "$T/d.archive"
b="$rc:$(sed 's/fails-one.json/fails.json/' "$T/err")"
expect_eq "a failing expression in a run: the same error fused and not" "$a" "$b"
expect_message "a failing expression: the step and document named" \
    'step 41 (set): t.c: document { "_id" : 20 }: field "m": $multiply'
