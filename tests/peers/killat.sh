#!/usr/bin/env bash
# killat.sh: SIGKILL a command at the K-th call of a function, as a crash at
# exactly that point would (issue 21's kill matrix: tests/cli/test_online_switch.sh).
#
#   tests/peers/killat.sh [options] FUNCTION K -- COMMAND [ARGS...]
#
# COMMAND runs under gdb (batch mode, no init files, no pagination,
# all-stop: every thread of the process stops at a breakpoint, so a helper
# thread, such as remodel-online's lease renewals, does nothing more). Once
# the program reaches main, a breakpoint is set at FUNCTION (anything gdb's
# `break` takes: a function of the program, inlined copies included, or of
# a shared library it loaded, such as mongoc_collection_delete_one, or
# FILE:LINE) for the main thread only (calls from other threads, which
# come when they will, neither stop nor count; --any-thread counts them
# too); the first K-1 calls go on, and at the K-th the process is
# killed with SIGKILL (gdb's `kill`: no handler, no atexit, no flush; the
# kernel closes its connections). FUNCTION's own code has not run for that
# call: killing at the K-th call is killing right after call K-1 and
# whatever followed it.
#
# COMMAND is the program itself, not a script or launcher that execs it
# (`remodel online ...` execs build/remodel-online: give that, its first
# argument the subcommand). Its standard input, output and error are the
# caller's; gdb's own output goes to a log (--log).
#
# Exit status:
#   137  killed at the K-th call (what a shell reports for a SIGKILL)
#   3    FUNCTION was called fewer than K times: COMMAND ran to its end
#        (a line on standard error says how many calls and its exit
#        status); a matrix stepping K up knows it ran past the last point
#   124  --timeout seconds passed first: gdb and COMMAND were killed
#   125  killat's own failure: usage, no gdb, FUNCTION not found in the
#        program, gdb did not run it
# With --exec CMD, at the K-th call CMD runs (sh -c) while the process is
# stopped there, then the breakpoint is deleted and COMMAND goes on: the
# status is COMMAND's own (3 still when it was called fewer than K times).
#
# Options:
#   --timeout S    give up after S seconds (default 300)
#   --exec CMD     run CMD at the K-th call instead of killing (see above)
#   --report FILE  write "hits=N", "exit=STATUS" and "killed=yes|no" there
#   --log FILE     keep gdb's log there (default: shown on failure only)
#   --any-thread   count the calls of every thread, not the main one's only
#   -q, --quiet    no "killat:" line on standard error when killed
#
# Examples:
#   killat.sh online_switch_rename 3 -- build/remodel-online finalize PLAN --uri U --writes-stopped
#   killat.sh mongoc_collection_delete_one 1 -- build/remodel-online rollback PLAN --uri U --in-place
#
# gdb comes from Debian (scripts/install-deps.sh installs it).
set -u

die() { echo "killat: $*" >&2; exit 125; }
usage() { die "usage: killat.sh [--timeout S] [--exec CMD] [--report FILE] [--log FILE] [--any-thread] [-q] FUNCTION K -- COMMAND [ARGS...]"; }

timeout_s=300 exec_cmd= report= logfile= quiet=0 thread=' if $_thread == 1'
while [ $# -gt 0 ]; do
    case $1 in
        --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
        --exec) [ $# -ge 2 ] || usage; exec_cmd=$2; shift 2 ;;
        --report) [ $# -ge 2 ] || usage; report=$2; shift 2 ;;
        --log) [ $# -ge 2 ] || usage; logfile=$2; shift 2 ;;
        -q | --quiet) quiet=1; shift ;;
        --any-thread) thread=; shift ;;
        --) usage ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ $# -ge 4 ] && [ "$3" == -- ] || usage
func=$1 k=$2
shift 3
case $k in '' | *[!0-9]* | 0*) die "K must be a positive whole number, not '$k'" ;; esac
case $timeout_s in '' | *[!0-9]*) die "--timeout takes whole seconds, not '$timeout_s'" ;; esac
case $func in *[[:space:]]* | '') die "FUNCTION must be one word (a gdb location), not '$func'" ;; esac
command -v gdb >/dev/null 2>&1 || die "gdb is not installed (Debian package gdb; scripts/install-deps.sh installs it)"
prog=$1
case $prog in
    */*) [ -x "$prog" ] || die "no program at $prog" ;;
    *) prog=$(command -v -- "$prog") || die "no program $1 on PATH" ;;
esac
case $prog in /*) ;; *) prog=$PWD/$prog ;; esac
shift

tmp=$(mktemp -d "${TMPDIR:-/tmp}/killat.XXXXXX") || die "no temporary directory"
trap 'rm -rf "$tmp"' EXIT
log=${logfile:-$tmp/log}
: >"$log" || die "cannot write $log"

# The program's arguments, quoted for sh -c (gdb starts it through a
# shell, which also gives it the caller's standard streams, kept on
# descriptors 3, 4 and 5 while gdb's own go to the log).
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
args=
for a in "$@"; do args="$args $(q "$a")"; done

{
    echo "set args$args <&5 >&3 2>&4 3>&- 4>&- 5>&-"
    # gdb puts LINES and COLUMNS into the program's environment, and the
    # shell it starts the program with is SHELL: both as the caller had them.
    for v in LINES COLUMNS SHELL; do
        if [ -n "${!v+x}" ]; then echo "set environment $v=${!v}"; else echo "unset environment $v"; fi
    done
    cat <<'EOF'
set breakpoint pending off
tbreak main
run
echo KILLAT-AT-MAIN\n
info inferiors
EOF
    echo "break $func$thread"
    echo "echo KILLAT-BREAK-SET\\n"
    [ "$k" -gt 1 ] && echo "ignore \$bpnum $((k - 1))"
    echo "continue"
    echo 'if $_isvoid($_exitcode) && $_isvoid($_exitsignal)'
    echo "  echo KILLAT-STOPPED\\n"
    echo "  bt 8"
    echo "  info breakpoints"
    if [ -n "$exec_cmd" ]; then
        printf '%s\n' "$exec_cmd" >"$tmp/exec.sh"
        echo "  shell /bin/sh $(q "$tmp/exec.sh")"
        echo "  echo KILLAT-EXEC-DONE\\n"
        echo "  delete"
        echo "  continue"
    else
        echo "  kill"
        echo "  echo KILLAT-KILLED\\n"
    fi
    echo "else"
    echo "  info breakpoints"
    echo "end"
    cat <<'EOF'
if !$_isvoid($_exitcode)
  printf "KILLAT-EXIT %d\n", $_exitcode
end
if !$_isvoid($_exitsignal)
  printf "KILLAT-SIGNAL %d\n", $_exitsignal
end
echo KILLAT-END\n
EOF
} >"$tmp/script.gdb"

# No init files, no debuginfod (no network), batch mode; every signal but
# gdb's own passed to the program without a stop; the shell that starts the
# program is /bin/sh (the program's own SHELL is set back above). The
# caller's standard streams wait on descriptors 3, 4, 5 for the program.
[ -e /dev/fd/0 ] && exec 5<&0 || exec 5</dev/null
env -u DEBUGINFOD_URLS -u BASH_ENV SHELL=/bin/sh \
    timeout -k 5 "$timeout_s" gdb -nx -nh -batch -q \
    -iex 'set pagination off' -iex 'set height 0' -iex 'set width 0' -iex 'set confirm off' \
    -iex 'set debuginfod enabled off' \
    -ex 'set non-stop off' -ex 'set print thread-events off' -ex 'set print inferior-events off' \
    -ex 'set startup-with-shell on' -ex 'handle all nostop noprint pass' \
    -x "$tmp/script.gdb" "$prog" 3>&1 4>&2 >"$log" 2>&1
grc=$?
exec 5<&-
# gdb asks the kernel to kill its program when it dies (PTRACE_O_EXITKILL);
# after a timeout the program's pid (from `info inferiors`) is killed too.
pid=$(sed -n 's/^\* *1 *process \([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)

show_log() { tail -n 30 "$log" | sed 's/^/killat: gdb: /' >&2; }
hits=$(sed -n 's/.*breakpoint already hit \([0-9][0-9]*\) time.*/\1/p' "$log" | tail -n 1)
hits=${hits:-0}
status=$(sed -n 's/^KILLAT-EXIT \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
sig=$(sed -n 's/^KILLAT-SIGNAL \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
[ -z "$status" ] && [ -n "$sig" ] && status=$((128 + sig))
write_report() { [ -z "$report" ] || printf 'hits=%s\nexit=%s\nkilled=%s\n' "$hits" "${status:-}" "$1" >"$report"; }

if { [ $grc -eq 124 ] || [ $grc -eq 137 ]; } && ! grep -q '^KILLAT-END$' "$log"; then
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    echo "killat: timed out after ${timeout_s} s: gdb and $prog killed (log below)" >&2
    show_log
    write_report no
    exit 124
fi
grep -q '^KILLAT-AT-MAIN$' "$log" || {
    echo "killat: gdb did not run $prog to main (a program without symbols? one is needed)" >&2
    show_log
    exit 125
}
grep -q '^KILLAT-BREAK-SET$' "$log" || {
    echo "killat: $func is not in $prog or a library it loads (give the program that defines it; remodel online execs build/remodel-online)" >&2
    show_log
    exit 125
}
if grep -q '^KILLAT-KILLED$' "$log"; then
    hits=$k
    write_report yes
    [ $quiet = 1 ] || echo "killat: killed $(basename "$prog") with SIGKILL at call $k of $func" >&2
    exit 137
fi
grep -q '^KILLAT-END$' "$log" || { echo "killat: gdb stopped before the end (exit $grc)" >&2; show_log; exit 125; }
[ -n "$status" ] || { echo "killat: gdb says no exit status for $prog" >&2; show_log; exit 125; }
if grep -q '^KILLAT-EXEC-DONE$' "$log"; then
    hits=$k
    write_report no
    exit "$status"
fi
write_report no
echo "killat: $func was called $hits time(s), fewer than $k: $(basename "$prog") ran to its end (exit $status)" >&2
exit 3
