#!/usr/bin/env bash
# remodel analyze judges relationships by evidence, and its plans lose no
# document (docs/analyze.md, "Evidence and levels", "Plans that lose
# nothing"):
# - a crafted dump with decoys of every kind (dense small integers of
#   several ranges, money, quantities, years, ages, two-letter codes,
#   words repeating another collection's names), each next to a true
#   relationship of the same type and shape: the level of each, and the
#   plan holds only the confident ones;
# - the hints' references: a rejected relationship leaves the plan, a
#   confirmed one enters it;
# - the issue's plan (parts re-homed into customers, then read by an embed
#   into products) is refused by analyze's own check, which keeps the
#   safer step; an embed over a field its parents have is left out;
# - every plan written here is run, and every source document is found in
#   the output (tests/transforms/accounted.py: independent of analyze).
#   REMODEL=build/remodel bash tests/cli/test_analyze_evidence.sh
. "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1
MKDUMP=$ROOT/tests/transforms/mkdump.py
ACCOUNTED=$ROOT/tests/transforms/accounted.py

# levels SRC [ARGS]: every candidate analyze considered, sorted:
# "from.field -> to.key level".
levels() {
    "$REMODEL" analyze "$@" --json -q | python3 -c '
import json, sys
r = json.load(sys.stdin)
for x in sorted(r["relationships"] + r["rejected"], key=lambda x: (x["from"], x["field"], x["to"])):
    print("%s.%s -> %s.%s %s" % (x["from"], x["field"], x["to"], x["key"], x["level"]))'
}
# steps PLAN: "op from -> into-or-in keepSource" a line.
steps() {
    python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["steps"]:
    for op, b in s.items():
        print(op, b.get("from"), "->", b.get("into", b.get("in", b.get("to"))), b.get("localField", ""),
              "keepSource" if b.get("keepSource") else "")' "$1"
}
# accounted NAME PLAN SRC: the plan runs, and every document of SRC is in its output.
accounted() {
    local out=$T/out-$RANDOM
    if [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["steps"]))' "$2")" = 0 ]; then
        pass "$1: no step, nothing to run, nothing lost"
        return
    fi
    run_rm run "$2" --from "$3" --to "$out" -q
    if [ "$rc" != 0 ]; then
        fail "$1: remodel run executes the plan" "$(head -c 300 "$T/err")"
        return
    fi
    if python3 "$ACCOUNTED" "$3" "$out" >"$T/acc" 2>&1; then
        pass "$1: every source document is in the output ($(awk '{print $2}' "$T/acc" | paste -sd' '))"
    else
        fail "$1: every source document is in the output" "$(cat "$T/acc")"
    fi
}

python3 - "$T/decoys.json" <<'PY'
import json, random, sys
random.seed(24)
oid = lambda n: {"$oid": "%024x" % n}
countries = ["AD", "AR", "AT", "AU", "BE", "BR", "CA", "CH", "CL", "CN", "CZ", "DE", "DK", "EG", "ES",
             "FI", "FR", "GB", "GR", "HR", "HU", "IE", "IL", "IN", "IT", "JP", "KR", "MX", "NL", "NO",
             "NZ", "PE", "PL", "PR", "PT", "RO", "SE", "SG", "TH", "TR", "US", "ZA"]
cities = ["Paris", "Lyon", "Lille", "Nantes", "Nice", "Rennes", "Brest", "Dijon", "Tours", "Reims",
          "Metz", "Caen", "Rouen", "Amiens", "Angers", "Nimes", "Pau", "Toulon", "Grenoble", "Limoges"]
d = {}
# Dense small integers: customers 0..499; orders' amount 1..500 (money)
# and qty 1..20 (a quantity) next to customerId 0..499 and storeId 1..20.
d["shop.customers"] = [{"_id": i, "name": "customer %03d" % i, "country": random.choice(countries)}
                       for i in range(500)]
d["shop.stores"] = [{"_id": i, "name": cities[i - 1]} for i in range(1, 21)]
d["shop.orders"] = [{"_id": 10000 + i, "customerId": random.randint(0, 499), "storeId": random.randint(1, 20),
                     "amount": random.randint(1, 500), "qty": random.randint(1, 20)} for i in range(2000)]
# A price unique per part, 0..599 (unique by accident), and ObjectId parts
# referenced by products.
d["shop.parts"] = [{"_id": oid(0xa000 + i), "pname": "part %d" % i, "price": i} for i in range(600)]
d["shop.products"] = [{"_id": "PR%03d" % i, "title": "product %d" % i,
                       "partIds": [oid(0xa000 + random.randint(0, 599)) for _ in range(random.randint(1, 4))]}
                      for i in range(150)]
# Two-letter codes: a department code that happens to be a country's,
# next to the customers' country.
d["shop.countries"] = [{"_id": c, "label": "country " + c} for c in countries]
d["shop.employees"] = [{"_id": 900 + i, "ename": "employee %d" % i, "dept": random.choice(["IT", "HR", "AD", "SE"])}
                       for i in range(80)]
# Words that repeat another collection's names: an event's city among the
# stores' names, next to a delivery's storeName.
d["shop.events"] = [{"_id": 5000 + i, "city": random.choice(cities)} for i in range(300)]
d["shop.deliveries"] = [{"_id": 7000 + i, "storeName": random.choice(cities)} for i in range(300)]
# Years and ages among integer ids, next to a true reference of the same range.
d["lib.authors"] = [{"_id": i, "aname": "author %d" % i} for i in range(1900, 2100)]
d["lib.books"] = [{"_id": "B%04d" % i, "authorId": random.randint(1900, 2099), "year": random.randint(1950, 2020)}
                  for i in range(400)]
d["club.clubs"] = [{"_id": i, "cname": "club %d" % i} for i in range(1, 101)]
d["club.members"] = [{"_id": "M%04d" % i, "clubId": random.randint(1, 100), "age": random.randint(18, 80)}
                     for i in range(500)]
# Neither name nor values can tell: a crew number among the teams' ids.
d["ops.teams"] = [{"_id": i, "tname": "team %d" % i} for i in range(1, 9)]
d["ops.shifts"] = [{"_id": 300 + i, "crew": random.randint(1, 8)} for i in range(200)]
json.dump(d, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/decoys" "@$T/decoys.json"

# (An event's city among the stores' names, all found, many to one, no
# name: only the names are missing, and its even spread keeps it from
# confident: possible, issue 64.)
expect_eq "decoys: each true relationship confident, each decoy rejected, the nameless ones possible" \
    "$(levels "$T/decoys")" \
"club.members.age -> club.clubs._id rejected
club.members.clubId -> club.clubs._id confident
lib.books.authorId -> lib.authors._id confident
lib.books.year -> lib.authors._id rejected
ops.shifts.crew -> ops.teams._id possible
shop.customers.country -> shop.countries._id confident
shop.deliveries.storeName -> shop.stores.name confident
shop.employees.dept -> shop.countries._id rejected
shop.events.city -> shop.stores.name possible
shop.orders.amount -> shop.customers._id rejected
shop.orders.amount -> shop.parts.price rejected
shop.orders.customerId -> shop.customers._id confident
shop.orders.customerId -> shop.parts.price rejected
shop.orders.qty -> shop.customers._id rejected
shop.orders.qty -> shop.parts.price rejected
shop.orders.qty -> shop.stores._id rejected
shop.orders.storeId -> shop.customers._id rejected
shop.orders.storeId -> shop.parts.price rejected
shop.orders.storeId -> shop.stores._id confident
shop.parts.price -> shop.customers._id rejected
shop.products.partIds -> shop.parts._id confident"

"$REMODEL" analyze "$T/decoys" --json -q >"$T/decoys.report.json"
expect_eq "evidence: amount's chance overlap 1 and its name against it; partIds' ObjectIds and name for it" \
    "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["relationships"] + r["rejected"]:
    if (x["field"], x["to"]) in (("amount", "shop.parts"), ("partIds", "shop.parts")):
        print(x["field"], x["level"], x["score"], x["chance"], [e["points"] for e in x["evidence"]])' "$T/decoys.report.json" | sort)" \
"amount rejected -4.0 1.0 [0.0, -2.0, -2.0]
partIds confident 5.0 0.0 [3.0, 2.0]"
expect_eq "a rejected candidate says why; a possible one what would confirm it" \
    "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print([x["why"] for x in r["rejected"] if x["field"] == "year"][0])
print([x["confirm"] for x in r["relationships"] if x["field"] == "crew"][0][:160])' "$T/decoys.report.json")" \
"the name \"year\" is a measurement's (money, a quantity, a count, an age, a year): numbers that are rarely references; its integers (1950..2020) all look like years
the values alone cannot tell (score 0.0, confident from 2): confirm it with --hints {\"references\": {\"ops.shifts.crew\": \"ops.teams._id\"}}, or reject it with null"
run_rm analyze "$T/decoys" -q
# (Two to confirm: the crew's and the events' city.)
expect_eq "text report: a possible relationship marked, with its evidence and what would confirm it" \
    "$(grep -c 'ops.shifts.crew -> ops.teams._id: .*\[possible: not acted on\]' "$T/out"):$(grep -c '^  to confirm: ' "$T/out"):$(grep -c 'rejected on the evidence' "$T/out")" "1:2:1"

run_rm analyze "$T/decoys" -q --plan-out "$T/decoys-plan.json"
# (Countries and stores are lookups (small, a name each): copied into the
# customers and orders, first; then the orders go into their owner, the
# customers (issue 51). Nothing conflicts: nothing is left out.)
expect_eq "decoys --plan-out: only the confident relationships' steps" "$(steps "$T/decoys-plan.json")" \
"denormalize shop.countries -> shop.customers country 
denormalize shop.stores -> shop.orders storeId 
embed club.members -> club.clubs _id 
embed lib.books -> lib.authors _id 
embed shop.orders -> shop.customers _id 
embed shop.parts -> shop.products partIds keepSource"
expect_eq "decoys: the lookups' copies come before the owner's embed: nothing left out" \
    "$(grep -c 'left out of the plan' "$T/err")" 0
run_rm check "$T/decoys-plan.json" --against "$T/decoys"
expect_eq "decoys plan: remodel check --against accepts it" "$rc" 0
accounted "decoys plan" "$T/decoys-plan.json" "$T/decoys"

# The hints: rejecting a confident relationship takes it out of the plan;
# confirming a possible one, or a rejected one, puts it in.
cat >"$T/refs.json" <<'J'
{"references": {"shop.orders.customerId": null, "ops.shifts.crew": "ops.teams._id",
                "shop.employees.dept": "shop.countries._id"}}
J
expect_eq "hints: customerId rejected, crew and dept confirmed, the rest as before" \
    "$(levels "$T/decoys" --hints "$T/refs.json" | grep -E 'customerId|crew|dept')" \
"ops.shifts.crew -> ops.teams._id confident
shop.employees.dept -> shop.countries._id confident
shop.orders.customerId -> shop.customers._id rejected
shop.orders.customerId -> shop.parts.price rejected"
run_rm analyze "$T/decoys" -q --hints "$T/refs.json" --plan-out "$T/hinted-plan.json"
expect_eq "hints: the plan follows them (no customers step; the lookups' names copied into shifts, customers and employees)" \
    "$(steps "$T/hinted-plan.json" | grep -E 'customers|teams|employees')" \
"denormalize ops.teams -> ops.shifts crew 
denormalize shop.countries -> shop.customers country 
denormalize shop.countries -> shop.employees dept "
expect_eq "hints: customerId's steps gone, and the orders no longer conflict" \
    "$(steps "$T/hinted-plan.json" | grep -c customerId):$(grep -c 'left out of the plan' "$T/err")" "0:0"
accounted "hinted plan" "$T/hinted-plan.json" "$T/decoys"
echo '{"references": {"shop.orders": null}}' >"$T/bad-refs.json"
run_rm analyze "$T/decoys" --hints "$T/bad-refs.json"
expect_eq "hints: a reference without its field refused, exit 2" "$rc:$(grep -c 'hints: "references": must be a document' "$T/err")" "2:1"

# The issue's plan, forced by the hints: parts embedded into customers by
# price (one part a customer: no keepSource), then read again by the embed
# into products. The check leaves the first out and says so.
cat >"$T/issue.json" <<'J'
{"references": {"shop.parts.price": "shop.customers._id"}}
J
run_rm analyze "$T/decoys" -q --hints "$T/issue.json" --plan-out "$T/issue-plan.json"
expect_eq "issue: analyze writes the plan (exit 0)" "$rc" 0
expect_message "issue: it says, once and plainly, which recommendation was left out and why" \
    "remodel: analyze: $T/issue-plan.json: left out of the plan: the embed of shop.parts into shop.customers, recommended for shop.parts.price -> shop.customers._id: it takes documents out of shop.parts, which step 6 (the embed of shop.parts into shop.products) then reads as \"from\": it would join against what is left; the recommendation stays in the report"
expect_eq "issue: the parts stay in shop.parts; products get theirs" \
    "$(steps "$T/issue-plan.json" | grep -E 'shop.parts ->')" \
    "embed shop.parts -> shop.products partIds keepSource"
expect_eq "issue: the report's planChecks say the same" \
    "$("$REMODEL" analyze "$T/decoys" -q --json --hints "$T/issue.json" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["planChecks"]:
    print(c.split(", recommended for ")[0], "|", c.split(", recommended for ")[1].split(": it ")[0])')" \
"left out of the plan: the embed of shop.parts into shop.customers | shop.parts.price -> shop.customers._id"
# The step numbers are the written plan's (issue 24): the plan's step 5
# and 6 are the embeds reading what the left-out steps would have taken.
expect_eq "issue: the planChecks' step numbers are those of the plan as written" \
    "$(steps "$T/issue-plan.json" | sed -n '5p;6p')" \
"embed shop.orders -> shop.customers _id 
embed shop.parts -> shop.products partIds keepSource"
accounted "issue plan" "$T/issue-plan.json" "$T/decoys"

# An embed whose array would write over a field its parents already have:
# left out (books keep their count of reviews).
python3 - "$T/over.json" <<'PY'
import json, sys
books = [{"_id": "B%03d" % i, "title": "t%d" % i, "reviews": 3} for i in range(50)]
reviews = [{"_id": 100 + i, "bookId": "B%03d" % (i % 50), "stars": 1 + i % 5} for i in range(150)]
json.dump({"lib.books": books, "lib.reviews": reviews}, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/over" "@$T/over.json"
run_rm analyze "$T/over" -q --plan-out "$T/over-plan.json"
expect_message "overwrite: the embed is left out, naming the field" \
    "would write over the field \"reviews\" that lib.books's documents already have"
# (Its one recommendation left out, nothing is left to do: no plan of no
# step is written, exit 4, said.)
expect_eq "overwrite: no embed into lib.books: nothing left to do, no plan written (exit 4)" \
    "$rc:$([ -e "$T/over-plan.json" ] && echo written || echo none):$(grep -c 'analyze recommends no step' "$T/err")" "4:none:1"

# Two parents, each taking the same children without keepSource: the
# second reads what the first took; the first is left out.
python3 - "$T/two.json" <<'PY'
import json, sys
tasks = [{"_id": "T%03d" % i, "title": "task %d" % i} for i in range(60)]
authors = [{"_id": "A%03d" % i, "aname": "author %d" % i} for i in range(40)]
# (A text of their own: notes of two references and nothing else would be
# a join collection, embedded nowhere.)
notes = [{"_id": "N%04d" % i, "taskId": "T%03d" % (i % 60), "authorId": "A%03d" % (i % 40),
          "text": "note %d" % i} for i in range(240)]
json.dump({"w.tasks": tasks, "w.authors": authors, "w.notes": notes}, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/two" "@$T/two.json"
run_rm analyze "$T/two" -q --plan-out "$T/two-plan.json"
expect_eq "two parents: one embed takes the notes, the other is left out" \
    "$(steps "$T/two-plan.json" | grep -c '^embed w.notes'):$(grep -c 'takes documents out of w.notes' "$T/err")" "1:1"
accounted "two parents plan" "$T/two-plan.json" "$T/two"

# Shape (issue 24): 400 sensors (_id 0..399); readings with fields of one
# type and range, names that say nothing: "level" spread uniformly over
# every sensor (as a measurement is), "src" skewed (a few sensors with
# many readings, many with few, as references are), "probe" skewed
# with 15% of its values past the keys (orphans), "sensorId" skewed and
# named after the collection. Expected: level rejected on its shape (it
# was possible: nothing else tells it from src), src possible with the
# shape for it, probe possible with its orphans against it, sensorId
# confident; mean and variance computed here.
python3 - "$T/shape.json" "$T/shape-want" <<'PY'
import json, random, sys
random.seed(24)
n, keys = 4000, 400
hot = [int(keys * random.random() ** 3) for _ in range(n)]  # skewed toward 0, same range
docs = [{"_id": i, "level": random.randrange(keys), "src": hot[i],
         "probe": hot[(i * 7) % n] if i % 20 >= 3 else keys + 13 * i % 97,
         "sensorId": hot[(i * 13) % n]} for i in range(n)]
json.dump({"s.sensors": [{"_id": k, "site": "x"} for k in range(keys)], "s.readings": docs},
          open(sys.argv[1], "w"))
def shape(field):
    per = [0] * keys
    for d in docs:
        if d[field] < keys:
            per[d[field]] += 1
    m = sum(per) / keys
    return m, sum(c * c for c in per) / keys - m * m, 100 * sum(1 for c in per if not c) / keys
with open(sys.argv[2], "w") as w:
    m, v, z = shape("level")
    w.write("level|-1|children per parent spread evenly over all parents (mean %.1f, variance %.1f, %.0f%% with none), as values drawn over the keys' range are; references rarely are\n" % (m, v, z))
    m, v, z = shape("probe")
    w.write("probe|1|children per parent skewed (mean %.1f, variance %.1f, %.0f%% with none): few parents with many, as references are, not values spread over a range\n" % (m, v, z))
    m, v, z = shape("src")
    w.write("src|1|children per parent skewed (mean %.1f, variance %.1f, %.0f%% with none): few parents with many, as references are, not values spread over a range\n" % (m, v, z))
    w.write("probe|-1|%.0f%% of its references found nowhere (orphans): references dangle rarely, values that merely fall among the keys often\n"
            % (100 * sum(1 for d in docs if d["probe"] >= keys) / n))
PY
python3 "$MKDUMP" "$T/shape" "@$T/shape.json"
expect_eq "shape: a uniform measurement rejected, skewed references possible (orphans against one), the named one confident" \
    "$(levels "$T/shape")" \
"s.readings.level -> s.sensors._id rejected
s.readings.probe -> s.sensors._id possible
s.readings.sensorId -> s.sensors._id confident
s.readings.src -> s.sensors._id possible"
"$REMODEL" analyze "$T/shape" --json -q | python3 -c '
import json, sys
r = json.load(sys.stdin)
for x in r["relationships"] + r["rejected"]:
    for e in x["evidence"]:
        if "children per parent" in e["what"] or "orphans" in e["what"]:
            print("%s|%g|%s" % (x["field"], e["points"], e["what"]))' | sort >"$T/shape-got"
expect_eq "shape: the evidence items, their points and numbers (mean, variance, parents with none, orphans)" \
    "$(grep -v '^sensorId' "$T/shape-got")" "$(sort "$T/shape-want")"
expect_eq "shape: a name after the collection needs no shape against it (sensorId skewed: +1)" \
    "$(grep -c '^sensorId|1|children per parent skewed' "$T/shape-got")" 1
run_rm analyze "$T/shape" -q --plan-out "$T/shape-plan.json"
accounted "shape plan" "$T/shape-plan.json" "$T/shape"

# The Atlas sample: its relationship stays confident, and its plan loses nothing.
ATLAS=$(atlas_sample)
expect_eq "atlas: customers.accounts -> accounts.account_id confident" \
    "$(levels "$ATLAS" --ns 'sample_analytics.*' | grep accounts.account_id)" \
    "sample_analytics.customers.accounts -> sample_analytics.accounts.account_id confident"
# The sample: every plan analyze writes of it loses nothing either.
run_rm analyze "$ROOT/dumps/sample" -q --plan-out "$T/sample-plan.json"
accounted "sample plan" "$T/sample-plan.json" "$ROOT/dumps/sample"

# The levels and the plan's check are the same when the join keys spill.
mkdir -p "$T/spill"
"$REMODEL" analyze "$T/decoys" --json -q --hints "$T/issue.json" --memory 1K --tmp "$T/spill" \
    --plan-out "$T/spilled-plan.json" >"$T/spilled.json" 2>/dev/null
"$REMODEL" analyze "$T/decoys" --json -q --hints "$T/issue.json" --plan-out "$T/mem-plan.json" \
    >"$T/mem.json" 2>/dev/null
if [ -s "$T/mem.json" ] && cmp -s "$T/mem.json" "$T/spilled.json" && cmp -s "$T/mem-plan.json" "$T/spilled-plan.json"; then
    pass "decoys with the issue's hints: the same JSON report (levels, rejected, planChecks) and plan spilled at 1K"
else
    fail "decoys: the same report and plan spilled at 1K" "$(diff <(tr ',' '\n' <"$T/mem.json") <(tr ',' '\n' <"$T/spilled.json") | head -6)"
fi

# Hints that meet nothing are said, with the name meant (issue 24): a
# collection misspelt in each kind of hint, a references field misspelt;
# the names spelt right say nothing.
cat >"$T/typo-hints.json" <<'EOF'
{"readAlone": ["crm.peple", "crm.tasks"], "readTogether": [["crm.people", "crm.taks"]],
 "readWriteRatio": {"crm.people": 3, "shop.nothere": 2},
 "references": {"crm.tasks.ownr": "crm.people._id", "crm.tasks.owner": "crm.people._id"}}
EOF
run_rm analyze "$ROOT/dumps/sample" -q --hints "$T/typo-hints.json"
expect_eq "hints that meet nothing: exit 0, a HINTS section of four lines" \
    "$rc:$(sed -n '/^HINTS$/,/^$/p' "$T/out" | grep -c '^hints: ')" "0:4"
expect_message_out() { local n=$1 s missing=""; shift
    for s in "$@"; do grep -qF -- "$s" "$T/out" || missing="$missing [$s]"; done
    if [ -z "$missing" ]; then pass "$n"; else fail "$n" "missing$missing"; fi; }
expect_message_out "... each naming the hint, its kind and the name meant" \
    'hints: "crm.peple" (readAlone) names no collection this analysis read (not in the dump, or left out by --ns), so it does nothing; did you mean "crm.people"?' \
    'hints: "crm.taks" (readTogether) names no collection' 'did you mean "crm.tasks"?' \
    'hints: "shop.nothere" (readWriteRatio) names no collection' \
    'hints: "crm.tasks.ownr" (references): crm.tasks has no field "ownr"; did you mean "owner"?'
expect_eq "... and --json's hintNotes the same four" \
    "$("$REMODEL" analyze "$ROOT/dumps/sample" -q --json --hints "$T/typo-hints.json" | python3 -c 'import json, sys
print(len(json.load(sys.stdin)["hintNotes"]))')" "4"
run_rm analyze "$ROOT/dumps/sample" -q --hints "$T/typo-hints.json" --ns 'crm.tasks'
expect_eq "... with --ns leaving crm.people out, its hints are said too" \
    "$(grep -c '"crm.people" (readWriteRatio) names no collection this analysis read (not in the dump, or left out by --ns)' "$T/out")" "1"

# A reference by a key that is not unique (customers.code, C006 twice):
# the duplicate-key note of the embed's reason names the key's collection,
# not the one that references it (issue 64).
python3 - "$T/dupkey.json" <<'PY'
import json, random, sys
random.seed(3)
d = {"shop.customers": [{"_id": i, "code": "C%03d" % (i if i != 7 else 6), "name": "n%d" % i}
                        for i in range(200)],
     "shop.orders": [{"_id": 1000 + i, "customerCode": "C%03d" % random.randint(0, 199), "amount": i}
                     for i in range(2000)]}
json.dump(d, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/dupkey" "@$T/dupkey.json" >/dev/null
run_rm analyze "$T/dupkey" -q
expect_eq "a duplicate key: the recommendation's note names the key's collection and field" \
    "$(grep -c '1 key(s) of shop.customers.code held by more than one document (duplicateKey)' "$T/out"):$(grep -c 'key(s) of shop.orders.code' "$T/out")" "1:0"
