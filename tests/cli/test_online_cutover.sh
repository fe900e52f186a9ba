#!/usr/bin/env bash
# The online cut-over (issue 49; docs/online.md, "Finalize"), on FerretDB
# (its oplog) and mongo-java-server (change streams), each with its change
# log, at two scales of the sample (remodel-gen --scale):
#   - the documented flow (run, writes, sync, verify --sample 1000, 100
#     more writes, finalize --writes-stopped): finalize's drain reads what
#     changed, not everything: nothing "rescanned in full" (remodel's own
#     probe collections are in the state database, where no read of the
#     sources' change log sees their drops: mongo-java-server's drop events
#     name no collection), its documents read below a bound that does not
#     grow with the data; no probe is left in the sources' database.
#   - the budget: finalize without --writes-stopped prepares (a sync, the
#     indexes, the probe, a point, timed) and says the window's estimate;
#     --writes-stopped then switches within --max-window; with a bound the
#     estimate is over, or one the drain passes, it stops before the first
#     rename, nothing switched (no backup, the sources as they were), says
#     what to run, exits 3; a finalize after it switches.
#   - a sync under a steady writer (an update every 20 ms) ends at the
#     point it took at its start: while the writer still writes, with the
#     events up to its start, not all the writer's; status's catch-up ETA
#     after a follow round slower than an event a second says that rate.
#   REMODEL=build/remodel bash tests/cli/test_online_cutover.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "cutover: external deployments are not started here (skipped)"; exit 0; }
GEN=$(dirname "$REMODEL")/remodel-gen
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"

# writes N: N updates of random tasks (of the first 2000).
writes() {
    py "ids = [d['_id'] for d in c.crm.tasks.find({}, {'_id': 1}).limit(2000)]
for k in range(int(sys.argv[2])):
    c.crm.tasks.update_one({'_id': random.choice(ids)}, {'\$set': {'title': 'w%d' % k}})" "$1"
}
# drained WORD: the number before WORD in finalize's drain line.
drained() { sed -n "s/.*remodel: sync: change log: .* \([0-9][0-9]*\) $1.*/\1/p" "$T/err" | tail -n 1; }

for kind in $(online_kinds); do
    for scale in 1 3; do
        k="$kind: scale $scale"
        rm -rf "$T/dump"
        "$GEN" --out "$T/dump" --scale $scale >/dev/null 2>&1 || { fail "$k: remodel-gen"; continue; }
        online_start "$kind" "$T/srv-$kind-$scale" 0 changelog || continue
        "$MONGORESTORE" --uri "$uri" --dir "$T/dump" --nsInclude 'crm.*' --noIndexRestore --quiet 2>/dev/null ||
            { fail "$k: restore"; continue; }
        fresh_log "$T/srv-$kind-$scale" || continue
        online run embed --create-indexes
        [ $rc == 0 ] || { fail "$k: run" "$(cat "$T/err")"; continue; }
        writes 100
        online sync embed
        [ $rc == 0 ] || { fail "$k: sync" "$(cat "$T/err")"; continue; }
        online verify embed --sample 1000
        [ $rc == 0 ] || { fail "$k: verify --sample" "$(cat "$T/err")"; continue; }
        writes 100
        # No bound here: what the drain reads is checked, not how long a
        # loaded machine takes (the bound's outcomes are below).
        online finalize embed --writes-stopped --max-window 0
        if [ $rc == 0 ] && ! grep -q "rescanned" "$T/err" && grep -q "finalized" "$T/err"; then
            pass "$k: finalize drains what changed, nothing rescanned"
        else
            fail "$k: finalize drains what changed, nothing rescanned" "rc $rc: $(grep -E 'rescan|error' "$T/err")"
        fi
        # 100 updates of tasks: their owners' people recomputed, each
        # reading its tasks (a few each): far below either scale's 3000+.
        read=$(drained read)
        if [ -n "$read" ] && [ "$read" -lt 1000 ]; then
            pass "$k: the drain read $read documents (bounded by the writes)"
        else
            fail "$k: the drain read $read documents (bounded by the writes)" "$(grep 'change log' "$T/err")"
        fi
        left=$(py "print(len([n for n in c.crm.list_collection_names() if '_probe' in n]))")
        expect_eq "$k: no probe collection in the sources' database" "$left" 0
        "$SERVER" stop "$T/srv-$kind-$scale" >/dev/null 2>&1
    done
done

# The budget, on a server of each kind at scale 1.
# switched: whether crm.tasks was switched (its backup is there).
switched() { py "print(any(n.endswith('_backup') for n in c.crm.list_collection_names()))"; }
for kind in $(online_kinds); do
    k="$kind: budget"
    rm -rf "$T/dump"
    "$GEN" --out "$T/dump" --scale 1 >/dev/null 2>&1 || { fail "$k: remodel-gen"; continue; }
    online_start "$kind" "$T/srv-$kind-budget" 0 changelog || continue
    "$MONGORESTORE" --uri "$uri" --dir "$T/dump" --nsInclude 'crm.*' --noIndexRestore --quiet 2>/dev/null ||
        { fail "$k: restore"; continue; }
    fresh_log "$T/srv-$kind-budget" || continue
    online run embed --create-indexes
    [ $rc == 0 ] || { fail "$k: run" "$(cat "$T/err")"; continue; }
    writes 50
    # The drain passes a bound of a millisecond: stopped before the switch.
    online finalize embed --writes-stopped --max-window 1ms
    expect_eq "$k: a drain past --max-window: exit 3" "$rc" 3
    expect_message "$k: ... says so, nothing switched, what to run" "past --max-window 1 ms" \
        "the drain took" "nothing switched" "remodel online follow" "its stop, nothing switched"
    expect_eq "$k: ... no collection renamed" "$(switched)" False
    writes 50
    online finalize embed
    [ $rc == 0 ] && pass "$k: finalize without --writes-stopped: exit 0" ||
        fail "$k: finalize without --writes-stopped: exit 0" "$(cat "$T/err")"
    expect_message "$k: ... prepares and says the estimate" "preparing the cut-over" \
        "the cut-over's window, estimated: about" "renames at" "--writes-stopped"
    expect_eq "$k: ... nothing renamed" "$(switched)" False
    online finalize embed --writes-stopped --max-window 1ms
    expect_eq "$k: an estimate over --max-window: exit 3" "$rc" 3
    expect_message "$k: ... stopped before anything, saying the estimate" "the checks took" \
        "the estimate about" "nothing switched"
    expect_eq "$k: ... no collection renamed" "$(switched)" False
    writes 20
    online finalize embed --writes-stopped --max-window 0
    [ $rc == 0 ] && pass "$k: then finalize --writes-stopped switches" ||
        fail "$k: then finalize --writes-stopped switches" "$(cat "$T/err")"
    expect_message "$k: ... by the prepare's estimate, without a probe" "estimated by the prepare" \
        "finalized: 2 collection(s) switched"
    expect_eq "$k: ... switched" "$(switched)" True
    "$SERVER" stop "$T/srv-$kind-budget" >/dev/null 2>&1
done

# A sync under a writer that updates a task every 20 ms for up to 60 s:
# it ends while the writer still writes (the writer's file says it had
# not stopped), with fewer events than the writer made by then.
for kind in $(online_kinds); do
    k="$kind: steady writer"
    rm -rf "$T/dump"
    "$GEN" --out "$T/dump" --scale 1 >/dev/null 2>&1 || { fail "$k: remodel-gen"; continue; }
    online_start "$kind" "$T/srv-$kind-writer" 0 changelog || continue
    "$MONGORESTORE" --uri "$uri" --dir "$T/dump" --nsInclude 'crm.*' --noIndexRestore --quiet 2>/dev/null ||
        { fail "$k: restore"; continue; }
    fresh_log "$T/srv-$kind-writer" || continue
    online run embed --create-indexes
    [ $rc == 0 ] || { fail "$k: run" "$(cat "$T/err")"; continue; }
    rm -f "$T/writer.stop" "$T/writer.done"
    py "import time, os
ids = [d['_id'] for d in c.crm.tasks.find({}, {'_id': 1}).limit(500)]
t0 = time.time(); n = 0
while time.time() - t0 < 60 and not os.path.exists(sys.argv[2]):
    c.crm.tasks.update_one({'_id': random.choice(ids)}, {'\$set': {'title': 'w%d' % n}}); n += 1
    time.sleep(0.02)
open(sys.argv[3], 'w').write(str(n))" "$T/writer.stop" "$T/writer.done" &
    writer=$!
    sleep 2
    online sync embed
    if [ -e "$T/writer.done" ]; then ended=after; else ended=before; fi
    touch "$T/writer.stop"
    wait $writer
    expect_eq "$k: the sync exits 0" "$rc" 0
    expect_eq "$k: ... and ends while the writer still writes" "$ended" before
    ev=$(events)
    made=$(cat "$T/writer.done" 2>/dev/null)
    if [ -n "$ev" ] && [ -n "$made" ] && [ "$ev" -lt "$made" ]; then
        pass "$k: ... with the events up to its start ($ev of the writer's $made)"
    else
        fail "$k: ... with the events up to its start" "events [$ev], the writer's [$made]: $(grep 'change log' "$T/err")"
    fi
    # status's catch-up ETA after a follow round slower than an event a
    # second: its rate said as such, never "0 events/s".
    writes 5
    py "c.remodel.plans.update_one({'_id': sys.argv[2]}, {'\$set': {'followRate': {'events': 5, 'ms': 10000}}})" "$(pid embed)"
    run_rm online status "$T/plans/embed.json" --uri "$uri"
    got=$(grep '^lag' "$T/out")
    if [[ $got == *"at follow's one event every 2.0 s"* ]]; then
        pass "$k: status: a slow follow's rate, not 0 events/s"
    else
        fail "$k: status: a slow follow's rate, not 0 events/s" "got [$got]"
    fi
    "$SERVER" stop "$T/srv-$kind-writer" >/dev/null 2>&1
done
