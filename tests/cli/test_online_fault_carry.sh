#!/usr/bin/env bash
# The fault layer's matrix over a carry (issue 53): `remodel online
# rollback --carry-writes` with one of its server calls cut by the fault
# layer (shell-ext/conn/online_fault.c), before it is sent (the server
# never sees it) or after (applied, the reply lost), on FerretDB with its
# oplog and mongo-java-server with its change streams. The plan is
# test_online_carry_inverse.sh's: shop.orders get their customer's name
# (denormalize), shop.customers their orders' total and count
# (summarize); finalized, then the application writes both designs'
# collections (an order changed, one inserted, one deleted; a customer
# renamed, one's total rewritten, one inserted).
# - counted first (REMODEL_ONLINE_FAULT=count): the carry exits 0 and its
#   originals are the reference, document by document, byte for byte;
# - the carry with call N of a kind cut: exit 0, or the same command again
#   exits 0; then shop holds the originals (each document the reference's,
#   byte for byte, none more, none fewer) and no stage collection.
# Calls are named by kind and number ("update:3"), not by their place in
# "any": a change stream's getMore comes when the server has something,
# so "any" numbers the calls after it differently from run to run.
#
# The default run replays a part: on each server, the first call of each
# kind the carry makes (cut after sending and cut before, alternating),
# and its last rename's reply lost. REMODEL_FAULT_MATRIX=full (make
# online-fault-matrix) runs every call, both cuts; REMODEL_FAULT_ONLY
# replays one point: REMODEL_FAULT_ONLY='carry_point update:3:cut-after'
# (on REMODEL_FAULT_KIND, default ferretdb).
#   REMODEL=build/remodel bash tests/cli/test_online_fault_carry.sh
. "$(dirname "$0")/lib.sh"
use_faulty || exit 1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "fault carry: external deployments are not started here (skipped)"; exit 0; }
FULL=0
[ "${REMODEL_FAULT_MATRIX:-}" == full ] && FULL=1
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
t_lap=$SECONDS
lap() { echo "# $1: $((SECONDS - t_lap)) s" >&2; t_lap=$SECONDS; }
mkdir -p "$T/plans"
cat >"$T/plans/both.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "shop.orders", "from": "shop.customers", "localField": "cust",
                   "fields": {"cust_name": "name"}}},
  {"summarize": {"into": "shop.customers", "from": "shop.orders", "localField": "_id",
                 "foreignField": "cust", "fields": {"total": {"$sum": "$qty"}, "n": {"$sum": 1}}}}]}
EOF

# carried_setup: shop seeded (the state database dropped), run,
# finalized, then the application's writes after the switch. FerretDB's
# oplog begun again first (fresh_log): the points before left theirs.
carried_setup() {
    fresh_log "$T/srv-$kind" || return 1
    py 'c.drop_database("remodel"); c.shop.drop_collection("orders"); c.shop.drop_collection("customers")
for n in c.shop.list_collection_names(): c.shop.drop_collection(n)
c.shop.customers.insert_many([{"_id": i, "name": "c%d" % i, "tier": i % 3} for i in range(20)])
c.shop.orders.insert_many([{"_id": 100 + i, "cust": i % 20, "qty": i % 7, "note": "o%d" % i} for i in range(120)])'
    online run both -q
    [ $rc == 0 ] || { fail "$kind: run before a carry point" "$(cat "$T/err")"; return 1; }
    online finalize both --writes-stopped -q
    [ $rc == 0 ] || { fail "$kind: finalize before a carry point" "$(cat "$T/err")"; return 1; }
    py 'o, k = c.shop.orders, c.shop.customers
o.update_one({"_id": 105}, {"$set": {"qty": 40}})
o.insert_one({"_id": 900, "cust": 3, "qty": 2, "note": "new", "cust_name": "c3"})
o.delete_one({"_id": 110})
k.update_one({"_id": 4}, {"$set": {"name": "renamed"}})
k.update_one({"_id": 5}, {"$set": {"total": 1000}})
k.insert_one({"_id": 50, "name": "c50", "tier": 1, "total": 0, "n": 0})'
}
# faulted SPEC: rollback --carry-writes with REMODEL_ONLINE_FAULT=SPEC; its
# status in $frc, its stderr in $T/ferr, the calls in $T/flog.
faulted() {
    rm -f "$T/flog"
    REMODEL_ONLINE_FAULT=$1 REMODEL_ONLINE_FAULT_LOG=$T/flog \
        "$REMODEL" online rollback "$T/plans/both.json" --uri "$uri" --retry-for 2s --carry-writes \
        >"$T/fout" 2>"$T/ferr"
    frc=$?
}
fired() { sed -n 's/^remodel-online: fault layer: \(call .*\)/\1/p' "$T/ferr" | head -n 1; }
# originals FILE: shop's originals, each document's bytes in _id order,
# then the names of shop's collections but the results (no stage left),
# into FILE. The results are not compared: a carry stopped after its
# renames and run again drops them, as a second rollback does (they hold
# nothing the carry has not put into the originals).
originals() {
    py 'import bson, re
from bson.raw_bson import RawBSONDocument
raw = pymongo.MongoClient(sys.argv[1], directConnection=True, document_class=RawBSONDocument)
with open(sys.argv[2], "w") as f:
    for coll in ("orders", "customers"):
        for d in sorted(raw.shop[coll].find(), key=lambda d: repr(bson.decode(d.raw)["_id"])):
            print(coll, d.raw.hex(), file=f)
    print(sorted(n for n in c.shop.list_collection_names()
                 if not re.search(r"_remodel_.+_[0-9a-f]{12}_[0-9]+$", n)), file=f)' "$1"
}

# carry_point SPEC: the carry with SPEC's fault, again when it failed; the
# originals then the reference's, document for document.
carry_point() {
    local n="$kind: rollback --carry-writes, $1"
    carried_setup || return 1
    faulted "$1"
    n="$n [$(fired)]"
    if [ $frc != 0 ]; then
        online rollback both --carry-writes
        expect_eq "$n: failed (exit $frc); the carry again: exit 0" "$rc" 0
        [ $rc == 0 ] || { sed 's/^/  /' "$T/ferr" "$T/err" | tail -n 12 >&2; }
    else
        pass "$n: exit 0 (the driver or remodel's retry took it)"
    fi
    originals "$T/got"
    if cmp -s "$T/got" "$T/want"; then
        pass "$n: ... the originals are the carry's without a fault, document for document"
    else
        fail "$n: ... the originals are the carry's without a fault, document for document" \
            "$(diff "$T/want" "$T/got" | cut -c1-200 | head -n 8)"
    fi
}

# REMODEL_FAULT_ONLY='carry_point update:3:cut-after' replays one point.
only() {
    kind=${REMODEL_FAULT_KIND:-ferretdb}
    online_start "$kind" "$T/srv-$kind" 0 changelog || exit 0
    carried_setup && faulted count && originals "$T/want" || exit 0
    awk '$1 != "-" {print $2 ":" $3}' "$T/flog" >"$T/calls"
    eval "$REMODEL_FAULT_ONLY"
    exit 0
}
[ -n "${REMODEL_FAULT_ONLY:-}" ] && only
total=0
for kind in ${CI_KINDS:-ferretdb java}; do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    carried_setup || continue
    faulted count
    expect_eq "$kind: the carry under the layer, counting: exit 0, both originals carried into" \
        "$frc:$(grep -c 'carried back into shop\.' "$T/ferr")" "0:2"
    originals "$T/want"
    # Every call as KIND:K, in the order made; the renames.
    awk '$1 != "-" {print $2 ":" $3}' "$T/flog" >"$T/calls"
    echo "# $kind: the carry: $(wc -l <"$T/calls") calls: $(sed 's/:.*//' "$T/calls" | uniq -c |
        awk '{printf "%s%s%s", sep, $2, ($1 > 1 ? "x" $1 : ""); sep = " "}')" >&2
    lap "$kind: counted"
    if [ $FULL == 1 ]; then
        points=$(cat "$T/calls")
    else
        # The first call of each kind, and the last rename.
        points="$(awk -F: '!seen[$1]++' "$T/calls") $(grep '^renameCollection:' "$T/calls" | tail -n 1)"
    fi
    i=0
    for p in $points; do
        if [ $FULL == 1 ]; then
            carry_point "$p:cut"
            carry_point "$p:cut-after"
            total=$((total + 2))
        else
            [ $((i % 2)) == 0 ] && carry_point "$p:cut-after" || carry_point "$p:cut"
            total=$((total + 1))
        fi
        i=$((i + 1))
    done
    lap "$kind: $i of the carry's calls cut"
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
echo "# $total fault points" >&2
