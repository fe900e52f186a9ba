#!/usr/bin/env bash
# A follow busy in a long phase hands its lease to finalize within a few
# seconds (issue 65 item 4), an application writing the whole time: on
# FerretDB with its oplog, whose reads of the change log are slow at scale
# (slowed here to 30 s each by REMODEL_ONLINE_SLOW_CALL_MS, as
# test_online_window_ferret.sh does), follow's round waits on such a read;
# finalize, started then, asks for the lease:
#   - follow stops within a few seconds, not at the read's end (30 s):
#     "stopped after N rounds (finalize asked for the lease)", exit 0;
#   - finalize (the prepare) takes the lease and completes (exit 0), well
#     before the slow read would have ended, its estimate said;
#   - finalize --writes-stopped then switches (exit 0), the results equal
#     remodel run offline over the sources as the writer left them.
# Also, in place of a prepare, the estimate of a finalize with
# --full-verify counts the verify's reading of every result ("the
# verify ... (every result read)").
#   REMODEL=build/remodel bash tests/cli/test_online_handover.sh
. "$(dirname "$0")/lib.sh"
# REMODEL_ONLINE_SLOW_CALL_MS is a hook of the tests' build only.
use_faulty || exit 1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "handover: external deployments are not started here (skipped)"; exit 0; }
trap '[ -f "$T/stop" ] || touch "$T/stop"; for p in $(jobs -p); do kill $p 2>/dev/null; done; wait
for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
kids_plan emb shop

online_start ferretdb "$T/srv-f" 0 changelog || exit 0
py 'c.shop.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(200)])
c.shop.kids.insert_many([{"_id": 1000 + i, "owner": i % 200, "x": i} for i in range(600)])
c.shop.kids.create_index("owner")'
online run emb -q
expect_eq "run (exit 0)" "$rc" "0"

# The application: updates and inserts of kids until $T/stop exists.
py 'import os, time
n = 0
while not os.path.exists(sys.argv[2]):
    c.shop.kids.update_one({"_id": 1000 + n % 600}, {"$set": {"x": -n}})
    if n % 7 == 0:
        c.shop.kids.insert_one({"_id": 5000 + n, "owner": n % 200, "x": n})
    n += 1
    time.sleep(0.02)' "$T/stop" >/dev/null 2>&1 &
writer=$!

: >"$T/follow.err"
REMODEL_ONLINE_SLOW_CALL_MS=30000 "$REMODEL" online follow "$T/plans/emb.json" --uri "$uri" \
    --pause 200ms >/dev/null 2>"$T/follow.err" &
follower=$!
# Its checks read the log once before it takes the lease; the second wait
# is its round's, the lease held.
for ((w = 0, wend = SECONDS + 240; SECONDS < wend; w++)); do
    [ "$(grep -c 'waiting for' "$T/follow.err")" -ge 2 ] && break
    kill -0 "$follower" 2>/dev/null || break
    sleep 0.2
done
expect_eq "follow's round waits on a slow read of the change log (30 s), the lease held" \
    "$(grep -c 'waiting for' "$T/follow.err"):$(py 'print(sys.argv[2] in (c.remodel.leases.find_one() or {}).get("owner", ""))' ":$follower:")" "2:True"

# The round's slow read began at most here: follow must stop before it
# ends (30 s from its start), whatever the load; a loaded machine may take
# more than a few seconds to pass the request on.
t0=$SECONDS
# Emptied first: the job truncates it itself, perhaps after the first look.
: >"$T/err"
"$REMODEL" online finalize "$T/plans/emb.json" --uri "$uri" --max-window 0 >"$T/out" 2>"$T/err" &
finalizer=$!
for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do
    kill -0 "$follower" 2>/dev/null || break
    sleep 0.1
done
took=$((SECONDS - t0))
kill "$follower" 2>/dev/null
wait "$follower"
frc=$?
wait "$finalizer"
rc=$?
echo "# follow handed its lease over in about $took s, in a read slowed to 30 s"
expect_eq "finalize (the prepare) while follow waited: it asks, follow stops (exit 0), finalize completes (exit 0)" \
    "$rc:$frc:$(grep -c 'finalize: asking the follow of plan emb.json' "$T/err"):$(grep -c 'stopped after [0-9]* rounds (finalize asked for the lease)' "$T/follow.err")" \
    "0:0:1:1"
expect_eq "... before the slow read's end (30 s from its start)" \
    "$([ "$took" -lt 30 ] && echo yes || echo "no: $took s")" "yes"
expect_message "... its estimate said" "finalize: the cut-over's window, estimated: about"

touch "$T/stop"
wait "$writer"
offline_run emb shop
online finalize emb --writes-stopped --max-window 0
expect_eq "finalize --writes-stopped (exit 0)" "$rc" "0"
online_same "the results equal remodel run offline over the sources as the writer left them" \
    "$T/emb.archive" shop.parents=parents

# ---- --full-verify: the verify's reading in the estimate ----
py 'c.drop_database("shop"); c.drop_database("remodel")'
py 'c.shop.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(200)])
c.shop.kids.insert_many([{"_id": 1000 + i, "owner": i % 200, "x": i} for i in range(600)])
c.shop.kids.create_index("owner")'
online run emb -q
online finalize emb --full-verify
expect_eq "finalize --full-verify prepares (exit 0), its estimate counting the verify of every result" \
    "$rc:$(grep -c 'finalize: the cut-over.s window, estimated: about .*, the verify [0-9.]* [a-z]* (every result read)' "$T/err")" "0:1"
