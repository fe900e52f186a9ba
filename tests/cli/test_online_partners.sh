#!/usr/bin/env bash
# remodel online run reads a pass's partners once (issue 37 item 6;
# shell-ext/batch/online_partners.c): parents whose _ids are of seven BSON
# types, two children each, and children whose owner is an array, a
# number of another type (1 as a long, 2.0), null or missing, embedded in
# batches of 10, on both servers:
#   1. within --memory: one find of all the children for the pass's 7
#      batches, none by $in (before: one a batch), the results remodel
#      run's byte for byte;
#   2. --memory 1K: the read of all stops, the children do not fit, each
#      batch finds its own by $in, the results the same.
#   REMODEL=build/remodel bash tests/cli/test_online_partners.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
trap 'for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"

plan() {
    echo "{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"$2.kids\", \"into\": \"$2.parents\", \"localField\": \"_id\", \"foreignField\": \"owner\", \"as\": \"kids\", \"project\": {\"owner\": 0}}}]}" >"$T/plans/$1.json"
}
offline() {
    "$MONGODUMP" --uri "$uri" --db "$2" --archive="$T/$2-src.archive" --quiet
    "$REMODEL" run -q --force "$T/plans/$1.json" --from "$T/$2-src.archive" --to "$T/$1.archive"
}
# data DB: the parents and children, and the children of odd keys.
data() {
    python3 "$ROOT/tests/transforms/mixed_ids.py" "$uri" "$1" 10 >/dev/null
    py "from bson import Int64
c['$1'].kids.insert_many([{'_id': 'a', 'owner': [0, 's0001']}, {'_id': 'l', 'owner': Int64(1)},
                          {'_id': 'd', 'owner': 2.0}, {'_id': 'n', 'owner': None}, {'_id': 'm'}])"
}
# finds: the run's finds of the children (REMODEL_ONLINE_TRACE): of all
# of them (the read once, begun past --memory), then by $in (a batch's).
finds() {
    echo "$(grep -c '"find" : "kids", "filter" : {  }, "batchSize"' "$T/err"):$(grep -c '"find" : "kids", "filter" : { "owner" : { "$in"' "$T/err")"
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue

    # 1. Within --memory: read once.
    data p1
    plan once p1
    offline once p1
    REMODEL_ONLINE_TRACE=1 online run once --batch-size 10 --create-indexes
    expect_eq "$kind: partners within --memory: exit 0, one find of all the children, none by \$in" \
        "$rc:$(finds)" "0:1:0"
    online_same "$kind: ... as remodel run, byte for byte" "$T/once.archive" "p1.parents=$(target p1 parents)"

    # 2. Past --memory: a find a batch.
    data p2
    plan each p2
    offline each p2
    REMODEL_ONLINE_TRACE=1 online run each --batch-size 10 --create-indexes --memory 1K
    expect_eq "$kind: partners past --memory 1K: exit 0, the read of all stopped, a find by \$in a batch" \
        "$rc:$(finds)" "0:1:7"
    online_same "$kind: ... as remodel run, byte for byte" "$T/each.archive" "p2.parents=$(target p2 parents)"

    "$SERVER" stop "$T/$kind" >/dev/null
done
exit 0
