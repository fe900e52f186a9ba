#!/usr/bin/env bash
# From one deployment to another with workers (--to-uri --workers N, issue
# 54), in both directions: FerretDB (its oplog) to mongo-java-server, and
# mongo-java-server (its change streams) to FerretDB. Each worker opens a
# connection of its own to each deployment (a driver client serves one
# thread). A plan embeds shop.kids into shop.parents; shop.other, which it
# does not touch, is copied as it is. An application writes parents and
# kids on the source all through the copy.
#  - run --workers 2 --partitions 8, a worker's source connection cut as
#    it opens (the fault layer's ping #6: the command pings the source and
#    the destination, then each of the two workers its destination, then
#    its source, so the last of the six is a worker's source's): exit 1,
#    naming the source and its host;
#  - run again, a worker's write on the destination cut after sending
#    (applied, its reply lost), and a second process joining (--join
#    --workers 2): the cut retried, both complete (exit 0); the partitions,
#    split at the source's _ids, done on the destination, read by both
#    processes' workers, their leases there; no state database on the
#    source;
#  - the writer stopped: sync --workers 2 applies its writes from the
#    source's log; verify --workers 2 reads by the eight partitions, clean;
#  - a source write then: verify --workers 2 finds the same differing _ids
#    as verify with one worker (exit 1); sync --workers 2 rewrites them,
#    verify --workers 2 is clean again;
#  - finalize --writes-stopped: the destination equals `remodel run`
#    offline over a mongodump of the source, byte for byte, shop.other
#    with it; the source holds its own collections only, no state database;
#  - a source without a change log (mongo-java-server without its oplog)
#    to FerretDB: sync --workers 2 rescans by the partitions, rewriting
#    exactly the results the writes changed; verify clean; after finalize
#    the destination equals remodel run offline.
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_workers.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
use_faulty || exit 1
to_uri_setup "to-uri workers"
to_uri_cleanup() { stop_writer; }
seed() { seed_shop 400 1200 50; }
# colls URI: shop's collections, each name once. mongo-java-server once
# listed shop.other twice after finalize dropped and made it again (a CI
# run, not reproduced in the next): no server holds two collections of
# one name, and the byte-for-byte comparison beside it counts documents.
colls() { uri=$1 py 'print(",".join(sorted(set(c.shop.list_collection_names()))))'; }
# The application on the source ($SRC): parents and kids updated,
# inserted and deleted, until $T/stop exists; begun once it has written.
start_writer() {
    rm -f "$T/stop" "$T/writing"
    uri=$SRC py 'import os, time
rnd, n = random.Random(11), 0
while not os.path.exists(sys.argv[2]):
    k, p, kid = rnd.randrange(6), rnd.randrange(420), 1000 + rnd.randrange(1300)
    if k == 0:
        c.shop.parents.update_one({"_id": p}, {"$set": {"name": "w%d" % n}}, upsert=True)
    elif k == 1:
        c.shop.parents.delete_one({"_id": rnd.randrange(400)})
    elif k == 2:
        c.shop.kids.update_one({"_id": kid}, {"$set": {"owner": rnd.randrange(420), "x": -n}})
    elif k == 3:
        c.shop.kids.delete_one({"_id": kid})
    elif k == 4:
        c.shop.kids.insert_one({"_id": 20000 + n, "owner": rnd.randrange(420), "x": n})
    else:
        c.shop.parents.insert_one({"_id": 10000 + n, "name": "new%d" % n})
    n += 1
    if n == 20:
        open(sys.argv[3], "w").close()
    time.sleep(0.01)
print(n)' "$T/stop" "$T/writing" >"$T/writer.log" 2>&1 &
    writer_started
}
# On the destination: each pass's partitions done of those recorded, the
# workers and processes that read them, and the leases kept for them.
parts() {
    uri=$DST py 'p = list(c.remodel.partitions.find())
leases = [d["_id"] for d in c.remodel.leases.find() if "#" in d["_id"]]
print("%d of %d done, %d worker(s) of %s process(es), %d lease(s)" % (sum(x["state"] == "done" for x in p),
      len(p), len({x["owner"].split(":")[3] for x in p}),
      "2 or more" if len({x["owner"].split(":")[1] for x in p}) >= 2 else "1", len(leases)))'
}
nostate() { uri=$SRC py 'print("remodel" in c.list_database_names())'; }
# finalized TAG: finalize --writes-stopped; then the destination equals
# remodel run offline over the source's dump, byte for byte, under the
# final names only, and the source holds its own collections only.
finalized() {
    two finalize --writes-stopped --max-window 0
    expect_eq "$1: finalize --writes-stopped (exit 0)" "$rc" "0"
    uri=$SRC offline_run emb shop
    uri=$DST online_same "$1: the destination equals remodel run offline over the source's dump, byte for byte" \
        "$T/emb.archive" shop.parents=parents shop.kids=kids shop.other=other
    expect_eq "$1: ... only the final names there" "$(colls "$DST")" "kids,other,parents"
    expect_eq "$1: the source: its own collections, no state database" \
        "$(colls "$SRC") $(nostate)" "kids,other,parents False"
}

for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    d="$from->$to"
    pair_start "$from" "$to" || continue
    start_writer

    # ---- a worker's source connection cut as it opens ----
    REMODEL_ONLINE_FAULT=ping:6:cut two run --workers 2 --partitions 8 --batch-size 20 --pause 20ms
    expect_eq "$d: run --workers 2, a worker's source connection cut: exit 1" "$rc" "1"
    host=${SRC#mongodb://}
    expect_message "$d: ... the fault on the pass's last worker connection, the source named" \
        "(ping #6) cut before sending" "error: the source (--uri): ${host%/}: cannot reach the server"

    # ---- run again, a worker's destination write's reply lost; another
    # process joins (--join --workers 2) once three partitions are done ----
    REMODEL_ONLINE_FAULT=insert:6:cut-after "$REMODEL" online run "$P" --uri "$SRC" --to-uri "$DST" \
        --workers 2 --partitions 8 --batch-size 10 --pause 100ms >/dev/null 2>"$T/a.err" &
    a=$!
    python3 "$ROOT/tests/peers/partitions_done.py" "$DST" "$(pid emb)" 3
    "$REMODEL" online run "$P" --uri "$SRC" --to-uri "$DST" --join --workers 2 --batch-size 10 \
        --pause 100ms >/dev/null 2>"$T/b.err"
    brc=$?
    wait "$a"
    expect_eq "$d: run again, a worker's destination write cut after sending, another process joining: both complete (exit 0)" \
        "$?:$brc" "0:0"
    cp "$T/a.err" "$T/err"
    expect_message "$d: ... the cut retried, eight partitions, two workers" \
        "(insert #6) cut after sending" "retrying in" \
        "step 1 (embed) shop.parents: 8 partitions, 2 worker(s)"
    expect_eq "$d: ... the other joined" "$(grep -c 'plan emb.json: joining its run in progress' "$T/b.err")" "1"
    expect_eq "$d: ... the partitions done on the destination, by both processes' workers, their leases there" \
        "$(parts)" "16 of 16 done, 2 worker(s) of 2 or more process(es), 16 lease(s)"
    expect_eq "$d: ... no state database on the source" "$(nostate)" "False"

    # ---- sync and verify with workers ----
    stop_writer
    expect_eq "$d: the application wrote all through the two runs" \
        "$(($(cat "$T/writer.log") >= 50))" "1"
    two sync --workers 2
    expect_eq "$d: sync --workers 2: the writer's writes from the source's log (exit 0)" \
        "$rc:$(grep -c "sync: the source's change log: [0-9]* events" "$T/err")" "0:1"
    two verify --workers 2
    expect_eq "$d: verify --workers 2: by the eight partitions, every result right (exit 0)" \
        "$rc:$(grep -c 'verify: step 1 (embed) shop.parents: 8 partitions, 2 worker(s)' "$T/err")" "0:1"
    uri=$SRC py 'c.shop.parents.update_one({"_id": 5}, {"$set": {"name": "changed"}})
c.shop.kids.update_one({"_id": 1300}, {"$set": {"owner": 17}})
c.shop.parents.insert_one({"_id": 399.5, "name": "between"})'
    two verify --workers 2 --differences "$T/diff2"
    rc2=$rc
    two verify --differences "$T/diff1"
    expect_eq "$d: a source write: verify --workers 2 finds it (exit 1), as one worker does" \
        "$rc2:$rc" "1:1"
    expect_eq "$d: ... the same differing _ids" \
        "$([ -s "$T/diff1" ] && cmp -s "$T/diff1" "$T/diff2" && echo same || diff "$T/diff1" "$T/diff2" | head -5)" \
        "same"
    two sync --workers 2
    expect_eq "$d: sync --workers 2 rewrites them (exit 0)" "$rc" "0"
    two verify --workers 2
    expect_eq "$d: ... verify --workers 2 clean again (exit 0)" "$rc" "0"

    finalized "$d"
    for s in "$T"/srv-*; do "$SERVER" stop "$s" >/dev/null 2>&1; done
done

# ---- a source without a change log: sync --workers 2 rescans ----
# mongo-java-server without its oplog: nothing to read the writes from,
# so sync rescans the source by the run's partitions, with workers; what
# it rewrites is exactly what the writes changed.
if [[ " ${CI_KINDS:-ferretdb:java java:ferretdb} " == *" java:ferretdb "* ]] &&
    online_start java "$T/srv-plain-src" 0; then
    SRC=$uri
    seed
    if online_start ferretdb "$T/srv-plain-dst" 0; then
        DST=$uri
        two run -q --workers 2 --partitions 8 --batch-size 20
        expect_eq "no log: run --workers 2 --partitions 8 (exit 0)" "$rc:$(cat "$T/err")" "0:"
        # Nine results change: parents 5 (renamed), 300 and 17 (kid 1300
        # moved between them), 1 (its kid 1001 deleted) and 399.5 (new)
        # rewritten; parent 7 deleted, so its result removed and its three
        # kids (1007, 1407, 1807) left in shop.kids as orphans.
        uri=$SRC py 'c.shop.parents.update_one({"_id": 5}, {"$set": {"name": "changed"}})
c.shop.kids.update_one({"_id": 1300}, {"$set": {"owner": 17}})
c.shop.kids.delete_one({"_id": 1001})
c.shop.parents.delete_one({"_id": 7})
c.shop.parents.insert_one({"_id": 399.5, "name": "between"})'
        two sync --workers 2
        expect_eq "no log: sync --workers 2 rescans by the eight partitions (exit 0), not from a change log" \
            "$rc:$(grep -c 'sync: step 1 (embed) shop.parents: 8 partitions, 2 worker(s)' "$T/err"):$(grep -c 'change log:' "$T/err")" \
            "0:1:0"
        expect_message "no log: ... rewriting the nine results the writes changed, no other" \
            "shop.parents: 1 documents in shop.parents that no range makes (their sources are gone): removed" \
            "sync: plan emb.json: 9 result(s) rewritten or removed"
        two verify --workers 2
        expect_eq "no log: verify --workers 2 then clean (exit 0)" "$rc" "0"
        finalized "no log"
    fi
fi
exit 0
