#!/usr/bin/env bash
# remodel online run reads a pass's partners once (issue 37;
# shell-ext/batch/online_partners.c): parents whose _ids are of seven BSON
# types, two children each, and children whose owner is an array, a
# number of another type (1 as a long, 2.0), null or missing, embedded in
# batches of 10, on both servers:
#   1. within --memory: the children read by one cursor in _id order,
#      in replies of ten batches (100: a find and a getMore), none by $in
#      (before: one a batch), the results remodel run's byte for byte;
#   2. --memory 1K, which collStats says the children pass: no read of
#      them all begun, each batch finds its own by $in, the results the
#      same;
#   3. denormalize, two hosts of one name inserted in descending _id
#      order (the first in the server's order is copied, docs/plans.md):
#      the hosts read once, the one batch whose logs name that host
#      finds by $in (the server's order decides), the results remodel
#      run's.
#   REMODEL=build/remodel bash tests/cli/test_online_partners.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap '[ "$BASHPID" != "$$" ] || { for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"

# data DB: the parents and children, and the children of odd keys.
data() {
    python3 "$ROOT/tests/transforms/mixed_ids.py" "$uri" "$1" 10 >/dev/null
    py "from bson import Int64
c['$1'].kids.insert_many([{'_id': 'a', 'owner': [0, 's0001']}, {'_id': 'l', 'owner': Int64(1)},
                          {'_id': 'd', 'owner': 2.0}, {'_id': 'n', 'owner': None}, {'_id': 'm'}])"
}
# finds COLL FIELD: the run's finds of COLL (REMODEL_ONLINE_TRACE): of
# them all in _id order in replies of 100 (the read once), then by FIELD
# $in (a batch's). From the run's first write of the plan's record on: the
# preflight's reads come before it (whether any reference finds a partner).
finds() {
    sed -n '/"update" : "plans"/,$p' "$T/err" >"$T/run-trace"
    echo "$(grep -c "\"find\" : \"$1\", \"filter\" : { *}, \"sort\" : { \"_id\" : 1 }, \"batchSize\" : 100," "$T/run-trace"):$(grep -c "\"find\" : \"$1\", \"filter\" : { \"$2\" : { \"\$in\"" "$T/run-trace")"
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue

    # 1. Within --memory: read once.
    data p1
    kids_plan once p1
    offline_run once p1
    REMODEL_ONLINE_TRACE=1 online run once --batch-size 10 --create-indexes
    expect_eq "$kind: partners within --memory: exit 0, one cursor of the children in _id order (a find and a getMore of 100), none by \$in" \
        "$rc:$(finds kids owner):$(grep -c '"getMore" : [0-9]*, "collection" : "kids", "batchSize" : 100,' "$T/err")" "0:1:0:1"
    online_same "$kind: ... as remodel run, byte for byte" "$T/once.archive" "p1.parents=$(target p1 parents)"

    # 2. Past --memory: a find a batch.
    data p2
    kids_plan each p2
    offline_run each p2
    REMODEL_ONLINE_TRACE=1 online run each --batch-size 10 --create-indexes --memory 1K
    expect_eq "$kind: partners past --memory 1K by collStats: exit 0, no read of them all begun, a find by \$in a batch" \
        "$rc:$(finds kids owner)" "0:0:7"
    online_same "$kind: ... as remodel run, byte for byte" "$T/each.archive" "p2.parents=$(target p2 parents)"

    # 3. denormalize: the first host of a name in the server's order.
    py "c.p3.drop_collection('hosts'); c.p3.drop_collection('logs')
c.p3.hosts.insert_many([{'_id': 9, 'name': 'h1', 'ip': 'later'}, {'_id': 1, 'name': 'h1', 'ip': 'earlier'}]
                       + [{'_id': 10 + i, 'name': 'h%d' % (i + 2), 'ip': 'ip%d' % i} for i in range(5)])
c.p3.logs.insert_many([{'_id': i, 'host': 'h%d' % (1 if i < 3 else 2 + i % 5)} for i in range(30)])"
    echo '{"remodel": 1, "steps": [{"denormalize": {"in": "p3.logs", "from": "p3.hosts", "localField": "host", "foreignField": "name", "fields": {"host_ip": "ip"}}}]}' >"$T/plans/dn.json"
    offline_run dn p3
    REMODEL_ONLINE_TRACE=1 online run dn --batch-size 10 --create-indexes
    expect_eq "$kind: denormalize, a name of two hosts: exit 0, the hosts read once, the batch naming it finds by \$in" \
        "$rc:$(finds hosts name)" "0:1:1"
    online_same "$kind: ... as remodel run, byte for byte (the host first in the server's order copied)" \
        "$T/dn.archive" "p3.logs=$(target p3 logs)"

    "$SERVER" stop "$T/$kind" >/dev/null
done
exit 0
