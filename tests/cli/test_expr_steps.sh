#!/usr/bin/env bash
# Expressions in the join and bucket steps (docs/plans.md: embed's
# "project", denormalize's "fields", bucketize's "stats"; the cases of
# each form are tests/transforms/cases/expr_steps.json): the paths a run
# can take give the same bytes (denormalize in one pass, store to store
# and sort-merge under --memory 1K; embed and bucketize in memory and
# sort-merge), and online, on FerretDB and mongo-java-server, one plan per
# step gives the offline documents byte for byte; embed's and
# denormalize's compiled pipelines, run by mongo-java-server
# (--server-side), give them too.
#   REMODEL=build/remodel bash tests/cli/test_expr_steps.sh
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/plans"

python3 "$ROOT/tests/transforms/mkdump.py" "$T/in" '{
  "shop.orders": [{"_id": 1, "product": 7, "who": "ann"}, {"_id": 2, "product": 8, "label": "was"},
                  {"_id": 3, "product": 9}, {"_id": 4}, {"_id": 5, "product": 7}],
  "shop.products": [{"_id": 7, "name": "pen", "code": "ab", "city": "Oslo", "price": 2.5},
                    {"_id": 8, "name": "ink", "code": null, "price": 4}],
  "shop.lines": [{"_id": 10, "order": 1, "code": "ab", "qty": 2, "price": 1.5, "name": "pen"},
                 {"_id": 11, "name": "ink", "order": 1, "qty": 3, "price": 2},
                 {"_id": 12, "order": 2, "code": null, "name": "cap"},
                 {"_id": 13, "order": 99, "name": "orphan"}],
  "iot.r": [{"_id": 1, "m": "a", "t": {"$date": "2026-01-01T00:00:00Z"}, "temp": 10},
            {"_id": 2, "m": "a", "t": {"$date": "2026-01-01T00:10:00Z"}, "temp": 20.5},
            {"_id": 3, "m": "b", "t": {"$date": "2026-01-01T00:20:00Z"}, "temp": 7},
            {"_id": 4, "m": "a", "t": {"$date": "2026-01-01T02:00:00Z"}, "note": "x"}]}' ||
    { fail "the source dump" "mkdump failed"; exit 0; }

cat >"$T/plans/embed.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "shop.lines", "into": "shop.orders", "localField": "_id", "foreignField": "order",
             "as": "lines", "project": {"total": {"$multiply": ["$qty", "$price"]}, "name": 1,
                                        "code": {"$toUpper": {"$ifNull": ["$code", ""]}}, "kind": "line"}}}]}
EOF
cat >"$T/plans/denorm.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "shop.orders", "from": "shop.products", "localField": "product", "onMissing": "null",
                   "fields": {"name": "name", "code": {"$toUpper": {"$ifNull": ["$code", "none"]}},
                              "label": {"$concat": ["$name", " (", {"$ifNull": ["$city", "?"]}, ")"]},
                              "gross": {"$multiply": ["$price", 2]}}}}]}
EOF
cat >"$T/plans/bucket.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.r", "to": "iot.b", "timeField": "t", "metaField": "m", "granularity": "hours",
                 "stats": {"temp": ["min", "max"],
                           "f": {"expr": {"$add": [{"$multiply": ["$temp", 2]}, 32]}, "stats": ["count", "min", "max", "sum", "avg"]}}}}]}
EOF
# The same denormalize after a step that takes no one-pass stage (a
# bucketize of another namespace): the whole plan runs store to store.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
d["steps"].insert(0, b["steps"][0])
json.dump(d, open(sys.argv[3], "w"))' "$T/plans/denorm.json" "$T/plans/bucket.json" "$T/plans/denorm-stored.json"

# show NAME ARCHIVE NS: the namespace's documents as canonical JSON lines.
show() { "$REMODEL" show --canonical "$2" --ns "$3" >"$T/$1" 2>"$T/err" || fail "show $2 $3" "$(cat "$T/err")"; }

for p in embed denorm bucket; do
    run_rm run -q --force "$T/plans/$p.json" --from "$T/in" --to "$T/$p.archive"
    expect_eq "$p: offline run: exit 0, nothing said" "$rc:$(cat "$T/err")" "0:"
    run_rm run -q --force "$T/plans/$p.json" --from "$T/in" --to "$T/$p-small.archive" --memory 1K
    expect_eq "$p: --memory 1K: exit 0" "$rc:$(cat "$T/err")" "0:"
done
run_rm run -q --force "$T/plans/denorm-stored.json" --from "$T/in" --to "$T/denorm-stored.archive"
expect_eq "denorm store to store: exit 0" "$rc:$(cat "$T/err")" "0:"

for pn in "embed shop.orders" "embed shop.lines" "denorm shop.orders" "bucket iot.b" "bucket iot.r"; do
    set -- $pn
    show a "$T/$1.archive" "$2"
    show b "$T/$1-small.archive" "$2"
    expect_eq "$1: $2 under --memory 1K (sort-merge) is the in-memory run's, byte for byte" \
        "$(cmp -s "$T/a" "$T/b" && echo same):$(wc -l <"$T/a" | tr -d ' ')" "same:$(wc -l <"$T/b" | tr -d ' ')"
done
show a "$T/denorm.archive" shop.orders
show b "$T/denorm-stored.archive" shop.orders
expect_eq "denorm: shop.orders in one pass and store to store, byte for byte" \
    "$(cmp -s "$T/a" "$T/b" && echo same)" "same"

# What the offline runs made, against what this file expects of them.
show a "$T/embed.archive" shop.orders
expect_eq "embed: computed fields after the included ones, _id kept" \
    "$(head -n 1 "$T/a")" \
    '{"_id":{"$numberInt":"1"},"product":{"$numberInt":"7"},"who":"ann","lines":[{"_id":{"$numberInt":"10"},"name":"pen","total":{"$numberDouble":"3.0"},"code":"AB","kind":"line"},{"_id":{"$numberInt":"11"},"name":"ink","total":{"$numberInt":"6"},"code":"","kind":"line"}]}'
show a "$T/denorm.archive" shop.orders
expect_eq "denorm: expressions over the matched document; onMissing null for a reference finding nothing" \
    "$(sed -n '1p;3p' "$T/a" | tr '\n' ' ')" \
    '{"_id":{"$numberInt":"1"},"product":{"$numberInt":"7"},"who":"ann","name":"pen","code":"AB","label":"pen (Oslo)","gross":{"$numberDouble":"5.0"}} {"_id":{"$numberInt":"3"},"product":{"$numberInt":"9"},"name":null,"code":null,"label":null,"gross":null} '
show a "$T/bucket.archive" iot.b
expect_eq "bucketize: an expression's statistics beside a field's" \
    "$(head -n 1 "$T/a" | sed 's/.*"stats"://')" \
    '{"temp":{"min":{"$numberInt":"10"},"max":{"$numberDouble":"20.5"}},"f":{"count":{"$numberInt":"2"},"min":{"$numberInt":"52"},"max":{"$numberDouble":"73.0"},"sum":{"$numberDouble":"125.0"},"avg":{"$numberDouble":"62.5"}}}}'

# Online, on both servers: the results read back are the offline ones.
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
for kind in $(online_kinds); do
    online_start "$kind" "$T/$kind" || continue
    "$MONGORESTORE" --uri "$uri" --dir="$T/in" --noIndexRestore --quiet 2>"$T/err" ||
        { fail "$kind: restore" "$(cat "$T/err")"; continue; }
    run_rm online run -q "$T/plans/embed.json" --uri "$uri" --batch-size 2 --create-indexes
    expect_eq "$kind: embed online: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: embed online: the parents and orphans as remodel run made them, byte for byte" \
        "$T/embed.archive" shop.orders=orders_remodel_$(pid embed)_1 shop.lines=lines_remodel_$(pid embed)_1
    run_rm online run -q "$T/plans/denorm.json" --uri "$uri" --batch-size 2
    expect_eq "$kind: denormalize online: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: denormalize online: the orders as remodel run made them, byte for byte" \
        "$T/denorm.archive" shop.orders=orders_remodel_$(pid denorm)_1
    run_rm online run -q "$T/plans/bucket.json" --uri "$uri" --batch-size 2
    expect_eq "$kind: bucketize online: exit 0" "$rc:$(cat "$T/err")" "0:"
    online_same "$kind: bucketize online: the buckets as remodel run made them, byte for byte" \
        "$T/bucket.archive" iot.b=$(target iot b)
    # The compiled pipelines, run by the server ($merge: not on FerretDB 1.x).
    if [ "$kind" != ferretdb ]; then
        for p in embed denorm; do
            cp "$T/plans/$p.json" "$T/plans/$p-server.json"
            run_rm online run -q "$T/plans/$p-server.json" --uri "$uri" --server-side --create-indexes
            expect_eq "$kind: $p --server-side: exit 0, run by the server" \
                "$rc:$(grep -c 'client-side' "$T/err")" "0:0"
            online_same "$kind: $p --server-side: the server's pipelines give remodel run's documents" \
                "$T/$p.archive" shop.orders=orders_remodel_$(pid $p-server)_1
        done
    fi
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
