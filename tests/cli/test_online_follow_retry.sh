#!/usr/bin/env bash
# follow retries every server call it makes (--retry-for), within one
# deployment (test_online_to_uri_kill.sh does it from one to another), on
# FerretDB (its oplog) and mongo-java-server (its change streams), a plan
# embedding shop.kids into shop.parents, the application's writes on the
# sources before each follow. A follow counted by the fault layer
# (shell-ext/conn/online_fault.c) names its calls; then a follow with the
# connection cut at one of them, before it is sent (cut) or after it was
# applied, its reply lost (cut-after), at the calls outside a round's sync:
#  - its connection's first call (the ping), and the first read of the
#    plan's record (the checks before the rounds);
#  - the lease's fence inserted and the lease written (cut-after: a take
#    retried takes it once, and the plan is free after the follow);
#  - the $unset of a handover after the lease;
#  - the round's note in the plan's record (cut-after: the round is
#    counted once) and the read of the handover flag after it.
# Each: the follow retries (the driver retries some reads itself), verifies
# its sample, stops at SIGINT
# (exit 0) after one round; a sync then takes the lease (exit 0) and a
# verify finds every result as the sources make it.
#   REMODEL=build/remodel bash tests/cli/test_online_follow_retry.sh
. "$(dirname "$0")/lib.sh"
use_faulty || exit 1
# The fault layer is the tests' build's only: the installed remodel-online
# never reads REMODEL_ONLINE_FAULT (a spec it cannot read is no error
# there, where the tests' build refuses it before it connects).
REMODEL_ONLINE_FAULT=nonsense "$REMODEL_PRODUCT" online status "$ROOT/dumps/plans/embed-tasks.json" \
    --uri mongodb://127.0.0.1:1/ >/dev/null 2>"$T/perr"
prc=$?
REMODEL_ONLINE_FAULT=nonsense "$REMODEL" online status "$ROOT/dumps/plans/embed-tasks.json" \
    --uri mongodb://127.0.0.1:1/ >/dev/null 2>"$T/ferr"
frc=$?
if [ $prc -ne 0 ] && ! grep -q REMODEL_ONLINE_FAULT "$T/perr" && [ $frc -ne 0 ] &&
    grep -q 'REMODEL_ONLINE_FAULT: expected' "$T/ferr"; then
    pass "fault layer: in the tests' build only (the installed one ignores REMODEL_ONLINE_FAULT)"
else
    fail "fault layer: in the tests' build only" "installed: exit $prc, $(head -c 300 "$T/perr"); tests' build: exit $frc, $(head -c 300 "$T/ferr")"
fi
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "follow retry: external deployments are not started here (skipped)"; exit 0; }
trap '[ "$BASHPID" != "$$" ] || { for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"; }' EXIT
mkdir -p "$T/plans"
kids_plan emb shop
P=$T/plans/emb.json

# writes SEED: the application's writes on the sources: parents renamed,
# kids moved to another parent, a kid added.
writes() {
    py 'seed = int(sys.argv[2]); rnd = random.Random(seed)
for n in range(20):
    c.shop.parents.update_one({"_id": rnd.randrange(100)}, {"$set": {"name": "w%d.%d" % (seed, n)}})
    c.shop.kids.update_one({"_id": 1000 + rnd.randrange(300)}, {"$set": {"owner": rnd.randrange(100)}})
c.shop.kids.insert_one({"_id": 100000 + seed, "owner": seed % 100, "x": seed})' "$1"
}
# follow_at SPEC: follow under the fault layer (SPEC), --retry-for 5s,
# rounds a minute apart, stopped by SIGINT once its first round's sample
# is verified (or after 60 s); its status in $frc, stderr in $T/ferr, its
# calls in $T/flog.
follow_at() {
    local w p
    rm -f "$T/flog"
    : >"$T/ferr" # before the job starts: said below reads this follow's words only
    REMODEL_ONLINE_FAULT=$1 REMODEL_ONLINE_FAULT_LOG=$T/flog "$REMODEL" online follow "$P" \
        --uri "$uri" --pause 60s --sample 20 --retry-for 5s >/dev/null 2>"$T/ferr" &
    p=$!
    for ((w = 0, wend = SECONDS + 240; SECONDS < wend; w++)); do
        grep -q "documents verified" "$T/ferr" && break
        kill -0 $p 2>/dev/null || break
        sleep 0.05
    done
    kill -INT $p 2>/dev/null
    wait $p
    frc=$?
}
# call N KIND TARGET...: the number of the Nth call of the counted follow
# whose command is KIND on TARGET (a collection, "-" for none).
call() { awk -v n="$1" -v k="$2" -v t="$3" '$1 != "-" && $2 == k && $4 == t && ++m == n {print $1}' "$T/count.flog"; }

for kind in ferretdb java; do
    online_start "$kind" "$T/srv-$kind" 0 changelog || continue
    py 'c.shop.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(100)])
c.shop.kids.insert_many([{"_id": 1000 + i, "owner": i % 100, "x": i} for i in range(300)])
c.shop.kids.create_index("owner")'
    online run emb -q
    expect_eq "$kind: run (exit 0)" "$rc" 0
    writes 1
    follow_at count
    cp "$T/flog" "$T/count.flog"
    expect_eq "$kind: follow under the layer, counting: one round, its sample, stopped by SIGINT (exit 0)" \
        "$frc:$(grep -c 'stopped after 1 rounds (interrupted)' "$T/ferr")" "0:1"
    # The round's note: the last update of the plan's record before the
    # sample's reads (the update after it records the sample).
    note=$(awk '$1 != "-" && $2 == "update" && $4 == "plans" {print $1}' "$T/count.flog" | tail -n 2 | head -n 1)
    unset_at=$(awk -v l="$(call 1 update leases)" '$1 != "-" && $1 > l && $2 == "update" && $4 == "plans" {print $1; exit}' "$T/count.flog")
    flag=$(awk -v l="$note" '$1 != "-" && $1 > l && $2 == "find" && $4 == "plans" {print $1; exit}' "$T/count.flog")
    points="cut:$(call 1 ping -) cut:$(call 1 find plans) cut-after:$(call 1 insert fences)
cut-after:$(call 1 update leases) cut:$unset_at cut-after:$note cut:$flag"
    for pt in $points; do
        how=${pt%%:*} k=${pt##*:}
        n="$kind: follow, call $k ($(awk -v k="$k" '$1 == k {print $2 " " $4}' "$T/count.flog")) $how"
        [ -n "$k" ] || { fail "$n: found in the counted follow's calls" "$(cat "$T/count.flog" | head -n 40)"; continue; }
        writes $((k + 10))
        follow_at "any:$k:$how"
        expect_eq "$n: the fault came there; the follow retried, verified its sample, stopped by SIGINT after one round (exit 0)" \
            "$(sed -n 's/^remodel-online: fault layer: \(call [0-9]*\) .*/\1/p' "$T/ferr" | head -n 1):$frc:$(grep -c 'documents verified' "$T/ferr"):$(grep -c 'stopped after 1 rounds (interrupted)' "$T/ferr")" \
            "call $k:0:1:1"
        [ $frc == 0 ] || sed 's/^/  /' "$T/ferr" | tail -n 6 >&2
        expect_eq "$n: ... the round counted once in the plan's record" \
            "$(py 'print(c.remodel.plans.find_one({"follow.round": {"$exists": True}})["follow"]["round"])')" 1
        online sync emb -q
        expect_eq "$n: ... then a sync takes the lease (exit 0)" "$rc:$(head -c 300 "$T/err")" "0:"
    done
    online verify emb -q
    expect_eq "$kind: verify after every retried follow: every result as the sources make it (exit 0)" "$rc" 0
    "$SERVER" stop "$T/srv-$kind" >/dev/null 2>&1
done
