#!/usr/bin/env bash
# remodel analyze on a relational import, one table per collection (issue
# 51; docs/analyze.md "Relational imports"):
# - TPC-H at scale 0.01, made by tpchgen-cli (a packaged generator: data no
#   one here wrote), loaded as mongoimport loads CSV (numbers typed, dates
#   left as strings; tests/transforms/tpch_dump.py): exactly the foreign
#   keys of the TPC-H specification are found, and no other; partsupp is
#   the join of part and supplier; lineitem is owned by orders; nation and
#   region are lookups; the plan runs and gives orders with their lines
#   embedded, their dates typed;
# - a small shop (tests/transforms/relational_shop.py) with every case of
#   the issue's "Why": a billing address equal to the customer's (same
#   values), order lines with two parents (the owner), a join table, a
#   manager hierarchy, a reference that fits two targets (a tie, settled by
#   --hints), 1 to 14 lines an order (embedded), dates, decimals and flags
#   held as strings or 0/1 (converted by the plan);
# - issue 52, trip 2: a recommendation left out of --plan-out is a note,
#   said once in plain words, not an error.
#   REMODEL=build/remodel bash tests/cli/test_analyze_relational.sh
. "$(dirname "$0")/lib.sh"
export PYTHONDONTWRITEBYTECODE=1
TX=$ROOT/tests/transforms

# json DUMP [ARGS]: the --json report into $T/r.json.
json() { "$REMODEL" analyze "$@" --json -q >"$T/r.json"; }
# q EXPR: a Python expression over the report r, printed.
q() { python3 -c "import json; r = json.load(open('$T/r.json')); $1"; }

# --- TPC-H ------------------------------------------------------------------
if ! GEN=$("$ROOT/tests/peers/tpchgen.sh") || ! "$GEN" csv -s 0.01 --output-dir="$T/tpch-csv" >/dev/null 2>&1; then
    fail "tpch: tpchgen-cli installed from its package and run" "$(tail -3 "$T/tpch-csv" 2>/dev/null)"
else
    python3 "$TX/tpch_dump.py" "$T/tpch-csv" "$T/tpch"
    json "$T/tpch"
    # The specification's foreign keys that a single field holds (lineitem's
    # (partkey, suppkey) into partsupp is a pair: no field holds it).
    expect_eq "tpch: exactly the specification's foreign keys, all confident, no other relationship" \
        "$(q 'print("\n".join(sorted("%s.%s -> %s.%s %s" % (x["from"], x["field"], x["to"], x["key"], x["level"]) for x in r["relationships"])))')" \
"tpch.customer.c_nationkey -> tpch.nation.n_nationkey confident
tpch.lineitem.l_orderkey -> tpch.orders.o_orderkey confident
tpch.lineitem.l_partkey -> tpch.part.p_partkey confident
tpch.lineitem.l_suppkey -> tpch.supplier.s_suppkey confident
tpch.nation.n_regionkey -> tpch.region.r_regionkey confident
tpch.orders.o_custkey -> tpch.customer.c_custkey confident
tpch.partsupp.ps_partkey -> tpch.part.p_partkey confident
tpch.partsupp.ps_suppkey -> tpch.supplier.s_suppkey confident
tpch.supplier.s_nationkey -> tpch.nation.n_nationkey confident"
    expect_eq "tpch: partsupp is the join of part and supplier (many-to-many)" \
        "$(q 'print([j["what"] for j in r["joins"]])')" \
        "['tpch.partsupp joins tpch.part and tpch.supplier: many-to-many']"
    expect_eq "tpch: lineitem owned by orders; part and supplier referenced, their names copied" \
        "$(q 'print([o["what"] for o in r["ownership"] if "owned" in o["what"]]); print(sorted((x["field"], x["role"]) for x in r["relationships"] if x["from"] == "tpch.lineitem"))')" \
        "['tpch.lineitem owned by tpch.orders (l_orderkey)']
[('l_orderkey', 'owner'), ('l_partkey', 'referenced'), ('l_suppkey', 'referenced')]"
    expect_eq "tpch: nation and region are lookups, copied into their referrers" \
        "$(q 'print(sorted(o["ns"] for o in r["ownership"] if o["what"].endswith("lookup"))); print(sorted((x["from"], x["role"]) for x in r["relationships"] if x["to"] in ("tpch.nation", "tpch.region")))')" \
        "['tpch.nation', 'tpch.region']
[('tpch.customer', 'lookup'), ('tpch.nation', 'lookup'), ('tpch.supplier', 'lookup')]"
    expect_eq "tpch: customer->nation and supplier->nation are no tie (nor any other)" "$(q 'print(r["ties"])')" "[]"
    expect_eq "tpch: the dates held as strings, per field with counts" \
        "$(q 'print("\n".join("%s.%s %s %d/%d" % (t["ns"], t["field"], t["what"], t["matching"], t["of"]) for t in r["types"]))')" \
"tpch.lineitem.l_shipdate dates held as strings 60175/60175
tpch.lineitem.l_commitdate dates held as strings 60175/60175
tpch.lineitem.l_receiptdate dates held as strings 60175/60175
tpch.orders.o_orderdate dates held as strings 15000/15000"
    expect_eq "tpch: the recommendations: lines embedded into orders, the join as arrays, lookups copied" \
        "$(q 'print("\n".join(sorted("%s | %s" % (x["relationship"], x["pattern"]) for x in r["recommendations"])))')" \
"tpch.customer.c_nationkey -> tpch.nation.n_nationkey | extended reference
tpch.lineitem | convert types
tpch.lineitem.l_orderkey -> tpch.orders.o_orderkey | embed
tpch.lineitem.l_partkey -> tpch.part.p_partkey | extended reference
tpch.lineitem.l_suppkey -> tpch.supplier.s_suppkey | extended reference
tpch.nation.n_regionkey -> tpch.region.r_regionkey | extended reference
tpch.orders | convert types
tpch.orders.o_custkey -> tpch.customer.c_custkey | embed
tpch.partsupp: tpch.part | array of references
tpch.partsupp: tpch.supplier | array of references
tpch.supplier.s_nationkey -> tpch.nation.n_nationkey | extended reference"
    run_rm analyze "$T/tpch" -q --plan-out "$T/tpch-plan.json"
    expect_eq "tpch: the plan is written, nothing left out (exit 0, nothing on stderr)" "$rc:$(wc -c <"$T/err")" "0:0"
    run_rm run "$T/tpch-plan.json" --from "$T/tpch" --to "$T/tpch-out" -q
    expect_eq "tpch plan: remodel run executes it" "$rc" 0
    # Every order is in its customer, every line in its order (dates typed),
    # the part's suppliers beside it, the nation's name in each customer.
    expect_eq "tpch plan: orders embedded into customers with their lines, dates typed, the join as arrays" \
        "$(python3 -c '
import sys, datetime
sys.path.insert(0, sys.argv[2])
import bson, rmlib
nss, _ = rmlib.read_dir(sys.argv[1])
docs = lambda ns: [bson.decode(d) for d in nss.get(ns, [])]
orders = [o for c in docs("tpch.customer") for o in c.get("orders", [])]
lines = [l for o in orders for l in o.get("lineitem", [])]
print(len(docs("tpch.orders")), len(docs("tpch.lineitem")), len(orders), len(lines),
      all(isinstance(o["o_orderdate"], datetime.datetime) for o in orders),
      all(isinstance(l["l_shipdate"], datetime.datetime) and "l_partkey_p_name" in l for l in lines),
      sorted(len(p["supplier_ids"]) for p in docs("tpch.part"))[0],
      all("c_nationkey_n_name" in c for c in docs("tpch.customer")))' "$T/tpch-out" "$TX")" \
        "0 0 15000 60175 True True 4 True"
    python3 - "$T/tpch-plan.json" "$T/tpch-plain.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["steps"] = [s for s in p["steps"] if "set" not in s]  # typed values differ from the source's
json.dump(p, open(sys.argv[2], "w"))
PY
    run_rm run "$T/tpch-plain.json" --from "$T/tpch" --to "$T/tpch-plain-out" -q
    if python3 "$TX/accounted.py" "$T/tpch" "$T/tpch-plain-out" >"$T/acc" 2>&1; then
        pass "tpch plan (types kept): every source document is in the output"
    else
        fail "tpch plan (types kept): every source document is in the output" "$(head -5 "$T/acc")"
    fi
fi

# --- the shop ---------------------------------------------------------------
python3 "$TX/relational_shop.py" "$T/shop"
json "$T/shop"
expect_eq "shop: a billing address equal to the customer's is same values, not a reference" \
    "$(q 'print([s["what"] for s in r["sameValues"]]); print([x["field"] for x in r["relationships"] if x["field"] == "billingAddress"])')" \
    "['shop.orders.billingAddress = shop.customers.address']
[]"
expect_eq "shop: order lines owned by their order, the item referenced (its name copied), never embedded into items" \
    "$(q 'print([o["what"] for o in r["ownership"] if "owned" in o["what"]]); print(sorted((x["relationship"], x["pattern"]) for x in r["recommendations"] if x["relationship"].startswith("shop.orderLines")))')" \
    "['shop.orderLines owned by shop.orders (orderId)']
[('shop.orderLines.itemId -> shop.items._id', 'extended reference'), ('shop.orderLines.orderId -> shop.orders._id', 'embed')]"
expect_eq "shop: the ownership's one line of why" \
    "$(q 'print([o["why"].split(";")[0] for o in r["ownership"] if "owned" in o["what"]])')" \
    "[\"shop.orderLines is owned by shop.orders (its name is the owner's: p99 14 children per parent, 0 of 400 parents with none)\"]"
expect_eq "shop: the join table is a many-to-many, arrays of references on both sides, its rows embedded nowhere" \
    "$(q 'print([j["what"] for j in r["joins"]]); print(sorted((x["relationship"], x["pattern"]) for x in r["recommendations"] if "playlist" in x["relationship"]))')" \
    "['shop.playlistItems joins shop.playlists and shop.items: many-to-many']
[('shop.playlistItems: shop.items', 'array of references'), ('shop.playlistItems: shop.playlists', 'array of references')]"
expect_eq "shop: the managers are a hierarchy (depth 2, one root), the tree pattern named" \
    "$(q 'print([h["why"].split(";")[0] for h in r["hierarchies"]]); print([x["pattern"] for x in r["recommendations"] if "reportsTo" in x["relationship"]])')" \
    "['depth 2, 1 root(s), 0 in circles']
['tree']"
expect_eq "shop: supportRepId fits employees as well as the small lookups: a tie, possible, not acted on" \
    "$(q 'x = [x for x in r["relationships"] if x["field"] == "supportRepId"][0]; print(x["level"], "shop.employees._id" in x["tiedWith"] + x["to"]); print(len(r["ties"]), [y for y in r["recommendations"] if "supportRepId" in y["relationship"]])')" \
    "possible True
1 []"
expect_eq "shop: the tie's --hints line" \
    "$(q 'print("settle it with --hints {\"references\": {\"shop.customers.supportRepId\":" in r["ties"][0]["why"])')" "True"
echo '{"references": {"shop.customers.supportRepId": "shop.employees._id"}}' >"$T/rep.json"
json "$T/shop" --hints "$T/rep.json"
expect_eq "shop: the hints settle the tie (employees, confident, no tie left)" \
    "$(q 'print([(x["to"], x["level"]) for x in r["relationships"] if x["field"] == "supportRepId"], r["ties"])')" \
    "[('shop.employees', 'confident')] []"
json "$T/shop"
expect_eq "shop: 1 to 14 lines an order is within a couple of hundred: embedded, not a subset" \
    "$(q 'x = [x for x in r["relationships"] if x["field"] == "orderId"][0]; print(x["childrenPerParent"]["max"], [y["pattern"] for y in r["recommendations"] if y["relationship"].startswith("shop.orderLines.orderId")])')" \
    "14 ['embed']"
expect_eq "shop: the types the import got wrong, per field with counts" \
    "$(q 'print("\n".join("%s.%s %s %d/%d" % (t["ns"], t["field"], t["what"], t["matching"], t["of"]) for t in r["types"]))')" \
"shop.customers.since dates held as strings 60/60
shop.customers.vip yes/no flags held as strings 60/60
shop.employees.hired dates held as strings 8/8
shop.employees.active booleans held as 0/1 8/8
shop.orders.orderedAt dates held as strings 400/400
shop.orders.total decimal numbers held as strings 400/400"
run_rm analyze "$T/shop"
expect_eq "shop: the text report shows each kind in its own section" \
    "$(grep -E '^(OWNERSHIP|JOIN COLLECTIONS|HIERARCHIES|TIES|SAME VALUES|TYPES)$' "$T/out" | paste -sd,)" \
    "OWNERSHIP,JOIN COLLECTIONS,HIERARCHIES,TIES,SAME VALUES,TYPES"
run_rm analyze "$T/shop" -q --plan-out "$T/shop-plan.json"
expect_eq "shop: the plan's steps in order: types, copies, arrays, then the owners' embeds" \
    "$(python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["steps"]:
    for op, b in s.items():
        print(op, b.get("from", "-"), "->", b.get("into", b.get("in")), ",".join(b.get("fields", {})))' "$T/shop-plan.json")" \
"set - -> shop.customers since,vip
set - -> shop.employees hired,active
set - -> shop.orders orderedAt,total
denormalize shop.categories -> shop.items category_name
denormalize shop.mediaTypes -> shop.items mediaType_name
denormalize shop.items -> shop.orderLines item_name
summarize shop.playlistItems -> shop.playlists items_ids
summarize shop.playlistItems -> shop.items playlists_ids
embed shop.orderLines -> shop.orders 
embed shop.orders -> shop.customers "
run_rm run "$T/shop-plan.json" --from "$T/shop" --to "$T/shop-out" -q
expect_eq "shop plan: runs, converting the types (dates, a decimal, flags) and embedding the lines" \
    "$rc|$(python3 -c '
import sys, datetime
sys.path.insert(0, sys.argv[2])
import bson, rmlib
nss, _ = rmlib.read_dir(sys.argv[1])
c = [bson.decode(d) for d in nss["shop.customers"]]
e = [bson.decode(d) for d in nss["shop.employees"]]
o = [x for y in c for x in y.get("orders", [])]
print(type(c[0]["since"]).__name__, sorted(set(y["vip"] for y in c)), sorted(set(y["active"] for y in e)),
      type(o[0]["orderedAt"]).__name__, type(o[0]["total"]).__name__, len(o), sum(len(x["orderLines"]) for x in o))' "$T/shop-out" "$TX")" \
    "0|datetime [False, True] [False, True] datetime Decimal128 400 3003"

# --- issue 52, trip 2: a step left out is a note, said plainly ----------------
python3 "$ROOT/tests/transforms/mkdump.py" "$T/over" '{"lib.books": [{"_id": "B1", "title": "a", "reviews": 2}, {"_id": "B2", "title": "b", "reviews": 1}, {"_id": "B3", "title": "c", "reviews": 0}],
 "lib.reviews": [{"_id": 1, "bookId": "B1"}, {"_id": 2, "bookId": "B1"}, {"_id": 3, "bookId": "B2"}, {"_id": 4, "bookId": "B2"}]}'
run_rm analyze "$T/over" -q --plan-out "$T/over-plan.json"
# (Its one recommendation left out, nothing is left: no plan written,
# exit 4, said on a line of its own after the note.)
expect_eq "left out: one line for the one recommendation left out, then no plan: nothing to do (exit 4)" \
    "$rc:$(wc -l <"$T/err"):$(grep -c 'analyze recommends no step' "$T/err"):$([ -e "$T/over-plan.json" ] && echo written || echo none)" "4:2:1:none"
expect_eq "left out: the line names the recommendation, what its step did and why, once" \
    "$(head -n 1 "$T/err")" \
    "remodel: analyze: $T/over-plan.json: left out of the plan: the embed of lib.reviews into lib.books, recommended for lib.reviews.bookId -> lib.books._id: it would write over the field \"reviews\" that lib.books's documents already have; the recommendation stays in the report"
expect_eq "left out: no circular words (a step left out never named as \"the ... step left out\")" \
    "$(grep -c 'step left out' "$T/err")" 0

# --- types that are no mistake ------------------------------------------------
# A version "4.4" is no decimal, a 0/1 id is a key, a zip code's digits are
# a code; a date string, though, is one, wherever it is.
python3 "$ROOT/tests/transforms/mkdump.py" "$T/notypes" '{"app.meta": [{"_id": 1, "version": "4.4", "stmtId": 0, "zip": "75011", "at": "2020-01-02"}, {"_id": 2, "version": "4.10", "stmtId": 1, "zip": "10115", "at": "2021-03-04"}]}'
json "$T/notypes"
expect_eq "types: a version, a 0/1 id and a zip code left as they are; the date string reported" \
    "$(q 'print([(t["field"], t["what"]) for t in r["types"]])')" "[('at', 'dates held as strings')]"
