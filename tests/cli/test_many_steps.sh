#!/usr/bin/env bash
# Long plans of field steps (common/engine/field_run.c): consecutive set
# and unset steps on one namespace run fused, a document's fields edited
# in a table and written once. What must hold is what the steps one by one
# give: a plan of 10,000 steps gives the documents and the per-step counts
# a model of the steps computes; it and shorter mixed plans (rename,
# version, an expression, a filter between the runs; documents holding a
# name twice, which the run leaves to the steps), in one pass and store to
# store, give the bytes and the summary of the same plan with "filter": {}
# on every step, which never fuses. How long it takes is for `make
# bench`, not here.
#   REMODEL=build/remodel bash tests/cli/test_many_steps.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/plans"

# 40 people, some holding fields the plan sets; two hold a name twice.
python3 - "$T/spec.json" <<'EOF'
import json, struct, sys
def dup(i, k):
    body = struct.pack("<b", 0x10) + b"_id\0" + struct.pack("<i", i)
    for v in (1, 2):
        body += b"\x10" + k.encode() + b"\0" + struct.pack("<i", v)
    return {"$rawHex": (struct.pack("<i", len(body) + 5) + body + b"\0").hex()}
people = []
for i in range(38):
    d = {"_id": i, "name": "p%d" % i}
    for j in range(i % 5):
        d["f%d" % (j * 7 + i % 3)] = j
    people.append(d)
people += [dup(100, "f1"), dup(101, "name")]
json.dump({"t.people": people, "t.other": [{"_id": 1, "f1": 1}]}, open(sys.argv[1], "w"))
EOF
python3 "$ROOT/tests/transforms/mkdump.py" "$T/in" "@$T/spec.json" ||
    { fail "the source dump" "mkdump failed"; exit 0; }

# The long plan and its model: the final people (canonical JSON, the ones
# without a name twice) and each step's "changed, unchanged".
python3 - "$T" <<'EOF'
import collections, json, random, sys
t = sys.argv[1]
rnd = random.Random(50)
spec = json.load(open(t + "/spec.json"), object_pairs_hook=collections.OrderedDict)
people = [d for d in spec["t.people"] if "$rawHex" not in d]
names = ["f%d" % i for i in range(60)] + ["name"]
values = [(1, {"$numberInt": "1"}), (2, {"$numberInt": "2"}), ("x", "x"), (2.5, {"$numberDouble": "2.5"}),
          (None, None), (True, True), ({"$literal": {"k": 1}}, {"k": {"$numberInt": "1"}})]
def canon(v):
    return {"$numberInt": str(v)} if isinstance(v, int) and not isinstance(v, bool) else v
docs = [collections.OrderedDict((k, canon(v)) for k, v in d.items()) for d in people]
steps, counts = [], []
for n in range(10000):
    if rnd.random() < 0.7:
        fields = collections.OrderedDict()
        for k in rnd.sample(names, rnd.randint(1, 3)):
            fields[k] = rnd.choice(values)
        steps.append({"set": {"in": "t.people", "fields": {k: v[0] for k, v in fields.items()}}})
        changed = 0
        for d in docs:
            before = json.dumps(d)
            for k, v in fields.items():
                d[k] = v[1]
            changed += json.dumps(d) != before
    else:
        gone = rnd.sample(names, rnd.randint(1, 2))
        steps.append({"unset": {"in": "t.people", "fields": gone}})
        changed = 0
        for d in docs:
            hit = [k for k in gone if k in d]
            for k in hit:
                del d[k]
            changed += bool(hit)
    # the two documents holding a name twice count too: left out here
    counts.append(changed)
json.dump({"remodel": 1, "steps": steps}, open(t + "/plans/long.json", "w"))
with open(t + "/want", "w") as f:
    for d in docs:
        f.write(json.dumps(d, separators=(",", ":")) + "\n")
with open(t + "/want-counts", "w") as f:
    for c in counts:
        f.write("%d\n" % c)
EOF

run_rm run --force "$T/plans/long.json" --from "$T/in" --to "$T/long.archive"
expect_eq "10,000 set and unset steps: exit 0" "$rc" "0"
cp "$T/err" "$T/long.err"
"$REMODEL" show --canonical "$T/long.archive" --ns t.people >"$T/got" 2>"$T/err"
# The model leaves out the two documents holding a name twice.
grep -v '"_id":{"$numberInt":"10[01]"}' "$T/got" >"$T/got-model"
expect_eq "10,000 steps: every person as the model of the steps has them, field order and types too" \
    "$(cmp -s "$T/got-model" "$T/want" && echo same):$(wc -l <"$T/got-model" | tr -d ' ')" "same:38"
# Each step's count, less the documents holding a name twice, which the
# steps one by one change at set (of their name) or not at all.
sed -n 's/^step \([0-9]*\) ([a-z]*) t.people: \([0-9]*\) changed, \([0-9]*\) unchanged$/\2 \3/p' "$T/long.err" >"$T/counts"
expect_eq "10,000 steps: a count line per step, each of the 40 people" \
    "$(wc -l <"$T/counts" | tr -d ' '):$(awk '$1 + $2 != 40' "$T/counts" | wc -l | tr -d ' ')" "10000:0"
expect_eq "10,000 steps: each step's changed count is the model's (give or take the two with a name twice)" \
    "$(paste -d ' ' "$T/counts" "$T/want-counts" | awk '$1 < $3 || $1 > $3 + 2' | wc -l | tr -d ' ')" "0"
expect_eq "10,000 steps: t.other untouched" \
    "$("$REMODEL" show --canonical "$T/long.archive" --ns t.other)" '{"_id":{"$numberInt":"1"},"f1":{"$numberInt":"1"}}'
run_rm check "$T/plans/long.json" --against "$T/in"
expect_eq "10,000 steps: check --against: exit 0" "$rc:$(tail -n 1 "$T/out")" \
    "0:$T/plans/long.json: 10000 step(s), valid against $T/in"

# Plans fused and not: the same bytes and the same summary.
# unfused PLAN OUT: PLAN with "filter": {} on every step.
unfused() {
    python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
for s in p["steps"]:
    list(s.values())[0].setdefault("filter", {})
json.dump(p, open(sys.argv[2], "w"))' "$1" "$2"
}
# batched PLAN OUT: PLAN after an embed, which has no one-pass stage: the
# plan runs store to store (engine.c), where a run is fused too.
batched() {
    python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
p["steps"].insert(0, {"embed": {"from": "t.other", "into": "t.people", "localField": "_id",
                                "foreignField": "f1", "as": "others"}})
json.dump(p, open(sys.argv[2], "w"))' "$1" "$2"
}
# same PLAN: PLAN and PLAN unfused give the same exit 0, summary and
# documents; else says how they differ.
same() {
    unfused "$1" "$T/plans/one-by-one.json"
    "$REMODEL" run --force "$1" --from "$T/in" --to "$T/a.archive" >"$T/a.out" 2>"$T/a.err"
    a=$?
    "$REMODEL" run --force "$T/plans/one-by-one.json" --from "$T/in" --to "$T/b.archive" >"$T/b.out" 2>"$T/b.err"
    b=$?
    if [ "$a:$b" == "0:0" ] && cmp -s <(sed 's/\/[ab].archive$//' "$T/a.err") <(sed 's/\/[ab].archive$//' "$T/b.err") &&
        [ "$("$REMODEL" show --canonical "$T/a.archive")" == "$("$REMODEL" show --canonical "$T/b.archive")" ]; then
        return 0
    fi
    echo "  differs: $1 (exit $a, $b)" >&2
    return 1
}
check "10,000 steps: the step-by-step path's bytes and counts" same "$T/plans/long.json"
batched "$T/plans/long.json" "$T/plans/long-batch.json"
check "10,000 steps store to store (after an embed): the step-by-step path's bytes and counts" \
    same "$T/plans/long-batch.json"
python3 - "$T/plans" <<'EOF'
import json, random, sys
rnd = random.Random(7)
names = ["f1", "f7", "f8", "name", "g", "h"]
values = [1, 2, "x", 2.5, None, {"$literal": {"k": 1}}, {"$numberLong": "1"}, "$name",
          {"$ifNull": ["$h", "none"]},
          # expressions, fused too: each reads fields earlier steps of its
          # run may have set or removed, and must see them as they are
          {"$ifNull": ["$g", "$f7"]}, {"$type": "$h"}, ["$f1", "$g"], {"k": "$h", "n": "$name"},
          {"$cond": [{"$eq": [{"$type": "$f1"}, "int"]}, "$f8", "$$REMOVE"]},
          {"$getField": "name"}, {"$size": {"$objectToArray": "$$ROOT"}}, "$$ROOT.g", "$nope"]
for n in range(20):
    steps = []
    for _ in range(rnd.randint(5, 60)):
        r = rnd.random()
        if r < 0.55:
            k = rnd.sample(names, rnd.randint(1, 2))
            s = {"set": {"in": "t.people", "fields": {x: rnd.choice(values) for x in k}}}
        elif r < 0.8:
            s = {"unset": {"in": "t.people", "fields": rnd.sample(names, rnd.randint(1, 2))}}
        elif r < 0.88:
            a, b = rnd.sample(["g", "h", "f8"], 2)
            s = {"rename": {"in": "t.people", "fields": {a: b}}}
        elif r < 0.94:
            s = {"version": {"in": "t.people", "value": rnd.randint(1, 3)}}
        else:
            s = {"set": {"in": "t.other", "fields": {"f1": rnd.randint(1, 2)}}}
        if rnd.random() < 0.05:
            list(s.values())[0]["filter"] = {"f1": 1}
        steps.append(s)
    json.dump({"remodel": 1, "steps": steps}, open("%s/mixed%d.json" % (sys.argv[1], n), "w"))
EOF
same=0 runs=0
for p in "$T"/plans/mixed*.json; do
    batched "$p" "${p%.json}-batch.json"
    for q in "$p" "${p%.json}-batch.json"; do
        runs=$((runs + 1))
        same "$q" && same=$((same + 1))
    done
done
expect_eq "mixed plans, in one pass and store to store: fused runs give the steps' bytes and counts one by one" "$same" "$runs"
