#!/usr/bin/env bash
# A throwaway MongoDB wire-compatible server for tests, one per directory:
# FerretDB (SQLite backend, data in DIR/data), or mongo-java-server (in
# memory), two independent implementations; or mem, remodel's own
# in-memory test server (tests/mem/, build/tests/remodel-memsrv: starts in
# milliseconds, drives remodel's logic only; docs/tests.md).
#
#   tests/peers/server.sh start DIR [ferretdb|java|mem] [changelog]
#                                     start it (default ferretdb), listening
#                                     on 127.0.0.1 on a free port; waits until
#                                     it accepts connections, then writes the
#                                     URI to DIR/uri and prints it
#                                     changelog: with its change log, for the
#                                     online mode's change capture (docs/
#                                     online.md): FerretDB with
#                                     --repl-set-name=rs0 and a capped
#                                     local.oplog.rs created at once (oplog
#                                     tailing; PEERS_OPLOG_BYTES, default 64
#                                     MiB, enough for the README's examples
#                                     and the sample's plans; a test that
#                                     rolls it over gives 1 MiB: FerretDB
#                                     trims capped collections in the
#                                     background, 10% of the entries at a
#                                     time, every second when the oplog is
#                                     below 64 MiB, else every minute);
#                                     mongo-java-server with --oplog (change
#                                     streams, its oplog never rolls over);
#                                     mem with --repl-set rs0 --oplog
#                                     (local.oplog.rs of PEERS_OPLOG_BYTES,
#                                     oldest entries dropped at once)
#   tests/peers/server.sh stop DIR    stop it and wait until it is gone
#   tests/peers/server.sh oplog DIR   FerretDB started with its change log:
#                                     its oplog made again, empty (the
#                                     history so far gone, as a deployment's
#                                     whose oplog has rolled past the load of
#                                     its data): a suite that loads its data
#                                     first spares every read of the oplog,
#                                     which decodes each entry there, the
#                                     load's entries; other kinds: nothing
#
# Files in DIR: pid, uri, log (the server's log), watchdog.pid, kind,
# changelog (there when started with it), data/.
# Safety net: a watchdog stops the server when the process that started it
# ends (by default the caller of "start", i.e. its parent process; set
# REMODEL_SERVER_OWNER=PID to choose another, or 0 for none). Always call
# "stop" anyway, e.g. from an EXIT trap.
#
# Environment: FERRETDB (the binary; default from the peers cache),
# PEERS_SERVER_WAIT (seconds to wait for startup, default 30),
# PEERS_FERRETDB_GOGC and PEERS_FERRETDB_GOMEMLIMIT (FerretDB's GOGC and
# GOMEMLIMIT, default 1000 and 2GiB),
# REMODEL_SERVER_STARTS (a file each start adds a line to: KIND DIR),
# REMODEL_SERVER_CPU (a file each stop adds a line to: KIND CPU-SECONDS
# DIR, the server's user and system time; tests/run.sh sums them).
set -u

die() { echo "server.sh: $*" >&2; exit 1; }

usage() { die "usage: server.sh start DIR [ferretdb|java|mem] [changelog] | stop DIR | oplog DIR"; }
[ $# -eq 2 ] || { [ $# -ge 3 ] && [ $# -le 4 ] && [ "$1" == start ]; } || usage
cmd=$1
kind=${3:-ferretdb}
changelog=${4:-}
case $kind in ferretdb | java | mem) ;; *) usage ;; esac
case $changelog in "" | changelog) ;; *) usage ;; esac
case $cmd in
    start) mkdir -p "$2" || die "cannot create $2" ;;
    stop) [ -d "$2" ] || exit 0 ;;  # nothing was started there
    oplog) [ -f "$2/uri" ] || die "no server running for $2" ;;
    *) usage ;;
esac
dir=$(cd "$2" && pwd)
FERRETDB=${FERRETDB:-${REMODEL_PEERS:-$HOME/.cache/remodel-peers}/bin/ferretdb}
MONGO_JAVA_SERVER=${MONGO_JAVA_SERVER:-${REMODEL_PEERS:-$HOME/.cache/remodel-peers}/bin/mongo-java-server}
# The in-memory server: next to the remodel under test (REMODEL=BUILD/
# remodel), else in this checkout's build/.
if [ -z "${MEMSRV:-}" ]; then
    if [ -n "${REMODEL:-}" ] && [ -x "$(dirname "$REMODEL")/tests/remodel-memsrv" ]; then
        MEMSRV=$(dirname "$REMODEL")/tests/remodel-memsrv
    else
        MEMSRV=$(cd "$(dirname "$0")/../.." && pwd)/build/tests/remodel-memsrv
    fi
fi
WAIT=${PEERS_SERVER_WAIT:-30}
OPLOG_BYTES=${PEERS_OPLOG_BYTES:-67108864}
# A fixed port (0: any free one), to start a stopped server again where its
# clients look for it (FerretDB keeps its data in DIR/data across restarts).
PORT=${PEERS_SERVER_PORT:-0}

# alive PID: the process exists and is not a zombie.
alive() {
    local st
    [ -n "${1:-}" ] && [ "$1" -gt 0 ] 2>/dev/null || return 1
    kill -0 "$1" 2>/dev/null || return 1
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ "$st" != Z ]
}

# gone PID SECONDS: waits (bounded) until PID has exited.
gone() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        alive "$1" || return 0
        sleep 0.1
    done
    ! alive "$1"
}

# terminate PID: TERM, then KILL after 10 s.
terminate() {
    alive "$1" || return 0
    kill -TERM "$1" 2>/dev/null
    gone "$1" 10 && return 0
    kill -KILL "$1" 2>/dev/null
    gone "$1" 5
}

# cpu_note PID: its CPU seconds so far (user and system, fields 14 and 15
# of its stat, after the name, which may hold spaces) added to
# REMODEL_SERVER_CPU.
cpu_note() {
    local st
    [ -n "${REMODEL_SERVER_CPU:-}" ] && alive "$1" && st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    echo "${st##*) }" | awk -v k="$(cat "$dir/kind" 2>/dev/null)" -v d="$dir" -v hz="$(getconf CLK_TCK)" \
        '{printf "%s %.2f %s\n", k, ($12 + $13) / hz, d}' >>"$REMODEL_SERVER_CPU"
}

stop() {
    local pid wd
    pid=$(cat "$dir/pid" 2>/dev/null)
    wd=$(cat "$dir/watchdog.pid" 2>/dev/null)
    cpu_note "$pid"
    if [ -n "$pid" ]; then
        terminate "$pid" || die "could not stop server pid $pid"
    fi
    # The watchdog would end by itself within a second of the server (it
    # looks once a second); with the server gone it has nothing to watch,
    # so it is ended now rather than waited for (every suite stops its
    # servers: a second each).
    if [ -n "$wd" ] && alive "$wd"; then
        kill -TERM "$wd" 2>/dev/null
        gone "$wd" 2
    fi
    rm -f "$dir/pid" "$dir/watchdog.pid" "$dir/uri"
}

# oplog PORT [fresh]: FerretDB tails local.oplog.rs only when it exists
# and is capped; it does not make one itself. Kept when there (a restart
# on the same data); fresh: dropped first (FerretDB writes each entry to
# whichever local.oplog.rs there is then).
oplog() {
    python3 - "$1" "$OPLOG_BYTES" "${2:-}" <<'PY' 2>>"$dir/log" ||
import sys, pymongo
c = pymongo.MongoClient("127.0.0.1", int(sys.argv[1]), directConnection=True,
                        serverSelectionTimeoutMS=10000)
if sys.argv[3] == "fresh":
    c.local.drop_collection("oplog.rs")
if "oplog.rs" not in c.local.list_collection_names():
    c.local.create_collection("oplog.rs", capped=True, size=int(sys.argv[2]))
PY
        { echo "server.sh: could not create local.oplog.rs; log:" >&2; tail -n 5 "$dir/log" >&2; return 1; }
}

start() {
    local pid owner port i
    local bin=$FERRETDB
    [ "$kind" == java ] && bin=$MONGO_JAVA_SERVER
    [ "$kind" == mem ] && bin=$MEMSRV
    [ -x "$bin" ] || die "no server binary at $bin (run tests/peers/install.sh)"
    if pid=$(cat "$dir/pid" 2>/dev/null) && alive "$pid"; then
        die "a server is already running for $dir (pid $pid)"
    fi
    rm -f "$dir/pid" "$dir/watchdog.pid" "$dir/uri" "$dir/log"
    mkdir -p "$dir/data" || die "cannot create $dir/data"

    # Port 0: the kernel picks a free port; the log says which (both say
    # "Listening on TCP 127.0.0.1:PORT").
    if [ "$kind" == java ]; then
        "$MONGO_JAVA_SERVER" "$PORT" ${changelog:+--oplog} </dev/null >"$dir/log" 2>&1 &
    elif [ "$kind" == mem ]; then
        "$MEMSRV" --port "$PORT" ${changelog:+--repl-set rs0 --oplog --oplog-bytes "$OPLOG_BYTES"} \
            </dev/null >"$dir/log" 2>&1 &
    else
        # Go's collector at its default (GOGC=100) was a third of FerretDB's
        # CPU on a find that decodes every document (a collection of 5,000
        # read 150 times: 74 CPU s, 47 s at 1000, its heap 117 MB), and
        # FerretDB was the largest share of make check's CPU (35%). 1000,
        # capped at 2 GiB.
        # Its capped collections are trimmed each minute by default. A
        # test that rolls the oplog over gives a small one and needs it
        # trimmed within a second; but each trim runs SQLite's ANALYZE
        # over the whole oplog, 9% of a core at 20,000 entries for as long
        # as the server runs: the second only below the default size.
        trim=
        [ -n "$changelog" ] && [ "$OPLOG_BYTES" -lt 67108864 ] &&
            trim=--test-capped-cleanup-interval=1s
        GOGC=${PEERS_FERRETDB_GOGC:-1000} GOMEMLIMIT=${PEERS_FERRETDB_GOMEMLIMIT:-2GiB} \
        "$FERRETDB" --handler=sqlite --sqlite-url="file:$dir/data/" \
            --state-dir="$dir" --listen-addr="127.0.0.1:$PORT" --debug-addr=- \
            --telemetry=disable --log-level=info ${changelog:+--repl-set-name=rs0} $trim \
            </dev/null >"$dir/log" 2>&1 &
    fi
    pid=$!
    # Every start counted, for tests/run.sh's count of a run's starts.
    [ -z "${REMODEL_SERVER_STARTS:-}" ] || echo "$kind $dir" >>"$REMODEL_SERVER_STARTS"
    echo "$kind" >"$dir/kind"
    rm -f "$dir/changelog"
    [ -z "$changelog" ] || : >"$dir/changelog"
    echo "$pid" >"$dir/pid"

    owner=${REMODEL_SERVER_OWNER:-$PPID}
    if [ "$owner" != 0 ]; then
        (
            trap '' INT HUP
            while alive "$pid"; do
                if ! alive "$owner"; then terminate "$pid"; break; fi
                sleep 1
            done
        ) </dev/null >/dev/null 2>&1 &
        echo $! >"$dir/watchdog.pid"
    fi

    port=
    for ((i = 0; i < WAIT * 10; i++)); do
        if ! alive "$pid"; then
            echo "server.sh: server exited during startup; log:" >&2
            tail -n 30 "$dir/log" >&2
            stop
            exit 1
        fi
        [ -n "$port" ] ||
            port=$(sed -n 's/.*Listening on TCP 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$dir/log" | head -n 1)
        if [ -n "$port" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "mongodb://127.0.0.1:$port/" >"$dir/uri"
            if [ -n "$changelog" ] && [ "$kind" == ferretdb ] && ! oplog "$port"; then
                stop
                exit 1
            fi
            cat "$dir/uri"
            return 0
        fi
        sleep 0.1
    done
    echo "server.sh: server not accepting connections after ${WAIT}s; log:" >&2
    tail -n 30 "$dir/log" >&2
    stop
    exit 1
}

case $cmd in
    start) start ;;
    stop) stop ;;
    oplog)
        # The kind and whether it has its change log, as start noted them.
        [ "$(cat "$dir/kind" 2>/dev/null)" == ferretdb ] && [ -e "$dir/changelog" ] || exit 0
        port=$(sed 's|^mongodb://127\.0\.0\.1:\([0-9]*\)/$|\1|' "$dir/uri")
        oplog "$port" fresh || exit 1
        ;;
esac
