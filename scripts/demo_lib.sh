# Sourced by scripts/demo_online.sh: how the demo shows a command. A
# command that runs past two seconds gets a line every two seconds, so no
# phase sits silent (an in-place backfill and its rollback on FerretDB,
# which updates about 20 documents a second, once looked hung for a
# minute and a half).
#
# demo_run CMD...: prints "$ CMD" and CMD's output (standard error too),
# each with $DEMO_STRIP (a directory) taken out of paths; while it runs,
# every $DEMO_TICK seconds (2) "#   ... Ns", followed by what
# $DEMO_PROGRESS prints when set (a command saying how far: "300 of 854
# tasks have owner_email"). Returns CMD's status.
demo_run() {
    local tick status saved errexit=${-//[^e]/} strip=${DEMO_STRIP:-/nonexistent/}
    printf '$ %s\n' "$*" | sed "s|$strip||g; s|${DEMO_BIN:-/nonexistent}|remodel|"
    # The ticker is forked without the caller's EXIT trap: a subshell
    # killed before it sets a trap of its own runs the one it inherited
    # (bash), which would clean up the caller's files mid-run.
    saved=$(trap -p EXIT)
    trap - EXIT
    demo_ticker &
    tick=$!
    eval "${saved:-trap - EXIT}"
    set +e
    "$@" 2>&1 | sed -u "s|$strip||g"
    status=${PIPESTATUS[0]}
    [ -z "$errexit" ] || set -e
    kill "$tick" 2>/dev/null
    wait "$tick" 2>/dev/null
    return "$status"
}

demo_ticker() {
    local every=${DEMO_TICK:-2} t=0 how
    # The sleep in the foreground of this subshell would outlive a kill of
    # it by up to $every seconds: ended with it.
    trap 'kill $nap 2>/dev/null; exit 0' TERM
    while :; do
        sleep "$every" & nap=$!
        wait $nap
        t=$(awk -v t="$t" -v e="$every" 'BEGIN { print t + e }')
        how=
        [ -n "${DEMO_PROGRESS:-}" ] && how=": $(eval "$DEMO_PROGRESS" 2>/dev/null)"
        printf '#   ... %ss%s\n' "$t" "$how"
    done
}
