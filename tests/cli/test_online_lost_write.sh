#!/usr/bin/env bash
# remodel online run when the connection drops around a batch's insert of
# its results, on FerretDB and on mongo-java-server (a TCP proxy between
# remodel and the server closes every connection at the Nth insert into
# the step's people results):
# - the insert never sent (what a server stopping or restarting does to a
#   command it had not read): the run retries that batch and finishes
#   with remodel run's documents (before the fix, the driver's failed
#   reply, an empty writeErrors, passed for "duplicates only, none": the
#   batch counted as written, its checkpoint saved, its three results
#   never there, exit 0);
# - the insert done by the server, its reply lost: the retried batch
#   meets its own results (duplicate _ids), rewrites them, and the run
#   finishes with remodel run's documents.
#   REMODEL=build/remodel bash tests/cli/test_online_lost_write.sh
. "$(dirname "$0")/lib.sh"
use_peers "peers" || exit 0
[ -n "${REMODEL_TEST_URI:-}" ] && exit 0 # a proxy in front of a local server only
S=$ROOT/dumps/sample
proxy=
trap '[ -n "$proxy" ] && kill "$proxy" 2>/dev/null
for d in ferretdb java; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
export ROOT PYTHONPATH=$ROOT/tests/transforms

# proxy.py UPSTREAM PORTFILE PREFIX N MODE: listens on a free port (written
# to PORTFILE) and forwards to 127.0.0.1:UPSTREAM; at the Nth insert into
# a collection named PREFIX..., every connection is closed, that insert
# unsent (MODE unsent) or sent and its reply dropped (MODE unanswered).
cat >"$T/proxy.py" <<'EOF'
import os, socket, struct, sys, threading
import bson
up, portfile, prefix, nth, mode = (int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]),
                                   sys.argv[5])
lock = threading.Lock()
st = {"seen": 0, "socks": set()}

def exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b

def message(s):
    h = exact(s, 16)
    return h + exact(s, struct.unpack_from("<i", h)[0] - 16)

def trips(m):
    # OP_MSG (2013), its body section first
    if struct.unpack_from("<i", m, 12)[0] != 2013 or len(m) < 26 or m[20] != 0:
        return False
    try:
        cmd = bson.decode(m[21:21 + struct.unpack_from("<i", m, 21)[0]])
    except Exception:
        return False
    if next(iter(cmd), None) != "insert" or not str(cmd["insert"]).startswith(prefix):
        return False
    with lock:
        st["seen"] += 1
        return st["seen"] == nth

def close(*ss):
    for s in ss:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

def drop_all():
    with lock:
        socks = list(st["socks"])
    close(*socks)
    print("dropped every connection at insert %d (%s)" % (nth, mode), flush=True)

def serve(cli):
    srv = socket.create_connection(("127.0.0.1", up))
    with lock:
        st["socks"].update((cli, srv))
    try:
        while True:
            m = message(cli)
            trip = trips(m)
            if trip and mode == "unsent":
                return drop_all()
            srv.sendall(m)
            r = message(srv)
            if trip:
                return drop_all()
            cli.sendall(r)
    except (EOFError, OSError):
        pass
    close(cli, srv)

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(64)
with open(portfile + ".tmp", "w") as f:
    f.write(str(ls.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF

mkdir -p "$T/plans"
cp "$ROOT/dumps/plans/embed-tasks.json" "$T/plans/embed.json"
"$REMODEL" run -q "$T/plans/embed.json" --from "$S" --to "$T/embed0.archive"
pid() { plan_id "$T/plans/$1.json"; }

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue
    port=${uri##*:}
    port=${port%/}
    "$MONGORESTORE" --uri "$uri" --dir "$S" --nsInclude 'crm.*' --noIndexRestore --quiet
    for mode in unsent unanswered; do
        rm -f "$T/pport"
        python3 "$T/proxy.py" "$port" "$T/pport" people_remodel_ 5 $mode >"$T/proxy.log" 2>&1 &
        proxy=$!
        for ((w = 0; w < 100; w++)); do [ -s "$T/pport" ] && break; sleep 0.1; done
        cp "$T/plans/embed.json" "$T/plans/$mode.json"
        run_rm online run -q "$T/plans/$mode.json" --uri "mongodb://127.0.0.1:$(cat "$T/pport")/" \
            --create-indexes --batch-size 3 --retry-for 30
        kill $proxy 2>/dev/null
        wait $proxy 2>/dev/null
        proxy=
        expect_eq "$kind: every connection dropped at the fifth batch's insert ($mode): the run retries and finishes (exit 0)" \
            "$rc:$(grep -c "dropped every connection at insert 5 ($mode)" "$T/proxy.log")" "0:1"
        online_same "$kind: ... with remodel run's result, none of that batch's results missing" \
            "$T/embed0.archive" crm.people=people_remodel_$(pid $mode)_1 crm.tasks=tasks_remodel_$(pid $mode)_1
    done
    "$SERVER" stop "$T/$kind" >/dev/null 2>&1
done
