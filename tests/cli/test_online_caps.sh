#!/usr/bin/env bash
# The server's capabilities record (issue 53; shell-ext/conn/online_caps.c),
# on both servers:
#   1. status shows it ("server:", its identity, the write forms chosen),
#      status --json too (server.identity, writeChunk...), and the test
#      servers' rows are the choices made before it existed: commands of 50
#      statements, rewrites as delete and insert, partners read whole;
#   2. a run side by side and one in place give remodel run's results, byte
#      for byte, with batches past 50 statements (the commands split);
#   3. the probe of a server the table does not know (--capabilities probe
#      makes both test servers one, for run; REMODEL_ONLINE_CAPS=probe, the
#      same choice, for status and sync): recorded once, shown by status,
#      and the rewrite form it finds used by sync, the results the same;
# and issue 50: with ?replicaSet=, a seed whose hello lists a host the
# driver cannot parse (FerretDB started with --repl-set-name lists
# "127.0.0.1:0"; a responder here lists a passive "bad host:x") is refused
# with one error, exit 2, where libmongoc 1.23.1 crashed.
#   REMODEL=build/remodel bash tests/cli/test_online_caps.sh
. "$(dirname "$0")/lib.sh"
# Its plain servers may be the run's shared ones (lib.sh, online_take).
ONLINE_SHARE=1
use_peers "peers" || exit 0
trap 'for d in ferretdb java rs; do "$SERVER" stop "$T/$d" >/dev/null 2>&1; done
      [ -n "${fake:-}" ] && kill "$fake" 2>/dev/null; rm -rf "$T"' EXIT
mkdir -p "$T/plans"

# json_field KEY: the status --json line's server.KEY.
json_field() {
    python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).read())["server"][sys.argv[2]])' "$T/out" "$1"
}

for kind in $(online_kinds); do
    online_start $kind "$T/$kind" || continue
    case $kind in ferretdb) who=ferretdb ;; java) who=mongo-java-server ;; *) who=mongodb ;; esac

    # 1. and 2. side by side: 7 types x 20 parents, 280 children.
    python3 "$ROOT/tests/transforms/mixed_ids.py" "$uri" c1 20 >/dev/null
    kids_plan side c1
    offline_run side c1
    online run side --batch-size 200 --create-indexes
    expect_eq "$kind: run side by side in batches of 200: exit 0" "$rc" 0
    online_same "$kind: ... as remodel run, byte for byte" "$T/side.archive" "c1.parents=$(target c1 parents)"
    online status side
    expect_eq "$kind: status: exit 0, a server: line naming it" \
        "$rc:$(grep -c "^server: $who " "$T/out")" "0:1"
    expect_eq "$kind: ... its row: today's choices" \
        "$(grep -c '^  writes: 50 statements a command, 50 key-map updates a command, 1000 results an insert; a side-by-side rewrite by delete and insert; partners read whole, \$in matched here$' "$T/out")" 1
    expect_eq "$kind: ... the lines before it as they were" \
        "$(grep -c '^plan: \|^mode: side by side$\|^STEP ' "$T/out")" 3
    online status side --json
    expect_eq "$kind: status --json: the record under server" \
        "$rc:$(json_field identity):$(json_field writeChunk):$(json_field updateChunk):$(json_field insertChunk):$(json_field rewrite):$(json_field partners)" \
        "0:$who:50:50:1000:delete and insert:whole"

    # 2. in place: 140 parents rewritten in batches of 140, updates and
    # backups in commands of the row's size.
    python3 "$ROOT/tests/transforms/mixed_ids.py" "$uri" c2 20 >/dev/null
    echo '{"remodel": 1, "steps": [{"set": {"in": "c2.parents", "fields": {"m": {"$multiply": ["$n", 2]}}}}]}' >"$T/plans/inplace.json"
    offline_run inplace c2
    online run inplace --in-place --batch-size 140
    expect_eq "$kind: run --in-place in batches of 140: exit 0" "$rc" 0
    online_same "$kind: ... as remodel run, byte for byte" "$T/inplace.archive" "c2.parents=parents"

    # 3. The probe of a server the table does not know, forced here: its
    # findings recorded once in the state database and shown by status; a
    # sync rewrites the results that differ by replace where it found the
    # order kept (FerretDB), by delete and insert where not
    # (mongo-java-server's replace keeps the stored order), the results
    # remodel run's either way.
    case $kind in ferretdb) form=replace deletes=0 ;; *) form="delete and insert" deletes=1 ;; esac
    python3 "$ROOT/tests/transforms/mixed_ids.py" "$uri" c3 10 >/dev/null
    kids_plan probed c3
    online run probed --batch-size 200 --create-indexes --capabilities probe
    expect_eq "$kind: a probed run: exit 0, its findings recorded once, the scratch collection gone" \
        "$rc:$(py "print(c.remodel.capabilities.count_documents({}), len([n for n in c.remodel.list_collection_names() if n.startswith('capabilitiesProbe')]))")" "0:1 0"
    REMODEL_ONLINE_CAPS=probe online status probed
    expect_eq "$kind: ... status: the probe's rewrite form, partners read whole" \
        "$(grep -c "^  writes: 50 statements a command, 50 key-map updates a command, 1000 results an insert; a side-by-side rewrite by $form; partners read whole" "$T/out"):$(grep -c '^  from: probe' "$T/out")" "1:1"
    py "c.c3.kids.update_many({'x': 3}, {'\$set': {'y': 1}})"
    offline_run probed c3
    REMODEL_ONLINE_TRACE=1 REMODEL_ONLINE_CAPS=probe online sync probed --batch-size 200
    expect_eq "$kind: ... a sync rewrites the results that differ by $form: exit 0" \
        "$rc:$(grep -c "\"delete\" : \"parents_remodel" "$T/err" | sed 's/^[1-9][0-9]*$/1/')" "0:$deletes"
    online_same "$kind: ... as remodel run, byte for byte" "$T/probed.archive" "c3.parents=$(target c3 parents)"
done

# Issue 50, a real server: FerretDB with its change log is a one-member
# set whose hello lists 127.0.0.1:0.
if online_start ferretdb "$T/rs" 0 changelog; then
    run_rm online status "$T/plans/side.json" --uri "${uri}?replicaSet=rs0"
    expect_eq "replicaSet= on a set whose hello lists 127.0.0.1:0: exit 2, no crash" "$rc" 2
    expect_message "... one error naming the host" 'lists a member that is not host:port ("127.0.0.1:0")'
    expect_eq "... nothing on standard output" "$(wc -c <"$T/out")" 0
    run_rm online status "$T/plans/side.json" --uri "mongodb://127.0.0.1:1,${uri#mongodb://}?replicaSet=rs0"
    expect_eq "... a first seed that does not answer: the next one asked, the same error" \
        "$rc:$(grep -c 'lists a member that is not host:port ("127.0.0.1:0")' "$T/err")" "2:1"
    run_rm online status "$T/plans/side.json" --uri "$uri"
    expect_eq "... without replicaSet=: status as before" "$rc:$(grep -c '^server: ferretdb ' "$T/out")" "0:1"
fi

# Issue 50, a passive the driver cannot parse: a responder of hello alone.
cat >"$T/fake.py" <<'EOF'
import socket, struct, sys, threading, bson
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(16)
me = "127.0.0.1:%d" % srv.getsockname()[1]
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(me)
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def answer(cmd):
    if next(iter(cmd), "").lower() in ("hello", "ismaster"):
        return {"ismaster": True, "isWritablePrimary": True, "setName": "rs0", "hosts": [me],
                "passives": ["bad host:x"], "primary": me, "me": me,
                "maxBsonObjectSize": 16777216, "maxMessageSizeBytes": 48000000,
                "maxWriteBatchSize": 100000, "minWireVersion": 0, "maxWireVersion": 13, "ok": 1.0}
    return {"ok": 1.0}
def recv(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b
def serve(s):
    try:
        while True:
            ln, rid, _, op = struct.unpack("<iiii", recv(s, 16))
            body = recv(s, ln - 16)
            if op == 2004:  # OP_QUERY, the driver's handshake
                at = body.index(b"\0", 4) + 9
                cmd = bson.decode(body[at:at + struct.unpack("<i", body[at:at + 4])[0]])
                out = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(answer(cmd))
                s.sendall(struct.pack("<iiii", 16 + len(out), 0, rid, 1) + out)
            elif op == 2013:
                cmd = bson.decode(body[5:5 + struct.unpack("<i", body[5:9])[0]])
                out = struct.pack("<I", 0) + b"\0" + bson.encode(answer(cmd))
                s.sendall(struct.pack("<iiii", 16 + len(out), 0, rid, 2013) + out)
            else:
                return
    except (EOFError, OSError):
        pass
    finally:
        s.close()
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
EOF
python3 "$T/fake.py" "$T/fake.addr" &
fake=$!
for _ in $(seq 50); do [ -s "$T/fake.addr" ] && break; sleep 0.1; done
run_rm online status "$T/plans/side.json" --uri "mongodb://$(cat "$T/fake.addr")/?replicaSet=rs0"
expect_eq "replicaSet= on a set whose hello lists a passive \"bad host:x\": exit 2, no crash" "$rc" 2
expect_message "... one error naming it" 'lists a member that is not host:port ("bad host:x")'
kill "$fake" 2>/dev/null
wait "$fake" 2>/dev/null
fake=
