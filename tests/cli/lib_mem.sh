# Helpers for suites that run remodel against the in-memory server
# (tests/mem/, build/tests/remodel-memsrv), after tests/cli/lib.sh:
#   mem_cmd JSON          one command on $uri's admin database, its reply
#                         as JSON on stdout (exit 1 when not ok), sent by
#                         remodel-memsrv --send (a python client's start
#                         is most of a reset's time)
#   mem_snapshot NAME     saves every database on the server (oplog too)
#   mem_restore NAME      puts them back
#   mem_digest            a line per namespace: "db.coll COUNT SHA1"
MEMSRV=${MEMSRV:-$(dirname "$REMODEL")/tests/remodel-memsrv}
mem_cmd() {
    local port=${uri##*:}
    port=${port%%/*}
    "$MEMSRV" --send "$port" "$1"
}
mem_snapshot() { mem_cmd "{\"memSnapshot\": \"$1\"}" >/dev/null; }
mem_restore() { mem_cmd "{\"memRestore\": \"$1\"}" >/dev/null; }
mem_digest() {
    mem_cmd '{"memDigest": 1}' | python3 -c 'import sys, json
for ns, d in sorted(json.load(sys.stdin)["namespaces"].items()):
    print(ns, d["count"], d["sha1"])'
}
