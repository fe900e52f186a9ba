#!/usr/bin/env bash
# tests/run.sh interrupted (TERM, as a CI timeout or an operator's kill
# sends it): the suites still running, in the pool and in the lane, and
# every process they started, even one in a session of its own (as a
# server is), end with the run, and the lane starts no suite after it;
# the run exits 143. Runs tests/run.sh on suites of its own
# (RUN_SUITES); nothing of the real suites runs.
#   REMODEL=build/remodel bash tests/cli/test_run_interrupt.sh
. "$(dirname "$0")/lib.sh"
RUN=$ROOT/tests/run.sh
S=$T/suites
mkdir -p "$S"
# hanging NAME: a suite that starts a child of its own and a process in a
# new session, notes their pids, its own and its parent's (the runner's
# shell that started it) in $T/NAME.pids, and then waits for a file that
# never comes (a wait, bounded, not a timing: the run is interrupted long
# before its end).
hanging() {
    cat >"$S/$1.sh" <<EOF
#!/usr/bin/env bash
sleep 600 &
kid=\$!
setsid sleep 600 </dev/null >/dev/null 2>&1 &
away=\$!
echo "\$\$ \$kid \$away \$PPID" >"$T/$1.pids.new" && mv "$T/$1.pids.new" "$T/$1.pids"
for ((i = 0; i < 6000; i++)); do [ -f "$T/never" ] && break; sleep 0.1; done
echo "PASS $1 ended by itself"
EOF
}
hanging test_online_hang
hanging test_plain_hang
# The lane's next suite: the lane must not go on to it.
hanging test_plain_later
# alive PID: there and not a zombie.
alive() {
    [ -e "/proc/$1" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]
}

RUN_SUITES=$S RUN_TIMINGS=/dev/null RUN_PARTS=all RUN_ONLY=test_ RUN_JOBS=2 RUN_RECORD= \
    RUN_SANITIZE_BUILD= RUN_CPU= "$RUN" "$T/build" >"$T/out" 2>"$T/err" &
run=$!
# Both suites started (two minutes at most, for a loaded machine).
for ((w = 0; w < 1200; w++)); do
    [ -s "$T/test_online_hang.pids" ] && [ -s "$T/test_plain_hang.pids" ] && break
    sleep 0.1
done
check "the pool's suite and the lane's are both running" \
    test -s "$T/test_online_hang.pids" -a -s "$T/test_plain_hang.pids"
pids=$(cat "$T"/*.pids 2>/dev/null)
kill -TERM "$run"
rc=0
wait "$run" || rc=$?
expect_eq "tests/run.sh ends on TERM with 143" "$rc" 143
# The lane, had it gone on, started its next suite at once.
pids="$pids $(cat "$T/test_plain_later.pids" 2>/dev/null)"
# The runner waits for what it stops before it exits; 30 s at most
# for a killed process to leave the process table.
left=
for p in $pids; do
    for ((w = 0; w < 300; w++)); do alive "$p" || break; sleep 0.1; done
    alive "$p" && left="$left $p ($(tr '\0' ' ' <"/proc/$p/cmdline"))"
done
expect_eq "no suite, nor any process a suite or the runner started, outlives the run" "$left" ""
check "the lane started no suite after the interrupt" test ! -e "$T/test_plain_later.pids"
check "neither suite reported an end of its own" test -z "$(grep 'ended by itself' "$T/out")"
for p in $pids; do kill -9 "$p" 2>/dev/null; done
exit 0
