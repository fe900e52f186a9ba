#!/usr/bin/env bash
# The cut-over's bound on FerretDB with its oplog (issue 49, "Done when":
# finalize --writes-stopped right after run either switches within
# --max-window or stops with nothing switched, and says why), where the
# oplog is slow to read: FerretDB 1.x reads all of local.oplog.rs for its
# last entry (16 s and more at remodel-gen scale 20: run's point) and for
# the entries since a point (each sync).
#   - A, a bound the server meets: finalize --writes-stopped right after
#     run switches (exit 0), the results remodel run's of the sources as
#     the writes left them, the window it reports under the bound.
#   - B, a bound it cannot meet (3 s, the oplog's reads slowed to 30 s
#     each by REMODEL_ONLINE_SLOW_CALL_MS, as FerretDB's are at scale):
#     the read the drain waits for is given up at the bound, not waited
#     for to its end: exit 3, nothing switched (crm's collections, their
#     names and documents, as they were; the plan's record neither
#     finalized nor switching), the message says what took the time (the
#     drain, given up) and what to run; the window it reports is the bound
#     and a margin, the command back well before the slow read's 30 s;
#     then the writes resume, a sync, and finalize with a bound it meets
#     switches.
#   - A signal while sync waits for the oplog's entries since the point
#     (the read slowed to 8 s): sync stops (exit 130), saying where; the
#     same sync then completes.
# WF_SCALE: remodel-gen's scale (default 1; `make online-window-ferret`
# runs 20 without the slowing, the server's own reads as slow as they are).
#   REMODEL=build/remodel bash tests/cli/test_online_window_ferret.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "window on FerretDB: external deployments are not started here (skipped)"; exit 0; }
SCALE=${WF_SCALE:-1}
# At scale the server is slow by itself: no stand-in.
if [ "$SCALE" -ge 10 ]; then SLOW=; else SLOW=30000; fi
GEN=$(dirname "$REMODEL")/remodel-gen
# REMODEL_ONLINE_SLOW_CALL_MS is a hook of the tests' build only.
use_faulty || exit 1
trap 'for p in $(jobs -p); do kill -9 $p 2>/dev/null; done
for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
"$GEN" --out "$T/dump" --scale "$SCALE" --seed 1 >/dev/null 2>&1 || { fail "remodel-gen --scale $SCALE"; exit 0; }

# fresh NAME: a FerretDB with its oplog holding crm at $SCALE, the plan run.
fresh() {
    online_start ferretdb "$T/srv-$1" 0 changelog || return 1
    "$MONGORESTORE" --uri "$uri" --dir "$T/dump" --nsInclude 'crm.*' --noIndexRestore --quiet 2>/dev/null ||
        { fail "$1: restore"; return 1; }
    online run embed --create-indexes
    [ $rc == 0 ] || { fail "$1: run" "$(cat "$T/err")"; return 1; }
}
# writes N: N updates of random tasks (of the first 2000).
writes() {
    py "ids = [d['_id'] for d in c.crm.tasks.find({}, {'_id': 1}).limit(2000)]
for k in range(int(sys.argv[2])):
    c.crm.tasks.update_one({'_id': random.choice(ids)}, {'\$set': {'title': 'w%d' % k}})" "$1"
}
# snapshot: crm's collections by name, each with a digest of its documents.
snapshot() {
    py "import hashlib, bson
for n in sorted(c.crm.list_collection_names()):
    h = hashlib.sha1()
    for d in c.crm[n].find({}).sort('_id', 1):
        h.update(bson.BSON.encode(d))
    print(n, h.hexdigest())"
}
# record: the plan's record's finalized and switch, as "finalized switching".
record() { py "d = c.remodel.plans.find_one({'_id': sys.argv[2]}) or {}
print(bool(d.get('finalized')), 'switch' in d)" "$(pid embed)"; }
# window: the seconds finalize says the writes were stopped.
window() { sed -n 's/^remodel: finalize: the writes were stopped for \([0-9.]*\) s .*/\1/p' "$T/err" | tail -n 1; }
# under SECONDS BOUND: SECONDS is a number below BOUND.
under() { [ -n "$1" ] && python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$1" "$2"; }
# finalized K BOUND: finalize --writes-stopped --max-window BOUND switched,
# as remodel run does the sources as they are, within the bound.
finalized() {
    local k=$1 bound=$2
    offline_run embed crm
    online finalize embed --writes-stopped --max-window "${bound}s"
    [ $rc == 0 ] && pass "$k: exit 0" || fail "$k: exit 0" "$(cat "$T/err")"
    expect_message "$k: ... switched" "finalized: 2 collection(s) switched"
    expect_eq "$k: ... the record finalized" "$(record)" "True False"
    online_same "$k: ... the results are remodel run's" "$T/embed.archive" crm.people=people crm.tasks=tasks
    w=$(window)
    if under "$w" "$bound"; then pass "$k: ... the window it reports ($w s) under the bound"
    else fail "$k: ... the window it reports under the bound" "[$w] s, --max-window ${bound}s: $(grep 'finalize:' "$T/err")"; fi
}

# ---- A: a bound the server meets, right after run ----
if fresh a; then
    finalized "A (scale $SCALE): finalize --writes-stopped right after run, --max-window 600 s" 600
    "$SERVER" stop "$T/srv-a" >/dev/null 2>&1
fi

# ---- B: a bound it cannot meet, then the writes resume and it is met ----
if fresh b; then
    k="B (scale $SCALE): --max-window 3 s"
    before=$(snapshot)
    SECONDS=0
    REMODEL_ONLINE_SLOW_CALL_MS=$SLOW online finalize embed --writes-stopped --max-window 3s
    took=$SECONDS
    expect_eq "$k: exit 3" "$rc" 3
    expect_message "$k: ... says what took the time and what to run" \
        "remodel: finalize: the drain, " "(--max-window 3.0 s): waiting for" \
        "given up at the window's bound" "the drain took" \
        "past --max-window 3.0 s: nothing switched" "remodel online follow" "its stop, nothing switched"
    # The reported window: the bound, then the waiter's next look (0.1 s)
    # and the lease let go on a local server; 5 s more is room enough on
    # a loaded machine and far below a read waited for to its end.
    w=$(window)
    if under "$w" 8; then pass "$k: ... the window it reports ($w s) is the bound and a margin"
    else fail "$k: ... the window it reports is the bound and a margin" "[$w] s: $(grep 'finalize:' "$T/err")"; fi
    # The whole command (the checks before the window too) against the
    # slow read it gave up: waited for, it alone would take 30 s.
    if [ -n "$SLOW" ]; then
        if [ "$took" -lt 20 ]; then pass "$k: ... back in $took s, not after the slow read's 30 s"
        else fail "$k: ... back well before the slow read's 30 s" "$took s"; fi
    fi
    expect_eq "$k: ... crm's collections and documents as they were" "$(snapshot)" "$before"
    expect_eq "$k: ... the record neither finalized nor switching" "$(record)" "False False"
    writes 50
    online sync embed
    [ $rc == 0 ] && pass "$k: the writes resumed, a sync: exit 0" || fail "$k: the writes resumed, a sync: exit 0" "$(cat "$T/err")"
    finalized "$k: then --max-window 600 s" 600
    "$SERVER" stop "$T/srv-b" >/dev/null 2>&1
fi

# ---- a signal while remodel waits for the oplog ----
# interrupted K SLOW WAIT WHERE: a sync, each read of the oplog slowed to
# SLOW ms (none at scale), sent SIGINT once it says it is waiting for WAIT:
# exit 130, stopped WHERE.
interrupted() {
    local k=$1 p got
    # Emptied first: the job truncates it itself, perhaps after the first look.
    : >"$T/sig.err"
    REMODEL_ONLINE_SLOW_CALL_MS=${SLOW:+$2} "$REMODEL" online sync "$T/plans/embed.json" --uri "$uri" \
        >/dev/null 2>"$T/sig.err" &
    p=$!
    for _ in $(seq 1200); do
        grep -q "remodel: waiting for $3" "$T/sig.err" && break
        kill -0 $p 2>/dev/null || break
        sleep 0.1
    done
    kill -INT $p 2>/dev/null
    wait $p
    got=$?
    expect_eq "$k: exit 130" "$got" 130
    cp "$T/sig.err" "$T/err"
    expect_message "$k: ... says it waited, and where it stopped" "remodel: waiting for $3" \
        "stopped by SIGINT $4" "lease released"
}
if fresh sig; then
    k="SIGINT (scale $SCALE)"
    writes 20
    # A sync reads the oplog once, from its point to the end (the wait
    # for its last entry alone is run's and the window's, no longer sync's).
    interrupted "$k in the read of the oplog's entries since the point" 8000 \
        "the change log's entries since the last point" "while reading local.oplog.rs"
    online sync embed
    [ $rc == 0 ] && pass "$k: ... the same sync then completes" || fail "$k: ... the same sync then completes" "$(cat "$T/err")"
    expect_message "$k: ... with the writes" "change log: 20 events"
    "$SERVER" stop "$T/srv-sig" >/dev/null 2>&1
fi
