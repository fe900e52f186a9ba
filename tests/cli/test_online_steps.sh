#!/usr/bin/env bash
# remodel online run, every step kind, on mongo-java-server (online_kind:
# test_online_smoke.sh runs each command on both servers; REMODEL_TEST_BOTH=1
# runs this suite on both):
# the online result read back from the server equals `remodel run` on the
# same documents, namespace by namespace, document by document, byte for
# byte (tests/transforms/online_same.py). Side by side (embed with child
# and parent references, with keepSource and with outlier overflow;
# extract; field steps reading an earlier step's result; denormalize;
# summarize; bucketize, series by series; unbucketize; the Atlas sample's
# customers.accounts ->
# accounts.account_id) and in place (a denormalize and summarize backfill);
# a join without its index is refused naming the createIndex to run;
# kill -9 at random moments during side-by-side runs, then a rerun, gives
# the same result.
#   REMODEL=build/remodel bash tests/cli/test_online_steps.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
S=$ROOT/dumps/sample
ATLAS=$(atlas_sample)
trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$T/ferretdb" >/dev/null 2>&1; "$SERVER" stop "$T/java" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
CRASHES=${REMODEL_ONLINE_CRASHES:-4}
export ROOT PYTHONPATH=$ROOT/tests/transforms

mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed-tasks.json"
cp "$ROOT/dumps/plans/embed-parts.json" "$T/plans/embed-parts.json"
cat >"$T/plans/outlier.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "blog.comments", "into": "blog.posts", "localField": "_id",
             "foreignField": "post_id", "as": "comments", "sort": {"ts": -1}, "countAs": "n_comments",
             "maxItems": 4, "onOverflow": "outlier"}}]}
EOF
cat >"$T/plans/evolve.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "crm.people", "path": "addresses", "to": "crm.addresses",
               "style": "parentRef", "parentField": "person_id", "ordinalField": "n"}},
  {"rename": {"in": "crm.people", "fields": {"name": "fullName"}}},
  {"set": {"in": "crm.addresses", "fields": {"verified": false}}},
  {"version": {"in": "crm.people", "value": 2}}]}
EOF
cat >"$T/plans/denorm.json" <<'EOF'
{"remodel": 1, "steps": [
  {"denormalize": {"in": "logging.logmsg", "from": "logging.hosts", "localField": "host",
                   "fields": {"host_ip": "ipaddr", "dc": "datacenter"}}}]}
EOF
cat >"$T/plans/summary.json" <<'EOF'
{"remodel": 1, "steps": [
  {"summarize": {"into": "logging.hosts", "from": "logging.logmsg", "localField": "_id",
                 "foreignField": "host",
                 "fields": {"messages": {"$count": {}}, "last_seen": {"$max": "$time"},
                            "pids": {"$addToSet": "$pid"},
                            "recent": {"$topN": {"n": 3, "sortBy": {"time": -1},
                                                 "output": {"time": "$time", "message": "$message"}}}}}}]}
EOF
cat >"$T/plans/students.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "school.courses", "into": "school.students", "localField": "courses",
             "foreignField": "_id", "as": "courses", "project": {"code": 1, "title": 1}}}]}
EOF
cp "$ROOT/dumps/plans/backfill-logging.json" "$T/plans/backfill.json"
cat >"$T/plans/bucket.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets", "timeField": "ts",
                 "metaField": "sensor_id", "granularity": "hours"}}]}
EOF
cat >"$T/plans/buckets2.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iotx.readings", "to": "iotx.buckets2", "timeField": "ts",
                 "metaField": "sensor_id", "spanSeconds": 7200, "maxCount": 7,
                 "stats": {"temperature": ["count", "min", "max", "avg"]},
                 "keepSource": true, "onInvalid": {"to": "iotx.bad"}}}]}
EOF
cat >"$T/plans/bucket-multi.json" <<'EOF'
{"remodel": 1, "steps": [
  {"bucketize": {"from": "iot.readings", "to": "iot.buckets3", "timeField": "ts",
                 "metaField": ["sensor_id", "unit"], "granularity": "hours"}}]}
EOF
cat >"$T/plans/unbucket.json" <<'EOF'
{"remodel": 1, "steps": [
  {"unbucketize": {"from": "iot.buckets", "to": "iot.readings2", "timeField": "ts",
                   "metaField": "sensor_id", "granularity": "hours", "keepSource": false}}]}
EOF
cat >"$T/plans/dup.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "dup.x", "path": "items", "to": "dup.items", "style": "parentRef",
               "parentField": "x_id"}}]}
EOF
# The children referenced from their parent only (childRefs): results that
# do not name their driver, checked through the step's set of _ids.
cat >"$T/plans/dupc.json" <<'EOF'
{"remodel": 1, "steps": [
  {"extract": {"from": "dup.c", "path": "items", "to": "dup.citems", "style": "childRefs"}}]}
EOF
cat >"$T/plans/atlas.json" <<'EOF'
{"remodel": 1, "steps": [
  {"embed": {"from": "sample_analytics.accounts", "into": "sample_analytics.customers",
             "localField": "accounts", "foreignField": "account_id", "as": "accounts",
             "project": {"_id": 0, "account_id": 1, "limit": 1, "products": 1}}}]}
EOF

# The offline results, the reference.
for p in embed-tasks embed-parts outlier evolve denorm summary students backfill bucket; do
    "$REMODEL" run -q "$T/plans/$p.json" --from "$S" --to "$T/$p.archive" ||
        fail "offline $p"
done
"$REMODEL" run -q "$T/plans/bucket.json" --from "$S" --to "$T/bucketized.archive"
"$REMODEL" run -q "$T/plans/unbucket.json" --from "$T/bucketized.archive" --to "$T/unbucket.archive"
"$REMODEL" run -q "$T/plans/atlas.json" --from "$ATLAS" --to "$T/atlas.archive"

# same NAME PLAN NS=COLL...: the server's collections are PLAN's offline result.
same() { online_same "$1" "$T/$2.archive" "${@:3}"; }
online() { run_rm online run -q "$T/plans/$1.json" --uri "$uri" "${@:2}"; }
pid() { plan_id "$T/plans/$1.json"; }

for kind in $(online_kind java); do
    online_start "$kind" "$T/$kind" || continue
    # FerretDB 1.x has no decimal128: catalog.parts (prices) is not restored there.
    exclude=()
    [ $kind == ferretdb ] && exclude=(--nsExclude catalog.parts)
    "$MONGORESTORE" --uri "$uri" --dir "$S" "${exclude[@]}" --noIndexRestore --quiet 2>"$T/err" ||
        { fail "$kind: restore" "$(cat "$T/err")"; continue; }
    "$MONGORESTORE" --uri "$uri" --archive="$T/bucketized.archive" --nsInclude iot.buckets \
        --noIndexRestore --quiet
    "$MONGORESTORE" --uri "$uri" --dir "$ATLAS" --nsInclude 'sample_analytics.*' --noIndexRestore --quiet
    "$MONGODUMP" --uri "$uri" --archive="$T/$kind-sources.archive" --quiet

    # A join whose partners have no index: refused before anything is written.
    online embed-tasks
    expect_eq "$kind: a join without its index: refused (exit 2), nothing written" \
        "$rc:$(pyrun -c 'import pymongo, sys
print(pymongo.MongoClient(sys.argv[1]).crm.list_collection_names().count("people_remodel_'"$(pid embed-tasks)"'_1"))' "$uri")" "2:0"
    expect_message "$kind: ... naming the index to create" \
        'step 1 (embed), checked before any step writes: crm.tasks has no index on "owner"' \
        'db.getSiblingDB("crm").getCollection("tasks").createIndex({"owner": 1})'

    online embed-tasks --create-indexes --batch-size 7
    expect_eq "$kind: embed (parent references), side by side: exit 0" "$rc:$(cat "$T/err")" "0:"
    same "$kind: embed: people with their tasks, the orphan tasks left, as remodel run" embed-tasks \
        crm.people=people_remodel_$(pid embed-tasks)_1 crm.tasks=tasks_remodel_$(pid embed-tasks)_1
    if [ $kind != ferretdb ]; then
        online embed-parts --batch-size 9
        same "$kind: embed (child references, keepSource): as remodel run" embed-parts \
            catalog.products=products_remodel_$(pid embed-parts)_1
    fi
    online outlier --create-indexes --batch-size 6
    same "$kind: embed with outlier overflow and countAs: posts, orphans, overflow pages as remodel run" outlier \
        blog.posts=posts_remodel_$(pid outlier)_1 blog.comments=comments_remodel_$(pid outlier)_1 \
        blog.posts_comments_overflow=posts_comments_overflow_remodel_$(pid outlier)_1
    online students --create-indexes --batch-size 25
    same "$kind: embed of shared children (many-to-many by an array of ids): as remodel run" students \
        school.students=students_remodel_$(pid students)_1
    online evolve --batch-size 11
    same "$kind: extract, then field steps reading its result: as remodel run" evolve \
        crm.people=people_remodel_$(pid evolve)_4 crm.addresses=addresses_remodel_$(pid evolve)_3
    online denorm --batch-size 100
    same "$kind: denormalize, side by side: as remodel run" denorm \
        logging.logmsg=logmsg_remodel_$(pid denorm)_1
    online summary --create-indexes --batch-size 3
    same "$kind: summarize (\$count, \$max, \$addToSet, \$topN), side by side: as remodel run" summary \
        logging.hosts=hosts_remodel_$(pid summary)_1
    online unbucket --batch-size 5
    same "$kind: unbucketize (keepSource false): the readings back, the buckets emptied, as remodel run" unbucket \
        iot.readings2=readings2_remodel_$(pid unbucket)_1 iot.buckets=buckets_remodel_$(pid unbucket)_1
    online atlas --create-indexes --batch-size 40
    same "$kind: the Atlas sample's customers with their accounts (accounts.account_id): as remodel run" atlas \
        sample_analytics.customers=customers_remodel_$(pid atlas)_1
    # Two results with one _id: an error naming both, never an overwrite.
    pyrun -c 'import pymongo, sys
db = pymongo.MongoClient(sys.argv[1]).dup
db.x.insert_many([{"_id": 1, "items": [{"_id": 5, "v": 1}]}, {"_id": 2, "items": [{"_id": 6}]},
                  {"_id": 3, "items": [{"_id": 5, "v": 2}]}])' "$uri"
    online dup --batch-size 2
    expect_eq "$kind: two results with one _id: exit 1, one line" "$rc:$(grep -c . "$T/err")" "1:1"
    expect_message "$kind: ... naming both" \
        'step 1 (extract): two results for dup.items with one _id ({ "_id" : 5, "v" : 1, "x_id" : 1 } and { "_id" : 5, "v" : 2, "x_id" : 3 })'
    expect_eq "$kind: ... the first not overwritten" "$(pyrun -c 'import pymongo, sys
print(pymongo.MongoClient(sys.argv[1]).dup["items_remodel_'"$(pid dup)"'_1"].find_one({"_id": 5})["v"])' "$uri")" 1
    # Past --memory the step's set goes to disk, and the same duplicate is
    # found at the end of the step, named, exit 1 (batches 30 parents
    # apart, so no batch holds both).
    pyrun -c 'import pymongo, sys
db = pymongo.MongoClient(sys.argv[1]).dup
db.c.insert_many([{"_id": i, "items": [{"_id": 1000 + i, "v": i}]} for i in range(300)] +
                 [{"_id": 400, "items": [{"_id": 1005, "v": 2}]}])' "$uri"
    online dupc --batch-size 10 --memory 1K
    expect_eq "$kind: past --memory, two results with one _id: exit 1, named at the end of the step" \
        "$rc:$(grep -c 'two results for dup.citems with one _id ({ "_id" : 1005 }), found at the end of the step (past --memory' "$T/err")" "1:1"
    "$MONGODUMP" --uri "$uri" --archive="$T/$kind-after.archive" --quiet
    same_sources=$(python3 - "$T/$kind-sources.archive" "$T/$kind-after.archive" <<'PYEOF'
import sys, rmlib
a, b = rmlib.read_archive(sys.argv[1])[0], rmlib.read_archive(sys.argv[2])[0]
print(all(sorted(map(bytes, a[ns])) == sorted(map(bytes, b.get(ns, []))) for ns in a
          if not ns.startswith(("remodel.", "dup.", "iotx."))))
PYEOF
)
    expect_eq "$kind: side by side: every source collection as it was" "$same_sources" True

    # In place: a backfill of denormalized copies and computed summaries.
    online backfill --in-place --batch-size 50
    expect_eq "$kind: --in-place backfill: exit 0" "$rc:$(cat "$T/err")" "0:"
    same "$kind: --in-place: logmsg and hosts themselves as remodel run makes them" backfill \
        logging.logmsg=logmsg logging.hosts=hosts
    online backfill --in-place
    expect_eq "$kind: --in-place run again: nothing to do" "$rc:$(cat "$T/err")" "0:"
    online bucket --batch-size 200
    same "$kind: bucketize (series by series of the metaField), side by side: as remodel run" bucket \
        iot.buckets=buckets_remodel_$(pid bucket)_1 iot.readings=readings_remodel_$(pid bucket)_1
    # verify and sync with the step's set on disk (--memory 1K): a stray
    # bucket found and removed, nothing else.
    pyrun -c 'import pymongo, sys
pymongo.MongoClient(sys.argv[1]).iot["buckets_remodel_%s_1" % sys.argv[2]].insert_one({"_id": "stray"})' \
        "$uri" "$(pid bucket)"
    run_rm online verify "$T/plans/bucket.json" --uri "$uri" --memory 1K
    expect_eq "$kind: bucketize, verify past --memory: the stray bucket found (exit 1, 1 differs)" \
        "$rc:$(grep -c '1 documents in iot.buckets_remodel_.* that no range makes' "$T/err")" "1:1"
    run_rm online sync "$T/plans/bucket.json" --uri "$uri" --memory 1K
    run_rm online verify "$T/plans/bucket.json" --uri "$uri" --memory 1K
    expect_eq "$kind: ... sync removes it, and verify then finds every result right" \
        "$rc:$(grep -c 'every result as the sources make it' "$T/err")" "0:1"
    same "$kind: ... the buckets as remodel run's" bucket iot.buckets=buckets_remodel_$(pid bucket)_1
    # The readings again, with some a bucket cannot take (no time, a string).
    pyrun -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1])
docs = list(c.iot.readings.find())
docs += [{"_id": "bad%d" % i, "sensor_id": "s%d" % (i % 3), "ts": "yesterday" if i % 2 else None,
          "temperature": i} for i in range(7)]
c.iotx.readings.insert_many(docs)' "$uri"
    "$MONGODUMP" --uri "$uri" --db iotx --archive="$T/$kind-iotx.archive" --quiet
    "$REMODEL" run -q "$T/plans/buckets2.json" --from "$T/$kind-iotx.archive" --to "$T/buckets2.archive"
    online buckets2 --batch-size 150
    same "$kind: bucketize with stats, maxCount and onInvalid: as remodel run" buckets2 \
        iotx.buckets2=buckets2_remodel_$(pid buckets2)_1 iotx.bad=bad_remodel_$(pid buckets2)_1
    run_rm online run "$T/plans/bucket-multi.json" --uri "$uri"
    expect_eq "$kind: bucketize by several metaFields online: refused (exit 2), saying why" \
        "$rc:$(grep -c 'bucketize by several metaFields runs offline only' "$T/err")" "2:1"

    # kill -9 at random moments, then a rerun: the same result. The step
    # kinds take turns (make online-crashes CRASHES=N runs more).
    for ((i = 1; i <= CRASHES; i++)); do
        mode=() ex=()
        case $((i % 6)) in
        1) p=embed-tasks db=crm map="crm.people=people_remodel_$(pid crash${i})_1 crm.tasks=tasks_remodel_$(pid crash${i})_1" ;;
        2) p=evolve db=crm map="crm.people=people_remodel_$(pid crash${i})_4 crm.addresses=addresses_remodel_$(pid crash${i})_3" ;;
        3) p=bucket db=iot ex=(--excludeCollection buckets) map="iot.buckets=buckets_remodel_$(pid crash${i})_1 iot.readings=readings_remodel_$(pid crash${i})_1" ;;
        4) p=summary db=logging map="logging.hosts=hosts_remodel_$(pid crash${i})_1" ;;
        5) p=backfill db=logging map="logging.logmsg=logmsg logging.hosts=hosts" mode=(--in-place) ;;
        0) p=outlier db=blog map="blog.posts=posts_remodel_$(pid crash${i})_1 blog.comments=comments_remodel_$(pid crash${i})_1 blog.posts_comments_overflow=posts_comments_overflow_remodel_$(pid crash${i})_1" ;;
        esac
        # The reference: remodel run on the data as it is now.
        "$MONGODUMP" --uri "$uri" --db $db "${ex[@]}" --archive="$T/ref-src.archive" --quiet
        "$REMODEL" run -q "$T/plans/$p.json" --from "$T/ref-src.archive" --to "$T/ref.archive" --force
        cp "$T/plans/$p.json" "$T/plans/crash$i.json"
        touch "$T/started"
        "$REMODEL" online run -q "${mode[@]}" "$T/plans/crash$i.json" --uri "$uri" --batch-size 3 --pause-ms 5 >/dev/null 2>&1 &
        pid=$!
        sleep "0.$(printf '%02d' $((RANDOM % 90 + 5)))"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        expect_eq "$kind: $p killed (-9) ($i): no driver counters left in /dev/shm" \
            "$(find /dev/shm -maxdepth 1 -name "mongoc-$pid" -newer "$T/started" 2>/dev/null | wc -l)" 0
        pyrun -c 'import pymongo, sys, datetime
c = pymongo.MongoClient(sys.argv[1])
c.remodel.leases.update_many({}, {"$set": {"expires": datetime.datetime(2000, 1, 1)}})' "$uri"
        online crash$i "${mode[@]}"
        expect_eq "$kind: $p killed (-9) at a random moment ($i), then run again: exit 0" "$rc:$(cat "$T/err")" "0:"
        # shellcheck disable=SC2086
        same "$kind: $p killed at a random moment ($i), then run again: remodel run's documents" ref $map
    done
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
