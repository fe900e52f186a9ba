#!/usr/bin/env bash
# Filters, matches and expressions online (issue 48, items 5 and 2): on
# mongo-java-server (change streams) alone (online_kind: the logic is
# remodel's own; test_online_changelog follows both servers' logs;
# REMODEL_TEST_BOTH=1 runs this suite on FerretDB too),
# with its change log, four plans, each on a database of its own:
#   set   a filter and three expressions ($concat, $multiply, $toUpper);
#   embed a filter over the parents, a match over the children and a
#         computed field in its project;
#   den   a denormalize with a filter, a match and a computed field;
#   sum   a summarize with a filter, a match and an expression
#         accumulator ({$sum: {$multiply: [qty, price]}});
# `online run`; then the application's writes: (a) a document moved into
# the filter, (b) one moved out of it, (c) a value an expression (or a
# sort) reads changed, (d) a joined document changed so that it enters or
# leaves the match, (e) inserts and deletes; then `online sync`, and after
# a second round of the same writes `online follow` for a round: after
# each, the side-by-side results are `remodel run`'s over a mongodump of
# the sources as they are then (byte for byte), and `online verify`
# passes. `status` counts the documents each pass changed. Then, the set
# and embed plans finalized and the results written: `rollback` refuses
# (the writes would be lost), `rollback --carry-writes` refuses naming the
# step and why (no inverse); --discard-writes-after-switch rolls back. And
# a plan reading $$NOW, killed (kill -9) part way and resumed: every
# document holds one and the same $$NOW, the one recorded with the run.
# FILTERS_KINDS: the servers (default "ferretdb java").
#   REMODEL=build/remodel bash tests/cli/test_online_filters.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "filters online: external deployments are not started here (skipped)"; exit 0; }
ONLINE=$(dirname "$REMODEL")/remodel-online
trap '[ "$BASHPID" != "$$" ] || { kill $(jobs -p) 2>/dev/null; for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"

cat >"$T/plans/set.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "fset.people", "filter": {"kind": {"$in": ["a", "b"]}},
           "fields": {"full": {"$concat": ["$first", " ", "$last"]},
                      "total": {"$multiply": ["$qty", "$price"]},
                      "tag": {"$toUpper": "$kind"}}}}]}
EOF
cat >"$T/plans/embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "femb.tasks", "into": "femb.people", "localField": "_id",
             "foreignField": "owner", "as": "open",
             "project": {"title": 1, "pri": 1,
                         "label": {"$concat": ["$title", "/", {"$toString": "$pri"}]}},
             "sort": {"pri": 1}, "filter": {"active": true}, "match": {"done": false}}}]}
EOF
cat >"$T/plans/den.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "fden.orders", "from": "fden.customers", "localField": "cust",
                   "foreignField": "code", "fields": {"cust_name": "name", "cust_tag": {"$toUpper": "$name"}},
                   "onMissing": "null",
                   "filter": {"status": "open"},
                   "match": {"$or": [{"active": true}, {"$expr": {"$eq": ["$vip", true]}}]}}}]}
EOF
cat >"$T/plans/sum.json" <<'EOF'
{"remodel": 1, "steps": [
  {"summarize": {"into": "fsum.customers", "from": "fsum.lines", "localField": "code",
                 "foreignField": "cust", "filter": {"active": true},
                 "match": {"status": {"$ne": "cancelled"}},
                 "fields": {"spent": {"$sum": {"$multiply": ["$qty", "$price"]}},
                            "n": {"$count": {}}}}}]}
EOF
cat >"$T/plans/now.json" <<'EOF'
{"remodel": 1, "steps": [
  {"set": {"in": "fnow.items", "filter": {"odd": true},
           "fields": {"at": "$$NOW", "when": {"$dateToString": {"date": "$$NOW"}}}}}]}
EOF
sed 's/"fset\./"fsip./' "$T/plans/set.json" >"$T/plans/setip.json"
PLANS="set:fset:fset.people=people_remodel_@_1
setip:fsip:fsip.people=people
embed:femb:femb.people=people_remodel_@_1 femb.tasks=tasks_remodel_@_1
den:fden:fden.orders=orders_remodel_@_1
sum:fsum:fsum.customers=customers_remodel_@_1"

# make_data: the four databases.
make_data() {
    py '
random.seed(48)
for s in (c.fset.people, c.fsip.people):
    s.insert_many([{"_id": i, "first": "F%d" % i, "last": "L%d" % i, "kind": "abc"[i % 3],
                    "qty": i % 7, "price": 1.5 * (i % 5)} for i in range(60)])
e = c.femb
e.people.insert_many([{"_id": i, "name": "p%d" % i, "active": i % 3 != 0} for i in range(40)])
e.tasks.insert_many([{"_id": 100 + t, "owner": random.randrange(40), "done": t % 4 == 0,
                      "pri": random.randrange(5), "title": "t%d" % t} for t in range(200)])
e.tasks.create_index("owner")
d = c.fden
d.customers.insert_many([{"_id": i, "code": "C%d" % i, "name": "cust %d" % i,
                          "active": i % 4 != 0} for i in range(30)])
d.orders.insert_many([{"_id": 1000 + o, "cust": "C%d" % random.randrange(32),
                       "status": "open" if o % 3 else "closed", "amount": o % 50} for o in range(150)])
d.customers.create_index("code")
m = c.fsum
m.customers.insert_many([{"_id": i, "code": "K%d" % i, "active": i % 5 != 0} for i in range(30)])
m.lines.insert_many([{"_id": 5000 + l, "cust": "K%d" % random.randrange(30), "qty": l % 6,
                      "price": (l % 9) * 0.25, "status": "cancelled" if l % 5 == 0 else "ok"}
                     for l in range(200)])
m.lines.create_index("cust")'
}

# writes SEED: each kind of write, to each plan's sources.
writes() {
    py '
n = int(sys.argv[2])
random.seed(n)
s, e, d, m = c.fset.people, c.femb, c.fden, c.fsum
def some(coll, q):
    ids = sorted(x["_id"] for x in coll.find(q, {"_id": 1}))
    return random.choice(ids)
# set (side by side and in place): (a) into the filter, (b) out of it,
# (c) a value an expression reads, (e)
for s in (c.fset.people, c.fsip.people):
    s.update_one({"_id": some(s, {"kind": "c"})}, {"$set": {"kind": "a"}})
    s.update_one({"_id": some(s, {"kind": "b"})}, {"$set": {"kind": "c"}})
    s.update_one({"_id": some(s, {"kind": "a"})}, {"$set": {"qty": 100 + n}})
    s.update_one({"_id": some(s, {"kind": "b"})}, {"$set": {"last": "renamed%d" % n}})
    s.insert_one({"_id": 1000 + n, "first": "N", "last": "%d" % n, "kind": "b", "qty": 2, "price": 3})
    s.insert_one({"_id": 2000 + n, "first": "M", "last": "%d" % n, "kind": "c", "qty": 2, "price": 3})
    s.delete_one({"_id": some(s, {"kind": "a", "_id": {"$lt": 1000}})})
# the parents and customers moved are ones with children the match takes
def holders(coll, field, q):
    return {x[field] for x in coll.find(q, {field: 1})}
# embed: (a) a person made active, (b) one made inactive, (c) a task.s pri
# (the sort) changed, (d) tasks done and undone, moved; (e)
has = list(holders(e.tasks, "owner", {"done": False}))
e.people.update_one({"_id": some(e.people, {"active": False, "_id": {"$in": has}})}, {"$set": {"active": True}})
e.people.update_one({"_id": some(e.people, {"active": True, "_id": {"$in": has}})}, {"$set": {"active": False}})
e.tasks.update_one({"_id": some(e.tasks, {"done": False})}, {"$set": {"pri": 9}})
e.tasks.update_one({"_id": some(e.tasks, {"done": False})}, {"$set": {"title": "retitled %d" % n}})
e.tasks.update_one({"_id": some(e.tasks, {"done": False})}, {"$set": {"done": True}})
e.tasks.update_one({"_id": some(e.tasks, {"done": True})}, {"$set": {"done": False}})
e.tasks.update_one({"_id": some(e.tasks, {"done": False})}, {"$set": {"owner": random.randrange(40)}})
e.tasks.insert_one({"_id": 1000 + n, "owner": random.randrange(40), "done": False, "pri": 1, "title": "new"})
e.tasks.insert_one({"_id": 2000 + n, "owner": random.randrange(40), "done": True, "pri": 1, "title": "new done"})
e.tasks.delete_one({"_id": some(e.tasks, {"done": False, "_id": {"$lt": 1000}})})
e.people.insert_one({"_id": 100 + n, "name": "new %d" % n, "active": True})
e.tasks.insert_one({"_id": 3000 + n, "owner": 100 + n, "done": False, "pri": 0, "title": "for new"})
e.people.delete_one({"_id": some(e.people, {"active": True, "_id": {"$lt": 40}})})
# denormalize: (a) an order opened, (b) one closed, (c) a customer renamed,
# (d) customers made active and inactive, (e)
d.orders.update_one({"_id": some(d.orders, {"status": "closed"})}, {"$set": {"status": "open"}})
d.orders.update_one({"_id": some(d.orders, {"status": "open"})}, {"$set": {"status": "closed"}})
has = list(holders(d.orders, "cust", {"status": "open"}))
d.customers.update_one({"_id": some(d.customers, {"active": True, "code": {"$in": has}})}, {"$set": {"name": "renamed %d" % n}})
d.customers.update_one({"_id": some(d.customers, {"active": False, "code": {"$in": has}})}, {"$set": {"active": True}})
d.customers.update_one({"_id": some(d.customers, {"active": True, "code": {"$in": has}})}, {"$set": {"active": False}})
# (d) through a field only the $expr of the match reads
d.customers.update_one({"_id": some(d.customers, {"active": False, "vip": {"$exists": False}, "code": {"$in": has}})}, {"$set": {"vip": True}})
d.orders.insert_one({"_id": 5000 + n, "cust": "C%d" % random.randrange(30), "status": "open", "amount": 1})
d.orders.delete_one({"_id": some(d.orders, {"status": "open", "_id": {"$lt": 5000}})})
d.customers.delete_one({"_id": some(d.customers, {"active": True})})
d.customers.insert_one({"_id": 100 + n, "code": "C%d" % (30 + n % 2), "name": "late %d" % n, "active": True})
# summarize: (a) a customer made active, (b) one inactive, (c) a line.s
# qty, (d) lines cancelled and restored, moved; (e)
has = list(holders(m.lines, "cust", {"status": "ok"}))
m.customers.update_one({"_id": some(m.customers, {"active": False, "code": {"$in": has}})}, {"$set": {"active": True}})
m.customers.update_one({"_id": some(m.customers, {"active": True, "code": {"$in": has}})}, {"$set": {"active": False}})
m.lines.update_one({"_id": some(m.lines, {"status": "ok"})}, {"$set": {"qty": 50 + n}})
m.lines.update_one({"_id": some(m.lines, {"status": "ok"})}, {"$set": {"status": "cancelled"}})
m.lines.update_one({"_id": some(m.lines, {"status": "cancelled"})}, {"$set": {"status": "ok"}})
m.lines.update_one({"_id": some(m.lines, {})}, {"$set": {"cust": "K%d" % random.randrange(30)}})
m.lines.insert_one({"_id": 9000 + n, "cust": "K%d" % random.randrange(30), "qty": 3, "price": 2.5, "status": "ok"})
m.lines.delete_one({"_id": some(m.lines, {"status": "ok"})})
m.customers.insert_one({"_id": 100 + n, "code": "K%d" % (100 + n), "active": True})
m.lines.insert_one({"_id": 9500 + n, "cust": "K%d" % (100 + n), "qty": 1, "price": 4, "status": "ok"})
m.customers.delete_one({"_id": some(m.customers, {"active": True, "_id": {"$lt": 100}})})' "$1"
}

# same_all TAG: for each plan, remodel run over a dump of its database as
# it is now, the side-by-side results that, and verify exit 0.
same_all() {
    local line name db pairs id
    while read -r line; do
        name=${line%%:*} db=${line#*:}; db=${db%%:*}
        id=$(pid "$name")
        pairs=${line#*:*:}
        rm -f "$T/$name.archive"
        offline_run "$name" "$db" || fail "$kind: $1: $name: the offline reference"
        online_same "$kind: $1: $name: the results are remodel run's on the sources as they are" \
            "$T/$name.archive" ${pairs//@/$id}
        online verify "$name"
        expect_eq "$kind: $1: $name: verify finds every result as the sources make it" \
            "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
    done <<<"$PLANS"
}

for kind in ${FILTERS_KINDS:-$(online_kind java)}; do
    PEERS_OPLOG_BYTES=67108864 online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    make_data
    for p in set setip embed den sum; do
        ip=; [ $p == setip ] && ip=--in-place
        online run "$p" --batch-size 7 $ip -q
        expect_eq "$kind: $p: online run (exit 0, nothing said)" "$rc:$(cat "$T/err")" "0:"
    done
    same_all "after the run"

    # ---- sync from the change log ----
    writes 1
    for p in set setip embed den sum; do
        online sync "$p"
        expect_eq "$kind: $p: sync follows the log (exit 0, no step rescanned)" \
            "$rc:$(grep -c 'rescanned in full' "$T/err"):$(grep -c 'change log: [1-9]' "$T/err")" "0:0:1"
    done
    same_all "after writes and a sync"

    # ---- follow, a round ----
    writes 2
    for p in set setip embed den sum; do
        "$REMODEL" online follow "$T/plans/$p.json" --uri "$uri" --pause 200ms 2>"$T/follow-$p.err" &
        echo $! >"$T/follow-$p.pid"
    done
    for p in set setip embed den sum; do
        for ((i = 1, iend = SECONDS + 120; SECONDS < iend; i++)); do grep -q 'change log: [1-9]' "$T/follow-$p.err" && break; sleep 0.2; done
        fp=$(cat "$T/follow-$p.pid")
        kill -TERM "$fp"; wait "$fp"; frc=$?
        expect_eq "$kind: $p: follow: a round from the log (none rescanned), TERM stops it (exit 0)" \
            "$frc:$(grep -c 'change log: [1-9]' "$T/follow-$p.err" | awk '{print ($1 > 0)}'):$(grep -c 'rescanned in full' "$T/follow-$p.err")" "0:1:0"
    done
    same_all "after more writes and a round of follow"

    # ---- status: in place, the documents a pass changed and left ----
    # (the run's checkpoint: the documents its filter took then, 40 of 60)
    "$REMODEL" online status "$T/plans/setip.json" --uri "$uri" >"$T/status" 2>&1
    online status set
    expect_eq "$kind: setip: status says how many documents the step changed and left as they were (side by side: not said)" \
        "$(grep -c '^step 1 (set) fsip.people: 40 changed, 20 unchanged$' "$T/status"):$(grep -c 'changed, ' "$T/out")" "1:0"
    "$REMODEL" online status "$T/plans/setip.json" --uri "$uri" --json >"$T/status.json" 2>&1
    expect_eq "$kind: setip: status --json: the pass's changed and unchanged" \
        "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([(p["changed"], p["unchanged"]) for p in d["partitions"] if "changed" in p])' "$T/status.json")" "[(40, 20)]"

    # ---- rollback after the switch and the application's writes ----
    for p in "embed:femb:people:step 1 (embed): a filter or match has no inverse"; do
        name=${p%%:*} rest=${p#*:}; db=${rest%%:*} rest=${rest#*:}; coll=${rest%%:*} why=${rest#*:}
        online finalize "$name" --writes-stopped -q
        expect_eq "$kind: $name: finalized (exit 0)" "$rc:$(cat "$T/err")" "0:"
        py 'c[sys.argv[2]][sys.argv[3]].update_one({}, {"$set": {"app": 1}})' "$db" "$coll"
        online rollback "$name"
        expect_eq "$kind: $name: rollback after the application wrote the results: refused (exit 2), nothing renamed" \
            "$rc:$(grep -c 'a rollback would lose those writes' "$T/err"):$(py 'print(sys.argv[2] in c[sys.argv[3]].list_collection_names())' "${coll}_remodel_$(pid "$name")_backup" "$db")" "2:1:True"
        online rollback "$name" --carry-writes
        expect_eq "$kind: $name: rollback --carry-writes: refused (exit 2), naming the step and why, nothing renamed" \
            "$rc:$(grep -c -F "$why" "$T/err"):$(py 'print(sys.argv[2] in c[sys.argv[3]].list_collection_names())' "${coll}_remodel_$(pid "$name")_backup" "$db")" "2:1:True"
        online rollback "$name" --discard-writes-after-switch -q &&
            online rollback "$name" --discard-writes-after-switch -q
        expect_eq "$kind: $name: ... --discard-writes-after-switch rolls back (exit 0)" "$rc" 0
    done

    # A filtered set of fields no person had: its inverse removes them
    # from every document (issue 65), the application's write kept.
    online finalize set --writes-stopped -q
    py 'c.fset.people.update_one({}, {"$set": {"app": 1}})'
    online rollback set --carry-writes
    expect_eq "$kind: set: rollback --carry-writes (exit 0): the set's fields gone, the application's write kept" \
        "$rc:$(py 'p = c.fset.people
print(p.count_documents({"$or": [{"full": {"$exists": True}}, {"total": {"$exists": True}}, {"tag": {"$exists": True}}]}), p.count_documents({"app": 1}))')" "0:0 1"
    online rollback set -q
    expect_eq "$kind: set: ... rollback again drops the results (exit 0)" \
        "$rc:$(py 'print(any("_remodel_" in n for n in c.fset.list_collection_names()))')" "0:False"

    # ---- $$NOW: one value for the whole run, across a kill -9 ----
    py 'c.fnow.items.insert_many([{"_id": i, "odd": i % 2 == 1} for i in range(400)])'
    "$ONLINE" run "$T/plans/now.json" --uri "$uri" --batch-size 5 --pause 30ms -q 2>"$T/now.err" &
    np=$!
    tgt=items_remodel_$(pid now)_1
    for ((i = 1, iend = SECONDS + 120; SECONDS < iend; i++)); do
        [ "$(py 'print(c.fnow[sys.argv[2]].count_documents({}))' "$tgt" 2>/dev/null)" -gt 20 ] 2>/dev/null && break
        sleep 0.1
    done
    kill -KILL $np; wait $np 2>/dev/null
    part=$(py 'print(c.fnow[sys.argv[2]].count_documents({}))' "$tgt")
    sleep 1.1 # a resumed run's own clock is later
    online run now -q
    expect_eq "$kind: \$\$NOW: the run killed part way ($part of 400 written), resumed (exit 0)" \
        "$rc:$(cat "$T/err"):$([ "$part" -lt 400 ] && echo partway)" "0::partway"
    expect_eq "$kind: \$\$NOW: every document of the filter holds one and the same \$\$NOW, the others none" \
        "$(py 'r = c.fnow[sys.argv[2]]
ats = {d["at"] for d in r.find({"odd": True})}
print(len(ats), r.count_documents({"odd": True, "when": {"$exists": True}}), r.count_documents({"odd": False, "at": {"$exists": True}}))' "$tgt")" "1 200 0"
    online verify now
    expect_eq "$kind: \$\$NOW: verify recomputes with the recorded \$\$NOW (exit 0)" "$rc" 0
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
