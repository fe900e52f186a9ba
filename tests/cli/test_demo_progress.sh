#!/usr/bin/env bash
# make demo-online shows every command that runs past two seconds as it
# goes (issue 52, trip 3: an in-place backfill and its rollback sat silent
# for a minute and a half): scripts/demo_lib.sh's demo_run, as the demo
# uses it, on commands that stand in for the slow phases. Checks the lines
# shown, not how long anything takes.
#   REMODEL=build/remodel bash tests/cli/test_demo_progress.sh
. "$(dirname "$0")/lib.sh"

grep -q '^\. scripts/demo_lib.sh' "$ROOT/scripts/demo_online.sh" &&
    grep -q 'demo_run' "$ROOT/scripts/demo_online.sh" &&
    pass "demo_online.sh runs its commands through demo_run" ||
    fail "demo_online.sh runs its commands through demo_run"
. "$ROOT/scripts/demo_lib.sh"
DEMO_TICK=0.2
DEMO_STRIP=$T/
echo 0 >"$T/done"
# A slow phase: 1.1 s, as ten steps the progress command can count.
slow() { for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.11; echo "$i" >"$T/done"; done; echo "made $T/x"; }
DEMO_PROGRESS='echo "$(cat "$T/done") of 10 done"' demo_run slow >"$T/out"
expect_eq "the command line is shown first" "$(head -n 1 "$T/out")" '$ slow'
ticks=$(grep -c '^#   \.\.\. [0-9.]*s: [0-9]* of 10 done$' "$T/out")
[ "$ticks" -ge 2 ] && pass "a slow command shows how far it is as it runs ($ticks lines)" ||
    fail "a slow command shows how far it is as it runs" "$(cat "$T/out")"
expect_eq "its output, paths shortened" "$(grep '^made' "$T/out")" "made x"
demo_run true >"$T/out"
expect_eq "a quick one shows only itself" "$(cat "$T/out")" '$ true'
demo_run sh -c 'echo oops >&2; exit 3' >"$T/out"
expect_eq "a failing one: its status, and its standard error shown" "$?:$(tail -n 1 "$T/out")" "3:oops"
sleep 0.5
expect_eq "no ticker outlives its command" "$(jobs -r | wc -l)" 0
# A ticker killed at once (a quick command) must not run the caller's
# EXIT trap: bash runs an inherited one in a subshell killed before it
# sets its own. Two hundred quick commands, each a chance for that race
# (one in fifteen lost it at a load of 16, before the fix).
mkdir "$T/exits"
bash -c '. "$1/scripts/demo_lib.sh"; trap "touch \"$2/\$BASHPID\"" EXIT
    for i in $(seq 200); do demo_run true >/dev/null; done' - "$ROOT" "$T/exits"
expect_eq "no ticker runs the caller's EXIT trap: only the caller's own exit does" "$(ls "$T/exits" | wc -l)" 1
exit 0
