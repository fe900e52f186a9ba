#!/usr/bin/env bash
# The indexes a result gets online are the plan's mapping of its source's
# (issue 63, item 1), the computation `remodel run` writes in its
# metadata: on FerretDB and mongo-java-server, a plan that renames
# indexed fields (a unique sparse index; on java also a partial one
# whose filter names a renamed field), unsets an indexed field, embeds a
# child with a unique secondary index and extracts an array with an
# index on one of its fields (the children's collection gets it). After `online run` and
# `online finalize`, listIndexes of the switched-in collection equals the
# indexes of the offline run's metadata for the same data and plan,
# options and all; run names each change and counts them, status lists
# them; after `online rollback` (the
# originals swapped back) the sources' indexes are as they were, and
# after the second (the results dropped) no made index remains.
#   REMODEL=build/remodel bash tests/cli/test_online_index_follow.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "index follow: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/f.json" <<'PEOF'
{"remodel": 1, "steps": [
  {"rename": {"in": "ixf.people", "fields": {"email": "mail", "active": "live"}}},
  {"unset": {"in": "ixf.people", "fields": ["phone"]}},
  {"embed": {"from": "ixf.orders", "into": "ixf.people", "localField": "_id",
             "foreignField": "owner", "as": "orders"}},
  {"extract": {"from": "ixf.people", "path": "addrs", "to": "ixf.addrs",
               "style": "parentRef", "parentField": "person_id"}}]}
PEOF

# load KIND: the sources, their indexes (partial ones where the server
# builds them: not FerretDB 1.x).
load() {
    py 'from bson.son import SON
d = c.ixf
d.people.insert_many([dict({"_id": i, "name": "p%d" % i, "phone": "555-%04d" % i, "active": i % 2 == 0,
                            "addrs": [{"city": "c%d" % (i % 7), "zip": i * 10 + k} for k in range(i % 3)]},
                           **({"email": "p%d@x.org" % i} if i % 5 else {})) for i in range(1, 41)])
d.orders.insert_many([{"_id": 100 + i, "owner": 1 + i % 40, "sku": "s%03d" % i} for i in range(120)])
people = [{"key": {"email": 1}, "name": "email_1", "unique": True, "sparse": True},
          {"key": {"phone": 1}, "name": "phone_1"},
          {"key": {"name": 1, "phone": -1}, "name": "name_phone"},
          {"key": {"addrs.city": 1}, "name": "addrs.city_1"}]
if sys.argv[2] == "java":
    people += [{"key": {"email": -1}, "name": "email_-1",
                "partialFilterExpression": {"active": True}}]
orders = [{"key": {"owner": 1}, "name": "owner_1"},
          {"key": {"sku": 1}, "name": "sku_1", "unique": True}]
d.command(SON([("createIndexes", "people"), ("indexes", people)]))
d.command(SON([("createIndexes", "orders"), ("indexes", orders)]))' "$1"
}
# norm: one index a line (from JSON specs on stdin, a list), sorted, without
# version and namespace, whole numbers as integers.
NORM='def n(v):
    if isinstance(v, dict): return {k: n(x) for k, x in v.items()}
    if isinstance(v, float) and v == int(v): return int(v)
    return v
def lines(specs):
    return sorted(json.dumps(n({k: v for k, v in dict(s).items() if k not in ("v", "ns")}),
                             sort_keys=True, default=str) for s in specs)
'
listed() { py "$NORM"'
for l in lines(c.ixf[sys.argv[2]].list_indexes()): print(l)' "$1"; }
offline() {
    python3 -c "import sys, json
from bson import json_util
$NORM"'
m = json_util.loads(open(sys.argv[1]).read())
for l in lines(m["indexes"]): print(l)' "$1"
}

for kind in $(online_kinds); do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    load "$kind" || { fail "$kind: the sources and their indexes"; continue; }
    listed people >"$T/before"
    rm -rf "$T/off"
    "$MONGODUMP" --uri "$uri" --db ixf --archive="$T/src.archive" --quiet &&
        "$REMODEL" run -q --force "$T/plans/f.json" --from "$T/src.archive" --to "$T/off" 2>"$T/offerr" ||
        { fail "$kind: the offline run" "$(cat "$T/offerr")"; continue; }
    offline "$T/off/ixf/people.metadata.json" >"$T/want"
    offline "$T/off/ixf/addrs.metadata.json" >"$T/want-addrs"
    A=$(pid f)

    online run f
    expect_eq "$kind: run exit" "$rc" 0
    expect_message "$kind: run says the plan's mapping and makes it" \
        'run: the plan'"'"'s indexes: ixf.people: index "email_1": now "mail_1", key {"email":1} -> {"mail":1}, every option kept (step 1, rename)' \
        'run: the plan'"'"'s indexes: ixf.people: index "phone_1"' \
        'run: the plan'"'"'s indexes: ixf.people: index "orders.sku_1": new' \
        "remodel: run: made index mail_1 of ixf.people on ixf.people_remodel_${A}_" \
        "remodel: run: made index orders.sku_1 of ixf.people on ixf.people_remodel_${A}_"
    expect_message "$kind: run's summary counts them" \
        "remodel: run: the sources' indexes, as the plan maps them, are on the results ("
    online status f
    if grep -qF "index: ixf.people's result has orders.sku_1 { \"orders.sku\" : 1 }" "$T/out" &&
       grep -qF "index: ixf.people's result has mail_1 { \"mail\" : 1 }" "$T/out" && ! grep -q phone_1 "$T/out"; then
        pass "$kind: status lists the results' indexes"
    else fail "$kind: status lists the results' indexes" "$(grep index: "$T/out")"; fi
    if grep -q "is not carried to the new design" "$T/err"; then
        fail "$kind: run carries every index the plan keeps" "$(grep "not carried" "$T/err")"
    else pass "$kind: run carries every index the plan keeps"; fi

    online finalize f --writes-stopped
    expect_eq "$kind: finalize exit" "$rc" 0
    listed people >"$T/got"
    if cmp -s "$T/want" "$T/got" && grep -q '"orders.sku": 1' "$T/got" && grep -q '"mail": 1' "$T/got" &&
       ! grep -q phone "$T/got"; then
        pass "$kind: the switched-in indexes are the offline run's metadata's ($(wc -l <"$T/got"))"
    else
        fail "$kind: the switched-in indexes are the offline run's metadata's" "$(diff "$T/want" "$T/got")"
    fi
    listed addrs >"$T/got-addrs"
    if cmp -s "$T/want-addrs" "$T/got-addrs" && grep -q '"city": 1' "$T/got-addrs"; then
        pass "$kind: the extracted children's indexes are the offline run's ($(wc -l <"$T/got-addrs"))"
    else
        fail "$kind: the extracted children's indexes are the offline run's" "$(diff "$T/want-addrs" "$T/got-addrs")"
    fi
    if [ "$kind" == java ]; then
        grep -qF '"partialFilterExpression": {"live": true}' "$T/got" &&
            pass "$kind: the partial filter names the renamed field" ||
            fail "$kind: the partial filter names the renamed field" "$(cat "$T/got")"
    fi
    grep '"orders.sku"' "$T/got" | grep -q '"unique"' &&
        fail "$kind: the embedded unique index is not unique on the parent" "$(cat "$T/got")" ||
        pass "$kind: the embedded unique index is not unique on the parent"

    online rollback f
    expect_eq "$kind: rollback exit" "$rc" 0
    listed people >"$T/after"
    if cmp -s "$T/before" "$T/after"; then pass "$kind: after rollback the source's indexes are as before ($(wc -l <"$T/after"))"
    else fail "$kind: after rollback the source's indexes are as before" "$(diff "$T/before" "$T/after")"; fi
    online rollback f
    expect_eq "$kind: the second rollback (the results dropped) exit" "$rc" 0
    left=$(py 'print([n for n in c.ixf.list_collection_names() if "_remodel_" in n])')
    expect_eq "$kind: after rollback no result (and none of its indexes) remains" "$left" "[]"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
