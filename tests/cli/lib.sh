# Shared helpers for the command-line suites. Source it; $REMODEL is the
# binary under test. Each check prints "PASS name" or "FAIL name".
set -u
: "${REMODEL:?set REMODEL to the remodel binary}"
case $REMODEL in /*) ;; *) REMODEL=$PWD/$REMODEL ;; esac
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FIX=${FIXTURES:-$ROOT/../shared/fixtures}
MT=$FIX/mongo-tools
T=$(mktemp -d "${TMPDIR:-/tmp}/remodel-test.XXXXXX")
trap 'rm -rf "$T"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; shift; [ $# -gt 0 ] && echo "  $*" >&2; return 0; }

# check NAME COMMAND...: passes when COMMAND succeeds.
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "command failed: $*"; fi; }

# expect_eq NAME GOT WANT
expect_eq() {
    if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got [$2] want [$3]"; fi
}

# run_rm ARGS...: runs remodel --quiet, output in $T/out, $T/err, status in $rc.
run_rm() { "$REMODEL" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
