#!/usr/bin/env bash
# remodel analyze with thousands of collections (issue 50, item 2): the
# candidates are found from the keys, not by comparing every field with
# every field; each field keeps its likeliest targets (the rest counted);
# the report stays bounded. Counts, sizes and an address-space limit
# (ulimit -v): no timings (those are make bench-analyze's).
#   REMODEL=build/remodel bash tests/cli/test_analyze_scale.sh
. "$(dirname "$0")/lib.sh"

GEN=$ROOT/tests/transforms/analyze_scale.py
# The address space analyze may take: generous for what it holds (tens of
# megabytes), far below what comparing every pair took (800 collections:
# gigabytes). Threads' stacks count in it, so not tighter.
LIMIT_KB=1500000

# limited ARGS...: remodel with the address space limited; $T/out, $T/err, $rc.
limited() { (ulimit -v $LIMIT_KB && exec "$REMODEL" "$@") >"$T/out" 2>"$T/err"; rc=$?; }

# shape FILE: "collections relationships rejected max-rejected-per-field left-out bytes"
shape() {
    python3 - "$1" <<'PY'
import collections, json, os, sys
d = json.load(open(sys.argv[1]))
per = collections.Counter((r["from"], r["field"]) for r in d["rejected"])
left = sum(f.get("targetsLeftOut", 0) for c in d["collections"] for f in c["fields"])
print(len(d["collections"]), len(d["relationships"]), len(d["rejected"]),
      max(per.values()) if per else 0, left, os.path.getsize(sys.argv[1]))
PY
}

# 1,000 collections of five documents that say nothing of each other.
python3 "$GEN" "$T/u" unrelated 1000
limited analyze "$T/u" --json -q
cp "$T/out" "$T/u.json"
read -r cols rels rej per left bytes <<<"$(shape "$T/u.json")"
expect_eq "1,000 unrelated collections: exit 0 within $LIMIT_KB KB of address space" "$rc" 0
expect_eq "1,000 unrelated collections: each reported, no relationship, none rejected" \
    "$cols $rels $rej" "1000 0 0"
[ "$bytes" -lt 4000000 ] && pass "1,000 unrelated collections: a report of $bytes bytes (under 4 MB)" ||
    fail "1,000 unrelated collections: report size" "$bytes bytes"

# 1,000 collections whose fields look like references to every other
# (small integers, every _id 1..5): each field's values fit every target.
# Comparing every pair listed 999 candidates a field (800: 787 MB of JSON,
# 5 GB); now each field keeps its likeliest few and counts the rest.
python3 "$GEN" "$T/r" refs 1000
limited analyze "$T/r" --json -q
cp "$T/out" "$T/r.json"
read -r cols rels rej per left bytes <<<"$(shape "$T/r.json")"
expect_eq "1,000 look-alike collections: exit 0 within $LIMIT_KB KB of address space" "$rc" 0
expect_eq "1,000 look-alike collections: one relationship a field, at most 7 rejected beside it" \
    "$cols $rels $([ "$per" -le 7 ] && echo bounded || echo "$per")" "1000 1000 bounded"
# Each field's values fit the 999 other _ids (and the others' look-alike
# fields): 8 kept, the rest counted.
[ "$left" -ge $((1000 * (999 - 8))) ] && pass "1,000 look-alike collections: the targets left out counted ($left)" ||
    fail "1,000 look-alike collections: the targets left out counted" "$left, want at least $((1000 * 991))"
[ "$bytes" -lt 40000000 ] && pass "1,000 look-alike collections: a report of $bytes bytes (under 40 MB)" ||
    fail "1,000 look-alike collections: report size" "$bytes bytes"
expect_eq "1,000 look-alike collections: each field to the collection its name gives" \
    "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for r in d["relationships"] if r["field"] == r["to"].split(".")[1] + "_id"))' "$T/r.json")" 1000

# The same search from the spilled keys: the same report.
"$REMODEL" analyze "$T/r" --json -q --memory 1M --tmp "$T" >"$T/r-spill.json" 2>"$T/err"
if cmp -s "$T/r.json" "$T/r-spill.json"; then
    pass "1,000 look-alike collections: the same report with the keys spilled (--memory 1M)"
else
    fail "1,000 look-alike collections: spilled" "$(diff <(tr ',' '\n' <"$T/r.json") <(tr ',' '\n' <"$T/r-spill.json") | head -6)"
fi

# A collection of 10,000 fields beside 50 others, with --report: the
# report page is written, nothing crashes (the fields past 256 left out,
# and said so).
python3 "$GEN" "$T/w" unrelated 50 --wide 10000
limited analyze "$T/w" -q --report "$T/w.html"
expect_eq "10,000 fields with --report: exit 0, no signal" "$rc" 0
if [ -s "$T/w.html" ] && grep -q "db.wide" "$T/w.html"; then
    pass "10,000 fields with --report: the page names the wide collection"
else
    fail "10,000 fields with --report: the page" "$(head -c 300 "$T/err")"
fi
limited analyze "$T/w" -q --json
expect_eq "10,000 fields: fieldsCapped" "$(python3 -c '
import json, sys
print([c["fieldsCapped"] for c in json.load(sys.stdin)["collections"] if c["ns"] == "db.wide"])' <"$T/out")" "[True]"

# 300 look-alike collections, each referencing the next round a ring:
# every reference one-to-one, every one an embed, each into the next. As
# recommended, a chain of 300 embeds one inside the other (--report then
# failed whole: "nesting deeper than 500 levels") closing on its first.
# The plan check leaves out what would nest past MongoDB's 100 levels and
# what would close the ring, and says which and why.
python3 "$GEN" "$T/ring" refs 300
limited analyze "$T/ring" --json -q --plan-out "$T/ring-plan.json"
cp "$T/out" "$T/ring.json"
expect_eq "a ring of 300 embeds: exit 0, the plan written" "$rc $([ -s "$T/ring-plan.json" ] && echo written)" "0 written"
# The plan's embeds run in order: the levels each collection's documents
# reach (the document 1, an embed two more: its array and its element),
# the deepest, and whether any embed puts a collection into one it is in.
expect_eq "a ring of 300 embeds: the plan nests nothing past 100 levels, closes no ring, keeps the rest" \
    "$(python3 - "$T/ring-plan.json" <<'PY'
import json, sys
steps = [s["embed"] for s in json.load(open(sys.argv[1]))["steps"] if "embed" in s]
levels, inside, ring = {}, {}, 0
for e in steps:
    f, i = e["from"], e["into"]
    held = {f} | inside.get(f, set())
    ring += i in held
    inside.setdefault(i, set()).update(held)
    levels[i] = max(levels.get(i, 1), levels.get(f, 1) + 2)
print(len(steps), max(levels.values()) <= 100, ring)
PY
)" "294 True 0"
expect_eq "a ring of 300 embeds: each left out said once, which and why" \
    "$(python3 -c '
import json, sys
notes = json.load(open(sys.argv[1]))["planChecks"]
print(len(notes), sum("past the 100 MongoDB stores" in n for n in notes), sum("would close a ring" in n for n in notes))
print(notes[0])' "$T/ring.json")" \
"6 6 0
left out of the plan: the embed of db.c00049 into db.c00050, recommended for db.c00049.c00050_id -> db.c00050._id: it would nest db.c00050's documents 101 levels deep, past the 100 MongoDB stores: db.c00049's already hold a chain of 49 embeds, one inside the other; the recommendation stays in the report"
limited analyze "$T/ring" -q --report "$T/ring.html"
expect_eq "a ring of 300 embeds: --report runs the plan and writes the page" \
    "$rc $(head -c 300 "$T/err")$([ -s "$T/ring.html" ] && echo written)" "0 written"

# A ring of three: no chain is deep, the ring itself is what is left out.
python3 "$GEN" "$T/ring3" refs 3
"$REMODEL" analyze "$T/ring3" --json -q --plan-out "$T/ring3-plan.json" >"$T/ring3.json" 2>/dev/null
expect_eq "a ring of 3 embeds: the embed that closes it left out, and said so" \
    "$(python3 -c '
import json, sys
print(len(json.load(open(sys.argv[2]))["steps"]))
print("\n".join(json.load(open(sys.argv[1]))["planChecks"]))' "$T/ring3.json" "$T/ring3-plan.json")" \
"2
left out of the plan: the embed of db.c00002 into db.c00000, recommended for db.c00002.c00000_id -> db.c00000._id: it would close a ring: db.c00002's documents already hold db.c00000's, embedded by the steps before, so db.c00000's would be embedded into themselves; the recommendation stays in the report"
