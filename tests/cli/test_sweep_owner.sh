#!/usr/bin/env bash
# The sweep of killed runs' temporary files takes only this user's: on a
# shared /tmp another user's leftovers (their run killed, its PID gone) are
# theirs to sweep, not ours (issue 52, trip 5). Files owned by another uid
# need root to make; without root the suite says so and checks the rest.
#   REMODEL=build/remodel bash tests/cli/test_sweep_owner.sh
. "$(dirname "$0")/lib.sh"

W=$T/w
mkdir -p "$W/tmp"
chmod 1777 "$W/tmp" # a shared temporary directory, as /tmp is
echo '{"remodel": 1, "steps": [{"set": {"in": "crm.people", "fields": {"x": 1}}}]}' >"$T/set.json"
# A PID no process has: a child, reaped.
sh -c 'exit 0' & dead=$!; wait $dead
mine=".remodel-store.remodel-$dead-1"
theirs=".remodel-store.remodel-$dead-2"
theirs_beside=".o.archive.remodel-$dead-3"
touch "$W/tmp/$mine" "$W/tmp/$theirs" "$W/$theirs_beside"
other_uid=$(($(id -u) + 4242))
if [ "$(id -u)" -eq 0 ]; then
    chown "$other_uid" "$W/tmp/$theirs" "$W/$theirs_beside"
    as_root=1
else
    echo "  (not root: another user's files cannot be made; checking this user's only)" >&2
    rm -f "$W/tmp/$theirs" "$W/$theirs_beside"
    as_root=0
fi
"$REMODEL" run "$T/set.json" --from "$ROOT/dumps/sample" --to "$W/o.archive" --tmp "$W/tmp" \
    --nsInclude 'crm.*' >/dev/null 2>"$T/err"
expect_eq "the run succeeds" "$?" 0
expect_eq "this user's leftover in --tmp is swept" "$(ls -A "$W/tmp" | grep -c "^$mine\$")" 0
expect_message "says so, counting this user's files only" \
    "remodel: removed 1 stale temporary file(s) of killed remodel runs from $W/tmp"
if [ "$as_root" -eq 1 ]; then
    expect_eq "another user's leftover in --tmp stays" "$(ls -A "$W/tmp" | grep -c "^$theirs\$")" 1
    expect_eq "another user's leftover beside the output stays" \
        "$(ls -A "$W" | grep -c "^$theirs_beside\$")" 1
    expect_eq "its owner is unchanged" "$(stat -c %u "$W/tmp/$theirs")" "$other_uid"
fi
# analyze sweeps its --tmp by the same rule.
touch "$W/tmp/.a.remodel-$dead-5"
"$REMODEL" analyze "$ROOT/dumps/sample" -q --tmp "$W/tmp" >/dev/null 2>&1
expect_eq "analyze sweeps this user's leftover" "$(ls -A "$W/tmp" | grep -c "remodel-$dead-5")" 0
[ "$as_root" -eq 1 ] &&
    expect_eq "analyze leaves another user's" "$(ls -A "$W/tmp" | grep -c "^$theirs\$")" 1
exit 0
