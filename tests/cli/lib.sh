# Shared helpers for the command-line suites. Source it; $REMODEL is the
# binary under test. Each check prints "PASS name" or "FAIL name".
set -u
: "${REMODEL:?set REMODEL to the remodel binary}"
case $REMODEL in /*) ;; *) REMODEL=$PWD/$REMODEL ;; esac
# use_faulty: REMODEL becomes the same build with the tests' fault layer
# (tests/fault/remodel beside it, which runs the remodel-online linked
# with shell-ext/conn/online_fault.c: the installed one has none), for the
# suites that inject faults with REMODEL_ONLINE_FAULT (REMODEL_PRODUCT:
# the build without it); a FAIL line and false when it is not built.
use_faulty() {
    local f
    f=$(dirname "$REMODEL")/tests/fault/remodel
    if [ ! -x "$f" ] || [ ! -x "$(dirname "$f")/remodel-online" ]; then
        echo "FAIL the fault layer's build: no $f (make all builds it)"
        return 1
    fi
    # The build's own in-memory server still (tests/peers/server.sh looks
    # beside REMODEL).
    [ -n "${MEMSRV:-}" ] || export MEMSRV=$(dirname "$REMODEL")/tests/remodel-memsrv
    REMODEL_PRODUCT=$REMODEL REMODEL=$f
}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The fixtures in the repository (tests/fixtures/README.md): mongo-tools'
# test data, real mongodump and bsondump output, in $MT.
FIX=${FIXTURES:-$ROOT/tests/fixtures}
MT=$FIX/mongo-tools
. "$ROOT/tests/python.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/remodel-test.XXXXXX")
# The suite's own shell only: a subshell (a function run with &) killed
# before it sets a trap of its own runs the EXIT trap it inherited, and
# would remove $T (or stop the server) under the suite.
trap '[ "$BASHPID" != "$$" ] || rm -rf "$T"' EXIT
# Each suite's own temporary directory: remodel sweeps the spill files of
# killed remodel processes from it and says so, which in a shared /tmp
# would add a line to another suite's output whenever a suite (or anyone
# on the machine) had just killed a run.
mkdir -p "$T/.tmp"
export TMPDIR=$T/.tmp

# atlas_sample: the path of a dump shaped like MongoDB Atlas's sample
# datasets (sample_analytics, sample_mflix, sample_geospatial,
# sample_training; made-up values), written by tests/fixtures/atlas_sample.py
# into $T once per suite: ATLAS=$(atlas_sample).
atlas_sample() {
    [ -d "$T/fixture-atlas-sample" ] || python3 "$ROOT/tests/fixtures/atlas_sample.py" "$T/fixture-atlas-sample" >&2 ||
        echo "atlas_sample: tests/fixtures/atlas_sample.py failed" >&2
    echo "$T/fixture-atlas-sample"
}

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; shift; [ $# -gt 0 ] && echo "  $*" >&2; return 0; }

# check NAME COMMAND...: passes when COMMAND succeeds.
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "command failed: $*"; fi; }

# expect_eq NAME GOT WANT
expect_eq() {
    if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got [$2] want [$3]"; fi
}

# expect_message NAME STRING...: stderr holds every STRING (any number of lines).
expect_message() {
    local n=$1 s missing=""; shift
    for s in "$@"; do grep -qF -- "$s" "$T/err" || missing="$missing [$s]"; done
    if [ -z "$missing" ]; then pass "$n"
    else fail "$n" "missing$missing in: $(head -c 600 "$T/err")"; fi
}

# run_rm ARGS...: runs remodel --quiet, output in $T/out, $T/err, status in $rc.
# A finalize the suite gives no --max-window is unbounded: finalize's bound
# (10 s by default) is a wall-clock limit, which a loaded test machine can
# pass; the suites of the bound itself (test_online_cutover.sh,
# test_online_window_ferret.sh) give it, or set ONLINE_DEFAULT_WINDOW=1.
run_rm() {
    local bound=()
    if [ "${1:-}" = online ] && [ "${2:-}" = finalize ] && [ -z "${ONLINE_DEFAULT_WINDOW:-}" ] &&
        [[ " ${*:3} " != *" --max-window"* ]]; then
        bound=(--max-window 0)
    fi
    "$REMODEL" "$@" "${bound[@]}" >"$T/out" 2>"$T/err"
    rc=$?
}

# use_peers NAME: the peer tools (tests/peers/install.sh): $BSONDUMP,
# $MONGORESTORE, $MONGODUMP, $FERRETDB, $PEERS, $SERVER, and $SRV, a
# server's directory, stopped on exit. Fails NAME and returns 1 when a
# tool is missing.
use_peers() {
    local missing= b
    PEERS=$ROOT/tests/peers
    [ -n "${BSONDUMP:-}" ] || . "$PEERS/env.sh"
    SERVER=${PEERS_SERVER:-$PEERS/server.sh}
    SRV=$T/server
    trap '[ "$BASHPID" != "$$" ] || { "$SERVER" stop "$SRV" >/dev/null 2>&1; rm -rf "$T"; }' EXIT
    for b in "$BSONDUMP" "$MONGORESTORE" "$MONGODUMP" "$FERRETDB"; do
        [ -x "$b" ] || missing="$missing $b"
    done
    if [ -n "$missing" ]; then
        fail "$1" "not installed:$missing (run tests/peers/install.sh)"
        return 1
    fi
}

# The servers the online suites run on: FerretDB and mongo-java-server,
# started here on loopback, or, when REMODEL_TEST_URI is set, that real
# deployment instead (kind "external"; each suite drops the databases it
# uses there first: point it at a test deployment only).
online_kinds() {
    if [ -n "${REMODEL_TEST_URI:-}" ]; then echo external; else echo ferretdb java; fi
}
# online_kind KIND: the server a suite runs on when what it checks is
# remodel's own logic, the same on any server: KIND alone (tests/cli/
# test_online_smoke.sh runs each online command on both);
# REMODEL_TEST_BOTH=1: both, as online_kinds; "external" as online_kinds.
online_kind() {
    if [ -n "${REMODEL_TEST_URI:-}" ]; then echo external
    elif [ "${REMODEL_TEST_BOTH:-}" == 1 ]; then echo ferretdb java
    else echo "$1"; fi
}
# fresh_log DIR: the oplog of the server in DIR begun again, empty, once a
# suite's data is loaded (tests/peers/server.sh oplog; FerretDB started
# with its change log only, else nothing): FerretDB decodes every entry at
# each read of its oplog, sync after sync, and the load's entries lie
# before any point remodel reads from. False, said, where it fails.
fresh_log() {
    "$SERVER" oplog "$1" 2>"$T/err" || { fail "the oplog begun again ($1)" "$(cat "$T/err")"; return 1; }
}
# shell_uri URI: URI for mongosh, which gives up finding the server after
# 2 s unless the URI says otherwise: too short on a loaded machine.
shell_uri() {
    case $1 in *\?*) echo "$1&serverSelectionTimeoutMS=600000" ;; *) echo "$1?serverSelectionTimeoutMS=600000" ;; esac
}
# online_start KIND DIR [PORT] [changelog]: a server of that kind in DIR (on
# PORT when given, 0 for any; FerretDB keeps the data of an earlier start
# there), with its change log when "changelog" is given (tests/peers/
# server.sh), its URI in $uri; for "external", REMODEL_TEST_URI with the
# suites' databases dropped; under tests/run.sh, in a suite that set
# ONLINE_SHARE=1, with two arguments: the pool slot's server (online_take).
online_start() {
    if [ "$1" == external ]; then
        uri=$REMODEL_TEST_URI
        python3 -c 'import pymongo, sys
c = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=10000)
for db in ("crm", "blog", "catalog", "school", "logging", "iot", "iotx", "sample_analytics", "dup", "remodel"):
    c.drop_database(db)' "$uri" 2>"$T/err" || { fail "external: reach $uri" "$(cat "$T/err")"; return 1; }
        return 0
    fi
    if [ $# -eq 2 ] && [ "${ONLINE_SHARE:-}" == 1 ] && [ -n "${REMODEL_SHARED_DIR:-}" ]; then
        case $1 in ferretdb | java) online_take "$1" "$2"; return ;; esac
    fi
    "$SERVER" stop "$2" >/dev/null 2>&1
    uri=$(REMODEL_SERVER_OWNER=$$ PEERS_SERVER_PORT=${3:-0} "$SERVER" start "$2" "$1" ${4:-} 2>"$T/err") ||
        { fail "$1: start" "$(cat "$T/err")"; return 1; }
}
# Sharing a server (issue 60): tests/run.sh gives each slot of its pool a
# directory, REMODEL_SHARED_DIR, where the slot's plain FerretDB and
# mongo-java-server live (started at the first suite that needs each, by
# that suite, owned by the runner, REMODEL_SHARED_OWNER, which stops them
# at its end). A suite takes the slot's server only when it says it may:
# ONLINE_SHARE=1 after sourcing this file, and then only for an
# online_start of two arguments (no port, no change log). Opting in, not
# out: a suite that stops, restarts or kills its server, reads its log or
# starts it on a port would, sharing, act on another suite's server or
# find it still up; a suite that forgets to opt in only runs slower. Run
# alone (no runner), every suite starts its own as before.
#
# online_take KIND DIR: the slot's server of KIND, its URI in $uri (and in
# DIR/uri), emptied of what an earlier suite left: every database but
# admin, local and config dropped (listed, not named: remodel's state
# database whatever its name, a suite's own; on FerretDB also those its
# data directory holds files of, as it does not list a database whose
# collection has a control character in its name), in those three every
# collection that was not there when the server started, every user;
# then it must answer and hold nothing else. When it does not, it is
# started again on empty data, once, and says so. The runner kills
# whatever an earlier suite left running (REMODEL_SHARED_SUITE) before
# the next one starts, so that nothing writes into this suite's
# databases.
online_take() {
    local s=$REMODEL_SHARED_DIR/$1 pid try
    mkdir -p "$s" "$2"
    for try in 1 2; do
        if [ $try == 2 ] || ! { [ -s "$s/uri" ] && pid=$(cat "$s/pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; }; then
            # None yet, it died, or it kept something: a new one, on empty data.
            [ $try == 1 ] || echo "lib.sh: the shared $1 started again: $(cat "$T/err")" >&2
            "$SERVER" stop "$s" >/dev/null 2>&1
            rm -rf "$s/data" "$s/baseline"
            env -u REMODEL_SHARED_SUITE -u REMODEL_RUN_MARK REMODEL_SERVER_OWNER="${REMODEL_SHARED_OWNER:-0}" PEERS_SERVER_PORT=0 \
                "$SERVER" start "$s" "$1" >/dev/null 2>"$T/err" || { fail "$1: start (shared)" "$(cat "$T/err")"; return 1; }
        fi
        uri=$(cat "$s/uri")
        echo "$uri" >"$2/uri"
        online_empty "$uri" "$s/baseline" "$([ "$1" == ferretdb ] && echo "$s/data")" >"$T/err" 2>&1 && return 0
    done
    fail "$1: the shared server at $uri emptied" "$(cat "$T/err")"
    return 1
}
# online_empty URI BASELINE [DATADIR]: online_take's emptying (BASELINE:
# the file of admin's, local's and config's first collections, written
# when missing; DATADIR: FerretDB's files).
online_empty() {
    pyrun -c 'import os, sys, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
c.admin.command("ping")
keep = ("admin", "local", "config")
def files():
    if not sys.argv[3]:
        return set()
    return {f[:-7] for f in os.listdir(sys.argv[3]) if f.endswith(".sqlite")}
for d in sorted((set(c.list_database_names()) | files()) - set(keep)):
    c.drop_database(d)
def names():
    # The collections of admin, local and config (mongo-java-server lists
    # none of admin: it keeps none there).
    out = set()
    for d in keep:
        try:
            out |= {d + "." + n for n in c[d].list_collection_names()}
        except pymongo.errors.OperationFailure:
            pass
    return out
if not os.path.exists(sys.argv[2]):
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(sorted(names())))
base = set(open(sys.argv[2]).read().split())
for dn in sorted(names() - base):
    d, n = dn.split(".", 1)
    c[d].drop_collection(n)
try:
    users = c.admin.command("usersInfo", {"forAllDBs": True}).get("users", [])
except pymongo.errors.OperationFailure:
    users = []
for u in users:
    c[u["db"]].command("dropUser", u["user"])
left = sorted((set(c.list_database_names()) | files()) - set(keep)) + sorted(names() - base)
if left:
    sys.exit("left on the shared server after dropping: %s" % left)' "$@"
}

# online_same NAME OFFLINE NS=COLL...: the server's ($uri) collections are
# the OFFLINE archive's namespaces, document for document, byte for byte
# (tests/transforms/online_same.py).
online_same() {
    local name=$1 offline=$2; shift 2
    if pyrun "$ROOT/tests/transforms/online_same.py" "$uri" "$offline" "$@" >"$T/same" 2>&1; then
        pass "$name"
    else
        fail "$name" "$(cat "$T/same")"
    fi
}

# The online suites' helpers, with a server at $uri and plans in
# $T/plans (a suite may define its own instead, after this file):
#   py SCRIPT ARGS...   a pymongo script with the client as c (sys,
#                       random, json, datetime imported)
#   target DB COLL      the name of DB.COLL's side-by-side result
#                       collection (the first COLL_remodel_*)
#   pid NAME            the id of plan NAME on the server
#   online CMD NAME ... remodel online CMD of plan NAME, as run_rm
#   figure WORD         the number before WORD in the last "change log:"
#                       line of $T/err (documents "read", "recomputed")
#   events              the events of that line
py() {
    local code=$1; shift
    py_up || { python3 -c "import sys, random, json, datetime, pymongo
c = pymongo.MongoClient(sys.argv[1], directConnection=True, serverSelectionTimeoutMS=10000)
$code" "$uri" "$@"; return; }
    py_ask code "$code" "$uri" "$@"
}
# pyrun SCRIPT ARGS... or pyrun -c CODE ARGS...: python3 with those
# arguments, through the same server.
pyrun() {
    py_up || { python3 "$@"; return; }
    if [ "$1" == -c ]; then py_ask plain "${@:2}"; else py_ask script "$@"; fi
}
# pyin ARGS... <<'EOF' SCRIPT EOF: python3 - ARGS with the script on
# stdin, through the same server (which gives its scripts no stdin).
pyin() {
    local code
    code=$(cat)
    pyrun -c "$code" "$@"
}
# py_ask KIND TEXT ARGS...: the request (tests/cli/py_server.py says its
# files), then its status on done, held open first so that the server's
# answer finds a reader.
py_ask() {
    local d st fd
    while d=$PYD/r.$BASHPID.$((py_n += 1)); ! mkdir "$d" 2>/dev/null; do
        [ -d "$PYD" ] || { echo "py: $PYD is gone (the suite's directory removed)" >&2; return 1; }
    done
    printf '%s' "$2" >"$d/$1"
    printf '%s\0' "${@:3}" >"$d/argv"
    echo "$PWD" >"$d/cwd"
    env -0 >"$d/env"
    mkfifo "$d/done"
    exec {fd}<>"$d/done"
    # Opened read-write: never blocks, even were the server gone.
    echo "$d" 1<>"$PYD/in"
    until read -r -t 10 st <&"$fd"; do
        kill -0 "$py_pid" 2>/dev/null || { st=1; echo "py: tests/cli/py_server.py ended: $(cat "$PYD/log")" >&2; break; }
    done
    exec {fd}<&-
    cat "$d/out" 2>/dev/null
    cat "$d/err" >&2 2>/dev/null
    rm -rf "$d"
    return "$st"
}
# One python3 with pymongo imported serves every py of the suite
# (tests/cli/py_server.py): a launch and an import cost a third of a second
# on an idle machine and seconds on a loaded one, tens of times a suite. It
# is started at the first py, in $PYD (fixed here: suites change $T in
# subshells), by whichever caller makes the directory; it is not a job of
# the suite's shell (wait and jobs do not see it) and ends with the shell.
# Not started (no pymongo, say): py runs python3 itself, as it did.
PYD=$T/.py py_n=0 py_pid=
py_up() {
    local wend
    [ -n "$py_pid" ] && return 0
    if mkdir "$PYD" 2>/dev/null; then
        mkfifo "$PYD/in"
        (python3 "$ROOT/tests/cli/py_server.py" "$PYD" $$ </dev/null >"$PYD/log" 2>&1 &)
    fi
    for ((wend = SECONDS + 120; SECONDS < wend; )); do
        [ -s "$PYD/ready" ] && read -r py_pid <"$PYD/ready" && return 0
        [ -e "$PYD/log" ] && [ -s "$PYD/log" ] && grep -q Error "$PYD/log" && break
        sleep 0.05
    done
    return 1
}
target() { py "print([n for n in c['$1'].list_collection_names() if n.startswith('$2_remodel_')][0])"; }
pid() { plan_id "$T/plans/$1.json"; }
# online CMD NAME ...: run_rm online CMD of plan NAME on $uri.
online() { run_rm online "$1" "$T/plans/$2.json" --uri "$uri" "${@:3}"; }
# kids_plan NAME DB: plan NAME, DB.kids embedded into DB.parents by owner.
kids_plan() {
    echo "{\"remodel\": 1, \"steps\": [{\"embed\": {\"from\": \"$2.kids\", \"into\": \"$2.parents\", \"localField\": \"_id\", \"foreignField\": \"owner\", \"as\": \"kids\", \"project\": {\"owner\": 0}}}]}" >"$T/plans/$1.json"
}
# offline_run NAME DB [OPTION]: remodel run's result of plan NAME on DB as
# it is now, in $T/NAME.archive.
offline_run() {
    "$MONGODUMP" --uri "$uri" --db "$2" --archive="$T/$2-src.archive" --quiet
    "$REMODEL" run -q --force "$T/plans/$1.json" --from "$T/$2-src.archive" --to "$T/$1.archive" ${3:-}
}
figure() { sed -n "s/.*change log: .* \([0-9][0-9]*\) $1.*/\1/p" "$T/err" | tail -n 1; }
events() { sed -n 's/.*change log: \([0-9][0-9]*\) events.*/\1/p' "$T/err" | tail -n 1; }

# plan_id PLAN: the plan's id on the server (common/compile/names.c): its
# file's name without .json, at most 40 bytes, each byte other than a
# letter, digit, - or _ made _, then _ and 12 hex digits of the SHA-1 of
# its full path. Results are COLL_remodel_ID_STEP, backups COLL_remodel_ID_backup.
plan_id() {
    pyrun -c 'import hashlib, os, re, sys
p = os.path.realpath(sys.argv[1]).encode()
b = os.path.basename(p)
b = b[:-5] if len(b) > 5 and b.endswith(b".json") else b
print(re.sub(rb"[^A-Za-z0-9_-]", b"_", b[:40]).decode() + "_" + hashlib.sha1(p).hexdigest()[:12])' "$1"
}

# proxy_start UPSTREAM_PORT [OPTIONS...]: tests/peers/proxy.py in front of
# 127.0.0.1:UPSTREAM_PORT (OPTIONS: a delay, a cut; that file says them),
# in the background: its pid in $proxy, the port it listens on in $pport,
# what it says in $T/proxy.log. proxy_stop: it ended (none running: nothing;
# a suite's EXIT trap calls it).
proxy_start() {
    rm -f "$T/pport"
    python3 "$ROOT/tests/peers/proxy.py" "$1" "$T/pport" "${@:2}" >"$T/proxy.log" 2>&1 &
    proxy=$!
    for ((w = 0, wend = SECONDS + 120; SECONDS < wend; w++)); do [ -s "$T/pport" ] && break; sleep 0.1; done
    pport=$(cat "$T/pport")
}
proxy_stop() {
    [ -n "${proxy:-}" ] || return 0
    kill "$proxy" 2>/dev/null
    wait "$proxy" 2>/dev/null
    proxy=
}
