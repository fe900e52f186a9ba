#!/usr/bin/env bash
# tests/run.sh's recorded seconds (issue 60): the server suites start
# longest first by tests/timings.txt, a suite over twice its figure and
# over the floor fails with a FAIL line naming it and both figures, a
# plain run writes only BUILD/timings.txt, RUN_RECORD=1 lowers or adds
# figures, never raises them, and after a whole run drops the suites gone;
# the suites that start no server run beside the server suites, a
# sanitizer build that fails is a FAIL line, and RUN_CPU=1 counts each
# suite's CPU seconds, a process it left running included.
# Runs tests/run.sh on suites of its own (RUN_SUITES) against a timings
# file of its own (RUN_TIMINGS); nothing of the real suites runs.
#   REMODEL=build/remodel bash tests/cli/test_run_timings.sh
. "$(dirname "$0")/lib.sh"
RUN=$ROOT/tests/run.sh
S=$T/suites
mkdir -p "$S" "$T/san"
# suite NAME [BODY]: a suite that prints "PASS NAME" after BODY.
suite() {
    printf '#!/usr/bin/env bash\n%s\necho "PASS %s"\n' "${2:-}" "$1" >"$S/$1.sh"
}
suite test_online_a
suite test_online_b
suite test_online_c
suite test_online_new
# The one slow suite: it takes at least three seconds on any machine, as
# the budget's tests need a suite longer than its figure of 0, and over
# twice a figure of 1 (no speed is tested: the other suites may take any
# time up to 100 s).
suite test_online_slow 'sleep 3'
cat >"$T/recorded" <<'EOF'
# a comment, and a line of a suite that is no more
cli test_gone 7
cli test_online_a 100
cli test_online_b 300
cli test_online_c 200
cli test_online_slow 0
EOF
cp "$T/recorded" "$T/timings"
# runs ARGS...: tests/run.sh on those suites, output in $T/out, status in rc.
# RUN_SANITIZE_BUILD emptied: make check sets it for its whole run, and a
# run given a sanitizer directory would make the real sanitizer build here;
# RUN_CPU too, which a make check run with it would hand down.
runs() {
    RUN_SUITES=$S RUN_TIMINGS=$T/timings RUN_PARTS=online RUN_ONLY= RUN_JOBS=2 RUN_RECORD= RUN_BUDGET_FLOOR=120 \
        RUN_SANITIZE_BUILD= RUN_CPU= "$@" \
        >"$T/out" 2>"$T/err"
    rc=$?
}

runs env "$RUN" "$T/build"
expect_eq "the pool starts the unrecorded first, then the longest first" \
    "$(sed -n 's/^== cli //p' "$T/out" | tr '\n' ' ')" \
    "test_online_new test_online_b test_online_c test_online_a test_online_slow "
check "a suite's time is shown beside its recorded one" grep -qE '^-- cli test_online_b: [0-9]+ s \(recorded 300 s\)$' "$T/out"
check "and an unrecorded suite says so" grep -qE '^-- cli test_online_new: [0-9]+ s \(not recorded\)$' "$T/out"
expect_eq "a suite over twice its figure but within the 120 s floor passes" "$rc" 0
check "the run ends with every suite passed" grep -qx '5 passed, 0 failed' "$T/out"
check "a plain run leaves the recorded figures as they were" cmp -s "$T/timings" "$T/recorded"
expect_eq "it writes this run's seconds to BUILD/timings.txt, a line a suite" \
    "$(sed 's/ [0-9]*$//' "$T/build/timings.txt" | tr '\n' ,)" \
    "cli test_online_a,cli test_online_b,cli test_online_c,cli test_online_new,cli test_online_slow,"

runs env RUN_BUDGET_FLOOR=0 "$RUN" "$T/build"
expect_eq "a suite over twice its figure and over the floor fails the run" "$rc" 1
check "with a FAIL line naming it, its seconds and its recorded seconds" \
    grep -qE '^FAIL cli test_online_slow: took [2-9][0-9]* s, over twice its recorded 0 s and 0 s over it' "$T/out"
check "named again among the failures at the end" grep -qE '^  cli test_online_slow: FAIL took [0-9]+ s, recorded 0 s$' "$T/out"
check "the suites within their budgets pass" grep -qx '5 passed, 1 failed' "$T/out"
if grep -q '^FAIL cli test_online_[abc]' "$T/out"; then
    fail "no FAIL for a suite within twice its figure" "$(grep '^FAIL' "$T/out")"
else
    pass "no FAIL for a suite within twice its figure"
fi
# The budget stretched by the load: at 100 per core, a suite over twice
# its figure of 1 s passes; at none, it fails.
sed -i 's/^cli test_online_slow 0$/cli test_online_slow 1/' "$T/timings"
runs env RUN_BUDGET_FLOOR=0 RUN_LOAD=$((100 * $(nproc))) "$RUN" "$T/build"
expect_eq "at a load of 100 a core, a suite over twice its figure passes" "$rc" 0
check "and the run says every suite passed" grep -qx '5 passed, 0 failed' "$T/out"
runs env RUN_BUDGET_FLOOR=0 RUN_LOAD=0 "$RUN" "$T/build"
expect_eq "at no load, the same suite fails its budget" "$rc" 1
sed -i 's/^cli test_online_slow 1$/cli test_online_slow 0/' "$T/timings"

# RUN_RECORD=1 after a part: lowered, added, kept.
suite test_online_broken 'echo "FAIL broken"'
runs env RUN_RECORD=1 "$RUN" "$T/build"
fig() { sed -n "s/^$1 \([0-9]*\)$/\1/p" "$T/timings"; }
ran() { sed -n "s/^$1 \([0-9]*\)$/\1/p" "$T/build/timings.txt"; }
a=$(fig 'cli test_online_a')
expect_eq "RUN_RECORD=1 lowers a figure to this run's" "$a" "$(ran 'cli test_online_a')"
[ -n "$a" ] && [ "$a" -lt 100 ] && pass "below what was recorded ($a s < 100 s)" || fail "below what was recorded" "[$a]"
expect_eq "adds a suite not recorded" "$(fig 'cli test_online_new')" "$(ran 'cli test_online_new')"
expect_eq "never raises a figure (the slow suite's stays 0)" "$(fig 'cli test_online_slow')" 0
expect_eq "adds no figure of a suite that failed" "$(fig 'cli test_online_broken')" ""
expect_eq "keeps, after a part, a suite that did not run" "$(fig 'cli test_gone')" 7
check "says it updated the file" grep -q "tests/run.sh: $T/timings updated" "$T/out"
check "the file keeps a comment that says what it is" grep -q '^# .*RUN_RECORD=1' "$T/timings"
expect_eq "its lines sorted by name" "$(grep -v '^#' "$T/timings" | sed 's/ [0-9]*$//' | tr '\n' ,)" \
    "cli test_gone,cli test_online_a,cli test_online_b,cli test_online_c,cli test_online_new,cli test_online_slow,"
rm "$S/test_online_broken.sh"

# After a whole run (every part, no RUN_ONLY, a sanitizer build), the
# suites that did not run are dropped.
b=$(fig 'cli test_online_b')
runs env RUN_RECORD=1 RUN_PARTS=all "$RUN" "$T/build" "$T/san"
expect_eq "a whole run drops the line of a suite that is no more" "$(fig 'cli test_gone')" ""
check "and says so" grep -q 'cli test_gone did not run: its line is dropped' "$T/err"
# Kept, lowered to this run's seconds if fewer, never raised: on a loaded
# machine the suite may take a second more than its figure.
r=$(ran 'cli test_online_b')
[ -n "$r" ] && [ -n "$b" ] && [ "$r" -lt "$b" ] && b=$r
expect_eq "and keeps the others" "$(fig 'cli test_online_b')" "$b"

# The lane: a suite that starts no server runs beside the pool, not before
# it. Its suite waits (up to 120 s) for a file that a server suite makes.
L=$T/lane
mkdir -p "$L"
printf '#!/usr/bin/env bash\nfor i in $(seq 1200); do [ -f "%s/made" ] && break; sleep 0.1; done\n[ -f "%s/made" ] && echo "PASS waited"\n' \
    "$T" "$T" >"$L/test_plain.sh"
printf '#!/usr/bin/env bash\ntouch "%s/made"\necho "PASS made"\n' "$T" >"$L/test_online_made.sh"
# One of the suites run again under the sanitizers, by its name.
suite test_fixtures
mv "$S/test_fixtures.sh" "$L/"
# (RUN_ONLY=test_: not the layers check, whose objects are not built here.)
runs env RUN_SUITES="$L" RUN_PARTS=all RUN_ONLY=test_ "$RUN" "$T/build"
check "a suite that starts no server runs beside the server suites" grep -qx 'PASS waited' "$T/out"
check "both reported, each in its own block" grep -qx '== cli test_plain' "$T/out"
check "the run counts them all" grep -qx '3 passed, 0 failed' "$T/out"
# The sanitizer build, made in the lane (RUN_SANITIZE_BUILD): one that
# fails is a FAIL line, and the run fails.
runs env RUN_SUITES="$L" RUN_PARTS=all RUN_ONLY=test_ RUN_SANITIZE_BUILD=no-such-target "$RUN" "$T/build" "$T/san"
expect_eq "a sanitizer build that fails fails the run" "$rc" 1
check "with a FAIL line naming the make target" grep -qx 'FAIL asan+ubsan build (make no-such-target)' "$T/out"
check "and make's own message" grep -q 'no-such-target' "$T/out"
check "the other suites still ran" grep -qx '3 passed, 1 failed' "$T/out"

# RUN_CPU=1: each suite's CPU seconds, a process it left running counted
# too. test_online_burn starts one in a session of its own (as a server
# is: no longer its child) that spins about a CPU second, and waits for
# its end; test_online_idle only sleeps.
C=$T/cpu
mkdir -p "$C"
cat >"$C/test_online_burn.sh" <<EOF
#!/usr/bin/env bash
setsid bash -c 'for ((i = 0; i < 400000; i++)); do :; done; touch "$T/spun"' </dev/null >/dev/null 2>&1 &
for i in \$(seq 1200); do [ -f "$T/spun" ] && break; sleep 0.1; done
[ -f "$T/spun" ] && echo "PASS spun"
EOF
printf '#!/usr/bin/env bash\nsleep 1\necho "PASS idle"\n' >"$C/test_online_idle.sh"
if mkdir "/sys/fs/cgroup/cpuacct/remodel-probe.$$" 2>/dev/null; then
    rmdir "/sys/fs/cgroup/cpuacct/remodel-probe.$$"
    rm -f "$T/build/cpu.txt"
    # (A run of make check with RUN_CPU=1 has its own group meanwhile.)
    before=$(ls -d /sys/fs/cgroup/cpuacct/remodel-run.* 2>/dev/null)
    runs env RUN_SUITES="$C" RUN_CPU=1 "$RUN" "$T/build"
    expect_eq "RUN_CPU=1: the run passes" "$rc:$(grep -x '2 passed, 0 failed' "$T/out")" "0:2 passed, 0 failed"
    burn=$(sed -n 's/^-- cli test_online_burn: [0-9]* s, \([0-9.]*\) CPU s .*/\1/p' "$T/out")
    idle=$(sed -n 's/^-- cli test_online_idle: [0-9]* s, \([0-9.]*\) CPU s .*/\1/p' "$T/out")
    expect_eq "RUN_CPU=1: a suite's CPU seconds count what it started in a session of its own" \
        "$(awk -v b="${burn:-0}" 'BEGIN {print (b >= 0.3) ? "yes" : "no: " b}')" yes
    expect_eq "... and a suite that sleeps spends next to none" \
        "$(awk -v i="${idle:-9}" -v b="${burn:-0}" 'BEGIN {print (i < b / 3) ? "yes" : "no: " i " against " b}')" yes
    expect_eq "BUILD/cpu.txt lists the suites by CPU, the most first" \
        "$(cut -d' ' -f2- "$T/build/cpu.txt" | tr '\n' ,)" "cli test_online_burn,cli test_online_idle,"
    expect_eq "the run's control groups are gone after it" \
        "$(ls -d /sys/fs/cgroup/cpuacct/remodel-run.* 2>/dev/null)" "$before"
else
    runs env RUN_SUITES="$C" RUN_CPU=1 "$RUN" "$T/build"
    expect_eq "RUN_CPU=1 where no control group can be made: refused (exit 2)" "$rc" 2
    expect_message "naming what it needs" "RUN_CPU=1 needs a cpuacct control group"
fi

cp "$T/recorded" "$T/timings"
runs env RUN_RECORD=2 "$RUN" "$T/build"
expect_eq "RUN_RECORD other than 1 is refused" "$rc" 2
expect_message "with a message naming it" "RUN_RECORD is 1 or unset, not 2"
exit 0
