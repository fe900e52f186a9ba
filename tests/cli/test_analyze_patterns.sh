#!/usr/bin/env bash
# remodel analyze's patterns beyond a relationship's class, each on a dump
# crafted for it, where it must fire and where it must not; each fired
# plan passes remodel check --against the dump, remodel run executes it,
# and its result is checked against the crafted data:
# - outlier (by parent and by child references): a few parents past rule
#   4's couple of hundred children, most with few: embed with maxItems (the
#   p99 rounded up to ten) and onOverflow "outlier"; the overflow holds
#   exactly the children past maxItems of the big parents;
# - extended reference: the parent's identifying strings (at most two)
#   copied into children that stay in their collection (denormalize); not
#   where nothing identifies the parent, not into embedded children, not
#   from a parent the hints say is written more than read;
# - bucket: a time series of tiny documents into one bucket per series and
#   window (bucketize), the readings lacking a series set aside;
# - extract: arrays of entities with ids of their own; a step only when the
#   hints name the array ("db.coll.path") as read or updated on its own.
# Every expected number is computed here from the crafted documents.
#   REMODEL=build/remodel bash tests/cli/test_analyze_patterns.sh
. "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$ROOT/tests/transforms
MKDUMP=$ROOT/tests/transforms/mkdump.py

# rec SRC PATTERN [ARGS]: the recommendations of that pattern, one line
# each: name | why | rule | dependsOn.
rec() {
    local src=$1 pat=$2; shift 2
    "$REMODEL" analyze "$src" --json -q "$@" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["recommendations"]:
    if r["pattern"] == sys.argv[1]:
        print(r["relationship"], "|", r["why"], "|", r["rule"], "|", r["dependsOn"])' "$pat"
}
# step PLAN OP: that operation's steps in the plan, without their why, as
# sorted JSON (one line each).
step() {
    python3 -c '
import json, sys
ints = lambda d: int(d["$numberInt"]) if list(d) == ["$numberInt"] else d
for s in json.load(open(sys.argv[1]), object_hook=ints)["steps"]:
    for op, b in s.items():
        if op == sys.argv[2]:
            if not b.pop("why", ""):
                print("NO WHY")
            print(json.dumps(b, sort_keys=True))' "$1" "$2"
}
# plan_runs NAME PLAN SRC OUT: check --against accepts it and run executes it.
plan_runs() {
    run_rm check "$2" --against "$3"
    expect_eq "$1: remodel check --against accepts the plan" "$rc" 0
    run_rm run "$2" --from "$3" --to "$4" -q
    expect_eq "$1: remodel run executes it" "$rc:$(head -c 300 "$T/err")" "0:"
}
has() { case $2 in *"$3"*) pass "$1" ;; *) fail "$1" "missing [$3] in [$2]" ;; esac; }

# --- outlier ---------------------------------------------------------------
# mkreviews JSON MOST BIG...: 300 products with 0 to MOST reviews each, but
# products 17, 123, ... with BIG ones.
mkreviews() {
    python3 - "$@" <<'PY'
import json, random, sys
random.seed(11)
most, big = int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
counts = [random.randint(0, most) for _ in range(300)]
for i, b in enumerate(big):
    counts[17 + 106 * i] = b
products = [{"_id": "P%04d" % i, "price": i % 50} for i in range(300)]
reviews, n = [], 0
for i, c in enumerate(counts):
    for k in range(c):
        n += 1
        reviews.append({"_id": n, "product_id": "P%04d" % i, "stars": 1 + (n % 5)})
random.shuffle(reviews)
json.dump({"shop.products": products, "shop.reviews": reviews}, open(sys.argv[1], "w"))
PY
}
# outlier_case NAME MOST BIG...: the typical product has few reviews (p99
# within 200), the BIG ones more than 200.
outlier_case() {
    local name=$1 dir=$T/$1 got P99 MAXI BIGP OVER MAXC; shift
    mkreviews "$dir.json" "$@"
    python3 "$MKDUMP" "$dir" "@$dir.json"
    # What the data says: p99, maxItems (the p99 rounded up to ten, at
    # least 10), the parents past it and the children they page out.
    read -r P99 MAXI BIGP OVER MAXC <<<"$(python3 - "$dir.json" <<'PY'
import json, math, sys
from collections import Counter
d = json.load(open(sys.argv[1]))
c = Counter(r["product_id"] for r in d["shop.reviews"])
per = sorted(c.get(p["_id"], 0) for p in d["shop.products"])
p99 = per[math.ceil(0.99 * len(per)) - 1]
m = max(10, -(-p99 // 10) * 10)
print(p99, m, sum(1 for v in per if v > m), sum(v - m for v in per if v > m), per[-1])
PY
)"
    got=$(rec "$dir" outlier)
    has "$name: outlier recommended for shop.reviews.product_id -> shop.products._id" "$got" \
        "shop.reviews.product_id -> shop.products._id | "
    has "$name: the why gives the p99 ($P99) and the largest ($MAXC)" "$got" \
        "p99 $P99 children per parent), but the largest parent has $MAXC, past rule 4's couple of hundred"
    has "$name: the why gives maxItems ($MAXI) and the parents past it ($BIGP)" "$got" \
        "keeps up to $MAXI of shop.reviews's documents (the p99 rounded up to ten), and the $BIGP parent(s) with more get hasExtraReviews and page the rest into shop.products_reviews_overflow"
    has "$name: the rule names the article and the pattern" "$got" \
        "\"MongoDB Schema Design Guide | Embed vs Reference, Patterns, and Best Practices\", the outlier pattern"
    expect_eq "$name: neither embed of everything nor a subset besides" \
        "$(rec "$dir" embed)$(rec "$dir" "subset with count")" ""
    run_rm analyze "$dir" --plan-out "$dir-plan.json" -q
    expect_eq "$name: the plan's step: embed with maxItems $MAXI and onOverflow outlier, with a why" \
        "$(step "$dir-plan.json" embed)" \
        "{\"as\": \"reviews\", \"foreignField\": \"product_id\", \"from\": \"shop.reviews\", \"into\": \"shop.products\", \"localField\": \"_id\", \"maxItems\": $MAXI, \"onOverflow\": \"outlier\"}"
    plan_runs "$name" "$dir-plan.json" "$dir" "$dir-out.archive"
    expect_eq "$name: each parent keeps min(children, $MAXI), the $BIGP big ones flagged, the overflow holds exactly the $OVER past it, no review left behind" \
        "$(python3 - "$dir.json" "$dir-out.archive" "$MAXI" <<'PY'
import bson, json, sys
from collections import Counter
import rmlib
d = json.load(open(sys.argv[1]))
m = int(sys.argv[3])
want = Counter(r["product_id"] for r in d["shop.reviews"])
nss, _ = rmlib.read_archive(sys.argv[2])
bad = []
flagged = 0
paged = Counter()
for raw in nss["shop.products"]:
    p = bson.decode(raw)
    n = want.get(p["_id"], 0)
    if len(p.get("reviews", [])) != min(n, m):
        bad.append(p["_id"])
    if p.get("hasExtraReviews"):
        flagged += 1
        if n <= m:
            bad.append(p["_id"])
for raw in nss.get("shop.products_reviews_overflow", []):
    page = bson.decode(raw)
    paged[page["parent_id"]] += len(page["reviews"])
over = {k: v - m for k, v in want.items() if v > m}
print(flagged, sum(paged.values()), dict(paged) == over, len(nss["shop.reviews"]), bad)
PY
)" "$BIGP $OVER True 0 []"
}
# One-to-few by the p99 (embed today), two parents past 200.
outlier_case outlier 7 260 333
# One-to-many by the p99 (a subset today): maxItems the p99 rounded up.
outlier_case outlier-many 23 240 1200 205

# By child references, children shared (keepSource): 300 products with 1
# to 6 parts each, two with 400.
python3 - "$T/refs.json" <<'PY'
import json, random, sys
random.seed(2)
parts = [{"_id": "Q%04d" % i, "w": i} for i in range(3000)]
prods = [{"_id": 100000 + i, "parts": ["Q%04d" % q for q in random.sample(range(3000), 400 if i in (5, 77) else random.randint(1, 6))]}
         for i in range(300)]
json.dump({"c.parts": parts, "c.products": prods}, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/refs" "@$T/refs.json"
read -r RMAXI ROVER <<<"$(python3 - "$T/refs.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
per = sorted(len(p["parts"]) for p in d["c.products"])
m = max(10, -(-per[math.ceil(0.99 * len(per)) - 1] // 10) * 10)
print(m, sum(v - m for v in per if v > m))
PY
)"
RSHARED=$(python3 -c '
import json, sys
from collections import Counter
c = Counter(q for p in json.load(open(sys.argv[1]))["c.products"] for q in p["parts"])
print(sum(1 for v in c.values() if v > 1))' "$T/refs.json")
has "outlier by child references: recommended, shared children kept, how many said and weighed" "$(rec "$T/refs" outlier)" \
    "hasExtraParts and page the rest into c.products_parts_overflow; $RSHARED of c.parts's 3000 documents referenced by more than one parent: children shared by several parents stay in their collection too (keepSource); weighed: so many that duplicating them"
run_rm analyze "$T/refs" --plan-out "$T/refs-plan.json" -q
expect_eq "outlier by child references: the plan's step" "$(step "$T/refs-plan.json" embed)" \
    "{\"as\": \"parts\", \"foreignField\": \"_id\", \"from\": \"c.parts\", \"into\": \"c.products\", \"keepSource\": true, \"localField\": \"parts\", \"maxItems\": $RMAXI, \"onOverflow\": \"outlier\"}"
plan_runs "outlier by child references" "$T/refs-plan.json" "$T/refs" "$T/refs-out.archive"
expect_eq "outlier by child references: $ROVER parts paged out, every part still in c.parts" \
    "$(python3 - "$T/refs-out.archive" <<'PY'
import bson, sys
import rmlib
nss, _ = rmlib.read_archive(sys.argv[1])
print(sum(len(bson.decode(x)["parts"]) for x in nss["c.products_parts_overflow"]), len(nss["c.parts"]))
PY
)" "$ROVER 3000"

# Not an outlier: the largest parents within rule 4 (190): embed them all.
mkreviews "$T/few.json" 7 150 190
python3 "$MKDUMP" "$T/few" "@$T/few.json"
expect_eq "not an outlier: the largest parent (190) within a couple of hundred" "$(rec "$T/few" outlier)" ""
has "not an outlier: embed, one-to-few" "$(rec "$T/few" embed)" "one-to-few children per parent"
run_rm analyze "$T/few" --plan-out "$T/few-plan.json" -q
has "not an outlier: the embed step has no maxItems" "$(step "$T/few-plan.json" embed)" \
    "\"localField\": \"_id\"}"
echo '{"readAlone": ["shop.reviews"]}' >"$T/reviews-alone.json"
expect_eq "not an outlier: reviews read on their own keep their collection (rule 2)" \
    "$(rec "$T/outlier" outlier --hints "$T/reviews-alone.json")" ""
has "not an outlier: keep referencing, settled by the hints" \
    "$(rec "$T/outlier" "keep referencing" --hints "$T/reviews-alone.json")" \
    "rule 2: needing to access an object on its own is a compelling reason not to embed it | settled by the hints: the children are read or updated on their own"

# --- extended reference ----------------------------------------------------
# 40 authors with 201 to 260 books each (past a couple of hundred: the
# children keep referencing, the parent keeps a count): name, handle
# and code identify an author (only the first two are copied); country
# (3 values), bio (long text), email (in half) and the numbers do not.
python3 - "$T/ext.json" <<'PY'
import json, random, sys
random.seed(5)
authors, books, n = [], [], 0
for i in range(40):
    a = {"_id": {"$oid": "%024x" % (i + 1)}, "country": ["fr", "de", "it"][i % 3],
         "name": "Author %02d" % i, "bio": "x" * 200 + str(i), "handle": "@a%d" % i,
         "code": "C-%03d" % i, "born": 1900 + i}
    if i % 2:
        a["email"] = "a%d@example.org" % i
    authors.append(a)
    for k in range(random.randint(201, 260)):
        n += 1
        books.append({"_id": n, "author_id": {"$oid": "%024x" % (i + 1)}, "title": "Book %d" % n})
json.dump({"lib.authors": authors, "lib.books": books}, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/ext" "@$T/ext.json"
got=$(rec "$T/ext" "extended reference")
has "extended reference: recommended for lib.books.author_id -> lib.authors._id" "$got" \
    "lib.books.author_id -> lib.authors._id | "
has "extended reference: the why gives each field's presence and distinct values" "$got" \
    "\"name\" (a string in 40 of 40, 40 distinct) as \"author_name\", \"handle\" (a string in 40 of 40, 40 distinct) as \"author_handle\""
has "extended reference: the rule names the article and rule five" "$got" \
    "\"6 Rules of Thumb for MongoDB Schema Design\" (William Zola), database denormalization from one to many"
has "extended reference: depends on the fields rarely changing and the children read alone" "$got" \
    "whether \"name\", \"handle\" rarely change and lib.books is read without lib.authors"
has "extended reference: beside the computed summary" "$(rec "$T/ext" "computed summary")" \
    "lib.books.author_id -> lib.authors._id"
has "extended reference: an alternative to the summary's step, not in the plan" "$got" \
    "an alternative, not in the plan: the plan takes one step a relationship, and its computed summary step ranks first"
# One step a relationship: the summary's summarize, not the denormalize beside it.
run_rm analyze "$T/ext" --plan-out "$T/ext-plan.json" -q
expect_eq "extended reference: the plan holds the summary's summarize, and no denormalize for the same relationship" \
    "$(step "$T/ext-plan.json" denormalize)|$(step "$T/ext-plan.json" summarize | python3 -c 'import json,sys; b=json.loads(sys.stdin.read()); print(b["from"], b["into"], ",".join(b["fields"]))')" \
    "|lib.books lib.authors books_count"
plan_runs "extended reference: the summary's plan" "$T/ext-plan.json" "$T/ext" "$T/ext-out.archive"

# Not an extended reference: nothing identifies the parent (country has 3
# values, bio is text, email is in half).
python3 - "$T/ext.json" "$T/noid.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["lib.authors"]:
    for k in ("name", "handle", "code"):
        del a[k]
json.dump(d, open(sys.argv[2], "w"))
PY
python3 "$MKDUMP" "$T/noid" "@$T/noid.json"
expect_eq "no extended reference: no field identifies the parent" "$(rec "$T/noid" "extended reference")" ""
has "no extended reference: the computed summary is still recommended" "$(rec "$T/noid" "computed summary")" \
    "lib.books.author_id -> lib.authors._id"
echo '{"readWriteRatio": {"lib.authors": 0.5}}' >"$T/authors-written.json"
expect_eq "no extended reference: the hints say the parent is written more than read (rule five)" \
    "$(rec "$T/ext" "extended reference" --hints "$T/authors-written.json")" ""
# Not into embedded children: the few reviews of $T/few go into products.
python3 - "$T/few.json" "$T/fewnamed.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["shop.products"]:
    p["name"] = "Product " + p["_id"]
json.dump(d, open(sys.argv[2], "w"))
PY
python3 "$MKDUMP" "$T/fewnamed" "@$T/fewnamed.json"
expect_eq "no extended reference: the children are embedded" "$(rec "$T/fewnamed" "extended reference")" ""
echo '{"readAlone": ["shop.reviews"]}' >"$T/alone.json"
got=$(rec "$T/fewnamed" "extended reference" --hints "$T/alone.json")
has "extended reference: embed overruled by the hints (reviews read alone), then the name copied" "$got" \
    "\"name\" (a string in 300 of 300, 300 distinct) as \"product_name\""
has "extended reference: dependsOn says what the hints settled" "$got" \
    "settled by the hints: the children are read or updated on their own"
case $got in *"an alternative, not in the plan"*) fail "extended reference: the relationship's step when its embed is overruled" "$got" ;;
*) pass "extended reference: the relationship's step when its embed is overruled" ;; esac
run_rm analyze "$T/fewnamed" --hints "$T/alone.json" --plan-out "$T/fewnamed-plan.json" -q
expect_eq "extended reference: the plan's denormalize step (the product's name into each review)" \
    "$(step "$T/fewnamed-plan.json" denormalize)|$(step "$T/fewnamed-plan.json" embed)" \
    '{"fields": {"product_name": "name"}, "foreignField": "_id", "from": "shop.products", "in": "shop.reviews", "localField": "product_id"}|'
plan_runs "extended reference" "$T/fewnamed-plan.json" "$T/fewnamed" "$T/fewnamed-out.archive"
expect_eq "extended reference: every review carries its product's name" \
    "$(python3 - "$T/fewnamed.json" "$T/fewnamed-out.archive" <<'PY'
import bson, json, sys
import rmlib
d = json.load(open(sys.argv[1]))
name = {p["_id"]: p["name"] for p in d["shop.products"]}
nss, _ = rmlib.read_archive(sys.argv[2])
ok = bad = 0
for raw in nss["shop.reviews"]:
    r = bson.decode(raw)
    if r.get("product_name") == name[r["product_id"]]:
        ok += 1
    else:
        bad += 1
print(ok, bad)
PY
)" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["shop.reviews"]), 0)' "$T/fewnamed.json")"

# --- bucket ----------------------------------------------------------------
# 3 meters, a reading a minute each from 07:17:30, 200 a meter, one
# reading without its meter: hours (about 60 readings a bucket).
python3 - "$T/bucket.json" <<'PY'
import json, sys
t0 = 1700000000000 + 30000  # 2023-11-14T22:13:50Z: not on an hour
docs, n = [], 0
for k in range(200):
    for m in ("m1", "m2", "m3"):
        n += 1
        docs.append({"_id": n, "meter": m, "at": {"$date": {"$numberLong": str(t0 + 60000 * k + 7 * n)}},
                     "kwh": k % 9})
del docs[100]["meter"]
json.dump({"power.readings": docs}, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/bucket" "@$T/bucket.json"
# The window analyze's rule gives (the widest within 1,000 readings at a
# series' average interval) and the buckets it makes.
read -r GRAN NBUCKETS NVALID NDOCS <<<"$(python3 - "$T/bucket.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["power.readings"]
ts = [int(x["at"]["$date"]["$numberLong"]) for x in d]
series = {x["meter"] for x in d if "meter" in x}
interval = (max(ts) - min(ts)) / 1000.0 / (len(d) / len(series))
gran = [g for g, s in (("seconds", 1), ("minutes", 60), ("hours", 3600), ("days", 86400)) if s / interval <= 1000][-1]
span = dict(seconds=1, minutes=60, hours=3600, days=86400)[gran] * 1000
valid = [x for x in d if "meter" in x]
print(gran, len({(x["meter"], int(x["at"]["$date"]["$numberLong"]) // span) for x in valid}), len(valid), len(d))
PY
)"
got=$(rec "$T/bucket" bucket)
has "bucket: recommended for power.readings" "$got" "power.readings | power.readings: $NDOCS documents of"
has "bucket: the why gives the series and the window" "$got" \
    "dated by \"at\", in 3 series of \"meter\" (a reading every 60 seconds a series, on average): one document per series and ${GRAN%s}"
has "bucket: the rule names the article" "$got" "\"MongoDB Schema Design Guide | Embed vs Reference, Patterns, and Best Practices\", the bucket pattern"
has "bucket: the reading without a meter is set aside" "$got" "readings without a date or a \"meter\" go to power.readings_invalid"
run_rm analyze "$T/bucket" --plan-out "$T/bucket-plan.json" -q
expect_eq "bucket: the plan's bucketize step ($GRAN)" "$(step "$T/bucket-plan.json" bucketize)" \
    "{\"from\": \"power.readings\", \"granularity\": \"$GRAN\", \"maxCount\": 1000, \"metaField\": \"meter\", \"onInvalid\": {\"to\": \"power.readings_invalid\"}, \"stats\": {\"kwh\": [\"min\", \"max\", \"avg\"]}, \"timeField\": \"at\", \"to\": \"power.readings_buckets\"}"
has "bucket: the why names the statistics kept" "$got" "each bucket keeps the min, max and average of \"kwh\""
plan_runs "bucket" "$T/bucket-plan.json" "$T/bucket" "$T/bucket-out.archive"
expect_eq "bucket: $NBUCKETS buckets holding the $NVALID readings with a meter, the other one set aside" \
    "$(python3 - "$T/bucket-out.archive" <<'PY'
import bson, sys
import rmlib
nss, _ = rmlib.read_archive(sys.argv[1])
b = [bson.decode(x) for x in nss["power.readings_buckets"]]
print(len(b), sum(x["count"] for x in b), len(nss.get("power.readings_invalid", [])), len(nss.get("power.readings", [])))
PY
)" "$NBUCKETS $NVALID $((NDOCS - NVALID)) 0"
expect_eq "bucket: each bucket's kwh min, max and avg are its readings'" \
    "$(python3 - "$T/bucket-out.archive" <<'PY'
import bson, sys
import rmlib
nss, _ = rmlib.read_archive(sys.argv[1])
bad = 0
for x in map(bson.decode, nss["power.readings_buckets"]):
    v = [m["kwh"] for m in x["measurements"]]
    s = x["stats"]["kwh"]
    bad += (s["min"], s["max"]) != (min(v), max(v)) or abs(s["avg"] - sum(v) / len(v)) > 1e-9
print(bad)
PY
)" "0"
expect_eq "bucket: the check reports the same window" \
    "$("$REMODEL" analyze "$T/bucket" --json -q | python3 -c 'import json,sys; print([c["finding"].split("granularity ")[1].split(" ")[0] for c in json.load(sys.stdin)["checks"] if c["check"] == "bucketCandidate"])')" \
    "['\"$GRAN\"']"
# Not a bucket: the same readings with a 300-byte note each.
python3 - "$T/bucket.json" "$T/fat.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for x in d["power.readings"]:
    x["note"] = "n" * 300
json.dump(d, open(sys.argv[2], "w"))
PY
python3 "$MKDUMP" "$T/fat" "@$T/fat.json"
expect_eq "not a bucket: documents of more than 256 bytes" "$(rec "$T/fat" bucket)" ""
echo '{"updatedAlone": ["power.readings"]}' >"$T/readings-alone.json"
expect_eq "not a bucket: the hints say readings are updated one by one" \
    "$(rec "$T/bucket" bucket --hints "$T/readings-alone.json")" ""

# --- extended reference into references held in arrays ----------------------
# 120 kits, each an array of 15 to 40 part ids (one-to-many: kept as
# references), and 60 orders whose 12 to 30 lines each name a part
# (lines.part, inside elements): the parts' names go beside each reference.
python3 - "$T/kits.json" <<'PY'
import json, random, sys
random.seed(5)
parts = [{"_id": 1000 + i, "name": "part %03d" % i, "qty": i % 7} for i in range(400)]
kits = [{"_id": k, "parts": random.sample(range(1000, 1400), random.randint(15, 40))} for k in range(120)]
orders = [{"_id": o, "lines": [{"part": random.randrange(1000, 1400), "n": 1 + o % 3} for _ in range(random.randint(12, 30))]}
          for o in range(60)]
json.dump({"kit.parts": parts, "kit.kits": kits, "kit.orders": orders}, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/kits" "@$T/kits.json"
got=$(rec "$T/kits" "extended reference")
has "extended reference (many to one): the kits' array of part ids" "$got" \
    "kit.kits.parts -> kit.parts._id: the references stay in kit.kits, and showing a parent with its children takes a lookup in kit.parts; each reference becomes {id, ...} with copies of the fields that identify a child, nearly one value each: \"name\" (a string in 400 of 400, 400 distinct) as \"parts.name\""
has "extended reference (many to one): the rule names denormalization from many to one" "$got" \
    "\"6 Rules of Thumb for MongoDB Schema Design\" (William Zola), database denormalization from many to one"
run_rm analyze "$T/kits" --plan-out "$T/kits-plan.json" -q
expect_eq "extended reference (many to one): the plan's denormalize steps (the kits' array; the order lines' part)" \
    "$(step "$T/kits-plan.json" denormalize)" \
'{"fields": {"name": "name"}, "foreignField": "_id", "from": "kit.parts", "in": "kit.kits", "localField": "parts"}
{"fields": {"name": "name"}, "foreignField": "_id", "from": "kit.parts", "in": "kit.orders", "localField": "lines.part"}'
plan_runs "extended reference (many to one)" "$T/kits-plan.json" "$T/kits" "$T/kits-out.archive"
expect_eq "extended reference (many to one): each kit's parts are {id, name} in their order, each order line gains its part's name" \
    "$(python3 - "$T/kits.json" "$T/kits-out.archive" <<'PY'
import bson, json, sys
import rmlib
d = json.load(open(sys.argv[1]))
name = {p["_id"]: p["name"] for p in d["kit.parts"]}
nss, _ = rmlib.read_archive(sys.argv[2])
kits = {k["_id"]: k for k in map(bson.decode, nss["kit.kits"])}
orders = {o["_id"]: o for o in map(bson.decode, nss["kit.orders"])}
ok_k = all(kits[k["_id"]]["parts"] == [{"id": p, "name": name[p]} for p in k["parts"]] for k in d["kit.kits"])
ok_o = all(orders[o["_id"]]["lines"] == [dict(l, name=name[l["part"]]) for l in o["lines"]] for o in d["kit.orders"])
print(len(kits), ok_k, len(orders), ok_o)
PY
)" "120 True 60 True"
echo '{"readWriteRatio": {"kit.parts": 0.5}}' >"$T/parts-written.json"
expect_eq "extended reference (many to one): none when the hints say the parts are written more than read" \
    "$(rec "$T/kits" "extended reference" --hints "$T/parts-written.json")" ""

# A few lines an order (one-to-few, lines.part): embedded, into an array
# named after the parts' collection (the path is no field name).
python3 - "$T/kits.json" "$T/lines.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
orders = [{"_id": o["_id"], "lines": o["lines"][:1 + o["_id"] % 4]} for o in d["kit.orders"]]
json.dump({"kit.parts": d["kit.parts"], "kit.orders": orders}, open(sys.argv[2], "w"))
PY
python3 "$MKDUMP" "$T/lines" "@$T/lines.json"
run_rm analyze "$T/lines" --plan-out "$T/lines-plan.json" -q
expect_eq "embed by references inside array elements: as names the children's collection" \
    "$(step "$T/lines-plan.json" embed)" \
    '{"as": "parts", "foreignField": "_id", "from": "kit.parts", "into": "kit.orders", "keepSource": true, "localField": "lines.part"}'
plan_runs "embed by references inside array elements" "$T/lines-plan.json" "$T/lines" "$T/lines-out.archive"

# --- extract ---------------------------------------------------------------
python3 - "$T/extract.json" <<'PY'
import json, sys
orders = [{"_id": i, "items": [{"_id": 100 * i + k, "sku": "S%d" % k, "qty": k + 1} for k in range(1 + i % 4)],
           "notes": [{"text": "t%d" % k} for k in range(2)]}
          for i in range(30)]
json.dump({"shop.orders": orders}, open(sys.argv[1], "w"))
PY
python3 "$MKDUMP" "$T/extract" "@$T/extract.json"
NITEMS=$(python3 -c 'import json,sys; print(sum(len(o["items"]) for o in json.load(open(sys.argv[1]))["shop.orders"]))' "$T/extract.json")
got=$(rec "$T/extract" extract)
has "extract: recommended for shop.orders.items, the elements with ids counted" "$got" \
    "shop.orders.items | shop.orders.items: $NITEMS of its $NITEMS embedded documents carry an _id"
has "extract: without hints, no step and dependsOn says why" "$got" \
    "a dump cannot show it, so no step (--hints: list the array as \"db.coll.path\" in readAlone or updatedAlone)"
expect_eq "extract: notes (no ids) are no candidate" "$(rec "$T/extract" extract | grep -c notes)" 0
run_rm analyze "$T/extract" --plan-out "$T/extract-plan.json" -q
expect_eq "extract: without hints, no extract step in the plan" \
    "$([ -e "$T/extract-plan.json" ] && step "$T/extract-plan.json" extract)" ""
echo '{"readAlone": ["shop.orders.items"]}' >"$T/items-alone.json"
has "extract: with readAlone shop.orders.items, settled by the hints" \
    "$(rec "$T/extract" extract --hints "$T/items-alone.json")" \
    "settled by the hints: the elements are read or updated on their own"
run_rm analyze "$T/extract" --hints "$T/items-alone.json" --plan-out "$T/extract-plan.json" -q
expect_eq "extract: the plan's extract step" "$(step "$T/extract-plan.json" extract)" \
    '{"from": "shop.orders", "ordinalField": "position", "parentField": "parent_id", "path": "items", "style": "parentRef", "to": "shop.orders_items"}'
plan_runs "extract" "$T/extract-plan.json" "$T/extract" "$T/extract-out.archive"
expect_eq "extract: shop.orders_items holds the $NITEMS elements, each with its own _id, its order's in parent_id and its place in position; the orders lose items" \
    "$(python3 - "$T/extract.json" "$T/extract-out.archive" <<'PY'
import bson, json, sys
import rmlib
d = json.load(open(sys.argv[1]))
want = sorted((it["_id"], it["sku"], it["qty"], o["_id"], k) for o in d["shop.orders"] for k, it in enumerate(o["items"]))
nss, _ = rmlib.read_archive(sys.argv[2])
got = sorted((x["_id"], x["sku"], x["qty"], x["parent_id"], x["position"]) for x in map(bson.decode, nss["shop.orders_items"]))
print(len(got), got == want, sum(1 for o in map(bson.decode, nss["shop.orders"]) if "items" in o))
PY
)" "$NITEMS True 0"
echo '{"updatedAlone": ["shop.orders.notes"]}' >"$T/notes-alone.json"
run_rm analyze "$T/extract" --hints "$T/notes-alone.json" --plan-out "$T/notes-plan.json" -q
expect_eq "extract: a hint for another array makes no step for items" \
    "$([ -e "$T/notes-plan.json" ] && step "$T/notes-plan.json" extract)" ""
echo '{"readAlone": ["orders"]}' >"$T/bad-name.json"
run_rm analyze "$T/extract" --hints "$T/bad-name.json"
expect_eq "hints: a name without its database refused (exit 2)" "$rc" 2
expect_message "hints: the message gives both forms" \
    "hints: \"readAlone\": must be an array of namespaces (db.coll, or db.coll.path for the elements of an array)"

# Deterministic: the same report twice.
expect_eq "the report is the same twice" \
    "$("$REMODEL" analyze "$T/outlier" --json -q | md5sum)" "$("$REMODEL" analyze "$T/outlier" --json -q | md5sum)"
