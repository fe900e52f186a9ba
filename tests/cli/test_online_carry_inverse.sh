#!/usr/bin/env bash
# rollback --carry-writes through denormalize's and summarize's inverses
# (issue 49, item 5), on
# mongo-java-server (change streams) alone (online_kind: the logic is
# remodel's own; test_online_changelog follows both servers' logs;
# REMODEL_TEST_BOTH=1 runs this suite on FerretDB too): shop.orders get their customer's name copied
# (denormalize), shop.customers their orders' total and count (summarize),
# fields no document had before the run (the run records that). Finalized,
# then the application writes both: an order changed, one inserted, one
# deleted; a customer renamed, one's total rewritten, one inserted.
# rollback --carry-writes carries them back through both inverses
# composed (the fields removed, the summary's first): the originals are,
# byte for byte, what `remodel run` of the inverse plan (two unsets) makes
# of the results as the application left them. Refused, naming the step
# and the field, nothing renamed: a summary field some customer had
# before the run, and a copied field the application wrote into an
# original order during the run.
# CI_KINDS: the servers (default: online_kind java); CI_DEBUG=1: the
# rollback's messages and what differs, on stderr.
#   REMODEL=build/remodel bash tests/cli/test_online_carry_inverse.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "carry inverse: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cat >"$T/plans/both.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "shop.orders", "from": "shop.customers", "localField": "cust",
                   "fields": {"cust_name": "name"}}},
  {"summarize": {"into": "shop.customers", "from": "shop.orders", "localField": "_id",
                 "foreignField": "cust", "fields": {"total": {"$sum": "$qty"}, "n": {"$sum": 1}}}}]}
EOF
cat >"$T/plans/inverse.json" <<'EOF'
{"remodel": 1, "steps": [
  {"unset": {"in": "shop.customers", "fields": ["total", "n"]}},
  {"unset": {"in": "shop.orders", "fields": ["cust_name"]}}]}
EOF
cat >"$T/plans/sum.json" <<'EOF'
{"remodel": 1, "steps": [
  {"summarize": {"into": "shop.customers", "from": "shop.orders", "localField": "_id",
                 "foreignField": "cust", "fields": {"total": {"$sum": "$qty"}}}}]}
EOF
cat >"$T/plans/den.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "shop.orders", "from": "shop.customers", "localField": "cust",
                   "fields": {"cust_name": "name"}}}]}
EOF

seed() {
    py 'c.shop.drop_collection("orders"); c.shop.drop_collection("customers")
c.shop.customers.insert_many([{"_id": i, "name": "c%d" % i, "tier": i % 3} for i in range(20)])
c.shop.orders.insert_many([{"_id": 100 + i, "cust": i % 20, "qty": i % 7, "note": "o%d" % i} for i in range(120)])'
}
# The collections of shop, sorted (no stage or result left behind).
colls() { py 'print(sorted(c.shop.list_collection_names()))'; }
exists() { py 'print(sys.argv[2] in c.shop.list_collection_names())' "$1"; }

for kind in ${CI_KINDS:-$(online_kind java)}; do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    seed
    online run both -q
    online finalize both --writes-stopped -q
    expect_eq "$kind: denormalize then summarize finalized (exit 0)" "$rc:$(cat "$T/err")" "0:"
    # the application's writes to the new design, after the switch
    py 'o, k = c.shop.orders, c.shop.customers
o.update_one({"_id": 105}, {"$set": {"qty": 40}})
o.insert_one({"_id": 900, "cust": 3, "qty": 2, "note": "new", "cust_name": "c3"})
o.delete_one({"_id": 110})
k.update_one({"_id": 4}, {"$set": {"name": "renamed"}})
k.update_one({"_id": 5}, {"$set": {"total": 1000}})
k.insert_one({"_id": 50, "name": "c50", "tier": 1, "total": 0, "n": 0})'
    # what the offline engine makes of them through the inverse
    "$MONGODUMP" --uri "$uri" --db shop --archive="$T/shop.archive" --quiet
    "$REMODEL" run -q --force "$T/plans/inverse.json" --from "$T/shop.archive" --to "$T/inv" 2>"$T/offline.err"
    online rollback both --carry-writes
    [ -n "${CI_DEBUG:-}" ] && cat "$T/err" >&2
    expect_eq "$kind: --carry-writes through summarize's and denormalize's inverses (exit 0)" \
        "$rc:$(grep -o 'carried back into shop\.[a-z]*: .*' "$T/err" | sort | tr '\n' ';')" \
        "0:carried back into shop.customers: 1 inserted, 1 replaced, 0 deleted;carried back into shop.orders: 1 inserted, 1 replaced, 1 deleted;"
    expect_eq "$kind: ... the originals are, byte for byte, what remodel run of the inverse makes" \
        "$(py 'import bson, os
from bson.raw_bson import RawBSONDocument
raw = pymongo.MongoClient(sys.argv[1], directConnection=True, document_class=RawBSONDocument)
out = []
for coll in ("orders", "customers"):
    want = {}
    with open(os.path.join(sys.argv[2], "shop", coll + ".bson"), "rb") as f:
        for d in bson.decode_file_iter(f, bson.CodecOptions(document_class=RawBSONDocument)):
            want[bson.decode(d.raw)["_id"]] = d.raw
    got = {bson.decode(d.raw)["_id"]: d.raw for d in raw.shop[coll].find()}
    if got != want and len(sys.argv) > 3:
        print(coll, sorted(set(got) ^ set(want)), [(k, bson.decode(got[k]), bson.decode(want[k])) for k in got if k in want and got[k] != want[k]][:3], file=sys.stderr)
    out.append("%s %d %s" % (coll, len(got), got == want))
print(", ".join(out))' "$T/inv" ${CI_DEBUG:+debug})" "orders 120 True, customers 21 True"
    online rollback both
    expect_eq "$kind: ... rollback again drops the results (exit 0)" "$rc:$(colls)" "0:['customers', 'orders']"

    # ---- a summary field some customer had before the run ----
    seed
    py 'c.shop.customers.update_one({"_id": 7}, {"$set": {"total": -1}})'
    online run sum -q --create-indexes
    online finalize sum --writes-stopped -q
    [ -n "${CI_DEBUG:-}" ] && cat "$T/err" >&2
    py 'c.shop.customers.update_one({"_id": 2}, {"$set": {"tier": 9}})'
    online rollback sum --carry-writes
    [ -n "${CI_DEBUG:-}" ] && cat "$T/err" >&2
    expect_eq "$kind: summarize over a field there before: --carry-writes refused (exit 2), naming the step and the field, nothing renamed" \
        "$rc:$(grep -c -F 'step 1 (summarize): its inverse removes "total" from shop.customers, which is exact only where no document had it before the run, and some had it when the run began' "$T/err"):$(exists "customers_remodel_$(pid sum)_backup")" \
        "2:1:True"
    online rollback sum --discard-writes-after-switch -q
    online rollback sum --discard-writes-after-switch -q
    expect_eq "$kind: ... then discarded (exit 0)" "$rc:$(colls)" "0:['customers', 'orders']"

    # ---- a copied field the application wrote into an original during the run ----
    seed
    online run den -q --create-indexes
    py 'c.shop.orders.update_one({"_id": 101}, {"$set": {"cust_name": "typed"}})'
    online finalize den --writes-stopped -q
    py 'c.shop.orders.update_one({"_id": 102}, {"$set": {"qty": 9}})'
    online rollback den --carry-writes
    [ -n "${CI_DEBUG:-}" ] && cat "$T/err" >&2
    expect_eq "$kind: denormalize over a field written into an original since: refused (exit 2), naming the step, the field and the document" \
        "$rc:$(grep -c -F 'step 1 (denormalize): its inverse removes "cust_name" from shop.orders, which is exact only where no document had it before the run, and the original { "_id" : 101 } has it now' "$T/err"):$(exists "orders_remodel_$(pid den)_backup")" \
        "2:1:True"
    online rollback den --discard-writes-after-switch -q
    online rollback den --discard-writes-after-switch -q
    expect_eq "$kind: ... then discarded (exit 0)" "$rc:$(colls)" "0:['customers', 'orders']"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
