#!/usr/bin/env bash
# remodel online run fetches a join's partners with only the fields the
# pass reads of them (remodel/passes.h's partner_fields; docs/online.md,
# "Partners, projected"), on FerretDB and on mongo-java-server: the
# partner finds (REMODEL_ONLINE_TRACE) project exactly _id, the join key
# and what the step reads (denormalize's sources, summarize's sort and
# accumulators' paths, an embed's parents for its second pass), whole
# partners where the step takes them whole (an embed's children, $$ROOT);
# and the results are `remodel run`'s on the same documents, byte for
# byte, on partners whose other fields are large and whose read fields
# hold arrays, nested documents, nulls, or nothing.
#   REMODEL=build/remodel bash tests/cli/test_online_partner_fields.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms

mkdir -p "$T/plans"
cat >"$T/plans/pf.json" <<'PLAN'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "pf.orders", "from": "pf.products", "localField": "sku", "foreignField": "sku",
                   "fields": {"pname": "name", "color": "info.color", "widths": "dims.w"}}},
  {"summarize": {"into": "pf.hosts", "from": "pf.logs", "localField": "_id", "foreignField": "host",
                 "sort": {"nested.a": 1},
                 "fields": {"n": {"$count": {}}, "last": {"$max": "$t"},
                            "lv": {"$addToSet": "$$ROOT.lvl"},
                            "top": {"$topN": {"n": 2, "sortBy": {"t": -1},
                                              "output": {"m": "$msg", "b": "$nested.b"}}},
                            "first": {"$first": "$$CURRENT.msg"}}}},
  {"summarize": {"into": "pf.hosts2", "from": "pf.logs", "localField": "_id", "foreignField": "host",
                 "sort": {"t": 1}, "fields": {"n": {"$count": {}}, "f": {"$first": "$$ROOT"}}}},
  {"embed": {"from": "pf.tasks", "into": "pf.people", "localField": "pid", "foreignField": "owner",
             "as": "tasks", "project": {"title": 1}}}]}
PLAN

for kind in $(online_kinds); do
    online_start "$kind" "$T/$kind" || continue
    py '
c.drop_database("pf")
db = c.pf
big = "x" * 2000
products = []
for i in range(40):
    d = {"_id": i}
    if i < 38:
        d["sku"] = "s%d" % (i % 35)
    elif i == 39:
        d["sku"] = None
    if i % 7:
        d["name"] = "P%d" % i
    d["big"] = big
    d["info"] = [{"color": "red"}, 3, {"color": "blue"}] if i % 5 == 0 else {"color": "c%d" % (i % 4), "tags": ["a", i]}
    d["dims"] = [{"w": i}, 7, {"w": i + 1}] if i % 3 else {"w": -i}
    d["price"] = i * 1.5
    products.append(d)
db.products.insert_many(products)
orders = []
for i in range(60):
    d = {"_id": i, "qty": i}
    if i % 10 == 3:
        d["sku"] = ["s1", "s%d" % (i % 35)]
    elif i == 6:
        d["sku"] = None
    elif i != 5:
        d["sku"] = "s%d" % (i % 45)
    orders.append(d)
db.orders.insert_many(orders)
logs = []
for i in range(200):
    d = {"_id": i, "t": (i * 7) % 50, "msg": "m%d" % i, "blob": big}
    if i % 50:
        d["host"] = "h%d" % (i % 23)
    d["lvl"] = ["info", "warn", "err"][i % 3]
    d["nested"] = {"a": i % 4, "b": [i, i + 1]}
    logs.append(d)
db.logs.insert_many(logs)
hosts = [{"_id": "h%d" % i, "dc": i % 3, "blob": big} for i in range(22)]
db.hosts.insert_many(hosts)
db.hosts2.insert_many(hosts)
db.people.insert_many([dict({"_id": i, "name": "n%d" % i, "blob": big, "pets": [i, {"k": i}]},
                            **({"pid": "p%d" % i} if i < 28 else {})) for i in range(30)])
db.tasks.insert_many([{"_id": i, "owner": "p%d" % (i % 33), "title": "t%d" % i, "done": i % 2 == 0,
                       "blob": big} for i in range(120)])
' || { fail "$kind: the sources" "$(cat "$T/err")"; continue; }
    # The reference: remodel run on the same documents.
    "$MONGODUMP" --uri "$uri" --db pf --archive="$T/$kind-src.archive" --quiet
    "$REMODEL" run -q "$T/plans/pf.json" --from "$T/$kind-src.archive" --to "$T/$kind-ref.archive" ||
        fail "$kind: offline run"

    REMODEL_ONLINE_TRACE=1 run_rm online run -q "$T/plans/pf.json" --uri "$uri" --create-indexes \
        --batch-size 3
    expect_eq "$kind: online run of denormalize, summarize (twice), embed: exit 0" \
        "$rc:$(grep -v '^trace: ' "$T/err")" "0:"
    # The projection of each find of partners, by collection: a batch's
    # (by $in) or the pass's once-read (in _id order, in replies of ten
    # batches: batchSize 30; a driving read's is the batch's, 3). From the
    # run's first write of the plan's record on: the preflight's reads come
    # before it (whether any reference finds a partner).
    got=$(python3 - "$T/err" <<'PYEOF'
import re, sys
seen, run = {}, False
for line in open(sys.argv[1]):
    run = run or '"update" : "plans"' in line
    if not run:
        continue
    m = (re.search(r'"find" : "(\w+)", "filter" : \{ "\w+" : \{ "\$in"', line) or
         re.search(r'"find" : "(\w+)", .*"sort" : \{ "_id" : 1 \}, "batchSize" : 30\b', line))
    if not m:
        continue
    p = re.search(r'"projection" : (\{[^}]*\})', line)
    seen.setdefault(m.group(1), set()).add(p.group(1) if p else "whole")
for coll in sorted(seen):
    print(coll + ": " + " / ".join(sorted(seen[coll])))
PYEOF
)
    expect_eq "$kind: each find of partners projects what its pass reads, whole where it embeds or takes \$\$ROOT" \
        "$got" 'logs: whole / { "_id" : 1, "host" : 1, "nested" : 1, "t" : 1, "lvl" : 1, "msg" : 1 }
people: { "_id" : 1, "pid" : 1 }
products: { "_id" : 1, "sku" : 1, "name" : 1, "info" : 1, "dims" : 1 }
tasks: whole'
    id=$(plan_id "$T/plans/pf.json")
    online_same "$kind: with partners projected, every target as remodel run's, byte for byte" \
        "$T/$kind-ref.archive" pf.orders=orders_remodel_${id}_1 pf.hosts=hosts_remodel_${id}_2 \
        pf.hosts2=hosts2_remodel_${id}_3 pf.people=people_remodel_${id}_4 pf.tasks=tasks_remodel_${id}_4
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
