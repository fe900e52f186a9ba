#!/usr/bin/env bash
# remodel analyze on a new user's data as a CSV import leaves it (issue 64,
# item 4; tests/transforms/natural_keys.py), judged by an oracle that is
# not remodel (tests/transforms/natural_oracle.py: Python's own coverage,
# uniqueness and strptime):
# - flights.origin and destination, IATA codes found among airports.iata
#   (unique, every one found, many flights a code) with no name tying
#   them: references, confident, not "same values";
# - dates held as strings in other shapes than ISO ("2001/01/01 00:47",
#   "Jun 12 1998", "Jan 1 2000", "12/31/1999") reported with their format,
#   and the plan's set step converts each to the date strptime reads;
# - monthly prices in 20 series: no bucket of "about 0 readings";
# - enrolments (an int _id, studentId, courseId, nothing else): a join
#   collection, never embedded into one side;
# - nothing to recommend: --plan-out writes no plan and exits 4;
# - every shape of date read, and strings that are none, checked against
#   strptime.
#   REMODEL=build/remodel bash tests/cli/test_analyze_natural.sh
. "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1
export TX=$ROOT/tests/transforms

python3 "$TX/natural_keys.py" "$T/d"
run_rm analyze "$T/d" --json --plan-out "$T/plan.json"
expect_eq "natural keys dump: analyze --plan-out exit 0" "$rc" 0
cp "$T/out" "$T/r.json"
q() { python3 -c "import json; r = json.load(open('$T/r.json')); $1"; }

# (a) references decided by the data, not the names.
expect_eq "natural keys: the string references are exactly the oracle's (all found, unique target, many to one)" \
    "$(q 'print("\n".join(sorted("%s %s %s %s" % (x["from"], x["field"], x["to"], x["key"]) for x in r["relationships"] if x["to"].startswith("travel."))))')" \
    "$(python3 "$TX/natural_oracle.py" "$T/d" refs | sort)"
expect_eq "natural keys: confident, a natural key in the evidence, not same values" \
    "$(q 'print(sorted((x["field"], x["level"], any("a natural key" in e["what"] for e in x["evidence"])) for x in r["relationships"] if x["to"] == "travel.airports"), [s["what"] for s in r["sameValues"]])')" \
    "[('destination', 'confident', True), ('origin', 'confident', True)] []"
# Short of every value found, only the names are missing: possible, with
# its --hints line.
python3 - "$T/d" "$T/d2" <<'PY'
import os, shutil, sys
sys.path.insert(0, os.environ["TX"])
import bson, rmlib
nss, _ = rmlib.read_dir(sys.argv[1])
flights = [bson.decode(d) for d in nss["travel.flights"]]
for f in flights[:150]:
    f["origin"] = "ZZ%d" % (flights.index(f) % 7)  # 2.5% found nowhere
rmlib.write_dump(sys.argv[2], {"travel.airports": [bson.decode(d) for d in nss["travel.airports"]],
                               "travel.flights": flights})
PY
run_rm analyze "$T/d2" --json
expect_eq "natural keys: 97.5% found, no name: possible, its --hints line to confirm it" \
    "$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print([(x["field"], x["level"], "--hints {\"references\": {\"travel.flights.origin\": \"travel.airports.iata\"}}" in x.get("confirm", "")) for x in r["relationships"] if x["field"] == "origin"])' "$T/out")" \
    "[('origin', 'possible', True)]"

# (b) dates held as strings, in the formats the oracle parses them with.
expect_eq "string dates: every field and format the oracle finds (non-ISO), reported" \
    "$(q 'print("\n".join(sorted("%s %s %s" % (t["ns"], t["field"], t["format"]) for t in r["types"] if "format" in t)))')" \
    "$(python3 "$TX/natural_oracle.py" "$T/d" dates | sort)"
python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); p["steps"] = [s for s in p["steps"] if "set" in s]
json.dump(p, open(sys.argv[2], "w"))' "$T/plan.json" "$T/sets.json"
expect_eq "string dates: the plan converts with \$dateFromString and the detected format" \
    "$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
print(sorted((k, v["$dateFromString"]["format"]) for s in p["steps"] for k, v in s["set"]["fields"].items()))' "$T/sets.json")" \
    "[('added', '%m/%d/%Y'), ('dep', '%Y/%m/%d %H:%M'), ('opened', '%b %d %Y'), ('released', '%b %d %Y')]"
run_rm run "$T/sets.json" --from "$T/d" --to "$T/conv"
expect_eq "string dates: the set steps run" "$rc" 0
expect_eq "string dates: each converted value is the date strptime reads" \
    "$(python3 "$TX/natural_oracle.py" "$T/d" convert "$T/conv")" "7500 converted, 0 wrong"
# Day first where a day past 12 says so.
python3 "$TX/mkdump.py" "$T/eu" '{"shop.sales": [{"_id": 1, "on": "13/01/2000"}, {"_id": 2, "on": "02/03/2001"}, {"_id": 3, "on": "28/12/1999"}]}'
run_rm analyze "$T/eu" --json
expect_eq "string dates: a day past 12 first makes the format day first" \
    "$(python3 -c 'import json, sys; print([t.get("format") for t in json.load(open(sys.argv[1]))["types"]])' "$T/out")" \
    "['%d/%m/%Y']"

# (c) buckets of a handful of readings at least.
expect_eq "buckets: monthly prices average under 5 readings a day a series (oracle), so no bucket" \
    "$(python3 "$TX/natural_oracle.py" "$T/d" buckets | awk '{print ($1 < 5) ? "sparse" : "dense"}') $(q 'print([c["ns"] for c in r["checks"] if c["check"] == "bucketCandidate"], [x["pattern"] for x in r["recommendations"] if x["pattern"] == "bucket"])')" \
    "sparse [] []"

# (d) a junction by its shape.
expect_eq "junction: enrolments joins students and courses, a many-to-many, arrays of references" \
    "$(q 'print([j["what"] for j in r["joins"]], sorted(x["relationship"] + " " + x["pattern"] for x in r["recommendations"] if "enrolments" in x["relationship"]))')" \
    "['school.enrolments joins school.students and school.courses: many-to-many'] ['school.enrolments: school.courses array of references', 'school.enrolments: school.students array of references']"
expect_eq "junction: its rows embedded into neither side" \
    "$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
print([s for s in p["steps"] if "embed" in s and s["embed"]["from"] == "school.enrolments"])' "$T/plan.json")" "[]"

# (e) nothing to recommend.
python3 "$TX/mkdump.py" "$T/none" '{"app.things": [{"_id": 1, "v": 2}, {"_id": 2, "v": 4}]}'
run_rm analyze "$T/none" --plan-out "$T/none-plan.json"
expect_eq "nothing to recommend: exit 4, no plan, one line saying so" \
    "$rc:$([ -e "$T/none-plan.json" ] && echo written || echo none):$(grep -c 'nothing to do, no plan written' "$T/err")" "4:none:1"
run_rm analyze "$T/none"
expect_eq "nothing to recommend: the report says so (exit 0 without --plan-out)" \
    "$rc:$(grep -c '^(nothing to recommend' "$T/out")" "0:1"

# Every shape of date the first pass reads, and strings that are none:
# each field's format must read all its strings in Python's strptime (%L
# as %f), and the plan's conversion give the dates strptime gives.
python3 - "$T/shapes.json" <<'PY'
import datetime, json, random, sys
random.seed(7)
rows = []
for i in range(60):
    t = datetime.datetime(1990, 1, 1) + datetime.timedelta(seconds=random.randrange(10 ** 9))
    rows.append({"_id": i,
                 "long": t.strftime("%B ") + str(t.day) + t.strftime(", %Y"),
                 "dayfirst": t.strftime("%d %b %Y"),
                 "dotted": t.strftime("%d.%m.%Y %H:%M:%S"),
                 "unpadded": "%d-%d-%d" % (t.year, t.month, t.day),
                 "millis": t.strftime("%m/%d/%Y %H:%M:%S.") + "%03d" % (i * 7),
                 "version": "4.%d" % i, "digits": "%08d" % (i * 1234567),
                 "words": "Mar %d sales" % i})
json.dump({"app.shapes": rows}, open(sys.argv[1], "w"))
PY
python3 "$TX/mkdump.py" "$T/shapes" "@$T/shapes.json"
run_rm analyze "$T/shapes" --json --plan-out "$T/shapes-plan.json"
cp "$T/out" "$T/shapes.r.json"
expect_eq "date shapes: each field's format, the strings that are no date left out" \
    "$(python3 -c 'import json, sys; print(sorted((t["field"], t.get("format")) for t in json.load(open(sys.argv[1]))["types"]))' "$T/shapes.r.json")" \
    "[('dayfirst', '%d %b %Y'), ('dotted', '%d.%m.%Y %H:%M:%S'), ('long', '%B %d, %Y'), ('millis', '%m/%d/%Y %H:%M:%S.%L'), ('unpadded', '%Y-%m-%d')]"
run_rm run "$T/shapes-plan.json" --from "$T/shapes" --to "$T/shapes-out"
expect_eq "date shapes: the plan's dates are strptime's, with the format reported (%L as %f)" \
    "$rc $(python3 - "$T/shapes" "$T/shapes-out" "$T/shapes.r.json" <<'PY'
import datetime, json, os, sys
sys.path.insert(0, os.environ["TX"])
import bson, rmlib
src = {bson.decode(d)["_id"]: bson.decode(d) for d in rmlib.read_dir(sys.argv[1])[0]["app.shapes"]}
out = {bson.decode(d)["_id"]: bson.decode(d) for d in rmlib.read_dir(sys.argv[2])[0]["app.shapes"]}
good = bad = 0
for t in json.load(open(sys.argv[3]))["types"]:
    fmt = t["format"].replace("%L", "%f")
    for i, d in src.items():
        want = datetime.datetime.strptime(d[t["field"]], fmt)
        have = out[i][t["field"]]
        if isinstance(have, datetime.datetime) and have.replace(tzinfo=None) == want:
            good += 1
        else:
            bad += 1
print(good, "right", bad, "wrong", sorted(k for k, v in out[0].items() if isinstance(v, str)))
PY
)" "0 300 right 0 wrong ['digits', 'version', 'words']"

# A junction whose second reference the values cannot tell from chance
# ("c": courses 1..40, no name): its shape still keeps its rows out of
# the students, with the --hints line that would make it a join.
python3 - "$T/j.json" <<'PY'
import json, random, sys
random.seed(5)
d = {"school.students": [{"_id": i, "name": "student %d" % i} for i in range(1, 201)],
     "school.courses": [{"_id": i, "title": "course %d" % i} for i in range(1, 41)],
     "school.enrolments": []}
for s in range(1, 201):
    for c in random.sample(range(1, 41), random.randint(1, 6)):
        d["school.enrolments"].append({"_id": len(d["school.enrolments"]) + 1, "studentId": s, "c": c})
json.dump(d, open(sys.argv[1], "w"))
PY
python3 "$TX/mkdump.py" "$T/j" "@$T/j.json"
run_rm analyze "$T/j" --json --plan-out "$T/j-plan.json"
expect_eq "junction, one reference unsure: not embedded into the students (no step: exit 4), the hint named" \
    "$rc $([ -e "$T/j-plan.json" ] && echo written || echo none) $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print([(x["pattern"], "{\"references\": {\"school.enrolments.c\": " in x["why"]) for x in r["recommendations"]])' "$T/out")" \
    "4 none [('keep referencing', True)]"
run_rm analyze "$T/j" --json --hints <(echo '{"references": {"school.enrolments.c": "school.courses._id"}}')
expect_eq "junction, the hint given: a join, arrays of references on both sides" \
    "$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print([j["what"] for j in r["joins"]], sorted(x["pattern"] for x in r["recommendations"]))' "$T/out")" \
    "['school.enrolments joins school.students and school.courses: many-to-many'] ['array of references', 'array of references']"
