#!/usr/bin/env bash
# From one deployment to another (--to-uri, issue 54 item 2): the source's
# change log followed into the destination, in both directions: FerretDB
# (its oplog) to mongo-java-server, and mongo-java-server (its change
# streams) to FerretDB. A plan embeds shop.kids into shop.parents while an
# application writer inserts, updates and deletes parents (the drivers)
# and kids (their joined children) on the source:
#  - during the copy: run records the source's log point before it reads;
#  - sync applies the changes from the source's log (not a rescan), said
#    with how many events;
#  - follow while the writer writes, killed (kill -9) mid-way, run again:
#    it resumes from the last point saved; then stopped by SIGINT;
#  - status --json: canCommit weighs the source's log's lag;
#  - status's lag line and --json's toUri.lagMs: one figure, by the
#    source's clock, near the age of writes not applied yet;
#  - the writer stopped, follow catches up: the destination's results
#    equal `remodel run` offline over a mongodump of the source, byte for
#    byte (nothing lost across the kill);
#  - finalize --writes-stopped, a follow running: follow hands its lease
#    over and stops; finalize drains the source's log, says so; the
#    destination under the final names equals the offline run again; the
#    source holds no state database and was not written by remodel;
#  - a source oplog of 1 MiB (FerretDB) that rolls past the recorded
#    point: sync says the history is lost and rescans, and is right;
#  - status's lag by the source's clock with a destination an hour ahead
#    (mongo-java-server under libfaketime);
#  - a source with no log (mongo-java-server without its oplog): sync
#    rescans, status weighs the last verify, the source gains no database.
# CI_KINDS: the directions (default "ferretdb:java java:ferretdb").
#   REMODEL=build/remodel bash tests/cli/test_online_to_uri_follow.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_to_uri.sh"
to_uri_setup "to-uri follow"
to_uri_cleanup() { stop_writer; }
seed() { seed_shop 300 900 0; }
# The application: inserts, updates and deletes of parents and of kids on
# the source ($uri), a few dozen a second, until $T/stop exists; what it
# did in $T/writer.log. Begun once it has written (a few ops).
start_writer() {
    rm -f "$T/stop" "$T/writing"
    uri=$SRC py 'import os, time
rnd, n, ops = random.Random(7), 0, {}
stop = sys.argv[2]
while not os.path.exists(stop):
    k = rnd.randrange(8)
    p, kid = rnd.randrange(320), 1000 + rnd.randrange(1000)
    if k == 0:
        c.shop.parents.update_one({"_id": p}, {"$set": {"name": "w%d" % n}}, upsert=True)
    elif k == 1:
        c.shop.parents.delete_one({"_id": rnd.randrange(300)})
    elif k == 2:
        c.shop.kids.update_one({"_id": kid}, {"$set": {"x": -n}})
    elif k == 3:
        c.shop.kids.update_one({"_id": kid}, {"$set": {"owner": rnd.randrange(320)}})
    elif k == 4:
        c.shop.kids.delete_one({"_id": kid})
    elif k == 5:
        c.shop.kids.insert_one({"_id": 5000 + n, "owner": rnd.randrange(320), "x": n})
    elif k == 6:
        c.shop.parents.insert_one({"_id": 10000 + n, "name": "new%d" % n})
    else:
        c.shop.kids.insert_one({"_id": 9000000 + n, "owner": 10000 + rnd.randrange(n + 1), "x": 0})
    ops[k] = ops.get(k, 0) + 1
    n += 1
    if n == 20:
        open(sys.argv[3], "w").close()
    time.sleep(0.01)
print(n, sorted(ops.items()))' "$T/stop" "$T/writing" >"$T/writer.log" 2>&1 &
    writer_started
}
# follow in the background, its messages in $T/follow.err; its pid in $follower.
follow_bg() {
    : >"$T/follow.err"
    "$REMODEL" online follow "$P" --uri "$SRC" --to-uri "$DST" --pause 200ms --sample 50 \
        >/dev/null 2>"$T/follow.err" &
    follower=$!
}
# Waits until the plan's record shows follow round N or more of this
# follow ($follower: the record names an earlier one's rounds until the
# new one's first; finalize asks only the follow the record names), up
# to 900 s: a round into FerretDB took over 240 s with the machine at a
# load of 20 (a deadline only bounds a hang; the wait ends at the round).
wait_round() {
    local r
    for ((w = 0, wend = SECONDS + 900; SECONDS < wend; w++)); do
        r=$(uri=$DST py 'd = c.remodel.plans.find_one({"follow.round": {"$exists": True}})
print(d["follow"]["round"] if d and d["follow"].get("pid") == int(sys.argv[2]) else 0)' "$follower")
        [ "$r" -ge "$1" ] && return 0
        kill -0 "$follower" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}
# The results, under their final names on the destination from the start.
results() { echo shop.kids=kids,shop.parents=parents; }

for dir in ${CI_KINDS:-ferretdb:java java:ferretdb}; do
    from=${dir%%:*} to=${dir##*:}
    d="$from->$to"
    pair_start "$from" "$to" || continue

    # ---- the copy, the application writing ----
    start_writer
    two run --batch-size 20 --pause 20ms
    expect_eq "$d: run --to-uri with the application writing (exit 0)" "$rc" "0"
    [ "$from" = ferretdb ] && mode="oplog (from ts Timestamp(" || mode="change streams (resume point {\"_data\":\""
    expect_message "$d: ... the source's log point recorded before the copy" "capture: $mode" \
        "recorded now, before the copy"

    echo "# $d: run at ${SECONDS}s"
    # ---- sync: the source's log, not a rescan ----
    two sync
    expect_eq "$d: sync --to-uri (exit 0)" "$rc" "0"
    n=$(sed -n "s/.*sync: the source's change log: \([0-9][0-9]*\) events since .*/\1/p" "$T/err")
    expect_eq "$d: ... applies the writes from the source's change log, not a rescan" \
        "$([ "${n:-0}" -gt 0 ] && echo yes || echo "no: $(head -c 600 "$T/err")"):$(grep -c 'rescanned' "$T/err")" "yes:0"

    echo "# $d: sync at ${SECONDS}s"
    # ---- follow, killed (kill -9) mid-way, run again ----
    follow_bg
    wait_round 2
    expect_eq "$d: follow --to-uri follows the source's log in rounds" "$?" "0"
    sleep 0.$((RANDOM % 9 + 1))
    kill -9 "$follower" 2>/dev/null
    wait "$follower" 2>/dev/null
    r1=$(uri=$DST py 'print(c.remodel.plans.find_one()["follow"]["round"])')
    follow_bg
    uri=$DST py 'import time
end = time.monotonic() + 600
while time.monotonic() < end:
    d = c.remodel.plans.find_one()
    if d["follow"]["round"] != int(sys.argv[2]) or d["follow"]["pid"] != int(sys.argv[3]): break
    time.sleep(0.2)' "$r1" "$follower"
    wait_round 1
    expect_eq "$d: follow run again after kill -9 takes the plan over and goes on" "$?" "0"

    echo "# $d: follow resumed at ${SECONDS}s"
    # ---- status --json: the lag from the source's log ----
    two status --json --max-lag 1h
    expect_eq "$d: status --json: the lag weighed is the source's change log's" \
        "$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["toUri"]; print(t["lagFrom"], type(t["lagMs"]).__name__, type(t["lagEvents"]).__name__)' "$T/out")" \
        "the source's change log int int"

    echo "# $d: status at ${SECONDS}s"
    # ---- the writer stopped: follow catches up, then SIGINT ----
    stop_writer
    expect_eq "$d: the writer wrote inserts, updates and deletes of parents and kids" \
        "$(python3 -c 'import sys, ast; n, ops = open(sys.argv[1]).read().split(" ", 1); print(int(n) > 100, len(ast.literal_eval(ops)))' "$T/writer.log")" "True 8"
    r=$(uri=$DST py 'print(c.remodel.plans.find_one()["follow"]["round"])')
    wait_round $((r + 2))
    kill -INT "$follower"
    wait "$follower"
    expect_eq "$d: follow stopped by SIGINT (exit 0), saying so" \
        "$?:$(grep -c 'follow: plan emb.json: stopped after [0-9]* rounds (interrupted)' "$T/follow.err")" "0:1"
    uri=$SRC offline_run emb shop
    uri=$DST online_same "$d: after kill -9 and a resumed follow, the results equal remodel run offline over the source's dump, byte for byte" \
        "$T/emb.archive" $(results | tr , ' ')
    two verify --sample 50 -q
    two status --json --max-lag 1h
    expect_eq "$d: status --json: canCommit after a clean sampled verify, no event of the source's log left" \
        "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["canCommit"], d["toUri"]["lagEvents"], d["toUri"]["lagMs"], d["toUri"]["why"])' "$T/out")" "True 0 0 None"

    echo "# $d: caught up, compared at ${SECONDS}s"
    # ---- status's lag, text and --json: one figure, by the source's clock ----
    # A sync saves the point now; writes on the source, none applied, 4 s
    # old: the text line's seconds and --json's lagMs agree, and are near
    # 4 s (a source whose events say no time: at most the time since the
    # point, which the writes follow at once).
    two sync
    uri=$SRC py 'c.shop.parents.update_many({"_id": {"$lt": 5}}, {"$set": {"lag": 1}})'
    sleep 4
    two status
    cp "$T/out" "$T/status.txt"
    text=$(sed -n 's/^lag: \(at most \)\{0,1\}\([0-9][0-9]*\) s: \([0-9]*\) events.*/\1\2 \3/p' "$T/out")
    two status --json --max-lag 1h
    json=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["toUri"]
print("%s%d %d" % ("at most " if t["lagAtMost"] else "", t["lagMs"] // 1000, t["lagEvents"]))' "$T/out")
    # The seconds: each status takes its own (seconds on a loaded
    # machine), and --json's comes after the text's.
    expect_eq "$d: status's lag line and --json's lagMs: the same bound or not, events; seconds the writes' 4 s and more, --json's from the text's on" \
        "$(python3 -c 'import sys
def p(s):
    b = s.startswith("at most ")
    s, e = s.replace("at most ", "").split()
    return b, int(s), int(e)
(tb, ts, te), (jb, js, je) = p(sys.argv[1]), p(sys.argv[2])
print(tb == jb, te == je > 0, ts - 1 <= js <= ts + 60, 4 <= ts <= 120, 4 <= js <= 180)' "$text" "$json")" \
        "True True True True True"
    [ -n "$text" ] || grep '^lag' "$T/status.txt" >&2
    echo "#   lag: text [$text], --json [$json]" >&2
    two sync
    uri=$SRC offline_run emb shop
    # ---- finalize: a running follow hands its lease over; the drain ----
    follow_bg
    wait_round 1
    two finalize --writes-stopped --max-window 0
    expect_eq "$d: finalize --writes-stopped (exit 0)" "$rc" "0"
    expect_message "$d: ... asks the running follow for the lease" \
        "finalize: asking the follow of plan emb.json"
    # A finalize that failed asked nothing: the follow would run on.
    [ "$rc" == 0 ] || kill -INT "$follower" 2>/dev/null
    wait "$follower"
    frc=$?
    expect_eq "$d: ... which hands it over and stops (exit 0), saying so" \
        "$frc:$(grep -c 'follow: plan emb.json: stopped after [0-9]* rounds (finalize asked for the lease)' "$T/follow.err")" "0:1"
    # What both said when finalize failed: a loaded run once waited out
    # the ten minutes finalize gives a follow to let go, and the files go
    # with $T.
    if [ "$rc" != 0 ]; then
        echo "# $d: finalize exited $rc; its last messages:" >&2
        tail -n 20 "$T/err" | sed 's/^/#   /' >&2
        echo "# $d: the follow exited $frc; its last messages:" >&2
        tail -n 40 "$T/follow.err" | sed 's/^/#   /' >&2
    fi
    expect_message "$d: ... drains the source's change log, said" \
        "finalize: plan emb.json committed on" "the drain applied 0 event(s) of the source's change log"
    uri=$DST online_same "$d: the destination equals remodel run offline over the source's dump, byte for byte" \
        "$T/emb.archive" shop.parents=parents shop.kids=kids
    expect_eq "$d: the source holds no state database" \
        "$(uri=$SRC py 'print("remodel" in c.list_database_names(), sorted(c.shop.list_collection_names()))')" \
        "False ['kids', 'parents']"
    echo "# $d: finalized at ${SECONDS}s"
    for s in "$T"/srv-*; do "$SERVER" stop "$s" >/dev/null 2>&1; done
done

# ---- a source oplog too small: the point rolls off, sync rescans ----
if [[ " ${CI_KINDS:-ferretdb:java} " == *" ferretdb:"* ]] &&
    PEERS_OPLOG_BYTES=1048576 online_start ferretdb "$T/srv-small" 0 changelog; then
    SRC=$uri
    seed
    if online_start java "$T/srv-dst-small" 0; then
        DST=$uri
        two run -q
        expect_eq "small oplog: run --to-uri (exit 0)" "$rc" "0"
        uri=$SRC py 'for r in range(3):
    c.shop.parents.update_many({}, {"$set": {"pad": "x" * 4000, "r": r}})'
        for ((i = 0; i < 40; i++)); do
            two status
            grep -q '^history lost' "$T/out" && break
            sleep 0.5
        done
        echo "# small oplog: rolled off at ${SECONDS}s"
        expect_eq "small oplog: status says the source's point rolled off" "$(grep -c '^history lost' "$T/out")" "1"
        two sync
        expect_message "small oplog: sync says the history is lost, once, and rescans" \
            "sync: history lost since Timestamp(" "(the source's change log no longer holds it): every step rescanned in full"
        expect_eq "small oplog: ... said once" "$(grep -c 'history lost' "$T/err")" "1"
        uri=$SRC offline_run emb shop
        uri=$DST online_same "small oplog: after the rescan, the results equal remodel run offline, byte for byte" \
            "$T/emb.archive" $(results | tr , ' ')
    fi
fi

echo "# small oplog: done at ${SECONDS}s"
# ---- status's lag with a destination whose clock runs an hour ahead ----
# The events' times are the source's: the lag is by the source's clock,
# the text line's and --json's alike, never the destination's (an hour
# off here: mongo-java-server under libfaketime, which FerretDB, a Go
# program reading the clock itself, does not see).
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
if [[ " ${CI_KINDS:-ferretdb:java} " == *" ferretdb:"* ]] && [ -e "$FAKETIME_LIB" ] &&
    online_start ferretdb "$T/srv-clock-src" 0 changelog; then
    SRC=$uri
    seed
    if LD_PRELOAD=$FAKETIME_LIB FAKETIME=+1h FAKETIME_DONT_FAKE_MONOTONIC=1 \
        online_start java "$T/srv-clock-dst" 0; then
        DST=$uri
        ahead=$(uri=$DST py 'import datetime
print(round((c.admin.command("isMaster")["localTime"] - datetime.datetime.utcnow()).total_seconds() / 60))')
        two run -q
        expect_eq "clock: run --to-uri to a destination whose clock is ${ahead} min ahead (exit 0)" "$rc:$ahead" "0:60"
        uri=$SRC py 'c.shop.parents.update_many({"_id": {"$lt": 5}}, {"$set": {"clock": 1}})'
        sleep 3
        two status
        text=$(sed -n 's/^lag: \([0-9][0-9]*\) s: .*/\1/p' "$T/out")
        two status --json --max-lag 1h
        json=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["toUri"]["lagMs"] // 1000)' "$T/out")
        # At least the 3 s slept; each status itself takes seconds on a
        # loaded machine, so the bound that matters is far from the hour.
        expect_eq "clock: status's lag line and --json's lagMs, by the source's clock: the writes' 3 s and more, not the hour" \
            "$([ -n "$text" ] && [ -n "$json" ] && [ "$text" -ge 3 ] && [ "$text" -le 600 ] &&
                [ "$json" -ge $((text - 1)) ] && [ "$json" -le $((text + 600)) ] && echo yes)" yes
        echo "#   clock: text [$text], --json [$json]" >&2
    fi
fi
# ---- a source without a change log (mongo-java-server without its oplog) ----
# Nothing to follow: sync rescans; the source is not written, nor is a
# database made there by asking for an oplog it does not keep.
if online_start java "$T/srv-plain" 0; then
    SRC=$uri
    seed
    if online_start java "$T/srv-dst-plain" 0; then
        DST=$uri
        two run -q
        expect_eq "no log: run --to-uri (exit 0)" "$rc" "0"
        uri=$SRC py 'c.shop.parents.update_one({"_id": 3}, {"$set": {"name": "plain"}})'
        two sync
        expect_message "no log: sync rescans and rewrites what changed" \
            "sync: plan emb.json: 1 result(s) rewritten or removed"
        expect_eq "no log: ... not from a change log" "$(grep -c 'change log:' "$T/err")" "0"
        two status --json --max-lag 1h
        expect_eq "no log: status --json: the lag is the last clean verify's" \
            "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["toUri"]["lagFrom"])' "$T/out")" \
            "the last clean verify"
        expect_eq "no log: the source's databases as they were" \
            "$(uri=$SRC py 'print(c.list_database_names())')" "['shop']"
    fi
fi
