#!/usr/bin/env bash
# The tests' hooks are the tests' build's only (shell-ext/conn/
# online_fault.c answers them; the installed remodel-online links
# online_fault_off.c, which answers none). On the in-memory server with its
# oplog, a plan embedding kids into parents, run then followed, synced and
# finalized by each build, each command with a hook set that would be seen:
#  - REMODEL_ONLINE_LEASE_MS=2000, a follow holding the lease: the
#    installed program's lease document expires 30 s (its own length) or
#    more after its epoch's fence was taken; the tests' build's expires
#    within 2 s of the server's time;
#  - REMODEL_ONLINE_SLOW_CALL_MS=600000 (each read of the oplog ten minutes
#    late): the installed program's sync ends (exit 0) well before one such
#    read would; the tests' build's says it waits for its read, and SIGINT
#    stops it (exit 130); with REMODEL_ONLINE_EXIT_WAIT_MS too, the read
#    left running at the stop goes on while the program ends, under
#    valgrind's memcheck: no read of the driver's freed memory (exit 130,
#    nothing said after the stop);
#  - REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=600000: the installed program's
#    finalize switches without a word of a pause (exit 0); the tests'
#    build's says it pauses, and SIGUSR1 ends the pause (exit 0), even
#    when one of its other threads (the lease's renewals) takes it, as a
#    signal to the process may. Each build's finalize leaves the sources
#    embedded.
# REMODEL_ONLINE_FAULT's own check is in test_online_follow_retry.sh.
#   REMODEL=build/remodel bash tests/cli/test_online_hooks.sh
. "$(dirname "$0")/lib.sh"
use_faulty || exit 1
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && { pass "hooks: external deployments are not started here (skipped)"; exit 0; }
trap 'for p in $(jobs -p); do kill -9 $p 2>/dev/null; done
for d in "$T"/srv-*; do "$SERVER" stop "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
mkdir -p "$T/plans"
TESTS=$REMODEL

# until PID SECONDS PATTERN: true once $T/berr holds PATTERN; false when
# PID ended first or SECONDS passed.
until_said() {
    local wend=$((SECONDS + $2))
    while ((SECONDS < wend)); do
        grep -q -- "$3" "$T/berr" && return 0
        kill -0 "$1" 2>/dev/null || { grep -q -- "$3" "$T/berr"; return; }
        sleep 0.1
    done
    return 1
}
# ended PID SECONDS: PID's exit status in $brc once it ended (false, and
# PID killed, when it did not within SECONDS).
ended() {
    local wend=$((SECONDS + $2))
    while ((SECONDS < wend)) && kill -0 "$1" 2>/dev/null; do sleep 0.1; done
    if kill -0 "$1" 2>/dev/null; then
        kill -9 "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        brc=killed
        return 1
    fi
    wait "$1"
    brc=$?
}
# thread_usr1 PID: SIGUSR1 to a thread of PID other than its first (tgkill).
thread_usr1() {
    python3 -c 'import ctypes, os, platform, signal, sys
nr = {"x86_64": 234, "aarch64": 131}.get(platform.machine())
if nr is None:
    sys.exit("tgkill: no syscall number known for %s" % platform.machine())
p = int(sys.argv[1])
ts = sorted(int(t) for t in os.listdir("/proc/%d/task" % p) if int(t) != p)
if not ts:
    sys.exit("%d has no thread but its first" % p)
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(nr, p, ts[0], signal.SIGUSR1) != 0:
    sys.exit("tgkill: %s" % os.strerror(ctypes.get_errno()))' "$1"
}
# lease ID: "owner span left": the plan's lease's holder, its expires
# less its epoch's fence's time, and less the server's time now (ms).
lease() {
    py 'ms = lambda t: int(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
l = c.remodel.leases.find_one({"_id": sys.argv[2]}) or {}
f = c.remodel.fences.find_one({"_id": "%s#%d" % (sys.argv[2], l.get("epoch", 0))}) or {}
now = c.admin.command("hello")["localTime"]
if not l.get("owner") or "at" not in f:
    print("- 0 0")
else:
    print(l["owner"], ms(l["expires"]) - ms(f["at"]), ms(l["expires"]) - ms(now))' "$1"
}

online_start mem "$T/srv-mem" 0 changelog || exit 0
for build in installed tests; do
    if [ $build == installed ]; then B=$REMODEL_PRODUCT db=ip; else B=$TESTS db=tb; fi
    kids_plan $build $db
    id=$(pid $build)
    py 'db = c[sys.argv[2]]
db.parents.insert_many([{"_id": i, "name": "p%d" % i} for i in range(50)])
db.kids.insert_many([{"_id": 1000 + i, "owner": i % 50, "x": i} for i in range(150)])
db.kids.create_index("owner")' $db
    REMODEL=$B online run $build -q
    expect_eq "$build: run (exit 0)" "$rc:$(head -c 300 "$T/err")" "0:"

    # The lease's length: a follow holding it, its rounds a minute apart.
    : >"$T/berr"
    REMODEL_ONLINE_LEASE_MS=2000 "$B" online follow "$T/plans/$build.json" --uri "$uri" \
        --pause 60s --sample 5 >/dev/null 2>"$T/berr" &
    b=$!
    for ((wend = SECONDS + 120; SECONDS < wend; )); do
        read -r owner span left <<<"$(lease "$id")"
        [[ $owner == *":$b:"* ]] && break
        kill -0 $b 2>/dev/null || break
        sleep 0.2
    done
    if [[ $owner != *":$b:"* ]]; then
        fail "$build: REMODEL_ONLINE_LEASE_MS=2000: the follow takes the lease" "$owner; $(head -c 300 "$T/berr")"
    elif [ $build == installed ]; then
        expect_eq "installed: REMODEL_ONLINE_LEASE_MS=2000 ignored: the lease expires 30 s or more after its fence (span $span ms)" \
            "$((span >= 30000))" 1
    else
        expect_eq "tests: REMODEL_ONLINE_LEASE_MS=2000 honoured: the lease expires within 2 s of the server's time ($left ms)" \
            "$((left <= 2000 && span >= 2000))" 1
    fi
    kill -INT $b 2>/dev/null
    ended $b 120
    expect_eq "$build: ... the follow stopped by SIGINT (exit 0)" "$brc" 0

    # A slow read of the oplog.
    py 'c[sys.argv[2]].kids.update_one({"_id": 1000}, {"$set": {"owner": 1}})' $db
    : >"$T/berr"
    REMODEL_ONLINE_SLOW_CALL_MS=600000 "$B" online sync "$T/plans/$build.json" --uri "$uri" \
        >/dev/null 2>"$T/berr" &
    b=$!
    if [ $build == installed ]; then
        ended $b 300
        expect_eq "installed: REMODEL_ONLINE_SLOW_CALL_MS=600000 ignored: sync ends (exit 0) within 300 s" \
            "$brc:$(grep -c 'waiting for' "$T/berr")" "0:0"
    else
        if until_said $b 120 "waiting for .*(Ctrl-C stops it)"; then
            kill -INT $b 2>/dev/null
            ended $b 120
            expect_eq "tests: REMODEL_ONLINE_SLOW_CALL_MS=600000 honoured: sync waits for its read, SIGINT stops it (exit 130)" \
                "$brc" 130
        else
            kill -9 $b 2>/dev/null
            fail "tests: REMODEL_ONLINE_SLOW_CALL_MS=600000: sync waits for its read" "$(head -c 300 "$T/berr")"
        fi
        # The call left running at the stop goes on while the program
        # ends (REMODEL_ONLINE_EXIT_WAIT_MS: the program waits for it
        # after the driver's cleanup, and its slow call's delay ends
        # there): the driver must still be whole under it. Under memcheck
        # (the driver's memory freed under the call is read, not always
        # a crash), with the driver's counters in memory as remodel sets.
        py 'c[sys.argv[2]].kids.update_one({"_id": 1001}, {"$set": {"owner": 2}})' $db
        : >"$T/berr"
        MONGOC_DISABLE_SHM=1 REMODEL_ONLINE_SLOW_CALL_MS=600000 REMODEL_ONLINE_EXIT_WAIT_MS=120000 \
            valgrind -q --error-exitcode=99 "$(dirname "$B")/remodel-online" sync \
            "$T/plans/$build.json" --uri "$uri" >/dev/null 2>"$T/berr" &
        b=$!
        if until_said $b 120 "waiting for .*(Ctrl-C stops it)"; then
            kill -INT $b 2>/dev/null
            ended $b 180
            expect_eq "tests: ... a call left running at SIGINT ends while the program does, the driver whole under it (memcheck: exit 130, the stop said, nothing after it)" \
                "$brc:$(grep -c 'stopped by SIGINT' "$T/berr"):$(sed -n '/stopped by SIGINT/,$p' "$T/berr" | sed 1d | head -c 300)" "130:1:"
        else
            kill -9 $b 2>/dev/null
            fail "tests: a call left running at SIGINT: sync waits for its read" "$(head -c 300 "$T/berr")"
        fi
        REMODEL=$B online sync $build -q
        expect_eq "tests: ... a sync without it ends (exit 0)" "$rc:$(head -c 300 "$T/err")" "0:"
    fi

    # A pause before the switch.
    : >"$T/berr"
    REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=600000 "$B" online finalize "$T/plans/$build.json" \
        --uri "$uri" --writes-stopped --max-window 0 >/dev/null 2>"$T/berr" &
    b=$!
    if [ $build == installed ]; then
        ended $b 300
        expect_eq "installed: REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=600000 ignored: finalize switches, no pause said (exit 0)" \
            "$brc:$(grep -c 'pausing' "$T/berr")" "0:0"
    elif until_said $b 120 "pausing 600000 ms before the switch"; then
        thread_usr1 $b 2>"$T/tgkill" || kill -USR1 $b 2>/dev/null
        ended $b 300
        expect_eq "tests: REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=600000 honoured: finalize pauses, SIGUSR1 to another of its threads ends it (exit 0)" \
            "$brc:$(cat "$T/tgkill")" 0:
    else
        kill -9 $b 2>/dev/null
        fail "tests: REMODEL_ONLINE_PAUSE_BEFORE_SWITCH_MS=600000: finalize says it pauses" "$(head -c 300 "$T/berr")"
    fi
    expect_eq "$build: ... the parents hold their kids after finalize (150, kid 1000 under parent 1)" \
        "$(py 'db = c[sys.argv[2]]
print(sum(len(p.get("kids", [])) for p in db.parents.find()), [k["_id"] for k in db.parents.find_one({"_id": 1})["kids"]].count(1000))' $db)" "150 1"
done
"$SERVER" stop "$T/srv-mem" >/dev/null 2>&1
